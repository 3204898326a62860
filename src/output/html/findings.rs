//! The findings table at the top of the HTML report (issue 34): every finding, errors first,
//! with its cause, advice and evidence frames.

use super::MAX_ROWS;
use super::table::{HtmlTable, keyed, text};
use crate::analyze::Report;

/// The table (empty when there is no finding).
pub fn table(report: &Report) -> HtmlTable {
    let mut t = HtmlTable::new(
        "findings",
        vec!["severity", "kind", "summary", "cause", "advice", "frames"],
        MAX_ROWS,
        "`read --summary --json` lists them all",
    );
    for x in &report.findings {
        let frames: Vec<String> = x.frames.iter().map(u64::to_string).collect();
        t.row(vec![
            // Sorts errors first, as listed.
            keyed(x.severity.name(), Some(x.severity as u8 as f64)),
            text(x.kind.name()),
            text(x.summary.as_str()),
            text(x.cause.as_str()),
            text(x.advice.as_str()),
            text(frames.join(", ")),
        ]);
    }
    t
}
