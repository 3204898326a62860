//! A report table too wide for the terminal even with its least important columns hidden is
//! stacked (issue 39): one block per row, its first cell as the block's heading and every other
//! column on a line of its own, `name  value`, as `psql`'s expanded display (`\x`) shows a row.
//! Values are broken at spaces to the width; nothing is hidden.

use std::io::{self, Write};

use unicode_width::UnicodeWidthStr;

use super::cell::Cell;

/// Columns of the value's indentation under the block's heading.
const INDENT: usize = 2;

/// Write the rows of `header` stacked, each line at most `width` columns (a word longer than
/// the width stays whole), in colour when `color`.
///
/// # Errors
/// The writer's.
pub fn write_stacked(
    out: &mut dyn Write,
    color: bool,
    header: &[&str],
    rows: &[Vec<Cell>],
    width: u16,
) -> io::Result<()> {
    let width = usize::from(width.max(20));
    // The names' column: as wide as the widest name, at most a third of the width.
    let names = header
        .iter()
        .skip(1)
        .map(|h| h.width())
        .max()
        .unwrap_or(0)
        .min(width / 3);
    let value_col = INDENT + names + 2;
    for row in rows {
        let mut cells = header.iter().zip(row);
        if let Some((h, c)) = cells.next() {
            let first = format!("{h} {}", c.text());
            writeln!(out, "{}", c.paint(&wrap(&first, width, INDENT), color))?;
        }
        for (h, c) in cells {
            let mut line = format!("{:INDENT$}{h}", "");
            match value_col.checked_sub(line.width()) {
                Some(pad) if pad >= 2 => line.push_str(&" ".repeat(pad)),
                // A name wider than the names' column: the value goes on the next line.
                _ => {
                    line.push('\n');
                    line.push_str(&" ".repeat(value_col));
                }
            }
            let value = wrap(c.text(), width.saturating_sub(value_col).max(8), value_col);
            writeln!(out, "{line}{}", c.paint(&value, color))?;
        }
    }
    Ok(())
}

/// `text` (its own lines kept) broken at spaces into lines of at most `width` columns, the
/// continuation lines indented by `indent` spaces.
fn wrap(text: &str, width: usize, indent: usize) -> String {
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            out.push('\n');
            out.push_str(&" ".repeat(indent));
        }
        let mut col = 0;
        for (j, word) in line.split(' ').filter(|w| !w.is_empty()).enumerate() {
            let n = word.width();
            if j > 0 && col + 1 + n > width {
                out.push('\n');
                out.push_str(&" ".repeat(indent));
                col = 0;
            } else if j > 0 {
                out.push(' ');
                col += 1;
            }
            out.push_str(word);
            col += n;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::fit::right;

    #[test]
    fn rows_become_blocks_that_fit() {
        let header = ["flow", "src → dst", "CE %", "rate before/after (Gb/s)"];
        let rows = vec![vec![
            right(0),
            Cell::new("fe80::ff:fe00:1 → fe80::ff:fe00:2"),
            right("22.67"),
            right("4.96 / 3.83"),
        ]];
        let mut out = Vec::new();
        write_stacked(&mut out, false, &header, &rows, 32).unwrap();
        let text = String::from_utf8(out).unwrap();
        // Names column: min(widest name 24, 32 / 3) = 10; values start at column 14, 18 wide.
        assert_eq!(
            text,
            "flow 0\n  src → dst   fe80::ff:fe00:1 →\n              fe80::ff:fe00:2\n  \
             CE %        22.67\n  rate before/after (Gb/s)\n              4.96 / 3.83\n"
        );
        assert!(text.lines().all(|l| l.width() <= 32), "{text}");
    }
}
