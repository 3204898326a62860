//! `roce-inspect top IFACE` / `top -r FILE`: wires the arguments to a source and the live
//! dashboard of `crate::tui`.

use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result};
use clap::Args;

use super::{ArgError, DisplayArgs, ReportArgs};
use crate::analyze::AnalyzeConfig;
use crate::decode::{DecodeConfig, LinkType, decode_frame};
use crate::pipeline::{Outcome, io_outcome, write_reports};
use crate::source::FileSource;
use crate::source::live::{LiveError, LiveOptions, LiveSource};
use crate::source::privdrop::Plan;
use crate::tui::engine::{Feed, Settings};
use crate::tui::feed::{LiveFeed, ReplayFeed};

/// `top` arguments.
#[derive(Debug, Args)]
pub struct TopArgs {
    /// Interface (or RDMA device, as `capture` takes it) to watch; `-i IFACE` works too.
    #[arg(value_name = "IFACE", conflicts_with_all = ["i_iface", "r_file"])]
    pub iface: Option<String>,
    /// The interface, tcpdump style; same as IFACE.
    #[arg(
        short = 'i',
        id = "i_iface",
        value_name = "IFACE",
        conflicts_with = "r_file"
    )]
    pub i_iface: Option<String>,
    /// Replay a capture file (pcap or pcapng) at its own pace instead of capturing.
    #[arg(short = 'r', id = "r_file", value_name = "FILE")]
    pub r_file: Option<String>,
    /// With -r: replay N times faster than the capture was taken (e.g. 10, 0.5).
    #[arg(long, value_name = "N", default_value_t = 1.0, value_parser = parse_speed,
          requires = "r_file")]
    pub speed: f64,
    /// libpcap BPF filter expression instead of the default RoCE filter.
    #[arg(short = 'f', long = "filter", value_name = "EXPR")]
    pub filter: Option<String>,
    /// Display filter at the start (as `/` sets it): the table counts only the packets it
    /// passes, e.g. `-Y 'bth.dest_qp == 0x11'`; the analysis still sees every packet.
    #[arg(short = 'Y', long = "display-filter", value_name = "EXPR", value_parser = parse_display_filter)]
    pub display_filter: Option<String>,
    /// Bytes kept of each frame (1-262144).
    #[arg(long, value_name = "BYTES", default_value_t = crate::source::live::MAX_SNAPLEN,
          value_parser = clap::value_parser!(u32).range(1..=crate::source::live::MAX_SNAPLEN as i64))]
    pub snaplen: u32,
    /// Put the interface into promiscuous mode.
    #[arg(long)]
    pub promisc: bool,
    /// Kernel capture buffer size: bytes, or with a K, M or G suffix.
    #[arg(long, value_name = "SIZE", default_value = "64M", value_parser = super::parse_size)]
    pub buffer_size: u32,
    /// Most bytes of the latest frames kept in memory for `w` (written as pcapng): bytes, or
    /// with a K, M or G suffix; 0 keeps none.
    #[arg(long, value_name = "SIZE", default_value = "64M", value_parser = parse_keep)]
    pub keep: u32,
    /// Folder `w` writes its pcapng files into.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub save_dir: std::path::PathBuf,
    /// Print the analysis report (as `read --summary`) after the screen closes; with --json,
    /// the report's JSON document.
    #[arg(long)]
    pub summary: bool,
    /// With --summary: the report as one JSON document.
    #[arg(long, requires = "summary")]
    pub json: bool,
    /// Also decode UDP destination port N as RoCEv2 (repeatable).
    #[arg(long = "roce-port", value_name = "N",
          value_parser = clap::value_parser!(u16).range(1..))]
    pub roce_ports: Vec<u16>,
    /// Decapsulate VXLAN on UDP destination port N instead of 4789 (repeatable).
    #[arg(long = "vxlan-port", value_name = "N",
          value_parser = clap::value_parser!(u16).range(1..))]
    pub vxlan_ports: Vec<u16>,
    /// Path MTU in bytes for READ PSN reservation, instead of inferring it.
    #[arg(long, value_name = "BYTES", value_parser = super::parse_mtu)]
    pub mtu: Option<u32>,
    /// Most flows tracked at once.
    #[arg(long = "max-flows", value_name = "N", default_value_t = 16384,
          value_parser = super::positive_usize)]
    pub max_flows: usize,
    /// Split flows by mirror session (ERSPAN session ID / VXLAN VNI) too.
    #[arg(long = "encap-session")]
    pub encap_session: bool,
    /// Once the device is open, run as USER instead of root (tcpdump's -Z, as `capture`):
    /// default the user behind sudo (SUDO_USER), else `nobody`; `-Z root` keeps root. `w` then
    /// writes as USER; a --save-dir that does not exist yet is created and given to USER.
    #[arg(
        short = 'Z',
        long = "relinquish-privileges",
        value_name = "USER",
        conflicts_with = "r_file"
    )]
    pub user: Option<String>,
}

/// `--keep`: a size as `--buffer-size` takes it, or 0.
fn parse_keep(s: &str) -> Result<u32, String> {
    if s.trim() == "0" {
        Ok(0)
    } else {
        super::parse_size(s)
    }
}

/// `-Y`: an expression `top` can filter on (checked here, compiled again for the engine).
fn parse_display_filter(s: &str) -> Result<String, String> {
    crate::tui::shown::compile(s)
        .map(|_| s.to_string())
        .map_err(|e| e.to_string())
}

fn parse_speed(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if (0.001..=1e6).contains(&v) => Ok(v),
        _ => Err(format!(
            "'{s}' is not a speed-up factor (a number from 0.001 to 1000000)"
        )),
    }
}

impl TopArgs {
    /// The interface, given as IFACE or `-i IFACE`.
    fn interface(&self) -> Option<&str> {
        self.iface.as_deref().or(self.i_iface.as_deref())
    }

    /// The display options `read`/`capture` would have for the same settings (the summary's
    /// printer reads them).
    fn display(&self) -> DisplayArgs {
        let mut d = DisplayArgs::default();
        d.filter = self.filter.clone();
        d.json = self.json;
        d.roce_ports = self.roce_ports.clone();
        d.vxlan_ports = self.vxlan_ports.clone();
        d.report = ReportArgs {
            summary: true,
            max_flows: self.max_flows,
            mtu: self.mtu,
            encap_session: self.encap_session,
            ..d.report
        };
        d
    }

    fn settings(&self, linktype: LinkType, snaplen: u32) -> Settings {
        Settings {
            decode: self.decode_config(),
            analyze: AnalyzeConfig {
                mtu: self.mtu,
                max_flows: self.max_flows,
                encap_session: self.encap_session,
                ..AnalyzeConfig::default()
            },
            linktype,
            snaplen,
            keep_bytes: self.keep as usize,
            run_as: None,
            display_filter: self.display_filter.as_ref().and_then(|e| {
                let f = crate::tui::shown::compile(e).ok()?;
                Some((e.clone(), f))
            }),
        }
    }

    fn decode_config(&self) -> DecodeConfig {
        DecodeConfig::with_ports(&self.roce_ports).with_vxlan_ports(&self.vxlan_ports)
    }
}

/// `roce-inspect top`.
///
/// # Errors
/// Not a terminal (a usage error, exit status 2); the source's one-line errors as `capture`
/// and `read` give them (no such interface, permission denied, bad filter, unreadable file);
/// the terminal failing.
pub fn top(a: &TopArgs) -> Result<Outcome> {
    if !(std::io::stdout().is_terminal() && std::io::stdin().is_terminal()) {
        return Err(ArgError(
            "top needs a terminal (standard input and output are not both one); use capture -q or read --summary instead"
                .into(),
        )
        .into());
    }
    let stop = Arc::new(AtomicBool::new(false));
    let seen = Arc::clone(&stop);
    // SIGTERM / SIGHUP (Ctrl-C is a key in raw mode): end as `q` does.
    ctrlc::set_handler(move || seen.store(true, Ordering::SeqCst))
        .context("installing the SIGTERM handler")?;
    // Who to become once the device is open: decided (and a bad -Z refused) before opening.
    // A replay opens no device: it runs as it was started, as `read` does.
    let plan = match a.r_file {
        Some(_) => Plan::Keep,
        None => Plan::resolve(a.user.as_deref())?,
    };
    let (mut feed, mut settings, source) = open(a)?;
    if a.r_file.is_none() {
        give_up_root(&plan, &a.save_dir)?;
        settings.run_as = plan.account().map(|u| u.name.clone());
    }
    let done = crate::tui::app::run(
        feed.as_mut(),
        settings,
        source.clone(),
        a.save_dir.clone(),
        stop,
    )?;
    eprintln!("{} frames read from {source}", done.frames);
    for note in feed.closing_notes() {
        eprintln!("{note}");
    }
    if a.summary {
        let mut out = std::io::BufWriter::new(std::io::stdout());
        let r = write_reports(&done.report, &a.display().plan()?.report, &mut out);
        if let Some(o) = io_outcome(r)? {
            return Ok(o);
        }
    }
    match done.error {
        // As `capture` ends on a read error: the report first, then the error, exit status 1.
        Some(e) => Err(anyhow::anyhow!(
            "{e}: {source} stopped after {} frames",
            done.frames
        )),
        None => Ok(Outcome::Ok),
    }
}

/// The device is open: create `save_dir` if it is new and give it to the user of `plan`, then
/// become that user (`-Z`), so that `w` writes its files as them.
///
/// # Errors
/// A failed mkdir, chown or set*id call, or a privilege left after the drop.
fn give_up_root(plan: &Plan, save_dir: &std::path::Path) -> Result<()> {
    plan.hand_over_dir(save_dir)?;
    plan.drop_now()?;
    Ok(())
}

/// Open the source the arguments name: the feed, its settings, and its name for the header.
fn open(a: &TopArgs) -> Result<(Box<dyn Feed>, Settings, String)> {
    if let Some(path) = &a.r_file {
        let mut src = FileSource::open(path).with_context(|| path.clone())?;
        if let Some(f) = &a.filter {
            src.set_filter(f)?;
        }
        let settings = a.settings(src.linktype(), crate::source::live::MAX_SNAPLEN);
        let name = format!("replay of {path} ({}x)", a.speed);
        return Ok((Box::new(ReplayFeed::new(src, a.speed)), settings, name));
    }
    let iface = a.interface().ok_or_else(|| {
        ArgError("top needs an interface (IFACE or -i IFACE) or a file (-r FILE)".into())
    })?;
    let opts = LiveOptions {
        snaplen: a.snaplen,
        promisc: a.promisc,
        buffer_size: a.buffer_size,
        // Blocks of frames: the screen updates four times a second anyway.
        immediate: false,
        ..LiveOptions::default()
    };
    let mut src = match LiveSource::open(iface, &opts) {
        Ok(s) => s,
        Err(LiveError::NoSuchDevice { .. }) if super::sniff::is_rdma_device(iface) => {
            return open_sniffer(a, iface);
        }
        Err(e @ LiveError::NoSuchDevice { .. }) => {
            return Err(anyhow::anyhow!(
                "{e}; RDMA devices: {}",
                super::sniff::rdma_names()
            ));
        }
        Err(e) => return Err(e.into()),
    };
    let (lt, cfg) = (src.linktype(), a.decode_config());
    match &a.filter {
        Some(f) => {
            let is_roce =
                Box::new(move |d: &[u8], len| decode_frame(lt, d, len, &cfg).roce().is_some());
            src.set_filter_counting_tag_misses(f, is_roce)?;
        }
        None => {
            src.set_default_filter(&a.roce_ports)?;
        }
    }
    let settings = a.settings(src.linktype(), src.snaplen());
    let name = format!("capture on {iface}");
    Ok((
        Box::new(LiveFeed::new(src, a.filter.clone())),
        settings,
        name,
    ))
}

/// `top DEVICE` on an RDMA device libpcap does not offer: the verbs sniffer.
#[cfg(feature = "verbs")]
fn open_sniffer(a: &TopArgs, spec: &str) -> Result<(Box<dyn Feed>, Settings, String)> {
    use crate::source::live::default_filter;
    use crate::source::sniffer::verbs::RdmaSniffer;
    let mut src = RdmaSniffer::open(spec, a.snaplen)?;
    let expr = match (&a.filter, src.linktype()) {
        (Some(f), _) => Some(f.clone()),
        (None, LinkType::ETHERNET) => Some(default_filter(&a.roce_ports)),
        (None, _) => None,
    };
    if let Some(expr) = &expr {
        let dead = pcap::Capture::dead(pcap::Linktype(src.linktype().0 as i32))
            .map_err(|e| LiveError::SetFilter(e.to_string()))?;
        let prog = dead
            .compile(expr, true)
            .map_err(|e| LiveError::Filter(expr.clone(), crate::source::file::filter_msg(e)))?;
        src.set_filter(prog, None);
    }
    let settings = a.settings(src.linktype(), src.snaplen());
    let name = format!("capture on {} (verbs sniffer)", src.name());
    Ok((
        Box::new(crate::tui::feed::SnifferFeed::new(src)),
        settings,
        name,
    ))
}

/// `top DEVICE` without the verbs sniffer compiled in.
#[cfg(not(feature = "verbs"))]
fn open_sniffer(_a: &TopArgs, spec: &str) -> Result<(Box<dyn Feed>, Settings, String)> {
    anyhow::bail!(
        "{spec} is an RDMA device that libpcap does not offer, and this roce-inspect was built \
         without the verbs sniffer (rebuild with --features verbs)"
    )
}
