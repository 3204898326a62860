//! `plot --kind nccl`: the timeline of `nccl --html` as a plot (issue 37): one row per NCCL
//! connection, each step a bar — grey from its clear-to-send to its first data packet (the
//! wait), blue while its data flows, vermillion when it was its round's straggler.
//!
//! The time axis is in the unit of the other plot kinds, seconds (or ms, µs) since the first
//! frame of the earliest capture. Idle stretches longer than a twentieth of the whole and than
//! 100 median steps (between iterations of a job) are cut out as in the HTML timeline
//! ([`crate::nccl::timeline::busy`]), each cut a dashed line, and every busy stretch gets its
//! own round tick labels. Bars carry the classes `m-nccl-wait`, `m-nccl-data` and
//! `m-nccl-straggler` ([`super::marks`]).

use anyhow::{Result, bail};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::marks::{Mark, marker};
use super::{Options, axes, err, font::FAMILY};
use crate::nccl::timeline::{busy, step_span};
use crate::nccl::{Connection, Report};

/// Most connections drawn (one row each); the others are counted in the title.
pub const MAX_ROWS: usize = 128;
/// Height of a row, px.
const ROW_PX: u32 = 34;
/// Above this many bars in a row, bars of one kind less than a pixel apart are drawn as one
/// (the picture of a long job stays small; the legend's counts are the steps').
pub const MERGE_ABOVE: usize = 2000;
/// Rows' worth of empty band above the rows, for the legend.
const LEGEND_ROWS: u32 = 3;
/// Pixels between two tick labels, about.
const TICK_PX: f64 = 110.0;

/// The picture's height for `rows` connections, px.
pub fn height(rows: usize) -> u32 {
    let rows = rows.clamp(1, MAX_ROWS) as u32;
    (100 + ROW_PX * (rows + LEGEND_ROWS)).max(320)
}

/// One step to draw, ns since the Unix epoch, cut to the window.
#[derive(Clone, Copy, Debug)]
struct Bar {
    /// The CTS, when it came before the first data packet.
    cts: Option<u64>,
    first: u64,
    last: u64,
    straggler: bool,
}

/// The connections and steps drawn: `--qp`, `--from` / `--to`.
struct Picked<'a> {
    rows: Vec<(&'a Connection, Vec<Bar>)>,
    left_out: usize,
    /// Time 0 of the axis: the earliest capture's first frame, ns.
    base_ns: u64,
}

/// Whether `c` uses QP `q` (a data QP or its CTS QP).
fn has_qp(c: &Connection, q: u32) -> bool {
    c.qps.contains(&q) || c.data_qp == Some(q) || c.cts_qp == Some(q)
}

fn pick<'a>(r: &'a Report, opts: &Options) -> Result<Picked<'a>> {
    let first_step = r
        .connections
        .iter()
        .flat_map(|c| c.step_list.iter().map(|s| step_span(s).0))
        .min();
    let Some(first_step) = first_step else {
        bail!("no completed NCCL step to draw");
    };
    let base_ns = r
        .captures
        .iter()
        .filter_map(|c| c.first_ns)
        .min()
        .unwrap_or(first_step)
        .min(first_step);
    let at = |s: f64| base_ns.saturating_add((s * 1e9) as u64);
    let (lo, hi) = (opts.from_s.map_or(0, at), opts.to_s.map_or(u64::MAX, at));
    let mut rows = Vec::new();
    for c in &r.connections {
        if opts.qp.is_some_and(|q| !has_qp(c, q)) {
            continue;
        }
        let bars: Vec<Bar> = c
            .step_list
            .iter()
            .enumerate()
            .filter(|(_, s)| {
                let (a, b) = step_span(s);
                b >= lo && a <= hi
            })
            .map(|(k, s)| Bar {
                cts: s.cts_ns.filter(|&t| t < s.first_ns).map(|t| t.max(lo)),
                first: s.first_ns.clamp(lo, hi),
                last: (s.first_ns + s.data_ns).clamp(lo, hi),
                straggler: r
                    .stragglers
                    .iter()
                    .any(|g| g.connection == c.id && g.round == k),
            })
            .collect();
        rows.push((c, bars));
    }
    if rows.is_empty() {
        bail!(
            "no NCCL connection with QP {:#08x}",
            opts.qp.unwrap_or_default()
        );
    }
    if rows.iter().all(|(_, b)| b.is_empty()) {
        bail!("no NCCL step between --from and --to");
    }
    let left_out = rows.len().saturating_sub(MAX_ROWS);
    rows.truncate(MAX_ROWS);
    Ok(Picked {
        rows,
        left_out,
        base_ns,
    })
}

/// The time axis: busy stretches (start, end ns) laid end to end, a gap between two.
struct Broken {
    busy: Vec<(u64, u64)>,
    /// Width of a cut, ns of the axis.
    gap: f64,
}

impl Broken {
    fn new(spans: Vec<(u64, u64)>) -> Broken {
        let busy = busy(spans);
        let total: u64 = busy.iter().map(|(a, b)| b - a).sum();
        Broken {
            busy,
            gap: (total as f64 / 60.0).max(1.0),
        }
    }

    /// Where stretch `i` starts on the axis.
    fn offset(&self, i: usize) -> f64 {
        self.busy[..i]
            .iter()
            .map(|(a, b)| (b - a) as f64 + self.gap)
            .sum()
    }

    /// Time `t` on the axis (clamped into its stretch).
    fn x(&self, t: u64) -> f64 {
        let i = self
            .busy
            .iter()
            .position(|&(_, b)| t <= b)
            .unwrap_or(self.busy.len() - 1);
        let (a, b) = self.busy[i];
        self.offset(i) + t.clamp(a, b).saturating_sub(a) as f64
    }

    /// The axis's length.
    fn len(&self) -> f64 {
        self.offset(self.busy.len()) - self.gap
    }
}

/// A round step of about `raw` ns: 1, 2 or 5 times a power of ten, at least 1 ns.
fn nice(raw: f64) -> u64 {
    let mut p = 1u64;
    loop {
        for m in [1, 2, 5] {
            if (p * m) as f64 >= raw {
                return p * m;
            }
        }
        p = p.saturating_mul(10);
    }
}

/// The round step below `step` (5 below 10, 2 below 5, 1 below 2).
fn smaller(step: u64) -> u64 {
    if step <= 1 {
        1
    } else if step.to_string().starts_with('5') {
        step / 5 * 2
    } else {
        step / 2
    }
}

/// Tick times (ns since the epoch) of the stretch `a..=b` drawn `px` pixels wide: round
/// multiples of a step since `base`, one per [`TICK_PX`] pixels about, the step made smaller
/// until one falls inside; the stretch's start when none does at 1 ns.
fn ticks(a: u64, b: u64, base: u64, px: f64) -> Vec<u64> {
    let n = (px / TICK_PX).floor().max(1.0);
    let mut step = nice((b - a) as f64 / n);
    loop {
        let first = (a - base).div_ceil(step) * step + base;
        if first <= b {
            return (0..)
                .map(|i| first + i * step)
                .take_while(|&t| t <= b)
                .collect();
        }
        if step == 1 {
            return vec![a];
        }
        step = smaller(step);
    }
}

/// The axis unit (seconds per unit, name) for a busy time of `ns`.
fn unit(ns: f64) -> (f64, &'static str) {
    if ns < 2e6 {
        (1e-6, "µs")
    } else if ns < 2e9 {
        (1e-3, "ms")
    } else {
        (1.0, "s")
    }
}

/// The plot as an SVG document, bars tagged with their classes.
///
/// # Errors
/// No completed step, a `--qp` no connection uses, a `--from`/`--to` span with no step, or a
/// drawing error.
pub fn svg(r: &Report, opts: &Options) -> Result<String> {
    super::font::register()?;
    let p = pick(r, opts)?;
    let size = (opts.size.0, height(p.rows.len()));
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        draw(&root, r, &p)?;
        root.present().map_err(err)?;
    }
    Ok(super::marks::tag_svg(&out))
}

fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, r: &Report, p: &Picked) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let spans: Vec<(u64, u64)> = p
        .rows
        .iter()
        .flat_map(|(_, b)| b)
        .map(|b| (b.cts.unwrap_or(b.first), b.last.max(b.first + 1)))
        .collect();
    let axis = Broken::new(spans);
    let mut title = format!("NCCL steps per connection (NCCL {})", r.nccl_version);
    if axis.busy.len() > 1 {
        title.push_str(" — idle time cut out (dashed)");
    }
    if p.left_out > 0 {
        title.push_str(&format!(" — {} more connections not drawn", p.left_out));
    }
    let (top, body) = root.split_vertically(36);
    top.titled(&title, (FAMILY, 20)).map_err(err)?;
    let rows = p.rows.len();
    let len = axis.len();
    let pad = len / 50.0;
    let y_top = rows as f64 - 0.5 + f64::from(LEGEND_ROWS);
    let mut chart = ChartBuilder::on(&body)
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(300)
        .build_cartesian_2d(-pad..len + pad, -0.5..y_top)
        .map_err(err)?;
    let (u, uname) = unit(axis.busy.iter().map(|(a, b)| (b - a) as f64).sum());
    // Tick labels are drawn per busy stretch below; the mesh gives the frame and description.
    axes::mesh(
        chart
            .configure_mesh()
            .x_desc(axes::time_desc(uname))
            .x_labels(0)
            .y_labels(0)
            .disable_mesh(),
    )
    .draw()
    .map_err(err)?;
    let px_per_x = f64::from(chart.plotting_area().dim_in_pixel().0) / (len + 2.0 * pad);
    time_ticks(&body, &chart, &axis, p.base_ns, u, px_per_x)?;
    row_labels(&body, &chart, p)?;
    let y = |row: usize| (rows - 1 - row) as f64;
    let min_w = 2.0 / px_per_x.max(1e-12);
    let mut counts = [0usize; 3];
    let mut merged = false;
    for (row, (_, bars)) in p.rows.iter().enumerate() {
        let mut shapes: Vec<(Mark, f64, f64)> = Vec::with_capacity(2 * bars.len());
        for b in bars {
            let (x1, x2) = (axis.x(b.first), axis.x(b.last).max(axis.x(b.first) + min_w));
            if let Some(c) = b.cts {
                counts[0] += 1;
                shapes.push((Mark::NcclWait, axis.x(c).min(x1 - min_w), x1));
            }
            let m = if b.straggler {
                counts[2] += 1;
                Mark::NcclStraggler
            } else {
                counts[1] += 1;
                Mark::NcclData
            };
            shapes.push((m, x1, x2));
        }
        if shapes.len() > MERGE_ABOVE {
            merged = true;
            shapes = merge(shapes, 1.0 / px_per_x.max(1e-12));
        }
        for (m, x0, x1) in shapes {
            let half = if m == Mark::NcclWait { 0.12 } else { 0.3 };
            bar(&mut chart, m, x0, x1, y(row), half)?;
        }
    }
    breaks(&mut chart, &axis, rows)?;
    let extra = if merged {
        "; bars under a pixel apart merged"
    } else {
        ""
    };
    for (m, n, what) in [
        (Mark::NcclWait, counts[0], "CTS → first data packet"),
        (Mark::NcclData, counts[1], "data: first → last packet"),
        (
            Mark::NcclStraggler,
            counts[2],
            "data of the round's straggler",
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

/// Bars (kind, start, end on the axis) of one kind whose gap is under `gap` merged into one.
fn merge(mut bars: Vec<(Mark, f64, f64)>, gap: f64) -> Vec<(Mark, f64, f64)> {
    bars.sort_by(|a, b| (a.0 as u8).cmp(&(b.0 as u8)).then(a.1.total_cmp(&b.1)));
    let mut out: Vec<(Mark, f64, f64)> = Vec::new();
    for b in bars {
        match out.last_mut() {
            Some(r) if r.0 == b.0 && b.1 <= r.2 + gap => r.2 = r.2.max(b.2),
            _ => out.push(b),
        }
    }
    out
}

type Chart<'a, DB> = ChartContext<
    'a,
    DB,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// One bar of mark `m` from `x0` to `x1` on row `y`, `half` rows high each side.
fn bar<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    m: Mark,
    x0: f64,
    x1: f64,
    y: f64,
    half: f64,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    chart
        .draw_series(std::iter::once(Rectangle::new(
            [(x0, y - half), (x1, y + half)],
            m.color().filled(),
        )))
        .map_err(err)?;
    Ok(())
}

/// The tick marks and labels of every busy stretch, in `u` seconds since `base`.
fn time_ticks<DB: DrawingBackend>(
    body: &DrawingArea<DB, Shift>,
    chart: &Chart<'_, DB>,
    axis: &Broken,
    base: u64,
    u: f64,
    px_per_x: f64,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let font = (FAMILY, axes::LABEL_PX).into_font();
    let style = font.color(&BLACK).pos(Pos::new(HPos::Center, VPos::Top));
    let (ax, ay) = body.get_base_pixel();
    // Labels closer than this to the one before (across a cut) are left out.
    let mut next_px = i32::MIN;
    for (i, &(a, b)) in axis.busy.iter().enumerate() {
        let px = (b - a) as f64 * px_per_x;
        for t in ticks(a, b, base, px) {
            let (x, y) = chart.backend_coord(&(axis.offset(i) + (t - a) as f64, -0.5));
            if x < next_px {
                continue;
            }
            next_px = x + (TICK_PX * 0.6) as i32;
            body.draw(&PathElement::new(
                [(x - ax, y - ay), (x - ax, y - ay + 5)],
                BLACK,
            ))
            .map_err(err)?;
            let v = (t - base) as f64 / 1e9 / u;
            body.draw_text(&axes::time_label(&v), &style, (x - ax, y - ay + 7))
                .map_err(err)?;
        }
    }
    Ok(())
}

/// Each row's name left of the axis: `#id sender → receiver ch N`.
fn row_labels<DB: DrawingBackend>(
    body: &DrawingArea<DB, Shift>,
    chart: &Chart<'_, DB>,
    p: &Picked,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let font = (FAMILY, 12).into_font();
    let style = font.color(&BLACK).pos(Pos::new(HPos::Right, VPos::Center));
    let (ax, ay) = body.get_base_pixel();
    let x0 = chart.x_range().start;
    for (row, (c, _)) in p.rows.iter().enumerate() {
        let y = (p.rows.len() - 1 - row) as f64;
        let (px, py) = chart.backend_coord(&(x0, y));
        let name = format!("#{} {} → {} ch {}", c.id, c.sender, c.receiver, c.channel);
        body.draw_text(&name, &style, (px - ax - 8, py - ay))
            .map_err(err)?;
    }
    Ok(())
}

/// A dashed line in the middle of every cut.
fn breaks<DB: DrawingBackend>(chart: &mut Chart<'_, DB>, axis: &Broken, rows: usize) -> Result<()>
where
    DB::ErrorType: 'static,
{
    for i in 1..axis.busy.len() {
        let x = axis.offset(i) - axis.gap / 2.0;
        chart
            .draw_series(DashedLineSeries::new(
                [(x, -0.5), (x, rows as f64 - 0.5)],
                4,
                4,
                RGBColor(120, 120, 120).stroke_width(1),
            ))
            .map_err(err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_ticks_inside_each_stretch() {
        assert_eq!(nice(0.3), 1);
        assert_eq!(nice(1.5), 2);
        assert_eq!(nice(3_000.0), 5_000);
        assert_eq!(nice(7_000.0), 10_000);
        // 1000 px over 1 ms starting 12,345 ns after the base: 9 labels want 111 µs apart,
        // rounded up to 200 µs, at multiples of it since the base.
        let t = ticks(12_345, 1_012_345, 0, 1000.0);
        assert_eq!(t, vec![200_000, 400_000, 600_000, 800_000, 1_000_000]);
        // Too narrow for a round tick: its start.
        // Too narrow for a tick at the step its width asks for: a smaller round step.
        assert_eq!(ticks(1_001, 1_900, 0, 30.0), vec![1_500]);
        assert_eq!(ticks(1_001, 1_100, 0, 30.0), vec![1_100]);
        assert_eq!(ticks(1_001, 1_001, 0, 30.0), vec![1_001]);
        assert_eq!(
            (smaller(1_000), smaller(500), smaller(200)),
            (500, 200, 100)
        );
        assert_eq!(ticks(1_001, 1_001, 0, 30.0), vec![1_001]);
    }

    #[test]
    fn merges_close_bars_of_one_kind() {
        let bars = vec![
            (Mark::NcclData, 0.0, 1.0),
            (Mark::NcclWait, 1.2, 1.5),
            (Mark::NcclData, 1.4, 2.0),
            (Mark::NcclData, 5.0, 6.0),
        ];
        assert_eq!(
            merge(bars, 0.5),
            vec![
                (Mark::NcclWait, 1.2, 1.5),
                (Mark::NcclData, 0.0, 2.0),
                (Mark::NcclData, 5.0, 6.0),
            ]
        );
    }

    #[test]
    fn broken_axis_lays_stretches_end_to_end() {
        // Two busy stretches 10 s apart: the gap is cut to 1/60 of the busy time.
        let a = Broken::new(vec![
            (0, 1_000),
            (500, 2_000),
            (10_000_000_000, 10_000_003_000),
        ]);
        assert_eq!(a.busy, vec![(0, 2_000), (10_000_000_000, 10_000_003_000)]);
        let gap = 5_000.0 / 60.0;
        assert_eq!(a.x(1_000), 1_000.0);
        assert!((a.x(10_000_000_000) - (2_000.0 + gap)).abs() < 1e-6);
        assert!((a.len() - (5_000.0 + gap)).abs() < 1e-6);
        // A pause of 60 steps (a slow receiver's late CTS) stays on the axis.
        let steps: Vec<(u64, u64)> = (0..10).map(|i| (i * 1_000, i * 1_000 + 1_000)).collect();
        let late = [steps.clone(), vec![(70_000, 71_000)]].concat();
        assert_eq!(busy(late), vec![(0, 71_000)]);
        // One of 200 steps: cut.
        let later = [steps, vec![(210_000, 211_000)]].concat();
        assert_eq!(busy(later), vec![(0, 10_000), (210_000, 211_000)]);
    }
}
