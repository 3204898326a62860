//! The display filter's tokens (Wireshark 4's display-filter syntax, `wireshark-filter(4)`).

use super::FilterError;

/// A token's kind.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// `(`.
    LParen,
    /// `)`.
    RParen,
    /// `{`.
    LBrace,
    /// `}`.
    RBrace,
    /// `,`.
    Comma,
    /// `..` (a range in a set).
    DotDot,
    /// A comparison operator.
    Cmp(CmpOp),
    /// `&&`, `and`.
    And,
    /// `||`, `or`.
    Or,
    /// `!`, `not`.
    Not,
    /// `contains`.
    Contains,
    /// `in`.
    In,
    /// A double-quoted string, escapes resolved.
    Str(String),
    /// A field name or an unquoted literal (number, address, name).
    Word(String),
}

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    /// `==`, `eq`, `any_eq`: some occurrence equals.
    Eq,
    /// `!=`, `ne`, `!==`, `all_ne`: no occurrence equals (Wireshark 4 semantics).
    Ne,
    /// `<`, `lt`.
    Lt,
    /// `<=`, `le`.
    Le,
    /// `>`, `gt`.
    Gt,
    /// `>=`, `ge`.
    Ge,
}

impl Tok {
    /// How an error message names the token.
    pub fn describe(&self) -> String {
        match self {
            Tok::Str(s) => format!("\"{s}\""),
            Tok::Word(w) => format!("'{w}'"),
            Tok::Cmp(_) => "a comparison operator".into(),
            Tok::LParen => "'('".into(),
            Tok::RParen => "')'".into(),
            Tok::LBrace => "'{'".into(),
            Tok::RBrace => "'}'".into(),
            Tok::Comma => "','".into(),
            Tok::DotDot => "'..'".into(),
            Tok::And => "'&&'".into(),
            Tok::Or => "'||'".into(),
            Tok::Not => "'!'".into(),
            Tok::Contains => "'contains'".into(),
            Tok::In => "'in'".into(),
        }
    }
}

/// A token and the byte offset where it starts in the expression.
pub type Spanned = (Tok, usize);

fn word_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b':' | b'-' | b'/')
}

/// The tokens of `s`.
///
/// # Errors
/// A character that starts no token, or a string without its closing quote.
pub fn tokens(s: &str) -> Result<Vec<Spanned>, FilterError> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        let two = b.get(i..i + 2).unwrap_or_default();
        let three = b.get(i..i + 3).unwrap_or_default();
        let (tok, len) = match (c, two, three) {
            (_, _, b"===") => (Tok::Cmp(CmpOp::Eq), 3),
            (_, _, b"!==") => (Tok::Cmp(CmpOp::Ne), 3),
            (_, b"==", _) => (Tok::Cmp(CmpOp::Eq), 2),
            (_, b"!=", _) => (Tok::Cmp(CmpOp::Ne), 2),
            (_, b"<=", _) => (Tok::Cmp(CmpOp::Le), 2),
            (_, b">=", _) => (Tok::Cmp(CmpOp::Ge), 2),
            (_, b"&&", _) => (Tok::And, 2),
            (_, b"||", _) => (Tok::Or, 2),
            (_, b"..", _) => (Tok::DotDot, 2),
            (b'<', ..) => (Tok::Cmp(CmpOp::Lt), 1),
            (b'>', ..) => (Tok::Cmp(CmpOp::Gt), 1),
            (b'!', ..) => (Tok::Not, 1),
            (b'(', ..) => (Tok::LParen, 1),
            (b')', ..) => (Tok::RParen, 1),
            (b'{', ..) => (Tok::LBrace, 1),
            (b'}', ..) => (Tok::RBrace, 1),
            (b',', ..) => (Tok::Comma, 1),
            (b'"', ..) => {
                let (text, len) = string(s, i)?;
                (Tok::Str(text), len)
            }
            (c, ..) if word_char(c) => {
                let mut j = i;
                while j < b.len() && word_char(b[j]) && !b[j..].starts_with(b"..") {
                    j += 1;
                }
                (keyword(&s[i..j]), j - i)
            }
            _ => {
                let ch = s[i..].chars().next().unwrap_or('?');
                return Err(FilterError::at(
                    start,
                    format!("unexpected character '{ch}'"),
                ));
            }
        };
        out.push((tok, start));
        i += len;
    }
    Ok(out)
}

/// A word that is an operator, or else a name or literal.
fn keyword(w: &str) -> Tok {
    match w {
        "and" => Tok::And,
        "or" => Tok::Or,
        "not" => Tok::Not,
        "eq" | "any_eq" => Tok::Cmp(CmpOp::Eq),
        "ne" | "all_ne" => Tok::Cmp(CmpOp::Ne),
        "lt" => Tok::Cmp(CmpOp::Lt),
        "le" => Tok::Cmp(CmpOp::Le),
        "gt" => Tok::Cmp(CmpOp::Gt),
        "ge" => Tok::Cmp(CmpOp::Ge),
        "contains" => Tok::Contains,
        "in" => Tok::In,
        _ => Tok::Word(w.to_string()),
    }
}

/// The double-quoted string starting at byte `start` of `s`: its text with `\"`, `\\`, `\n`,
/// `\t`, `\r` and `\xNN` resolved, and its length in `s` with the quotes.
fn string(s: &str, start: usize) -> Result<(String, usize), FilterError> {
    let mut text = String::new();
    let mut chars = s[start + 1..].char_indices();
    while let Some((k, c)) = chars.next() {
        match c {
            '"' => return Ok((text, k + 2)),
            '\\' => match chars.next() {
                Some((_, 'n')) => text.push('\n'),
                Some((_, 't')) => text.push('\t'),
                Some((_, 'r')) => text.push('\r'),
                Some((_, 'x')) => {
                    let hex: String = chars.by_ref().take(2).map(|(_, c)| c).collect();
                    let v = u8::from_str_radix(&hex, 16).map_err(|_| {
                        FilterError::at(start + 1 + k, "expected two hex digits after \\x")
                    })?;
                    text.push(char::from(v));
                }
                Some((_, c)) => text.push(c),
                None => break,
            },
            c => text.push(c),
        }
    }
    Err(FilterError::at(start, "string without its closing '\"'"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operators_words_and_strings() {
        let t: Vec<Tok> = tokens(r#"bth.psn>=0x10&&!(ecn=="c\"e")||x in {1..5,7}"#)
            .unwrap()
            .into_iter()
            .map(|(t, _)| t)
            .collect();
        let w = |s: &str| Tok::Word(s.into());
        assert_eq!(
            t,
            vec![
                w("bth.psn"),
                Tok::Cmp(CmpOp::Ge),
                w("0x10"),
                Tok::And,
                Tok::Not,
                Tok::LParen,
                w("ecn"),
                Tok::Cmp(CmpOp::Eq),
                Tok::Str("c\"e".into()),
                Tok::RParen,
                Tok::Or,
                w("x"),
                Tok::In,
                Tok::LBrace,
                w("1"),
                Tok::DotDot,
                w("5"),
                Tok::Comma,
                w("7"),
                Tok::RBrace,
            ]
        );
    }

    #[test]
    fn positions_and_errors() {
        let t = tokens("a  == fe80::1").unwrap();
        assert_eq!(t[1].1, 3);
        assert_eq!(t[2], (Tok::Word("fe80::1".into()), 6));
        let e = tokens("a == \"open").unwrap_err();
        assert_eq!(e.pos, 5);
        let e = tokens("a # b").unwrap_err();
        assert_eq!(e.pos, 2);
    }
}
