//! Per-packet analysis marks (`analysis.*` fields): the verdicts the analysis reaches on each
//! packet, as Wireshark's `tcp.analysis.*` flags.

/// The analysis marks of one frame. All clear for a frame the analysis had nothing to say on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Marks {
    /// Its PSN was already carried by the flow (in the same PSN space: requests, or READ
    /// responses), within the last [`SEEN_WINDOW`] PSNs: a resend.
    pub retransmission: bool,
    /// Behind the flow's expected PSN, but its PSN was not seen before: it overtook others.
    pub out_of_order: bool,
    /// A UD packet behind its sender's sequence (UD never retransmits: a copy).
    pub duplicate: bool,
    /// PSNs missing right before this packet (0: none): it is the first packet after a gap.
    pub gap: u32,
    /// A NAK named its PSN: set on the packets of the NAKed PSN shown before the NAK (late, see
    /// [`SEEN_WINDOW`]) and on the first packet carrying it after the NAK.
    pub naked: bool,
    /// On a NAK or RNR NAK: its code (`psn_seq_err`, …, `rnr_nak`).
    pub nak_reason: Option<&'static str>,
    /// On an ACK: ns from the AckReq request it covers.
    pub ack_rtt_ns: Option<u64>,
    /// On a CNP: the frame number of the last CE-marked packet of the flow it notifies.
    pub cnp_for: Option<u64>,
    /// The id of the message the analysis accepted this packet into
    /// ([`Message::id`](super::message::Message::id): the frame number of the packet that
    /// began it), as `--messages` prints it. Set on the request packets the message
    /// reassembly accepts (as the responder accepts them: not on copies it discards, go-back-N)
    /// and, for a READ, atomic, FLUSH or ATOMIC WRITE, on the responses matched to it.
    pub message: Option<u64>,
}

/// PSNs per flow and space whose having been seen is remembered (for `retransmission` versus
/// `out_of_order`): 1024.
pub const SEEN_WINDOW: u32 = 1024;

impl Marks {
    /// Whether no mark is set.
    pub fn is_empty(&self) -> bool {
        *self == Marks::default()
    }

    /// Whether a verdict is set: a mark other than `message` (which most data packets carry),
    /// so one that the text line shows as a tag.
    pub fn has_verdict(&self) -> bool {
        Marks {
            message: None,
            ..*self
        } != Marks::default()
    }
}

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use super::psn::{PSN_MASK, PsnVerdict, psn_distance};
use super::tap::{PsnSpace, Tap, TapEvent};
use crate::decode::AethKind;

/// Which PSNs of one flow's PSN space were seen, over the last [`SEEN_WINDOW`] PSNs up to the
/// highest seen (a bitmap: 128 bytes).
#[derive(Clone, Debug)]
struct SeenPsns {
    /// The highest PSN seen (serial order).
    top: u32,
    bits: [u64; (SEEN_WINDOW / 64) as usize],
}

impl SeenPsns {
    fn new(psn: u32) -> SeenPsns {
        let mut s = SeenPsns {
            top: psn,
            bits: [0; (SEEN_WINDOW / 64) as usize],
        };
        s.set(psn);
        s
    }

    fn bit(psn: u32) -> (usize, u64) {
        let i = psn % SEEN_WINDOW;
        ((i / 64) as usize, 1 << (i % 64))
    }

    fn set(&mut self, psn: u32) {
        let (w, b) = SeenPsns::bit(psn);
        self.bits[w] |= b;
    }

    /// Whether `psn` was seen (only PSNs within the window below the top are known).
    fn contains(&self, psn: u32) -> bool {
        let back = psn_distance(self.top, psn);
        let (w, b) = SeenPsns::bit(psn);
        back < SEEN_WINDOW && self.bits[w] & b != 0
    }

    /// Record `psn`, moving the window forward when it is past the top.
    fn insert(&mut self, psn: u32) {
        let ahead = psn_distance(psn, self.top);
        if ahead != 0 && ahead < PSN_MASK / 2 {
            // Clear the PSNs the window moves over.
            if ahead >= SEEN_WINDOW {
                self.bits = [0; (SEEN_WINDOW / 64) as usize];
            } else {
                for k in 1..=ahead {
                    let (w, b) = SeenPsns::bit(self.top.wrapping_add(k) & PSN_MASK);
                    self.bits[w] &= !b;
                }
            }
            self.top = psn;
        }
        self.set(psn);
    }
}

/// What the marks tap keeps per flow (flows are bounded by `--max-flows`).
#[derive(Clone, Debug, Default)]
struct FlowMarks {
    /// The last CE-marked frame of the flow.
    last_ce: Option<u64>,
    /// Seen PSNs per space (requests, READ responses, UD).
    seen: [Option<SeenPsns>; 3],
    /// A NAK named this PSN of the flow and no packet has carried it since.
    naked_psn: Option<u32>,
}

/// A late mark: `naked` for the frames of `flow` with `psn` shown before the NAK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LateNak {
    /// The requester flow (index in the analysis' flow table).
    pub flow: usize,
    /// The NAKed PSN (24 bits).
    pub psn: u32,
}

/// The marks of the frame being analysed, and what the marks depend on across frames.
#[derive(Debug, Default)]
pub struct MarkState {
    frame: u64,
    /// The current frame's marks.
    pub marks: Marks,
    /// The current frame's flow and PSN, when it belongs to a tracked flow.
    pub flow_psn: Option<(usize, u32)>,
    /// NAKs the current frame carries that mark earlier frames.
    pub late: Vec<LateNak>,
    flows: HashMap<usize, FlowMarks>,
}

impl MarkState {
    /// Start frame `number`: clear the marks.
    pub fn begin(&mut self, number: u64) {
        self.frame = number;
        self.marks = Marks::default();
        self.flow_psn = None;
        self.late.clear();
    }

    fn event(&mut self, ev: &TapEvent<'_>) {
        match *ev {
            TapEvent::Packet { flow, psn, ce, .. } => {
                self.flow_psn = Some((flow, psn));
                let f = self.flows.entry(flow).or_default();
                if ce {
                    f.last_ce = Some(self.frame);
                }
                if f.naked_psn == Some(psn) {
                    f.naked_psn = None;
                    self.marks.naked = true;
                }
            }
            TapEvent::Psn {
                flow,
                psn,
                space,
                verdict,
                ..
            } => self.psn(flow, psn, space, verdict),
            TapEvent::Aeth {
                requester,
                psn,
                kind,
                ..
            } => {
                self.marks.nak_reason = match kind {
                    AethKind::Nak(c) => Some(c.name()),
                    AethKind::RnrNak { .. } => Some("rnr_nak"),
                    _ => None,
                };
                if let (Some(_), Some(r)) = (self.marks.nak_reason, requester) {
                    self.flows.entry(r).or_default().naked_psn = Some(psn);
                    self.late.push(LateNak { flow: r, psn });
                }
            }
            TapEvent::Cnp { target, .. } => {
                self.marks.cnp_for = target.and_then(|t| self.flows.get(&t)?.last_ce);
            }
            TapEvent::AckRtt { rtt_ns, .. } => self.marks.ack_rtt_ns = Some(rtt_ns),
            TapEvent::InMessage { message } => self.marks.message = Some(message),
            TapEvent::Message(_) | TapEvent::MessageStatus { .. } => {}
        }
    }

    fn psn(&mut self, flow: usize, psn: u32, space: PsnSpace, verdict: PsnVerdict) {
        let i = match space {
            PsnSpace::Request => 0,
            PsnSpace::ReadResponse => 1,
            PsnSpace::Ud => 2,
        };
        let seen = &mut self.flows.entry(flow).or_default().seen[i];
        let before = seen.as_ref().is_some_and(|s| s.contains(psn));
        match verdict {
            PsnVerdict::Ahead { missing, .. } => self.marks.gap = missing,
            PsnVerdict::Behind { .. } if space == PsnSpace::Ud => self.marks.duplicate = true,
            PsnVerdict::Behind { .. } if before => self.marks.retransmission = true,
            PsnVerdict::Behind { .. } => self.marks.out_of_order = true,
            _ => {}
        }
        match seen {
            Some(s) => s.insert(psn),
            None => *seen = Some(SeenPsns::new(psn)),
        }
    }
}

/// Tap `a` for marks: a [`MarkTap`] in front of the tap it had (which still gets every
/// event), and the shared state to read the marks from.
pub fn tap(a: &mut super::Analyzer) -> Arc<Mutex<MarkState>> {
    let state = Arc::new(Mutex::new(MarkState::default()));
    let inner = a.take_tap();
    a.set_tap(Box::new(MarkTap {
        state: Arc::clone(&state),
        inner,
    }));
    state
}

/// The analysis tap that computes [`Marks`]: its state is shared with the reader, which calls
/// [`MarkState::begin`] before each frame and reads the marks after it. Events are passed on
/// to `inner` (the `--html` recorder) when there is one.
pub struct MarkTap {
    /// The shared state.
    pub state: Arc<Mutex<MarkState>>,
    /// The tap events are passed on to.
    pub inner: Option<Box<dyn Tap>>,
}

impl Tap for MarkTap {
    fn event(&mut self, ev: &TapEvent<'_>) {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .event(ev);
        if let Some(t) = &mut self.inner {
            t.event(ev);
        }
    }

    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any + Send> {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seen_window_moves_and_forgets() {
        let mut s = SeenPsns::new(PSN_MASK - 2);
        s.insert(PSN_MASK);
        s.insert(1); // wraps
        assert!(s.contains(PSN_MASK - 2) && s.contains(PSN_MASK) && s.contains(1));
        assert!(!s.contains(PSN_MASK - 1) && !s.contains(0) && !s.contains(2));
        s.insert(1 + SEEN_WINDOW);
        assert!(!s.contains(1), "out of the window");
        assert!(s.contains(1 + SEEN_WINDOW));
        // An older PSN does not move the top.
        s.insert(SEEN_WINDOW);
        assert!(s.contains(SEEN_WINDOW) && s.contains(1 + SEEN_WINDOW));
    }

    #[test]
    fn verdicts_become_marks() {
        let mut m = MarkState::default();
        let psn = |m: &mut MarkState, n: u64, p: u32, v: PsnVerdict| {
            m.begin(n);
            m.psn(0, p, PsnSpace::Request, v);
            m.marks
        };
        assert!(psn(&mut m, 1, 10, PsnVerdict::Start).is_empty());
        let g = psn(
            &mut m,
            2,
            14,
            PsnVerdict::Ahead {
                expected: 11,
                missing: 3,
            },
        );
        assert_eq!(g.gap, 3);
        let r = psn(&mut m, 3, 10, PsnVerdict::Behind { expected: 15 });
        assert!(r.retransmission && !r.out_of_order);
        let o = psn(&mut m, 4, 12, PsnVerdict::Behind { expected: 15 });
        assert!(o.out_of_order && !o.retransmission);
        m.begin(5);
        m.psn(1, 3, PsnSpace::Ud, PsnVerdict::Behind { expected: 4 });
        assert!(m.marks.duplicate);
    }
}
