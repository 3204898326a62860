//! Printers: one per output format behind the [`Printer`] trait, for the packet lines and the
//! end-of-run reports alike. The CLI picks them; the decoder and analysis know nothing about
//! formats.

mod arrange;
mod cell;
pub mod correlate;
pub mod fields;
pub mod findings;
pub mod fit;
pub mod html;
pub mod json;
pub mod line;
pub mod marks;
pub mod parquet;
pub mod plot;
pub mod reports;
pub mod savefile;
pub mod stack;
pub mod style;
pub mod summary;
pub mod text;
pub mod verbose;
pub mod warning;
pub mod wrap;

use std::io;

use crate::analyze::Report;
use crate::decode::Frame;

/// An I/O error as one line for a person: its description without Rust's ` (os error N)`
/// suffix ("No such file or directory", "No space left on device").
pub fn io_text(e: &io::Error) -> String {
    let s = e.to_string();
    match s.rfind(" (os error ") {
        Some(i) if s.ends_with(')') => s[..i].to_string(),
        _ => s,
    }
}

/// The one line for a failed write to standard output ("writing output: No space left on
/// device").
pub fn write_error(e: &io::Error) -> String {
    format!("writing output: {}", io_text(e))
}

/// Seconds from `base_ns` to `ts_ns` (both ns since the epoch), negative when `ts_ns` is
/// earlier (a capture clock that stepped back), as tshark's `frame.time_relative`.
pub fn rel_secs(ts_ns: u64, base_ns: u64) -> f64 {
    ts_ns.wrapping_sub(base_ns) as i64 as f64 / 1e9
}

/// `n` and the English `noun`, plural unless `n` is 1 ("1 frame", "3 frames"); for nouns whose
/// plural adds an `s`.
pub fn counted(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// Per-frame facts from the source, shared by all printers (defined in `source`, where the
/// display filter reads it too without depending on the printers).
pub use crate::source::FrameCtx;

/// One printer of the run's output, packet lines and reports alike: the packet printers (text,
/// JSON, `-T fields`) print each shown frame, the report printers
/// ([`reports`]: text tables, JSON, the `--html` file, the end of the Parquet export) print the
/// finished report. The pipeline calls [`Printer::frame`] (or [`Printer::frame_marked`]) for
/// every shown frame, [`Printer::flush`] on a live capture while idle, and at the end of the
/// input [`Printer::report`] (when an analysis ran) then [`Printer::finish`], on each printer
/// in turn.
pub trait Printer {
    /// Print one frame. Called only for frames selected for display; a report printer
    /// prints nothing.
    ///
    /// # Errors
    /// The writer's I/O error (a closed pipe included).
    fn frame(&mut self, ctx: &FrameCtx, frame: &Frame<'_>) -> io::Result<()>;

    /// Print one frame with its analysis marks (`read --marks`, `-Y analysis.*`); printers
    /// that do not show marks print the frame alone.
    ///
    /// # Errors
    /// The writer's I/O error (a closed pipe included).
    fn frame_marked(
        &mut self,
        ctx: &FrameCtx,
        frame: &Frame<'_>,
        marks: &crate::analyze::marks::Marks,
    ) -> io::Result<()> {
        let _ = marks;
        self.frame(ctx, frame)
    }

    /// Print or write the finished analysis report, at the end of the input; a packet printer
    /// prints nothing (the default).
    ///
    /// # Errors
    /// The output's I/O error (a closed pipe included), or a file that could not be written
    /// (as an I/O error naming it).
    fn report(&mut self, report: &Report) -> io::Result<()> {
        let _ = report;
        Ok(())
    }

    /// Flush buffered output (called per packet on live captures, and at the end).
    ///
    /// # Errors
    /// The writer's I/O error.
    fn flush(&mut self) -> io::Result<()>;

    /// End the output, after the last frame and the report: flush what is buffered (the
    /// default).
    ///
    /// # Errors
    /// The writer's I/O error.
    fn finish(&mut self) -> io::Result<()> {
        self.flush()
    }
}

#[cfg(test)]
mod io_text_tests {
    use super::io_text;
    use std::io;

    #[test]
    fn counted_nouns() {
        assert_eq!(super::counted(1, "frame"), "1 frame");
        assert_eq!(super::counted(0, "gap"), "0 gaps");
        assert_eq!(super::counted(2, "connection"), "2 connections");
    }

    #[test]
    fn os_error_suffix_is_dropped() {
        let e = io::Error::from_raw_os_error(2);
        assert!(e.to_string().ends_with("(os error 2)"), "{e}");
        assert_eq!(io_text(&e), "No such file or directory");
        assert_eq!(io_text(&io::Error::other("spill closed")), "spill closed");
    }
}
