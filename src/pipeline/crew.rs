//! The decoders of the parallel reader ([`super::parallel`]): N − 1 threads of a `rayon` pool
//! that take work from a queue the calling thread fills, stay awake a while when it is empty,
//! and return once the calling thread is done with them, whether it returned or panicked.
//!
//! rayon's own idle threads fall asleep soon after they find no job, and a job pushed then
//! waits for a wake-up: with one rayon job per batch of records, the calling thread, finding
//! the jobs still queued, ran most of the batches itself (docs/perf.md). A decoder here looks
//! again for `SPIN` (500 µs) after each piece of work or wake-up before it waits.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// How long a decoder with nothing to do keeps looking for work before it waits to be woken:
/// a little longer than the calling thread takes to analyse a batch, so that a decoder is
/// awake when the next piece of work comes.
const SPIN: Duration = Duration::from_micros(500);

/// Longest wait of an idle decoder between two looks at the queue (it is woken when work is
/// queued, when no more will be, and when the calling thread is done).
const NAP: Duration = Duration::from_millis(20);

/// How long a thread waiting for a decoder sleeps at a time once it has waited [`SPIN`]
/// (a record whose page the disk has not delivered yet, say): it then takes no CPU.
const PAUSE: Duration = Duration::from_micros(100);

/// Let the thread wait a little for another's work, which it began waiting for at `since`:
/// give way to other threads during `SPIN` (500 µs), then sleep `PAUSE` (100 µs) at a time.
pub fn pause(since: Instant) {
    if since.elapsed() < SPIN {
        std::thread::yield_now();
    } else {
        std::thread::sleep(PAUSE);
    }
}

/// The queue of work the calling thread fills and the decoders take from, and what they share
/// about it.
pub struct Crew<T> {
    queue: Mutex<VecDeque<T>>,
    /// `queue`'s length, read by idle decoders without taking its lock.
    queued: AtomicUsize,
    /// Set once no more work will be queued.
    ended: AtomicBool,
    /// Set when the calling thread is done (returned or unwinding): the decoders return.
    finished: AtomicBool,
    /// How many decoders wait on `wake`.
    idle: Mutex<usize>,
    wake: Condvar,
}

/// Lock `m`, whose holder never panics but in a bug elsewhere (which is then passed on).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<T> Default for Crew<T> {
    /// An empty queue.
    fn default() -> Self {
        Crew {
            queue: Mutex::new(VecDeque::new()),
            queued: AtomicUsize::new(0),
            ended: AtomicBool::new(false),
            finished: AtomicBool::new(false),
            idle: Mutex::new(0),
            wake: Condvar::new(),
        }
    }
}

impl<T> Crew<T> {
    /// Queue `work`, and wake one waiting decoder.
    pub fn push(&self, work: T) {
        let mut q = lock(&self.queue);
        q.push_back(work);
        self.queued.store(q.len(), Ordering::Release);
        drop(q);
        self.wake_idle(false);
    }

    /// The oldest work queued, taken off the queue.
    pub fn pop(&self) -> Option<T> {
        let mut q = lock(&self.queue);
        let work = q.pop_front();
        self.queued.store(q.len(), Ordering::Release);
        work
    }

    /// Whether work is queued.
    pub fn has_work(&self) -> bool {
        self.queued.load(Ordering::Acquire) > 0
    }

    /// No more work will be queued: decoders return once the queue is empty.
    pub fn end(&self) {
        self.ended.store(true, Ordering::Release);
        self.wake_idle(true);
    }

    /// Whether [`Crew::end`] was called.
    pub fn ended(&self) -> bool {
        self.ended.load(Ordering::Acquire)
    }

    /// Wake one waiting decoder, if any (`all`: every one).
    fn wake_idle(&self, all: bool) {
        if *lock(&self.idle) > 0 {
            if all {
                self.wake.notify_all();
            } else {
                self.wake.notify_one();
            }
        }
    }

    /// Whether the decoders are done: the calling thread is, or no more work will come and
    /// none is queued.
    fn done(&self) -> bool {
        self.finished.load(Ordering::Acquire) || (self.ended() && !self.has_work())
    }

    /// A decoder: run `job` (which takes a piece of work and does it; `false`: there was
    /// none) until the decoders are done.
    fn work(&self, job: &(impl Fn() -> bool + Sync)) {
        let mut since = Instant::now();
        while !self.done() {
            if self.has_work() && job() {
                since = Instant::now();
                continue;
            }
            if since.elapsed() < SPIN {
                // A thread with nothing to do lets another run (more threads than cores).
                std::thread::yield_now();
                continue;
            }
            let idle = lock(&self.idle);
            if !self.has_work() && !self.done() {
                let mut idle = idle;
                *idle += 1;
                let (mut idle, waited) = self
                    .wake
                    .wait_timeout(idle, NAP)
                    .unwrap_or_else(PoisonError::into_inner);
                *idle -= 1;
                if waited.timed_out() {
                    // Nothing came: wait again rather than look for another SPIN.
                    continue;
                }
            }
            since = Instant::now();
        }
    }
}

/// Sets [`Crew`]'s `finished` and wakes the decoders when dropped: when the calling thread's
/// part returns or unwinds, so that the scope, which waits for the decoders, ends.
struct Finish<'a, T>(&'a Crew<T>);

impl<T> Drop for Finish<'_, T> {
    fn drop(&mut self) {
        self.0.finished.store(true, Ordering::Release);
        self.0.wake_idle(true);
    }
}

/// Run `main` on this thread, a thread of a `rayon` pool of `threads` (inside its `install`),
/// with a decoder running `job` ([`Crew`]) on each of the pool's `threads - 1` others;
/// `main`'s result once every decoder has returned.
///
/// # Panics
/// When `main` or a decoder panicked, once every decoder has returned.
pub fn with_decoders<T: Send, R>(
    crew: &Crew<T>,
    threads: usize,
    job: impl Fn() -> bool + Sync,
    main: impl FnOnce() -> R,
) -> R {
    let job = &job;
    rayon::in_place_scope(|s| {
        for _ in 1..threads {
            s.spawn(move |_| crew.work(job));
        }
        let _finish = Finish(crew);
        main()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// Run `f` on a thread of its own; whether it returned (or panicked) within 60 s.
    fn returns(f: impl FnOnce() + Send + 'static) -> bool {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
            let _ = tx.send(());
        });
        rx.recv_timeout(Duration::from_secs(60)).is_ok()
    }

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a pool")
    }

    /// Every piece of work queued is done once, by the decoders or by the calling thread, and
    /// the decoders return after the end.
    #[test]
    fn queued_work_is_done_once() {
        let crew = Crew::default();
        let done = Mutex::new(Vec::new());
        let job = || match crew.pop() {
            Some(i) => {
                lock(&done).push(i);
                true
            }
            None => false,
        };
        pool(3).install(|| {
            with_decoders(&crew, 3, job, || {
                for i in 0..10_000 {
                    crew.push(i);
                    if i % 7 == 0 {
                        job();
                    }
                }
                crew.end();
                while crew.has_work() {
                    job();
                }
            })
        });
        let mut done = done.into_inner().unwrap();
        done.sort_unstable();
        assert_eq!(done, (0..10_000).collect::<Vec<_>>());
    }

    /// The calling thread panics: the decoders, which had work to wait for, return, and the
    /// panic is passed on instead of the process hanging.
    #[test]
    fn decoders_return_when_the_calling_thread_panics() {
        assert!(returns(|| {
            let crew = Crew::<()>::default();
            pool(3).install(|| with_decoders(&crew, 3, || false, || panic!("an analysis bug")));
        }));
    }

    /// A decoder panics while another waits for work: the calling thread, seeing the failure,
    /// panics too, and everything returns.
    #[test]
    fn a_decoder_panicking_ends_the_run() {
        assert!(returns(|| {
            let crew = Crew::default();
            let failed = AtomicBool::new(false);
            pool(3).install(|| {
                with_decoders(
                    &crew,
                    3,
                    || {
                        if crew.pop().is_none() {
                            return false;
                        }
                        failed.store(true, Ordering::Release);
                        panic!("a decoder bug")
                    },
                    || {
                        crew.push(());
                        while !failed.load(Ordering::Acquire) {
                            std::thread::yield_now();
                        }
                        panic!("the batch failed");
                    },
                )
            });
        }));
    }
}
