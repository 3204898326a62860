//! One finding (issue 34): its severity, kind, summary, cause, advice and evidence, as
//! `analyze::findings` derives them from a finished report and the report carries them.

use serde::Serialize;
use std::fmt;

/// How bad a finding is. Ordered: `Error` < `Warning` < `Info`, the order [`derive()`](super::findings::derive()) sorts in.
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
