//! Capture files through libpcap (`pcap_open_offline_with_tstamp_precision`): pcap with µs or ns
//! timestamps, pcapng, and `-` for standard input. Timestamps are requested in nanoseconds so
//! both precisions stay exact (libpcap scales µs files by 1000).

use std::fs;
use std::path::Path;

use pcap::{BpfProgram, Capture, Offline, Precision};

use super::tag_miss::{IsRoce, TagMiss};

use super::{Record, ts_to_ns};
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
    /// A bad BPF filter expression (libpcap's message).
    #[error("bad filter expression: {0}")]
    Filter(String),
    /// Reading stopped in the middle of the file (libpcap's message, e.g. a truncated record).
    #[error("{0}")]
    Read(String),
}

/// A capture file opened for reading.
pub struct FileSource {
    cap: Capture<Offline>,
    linktype: LinkType,
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
    /// Open `path` (`-` for standard input).
    ///
    /// # Errors
    /// [`FileError`] when the file is missing, empty, not a capture, or of an unsupported link
    /// type.
    pub fn open(path: &str) -> Result<FileSource, FileError> {
        let cap = if path == "-" {
            // SAFETY: fd 0 is open for the life of the process; libpcap takes a FILE* over it.
            unsafe { Capture::from_raw_fd_with_precision(0, Precision::Nano) }.map_err(|e| {
                let m = pcap_msg(e);
                // libpcap's wording when standard input ends before the first byte.
                if m.contains("file header bytes, only got 0") {
                    FileError::Empty
                } else {
                    FileError::Format(m)
                }
            })?
        } else {
            let p = Path::new(path);
            match fs::metadata(p) {
                Err(e) => return Err(FileError::Open(io_msg(&e))),
                Ok(m) if m.is_file() && m.len() == 0 => return Err(FileError::Empty),
                Ok(m) if m.is_dir() => return Err(FileError::Open("is a directory".into())),
                Ok(_) => {}
            }
            Capture::from_file_with_precision(p, Precision::Nano).map_err(|e| {
                let m = pcap_msg(e);
                if m.contains("Permission denied") {
                    FileError::Open("Permission denied".into())
                } else {
                    FileError::Format(m)
                }
            })?
        };
        let lt = cap.get_datalink();
        let linktype = LinkType(lt.0 as u32);
        if !linktype.is_supported() {
            let name = lt.get_name().unwrap_or_else(|_| "unknown".into());
            return Err(FileError::LinkType(linktype.0, name));
        }
        Ok(FileSource {
            cap,
            linktype,
            filter: None,
            tag_miss: None,
            number: 0,
            base_ts_ns: None,
            buf: Vec::with_capacity(65536),
            done: false,
        })
    }

    /// Apply a libpcap BPF filter expression (tcpdump syntax). The filter runs here, in user
    /// space (`pcap_offline_filter`), rather than inside libpcap's reader, so that frames keep
    /// their numbers in the file as Wireshark shows them.
    ///
    /// # Errors
    /// [`FileError::Filter`] with libpcap's message.
    pub fn set_filter(&mut self, expr: &str) -> Result<(), FileError> {
        let prog = self
            .cap
            .compile(expr, true)
            .map_err(|e| FileError::Filter(pcap_msg(e)))?;
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

    /// The tagged-frame counter, when [`FileSource::count_tag_misses`] enabled it.
    pub fn tag_miss(&self) -> Option<&TagMiss> {
        self.tag_miss.as_ref()
    }

    /// Records read from the file so far, those a filter skipped included: the number of the
    /// last frame read.
    pub fn frames_read(&self) -> u64 {
        self.number
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
        if self.filter.is_none() {
            // Fast path: hand out libpcap's buffer directly, no copy.
            return match self.cap.next_packet() {
                Ok(p) => Ok(Some(Record {
                    number: {
                        self.number += 1;
                        self.number
                    },
                    ts_ns: ts_to_ns(&p.header.ts),
                    base_ts_ns: *self.base_ts_ns.get_or_insert(ts_to_ns(&p.header.ts)),
                    caplen: p.header.caplen,
                    len: p.header.len,
                    data: p.data,
                })),
                Err(e) => {
                    self.done = true;
                    end(e)
                }
            };
        }
        let header = loop {
            match self.cap.next_packet() {
                Ok(p) => {
                    self.number += 1;
                    self.base_ts_ns.get_or_insert(ts_to_ns(&p.header.ts));
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
        Ok(Some(Record {
            number: self.number,
            ts_ns: ts_to_ns(&header.ts),
            base_ts_ns: self.base_ts_ns.unwrap_or_default(),
            caplen: header.caplen,
            len: header.len,
            data: &self.buf,
        }))
    }
}

/// End of the file (`Ok(None)`) or a read error.
fn end(e: pcap::Error) -> Result<Option<Record<'static>>, FileError> {
    match e {
        pcap::Error::NoMorePackets => Ok(None),
        e => Err(FileError::Read(pcap_msg(e))),
    }
}

fn io_msg(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "No such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "Permission denied".into(),
        _ => e.to_string(),
    }
}
