//! Clock offsets between captures, NTP style (RFC 5905 §8's on-wire reasoning applied to
//! packets that cross between two captures in both directions).
//!
//! For captures `i` and `j` with clock offset θ = θⱼ − θᵢ (j's clock minus i's), a packet seen
//! first by `i` and then by `j` after a one-way delay d→ shows the raw delta rᶠ = tⱼ − tᵢ = d→ + θ;
//! a packet going the other way shows rʳ = tᵢ − tⱼ = d← − θ. Assuming the smallest delays of the
//! two directions are equal, θ̂ = (min rᶠ − min rʳ) / 2. The estimate is off by
//! (min d→ − min d←) / 2, whatever asymmetry there is, which is bounded by
//! (min d→ + min d←) / 2 = (min rᶠ + min rʳ) / 2: the error bound reported.
//!
//! Offsets against the reference capture ([`reference()`]: the first capture, unless another
//! one is linked by pairwise estimates to more captures) follow the chain of pairwise estimates
//! with the smallest summed error bound (Dijkstra over the captures); a capture that no chain
//! reaches has no offset.

use super::survey::{DirId, Sample, Survey};

/// A clock offset and its error bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Offset {
    /// This clock minus the reference clock, ns.
    pub ns: i64,
    /// Error bound, ns (half the sum of the smallest one-way delays each way).
    pub err: i64,
}

/// A pairwise estimate between captures `i` and `j`.
#[derive(Clone, Copy, Debug)]
pub struct PairEstimate {
    /// First capture.
    pub i: usize,
    /// Second capture.
    pub j: usize,
    /// θⱼ − θᵢ and its error bound.
    pub offset: Offset,
}

/// NTP-style estimate from the smallest raw delta each way (`min_fwd`: packets seen by `i`
/// first, tⱼ − tᵢ; `min_rev`: packets seen by `j` first, tᵢ − tⱼ).
pub fn ntp_estimate(min_fwd: i64, min_rev: i64) -> Offset {
    let diff = i128::from(min_fwd) - i128::from(min_rev);
    let sum = i128::from(min_fwd) + i128::from(min_rev);
    Offset {
        ns: diff.div_euclid(2) as i64,
        // Negative only when the captures contradict themselves (a packet "arriving before it
        // left" under every offset); the bound is then the size of the contradiction.
        err: (sum.abs() + 1).div_euclid(2) as i64,
    }
}

/// The capture whose clock the others are given against, among `n` captures with pairwise
/// estimates `pairs`: the first capture of the largest group of captures that chains of `pairs`
/// connect (ties: the group with the earliest capture), so that the order of the files does
/// not decide whether their clocks can be aligned (a first capture that shares no traffic with
/// the others would leave every offset unknown). The first capture when it is in such a group;
/// 0 when `n` is 0.
pub fn reference(n: usize, pairs: &[PairEstimate]) -> usize {
    // A capture's group: the captures its chains reach (a handful of files, so one chaining per
    // capture costs nothing). The earliest capture of the largest group: `max_by_key` keeps the
    // last maximum, so the captures are tried last to first.
    let reached = |c: usize| chain_offsets(n, c, pairs).iter().flatten().count();
    (0..n).rev().max_by_key(|&c| reached(c)).unwrap_or(0)
}

/// Each capture's offset against capture `reference` along the chain of `pairs` with the
/// smallest summed error bound; `None` for a capture no chain reaches.
pub fn chain_offsets(n: usize, reference: usize, pairs: &[PairEstimate]) -> Vec<Option<Offset>> {
    let mut best: Vec<Option<Offset>> = vec![None; n];
    let mut done = vec![false; n];
    if reference >= n {
        return best;
    }
    best[reference] = Some(Offset { ns: 0, err: 0 });
    while let Some(u) = (0..n)
        .filter(|&c| !done[c] && best[c].is_some())
        .min_by_key(|&c| best[c].map(|o| o.err))
    {
        done[u] = true;
        let base = best[u].unwrap_or(Offset { ns: 0, err: 0 });
        for p in pairs {
            let (v, theta) = match (p.i == u, p.j == u) {
                (true, _) => (p.j, p.offset.ns),
                (_, true) => (p.i, -p.offset.ns),
                _ => continue,
            };
            let cand = Offset {
                ns: base.ns + theta,
                err: base.err + p.offset.err,
            };
            if !done[v] && best[v].is_none_or(|b| cand.err < b.err) {
                best[v] = Some(cand);
            }
        }
    }
    best
}

/// Raw deltas tⱼ − tᵢ (ns) of the packets two samples share (each seen once in both).
#[derive(Clone, Copy, Debug)]
pub struct Deltas {
    /// Packets joined.
    pub n: usize,
    /// Smallest delta, ns.
    pub min: i64,
    /// Median delta, ns.
    pub median: i64,
    /// Largest delta, ns.
    pub max: i64,
}

/// Join two samples of one direction; `None` when they share no packet.
pub fn join(a: &Sample, b: &Sample) -> Option<Deltas> {
    let mut d: Vec<i64> = a
        .map
        .iter()
        .filter(|(_, (_, n))| *n == 1)
        .filter_map(|(h, (ta, _))| match b.map.get(h) {
            Some((tb, 1)) => Some(*tb as i64 - *ta as i64),
            _ => None,
        })
        .collect();
    if d.is_empty() {
        return None;
    }
    d.sort_unstable();
    Some(Deltas {
        n: d.len(),
        min: d[0],
        median: d[(d.len() - 1) / 2],
        max: d[d.len() - 1],
    })
}

/// Deltas of one direction between captures `i` and `j`, oriented: `up` is the capture that
/// sees the packets first; the raw delay r = t_down − t_up.
#[derive(Clone, Copy, Debug)]
pub struct Oriented {
    /// Direction.
    pub dir: DirId,
    /// Upstream capture.
    pub up: usize,
    /// Downstream capture.
    pub down: usize,
    /// Smallest r in the sample, ns.
    pub min_r: i64,
    /// Largest r in the sample, ns.
    pub max_r: i64,
}

impl Oriented {
    /// Orient the deltas tⱼ − tᵢ of `dir`, with `i` upstream when `i_up`.
    pub fn new(dir: DirId, i: usize, j: usize, d: &Deltas, i_up: bool) -> Oriented {
        if i_up {
            Oriented {
                dir,
                up: i,
                down: j,
                min_r: d.min,
                max_r: d.max,
            }
        } else {
            Oriented {
                dir,
                up: j,
                down: i,
                min_r: -d.max,
                max_r: -d.min,
            }
        }
    }
}

/// The pairwise estimate between `i` and `j` from oriented directions, when packets cross
/// both ways.
pub fn pair_estimate(i: usize, j: usize, oriented: &[Oriented]) -> Option<PairEstimate> {
    let min_of = |up: usize| {
        let down = if up == i { j } else { i };
        oriented
            .iter()
            .filter(|o| o.up == up && o.down == down)
            .map(|o| o.min_r)
            .min()
    };
    let (f, r) = (min_of(i)?, min_of(j)?);
    Some(PairEstimate {
        i,
        j,
        offset: ntp_estimate(f, r),
    })
}

/// The sampled deltas of every direction two captures share: `(dir, deltas)`.
pub fn shared_deltas(s: &Survey, i: usize, j: usize) -> Vec<(DirId, Deltas)> {
    let (a, b) = (&s.captures[i], &s.captures[j]);
    let mut v: Vec<(DirId, Deltas)> = a
        .dirs
        .iter()
        .filter_map(|(d, da)| {
            let db = b.dirs.get(d)?;
            Some((*d, join(&da.sample, &db.sample)?))
        })
        .collect();
    v.sort_unstable_by_key(|(d, _)| *d);
    v
}

/// Orient the directions two captures share whose reverse they also share: of the two, the one
/// with the larger median tⱼ − tᵢ goes from `i` to `j` (ties: the lower direction id).
pub fn orient_two_way(s: &Survey, i: usize, j: usize, shared: &[(DirId, Deltas)]) -> Vec<Oriented> {
    let find = |d: DirId| shared.iter().find(|(x, _)| *x == d).map(|(_, v)| v);
    let mut out = Vec::new();
    for (d, dd) in shared {
        let Some(rev) = s.directions.reverse(*d) else {
            continue;
        };
        let Some(rd) = find(rev) else { continue };
        let i_up = dd.median > rd.median || (dd.median == rd.median && *d < rev);
        out.push(Oriented::new(*d, i, j, dd, i_up));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ntp_recovers_the_offset_with_symmetric_minima() {
        // j's clock is 1000 ns ahead; smallest delay 300 ns each way.
        let o = ntp_estimate(300 + 1000, 300 - 1000);
        assert_eq!(o, Offset { ns: 1000, err: 300 });
        // Asymmetric minima (500 → and 100 ←): off by 200, within the bound of 300.
        let o = ntp_estimate(500 + 1000, 100 - 1000);
        assert_eq!(o, Offset { ns: 1200, err: 300 });
    }

    #[test]
    fn chain_follows_the_smallest_error() {
        let e = |i, j, ns, err| PairEstimate {
            i,
            j,
            offset: Offset { ns, err },
        };
        // 0→2 direct has a large error; 0→1→2 is tighter.
        let pairs = [e(0, 1, 100, 5), e(1, 2, 50, 5), e(0, 2, 170, 100)];
        let o = chain_offsets(4, 0, &pairs);
        assert_eq!(o[1], Some(Offset { ns: 100, err: 5 }));
        assert_eq!(o[2], Some(Offset { ns: 150, err: 10 }));
        assert_eq!(o[3], None);
        // Reversed pair orientation.
        let o = chain_offsets(2, 0, &[e(1, 0, -100, 5)]);
        assert_eq!(o[1], Some(Offset { ns: 100, err: 5 }));
        // Against capture 1: 0 is 100 ns behind it, 2 is 50 ahead.
        let o = chain_offsets(3, 1, &pairs);
        assert_eq!(o[0], Some(Offset { ns: -100, err: 5 }));
        assert_eq!(o[1], Some(Offset { ns: 0, err: 0 }));
        assert_eq!(o[2], Some(Offset { ns: 50, err: 5 }));
    }

    /// The reference is the first capture unless it is outside the largest group of captures
    /// that share traffic; then the first capture of that group.
    #[test]
    fn reference_is_the_first_capture_of_the_largest_group() {
        let e = |i, j| PairEstimate {
            i,
            j,
            offset: Offset { ns: 0, err: 1 },
        };
        assert_eq!(reference(0, &[]), 0);
        assert_eq!(reference(3, &[]), 0, "no pair: the first capture");
        assert_eq!(reference(3, &[e(0, 1)]), 0);
        // Capture 0 shares nothing: 1 and 2 do.
        assert_eq!(reference(3, &[e(1, 2)]), 1);
        assert_eq!(reference(4, &[e(2, 3), e(3, 1)]), 1);
        // Two groups of two: the one with the earliest capture.
        assert_eq!(reference(4, &[e(2, 3), e(0, 1)]), 0);
        assert_eq!(reference(5, &[e(3, 4), e(1, 2)]), 1);
        // A larger group later in the list wins over a pair at the front.
        assert_eq!(reference(5, &[e(0, 1), e(2, 3), e(3, 4)]), 2);
    }
}
