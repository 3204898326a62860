//! `roce-inspect top`: a live dashboard of RoCE traffic (issue 36), like `iftop` for QPs.
//!
//! - [`engine`]: the capture thread: frames from a [`engine::Feed`] ([`feed`]: libpcap, the
//!   verbs sniffer, a replayed file) through the same decoder and analyzer as `read` and
//!   `capture`, a [`engine::Tick`] every 250 ms (per-flow counters from
//!   `Analyzer::live_flows`, a report from `Analyzer::report_so_far` about once a second).
//! - [`model`]: the view model (rates over a sliding window, sort, selection, cells), pure.
//! - [`pane`]: the findings pane's lines from a report.
//! - [`ring`]: the latest frames, bounded by bytes, for `w`.
//! - [`shown`]: the display filter (`/`, `-Y`): which packets the table counts.
//! - [`render`]: ratatui drawing; [`app`]: the screen thread, keys, terminal set-up and restore.

pub mod app;
pub mod engine;
pub mod feed;
pub mod model;
pub mod pane;
pub mod render;
pub mod ring;
pub mod shown;
