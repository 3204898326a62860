//! `plot --kind psn`: PSN against time per flow, as tcptrace's time-sequence graph does for
//! TCP (Shepard, "TCP Packet Trace Analysis", MIT/LCS/TR-494, 1991): first transmissions,
//! retransmissions, gaps, NAKs by code, RNR NAKs, the ACK line from the reverse flow, CE-marked
//! packets and CNPs, one panel per flow.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::marks::{ACK, Mark, SENT, marker};
use super::select::{Selection, Window, label};
use super::trace::{FlowTrace, RNR, Thinned};
use super::{axes, err, font::FAMILY};
use crate::analyze::Report;
use crate::analyze::psn::psn_diff;

/// A point in data coordinates.
type Pt = (f64, f64);

/// Pixel columns used to thin dense series.
const COLUMNS: usize = 1200;
/// Most first-transmission dots drawn per panel; denser series are drawn as a line.
pub const MAX_DOTS: usize = 1500;
/// Most markers of one kind drawn per panel before they are thinned to pixel columns.
pub const MAX_DRAWN: usize = 5000;

/// Unwraps 24-bit PSNs against the flow's first transmissions.
pub struct Unwrap {
    /// (time, unwrapped PSN) of the kept first transmissions, with the raw PSN.
    pts: Vec<(u64, u32, i64)>,
}

impl Unwrap {
    /// Build from the flow's first transmissions (arrival order).
    pub fn new(sent: &Thinned) -> Unwrap {
        let mut pts = Vec::with_capacity(sent.pts.len());
        let mut prev: Option<(u32, i64)> = None;
        for &(ts, psn) in &sent.pts {
            let u = match prev {
                None => i64::from(psn),
                Some((p, u)) => u + i64::from(psn_diff(psn, p)),
            };
            pts.push((ts, psn, u));
            prev = Some((psn, u));
        }
        Unwrap { pts }
    }

    /// `psn` seen at `ts`, unwrapped against the nearest earlier first transmission.
    pub fn at(&self, ts: u64, psn: u32) -> f64 {
        if self.pts.is_empty() {
            return f64::from(psn);
        }
        let k = self.pts.partition_point(|p| p.0 <= ts).saturating_sub(1);
        let (_, p, u) = self.pts[k];
        (u + i64::from(psn_diff(psn, p))) as f64
    }
}

/// Keep the lowest and highest point of each pixel column, in time order.
pub fn thin(points: impl Iterator<Item = (f64, f64)>, x: &std::ops::Range<f64>) -> Vec<(f64, f64)> {
    let w = (x.end - x.start).max(f64::MIN_POSITIVE);
    let mut cols: Vec<Option<(Pt, Pt)>> = vec![None; COLUMNS + 1];
    let mut order = Vec::new();
    for (px, py) in points {
        let c = (((px - x.start) / w) * COLUMNS as f64).clamp(0.0, COLUMNS as f64) as usize;
        match &mut cols[c] {
            Some((lo, hi)) => {
                if py < lo.1 {
                    *lo = (px, py);
                }
                if py > hi.1 {
                    *hi = (px, py);
                }
            }
            slot => {
                *slot = Some(((px, py), (px, py)));
                order.push(c);
            }
        }
    }
    let mut out = Vec::with_capacity(order.len() * 2);
    for c in order {
        if let Some((lo, hi)) = cols[c] {
            let (a, b) = if lo.0 <= hi.0 { (lo, hi) } else { (hi, lo) };
            out.push(a);
            if b != a {
                out.push(b);
            }
        }
    }
    out
}

/// Runs of consecutive PSNs (each one above the last, or equal) that fall in one pixel
/// column, as (first point, last point), in time order: a burst is drawn as a segment from its
/// first to its last PSN, so thinning to pixels never shows PSNs that were sent as missing; a
/// real hole, even inside one column, starts a new run.
pub fn runs(points: impl Iterator<Item = Pt>, x: &std::ops::Range<f64>) -> Vec<(Pt, Pt)> {
    let w = (x.end - x.start).max(f64::MIN_POSITIVE);
    let col = |px: f64| (((px - x.start) / w) * COLUMNS as f64).clamp(0.0, COLUMNS as f64) as usize;
    let mut out: Vec<(Pt, Pt)> = Vec::new();
    let mut cur: Option<(usize, Pt, Pt)> = None;
    for p in points {
        let c = col(p.0);
        match &mut cur {
            Some((cc, _, last)) if *cc == c && (0.0..=1.0).contains(&(p.1 - last.1)) => *last = p,
            _ => {
                if let Some((_, a, b)) = cur.take() {
                    out.push((a, b));
                }
                cur = Some((c, p, p));
            }
        }
    }
    if let Some((_, a, b)) = cur {
        out.push((a, b));
    }
    out
}

/// A legend entry's count: the markers drawn, and those past the recorder's cap
/// ([`MAX_MARKS`](super::trace::MAX_MARKS)) that the report counts but the plot cannot draw.
fn counted(what: &str, drawn: usize, dropped: u64) -> String {
    match dropped {
        0 => format!("{what} ({drawn})"),
        d => format!(
            "{what} ({}; {d} past the recorder's cap not drawn)",
            drawn as u64 + d
        ),
    }
}

/// Times of markers drawn on one row: all of them up to [`MAX_DRAWN`], else one per pixel
/// column.
pub fn thin_x(xs: &[f64], xr: &std::ops::Range<f64>) -> Vec<f64> {
    if xs.len() <= MAX_DRAWN {
        return xs.to_vec();
    }
    let mut v: Vec<f64> = thin(xs.iter().map(|&x| (x, 0.0)), xr)
        .into_iter()
        .map(|p| p.0)
        .collect();
    v.dedup();
    v
}

/// Draw the PSN graph of every selected flow.
///
/// # Errors
/// Drawing errors.
pub fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    report: &Report,
    trace: &super::Trace,
    sel: &Selection,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let body = super::titled(root, "PSN against time", sel, 22)?;
    if sel.flows.is_empty() {
        body.draw_text(
            "no flow with PSNs in this selection",
            &(FAMILY, 18).into_text_style(&body),
            (40, 40),
        )
        .map_err(err)?;
        return Ok(());
    }
    let panels = body.split_evenly((sel.flows.len(), 1));
    for (&i, area) in sel.flows.iter().zip(panels.iter()) {
        panel(area, report, &trace.flows[i], i, sel.window)?;
    }
    Ok(())
}

/// One flow's panel.
fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    report: &Report,
    t: &FlowTrace,
    flow: usize,
    win: Window,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let (unit, uname) = win.unit();
    let xr = win.range(unit);
    let un = Unwrap::new(&t.sent);
    let x = |ts: u64| win.x(ts, unit);
    let inw = |ts: &u64| win.contains(*ts);
    let sent_pts = || {
        un.pts
            .iter()
            .filter(|p| inw(&p.0))
            .map(|p| (x(p.0), p.2 as f64))
    };
    let sent_runs = runs(sent_pts(), &xr);
    let sent = if sent_runs.len() <= MAX_DOTS {
        sent_runs.iter().flat_map(|&(a, b)| [a, b]).collect()
    } else {
        thin(sent_pts(), &xr)
    };
    let sent_n = sent_count(t, &un, win);
    let acks = thin(
        t.acks
            .pts
            .iter()
            .filter(|p| inw(&p.0))
            .map(|&(ts, psn)| (x(ts), un.at(ts, psn))),
        &xr,
    );
    let retx: Vec<(f64, f64)> = t
        .retx
        .v
        .iter()
        .filter(|p| inw(&p.0))
        .map(|&(ts, p)| (x(ts), un.at(ts, p)))
        .collect();
    let gaps: Vec<(f64, f64)> = t
        .gaps
        .v
        .iter()
        .filter(|p| inw(&p.0))
        .map(|&(ts, e, _)| (x(ts), un.at(ts, e)))
        .collect();
    let ce: Vec<(f64, f64)> =
        t.ce.v
            .iter()
            .filter(|p| inw(&p.0))
            .map(|&(ts, p)| (x(ts), un.at(ts, p)))
            .collect();
    let nak_pt = |rnr: bool| -> Vec<(f64, f64)> {
        t.naks
            .v
            .iter()
            .filter(|n| inw(&n.ts) && (n.code == RNR) == rnr)
            .map(|n| (x(n.ts), un.at(n.ts, n.psn)))
            .collect()
    };
    let (naks, rnrs) = (nak_pt(false), nak_pt(true));
    let cnps: Vec<f64> = t
        .cnps
        .v
        .iter()
        .filter(|ts| inw(ts))
        .map(|&ts| x(ts))
        .collect();
    let ys = || {
        sent.iter()
            .chain(&acks)
            .chain(&retx)
            .chain(&gaps)
            .chain(&ce)
            .chain(&naks)
            .chain(&rnrs)
            .map(|p| p.1)
    };
    let (mut lo, mut hi) = ys().fold((f64::MAX, f64::MIN), |(a, b), y| (a.min(y), b.max(y)));
    if lo > hi {
        (lo, hi) = (0.0, 1.0);
    }
    let pad = ((hi - lo) * 0.08).max(1.0);
    let yr = (lo - pad).floor()..(hi + pad * 2.0).ceil();
    let mut chart = ChartBuilder::on(area)
        .caption(label(report, flow), (FAMILY, 16))
        .margin(8)
        .x_label_area_size(40)
        .y_label_area_size(90)
        .build_cartesian_2d(xr.clone(), yr.clone())
        .map_err(err)?;
    axes::mesh(
        chart
            .configure_mesh()
            .x_desc(axes::time_desc(uname))
            .x_label_formatter(&axes::time_label)
            .y_desc("PSN (unwrapped)")
            .y_labels(axes::whole_labels(&yr, 10))
            .y_label_formatter(&|v| axes::whole(*v)),
    )
    .draw()
    .map_err(err)?;
    if sent_runs.len() <= MAX_DOTS {
        // A run of PSNs inside one pixel column: a segment between dots at its ends.
        chart
            .draw_series(
                sent_runs
                    .iter()
                    .filter(|(a, b)| a != b)
                    .map(|&(a, b)| PathElement::new(vec![a, b], SENT.stroke_width(2))),
            )
            .map_err(err)?;
        chart
            .draw_series(sent.iter().map(|&p| Circle::new(p, 2, SENT.filled())))
            .map_err(err)?
            .label(format!("sent in sequence ({sent_n})"))
            .legend(|c| Circle::new(c, 3, SENT.filled()));
    } else {
        // Too dense for dots: one line through the pixel columns' extremes.
        chart
            .draw_series(LineSeries::new(sent.iter().copied(), SENT.stroke_width(2)))
            .map_err(err)?
            .label(format!("sent in sequence ({sent_n}, line)"))
            .legend(|(a, b)| PathElement::new(vec![(a - 6, b), (a + 6, b)], SENT.stroke_width(2)));
    }
    if !acks.is_empty() {
        chart
            .draw_series(LineSeries::new(acks.iter().copied(), ACK.stroke_width(1)))
            .map_err(err)?
            .label("ACKed PSN (reverse flow)")
            .legend(|(a, b)| PathElement::new(vec![(a - 6, b), (a + 6, b)], ACK.stroke_width(2)));
    }
    let shapes: [(Mark, &Vec<Pt>, &str, u64); 5] = [
        (Mark::Ce, &ce, "CE-marked", t.ce.dropped),
        (Mark::Gap, &gaps, "gap (first missing PSN)", t.gaps.dropped),
        (Mark::Retx, &retx, "retransmission", t.retx.dropped),
        (Mark::Nak, &naks, "NAK", t.naks.dropped),
        (Mark::Rnr, &rnrs, "RNR NAK", 0),
    ];
    for (m, pts, what, dropped) in shapes {
        if pts.is_empty() {
            continue;
        }
        // Past MAX_DRAWN markers of a kind, keep the lowest and highest per pixel column: the
        // picture is the same, the SVG stays small, and the legend says so.
        let (drawn, label) = if pts.len() > MAX_DRAWN {
            let d = thin(pts.iter().copied(), &xr);
            let l = format!(
                "{what} ({}; {} drawn, thinned to pixels)",
                pts.len(),
                d.len()
            );
            (d, l)
        } else {
            (pts.clone(), counted(what, pts.len(), dropped))
        };
        chart
            .draw_series(drawn.iter().map(|&p| marker(m, p, m.color())))
            .map_err(err)?
            .label(label)
            .legend(move |c| marker(m, c, m.legend_color()));
    }
    if !cnps.is_empty() {
        let top = hi + pad;
        let drawn = thin_x(&cnps, &xr);
        chart
            .draw_series(
                drawn
                    .iter()
                    .map(|&cx| marker(Mark::Cnp, (cx, top), Mark::Cnp.color())),
            )
            .map_err(err)?
            .label(counted(
                "CNP received (top edge)",
                cnps.len(),
                t.cnps.dropped,
            ))
            .legend(|c| marker(Mark::Cnp, c, Mark::Cnp.legend_color()));
    }
    axes::legend(&mut chart, SeriesLabelPosition::LowerRight)
}

/// The flow's first transmissions in the window, as the legend counts them: exact while the
/// recorder kept every one ([`Thinned`] keeps one in `stride` past its cap), else all it saw
/// when the window holds the flow's whole span, else an estimate from the kept ones.
fn sent_count(t: &FlowTrace, un: &Unwrap, win: Window) -> String {
    let kept = un.pts.iter().filter(|p| win.contains(p.0)).count() as u64;
    let stride = t.sent.stride.max(1);
    if stride == 1 {
        return kept.to_string();
    }
    let all = un.pts.iter().all(|p| win.contains(p.0));
    if all {
        t.sent.seen.to_string()
    } else {
        format!("about {}", kept * stride)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_keep_bursts_whole_and_holes_open() {
        let x = 0.0..1200.0;
        // PSNs 12..=19 inside one pixel column: one run, drawn 12 to 19 (thinning kept only
        // the lowest and highest point, which read as a hole of 6 PSNs).
        let burst: Vec<Pt> = (12..=19)
            .map(|p| (5.0 + p as f64 * 0.01, p as f64))
            .collect();
        assert_eq!(
            runs(burst.iter().copied(), &x),
            vec![((5.12, 12.0), (5.19, 19.0))]
        );
        // A real hole in the same column (14, 15 missing): two runs; the next column: a third.
        let holed: Vec<Pt> = [10.0, 11.0, 12.0, 13.0, 16.0, 17.0]
            .iter()
            .map(|&p| (5.0 + p * 0.01, p))
            .chain([(7.5, 18.0)])
            .collect();
        assert_eq!(
            runs(holed.iter().copied(), &x),
            vec![
                ((5.1, 10.0), (5.13, 13.0)),
                ((5.16, 16.0), (5.17, 17.0)),
                ((7.5, 18.0), (7.5, 18.0))
            ]
        );
        assert_eq!(thin(burst.iter().copied(), &x).len(), 2);
    }
}
