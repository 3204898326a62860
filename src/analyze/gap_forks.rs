//! A flow's open request gaps (issue 38): one fork per gap, each assembling the packets after
//! it apart, and the messages they completed, held until the gap is resolved; the state
//! `analyze::flow` holds and `analyze::capture_gap` resolves.

use std::collections::VecDeque;

use super::message::{Assembler, Message};

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

/// A flow's open gaps.
#[derive(Clone, Debug, Default)]
pub struct State {
    /// One fork per open gap, oldest first: each fork's assembler started from the one
    /// before it (the first from the flow's).
    pub(super) forks: Vec<Fork>,
    /// With no gap open: the last PSN the responder has accepted (by an ACK or response at
    /// it, or a NAK at the next one) when that is at or past the PSN the flow's assembler
    /// expects, i.e. packets the capture has not shown yet. A gap that opens up to it is a
    /// capture loss at once: so a timeout resend that follows (its ACK lost) is not taken
    /// for a go-back-N after a real loss.
    pub(super) accepted: Option<u32>,
}

/// The packets after one gap, assembled apart until the gap is resolved.
#[derive(Clone, Debug)]
pub struct Fork {
    /// The PSN a go-back-N resend starts from: the first one missing.
    pub resume: u32,
    /// The first PSN seen after the gap: the gap is `resume..gap_end`.
    pub gap_end: u32,
    /// The assembler synchronised after the gap.
    pub(super) asm: Assembler,
    /// First PSN of the message the gap falls in, once known.
    pub(super) cut: Option<u32>,
    /// Messages completed after the gap, in order.
    pub(super) held: VecDeque<Held>,
}
