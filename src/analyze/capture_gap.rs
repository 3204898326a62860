//! Request packets after a PSN gap (issue 38, point 3): was the gap lost on the network or
//! only by the capture?
//!
//! An RC responder accepts only the next PSN (IBTA Vol 1 §9.7.5.1.2): after a real loss it
//! discards every later packet until the requester resends from the lost PSN (go-back-N), so
//! the message assembler drops them too. But a sniffer drops packets as well (ibdump and
//! offloaded captures at 100 Gb/s): then the responder got the packet the capture misses,
//! accepted every later one, and no resend ever comes. Dropping the later packets would lose
//! every later message of the flow.
//!
//! So the packets after a gap are assembled on a second assembler, a **fork**, synchronised
//! on the first packet after the gap, and the messages it completes are **held** (not yet
//! counted) until the responder tells which case it is. A gap inside a fork (a second gap
//! before the first is resolved) opens a fork of the fork: the forks form a stack, each
//! resolved on its own, oldest first. For the fork of a gap from PSN `resume` up to (not
//! including) PSN `gap_end`, the first one seen after it:
//! - the resend of `resume`, or a PSN-sequence NAK at a PSN in `resume..gap_end` (the
//!   responder expects a PSN the capture misses): a real loss. The
//!   fork and every fork above it are dropped, with their held messages (the responder
//!   discarded those packets; the resends count as usual);
//! - an ACK, response, RNR NAK or fatal NAK at `gap_end − 1` or later (the responder got
//!   every packet up to its PSN: an RNR or fatal NAK names a packet that arrived, spec/roce.md
//!   §3), or a PSN-sequence NAK at `gap_end` or later (the responder accepted the whole gap):
//!   a capture loss. The held messages are counted,
//!   reassembled and settled by the ACKs as usual; the fork becomes the flow's assembler. The
//!   message the gap falls in is counted `incomplete`, with the bytes the capture shows; a
//!   request the capture missed whole cannot be counted (the MSN cross-check then disagrees, a
//!   report warning). An ACK inside the gap tells nothing yet;
//! - a request packet behind the fork's next PSN but not behind the assembler below it: the
//!   requester went back (go-back-N after a NAK or a timeout) and the capture missed the
//!   start of that resend, so the fork was a real loss; the packet is a gap of its own below.
//!
//! Without an answer by the end of the capture, once [`MAX_HELD`] messages are held, or once
//! [`MAX_FORKS`] gaps are open, the oldest gap is taken for a capture loss: a sender never
//! skips PSNs, and a real loss is answered within a round trip.
//!
//! The first packet after a gap continues the message in progress only when it is a MIDDLE
//! or LAST of the same kind and, for a WRITE whose RETH and PMTU are known, its PSN is within
//! the message's `ceil(DMA length / PMTU)` packets (FIRST and MIDDLE payloads are PMTU bytes:
//! spec/roce.md §5, Reassembly); a SEND carries no length, so a gap inside a SEND is taken to
//! end before the SEND does (a gap of two or more PSNs that ends one SEND and begins the next
//! joins them: which PSN ended the first, the capture cannot tell). Otherwise the message in progress is cut there and the packet
//! begins a message of its own (headless when it is a MIDDLE or LAST).

use std::collections::VecDeque;

use super::Sink;
use super::flow::Flow;
pub use super::gap_forks::{Fork, Held};
use super::message::{Accept, Message, MessageKind, MessageStatus, Piece};
use super::outcome::{self, Awaiting};
use super::psn::{PSN_HALF, PSN_MASK, psn_add, psn_diff};
use crate::decode::Position;

/// Most messages held while gaps are unresolved; one more resolves the oldest gap as a
/// capture loss.
pub const MAX_HELD: usize = 256;

/// Most gaps open at once (forks stacked); one more resolves the oldest as a capture loss.
pub const MAX_FORKS: usize = 16;

/// What the responder's answer tells of one gap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    /// The responder accepted the whole gap.
    CaptureLoss,
    /// The responder expects a PSN inside the gap.
    RealLoss,
    /// Nothing yet.
    Unknown,
}

/// A reliable request packet the flow's assembler dropped. A packet ahead of the PSN it
/// expects opens a fork; while forks are open, the packet goes to the newest one it is not
/// behind (dropping those above it: a go-back-N resend), a packet ahead of that one opens a
/// fork above it, and a message a fork completes is held. `done` turns a completed message
/// into what is held.
pub(super) fn dropped(
    f: &mut Flow,
    sink: &mut Sink,
    p: &Piece,
    flow: usize,
    done: impl FnOnce(&Message) -> Held,
) {
    let open = f.cold.as_ref().map_or(0, |c| c.capture_gap.forks.len());
    // Only after a gap the PSN tracker counted, so that `resent` can skip flows without.
    if open == 0 && !(f.req_psn.gap_events > 0 && f.req_asm.is_ahead(p.psn)) {
        return;
    }
    let forks = &f.cold().capture_gap.forks;
    // The newest fork the packet is not behind; 0 is the flow's assembler (which dropped it).
    let Some(level) = (1..=open)
        .rev()
        .find(|&k| !forks[k - 1].asm.is_behind(p.psn))
        .or((!f.req_asm.is_behind(p.psn)).then_some(0))
    else {
        return;
    };
    f.cold_mut().capture_gap.forks.truncate(level);
    let known = match open_above(f, sink, level, p.psn) {
        Some(known) => known,
        None if level == 0 => return,
        None => false,
    };
    let Some(fork) = f.cold_mut().capture_gap.forks.last_mut() else {
        return;
    };
    if fork.offer(p, flow) == Accept::Completed
        && let Some(m) = fork.asm.finished()
    {
        let held = if fork.cut == Some(m.first_psn) {
            Held::Cut(*m)
        } else {
            done(m)
        };
        fork.held.push_back(held);
    }
    if known {
        commit(f, sink);
    }
    while f
        .cold()
        .capture_gap
        .forks
        .iter()
        .map(|k| k.held.len())
        .sum::<usize>()
        > MAX_HELD
    {
        commit(f, sink);
    }
}

/// Open a fork above level `level` (0: the flow's assembler) when `psn` is ahead of that
/// level's assembler: `Some(true)` when the responder had already accepted the whole gap (a
/// capture loss at once), `Some(false)` when the gap waits for an answer, `None` when `psn`
/// is not ahead (no fork opened).
fn open_above(f: &mut Flow, sink: &mut Sink, level: usize, psn: u32) -> Option<bool> {
    let below = match level {
        0 => &f.req_asm,
        k => &f.cold().capture_gap.forks[k - 1].asm,
    };
    let resume = below.expected().filter(|_| below.is_ahead(psn))?;
    let asm = below.resynced();
    if level == MAX_FORKS {
        commit(f, sink);
    }
    let fork = Fork {
        resume,
        gap_end: psn,
        asm,
        cut: None,
        held: VecDeque::new(),
    };
    let state = &mut f.cold_mut().capture_gap;
    // Accepted already (an answer before the gap showed): a capture loss.
    let known = level == 0
        && state.accepted.take().is_some_and(|a| {
            psn_diff(a, resume) >= 0 && verdict(&fork, a, false) == Verdict::CaptureLoss
        });
    state.forks.push(fork);
    Some(known)
}

impl Fork {
    /// Offer a packet the fork is not behind and not ahead of (a packet ahead opens a fork
    /// above). The first packet after the gap continues the message in progress or cuts it
    /// (see the module's notes); a MIDDLE or LAST that does not continue it begins a headless
    /// message.
    fn offer(&mut self, p: &Piece, flow: usize) -> Accept {
        if self.asm.expected().is_none() {
            let continues = self.asm.open.as_ref().is_some_and(|m| continues(m, p));
            if continues {
                self.cut = self.asm.open.as_ref().map(|m| m.first_psn);
            } else {
                if let Some(m) = self.asm.open.take() {
                    self.held.push_back(Held::Cut(*m));
                }
                if matches!(p.position, Position::Middle | Position::Last) {
                    self.cut = Some(p.psn);
                    return self.asm.begin_headless(p, flow);
                }
            }
        }
        self.asm.offer(p, flow)
    }
}

/// Whether packet `p`, the first after a gap, can continue the unfinished message `m`: a
/// MIDDLE or LAST of its kind, within a WRITE's `ceil(DMA length / PMTU)` packets when its
/// RETH and PMTU are known (the PMTU is the payload of its FIRST and MIDDLE packets).
fn continues(m: &Message, p: &Piece) -> bool {
    if m.complete || m.kind != p.kind || !matches!(p.position, Position::Middle | Position::Last) {
        return false;
    }
    let pmtu = (m.packets > 0 && m.bytes % u64::from(m.packets) == 0)
        .then(|| m.bytes / u64::from(m.packets))
        .filter(|&b| b > 0);
    match (m.kind, m.reth, pmtu) {
        (MessageKind::Write, Some(r), Some(pmtu)) => {
            let packets = u64::from(r.dma_len).div_ceil(pmtu).max(1);
            // A length past half the PSN space cannot be placed: taken to go on.
            packets >= u64::from(PSN_HALF)
                || psn_diff(p.psn, psn_add(m.first_psn, packets as u32 - 1)) <= 0
        }
        _ => true,
    }
}

/// The flow's assembler accepted a packet: while forks are open, the resend of the first
/// missing PSN, so the gaps were real losses and the packets after them were discarded. (A
/// flow without a request gap has no fork: its cold state is not touched.)
#[inline]
pub(super) fn resent(f: &mut Flow) {
    if f.req_psn.gap_events == 0 {
        return;
    }
    if let Some(c) = &mut f.cold
        && !c.capture_gap.forks.is_empty()
    {
        c.capture_gap.forks.clear();
    }
}

/// What an answer at `psn` (a PSN-sequence NAK when `seq_nak`, else an ACK, response, RNR
/// NAK or fatal NAK: the packet at `psn` arrived) tells of `fork`'s gap.
fn verdict(fork: &Fork, psn: u32, seq_nak: bool) -> Verdict {
    if seq_nak {
        if psn_diff(psn, fork.resume) < 0 {
            Verdict::Unknown
        } else if psn_diff(psn, fork.gap_end) < 0 {
            Verdict::RealLoss
        } else {
            Verdict::CaptureLoss
        }
    } else if psn_diff(psn, fork.gap_end) >= -1 {
        Verdict::CaptureLoss
    } else {
        Verdict::Unknown
    }
}

/// An answer of the responder at `psn` for requester flow `g`: a PSN-sequence NAK
/// (`seq_nak`: the responder expects `psn`), or an ACK, response, RNR NAK or fatal NAK (the
/// packet at `psn` arrived). Resolves the open gaps it tells of, oldest first; with none open,
/// notes a PSN accepted past what the capture has shown ([`State::accepted`]).
pub(super) fn answered(g: &mut Flow, sink: &mut Sink, psn: u32, seq_nak: bool) {
    while let Some(fork) = g.cold.as_ref().and_then(|c| c.capture_gap.forks.first()) {
        match verdict(fork, psn, seq_nak) {
            Verdict::CaptureLoss => commit(g, sink),
            Verdict::RealLoss => {
                g.cold_mut().capture_gap.forks.clear();
                return;
            }
            Verdict::Unknown => return,
        }
    }
    // A PSN-sequence NAK accepts the PSNs before its own (IBTA Vol 1 §9.7.5.1.2;
    // spec/roce.md §3).
    let accepted = if seq_nak { psn_add(psn, PSN_MASK) } else { psn };
    let ahead = g.req_asm.expected().is_some_and(|e| e == accepted) || g.req_asm.is_ahead(accepted);
    if ahead {
        g.cold_mut().capture_gap.accepted = Some(accepted);
    }
}

/// The end of the capture: the open gaps are taken for capture losses.
pub(super) fn finish(f: &mut Flow, sink: &mut Sink) {
    while f
        .cold
        .as_ref()
        .is_some_and(|c| !c.capture_gap.forks.is_empty())
    {
        commit(f, sink);
    }
}

/// Resolve the oldest open gap as a capture loss: count its held messages and make its fork
/// the flow's assembler.
fn commit(f: &mut Flow, sink: &mut Sink) {
    let forks = &mut f.cold_mut().capture_gap.forks;
    if forks.is_empty() {
        return;
    }
    let Fork { mut asm, held, .. } = forks.remove(0);
    asm.abandoned += f.req_asm.abandoned;
    f.req_asm = asm;
    for h in held {
        match h {
            Held::SendWrite(m) => send_write(f, sink, &m),
            Held::Unit(psn) => f.unit(psn),
            Held::Request(m, span) => {
                f.unit(m.first_psn);
                outcome::expect_response(f, sink, m, span);
            }
            Held::Cut(mut m) => {
                if m.complete && !m.kind.needs_response() {
                    f.unit(m.last_psn);
                }
                f.count_message(m.kind, m.bytes, MessageStatus::Incomplete);
                if sink.wants_messages() {
                    m.complete = false;
                    m.status = MessageStatus::Incomplete;
                    sink.message(m);
                }
            }
        }
    }
}

/// Count a held SEND or WRITE as the flow's assembler would have.
fn send_write(f: &mut Flow, sink: &mut Sink, m: &Message) {
    f.unit(m.last_psn);
    let done = Awaiting {
        first_psn: m.first_psn,
        last_psn: m.last_psn,
        kind: m.kind,
        bytes: m.bytes,
        msg: None,
    };
    let kept = if sink.wants_messages() { Some(m) } else { None };
    let mismatch = m.complete && m.dma_len_mismatch;
    outcome::send_write_done(f, sink, done, mismatch, kept, true);
}
