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
    let all = shown == FindingsShown::All;
    // Title and the tail line aside.
    let mut budget = SHORT_LINES - 2;
    let mut explained = false;
    let mut written = 0;
    for x in f {
        let explain = all || (!explained && x.severity != Severity::Info);
        let lines = if explain { 3 } else { 1 };
        if !all && lines > budget {
            break;
        }
        writeln!(out, "{}", head_line(x, color))?;
        if explain {
            writeln!(out, "        cause: {}", x.cause)?;
            writeln!(out, "        advice: {}", x.advice)?;
            explained = true;
        }
        budget = budget.saturating_sub(lines);
        written += 1;
    }
    if written < f.len() {
        writeln!(out, "… {} more (--findings all)", f.len() - written)?;
    }
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::findings::FindingKind;

    fn report(n: usize) -> Report {
        let mut r = crate::analyze::Analyzer::new(Default::default()).finish();
        r.findings = (0..n)
            .map(|k| {
                Finding::new(
                    if k == 0 {
                        Severity::Error
                    } else {
                        Severity::Info
                    },
                    FindingKind::Mtu,
                    format!("finding {k}"),
                    "because",
                    "do this",
                )
                .with_frames([k as u64 + 1])
            })
            .collect();
        r
    }

    fn text(n: usize, shown: FindingsShown) -> String {
        let mut v = Vec::new();
        write_findings(&report(n), &mut v, false, shown).unwrap();
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn short_section_fits_fifteen_lines_and_names_the_rest() {
        let t = text(40, FindingsShown::Top);
        let lines: Vec<&str> = t.lines().filter(|l| !l.is_empty()).collect();
        assert_eq!(lines.len(), SHORT_LINES);
        assert_eq!(lines[0], "Findings (1 error, 39 info)");
        assert_eq!(lines[1], "error   mtu: finding 0 [frame 1]");
        assert_eq!(lines[2], "        cause: because");
        assert_eq!(lines[3], "        advice: do this");
        // 15 lines: title, 3 for the error, 10 info lines, the tail.
        assert_eq!(lines[13], "info    mtu: finding 10 [frame 11]");
        assert_eq!(lines[14], "… 29 more (--findings all)");
    }

    #[test]
    fn all_prints_every_finding_with_cause_and_advice() {
        let t = text(40, FindingsShown::All);
        assert_eq!(
            t.lines().filter(|l| l.contains("cause: because")).count(),
            40
        );
        assert!(!t.contains("more (--findings all)"));
        // A short list is whole without a tail.
        let t = text(3, FindingsShown::Top);
        assert!(t.contains("info    mtu: finding 2 [frame 3]"), "{t}");
        assert!(!t.contains("more"));
        assert!(text(0, FindingsShown::Top).is_empty());
    }
}
