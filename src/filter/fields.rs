//! The field registry: one table of every per-packet field, named as `--json` names its keys
//! (nested objects joined by dots: `bth.psn`, `aeth.nak`, `encap.session`), with its type, a
//! description and an accessor on the decoded frame. `--json` (src/output/json.rs) writes each
//! packet's line by walking this table in its order (a header's fields inside the header's
//! object: [`subtree_end`], [`json_key`]); the display filter (`-Y`), `--list-fields` and
//! `-T fields -e` read it too, so a field added here is in all of them at once.
//!
//! Each entry also names the field's column in the Parquet `packets` table and the label `-V`
//! prints it with (or says why there is none): `-V` (src/output/verbose.rs) takes its labels
//! from here, and tests/field_table.rs checks the `packets` schema against the table both
//! ways, so one entry names a field for every output.
//!
//! Values are those `--json` prints (same units); where `--json` writes a key as `null`, the
//! accessor gives [`Value::Null`], which the filter, `-T fields` and `-V` take as absent.
//! `encap.*` fields have one occurrence per tunnel layer, outermost first (as the JSON array);
//! every other field has at most one.

use crate::analyze::marks::Marks;
use crate::decode::encap::{EncapKind, EncapLayer, GreInfo};
use crate::decode::{
    Address, AethKind, Bth, ExtHeaders, Frame, FrameKind, IcrcStatus, OtherKind, RocePacket,
};
use crate::source::FrameCtx;

/// The packet a field is read from: the source's facts, the decoded frame and, when the
/// analysis runs alongside, the frame's analysis marks.
#[derive(Clone, Copy)]
pub struct Pkt<'p, 'a> {
    /// Frame number, times and lengths.
    pub ctx: &'p FrameCtx,
    /// The decoded frame.
    pub frame: &'p Frame<'a>,
    /// The frame's analysis marks (`None` when no analysis runs).
    pub marks: Option<&'p Marks>,
}

impl<'p, 'a> Pkt<'p, 'a> {
    /// The RoCE packet, if the frame is one.
    pub fn roce(&self) -> Option<&'p RocePacket<'a>> {
        match &self.frame.kind {
            FrameKind::Roce(p) => Some(p),
            FrameKind::Other(_) => None,
        }
    }
    fn bth(&self) -> Option<&'p Bth> {
        self.roce().and_then(|p| p.bth.as_ref())
    }
    fn ext(&self) -> Option<&'p ExtHeaders> {
        self.roce().map(|p| &p.ext)
    }
    fn other(&self) -> Option<&'p OtherKind> {
        match &self.frame.kind {
            FrameKind::Other(k) => Some(k),
            FrameKind::Roce(_) => None,
        }
    }
    fn layer(&self, i: usize) -> Option<&'p EncapLayer> {
        self.frame.encap.layers().nth(i)
    }
    fn mark<T>(&self, f: impl FnOnce(&Marks) -> Option<T>) -> Option<T> {
        self.marks.and_then(f)
    }
}

/// A field's value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// An unsigned integer.
    Uint(u64),
    /// A boolean.
    Bool(bool),
    /// One of our own names (`"ce"`, `"RC_SEND_ONLY"`).
    Str(&'static str),
    /// Free text (a malformed packet's reason).
    Text(String),
    /// An IP address, GID or LID.
    Addr(Address),
    /// A number with a fraction (`aeth.rnr_timer_ms`).
    Float(f64),
    /// A header (a JSON object or array) that is present: its presence is its only value.
    Present,
    /// A value the packet lacks where `--json` writes the key with `null` (`icrc.value` of a
    /// packet cut before its ICRC, `ecn` of a RoCEv1 packet): for the display filter, `-T fields`
    /// and `-V` the field is absent ([`Field::any`] never passes it on).
    Null,
}

/// The type of a field's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldType {
    /// Unsigned integer (compared as numbers; literals in decimal, 0x hex, 0 octal).
    Uint,
    /// Boolean (`true`/`false`, `1`/`0`).
    Bool,
    /// String (compared as text, `contains` a substring).
    Str,
    /// IPv4/IPv6 address, GID or `LID n`.
    Addr,
    /// Floating-point number.
    Float,
    /// A header: only its presence can be tested.
    Protocol,
}

impl FieldType {
    /// The name `--list-fields` prints.
    pub fn name(self) -> &'static str {
        match self {
            FieldType::Uint => "unsigned integer",
            FieldType::Bool => "boolean",
            FieldType::Str => "string",
            FieldType::Addr => "address",
            FieldType::Float => "floating point",
            FieldType::Protocol => "header",
        }
    }
}

/// How a field's occurrences are read.
#[derive(Clone, Copy)]
pub enum Getter {
    /// At most one occurrence.
    One(fn(&Pkt<'_, '_>) -> Option<Value>),
    /// Occurrence in tunnel layer `i` (outermost 0), `None` when that layer has none.
    Many(fn(&Pkt<'_, '_>, usize) -> Option<Value>),
}

/// One field of the registry.
#[derive(Clone, Copy)]
pub struct Field {
    /// The name: the `--json` key path joined by dots.
    pub name: &'static str,
    /// Its values' type.
    pub ty: FieldType,
    /// What it is, with units.
    pub desc: &'static str,
    /// Its accessor.
    pub get: Getter,
    /// Its column in the Parquet `packets` table.
    pub column: ParquetColumn,
    /// How `-V` shows it.
    pub verbose: Verbose,
}

/// Where a field is in the Parquet `packets` table (src/output/parquet/packets.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParquetColumn {
    /// The column named as the field with `.` turned into `_` (`bth.psn` → `bth_psn`).
    Same,
    /// A column of another name (`ts_ns` → `ts`, a timestamp).
    Named(&'static str),
    /// No column: why not.
    Absent(&'static str),
}

/// How a value follows its label in a `-V` line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VFmt {
    /// A number in decimal (`Packet Sequence Number: 5`).
    Dec,
    /// A number in hex with `0x` and this many digits at least (`Partition Key: 0xffff`).
    Hex(usize),
    /// A flag as `0` or `1` (`Solicited Event: 0`).
    Bit,
    /// Text, an address or a name, as it is (`SGID fe80::1`).
    Text,
    /// A time in ns as seconds with 9 decimals (`time 1.000000123`).
    Seconds,
    /// A number with two decimals (`= 0.01 ms`).
    Cents,
    /// Nothing: the label alone says the field is there (a header's heading, `[TRUNCATED]`).
    Nothing,
}

/// How `-V` (src/output/verbose.rs) shows a field: the label it prints before the value, taken
/// from here when it writes the line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verbose {
    /// The text `{label}{value}{unit}`, the value as `fmt` writes it; `only` says when `-V`
    /// leaves it out although the field is present (`None`: never).
    Shown {
        /// The text before the value, with its separator (`"Packet Sequence Number: "`).
        label: &'static str,
        /// How the value is written.
        fmt: VFmt,
        /// The text after the value (`" bytes on wire"`), often empty.
        unit: &'static str,
        /// When `-V` does not show the present field, and why.
        only: Option<&'static str>,
    },
    /// `-V` does not show it: why not.
    Hidden(&'static str),
}

impl Field {
    /// The same field with its Parquet column `c`.
    const fn col(self, c: ParquetColumn) -> Field {
        Field { column: c, ..self }
    }

    /// The same field without a Parquet column, for the reason `why`.
    const fn no_col(self, why: &'static str) -> Field {
        self.col(ParquetColumn::Absent(why))
    }

    /// The same field shown by `-V` as `{label}{value}`.
    const fn v(self, label: &'static str, fmt: VFmt) -> Field {
        self.vu(label, fmt, "")
    }

    /// The same field shown by `-V` as `{label}{value}{unit}`.
    const fn vu(self, label: &'static str, fmt: VFmt, unit: &'static str) -> Field {
        Field {
            verbose: Verbose::Shown {
                label,
                fmt,
                unit,
                only: None,
            },
            ..self
        }
    }

    /// The same field, which `-V` shows only sometimes: `why` says when not.
    const fn only(self, why: &'static str) -> Field {
        match self.verbose {
            Verbose::Shown {
                label, fmt, unit, ..
            } => Field {
                verbose: Verbose::Shown {
                    label,
                    fmt,
                    unit,
                    only: Some(why),
                },
                ..self
            },
            Verbose::Hidden(_) => self,
        }
    }

    /// The same field, not shown by `-V` for the reason `why`.
    const fn no_v(self, why: &'static str) -> Field {
        Field {
            verbose: Verbose::Hidden(why),
            ..self
        }
    }

    /// The name of its Parquet `packets` column, `None` without one.
    pub fn column_name(&self) -> Option<String> {
        match self.column {
            ParquetColumn::Same => Some(self.name.replace('.', "_")),
            ParquetColumn::Named(n) => Some(n.to_string()),
            ParquetColumn::Absent(_) => None,
        }
    }

    /// The text `-V` prints for the value `v` of this field (`Packet Sequence Number: 5`), as
    /// [`Verbose::Shown`] says; nothing for a field `-V` does not show, and only the label and
    /// unit for a value of another type than the format's.
    pub fn shown(&'static self, v: Value) -> Shown {
        Shown { field: self, v }
    }

    /// The label `-V` prints before the field's value (empty for a field it does not show).
    pub const fn label(&self) -> &'static str {
        match self.verbose {
            Verbose::Shown { label, .. } => label,
            Verbose::Hidden(_) => "",
        }
    }
}

/// A field's value as `-V` prints it, with its label ([`Field::shown`]).
pub struct Shown {
    field: &'static Field,
    v: Value,
}

impl std::fmt::Display for Shown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Verbose::Shown {
            label, fmt, unit, ..
        } = self.field.verbose
        else {
            return Ok(());
        };
        f.write_str(label)?;
        match (fmt, &self.v) {
            (VFmt::Dec, Value::Uint(u)) => write!(f, "{u}")?,
            (VFmt::Hex(d), Value::Uint(u)) => write!(f, "0x{u:0d$x}")?,
            (VFmt::Bit, Value::Bool(b)) => write!(f, "{}", u8::from(*b))?,
            (VFmt::Text, Value::Str(s)) => f.write_str(s)?,
            (VFmt::Text, Value::Text(s)) => f.write_str(s)?,
            (VFmt::Text, Value::Addr(a)) => write!(f, "{a}")?,
            (VFmt::Seconds, Value::Uint(u)) => {
                write!(f, "{}.{:09}", u / 1_000_000_000, u % 1_000_000_000)?
            }
            (VFmt::Cents, Value::Float(x)) => write!(f, "{x:.2}")?,
            _ => {}
        }
        f.write_str(unit)
    }
}

/// The index in [`FIELDS`] of the field named `name`, found at compile time (a `const`); a
/// name that is not there stops the build.
pub const fn index(name: &str) -> usize {
    let mut i = 0;
    while i < TABLE.len() {
        if same_str(TABLE[i].name, name) {
            return i;
        }
        i += 1;
    }
    panic!("no such field in the registry")
}

/// The registry as `--json` nests it: a header field (`bth`, type [`FieldType::Protocol`]) is
/// followed by its own fields (`bth.opcode`, …), which print inside its object (the array of
/// objects of `encap`, one per tunnel layer). For field `i`: the index just after its own fields
/// (`i + 1` for a field that is not a header).
pub const fn subtree_end(i: usize) -> usize {
    SUBTREE_END[i]
}

/// The key `--json` writes field `i` under inside its header's object: its name after the last
/// dot (`bth.psn` → `psn`), the whole name at the top level.
pub fn json_key(i: usize) -> &'static str {
    &FIELDS[i].name[key_start(i)..]
}

/// Where field `i`'s [`json_key`] starts in its name: after its header's name and the dot
/// (`bth.psn` → 4), 0 at the top level.
pub const fn key_start(i: usize) -> usize {
    KEY_START[i]
}

/// [`subtree_end`] for every field, computed at compile time; the build stops, naming the field,
/// if a field named `h.f` does not follow its header `h` among `h`'s other fields, `h` is not a
/// header or not read as `h.f` is (per tunnel layer or not), or a name has two dots (the
/// registry nests one level).
const SUBTREE_END: [usize; TABLE.len()] = subtree_ends();

/// Where each field's key starts in its name (after the last dot).
const KEY_START: [usize; TABLE.len()] = key_starts();

const fn subtree_ends() -> [usize; TABLE.len()] {
    let mut end = [0; TABLE.len()];
    let mut i = 0;
    while i < TABLE.len() {
        let mut j = i + 1;
        while j < TABLE.len() && is_child(TABLE[i].name, TABLE[j].name) {
            j += 1;
        }
        end[i] = j;
        i += 1;
    }
    // Every header's field follows its header among the header's other fields: the nearest
    // top-level field before it is its header, a header (`FieldType::Protocol`) read as it is
    // (per tunnel layer or not), and its name has one dot (the registry nests one level).
    let start = key_starts();
    let mut j = 0;
    while j < TABLE.len() {
        if start[j] > 0 {
            let mut h = j - 1;
            while start[h] > 0 {
                h -= 1;
            }
            let header = &TABLE[h];
            if !is_child(header.name, TABLE[j].name)
                || start[j] != header.name.len() + 1
                || end[h] <= j
                || !matches!(header.ty, FieldType::Protocol)
                || matches!(header.get, Getter::Many(_)) != matches!(TABLE[j].get, Getter::Many(_))
            {
                panic!("{}", TABLE[j].name);
            }
        }
        j += 1;
    }
    end
}

/// Whether `name` is `parent.` followed by a field's key.
const fn is_child(parent: &str, name: &str) -> bool {
    let (p, n) = (parent.as_bytes(), name.as_bytes());
    if n.len() <= p.len() + 1 || n[p.len()] != b'.' {
        return false;
    }
    let mut i = 0;
    while i < p.len() {
        if p[i] != n[i] {
            return false;
        }
        i += 1;
    }
    true
}

const fn key_starts() -> [usize; TABLE.len()] {
    let mut start = [0; TABLE.len()];
    let mut i = 0;
    while i < TABLE.len() {
        let name = TABLE[i].name.as_bytes();
        let mut k = 0;
        while k < name.len() {
            if name[k] == b'.' {
                start[i] = k + 1;
            }
            k += 1;
        }
        i += 1;
    }
    start
}

/// Check, at compile time, that `columns` (the Parquet `packets` table's, without `capture`
/// and `host`) and the registry's columns ([`Field::column`]) are the same set: a column no
/// field names, or a field's column missing from `columns`, stops the build with its name.
pub const fn check_columns(columns: &[&str]) {
    let mut c = 0;
    while c < columns.len() {
        let mut i = 0;
        while i < TABLE.len() && !is_column_of(&TABLE[i], columns[c]) {
            i += 1;
        }
        if i == TABLE.len() {
            panic!("{}", columns[c]);
        }
        c += 1;
    }
    let mut i = 0;
    while i < TABLE.len() {
        if !matches!(TABLE[i].column, ParquetColumn::Absent(_)) {
            let mut c = 0;
            while c < columns.len() && !is_column_of(&TABLE[i], columns[c]) {
                c += 1;
            }
            if c == columns.len() {
                panic!("{}", TABLE[i].name);
            }
        }
        i += 1;
    }
}

/// Whether `column` is the Parquet column of `f` ([`Field::column_name`], at compile time).
const fn is_column_of(f: &Field, column: &str) -> bool {
    match f.column {
        ParquetColumn::Same => {
            let (a, b) = (f.name.as_bytes(), column.as_bytes());
            if a.len() != b.len() {
                return false;
            }
            let mut i = 0;
            while i < a.len() {
                let x = if a[i] == b'.' { b'_' } else { a[i] };
                if x != b[i] {
                    return false;
                }
                i += 1;
            }
            true
        }
        ParquetColumn::Named(n) => same_str(n, column),
        ParquetColumn::Absent(_) => false,
    }
}

const fn same_str(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

impl Field {
    /// Whether some occurrence of the field in `p` satisfies `f` (called on each in turn, up
    /// to the first that does).
    #[inline]
    pub fn any(&self, p: &Pkt<'_, '_>, mut f: impl FnMut(Value) -> bool) -> bool {
        let mut pass = |v: Value| !matches!(v, Value::Null) && f(v);
        match self.get {
            Getter::One(g) => g(p).is_some_and(pass),
            Getter::Many(g) => {
                (0..p.frame.encap.layers().count()).any(|i| g(p, i).is_some_and(&mut pass))
            }
        }
    }

    /// The field's value in `p` as `--json` has it: `None` where the key is left out,
    /// [`Value::Null`] where it is written as `null`; `layer` is the tunnel layer of an
    /// `encap.*` field (outermost 0) and unused for the others.
    #[inline]
    pub fn json_value(&self, p: &Pkt<'_, '_>, layer: usize) -> Option<Value> {
        match self.get {
            Getter::One(g) => g(p),
            Getter::Many(g) => g(p, layer),
        }
    }

    /// Every occurrence of the field in `p`, in order.
    pub fn values(&self, p: &Pkt<'_, '_>) -> Vec<Value> {
        let mut v = Vec::new();
        self.any(p, |x| {
            v.push(x);
            false
        });
        v
    }

    /// Whether the field is present in `p`.
    #[inline]
    pub fn present(&self, p: &Pkt<'_, '_>) -> bool {
        self.any(p, |_| true)
    }
}

/// The index of the field named `name` in [`FIELDS`].
pub fn lookup(name: &str) -> Option<usize> {
    FIELDS.iter().position(|f| f.name == name)
}

use FieldType::{Addr as A, Bool as B, Float as F, Protocol as P, Str as S, Uint as U};
use Value::{Addr as VA, Bool as VB, Present as VP, Str as VS, Uint as VU};

const fn one(
    name: &'static str,
    ty: FieldType,
    desc: &'static str,
    f: fn(&Pkt<'_, '_>) -> Option<Value>,
) -> Field {
    Field {
        name,
        ty,
        desc,
        get: Getter::One(f),
        column: ParquetColumn::Same,
        verbose: Verbose::Hidden(""),
    }
}

const fn many(
    name: &'static str,
    ty: FieldType,
    desc: &'static str,
    f: fn(&Pkt<'_, '_>, usize) -> Option<Value>,
) -> Field {
    Field {
        name,
        ty,
        desc,
        get: Getter::Many(f),
        column: ParquetColumn::Same,
        verbose: Verbose::Hidden(""),
    }
}

fn gre(k: &EncapKind) -> Option<&GreInfo> {
    match k {
        EncapKind::Gre(g) | EncapKind::Erspan1(g) | EncapKind::Erspan2(g, _) => Some(g),
        EncapKind::Erspan3(g, _) => Some(g),
        EncapKind::Vxlan { .. } => None,
    }
}

fn ports(k: &OtherKind) -> Option<(u16, u16)> {
    match *k {
        OtherKind::Udp { src_port, dst_port } | OtherKind::Tcp { src_port, dst_port } => {
            Some((src_port, dst_port))
        }
        _ => None,
    }
}

fn aeth_kind(p: &Pkt<'_, '_>) -> Option<AethKind> {
    p.ext().and_then(|e| e.aeth).map(|a| a.kind())
}

/// Every field, in the order `--json` prints them.
pub static FIELDS: &[Field] = TABLE;

/// [`FIELDS`] as a constant: for [`index`] to search at compile time, and for a writer that
/// unrolls its walk over the fields (`--json`) to call each accessor directly.
pub const TABLE: &[Field] = &[
    one("frame", U, "frame number, from 1", |p| {
        Some(VU(p.ctx.number))
    }).v("Frame ", VFmt::Dec),
    one("ts_ns", U, "capture time, ns since the Unix epoch", |p| {
        Some(VU(p.ctx.ts_ns))
    }).col(ParquetColumn::Named("ts")).v("time ", VFmt::Seconds),
    one("len", U, "frame length on the wire, bytes", |p| {
        Some(VU(p.ctx.len.into()))
    }).vu("", VFmt::Dec, " bytes on wire"),
    one("caplen", U, "bytes captured", |p| {
        Some(VU(p.ctx.caplen.into()))
    }).vu("", VFmt::Dec, " bytes captured"),
    one("vlan", U, "outermost VLAN ID (12 bits)", |p| {
        p.frame.link.vlan_id.map(|v| VU(v.into()))
    }).v("ID ", VFmt::Dec),
    one("vlan_pcp", U, "outermost VLAN priority (3 bits)", |p| {
        let l = &p.frame.link;
        l.vlan_id.map(|_| l.vlan_pcp.map_or(Value::Null, |v| VU(v.into())))
    }).v("PCP ", VFmt::Dec),
    one(
        "inner_vlan",
        U,
        "innermost VLAN ID (12 bits), with two or more tags",
        |p| p.frame.link.inner_vlan_id.map(|v| VU(v.into())),
    ).v("ID ", VFmt::Dec),
    one(
        "inner_vlan_pcp",
        U,
        "innermost VLAN priority (3 bits)",
        |p| {
            let l = &p.frame.link;
            l.inner_vlan_id.map(|_| l.inner_vlan_pcp.map_or(Value::Null, |v| VU(v.into())))
        },
    ).v("PCP ", VFmt::Dec),
    many(
        "encap",
        P,
        "mirror tunnels, one per layer, outermost first",
        |p, i| p.layer(i).map(|_| VP),
    ).v("Outer IP: ", VFmt::Nothing),
    many(
        "encap.type",
        S,
        "tunnel: gre, erspan1, erspan2, erspan3, vxlan",
        |p, i| p.layer(i).map(|l| VS(l.kind.name())),
    ).no_col("the Parquet table keeps the tunnel layers as the `encap` column's JSON text").no_v("-V names the layer by its heading: GRE, ERSPAN Type I/II/III, VXLAN"),
    many("encap.src", A, "outer IP source address", |p, i| {
        p.layer(i).map(|l| VA(l.src))
    }).no_col("the Parquet table keeps the tunnel layers as the `encap` column's JSON text").v("Outer IP: ", VFmt::Text),
    many("encap.dst", A, "outer IP destination address", |p, i| {
        p.layer(i).map(|l| VA(l.dst))
    }).no_col("the Parquet table keeps the tunnel layers as the `encap` column's JSON text").v(" → ", VFmt::Text),
    many(
        "encap.carrier_vlan",
        U,
        "the carrier frame's VLAN ID (outermost layer)",
        |p, i| {
            let id = p.frame.encap.outer_link.and_then(|l| l.vlan_id);
            id.filter(|_| i == 0 && p.layer(0).is_some())
                .map(|v| VU(v.into()))
        },
    ).no_col("the Parquet table keeps the tunnel layers as the `encap` column's JSON text").v("ID ", VFmt::Dec),
    many(
        "encap.gre_proto",
        U,
        "GRE protocol type (16 bits)",
        |p, i| {
            p.layer(i)
                .and_then(|l| gre(&l.kind))
                .map(|g| VU(g.protocol.into()))
        },
    ).no_col("the Parquet table keeps the tunnel layers as the `encap` column's JSON text").v("GRE: protocol ", VFmt::Hex(4)),
    many(
        "encap.gre_checksum",
        U,
        "GRE checksum (16 bits), when present",
        |p, i| {
            let g = p.layer(i).and_then(|l| gre(&l.kind));
            g.and_then(|g| g.checksum).map(|v| VU(v.into()))
        },
    ).no_col("the Parquet table keeps the tunnel layers as the `encap` column's JSON text").v("checksum ", VFmt::Hex(4)),
    many(
        "encap.gre_key",
        U,
        "GRE key (32 bits), when present",
        |p, i| {
            let g = p.layer(i).and_then(|l| gre(&l.kind));
            g.and_then(|g| g.key).map(|v| VU(v.into()))
        },
    ).no_col("the Parquet table keeps the tunnel layers as the `encap` column's JSON text").v("key ", VFmt::Dec),
    many(
        "encap.gre_seq",
        U,
        "GRE sequence number (32 bits), when present",
        |p, i| {
            let g = p.layer(i).and_then(|l| gre(&l.kind));
            g.and_then(|g| g.seq).map(|v| VU(v.into()))
        },
    ).no_col("the Parquet table keeps the tunnel layers as the `encap` column's JSON text").v("sequence ", VFmt::Dec),
    many("encap.session", U, "ERSPAN session ID (10 bits)", |p, i| {
        p.layer(i).and_then(|l| match &l.kind {
            EncapKind::Erspan2(_, e) => Some(VU(e.session.into())),
            EncapKind::Erspan3(_, e) => Some(VU(e.session.into())),
            _ => None,
        })
    }).no_col("the Parquet table keeps the tunnel layers as the `encap` column's JSON text").v("session ", VFmt::Dec),
    many("encap.vlan", U, "ERSPAN original VLAN (12 bits)", |p, i| {
        p.layer(i).and_then(|l| match &l.kind {
            EncapKind::Erspan2(_, e) => Some(VU(e.vlan.into())),
            EncapKind::Erspan3(_, e) => Some(VU(e.vlan.into())),
            _ => None,
        })
    }).no_col("the Parquet table keeps the tunnel layers as the `encap` column's JSON text").v("VLAN ", VFmt::Dec),
    many(
        "encap.cos",
        U,
        "ERSPAN class of service (3 bits)",
        |p, i| {
            p.layer(i).and_then(|l| match &l.kind {
                EncapKind::Erspan2(_, e) => Some(VU(e.cos.into())),
                EncapKind::Erspan3(_, e) => Some(VU(e.cos.into())),
                _ => None,
            })
        },
    ).no_col("the Parquet table keeps the tunnel layers as the `encap` column's JSON text").v("COS ", VFmt::Dec),
    many(
        "encap.en",
        U,
        "ERSPAN II encapsulation type (2 bits)",
        |p, i| {
            p.layer(i).and_then(|l| match &l.kind {
                EncapKind::Erspan2(_, e) => Some(VU(e.encap_type.into())),
                _ => None,
            })
        },
    ).no_col("the Parquet table keeps the tunnel layers as the `encap` column's JSON text").v("En ", VFmt::Dec),
    many("encap.bso", U, "ERSPAN III BSO (2 bits)", |p, i| {
        erspan3(p, i, |e| VU(e.bso.into()))
    }).no_col("the Parquet table keeps the tunnel layers as the `encap` column's JSON text").v("BSO ", VFmt::Dec),
    many(
        "encap.truncated",
        B,
        "ERSPAN T bit: the mirror cut the copy",
        |p, i| {
            p.layer(i).and_then(|l| match &l.kind {
                EncapKind::Erspan2(_, e) => Some(VB(e.truncated)),
                EncapKind::Erspan3(_, e) => Some(VB(e.truncated)),
                _ => None,
            })
        },
    ).no_col("the Parquet table keeps the tunnel layers as the `encap` column's JSON text").v("T ", VFmt::Bit),
    many("encap.index", U, "ERSPAN II index (20 bits)", |p, i| {
        p.layer(i).and_then(|l| match &l.kind {
            EncapKind::Erspan2(_, e) => Some(VU(e.index.into())),
            _ => None,
        })
    }).no_col("the Parquet table keeps the tunnel layers as the `encap` column's JSON text").v("index ", VFmt::Dec),
    many(
        "encap.timestamp",
        U,
        "ERSPAN III timestamp (32 bits, units of granularity)",
        |p, i| erspan3(p, i, |e| VU(e.timestamp.into())),
    ).no_col("the Parquet table keeps the tunnel layers as the `encap` column's JSON text").v("timestamp ", VFmt::Dec),
    many(
        "encap.granularity",
        U,
        "ERSPAN III timestamp granularity (2 bits)",
        |p, i| erspan3(p, i, |e| VU(e.granularity.into())),
    ).no_col("the Parquet table keeps the tunnel layers as the `encap` column's JSON text").v("granularity ", VFmt::Dec),
    many(
        "encap.sgt",
        U,
        "ERSPAN III security group tag (16 bits)",
        |p, i| erspan3(p, i, |e| VU(e.sgt.into())),
    ).no_col("the Parquet table keeps the tunnel layers as the `encap` column's JSON text").v("SGT ", VFmt::Dec),
    many("encap.pdu", B, "ERSPAN III P bit: Ethernet PDU", |p, i| {
        erspan3(p, i, |e| VB(e.pdu))
    }).no_col("the Parquet table keeps the tunnel layers as the `encap` column's JSON text").no_v("-V does not show the ERSPAN III P bit"),
    many(
        "encap.frame_type",
        U,
        "ERSPAN III frame type (5 bits)",
        |p, i| erspan3(p, i, |e| VU(e.frame_type.into())),
    ).no_col("the Parquet table keeps the tunnel layers as the `encap` column's JSON text").v("frame type ", VFmt::Dec),
    many(
        "encap.hw_id",
        U,
        "ERSPAN III hardware ID (6 bits)",
        |p, i| erspan3(p, i, |e| VU(e.hw_id.into())),
    ).no_col("the Parquet table keeps the tunnel layers as the `encap` column's JSON text").v("HW ", VFmt::Dec),
    many(
        "encap.direction",
        S,
        "ERSPAN III direction: ingress, egress",
        |p, i| erspan3(p, i, |e| VS(if e.egress { "egress" } else { "ingress" })),
    ).no_col("the Parquet table keeps the tunnel layers as the `encap` column's JSON text").v(" ", VFmt::Text),
    many(
        "encap.platform_id",
        U,
        "ERSPAN III platform ID (6 bits)",
        |p, i| erspan3_opt(p, i, |e| e.platform_id().map(|v| VU(v.into()))),
    ).no_col("the Parquet table keeps the tunnel layers as the `encap` column's JSON text").v("platform ID ", VFmt::Dec),
    many(
        "encap.timestamp_upper",
        U,
        "ERSPAN III upper 32 timestamp bits",
        |p, i| erspan3_opt(p, i, |e| e.timestamp_upper().map(|v| VU(v.into()))),
    ).no_col("the Parquet table keeps the tunnel layers as the `encap` column's JSON text").v("upper timestamp ", VFmt::Dec),
    many(
        "encap.src_port",
        U,
        "VXLAN outer UDP source port",
        |p, i| vxlan(p, i, |s, _, _, _| s.into()),
    ).no_col("the Parquet table keeps the tunnel layers as the `encap` column's JSON text").v("VXLAN: UDP ", VFmt::Dec),
    many(
        "encap.dst_port",
        U,
        "VXLAN outer UDP destination port",
        |p, i| vxlan(p, i, |_, d, _, _| d.into()),
    ).no_col("the Parquet table keeps the tunnel layers as the `encap` column's JSON text").v(" → ", VFmt::Dec),
    many("encap.flags", U, "VXLAN flags (8 bits)", |p, i| {
        vxlan(p, i, |_, _, f, _| f.into())
    }).no_col("the Parquet table keeps the tunnel layers as the `encap` column's JSON text").v("flags ", VFmt::Hex(2)),
    many(
        "encap.vni",
        U,
        "VXLAN network identifier (24 bits)",
        |p, i| vxlan(p, i, |_, _, _, v| v.into()),
    ).no_col("the Parquet table keeps the tunnel layers as the `encap` column's JSON text").v("VNI ", VFmt::Dec),
    one(
        "roce",
        S,
        "v1, v2 or ib; absent for a frame that is not RoCE",
        |p| Some(p.roce().map_or(Value::Null, |r| VS(r.version.name()))),
    ).no_v("the tree's headers tell the version: GRH without IP for v1, IP and UDP for v2, LRH for ib"),
    one("src", A, "source IP address, GID or LID", |p| {
        p.frame.net().map(|n| VA(n.src))
    }).v("Internet Protocol: ", VFmt::Text).only("v1 and ib: -V shows the GIDs in the GRH and the LIDs in the LRH"),
    one("dst", A, "destination IP address, GID or LID", |p| {
        p.frame.net().map(|n| VA(n.dst))
    }).v(" → ", VFmt::Text).only("v1 and ib: -V shows the GIDs in the GRH and the LIDs in the LRH"),
    one(
        "ecn",
        S,
        "IP ECN codepoint (RFC 3168): not-ect, ect0, ect1, ce",
        |p| p.roce().map(|r| r.ecn.map_or(Value::Null, |e| VS(e.name()))),
    ).v("ECN ", VFmt::Text),
    one("dscp", U, "IP DSCP (6 bits)", |p| {
        p.roce().and_then(|r| r.dscp).map(|v| VU(v.into()))
    }).v("DSCP ", VFmt::Dec),
    one("hop_limit", U, "IP TTL / hop limit", |p| {
        p.roce().and_then(|r| r.hop_limit).map(|v| VU(v.into()))
    }).v("TTL/Hop limit ", VFmt::Dec).only("v1: -V shows it as the GRH's HopLmt"),
    one("udp_src_port", U, "RoCEv2 UDP source port", |p| {
        let r = p.roce()?;
        r.udp_dst_port?;
        r.udp_src_port.map(|v| VU(v.into()))
    }).v("User Datagram Protocol: ", VFmt::Dec),
    one("udp_dst_port", U, "RoCEv2 UDP destination port", |p| {
        let r = p.roce()?;
        r.udp_src_port?;
        r.udp_dst_port.map(|v| VU(v.into()))
    }).v(" → ", VFmt::Dec),
    one("lrh", P, "native IB Local Route Header (IBTA §7.7)", |p| {
        p.roce().and_then(|r| r.lrh).map(|_| VP)
    }).no_col("a header: the Parquet table has its fields' columns, null where the packet lacks it").v("Local Route Header: ", VFmt::Nothing),
    one("lrh.vl", U, "LRH virtual lane (4 bits)", |p| {
        lrh(p, |l| l.vl.into())
    }).v("VL ", VFmt::Dec),
    one("lrh.lver", U, "LRH link version (4 bits)", |p| {
        lrh(p, |l| l.lver.into())
    }).v("LVer ", VFmt::Dec),
    one("lrh.sl", U, "LRH service level (4 bits)", |p| {
        lrh(p, |l| l.sl.into())
    }).v("SL ", VFmt::Dec),
    one("lrh.lnh", U, "LRH link next header (2 bits)", |p| {
        lrh(p, |l| l.lnh.into())
    }).v("LNH ", VFmt::Dec),
    one("lrh.dlid", U, "LRH destination LID (16 bits)", |p| {
        lrh(p, |l| l.dlid.into())
    }).v("DLID ", VFmt::Dec),
    one(
        "lrh.pkt_len",
        U,
        "LRH packet length, 4-byte words (11 bits)",
        |p| lrh(p, |l| l.pkt_len.into()),
    ).vu("PktLen ", VFmt::Dec, " words"),
    one("lrh.slid", U, "LRH source LID (16 bits)", |p| {
        lrh(p, |l| l.slid.into())
    }).v("SLID ", VFmt::Dec),
    one(
        "grh",
        P,
        "Global Route Header (RoCEv1, IB; IBTA §8.3)",
        |p| p.roce().and_then(|r| r.grh).map(|_| VP),
    ).no_col("a header: the Parquet table has its fields' columns, null where the packet lacks it").v("Global Route Header", VFmt::Nothing),
    one("grh.ip_ver", U, "GRH IP version (4 bits)", |p| {
        grh(p, |g| VU(g.ip_ver.into()))
    }).v("IPVer ", VFmt::Dec),
    one("grh.tclass", U, "GRH traffic class (8 bits)", |p| {
        grh(p, |g| VU(g.tclass.into()))
    }).v("TClass ", VFmt::Hex(2)),
    one("grh.flow_label", U, "GRH flow label (20 bits)", |p| {
        grh(p, |g| VU(g.flow_label.into()))
    }).v("FlowLabel ", VFmt::Hex(5)),
    one("grh.pay_len", U, "GRH payload length, bytes", |p| {
        grh(p, |g| VU(g.pay_len.into()))
    }).v("PayLen ", VFmt::Dec),
    one(
        "grh.next_hdr",
        U,
        "GRH next header (8 bits; 0x1b BTH)",
        |p| grh(p, |g| VU(g.next_hdr.into())),
    ).v("NxtHdr ", VFmt::Hex(2)),
    one("grh.hop_limit", U, "GRH hop limit (8 bits)", |p| {
        grh(p, |g| VU(g.hop_limit.into()))
    }).v("HopLmt ", VFmt::Dec),
    one("grh.sgid", A, "GRH source GID (128 bits)", |p| {
        grh(p, |g| VA(Address::Gid(g.sgid)))
    }).v("SGID ", VFmt::Text),
    one("grh.dgid", A, "GRH destination GID (128 bits)", |p| {
        grh(p, |g| VA(Address::Gid(g.dgid)))
    }).v("DGID ", VFmt::Text),
    one("bth", P, "Base Transport Header (IBTA §9.2)", |p| {
        p.bth().map(|_| VP)
    }).no_col("a header: the Parquet table has its fields' columns, null where the packet lacks it").v("Base Transport Header", VFmt::Nothing),
    one("bth.opcode", U, "BTH opcode (8 bits)", |p| {
        p.bth().map(|b| VU(b.opcode.0.into()))
    }).v("OpCode: ", VFmt::Hex(2)),
    one(
        "bth.opcode_name",
        S,
        "opcode name, e.g. RC_RDMA_WRITE_FIRST, CNP",
        |p| p.bth().map(|b| VS(b.opcode.token())),
    ).no_v("-V prints the opcode's label as Wireshark names it (`RC RDMA Write First`), not this token"),
    one("bth.se", B, "BTH solicited event", |p| {
        p.bth().map(|b| VB(b.se))
    }).v("Solicited Event: ", VFmt::Bit),
    one("bth.m", B, "BTH MigReq", |p| p.bth().map(|b| VB(b.m))).v("MigReq: ", VFmt::Bit),
    one("bth.pad", U, "BTH pad count, bytes (2 bits)", |p| {
        p.bth().map(|b| VU(b.pad.into()))
    }).v("Pad Count: ", VFmt::Dec),
    one(
        "bth.tver",
        U,
        "BTH transport header version (4 bits)",
        |p| p.bth().map(|b| VU(b.tver.into())),
    ).v("Transport Header Version: ", VFmt::Dec),
    one("bth.pkey", U, "BTH partition key (16 bits)", |p| {
        p.bth().map(|b| VU(b.pkey.into()))
    }).v("Partition Key: ", VFmt::Hex(4)),
    one("bth.fecn", B, "BTH forward ECN", |p| {
        p.bth().map(|b| VB(b.fecn))
    }).v("FECN: ", VFmt::Bit),
    one("bth.becn", B, "BTH backward ECN", |p| {
        p.bth().map(|b| VB(b.becn))
    }).v("BECN: ", VFmt::Bit),
    one("bth.dest_qp", U, "BTH destination QP (24 bits)", |p| {
        p.bth().map(|b| VU(b.dest_qp.into()))
    }).v("Destination Queue Pair: ", VFmt::Hex(6)),
    one("bth.ack_req", B, "BTH AckReq", |p| {
        p.bth().map(|b| VB(b.ack_req))
    }).v("Acknowledge Request: ", VFmt::Bit),
    one("bth.psn", U, "BTH packet sequence number (24 bits)", |p| {
        p.bth().map(|b| VU(b.psn.into()))
    }).v("Packet Sequence Number: ", VFmt::Dec),
    one("rdeth", P, "RDETH (IBTA §9.3.1)", |p| {
        p.ext().and_then(|e| e.rdeth).map(|_| VP)
    }).no_col("a header: the Parquet table has its fields' columns, null where the packet lacks it").v("Reliable Datagram ETH (RDETH)", VFmt::Nothing),
    one("rdeth.ee_context", U, "RDETH EE context (24 bits)", |p| {
        p.ext()
            .and_then(|e| e.rdeth)
            .map(|r| VU(r.ee_context.into()))
    }).v("EE Context: ", VFmt::Hex(6)),
    one("deth", P, "DETH (IBTA §9.3.2)", |p| {
        p.ext().and_then(|e| e.deth).map(|_| VP)
    }).no_col("a header: the Parquet table has its fields' columns, null where the packet lacks it").v("Datagram ETH (DETH)", VFmt::Nothing),
    one("deth.qkey", U, "DETH queue key (32 bits)", |p| {
        p.ext().and_then(|e| e.deth).map(|d| VU(d.qkey.into()))
    }).v("Queue Key: ", VFmt::Hex(8)),
    one("deth.src_qp", U, "DETH source QP (24 bits)", |p| {
        p.ext().and_then(|e| e.deth).map(|d| VU(d.src_qp.into()))
    }).v("Source QP: ", VFmt::Hex(6)),
    one("xrceth", P, "XRCETH (IBTA §9.3.7)", |p| {
        p.ext().and_then(|e| e.xrceth).map(|_| VP)
    }).no_col("a header: the Parquet table has its fields' columns, null where the packet lacks it").v("XRC ETH (XRCETH)", VFmt::Nothing),
    one(
        "xrceth.xrc_srq",
        U,
        "XRCETH XRC SRQ number (24 bits)",
        |p| p.ext().and_then(|e| e.xrceth).map(|x| VU(x.xrc_srq.into())),
    ).v("XRC SRQ: ", VFmt::Hex(6)),
    one("feth", P, "FETH (FLUSH)", |p| {
        p.ext().and_then(|e| e.feth).map(|_| VP)
    }).no_col("a header: the Parquet table has its fields' columns, null where the packet lacks it").v("FLUSH ETH (FETH)", VFmt::Nothing),
    one("feth.sel", U, "FETH selectivity level (2 bits)", |p| {
        p.ext().and_then(|e| e.feth).map(|f| VU(f.sel.into()))
    }).v("Selectivity Level: ", VFmt::Dec),
    one("feth.plt", U, "FETH placement type (4 bits)", |p| {
        p.ext().and_then(|e| e.feth).map(|f| VU(f.plt.into()))
    }).v("Placement Type: ", VFmt::Dec),
    one("reth", P, "RETH (IBTA §9.3.3)", |p| {
        p.ext().and_then(|e| e.reth).map(|_| VP)
    }).no_col("a header: the Parquet table has its fields' columns, null where the packet lacks it").v("RDMA ETH (RETH)", VFmt::Nothing),
    one("reth.va", U, "RETH virtual address (64 bits)", |p| {
        p.ext().and_then(|e| e.reth).map(|r| VU(r.va))
    }).v("Virtual Address: ", VFmt::Hex(16)),
    one("reth.rkey", U, "RETH remote key (32 bits)", |p| {
        p.ext().and_then(|e| e.reth).map(|r| VU(r.rkey.into()))
    }).v("Remote Key: ", VFmt::Hex(8)),
    one("reth.dma_len", U, "RETH DMA length, bytes (32 bits)", |p| {
        p.ext().and_then(|e| e.reth).map(|r| VU(r.dma_len.into()))
    }).v("DMA Length: ", VFmt::Dec),
    one("atomic_eth", P, "AtomicETH (IBTA §9.3.4)", |p| {
        p.ext().and_then(|e| e.atomic_eth).map(|_| VP)
    }).no_col("a header: the Parquet table has its fields' columns, null where the packet lacks it").v("Atomic ETH (AtomicETH)", VFmt::Nothing),
    one(
        "atomic_eth.va",
        U,
        "AtomicETH virtual address (64 bits)",
        |p| p.ext().and_then(|e| e.atomic_eth).map(|a| VU(a.va)),
    ).v("Virtual Address: ", VFmt::Hex(16)),
    one(
        "atomic_eth.rkey",
        U,
        "AtomicETH remote key (32 bits)",
        |p| {
            p.ext()
                .and_then(|e| e.atomic_eth)
                .map(|a| VU(a.rkey.into()))
        },
    ).v("Remote Key: ", VFmt::Hex(8)),
    one(
        "atomic_eth.swap_add",
        U,
        "AtomicETH swap or add data (64 bits)",
        |p| p.ext().and_then(|e| e.atomic_eth).map(|a| VU(a.swap_add)),
    ).v("Swap (or Add) Data: ", VFmt::Hex(16)),
    one(
        "atomic_eth.compare",
        U,
        "AtomicETH compare data (64 bits)",
        |p| p.ext().and_then(|e| e.atomic_eth).map(|a| VU(a.compare)),
    ).v("Compare Data: ", VFmt::Hex(16)),
    one("aeth", P, "AETH (IBTA §9.3.5)", |p| {
        p.ext().and_then(|e| e.aeth).map(|_| VP)
    }).no_col("a header: the Parquet table has its fields' columns, null where the packet lacks it").v("ACK ETH (AETH)", VFmt::Nothing),
    one("aeth.syndrome", U, "AETH syndrome (8 bits)", |p| {
        p.ext().and_then(|e| e.aeth).map(|a| VU(a.syndrome.into()))
    }).v("Syndrome: ", VFmt::Hex(2)),
    one(
        "aeth.kind",
        S,
        "AETH kind: ack, rnr_nak, nak, reserved",
        |p| aeth_kind(p).map(|k| VS(k.name())),
    ).no_v("-V spells the kind out in the Syndrome line: ACK, RNR NAK, NAK, reserved"),
    one("aeth.value", U, "AETH syndrome's low 5 bits", |p| {
        p.ext()
            .and_then(|e| e.aeth)
            .map(|a| VU((a.syndrome & 0x1f).into()))
    }).no_v("-V shows it as the credit or timer code of the Syndrome line, or by the NAK's name"),
    one(
        "aeth.credits",
        U,
        "ACK credits (absent when unlimited, code 31)",
        |p| match aeth_kind(p)? {
            AethKind::Ack { credits, .. } => Some(credits.map_or(Value::Null, |c| VU(c.into()))),
            _ => None,
        },
    ).vu("= ", VFmt::Dec, " credits"),
    one(
        "aeth.rnr_timer_ms",
        F,
        "RNR NAK timer, ms",
        |p| match aeth_kind(p)? {
            AethKind::RnrNak { timer_us, .. } => Some(Value::Float(f64::from(timer_us) / 1000.0)),
            _ => None,
        },
    ).vu("= ", VFmt::Cents, " ms"),
    one(
        "aeth.nak",
        S,
        "NAK code: psn_seq_err, invalid_request, remote_access, …",
        |p| match aeth_kind(p)? {
            AethKind::Nak(c) => Some(VS(c.name())),
            _ => None,
        },
    ).v("NAK: ", VFmt::Text),
    one(
        "aeth.msn",
        U,
        "AETH message sequence number (24 bits)",
        |p| p.ext().and_then(|e| e.aeth).map(|a| VU(a.msn.into())),
    ).v("Message Sequence Number: ", VFmt::Dec),
    one("atomic_ack_eth", P, "AtomicAckETH (IBTA §9.3.6)", |p| {
        p.ext().and_then(|e| e.atomic_ack_eth).map(|_| VP)
    }).no_col("a header: the Parquet table has its fields' columns, null where the packet lacks it").v("Atomic ACK ETH (AtomicAckETH)", VFmt::Nothing),
    one(
        "atomic_ack_eth.orig",
        U,
        "AtomicAckETH original remote data (64 bits)",
        |p| p.ext().and_then(|e| e.atomic_ack_eth).map(|a| VU(a.orig)),
    ).v("Original Remote Data: ", VFmt::Hex(16)),
    one("imm", U, "immediate data (32 bits)", |p| {
        p.ext().and_then(|e| e.imm).map(|v| VU(v.into()))
    }).v("Immediate Data (ImmDt): ", VFmt::Hex(8)),
    one("ieth", P, "IETH (IBTA §9.3.8)", |p| {
        p.ext().and_then(|e| e.ieth).map(|_| VP)
    }).no_col("a header: the Parquet table has its fields' columns, null where the packet lacks it").v("Invalidate ETH (IETH)", VFmt::Nothing),
    one(
        "ieth.rkey",
        U,
        "IETH remote key to invalidate (32 bits)",
        |p| p.ext().and_then(|e| e.ieth).map(|v| VU(v.into())),
    ).v("R_Key ", VFmt::Hex(8)),
    one(
        "payload_len",
        U,
        "payload bytes after every transport header, without pad and ICRC",
        |p| {
            p.roce()
                .filter(|r| r.bth.is_some())
                .map(|r| VU(r.payload_len.into()))
        },
    ).vu("Payload: ", VFmt::Dec, " bytes").only("-V shows it only for opcodes that carry a payload"),
    one("icrc", P, "ICRC check of a RoCE packet", |p| {
        p.roce().map(|_| VP)
    }).no_col("a header: the Parquet table has its fields' columns, null where the packet lacks it").v("ICRC: ", VFmt::Nothing).only("a packet without its BTH: -V stops at `Base Transport Header: not captured`"),
    one("icrc.status", S, "ICRC: good, bad, unchecked", |p| {
        p.roce().map(|r| VS(r.icrc.status_name()))
    }).no_v("-V marks it `[good]`, `[bad]` or `unchecked (why)`"),
    one(
        "icrc.reason",
        S,
        "why unchecked: truncated, malformed, no-rule",
        |p| match p.roce()?.icrc.status {
            IcrcStatus::Unchecked(r) => Some(VS(r.name())),
            _ => None,
        },
    ).no_v("-V words it: cut by the snap length, packet malformed, no rule for this opcode"),
    one("icrc.value", U, "ICRC on the wire (CRC-32 value)", |p| {
        p.roce().map(|r| r.icrc.value.map_or(Value::Null, |v| VU(v.into())))
    }).v("ICRC: ", VFmt::Hex(8)),
    one("icrc.expected", U, "ICRC computed (CRC-32 value)", |p| {
        p.roce().map(|r| r.icrc.expected.map_or(Value::Null, |v| VU(v.into())))
    }).v("expected ", VFmt::Hex(8)).only("-V shows it only when the ICRC is bad"),
    one(
        "malformed",
        S,
        "why the packet or frame is malformed",
        |p| match &p.frame.kind {
            FrameKind::Roce(r) => r.malformed.map(|m| Value::Text(m.to_string())),
            FrameKind::Other(OtherKind::Undecodable(u)) if !u.is_truncation() => {
                Some(Value::Text(u.to_string()))
            }
            FrameKind::Other(_) => None,
        },
    ).v("[MALFORMED] ", VFmt::Text).only("a packet without its BTH: -V stops at `Base Transport Header: not captured`; a frame that is not RoCE: no tree"),
    one(
        "truncated",
        B,
        "the capture cut the frame (present only then)",
        |p| {
            let cut = match &p.frame.kind {
                FrameKind::Roce(r) => r.truncated,
                FrameKind::Other(OtherKind::Undecodable(u)) => u.is_truncation(),
                FrameKind::Other(_) => false,
            };
            cut.then_some(VB(true))
        },
    ).v("[TRUNCATED]", VFmt::Nothing).only("a packet without its BTH: -V stops at `Base Transport Header: not captured`; a frame that is not RoCE: no tree"),
    one(
        "proto",
        S,
        "a frame that is not RoCE: udp, tcp, arp, ib-non-iba",
        |p| match p.other()? {
            OtherKind::Udp { .. } => Some(VS("udp")),
            OtherKind::Tcp { .. } => Some(VS("tcp")),
            OtherKind::Arp => Some(VS("arp")),
            OtherKind::IbNonIba => Some(VS("ib-non-iba")),
            _ => None,
        },
    ).no_col("the Parquet `packets` table has RoCE frames only").no_v("-V prints no header tree for a frame that is not RoCE"),
    one(
        "src_port",
        U,
        "UDP/TCP source port of a frame that is not RoCE",
        |p| p.other().and_then(ports).map(|(s, _)| VU(s.into())),
    ).no_col("the Parquet `packets` table has RoCE frames only").no_v("-V prints no header tree for a frame that is not RoCE"),
    one(
        "dst_port",
        U,
        "UDP/TCP destination port of a frame that is not RoCE",
        |p| p.other().and_then(ports).map(|(_, d)| VU(d.into())),
    ).no_col("the Parquet `packets` table has RoCE frames only").no_v("-V prints no header tree for a frame that is not RoCE"),
    one(
        "ip_proto",
        U,
        "IP protocol of a frame that is not RoCE, UDP or TCP",
        |p| match p.other()? {
            OtherKind::Ip { protocol } => Some(VU((*protocol).into())),
            _ => None,
        },
    ).no_col("the Parquet `packets` table has RoCE frames only").no_v("-V prints no header tree for a frame that is not RoCE"),
    one(
        "ethertype",
        U,
        "Ethertype of a non-IP frame (16 bits)",
        |p| match p.other()? {
            OtherKind::EtherType(t) => Some(VU((*t).into())),
            _ => None,
        },
    ).no_col("the Parquet `packets` table has RoCE frames only").v("Ethertype ", VFmt::Hex(4)),
    one(
        "erf_type",
        U,
        "ERF record type of a record that is not Ethernet or IB",
        |p| match p.other()? {
            OtherKind::ErfType(t) => Some(VU((*t).into())),
            _ => None,
        },
    ).no_col("the Parquet `packets` table has RoCE frames only").no_v("-V prints no header tree for a frame that is not RoCE"),
    one(
        "error",
        S,
        "why a frame's link or IP header could not be parsed",
        |p| match p.other()? {
            OtherKind::Undecodable(u) => Some(Value::Text(u.to_string())),
            _ => None,
        },
    ).no_col("the Parquet `packets` table has RoCE frames only").no_v("-V prints no header tree for a frame that is not RoCE"),
    one("analysis", P, "the frame has analysis marks", |p| {
        p.mark(|m| (!m.is_empty()).then_some(VP))
    }).no_col("a header: the Parquet table has its marks' columns, null where unset").no_v("-V --marks shows analysis marks on the summary line (`[RETX]`, `[GAP n]`), not in the tree"),
    one(
        "analysis.retransmission",
        B,
        "its PSN was already carried by the flow",
        |p| p.mark(|m| m.retransmission.then_some(VB(true))),
    ).no_v("-V --marks shows analysis marks on the summary line (`[RETX]`, `[GAP n]`), not in the tree"),
    one(
        "analysis.out_of_order",
        B,
        "behind the expected PSN but not seen before",
        |p| p.mark(|m| m.out_of_order.then_some(VB(true))),
    ).no_v("-V --marks shows analysis marks on the summary line (`[RETX]`, `[GAP n]`), not in the tree"),
    one(
        "analysis.duplicate",
        B,
        "a UD packet behind its sender's sequence",
        |p| p.mark(|m| m.duplicate.then_some(VB(true))),
    ).no_v("-V --marks shows analysis marks on the summary line (`[RETX]`, `[GAP n]`), not in the tree"),
    one(
        "analysis.after_gap",
        B,
        "the first packet after a PSN gap",
        |p| p.mark(|m| (m.gap > 0).then_some(VB(true))),
    ).no_v("-V --marks shows analysis marks on the summary line (`[RETX]`, `[GAP n]`), not in the tree"),
    one("analysis.gap", U, "PSNs missing before this packet", |p| {
        p.mark(|m| (m.gap > 0).then_some(VU(m.gap.into())))
    }).no_v("-V --marks shows analysis marks on the summary line (`[RETX]`, `[GAP n]`), not in the tree"),
    one(
        "analysis.naked",
        B,
        "a NAK named its PSN (may be set late)",
        |p| p.mark(|m| m.naked.then_some(VB(true))),
    ).no_v("-V --marks shows analysis marks on the summary line (`[RETX]`, `[GAP n]`), not in the tree"),
    one(
        "analysis.nak_reason",
        S,
        "on a NAK: its code (psn_seq_err, rnr, …)",
        |p| p.mark(|m| m.nak_reason.map(VS)),
    ).no_v("-V --marks shows analysis marks on the summary line (`[RETX]`, `[GAP n]`), not in the tree"),
    one(
        "analysis.ack_rtt_ns",
        U,
        "on an ACK: time since the AckReq request it covers, ns",
        |p| p.mark(|m| m.ack_rtt_ns.map(VU)),
    ).no_v("-V --marks shows analysis marks on the summary line (`[RETX]`, `[GAP n]`), not in the tree"),
    one(
        "analysis.cnp_for",
        U,
        "on a CNP: frame number of the CE packet it answers",
        |p| p.mark(|m| m.cnp_for.map(VU)),
    ).no_v("-V --marks shows analysis marks on the summary line (`[RETX]`, `[GAP n]`), not in the tree"),
    one(
        "analysis.message",
        U,
        "id of the message it was accepted into (frame number that began it, as --messages)",
        |p| p.mark(|m| m.message.map(VU)),
    ).no_v("-V --marks shows analysis marks on the summary line (`[RETX]`, `[GAP n]`), not in the tree"),
];

fn lrh(p: &Pkt<'_, '_>, f: fn(&crate::decode::Lrh) -> u64) -> Option<Value> {
    p.roce().and_then(|r| r.lrh.as_ref()).map(|l| VU(f(l)))
}

fn grh(p: &Pkt<'_, '_>, f: impl FnOnce(&crate::decode::Grh) -> Value) -> Option<Value> {
    p.roce().and_then(|r| r.grh.as_ref()).map(f)
}

fn erspan3(
    p: &Pkt<'_, '_>,
    i: usize,
    f: impl FnOnce(&crate::decode::encap::Erspan3) -> Value,
) -> Option<Value> {
    erspan3_opt(p, i, |e| Some(f(e)))
}

fn erspan3_opt(
    p: &Pkt<'_, '_>,
    i: usize,
    f: impl FnOnce(&crate::decode::encap::Erspan3) -> Option<Value>,
) -> Option<Value> {
    match &p.layer(i)?.kind {
        EncapKind::Erspan3(_, e) => f(e),
        _ => None,
    }
}

fn vxlan(p: &Pkt<'_, '_>, i: usize, f: fn(u16, u16, u8, u32) -> u64) -> Option<Value> {
    match p.layer(i)?.kind {
        EncapKind::Vxlan {
            src_port,
            dst_port,
            flags,
            vni,
        } => Some(VU(f(src_port, dst_port, flags, vni))),
        _ => None,
    }
}

/// `--list-fields`: one line per field, `name<TAB>type<TAB>description`, in the order of
/// [`FIELDS`] (as `tshark -G fields` lists its fields, one per line, tab-separated).
///
/// # Errors
/// The writer's I/O error.
pub fn write_list(out: &mut dyn std::io::Write) -> std::io::Result<()> {
    for f in FIELDS {
        writeln!(out, "{}\t{}\t{}", f.name, f.ty.name(), f.desc)?;
    }
    out.flush()
}
