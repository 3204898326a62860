//! What a flow awaits (issue 11): the requests awaiting their response and the SEND/WRITE
//! messages awaiting their ACK or NAK, and the fatal NAK that ended a QP pair; the state
//! `analyze::flow` holds and `analyze::outcome` settles.

use super::message::{Message, MessageKind, MessageStatus};
use crate::decode::Position;
use std::collections::VecDeque;

/// Most requests awaiting a response (READ, atomic, FLUSH, ATOMIC WRITE) remembered per flow.
pub const MAX_OUTSTANDING: usize = 256;
/// Most completed SEND/WRITE messages awaiting their ACK or NAK remembered per flow.
pub const MAX_AWAITING: usize = 1024;

/// A completed SEND/WRITE message waiting for the ACK or NAK that covers it.
#[derive(Clone, Copy, Debug)]
pub struct Awaiting {
    /// PSN of its first packet.
    pub first_psn: u32,
    /// PSN of its last packet.
    pub last_psn: u32,
    /// Send or write.
    pub kind: MessageKind,
    /// Payload bytes.
    pub bytes: u64,
    /// Index in the kept message list, when messages are kept.
    pub msg: Option<usize>,
}

/// Completed SEND/WRITE messages awaiting their verdict, oldest first, at most
/// [`MAX_AWAITING`]. The newest is kept apart, so that the common exchange — a message, then
/// the ACK that covers it — touches no queue.
#[derive(Clone, Debug, Default)]
pub struct AwaitQueue {
    older: VecDeque<Awaiting>,
    newest: Option<Awaiting>,
}

impl AwaitQueue {
    /// Give back the queue's unused capacity; the messages stay.
    pub fn shrink_to_fit(&mut self) {
        self.older.shrink_to_fit();
    }

    /// Add the newest message.
    #[inline]
    pub fn push(&mut self, a: Awaiting) {
        if let Some(n) = self.newest.replace(a) {
            if self.older.len() >= MAX_AWAITING {
                self.older.pop_front();
            }
            self.older.push_back(n);
        }
    }

    /// Drop the messages `done` says are settled, oldest first, up to the first that is not.
    #[inline]
    pub fn settle(&mut self, done: impl Fn(&Awaiting) -> bool) {
        while let Some(a) = self.older.front() {
            if !done(a) {
                return;
            }
            self.older.pop_front();
        }
        if self.newest.as_ref().is_some_and(done) {
            self.newest = None;
        }
    }

    /// Take every message out, oldest first.
    pub fn take_all(&mut self) -> impl Iterator<Item = Awaiting> + use<> {
        std::mem::take(&mut self.older)
            .into_iter()
            .chain(self.newest.take())
    }
}

/// A request waiting for its response.
#[derive(Clone, Copy, Debug)]
pub struct Outstanding {
    /// The request as a message (READ: the request's fields; responses fill in the rest).
    pub msg: Message,
    /// PSNs it reserves: `ceil(len / PMTU)` for a READ whose length and PMTU are known, 1 for
    /// the others, `None` when unknown.
    pub span: Option<u32>,
    /// READ: the next response PSN the requester accepts (go-back-N).
    pub frontier: u32,
    /// READ: payload bytes of a FIRST/MIDDLE response (the PMTU in use).
    pub seg: Option<u32>,
    /// READ: responses accepted and their payload bytes.
    pub accepted: (u32, u64),
    /// READ: (frame, ts) of the first response.
    pub first_resp: Option<(u64, u64)>,
    /// READ: the LAST/ONLY response seen after a hole the capture shows: (PSN, payload bytes,
    /// frame, ts). The responder executed the READ even if the requester must re-issue it.
    pub end_after_hole: Option<(u32, u32, u64, u64)>,
    /// READ: index of the stored story of a response gap inside this READ.
    pub gap: Option<usize>,
}

/// The fatal NAK that put a QP pair in the error state.
#[derive(Clone, Copy, Debug)]
pub struct QpError {
    /// Frame of the NAK.
    pub frame: u64,
    /// Its PSN.
    pub psn: u32,
    /// The status it gave the refused request.
    pub status: MessageStatus,
}

/// One response packet, as the matching needs it.
#[derive(Clone, Copy, Debug)]
pub struct Response {
    /// BTH PSN.
    pub psn: u32,
    /// Position (READ responses); `Only` for an ATOMIC ACKNOWLEDGE.
    pub pos: Position,
    /// ATOMIC ACKNOWLEDGE rather than a READ response.
    pub atomic_ack: bool,
    /// Payload bytes from the length fields.
    pub payload: u32,
    /// Frame number.
    pub frame: u64,
    /// Capture time, ns.
    pub ts: u64,
    /// Stored gap story this packet revealed in the response PSN space.
    pub gap: Option<usize>,
}
