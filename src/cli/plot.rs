//! `roce-inspect plot FILE --kind KIND -o OUT`: the arguments checked, the capture read through
//! the analyzer with a plot recorder tapped in ([`crate::pipeline::plot`]), then drawn
//! (issue 14).

use std::path::Path;

use anyhow::{Result, bail};
use clap::Args;

use super::parse_qpn;
use crate::analyze::AnalyzeConfig;
use crate::output::plot::{self, Kind, Options};
use crate::pipeline::plot::analyze_file;

/// `plot` arguments.
#[derive(Debug, Args)]
pub struct PlotArgs {
    /// Capture file (pcap or pcapng); `-` for standard input. `--kind nccl` takes several
    /// captures of one job (one per host), as `nccl` does.
    #[arg(value_name = "FILE", num_args = 1.., required = true)]
    pub files: Vec<String>,
    /// What to draw: psn (PSN against time, tcptrace style), rate (throughput and congestion),
    /// latency (ACK RTT and READ latency CDFs), messages (message time lines), nccl (NCCL's
    /// steps, one row per connection, as `nccl --html`).
    #[arg(long, value_enum, default_value_t = Kind::Psn)]
    pub kind: Kind,
    /// Output file: SVG, or PNG when it ends in `.png`.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: String,
    /// Only flows to this destination QP (decimal or 0x hex).
    #[arg(long, value_name = "QPN", value_parser = parse_qpn)]
    pub qp: Option<u32>,
    /// libpcap BPF filter expression applied while reading, as for `read -f`.
    #[arg(short = 'f', long = "filter", value_name = "EXPR")]
    pub filter: Option<String>,
    /// Start of the time span drawn, seconds since the first frame.
    #[arg(long, value_name = "SECS", value_parser = parse_secs, allow_negative_numbers = true)]
    pub from: Option<f64>,
    /// End of the time span drawn, seconds since the first frame.
    #[arg(long, value_name = "SECS", value_parser = parse_secs, allow_negative_numbers = true)]
    pub to: Option<f64>,
    /// Rate bin width in seconds (`--kind rate`), e.g. `--bin 0.0001`; default: about 1/60 of
    /// the span.
    #[arg(long, value_name = "SECS", value_parser = parse_bin, allow_negative_numbers = true)]
    pub bin: Option<f64>,
    /// Most flows drawn: the largest by payload bytes.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub top: u32,
    /// Picture width in pixels.
    #[arg(long, value_name = "PX", default_value_t = 1200, value_parser = clap::value_parser!(u32).range(400..=8000))]
    pub width: u32,
    /// PNG pixels per picture pixel: `--scale 2` draws a PNG twice as large with the same
    /// layout, for high-DPI screens (SVGs are unaffected).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=4))]
    pub scale: u32,
    /// Path MTU in bytes for READ PSN reservation, as for `read --mtu`.
    #[arg(long, value_name = "BYTES", value_parser = super::parse_mtu)]
    pub mtu: Option<u32>,
    /// Also decode UDP destination port N as RoCEv2 (repeatable).
    #[arg(long = "roce-port", value_name = "N")]
    pub roce_ports: Vec<u16>,
}

/// Parse a non-negative number of seconds.
fn parse_secs(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..1e9).contains(&v) => Ok(v),
        _ => Err(format!("'{s}' is not a number of seconds (0 or more)")),
    }
}

/// Parse a bin width: at least 1 µs.
fn parse_bin(s: &str) -> Result<f64, String> {
    match parse_secs(s) {
        Ok(v) if v >= 1e-6 => Ok(v),
        _ => Err(format!(
            "'{s}' is not a bin width in seconds (1e-6 or more)"
        )),
    }
}

/// `roce-inspect plot`.
///
/// # Errors
/// As [`crate::pipeline::plot::analyze_file`], a `--from`/`--to` outside the capture, or the
/// output cannot be written;
/// an [`ArgError`](super::ArgError) when `--to` is not after `--from`.
pub fn plot(a: &PlotArgs) -> Result<()> {
    if let (Some(f), Some(t)) = (a.from, a.to)
        && t <= f
    {
        return Err(super::ArgError(format!("--to ({t}) must be after --from ({f})")).into());
    }
    let ext = Path::new(&a.output)
        .extension()
        .map(|e| e.to_ascii_lowercase());
    if !ext.is_some_and(|e| e == "svg" || e == "png") {
        return Err(
            super::ArgError(format!("{}: the output must end in .svg or .png", a.output)).into(),
        );
    }
    let opts = Options {
        kind: a.kind,
        qp: a.qp,
        from_s: a.from,
        to_s: a.to,
        bin_ns: a.bin.map(|b| (b * 1e9) as u64),
        top: a.top as usize,
        size: (a.width, 0),
        scale: a.scale,
    };
    if a.kind == Kind::Nccl {
        return nccl(a, &opts);
    }
    let [file] = a.files.as_slice() else {
        return Err(super::ArgError(format!(
            "--kind {} draws one capture ({} given); only --kind nccl takes several",
            a.kind.name(),
            a.files.len()
        ))
        .into());
    };
    let cfg = AnalyzeConfig {
        mtu: a.mtu,
        ..AnalyzeConfig::default()
    };
    let (report, trace) = analyze_file(file, a.filter.as_deref(), cfg, &a.roce_ports)?;
    if let Some(q) = a.qp
        && !report.flows.iter().any(|f| f.dest_qp == q)
    {
        bail!("{file}: no flow to destination QP {q:#08x}");
    }
    plot::write(&report, &trace, &opts, Path::new(&a.output))
}

/// `plot --kind nccl`: the `nccl` report of the captures, drawn as its timeline.
///
/// # Errors
/// As [`crate::nccl::analyze`], no NCCL connection in the captures, and as
/// [`plot::nccl::svg`] and [`plot::write_doc`].
fn nccl(a: &PlotArgs, opts: &Options) -> Result<()> {
    super::job::check_distinct(&a.files)?;
    let cfg = crate::nccl::Config {
        files: a.files.clone(),
        filter: a.filter.clone(),
        roce_ports: a.roce_ports.clone(),
        collective: None,
    };
    let report = crate::nccl::analyze(&cfg)?;
    if report.connections.is_empty() {
        bail!("{}", super::nccl::no_connection(&report));
    }
    let doc = plot::nccl::svg(&report, opts)?;
    plot::write_doc(doc, opts, Path::new(&a.output))
}
