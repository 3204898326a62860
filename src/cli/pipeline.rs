//! The read loop shared by `read` and `capture`: source → decoder → selection → printer.

use std::io::{self, Write};

use anyhow::{Context, Result};

use super::progress::Progress;
use super::{DisplayArgs, ReportArgs};
use crate::analyze::{AnalyzeConfig, Analyzer, Report};
use crate::decode::{DecodeConfig, Frame, FrameKind, LinkType, OtherKind, decode_frame};
use crate::output::json::JsonPrinter;
use crate::output::parquet::{Exporter, PacketMeta};
use crate::output::text::TextPrinter;
use crate::output::{FrameCtx, Printer};
use crate::source::{FileSource, Record};

/// Whether a decoded frame is shown under the display options.
pub fn selected(d: &DisplayArgs, frame: &Frame<'_>) -> bool {
    match &frame.kind {
        FrameKind::Roce(p) => {
            let Some(bth) = p.bth else {
                return d.qp.is_none() && d.opcode.is_none();
            };
            d.qp.is_none_or(|q| q == bth.dest_qp)
                && d.opcode.as_ref().is_none_or(|s| s.0[bth.opcode.0 as usize])
        }
        // A frame whose link or IP header could not be parsed might have been RoCE: show it
        // (marked) rather than let it vanish; other non-RoCE frames only with `--all`.
        FrameKind::Other(OtherKind::Undecodable(_)) => d.qp.is_none() && d.opcode.is_none(),
        FrameKind::Other(_) => d.all && d.qp.is_none() && d.opcode.is_none(),
    }
}

/// Build the printer the display options ask for, over stdout (the printers buffer themselves).
pub fn make_printer(d: &DisplayArgs) -> Box<dyn Printer> {
    let out = io::stdout();
    if d.json {
        Box::new(JsonPrinter::new(out))
    } else {
        Box::new(TextPrinter::new(out, d.color.enabled(), d.verbose))
    }
}

/// Per-run state: decoder settings, printer, analyzer, frame counts.
pub struct Run {
    cfg: DecodeConfig,
    linktype: LinkType,
    printer: Box<dyn Printer>,
    /// Whether per-packet output is printed (not with `-q`, nor with a JSON report).
    pub print_packets: bool,
    analyzer: Option<Analyzer>,
    /// Parquet export of every RoCE frame and the report (`capture --parquet DIR`).
    export: Option<Exporter>,
    display: DisplayArgs,
    frames: u64,
    roce: u64,
}

impl Run {
    /// A run over frames of `linktype`.
    pub fn new(display: &DisplayArgs, linktype: LinkType) -> Run {
        let r = &display.report;
        let analyzer = r.wanted().then(|| {
            Analyzer::new(AnalyzeConfig {
                mtu: r.mtu,
                max_flows: r.max_flows,
                keep_messages: r.messages,
                ..AnalyzeConfig::default()
            })
        });
        Run {
            cfg: DecodeConfig::with_ports(&display.roce_ports),
            linktype,
            printer: make_printer(display),
            print_packets: !(r.quiet || (display.json && r.wanted())),
            analyzer,
            export: None,
            display: display.clone(),
            frames: 0,
            roce: 0,
        }
    }

    /// Also export every RoCE frame, and at the end the report, as Parquet (the analyzer runs
    /// even without a report option, keeping its messages for the `messages` table).
    pub fn export_to(&mut self, exporter: Exporter) {
        let r = &self.display.report;
        let analyzer = self.analyzer.take();
        self.analyzer = Some(match analyzer {
            Some(a) if r.messages => a,
            _ => Analyzer::new(AnalyzeConfig {
                mtu: r.mtu,
                max_flows: r.max_flows,
                keep_messages: true,
                ..AnalyzeConfig::default()
            }),
        });
        self.export = Some(exporter);
    }

    /// Frames handled so far.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Frames decoded as RoCE (v1, v2 or native IB, malformed ones included) so far.
    pub fn roce_frames(&self) -> u64 {
        self.roce
    }

    /// Whether `-c N` has been reached.
    pub fn done(&self) -> bool {
        self.display.count.is_some_and(|c| self.frames >= c)
    }

    /// Decode, select and print one record.
    ///
    /// # Errors
    /// Output I/O errors (a closed pipe included).
    pub fn record(&mut self, rec: &Record<'_>) -> io::Result<()> {
        self.frames += 1;
        let frame = decode_frame(self.linktype, rec.data, rec.len, &self.cfg);
        if frame.roce().is_some() {
            self.roce += 1;
        }
        if let Some(a) = &mut self.analyzer {
            a.push(rec.number, rec.ts_ns, &frame);
        }
        if let Some(e) = &mut self.export {
            let meta = PacketMeta {
                frame: rec.number,
                ts_ns: rec.ts_ns,
                len: rec.len,
                caplen: rec.caplen,
                link: &frame.link,
            };
            // Messages printed with --messages stay in the report; others stream to the export.
            let a = self
                .analyzer
                .as_mut()
                .filter(|_| !self.display.report.messages);
            e.frame(&meta, &frame, a).map_err(io::Error::other)?;
        }
        if self.print_packets && selected(&self.display, &frame) {
            let ctx = FrameCtx {
                number: rec.number,
                ts_ns: rec.ts_ns,
                rel_ns: rec.ts_ns.saturating_sub(rec.base_ts_ns),
                caplen: rec.caplen,
                len: rec.len,
            };
            self.printer.frame(&ctx, &frame)?;
        }
        Ok(())
    }

    /// Write out the packet lines printed so far (live capture, while idle).
    ///
    /// # Errors
    /// Output I/O errors.
    pub fn flush(&mut self) -> io::Result<()> {
        self.printer.flush()
    }

    /// At the end of the input: flush the printer, then print the reports asked for.
    ///
    /// # Errors
    /// Output I/O errors.
    pub fn finish(&mut self) -> io::Result<()> {
        self.printer.flush()?;
        if let Some(a) = self.analyzer.take() {
            let report = a.finish();
            if self.display.report.wanted() {
                let mut out = io::stdout().lock();
                write_reports(&report, &self.display, &mut out)?;
                out.flush()?;
            }
            if let Some(e) = self.export.take() {
                e.finish(&report).map_err(io::Error::other)?;
            }
        }
        Ok(())
    }
}

/// Print the reports `d` asks for: text tables, or JSON (one document for `--summary`, NDJSON
/// lines for `--messages` and `--gaps`).
///
/// # Errors
/// Output I/O errors.
pub fn write_reports(report: &Report, d: &DisplayArgs, out: &mut dyn Write) -> io::Result<()> {
    use crate::output::summary::{write_gaps, write_messages, write_summary};
    let r: &ReportArgs = &d.report;
    // `-q` alone means the summary.
    let summary = r.summary || !(r.messages || r.gaps);
    if d.json {
        if summary {
            // One document; it already holds `gaps` and, with --messages, `messages`.
            serde_json::to_writer(&mut *out, report).map_err(io::Error::from)?;
            return out.write_all(b"\n");
        }
        if r.messages {
            for m in report.messages.iter().flatten() {
                serde_json::to_writer(&mut *out, m).map_err(io::Error::from)?;
                out.write_all(b"\n")?;
            }
        }
        if r.gaps {
            for g in &report.gaps {
                serde_json::to_writer(&mut *out, g).map_err(io::Error::from)?;
                out.write_all(b"\n")?;
            }
        }
        return Ok(());
    }
    let color = d.color.enabled();
    if summary {
        write_summary(report, out, color)?;
    }
    if r.messages {
        write_messages(report, out, color)?;
    }
    if r.gaps {
        write_gaps(report, out, color)?;
    }
    Ok(())
}

/// Outcome of a run that the caller turns into an exit status.
pub enum Outcome {
    /// Everything went well.
    Ok,
    /// Stdout was closed by the reader (`| head`): stop quietly.
    ClosedPipe,
}

/// Map an output result: a closed pipe ends the run quietly, other errors are reported.
pub(crate) fn io_outcome(r: io::Result<()>) -> Result<Option<Outcome>> {
    match r {
        Ok(()) => Ok(None),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(Some(Outcome::ClosedPipe)),
        Err(e) => Err(e).context("writing output"),
    }
}

/// `roce-inspect read FILE`.
///
/// # Errors
/// One-line errors naming the file: open/format/link-type problems, a bad filter, or a read
/// error in the middle of the file (reported after the frames read before it are printed).
pub fn read_file(path: &str, d: &DisplayArgs) -> Result<Outcome> {
    let shown = if path == "-" { "<stdin>" } else { path };
    let mut src = FileSource::open(path).with_context(|| shown.to_string())?;
    if let Some(f) = &d.filter {
        src.set_filter(f)?;
    }
    let mut run = Run::new(d, src.linktype());
    let mut progress = Progress::for_file(path, run.print_packets);
    let mut read_err = None;
    while !run.done() {
        match src.next_record() {
            Ok(Some(rec)) => {
                progress.frame(rec.caplen);
                if let Some(o) = io_outcome(run.record(&rec))? {
                    return Ok(o);
                }
            }
            Ok(None) => break,
            Err(e) => {
                read_err = Some(e);
                break;
            }
        }
    }
    progress.finish();
    if let Some(o) = io_outcome(run.finish())? {
        return Ok(o);
    }
    if let Some(e) = read_err {
        // Frame numbers in the file, as printed (a filter may have skipped some).
        let where_ = match src.frames_read() {
            0 => shown.to_string(),
            n => format!("{shown}: after frame {n}"),
        };
        return Err(anyhow::Error::new(e).context(where_));
    }
    let unfiltered = d.filter.is_none() && d.qp.is_none() && d.opcode.is_none() && !d.all;
    if run.roce_frames() == 0 && run.frames() > 0 && unfiltered && run.print_packets {
        eprintln!(
            "roce-inspect: {shown}: no RoCE packets in {} frames (RoCEv2 on a UDP port other than 4791? try --roce-port N; --all lists every frame)",
            run.frames()
        );
    }
    Ok(Outcome::Ok)
}
