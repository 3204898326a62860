//! Findings (issue 34): what went wrong, where, the likely cause and what to change, read off a
//! finished [`Report`] and ranked by severity — the step from counters to a story.
//!
//! [`derive()`] runs once, when the report is built; it reads only the report (its counters, gap
//! stories and the per-flow [`FlowEvidence`](super::evidence::FlowEvidence) gathered on the
//! analysis' rare paths), so it adds nothing per packet. Each rule family has its module:
//! [`retry`] (retry exhaustion, ACK timeouts, silent responders), [`loss`] (PSN gaps, capture
//! loss, RNR and fatal NAKs), [`congestion`] (CE / CNP, ECN, priorities) and [`config`] (ICRC,
//! malformed frames, MTU, the configuration the wire reveals). The evidence rule of each kind is
//! in README, "Findings", with the IBTA sections it rests on.

pub mod config;
pub mod congestion;
pub mod loss;
pub mod retry;

pub use super::finding::{Finding, FindingKind, MAX_EVIDENCE, Severity};
use super::report::{FlowReport, Report};
use crate::decode::Transport;

impl Finding {
    /// Set the flow, its connection and DestQP.
    pub fn on_flow(mut self, f: &FlowReport) -> Finding {
        self.flow = Some(f.id);
        self.connection = f.connection;
        self.dest_qp = Some(f.dest_qp);
        self
    }
}

/// The local ACK timeout exponent a spacing of `ns` between sends shows: the largest e in
/// 0..=31 with 4.096 µs · 2^e ≤ `ns` (IBTA Vol 1 §9.7.6.1.3: the timeout is 4.096 µs ·
/// 2^timeout, and a requester cannot retry before it expires); 0 below 4.096 µs. (The issue's
/// wording "smallest e with … ≤ spacing" is 0 for any spacing: the bound it means is this one.)
pub fn timeout_exp(ns: u64) -> u8 {
    let mut e = 0u8;
    while e < 31 && 4_096u64 << (e + 1) <= ns {
        e += 1;
    }
    e
}

/// A duration for a summary: `850 ns`, `12.5 µs`, `3.20 ms`, `1.234 s`.
pub fn dur(ns: u64) -> String {
    match ns {
        0..1_000 => format!("{ns} ns"),
        1_000..1_000_000 => format!("{:.1} µs", ns as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.2} ms", ns as f64 / 1e6),
        _ => format!("{:.3} s", ns as f64 / 1e9),
    }
}

/// `a → b QP 0x…` of a flow, for summaries.
pub fn flow_label(f: &FlowReport) -> String {
    format!("{} → {} QP {:#08x}", f.src, f.dst, f.dest_qp)
}

/// Whether the flow's transport is acknowledged (and so retransmits).
pub fn reliable(f: &FlowReport) -> bool {
    matches!(f.transport, Transport::Rc | Transport::Xrc | Transport::Rd)
}

/// The reverse flow of `f` in its connection.
pub fn peer<'r>(r: &'r Report, f: &FlowReport) -> Option<&'r FlowReport> {
    let c = r.connections.get(f.connection?)?;
    let j = if c.flows[0] == f.id {
        c.flows[1]
    } else {
        c.flows[0]
    };
    r.flows.get(j)
}

/// Every finding of `report`, errors first, then warnings, then info; within a severity in the
/// order of the kinds' value (README, "Findings") and then of the flows.
pub fn derive(report: &Report) -> Vec<Finding> {
    let mut out = Vec::new();
    retry::rules(report, &mut out);
    loss::rules(report, &mut out);
    congestion::rules(report, &mut out);
    config::rules(report, &mut out);
    out.sort_by_key(|f| (f.severity, f.kind, f.flow));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeout_exp_is_the_largest_exponent_not_above_the_spacing() {
        // 4.096 µs · 2^14 = 67.108864 ms.
        assert_eq!(timeout_exp(67_108_864), 14);
        assert_eq!(timeout_exp(67_108_863), 13);
        assert_eq!(timeout_exp(67_108_864 * 2 - 1), 14);
        assert_eq!(timeout_exp(4_096), 0);
        assert_eq!(timeout_exp(100), 0);
        assert_eq!(timeout_exp(u64::MAX), 31);
    }

    #[test]
    fn names_are_snake_case_as_serde_writes_them() {
        for k in [
            FindingKind::RetryExhausted,
            FindingKind::CnpWithoutCe,
            FindingKind::InferredConfig,
            FindingKind::OneSidedCapture,
        ] {
            assert_eq!(
                serde_json::to_string(&k).unwrap(),
                format!("\"{}\"", k.name())
            );
            assert_eq!(k.to_string(), k.name());
        }
        assert_eq!(
            serde_json::to_string(&Severity::Warning).unwrap(),
            "\"warning\""
        );
        assert!(Severity::Error < Severity::Warning && Severity::Warning < Severity::Info);
    }
}
