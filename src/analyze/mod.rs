//! Streaming analysis of decoded RoCE frames: QP flows and connections, PSN gaps and
//! retransmissions, NAKs, go-back-N message reassembly, ACK RTT, MSN cross-check, ECN/CNP
//! congestion (issue 3).
//!
//! Feed every frame, RoCE or not, to [`Analyzer::push`] in capture order, then call
//! [`Analyzer::finish`] for the [`Report`]. State is per flow (a fast hash map of at most
//! [`AnalyzeConfig::max_flows`] flows) plus bounded per-flow queues; no payload is kept, and
//! the per-packet path does not allocate once a flow's buffers have grown. The semantics
//! (24-bit serial PSN arithmetic, READ PSN reservation, go-back-N, cumulative ACKs, MSN, CNP
//! addressing) follow `spec/roce.md` §3, §5, §6: IBTA Vol 1 ch. 9 and Annex A17, Linux rxe,
//! and Lumina's checkers.

pub mod cm;
pub mod congestion;
pub mod flow;
pub mod fxhash;
pub mod message;
pub mod psn;
pub mod report;
pub mod stats;

mod build;

use crate::decode::{
    Address, AethKind, Frame, IcrcStatus, NakCode, Operation, Position, RocePacket, Transport,
};
use flow::{
    Flow, FlowKey, MAX_OPEN_GAPS, MAX_OUTSTANDING_READS, MAX_PENDING_ACKS, MAX_UNITS, OpenGap,
    PairedBy, PendingNak, ReadReq,
};
use fxhash::FxBuild;
use message::{Accept, Message, MessageKind, Piece};
use psn::{PsnVerdict, psn_add, psn_diff, read_psn_span};
use report::{GapReport, MalformedFrame, NakMatch, Retransmission};
use std::collections::{HashMap, HashSet, VecDeque};

pub use report::Report;

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
    /// Window for the sender's rate before and after each CNP, ns.
    pub rate_window_ns: u64,
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
            rate_window_ns: 50_000,
            encap_session: false,
        }
    }
}

/// Most malformed frames and bad-ICRC frame numbers listed.
const MAX_LISTED: usize = 1000;

/// The streaming analyzer.
pub struct Analyzer {
    cfg: AnalyzeConfig,
    frames: report::FrameCounts,
    icrc: report::IcrcCounts,
    flows: Vec<Flow>,
    index: HashMap<FlowKey, u32, FxBuild>,
    /// (src, dst) → flows with that source and destination.
    hosts: HashMap<(crate::decode::Address, crate::decode::Address), Vec<u32>, FxBuild>,
    /// FIRST/MIDDLE payload sizes seen: 256, 512, 1024, 2048, 4096.
    pmtu_seen: [u64; 5],
    /// Largest FIRST/MIDDLE payload seen, bytes: a lower bound on the real path MTU.
    max_first_middle: u32,
    gaps: Vec<GapReport>,
    messages: Vec<Message>,
    /// CM REQs awaiting their REP: (comm ID, REQ source, REQ destination, active QPN).
    cm_reqs: VecDeque<(u32, Address, Address, u32)>,
    /// Flow pairs announced by CM REQ/REP whose flows may not exist yet.
    cm_pairs: HashMap<FlowKey, FlowKey, FxBuild>,
    /// 64-bit digests of the keys of flows dropped because the table was full (at most
    /// [`MAX_DROPPED_KEYS`]), to count each once.
    dropped: HashSet<u64, FxBuild>,
    /// Unpaired flows by (source, destination), and those of them with an unanswered CE mark:
    /// the CNP attribution's candidates, found in O(1) instead of scanning every flow between
    /// the two hosts for every CNP (which made a CNP flood over many flows quadratic).
    unpaired: HashMap<(Address, Address), Unpaired, FxBuild>,
    /// Unpaired flows by (source, destination, DETH source QP): UD senders a CNP may name.
    unpaired_ud: HashMap<(Address, Address, u32), IdxSet, FxBuild>,
}

/// A set of flow indices kept as a count and the XOR of its members: when the count is 1, the
/// XOR is the member.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct IdxSet {
    n: u32,
    xor: u32,
}

impl IdxSet {
    fn insert(&mut self, j: usize) {
        self.n += 1;
        self.xor ^= j as u32;
    }
    fn remove(&mut self, j: usize) {
        self.n -= 1;
        self.xor ^= j as u32;
    }
    /// (members other than `i`, the single one when exactly one), `i_in` saying whether `i`
    /// is a member.
    fn without(self, i: usize, i_in: bool) -> (u32, Option<usize>) {
        let (n, x) = if i_in {
            (self.n - 1, self.xor ^ i as u32)
        } else {
            (self.n, self.xor)
        };
        (n, (n == 1).then_some(x as usize))
    }
}

/// Unpaired flows of one (source, destination) pair.
#[derive(Clone, Copy, Debug, Default)]
struct Unpaired {
    all: IdxSet,
    ce: IdxSet,
}

/// Most dropped flow keys remembered for `frames.flows_dropped` (about 1.2 MB at most).
const MAX_DROPPED_KEYS: usize = 65_536;

/// A 64-bit SipHash digest of a flow key: distinct keys collide with probability ~2^-64 per
/// pair, negligible against the 65 536 remembered.
fn key_digest(key: &FlowKey) -> u64 {
    use std::hash::{BuildHasher, Hash, Hasher};
    let mut h =
        std::hash::BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default()
            .build_hasher();
    key.src.hash(&mut h);
    key.dst.hash(&mut h);
    key.dest_qp.hash(&mut h);
    key.session.hash(&mut h);
    h.finish()
}

/// Most CM REQs remembered while waiting for their REP, and most CM-announced pairs.
const MAX_CM: usize = 4096;

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

impl Analyzer {
    /// A new analyzer.
    pub fn new(cfg: AnalyzeConfig) -> Analyzer {
        Analyzer {
            cfg,
            frames: report::FrameCounts {
                flows_dropped_exact: true,
                ..Default::default()
            },
            icrc: Default::default(),
            flows: Vec::new(),
            index: HashMap::default(),
            hosts: HashMap::default(),
            pmtu_seen: [0; 5],
            max_first_middle: 0,
            gaps: Vec::new(),
            messages: Vec::new(),
            cm_reqs: VecDeque::new(),
            cm_pairs: HashMap::default(),
            dropped: HashSet::default(),
            unpaired: HashMap::default(),
            unpaired_ud: HashMap::default(),
        }
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
        self.frames.total += 1;
        if self.frames.first_ts_ns.is_none() {
            self.frames.first_ts_ns = Some(ts_ns);
        }
        self.frames.last_ts_ns = Some(ts_ns);
        let Some(p) = frame.roce() else {
            self.frames.other += 1;
            return;
        };
        self.frames.roce += 1;
        if p.truncated {
            self.frames.truncated += 1;
        }
        match p.icrc.status {
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
        let Some(bth) = p.bth else { return };
        let key = FlowKey {
            src: p.src,
            dst: p.dst,
            dest_qp: bth.dest_qp,
            session: frame.encap.session().filter(|_| self.cfg.encap_session),
        };
        let i = match self.index.get(&key) {
            Some(&i) => i as usize,
            None => {
                if self.flows.len() >= self.cfg.max_flows {
                    self.frames.untracked += 1;
                    let d = key_digest(&key);
                    if self.dropped.len() < MAX_DROPPED_KEYS {
                        if self.dropped.insert(d) {
                            self.frames.flows_dropped += 1;
                        }
                    } else if !self.dropped.contains(&d) {
                        // Cannot tell a new flow from one already dropped past the cap.
                        self.frames.flows_dropped_exact = false;
                    }
                    return;
                }
                self.new_flow(key, ts_ns, frame_no)
            }
        };
        self.packet(i, frame_no, ts_ns, p);
    }

    fn new_flow(&mut self, key: FlowKey, ts: u64, frame: u64) -> usize {
        let i = self.flows.len();
        self.flows.push(Flow::new(key, ts, frame));
        self.index.insert(key, i as u32);
        self.hosts
            .entry((key.src, key.dst))
            .or_default()
            .push(i as u32);
        self.unpaired
            .entry((key.src, key.dst))
            .or_default()
            .all
            .insert(i);
        if let Some(peer) = self.cm_pairs.get(&key)
            && let Some(&j) = self.index.get(peer)
            && self.flows[j as usize].peer.is_none()
        {
            self.pair(i, j as usize, PairedBy::Cm);
        }
        i
    }

    /// A UD SEND to QP1 from `src` to `dst`: learn QP pairs from CM REQ / REP.
    fn cm_mad(&mut self, src: Address, dst: Address, session: Option<u32>, payload: &[u8]) {
        match cm::parse(payload) {
            Some(cm::CmMsg::Req { comm_id, qpn }) => {
                if self.cm_reqs.len() >= MAX_CM {
                    self.cm_reqs.pop_front();
                }
                self.cm_reqs.push_back((comm_id, src, dst, qpn));
            }
            Some(cm::CmMsg::Rep {
                remote_comm_id,
                qpn,
            }) => {
                let Some(k) = self
                    .cm_reqs
                    .iter()
                    .rposition(|r| r.0 == remote_comm_id && r.1 == dst && r.2 == src)
                else {
                    return;
                };
                let Some((_, active, passive, active_qpn)) = self.cm_reqs.remove(k) else {
                    return;
                };
                // Active → passive carries DestQP = the passive QPN, and the reverse.
                let a = FlowKey {
                    src: active,
                    dst: passive,
                    dest_qp: qpn,
                    session,
                };
                let b = FlowKey {
                    src: passive,
                    dst: active,
                    dest_qp: active_qpn,
                    session,
                };
                if self.cm_pairs.len() < MAX_CM {
                    self.cm_pairs.insert(a, b);
                    self.cm_pairs.insert(b, a);
                }
                if let (Some(&i), Some(&j)) = (self.index.get(&a), self.index.get(&b))
                    && self.flows[i as usize].peer.is_none()
                    && self.flows[j as usize].peer.is_none()
                {
                    self.pair(i as usize, j as usize, PairedBy::Cm);
                }
            }
            None => {}
        }
    }

    /// Pair flow `i` by the symmetric UDP source port convention when exactly one unpaired
    /// reverse flow uses the same port. CNPs often use port 0, which is never used for pairing.
    fn pair_by_sport(&mut self, i: usize, sport: u16) {
        let f = &mut self.flows[i];
        f.udp_sport = Some(sport);
        if f.peer.is_some() {
            return;
        }
        let (src, dst, session) = (f.key.src, f.key.dst, f.key.session);
        let Some(c) = self.hosts.get(&(dst, src)) else {
            return;
        };
        let mut found = None;
        let mut n = 0;
        for &j in c {
            let g = &self.flows[j as usize];
            if j as usize != i
                && g.peer.is_none()
                && g.udp_sport == Some(sport)
                && g.key.session == session
            {
                found = Some(j as usize);
                n += 1;
            }
        }
        if let (Some(j), 1) = (found, n) {
            self.pair(i, j, PairedBy::UdpSport);
        }
    }

    fn pair(&mut self, i: usize, j: usize, by: PairedBy) {
        if i == j {
            // A hostile CM exchange can name one flow as its own peer.
            return;
        }
        for k in [i, j] {
            if self.flows[k].peer.is_none() {
                self.unlist(k);
            }
        }
        let (a, b) = two_mut(&mut self.flows, i, j);
        a.peer = Some(j as u32);
        b.peer = Some(i as u32);
        a.paired_by = Some(by);
        b.paired_by = Some(by);
    }

    /// Flow `k` is being paired: take it out of the unpaired indexes.
    fn unlist(&mut self, k: usize) {
        let f = &self.flows[k];
        let key = (f.key.src, f.key.dst);
        if let Some(u) = self.unpaired.get_mut(&key) {
            u.all.remove(k);
            if f.cong.unanswered_ce.is_some() {
                u.ce.remove(k);
            }
        }
        if let Some(q) = f.deth_src_qp
            && let Some(s) = self.unpaired_ud.get_mut(&(key.0, key.1, q))
        {
            s.remove(k);
        }
    }

    /// Pair two UD flows that name each other: A→B to QP X with DETH source QP Y, and B→A to
    /// QP Y with DETH source QP X (IBTA 9.2.3: DETH SrcQP is the sender's QP). One hash look-up
    /// per packet while the flow is unpaired.
    fn pair_by_deth(&mut self, i: usize) {
        let f = &self.flows[i];
        let (Some(src_qp), None) = (f.deth_src_qp, f.peer) else {
            return;
        };
        let rev = FlowKey {
            src: f.key.dst,
            dst: f.key.src,
            dest_qp: src_qp,
            session: f.key.session,
        };
        let dest_qp = f.key.dest_qp;
        if let Some(&j) = self.index.get(&rev) {
            let j = j as usize;
            let g = &self.flows[j];
            if j != i && g.peer.is_none() && g.deth_src_qp == Some(dest_qp) {
                self.pair(i, j, PairedBy::Deth);
            }
        }
    }

    /// Try to pair response-carrying flow `i` with the request flow whose PSNs `psn` echoes.
    fn pair_by_psn(&mut self, i: usize, psn: u32) {
        let f = &mut self.flows[i];
        if f.peer.is_some() || f.pair_tries == 0 {
            return;
        }
        f.pair_tries -= 1;
        let (src, dst, sport) = (f.key.src, f.key.dst, f.udp_sport);
        let Some(c) = self.hosts.get(&(dst, src)) else {
            return;
        };
        let mut best: Option<(usize, bool)> = None;
        let mut n = 0;
        for &j in c {
            let j = j as usize;
            let g = &self.flows[j];
            if j == i
                || g.peer.is_some()
                || g.req_psn.first.is_none()
                || g.key.session != self.flows[i].key.session
            {
                continue;
            }
            let d = psn_diff(psn, g.req_psn.expected);
            if (-65_536..=0).contains(&d) {
                let sport_ok = sport.is_some() && g.udp_sport == sport;
                match best {
                    Some((_, true)) if !sport_ok => {}
                    Some((_, false)) if sport_ok => {
                        best = Some((j, true));
                        n = 1;
                    }
                    _ => {
                        if best.is_some_and(|(_, s)| s == sport_ok) {
                            n += 1;
                        } else {
                            n = 1;
                        }
                        best = Some((j, sport_ok));
                    }
                }
            }
        }
        if let (Some((j, _)), 1) = (best, n) {
            self.pair(i, j, PairedBy::Psn);
        }
    }

    fn packet(&mut self, i: usize, frame_no: u64, ts: u64, p: &RocePacket) {
        let Some(bth) = p.bth else { return };
        let window = self.cfg.rate_window_ns;
        let op = bth.opcode.operation();
        if self.flows[i].udp_sport.is_none()
            && let Some(sport) = p.udp_src_port.filter(|&s| s != 0)
        {
            self.pair_by_sport(i, sport);
        }
        {
            let f = &mut self.flows[i];
            f.packets += 1;
            f.last_ts = ts;
            f.payload_bytes += u64::from(p.payload_len);
            let tbytes = p.hdr_len as u64 + u64::from(p.payload_len) + u64::from(bth.pad) + 4;
            f.transport_bytes += tbytes;
            f.count_opcode(bth.opcode.0);
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
                    if v == 3 && op != Some(Operation::Cnp) {
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
            f.cong.fecn += u64::from(bth.fecn);
            f.cong.becn += u64::from(bth.becn);
            if op != Some(Operation::Cnp) {
                if f.transport.is_none() {
                    f.transport = Some(bth.opcode.transport());
                }
                f.cong.rate.packet(ts, tbytes, window);
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
        self.pair_by_deth(i);
        if p.malformed.is_some() {
            return;
        }
        let Some(op) = op else { return };
        if matches!(op.position(), Position::First | Position::Middle) && !p.truncated {
            self.max_first_middle = self.max_first_middle.max(p.payload_len);
        }
        // PMTU inference from full-size FIRST/MIDDLE payloads.
        if matches!(op.position(), Position::First | Position::Middle)
            && !p.truncated
            && let Some(s) = pmtu_slot(p.payload_len)
        {
            self.pmtu_seen[s] += 1;
            let f = &mut self.flows[i];
            f.pmtu = Some(f.pmtu.map_or(p.payload_len, |m| m.max(p.payload_len)));
        }
        if bth.dest_qp == 1
            && matches!(op, Operation::SendOnly | Operation::SendOnlyImm)
            && bth.opcode.transport() == crate::decode::Transport::Ud
        {
            self.cm_mad(p.src, p.dst, self.flows[i].key.session, p.payload);
        }
        if op == Operation::Cnp {
            self.cnp(i, frame_no, ts);
        } else if op.is_read_response() {
            if let Some(aeth) = p.ext.aeth {
                self.aeth(i, frame_no, ts, bth.psn, aeth, op);
            }
            self.read_response(i, frame_no, ts, p, op);
        } else if matches!(op, Operation::Acknowledge | Operation::AtomicAcknowledge) {
            if let Some(aeth) = p.ext.aeth {
                self.aeth(i, frame_no, ts, bth.psn, aeth, op);
            }
        } else if op.is_request() {
            self.request(i, frame_no, ts, p, op);
        }
    }

    /// The UD pairing candidate of CNP flow `i` by scanning (debug builds: checks the index).
    #[cfg_attr(not(debug_assertions), allow(dead_code))]
    fn ud_hit_scan(&self, i: usize) -> Option<usize> {
        let f = &self.flows[i];
        let (src, dst, qp) = (f.key.src, f.key.dst, f.key.dest_qp);
        self.hosts.get(&(dst, src)).and_then(|c| {
            let mut it = c.iter().map(|&j| j as usize).filter(|&j| {
                j != i && self.flows[j].peer.is_none() && self.flows[j].deth_src_qp == Some(qp)
            });
            let first = it.next();
            if it.next().is_some() { None } else { first }
        })
    }

    /// The notified sender of unpaired CNP flow `i` by scanning (debug builds: checks the
    /// index): the single unpaired reverse flow with an unanswered CE mark, else the single
    /// unpaired reverse flow.
    #[cfg_attr(not(debug_assertions), allow(dead_code))]
    fn cnp_target_scan(&self, i: usize) -> Option<usize> {
        let f = &self.flows[i];
        let c = self.hosts.get(&(f.key.dst, f.key.src))?;
        let unpaired = |j: &&u32| self.flows[**j as usize].peer.is_none() && **j as usize != i;
        let with_ce: Vec<usize> = c
            .iter()
            .filter(unpaired)
            .filter(|j| self.flows[**j as usize].cong.unanswered_ce.is_some())
            .map(|j| *j as usize)
            .take(2)
            .collect();
        let any: Vec<usize> = c
            .iter()
            .filter(unpaired)
            .map(|j| *j as usize)
            .take(2)
            .collect();
        match (with_ce.as_slice(), any.as_slice()) {
            ([j], _) | ([], [j]) => Some(*j),
            _ => None,
        }
    }

    fn cnp(&mut self, i: usize, frame_no: u64, ts: u64) {
        let window = self.cfg.rate_window_ns;
        {
            let c = &mut self.flows[i].cong;
            c.cnps += 1;
            if let Some(prev) = c.last_cnp {
                c.cnp_gap.add(ts.saturating_sub(prev));
            }
            c.last_cnp = Some(ts);
        }
        if self.flows[i].peer.is_none() {
            // A UD sender: the CNP's DestQP is the DETH source QP of the reverse flow.
            let f = &self.flows[i];
            let (src, dst, qp) = (f.key.src, f.key.dst, f.key.dest_qp);
            // The single unpaired reverse flow whose DETH source QP is the CNP's DestQP (flow
            // `i` itself is a member only when source and destination are one host).
            let i_in = src == dst && f.deth_src_qp == Some(qp);
            let hit = self
                .unpaired_ud
                .get(&(dst, src, qp))
                .and_then(|s| s.without(i, i_in).1);
            debug_assert_eq!(hit, self.ud_hit_scan(i), "unpaired UD index");
            if let Some(j) = hit {
                self.pair(i, j, PairedBy::Cnp);
            }
        }
        let target = match self.flows[i].peer {
            Some(t) => t as usize,
            None => {
                // Not paired yet (the first ACK may come later): the notified sender is the
                // single unpaired reverse flow, preferring one with an unanswered CE mark
                // (Lumina matches CNPs by IP pair the same way).
                let f = &self.flows[i];
                let (src, dst) = (f.key.src, f.key.dst);
                let found = self.unpaired.get(&(dst, src)).and_then(|u| {
                    // Flow `i` (unpaired here) is a member only when source and destination
                    // are one host.
                    let same = src == dst;
                    let i_ce = same && f.cong.unanswered_ce.is_some();
                    match (u.ce.without(i, i_ce), u.all.without(i, same)) {
                        ((1, j), _) | ((0, _), (1, j)) => j,
                        _ => None,
                    }
                });
                debug_assert_eq!(found, self.cnp_target_scan(i), "unpaired index");
                match found {
                    Some(j) => j,
                    None => return,
                }
            }
        };
        let paired = self.flows[target].peer.is_some();
        let t = &mut self.flows[target];
        if let Some(ce) = t.cong.unanswered_ce.take() {
            t.cong.ce_to_cnp.add(ts.saturating_sub(ce));
            if !paired && let Some(u) = self.unpaired.get_mut(&(t.key.src, t.key.dst)) {
                u.ce.remove(target);
            }
        }
        let t = &mut t.cong;
        t.rate.cnp(ts, frame_no, window);
    }

    /// An AETH in flow `i` (ACK, NAK, READ response, atomic ACK): counts, pairing, ACK RTT, NAK
    /// matching, MSN.
    fn aeth(
        &mut self,
        i: usize,
        frame_no: u64,
        ts: u64,
        psn: u32,
        aeth: crate::decode::Aeth,
        op: Operation,
    ) {
        self.pair_by_psn(i, psn);
        let kind = aeth.kind();
        {
            let f = &mut self.flows[i];
            match kind {
                AethKind::Ack { .. } => {
                    if op == Operation::Acknowledge {
                        f.acks += 1;
                    }
                }
                AethKind::RnrNak { timer_us, .. } => {
                    f.rnr_naks += 1;
                    f.rnr_timer_us.add(u64::from(timer_us));
                }
                AethKind::Nak(code) => match code {
                    NakCode::PsnSeqErr => f.naks[0] += 1,
                    NakCode::InvalidRequest => f.naks[1] += 1,
                    NakCode::RemoteAccess => f.naks[2] += 1,
                    NakCode::RemoteOp => f.naks[3] += 1,
                    NakCode::InvalidRd => f.naks[4] += 1,
                    NakCode::Reserved(_) => f.naks_reserved += 1,
                },
                AethKind::Reserved => f.naks_reserved += 1,
            }
        }
        let Some(j) = self.flows[i].peer.map(|j| j as usize) else {
            return;
        };
        let (f, g) = two_mut(&mut self.flows, i, j);
        // g is the requester's flow.
        match kind {
            AethKind::Ack { .. } => {
                // Cumulative: covers every AckReq request with PSN ≤ psn.
                while let Some(&(p, t)) = g.pending_acks.front() {
                    if psn_diff(psn, p) < 0 {
                        break;
                    }
                    g.ack_rtt.add(ts.saturating_sub(t));
                    g.pending_acks.pop_front();
                }
            }
            AethKind::Nak(NakCode::PsnSeqErr) => {
                // Implicitly acknowledges everything before `psn` (no RTT sample).
                while let Some(&(p, _)) = g.pending_acks.front() {
                    if psn_diff(psn, p) <= 0 {
                        break;
                    }
                    g.pending_acks.pop_front();
                }
                g.last_nak = Some(PendingNak {
                    psn,
                    ts,
                    frame: frame_no,
                });
                if let Some(og) = g
                    .open_gaps
                    .iter_mut()
                    .rev()
                    .find(|og| og.expected == psn && og.nak_ts.is_none())
                {
                    og.nak_ts = Some(ts);
                    let delay = ts.saturating_sub(og.ts);
                    g.nak_delay.add(delay);
                    if let Some(story) = og.idx.and_then(|k| self.gaps.get_mut(k)) {
                        story.nak = Some(NakMatch {
                            frame: frame_no,
                            ts_ns: ts,
                            delay_ns: delay,
                        });
                    }
                }
            }
            AethKind::RnrNak { .. } => {
                g.last_rnr = Some(PendingNak {
                    psn,
                    ts,
                    frame: frame_no,
                });
            }
            _ => {}
        }
        // MSN cross-check (spec/roce.md §3): the MSN of an AETH with PSN q counts the request
        // messages completed up to q (before q for a NAK, whose PSN is not yet accepted). Only
        // AETHs whose PSN moves forward are checked: a READ response may repeat an older PSN
        // with the older MSN of the READ's execution.
        let msn = aeth.msn & psn::PSN_MASK;
        if f.msn_last_psn.is_some_and(|l| psn_diff(psn, l) <= 0) {
            return;
        }
        f.msn_last_psn = Some(psn);
        let strict = !matches!(kind, AethKind::Ack { .. });
        while let Some(&u) = g.unit_psns.front() {
            let d = psn_diff(psn, u);
            if d < 0 || (strict && d == 0) {
                break;
            }
            g.unit_psns.pop_front();
            g.acked_units += 1;
        }
        match f.msn_base {
            None => f.msn_base = Some((msn, g.acked_units)),
            Some((m0, u0)) => {
                let delta = u64::from(psn::psn_distance(msn, m0));
                let units = g.acked_units - u0;
                f.msn_delta = delta;
                f.msn_units = units;
                f.msn_checked += 1;
                if delta != units {
                    f.msn_mismatches += 1;
                }
            }
        }
    }

    fn request(&mut self, i: usize, frame_no: u64, ts: u64, p: &RocePacket, op: Operation) {
        let Some(bth) = p.bth else { return };
        let (advance, slack) = if op == Operation::ReadRequest {
            match (p.ext.reth, self.pmtu_for(i)) {
                (Some(r), Some(m)) => (read_psn_span(r.dma_len, m), 0),
                (Some(r), None) => (1, read_psn_span(r.dma_len, 256) - 1),
                (None, _) => (1, 0),
            }
        } else {
            (1, 0)
        };
        let keep_gaps = self.cfg.keep_gaps;
        let f = &mut self.flows[i];
        let verdict = f.req_psn.observe(bth.psn, advance, slack, false);
        let prev_ts = f.last_req_ts.unwrap_or(ts);
        match verdict {
            PsnVerdict::Ahead { expected, missing } => {
                let idx = (self.gaps.len() < keep_gaps).then(|| {
                    self.gaps.push(GapReport {
                        flow: i,
                        frame: frame_no,
                        ts_ns: ts,
                        space: "request",
                        expected_psn: expected,
                        received_psn: bth.psn,
                        missing,
                        nak: None,
                        retransmission: None,
                    });
                    self.gaps.len() - 1
                });
                if f.open_gaps.len() >= MAX_OPEN_GAPS {
                    f.open_gaps.pop_front();
                }
                f.open_gaps.push_back(OpenGap {
                    idx,
                    ts,
                    expected,
                    nak_ts: None,
                });
                f.retx_psn = None;
            }
            PsnVerdict::Behind { .. } => {
                let psn = bth.psn;
                // Retransmission causes exist only on reliable transports; UC/UD packets behind
                // the expected PSN are counted as retransmitted but not classified.
                let reliable = matches!(
                    bth.opcode.transport(),
                    Transport::Rc | Transport::Xrc | Transport::Rd
                );
                let new_episode = reliable && f.retx_psn != Some(psn);
                if new_episode {
                    if let Some(n) = f.last_nak.filter(|n| n.psn == psn) {
                        f.nak_retransmissions += 1;
                        f.retx_delay.add(ts.saturating_sub(n.ts));
                        f.last_nak = None;
                    } else if let Some(n) = f.last_rnr.filter(|n| n.psn == psn) {
                        f.rnr_retransmissions += 1;
                        f.rnr_delay.add(ts.saturating_sub(n.ts));
                        f.last_rnr = None;
                    } else {
                        f.timeouts += 1;
                        f.timeout_delay.add(ts.saturating_sub(prev_ts));
                    }
                    // Karn: no RTT samples for PSNs sent again.
                    f.pending_acks.retain(|&(q, _)| psn_diff(q, psn) < 0);
                }
                if let Some(k) = f.open_gaps.iter().position(|g| g.expected == psn) {
                    let og = f.open_gaps.remove(k).unwrap_or(OpenGap {
                        idx: None,
                        ts,
                        expected: psn,
                        nak_ts: None,
                    });
                    let (from, trigger) = match og.nak_ts {
                        Some(n) => (n, "nak"),
                        None => (prev_ts, "timeout"),
                    };
                    if let Some(story) = og.idx.and_then(|k| self.gaps.get_mut(k)) {
                        story.retransmission = Some(Retransmission {
                            frame: frame_no,
                            ts_ns: ts,
                            delay_ns: ts.saturating_sub(from),
                            trigger,
                        });
                    }
                }
                f.retx_psn = Some(psn_add(psn, advance));
            }
            _ => f.retx_psn = None,
        }
        let behind = matches!(verdict, PsnVerdict::Behind { .. });
        if bth.ack_req && !behind {
            if f.pending_acks.len() >= MAX_PENDING_ACKS {
                f.pending_acks.pop_front();
            }
            f.pending_acks.push_back((bth.psn, ts));
        }
        f.last_req_ts = Some(ts);

        // Reassembly.
        let kind = if op.is_send() {
            MessageKind::Send
        } else if op.is_write() {
            MessageKind::Write
        } else if op.is_atomic() {
            MessageKind::Atomic
        } else {
            // READ request, FLUSH, RESYNC: consume PSNs, no message here.
            MessageKind::Read
        };
        let piece = Piece {
            transport: bth.opcode.transport(),
            kind,
            position: op.position(),
            psn: bth.psn,
            advance,
            slack,
            restart: false,
            frame: frame_no,
            ts,
            bytes: p.payload_len,
            imm: p.ext.imm,
            reth: p.ext.reth,
            immediate: op.has_immediate(),
        };
        if f.req_asm.offer(&piece, i) == Accept::Completed {
            let Some(mut m) = f.req_asm.take() else {
                return;
            };
            if f.unit_psns.len() >= MAX_UNITS {
                f.unit_psns.pop_front();
            }
            let unit_psn = if matches!(kind, MessageKind::Send | MessageKind::Write) {
                bth.psn
            } else {
                m.first_psn
            };
            f.unit_psns.push_back(unit_psn);
            if op == Operation::ReadRequest {
                if let Some(r) = p.ext.reth {
                    if f.reads.len() >= MAX_OUTSTANDING_READS {
                        f.reads.pop_front();
                    }
                    f.reads.push_back(ReadReq {
                        psn: bth.psn,
                        reth: r,
                        ts,
                        frame: frame_no,
                    });
                }
                return;
            }
            if kind == MessageKind::Read {
                return;
            }
            if kind == MessageKind::Atomic {
                m.dma_len_mismatch = false;
            }
            f.dma_len_mismatches += u64::from(m.dma_len_mismatch);
            let slot = &mut f.msgs[kind.index()];
            slot.0 += 1;
            slot.1 += m.bytes;
            if self.cfg.keep_messages {
                self.messages.push(m);
            }
        }
    }

    fn read_response(&mut self, i: usize, frame_no: u64, ts: u64, p: &RocePacket, op: Operation) {
        let Some(bth) = p.bth else { return };
        let pos = op.position();
        let restart = matches!(pos, Position::First | Position::Only);
        let keep_gaps = self.cfg.keep_gaps;
        let f = &mut self.flows[i];
        if let PsnVerdict::Ahead { expected, missing } = f.resp_psn.observe(bth.psn, 1, 0, restart)
            && self.gaps.len() < keep_gaps
        {
            self.gaps.push(GapReport {
                flow: i,
                frame: frame_no,
                ts_ns: ts,
                space: "read_response",
                expected_psn: expected,
                received_psn: bth.psn,
                missing,
                nak: None,
                retransmission: None,
            });
        }
        let piece = Piece {
            transport: bth.opcode.transport(),
            kind: MessageKind::Read,
            position: pos,
            psn: bth.psn,
            advance: 1,
            slack: 0,
            restart,
            frame: frame_no,
            ts,
            bytes: p.payload_len,
            imm: None,
            reth: None,
            immediate: false,
        };
        let acc = f.resp_asm.offer(&piece, i);
        if acc == Accept::Dropped {
            return;
        }
        let peer = f.peer.map(|j| j as usize);
        if restart {
            // Attach the READ request this response answers.
            if let Some(j) = peer {
                let (f, g) = two_mut(&mut self.flows, i, j);
                while let Some(r) = g.reads.front().copied() {
                    let d = psn_diff(r.psn, bth.psn);
                    if d > 0 {
                        break;
                    }
                    g.reads.pop_front();
                    if d == 0 {
                        if let Some(m) = f.resp_asm.open.as_mut() {
                            m.reth = Some(r.reth.into());
                            m.request_frame = Some(r.frame);
                            m.request_ts_ns = Some(r.ts);
                        }
                        break;
                    }
                }
            }
        }
        let f = &mut self.flows[i];
        if acc == Accept::Completed
            && let Some(mut m) = f.resp_asm.take()
        {
            m.read_latency_ns = m.request_ts_ns.map(|r| ts.saturating_sub(r));
            f.dma_len_mismatches += u64::from(m.dma_len_mismatch);
            let slot = &mut f.msgs[MessageKind::Read.index()];
            slot.0 += 1;
            slot.1 += m.bytes;
            if self.cfg.keep_messages {
                self.messages.push(m);
            }
        }
    }

    /// Take the messages completed so far (with `keep_messages`), in completion order: a
    /// consumer that streams them out (the Parquet export) keeps memory bounded; the report's
    /// `messages` then holds only those completed after the last call.
    pub fn take_messages(&mut self) -> Vec<Message> {
        std::mem::take(&mut self.messages)
    }

    /// End the analysis and build the report.
    pub fn finish(self) -> Report {
        build::build(self)
    }
}
