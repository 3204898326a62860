//! Request outcomes (issue 11, points 1 and 3): each request message ends `ok`, `incomplete`
//! or refused by the fatal NAK that answered it, and each response is matched to its request.
//!
//! Rules (spec/roce.md §3 and §5, from rxe's completer and responder):
//! - SEND and WRITE are counted as executed when their last packet is accepted; an ACK at or
//!   after their last PSN confirms them, a fatal NAK whose PSN falls inside them refuses them.
//! - READ, CmpSwap / FetchAdd, FLUSH and ATOMIC WRITE wait for their response: READ RESPONSE
//!   FIRST/MIDDLE/LAST/ONLY within the READ's PSN range, ATOMIC ACKNOWLEDGE at the atomic's
//!   PSN, a zero-length READ RESPONSE ONLY at the FLUSH / ATOMIC WRITE's PSN.
//! - A fatal NAK (codes 1–4) refuses the request containing its PSN and moves the QP pair to
//!   the error state: requests after it are flushed (`incomplete`), later packets are counted
//!   and not analysed (IBTA Vol 1 §9.9.2; rxe `check_ack`).
//! - A READ request sent again from inside its range after lost responses is the same READ
//!   re-issued (the requester's implicit NAK); the responder re-executes from that PSN and the
//!   READ completes when its last response arrives.
//! - A response that no captured request covers is `responses.unmatched` when its PSN lies
//!   outside the PSNs its requester sent in the capture (the request was not captured), else
//!   `responses.duplicate` (the answer to a duplicate request).

use super::Sink;
use super::flow::Flow;
use super::message::{Message, MessageKind, MessageStatus};
use super::pending::MAX_OUTSTANDING;
pub use super::pending::{AwaitQueue, Awaiting, Outstanding, QpError, Response};
use super::psn::{psn_add, psn_diff, psn_distance};
use super::report::{Retransmission, RetxTrigger};
use crate::decode::Position;

/// Count message `m` with `status` in flow `f` and keep a copy when messages are kept (no
/// copy otherwise: this runs once per message).
fn emit(f: &mut Flow, sink: &mut Sink, m: &Message, status: MessageStatus) -> Option<usize> {
    if status == MessageStatus::Ok && m.complete && m.dma_len_mismatch {
        f.count_dma_len_mismatch();
    }
    f.count_message(m.kind, m.bytes, status);
    if !sink.wants_messages() {
        return None;
    }
    let mut m = *m;
    m.status = status;
    sink.message(m)
}

/// SEND or WRITE message `m` completed in requester flow `f`: executed unless a NAK refuses it.
/// `kept` is the message itself when messages are kept.
pub(super) fn send_write_done(
    f: &mut Flow,
    sink: &mut Sink,
    m: Awaiting,
    mismatch: bool,
    kept: Option<&Message>,
    reliable: bool,
) {
    if mismatch {
        f.count_dma_len_mismatch();
    }
    f.count_message(m.kind, m.bytes, MessageStatus::Ok);
    let msg = kept.and_then(|k| sink.message(*k));
    if reliable {
        f.awaiting.push(Awaiting { msg, ..m });
    }
}

/// Request `m` (READ, atomic, FLUSH, ATOMIC WRITE) accepted in requester flow `f`: wait for
/// its response. The oldest waiting request is given up (`incomplete`) past
/// [`MAX_OUTSTANDING`].
pub(super) fn expect_response(f: &mut Flow, sink: &mut Sink, m: Message, span: Option<u32>) {
    if f.outstanding.len() >= MAX_OUTSTANDING
        && let Some(o) = f.outstanding.pop_front()
    {
        emit(f, sink, &o.msg, MessageStatus::Incomplete);
    }
    f.outstanding.push_back(Outstanding {
        msg: m,
        span,
        frontier: m.first_psn,
        seg: None,
        accepted: (0, 0),
        first_resp: None,
        end_after_hole: None,
        gap: None,
    });
}

/// The outstanding request of `g` whose PSN range covers `psn` (requests are kept in PSN
/// order; a READ of unknown span covers PSNs up to the next request).
fn covering(g: &Flow, psn: u32) -> Option<usize> {
    for (k, o) in g.outstanding.iter().enumerate() {
        let d = psn_diff(psn, o.msg.first_psn);
        if d < 0 {
            return None;
        }
        let inside = match o.span {
            Some(s) => (d as u32) < s,
            None => g
                .outstanding
                .get(k + 1)
                .is_none_or(|n| psn_diff(psn, n.msg.first_psn) < 0),
        };
        if inside {
            return Some(k);
        }
    }
    None
}

/// A response in responder flow `f` whose request no outstanding entry holds.
fn unmatched(f: &mut Flow, g: Option<&Flow>, psn: u32) {
    // Inside the PSNs the requester sent in the capture: an answer to a duplicate request.
    // Elsewhere: its request is not in the capture.
    let sent = g.is_some_and(|g| {
        g.req_psn
            .first
            .is_some_and(|first| psn_diff(psn, first) >= 0 && psn_diff(psn, g.req_psn.expected) < 0)
    });
    if !sent {
        f.cold_mut().responses_unmatched += 1;
    } else {
        f.cold_mut().responses_duplicate += 1;
    }
}

/// A response packet in responder flow `f` (index `fi`) for requester flow `g` (`None` when
/// the flow is not paired).
pub(super) fn response(
    f: &mut Flow,
    fi: usize,
    g: Option<&mut Flow>,
    sink: &mut Sink,
    r: &Response,
) {
    let Some(g) = g else {
        unmatched(f, None, r.psn);
        return;
    };
    let Some(k) = covering(g, r.psn) else {
        unmatched(f, Some(g), r.psn);
        return;
    };
    let kind = g.outstanding[k].msg.kind;
    match (kind, r.atomic_ack) {
        (MessageKind::Read, false) => read_response(f, fi, g, k, sink, r),
        (MessageKind::Atomic, true) => {
            if let Some(o) = g.outstanding.remove(k) {
                in_message(sink, &o.msg);
                emit(g, sink, &o.msg, MessageStatus::Ok);
            }
        }
        (MessageKind::Flush | MessageKind::AtomicWrite, false) if r.pos == Position::Only => {
            if let Some(o) = g.outstanding.remove(k) {
                in_message(sink, &o.msg);
                emit(g, sink, &o.msg, MessageStatus::Ok);
            }
        }
        _ => f.cold_mut().responses_duplicate += 1,
    }
}

/// The response packet being analysed belongs to request message `m`: tell the tap
/// (`analysis.message`).
#[inline]
fn in_message(sink: &mut Sink, m: &Message) {
    let message = m.id;
    sink.emit(|| super::tap::TapEvent::InMessage { message });
}

/// The READ message of outstanding `o`, carried by flow `resp_flow`; `end` is its last
/// response (PSN, payload, frame, ts) when it completed.
fn read_message(o: &Outstanding, resp_flow: usize, end: Option<(u32, u32, u64, u64)>) -> Message {
    let mut m = o.msg;
    m.flow = resp_flow;
    m.packets = o.accepted.0;
    m.bytes = o.accepted.1;
    if let Some((frame, ts)) = o.first_resp {
        m.first_frame = frame;
        m.last_frame = frame;
        m.start_ts_ns = ts;
        m.end_ts_ns = ts;
    }
    if let Some((psn, last_len, frame, ts)) = end {
        // Every response but the last carries one PMTU: the bytes the responder executed
        // follow from the PSNs even when the capture missed some responses.
        let n = psn_distance(psn, m.first_psn);
        m.last_psn = psn;
        m.last_frame = frame;
        m.end_ts_ns = ts;
        m.packets = n + 1;
        m.bytes = match (n, o.seg) {
            (0, _) => u64::from(last_len),
            (_, Some(s)) => u64::from(n) * u64::from(s) + u64::from(last_len),
            _ => o.accepted.1,
        };
        m.complete = true;
        m.read_latency_ns = m.request_ts_ns.map(|t| ts.saturating_sub(t));
        m.dma_len_mismatch = m.reth.is_some_and(|r| u64::from(r.dma_len) != m.bytes);
    }
    m.duration_ns = m.end_ts_ns.saturating_sub(m.start_ts_ns);
    m
}

/// A READ response for outstanding READ `k` of requester flow `g`.
fn read_response(f: &mut Flow, fi: usize, g: &mut Flow, k: usize, sink: &mut Sink, r: &Response) {
    let o = &mut g.outstanding[k];
    if o.gap.is_none() {
        o.gap = r.gap;
    }
    o.first_resp.get_or_insert((r.frame, r.ts));
    if matches!(r.pos, Position::First | Position::Middle) {
        o.seg = Some(r.payload);
    }
    let last = matches!(r.pos, Position::Last | Position::Only);
    let mut d = psn_diff(r.psn, o.frontier);
    if d < 0 && matches!(r.pos, Position::First | Position::Only) {
        // The responder re-executes from a re-issued READ's PSN.
        o.frontier = r.psn;
        d = 0;
    }
    if d < 0 {
        f.cold_mut().responses_duplicate += 1;
        return;
    }
    if d > 0 {
        // After a hole: the requester discards it (go-back-N), but the responder executed.
        // A READ has one LAST (a re-executed one repeats its PSN): a later LAST past the
        // hole answers a READ whose request the capture missed (its span unknown here).
        if last && o.end_after_hole.is_none() {
            o.end_after_hole = Some((r.psn, r.payload, r.frame, r.ts));
            if let Some(story) = o.gap.and_then(|i| sink.gaps.get_mut(i)) {
                story.ack_frame.get_or_insert(r.frame);
            }
        }
        return;
    }
    o.accepted.0 += 1;
    o.accepted.1 += u64::from(r.payload);
    in_message(sink, &o.msg);
    o.frontier = psn_add(r.psn, 1);
    if last && let Some(o) = g.outstanding.remove(k) {
        let m = read_message(&o, fi, Some((r.psn, r.payload, r.frame, r.ts)));
        emit(f, sink, &m, MessageStatus::Ok);
    }
}

/// A READ request of requester flow `g` behind the expected PSN: when it lies inside an
/// outstanding READ, that READ was re-issued after lost responses. Returns whether it was.
pub(super) fn reissue(
    g: &mut Flow,
    sink: &mut Sink,
    psn: u32,
    frame: u64,
    ts: u64,
) -> Option<Reissue> {
    let k = covering(g, psn)?;
    let o = &mut g.outstanding[k];
    if o.msg.kind != MessageKind::Read {
        return None;
    }
    // Responses past a hole reveal the loss (the requester's implicit NAK, IBTA §9.7.5.1.4);
    // with none, only the requester's local ACK timeout can have sent the READ again.
    let why = if o.gap.is_some() {
        Reissue::AfterGap
    } else {
        Reissue::AfterTimeout
    };
    o.msg.reissues += 1;
    o.msg.reissue_frame.get_or_insert(frame);
    if let Some(story) = o.gap.and_then(|i| sink.gaps.get_mut(i))
        && story.retransmission.is_none()
    {
        story.retransmission = Some(Retransmission {
            frame,
            ts_ns: ts,
            delay_ns: ts.checked_sub(story.ts_ns),
            trigger: RetxTrigger::ReadReissue,
        });
    }
    Some(why)
}

/// Why a READ was issued again from inside its PSN range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Reissue {
    /// A READ response past a missing one was seen: the requester's implicit NAK.
    AfterGap,
    /// No response revealed a loss: the requester's local ACK timeout expired.
    AfterTimeout,
}

/// An ACK (or a PSN-sequence NAK, `inclusive` false) at `psn` confirms the SEND/WRITE messages
/// of `g` that end at (before) it.
pub(super) fn acked(g: &mut Flow, psn: u32, inclusive: bool) {
    g.awaiting.settle(|a| {
        let d = psn_diff(psn, a.last_psn);
        d > 0 || (inclusive && d == 0)
    });
}

/// Resolve outstanding request `o` of requester `g`, whose responses flow `f` (index `fi`)
/// carries, with `status` (`None`: as at the end of the capture).
fn settle(
    f: &mut Flow,
    fi: usize,
    g: &mut Flow,
    sink: &mut Sink,
    o: &Outstanding,
    status: Option<MessageStatus>,
) {
    let done = status.is_none() && o.end_after_hole.is_some();
    let st = status.unwrap_or(if done {
        MessageStatus::Ok
    } else {
        MessageStatus::Incomplete
    });
    if o.msg.kind == MessageKind::Read {
        let end = if done { o.end_after_hole } else { None };
        emit(f, sink, &read_message(o, fi, end), st);
    } else {
        emit(g, sink, &o.msg, st);
    }
}

/// The end of the capture: requests of `g` still waiting for a response are `incomplete` (a
/// READ whose last response was seen after a hole is `ok`: the responder executed it). READs
/// are counted in `f` (index `fi`), the responder's flow, or in `g` when it has none.
pub(super) fn finish(f: &mut Flow, fi: usize, g: &mut Flow, sink: &mut Sink) {
    for o in std::mem::take(&mut g.outstanding) {
        settle(f, fi, g, sink, &o, None);
    }
}

/// [`finish`] for a flow without a peer.
pub(super) fn finish_alone(g: &mut Flow, gi: usize, sink: &mut Sink) {
    for o in std::mem::take(&mut g.outstanding) {
        let st = if o.msg.kind == MessageKind::Read && o.end_after_hole.is_some() {
            MessageStatus::Ok
        } else {
            MessageStatus::Incomplete
        };
        if o.msg.kind == MessageKind::Read {
            let end = o.end_after_hole.filter(|_| st == MessageStatus::Ok);
            emit(g, sink, &read_message(&o, gi, end), st);
        } else {
            emit(g, sink, &o.msg, st);
        }
    }
}

/// A fatal NAK at `psn` in responder flow `f` (index `fi`) for requester flow `g`: refuse the
/// request containing `psn`, settle the others, and put the QP pair in the error state.
pub(super) fn fatal_nak(f: &mut Flow, fi: usize, g: &mut Flow, sink: &mut Sink, err: QpError) {
    let psn = err.psn;
    let mut hit = refuse_awaiting(g, f.peer.map(|j| j as usize), sink, err);
    for o in std::mem::take(&mut g.outstanding) {
        let d = psn_diff(psn, o.msg.first_psn);
        let inside = d >= 0 && o.span.is_none_or(|s| (d as u32) < s);
        if inside && !hit {
            hit = true;
            settle(f, fi, g, sink, &o, Some(err.status));
        } else if d >= 0 {
            // Before the NAK: finished as far as the capture shows.
            settle(f, fi, g, sink, &o, None);
        } else {
            settle(f, fi, g, sink, &o, Some(MessageStatus::Incomplete));
        }
    }
    if !hit
        && g.req_asm
            .open
            .as_ref()
            .is_some_and(|m| !m.complete && psn_diff(psn, m.first_psn) >= 0)
        && let Some(m) = g.req_asm.open.take()
    {
        emit(g, sink, &m, err.status);
    }
    g.cold_mut().error = Some(err);
    f.cold_mut().error = Some(err);
}

/// The SEND/WRITE messages of `g` awaiting a verdict when fatal NAK `err` arrives: the one
/// containing its PSN is refused, later ones are flushed. Returns whether one was refused.
fn refuse_awaiting(g: &mut Flow, gi: Option<usize>, sink: &mut Sink, err: QpError) -> bool {
    let mut hit = false;
    for a in g.awaiting.take_all() {
        if psn_diff(err.psn, a.last_psn) > 0 {
            continue;
        }
        let status = if !hit && psn_diff(err.psn, a.first_psn) >= 0 {
            hit = true;
            err.status
        } else {
            MessageStatus::Incomplete
        };
        g.uncount_ok(a.kind, a.bytes);
        g.count_message(a.kind, 0, status);
        sink.set_status(a.msg, status);
        if let Some(flow) = gi {
            sink.emit(|| super::tap::TapEvent::MessageStatus {
                flow,
                first_psn: a.first_psn,
                status,
            });
        }
    }
    hit
}
