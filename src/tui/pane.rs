//! The findings pane: what went wrong so far, one line each, worst first.
//!
//! [`lines`] turns the findings of the current report (`analyze::findings::derive`, issue 34:
//! the same rules, summaries and severities as `read`'s "Findings" section) into pane lines:
//! `kind: summary`, in the findings' own order (errors, warnings, then info).

use crate::analyze::Report;

pub use crate::analyze::findings::Severity;

/// One line of the findings pane.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PaneLine {
    /// How bad it is.
    pub severity: Severity,
    /// The text, without the severity: the finding's kind and its summary.
    pub text: String,
}

/// The pane lines of `report`: one per finding of `report.findings`, worst first.
pub fn lines(report: &Report) -> Vec<PaneLine> {
    report
        .findings
        .iter()
        .map(|f| PaneLine {
            severity: f.severity,
            text: format!("{}: {}", f.kind, f.summary),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::{AnalyzeConfig, Analyzer};
    use crate::decode::Opcode;
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
                    opcode: Opcode(0x0a),
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
        // PSN 2 and 3 never sent, every packet CE-marked and no CNP: the pane names the flow's
        // loss and its CE marks, worst first, one line per finding of the report.
        let r = analyze(&[0, 1, 4, 5], true);
        let l = lines(&r);
        assert_eq!(l.len(), r.findings.len());
        let texts: Vec<&str> = l.iter().map(|l| l.text.as_str()).collect();
        assert!(
            texts
                .iter()
                .any(|t| t.contains("QP 0x000011") || t.contains("0x11")),
            "{texts:?}"
        );
        assert!(
            texts.iter().any(|t| t.starts_with("congestion")),
            "{texts:?}"
        );
        assert!(l.windows(2).all(|w| w[0].severity <= w[1].severity));
    }

    #[test]
    fn ect_traffic_without_loss_has_no_warning() {
        // Not-ECT data draws `ecn_not_enabled`; CE-less ECT data cannot be built by this helper,
        // so a clean flow shows at most that one warning and nothing worse.
        let l = lines(&analyze(&[0, 1, 2, 3], false));
        assert!(l.iter().all(|l| l.severity != Severity::Error), "{l:?}");
        assert!(
            l.iter()
                .filter(|l| l.severity == Severity::Warning)
                .all(|l| l.text.starts_with("ecn_not_enabled")),
            "{l:?}"
        );
    }
}
