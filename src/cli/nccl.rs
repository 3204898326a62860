//! `roce-inspect nccl FILE…`: arguments and wiring to [`crate::nccl`].

use std::io::{self, Write};

use anyhow::Result;
use clap::Args;

use crate::nccl::{self, Collective, Config};
use crate::pipeline::{Outcome, REPORT_BUFFER, io_outcome};

/// `nccl` arguments.
#[derive(Debug, Args)]
pub struct NcclArgs {
    /// Captures of one job (pcap or pcapng), e.g. one per host; `-` reads standard input.
    #[arg(value_name = "FILE", num_args = 1.., required = true)]
    pub files: Vec<String>,
    /// libpcap BPF filter expression applied to every file, e.g. `-f 'host 10.0.0.1'`.
    #[arg(short = 'f', long = "filter", value_name = "EXPR")]
    pub filter: Option<String>,
    /// Also decode UDP destination port N as RoCEv2 (repeatable).
    #[arg(long = "roce-port", value_name = "N", allow_negative_numbers = true,
          value_parser = clap::value_parser!(u16).range(1..))]
    pub roce_ports: Vec<u16>,
    /// The collective that ran, for the algorithm bandwidth (busbw / nccl-tests' factor);
    /// needs --ranks.
    #[arg(long, value_enum, value_name = "NAME", requires = "ranks")]
    pub collective: Option<Collective>,
    /// Ranks of the job, for --collective.
    #[arg(long, value_name = "N", requires = "collective",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub ranks: Option<u32>,
    /// Print one JSON document instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Also write a self-contained HTML page (connections, a timeline of every step) to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<String>,
}

/// Run `nccl`.
///
/// # Errors
/// A file that cannot be read, a bad filter, output errors; no NCCL connection in any capture
/// is an error too (exit status 1).
pub fn run(a: &NcclArgs) -> Result<Outcome> {
    for (i, f) in a.files.iter().enumerate() {
        if a.files[..i].iter().any(|g| super::same_file(f, g)) {
            return Err(super::ArgError(format!("{f}: the same capture is given twice")).into());
        }
    }
    let cfg = Config {
        files: a.files.clone(),
        filter: a.filter.clone(),
        roce_ports: a.roce_ports.clone(),
        collective: a.collective.zip(a.ranks),
    };
    let report = nccl::analyze(&cfg)?;
    if report.connections.is_empty() {
        let roce: u64 = report.captures.iter().map(|c| c.roce).sum();
        anyhow::bail!(
            "no NCCL connection found ({roce} RoCE packets, none an NCCL clear-to-send or a write with immediate equal to its length)"
        );
    }
    if let Some(path) = &a.html {
        let write = || -> io::Result<()> {
            let mut f = io::BufWriter::new(std::fs::File::create(path)?);
            nccl::timeline::write(&report, &mut f)?;
            f.flush()
        };
        write().map_err(|e| anyhow::anyhow!("{path}: {}", crate::output::write_error(&e)))?;
    }
    let mut out = io::BufWriter::with_capacity(REPORT_BUFFER, io::stdout().lock());
    let r = if a.json {
        serde_json::to_writer(&mut out, &report)
            .map_err(io::Error::from)
            .and_then(|()| out.write_all(b"\n"))
    } else {
        nccl::text::write(&report, &mut out)
    };
    let outcome = io_outcome(r.and_then(|()| out.flush()))?.unwrap_or(Outcome::Ok);
    let cut: Vec<&str> = report
        .captures
        .iter()
        .filter_map(|c| c.read_error.as_deref())
        .collect();
    if !cut.is_empty() && matches!(outcome, Outcome::Ok) {
        anyhow::bail!("{}", cut.join("; "));
    }
    Ok(outcome)
}
