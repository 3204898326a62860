//! Giving back the buffers of idle flows (issue 38: `read -q`'s peak memory).
//!
//! A flow's growable buffers — the rate tracker's ring of its last 64 packets, the queues of
//! requests awaiting their ACK or response, the units awaiting the MSN check, the latency
//! reservoirs — keep the capacity they grew to after the flow goes quiet. On a capture whose
//! flows come and go (jobs, connections set up and torn down, the benchmark's tiled scenarios)
//! most flows of the table are idle at any time, and those buffers were the larger part of
//! the analysis' heap. Every [`SWEEP_EVERY`] frames the flows idle for longer than
//! [`IDLE_NS`] give back what they do not use: the ring keeps its newest point (which is all a
//! later CNP can use, [`super::congestion::RateTracker::collapse`]) and the queues and
//! reservoirs their contents. No result changes; the freed blocks are reused by the flows
//! that are active.

use super::Analyzer;
use super::flow::Flow;

/// Frames between two sweeps of the flow table (a power of two: the test is a mask). A sweep
/// visits every flow (at most `--max-flows`, 16,384 by default), so its cost per frame stays
/// below one flow visit.
pub(super) const SWEEP_EVERY: u64 = 1 << 16;

/// Least time without a packet (ns) after which a flow counts as idle: the rate window, and at
/// least 1 ms so that flows pausing between bursts are not shrunk and regrown over and over.
const IDLE_NS: u64 = super::cnp_rate::WINDOW_MAX_NS;

impl Analyzer {
    /// Shrink the buffers of every flow idle at `now` (ns, capture time): see the module doc.
    /// Out of line: it runs once every [`SWEEP_EVERY`] frames.
    #[cold]
    #[inline(never)]
    pub(super) fn sweep_idle(&mut self, now: u64) {
        let idle = IDLE_NS;
        for f in &mut self.flows {
            if f.last_ts.saturating_add(idle) < now {
                shrink(f);
            }
        }
    }
}

/// Give back the unused capacity of flow `f`'s buffers (its contents stay, but for the rate
/// ring's points older than the newest).
fn shrink(f: &mut Flow) {
    f.cong.rate.collapse();
    f.awaiting.shrink_to_fit();
    f.outstanding.shrink_to_fit();
    f.unit_psns.shrink_to_fit();
    f.pending_acks.shrink_to_fit();
    f.ack_rtt.shrink_to_fit();
    if let Some(c) = &mut f.cold {
        c.open_gaps.shrink_to_fit();
        for s in [
            &mut c.nak_delay,
            &mut c.retx_delay,
            &mut c.timeout_delay,
            &mut c.rnr_delay,
            &mut c.rnr_timer_us,
        ] {
            s.shrink_to_fit();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::congestion::RateTracker;

    /// A CNP train after an idle spell longer than the longest window measures the same rates
    /// from the collapsed rings as from the full ones (its window before reaches back 1 ms at
    /// most, so only points after the spell count).
    #[test]
    fn a_collapsed_ring_gives_the_same_rates() {
        let mut full = RateTracker::default();
        // 100 packets of 1000 bytes, 1 µs apart: the fine ring (64 points) wraps.
        for i in 0..100u64 {
            full.packet(i * 1_000, 1_000);
        }
        let mut collapsed = full.clone();
        collapsed.collapse();
        for r in [&mut full, &mut collapsed] {
            // Idle for 2 ms, then 20 packets of 500 bytes 2 µs apart and two CNPs 20 µs apart
            // (a train with a 20 µs window): 500 bytes per 2 µs before, 2 Gb/s; then 1000 bytes
            // a µs after, 8 Gb/s.
            for i in 0..20u64 {
                r.packet(2_100_000 + i * 2_000, 500);
            }
            r.cnp(2_139_000, 7);
            r.cnp(2_159_000, 8);
            for i in 1..=40u64 {
                r.packet(2_159_000 + i * 1_000, 1_000);
            }
            r.finish();
        }
        assert_eq!(full.samples().len(), 1);
        let (a, b) = (full.samples()[0], collapsed.samples()[0]);
        assert!((a.before_gbps - 2.0).abs() < 1e-9, "{}", a.before_gbps);
        assert!((a.after_gbps - 8.0).abs() < 1e-9, "{}", a.after_gbps);
        assert_eq!(a.before_gbps, b.before_gbps);
        assert_eq!(a.after_gbps, b.after_gbps);
    }
}
