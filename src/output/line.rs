//! A reusable line buffer for the per-packet printers.
//!
//! `core::fmt` pads one `write_char` at a time and goes through dynamic dispatch for every
//! piece; on a million packets that was most of the run time. The printers instead append bytes
//! to one `Vec<u8>` that is cleared, never freed, between packets (no allocation per packet once
//! it has grown), format integers with `itoa`, and hand the finished line to the buffered writer
//! in one `write_all`.

use std::fmt;
use std::io::Write as _;

use crate::decode::Address;

/// Bytes buffered before [`Line::spill`] writes them out.
pub const SPILL_AT: usize = 1 << 16;

/// The line being built (and the lines before it, until spilled).
#[derive(Default)]
pub struct Line {
    /// Bytes of the line so far.
    pub buf: Vec<u8>,
    ints: itoa::Buffer,
}

impl Line {
    /// An empty line with room for a typical packet.
    pub fn new() -> Line {
        Line {
            buf: Vec::with_capacity(SPILL_AT + 4096),
            ints: itoa::Buffer::new(),
        }
    }

    /// Write the buffer to `out` and clear it once it holds at least 64 KiB.
    ///
    /// # Errors
    /// `out`'s error.
    #[inline]
    pub fn spill<W: std::io::Write>(&mut self, out: &mut W) -> std::io::Result<()> {
        if self.buf.len() >= SPILL_AT {
            self.drain(out)?;
        }
        Ok(())
    }

    /// Write everything buffered to `out` and clear the buffer.
    ///
    /// # Errors
    /// `out`'s error.
    pub fn drain<W: std::io::Write>(&mut self, out: &mut W) -> std::io::Result<()> {
        let r = out.write_all(&self.buf);
        self.buf.clear();
        r
    }

    /// Current length, to mark the start of an aligned field.
    #[inline]
    pub fn mark(&self) -> usize {
        self.buf.len()
    }

    /// Append a string.
    #[inline(always)]
    pub fn s(&mut self, s: &str) -> &mut Self {
        self.buf.extend_from_slice(s.as_bytes());
        self
    }

    /// Append an unsigned integer in decimal.
    #[inline(always)]
    pub fn u(&mut self, v: u64) -> &mut Self {
        let t = self.ints.format(v);
        self.buf.extend_from_slice(t.as_bytes());
        self
    }

    /// Append `v` in lower-case hex, zero-padded to at least `digits` digits, no prefix.
    pub fn hex(&mut self, v: u64, digits: usize) -> &mut Self {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut tmp = [0u8; 16];
        let mut n = 0;
        let mut x = v;
        loop {
            tmp[15 - n] = HEX[(x & 0xf) as usize];
            n += 1;
            x >>= 4;
            if x == 0 {
                break;
            }
        }
        for _ in n..digits.min(16) {
            self.buf.push(b'0');
        }
        self.buf.extend_from_slice(&tmp[16 - n..]);
        self
    }

    /// Append an address: IPv4 without the formatter (the hot case), others through `Display`.
    pub fn addr(&mut self, a: &Address) -> &mut Self {
        match a {
            Address::V4(o) => {
                let mut text = [0; 15];
                let text = crate::decode::dotted_quad(*o, &mut text);
                self.buf.extend_from_slice(text.as_bytes());
                self
            }
            other => self.fmt(format_args!("{other}")),
        }
    }

    /// Append formatted text (for rare, non-hot fields).
    pub fn fmt(&mut self, args: fmt::Arguments<'_>) -> &mut Self {
        // Writing to a Vec cannot fail.
        let _ = self.buf.write_fmt(args);
        self
    }

    /// Right-align what was written since `start` in a field of `width` bytes (ASCII content).
    pub fn right_align(&mut self, start: usize, width: usize) -> &mut Self {
        let len = self.buf.len() - start;
        if len < width {
            let pad = width - len;
            self.buf
                .splice(start..start, std::iter::repeat_n(b' ', pad));
        }
        self
    }

    /// Pad with spaces so that what was written since `start` fills `width` bytes.
    pub fn left_align(&mut self, start: usize, width: usize) -> &mut Self {
        let len = self.buf.len() - start;
        for _ in len..width {
            self.buf.push(b' ');
        }
        self
    }

    /// Append a JSON string literal, escaping `"`, `\` and control characters (RFC 8259 §7).
    pub fn json_str(&mut self, s: &str) -> &mut Self {
        self.buf.push(b'"');
        for c in s.chars() {
            match c {
                '"' => self.s("\\\""),
                '\\' => self.s("\\\\"),
                '\n' => self.s("\\n"),
                c if (c as u32) < 0x20 => self.fmt(format_args!("\\u{:04x}", c as u32)),
                c => {
                    let mut b = [0u8; 4];
                    self.s(c.encode_utf8(&mut b))
                }
            };
        }
        self.buf.push(b'"');
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces() {
        let mut l = Line::new();
        let m = l.mark();
        l.u(42).right_align(m, 5).s("|");
        l.hex(0x11, 6).s("|").hex(0, 1).s("|");
        l.addr(&Address::V4([10, 1, 16, 62]));
        l.s("|").json_str("a\"b\\c\u{1}");
        assert_eq!(
            std::str::from_utf8(&l.buf).unwrap(),
            "   42|000011|0|10.1.16.62|\"a\\\"b\\\\c\\u0001\""
        );
    }
}
