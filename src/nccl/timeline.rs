//! `nccl --html FILE`: a self-contained HTML page with the connections table and a timeline,
//! one row per connection, each step a bar: grey from its CTS to its first data packet (the
//! wait), blue from first to last data packet, red when the step was its round's straggler.
//! Times are on each connection's capture clock, drawn on one axis from the earliest step;
//! idle stretches longer than a twentieth of the whole and than 100 median steps (between
//! iterations of a job) are cut out of the axis and marked by a dashed line ([`busy`]).

use std::io::{self, Write};

use super::Report;

/// Idle stretches shorter than this many median step spans are never cut out of the axis.
pub const IDLE_STEPS: u64 = 100;
/// Drawing width of the time axis, px.
const AXIS_PX: f64 = 1000.0;
/// Left margin for the row labels, px.
const LABEL_PX: f64 = 300.0;
/// Row height, px.
const ROW_PX: f64 = 22.0;
/// Width of a cut-out idle stretch, px.
const BREAK_PX: f64 = 12.0;

/// The time axis: busy stretches (start, end, ns) drawn one after the other with a break
/// between them.
struct Axis {
    busy: Vec<(u64, u64)>,
    px_per_ns: f64,
}

impl Axis {
    fn new(spans: Vec<(u64, u64)>) -> Option<Axis> {
        let busy = busy(spans);
        if busy.is_empty() {
            return None;
        }
        let total: u64 = busy.iter().map(|(a, b)| b - a).sum::<u64>().max(1);
        let px = (AXIS_PX - BREAK_PX * (busy.len() - 1) as f64).max(100.0) / total as f64;
        Some(Axis {
            busy,
            px_per_ns: px,
        })
    }

    /// x of time `t`, px.
    fn x(&self, t: u64) -> f64 {
        let mut x = LABEL_PX;
        for (i, &(a, b)) in self.busy.iter().enumerate() {
            if t <= b || i + 1 == self.busy.len() {
                return x + t.saturating_sub(a).min(b - a) as f64 * self.px_per_ns;
            }
            x += (b - a) as f64 * self.px_per_ns + BREAK_PX;
        }
        x
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The busy stretches of `spans` (start, end ns): spans merged unless the idle time between
/// them is longer than both a twentieth of the whole and [`IDLE_STEPS`] times the median
/// span. Such idle stretches (between iterations of a job) are left out of the time axes of
/// `--html` and `plot --kind nccl`; shorter ones, such as a slow receiver's late CTS, stay.
/// Empty when `spans` is.
pub fn busy(mut spans: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    let mut lens: Vec<u64> = spans.iter().map(|(a, b)| b.saturating_sub(*a)).collect();
    lens.sort_unstable();
    spans.sort_unstable();
    let (Some(t0), Some(t1)) = (spans.first().map(|s| s.0), spans.iter().map(|s| s.1).max()) else {
        return Vec::new();
    };
    let cut = ((t1 - t0) / 20).max(lens[lens.len() / 2].saturating_mul(IDLE_STEPS));
    let mut busy: Vec<(u64, u64)> = Vec::new();
    for (a, b) in spans {
        match busy.last_mut() {
            Some(l) if a <= l.1.saturating_add(cut) => l.1 = l.1.max(b),
            _ => busy.push((a, b)),
        }
    }
    busy
}

/// The time step `s` takes on the axis, ns: its CTS (or first data packet, whichever is
/// earlier) to its last data packet, at least 1 ns.
pub fn step_span(s: &super::StepOut) -> (u64, u64) {
    let a = s.cts_ns.unwrap_or(s.first_ns).min(s.first_ns);
    (a, (s.first_ns + s.data_ns).max(a + 1))
}

/// The time every step of `r` takes on the axis: CTS (or first data packet) to last.
fn spans(r: &Report) -> Vec<(u64, u64)> {
    r.connections
        .iter()
        .flat_map(|c| &c.step_list)
        .map(step_span)
        .collect()
}

/// Write the page for `r` to `w`.
///
/// # Errors
/// Write errors of `w`.
pub fn write(r: &Report, w: &mut impl Write) -> io::Result<()> {
    writeln!(
        w,
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>roce-inspect nccl</title>\
         <style>body{{font-family:sans-serif}}table{{border-collapse:collapse}}\
         td,th{{border:1px solid #ccc;padding:2px 6px;text-align:right}}</style></head><body>"
    )?;
    writeln!(w, "<h1>NCCL {}</h1>", esc(&r.nccl_version))?;
    table(r, w)?;
    timeline(r, w)?;
    writeln!(w, "</body></html>")
}

fn table(r: &Report, w: &mut impl Write) -> io::Result<()> {
    writeln!(
        w,
        "<table><tr><th>#</th><th>sender → receiver</th><th>QPs</th><th>messages</th>\
         <th>bytes</th><th>CTS</th><th>steps</th><th>wait µs</th><th>busbw GB/s</th>\
         <th>straggler rounds</th></tr>"
    )?;
    for c in &r.connections {
        writeln!(
            w,
            "<tr><td>{}</td><td>{} → {}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            c.id,
            esc(&c.sender),
            esc(&c.receiver),
            c.qps.len(),
            c.messages,
            c.bytes,
            c.cts,
            c.steps,
            c.wait_mean_ns
                .map_or("-".into(), |v| format!("{:.1}", v / 1e3)),
            c.busbw_gbs.map_or("-".into(), |v| format!("{v:.3e}")),
            c.straggler_rounds
        )?;
    }
    writeln!(w, "</table>")
}

fn timeline(r: &Report, w: &mut impl Write) -> io::Result<()> {
    let Some(axis) = Axis::new(spans(r)) else {
        return writeln!(w, "<p>No completed step.</p>");
    };
    let x = |t: u64| axis.x(t);
    let height = ROW_PX * (r.connections.len() as f64 + 2.0);
    writeln!(
        w,
        "<h2>Steps</h2><p>grey: CTS → first data; blue: data; red: the round's straggler; \
         dashed: idle time cut out. Labels: ms since the first step.</p>\n\
         <svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{height}\" \
         font-size=\"12\">",
        LABEL_PX + AXIS_PX + 80.0
    )?;
    for (row, c) in r.connections.iter().enumerate() {
        let y = ROW_PX * row as f64;
        writeln!(
            w,
            "<text x=\"4\" y=\"{}\">#{} {} → {}</text>",
            y + 15.0,
            c.id,
            esc(&c.sender),
            esc(&c.receiver)
        )?;
        for (k, s) in c.step_list.iter().enumerate() {
            let last = s.first_ns + s.data_ns;
            if let Some(cts) = s.cts_ns.filter(|&t| t < s.first_ns) {
                writeln!(
                    w,
                    "<rect x=\"{:.1}\" y=\"{}\" width=\"{:.1}\" height=\"8\" fill=\"#bbb\"/>",
                    x(cts),
                    y + 7.0,
                    (x(s.first_ns) - x(cts)).max(0.5)
                )?;
            }
            let slow = r
                .stragglers
                .iter()
                .any(|g| g.connection == c.id && g.round == k);
            writeln!(
                w,
                "<rect x=\"{:.1}\" y=\"{}\" width=\"{:.1}\" height=\"16\" fill=\"{}\">\
                 <title>step {} ({} bytes, {:.1} µs)</title></rect>",
                x(s.first_ns),
                y + 3.0,
                (x(last) - x(s.first_ns)).max(1.0),
                if slow { "#d33" } else { "#36c" },
                s.idx,
                s.bytes,
                s.data_ns as f64 / 1e3
            )?;
        }
    }
    let ya = ROW_PX * r.connections.len() as f64 + 14.0;
    let t0 = axis.busy[0].0;
    for (i, &(a, b)) in axis.busy.iter().enumerate() {
        if i > 0 {
            let xb = x(a) - BREAK_PX / 2.0;
            writeln!(
                w,
                "<line x1=\"{xb:.1}\" x2=\"{xb:.1}\" y1=\"0\" y2=\"{:.1}\" \
                 stroke=\"#888\" stroke-dasharray=\"3,3\"/>",
                ya - 12.0
            )?;
        }
        for t in [a, b] {
            writeln!(
                w,
                "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{:.3}</text>",
                x(t),
                ya + if t == b { 14.0 } else { 0.0 },
                (t - t0) as f64 / 1e6
            )?;
        }
    }
    writeln!(w, "</svg>")
}
