//! `read --threads N` on a mapped capture file, a window of records at a time: while the
//! records of one window are decoded and formatted into packet lines in batches on a pool of N
//! threads (`rayon`), the records of the next window are located in the mapping, and the lines
//! of the previous one are written in capture order — after feeding the analysis, in order,
//! with its frames — so the output is byte for byte that of `--threads 1`.
//!
//! The analysis stays on one thread (its state follows the capture) and takes the frames decoded
//! by the pool, in order, reduced to what it reads ([`Seen`]). Without packet lines to print (`-q`, `--summary`), the pool only
//! decodes: decoding (with the ICRC check) and the analysis then run at once.

use std::io::{self, Write};

use rayon::prelude::*;

use super::pipeline::{Run, Shape};
use super::progress::Progress;
use crate::analyze::Seen;
use crate::source::file::{FileError, MappedRecord};
use crate::source::{FileSource, Record};

/// Records per batch handed to one thread.
const BATCH: usize = 2048;

/// Records per batch when the decoded frames (as [`Seen`], 384 bytes each) feed the analysis:
/// small batches keep them in the caches between the thread that decodes them and the one that
/// analyses them, and few of them in memory (`read -q` on the 1M-packet benchmark trace: 0.21 s
/// with 2048, 0.15 s with 256, 0.21 s on one thread; peak RSS 41 → 14 MB).
const QUIET_BATCH: usize = 256;

/// Frames decoded at a time into a thread's scratch buffer when they are not printed.
const SCRATCH: usize = 32;

/// Batches per thread in one window.
const PER_THREAD: usize = 4;

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

/// One batch, decoded and formatted: its packet lines, how many of its frames are RoCE, and what
/// the analysis reads of each frame when they feed it (else empty).
struct Done<'m> {
    text: Vec<u8>,
    roce: u64,
    seen: Vec<Seen<'m>>,
}

/// The buffers of one batch, reused window after window so that their memory is not handed back
/// to the system and faulted in again each time.
struct Bufs<'m> {
    text: Vec<u8>,
    seen: Vec<Seen<'m>>,
}

/// Read the mapped part of `src` with `threads` threads. `map` is `src`'s mapping.
pub fn read<'m>(
    src: &mut FileSource,
    map: &'m [u8],
    run: &mut Run,
    progress: &mut Progress,
    threads: usize,
) -> Stop {
    let pool = match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
        Ok(p) => p,
        Err(_) => return Stop::Sequential,
    };
    let shape = run.shape().clone();
    let keep_frames = run.analyzing();
    let batch = if keep_frames { QUIET_BATCH } else { BATCH };
    let window = threads * if keep_frames { 2 } else { PER_THREAD } * batch;
    // Buffers go round (located records, batches' lines and frames).
    let mut spare_recs: Vec<Vec<MappedRecord>> = Vec::new();
    let mut spare_bufs: Vec<Bufs<'m>> = Vec::new();
    // Frames still allowed by `-c`, counting those located but not yet accounted.
    let mut left = run.remaining();
    let mut pending: (Vec<MappedRecord>, Vec<Done<'m>>) = (Vec::new(), Vec::new());
    let mut next = locate(src, &mut left, window, Vec::new());
    loop {
        let (located, more) = match next {
            Ok(n) => n,
            Err(e) => return finish(run, progress, pending, Stop::Read(e)),
        };
        let batches = located.len().div_ceil(batch);
        spare_bufs.resize_with(spare_bufs.len().max(batches), || Bufs {
            text: Vec::new(),
            seen: Vec::new(),
        });
        let bufs: Vec<Bufs<'m>> = spare_bufs.drain(..batches).collect();
        let last = !more || left == Some(0);
        let spare = spare_recs.pop().unwrap_or_default();
        // At once: this window decoded and formatted and the next one located on the pool, the
        // previous one analysed and written here (the analysis keeps to one thread, its state
        // in that core's caches and its memory in one malloc arena).
        let (mut formatted, mut walked) = (Vec::new(), None);
        let written = pool.in_place_scope(|s| {
            s.spawn(|_| {
                (formatted, walked) = rayon::join(
                    || format_window(&shape, map, &located, bufs, batch, keep_frames),
                    || (!last).then(|| locate(src, &mut left, window, spare)),
                );
            });
            emit(run, progress, std::mem::take(&mut pending))
        });
        match written {
            Ok((recs, bufs)) => {
                spare_recs.push(recs);
                spare_bufs.extend(bufs);
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
                return finish(run, progress, pending, stop);
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

/// Decode and format the located records, in batches on the pool, into `bufs` (one per batch);
/// the decoded frames are kept when `keep_frames` (for the analysis).
fn format_window<'m>(
    shape: &Shape,
    map: &'m [u8],
    located: &[MappedRecord],
    bufs: Vec<Bufs<'m>>,
    batch: usize,
    keep_frames: bool,
) -> Vec<Done<'m>> {
    let print = shape.print_packets();
    located
        .par_chunks(batch)
        .zip(bufs)
        // Frames to print are decoded into a scratch buffer of the thread's.
        .map_init(Vec::new, |decoded, (chunk, Bufs { mut text, mut seen })| {
            text.clear();
            seen.clear();
            let mut roce = 0;
            if print {
                decoded.clear();
                let recs: Vec<Record<'m>> = chunk.iter().map(|r| r.record(map)).collect();
                decoded.extend(recs.iter().map(|r| shape.decode(r)));
                shape.format_into(&recs, decoded, &mut text);
                for f in decoded.iter() {
                    roce += u64::from(f.roce().is_some());
                    if keep_frames {
                        seen.push(Seen::of(f));
                    }
                }
            } else {
                // A few frames at a time: the scratch buffer stays small.
                for part in chunk.chunks(SCRATCH) {
                    decoded.clear();
                    decoded.extend(part.iter().map(|r| shape.decode(&r.record(map))));
                    for f in decoded.iter() {
                        roce += u64::from(f.roce().is_some());
                        if keep_frames {
                            seen.push(Seen::of(f));
                        }
                    }
                }
            }
            Done { text, roce, seen }
        })
        .collect()
}

/// Account and analyse a window's frames in order, then write its lines; the buffers come
/// back for the next window.
fn emit<'m>(
    run: &mut Run,
    progress: &mut Progress,
    (recs, done): (Vec<MappedRecord>, Vec<Done<'m>>),
) -> io::Result<(Vec<MappedRecord>, Vec<Bufs<'m>>)> {
    if run.analyzing() {
        let seen = done.iter().flat_map(|d| &d.seen);
        for (r, s) in recs.iter().zip(seen) {
            progress.frame(r.caplen);
            run.account_seen(r.number, r.ts_ns, s);
        }
    } else {
        for r in &recs {
            progress.frame(r.caplen);
        }
        run.count(recs.len() as u64, done.iter().map(|d| d.roce).sum());
    }
    let mut out = io::stdout().lock();
    let mut bufs = Vec::with_capacity(done.len());
    for d in done {
        out.write_all(&d.text)?;
        let mut seen = d.seen;
        seen.clear();
        bufs.push(Bufs { text: d.text, seen });
    }
    out.flush()?;
    Ok((recs, bufs))
}

/// Emit what is still pending, then stop with `stop`.
fn finish(
    run: &mut Run,
    progress: &mut Progress,
    pending: (Vec<MappedRecord>, Vec<Done<'_>>),
    stop: Stop,
) -> Stop {
    match emit(run, progress, pending) {
        Ok(_) => stop,
        Err(e) => Stop::Output(e),
    }
}
