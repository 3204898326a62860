//! Frames a user's BPF filter (`-f`) rejects only because they carry VLAN tags.
//!
//! libpcap's filter language reads `udp port 4791` at the untagged offsets, so an 802.1Q /
//! 802.1ad frame (the priority tag, VLAN 0 with a PCP, that PFC-enabled NICs send included) does
//! not match it, as in tcpdump (pcap-filter(7), "vlan"). For each rejected Ethernet frame with
//! tags, the filter is run a second time on the same frame with its tags removed; when that
//! matches and the caller's predicate says the frame is RoCE, the frame is counted, and at the
//! end one stderr line says how many there were and suggests a filter that also matches them.

use pcap::BpfProgram;

/// 802.1Q, 802.1ad and the pre-standard QinQ TPID.
const TPIDS: [u16; 3] = [0x8100, 0x88a8, 0x9100];

/// Most tags stripped; a frame with more is not counted.
const MAX_TAGS: usize = 8;

/// Write `frame` without its VLAN tags into `out` (cleared first): the two MAC addresses, the
/// Ethertype after the last tag, the rest. Returns the number of tags removed (0 when the
/// frame is untagged or too short to hold its tags).
pub fn strip_tags(frame: &[u8], out: &mut Vec<u8>) -> usize {
    let mut off = 12;
    let mut tags = 0;
    while tags < MAX_TAGS
        && frame.len() >= off + 6
        && TPIDS.contains(&u16::from_be_bytes([frame[off], frame[off + 1]]))
    {
        off += 4;
        tags += 1;
    }
    if tags == 0 || tags == MAX_TAGS {
        return 0;
    }
    out.clear();
    out.extend_from_slice(&frame[..12]);
    out.extend_from_slice(&frame[off..]);
    tags
}

/// A predicate: is this frame (data, length on the wire) RoCE?
pub type IsRoce = Box<dyn FnMut(&[u8], u32) -> bool + Send>;

/// Counts the RoCE frames a filter rejected that it would match untagged.
pub struct TagMiss {
    is_roce: IsRoce,
    scratch: Vec<u8>,
    /// Frames counted.
    pub count: u64,
    /// Most tags one counted frame had (1 or 2 in practice).
    pub max_tags: usize,
}

impl TagMiss {
    /// A counter that asks `is_roce` about each candidate.
    pub fn new(is_roce: IsRoce) -> TagMiss {
        TagMiss {
            is_roce,
            scratch: Vec::new(),
            count: 0,
            max_tags: 0,
        }
    }

    /// `frame` (Ethernet, `len` bytes on the wire) was rejected by `prog`: count it when its
    /// untagged form matches and it is RoCE.
    pub fn rejected(&mut self, prog: &BpfProgram, frame: &[u8], len: u32) {
        let tags = strip_tags(frame, &mut self.scratch);
        if tags > 0 && prog.filter(&self.scratch) && (self.is_roce)(frame, len) {
            self.count += 1;
            self.max_tags = self.max_tags.max(tags);
        }
    }

    /// The end-of-run stderr line for filter `expr`, when frames were counted.
    pub fn message(&self, expr: &str) -> Option<String> {
        (self.count > 0).then(|| {
            let s = if self.count == 1 { "" } else { "s" };
            format!(
                "roce-inspect: {} tagged RoCE frame{s} {} not matched by the filter '{expr}' (VLAN tags shift the offsets it reads); to include them use -f '{}'",
                self.count,
                if self.count == 1 { "was" } else { "were" },
                suggest(expr, self.max_tags)
            )
        })
    }
}

/// A filter matching what `expr` matches untagged, behind one tag and (with `tags` ≥ 2)
/// behind two. Each `vlan` shifts the offsets for the rest of the expression
/// (pcap-filter(7)), so the two-tag clause is nested inside the one-tag clause.
pub fn suggest(expr: &str, tags: usize) -> String {
    let compound = expr
        .split_whitespace()
        .any(|w| matches!(w, "and" | "or" | "not" | "&&" | "||") || w.starts_with('!'));
    let e = if compound {
        format!("({expr})")
    } else {
        expr.to_string()
    };
    if tags >= 2 {
        format!("{e} or (vlan and ({e} or (vlan and {e})))")
    } else {
        format!("{e} or (vlan and {e})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pcap::{Capture, Linktype};

    fn frame(tags: &[u16], dport: u16) -> Vec<u8> {
        let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1];
        for (i, t) in tags.iter().enumerate() {
            f.extend_from_slice(&t.to_be_bytes());
            f.extend_from_slice(&[0x60 | i as u8, 0]); // PCP 3, VID 0 (priority tag)
        }
        f.extend_from_slice(&[0x08, 0x00]);
        f.extend_from_slice(&[0x45, 0, 0, 28, 0, 0, 0x40, 0, 64, 17, 0, 0]);
        f.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2]);
        f.extend_from_slice(&[0xc0, 0, (dport >> 8) as u8, dport as u8, 0, 8, 0, 0]);
        f
    }

    fn prog(expr: &str) -> BpfProgram {
        Capture::dead(Linktype::ETHERNET)
            .unwrap()
            .compile(expr, true)
            .unwrap()
    }

    #[test]
    fn strip_removes_every_tag() {
        let mut out = Vec::new();
        assert_eq!(strip_tags(&frame(&[], 4791), &mut out), 0);
        assert_eq!(strip_tags(&frame(&[0x8100], 4791), &mut out), 1);
        assert_eq!(out, frame(&[], 4791));
        assert_eq!(strip_tags(&frame(&[0x88a8, 0x8100], 4791), &mut out), 2);
        assert_eq!(out, frame(&[], 4791));
        assert_eq!(strip_tags(&[0x81; 13], &mut out), 0);
    }

    #[test]
    fn counts_tagged_roce_the_filter_misses() {
        let p = prog("udp port 4791");
        let mut m = TagMiss::new(Box::new(|_, _| true));
        for f in [frame(&[0x8100], 4791), frame(&[0x8100], 53), frame(&[], 53)] {
            assert!(!p.filter(&f));
            m.rejected(&p, &f, f.len() as u32);
        }
        assert_eq!((m.count, m.max_tags), (1, 1));
        let mut not_roce = TagMiss::new(Box::new(|_, _| false));
        let f = frame(&[0x8100], 4791);
        not_roce.rejected(&p, &f, f.len() as u32);
        assert_eq!(not_roce.count, 0);
        assert!(not_roce.message("udp port 4791").is_none());
        let msg = m.message("udp port 4791").unwrap();
        assert!(
            msg.contains("1 tagged RoCE frame was not matched")
                && msg.ends_with("-f 'udp port 4791 or (vlan and udp port 4791)'"),
            "{msg}"
        );
    }

    #[test]
    fn suggestions_match_what_they_promise() {
        let one = suggest("udp port 4791", 1);
        assert_eq!(one, "udp port 4791 or (vlan and udp port 4791)");
        let two = suggest("udp port 4791 and host 10.0.0.1", 2);
        let p = prog(&two);
        for tags in [&[][..], &[0x8100], &[0x88a8, 0x8100]] {
            assert!(p.filter(&frame(tags, 4791)), "{two} with {tags:?}");
            assert!(!p.filter(&frame(tags, 53)), "{two} with {tags:?}");
        }
        assert!(prog(&one).filter(&frame(&[0x8100], 4791)));
    }
}
