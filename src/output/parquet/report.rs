//! The report tables (`flows`, `connections`): one row per item of the
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
//! The columns are known only when every item was seen, so the items (held in memory by the
//! report) are flattened twice: once to infer the columns ([`TableLayout::infer`]), once to
//! fill them ([`ReportRows::push`]). (`messages`, one row per message of a long run, is
//! written while the capture is read, with fixed columns named and typed by these rules but
//! present in every file: [`super::messages`].)

use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Float64Builder, Int64Builder, StringBuilder, UInt64Builder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{ArrowError, DataType, Field, SchemaRef};
use serde::Serialize;

use super::flat::{FlatError, Leaf, flatten};
use super::{Constants, table_batch, table_schema};

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
            // Null: a key null in every row has no column (see `TableLayout::infer`).
            Kind::Null | Kind::Str | Kind::Json => DataType::Utf8,
        }
    }
}

/// Column ids of flattened names. Items of one type mostly have the same leaves in the same
/// order, so a name is checked against the id of the same leaf position in the previous item
/// before it is hashed.
#[derive(Default)]
struct Ids {
    ids: rustc_hash::FxHashMap<String, u32>,
    seq: Vec<u32>,
    names: Vec<String>,
}

impl Ids {
    /// The id of `name`, the `pos`-th leaf of an item; a new id for a name not seen before.
    fn id(&mut self, pos: usize, name: &str) -> u32 {
        if let Some(&g) = self.seq.get(pos)
            && self.names[g as usize] == name
        {
            return g;
        }
        let id = match self.ids.get(name) {
            Some(&id) => id,
            None => {
                let id = self.names.len() as u32;
                self.ids.insert(name.to_string(), id);
                self.names.push(name.to_string());
                id
            }
        };
        self.seq.truncate(pos);
        self.seq.push(id);
        id
    }
}

/// A report table's columns, inferred from its items.
pub struct TableLayout {
    schema: SchemaRef,
    kinds: Vec<Kind>,
    /// The column of each name id (`None`: the name has no column).
    col_of: Vec<Option<usize>>,
    ids: Ids,
}

impl TableLayout {
    /// The columns of `items`: `capture`, `host`, then the flattened keys with a value in
    /// some item, in alphabetical order, each of the kind that holds all its values.
    ///
    /// # Errors
    /// An item's own serialization error.
    pub fn infer<T: Serialize>(items: &[T]) -> Result<TableLayout, FlatError> {
        let mut ids = Ids::default();
        let mut kinds: Vec<Kind> = Vec::new();
        let mut path = String::new();
        for item in items {
            path.clear();
            let mut pos = 0;
            flatten(item, &mut path, &mut |name, l| {
                let id = ids.id(pos, name) as usize;
                pos += 1;
                if id == kinds.len() {
                    kinds.push(Kind::Null);
                }
                kinds[id] = kinds[id].widen(Kind::of(&l));
            })?;
        }
        let mut order: Vec<usize> = (0..ids.names.len())
            .filter(|&i| {
                let n = ids.names[i].as_str();
                // A key that is `null` in every row (an absent statistic, an object no row has)
                // has no column: its type is unknown here, and a column of Parquet's null type
                // would clash with the typed column of the same name in another capture's
                // export (Spark's `mergeSchema` refuses INT and DECIMAL). `capture` and `host`
                // are ours.
                kinds[i] != Kind::Null && n != "capture" && n != "host"
            })
            .collect();
        order.sort_by(|&a, &b| ids.names[a].cmp(&ids.names[b]));
        let mut fields = Vec::with_capacity(order.len());
        let mut col_of = vec![None; ids.names.len()];
        let mut col_kinds = Vec::with_capacity(order.len());
        for (c, &i) in order.iter().enumerate() {
            fields.push(Field::new(&ids.names[i], kinds[i].data_type(), true));
            col_of[i] = Some(c);
            col_kinds.push(kinds[i]);
        }
        Ok(TableLayout {
            schema: table_schema(fields),
            kinds: col_kinds,
            col_of,
            ids,
        })
    }

    /// The table's schema.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// Empty rows of this table.
    pub fn rows(&self) -> ReportRows {
        ReportRows {
            cols: self.kinds.iter().map(|k| Col::new(*k)).collect(),
            filled: vec![false; self.kinds.len()],
            path: String::new(),
            len: 0,
        }
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

    /// Append `item`, one of the items `layout` was inferred from.
    ///
    /// # Errors
    /// The item's own serialization error.
    pub fn push<T: Serialize>(
        &mut self,
        layout: &mut TableLayout,
        item: &T,
    ) -> Result<(), FlatError> {
        let ReportRows {
            cols, filled, path, ..
        } = self;
        let TableLayout { ids, col_of, .. } = layout;
        path.clear();
        let mut pos = 0;
        flatten(item, path, &mut |name, l| {
            let id = ids.id(pos, name) as usize;
            pos += 1;
            if let Some(c) = col_of.get(id).copied().flatten() {
                cols[c].push(&l);
                filled[c] = true;
            }
        })?;
        for (c, f) in cols.iter_mut().zip(filled.iter_mut()) {
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
        constants: &mut Constants,
    ) -> Result<RecordBatch, ArrowError> {
        let n = std::mem::take(&mut self.len);
        let cols = self.cols.iter_mut().map(Col::finish).collect();
        table_batch(&layout.schema, constants, n, cols)
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
        let mut t = TableLayout::infer(&items).unwrap();
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
        items.iter().for_each(|i| rows.push(&mut t, i).unwrap());
        assert_eq!(rows.len(), 2);
        let b = rows
            .take_batch(&t, &mut Constants::new("a.pcap", "h"))
            .unwrap();
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
        let t = TableLayout::infer::<serde_json::Value>(&[]).unwrap();
        assert_eq!(t.schema().fields().len(), 2);
        let mut rows = t.rows();
        assert!(rows.is_empty());
        assert_eq!(
            rows.take_batch(&t, &mut Constants::new("a.pcap", "h"))
                .unwrap()
                .num_rows(),
            0
        );
    }
}
