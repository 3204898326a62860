//! What the analysis reads of a decoded frame: [`Seen`], and of its RoCE packet: [`Packet`]
//! (about half of a [`RocePacket`]: no LRH, GRH, hop limit, UDP destination port, ICRC values
//! nor the extended headers that only describe a packet, such as AtomicETH or IETH).
//!
//! `read --threads N` hands each frame from the thread that decoded it to the one that
//! analyses it as a [`Seen`]: the fewer its bytes, the fewer cache lines cross between the two
//! cores (368 bytes when it held the whole [`RocePacket`], 200 now).

use crate::decode::{
    Address, Aeth, Bth, Deth, Ecn, Feth, Frame, IcrcStatus, Malformed, Reth, RocePacket,
};

/// The parts of a decoded frame the analysis reads.
#[derive(Clone, Copy, Debug)]
pub struct Seen<'a> {
    /// The RoCE packet, when the frame is one.
    pub roce: Option<Packet<'a>>,
    /// The innermost mirror session the frame came through: ERSPAN session ID (10 bits) or
    /// VXLAN VNI (24 bits).
    pub session: Option<u32>,
    /// 802.1Q priority (PCP, 3 bits) of the inner VLAN tag, else of the outer one.
    pub pcp: Option<u8>,
}

impl<'a> Seen<'a> {
    /// What the analysis reads of `frame`.
    #[inline]
    pub fn of(frame: &Frame<'a>) -> Seen<'a> {
        let Some(p) = frame.roce() else {
            // The analysis reads neither the session nor the priority of another frame.
            return Seen {
                roce: None,
                session: None,
                pcp: None,
            };
        };
        Seen {
            roce: Some(Packet::of(p)),
            session: frame.encap.session(),
            pcp: frame.link.inner_vlan_pcp.or(frame.link.vlan_pcp),
        }
    }
}

/// The fields of a [`RocePacket`] the analysis reads, under the same names.
#[derive(Clone, Copy, Debug)]
pub struct Packet<'a> {
    /// Source address (IP, GID or LID).
    pub src: Address,
    /// Destination address (IP, GID or LID).
    pub dst: Address,
    /// BTH; `None` when fewer than 12 bytes were captured or present.
    pub bth: Option<Bth>,
    /// The extended headers the analysis reads.
    pub ext: Ext,
    /// Captured payload bytes (without pad and ICRC): a CM MAD's, for the CM.
    pub payload: &'a [u8],
    /// Payload length in bytes per the packet's length fields (without pad and ICRC).
    pub payload_len: u32,
    /// Bytes of BTH + extended headers, per the opcode's layout.
    pub hdr_len: u32,
    /// UDP source port (RoCEv2 only): the hash that pairs the two directions of a QP.
    pub udp_src_port: Option<u16>,
    /// IP ECN codepoint (RFC 3168 §5); `None` without an IP header.
    pub ecn: Option<Ecn>,
    /// DSCP, 6 bits; `None` without an IP header.
    pub dscp: Option<u8>,
    /// ICRC verification result.
    pub icrc: IcrcStatus,
    /// Set when the packet is not a plausible IBA packet.
    pub malformed: Option<Malformed>,
    /// Set when the snap length cut the frame before its end.
    pub truncated: bool,
}

/// The extended headers the analysis reads (IBTA Vol 1 §9.3), each `Some` when its opcode
/// implies it and its bytes were captured.
#[derive(Clone, Copy, Debug, Default)]
pub struct Ext {
    /// RETH: a READ's reservation, a WRITE's length and address.
    pub reth: Option<Reth>,
    /// AETH: ACK, NAK, MSN.
    pub aeth: Option<Aeth>,
    /// DETH: a UD sender's QP.
    pub deth: Option<Deth>,
    /// Immediate data, 32 bits.
    pub imm: Option<u32>,
    /// FETH (FLUSH).
    pub feth: Option<Feth>,
}

impl<'a> Packet<'a> {
    /// What the analysis reads of `p`.
    #[inline]
    pub fn of(p: &RocePacket<'a>) -> Packet<'a> {
        Packet {
            src: p.src,
            dst: p.dst,
            bth: p.bth,
            ext: Ext {
                reth: p.ext.reth,
                aeth: p.ext.aeth,
                deth: p.ext.deth,
                imm: p.ext.imm,
                feth: p.ext.feth,
            },
            payload: p.payload,
            payload_len: p.payload_len,
            // BTH and the longest extended headers: well under 2^32 bytes.
            hdr_len: p.hdr_len as u32,
            udp_src_port: p.udp_src_port,
            ecn: p.ecn,
            dscp: p.dscp,
            icrc: p.icrc.status,
            malformed: p.malformed,
            truncated: p.truncated,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Half the cache lines of the whole packet cross between threads (the size is what the
    /// module doc promises).
    #[test]
    fn a_seen_frame_is_about_half_a_roce_packet() {
        assert!(size_of::<Seen>() <= 200, "{}", size_of::<Seen>());
    }
}
