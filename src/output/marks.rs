//! How the per-packet analysis marks ([`Marks`]) are printed: short tags at the end of a text
//! line (`[RETX]`, `[GAP 3]`, `[NAKed]`), an `analysis` object in `--json`, an `Analysis:`
//! line in `-V`, and the text of a pcapng packet comment.

use super::line::Line;
use crate::analyze::marks::Marks;

/// The tags of `m`, in a fixed order, each `[…]`, separated by spaces; empty when none is set:
/// `[RETX]` retransmission, `[OUT-OF-ORDER]`, `[DUP]` duplicate, `[GAP n]` n PSNs missing
/// before it, `[NAKed]`, `[NAK reason]` on a NAK, `[RTT n ns]` on an ACK, `[CNP for frame n]`.
pub fn tags(m: &Marks) -> String {
    let mut t: Vec<String> = Vec::new();
    if m.retransmission {
        t.push("[RETX]".into());
    }
    if m.out_of_order {
        t.push("[OUT-OF-ORDER]".into());
    }
    if m.duplicate {
        t.push("[DUP]".into());
    }
    if m.gap > 0 {
        t.push(format!("[GAP {}]", m.gap));
    }
    if m.naked {
        t.push("[NAKed]".into());
    }
    if let Some(r) = m.nak_reason {
        t.push(format!("[NAK {r}]"));
    }
    if let Some(r) = m.ack_rtt_ns {
        t.push(format!("[RTT {r} ns]"));
    }
    if let Some(f) = m.cnp_for {
        t.push(format!("[CNP for frame {f}]"));
    }
    t.join(" ")
}

/// Append ` TAGS` before the newline that ends the last line in `l` (nothing without a
/// verdict: `message` alone is not a tag, it would end nearly every line).
pub fn append_tags(l: &mut Line, m: &Marks) {
    if !m.has_verdict() {
        return;
    }
    let nl = l.buf.last() == Some(&b'\n');
    if nl {
        l.buf.pop();
    }
    l.s(" ").s(&tags(m));
    if nl {
        l.s("\n");
    }
}

/// Add an `Analysis:` line with the tags and the message id (`message N`) to the `-V` tree
/// that ends `l` (before its blank line); nothing without marks.
pub fn append_tree(l: &mut Line, m: &Marks) {
    if m.is_empty() {
        return;
    }
    let blank = l.buf.ends_with(b"\n\n");
    if blank {
        l.buf.pop();
    }
    let mut text = tags(m);
    if let Some(id) = m.message {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(&format!("message {id}"));
    }
    l.s("    Analysis: ").s(&text).s("\n");
    if blank {
        l.s("\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_and_tree() {
        let m = Marks {
            retransmission: true,
            gap: 3,
            nak_reason: Some("psn_seq_err"),
            cnp_for: Some(9),
            ..Marks::default()
        };
        assert_eq!(
            tags(&m),
            "[RETX] [GAP 3] [NAK psn_seq_err] [CNP for frame 9]"
        );
        let mut l = Line::new();
        l.s("  1 line\n    tree\n\n");
        append_tree(&mut l, &m);
        assert!(l.buf.ends_with(
            b"    tree\n    Analysis: [RETX] [GAP 3] [NAK psn_seq_err] [CNP for frame 9]\n\n"
        ));
        let mut l = Line::new();
        l.s("x\n");
        append_tags(&mut l, &Marks::default());
        assert_eq!(l.buf, b"x\n");
        // The message id alone: in -V (and JSON), not a tag of the text line.
        let only = Marks {
            message: Some(45),
            ..Marks::default()
        };
        append_tags(&mut l, &only);
        assert_eq!(l.buf, b"x\n");
        let mut l = Line::new();
        l.s("  1 line\n\n");
        append_tree(&mut l, &Marks { gap: 1, ..only });
        assert!(l.buf.ends_with(b"    Analysis: [GAP 1] message 45\n\n"));
    }
}
