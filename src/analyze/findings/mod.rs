//! Findings (issue 34): what went wrong, where, the likely cause and what to change, read off a
//! finished [`Report`] and ranked by severity — the step from counters to a story.
//!
//! [`derive()`] runs once, when the report is built; it reads only the report (its counters, gap
//! stories and the per-flow [`FlowEvidence`](super::evidence::FlowEvidence) gathered on the
//! analysis' rare paths), so it adds nothing per packet. Each rule family has its module:
//! [`retry`] (retry exhaustion, ACK timeouts, silent responders), [`loss`] (PSN gaps, capture
//! loss, RNR and fatal NAKs), [`congestion`] (CE / CNP, ECN, priorities) and [`config`] (ICRC,
//! malformed frames, MTU, the configuration the wire reveals). The evidence rule of each kind is
//! in README, "Findings", with the IBTA sections it rests on.

pub mod config;
pub mod congestion;
pub mod loss;
pub mod retry;

use super::report::{FlowReport, Report};
use crate::decode::Transport;
use serde::Serialize;
use std::fmt;

/// How bad a finding is. Ordered: `Error` < `Warning` < `Info`, the order [`derive()`] sorts in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Something failed: work requests completed in error, or the data was damaged.
    Error,
    /// Something cost time or throughput, or a setting is likely wrong.
    Warning,
    /// What the capture shows or cannot decide; nothing wrong by itself.
    Info,
}

impl Severity {
    /// The snake_case name (`error`, `warning`, `info`).
    pub fn name(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a finding is about (its JSON / Parquet `kind`, snake_case). README, "Findings", gives
/// each kind's evidence rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// A request PSN sent retry_cnt + 1 times at the local ACK timeout, unanswered, then
    /// silence on the QP: `IBV_WC_RETRY_EXC_ERR` (12) at the requester.
    RetryExhausted,
    /// Requests on a reliable QP and not a single packet back on the connection.
    NoResponse,
    /// Only one direction of every connection was captured: whether responders answered cannot
    /// be told.
    OneSidedCapture,
    /// Requests re-sent after the local ACK timeout (no NAK before them).
    AckTimeout,
    /// RNR NAKs: the responder had no receive WQE posted.
    RnrNak,
    /// PSN gaps recovered by a NAK or go-back-N (lost in the network).
    PacketLoss,
    /// PSN gaps the responder ACKed: the capture, not the network, missed those packets.
    CaptureLoss,
    /// CE marks and CNPs: DCQCN at work.
    Congestion,
    /// CNPs with no CE mark seen in the data they answer.
    CnpWithoutCe,
    /// RoCE data sent Not-ECT: switches cannot mark it and DCQCN never acts.
    EcnNotEnabled,
    /// DSCP / PCP values that differ within a flow or a connection, or data in class 0 while
    /// CNPs use another.
    Priority,
    /// Remote access / invalid request / remote operational NAKs: the QP pair went to error.
    FatalNak,
    /// Packets whose ICRC does not match.
    IcrcErrors,
    /// RoCE frames that are not a plausible IBA packet.
    Malformed,
    /// The path MTU in use (and a mismatch between the two sides).
    Mtu,
    /// What the wire reveals of the configuration.
    InferredConfig,
    /// correlate: a link between two capture points loses packets.
    LinkLoss,
    /// correlate: the clock offset between two captures could not be bounded.
    ClockUnbounded,
    /// correlate: one direction between two capture points takes much longer than the other.
    AsymmetricDelay,
}

impl FindingKind {
    /// The snake_case name, as in JSON.
    pub fn name(self) -> &'static str {
        use FindingKind::*;
        match self {
            RetryExhausted => "retry_exhausted",
            NoResponse => "no_response",
            OneSidedCapture => "one_sided_capture",
            AckTimeout => "ack_timeout",
            RnrNak => "rnr_nak",
            PacketLoss => "packet_loss",
            CaptureLoss => "capture_loss",
            Congestion => "congestion",
            CnpWithoutCe => "cnp_without_ce",
            EcnNotEnabled => "ecn_not_enabled",
            Priority => "priority",
            FatalNak => "fatal_nak",
            IcrcErrors => "icrc_errors",
            Malformed => "malformed",
            Mtu => "mtu",
            InferredConfig => "inferred_config",
            LinkLoss => "link_loss",
            ClockUnbounded => "clock_unbounded",
            AsymmetricDelay => "asymmetric_delay",
        }
    }
}

impl fmt::Display for FindingKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Most evidence frames a finding lists.
pub const MAX_EVIDENCE: usize = 8;

/// One finding. The kind-specific numbers are `None` (absent from JSON) where they do not apply.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Finding {
    /// How bad.
    pub severity: Severity,
    /// What about.
    pub kind: FindingKind,
    /// One sentence a person reads: what happened, where.
    pub summary: String,
    /// The likely cause.
    pub cause: String,
    /// What to check or change (NIC, switch, NCCL, verbs setting names).
    pub advice: String,
    /// Evidence frame numbers (1-based, as in Wireshark), ascending, at most [`MAX_EVIDENCE`].
    pub frames: Vec<u64>,
    /// The flow concerned (index in `flows`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flow: Option<usize>,
    /// The connection concerned (index in `connections`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connection: Option<usize>,
    /// BTH DestQP of the flow concerned (24 bits).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dest_qp: Option<u32>,
    /// The PSN concerned (24 bits).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub psn: Option<u32>,
    /// Sends of one PSN: the original and its retries.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempts: Option<u32>,
    /// The QP's `retry_cnt` (3 bits) the retries show: attempts − 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_cnt: Option<u32>,
    /// The QP's local ACK `timeout` attribute (5 bits; NCCL_IB_TIMEOUT): the largest e with
    /// 4.096 µs · 2^e ≤ `spacing_ns` (IBTA Vol 1 §9.7.6.1.3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_exp: Option<u8>,
    /// Shortest interval between two sends of the retried PSN, ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spacing_ns: Option<u64>,
    /// How many events the finding counts (gaps, NAKs, CE marks, frames, flows: see `summary`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    /// PSNs missing (packet and capture loss).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing: Option<u64>,
    /// Time spent waiting or recovering, ns (loss: gap → retransmission; RNR: NAK → retry).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_lost_ns: Option<u64>,
    /// RNR timer codes seen (AETH bits 4..0, IBTA Vol 1 Table 45).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rnr_timer_codes: Option<Vec<u8>>,
    /// CE-marked fraction of the data flow's packets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ce_fraction: Option<f64>,
    /// CNPs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cnps: Option<u64>,
    /// Shortest interval between CNPs to one QP (the NIC's `min_time_between_cnps`), ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cnp_interval_ns: Option<u64>,
    /// Median sender rate in the window before a CNP train, Gb/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_before_gbps: Option<f64>,
    /// Median sender rate in the window after a CNP train, Gb/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_after_gbps: Option<f64>,
    /// Path MTU, bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pmtu: Option<u32>,
    /// Data DSCP (6 bits) most packets carry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dscp: Option<u8>,
    /// Data 802.1Q PCP (3 bits) most packets carry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pcp: Option<u8>,
    /// CNP DSCP.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cnp_dscp: Option<u8>,
    /// CNP PCP.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cnp_pcp: Option<u8>,
    /// ECN codepoint the data carries (`not_ect`, `ect0`, `ect1`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecn: Option<&'static str>,
}

impl Finding {
    /// A finding with no frames and no kind-specific numbers.
    pub fn new(
        severity: Severity,
        kind: FindingKind,
        summary: String,
        cause: &str,
        advice: &str,
    ) -> Finding {
        Finding {
            severity,
            kind,
            summary,
            cause: cause.to_string(),
            advice: advice.to_string(),
            frames: Vec::new(),
            flow: None,
            connection: None,
            dest_qp: None,
            psn: None,
            attempts: None,
            retry_cnt: None,
            timeout_exp: None,
            spacing_ns: None,
            count: None,
            missing: None,
            time_lost_ns: None,
            rnr_timer_codes: None,
            ce_fraction: None,
            cnps: None,
            cnp_interval_ns: None,
            rate_before_gbps: None,
            rate_after_gbps: None,
            pmtu: None,
            dscp: None,
            pcp: None,
            cnp_dscp: None,
            cnp_pcp: None,
            ecn: None,
        }
    }

    /// Set the flow, its connection and DestQP.
    pub fn on_flow(mut self, f: &FlowReport) -> Finding {
        self.flow = Some(f.id);
        self.connection = f.connection;
        self.dest_qp = Some(f.dest_qp);
        self
    }

    /// Set the evidence frames: ascending, without repeats or zeros, at most [`MAX_EVIDENCE`].
    pub fn with_frames(mut self, frames: impl IntoIterator<Item = u64>) -> Finding {
        let mut v: Vec<u64> = frames.into_iter().filter(|&n| n > 0).collect();
        v.sort_unstable();
        v.dedup();
        v.truncate(MAX_EVIDENCE);
        self.frames = v;
        self
    }
}

/// The local ACK timeout exponent a spacing of `ns` between sends shows: the largest e in
/// 0..=31 with 4.096 µs · 2^e ≤ `ns` (IBTA Vol 1 §9.7.6.1.3: the timeout is 4.096 µs ·
/// 2^timeout, and a requester cannot retry before it expires); 0 below 4.096 µs. (The issue's
/// wording "smallest e with … ≤ spacing" is 0 for any spacing: the bound it means is this one.)
pub fn timeout_exp(ns: u64) -> u8 {
    let mut e = 0u8;
    while e < 31 && 4_096u64 << (e + 1) <= ns {
        e += 1;
    }
    e
}

/// A duration for a summary: `850 ns`, `12.5 µs`, `3.20 ms`, `1.234 s`.
pub fn dur(ns: u64) -> String {
    match ns {
        0..1_000 => format!("{ns} ns"),
        1_000..1_000_000 => format!("{:.1} µs", ns as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.2} ms", ns as f64 / 1e6),
        _ => format!("{:.3} s", ns as f64 / 1e9),
    }
}

/// `a → b QP 0x…` of a flow, for summaries.
pub fn flow_label(f: &FlowReport) -> String {
    format!("{} → {} QP {:#08x}", f.src, f.dst, f.dest_qp)
}

/// Whether the flow's transport is acknowledged (and so retransmits).
pub fn reliable(f: &FlowReport) -> bool {
    matches!(f.transport, Transport::Rc | Transport::Xrc | Transport::Rd)
}

/// The reverse flow of `f` in its connection.
pub fn peer<'r>(r: &'r Report, f: &FlowReport) -> Option<&'r FlowReport> {
    let c = r.connections.get(f.connection?)?;
    let j = if c.flows[0] == f.id {
        c.flows[1]
    } else {
        c.flows[0]
    };
    r.flows.get(j)
}

/// Every finding of `report`, errors first, then warnings, then info; within a severity in the
/// order of the kinds' value (README, "Findings") and then of the flows.
pub fn derive(report: &Report) -> Vec<Finding> {
    let mut out = Vec::new();
    retry::rules(report, &mut out);
    loss::rules(report, &mut out);
    congestion::rules(report, &mut out);
    config::rules(report, &mut out);
    out.sort_by_key(|f| (f.severity, f.kind, f.flow));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeout_exp_is_the_largest_exponent_not_above_the_spacing() {
        // 4.096 µs · 2^14 = 67.108864 ms.
        assert_eq!(timeout_exp(67_108_864), 14);
        assert_eq!(timeout_exp(67_108_863), 13);
        assert_eq!(timeout_exp(67_108_864 * 2 - 1), 14);
        assert_eq!(timeout_exp(4_096), 0);
        assert_eq!(timeout_exp(100), 0);
        assert_eq!(timeout_exp(u64::MAX), 31);
    }

    #[test]
    fn names_are_snake_case_as_serde_writes_them() {
        for k in [
            FindingKind::RetryExhausted,
            FindingKind::CnpWithoutCe,
            FindingKind::InferredConfig,
            FindingKind::OneSidedCapture,
        ] {
            assert_eq!(
                serde_json::to_string(&k).unwrap(),
                format!("\"{}\"", k.name())
            );
            assert_eq!(k.to_string(), k.name());
        }
        assert_eq!(
            serde_json::to_string(&Severity::Warning).unwrap(),
            "\"warning\""
        );
        assert!(Severity::Error < Severity::Warning && Severity::Warning < Severity::Info);
    }
}
