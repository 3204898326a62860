//! The responder's side of a connection (issue 3 points 3 and 5, issue 11 points 1, 5, 6): the
//! AETHs a flow carries — ACK counts and RTT, NAK matching to gaps, fatal NAKs, CNPs near NAKs,
//! the MSN cross-check.
//!
//! `f` is the flow carrying the AETH (the responder's), `g` its peer, the requester's flow.

use super::Sink;
use super::flow::{Flow, PendingNak};
use super::message::MessageStatus;
use super::outcome::{self, QpError};
use super::psn::{self, psn_diff};
use super::report::{NakMatch, UnexplainedNak};
use crate::decode::{Aeth, AethKind, NakCode, Operation};

/// Most unexplained NAKs listed.
const MAX_LISTED: usize = 1000;

/// One AETH: its packet's frame, time, PSN and operation.
#[derive(Clone, Copy, Debug)]
pub(super) struct AethPkt {
    /// Frame number.
    pub frame: u64,
    /// Capture time, ns.
    pub ts: u64,
    /// BTH PSN.
    pub psn: u32,
    /// The AETH.
    pub aeth: Aeth,
    /// The operation carrying it.
    pub op: Operation,
}

/// Count the AETH in the flow carrying it.
pub(super) fn count(f: &mut Flow, a: &AethPkt) {
    match a.aeth.kind() {
        AethKind::Ack { .. } => {
            if a.op == Operation::Acknowledge {
                f.acks += 1;
            }
        }
        AethKind::RnrNak { timer_us, code } => {
            f.cold_mut().rnr_naks += 1;
            f.cold_mut().rnr_timer_us.add(u64::from(timer_us));
            f.cold_mut().evidence.rnr_nak(a.frame, code);
        }
        AethKind::Nak(code) => match code {
            NakCode::PsnSeqErr => f.cold_mut().naks[0] += 1,
            NakCode::InvalidRequest => f.cold_mut().naks[1] += 1,
            NakCode::RemoteAccess => f.cold_mut().naks[2] += 1,
            NakCode::RemoteOp => f.cold_mut().naks[3] += 1,
            NakCode::InvalidRd => f.cold_mut().naks[4] += 1,
            NakCode::Reserved(_) => f.cold_mut().naks_reserved += 1,
        },
        AethKind::Reserved => f.cold_mut().naks_reserved += 1,
    }
}

/// The AETH's effect on the connection: `f` (index `fi`) carries it, `g` (index `gi`) sent the
/// requests it answers.
pub(super) fn aeth(f: &mut Flow, fi: usize, g: &mut Flow, gi: usize, sink: &mut Sink, a: &AethPkt) {
    let kind = a.aeth.kind();
    let expects = matches!(kind, AethKind::Nak(NakCode::PsnSeqErr));
    super::capture_gap::answered(g, sink, a.psn, expects);
    match kind {
        AethKind::Ack { .. } => ack(g, gi, sink, a),
        AethKind::Nak(NakCode::PsnSeqErr) => seq_nak(g, gi, sink, a),
        AethKind::Nak(code) => {
            if let Some(status) = MessageStatus::from_nak(code) {
                let err = QpError {
                    frame: a.frame,
                    psn: a.psn,
                    status,
                };
                outcome::fatal_nak(f, fi, g, sink, err);
            }
        }
        AethKind::RnrNak { .. } => {
            g.cold_mut().last_rnr = Some(PendingNak {
                psn: a.psn,
                ts: a.ts,
                frame: a.frame,
            });
        }
        AethKind::Reserved => {}
    }
    msn_check(
        f,
        g,
        a.psn,
        a.aeth.msn,
        matches!(kind, AethKind::Ack { .. }),
    );
}

/// A cumulative ACK: RTT samples, SEND/WRITE confirmations, gaps it covers.
fn ack(g: &mut Flow, gi: usize, sink: &mut Sink, a: &AethPkt) {
    while let Some(&(p, t)) = g.pending_acks.front() {
        if psn_diff(a.psn, p) < 0 {
            break;
        }
        if !g.ack_rtt.add_interval(t, a.ts) {
            g.cold_mut().negative_intervals += 1;
        }
        if let Some(rtt_ns) = a.ts.checked_sub(t) {
            sink.emit(|| super::tap::TapEvent::AckRtt {
                flow: gi,
                ts_ns: a.ts,
                rtt_ns,
            });
        }
        g.pending_acks.pop_front();
    }
    outcome::acked(g, a.psn, true);
    for og in &g.cold().open_gaps {
        if og.nak_ts.is_none()
            && psn_diff(a.psn, og.last_missing) >= 0
            && let Some(story) = og.idx.and_then(|k| sink.gaps.get_mut(k))
        {
            story.ack_frame.get_or_insert(a.frame);
        }
    }
}

/// A PSN-sequence NAK: implicit ACK of what precedes it, the gap it reports (or an
/// unexplained NAK), and CNPs near it.
fn seq_nak(g: &mut Flow, gi: usize, sink: &mut Sink, a: &AethPkt) {
    let psn = a.psn;
    // Implicitly acknowledges everything before `psn` (no RTT sample).
    while let Some(&(p, _)) = g.pending_acks.front() {
        if psn_diff(psn, p) <= 0 {
            break;
        }
        g.pending_acks.pop_front();
    }
    outcome::acked(g, psn, false);
    g.cold_mut().last_nak = Some(PendingNak {
        psn,
        ts: a.ts,
        frame: a.frame,
    });
    let explained = g.cold().open_gaps.iter().any(|og| og.expected == psn);
    let cold = g.cold_mut();
    if let Some(og) = cold
        .open_gaps
        .iter_mut()
        .rev()
        .find(|og| og.expected == psn && og.nak_ts.is_none())
    {
        og.nak_ts = Some(a.ts);
        if !cold.nak_delay.add_interval(og.ts, a.ts) {
            cold.negative_intervals += 1;
        }
        if let Some(story) = og.idx.and_then(|k| sink.gaps.get_mut(k)) {
            story.nak = Some(NakMatch {
                frame: a.frame,
                ts_ns: a.ts,
                delay_ns: a.ts.checked_sub(og.ts),
            });
        }
    } else if !explained && captured(g, psn) {
        g.cold_mut().unexplained_naks += 1;
        if sink.unexplained.len() < MAX_LISTED {
            sink.unexplained.push(UnexplainedNak {
                flow: gi,
                frame: a.frame,
                psn,
            });
        }
    }
    let rtt = g.rtt();
    g.cong.nak_seen(a.ts, rtt);
}

/// Whether request PSN `psn` of `g` was captured: inside the PSNs the flow has sent.
fn captured(g: &Flow, psn: u32) -> bool {
    g.req_psn
        .first
        .is_some_and(|first| psn_diff(psn, first) >= 0 && psn_diff(psn, g.req_psn.expected) < 0)
}

/// MSN cross-check (spec/roce.md §3): the MSN of an AETH with PSN q counts the request
/// messages completed up to q (before q for a NAK, whose PSN is not yet accepted). Only AETHs
/// whose PSN moves forward are checked: a READ response may repeat an older PSN with the older
/// MSN of the READ's execution.
fn msn_check(f: &mut Flow, g: &mut Flow, psn: u32, msn: u32, is_ack: bool) {
    let msn = msn & psn::PSN_MASK;
    if f.msn_last_psn.is_some_and(|l| psn_diff(psn, l) <= 0) {
        return;
    }
    f.msn_last_psn = Some(psn);
    while let Some(&u) = g.unit_psns.front() {
        let d = psn_diff(psn, u);
        if d < 0 || (!is_ack && d == 0) {
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
