//! Text reports fitted to a terminal (issue 39): the lines between the tables (the frame totals,
//! a connection's ACK RTT line, a problem named in a sentence) are broken at spaces to the
//! terminal's width, as the tables are fitted to it by [`fit`](super::fit); a table's own lines
//! pass unchanged. Piped to a file, nothing is wrapped.

use std::io::{self, Write};

use unicode_width::UnicodeWidthChar;

/// The characters a table's lines start with (comfy-table's `UTF8_FULL_CONDENSED` borders).
const TABLE_EDGES: [char; 5] = ['┌', '│', '╞', '├', '└'];

/// Continuation lines of a wrapped line are indented this much more than its first line.
const INDENT: usize = 2;

/// A writer that breaks each line longer than `width` terminal columns at spaces (a word longer
/// than the width stays whole) before passing it on; [`Wrapped::finish`] writes a last line
/// without a newline.
pub struct Wrapped<'a> {
    out: &'a mut dyn Write,
    width: usize,
    line: Vec<u8>,
}

impl<'a> Wrapped<'a> {
    /// Lines written through it are at most `width` columns wide.
    pub fn new(out: &'a mut dyn Write, width: u16) -> Wrapped<'a> {
        Wrapped {
            out,
            width: usize::from(width.max(20)),
            line: Vec::new(),
        }
    }

    /// Write what is left of the last line.
    ///
    /// # Errors
    /// The writer's.
    pub fn finish(mut self) -> io::Result<()> {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.emit(&line, false)?;
        }
        self.out.flush()
    }

    /// Write one line (without its newline), wrapped.
    fn emit(&mut self, line: &[u8], newline: bool) -> io::Result<()> {
        let text = String::from_utf8_lossy(line);
        let end: &[u8] = if newline { b"\n" } else { b"" };
        if text.starts_with(TABLE_EDGES) || shown_width(&text) <= self.width {
            self.out.write_all(line)?;
            return self.out.write_all(end);
        }
        let wrapped = wrap_line(&text, self.width);
        self.out.write_all(wrapped.as_bytes())?;
        self.out.write_all(end)
    }
}

impl Write for Wrapped<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut rest = buf;
        while let Some(i) = rest.iter().position(|&b| b == b'\n') {
            if self.line.is_empty() {
                self.emit(&rest[..i], true)?;
            } else {
                self.line.extend_from_slice(&rest[..i]);
                let line = std::mem::take(&mut self.line);
                self.emit(&line, true)?;
            }
            rest = &rest[i + 1..];
        }
        self.line.extend_from_slice(rest);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// Run `f` on `out`, through a [`Wrapped`] writer when a terminal `width` is known.
///
/// # Errors
/// `f`'s and the writer's.
pub fn fitted(
    out: &mut dyn Write,
    width: Option<u16>,
    f: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    match width {
        None => f(out),
        Some(w) => {
            let mut wrapped = Wrapped::new(out, w);
            f(&mut wrapped)?;
            wrapped.finish()
        }
    }
}

/// Printed width of `s` in terminal columns, ANSI colour sequences not counted.
fn shown_width(s: &str) -> usize {
    let mut n = 0;
    let mut esc = false;
    for c in s.chars() {
        match (esc, c) {
            (false, '\u{1b}') => esc = true,
            (true, 'm') => esc = false,
            (true, _) => {}
            (false, c) => n += c.width().unwrap_or(0),
        }
    }
    n
}

/// `line` broken at spaces into lines of at most `width` columns; continuation lines take the
/// line's own indentation plus [`INDENT`].
fn wrap_line(line: &str, width: usize) -> String {
    let lead = line.len() - line.trim_start_matches(' ').len();
    let indent = " ".repeat((lead + INDENT).min(width / 2));
    let mut out = String::with_capacity(line.len() + 16);
    out.push_str(&line[..lead]);
    let mut col = lead;
    let mut first = true;
    for word in line[lead..].split(' ').filter(|w| !w.is_empty()) {
        let n = shown_width(word);
        if !first && col + 1 + n > width {
            out.push('\n');
            out.push_str(&indent);
            col = indent.len();
        } else if !first {
            out.push(' ');
            col += 1;
        }
        out.push_str(word);
        col += n;
        first = false;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn through(width: u16, text: &str) -> String {
        let mut out = Vec::new();
        fitted(&mut out, Some(width), |w| w.write_all(text.as_bytes())).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn long_lines_break_at_spaces_tables_pass() {
        let text = "conn 0 10.0.0.1 QP 0x000a31 ⇄ 10.0.0.3 QP 0x000c31: ACK RTT min 450 ns\n\
                    │ a ┆ b │ a table line is never broken even when it is longer │\nshort\nlast";
        let got = through(30, text);
        assert_eq!(
            got,
            "conn 0 10.0.0.1 QP 0x000a31 ⇄\n  10.0.0.3 QP 0x000c31: ACK\n  RTT min 450 ns\n\
             │ a ┆ b │ a table line is never broken even when it is longer │\nshort\nlast"
        );
    }

    #[test]
    fn colour_is_not_counted_and_long_words_stay_whole() {
        let red = "\x1b[38;5;9mproblem:\x1b[39m";
        let got = through(20, &format!("{red} abcdefghijklmnopqrstuvwxyz end\n"));
        assert_eq!(got, format!("{red}\n  abcdefghijklmnopqrstuvwxyz\n  end\n"));
        // Written in pieces, lines are still whole.
        let mut out = Vec::new();
        let mut w = Wrapped::new(&mut out, 20);
        for piece in ["one two three ", "four five six seven", "\nx"] {
            w.write_all(piece.as_bytes()).unwrap();
        }
        w.finish().unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "one two three four\n  five six seven\nx"
        );
        assert_eq!(through(80, "no change\n"), "no change\n");
    }
}
