//! The report tables (`flows`, `connections`, `messages`, `gaps`): one row per item of the
//! `--summary --json` document's array of that name, built from its `serde_json::Value` so that
//! keys added to the report appear as columns without a change here.
//!
//! Rules (documented in README, "Parquet export"):
//! - a nested object's keys are joined to its key with `_` (`psn.gap_events` → `psn_gap_events`;
//!   `opcodes.CNP` → `opcodes_CNP`), to any depth; an object that is `null` in a row leaves its
//!   columns null in that row; a column exists only if some row has a value or a `null` for it,
//!   so an object that is `null` in every row is one all-null column of its own name;
//! - a column's type comes from its values: non-negative integers → UInt64, integers with a
//!   negative one → Int64 (Float64 past `i64::MAX`), any fraction → Float64, booleans → Boolean,
//!   strings → Utf8, nothing but nulls → Null (Parquet's `UNKNOWN` logical type);
//! - arrays, and columns whose values mix kinds (e.g. a string in one row and a number in
//!   another), are Utf8 holding each value's JSON text.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Float64Builder, Int64Builder, StringBuilder, UInt64Builder,
};
use arrow_array::{ArrayRef, NullArray, RecordBatch, RecordBatchOptions};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};
use serde_json::Value;

/// The names of the report tables: keys of the `--summary --json` document holding arrays.
pub const REPORT_TABLES: [&str; 4] = ["flows", "connections", "messages", "gaps"];

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
    fn of(v: &Value) -> Kind {
        match v {
            Value::Null => Kind::Null,
            Value::Bool(_) => Kind::Bool,
            Value::Number(n) if n.is_u64() => Kind::U64,
            Value::Number(n) if n.is_i64() => Kind::I64,
            Value::Number(_) => Kind::F64,
            Value::String(_) => Kind::Str,
            Value::Array(_) | Value::Object(_) => Kind::Json,
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
            Kind::Null => DataType::Null,
            Kind::Bool => DataType::Boolean,
            Kind::U64 => DataType::UInt64,
            Kind::I64 => DataType::Int64,
            Kind::F64 => DataType::Float64,
            Kind::Str | Kind::Json => DataType::Utf8,
        }
    }
}

/// Call `leaf(path, value)` for every leaf of `item` (an object's keys joined with `_`; a
/// non-object item is one leaf named `value`), reusing `path` as the buffer for the names.
fn walk(item: &Value, path: &mut String, leaf: &mut impl FnMut(&str, &Value)) {
    match item {
        Value::Object(map) => {
            let len = path.len();
            for (k, x) in map {
                if len > 0 {
                    path.push('_');
                }
                path.push_str(k);
                walk_inner(x, path, leaf);
                path.truncate(len);
            }
        }
        other => leaf("value", other),
    }
}

fn walk_inner(v: &Value, path: &mut String, leaf: &mut impl FnMut(&str, &Value)) {
    match v {
        Value::Object(_) => walk(v, path, leaf),
        other => leaf(path, other),
    }
}

/// A report table's columns, inferred from its items: [`ReportSchema::add`] each, then
/// [`ReportSchema::finish`] fixes them; [`ReportSchema::rows`] then collects rows.
#[derive(Default)]
pub struct ReportSchema {
    kinds: BTreeMap<String, Kind>,
    path: String,
    schema: Option<SchemaRef>,
    columns: Vec<Kind>,
    index: HashMap<String, usize>,
}

impl ReportSchema {
    /// Widen the columns by one item.
    pub fn add(&mut self, item: &Value) {
        let kinds = &mut self.kinds;
        self.path.clear();
        walk(
            item,
            &mut self.path,
            &mut |name, v| match kinds.get_mut(name) {
                Some(k) => *k = k.widen(Kind::of(v)),
                None => {
                    kinds.insert(name.to_string(), Kind::of(v));
                }
            },
        );
    }

    /// Fix the columns: `capture`, `host`, then the flattened keys in alphabetical order.
    pub fn finish(mut self) -> ReportSchema {
        let kinds = &mut self.kinds;
        // An object that is `null` in some rows only nulls its columns there: no column of its
        // own name next to them.
        let objects: Vec<String> = kinds
            .iter()
            .filter(|(n, k)| {
                **k == Kind::Null
                    && kinds.keys().any(|m| {
                        m.strip_prefix(n.as_str())
                            .is_some_and(|r| r.starts_with('_'))
                    })
            })
            .map(|(n, _)| n.clone())
            .collect();
        for n in objects {
            kinds.remove(&n);
        }
        // `capture` and `host` come first; a report key of the same name would be ambiguous.
        kinds.remove("capture");
        kinds.remove("host");
        let mut fields = vec![
            Field::new("capture", DataType::Utf8, false),
            Field::new("host", DataType::Utf8, false),
        ];
        fields.extend(
            kinds
                .iter()
                .map(|(n, k)| Field::new(n.clone(), k.data_type(), true)),
        );
        self.schema = Some(Arc::new(Schema::new(fields)));
        for (i, (name, kind)) in std::mem::take(kinds).into_iter().enumerate() {
            self.index.insert(name, i);
            self.columns.push(kind);
        }
        self
    }

    /// The table's schema (after [`ReportSchema::finish`]).
    pub fn schema(&self) -> SchemaRef {
        self.schema
            .clone()
            .unwrap_or_else(|| Arc::new(Schema::empty()))
    }

    /// Empty rows of this table (after [`ReportSchema::finish`]).
    pub fn rows(&self) -> ReportRows {
        ReportRows {
            cols: self.columns.iter().map(|k| Col::new(*k)).collect(),
            filled: vec![false; self.columns.len()],
            path: String::new(),
            len: 0,
        }
    }

    /// `items` as one record batch of `capture` taken on `host`.
    ///
    /// # Errors
    /// Arrow's error if the columns disagree with the schema (a bug).
    pub fn batch(
        &self,
        items: &[Value],
        capture: &str,
        host: &str,
    ) -> Result<RecordBatch, ArrowError> {
        let mut rows = self.rows();
        items.iter().for_each(|it| rows.push(self, it));
        rows.take_batch(self, capture, host)
    }
}

/// Rows of a report table being collected into a record batch.
pub struct ReportRows {
    cols: Vec<Col>,
    filled: Vec<bool>,
    path: String,
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

    /// Append one item as a row; keys `layout` does not know (not seen by `add`) are ignored.
    pub fn push(&mut self, layout: &ReportSchema, item: &Value) {
        let (cols, filled) = (&mut self.cols, &mut self.filled);
        self.path.clear();
        walk(item, &mut self.path, &mut |name, v| {
            if let Some(&i) = layout.index.get(name) {
                cols[i].push(Some(v).filter(|v| !v.is_null()));
                filled[i] = true;
            }
        });
        for (c, f) in cols.iter_mut().zip(filled.iter_mut()) {
            if !*f {
                c.push(None);
            }
            *f = false;
        }
        self.len += 1;
    }

    /// The rows collected so far as a record batch; the rows start again empty.
    ///
    /// # Errors
    /// Arrow's error if the columns disagree with the schema (a bug).
    pub fn take_batch(
        &mut self,
        layout: &ReportSchema,
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

/// One column's builder, by kind.
enum Col {
    Null(usize),
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
            Kind::Null => Col::Null(0),
            Kind::Bool => Col::Bool(BooleanBuilder::new()),
            Kind::U64 => Col::U64(UInt64Builder::new()),
            Kind::I64 => Col::I64(Int64Builder::new()),
            Kind::F64 => Col::F64(Float64Builder::new()),
            Kind::Str => Col::Str(StringBuilder::new()),
            Kind::Json => Col::Json(StringBuilder::new()),
        }
    }

    /// Append a value (`None`: null), converted to the column's kind.
    fn push(&mut self, v: Option<&Value>) {
        match self {
            Col::Null(n) => *n += 1,
            Col::Bool(b) => b.append_option(v.and_then(Value::as_bool)),
            Col::U64(b) => b.append_option(v.and_then(Value::as_u64)),
            Col::I64(b) => b.append_option(v.and_then(Value::as_i64)),
            Col::F64(b) => b.append_option(v.and_then(Value::as_f64)),
            Col::Str(b) => b.append_option(v.and_then(Value::as_str)),
            Col::Json(b) => match v {
                Some(v) => {
                    let _ = write!(b, "{v}");
                    b.append_value("");
                }
                None => b.append_null(),
            },
        }
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Col::Null(n) => Arc::new(NullArray::new(std::mem::take(n))),
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
        let items = vec![
            json!({"id": 0, "psn": {"first": 5, "last": null}, "ce_fraction": 0.5,
                   "transport": "RC", "msn": [1, 2], "nak": null, "delta": 3, "odd": 1, "retx": null}),
            json!({"id": 1, "psn": {"first": null, "last": 9}, "ce_fraction": 0.0,
                   "transport": "UD", "msn": [], "nak": {"frame": 7}, "delta": -2, "odd": "x", "retx": null}),
        ];
        let mut t = ReportSchema::default();
        items.iter().for_each(|i| t.add(i));
        let t = t.finish();
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
                "retx",
                "transport"
            ]
        );
        let b = t.batch(&items, "a.pcap", "h").unwrap();
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
        // `retx` is null in every row: one all-null column.
        assert_eq!(col("retx").data_type(), &DataType::Null);
        assert_eq!(col("nak_frame").as_primitive::<UInt64Type>().value(1), 7);
        // Mixed kinds: JSON text.
        assert_eq!(col("odd").as_string::<i32>().value(0), "1");
        assert_eq!(col("odd").as_string::<i32>().value(1), "\"x\"");
    }

    #[test]
    fn empty_table_has_capture_and_host_only() {
        let t = ReportSchema::default().finish();
        assert_eq!(t.schema().fields().len(), 2);
        assert_eq!(t.batch(&[], "a.pcap", "h").unwrap().num_rows(), 0);
    }
}
