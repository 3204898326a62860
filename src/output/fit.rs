//! Report tables (of `read`'s reports and `correlate`'s): their style and cells, and fitting
//! them to the terminal (issue 14): on a terminal narrower than a table, the least important
//! columns are hidden (the caller says which, and that `--wide` shows them all) and
//! comfy-table's dynamic arrangement wraps what is left; piped to a file, tables keep their
//! full width.

use std::io::{self, Write};

use comfy_table::{
    Cell, CellAlignment, Color, ColumnConstraint, ContentArrangement, Table, Width, presets,
};

/// An empty report table: UTF-8 borders, no wrapping, colour only when `color`.
pub fn table(color: bool) -> Table {
    let mut t = Table::new();
    t.load_style(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled);
    if color {
        t.enforce_styling();
    } else {
        t.force_no_tty();
    }
    t
}

/// A right-aligned cell (numbers).
pub fn right(s: impl ToString) -> Cell {
    Cell::new(s.to_string()).set_alignment(CellAlignment::Right)
}

/// A count, right-aligned, red when `bad`, the value non-zero and `color`.
pub fn num(v: u64, bad: bool, color: bool) -> Cell {
    let c = right(v);
    if bad && v > 0 && color {
        c.fg(Color::Red)
    } else {
        c
    }
}

/// The width of the terminal standard output is printed on, or `None` when it is not a
/// terminal (a pipe or a file: full width).
pub fn terminal_width() -> Option<u16> {
    let mut t = Table::new();
    t.set_content_arrangement(ContentArrangement::Dynamic);
    t.width().filter(|&w| w > 0)
}

/// Printed width of a rendered table: its longest line in characters, ANSI colour sequences
/// not counted.
pub fn rendered_width(s: &str) -> usize {
    s.lines()
        .map(|l| {
            let mut n = 0;
            let mut esc = false;
            for c in l.chars() {
                match (esc, c) {
                    (false, '\u{1b}') => esc = true,
                    (true, 'm') => esc = false,
                    (true, _) => {}
                    (false, _) => n += 1,
                }
            }
            n
        })
        .max()
        .unwrap_or(0)
}

/// A table of `header` and `rows` that fits `width` columns: columns named in `drop_order` are
/// hidden, first ones first, until the table fits (or none is left to hide), then the rest is
/// wrapped by comfy-table. `make` returns an empty, styled table. Returns the table and the
/// hidden columns' names. With `width` `None`, every column is kept and nothing wraps.
pub fn fit_table(
    make: impl Fn() -> Table,
    header: &[&'static str],
    rows: &[Vec<Cell>],
    drop_order: &[&'static str],
    width: Option<u16>,
) -> (Table, Vec<&'static str>) {
    let build = |hidden: &[&str]| {
        let keep: Vec<usize> = (0..header.len())
            .filter(|&i| !hidden.contains(&header[i]))
            .collect();
        let mut t = make();
        t.set_header(keep.iter().map(|&i| header[i]).collect::<Vec<_>>());
        for r in rows {
            t.add_row(
                keep.iter()
                    .filter_map(|&i| r.get(i).cloned())
                    .collect::<Vec<_>>(),
            );
        }
        t
    };
    let Some(w) = width else {
        return (build(&[]), Vec::new());
    };
    let mut hidden: Vec<&'static str> = Vec::new();
    let mut t = build(&hidden);
    for &col in drop_order {
        if rendered_width(&t.to_string()) <= usize::from(w) {
            break;
        }
        hidden.push(col);
        t = build(&hidden);
    }
    t.set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(w);
    (t, hidden)
}

/// Rows rendered at a time by [`write_table`] when the table is not fitted to a terminal.
const CHUNK_ROWS: usize = 1024;

/// Write the table of `header` and `n` rows (`row(i)` makes row `i`) to `out`, fitted to `width`
/// as [`fit_table`] does; returns the hidden columns' names. Without `width`, a table of more
/// than [`CHUNK_ROWS`] rows (a flow table under QPN spraying: 16 384 rows) is rendered a chunk
/// of rows at a time, every column at its width over all rows: the lines are those of the
/// whole table, but neither its cells nor comfy-table's rendering of them are held at once
/// (about 9 kB per row of the flow table).
///
/// # Errors
/// The writer's.
pub fn write_table(
    out: &mut dyn Write,
    make: impl Fn() -> Table,
    header: &[&'static str],
    n: usize,
    row: impl Fn(usize) -> Vec<Cell>,
    drop_order: &[&'static str],
    width: Option<u16>,
) -> io::Result<Vec<&'static str>> {
    if width.is_some() || n <= CHUNK_ROWS {
        let rows: Vec<Vec<Cell>> = (0..n).map(row).collect();
        let (t, hidden) = fit_table(make, header, &rows, drop_order, width);
        writeln!(out, "{t}")?;
        return Ok(hidden);
    }
    let chunk = |from: usize, widths: Option<&[u16]>| {
        let mut t = make();
        t.set_header(header.to_vec());
        for i in from..(from + CHUNK_ROWS).min(n) {
            t.add_row(row(i));
        }
        if let Some(w) = widths {
            // The column's content width over all rows, and its padding.
            let cols: Vec<ColumnConstraint> = t
                .column_iter()
                .zip(w)
                .map(|(c, &w)| ColumnConstraint::Absolute(Width::Fixed(w + c.padding_width())))
                .collect();
            t.set_constraints(cols);
        }
        t
    };
    let mut widths = vec![0u16; header.len()];
    for from in (0..n).step_by(CHUNK_ROWS) {
        let w = chunk(from, None).column_max_content_widths();
        for (m, w) in widths.iter_mut().zip(w) {
            *m = (*m).max(w);
        }
    }
    // The whole table's lines: top border, header and its rule, the rows, bottom border. Each
    // chunk renders all of them; its top three lines are the same as the first chunk's.
    for from in (0..n).step_by(CHUNK_ROWS) {
        let text = chunk(from, Some(&widths)).to_string();
        let lines: Vec<&str> = text.lines().collect();
        let first = if from == 0 { 0 } else { 3 };
        let last = if from + CHUNK_ROWS >= n {
            lines.len()
        } else {
            lines.len() - 1
        };
        for l in &lines[first.min(last)..last] {
            writeln!(out, "{l}")?;
        }
    }
    Ok(Vec::new())
}

/// The note printed under a table whose columns `hidden` were left out, wrapped at `width`
/// characters, or `None`.
pub fn hidden_note(hidden: &[&str], width: Option<u16>) -> Option<String> {
    (!hidden.is_empty()).then(|| {
        let text = format!(
            "(hidden to fit the terminal: {}; --wide shows all columns)",
            hidden.join(", ")
        );
        wrap(&text, width.map_or(usize::MAX, usize::from))
    })
}

/// Break `text` at spaces into lines of at most `width` characters (longer words stay whole).
fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = 0;
    for w in text.split(' ') {
        let n = w.chars().count();
        if line > 0 && line + 1 + n > width {
            out.push('\n');
            line = 0;
        } else if line > 0 {
            out.push(' ');
            line += 1;
        }
        out.push_str(w);
        line += n;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use comfy_table::presets;

    fn make() -> Table {
        let mut t = Table::new();
        t.load_style(presets::UTF8_FULL_CONDENSED).force_no_tty();
        t
    }

    #[test]
    fn a_long_table_written_in_chunks_is_the_whole_table() {
        let header = ["flow", "label", "n"];
        // Widths that peak in different chunks, a multi-byte character, right alignment.
        let row = |i: usize| {
            vec![
                Cell::new(i),
                Cell::new(format!("10.0.0.{} → {}", i % 7, "x".repeat(i % 1500 / 100))),
                Cell::new(i * i % 9973).set_alignment(comfy_table::CellAlignment::Right),
            ]
        };
        for n in [1, 1024, 1025, 3000] {
            let rows: Vec<Vec<Cell>> = (0..n).map(row).collect();
            let (whole, _) = fit_table(make, &header, &rows, &[], None);
            let mut out = Vec::new();
            let hidden = write_table(&mut out, make, &header, n, row, &[], None).unwrap();
            assert!(hidden.is_empty());
            assert_eq!(
                String::from_utf8(out).unwrap(),
                format!("{whole}\n"),
                "{n} rows"
            );
        }
    }

    #[test]
    fn hides_in_order_until_it_fits_and_wraps_the_rest() {
        let header = ["name", "a", "b", "c", "d"];
        let rows = vec![
            vec![
                Cell::new("a fairly long flow label 10.0.0.1 → 10.0.0.2"),
                Cell::new(1234567),
                Cell::new(2345678),
                Cell::new(3456789),
                Cell::new(4567890),
            ];
            3
        ];
        let (full, hidden) = fit_table(make, &header, &rows, &["d", "c", "b"], None);
        assert!(hidden.is_empty());
        let full_w = rendered_width(&full.to_string());
        assert!(full_w > 80, "{full_w}");
        let (t, hidden) = fit_table(make, &header, &rows, &["d", "c", "b"], Some(70));
        assert_eq!(hidden, vec!["d", "c"]);
        assert!(rendered_width(&t.to_string()) <= 70, "{t}");
        let (t, hidden) = fit_table(make, &header, &rows, &["d", "c", "b"], Some(40));
        assert_eq!(hidden, vec!["d", "c", "b"]);
        assert!(rendered_width(&t.to_string()) <= 40, "{t}");
        assert!(t.to_string().contains("1234567"), "kept columns stay: {t}");
        assert_eq!(
            hidden_note(&hidden, None).as_deref(),
            Some("(hidden to fit the terminal: d, c, b; --wide shows all columns)")
        );
        let note = hidden_note(&hidden, Some(30)).expect("note");
        assert!(note.lines().all(|l| l.chars().count() <= 30), "{note}");
        assert_eq!(note.split_whitespace().count(), 12, "no word lost");
        assert_eq!(rendered_width("\u{1b}[31mred\u{1b}[0m"), 3);
    }
}
