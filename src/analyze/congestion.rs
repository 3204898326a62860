//! Congestion bookkeeping: ECN codepoints, CE→CNP reaction delay, CNP pacing and the sender's
//! rate around each train of CNPs (issue 3, point 6; the rate in `analyze::cnp_rate`).
//!
//! Definitions follow DCQCN (Zhu et al., SIGCOMM'15) and NVIDIA's DCQCN notes as digested in
//! `spec/roce.md` §6: the switch (CP) marks CE, the receiver NIC (NP) answers with a RoCEv2 CNP
//! (opcode 0x81, BECN set) addressed to the sender's QP, and the sender (RP) cuts its rate.
//! Lumina (`cnp_check.py`, `latency_measure.py`) measures the same quantities from mirrors.

use super::stats::Samples;
use std::sync::LazyLock;

pub use super::cnp_rate::{MAX_RATE_SAMPLES, RateSample, RateTracker};

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
