//! Which flows and which time span a plot shows: `--qp`, `--from`/`--to`, and the top N flows
//! by payload bytes among those with something to draw.

use anyhow::{Result, bail};

use super::trace::{FlowTrace, Trace};
use super::{Kind, Options};
use crate::analyze::Report;

/// The time span drawn, ns since the epoch, and the capture's first frame time.
#[derive(Clone, Copy, Debug)]
pub struct Window {
    /// First frame of the capture: time 0 of the axes.
    pub base_ns: u64,
    /// Start of the span.
    pub lo_ns: u64,
    /// End of the span (> `lo_ns`).
    pub hi_ns: u64,
}

impl Window {
    /// Whether `ts` is inside.
    pub fn contains(&self, ts: u64) -> bool {
        (self.lo_ns..=self.hi_ns).contains(&ts)
    }

    /// `ts` on the axis, in `unit` seconds since the first frame.
    pub fn x(&self, ts: u64, unit: f64) -> f64 {
        (ts as f64 - self.base_ns as f64) / 1e9 / unit
    }

    /// The axis unit: (seconds per unit, name) chosen from the span.
    pub fn unit(&self) -> (f64, &'static str) {
        let span = (self.hi_ns - self.lo_ns) as f64 / 1e9;
        if span < 2e-3 {
            (1e-6, "µs")
        } else if span < 2.0 {
            (1e-3, "ms")
        } else {
            (1.0, "s")
        }
    }

    /// The span on the axis, with a margin of 2 % of it on each side so that the first and
    /// last packets are not drawn on the axes (none before the first frame, time 0).
    pub fn range(&self, unit: f64) -> std::ops::Range<f64> {
        let pad = (self.hi_ns - self.lo_ns) / 50;
        let before = pad.min(self.lo_ns.saturating_sub(self.base_ns));
        self.x(self.lo_ns - before, unit)..self.x(self.hi_ns.saturating_add(pad), unit)
    }
}

/// The flows and span to draw.
#[derive(Clone, Debug)]
pub struct Selection {
    /// Flow indices, largest payload first.
    pub flows: Vec<usize>,
    /// Flows with something to draw that `--top` left out.
    pub left_out: usize,
    /// Time span.
    pub window: Window,
}

/// Whether flow trace `t` has something to draw for `kind`.
fn drawable(kind: Kind, t: &FlowTrace) -> bool {
    match kind {
        Kind::Psn => {
            !t.sent.pts.is_empty()
                || !t.retx.v.is_empty()
                || !t.naks.v.is_empty()
                || !t.cnps.v.is_empty()
        }
        // A flow of ACKs only (or CNPs only, sent) has no rate to draw: its CNPs are drawn
        // with the data flow whose sender received them.
        Kind::Rate => t.bins.iter().any(|b| b.payload > 0) || !t.cnps.v.is_empty(),
        Kind::Latency => !t.rtt.v.is_empty() || !t.read_latency.v.is_empty(),
        Kind::Messages => !t.msgs.v.is_empty(),
        // Drawn from the nccl report, not from flows.
        Kind::Nccl => false,
    }
}

impl Selection {
    /// Choose flows and span. Without `--from` / `--to`, the span is the RoCE activity of the
    /// flows drawn (first to last packet), not the whole capture: an NCCL capture spends its
    /// first seconds in TCP bootstrap, which would leave the pictures empty (issue 39). Time 0
    /// of the axes stays the capture's first frame, as `--from`/`--to` count it.
    ///
    /// # Errors
    /// A `--from`/`--to` span that is empty or outside the capture.
    pub fn new(report: &Report, trace: &Trace, opts: &Options) -> Result<Selection> {
        let first = report.frames.first_ts_ns.unwrap_or(0);
        let last = report.frames.last_ts_ns.unwrap_or(first);
        let at = |s: f64| first.saturating_add((s.max(0.0) * 1e9) as u64);
        let flows = Self::flows(report, trace, opts);
        let drawn = &flows[..flows.len().min(opts.top.max(1))];
        let active = |f: fn(&crate::analyze::report::FlowReport) -> u64| {
            drawn.iter().map(move |&i| f(&report.flows[i]))
        };
        let (roce_lo, roce_hi) = (
            active(|f| f.first_ts_ns).min().unwrap_or(first).max(first),
            active(|f| f.last_ts_ns).max().unwrap_or(last).min(last),
        );
        let lo = opts.from_s.map_or(roce_lo, at);
        let hi = opts.to_s.map_or(roce_hi.max(lo), at).min(last.max(lo));
        if opts.from_s.is_some() && lo > last {
            bail!(
                "--from {} s is after the capture's end ({:.6} s)",
                opts.from_s.unwrap_or(0.0),
                (last - first) as f64 / 1e9
            );
        }
        if opts.to_s.is_some() && hi <= lo {
            bail!("--to must be after --from and the capture's start");
        }
        // A single instant still gets a visible span.
        let hi = if hi > lo { hi } else { lo + 1000 };
        let left_out = flows.len().saturating_sub(opts.top.max(1));
        let mut flows = flows;
        flows.truncate(opts.top.max(1));
        Ok(Selection {
            flows,
            left_out,
            window: Window {
                base_ns: first,
                lo_ns: lo,
                hi_ns: hi,
            },
        })
    }

    /// The flows with something to draw for `opts`, largest payload first.
    fn flows(report: &Report, trace: &Trace, opts: &Options) -> Vec<usize> {
        let mut flows: Vec<usize> = report
            .flows
            .iter()
            .filter(|f| opts.qp.is_none_or(|q| q == f.dest_qp))
            .filter(|f| {
                trace
                    .flows
                    .get(f.id)
                    .is_some_and(|t| drawable(opts.kind, t))
            })
            .map(|f| f.id)
            .collect();
        flows.sort_by_key(|&i| (std::cmp::Reverse(report.flows[i].payload_bytes), i));
        flows
    }

    /// A note for the caption: how many flows `--top` left out, if any.
    pub fn note(&self) -> Option<String> {
        (self.left_out > 0).then(|| {
            format!(
                "{} more flow{} not drawn (--top)",
                self.left_out,
                if self.left_out == 1 { "" } else { "s" }
            )
        })
    }
}

/// A flow's label: `#id src → dst QP 0x… (RC)`.
pub fn label(report: &Report, i: usize) -> String {
    let f = &report.flows[i];
    format!(
        "#{} {} → {} QP {:#x} ({})",
        f.id, f.src, f.dst, f.dest_qp, f.transport
    )
}
