//! `roce-inspect correlate FILE FILE [FILE…]`: arguments and wiring to [`crate::correlate`],
//! the report printed by [`crate::pipeline::job`].

use anyhow::Result;
use clap::Args;

use super::job::{JobReadArgs, check_distinct};
use crate::correlate::{self, Config};
use crate::output::style::ColorChoice;
use crate::pipeline::Outcome;
use crate::pipeline::job::print_correlate;

/// `correlate` arguments.
#[derive(Debug, Args)]
pub struct CorrelateArgs {
    /// Two or more captures of one job (pcap or pcapng), e.g. one per host.
    #[arg(value_name = "FILE", num_args = 2.., required = true)]
    pub files: Vec<String>,
    /// `-f`, `--roce-port`.
    #[command(flatten)]
    pub reader: JobReadArgs,
    /// Seconds a packet copy waits for its copy at the link's other end (fractions allowed);
    /// copies unmatched after it are lost or missed. Bounds memory.
    #[arg(long, value_name = "SECS", default_value = "1", value_parser = super::parse_duration,
          allow_negative_numbers = true)]
    pub window: f64,
    /// Print one JSON document instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Colour: auto (terminal and NO_COLOR unset), always, never.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,
    /// Print every column of the tables however wide they are (by default, on a terminal, the
    /// least important columns are hidden to fit its width), as for `read --wide`.
    #[arg(long)]
    pub wide: bool,
}

/// Run `correlate`.
///
/// # Errors
/// A file that cannot be read, captures that share no traffic, output errors; a capture given
/// twice is an [`ArgError`](super::ArgError) (a usage error, exit status 2).
pub fn run(a: &CorrelateArgs) -> Result<Outcome> {
    check_distinct(&a.files)?;
    let cfg = Config {
        files: a.files.clone(),
        filter: a.reader.filter.clone(),
        roce_ports: a.reader.roce_ports.clone(),
        window_ns: (a.window * 1e9).round() as i64,
    };
    let report = correlate::correlate(&cfg)?;
    let width = if a.wide {
        None
    } else {
        crate::output::fit::terminal_width()
    };
    let outcome = print_correlate(&report, a.json, a.color.enabled(), width)?;
    // A capture cut short: the report of the frames before the damage is printed, then the
    // damage is the run's error (status 1), as with `read`.
    let cut: Vec<&str> = report
        .captures
        .iter()
        .filter_map(|c| c.read_error.as_deref())
        .collect();
    if !cut.is_empty() && matches!(outcome, Outcome::Ok) {
        anyhow::bail!("{}", cut.join("; "));
    }
    // Every link left out counts as none (see `correlate::report`'s dead links).
    if report.links.iter().all(|l| l.matched == 0) {
        anyhow::bail!(
            "no packet was seen by two captures within --window {} s: are these captures of one job, with clocks within the window?",
            a.window
        );
    }
    Ok(outcome)
}
