//! The time and lengths of an ERF record (link type 197, as ibdump and Endace DAG cards write
//! them) from its own header rather than from the pcap or pcapng record around it, as Wireshark
//! reads them (tshark 4.0: the wire and captured lengths from the ERF header in pcap and pcapng
//! files, the time too in classic pcap files); the pcap record's, which libpcap and tcpdump
//! show, count the ERF header's bytes and, in a classic pcap file, often only microseconds.
//!
//! ERF header (Endace Extensible Record Format, spec/roce.md §7): timestamp 8 bytes
//! little-endian, 32.32 fixed-point seconds since the epoch; type 1 byte (top bit: an 8-byte
//! extension header follows, and each extension's top bit says whether another follows);
//! flags 1; rlen 2 (record length with the header and any padding, big-endian); loss counter
//! or colour 2; wlen 2 (bytes on the wire, big-endian).

use super::Record;

/// Bytes of the fixed ERF header.
const HEADER: usize = 16;

/// Bytes of one ERF extension header.
const EXTENSION: usize = 8;

/// ERF type of an Ethernet record, whose frame follows 2 bytes of offset and pad.
const ETHERNET: u8 = 2;

/// Bytes of offset and pad before an Ethernet record's frame.
const ETHERNET_PAD: usize = 2;

/// What an ERF record's header says of the frame it carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ErfTimes {
    /// Capture time, ns since the Unix epoch (the 32-bit fraction rounded to the nearest ns).
    pub ts_ns: u64,
    /// Bytes on the wire (`wlen`).
    pub len: u32,
    /// Bytes of the frame captured after the ERF header, its extension headers and (Ethernet)
    /// its 2 bytes of pad, at most `wlen` (the record's padding is not the frame's).
    pub caplen: u32,
    /// Offset of the frame's first byte in the record: the ERF header, its extension headers
    /// and (Ethernet) its pad; the record's bytes that belong to it are the first
    /// `frame_at + caplen`.
    pub frame_at: usize,
}

impl ErfTimes {
    /// Bytes of the record that are the ERF header's or the frame's: the record's bytes past
    /// them (padding, or bytes past `wlen`) are neither.
    pub fn record_len(&self) -> usize {
        self.frame_at + self.caplen as usize
    }
}

/// Read the ERF header at the start of `data` (a record's captured bytes). `None` when fewer
/// bytes than the header, its extension headers and an Ethernet record's pad were captured:
/// the record keeps its pcap time and lengths, and the decoder reports it truncated.
pub fn times(data: &[u8]) -> Option<ErfTimes> {
    let fixed = data.get(..HEADER)?;
    let mut at = HEADER;
    let mut more = fixed[8] & 0x80 != 0;
    while more {
        more = data.get(at)? & 0x80 != 0;
        at += EXTENSION;
    }
    if fixed[8] & 0x7f == ETHERNET {
        at += ETHERNET_PAD;
    }
    if data.len() < at {
        return None;
    }
    let ts = u64::from_le_bytes(fixed[..8].try_into().ok()?);
    let wlen = u16::from_be_bytes([fixed[14], fixed[15]]);
    let captured = (data.len() - at).min(usize::from(wlen));
    Some(ErfTimes {
        ts_ns: fixed_point_ns(ts),
        len: u32::from(wlen),
        caplen: captured as u32,
        frame_at: at,
    })
}

/// ns since the epoch of an ERF timestamp: seconds in the high 32 bits, the fraction of a
/// second in units of 2⁻³² s in the low 32, rounded half up to the nearest ns.
fn fixed_point_ns(ts: u64) -> u64 {
    let secs = ts >> 32;
    let frac = u128::from(ts & 0xffff_ffff);
    let ns = ((frac * 1_000_000_000 + (1 << 31)) >> 32) as u64;
    secs * 1_000_000_000 + ns
}

/// Give `rec`, a record of link type ERF, the lengths of its ERF header, and its time when
/// `time` (a classic pcap file's record, whose own time has µs or ns; a pcapng block's
/// timestamp, of any resolution, stays, as in Wireshark); its bytes (`data`) keep the ERF
/// header and lose what lies past `wlen` (padding, or bytes the header says were not the
/// frame's: tshark then finds the frame malformed, and so does the decoder). A record too
/// short for its header keeps its own.
pub fn apply(rec: &mut Record<'_>, time: bool) {
    if let Some(t) = times(rec.data) {
        if time {
            rec.ts_ns = t.ts_ns;
        }
        rec.len = t.len;
        rec.caplen = t.caplen;
        rec.data = &rec.data[..t.record_len()];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An ERF header: timestamp, type, wlen; flags 0, rlen and lctr as given.
    fn header(ts: u64, ty: u8, rlen: u16, wlen: u16) -> Vec<u8> {
        let mut h = ts.to_le_bytes().to_vec();
        h.extend([ty, 0]);
        h.extend(rlen.to_be_bytes());
        h.extend([0, 0]);
        h.extend(wlen.to_be_bytes());
        h
    }

    /// Fractions by hand: 2³⁰/2³² s = 0.25 s; 1/2³² s = 0.2328 ns → 0; 3/2³² s = 0.698 ns → 1;
    /// 2³²−1 units = 999,999,999.77 ns → 1 s exactly (carried into the seconds).
    #[test]
    fn fixed_point_fractions_round_to_the_nearest_ns() {
        let s = 1_700_000_000u64;
        assert_eq!(fixed_point_ns(s << 32), s * 1_000_000_000);
        assert_eq!(
            fixed_point_ns((s << 32) | (1 << 30)),
            s * 1_000_000_000 + 250_000_000
        );
        assert_eq!(fixed_point_ns((s << 32) | 1), s * 1_000_000_000);
        assert_eq!(fixed_point_ns((s << 32) | 3), s * 1_000_000_000 + 1);
        assert_eq!(
            fixed_point_ns((s << 32) | 0xffff_ffff),
            (s + 1) * 1_000_000_000
        );
    }

    /// An InfiniBand record (type 21) of 34 bytes, all captured; then one whose wire length
    /// (100) is more than was captured; then one padded past its wire length.
    #[test]
    fn lengths_are_the_frame_s_not_the_record_s() {
        let mut r = header((7 << 32) | (1 << 31), 21, 50, 34);
        r.extend([0u8; 34]);
        assert_eq!(
            times(&r),
            Some(ErfTimes {
                ts_ns: 7_500_000_000,
                len: 34,
                caplen: 34,
                frame_at: 16,
            })
        );
        let mut r = header(0, 21, 50, 100);
        r.extend([0u8; 34]);
        assert_eq!(times(&r).map(|t| (t.len, t.caplen)), Some((100, 34)));
        let mut r = header(0, 21, 56, 34);
        r.extend([0u8; 40]);
        assert_eq!(times(&r).map(|t| (t.len, t.caplen)), Some((34, 34)));
    }

    /// A record keeps its ERF header and loses the bytes past `wlen`.
    #[test]
    fn apply_cuts_the_record_at_the_wire_length() {
        let mut r = header(0, 21, 56, 10);
        r.extend(1..=40u8);
        let mut rec = Record {
            number: 1,
            ts_ns: 5,
            base_ts_ns: 0,
            caplen: 56,
            len: 56,
            data: &r,
        };
        apply(&mut rec, false);
        assert_eq!((rec.ts_ns, rec.len, rec.caplen), (5, 10, 10));
        assert_eq!(rec.data, &r[..26]);
        apply(&mut rec, true);
        assert_eq!(rec.ts_ns, 0);
    }

    /// Extension headers (type's top bit, then each extension's) and an Ethernet record's
    /// 2 bytes of pad are not frame bytes (tshark 4.0 on such records: `frame.cap_len` 42 of
    /// 44 bytes after the header, 20 of 22, and 30 when wlen is 30); a record cut inside them,
    /// or inside the fixed header, has no ERF times.
    #[test]
    fn extension_headers_and_pad_are_skipped_and_short_records_have_none() {
        let mut r = header(0, 0x80 | 2, 76, 46);
        r.extend([0x80, 0, 0, 0, 0, 0, 0, 0]);
        r.extend([0x05, 0, 0, 0, 0, 0, 0, 0]);
        r.extend([0u8; 2 + 42]);
        assert_eq!(times(&r).map(|t| (t.len, t.caplen)), Some((46, 42)));
        assert_eq!(times(&r[..32 + 2 + 20]).map(|t| t.caplen), Some(20));
        assert_eq!(times(&r[..32 + 2]).map(|t| t.caplen), Some(0));
        assert_eq!(times(&r[..32 + 1]), None);
        assert_eq!(times(&r[..16 + 12]), None);
        assert_eq!(times(&r[..15]), None);
        let mut r = header(0, 2, 60, 30);
        r.extend([0u8; 2 + 42]);
        assert_eq!(times(&r).map(|t| (t.len, t.caplen)), Some((30, 30)));
    }
}
