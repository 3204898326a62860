//! Link types other than Ethernet, with hand-built frames.
//!
//! Expected ICRCs were computed independently with Python's `zlib.crc32` over the masked bytes
//! (spec/roce.md §4: native IB without GRH covers the real LRH with VL set to 1s; with a GRH,
//! eight 0xFF bytes replace the LRH and the GRH's TClass, FlowLabel and HopLmt are set to 1s;
//! BTH byte 4 is set to 1s in both).

use roce_inspect::decode::{
    Address, DecodeConfig, Frame, FrameKind, IcrcStatus, LinkType, Operation, OtherKind,
    RoceVersion, decode_frame,
};

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| c.is_ascii_hexdigit()).collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn decode(lt: LinkType, b: &[u8]) -> Frame<'_> {
    decode_frame(lt, b, b.len() as u32, &DecodeConfig::default())
}

/// LRH: VL 3, LNH 2 (BTH next), DLID 5, PktLen 8 words, SLID 7; RC SEND ONLY to QP 0x2a,
/// AckReq, PSN 256, 8 payload bytes 00..07; ICRC 0xd19749ca; VCRC 0x1234.
const IB_LOCAL: &str = "30020005000800070400ffff0000002a800001000001020304050607ca4997d11234";

/// LRH (LNH 3) + GRH (TClass 0x20, FlowLabel 0x12345, HopLmt 64, link-local GIDs ::1 → ::2
/// under fe80::2:c903:0) + RC ACKNOWLEDGE to QP 0x2b, PSN 256, AETH 0x1f MSN 5; ICRC 0xf63e0d84.
const IB_GRH: &str = "00030007001100056201234500141b40fe800000000000000002c90300000001\
                      fe800000000000000002c903000000021100ffff0000002b000001001f000005840d3ef6abcd";

fn status(lt: LinkType, b: &[u8]) -> IcrcStatus {
    decode(lt, b).roce().expect("RoCE/IB packet").icrc.status
}

#[test]
fn infiniband_lrh_only() {
    let b = hex(IB_LOCAL);
    let f = decode(LinkType::INFINIBAND, &b);
    let p = f.roce().expect("IB packet");
    assert_eq!(p.version, RoceVersion::Ib);
    assert_eq!((p.src, p.dst), (Address::Lid(7), Address::Lid(5)));
    let lrh = p.lrh.unwrap();
    assert_eq!((lrh.vl, lrh.lnh, lrh.pkt_len), (3, 2, 8));
    let bth = p.bth.unwrap();
    assert_eq!(bth.opcode.operation(), Some(Operation::SendOnly));
    assert_eq!((bth.dest_qp, bth.psn, bth.ack_req), (0x2a, 256, true));
    assert_eq!(p.payload, &[0, 1, 2, 3, 4, 5, 6, 7]);
    assert_eq!(p.icrc.status, IcrcStatus::Good);
    assert_eq!(p.icrc.value, Some(0xd19749ca));
    // VL is variant: changing it keeps the ICRC good; changing the SL does not.
    let mut vl = b.clone();
    vl[0] = 0x70;
    assert_eq!(status(LinkType::INFINIBAND, &vl), IcrcStatus::Good);
    let mut sl = b.clone();
    sl[1] = 0x12;
    assert_eq!(status(LinkType::INFINIBAND, &sl), IcrcStatus::Bad);
}

#[test]
fn infiniband_with_grh() {
    let b = hex(IB_GRH);
    let f = decode(LinkType::INFINIBAND, &b);
    let p = f.roce().unwrap();
    let grh = p.grh.unwrap();
    assert_eq!(
        (grh.tclass, grh.flow_label, grh.hop_limit),
        (0x20, 0x12345, 64)
    );
    assert_eq!(p.src.to_string(), "fe80::2:c903:0:1");
    let aeth = p.ext.aeth.unwrap();
    assert_eq!((aeth.syndrome, aeth.msn), (0x1f, 5));
    assert_eq!(p.icrc.status, IcrcStatus::Good);
    // With a GRH the whole LRH is variant (routers rewrite it).
    let mut lrh = b.clone();
    lrh[3] = 0x99;
    assert_eq!(status(LinkType::INFINIBAND, &lrh), IcrcStatus::Good);
    let mut hop = b.clone();
    hop[15] = 1; // GRH HopLmt
    assert_eq!(status(LinkType::INFINIBAND, &hop), IcrcStatus::Good);
    let mut gid = b.clone();
    gid[30] ^= 1; // a byte of the SGID
    assert_eq!(status(LinkType::INFINIBAND, &gid), IcrcStatus::Bad);
}

#[test]
fn rocev1_uses_the_grh_rule() {
    // Ethernet (Ethertype 0x8915) + the GRH and ACK of IB_GRH: same ICRC.
    let mut b = hex("020000000002 020000000001 8915");
    b.extend(&hex(IB_GRH)[8..hex(IB_GRH).len() - 2]);
    let f = decode(LinkType::ETHERNET, &b);
    let p = f.roce().unwrap();
    assert_eq!(p.version, RoceVersion::V1);
    assert_eq!(p.icrc.status, IcrcStatus::Good);
    assert_eq!(p.icrc.value, Some(0xf63e0d84));
}

#[test]
fn erf_type_21_carries_infiniband() {
    // ERF header: timestamp 0, type 21, flags 0x04, rlen 50, lctr 0, wlen 34.
    let mut b = hex("0000000000000000 15 04 0032 0000 0022");
    b.extend(hex(IB_LOCAL));
    let f = decode(LinkType::ERF, &b);
    let p = f.roce().expect("IB inside ERF");
    assert_eq!(p.bth.unwrap().dest_qp, 0x2a);
    assert_eq!(p.icrc.status, IcrcStatus::Good);
    // ERF type 2 (Ethernet) with the 2-byte pad, carrying an ARP frame.
    let mut e = hex("0000000000000000 02 00 0030 0000 002a 0000");
    e.extend(hex("ffffffffffff 020000000001 0806"));
    e.extend([0u8; 28]);
    assert!(matches!(
        decode(LinkType::ERF, &e).kind,
        FrameKind::Other(OtherKind::Arp)
    ));
    // Another ERF type is reported as such, not dropped.
    let mut x = hex("0000000000000000 07 00 0018 0000 0008");
    x.extend([0u8; 8]);
    assert!(matches!(
        decode(LinkType::ERF, &x).kind,
        FrameKind::Other(OtherKind::ErfType(7))
    ));
}

/// spec/roce.md §4 vector 1 (ConnectX-4 Lx CNP), IP header onwards.
const CNP_IP: &str = "45c2003c718c400040119161 0a001101 0a001201 000012b700280000 \
                      8100ffff40000118 00000000 00000000000000000000000000000000 82fd002a";

fn check_cnp(f: Frame<'_>) {
    let p = f.roce().expect("CNP");
    let bth = p.bth.unwrap();
    assert_eq!(bth.opcode.0, 0x81);
    assert!(bth.becn && !bth.fecn);
    assert_eq!(bth.dest_qp, 0x118);
    assert_eq!(p.icrc.status, IcrcStatus::Good);
}

#[test]
fn raw_ip_loopback_and_cooked() {
    let ip = hex(CNP_IP);
    check_cnp(decode(LinkType::RAW, &ip));
    check_cnp(decode(LinkType::IPV4, &ip));
    // BSD loopback: AF_INET (2) in host order (NULL) and network order (LOOP).
    let mut null = vec![2, 0, 0, 0];
    null.extend(&ip);
    check_cnp(decode(LinkType::NULL, &null));
    let mut lo = vec![0, 0, 0, 2];
    lo.extend(&ip);
    check_cnp(decode(LinkType::LOOP, &lo));
    // Linux cooked v2: protocol 0x0800 at offset 0 of a 20-byte header.
    let mut sll2 = hex("0800 0000 00000002 0001 00 06 020000000001 0000");
    sll2.extend(&ip);
    check_cnp(decode(LinkType::LINUX_SLL2, &sll2));
    // Linux cooked v1: protocol at offset 14 of a 16-byte header.
    let mut sll = hex("0000 0001 0006 020000000001 0000 0800");
    sll.extend(&ip);
    check_cnp(decode(LinkType::LINUX_SLL, &sll));
}

/// A VLAN tag inside a Linux cooked frame (`capture any` of a tagged interface: libpcap puts
/// the stripped tag back, protocol 0x8100 then the tag, as tshark dissects it): the CNP behind
/// it is decoded, with its VLAN 100 and PCP 3 (tag bytes 6064 by hand: PCP 3 = 011, DEI 0,
/// VID 0x064).
#[test]
fn vlan_tag_inside_cooked_frames() {
    let ip = hex(CNP_IP);
    let mut sll = hex("0000 0001 0006 020000000001 0000 8100 6064 0800");
    sll.extend(&ip);
    let mut sll2 = hex("8100 0000 00000002 0001 00 06 020000000001 0000 6064 0800");
    sll2.extend(&ip);
    for (lt, b) in [(LinkType::LINUX_SLL, &sll), (LinkType::LINUX_SLL2, &sll2)] {
        let f = decode(lt, b);
        assert_eq!((f.link.vlan_id, f.link.vlan_pcp), (Some(100), Some(3)));
        check_cnp(f);
    }
}

#[test]
fn many_vlan_tags_and_unsupported_link_type() {
    // Three tags: 802.1ad 200, 802.1Q 100 (PCP 3), 802.1Q 7, then the CNP.
    let mut f = hex("e41d2dab2bc2 7cfe90643b32 88a8 00c8 8100 6064 8100 0007 0800");
    f.extend(hex(CNP_IP));
    let fr = decode(LinkType::ETHERNET, &f);
    assert_eq!(fr.link.vlan_tags, 3);
    assert_eq!(fr.link.vlan_id, Some(200));
    assert_eq!(fr.link.inner_vlan_id, Some(7));
    assert_eq!(
        (fr.link.vlan_pcp, fr.link.inner_vlan_pcp),
        (Some(0), Some(0))
    );
    assert_eq!(fr.link.ethertype, Some(0x0800));
    assert_eq!(
        fr.link.mac,
        Some((
            [0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2],
            [0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32]
        ))
    );
    // S-tag 200 (PCP 5, DEI 1: 0xb0c8) + C-tag 100 (PCP 3): the inner PCP is the C-tag's.
    // tshark 4.0: "IEEE 802.1ad, ID: 200", Priority 5, DEI 1; "802.1Q Virtual LAN, PRI: 3,
    // DEI: 0, ID: 100".
    let mut q = hex("e41d2dab2bc2 7cfe90643b32 88a8 b0c8 8100 6064 0800");
    q.extend(hex(CNP_IP));
    let fq = decode(LinkType::ETHERNET, &q);
    assert_eq!((fq.link.vlan_id, fq.link.vlan_pcp), (Some(200), Some(5)));
    assert_eq!(
        (fq.link.inner_vlan_id, fq.link.inner_vlan_pcp),
        (Some(100), Some(3))
    );
    assert_eq!(
        (fq.link.vlan_tpid_dei, fq.link.inner_vlan_tpid_dei),
        (Some((0x88a8, true)), Some((0x8100, false)))
    );
    check_cnp(fr);
    // Tags up to the frame end: undecodable, not a panic.
    let tags = hex("e41d2dab2bc2 7cfe90643b32 8100 0001 8100 0002 8100");
    assert!(matches!(
        decode(LinkType::ETHERNET, &tags).kind,
        FrameKind::Other(OtherKind::Undecodable(_))
    ));
    assert!(matches!(
        decode(LinkType(105), &f).kind,
        FrameKind::Other(OtherKind::Undecodable(_))
    ));
}
