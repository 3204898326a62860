//! Sortable HTML tables: a header row, data rows capped at a maximum with a note, and a sort
//! key per cell (`data-v`) so numbers sort as numbers.

use std::fmt::Write as _;

/// Escape text for HTML element content and double-quoted attributes.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            _ => o.push(c),
        }
    }
    o
}

/// One cell: the text shown and, for numbers, the value it sorts by.
#[derive(Clone, Debug)]
pub struct Td {
    text: String,
    key: Option<f64>,
    bad: bool,
}

/// A text cell.
pub fn text(s: impl Into<String>) -> Td {
    Td {
        text: s.into(),
        key: None,
        bad: false,
    }
}

/// A number cell, highlighted when `bad` and non-zero.
pub fn num(v: u64, bad: bool) -> Td {
    Td {
        text: v.to_string(),
        key: Some(v as f64),
        bad: bad && v > 0,
    }
}

/// A text cell, highlighted when `bad`.
pub fn flagged(s: impl Into<String>, bad: bool) -> Td {
    Td { bad, ..text(s) }
}

/// A cell showing `s` and sorting by `key` (missing values sort first).
pub fn keyed(s: impl Into<String>, key: Option<f64>) -> Td {
    Td {
        text: s.into(),
        key: Some(key.unwrap_or(-1.0)),
        bad: false,
    }
}

/// A table under construction.
pub struct HtmlTable {
    id: String,
    head: Vec<&'static str>,
    rows: Vec<Vec<Td>>,
    total: usize,
    cap: usize,
    more: &'static str,
}

impl HtmlTable {
    /// A table with DOM id `id` showing at most `cap` rows; `more` says where the rest are.
    pub fn new(id: &str, head: Vec<&'static str>, cap: usize, more: &'static str) -> HtmlTable {
        HtmlTable {
            id: id.to_string(),
            head,
            rows: Vec::new(),
            total: 0,
            cap,
            more,
        }
    }

    /// Add a row (counted, kept while under the cap).
    pub fn row(&mut self, cells: Vec<Td>) {
        self.total += 1;
        if self.rows.len() < self.cap {
            self.rows.push(cells);
        }
    }

    /// Rows added.
    pub fn len(&self) -> usize {
        self.total
    }

    /// No rows added.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The table's HTML, followed by a note when rows were left out.
    pub fn render(&self) -> String {
        let mut s = format!(
            "<table class=\"sortable\" id=\"{}\"><thead><tr>",
            esc(&self.id)
        );
        for h in &self.head {
            let _ = write!(s, "<th title=\"click to sort\">{}</th>", esc(h));
        }
        s.push_str("</tr></thead><tbody>\n");
        for r in &self.rows {
            s.push_str("<tr>");
            for c in r {
                s.push_str("<td");
                if let Some(k) = c.key {
                    let _ = write!(
                        s,
                        " class=\"n{}\" data-v=\"{k}\"",
                        if c.bad { " bad" } else { "" }
                    );
                }
                let _ = write!(s, ">{}</td>", esc(&c.text));
            }
            s.push_str("</tr>\n");
        }
        s.push_str("</tbody></table>\n");
        if self.total > self.rows.len() {
            let _ = writeln!(
                s,
                "<p class=\"note\">Showing {} of {} rows; {}.</p>",
                self.rows.len(),
                self.total,
                esc(self.more)
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_caps() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        let mut t = HtmlTable::new("t", vec!["a", "b"], 2, "see --json");
        for k in 0..5 {
            t.row(vec![text(format!("<{k}>")), num(k, true)]);
        }
        let h = t.render();
        assert_eq!(h.matches("<tr>").count(), 3, "header + 2 rows: {h}");
        assert!(h.contains("&lt;0&gt;"));
        assert!(h.contains("Showing 2 of 5 rows; see --json."));
        assert!(h.contains("class=\"n bad\" data-v=\"1\""));
        assert!(h.contains("class=\"n\" data-v=\"0\""));
    }
}
