//! The display filter's parser: recursive descent over [`lex`](super::lex)'s tokens into a
//! tree of field ids and typed literals, checked against the field registry. Precedence as in
//! Wireshark 4: `!` binds tightest, then `&&`, then `||`; parentheses group.

use std::net::{Ipv4Addr, Ipv6Addr};

use super::FilterError;
use super::fields::{FIELDS, FieldType, lookup};
use super::lex::{CmpOp, Spanned, Tok};
use crate::decode::Address;

/// A compiled filter expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    /// Both hold.
    And(Box<Node>, Box<Node>),
    /// Either holds.
    Or(Box<Node>, Box<Node>),
    /// It does not hold.
    Not(Box<Node>),
    /// The field (index in [`FIELDS`]) is present.
    Exists(usize),
    /// The field compared with a literal or another field.
    Cmp(usize, CmpOp, Operand),
    /// The field's value is in the set.
    In(usize, Vec<SetItem>),
    /// The string field contains the text.
    Contains(usize, String),
}

/// The right-hand side of a comparison.
#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    /// A literal of the field's type.
    Lit(Lit),
    /// Another field (index in [`FIELDS`]).
    Field(usize),
}

/// A literal, typed by the field it is compared with.
#[derive(Clone, Debug, PartialEq)]
pub enum Lit {
    /// An unsigned integer.
    Uint(u64),
    /// A boolean.
    Bool(bool),
    /// A string.
    Str(String),
    /// An address; with a prefix length, a network (`10.0.0.0/24`).
    Addr(Address, Option<u8>),
    /// A floating-point number.
    Float(f64),
}

/// One member of an `in { … }` set.
#[derive(Clone, Debug, PartialEq)]
pub enum SetItem {
    /// One value.
    One(Lit),
    /// An inclusive range `a..b`.
    Range(Lit, Lit),
}

/// The parser's state: the tokens and the next one's index.
pub struct Parser<'t> {
    toks: &'t [Spanned],
    at: usize,
    /// The expression's length, for errors at its end.
    end: usize,
}

impl<'t> Parser<'t> {
    /// A parser over `toks` of an expression `end` bytes long.
    pub fn new(toks: &'t [Spanned], end: usize) -> Parser<'t> {
        Parser { toks, at: 0, end }
    }

    fn peek(&self) -> Option<&'t Tok> {
        self.toks.get(self.at).map(|(t, _)| t)
    }

    fn pos(&self) -> usize {
        self.toks.get(self.at).map_or(self.end, |(_, p)| *p)
    }

    fn found(&self) -> String {
        self.peek()
            .map_or_else(|| "the end".to_string(), Tok::describe)
    }

    fn expected(&self, what: &str) -> FilterError {
        FilterError::at(
            self.pos(),
            format!("expected {what}, found {}", self.found()),
        )
    }

    fn eat(&mut self, t: &Tok) -> bool {
        let hit = self.peek() == Some(t);
        self.at += usize::from(hit);
        hit
    }

    /// The whole expression.
    ///
    /// # Errors
    /// The first token that does not fit, with what was expected there.
    pub fn expression(&mut self) -> Result<Node, FilterError> {
        let n = self.or()?;
        if self.peek().is_some() {
            return Err(self.expected("'&&', '||' or the end"));
        }
        Ok(n)
    }

    fn or(&mut self) -> Result<Node, FilterError> {
        let mut n = self.and()?;
        while self.eat(&Tok::Or) {
            n = Node::Or(Box::new(n), Box::new(self.and()?));
        }
        Ok(n)
    }

    fn and(&mut self) -> Result<Node, FilterError> {
        let mut n = self.unary()?;
        while self.eat(&Tok::And) {
            n = Node::And(Box::new(n), Box::new(self.unary()?));
        }
        Ok(n)
    }

    fn unary(&mut self) -> Result<Node, FilterError> {
        if self.eat(&Tok::Not) {
            return Ok(Node::Not(Box::new(self.unary()?)));
        }
        if self.eat(&Tok::LParen) {
            let n = self.or()?;
            if !self.eat(&Tok::RParen) {
                return Err(self.expected("')'"));
            }
            return Ok(n);
        }
        self.relation()
    }

    /// A field, alone (presence) or compared.
    fn relation(&mut self) -> Result<Node, FilterError> {
        let pos = self.pos();
        let Some(Tok::Word(name)) = self.peek() else {
            return Err(self.expected("a field name, '!' or '('"));
        };
        let Some(id) = lookup(name) else {
            return Err(FilterError::at(
                pos,
                format!("'{name}' is not a field (--list-fields lists them)"),
            ));
        };
        self.at += 1;
        let ty = FIELDS[id].ty;
        match self.peek() {
            Some(Tok::Cmp(op)) => {
                let op = *op;
                self.at += 1;
                self.typed(ty, "comparison")?;
                let rhs = self.operand(ty)?;
                Ok(Node::Cmp(id, op, rhs))
            }
            Some(Tok::Contains) => {
                self.at += 1;
                if ty != FieldType::Str {
                    return Err(FilterError::at(
                        pos,
                        format!("'contains' needs a string field; {name} is {}", ty.name()),
                    ));
                }
                match self.literal(ty)? {
                    Lit::Str(s) => Ok(Node::Contains(id, s)),
                    _ => Err(self.expected("a string")),
                }
            }
            Some(Tok::In) => {
                self.at += 1;
                self.typed(ty, "'in'")?;
                Ok(Node::In(id, self.set(ty)?))
            }
            Some(Tok::Not) if self.toks.get(self.at + 1).map(|t| &t.0) == Some(&Tok::In) => {
                self.at += 2;
                self.typed(ty, "'not in'")?;
                Ok(Node::Not(Box::new(Node::In(id, self.set(ty)?))))
            }
            _ => Ok(Node::Exists(id)),
        }
    }

    /// Refuse a comparison on a header field (only its presence has a value).
    fn typed(&self, ty: FieldType, what: &str) -> Result<(), FilterError> {
        if ty == FieldType::Protocol {
            return Err(FilterError::at(
                self.pos(),
                format!("a header can only be tested for presence, not by {what}"),
            ));
        }
        Ok(())
    }

    /// A literal, or another field of a comparable type.
    fn operand(&mut self, ty: FieldType) -> Result<Operand, FilterError> {
        if let Some(Tok::Word(w)) = self.peek()
            && let Some(id) = lookup(w)
        {
            let other = FIELDS[id].ty;
            if other != ty {
                return Err(FilterError::at(
                    self.pos(),
                    format!("{w} is {}, not {}", other.name(), ty.name()),
                ));
            }
            self.at += 1;
            return Ok(Operand::Field(id));
        }
        self.literal(ty).map(Operand::Lit)
    }

    /// `{ a, b, c..d }` (commas optional, as Wireshark 4.0 had none).
    fn set(&mut self, ty: FieldType) -> Result<Vec<SetItem>, FilterError> {
        if !self.eat(&Tok::LBrace) {
            return Err(self.expected("'{'"));
        }
        let mut items = Vec::new();
        loop {
            if self.eat(&Tok::RBrace) && !items.is_empty() {
                return Ok(items);
            }
            let a = self.literal(ty)?;
            if self.eat(&Tok::DotDot) {
                if !matches!(ty, FieldType::Uint | FieldType::Float) {
                    return Err(FilterError::at(
                        self.pos(),
                        format!("a range needs a number field, not {}", ty.name()),
                    ));
                }
                items.push(SetItem::Range(a, self.literal(ty)?));
            } else {
                items.push(SetItem::One(a));
            }
            if !self.eat(&Tok::Comma) && self.peek() != Some(&Tok::RBrace) {
                if matches!(self.peek(), Some(Tok::Word(_) | Tok::Str(_))) {
                    continue;
                }
                return Err(self.expected("',' or '}'"));
            }
        }
    }

    /// A literal of type `ty`.
    fn literal(&mut self, ty: FieldType) -> Result<Lit, FilterError> {
        let pos = self.pos();
        let (text, quoted) = match self.peek() {
            Some(Tok::Word(w)) => (w.as_str(), false),
            Some(Tok::Str(s)) => (s.as_str(), true),
            _ => return Err(self.expected(&format!("a value ({})", ty.name()))),
        };
        let lit = typed_literal(ty, text, quoted).ok_or_else(|| {
            FilterError::at(pos, format!("'{text}' is not a valid {}", ty.name()))
        })?;
        self.at += 1;
        Ok(lit)
    }
}

/// `text` as a literal of type `ty`, `None` when it is not one.
fn typed_literal(ty: FieldType, text: &str, quoted: bool) -> Option<Lit> {
    match ty {
        FieldType::Uint => number(text).map(Lit::Uint),
        FieldType::Bool => match text {
            "true" | "True" | "TRUE" | "1" => Some(Lit::Bool(true)),
            "false" | "False" | "FALSE" | "0" => Some(Lit::Bool(false)),
            _ => None,
        },
        FieldType::Str => Some(Lit::Str(text.to_string())),
        FieldType::Addr => address(text),
        FieldType::Float => text.parse().ok().filter(|_| !quoted).map(Lit::Float),
        FieldType::Protocol => None,
    }
}

/// An unsigned number as Wireshark reads one (C `strtoul` base 0): `0x` hex, `0b` binary,
/// a leading `0` octal, else decimal.
pub fn number(t: &str) -> Option<u64> {
    let (digits, radix) = if let Some(h) = t.strip_prefix("0x").or(t.strip_prefix("0X")) {
        (h, 16)
    } else if let Some(b) = t.strip_prefix("0b").or(t.strip_prefix("0B")) {
        (b, 2)
    } else if t.len() > 1 && t.starts_with('0') {
        (&t[1..], 8)
    } else {
        (t, 10)
    };
    if digits.is_empty() || digits.starts_with(['+', '-']) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

/// An IPv4 or IPv6 address / GID, with an optional `/prefix`, or `LID n`.
fn address(t: &str) -> Option<Lit> {
    if let Some(l) = t.strip_prefix("LID ") {
        return number(l.trim())
            .and_then(|v| u16::try_from(v).ok())
            .map(|v| Lit::Addr(Address::Lid(v), None));
    }
    let (a, prefix) = match t.split_once('/') {
        Some((a, p)) => (a, Some(p.parse::<u8>().ok()?)),
        None => (t, None),
    };
    if let Ok(v4) = a.parse::<Ipv4Addr>() {
        return prefix
            .is_none_or(|p| p <= 32)
            .then_some(Lit::Addr(Address::V4(v4.octets()), prefix));
    }
    let v6 = a.parse::<Ipv6Addr>().ok()?;
    prefix
        .is_none_or(|p| p <= 128)
        .then_some(Lit::Addr(Address::V6(v6.octets()), prefix))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_as_strtoul() {
        assert_eq!(number("10"), Some(10));
        assert_eq!(number("0x1F"), Some(31));
        assert_eq!(number("010"), Some(8));
        assert_eq!(number("0b101"), Some(5));
        assert_eq!(number("0"), Some(0));
        assert_eq!(number("08"), None);
        assert_eq!(number("-1"), None);
        assert_eq!(number("0x"), None);
    }

    #[test]
    fn addresses() {
        assert_eq!(
            address("10.0.0.1"),
            Some(Lit::Addr(Address::V4([10, 0, 0, 1]), None))
        );
        assert_eq!(
            address("10.0.0.0/8"),
            Some(Lit::Addr(Address::V4([10, 0, 0, 0]), Some(8)))
        );
        assert_eq!(address("10.0.0.0/33"), None);
        assert_eq!(address("LID 7"), Some(Lit::Addr(Address::Lid(7), None)));
        assert!(matches!(
            address("fe80::1"),
            Some(Lit::Addr(Address::V6(_), None))
        ));
        assert_eq!(address("ce"), None);
    }
}
