//! The printers of the end-of-run report, behind the one [`Printer`] interface of the packet
//! printers: the text tables and the JSON document or lines on standard output, the `--html`
//! file and the Parquet export's end. They print no frames; the pipeline hands the finished
//! report to each printer the run asked for ([`Printer::report`]), then ends it
//! ([`Printer::finish`]).

use std::io::{self, Write};

use crate::analyze::Report;
use crate::decode::Frame;
use crate::output::findings::FindingsShown;
use crate::output::parquet::Exporter;
use crate::output::plot::Trace;
use crate::output::summary::{write_gaps_fit, write_messages_fit, write_summary_fit};
use crate::output::{FrameCtx, Printer};

/// Which report tables are printed: `--summary` (or `-q` alone), `--messages`, `--gaps`.
#[derive(Clone, Copy, Debug)]
pub struct Tables {
    /// The summary (findings, flows, congestion, warnings).
    pub summary: bool,
    /// The reassembled messages.
    pub messages: bool,
    /// The PSN gaps.
    pub gaps: bool,
}

/// How wide the text report's tables are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportWidth {
    /// Full width: each column as wide as its widest cell (`--wide`, or not a terminal).
    Full,
    /// The width of the terminal standard output is on, read when the report prints (it may be
    /// resized during a capture); full width when it is not a terminal.
    Terminal,
}

/// The report as text tables, fitted as [`ReportWidth`] says.
pub struct TextReport<W> {
    out: W,
    tables: Tables,
    color: bool,
    width: ReportWidth,
    findings: FindingsShown,
}

impl<W: Write> TextReport<W> {
    /// Text tables into `out`: those of `tables`, coloured when `color`, `width` wide, the
    /// findings section as `findings` says.
    pub fn new(
        out: W,
        tables: Tables,
        color: bool,
        width: ReportWidth,
        findings: FindingsShown,
    ) -> Self {
        TextReport {
            out,
            tables,
            color,
            width,
            findings,
        }
    }
}

impl<W: Write> Printer for TextReport<W> {
    /// Frames are not part of the report: nothing.
    fn frame(&mut self, _: &FrameCtx, _: &Frame<'_>) -> io::Result<()> {
        Ok(())
    }

    fn report(&mut self, report: &Report) -> io::Result<()> {
        let width = match self.width {
            ReportWidth::Terminal => crate::output::fit::terminal_width(),
            ReportWidth::Full => None,
        };
        let (t, color) = (self.tables, self.color);
        let findings = self.findings;
        // On a terminal, the lines between the tables are broken to its width too.
        crate::output::wrap::fitted(&mut self.out, width, |out| {
            if t.summary {
                crate::output::findings::write_findings(report, out, color, findings)?;
                write_summary_fit(report, out, color, width)?;
            }
            if t.messages {
                write_messages_fit(report, out, color, width)?;
            }
            if t.gaps {
                write_gaps_fit(report, out, color, width)?;
            }
            Ok(())
        })?;
        self.out.flush()
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// The report as JSON: one document for the summary (it holds the gaps and, when kept, the
/// messages), else NDJSON lines, one per message (`--messages`) and per gap (`--gaps`).
pub struct JsonReport<W> {
    out: W,
    tables: Tables,
}

impl<W: Write> JsonReport<W> {
    /// JSON into `out`, of the reports of `tables`.
    pub fn new(out: W, tables: Tables) -> Self {
        JsonReport { out, tables }
    }

    fn line(&mut self, v: &impl serde::Serialize) -> io::Result<()> {
        serde_json::to_writer(&mut self.out, v).map_err(io::Error::from)?;
        self.out.write_all(b"\n")
    }
}

impl<W: Write> Printer for JsonReport<W> {
    /// Frames are not part of the report: nothing.
    fn frame(&mut self, _: &FrameCtx, _: &Frame<'_>) -> io::Result<()> {
        Ok(())
    }

    fn report(&mut self, report: &Report) -> io::Result<()> {
        if self.tables.summary {
            self.line(report)?;
        } else {
            if self.tables.messages {
                for m in report.messages.iter().flatten() {
                    self.line(m)?;
                }
            }
            if self.tables.gaps {
                for g in &report.gaps {
                    self.line(g)?;
                }
            }
        }
        self.out.flush()
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// The `--html` report: one self-contained file at `path`, titled after the capture, its plots
/// drawn from the analyzer's recorder.
pub struct HtmlReport {
    path: String,
    name: String,
    trace: Trace,
}

impl HtmlReport {
    /// The HTML report of capture `name` to `path`, with the plots drawn from `trace`.
    pub fn new(path: &str, name: &str, trace: Trace) -> Self {
        HtmlReport {
            path: path.to_string(),
            name: name.to_string(),
            trace,
        }
    }
}

impl Printer for HtmlReport {
    /// Frames are not part of the report: nothing.
    fn frame(&mut self, _: &FrameCtx, _: &Frame<'_>) -> io::Result<()> {
        Ok(())
    }

    fn report(&mut self, report: &Report) -> io::Result<()> {
        let path = &self.path;
        let html = crate::output::html::render(report, &self.trace, &self.name)
            .map_err(|e| io::Error::other(format!("{path}: {e:#}")))?;
        std::fs::write(path, html).map_err(|e| io::Error::new(e.kind(), format!("{path}: {e}")))
    }

    /// The file is written whole by [`Printer::report`]: nothing.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The end of a Parquet export: the packet and message tables finished, the report tables
/// written ([`Exporter::finish`]). Written once; a second report writes nothing.
pub struct ParquetReport(Option<Exporter>);

impl ParquetReport {
    /// The end of `exporter`'s export.
    pub fn new(exporter: Exporter) -> Self {
        ParquetReport(Some(exporter))
    }
}

impl Printer for ParquetReport {
    /// The frames are exported as they are read, through the [`Exporter`] (which also takes
    /// the finished messages from the analyzer): nothing here.
    fn frame(&mut self, _: &FrameCtx, _: &Frame<'_>) -> io::Result<()> {
        Ok(())
    }

    fn report(&mut self, report: &Report) -> io::Result<()> {
        match self.0.take() {
            Some(e) => e.finish(report).map(drop).map_err(io::Error::other),
            None => Ok(()),
        }
    }

    /// The files are written by [`Printer::report`]: nothing.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
