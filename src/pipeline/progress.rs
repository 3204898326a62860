//! Progress on stderr (indicatif) while reading a large capture file.
//!
//! Shown only when the file is larger than [`MIN_BYTES`], stderr is a terminal, and stdout is
//! not (packet lines on the same terminal would tear the bar) or carries no packet lines (`-q`).
//! Never written to stdout, so `--json` output stays clean.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Files smaller than this (bytes) read fast enough to need no progress bar.
pub const MIN_BYTES: u64 = 50 * 1024 * 1024;

/// Bytes of libpcap record header per frame, used to estimate the file position.
const RECORD_HEADER: u64 = 16;

/// Frames between bar updates, to keep the per-frame cost to an add and a compare.
const UPDATE_EVERY: u64 = 16_384;

/// A progress bar, or nothing.
pub struct Progress {
    bar: Option<ProgressBar>,
    bytes: u64,
    frames: u64,
    /// Bytes of the files already read (several files share one bar).
    done_bytes: u64,
}

impl Progress {
    /// A bar for reading `path` when the conditions above hold; `packets_on_stdout` says
    /// whether packet lines go to stdout.
    pub fn for_file(path: &str, packets_on_stdout: bool) -> Progress {
        let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        let show = path != "-"
            && size > MIN_BYTES
            && std::io::stderr().is_terminal()
            && !(packets_on_stdout && std::io::stdout().is_terminal());
        Progress::bar(
            show.then_some(size),
            "{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
        )
    }

    /// One bar over several files read one after another (`export`), shown when stderr is a
    /// terminal and the files together are larger than [`MIN_BYTES`]; its message names the
    /// file being read ([`Progress::next_file`]).
    pub fn for_files(paths: &[String]) -> Progress {
        let size: u64 = paths
            .iter()
            .map(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0))
            .sum();
        let show = size > MIN_BYTES && std::io::stderr().is_terminal();
        Progress::bar(
            show.then_some(size),
            "{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta} {msg}",
        )
    }

    fn bar(size: Option<u64>, template: &str) -> Progress {
        let bar = size.map(|size| {
            let b = ProgressBar::with_draw_target(Some(size), ProgressDrawTarget::stderr());
            b.set_style(
                ProgressStyle::with_template(template)
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b.enable_steady_tick(Duration::from_millis(200));
            b
        });
        Progress {
            bar,
            bytes: 0,
            frames: 0,
            done_bytes: 0,
        }
    }

    /// Start reading the next file (`name` shown beside the bar); the previous one, if any, is
    /// counted as read whole.
    pub fn next_file(&mut self, path: &str, name: &str) {
        if let Some(b) = &self.bar {
            self.bytes = self.done_bytes;
            self.done_bytes += std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
            b.set_position(self.bytes);
            b.set_message(name.to_string());
        }
    }

    /// Print a line on stderr without tearing the bar.
    pub fn eprintln(&self, line: &str) {
        match &self.bar {
            Some(b) => b.suspend(|| eprintln!("{line}")),
            None => eprintln!("{line}"),
        }
    }

    /// Print a line on stdout without tearing the bar.
    ///
    /// # Errors
    /// The write error (a closed pipe included).
    pub fn println(&self, line: &str) -> std::io::Result<()> {
        use std::io::Write;
        let out = || writeln!(std::io::stdout(), "{line}");
        match &self.bar {
            Some(b) => b.suspend(out),
            None => out(),
        }
    }

    /// Count one frame of `caplen` bytes.
    #[inline]
    pub fn frame(&mut self, caplen: u32) {
        if let Some(b) = &self.bar {
            self.bytes += caplen as u64 + RECORD_HEADER;
            self.frames += 1;
            if self.frames % UPDATE_EVERY == 0 {
                b.set_position(self.bytes);
            }
        }
    }

    /// Remove the bar.
    pub fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}
