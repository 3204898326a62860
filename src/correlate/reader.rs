//! One capture file as a stream of [`Observation`]s: the existing file source and decoder,
//! with frame and RoCE counts.

use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::Scope;

use anyhow::{Context, Result};

use super::packet::Observation;
use crate::decode::{DecodeConfig, LinkType, decode_frame};
use crate::source::FileSource;

/// A capture file being read for correlation.
pub struct CaptureReader {
    /// The file's name in messages (`<stdin>` for `-`).
    path: String,
    src: FileSource,
    linktype: LinkType,
    cfg: DecodeConfig,
    /// Frames read (after the BPF filter).
    pub frames: u64,
    /// Frames decoded as RoCE (with or without a BTH).
    pub roce: u64,
    /// Why the file ended early (a truncated or corrupt record), as one line naming the file
    /// and the last frame read, as `read` words it: the frames before it are correlated.
    pub read_error: Option<String>,
}

impl CaptureReader {
    /// Open `path` with an optional BPF `filter` and the RoCEv2 ports of `cfg`.
    ///
    /// # Errors
    /// One line naming the file: missing, not a capture, unsupported link type, bad filter.
    pub fn open(path: &str, filter: Option<&str>, cfg: &DecodeConfig) -> Result<CaptureReader> {
        // Named as `read` names it in messages.
        let shown = crate::source::file::shown(path);
        let mut src = FileSource::open(path).with_context(|| shown.to_string())?;
        if let Some(f) = filter {
            src.set_filter(f).with_context(|| shown.to_string())?;
        }
        Ok(CaptureReader {
            path: shown.to_string(),
            linktype: src.linktype(),
            src,
            cfg: cfg.clone(),
            frames: 0,
            roce: 0,
            read_error: None,
        })
    }

    /// The next RoCE packet with a BTH; `None` at the end of the file, or at a read error in
    /// the middle of it (kept in [`CaptureReader::read_error`]).
    pub fn next_packet(&mut self) -> Option<Observation> {
        loop {
            let rec = match self.src.next_record() {
                Ok(Some(r)) => r,
                Ok(None) => return None,
                Err(e) => {
                    // Named as `read` names it: the file alone when no frame was read.
                    let at = crate::source::file::after_frame(&self.path, self.src.frames_read());
                    let e = anyhow::Error::new(e).context(at);
                    self.read_error = Some(format!("{e:#}"));
                    return None;
                }
            };
            self.frames += 1;
            let frame = decode_frame(self.linktype, rec.data, rec.len, &self.cfg);
            if frame.roce().is_none() {
                continue;
            }
            self.roce += 1;
            if let Some(o) = Observation::of(&frame, rec.number, rec.ts_ns) {
                return Some(o);
            }
        }
    }
}

/// Observations per batch handed from a reader thread to the merge.
const BATCH: usize = 1024;

/// Batches in flight per reader (bounds memory: `BATCH` × `IN_FLIGHT` observations).
const IN_FLIGHT: usize = 4;

/// A capture read and decoded by a thread of its own, its packets handed over in batches.
pub struct Feed {
    rx: Receiver<Vec<Observation>>,
    batch: std::vec::IntoIter<Observation>,
}

impl Feed {
    /// Start reading `r` on a thread of `scope`.
    pub fn spawn<'s>(scope: &'s Scope<'s, '_>, r: CaptureReader) -> Feed {
        let (tx, rx) = sync_channel(IN_FLIGHT);
        scope.spawn(move || produce(r, &tx));
        Feed {
            rx,
            batch: Vec::new().into_iter(),
        }
    }

    /// The next packet; `None` at the end of the file or at a read error in it (the survey,
    /// which read the same file first, reports it).
    pub fn next_packet(&mut self) -> Option<Observation> {
        loop {
            if let Some(o) = self.batch.next() {
                return Some(o);
            }
            self.batch = self.rx.recv().ok()?.into_iter();
        }
    }
}

/// The reader thread: batches until the end of the file (or a read error), or a closed
/// channel.
fn produce(mut r: CaptureReader, tx: &SyncSender<Vec<Observation>>) {
    loop {
        let mut b = Vec::with_capacity(BATCH);
        let end = loop {
            match r.next_packet() {
                Some(o) => {
                    b.push(o);
                    if b.len() == BATCH {
                        break false;
                    }
                }
                None => break true,
            }
        };
        if tx.send(b).is_err() || end {
            return;
        }
    }
}
