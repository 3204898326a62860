//! `read --threads N` on a mapped capture file, a batch of records at a time: the threads of a
//! pool (`rayon`) locate batches of records in the mapping and decode and format each into
//! packet lines; the calling thread takes the batches back in capture order, feeds the analysis
//! with their frames and writes their lines, so the output is byte for byte that of
//! `--threads 1`.
//!
//! The analysis stays on the calling thread (its state follows the capture) and takes the frames
//! decoded by the others, in order, reduced to what it reads ([`Seen`]): decoding (with the ICRC
//! check) and the analysis run at once, with packet lines printed or not (`-q`). The calling
//! thread is the pool's first worker: it keeps a fixed number of batches out as slots in a queue,
//! and each of the other N − 1 threads runs a decoder that takes the next slot, walks its records
//! (the walk is one at a time, under a lock) and decodes them, so their bytes are in its core's
//! caches. While the next batch in order is not decoded yet, the calling thread takes a slot
//! itself, so N threads are busy, not N + 1.
//!
//! A decoder with nothing to do looks again for a while before it waits to be woken
//! ([`super::crew`]). When each batch was a rayon job of its own, the other threads fell
//! asleep between batches and took a wake-up to come back, so the calling thread, finding the
//! jobs still queued, ran most of them itself. (Before that, batches went out in windows, and
//! each window ended with every thread waiting for its slowest batch; and while the calling
//! thread walked every batch itself, the others waited for it.) Measurements: docs/perf.md.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::crew::{Crew, lock, pause, with_decoders};
use super::progress::Progress;
use super::{Run, Shape};
use crate::analyze::Seen;
use crate::decode::Frame;
use crate::source::file::{FileError, MappedRecord};
use crate::source::{FileSource, Record};

/// Records per batch handed to one thread.
const BATCH: usize = 2048;

/// Records per batch when the decoded frames (as [`Seen`], 200 bytes each) feed the analysis (a
/// report was asked for): small batches keep them in the caches between the thread that decodes
/// them and the one that analyses them, and few of them in memory (docs/perf.md).
const ANALYSIS_BATCH: usize = 256;

/// Batches out at a time, per thread, when no report is asked for. Their formatted lines are
/// held until written: more batches cost memory, not time (docs/perf.md).
const PER_THREAD: usize = 4;

/// Batches out at a time, per thread, when the frames feed the analysis: few of them in memory
/// (docs/perf.md).
const ANALYSIS_PER_THREAD: usize = 3;

/// Most bytes of the file spanned by the batches out at a time (a batch's records and the
/// headers between them).
const IN_FLIGHT_BYTES: usize = 16 << 20;

/// [`IN_FLIGHT_BYTES`] with a filter (`-f`): the records it rejects between those of a batch
/// stay mapped with them until the batch is analysed, so batches span less of the file
/// (docs/perf.md).
const FILTERED_IN_FLIGHT_BYTES: usize = 4 << 20;

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

/// The buffers of one batch, reused batch after batch so that their memory is not handed back
/// to the system and faulted in again each time: its records, its packet lines, and what the
/// analysis reads of each frame when they feed it (else empty).
#[derive(Default)]
struct Bufs<'m> {
    recs: Vec<MappedRecord>,
    text: Vec<u8>,
    seen: Vec<Seen<'m>>,
}

/// One batch, decoded and formatted, and how many of its frames are RoCE.
struct Done<'m> {
    bufs: Bufs<'m>,
    roce: u64,
}

/// What a thread that prints packet lines gathers for the printer: the batch's records and
/// their frames. Shared by the threads (one per thread decoding, not one per batch out).
#[derive(Default)]
struct Scratch<'m> {
    records: Vec<Record<'m>>,
    frames: Vec<Frame<'m>>,
}

/// Read the mapped part of `src` with the threads of `pool` ([`pool`]). `map` is `src`'s
/// mapping.
pub fn read(
    pool: &rayon::ThreadPool,
    src: &mut FileSource,
    map: &[u8],
    run: &mut Run,
    progress: &mut Progress,
) -> Stop {
    let threads = pool.current_num_threads();
    // The loop runs on the pool's first thread, which analyses and writes each batch in order
    // while the others (and it, when the next batch is not ready) decode those that follow:
    // `threads` busy threads, not one more.
    pool.install(|| batches(src, map, run, progress, threads))
}

/// A pool of `threads` threads whose first is the calling thread, so that the analysis, run
/// by [`read`]'s loop, keeps its memory in that thread's malloc arena (on another thread glibc
/// gives it an arena of its own: QPN spraying peaked at 33 instead of 31 MiB). rayon keeps
/// such a pool's threads until the process ends and lets a thread be the first of one pool
/// only: a later call on the same thread (a program reading several files) gets an ordinary
/// pool, whose threads end with it. `None` when no pool can be made.
pub fn pool(threads: usize) -> Option<rayon::ThreadPool> {
    let builder = || rayon::ThreadPoolBuilder::new().num_threads(threads);
    builder()
        .use_current_thread()
        .build()
        .or_else(|_| builder().build())
        .ok()
}

/// How the records of a batch out on the pool stand.
enum Slot<'m> {
    /// Being decoded (or waiting for a thread).
    Pending,
    /// Decoded and formatted.
    Ready(Done<'m>),
    /// No records: the walk had ended (the end of the file, `-c`, an error, or libpcap reads
    /// the rest) before this batch, or this batch walked to the end of the file without one.
    Empty,
    /// The thread decoding it panicked.
    Failed,
}

/// A batch out: the thread that takes it from the queue fills the slot.
type Flight<'m> = Arc<Mutex<Slot<'m>>>;

/// Marks the slot [`Slot::Failed`] if the thread that holds it unwinds, so that the thread
/// waiting for it does not wait for ever.
struct FailOnUnwind<'a, 'm>(&'a Mutex<Slot<'m>>);

impl Drop for FailOnUnwind<'_, '_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            if let Ok(mut slot) = self.0.lock() {
                *slot = Slot::Failed;
            }
        }
    }
}

/// The walk through the mapping, shared by the threads: each locates the next batch of records
/// under its lock, then decodes that batch.
struct Walk<'a> {
    src: &'a mut FileSource,
    /// Frames still allowed by `-c`, counting those located but not yet accounted.
    left: Option<u64>,
    /// Why no more batches are located, once known (the records before a read error are still
    /// written).
    ended: Option<Stop>,
    /// Largest batch: records, and bytes of the file spanned.
    batch: usize,
    batch_bytes: usize,
    /// Batches whose pages are kept mapped ([`FileSource::next_mapped_batch`]).
    kept: usize,
}

/// What the threads share: the walk, and the slots of the batches out, in capture order, that
/// no thread has located yet. A thread takes the first slot while it holds the walk, so the
/// slots are filled in the order the batches are located; the calling thread adds slots without waiting
/// for a walk in progress.
struct Shared<'a, 'm> {
    walk: Mutex<Walk<'a>>,
    /// Buffers of batches written, for the next ones.
    spare: Mutex<Vec<Bufs<'m>>>,
    /// The slots of the batches out that no thread has located yet, in capture order, and
    /// whether the walk has ended (no more slots are needed).
    crew: Crew<Flight<'m>>,
    /// Set when the output failed: the slots still out are located and decoded by no one.
    abandoned: AtomicBool,
    shape: Shape,
    map: &'m [u8],
    keep_frames: bool,
    scratch: Mutex<Vec<Scratch<'m>>>,
}

/// [`read`]'s loop, on the first thread of the pool, with a decoder ([`with_decoders`]) on
/// each of the others: it keeps a number of batches out, which the decoders (and this thread, while it
/// waits) locate in the mapping and decode, and analyses and writes them in order.
fn batches(
    src: &mut FileSource,
    map: &[u8],
    run: &mut Run,
    progress: &mut Progress,
    threads: usize,
) -> Stop {
    let keep_frames = run.analyzing();
    let (batch, per_thread) = if keep_frames {
        (ANALYSIS_BATCH, ANALYSIS_PER_THREAD)
    } else {
        (BATCH, PER_THREAD)
    };
    let most = threads * per_thread;
    let in_flight = if src.filtered() {
        FILTERED_IN_FLIGHT_BYTES
    } else {
        IN_FLIGHT_BYTES
    };
    let shared = Shared {
        walk: Mutex::new(Walk {
            src,
            left: run.remaining(),
            ended: None,
            batch,
            batch_bytes: in_flight / most,
            kept: most + 1,
        }),
        spare: Mutex::new(Vec::new()),
        crew: Crew::default(),
        abandoned: AtomicBool::new(false),
        shape: run.shape().clone(),
        map,
        keep_frames,
        scratch: Mutex::new(Vec::new()),
    };
    let shared = &shared;
    let stop = with_decoders(
        &shared.crew,
        threads,
        || locate_and_format(shared),
        || in_order(shared, run, progress, most),
    );
    // Every decoder has returned.
    stop.unwrap_or_else(|| lock(&shared.walk).ended.take().unwrap_or(Stop::Done))
}

/// The calling thread's part: keep `most` batches out, and analyse and write them in order;
/// while the next one is not decoded yet, locate and decode another. `None` when the walk has
/// ended and every batch was written.
fn in_order<'m>(
    shared: &Shared<'_, 'm>,
    run: &mut Run,
    progress: &mut Progress,
    most: usize,
) -> Option<Stop> {
    let mut out: VecDeque<Flight<'m>> = VecDeque::new();
    loop {
        while !shared.crew.ended() && out.len() < most {
            let flight: Flight<'m> = Arc::new(Mutex::new(Slot::Pending));
            shared.crew.push(Arc::clone(&flight));
            out.push_back(flight);
        }
        // None: no batch is out, or this one came after the end of the walk (and so do the
        // later ones).
        let next = out.pop_front()?;
        let done = wait(&next, || {
            shared.crew.has_work() && locate_and_format(shared)
        })?;
        match emit(run, progress, done) {
            Ok(bufs) => lock(&shared.spare).push(bufs),
            Err(e) => {
                shared.abandoned.store(true, Ordering::Release);
                return Some(Stop::Output(e));
            }
        }
    }
}

/// Take the first slot not located yet, locate the next batch of records for it
/// (nothing once the walk has ended or the output failed), then decode and format the batch
/// into it. `false` when no slot was waiting.
fn locate_and_format(shared: &Shared<'_, '_>) -> bool {
    let mut walk = lock(&shared.walk);
    let Some(flight) = shared.crew.pop() else {
        return false;
    };
    let _guard = FailOnUnwind(&flight);
    if walk.ended.is_some() || shared.abandoned.load(Ordering::Acquire) {
        *lock(&flight) = Slot::Empty;
        return true;
    }
    let mut bufs = lock(&shared.spare).pop().unwrap_or_default();
    let Walk {
        src,
        left,
        batch,
        batch_bytes,
        kept,
        ..
    } = &mut *walk;
    let ended = locate(src, left, *batch, *batch_bytes, *kept, &mut bufs.recs);
    let work = walk.src.page_work();
    let last = ended.is_some();
    if last {
        walk.ended = ended;
        shared.crew.end();
    }
    drop(walk);
    // Page faults and releases outside the walk, which the other threads wait for.
    if let Some(work) = work {
        work.run();
    }
    let slot = if bufs.recs.is_empty() && last {
        Slot::Empty
    } else {
        Slot::Ready(format_batch(
            &shared.shape,
            shared.map,
            bufs,
            shared.keep_frames,
            &shared.scratch,
        ))
    };
    *lock(&flight) = slot;
    true
}

/// The batch of `flight` once decoded (`None`: no records, the walk had ended); meanwhile this
/// thread calls `help` (which locates and decodes a batch after it that no decoder has taken;
/// `false`: there was none), and when there is nothing to help with, it gives way to other
/// threads and, after a while, sleeps ([`pause`]: a decoder may wait for the disk).
///
/// # Panics
/// When the thread that decodes the batch panicked (the decoder never should).
fn wait<'m>(flight: &Mutex<Slot<'m>>, mut help: impl FnMut() -> bool) -> Option<Done<'m>> {
    let mut since = Instant::now();
    loop {
        {
            let mut slot = flight.lock().expect("a batch slot");
            match std::mem::replace(&mut *slot, Slot::Pending) {
                Slot::Ready(done) => return Some(done),
                Slot::Empty => return None,
                Slot::Failed => {
                    *slot = Slot::Failed;
                    drop(slot);
                    panic!("a thread decoding a batch of records panicked");
                }
                Slot::Pending => {}
            }
        }
        if help() {
            since = Instant::now();
        } else {
            pause(since);
        }
    }
}

/// Locate the next batch of records in `src` (at most `batch` records and about `max_bytes`
/// bytes, and no more than `left` allows) into `recs`, keeping the pages of the last `kept`
/// batches mapped. `Some` when no batch follows this one: why the loop stops once this one is
/// written.
fn locate(
    src: &mut FileSource,
    left: &mut Option<u64>,
    batch: usize,
    max_bytes: usize,
    kept: usize,
    recs: &mut Vec<MappedRecord>,
) -> Option<Stop> {
    let room = left.map_or(batch, |l| l.min(batch as u64) as usize);
    recs.clear();
    let walked = src.next_mapped_batch(room, max_bytes, kept, recs);
    *left = left.map(|l| l - recs.len() as u64);
    match walked {
        Err(e) => Some(Stop::Read(e)),
        Ok(true) if *left != Some(0) => None,
        // The end of the file or of `-c`, still mapped; else libpcap has the rest.
        Ok(_) if *left == Some(0) || src.shared_map().is_some() => Some(Stop::Done),
        Ok(_) => Some(Stop::Sequential),
    }
}

/// Decode and format the located records of one batch into its buffers; the decoded frames are
/// kept when `keep_frames` (for the analysis). A thread that prints takes its gathering buffers
/// from `scratch` and puts them back.
fn format_batch<'m>(
    shape: &Shape,
    map: &'m [u8],
    mut bufs: Bufs<'m>,
    keep_frames: bool,
    scratch: &Mutex<Vec<Scratch<'m>>>,
) -> Done<'m> {
    bufs.text.clear();
    bufs.seen.clear();
    let mut roce = 0;
    // Count the RoCE frames, and keep what the analysis reads of each.
    let mut tally = |f: &Frame<'m>, seen: &mut Vec<Seen<'m>>| {
        roce += u64::from(f.roce().is_some());
        if keep_frames {
            seen.push(Seen::of(f));
        }
    };
    if shape.print_packets() {
        let taken = scratch.lock().map(|mut k| k.pop()).unwrap_or_default();
        let Scratch {
            mut records,
            mut frames,
        } = taken.unwrap_or_default();
        records.clear();
        records.extend(bufs.recs.iter().map(|r| r.record(map)));
        frames.clear();
        frames.extend(records.iter().map(|r| shape.decode(r)));
        shape.format_into(&records, &frames, &mut bufs.text);
        frames.iter().for_each(|f| tally(f, &mut bufs.seen));
        if let Ok(mut k) = scratch.lock() {
            k.push(Scratch { records, frames });
        }
    } else {
        // One frame at a time, not gathered: nothing but the analysis reads it.
        for r in &bufs.recs {
            tally(&shape.decode(&r.record(map)), &mut bufs.seen);
        }
    }
    Done { bufs, roce }
}

/// Account and analyse a batch's frames in order, then write its lines; the buffers come back
/// for another batch.
fn emit<'m>(run: &mut Run, progress: &mut Progress, done: Done<'m>) -> io::Result<Bufs<'m>> {
    let Done { mut bufs, roce } = done;
    let Bufs { recs, text, seen } = &mut bufs;
    if run.analyzing() {
        debug_assert_eq!(recs.len(), seen.len());
        for (r, s) in recs.iter().zip(seen.iter()) {
            progress.frame(r.caplen);
            run.account_seen(r.number, r.ts_ns, s);
        }
    } else {
        for r in recs.iter() {
            progress.frame(r.caplen);
        }
        run.count(recs.len() as u64, roce);
    }
    if !text.is_empty() {
        let mut out = io::stdout().lock();
        out.write_all(text)?;
        out.flush()?;
    }
    seen.clear();
    Ok(bufs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    /// A batch whose decoder panicked is not waited for: the waiting thread panics too (the
    /// scope passes the panic on) instead of hanging. Without the guard this test times out.
    #[test]
    fn a_batch_whose_decoder_panicked_is_not_waited_for() {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(2)
                .build()
                .expect("a pool");
            let slot: Mutex<Slot<'static>> = Mutex::new(Slot::Pending);
            let waited = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                pool.install(|| {
                    rayon::scope(|s| {
                        s.spawn(|_| {
                            let _guard = FailOnUnwind(&slot);
                            panic!("a decoder bug");
                        });
                        wait(&slot, || false).map(|d| d.bufs.recs.len())
                    })
                })
            }));
            let failed = matches!(*slot.lock().expect("not poisoned"), Slot::Failed);
            let _ = tx.send((waited.is_err(), failed));
        });
        let got = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the waiting thread returned");
        assert_eq!(got, (true, true));
    }

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
