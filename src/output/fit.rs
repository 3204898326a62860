//! Report tables (of `read`'s reports, `correlate`'s and `generate`'s): their cells, style and
//! rendering, and fitting them to the terminal (issue 14). This is the one table renderer
//! (issue 40): the tables are drawn in comfy-table's `UTF8_FULL_CONDENSED` style, the bytes
//! comfy-table wrote when it drew them, and comfy-table stays only as the unit tests' oracle.
//!
//! Piped to a file (no terminal width), a table is drawn line by line — a flow table of 16 384
//! rows or a message table of 500 000 rows without holding its cells at once, and without
//! comfy-table's per-cell layout work, which was half of `read -q`'s time on a capture of
//! 7 832 flows (issue 16). On a terminal narrower than a table, the least important columns
//! are hidden (the caller says which, and that `--wide` shows them all) and what is left is
//! arranged and wrapped as comfy-table's dynamic arrangement did (`output::arrange`).

use std::fmt;
use std::io::{self, Write};

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use super::arrange::{self, PADDING};
use super::cell::{ANSI_RESET, Tint, text_width};
pub use super::cell::{Cell, CellText, num, right};

/// The width of the terminal standard output is printed on, or `None` when it is not a
/// terminal (a pipe or a file: full width).
pub fn terminal_width() -> Option<u16> {
    use std::io::IsTerminal;
    if !io::stdout().is_terminal() {
        return None;
    }
    crossterm::terminal::size()
        .ok()
        .map(|(w, _)| w)
        .filter(|&w| w > 0)
}

/// Printed width of a rendered table: its longest line in terminal columns (Unicode width: a
/// CJK character takes two), ANSI colour sequences not counted.
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
                    (false, c) => n += c.width().unwrap_or(0),
                }
            }
            n
        })
        .max()
        .unwrap_or(0)
}

/// The columns of `header` and `rows` to draw (indices) and their content widths, fitted to
/// `width` columns: columns named in `drop_order` are hidden, first ones first, until the table
/// fits at full width (or none is left to hide), then the rest are arranged as comfy-table's
/// dynamic arrangement does ([`arrange`]), none narrower than its widest word: a PSN, an
/// address or a size cut in two reads as two values, so when even the words do not fit, the
/// table is wider than the terminal. Also the hidden columns' names. With `width` `None`,
/// every column is kept as wide as its widest line.
fn fit_table(
    header: &[&str],
    rows: &[Vec<Cell>],
    drop_order: &[&'static str],
    width: Option<u16>,
) -> (Vec<usize>, Vec<usize>, Vec<&'static str>) {
    let columns = |hidden: &[&str]| -> Vec<usize> {
        (0..header.len())
            .filter(|&i| !hidden.contains(&header[i]))
            .collect()
    };
    let texts = |i: usize| -> Vec<&str> {
        std::iter::once(header[i])
            .chain(
                rows.iter()
                    .filter_map(|r| r.get(i))
                    .map(|c| c.text.as_str()),
            )
            .collect()
    };
    let max_widths = |keep: &[usize]| -> Vec<usize> {
        keep.iter()
            .map(|&i| {
                arrange::Column {
                    texts: texts(i),
                    min: 0,
                }
                .max_content()
            })
            .collect()
    };
    let Some(w) = width else {
        let keep = columns(&[]);
        let widths = max_widths(&keep);
        return (keep, widths, Vec::new());
    };
    let mut hidden: Vec<&'static str> = Vec::new();
    for &col in drop_order {
        let full = unwrapped_width(header, rows, &hidden).unwrap_or_else(|| {
            let keep = columns(&hidden);
            let mut out = Vec::new();
            let _ = draw(&mut out, false, header, rows, &keep, &max_widths(&keep));
            rendered_width(&String::from_utf8_lossy(&out))
        });
        if full <= usize::from(w) {
            break;
        }
        hidden.push(col);
    }
    let keep = columns(&hidden);
    let word = |s: &str| s.split_whitespace().map(text_width).max().unwrap_or(0);
    let arranged: Vec<arrange::Column> = keep
        .iter()
        .map(|&i| {
            let texts = texts(i);
            let widest = texts.iter().map(|t| word(t)).max().unwrap_or(0);
            let widest = u16::try_from(widest).unwrap_or(u16::MAX);
            let min = usize::from(widest.saturating_add(PADDING as u16));
            arrange::Column { texts, min }
        })
        .collect();
    let widths = arrange::content_widths(&arranged, usize::from(w));
    (keep, widths, hidden)
}

/// Draw the table of `header` and `rows`, its columns `keep` with content widths `widths`, as
/// comfy-table draws it in `UTF8_FULL_CONDENSED`: a cell's lines (its text split at `\n`, a line
/// wider than its column broken at spaces, [`arrange::split_line`]) one under the other, a row
/// as tall as its tallest cell, each line ended by `\n`.
fn draw(
    out: &mut dyn Write,
    color: bool,
    header: &[&str],
    rows: &[Vec<Cell>],
    keep: &[usize],
    widths: &[usize],
) -> io::Result<()> {
    let mut plain = Plain {
        out,
        widths,
        color,
        line: String::new(),
    };
    plain.rule(['┌', '─', '┬', '┐'])?;
    let head: Vec<Cell> = keep.iter().map(|&i| Cell::new(header[i])).collect();
    plain.wrapped(&head.iter().map(Some).collect::<Vec<_>>())?;
    plain.rule(['╞', '═', '╪', '╡'])?;
    let mut cells = Vec::with_capacity(keep.len());
    for r in rows {
        cells.clear();
        cells.extend(keep.iter().map(|&i| r.get(i)));
        plain.wrapped(&cells)?;
    }
    plain.rule(['└', '─', '┴', '┘'])
}

/// The width in terminal columns of the table of `header` and `rows` without its columns named
/// in `hidden`, drawn at full width (nothing wrapped): each column as wide as its widest line
/// (at least 1) plus a space each side, and a border between and around the columns — what
/// [`rendered_width`] reads off the drawing, measured from the cells instead of
/// drawing the table once per column hidden. `None` when a text's drawn width may not be its
/// measured one (a control character or an escape sequence, or characters that unicode-width
/// measures as a sequence, as an emoji with a variation selector): then it is drawn.
fn unwrapped_width(header: &[&str], rows: &[Vec<Cell>], hidden: &[&str]) -> Option<usize> {
    if header.iter().all(|h| hidden.contains(h)) {
        return None;
    }
    let mut total = 1;
    for (i, h) in header.iter().enumerate() {
        if hidden.contains(h) {
            continue;
        }
        let mut widest = lines_width(h)?;
        for r in rows {
            if let Some(c) = r.get(i) {
                widest = widest.max(lines_width(&c.text)?);
            }
        }
        total += widest.max(1) + 3;
    }
    Some(total)
}

/// The printed width of the widest line of `s`, or `None` when it may differ from its drawn
/// width ([`unwrapped_width`]).
fn lines_width(s: &str) -> Option<usize> {
    let mut widest = 0;
    for line in s.split('\n') {
        let w = if line.is_ascii() {
            if line.bytes().any(|b| b.is_ascii_control()) {
                return None;
            }
            line.len()
        } else {
            let mut chars = 0;
            for c in line.chars() {
                chars += c.width()?;
            }
            if chars != line.width() {
                return None;
            }
            chars
        };
        widest = widest.max(w);
    }
    Some(widest)
}

/// Write the table of `header` and `n` rows (`row(i)` makes row `i`) to `out`, with colour when
/// `color`. Fitted to a terminal `width` wide, columns named in `drop_order` are hidden first
/// ones first until the table fits, the rest wraps (`fit_table`), and a note under the table
/// names them ([`hidden_note`]); returns the hidden columns' names. A table still wider than
/// the terminal (its words do not fit) is stacked instead, every column shown
/// ([`write_stacked`](super::stack::write_stacked)). Without `width`, the table is drawn at full width by `Plain`: `row` is called once
/// per row and the cells kept compactly (a table of up to `CACHE_BYTES`, 1 MiB), or twice per row
/// (once for the column widths, once to draw it) so that no more than one row is held.
///
/// # Errors
/// The writer's.
pub fn write_table<R: AsRef<[Cell]>>(
    out: &mut dyn Write,
    color: bool,
    header: &[&str],
    n: usize,
    row: impl Fn(usize) -> R,
    drop_order: &[&'static str],
    width: Option<u16>,
) -> io::Result<Vec<&'static str>> {
    let fitted = |out: &mut dyn Write| {
        let rows: Vec<Vec<Cell>> = (0..n).map(|i| row(i).as_ref().to_vec()).collect();
        let (keep, widths, hidden) = fit_table(header, &rows, drop_order, width);
        let mut text = Vec::new();
        draw(&mut text, color, header, &rows, &keep, &widths)?;
        let text = String::from_utf8_lossy(&text);
        if let Some(w) = width.filter(|&w| rendered_width(&text) > usize::from(w)) {
            super::stack::write_stacked(out, color, header, &rows, w)?;
            return Ok(Vec::new());
        }
        out.write_all(text.as_bytes())?;
        if let Some(note) = hidden_note(&hidden, width) {
            writeln!(out, "{note}")?;
        }
        Ok(hidden)
    };
    if width.is_some() {
        return fitted(out);
    }
    write_plain(out, color, header, n, &row, CACHE_BYTES, fitted)
}

/// [`write_table`] at full width, keeping the cells measured when the table is likely to take
/// no more than `cache_bytes`; `fitted` draws a table [`Plain`] cannot (a cell of two lines).
fn write_plain<R: AsRef<[Cell]>>(
    out: &mut dyn Write,
    color: bool,
    header: &[&str],
    n: usize,
    row: impl Fn(usize) -> R,
    cache_bytes: usize,
    fitted: impl FnOnce(&mut dyn Write) -> io::Result<Vec<&'static str>>,
) -> io::Result<Vec<&'static str>> {
    // comfy-table's widths: at least 1, the widest line of the header and of each cell.
    let mut widths: Vec<usize> = header.iter().map(|h| text_width(h).max(1)).collect();
    // The cells measured, kept for drawing when the table is likely to fit in [`CACHE_BYTES`]
    // (and while it does); otherwise the rows are made again.
    let mut cache = (n.saturating_mul(header.len() * CELL_BYTES + ROW_TEXT_BYTES) <= cache_bytes)
        .then(Cells::default);
    // The printed widths of the row's cells, measured once for the column widths and the cache.
    let mut row_widths: Vec<usize> = Vec::with_capacity(header.len());
    for i in 0..n {
        let r = row(i);
        debug_assert_eq!(r.as_ref().len(), header.len(), "row {i} of a table");
        row_widths.clear();
        for (w, c) in widths.iter_mut().zip(r.as_ref()) {
            if c.text.contains(['\n', '\r']) {
                // A cell of several lines (a file name, say): drawn by [`draw`].
                return fitted(out);
            }
            let cw = c.width();
            row_widths.push(cw);
            *w = (*w).max(cw);
        }
        if let Some(k) = &mut cache {
            k.push(r.as_ref(), &row_widths, header.len());
            if k.bytes() > cache_bytes {
                cache = None;
            }
        }
    }
    let mut plain = Plain {
        out,
        widths: &widths,
        color,
        line: String::new(),
    };
    plain.rule(['┌', '─', '┬', '┐'])?;
    plain.cells(header.iter().map(|h| (*h, text_width(h), false, None)))?;
    plain.rule(['╞', '═', '╪', '╡'])?;
    match &cache {
        Some(k) => {
            for r in k.rows(header.len()) {
                plain.cells(r)?;
            }
        }
        None => {
            for i in 0..n {
                let r = row(i);
                plain.cells(
                    r.as_ref()
                        .iter()
                        .map(|c| (c.text.as_str(), c.width(), c.right, c.fg)),
                )?;
            }
        }
    }
    plain.rule(['└', '─', '┴', '┘'])?;
    Ok(Vec::new())
}

/// Most bytes of cells [`write_table`] keeps between measuring and drawing (a flow table of
/// about 3,600 flows); a longer table is formatted twice instead, so that the report of a
/// capture with many flows adds nothing to the peak memory (issue 38's bound: with 4 MiB, the
/// 7,832-flow mixed trace's table was kept, 2.8 MiB over the run's peak).
const CACHE_BYTES: usize = 1 << 20;

/// Bytes a kept cell takes besides its text.
const CELL_BYTES: usize = std::mem::size_of::<Kept>();

/// A kept cell: where its text ends in [`Cells::text`], its printed width (terminal columns,
/// measured once; [`WIDTH_UNKNOWN`] for one too wide to keep, measured again when drawn), its
/// alignment (right) and colour: 8 bytes, as before widths were kept (with 12, the cell list of
/// a 7,832-flow table would have taken 3 MiB).
type Kept = (u32, u16, bool, Option<Tint>);

/// The width kept for a cell of 65,535 columns or more.
const WIDTH_UNKNOWN: u16 = u16::MAX;

/// Bytes of text a row is expected to keep, for deciding whether a table is kept.
const ROW_TEXT_BYTES: usize = 128;

/// The cells of a table's rows, compactly: their texts one after the other, and where each
/// ends with its width, alignment and colour.
#[derive(Default)]
struct Cells {
    text: String,
    cells: Vec<Kept>,
}

impl Cells {
    /// Keep one row as `columns` cells (missing ones empty, extra ones left out, as drawn).
    /// `widths` are the cells' printed widths.
    fn push(&mut self, row: &[Cell], widths: &[usize], columns: usize) {
        for (c, &w) in row.iter().zip(widths).take(columns) {
            self.text.push_str(&c.text);
            let w = u16::try_from(w)
                .ok()
                .filter(|&w| w < WIDTH_UNKNOWN)
                .unwrap_or(WIDTH_UNKNOWN);
            self.cells.push((self.end(), w, c.right, c.fg));
        }
        for _ in row.len()..columns {
            self.cells.push((self.end(), 0, false, None));
        }
    }

    /// Where the text ends (below [`CACHE_BYTES`], which fits in 32 bits).
    fn end(&self) -> u32 {
        u32::try_from(self.text.len()).unwrap_or(u32::MAX)
    }

    /// Bytes held.
    fn bytes(&self) -> usize {
        self.text.capacity() + self.cells.capacity() * CELL_BYTES
    }

    /// The rows of `columns` cells each: (text, width, right-aligned, colour).
    fn rows(
        &self,
        columns: usize,
    ) -> impl Iterator<Item = impl Iterator<Item = (&str, usize, bool, Option<Tint>)>> {
        self.cells
            .chunks(columns.max(1))
            .enumerate()
            .map(move |(i, row)| {
                let mut start = match i * columns {
                    0 => 0,
                    k => self.cells[k - 1].0 as usize,
                };
                row.iter().map(move |&(end, width, right, fg)| {
                    let end = end as usize;
                    let text = &self.text[start..end];
                    start = end;
                    let width = match width {
                        WIDTH_UNKNOWN => text_width(text),
                        w => usize::from(w),
                    };
                    (text, width, right, fg)
                })
            })
    }
}

/// Draws a table line by line in comfy-table's `UTF8_FULL_CONDENSED` style: `┌─┬─┐` above,
/// `│ a ┆ b │` rows with one space of padding each side, `╞═╪═╡` under the header, `└─┴─┘`
/// below; a coloured cell is wrapped, padding included, in the ANSI sequences comfy-table
/// (through crossterm) writes.
struct Plain<'a> {
    out: &'a mut dyn Write,
    /// Content width of each column, in terminal columns.
    widths: &'a [usize],
    color: bool,
    /// The line being drawn.
    line: String,
}

impl Plain<'_> {
    /// A border line: left corner, fill, column junction, right corner.
    fn rule(&mut self, [left, fill, junction, end]: [char; 4]) -> io::Result<()> {
        self.line.clear();
        self.line.push(left);
        for (i, &w) in self.widths.iter().enumerate() {
            if i > 0 {
                self.line.push(junction);
            }
            self.line.extend(std::iter::repeat_n(fill, w + 2));
        }
        self.line.push(end);
        self.flush()
    }

    /// A row of cells (text, its printed width, right-aligned, colour); missing cells are
    /// drawn empty.
    fn cells<'c>(
        &mut self,
        cells: impl Iterator<Item = (&'c str, usize, bool, Option<Tint>)>,
    ) -> io::Result<()> {
        self.line.clear();
        self.line.push('│');
        let mut cells = cells;
        for (i, &w) in self.widths.iter().enumerate() {
            if i > 0 {
                self.line.push('┆');
            }
            let (text, width, right, fg) = cells.next().unwrap_or(("", 0, false, None));
            let pad = w.saturating_sub(width);
            let (before, after) = if right { (pad, 0) } else { (0, pad) };
            let code = fg.filter(|_| self.color).map(Tint::ansi);
            if let Some(code) = code {
                self.line.push_str(code);
            }
            push_spaces(&mut self.line, before + 1);
            self.line.push_str(text);
            push_spaces(&mut self.line, after + 1);
            if code.is_some() {
                self.line.push_str(ANSI_RESET);
            }
        }
        self.line.push('│');
        self.flush()
    }

    /// A row of cells, missing ones (`None`) drawn empty, each cell's lines one under the
    /// other ([`draw`]); a line that ends before the row's last is filled with spaces, not
    /// coloured.
    fn wrapped(&mut self, cells: &[Option<&Cell>]) -> io::Result<()> {
        let lines: Vec<Vec<String>> = cells
            .iter()
            .zip(self.widths)
            .map(|(c, &w)| match c {
                // A missing cell: one empty line.
                None => vec![String::new()],
                Some(c) => c
                    .text
                    .split('\n')
                    .flat_map(|l| {
                        if l.width() > w {
                            arrange::split_line(l, w)
                        } else {
                            vec![l.to_string()]
                        }
                    })
                    .collect(),
            })
            .collect();
        let height = lines.iter().map(Vec::len).max().unwrap_or(0);
        for k in 0..height {
            self.line.clear();
            self.line.push('│');
            for (i, (&w, c)) in self.widths.iter().zip(cells).enumerate() {
                if i > 0 {
                    self.line.push('┆');
                }
                match (c, lines[i].get(k)) {
                    (Some(c), Some(text)) => {
                        let pad = w.saturating_sub(text.width());
                        let (before, after) = if c.right { (pad, 0) } else { (0, pad) };
                        let code = c.fg.filter(|_| self.color).map(Tint::ansi);
                        if let Some(code) = code {
                            self.line.push_str(code);
                        }
                        push_spaces(&mut self.line, before + 1);
                        self.line.push_str(text);
                        push_spaces(&mut self.line, after + 1);
                        if code.is_some() {
                            self.line.push_str(ANSI_RESET);
                        }
                    }
                    _ => push_spaces(&mut self.line, w + PADDING),
                }
            }
            self.line.push('│');
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.line.push('\n');
        self.out.write_all(self.line.as_bytes())
    }
}

/// Append `n` spaces to `line`, a slice at a time (not a character at a time: padding was a
/// tenth of the report's instructions on the 500k-frame mixed trace, 7,832 flows: with the
/// widths kept too, 392.7M -> 354.3M, callgrind).
fn push_spaces(line: &mut String, n: usize) {
    const SPACES: &str = "                                                                ";
    let mut left = n;
    while left > 0 {
        let k = left.min(SPACES.len());
        line.push_str(&SPACES[..k]);
        left -= k;
    }
}

/// A report table filled row by row, for tables that are small or built from several sources
/// (the loss and congestion tables, `correlate`'s): written by [`write_table`], shown at full
/// width by its `Display`.
pub struct Grid {
    color: bool,
    header: Vec<String>,
    rows: Vec<Vec<Cell>>,
    drop_order: &'static [&'static str],
}

impl Grid {
    /// An empty table with `header`, in colour when `color`.
    pub fn new(color: bool, header: &[&str]) -> Grid {
        Grid {
            color,
            header: header.iter().map(|h| (*h).to_string()).collect(),
            rows: Vec::new(),
            drop_order: &[],
        }
    }

    /// The same table, whose columns named in `order` are hidden, first ones first, when it is
    /// wider than the terminal ([`write_table`]'s `drop_order`).
    #[must_use]
    pub fn hiding(mut self, order: &'static [&'static str]) -> Grid {
        self.drop_order = order;
        self
    }

    /// Add a row.
    pub fn add_row(&mut self, row: Vec<Cell>) {
        self.rows.push(row);
    }

    /// Whether the table has no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Write the table fitted to a terminal `width` wide (the columns given to [`Grid::hiding`]
    /// hidden as needed, with a note naming them, then wrapped or stacked), or at full width.
    ///
    /// # Errors
    /// The writer's.
    pub fn write(&self, out: &mut dyn Write, width: Option<u16>) -> io::Result<()> {
        let header: Vec<&str> = self.header.iter().map(String::as_str).collect();
        let n = self.rows.len();
        let order = self.drop_order;
        write_table(out, self.color, &header, n, |i| &self.rows[i], order, width).map(|_| ())
    }
}

impl fmt::Display for Grid {
    /// The table at full width, without a newline after its last line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = Vec::new();
        self.write(&mut out, None).map_err(|_| fmt::Error)?;
        let text = String::from_utf8_lossy(&out);
        f.write_str(text.strip_suffix('\n').unwrap_or(&text))
    }
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

    use comfy_table::{ColumnConstraint, ContentArrangement, Table, Width, presets};

    /// An empty comfy-table table in the report style: UTF-8 borders, no wrapping, colour only
    /// when `color`.
    fn table(color: bool) -> Table {
        let mut t = Table::new();
        t.load_style(presets::UTF8_FULL_CONDENSED)
            .set_content_arrangement(ContentArrangement::Disabled);
        if color {
            // crossterm, which writes comfy-table's colours, leaves them out under NO_COLOR; the
            // caller has decided (`--color always` overrides NO_COLOR).
            crossterm::style::Colored::set_ansi_color_disabled(false);
            t.enforce_styling();
        } else {
            t.force_no_tty();
        }
        t
    }

    /// A comfy-table table of `header` and `rows` that fits `width` columns: columns named in
    /// `drop_order` are hidden, first ones first, until the table fits (or none is left to hide),
    /// then the rest is wrapped by comfy-table. Returns the table and the hidden columns' names.
    /// With `width` `None`, every column is kept and nothing wraps.
    fn comfy_fit_table(
        color: bool,
        header: &[&str],
        rows: &[Vec<Cell>],
        drop_order: &[&'static str],
        width: Option<u16>,
    ) -> (Table, Vec<&'static str>) {
        let build = |hidden: &[&str]| {
            let keep: Vec<usize> = (0..header.len())
                .filter(|&i| !hidden.contains(&header[i]))
                .collect();
            let mut t = table(color);
            t.set_header(keep.iter().map(|&i| header[i]).collect::<Vec<_>>());
            for r in rows {
                t.add_row(
                    keep.iter()
                        .filter_map(|&i| r.get(i).map(Cell::comfy))
                        .collect::<Vec<_>>(),
                );
            }
            t
        };
        let Some(w) = width else {
            return (build(&[]), Vec::new());
        };
        let mut hidden: Vec<&'static str> = Vec::new();
        for &col in drop_order {
            let full = unwrapped_width(header, rows, &hidden)
                .unwrap_or_else(|| rendered_width(&build(&hidden).to_string()));
            if full <= usize::from(w) {
                break;
            }
            hidden.push(col);
        }
        let mut t = build(&hidden);
        t.set_content_arrangement(ContentArrangement::Dynamic)
            .set_width(w);
        // A column may wrap between words, never inside one: a PSN, an address or a size cut in
        // two reads as two numbers. When even the words do not fit, the table is wider than the
        // terminal (which wraps its lines) rather than wrong.
        let keep = (0..header.len()).filter(|&i| !hidden.contains(&header[i]));
        for (k, i) in keep.enumerate() {
            let word = |s: &str| s.split_whitespace().map(text_width).max().unwrap_or(0);
            let widest = rows
                .iter()
                .filter_map(|r| r.get(i))
                .map(|c| word(&c.text))
                .fold(word(header[i]), usize::max);
            if let Some(col) = t.column_mut(k) {
                // comfy-table's fixed widths include the cell's padding.
                let w = u16::try_from(widest).unwrap_or(u16::MAX);
                let w = w.saturating_add(col.padding_width());
                col.set_constraint(ColumnConstraint::LowerBoundary(Width::Fixed(w)));
            }
        }
        (t, hidden)
    }

    /// The table fitted to `width` and drawn ([`fit_table`], [`draw`]), and the hidden columns.
    fn fitted(
        header: &[&str],
        rows: &[Vec<Cell>],
        order: &[&'static str],
        width: Option<u16>,
    ) -> (String, Vec<&'static str>) {
        let (keep, widths, hidden) = fit_table(header, rows, order, width);
        let mut out = Vec::new();
        draw(&mut out, false, header, rows, &keep, &widths).unwrap();
        (String::from_utf8(out).unwrap(), hidden)
    }

    /// What `write_table` wrote on a terminal when comfy-table arranged and drew it (before
    /// issue 40): the oracle of the fitted tables.
    fn comfy_fitted(
        color: bool,
        header: &[&str],
        rows: &[Vec<Cell>],
        order: &[&'static str],
        width: u16,
    ) -> String {
        let (t, hidden) = comfy_fit_table(color, header, rows, order, Some(width));
        let text = t.to_string();
        let mut out = Vec::new();
        if rendered_width(&text) > usize::from(width) {
            super::super::stack::write_stacked(&mut out, color, header, rows, width).unwrap();
        } else {
            writeln!(out, "{text}").unwrap();
            if let Some(note) = hidden_note(&hidden, Some(width)) {
                writeln!(out, "{note}").unwrap();
            }
        }
        String::from_utf8(out).unwrap()
    }

    /// Fitted to terminals 10 to 140 columns wide, random tables (words of every kind, long
    /// ones, several spaces, two lines, wide characters, colours, rows shorter than the header,
    /// columns to hide) are written byte for byte as comfy-table's dynamic arrangement wrote
    /// them.
    #[test]
    fn fits_the_bytes_comfy_table_fitted() {
        let words = [
            "",
            "0",
            "7",
            "123456789",
            "10.0.0.1 → 10.0.0.2",
            "450 ns",
            "5.7 µs / 4.5 µs",
            "24 / 98.3 kB ✗ 3",
            "ok, re-issued 2× (frame 9)",
            "流量 東京 e\u{301}",
            "x y  z   w",
            "two\nlines of text",
            "a-very-long-word-without-spaces-at-all-0123456789",
            "fe80::0202:c9ff:fe00:0001 → fe80::0202:c9ff:fe00:0002 (session 1023), 2nd",
            "hidden to fit the terminal: ECT1, Not-ECT, FECN, ECT0, CNP flow, CNP gap",
        ];
        let heads = [
            "flow",
            "src → dst",
            "CE %",
            "a",
            "ACK RTT p50",
            "µ",
            "",
            "rate before/after (Gb/s)",
        ];
        let mut seed: u64 = 0x005e_ed0f_f177_ab1e;
        let mut next = |m: usize| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) as usize % m
        };
        let (mut hid, mut stacked, mut wrapped) = (0, 0, 0);
        for case in 0..600 {
            let cols = 1 + next(8);
            let header: Vec<&str> = (0..cols).map(|_| heads[next(heads.len())]).collect();
            let rows: Vec<Vec<Cell>> = (0..next(12))
                .map(|_| {
                    let n = if next(8) == 0 { next(cols + 1) } else { cols };
                    (0..n)
                        .map(|_| {
                            let c = if next(2) == 0 {
                                Cell::new(words[next(words.len())])
                            } else {
                                right(words[next(words.len())])
                            };
                            match next(4) {
                                0 => c.red(),
                                1 => c.yellow(),
                                _ => c,
                            }
                        })
                        .collect()
                })
                .collect();
            let order: Vec<&'static str> = heads.iter().copied().filter(|_| next(2) == 0).collect();
            let width = 10 + next(131) as u16;
            let color = case % 2 == 1;
            let expected = comfy_fitted(color, &header, &rows, &order, width);
            hid += usize::from(expected.contains("hidden to fit"));
            stacked += usize::from(!expected.starts_with('┌'));
            // More lines than rows, header, three rules (and a note): a cell wrapped.
            let note = expected
                .lines()
                .filter(|l| !l.starts_with(['┌', '│', '╞', '└']))
                .count();
            wrapped += usize::from(expected.lines().count() - note > rows.len() + 4);
            let mut out = Vec::new();
            let n = rows.len();
            write_table(
                &mut out,
                color,
                &header,
                n,
                |i| &rows[i],
                &order,
                Some(width),
            )
            .unwrap();
            assert_eq!(
                String::from_utf8(out).unwrap(),
                expected,
                "case {case}, {width} columns"
            );
        }
        assert!(
            hid > 50 && stacked > 50 && wrapped > 50,
            "{hid} {stacked} {wrapped}"
        );
    }

    /// comfy-table's rendering of the table, as the oracle of [`write_table`]'s own.
    fn comfy(color: bool, header: &[&str], rows: &[Vec<Cell>]) -> String {
        format!("{}\n", comfy_fit_table(color, header, rows, &[], None).0)
    }

    fn ours(color: bool, header: &[&str], rows: &[Vec<Cell>]) -> String {
        let mut out = Vec::new();
        let n = rows.len();
        let hidden = write_table(&mut out, color, header, n, |i| &rows[i], &[], None).unwrap();
        assert!(hidden.is_empty());
        String::from_utf8(out).unwrap()
    }

    /// [`write_table`] drawing with `cache_bytes` for its kept cells (0: none kept, each row
    /// made twice), and how many times it made a row.
    fn ours_keeping(
        color: bool,
        header: &[&str],
        rows: &[Vec<Cell>],
        cache_bytes: usize,
    ) -> (String, usize) {
        let mut out = Vec::new();
        let comfy = |out: &mut dyn Write| {
            write!(out, "{}", comfy(color, header, rows)).map(|()| Vec::new())
        };
        let made = std::cell::Cell::new(0);
        let row = |i: usize| {
            made.set(made.get() + 1);
            &rows[i]
        };
        write_plain(&mut out, color, header, rows.len(), row, cache_bytes, comfy).unwrap();
        (String::from_utf8(out).unwrap(), made.get())
    }

    #[test]
    fn draws_the_bytes_comfy_table_draws() {
        // Random tables (a fixed-seed LCG): 1–6 columns, 0–40 rows, empty, multi-byte and
        // wide texts, empty headers, both alignments, red and yellow cells, colour on and off
        // (under NO_COLOR too: `table` tells crossterm to colour), now and then a cell of two
        // lines.
        let words = [
            "",
            "0",
            "-",
            "7",
            "123456789",
            "10.0.0.1 → 10.0.0.2",
            "450 ns",
            "5.7 µs",
            "24 / 98.3 kB ✗ 3",
            "unpaired",
            "ok, re-issued 2× (frame 9)",
            "流量",
            "x y  z",
            // Wider than the spaces the padding is written from at a time (64).
            "fe80::0202:c9ff:fe00:0001 → fe80::0202:c9ff:fe00:0002 (session 1023), 2nd",
        ];
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |m: usize| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) as usize % m
        };
        let heads = ["flow", "src → dst", "CE %", "a", "ACK RTT p50", "µ", ""];
        for case in 0..300 {
            let cols = 1 + next(6);
            let header: Vec<&str> = (0..cols).map(|_| heads[next(heads.len())]).collect();
            let mut rows: Vec<Vec<Cell>> = (0..next(41))
                .map(|_| {
                    (0..cols)
                        .map(|_| {
                            let c = if next(2) == 0 {
                                Cell::new(words[next(words.len())])
                            } else {
                                right(words[next(words.len())])
                            };
                            match next(4) {
                                0 => c.red(),
                                1 => c.yellow(),
                                _ => c,
                            }
                        })
                        .collect()
                })
                .collect();
            if case % 10 == 0 && !rows.is_empty() {
                // A cell of two lines (drawn by comfy-table itself).
                let r = next(rows.len());
                rows[r][next(cols)] = Cell::new("two\nlines");
            }
            let color = case % 2 == 1;
            let expected = comfy(color, &header, &rows);
            assert_eq!(ours(color, &header, &rows), expected, "case {case}");
            // Every row kept, and none (each made twice).
            for budget in [0, usize::MAX] {
                let (text, _) = ours_keeping(color, &header, &rows, budget);
                assert_eq!(text, expected, "case {case}, {budget} bytes kept");
            }
        }
    }

    /// The width measured from the cells is the width of comfy-table's full-width drawing (or
    /// unknown, and then drawn), on random tables with random columns hidden: texts of two lines,
    /// wide and combining characters, a tab, an escape sequence, an emoji with a variation
    /// selector.
    #[test]
    fn the_measured_width_is_the_drawn_width() {
        let words = [
            "",
            "7",
            "10.0.0.1 → 10.0.0.2",
            "5.7 µs",
            "流量",
            "e\u{301}",
            "two\nlines, the second longer",
            "a\tb",
            "\u{1b}[31mred\u{1b}[0m",
            "\u{2764}\u{fe0f}",
            "fe80::0202:c9ff:fe00:0001 → fe80::0202:c9ff:fe00:0002",
        ];
        let heads = ["flow", "src → dst", "CE %", "µ", "x", ""];
        let mut seed: u64 = 0x1234_5678_9abc_def1;
        let mut next = |m: usize| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) as usize % m
        };
        let (mut measured, mut drawn) = (0, 0);
        for case in 0..400 {
            let cols = 1 + next(6);
            let header: Vec<&str> = (0..cols).map(|_| heads[next(heads.len())]).collect();
            let rows: Vec<Vec<Cell>> = (0..next(8))
                .map(|_| {
                    // Now and then a row shorter than the header.
                    let n = cols - next(2);
                    (0..n)
                        .map(|_| right(words[next(words.len())]).red())
                        .collect()
                })
                .collect();
            let hidden: Vec<&str> = header.iter().copied().filter(|_| next(3) == 0).collect();
            let keep: Vec<usize> = (0..cols)
                .filter(|&i| !hidden.contains(&header[i]))
                .collect();
            let mut t = table(case % 2 == 1);
            t.set_header(keep.iter().map(|&i| header[i]).collect::<Vec<_>>());
            for r in &rows {
                t.add_row(
                    keep.iter()
                        .filter_map(|&i| r.get(i).map(Cell::comfy))
                        .collect::<Vec<_>>(),
                );
            }
            match unwrapped_width(&header, &rows, &hidden) {
                Some(w) => {
                    measured += 1;
                    assert_eq!(w, rendered_width(&t.to_string()), "case {case}:\n{t}");
                }
                None => drawn += 1,
            }
        }
        assert!(
            measured > 100 && drawn > 20,
            "{measured} measured, {drawn} drawn"
        );
    }

    /// A kept cell stays 8 bytes (the budget's estimate and the flow table of the 500k-frame
    /// mixed trace, 7,832 flows, kept whole, depend on it), and a cell too wide for its kept
    /// width (65,535 columns or more; comfy-table, whose widths are 16 bits, cannot draw it) is
    /// measured again and drawn as when nothing is kept: every line of the same width.
    #[test]
    fn a_kept_cell_is_eight_bytes_and_a_very_wide_one_is_measured_again() {
        assert_eq!(CELL_BYTES, 8);
        let header = ["a", "b"];
        let rows = vec![
            vec![right(1), Cell::new("é".repeat(70_000))],
            vec![right(22), Cell::new("x")],
        ];
        let (kept, made) = ours_keeping(false, &header, &rows, usize::MAX);
        assert_eq!(made, 2, "kept, not made twice");
        let (again, made) = ours_keeping(false, &header, &rows, 0);
        assert_eq!(made, 4, "made twice");
        assert_eq!(kept, again);
        let widths: Vec<usize> = kept.lines().map(text_width).collect();
        assert_eq!(widths.len(), 6, "{widths:?}");
        // │ 22 ┆ é…é │: three borders, four spaces of padding, 2 + 70,000 columns of text.
        assert!(widths.iter().all(|&w| w == 70_000 + 9), "{widths:?}");
    }

    #[test]
    fn a_table_is_kept_until_its_cells_outgrow_the_budget() {
        // 100 rows of two 200-byte cells: 40 kB of text where 128 bytes a row were expected.
        let header = ["a", "b"];
        let rows: Vec<Vec<Cell>> = (0..100)
            .map(|i| vec![right(i), Cell::new("x".repeat(200))])
            .collect();
        let expected = comfy(false, &header, &rows);
        let estimate = rows.len() * (header.len() * CELL_BYTES + ROW_TEXT_BYTES);
        // Each row made once when kept; twice when not kept, or when dropped part-way (the
        // estimate lets it start, the text outgrows it).
        for (budget, made) in [(usize::MAX, 100), (0, 200), (estimate, 200)] {
            let (text, n) = ours_keeping(false, &header, &rows, budget);
            assert_eq!(text, expected, "{budget} bytes");
            assert_eq!(n, made, "rows made with {budget} bytes");
        }
    }

    #[test]
    fn a_grid_shows_what_write_table_writes() {
        let mut g = Grid::new(false, &["flow", "n"]);
        assert!(g.is_empty());
        g.add_row(vec![right(1), Cell::new("10.0.0.1 → 10.0.0.2")]);
        g.add_row(vec![right(22), num(0, true)]);
        let rows = [
            vec![right(1), Cell::new("10.0.0.1 → 10.0.0.2")],
            vec![right(22), right(0)],
        ];
        assert_eq!(format!("{g}\n"), comfy(false, &["flow", "n"], &rows));
        // Hand-drawn: the style's borders, one space of padding, numbers on the right.
        assert_eq!(
            g.to_string(),
            "┌──────┬─────────────────────┐\n\
             │ flow ┆ n                   │\n\
             ╞══════╪═════════════════════╡\n\
             │    1 ┆ 10.0.0.1 → 10.0.0.2 │\n\
             │   22 ┆                   0 │\n\
             └──────┴─────────────────────┘"
        );
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
        let (full, hidden) = fitted(&header, &rows, &["d", "c", "b"], None);
        assert!(hidden.is_empty());
        let full_w = rendered_width(&full);
        assert!(full_w > 80, "{full_w}");
        let (t, hidden) = fitted(&header, &rows, &["d", "c", "b"], Some(70));
        assert_eq!(hidden, vec!["d", "c"]);
        assert!(rendered_width(&t) <= 70, "{t}");
        let (t, hidden) = fitted(&header, &rows, &["d", "c", "b"], Some(40));
        assert_eq!(hidden, vec!["d", "c", "b"]);
        assert!(rendered_width(&t) <= 40, "{t}");
        assert!(t.contains("1234567"), "kept columns stay: {t}");
        assert_eq!(
            hidden_note(&hidden, None).as_deref(),
            Some("(hidden to fit the terminal: d, c, b; --wide shows all columns)")
        );
        let note = hidden_note(&hidden, Some(30)).expect("note");
        assert!(note.lines().all(|l| l.chars().count() <= 30), "{note}");
        assert_eq!(note.split_whitespace().count(), 12, "no word lost");
        assert_eq!(rendered_width("\u{1b}[31mred\u{1b}[0m"), 3);
        // Two columns per CJK character, none for a combining accent.
        assert_eq!(rendered_width("│東京│\n│e\u{301}│"), 6);
    }

    /// Fitted into fewer columns than its words need, a table wraps between words, never inside
    /// one (a PSN or an address cut in two reads as two values): it is then wider than asked.
    #[test]
    fn words_are_not_cut() {
        let header = ["flow", "expected", "src → dst"];
        let rows = vec![vec![
            right(0u64),
            right(3_841_846u64),
            Cell::new("10.0.0.1 → 10.0.0.2"),
        ]];
        let (text, _) = fitted(&header, &rows, &[], Some(20));
        for word in ["flow", "expected", "3841846", "10.0.0.1", "10.0.0.2"] {
            assert!(text.contains(word), "{word} cut: {text}");
        }
    }
}
