//! Congestion bookkeeping: ECN codepoints, CE→CNP reaction delay, CNP pacing and the sender's
//! rate around each CNP (issue 3, point 6).
//!
//! Definitions follow DCQCN (Zhu et al., SIGCOMM'15) and NVIDIA's DCQCN notes as digested in
//! `spec/roce.md` §6: the switch (CP) marks CE, the receiver NIC (NP) answers with a RoCEv2 CNP
//! (opcode 0x81, BECN set) addressed to the sender's QP, and the sender (RP) cuts its rate.
//! Lumina (`cnp_check.py`, `latency_measure.py`) measures the same quantities from mirrors.

use super::stats::Samples;
use serde::Serialize;
use std::sync::LazyLock;

/// Most recent (timestamp, cumulative bytes) points kept per flow for the "rate before" window.
const RING: usize = 64;
/// Most rate samples listed per flow.
pub const MAX_RATE_SAMPLES: usize = 32;
/// Most "rate after" windows open at once per flow.
const MAX_PENDING: usize = 8;

/// The sender's rate around one CNP.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct RateSample {
    /// Frame number of the CNP.
    pub cnp_frame: u64,
    /// Transport bytes (BTH through ICRC) per second × 8 / 1e9, in the window before the CNP.
    pub before_gbps: f64,
    /// The same in the window after the CNP.
    pub after_gbps: f64,
}

#[derive(Clone, Copy, Debug)]
struct Pending {
    cnp_frame: u64,
    start: u64,
    before_gbps: f64,
    bytes: u64,
}

/// Per data-flow rate tracker: the last `RING` (64) (time, cumulative bytes) points, and once a
/// CNP came, the windows after CNPs and their rates (boxed: most flows never get a CNP).
#[derive(Clone, Debug, Default)]
pub struct RateTracker {
    ring: Vec<(u64, u64)>,
    head: usize,
    cum: u64,
    cnp: Option<Box<RateCnp>>,
}

/// The CNP side of a [`RateTracker`].
#[derive(Clone, Debug, Default)]
struct RateCnp {
    pending: Vec<Pending>,
    /// First rate samples, in CNP order.
    samples: Vec<RateSample>,
    /// Rates before each CNP, Gb/s × 1000 (Mb/s), for the median.
    before_mbps: Samples,
    /// Rates after each CNP, Mb/s.
    after_mbps: Samples,
}

/// The statistics of a tracker without CNPs.
static NO_SAMPLES: Samples = Samples::new();

fn gbps(bytes: u64, window_ns: u64) -> f64 {
    if window_ns == 0 {
        0.0
    } else {
        bytes as f64 * 8.0 / window_ns as f64
    }
}

impl RateCnp {
    fn close_until(&mut self, ts: u64, window_ns: u64) {
        let mut i = 0;
        while i < self.pending.len() {
            if ts >= self.pending[i].start.saturating_add(window_ns) {
                let p = self.pending.remove(i);
                self.record(p, window_ns);
            } else {
                i += 1;
            }
        }
    }

    fn record(&mut self, p: Pending, window_ns: u64) {
        let after = gbps(p.bytes, window_ns);
        self.before_mbps.add((p.before_gbps * 1000.0) as u64);
        self.after_mbps.add((after * 1000.0) as u64);
        if self.samples.len() < MAX_RATE_SAMPLES {
            self.samples.push(RateSample {
                cnp_frame: p.cnp_frame,
                before_gbps: p.before_gbps,
                after_gbps: after,
            });
        }
    }
}

impl RateTracker {
    /// Account `bytes` sent at `ts` by the flow; closes "after" windows that have ended.
    pub fn packet(&mut self, ts: u64, bytes: u64, window_ns: u64) {
        if let Some(c) = &mut self.cnp {
            c.close_until(ts, window_ns);
            for p in &mut c.pending {
                p.bytes += bytes;
            }
        }
        self.cum += bytes;
        if self.ring.len() < RING {
            self.ring.push((ts, self.cum));
        } else {
            self.ring[self.head] = (ts, self.cum);
            self.head = (self.head + 1) % RING;
        }
    }

    /// Keep only the newest point of the ring, in a buffer of its own size: for a flow that
    /// sent nothing for longer than the rate window, the points before its newest can no
    /// longer be the base of a later CNP's "before" window (that window starts after the
    /// newest point, which is then the base; see [`RateTracker::cnp`]), so the result is the
    /// same. Frees up to 1 KiB (64 points of 16 bytes) per idle flow ([`super::idle`]).
    pub fn collapse(&mut self) {
        if self.ring.len() <= 1 {
            return;
        }
        let newest = if self.ring.len() < RING {
            self.ring[self.ring.len() - 1]
        } else {
            self.ring[(self.head + RING - 1) % RING]
        };
        self.ring = vec![newest];
        self.head = 0;
    }

    /// First rate samples, in CNP order.
    pub fn samples(&self) -> &[RateSample] {
        self.cnp.as_ref().map_or(&[], |c| &c.samples)
    }

    /// Rates before each CNP, Mb/s.
    pub fn before_mbps(&self) -> &Samples {
        self.cnp.as_ref().map_or(&NO_SAMPLES, |c| &c.before_mbps)
    }

    /// Rates after each CNP, Mb/s.
    pub fn after_mbps(&self) -> &Samples {
        self.cnp.as_ref().map_or(&NO_SAMPLES, |c| &c.after_mbps)
    }

    /// A CNP for this flow at `ts`: measure the window before and open the window after.
    pub fn cnp(&mut self, ts: u64, cnp_frame: u64, window_ns: u64) {
        let c = self.cnp.get_or_insert_default();
        c.close_until(ts, window_ns);
        let from = ts.saturating_sub(window_ns);
        // Bytes sent in [from, ts): cumulative now minus cumulative at the last point before
        // `from` (the ring may not reach that far back; then count what it holds).
        let mut base: Option<u64> = None;
        let mut oldest: Option<(u64, u64)> = None;
        for &(t, c) in &self.ring {
            if t < from && base.is_none_or(|b| c > b) {
                base = Some(c);
            }
            if oldest.is_none_or(|(ot, _)| t < ot) {
                oldest = Some((t, c));
            }
        }
        let before_bytes = match (base, oldest) {
            (Some(b), _) => self.cum - b,
            // Everything in the ring is inside the window (or nothing was sent).
            (None, Some((_, c))) if self.ring.len() == RING => self.cum - c,
            _ => self.cum,
        };
        let p = Pending {
            cnp_frame,
            start: ts,
            before_gbps: gbps(before_bytes, window_ns),
            bytes: 0,
        };
        let c = self.cnp.get_or_insert_default();
        if c.pending.len() >= MAX_PENDING {
            let old = c.pending.remove(0);
            c.record(old, window_ns);
        }
        c.pending.push(p);
    }

    /// Close every open window at the end of the capture (their "after" rate counts the bytes
    /// seen until then over the full window).
    pub fn finish(&mut self, window_ns: u64) {
        if let Some(c) = &mut self.cnp {
            for p in std::mem::take(&mut c.pending) {
                c.record(p, window_ns);
            }
        }
    }
}

/// Per-flow congestion state.
#[derive(Clone, Debug, Default)]
pub struct Congestion {
    /// Packets per ECN codepoint: Not-ECT, ECT(1), ECT(0), CE (the codepoint's value).
    pub ecn: [u64; 4],
    /// Packets without an IP ECN field (RoCEv1, native IB).
    pub no_ecn: u64,
    /// CNPs carried by this flow (addressed to this flow's destination QP).
    pub cnps: u64,
    /// Timestamp of the latest CE packet since the last CNP for this flow's sender.
    pub unanswered_ce: Option<u64>,
    /// Sender rate around CNPs (this flow being the data flow).
    pub rate: RateTracker,
    /// The CE→CNP reaction and CNP pacing, once there is any (boxed: most flows see none).
    reaction: Option<Box<Reaction>>,
}

/// The CNP side of a flow's [`Congestion`].
#[derive(Clone, Debug, Default)]
pub struct Reaction {
    /// CE→CNP delays (this flow being the CE-marked data flow), ns.
    pub ce_to_cnp: Samples,
    /// Previous CNP in this flow, ns.
    pub last_cnp: Option<u64>,
    /// CNP inter-arrival times in this flow, ns.
    pub cnp_gap: Samples,
    /// Time of the last PSN-sequence NAK for this flow's requests, ns.
    pub last_nak: Option<u64>,
    /// Time of the last CNP for this flow's sender not yet found near a NAK, ns.
    pub lone_cnp: Option<u64>,
    /// CNPs for this flow's sender within one RTT of a PSN-sequence NAK for its requests.
    pub cnps_with_nak: u64,
    /// Frame of the flow's first CE-marked data packet (evidence for the findings, issue 34;
    /// here rather than in the flow's cold state, which is 656 bytes: a flow that is only
    /// CE-marked, or only carries CNPs, needs none of it).
    pub first_ce_frame: Option<u64>,
    /// Frame of the first CNP the flow carries.
    pub first_cnp_frame: Option<u64>,
    /// Packets with BTH FECN set (InfiniBand congestion marking; RoCEv2 NICs mark ECN instead).
    pub fecn: u64,
    /// Packets with BTH BECN set (every RoCEv2 CNP).
    pub becn: u64,
}

/// The reaction of a flow without CNPs or NAKs.
static NO_REACTION: LazyLock<Reaction> = LazyLock::new(Reaction::default);

impl Congestion {
    /// The CNP reaction state (all empty until a CNP or NAK).
    pub fn reaction(&self) -> &Reaction {
        self.reaction.as_deref().unwrap_or(&NO_REACTION)
    }

    /// The CNP reaction state, allocated on first use.
    pub fn reaction_mut(&mut self) -> &mut Reaction {
        self.reaction.get_or_insert_default()
    }

    /// A CNP for this (data) flow's sender at `ts`; `rtt` is the flow's mean ACK RTT, ns,
    /// when measured. Flagged when a NAK came less than one RTT before.
    pub fn cnp_seen(&mut self, ts: u64, rtt: Option<u64>) {
        self.reaction_mut().cnp_seen(ts, rtt);
    }

    /// A PSN-sequence NAK for this flow's requests at `ts`: flags a CNP less than one RTT
    /// before it.
    pub fn nak_seen(&mut self, ts: u64, rtt: Option<u64>) {
        self.reaction_mut().nak_seen(ts, rtt);
    }
}

impl Reaction {
    fn cnp_seen(&mut self, ts: u64, rtt: Option<u64>) {
        let near = matches!((self.last_nak, rtt), (Some(n), Some(r)) if ts.saturating_sub(n) <= r);
        if near {
            self.cnps_with_nak += 1;
            self.lone_cnp = None;
        } else {
            self.lone_cnp = Some(ts);
        }
    }

    fn nak_seen(&mut self, ts: u64, rtt: Option<u64>) {
        if let (Some(c), Some(r)) = (self.lone_cnp, rtt)
            && ts.saturating_sub(c) <= r
        {
            self.cnps_with_nak += 1;
            self.lone_cnp = None;
        }
        self.last_nak = Some(ts);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_before_and_after() {
        let mut r = RateTracker::default();
        let w = 10_000; // 10 µs
        // 1000 bytes every 1 µs for 20 µs: 8 Gb/s.
        for i in 0..20u64 {
            r.packet(i * 1000, 1000, w);
        }
        r.cnp(20_000, 7, w);
        // Then 1000 bytes every 2 µs: 4 Gb/s.
        for i in 0..10u64 {
            r.packet(20_000 + i * 2000, 1000, w);
        }
        r.packet(40_000, 1000, w);
        r.finish(w);
        assert_eq!(r.samples().len(), 1);
        let s = r.samples()[0];
        assert_eq!(s.cnp_frame, 7);
        assert!((s.before_gbps - 8.0).abs() < 1e-9, "{}", s.before_gbps);
        assert!((s.after_gbps - 4.0).abs() < 1e-9, "{}", s.after_gbps);
    }
}
