//! Mirror decapsulation: the tunnels switches send SPAN copies through (ERSPAN type I, II and
//! III over GRE, GRE transparent Ethernet bridging, plain IP-in-GRE, VXLAN), over IPv4 and
//! IPv6, any of them behind VLAN tags and nested up to [`MAX_ENCAP`] deep. The inner frame is
//! then decoded as if captured directly; the tunnel layers are kept in [`Encap`], outermost
//! first.
//!
//! Header views and their sources: [`wire`]. The inner frame's length fields are checked
//! against the copy: a copy the mirror says it truncated (ERSPAN T bit), or one from a tunnel
//! that cannot say (GRE, VXLAN), may end before its length fields do, and is shown as truncated
//! rather than malformed; an ERSPAN copy with T clear is held to its lengths exactly.

pub mod clock;
pub mod wire;

use super::{Address, LinkSummary};
pub use wire::{Erspan2Header, Erspan3Header, GreHeader, VxlanHeader};

/// IANA UDP port for VXLAN (RFC 7348 §5).
pub const VXLAN_PORT: u16 = 4789;
/// GRE protocol type of transparent Ethernet bridging (an Ethernet frame follows).
pub const GRE_TEB: u16 = 0x6558;
/// GRE protocol type of ERSPAN types I and II.
pub const GRE_ERSPAN_II: u16 = 0x88be;
/// GRE protocol type of ERSPAN type III.
pub const GRE_ERSPAN_III: u16 = 0x22eb;
/// Most tunnel layers decapsulated; a deeper tunnel is left as an IP / UDP frame.
pub const MAX_ENCAP: usize = 3;

/// Why a tunnel header could not be decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EncapError {
    /// The captured bytes end inside the header.
    #[error("{header} header needs {need} bytes, {have} captured")]
    Truncated {
        /// Header name (`GRE`, `ERSPAN II`, `ERSPAN III`, `VXLAN`).
        header: &'static str,
        /// Bytes the header needs.
        need: usize,
        /// Bytes captured.
        have: usize,
    },
    /// GRE version other than 0 (1 is PPTP's enhanced GRE, RFC 2637).
    #[error("GRE version {0} (only version 0 carries mirrored frames)")]
    GreVersion(u8),
    /// GRE with the R bit (RFC 1701 source routing, removed by RFC 2784).
    #[error("GRE routing bit set (RFC 1701 source routing is not supported)")]
    GreRouting,
    /// ERSPAN header version that does not match its GRE protocol type.
    #[error("ERSPAN version {found} where {expected} was expected")]
    ErspanVersion {
        /// Version field, 4 bits.
        found: u8,
        /// 1 under 0x88BE, 2 under 0x22EB.
        expected: u8,
    },
    /// ERSPAN III frame type other than Ethernet (0) or IP (2).
    #[error("ERSPAN III frame type {0} (only 0 Ethernet and 2 IP are defined)")]
    ErspanFrameType(u8),
}

/// The GRE header of a tunnel layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GreInfo {
    /// Protocol type, 16 bits.
    pub protocol: u16,
    /// Checksum (16 bits), when present.
    pub checksum: Option<u16>,
    /// Key (32 bits), when present.
    pub key: Option<u32>,
    /// Sequence number (32 bits), when present.
    pub seq: Option<u32>,
}

/// ERSPAN type II header fields (draft-foschiano-erspan-03 §4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Erspan2 {
    /// Original VLAN, 12 bits.
    pub vlan: u16,
    /// Class of service, 3 bits.
    pub cos: u8,
    /// En, 2 bits (see [`Erspan2Header::encap_type`]).
    pub encap_type: u8,
    /// T: truncated by the mirror.
    pub truncated: bool,
    /// Session ID, 10 bits.
    pub session: u16,
    /// Index, 20 bits.
    pub index: u32,
}

/// ERSPAN type III header fields (draft-foschiano-erspan-03 §4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Erspan3 {
    /// Original VLAN, 12 bits.
    pub vlan: u16,
    /// Class of service, 3 bits.
    pub cos: u8,
    /// BSO, 2 bits (frame integrity).
    pub bso: u8,
    /// T: truncated by the mirror.
    pub truncated: bool,
    /// Session ID, 10 bits.
    pub session: u16,
    /// Timestamp, 32 bits, in units of `granularity`.
    pub timestamp: u32,
    /// Security group tag, 16 bits.
    pub sgt: u16,
    /// P: Ethernet PDU.
    pub pdu: bool,
    /// Frame type, 5 bits (0 Ethernet, 2 IP).
    pub frame_type: u8,
    /// Hardware ID, 6 bits.
    pub hw_id: u8,
    /// D: mirrored on egress.
    pub egress: bool,
    /// Timestamp granularity, 2 bits (0 = 100 µs, 1 = 100 ns, 2 = IEEE 1588, 3 = custom).
    pub granularity: u8,
    /// The platform-specific subheader's two words, when O is set.
    pub subheader: Option<(u32, u32)>,
}

impl Erspan3 {
    /// Platform ID, 6 bits, when the subheader is present.
    pub fn platform_id(&self) -> Option<u8> {
        self.subheader.map(|(w, _)| (w >> 26) as u8)
    }

    /// The upper 32 bits of the timestamp the subheader carries: the second word for platform
    /// IDs 3, 7 and 0 ("upper 32-bit timestamp") and 5, 6 ("timestamp, seconds"), per
    /// Wireshark's `packet-erspan.c`. `None` for other platforms.
    pub fn timestamp_upper(&self) -> Option<u32> {
        match (self.platform_id()?, self.subheader?) {
            (0 | 3 | 5 | 6 | 7, (_, w)) => Some(w),
            _ => None,
        }
    }
}

/// What kind of tunnel a layer is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EncapKind {
    /// GRE carrying Ethernet (0x6558) or IP (0x0800, 0x86DD).
    Gre(GreInfo),
    /// ERSPAN type I: GRE 0x88BE without sequence number, Ethernet right after.
    Erspan1(GreInfo),
    /// ERSPAN type II.
    Erspan2(GreInfo, Erspan2),
    /// ERSPAN type III.
    Erspan3(GreInfo, Erspan3),
    /// VXLAN over UDP.
    Vxlan {
        /// Outer UDP source port.
        src_port: u16,
        /// Outer UDP destination port.
        dst_port: u16,
        /// VXLAN flags, 8 bits.
        flags: u8,
        /// VNI, 24 bits (meaningful when flags has I).
        vni: u32,
    },
}

impl EncapKind {
    /// `gre`, `erspan1`, `erspan2`, `erspan3` or `vxlan`, as in JSON.
    pub fn name(&self) -> &'static str {
        match self {
            EncapKind::Gre(_) => "gre",
            EncapKind::Erspan1(_) => "erspan1",
            EncapKind::Erspan2(..) => "erspan2",
            EncapKind::Erspan3(..) => "erspan3",
            EncapKind::Vxlan { .. } => "vxlan",
        }
    }

    /// The mirror session that splits flows under `--encap-session`: the ERSPAN session ID or
    /// the VXLAN VNI; `None` for GRE and ERSPAN I, which carry none.
    pub fn session(&self) -> Option<u32> {
        match self {
            EncapKind::Erspan2(_, e) => Some(u32::from(e.session)),
            EncapKind::Erspan3(_, e) => Some(u32::from(e.session)),
            EncapKind::Vxlan { vni, .. } => Some(*vni),
            _ => None,
        }
    }

    /// Whether the mirror flagged the copy as truncated (ERSPAN T bit).
    pub fn truncated(&self) -> bool {
        match self {
            EncapKind::Erspan2(_, e) => e.truncated,
            EncapKind::Erspan3(_, e) => e.truncated,
            _ => false,
        }
    }
}

/// One tunnel layer: the outer IP header's addresses and the tunnel header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EncapLayer {
    /// Outer source address.
    pub src: Address,
    /// Outer destination address.
    pub dst: Address,
    /// The tunnel.
    pub kind: EncapKind,
}

/// The tunnel layers around a frame, outermost first (empty for a frame captured directly).
#[derive(Clone, Copy, Debug, Default)]
pub struct Encap {
    layers: [Option<EncapLayer>; MAX_ENCAP],
    /// The link layer of the outermost carrier (MACs, VLAN tags), when mirrored.
    pub outer_link: Option<LinkSummary>,
}

impl Encap {
    /// Whether the frame came through a tunnel.
    pub fn is_empty(&self) -> bool {
        self.layers[0].is_none()
    }

    /// The layers, outermost first.
    pub fn layers(&self) -> impl Iterator<Item = &EncapLayer> {
        self.layers.iter().map_while(Option::as_ref)
    }

    /// The innermost layer's session (ERSPAN session ID or VXLAN VNI), if any layer has one.
    pub fn session(&self) -> Option<u32> {
        self.layers().filter_map(|l| l.kind.session()).last()
    }

    /// The innermost ERSPAN type III header, whose timestamp `--mirror-time` uses.
    pub fn erspan3(&self) -> Option<(&EncapLayer, &Erspan3)> {
        self.layers()
            .filter_map(|l| match &l.kind {
                EncapKind::Erspan3(_, e) => Some((l, e)),
                _ => None,
            })
            .last()
    }

    /// Put `layer` outside the present ones, carried by `link`. A full stack keeps its
    /// innermost layers (the decoder never nests deeper than [`MAX_ENCAP`]).
    pub(super) fn push_outer(&mut self, layer: EncapLayer, link: LinkSummary) {
        self.layers.rotate_right(1);
        self.layers[0] = Some(layer);
        self.outer_link = Some(link);
    }
}

/// The outer IP header of a tunnel: addresses, and the bytes of its payload the capture lacks.
#[derive(Clone, Copy, Debug)]
pub(super) struct Outer {
    pub(super) src: Address,
    pub(super) dst: Address,
    /// Payload bytes declared by the outer IP (or UDP) length but not captured.
    pub(super) missing: usize,
}

/// What a tunnel header holds: the frame inside it, or why it could not be read. The decoder
/// (`decode::link`) decodes the inner frame and records the tunnel around it.
#[derive(Debug)]
pub(super) enum Opened<'a> {
    /// The inner frame: Ethernet when `ethernet`, else a bare IPv4 or IPv6 packet.
    Inner {
        /// The inner frame's bytes.
        data: &'a [u8],
        /// Whether it begins with an Ethernet header.
        ethernet: bool,
        /// The tunnel.
        kind: EncapKind,
    },
    /// A tunnel header that could not be decoded: shown and counted as undecodable.
    Failed(EncapError),
}

/// Open GRE (IP protocol 47) payload `data`; `None` when it is not a tunnel this module opens
/// (the caller shows it as an IP frame).
pub(super) fn gre(data: &[u8]) -> Option<Opened<'_>> {
    let g = match GreHeader::new_checked(data) {
        Ok(g) => g,
        Err(e) => return Some(Opened::Failed(e)),
    };
    let info = GreInfo {
        protocol: g.protocol(),
        checksum: g.checksum(),
        key: g.key(),
        seq: g.sequence(),
    };
    let pl = g.payload();
    let opened = match g.protocol() {
        GRE_TEB => Opened::Inner {
            data: pl,
            ethernet: true,
            kind: EncapKind::Gre(info),
        },
        0x0800 | 0x86dd => Opened::Inner {
            data: pl,
            ethernet: false,
            kind: EncapKind::Gre(info),
        },
        GRE_ERSPAN_II if info.seq.is_none() => Opened::Inner {
            data: pl,
            ethernet: true,
            kind: EncapKind::Erspan1(info),
        },
        GRE_ERSPAN_II => match Erspan2Header::new_checked(pl) {
            Ok(h) => {
                let e = Erspan2 {
                    vlan: h.vlan(),
                    cos: h.cos(),
                    encap_type: h.encap_type(),
                    truncated: h.truncated(),
                    session: h.session(),
                    index: h.index(),
                };
                Opened::Inner {
                    data: h.payload(),
                    ethernet: true,
                    kind: EncapKind::Erspan2(info, e),
                }
            }
            Err(e) => Opened::Failed(e),
        },
        GRE_ERSPAN_III => erspan3(pl, info),
        _ => return None,
    };
    Some(opened)
}

fn erspan3(pl: &[u8], info: GreInfo) -> Opened<'_> {
    let h = match Erspan3Header::new_checked(pl) {
        Ok(h) => h,
        Err(e) => return Opened::Failed(e),
    };
    let e = Erspan3 {
        vlan: h.vlan(),
        cos: h.cos(),
        bso: h.bso(),
        truncated: h.truncated(),
        session: h.session(),
        timestamp: h.timestamp(),
        sgt: h.sgt(),
        pdu: h.pdu(),
        frame_type: h.frame_type(),
        hw_id: h.hw_id(),
        egress: h.egress(),
        granularity: h.granularity(),
        subheader: h.subheader(),
    };
    match e.frame_type {
        0 => Opened::Inner {
            data: h.payload(),
            ethernet: true,
            kind: EncapKind::Erspan3(info, e),
        },
        2 => Opened::Inner {
            data: h.payload(),
            ethernet: false,
            kind: EncapKind::Erspan3(info, e),
        },
        t => Opened::Failed(EncapError::ErspanFrameType(t)),
    }
}

/// Open VXLAN: `udp` is the UDP datagram as captured (header included, at least 8 bytes), cut to
/// its length field.
pub(super) fn vxlan(udp: &[u8]) -> Opened<'_> {
    let pl = &udp[8..];
    let h = match VxlanHeader::new_checked(pl) {
        Ok(h) => h,
        Err(e) => return Opened::Failed(e),
    };
    let kind = EncapKind::Vxlan {
        src_port: u16::from_be_bytes([udp[0], udp[1]]),
        dst_port: u16::from_be_bytes([udp[2], udp[3]]),
        flags: h.flags(),
        vni: h.vni(),
    };
    Opened::Inner {
        data: h.payload(),
        ethernet: true,
        kind,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{DecodeConfig, FrameKind, LinkType, OtherKind, Undecodable, decode_frame};

    /// Raw IPv4 header for protocol `proto` around `payload`.
    fn ipv4(proto: u8, payload: &[u8]) -> Vec<u8> {
        let mut f = vec![
            0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, proto, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
        ];
        let len = (20 + payload.len()) as u16;
        f[2..4].copy_from_slice(&len.to_be_bytes());
        f.extend_from_slice(payload);
        f
    }

    /// IP-in-GRE nested `n` times around a UDP datagram to port 9.
    fn nested(n: usize) -> Vec<u8> {
        let mut f = ipv4(17, &[0, 1, 0, 9, 0, 8, 0, 0]);
        for _ in 0..n {
            let mut g = vec![0, 0, 0x08, 0x00];
            g.extend_from_slice(&f);
            f = ipv4(47, &g);
        }
        f
    }

    #[test]
    fn nesting_stops_at_max_encap() {
        let cfg = DecodeConfig::default();
        let f = nested(MAX_ENCAP);
        let fr = decode_frame(LinkType::RAW, &f, f.len() as u32, &cfg);
        assert_eq!(fr.encap.layers().count(), MAX_ENCAP);
        assert!(matches!(
            fr.kind,
            FrameKind::Other(OtherKind::Udp { dst_port: 9, .. })
        ));
        // One more level: the outer three are opened, the fourth GRE is shown as IP 47.
        let f = nested(MAX_ENCAP + 1);
        let fr = decode_frame(LinkType::RAW, &f, f.len() as u32, &cfg);
        assert_eq!(fr.encap.layers().count(), MAX_ENCAP);
        assert!(matches!(
            fr.kind,
            FrameKind::Other(OtherKind::Ip { protocol: 47 })
        ));
        // Deep hostile nesting neither overflows the stack nor panics.
        let f = nested(2000);
        let fr = decode_frame(LinkType::RAW, &f, f.len() as u32, &cfg);
        assert_eq!(fr.encap.layers().count(), MAX_ENCAP);
    }

    #[test]
    fn bad_tunnel_headers_are_undecodable_frames() {
        let cfg = DecodeConfig::default();
        // GRE 0x88BE with S but only 2 bytes of ERSPAN header.
        let f = ipv4(47, &[0x10, 0, 0x88, 0xbe, 0, 0, 0, 1, 0x10, 0x05]);
        let fr = decode_frame(LinkType::RAW, &f, f.len() as u32, &cfg);
        let FrameKind::Other(OtherKind::Undecodable(u)) = fr.kind else {
            panic!("{fr:?}")
        };
        assert!(u.is_truncation());
        assert_eq!(u.to_string(), "ERSPAN II header needs 8 bytes, 2 captured");
        assert_eq!(fr.net().unwrap().src, Address::V4([10, 0, 0, 1]));
        // ERSPAN III frame type 5.
        let mut e3 = vec![0x10, 0, 0x22, 0xeb, 0, 0, 0, 1];
        e3.extend_from_slice(&[0x20, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0x14, 0]);
        let f = ipv4(47, &e3);
        let fr = decode_frame(LinkType::RAW, &f, f.len() as u32, &cfg);
        assert!(matches!(
            fr.kind,
            FrameKind::Other(OtherKind::Undecodable(Undecodable::Encap(
                EncapError::ErspanFrameType(5)
            )))
        ));
        // GRE with another protocol is an IP frame, not an error.
        let f = ipv4(47, &[0, 0, 0x88, 0x0b, 1, 2]);
        let fr = decode_frame(LinkType::RAW, &f, f.len() as u32, &cfg);
        assert!(matches!(
            fr.kind,
            FrameKind::Other(OtherKind::Ip { protocol: 47 })
        ));
        assert!(fr.encap.is_empty());
    }

    #[test]
    fn session_is_the_innermost() {
        let gre = GreInfo {
            protocol: GRE_ERSPAN_II,
            checksum: None,
            key: None,
            seq: Some(1),
        };
        let e2 = Erspan2 {
            vlan: 0,
            cos: 0,
            encap_type: 0,
            truncated: false,
            session: 12,
            index: 0,
        };
        let a = Address::V4([1, 1, 1, 1]);
        let mut e = Encap::default();
        assert_eq!(e.session(), None);
        e.push_outer(
            EncapLayer {
                src: a,
                dst: a,
                kind: EncapKind::Erspan2(gre, e2),
            },
            LinkSummary::default(),
        );
        e.push_outer(
            EncapLayer {
                src: a,
                dst: a,
                kind: EncapKind::Vxlan {
                    src_port: 1,
                    dst_port: 4789,
                    flags: 8,
                    vni: 99,
                },
            },
            LinkSummary::default(),
        );
        assert_eq!(
            e.layers().map(|l| l.kind.name()).collect::<Vec<_>>(),
            ["vxlan", "erspan2"]
        );
        assert_eq!(e.session(), Some(12));
    }
}
