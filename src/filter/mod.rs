//! Display filters (`read -Y EXPR`, `--display-filter`): Wireshark 4's display-filter language
//! (`wireshark-filter(4)`) on roce-inspect's own fields, the keys `--json` prints joined by
//! dots (`bth.dest_qp == 0x11 && !aeth`), listed by `--list-fields`.
//!
//! The expression is compiled once into a tree of field ids and typed literals
//! ([`parse::Node`]); each frame is then tested on its decoded form, without building JSON.
//! Semantics as Wireshark's: a bare field tests presence; a comparison with an absent field is
//! false (`!=` too); `==` holds when some occurrence equals (the `encap.*` fields have one per
//! tunnel layer), `!=` when none does; numbers are decimal, `0x` hex, `0b` binary or `0` octal;
//! `in {a, b, c..d}` with inclusive ranges; `contains` on string fields; addresses match a
//! network with `/prefix`.

pub mod fields;
pub mod lex;
pub mod parse;

use std::cmp::Ordering;

use fields::{FIELDS, Pkt, Value};
use lex::CmpOp;
use parse::{Lit, Node, Operand, SetItem};

use crate::decode::Address;

/// A display filter that could not be compiled: where (byte offset in the expression) and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("display filter: column {}: {msg}", pos + 1)]
pub struct FilterError {
    /// Byte offset in the expression, from 0.
    pub pos: usize,
    /// What was expected there, or what is wrong.
    pub msg: String,
}

impl FilterError {
    /// An error at byte `pos`.
    pub fn at(pos: usize, msg: impl Into<String>) -> FilterError {
        FilterError {
            pos,
            msg: msg.into(),
        }
    }
}

/// A compiled display filter.
#[derive(Clone, Debug, PartialEq)]
pub struct DisplayFilter {
    root: Node,
    /// Whether it reads an `analysis.*` field.
    analysis: bool,
}

impl DisplayFilter {
    /// Compile `expr`.
    ///
    /// # Errors
    /// The first problem, with its position: a token that does not fit the grammar, an unknown
    /// field, a literal that is not of the field's type.
    pub fn compile(expr: &str) -> Result<DisplayFilter, FilterError> {
        let toks = lex::tokens(expr)?;
        if toks.is_empty() {
            return Err(FilterError::at(0, "empty expression"));
        }
        let root = parse::Parser::new(&toks, expr.len()).expression()?;
        let analysis = reads_analysis(&root);
        Ok(DisplayFilter { root, analysis })
    }

    /// Whether the filter reads an `analysis.*` field (so the frame must be analysed before
    /// it is tested).
    pub fn reads_analysis(&self) -> bool {
        self.analysis
    }

    /// Whether packet `p` passes.
    #[inline]
    pub fn matches(&self, p: &Pkt<'_, '_>) -> bool {
        eval(&self.root, p)
    }

    /// The compiled tree.
    pub fn root(&self) -> &Node {
        &self.root
    }
}

fn reads_analysis(n: &Node) -> bool {
    let field = |id: &usize| FIELDS[*id].name.starts_with("analysis");
    match n {
        Node::And(a, b) | Node::Or(a, b) => reads_analysis(a) || reads_analysis(b),
        Node::Not(a) => reads_analysis(a),
        Node::Exists(id) | Node::In(id, _) | Node::Contains(id, _) => field(id),
        Node::Cmp(id, _, Operand::Field(o)) => field(id) || field(o),
        Node::Cmp(id, _, Operand::Lit(_)) => field(id),
    }
}

fn eval(n: &Node, p: &Pkt<'_, '_>) -> bool {
    match n {
        Node::And(a, b) => eval(a, p) && eval(b, p),
        Node::Or(a, b) => eval(a, p) || eval(b, p),
        Node::Not(a) => !eval(a, p),
        Node::Exists(id) => FIELDS[*id].present(p),
        Node::Cmp(id, op, rhs) => compare(*id, *op, rhs, p),
        Node::In(id, set) => any(*id, p, |v| set.iter().any(|s| in_item(&v, s))),
        Node::Contains(id, s) => any(*id, p, |v| match v {
            Value::Str(t) => t.contains(s.as_str()),
            Value::Text(t) => t.contains(s.as_str()),
            _ => false,
        }),
    }
}

/// Whether some occurrence of field `id` satisfies `f`.
#[inline]
fn any(id: usize, p: &Pkt<'_, '_>, f: impl FnMut(Value) -> bool) -> bool {
    FIELDS[id].any(p, f)
}

fn compare(id: usize, op: CmpOp, rhs: &Operand, p: &Pkt<'_, '_>) -> bool {
    let holds = |v: &Value| match rhs {
        Operand::Lit(l) => cmp_lit(v, op, l),
        Operand::Field(o) => any(*o, p, |w| cmp_values(v, op, &w)),
    };
    if op == CmpOp::Ne {
        // Wireshark 4: `a != b` is "all not equal", and false when `a` is absent.
        let mut seen = false;
        let some_equal = any(id, p, |v| {
            seen = true;
            !holds(&v)
        });
        return seen && !some_equal;
    }
    any(id, p, |v| holds(&v))
}

fn ordered(o: Option<Ordering>, op: CmpOp) -> bool {
    let Some(o) = o else { return op == CmpOp::Ne };
    match op {
        CmpOp::Eq => o == Ordering::Equal,
        CmpOp::Ne => o != Ordering::Equal,
        CmpOp::Lt => o == Ordering::Less,
        CmpOp::Le => o != Ordering::Greater,
        CmpOp::Gt => o == Ordering::Greater,
        CmpOp::Ge => o != Ordering::Less,
    }
}

/// The bytes of an address for comparison: IPv6 addresses and GIDs are both 128 bits.
fn addr_bytes(a: &Address) -> (u8, [u8; 16], usize) {
    let mut b = [0; 16];
    match a {
        Address::V4(x) => {
            b[..4].copy_from_slice(x);
            (4, b, 4)
        }
        Address::V6(x) | Address::Gid(x) => (6, *x, 16),
        Address::Lid(l) => {
            b[..2].copy_from_slice(&l.to_be_bytes());
            (0, b, 2)
        }
    }
}

fn cmp_addr(v: &Address, l: &Address, prefix: Option<u8>) -> Option<Ordering> {
    let (kv, bv, n) = addr_bytes(v);
    let (kl, bl, _) = addr_bytes(l);
    if kv != kl {
        return None;
    }
    let Some(bits) = prefix else {
        return Some(bv[..n].cmp(&bl[..n]));
    };
    // Compare the first `bits` bits only.
    let (whole, rest) = (usize::from(bits / 8), bits % 8);
    let mut o = bv[..whole].cmp(&bl[..whole]);
    if o == Ordering::Equal && rest > 0 {
        let m = 0xffu8 << (8 - rest);
        o = (bv[whole] & m).cmp(&(bl[whole] & m));
    }
    Some(o)
}

fn cmp_lit(v: &Value, op: CmpOp, l: &Lit) -> bool {
    let o = match (v, l) {
        (Value::Uint(a), Lit::Uint(b)) => Some(a.cmp(b)),
        (Value::Bool(a), Lit::Bool(b)) => Some(a.cmp(b)),
        (Value::Str(a), Lit::Str(b)) => Some((*a).cmp(b.as_str())),
        (Value::Text(a), Lit::Str(b)) => Some(a.as_str().cmp(b.as_str())),
        (Value::Float(a), Lit::Float(b)) => a.partial_cmp(b),
        (Value::Addr(a), Lit::Addr(b, prefix)) => cmp_addr(a, b, *prefix),
        _ => None,
    };
    ordered(o, op)
}

fn cmp_values(a: &Value, op: CmpOp, b: &Value) -> bool {
    let o = match (a, b) {
        (Value::Uint(x), Value::Uint(y)) => Some(x.cmp(y)),
        (Value::Bool(x), Value::Bool(y)) => Some(x.cmp(y)),
        (Value::Float(x), Value::Float(y)) => x.partial_cmp(y),
        (Value::Addr(x), Value::Addr(y)) => cmp_addr(x, y, None),
        (Value::Str(_) | Value::Text(_), Value::Str(_) | Value::Text(_)) => {
            Some(text(a).cmp(text(b)))
        }
        _ => None,
    };
    ordered(o, op)
}

fn text(v: &Value) -> &str {
    match v {
        Value::Str(s) => s,
        Value::Text(s) => s,
        _ => "",
    }
}

fn in_item(v: &Value, s: &SetItem) -> bool {
    match s {
        SetItem::One(l) => cmp_lit(v, CmpOp::Eq, l),
        SetItem::Range(a, b) => cmp_lit(v, CmpOp::Ge, a) && cmp_lit(v, CmpOp::Le, b),
    }
}

#[cfg(test)]
mod tests;
