//! One-way delay statistics in bounded memory: exact minimum and maximum, quantiles from a
//! sparse log-linear histogram (HdrHistogram's layout: values below 2¹⁶ ns = 65.5 µs exact,
//! larger ones in buckets 1/65536 of their power of two wide, so within 0.002 %; a quantile is reported as the
//! smallest delay recorded in its bucket, a value that occurred), and the delay's course over
//! time in a fixed number of intervals.

use rustc_hash::FxHashMap;
use serde::Serialize;

/// Sub-bucket bits: 2^16 sub-buckets per power of two.
const SUB_BITS: u32 = 16;
const SUB: i64 = 1 << SUB_BITS;

/// Intervals of the delay-over-time series.
pub const OVER_TIME_INTERVALS: usize = 10;

/// Bucket of a non-negative value.
fn bucket_of(u: u64) -> i32 {
    if u < SUB as u64 {
        return u as i32;
    }
    let e = 63 - u.leading_zeros();
    let sub = (u >> (e - SUB_BITS)) as i64 - SUB;
    (SUB + i64::from(e - SUB_BITS) * SUB + sub) as i32
}

/// Lowest value and width of a non-negative bucket.
#[cfg(test)]
fn bucket_range(b: i32) -> (i64, i64) {
    let b = i64::from(b);
    if b < SUB {
        return (b, 1);
    }
    let k = b - SUB;
    let shift = k / SUB;
    ((SUB + k % SUB) << shift, 1 << shift)
}

/// Signed bucket index, monotonic in `v`.
fn index(v: i64) -> i32 {
    if v >= 0 {
        bucket_of(v as u64)
    } else {
        -1 - bucket_of(v.unsigned_abs())
    }
}

/// Middle of a signed bucket.
#[cfg(test)]
fn middle(i: i32) -> i64 {
    if i >= 0 {
        let (lo, w) = bucket_range(i);
        lo + (w - 1) / 2
    } else {
        let (lo, w) = bucket_range(-1 - i);
        -(lo + (w - 1) / 2)
    }
}

/// One interval of the delay over time.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Interval {
    /// Start of the interval: ns since the epoch on the reference capture's clock.
    pub start_ns: i64,
    /// Packets matched in it.
    pub packets: u64,
    /// Smallest delay, ns (`null` when no packet).
    pub min: Option<i64>,
    /// Mean delay, ns.
    pub mean: Option<i64>,
    /// Largest delay, ns.
    pub max: Option<i64>,
}

/// Delay summary of one link direction, ns.
#[derive(Clone, Debug, Serialize)]
pub struct DelaySummary {
    /// Smallest, exact.
    pub min: i64,
    /// Median (nearest rank), exact below 65.5 µs, within 0.002 % above.
    pub median: i64,
    /// 99th percentile (nearest rank), as exact as the median.
    pub p99: i64,
    /// Largest, exact.
    pub max: i64,
    /// The delay in [`OVER_TIME_INTERVALS`] equal intervals of the link's time span.
    pub over_time: Vec<Interval>,
}

/// Running delay statistics.
pub struct DelayStats {
    /// Bucket → (count, smallest value in it).
    hist: FxHashMap<i32, (u64, i64)>,
    n: u64,
    min: i64,
    max: i64,
    start: i64,
    width: i64,
    sums: [(u64, i64, i64, i128); OVER_TIME_INTERVALS],
}

impl DelayStats {
    /// Statistics for delays of packets sent between `start` and `end` (ns, reference clock).
    pub fn new(start: i64, end: i64) -> DelayStats {
        let span = (end - start).max(0) + 1;
        DelayStats {
            hist: FxHashMap::default(),
            n: 0,
            min: i64::MAX,
            max: i64::MIN,
            start,
            width: (span + OVER_TIME_INTERVALS as i64 - 1) / OVER_TIME_INTERVALS as i64,
            sums: [(0, i64::MAX, i64::MIN, 0); OVER_TIME_INTERVALS],
        }
    }

    /// Add a delay `v` (ns) of a packet sent at `t` (ns, reference clock).
    pub fn record(&mut self, v: i64, t: i64) {
        self.n += 1;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        let b = self.hist.entry(index(v)).or_insert((0, v));
        b.0 += 1;
        b.1 = b.1.min(v);
        let k = ((t - self.start) / self.width).clamp(0, OVER_TIME_INTERVALS as i64 - 1);
        let s = &mut self.sums[k as usize];
        s.0 += 1;
        s.1 = s.1.min(v);
        s.2 = s.2.max(v);
        s.3 += i128::from(v);
    }

    /// Delays recorded.
    pub fn count(&self) -> u64 {
        self.n
    }

    /// The summary with every value moved by `-shift` ns (a later, better clock offset);
    /// `None` when nothing was recorded.
    pub fn summary(&self, shift: i64) -> Option<DelaySummary> {
        if self.n == 0 {
            return None;
        }
        let mut b: Vec<(i32, (u64, i64))> = self.hist.iter().map(|(k, v)| (*k, *v)).collect();
        b.sort_unstable();
        let q = |p: f64| {
            let rank = ((p * self.n as f64).ceil() as u64).max(1);
            let mut seen = 0;
            let i = b.iter().find(|(_, (c, _))| {
                seen += c;
                seen >= rank
            });
            i.map_or(self.max, |(_, (_, lo))| *lo) - shift
        };
        let over_time = self.sums.iter().enumerate().map(|(k, s)| Interval {
            start_ns: self.start + k as i64 * self.width,
            packets: s.0,
            min: (s.0 > 0).then(|| s.1 - shift),
            mean: (s.0 > 0).then(|| (s.3 / i128::from(s.0)) as i64 - shift),
            max: (s.0 > 0).then(|| s.2 - shift),
        });
        Some(DelaySummary {
            min: self.min - shift,
            median: q(0.5),
            p99: q(0.99),
            max: self.max - shift,
            over_time: over_time.collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_monotonic_and_tight() {
        let mut last = i32::MIN;
        for v in (-5000..5000).chain([1 << 20, (1 << 20) + 1023, 1 << 40]) {
            let i = index(v);
            assert!(i >= last, "{v}");
            last = i;
            let m = middle(i);
            assert!((m - v).abs() <= v.abs() / 65_000 + 1, "{v} -> {m}");
        }
    }

    #[test]
    fn quantiles_by_nearest_rank() {
        let mut s = DelayStats::new(0, 999);
        for v in 1..=100 {
            s.record(v * 10, v * 10);
        }
        let d = s.summary(5).unwrap();
        assert_eq!((d.min, d.median, d.p99, d.max), (5, 495, 985, 995));
        assert_eq!(d.over_time[0].packets, 9);
        assert_eq!(d.over_time[0].min, Some(5));
        assert_eq!(d.over_time[9].max, Some(995));
        assert!(DelayStats::new(0, 1).summary(0).is_none());
    }
}
