//! `roce-inspect export FILE… --parquet DIR`: the arguments checked, the dataset folder created
//! and the Ctrl-C handler set, then the run of [`crate::pipeline::export`] (each capture file
//! decoded, analysed and written as Parquet tables).

use std::collections::HashMap;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use crate::output::parquet::capture_name;
use crate::pipeline::Outcome;
use crate::pipeline::export::{Dataset, ExportSettings, export_files};

/// `export` arguments.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Capture files (pcap or pcapng); `-` reads standard input (exported as capture `stdin`).
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<String>,
    /// Dataset folder: the tables go to DIR/TABLE/capture=NAME/part-0.parquet (NAME: the file
    /// name), replacing an earlier export of a capture of the same name.
    #[arg(long, value_name = "DIR", required = true)]
    pub parquet: PathBuf,
    /// The `host` column: the machine or switch port the captures come from (default: each
    /// file's name without its extension).
    #[arg(long, value_name = "NAME")]
    pub host: Option<String>,
    /// libpcap BPF filter expression applied before decoding, as for `read`.
    #[arg(short = 'f', long = "filter", value_name = "EXPR")]
    pub filter: Option<String>,
    /// Also decode UDP destination port N as RoCEv2 (repeatable), as for `read`.
    #[arg(long = "roce-port", value_name = "N",
          value_parser = clap::value_parser!(u16).range(1..))]
    pub roce_ports: Vec<u16>,
    /// Path MTU in bytes for READ PSN reservation, as for `read` (256, 512, 1024, 2048, 4096).
    #[arg(long, value_name = "BYTES", value_parser = super::parse_mtu)]
    pub mtu: Option<u32>,
    /// Most flows tracked at once, as for `read`.
    #[arg(long = "max-flows", value_name = "N", default_value_t = 16384, value_parser = crate::cli::positive_usize)]
    pub max_flows: usize,
}

/// `roce-inspect export`.
///
/// # Errors
/// Two files with the same name (their partitions would collide) are an
/// [`ArgError`](super::ArgError) (a usage error, exit status 2); then the errors of
/// [`Dataset::create`] and [`export_files`] (each file that cannot be exported is reported on
/// its own line and the others are still exported, then one error says how many failed, the
/// error itself when there is one file).
pub fn export(a: &ExportArgs) -> Result<Outcome> {
    let mut seen: HashMap<String, &str> = HashMap::new();
    for f in &a.files {
        if let Some(other) = seen.insert(capture_name(f), f) {
            if f == "-" && other == "-" {
                return Err(super::ArgError("standard input (-) is given twice".into()).into());
            }
            if super::same_file(f, other) {
                return Err(
                    super::ArgError(format!("{f}: the same capture is given twice")).into(),
                );
            }
            return Err(super::ArgError(format!(
                "{other} and {f} have the same file name, so their exports would replace each other: export them into different folders or rename one"
            ))
            .into());
        }
    }
    let dataset = Dataset::create(&a.parquet)?;
    // Ctrl-C, SIGTERM, SIGHUP: no destructor runs, so the handler removes the files being
    // written before it exits (status 130, as the shell reports a Ctrl-C).
    ctrlc::set_handler(|| {
        crate::output::parquet::file::remove_temporaries();
        std::process::exit(130);
    })
    .context("installing the Ctrl-C/SIGTERM handler")?;
    export_files(&dataset, &a.files, &a.settings())
}

impl ExportArgs {
    /// How each file is read and analysed, and the `host` column.
    fn settings(&self) -> ExportSettings {
        ExportSettings {
            host: self.host.clone(),
            filter: self.filter.clone(),
            roce_ports: self.roce_ports.clone(),
            mtu: self.mtu,
            max_flows: self.max_flows,
        }
    }
}
