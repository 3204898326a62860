//! Typed tables declared once: the `columns!` macro gives a row type its Arrow fields and
//! turns a slice of rows into the arrays of a record batch, column by column, in the same
//! order. Used by the `packets` and `messages` tables, whose columns are fixed (the other
//! report tables infer theirs, [`super::report`]).

use std::sync::Arc;

use arrow_array::builder::StringBuilder;
use arrow_array::{Array, ArrayRef, StringArray, TimestampNanosecondArray};
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

/// A text column built with room for the whole batch: `StringArray::from_iter` starts with
/// 1 KiB of text and copies it each time it grows, a fifth of the time spent on text columns.
pub struct Texts(StringArray);

/// Bytes reserved per row of a [`Texts`] column (names are 2 to 19 bytes, IPv4 addresses 7
/// to 15; a longer batch grows once or twice).
const TEXT_BYTES_PER_ROW: usize = 16;

impl<S: AsRef<str>> FromIterator<Option<S>> for Texts {
    fn from_iter<I: IntoIterator<Item = Option<S>>>(it: I) -> Self {
        let it = it.into_iter();
        let mut b = Texts::builder(it.size_hint().0);
        b.extend(it);
        Texts(b.finish())
    }
}

impl Texts {
    /// A builder with room for `rows` rows, for columns made otherwise than from an iterator.
    pub fn builder(rows: usize) -> StringBuilder {
        StringBuilder::with_capacity(rows, rows * TEXT_BYTES_PER_ROW)
    }
}

impl Column for Texts {
    fn into_column(self) -> ArrayRef {
        Arc::new(self.0)
    }
}

/// `part` when the row has it, else no bit: one term of a row's parts (`only` in
/// `columns!`).
pub fn part_if(has: bool, part: u32) -> u32 {
    if has { part } else { 0 }
}

/// Declares the columns of rows of type `$row` once: `fields()` (the schema's fields),
/// `arrays(&[$row], present)` (the arrays of a batch) and `COLUMNS` (their names), in the
/// same order. Each column is built
/// from the whole batch at once (`$array::from_iter` over the rows), which is several times
/// faster than appending every row to one builder per column in turn. `$array` is any
/// `FromIterator<Option<T>>` that is a [`Column`].
///
/// A column may name, after `only`, the bits of a part of the row (a header) it comes from:
/// when none of those bits is set in `present` (no row of the batch has the part), the column
/// is an array of nulls made at once instead of from every row. Most columns of a batch are
/// such (an RC WRITE has no GRH, LRH, DETH, atomic or immediate columns), and walking every row
/// for them was a sixth of the export's time.
macro_rules! columns {
    (rows: $row:ty;
     $( $name:ident : $array:ty = $dt:expr, $nullable:expr, $( only $part:expr, )?
        |$r:ident| $value:expr; )*) => {
        /// The column names, in order.
        #[allow(dead_code)]
        const COLUMNS: &[&str] = &[ $( stringify!($name), )* ];

        fn fields() -> Vec<arrow_schema::Field> {
            vec![ $( arrow_schema::Field::new(stringify!($name), $dt, $nullable), )* ]
        }

        #[allow(unused_variables)]
        fn arrays(rows: &[$row], present: u32) -> Vec<arrow_array::ArrayRef> {
            use $crate::output::parquet::columns::Column as _;
            vec![ $(
                if true $( && (present & $part) != 0 )? {
                    rows.iter().map(|$r: &$row| $value).collect::<$array>().into_column()
                } else {
                    arrow_array::new_null_array(&$dt, rows.len())
                },
            )* ]
        }
    };
}
