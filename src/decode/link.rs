//! Link and network layers: from a libpcap link type down to the IBA transport.
//!
//! Ethernet with any number of 802.1Q/802.1ad tags, VLANs and IP through `etherparse`; Linux
//! cooked v1/v2, BSD loopback, raw IP, native InfiniBand (LINKTYPE_INFINIBAND, starting at the
//! LRH) and ERF records (type 2 Ethernet, type 21 InfiniBand, as ibdump writes them). Header
//! layouts: libpcap `pcap/dlt.h` and <https://www.tcpdump.org/linktypes.html>; ERF: the Endace
//! ERF format as summarised in spec/roce.md §7.

use etherparse::{
    Ethernet2Slice, IpNumber, Ipv4HeaderSlice, Ipv6HeaderSlice, LaxIpv4Slice, LaxIpv6Slice,
    SingleVlanSlice, UdpHeaderSlice, err,
};

use super::encap::{self, Encap, EncapError, EncapKind, EncapLayer, MAX_ENCAP, Opened, Outer};
use super::erf::{self, ErfHeader};
use super::headers::{Grh, Lrh};
use super::icrc;
use super::transport::{self, IcrcSpot};
use super::{
    Address, DecodeConfig, Ecn, Frame, FrameKind, Framing, Icrc, IcrcStatus, LinkSummary, LinkType,
    Malformed, NetSummary, OtherKind, RocePacket, RoceVersion, UncheckedReason, Undecodable,
};

/// Per-frame decoding context.
#[derive(Clone, Copy)]
pub(super) struct Cx<'c> {
    pub(super) cfg: &'c DecodeConfig,
    /// Bytes of the frame the snap length cut off (wire length − captured length). A length
    /// field that claims more than the captured bytes plus these lies: the frame is malformed,
    /// not truncated.
    pub(super) cut: usize,
    /// Tunnel layers opened so far ([`super::encap`]).
    pub(super) depth: usize,
}

impl Cx<'_> {
    /// The frame ends inside `part`'s header; see [`ends_inside`].
    fn ends_inside(&self, part: &'static str) -> Undecodable {
        ends_inside(part, self.cut)
    }
}

/// The frame ends inside `part`'s header: truncated when the capture cut `cut` > 0 bytes off
/// (or an unknown number, inside a mirror), malformed ([`Undecodable::Short`]) when nothing
/// was cut and the frame was that short on the wire.
fn ends_inside(part: &'static str, cut: usize) -> Undecodable {
    if cut == 0 {
        Undecodable::Short(part)
    } else {
        Undecodable::Truncated(part)
    }
}

/// The length field claims `declared` bytes where the frame had only `captured + cut` on the
/// wire.
fn exceeds_wire(declared: usize, captured: usize, cut: usize) -> Option<Malformed> {
    (declared > captured.saturating_add(cut)).then_some(Malformed::LengthExceedsFrame {
        declared,
        wire: captured.saturating_add(cut),
    })
}

const ETH_IPV4: u16 = 0x0800;
const ETH_IPV6: u16 = 0x86dd;
const ETH_ARP: u16 = 0x0806;
const ETH_VLAN: u16 = 0x8100;
const ETH_QINQ: u16 = 0x88a8;
const ETH_QINQ_OLD: u16 = 0x9100;

pub(super) fn other<'a>(link: LinkSummary, net: Option<NetSummary>, kind: OtherKind) -> Frame<'a> {
    Frame {
        link,
        net,
        kind: FrameKind::Other(kind),
        encap: Encap::default(),
    }
}

fn undecodable<'a>(link: LinkSummary, why: Undecodable) -> Frame<'a> {
    other(link, None, OtherKind::Undecodable(why))
}

/// Decode a frame of link type `lt`; see [`super::decode_frame`].
pub fn decode<'a>(lt: LinkType, data: &'a [u8], orig_len: usize, cfg: &DecodeConfig) -> Frame<'a> {
    let link = LinkSummary::default();
    let cx = Cx {
        cfg,
        cut: orig_len.saturating_sub(data.len()),
        depth: 0,
    };
    let Some(info) = lt.info() else {
        return undecodable(link, Undecodable::LinkType);
    };
    match info.framing {
        Framing::Ethernet => ethernet(data, cx),
        Framing::LinuxSll => {
            // Linux cooked v1: protocol (Ethertype) at offset 14 of a 16-byte header.
            if data.len() < 16 {
                return undecodable(link, cx.ends_inside("Linux cooked"));
            }
            tagged(
                u16::from_be_bytes([data[14], data[15]]),
                &data[16..],
                link,
                cx,
            )
        }
        Framing::LinuxSll2 => {
            // Linux cooked v2: protocol at offset 0 of a 20-byte header.
            if data.len() < 20 {
                return undecodable(link, cx.ends_inside("Linux cooked v2"));
            }
            tagged(
                u16::from_be_bytes([data[0], data[1]]),
                &data[20..],
                link,
                cx,
            )
        }
        Framing::Loopback => loopback(lt, data, cx),
        Framing::RawIp => raw_ip(data, link, cx),
        Framing::Infiniband => infiniband(data, cx.cut, link),
        Framing::Erf => erf(data, cx),
    }
}

/// Ethernet II, then every VLAN tag there is.
pub(super) fn ethernet<'a>(data: &'a [u8], cx: Cx<'_>) -> Frame<'a> {
    let mut link = LinkSummary::default();
    let Ok(eth) = Ethernet2Slice::from_slice_without_fcs(data) else {
        return undecodable(link, cx.ends_inside("Ethernet"));
    };
    link.mac = Some((eth.destination(), eth.source()));
    tagged(eth.ether_type().0, eth.payload_slice(), link, cx)
}

/// Every 802.1Q / 802.1ad tag there is (`et` is the Ethertype before `rest`), then the
/// Ethertype they carry. Ethernet frames and Linux cooked ones (libpcap puts a stripped tag
/// back into a cooked frame: protocol 0x8100, then the tag) both have them.
fn tagged<'a>(mut et: u16, mut rest: &'a [u8], mut link: LinkSummary, cx: Cx<'_>) -> Frame<'a> {
    while matches!(et, ETH_VLAN | ETH_QINQ | ETH_QINQ_OLD) {
        let Ok(tag) = SingleVlanSlice::from_slice(rest) else {
            return undecodable(link, cx.ends_inside("802.1Q"));
        };
        let vid = tag.vlan_identifier().value();
        let tpid_dei = Some((et, tag.drop_eligible_indicator()));
        if link.vlan_tags == 0 {
            link.vlan_id = Some(vid);
            link.vlan_pcp = Some(tag.priority_code_point().value());
            link.vlan_tpid_dei = tpid_dei;
        } else {
            link.inner_vlan_id = Some(vid);
            link.inner_vlan_pcp = Some(tag.priority_code_point().value());
            link.inner_vlan_tpid_dei = tpid_dei;
        }
        link.vlan_tags = link.vlan_tags.saturating_add(1);
        et = tag.ether_type().0;
        rest = tag.payload_slice();
    }
    ethertype(et, rest, link, cx)
}

fn ethertype<'a>(et: u16, rest: &'a [u8], mut link: LinkSummary, cx: Cx<'_>) -> Frame<'a> {
    link.ethertype = Some(et);
    match et {
        ETH_IPV4 => ipv4(rest, link, cx),
        ETH_IPV6 => ipv6(rest, link, cx),
        super::ROCEV1_ETHERTYPE => rocev1(rest, link, cx.cut),
        ETH_ARP => other(link, None, OtherKind::Arp),
        _ => other(link, None, OtherKind::EtherType(et)),
    }
}

fn loopback<'a>(lt: LinkType, data: &'a [u8], cx: Cx<'_>) -> Frame<'a> {
    let link = LinkSummary::default();
    if data.len() < 4 {
        return undecodable(link, cx.ends_inside("loopback"));
    }
    let b = [data[0], data[1], data[2], data[3]];
    // LINKTYPE_NULL is in the writer's byte order, LINKTYPE_LOOP in network order.
    let af = if lt == LinkType::LOOP {
        u32::from_be_bytes(b)
    } else {
        let le = u32::from_le_bytes(b);
        if le <= 0xff {
            le
        } else {
            u32::from_be_bytes(b)
        }
    };
    match af {
        2 => ipv4(&data[4..], link, cx),
        // AF_INET6 differs by OS: Linux 10, NetBSD/OpenBSD 24, FreeBSD 28, Darwin 30.
        10 | 24 | 28 | 30 => ipv6(&data[4..], link, cx),
        _ => undecodable(link, Undecodable::Invalid("loopback address family")),
    }
}

pub(super) fn raw_ip<'a>(data: &'a [u8], link: LinkSummary, cx: Cx<'_>) -> Frame<'a> {
    match data.first().map(|b| b >> 4) {
        Some(4) => ipv4(data, link, cx),
        Some(6) => ipv6(data, link, cx),
        Some(_) => undecodable(link, Undecodable::Invalid("IP version")),
        None => undecodable(link, cx.ends_inside("IP")),
    }
}

fn ip_error(e: &err::ipv4::HeaderSliceError, what: &'static str, cx: &Cx<'_>) -> Undecodable {
    match e {
        err::ipv4::HeaderSliceError::Len(_) => cx.ends_inside(what),
        err::ipv4::HeaderSliceError::Content(_) => Undecodable::Invalid(what),
    }
}

/// Addresses and variant fields of the IP header that carried a UDP datagram.
struct IpInfo<'a> {
    src: Address,
    dst: Address,
    tos: u8,
    hop_limit: u8,
    /// The whole IP header (IPv4 with options; IPv6 fixed header and extensions).
    hdr: &'a [u8],
    v6: bool,
}

fn ipv4<'a>(data: &'a [u8], link: LinkSummary, cx: Cx<'_>) -> Frame<'a> {
    let (ip, _auth_err) = match LaxIpv4Slice::from_slice(data) {
        Ok(v) => v,
        Err(e) => return undecodable(link, ip_error(&e, "IPv4", &cx)),
    };
    let h: Ipv4HeaderSlice<'_> = ip.header();
    let info = IpInfo {
        src: Address::V4(h.source()),
        dst: Address::V4(h.destination()),
        tos: (h.dcp().value() << 2) | h.ecn().value(),
        hop_limit: h.ttl(),
        hdr: &data[..h.slice().len()],
        v6: false,
    };
    let pl = ip.payload();
    // The IP payload length the header declares (fixed header and options excluded).
    let declared = (h.total_len() as usize).saturating_sub(h.slice().len());
    transport_proto(
        pl.ip_number,
        pl.fragmented,
        pl.payload,
        declared,
        info,
        link,
        cx,
    )
}

fn ipv6<'a>(data: &'a [u8], link: LinkSummary, cx: Cx<'_>) -> Frame<'a> {
    let ip = match LaxIpv6Slice::from_slice(data) {
        Ok((ip, _)) => ip,
        Err(err::ipv6::HeaderSliceError::Len(_)) => {
            return undecodable(link, cx.ends_inside("IPv6"));
        }
        Err(err::ipv6::HeaderSliceError::Content(_)) => {
            return undecodable(link, Undecodable::Invalid("IPv6"));
        }
    };
    let h: Ipv6HeaderSlice<'_> = ip.header();
    let pl = ip.payload();
    // The fixed header and the extension headers: where the payload starts. Not what precedes
    // the payload's end: the payload stops at the payload length, before any Ethernet trailer,
    // which a subtraction from the frame's length counted as header (a RoCEv2 packet with a
    // trailer was then "malformed", its ICRC computed over the trailer).
    let hdr_len = pl.payload.as_ptr() as usize - data.as_ptr() as usize;
    let info = IpInfo {
        src: Address::V6(h.source()),
        dst: Address::V6(h.destination()),
        tos: h.traffic_class(),
        hop_limit: h.hop_limit(),
        hdr: &data[..hdr_len],
        v6: true,
    };
    let declared = (h.payload_length() as usize).saturating_sub(hdr_len - 40);
    transport_proto(
        pl.ip_number,
        pl.fragmented,
        pl.payload,
        declared,
        info,
        link,
        cx,
    )
}

fn transport_proto<'a>(
    proto: IpNumber,
    fragmented: bool,
    payload: &'a [u8],
    declared: usize,
    ip: IpInfo<'a>,
    link: LinkSummary,
    cx: Cx<'_>,
) -> Frame<'a> {
    // Made only where used: the RoCE path makes its own from the packet. Made here for every
    // frame, its copy of the addresses just written by the caller stalled on store forwarding
    // (~3 % of a one-thread `read -q`).
    let net = || {
        Some(NetSummary {
            src: ip.src,
            dst: ip.dst,
        })
    };
    if fragmented {
        return other(link, net(), OtherKind::Ip { protocol: proto.0 });
    }
    match proto {
        // An IPv4 total length that leaves no byte for the transport: a plain IP frame, as
        // tshark shows it (it starts the UDP dissector on a non-empty payload only; an IPv6
        // payload length of 0 is a malformed packet to it).
        IpNumber::UDP if declared == 0 && !ip.v6 => {
            other(link, net(), OtherKind::Ip { protocol: proto.0 })
        }
        IpNumber::UDP => {
            let Ok(udp) = UdpHeaderSlice::from_slice(payload) else {
                // Cut by the snap length, or an IP length that leaves no room for the 8-byte
                // UDP header (a malformed packet, not a cut one); the IP addresses are known.
                let why = if declared < 8 {
                    Undecodable::Invalid("UDP")
                } else {
                    cx.ends_inside("UDP")
                };
                return other(link, net(), OtherKind::Undecodable(why));
            };
            let (sport, dport) = (udp.source_port(), udp.destination_port());
            if !cx.cfg.is_roce_port(dport) && cx.cfg.is_vxlan_port(dport) && cx.depth < MAX_ENCAP {
                let udp_len = (udp.length() as usize).clamp(8, payload.len());
                let outer = Outer {
                    src: ip.src,
                    dst: ip.dst,
                    missing: (udp.length() as usize).saturating_sub(payload.len()),
                };
                return tunnel(encap::vxlan(&payload[..udp_len]), &outer, link, cx);
            }
            if !cx.cfg.is_roce_port(dport) {
                return other(
                    link,
                    net(),
                    OtherKind::Udp {
                        src_port: sport,
                        dst_port: dport,
                    },
                );
            }
            rocev2(payload, declared, ip, link, cx.cut)
        }
        IpNumber::TCP => {
            if payload.len() < 4 {
                return other(link, net(), OtherKind::Ip { protocol: 6 });
            }
            other(
                link,
                net(),
                OtherKind::Tcp {
                    src_port: u16::from_be_bytes([payload[0], payload[1]]),
                    dst_port: u16::from_be_bytes([payload[2], payload[3]]),
                },
            )
        }
        IpNumber::GRE if cx.depth < MAX_ENCAP => {
            let outer = Outer {
                src: ip.src,
                dst: ip.dst,
                missing: declared.saturating_sub(payload.len()),
            };
            match encap::gre(payload) {
                Some(opened) => tunnel(opened, &outer, link, cx),
                None => other(link, net(), OtherKind::Ip { protocol: 47 }),
            }
        }
        p => other(link, net(), OtherKind::Ip { protocol: p.0 }),
    }
}

fn rocev2<'a>(
    udp: &'a [u8],
    ip_payload_len: usize,
    ip: IpInfo<'a>,
    link: LinkSummary,
    cut: usize,
) -> Frame<'a> {
    let udp_len = u16::from_be_bytes([udp[4], udp[5]]);
    let mut pkt = RocePacket {
        version: RoceVersion::V2,
        src: ip.src,
        dst: ip.dst,
        ecn: Some(Ecn::from_tos(ip.tos)),
        dscp: Some(ip.tos >> 2),
        hop_limit: Some(ip.hop_limit),
        udp_src_port: Some(u16::from_be_bytes([udp[0], udp[1]])),
        udp_dst_port: Some(u16::from_be_bytes([udp[2], udp[3]])),
        lrh: None,
        grh: None,
        bth: None,
        ext: Default::default(),
        hdr_len: 0,
        payload: &[],
        payload_len: 0,
        icrc: Icrc::unchecked(UncheckedReason::Malformed, None),
        malformed: None,
        truncated: false,
    };
    if (udp_len as usize) < 8 || udp_len as usize > ip_payload_len {
        // The UDP length lies; the IP payload length bounds the headers instead (tshark: "Bad
        // length value", and the BTH decoded from the IP payload).
        let m = Malformed::BadUdpLength {
            udp_len,
            ip_payload: ip_payload_len,
        };
        let declared = ip_payload_len.saturating_sub(8);
        length_lies(&udp[8..], declared, cut, m, &mut pkt);
        return roce_frame(link, pkt);
    }
    if let Some(m) = exceeds_wire(ip_payload_len, udp.len(), cut) {
        // The IP total length (and a UDP length within it) claims bytes that were never on the
        // wire: not a snap-length cut.
        length_lies(&udp[8..], udp_len as usize - 8, cut, m, &mut pkt);
        return roce_frame(link, pkt);
    }
    let spot = transport::parse(&udp[8..], udp_len as usize - 8, &mut pkt);
    pkt.icrc = match spot.offset {
        Some(off) if !pkt.truncated => {
            let covered = &udp[8..8 + off];
            let expected = if ip.v6 {
                icrc::rocev2_ipv6(ip.hdr, &udp[..8], covered)
            } else {
                icrc::rocev2_ipv4(ip.hdr, &udp[..8], covered)
            };
            verdict(spot.wire, expected)
        }
        _ => unchecked(&pkt, spot),
    };
    roce_frame(link, pkt)
}

/// A packet whose length field lies (`m`: it claims bytes the frame never had on the wire,
/// [`exceeds_wire`], or a UDP length that does not fit the IP payload): malformed, but the
/// headers it holds are decoded all the same, as Wireshark decodes them, so that its QP, PSN
/// and extended headers are shown. `transport` starts at the BTH; `declared` is the length
/// from there that bounds the headers. Its payload is the bytes present (`payload_len` too),
/// its ICRC is unchecked, and it is truncated only if the capture cut bytes of it too.
fn length_lies<'a>(
    transport: &'a [u8],
    declared: usize,
    cut: usize,
    m: Malformed,
    pkt: &mut RocePacket<'a>,
) {
    transport::parse(transport, declared, pkt);
    pkt.malformed = Some(m);
    pkt.truncated = cut > 0 && transport.len() < declared;
    pkt.payload_len = pkt.payload.len() as u32;
    pkt.icrc = Icrc::unchecked(UncheckedReason::Malformed, None);
}

fn verdict(wire: Option<u32>, expected: u32) -> Icrc {
    let status = if wire == Some(expected) {
        IcrcStatus::Good
    } else {
        IcrcStatus::Bad
    };
    Icrc {
        status,
        value: wire,
        expected: Some(expected),
    }
}

/// The ICRC of a packet whose transport was parsed but whose ICRC is not checked: why not.
fn unchecked(pkt: &RocePacket<'_>, spot: IcrcSpot) -> Icrc {
    let reason = if pkt.malformed.is_some() {
        UncheckedReason::Malformed
    } else if pkt.truncated {
        UncheckedReason::Truncated
    } else {
        UncheckedReason::NoRule
    };
    Icrc::unchecked(reason, spot.wire)
}

/// A RoCE frame; its addresses are the packet's own ([`Frame::net`]), not copied beside it
/// (the copy, read back at once from a differently sized store, stalled the CPU: 2–3 % of
/// `read -q`).
fn roce_frame(link: LinkSummary, pkt: RocePacket<'_>) -> Frame<'_> {
    Frame {
        link,
        net: None,
        kind: FrameKind::Roce(pkt),
        encap: Encap::default(),
    }
}

/// A packet of `version` between `src` and `dst` with nothing decoded yet.
pub(super) fn empty_packet<'a>(version: RoceVersion, src: Address, dst: Address) -> RocePacket<'a> {
    RocePacket {
        version,
        src,
        dst,
        ecn: None,
        dscp: None,
        hop_limit: None,
        udp_src_port: None,
        udp_dst_port: None,
        lrh: None,
        grh: None,
        bth: None,
        ext: Default::default(),
        hdr_len: 0,
        payload: &[],
        payload_len: 0,
        icrc: Icrc::unchecked(UncheckedReason::Malformed, None),
        malformed: None,
        truncated: false,
    }
}

/// RoCEv1: GRH then BTH. GRH PayLen counts the bytes after the GRH up to and including the ICRC.
fn rocev1(data: &[u8], link: LinkSummary, cut: usize) -> Frame<'_> {
    if data.len() < Grh::LEN {
        return undecodable(link, ends_inside("GRH", cut));
    }
    let grh = Grh::parse_unchecked(data);
    let mut pkt = empty_packet(
        RoceVersion::V1,
        Address::Gid(grh.sgid),
        Address::Gid(grh.dgid),
    );
    pkt.grh = Some(grh);
    pkt.hop_limit = Some(grh.hop_limit);
    if grh.next_hdr != Grh::NEXT_HDR_BTH {
        pkt.malformed = Some(Malformed::GrhNotBth(grh.next_hdr));
        return roce_frame(link, pkt);
    }
    if let Some(m) = exceeds_wire(grh.pay_len as usize, data.len() - Grh::LEN, cut) {
        length_lies(&data[Grh::LEN..], grh.pay_len as usize, cut, m, &mut pkt);
        return roce_frame(link, pkt);
    }
    let spot = transport::parse(&data[Grh::LEN..], grh.pay_len as usize, &mut pkt);
    pkt.icrc = match spot.offset {
        Some(off) if !pkt.truncated => {
            let covered = &data[Grh::LEN..Grh::LEN + off];
            verdict(spot.wire, icrc::with_grh(&data[..Grh::LEN], covered))
        }
        _ => unchecked(&pkt, spot),
    };
    roce_frame(link, pkt)
}

/// Native InfiniBand starting at the LRH; PktLen (4-byte words) covers LRH through ICRC, and a
/// 2-byte VCRC follows.
fn infiniband(data: &[u8], cut: usize, link: LinkSummary) -> Frame<'_> {
    if data.len() < Lrh::LEN {
        return undecodable(link, ends_inside("LRH", cut));
    }
    let lrh = Lrh::parse_unchecked(data);
    let mut pkt = empty_packet(
        RoceVersion::Ib,
        Address::Lid(lrh.slid),
        Address::Lid(lrh.dlid),
    );
    pkt.lrh = Some(lrh);
    let pkt_bytes = lrh.pkt_len as usize * 4;
    match lrh.lnh {
        0 | 1 => {
            return other(link, None, OtherKind::IbNonIba);
        }
        _ => {}
    }
    let mut off = Lrh::LEN;
    if lrh.lnh == 3 {
        if data.len() < Lrh::LEN + Grh::LEN {
            pkt.truncated = true;
            return roce_frame(link, pkt);
        }
        let grh = Grh::parse_unchecked(&data[Lrh::LEN..]);
        pkt.grh = Some(grh);
        pkt.src = Address::Gid(grh.sgid);
        pkt.dst = Address::Gid(grh.dgid);
        pkt.hop_limit = Some(grh.hop_limit);
        off += Grh::LEN;
        if grh.next_hdr != Grh::NEXT_HDR_BTH {
            pkt.malformed = Some(Malformed::GrhNotBth(grh.next_hdr));
        }
    }
    if pkt.malformed.is_some() {
        return roce_frame(link, pkt);
    }
    if pkt_bytes < off {
        pkt.malformed = Some(Malformed::BadLrh("packet length shorter than its headers"));
        pkt.truncated = cut > 0;
        return roce_frame(link, pkt);
    }
    if let Some(m) = exceeds_wire(pkt_bytes, data.len(), cut) {
        length_lies(&data[off..], pkt_bytes - off, cut, m, &mut pkt);
        return roce_frame(link, pkt);
    }
    let spot = transport::parse(&data[off..], pkt_bytes - off, &mut pkt);
    pkt.icrc = match spot.offset {
        Some(t_off) if !pkt.truncated => {
            let covered = &data[off..off + t_off];
            let expected = if lrh.lnh == 3 {
                icrc::with_grh(&data[Lrh::LEN..off], covered)
            } else {
                icrc::ib_local(&data[..Lrh::LEN], covered)
            };
            verdict(spot.wire, expected)
        }
        _ => unchecked(&pkt, spot),
    };
    roce_frame(link, pkt)
}

/// ERF record ([`ErfHeader`]): for Ethernet (type 2) the frame after the pad, for InfiniBand
/// (type 21) the LRH. The bytes cut off are those of `wlen` not captured after the header (the
/// pcap record's lengths count the header; the record's time and lengths are the ERF
/// header's, `source::erf`).
fn erf<'a>(data: &'a [u8], cx: Cx<'_>) -> Frame<'a> {
    let link = LinkSummary::default();
    let h = match ErfHeader::parse(data) {
        Ok(h) => h,
        Err(part) => return undecodable(link, cx.ends_inside(part)),
    };
    let frame = &data[h.frame_at..];
    let cut = usize::from(h.wlen).saturating_sub(frame.len());
    match h.ty {
        erf::TYPE_ETHERNET => ethernet(frame, Cx { cut, ..cx }),
        erf::TYPE_INFINIBAND => infiniband(frame, cut, link),
        t => other(link, None, OtherKind::ErfType(t)),
    }
}

/// The frame a tunnel (`encap::gre`, `encap::vxlan`) opened, decoded, with the tunnel recorded
/// around it; a tunnel header that could not be read is shown as undecodable.
fn tunnel<'a>(opened: Opened<'a>, outer: &Outer, link: LinkSummary, cx: Cx<'_>) -> Frame<'a> {
    match opened {
        Opened::Inner {
            data,
            ethernet,
            kind,
        } => inner(data, ethernet, kind, outer, link, cx),
        Opened::Failed(e) => failed(link, outer, e),
    }
}

/// A tunnel header that could not be decoded: shown and counted as undecodable.
fn failed<'a>(link: LinkSummary, outer: &Outer, e: EncapError) -> Frame<'a> {
    let net = NetSummary {
        src: outer.src,
        dst: outer.dst,
    };
    other(
        link,
        Some(net),
        OtherKind::Undecodable(Undecodable::Encap(e)),
    )
}

/// Decode the inner frame of a tunnel and record the tunnel around it.
fn inner<'a>(
    data: &'a [u8],
    is_ethernet: bool,
    kind: EncapKind,
    outer: &Outer,
    link: LinkSummary,
    cx: Cx<'_>,
) -> Frame<'a> {
    let exact =
        matches!(kind, EncapKind::Erspan2(..) | EncapKind::Erspan3(..)) && !kind.truncated();
    let icx = Cx {
        cfg: cx.cfg,
        cut: if exact { outer.missing } else { usize::MAX },
        depth: cx.depth + 1,
    };
    let mut f = if is_ethernet {
        ethernet(data, icx)
    } else {
        raw_ip(data, LinkSummary::default(), icx)
    };
    let layer = EncapLayer {
        src: outer.src,
        dst: outer.dst,
        kind,
    };
    f.encap.push_outer(layer, link);
    f
}
