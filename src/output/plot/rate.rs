//! `plot --kind rate`: throughput per flow in time bins (payload and transport bytes, Gb/s),
//! and below it on the same time axis the CE-marked fraction of each flow's packets and the
//! CNPs its sender received — DCQCN's cut and recovery made visible (Zhu et al., SIGCOMM'15).

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::marks::{Mark, SERIES, marker};
use super::select::{Selection, Window, label};
use super::trace::FlowTrace;
use super::{Trace, axes, err, font::FAMILY};
use crate::analyze::Report;

/// Default number of bins across the span (coarse enough that a flow sending every few bins
/// does not draw a comb).
const DEFAULT_BINS: u64 = 60;

/// The largest 1-2-5 step not above `v` (at least 1).
fn nice(v: u64) -> u64 {
    let mut p = 1u64;
    while p.saturating_mul(10) <= v {
        p *= 10;
    }
    [5 * p, 2 * p, p].into_iter().find(|&c| c <= v).unwrap_or(1)
}

/// The bin width actually used: `want` (or span / 200 on a 1-2-5 step), rounded to a multiple
/// of the recorder's bin width, ns.
pub fn bin_width(trace: &Trace, win: &Window, want: Option<u64>) -> u64 {
    let base = trace.bin_ns.max(1);
    let want = want.unwrap_or_else(|| nice(((win.hi_ns - win.lo_ns) / DEFAULT_BINS).max(1)));
    let min = (win.hi_ns - win.lo_ns).div_ceil(MAX_DRAWN_BINS);
    want.max(min).div_ceil(base).max(1) * base
}

/// Most bins drawn across the span; a narrower `--bin` is widened to fit.
const MAX_DRAWN_BINS: u64 = 20_000;

/// One re-binned interval: (bin start ns, payload bytes, transport bytes, packets, CE packets).
pub type RateBin = (u64, u64, u64, u32, u32);

/// One flow's bins re-binned to `width` over the window, empty bins included (zero).
pub fn rebin(trace: &Trace, t: &FlowTrace, win: &Window, width: u64) -> Vec<RateBin> {
    let t0 = trace.t0.unwrap_or(win.lo_ns);
    // A last bin cut by the window's end would show a false drop: it is kept only when it
    // covers at least half a bin, and its packets are then counted over a whole bin.
    let n = ((win.hi_ns - win.lo_ns + width / 2) / width).max(1) as usize;
    let mut out: Vec<RateBin> = (0..n)
        .map(|k| (win.lo_ns + k as u64 * width, 0, 0, 0, 0))
        .collect();
    for b in &t.bins {
        let ts = t0 + b.idx * trace.bin_ns;
        if !win.contains(ts) {
            continue;
        }
        let Some(o) = out.get_mut(((ts - win.lo_ns) / width) as usize) else {
            continue;
        };
        o.1 += b.payload;
        o.2 += b.transport;
        o.3 += b.packets;
        o.4 += b.ce;
    }
    out
}

/// Draw the rate and congestion panels.
///
/// # Errors
/// Drawing errors.
pub fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    report: &Report,
    trace: &Trace,
    sel: &Selection,
    bin: Option<u64>,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let win = sel.window;
    let width = bin_width(trace, &win, bin);
    let (unit, uname) = win.unit();
    let xr = win.range(unit);
    let body = super::titled(
        root,
        &format!("Throughput and congestion ({} bins)", fmt_ns(width)),
        sel,
        22,
    )?;
    let series: Vec<(usize, Vec<RateBin>)> = sel
        .flows
        .iter()
        .map(|&i| (i, rebin(trace, &trace.flows[i], &win, width)))
        .collect();
    // The congestion panel only when there is congestion to show (CE marks or CNPs).
    let ce = series.iter().any(|(_, v)| v.iter().any(|b| b.4 > 0));
    let cnps = series
        .iter()
        .any(|(i, _)| trace.flows[*i].cnps.v.iter().any(|ts| win.contains(*ts)));
    let h = body.dim_in_pixel().1;
    let (upper, lower) = if ce || cnps {
        let (u, l) = body.split_vertically(h * 62 / 100);
        (u, Some(l))
    } else {
        (body, None)
    };
    let gbps = |bytes: u64| bytes as f64 * 8.0 / width as f64;
    let x = |ts: u64| win.x(ts, unit);
    let ymax = series
        .iter()
        .flat_map(|(_, v)| v.iter().map(|b| gbps(b.2)))
        .fold(0.0f64, f64::max)
        .max(1e-3)
        * 1.15;
    let mut chart = ChartBuilder::on(&upper)
        .margin(8)
        .x_label_area_size(36)
        .y_label_area_size(70)
        .build_cartesian_2d(xr.clone(), 0.0..ymax)
        .map_err(err)?;
    axes::mesh(
        chart
            .configure_mesh()
            .x_desc(axes::time_desc(uname))
            .x_label_formatter(&axes::time_label)
            .y_desc("Gb/s (solid: payload, dashed: BTH..ICRC)"),
    )
    .draw()
    .map_err(err)?;
    for (k, (i, v)) in series.iter().enumerate() {
        let c = SERIES[k % SERIES.len()];
        // A step line: each bin's rate held across the bin.
        let step = |f: &dyn Fn(&RateBin) -> u64| -> Vec<(f64, f64)> {
            v.iter()
                .flat_map(|b| [(x(b.0), gbps(f(b))), (x(b.0 + width), gbps(f(b)))])
                .collect()
        };
        chart
            .draw_series(LineSeries::new(step(&|b| b.1), c.stroke_width(2)))
            .map_err(err)?
            .label(label(report, *i))
            .legend(move |(a, b)| {
                PathElement::new(vec![(a - 8, b), (a + 8, b)], c.stroke_width(2))
            });
        chart
            .draw_series(DashedLineSeries::new(
                step(&|b| b.2),
                6,
                4,
                c.stroke_width(1),
            ))
            .map_err(err)?;
    }
    if !series.is_empty() {
        axes::legend(&mut chart, SeriesLabelPosition::UpperRight)?;
    }
    match lower {
        Some(lower) => congestion(&lower, report, trace, sel, &series, (unit, uname)),
        None => Ok(()),
    }
}

/// The first CNP row's height on the CE-fraction axis, and the rows' spacing.
const CNP_ROW0: f64 = 1.1;
/// See [`CNP_ROW0`].
const CNP_ROW: f64 = 0.1;

/// The lower panel: CE fraction per bin and CNP arrivals.
fn congestion<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    report: &Report,
    trace: &Trace,
    sel: &Selection,
    series: &[(usize, Vec<RateBin>)],
    (unit, uname): (f64, &str),
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let win = sel.window;
    let x = |ts: u64| win.x(ts, unit);
    // One row of CNP markers per flow above the fraction scale.
    let top = CNP_ROW0 + CNP_ROW * series.len() as f64;
    let mut chart = ChartBuilder::on(area)
        .margin(8)
        .x_label_area_size(36)
        .y_label_area_size(70)
        .build_cartesian_2d(win.range(unit), 0.0..top)
        .map_err(err)?;
    axes::mesh(
        chart
            .configure_mesh()
            .x_desc(axes::time_desc(uname))
            .x_label_formatter(&axes::time_label)
            .y_desc("CE-marked fraction")
            .y_labels(6)
            // No fraction above 1: the rows above it are CNPs.
            .y_label_formatter(&|v| {
                if *v <= 1.0 + 1e-9 {
                    format!("{v:.1}")
                } else {
                    String::new()
                }
            }),
    )
    .draw()
    .map_err(err)?;
    let row_label = (FAMILY, axes::LABEL_PX).into_font();
    let mut cnps = 0usize;
    for (k, (i, v)) in series.iter().enumerate() {
        let c = SERIES[k % SERIES.len()];
        let pts: Vec<(f64, f64)> = v
            .iter()
            .filter(|b| b.3 > 0)
            .map(|b| (x(b.0), f64::from(b.4) / f64::from(b.3)))
            .collect();
        if pts.iter().any(|p| p.1 > 0.0) {
            chart
                .draw_series(LineSeries::new(pts, c.stroke_width(2)))
                .map_err(err)?;
        }
        let arrivals: Vec<f64> = trace.flows[*i]
            .cnps
            .v
            .iter()
            .filter(|ts| win.contains(**ts))
            .map(|&ts| x(ts))
            .collect();
        cnps += arrivals.len();
        if arrivals.is_empty() {
            continue;
        }
        // CNPs ride above the fraction scale, one row per flow in legend order, each row
        // named by its flow's number left of the axis, in the flow's colour.
        let y = CNP_ROW0 + CNP_ROW * k as f64;
        let drawn = super::psn::thin_x(&arrivals, &win.range(unit));
        chart
            .draw_series(
                drawn
                    .iter()
                    .map(|&cx| marker(Mark::Cnp, (cx, y), Mark::Cnp.color())),
            )
            .map_err(err)?;
        let (px, py) = chart.backend_coord(&(win.range(unit).start, y));
        let (ax, ay) = area.get_base_pixel();
        area.draw_text(
            &format!("#{} CNPs", report.flows[*i].id),
            &row_label
                .clone()
                .color(&c)
                .pos(Pos::new(HPos::Right, VPos::Center)),
            (px - ax - 6, py - ay),
        )
        .map_err(err)?;
    }
    if cnps > 0 {
        chart
            .draw_series(std::iter::empty::<Circle<(f64, f64), u32>>())
            .map_err(err)?
            .label(format!(
                "CNP received by the flow's sender ({cnps}), one row per flow (#N left of the axis)"
            ))
            .legend(|c| marker(Mark::Cnp, c, Mark::Cnp.legend_color()));
        axes::legend(&mut chart, SeriesLabelPosition::LowerRight)?;
    }
    Ok(())
}

/// A duration in ns as `1.5 µs`, `20 ms`, `2 s`.
pub fn fmt_ns(ns: u64) -> String {
    let v = ns as f64;
    if v < 1e3 {
        format!("{ns} ns")
    } else if v < 1e6 {
        format!("{} µs", v / 1e3)
    } else if v < 1e9 {
        format!("{} ms", v / 1e6)
    } else {
        format!("{} s", v / 1e9)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_steps() {
        assert_eq!(nice(1), 1);
        assert_eq!(nice(7), 5);
        assert_eq!(nice(19_999), 10_000);
        assert_eq!(nice(20_000), 20_000);
        assert_eq!(nice(0), 1);
    }
}
