//! Second pass: the captures merged in time order (each shifted onto the reference capture's
//! clock) and every copy of a link's packets matched with its copy at the link's other end, in
//! a bounded window.
//!
//! A copy waits in the window until its counterpart arrives; copies of the same identity
//! (retransmissions) are paired so that a downstream copy takes the most recent upstream copy
//! still waiting, and an upstream copy the oldest waiting downstream copy: a first transmission
//! lost on the link and then retransmitted leaves the first one unmatched (lost), the
//! retransmission matched. A copy still unmatched one window after its time is lost on the
//! link (upstream copy) or missed by the upstream capture (downstream copy), unless the other
//! capture was not recording then.

use std::collections::VecDeque;
use std::collections::hash_map::Entry;

use smallvec::SmallVec;

use super::packet::{Content, Observation};
use super::plan::{LinkPlan, Plan, Side};
use super::stats::DelayStats;
use super::survey::{DirCache, Directions, Survey};
use crate::analyze::fxhash::FxBuild;

type FxMap<K, V> = std::collections::HashMap<K, V, FxBuild>;

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
    pending: FxMap<Key, Slot>,
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
            pending: FxMap::default(),
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
                let other = match side {
                    Side::Down => slot.up.pop(),
                    Side::Up if !slot.down.is_empty() => Some(slot.down.remove(0)),
                    Side::Up => None,
                };
                match other {
                    Some(x) => {
                        self.waiting -= 1;
                        if slot.up.is_empty() && slot.down.is_empty() {
                            o.remove();
                        }
                        let (up, down) = if side == Side::Up {
                            (copy, x)
                        } else {
                            (x, copy)
                        };
                        self.matched(key, up, down);
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

    fn matched(&mut self, key: Key, up: Copy, down: Copy) {
        let tally = &mut self.tallies[key.link as usize];
        let raw = down.raw - up.raw;
        tally.min_raw = Some(tally.min_raw.map_or(raw, |m| m.min(raw)));
        tally.delay.record(down.t - up.t, up.t);
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
            Side::Up => {
                let (f, e) = self.spans[l.down];
                f <= c.t && c.t.saturating_add(l.margin_ns) <= e
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
