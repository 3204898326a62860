//! The report's warnings in English: one sentence each, the same in the text summary, the HTML
//! report, `export`'s stderr and the JSON report (whose `warnings` is an array of them).

use super::counted;
use crate::analyze::warning::{PriorityField, Warning};
use std::fmt;

impl PriorityField {
    /// `DSCP` or `PCP`.
    fn name(self) -> &'static str {
        match self {
            PriorityField::Dscp => "DSCP",
            PriorityField::Pcp => "PCP",
        }
    }
}

/// Advice shared by the two `--mtu` warnings.
const LEAVE_MTU_OUT: &str = "leave --mtu out to use what the capture shows";

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::MtuContradicted { mtu, payload } => write!(
                f,
                "--mtu {mtu} contradicts the capture: FIRST/MIDDLE packets carry {payload} bytes of payload, so READ PSN reservation (and the gaps and retransmissions it implies) is wrong; {LEAVE_MTU_OUT}"
            ),
            Warning::MtuDiffers { mtu, seen } => write!(
                f,
                "--mtu {mtu} differs from the path MTU the capture shows ({seen} bytes in FIRST/MIDDLE packets, which carry exactly one path MTU): READ PSN reservation with it (and the gaps and retransmissions it implies) is wrong; {LEAVE_MTU_OUT}"
            ),
            Warning::HeadersCut { frames } => write!(
                f,
                "{frames} frames were cut by the snap length before the end of their transport headers: their PSNs, NAKs and messages are missing, so PSN gaps, retransmissions, NAK counts, message counts and bytes, READ reservations and response matching are uncertain (capture with a snap length of at least 128 bytes)"
            ),
            Warning::PmtuUnknown { reads } => write!(
                f,
                "the path MTU could not be inferred (no full FIRST/MIDDLE packets) and {reads} READ requests need it for their PSN reservation: gaps after them are tolerated, not counted; pass --mtu"
            ),
            Warning::NegativeIntervals { intervals } => write!(
                f,
                "{} negative, left out of the latency statistics (ACK RTT, gap to NAK, NAK or timeout to retransmission, CE to CNP, between CNPs): a frame stamped before the one it answers — the clocks of the capture or of its mirror sessions disagree",
                counted(*intervals, "time interval")
            ),
            Warning::MultiSession {
                flows,
                sessions: [s, t],
            } => write!(
                f,
                "{} came through two or more mirror sessions (ERSPAN session IDs or VXLAN VNIs, e.g. {s} and {t}): a packet mirrored by both is counted twice, its copy as a retransmission; --encap-session keeps each session's flows apart",
                counted(*flows, "flow")
            ),
            Warning::Untracked {
                frames,
                flows,
                exact,
            } => {
                let at_least = if *exact { "" } else { "at least " };
                write!(
                    f,
                    "{frames} RoCE frames in {at_least}{flows} flows beyond --max-flows were not analysed (flows dropped from the table)"
                )
            }
            Warning::LateStatuses { messages, held } => {
                match messages {
                    1 => f.write_str("1 message's status")?,
                    n => write!(f, "{n} messages' statuses")?,
                }
                write!(
                    f,
                    " changed (a fatal NAK) more than {held} messages after the message was handed out: the exported messages table keeps the earlier status"
                )
            }
            Warning::PriorityValues {
                flow,
                field,
                values,
            } => {
                write!(
                    f,
                    "flow {flow}: data packets use {} {} values: ",
                    values.len(),
                    field.name()
                )?;
                for (k, (v, n)) in values.iter().enumerate() {
                    let sep = if k == 0 { "" } else { ", " };
                    write!(f, "{sep}{v} ({n})")?;
                }
                f.write_str(" (PFC protects one priority)")
            }
            Warning::CnpPriority { flow, field, value } => write!(
                f,
                "flow {flow}: CNPs to its sender use the data's {} {value}: the CNP priority is often left unconfigured (CNPs should travel at a higher priority)",
                field.name()
            ),
            Warning::MsnMismatch {
                flow,
                requester,
                msn_delta,
                messages,
                mismatched,
                checked,
            } => {
                write!(
                    f,
                    "flow {flow}: its AETH MSNs advance by {msn_delta} but {messages} request messages"
                )?;
                if let Some(j) = requester {
                    write!(f, " of flow {j}")?;
                }
                write!(
                    f,
                    " were reassembled over the same PSNs ({mismatched} of {checked} AETHs disagree): the capture misses request packets (see the gaps) or the responder does not count MSNs per message"
                )
            }
            Warning::AfterFatalNak {
                flow,
                packets,
                frame,
                status,
            } => write!(
                f,
                "flow {flow}: {packets} packets after the fatal NAK in frame {frame} ({}) were not analysed: the QP is in the error state",
                status.name()
            ),
            Warning::Input(text) => f.write_str(text),
        }
    }
}

/// In the JSON report, a warning is its sentence.
impl serde::Serialize for Warning {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::message::MessageStatus;

    /// Each variant against the sentence the analyzer wrote before warnings were typed (the
    /// strings of analyze/build.rs and analyze/priority.rs at 55c701d, written out by hand).
    #[test]
    fn sentences_are_the_former_strings() {
        let cases = [
            (
                Warning::MultiSession {
                    flows: 1,
                    sessions: [5, 6],
                },
                "1 flow came through two or more mirror sessions (ERSPAN session IDs or VXLAN VNIs, e.g. 5 and 6): a packet mirrored by both is counted twice, its copy as a retransmission; --encap-session keeps each session's flows apart",
            ),
            (
                Warning::NegativeIntervals { intervals: 3 },
                "3 time intervals negative, left out of the latency statistics (ACK RTT, gap to NAK, NAK or timeout to retransmission, CE to CNP, between CNPs): a frame stamped before the one it answers — the clocks of the capture or of its mirror sessions disagree",
            ),
            (
                Warning::Untracked {
                    frames: 40,
                    flows: 7,
                    exact: false,
                },
                "40 RoCE frames in at least 7 flows beyond --max-flows were not analysed (flows dropped from the table)",
            ),
            (
                Warning::LateStatuses {
                    messages: 1,
                    held: 4096,
                },
                "1 message's status changed (a fatal NAK) more than 4096 messages after the message was handed out: the exported messages table keeps the earlier status",
            ),
            (
                Warning::LateStatuses {
                    messages: 2,
                    held: 4096,
                },
                "2 messages' statuses changed (a fatal NAK) more than 4096 messages after the message was handed out: the exported messages table keeps the earlier status",
            ),
            (
                Warning::PriorityValues {
                    flow: 4,
                    field: PriorityField::Dscp,
                    values: vec![(26, 10), (0, 2)],
                },
                "flow 4: data packets use 2 DSCP values: 26 (10), 0 (2) (PFC protects one priority)",
            ),
            (
                Warning::CnpPriority {
                    flow: 0,
                    field: PriorityField::Pcp,
                    value: 3,
                },
                "flow 0: CNPs to its sender use the data's PCP 3: the CNP priority is often left unconfigured (CNPs should travel at a higher priority)",
            ),
            (
                Warning::MsnMismatch {
                    flow: 2,
                    requester: None,
                    msn_delta: 19,
                    messages: 15,
                    mismatched: 16,
                    checked: 19,
                },
                "flow 2: its AETH MSNs advance by 19 but 15 request messages were reassembled over the same PSNs (16 of 19 AETHs disagree): the capture misses request packets (see the gaps) or the responder does not count MSNs per message",
            ),
            (
                Warning::AfterFatalNak {
                    flow: 1,
                    packets: 5,
                    frame: 12,
                    status: MessageStatus::NakRemoteAccess,
                },
                "flow 1: 5 packets after the fatal NAK in frame 12 (nak_remote_access) were not analysed: the QP is in the error state",
            ),
            (
                Warning::PmtuUnknown { reads: 2 },
                "the path MTU could not be inferred (no full FIRST/MIDDLE packets) and 2 READ requests need it for their PSN reservation: gaps after them are tolerated, not counted; pass --mtu",
            ),
        ];
        for (w, text) in cases {
            assert_eq!(w.to_string(), text);
            assert_eq!(
                serde_json::to_string(&w).unwrap(),
                serde_json::to_string(text).unwrap()
            );
        }
    }
}
