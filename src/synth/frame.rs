//! Frame builder: RoCE packets written byte for byte from field values, with a correct ICRC.
//!
//! One [`Packet`] is Ethernet (any number of 802.1Q / 802.1ad tags) ‖ network header ‖ transport.
//! The network header is IPv4 + UDP (RoCEv2), IPv6 + UDP (RoCEv2) or a GRH (RoCEv1, EtherType
//! 0x8915). The transport is the BTH, the extended headers that the opcode implies (IBTA Vol. 1
//! §9.2–9.5, in wire order, as listed by [`crate::decode::Opcode::layout`]), the payload, the
//! pad bytes and the ICRC (IBTA Vol. 1 §7.8.1; RoCEv2 masking per IBTA Annex A17 §A17.4.5.1),
//! computed with [`crate::decode::icrc`]. Every IBA header (BTH, extended headers, GRH) is
//! written by its struct in `decode::headers`, the same definition the decoder reads with.
//!
//! Lengths written into the headers (IP total length, UDP length, GRH PayLen) are the wire
//! lengths of the whole packet, so a capture cut by a snap length still carries them.

use crate::decode::icrc;
use crate::decode::{
    Aeth, AtomicAckEth, AtomicEth, Deth, ExtKind, Feth, Grh, Ieth, ImmDt, Rdeth, Reth, Xrceth,
};

/// The Base Transport Header: the decoder's own struct, so that one definition of its layout
/// both reads and writes it (IBTA Vol. 1 §9.2). `Bth::default()` is synth's starting point:
/// RC SEND Only, P_Key `0xffff`, TVer 0, every flag 0.
pub use crate::decode::Bth;

/// One 802.1Q (TPID 0x8100) or 802.1ad (TPID 0x88a8) tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VlanTag {
    /// Tag protocol identifier: 0x8100 (C-tag) or 0x88a8 (S-tag).
    pub tpid: u16,
    /// Priority code point, 3 bits (what PFC acts on).
    pub pcp: u8,
    /// VLAN ID, 12 bits (0 for a priority tag).
    pub vid: u16,
}

impl VlanTag {
    /// An 802.1Q C-tag.
    pub fn dot1q(vid: u16, pcp: u8) -> VlanTag {
        VlanTag {
            tpid: 0x8100,
            pcp,
            vid,
        }
    }
}

/// Ethernet II header fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Eth {
    /// Destination MAC address.
    pub dst: [u8; 6],
    /// Source MAC address.
    pub src: [u8; 6],
    /// VLAN tags, outermost first.
    pub tags: Vec<VlanTag>,
}

impl Default for Eth {
    fn default() -> Self {
        Eth {
            dst: [0x02, 0, 0, 0, 0, 2],
            src: [0x02, 0, 0, 0, 0, 1],
            tags: Vec::new(),
        }
    }
}

/// The network layer below the BTH.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Net {
    /// RoCEv2 over IPv4 (20-byte header, DF set) and UDP.
    Ipv4 {
        /// Source address.
        src: [u8; 4],
        /// Destination address.
        dst: [u8; 4],
        /// Type of service: DSCP (6 bits) ‖ ECN (2 bits).
        tos: u8,
        /// Time to live.
        ttl: u8,
        /// Identification.
        id: u16,
    },
    /// RoCEv2 over IPv6 and UDP.
    Ipv6 {
        /// Source address.
        src: [u8; 16],
        /// Destination address.
        dst: [u8; 16],
        /// Traffic class: DSCP ‖ ECN.
        tclass: u8,
        /// Flow label, 20 bits.
        flow_label: u32,
        /// Hop limit.
        hop_limit: u8,
    },
    /// RoCEv1: a GRH (IBTA Vol. 1 §8.3) right after the Ethernet header, EtherType 0x8915.
    Grh {
        /// Source GID.
        sgid: [u8; 16],
        /// Destination GID.
        dgid: [u8; 16],
        /// Traffic class.
        tclass: u8,
        /// Flow label, 20 bits.
        flow_label: u32,
        /// Hop limit.
        hop_limit: u8,
    },
}

impl Net {
    /// RoCEv2 over IPv4 with ECT(0), TTL 64.
    pub fn v4(src: [u8; 4], dst: [u8; 4]) -> Net {
        Net::Ipv4 {
            src,
            dst,
            tos: 0x02,
            ttl: 64,
            id: 0,
        }
    }
}

/// Extended-header field values, each the header struct of `decode::headers` with that
/// header's layout (named as the fields of [`crate::decode::ExtHeaders`], which keeps the ImmDt
/// and IETH values as plain `u32`s); only the headers the opcode implies are written, each by
/// its own `emit`, which cuts every value to its field's bit width.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ext {
    /// RDETH (IBTA Vol. 1 §9.3).
    pub rdeth: Rdeth,
    /// DETH (IBTA Vol. 1 §9.3).
    pub deth: Deth,
    /// XRCETH (IBTA Vol. 1 XRC).
    pub xrceth: Xrceth,
    /// RETH (IBTA Vol. 1 §9.3).
    pub reth: Reth,
    /// FETH (IBTA Vol. 1 2021 memory-placement annex); its reserved bits are written as 0.
    pub feth: Feth,
    /// AtomicETH (IBTA Vol. 1 §9.3).
    pub atomic_eth: AtomicEth,
    /// AETH (IBTA Vol. 1 §9.3.5).
    pub aeth: Aeth,
    /// AtomicAckETH (IBTA Vol. 1 §9.3).
    pub atomic_ack_eth: AtomicAckEth,
    /// Immediate data (IBTA Vol. 1 §9.3).
    pub imm: ImmDt,
    /// IETH: R_Key to invalidate (IBTA Vol. 1 §9.3).
    pub ieth: Ieth,
}

impl Ext {
    /// Write extended header `kind` into `buf[..kind.size()]`.
    ///
    /// # Panics
    /// When `buf` is shorter than `kind.size()`.
    pub fn emit(&self, kind: ExtKind, buf: &mut [u8]) {
        match kind {
            ExtKind::Rdeth => self.rdeth.emit(buf),
            ExtKind::Deth => self.deth.emit(buf),
            ExtKind::Xrceth => self.xrceth.emit(buf),
            ExtKind::Reth => self.reth.emit(buf),
            ExtKind::AtomicEth => self.atomic_eth.emit(buf),
            ExtKind::Aeth => self.aeth.emit(buf),
            ExtKind::AtomicAckEth => self.atomic_ack_eth.emit(buf),
            ExtKind::ImmDt => self.imm.emit(buf),
            ExtKind::Ieth => self.ieth.emit(buf),
            ExtKind::Feth => self.feth.emit(buf),
            ExtKind::CnpReserved => buf[..kind.size()].fill(0),
        }
    }
}

/// One RoCE packet, built with [`Packet::build`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Ethernet header.
    pub eth: Eth,
    /// Network header.
    pub net: Net,
    /// UDP source port (RoCEv2 only; entropy per QP).
    pub udp_src: u16,
    /// UDP destination port (RoCEv2 only; 4791).
    pub udp_dst: u16,
    /// Base transport header.
    pub bth: Bth,
    /// Extended headers.
    pub ext: Ext,
    /// Payload length in bytes (without pad and ICRC).
    pub payload_len: usize,
    /// Seed of the deterministic payload byte pattern.
    pub payload_seed: u8,
}

impl Packet {
    /// A RoCEv2/IPv4 packet with default Ethernet, UDP port 4791 and `bth`.
    pub fn v4(src: [u8; 4], dst: [u8; 4], bth: Bth) -> Packet {
        Packet {
            eth: Eth::default(),
            net: Net::v4(src, dst),
            udp_src: 0xc000,
            udp_dst: 4791,
            bth,
            ext: Ext::default(),
            payload_len: 0,
            payload_seed: 0,
        }
    }

    /// Set the ECN field (2 bits: 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE) of the IPv4 TOS, IPv6
    /// traffic class or GRH traffic class.
    pub fn set_ecn(&mut self, ecn: u8) {
        let tc = match &mut self.net {
            Net::Ipv4 { tos, .. } => tos,
            Net::Ipv6 { tclass, .. } | Net::Grh { tclass, .. } => tclass,
        };
        *tc = (*tc & !3) | (ecn & 3);
    }

    /// BTH, the extended headers the opcode implies, payload and pad bytes (no ICRC).
    pub fn transport(&self) -> Vec<u8> {
        let mut t = Vec::with_capacity(64 + self.payload_len);
        t.extend_from_slice(&self.bth.to_bytes());
        if let Some(layout) = self.bth.opcode.layout() {
            for h in layout.headers {
                let at = t.len();
                t.resize(at + h.size(), 0);
                self.ext.emit(*h, &mut t[at..]);
            }
        }
        let seed = self.payload_seed;
        t.extend((0..self.payload_len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)));
        t.extend(std::iter::repeat_n(0u8, usize::from(self.bth.pad & 3)));
        t
    }

    /// The whole frame: Ethernet ‖ tags ‖ network header ‖ transport ‖ ICRC (little-endian on
    /// the wire, as IBTA §7.8.1 sends the CRC's low byte first).
    pub fn build(&self) -> Vec<u8> {
        let t = self.transport();
        let mut f = Vec::with_capacity(t.len() + 100);
        f.extend_from_slice(&self.eth.dst);
        f.extend_from_slice(&self.eth.src);
        for tag in &self.eth.tags {
            f.extend_from_slice(&tag.tpid.to_be_bytes());
            let tci = u16::from(tag.pcp & 7) << 13 | (tag.vid & 0x0fff);
            f.extend_from_slice(&tci.to_be_bytes());
        }
        let crc = match &self.net {
            Net::Ipv4 { .. } => {
                f.extend_from_slice(&[0x08, 0x00]);
                let (ip, udp) = self.ipv4_udp(t.len());
                f.extend_from_slice(&ip);
                f.extend_from_slice(&udp);
                icrc::rocev2_ipv4(&ip, &udp, &t)
            }
            Net::Ipv6 { .. } => {
                f.extend_from_slice(&[0x86, 0xdd]);
                let (ip, udp) = self.ipv6_udp(t.len());
                f.extend_from_slice(&ip);
                f.extend_from_slice(&udp);
                icrc::rocev2_ipv6(&ip, &udp, &t)
            }
            Net::Grh { .. } => {
                f.extend_from_slice(&[0x89, 0x15]);
                let grh = self.grh(t.len());
                f.extend_from_slice(&grh);
                icrc::with_grh(&grh, &t)
            }
        };
        f.extend_from_slice(&t);
        f.extend_from_slice(&crc.to_le_bytes());
        f
    }

    fn udp(&self, transport_len: usize) -> [u8; 8] {
        let udp_len = 8 + transport_len + 4;
        let mut udp = [0u8; 8];
        udp[0..2].copy_from_slice(&self.udp_src.to_be_bytes());
        udp[2..4].copy_from_slice(&self.udp_dst.to_be_bytes());
        udp[4..6].copy_from_slice(&(udp_len as u16).to_be_bytes());
        udp
    }

    fn ipv4_udp(&self, transport_len: usize) -> ([u8; 20], [u8; 8]) {
        let Net::Ipv4 {
            src,
            dst,
            tos,
            ttl,
            id,
        } = &self.net
        else {
            unreachable!("ipv4_udp on a non-IPv4 packet")
        };
        let ip_len = 20 + 8 + transport_len + 4;
        let mut ip = [0u8; 20];
        ip[0] = 0x45;
        ip[1] = *tos;
        ip[2..4].copy_from_slice(&(ip_len as u16).to_be_bytes());
        ip[4..6].copy_from_slice(&id.to_be_bytes());
        ip[6] = 0x40; // DF
        ip[8] = *ttl;
        ip[9] = 17;
        ip[12..16].copy_from_slice(src);
        ip[16..20].copy_from_slice(dst);
        let c = ipv4_checksum(&ip);
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        (ip, self.udp(transport_len))
    }

    fn ipv6_udp(&self, transport_len: usize) -> ([u8; 40], [u8; 8]) {
        let Net::Ipv6 {
            src,
            dst,
            tclass,
            flow_label,
            hop_limit,
        } = &self.net
        else {
            unreachable!("ipv6_udp on a non-IPv6 packet")
        };
        let len = 8 + transport_len + 4;
        // The IPv6 header has the GRH's layout (IBTA §8.3 took it from IPv6); next header 17: UDP.
        let ip = Grh {
            ip_ver: 6,
            tclass: *tclass,
            flow_label: *flow_label,
            pay_len: len as u16,
            next_hdr: 17,
            hop_limit: *hop_limit,
            sgid: *src,
            dgid: *dst,
        };
        (ip.to_bytes(), self.udp(transport_len))
    }

    fn grh(&self, transport_len: usize) -> [u8; 40] {
        let Net::Grh {
            sgid,
            dgid,
            tclass,
            flow_label,
            hop_limit,
        } = &self.net
        else {
            unreachable!("grh on a non-RoCEv1 packet")
        };
        // PayLen: from the BTH to the ICRC inclusive (IBTA §8.3.1), not counting the VCRC;
        // NxtHdr 0x1B: IBA transport.
        Grh {
            ip_ver: 6,
            tclass: *tclass,
            flow_label: *flow_label,
            pay_len: (transport_len + 4) as u16,
            next_hdr: Grh::NEXT_HDR_BTH,
            hop_limit: *hop_limit,
            sgid: *sgid,
            dgid: *dgid,
        }
        .to_bytes()
    }
}

/// IPv4 header checksum (RFC 1071) of `h`, whose checksum field must be zero.
pub fn ipv4_checksum(h: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for c in h.chunks(2) {
        sum += u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]));
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}
