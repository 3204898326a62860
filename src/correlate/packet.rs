//! What the correlation keeps of one RoCE packet: its identity (the fields no hop changes) and
//! its content fingerprint (the ICRC), owned and small so that copies can wait in the window.

use std::hash::Hasher;

use crate::decode::{Address, Frame};
use rustc_hash::FxHasher;

/// The parts of a packet that identify it across hops: addresses and the BTH fields that a
/// switch or router never rewrites (IBTA Vol 1 §9.2; the variant fields TTL/hop limit, ECN,
/// DSCP, FECN/BECN and checksums are left out, as the ICRC leaves them out, §7.8.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Identity {
    /// Source address (IP, GID or LID).
    pub src: Address,
    /// Destination address.
    pub dst: Address,
    /// BTH DestQP, 24 bits.
    pub dest_qp: u32,
    /// BTH PSN, 24 bits.
    pub psn: u32,
    /// BTH OpCode, 8 bits.
    pub opcode: u8,
}

/// The invariant content of one copy: the ICRC as found on the wire and as computed over the
/// captured bytes. The ICRC covers every invariant byte (extended headers and payload
/// included), so two copies whose ICRCs agree carry the same packet; either value is `None`
/// when a snap length cut the frame (the copies then match on their headers only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Content {
    /// ICRC read from the trailer (CRC-32 value), when captured.
    pub icrc_wire: Option<u32>,
    /// ICRC computed over the masked packet, when computable.
    pub icrc_computed: Option<u32>,
}

impl Content {
    /// Whether two copies of the same identity carry different bytes: a wire or computed ICRC
    /// present in both and different. Copies without an ICRC never differ (headers only).
    pub fn differs(&self, other: &Content) -> bool {
        let ne = |a: Option<u32>, b: Option<u32>| matches!((a, b), (Some(x), Some(y)) if x != y);
        ne(self.icrc_wire, other.icrc_wire) || ne(self.icrc_computed, other.icrc_computed)
    }
}

/// One RoCE packet of one capture.
#[derive(Clone, Copy, Debug)]
pub struct Observation {
    /// Frame number in its capture file, from 1 as in Wireshark.
    pub frame: u64,
    /// Capture time in ns since the Unix epoch, on the capturing host's clock.
    pub ts_ns: u64,
    /// Identity fields.
    pub id: Identity,
    /// Content fingerprint.
    pub content: Content,
}

impl Observation {
    /// The observation of a decoded frame, when it is a RoCE packet with a BTH (frames without
    /// one cannot be matched and are only counted).
    pub fn of(frame: &Frame<'_>, number: u64, ts_ns: u64) -> Option<Observation> {
        let p = frame.roce()?;
        let bth = p.bth?;
        Some(Observation {
            frame: number,
            ts_ns,
            id: Identity {
                src: p.src,
                dst: p.dst,
                dest_qp: bth.dest_qp,
                psn: bth.psn,
                opcode: bth.opcode.0,
            },
            content: Content {
                icrc_wire: p.icrc.value,
                icrc_computed: p.icrc.expected,
            },
        })
    }

    /// A 64-bit hash of the identity, the same in every capture that holds this packet, cut
    /// by a snap length or not (so not the ICRC): what the offset survey samples on
    /// (splitmix64's finaliser over the Fx hash, so that every bit is mixed).
    pub fn sample_hash(&self) -> u64 {
        let mut h = FxHasher::default();
        std::hash::Hash::hash(&self.id, &mut h);
        let mut z = h.finish();
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_differs_only_when_both_known() {
        let a = Content {
            icrc_wire: Some(1),
            icrc_computed: Some(1),
        };
        let cut = Content::default();
        let bad = Content {
            icrc_wire: Some(1),
            icrc_computed: Some(7),
        };
        assert!(!a.differs(&a));
        assert!(!a.differs(&cut));
        assert!(a.differs(&bad));
    }
}
