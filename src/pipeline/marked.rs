//! Packet lines with analysis marks (`read --marks`, `-Y analysis.*`): the analysis runs as the
//! frames are read, its [`MarkTap`] gives each frame its marks, and the frames to show wait in
//! a bounded window so that a mark found later (`naked`: a NAK or RNR NAK that names the PSN of
//! a packet shown before it) still reaches them. The display filter is tested when a frame
//! leaves the window, on its final marks.
//!
//! The window holds at most [`HOLD_FRAMES`] frames and [`HOLD_BYTES`] bytes of their data (a
//! copy); a NAK that comes later than that does not mark the frames already printed. Every
//! other mark is known when its frame is analysed. A live capture printing as it goes, and the
//! end of the input, print the whole window at once.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use crate::analyze::Analyzer;
use crate::analyze::marks::{MarkState, MarkTap, Marks};
use crate::analyze::tap::Tap;
use crate::source::Record;

/// Most frames waiting for late marks: 1024.
pub const HOLD_FRAMES: usize = 1024;
/// Most bytes of frame data waiting for late marks: 16 MiB.
pub const HOLD_BYTES: usize = 16 << 20;

/// A frame waiting in the window: the record's facts, a copy of its bytes, its marks.
pub struct Held {
    number: u64,
    /// Capture (or `--mirror-time`) time, ns.
    pub ts_ns: u64,
    /// The run's base time, ns.
    pub base_ts_ns: u64,
    caplen: u32,
    len: u32,
    data: Vec<u8>,
    /// The frame's analysis marks.
    pub marks: Marks,
    flow_psn: Option<(usize, u32)>,
}

impl Held {
    /// The record again, over the copy.
    pub fn record(&self) -> Record<'_> {
        Record {
            number: self.number,
            ts_ns: self.ts_ns,
            base_ts_ns: self.base_ts_ns,
            caplen: self.caplen,
            len: self.len,
            data: &self.data,
        }
    }
}

/// The marks of a run: the tap's shared state and the window of frames to show.
pub struct Marking {
    state: Arc<Mutex<MarkState>>,
    held: VecDeque<Held>,
    bytes: usize,
}

impl Marking {
    /// Tap `a` for marks (events still reach the tap it had, e.g. the `--html` recorder).
    pub fn tap(a: &mut Analyzer) -> Marking {
        Marking {
            state: crate::analyze::marks::tap(a),
            held: VecDeque::new(),
            bytes: 0,
        }
    }

    /// The marks tap's shared state (for the Parquet export of the same run).
    pub fn state_handle(&self) -> Arc<Mutex<MarkState>> {
        Arc::clone(&self.state)
    }

    /// The tap the marks tap passes events on to, from the analyzer's tap at the end.
    pub fn inner_tap(tap: Option<Box<dyn Tap>>) -> Option<Box<dyn Tap>> {
        let t = tap?.into_any().downcast::<MarkTap>().ok()?;
        t.inner
    }

    fn state(&self) -> std::sync::MutexGuard<'_, MarkState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Before frame `number` is analysed.
    pub fn begin(&self, number: u64) {
        self.state().begin(number);
    }

    /// After `rec` was analysed: mark the waiting frames its NAKs name, then hold it when it
    /// may be shown (`show`).
    pub fn after(&mut self, rec: &Record<'_>, ts_ns: u64, base_ts_ns: u64, show: bool) {
        let (marks, flow_psn, late) = {
            let s = self.state();
            (s.marks, s.flow_psn, s.late.clone())
        };
        for n in &late {
            for h in self.held.iter_mut() {
                if h.flow_psn == Some((n.flow, n.psn)) {
                    h.marks.naked = true;
                }
            }
        }
        if !show {
            return;
        }
        self.bytes += rec.data.len();
        self.held.push_back(Held {
            number: rec.number,
            ts_ns,
            base_ts_ns,
            caplen: rec.caplen,
            len: rec.len,
            data: rec.data.to_vec(),
            marks,
            flow_psn,
        });
    }

    /// The next frame to leave the window: the oldest once the window is over its bounds, or
    /// with `all` (the end, a flush) any.
    pub fn next_out(&mut self, all: bool) -> Option<Held> {
        let over = self.held.len() > HOLD_FRAMES || self.bytes > HOLD_BYTES;
        if !(all || over) {
            return None;
        }
        let h = self.held.pop_front()?;
        self.bytes -= h.data.len();
        Some(h)
    }
}
