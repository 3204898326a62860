//! Capture files: pcap with µs or ns timestamps, pcapng, and `-` for standard input.
//!
//! A regular file is mapped and walked in place ([`super::mapped`]): no frame is copied. Standard
//! input, and any file or record the walker leaves alone (damaged, unusual), go through libpcap
//! (`pcap_open_offline_with_tstamp_precision`, nanoseconds requested so both precisions stay
//! exact), which then also words the errors: the walker hands over to libpcap at the record
//! where it stopped, so what the user sees is the same either way. BPF filters are compiled by
//! libpcap and run on each record with `pcap_offline_filter` in both cases.

use std::fs;
use std::path::Path;
use std::sync::Arc;

use pcap::{BpfProgram, Capture, Linktype, Offline, Precision};

use super::mapped::{MappedFile, Step};
use super::tag_miss::{IsRoce, TagMiss};
use super::{Record, erf, ts_to_ns};
use crate::decode::LinkType;

/// Errors opening or reading a capture file; `Display` is the one line shown to the user
/// (without the file name, which the caller adds).
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The file could not be opened (missing, permission) — the OS message.
    #[error("{0}")]
    Open(String),
    /// The file has no bytes.
    #[error("file is empty")]
    Empty,
    /// libpcap does not recognise the format, or the header is damaged.
    #[error("not a pcap or pcapng capture ({0})")]
    Format(String),
    /// The link type is not one roce-inspect decodes.
    #[error(
        "link type {0} ({1}) is not supported; supported: Ethernet (1), Linux cooked v1 (113) and v2 (276), raw IP (101, 228, 229), BSD loopback (0, 108), InfiniBand (247), ERF (197)"
    )]
    LinkType(u32, String),
    /// A bad BPF filter expression: the expression and libpcap's message (a usage error:
    /// `roce-inspect` exits with status 2).
    #[error("bad filter expression '{0}': {1}")]
    Filter(String, String),
    /// Reading stopped in the middle of the file (libpcap's message, e.g. a truncated record).
    #[error("{0}")]
    Read(String),
}

/// A record of a mapped file, located by offset ([`FileSource::next_mapped_batch`]); the
/// fields are those of [`Record`].
#[derive(Clone, Copy, Debug)]
pub struct MappedRecord {
    /// Frame number in the file, from 1.
    pub number: u64,
    /// Capture time, ns since the Unix epoch.
    pub ts_ns: u64,
    /// Capture time of the file's first frame, ns.
    pub base_ts_ns: u64,
    /// Bytes captured.
    pub caplen: u32,
    /// Bytes on the wire.
    pub len: u32,
    /// Offset of the captured bytes in the mapping.
    pub start: usize,
    /// Bytes of the record in the mapping: `caplen`, or more where the record's bytes begin
    /// with a pseudo-header that `caplen` does not count (link type ERF: [`super::erf::Framed`]).
    pub data_len: u32,
}

impl MappedRecord {
    /// The record's bytes in `map` (the file's [`FileSource::shared_map`]).
    pub fn data<'m>(&self, map: &'m [u8]) -> &'m [u8] {
        &map[self.start..self.start + self.data_len as usize]
    }

    /// As a [`Record`] borrowing `map`.
    pub fn record<'m>(&self, map: &'m [u8]) -> Record<'m> {
        Record {
            number: self.number,
            ts_ns: self.ts_ns,
            base_ts_ns: self.base_ts_ns,
            caplen: self.caplen,
            len: self.len,
            data: self.data(map),
        }
    }
}

/// One step of the mapped reader.
enum MappedStep {
    Record(super::mapped::RawRecord),
    Done,
    LeftMapping,
    /// The filter rejected every record up to the offset asked for.
    Skipped,
}

/// Where the records come from.
enum Backend {
    /// libpcap's reader.
    Libpcap(Capture<Offline>),
    /// The file mapped in memory, walked in place.
    Mapped(MappedFile),
}

/// A capture file opened for reading.
pub struct FileSource {
    backend: Backend,
    /// The path, to hand the file to libpcap after an anomaly (`None` for standard input).
    path: Option<String>,
    linktype: LinkType,
    /// Which of an ERF header's values the records take (link type ERF only).
    erf: erf::Rule,
    filter: Option<BpfProgram>,
    /// Counts the tagged RoCE frames `filter` rejects ([`FileSource::count_tag_misses`]).
    tag_miss: Option<TagMiss>,
    number: u64,
    /// Time of the first frame in the file (ns), once read.
    base_ts_ns: Option<u64>,
    /// The current frame's bytes. libpcap's buffer cannot be handed out from inside the
    /// filter loop (the borrow checker cannot see that a skipped frame's borrow ends), so the
    /// frame is copied once into this reused buffer: no allocation after the first frames.
    buf: Vec<u8>,
    done: bool,
}

fn pcap_msg(e: pcap::Error) -> String {
    match e {
        pcap::Error::PcapError(s) => s,
        other => other.to_string(),
    }
}

impl FileSource {
    /// Open `path` (`-` for standard input). A regular file is mapped and walked in place
    /// unless the environment sets `ROCE_INSPECT_READER=libpcap` (libpcap's reader throughout,
    /// for comparisons).
    ///
    /// # Errors
    /// [`FileError`] when the file is missing, empty, not a capture, or of an unsupported link
    /// type.
    pub fn open(path: &str) -> Result<FileSource, FileError> {
        if path != "-" {
            check_file(Path::new(path))?;
            let mapped = std::env::var_os("ROCE_INSPECT_READER").is_none_or(|v| v != "libpcap");
            let file = fs::File::open(path).ok().filter(|_| mapped);
            if let Some(m) = file.as_ref().and_then(MappedFile::open) {
                // libpcap validates the file header (and pcapng's first blocks) on opening: open
                // it too, so that a file it refuses is refused with its words, and the mapping
                // is used only where both agree on the link type.
                let cap = open_libpcap(path)?;
                if LinkType::from_dlt(cap.get_datalink().0) == m.linktype() {
                    let pcapng = m.is_pcapng();
                    return Self::with_backend(
                        m.linktype(),
                        Backend::Mapped(m),
                        Some(path),
                        pcapng,
                    );
                }
            }
        }
        let cap = open_libpcap(path)?;
        let lt = cap.get_datalink();
        let linktype = LinkType::from_dlt(lt.0);
        if !linktype.is_supported() {
            let name = lt.get_name().unwrap_or_else(|_| "unknown".into());
            return Err(FileError::LinkType(linktype.0, name));
        }
        // libpcap gives a pcapng file the version of its Section Header Block (1.0), a classic
        // pcap file its own (2.4; it refuses older ones).
        let pcapng = cap.major_version() == 1;
        Self::with_backend(
            linktype,
            Backend::Libpcap(cap),
            (path != "-").then_some(path),
            pcapng,
        )
    }

    fn with_backend(
        linktype: LinkType,
        backend: Backend,
        path: Option<&str>,
        pcapng: bool,
    ) -> Result<FileSource, FileError> {
        if !linktype.is_supported() {
            let name = Linktype(linktype.0 as i32)
                .get_name()
                .unwrap_or_else(|_| "unknown".into());
            return Err(FileError::LinkType(linktype.0, name));
        }
        Ok(FileSource {
            backend,
            path: path.map(str::to_string),
            linktype,
            erf: erf::Rule::new(linktype, pcapng),
            filter: None,
            tag_miss: None,
            number: 0,
            base_ts_ns: None,
            buf: Vec::with_capacity(65536),
            done: false,
        })
    }

    /// Whether records are read in place from a mapping (true) or through libpcap.
    pub fn is_mapped(&self) -> bool {
        matches!(self.backend, Backend::Mapped(_))
    }

    /// Read the rest of the file through libpcap, even when it could be mapped (for tests that
    /// compare the two readers).
    ///
    /// # Errors
    /// [`FileError`] when libpcap cannot open the file again.
    pub fn use_libpcap(&mut self) -> Result<(), FileError> {
        if self.is_mapped() {
            self.switch_to_libpcap()?;
        }
        Ok(())
    }

    /// Hand the file to libpcap and skip the records already returned.
    fn switch_to_libpcap(&mut self) -> Result<(), FileError> {
        let path = self.path.clone().unwrap_or_else(|| "-".into());
        let mut cap = open_libpcap(&path)?;
        if let Backend::Mapped(m) = &mut self.backend {
            m.release_all_walked();
        }
        for _ in 0..self.number {
            if let Err(e) = cap.next_packet() {
                // The walker read these records; libpcap disagreeing is its error to report.
                self.done = true;
                return end(e).map(|_| ());
            }
        }
        self.backend = Backend::Libpcap(cap);
        Ok(())
    }

    /// Apply a libpcap BPF filter expression (tcpdump syntax). The filter runs here, in user
    /// space (`pcap_offline_filter`), rather than inside libpcap's reader, so that frames keep
    /// their numbers in the file as Wireshark shows them.
    ///
    /// # Errors
    /// [`FileError::Filter`] with libpcap's message.
    pub fn set_filter(&mut self, expr: &str) -> Result<(), FileError> {
        let prog = match &mut self.backend {
            Backend::Libpcap(cap) => cap.compile(expr, true),
            Backend::Mapped(_) => {
                Capture::dead_with_precision(Linktype(self.linktype.to_dlt()), Precision::Nano)
                    .and_then(|dead| dead.compile(expr, true))
            }
        }
        .map_err(|e| FileError::Filter(expr.to_string(), filter_msg(e)))?;
        self.filter = Some(prog);
        Ok(())
    }

    /// With a filter on an Ethernet file, count the frames it rejects that it would match
    /// without their VLAN tags and that `is_roce` accepts ([`TagMiss`]). No-op otherwise.
    pub fn count_tag_misses(&mut self, is_roce: IsRoce) {
        if self.filter.is_some() && self.linktype == LinkType::ETHERNET {
            self.tag_miss = Some(TagMiss::new(is_roce));
        }
    }

    /// Every record read so far is decoded: release the mapped pages still held (no-op for
    /// libpcap's reader).
    pub fn release_all_walked(&mut self) {
        if let Backend::Mapped(m) = &mut self.backend {
            m.release_all_walked();
        }
    }

    /// Work on the mapped pages that the walk leaves to be done outside it (records located in
    /// windows by [`FileSource::next_mapped_batch`]); `None` for libpcap's reader or when there
    /// is none.
    pub fn page_work(&mut self) -> Option<super::mapped::PageWork> {
        match &mut self.backend {
            Backend::Mapped(m) => m.page_work(),
            Backend::Libpcap(_) => None,
        }
    }

    /// The tagged-frame counter, when [`FileSource::count_tag_misses`] enabled it.
    pub fn tag_miss(&self) -> Option<&TagMiss> {
        self.tag_miss.as_ref()
    }

    /// Records read from the file so far, those a filter skipped included: the number of the
    /// last frame read.
    pub fn frames_read(&self) -> u64 {
        self.number
    }

    /// Whether a filter is set ([`FileSource::set_filter`]).
    pub fn filtered(&self) -> bool {
        self.filter.is_some()
    }

    /// The file's link type.
    pub fn linktype(&self) -> LinkType {
        self.linktype
    }

    /// The next frame; `Ok(None)` at the end of the file.
    ///
    /// # Errors
    /// [`FileError::Read`] when the file ends inside a record or a record is invalid; the
    /// source returns `Ok(None)` afterwards.
    pub fn next_record(&mut self) -> Result<Option<Record<'_>>, FileError> {
        if self.done {
            return Ok(None);
        }
        if self.is_mapped() {
            return self.next_mapped();
        }
        self.next_libpcap()
    }

    /// [`FileSource::next_record`] from the mapping; on an anomaly, libpcap takes over.
    fn next_mapped(&mut self) -> Result<Option<Record<'_>>, FileError> {
        let raw = match self.step_mapped(usize::MAX)? {
            MappedStep::Record(r) => r,
            MappedStep::Done => return Ok(None),
            MappedStep::LeftMapping => return self.next_libpcap(),
            MappedStep::Skipped => unreachable!("no offset is past usize::MAX"),
        };
        let Backend::Mapped(m) = &self.backend else {
            unreachable!("the mapping is only left on an anomaly")
        };
        let mut rec = Record {
            number: self.number,
            ts_ns: raw.ts_ns,
            base_ts_ns: self.base_ts_ns.unwrap_or_default(),
            caplen: raw.caplen,
            len: raw.len,
            data: m.bytes(&raw),
        };
        self.erf.apply(&mut rec);
        Ok(Some(rec))
    }

    /// The next record of the mapping that passes the filter (counting tag misses), the end,
    /// or — after an anomaly — the hand-over to libpcap; [`MappedStep::Skipped`] once the
    /// filter has rejected every record up to offset `until`.
    fn step_mapped(&mut self, until: usize) -> Result<MappedStep, FileError> {
        loop {
            let Backend::Mapped(m) = &mut self.backend else {
                return Ok(MappedStep::LeftMapping);
            };
            if m.pos() >= until {
                return Ok(MappedStep::Skipped);
            }
            match m.step() {
                Step::Record(r) => {
                    self.number += 1;
                    let erf = self.erf;
                    self.base_ts_ns
                        .get_or_insert_with(|| erf.time(r.ts_ns, m.bytes(&r)));
                    let Some(f) = &self.filter else {
                        return Ok(MappedStep::Record(r));
                    };
                    let data = m.bytes(&r);
                    if f.filter(data) {
                        return Ok(MappedStep::Record(r));
                    }
                    if let Some(t) = &mut self.tag_miss {
                        t.rejected(f, data, r.len);
                    }
                }
                Step::End => {
                    self.done = true;
                    return Ok(MappedStep::Done);
                }
                Step::Anomaly => {
                    self.switch_to_libpcap()?;
                    if self.done {
                        return Ok(MappedStep::Done);
                    }
                    return Ok(MappedStep::LeftMapping);
                }
            }
        }
    }

    /// The mapping, shared, while records are read from it (`None` for libpcap's reader):
    /// [`MappedRecord`]s locate their bytes in it.
    pub fn shared_map(&self) -> Option<Arc<super::sigbus::Watched>> {
        match &self.backend {
            Backend::Mapped(m) => Some(m.shared()),
            Backend::Libpcap(_) => None,
        }
    }

    /// Append to `out` up to `max` records located in the mapping (for reading in parallel),
    /// walking no further than `max_bytes` of the file past where the batch starts (the record
    /// that reaches it included). `Ok(true)` while the mapping may hold more; `Ok(false)` at the
    /// end of the file or when an anomaly handed the file to libpcap (read the rest with
    /// [`FileSource::next_record`]). The pages of the last `kept` batches located (this one
    /// included), from their first records on, stay mapped: records still being decoded or
    /// analysed elsewhere are not read again from the page cache. A filter that rejects most
    /// records makes batches of few records, or none, rather than batches that span the file.
    ///
    /// # Errors
    /// [`FileError`] when libpcap, taking over, fails.
    pub fn next_mapped_batch(
        &mut self,
        max: usize,
        max_bytes: usize,
        kept: usize,
        out: &mut Vec<MappedRecord>,
    ) -> Result<bool, FileError> {
        let first = out.len();
        let until = match &self.backend {
            Backend::Mapped(m) => m.pos().saturating_add(max_bytes),
            Backend::Libpcap(_) => return Ok(false),
        };
        for _ in 0..max {
            if self.done {
                return Ok(false);
            }
            match self.step_mapped(until)? {
                MappedStep::Record(r) => {
                    let Backend::Mapped(m) = &mut self.backend else {
                        unreachable!("records come from the mapping while it is walked")
                    };
                    if out.len() == first {
                        m.begin_window(r.start, kept);
                    }
                    let f = self.erf.frame(r.ts_ns, r.len, r.caplen, m.bytes(&r));
                    out.push(MappedRecord {
                        number: self.number,
                        ts_ns: f.ts_ns,
                        base_ts_ns: self.base_ts_ns.unwrap_or_default(),
                        caplen: f.caplen,
                        len: f.len,
                        start: r.start,
                        data_len: f.data_len as u32,
                    });
                    if m.pos() >= until {
                        break;
                    }
                }
                MappedStep::Skipped => break,
                MappedStep::Done | MappedStep::LeftMapping => return Ok(false),
            }
        }
        if out.len() == first
            && let Backend::Mapped(m) = &mut self.backend
        {
            // A batch of no records holds no pages; the windows before it move on.
            m.end_empty_window(kept);
        }
        Ok(true)
    }

    /// [`FileSource::next_record`] through libpcap.
    fn next_libpcap(&mut self) -> Result<Option<Record<'_>>, FileError> {
        let Backend::Libpcap(cap) = &mut self.backend else {
            unreachable!("next_libpcap on a mapped file")
        };
        if self.filter.is_none() {
            // Fast path: hand out libpcap's buffer directly, no copy.
            return match cap.next_packet() {
                Ok(p) => {
                    self.number += 1;
                    let ts_ns = ts_to_ns(&p.header.ts);
                    let erf = self.erf;
                    self.base_ts_ns
                        .get_or_insert_with(|| erf.time(ts_ns, p.data));
                    let mut rec = Record {
                        number: self.number,
                        ts_ns,
                        base_ts_ns: self.base_ts_ns.unwrap_or_default(),
                        caplen: p.header.caplen,
                        len: p.header.len,
                        data: p.data,
                    };
                    self.erf.apply(&mut rec);
                    Ok(Some(rec))
                }
                Err(e) => {
                    self.done = true;
                    end(e)
                }
            };
        }
        let header = loop {
            match cap.next_packet() {
                Ok(p) => {
                    self.number += 1;
                    let erf = self.erf;
                    self.base_ts_ns
                        .get_or_insert_with(|| erf.time(ts_to_ns(&p.header.ts), p.data));
                    if let Some(f) = &self.filter
                        && !f.filter(p.data)
                    {
                        if let Some(m) = &mut self.tag_miss {
                            m.rejected(f, p.data, p.header.len);
                        }
                        continue;
                    }
                    self.buf.clear();
                    self.buf.extend_from_slice(p.data);
                    break *p.header;
                }
                Err(e) => {
                    self.done = true;
                    return end(e);
                }
            }
        };
        let mut rec = Record {
            number: self.number,
            ts_ns: ts_to_ns(&header.ts),
            base_ts_ns: self.base_ts_ns.unwrap_or_default(),
            caplen: header.caplen,
            len: header.len,
            data: &self.buf,
        };
        self.erf.apply(&mut rec);
        Ok(Some(rec))
    }
}

/// libpcap's message for a filter it cannot compile, without its "can't parse filter
/// expression: " preamble (the caller names the expression).
pub fn filter_msg(e: pcap::Error) -> String {
    let m = pcap_msg(e);
    match m.strip_prefix("can't parse filter expression: ") {
        Some(rest) => rest.to_string(),
        None => m,
    }
}

/// The checks made before opening a named file: it exists, is not a directory, is not empty.
fn check_file(p: &Path) -> Result<(), FileError> {
    match fs::metadata(p) {
        Err(e) => Err(FileError::Open(io_msg(&e))),
        Ok(m) if m.is_file() && m.len() == 0 => Err(FileError::Empty),
        Ok(m) if m.is_dir() => Err(FileError::Open("is a directory".into())),
        Ok(_) => Ok(()),
    }
}

/// Open `path` (`-`: standard input) with libpcap, nanosecond timestamps.
fn open_libpcap(path: &str) -> Result<Capture<Offline>, FileError> {
    if path == "-" {
        // SAFETY: fd 0 is open for the life of the process; libpcap takes a FILE* over it.
        return unsafe { Capture::from_raw_fd_with_precision(0, Precision::Nano) }.map_err(|e| {
            let m = pcap_msg(e);
            // libpcap's wording when standard input ends before the first byte.
            if m.contains("file header bytes, only got 0") {
                FileError::Empty
            } else {
                FileError::Format(m)
            }
        });
    }
    Capture::from_file_with_precision(Path::new(path), Precision::Nano).map_err(|e| {
        let m = pcap_msg(e);
        if m.contains("Permission denied") {
            FileError::Open("Permission denied".into())
        } else if m.contains("file header bytes, only got 0") {
            // Not a regular file (/dev/null, a FIFO) that ends before its first byte.
            FileError::Empty
        } else {
            FileError::Format(m)
        }
    })
}

/// End of the file (`Ok(None)`) or a read error.
fn end(e: pcap::Error) -> Result<Option<Record<'static>>, FileError> {
    match e {
        pcap::Error::NoMorePackets => Ok(None),
        e => {
            let mut m = pcap_msg(e);
            if m.contains("different from the type of the first interface") {
                // A pcapng of interfaces of several link types (dumpcap -i eth0 -i ib0):
                // libpcap, which reads the rest of a file once the mapped reader hands it an
                // anomaly, takes one link type per file.
                m.push_str(
                    ": the file mixes link types, which libpcap (and so roce-inspect) reads one per file; capture each interface to a file of its own",
                );
            }
            Err(FileError::Read(m))
        }
    }
}

fn io_msg(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "No such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "Permission denied".into(),
        _ => e.to_string(),
    }
}

/// The name a capture file is given in messages: `<stdin>` for `-`, else the path as given.
pub fn shown(path: &str) -> &str {
    if path == "-" { "<stdin>" } else { path }
}

/// Where a read error of the file shown as `shown` happened: after frame `n` (its number in
/// the file), or the file alone when no frame was read.
pub fn after_frame(shown: &str, n: u64) -> String {
    match n {
        0 => shown.to_string(),
        n => format!("{shown}: after frame {n}"),
    }
}

/// Whether the paths `a` and `b` name the same file (through `..`, links or not); the same
/// string when either cannot be resolved (a missing file, standard input `-`).
pub fn same_file(a: &str, b: &str) -> bool {
    match (fs::canonicalize(a), fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_in_messages() {
        assert_eq!(shown("-"), "<stdin>");
        assert_eq!(shown("a/b.pcap"), "a/b.pcap");
        assert_eq!(after_frame("x.pcap", 0), "x.pcap");
        assert_eq!(after_frame("x.pcap", 7), "x.pcap: after frame 7");
    }

    /// What locating every batch of `path`'s records with `filter` (batches of at most 256
    /// records spanning at most `span` bytes, 3 kept) did: whether page work was left to other
    /// threads (records were located in windows), the records located, the batches, and the
    /// most bytes walked but not released (or left to release) after a batch.
    fn batches(path: &str, filter: &str, span: usize) -> (bool, usize, usize, usize) {
        let mut src = FileSource::open(path).unwrap();
        src.set_filter(filter).unwrap();
        let (mut work, mut located, mut n, mut held, mut out) = (false, 0, 0, 0, Vec::new());
        loop {
            out.clear();
            let more = src.next_mapped_batch(256, span, 3, &mut out).unwrap();
            located += out.len();
            n += 1;
            if let Backend::Mapped(m) = &src.backend {
                held = held.max(m.pos() - m.released());
            }
            if let Some(w) = src.page_work() {
                work = true;
                w.run();
            }
            if !more {
                return (work, located, n, held);
            }
        }
    }

    /// A window of records begins at the batch's first record: batches in which a filter
    /// matches nothing keep no pages for their decoding, and the walk releases the pages it
    /// skipped itself, as when reading one record at a time.
    #[test]
    fn batches_a_filter_skips_keep_no_window() {
        // 3,000 Ethernet records of zero bytes: no IPv4 header, destination 00:00:00:00:00:00.
        let f = super::super::mapped::tests::pcap(3000, 1000);
        let path = f.path().to_str().unwrap();
        let (work, located, _, _) = batches(path, "host 9.9.9.9", 1 << 20);
        assert_eq!((work, located), (false, 0));
        let (work, located, n, _) = batches(path, "ether dst 00:00:00:00:00:00", 1 << 20);
        // 256 records of 1,016 bytes span 260,096 bytes: batches end by records.
        assert_eq!((work, located, n), (true, 3000, 3000usize.div_ceil(256)));
    }

    /// A filter that matches only the first record: the batches after it end by the bytes
    /// they span, not by records (they have none), so the pages they walk are released within
    /// about the span of the 3 batches kept, not held until a batch has 256 records or the
    /// file ends.
    #[test]
    fn batches_end_by_the_bytes_they_span() {
        let (n, size) = (3000, 1000);
        let f = super::super::mapped::tests::pcap(n, size);
        // The first record's first byte: 24-byte file header, 16-byte record header.
        let mut bytes = std::fs::read(f.path()).unwrap();
        bytes[40] = 1;
        std::fs::write(f.path(), &bytes).unwrap();
        let path = f.path().to_str().unwrap();
        let span = 64 << 10;
        let (work, located, batches, held) = batches(path, "ether[0] = 1", span);
        assert!(work);
        assert_eq!(located, 1);
        // Each batch walks 65 records of 1,016 bytes (66,040 bytes, the last past the span),
        // the first batch the matching record among them; the last ends at the end of the file.
        let per = span.div_ceil(size as usize + 16);
        assert_eq!(batches, n.div_ceil(per), "{per} records a batch");
        // Hand-computed bound: the release is due every 512 KiB, page-aligned, below the
        // oldest of the 3 windows kept (after the first batch, where an empty batch ended).
        let every = super::super::mapped::WINDOW_RELEASE_EVERY;
        assert!(held < every + 4096 + 3 * (span + 1016), "held {held}");
    }
}
