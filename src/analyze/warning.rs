//! The report's warnings as data: what the capture or the options make doubtful, with the
//! numbers that say how much. The analyzer states the facts; `output::warning` words them
//! (text, HTML, and the JSON report's `warnings`, an array of those sentences).

use super::message::MessageStatus;

/// Which priority field of a packet a [`Warning`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PriorityField {
    /// DSCP: 6 bits, IPv4 TOS / IPv6 traffic class >> 2 (RFC 2474).
    Dscp,
    /// PCP: 3 bits of the innermost 802.1Q tag (IEEE 802.1Q).
    Pcp,
}

/// One warning of the report. Flow indices are those of `Report::flows`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Warning {
    /// `--mtu` is smaller than the payload FIRST/MIDDLE packets carry (they carry exactly one
    /// path MTU, IBTA Vol 1 §9.7.1), so READ PSN reservation with it is wrong.
    MtuContradicted {
        /// The `--mtu` given, bytes.
        mtu: u32,
        /// Largest FIRST/MIDDLE payload seen, bytes.
        payload: u32,
    },
    /// `--mtu` differs from the path MTU the capture shows.
    MtuDiffers {
        /// The `--mtu` given, bytes.
        mtu: u32,
        /// Path MTU the FIRST/MIDDLE payloads show, bytes.
        seen: u32,
    },
    /// Frames cut by the snap length before the end of the transport headers the analysis
    /// needs (`FrameCounts::headers_cut`).
    HeadersCut {
        /// Such frames.
        frames: u64,
    },
    /// The path MTU could not be inferred and READ requests need it for their PSN reservation.
    PmtuUnknown {
        /// READ requests whose reservation needed it.
        reads: u64,
    },
    /// Time intervals that came out negative and were left out of the latency statistics.
    NegativeIntervals {
        /// Such intervals.
        intervals: u64,
    },
    /// Flows that came through two or more mirror sessions (ERSPAN session IDs or VXLAN VNIs).
    MultiSession {
        /// Such flows.
        flows: u64,
        /// The first two sessions seen in one flow.
        sessions: [u32; 2],
    },
    /// RoCE frames of flows beyond `--max-flows`, not analysed.
    Untracked {
        /// Such frames.
        frames: u64,
        /// Flows dropped from the table (`FrameCounts::flows_dropped`).
        flows: u64,
        /// Whether `flows` is exact (false: a lower bound).
        exact: bool,
    },
    /// Message statuses a fatal NAK changed after the messages were handed out.
    LateStatuses {
        /// Such messages.
        messages: u64,
        /// Messages held back before they are handed out (`analyze::HELD_MESSAGES`).
        held: usize,
    },
    /// A flow's data packets carry more than one DSCP or PCP value.
    PriorityValues {
        /// The flow.
        flow: usize,
        /// DSCP or PCP.
        field: PriorityField,
        /// (value, packets), in first-seen order.
        values: Vec<(u8, u64)>,
    },
    /// The CNPs to a flow's sender travel at the data's own DSCP or PCP.
    CnpPriority {
        /// The data flow.
        flow: usize,
        /// DSCP or PCP.
        field: PriorityField,
        /// The one value both use.
        value: u8,
    },
    /// A flow's AETH MSNs advance by another number than the request messages reassembled
    /// over the same PSNs (spec/roce.md §3).
    MsnMismatch {
        /// The flow carrying the AETHs.
        flow: usize,
        /// The requester's flow, when paired.
        requester: Option<usize>,
        /// MSN advance.
        msn_delta: u64,
        /// Request messages reassembled.
        messages: u64,
        /// AETHs that disagree.
        mismatched: u64,
        /// AETHs checked.
        checked: u64,
    },
    /// Packets after the fatal NAK that put a QP pair in the error state (IBTA Vol 1 §9.9.2).
    AfterFatalNak {
        /// The flow.
        flow: usize,
        /// Packets after the NAK, not analysed.
        packets: u64,
        /// Frame of the NAK.
        frame: u64,
        /// Status the NAK gave the refused request.
        status: MessageStatus,
    },
    /// About the input rather than the analysis (a file damaged after some frame, no RoCE
    /// found), worded where the input is read.
    Input(String),
}
