//! `plot --kind messages`: one bar per reassembled message, from its first packet (a READ: its
//! request) to its last, on one lane per flow; incomplete messages and DMA length mismatches
//! are marked as failed.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::marks::{Mark, marker};
use super::select::{Selection, label};
use super::{Trace, axes, err, font::FAMILY};
use crate::analyze::Report;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Above this many messages in a lane, bars of the same status less than a pixel apart are
/// drawn as one.
pub const MERGE_ABOVE: usize = 2000;

/// Merge time-ordered bars (start ns, end ns, failed) of one status whose gap is under `gap_ns`.
pub fn merge(mut bars: Vec<(u64, u64, bool)>, gap_ns: u64) -> Vec<(u64, u64, bool)> {
    bars.sort_by_key(|b| (b.2, b.0));
    let mut out: Vec<(u64, u64, bool)> = Vec::new();
    for b in bars {
        match out.last_mut() {
            Some(r) if r.2 == b.2 && b.0 <= r.1.saturating_add(gap_ns) => r.1 = r.1.max(b.1),
            _ => out.push(b),
        }
    }
    out
}

/// Draw the message lanes of the selected flows.
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
    let win = sel.window;
    let (unit, uname) = win.unit();
    let body = super::titled(
        root,
        "Messages (first packet → last packet; READ from its request)",
        sel,
        20,
    )?;
    let lanes = sel.flows.len().max(1);
    let labels: Vec<String> = sel.flows.iter().map(|&i| label(report, i)).collect();
    let mut chart = ChartBuilder::on(&body)
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(300)
        // An empty band above the lanes holds the legend.
        .build_cartesian_2d(win.range(unit), -0.5..(lanes as f64 + 0.4))
        .map_err(err)?;
    // No y ticks: each lane is named left of the axis, and the band above the lanes (the
    // legend's) has neither tick nor name, so it does not read as an empty lane.
    axes::mesh(
        chart
            .configure_mesh()
            .x_desc(axes::time_desc(uname))
            .x_label_formatter(&axes::time_label)
            .y_labels(0)
            .disable_y_mesh(),
    )
    .draw()
    .map_err(err)?;
    let lane_font = (FAMILY, 12).into_font();
    let (ax, ay) = body.get_base_pixel();
    for (lane, name) in labels.iter().enumerate() {
        let (px, py) = chart.backend_coord(&(win.range(unit).start, lane as f64));
        body.draw_text(
            name,
            &lane_font
                .clone()
                .color(&BLACK)
                .pos(Pos::new(HPos::Right, VPos::Center)),
            (px - ax - 8, py - ay),
        )
        .map_err(err)?;
    }
    // Below one pixel a bar would vanish: draw a square marker instead.
    let px_ns = (win.hi_ns - win.lo_ns) / u64::from(body.dim_in_pixel().0.max(1));
    let mut counts = [0usize; 2];
    let mut merged = false;
    let mut dropped = 0u64;
    for (lane, &i) in sel.flows.iter().enumerate() {
        let y = lane as f64;
        let msgs = &trace.flows[i].msgs;
        dropped += msgs.dropped;
        let bars: Vec<(u64, u64, bool)> = msgs
            .v
            .iter()
            .filter(|m| m.end >= win.lo_ns && m.start <= win.hi_ns)
            .map(|m| (m.start.max(win.lo_ns), m.end.min(win.hi_ns), m.failed))
            .collect();
        for b in &bars {
            counts[usize::from(b.2)] += 1;
        }
        let runs = if bars.len() > MERGE_ABOVE {
            merged = true;
            merge(bars, px_ns)
        } else {
            bars
        };
        for (start, end, failed) in runs {
            let mark = if failed { Mark::MsgFailed } else { Mark::MsgOk };
            let (a, b) = (win.x(start, unit), win.x(end, unit));
            if end - start < px_ns.max(1) {
                chart
                    .draw_series(std::iter::once(marker(mark, (a, y), mark.color())))
                    .map_err(err)?;
            } else {
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(a, y - 0.3), (b, y + 0.3)],
                        mark.color().filled(),
                    )))
                    .map_err(err)?;
            }
        }
    }
    let extra = match (merged, dropped) {
        (false, 0) => String::new(),
        (true, 0) => "; bars under a pixel apart merged".to_string(),
        (_, d) => format!("; {d} past the recorder's cap not drawn"),
    };
    for (m, n, what) in [
        (Mark::MsgOk, counts[0], "complete"),
        (
            Mark::MsgFailed,
            counts[1],
            "incomplete or DMA length mismatch",
        ),
    ] {
        chart
            .draw_series(std::iter::empty::<Circle<(f64, f64), u32>>())
            .map_err(err)?
            .label(format!("{what} ({n}{extra})"))
            .legend(move |c| marker(m, c, m.legend_color()));
    }
    axes::legend(&mut chart, SeriesLabelPosition::UpperRight)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_close_bars_of_one_status() {
        let bars = vec![
            (0, 10, false),
            (12, 20, false),
            (50, 60, false),
            (15, 16, true),
        ];
        assert_eq!(
            merge(bars, 5),
            vec![(0, 20, false), (50, 60, false), (15, 16, true)]
        );
    }
}
