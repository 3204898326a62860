//! The `packets` table's analysis columns (`analysis_retransmission`, …, `analysis_message`):
//! each row carries the analysis marks of its frame ([`Marks`], from the marks tap on the
//! export's analyzer), and rows wait in a bounded window before they are written so that a
//! late mark (`naked`: a NAK naming the PSN of a packet exported before it) still reaches
//! them, as the packet lines of `read --marks` do (src/cli/marked.rs): at most
//! [`HOLD_ROWS`] rows (a row holds the packet's headers, not its payload: about 430 bytes), a
//! NAK later than that leaves the row unmarked.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::packets::PacketRow;
use crate::analyze::marks::{MarkState, Marks};

/// Most rows waiting for late marks: 1024, as `read --marks` holds frames.
pub const HOLD_ROWS: usize = 1024;

/// The marks tap's shared state and the rows waiting in the window, each with the (flow, PSN)
/// a late NAK names it by.
pub struct MarkWindow {
    state: Arc<Mutex<MarkState>>,
    held: VecDeque<(PacketRow, Option<(usize, u32)>)>,
}

impl MarkWindow {
    /// A window over the marks `state` (from [`crate::analyze::marks::tap`]).
    pub fn new(state: Arc<Mutex<MarkState>>) -> MarkWindow {
        MarkWindow {
            state,
            held: VecDeque::new(),
        }
    }

    fn state(&self) -> MutexGuard<'_, MarkState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Before frame `number` is analysed: clear the marks.
    pub fn begin(&self, number: u64) {
        self.state().begin(number);
    }

    /// The marks of the frame just analysed, after its NAKs marked the rows they name.
    fn current(&mut self) -> (Marks, Option<(usize, u32)>) {
        let (marks, flow_psn, late) = {
            let s = self.state();
            (s.marks, s.flow_psn, s.late.clone())
        };
        for n in &late {
            for (row, at) in self.held.iter_mut() {
                if *at == Some((n.flow, n.psn)) {
                    row.mark_naked();
                }
            }
        }
        (marks, flow_psn)
    }

    /// Hold `row`, the frame just analysed, with its marks; the oldest row when the window is
    /// over [`HOLD_ROWS`].
    pub fn push(&mut self, mut row: PacketRow) -> Option<PacketRow> {
        let (marks, at) = self.current();
        row.set_marks(marks);
        self.held.push_back((row, at));
        (self.held.len() > HOLD_ROWS)
            .then(|| self.held.pop_front().map(|(r, _)| r))
            .flatten()
    }

    /// The rows still held, oldest first (the end of the capture).
    pub fn drain(&mut self) -> impl Iterator<Item = PacketRow> + '_ {
        self.held.drain(..).map(|(r, _)| r)
    }
}
