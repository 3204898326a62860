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
        let bar = show.then(|| {
            let b = ProgressBar::with_draw_target(Some(size), ProgressDrawTarget::stderr());
            b.set_style(
                ProgressStyle::with_template(
                    "{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b.enable_steady_tick(Duration::from_millis(200));
            b
        });
        Progress {
            bar,
            bytes: 0,
            frames: 0,
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
