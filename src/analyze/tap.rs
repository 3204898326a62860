//! A tap on the analysis: per-packet and per-message events for consumers that need more than
//! the final [`Report`](super::Report) (the plots of issue 14).
//!
//! The analyzer calls [`Tap::event`] with facts it has already derived (PSN verdicts, AETH
//! kinds, CNP targets, ACK RTT samples, completed messages), so a consumer never re-derives
//! protocol logic. With no tap set, the analyzer pays one `Option` test per event site.
//! Flow indices are those of `Report::flows`.

use super::message::{Message, MessageStatus};
use super::psn::PsnVerdict;
use crate::decode::AethKind;

/// Which PSN space a [`TapEvent::Psn`] belongs to (IBTA Vol 1 §9.7.1: requests and READ
/// responses are numbered in separate spaces of one flow).
/// Serialized in snake case (`request`, `read_response`, `ud`), as a gap's `space`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PsnSpace {
    /// Request packets (SEND, WRITE, READ request, atomics).
    Request,
    /// RDMA READ response packets.
    ReadResponse,
    /// A UD sender's packets, one sequence per source address and DETH source QP
    /// (`analyze::ud`): `Ahead` is PSNs this capture did not see, `Behind` a duplicate (UD never
    /// retransmits).
    Ud,
}

impl PsnSpace {
    /// JSON / text name (the serde name).
    pub fn name(self) -> &'static str {
        match self {
            PsnSpace::Request => "request",
            PsnSpace::ReadResponse => "read_response",
            PsnSpace::Ud => "ud",
        }
    }
}

/// One analysis event. Times are capture times in ns since the Unix epoch.
#[derive(Clone, Copy, Debug)]
pub enum TapEvent<'a> {
    /// A packet with a BTH of a tracked flow, after the flow's counters were updated.
    Packet {
        /// Flow index.
        flow: usize,
        /// Capture time, ns.
        ts_ns: u64,
        /// BTH PSN (24 bits).
        psn: u32,
        /// Payload bytes (after all transport headers, without pad and ICRC).
        payload_bytes: u32,
        /// Transport bytes: BTH through ICRC, bytes.
        transport_bytes: u64,
        /// IP ECN field is CE (`11`, RFC 3168).
        ce: bool,
        /// The packet is a CNP (BTH opcode 0x81).
        cnp: bool,
    },
    /// A PSN verdict of the flow's PSN tracker (24-bit PSN as received).
    Psn {
        /// Flow index.
        flow: usize,
        /// Capture time, ns.
        ts_ns: u64,
        /// BTH PSN (24 bits).
        psn: u32,
        /// PSN space.
        space: PsnSpace,
        /// The tracker's verdict: `Behind` is a retransmitted packet, `Ahead` reveals a gap.
        verdict: PsnVerdict,
    },
    /// An AETH (ACK, NAK, RNR NAK; also on READ responses and atomic ACKs).
    Aeth {
        /// Flow carrying the AETH (the responder's direction).
        flow: usize,
        /// The requester's flow it answers, when the two are paired.
        requester: Option<usize>,
        /// Capture time, ns.
        ts_ns: u64,
        /// BTH PSN of the AETH packet (24 bits).
        psn: u32,
        /// The AETH's meaning (IBTA Vol 1 Table 43).
        kind: AethKind,
        /// The packet is an ACKNOWLEDGE (not a READ response or atomic ACK).
        acknowledge: bool,
    },
    /// A CNP (RoCEv2 Annex A17.9.2).
    Cnp {
        /// Flow carrying the CNP.
        flow: usize,
        /// The notified sender's data flow, when known.
        target: Option<usize>,
        /// Capture time, ns.
        ts_ns: u64,
    },
    /// An ACK RTT sample: AckReq request → the cumulative ACK covering it.
    AckRtt {
        /// The requester's flow.
        flow: usize,
        /// ACK time, ns.
        ts_ns: u64,
        /// Round-trip time, ns.
        rtt_ns: u64,
    },
    /// The packet being analysed was accepted into a message: by reassembly (as the
    /// responder accepts a request packet, go-back-N), or as the READ response, atomic ACK or
    /// FLUSH / ATOMIC WRITE response its request awaited.
    InMessage {
        /// The message's id ([`Message::id`]: the frame number of the packet that began it).
        message: u64,
    },
    /// A message completed by reassembly (READ latency in `read_latency_ns`), or, at the end of
    /// the analysis, one still open (`complete` false), with its status so far.
    Message(&'a Message),
    /// A message reported earlier got its final status from a later fatal NAK.
    MessageStatus {
        /// The message's flow.
        flow: usize,
        /// PSN of its first packet (24 bits).
        first_psn: u32,
        /// The final status.
        status: MessageStatus,
    },
}

/// A consumer of [`TapEvent`]s, set with `Analyzer::set_tap` and taken back with
/// `Analyzer::take_tap` before `finish`.
pub trait Tap: Send + 'static {
    /// Called for each event, in capture order.
    fn event(&mut self, ev: &TapEvent<'_>);

    /// The tap as `Any`, so that its owner can downcast it back to its concrete type.
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any + Send>;
}

/// Deliver `ev` to the tap, if any.
#[inline]
pub(crate) fn emit(tap: &mut Option<Box<dyn Tap>>, ev: TapEvent<'_>) {
    if let Some(t) = tap {
        t.event(&ev);
    }
}
