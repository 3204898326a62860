//! Evidence the findings (`findings/`) need beyond the report's counters: the frames and times
//! of a PSN re-sent after the local ACK timeout, the first RNR NAKs, the first CE-marked packet
//! and CNP of a flow (issue 34).
//!
//! Everything here is written on a rare path only (a timeout retransmission, an RNR NAK, the
//! first CE mark or CNP of a flow), into the flow's cold state, and is bounded: at most
//! [`MAX_FRAMES`] frames per list. Nothing is added to the per-packet path of a clean flow.

use serde::Serialize;

/// Most evidence frames kept per list (RNR NAKs, timeout retransmissions).
pub const MAX_FRAMES: usize = 4;
/// Most retransmission frames kept per retry run: `retry_cnt` is 3 bits (IBTA Vol 1 §9.7.6.1.3,
/// C9-141), so a requester re-sends a PSN at most 7 times; one more shows a run past that.
pub const MAX_RUN_FRAMES: usize = 8;

/// The sends of one request PSN after the local ACK timeout: the retries a requester makes
/// before it reports `IBV_WC_RETRY_EXC_ERR` (IBTA Vol 1 §9.7.6.1.3 and §10.8.3.2).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RetryRun {
    /// The PSN re-sent (24 bits).
    pub psn: u32,
    /// Timeout retransmissions of it in a row (the original send not counted).
    pub retries: u32,
    /// Frames of the first [`MAX_RUN_FRAMES`] retransmissions.
    pub frames: Vec<u64>,
    /// Capture time of the original send when the flow still awaited its ACK (an AckReq
    /// request), ns.
    pub original_ts_ns: Option<u64>,
    /// Time of the first retransmission, ns.
    pub first_ts_ns: u64,
    /// Time of the last retransmission, ns.
    pub last_ts_ns: u64,
    /// Frame of the last retransmission.
    pub last_frame: u64,
    /// Shortest interval between two consecutive sends of the PSN (the original included when
    /// its time is known), ns: at least the local ACK timeout the requester runs.
    pub min_spacing_ns: Option<u64>,
}

impl RetryRun {
    /// Number of times the PSN was sent: the original and the retries.
    pub fn attempts(&self) -> u32 {
        self.retries + 1
    }
}

/// A flow's evidence (in its cold state; empty for most flows).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FlowEvidence {
    /// The latest run of timeout retransmissions of one PSN (`None` before the first).
    pub retry: Option<RetryRun>,
    /// Retry runs before the latest one (each ended by progress).
    pub earlier_runs: u64,
    /// Frames of the first [`MAX_FRAMES`] timeout retransmissions.
    pub timeout_frames: Vec<u64>,
    /// Frames of the first [`MAX_FRAMES`] RNR NAKs this flow carries.
    pub rnr_frames: Vec<u64>,
    /// RNR timer codes (AETH bits 4..0, IBTA Vol 1 Table 45) seen, as a bit set: bit c for
    /// code c.
    pub rnr_codes: u32,
    /// Frame of the first CE-marked data packet.
    pub first_ce_frame: Option<u64>,
    /// Frame of the first CNP this flow carries.
    pub first_cnp_frame: Option<u64>,
    /// Frame of the flow's first packet (filled when the report is built).
    pub first_frame: u64,
    /// Request packets the flow's source sent, PSN-tracked (filled when the report is built).
    pub requests: u64,
}

fn push_capped(v: &mut Vec<u64>, frame: u64, cap: usize) {
    if v.len() < cap {
        v.push(frame);
    }
}

impl FlowEvidence {
    /// A request re-sent at `psn` after the local ACK timeout, in `frame` at `ts` ns;
    /// `original_ts` is the time of its first send when known.
    pub fn timeout_retx(&mut self, psn: u32, frame: u64, ts: u64, original_ts: Option<u64>) {
        push_capped(&mut self.timeout_frames, frame, MAX_FRAMES);
        match &mut self.retry {
            Some(r) if r.psn == psn => {
                let gap = ts.saturating_sub(r.last_ts_ns);
                r.min_spacing_ns = Some(r.min_spacing_ns.map_or(gap, |m| m.min(gap)));
                r.retries += 1;
                r.last_ts_ns = ts;
                r.last_frame = frame;
                push_capped(&mut r.frames, frame, MAX_RUN_FRAMES);
            }
            run => {
                self.earlier_runs += u64::from(run.is_some());
                *run = Some(RetryRun {
                    psn,
                    retries: 1,
                    frames: vec![frame],
                    original_ts_ns: original_ts,
                    first_ts_ns: ts,
                    last_ts_ns: ts,
                    last_frame: frame,
                    min_spacing_ns: original_ts.and_then(|o| ts.checked_sub(o)),
                });
            }
        }
    }

    /// An RNR NAK with timer `code` in `frame`.
    pub fn rnr_nak(&mut self, frame: u64, code: u8) {
        push_capped(&mut self.rnr_frames, frame, MAX_FRAMES);
        self.rnr_codes |= 1 << (code & 0x1f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_of_one_psn_make_one_run_with_the_shortest_spacing() {
        let mut e = FlowEvidence::default();
        e.timeout_retx(7, 10, 1_000, Some(400));
        e.timeout_retx(7, 20, 1_700, None);
        e.timeout_retx(7, 30, 2_300, None);
        let r = e.retry.clone().unwrap();
        assert_eq!((r.psn, r.retries, r.attempts()), (7, 3, 4));
        assert_eq!(r.frames, vec![10, 20, 30]);
        // 1000-400 = 600, 700, 600.
        assert_eq!(r.min_spacing_ns, Some(600));
        assert_eq!(
            (r.first_ts_ns, r.last_ts_ns, r.last_frame),
            (1_000, 2_300, 30)
        );
        // Another PSN starts a new run.
        e.timeout_retx(9, 40, 9_000, None);
        let r = e.retry.unwrap();
        assert_eq!((r.psn, r.retries, r.min_spacing_ns), (9, 1, None));
        assert_eq!(e.earlier_runs, 1);
        assert_eq!(e.timeout_frames, vec![10, 20, 30, 40]);
    }

    #[test]
    fn lists_are_bounded() {
        let mut e = FlowEvidence::default();
        for k in 0..20 {
            e.timeout_retx(1, k, k * 100, None);
            e.rnr_nak(k, 14);
        }
        assert_eq!(e.timeout_frames.len(), MAX_FRAMES);
        assert_eq!(e.rnr_frames.len(), MAX_FRAMES);
        assert_eq!(e.retry.unwrap().frames.len(), MAX_RUN_FRAMES);
        assert_eq!(e.rnr_codes, 1 << 14);
    }
}
