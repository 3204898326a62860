//! The report tables (`flows`, `connections`, `gaps`): one row per item of the
//! `--summary --json` document's array of that name. Items of any `Serialize` type are
//! flattened ([`super::flat`]) as their JSON form would be, so keys added to the report appear
//! as columns without a change here.
//!
//! Rules (documented in README, "Parquet export"):
//! - a nested object's keys are joined to its key with `_` (`psn.gap_events` → `psn_gap_events`;
//!   `opcodes.CNP` → `opcodes_CNP`), to any depth; an object that is `null` in a row leaves its
//!   columns null in that row; a column exists only if some row has a value for it, so a key
//!   that is `null` in every row has no column (its type is unknown, and an all-null column
//!   would clash with the typed one of another capture when engines merge the schemas);
//! - a column's type comes from its values: non-negative integers → UInt64, integers with a
//!   negative one → Int64, any fraction → Float64, booleans → Boolean, strings → Utf8;
//! - arrays, and columns whose values mix kinds (e.g. a string in one row and a number in
//!   another), are Utf8 holding each value's JSON text.
//!
//! The columns are known only when every item was seen, so items are first written to a spill
//! ([`TableSpill`]: a compact binary form in memory) while the columns are inferred, then read
//! back into record batches ([`ReportRows`]). (`messages`, one row per message of a long run,
//! has fixed columns that follow the same rules: [`super::messages`].)

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Float64Builder, Int64Builder, StringBuilder, UInt64Builder,
};
use arrow_array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};
use serde::Serialize;

use super::flat::{Leaf, flatten};
use crate::analyze::fxhash::FxBuild;

/// What a column's values turned out to be, widened as rows are seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Null,
    Bool,
    U64,
    I64,
    F64,
    Str,
    /// Arrays and mixed kinds: JSON text.
    Json,
}

impl Kind {
    fn of(l: &Leaf<'_>) -> Kind {
        match l {
            Leaf::Null => Kind::Null,
            Leaf::Bool(_) => Kind::Bool,
            Leaf::U64(_) => Kind::U64,
            Leaf::I64(_) => Kind::I64,
            Leaf::F64(_) => Kind::F64,
            Leaf::Str(_) => Kind::Str,
            Leaf::Json(_) => Kind::Json,
        }
    }

    fn widen(self, other: Kind) -> Kind {
        use Kind::*;
        match (self, other) {
            (a, b) if a == b => a,
            (Null, k) | (k, Null) => k,
            (U64, I64) | (I64, U64) => I64,
            (U64 | I64, F64) | (F64, U64 | I64) => F64,
            _ => Json,
        }
    }

    fn data_type(self) -> DataType {
        match self {
            Kind::Bool => DataType::Boolean,
            Kind::U64 => DataType::UInt64,
            Kind::I64 => DataType::Int64,
            Kind::F64 => DataType::Float64,
            // Null: a key null in every row has no column (see `TableSpill::finish`).
            Kind::Null | Kind::Str | Kind::Json => DataType::Utf8,
        }
    }
}

/// Spill record: the row's length in bytes (u32 LE), then its leaves, each `column id` (u32
/// LE), a tag byte and the value; the row ends with [`END_OF_ROW`].
const END_OF_ROW: u32 = u32::MAX;
const T_NULL: u8 = 0;
const T_BOOL: u8 = 1;
const T_U64: u8 = 2;
const T_I64: u8 = 3;
const T_F64: u8 = 4;
const T_STR: u8 = 5;
const T_JSON: u8 = 6;

fn encode(buf: &mut Vec<u8>, id: u32, l: &Leaf<'_>) {
    buf.extend_from_slice(&id.to_le_bytes());
    let text = |buf: &mut Vec<u8>, tag: u8, s: &str| {
        buf.push(tag);
        buf.extend_from_slice(&(s.len() as u32).to_le_bytes());
        buf.extend_from_slice(s.as_bytes());
    };
    match l {
        Leaf::Null => buf.push(T_NULL),
        Leaf::Bool(b) => buf.extend_from_slice(&[T_BOOL, u8::from(*b)]),
        Leaf::U64(v) => {
            buf.push(T_U64);
            buf.extend_from_slice(&v.to_le_bytes());
        }
        Leaf::I64(v) => {
            buf.push(T_I64);
            buf.extend_from_slice(&v.to_le_bytes());
        }
        Leaf::F64(v) => {
            buf.push(T_F64);
            buf.extend_from_slice(&v.to_le_bytes());
        }
        Leaf::Str(s) => text(buf, T_STR, s),
        Leaf::Json(s) => text(buf, T_JSON, s),
    }
}

fn read_u32<R: Read>(r: &mut R) -> io::Result<u32> {
    let mut b = [0u8; 4];
    r.read_exact(&mut b)?;
    Ok(u32::from_le_bytes(b))
}

fn read_8<R: Read>(r: &mut R) -> io::Result<[u8; 8]> {
    let mut b = [0u8; 8];
    r.read_exact(&mut b)?;
    Ok(b)
}

/// Items of one table written to `out` in spill form, their columns inferred on the way.
pub struct TableSpill<W: Write> {
    out: W,
    ids: HashMap<String, u32, FxBuild>,
    /// The column id of each leaf position of the last item: items of one type mostly have the
    /// same leaves in the same order, so a name is checked against one guess before hashing.
    seq: Vec<u32>,
    names: Vec<String>,
    kinds: Vec<Kind>,
    path: String,
    buf: Vec<u8>,
    rows: u64,
}

impl<W: Write> TableSpill<W> {
    /// An empty spill writing to `out`.
    pub fn new(out: W) -> TableSpill<W> {
        TableSpill {
            out,
            ids: HashMap::default(),
            seq: Vec::new(),
            names: Vec::new(),
            kinds: Vec::new(),
            path: String::new(),
            buf: Vec::new(),
            rows: 0,
        }
    }

    /// Items pushed.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Flatten one item and write it out.
    ///
    /// # Errors
    /// The writer's error, or the item's own serialization error.
    pub fn push<T: Serialize + ?Sized>(&mut self, item: &T) -> io::Result<()> {
        let TableSpill {
            ids,
            seq,
            names,
            kinds,
            path,
            buf,
            ..
        } = self;
        buf.clear();
        path.clear();
        let mut pos = 0;
        flatten(item, path, &mut |name, l| {
            let guess = seq.get(pos).copied();
            let id = match guess.filter(|&g| names[g as usize] == name) {
                Some(id) => id,
                None => {
                    let id = match ids.get(name) {
                        Some(&id) => id,
                        None => {
                            let id = names.len() as u32;
                            ids.insert(name.to_string(), id);
                            names.push(name.to_string());
                            kinds.push(Kind::Null);
                            id
                        }
                    };
                    seq.truncate(pos);
                    seq.push(id);
                    id
                }
            };
            pos += 1;
            let k = &mut kinds[id as usize];
            *k = k.widen(Kind::of(&l));
            encode(buf, id, &l);
        })
        .map_err(io::Error::other)?;
        buf.extend_from_slice(&END_OF_ROW.to_le_bytes());
        self.rows += 1;
        self.out.write_all(&(self.buf.len() as u32).to_le_bytes())?;
        self.out.write_all(&self.buf)
    }

    /// The writer and the table's columns: `capture`, `host`, then the flattened keys in
    /// alphabetical order.
    pub fn finish(self) -> (W, TableLayout) {
        let mut order: Vec<usize> = (0..self.names.len())
            .filter(|&i| {
                let n = self.names[i].as_str();
                // A key that is `null` in every row (an absent statistic, an object no row has)
                // has no column: its type is unknown here, and a column of Parquet's null type
                // would clash with the typed column of the same name in another capture's
                // export (Spark's `mergeSchema` refuses INT and DECIMAL). `capture` and `host`
                // are ours.
                self.kinds[i] != Kind::Null && n != "capture" && n != "host"
            })
            .collect();
        order.sort_by(|&a, &b| self.names[a].cmp(&self.names[b]));
        let mut fields = vec![
            Field::new("capture", DataType::Utf8, false),
            Field::new("host", DataType::Utf8, false),
        ];
        let mut col_of = vec![None; self.names.len()];
        let mut kinds = Vec::with_capacity(order.len());
        for (c, &i) in order.iter().enumerate() {
            fields.push(Field::new(&self.names[i], self.kinds[i].data_type(), true));
            col_of[i] = Some(c);
            kinds.push(self.kinds[i]);
        }
        let layout = TableLayout {
            schema: Arc::new(Schema::new(fields)),
            kinds,
            col_of,
        };
        (self.out, layout)
    }
}

/// A report table's columns, and where each spilled column id goes.
pub struct TableLayout {
    schema: SchemaRef,
    kinds: Vec<Kind>,
    col_of: Vec<Option<usize>>,
}

impl TableLayout {
    /// The table's schema.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// Empty rows of this table.
    pub fn rows(&self) -> ReportRows {
        ReportRows {
            cols: self.kinds.iter().map(|k| Col::new(*k)).collect(),
            filled: vec![false; self.kinds.len()],
            text: Vec::new(),
            row: Vec::new(),
            len: 0,
        }
    }
}

/// Rows of a report table being collected into a record batch.
pub struct ReportRows {
    cols: Vec<Col>,
    filled: Vec<bool>,
    text: Vec<u8>,
    /// The spill record being read.
    row: Vec<u8>,
    len: usize,
}

impl ReportRows {
    /// Rows collected since the last batch.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no row was collected since the last batch.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Read one spilled row from `r` and append it; `false` at the end of the spill.
    ///
    /// # Errors
    /// The reader's error, or a damaged spill (`InvalidData`).
    pub fn read_row<R: Read>(&mut self, layout: &TableLayout, r: &mut R) -> io::Result<bool> {
        let mut lenb = [0u8; 4];
        match r.read_exact(&mut lenb) {
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(false),
            other => other?,
        }
        let mut row = std::mem::take(&mut self.row);
        row.resize(u32::from_le_bytes(lenb) as usize, 0);
        r.read_exact(&mut row)?;
        let done = self.parse_row(layout, &mut &row[..]);
        self.row = row;
        done.map(|()| true)
    }

    /// Append the row of the spill record `r` (without its length).
    fn parse_row(&mut self, layout: &TableLayout, r: &mut &[u8]) -> io::Result<()> {
        loop {
            let id = read_u32(r)?;
            if id == END_OF_ROW {
                break;
            }
            let mut tag = [0u8; 1];
            r.read_exact(&mut tag)?;
            let leaf = match tag[0] {
                T_NULL => Leaf::Null,
                T_BOOL => {
                    r.read_exact(&mut tag)?;
                    Leaf::Bool(tag[0] != 0)
                }
                T_U64 => Leaf::U64(u64::from_le_bytes(read_8(r)?)),
                T_I64 => Leaf::I64(i64::from_le_bytes(read_8(r)?)),
                T_F64 => Leaf::F64(f64::from_le_bytes(read_8(r)?)),
                t @ (T_STR | T_JSON) => {
                    let n = read_u32(r)? as usize;
                    self.text.resize(n, 0);
                    r.read_exact(&mut self.text)?;
                    let s = std::str::from_utf8(&self.text)
                        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
                    if t == T_STR {
                        Leaf::Str(s)
                    } else {
                        Leaf::Json(s.to_string())
                    }
                }
                _ => return Err(io::Error::new(io::ErrorKind::InvalidData, "bad spill tag")),
            };
            if let Some(c) = layout.col_of.get(id as usize).copied().flatten() {
                self.cols[c].push(&leaf);
                self.filled[c] = true;
            }
        }
        for (c, f) in self.cols.iter_mut().zip(self.filled.iter_mut()) {
            if !*f {
                c.push(&Leaf::Null);
            }
            *f = false;
        }
        self.len += 1;
        Ok(())
    }

    /// The rows collected so far as a record batch; the rows start again empty.
    ///
    /// # Errors
    /// Arrow's error if the columns disagree with the schema (a bug).
    pub fn take_batch(
        &mut self,
        layout: &TableLayout,
        capture: &str,
        host: &str,
    ) -> Result<RecordBatch, ArrowError> {
        let n = std::mem::take(&mut self.len);
        let mut cap = StringBuilder::new();
        let mut hst = StringBuilder::new();
        for _ in 0..n {
            cap.append_value(capture);
            hst.append_value(host);
        }
        let mut arrays: Vec<ArrayRef> = Vec::with_capacity(self.cols.len() + 2);
        arrays.push(Arc::new(cap.finish()));
        arrays.push(Arc::new(hst.finish()));
        arrays.extend(self.cols.iter_mut().map(Col::finish));
        let opts = RecordBatchOptions::new().with_row_count(Some(n));
        RecordBatch::try_new_with_options(layout.schema(), arrays, &opts)
    }
}

/// A leaf as JSON text (for columns of mixed kinds).
fn json_text(l: &Leaf<'_>) -> String {
    match l {
        Leaf::Null => "null".to_string(),
        Leaf::Bool(b) => b.to_string(),
        Leaf::U64(v) => v.to_string(),
        Leaf::I64(v) => v.to_string(),
        Leaf::F64(v) => serde_json::to_string(v).unwrap_or_default(),
        Leaf::Str(s) => serde_json::to_string(s).unwrap_or_default(),
        Leaf::Json(t) => t.clone(),
    }
}

/// One column's builder, by kind.
enum Col {
    Bool(BooleanBuilder),
    U64(UInt64Builder),
    I64(Int64Builder),
    F64(Float64Builder),
    Str(StringBuilder),
    Json(StringBuilder),
}

impl Col {
    fn new(k: Kind) -> Col {
        match k {
            Kind::Bool => Col::Bool(BooleanBuilder::new()),
            Kind::U64 => Col::U64(UInt64Builder::new()),
            Kind::I64 => Col::I64(Int64Builder::new()),
            Kind::F64 => Col::F64(Float64Builder::new()),
            Kind::Null | Kind::Str => Col::Str(StringBuilder::new()),
            Kind::Json => Col::Json(StringBuilder::new()),
        }
    }

    /// Append a leaf (null for `Leaf::Null`), converted to the column's kind (the kind was
    /// widened to hold every leaf of the column).
    fn push(&mut self, l: &Leaf<'_>) {
        match (self, l) {
            (Col::Bool(b), Leaf::Bool(v)) => b.append_value(*v),
            (Col::U64(b), Leaf::U64(v)) => b.append_value(*v),
            (Col::I64(b), Leaf::U64(v)) => b.append_option(i64::try_from(*v).ok()),
            (Col::I64(b), Leaf::I64(v)) => b.append_value(*v),
            (Col::F64(b), Leaf::U64(v)) => b.append_value(*v as f64),
            (Col::F64(b), Leaf::I64(v)) => b.append_value(*v as f64),
            (Col::F64(b), Leaf::F64(v)) => b.append_value(*v),
            (Col::Str(b), Leaf::Str(v)) => b.append_value(v),
            (Col::Json(b), Leaf::Null) => b.append_null(),
            (Col::Json(b), l) => b.append_value(json_text(l)),
            (Col::Bool(b), _) => b.append_null(),
            (Col::U64(b), _) => b.append_null(),
            (Col::I64(b), _) => b.append_null(),
            (Col::F64(b), _) => b.append_null(),
            (Col::Str(b), _) => b.append_null(),
        }
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Col::Bool(b) => Arc::new(b.finish()),
            Col::U64(b) => Arc::new(b.finish()),
            Col::I64(b) => Arc::new(b.finish()),
            Col::F64(b) => Arc::new(b.finish()),
            Col::Str(b) | Col::Json(b) => Arc::new(b.finish()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Array;
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Float64Type, Int64Type, UInt64Type};
    use serde_json::json;

    #[test]
    fn flattens_and_infers_types_per_column() {
        let items = [
            json!({"id": 0, "psn": {"first": 5, "last": null}, "ce_fraction": 0.5,
                   "transport": "RC", "msn": [1, 2], "nak": null, "delta": 3, "odd": 1, "retx": null}),
            json!({"id": 1, "psn": {"first": null, "last": 9}, "ce_fraction": 0.0,
                   "transport": "UD", "msn": [], "nak": {"frame": 7}, "delta": -2, "odd": "x", "retx": null}),
        ];
        let mut spill = TableSpill::new(Vec::new());
        items.iter().for_each(|i| spill.push(i).unwrap());
        let (bytes, t) = spill.finish();
        let names: Vec<_> = t
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        assert_eq!(
            names,
            [
                "capture",
                "host",
                "ce_fraction",
                "delta",
                "id",
                "msn",
                "nak_frame",
                "odd",
                "psn_first",
                "psn_last",
                "transport"
            ]
        );
        let mut rows = t.rows();
        let mut r = &bytes[..];
        while rows.read_row(&t, &mut r).unwrap() {}
        assert_eq!(rows.len(), 2);
        let b = rows.take_batch(&t, "a.pcap", "h").unwrap();
        let col = |n: &str| b.column_by_name(n).unwrap().clone();
        assert_eq!(col("capture").as_string::<i32>().value(1), "a.pcap");
        assert_eq!(col("id").as_primitive::<UInt64Type>().value(1), 1);
        assert_eq!(col("delta").as_primitive::<Int64Type>().value(1), -2);
        assert_eq!(
            col("ce_fraction").as_primitive::<Float64Type>().value(0),
            0.5
        );
        assert_eq!(col("psn_first").as_primitive::<UInt64Type>().value(0), 5);
        assert!(col("psn_first").is_null(1));
        assert!(col("psn_last").is_null(0));
        assert_eq!(col("msn").as_string::<i32>().value(0), "[1,2]");
        assert_eq!(col("msn").as_string::<i32>().value(1), "[]");
        // `nak` is null in row 0 and an object in row 1: its columns only, null in row 0.
        assert!(col("nak_frame").is_null(0));
        // `retx` is null in every row: no column.
        assert!(b.column_by_name("retx").is_none());
        assert_eq!(col("nak_frame").as_primitive::<UInt64Type>().value(1), 7);
        // Mixed kinds: JSON text.
        assert_eq!(col("odd").as_string::<i32>().value(0), "1");
        assert_eq!(col("odd").as_string::<i32>().value(1), "\"x\"");
    }

    #[test]
    fn empty_table_has_capture_and_host_only() {
        let (bytes, t) = TableSpill::new(Vec::new()).finish();
        assert!(bytes.is_empty());
        assert_eq!(t.schema().fields().len(), 2);
        let mut rows = t.rows();
        assert!(!rows.read_row(&t, &mut &bytes[..]).unwrap());
        assert_eq!(rows.take_batch(&t, "a.pcap", "h").unwrap().num_rows(), 0);
    }
}
