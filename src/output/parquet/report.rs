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

use std::collections::BTreeMap;
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

/// One row: flattened column name → leaf value (never an object).
type Row<'v> = BTreeMap<String, &'v Value>;

/// Flatten `v` (an object) into `row`, names prefixed with `prefix`.
fn flatten<'v>(prefix: &str, v: &'v Value, row: &mut Row<'v>) {
    match v {
        Value::Object(map) => {
            for (k, x) in map {
                let name = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}_{k}")
                };
                flatten(&name, x, row);
            }
        }
        leaf => {
            row.insert(prefix.to_string(), leaf);
        }
    }
}

/// Flatten one item into a row (a non-object item becomes a `value` column).
fn row(item: &Value) -> Row<'_> {
    let mut row = Row::new();
    match item {
        Value::Object(_) => flatten("", item, &mut row),
        other => {
            row.insert("value".to_string(), other);
        }
    }
    row
}

/// A report table's columns, inferred from its items ([`ReportSchema::add`] each, then
/// [`ReportSchema::finish`]); then turns items into record batches.
#[derive(Default)]
pub struct ReportSchema {
    kinds: BTreeMap<String, Kind>,
    schema: Option<SchemaRef>,
    columns: Vec<(String, Kind)>,
}

impl ReportSchema {
    /// Widen the columns by one item.
    pub fn add(&mut self, item: &Value) {
        for (name, v) in row(item) {
            let k = self.kinds.entry(name).or_insert(Kind::Null);
            *k = k.widen(Kind::of(v));
        }
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
        self.columns = std::mem::take(kinds).into_iter().collect();
        self
    }

    /// The table's schema (after [`ReportSchema::finish`]).
    pub fn schema(&self) -> SchemaRef {
        self.schema
            .clone()
            .unwrap_or_else(|| Arc::new(Schema::empty()))
    }

    /// `items` as a record batch of `capture` taken on `host`.
    ///
    /// # Errors
    /// Arrow's error if the columns disagree with the schema (an item not seen by `add`).
    pub fn batch(
        &self,
        items: &[Value],
        capture: &str,
        host: &str,
    ) -> Result<RecordBatch, ArrowError> {
        let rows: Vec<Row<'_>> = items.iter().map(row).collect();
        let mut cols: Vec<ArrayRef> = Vec::with_capacity(self.columns.len() + 2);
        let mut cap = StringBuilder::new();
        let mut hst = StringBuilder::new();
        for _ in &rows {
            cap.append_value(capture);
            hst.append_value(host);
        }
        cols.push(Arc::new(cap.finish()));
        cols.push(Arc::new(hst.finish()));
        for (name, kind) in &self.columns {
            cols.push(column(rows.iter().map(|r| r.get(name).copied()), *kind));
        }
        let opts = RecordBatchOptions::new().with_row_count(Some(rows.len()));
        RecordBatch::try_new_with_options(self.schema(), cols, &opts)
    }
}

/// One column of `kind` from the rows' values (`None`: the row lacks the column).
fn column<'a>(values: impl Iterator<Item = Option<&'a Value>>, kind: Kind) -> ArrayRef {
    let values: Vec<Option<&Value>> = values.map(|v| v.filter(|v| !v.is_null())).collect();
    match kind {
        Kind::Null => Arc::new(NullArray::new(values.len())),
        Kind::Bool => {
            let mut b = BooleanBuilder::with_capacity(values.len());
            values
                .iter()
                .for_each(|v| b.append_option(v.and_then(Value::as_bool)));
            Arc::new(b.finish())
        }
        Kind::U64 => {
            let mut b = UInt64Builder::with_capacity(values.len());
            values
                .iter()
                .for_each(|v| b.append_option(v.and_then(Value::as_u64)));
            Arc::new(b.finish())
        }
        Kind::I64 => {
            let mut b = Int64Builder::with_capacity(values.len());
            values
                .iter()
                .for_each(|v| b.append_option(v.and_then(Value::as_i64)));
            Arc::new(b.finish())
        }
        Kind::F64 => {
            let mut b = Float64Builder::with_capacity(values.len());
            values
                .iter()
                .for_each(|v| b.append_option(v.and_then(Value::as_f64)));
            Arc::new(b.finish())
        }
        Kind::Str => {
            let mut b = StringBuilder::new();
            values
                .iter()
                .for_each(|v| b.append_option(v.and_then(Value::as_str)));
            Arc::new(b.finish())
        }
        Kind::Json => {
            let mut b = StringBuilder::new();
            values
                .iter()
                .for_each(|v| b.append_option(v.map(|v| v.to_string())));
            Arc::new(b.finish())
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
