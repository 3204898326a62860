//! Pictures of a capture (issue 14): PSN-vs-time graphs (tcptrace style), rate and congestion
//! timelines, latency CDFs and message timelines, drawn with `plotters` as SVG; a PNG is that SVG
//! rasterised by `resvg` ([`raster`]), so both are the same picture.
//!
//! The data comes from a [`trace::Recorder`] tapped into the analyzer plus the final
//! [`Report`]; nothing here re-derives protocol logic. Markers that tests and users count carry
//! a `class` attribute in the SVG (`m-retx`, `m-gap`, `m-nak`, `m-rnr`, `m-ce`, `m-cnp`,
//! `m-msg-ok`, `m-msg-failed`, see [`marks`]).

pub mod axes;
pub mod font;
pub mod latency;
pub mod marks;
pub mod messages;
pub mod nccl;
pub mod psn;
pub mod raster;
pub mod rate;
pub mod select;
pub mod trace;

use std::path::Path;

use anyhow::{Context, Result};
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::analyze::Report;
pub use select::{Selection, Window};
pub use trace::{Recorder, Trace};

/// What to draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// PSN (unwrapped) against time per flow, with retransmissions, gaps, NAKs, ACKs, CE, CNPs.
    Psn,
    /// Throughput per flow in time bins, with CE fraction and CNP arrivals below.
    Rate,
    /// ACK RTT and READ latency distributions (CDF, log time axis) per flow.
    Latency,
    /// One bar per message on a time line per flow (failed ones marked).
    Messages,
    /// NCCL's steps: one row per NCCL connection, each step a bar (`nccl --html`'s timeline).
    Nccl,
}

impl Kind {
    /// Every kind of one flow-by-flow analysis, in the order `read --html` shows them
    /// ([`Kind::Nccl`], drawn from the `nccl` report, is apart).
    pub const ALL: [Kind; 4] = [Kind::Psn, Kind::Rate, Kind::Latency, Kind::Messages];

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Psn => "psn",
            Kind::Rate => "rate",
            Kind::Latency => "latency",
            Kind::Messages => "messages",
            Kind::Nccl => "nccl",
        }
    }
}

/// What and how to draw.
#[derive(Clone, Debug)]
pub struct Options {
    /// Plot kind.
    pub kind: Kind,
    /// Only flows to this destination QP.
    pub qp: Option<u32>,
    /// Time window, seconds relative to the first frame.
    pub from_s: Option<f64>,
    /// End of the time window, seconds relative to the first frame.
    pub to_s: Option<f64>,
    /// Rate bin width, ns (`None`: chosen from the duration).
    pub bin_ns: Option<u64>,
    /// Most flows drawn (the largest by payload bytes).
    pub top: usize,
    /// Picture size, pixels (height 0: chosen from the number of panels).
    pub size: (u32, u32),
    /// PNG pixels per picture pixel (`--scale`, 1–4): a PNG for a high-DPI screen is drawn at
    /// twice the size with the same layout. SVGs ignore it (they scale as they are shown).
    pub scale: u32,
}

impl Options {
    /// Defaults for `kind`: every QP, the whole capture, top 4 flows, 1200 px wide.
    pub fn new(kind: Kind) -> Options {
        Options {
            kind,
            qp: None,
            from_s: None,
            to_s: None,
            bin_ns: None,
            top: 4,
            size: (1200, 0),
            scale: 1,
        }
    }
}

/// Draw `opts.kind` on `root`.
fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    report: &Report,
    trace: &Trace,
    sel: &Selection,
    opts: &Options,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(err)?;
    match opts.kind {
        Kind::Psn => psn::draw(root, report, trace, sel),
        Kind::Rate => rate::draw(root, report, trace, sel, opts.bin_ns),
        Kind::Latency => latency::draw(root, report, trace, sel),
        Kind::Messages => messages::draw(root, report, trace, sel),
        Kind::Nccl => anyhow::bail!("the nccl plot is drawn from the nccl report"),
    }?;
    root.present().map_err(err)
}

/// A plotters drawing error as an `anyhow` error.
pub(crate) fn err<E: std::error::Error + Send + Sync + 'static>(
    e: DrawingAreaErrorKind<E>,
) -> anyhow::Error {
    anyhow::anyhow!("drawing: {e}")
}

/// Draw the title band of a plot — `title`, and the selection's note (flows left out) after a
/// dash — in `size`-pixel type; the area below it.
///
/// # Errors
/// Drawing errors.
pub(crate) fn titled<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    sel: &Selection,
    size: u32,
) -> Result<DrawingArea<DB, Shift>>
where
    DB::ErrorType: 'static,
{
    let title = match sel.note() {
        Some(n) => format!("{title} — {n}"),
        None => title.to_string(),
    };
    let (top, body) = root.split_vertically(36);
    top.titled(&title, (font::FAMILY, size)).map_err(err)?;
    Ok(body)
}

/// The picture's height: the given one, else one from the number of panels.
fn height(opts: &Options, sel: &Selection) -> u32 {
    if opts.size.1 > 0 {
        return opts.size.1;
    }
    let panels = sel.flows.len().max(1) as u32;
    match opts.kind {
        Kind::Psn => 120 + 330 * panels.min(6),
        Kind::Rate => 720,
        Kind::Latency => 560,
        Kind::Messages => (160 + 60 * panels).clamp(320, 1400),
        Kind::Nccl => nccl::height(panels as usize),
    }
}

/// The plot as an SVG document, markers tagged with their classes.
///
/// # Errors
/// A time window that selects nothing, or a drawing error.
pub fn svg(report: &Report, trace: &Trace, opts: &Options) -> Result<String> {
    font::register()?;
    let sel = Selection::new(report, trace, opts)?;
    let size = (opts.size.0, height(opts, &sel));
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        draw(&root, report, trace, &sel, opts)?;
    }
    Ok(marks::tag_svg(&out))
}

/// Write the plot to `path`: PNG ([`raster::png`] of the [`svg`], at `opts.scale`) when it
/// ends in `.png`, else SVG. Nothing is written unless the picture was drawn, and a file whose
/// writing failed is removed, so a failed plot leaves no empty or partial file.
///
/// # Errors
/// As [`svg`] and [`raster::png`], plus the file's I/O errors.
pub fn write(report: &Report, trace: &Trace, opts: &Options, path: &Path) -> Result<()> {
    write_doc(svg(report, trace, opts)?, opts, path)
}

/// Write the SVG document `doc` to `path` as [`write()`] does: a PNG when `path` ends in `.png`.
///
/// # Errors
/// As [`raster::png`], plus the file's I/O errors.
pub fn write_doc(doc: String, opts: &Options, path: &Path) -> Result<()> {
    let png = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("png"));
    let shown = || path.display().to_string();
    let bytes = if png {
        raster::png(&doc, opts.scale).with_context(shown)?
    } else {
        doc.into_bytes()
    };
    write_whole(path, &bytes).with_context(shown)
}

/// Write `bytes` to a file beside `path` and rename it to `path`, so `path` is either the whole
/// new file or as it was; the partial file is removed on failure.
fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut part = path.as_os_str().to_owned();
    part.push(".part");
    let part = std::path::PathBuf::from(part);
    let done = std::fs::write(&part, bytes).and_then(|()| std::fs::rename(&part, path));
    if done.is_err() {
        let _ = std::fs::remove_file(&part);
    }
    done
}
