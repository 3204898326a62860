//! The reports of the commands that read several captures of one job together (`correlate`,
//! `nccl`; their analyses in `crate::correlate` and `crate::nccl`) written out: tables or one
//! JSON document on standard output, and `nccl`'s HTML timeline.

use std::io::{self, Write};

use anyhow::{Result, anyhow};
use serde::Serialize;

use super::{Outcome, REPORT_BUFFER, io_outcome};
use crate::{correlate, nccl};

/// Print `report` on standard output: one JSON document when `json`, else the tables, coloured
/// when `color` and fitted to `width` columns (`None`: every column, however wide).
///
/// # Errors
/// Output I/O errors (a closed pipe ends quietly: [`Outcome::ClosedPipe`]).
pub fn print_correlate(
    report: &correlate::Report,
    json: bool,
    color: bool,
    width: Option<u16>,
) -> Result<Outcome> {
    print(|out| {
        if json {
            json_document(report, out)
        } else {
            crate::output::correlate::write_fit(report, out, color, width)
        }
    })
}

/// Print `report` on standard output: one JSON document when `json`, else the tables.
///
/// # Errors
/// Output I/O errors (a closed pipe ends quietly: [`Outcome::ClosedPipe`]).
pub fn print_nccl(report: &nccl::Report, json: bool) -> Result<Outcome> {
    print(|out| {
        if json {
            json_document(report, out)
        } else {
            nccl::text::write(report, out)
        }
    })
}

/// Write `report` as a self-contained HTML page (connections, a timeline of every step) to
/// the file `path`.
///
/// # Errors
/// The file cannot be created or written (one line naming it).
pub fn write_nccl_html(report: &nccl::Report, path: &str) -> Result<()> {
    let write = || -> io::Result<()> {
        let mut f = io::BufWriter::new(std::fs::File::create(path)?);
        nccl::timeline::write(report, &mut f)?;
        f.flush()
    };
    write().map_err(|e| anyhow!("{path}: {}", crate::output::write_error(&e)))
}

/// Standard output, buffered.
type Stdout = io::BufWriter<io::StdoutLock<'static>>;

/// Standard output, buffered ([`REPORT_BUFFER`] bytes), written by `write` then flushed.
fn print(write: impl FnOnce(&mut Stdout) -> io::Result<()>) -> Result<Outcome> {
    let mut out = io::BufWriter::with_capacity(REPORT_BUFFER, io::stdout().lock());
    let r = write(&mut out).and_then(|()| out.flush());
    Ok(io_outcome(r)?.unwrap_or(Outcome::Ok))
}

/// `value` as one JSON document and a newline.
fn json_document(value: &impl Serialize, out: &mut impl Write) -> io::Result<()> {
    serde_json::to_writer(&mut *out, value)
        .map_err(io::Error::from)
        .and_then(|()| out.write_all(b"\n"))
}
