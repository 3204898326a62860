//! Per-flow state: one direction of traffic to one destination QP (issue 3, point 1).
//!
//! A flow is keyed by (source address, destination address, BTH DestQP); the address is the IP
//! (RoCEv2), the GID (RoCEv1, GRH) or the LID (native IB without GRH). A flow may carry two PSN
//! spaces (`spec/roce.md` §5: requests and responses share the requester's space): the
//! requests its source sends, and the READ responses its source returns for the peer's READs.
//! Each has its own [`PsnTracker`]; requests are assembled into messages by an [`Assembler`],
//! READ responses by the READ they answer (`outcome`).

use super::congestion::Congestion;
use super::message::{Assembler, MessageKind, MessageStatus};
use super::pending::{AwaitQueue, Outstanding, QpError};
use super::priority::{Counts, Priority};
use super::psn::PsnTracker;
use super::report::CountBytes;
use super::stats::Samples;
use crate::decode::{Address, Transport};
use std::collections::VecDeque;
use std::sync::LazyLock;

/// Flow key: (source, destination, DestQP), and the mirror session under `--encap-session`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowKey {
    /// Source address.
    pub src: Address,
    /// Destination address.
    pub dst: Address,
    /// BTH DestQP, 24 bits.
    pub dest_qp: u32,
    /// ERSPAN session ID (10 bits) or VXLAN VNI (24 bits) the frame was mirrored through, with
    /// [`super::AnalyzeConfig::encap_session`]; `None` otherwise.
    pub session: Option<u32>,
}

/// An address as two 64-bit words for hashing (the variant is left to `Eq`: an IPv6 address
/// and a GID with the same bits only collide in the hash).
#[inline]
fn addr_words(a: &Address) -> (u64, u64) {
    match a {
        Address::V4(b) => (u64::from(u32::from_be_bytes(*b)), 0),
        Address::V6(b) | Address::Gid(b) => {
            let mut lo = [0u8; 8];
            let mut hi = [0u8; 8];
            lo.copy_from_slice(&b[..8]);
            hi.copy_from_slice(&b[8..]);
            (u64::from_le_bytes(lo), u64::from_le_bytes(hi))
        }
        Address::Lid(l) => (u64::from(*l), 1 << 63),
    }
}

impl FlowKey {
    /// Whether this is the key of a packet from `src` to `dst` for DestQP `dest_qp` (through
    /// mirror session `session`), compared where those fields are, without building a key
    /// (DestQP first: the flows compared mostly differ there).
    #[inline]
    pub(super) fn is(
        &self,
        src: &Address,
        dst: &Address,
        dest_qp: u32,
        session: Option<u32>,
    ) -> bool {
        self.dest_qp == dest_qp && self.session == session && self.src == *src && self.dst == *dst
    }
}

impl std::hash::Hash for FlowKey {
    #[inline]
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        // Five word writes instead of the derived per-byte hashing: this runs once per packet.
        let (a0, a1) = addr_words(&self.src);
        let (b0, b1) = addr_words(&self.dst);
        state.write_u64(a0 ^ (b0 << 32) ^ (b0 >> 32));
        state.write_u64(a1);
        state.write_u64(b1);
        state.write_u64(u64::from(self.dest_qp));
        if let Some(s) = self.session {
            state.write_u32(s);
        }
    }
}

pub use super::report::PairedBy;

/// A NAK or RNR NAK seen in the reverse flow, waiting for the retransmission it triggers.
#[derive(Clone, Copy, Debug)]
pub struct PendingNak {
    /// PSN carried by the NAK (the expected PSN for a sequence error; the refused PSN for RNR).
    pub psn: u32,
    /// Capture time, ns.
    pub ts: u64,
    /// Frame number.
    pub frame: u64,
}

/// A gap event whose NAK or retransmission has not been seen yet.
#[derive(Clone, Copy, Debug)]
pub struct OpenGap {
    /// Index into the analyzer's stored gap list, when stored.
    pub idx: Option<usize>,
    /// Capture time of the packet that revealed the gap.
    pub ts: u64,
    /// First missing PSN (the expected PSN).
    pub expected: u32,
    /// NAK time, once matched.
    pub nak_ts: Option<u64>,
    /// Last missing PSN (`expected + missing − 1`): an ACK at or after it covers the gap.
    pub last_missing: u32,
}

/// Most AckReq packets awaiting an ACK per flow.
pub const MAX_PENDING_ACKS: usize = 1024;
/// Most open gap stories per flow.
pub const MAX_OPEN_GAPS: usize = 32;
/// Most unacknowledged request units remembered per flow for the MSN check.
pub const MAX_UNITS: usize = 4096;

/// Messages of one kind a responder executed (status `ok`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Executed {
    /// Messages.
    pub count: u64,
    /// Their payload bytes, from the packets' length fields.
    pub bytes: u64,
}

/// The part of a flow's state that only loss, NAKs, RNR, errors, refused messages, unmatched
/// responses, READ responses, UD PSN jumps and DMA length mismatches use (FECN/BECN marks and
/// the first CE / CNP frames are in [`Congestion`]'s reaction state):
/// boxed behind [`Flow::cold`], so that the many flows that see none of them (a sprayed table
/// of 16 384 flows, say) stay small.
#[derive(Clone, Debug, Default)]
pub struct FlowCold {
    /// NAK counts by code 0–4 (PSN sequence error, invalid request, remote access, remote
    /// operational, invalid RD request).
    pub naks: [u64; 5],
    /// NAKs with a reserved code, and AETHs of the reserved syndrome type.
    pub naks_reserved: u64,
    /// RNR NAKs.
    pub rnr_naks: u64,
    /// RNR NAK timers, µs.
    pub rnr_timer_us: Samples,
    /// READ responses this flow's source returns.
    pub resp_psn: PsnTracker,
    /// The fatal NAK that put this QP pair in the error state.
    pub error: Option<QpError>,
    /// Packets of this flow after the fatal NAK (not analysed as a normal exchange).
    pub after_error: u64,
    /// Response packets (READ responses, ATOMIC ACKNOWLEDGE) whose request is not in the
    /// capture.
    pub responses_unmatched: u64,
    /// Response packets repeating a response already seen (after a duplicate request).
    pub responses_duplicate: u64,
    /// PSN-sequence NAKs received for this flow's requests that no captured gap explains.
    pub unexplained_naks: u64,
    /// READ requests re-issued from inside their range (implicit NAK).
    pub read_reissues: u64,
    /// READ requests whose PSN reservation needed a PMTU that was not known.
    pub reads_without_pmtu: u64,
    /// UD: PSN jumps of this flow's sender (PSNs not seen in this capture), and PSNs skipped.
    pub ud_unseen: (u64, u64),
    /// UD: packets repeating a PSN of their sender.
    pub ud_duplicates: u64,
    /// Last PSN-sequence NAK received for this flow's requests.
    pub last_nak: Option<PendingNak>,
    /// Last RNR NAK received for this flow's requests.
    pub last_rnr: Option<PendingNak>,
    /// Gap stories still open.
    pub open_gaps: VecDeque<OpenGap>,
    /// Request packets after gaps not yet known to be capture losses or real ones (see
    /// `capture_gap`).
    pub capture_gap: super::gap_forks::State,
    /// While retransmitting: the PSN that continues the current retransmission episode.
    pub retx_psn: Option<u32>,
    /// Retransmission episodes after a PSN-sequence NAK.
    pub nak_retransmissions: u64,
    /// Retransmission episodes after an RNR NAK.
    pub rnr_retransmissions: u64,
    /// Retransmission episodes with no NAK: timeouts.
    pub timeouts: u64,
    /// Gap → NAK delays, ns (Lumina "NACK generation latency").
    pub nak_delay: Samples,
    /// NAK → retransmission delays, ns (Lumina "NACK reaction latency").
    pub retx_delay: Samples,
    /// Last packet → timeout retransmission delays, ns.
    pub timeout_delay: Samples,
    /// RNR NAK → retry delays, ns.
    pub rnr_delay: Samples,
    /// Messages refused by a fatal NAK, by kind ([`MessageKind::index`]).
    pub msgs_failed: [u64; MessageKind::COUNT],
    /// Completed messages whose bytes differ from their RETH DMA length.
    pub dma_len_mismatches: u64,
    /// Time intervals of the flow left out of its latency statistics because they were
    /// negative ([`super::stats::Samples::add_interval`]).
    pub negative_intervals: u64,
    /// Evidence frames and retry runs for the findings (issue 34).
    pub evidence: super::evidence::FlowEvidence,
}

impl FlowCold {
    /// Add the interval from `from` to `to` (ns) to the delay statistic `pick` chooses, or count
    /// it in `negative_intervals` when it is negative ([`Samples::add_interval`]).
    pub fn add_delay(&mut self, pick: fn(&mut FlowCold) -> &mut Samples, from: u64, to: u64) {
        if !pick(self).add_interval(from, to) {
            self.negative_intervals += 1;
        }
    }
}

/// The cold state of a flow that has none.
static NO_COLD: LazyLock<FlowCold> = LazyLock::new(FlowCold::default);

/// [`Flow::mirror_session`] of a flow seen through two or more mirror sessions (no session ID
/// or VNI is this large: 10 and 24 bits).
pub const MANY_SESSIONS: u32 = u32::MAX;

/// All per-flow state.
#[derive(Clone, Debug)]
pub struct Flow {
    /// Key.
    pub key: FlowKey,
    /// Transport of the first non-CNP packet.
    pub transport: Option<Transport>,
    /// First RoCEv2 UDP source port seen.
    pub udp_sport: Option<u16>,
    /// DETH source QP of the first UD packet (the sender's QPN).
    pub deth_src_qp: Option<u32>,
    /// The mirror session (ERSPAN session ID, VXLAN VNI) of the flow's first mirrored frame,
    /// [`MANY_SESSIONS`] once a frame came through another one.
    pub mirror_session: Option<u32>,
    /// Packets.
    pub packets: u64,
    /// Payload bytes (after all transport headers, without pad and ICRC).
    pub payload_bytes: u64,
    /// Transport bytes (BTH through ICRC).
    pub transport_bytes: u64,
    /// (opcode, count), in first-seen order.
    pub opcodes: Counts,
    /// ACKNOWLEDGE packets whose AETH is an ACK.
    pub acks: u64,
    /// Requests this flow's source sends.
    pub req_psn: PsnTracker,
    /// Request message assembler.
    pub req_asm: Assembler,
    /// Messages executed, by kind ([`MessageKind::index`]); the refused ones are counted in
    /// the cold state ([`FlowCold::msgs_failed`]).
    pub msgs: [Executed; MessageKind::COUNT],
    /// Completed SEND/WRITE messages whose ACK or NAK has not been seen.
    pub awaiting: AwaitQueue,
    /// Requests awaiting their response: READ, atomic, FLUSH, ATOMIC WRITE.
    pub outstanding: VecDeque<Outstanding>,
    /// DSCP / PCP values seen.
    pub prio: Priority,
    /// PSNs of accepted request units as the responder's MSN counts them: the last PSN of a
    /// SEND/WRITE, the PSN of a READ request or atomic; popped as AETHs cover them.
    pub unit_psns: VecDeque<u32>,
    /// Units covered by AETHs of the reverse flow so far.
    pub acked_units: u64,
    /// Messages left open at the end, or abandoned.
    pub incomplete: u64,
    /// Paired reverse flow.
    pub peer: Option<u32>,
    /// How.
    pub paired_by: Option<PairedBy>,
    /// The flow whose packet followed this flow's the last time the flow table was searched
    /// (a look-up hint, not analysis).
    pub next_hint: Option<u32>,
    /// Pairing attempts left by PSN.
    pub pair_tries: u8,
    /// AckReq requests awaiting an ACK: (psn, ts).
    pub pending_acks: VecDeque<(u32, u64)>,
    /// ACK RTT samples of this flow's requests, ns.
    pub ack_rtt: Samples,
    /// Time of the previous tracked request packet.
    pub last_req_ts: Option<u64>,
    /// PSN of the last AETH checked against the MSN (only forward moves are checked).
    pub msn_last_psn: Option<u32>,
    /// (MSN, peer's `acked_units`) at the first AETH of this flow.
    pub msn_base: Option<(u32, u64)>,
    /// MSN advance from the first to the last checked AETH.
    pub msn_delta: u64,
    /// Units the peer completed over the same span.
    pub msn_units: u64,
    /// AETHs checked after the first.
    pub msn_checked: u64,
    /// AETHs whose MSN advance differed from the units completed.
    pub msn_mismatches: u64,
    /// Congestion counters.
    pub cong: Congestion,
    /// Inferred path MTU: largest FIRST/MIDDLE payload seen (256–4096, a power of two).
    pub pmtu: Option<u32>,
    /// First packet time, ns.
    pub first_ts: u64,
    /// Last packet time, ns.
    pub last_ts: u64,
    /// First frame number.
    pub first_frame: u64,
    /// Loss, error and response bookkeeping that most flows never need: allocated by the first
    /// write ([`Flow::cold_mut`]), read through [`Flow::cold`].
    pub cold: Option<Box<FlowCold>>,
}

impl Flow {
    /// Remember one request unit as the responder's MSN counts it (the last PSN of a
    /// SEND/WRITE, the PSN of a READ request or atomic), for the MSN cross-check: at most
    /// [`MAX_UNITS`], the oldest dropped.
    pub(super) fn unit(&mut self, psn: u32) {
        if self.unit_psns.len() >= MAX_UNITS {
            self.unit_psns.pop_front();
        }
        self.unit_psns.push_back(psn);
    }

    /// A new empty flow.
    pub fn new(key: FlowKey, ts: u64, frame: u64) -> Flow {
        Flow {
            key,
            transport: None,
            udp_sport: None,
            deth_src_qp: None,
            mirror_session: None,
            packets: 0,
            payload_bytes: 0,
            transport_bytes: 0,
            opcodes: Counts::default(),
            acks: 0,
            req_psn: PsnTracker::default(),
            req_asm: Assembler::default(),
            msgs: [Executed::default(); MessageKind::COUNT],
            awaiting: AwaitQueue::default(),
            outstanding: VecDeque::new(),
            prio: Priority::default(),
            unit_psns: VecDeque::new(),
            acked_units: 0,
            incomplete: 0,
            peer: None,
            paired_by: None,
            next_hint: None,
            pair_tries: 16,
            pending_acks: VecDeque::new(),
            ack_rtt: Samples::default(),
            last_req_ts: None,
            msn_last_psn: None,
            msn_base: None,
            msn_delta: 0,
            msn_units: 0,
            msn_checked: 0,
            msn_mismatches: 0,
            cong: Congestion::default(),
            pmtu: None,
            first_ts: ts,
            last_ts: ts,
            first_frame: frame,
            cold: None,
        }
    }

    /// The flow's cold state (all zero and empty until first written).
    #[inline]
    pub fn cold(&self) -> &FlowCold {
        self.cold.as_deref().unwrap_or(&NO_COLD)
    }

    /// The flow's cold state, allocated on first use.
    #[inline]
    pub fn cold_mut(&mut self) -> &mut FlowCold {
        self.cold.get_or_insert_default()
    }

    /// End a retransmission episode (nothing to do when none was ever recorded).
    #[inline]
    pub fn end_retx(&mut self) {
        if let Some(c) = &mut self.cold {
            c.retx_psn = None;
        }
    }

    /// Count one message of `kind` with `bytes` under `status`: executed ones in `msgs`,
    /// refused ones in the cold state's `msgs_failed`, the rest in `incomplete`.
    pub fn count_message(&mut self, kind: MessageKind, bytes: u64, status: MessageStatus) {
        match status {
            MessageStatus::Ok => {
                let c = &mut self.msgs[kind.index()];
                c.count += 1;
                c.bytes += bytes;
            }
            MessageStatus::Incomplete => self.incomplete += 1,
            _ => self.cold_mut().msgs_failed[kind.index()] += 1,
        }
    }

    /// The messages of kind `i` ([`MessageKind::index`]): executed and refused.
    pub fn messages(&self, i: usize) -> CountBytes {
        CountBytes {
            count: self.msgs[i].count,
            bytes: self.msgs[i].bytes,
            failed: self.cold().msgs_failed[i],
        }
    }

    /// Count a completed message whose bytes differ from its RETH DMA length.
    pub fn count_dma_len_mismatch(&mut self) {
        self.cold_mut().dma_len_mismatches += 1;
    }

    /// Count the BTH FECN and BECN bits of one packet (the congestion reaction state is
    /// touched only when one is set).
    #[inline]
    pub fn count_fecn_becn(&mut self, fecn: bool, becn: bool) {
        if fecn || becn {
            let c = self.cong.reaction_mut();
            c.fecn += u64::from(fecn);
            c.becn += u64::from(becn);
        }
    }

    /// Undo [`Flow::count_message`] of an executed message (a NAK refused it after all).
    pub fn uncount_ok(&mut self, kind: MessageKind, bytes: u64) {
        let c = &mut self.msgs[kind.index()];
        c.count = c.count.saturating_sub(1);
        c.bytes = c.bytes.saturating_sub(bytes);
    }

    /// Mean ACK RTT of this flow's requests so far, ns: "one RTT" for CNPs near NAKs.
    pub fn rtt(&self) -> Option<u64> {
        self.ack_rtt.mean()
    }

    /// Count one opcode.
    #[inline]
    pub fn count_opcode(&mut self, op: u8) {
        self.opcodes.add(op);
    }
}

#[cfg(test)]
mod size_tests {
    use super::super::congestion::{RateTracker, Reaction};
    use super::*;

    /// The per-flow state's sizes, bounds of `read -q`'s peak memory (issue 38: with 7,832
    /// flows on the 500k-frame mixed trace, every byte of `Flow` is 7.6 kB): a field added to
    /// the inline state, or to the cold state that most flows of a lossy capture hold, must
    /// raise these bounds on purpose. The first CE / CNP frames and the FECN / BECN counts live
    /// in the boxed `Reaction`, so a flow that is only CE-marked or only carries CNPs does not
    /// allocate the 640-byte cold state. `Flow` grew from 864 to 904 bytes with the CNP-train
    /// rate history (issue 39: a fine and a coarse ring of the flow's recent packets, 80 bytes
    /// inline instead of 40), 0.3 MB on that trace; `FlowCold` from 640 to 664 with the stack of
    /// capture-gap forks (issue 38's remove-one-frame work: `capture_gap::State` in place of one
    /// boxed fork).
    #[test]
    fn per_flow_state_stays_small() {
        assert!(
            size_of::<Flow>() <= 904,
            "Flow: {} bytes",
            size_of::<Flow>()
        );
        assert!(
            size_of::<FlowCold>() <= 664,
            "FlowCold: {} bytes",
            size_of::<FlowCold>()
        );
        assert!(
            size_of::<Reaction>() <= 128,
            "Reaction: {} bytes",
            size_of::<Reaction>()
        );
        assert!(
            size_of::<RateTracker>() <= 88,
            "RateTracker: {} bytes",
            size_of::<RateTracker>()
        );
    }
}
