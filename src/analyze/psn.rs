//! 24-bit packet sequence number arithmetic and the per-flow PSN tracker.
//!
//! PSNs are 24-bit serial numbers (IBTA Vol 1 §9.7.1–9.7.2). Two PSNs compare through their
//! distance modulo 2^24: `d = (a − b) mod 2^24` means *a is after b* when `0 < d < 2^23` and
//! *a is before b* when `d ≥ 2^23` (so a distance of exactly 2^23 counts as before), which is
//! Linux rxe's `psn_compare()` (`(s32)((a − b) << 8)`); see `spec/roce.md` §5.

/// Number of distinct PSNs, 2^24.
pub const PSN_MODULUS: u32 = 1 << 24;
/// Mask of the 24 PSN bits.
pub const PSN_MASK: u32 = PSN_MODULUS - 1;
/// Half the PSN space, 2^23: the largest forward distance is `PSN_HALF − 1`.
pub const PSN_HALF: u32 = 1 << 23;

/// `(a − b) mod 2^24`: how far `a` lies after `b`, in `0..2^24`.
#[inline]
pub fn psn_distance(a: u32, b: u32) -> u32 {
    a.wrapping_sub(b) & PSN_MASK
}

/// Signed serial difference `a − b` in `−2^23 ..= 2^23 − 1`: positive when `a` is after `b`,
/// negative when before (distance exactly 2^23 is −2^23, i.e. before, as in rxe).
#[inline]
pub fn psn_diff(a: u32, b: u32) -> i32 {
    // Shift the 24-bit difference into the top of an i32 and back, like rxe's psn_compare.
    ((a.wrapping_sub(b) << 8) as i32) >> 8
}

/// `psn + n` modulo 2^24.
#[inline]
pub fn psn_add(psn: u32, n: u32) -> u32 {
    psn.wrapping_add(n) & PSN_MASK
}

/// PSNs an RDMA READ request of `dma_len` bytes reserves at path MTU `pmtu`:
/// `max(1, ceil(dma_len / pmtu))` (rxe `update_wqe_psn`, responder `pkts = max(1, ceil(len/mtu))`).
/// A `pmtu` of 0 is treated as 256, the smallest IB MTU. Saturates at 2^23 − 1 so that an
/// absurd DMA length (up to 2^32 − 1) cannot push the expected PSN backwards.
#[inline]
pub fn read_psn_span(dma_len: u32, pmtu: u32) -> u32 {
    let pmtu = pmtu.max(256);
    dma_len.div_ceil(pmtu).clamp(1, PSN_HALF - 1)
}

/// How one tracked packet's PSN relates to the expected PSN of its flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PsnVerdict {
    /// The first tracked packet of the flow.
    Start,
    /// Exactly the expected PSN (or inside the tolerance left by a READ of unknown PMTU).
    InOrder,
    /// A READ RESPONSE FIRST/ONLY that jumps forward to its READ's PSN: not a gap.
    Restart,
    /// Ahead of the expected PSN: a gap of `missing` PSNs.
    Ahead {
        /// The expected PSN.
        expected: u32,
        /// Number of PSNs skipped, `(psn − expected) mod 2^24`.
        missing: u32,
    },
    /// Behind the expected PSN: a retransmission or duplicate.
    Behind {
        /// The expected PSN.
        expected: u32,
    },
}

/// PSN analysis of one PSN space in one flow (issue 3, point 2).
///
/// The expected PSN starts at the first packet's PSN and never moves backwards: a packet ahead of
/// it is a gap event (its distance is added to `missing`), a packet behind it is counted as
/// retransmitted, and every packet not behind moves the expected PSN to `psn + advance`.
#[derive(Clone, Debug, Default)]
pub struct PsnTracker {
    /// PSN of the first tracked packet.
    pub first: Option<u32>,
    /// PSN of the last tracked packet in capture order.
    pub last: u32,
    /// The next PSN expected (valid once `first` is set).
    pub expected: u32,
    /// Extra PSNs ahead of `expected` still accepted as in order: set after a READ request whose
    /// PMTU was unknown, so its reservation could be anything from 1 to `ceil(len/256)` PSNs.
    pub slack: u32,
    /// Gap events.
    pub gap_events: u64,
    /// Sum of the PSNs skipped by gap events.
    pub missing: u64,
    /// Packets behind the expected PSN.
    pub retransmitted: u64,
    /// Tracked packets.
    pub packets: u64,
}

impl PsnTracker {
    /// Account one tracked packet with `psn` that consumes `advance` PSNs (≥ 1) and leaves
    /// `slack` extra PSNs of tolerance. `restart` marks a READ RESPONSE FIRST/ONLY, which may
    /// jump forward without a gap.
    pub fn observe(&mut self, psn: u32, advance: u32, slack: u32, restart: bool) -> PsnVerdict {
        let psn = psn & PSN_MASK;
        self.packets += 1;
        let verdict = match self.first {
            None => {
                self.first = Some(psn);
                PsnVerdict::Start
            }
            Some(_) => {
                let d = psn_distance(psn, self.expected);
                if d == 0 || (d <= self.slack && d < PSN_HALF) {
                    PsnVerdict::InOrder
                } else if d < PSN_HALF {
                    if restart {
                        PsnVerdict::Restart
                    } else {
                        self.gap_events += 1;
                        self.missing += u64::from(d);
                        PsnVerdict::Ahead {
                            expected: self.expected,
                            missing: d,
                        }
                    }
                } else {
                    self.retransmitted += 1;
                    PsnVerdict::Behind {
                        expected: self.expected,
                    }
                }
            }
        };
        self.last = psn;
        if !matches!(verdict, PsnVerdict::Behind { .. }) {
            self.expected = psn_add(psn, advance.max(1));
            self.slack = slack;
        }
        verdict
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serial_compare_at_wrap_edges() {
        assert_eq!(psn_diff(0, 0xFF_FFFF), 1);
        assert_eq!(psn_diff(0xFF_FFFF, 0), -1);
        assert_eq!(psn_diff(5, 0xFF_FFFB), 10);
        // Exactly half the space apart counts as "before" both ways (rxe psn_compare).
        assert_eq!(psn_diff(PSN_HALF, 0), -(PSN_HALF as i32));
        assert_eq!(psn_diff(0, PSN_HALF), -(PSN_HALF as i32));
        assert_eq!(psn_diff(PSN_HALF - 1, 0), (PSN_HALF - 1) as i32);
        assert_eq!(psn_diff(PSN_HALF + 1, 0), -(PSN_HALF as i32) + 1);
        assert_eq!(psn_distance(2, 0xFF_FFFE), 4);
        assert_eq!(psn_add(0xFF_FFFF, 1), 0);
        assert_eq!(psn_add(0xFF_FFF0, 0x20), 0x10);
        // Upper bits beyond 24 are ignored.
        assert_eq!(psn_diff(0x0100_0003, 3), 0);
    }

    #[test]
    fn wrap_is_not_a_gap() {
        let mut t = PsnTracker::default();
        for i in 0..10u32 {
            let v = t.observe(psn_add(0xFF_FFFA, i), 1, 0, false);
            assert!(
                matches!(v, PsnVerdict::Start | PsnVerdict::InOrder),
                "{i}: {v:?}"
            );
        }
        assert_eq!((t.gap_events, t.retransmitted), (0, 0));
        assert_eq!(t.first, Some(0xFF_FFFA));
        assert_eq!(t.last, 3);
    }

    #[test]
    fn gap_across_wrap_and_retransmission() {
        let mut t = PsnTracker::default();
        t.observe(0xFF_FFFE, 1, 0, false);
        // 0xFFFFFF and 0 lost.
        let v = t.observe(1, 1, 0, false);
        assert_eq!(
            v,
            PsnVerdict::Ahead {
                expected: 0xFF_FFFF,
                missing: 2
            }
        );
        // Go-back-N resend of 0xFFFFFF, 0, 1: all behind; the expected PSN stays at 2.
        for p in [0xFF_FFFF, 0, 1] {
            assert_eq!(
                t.observe(p, 1, 0, false),
                PsnVerdict::Behind { expected: 2 }
            );
        }
        assert_eq!(t.observe(2, 1, 0, false), PsnVerdict::InOrder);
        assert_eq!((t.gap_events, t.missing, t.retransmitted), (1, 2, 3));
    }

    #[test]
    fn read_reservation() {
        assert_eq!(read_psn_span(0, 1024), 1);
        assert_eq!(read_psn_span(1, 1024), 1);
        assert_eq!(read_psn_span(1024, 1024), 1);
        assert_eq!(read_psn_span(1025, 1024), 2);
        assert_eq!(read_psn_span(3000, 1024), 3);
        assert_eq!(read_psn_span(65536, 4096), 16);
        assert_eq!(read_psn_span(u32::MAX, 256), PSN_HALF - 1);
        // READ of 3000 bytes at PSN 10 reserves 10..=12; the next request at 13 is in order.
        let mut t = PsnTracker::default();
        t.observe(10, read_psn_span(3000, 1024), 0, false);
        assert_eq!(t.observe(13, 1, 0, false), PsnVerdict::InOrder);
        assert_eq!(t.gap_events, 0);
        // With +1 instead of the reservation it would have been a gap of 2.
        let mut naive = PsnTracker::default();
        naive.observe(10, 1, 0, false);
        assert!(matches!(
            naive.observe(13, 1, 0, false),
            PsnVerdict::Ahead { missing: 2, .. }
        ));
        // A READ response FIRST jumping ahead to its READ's PSN is a restart, not a gap.
        let mut r = PsnTracker::default();
        r.observe(100, 1, 0, true);
        assert_eq!(r.observe(105, 1, 0, true), PsnVerdict::Restart);
        assert_eq!(r.gap_events, 0);
    }

    proptest::proptest! {
        /// Any PSN sequence: every packet is exactly one of in order / ahead / behind, a packet
        /// that is not behind moves the expected PSN to psn + advance, a packet behind leaves it
        /// alone, and psn_diff is antisymmetric except at distance 2^23.
        #[test]
        fn tracker_invariants(psns in proptest::collection::vec(0u32..(1 << 24), 1..200),
                              adv in proptest::collection::vec(1u32..40, 200)) {
            let mut t = PsnTracker::default();
            let mut fwd = 0u64;
            for (k, &p) in psns.iter().enumerate() {
                let before = t.expected;
                let v = t.observe(p, adv[k], 0, false);
                if matches!(v, PsnVerdict::Behind { .. }) {
                    proptest::prop_assert_eq!(t.expected, before);
                } else {
                    fwd += 1;
                    proptest::prop_assert_eq!(t.expected, psn_add(p, adv[k]));
                }
                let q = psns[(k * 7) % psns.len()];
                if psn_distance(p, q) != PSN_HALF {
                    proptest::prop_assert_eq!(psn_diff(p, q), -psn_diff(q, p));
                }
            }
            proptest::prop_assert_eq!(fwd + t.retransmitted, t.packets);
            proptest::prop_assert!(t.gap_events <= t.packets);
        }
    }

    #[test]
    fn slack_for_unknown_pmtu() {
        let mut t = PsnTracker::default();
        // READ of 3000 bytes, PMTU unknown: 1 PSN for sure, up to 11 more tolerated.
        t.observe(50, 1, read_psn_span(3000, 256) - 1, false);
        assert_eq!(t.observe(53, 1, 0, false), PsnVerdict::InOrder);
        assert_eq!(t.expected, 54);
    }
}
