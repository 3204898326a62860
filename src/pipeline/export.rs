//! The `export` run: capture files, one after another, decoded, analysed and written as Parquet
//! tables (`crate::output::parquet`) into one dataset folder under one progress bar; one line
//! per file on standard output says what was written, the files' errors go to standard error.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};

use super::Outcome;
use super::progress::Progress;
use super::walk::{self, Walked};
use crate::analyze::{AnalyzeConfig, Analyzer};
use crate::decode::DecodeConfig;
use crate::output::parquet::{
    ExportCounts, ExportTarget, Exporter, PacketMeta, capture_name, default_host,
};
use crate::source::file::FileError;

/// How each file is read and analysed, and the names stored in its tables.
#[derive(Clone, Debug)]
pub struct ExportSettings {
    /// The `host` column; `None`: each file's name without its extension.
    pub host: Option<String>,
    /// libpcap BPF filter expression applied before decoding.
    pub filter: Option<String>,
    /// UDP destination ports decoded as RoCEv2 besides 4791.
    pub roce_ports: Vec<u16>,
    /// Path MTU in bytes for READ PSN reservation; `None`: inferred.
    pub mtu: Option<u32>,
    /// Most flows tracked at once.
    pub max_flows: usize,
}

/// The dataset folder of an export (`--parquet DIR`), and whether this run created it.
#[derive(Debug)]
pub struct Dataset {
    dir: PathBuf,
    created: bool,
}

impl Dataset {
    /// The folder `dir`, created (with its parents) when it does not exist.
    ///
    /// # Errors
    /// `dir` is something other than a folder, or cannot be created.
    pub fn create(dir: &Path) -> Result<Dataset> {
        if dir.exists() && !dir.is_dir() {
            bail!("{}: not a directory", dir.display());
        }
        let created = !dir.exists();
        std::fs::create_dir_all(dir).map_err(|e| {
            anyhow!(
                "{}: cannot create the dataset folder: {}",
                dir.display(),
                crate::output::io_text(&e)
            )
        })?;
        Ok(Dataset {
            dir: dir.to_path_buf(),
            created,
        })
    }

    /// Remove the folder when this run created it and nothing was written in it.
    fn remove_if_unused(&self) {
        if self.created {
            // Fails, as wanted, when the folder is not empty.
            let _ = std::fs::remove_dir(&self.dir);
        }
    }
}

/// Export `files` into `dataset`, each as `s` says.
///
/// # Errors
/// A filter that does not compile stops the export at the first file (a usage error), as does
/// any error when there is one file: the dataset folder is then removed if this run created it
/// and nothing was written in it. Otherwise each file that cannot be exported is reported on
/// its own line and the others are still exported, then one error says how many failed; a
/// failed write of the lines on standard output (other than a closed pipe) is an error at the
/// end.
pub fn export_files(dataset: &Dataset, files: &[String], s: &ExportSettings) -> Result<Outcome> {
    let mut progress = Progress::for_files(files);
    let mut failed = Vec::new();
    let mut out_err: Option<std::io::Error> = None;
    for f in files {
        let name = capture_name(f);
        progress.next_file(f, &name);
        match export_file(&dataset.dir, f, s, &mut progress) {
            Ok(c) => {
                // A closed stdout only loses these lines: the export goes on. Another output
                // error (a full disk) is reported at the end, after the files are written.
                if let Err(e) = progress.println(&written(&name, &c))
                    && e.kind() != std::io::ErrorKind::BrokenPipe
                {
                    out_err.get_or_insert(e);
                }
            }
            // A filter that does not compile is the user's mistake for every file: stop there.
            Err(e) if files.len() == 1 || is_filter_error(&e) => {
                progress.finish();
                dataset.remove_if_unused();
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
            files.len()
        ));
    }
    Ok(Outcome::Ok)
}

/// The line that says what was written of the capture `name`.
fn written(name: &str, c: &ExportCounts) -> String {
    use crate::output::counted;
    format!(
        "{name}: {}, {}, {}, {}, {}",
        counted(c.packets, "packet"),
        counted(c.flows, "flow"),
        counted(c.connections, "connection"),
        counted(c.messages, "message"),
        counted(c.gaps, "gap")
    )
}

/// Whether `e` is a BPF filter expression that does not compile.
fn is_filter_error(e: &anyhow::Error) -> bool {
    e.chain()
        .any(|c| matches!(c.downcast_ref::<FileError>(), Some(FileError::Filter(..))))
}

/// Export the capture file `path` into the dataset folder `dir`. A read error in the middle
/// of the file is reported after the frames read before it are exported, as `read` prints
/// them.
///
/// # Errors
/// As [`walk::open`]; the tables cannot be created or written; a read error.
fn export_file(
    dir: &Path,
    path: &str,
    s: &ExportSettings,
    progress: &mut Progress,
) -> Result<ExportCounts> {
    let shown = walk::shown(path);
    let mut src = walk::open(path, s.filter.as_deref())?;
    let cfg = DecodeConfig::with_ports(&s.roce_ports);
    let mut analyzer = Analyzer::new(AnalyzeConfig {
        mtu: s.mtu,
        max_flows: s.max_flows,
        keep_messages: true,
        ..AnalyzeConfig::default()
    });
    let target = ExportTarget {
        dir: dir.to_path_buf(),
        capture: capture_name(path),
        host: s.host.clone().unwrap_or_else(|| default_host(path)),
    };
    let mut exp = Exporter::create(target).with_context(|| shown.to_string())?;
    // The packets table's analysis columns (a bounded window of rows for late marks).
    exp.mark_with(crate::analyze::marks::tap(&mut analyzer));
    let walked = walk::decoded(&mut src, &cfg, |rec, frame| {
        progress.frame(rec.caplen);
        exp.begin(rec.number);
        analyzer.push(rec.number, rec.ts_ns, frame);
        let meta = PacketMeta {
            frame: rec.number,
            ts_ns: rec.ts_ns,
            len: rec.len,
            caplen: rec.caplen,
            decoded: frame,
        };
        match exp.frame(&meta, Some(&mut analyzer)) {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => ControlFlow::Break(e),
        }
    });
    let read_err = match walked {
        Walked::End => None,
        Walked::Stopped(e) => return Err(anyhow::Error::new(e).context(shown.to_string())),
        Walked::Failed(e) => Some(e),
    };
    let report = analyzer.finish();
    let counts = exp.finish(&report).with_context(|| shown.to_string())?;
    // What makes the tables' numbers doubtful (as `read --summary` prints it).
    for w in &report.warnings {
        progress.eprintln(&format!("roce-inspect: {shown}: warning: {w}"));
    }
    if counts.packets == 0 && read_err.is_none() {
        progress.eprintln(&format!(
            "roce-inspect: {shown}: warning: no RoCE frame{}: its tables are empty",
            if s.filter.is_some() {
                " passed the filter"
            } else {
                " in it"
            }
        ));
    }
    if let Some(e) = read_err {
        let mut where_ = walk::after_frame(shown, src.frames_read());
        if src.frames_read() > 0 {
            where_.push_str(" (the frames before it were exported)");
        }
        return Err(anyhow::Error::new(e).context(where_));
    }
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dataset_folder_is_removed_only_when_this_run_made_it_and_it_is_empty() {
        let tmp = tempfile::tempdir().unwrap();
        let new = tmp.path().join("a/b");
        let d = Dataset::create(&new).unwrap();
        assert!(new.is_dir());
        d.remove_if_unused();
        assert!(!new.exists());

        let d = Dataset::create(&new).unwrap();
        std::fs::write(new.join("x"), b"x").unwrap();
        d.remove_if_unused();
        assert!(new.join("x").exists());

        // There before the run: kept, empty or not.
        let old = tmp.path().join("old");
        std::fs::create_dir(&old).unwrap();
        Dataset::create(&old).unwrap().remove_if_unused();
        assert!(old.is_dir());
    }

    #[test]
    fn a_file_is_no_dataset_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("f");
        std::fs::write(&file, b"").unwrap();
        let e = Dataset::create(&file).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("{}: not a directory", file.display())
        );
    }

    #[test]
    fn only_a_bad_filter_stops_every_file() {
        let bad = anyhow::Error::new(FileError::Filter("port (".into(), "syntax error".into()))
            .context("x.pcap");
        assert!(is_filter_error(&bad));
        let read = anyhow::Error::new(FileError::Read("truncated".into())).context("x.pcap");
        assert!(!is_filter_error(&read));
    }

    #[test]
    fn the_line_per_file() {
        let c = ExportCounts {
            packets: 108,
            flows: 2,
            connections: 1,
            messages: 12,
            ..ExportCounts::default()
        };
        assert_eq!(
            written("rxe_write.pcap", &c),
            "rxe_write.pcap: 108 packets, 2 flows, 1 connection, 12 messages, 0 gaps"
        );
    }
}
