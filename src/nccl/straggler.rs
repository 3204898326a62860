//! Stragglers: in every round of steps (the k-th completed step of each connection), the
//! connection whose step took longest, and why.
//!
//! A step's span runs from the end of the connection's previous step (its CTS, or its first
//! data packet, for the first step) to its last data packet, and is cut into three parts, each
//! measured on one capture's clock (spans of different captures compare without aligning
//! clocks):
//! - **receiver**: the CTS came after the previous step had ended — the receiver posted its
//!   buffer late;
//! - **sender**: the first data packet came after both — the sender was late to send;
//! - **wire**: first to last data packet — the link or congestion (with the step's
//!   retransmissions, CNPs and CE marks as findings).
//!
//! The largest part names the cause.

use super::track::{Conn, Step};

/// Why a step was slow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// It waited for its clear-to-send: the receiver was late.
    Receiver,
    /// Its data started late after the clear-to-send: the sender was late.
    Sender,
    /// Its data took long on the wire: link or congestion.
    Wire,
}

impl Cause {
    /// Words for the text report.
    pub fn text(self) -> &'static str {
        match self {
            Cause::Receiver => "waited for CTS (receiver late)",
            Cause::Sender => "sender late after CTS",
            Cause::Wire => "data slow on the wire",
        }
    }
}

/// The straggler of one round.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Straggler {
    /// Round (0 = every connection's first completed step).
    pub round: usize,
    /// Connection number in the report.
    pub connection: usize,
    /// Its step's span, ns.
    pub span_ns: u64,
    /// The parts of the span, ns.
    pub receiver_ns: u64,
    /// See [`Straggler::receiver_ns`].
    pub sender_ns: u64,
    /// See [`Straggler::receiver_ns`].
    pub wire_ns: u64,
    /// The largest part.
    pub cause: Cause,
    /// The median span of the round's connections, ns.
    pub median_span_ns: u64,
    /// Retransmitted data packets, CNPs and CE marks of the step.
    pub retransmitted: u32,
    /// See [`Straggler::retransmitted`].
    pub cnps: u32,
    /// See [`Straggler::retransmitted`].
    pub ce: u32,
}

/// The parts of step `k` of `steps`: (span, receiver, sender, wire), ns.
pub fn parts(steps: &[Step], k: usize) -> (u64, u64, u64, u64) {
    let s = steps[k];
    let prev = k.checked_sub(1).map(|j| steps[j].last_ns);
    let cts = s.cts_ns.unwrap_or(s.first_ns);
    let start = prev.unwrap_or(cts).min(s.first_ns);
    let receiver = prev.map_or(0, |p| cts.saturating_sub(p));
    let ready = start.max(cts).min(s.first_ns);
    let sender = s.first_ns.saturating_sub(ready);
    let wire = s.last_ns.saturating_sub(s.first_ns);
    (s.last_ns.saturating_sub(start), receiver, sender, wire)
}

/// The straggler of every round in which two connections or more completed a step.
pub fn rounds(conns: &[&Conn]) -> Vec<Straggler> {
    let n = conns.iter().map(|c| c.steps.len()).max().unwrap_or(0);
    let mut out = Vec::new();
    for k in 0..n {
        let mut spans: Vec<(usize, (u64, u64, u64, u64))> = conns
            .iter()
            .enumerate()
            .filter(|(_, c)| c.steps.len() > k)
            .map(|(i, c)| (i, parts(&c.steps, k)))
            .collect();
        if spans.len() < 2 {
            continue;
        }
        spans.sort_by_key(|&(i, p)| (p.0, std::cmp::Reverse(i)));
        let median = spans[spans.len() / 2].1.0;
        let &(i, (span, receiver, sender, wire)) = spans.last().unwrap_or(&spans[0]);
        let cause = if receiver >= sender && receiver >= wire {
            Cause::Receiver
        } else if sender >= wire {
            Cause::Sender
        } else {
            Cause::Wire
        };
        let s = conns[i].steps[k];
        out.push(Straggler {
            round: k,
            connection: i,
            span_ns: span,
            receiver_ns: receiver,
            sender_ns: sender,
            wire_ns: wire,
            cause,
            median_span_ns: median,
            retransmitted: s.retransmitted,
            cnps: s.cnps,
            ce: s.ce,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(cts: u64, first: u64, last: u64) -> Step {
        Step {
            idx: 1,
            cts_ns: Some(cts),
            first_ns: first,
            last_ns: last,
            bytes: 1,
            retransmitted: 0,
            cnps: 0,
            ce: 0,
        }
    }

    #[test]
    fn parts_of_a_step() {
        // Previous step ended at 100; CTS at 160 (receiver 60 late), data 170..200.
        let s = [step(0, 10, 100), step(160, 170, 200)];
        assert_eq!(parts(&s, 1), (100, 60, 10, 30));
        // CTS long before: no receiver part; data 120..400 on the wire.
        let s = [step(0, 10, 100), step(50, 120, 400)];
        assert_eq!(parts(&s, 1), (300, 0, 20, 280));
        // First step: from its CTS.
        assert_eq!(parts(&s, 0), (100, 0, 10, 90));
    }
}
