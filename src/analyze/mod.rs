//! Streaming analysis of decoded RoCE frames: QP flows and connections, PSN gaps and
//! retransmissions, NAKs, go-back-N message reassembly, each request's outcome, ACK RTT, MSN
//! cross-check, ECN/CNP congestion, priority per flow (issues 3 and 11).
//!
//! Feed every frame, RoCE or not, to [`Analyzer::push`] in capture order, then call
//! [`Analyzer::finish`] for the [`Report`]. State is per flow (a fast hash map of at most
//! [`AnalyzeConfig::max_flows`] flows) plus bounded per-flow queues; no payload is kept, and
//! the per-packet path does not allocate once a flow's buffers have grown. The semantics
//! (24-bit serial PSN arithmetic, READ PSN reservation, go-back-N, cumulative ACKs, MSN, CNP
//! addressing) follow `spec/roce.md` §3, §5, §6: IBTA Vol 1 ch. 9 and Annex A17, Linux rxe,
//! and Lumina's checkers.
//!
//! Layout: `push` decodes nothing and decides little; it finds the flow and hands the packet to
//! one rule set.
//! - Per connection (one flow, or a flow and its peer; no other state): `requester` (request
//!   PSNs, gap stories, retransmission episodes, message assembly), `responder` (AETHs: ACK
//!   timing, NAK matching, fatal NAKs, MSN), [`outcome`] (each request's status, responses
//!   matched to requests), `ud` (UD senders' PSNs).
//! - Across connections: the flow table and its limit (`table`), QP pairing and the CM
//!   (`pairing`), CNP attribution (`cnp`), PMTU inference (here).

mod capture_gap;
pub mod cm;
pub mod congestion;
pub mod evidence;
pub mod finding;
pub mod findings;
pub mod flow;
mod gap_forks;
pub mod live;
pub mod marks;
pub mod message;
pub mod outcome;
pub mod pending;
pub mod priority;
pub mod psn;
pub mod report;
pub mod stats;
pub mod tap;
pub mod warning;

mod build;
mod cnp;
mod cnp_rate;
mod idle;
mod pairing;
mod requester;
mod responder;
mod seen;
mod table;
mod ud;

use crate::decode::{Address, ExtKind, Frame, IcrcStatus, Operation, Position, Transport};
use flow::{Flow, FlowKey};
use message::{Message, MessageStatus};
use pairing::{IdxSet, Unpaired};
use report::{GapReport, MalformedFrame, UnexplainedNak};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::VecDeque;

pub use report::Report;
pub use seen::{Ext, Packet, Seen};

/// Analysis settings.
#[derive(Clone, Debug)]
pub struct AnalyzeConfig {
    /// Path MTU in bytes for READ PSN reservation (`--mtu`); `None` infers it from FIRST/MIDDLE
    /// payload sizes.
    pub mtu: Option<u32>,
    /// Most flows tracked; packets of further flows are counted in `frames.untracked` only.
    pub max_flows: usize,
    /// Keep every reassembled message for `Report::messages` (memory grows with messages).
    pub keep_messages: bool,
    /// Most gap events (loss stories) kept for `Report::gaps`; counts are never capped.
    pub keep_gaps: usize,
    /// Split flows by the mirror session (ERSPAN session ID / VXLAN VNI) too
    /// (`--encap-session`).
    pub encap_session: bool,
}

impl Default for AnalyzeConfig {
    fn default() -> Self {
        AnalyzeConfig {
            mtu: None,
            max_flows: 16_384,
            keep_messages: false,
            keep_gaps: 10_000,
            encap_session: false,
        }
    }
}

/// Most malformed frames and bad-ICRC frame numbers listed.
const MAX_LISTED: usize = 1000;

/// What the analysis produces besides counters: gap stories, messages, unexplained NAKs, each
/// bounded.
#[derive(Default)]
pub(crate) struct Sink {
    /// The consumer of analysis events, when one is set ([`Analyzer::set_tap`]).
    tap: Option<Box<dyn tap::Tap>>,
    gaps: Vec<GapReport>,
    /// Kept messages not yet handed out, oldest first.
    messages: VecDeque<Message>,
    /// Messages already handed out by [`Analyzer::take_messages`]: kept-message indices
    /// count from the first message ever kept.
    messages_taken: usize,
    /// Status changes that came for messages already handed out (see
    /// [`Analyzer::take_messages`]).
    late_statuses: u64,
    unexplained: Vec<UnexplainedNak>,
    keep_gaps: usize,
    keep_messages: bool,
}

impl Sink {
    /// Keep gap story `g` while fewer than `keep_gaps` are kept; its index when kept.
    fn gap(&mut self, g: GapReport) -> Option<usize> {
        (self.gaps.len() < self.keep_gaps).then(|| {
            self.gaps.push(g);
            self.gaps.len() - 1
        })
    }

    /// Deliver the analysis event `ev` makes to the tap, if any: without a tap the event is
    /// not even made (its fields cost about 25 instructions a packet, 1 % of `read -q`).
    #[inline]
    fn emit<'e>(&mut self, ev: impl FnOnce() -> tap::TapEvent<'e>) {
        if self.tap.is_some() {
            tap::emit(&mut self.tap, ev());
        }
    }

    /// Whether messages are wanted: kept for the report, or delivered to a tap.
    #[inline]
    fn wants_messages(&self) -> bool {
        self.keep_messages || self.tap.is_some()
    }

    /// Keep message `m` when messages are kept (and deliver it to the tap); its index when
    /// kept.
    fn message(&mut self, m: Message) -> Option<usize> {
        self.emit(|| tap::TapEvent::Message(&m));
        self.keep_messages.then(|| {
            self.messages.push_back(m);
            self.messages_taken + self.messages.len() - 1
        })
    }

    /// Change the status of kept message `idx`.
    fn set_status(&mut self, idx: Option<usize>, status: MessageStatus) {
        let Some(i) = idx else { return };
        match i.checked_sub(self.messages_taken) {
            Some(held) => {
                if let Some(m) = self.messages.get_mut(held) {
                    m.status = status;
                }
            }
            None => self.late_statuses += 1,
        }
    }
}

/// Messages [`Analyzer::take_messages`] holds back (about 0.8 MB): a fatal NAK answers the
/// request it refuses within a round trip, long before this many later messages complete.
pub const HELD_MESSAGES: usize = 4096;

/// The streaming analyzer.
pub struct Analyzer {
    cfg: AnalyzeConfig,
    frames: report::FrameCounts,
    icrc: report::IcrcCounts,
    flows: Vec<Flow>,
    index: table::FlowIndex,
    /// Flow of the previous RoCE packet.
    last_flow: Option<u32>,
    /// (src, dst) → flows with that source and destination.
    hosts: FxHashMap<(Address, Address), Vec<u32>>,
    /// FIRST/MIDDLE payload sizes seen: 256, 512, 1024, 2048, 4096.
    pmtu_seen: [u64; 5],
    /// Largest FIRST/MIDDLE payload seen, bytes: a lower bound on the real path MTU.
    max_first_middle: u32,
    sink: Sink,
    /// UD senders' PSN sequences.
    ud: ud::UdSenders,
    /// CM REQs awaiting their REP: (comm ID, REQ source, REQ destination, active QPN).
    cm_reqs: VecDeque<(u32, Address, Address, u32)>,
    /// Flow pairs announced by CM REQ/REP whose flows may not exist yet.
    cm_pairs: FxHashMap<FlowKey, FlowKey>,
    /// 64-bit digests of the keys of flows dropped because the table was full (at most
    /// `table::MAX_DROPPED_KEYS`), to count each once.
    dropped: FxHashSet<u64>,
    /// Unpaired flows by (source, destination), and those of them with an unanswered CE mark:
    /// the CNP attribution's candidates, found in O(1) instead of scanning every flow between
    /// the two hosts for every CNP (which made a CNP flood over many flows quadratic).
    unpaired: FxHashMap<(Address, Address), Unpaired>,
    /// Unpaired flows by (source, destination, DETH source QP): UD senders a CNP may name.
    unpaired_ud: FxHashMap<(Address, Address, u32), IdxSet>,
    /// Flows whose frames came through two or more mirror sessions (ERSPAN session IDs, VXLAN
    /// VNIs), where copies of one packet are counted twice (see the report's warnings), and
    /// the first two sessions of the first such flow.
    multi_session: (u64, [u32; 2]),
}

/// Mutable references to two distinct flows.
fn two_mut(v: &mut [Flow], i: usize, j: usize) -> (&mut Flow, &mut Flow) {
    debug_assert_ne!(i, j);
    if i < j {
        let (a, b) = v.split_at_mut(j);
        (&mut a[i], &mut b[0])
    } else {
        let (a, b) = v.split_at_mut(i);
        (&mut b[0], &mut a[j])
    }
}

fn pmtu_slot(len: u32) -> Option<usize> {
    match len {
        256 => Some(0),
        512 => Some(1),
        1024 => Some(2),
        2048 => Some(3),
        4096 => Some(4),
        _ => None,
    }
}

/// Whether the headers the analysis needs were captured: the BTH, the AETH of an ACK / NAK /
/// response, the DETH of a UD packet (its sender), the RETH of a READ request (its PSN
/// reservation). Other extended headers (a WRITE's RETH, ImmDt, AtomicETH, FETH, a CNP's
/// reserved bytes) only fill in
/// message details, so a frame cut inside them is still analysed.
fn needed_headers(p: &Packet<'_>, op: Operation) -> bool {
    let Some(bth) = p.bth else { return false };
    let Some(layout) = bth.opcode.layout() else {
        return true;
    };
    layout.headers.iter().all(|k| match k {
        ExtKind::Aeth => p.ext.aeth.is_some(),
        ExtKind::Deth => p.ext.deth.is_some(),
        ExtKind::Reth if op == Operation::ReadRequest => p.ext.reth.is_some(),
        _ => true,
    })
}

impl Analyzer {
    /// A new analyzer.
    pub fn new(cfg: AnalyzeConfig) -> Analyzer {
        Analyzer {
            cfg: cfg.clone(),
            frames: report::FrameCounts {
                flows_dropped_exact: true,
                ..Default::default()
            },
            icrc: Default::default(),
            flows: Vec::new(),
            index: table::FlowIndex::default(),
            last_flow: None,
            hosts: FxHashMap::default(),
            pmtu_seen: [0; 5],
            max_first_middle: 0,
            sink: Sink {
                keep_gaps: cfg.keep_gaps,
                keep_messages: cfg.keep_messages,
                ..Default::default()
            },
            ud: ud::UdSenders::default(),
            cm_reqs: VecDeque::new(),
            cm_pairs: FxHashMap::default(),
            dropped: FxHashSet::default(),
            unpaired: FxHashMap::default(),
            unpaired_ud: FxHashMap::default(),
            multi_session: (0, [0; 2]),
        }
    }

    /// Send every later analysis event to `tap` (see [`tap::TapEvent`]).
    pub fn set_tap(&mut self, tap: Box<dyn tap::Tap>) {
        self.sink.tap = Some(tap);
    }

    /// Remove and return the tap.
    pub fn take_tap(&mut self) -> Option<Box<dyn tap::Tap>> {
        self.sink.tap.take()
    }

    /// The path MTU inferred so far from all flows (most frequent FIRST/MIDDLE payload size).
    fn global_pmtu(&self) -> Option<u32> {
        let (i, n) = self
            .pmtu_seen
            .iter()
            .enumerate()
            .max_by_key(|(i, n)| (**n, *i))?;
        (*n > 0).then_some(256u32 << i)
    }

    /// PMTU to use for flow `i`: override, the flow's own, its peer's, the global one.
    fn pmtu_for(&self, i: usize) -> Option<u32> {
        self.cfg.mtu.or_else(|| {
            let f = &self.flows[i];
            f.pmtu
                .or_else(|| f.peer.and_then(|p| self.flows[p as usize].pmtu))
                .or_else(|| self.global_pmtu())
        })
    }

    /// Account one frame. `frame_no` is its 1-based number, `ts_ns` its capture time in ns
    /// since the epoch. Call for every frame, RoCE or not, in capture order. Never panics.
    pub fn push(&mut self, frame_no: u64, ts_ns: u64, frame: &Frame) {
        self.push_seen(frame_no, ts_ns, &Seen::of(frame));
    }

    /// [`Analyzer::push`] for a frame reduced to what the analysis reads ([`Seen`]).
    pub fn push_seen(&mut self, frame_no: u64, ts_ns: u64, seen: &Seen) {
        self.push_parts(frame_no, ts_ns, seen.roce.as_ref(), seen.session, seen.pcp);
    }

    fn push_parts(
        &mut self,
        frame_no: u64,
        ts_ns: u64,
        roce: Option<&Packet>,
        session: Option<u32>,
        pcp: Option<u8>,
    ) {
        self.frames.total += 1;
        if self.frames.total & (idle::SWEEP_EVERY - 1) == 0 {
            self.sweep_idle(ts_ns);
        }
        if self.frames.first_ts_ns.is_none() {
            self.frames.first_ts_ns = Some(ts_ns);
        }
        self.frames.last_ts_ns = Some(ts_ns);
        let Some(p) = roce else {
            self.frames.other += 1;
            return;
        };
        self.count_frame(frame_no, p);
        let Some(bth) = p.bth else {
            self.frames.headers_cut += u64::from(p.truncated);
            return;
        };
        let session_key = session.filter(|_| self.cfg.encap_session);
        if let Some(i) = self.flow_index(p, bth.dest_qp, session_key, ts_ns, frame_no) {
            if let Some(s) = session {
                self.note_session(i, s);
            }
            self.packet(i, frame_no, ts_ns, p, pcp);
        }
    }

    /// Flow `i`'s frame came through mirror session `s`: count the flow once if that is its
    /// second session.
    #[inline]
    fn note_session(&mut self, i: usize, s: u32) {
        let f = &mut self.flows[i];
        match f.mirror_session {
            None => f.mirror_session = Some(s),
            Some(t) if t != s && t != flow::MANY_SESSIONS => {
                f.mirror_session = Some(flow::MANY_SESSIONS);
                if self.multi_session.0 == 0 {
                    self.multi_session.1 = [t, s];
                }
                self.multi_session.0 += 1;
            }
            _ => {}
        }
    }

    /// Frame-level counts of a RoCE frame: truncation, ICRC, malformed.
    fn count_frame(&mut self, frame_no: u64, p: &Packet) {
        self.frames.roce += 1;
        if p.truncated {
            self.frames.truncated += 1;
        }
        match p.icrc {
            IcrcStatus::Good => self.icrc.good += 1,
            IcrcStatus::Bad => {
                self.icrc.bad += 1;
                if self.icrc.bad_frames.len() < MAX_LISTED {
                    self.icrc.bad_frames.push(frame_no);
                }
            }
            IcrcStatus::Unchecked(_) => self.icrc.unchecked += 1,
        }
        if let Some(m) = p.malformed {
            self.frames.malformed += 1;
            if self.frames.malformed_frames.len() < MAX_LISTED {
                self.frames.malformed_frames.push(MalformedFrame {
                    frame: frame_no,
                    reason: m.to_string(),
                });
            }
        }
    }

    /// One packet of flow `i`: counters, pairing, then the rule set its operation belongs to.
    fn packet(&mut self, i: usize, frame_no: u64, ts: u64, p: &Packet, pcp: Option<u8>) {
        let Some(bth) = p.bth else { return };
        let op = bth.opcode.operation();
        if self.flows[i].udp_sport.is_none()
            && let Some(sport) = p.udp_src_port.filter(|&s| s != 0)
        {
            self.pair_by_sport(i, sport);
        }
        self.count_packet(i, frame_no, ts, p, op, pcp);
        self.pair_by_deth(i);
        self.sink.emit(|| tap::TapEvent::Packet {
            flow: i,
            ts_ns: ts,
            psn: bth.psn,
            payload_bytes: p.payload_len,
            transport_bytes: p.hdr_len as u64 + u64::from(p.payload_len) + u64::from(bth.pad) + 4,
            ce: p.ecn == Some(crate::decode::Ecn::Ce),
            cnp: op == Some(Operation::Cnp),
        });
        if p.malformed.is_some() {
            return;
        }
        let Some(op) = op else { return };
        if p.truncated && !needed_headers(p, op) {
            self.frames.headers_cut += 1;
            return;
        }
        self.learn_pmtu(i, p, op);
        if bth.dest_qp == 1
            && matches!(op, Operation::SendOnly | Operation::SendOnlyImm)
            && bth.opcode.transport() == Transport::Ud
        {
            self.cm_mad(p.src, p.dst, self.flows[i].key.session, p.payload);
        }
        if op == Operation::Cnp {
            let target = self.cnp(i, frame_no, ts);
            self.sink.emit(|| tap::TapEvent::Cnp {
                flow: i,
                target,
                ts_ns: ts,
            });
            return;
        }
        if self.flows[i].cold().error.is_some() {
            // After a fatal NAK: counted, not analysed as a normal exchange.
            self.flows[i].cold_mut().after_error += 1;
            return;
        }
        let is_response = op.is_read_response()
            || matches!(op, Operation::Acknowledge | Operation::AtomicAcknowledge);
        if is_response {
            self.response(i, frame_no, ts, p, op);
        } else if op.is_request() {
            self.request(i, frame_no, ts, p, op);
        }
    }

    /// Per-packet counters of flow `i`: packets, bytes, opcodes, ECN, FECN/BECN, priority, the
    /// rate the CNP analysis needs, transport, DETH source QP.
    fn count_packet(
        &mut self,
        i: usize,
        frame_no: u64,
        ts: u64,
        p: &Packet,
        op: Option<Operation>,
        pcp: Option<u8>,
    ) {
        let Some(bth) = p.bth else { return };
        let is_cnp = op == Some(Operation::Cnp);
        let f = &mut self.flows[i];
        f.packets += 1;
        f.last_ts = ts;
        f.payload_bytes += u64::from(p.payload_len);
        let tbytes = p.hdr_len as u64 + u64::from(p.payload_len) + u64::from(bth.pad) + 4;
        f.transport_bytes += tbytes;
        f.count_opcode(bth.opcode.0);
        f.prio.add(is_cnp, p.dscp, pcp);
        match p.ecn {
            Some(e) => {
                let v = match e {
                    crate::decode::Ecn::NotEct => 0,
                    crate::decode::Ecn::Ect1 => 1,
                    crate::decode::Ecn::Ect0 => 2,
                    crate::decode::Ecn::Ce => 3,
                };
                f.cong.ecn[v] += 1;
                // Keep the latest CE since the last CNP: under CNP pacing (one per
                // `min_time_between_cnps` per flow), earlier marks in the window are not
                // what triggered the next CNP, and timing from them would measure the pacing.
                if v == 3 && !is_cnp {
                    if f.cong.ecn[3] == 1 {
                        f.cong.reaction_mut().first_ce_frame = Some(frame_no);
                    }
                    let newly = f.cong.unanswered_ce.replace(ts).is_none();
                    // The index holds a flow once while it has an unanswered CE.
                    if newly
                        && f.peer.is_none()
                        && let Some(u) = self.unpaired.get_mut(&(f.key.src, f.key.dst))
                    {
                        u.ce.insert(i);
                    }
                }
            }
            None => f.cong.no_ecn += 1,
        }
        f.count_fecn_becn(bth.fecn, bth.becn);
        if !is_cnp {
            if f.transport.is_none() {
                f.transport = Some(bth.opcode.transport());
            }
            f.cong.rate.packet(ts, tbytes);
        }
        if f.deth_src_qp.is_none() {
            f.deth_src_qp = p.ext.deth.map(|d| d.src_qp);
            if let Some(q) = f.deth_src_qp
                && f.peer.is_none()
            {
                self.unpaired_ud
                    .entry((f.key.src, f.key.dst, q))
                    .or_default()
                    .insert(i);
            }
        }
    }

    /// PMTU inference from full-size FIRST/MIDDLE payloads. The sizes come from the length
    /// fields, so a frame cut by the snap length after its headers counts too.
    fn learn_pmtu(&mut self, i: usize, p: &Packet, op: Operation) {
        if !matches!(op.position(), Position::First | Position::Middle) {
            return;
        }
        self.max_first_middle = self.max_first_middle.max(p.payload_len);
        if let Some(s) = pmtu_slot(p.payload_len) {
            self.pmtu_seen[s] += 1;
            let f = &mut self.flows[i];
            f.pmtu = Some(f.pmtu.map_or(p.payload_len, |m| m.max(p.payload_len)));
        }
    }

    /// A response-carrying packet of flow `i` (ACK, NAK, READ response, ATOMIC ACKNOWLEDGE).
    fn response(&mut self, i: usize, frame_no: u64, ts: u64, p: &Packet, op: Operation) {
        let Some(bth) = p.bth else { return };
        if let Some(aeth) = p.ext.aeth {
            self.pair_by_psn(i, bth.psn);
            let a = responder::AethPkt {
                frame: frame_no,
                ts,
                psn: bth.psn,
                aeth,
                op,
            };
            responder::count(&mut self.flows[i], &a);
            let requester = self.flows[i].peer.map(|j| j as usize);
            self.sink.emit(|| tap::TapEvent::Aeth {
                flow: i,
                requester,
                ts_ns: ts,
                psn: bth.psn,
                kind: aeth.kind(),
                acknowledge: op == Operation::Acknowledge,
            });
            if let Some(j) = requester {
                let (f, g) = two_mut(&mut self.flows, i, j);
                responder::aeth(f, i, g, j, &mut self.sink, &a);
            }
        }
        let atomic_ack = op == Operation::AtomicAcknowledge;
        if !(atomic_ack || op.is_read_response()) || self.flows[i].cold().error.is_some() {
            return;
        }
        let pos = op.position();
        let gap = op
            .is_read_response()
            .then(|| self.response_psn(i, frame_no, ts, bth.psn, pos))
            .flatten();
        let r = outcome::Response {
            psn: bth.psn,
            pos,
            atomic_ack,
            payload: p.payload_len,
            frame: frame_no,
            ts,
            gap,
        };
        match self.flows[i].peer.map(|j| j as usize) {
            Some(j) => {
                let (f, g) = two_mut(&mut self.flows, i, j);
                capture_gap::answered(g, &mut self.sink, r.psn, false);
                outcome::response(f, i, Some(g), &mut self.sink, &r);
            }
            None => outcome::response(&mut self.flows[i], i, None, &mut self.sink, &r),
        }
    }

    /// Track a READ response's PSN in flow `i`'s response space; the stored gap story when it
    /// reveals a gap.
    fn response_psn(
        &mut self,
        i: usize,
        frame: u64,
        ts: u64,
        psn: u32,
        pos: Position,
    ) -> Option<usize> {
        let restart = matches!(pos, Position::First | Position::Only);
        let verdict = self.flows[i]
            .cold_mut()
            .resp_psn
            .observe(psn, 1, 0, restart);
        self.sink.emit(|| tap::TapEvent::Psn {
            flow: i,
            ts_ns: ts,
            psn,
            space: tap::PsnSpace::ReadResponse,
            verdict,
        });
        let psn::PsnVerdict::Ahead { expected, missing } = verdict else {
            return None;
        };
        self.sink.gap(GapReport {
            flow: i,
            frame,
            ts_ns: ts,
            space: report::PsnSpace::ReadResponse,
            expected_psn: expected,
            received_psn: psn,
            missing,
            nak: None,
            retransmission: None,
            ack_frame: None,
            verdict: report::GapVerdict::Unresolved,
        })
    }

    /// A request packet of flow `i`: UD senders apart, the requester's rules.
    fn request(&mut self, i: usize, frame_no: u64, ts: u64, p: &Packet, op: Operation) {
        let Some(bth) = p.bth else { return };
        let r = requester::Req {
            flow: i,
            frame: frame_no,
            ts,
            p,
            bth,
            op,
            pmtu: if op == Operation::ReadRequest {
                self.pmtu_for(i)
            } else {
                None
            },
        };
        if bth.opcode.transport() != Transport::Ud {
            requester::request(&mut self.flows[i], &mut self.sink, &r);
            return;
        }
        let src_qp = p.ext.deth.map(|d| d.src_qp);
        if bth.dest_qp == 0 || src_qp == Some(0) {
            self.frames.qp0 += 1;
        } else if let Some(q) = src_qp {
            let cap = self.cfg.max_flows;
            self.ud.packet(
                &mut self.flows[i],
                i,
                &mut self.sink,
                (p.src, q),
                bth.psn,
                (frame_no, ts),
                cap,
            );
        }
        requester::assemble_ud(&mut self.flows[i], &mut self.sink, &r);
    }

    /// Take the messages completed so far (with `keep_messages`) but the newest
    /// [`HELD_MESSAGES`], in completion order: a consumer that streams them out (the Parquet
    /// export) keeps memory bounded; the report's `messages` then holds only those not taken.
    ///
    /// A SEND or WRITE is complete when its last packet is accepted, but a fatal NAK that
    /// arrives later still refuses it (outcome.rs): the newest messages are held back so that
    /// such a NAK finds them. A NAK that comes after [`HELD_MESSAGES`] later messages finds
    /// its message taken: the taken copy keeps its status, and the report says how many such
    /// changes came too late (a warning).
    pub fn take_messages(&mut self) -> Vec<Message> {
        let n = self.sink.messages.len().saturating_sub(HELD_MESSAGES);
        self.sink.messages_taken += n;
        self.sink.messages.drain(..n).collect()
    }

    /// End the analysis and build the report.
    pub fn finish(self) -> Report {
        build::build(self)
    }
}
