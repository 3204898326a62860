//! Second pass: the captures merged in time order (each shifted onto the reference capture's
//! clock) and every copy of a link's packets matched with its copy at the link's other end, in
//! a bounded window.
//!
//! A copy waits in the window until its counterpart arrives. Copies of the same identity
//! (resends, duplicate ACKs) are byte-identical, so they are told apart by time, never by
//! rank: a downstream copy takes the upstream copy whose delay lies in the link's plausible
//! delay window (the survey's smallest and largest sampled delay, widened by each unambiguous
//! match and by a µs of timestamp resolution when a capture has µs times). One candidate: an
//! unambiguous match. Several: the oldest is taken (FIFO per QP) and the match is `ambiguous`,
//! counted but left out of the delays and of the offset estimate. None in the window: the
//! only upstream copy waiting is taken (a delay beyond the sample's), or the most recent of
//! several, ambiguous. A first transmission lost on the link and then resent is left
//! unmatched (lost), the resend matched. A copy still unmatched one window after its time is
//! lost on the link (upstream copy) or missed by the upstream capture (downstream copy), unless
//! the other capture was not recording then; an upstream copy sent before the downstream
//! capture's first packet whose resend crossed the link is lost (the first packet of a run,
//! lost and resent, would otherwise never be listed).

use std::collections::VecDeque;
use std::collections::hash_map::Entry;

use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use super::packet::{Content, Observation};
use super::plan::{LinkPlan, Plan, Side};
use super::stats::DelayStats;
use super::survey::{DirCache, Directions, Survey};

/// Most lost, missed and corrupted packets listed each; the per-link counts stay complete.
pub const MAX_LISTED: usize = 10_000;

/// A copy of a packet waiting for its counterpart.
#[derive(Clone, Copy, Debug)]
struct Copy {
    /// Time on the reference clock (survey offset applied), ns.
    t: i64,
    /// Time on its own capture's clock, ns.
    raw: i64,
    frame: u64,
    content: Content,
    /// Upstream copies: a later copy of the same packet (a resend) crossed the link, so this
    /// one was not delivered, or its answer was lost (see [`Matcher::unmatched`]).
    resent: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Key {
    link: u32,
    dest_qp: u32,
    psn: u32,
    opcode: u8,
}

#[derive(Default)]
struct Slot {
    up: SmallVec<[Copy; 1]>,
    down: SmallVec<[Copy; 1]>,
}

/// One packet copy of a report list.
#[derive(Clone, Copy, Debug)]
pub struct Event {
    /// Link index in the plan.
    pub link: u32,
    /// BTH DestQP.
    pub dest_qp: u32,
    /// BTH PSN.
    pub psn: u32,
    /// BTH OpCode.
    pub opcode: u8,
    /// Frame number in the capture that saw it (the upstream one for a corrupted copy).
    pub frame: u64,
    /// Frame number of the other copy (corrupted copies only).
    pub other_frame: Option<u64>,
    /// Time on the reference clock, ns.
    pub t: i64,
}

/// Counts and delays of one link.
pub struct LinkTally {
    /// Copies matched with identical content.
    pub matched: u64,
    /// Upstream copies never seen downstream.
    pub lost: u64,
    /// Downstream copies the upstream capture does not hold.
    pub missed: u64,
    /// Matched copies whose content (ICRC) differs.
    pub corrupted: u64,
    /// Of the matched and corrupted copies, those with several candidates in the delay window
    /// (left out of the delays and the offset estimate).
    pub ambiguous: u64,
    /// The plausible delay window under the survey's offsets, ns (`None`: no sample).
    pub window: Option<(i64, i64)>,
    /// Unmatched copies from when the other capture was not recording.
    pub at_edges: u64,
    /// Delays under the survey's offsets, ns.
    pub delay: DelayStats,
    /// Smallest raw delta t_down − t_up (own clocks), ns, for the final offset estimate.
    pub min_raw: Option<i64>,
}

/// The lists of the report.
#[derive(Default)]
pub struct Lists {
    /// Lost on a link.
    pub lost: Vec<Event>,
    /// Missed by an upstream capture.
    pub missed: Vec<Event>,
    /// Corrupted on a link.
    pub corrupted: Vec<Event>,
}

/// The window matcher.
pub struct Matcher<'a> {
    plan: &'a Plan,
    directions: &'a Directions,
    cache: DirCache,
    window: i64,
    /// Per capture: first and last RoCE time on the reference clock, ns.
    spans: Vec<(i64, i64)>,
    theta: Vec<i64>,
    pending: FxHashMap<Key, Slot>,
    queue: VecDeque<(i64, Key)>,
    /// Per link.
    pub tallies: Vec<LinkTally>,
    /// The lists.
    pub lists: Lists,
    /// Copies waiting now.
    waiting: usize,
    /// Most copies waiting at once.
    pub peak_pending: usize,
}

impl<'a> Matcher<'a> {
    /// A matcher for `plan` with a window of `window_ns`.
    pub fn new(plan: &'a Plan, survey: &'a Survey, window_ns: i64) -> Matcher<'a> {
        let theta: Vec<i64> = plan.offsets.iter().map(|o| o.map_or(0, |o| o.ns)).collect();
        let spans: Vec<(i64, i64)> = survey
            .captures
            .iter()
            .zip(&theta)
            .map(|(c, th)| {
                let f = c.first_ns.unwrap_or(0) as i64 - th;
                (f, c.last_ns.map_or(f, |l| l as i64 - th))
            })
            .collect();
        let tallies = plan
            .links
            .iter()
            .map(|l| {
                let (s, e) = (spans[l.up], spans[l.down]);
                LinkTally {
                    matched: 0,
                    lost: 0,
                    missed: 0,
                    corrupted: 0,
                    ambiguous: 0,
                    window: delay_window(l, survey),
                    at_edges: 0,
                    delay: DelayStats::new(s.0.max(e.0), s.1.min(e.1)),
                    min_raw: None,
                }
            })
            .collect();
        Matcher {
            plan,
            directions: &survey.directions,
            cache: DirCache::default(),
            window: window_ns,
            spans,
            theta,
            pending: FxHashMap::default(),
            queue: VecDeque::new(),
            tallies,
            lists: Lists::default(),
            waiting: 0,
            peak_pending: 0,
        }
    }

    /// The time of `o` from capture `c` on the reference clock: the merge order.
    pub fn reference_time(&self, c: usize, o: &Observation) -> i64 {
        o.ts_ns as i64 - self.theta[c]
    }

    /// Take one packet of capture `c`, in merge order.
    pub fn push(&mut self, c: usize, o: &Observation) {
        let t = self.reference_time(c, o);
        self.expire(t.saturating_sub(self.window));
        let (src, dst) = (o.id.src, o.id.dst);
        let directions = self.directions;
        let Some(d) = self.cache.get_or(src, dst, || directions.get(src, dst)) else {
            return;
        };
        let copy = Copy {
            t,
            raw: o.ts_ns as i64,
            frame: o.frame,
            content: o.content,
            resent: false,
        };
        for &(cap, link, side) in &self.plan.by_dir[d as usize] {
            if cap == c {
                let key = Key {
                    link,
                    dest_qp: o.id.dest_qp,
                    psn: o.id.psn,
                    opcode: o.id.opcode,
                };
                self.insert(key, side, copy);
            }
        }
    }

    /// At the end of the input: every copy still waiting is unmatched.
    pub fn finish(&mut self) {
        self.expire(i64::MAX);
    }

    fn insert(&mut self, key: Key, side: Side, copy: Copy) {
        match self.pending.entry(key) {
            Entry::Occupied(mut o) => {
                let slot = o.get_mut();
                let window = self.tallies[key.link as usize].window;
                let other = match side {
                    Side::Down => pick_up(&mut slot.up, copy.t, window),
                    Side::Up if !slot.down.is_empty() => {
                        let ambiguous = slot.down.len() > 1;
                        Some((slot.down.remove(0), ambiguous))
                    }
                    Side::Up => None,
                };
                match other {
                    Some((x, ambiguous)) => {
                        self.waiting -= 1;
                        if slot.up.is_empty() && slot.down.is_empty() {
                            o.remove();
                        }
                        let (up, down) = if side == Side::Up {
                            (copy, x)
                        } else {
                            (x, copy)
                        };
                        self.matched(key, up, down, ambiguous);
                    }
                    None => {
                        push_side(slot, side, copy);
                        self.wait(copy.t, key);
                    }
                }
            }
            Entry::Vacant(v) => {
                push_side(v.insert(Slot::default()), side, copy);
                self.wait(copy.t, key);
            }
        }
    }

    /// A copy left waiting: its expiry entry (entries of copies matched meanwhile are skipped
    /// when they come up, so the queue holds at most one window of packets).
    fn wait(&mut self, t: i64, key: Key) {
        self.queue.push_back((t, key));
        self.waiting += 1;
        self.peak_pending = self.peak_pending.max(self.waiting);
    }

    fn matched(&mut self, key: Key, up: Copy, down: Copy, ambiguous: bool) {
        let tally = &mut self.tallies[key.link as usize];
        if ambiguous {
            tally.ambiguous += 1;
        } else {
            let raw = down.raw - up.raw;
            let delay = down.t - up.t;
            tally.min_raw = Some(tally.min_raw.map_or(raw, |m| m.min(raw)));
            tally.delay.record(delay, up.t);
            if let Some(w) = &mut tally.window {
                *w = (w.0.min(delay), w.1.max(delay));
            }
        }
        if up.content.differs(&down.content) {
            tally.corrupted += 1;
            let mut e = event(key, &up);
            e.other_frame = Some(down.frame);
            push_capped(&mut self.lists.corrupted, e);
        } else {
            tally.matched += 1;
        }
    }

    /// Classify every waiting copy older than `before` (reference clock, ns).
    fn expire(&mut self, before: i64) {
        while let Some(&(t, key)) = self.queue.front() {
            if t >= before {
                break;
            }
            self.queue.pop_front();
            let Entry::Occupied(mut o) = self.pending.entry(key) else {
                continue;
            };
            let slot = o.get_mut();
            let ups = drain_older(&mut slot.up, before);
            let downs = drain_older(&mut slot.down, before);
            if slot.up.is_empty() && slot.down.is_empty() {
                o.remove();
            }
            self.waiting -= ups.len() + downs.len();
            for c in ups {
                self.unmatched(key, Side::Up, &c);
            }
            for c in downs {
                self.unmatched(key, Side::Down, &c);
            }
        }
    }

    fn unmatched(&mut self, key: Key, side: Side, c: &Copy) {
        let l: LinkPlan = self.plan.links[key.link as usize];
        let tally = &mut self.tallies[key.link as usize];
        let covered = match side {
            // Before the downstream capture's first packet, an upstream copy whose resend
            // crossed the link is lost all the same: a go-back-N or timeout resend follows a
            // first transmission that did not arrive (or whose ACK did not). A lost first
            // packet of a run is otherwise always "at the edge" (issue 38: the downstream
            // capture starts with the next packet's arrival).
            Side::Up => {
                let (f, e) = self.spans[l.down];
                (f <= c.t || c.resent) && c.t.saturating_add(l.margin_ns) <= e
            }
            Side::Down => {
                let (f, e) = self.spans[l.up];
                f <= c.t.saturating_sub(l.margin_ns) && c.t <= e
            }
        };
        if !covered {
            tally.at_edges += 1;
        } else if side == Side::Up {
            tally.lost += 1;
            push_capped(&mut self.lists.lost, event(key, c));
        } else {
            tally.missed += 1;
            push_capped(&mut self.lists.missed, event(key, c));
        }
    }
}

/// The plausible delay window of link `l` (ns, survey offsets): its sampled delays, a µs wider
/// each way when either capture has µs timestamps.
fn delay_window(l: &LinkPlan, survey: &Survey) -> Option<(i64, i64)> {
    let (lo, hi) = l.delay_window_ns?;
    let coarse = !(survey.captures[l.up].sub_us && survey.captures[l.down].sub_us);
    let slack = if coarse { 1_000 } else { 0 };
    Some((lo - slack, hi + slack))
}

/// The upstream copy (of the copies `ups` of one packet, oldest first) that a downstream copy
/// at `t` (ns, reference clock) matches, and whether the match is ambiguous: the one copy
/// whose delay lies in `window`; the oldest of several (FIFO), ambiguous; with none in the
/// window, the only copy waiting, or the most recent of several, ambiguous. Without a
/// window, as with none in it. The copies older than the one taken are marked resent.
fn pick_up(
    ups: &mut SmallVec<[Copy; 1]>,
    t: i64,
    window: Option<(i64, i64)>,
) -> Option<(Copy, bool)> {
    if ups.len() <= 1 {
        return ups.pop().map(|c| (c, false));
    }
    let inside = |c: &Copy| window.is_some_and(|(lo, hi)| (lo..=hi).contains(&(t - c.t)));
    let mut found = ups
        .iter()
        .enumerate()
        .filter(|(_, c)| inside(c))
        .map(|(i, _)| i);
    let (i, ambiguous) = match (found.next(), found.next()) {
        (Some(i), None) => (i, false),
        (Some(i), Some(_)) => (i, true),
        (None, _) => (ups.len() - 1, true),
    };
    // The copies sent before the one taken were resent: it is a later copy of them.
    for c in &mut ups[..i] {
        c.resent = true;
    }
    Some((ups.remove(i), ambiguous))
}

fn push_side(slot: &mut Slot, side: Side, copy: Copy) {
    match side {
        Side::Up => slot.up.push(copy),
        Side::Down => slot.down.push(copy),
    }
}

/// Remove and return the copies older than `before`, oldest first.
fn drain_older(v: &mut SmallVec<[Copy; 1]>, before: i64) -> SmallVec<[Copy; 1]> {
    let mut old = SmallVec::new();
    v.retain(|c| {
        if c.t < before {
            old.push(*c);
            false
        } else {
            true
        }
    });
    old
}

fn event(key: Key, c: &Copy) -> Event {
    Event {
        link: key.link,
        dest_qp: key.dest_qp,
        psn: key.psn,
        opcode: key.opcode,
        frame: c.frame,
        other_frame: None,
        t: c.t,
    }
}

fn push_capped(v: &mut Vec<Event>, e: Event) {
    if v.len() < MAX_LISTED {
        v.push(e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copies(ts: &[i64]) -> SmallVec<[Copy; 1]> {
        ts.iter()
            .map(|&t| Copy {
                t,
                raw: t,
                frame: t as u64,
                content: Content::default(),
                resent: false,
            })
            .collect()
    }

    /// An original lost between the taps, resent 5 µs later; the path takes 2.5 µs.
    #[test]
    fn the_resend_is_told_from_the_original_by_its_delay() {
        let mut ups = copies(&[1_000, 6_000]);
        let (c, ambiguous) = pick_up(&mut ups, 8_500, Some((2_500, 2_500))).unwrap();
        assert_eq!((c.t, ambiguous), (6_000, false));
        assert_eq!(ups.len(), 1, "the original waits, to be lost");
        assert!(ups[0].resent, "the original is marked resent");
        // A burst of duplicate ACKs 300 ns apart, the second lost: the third's copy arrives.
        let mut ups = copies(&[1_000, 1_300, 1_600]);
        let (c, ambiguous) = pick_up(&mut ups, 4_100, Some((2_500, 2_500))).unwrap();
        assert_eq!((c.t, ambiguous), (1_600, false));
    }

    #[test]
    fn several_candidates_are_ambiguous_and_fifo() {
        // Delays 2–10 µs: both copies 300 ns apart fit; the oldest is taken.
        let mut ups = copies(&[1_000, 1_300]);
        let (c, ambiguous) = pick_up(&mut ups, 5_000, Some((2_000, 10_000))).unwrap();
        assert_eq!((c.t, ambiguous), (1_000, true));
        // None in the window: the most recent of several, ambiguous; the only one, not.
        let mut ups = copies(&[1_000, 1_300]);
        let (c, ambiguous) = pick_up(&mut ups, 50_000, Some((2_000, 10_000))).unwrap();
        assert_eq!((c.t, ambiguous), (1_300, true));
        let (c, ambiguous) = pick_up(&mut ups, 50_000, Some((2_000, 10_000))).unwrap();
        assert_eq!((c.t, ambiguous), (1_000, false));
        assert!(pick_up(&mut ups, 50_000, None).is_none());
    }
}
