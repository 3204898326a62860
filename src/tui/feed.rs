//! `top`'s sources as [`Feed`]s: a libpcap live capture, the verbs sniffer, and a capture
//! file replayed at its own pace (or `--speed N` times faster).

use std::time::{Duration, Instant};

use anyhow::Result;

use super::engine::{Feed, Step, wall_ns};
use crate::source::live::{LiveSource, Next};
use crate::source::{FileSource, Record};

/// A libpcap live capture.
pub struct LiveFeed {
    src: LiveSource,
    /// The user's filter (`-f`), for the tagged-frame note.
    filter: Option<String>,
    /// Nothing was buffered at the last read: wait before the next.
    wait_first: bool,
}

impl LiveFeed {
    /// A feed of `src`, whose user filter is `filter`.
    pub fn new(src: LiveSource, filter: Option<String>) -> LiveFeed {
        LiveFeed {
            src,
            filter,
            wait_first: false,
        }
    }
}

impl Feed for LiveFeed {
    fn next(&mut self) -> Result<Step<'_>> {
        if std::mem::take(&mut self.wait_first) {
            self.src.wait()?;
        }
        match self.src.next_frame()? {
            Next::Record(r) => Ok(Step::Record(r)),
            Next::Empty => {
                self.wait_first = true;
                Ok(Step::Idle)
            }
            Next::Timeout | Next::Stopped | Next::Skipped => Ok(Step::Idle),
        }
    }

    fn now_ns(&self) -> u64 {
        wall_ns()
    }

    fn drops(&mut self) -> Option<(u64, u64)> {
        self.src
            .stats()
            .ok()
            .map(|s| (u64::from(s.dropped), u64::from(s.if_dropped)))
    }

    fn closing_notes(&self) -> Vec<String> {
        match (self.src.tag_miss(), &self.filter) {
            (Some(m), Some(f)) => m.message(f).into_iter().collect(),
            _ => Vec::new(),
        }
    }
}

/// The verbs sniffer on an RDMA device (frames are timed on arrival in user space).
#[cfg(feature = "verbs")]
pub struct SnifferFeed {
    src: crate::source::sniffer::verbs::RdmaSniffer,
    /// Nothing was buffered at the last read: wait before the next.
    wait_first: bool,
}

#[cfg(feature = "verbs")]
impl SnifferFeed {
    /// A feed of `src`.
    pub fn new(src: crate::source::sniffer::verbs::RdmaSniffer) -> SnifferFeed {
        SnifferFeed {
            src,
            wait_first: false,
        }
    }
}

#[cfg(feature = "verbs")]
impl Feed for SnifferFeed {
    fn next(&mut self) -> Result<Step<'_>> {
        if std::mem::take(&mut self.wait_first) {
            self.src.wait(100)?;
        }
        match self.src.next_frame()? {
            Next::Record(r) => Ok(Step::Record(r)),
            Next::Empty => {
                self.wait_first = true;
                Ok(Step::Idle)
            }
            Next::Timeout | Next::Stopped | Next::Skipped => Ok(Step::Idle),
        }
    }

    fn now_ns(&self) -> u64 {
        wall_ns()
    }

    fn drops(&mut self) -> Option<(u64, u64)> {
        None
    }
}

/// A frame read ahead of its time.
struct Pending {
    number: u64,
    ts_ns: u64,
    base_ts_ns: u64,
    caplen: u32,
    len: u32,
}

/// A capture file replayed at `speed` times its own pace: each frame is handed over when as
/// much time (divided by `speed`) has passed since the replay began as since the file's first
/// frame.
pub struct ReplayFeed {
    src: FileSource,
    speed: f64,
    /// Wall time of the replay's start, moved on by the time spent paused.
    start: Instant,
    /// The file's first frame time, ns.
    first_ts: Option<u64>,
    /// Last frame time handed over, ns.
    last_ts: u64,
    buf: Vec<u8>,
    pending: Option<Pending>,
    paused_at: Option<Instant>,
    ended: bool,
}

impl ReplayFeed {
    /// Replay `src` at `speed` times its pace (> 0).
    pub fn new(src: FileSource, speed: f64) -> ReplayFeed {
        ReplayFeed {
            src,
            speed,
            start: Instant::now(),
            first_ts: None,
            last_ts: 0,
            buf: Vec::new(),
            pending: None,
            paused_at: None,
            ended: false,
        }
    }

    /// When the frame at `ts` is due; `None` when that is too far ahead to say (a time stamp
    /// centuries after the first frame's).
    fn due(&self, ts: u64) -> Option<Instant> {
        let since = ts.saturating_sub(self.first_ts.unwrap_or(ts));
        let wait = Duration::try_from_secs_f64(since as f64 / 1e9 / self.speed).ok()?;
        self.start.checked_add(wait)
    }

    /// Read the next frame into the buffer; false at the end of the file.
    fn read_ahead(&mut self) -> Result<bool> {
        let Some(r) = self.src.next_record()? else {
            return Ok(false);
        };
        self.buf.clear();
        self.buf.extend_from_slice(r.data);
        let p = Pending {
            number: r.number,
            ts_ns: r.ts_ns,
            base_ts_ns: r.base_ts_ns,
            caplen: r.caplen,
            len: r.len,
        };
        if self.first_ts.is_none() {
            self.first_ts = Some(p.ts_ns);
            self.start = Instant::now();
        }
        self.pending = Some(p);
        Ok(true)
    }
}

impl Feed for ReplayFeed {
    fn next(&mut self) -> Result<Step<'_>> {
        if self.ended {
            return Ok(Step::End);
        }
        if self.paused_at.is_some() {
            std::thread::sleep(Duration::from_millis(20));
            return Ok(Step::Idle);
        }
        if self.pending.is_none() && !self.read_ahead()? {
            self.ended = true;
            return Ok(Step::End);
        }
        let Some(p) = &self.pending else {
            return Ok(Step::Idle);
        };
        let now = Instant::now();
        match self.due(p.ts_ns) {
            Some(due) if due <= now => {}
            due => {
                let wait = due.map_or(Duration::MAX, |d| d - now);
                std::thread::sleep(wait.min(Duration::from_millis(20)));
                return Ok(Step::Idle);
            }
        }
        let Some(p) = self.pending.take() else {
            return Ok(Step::Idle);
        };
        self.last_ts = self.last_ts.max(p.ts_ns);
        Ok(Step::Record(Record {
            number: p.number,
            ts_ns: p.ts_ns,
            base_ts_ns: p.base_ts_ns,
            caplen: p.caplen,
            len: p.len,
            data: &self.buf,
        }))
    }

    /// The file's time the replay has reached (the last frame's after the end).
    fn now_ns(&self) -> u64 {
        let Some(first) = self.first_ts else {
            return 0;
        };
        if self.ended {
            return self.last_ts;
        }
        let at = self.paused_at.unwrap_or_else(Instant::now);
        let since = at.saturating_duration_since(self.start).as_secs_f64() * self.speed;
        (first + (since * 1e9) as u64).max(self.last_ts)
    }

    fn drops(&mut self) -> Option<(u64, u64)> {
        None
    }

    fn set_paused(&mut self, paused: bool) {
        match (paused, self.paused_at) {
            (true, None) => self.paused_at = Some(Instant::now()),
            (false, Some(at)) => {
                self.start += at.elapsed();
                self.paused_at = None;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replay_keeps_the_pace_of_the_file() {
        // Three frames 0, 40 and 80 ms apart, replayed at 2x: the last comes 40 ms in.
        let recs: Vec<_> = (0..3u64)
            .map(|i| {
                crate::synth::capfile::Record::new(1_000_000_000 + i * 40_000_000, vec![0u8; 60])
            })
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.pcap");
        std::fs::write(&path, crate::synth::capfile::pcap_bytes(1, 65535, &recs)).unwrap();
        let src = FileSource::open(path.to_str().unwrap()).unwrap();
        let mut feed = ReplayFeed::new(src, 2.0);
        let begin = Instant::now();
        let mut times = Vec::new();
        loop {
            match feed.next().unwrap() {
                Step::Record(r) => times.push((r.ts_ns, begin.elapsed())),
                Step::Idle => {}
                Step::End => break,
            }
        }
        assert_eq!(times.len(), 3);
        // Not before its time (the upper bound is left to the scheduler).
        assert!(times[2].1 >= Duration::from_millis(40), "{times:?}");
        assert_eq!(
            feed.now_ns(),
            1_080_000_000,
            "the last frame's time after the end"
        );
    }
}
