//! The read loop shared by `capture`'s two sources (libpcap, and the RDMA sniffer): read
//! frames, hand them to the run, flush output while idle, stop on `-c`, `--duration`, a signal,
//! a closed output or an error; and each source's capture around it, from the readiness line to
//! the end-of-capture report ([`libpcap`], `sniffer`), once `cli` has opened and set up the
//! source (device, filter, savefile, privileges, signals).

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use anyhow::Result;

use super::{Outcome, Run, io_outcome};
use crate::source::live::{LiveSource, Next, Stats};

/// Why a capture stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// `-c N` reached.
    Count,
    /// `--duration` reached.
    Duration,
    /// Ctrl-C, SIGTERM or SIGHUP.
    Signal,
    /// Stdout was closed.
    OutputClosed,
    /// Writing the output failed.
    OutputError,
    /// Reading the source failed.
    ReadError,
}

impl Stop {
    /// The report's words for it.
    pub fn text(self) -> &'static str {
        match self {
            Stop::Count => "frame count reached",
            Stop::Duration => "duration reached",
            Stop::Signal => "interrupted",
            Stop::OutputClosed => "output closed",
            Stop::OutputError => "output error",
            Stop::ReadError => "capture error",
        }
    }
}

/// A live source of frames.
pub trait FrameSource {
    /// The next frame without waiting.
    ///
    /// # Errors
    /// The source's read error.
    fn next_frame(&mut self) -> Result<Next<'_>>;
    /// Wait for frames at most about 100 ms; `Ok(false)` when none came.
    ///
    /// # Errors
    /// The source's wait error.
    fn wait(&mut self) -> Result<bool>;
    /// Push the savefile's buffered frames to disk.
    ///
    /// # Errors
    /// The savefile's write error.
    fn flush_savefile(&mut self) -> Result<()>;
}

impl FrameSource for LiveSource {
    fn next_frame(&mut self) -> Result<Next<'_>> {
        Ok(LiveSource::next_frame(self)?)
    }
    fn wait(&mut self) -> Result<bool> {
        Ok(LiveSource::wait(self)?)
    }
    fn flush_savefile(&mut self) -> Result<()> {
        Ok(LiveSource::flush_savefile(self)?)
    }
}

#[cfg(feature = "verbs")]
impl FrameSource for crate::source::sniffer::verbs::RdmaSniffer {
    fn next_frame(&mut self) -> Result<Next<'_>> {
        Ok(crate::source::sniffer::verbs::RdmaSniffer::next_frame(
            self,
        )?)
    }
    fn wait(&mut self) -> Result<bool> {
        Ok(crate::source::sniffer::verbs::RdmaSniffer::wait(self, 100)?)
    }
    fn flush_savefile(&mut self) -> Result<()> {
        crate::source::sniffer::verbs::RdmaSniffer::flush_savefile(self).map_err(anyhow::Error::msg)
    }
}

/// How the loop ended, and the errors to report after the capture report.
pub struct Ended {
    /// Why.
    pub stop: Stop,
    /// An output error other than a closed pipe.
    pub out_err: Option<anyhow::Error>,
    /// A read error.
    pub read_err: Option<anyhow::Error>,
}

impl Ended {
    /// Finish the run: the report and the last lines, and the files asked for (`--html`, the
    /// Parquet export), which are written even when the output was closed (`| head`) or failed
    /// and stopped the capture; the first output error is kept.
    pub fn finish_run(&mut self, run: &mut Run) {
        if let Err(e) = io_outcome(run.finish()) {
            self.out_err.get_or_insert(e);
        }
    }

    /// The command's result once the capture report is printed: the read error first (after
    /// `frames` frames), then the output's, then the savefile's (`save_err`); a closed output
    /// ends quietly.
    ///
    /// # Errors
    /// The first of those errors.
    pub fn outcome(self, frames: u64, save_err: Option<anyhow::Error>) -> Result<Outcome> {
        if let Some(e) = self.read_err {
            return Err(e.context(format!("capture stopped after {frames} frames")));
        }
        if let Some(e) = self.out_err.or(save_err) {
            return Err(e);
        }
        Ok(if self.stop == Stop::OutputClosed {
            Outcome::ClosedPipe
        } else {
            Outcome::Ok
        })
    }
}

/// The first line of the end-of-capture report: frames captured on `on`, why it stopped and
/// the savefile.
pub fn summary_line(run: &Run, on: &str, stop: Stop, savefile: Option<&str>) -> String {
    let mut line = format!(
        "{} frames captured on {on} ({} RoCE); stopped: {}",
        run.frames(),
        run.roce_frames(),
        stop.text()
    );
    if let Some(p) = savefile {
        line.push_str(&format!("; saved to {p}"));
    }
    line
}

/// How a capture runs once its source is set up.
#[derive(Clone, Copy, Debug)]
pub struct Live<'a> {
    /// Stop signals received so far (the count the signal handler raises).
    pub signals: &'a Arc<AtomicU32>,
    /// `--duration`: when to stop.
    pub deadline: Option<Instant>,
    /// Standard output is read live: flush it whenever the source has nothing buffered.
    pub live_out: bool,
    /// `-w FILE`: the savefile, named in the report.
    pub savefile: Option<&'a str>,
    /// The user's BPF filter expression (`-f`), for the tagged frames it missed.
    pub filter: Option<&'a str>,
    /// `-v`: the filter in force, shown after the readiness line.
    pub shown_filter: Option<&'a str>,
}

/// `capture IFACE` through libpcap: the readiness line (tests wait for it), the read loop, then
/// the run finished and the end-of-capture report on standard error (the summary line,
/// libpcap's drop counters, the tagged frames `-f` missed, a hint when no RoCE frame passed the
/// default filter); the savefile is closed with `src`.
///
/// # Errors
/// As [`Ended::outcome`]: a read error, an output error other than a closed pipe, the
/// savefile's write error.
pub fn libpcap(mut src: LiveSource, run: &mut Run, live: &Live<'_>) -> Result<Outcome> {
    // Readiness line, as tcpdump prints "listening on …".
    eprintln!(
        "capturing on {}, link-type {}, snapshot length {} bytes",
        src.iface(),
        src.linktype().name(),
        src.snaplen()
    );
    if let Some(f) = live.shown_filter {
        eprintln!("capture filter: {f}");
    }
    let mut ended = read_loop(&mut src, run, live.signals, live.deadline, live.live_out);
    // Stop: flush everything, then report.
    ended.finish_run(run);
    let save_err = src.flush_savefile().err().map(anyhow::Error::from);
    let stats = src.stats().ok();
    eprintln!(
        "{}",
        summary_line(run, src.iface(), ended.stop, live.savefile)
    );
    if let Some(line) = stats.and_then(drop_warning) {
        eprintln!("{line}");
    }
    if let (Some(m), Some(f)) = (src.tag_miss(), live.filter)
        && let Some(line) = m.message(f)
    {
        eprintln!("{line}");
    }
    if run.roce_frames() == 0 && live.filter.is_none() {
        // The default filter keeps RoCE itself, not a mirror session's tunnel around it.
        eprintln!(
            "no RoCE frames passed the default filter (RoCEv2 to UDP port 4791, RoCEv1); capturing a mirror session? ERSPAN and GRE mirrors need -f 'ip proto 47', VXLAN mirrors -f 'udp port 4789'"
        );
    }
    drop(src); // closes the savefile (pcap_dump_close)
    ended.outcome(run.frames(), save_err)
}

/// The warning line when libpcap dropped frames.
fn drop_warning(s: Stats) -> Option<String> {
    (s.dropped > 0 || s.if_dropped > 0).then(|| {
        format!(
            "warning: libpcap dropped frames: {} because the capture buffer was full (ps_drop), \
             {} in the interface or driver (ps_ifdrop); try a larger --buffer-size, a narrower \
             filter, or -w FILE with output to a file",
            s.dropped, s.if_dropped
        )
    })
}

/// `capture DEVICE` through the verbs sniffer: as [`libpcap`], with the sniffer's readiness
/// line and its own counters in the report.
///
/// # Errors
/// As [`Ended::outcome`].
#[cfg(feature = "verbs")]
pub fn sniffer(
    mut src: crate::source::sniffer::verbs::RdmaSniffer,
    run: &mut Run,
    live: &Live<'_>,
) -> Result<Outcome> {
    eprintln!(
        "capturing on {} (verbs sniffer: raw packet QP + sniffer flow rule; every packet of the port is copied to host memory), link-type {}, snapshot length {} bytes",
        src.name(),
        src.linktype().name(),
        src.snaplen()
    );
    if let Some(e) = live.shown_filter {
        eprintln!("capture filter (applied in user space): {e}");
    }
    let mut ended = read_loop(&mut src, run, live.signals, live.deadline, live.live_out);
    ended.finish_run(run);
    let save_err = src
        .flush_savefile()
        .err()
        .map(|m| anyhow::anyhow!(m).context("writing the savefile"));
    eprintln!(
        "{}",
        summary_line(run, &src.name(), ended.stop, live.savefile)
    );
    eprintln!("{}", src.report());
    if let (Some(m), Some(f)) = (src.tag_miss(), live.filter)
        && let Some(l) = m.message(f)
    {
        eprintln!("{l}");
    }
    drop(src);
    ended.outcome(run.frames(), save_err)
}

/// Why to stop after an output result, if at all: a closed pipe ends quietly, another error
/// is kept in `out_err` for after the report.
fn output_stop(r: std::io::Result<()>, out_err: &mut Option<anyhow::Error>) -> Option<Stop> {
    match io_outcome(r) {
        Ok(None) => None,
        Ok(Some(_)) => Some(Stop::OutputClosed),
        Err(e) => {
            *out_err = Some(e);
            Some(Stop::OutputError)
        }
    }
}

/// Idle (no packet for the read timeout): push out what is buffered — stdout that is not live,
/// and the savefile. Returns why to stop, if an error says so.
fn idle_flush<S: FrameSource>(run: &mut Run, src: &mut S, e: &mut Ended) -> Option<Stop> {
    if let Some(stop) = output_stop(run.flush(), &mut e.out_err) {
        return Some(stop);
    }
    if let Err(err) = src.flush_savefile() {
        e.read_err = Some(err);
        return Some(Stop::ReadError);
    }
    None
}

/// Read `src` into `run` until something says stop. Live output is flushed whenever the
/// source has nothing buffered, before it waits: every packet is shown as soon as it is read,
/// yet under load a burst costs one write instead of one per packet.
pub fn read_loop<S: FrameSource>(
    src: &mut S,
    run: &mut Run,
    signals: &Arc<AtomicU32>,
    deadline: Option<Instant>,
    live_out: bool,
) -> Ended {
    let mut e = Ended {
        stop: Stop::Count,
        out_err: None,
        read_err: None,
    };
    e.stop = loop {
        if run.done() {
            break Stop::Count;
        }
        if signals.load(Ordering::SeqCst) > 0 {
            break Stop::Signal;
        }
        if deadline.is_some_and(|t| Instant::now() >= t) {
            break Stop::Duration;
        }
        match src.next_frame() {
            Ok(Next::Record(rec)) => {
                if let Some(stop) = output_stop(run.record(&rec), &mut e.out_err) {
                    break stop;
                }
            }
            Ok(Next::Empty) => {
                if live_out && let Some(stop) = output_stop(run.flush(), &mut e.out_err) {
                    break stop;
                }
                match src.wait() {
                    Ok(true) => {}
                    Ok(false) => {
                        if let Some(stop) = idle_flush(run, src, &mut e) {
                            break stop;
                        }
                    }
                    Err(err) => {
                        e.read_err = Some(err);
                        break Stop::ReadError;
                    }
                }
            }
            Ok(Next::Timeout) => {
                if let Some(stop) = idle_flush(run, src, &mut e) {
                    break stop;
                }
            }
            // pcap_breakloop from the signal handler: the loop head sees the signal count.
            // A frame the user's filter rejected: read on.
            Ok(Next::Stopped | Next::Skipped) => {}
            Err(err) => {
                e.read_err = Some(err);
                break Stop::ReadError;
            }
        }
    };
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libpcap_drops_are_warned_of() {
        let stats = |dropped, if_dropped| Stats {
            received: 10,
            dropped,
            if_dropped,
        };
        assert_eq!(drop_warning(stats(0, 0)), None);
        let w = drop_warning(stats(3, 0)).unwrap();
        assert!(
            w.starts_with(
                "warning: libpcap dropped frames: 3 because the capture buffer was full (ps_drop), 0 in the interface or driver (ps_ifdrop);"
            ),
            "{w}"
        );
        assert!(
            drop_warning(stats(0, 2))
                .unwrap()
                .contains(", 2 in the interface")
        );
    }
}
