//! `roce-inspect capture IFACE` (live capture → decoder → printers, optional savefile) and
//! `roce-inspect list` (capture interfaces and the note on NIC-offloaded RoCE).

use std::io::{self, BufWriter, IsTerminal, Write};
use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use pcap::{ConnectionStatus, Device};

use super::CaptureArgs;
use super::pipeline::{Outcome, Run, io_outcome};
use crate::output::parquet::{ExportTarget, Exporter};
use crate::source::live::{self, LiveOptions, LiveSource, Next, OFFLOAD_NOTE, Stats};

/// Why a capture stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    Count,
    Duration,
    Signal,
    OutputClosed,
    OutputError,
    ReadError,
}

impl Stop {
    fn text(self) -> &'static str {
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

/// Whether standard output is read live (a terminal, a pipe or a socket), so every printed
/// frame is flushed at once; a regular file or /dev/null gets buffered output.
fn stdout_is_live() -> bool {
    if io::stdout().is_terminal() {
        return true;
    }
    // SAFETY: fstat on fd 1 with a zeroed, properly sized stat buffer.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(1, &mut st) } != 0 {
        return false;
    }
    let fmt = st.st_mode & libc::S_IFMT;
    fmt == libc::S_IFIFO || fmt == libc::S_IFSOCK
}

/// Install the Ctrl-C / SIGTERM / SIGHUP handler: the first signal asks the capture loop to stop
/// (and wakes a blocked read through `pcap_breakloop`); a second one exits at once with status
/// 130 (C `exit()` still flushes the savefile's stdio buffer).
fn install_stop_handler(src: &mut LiveSource) -> Result<Arc<AtomicU32>> {
    let signals = Arc::new(AtomicU32::new(0));
    let seen = Arc::clone(&signals);
    let breaker = src.break_handle();
    ctrlc::set_handler(move || {
        if seen.fetch_add(1, Ordering::SeqCst) == 0 {
            breaker.breakloop();
        } else {
            eprintln!("roce-inspect: interrupted again, exiting without the report");
            std::process::exit(130);
        }
    })
    .context("installing the Ctrl-C/SIGTERM handler")?;
    Ok(signals)
}

/// `roce-inspect capture IFACE`.
///
/// # Errors
/// One-line errors: no such interface, permission denied, interface down, unsupported link
/// type, bad filter, savefile not writable; a read error during the capture (after the
/// report); an output error other than a closed pipe.
pub fn capture(a: &CaptureArgs) -> Result<Outcome> {
    // Immediate mode (one wake-up per packet) only when someone reads the output live; a
    // capture to a file or /dev/null is read in blocks, which keeps up with far higher rates.
    let live_out = stdout_is_live();
    let opts = LiveOptions {
        snaplen: a.snaplen,
        promisc: a.promisc,
        buffer_size: a.buffer_size,
        immediate: live_out && !a.buffered,
        ..LiveOptions::default()
    };
    let d = &a.display;
    let mut src = LiveSource::open(a.interface(), &opts)?;
    let filter = match &d.filter {
        Some(f) => {
            src.set_filter(f)?;
            f.clone()
        }
        None => src.set_default_filter(&d.roce_ports)?,
    };
    if let Some(path) = &a.write {
        src.save_to(path)?;
    }
    let signals = install_stop_handler(&mut src)?;

    // Live output is flushed whenever the capture has read everything buffered, before it
    // waits: every packet is shown as soon as it is read, yet under load a burst costs one
    // write instead of one per packet.
    let mut run = Run::new(d, src.linktype());
    if let Some(dir) = &a.parquet {
        run.export_to(Exporter::create(export_target(a, dir))?);
    }
    let deadline = a
        .duration
        .map(|s| Instant::now() + Duration::from_secs_f64(s));

    // Readiness line, as tcpdump prints "listening on …"; tests wait for it.
    eprintln!(
        "capturing on {}, link-type {}, snapshot length {} bytes",
        src.iface(),
        src.linktype().name(),
        src.snaplen()
    );
    if d.verbose {
        eprintln!("capture filter: {filter}");
    }

    let mut out_err = None;
    let mut read_err = None;
    let stop = loop {
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
                if let Some(stop) = output_stop(run.record(&rec), &mut out_err) {
                    break stop;
                }
            }
            Ok(Next::Empty) => {
                if live_out && let Some(stop) = output_stop(run.flush(), &mut out_err) {
                    break stop;
                }
                match src.wait() {
                    Ok(true) => {}
                    Ok(false) => {
                        if let Some(stop) =
                            idle_flush(&mut run, &mut src, &mut out_err, &mut read_err)
                        {
                            break stop;
                        }
                    }
                    Err(e) => {
                        read_err = Some(anyhow::Error::new(e));
                        break Stop::ReadError;
                    }
                }
            }
            Ok(Next::Timeout) => {
                if let Some(stop) = idle_flush(&mut run, &mut src, &mut out_err, &mut read_err) {
                    break stop;
                }
            }
            // pcap_breakloop from the signal handler: the loop head sees the signal count.
            Ok(Next::Stopped) => {}
            Err(e) => {
                read_err = Some(anyhow::Error::new(e));
                break Stop::ReadError;
            }
        }
    };

    // Stop: flush everything, then report.
    let closed = stop == Stop::OutputClosed;
    if !closed && out_err.is_none() {
        match io_outcome(run.finish()) {
            Ok(_) => {}
            Err(e) => out_err = Some(e),
        }
    }
    let save_err = src.flush_savefile().err();
    let stats = src.stats().ok();

    report(&run, &src, stats, stop, a.write.as_deref());
    drop(src); // closes the savefile (pcap_dump_close)

    if let Some(e) = read_err {
        return Err(e.context(format!("capture stopped after {} frames", run.frames())));
    }
    if let Some(e) = out_err {
        return Err(e);
    }
    if let Some(e) = save_err {
        return Err(e.into());
    }
    if closed {
        return Ok(Outcome::ClosedPipe);
    }
    Ok(Outcome::Ok)
}

/// Where `capture --parquet DIR` writes: the capture is named after the `-w` file, else
/// `IFACE-UNIXTIME`; the host is `--host`, else this machine's host name.
fn export_target(a: &CaptureArgs, dir: &std::path::Path) -> ExportTarget {
    let capture = match &a.write {
        Some(w) => super::export::capture_name(w),
        None => {
            let secs = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0);
            format!("{}-{secs}", a.interface())
        }
    };
    ExportTarget {
        dir: dir.to_path_buf(),
        capture,
        host: a.host.clone().unwrap_or_else(host_name),
    }
}

/// This machine's host name (`gethostname(2)`), or `localhost` if it cannot be read.
fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname NUL-terminates within it or fails.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    let end = buf.iter().position(|&b| b == 0).unwrap_or(0);
    match (rc, std::str::from_utf8(&buf[..end])) {
        (0, Ok(h)) if !h.is_empty() => h.to_string(),
        _ => "localhost".to_string(),
    }
}

/// Idle (no packet for the read timeout): push out what is buffered — stdout that is not live,
/// and the savefile. Returns why to stop, if an error says so.
/// Why to stop after an output result, if at all: a closed pipe ends quietly, another error
/// is kept in `out_err` for after the report.
fn output_stop(r: io::Result<()>, out_err: &mut Option<anyhow::Error>) -> Option<Stop> {
    match io_outcome(r) {
        Ok(None) => None,
        Ok(Some(_)) => Some(Stop::OutputClosed),
        Err(e) => {
            *out_err = Some(e);
            Some(Stop::OutputError)
        }
    }
}

fn idle_flush(
    run: &mut Run,
    src: &mut LiveSource,
    out_err: &mut Option<anyhow::Error>,
    read_err: &mut Option<anyhow::Error>,
) -> Option<Stop> {
    if let Some(stop) = output_stop(run.flush(), out_err) {
        return Some(stop);
    }
    if let Err(e) = src.flush_savefile() {
        *read_err = Some(anyhow::Error::new(e));
        return Some(Stop::ReadError);
    }
    None
}

/// The end-of-capture report, on standard error.
fn report(run: &Run, src: &LiveSource, stats: Option<Stats>, stop: Stop, savefile: Option<&str>) {
    let mut line = format!(
        "{} frames captured on {} ({} RoCE)",
        run.frames(),
        src.iface(),
        run.roce_frames()
    );
    line.push_str(&format!("; stopped: {}", stop.text()));
    if let Some(p) = savefile {
        line.push_str(&format!("; saved to {p}"));
    }
    eprintln!("{line}");
    if let Some(s) = stats.filter(|s| s.dropped > 0 || s.if_dropped > 0) {
        eprintln!(
            "warning: libpcap dropped frames: {} because the capture buffer was full (ps_drop), \
             {} in the interface or driver (ps_ifdrop); try a larger --buffer-size, a narrower \
             filter, or -w FILE with output to a file",
            s.dropped, s.if_dropped
        );
    }
}

fn prefix_len(mask: &IpAddr) -> u32 {
    match mask {
        IpAddr::V4(m) => u32::from(*m).count_ones(),
        IpAddr::V6(m) => u128::from(*m).count_ones(),
    }
}

fn flags_text(d: &Device) -> String {
    let f = &d.flags;
    let mut v = Vec::new();
    if f.is_up() {
        v.push("up");
    } else {
        v.push("down");
    }
    if f.is_running() {
        v.push("running");
    }
    if f.is_loopback() {
        v.push("loopback");
    }
    if f.is_wireless() {
        v.push("wireless");
    }
    match f.connection_status {
        ConnectionStatus::Connected => v.push("connected"),
        ConnectionStatus::Disconnected => v.push("disconnected"),
        ConnectionStatus::Unknown | ConnectionStatus::NotApplicable => {}
    }
    v.join(", ")
}

fn write_list(out: &mut impl Write, devices: &[Device]) -> io::Result<()> {
    if devices.is_empty() {
        writeln!(
            out,
            "no capture interfaces found (listing them may need root or CAP_NET_RAW + CAP_NET_ADMIN)"
        )?;
    }
    for (i, d) in devices.iter().enumerate() {
        write!(out, "{}. {} [{}]", i + 1, d.name, flags_text(d))?;
        if let Some(desc) = d.desc.as_deref().filter(|s| !s.is_empty()) {
            write!(out, " ({desc})")?;
        }
        writeln!(out)?;
        for a in &d.addresses {
            match &a.netmask {
                Some(m) => writeln!(out, "     {}/{}", a.addr, prefix_len(m))?,
                None => writeln!(out, "     {}", a.addr)?,
            }
        }
    }
    writeln!(out)?;
    writeln!(out, "{OFFLOAD_NOTE}")?;
    out.flush()
}

/// `roce-inspect list` (alias `interfaces`): the interfaces libpcap sees (`pcap_findalldevs`)
/// with their flags and addresses, then the note on capturing NIC-offloaded RoCE.
///
/// # Errors
/// libpcap's message when the interfaces cannot be listed; output errors other than a closed
/// pipe.
pub fn list() -> Result<Outcome> {
    let devices = live::list_devices().context("listing capture interfaces")?;
    let mut out = BufWriter::new(io::stdout());
    match io_outcome(write_list(&mut out, &devices))? {
        Some(o) => Ok(o),
        None => Ok(Outcome::Ok),
    }
}
