//! `roce-inspect nccl FILE…`: arguments and wiring to [`crate::nccl`], the report written by
//! [`crate::pipeline::job`].

use anyhow::Result;
use clap::Args;

use super::job::{JobReadArgs, check_distinct};
use crate::nccl::{self, Collective, Config};
use crate::pipeline::Outcome;
use crate::pipeline::job::{print_nccl, write_nccl_html};

/// `nccl` arguments.
#[derive(Debug, Args)]
pub struct NcclArgs {
    /// Captures of one job (pcap or pcapng), e.g. one per host; `-` reads standard input.
    #[arg(value_name = "FILE", num_args = 1.., required = true)]
    pub files: Vec<String>,
    /// `-f`, `--roce-port`.
    #[command(flatten)]
    pub reader: JobReadArgs,
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

/// The one line that says a report has no NCCL connection.
pub fn no_connection(report: &nccl::Report) -> String {
    let roce: u64 = report.captures.iter().map(|c| c.roce).sum();
    format!(
        "no NCCL connection found ({roce} RoCE packets, none an NCCL clear-to-send or a write with immediate equal to its length)"
    )
}

/// Run `nccl`.
///
/// # Errors
/// A file that cannot be read, a bad filter, output errors; no NCCL connection in any capture
/// is an error too (exit status 1).
pub fn run(a: &NcclArgs) -> Result<Outcome> {
    check_distinct(&a.files)?;
    let cfg = Config {
        files: a.files.clone(),
        filter: a.reader.filter.clone(),
        roce_ports: a.reader.roce_ports.clone(),
        collective: a.collective.zip(a.ranks),
    };
    let report = nccl::analyze(&cfg)?;
    if report.connections.is_empty() {
        anyhow::bail!("{}", no_connection(&report));
    }
    if let Some(path) = &a.html {
        write_nccl_html(&report, path)?;
    }
    let outcome = print_nccl(&report, a.json)?;
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
