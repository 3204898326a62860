//! The sender's rate before and after a train of CNPs (issue 39): DCQCN's reaction point (RP)
//! cuts its rate on each CNP and recovers once CNPs stop (Zhu et al., SIGCOMM'15; `spec/roce.md`
//! §6, "what to measure" 5: the rate in windows before and after each CNP *or CNP burst*).
//!
//! Measuring around every CNP with a fixed window fails both ways: CNPs come every few µs under
//! congestion (ConnectX `min_time_between_cnps` is 4 µs), so the window after one CNP is the
//! window before the next and the two medians come out the same; and a fixed window is too short
//! to average a sender paced by CNPs hundreds of µs apart. So:
//!
//! - **Trains.** The CNPs to one sender form a train while each comes within
//!   [`TRAIN_GAP_NS`] (1 ms) of the one before; a longer silence ends it (a DCQCN sender has
//!   begun to recover by then: `rpg_time_reset` is 300 µs, the paper's timer 55 µs).
//! - **Window.** Each train's window is its median CNP spacing (the lower median of up to
//!   [`MAX_SPACINGS`] spacings) clamped to [`WINDOW_MIN_NS`, `WINDOW_MAX_NS`] = [10 µs, 1 ms];
//!   a train of one CNP, whose neighbours are over 1 ms away, gets 1 ms.
//! - **Before** is measured in the window ending at the train's first CNP, **after** in the
//!   window starting at its last; each is lengthened (up to 1 ms) until it holds
//!   [`MIN_PACKETS`] (8) packets.
//! - **Rate** is the transport bytes (BTH through ICRC) of the window's packets after its first
//!   one, × 8, over the time from its first packet to its last (Gb/s): exact for a steady
//!   sender whatever the window's phase against its packets; 0 with fewer than two packets.
//!
//! Memory is bounded per flow: the last [`RING`] (64) packets' (time, cumulative bytes), and one
//! point per [`COARSE_STEP_NS`] (≈ 34 µs) for the last [`COARSE`] (32) steps, so that a window
//! of 1 ms can be measured back from a CNP; a window reaching beyond the 64 packets starts at
//! the first coarse point inside it (up to 34 µs late). The state of the train in progress
//! (those points copied at its first CNP, its spacings) is allocated only for flows with CNPs.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use serde::Serialize;

use super::stats::Samples;

/// Shortest before/after window, ns (10 µs).
pub const WINDOW_MIN_NS: u64 = 10_000;
/// Longest before/after window, ns (1 ms).
pub const WINDOW_MAX_NS: u64 = 1_000_000;
/// A CNP more than this after the previous one to the same sender starts a new train, ns
/// (1 ms, the longest window: a train's after-window ends before the next train begins).
pub const TRAIN_GAP_NS: u64 = WINDOW_MAX_NS;
/// Fewest packets a window is lengthened to hold (up to [`WINDOW_MAX_NS`]).
pub const MIN_PACKETS: u64 = 8;
/// Most CNP spacings of one train kept for its median.
pub const MAX_SPACINGS: usize = 1024;
/// Most rate samples (trains) listed per flow.
pub const MAX_RATE_SAMPLES: usize = 32;
/// Most recent packets whose (time, cumulative bytes) each flow keeps.
const RING: usize = 64;
/// Coarse points kept per flow, one per [`COARSE_STEP_NS`].
const COARSE: usize = 32;
/// Least time between two coarse points, ns: the 31 steps between the oldest and newest of
/// [`COARSE`] points span more than [`WINDOW_MAX_NS`].
const COARSE_STEP_NS: u64 = WINDOW_MAX_NS / (COARSE as u64 - 3);

/// The sender's rate around one train of CNPs.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct RateSample {
    /// Frame number of the train's first CNP.
    pub cnp_frame: u64,
    /// Frame number of the train's last CNP.
    pub last_cnp_frame: u64,
    /// CNPs in the train.
    pub cnps: u64,
    /// The train's window, ns: its median CNP spacing clamped to [10 µs, 1 ms].
    pub window_ns: u64,
    /// Transport bytes (BTH through ICRC) × 8 / ns, Gb/s, in the window before the first CNP.
    pub before_gbps: f64,
    /// The same in the window after the last CNP.
    pub after_gbps: f64,
}

/// A packet of the flow: its time (ns) and the flow's transport bytes up to and including it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Point {
    ts: u64,
    bytes: u64,
}

/// Gb/s from `a` to `b`: the bytes sent after `a` up to `b`, over the time between them (0 when
/// no time passed: fewer than two packets).
fn gbps(a: Point, b: Point) -> f64 {
    if b.ts > a.ts {
        b.bytes.saturating_sub(a.bytes) as f64 * 8.0 / (b.ts - a.ts) as f64
    } else {
        0.0
    }
}

/// A ring of the newest points.
#[derive(Clone, Debug, Default)]
struct Ring {
    v: Vec<Point>,
    /// The oldest point's index once the ring is full.
    head: usize,
}

impl Ring {
    fn push(&mut self, p: Point, cap: usize) {
        if self.v.len() < cap {
            self.v.push(p);
        } else {
            self.v[self.head] = p;
            self.head = (self.head + 1) % cap;
        }
    }

    /// Keep only the newest point, in a buffer of its own size ([`RateTracker::collapse`]).
    fn keep_newest(&mut self) {
        if let Some(&p) = self.iter().last() {
            self.v = vec![p];
            self.head = 0;
        }
    }

    /// The points, oldest first.
    fn iter(&self) -> impl Iterator<Item = &Point> {
        let (new, old) = self.v.split_at(self.head);
        old.iter().chain(new)
    }
}

/// The flow's recent packets, for the window before a CNP.
#[derive(Clone, Debug, Default)]
struct History {
    fine: Ring,
    coarse: Ring,
    /// When the next coarse point is due, ns (one comparison a packet).
    coarse_due: u64,
    bytes: u64,
}

impl History {
    /// Account `bytes` sent at `ts`; the flow's point after it.
    fn push(&mut self, ts: u64, bytes: u64) -> Point {
        self.bytes += bytes;
        let p = Point {
            ts,
            bytes: self.bytes,
        };
        self.fine.push(p, RING);
        if ts >= self.coarse_due {
            self.coarse.push(p, COARSE);
            self.coarse_due = ts.saturating_add(COARSE_STEP_NS);
        }
        p
    }

    /// What the window before a CNP at `t0` can need: the points since `t0` − 1 ms in the
    /// order they came (their cumulative bytes grow; with timestamps that go backwards, their
    /// times may not), and the newest point that leaves [`MIN_PACKETS`] packets up to the newest.
    fn before(&self, t0: u64) -> Before {
        let from = t0.saturating_sub(WINDOW_MAX_NS);
        let mut points: Vec<Point> = self
            .coarse
            .iter()
            .chain(self.fine.iter())
            .filter(|p| p.ts >= from)
            .copied()
            .collect();
        points.sort_by_key(|p| p.bytes);
        points.dedup();
        let nth = self.fine.v.len().checked_sub(MIN_PACKETS as usize);
        let min_base = nth
            .and_then(|k| self.fine.iter().nth(k).copied())
            .filter(|p| p.ts >= from);
        Before {
            t0,
            points,
            min_base,
        }
    }
}

/// The points before a train's first CNP (at `t0`), kept until the train's window is known.
#[derive(Clone, Debug, Default)]
struct Before {
    t0: u64,
    points: Vec<Point>,
    min_base: Option<Point>,
}

impl Before {
    /// Gb/s in the `window` ns before `t0`, lengthened to [`MIN_PACKETS`] packets.
    fn gbps(&self, window: u64) -> f64 {
        let from = self.t0.saturating_sub(window);
        let Some(&newest) = self.points.last() else {
            return 0.0;
        };
        let mut base = self.points.iter().find(|p| p.ts >= from).copied();
        if let Some(m) = self.min_base
            && base.is_none_or(|b| m.ts < b.ts)
        {
            base = Some(m);
        }
        base.map_or(0.0, |b| gbps(b, newest))
    }
}

/// The window after a train's latest CNP, filled as packets come.
#[derive(Clone, Copy, Debug, Default)]
struct After {
    start: u64,
    window: u64,
    first: Option<Point>,
    last: Option<Point>,
    packets: u64,
    closed: bool,
}

impl After {
    fn new(start: u64, window: u64) -> After {
        After {
            start,
            window,
            ..After::default()
        }
    }

    fn packet(&mut self, p: Point) {
        if self.closed {
            return;
        }
        let elapsed = p.ts.saturating_sub(self.start);
        if elapsed > WINDOW_MAX_NS || (elapsed > self.window && self.packets >= MIN_PACKETS) {
            self.closed = true;
            return;
        }
        self.first.get_or_insert(p);
        self.last = Some(p);
        self.packets += 1;
    }

    fn gbps(&self) -> f64 {
        match (self.first, self.last) {
            (Some(a), Some(b)) => gbps(a, b),
            _ => 0.0,
        }
    }
}

/// The running lower median of a train's CNP spacings (two heaps; the first [`MAX_SPACINGS`]).
#[derive(Clone, Debug, Default)]
struct RunningMedian {
    lo: BinaryHeap<u64>,
    hi: BinaryHeap<Reverse<u64>>,
}

impl RunningMedian {
    fn add(&mut self, v: u64) {
        if self.lo.len() + self.hi.len() >= MAX_SPACINGS {
            return;
        }
        if self.lo.peek().is_none_or(|&m| v <= m) {
            self.lo.push(v);
        } else {
            self.hi.push(Reverse(v));
        }
        // `lo` holds ⌈n/2⌉ values: its top is the sample at rank ⌈n/2⌉.
        if self.lo.len() > self.hi.len() + 1 {
            if let Some(x) = self.lo.pop() {
                self.hi.push(Reverse(x));
            }
        } else if self.hi.len() > self.lo.len()
            && let Some(Reverse(x)) = self.hi.pop()
        {
            self.lo.push(x);
        }
    }

    fn median(&self) -> Option<u64> {
        self.lo.peek().copied()
    }
}

/// A train of CNPs in progress.
#[derive(Clone, Debug)]
struct Train {
    first_frame: u64,
    last_frame: u64,
    last_ts: u64,
    cnps: u64,
    spacing: RunningMedian,
    before: Before,
    after: After,
}

impl Train {
    /// The window: the median spacing clamped to [10 µs, 1 ms]; 1 ms for a single CNP.
    fn window(&self) -> u64 {
        self.spacing
            .median()
            .map_or(WINDOW_MAX_NS, |m| m.clamp(WINDOW_MIN_NS, WINDOW_MAX_NS))
    }
}

/// The CNP side of a [`RateTracker`].
#[derive(Clone, Debug, Default)]
struct RateCnp {
    train: Option<Train>,
    /// First rate samples, in train order.
    samples: Vec<RateSample>,
    /// Rates before each train, Mb/s, for the median.
    before_mbps: Samples,
    /// Rates after each train, Mb/s.
    after_mbps: Samples,
    /// Each train's window, ns.
    windows: Samples,
}

impl RateCnp {
    /// Record the train in progress, if any.
    fn end_train(&mut self) {
        let Some(t) = self.train.take() else { return };
        let window = t.window();
        let s = RateSample {
            cnp_frame: t.first_frame,
            last_cnp_frame: t.last_frame,
            cnps: t.cnps,
            window_ns: window,
            before_gbps: t.before.gbps(window),
            after_gbps: t.after.gbps(),
        };
        self.before_mbps.add((s.before_gbps * 1000.0) as u64);
        self.after_mbps.add((s.after_gbps * 1000.0) as u64);
        self.windows.add(window);
        if self.samples.len() < MAX_RATE_SAMPLES {
            self.samples.push(s);
        }
    }
}

/// Per data-flow rate tracker: the flow's recent packets, and once a CNP came for its sender,
/// the train in progress and the rates of the trains (boxed: most flows never get a CNP).
#[derive(Clone, Debug, Default)]
pub struct RateTracker {
    history: History,
    cnp: Option<Box<RateCnp>>,
}

/// The statistics of a tracker without CNPs.
static NO_SAMPLES: Samples = Samples::new();

impl RateTracker {
    /// Account `bytes` (transport bytes) sent by the flow at `ts` (ns).
    pub fn packet(&mut self, ts: u64, bytes: u64) {
        let p = self.history.push(ts, bytes);
        if let Some(c) = &mut self.cnp
            && let Some(t) = &mut c.train
        {
            if ts > t.last_ts.saturating_add(TRAIN_GAP_NS) {
                c.end_train();
            } else {
                t.after.packet(p);
            }
        }
    }

    /// Keep only the newest point of each ring, for a flow that sent nothing for longer than
    /// `WINDOW_MAX_NS` (1 ms; `analyze::idle`): a later CNP's window before it reaches back at most
    /// that far, so it never reads the points dropped and the result is the same. Frees up to
    /// 1.5 KiB (96 points of 16 bytes) per idle flow. A train in progress is kept whole.
    pub fn collapse(&mut self) {
        self.history.fine.keep_newest();
        self.history.coarse.keep_newest();
    }

    /// A CNP for this flow's sender at `ts` (ns), frame `cnp_frame`: it starts a train, or
    /// continues the one in progress (and restarts its after-window).
    pub fn cnp(&mut self, ts: u64, cnp_frame: u64) {
        let c = self.cnp.get_or_insert_default();
        if c.train
            .as_ref()
            .is_some_and(|t| ts > t.last_ts.saturating_add(TRAIN_GAP_NS))
        {
            c.end_train();
        }
        match &mut c.train {
            Some(t) => {
                t.spacing.add(ts.saturating_sub(t.last_ts));
                t.last_ts = ts;
                t.last_frame = cnp_frame;
                t.cnps += 1;
                t.after = After::new(ts, t.window());
            }
            None => {
                c.train = Some(Train {
                    first_frame: cnp_frame,
                    last_frame: cnp_frame,
                    last_ts: ts,
                    cnps: 1,
                    spacing: RunningMedian::default(),
                    before: self.history.before(ts),
                    after: After::new(ts, WINDOW_MAX_NS),
                });
            }
        }
    }

    /// Record the train still in progress at the end of the capture (its after-window holds
    /// what was seen until then).
    pub fn finish(&mut self) {
        if let Some(c) = &mut self.cnp {
            c.end_train();
        }
    }

    /// First rate samples (one per train), in train order.
    pub fn samples(&self) -> &[RateSample] {
        self.cnp.as_ref().map_or(&[], |c| &c.samples)
    }

    /// Rates before each train, Mb/s.
    pub fn before_mbps(&self) -> &Samples {
        self.cnp.as_ref().map_or(&NO_SAMPLES, |c| &c.before_mbps)
    }

    /// Rates after each train, Mb/s.
    pub fn after_mbps(&self) -> &Samples {
        self.cnp.as_ref().map_or(&NO_SAMPLES, |c| &c.after_mbps)
    }

    /// Each train's window, ns.
    pub fn windows_ns(&self) -> &Samples {
        self.cnp.as_ref().map_or(&NO_SAMPLES, |c| &c.windows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: u64 = 1_000;

    /// A sender of 1000-byte packets: `gbps` from `from` until `to` (ns); returns the time
    /// its next packet would go.
    fn send(r: &mut RateTracker, from: u64, to: u64, gbps: f64) -> u64 {
        let step = (1000.0 * 8.0 / gbps).round() as u64;
        let mut t = from;
        while t < to {
            r.packet(t, 1000);
            t += step;
        }
        t
    }

    /// 20 Gb/s, then a train of `n` CNPs `spacing` apart during which the sender runs at
    /// 10 Gb/s, then 5 Gb/s for 2 ms: before the train 20, after it 5, whatever the spacing.
    fn one_train(spacing: u64, n: u64) -> RateTracker {
        let mut r = RateTracker::default();
        let t0 = 2_000 * US;
        let mut t = send(&mut r, 0, t0, 20.0);
        for k in 0..n {
            let at = t0 + k * spacing;
            t = send(&mut r, t, at, 10.0);
            r.cnp(at, 100 + k);
        }
        let last = t0 + (n - 1) * spacing;
        send(&mut r, t.max(last + 1), last + 2_000 * US, 5.0);
        r.finish();
        r
    }

    #[test]
    fn a_train_is_measured_before_its_first_cnp_and_after_its_last() {
        for (spacing, window) in [(4 * US, 10 * US), (50 * US, 50 * US), (500 * US, 500 * US)] {
            let r = one_train(spacing, 5);
            let s = r.samples();
            assert_eq!(s.len(), 1, "one train at {spacing} ns");
            let s = s[0];
            assert_eq!((s.cnp_frame, s.last_cnp_frame, s.cnps), (100, 104, 5));
            assert_eq!(s.window_ns, window);
            assert!((s.before_gbps - 20.0).abs() < 1e-9, "{spacing}: {s:?}");
            assert!((s.after_gbps - 5.0).abs() < 1e-9, "{spacing}: {s:?}");
            assert_eq!(r.before_mbps().stat().unwrap().median, 20_000);
            assert_eq!(r.after_mbps().stat().unwrap().median, 5_000);
        }
    }

    #[test]
    fn trains_over_a_millisecond_apart_are_measured_apart() {
        let mut r = RateTracker::default();
        let mut t = send(&mut r, 0, 1_000 * US, 20.0);
        r.cnp(1_000 * US, 1);
        t = send(&mut r, t, 3_000 * US, 8.0);
        r.cnp(3_000 * US, 2);
        r.cnp(3_020 * US, 3);
        send(&mut r, t, 5_000 * US, 4.0);
        r.finish();
        let s = r.samples();
        assert_eq!(s.len(), 2, "{s:?}");
        // A lone CNP: the longest window, 1 ms each side.
        assert_eq!((s[0].cnps, s[0].window_ns), (1, WINDOW_MAX_NS));
        assert!((s[0].before_gbps - 20.0).abs() < 1e-9, "{s:?}");
        assert!((s[0].after_gbps - 8.0).abs() < 1e-9, "{s:?}");
        assert_eq!((s[1].cnps, s[1].window_ns), (2, 20 * US));
        assert!((s[1].before_gbps - 8.0).abs() < 1e-9, "{s:?}");
        assert!((s[1].after_gbps - 4.0).abs() < 1e-9, "{s:?}");
        assert_eq!(r.windows_ns().stat().unwrap().count, 2);
    }

    #[test]
    fn a_sparse_window_is_lengthened_to_eight_packets() {
        // One packet every 5 µs (1.6 Gb/s): a 10 µs window holds two; lengthened to eight
        // packets, it measures the same steady rate. After the train, none for 1 ms: 0.
        let mut r = RateTracker::default();
        let mut t = 0;
        while t < 200 * US {
            r.packet(t, 1000);
            t += 5 * US;
        }
        r.cnp(200 * US, 1);
        r.cnp(204 * US, 2);
        r.packet(2_000 * US, 1000);
        r.finish();
        let s = r.samples()[0];
        assert_eq!(s.window_ns, WINDOW_MIN_NS);
        assert!((s.before_gbps - 1.6).abs() < 1e-9, "{s:?}");
        assert_eq!(s.after_gbps, 0.0);
    }

    #[test]
    fn the_running_median_is_the_lower_median() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        for n in 1..60 {
            let mut m = RunningMedian::default();
            let mut v = Vec::new();
            for _ in 0..n {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let x = seed % 50;
                m.add(x);
                v.push(x);
            }
            v.sort_unstable();
            assert_eq!(m.median(), Some(v[v.len().div_ceil(2) - 1]), "{v:?}");
        }
    }

    #[test]
    fn timestamps_that_go_backwards_do_not_panic() {
        let mut r = RateTracker::default();
        for (i, t) in [50, 10, 40, 0, 30, 20, 5, 45, 1, 2, 3]
            .into_iter()
            .enumerate()
        {
            r.packet(t * US, 100 + i as u64);
        }
        r.cnp(25 * US, 1);
        r.cnp(5 * US, 2);
        r.packet(0, 100);
        r.packet(u64::MAX, 100);
        r.cnp(u64::MAX, 3);
        r.finish();
        assert_eq!(r.samples().len(), 2);
        assert!(
            r.samples()
                .iter()
                .all(|s| s.before_gbps.is_finite() && s.after_gbps >= 0.0)
        );
    }
}
