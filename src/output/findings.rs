//! The "Findings" section of the text report (issue 34): printed first, one line per finding
//! (severity, kind, summary, evidence frames), the first error or warning with its cause and
//! advice, at most [`SHORT_LINES`] lines unless every finding is asked for (`--findings all`,
//! which prints each finding's cause and advice).

use std::io::{self, Write};

use owo_colors::OwoColorize;

use crate::analyze::findings::{Finding, Severity};
use crate::analyze::report::Report;

/// Lines the short section holds at most, its title and tail included.
pub const SHORT_LINES: usize = 15;

/// How many findings to show.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum FindingsShown {
    /// The most severe, within [`SHORT_LINES`] lines, and how many more there are.
    #[default]
    Top,
    /// Every finding, each with its cause and advice.
    All,
}

fn frames_text(x: &Finding) -> String {
    match x.frames.as_slice() {
        [] => String::new(),
        [one] => format!(" [frame {one}]"),
        many => format!(
            " [frames {}]",
            many.iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn head_line(x: &Finding, color: bool) -> String {
    let tag = format!("{:<7}", x.severity.name());
    let tag = match (color, x.severity) {
        (false, _) => tag,
        (true, Severity::Error) => tag.red().bold().to_string(),
        (true, Severity::Warning) => tag.yellow().to_string(),
        (true, Severity::Info) => tag.dimmed().to_string(),
    };
    format!("{tag} {}: {}{}", x.kind, x.summary, frames_text(x))
}

fn counts_title(f: &[Finding]) -> String {
    let n = |s: Severity| f.iter().filter(|x| x.severity == s).count();
    let parts: Vec<String> = [
        (n(Severity::Error), "error"),
        (n(Severity::Warning), "warning"),
        (n(Severity::Info), "info"),
    ]
    .into_iter()
    .filter(|(k, _)| *k > 0)
    .map(|(k, w)| match (k, w) {
        (1, w) | (_, w @ "info") => format!("{k} {w}"),
        (_, w) => format!("{k} {w}s"),
    })
    .collect();
    format!("Findings ({})", parts.join(", "))
}

/// Write the section (nothing when there is no finding).
///
/// # Errors
/// The writer's.
pub fn write_findings(
    report: &Report,
    out: &mut dyn Write,
    color: bool,
    shown: FindingsShown,
) -> io::Result<()> {
    write_list(&report.findings, out, color, shown)
}

/// Write the section of findings `f` (sorted, errors first), e.g. `correlate`'s; nothing when
/// there is none.
///
/// # Errors
/// The writer's.
pub fn write_list(
    f: &[Finding],
    out: &mut dyn Write,
    color: bool,
    shown: FindingsShown,
) -> io::Result<()> {
    if f.is_empty() {
        return Ok(());
    }
    let title = counts_title(f);
    if color {
        writeln!(out, "{}", title.bold())?;
    } else {
        writeln!(out, "{title}")?;
    }
    if shown == FindingsShown::All {
        for x in f {
            write_one(out, x, color, true)?;
        }
        return writeln!(out);
    }
    // Title and the tail line aside.
    let mut budget = SHORT_LINES - 2;
    let mut explained = false;
    let mut reached = 0;
    // One line for the first finding of each (severity, kind), and one saying how many more
    // of that kind there are: a capture with the same trouble on 300 flows shows its other
    // kinds of trouble too.
    for group in f.chunk_by(|a, b| (a.severity, a.kind) == (b.severity, b.kind)) {
        let x = &group[0];
        let explain = !explained && x.severity != Severity::Info;
        let lines = 1 + 2 * usize::from(explain) + usize::from(group.len() > 1);
        if lines > budget {
            break;
        }
        write_one(out, x, color, explain)?;
        explained |= explain;
        if group.len() > 1 {
            writeln!(
                out,
                "        + {} more {} (--findings all)",
                group.len() - 1,
                x.kind
            )?;
        }
        budget -= lines;
        reached += group.len();
    }
    if reached < f.len() {
        writeln!(out, "… {} more (--findings all)", f.len() - reached)?;
    }
    writeln!(out)
}

/// One finding's line, and its cause and advice when `explain`.
fn write_one(out: &mut dyn Write, x: &Finding, color: bool, explain: bool) -> io::Result<()> {
    writeln!(out, "{}", head_line(x, color))?;
    if explain {
        writeln!(out, "        cause: {}", x.cause)?;
        writeln!(out, "        advice: {}", x.advice)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::findings::FindingKind;

    /// `n` findings: an error, then info findings of the kinds in turn from `Mtu` on, `same`
    /// of each kind in a row.
    fn report(n: usize, same: usize) -> Report {
        use FindingKind::*;
        let kinds = [
            Mtu,
            InferredConfig,
            OneSidedCapture,
            CaptureLoss,
            LinkLoss,
            ClockUnbounded,
            AsymmetricDelay,
            Priority,
            Congestion,
            CnpWithoutCe,
            EcnNotEnabled,
            AckTimeout,
            RnrNak,
            PacketLoss,
            Malformed,
            IcrcErrors,
            FatalNak,
            NoResponse,
            RetryExhausted,
        ];
        let mut r = crate::analyze::Analyzer::new(Default::default()).finish();
        r.findings = (0..n)
            .map(|k| {
                let (sev, kind) = if k == 0 {
                    (Severity::Error, RetryExhausted)
                } else {
                    (Severity::Info, kinds[((k - 1) / same) % kinds.len()])
                };
                Finding::new(sev, kind, format!("finding {k}"), "because", "do this")
                    .with_frames([k as u64 + 1])
            })
            .collect();
        r
    }

    fn text(n: usize, same: usize, shown: FindingsShown) -> String {
        let mut v = Vec::new();
        write_findings(&report(n, same), &mut v, false, shown).unwrap();
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn short_section_fits_fifteen_lines_and_names_the_rest() {
        let t = text(16, 1, FindingsShown::Top);
        let lines: Vec<&str> = t.lines().filter(|l| !l.is_empty()).collect();
        assert_eq!(lines.len(), SHORT_LINES);
        assert_eq!(lines[0], "Findings (1 error, 15 info)");
        assert_eq!(lines[1], "error   retry_exhausted: finding 0 [frame 1]");
        assert_eq!(lines[2], "        cause: because");
        assert_eq!(lines[3], "        advice: do this");
        // 15 lines: title, 3 for the error, 10 info lines, the tail.
        assert_eq!(lines[4], "info    mtu: finding 1 [frame 2]");
        assert_eq!(lines[13], "info    cnp_without_ce: finding 10 [frame 11]");
        assert_eq!(lines[14], "… 5 more (--findings all)");
    }

    #[test]
    fn findings_of_one_kind_take_two_lines() {
        // The error, then 3 mtu, 3 inferred_config: the first of each and how many more.
        let t = text(7, 3, FindingsShown::Top);
        let lines: Vec<&str> = t.lines().filter(|l| !l.is_empty()).collect();
        assert_eq!(
            lines[4..],
            [
                "info    mtu: finding 1 [frame 2]",
                "        + 2 more mtu (--findings all)",
                "info    inferred_config: finding 4 [frame 5]",
                "        + 2 more inferred_config (--findings all)",
            ]
        );
    }

    #[test]
    fn all_prints_every_finding_with_cause_and_advice() {
        let t = text(40, 3, FindingsShown::All);
        assert_eq!(
            t.lines().filter(|l| l.contains("cause: because")).count(),
            40
        );
        assert!(!t.contains("more"));
        // A short list is whole without a tail.
        let t = text(3, 1, FindingsShown::Top);
        assert!(
            t.contains("info    inferred_config: finding 2 [frame 3]"),
            "{t}"
        );
        assert!(!t.contains("more"));
        assert!(text(0, 1, FindingsShown::Top).is_empty());
    }
}
