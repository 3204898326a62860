//! One Parquet file of a table's partition: `DIR/TABLE/capture=NAME/part-0.parquet`, written
//! to a temporary name beside it and renamed when complete, so a reader of the dataset never
//! sees half a file and an interrupted export leaves the previous one in place.

use std::fs::{self, File};
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use arrow_array::RecordBatch;
use arrow_schema::{ArrowError, DataType, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;

use super::{ExportError, ROW_GROUP_ROWS, SCHEMA_VERSION};

/// zstd level: 1, zstd's fastest; on the packet tables it compresses within a few per cent of
/// level 3 (the columns are mostly repeats and nulls) at a fraction of the time.
const ZSTD_LEVEL: i32 = 1;

/// Escape a Hive partition value: `%XX` (upper-case hex) for the characters Apache Hive's
/// `FileUtils.escapePathName` escapes (controls, `"#%'*/:=?\^{[]` and DEL), so that any file
/// name is one path component that engines read back as the original value.
pub fn escape_partition_value(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        let special = c.is_ascii_control()
            || matches!(
                c,
                '"' | '#' | '%' | '\'' | '*' | '/' | ':' | '=' | '?' | '\\' | '^' | '{' | '[' | ']'
            );
        if special {
            out.push_str(&format!("%{:02X}", c as u32));
        } else {
            out.push(c);
        }
    }
    // `.` and `..` are not names of a folder of their own.
    match out.as_str() {
        "." => "%2E".to_string(),
        ".." => "%2E%2E".to_string(),
        _ => out,
    }
}

/// A temporary file name beside `name`, unique to this process and call, so that concurrent
/// exports of one capture never write the same file (the last rename wins):
/// `.NAME.PID-N.tmp`.
pub fn temp_name(name: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!(".{name}.{}-{n}.tmp", std::process::id())
}

/// The PID of the process that named `file` with [`temp_name`]`(name)`, if it is such a name.
fn temp_owner(file: &str, name: &str) -> Option<u32> {
    let rest = file
        .strip_prefix('.')?
        .strip_prefix(name)?
        .strip_prefix('.')?;
    let (pid, _) = rest.strip_suffix(".tmp")?.split_once('-')?;
    pid.parse().ok()
}

/// Temporary files being written by this process (see [`remove_temporaries`]).
static TEMPORARIES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn temporaries() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    TEMPORARIES.lock().unwrap_or_else(|e| e.into_inner())
}

/// Remove the temporary files this process is writing: called by a signal handler just
/// before the process exits (Ctrl-C, SIGTERM), when no destructor will run.
pub fn remove_temporaries() {
    for p in temporaries().drain(..) {
        let _ = fs::remove_file(p);
    }
}

/// A file written under a temporary name: listed for [`remove_temporaries`] while it exists,
/// and removed when dropped unless it was renamed.
struct Temporary {
    path: PathBuf,
    renamed: bool,
}

impl Temporary {
    /// Create the file at `path` (a [`temp_name`]).
    fn create(path: PathBuf) -> Result<(Temporary, File), ExportError> {
        temporaries().push(path.clone());
        let t = Temporary {
            path,
            renamed: false,
        };
        let file = File::create(&t.path).map_err(|e| ExportError::io(&t.path, e))?;
        Ok((t, file))
    }

    /// Give the file its final name `to`.
    fn rename(&mut self, to: &Path) -> Result<(), ExportError> {
        fs::rename(&self.path, to).map_err(|e| ExportError::io(to, e))?;
        self.renamed = true;
        temporaries().retain(|p| *p != self.path);
        Ok(())
    }
}

impl Drop for Temporary {
    fn drop(&mut self) {
        if !self.renamed {
            let _ = fs::remove_file(&self.path);
            temporaries().retain(|p| *p != self.path);
        }
    }
}

/// Remove the temporary files of [`PART`] in `folder` that an export killed before it could
/// remove them left behind (`kill -9`, a crash, a power cut): those whose process (the PID in
/// the name, [`temp_name`]) no longer runs. Another running export's files are left alone.
fn remove_stale_temporaries(folder: &Path) {
    let Ok(entries) = fs::read_dir(folder) else {
        return;
    };
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| temp_owner(n, PART)) else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = fs::remove_file(e.path());
        }
    }
}

/// The name of a partition's one file.
const PART: &str = "part-0.parquet";

/// The folder of `table`'s partition for `capture` under `dir`.
pub fn partition_dir(dir: &Path, table: &str, capture: &str) -> PathBuf {
    dir.join(table)
        .join(format!("capture={}", escape_partition_value(capture)))
}

/// Batches queued for the writer thread: a bound keeps memory flat when encoding is slower
/// than decoding.
const QUEUE: usize = 2;

/// A thread fed items of type `I` through a bounded queue, whose work ends with a result `R`
/// or the first error (the Parquet writer of one file).
struct Worker<I: Send + 'static, R: Send + 'static> {
    tx: Option<SyncSender<I>>,
    handle: Option<JoinHandle<Result<R, ExportError>>>,
    /// The file the thread writes, named in its errors.
    path: PathBuf,
}

impl<I: Send + 'static, R: Send + 'static> Worker<I, R> {
    /// Start thread `name` running `work` on the items sent, at most `queue` waiting; `path`
    /// is the file it writes.
    ///
    /// # Errors
    /// The thread cannot be started.
    fn start(
        name: String,
        path: &Path,
        queue: usize,
        work: impl FnOnce(Receiver<I>) -> Result<R, ExportError> + Send + 'static,
    ) -> Result<Worker<I, R>, ExportError> {
        let (tx, rx) = sync_channel::<I>(queue);
        let handle = std::thread::Builder::new()
            .name(name)
            .spawn(move || work(rx))
            .map_err(|e| ExportError::io(path, e))?;
        Ok(Worker {
            tx: Some(tx),
            handle: Some(handle),
            path: path.to_path_buf(),
        })
    }

    /// Hand `item` to the thread (blocking while the queue is full).
    ///
    /// # Errors
    /// The thread's error when it stopped on one.
    fn send(&mut self, item: I) -> Result<(), ExportError> {
        let Some(tx) = &self.tx else {
            return Ok(());
        };
        if tx.send(item).is_err() {
            // The thread stopped on an error: report it.
            return self.join().map(|_| ());
        }
        Ok(())
    }

    /// Whether the thread was not joined yet.
    fn running(&self) -> bool {
        self.handle.is_some()
    }

    /// Close the queue and wait for the thread; its result.
    ///
    /// # Errors
    /// The thread's error; an I/O error naming the file when it panicked or was already
    /// joined.
    fn join(&mut self) -> Result<R, ExportError> {
        self.tx = None;
        let failed = |why: &str| ExportError::io(&self.path, io::Error::other(why.to_string()));
        match self.handle.take().map(JoinHandle::join) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(failed("the writer thread panicked")),
            None => Err(failed("the writer thread was already closed")),
        }
    }
}

/// A Parquet file being written. Encoding and compression run on a thread of their own, so
/// that they overlap with decoding and analysis.
pub struct PartFile<T: Send + 'static = RecordBatch> {
    worker: Worker<T, ()>,
    /// Dropped after the worker is joined ([`PartFile`]'s `drop`), so the file is closed.
    tmp: Temporary,
    path: PathBuf,
}

impl PartFile<RecordBatch> {
    /// Create the partition folder and start `part-0.parquet` of `table` with `schema`.
    ///
    /// # Errors
    /// The folder or file cannot be created; `ExportError::Parquet` for a schema Parquet
    /// cannot hold (a bug).
    pub fn create(
        dir: &Path,
        table: &str,
        capture: &str,
        host: &str,
        schema: SchemaRef,
    ) -> Result<PartFile, ExportError> {
        PartFile::create_with(dir, table, capture, host, schema, Ok)
    }
}

impl<T: Send + 'static> PartFile<T> {
    /// As [`PartFile::create`], for a file written from items of type `T` that the writer
    /// thread turns into record batches with `convert` (so that building the columns, too,
    /// runs beside decoding).
    ///
    /// # Errors
    /// As [`PartFile::create`].
    pub fn create_with(
        dir: &Path,
        table: &str,
        capture: &str,
        host: &str,
        schema: SchemaRef,
        mut convert: impl FnMut(T) -> Result<RecordBatch, ArrowError> + Send + 'static,
    ) -> Result<PartFile<T>, ExportError> {
        let folder = partition_dir(dir, table, capture);
        fs::create_dir_all(&folder).map_err(|e| ExportError::io(&folder, e))?;
        remove_stale_temporaries(&folder);
        let path = folder.join(PART);
        let (tmp, file) = Temporary::create(folder.join(temp_name(PART)))?;
        let props = properties(table, capture, host, &schema);
        let mut writer =
            ArrowWriter::try_new(BufWriter::with_capacity(1 << 20, file), schema, Some(props))
                .map_err(|e| ExportError::parquet(&tmp.path, e))?;
        let name = tmp.path.clone();
        let worker = Worker::start(format!("parquet-{table}"), &tmp.path, QUEUE, move |rx| {
            for item in rx {
                let b = convert(item).map_err(|e| ExportError::parquet(&name, e))?;
                writer
                    .write(&b)
                    .map_err(|e| ExportError::parquet(&name, e))?;
            }
            close(writer, &name)
        })?;
        Ok(PartFile { worker, tmp, path })
    }

    /// Append a batch (rows go to the current row group; a full row group is written out).
    ///
    /// # Errors
    /// Encoding or I/O errors, naming the file (the writer thread's, reported at the next
    /// batch).
    pub fn write(&mut self, batch: T) -> Result<(), ExportError> {
        self.worker.send(batch)
    }

    /// Wait for the writer's thread to encode the rest and write the footer: the file is
    /// complete under its temporary name. (A file closed but dropped unpublished is removed.)
    ///
    /// # Errors
    /// Encoding or I/O errors, naming the file.
    pub fn close(&mut self) -> Result<(), ExportError> {
        self.worker.join()
    }

    /// Move the closed file to its final name (replacing an earlier export of the same
    /// capture). Returns the final path.
    ///
    /// # Errors
    /// The rename failed.
    pub fn publish(mut self) -> Result<PathBuf, ExportError> {
        self.tmp.rename(&self.path)?;
        Ok(self.path.clone())
    }

    /// [`PartFile::close`], then [`PartFile::publish`].
    ///
    /// # Errors
    /// As those.
    pub fn finish(mut self) -> Result<PathBuf, ExportError> {
        self.close()?;
        self.publish()
    }
}

/// Writer settings: zstd, fixed row groups, column chunk statistics (not for text but
/// `capture` and `host`), delta-encoded 64-bit integers, and the key-value metadata naming the
/// schema version, table, capture, host and roce-inspect version.
fn properties(table: &str, capture: &str, host: &str, schema: &Schema) -> WriterProperties {
    let kv = |k: &str, v: &str| KeyValue::new(format!("roce_inspect.{k}"), v.to_string());
    let meta = vec![
        kv("schema_version", &SCHEMA_VERSION.to_string()),
        kv("table", table),
        kv("capture", capture),
        kv("host", host),
        kv("version", env!("CARGO_PKG_VERSION")),
    ];
    // Dictionary encoding for text columns only (few distinct values: names, addresses); the
    // integer columns are mostly counters and PSNs, where a dictionary costs a hash per value
    // and zstd finds the repeats anyway. Text columns have no min/max statistics: the names
    // and addresses of a million-row group span nearly every value, so they prune nothing,
    // and keeping them costs two byte comparisons per value (a tenth of the export's time).
    // The parquet crate has no setting for null counts alone: those go too.
    //
    // 64-bit integer and timestamp columns are DELTA_BINARY_PACKED (Parquet's encoding of
    // differences between neighbours, bit-packed per block): frame numbers, timestamps, VAs and
    // the report tables' counters climb by small steps, which plain 8-byte values hide from
    // zstd; delta-encoded they shrink to a few bits per value (the messages table: 3.7 MB ->
    // 45 kB per million packets). The 8- to 32-bit header fields stay PLAIN: they mostly
    // repeat, and zstd finds the repeats for less CPU than delta encoding costs (measured: a
    // tenth of the export's time). Differences wrap, as the format says.
    let mut b = WriterProperties::builder().set_dictionary_enabled(false);
    for f in schema.fields() {
        let t = f.data_type();
        if matches!(
            t,
            DataType::UInt64 | DataType::Int64 | DataType::Timestamp(..)
        ) {
            b = b.set_column_encoding(
                ColumnPath::from(f.name().as_str()),
                Encoding::DELTA_BINARY_PACKED,
            );
        }
        if t == &DataType::Utf8 {
            let col = ColumnPath::from(f.name().as_str());
            b = b.set_column_dictionary_enabled(col.clone(), true);
            // `capture` and `host` keep theirs: one value per file, so a query on a host skips
            // the other hosts' files by the footer alone.
            if !matches!(f.name().as_str(), "capture" | "host") {
                b = b.set_column_statistics_enabled(col, EnabledStatistics::None);
            }
        }
    }
    b.set_compression(Compression::ZSTD(
        ZstdLevel::try_new(ZSTD_LEVEL).unwrap_or_default(),
    ))
    .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
    .set_statistics_enabled(EnabledStatistics::Chunk)
    .set_key_value_metadata(Some(meta))
    .set_created_by(format!("roce-inspect {}", env!("CARGO_PKG_VERSION")))
    .build()
}

/// Write the footer, flush and sync the file.
fn close(w: ArrowWriter<BufWriter<File>>, tmp: &Path) -> Result<(), ExportError> {
    let buf = w.into_inner().map_err(|e| ExportError::parquet(tmp, e))?;
    let file = buf
        .into_inner()
        .map_err(|e| ExportError::io(tmp, e.into_error()))?;
    file.sync_all().map_err(|e| ExportError::io(tmp, e))
}

impl<T: Send + 'static> Drop for PartFile<T> {
    /// An unfinished file (an error, or a run stopped early) is removed.
    fn drop(&mut self) {
        if self.worker.running() {
            let _ = self.worker.join();
        }
        // The temporary file, unless renamed, goes with `self.tmp`.
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_names_say_their_process() {
        let n = temp_name(PART);
        assert!(
            n.starts_with(".part-0.parquet.") && n.ends_with(".tmp"),
            "{n}"
        );
        assert_eq!(temp_owner(&n, PART), Some(std::process::id()));
        assert_eq!(temp_owner(".part-0.parquet.77-3.tmp", PART), Some(77));
        for other in [
            PART,
            ".part-0.parquet.x-1.tmp",
            ".other.77-3.tmp",
            ".part-0.parquet.77.tmp",
        ] {
            assert_eq!(temp_owner(other, PART), None, "{other}");
        }
    }

    #[test]
    fn partition_values_are_escaped_like_hive() {
        assert_eq!(escape_partition_value("run-1.pcap"), "run-1.pcap");
        assert_eq!(escape_partition_value("a=b/c%"), "a%3Db%2Fc%25");
        assert_eq!(escape_partition_value("x:y\n"), "x%3Ay%0A");
        assert_eq!(escape_partition_value(".."), "%2E%2E");
        assert_eq!(
            partition_dir(Path::new("/d"), "packets", "t.pcap"),
            Path::new("/d/packets/capture=t.pcap")
        );
    }
}
