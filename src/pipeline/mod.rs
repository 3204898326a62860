//! The frame's path, between the sources and the printers: the run shared by `read` and
//! `capture` (source → decoder → selection → printer, with the analyzer beside), the
//! sequential loop here, the parallel one of `--threads N` ([`parallel`], its decoders in
//! [`crew`]), the live loop ([`capture_loop`], its `FrameSource`), the runs of `export`
//! ([`export`]) and `plot` ([`plot`]), the reports of `correlate` and `nccl` written out
//! ([`job`]), the one-pass walk over a file's records they and the
//! sequential loop share ([`walk`]), the analysis marks of packet lines ([`marked`]) and the
//! progress line ([`progress`]). `cli` parses the arguments and calls in here.

pub mod capture_loop;
pub mod crew;
pub mod export;
pub mod job;
pub mod marked;
pub mod parallel;
pub mod plan;
pub mod plot;
pub mod progress;
pub mod walk;

use std::io::{self, Write};
use std::ops::ControlFlow;

use anyhow::Result;

use crate::analyze::marks::Marks;
use crate::analyze::{AnalyzeConfig, Analyzer, Report, Seen};
use crate::decode::encap::clock::MirrorClock;
use crate::decode::{DecodeConfig, Frame, FrameKind, LinkType, OtherKind, decode_frame};
use crate::filter::DisplayFilter;
use crate::filter::fields::Pkt;
use crate::output::fields::FieldsPrinter;
use crate::output::json::JsonPrinter;
use crate::output::parquet::{Exporter, PacketMeta};
use crate::output::plot::{Recorder, Trace};
use crate::output::reports::{
    HtmlReport, JsonReport, ParquetReport, ReportWidth, Tables, TextReport,
};
use crate::output::savefile::MarkedWriter;
use crate::output::text::TextPrinter;
use crate::output::{FrameCtx, Printer};
use crate::source::tag_miss::IsRoce;
use crate::source::{FileSource, Record};
use marked::Marking;
use plan::{OutputPlan, PacketFormat, ReportPlan};
use progress::Progress;
use walk::Walked;

/// Bytes of report text gathered before each write to standard output.
pub const REPORT_BUFFER: usize = 64 << 10;

/// Whether a decoded frame is shown under the display options.
pub fn selected(d: &OutputPlan, frame: &Frame<'_>) -> bool {
    match &frame.kind {
        FrameKind::Roce(p) => {
            let Some(bth) = p.bth else {
                return d.qp.is_none() && d.opcodes.is_none();
            };
            d.qp.is_none_or(|q| q == bth.dest_qp)
                && d.opcodes
                    .as_ref()
                    .is_none_or(|s| s.0[bth.opcode.0 as usize])
        }
        // A frame whose link or IP header could not be parsed might have been RoCE: show it
        // (marked) rather than let it vanish; other non-RoCE frames only with `--all`.
        FrameKind::Other(OtherKind::Undecodable(_)) => d.qp.is_none() && d.opcodes.is_none(),
        FrameKind::Other(_) => {
            (d.all || d.display_filter.is_some()) && d.qp.is_none() && d.opcodes.is_none()
        }
    }
}

/// Build the printer the display options ask for, over stdout (the printers buffer themselves).
pub fn make_printer(d: &OutputPlan) -> Box<dyn Printer + Send> {
    printer_into(d, io::stdout(), true)
}

/// The printer the display options ask for, writing to `out`; `-T fields`' header line first
/// when `header` (and `-E header=y`).
fn printer_into<'w, W: io::Write + Send + 'w>(
    d: &OutputPlan,
    out: W,
    header: bool,
) -> Box<dyn Printer + Send + 'w> {
    match &d.format {
        PacketFormat::Fields(f) => Box::new(FieldsPrinter::new(out, f.clone(), header)),
        PacketFormat::Json => Box::new(JsonPrinter::new(out)),
        PacketFormat::Text { color, verbose } => Box::new(TextPrinter::new(out, *color, *verbose)),
    }
}

/// What turns a record into output, without state: decoder settings and display options.
/// Shared read-only by the threads of the parallel reader.
#[derive(Clone, Debug)]
pub struct Shape {
    cfg: DecodeConfig,
    linktype: LinkType,
    display: OutputPlan,
    /// Whether per-packet output is printed (not with `-q`, nor with a JSON report).
    print_packets: bool,
}

impl Shape {
    /// Decode one record.
    pub fn decode<'a>(&self, rec: &Record<'a>) -> Frame<'a> {
        decode_frame(self.linktype, rec.data, rec.len, &self.cfg)
    }

    /// The printing context of a frame when it is shown, `None` when it is not.
    fn shown(
        &self,
        rec: &Record<'_>,
        frame: &Frame<'_>,
        ts_ns: u64,
        base: u64,
        marks: Option<&Marks>,
    ) -> Option<FrameCtx> {
        self.print_packets
            .then(|| self.passes(rec, frame, ts_ns, base, marks))
            .flatten()
    }

    /// The printing context of a frame when the display options (--qp, --opcode, --all, -Y)
    /// select it, printed or not.
    fn passes(
        &self,
        rec: &Record<'_>,
        frame: &Frame<'_>,
        ts_ns: u64,
        base: u64,
        marks: Option<&Marks>,
    ) -> Option<FrameCtx> {
        if !selected(&self.display, frame) {
            return None;
        }
        let ctx = FrameCtx {
            number: rec.number,
            ts_ns,
            // The signed difference (exact while it is under 2^63 ns, 292 years).
            rel_ns: ts_ns.wrapping_sub(base) as i64,
            caplen: rec.caplen,
            len: rec.len,
        };
        let passes = |f: &DisplayFilter| {
            f.matches(&Pkt {
                ctx: &ctx,
                frame,
                marks,
            })
        };
        self.display
            .display_filter
            .as_deref()
            .is_none_or(passes)
            .then_some(ctx)
    }

    /// Whether per-packet output is printed.
    pub fn print_packets(&self) -> bool {
        self.print_packets
    }

    /// Format the shown frames among `recs` (decoded as `frames`) into `out`, exactly as the
    /// run's printer would write them (capture times: no `--mirror-time`).
    pub fn format_into(&self, recs: &[Record<'_>], frames: &[Frame<'_>], out: &mut Vec<u8>) {
        let d = &self.display;
        let mut p = printer_into(d, &mut *out, false);
        for (rec, frame) in recs.iter().zip(frames) {
            if let Some(ctx) = self.shown(rec, frame, rec.ts_ns, rec.base_ts_ns, None) {
                // Writing into memory cannot fail.
                let _ = p.frame(&ctx, frame);
            }
        }
        let _ = p.flush();
    }
}

/// Printers, each behind the one [`Printer`] interface.
type Printers = Vec<Box<dyn Printer + Send>>;

/// Per-run state: decoding and display ([`Shape`]), printers, analyzer, frame counts.
pub struct Run {
    shape: Shape,
    /// The printers on standard output, in order: the packet printer, then the report's (text
    /// tables or JSON) when one is printed. Each shown frame goes to all (the report's prints
    /// nothing of it).
    out: Printers,
    /// The printers into files, in order, added at the end when the report is made: the
    /// `--html` report, then the Parquet export's end (the exporter is fed by [`Run::record`]
    /// until then).
    files: Printers,
    analyzer: Option<Analyzer>,
    /// Parquet export of every RoCE frame and the report (`capture --parquet DIR`).
    export: Option<Exporter>,
    frames: u64,
    roce: u64,
    /// `--mirror-time`: ERSPAN III hardware timestamps.
    clock: Option<MirrorClock>,
    /// `--mirror-time`: the first frame's time, for relative times.
    base_ts: Option<u64>,
    /// The input's name (file or interface): the `--html` report's title.
    source_name: String,
    /// `--html`: the trace its plots are drawn from, taken back from the analyzer at the end.
    html_trace: Trace,
    /// Warnings about the input itself (a file damaged after some frame), added to the
    /// report's.
    input_warnings: Vec<crate::analyze::warning::Warning>,
    /// Analysis marks on the packet lines (`--marks`, `-Y analysis.*`).
    marking: Option<Marking>,
    /// `read -w FILE`: the shown frames, written instead of printed.
    savefile: Option<MarkedWriter>,
    /// The Parquet export put a marks tap of its own on the analyzer (without `marking`).
    export_tapped: bool,
}

impl Run {
    /// A run over frames of `linktype`.
    pub fn new(display: &OutputPlan, linktype: LinkType) -> Run {
        let r = &display.report;
        let mut analyzer = r.wanted().then(|| {
            Analyzer::new(AnalyzeConfig {
                mtu: r.mtu,
                max_flows: r.max_flows,
                keep_messages: r.messages,
                encap_session: r.encap_session,
                ..AnalyzeConfig::default()
            })
        });
        // `--html`: a recorder tapped into the analyzer, taken back at the end.
        if let (Some(a), Some(_)) = (&mut analyzer, &r.html) {
            a.set_tap(Box::new(Recorder::default()));
        }
        let marking = display.marks.then(|| {
            let a = analyzer.get_or_insert_with(|| {
                Analyzer::new(AnalyzeConfig {
                    mtu: r.mtu,
                    max_flows: r.max_flows,
                    encap_session: r.encap_session,
                    ..AnalyzeConfig::default()
                })
            });
            Marking::tap(a)
        });
        Run {
            shape: Shape {
                cfg: DecodeConfig::with_ports(&display.roce_ports)
                    .with_vxlan_ports(&display.vxlan_ports),
                linktype,
                display: display.clone(),
                print_packets: !(r.quiet || r.html.is_some() || (display.json() && r.wanted())),
            },
            clock: display.mirror_time.then(MirrorClock::new),
            base_ts: None,
            out: stdout_printers(display),
            files: Vec::new(),
            source_name: "capture".to_string(),
            html_trace: Trace::default(),
            analyzer,
            input_warnings: Vec::new(),
            marking,
            savefile: None,
            export_tapped: false,
            export: None,
            frames: 0,
            roce: 0,
        }
    }

    /// Whether a frame (data, length on the wire) decodes as RoCE under this run's settings:
    /// for counting the tagged frames a filter misses ([`crate::source::tag_miss`]).
    pub fn roce_predicate(&self) -> IsRoce {
        let (lt, cfg) = (self.shape.linktype, self.shape.cfg.clone());
        Box::new(move |data, len| decode_frame(lt, data, len, &cfg).roce().is_some())
    }

    /// Add `w` to the report's warnings (about the input: a file damaged after some frame).
    pub fn warn_input(&mut self, w: String) {
        self.input_warnings
            .push(crate::analyze::warning::Warning::Input(w));
    }

    /// Name the input (file or interface) in the HTML report's title.
    pub fn set_source(&mut self, name: &str) {
        self.source_name = name.to_string();
    }

    /// Also export every RoCE frame, and at the end the report, as Parquet (the analyzer runs
    /// even without a report option, keeping its messages for the `messages` table). Records
    /// must then go through [`Run::record`].
    pub fn export_to(&mut self, mut exporter: Exporter) {
        let r = &self.shape.display.report;
        let analyzer = self.analyzer.take();
        self.analyzer = Some(match analyzer {
            Some(a) if r.messages => a,
            old => {
                let mut a = Analyzer::new(AnalyzeConfig {
                    mtu: r.mtu,
                    max_flows: r.max_flows,
                    keep_messages: true,
                    encap_session: r.encap_session,
                    ..AnalyzeConfig::default()
                });
                // The marks (and --html's recorder) tap the new analyzer.
                if let Some(t) = old.and_then(|mut o| o.take_tap()) {
                    a.set_tap(t);
                }
                a
            }
        });
        // The packets table's analysis columns: the marks of the packet lines when they are
        // marked, else a marks tap of the export's own.
        let state = match (&self.marking, &mut self.analyzer) {
            (Some(m), _) => Some(m.state_handle()),
            (None, Some(a)) => {
                self.export_tapped = true;
                Some(crate::analyze::marks::tap(a))
            }
            (None, None) => None,
        };
        if let Some(s) = state {
            exporter.mark_with(s);
        }
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
        self.shape.display.count.is_some_and(|c| self.frames >= c)
    }

    /// Decode, select and print one record.
    ///
    /// # Errors
    /// Output I/O errors (a closed pipe included).
    pub fn record(&mut self, rec: &Record<'_>) -> io::Result<()> {
        let frame = self.shape.decode(rec);
        let (ts_ns, base_ts_ns) = self.times(rec, &frame);
        if let Some(m) = &self.marking {
            m.begin(rec.number);
        }
        if let Some(e) = &self.export {
            e.begin(rec.number);
        }
        self.account(rec.number, ts_ns, &frame);
        if let Some(e) = &mut self.export {
            let meta = PacketMeta {
                frame: rec.number,
                ts_ns,
                len: rec.len,
                caplen: rec.caplen,
                decoded: &frame,
            };
            // Messages printed with --messages stay in the report; others stream to the export.
            let keep = self.shape.display.report.messages;
            let a = self.analyzer.as_mut().filter(|_| !keep);
            e.frame(&meta, a).map_err(io::Error::other)?;
        }
        if let Some(m) = &mut self.marking {
            let show = (self.shape.print_packets || self.savefile.is_some())
                && selected(&self.shape.display, &frame);
            m.after(rec, ts_ns, base_ts_ns, show);
            return self.release(false);
        }
        if let Some(w) = &mut self.savefile
            && self
                .shape
                .passes(rec, &frame, ts_ns, base_ts_ns, None)
                .is_some()
        {
            w.frame(ts_ns, rec.len, rec.data, None)?;
        }
        if let Some(ctx) = self.shape.shown(rec, &frame, ts_ns, base_ts_ns, None) {
            for p in &mut self.out {
                p.frame(&ctx, &frame)?;
            }
        }
        Ok(())
    }

    /// Write the shown frames to `w` (`read -w FILE`, `capture -Y EXPR -w FILE`), and print
    /// them too when `print` (as `capture` does; `read -w`, as tshark, does not); records must
    /// then go through [`Run::record`].
    pub fn write_shown(&mut self, w: MarkedWriter, print: bool) {
        self.savefile = Some(w);
        self.shape.print_packets &= print;
    }

    /// Print the frames leaving the marks' window (with `all`, every frame in it).
    fn release(&mut self, all: bool) -> io::Result<()> {
        while let Some(h) = self.marking.as_mut().and_then(|m| m.next_out(all)) {
            let rec = h.record();
            let frame = self.shape.decode(&rec);
            let passes = self
                .shape
                .passes(&rec, &frame, h.ts_ns, h.base_ts_ns, Some(&h.marks));
            let Some(ctx) = passes else { continue };
            if let Some(w) = &mut self.savefile {
                w.frame(h.ts_ns, rec.len, rec.data, Some(&h.marks))?;
            }
            if self.shape.print_packets {
                for p in &mut self.out {
                    p.frame_marked(&ctx, &frame, &h.marks)?;
                }
            }
        }
        Ok(())
    }

    /// Count a decoded frame and feed it to the analysis, in capture order.
    pub fn account(&mut self, number: u64, ts_ns: u64, frame: &Frame<'_>) {
        self.frames += 1;
        if frame.roce().is_some() {
            self.roce += 1;
        }
        if let Some(a) = &mut self.analyzer {
            a.push(number, ts_ns, frame);
        }
    }

    /// [`Run::account`] for a frame reduced to what the analysis reads.
    pub fn account_seen(&mut self, number: u64, ts_ns: u64, seen: &Seen<'_>) {
        self.frames += 1;
        if seen.roce.is_some() {
            self.roce += 1;
        }
        if let Some(a) = &mut self.analyzer {
            a.push_seen(number, ts_ns, seen);
        }
    }

    /// Whether the frames feed an analysis (a report was asked for).
    pub fn analyzing(&self) -> bool {
        self.analyzer.is_some()
    }

    /// Count `frames` frames, `roce` of them RoCE, without analysis (see [`Run::analyzing`]).
    pub fn count(&mut self, frames: u64, roce: u64) {
        self.frames += frames;
        self.roce += roce;
    }

    /// The stateless part of the run, for decoding and formatting on other threads.
    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// Whether per-packet output is printed.
    pub fn print_packets(&self) -> bool {
        self.shape.print_packets
    }

    /// Frames still to read before `-c N` is reached (`None` without `-c`).
    pub fn remaining(&self) -> Option<u64> {
        self.shape
            .display
            .count
            .map(|c| c.saturating_sub(self.frames))
    }

    /// Whether records can be decoded and printed on several threads: not with
    /// `--mirror-time`, whose clock follows the frames in order.
    pub fn parallel_ok(&self) -> bool {
        self.clock.is_none() && self.marking.is_none() && self.savefile.is_none()
    }

    /// The frame's time and the run's base time, ns: the capture's, or with `--mirror-time` the
    /// ERSPAN III timestamp's when the frame has one.
    fn times(&mut self, rec: &Record<'_>, frame: &Frame<'_>) -> (u64, u64) {
        let Some(clock) = &mut self.clock else {
            return (rec.ts_ns, rec.base_ts_ns);
        };
        let ts = match frame.encap.erspan3() {
            Some((layer, e)) => clock.time_ns(layer, e, rec.ts_ns),
            None => rec.ts_ns,
        };
        (ts, *self.base_ts.get_or_insert(ts))
    }

    /// Write out the packet lines printed so far (live capture, while idle).
    ///
    /// # Errors
    /// Output I/O errors.
    pub fn flush(&mut self) -> io::Result<()> {
        self.release(true)?;
        self.out.iter_mut().try_for_each(|p| p.flush())
    }

    /// At the end of the input: end the printers on standard output (the packet lines
    /// flushed, the reports asked for printed), then the files asked for (the `-w` file, then
    /// `--html` and the Parquet export). A standard output closed early (`| head -1`) or
    /// failing ends the printing only: the files are still written.
    ///
    /// # Errors
    /// Output I/O errors: standard output's first, else the files' (a file's before a closed
    /// standard output's).
    pub fn finish(&mut self) -> io::Result<()> {
        let released = self.release(true);
        let report = self.analyzer.take().map(|a| self.end_analysis(a));
        let printed = released.and_then(|()| end_each(&mut self.out, report.as_ref()));
        // The files, written once the report is made: `--html`, then the Parquet export's end.
        if let Some(path) = &self.shape.display.report.html {
            let trace = std::mem::take(&mut self.html_trace);
            let html = HtmlReport::new(path, &self.source_name, trace);
            self.files.push(Box::new(html));
        }
        if let Some(e) = self.export.take() {
            self.files.push(Box::new(ParquetReport::new(e)));
        }
        let saved = self.savefile.as_mut().map_or(Ok(()), MarkedWriter::finish);
        let files = saved.and_then(|()| end_each(&mut self.files, report.as_ref()));
        match (printed, files) {
            // A file that could not be written (`-w`, `--html`, the Parquet export) is an error
            // even when the output was closed (which alone ends the run quietly).
            (Err(p), Err(f)) if p.kind() == io::ErrorKind::BrokenPipe => Err(f),
            (p, f) => p.and(f),
        }
    }

    /// The analysis' report, with the input's warnings; the `--html` report's trace taken
    /// back from the analyzer's tap.
    fn end_analysis(&mut self, mut a: Analyzer) -> Report {
        let mut tap = a.take_tap();
        if self.marking.is_some() || self.export_tapped {
            tap = Marking::inner_tap(tap);
        }
        if self.shape.display.report.html.is_some() {
            self.html_trace = Recorder::from_tap(tap);
        }
        let mut report = a.finish();
        report.warnings.append(&mut self.input_warnings);
        report
    }
}

/// Hand `report` (when an analysis ran) to each of `printers` then end it, in order, up to the
/// first that fails.
fn end_each(printers: &mut Printers, report: Option<&Report>) -> io::Result<()> {
    printers.iter_mut().try_for_each(|p| {
        if let Some(r) = report {
            p.report(r)?;
        }
        p.finish()
    })
}

/// The printers on standard output that `d` asks for: the packet printer, then the report's
/// when a report is printed ([`report_printer`]).
fn stdout_printers(d: &OutputPlan) -> Printers {
    let mut out = vec![make_printer(d)];
    if d.report.text_wanted() {
        // Standard output is line-buffered: one write per line otherwise (a report of
        // thousands of flows or gaps took as long to write as the capture to read).
        let w = io::BufWriter::with_capacity(REPORT_BUFFER, io::stdout());
        out.push(report_printer(&d.report, w));
    }
    out
}

/// The printer of the reports `r` asks for, into `out`: text tables (fitted to the terminal
/// unless `--wide`), or JSON (one document for `--summary`, NDJSON lines for `--messages` and
/// `--gaps`).
fn report_printer<'w, W: Write + Send + 'w>(
    r: &ReportPlan,
    out: W,
) -> Box<dyn Printer + Send + 'w> {
    // `-q` alone means the summary.
    let tables = Tables {
        summary: r.summary || !(r.messages || r.gaps),
        messages: r.messages,
        gaps: r.gaps,
    };
    if r.json {
        return Box::new(JsonReport::new(out, tables));
    }
    let width = if r.wide {
        ReportWidth::Full
    } else {
        ReportWidth::Terminal
    };
    Box::new(TextReport::new(out, tables, r.color, width, r.findings))
}

/// Print the reports `r` asks for into `out` (text tables fitted to the terminal unless
/// `--wide`, or JSON).
///
/// # Errors
/// Output I/O errors.
pub fn write_reports<W: Write + Send>(report: &Report, r: &ReportPlan, out: W) -> io::Result<()> {
    let mut p = report_printer(r, out);
    p.report(report)?;
    p.finish()
}

/// Why a run over `shown` found nothing to show, if it did: a capture header without records,
/// or frames none of which is RoCE (when no option narrowed them).
fn nothing_found(run: &Run, d: &OutputPlan, shown: &str) -> Option<String> {
    if run.frames() == 0 && d.filter.is_none() {
        return Some(format!(
            "{shown}: no frames (the file holds a capture header only)"
        ));
    }
    let unfiltered = d.filter.is_none()
        && d.qp.is_none()
        && d.opcodes.is_none()
        && d.display_filter.is_none()
        && !d.all;
    if run.roce_frames() > 0 || !unfiltered {
        return None;
    }
    let frames = crate::output::counted(run.frames(), "frame");
    // With -c N the RoCE traffic may simply come later in the file.
    let hint = if run.remaining() == Some(0) {
        "-c stopped the read there; --all lists every frame"
    } else {
        "RoCEv2 on a UDP port other than 4791? try --roce-port N; --all lists every frame"
    };
    Some(format!("{shown}: no RoCE packets in {frames} ({hint})"))
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
        Err(e) => Err(anyhow::anyhow!(crate::output::write_error(&e))),
    }
}

/// Read records one by one until the end, `-c`, an output problem (returned) or a read error
/// (left in `read_err`).
fn read_sequential(
    src: &mut FileSource,
    run: &mut Run,
    progress: &mut Progress,
    read_err: &mut Option<crate::source::file::FileError>,
) -> Result<Option<Outcome>> {
    if run.done() {
        return Ok(None);
    }
    let walked = walk::walk(src, |rec| {
        progress.frame(rec.caplen);
        match io_outcome(run.record(rec)) {
            Ok(None) if !run.done() => ControlFlow::Continue(()),
            ended => ControlFlow::Break(ended),
        }
    });
    match walked {
        Walked::End => Ok(None),
        Walked::Stopped(ended) => ended,
        Walked::Failed(e) => {
            *read_err = Some(e);
            Ok(None)
        }
    }
}

/// `roce-inspect read --list-fields`: the field registry on standard output.
///
/// # Errors
/// A failed write (a closed pipe ends quietly).
pub fn list_fields() -> Result<Outcome> {
    let mut out = io::BufWriter::new(io::stdout().lock());
    let r = crate::filter::fields::write_list(&mut out);
    Ok(io_outcome(r)?.unwrap_or(Outcome::Ok))
}

/// `roce-inspect read FILE`.
///
/// # Errors
/// One-line errors naming the file: open/format/link-type problems, a bad filter, or a read
/// error in the middle of the file (reported after the frames read before it are printed).
pub fn read_file(
    path: &str,
    d: &OutputPlan,
    threads: usize,
    write: Option<&str>,
) -> Result<Outcome> {
    let shown = walk::shown(path);
    let mut src = walk::open(path, None)?;
    let mut run = Run::new(d, src.linktype());
    run.set_source(shown);
    if let Some(w) = write {
        run.write_shown(MarkedWriter::create(w, src.linktype().0)?, false);
    }
    if let Some(f) = &d.filter {
        src.set_filter(f)?;
        src.count_tag_misses(run.roce_predicate());
    }
    let mut progress = Progress::for_file(path, run.print_packets());
    let mut read_err = None;
    let map = src
        .shared_map()
        .filter(|_| threads > 1 && run.parallel_ok());
    // The threads that read the file also build the report at the end.
    let pool = map.as_ref().and_then(|_| parallel::pool(threads));
    if let (Some(map), Some(pool)) = (&map, &pool) {
        match parallel::read(pool, &mut src, map, &mut run, &mut progress) {
            parallel::Stop::Done => {}
            parallel::Stop::Sequential => {
                read_sequential(&mut src, &mut run, &mut progress, &mut read_err)?;
            }
            parallel::Stop::Output(e) => {
                if let Some(o) = io_outcome(Err(e))? {
                    return Ok(o);
                }
            }
            parallel::Stop::Read(e) => read_err = Some(e),
        }
    } else if let Some(o) = read_sequential(&mut src, &mut run, &mut progress, &mut read_err)? {
        return Ok(o);
    }
    progress.finish();
    src.release_all_walked();
    // Frame numbers in the file, as printed (a filter may have skipped some).
    let where_ = walk::after_frame(shown, src.frames_read());
    if let Some(e) = &read_err {
        // In the report too: a `--summary --json | jq` pipeline sees that it is partial.
        run.warn_input(format!(
            "{where_}: {e}: the report covers the frames before it"
        ));
    }
    // Why nothing was found: a warning of the report when one shows its warnings (the summary,
    // so that `--summary --json | jq` sees it; the HTML report), else a line on stderr (the
    // packet lines, `--gaps` and `--messages` would not say it).
    let nothing = nothing_found(&run, d, shown).filter(|_| read_err.is_none());
    let in_report = run.analyzing() && (d.report.summary_shown() || d.report.html.is_some());
    let nothing = match nothing {
        Some(w) if in_report => {
            run.warn_input(w);
            None
        }
        other => other,
    };
    let finished = match &pool {
        Some(pool) => pool.install(|| run.finish()),
        None => run.finish(),
    };
    if let Some(o) = io_outcome(finished)? {
        return Ok(o);
    }
    if let (Some(m), Some(f)) = (src.tag_miss(), &d.filter)
        && let Some(line) = m.message(f)
    {
        eprintln!("{line}");
    }
    if let Some(e) = read_err {
        return Err(anyhow::Error::new(e).context(where_));
    }
    if let Some(line) = nothing {
        // Else nothing says why nothing is listed, as if the tool had not run.
        eprintln!("roce-inspect: {line}");
    }
    Ok(Outcome::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A printer that logs its calls as `name.call` and fails the call named in `fail`.
    struct Logged {
        name: &'static str,
        fail: Option<&'static str>,
        log: Arc<Mutex<Vec<String>>>,
    }

    impl Logged {
        fn call(&mut self, what: &str) -> io::Result<()> {
            self.log
                .lock()
                .unwrap()
                .push(format!("{}.{what}", self.name));
            match self.fail {
                Some(f) if f == what => Err(io::Error::from(io::ErrorKind::BrokenPipe)),
                _ => Ok(()),
            }
        }
    }

    impl Printer for Logged {
        fn frame(&mut self, _: &FrameCtx, _: &Frame<'_>) -> io::Result<()> {
            self.call("frame")
        }
        fn report(&mut self, _: &Report) -> io::Result<()> {
            self.call("report")
        }
        fn flush(&mut self) -> io::Result<()> {
            self.call("flush")
        }
    }

    fn printers(fail: [Option<&'static str>; 3], log: &Arc<Mutex<Vec<String>>>) -> Printers {
        ["a", "b", "c"]
            .into_iter()
            .zip(fail)
            .map(|(name, fail)| {
                let log = Arc::clone(log);
                Box::new(Logged { name, fail, log }) as Box<dyn Printer + Send>
            })
            .collect()
    }

    #[test]
    fn each_printer_gets_the_report_then_finishes_in_order() {
        let log = Arc::default();
        let mut ps = printers([None; 3], &log);
        let report = Analyzer::new(AnalyzeConfig::default()).finish();
        end_each(&mut ps, Some(&report)).unwrap();
        // `finish` defaults to `flush`.
        let want = [
            "a.report", "a.flush", "b.report", "b.flush", "c.report", "c.flush",
        ];
        assert_eq!(*log.lock().unwrap(), want);
    }

    #[test]
    fn without_a_report_only_finish_and_the_first_failure_stops() {
        let log = Arc::default();
        let mut ps = printers([None, Some("flush"), None], &log);
        let e = end_each(&mut ps, None).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::BrokenPipe);
        assert_eq!(*log.lock().unwrap(), ["a.flush", "b.flush"]);
    }
}
