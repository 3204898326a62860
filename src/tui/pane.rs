//! The findings pane: the problems the analysis reports so far, one line each, worst first.
//!
//! [`lines`] is the one place that turns the report into pane lines. Until the findings issue
//! (34, `analyze::findings::derive(&Report) -> Vec<Finding>`) lands it reads the report itself:
//! PSN gaps with their verdicts, NAKs and RNR NAKs, retransmissions, fatal NAKs, CE marks and
//! CNPs, ICRC failures, malformed frames, and the report's warnings. Switching to `derive` is
//! a change of [`lines`]' body alone.

use crate::analyze::Report;
use crate::analyze::report::FlowReport;

/// How bad a pane line is (its colour; lines are listed worst first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Something failed: a QP in the error state, bad ICRCs.
    Error,
    /// Loss, NAKs, retransmissions, malformed frames, report warnings.
    Warning,
    /// Congestion signalling working as designed (CE marks answered by CNPs).
    Info,
}

/// One line of the findings pane.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PaneLine {
    /// How bad it is.
    pub severity: Severity,
    /// The text, without the severity.
    pub text: String,
}

fn line(severity: Severity, text: String) -> PaneLine {
    PaneLine { severity, text }
}

/// `src → dst QP 0x…` of a flow.
fn who(f: &FlowReport) -> String {
    format!("{} → {} QP {:#08x}", f.src, f.dst, f.dest_qp)
}

/// The pane lines of `report`, worst first (a stable order within a severity: frame-level,
/// then per flow in flow order, then warnings).
pub fn lines(report: &Report) -> Vec<PaneLine> {
    let mut v = Vec::new();
    let fr = &report.frames;
    if report.icrc.bad > 0 {
        v.push(line(
            Severity::Error,
            format!("{} frames with a bad ICRC", report.icrc.bad),
        ));
    }
    if fr.malformed > 0 {
        v.push(line(
            Severity::Warning,
            format!("{} malformed RoCE frames", fr.malformed),
        ));
    }
    for f in &report.flows {
        flow_lines(report, f, &mut v);
    }
    for w in &report.warnings {
        v.push(line(Severity::Warning, w.clone()));
    }
    v.sort_by_key(|l| l.severity);
    v
}

/// The lines of flow `f`: fatal NAK, gaps by verdict, NAKs, RNR NAKs, retransmissions, CE/CNP.
fn flow_lines(report: &Report, f: &FlowReport, v: &mut Vec<PaneLine>) {
    if let Some(e) = &f.qp_error {
        v.push(line(
            Severity::Error,
            format!(
                "{}: fatal NAK {} at PSN {:#08x} (frame {}), QP pair in error",
                who(f),
                e.status,
                e.psn,
                e.frame
            ),
        ));
    }
    if f.psn.gap_events > 0 {
        v.push(line(
            Severity::Warning,
            format!(
                "{}: {} PSN gaps, {} PSNs missing{}",
                who(f),
                f.psn.gap_events,
                f.psn.missing,
                verdicts(report, f.id)
            ),
        ));
    }
    let naks = f.naks.psn_seq_err
        + f.naks.invalid_request
        + f.naks.remote_access
        + f.naks.remote_op
        + f.naks.invalid_rd
        + f.naks.reserved;
    if naks > 0 || f.rnr_naks > 0 {
        v.push(line(
            Severity::Warning,
            format!(
                "{}: {naks} NAKs ({} PSN sequence error), {} RNR NAKs",
                who(f),
                f.naks.psn_seq_err,
                f.rnr_naks
            ),
        ));
    }
    if f.psn.retransmitted > 0 {
        let l = &f.loss;
        v.push(line(
            Severity::Warning,
            format!(
                "{}: {} packets retransmitted ({} after a NAK, {} after a timeout)",
                who(f),
                f.psn.retransmitted,
                l.nak_retransmissions,
                l.timeouts
            ),
        ));
    }
    if f.ecn.ce > 0 {
        v.push(line(
            Severity::Info,
            format!(
                "{}: {} CE-marked packets ({:.1} %)",
                who(f),
                f.ecn.ce,
                f.ce_fraction * 100.0
            ),
        ));
    }
    if f.cnps > 0 {
        v.push(line(
            Severity::Info,
            format!("{}: {} CNPs to the sender", who(f), f.cnps),
        ));
    }
}

/// `: 2 nak_retransmitted, 1 capture_loss` — the verdicts of flow `id`'s stored gaps.
fn verdicts(report: &Report, id: usize) -> String {
    let mut counts: Vec<(&str, u64)> = Vec::new();
    for g in report.gaps.iter().filter(|g| g.flow == id) {
        match counts.iter_mut().find(|(v, _)| *v == g.verdict) {
            Some((_, n)) => *n += 1,
            None => counts.push((g.verdict, 1)),
        }
    }
    if counts.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = counts.iter().map(|(v, n)| format!("{n} {v}")).collect();
    format!(": {}", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::{AnalyzeConfig, Analyzer};
    use crate::decode::{DecodeConfig, LinkType, decode_frame};
    use crate::synth::frame::{Bth, Packet};

    /// WRITE ONLY packets of one QP from 10.0.0.1 to 10.0.0.2 with PSNs `psns`, CE-marked
    /// when `ce`.
    fn analyze(psns: &[u32], ce: bool) -> Report {
        let mut a = Analyzer::new(AnalyzeConfig::default());
        let cfg = DecodeConfig::default();
        for (i, &psn) in psns.iter().enumerate() {
            let mut p = Packet::v4(
                [10, 0, 0, 1],
                [10, 0, 0, 2],
                Bth {
                    opcode: 0x0a,
                    dest_qp: 0x11,
                    psn,
                    ..Bth::default()
                },
            );
            if ce {
                p.set_ecn(3);
            }
            let data = p.build();
            let f = decode_frame(LinkType::ETHERNET, &data, data.len() as u32, &cfg);
            a.push(i as u64 + 1, 1_000 * i as u64, &f);
        }
        a.finish()
    }

    #[test]
    fn a_gap_and_ce_marks() {
        // PSN 2 and 3 never sent: one gap of 2 PSNs (unresolved: no NAK, ACK or retransmission).
        let r = analyze(&[0, 1, 4, 5], true);
        let l = lines(&r);
        let texts: Vec<&str> = l.iter().map(|l| l.text.as_str()).collect();
        assert!(
            texts.contains(
                &"10.0.0.1 → 10.0.0.2 QP 0x000011: 1 PSN gaps, 2 PSNs missing: 1 unresolved"
            ),
            "{texts:?}"
        );
        assert!(
            texts.contains(&"10.0.0.1 → 10.0.0.2 QP 0x000011: 4 CE-marked packets (100.0 %)"),
            "{texts:?}"
        );
        // Worst first: the gap before the CE line.
        assert!(l.windows(2).all(|w| w[0].severity <= w[1].severity));
    }

    #[test]
    fn a_clean_flow_has_no_lines() {
        assert_eq!(lines(&analyze(&[0, 1, 2, 3], false)), []);
    }
}
