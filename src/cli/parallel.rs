//! `read --threads N` on a mapped capture file, a window of records at a time: while the
//! records of one window are decoded and formatted into packet lines in batches on a pool of N
//! threads (`rayon`), the records of the next window are located in the mapping, and the lines
//! of the previous one are written in capture order — after feeding the analysis, in order,
//! with its frames — so the output is byte for byte that of `--threads 1`.
//!
//! The analysis stays on one thread (its state follows the capture), decoding the frames it
//! needs itself: handing decoded frames across threads costs more than decoding them again.
//! Without packet lines to print (`-q`), the sequential reader is used.

use std::io::{self, Write};

use rayon::prelude::*;

use super::pipeline::{Run, Shape};
use super::progress::Progress;
use crate::decode::Frame;
use crate::source::file::{FileError, MappedRecord};
use crate::source::{FileSource, Record};

/// Records per batch handed to one thread.
const BATCH: usize = 2048;

/// Most captured bytes in one window (see `mapped::BATCH_LAG`, which keeps three windows
/// mapped).
const WINDOW_BYTES: usize = 8 << 20;

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

/// One batch, formatted: its packet lines and how many of its frames are RoCE.
struct Done {
    text: Vec<u8>,
    roce: u64,
}

/// Read the mapped part of `src` with `threads` threads. `map` is `src`'s mapping.
pub fn read(
    src: &mut FileSource,
    map: &[u8],
    run: &mut Run,
    progress: &mut Progress,
    threads: usize,
) -> Stop {
    if !run.print_packets() {
        return Stop::Sequential;
    }
    let pool = match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
        Ok(p) => p,
        Err(_) => return Stop::Sequential,
    };
    let shape = run.shape().clone();
    let window = threads * 4 * BATCH;
    // Buffers go round: located records and formatted lines are reused window after window,
    // so the memory is not handed back to the system and faulted in again each time.
    let mut spare_recs: Vec<Vec<MappedRecord>> = Vec::new();
    let mut spare_text: Vec<Vec<u8>> = Vec::new();
    // Frames still allowed by `-c`, counting those located but not yet accounted.
    let mut left = run.remaining();
    let mut pending: (Vec<MappedRecord>, Vec<Done>) = (Vec::new(), Vec::new());
    let mut next = locate(src, &mut left, window, Vec::new());
    loop {
        let (located, more) = match next {
            Ok(n) => n,
            Err(e) => return finish(run, map, progress, pending, Stop::Read(e)),
        };
        let batches = located.len().div_ceil(BATCH);
        spare_text.resize_with(spare_text.len().max(batches), Vec::new);
        let bufs: Vec<Vec<u8>> = spare_text.drain(..batches).collect();
        let last = !more || left == Some(0);
        let spare = spare_recs.pop().unwrap_or_default();
        // The previous window written, this one formatted, the next one located: at once.
        let (written, (formatted, walked)) = pool.install(|| {
            rayon::join(
                || emit(run, map, progress, std::mem::take(&mut pending)),
                || {
                    rayon::join(
                        || format_window(&shape, map, &located, bufs),
                        || (!last).then(|| locate(src, &mut left, window, spare)),
                    )
                },
            )
        });
        match written {
            Ok((recs, texts)) => {
                spare_recs.push(recs);
                spare_text.extend(texts);
            }
            Err(e) => return Stop::Output(e),
        }
        pending = (located, formatted);
        match walked {
            Some(w) => next = w,
            None => {
                // Still mapped: the end of the file (or `-c`); else libpcap has the rest.
                let stop = if left == Some(0) || src.shared_map().is_some() {
                    Stop::Done
                } else {
                    Stop::Sequential
                };
                return finish(run, map, progress, pending, stop);
            }
        }
    }
}

/// Locate the next window of records in `src` (at most `window` records and about
/// [`WINDOW_BYTES`] bytes, and no more than `left` allows), into `recs` (a spare buffer): the
/// records and whether the mapping may hold more.
fn locate(
    src: &mut FileSource,
    left: &mut Option<u64>,
    window: usize,
    mut recs: Vec<MappedRecord>,
) -> Result<(Vec<MappedRecord>, bool), FileError> {
    let room = left.map_or(window, |l| l.min(window as u64) as usize);
    recs.clear();
    let more = src.next_mapped_batch(room, WINDOW_BYTES, &mut recs)?;
    *left = left.map(|l| l - recs.len() as u64);
    Ok((recs, more))
}

/// Decode and format the located records, in batches on the pool, into `bufs` (one per batch).
fn format_window(
    shape: &Shape,
    map: &[u8],
    located: &[MappedRecord],
    bufs: Vec<Vec<u8>>,
) -> Vec<Done> {
    located
        .par_chunks(BATCH)
        .zip(bufs)
        .map(|(chunk, mut text)| {
            text.clear();
            let recs: Vec<Record<'_>> = chunk.iter().map(|r| r.record(map)).collect();
            let frames: Vec<Frame<'_>> = recs.iter().map(|r| shape.decode(r)).collect();
            shape.format_into(&recs, &frames, &mut text);
            let roce = frames.iter().filter(|f| f.roce().is_some()).count() as u64;
            Done { text, roce }
        })
        .collect()
}

/// The buffers of a window, given back for reuse.
type Spare = (Vec<MappedRecord>, Vec<Vec<u8>>);

/// Account and analyse a window's records in order, then write its lines; the buffers come
/// back for the next window.
fn emit(
    run: &mut Run,
    map: &[u8],
    progress: &mut Progress,
    (recs, done): (Vec<MappedRecord>, Vec<Done>),
) -> io::Result<Spare> {
    if run.analyzing() {
        for r in &recs {
            let rec = r.record(map);
            progress.frame(rec.caplen);
            let frame = run.shape().decode(&rec);
            run.account(rec.number, rec.ts_ns, &frame);
        }
    } else {
        for r in &recs {
            progress.frame(r.caplen);
        }
        run.count(recs.len() as u64, done.iter().map(|d| d.roce).sum());
    }
    let mut out = io::stdout().lock();
    let mut texts = Vec::with_capacity(done.len());
    for d in done {
        out.write_all(&d.text)?;
        texts.push(d.text);
    }
    out.flush()?;
    Ok((recs, texts))
}

/// Emit what is still pending, then stop with `stop`.
fn finish(
    run: &mut Run,
    map: &[u8],
    progress: &mut Progress,
    pending: (Vec<MappedRecord>, Vec<Done>),
    stop: Stop,
) -> Stop {
    match emit(run, map, progress, pending) {
        Ok(_) => stop,
        Err(e) => Stop::Output(e),
    }
}
