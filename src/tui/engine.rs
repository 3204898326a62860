//! The capture side of `top`: a thread that reads frames (libpcap, the verbs sniffer, or a
//! capture file replayed at its own pace), decodes and analyses them exactly as `read` and
//! `capture` do, and hands the screen a [`Tick`] about four times a second through a bounded
//! channel it never waits on. It keeps the last frames (bounded by bytes) for `w`, and the
//! last packets of the flow the screen has selected for the detail view.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::time::{Duration, Instant};

use anyhow::Result;

use super::ring::Ring;
use super::shown::{Shown, View};
use crate::analyze::flow::FlowKey;
use crate::analyze::live::LiveFlow;
use crate::analyze::{AnalyzeConfig, Analyzer, Report};
use crate::decode::{DecodeConfig, Frame, LinkType, Opcode, decode_frame};
use crate::filter::DisplayFilter;
use crate::source::Record;

/// Time between two ticks (the screen redraws at most this often).
pub const TICK: Duration = Duration::from_millis(250);

/// Least time between two reports built for the findings pane (on a thread of their own);
/// more when building one takes long (four times as long as the last one took).
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
    /// The first frame's capture time, ns (the zero of the detail view's times).
    pub first_ts_ns: Option<u64>,
    /// Frames so far.
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
    /// What the display filter passed so far, while one is applied.
    pub shown: Option<Shown>,
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
    /// Apply this display filter (as typed, compiled), or none.
    Filter(Option<(String, Arc<DisplayFilter>)>),
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
    /// The display filter at the start (`top -Y EXPR`): as typed, compiled.
    pub display_filter: Option<(String, Arc<DisplayFilter>)>,
    /// The user root was given up to (`-Z`), named when a `w` file cannot be written.
    pub run_as: Option<String>,
}

/// The detail view's line of a frame of flow `k` (`None` for other frames).
fn brief(k: &FlowKey, rec: &Record<'_>, frame: &Frame<'_>) -> Option<Brief> {
    let p = frame.roce()?;
    let bth = p.bth?;
    if bth.dest_qp != k.dest_qp || p.src != k.src || p.dst != k.dst {
        return None;
    }
    Some(Brief {
        number: rec.number,
        ts_ns: rec.ts_ns,
        opcode: Opcode(bth.opcode.0).token(),
        psn: bth.psn,
        payload: p.payload_len,
        ce: p.ecn == Some(crate::decode::Ecn::Ce),
        ack_req: bth.ack_req,
    })
}

/// The capture thread's state.
pub struct Engine {
    settings: Settings,
    analyzer: Analyzer,
    ring: Ring,
    selected: Option<FlowKey>,
    recent: VecDeque<Brief>,
    /// The display filter and what it passed, while one is applied.
    view: Option<View>,
    frames: u64,
    roce: u64,
    bytes: u64,
    report: Option<Arc<Report>>,
    next_report: Instant,
    /// A report being built on a thread of its own, and when it began.
    building: Option<(Instant, mpsc::Receiver<Report>)>,
    /// The report of the whole input has been begun (no more after it).
    final_report: bool,
    /// The read error that ended the input, if one did.
    error: Option<String>,
    message: Option<String>,
}

impl Engine {
    /// A new engine.
    pub fn new(settings: Settings) -> Engine {
        let view = settings
            .display_filter
            .as_ref()
            .map(|(expr, f)| Self::view_of(&settings, expr, f));
        Engine {
            view,
            analyzer: Analyzer::new(settings.analyze.clone()),
            ring: Ring::new(settings.keep_bytes),
            settings,
            selected: None,
            recent: VecDeque::new(),
            frames: 0,
            roce: 0,
            bytes: 0,
            report: None,
            next_report: Instant::now(),
            building: None,
            final_report: false,
            error: None,
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
        let shown = match &mut self.view {
            Some(v) => {
                let first = self.analyzer.frame_counts().first_ts_ns;
                v.offer(rec, &frame, first.unwrap_or(rec.ts_ns))
            }
            None => true,
        };
        if let (Some(k), true) = (self.selected, shown) {
            self.keep_recent(&k, rec, &frame);
        }
    }

    /// The capture's first frame time, ns (`rec`'s before any frame): the zero of
    /// `frame.time_relative`.
    fn first_ts(&self, rec: &Record<'_>) -> u64 {
        self.analyzer
            .frame_counts()
            .first_ts_ns
            .unwrap_or(rec.ts_ns)
    }

    fn view_of(settings: &Settings, expr: &str, f: &Arc<DisplayFilter>) -> View {
        View::new(expr, Arc::clone(f), &settings.analyze)
    }

    /// Apply display filter `f` (or none): its counts begin again with the frames still kept,
    /// and the detail view's packets are looked for again.
    fn set_filter(&mut self, f: Option<(String, Arc<DisplayFilter>)>) {
        self.view = f.map(|(expr, f)| {
            let mut v = Self::view_of(&self.settings, &expr, &f);
            self.refilter(&mut v);
            v
        });
        self.recent_from_ring();
    }

    /// Count the kept frames into `v`, noting where it began when earlier frames are gone.
    fn refilter(&self, v: &mut View) {
        let mut records = self.ring.records().peekable();
        let oldest = records.peek().map_or(self.frames + 1, |r| r.number);
        if self.frames > self.ring.len() as u64 {
            v.begin_at(oldest);
        }
        for rec in records {
            let frame = self.decode(&rec);
            v.offer(&rec, &frame, self.first_ts(&rec));
        }
    }

    fn keep_recent(&mut self, k: &FlowKey, rec: &Record<'_>, frame: &Frame<'_>) {
        let Some(b) = brief(k, rec, frame) else {
            return;
        };
        if self.recent.len() == RECENT {
            self.recent.pop_front();
        }
        self.recent.push_back(b);
    }

    /// The selected flow's last packets among the kept frames (decoded again: a few ms for the
    /// 64 MiB kept by default, once per change of selection or filter).
    fn recent_from_ring(&mut self) {
        self.recent.clear();
        let Some(k) = self.selected else { return };
        if let Some(v) = &self.view {
            // Tested in order by a new copy of the filter: the view's own (its marks'
            // analysis) has moved past these frames.
            let mut fresh = View::new(&v.shown().expr, v.filter(), &self.settings.analyze);
            for rec in self.ring.records() {
                let frame = self.decode(&rec);
                if fresh.passes(&rec, &frame, self.first_ts(&rec))
                    && let Some(b) = brief(&k, &rec, &frame)
                {
                    if self.recent.len() == RECENT {
                        self.recent.pop_front();
                    }
                    self.recent.push_back(b);
                }
            }
            return;
        }
        let mut found = Vec::new();
        for rec in self.ring.records().rev() {
            if found.len() == RECENT {
                break;
            }
            let frame = self.decode(&rec);
            if let Some(b) = brief(&k, &rec, &frame) {
                found.push(b);
            }
        }
        self.recent.extend(found.into_iter().rev());
    }

    /// Decode a kept frame.
    fn decode<'a>(&self, rec: &Record<'a>) -> Frame<'a> {
        decode_frame(
            self.settings.linktype,
            rec.data,
            rec.len,
            &self.settings.decode,
        )
    }

    /// Carry out a command of the screen.
    pub fn command(&mut self, c: Command, feed: &mut dyn Feed) {
        match c {
            Command::Select(k) => {
                if k != self.selected {
                    self.selected = k;
                    self.recent_from_ring();
                }
            }
            Command::Write(path) => self.message = Some(self.write(&path)),
            Command::Pause(p) => feed.set_paused(p),
            Command::Filter(f) => self.set_filter(f),
        }
    }

    /// Write the kept frames to `path` as pcapng; the status line's text.
    fn write(&mut self, path: &std::path::Path) -> String {
        let n = self.ring.len();
        let (lt, snap) = (self.settings.linktype.0, self.settings.snaplen);
        let result = std::fs::File::create(path)
            .map_err(|e| e.to_string())
            .and_then(|f| {
                let mut w = std::io::BufWriter::new(f);
                self.ring.write_pcapng(&mut w, lt, snap)?;
                std::io::Write::flush(&mut w).map_err(|e| e.to_string())
            });
        match result {
            Ok(()) if self.ring.dropped() > 0 => format!(
                "wrote the last {n} frames to {} ({} older ones no longer kept)",
                path.display(),
                self.ring.dropped()
            ),
            Ok(()) => format!("wrote {n} frames to {}", path.display()),
            Err(e) => match &self.settings.run_as {
                Some(u) => format!(
                    "could not write {} as {u} (-Z): {e}; give a --save-dir {u} can write, or -Z root",
                    path.display()
                ),
                None => format!("could not write {}: {e}", path.display()),
            },
        }
    }

    /// The tick for the screen now; builds a new report when one is due.
    pub fn tick(&mut self, feed: &mut dyn Feed, ended: Option<&str>) -> Tick {
        self.take_report();
        let due = match ended {
            Some(_) => !self.final_report,
            None => Instant::now() >= self.next_report,
        };
        if due && self.building.is_none() {
            self.begin_report();
            self.final_report = ended.is_some();
        }
        let mut flows = Vec::new();
        self.analyzer.live_flows(&mut flows);
        Tick {
            now_ns: feed.now_ns(),
            first_ts_ns: self.analyzer.frame_counts().first_ts_ns,
            frames: self.frames,
            roce: self.roce,
            bytes: self.bytes,
            drops: feed.drops(),
            flows,
            report: self.report.clone(),
            recent: self.recent.iter().cloned().collect(),
            ended: ended.map(str::to_string),
            message: self.message.take(),
            shown: self.view.as_ref().map(|v| v.shown().clone()),
        }
    }

    /// Frames read so far.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// The read error that ended the input, if one did.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Build a report of the frames so far on a thread of its own: only the copy of the
    /// analysis state is made on the capture thread. Built here if no thread can be started.
    fn begin_report(&mut self) {
        let copy = self.analyzer.snapshot();
        let (tx, rx) = mpsc::sync_channel(1);
        let spawned = std::thread::Builder::new()
            .name("top-report".into())
            .spawn(move || {
                let _ = tx.send(copy.finish());
            });
        if spawned.is_ok() {
            self.building = Some((Instant::now(), rx));
        } else {
            self.report = Some(Arc::new(self.analyzer.report_so_far()));
            self.next_report = Instant::now() + REPORT_EVERY;
        }
    }

    /// Take the report being built if it is ready; the next is due after a second, or four
    /// times as long as this one took (its thread shares the CPUs with the capture).
    fn take_report(&mut self) {
        let Some((began, rx)) = &self.building else {
            return;
        };
        match rx.try_recv() {
            Ok(r) => {
                self.report = Some(Arc::new(r));
                self.next_report = Instant::now() + REPORT_EVERY.max(began.elapsed() * 4);
                self.building = None;
            }
            Err(mpsc::TryRecvError::Empty) => {}
            Err(mpsc::TryRecvError::Disconnected) => self.building = None,
        }
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
                    engine.error = Some(format!("{e:#}"));
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
        // the same counters later (and the `w` message it held).
        if let Err(TrySendError::Full(t)) = ticks.try_send(engine.tick(feed, ended.as_deref())) {
            engine.message = t.message;
        }
        next_tick = next_tick.max(Instant::now());
    }
    engine
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::Address;
    use crate::decode::Opcode;
    use crate::source::FileSource;
    use crate::synth::frame::{Bth, Packet};
    use std::sync::mpsc;

    /// Frames of two QPs from 10.0.0.1 to 10.0.0.2: `n` SEND ONLY to QP 0x11 (PSN 0, 1, …,
    /// 100 payload bytes) and after each of them a SEND ONLY to QP 0x22, 1 µs apart.
    fn frames(n: u32) -> Vec<(u64, Vec<u8>)> {
        let mut v = Vec::new();
        for i in 0..n {
            for qp in [0x11, 0x22] {
                let mut p = Packet::v4(
                    [10, 0, 0, 1],
                    [10, 0, 0, 2],
                    Bth {
                        opcode: Opcode(0x04),
                        dest_qp: qp,
                        psn: i,
                        ..Bth::default()
                    },
                );
                p.payload_len = 100;
                v.push((1_000 * v.len() as u64, p.build()));
            }
        }
        v
    }

    /// A feed of frames in memory, all due at once.
    struct VecFeed {
        frames: Vec<(u64, Vec<u8>)>,
        next: usize,
    }

    impl Feed for VecFeed {
        fn next(&mut self) -> Result<Step<'_>> {
            let Some((ts, data)) = self.frames.get(self.next) else {
                return Ok(Step::End);
            };
            self.next += 1;
            Ok(Step::Record(Record {
                number: self.next as u64,
                ts_ns: *ts,
                base_ts_ns: 0,
                caplen: data.len() as u32,
                len: data.len() as u32,
                data,
            }))
        }
        fn now_ns(&self) -> u64 {
            self.frames.last().map_or(0, |f| f.0)
        }
        fn drops(&mut self) -> Option<(u64, u64)> {
            None
        }
    }

    fn settings(keep_bytes: usize) -> Settings {
        Settings {
            decode: DecodeConfig::default(),
            analyze: AnalyzeConfig::default(),
            linktype: LinkType::ETHERNET,
            snaplen: 65535,
            keep_bytes,
            display_filter: None,
            run_as: None,
        }
    }

    fn key(qp: u32) -> FlowKey {
        FlowKey {
            src: Address::V4([10, 0, 0, 1]),
            dst: Address::V4([10, 0, 0, 2]),
            dest_qp: qp,
            session: None,
        }
    }

    /// Frames in a pcapng file, read back through the project's reader.
    fn count_frames(path: &std::path::Path) -> u64 {
        let mut src = FileSource::open(path.to_str().unwrap()).unwrap();
        let mut n = 0;
        while src.next_record().unwrap().is_some() {
            n += 1;
        }
        n
    }

    #[test]
    fn thread_ticks_commands_and_end() {
        let sent = frames(100);
        let wire: u64 = sent.iter().map(|f| f.1.len() as u64).sum();
        let (tick_tx, tick_rx) = mpsc::sync_channel(4);
        let (cmd_tx, cmd_rx) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = Arc::clone(&stop);
        let frames = sent.clone();
        let t = std::thread::spawn(move || {
            let mut feed = VecFeed { frames, next: 0 };
            run(
                Engine::new(settings(1 << 20)),
                &mut feed,
                &tick_tx,
                &cmd_rx,
                &stop2,
            )
            .frames()
        });
        let next = || tick_rx.recv_timeout(Duration::from_secs(10)).unwrap();
        let mut tick = next();
        while tick.ended.is_none() {
            tick = next();
        }
        assert_eq!(tick.ended.as_deref(), Some("end of file"));
        assert_eq!((tick.frames, tick.roce, tick.bytes), (200, 200, wire));
        let packets: Vec<(u32, u64)> = tick
            .flows
            .iter()
            .map(|f| (f.key.dest_qp, f.packets))
            .collect();
        assert_eq!(packets, [(0x11, 100), (0x22, 100)]);
        // The report of the whole input follows (built on a thread of its own).
        while tick.report.as_ref().is_none_or(|r| r.frames.total < 200) {
            tick = next();
        }
        let report = tick.report.expect("the report at the end");
        assert_eq!(report.flows.len(), 2);
        assert_eq!(report.frames.total, 200);
        // Selecting QP 0x22 finds its last packets among the kept frames; w writes them all.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.pcapng");
        cmd_tx.send(Command::Select(Some(key(0x22)))).unwrap();
        cmd_tx.send(Command::Write(path.clone())).unwrap();
        let mut tick = next();
        while tick.message.is_none() {
            tick = next();
        }
        assert_eq!(
            tick.message.as_deref(),
            Some(format!("wrote 200 frames to {}", path.display()).as_str())
        );
        assert_eq!(count_frames(&path), 200);
        let psns: Vec<u32> = tick.recent.iter().map(|b| b.psn).collect();
        assert_eq!(psns, (100 - RECENT as u32..100).collect::<Vec<_>>());
        assert!(tick.recent.iter().all(|b| b.opcode == "RC_SEND_ONLY"));
        // Frame numbers: QP 0x22's packets are the even frames.
        assert_eq!(tick.recent.last().map(|b| b.number), Some(200));
        stop.store(true, Ordering::SeqCst);
        assert_eq!(t.join().unwrap(), 200);
    }

    /// Push `sent` into `e`, numbered from `first`.
    fn push_all(e: &mut Engine, sent: &[(u64, Vec<u8>)], first: u64) {
        for (i, (ts, data)) in sent.iter().enumerate() {
            e.frame(&Record {
                number: first + i as u64,
                ts_ns: *ts,
                base_ts_ns: 0,
                caplen: data.len() as u32,
                len: data.len() as u32,
                data,
            });
        }
    }

    fn filter(expr: &str) -> Command {
        Command::Filter(Some((
            expr.to_string(),
            crate::tui::shown::compile(expr).unwrap(),
        )))
    }

    #[test]
    fn a_filter_counts_the_kept_frames_again_then_new_ones() {
        let mut feed = VecFeed {
            frames: Vec::new(),
            next: 0,
        };
        let mut e = Engine::new(settings(1 << 20));
        // 30 frames: QP 0x11 odd frames, QP 0x22 even ones (PSN 0-14 each).
        push_all(&mut e, &frames(15), 1);
        e.command(Command::Select(Some(key(0x22))), &mut feed);
        e.command(filter("bth.dest_qp == 0x22 && bth.psn >= 10"), &mut feed);
        let t = e.tick(&mut feed, None);
        let s = t.shown.expect("a filter");
        assert_eq!((s.frames, s.from_frame), (5, None));
        assert_eq!(s.flows[&key(0x22)].packets, 5);
        assert!(!s.flows.contains_key(&key(0x11)));
        // The detail view lists the packets the filter passes.
        let psns: Vec<u32> = t.recent.iter().map(|b| b.psn).collect();
        assert_eq!(psns, [10, 11, 12, 13, 14]);
        // The analysis still sees every frame.
        assert_eq!(t.flows.iter().map(|f| f.packets).sum::<u64>(), 30);
        // New frames are counted as they come (PSN 0-14 again: none passes, then 10-14 do).
        push_all(&mut e, &frames(15), 31);
        let t = e.tick(&mut feed, None);
        assert_eq!(t.shown.as_ref().map(|s| s.frames), Some(10));
        assert_eq!(t.recent.len(), 10);
        // Cleared.
        e.command(Command::Filter(None), &mut feed);
        let t = e.tick(&mut feed, None);
        assert!(t.shown.is_none());
        assert_eq!(t.recent.len(), 30);
    }

    #[test]
    fn a_filter_after_frames_were_dropped_says_where_it_began() {
        let sent = frames(15);
        let len = sent[0].1.len();
        let mut feed = VecFeed {
            frames: Vec::new(),
            next: 0,
        };
        // Room for 10 frames: 21-30 are kept.
        let mut e = Engine::new(settings(10 * len));
        push_all(&mut e, &sent, 1);
        e.command(filter("bth.dest_qp == 0x22"), &mut feed);
        let s = e.tick(&mut feed, None).shown.expect("a filter");
        assert_eq!((s.frames, s.from_frame), (5, Some(21)));
    }

    #[test]
    fn kept_frames_are_bounded_by_bytes() {
        let sent = frames(50);
        let len = sent[0].1.len();
        // Room for 10 frames.
        let mut e = Engine::new(settings(10 * len + len / 2));
        for (i, (ts, data)) in sent.iter().enumerate() {
            e.frame(&Record {
                number: i as u64 + 1,
                ts_ns: *ts,
                base_ts_ns: 0,
                caplen: data.len() as u32,
                len: data.len() as u32,
                data,
            });
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.pcapng");
        let msg = e.write(&path);
        assert_eq!(
            msg,
            format!(
                "wrote the last 10 frames to {} (90 older ones no longer kept)",
                path.display()
            )
        );
        assert_eq!(count_frames(&path), 10);
        // The counters still cover every frame.
        assert_eq!(e.frames(), 100);
    }
}
