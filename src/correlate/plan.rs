//! From the survey to a matching plan: clock offsets, and for every direction seen by two or
//! more captures, which capture is upstream of which (the links).

use rustc_hash::FxHashMap;

use super::clock::{
    Deltas, Offset, Oriented, PairEstimate, chain_offsets, orient_two_way, pair_estimate,
    reference, shared_deltas,
};
use super::survey::{DirId, Survey};

/// Which end of a link a capture is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The capture that sees the link's packets first.
    Up,
    /// The capture that sees them after the link.
    Down,
}

/// One link: a direction seen by two captures, `up` before `down`.
#[derive(Clone, Copy, Debug)]
pub struct LinkPlan {
    /// Direction.
    pub dir: DirId,
    /// Upstream capture.
    pub up: usize,
    /// Downstream capture.
    pub down: usize,
    /// Largest one-way delay in the survey's sample (ns; the window when none was sampled):
    /// a packet this close to the other capture's start or end is not called lost or missed.
    pub margin_ns: i64,
    /// Smallest and largest one-way delay in the survey's sample, on the survey's offsets (ns;
    /// `None` when no packet was sampled at both ends): the window in which a downstream copy
    /// is looked for among upstream copies of the same packet (resends).
    pub delay_window_ns: Option<(i64, i64)>,
    /// Whether the two ends' samples share packets of the direction. A link whose ends share
    /// none may still carry packets (a short capture of a few of a long one's packets is
    /// rarely in the long one's sample), or none (another job between the same hosts): the
    /// report keeps it only when the matching crossed packets over it.
    pub sampled: bool,
}

/// The matching plan.
pub struct Plan {
    /// The capture whose clock the offsets are against ([`reference()`](super::clock::reference)).
    pub reference: usize,
    /// Each capture's clock offset against the reference capture's (survey estimate).
    pub offsets: Vec<Option<Offset>>,
    /// The pairwise estimates the offsets were chained from.
    pub pairs: Vec<PairEstimate>,
    /// Every link.
    pub links: Vec<LinkPlan>,
    /// Per direction: (capture, link, side) for each link end.
    pub by_dir: Vec<Vec<(usize, u32, Side)>>,
    /// Directions only one capture sees: (direction, capture).
    pub single: Vec<(DirId, usize)>,
}

type Orientations = FxHashMap<(usize, usize, DirId), (Deltas, Oriented)>;

/// Build the plan (see the module doc); `window_ns` is the margin of unsampled links.
pub fn plan(s: &Survey, window_ns: i64) -> Plan {
    let n = s.captures.len();
    let mut shared = FxHashMap::default();
    let mut orient: Orientations = FxHashMap::default();
    let mut pairs = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            let sh = shared_deltas(s, i, j);
            let two = orient_two_way(s, i, j, &sh);
            pairs.extend(pair_estimate(i, j, &two));
            for o in two {
                let d = sh.iter().find(|(x, _)| *x == o.dir).map(|(_, d)| *d);
                orient.extend(d.map(|d| ((i, j, o.dir), (d, o))));
            }
            shared.insert((i, j), sh);
        }
    }
    let reference = reference(n, &pairs);
    let offsets = chain_offsets(n, reference, &pairs);
    orient_one_way(&shared, &offsets, &mut orient);
    let (links, single) = links(s, &offsets, &orient, window_ns);
    let mut by_dir = vec![Vec::new(); s.directions.list.len()];
    for (k, l) in links.iter().enumerate() {
        by_dir[l.dir as usize].push((l.up, k as u32, Side::Up));
        by_dir[l.dir as usize].push((l.down, k as u32, Side::Down));
    }
    Plan {
        reference,
        offsets,
        pairs,
        links,
        by_dir,
        single,
    }
}

/// θ of capture `c` (0 when unknown).
fn theta(offsets: &[Option<Offset>], c: usize) -> i64 {
    offsets[c].map_or(0, |o| o.ns)
}

/// Directions a pair shares one way only: the capture that sees them first once the clocks
/// are aligned is upstream.
fn orient_one_way(
    shared: &FxHashMap<(usize, usize), Vec<(DirId, Deltas)>>,
    offsets: &[Option<Offset>],
    orient: &mut Orientations,
) {
    for (&(i, j), sh) in shared {
        let rel = theta(offsets, j) - theta(offsets, i);
        for (d, dd) in sh {
            orient
                .entry((i, j, *d))
                .or_insert_with(|| (*dd, Oriented::new(*d, i, j, dd, dd.median >= rel)));
        }
    }
}

/// Order the captures of each direction from upstream to downstream (by how many of the others
/// each one precedes) and make a link of each consecutive two. Captures whose samples share no
/// packet of the direction with the others come last, so that one seeing other packets between
/// the same two hosts (another job, another time) is never chained between two captures of one
/// link (`correlate other.pcap a.pcap b.pcap` then matched nothing).
fn links(
    s: &Survey,
    offsets: &[Option<Offset>],
    orient: &Orientations,
    window_ns: i64,
) -> (Vec<LinkPlan>, Vec<(DirId, usize)>) {
    let mut links = Vec::new();
    let mut single = Vec::new();
    for d in 0..s.directions.list.len() as DirId {
        let covering: Vec<usize> = (0..s.captures.len())
            .filter(|&c| s.captures[c].dirs.contains_key(&d))
            .collect();
        if covering.len() == 1 {
            single.push((d, covering[0]));
            continue;
        }
        let oriented = |a: usize, b: usize| orient.get(&(a.min(b), a.max(b), d));
        let precedes = |a: usize, b: usize| oriented(a, b).is_some_and(|(_, o)| o.up == a);
        let shares = |c: usize| covering.iter().any(|&o| o != c && oriented(c, o).is_some());
        let mut order = covering.clone();
        order.sort_by_key(|&c| {
            let wins = covering.iter().filter(|&&o| o != c && precedes(c, o));
            (!shares(c), std::cmp::Reverse(wins.count()), c)
        });
        for w in order.windows(2) {
            let (up, down) = (w[0], w[1]);
            let sampled = oriented(up, down).is_some();
            let shift = theta(offsets, down) - theta(offsets, up);
            let delay_window = oriented(up, down)
                .filter(|(_, o)| o.up == up)
                .map(|(_, o)| (o.min_r - shift, o.max_r - shift));
            let margin = delay_window.map_or(window_ns, |(_, hi)| hi.max(0));
            links.push(LinkPlan {
                dir: d,
                up,
                down,
                margin_ns: margin,
                delay_window_ns: delay_window,
                sampled,
            });
        }
    }
    (links, single)
}
