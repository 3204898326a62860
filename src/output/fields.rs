//! `-T fields -e FIELD …`: one line per packet with the chosen fields of the field registry,
//! as `tshark -T fields` prints them, with tshark's `-E` options (`separator=`, `header=y`,
//! `quote=d|s|n`, `aggregator=`, `occurrence=f|l|a|N`).
//!
//! Values are printed as tshark 4.0 prints the corresponding Wireshark field: numbers in
//! decimal, except the fields tshark shows in hex, which are `0x` and zero-padded to the
//! field's width: `bth.dest_qp` (`infiniband.bth.destqp`, 6 digits), `reth.va` and
//! `atomic_eth.va` (`infiniband.reth.va`, 16), `reth.rkey` and `atomic_eth.rkey`
//! (`infiniband.reth.r_key`, 8), `deth.qkey` (`infiniband.deth.q_key`, FT_UINT64: 16),
//! `deth.src_qp` (`infiniband.deth.srcqp`, 8). Fields without a tshark counterpart shown in hex
//! follow the same rule: `ieth.rkey`, `imm`, `icrc.value`, `icrc.expected` (8 digits; the ICRC
//! is the CRC-32 value, byte-swapped from tshark's `infiniband.invariant.crc`, see README
//! "JSON output"). Booleans print as `1` / `0` (tshark's FT_BOOLEAN in `-T fields`), addresses
//! and strings as in `--json` (without quotes), a header's presence as `1`; an absent field is
//! empty. Field values checked against tshark's in tests/display_filter.rs.

use std::io::{self, Write};

use super::line::Line;
use super::{FrameCtx, Printer};
use crate::analyze::marks::Marks;
use crate::decode::Frame;
use crate::filter::fields::{FIELDS, Pkt, Value, lookup};

/// Hex digits of the fields printed in hex (see the module documentation).
const HEX: &[(&str, usize)] = &[
    ("bth.dest_qp", 6),
    ("reth.va", 16),
    ("reth.rkey", 8),
    ("atomic_eth.va", 16),
    ("atomic_eth.rkey", 8),
    ("deth.qkey", 16),
    ("deth.src_qp", 8),
    ("ieth.rkey", 8),
    ("imm", 8),
    ("icrc.value", 8),
    ("icrc.expected", 8),
];

/// Which occurrences of a field are printed (tshark `-E occurrence=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Occurrence {
    /// Every one (`a`, the default), joined by the aggregator.
    All,
    /// The first (`f`).
    First,
    /// The last (`l`).
    Last,
    /// The n-th, from 1.
    Nth(usize),
}

/// The `-T fields` layout: fields and `-E` options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldsFormat {
    /// Field indices in the registry, in `-e` order.
    pub fields: Vec<usize>,
    /// Between fields (`separator=`; default a tab; `/t`, `/s` as tshark).
    pub separator: String,
    /// Between the occurrences of one field (`aggregator=`; default `,`).
    pub aggregator: String,
    /// Quote around each value (`quote=d` `"`, `s` `'`, `n` none, the default).
    pub quote: Option<char>,
    /// Print the field names as a first line (`header=y`).
    pub header: bool,
    /// Which occurrences are printed.
    pub occurrence: Occurrence,
}

impl FieldsFormat {
    /// The format for the `-e` names and `-E` options given.
    ///
    /// # Errors
    /// An unknown field or option, a bad option value, or no field at all.
    pub fn new(names: &[String], options: &[String]) -> Result<FieldsFormat, String> {
        if names.is_empty() {
            return Err("-T fields needs at least one -e FIELD".into());
        }
        let fields = names
            .iter()
            .map(|n| {
                lookup(n).ok_or_else(|| format!("-e {n}: not a field (--list-fields lists them)"))
            })
            .collect::<Result<_, _>>()?;
        let mut f = FieldsFormat {
            fields,
            separator: "\t".into(),
            aggregator: ",".into(),
            quote: None,
            header: false,
            occurrence: Occurrence::All,
        };
        for o in options {
            f.option(o)?;
        }
        Ok(f)
    }

    fn option(&mut self, o: &str) -> Result<(), String> {
        let bad = || {
            format!(
                "-E {o}: not a -T fields option (separator=, aggregator=, quote=d|s|n, header=y|n, occurrence=f|l|a|N)"
            )
        };
        let (k, v) = o.split_once('=').ok_or_else(bad)?;
        let text = |v: &str| match v {
            "/t" => "\t".to_string(),
            "/s" => " ".to_string(),
            v => v.to_string(),
        };
        match (k, v) {
            ("separator", v) => self.separator = text(v),
            ("aggregator", v) => self.aggregator = text(v),
            ("quote", "d") => self.quote = Some('"'),
            ("quote", "s") => self.quote = Some('\''),
            ("quote", "n") => self.quote = None,
            ("header", "y") => self.header = true,
            ("header", "n") => self.header = false,
            ("occurrence", "f") => self.occurrence = Occurrence::First,
            ("occurrence", "l") => self.occurrence = Occurrence::Last,
            ("occurrence", "a") => self.occurrence = Occurrence::All,
            ("occurrence", n) => {
                self.occurrence = match n.parse::<usize>() {
                    Ok(n) if n > 0 => Occurrence::Nth(n),
                    _ => return Err(bad()),
                }
            }
            _ => return Err(bad()),
        }
        Ok(())
    }

    fn quoted(&self, l: &mut Line, text: &str) {
        match self.quote {
            Some(q) => {
                let mut b = [0; 4];
                let q = q.encode_utf8(&mut b);
                l.s(q).s(text).s(q);
            }
            None => {
                l.s(text);
            }
        }
    }

    /// Append the header line (the field names, never quoted, as tshark writes it).
    pub fn write_header(&self, l: &mut Line) {
        for (i, id) in self.fields.iter().enumerate() {
            if i > 0 {
                l.s(&self.separator);
            }
            l.s(FIELDS[*id].name);
        }
        l.s("\n");
    }

    /// Append the line of packet `p`.
    pub fn write_packet(&self, l: &mut Line, p: &Pkt<'_, '_>) {
        for (i, id) in self.fields.iter().enumerate() {
            if i > 0 {
                l.s(&self.separator);
            }
            let f = &FIELDS[*id];
            let all = f.values(p);
            let chosen: Vec<&Value> = match self.occurrence {
                Occurrence::All => all.iter().collect(),
                Occurrence::First => all.first().into_iter().collect(),
                Occurrence::Last => all.last().into_iter().collect(),
                Occurrence::Nth(n) => all.get(n - 1).into_iter().collect(),
            };
            let hex = HEX.iter().find(|(n, _)| *n == f.name).map(|(_, w)| *w);
            let texts: Vec<String> = chosen.iter().map(|v| text(v, hex)).collect();
            if !texts.is_empty() {
                self.quoted(l, &texts.join(&self.aggregator));
            }
        }
        l.s("\n");
    }
}

/// A value as `-T fields` prints it; `hex` digits for a field printed in hex.
pub fn text(v: &Value, hex: Option<usize>) -> String {
    match (v, hex) {
        (Value::Uint(u), Some(w)) => format!("0x{u:0w$x}"),
        (Value::Uint(u), None) => u.to_string(),
        (Value::Bool(b), _) => u8::from(*b).to_string(),
        (Value::Str(s), _) => (*s).to_string(),
        (Value::Text(s), _) => s.clone(),
        (Value::Addr(a), _) => a.to_string(),
        (Value::Float(f), _) => f.to_string(),
        (Value::Present, _) => "1".into(),
        // Never passed on by `Field::any`: an absent field prints as nothing.
        (Value::Null, _) => String::new(),
    }
}

/// The `-T fields` printer.
pub struct FieldsPrinter<W: Write> {
    out: W,
    line: Line,
    format: FieldsFormat,
}

impl<W: Write> FieldsPrinter<W> {
    /// A printer of `format` writing to `out`; the header line first when `header` (and the
    /// format asks for one).
    pub fn new(out: W, format: FieldsFormat, header: bool) -> Self {
        let mut line = Line::new();
        if header && format.header {
            format.write_header(&mut line);
        }
        FieldsPrinter { out, line, format }
    }

    fn packet(&mut self, ctx: &FrameCtx, frame: &Frame<'_>, marks: Option<&Marks>) {
        let p = Pkt { ctx, frame, marks };
        self.format.write_packet(&mut self.line, &p);
    }
}

impl<W: Write> Printer for FieldsPrinter<W> {
    fn frame(&mut self, ctx: &FrameCtx, frame: &Frame<'_>) -> io::Result<()> {
        self.packet(ctx, frame, None);
        self.line.spill(&mut self.out)
    }

    fn frame_marked(&mut self, ctx: &FrameCtx, frame: &Frame<'_>, marks: &Marks) -> io::Result<()> {
        self.packet(ctx, frame, Some(marks));
        self.line.spill(&mut self.out)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.line.drain(&mut self.out)?;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_as_tshark() {
        let f = FieldsFormat::new(
            &["frame".into(), "bth.psn".into()],
            &[
                "separator=,".into(),
                "quote=d".into(),
                "header=y".into(),
                "occurrence=2".into(),
            ],
        )
        .unwrap();
        assert_eq!(f.separator, ",");
        assert_eq!(f.quote, Some('"'));
        assert!(f.header);
        assert_eq!(f.occurrence, Occurrence::Nth(2));
        let mut l = Line::new();
        f.write_header(&mut l);
        assert_eq!(l.buf, b"frame,bth.psn\n");
        assert!(FieldsFormat::new(&["bth.nope".into()], &[]).is_err());
        assert!(FieldsFormat::new(&[], &[]).is_err());
        assert!(FieldsFormat::new(&["frame".into()], &["quote=x".into()]).is_err());
        let t = FieldsFormat::new(&["frame".into()], &["separator=/s".into()]).unwrap();
        assert_eq!(t.separator, " ");
    }

    #[test]
    fn values_as_tshark_prints_them() {
        // infiniband.bth.destqp 0x000b12, reth.r_key 0x00123abc, reth.va 0x00007f5ca0000000
        // as tshark 4.0 prints them for samples/write_bw.pcap.
        assert_eq!(text(&Value::Uint(0xb12), Some(6)), "0x000b12");
        assert_eq!(text(&Value::Uint(0x123abc), Some(8)), "0x00123abc");
        assert_eq!(
            text(&Value::Uint(0x7f5c_a000_0000), Some(16)),
            "0x00007f5ca0000000"
        );
        assert_eq!(text(&Value::Uint(3841811), None), "3841811");
        assert_eq!(text(&Value::Bool(true), None), "1");
    }
}
