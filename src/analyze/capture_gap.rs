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
//! So the packets after a gap are assembled on a second assembler, the **fork**, synchronised
//! on the first packet after the gap, and the messages it completes are **held** (not yet
//! counted) until the responder tells which case it is:
//! - the resend of the missing PSN, or a PSN-sequence NAK at it: a real loss. The held
//!   messages are dropped (the responder discarded them; their resends are counted as usual);
//! - an ACK, NAK or response at a later PSN (the responder accepted the missing packet): a
//!   capture loss. The held messages are counted, reassembled and settled by the ACKs as
//!   usual; the fork becomes the flow's assembler. The message the gap falls in is counted
//!   `incomplete`, with the bytes the capture shows; a request the capture missed whole
//!   cannot be counted (the MSN cross-check then disagrees, a report warning).
//!
//! Without an answer by the end of the capture, or once [`MAX_HELD`] messages are held, the
//! gap is taken for a capture loss: a sender never skips PSNs, and a real loss is answered
//! within a round trip. A second gap before the answer starts the fork again after it.

use std::collections::VecDeque;

use super::Sink;
use super::flow::Flow;
use super::message::{Accept, Assembler, Message, MessageStatus, Piece};
use super::outcome::{self, Awaiting};
use super::psn::psn_diff;
use crate::decode::Position;

/// Most messages held while a gap is unresolved; one more resolves it as a capture loss.
pub const MAX_HELD: usize = 256;

/// A message completed after the gap, counted only once the gap is resolved.
#[derive(Clone, Copy, Debug)]
pub enum Held {
    /// A SEND or WRITE, and the PSN the responder's MSN counts it at (its last).
    SendWrite(Message),
    /// A READ, atomic, FLUSH or ATOMIC WRITE request awaiting its response, with the PSNs it
    /// reserves when known.
    Request(Message, Option<u32>),
    /// A RESYNC: PSNs and an MSN unit only.
    Unit(u32),
    /// The message a gap falls in: `incomplete`, with the bytes the capture shows; complete
    /// when its last packet was seen (the responder then executed it: one MSN unit).
    Cut(Message),
}

/// The packets after a gap, assembled apart until the gap is resolved.
#[derive(Clone, Debug)]
pub struct Fork {
    /// The PSN a go-back-N resend starts from: the first one missing.
    pub resume: u32,
    /// The assembler synchronised after the gap.
    asm: Assembler,
    /// First PSN of the message the latest gap falls in.
    cut: Option<u32>,
    /// Messages completed after the gap, in order.
    held: VecDeque<Held>,
}

/// A reliable request packet the flow's assembler dropped. A packet ahead of the PSN it
/// expects opens a fork; while one is open every dropped packet goes to it, and a message it
/// completes is held. `done` turns a completed message into what is held.
pub(super) fn dropped(
    f: &mut Flow,
    sink: &mut Sink,
    p: &Piece,
    flow: usize,
    done: impl FnOnce(&Message) -> Held,
) {
    if f.cold().gap_fork.is_none() {
        // Only after a gap the PSN tracker counted, so that `resent` can skip flows without.
        let gap = f.req_psn.gap_events > 0 && f.req_asm.is_ahead(p.psn);
        let Some(resume) = f.req_asm.expected().filter(|_| gap) else {
            return;
        };
        let asm = f.req_asm.resynced();
        f.cold_mut().gap_fork = Some(Box::new(Fork {
            resume,
            cut: asm.open.as_ref().map(|m| m.first_psn),
            asm,
            held: VecDeque::new(),
        }));
    }
    let Some(fork) = f.cold_mut().gap_fork.as_deref_mut() else {
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
    if fork.held.len() > MAX_HELD {
        commit(f, sink);
    }
}

impl Fork {
    /// Offer a packet to the fork's assembler: a packet ahead of it (a second gap) starts it
    /// again; a MIDDLE or LAST whose earlier packets are missing begins a message of its own;
    /// a FIRST or ONLY ends an unfinished message as cut.
    fn offer(&mut self, p: &Piece, flow: usize) -> Accept {
        if self.asm.is_behind(p.psn) {
            return Accept::Dropped;
        }
        if self.asm.is_ahead(p.psn) {
            self.asm = self.asm.resynced();
            self.cut = self.asm.open.as_ref().map(|m| m.first_psn);
        }
        if matches!(p.position, Position::First | Position::Only)
            && let Some(m) = self.asm.open.take_if(|m| !m.complete)
        {
            self.held.push_back(Held::Cut(*m));
        }
        let continues = self
            .asm
            .open
            .as_ref()
            .is_some_and(|m| !m.complete && m.kind == p.kind);
        if matches!(p.position, Position::Middle | Position::Last)
            && !continues
            && self.asm.expected().is_none()
        {
            self.cut = Some(p.psn);
            return self.asm.begin_headless(p, flow);
        }
        self.asm.offer(p, flow)
    }
}

/// The flow's assembler accepted a packet: while a fork is open, the resend of the missing
/// PSN, so the gap was a real loss and the packets after it were discarded. (A flow without
/// a request gap has no fork: its cold state is not touched.)
#[inline]
pub(super) fn resent(f: &mut Flow) {
    if f.req_psn.gap_events == 0 {
        return;
    }
    if let Some(c) = &mut f.cold
        && c.gap_fork.is_some()
    {
        c.gap_fork = None;
    }
}

/// An answer of the responder at `psn` for requester flow `g`: an ACK or response (`nak`
/// false) at or past the missing PSN, or a NAK past it, resolves an open gap as a capture
/// loss; a PSN-sequence NAK at it (`nak` true) as a real loss.
pub(super) fn answered(g: &mut Flow, sink: &mut Sink, psn: u32, nak: bool) {
    let Some(fork) = g.cold().gap_fork.as_deref() else {
        return;
    };
    let d = psn_diff(psn, fork.resume);
    if d > 0 || (d == 0 && !nak) {
        commit(g, sink);
    } else if d == 0
        && let Some(c) = &mut g.cold
    {
        c.gap_fork = None;
    }
}

/// The end of the capture: an open gap is taken for a capture loss.
pub(super) fn finish(f: &mut Flow, sink: &mut Sink) {
    if f.cold().gap_fork.is_some() {
        commit(f, sink);
    }
}

/// Resolve the open gap as a capture loss: count the held messages and make the fork the
/// flow's assembler.
fn commit(f: &mut Flow, sink: &mut Sink) {
    let Some(fork) = f.cold_mut().gap_fork.take() else {
        return;
    };
    let Fork { mut asm, held, .. } = *fork;
    asm.abandoned += f.req_asm.abandoned;
    f.req_asm = asm;
    for h in held {
        match h {
            Held::SendWrite(m) => send_write(f, sink, &m),
            Held::Unit(psn) => super::requester::unit(f, psn),
            Held::Request(m, span) => {
                super::requester::unit(f, m.first_psn);
                outcome::expect_response(f, sink, m, span);
            }
            Held::Cut(mut m) => {
                if m.complete && !m.kind.needs_response() {
                    super::requester::unit(f, m.last_psn);
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
    super::requester::unit(f, m.last_psn);
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
