//! The analysis report: plain data, `serde::Serialize`, in the JSON shape of issue 3 point 7.
//! Every time is in nanoseconds since the Unix epoch (`*_ts_ns`) or a duration in ns (`*_ns`).

use super::congestion::RateSample;
use super::message::Message;
use super::message::MessageStatus;
use super::stats::Stat;
pub use super::tap::PsnSpace;
pub use super::warning::Warning;
use crate::decode::{Address, Transport};
use serde::Serialize;

/// An address in the JSON report: its text (`10.0.0.1`, `fe80::1`, `LID 3`), written straight
/// from its `Display` without a `String` of its own.
fn address_text<S: serde::Serializer>(a: &Address, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(a)
}

/// The whole report.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Things the user should know that make numbers below doubtful (e.g. a `--mtu` the capture
    /// contradicts).
    /// Serialized as their English text (`output::warning`).
    pub warnings: Vec<Warning>,
    /// Frame counts.
    pub frames: FrameCounts,
    /// ICRC verification counts.
    pub icrc: IcrcCounts,
    /// Path MTU used for READ PSN reservation: the `--mtu` override, else the payload size of
    /// FIRST/MIDDLE packets seen most often (256–4096), else `null`.
    pub pmtu: Option<u32>,
    /// One entry per flow, in order of first appearance.
    pub flows: Vec<FlowReport>,
    /// One entry per paired connection (QP pair).
    pub connections: Vec<ConnectionReport>,
    /// Gap events with their loss stories (at most `AnalyzeConfig::keep_gaps`).
    pub gaps: Vec<GapReport>,
    /// PSN-sequence NAKs whose PSN was captured but that no gap in the capture explains: the
    /// packet was lost after the capture point or dropped by the responder (the first 1000).
    pub unexplained_naks: Vec<UnexplainedNak>,
    /// Reassembled messages, only when `AnalyzeConfig::keep_messages` is set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages: Option<Vec<Message>>,
    /// What went wrong, where, the likely cause and what to change, errors first
    /// (`findings::derive()`, issue 34).
    pub findings: Vec<super::finding::Finding>,
}

/// Frame counts over the whole capture.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FrameCounts {
    /// Every frame pushed.
    pub total: u64,
    /// Frames decoded as RoCEv1, RoCEv2 or native IB (malformed and truncated ones included).
    pub roce: u64,
    /// All other frames.
    pub other: u64,
    /// RoCE frames that are not a plausible IBA packet.
    pub malformed: u64,
    /// RoCE frames cut by the snap length.
    pub truncated: u64,
    /// Truncated RoCE frames cut before the end of the transport headers the analysis needs
    /// (BTH; the AETH of ACKs, NAKs and responses; the DETH of UD; the RETH of a READ
    /// request): counted per flow, but their PSN, message and response bookkeeping is missing,
    /// and the report's warnings name the counters this leaves uncertain. Frames cut only in
    /// their payload (or in a WRITE's RETH, ImmDt, AtomicETH, FETH) are analysed from the
    /// length fields as if whole.
    pub headers_cut: u64,
    /// Packets to QP0 (subnet management, permissive LIDs): counted, not PSN-tracked, since
    /// SMPs from different managers share one destination QP (IBTA Vol 1 ch. 14).
    pub qp0: u64,
    /// RoCE frames not analysed because `max_flows` flows already existed.
    pub untracked: u64,
    /// Distinct flows (source, destination, DestQP) dropped from the flow table because
    /// `max_flows` flows already existed: their frames are the `untracked` ones. Exact while
    /// `flows_dropped_exact`; past 65 536 dropped flows only new ones are no longer told apart
    /// from repeats (bounded memory), and the count is a lower bound.
    pub flows_dropped: u64,
    /// Whether `flows_dropped` is exact (false: a lower bound).
    pub flows_dropped_exact: bool,
    /// Capture time of the first frame.
    pub first_ts_ns: Option<u64>,
    /// Capture time of the last frame.
    pub last_ts_ns: Option<u64>,
    /// The first malformed frames (at most 1000): frame number and reason.
    pub malformed_frames: Vec<MalformedFrame>,
}

/// One malformed frame.
#[derive(Clone, Debug, Serialize)]
pub struct MalformedFrame {
    /// Frame number (1-based).
    pub frame: u64,
    /// Why it is malformed.
    pub reason: String,
}

/// ICRC counts over RoCE frames.
#[derive(Clone, Debug, Default, Serialize)]
pub struct IcrcCounts {
    /// ICRC equal to the computed one.
    pub good: u64,
    /// ICRC different from the computed one.
    pub bad: u64,
    /// Not verifiable (truncated, malformed, or no rule).
    pub unchecked: u64,
    /// Frame numbers with a bad ICRC (the first 1000).
    pub bad_frames: Vec<u64>,
}

/// NAK counts by code (AETH syndrome `011xxxxx`, IBTA Vol 1 Table 43).
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct NakCounts {
    /// Code 0: PSN sequence error.
    pub psn_seq_err: u64,
    /// Code 1: invalid request.
    pub invalid_request: u64,
    /// Code 2: remote access error.
    pub remote_access: u64,
    /// Code 3: remote operational error.
    pub remote_op: u64,
    /// Code 4: invalid RD request.
    pub invalid_rd: u64,
    /// Reserved codes and AETHs of the reserved syndrome type.
    pub reserved: u64,
}

/// PSN analysis of a flow.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct PsnReport {
    /// PSN of the first tracked packet (requests; READ responses when the flow has no requests).
    pub first: Option<u32>,
    /// PSN of the last tracked packet in capture order (same choice of space as `first`).
    pub last: Option<u32>,
    /// Gap events (both PSN spaces).
    pub gap_events: u64,
    /// PSNs skipped by gap events.
    pub missing: u64,
    /// Tracked packets behind the expected PSN (reliable transports; on UC a duplicate).
    pub retransmitted: u64,
    /// UD packets repeating a PSN their sender (source address + DETH source QP) already
    /// used: duplicates, never retransmissions (UD does not retransmit).
    pub duplicates: u64,
}

/// Messages of one kind: what the responder executed and what it refused.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CountBytes {
    /// Messages executed (status `ok`).
    pub count: u64,
    /// Their payload bytes, from the packets' length fields (wire bytes, not captured bytes).
    pub bytes: u64,
    /// Messages refused by a fatal NAK (status `nak_*`).
    pub failed: u64,
}

/// Messages by kind.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct MessageCounts {
    /// SEND, SEND WITH IMMEDIATE / INVALIDATE, UD SEND.
    pub send: CountBytes,
    /// RDMA WRITE, WRITE WITH IMMEDIATE.
    pub write: CountBytes,
    /// RDMA READ, counted in the flow that carries the responses.
    pub read: CountBytes,
    /// CmpSwap, FetchAdd (bytes 0: the operands are headers), done when their ATOMIC
    /// ACKNOWLEDGE arrives.
    pub atomic: CountBytes,
    /// FLUSH (bytes 0), done when its zero-length READ RESPONSE ONLY arrives.
    pub flush: CountBytes,
    /// ATOMIC WRITE (bytes 8), done when its zero-length READ RESPONSE ONLY arrives.
    pub atomic_write: CountBytes,
}

/// Response packets that answer no request of the capture.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct ResponseCounts {
    /// READ responses and ATOMIC ACKNOWLEDGEs whose request precedes the capture (or whose
    /// requester's flow is not known): not messages.
    pub unmatched: u64,
    /// Responses repeating one already seen (answers to duplicate requests).
    pub duplicate: u64,
}

/// The fatal NAK that put a QP pair in the error state (IBTA Vol 1 §9.9.2).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct QpErrorReport {
    /// Frame of the NAK.
    pub frame: u64,
    /// Its PSN.
    pub psn: u32,
    /// Status it gave the refused request (`nak_remote_access`, …).
    pub status: MessageStatus,
    /// Packets of this flow after the NAK, counted but not analysed as a normal exchange.
    pub later_packets: u64,
}

/// A PSN-sequence NAK that no gap in the capture explains.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct UnexplainedNak {
    /// Flow of the requests it answers.
    pub flow: usize,
    /// Frame of the NAK.
    pub frame: u64,
    /// PSN the NAK carries (the responder's expected PSN).
    pub psn: u32,
}

/// Priority values of a flow's packets: DSCP (6 bits, IPv4 TOS / IPv6 traffic class >> 2) and
/// the innermost 802.1Q tag's PCP (3 bits), value → packets. PFC acts on one of them.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PriorityReport {
    /// DSCP of data packets (every packet but CNPs).
    pub dscp: CountMap<u8>,
    /// PCP of data packets.
    pub pcp: CountMap<u8>,
    /// DSCP of CNPs.
    pub cnp_dscp: CountMap<u8>,
    /// PCP of CNPs.
    pub cnp_pcp: CountMap<u8>,
}

/// Counts by key, in key order, serialized as a JSON object (`{"46": 10}`) like a map. A
/// sorted vector: a flow has one or a few keys, and a `BTreeMap` node costs ~200 bytes even
/// for one, which adds up over a table of 16 384 flows.
#[derive(Clone, PartialEq, Eq)]
pub struct CountMap<K>(Vec<(K, u64)>);

impl<K> Default for CountMap<K> {
    fn default() -> Self {
        CountMap(Vec::new())
    }
}

impl<K: Ord> FromIterator<(K, u64)> for CountMap<K> {
    /// Counts of equal keys are added.
    fn from_iter<I: IntoIterator<Item = (K, u64)>>(it: I) -> Self {
        let mut v: Vec<(K, u64)> = it.into_iter().collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v.dedup_by(|b, a| {
            let same = a.0 == b.0;
            if same {
                a.1 += b.1;
            }
            same
        });
        v.shrink_to_fit();
        CountMap(v)
    }
}

impl<K> CountMap<K> {
    /// (key, count) in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &u64)> {
        self.0.iter().map(|(k, n)| (k, n))
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there is no key.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The count of `key`.
    pub fn get<Q: Ord + ?Sized>(&self, key: &Q) -> Option<u64>
    where
        K: std::borrow::Borrow<Q>,
    {
        self.find(key).copied()
    }

    fn find<Q: Ord + ?Sized>(&self, key: &Q) -> Option<&u64>
    where
        K: std::borrow::Borrow<Q>,
    {
        self.0
            .iter()
            .find(|(k, _)| k.borrow() == key)
            .map(|(_, n)| n)
    }

    /// Whether `key` has a count.
    pub fn contains_key<Q: Ord + ?Sized>(&self, key: &Q) -> bool
    where
        K: std::borrow::Borrow<Q>,
    {
        self.get(key).is_some()
    }
}

impl<K: std::borrow::Borrow<Q>, Q: Ord + ?Sized> std::ops::Index<&Q> for CountMap<K> {
    type Output = u64;

    /// The count of `key`; panics when absent, as a map's index does.
    fn index(&self, key: &Q) -> &u64 {
        self.find(key).expect("no such key")
    }
}

impl<K: Serialize> Serialize for CountMap<K> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, n) in &self.0 {
            m.serialize_entry(k, n)?;
        }
        m.end()
    }
}

impl<K: std::fmt::Debug> std::fmt::Debug for CountMap<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.0.iter().map(|(k, n)| (k, n)))
            .finish()
    }
}

/// ECN codepoint counts (RFC 3168).
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct EcnCounts {
    /// `00`.
    pub not_ect: u64,
    /// `10`.
    pub ect0: u64,
    /// `01`.
    pub ect1: u64,
    /// `11`: congestion experienced.
    pub ce: u64,
}

/// Loss and retransmission figures of a flow's requests (Lumina's three latencies).
#[derive(Clone, Debug, Default, Serialize)]
pub struct LossReport {
    /// Retransmission episodes that followed a PSN-sequence NAK.
    pub nak_retransmissions: u64,
    /// Retransmission episodes that followed an RNR NAK.
    pub rnr_retransmissions: u64,
    /// Retransmission episodes with no NAK before them: timeouts.
    pub timeouts: u64,
    /// READ requests re-issued from inside their range after lost responses.
    pub read_reissues: u64,
    /// PSN-sequence NAKs whose PSN was captured but no gap explains (`unexplained_naks`).
    pub unexplained_naks: u64,
    /// Gap → NAK delay (NAK generation latency), ns.
    pub nak_delay_ns: Option<Box<Stat>>,
    /// NAK → retransmission delay (NAK reaction latency), ns.
    pub retx_delay_ns: Option<Box<Stat>>,
    /// Previous packet → timeout retransmission delay, ns.
    pub timeout_delay_ns: Option<Box<Stat>>,
    /// RNR NAK → retry delay, ns.
    pub rnr_delay_ns: Option<Box<Stat>>,
    /// RNR NAK timers announced, µs.
    pub rnr_timer_us: Option<Box<Stat>>,
}

/// One flow.
#[derive(Clone, Debug, Serialize)]
pub struct FlowReport {
    /// Index in `flows`.
    pub id: usize,
    /// Source address (IP, GID, or `LID n`; serialized as that text).
    #[serde(serialize_with = "address_text")]
    pub src: Address,
    /// Destination address.
    #[serde(serialize_with = "address_text")]
    pub dst: Address,
    /// BTH DestQP.
    pub dest_qp: u32,
    /// Mirror session (ERSPAN session ID or VXLAN VNI) under `--encap-session`; absent
    /// otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<u32>,
    /// `RC`, `UC`, `UD`, `RD`, `XRC`, or `CNP` for a flow of CNPs to an unknown sender.
    pub transport: Transport,
    /// RoCEv2 UDP source port of the first packet.
    pub udp_src_port: Option<u16>,
    /// Index of the connection this flow belongs to; `null` when unpaired.
    pub connection: Option<usize>,
    /// Packets (every opcode, CNPs included).
    pub packets: u64,
    /// Bytes after every transport header, without pad and ICRC (a CNP's 16 reserved bytes are
    /// header).
    pub payload_bytes: u64,
    /// Packets by opcode name (`RC_RDMA_WRITE_FIRST`, `CNP`, …).
    pub opcodes: CountMap<&'static str>,
    /// ACKNOWLEDGE packets whose AETH is an ACK.
    pub acks: u64,
    /// NAKs by code.
    pub naks: NakCounts,
    /// RNR NAKs.
    pub rnr_naks: u64,
    /// PSN analysis.
    pub psn: PsnReport,
    /// Completed messages by kind.
    pub messages: MessageCounts,
    /// Messages with status `incomplete`: begun but not completed by the end of the capture,
    /// READs / atomics / FLUSHes / ATOMIC WRITEs without a response, requests flushed by a
    /// fatal NAK.
    pub incomplete_messages: u64,
    /// Responses that answer no captured request.
    pub responses: ResponseCounts,
    /// The fatal NAK that ended this QP pair, when one did.
    pub qp_error: Option<QpErrorReport>,
    /// DSCP and PCP values seen.
    pub priority: PriorityReport,
    /// Completed WRITE / READ messages whose delivered bytes differ from the RETH DMA length.
    pub dma_len_mismatches: u64,
    /// ECN codepoints.
    pub ecn: EcnCounts,
    /// `ecn.ce / packets with an ECN field`, 0 when none.
    pub ce_fraction: f64,
    /// CNPs in this flow (addressed to this flow's destination QP, i.e. the notified sender).
    pub cnps: u64,
    /// Packets with BTH FECN set.
    pub fecn: u64,
    /// Packets with BTH BECN set.
    pub becn: u64,
    /// Loss, retransmission and RNR figures of this flow's requests.
    pub loss: LossReport,
    /// ACK RTT of this flow's AckReq requests, ns.
    pub ack_rtt_ns: Option<Stat>,
    /// Path MTU inferred from this flow's FIRST/MIDDLE payloads.
    pub pmtu: Option<u32>,
    /// First packet time.
    pub first_ts_ns: u64,
    /// Last packet time.
    pub last_ts_ns: u64,
    /// Evidence frames and retry runs the findings use (not serialized: the findings carry
    /// what they use of it).
    #[serde(skip)]
    pub evidence: super::evidence::FlowEvidence,
}

/// One end of a connection.
#[derive(Clone, Debug, Serialize)]
pub struct Endpoint {
    /// Address (serialized as its text).
    #[serde(serialize_with = "address_text")]
    pub addr: Address,
    /// QP number.
    pub qp: u32,
}

/// MSN cross-check of one responder direction (spec/roce.md §3: the MSN counts the request
/// messages the responder completed; an AETH with PSN q covers the messages ending at or before
/// q, before q for a NAK).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct MsnCheck {
    /// Flow carrying the AETHs.
    pub aeth_flow: usize,
    /// MSN advance from the first to the last AETH whose PSN moved forward.
    pub msn_delta: u64,
    /// Request messages the reverse flow completed that those AETHs cover (SEND/WRITE
    /// reassembled, READ requests and atomics accepted).
    pub messages: u64,
    /// AETHs checked (after the first one, which sets the base).
    pub checked_aeths: u64,
    /// AETHs whose MSN advance differed from the messages covered.
    pub mismatched_aeths: u64,
    /// `msn_delta != messages` at the last AETH.
    pub mismatch: bool,
}

/// Congestion seen in one direction of a connection.
#[derive(Clone, Debug, Serialize)]
pub struct DirCongestion {
    /// Flow whose packets were CE-marked (the data direction).
    pub data_flow: usize,
    /// Flow carrying the CNPs back to the data flow's sender.
    pub cnp_flow: usize,
    /// CE-marked packets in the data flow.
    pub ce_marked: u64,
    /// CE fraction of the data flow.
    pub ce_fraction: f64,
    /// CNPs in the CNP flow.
    pub cnps: u64,
    /// Latest CE-marked packet before each CNP → that CNP, ns (under CNP pacing, earlier marks
    /// in the window did not trigger it).
    pub ce_to_cnp_ns: Option<Stat>,
    /// CNP inter-arrival, ns (its minimum reveals the NP's CNP pacing).
    pub cnp_interarrival_ns: Option<Stat>,
    /// CNPs within one ACK RTT (the data flow's mean) of a PSN-sequence NAK on the same connection (loss and
    /// congestion at once); 0 when no RTT was measured.
    pub cnps_with_nak: u64,
    /// Median of the trains' rate windows, ns (0 without CNPs): a train's window is its
    /// median CNP spacing clamped to [10 µs, 1 ms] (`analyze::cnp_rate`).
    pub rate_window_ns: u64,
    /// Median over the CNP trains of the sender rate in the window before a train's first
    /// CNP, Gb/s (transport bytes).
    pub rate_before_gbps_median: Option<f64>,
    /// Median over the CNP trains of the sender rate in the window after a train's last CNP,
    /// Gb/s.
    pub rate_after_gbps_median: Option<f64>,
    /// The first 32 CNP trains' before/after rates.
    pub rate_samples: Vec<RateSample>,
}

/// A QP pair.
#[derive(Clone, Debug, Serialize)]
pub struct ConnectionReport {
    /// Index in `connections`.
    pub id: usize,
    /// The two flows: `flows[0]` goes a → b, `flows[1]` b → a.
    pub flows: [usize; 2],
    /// Source of `flows[0]` with its QP (the DestQP of `flows[1]`).
    pub a: Endpoint,
    /// Destination of `flows[0]` with its QP.
    pub b: Endpoint,
    /// Transport.
    pub transport: Transport,
    /// How the pair was found: `udp_sport`, `psn`, `deth`, `cnp`, `cm`.
    pub paired_by: PairedBy,
    /// Packets both ways.
    pub packets: u64,
    /// ACK RTT of AckReq requests both ways, ns.
    pub ack_rtt_ns: Option<Stat>,
    /// MSN cross-checks, one per direction that carried AETHs.
    pub msn: Vec<MsnCheck>,
    /// Congestion per direction that had CE marks or CNPs.
    pub congestion: Vec<DirCongestion>,
}

/// The NAK that reported a gap.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct NakMatch {
    /// NAK frame.
    pub frame: u64,
    /// NAK time.
    pub ts_ns: u64,
    /// Gap → NAK, ns; `None` when the NAK is stamped before the gap (clocks that disagree:
    /// see the report's warnings).
    pub delay_ns: Option<u64>,
}

/// The retransmission that filled a gap.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Retransmission {
    /// Frame carrying the missing PSN again.
    pub frame: u64,
    /// Its time.
    pub ts_ns: u64,
    /// NAK → retransmission, or previous packet → retransmission for a timeout, ns; `None`
    /// when the retransmission is stamped before what it follows.
    pub delay_ns: Option<u64>,
    /// `nak`, `timeout`, or `read_reissue`.
    pub trigger: RetxTrigger,
}

/// How a connection's two flows were found to belong together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PairedBy {
    /// Same RoCEv2 UDP source port both ways (the flow-label entropy convention of
    /// `rdma_flow_label_to_udp_sport()`, symmetric in the two QPNs).
    UdpSport,
    /// ACK / NAK / READ-response PSNs echoing the request PSNs of the reverse flow.
    Psn,
    /// A CNP addressed to the DETH source QP of a UD sender.
    Cnp,
    /// CM ConnectRequest / ConnectReply MADs on QP1.
    Cm,
    /// UD flows whose DETH source QPs name each other's destination QP.
    Deth,
}

impl PairedBy {
    /// JSON / text name (the serde name).
    pub fn name(self) -> &'static str {
        match self {
            PairedBy::UdpSport => "udp_sport",
            PairedBy::Psn => "psn",
            PairedBy::Cnp => "cnp",
            PairedBy::Cm => "cm",
            PairedBy::Deth => "deth",
        }
    }
}

/// What made the requester send a missing PSN again (IBTA Vol 1 §9.7.5.1.1 NAK, §9.7.6.1.3
/// local ACK timeout); serialized in snake case (`nak`, `timeout`, `read_reissue`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RetxTrigger {
    /// A PSN-sequence NAK carrying the missing PSN.
    Nak,
    /// No NAK before it: the local ACK timeout.
    Timeout,
    /// A READ request re-issued from the missing response's PSN: the requester's implicit NAK
    /// (§9.7.5.1.3).
    ReadReissue,
}

impl RetxTrigger {
    /// JSON / text name (the serde name).
    pub fn name(self) -> &'static str {
        match self {
            RetxTrigger::Nak => "nak",
            RetxTrigger::Timeout => "timeout",
            RetxTrigger::ReadReissue => "read_reissue",
        }
    }
}

/// What the capture tells of a gap's missing PSNs (see [`GapReport::verdict`]); serialized in
/// snake case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GapVerdict {
    /// Sent again after a PSN-sequence NAK (or a READ re-issue).
    NakRetransmitted,
    /// Sent again after the local ACK timeout, no NAK seen.
    TimeoutRetransmitted,
    /// No NAK, no retransmission, and a later ACK covers the missing PSNs: they reached the
    /// responder and the capture missed them.
    CaptureLoss,
    /// A UD sender's PSNs not seen here: UD does not retransmit, they may have gone to hosts
    /// outside the capture.
    UdUnseen,
    /// None of the above.
    Unresolved,
}

impl GapVerdict {
    /// JSON / text name (the serde name).
    pub fn name(self) -> &'static str {
        match self {
            GapVerdict::NakRetransmitted => "nak_retransmitted",
            GapVerdict::TimeoutRetransmitted => "timeout_retransmitted",
            GapVerdict::CaptureLoss => "capture_loss",
            GapVerdict::UdUnseen => "ud_unseen",
            GapVerdict::Unresolved => "unresolved",
        }
    }
}

/// One gap event and its loss story.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct GapReport {
    /// Flow index.
    pub flow: usize,
    /// Frame that revealed the gap.
    pub frame: u64,
    /// Its time.
    pub ts_ns: u64,
    /// `request`, `read_response` or `ud` PSN space.
    pub space: PsnSpace,
    /// Expected PSN (first missing).
    pub expected_psn: u32,
    /// PSN received instead.
    pub received_psn: u32,
    /// PSNs missing.
    pub missing: u32,
    /// The PSN-sequence NAK carrying `expected_psn`, if seen.
    pub nak: Option<NakMatch>,
    /// The retransmission of `expected_psn`, if seen.
    pub retransmission: Option<Retransmission>,
    /// Frame of a later ACK covering the missing PSNs while no NAK or retransmission of them
    /// was seen, the evidence that they reached the responder (for a READ response gap: the
    /// READ's last response, the READ completing without a re-issue).
    pub ack_frame: Option<u64>,
    /// `nak_retransmitted`, `timeout_retransmitted`, `capture_loss` (no NAK, no
    /// retransmission, and a later ACK covers the missing PSNs: they reached the responder and
    /// the capture missed them), `ud_unseen` (a UD sender's PSNs not seen here: UD does not
    /// retransmit, they may have gone to hosts outside the capture) or `unresolved`.
    pub verdict: GapVerdict,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON string of `v`, without its quotes.
    fn json_name<T: Serialize>(v: T) -> String {
        serde_json::to_string(&v)
            .unwrap()
            .trim_matches('"')
            .to_string()
    }

    /// Every report enum serializes to the string the report carried before it was typed (the
    /// names README's report JSON and the Parquet gaps table document), and `name()` agrees.
    #[test]
    fn enum_names_are_the_former_strings() {
        use GapVerdict as V;
        for (v, s) in [
            (V::NakRetransmitted, "nak_retransmitted"),
            (V::TimeoutRetransmitted, "timeout_retransmitted"),
            (V::CaptureLoss, "capture_loss"),
            (V::UdUnseen, "ud_unseen"),
            (V::Unresolved, "unresolved"),
        ] {
            assert_eq!((json_name(v), v.name()), (s.to_string(), s));
        }
        use RetxTrigger as T;
        for (v, s) in [
            (T::Nak, "nak"),
            (T::Timeout, "timeout"),
            (T::ReadReissue, "read_reissue"),
        ] {
            assert_eq!((json_name(v), v.name()), (s.to_string(), s));
        }
        for (v, s) in [
            (PsnSpace::Request, "request"),
            (PsnSpace::ReadResponse, "read_response"),
            (PsnSpace::Ud, "ud"),
        ] {
            assert_eq!((json_name(v), v.name()), (s.to_string(), s));
        }
        for (v, s) in [
            (PairedBy::UdpSport, "udp_sport"),
            (PairedBy::Psn, "psn"),
            (PairedBy::Cnp, "cnp"),
            (PairedBy::Cm, "cm"),
            (PairedBy::Deth, "deth"),
        ] {
            assert_eq!((json_name(v), v.name()), (s.to_string(), s));
        }
        for (v, s) in [
            (Transport::Rc, "RC"),
            (Transport::Uc, "UC"),
            (Transport::Rd, "RD"),
            (Transport::Ud, "UD"),
            (Transport::Cnp, "CNP"),
            (Transport::Xrc, "XRC"),
            (Transport::Vendor, "MSP"),
        ] {
            assert_eq!((json_name(v), v.name()), (s.to_string(), s));
        }
        use MessageStatus as M;
        for (v, s) in [
            (M::Ok, "ok"),
            (M::Incomplete, "incomplete"),
            (M::NakInvalidRequest, "nak_invalid_request"),
            (M::NakRemoteAccess, "nak_remote_access"),
            (M::NakRemoteOp, "nak_remote_op"),
            (M::NakInvalidRd, "nak_invalid_rd"),
        ] {
            assert_eq!((json_name(v), v.name()), (s.to_string(), s));
        }
    }
}
