//! `roce-inspect capture IFACE` (the device opened and set up: filter, savefile, privileges,
//! signals; then the capture of [`crate::pipeline::capture_loop`]) and `roce-inspect list`
//! (capture interfaces and the note on NIC-offloaded RoCE).

use std::io::{self, BufWriter, IsTerminal, Write};
use std::net::IpAddr;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use pcap::{ConnectionStatus, Device};

use super::CaptureArgs;
use super::live::{give_up_root, install_stop_handler};
use crate::output::parquet::{ExportTarget, Exporter};
use crate::output::savefile::MarkedWriter;
use crate::pipeline::capture_loop::{self, Live};
use crate::pipeline::{Outcome, Run, io_outcome};
use crate::source::live::{self, LiveError, LiveOptions, LiveSource, OFFLOAD_NOTE};
use crate::source::privdrop::Plan;

/// Whether standard output is read live (a terminal, a pipe or a socket), so every printed
/// frame is flushed at once; a regular file or /dev/null gets buffered output.
pub(super) fn stdout_is_live() -> bool {
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

/// Where `capture --parquet DIR` writes: the capture is named after the `-w` file, else
/// `IFACE-UNIXTIME`; the host is `--host`, else this machine's host name.
fn export_target(a: &CaptureArgs, dir: &std::path::Path) -> ExportTarget {
    let capture = match &a.write {
        Some(w) => crate::output::parquet::capture_name(w),
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

/// `roce-inspect capture IFACE`.
///
/// # Errors
/// One-line errors: no such interface, permission denied, interface down, unsupported link
/// type, bad filter, savefile not writable, no such -Z user, giving up root; a read error
/// during the capture (after the report); an output error other than a closed pipe.
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
    let out = d.plan()?;
    // Who to become once the device is open: decided (and a bad -Z refused) before opening.
    let plan = Plan::resolve(a.user.as_deref())?;
    let mut src = match LiveSource::open(a.interface(), &opts) {
        Ok(s) => s,
        // Not a libpcap interface but an RDMA device: the verbs sniffer.
        Err(LiveError::NoSuchDevice { .. }) if super::sniff::is_rdma_device(a.interface()) => {
            return super::sniff::capture(a, live_out, &plan);
        }
        Err(e @ LiveError::NoSuchDevice { .. }) => {
            return Err(anyhow::anyhow!(
                "{e}; RDMA devices: {}",
                super::sniff::rdma_names()
            ));
        }
        Err(e) => return Err(e.into()),
    };
    let mut run = Run::new(&out, src.linktype());
    run.set_source(&format!("capture on {}", a.interface()));
    let filter = match &d.filter {
        Some(f) => src.set_filter_counting_tag_misses(f, run.roce_predicate())?,
        None => src.set_default_filter(&d.roce_ports)?,
    };
    match (&a.write, &d.display_filter) {
        // With -Y: the shown frames, with their marks as comments (pcapng).
        (Some(path), Some(_)) => {
            run.write_shown(MarkedWriter::create(path, src.linktype().0)?, true)
        }
        (Some(path), None) => src.save_to(path)?,
        (None, _) => {}
    }
    give_up_root(&plan, a)?;
    // Written from here on as the user the capture became.
    if let Some(dir) = &a.parquet {
        run.export_to(Exporter::create(export_target(a, dir))?);
    }
    let signals = install_stop_handler(Some(&mut src))?;
    let live = a.live(&signals, live_out, Some(&filter));
    capture_loop::libpcap(src, &mut run, &live)
}

impl CaptureArgs {
    /// How the capture runs once its source is set up: stopped by `signals` or `--duration`
    /// (counted from now), flushing standard output when `live_out`; `filter_text` is the
    /// capture filter in force, shown with `-v`.
    pub(super) fn live<'a>(
        &'a self,
        signals: &'a std::sync::Arc<std::sync::atomic::AtomicU32>,
        live_out: bool,
        filter_text: Option<&'a str>,
    ) -> Live<'a> {
        let d = &self.display;
        Live {
            signals,
            deadline: self
                .duration
                .map(|s| Instant::now() + Duration::from_secs_f64(s)),
            live_out,
            savefile: self.write.as_deref(),
            filter: d.filter.as_deref(),
            shown_filter: filter_text.filter(|_| d.verbose),
        }
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
    let names: Vec<&str> = devices.iter().map(|d| d.name.as_str()).collect();
    let rdma = crate::source::sniffer::sysfs::devices(std::path::Path::new(
        crate::source::sniffer::sysfs::SYSFS_ROOT,
    ));
    super::sniff::write_rdma_list(out, &rdma, &names)?;
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
