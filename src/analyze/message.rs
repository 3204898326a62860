//! Message reassembly under go-back-N (issue 3, point 4).
//!
//! Packets are accepted as the receiving side of the transport would accept them: on RC (and
//! XRC, RD) only the packet whose PSN is the next expected one counts, so copies discarded after
//! a gap and duplicate retransmissions never count twice (IBTA Vol 1 §9.7.5.1.2; rxe
//! `check_psn`). On UC a PSN mismatch drops the message in progress and the next FIRST/ONLY
//! resynchronises (rxe UC branch). Every UD packet is a whole message. READ responses are
//! assembled by the READ they answer (see `outcome`). Only per-message counters are kept, never
//! payload bytes.

use super::psn::{PSN_HALF, psn_add, psn_distance};
use crate::decode::{Position, Reth, Transport};
use serde::Serialize;

/// Kind of an RDMA message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageKind {
    /// SEND (with or without immediate or invalidate; UD SENDs too).
    Send,
    /// RDMA WRITE (with or without immediate).
    Write,
    /// RDMA READ: the response packets, counted in the flow that carries them.
    Read,
    /// CmpSwap, FetchAdd: complete when their ATOMIC ACKNOWLEDGE arrives.
    Atomic,
    /// FLUSH (IBTA Vol 1 Release 1.5): complete when its zero-length RDMA READ RESPONSE ONLY
    /// arrives (rxe `send_read_response_ack()`, spec/roce.md §2).
    Flush,
    /// ATOMIC WRITE (IBTA Vol 1 Release 1.5): 8 bytes, complete when its zero-length RDMA READ
    /// RESPONSE ONLY arrives.
    AtomicWrite,
}

impl MessageKind {
    /// Number of kinds.
    pub const COUNT: usize = 6;

    /// Index into per-kind arrays: send 0, write 1, read 2, atomic 3, flush 4, atomic_write 5.
    pub fn index(self) -> usize {
        match self {
            MessageKind::Send => 0,
            MessageKind::Write => 1,
            MessageKind::Read => 2,
            MessageKind::Atomic => 3,
            MessageKind::Flush => 4,
            MessageKind::AtomicWrite => 5,
        }
    }

    /// Whether the responder answers this kind with a response of its own (READ response,
    /// ATOMIC ACKNOWLEDGE), so that without one the message is `incomplete`.
    pub fn needs_response(self) -> bool {
        !matches!(self, MessageKind::Send | MessageKind::Write)
    }

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            MessageKind::Send => "send",
            MessageKind::Write => "write",
            MessageKind::Read => "read",
            MessageKind::Atomic => "atomic",
            MessageKind::Flush => "flush",
            MessageKind::AtomicWrite => "atomic_write",
        }
    }
}

/// The outcome of a request message: executed, not (yet) known to be, or refused by a fatal
/// NAK (AETH NAK codes 1–4, IBTA Vol 1 Table 43; the requester completes the work request in
/// error and its QP goes to the error state, §9.9.2 and rxe `check_ack`, spec/roce.md §3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageStatus {
    /// Executed: every packet accepted and, for READ / atomic / FLUSH / ATOMIC WRITE, the
    /// response seen; a SEND/WRITE no NAK refused.
    Ok,
    /// The capture ends before it completes, misses one of its packets (a capture-loss gap:
    /// its bytes are those captured), no response was seen for a READ / atomic / FLUSH /
    /// ATOMIC WRITE, or it was sent after a fatal NAK put the QP in the error state.
    Incomplete,
    /// Refused with NAK code 1, invalid request.
    NakInvalidRequest,
    /// Refused with NAK code 2, remote access error.
    NakRemoteAccess,
    /// Refused with NAK code 3, remote operational error.
    NakRemoteOp,
    /// Refused with NAK code 4, invalid RD request.
    NakInvalidRd,
}

impl MessageStatus {
    /// JSON / text name.
    pub fn name(self) -> &'static str {
        match self {
            MessageStatus::Ok => "ok",
            MessageStatus::Incomplete => "incomplete",
            MessageStatus::NakInvalidRequest => "nak_invalid_request",
            MessageStatus::NakRemoteAccess => "nak_remote_access",
            MessageStatus::NakRemoteOp => "nak_remote_op",
            MessageStatus::NakInvalidRd => "nak_invalid_rd",
        }
    }

    /// The status a fatal NAK code gives; `None` for a PSN sequence error or reserved code.
    pub fn from_nak(code: crate::decode::NakCode) -> Option<MessageStatus> {
        use crate::decode::NakCode;
        match code {
            NakCode::InvalidRequest => Some(MessageStatus::NakInvalidRequest),
            NakCode::RemoteAccess => Some(MessageStatus::NakRemoteAccess),
            NakCode::RemoteOp => Some(MessageStatus::NakRemoteOp),
            NakCode::InvalidRd => Some(MessageStatus::NakInvalidRd),
            NakCode::PsnSeqErr | NakCode::Reserved(_) => None,
        }
    }

    /// Whether the responder refused the message.
    pub fn failed(self) -> bool {
        !matches!(self, MessageStatus::Ok | MessageStatus::Incomplete)
    }
}

/// FETH fields of a FLUSH (IBTA Vol 1 Release 1.5; layout in spec/roce.md §2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct FethInfo {
    /// Selectivity level (2 bits).
    pub selectivity: u8,
    /// Placement type (4 bits).
    pub placement_type: u8,
}

/// RETH fields of a message (WRITE FIRST/ONLY, or the READ request a READ message answers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct RethInfo {
    /// Remote virtual address.
    pub va: u64,
    /// Remote key.
    pub rkey: u32,
    /// DMA length in bytes.
    pub dma_len: u32,
}

impl From<Reth> for RethInfo {
    fn from(r: Reth) -> Self {
        RethInfo {
            va: r.va,
            rkey: r.rkey,
            dma_len: r.dma_len,
        }
    }
}

/// One reassembled (or still open) message.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Message {
    /// The message's id: the frame number of the packet that began it (its FIRST or ONLY
    /// packet; a READ's, atomic's, FLUSH's or ATOMIC WRITE's request; the first packet seen of
    /// a message whose start the capture missed). Unique in a capture; every packet the
    /// analysis accepted into the message carries it as `analysis.message`.
    pub id: u64,
    /// Index of the flow (in `Report::flows`) whose packets make up the message.
    pub flow: usize,
    /// Message kind.
    pub kind: MessageKind,
    /// Whether it carried immediate data (SEND/WRITE WITH IMMEDIATE).
    pub immediate: bool,
    /// Immediate data as sent, when present.
    pub imm_data: Option<u32>,
    /// PSN of the first packet.
    pub first_psn: u32,
    /// PSN of the last packet accepted.
    pub last_psn: u32,
    /// Frame number of the first packet.
    pub first_frame: u64,
    /// Frame number of the last packet accepted.
    pub last_frame: u64,
    /// Packets accepted.
    pub packets: u32,
    /// Payload bytes accepted (after all transport headers, without pad and ICRC).
    pub bytes: u64,
    /// Capture time of the first packet, ns since the epoch.
    pub start_ts_ns: u64,
    /// Capture time of the last packet accepted, ns since the epoch.
    pub end_ts_ns: u64,
    /// `end_ts_ns − start_ts_ns`.
    pub duration_ns: u64,
    /// RETH of the WRITE, or of the READ request a READ message answers.
    pub reth: Option<RethInfo>,
    /// True when `reth.dma_len` differs from the bytes delivered (complete messages only).
    pub dma_len_mismatch: bool,
    /// READ only: frame of the READ request.
    pub request_frame: Option<u64>,
    /// READ only: capture time of the READ request, ns since the epoch.
    pub request_ts_ns: Option<u64>,
    /// READ only, complete messages: time from the READ request to the last response, ns.
    pub read_latency_ns: Option<u64>,
    /// False for a message still open at the end of the capture (or abandoned by its sender).
    pub complete: bool,
    /// The outcome: `ok`, `incomplete` or the fatal NAK that refused it.
    pub status: MessageStatus,
    /// FLUSH only: its FETH.
    pub feth: Option<FethInfo>,
    /// READ only: times the requester re-issued the READ from inside its range after lost
    /// responses (the requester's implicit NAK; spec/roce.md §5, Lumina `get_nack()`).
    pub reissues: u32,
    /// READ only: frame of the first re-issued READ REQUEST.
    pub reissue_frame: Option<u64>,
}

impl Message {
    /// The message that the FIRST or ONLY packet `p` of flow `flow` begins.
    #[inline(always)]
    fn begun(p: &Piece, flow: usize) -> Message {
        Message {
            id: p.frame,
            flow,
            kind: p.kind,
            immediate: p.immediate,
            imm_data: p.imm,
            first_psn: p.psn,
            last_psn: p.psn,
            first_frame: p.frame,
            last_frame: p.frame,
            packets: 1,
            bytes: u64::from(p.bytes),
            start_ts_ns: p.ts,
            end_ts_ns: p.ts,
            duration_ns: 0,
            reth: p.reth.map(RethInfo::from),
            dma_len_mismatch: false,
            request_frame: None,
            request_ts_ns: None,
            read_latency_ns: None,
            complete: p.position == Position::Only,
            status: MessageStatus::Ok,
            feth: None,
            reissues: 0,
            reissue_frame: None,
        }
    }
}

/// What the assembler did with one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accept {
    /// Not accepted (out of sequence, duplicate, or belongs to a message begun before the
    /// capture).
    Dropped,
    /// Accepted; the message continues.
    Open,
    /// Accepted and completed a message.
    Completed,
}

/// One packet as the assembler sees it.
#[derive(Clone, Copy, Debug)]
pub struct Piece {
    /// Transport of the packet.
    pub transport: Transport,
    /// Message kind.
    pub kind: MessageKind,
    /// Position in the message.
    pub position: Position,
    /// BTH PSN.
    pub psn: u32,
    /// PSNs the packet consumes (READ requests: the reservation).
    pub advance: u32,
    /// Extra tolerance after a READ of unknown PMTU.
    pub slack: u32,
    /// Frame number.
    pub frame: u64,
    /// Timestamp, ns.
    pub ts: u64,
    /// Payload bytes.
    pub bytes: u32,
    /// Immediate data.
    pub imm: Option<u32>,
    /// RETH, when the packet has one.
    pub reth: Option<Reth>,
    /// Whether this packet's operation carries immediate data.
    pub immediate: bool,
}

/// Go-back-N acceptor and message builder for one PSN space of one flow.
#[derive(Clone, Debug, Default)]
pub struct Assembler {
    expected: Option<u32>,
    slack: u32,
    /// The message being built (boxed: a flow's inline state stays small, and most flows of
    /// a sprayed table never build one).
    pub open: Option<Box<Message>>,
    /// Messages begun and then abandoned (a new FIRST/ONLY, a kind change, or a UC sequence
    /// error before their LAST).
    pub abandoned: u64,
}

impl Assembler {
    /// Offer one packet; on `Completed` the message is in `self.open` until the next call to
    /// [`Assembler::take`]. `flow` is stored in new messages.
    pub fn offer(&mut self, p: &Piece, flow: usize) -> Accept {
        let psn = p.psn;
        if p.transport != Transport::Ud {
            let ok = match self.expected {
                None => true,
                Some(e) => {
                    let d = psn_distance(psn, e);
                    d == 0 || (d <= self.slack && d < PSN_HALF)
                }
            };
            if !ok {
                let behind = self
                    .expected
                    .is_some_and(|e| psn_distance(psn, e) >= PSN_HALF);
                if matches!(p.transport, Transport::Uc) && !behind {
                    // UC, PSN ahead (loss): drop the message in progress; a FIRST/ONLY
                    // resynchronises (rxe UC responder). A UC packet behind the expected PSN is
                    // a duplicate and, as on RC, never counts twice.
                    self.abandon();
                    if !matches!(p.position, Position::First | Position::Only) {
                        return Accept::Dropped;
                    }
                } else {
                    return Accept::Dropped;
                }
            }
            self.expected = Some(psn_add(psn, p.advance.max(1)));
            self.slack = p.slack;
        }
        match p.position {
            Position::First | Position::Only => {
                self.count_unfinished();
                // The box of the previous message is reused: no allocation per message, and
                // the message is written there, not built apart and copied (168 bytes).
                match &mut self.open {
                    Some(open) => **open = Message::begun(p, flow),
                    None => self.open = Some(Box::new(Message::begun(p, flow))),
                }
                if p.position == Position::Only {
                    Accept::Completed
                } else {
                    Accept::Open
                }
            }
            Position::Middle | Position::Last => {
                let Some(m) = self
                    .open
                    .as_mut()
                    .filter(|m| !m.complete && m.kind == p.kind)
                else {
                    // Started before the capture, or a kind change: not a message we can build.
                    self.abandon();
                    return Accept::Dropped;
                };
                m.last_psn = psn;
                m.last_frame = p.frame;
                m.packets = m.packets.saturating_add(1);
                m.bytes += u64::from(p.bytes);
                m.end_ts_ns = p.ts;
                m.duration_ns = p.ts.saturating_sub(m.start_ts_ns);
                if p.imm.is_some() {
                    m.imm_data = p.imm;
                }
                m.immediate |= p.immediate;
                if p.position == Position::Last {
                    m.complete = true;
                    Accept::Completed
                } else {
                    Accept::Open
                }
            }
        }
    }

    /// Whether `psn` is ahead of the next PSN this assembler accepts (beyond a READ's
    /// tolerance): packets are missing before it.
    pub fn is_ahead(&self, psn: u32) -> bool {
        self.expected.is_some_and(|e| {
            let d = psn_distance(psn, e);
            d > self.slack && d < PSN_HALF
        })
    }

    /// Whether `psn` is behind the next PSN this assembler accepts (a duplicate).
    pub fn is_behind(&self, psn: u32) -> bool {
        self.expected
            .is_some_and(|e| psn_distance(psn, e) >= PSN_HALF)
    }

    /// The next PSN this assembler accepts (`None` before its first packet).
    pub fn expected(&self) -> Option<u32> {
        self.expected
    }

    /// An assembler that goes on after packets the capture missed: it accepts the next packet
    /// whatever its PSN, and the message in progress (incomplete) is carried over so that its
    /// later packets continue it.
    pub fn resynced(&self) -> Assembler {
        Assembler {
            expected: None,
            slack: 0,
            open: self.open.clone().filter(|m| !m.complete),
            abandoned: 0,
        }
    }

    /// Start a message at MIDDLE or LAST packet `p` whose earlier packets the capture missed
    /// (its bytes are those seen); a LAST completes it at once.
    pub fn begin_headless(&mut self, p: &Piece, flow: usize) -> Accept {
        self.count_unfinished();
        self.expected = Some(psn_add(p.psn, p.advance.max(1)));
        self.slack = p.slack;
        let mut m = Message::begun(p, flow);
        m.complete = p.position == Position::Last;
        self.open = Some(Box::new(m));
        if m.complete {
            Accept::Completed
        } else {
            Accept::Open
        }
    }

    fn abandon(&mut self) {
        self.count_unfinished();
        self.open = None;
    }

    /// Count the open message as abandoned when it was not complete (before it is replaced).
    fn count_unfinished(&mut self) {
        if self.open.as_ref().is_some_and(|m| !m.complete) {
            self.abandoned += 1;
        }
    }

    /// Take the completed message out (after `Accept::Completed`), fixing its derived fields.
    pub fn take(&mut self) -> Option<Message> {
        self.finished().copied()?;
        self.open.take().map(|m| *m)
    }

    /// The completed message (after `Accept::Completed`) with its derived fields fixed, left
    /// in place (complete, so the next message replaces it without counting it abandoned):
    /// no copy on the per-message path.
    pub fn finished(&mut self) -> Option<&Message> {
        let m = self.open.as_mut().filter(|m| m.complete)?;
        if let Some(r) = m.reth {
            m.dma_len_mismatch = !matches!(m.kind, MessageKind::Atomic | MessageKind::Flush)
                && u64::from(r.dma_len) != m.bytes;
        }
        Some(m)
    }
}
