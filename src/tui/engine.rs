//! The capture side of `top`: a thread that reads frames (libpcap, the verbs sniffer, or a
//! capture file replayed at its own pace), decodes and analyses them exactly as `read` and
//! `capture` do, and hands the screen a [`Tick`] about four times a second through a bounded
//! channel it never waits on. It keeps the last frames (bounded by bytes) for `w`, and the
//! last packets of the flow the screen has selected for the detail view.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender};
use std::time::{Duration, Instant};

use anyhow::Result;

use crate::analyze::flow::FlowKey;
use crate::analyze::live::LiveFlow;
use crate::analyze::{AnalyzeConfig, Analyzer, Report};
use crate::decode::{DecodeConfig, Frame, LinkType, Opcode, decode_frame};
use crate::source::Record;
use crate::synth::capfile;

/// Time between two ticks (the screen redraws at most this often).
pub const TICK: Duration = Duration::from_millis(250);

/// Least time between two reports built for the findings pane; more when building one takes
/// long (a tenth of the capture thread's time at most).
pub const REPORT_EVERY: Duration = Duration::from_secs(1);

/// Packets of the selected flow kept for the detail view.
pub const RECENT: usize = 64;

/// What a source gave.
pub enum Step<'a> {
    /// A frame.
    Record(Record<'a>),
    /// Nothing now (the source waited up to about 100 ms).
    Idle,
    /// The end of a file.
    End,
}

/// A source of frames for `top`.
pub trait Feed {
    /// The next frame, or [`Step::Idle`] after waiting at most about 100 ms.
    ///
    /// # Errors
    /// The source's read error.
    fn next(&mut self) -> Result<Step<'_>>;
    /// The capture's clock now, ns since the Unix epoch: the wall clock for a live capture,
    /// the replay's position in the file's time for a replay.
    fn now_ns(&self) -> u64;
    /// Frames dropped so far as libpcap (or the sniffer) counts them: (buffer full, interface).
    fn drops(&mut self) -> Option<(u64, u64)>;
    /// Pause or resume a replay (a live capture goes on).
    fn set_paused(&mut self, _paused: bool) {}
    /// Lines to print once the screen is closed (the tagged frames a filter missed).
    fn closing_notes(&self) -> Vec<String> {
        Vec::new()
    }
}

/// The wall clock, ns since the Unix epoch.
pub fn wall_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// One packet of the selected flow, for the detail view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Brief {
    /// Frame number.
    pub number: u64,
    /// Capture time, ns since the Unix epoch.
    pub ts_ns: u64,
    /// Opcode token (`RC_RDMA_WRITE_FIRST`).
    pub opcode: &'static str,
    /// BTH PSN (24 bits).
    pub psn: u32,
    /// Payload bytes.
    pub payload: u32,
    /// IP ECN is CE.
    pub ce: bool,
    /// BTH AckReq.
    pub ack_req: bool,
}

/// What the screen gets about four times a second.
#[derive(Clone, Debug, Default)]
pub struct Tick {
    /// The capture's clock, ns (see [`Feed::now_ns`]).
    pub now_ns: u64,
    /// Frames so far, and of them RoCE.
    pub frames: u64,
    /// RoCE frames so far.
    pub roce: u64,
    /// Wire bytes of every frame so far.
    pub bytes: u64,
    /// libpcap's drops: (buffer full, interface).
    pub drops: Option<(u64, u64)>,
    /// Every flow's counters.
    pub flows: Vec<LiveFlow>,
    /// The latest report built (for the findings pane and the gaps of the detail view).
    pub report: Option<Arc<Report>>,
    /// The selected flow's last packets, oldest first.
    pub recent: Vec<Brief>,
    /// Why the input ended (`None` while it runs).
    pub ended: Option<String>,
    /// The result of the last `w`.
    pub message: Option<String>,
}

/// What the screen asks the capture thread.
#[derive(Clone, Debug)]
pub enum Command {
    /// Keep the last packets of this flow (the selection changed).
    Select(Option<FlowKey>),
    /// Write the frames kept so far to this pcapng file.
    Write(PathBuf),
    /// Pause or resume (a replay stops reading; a live capture goes on).
    Pause(bool),
}

/// Settings of the capture thread.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Decoder settings (`--roce-port`, `--vxlan-port`).
    pub decode: DecodeConfig,
    /// Analysis settings (`--mtu`, `--max-flows`, `--encap-session`).
    pub analyze: AnalyzeConfig,
    /// The frames' link type.
    pub linktype: LinkType,
    /// Snap length written into a `w` file's interface block, bytes.
    pub snaplen: u32,
    /// Most bytes of frames kept for `w` (the oldest are dropped first).
    pub keep_bytes: usize,
}

/// The last frames, bounded by their bytes.
struct Ring {
    frames: VecDeque<capfile::Record>,
    bytes: usize,
    cap: usize,
    /// Frames dropped from the front.
    dropped: u64,
}

impl Ring {
    fn push(&mut self, rec: &Record<'_>) {
        if self.cap == 0 {
            return;
        }
        // Reuse the oldest frame's buffer once full.
        let mut data = Vec::new();
        while self.bytes + rec.data.len() > self.cap
            && let Some(old) = self.frames.pop_front()
        {
            self.bytes -= old.data.len();
            self.dropped += 1;
            data = old.data;
        }
        data.clear();
        data.extend_from_slice(rec.data);
        self.bytes += data.len();
        self.frames.push_back(capfile::Record {
            ts_ns: rec.ts_ns,
            data,
            orig_len: rec.len,
        });
    }
}

/// The capture thread's state.
pub struct Engine {
    settings: Settings,
    analyzer: Analyzer,
    ring: Ring,
    selected: Option<FlowKey>,
    recent: VecDeque<Brief>,
    frames: u64,
    roce: u64,
    bytes: u64,
    report: Option<Arc<Report>>,
    next_report: Instant,
    /// The report built at the end of the input (no more after it).
    final_report: bool,
    message: Option<String>,
}

impl Engine {
    /// A new engine.
    pub fn new(settings: Settings) -> Engine {
        Engine {
            analyzer: Analyzer::new(settings.analyze.clone()),
            ring: Ring {
                frames: VecDeque::new(),
                bytes: 0,
                cap: settings.keep_bytes,
                dropped: 0,
            },
            settings,
            selected: None,
            recent: VecDeque::new(),
            frames: 0,
            roce: 0,
            bytes: 0,
            report: None,
            next_report: Instant::now(),
            final_report: false,
            message: None,
        }
    }

    /// Decode and analyse one frame, keep it for `w`, and for the detail view when it belongs
    /// to the selected flow.
    pub fn frame(&mut self, rec: &Record<'_>) {
        let frame = decode_frame(
            self.settings.linktype,
            rec.data,
            rec.len,
            &self.settings.decode,
        );
        self.frames += 1;
        self.bytes += u64::from(rec.len);
        if frame.roce().is_some() {
            self.roce += 1;
        }
        self.analyzer.push(rec.number, rec.ts_ns, &frame);
        self.ring.push(rec);
        if let Some(k) = self.selected {
            self.keep_recent(&k, rec, &frame);
        }
    }

    fn keep_recent(&mut self, k: &FlowKey, rec: &Record<'_>, frame: &Frame<'_>) {
        let Some(p) = frame.roce() else { return };
        let Some(bth) = p.bth else { return };
        if bth.dest_qp != k.dest_qp || p.src != k.src || p.dst != k.dst {
            return;
        }
        if self.recent.len() == RECENT {
            self.recent.pop_front();
        }
        self.recent.push_back(Brief {
            number: rec.number,
            ts_ns: rec.ts_ns,
            opcode: Opcode(bth.opcode.0).token(),
            psn: bth.psn,
            payload: p.payload_len,
            ce: p.ecn == Some(crate::decode::Ecn::Ce),
            ack_req: bth.ack_req,
        });
    }

    /// Carry out a command of the screen.
    pub fn command(&mut self, c: Command, feed: &mut dyn Feed) {
        match c {
            Command::Select(k) => {
                if k != self.selected {
                    self.recent.clear();
                }
                self.selected = k;
            }
            Command::Write(path) => self.message = Some(self.write(&path)),
            Command::Pause(p) => feed.set_paused(p),
        }
    }

    /// Write the kept frames to `path` as pcapng; the status line's text.
    fn write(&mut self, path: &std::path::Path) -> String {
        let frames = self.ring.frames.make_contiguous();
        let n = frames.len();
        let result = std::fs::File::create(path)
            .map_err(|e| e.to_string())
            .and_then(|f| {
                let mut w = std::io::BufWriter::new(f);
                capfile::write_pcapng(
                    &mut w,
                    self.settings.linktype.0,
                    self.settings.snaplen,
                    frames,
                )
                .map_err(|e| e.to_string())?;
                std::io::Write::flush(&mut w).map_err(|e| e.to_string())
            });
        match result {
            Ok(()) if self.ring.dropped > 0 => format!(
                "wrote the last {n} frames to {} ({} older ones no longer kept)",
                path.display(),
                self.ring.dropped
            ),
            Ok(()) => format!("wrote {n} frames to {}", path.display()),
            Err(e) => format!("could not write {}: {e}", path.display()),
        }
    }

    /// The tick for the screen now; builds a new report when one is due.
    pub fn tick(&mut self, feed: &mut dyn Feed, ended: Option<&str>) -> Tick {
        let now = Instant::now();
        let due = match ended {
            Some(_) => !std::mem::replace(&mut self.final_report, true),
            None => now >= self.next_report,
        };
        if due {
            let report = self.analyzer.report_so_far();
            let took = now.elapsed();
            self.report = Some(Arc::new(report));
            self.next_report = Instant::now() + REPORT_EVERY.max(took * 10);
        }
        let mut flows = Vec::new();
        self.analyzer.live_flows(&mut flows);
        Tick {
            now_ns: feed.now_ns(),
            frames: self.frames,
            roce: self.roce,
            bytes: self.bytes,
            drops: feed.drops(),
            flows,
            report: self.report.clone(),
            recent: self.recent.iter().cloned().collect(),
            ended: ended.map(str::to_string),
            message: self.message.take(),
        }
    }

    /// Frames read so far.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// End the analysis: the final report.
    pub fn finish(self) -> Report {
        self.analyzer.finish()
    }
}

/// Read `feed` into `engine` until `stop` is set, sending a tick every [`TICK`] (dropped, not
/// waited for, when the screen has not taken the previous ones) and carrying out the screen's
/// commands. At the end of a file the last tick says so and the thread waits for `stop`. A
/// read error ends the reading the same way, its message in the tick.
pub fn run(
    mut engine: Engine,
    feed: &mut dyn Feed,
    ticks: &SyncSender<Tick>,
    commands: &Receiver<Command>,
    stop: &AtomicBool,
) -> Engine {
    let mut next_tick = Instant::now();
    let mut ended: Option<String> = None;
    let mut since_check = 0u32;
    while !stop.load(Ordering::Relaxed) {
        let idle = match ended {
            Some(_) => {
                std::thread::sleep(Duration::from_millis(50));
                true
            }
            None => match feed.next() {
                Ok(Step::Record(rec)) => {
                    engine.frame(&rec);
                    false
                }
                Ok(Step::Idle) => true,
                Ok(Step::End) => {
                    ended = Some("end of file".into());
                    next_tick = Instant::now();
                    true
                }
                Err(e) => {
                    ended = Some(format!("capture error: {e:#}"));
                    next_tick = Instant::now();
                    true
                }
            },
        };
        // The clock is read every 64 frames under load, and whenever the source is idle.
        since_check += 1;
        if !idle && since_check < 64 {
            continue;
        }
        since_check = 0;
        if Instant::now() < next_tick {
            continue;
        }
        next_tick += TICK;
        while let Ok(c) = commands.try_recv() {
            engine.command(c, feed);
        }
        // A full channel: the screen is behind; this tick is dropped, the next one carries
        // the same counters later.
        let _ = ticks.try_send(engine.tick(feed, ended.as_deref()));
        next_tick = next_tick.max(Instant::now());
    }
    engine
}
