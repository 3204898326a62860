//! `roce-inspect export FILE… --parquet DIR`: each capture file, one after another, decoded,
//! analysed and written as Parquet tables (src/output/parquet) under one progress bar; one line
//! per file on stdout says what was written, errors go to stderr.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;

use crate::analyze::{AnalyzeConfig, Analyzer};
use crate::decode::{DecodeConfig, decode_frame};
use crate::output::parquet::{ExportCounts, ExportTarget, Exporter, PacketMeta};
use crate::pipeline::Outcome;
use crate::pipeline::progress::Progress;
use crate::source::FileSource;

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

/// The capture name of `path`: its file name (`stdin` for `-`).
pub fn capture_name(path: &str) -> String {
    if path == "-" {
        return "stdin".to_string();
    }
    Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.to_string())
}

/// The default host of `path`: its file name without the last extension.
fn default_host(path: &str) -> String {
    let name = capture_name(path);
    match name.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => stem.to_string(),
        _ => name,
    }
}

/// `roce-inspect export`.
///
/// # Errors
/// Two files with the same name (their partitions would collide) are an
/// [`ArgError`](super::ArgError) (a usage error, exit status 2); otherwise each file that
/// cannot be exported is reported on its own line and the others are still exported, then one
/// error says how many failed (the error itself when there is one file).
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
    if a.parquet.exists() && !a.parquet.is_dir() {
        anyhow::bail!("{}: not a directory", a.parquet.display());
    }
    let created = !a.parquet.exists();
    std::fs::create_dir_all(&a.parquet).map_err(|e| {
        anyhow!(
            "{}: cannot create the dataset folder: {}",
            a.parquet.display(),
            crate::output::io_text(&e)
        )
    })?;
    // Ctrl-C, SIGTERM, SIGHUP: no destructor runs, so the handler removes the files being
    // written before it exits (status 130, as the shell reports a Ctrl-C).
    ctrlc::set_handler(|| {
        crate::output::parquet::file::remove_temporaries();
        std::process::exit(130);
    })
    .context("installing the Ctrl-C/SIGTERM handler")?;
    let mut progress = Progress::for_files(&a.files);
    let mut failed = Vec::new();
    let mut out_err: Option<std::io::Error> = None;
    for f in &a.files {
        let name = capture_name(f);
        progress.next_file(f, &name);
        match export_file(f, a, &mut progress) {
            Ok(c) => {
                use crate::output::counted;
                let line = format!(
                    "{name}: {}, {}, {}, {}, {}",
                    counted(c.packets, "packet"),
                    counted(c.flows, "flow"),
                    counted(c.connections, "connection"),
                    counted(c.messages, "message"),
                    counted(c.gaps, "gap")
                );
                // A closed stdout only loses these lines: the export goes on. Another output
                // error (a full disk) is reported at the end, after the files are written.
                if let Err(e) = progress.println(&line)
                    && e.kind() != std::io::ErrorKind::BrokenPipe
                {
                    out_err.get_or_insert(e);
                }
            }
            // A filter that does not compile is the user's mistake for every file: stop there
            // (exit status 2).
            Err(e) if a.files.len() == 1 || super::is_usage_error(&e) => {
                progress.finish();
                if created {
                    // Only when nothing was written in it (remove_dir fails otherwise).
                    let _ = std::fs::remove_dir(&a.parquet);
                }
                return Err(e);
            }
            Err(e) => {
                progress.eprintln(&format!("roce-inspect: {e:#}"));
                failed.push(f);
            }
        }
    }
    progress.finish();
    if let Some(e) = out_err {
        bail!(crate::output::write_error(&e));
    }
    if !failed.is_empty() {
        return Err(anyhow!(
            "{} of {} files not exported completely",
            failed.len(),
            a.files.len()
        ));
    }
    Ok(Outcome::Ok)
}

/// Export one file. A read error in the middle of the file is reported after the frames read
/// before it are exported, as `read` prints them.
fn export_file(path: &str, a: &ExportArgs, progress: &mut Progress) -> Result<ExportCounts> {
    let shown = if path == "-" { "<stdin>" } else { path };
    let mut src = FileSource::open(path).with_context(|| shown.to_string())?;
    if let Some(f) = &a.filter {
        src.set_filter(f)?;
    }
    let linktype = src.linktype();
    let cfg = DecodeConfig::with_ports(&a.roce_ports);
    let mut analyzer = Analyzer::new(AnalyzeConfig {
        mtu: a.mtu,
        max_flows: a.max_flows,
        keep_messages: true,
        ..AnalyzeConfig::default()
    });
    let target = ExportTarget {
        dir: a.parquet.clone(),
        capture: capture_name(path),
        host: a.host.clone().unwrap_or_else(|| default_host(path)),
    };
    let mut exp = Exporter::create(target).with_context(|| shown.to_string())?;
    // The packets table's analysis columns (a bounded window of rows for late marks).
    exp.mark_with(crate::analyze::marks::tap(&mut analyzer));
    let mut read_err = None;
    loop {
        let rec = match src.next_record() {
            Ok(Some(rec)) => rec,
            Ok(None) => break,
            Err(e) => {
                read_err = Some(e);
                break;
            }
        };
        progress.frame(rec.caplen);
        let frame = decode_frame(linktype, rec.data, rec.len, &cfg);
        exp.begin(rec.number);
        analyzer.push(rec.number, rec.ts_ns, &frame);
        let meta = PacketMeta {
            frame: rec.number,
            ts_ns: rec.ts_ns,
            len: rec.len,
            caplen: rec.caplen,
            decoded: &frame,
        };
        exp.frame(&meta, &frame, Some(&mut analyzer))
            .with_context(|| shown.to_string())?;
    }
    let report = analyzer.finish();
    let counts = exp.finish(&report).with_context(|| shown.to_string())?;
    // What makes the tables' numbers doubtful (as `read --summary` prints it).
    for w in &report.warnings {
        progress.eprintln(&format!("roce-inspect: {shown}: warning: {w}"));
    }
    if counts.packets == 0 && read_err.is_none() {
        progress.eprintln(&format!(
            "roce-inspect: {shown}: warning: no RoCE frame{}: its tables are empty",
            if a.filter.is_some() {
                " passed the filter"
            } else {
                " in it"
            }
        ));
    }
    if let Some(e) = read_err {
        let where_ = match src.frames_read() {
            0 => shown.to_string(),
            n => format!("{shown}: after frame {n} (the frames before it were exported)"),
        };
        return Err(anyhow::Error::new(e).context(where_));
    }
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(capture_name("/x/y/host1_run.pcapng"), "host1_run.pcapng");
        assert_eq!(capture_name("-"), "stdin");
        assert_eq!(default_host("/x/y/node7.pcap"), "node7");
        assert_eq!(default_host("trace"), "trace");
        assert_eq!(default_host(".hidden"), ".hidden");
    }
}
