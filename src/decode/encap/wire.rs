//! Zero-copy views of the tunnel headers switches mirror into: GRE, ERSPAN type II and III,
//! VXLAN. Each view is built with a checked constructor (`new_checked`) that verifies the
//! length and the fields that decide the layout, so its accessors never panic.
//!
//! Layouts:
//! - GRE: RFC 2784 §2 (C bit, checksum + reserved1), RFC 2890 §2 (K key, S sequence number);
//!   the R bit and versions other than 0 (RFC 1701 routing, RFC 2637 PPTP) are refused.
//! - ERSPAN: draft-foschiano-erspan-03 §4.1 (type II, GRE protocol 0x88BE with S set) and §4.2
//!   (type III, GRE protocol 0x22EB, with its optional 8-byte platform-specific subheader);
//!   field masks as Wireshark's `packet-erspan.c` and Linux `include/net/erspan.h` read them.
//! - VXLAN: RFC 7348 §5 (8 bytes: flags with I = 0x08, 24 reserved bits, 24-bit VNI, 8
//!   reserved bits).

use super::EncapError;

fn be16(b: &[u8]) -> u16 {
    u16::from_be_bytes([b[0], b[1]])
}
fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

fn need(header: &'static str, need: usize, have: usize) -> Result<(), EncapError> {
    if have < need {
        Err(EncapError::Truncated { header, need, have })
    } else {
        Ok(())
    }
}

/// A GRE header (RFC 2784 / RFC 2890), 4 to 16 bytes, followed by its payload.
#[derive(Clone, Copy, Debug)]
pub struct GreHeader<'a> {
    buf: &'a [u8],
}

impl<'a> GreHeader<'a> {
    /// Checksum present (C), bit 0 of the flags.
    pub const FLAG_C: u16 = 0x8000;
    /// Routing present (R, RFC 1701 only).
    pub const FLAG_R: u16 = 0x4000;
    /// Key present (K, RFC 2890).
    pub const FLAG_K: u16 = 0x2000;
    /// Sequence number present (S, RFC 2890).
    pub const FLAG_S: u16 = 0x1000;

    /// View `buf` as a GRE header.
    ///
    /// # Errors
    /// [`EncapError::Truncated`] when `buf` is shorter than the header its flags announce;
    /// [`EncapError::GreVersion`] for a version other than 0; [`EncapError::GreRouting`] when
    /// the R bit is set.
    pub fn new_checked(buf: &'a [u8]) -> Result<Self, EncapError> {
        need("GRE", 4, buf.len())?;
        let h = GreHeader { buf };
        let fv = h.flags_and_version();
        if fv & 7 != 0 {
            return Err(EncapError::GreVersion((fv & 7) as u8));
        }
        if fv & Self::FLAG_R != 0 {
            return Err(EncapError::GreRouting);
        }
        need("GRE", h.header_len(), buf.len())?;
        Ok(h)
    }

    /// The first 16 bits: C, R, K, S, reserved0 (9 bits), version (3 bits).
    pub fn flags_and_version(&self) -> u16 {
        be16(self.buf)
    }

    /// Protocol type of the payload (an Ethertype, 16 bits).
    pub fn protocol(&self) -> u16 {
        be16(&self.buf[2..])
    }

    fn has(&self, flag: u16) -> bool {
        self.flags_and_version() & flag != 0
    }

    /// Header length in bytes: 4, plus 4 for each of checksum, key and sequence number.
    pub fn header_len(&self) -> usize {
        4 + 4
            * (self.has(Self::FLAG_C) as usize
                + self.has(Self::FLAG_K) as usize
                + self.has(Self::FLAG_S) as usize)
    }

    /// The checksum (16 bits), when C is set.
    pub fn checksum(&self) -> Option<u16> {
        self.has(Self::FLAG_C).then(|| be16(&self.buf[4..]))
    }

    /// The key (32 bits), when K is set.
    pub fn key(&self) -> Option<u32> {
        let off = 4 + 4 * self.has(Self::FLAG_C) as usize;
        self.has(Self::FLAG_K).then(|| be32(&self.buf[off..]))
    }

    /// The sequence number (32 bits), when S is set.
    pub fn sequence(&self) -> Option<u32> {
        let off = self.header_len() - 4;
        self.has(Self::FLAG_S).then(|| be32(&self.buf[off..]))
    }

    /// The bytes after the header.
    pub fn payload(&self) -> &'a [u8] {
        &self.buf[self.header_len()..]
    }
}

/// The ERSPAN type II header, 8 bytes (draft-foschiano-erspan-03 §4.1).
#[derive(Clone, Copy, Debug)]
pub struct Erspan2Header<'a> {
    buf: &'a [u8],
}

impl<'a> Erspan2Header<'a> {
    /// Header length in bytes.
    pub const LEN: usize = 8;

    /// View `buf` as an ERSPAN type II header.
    ///
    /// # Errors
    /// [`EncapError::Truncated`] under 8 bytes; [`EncapError::ErspanVersion`] when the version
    /// is not 1.
    pub fn new_checked(buf: &'a [u8]) -> Result<Self, EncapError> {
        need("ERSPAN II", Self::LEN, buf.len())?;
        let h = Erspan2Header { buf };
        if h.version() != 1 {
            return Err(EncapError::ErspanVersion {
                found: h.version(),
                expected: 1,
            });
        }
        Ok(h)
    }

    /// Version, 4 bits (1 = type II).
    pub fn version(&self) -> u8 {
        self.buf[0] >> 4
    }
    /// Original VLAN of the mirrored frame, 12 bits.
    pub fn vlan(&self) -> u16 {
        be16(self.buf) & 0x0fff
    }
    /// Class of service of the mirrored frame, 3 bits.
    pub fn cos(&self) -> u8 {
        self.buf[2] >> 5
    }
    /// En, 2 bits: 0 originally untagged, 1 ISL, 2 802.1Q (tag removed), 3 tag kept in frame.
    pub fn encap_type(&self) -> u8 {
        (self.buf[2] >> 3) & 3
    }
    /// T: the mirrored frame was truncated to fit the mirror's MTU.
    pub fn truncated(&self) -> bool {
        self.buf[2] & 0x04 != 0
    }
    /// Session ID, 10 bits.
    pub fn session(&self) -> u16 {
        be16(&self.buf[2..]) & 0x03ff
    }
    /// Index (port / module of the source), 20 bits.
    pub fn index(&self) -> u32 {
        be32(&self.buf[4..]) & 0x000f_ffff
    }
    /// The mirrored Ethernet frame.
    pub fn payload(&self) -> &'a [u8] {
        &self.buf[Self::LEN..]
    }
}

/// The ERSPAN type III header, 12 bytes, plus an 8-byte platform-specific subheader when O is
/// set (draft-foschiano-erspan-03 §4.2).
#[derive(Clone, Copy, Debug)]
pub struct Erspan3Header<'a> {
    buf: &'a [u8],
}

impl<'a> Erspan3Header<'a> {
    /// Length of the fixed header in bytes.
    pub const LEN: usize = 12;
    /// Length of the platform-specific subheader in bytes.
    pub const SUBHEADER_LEN: usize = 8;

    /// View `buf` as an ERSPAN type III header.
    ///
    /// # Errors
    /// [`EncapError::Truncated`] when shorter than the header (and its subheader when O is
    /// set); [`EncapError::ErspanVersion`] when the version is not 2.
    pub fn new_checked(buf: &'a [u8]) -> Result<Self, EncapError> {
        need("ERSPAN III", Self::LEN, buf.len())?;
        let h = Erspan3Header { buf };
        if h.version() != 2 {
            return Err(EncapError::ErspanVersion {
                found: h.version(),
                expected: 2,
            });
        }
        need("ERSPAN III", h.header_len(), buf.len())?;
        Ok(h)
    }

    fn word(&self) -> u16 {
        be16(&self.buf[10..])
    }

    /// Version, 4 bits (2 = type III).
    pub fn version(&self) -> u8 {
        self.buf[0] >> 4
    }
    /// Original VLAN of the mirrored frame, 12 bits.
    pub fn vlan(&self) -> u16 {
        be16(self.buf) & 0x0fff
    }
    /// Class of service, 3 bits.
    pub fn cos(&self) -> u8 {
        self.buf[2] >> 5
    }
    /// BSO, 2 bits: 0 good or unknown, 1 short, 2 oversized, 3 CRC or alignment error.
    pub fn bso(&self) -> u8 {
        (self.buf[2] >> 3) & 3
    }
    /// T: the mirrored frame was truncated.
    pub fn truncated(&self) -> bool {
        self.buf[2] & 0x04 != 0
    }
    /// Session ID, 10 bits.
    pub fn session(&self) -> u16 {
        be16(&self.buf[2..]) & 0x03ff
    }
    /// Timestamp, 32 bits, in units of [`Self::granularity`] (the low 32 bits of it).
    pub fn timestamp(&self) -> u32 {
        be32(&self.buf[4..])
    }
    /// Security group tag, 16 bits.
    pub fn sgt(&self) -> u16 {
        be16(&self.buf[8..])
    }
    /// P: the payload is an Ethernet PDU (frame without preamble / FCS).
    pub fn pdu(&self) -> bool {
        self.word() & 0x8000 != 0
    }
    /// Frame type, 5 bits: 0 Ethernet, 2 IP.
    pub fn frame_type(&self) -> u8 {
        ((self.word() >> 10) & 0x1f) as u8
    }
    /// Hardware ID of the mirroring engine, 6 bits.
    pub fn hw_id(&self) -> u8 {
        ((self.word() >> 4) & 0x3f) as u8
    }
    /// D: the frame was mirrored on egress (`false`: ingress).
    pub fn egress(&self) -> bool {
        self.word() & 0x0008 != 0
    }
    /// Timestamp granularity, 2 bits: 0 = 100 µs, 1 = 100 ns, 2 = IEEE 1588 (ns within the
    /// second), 3 = user-configured.
    pub fn granularity(&self) -> u8 {
        ((self.word() >> 1) & 3) as u8
    }
    /// O: the platform-specific subheader follows.
    pub fn has_subheader(&self) -> bool {
        self.word() & 1 != 0
    }
    /// Header length in bytes: 12, or 20 with the subheader.
    pub fn header_len(&self) -> usize {
        Self::LEN + Self::SUBHEADER_LEN * self.has_subheader() as usize
    }
    /// The platform-specific subheader's two 32-bit words: the platform ID is the top 6 bits
    /// of the first.
    pub fn subheader(&self) -> Option<(u32, u32)> {
        self.has_subheader()
            .then(|| (be32(&self.buf[12..]), be32(&self.buf[16..])))
    }
    /// The mirrored frame.
    pub fn payload(&self) -> &'a [u8] {
        &self.buf[self.header_len()..]
    }
}

/// The VXLAN header, 8 bytes (RFC 7348 §5).
#[derive(Clone, Copy, Debug)]
pub struct VxlanHeader<'a> {
    buf: &'a [u8],
}

impl<'a> VxlanHeader<'a> {
    /// Header length in bytes.
    pub const LEN: usize = 8;
    /// The I flag: the VNI is valid.
    pub const FLAG_I: u8 = 0x08;

    /// View `buf` (the UDP payload) as a VXLAN header.
    ///
    /// # Errors
    /// [`EncapError::Truncated`] under 8 bytes.
    pub fn new_checked(buf: &'a [u8]) -> Result<Self, EncapError> {
        need("VXLAN", Self::LEN, buf.len())?;
        Ok(VxlanHeader { buf })
    }

    /// Flags, 8 bits (I = 0x08; the others are reserved, or GBP / GPE extensions).
    pub fn flags(&self) -> u8 {
        self.buf[0]
    }
    /// VXLAN network identifier, 24 bits.
    pub fn vni(&self) -> u32 {
        be32(&self.buf[4..]) >> 8
    }
    /// The inner Ethernet frame.
    pub fn payload(&self) -> &'a [u8] {
        &self.buf[Self::LEN..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::test_util::hex;

    #[test]
    fn gre_optional_fields_in_rfc_order() {
        // C, K and S set: checksum 0xabcd + reserved1, key 7, sequence 9 (RFC 2784 §2.1,
        // RFC 2890 §2).
        let b = hex("b000 6558 abcd0000 00000007 00000009 ff");
        let g = GreHeader::new_checked(&b).unwrap();
        assert_eq!(g.header_len(), 16);
        assert_eq!(g.protocol(), 0x6558);
        assert_eq!(g.checksum(), Some(0xabcd));
        assert_eq!(g.key(), Some(7));
        assert_eq!(g.sequence(), Some(9));
        assert_eq!(g.payload(), &[0xff]);
        let b = hex("1000 88be 00000005");
        let g = GreHeader::new_checked(&b).unwrap();
        assert_eq!((g.key(), g.sequence(), g.checksum()), (None, Some(5), None));
    }

    #[test]
    fn gre_errors() {
        assert_eq!(
            GreHeader::new_checked(&hex("3000 88be 0000")).unwrap_err(),
            EncapError::Truncated {
                header: "GRE",
                need: 12,
                have: 6
            }
        );
        assert_eq!(
            GreHeader::new_checked(&hex("0001 880b")).unwrap_err(),
            EncapError::GreVersion(1)
        );
        assert_eq!(
            GreHeader::new_checked(&hex("4000 0800")).unwrap_err(),
            EncapError::GreRouting
        );
    }

    #[test]
    fn erspan2_fields() {
        // Ver 1, VLAN 0x123; COS 5, En 3, T 1, session 0x2aa; index 0xabcde.
        let b = hex("1123 beaa 000abcde");
        let e = Erspan2Header::new_checked(&b).unwrap();
        assert_eq!((e.vlan(), e.cos(), e.encap_type()), (0x123, 5, 3));
        assert!(e.truncated());
        assert_eq!((e.session(), e.index()), (0x2aa, 0xabcde));
        assert_eq!(
            Erspan2Header::new_checked(&hex("2123bea a000abcde")).unwrap_err(),
            EncapError::ErspanVersion {
                found: 2,
                expected: 1
            }
        );
    }

    #[test]
    fn erspan3_fields_and_subheader() {
        // Ver 2, VLAN 10; COS 3 BSO 1 T 0 session 1; ts 0x01020304; SGT 0x0506;
        // P 1, FT 0, HW 0x21, D 1, Gra 2, O 1; platform ID 5.
        let b = hex("200a 6801 01020304 0506 821d 14000007 00000063 aa");
        let e = Erspan3Header::new_checked(&b).unwrap();
        assert_eq!((e.vlan(), e.cos(), e.bso(), e.session()), (10, 3, 1, 1));
        assert!(!e.truncated());
        assert_eq!((e.timestamp(), e.sgt()), (0x0102_0304, 0x0506));
        assert!(e.pdu() && e.egress() && e.has_subheader());
        assert_eq!((e.frame_type(), e.hw_id(), e.granularity()), (0, 0x21, 2));
        assert_eq!(e.subheader(), Some((0x1400_0007, 0x63)));
        assert_eq!(e.subheader().unwrap().0 >> 26, 5);
        assert_eq!(e.payload(), &[0xaa]);
        assert!(matches!(
            Erspan3Header::new_checked(&b[..16]),
            Err(EncapError::Truncated { need: 20, .. })
        ));
    }

    #[test]
    fn vxlan_vni() {
        let b = hex("08000000 00123400");
        let v = VxlanHeader::new_checked(&b).unwrap();
        assert_eq!((v.flags(), v.vni()), (VxlanHeader::FLAG_I, 0x1234));
        assert!(VxlanHeader::new_checked(&b[..7]).is_err());
    }
}
