//! IBA transport layer: the BTH, the extended headers its opcode implies, payload, pad and the
//! ICRC position (IBTA Vol 1 §9.2–§9.3; layout table in spec/roce.md §2).

use super::headers::Bth;
use super::{Malformed, RocePacket};

/// Where a packet's ICRC is, as [`parse`] found it (4 bytes after the payload and pad).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IcrcSpot {
    /// The ICRC read from the wire (its 4 bytes little-endian), when captured and locatable.
    pub wire: Option<u32>,
    /// Offset of the ICRC from the BTH start, bytes, when the packet is well-formed.
    pub offset: Option<usize>,
}

/// ICRC length in bytes.
pub const ICRC_LEN: usize = 4;

/// Parse the transport bytes into `pkt`, in place (a decoded frame is not copied field by
/// field from a second struct): its `bth`, `ext`, `hdr_len` (bytes of BTH + extended headers),
/// `payload`, `payload_len` (bytes, without pad and ICRC), `malformed` and `truncated`.
///
/// `pkt` comes as an empty packet is built: no BTH, no extended header, no payload, not
/// malformed. `captured` starts at the BTH and holds what the capture kept; `declared` is the
/// length from the BTH to the end of the ICRC according to the enclosing length field (UDP
/// length − 8, GRH PayLen, or LRH PktLen). Returns where the ICRC is. Never panics.
pub fn parse<'a>(captured: &'a [u8], declared: usize, pkt: &mut RocePacket<'a>) -> IcrcSpot {
    let truncated = captured.len() < declared;
    let avail = &captured[..captured.len().min(declared)];
    let mut spot = IcrcSpot::default();
    pkt.hdr_len = Bth::LEN;
    pkt.truncated = truncated;
    if declared < Bth::LEN {
        pkt.malformed = Some(Malformed::ShortBth { len: declared });
        pkt.hdr_len = declared;
        return spot;
    }
    if avail.len() < Bth::LEN {
        return spot;
    }
    let bth = Bth::parse_unchecked(avail);
    pkt.bth = Some(bth);
    if bth.tver != 0 {
        pkt.malformed = Some(Malformed::BadTver(bth.tver));
        return spot;
    }
    let Some(layout) = bth.opcode.layout() else {
        if bth.opcode.transport() != super::Transport::Vendor {
            pkt.malformed = Some(Malformed::ReservedOpcode(bth.opcode.0));
        }
        // Manufacturer-specific: the rest is opaque; no ICRC position is known.
        return spot;
    };
    let hdr_len = Bth::LEN + layout.ext_len;
    pkt.hdr_len = hdr_len;
    let need = hdr_len + ICRC_LEN;
    // Decode every header that was captured, even in a short packet, so users see it.
    let mut off = Bth::LEN;
    for kind in layout.headers {
        let end = off + kind.size();
        if end > avail.len() || end + ICRC_LEN > declared {
            break;
        }
        pkt.ext.set(*kind, &avail[off..end]);
        off = end;
    }
    if declared < need {
        pkt.malformed = Some(Malformed::ShortForOpcode {
            need,
            have: declared,
        });
        return spot;
    }
    let body = declared - need; // payload + pad
    if !layout.payload && body > 0 {
        pkt.malformed = Some(Malformed::UnexpectedPayload { extra: body });
        return spot;
    }
    if bth.pad as usize > body {
        pkt.malformed = Some(Malformed::PadExceedsPayload {
            pad: bth.pad,
            payload: body,
        });
        return spot;
    }
    let payload_len = body - bth.pad as usize;
    pkt.payload_len = payload_len as u32;
    let pay_end = (hdr_len + payload_len).min(avail.len());
    if hdr_len < pay_end {
        pkt.payload = &avail[hdr_len..pay_end];
    }
    let icrc_at = declared - ICRC_LEN;
    spot.offset = Some(icrc_at);
    if !truncated {
        let b = &avail[icrc_at..declared];
        spot.wire = Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    }
    spot
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{Address, RoceVersion};

    /// Parse into an empty packet: the packet and where its ICRC is.
    fn parse_new(captured: &[u8], declared: usize) -> (RocePacket<'_>, IcrcSpot) {
        let none = Address::Lid(0);
        let mut pkt = super::super::link::empty_packet(RoceVersion::V2, none, none);
        let spot = parse(captured, declared, &mut pkt);
        (pkt, spot)
    }

    /// RC RDMA WRITE FIRST: BTH + RETH + 8 bytes payload + ICRC, built by hand.
    fn write_first() -> Vec<u8> {
        let mut v = vec![
            0x06, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11, 0x00, 0x00, 0x04, 0xd2, // BTH
            0x00, 0x00, 0x7f, 0x00, 0x12, 0x34, 0x56, 0x78, // VA
            0xca, 0xfe, 0xba, 0xbe, // R_Key
            0x00, 0x00, 0x0b, 0xb8, // DMA length 3000
        ];
        v.extend_from_slice(&[0xaa; 8]);
        v.extend_from_slice(&[1, 2, 3, 4]);
        v
    }

    #[test]
    fn write_first_fields() {
        let b = write_first();
        let (t, s) = parse_new(&b, b.len());
        assert!(t.malformed.is_none() && !t.truncated);
        let bth = t.bth.unwrap();
        assert_eq!((bth.dest_qp, bth.psn), (0x11, 1234));
        let r = t.ext.reth.unwrap();
        assert_eq!(
            (r.va, r.rkey, r.dma_len),
            (0x7f0012345678, 0xcafebabe, 3000)
        );
        assert_eq!((t.hdr_len, t.payload_len, t.payload.len()), (28, 8, 8));
        assert_eq!(s.wire, Some(0x0403_0201));
    }

    #[test]
    fn every_truncation_is_safe() {
        let b = write_first();
        for cut in 0..=b.len() {
            let (t, s) = parse_new(&b[..cut], b.len());
            assert_eq!(t.truncated, cut < b.len());
            assert_eq!(t.bth.is_some(), cut >= 12);
            assert_eq!(t.ext.reth.is_some(), cut >= 28);
            assert!(t.malformed.is_none());
            assert_eq!(t.payload_len, if cut >= 12 { 8 } else { 0 });
            assert_eq!(t.payload.len(), cut.saturating_sub(28).min(8));
            assert_eq!(s.wire.is_some(), cut == b.len());
        }
        // Declared lengths that cannot hold the headers are malformed, at every size.
        for declared in 0..32 {
            let (t, _) = parse_new(&b[..declared], declared);
            assert!(t.malformed.is_some(), "declared {declared}");
        }
    }

    #[test]
    fn pad_larger_than_payload() {
        // RC SEND ONLY with pad 3 but only 2 payload bytes.
        let b = [
            0x04, 0x30, 0xff, 0xff, 0, 0, 0, 1, 0, 0, 0, 1, 9, 9, 0, 0, 0, 0,
        ];
        let (t, _) = parse_new(&b, b.len());
        assert_eq!(
            t.malformed,
            Some(Malformed::PadExceedsPayload { pad: 3, payload: 2 })
        );
    }

    #[test]
    fn bad_tver_and_vendor() {
        let mut b = [0x04, 0x01, 0xff, 0xff, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0];
        assert_eq!(parse_new(&b, 16).0.malformed, Some(Malformed::BadTver(1)));
        b[0] = 0xe0;
        b[1] = 0;
        let (t, s) = parse_new(&b, 16);
        assert!(t.malformed.is_none() && s.offset.is_none());
        b[0] = 0x18;
        assert_eq!(
            parse_new(&b, 16).0.malformed,
            Some(Malformed::ReservedOpcode(0x18))
        );
    }
}
