//! Pure decoding of captured frames into RoCE packets: no I/O, no heap allocation per packet.
//!
//! Pipeline: link layer ([`link`]) → network layer (IPv4/IPv6 + UDP through `etherparse`, the
//! RoCEv1 GRH, or the native-IB LRH) → IBA transport ([`transport`]: BTH and the extended headers
//! its opcode implies) → ICRC ([`icrc`]). The result is a [`Frame`] that borrows the captured
//! bytes; analysis and printers consume it without re-parsing.

pub mod encap;
pub mod erf;
pub mod headers;
pub mod icrc;
pub mod link;
pub mod opcode;
pub mod transport;

/// Helpers for unit tests across the crate.
#[cfg(test)]
pub(crate) mod test_util {
    /// Bytes from hex text; whitespace is ignored (for vectors written as in the spec).
    pub(crate) fn hex(s: &str) -> Vec<u8> {
        let s: String = s.chars().filter(|c| c.is_ascii_hexdigit()).collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }
}

use std::fmt;
use std::net::Ipv6Addr;

pub use encap::{Encap, EncapError, EncapKind, EncapLayer};
pub use headers::*;
pub use opcode::{ExtKind, Opcode, Operation, Position, Transport};

/// The IANA-assigned RoCEv2 UDP destination port (IBTA Annex A17.2).
pub const ROCEV2_PORT: u16 = 4791;

/// The RoCEv1 Ethertype (IBTA Annex A16).
pub const ROCEV1_ETHERTYPE: u16 = 0x8915;

/// Decoder settings that do not change per packet.
#[derive(Clone, Debug)]
pub struct DecodeConfig {
    /// UDP destination ports decoded as RoCEv2 (always includes 4791). Small and scanned
    /// linearly: users give one or two extra ports.
    pub roce_ports: Vec<u16>,
    /// UDP destination ports decapsulated as VXLAN (RFC 7348): 4789 unless `--vxlan-port`
    /// replaces it; empty turns VXLAN decapsulation off.
    pub vxlan_ports: Vec<u16>,
}

impl Default for DecodeConfig {
    fn default() -> Self {
        DecodeConfig {
            roce_ports: vec![ROCEV2_PORT],
            vxlan_ports: vec![encap::VXLAN_PORT],
        }
    }
}

impl DecodeConfig {
    /// Config with 4791 plus `extra` ports.
    pub fn with_ports(extra: &[u16]) -> Self {
        let mut roce_ports = vec![ROCEV2_PORT];
        for p in extra {
            if !roce_ports.contains(p) {
                roce_ports.push(*p);
            }
        }
        DecodeConfig {
            roce_ports,
            ..DecodeConfig::default()
        }
    }

    /// This config with `ports` as the VXLAN ports (4789 when empty).
    pub fn with_vxlan_ports(mut self, ports: &[u16]) -> Self {
        if !ports.is_empty() {
            self.vxlan_ports = ports.to_vec();
        }
        self
    }

    /// Whether `port` is a VXLAN UDP destination port under this config.
    #[inline]
    #[allow(clippy::manual_contains)] // see is_roce_port
    pub fn is_vxlan_port(&self, port: u16) -> bool {
        self.vxlan_ports.iter().any(|&p| p == port)
    }

    /// Whether `port` is a RoCEv2 UDP destination port under this config.
    #[inline]
    // A loop inlined over the one or few ports: `contains` on `u16`s is a call out of line, 17
    // instructions a UDP frame (callgrind, `read -q` on the 200k-packet trace).
    #[allow(clippy::manual_contains)]
    pub fn is_roce_port(&self, port: u16) -> bool {
        self.roce_ports.iter().any(|&p| p == port)
    }
}

/// A libpcap link-layer header type (LINKTYPE_* value, <https://www.tcpdump.org/linktypes.html>).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LinkType(pub u32);

impl LinkType {
    /// BSD loopback, 4-byte host-order AF header (LINKTYPE_NULL).
    pub const NULL: LinkType = LinkType(0);
    /// Ethernet II (LINKTYPE_ETHERNET).
    pub const ETHERNET: LinkType = LinkType(1);
    /// OpenBSD loopback, 4-byte network-order AF header (LINKTYPE_LOOP).
    pub const LOOP: LinkType = LinkType(108);
    /// Linux cooked capture v1, 16-byte header (LINKTYPE_LINUX_SLL).
    pub const LINUX_SLL: LinkType = LinkType(113);
    /// Endace ERF records (LINKTYPE_ERF); ibdump writes native IB as ERF type 21.
    pub const ERF: LinkType = LinkType(197);
    /// Raw IPv4 (LINKTYPE_IPV4).
    pub const IPV4: LinkType = LinkType(228);
    /// Raw IPv6 (LINKTYPE_IPV6).
    pub const IPV6: LinkType = LinkType(229);
    /// Raw InfiniBand starting at the LRH (LINKTYPE_INFINIBAND).
    pub const INFINIBAND: LinkType = LinkType(247);
    /// Linux cooked capture v2, 20-byte header (LINKTYPE_LINUX_SLL2).
    pub const LINUX_SLL2: LinkType = LinkType(276);
    /// Raw IP (LINKTYPE_RAW; libpcap's DLT_RAW, 12 on Linux, maps here: [`LinkType::from_dlt`]).
    pub const RAW: LinkType = LinkType(101);

    /// The link type (LINKTYPE_ value, as written in capture files) of a libpcap DLT_ value,
    /// which `pcap_datalink()` returns for files and interfaces alike. They are equal except
    /// DLT_RAW: libpcap reads LINKTYPE_RAW (101) as DLT_RAW, 12 on Linux (14 on OpenBSD, whose
    /// DLT 12 is DLT_LOOP; this tool targets Linux). Source: libpcap's `pcap-common.c`
    /// (`linktype_to_dlt`) and `pcap/dlt.h`.
    pub fn from_dlt(dlt: i32) -> LinkType {
        match dlt {
            12 => LinkType::RAW,
            d => LinkType(d as u32),
        }
    }

    /// The libpcap DLT_ value of this link type, for `pcap_open_dead()` (filters, savefiles):
    /// the inverse of [`LinkType::from_dlt`].
    pub fn to_dlt(self) -> i32 {
        match self {
            LinkType::RAW => 12,
            LinkType(l) => l as i32,
        }
    }

    /// The row of [`LINK_TYPES`] for this link type; `None` when the decoder does not handle it.
    #[inline]
    pub fn info(self) -> Option<&'static LinkTypeInfo> {
        LINK_TYPES.iter().find(|i| i.link_type == self)
    }

    /// Whether the decoder handles this link type (it has a row in [`LINK_TYPES`]).
    pub fn is_supported(self) -> bool {
        self.info().is_some()
    }

    /// libpcap's name for the link type, as `tcpdump -L` prints it (`unknown` for one without
    /// a row in [`LINK_TYPES`]).
    pub fn name(self) -> &'static str {
        self.info().map_or("unknown", |i| i.name)
    }
}

/// How the frames of a link type begin: which decoder of `decode::link` reads them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// Ethernet II (then every VLAN tag there is).
    Ethernet,
    /// Linux cooked capture v1: the protocol (Ethertype) at offset 14 of a 16-byte header.
    LinuxSll,
    /// Linux cooked capture v2: the protocol at offset 0 of a 20-byte header.
    LinuxSll2,
    /// A 4-byte address-family header (host order for NULL, network order for LOOP), then IP.
    Loopback,
    /// An IPv4 or IPv6 header first, told apart by its version nibble.
    RawIp,
    /// Native InfiniBand: the LRH first.
    Infiniband,
    /// Endace ERF records (ibdump writes native IB as ERF type 21).
    Erf,
}

/// One link type the decoder reads.
#[derive(Clone, Copy, Debug)]
pub struct LinkTypeInfo {
    /// Its LINKTYPE_ value.
    pub link_type: LinkType,
    /// libpcap's name (`pcap_datalink_val_to_name`, as `tcpdump -L` prints it).
    pub name: &'static str,
    /// How its frames begin.
    pub framing: Framing,
}

/// The link types the decoder reads, one row each: the only list of them (`is_supported`,
/// `name` and `decode::link`'s dispatch read it). Ethernet first: the lookup of each frame's
/// link type ends at the first row for almost every capture. Values and names:
/// <https://www.tcpdump.org/linktypes.html> and libpcap's `pcap/dlt.h`.
pub const LINK_TYPES: [LinkTypeInfo; 10] = {
    const fn row(link_type: LinkType, name: &'static str, framing: Framing) -> LinkTypeInfo {
        LinkTypeInfo {
            link_type,
            name,
            framing,
        }
    }
    [
        row(LinkType::ETHERNET, "EN10MB", Framing::Ethernet),
        row(LinkType::NULL, "NULL", Framing::Loopback),
        row(LinkType::RAW, "RAW", Framing::RawIp),
        row(LinkType::LOOP, "LOOP", Framing::Loopback),
        row(LinkType::LINUX_SLL, "LINUX_SLL", Framing::LinuxSll),
        row(LinkType::ERF, "ERF", Framing::Erf),
        row(LinkType::IPV4, "IPV4", Framing::RawIp),
        row(LinkType::IPV6, "IPV6", Framing::RawIp),
        row(LinkType::INFINIBAND, "INFINIBAND", Framing::Infiniband),
        row(LinkType::LINUX_SLL2, "LINUX_SLL2", Framing::LinuxSll2),
    ]
};

/// A network-layer endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Address {
    /// IPv4 address (RoCEv2 over IPv4).
    V4([u8; 4]),
    /// IPv6 address (RoCEv2 over IPv6).
    V6([u8; 16]),
    /// InfiniBand GID, 128 bits (RoCEv1 GRH or native IB with GRH).
    Gid([u8; 16]),
    /// InfiniBand local identifier, 16 bits (native IB without GRH).
    Lid(u16),
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Address::V4(a) => f.pad(dotted_quad(*a, &mut [0; 15])),
            Address::V6(a) | Address::Gid(a) => Ipv6Addr::from(*a).fmt(f),
            Address::Lid(l) => write!(f, "LID {l}"),
        }
    }
}

/// The dotted-decimal text of an IPv4 address (RFC 791 §3.2), at most 15 bytes, written into
/// `buf` by hand: `Ipv4Addr`'s `Display` goes through the formatting machinery once per octet
/// (about 1,500 instructions an address; the report of the 500k-frame mixed trace formats
/// 23,000 of them). [`Address`]'s `Display` and the packet printers' lines use it.
pub(crate) fn dotted_quad(a: [u8; 4], buf: &mut [u8; 15]) -> &str {
    let mut n = 0;
    for (i, &o) in a.iter().enumerate() {
        if i > 0 {
            buf[n] = b'.';
            n += 1;
        }
        if o >= 100 {
            buf[n] = b'0' + o / 100;
            n += 1;
        }
        if o >= 10 {
            buf[n] = b'0' + o / 10 % 10;
            n += 1;
        }
        buf[n] = b'0' + o % 10;
        n += 1;
    }
    // Digits and dots only: always UTF-8.
    std::str::from_utf8(&buf[..n]).unwrap_or_default()
}

/// IP ECN codepoint, the low 2 bits of IPv4 TOS / IPv6 Traffic Class (RFC 3168 §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ecn {
    /// `00`: not ECN-capable transport.
    NotEct,
    /// `01`: ECT(1).
    Ect1,
    /// `10`: ECT(0) (what RoCEv2 NICs send by default).
    Ect0,
    /// `11`: congestion experienced.
    Ce,
}

impl Ecn {
    /// From the 2 low bits of a TOS / traffic-class byte.
    pub fn from_tos(tos: u8) -> Ecn {
        match tos & 3 {
            0 => Ecn::NotEct,
            1 => Ecn::Ect1,
            2 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }

    /// Lower-case name used in JSON: `not-ect`, `ect0`, `ect1`, `ce`.
    pub fn name(self) -> &'static str {
        match self {
            Ecn::NotEct => "not-ect",
            Ecn::Ect1 => "ect1",
            Ecn::Ect0 => "ect0",
            Ecn::Ce => "ce",
        }
    }
}

/// Which encapsulation carried the IBA transport.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RoceVersion {
    /// RoCEv1: Ethertype 0x8915, GRH, BTH.
    V1,
    /// RoCEv2: IP, UDP to port 4791 (or a configured port), BTH.
    V2,
    /// Native InfiniBand: LRH [+ GRH], BTH.
    Ib,
}

impl RoceVersion {
    /// `"v1"`, `"v2"` or `"ib"`, as in JSON.
    pub fn name(self) -> &'static str {
        match self {
            RoceVersion::V1 => "v1",
            RoceVersion::V2 => "v2",
            RoceVersion::Ib => "ib",
        }
    }
}

/// Result of ICRC verification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IcrcStatus {
    /// The ICRC on the wire equals the one computed over the masked packet.
    Good,
    /// It does not.
    Bad,
    /// Not verifiable.
    Unchecked(UncheckedReason),
}

/// Why an ICRC could not be verified.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UncheckedReason {
    /// The frame was cut by the snap length before the ICRC.
    Truncated,
    /// The packet is malformed, so the ICRC's position is unknown.
    Malformed,
    /// No verification rule for this encapsulation.
    NoRule,
}

impl UncheckedReason {
    /// JSON / Parquet name: `truncated`, `malformed` or `no-rule`.
    pub fn name(self) -> &'static str {
        match self {
            UncheckedReason::Truncated => "truncated",
            UncheckedReason::Malformed => "malformed",
            UncheckedReason::NoRule => "no-rule",
        }
    }
}

/// ICRC trailer (4 bytes, transmitted least-significant byte first) and its verification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Icrc {
    /// Verification result.
    pub status: IcrcStatus,
    /// The value found on the wire (as a CRC-32 value, i.e. the 4 bytes read little-endian),
    /// when captured.
    pub value: Option<u32>,
    /// The value computed over the masked packet, when computed.
    pub expected: Option<u32>,
}

impl Icrc {
    /// An ICRC that was not checked.
    pub fn unchecked(reason: UncheckedReason, value: Option<u32>) -> Icrc {
        Icrc {
            status: IcrcStatus::Unchecked(reason),
            value,
            expected: None,
        }
    }

    /// `"good"`, `"bad"` or `"unchecked"`.
    pub fn status_name(&self) -> &'static str {
        match self.status {
            IcrcStatus::Good => "good",
            IcrcStatus::Bad => "bad",
            IcrcStatus::Unchecked(_) => "unchecked",
        }
    }
}

/// Why a packet that reached the RoCE decoder is not a plausible IBA packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Malformed {
    /// Fewer than 12 bytes after the UDP header / GRH / LRH.
    #[error("{len} bytes is too short for a BTH (12 bytes)")]
    ShortBth {
        /// Transport bytes available, per the length fields.
        len: usize,
    },
    /// BTH transport version other than 0.
    #[error("BTH TVer {0} (must be 0)")]
    BadTver(u8),
    /// Reserved opcode for its transport.
    #[error("reserved opcode 0x{0:02X}")]
    ReservedOpcode(u8),
    /// Length shorter than BTH + the opcode's extended headers + ICRC.
    #[error("{have} bytes is shorter than the {need} bytes its opcode's headers and ICRC need")]
    ShortForOpcode {
        /// Bytes required: headers + ICRC.
        need: usize,
        /// Bytes present per the length fields.
        have: usize,
    },
    /// Pad count larger than the payload before it.
    #[error("pad count {pad} is larger than the {payload}-byte payload")]
    PadExceedsPayload {
        /// BTH PadCnt.
        pad: u8,
        /// Payload bytes including pad.
        payload: usize,
    },
    /// An opcode without payload carries extra bytes.
    #[error("{extra} unexpected bytes after the headers of an opcode without payload")]
    UnexpectedPayload {
        /// Extra bytes.
        extra: usize,
    },
    /// UDP length field smaller than 8 or larger than the IP payload.
    #[error("UDP length {udp_len} does not fit the IP payload of {ip_payload} bytes")]
    BadUdpLength {
        /// UDP length field.
        udp_len: u16,
        /// IP payload length.
        ip_payload: usize,
    },
    /// The length field (IP total length, GRH PayLen or LRH PktLen) claims more bytes than the
    /// frame had on the wire; a snap-length cut is `truncated` instead.
    #[error("length field claims {declared} bytes but the frame had {wire} on the wire")]
    LengthExceedsFrame {
        /// Bytes claimed from the start of the length field's scope.
        declared: usize,
        /// Bytes the frame had there on the wire (captured + cut by the snap length).
        wire: usize,
    },
    /// GRH next header is not BTH, or its payload length does not fit.
    #[error("GRH next header 0x{0:02X} is not BTH (0x1B)")]
    GrhNotBth(u8),
    /// Bad LRH (LNH not IBA, or packet length too small).
    #[error("LRH: {0}")]
    BadLrh(&'static str),
}

/// A decoded RoCE / InfiniBand packet, borrowing the captured bytes.
#[derive(Clone, Copy, Debug)]
pub struct RocePacket<'a> {
    /// Encapsulation.
    pub version: RoceVersion,
    /// Source address (IP, GID or LID).
    pub src: Address,
    /// Destination address (IP, GID or LID).
    pub dst: Address,
    /// IP ECN codepoint; `None` for RoCEv1 and native IB, which have no IP header.
    pub ecn: Option<Ecn>,
    /// DSCP (6 bits) or GRH/IPv6 traffic class >> 2; `None` when there is no IP header.
    pub dscp: Option<u8>,
    /// IPv4 TTL / IPv6 or GRH hop limit.
    pub hop_limit: Option<u8>,
    /// UDP source port (RoCEv2 only).
    pub udp_src_port: Option<u16>,
    /// UDP destination port (RoCEv2 only).
    pub udp_dst_port: Option<u16>,
    /// LRH (native IB only).
    pub lrh: Option<Lrh>,
    /// GRH (RoCEv1, and native IB when LNH = 3).
    pub grh: Option<Grh>,
    /// BTH; `None` when fewer than 12 bytes were captured or present.
    pub bth: Option<Bth>,
    /// Extended headers that were present and captured.
    pub ext: ExtHeaders,
    /// Bytes of BTH + extended headers, per the opcode's layout.
    pub hdr_len: usize,
    /// Captured payload bytes (without pad and ICRC; may be shorter than `payload_len` when
    /// truncated).
    pub payload: &'a [u8],
    /// Payload length in bytes per the packet's length fields: after every transport header,
    /// without pad and ICRC.
    pub payload_len: u32,
    /// ICRC verification.
    pub icrc: Icrc,
    /// Set when the packet is not a plausible IBA packet.
    pub malformed: Option<Malformed>,
    /// Set when the snap length cut the frame before its end.
    pub truncated: bool,
}

/// A frame that is not RoCE, summarised for `--all` listings and counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OtherKind {
    /// UDP that is not to a RoCE port.
    Udp {
        /// Source port.
        src_port: u16,
        /// Destination port.
        dst_port: u16,
    },
    /// TCP.
    Tcp {
        /// Source port.
        src_port: u16,
        /// Destination port.
        dst_port: u16,
    },
    /// Another IP protocol.
    Ip {
        /// IP protocol / next header number.
        protocol: u8,
    },
    /// ARP.
    Arp,
    /// A non-IP Ethertype.
    EtherType(u16),
    /// Native IB that carries no BTH (LNH raw / IP).
    IbNonIba,
    /// ERF record of a type other than Ethernet or InfiniBand.
    ErfType(u8),
    /// A frame the link or network layer could not parse.
    Undecodable(Undecodable),
}

/// Why a frame's link or network layer could not be parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Undecodable {
    /// Captured bytes end inside a link-layer or IP header: the snap length (or a mirror) cut
    /// the frame there.
    #[error("captured bytes end inside the {0} header")]
    Truncated(&'static str),
    /// The frame ends inside a link-layer or IP header with none of its bytes cut off: it was
    /// that short on the wire (Wireshark: "Malformed Packet", not "Packet size limited during
    /// capture").
    #[error("the frame ends inside the {0} header on the wire")]
    Short(&'static str),
    /// A header field has an impossible value.
    #[error("invalid {0} header")]
    Invalid(&'static str),
    /// The link type is not supported.
    #[error("unsupported link type")]
    LinkType,
    /// A mirror tunnel header (GRE, ERSPAN, VXLAN) could not be decoded.
    #[error("{0}")]
    Encap(EncapError),
}

impl Undecodable {
    /// Whether the frame ends too early (a snap-length or mirror cut) rather than being
    /// invalid.
    pub fn is_truncation(&self) -> bool {
        matches!(
            self,
            Undecodable::Truncated(_) | Undecodable::Encap(EncapError::Truncated { .. })
        )
    }
}

/// What a frame turned out to be.
// The RoCE variant is large, but frames live on the stack for one packet; boxing it would
// allocate per packet.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Copy, Debug)]
pub enum FrameKind<'a> {
    /// RoCEv1, RoCEv2 or native IB (possibly malformed or truncated).
    Roce(RocePacket<'a>),
    /// Anything else.
    Other(OtherKind),
}

/// Network-layer summary of any IP frame (for `--all` lines).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetSummary {
    /// Source address.
    pub src: Address,
    /// Destination address.
    pub dst: Address,
}

/// Link-layer facts worth showing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkSummary {
    /// Number of 802.1Q / 802.1ad tags.
    pub vlan_tags: u8,
    /// Outermost VLAN ID (12 bits), when tagged.
    pub vlan_id: Option<u16>,
    /// Outermost priority code point (3 bits), when tagged.
    pub vlan_pcp: Option<u8>,
    /// Innermost VLAN ID (12 bits), when tagged more than once.
    pub inner_vlan_id: Option<u16>,
    /// Innermost priority code point (3 bits), when tagged more than once: the PCP that PFC
    /// acts on behind a provider (802.1ad) tag.
    pub inner_vlan_pcp: Option<u8>,
    /// The outermost tag's TPID (16 bits: 0x8100 802.1Q, 0x88a8 802.1ad, 0x9100 pre-standard
    /// Q-in-Q) and drop eligible indicator (DEI, 1 bit), when tagged (IEEE 802.1Q §9.6).
    pub vlan_tpid_dei: Option<(u16, bool)>,
    /// The innermost tag's TPID and DEI, when tagged more than once.
    pub inner_vlan_tpid_dei: Option<(u16, bool)>,
    /// Ethernet destination and source MAC addresses (48 bits each), for Ethernet link types.
    pub mac: Option<([u8; 6], [u8; 6])>,
    /// The Ethertype after the tags (16 bits), for Ethernet and Linux cooked link types.
    pub ethertype: Option<u16>,
}

/// One decoded frame.
#[derive(Clone, Copy, Debug)]
pub struct Frame<'a> {
    /// Link-layer summary.
    pub link: LinkSummary,
    /// Addresses of a frame other than RoCE, when a network layer was found (a RoCE packet
    /// carries its own, [`RocePacket::src`] and `dst`, which are not copied here): read through
    /// [`Frame::net`].
    net: Option<NetSummary>,
    /// The decoded content.
    pub kind: FrameKind<'a>,
    /// The mirror tunnels the frame came through, outermost first; `link`, `net` and `kind`
    /// describe the inner frame.
    pub encap: Encap,
}

impl<'a> Frame<'a> {
    /// The frame's network addresses, when a network layer was found: a RoCE packet's source
    /// and destination (IP addresses, GIDs or LIDs), another frame's IP addresses.
    pub fn net(&self) -> Option<NetSummary> {
        match &self.kind {
            FrameKind::Roce(p) => Some(NetSummary {
                src: p.src,
                dst: p.dst,
            }),
            FrameKind::Other(_) => self.net,
        }
    }

    /// The RoCE packet, if this frame is one.
    pub fn roce(&self) -> Option<&RocePacket<'a>> {
        match &self.kind {
            FrameKind::Roce(p) => Some(p),
            FrameKind::Other(_) => None,
        }
    }
}

/// Decode one captured frame.
///
/// `data` is the captured bytes (`caplen` of them), `orig_len` the length on the wire. Never
/// panics and never allocates; any byte sequence yields a [`Frame`].
///
/// ```
/// use roce_inspect::decode::{decode_frame, DecodeConfig, IcrcStatus, LinkType};
///
/// // The RoCEv2 CNP captured on a ConnectX-4 Lx (spec/roce.md §4), from the IP header on.
/// let hex = "45c2003c718c400040119161 0a001101 0a001201 000012b700280000 \
///            8100ffff40000118 00000000 00000000000000000000000000000000 82fd002a";
/// let hex: String = hex.split_whitespace().collect();
/// let bytes: Vec<u8> = (0..hex.len())
///     .step_by(2)
///     .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
///     .collect();
/// let frame = decode_frame(LinkType::RAW, &bytes, bytes.len() as u32, &DecodeConfig::default());
/// let cnp = frame.roce().unwrap();
/// let bth = cnp.bth.unwrap();
/// assert_eq!((bth.opcode.0, bth.becn, bth.dest_qp), (0x81, true, 0x118));
/// assert_eq!(cnp.icrc.status, IcrcStatus::Good);
/// ```
pub fn decode_frame<'a>(
    linktype: LinkType,
    data: &'a [u8],
    orig_len: u32,
    cfg: &DecodeConfig,
) -> Frame<'a> {
    link::decode(linktype, data, orig_len as usize, cfg)
}

#[cfg(test)]
mod tests {
    use super::{Address, LINK_TYPES, LinkType};
    use std::net::Ipv4Addr;

    /// The one table of link types agrees with libpcap: every row's name is the one
    /// `pcap_datalink_val_to_name` gives its DLT_ value, the DLT_ value maps back to the row,
    /// and no value has two rows.
    #[test]
    fn link_type_table_is_libpcaps() {
        for (k, row) in LINK_TYPES.iter().enumerate() {
            let lt = row.link_type;
            let libpcap = pcap::Linktype(lt.to_dlt()).get_name().unwrap();
            assert_eq!((lt.name(), row.name), (libpcap.as_str(), libpcap.as_str()));
            assert_eq!(LinkType::from_dlt(lt.to_dlt()), lt);
            assert!(lt.is_supported());
            assert!(
                LINK_TYPES[k + 1..].iter().all(|o| o.link_type != lt),
                "{lt:?} twice"
            );
        }
        // IEEE 802.11 (105): libpcap knows it, the decoder does not.
        assert!(!LinkType(105).is_supported());
        assert_eq!(LinkType(105).name(), "unknown");
    }

    /// An IPv4 address prints as the standard library prints it (every octet value in each
    /// position, and with width, alignment and precision).
    #[test]
    fn ipv4_text_is_std_text() {
        for o in 0..=255u8 {
            for a in [
                [o, 0, 0, 0],
                [10, o, 255, 1],
                [1, 2, o, 99],
                [255, 100, 9, o],
            ] {
                let (ours, std) = (Address::V4(a), Ipv4Addr::from(a));
                assert_eq!(ours.to_string(), std.to_string());
                assert_eq!(
                    format!("{ours:>18}|{ours:<16}|{ours:^17.5}"),
                    format!("{std:>18}|{std:<16}|{std:^17.5}")
                );
            }
        }
    }
}
