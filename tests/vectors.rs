//! Hand-built byte vectors, written out here from the wire formats in `../shared/spec/roce.md`
//! (§1 BTH, §2 header sequences, §4 ICRC, §7 RoCEv1/GRH), not produced by roce-inspect.
//!
//! The ICRC bytes of the vectors other than the spec's own were computed outside the project
//! with Python's `zlib.crc32` over the masked bytes (spec §4: `ff×8 ‖ IP with TOS/TTL/checksum
//! = ff ‖ UDP with checksum = ffff ‖ BTH with byte 4 = ff ‖ rest`); each vector's comment
//! gives that masked input. The IPv4 header checksums are real (RFC 791 one's complement), so
//! the frames also decode cleanly in Wireshark.
//!
//! Every frame is Ethernet II, 02:00:00:00:00:01 → 02:00:00:00:00:02; IPv4 frames go
//! 10.0.0.1 → 10.0.0.2, TOS 0x02 (ECT(0)), ID 0x1234, DF, TTL 64, UDP 49152 → 4791.

use roce_inspect::decode::{
    Address, DecodeConfig, Ecn, Frame, FrameKind, IcrcStatus, LinkType, Malformed, OtherKind,
    RocePacket, RoceVersion, Transport, UncheckedReason, Undecodable, decode_frame,
};
use roce_inspect::output::FrameCtx;
use roce_inspect::output::Printer as _;
use roce_inspect::output::text::TextPrinter;

/// Bytes from hex, ignoring spaces, newlines and `|` separators.
fn hex(s: &str) -> Vec<u8> {
    let d: Vec<u8> = s
        .bytes()
        .filter(u8::is_ascii_hexdigit)
        .map(|c| (c as char).to_digit(16).unwrap() as u8)
        .collect();
    assert!(d.len() % 2 == 0, "odd number of hex digits");
    d.chunks(2).map(|p| p[0] << 4 | p[1]).collect()
}

const ETH_V4: &str = "020000000002 020000000001 0800";

fn decode(b: &[u8]) -> Frame<'_> {
    decode_frame(
        LinkType::ETHERNET,
        b,
        b.len() as u32,
        &DecodeConfig::default(),
    )
}

fn roce<'a>(f: &Frame<'a>) -> RocePacket<'a> {
    match f.kind {
        FrameKind::Roce(p) => p,
        FrameKind::Other(o) => panic!("not RoCE: {o:?}"),
    }
}

/// A well-formed, complete packet with a verified ICRC.
fn assert_clean(p: &RocePacket<'_>, wire_icrc: [u8; 4]) {
    assert!(p.malformed.is_none(), "malformed: {:?}", p.malformed);
    assert!(!p.truncated);
    assert_eq!(p.icrc.status, IcrcStatus::Good, "{:?}", p.icrc);
    assert_eq!(p.icrc.value, Some(u32::from_le_bytes(wire_icrc)));
}

/// The text line roce-inspect prints for `f`, without colour.
fn text_line(f: &Frame<'_>, caplen: usize) -> String {
    let mut out = Vec::new();
    let ctx = FrameCtx::whole(1, 0, caplen);
    let mut p = TextPrinter::new(&mut out, false, false);
    p.frame(&ctx, f).unwrap();
    p.flush().unwrap();
    drop(p);
    String::from_utf8(out).unwrap()
}

/// The RoCEv2 CNP captured on a ConnectX-4 Lx, spec §4 vector 1 (scapy `roce.uts`):
/// 10.0.17.1 → 10.0.18.1, TOS 0xc2 (DSCP 48, ECT(0)), UDP 0 → 4791 with checksum 0, BTH
/// opcode 0x81 with BECN, DestQP 0x000118, 16 reserved zero bytes, ICRC 82 fd 00 2a.
#[test]
fn cnp_connectx4_from_spec() {
    let b = hex("e41d2dab2bc2 7cfe90643b32 0800 |
                 45c2 003c 718c 4000 4011 9161 0a001101 0a001201 |
                 0000 12b7 0028 0000 |
                 81 00 ffff 40 000118 00 000000 |
                 00000000 00000000 00000000 00000000 |
                 82fd002a");
    let f = decode(&b);
    let p = roce(&f);
    assert_clean(&p, [0x82, 0xfd, 0x00, 0x2a]);
    assert_eq!(p.version, RoceVersion::V2);
    assert_eq!(p.src, Address::V4([10, 0, 17, 1]));
    assert_eq!(p.dst, Address::V4([10, 0, 18, 1]));
    // The frame's addresses are the packet's (10.0.17.1 → 10.0.18.1 in the IPv4 header above).
    let net = f.net().expect("a RoCE frame's addresses");
    assert_eq!((net.src, net.dst), (p.src, p.dst));
    assert_eq!(
        (p.ecn, p.dscp, p.hop_limit),
        (Some(Ecn::Ect0), Some(48), Some(64))
    );
    assert_eq!((p.udp_src_port, p.udp_dst_port), (Some(0), Some(4791)));
    let bth = p.bth.unwrap();
    assert_eq!(bth.opcode.0, 0x81);
    assert_eq!(bth.opcode.transport(), Transport::Cnp);
    assert!(bth.becn && !bth.fecn && !bth.ack_req && !bth.se && !bth.m);
    assert_eq!(
        (bth.pkey, bth.dest_qp, bth.psn, bth.pad),
        (0xffff, 0x118, 0, 0)
    );
    assert!(p.ext.cnp_reserved);
    assert_eq!((p.hdr_len, p.payload_len), (28, 0));
    let line = text_line(&f, b.len());
    assert!(line.contains("CNP") && line.contains("BECN"), "{line}");
    assert!(
        !line.contains("MALFORMED") && !line.contains("ICRC BAD"),
        "{line}"
    );
}

/// RoCEv1: Ethertype 0x8915, GRH (IPVer 6, TClass 0, FlowLabel 0, PayLen 24 = BTH 12 +
/// payload 6 + pad 2 + ICRC 4, NxtHdr 0x1B, HopLmt 64, SGID fe80::200:0:0:1, DGID
/// fe80::200:0:0:2), RC SEND ONLY, PadCnt 2, DestQP 0x33, A, PSN 256, payload "hello!".
/// ICRC by the GRH rule of spec §4 (TClass, FlowLabel, HopLmt masked):
/// zlib.crc32(ffffffffffffffff 6fffffff00181bff fe80…0001 fe80…0002
///            0420ffffff00003380000100 68656c6c6f21 0000) = 0x3b53a43e → wire 3e a4 53 3b.
#[test]
fn rocev1_send_only_with_pad() {
    let b = hex("020000000002 020000000001 8915 |
                 6000 0000 0018 1b40
                 fe80 0000 0000 0000 0200 0000 0000 0001
                 fe80 0000 0000 0000 0200 0000 0000 0002 |
                 04 20 ffff 00 000033 80 000100 |
                 68656c6c6f21 0000 |
                 3ea4533b");
    let f = decode(&b);
    let p = roce(&f);
    assert_clean(&p, [0x3e, 0xa4, 0x53, 0x3b]);
    assert_eq!(p.version, RoceVersion::V1);
    let gid = |last| {
        let mut g = [0u8; 16];
        g[0] = 0xfe;
        g[1] = 0x80;
        g[8] = 0x02;
        g[15] = last;
        Address::Gid(g)
    };
    assert_eq!((p.src, p.dst), (gid(1), gid(2)));
    assert_eq!(p.ecn, None);
    assert_eq!(p.udp_dst_port, None);
    let grh = p.grh.unwrap();
    assert_eq!((grh.ip_ver, grh.tclass, grh.flow_label), (6, 0, 0));
    assert_eq!((grh.pay_len, grh.next_hdr, grh.hop_limit), (24, 0x1b, 64));
    let bth = p.bth.unwrap();
    assert_eq!(bth.opcode.0, 0x04);
    assert_eq!(
        (bth.pad, bth.dest_qp, bth.psn, bth.ack_req),
        (2, 0x33, 256, true)
    );
    assert_eq!(p.payload_len, 6);
    assert_eq!(p.payload, b"hello!");
    // A changed GRH hop limit (variant) keeps the ICRC good; a changed SGID byte does not.
    let mut v = b.clone();
    v[14 + 7] = 1;
    assert_eq!(roce(&decode(&v)).icrc.status, IcrcStatus::Good);
    v[14 + 8 + 15] ^= 1;
    assert_eq!(roce(&decode(&v)).icrc.status, IcrcStatus::Bad);
}

/// RoCEv2 over IPv6: TC 0x6a (DSCP 26, ECT(0)), flow label 0x12345, payload length 40,
/// next header UDP, hop limit 64, 2001:db8::1 → 2001:db8::2; UDP 0xc123 → 4791, length 40,
/// checksum 0x1234 (masked, so any value); RC RDMA READ REQUEST, DestQP 0x22, A, PSN
/// 0x123456; RETH va 0x100002000, rkey 0x00c0ffee, length 65536.
/// ICRC (spec §4 IPv6 rule: traffic class, flow label, hop limit masked):
/// zlib.crc32(ffffffffffffffff 6fffffff002811ff 20010db8…01 20010db8…02 c12312b70028ffff
///            0c00ffffff00002280123456 0000000100002000 00c0ffee 00010000) = 0x552b9d34.
#[test]
fn rocev2_over_ipv6_read_request() {
    let b = hex("020000000002 020000000001 86dd |
                 66a1 2345 0028 1140
                 2001 0db8 0000 0000 0000 0000 0000 0001
                 2001 0db8 0000 0000 0000 0000 0000 0002 |
                 c123 12b7 0028 1234 |
                 0c 00 ffff 00 000022 80 123456 |
                 0000000100002000 00c0ffee 00010000 |
                 349d2b55");
    let f = decode(&b);
    let p = roce(&f);
    assert_clean(&p, [0x34, 0x9d, 0x2b, 0x55]);
    assert_eq!(p.version, RoceVersion::V2);
    let mut a = [0u8; 16];
    a[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
    a[15] = 1;
    assert_eq!(p.src, Address::V6(a));
    a[15] = 2;
    assert_eq!(p.dst, Address::V6(a));
    assert_eq!(
        (p.ecn, p.dscp, p.hop_limit),
        (Some(Ecn::Ect0), Some(26), Some(64))
    );
    assert_eq!((p.udp_src_port, p.udp_dst_port), (Some(0xc123), Some(4791)));
    let bth = p.bth.unwrap();
    assert_eq!((bth.opcode.0, bth.dest_qp, bth.psn), (0x0c, 0x22, 0x123456));
    let r = p.ext.reth.unwrap();
    assert_eq!(
        (r.va, r.rkey, r.dma_len),
        (0x1_0000_2000, 0x00c0_ffee, 65536)
    );
    assert_eq!(p.payload_len, 0);
    // Variant IPv6 fields: traffic class (ECN → CE), flow label, hop limit.
    let mut v = b.clone();
    v[14] ^= 0x0f; // traffic class high nibble
    v[15] ^= 0x30; // ECN bits (TC low nibble sits in the high nibble of byte 1)
    v[16] ^= 0xff; // flow label
    v[21] = 1; // hop limit
    let q = roce(&decode(&v)).icrc;
    assert_eq!(q.status, IcrcStatus::Good, "{q:?}");
    // An address byte is invariant.
    v[14 + 8] ^= 0x80;
    assert_eq!(roce(&decode(&v)).icrc.status, IcrcStatus::Bad);
    // Four bytes after the IPv6 payload (an Ethernet trailer, as tshark shows it: outside the
    // packet): the same packet, its ICRC over the same bytes; they were counted as IPv6 header
    // (the packet "malformed", its ICRC covering the trailer).
    let mut t = b.clone();
    t.extend_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
    let f = decode(&t);
    let p = roce(&f);
    assert!(p.malformed.is_none(), "{:?}", p.malformed);
    assert_eq!(p.icrc.status, IcrcStatus::Good, "{:?}", p.icrc);
    assert_eq!(p.icrc.value, Some(0x552b_9d34));
}

/// XRC RDMA WRITE ONLY with immediate (0xAB): BTH, XRCETH (SRQ 0xabcdef), RETH, ImmDt, 8 bytes.
/// zlib.crc32(ffffffffffffffff 45ff004c12344000ff11ffff0a0000010a000002 c00012b70038ffff
///   ab00ffffff000abc80000064 00abcdef 00007f0012345678 1234abcd 00000008 cafef00d
///   0102030405060708) = 0x6a1a2550.
/// And the XRC ACKNOWLEDGE (0xB1) that answers it: AETH only, no XRCETH on responses.
/// zlib.crc32(… 45ff0030… c00012b7001cffff b100ffffff00001200000064 1f000005) = 0xed5f4ba1.
#[test]
fn xrc_write_only_imm_and_ack() {
    let b = hex(&format!(
        "{ETH_V4} | 4502 004c 1234 4000 4011 1469 0a000001 0a000002 | c000 12b7 0038 0000 |
         ab 00 ffff 00 000abc 80 000064 | 00abcdef | 00007f0012345678 1234abcd 00000008 |
         cafef00d | 0102030405060708 | 50251a6a"
    ));
    let f = decode(&b);
    let p = roce(&f);
    assert_clean(&p, [0x50, 0x25, 0x1a, 0x6a]);
    let bth = p.bth.unwrap();
    assert_eq!(bth.opcode.transport(), Transport::Xrc);
    assert_eq!((bth.dest_qp, bth.psn, bth.ack_req), (0xabc, 100, true));
    assert_eq!(p.ext.xrceth.unwrap().xrc_srq, 0xabcdef);
    let r = p.ext.reth.unwrap();
    assert_eq!(
        (r.va, r.rkey, r.dma_len),
        (0x7f00_1234_5678, 0x1234_abcd, 8)
    );
    assert_eq!(p.ext.imm, Some(0xcafe_f00d));
    assert_eq!((p.hdr_len, p.payload_len), (12 + 4 + 16 + 4, 8));
    assert_eq!(p.payload, &[1, 2, 3, 4, 5, 6, 7, 8]);
    assert!(text_line(&f, b.len()).contains("XRC"));

    let b = hex(&format!(
        "{ETH_V4} | 4502 0030 1234 4000 4011 1485 0a000001 0a000002 | c000 12b7 001c 0000 |
         b1 00 ffff 00 000012 00 000064 | 1f000005 | a14b5fed"
    ));
    let f = decode(&b);
    let p = roce(&f);
    assert_clean(&p, [0xa1, 0x4b, 0x5f, 0xed]);
    assert_eq!(p.bth.unwrap().opcode.0, 0xb1);
    assert!(p.ext.xrceth.is_none());
    let a = p.ext.aeth.unwrap();
    assert_eq!((a.syndrome, a.msn), (0x1f, 5));
}

/// RD SEND ONLY (0x44): BTH, RDETH (EE-Context 0x000123), DETH (Q_Key 0x11223344, SrcQP
/// 0x000456), 8 bytes. zlib.crc32(… 45ff0040… c00012b7002cffff 4400ffffff00077780000010
/// 00000123 1122334400000456 1112131415161718) = 0xf07097f5.
#[test]
fn rd_send_only() {
    let b = hex(&format!(
        "{ETH_V4} | 4502 0040 1234 4000 4011 1475 0a000001 0a000002 | c000 12b7 002c 0000 |
         44 00 ffff 00 000777 80 000010 | 00000123 | 11223344 00 000456 |
         1112131415161718 | f59770f0"
    ));
    let f = decode(&b);
    let p = roce(&f);
    assert_clean(&p, [0xf5, 0x97, 0x70, 0xf0]);
    let bth = p.bth.unwrap();
    assert_eq!(bth.opcode.transport(), Transport::Rd);
    assert_eq!((bth.dest_qp, bth.psn), (0x777, 16));
    assert_eq!(p.ext.rdeth.unwrap().ee_context, 0x123);
    let d = p.ext.deth.unwrap();
    assert_eq!((d.qkey, d.src_qp), (0x1122_3344, 0x456));
    assert_eq!((p.hdr_len, p.payload_len), (24, 8));
}

/// UD SEND ONLY with immediate (0x65), PadCnt 3: DETH (GSI Q_Key 0x80010000, SrcQP 1),
/// ImmDt 0xdeadbeef, payload "abcde" + 3 pad bytes.
/// zlib.crc32(… 45ff0040… c00012b7002cffff 6530ffffff00000900000020 8001000000000001
///            deadbeef 6162636465 000000) = 0x9bdda542.
#[test]
fn ud_send_only_with_immediate() {
    let b = hex(&format!(
        "{ETH_V4} | 4502 0040 1234 4000 4011 1475 0a000001 0a000002 | c000 12b7 002c 0000 |
         65 30 ffff 00 000009 00 000020 | 80010000 00 000001 | deadbeef |
         6162636465 000000 | 42a5dd9b"
    ));
    let f = decode(&b);
    let p = roce(&f);
    assert_clean(&p, [0x42, 0xa5, 0xdd, 0x9b]);
    let bth = p.bth.unwrap();
    assert_eq!(bth.opcode.transport(), Transport::Ud);
    assert_eq!((bth.pad, bth.dest_qp, bth.psn), (3, 9, 32));
    let d = p.ext.deth.unwrap();
    assert_eq!((d.qkey, d.src_qp), (0x8001_0000, 1));
    assert_eq!(p.ext.imm, Some(0xdead_beef));
    assert_eq!(p.payload_len, 5);
    assert_eq!(p.payload, b"abcde");
    // The pad bytes are covered by the ICRC (spec §4 "Pad").
    let mut v = b.clone();
    let last_pad = v.len() - 5;
    v[last_pad] ^= 1;
    assert_eq!(roce(&decode(&v)).icrc.status, IcrcStatus::Bad);
}

/// RC CmpSwap (0x13): AtomicETH VA 0x7f0012345678, R_Key 0x1234abcd, Swap 0x1111111122222222,
/// Compare 0x3333333344444444 (spec §1: VA 64, R_Key 32, Swap 64, Compare 64).
/// zlib.crc32(… 45ff0048… c00012b70034ffff 1300ffffff00001180000030 00007f0012345678
///            1234abcd 1111111122222222 3333333344444444) = 0x367368fd.
#[test]
fn rc_compare_swap() {
    let b = hex(&format!(
        "{ETH_V4} | 4502 0048 1234 4000 4011 146d 0a000001 0a000002 | c000 12b7 0034 0000 |
         13 00 ffff 00 000011 80 000030 |
         00007f0012345678 1234abcd 1111111122222222 3333333344444444 | fd687336"
    ));
    let f = decode(&b);
    let p = roce(&f);
    assert_clean(&p, [0xfd, 0x68, 0x73, 0x36]);
    assert_eq!(p.bth.unwrap().opcode.0, 0x13);
    let a = p.ext.atomic_eth.unwrap();
    assert_eq!(a.va, 0x7f00_1234_5678);
    assert_eq!(a.rkey, 0x1234_abcd);
    assert_eq!(a.swap_add, 0x1111_1111_2222_2222);
    assert_eq!(a.compare, 0x3333_3333_4444_4444);
    assert!(p.ext.reth.is_none());
    assert_eq!((p.hdr_len, p.payload_len), (40, 0));
}

/// RC FLUSH (0x1C): FETH (SEL 1, PLT 2: last byte 0x12) then RETH, no payload.
/// zlib.crc32(… 45ff0040… c00012b7002cffff 1c00ffffff00001180000031 00000012
///            00007f0012345000 1234abcd 00001000) = 0x5edbdd73.
#[test]
fn rc_flush() {
    let b = hex(&format!(
        "{ETH_V4} | 4502 0040 1234 4000 4011 1475 0a000001 0a000002 | c000 12b7 002c 0000 |
         1c 00 ffff 00 000011 80 000031 | 00000012 | 00007f0012345000 1234abcd 00001000 |
         73dddb5e"
    ));
    let f = decode(&b);
    let p = roce(&f);
    assert_clean(&p, [0x73, 0xdd, 0xdb, 0x5e]);
    assert_eq!(p.bth.unwrap().opcode.0, 0x1c);
    let fe = p.ext.feth.unwrap();
    assert_eq!((fe.sel, fe.plt), (1, 2));
    let r = p.ext.reth.unwrap();
    assert_eq!(
        (r.va, r.rkey, r.dma_len),
        (0x7f00_1234_5000, 0x1234_abcd, 4096)
    );
    assert_eq!((p.hdr_len, p.payload_len), (32, 0));
}

/// RC ATOMIC WRITE (0x1D): RETH (length 8) then the 8-byte value as payload.
/// zlib.crc32(… 45ff0044… c00012b70030ffff 1d00ffffff00001180000032 00007f0012345008
///            1234abcd 00000008 0123456789abcdef) = 0xbed6eb26.
#[test]
fn rc_atomic_write() {
    let b = hex(&format!(
        "{ETH_V4} | 4502 0044 1234 4000 4011 1471 0a000001 0a000002 | c000 12b7 0030 0000 |
         1d 00 ffff 00 000011 80 000032 | 00007f0012345008 1234abcd 00000008 |
         0123456789abcdef | 26ebd6be"
    ));
    let f = decode(&b);
    let p = roce(&f);
    assert_clean(&p, [0x26, 0xeb, 0xd6, 0xbe]);
    assert_eq!(p.bth.unwrap().opcode.0, 0x1d);
    let r = p.ext.reth.unwrap();
    assert_eq!(
        (r.va, r.rkey, r.dma_len),
        (0x7f00_1234_5008, 0x1234_abcd, 8)
    );
    assert_eq!((p.hdr_len, p.payload_len), (28, 8));
    assert_eq!(p.payload, &hex("0123456789abcdef")[..]);
}

/// Opcode 0xE0 (manufacturer-specific range 0xC0–0xFF, spec §2): shown as such, the bytes
/// after the BTH left undecoded, not malformed; the ICRC position is unknown, so unchecked.
#[test]
fn opcode_0xe0_is_manufacturer_specific_not_malformed() {
    let b = hex(&format!(
        "{ETH_V4} | 4502 0034 1234 4000 4011 1481 0a000001 0a000002 | c000 12b7 0020 0000 |
         e0 00 ffff 00 000011 00 000001 | 0102030405060708 | 00000000"
    ));
    let f = decode(&b);
    let p = roce(&f);
    let bth = p.bth.unwrap();
    assert_eq!(bth.opcode.0, 0xe0);
    assert_eq!(bth.opcode.transport(), Transport::Vendor);
    assert!(bth.opcode.operation().is_none());
    assert!(p.malformed.is_none(), "{:?}", p.malformed);
    assert!(!p.truncated);
    assert_eq!(
        p.icrc.status,
        IcrcStatus::Unchecked(UncheckedReason::NoRule)
    );
    assert_eq!(bth.opcode.token(), "MSP_0xE0");
    let line = text_line(&f, b.len());
    assert!(line.contains("manufacturer-specific"), "{line}");
    assert!(
        !line.contains("MALFORMED") && !line.contains("reserved"),
        "{line}"
    );
}

/// UDP *from* port 4791 to port 50000 (e.g. a reply of some other service): RoCEv2 is
/// identified by the destination port only (IBTA Annex A17; issue 2 point 3), so not RoCE.
/// With `--roce-port 50000` semantics it is.
#[test]
fn udp_from_source_port_4791_is_not_roce() {
    let b = hex(&format!(
        "{ETH_V4} | 4502 0030 1234 4000 4011 1485 0a000001 0a000002 | 12b7 c350 001c 0000 |
         b1 00 ffff 00 000012 00 000064 | 1f000005 | 00000000"
    ));
    let f = decode(&b);
    match f.kind {
        FrameKind::Other(OtherKind::Udp { src_port, dst_port }) => {
            assert_eq!((src_port, dst_port), (4791, 50000))
        }
        other => panic!("expected plain UDP, got {other:?}"),
    }
    let cfg = DecodeConfig::with_ports(&[50000]);
    let f = decode_frame(LinkType::ETHERNET, &b, b.len() as u32, &cfg);
    assert!(f.roce().is_some());
}

/// RC RDMA WRITE FIRST: RETH VA 0x7f0012345678, R_Key 0xcafebabe, length 3000, 16 payload bytes
/// a0..af. zlib.crc32(… 45ff004c… c00012b70038ffff 0600ffffff000011000004d2 00007f0012345678
///   cafebabe 00000bb8 a0a1…af) = 0x9ed7ba90.
fn write_first() -> Vec<u8> {
    hex(&format!(
        "{ETH_V4} | 4502 004c 1234 4000 4011 1469 0a000001 0a000002 | c000 12b7 0038 0000 |
         06 00 ffff 00 000011 00 0004d2 | 00007f0012345678 cafebabe 00000bb8 |
         a0a1a2a3a4a5a6a7a8a9aaabacadaeaf | 90bad79e"
    ))
}

#[test]
fn write_first_complete() {
    let b = write_first();
    assert_eq!(b.len(), 90);
    let f = decode(&b);
    let p = roce(&f);
    assert_clean(&p, [0x90, 0xba, 0xd7, 0x9e]);
    let bth = p.bth.unwrap();
    assert_eq!((bth.opcode.0, bth.dest_qp, bth.psn), (0x06, 0x11, 1234));
    let r = p.ext.reth.unwrap();
    assert_eq!(
        (r.va, r.rkey, r.dma_len),
        (0x7f00_1234_5678, 0xcafe_babe, 3000)
    );
    assert_eq!((p.hdr_len, p.payload_len), (28, 16));
}

/// The WRITE FIRST cut by the snap length at every byte offset: never a panic, marked
/// truncated, every header whose bytes were all captured is decoded.
#[test]
fn write_first_truncated_at_every_offset() {
    let full = write_first();
    let cfg = DecodeConfig::default();
    // Lengths by hand: Ethernet 14, IPv4 20, UDP 8, BTH 12, RETH 16, payload 16, ICRC 4.
    // Start offsets: BTH at 42, RETH at 54, payload at 70, ICRC at 86.
    let (bth, reth, payload, icrc) = (42, 54, 70, 86);
    for cut in 0..full.len() {
        let b = &full[..cut];
        let f = decode_frame(LinkType::ETHERNET, b, full.len() as u32, &cfg);
        if cut < bth {
            // Cut inside the Ethernet (0..14), IPv4 (14..34) or UDP (34..42) header: not
            // recognisable as RoCE yet, but marked truncated (not invalid).
            match f.kind {
                FrameKind::Other(OtherKind::Undecodable(Undecodable::Truncated(_))) => {}
                other => panic!("cut {cut}: {other:?}"),
            }
            continue;
        }
        let p = roce(&f);
        assert!(p.truncated, "cut {cut}");
        assert!(p.malformed.is_none(), "cut {cut}: {:?}", p.malformed);
        assert_eq!(
            p.icrc.status,
            IcrcStatus::Unchecked(UncheckedReason::Truncated),
            "cut {cut}"
        );
        assert_eq!(p.udp_dst_port, Some(4791));
        assert_eq!(p.bth.is_some(), cut >= reth, "cut {cut}");
        if let Some(h) = p.bth {
            assert_eq!((h.opcode.0, h.dest_qp, h.psn), (0x06, 0x11, 1234));
            // The length fields say 16 payload bytes, whatever was captured.
            assert_eq!(p.payload_len, 16, "cut {cut}");
        }
        assert_eq!(p.ext.reth.is_some(), cut >= payload, "cut {cut}");
        if let Some(r) = p.ext.reth {
            assert_eq!(
                (r.va, r.rkey, r.dma_len),
                (0x7f00_1234_5678, 0xcafe_babe, 3000)
            );
        }
        let captured_payload = cut.clamp(payload, icrc) - payload;
        assert_eq!(
            p.payload,
            &full[payload..payload + captured_payload],
            "cut {cut}"
        );
        let line = text_line(&f, cut);
        assert!(line.contains("[TRUNCATED]"), "cut {cut}: {line}");
        assert!(!line.contains("MALFORMED"), "cut {cut}: {line}");
    }
}

/// The WRITE FIRST ending inside its Ethernet, IPv4 or UDP header with nothing cut off (the
/// wire length equals the captured bytes): the frame was that short on the wire, so it is
/// malformed, not truncated — tshark marks such a frame `[Malformed Packet]`, and `[Packet size
/// limited during capture]` only when the captured length is below the wire length.
#[test]
fn write_first_ending_inside_a_header_on_the_wire_is_malformed() {
    let full = write_first();
    let cfg = DecodeConfig::default();
    // Ethernet 0..14, IPv4 14..34, UDP 34..42 (by hand, as above).
    for end in 0..42 {
        let b = &full[..end];
        let f = decode_frame(LinkType::ETHERNET, b, end as u32, &cfg);
        let part = match end {
            0..14 => "Ethernet",
            14..34 => "IPv4",
            _ => "UDP",
        };
        match f.kind {
            FrameKind::Other(OtherKind::Undecodable(u)) => {
                assert_eq!(u, Undecodable::Short(part), "end {end}");
                assert!(!u.is_truncation());
            }
            other => panic!("end {end}: {other:?}"),
        }
        let line = text_line(&f, end);
        assert!(line.contains("[MALFORMED]"), "end {end}: {line}");
        // One byte cut off by the snap length: truncated.
        let f = decode_frame(LinkType::ETHERNET, b, end as u32 + 1, &cfg);
        assert!(
            matches!(
                f.kind,
                FrameKind::Other(OtherKind::Undecodable(Undecodable::Truncated(p))) if p == part
            ),
            "end {end}: {:?}",
            f.kind
        );
    }
}

/// The WRITE FIRST ending at byte 60 with nothing cut (wire length 60): the IPv4 total length
/// (76, so 56 bytes after the IP header) claims bytes that were never on the wire — malformed,
/// not truncated — but its BTH (bytes 42..54) was, and is decoded as tshark decodes it
/// ("RC RDMA Write First QP=0x000011" with `[Malformed Packet]`); the RETH (54..70) was not.
#[test]
fn length_beyond_the_wire_is_malformed_with_the_bth_it_holds() {
    let full = write_first();
    let f = decode_frame(
        LinkType::ETHERNET,
        &full[..60],
        60,
        &DecodeConfig::default(),
    );
    let p = roce(&f);
    assert_eq!(
        p.malformed,
        Some(Malformed::LengthExceedsFrame {
            declared: 56,
            wire: 26
        })
    );
    assert!(!p.truncated);
    let h = p.bth.expect("the BTH was on the wire");
    assert_eq!((h.opcode.0, h.dest_qp, h.psn), (0x06, 0x11, 1234));
    assert!(p.ext.reth.is_none());
    assert_eq!(
        p.icrc.status,
        IcrcStatus::Unchecked(UncheckedReason::Malformed)
    );
    // The same bytes cut by the snap length from the 90-byte frame: truncated, not malformed.
    let f = decode_frame(
        LinkType::ETHERNET,
        &full[..60],
        90,
        &DecodeConfig::default(),
    );
    assert!(roce(&f).truncated && roce(&f).malformed.is_none());
}

/// An IPv4 total length that leaves fewer than 8 bytes for the UDP header, in a frame captured
/// whole: malformed (tshark: `[Malformed Packet]`), not cut by the snap length. The WRITE FIRST
/// with total length 21 (0x0015, checksum recomputed by hand: 0x14a0) leaves 1 byte of UDP.
#[test]
fn ip_length_too_short_for_udp_is_malformed_not_truncated() {
    let mut b = write_first();
    b[16..18].copy_from_slice(&[0x00, 0x15]);
    b[24..26].copy_from_slice(&[0x14, 0xa0]);
    let f = decode(&b);
    match f.kind {
        FrameKind::Other(OtherKind::Undecodable(u)) => {
            assert!(!u.is_truncation(), "{u:?}");
            assert_eq!(u, Undecodable::Invalid("UDP"));
        }
        other => panic!("{other:?}"),
    }
    // The IPv4 header itself is valid: its addresses are shown (as tshark shows them).
    let net = f.net().expect("the IPv4 addresses");
    assert_eq!(
        (net.src.to_string(), net.dst.to_string()),
        ("10.0.0.1".to_string(), "10.0.0.2".to_string())
    );
    let line = text_line(&f, b.len());
    assert!(line.contains("[MALFORMED]"), "{line}");
    assert!(!line.contains("TRUNCATED"), "{line}");
}

/// An IPv4 total length of exactly 20 (the header alone, protocol UDP) leaves no transport
/// byte: tshark shows a plain IPv4 frame and starts no UDP dissector, and so does the decoder
/// (total length 0x0014, checksum recomputed by hand: 0x14a1).
#[test]
fn ip_length_of_the_header_alone_is_a_plain_ip_frame() {
    let mut b = write_first();
    b[16..18].copy_from_slice(&[0x00, 0x14]);
    b[24..26].copy_from_slice(&[0x14, 0xa1]);
    let f = decode(&b);
    match f.kind {
        FrameKind::Other(OtherKind::Ip { protocol }) => assert_eq!(protocol, 17),
        other => panic!("{other:?}"),
    }
    assert!(f.net().is_some());
    let line = text_line(&f, b.len());
    assert!(!line.contains("MALFORMED"), "{line}");
}

/// A RoCE-port packet that is not a plausible BTH is decoded as malformed RoCE, never dropped:
/// TVer ≠ 0, a length too short for the opcode's headers, a pad count larger than the payload,
/// fewer than 12 bytes after UDP.
#[test]
fn malformed_bth_is_reported_not_dropped() {
    // RC SEND ONLY with TVer 1 (byte 1 = 0x01), 4-byte payload.
    let tver = hex(&format!(
        "{ETH_V4} | 4502 0030 1234 4000 4011 1485 0a000001 0a000002 | c000 12b7 001c 0000 |
         04 01 ffff 00 000011 80 000001 | 01020304 | 00000000"
    ));
    // RC RDMA WRITE FIRST whose UDP length (8 + 12 + 8 + 4 = 32) leaves 8 bytes for a 16-byte
    // RETH.
    let short = hex(&format!(
        "{ETH_V4} | 4502 0034 1234 4000 4011 1481 0a000001 0a000002 | c000 12b7 0020 0000 |
         06 00 ffff 00 000011 80 000001 | 00007f0012345678 | 00000000"
    ));
    // RC SEND ONLY with PadCnt 3 (byte 1 = 0x30) but only 2 bytes between BTH and ICRC.
    let pad = hex(&format!(
        "{ETH_V4} | 4502 002e 1234 4000 4011 1487 0a000001 0a000002 | c000 12b7 001a 0000 |
         04 30 ffff 00 000011 80 000001 | 0102 | 00000000"
    ));
    // UDP to 4791 with 8 bytes of payload: too short for a BTH.
    let tiny = hex(&format!(
        "{ETH_V4} | 4502 0024 1234 4000 4011 1491 0a000001 0a000002 | c000 12b7 0010 0000 |
         04 00 ffff 00 00000011"
    ));
    let cases: [(&str, Vec<u8>, Malformed); 4] = [
        ("tver", tver, Malformed::BadTver(1)),
        (
            "short",
            short,
            Malformed::ShortForOpcode { need: 32, have: 24 },
        ),
        (
            "pad",
            pad,
            Malformed::PadExceedsPayload { pad: 3, payload: 2 },
        ),
        ("tiny", tiny, Malformed::ShortBth { len: 8 }),
    ];
    for (name, b, want) in cases {
        let f = decode(&b);
        let p = roce(&f);
        assert_eq!(p.malformed, Some(want), "{name}");
        assert!(!p.truncated, "{name}");
        assert!(
            matches!(p.icrc.status, IcrcStatus::Unchecked(_)),
            "{name}: {:?}",
            p.icrc
        );
        let line = text_line(&f, b.len());
        assert!(line.contains("[MALFORMED]"), "{name}: {line}");
    }
}

/// Bytes after the IP datagram (Ethernet padding or a captured FCS) are not part of the
/// packet: the WRITE FIRST with a 4-byte trailer decodes the same, ICRC good, not truncated.
#[test]
fn ethernet_trailer_is_ignored() {
    let mut b = write_first();
    b.extend_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
    let f = decode(&b);
    let p = roce(&f);
    assert_clean(&p, [0x90, 0xba, 0xd7, 0x9e]);
    assert_eq!((p.hdr_len, p.payload_len), (28, 16));
}

/// A tiny deterministic PRNG (xorshift64*), so the test needs no seed file and never flakes.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Robustness: real RoCE frames and the vectors above, mutated at random (bytes overwritten,
/// cut short, original length changed), decoded under every supported link type and printed
/// by the text, verbose and JSON printers: never a panic, and the JSON always parses.
#[test]
fn mutated_frames_never_panic() {
    use roce_inspect::output::Printer;
    use roce_inspect::output::json::JsonPrinter;

    let mut seeds = vec![write_first()];
    for s in roce_inspect::synth::scenario::samples() {
        seeds.extend(s.records.into_iter().step_by(4).map(|r| r.data));
    }
    let link_types = [0u32, 1, 101, 108, 113, 197, 228, 229, 247, 276, 105];
    let cfg = DecodeConfig::with_ports(&[9741]);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut out = Vec::with_capacity(1 << 16);
    for round in 0..12_000 {
        let mut b = seeds[round % seeds.len()].clone();
        for _ in 0..1 + rng.below(4) {
            let i = rng.below(b.len());
            b[i] = rng.next() as u8;
        }
        if rng.below(3) == 0 {
            b.truncate(rng.below(b.len() + 1));
        }
        let orig_len = match rng.below(3) {
            0 => b.len() as u32,
            1 => b.len() as u32 + rng.below(2000) as u32,
            _ => rng.next() as u32,
        };
        // Half the time Ethernet, so that most mutations reach the IBA transport decoder.
        let lt = match rng.below(2) {
            0 => LinkType::ETHERNET,
            _ => LinkType(link_types[rng.below(link_types.len())]),
        };
        let f = decode_frame(lt, &b, orig_len, &cfg);
        let ctx = FrameCtx {
            number: round as u64 + 1,
            ts_ns: rng.next(),
            rel_ns: (rng.next() >> 1) as i64,
            caplen: b.len() as u32,
            len: orig_len,
        };
        out.clear();
        let mut tp = TextPrinter::new(&mut out, true, true);
        tp.frame(&ctx, &f).unwrap();
        tp.flush().unwrap();
        drop(tp);
        out.clear();
        let mut jp = JsonPrinter::new(&mut out);
        jp.frame(&ctx, &f).unwrap();
        jp.flush().unwrap();
        let line = std::str::from_utf8(&out).unwrap();
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert_eq!(v["frame"].as_u64(), Some(round as u64 + 1));
    }
}

/// Native InfiniBand (LINKTYPE_INFINIBAND 247, spec §7): LRH (VL 3, LVer 0, SL 0, LNH 2 = BTH
/// follows, DLID 2, PktLen 8 words = LRH 8 + BTH 12 + payload 8 + ICRC 4, SLID 1), RC SEND
/// ONLY to QP 0x45, A, PSN 7, 8 payload bytes, ICRC, then a 2-byte VCRC (not checked by
/// roce-inspect; zero here). ICRC per spec §4 (native IB: real LRH with only VL masked):
/// zlib.crc32(f0020002000800010400ffffff000045800000070011223344556677) = 0x48d9f450.
const IB_LOCAL: &str = "3002 0002 0008 0001 | 04 00 ffff 00 000045 80 000007 |
                        0011223344556677 | 50f4d948 | 0000";

/// The same SEND with LNH 3: LRH (PktLen 18 words), GRH (TClass 0x12, FlowLabel 0x34567,
/// PayLen 24, NxtHdr 0x1B, HopLmt 64, fe80::200:0:0:1 → fe80::200:0:0:2), BTH, payload. ICRC
/// by the GRH rule (LRH replaced by 8×ff; TClass, FlowLabel, HopLmt masked):
/// zlib.crc32(ffffffffffffffff 6fffffff00181bff fe80…01 fe80…02
///            0400ffffff00004580000007 0011223344556677) = 0xc150cbb9.
const IB_GLOBAL: &str = "3003 0002 0012 0001 |
                         6123 4567 0018 1b40
                         fe80 0000 0000 0000 0200 0000 0000 0001
                         fe80 0000 0000 0000 0200 0000 0000 0002 |
                         04 00 ffff 00 000045 80 000007 | 0011223344556677 | b9cb50c1 | 0000";

fn check_ib_send(p: &RocePacket<'_>, icrc: [u8; 4]) {
    assert_clean(p, icrc);
    assert_eq!(p.version, RoceVersion::Ib);
    let lrh = p.lrh.unwrap();
    assert_eq!((lrh.vl, lrh.sl, lrh.dlid, lrh.slid), (3, 0, 2, 1));
    let bth = p.bth.unwrap();
    assert_eq!(
        (bth.opcode.0, bth.dest_qp, bth.psn, bth.ack_req),
        (4, 0x45, 7, true)
    );
    assert_eq!(p.payload, &hex("0011223344556677")[..]);
}

#[test]
fn native_ib_local_and_global() {
    let b = hex(IB_LOCAL);
    let f = decode_frame(
        LinkType::INFINIBAND,
        &b,
        b.len() as u32,
        &DecodeConfig::default(),
    );
    let p = roce(&f);
    check_ib_send(&p, [0x50, 0xf4, 0xd9, 0x48]);
    assert_eq!(p.lrh.unwrap().lnh, 2);
    assert_eq!((p.src, p.dst), (Address::Lid(1), Address::Lid(2)));
    let net = f.net().expect("the LIDs");
    assert_eq!((net.src, net.dst), (Address::Lid(1), Address::Lid(2)));
    // VL is variant; DLID is not.
    let mut v = b.clone();
    v[0] = 0x70;
    let q = decode_frame(
        LinkType::INFINIBAND,
        &v,
        v.len() as u32,
        &DecodeConfig::default(),
    );
    assert_eq!(roce(&q).icrc.status, IcrcStatus::Good);
    v[3] = 3;
    let q = decode_frame(
        LinkType::INFINIBAND,
        &v,
        v.len() as u32,
        &DecodeConfig::default(),
    );
    assert_eq!(roce(&q).icrc.status, IcrcStatus::Bad);

    let b = hex(IB_GLOBAL);
    let f = decode_frame(
        LinkType::INFINIBAND,
        &b,
        b.len() as u32,
        &DecodeConfig::default(),
    );
    let p = roce(&f);
    check_ib_send(&p, [0xb9, 0xcb, 0x50, 0xc1]);
    let g = p.grh.unwrap();
    assert_eq!((g.tclass, g.flow_label, g.hop_limit), (0x12, 0x34567, 64));
    assert!(matches!(p.src, Address::Gid(s) if s[15] == 1));
    // With a GRH the whole LRH is variant (replaced by 8×ff): a new DLID keeps it good.
    let mut v = b.clone();
    v[3] = 9;
    let q = decode_frame(
        LinkType::INFINIBAND,
        &v,
        v.len() as u32,
        &DecodeConfig::default(),
    );
    assert_eq!(roce(&q).icrc.status, IcrcStatus::Good);
}

/// The native-IB packet inside an ERF record of type 21, as ibdump writes it (link type 197):
/// timestamp 8 bytes, type 0x15, flags 0, rlen 16 + 34 = 50, lctr 0, wlen 34, then the LRH.
#[test]
fn erf_type_21_infiniband() {
    let b = hex(&format!(
        "0000000000000000 15 00 0032 0000 0022 | {IB_LOCAL}"
    ));
    assert_eq!(b.len(), 50);
    let f = decode_frame(LinkType::ERF, &b, b.len() as u32, &DecodeConfig::default());
    check_ib_send(&roce(&f), [0x50, 0xf4, 0xd9, 0x48]);
    // wlen 0, as the reader passes it (the frame's bytes stop at wlen): nothing was cut, the
    // frame had no LRH on the wire (tshark 4.0: "0 bytes on wire", `[Malformed Packet: IB]`).
    let mut z = b[..16].to_vec();
    z[14..16].copy_from_slice(&[0, 0]);
    let f = decode_frame(LinkType::ERF, &z, 0, &DecodeConfig::default());
    assert!(
        matches!(
            f.kind,
            FrameKind::Other(OtherKind::Undecodable(Undecodable::Short("LRH")))
        ),
        "{:?}",
        f.kind
    );
}

/// The same IP datagrams under the other link types of issue 2 point 2: raw IP (101, 228,
/// 229), BSD loopback with a host-order (0) or network-order (108) address family, Linux
/// cooked v1 (protocol at offset 14) and v2 (protocol at offset 0).
#[test]
fn other_link_types_carry_the_same_packet() {
    let v4 = write_first()[14..].to_vec();
    let v6 = {
        let b = hex("020000000002 020000000001 86dd |
                     66a1 2345 0028 1140
                     2001 0db8 0000 0000 0000 0000 0000 0001
                     2001 0db8 0000 0000 0000 0000 0000 0002 |
                     c123 12b7 0028 1234 |
                     0c 00 ffff 00 000022 80 123456 |
                     0000000100002000 00c0ffee 00010000 |
                     349d2b55");
        b[14..].to_vec()
    };
    let cat = |a: &[u8], b: &[u8]| [a, b].concat();
    // Linux cooked v1: packet type 0, ARPHRD_ETHER 1, address length 6, address (8), protocol.
    let sll = |proto: &str, ip: &[u8]| {
        cat(
            &hex(&format!("0000 0001 0006 020000000001 0000 {proto}")),
            ip,
        )
    };
    // Linux cooked v2: protocol, reserved, ifindex, ARPHRD, packet type, address length, address.
    let sll2 = |proto: &str, ip: &[u8]| {
        cat(
            &hex(&format!(
                "{proto} 0000 00000002 0001 00 06 020000000001 0000"
            )),
            ip,
        )
    };
    let cases: Vec<(&str, LinkType, Vec<u8>, bool)> = vec![
        ("raw 101 v4", LinkType::RAW, v4.clone(), false),
        ("raw 101 v6", LinkType::RAW, v6.clone(), true),
        ("ipv4 228", LinkType::IPV4, v4.clone(), false),
        ("ipv6 229", LinkType::IPV6, v6.clone(), true),
        (
            "null AF_INET LE",
            LinkType::NULL,
            cat(&[2, 0, 0, 0], &v4),
            false,
        ),
        (
            "null AF_INET6 (Linux 10) LE",
            LinkType::NULL,
            cat(&[10, 0, 0, 0], &v6),
            true,
        ),
        (
            "null AF_INET6 (BSD 24) LE",
            LinkType::NULL,
            cat(&[24, 0, 0, 0], &v6),
            true,
        ),
        (
            "loop AF_INET BE",
            LinkType::LOOP,
            cat(&[0, 0, 0, 2], &v4),
            false,
        ),
        (
            "loop AF_INET6 (FreeBSD 28) BE",
            LinkType::LOOP,
            cat(&[0, 0, 0, 28], &v6),
            true,
        ),
        ("sll v4", LinkType::LINUX_SLL, sll("0800", &v4), false),
        ("sll v6", LinkType::LINUX_SLL, sll("86dd", &v6), true),
        ("sll2 v4", LinkType::LINUX_SLL2, sll2("0800", &v4), false),
    ];
    for (name, lt, b, is_v6) in cases {
        let f = decode_frame(lt, &b, b.len() as u32, &DecodeConfig::default());
        let p = match f.kind {
            FrameKind::Roce(p) => p,
            FrameKind::Other(o) => panic!("{name}: {o:?}"),
        };
        assert_eq!(p.icrc.status, IcrcStatus::Good, "{name}");
        assert!(p.malformed.is_none() && !p.truncated, "{name}");
        let op = p.bth.unwrap().opcode.0;
        if is_v6 {
            assert_eq!(op, 0x0c, "{name}");
            assert!(matches!(p.src, Address::V6(_)), "{name}");
        } else {
            assert_eq!(op, 0x06, "{name}");
            assert_eq!(p.src, Address::V4([10, 0, 0, 1]), "{name}");
        }
    }
}

/// Every AETH syndrome (0x00–0x7F) in an RC ACKNOWLEDGE, as `--json` shows it, against the
/// tables of spec §3 transcribed here: type bits 6:5 = ACK (credit code → credits, 31 =
/// unlimited), RNR NAK (timer code → ms), reserved, NAK (code → name).
#[test]
fn aeth_syndromes_in_json_follow_spec_tables() {
    use roce_inspect::output::Printer;
    use roce_inspect::output::json::JsonPrinter;
    const CREDITS: [u64; 31] = [
        0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536,
        2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768,
    ];
    const RNR_MS: [f64; 32] = [
        655.36, 0.01, 0.02, 0.03, 0.04, 0.06, 0.08, 0.12, 0.16, 0.24, 0.32, 0.48, 0.64, 0.96, 1.28,
        1.92, 2.56, 3.84, 5.12, 7.68, 10.24, 15.36, 20.48, 30.72, 40.96, 61.44, 81.92, 122.88,
        163.84, 245.76, 327.68, 491.52,
    ];
    const NAKS: [&str; 5] = [
        "psn_seq_err",
        "invalid_request",
        "remote_access",
        "remote_op",
        "invalid_rd",
    ];
    for syn in 0u8..0x80 {
        let b = hex(&format!(
            "{ETH_V4} | 4502 0030 1234 4000 4011 1485 0a000001 0a000002 | c000 12b7 001c 0000 |
             11 00 ffff 00 000012 00 000064 | {syn:02x} 00002a | 00000000"
        ));
        let f = decode(&b);
        let mut out = Vec::new();
        let ctx = FrameCtx::whole(1, 0, b.len());
        let mut jp = JsonPrinter::new(&mut out);
        jp.frame(&ctx, &f).unwrap();
        jp.flush().unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let a = &v["aeth"];
        let code = (syn & 0x1f) as u64;
        assert_eq!(a["syndrome"], syn as u64);
        assert_eq!(a["msn"], 42);
        assert_eq!(a["value"], code, "{syn:#x}");
        match syn >> 5 {
            0 => {
                assert_eq!(a["kind"], "ack", "{syn:#x}");
                match CREDITS.get(code as usize) {
                    Some(c) => assert_eq!(a["credits"], *c, "{syn:#x}"),
                    // Code 31: no credit count (unlimited); README documents `null`.
                    None => assert!(a["credits"].is_null(), "{syn:#x}: {a}"),
                }
            }
            1 => {
                assert_eq!(a["kind"], "rnr_nak", "{syn:#x}");
                let ms = a["rnr_timer_ms"].as_f64().unwrap();
                assert!((ms - RNR_MS[code as usize]).abs() < 1e-9, "{syn:#x}: {ms}");
            }
            2 => assert_eq!(a["kind"], "reserved", "{syn:#x}"),
            _ => {
                assert_eq!(a["kind"], "nak", "{syn:#x}");
                let want = NAKS.get(code as usize).copied().unwrap_or("reserved");
                assert_eq!(a["nak"], want, "{syn:#x}");
            }
        }
    }
}
