//! The column widths of a report table fitted to a terminal, and its cells broken into lines
//! (issue 40, item 5: one table renderer). This is comfy-table 8.0's dynamic arrangement
//! (`ContentArrangement::Dynamic`) for the tables [`super::fit`] draws — one space of padding
//! each side of a cell, a border around and between the columns, each column bounded below by
//! its widest word plus its padding — written after comfy-table 8.0.1's
//! `src/utils/arrangement/{dynamic,constraint}.rs` and
//! `src/utils/formatting/content_split/{mod,normal}.rs`, so that the report draws, byte for
//! byte, what it drew with comfy-table (`fit`'s tests compare the two on random tables).
//!
//! Widths here are terminal columns (Unicode width, as unicode-width measures a string); a
//! column's *content width* leaves out its padding (2).

use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// Columns of padding in a cell: one space each side.
pub(super) const PADDING: usize = 2;

/// A line of a cell broken where it is wider than this many columns is left with at least
/// this many free columns before a word is moved to the next line (comfy-table's
/// `MIN_FREE_CHARS`).
const MIN_FREE: usize = 2;

/// One column to arrange: the texts of its cells (the header's first; a row without the cell
/// left out) and its lower bound, content plus padding.
pub(super) struct Column<'a> {
    /// The cells' texts; a text's lines are split at `\n`.
    pub texts: Vec<&'a str>,
    /// The fewest columns the column takes, padding included.
    pub min: usize,
}

impl Column<'_> {
    /// The width of the column's widest line, at least 1 (at most `u16::MAX`, as comfy-table
    /// keeps widths).
    pub(super) fn max_content(&self) -> usize {
        self.texts
            .iter()
            .flat_map(|t| t.split('\n'))
            .map(UnicodeWidthStr::width)
            .max()
            .unwrap_or(0)
            .clamp(1, usize::from(u16::MAX))
    }

    /// The widest line of the column once every line wider than `avail` is broken to it.
    fn longest_line_after_split(&self, avail: usize) -> usize {
        let mut longest = 0;
        for line in self.texts.iter().flat_map(|t| t.split('\n')) {
            if line.width() > avail {
                for part in split_line(line, avail.max(1)) {
                    longest = longest.max(part.width());
                }
            } else {
                longest = longest.max(line.width());
            }
        }
        longest
    }
}

/// The arrangement in progress: the columns whose content width is decided, and the width left
/// for the others (their padding already taken off).
struct State {
    widths: Vec<Option<usize>>,
    remaining_width: usize,
    remaining_columns: usize,
}

impl State {
    fn average(&self) -> usize {
        self.remaining_width
            .checked_div(self.remaining_columns)
            .unwrap_or(0)
    }

    /// Decide column `i`'s content width; whether columns are left to decide.
    fn fix(&mut self, i: usize, width: usize) -> bool {
        self.widths[i] = Some(width.max(1));
        self.remaining_width = self.remaining_width.saturating_sub(width);
        self.remaining_columns -= 1;
        self.remaining_columns > 0
    }
}

/// The content width of each of `columns` in a table `table_width` columns wide. The table
/// may come out wider, when the columns' lower bounds do not fit.
pub(super) fn content_widths(columns: &[Column], table_width: usize) -> Vec<usize> {
    let max: Vec<usize> = columns.iter().map(Column::max_content).collect();
    // A column whose widest line is no wider than its lower bound takes the bound.
    let widths: Vec<Option<usize>> = columns
        .iter()
        .zip(&max)
        .map(|(c, &m)| (m + PADDING <= c.min).then(|| c.min.saturating_sub(PADDING).max(1)))
        .collect();
    let borders = columns.len() + 1;
    let mut remaining_width = table_width.saturating_sub(borders);
    for w in &widths {
        remaining_width = remaining_width.saturating_sub(w.unwrap_or(0) + PADDING);
    }
    let mut s = State {
        remaining_columns: widths.iter().filter(|w| w.is_none()).count(),
        widths,
        remaining_width,
    };
    if s.remaining_columns > 0 {
        lower_bounds(&mut s, columns);
    }
    fit_into_average(&mut s, &max);
    if s.remaining_columns > 0 {
        optimize_after_split(&mut s, columns);
    }
    if s.remaining_columns > 0 {
        s.remaining_width = s.remaining_width.max(s.remaining_columns);
        let (n, width) = (s.remaining_columns, s.remaining_width);
        for (k, w) in s.widths.iter_mut().filter(|w| w.is_none()).enumerate() {
            // Even shares, the first ones a column wider when it does not divide.
            *w = Some((width / n + usize::from(k < width % n)).max(1));
        }
    }
    s.widths.into_iter().map(|w| w.unwrap_or(1)).collect()
}

/// Columns whose lower bound is more than the average width left take their bound.
fn lower_bounds(s: &mut State, columns: &[Column]) {
    let mut again = true;
    while again {
        again = false;
        for (i, c) in columns.iter().enumerate() {
            if s.widths[i].is_some() || s.average() >= c.min {
                continue;
            }
            if !s.fix(i, c.min.saturating_sub(PADDING).max(1)) {
                break;
            }
            again = true;
        }
    }
}

/// Columns whose widest line fits in the average width left take their widest line.
fn fit_into_average(s: &mut State, max: &[usize]) {
    let mut again = true;
    while again {
        again = false;
        if s.remaining_columns == 0 || s.average() == 0 {
            break;
        }
        for (i, &m) in max.iter().enumerate() {
            if s.widths[i].is_some() || m > s.average() {
                continue;
            }
            if !s.fix(i, m) {
                break;
            }
            again = true;
        }
    }
}

/// Columns whose lines, broken to the average width left, leave 3 or more columns of it free
/// take their longest broken line.
fn optimize_after_split(s: &mut State, columns: &[Column]) {
    let mut again = true;
    while again {
        again = false;
        for (i, c) in columns.iter().enumerate() {
            if s.widths[i].is_some() {
                continue;
            }
            let avail = s.average();
            let longest = c.longest_line_after_split(avail);
            if avail.saturating_sub(longest) >= 3 {
                if !s.fix(i, longest.min(usize::from(u16::MAX))) {
                    break;
                }
                again = true;
            }
        }
    }
}

/// `line` broken at spaces into lines of at most `width` columns; a word wider than a line is
/// cut (between grapheme clusters), and a line is ended early rather than left with 2 columns
/// or fewer free.
pub(super) fn split_line(line: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut words: Vec<String> = line.split(' ').rev().map(str::to_string).collect();
    let mut current = String::new();
    let mut length = 0;
    while let Some(next) = words.pop() {
        let next_length = next.width();
        let sep = usize::from(!current.is_empty());
        let added = next_length + length + sep;
        let remaining = width.saturating_sub(length).saturating_sub(sep);
        if added <= width {
            if sep == 1 {
                current.push(' ');
                length += 1;
            }
            current.push_str(&next);
            length += next_length;
            (current, length) = end_if_full(&mut lines, width, current, length);
            continue;
        }
        if !current.is_empty() && remaining <= MIN_FREE {
            words.push(next);
            lines.push(std::mem::take(&mut current));
            length = 0;
            continue;
        }
        if next_length > width {
            let new_line = current.is_empty();
            if !new_line {
                current.push(' ');
            }
            let (head, tail) = split_long_word(remaining, &next);
            if new_line && head.is_empty() {
                let mut chars = tail.chars();
                current.extend(chars.next());
                words.push(chars.collect());
            } else {
                current.push_str(head);
                words.push(tail.to_string());
            }
            lines.push(std::mem::take(&mut current));
            length = 0;
            continue;
        }
        lines.push(std::mem::replace(&mut current, next));
        length = next_length;
        (current, length) = end_if_full(&mut lines, width, current, length);
    }
    if !current.is_empty() {
        lines.push(current);
    }
    lines
}

/// A line with 2 columns or fewer free is ended.
fn end_if_full(
    lines: &mut Vec<String>,
    width: usize,
    line: String,
    length: usize,
) -> (String, usize) {
    if length > width.saturating_sub(MIN_FREE) {
        lines.push(line);
        (String::new(), 0)
    } else {
        (line, length)
    }
}

/// `word` cut after at most `width` columns: printable ASCII by bytes, otherwise between
/// grapheme clusters.
fn split_long_word(width: usize, word: &str) -> (&str, &str) {
    if word.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return word.split_at(word.len().min(width));
    }
    let mut used = 0;
    let mut at = word.len();
    for (i, g) in word.grapheme_indices(true) {
        let w = g.width();
        if used + w > width {
            at = i;
            break;
        }
        used += w;
    }
    word.split_at(at)
}
