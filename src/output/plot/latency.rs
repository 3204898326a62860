//! `plot --kind latency`: distributions (CDF, log time axis) of each flow's ACK RTT (AckReq
//! request → the cumulative ACK covering it, Karn's rule applied by the analyzer) and READ
//! latency (READ request → last READ response).

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::marks::SERIES;
use super::select::{Selection, label};
use super::{Trace, axes, err, font::FAMILY};
use crate::analyze::Report;

/// CDF points: (µs, fraction ≤).
type Curve = Vec<(f64, f64)>;

/// Most points drawn per CDF.
const CDF_POINTS: usize = 600;

/// The empirical CDF of `v` (ns) as a staircase of (µs, fraction ≤) points from 0 at the
/// smallest sample, thinned to `CDF_POINTS` (600) samples.
pub fn cdf(v: &[u64]) -> Vec<(f64, f64)> {
    let mut s = v.to_vec();
    s.sort_unstable();
    let n = s.len();
    let step = n.div_ceil(CDF_POINTS).max(1);
    let mut out: Vec<(f64, f64)> = s
        .first()
        .map(|&v| ((v as f64 / 1e3).max(1e-3), 0.0))
        .into_iter()
        .collect();
    out.extend(
        (0..n)
            .step_by(step)
            .map(|k| ((s[k] as f64 / 1e3).max(1e-3), (k + 1) as f64 / n as f64)),
    );
    if let Some(&l) = s.last()
        && out.last().is_some_and(|p| p.1 < 1.0)
    {
        out.push(((l as f64 / 1e3).max(1e-3), 1.0));
    }
    steps(&out)
}

/// A staircase through `points`: the fraction holds until the next sample's time, then rises
/// (an empirical CDF is a step function; joining its points would invent samples in between).
fn steps(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(points.len() * 2);
    for (k, &p) in points.iter().enumerate() {
        if let Some(&prev) = k.checked_sub(1).map(|j| &points[j])
            && p.0 > prev.0
        {
            out.push((p.0, prev.1));
        }
        out.push(p);
    }
    out
}

/// Draw the CDFs of the selected flows.
///
/// # Errors
/// Drawing errors.
pub fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    report: &Report,
    trace: &Trace,
    sel: &Selection,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let body = super::titled(
        root,
        "Latency distributions (solid: ACK RTT, dashed: READ latency)",
        sel,
        20,
    )?;
    let curves: Vec<(usize, Curve, Curve)> = sel
        .flows
        .iter()
        .map(|&i| {
            let t = &trace.flows[i];
            (i, cdf(&t.rtt.v), cdf(&t.read_latency.v))
        })
        .collect();
    let xs = || {
        curves
            .iter()
            .flat_map(|(_, a, b)| a.iter().chain(b).map(|p| p.0))
    };
    let (lo, hi) = xs().fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
    if lo > hi {
        body.draw_text(
            "no ACK RTT or READ latency samples in this selection",
            &(FAMILY, 18).into_text_style(&body),
            (40, 40),
        )
        .map_err(err)?;
        return Ok(());
    }
    // Whole decades, at least one, so that the log axis has labelled ticks even when every
    // sample is the same.
    let lo_d = 10f64.powf((lo / 1.2).log10().floor());
    let hi_d = 10f64.powf((hi * 1.2).log10().ceil()).max(lo_d * 10.0);
    // The axis is log10(µs), labelled with the decades' values (plotters' own log axis leaves a
    // single decade unlabelled).
    let xr = lo_d.log10()..hi_d.log10();
    let decades = (xr.end - xr.start).round() as usize;
    let mut chart = ChartBuilder::on(&body)
        .margin(12)
        // Room for half the last decade's label ("100000", centred on the right edge).
        .margin_right(36)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(xr, 0.0..1.02)
        .map_err(err)?;
    axes::mesh(
        chart
            .configure_mesh()
            .x_desc("latency (µs, log scale)")
            .y_desc("fraction of samples ≤ x")
            .x_labels(decades + 1)
            .x_label_formatter(&|v| {
                if (v - v.round()).abs() < 1e-6 {
                    format!("{}", 10f64.powi(v.round() as i32))
                } else {
                    String::new()
                }
            }),
    )
    .draw()
    .map_err(err)?;
    for (k, (i, rtt, read)) in curves.iter().enumerate() {
        let c = SERIES[k % SERIES.len()];
        let t = &trace.flows[*i];
        if !rtt.is_empty() {
            chart
                .draw_series(LineSeries::new(
                    rtt.iter().map(|p| (p.0.log10(), p.1)),
                    c.stroke_width(2),
                ))
                .map_err(err)?
                .label(format!(
                    "{} ACK RTT (n={})",
                    label(report, *i),
                    t.rtt.v.len()
                ))
                .legend(move |(a, b)| {
                    PathElement::new(vec![(a - 8, b), (a + 8, b)], c.stroke_width(2))
                });
        }
        if !read.is_empty() {
            chart
                .draw_series(DashedLineSeries::new(
                    read.iter().map(|p| (p.0.log10(), p.1)),
                    6,
                    4,
                    c.stroke_width(2),
                ))
                .map_err(err)?
                .label(format!(
                    "{} READ latency (n={})",
                    label(report, *i),
                    t.read_latency.v.len()
                ))
                .legend(move |(a, b)| {
                    // Two dashes, as the curve is drawn.
                    EmptyElement::at((a, b))
                        + PathElement::new(vec![(-8, 0), (-2, 0)], c.stroke_width(2))
                        + PathElement::new(vec![(2, 0), (8, 0)], c.stroke_width(2))
                });
        }
    }
    axes::legend(&mut chart, SeriesLabelPosition::LowerRight)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cdf_ends_at_one_and_rises() {
        let c = cdf(&[3000, 1000, 2000, 4000]);
        assert_eq!(
            c,
            vec![
                (1.0, 0.0),
                (1.0, 0.25),
                (2.0, 0.25),
                (2.0, 0.5),
                (3.0, 0.5),
                (3.0, 0.75),
                (4.0, 0.75),
                (4.0, 1.0)
            ]
        );
        let big: Vec<u64> = (0..10_000).collect();
        let c = cdf(&big);
        assert!(c.len() <= 2 * (CDF_POINTS + 2));
        assert_eq!(c.last().map(|p| p.1), Some(1.0));
        // A staircase: each step is flat (time grows) or vertical (fraction grows), never both.
        assert!(
            c.windows(2)
                .all(|w| (w[0].0 == w[1].0) != (w[0].1 == w[1].1))
        );
    }
}
