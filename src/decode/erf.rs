//! The header of an Endace ERF record (link type 197, as ibdump and DAG cards write them): read
//! by the decoder to find the frame, and by the sources to give a record the frame's time and
//! lengths (`source::erf`).
//!
//! Layout (spec/roce.md §7): timestamp 8 bytes little-endian, 32.32 fixed-point seconds since
//! the epoch; type 1 byte (top bit: an 8-byte extension header follows, and each extension's
//! top bit says whether another follows); flags 1; rlen 2 (record length with the header and
//! any padding, big-endian); loss counter or colour 2; wlen 2 (bytes on the wire, big-endian);
//! then the extension headers, then for Ethernet 2 bytes of offset and pad before the frame.

/// Bytes of the fixed ERF header.
const HEADER: usize = 16;

/// Bytes of one ERF extension header.
const EXTENSION: usize = 8;

/// Bytes of offset and pad before an Ethernet record's frame.
const ETHERNET_PAD: usize = 2;

/// ERF type of an Ethernet record (2 bytes of pad, then the frame with its FCS).
pub const TYPE_ETHERNET: u8 = 2;

/// ERF type of an InfiniBand record (the LRH first), as ibdump writes them.
pub const TYPE_INFINIBAND: u8 = 21;

/// An ERF record's header, read in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ErfHeader {
    /// Timestamp as stored: seconds in the high 32 bits, 2⁻³² s units in the low 32.
    pub ts: u64,
    /// Record type, 7 bits (without the extension-header flag).
    pub ty: u8,
    /// Bytes of the frame on the wire.
    pub wlen: u16,
    /// Offset of the frame's first byte in the record: the header, its extension headers and,
    /// for Ethernet, the pad.
    pub frame_at: usize,
}

impl ErfHeader {
    /// Read the header at the start of `data`, a record's captured bytes.
    ///
    /// # Errors
    /// The name of the part the captured bytes end in (`"ERF"`, `"ERF extension"`,
    /// `"ERF Ethernet"`), for [`super::Undecodable::Truncated`].
    pub fn parse(data: &[u8]) -> Result<ErfHeader, &'static str> {
        let fixed = data.get(..HEADER).ok_or("ERF")?;
        let mut at = HEADER;
        let mut more = fixed[8] & 0x80 != 0;
        while more {
            more = data.get(at).ok_or("ERF extension")? & 0x80 != 0;
            at += EXTENSION;
        }
        if data.len() < at {
            return Err("ERF extension");
        }
        let ty = fixed[8] & 0x7f;
        if ty == TYPE_ETHERNET {
            at += ETHERNET_PAD;
            if data.len() < at {
                return Err("ERF Ethernet");
            }
        }
        let mut ts = [0u8; 8];
        ts.copy_from_slice(&fixed[..8]);
        Ok(ErfHeader {
            ts: u64::from_le_bytes(ts),
            ty,
            wlen: u16::from_be_bytes([fixed[14], fixed[15]]),
            frame_at: at,
        })
    }

    /// The timestamp in ns since the epoch, the fraction rounded half up to the nearest ns.
    pub fn ts_ns(&self) -> u64 {
        let secs = self.ts >> 32;
        let frac = u128::from(self.ts & 0xffff_ffff);
        let ns = ((frac * 1_000_000_000 + (1 << 31)) >> 32) as u64;
        secs * 1_000_000_000 + ns
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An ERF header: timestamp, type, wlen; flags 0, rlen and lctr as given.
    pub(crate) fn header(ts: u64, ty: u8, rlen: u16, wlen: u16) -> Vec<u8> {
        let mut h = ts.to_le_bytes().to_vec();
        h.extend([ty, 0]);
        h.extend(rlen.to_be_bytes());
        h.extend([0, 0]);
        h.extend(wlen.to_be_bytes());
        h
    }

    fn ts_ns(ts: u64) -> u64 {
        let mut r = header(ts, TYPE_INFINIBAND, 16, 0);
        r.truncate(16);
        ErfHeader::parse(&r).unwrap().ts_ns()
    }

    /// Fractions by hand: 2³⁰/2³² s = 0.25 s; 1/2³² s = 0.2328 ns → 0; 3/2³² s = 0.698 ns → 1;
    /// 2³²−1 units = 999,999,999.77 ns → 1 s exactly (carried into the seconds).
    #[test]
    fn fixed_point_fractions_round_to_the_nearest_ns() {
        let s = 1_700_000_000u64;
        assert_eq!(ts_ns(s << 32), s * 1_000_000_000);
        assert_eq!(
            ts_ns((s << 32) | (1 << 30)),
            s * 1_000_000_000 + 250_000_000
        );
        assert_eq!(ts_ns((s << 32) | 1), s * 1_000_000_000);
        assert_eq!(ts_ns((s << 32) | 3), s * 1_000_000_000 + 1);
        assert_eq!(ts_ns((s << 32) | 0xffff_ffff), (s + 1) * 1_000_000_000);
    }

    /// Extension headers (the type's top bit, then each extension's) and an Ethernet record's
    /// pad come before the frame; a record cut inside them, or inside the fixed header, names
    /// the part it ends in.
    #[test]
    fn the_frame_follows_extensions_and_pad() {
        let mut r = header(0, 0x80 | TYPE_ETHERNET, 76, 46);
        r.extend([0x80, 0, 0, 0, 0, 0, 0, 0]);
        r.extend([0x05, 0, 0, 0, 0, 0, 0, 0]);
        r.extend([0u8; 2 + 42]);
        let h = ErfHeader::parse(&r).unwrap();
        assert_eq!((h.ty, h.wlen, h.frame_at), (TYPE_ETHERNET, 46, 16 + 16 + 2));
        assert_eq!(ErfHeader::parse(&r[..34]).map(|h| h.frame_at), Ok(34));
        assert_eq!(ErfHeader::parse(&r[..33]), Err("ERF Ethernet"));
        assert_eq!(ErfHeader::parse(&r[..28]), Err("ERF extension"));
        assert_eq!(ErfHeader::parse(&r[..15]), Err("ERF"));
        let ib = header(0, TYPE_INFINIBAND, 16, 0);
        assert_eq!(ErfHeader::parse(&ib).map(|h| h.frame_at), Ok(16));
    }
}
