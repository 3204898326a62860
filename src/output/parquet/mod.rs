//! Parquet export (`roce-inspect export FILE… --parquet DIR`, `capture … --parquet DIR`): one
//! capture becomes six tables, each a Hive-style partition `DIR/TABLE/capture=NAME/
//! part-0.parquet`, so that the exports of many captures and hosts in one folder (or an object
//! store prefix) read as one dataset in DuckDB, Polars or Spark.
//!
//! - `packets` ([`packets`]): one row per RoCE frame, typed columns from the decoder's packet;
//! - `messages` ([`messages`]): the `--summary --json --messages` report's `messages` array,
//!   one row per message, fixed typed columns named as the JSON keys;
//! - `gaps` ([`gaps`]): the report's `gaps` array, one row per gap event, fixed typed columns
//!   named as the JSON keys;
//! - `flows`, `connections`, `findings` ([`report`]): the `--summary --json` report's arrays,
//!   one row per item, columns inferred from the JSON values.
//!
//! Memory stays bounded on any capture length: packets are collected into batches of
//! [`PACKET_BATCH_ROWS`] rows, turned into columns and written as row groups of
//! [`ROW_GROUP_ROWS`] rows (zstd) on a writer thread; reassembled messages go to a writer
//! thread of their own in batches as they complete. The file format is Apache Parquet
//! (<https://parquet.apache.org/docs/file-format/>), written with the `parquet` crate.

#[macro_use]
pub mod columns;
pub mod file;
pub mod flat;
pub mod gaps;
pub mod marked;
pub mod messages;
pub mod packets;
pub mod report;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, RecordBatchOptions, StringArray};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};
use serde::Serialize;

use crate::analyze::marks::MarkState;
use crate::analyze::message::Message;
use crate::analyze::report::GapReport;
use crate::analyze::{Analyzer, Report};
use crate::decode::RocePacket;
use file::PartFile;
pub use packets::PacketMeta;
use packets::{PacketRow, PacketRows};
use report::TableLayout;

/// Version of the tables' layout, stored in every file's key-value metadata as
/// `roce_inspect.schema_version`. Raised when a column of `packets` or `messages` changes
/// meaning or type (the other report tables' columns follow the JSON report's keys).
pub const SCHEMA_VERSION: u32 = 1;

/// Rows per Parquet row group (the unit engines read in parallel and skip by statistics).
pub const ROW_GROUP_ROWS: usize = 1 << 20;

/// Report rows collected before they are handed to the Parquet writer as one batch.
pub const BATCH_ROWS: usize = 1 << 16;

/// Packets collected before they are handed to the Parquet writer's thread, which turns them
/// into one record batch (a row is ~430 bytes: 2,048 rows are 0.9 MB).
pub const PACKET_BATCH_ROWS: usize = 1 << 11;

/// An export failure, naming the file.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// Creating, writing or renaming a file failed. (The cause is in the message itself, not a
    /// chained source, so that the one-line error does not repeat it.)
    #[error("{path}: {}", crate::output::io_text(err))]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The I/O error.
        err: io::Error,
    },
    /// The Parquet writer failed (an I/O error underneath, or a bug).
    #[error("{path}: {err}")]
    Parquet {
        /// The file.
        path: PathBuf,
        /// The writer's error.
        err: parquet::errors::ParquetError,
    },
}

impl ExportError {
    fn io(path: &Path, source: io::Error) -> ExportError {
        ExportError::Io {
            path: path.to_path_buf(),
            err: source,
        }
    }

    fn parquet(path: &Path, source: impl Into<parquet::errors::ParquetError>) -> ExportError {
        ExportError::Parquet {
            path: path.to_path_buf(),
            err: source.into(),
        }
    }
}

/// Where one capture's tables go, and the names stored in them.
#[derive(Clone, Debug)]
pub struct ExportTarget {
    /// The dataset folder (`--parquet DIR`).
    pub dir: PathBuf,
    /// The capture's name: the `capture` column and partition value (the file name).
    pub capture: String,
    /// The `host` column (`--host NAME`).
    pub host: String,
}

/// The capture name of the file `path`: its file name (`stdin` for `-`), the `capture`
/// column and partition value of its tables.
pub fn capture_name(path: &str) -> String {
    if path == "-" {
        return "stdin".to_string();
    }
    Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.to_string())
}

/// The default `host` column of the file `path`: its file name without the last extension.
pub fn default_host(path: &str) -> String {
    let name = capture_name(path);
    match name.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => stem.to_string(),
        _ => name,
    }
}

/// Rows written per table, for the final message.
#[derive(Clone, Debug, Default)]
pub struct ExportCounts {
    /// `packets` rows.
    pub packets: u64,
    /// `flows` rows.
    pub flows: u64,
    /// `connections` rows.
    pub connections: u64,
    /// `messages` rows.
    pub messages: u64,
    /// `gaps` rows.
    pub gaps: u64,
    /// `findings` rows.
    pub findings: u64,
}

/// One capture being exported: packets stream in, the report comes at the end.
pub struct Exporter {
    target: ExportTarget,
    rows: PacketRows,
    packets: PartFile<Vec<PacketRow>>,
    messages: PartFile<Vec<Message>>,
    counts: ExportCounts,
    /// The analysis marks of the rows and the rows waiting for late ones (see [`marked`]).
    marks: Option<marked::MarkWindow>,
}

impl Exporter {
    /// Start the export of one capture (creates the `packets` and `messages` partitions).
    ///
    /// # Errors
    /// A folder or file under `target.dir` cannot be created.
    pub fn create(target: ExportTarget) -> Result<Exporter, ExportError> {
        let packets = typed_table(&target, "packets", packets::schema(), packets::batch)?;
        let messages = typed_table(&target, "messages", messages::schema(), messages::batch)?;
        Ok(Exporter {
            target,
            rows: PacketRows::new(),
            packets,
            messages,
            counts: ExportCounts::default(),
            marks: None,
        })
    }

    /// Fill the `analysis_*` columns from the marks tap `state` (from
    /// [`crate::analyze::marks::tap`] on the analyzer the frames go through): then call
    /// [`Exporter::begin`] before each frame is analysed and [`Exporter::frame`] after.
    pub fn mark_with(&mut self, state: std::sync::Arc<std::sync::Mutex<MarkState>>) {
        self.marks = Some(marked::MarkWindow::new(state));
    }

    /// Before frame `number` is analysed (with [`Exporter::mark_with`]).
    pub fn begin(&self, number: u64) {
        if let Some(w) = &self.marks {
            w.begin(number);
        }
    }

    /// Add one RoCE packet.
    ///
    /// # Errors
    /// Writing a full batch failed.
    pub fn packet(&mut self, m: &PacketMeta<'_>, p: &RocePacket<'_>) -> Result<(), ExportError> {
        match &mut self.marks {
            Some(w) => {
                if let Some(r) = w.push(PacketRow::new(m, p)) {
                    self.rows.push_row(r);
                }
            }
            None => self.rows.push(m, p),
        }
        self.counts.packets += 1;
        if self.rows.len() >= PACKET_BATCH_ROWS {
            self.flush_rows()?;
        }
        Ok(())
    }

    /// Add the decoded frame `m.decoded` if it is RoCE; once per batch of packets, also write
    /// the messages `analyzer` completed meanwhile (pass `None` to leave them in its report).
    ///
    /// # Errors
    /// Writing a full batch failed.
    pub fn frame(
        &mut self,
        m: &PacketMeta<'_>,
        analyzer: Option<&mut Analyzer>,
    ) -> Result<(), ExportError> {
        let Some(p) = m.decoded.roce() else {
            return Ok(());
        };
        self.packet(m, p)?;
        if self.rows.is_empty()
            && let Some(a) = analyzer
        {
            self.messages(a.take_messages())?;
        }
        Ok(())
    }

    /// Write completed messages (from [`crate::analyze::Analyzer::take_messages`]).
    ///
    /// # Errors
    /// Writing the `messages` table failed.
    pub fn messages(&mut self, msgs: Vec<Message>) -> Result<(), ExportError> {
        if msgs.is_empty() {
            return Ok(());
        }
        self.counts.messages += msgs.len() as u64;
        self.messages.write(msgs)
    }

    fn flush_rows(&mut self) -> Result<(), ExportError> {
        self.packets.write(self.rows.take())
    }

    /// Finish the `packets` and `messages` tables (the messages of `report`, if any, follow
    /// those already written) and write the other report tables from `report`. The five files
    /// take their final names only when all are complete, so that a failure leaves the
    /// capture's earlier export, if any, whole.
    ///
    /// # Errors
    /// Writing any of the files failed; the files not yet finished are removed.
    pub fn finish(mut self, report: &Report) -> Result<ExportCounts, ExportError> {
        if let Some(mut w) = self.marks.take() {
            for r in w.drain() {
                self.rows.push_row(r);
                if self.rows.len() >= PACKET_BATCH_ROWS {
                    self.flush_rows()?;
                }
            }
        }
        if !self.rows.is_empty() {
            self.flush_rows()?;
        }
        if let Some(m) = &report.messages {
            self.messages(m.clone())?;
        }
        // Both writers' threads are waited for, whichever fails first.
        let packets = self.packets.close();
        let messages = self.messages.close();
        packets.and(messages)?;
        let t = &self.target;
        let mut counts = self.counts.clone();
        let (flows, n) = write_items(t, "flows", &report.flows)?;
        counts.flows = n;
        let (connections, n) = write_items(t, "connections", &report.connections)?;
        counts.connections = n;
        let (gaps, n) = write_gaps(t, &report.gaps)?;
        counts.gaps = n;
        let (findings, n) = write_items(t, "findings", &report.findings)?;
        counts.findings = n;
        self.packets.publish()?;
        self.messages.publish()?;
        for f in [flows, connections, gaps, findings] {
            f.publish()?;
        }
        Ok(counts)
    }
}

/// A table of fixed columns written from items of type `T` by `convert` (`packets`,
/// `messages`): the conversion to columns runs on the writer's thread too.
fn typed_table<T: Send + 'static>(
    target: &ExportTarget,
    table: &str,
    schema: SchemaRef,
    convert: fn(&SchemaRef, &[T], &mut Constants) -> Result<RecordBatch, ArrowError>,
) -> Result<PartFile<Vec<T>>, ExportError> {
    let mut constants = Constants::new(&target.capture, &target.host);
    let of_rows = schema.clone();
    PartFile::create_with(
        &target.dir,
        table,
        &target.capture,
        &target.host,
        schema,
        move |rows: Vec<T>| convert(&of_rows, &rows, &mut constants),
    )
}

/// The schema of a table: `capture` and `host`, then `fields`.
pub fn table_schema(fields: impl IntoIterator<Item = Field>) -> SchemaRef {
    let mut f = vec![
        Field::new("capture", DataType::Utf8, false),
        Field::new("host", DataType::Utf8, false),
    ];
    f.extend(fields);
    Arc::new(Schema::new(f))
}

/// A batch of `rows` rows of a table of `schema` ([`table_schema`]): the `capture` and `host`
/// columns of `constants`, then `columns`.
///
/// # Errors
/// Arrow's error if the columns disagree with the schema (a bug).
pub fn table_batch(
    schema: &SchemaRef,
    constants: &mut Constants,
    rows: usize,
    columns: Vec<ArrayRef>,
) -> Result<RecordBatch, ArrowError> {
    let mut cols = constants.columns(rows);
    cols.extend(columns);
    let opts = RecordBatchOptions::new().with_row_count(Some(rows));
    RecordBatch::try_new_with_options(schema.clone(), cols, &opts)
}

/// The `capture` and `host` columns: the same text in every row. Made for the longest batch
/// so far and shared (an `Arc`, sliced to length) by every batch up to that length.
pub struct Constants {
    capture: String,
    host: String,
    made: Option<[ArrayRef; 2]>,
}

impl Constants {
    /// The columns of `capture` taken on `host`.
    pub fn new(capture: &str, host: &str) -> Constants {
        Constants {
            capture: capture.to_string(),
            host: host.to_string(),
            made: None,
        }
    }

    /// The two columns for a batch of `rows` rows.
    pub fn columns(&mut self, rows: usize) -> Vec<ArrayRef> {
        if self.made.as_ref().is_none_or(|[c, _]| c.len() < rows) {
            let constant = |v: &str| -> ArrayRef {
                Arc::new(StringArray::from_iter_values(std::iter::repeat_n(v, rows)))
            };
            self.made = Some([constant(&self.capture), constant(&self.host)]);
        }
        let made = self.made.as_ref().map_or(&[][..], |m| &m[..]);
        made.iter().map(|c| c.slice(0, rows)).collect()
    }
}

/// Write the report's gaps as the `gaps` table (fixed columns), in batches of [`BATCH_ROWS`]
/// rows; the closed file (to be published) and the rows written.
fn write_gaps(t: &ExportTarget, items: &[GapReport]) -> Result<(PartFile, u64), ExportError> {
    let where_ = file::partition_dir(&t.dir, "gaps", &t.capture);
    let schema = gaps::schema();
    let mut out = PartFile::create(&t.dir, "gaps", &t.capture, &t.host, schema.clone())?;
    let mut constants = Constants::new(&t.capture, &t.host);
    for chunk in items.chunks(BATCH_ROWS) {
        let b = gaps::batch(&schema, chunk, &mut constants)
            .map_err(|e| ExportError::parquet(&where_, e))?;
        out.write(b)?;
    }
    out.close()?;
    Ok((out, items.len() as u64))
}

/// Write a report array held in memory as a table, in batches of [`BATCH_ROWS`] rows; the
/// closed file (to be published) and the rows written.
fn write_items<T: Serialize>(
    t: &ExportTarget,
    table: &str,
    items: &[T],
) -> Result<(PartFile, u64), ExportError> {
    let where_ = file::partition_dir(&t.dir, table, &t.capture);
    let flat = |e| ExportError::io(&where_, io::Error::other(e));
    let mut layout = TableLayout::infer(items).map_err(flat)?;
    let mut out = PartFile::create(&t.dir, table, &t.capture, &t.host, layout.schema())?;
    let mut rows = layout.rows();
    let mut constants = Constants::new(&t.capture, &t.host);
    for chunk in items.chunks(BATCH_ROWS) {
        for it in chunk {
            rows.push(&mut layout, it).map_err(flat)?;
        }
        let b = rows
            .take_batch(&layout, &mut constants)
            .map_err(|e| ExportError::parquet(&where_, e))?;
        out.write(b)?;
    }
    out.close()?;
    Ok((out, items.len() as u64))
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
