//! The field registry (src/filter/fields.rs) is the one table of per-packet fields that
//! `--json`, the Parquet `packets` table, `-V` and `--list-fields` share (issue 40):
//!
//! * every registry field has a `packets` column of a type that holds its values (unsigned
//!   integers in `UInt*`, booleans in `Boolean`, names and addresses in `Utf8`, fractions in
//!   `Float64`), or its entry says why not;
//! * every `packets` column but `capture` and `host` is some registry field's column;
//! * every entry without a column or hidden from `-V` gives a reason.
//!
//! That each field present on a frame has its `-V` text (label and value) in the frame's `-V`
//! tree is checked in tests/display_filter.rs, on every frame the registry test decodes.

use std::collections::BTreeMap;

use arrow_schema::{DataType, TimeUnit};

use roce_inspect::filter::fields::{FIELDS, FieldType, ParquetColumn, Verbose};
use roce_inspect::output::parquet::packets::schema;

/// The `packets` columns by name, with their Arrow types.
fn columns() -> BTreeMap<String, DataType> {
    schema()
        .fields()
        .iter()
        .map(|f| (f.name().clone(), f.data_type().clone()))
        .collect()
}

/// Whether a column of type `dt` holds the values of a field of type `ty`.
fn holds(ty: FieldType, dt: &DataType) -> bool {
    match ty {
        FieldType::Uint => matches!(
            dt,
            DataType::UInt8
                | DataType::UInt16
                | DataType::UInt32
                | DataType::UInt64
                | DataType::Timestamp(TimeUnit::Nanosecond, _)
        ),
        FieldType::Bool => *dt == DataType::Boolean,
        FieldType::Str | FieldType::Addr => *dt == DataType::Utf8,
        FieldType::Float => *dt == DataType::Float64,
        // A header kept whole: the `encap` array as its JSON text.
        FieldType::Protocol => *dt == DataType::Utf8,
    }
}

#[test]
fn every_field_has_its_parquet_column_or_says_why_not() {
    let cols = columns();
    let mut bad = Vec::new();
    for f in FIELDS {
        match (f.column, f.column_name()) {
            (ParquetColumn::Absent(""), _) => {
                bad.push(format!("{}: no column and no reason", f.name))
            }
            (_, None) => {}
            (_, Some(c)) => match cols.get(&c) {
                None => bad.push(format!("{}: no column {c} in packets", f.name)),
                Some(dt) if !holds(f.ty, dt) => bad.push(format!(
                    "{}: column {c} is {dt:?}, not a {}",
                    f.name,
                    f.ty.name()
                )),
                Some(_) => {}
            },
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn every_parquet_column_is_a_registry_field() {
    let named: BTreeMap<String, &str> = FIELDS
        .iter()
        .filter_map(|f| f.column_name().map(|c| (c, f.name)))
        .collect();
    let stray: Vec<String> = columns()
        .into_keys()
        .filter(|c| c != "capture" && c != "host" && !named.contains_key(c))
        .collect();
    assert!(
        stray.is_empty(),
        "packets columns without a registry field: {stray:?}"
    );
}

#[test]
fn fields_hidden_from_verbose_say_why() {
    for f in FIELDS {
        match f.verbose {
            Verbose::Hidden(why)
            | Verbose::Shown {
                only: Some(why), ..
            } => {
                assert!(!why.is_empty(), "{}: no reason", f.name)
            }
            Verbose::Shown { only: None, .. } => {}
        }
    }
}
