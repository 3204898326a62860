//! The reader options of the commands that read several captures of one job together
//! (`correlate`, `nccl`): one definition, flattened into each command's arguments, so the two
//! parse and document them alike.

use anyhow::Result;
use clap::Args;

/// `-f` and `--roce-port`, applied to every capture of the job.
#[derive(Clone, Debug, Default, Args)]
pub struct JobReadArgs {
    /// libpcap BPF filter expression applied to every file, e.g. `-f 'host 10.0.0.1'`.
    #[arg(short = 'f', long = "filter", value_name = "EXPR")]
    pub filter: Option<String>,
    /// Also decode UDP destination port N as RoCEv2 (repeatable).
    #[arg(long = "roce-port", value_name = "N", allow_negative_numbers = true,
          value_parser = clap::value_parser!(u16).range(1..))]
    pub roce_ports: Vec<u16>,
}

/// A capture given twice is an [`ArgError`](super::ArgError) (a usage error, exit status 2):
/// its packets would be counted twice as if two hosts had seen them.
///
/// # Errors
/// The first file given twice, named.
pub fn check_distinct(files: &[String]) -> Result<()> {
    for (i, f) in files.iter().enumerate() {
        if files[..i].iter().any(|g| super::same_file(f, g)) {
            return Err(super::ArgError(format!("{f}: the same capture is given twice")).into());
        }
    }
    Ok(())
}
