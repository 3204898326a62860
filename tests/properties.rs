//! Property tests (issue 7, point 2): 24-bit PSN arithmetic, ICRC masking, and "every input
//! frame is counted exactly once" in the analysis report.

mod common;

use common::frames::{Ext, V2};
use proptest::prelude::*;
use roce_inspect::analyze::psn::{
    PSN_HALF, PSN_MASK, PSN_MODULUS, PsnTracker, PsnVerdict, psn_add, psn_diff, psn_distance,
};
use roce_inspect::analyze::{AnalyzeConfig, Analyzer};
use roce_inspect::decode::{
    Aeth, AtomicAckEth, AtomicEth, DecodeConfig, Deth, Feth, Frame, FrameKind, IcrcStatus, Ieth,
    ImmDt, LinkType, Opcode, Rdeth, Reth, Xrceth, decode_frame,
};

fn decode(f: &[u8]) -> Frame<'_> {
    decode_frame(
        LinkType::ETHERNET,
        f,
        f.len() as u32,
        &DecodeConfig::default(),
    )
}

fn icrc_status(f: &[u8]) -> Option<IcrcStatus> {
    match decode(f).kind {
        FrameKind::Roce(p) => Some(p.icrc.status),
        FrameKind::Other(_) => None,
    }
}

// ---------------------------------------------------------------------------------------------
// 24-bit PSN arithmetic.

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// psn_diff is antisymmetric except at distance exactly 2^23, where both directions count
    /// as "behind" (rxe psn_compare); its range is −2^23 ..= 2^23 − 1.
    #[test]
    fn psn_diff_antisymmetric(a in any::<u32>(), b in any::<u32>()) {
        let (d, e) = (psn_diff(a, b), psn_diff(b, a));
        prop_assert!((-(PSN_HALF as i32)..PSN_HALF as i32).contains(&d));
        if psn_distance(a, b) == PSN_HALF {
            prop_assert_eq!(d, -(PSN_HALF as i32));
            prop_assert_eq!(e, -(PSN_HALF as i32));
        } else {
            prop_assert_eq!(d, -e);
        }
        prop_assert_eq!(d == 0, a & PSN_MASK == b & PSN_MASK);
    }

    /// Adding k to a PSN moves it k ahead for k < 2^23 and k − 2^24 (behind) from 2^23 on,
    /// across the wrap at 2^24; bits above 24 never matter.
    #[test]
    fn psn_add_and_diff_agree(a in any::<u32>(), k in 0u32..PSN_MODULUS, hi in any::<u8>()) {
        let b = psn_add(a, k);
        prop_assert!(b < PSN_MODULUS);
        prop_assert_eq!(psn_distance(b, a), k);
        let want = if k < PSN_HALF { k as i32 } else { k as i32 - PSN_MODULUS as i32 };
        prop_assert_eq!(psn_diff(b, a), want);
        prop_assert_eq!(psn_diff(b | (u32::from(hi) << 24), a), want);
        // Round trip: a + (b − a) = b.
        prop_assert_eq!(psn_add(a, psn_diff(b, a) as u32), b);
    }

    /// An in-order run of any length from any start (crossing the wrap or not) has no gap and no
    /// retransmission; a jump of 2^23 − 1 is a gap of that size; a jump of exactly 2^23 is
    /// behind (a retransmission), never a gap.
    #[test]
    fn tracker_wrap_edges(start in 0u32..PSN_MODULUS, n in 1u32..300) {
        let start = if start % 3 == 0 { PSN_MODULUS - 1 - (start % 150) } else { start };
        let mut t = PsnTracker::default();
        for i in 0..n {
            let v = t.observe(psn_add(start, i), 1, 0, false);
            prop_assert!(matches!(v, PsnVerdict::Start | PsnVerdict::InOrder), "{i}: {v:?}");
        }
        prop_assert_eq!((t.gap_events, t.missing, t.retransmitted), (0, 0, 0));
        let exp = psn_add(start, n);
        prop_assert_eq!(t.expected, exp);
        let v = t.observe(psn_add(exp, PSN_HALF), 1, 0, false);
        prop_assert_eq!(v, PsnVerdict::Behind { expected: exp });
        prop_assert_eq!(t.expected, exp);
        let v = t.observe(psn_add(exp, PSN_HALF - 1), 1, 0, false);
        prop_assert_eq!(v, PsnVerdict::Ahead { expected: exp, missing: PSN_HALF - 1 });
        prop_assert_eq!((t.gap_events, t.missing, t.retransmitted),
                        (1, u64::from(PSN_HALF - 1), 1));
    }
}

// ---------------------------------------------------------------------------------------------
// ICRC masking.

/// Opcodes with a defined layout on RoCEv2 (every transport, CNPs included).
fn valid_opcode() -> impl Strategy<Value = u8> {
    (0u8..=0xbf).prop_filter("defined opcode", |&o| Opcode(o).layout().is_some())
}

prop_compose! {
    fn valid_frame()(opcode in valid_opcode(), se in any::<bool>(), m in any::<bool>(),
                     pkey in any::<u16>(), qp in 0u32..(1 << 24), psn in 0u32..(1 << 24),
                     ack_req in any::<bool>(), fecn in any::<bool>(), becn in any::<bool>(),
                     tos in any::<u8>(), ttl in any::<u8>(), ip_id in any::<u16>(),
                     src in any::<[u8; 4]>(), dst in any::<[u8; 4]>(), sport in any::<u16>(),
                     vlan in proptest::option::of(0u16..4096),
                     reth in any::<(u64, u32, u32)>(), aeth in any::<(u8, u32)>(),
                     deth in any::<(u32, u32)>(), imm in any::<u32>(),
                     atomic in any::<(u64, u32, u64, u64)>(), payload in 0usize..300)
                    -> V2 {
        let with_payload = Opcode(opcode).layout().is_some_and(|l| l.payload);
        let payload = if with_payload { payload } else { 0 };
        let pad = ((4 - payload % 4) % 4) as u8;
        V2 {
            src, dst, sport, tos, ttl, ip_id, vlan, opcode, se, m, pad, pkey, fecn, becn,
            dest_qp: qp, ack_req, psn, payload,
            ext: Ext {
                reth: Reth { va: reth.0, rkey: reth.1, dma_len: reth.2 },
                aeth: Aeth { syndrome: aeth.0, msn: aeth.1 },
                deth: Deth { qkey: deth.0, src_qp: deth.1 },
                imm: ImmDt { data: imm },
                ieth: Ieth { rkey: imm },
                atomic_eth: AtomicEth {
                    va: atomic.0, rkey: atomic.1, swap_add: atomic.2, compare: atomic.3,
                },
                atomic_ack_eth: AtomicAckEth { orig: reth.0 },
                rdeth: Rdeth { ee_context: imm },
                xrceth: Xrceth { xrc_srq: imm },
                // SEL (2 bits) and PLT (4 bits) over-wide on purpose: `Feth::emit` cuts them.
                feth: Feth { sel: (imm >> 4) as u8, plt: imm as u8 },
            },
            ..V2::default()
        }
    }
}

/// Byte offsets (from the IPv4 header) of the variant fields: TOS, TTL, IP checksum (2), UDP
/// checksum (2), BTH byte 4.
const VARIANT: [usize; 7] = [1, 8, 10, 11, 26, 27, 32];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    /// Built frames verify; any new value in any variant field keeps the ICRC good.
    #[test]
    fn icrc_variant_fields_never_matter(v in valid_frame(), which in 0usize..VARIANT.len(),
                                        value in any::<u8>()) {
        let mut f = v.build();
        prop_assert_eq!(icrc_status(&f), Some(IcrcStatus::Good));
        f[v.ip_offset() + VARIANT[which]] = value;
        prop_assert_eq!(icrc_status(&f), Some(IcrcStatus::Good), "variant byte {}", VARIANT[which]);
    }

    /// All variant fields changed at once still verify.
    #[test]
    fn icrc_all_variant_fields_at_once(v in valid_frame(), values in any::<[u8; 7]>()) {
        let mut f = v.build();
        for (k, off) in VARIANT.iter().enumerate() {
            f[v.ip_offset() + off] = values[k];
        }
        prop_assert_eq!(icrc_status(&f), Some(IcrcStatus::Good));
    }

    /// Changing any invariant byte (anything from the IPv4 header to the ICRC's last byte that
    /// is not a variant field) never leaves the status good: the ICRC turns bad, or the frame
    /// stops being a well-formed RoCE packet.
    #[test]
    fn icrc_invariant_byte_always_matters(v in valid_frame(), at in any::<prop::sample::Index>(),
                                          flip in 1u8..=255) {
        let mut f = v.build();
        let ip = v.ip_offset();
        let covered: Vec<usize> =
            (ip..f.len()).filter(|&k| !VARIANT.contains(&(k - ip))).collect();
        let k = *at.get(&covered);
        f[k] ^= flip;
        prop_assert_ne!(icrc_status(&f), Some(IcrcStatus::Good), "byte {} (IP+{})", k, k - ip);
    }
}

// ---------------------------------------------------------------------------------------------
// Every frame counted exactly once.

#[derive(Clone, Debug)]
enum Input {
    Good(V2),
    Cut(V2, usize),
    Flip(V2, usize, u8),
    Garbage(u32, Vec<u8>),
}

const LINKTYPES: [u32; 11] = [0, 1, 101, 108, 113, 197, 228, 229, 247, 276, 147];

/// A valid frame between few hosts and QPs, so that flows repeat and the PSN machinery runs.
fn small() -> impl Strategy<Value = V2> {
    valid_frame().prop_map(|mut v| {
        v.src = [10, 0, 0, v.src[0] & 3];
        v.dst = [10, 0, 0, v.dst[0] & 3];
        v.dest_qp &= 7;
        v.psn &= 0x3f;
        v
    })
}

fn input() -> impl Strategy<Value = Input> {
    prop_oneof![
        4 => small().prop_map(Input::Good),
        1 => (small(), any::<usize>()).prop_map(|(v, c)| Input::Cut(v, c)),
        1 => (small(), any::<usize>(), 1u8..=255).prop_map(|(v, k, x)| Input::Flip(v, k, x)),
        1 => (prop::sample::select(LINKTYPES.to_vec()), prop::collection::vec(any::<u8>(), 0..120))
            .prop_map(|(l, g)| Input::Garbage(l, g)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Over random frame sequences (valid, cut by a snap length, corrupted, and garbage of any
    /// link type), `frames.total` is the number of frames, `roce + other == total`, and `roce`,
    /// `malformed`, `truncated` and the ICRC counts equal what the decoder said frame by frame:
    /// each frame lands in exactly one of RoCE / other, malformed and truncated RoCE frames
    /// within `roce`. Holds with a tiny `max_flows` too (`untracked` within `roce`).
    #[test]
    fn every_frame_counted_once(seq in prop::collection::vec(input(), 0..60),
                                max_flows in prop::sample::select(vec![1usize, 3, 16_384]),
                                ts_steps in prop::collection::vec(-5_000i64..50_000, 60)) {
        let mut a = Analyzer::new(AnalyzeConfig { max_flows, ..AnalyzeConfig::default() });
        let dcfg = DecodeConfig::default();
        let (mut roce, mut other, mut malformed, mut truncated) = (0u64, 0u64, 0u64, 0u64);
        let (mut good, mut bad, mut unchecked) = (0u64, 0u64, 0u64);
        let mut ts: u64 = 1_700_000_000_000_000_000;
        let mut keys = std::collections::HashSet::new();
        for (n, inp) in seq.iter().enumerate() {
            let (lt, bytes, orig) = match inp {
                Input::Good(v) => { let f = v.build(); let l = f.len(); (1, f, l) }
                Input::Cut(v, c) => {
                    let mut f = v.build();
                    let l = f.len();
                    f.truncate(c % (l + 1));
                    (1, f, l)
                }
                Input::Flip(v, k, x) => {
                    let mut f = v.build();
                    let l = f.len();
                    f[k % l] ^= x;
                    (1, f, l)
                }
                Input::Garbage(lt, g) => (*lt, g.clone(), g.len()),
            };
            let frame = decode_frame(LinkType(lt), &bytes, orig as u32, &dcfg);
            match &frame.kind {
                FrameKind::Roce(p) => {
                    roce += 1;
                    if let Some(b) = p.bth {
                        keys.insert((p.src, p.dst, b.dest_qp));
                    }
                    malformed += u64::from(p.malformed.is_some());
                    truncated += u64::from(p.truncated);
                    match p.icrc.status {
                        IcrcStatus::Good => good += 1,
                        IcrcStatus::Bad => bad += 1,
                        IcrcStatus::Unchecked(_) => unchecked += 1,
                    }
                }
                FrameKind::Other(_) => other += 1,
            }
            ts = ts.wrapping_add_signed(ts_steps[n]);
            a.push(n as u64 + 1, ts, &frame);
        }
        let r = a.finish();
        let f = &r.frames;
        prop_assert_eq!(f.total, seq.len() as u64);
        prop_assert_eq!(f.roce + f.other, f.total);
        prop_assert_eq!((f.roce, f.other, f.malformed, f.truncated),
                        (roce, other, malformed, truncated));
        prop_assert_eq!((r.icrc.good, r.icrc.bad, r.icrc.unchecked), (good, bad, unchecked));
        prop_assert!(f.untracked <= f.roce);
        prop_assert!(r.flows.len() <= max_flows);
        // Packets in flows plus untracked frames account for every RoCE frame with a BTH.
        let in_flows: u64 = r.flows.iter().map(|fl| fl.packets).sum();
        prop_assert!(in_flows + f.untracked <= f.roce);
        // Every distinct flow is either in the table or counted once as dropped from it.
        prop_assert!(f.flows_dropped_exact);
        prop_assert_eq!(r.flows.len() as u64 + f.flows_dropped, keys.len() as u64);
        prop_assert!(f.flows_dropped <= f.untracked);
        prop_assert_eq!(f.untracked > 0, f.flows_dropped > 0);
        serde_json::to_string(&r).unwrap();
    }
}

/// QPN spraying past the flow table: `max_flows` flows are tracked, every other flow is counted
/// once in `flows_dropped` (exact up to 65 536 dropped flows, then flagged as a lower bound),
/// and every frame of theirs in `untracked`.
#[test]
fn qpn_spraying_is_bounded_and_counted() {
    let mut a = Analyzer::new(AnalyzeConfig {
        max_flows: 100,
        ..AnalyzeConfig::default()
    });
    let mut v = V2 {
        opcode: 0x0a,
        payload: 8,
        ..V2::default()
    };
    let n = 70_000u32;
    for (k, qp) in (0..n).chain(0..200).enumerate() {
        v.dest_qp = qp;
        v.psn = k as u32;
        let f = v.build();
        a.push(
            k as u64 + 1,
            1_700_000_000_000_000_000 + k as u64,
            &decode(&f),
        );
    }
    let r = a.finish();
    let f = &r.frames;
    assert_eq!((f.total, f.roce, f.other), (70_200, 70_200, 0));
    assert_eq!(r.flows.len(), 100);
    // QPs 0..100 tracked (twice each); 100..70000 dropped, the cap reached at 65 536.
    assert_eq!(f.untracked, 69_900 + 100);
    assert_eq!(f.flows_dropped, 65_536);
    assert!(!f.flows_dropped_exact);
    let in_flows: u64 = r.flows.iter().map(|fl| fl.packets).sum();
    assert_eq!(in_flows + f.untracked, f.roce);
}
