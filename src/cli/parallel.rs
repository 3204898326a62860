//! `read --threads N` on a mapped capture file, a window of records at a time: while the
//! records of one window are decoded and formatted into packet lines in batches on a pool of N
//! threads (`rayon`), the records of the next window are located in the mapping, and the lines
//! of the previous one are written in capture order — after feeding the analysis, in order,
//! with its frames — so the output is byte for byte that of `--threads 1`.
//!
//! The analysis stays on the calling thread (its state follows the capture) and takes the frames
//! decoded by the pool, in order, reduced to what it reads ([`Seen`]): decoding (with the ICRC
//! check) and the analysis run at once, with packet lines printed or not (`-q`). The calling
//! thread is the pool's first worker: once it has analysed and written a window it decodes with
//! the others, so N threads are busy, not N + 1 (on 2 cores, `read -q` on the 1M-packet trace
//! went from 0.21–0.23 s to 0.16–0.19 s; with the other changes of that commit).

use std::io::{self, Write};

use rayon::prelude::*;

use super::pipeline::{Run, Shape};
use super::progress::Progress;
use crate::analyze::Seen;
use crate::decode::Frame;
use crate::source::file::{FileError, MappedRecord};
use crate::source::{FileSource, Record};

/// Records per batch handed to one thread.
const BATCH: usize = 2048;

/// Records per batch when the decoded frames (as [`Seen`], 368 bytes each) feed the analysis (a
/// report was asked for): small batches keep them in the caches between the thread that decodes
/// them and the one that analyses them, and few of them in memory (`read -q` on the 1M-packet
/// benchmark trace, 2 threads, when frames were handed over whole: 0.21 s with 2048, 0.15 s
/// with 256; peak RSS 41 → 14 MB).
const ANALYSIS_BATCH: usize = 256;

/// Batches per thread in one window.
const PER_THREAD: usize = 4;

/// Batches per thread in one window when the frames feed the analysis: fewer of them in memory
/// (QPN spraying at the default `--max-flows` peaks under 32 MiB).
const ANALYSIS_PER_THREAD: usize = 2;

/// Most captured bytes in one window.
const WINDOW_BYTES: usize = 8 << 20;

/// Why the parallel loop stopped.
pub enum Stop {
    /// The end of the file, or `-c N` reached.
    Done,
    /// Not (or no longer) read from the mapping: libpcap reads the rest (an anomaly), or the
    /// thread pool could not be made; continue sequentially.
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
pub fn read(
    src: &mut FileSource,
    map: &[u8],
    run: &mut Run,
    progress: &mut Progress,
    threads: usize,
) -> Stop {
    let Some(pool) = pool(threads) else {
        return Stop::Sequential;
    };
    // The loop runs on one of the pool's threads, which analyses and writes each window while
    // the others (and it, once done) decode the next: `threads` busy threads, not one more.
    pool.install(|| windows(src, map, run, progress, threads))
}

/// A pool of `threads` threads whose first is the calling thread, so that the analysis, run
/// by [`read`]'s loop, keeps its memory in that thread's malloc arena (on another thread glibc
/// gives it an arena of its own: QPN spraying peaked at 33 instead of 31 MiB). rayon keeps
/// such a pool's threads until the process ends and lets a thread be the first of one pool
/// only: a later call on the same thread (a program reading several files) gets an ordinary
/// pool, whose threads end with it. `None` when no pool can be made.
fn pool(threads: usize) -> Option<rayon::ThreadPool> {
    let builder = || rayon::ThreadPoolBuilder::new().num_threads(threads);
    builder()
        .use_current_thread()
        .build()
        .or_else(|_| builder().build())
        .ok()
}

/// [`read`]'s loop, on a thread of the pool.
fn windows<'m>(
    src: &mut FileSource,
    map: &'m [u8],
    run: &mut Run,
    progress: &mut Progress,
    threads: usize,
) -> Stop {
    let shape = run.shape().clone();
    let keep_frames = run.analyzing();
    let (batch, per_thread) = if keep_frames {
        (ANALYSIS_BATCH, ANALYSIS_PER_THREAD)
    } else {
        (BATCH, PER_THREAD)
    };
    let window = threads * per_thread * batch;
    // Buffers go round (located records, batches' lines and frames).
    let mut spare_recs: Vec<Vec<MappedRecord>> = Vec::new();
    let mut spare_bufs: Vec<Bufs<'m>> = Vec::new();
    // Frames still allowed by `-c`, counting those located but not yet accounted.
    let mut left = run.remaining();
    let mut pending: (Vec<MappedRecord>, Vec<Done<'m>>) = (Vec::new(), Vec::new());
    let mut next = locate(src, &mut left, window, Vec::new());
    loop {
        let Located {
            recs: located,
            more,
            err,
        } = next;
        let batches = located.len().div_ceil(batch);
        spare_bufs.resize_with(spare_bufs.len().max(batches), || Bufs {
            text: Vec::new(),
            seen: Vec::new(),
        });
        let bufs: Vec<Bufs<'m>> = spare_bufs.drain(..batches).collect();
        let last = !more || left == Some(0) || err.is_some();
        let spare = spare_recs.pop().unwrap_or_default();
        // At once: the previous window analysed and written on this thread (the analysis keeps
        // to one thread, its state in that core's caches and its memory in one malloc arena),
        // this one decoded and formatted and the next one located by the pool.
        let (written, (formatted, walked)) = rayon::join(
            || emit(run, progress, std::mem::take(&mut pending)),
            || {
                rayon::join(
                    || format_window(&shape, map, &located, bufs, batch, keep_frames),
                    || (!last).then(|| locate(src, &mut left, window, spare)),
                )
            },
        );
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
                // The records located before a read error are written first; still mapped: the
                // end of the file (or `-c`); else libpcap has the rest.
                let stop = match err {
                    Some(e) => Stop::Read(e),
                    None if left == Some(0) || src.shared_map().is_some() => Stop::Done,
                    None => Stop::Sequential,
                };
                return finish(run, progress, pending, stop);
            }
        }
    }
}

/// A window of located records.
struct Located {
    recs: Vec<MappedRecord>,
    /// Whether the mapping may hold more.
    more: bool,
    /// The read error that ended the window (libpcap, taking over, failed); `recs` are the
    /// records before it.
    err: Option<FileError>,
}

/// Locate the next window of records in `src` (at most `window` records and about
/// [`WINDOW_BYTES`] bytes, and no more than `left` allows), into `recs` (a spare buffer).
fn locate(
    src: &mut FileSource,
    left: &mut Option<u64>,
    window: usize,
    mut recs: Vec<MappedRecord>,
) -> Located {
    let room = left.map_or(window, |l| l.min(window as u64) as usize);
    recs.clear();
    let (more, err) = match src.next_mapped_batch(room, WINDOW_BYTES, &mut recs) {
        Ok(more) => (more, None),
        Err(e) => (false, Some(e)),
    };
    *left = left.map(|l| l - recs.len() as u64);
    Located { recs, more, err }
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
        // Printed frames are decoded into a scratch buffer (one per rayon job).
        .map_init(Vec::new, |decoded, (chunk, Bufs { mut text, mut seen })| {
            text.clear();
            seen.clear();
            let mut roce = 0;
            // Count the RoCE frames, and keep what the analysis reads of each.
            let mut tally = |f: &Frame<'m>, seen: &mut Vec<Seen<'m>>| {
                roce += u64::from(f.roce().is_some());
                if keep_frames {
                    seen.push(Seen::of(f));
                }
            };
            if print {
                decoded.clear();
                let recs: Vec<Record<'m>> = chunk.iter().map(|r| r.record(map)).collect();
                decoded.extend(recs.iter().map(|r| shape.decode(r)));
                shape.format_into(&recs, decoded, &mut text);
                decoded.iter().for_each(|f| tally(f, &mut seen));
            } else {
                // One frame at a time, not gathered: nothing but the analysis reads it.
                chunk
                    .iter()
                    .for_each(|r| tally(&shape.decode(&r.record(map)), &mut seen));
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
        debug_assert_eq!(recs.len(), done.iter().map(|d| d.seen.len()).sum::<usize>());
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The first pool made on a thread runs `install` on that thread; a second one on the same
    /// thread (which rayon refuses to make with it) is an ordinary pool that still works.
    #[test]
    fn the_calling_thread_is_the_first_worker_once() {
        std::thread::spawn(|| {
            let me = std::thread::current().id();
            let first = pool(2).expect("a pool");
            assert_eq!(first.install(|| std::thread::current().id()), me);
            assert_eq!(first.install(rayon::current_thread_index), Some(0));
            drop(first);
            let second = pool(2).expect("a second pool on the same thread");
            assert_eq!(second.current_num_threads(), 2);
            assert_eq!(
                second.install(|| (0..100u32).into_par_iter().sum::<u32>()),
                4950
            );
        })
        .join()
        .unwrap();
    }
}
