//! Typed tables declared once: the [`columns!`] macro gives a row type its Arrow fields and
//! turns a slice of rows into the arrays of a record batch, column by column, in the same
//! order. Used by the `packets` and `messages` tables, whose columns are fixed (the other
//! report tables infer theirs, [`super::report`]).

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, TimestampNanosecondArray};
use arrow_schema::{DataType, TimeUnit};

/// The Arrow type of a timestamp column: ns since the Unix epoch, UTC (Parquet
/// `TIMESTAMP(NANOS, true)`).
pub fn ts_type() -> DataType {
    DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into()))
}

/// An array that is a column of a batch.
pub trait Column {
    /// The array as a batch column.
    fn into_column(self) -> ArrayRef;
}

impl<A: Array + 'static> Column for A {
    fn into_column(self) -> ArrayRef {
        Arc::new(self)
    }
}

/// A timestamp column in UTC ([`ts_type`]).
pub struct UtcTimestamps(TimestampNanosecondArray);

impl FromIterator<Option<i64>> for UtcTimestamps {
    fn from_iter<I: IntoIterator<Item = Option<i64>>>(it: I) -> Self {
        UtcTimestamps(TimestampNanosecondArray::from_iter(it).with_timezone("UTC"))
    }
}

impl Column for UtcTimestamps {
    fn into_column(self) -> ArrayRef {
        Arc::new(self.0)
    }
}

/// Declares the columns of rows of type `$row` once: `fields()` (the schema's fields) and
/// `arrays(&[$row])` (the arrays of a batch), in the same order. Each column is built from the
/// whole batch at once (`$array::from_iter` over the rows), which is several times faster than
/// appending every row to one builder per column in turn. `$array` is any
/// `FromIterator<Option<T>>` that is a [`Column`].
macro_rules! columns {
    (rows: $row:ty;
     $( $name:ident : $array:ty = $dt:expr, $nullable:expr, |$r:ident| $value:expr; )*) => {
        fn fields() -> Vec<arrow_schema::Field> {
            vec![ $( arrow_schema::Field::new(stringify!($name), $dt, $nullable), )* ]
        }

        fn arrays(rows: &[$row]) -> Vec<arrow_array::ArrayRef> {
            use $crate::output::parquet::columns::Column as _;
            vec![ $( rows.iter().map(|$r: &$row| $value).collect::<$array>().into_column(), )* ]
        }
    };
}
