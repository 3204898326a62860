//! Bounded-memory latency samples and their summary (min / median / p99 / max).
//!
//! Each [`Samples`] keeps exact min, max, count and sum, plus at most [`Samples::CAP`] values:
//! all of them while fewer have been seen (percentiles are then exact), a uniform reservoir
//! sample afterwards (Vitter's algorithm R with a fixed-seed xorshift generator, so runs are
//! reproducible). Memory per statistic never exceeds `CAP × 8` bytes.

use serde::Serialize;

/// A bounded collection of non-negative samples (nanoseconds, or any integer unit). Without
/// samples it is one pointer (8 bytes): most flows have none of most statistics, and a flow
/// holds several.
#[derive(Clone, Debug, Default)]
pub struct Samples {
    inner: Option<Box<Inner>>,
}

/// The samples, once there is one.
#[derive(Clone, Debug, Default)]
struct Inner {
    n: u64,
    min: u64,
    max: u64,
    sum: u128,
    buf: Vec<u64>,
    rng: u64,
}

/// Summary of a [`Samples`]: count and order statistics, in the unit of the samples.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Stat {
    /// Number of samples.
    pub count: u64,
    /// Smallest sample (exact).
    pub min: u64,
    /// Median: the sample at rank ⌈n/2⌉ (lower median); exact up to `CAP` samples.
    pub median: u64,
    /// 99th percentile: the sample at rank ⌈0.99·n⌉; exact up to `CAP` samples.
    pub p99: u64,
    /// Largest sample (exact).
    pub max: u64,
    /// Arithmetic mean (exact).
    pub mean: f64,
}

impl Samples {
    /// No samples.
    pub const fn new() -> Samples {
        Samples { inner: None }
    }

    /// Most values kept for percentiles.
    pub const CAP: usize = 1024;

    /// Add one sample.
    pub fn add(&mut self, v: u64) {
        self.inner.get_or_insert_default().add(v);
    }

    /// Add the interval from `from` to `to` (ns), unless it is negative — a frame stamped
    /// before the one it answers, the capture's or the mirror sessions' clocks disagreeing —
    /// which is left out rather than added as 0. Returns whether it was added (the caller
    /// counts the others).
    #[must_use]
    pub fn add_interval(&mut self, from: u64, to: u64) -> bool {
        let Some(d) = to.checked_sub(from) else {
            return false;
        };
        self.add(d);
        true
    }

    /// Give back the reservoir's unused capacity (a `Vec` grown by doubling holds up to twice
    /// its samples); the samples stay.
    pub fn shrink_to_fit(&mut self) {
        if let Some(i) = &mut self.inner {
            i.buf.shrink_to_fit();
        }
    }

    /// Number of samples added.
    pub fn count(&self) -> u64 {
        self.inner.as_ref().map_or(0, |i| i.n)
    }

    /// Arithmetic mean (exact, rounded down), or `None` without samples; O(1).
    pub fn mean(&self) -> Option<u64> {
        let i = self.inner.as_ref()?;
        (i.n > 0).then(|| (i.sum / u128::from(i.n)) as u64)
    }

    /// Fold `other` into `self` (percentiles become approximate once the reservoirs are full).
    pub fn merge(&mut self, other: &Samples) {
        if let Some(o) = &other.inner {
            self.inner.get_or_insert_default().merge(o);
        }
    }

    /// Summary, or `None` without samples.
    pub fn stat(&self) -> Option<Stat> {
        self.inner.as_ref()?.stat()
    }
}

impl Inner {
    fn add(&mut self, v: u64) {
        if self.n == 0 {
            self.min = v;
            self.max = v;
            self.rng = 0x9E37_79B9_7F4A_7C15;
        } else {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
        self.n += 1;
        self.sum += u128::from(v);
        if self.buf.len() < Samples::CAP {
            self.buf.push(v);
        } else {
            // xorshift64
            let mut x = self.rng;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.rng = x;
            let j = x % self.n;
            if (j as usize) < Samples::CAP {
                self.buf[j as usize] = v;
            }
        }
    }

    fn merge(&mut self, other: &Inner) {
        for &v in &other.buf {
            self.add(v);
        }
        // Keep exact count, sum, min and max when `other` held more than its reservoir.
        let extra = other.n - other.buf.len() as u64;
        if extra > 0 {
            self.n += extra;
            self.sum += other.sum - other.buf.iter().map(|&v| u128::from(v)).sum::<u128>();
            self.min = self.min.min(other.min);
            self.max = self.max.max(other.max);
        }
    }

    fn stat(&self) -> Option<Stat> {
        if self.n == 0 {
            return None;
        }
        let mut v = self.buf.clone();
        v.sort_unstable();
        let rank = |q: f64| -> u64 {
            let k = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
            v[k - 1]
        };
        Some(Stat {
            count: self.n,
            min: self.min,
            median: rank(0.5),
            p99: rank(0.99),
            max: self.max,
            mean: self.sum as f64 / self.n as f64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_small() {
        let mut s = Samples::default();
        assert!(s.stat().is_none());
        for v in [5, 1, 9, 3, 7] {
            s.add(v);
        }
        let st = s.stat().unwrap();
        assert_eq!(
            (st.count, st.min, st.median, st.p99, st.max),
            (5, 1, 5, 9, 9)
        );
        assert!((st.mean - 5.0).abs() < 1e-9);
    }

    #[test]
    fn bounded_large() {
        let mut s = Samples::default();
        for v in 0..100_000u64 {
            s.add(v);
        }
        let st = s.stat().unwrap();
        assert_eq!((st.count, st.min, st.max), (100_000, 0, 99_999));
        assert!(s.inner.as_ref().unwrap().buf.len() <= Samples::CAP);
        assert!((40_000..60_000).contains(&st.median), "{}", st.median);
    }

    /// A negative interval is left out (and said so), not added as 0.
    #[test]
    fn negative_intervals_are_left_out() {
        let mut s = Samples::new();
        assert!(!s.add_interval(10, 5));
        assert_eq!(s.count(), 0);
        assert!(s.stat().is_none());
        assert!(s.add_interval(5, 12));
        assert_eq!(s.count(), 1);
        assert_eq!(s.stat().map(|t| (t.min, t.max)), Some((7, 7)));
    }
}
