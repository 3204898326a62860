use super::*;
use proptest::prelude::*;

#[test]
fn bth_fields_from_hand_bytes() {
    // opcode 0x24, SE=0 M=1 pad=2 tver=0, pkey ffff, F=1 B=1, QP 0x0000d3, A=1, PSN 0xcf1710
    let b = [
        0x24, 0x60, 0xff, 0xff, 0xc0, 0x00, 0x00, 0xd3, 0x80, 0xcf, 0x17, 0x10,
    ];
    let h = Bth::parse(&b).unwrap();
    assert_eq!(h.opcode, Opcode(0x24));
    assert!(!h.se && h.m && h.fecn && h.becn && h.ack_req);
    assert_eq!((h.pad, h.tver, h.pkey), (2, 0, 0xffff));
    assert_eq!((h.dest_qp, h.psn), (0xd3, 13_571_856));
}

#[test]
fn aeth_kinds() {
    let k = |s| {
        Aeth {
            syndrome: s,
            msn: 0,
        }
        .kind()
    };
    assert_eq!(
        k(0x1f),
        AethKind::Ack {
            code: 31,
            credits: None
        }
    );
    assert_eq!(
        k(0x0d),
        AethKind::Ack {
            code: 13,
            credits: Some(96)
        }
    );
    assert_eq!(
        k(0x2e),
        AethKind::RnrNak {
            code: 14,
            timer_us: 1280
        }
    );
    assert_eq!(
        k(0x20),
        AethKind::RnrNak {
            code: 0,
            timer_us: 655_360
        }
    );
    assert_eq!(k(0x60), AethKind::Nak(NakCode::PsnSeqErr));
    assert_eq!(k(0x64), AethKind::Nak(NakCode::InvalidRd));
    assert_eq!(k(0x45), AethKind::Reserved);
}

// Hand-computed byte vectors: each field value placed by hand at the offsets and bit positions
// of spec/roce.md §1 (IBTA Vol 1 §9.2–§9.3, §8.3, §7.7), not produced by `emit`.

/// `h` emits exactly `bytes`, and `bytes` parse back to `h`.
fn both_ways<T: PartialEq + core::fmt::Debug>(
    h: T,
    bytes: &[u8],
    emit: fn(&T) -> Vec<u8>,
    parse: fn(&[u8]) -> Result<T, Truncated>,
) {
    assert_eq!(emit(&h), bytes, "emit {h:?}");
    assert_eq!(parse(bytes), Ok(h));
}

#[test]
fn bth_emits_hand_bytes() {
    // RDMA WRITE Only (0x0a): SE=1 M=0 pad=3 tver=0, pkey 0x8001, F=0 B=1, QP 0x123456, A=1,
    // PSN 0xabcdef. Byte 1 = 1000_0000 | 11 << 4 = 0xb0; byte 4 = 0x40; byte 8 = 0x80.
    let h = Bth {
        opcode: Opcode(0x0a),
        se: true,
        pad: 3,
        pkey: 0x8001,
        becn: true,
        dest_qp: 0x12_3456,
        ack_req: true,
        psn: 0xab_cdef,
        ..Bth::default()
    };
    let b = [
        0x0a, 0xb0, 0x80, 0x01, 0x40, 0x12, 0x34, 0x56, 0x80, 0xab, 0xcd, 0xef,
    ];
    both_ways(h, &b, |h| h.to_bytes().to_vec(), Bth::parse);
}

#[test]
fn bth_keeps_reserved_bits_and_tver() {
    // tver 0xf in byte 1 bits 3:0, resv6 0x3f in byte 4 bits 5:0, resv7 0x7f in byte 8 bits 6:0.
    let b = [0x04, 0x0f, 0xff, 0xff, 0x3f, 0, 0, 1, 0x7f, 0, 0, 2];
    let h = Bth::parse(&b).unwrap();
    assert_eq!((h.tver, h.resv6, h.resv7), (0xf, 0x3f, 0x7f));
    assert!(!h.fecn && !h.becn && !h.ack_req && !h.se && !h.m);
    assert_eq!(h.to_bytes(), b);
}

#[test]
fn reth_hand_bytes() {
    let h = Reth {
        va: 0x0000_7f00_1234_5678,
        rkey: 0xabcd_ef01,
        dma_len: 4096,
    };
    let b = [
        0, 0, 0x7f, 0, 0x12, 0x34, 0x56, 0x78, 0xab, 0xcd, 0xef, 0x01, 0, 0, 0x10, 0,
    ];
    both_ways(h, &b, |h| h.to_bytes().to_vec(), Reth::parse);
}

#[test]
fn aeth_hand_bytes() {
    // NAK PSN sequence error (syndrome 011_00000), MSN 0x000102.
    let nak = Aeth {
        syndrome: 0x60,
        msn: 0x102,
    };
    both_ways(
        nak,
        &[0x60, 0x00, 0x01, 0x02],
        |h| h.to_bytes().to_vec(),
        Aeth::parse,
    );
    // ACK with invalid credits (000_11111), MSN 0xabcdef.
    let ack = Aeth {
        syndrome: 0x1f,
        msn: 0xab_cdef,
    };
    both_ways(
        ack,
        &[0x1f, 0xab, 0xcd, 0xef],
        |h| h.to_bytes().to_vec(),
        Aeth::parse,
    );
}

#[test]
fn deth_hand_bytes_and_reserved_byte() {
    // GSI Q_Key 0x80010000, SrcQP 1; byte 4 is reserved.
    let h = Deth {
        qkey: 0x8001_0000,
        src_qp: 1,
    };
    let b = [0x80, 0x01, 0, 0, 0, 0, 0, 0x01];
    both_ways(h, &b, |h| h.to_bytes().to_vec(), Deth::parse);
    let mut resv = b;
    resv[4] = 0xff;
    assert_eq!(Deth::parse(&resv), Ok(h), "reserved byte ignored");
}

#[test]
fn small_headers_hand_bytes() {
    let rd = Rdeth {
        ee_context: 0x12_3456,
    };
    both_ways(
        rd,
        &[0, 0x12, 0x34, 0x56],
        |h| h.to_bytes().to_vec(),
        Rdeth::parse,
    );
    let x = Xrceth { xrc_srq: 0xab_cdef };
    both_ways(
        x,
        &[0, 0xab, 0xcd, 0xef],
        |h| h.to_bytes().to_vec(),
        Xrceth::parse,
    );
    // FETH: SEL 1 in bits 5:4, PLT 2 in bits 3:0 of byte 3.
    let fl = Feth { sel: 1, plt: 2 };
    both_ways(fl, &[0, 0, 0, 0x12], |h| h.to_bytes().to_vec(), Feth::parse);
    let imm = ImmDt { data: 0xcafe_f00d };
    both_ways(
        imm,
        &[0xca, 0xfe, 0xf0, 0x0d],
        |h| h.to_bytes().to_vec(),
        ImmDt::parse,
    );
    let ie = Ieth { rkey: 0x0102_0304 };
    both_ways(ie, &[1, 2, 3, 4], |h| h.to_bytes().to_vec(), Ieth::parse);
    let ack = AtomicAckEth {
        orig: 0x0102_0304_0506_0708,
    };
    both_ways(
        ack,
        &[1, 2, 3, 4, 5, 6, 7, 8],
        |h| h.to_bytes().to_vec(),
        AtomicAckEth::parse,
    );
}

#[test]
fn atomic_eth_hand_bytes() {
    let h = AtomicEth {
        va: 0x1122_3344_5566_7788,
        rkey: 0x99aa_bbcc,
        swap_add: 5,
        compare: 0x8000_0000_0000_0001,
    };
    let mut b = vec![
        0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc,
    ];
    b.extend([0, 0, 0, 0, 0, 0, 0, 5]);
    b.extend([0x80, 0, 0, 0, 0, 0, 0, 1]);
    both_ways(h, &b, |h| h.to_bytes().to_vec(), AtomicEth::parse);
}

#[test]
fn grh_hand_bytes() {
    // Word 0 = 6 << 28 | 0x12 << 20 | 0x34567 = 0x6123_4567.
    let h = Grh {
        ip_ver: 6,
        tclass: 0x12,
        flow_label: 0x3_4567,
        pay_len: 0x40,
        next_hdr: 0x1b,
        hop_limit: 0x40,
        sgid: core::array::from_fn(|i| 0x10 + i as u8),
        dgid: core::array::from_fn(|i| 0x20 + i as u8),
    };
    let mut b = vec![0x61, 0x23, 0x45, 0x67, 0x00, 0x40, 0x1b, 0x40];
    b.extend(0x10..0x20u8);
    b.extend(0x20..0x30u8);
    both_ways(h, &b, |h| h.to_bytes().to_vec(), Grh::parse);
}

#[test]
fn lrh_hand_bytes() {
    // VL 1, LVer 0; SL 3, LNH 2 (byte 1 = 0011_00_10); DLID 1; PktLen 0x412; SLID 2.
    let h = Lrh {
        vl: 1,
        lver: 0,
        sl: 3,
        lnh: 2,
        dlid: 1,
        pkt_len: 0x412,
        slid: 2,
    };
    both_ways(
        h,
        &[0x10, 0x32, 0, 1, 0x04, 0x12, 0, 2],
        |h| h.to_bytes().to_vec(),
        Lrh::parse,
    );
    // Reserved bits (byte 1 bits 3:2, byte 4 bits 7:3) are dropped.
    assert_eq!(Lrh::parse(&[0x10, 0x3e, 0, 1, 0xfc, 0x12, 0, 2]), Ok(h));
}

#[test]
fn short_input_is_truncated_with_name_and_lengths() {
    let e = Bth::parse(&[0; 11]).unwrap_err();
    assert_eq!(
        e,
        Truncated {
            header: "BTH",
            len: 11,
            need: 12
        }
    );
    assert_eq!(e.to_string(), "BTH needs 12 bytes, got 11");
    assert_eq!(Reth::parse(&[0; 15]).unwrap_err().need, 16);
    assert_eq!(AtomicEth::parse(&[]).unwrap_err().header, "AtomicETH");
    assert_eq!(Grh::parse(&[0; 39]).unwrap_err().len, 39);
    assert!(Lrh::parse(&[0; 7]).is_err() && Aeth::parse(&[0; 3]).is_err());
    // Longer input: the header's bytes only.
    assert_eq!(Aeth::parse(&[0x60, 0, 0, 1, 0xff]).unwrap().msn, 1);
}

#[test]
fn ext_kind_sizes_are_the_header_lengths() {
    use crate::decode::ExtKind as K;
    assert_eq!(K::Rdeth.size(), 4);
    assert_eq!(K::Deth.size(), 8);
    assert_eq!(K::Reth.size(), 16);
    assert_eq!(K::AtomicEth.size(), 28);
    assert_eq!(K::AtomicAckEth.size(), 8);
    assert_eq!(K::Feth.size(), 4);
}

/// Arbitrary bytes → parse → emit gives the bytes back, with the reserved bits that `T` drops
/// (zero bits of `keep`) cleared.
macro_rules! bytes_round_trip {
    ($name:ident, $t:ident, $len:expr, $keep:expr) => {
        proptest! {
            #[test]
            fn $name(b in prop::array::uniform::<_, $len>(any::<u8>())) {
                let keep: [u8; $len] = $keep;
                let want: Vec<u8> = b.iter().zip(keep).map(|(x, k)| x & k).collect();
                prop_assert_eq!($t::parse(&b).unwrap().to_bytes().to_vec(), want);
            }
        }
    };
}

bytes_round_trip!(bth_bytes, Bth, 12, [0xff; 12]);
bytes_round_trip!(rdeth_bytes, Rdeth, 4, [0, 0xff, 0xff, 0xff]);
bytes_round_trip!(
    deth_bytes,
    Deth,
    8,
    [0xff, 0xff, 0xff, 0xff, 0, 0xff, 0xff, 0xff]
);
bytes_round_trip!(xrceth_bytes, Xrceth, 4, [0, 0xff, 0xff, 0xff]);
bytes_round_trip!(reth_bytes, Reth, 16, [0xff; 16]);
bytes_round_trip!(atomic_eth_bytes, AtomicEth, 28, [0xff; 28]);
bytes_round_trip!(aeth_bytes, Aeth, 4, [0xff; 4]);
bytes_round_trip!(atomic_ack_eth_bytes, AtomicAckEth, 8, [0xff; 8]);
bytes_round_trip!(imm_dt_bytes, ImmDt, 4, [0xff; 4]);
bytes_round_trip!(ieth_bytes, Ieth, 4, [0xff; 4]);
bytes_round_trip!(feth_bytes, Feth, 4, [0, 0, 0, 0x3f]);
bytes_round_trip!(grh_bytes, Grh, 40, [0xff; 40]);
bytes_round_trip!(
    lrh_bytes,
    Lrh,
    8,
    [0xff, 0xf3, 0xff, 0xff, 0x07, 0xff, 0xff, 0xff]
);

const U24: core::ops::Range<u32> = 0..1 << 24;

fn any_bth() -> impl Strategy<Value = Bth> {
    (
        (
            any::<u8>(),
            any::<[bool; 5]>(),
            0..4u8,
            0..16u8,
            any::<u16>(),
        ),
        (0..64u8, U24, 0..128u8, U24),
    )
        .prop_map(
            |(
                (op, [se, m, fecn, becn, ack_req], pad, tver, pkey),
                (resv6, dest_qp, resv7, psn),
            )| Bth {
                opcode: Opcode(op),
                se,
                m,
                pad,
                tver,
                pkey,
                fecn,
                becn,
                resv6,
                dest_qp,
                ack_req,
                resv7,
                psn,
            },
        )
}

fn any_grh() -> impl Strategy<Value = Grh> {
    (
        0..16u8,
        any::<u8>(),
        0..1u32 << 20,
        any::<u16>(),
        any::<[u8; 2]>(),
        any::<[[u8; 16]; 2]>(),
    )
        .prop_map(
            |(ip_ver, tclass, flow_label, pay_len, [next_hdr, hop_limit], [sgid, dgid])| Grh {
                ip_ver,
                tclass,
                flow_label,
                pay_len,
                next_hdr,
                hop_limit,
                sgid,
                dgid,
            },
        )
}

fn any_lrh() -> impl Strategy<Value = Lrh> {
    (
        0..16u8,
        0..16u8,
        0..16u8,
        0..4u8,
        any::<u16>(),
        0..1u16 << 11,
        any::<u16>(),
    )
        .prop_map(|(vl, lver, sl, lnh, dlid, pkt_len, slid)| Lrh {
            vl,
            lver,
            sl,
            lnh,
            dlid,
            pkt_len,
            slid,
        })
}

proptest! {
    // Field values within their bit widths → emit → parse gives the same header.
    #[test]
    fn bth_fields(h in any_bth()) {
        prop_assert_eq!(Bth::parse(&h.to_bytes()), Ok(h));
    }

    #[test]
    fn grh_fields(h in any_grh()) {
        prop_assert_eq!(Grh::parse(&h.to_bytes()), Ok(h));
    }

    #[test]
    fn lrh_fields(h in any_lrh()) {
        prop_assert_eq!(Lrh::parse(&h.to_bytes()), Ok(h));
    }

    #[test]
    fn ext_fields(
        a in any::<u64>(), b in any::<u32>(), c in any::<u64>(), d in any::<u64>(),
        e in any::<u32>(), q in U24, syndrome in any::<u8>(), sel in 0..4u8, plt in 0..16u8,
    ) {
        let rd = Rdeth { ee_context: q };
        prop_assert_eq!(Rdeth::parse(&rd.to_bytes()), Ok(rd));
        let de = Deth { qkey: b, src_qp: q };
        prop_assert_eq!(Deth::parse(&de.to_bytes()), Ok(de));
        let x = Xrceth { xrc_srq: q };
        prop_assert_eq!(Xrceth::parse(&x.to_bytes()), Ok(x));
        let re = Reth { va: a, rkey: b, dma_len: e };
        prop_assert_eq!(Reth::parse(&re.to_bytes()), Ok(re));
        let at = AtomicEth { va: a, rkey: b, swap_add: c, compare: d };
        prop_assert_eq!(AtomicEth::parse(&at.to_bytes()), Ok(at));
        let ae = Aeth { syndrome, msn: q };
        prop_assert_eq!(Aeth::parse(&ae.to_bytes()), Ok(ae));
        let aa = AtomicAckEth { orig: c };
        prop_assert_eq!(AtomicAckEth::parse(&aa.to_bytes()), Ok(aa));
        let im = ImmDt { data: e };
        prop_assert_eq!(ImmDt::parse(&im.to_bytes()), Ok(im));
        let ie = Ieth { rkey: b };
        prop_assert_eq!(Ieth::parse(&ie.to_bytes()), Ok(ie));
        let fl = Feth { sel, plt };
        prop_assert_eq!(Feth::parse(&fl.to_bytes()), Ok(fl));
    }

    // A value wider than its field is cut to its bit width, never spilling into a neighbour.
    #[test]
    fn bth_emit_cuts_wide_values(pad in any::<u8>(), qp in any::<u32>(), psn in any::<u32>()) {
        let h = Bth { pad, dest_qp: qp, psn, ..Bth::default() };
        let p = Bth::parse(&h.to_bytes()).unwrap();
        prop_assert_eq!((p.pad, p.dest_qp, p.psn), (pad & 3, qp & 0xff_ffff, psn & 0xff_ffff));
        prop_assert_eq!((p.tver, p.pkey, p.resv7), (0, 0xffff, 0));
    }
}
