//! The requester's side of a connection (issue 3 points 2–4, issue 11 points 1 and 3): PSN
//! tracking of the requests a flow sends, gap stories and retransmission episodes, ACK timing,
//! and message assembly with each message handed to [`outcome`](super::outcome).
//!
//! Every function works on one flow and the shared [`Sink`]; nothing here looks at other
//! flows, so the rules hold per connection however the flows are stored.

use super::Packet;
use super::Sink;
use super::capture_gap::{self, Held};
use super::flow::{Flow, MAX_OPEN_GAPS, MAX_PENDING_ACKS, OpenGap};
use super::message::{Accept, FethInfo, Message, MessageKind, Piece};
use super::outcome::{self, Awaiting};
use super::psn::{PsnVerdict, psn_add, psn_diff, read_psn_span};
use super::report::{GapReport, GapVerdict, PsnSpace, Retransmission, RetxTrigger};
use crate::decode::{Bth, Operation, Transport};

/// One request packet and what the rules need beside it.
pub(super) struct Req<'p, 'a> {
    /// Index of the flow.
    pub flow: usize,
    /// Frame number.
    pub frame: u64,
    /// Capture time, ns.
    pub ts: u64,
    /// The packet.
    pub p: &'p Packet<'a>,
    /// Its BTH.
    pub bth: Bth,
    /// Its operation.
    pub op: Operation,
    /// Path MTU for READ reservations, when known.
    pub pmtu: Option<u32>,
}

/// Whether `t` acknowledges requests (and so retransmits them).
pub(super) fn reliable(t: Transport) -> bool {
    matches!(t, Transport::Rc | Transport::Xrc | Transport::Rd)
}

/// The message kind a request operation starts; `None` for RESYNC (PSNs only).
fn kind_of(op: Operation) -> Option<MessageKind> {
    if op.is_send() {
        Some(MessageKind::Send)
    } else if op.is_write() {
        Some(MessageKind::Write)
    } else {
        match op {
            Operation::ReadRequest => Some(MessageKind::Read),
            Operation::CompareSwap | Operation::FetchAdd => Some(MessageKind::Atomic),
            Operation::Flush => Some(MessageKind::Flush),
            Operation::AtomicWrite => Some(MessageKind::AtomicWrite),
            _ => None,
        }
    }
}

/// PSNs the request consumes and the extra tolerance after it: a READ reserves
/// `ceil(len / PMTU)` PSNs; with the PMTU unknown, 1 for sure and up to `ceil(len / 256)`.
fn reservation(f: &mut Flow, r: &Req<'_, '_>) -> (u32, u32) {
    if r.op != Operation::ReadRequest {
        return (1, 0);
    }
    match (r.p.ext.reth, r.pmtu) {
        (Some(x), Some(m)) => (read_psn_span(x.dma_len, m), 0),
        (Some(x), None) => {
            let most = read_psn_span(x.dma_len, 256);
            if most > 1 {
                f.cold_mut().reads_without_pmtu += 1;
            }
            (1, most - 1)
        }
        (None, _) => (1, 0),
    }
}

/// Account one request packet of flow `f` (reliable or UC: PSN-tracked).
pub(super) fn request(f: &mut Flow, sink: &mut Sink, r: &Req<'_, '_>) {
    let (advance, slack) = reservation(f, r);
    let verdict = f.req_psn.observe(r.bth.psn, advance, slack, false);
    sink.emit(|| super::tap::TapEvent::Psn {
        flow: r.flow,
        ts_ns: r.ts,
        psn: r.bth.psn,
        space: super::tap::PsnSpace::Request,
        verdict,
    });
    let prev_ts = f.last_req_ts.unwrap_or(r.ts);
    match verdict {
        PsnVerdict::Ahead { expected, missing } => gap(f, sink, r, expected, missing),
        PsnVerdict::Behind { .. } => behind(f, sink, r, prev_ts, advance),
        _ => f.end_retx(),
    }
    let behind = matches!(verdict, PsnVerdict::Behind { .. });
    if r.bth.ack_req && !behind {
        if f.pending_acks.len() >= MAX_PENDING_ACKS {
            f.pending_acks.pop_front();
        }
        f.pending_acks.push_back((r.bth.psn, r.ts));
    }
    f.last_req_ts = Some(r.ts);
    let known_span =
        (r.p.ext.reth.is_some() && (slack == 0 || r.pmtu.is_some())).then_some(advance);
    assemble(f, sink, r, advance, slack, known_span);
}

/// A gap: store its story and open it for the NAK and retransmission that may follow.
fn gap(f: &mut Flow, sink: &mut Sink, r: &Req<'_, '_>, expected: u32, missing: u32) {
    let idx = sink.gap(GapReport {
        flow: r.flow,
        frame: r.frame,
        ts_ns: r.ts,
        space: PsnSpace::Request,
        expected_psn: expected,
        received_psn: r.bth.psn,
        missing,
        nak: None,
        retransmission: None,
        ack_frame: None,
        verdict: GapVerdict::Unresolved,
    });
    if f.cold().open_gaps.len() >= MAX_OPEN_GAPS {
        f.cold_mut().open_gaps.pop_front();
    }
    f.cold_mut().open_gaps.push_back(OpenGap {
        idx,
        ts: r.ts,
        expected,
        nak_ts: None,
        last_missing: psn_add(expected, missing.saturating_sub(1)),
    });
    f.cold_mut().retx_psn = None;
}

/// A request behind the expected PSN: a READ re-issue, or a retransmission whose episode is
/// classified by what came before it (PSN-sequence NAK, RNR NAK, else a timeout).
fn behind(f: &mut Flow, sink: &mut Sink, r: &Req<'_, '_>, prev_ts: u64, advance: u32) {
    let psn = r.bth.psn;
    let ts = r.ts;
    let why = (r.op == Operation::ReadRequest)
        .then(|| outcome::reissue(f, sink, psn, r.frame, ts))
        .flatten();
    let reissue = why.is_some();
    if let Some(why) = why {
        f.cold_mut().read_reissues += 1;
        if why == outcome::Reissue::AfterTimeout {
            let original = original_ts(f, psn);
            let c = f.cold_mut();
            c.timeouts += 1;
            c.add_delay(|c| &mut c.timeout_delay, prev_ts, ts);
            c.evidence.timeout_retx(psn, r.frame, ts, original);
        }
    } else if reliable(r.bth.opcode.transport()) && f.cold().retx_psn != Some(psn) {
        // Retransmission causes exist only on reliable transports; UC packets behind the
        // expected PSN are counted as retransmitted but not classified.
        if let Some(n) = f.cold().last_nak.filter(|n| n.psn == psn) {
            let c = f.cold_mut();
            c.nak_retransmissions += 1;
            c.add_delay(|c| &mut c.retx_delay, n.ts, ts);
            c.last_nak = None;
        } else if let Some(n) = f.cold().last_rnr.filter(|n| n.psn == psn) {
            let c = f.cold_mut();
            c.rnr_retransmissions += 1;
            c.add_delay(|c| &mut c.rnr_delay, n.ts, ts);
            c.last_rnr = None;
        } else {
            let original = original_ts(f, psn);
            let c = f.cold_mut();
            c.timeouts += 1;
            c.add_delay(|c| &mut c.timeout_delay, prev_ts, ts);
            c.evidence.timeout_retx(psn, r.frame, ts, original);
        }
    }
    if reissue || f.cold().retx_psn != Some(psn) {
        // Karn: no RTT samples for PSNs sent again.
        f.pending_acks.retain(|&(q, _)| psn_diff(q, psn) < 0);
    }
    if let Some(k) = f.cold().open_gaps.iter().position(|g| g.expected == psn)
        && let Some(og) = f.cold_mut().open_gaps.remove(k)
    {
        let (from, trigger) = match og.nak_ts {
            Some(n) => (n, RetxTrigger::Nak),
            None => (prev_ts, RetxTrigger::Timeout),
        };
        if let Some(story) = og.idx.and_then(|k| sink.gaps.get_mut(k)) {
            story.retransmission = Some(Retransmission {
                frame: r.frame,
                ts_ns: ts,
                delay_ns: ts.checked_sub(from),
                trigger,
            });
        }
    }
    f.cold_mut().retx_psn = Some(psn_add(psn, advance));
}

/// Time of the first send of `psn` while it still awaits its ACK (an AckReq request), for the
/// retry spacing of the findings; looked up on a timeout retransmission only.
fn original_ts(f: &Flow, psn: u32) -> Option<u64> {
    f.pending_acks
        .iter()
        .find(|&&(q, _)| q == psn)
        .map(|&(_, t)| t)
}

/// A UD request: every packet is a whole message (its PSNs are the sender's, see `ud`).
pub(super) fn assemble_ud(f: &mut Flow, sink: &mut Sink, r: &Req<'_, '_>) {
    assemble(f, sink, r, 1, 0, None);
}

/// Message assembly under go-back-N; a completed message goes to [`outcome`].
fn assemble(
    f: &mut Flow,
    sink: &mut Sink,
    r: &Req<'_, '_>,
    advance: u32,
    slack: u32,
    span: Option<u32>,
) {
    let kind = kind_of(r.op);
    let p = r.p;
    let piece = Piece {
        transport: r.bth.opcode.transport(),
        kind: kind.unwrap_or(MessageKind::Read),
        position: r.op.position(),
        psn: r.bth.psn,
        advance,
        slack,
        frame: r.frame,
        ts: r.ts,
        bytes: p.payload_len,
        imm: p.ext.imm,
        reth: p.ext.reth,
        immediate: r.op.has_immediate(),
    };
    match f.req_asm.offer(&piece, r.flow) {
        Accept::Dropped => {
            if reliable(piece.transport) {
                dropped(f, sink, r, &piece, kind, span);
            }
            return;
        }
        Accept::Open => {
            in_message(f, sink);
            capture_gap::resent(f);
            return;
        }
        Accept::Completed => {
            in_message(f, sink);
            capture_gap::resent(f);
        }
    }
    let Some(m) = f.req_asm.finished() else {
        return;
    };
    let first_psn = m.first_psn;
    let transport = r.bth.opcode.transport();
    if matches!(kind, Some(MessageKind::Send | MessageKind::Write)) {
        let done = Awaiting {
            first_psn,
            last_psn: m.last_psn,
            kind: m.kind,
            bytes: m.bytes,
            msg: None,
        };
        let mismatch = m.complete && m.dma_len_mismatch;
        // Copied (168 bytes) only for a kept list: `then_some(*m)` copied it for every message.
        let kept = if sink.wants_messages() {
            Some(*m)
        } else {
            None
        };
        f.unit(r.bth.psn);
        outcome::send_write_done(f, sink, done, mismatch, kept.as_ref(), reliable(transport));
        return;
    }
    let (m, span) = request_message(m, kind, r, span);
    f.unit(first_psn);
    if kind.is_some() {
        outcome::expect_response(f, sink, m, span);
    }
}

/// The packet the flow's assembler just accepted belongs to its open message: tell the tap
/// (`analysis.message`). Nothing is made without a tap.
#[inline]
fn in_message(f: &Flow, sink: &mut Sink) {
    if let Some(m) = &f.req_asm.open {
        let message = m.id;
        sink.emit(|| super::tap::TapEvent::InMessage { message });
    }
}

/// A reliable request packet the assembler dropped: to [`capture_gap`] (out of line: a gap is
/// rare, and the per-packet path keeps the assembler inlined).
#[cold]
#[inline(never)]
fn dropped(
    f: &mut Flow,
    sink: &mut Sink,
    r: &Req<'_, '_>,
    piece: &Piece,
    kind: Option<MessageKind>,
    span: Option<u32>,
) {
    let held = |m: &Message| match kind {
        Some(MessageKind::Send | MessageKind::Write) => Held::SendWrite(*m),
        None => Held::Unit(m.first_psn),
        _ => {
            let (m, span) = request_message(m, kind, r, span);
            Held::Request(m, span)
        }
    };
    capture_gap::dropped(f, sink, piece, r.flow, held);
}

/// A completed READ, atomic, FLUSH or ATOMIC WRITE request `m` as it waits for its response,
/// and the PSNs it reserves (a READ's span, 1 for the others).
fn request_message(
    m: &Message,
    kind: Option<MessageKind>,
    r: &Req<'_, '_>,
    span: Option<u32>,
) -> (Message, Option<u32>) {
    let mut m = *m;
    match kind {
        None | Some(MessageKind::Send | MessageKind::Write) => (m, span),
        Some(MessageKind::Read) => {
            m.bytes = 0;
            m.packets = 0;
            m.dma_len_mismatch = false;
            m.complete = false;
            m.request_frame = Some(r.frame);
            m.request_ts_ns = Some(r.ts);
            (m, span)
        }
        Some(k) => {
            if k == MessageKind::Flush {
                m.feth = r.p.ext.feth.map(|x| FethInfo {
                    selectivity: x.sel,
                    placement_type: x.plt,
                });
            }
            (m, Some(1))
        }
    }
}
