//! `read --threads N` on a mapped capture file: records are located by the main thread, decoded
//! and formatted in batches on a pool of N threads (`rayon`), and written and analysed in
//! capture order by the main thread — while the pool already decodes the next window — so the
//! output is byte for byte that of `--threads 1`.
//!
//! The analysis itself stays in order on one thread (its state follows the capture); what runs
//! in parallel is the decoding of every frame and the formatting of the packet lines.

use std::io::{self, Write};

use rayon::prelude::*;

use super::pipeline::{Run, Shape};
use super::progress::Progress;
use crate::decode::Frame;
use crate::source::file::{FileError, MappedRecord};
use crate::source::{FileSource, Record};

/// Records per batch handed to one thread.
const BATCH: usize = 2048;

/// Why the parallel loop stopped.
pub enum Stop {
    /// The end of the file, or `-c N` reached.
    Done,
    /// The rest of the file is read by libpcap (an anomaly); continue sequentially.
    Sequential,
    /// The output was closed or failed.
    Output(io::Error),
    /// Reading failed after libpcap took over.
    Read(FileError),
}

/// One batch, decoded: its records, frames and formatted packet lines.
struct Done<'m> {
    recs: Vec<Record<'m>>,
    frames: Vec<Frame<'m>>,
    text: Vec<u8>,
}

/// Read the mapped part of `src` with `threads` threads. `map` is `src`'s mapping.
pub fn read(
    src: &mut FileSource,
    map: &[u8],
    run: &mut Run,
    progress: &mut Progress,
    threads: usize,
) -> Stop {
    let pool = match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
        Ok(p) => p,
        Err(_) => return Stop::Sequential,
    };
    let shape = run.shape().clone();
    let window = threads * 4 * BATCH;
    // Frames still allowed by `-c`, counting those located but not yet accounted.
    let mut left = run.remaining();
    let mut pending: Vec<Done<'_>> = Vec::new();
    loop {
        let room = left.map_or(window, |l| l.min(window as u64) as usize);
        let mut located = Vec::with_capacity(room);
        let more = match src.next_mapped_batch(room, &mut located) {
            Ok(m) => m,
            Err(e) => return finish(run, progress, pending, Stop::Read(e)),
        };
        left = left.map(|l| l - located.len() as u64);
        let (written, decoded) = pool.install(|| {
            rayon::join(
                || emit(run, progress, std::mem::take(&mut pending)),
                || decode_window(&shape, map, &located),
            )
        });
        if let Err(e) = written {
            return Stop::Output(e);
        }
        pending = decoded;
        if !more || left == Some(0) {
            // Still mapped: the end of the file (or `-c`); else libpcap has the rest.
            let stop = if left == Some(0) || src.shared_map().is_some() {
                Stop::Done
            } else {
                Stop::Sequential
            };
            return finish(run, progress, pending, stop);
        }
    }
}

/// Decode and format the located records, in batches on the pool.
fn decode_window<'m>(shape: &Shape, map: &'m [u8], located: &[MappedRecord]) -> Vec<Done<'m>> {
    located
        .par_chunks(BATCH)
        .map(|chunk| {
            let recs: Vec<Record<'m>> = chunk.iter().map(|r| r.record(map)).collect();
            let frames: Vec<Frame<'m>> = recs.iter().map(|r| shape.decode(r)).collect();
            let mut text = Vec::new();
            if shape.print_packets() {
                shape.format_into(&recs, &frames, &mut text);
            }
            Done { recs, frames, text }
        })
        .collect()
}

/// Write and analyse decoded batches in order.
fn emit(run: &mut Run, progress: &mut Progress, done: Vec<Done<'_>>) -> io::Result<()> {
    if done.is_empty() {
        return Ok(());
    }
    let mut out = io::stdout().lock();
    for d in done {
        for (rec, frame) in d.recs.iter().zip(&d.frames) {
            progress.frame(rec.caplen);
            run.account(rec.number, rec.ts_ns, frame);
        }
        out.write_all(&d.text)?;
    }
    out.flush()
}

/// Emit what is still pending, then stop with `stop`.
fn finish(run: &mut Run, progress: &mut Progress, pending: Vec<Done<'_>>, stop: Stop) -> Stop {
    match emit(run, progress, pending) {
        Ok(()) => stop,
        Err(e) => Stop::Output(e),
    }
}
