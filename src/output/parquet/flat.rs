//! Flatten any `Serialize` value into `(column name, leaf)` pairs without building a
//! `serde_json::Value`: a serde `Serializer` whose structs and maps extend the name with
//! `_KEY` and whose scalars are the leaves. Sequences (and enum variants with data) are leaves
//! holding their JSON text (`serde_json::to_string`). The names and values are those of the
//! item's `serde_json` form: `None` and non-finite floats are null, unit variants their name.

use std::fmt;

use serde::Serialize;
use serde::ser::{self, Impossible, SerializeMap, SerializeStruct};

/// One leaf value.
#[derive(Clone, Debug, PartialEq)]
pub enum Leaf<'a> {
    /// JSON `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// A non-negative integer.
    U64(u64),
    /// A negative integer.
    I64(i64),
    /// A finite float.
    F64(f64),
    /// A string.
    Str(&'a str),
    /// An array (or other non-flat value) as JSON text.
    Json(String),
}

/// Why a value could not be flattened here.
#[derive(Debug)]
pub enum FlatError {
    /// A sequence or a variant with data: the caller stores its JSON text.
    NotFlat,
    /// The value's own serialization failed.
    Custom(String),
}

impl fmt::Display for FlatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FlatError::NotFlat => f.write_str("not a flat value"),
            FlatError::Custom(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for FlatError {}

impl ser::Error for FlatError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        FlatError::Custom(msg.to_string())
    }
}

/// Call `out(name, leaf)` for every leaf of `item`, in serialization order; `path` is the
/// buffer the names are built in (its content is the prefix). A top-level scalar or array is
/// one leaf named `value`.
///
/// # Errors
/// The item's own serialization error.
pub fn flatten<T, F>(item: &T, path: &mut String, out: &mut F) -> Result<(), FlatError>
where
    T: Serialize + ?Sized,
    F: FnMut(&str, Leaf<'_>),
{
    field(item, path, out)
}

/// Flatten `v` at `path`, or store its JSON text when it is not flat.
fn field<T, F>(v: &T, path: &mut String, out: &mut F) -> Result<(), FlatError>
where
    T: Serialize + ?Sized,
    F: FnMut(&str, Leaf<'_>),
{
    match v.serialize(Flat { path, out }) {
        Err(FlatError::NotFlat) => {
            let text = serde_json::to_string(v).map_err(|e| FlatError::Custom(e.to_string()))?;
            leaf(path, out, Leaf::Json(text));
            Ok(())
        }
        r => r,
    }
}

fn leaf<F: FnMut(&str, Leaf<'_>)>(path: &str, out: &mut F, l: Leaf<'_>) {
    out(if path.is_empty() { "value" } else { path }, l);
}

struct Flat<'p, F> {
    path: &'p mut String,
    out: &'p mut F,
}

impl<F: FnMut(&str, Leaf<'_>)> Flat<'_, F> {
    fn leaf(self, l: Leaf<'_>) -> Result<(), FlatError> {
        leaf(self.path, self.out, l);
        Ok(())
    }
}

/// A struct or map being flattened: each key extends the path.
struct Compound<'p, F> {
    path: &'p mut String,
    out: &'p mut F,
    len: usize,
}

impl<F: FnMut(&str, Leaf<'_>)> Compound<'_, F> {
    fn entry<T: Serialize + ?Sized>(&mut self, key: &str, v: &T) -> Result<(), FlatError> {
        if self.len > 0 {
            self.path.push('_');
        }
        self.path.push_str(key);
        let r = field(v, self.path, self.out);
        self.path.truncate(self.len);
        r
    }
}

impl<F: FnMut(&str, Leaf<'_>)> SerializeStruct for Compound<'_, F> {
    type Ok = ();
    type Error = FlatError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), FlatError> {
        self.entry(key, v)
    }
    fn end(self) -> Result<(), FlatError> {
        Ok(())
    }
}

impl<F: FnMut(&str, Leaf<'_>)> SerializeMap for Compound<'_, F> {
    type Ok = ();
    type Error = FlatError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, _key: &T) -> Result<(), FlatError> {
        // Keys come with their values (serialize_entry); serde's default calls key then value.
        Err(FlatError::NotFlat)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, _v: &T) -> Result<(), FlatError> {
        Err(FlatError::NotFlat)
    }
    fn serialize_entry<K, V>(&mut self, key: &K, v: &V) -> Result<(), FlatError>
    where
        K: Serialize + ?Sized,
        V: Serialize + ?Sized,
    {
        // Map keys as serde_json writes them: strings, or numbers as text.
        let key = match serde_json::to_value(key) {
            Ok(serde_json::Value::String(s)) => s,
            Ok(other) => other.to_string(),
            Err(e) => return Err(FlatError::Custom(e.to_string())),
        };
        self.entry(&key, v)
    }
    fn end(self) -> Result<(), FlatError> {
        Ok(())
    }
}

impl<'p, F: FnMut(&str, Leaf<'_>)> ser::Serializer for Flat<'p, F> {
    type Ok = ();
    type Error = FlatError;
    type SerializeSeq = Impossible<(), FlatError>;
    type SerializeTuple = Impossible<(), FlatError>;
    type SerializeTupleStruct = Impossible<(), FlatError>;
    type SerializeTupleVariant = Impossible<(), FlatError>;
    type SerializeMap = Compound<'p, F>;
    type SerializeStruct = Compound<'p, F>;
    type SerializeStructVariant = Impossible<(), FlatError>;

    fn serialize_bool(self, v: bool) -> Result<(), FlatError> {
        self.leaf(Leaf::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<(), FlatError> {
        self.serialize_i64(v.into())
    }
    fn serialize_i16(self, v: i16) -> Result<(), FlatError> {
        self.serialize_i64(v.into())
    }
    fn serialize_i32(self, v: i32) -> Result<(), FlatError> {
        self.serialize_i64(v.into())
    }
    fn serialize_i64(self, v: i64) -> Result<(), FlatError> {
        match u64::try_from(v) {
            Ok(u) => self.leaf(Leaf::U64(u)),
            Err(_) => self.leaf(Leaf::I64(v)),
        }
    }
    fn serialize_u8(self, v: u8) -> Result<(), FlatError> {
        self.leaf(Leaf::U64(v.into()))
    }
    fn serialize_u16(self, v: u16) -> Result<(), FlatError> {
        self.leaf(Leaf::U64(v.into()))
    }
    fn serialize_u32(self, v: u32) -> Result<(), FlatError> {
        self.leaf(Leaf::U64(v.into()))
    }
    fn serialize_u64(self, v: u64) -> Result<(), FlatError> {
        self.leaf(Leaf::U64(v))
    }
    fn serialize_f32(self, v: f32) -> Result<(), FlatError> {
        self.serialize_f64(v.into())
    }
    fn serialize_f64(self, v: f64) -> Result<(), FlatError> {
        // serde_json writes NaN and infinities as null.
        self.leaf(if v.is_finite() {
            Leaf::F64(v)
        } else {
            Leaf::Null
        })
    }
    fn serialize_char(self, v: char) -> Result<(), FlatError> {
        let mut b = [0u8; 4];
        self.leaf(Leaf::Str(v.encode_utf8(&mut b)))
    }
    fn serialize_str(self, v: &str) -> Result<(), FlatError> {
        self.leaf(Leaf::Str(v))
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<(), FlatError> {
        Err(FlatError::NotFlat)
    }
    fn serialize_none(self) -> Result<(), FlatError> {
        self.leaf(Leaf::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<(), FlatError> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), FlatError> {
        self.leaf(Leaf::Null)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), FlatError> {
        self.leaf(Leaf::Null)
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), FlatError> {
        self.leaf(Leaf::Str(variant))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        v: &T,
    ) -> Result<(), FlatError> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _v: &T,
    ) -> Result<(), FlatError> {
        Err(FlatError::NotFlat)
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, FlatError> {
        Err(FlatError::NotFlat)
    }
    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, FlatError> {
        Err(FlatError::NotFlat)
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct, FlatError> {
        Err(FlatError::NotFlat)
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, FlatError> {
        Err(FlatError::NotFlat)
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, FlatError> {
        let len = self.path.len();
        Ok(Compound {
            path: self.path,
            out: self.out,
            len,
        })
    }
    fn serialize_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStruct, FlatError> {
        let len = self.path.len();
        Ok(Compound {
            path: self.path,
            out: self.out,
            len,
        })
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, FlatError> {
        Err(FlatError::NotFlat)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn flat(v: &serde_json::Value) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut path = String::new();
        flatten(v, &mut path, &mut |n, l| {
            out.push((n.to_string(), format!("{l:?}")))
        })
        .unwrap();
        out
    }

    #[test]
    fn nested_objects_join_with_underscore_and_arrays_are_json() {
        let v = json!({"a": 1, "b": {"c": -2, "d": {"e": "x"}}, "f": [1, 2], "g": null, "h": 0.5});
        assert_eq!(
            flat(&v),
            [
                ("a".to_string(), "U64(1)".to_string()),
                ("b_c".into(), "I64(-2)".into()),
                ("b_d_e".into(), "Str(\"x\")".into()),
                ("f".into(), "Json(\"[1,2]\")".into()),
                ("g".into(), "Null".into()),
                ("h".into(), "F64(0.5)".into()),
            ]
        );
        assert_eq!(
            flat(&json!(3)),
            [("value".to_string(), "U64(3)".to_string())]
        );
    }
}
