//! `--json`: one JSON object per packet per line (NDJSON). The schema is documented in README
//! ("JSON output"); names follow Wireshark's `infiniband.*` field names where they exist.
//!
//! The writer walks the field registry (src/filter/fields.rs): every field in its order, each
//! header's fields inside the header's object, so a field added there is in `--json` (and in
//! `-Y`, `-T fields` and `--list-fields`) at once. Lines are emitted directly into a reused
//! [`Line`] buffer rather than through serde: keys are static ASCII, values are integers,
//! booleans and strings we produce ourselves (the few free-text strings go through
//! [`Line::json_str`]): escaping every key dominated `serde_json` with borrowed views
//! (docs/perf.md). The unit tests compare whole lines with bytes written out by hand from the
//! frames' hex and README's schema; tests/display_filter.rs checks every line's key paths and
//! nulls against the registry.

use std::io::{self, Write};

use super::line::Line;
use super::{FrameCtx, Printer};
use crate::analyze::marks::Marks;
use crate::decode::Frame;
use crate::filter::fields::{
    FIELDS, FieldType, Getter, Pkt, TABLE, Value, json_key, key_start, subtree_end,
};

/// The NDJSON printer. `out` needs no buffering: lines collect in the printer's own buffer.
pub struct JsonPrinter<W: Write> {
    out: W,
    line: Line,
}

impl<W: Write> JsonPrinter<W> {
    /// A printer writing to `out` (give it a buffered writer).
    pub fn new(out: W) -> Self {
        JsonPrinter {
            out,
            line: Line::new(),
        }
    }
}

impl<W: Write> Printer for JsonPrinter<W> {
    fn frame(&mut self, ctx: &FrameCtx, frame: &Frame<'_>) -> io::Result<()> {
        write_frame(&mut self.line, ctx, frame);
        self.line.spill(&mut self.out)
    }

    fn frame_marked(&mut self, ctx: &FrameCtx, frame: &Frame<'_>, marks: &Marks) -> io::Result<()> {
        let p = Pkt {
            ctx,
            frame,
            marks: Some(marks),
        };
        write_pkt(&mut self.line, &p);
        self.line.spill(&mut self.out)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.line.drain(&mut self.out)?;
        self.out.flush()
    }
}

/// Append the JSON object for `frame`, newline included.
pub fn write_frame(l: &mut Line, ctx: &FrameCtx, frame: &Frame<'_>) {
    write_pkt(
        l,
        &Pkt {
            ctx,
            frame,
            marks: None,
        },
    );
}

/// Sixteen `step`s, for fields `16 * row` to `16 * row + 15`.
macro_rules! steps {
    ($w:ident, $p:ident, $row:literal) => {
        step::<{ $row * 16 }>(&mut $w, $p);
        step::<{ $row * 16 + 1 }>(&mut $w, $p);
        step::<{ $row * 16 + 2 }>(&mut $w, $p);
        step::<{ $row * 16 + 3 }>(&mut $w, $p);
        step::<{ $row * 16 + 4 }>(&mut $w, $p);
        step::<{ $row * 16 + 5 }>(&mut $w, $p);
        step::<{ $row * 16 + 6 }>(&mut $w, $p);
        step::<{ $row * 16 + 7 }>(&mut $w, $p);
        step::<{ $row * 16 + 8 }>(&mut $w, $p);
        step::<{ $row * 16 + 9 }>(&mut $w, $p);
        step::<{ $row * 16 + 10 }>(&mut $w, $p);
        step::<{ $row * 16 + 11 }>(&mut $w, $p);
        step::<{ $row * 16 + 12 }>(&mut $w, $p);
        step::<{ $row * 16 + 13 }>(&mut $w, $p);
        step::<{ $row * 16 + 14 }>(&mut $w, $p);
        step::<{ $row * 16 + 15 }>(&mut $w, $p);
    };
}

/// The rows of sixteen `step`s named, in order; the build stops when the registry has more
/// fields than the rows cover.
macro_rules! rows {
    ($w:ident, $p:ident; $($row:literal)*) => {
        const _: () = assert!(
            TABLE.len() <= 16 * [$($row),*].len(),
            "more fields in the registry than write_pkt's steps: add a row"
        );
        $(steps!($w, $p, $row);)*
    };
}

/// Append the JSON object for the packet `p` (with its `analysis` object when it has marks),
/// newline included: every field of the registry ([`FIELDS`]) in its order, a header's fields
/// inside the header's object, each key written as [`crate::filter::fields::Field::json_value`]
/// gives it.
///
/// The walk is unrolled: one `step` per field, each reading its field's accessor from the
/// constant table, so the compiler calls (and inlines) the accessor directly. Through function
/// pointers the walk took 2.4× the time of the hand-written writer it replaced (docs/perf.md).
pub fn write_pkt(l: &mut Line, p: &Pkt<'_, '_>) {
    l.s("{");
    let mut w = Walk {
        l,
        first: true,
        open: false,
    };
    rows!(w, p; 0 1 2 3 4 5 6 7 8 9);
    if w.open {
        w.l.s("}");
    }
    w.l.s("}\n");
}

/// Where [`write_pkt`]'s walk is.
struct Walk<'l> {
    l: &'l mut Line,
    /// No key written yet in the object being written.
    first: bool,
    /// A header's object is open (one level: the registry nests no deeper); while it is not,
    /// the fields of the header last walked are skipped (the packet lacks it).
    open: bool,
}

/// Whether field `i` is a header's field (`bth.psn`), at compile time.
const fn in_header(i: usize) -> bool {
    key_start(i) > 0
}

/// Whether field `i` follows a header's run (the header, or its last field): the header's
/// object, if open, closes before it.
const fn after_header(i: usize) -> bool {
    i > 0 && !in_header(i) && (in_header(i - 1) || matches!(TABLE[i - 1].ty, FieldType::Protocol))
}

/// Field `I` of the registry (nothing for `I` past its end).
#[inline(always)]
fn step<const I: usize>(w: &mut Walk<'_>, p: &Pkt<'_, '_>) {
    // The field's index, kept in the table for `I` past its end (never used then).
    const fn at(i: usize) -> usize {
        if i < TABLE.len() { i } else { 0 }
    }
    if I >= TABLE.len() {
        return;
    }
    if const { after_header(at(I)) } && w.open {
        w.l.s("}");
        w.open = false;
        w.first = false;
    }
    if const { in_header(at(I)) } && !w.open {
        return;
    }
    let header = const { matches!(TABLE[at(I)].ty, FieldType::Protocol) };
    match const { TABLE[at(I)].get } {
        Getter::One(g) => {
            // Read in place (a move of the returned value cost a stalled 16-byte copy).
            let got = g(p);
            let Some(v) = &got else {
                return;
            };
            // Both constant: the slice is a constant too.
            let name = const { TABLE[at(I)].name };
            key(w.l, &name[const { key_start(at(I)) }..], &mut w.first);
            if header {
                w.l.s("{");
                w.first = true;
                w.open = true;
            } else {
                value(w.l, v);
            }
        }
        // The tunnel layers' array (rare): not unrolled; its fields are written with it.
        Getter::Many(_) => layers(w.l, p, I, &mut w.first),
    }
}

/// Write `"key":`, after a comma unless it is the object's first.
#[inline(always)]
fn key(l: &mut Line, k: &str, first: &mut bool) {
    if !std::mem::take(first) {
        l.buf.push(b',');
    }
    l.buf.push(b'"');
    l.s(k);
    l.buf.extend_from_slice(b"\":");
}

/// The `encap` array's JSON text, as in a packet's line (the Parquet export's `encap` column);
/// empty when the frame came through no tunnel.
pub fn encap_json(ctx: &FrameCtx, frame: &Frame<'_>) -> String {
    let p = Pkt {
        ctx,
        frame,
        marks: None,
    };
    let mut l = Line::new();
    let mut first = true;
    layers(&mut l, &p, ENCAP, &mut first);
    // `"encap":[…]` → `[…]`.
    let text = String::from_utf8_lossy(&l.buf);
    text.strip_prefix("\"encap\":")
        .unwrap_or_default()
        .to_string()
}

/// The index of `encap` in the registry.
const ENCAP: usize = crate::filter::fields::index("encap");

/// Write header `i`, read per tunnel layer (`encap`), as an array of one object per layer,
/// outermost first, with the header's fields read from that layer; nothing without a layer.
fn layers(l: &mut Line, p: &Pkt<'_, '_>, i: usize, first: &mut bool) {
    let Getter::Many(layer) = FIELDS[i].get else {
        return;
    };
    if layer(p, 0).is_none() {
        return;
    }
    key(l, json_key(i), first);
    l.s("[");
    let mut n = 0;
    while layer(p, n).is_some() {
        l.s(if n == 0 { "{" } else { ",{" });
        let mut first = true;
        let inner = i + 1..subtree_end(i);
        for (c, f) in inner.clone().zip(&FIELDS[inner]) {
            if let Some(v) = &f.json_value(p, n) {
                key(l, json_key(c), &mut first);
                value(l, v);
            }
        }
        l.s("}");
        n += 1;
    }
    l.s("]");
}

/// A value as JSON: our own names unescaped (static ASCII), free text escaped. Inlined into
/// each `step`, where the accessor's variant is known and the match folds away.
#[inline(always)]
fn value(l: &mut Line, v: &Value) {
    match v {
        Value::Uint(u) => {
            l.u(*u);
        }
        Value::Bool(b) => {
            l.s(if *b { "true" } else { "false" });
        }
        Value::Str(s) => {
            l.s("\"").s(s).s("\"");
        }
        Value::Text(t) => {
            l.json_str(t);
        }
        Value::Addr(a) => {
            l.s("\"").addr(a).s("\"");
        }
        Value::Float(x) => {
            l.fmt(format_args!("{x}"));
        }
        Value::Null => {
            l.s("null");
        }
        // Only a header is present without a value, and a header opens an object instead.
        Value::Present => {
            debug_assert!(false, "a field that is not a header read as present");
            l.s("null");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::test_util::hex;
    use crate::decode::{DecodeConfig, LinkType, decode_frame};

    /// The ConnectX-4 Lx CNP of spec/roce.md §4, as a whole Ethernet frame.
    const CNP: &str = "e41d2dab2bc27cfe90643b320800 45c2003c718c400040119161 0a001101 0a001201 \
                       000012b700280000 8100ffff40000118 00000000 00000000000000000000000000000000 82fd002a";

    #[test]
    fn cnp_line_is_valid_json_with_spec_values() {
        let bytes = hex(CNP);
        let f = decode_frame(
            LinkType::ETHERNET,
            &bytes,
            bytes.len() as u32,
            &DecodeConfig::default(),
        );
        let ctx = FrameCtx::whole(7, 1_000_000_123, bytes.len());
        let mut l = Line::new();
        write_frame(&mut l, &ctx, &f);
        assert_eq!(l.buf.last(), Some(&b'\n'));
        let v: serde_json::Value = serde_json::from_slice(&l.buf).unwrap();
        assert_eq!(v["frame"], 7);
        assert_eq!(v["ts_ns"], 1_000_000_123u64);
        assert_eq!(v["roce"], "v2");
        assert_eq!(v["src"], "10.0.17.1");
        assert_eq!(v["dst"], "10.0.18.1");
        // TOS 0xC2: DSCP 48, ECN 10 = ECT(0).
        assert_eq!(v["ecn"], "ect0");
        assert_eq!(v["dscp"], 48);
        assert_eq!(v["bth"]["opcode"], 0x81);
        assert_eq!(v["bth"]["opcode_name"], "CNP");
        assert_eq!(v["bth"]["becn"], true);
        assert_eq!(v["bth"]["fecn"], false);
        assert_eq!(v["bth"]["dest_qp"], 0x118);
        assert_eq!(v["payload_len"], 0);
        assert_eq!(v["icrc"]["status"], "good");
        assert_eq!(v["icrc"]["value"], 0x2a00fd82u32);
    }

    fn line(lt: LinkType, bytes: &[u8], len: u32) -> String {
        let f = decode_frame(lt, bytes, len, &DecodeConfig::default());
        let mut ctx = FrameCtx::whole(1, 5, bytes.len());
        ctx.len = len;
        let mut l = Line::new();
        write_frame(&mut l, &ctx, &f);
        String::from_utf8(l.buf).unwrap()
    }

    /// The CNP (74 bytes: UDP source port 0, IP TTL 64) cut 4 bytes short (its ICRC not
    /// captured): the keys README's "JSON output" lists, in its order, with `null` for the ICRC
    /// values the capture lacks.
    #[test]
    fn a_packet_cut_before_its_icrc_has_null_icrc_values() {
        let bytes = hex(CNP);
        let cut = &bytes[..bytes.len() - 4];
        assert_eq!(
            line(LinkType::ETHERNET, cut, bytes.len() as u32),
            "{\"frame\":1,\"ts_ns\":5,\"len\":74,\"caplen\":70,\"roce\":\"v2\",\
             \"src\":\"10.0.17.1\",\"dst\":\"10.0.18.1\",\"ecn\":\"ect0\",\"dscp\":48,\
             \"hop_limit\":64,\"udp_src_port\":0,\"udp_dst_port\":4791,\
             \"bth\":{\"opcode\":129,\"opcode_name\":\"CNP\",\"se\":false,\"m\":false,\
             \"pad\":0,\"tver\":0,\"pkey\":65535,\"fecn\":false,\"becn\":true,\
             \"dest_qp\":280,\"ack_req\":false,\"psn\":0},\"payload_len\":0,\
             \"icrc\":{\"status\":\"unchecked\",\"reason\":\"truncated\",\"value\":null,\
             \"expected\":null},\"truncated\":true}\n"
        );
    }

    /// A UDP datagram that is not RoCE: `roce` is `null`, the ports follow the addresses.
    #[test]
    fn a_frame_that_is_not_roce_has_null_roce_and_its_ports() {
        // IPv4 UDP 10.0.0.1:53 → 10.0.0.2:1000, 8 bytes of UDP header, no payload.
        let bytes = hex("020000000002 020000000001 0800 \
                         4500001c00004000401100000a0000010a000002 003503e800080000");
        assert_eq!(
            line(LinkType::ETHERNET, &bytes, bytes.len() as u32),
            "{\"frame\":1,\"ts_ns\":5,\"len\":42,\"caplen\":42,\"roce\":null,\
             \"src\":\"10.0.0.1\",\"dst\":\"10.0.0.2\",\"proto\":\"udp\",\"src_port\":53,\
             \"dst_port\":1000}\n"
        );
    }

    /// `--marks --json`: the `analysis` object last, with only the marks that are set
    /// (README "JSON output": `after_gap` with `gap`, `naked` left out when false).
    #[test]
    fn marks_are_the_analysis_object_of_the_line() {
        let bytes = hex(CNP);
        let f = decode_frame(
            LinkType::ETHERNET,
            &bytes,
            bytes.len() as u32,
            &DecodeConfig::default(),
        );
        let ctx = FrameCtx::whole(1, 5, bytes.len());
        let m = Marks {
            retransmission: true,
            gap: 3,
            nak_reason: Some("psn_seq_err"),
            cnp_for: Some(9),
            ..Marks::default()
        };
        let mut l = Line::new();
        let p = Pkt {
            ctx: &ctx,
            frame: &f,
            marks: Some(&m),
        };
        write_pkt(&mut l, &p);
        let text = String::from_utf8(l.buf).unwrap();
        assert!(text.ends_with(
            ",\"analysis\":{\"retransmission\":true,\"after_gap\":true,\"gap\":3,\
             \"nak_reason\":\"psn_seq_err\",\"cnp_for\":9}}\n"
        ));
        let only = Marks {
            message: Some(45),
            ..Marks::default()
        };
        let mut l = Line::new();
        write_pkt(
            &mut l,
            &Pkt {
                marks: Some(&only),
                ..p
            },
        );
        assert!(l.buf.ends_with(b"},\"analysis\":{\"message\":45}}\n"));
        // No marks set: no `analysis` object.
        let mut l = Line::new();
        let none = Marks::default();
        write_pkt(
            &mut l,
            &Pkt {
                marks: Some(&none),
                ..p
            },
        );
        assert!(!String::from_utf8(l.buf).unwrap().contains("analysis"));
    }
}
