//! Zero-copy reading of capture files: the file is mapped into memory (`memmap2`) and its
//! records are walked in place with `pcap-parser`, so a frame's bytes are never copied.
//!
//! The walker handles the common, well-formed cases: classic pcap (either byte order, µs or ns
//! timestamps) and pcapng with one section whose interfaces share one link type and use µs or
//! ns resolution without offset. Anything else — a damaged or truncated record, a capture
//! length over the snap length, another timestamp resolution, a second section — is an
//! [`Step::Anomaly`]: the caller then hands the file to libpcap from that record on, so errors
//! and corner cases behave exactly as libpcap's (see [`super::file`]).
//!
//! Pages already walked are released from the process (`MADV_DONTNEED` every 256 KiB; they stay
//! in the page cache), so resident memory does not grow with the file size. When the parallel
//! reader locates records in windows, the walk leaves that work, and populating the pages just
//! ahead of the walk, to be done outside it ([`PageWork`]): the walk is one job at a time.

use std::fs::File;
use std::sync::Arc;

use memmap2::{Mmap, UncheckedAdvice};
use pcap_parser::pcap::{LegacyPcapBlock, PcapHeader, parse_pcap_frame, parse_pcap_frame_be};
use pcap_parser::pcapng::{Block, parse_block_be, parse_block_le, parse_sectionheaderblock};

use super::sigbus::Watched;
use crate::decode::LinkType;

/// libpcap's largest accepted capture length for the link types roce-inspect reads
/// (`MAXIMUM_SNAPLEN`, 262144 bytes); longer records are left to libpcap to report.
const MAX_CAPLEN: u32 = 262_144;

/// Bytes walked between two releases of the walked pages: smaller keeps the resident set
/// smaller, at the cost of one `madvise` (and, with 2 threads, a TLB shootdown) per release
/// (measurements: docs/perf.md).
const RELEASE_EVERY: usize = 1 << 18;

/// [`RELEASE_EVERY`] once records are located in windows (the parallel reader): each release
/// then interrupts the other threads to flush their TLBs, so releases are rarer, while QPN
/// spraying's peak RSS stays under its 32 MiB target (docs/perf.md).
pub(super) const WINDOW_RELEASE_EVERY: usize = 1 << 19;

/// How far ahead of the walk (bytes) the parallel reader has the file's pages mapped
/// (`MADV_POPULATE_READ`, Linux 5.14) outside the walk, which otherwise takes a page fault for
/// each stretch of pages it reaches first. Populated pages count as resident: kept short. Read
/// one record at a time, the walk populates them itself (docs/perf.md).
const POPULATE_AHEAD: usize = 1 << 19;

/// Bytes populated at a time.
const POPULATE_CHUNK: usize = 1 << 18;

/// Bytes per page of the mapping (the unit of `madvise`).
const PAGE: usize = 4096;

/// How far behind the walk pages are released (bytes) while records are read one at a time:
/// the record being decoded is the last one walked.
const SEQUENTIAL_LAG: usize = 1 << 18;

/// How far ahead of the walk (bytes) the file is prefetched, every cache line of it: the walk
/// reads one header per record, each in a line not yet in the caches (the parallel reader walks
/// alone, ahead of the threads that read the records' bytes), and where the next headers lie is
/// known only once the records before them are read. One line per record left most headers
/// to miss; 4 KiB ahead was slower than 2 KiB (the lines are evicted before they are read;
/// docs/perf.md).
const PREFETCH_AHEAD: usize = 2048;

/// Bytes per cache line, the prefetch step.
const CACHE_LINE: usize = 64;

/// Ask the CPU to bring the cache line at `at` in `map` into its caches (a hint: no effect past
/// the end, on a page not mapped yet, or off x86-64).
#[inline(always)]
fn prefetch(map: &[u8], at: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(b) = map.get(at) {
        // SAFETY: a prefetch never faults and reads nothing into the program; the address is
        // inside the mapping.
        unsafe {
            core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
                std::ptr::from_ref(b).cast(),
            );
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (map, at);
}

/// One record found in place: its header fields and where its bytes are in the mapping
/// ([`MappedFile::bytes`]).
#[derive(Clone, Copy, Debug)]
pub struct RawRecord {
    /// Capture time, ns since the Unix epoch.
    pub ts_ns: u64,
    /// Bytes captured.
    pub caplen: u32,
    /// Bytes on the wire.
    pub len: u32,
    /// Offset of the captured bytes in the file.
    pub start: usize,
}

/// The result of one step of the walk.
#[derive(Clone, Copy, Debug)]
pub enum Step {
    /// The next record.
    Record(RawRecord),
    /// The end of the file, after a whole record.
    End,
    /// Something the walker leaves to libpcap, at the record after those already returned.
    Anomaly,
}

/// The container format being walked.
#[derive(Clone, Copy, Debug)]
enum Format {
    /// Classic pcap: big-endian records, nanosecond timestamps, file snap length (bytes).
    Pcap { be: bool, nano: bool, snaplen: u32 },
    /// pcapng (one section): big-endian blocks.
    Pcapng { be: bool },
}

/// An interface of a pcapng section: ns per timestamp unit (1 or 1000), snap length (0: none).
#[derive(Clone, Copy, Debug)]
struct Iface {
    ns_per_unit: u64,
    snaplen: u32,
}

/// A capture file mapped into memory and walked record by record.
pub struct MappedFile {
    map: Arc<Watched>,
    format: Format,
    linktype: LinkType,
    ifaces: Vec<Iface>,
    /// Offset of the next record or block.
    pos: usize,
    /// Offset up to which walked pages were released.
    released: usize,
    /// Offsets where the last windows of records began (their first records), oldest first,
    /// once records are located in windows ([`MappedFile::begin_window`]): pages are released
    /// only below the first.
    windows: Vec<usize>,
    /// Offset up to which the file was prefetched ([`PREFETCH_AHEAD`]).
    prefetched: usize,
    /// Pages to release that the walk left to be done outside it ([`MappedFile::page_work`]):
    /// from, to (offsets).
    unreleased: Option<(usize, usize)>,
    /// Offset up to which pages were populated ahead of the walk (`POPULATE_AHEAD`, 512 KiB).
    populated: usize,
}

/// Work on a mapping's pages that the walk leaves to be done outside it (the parallel reader's
/// job runs it once it has let the walk go): release pages walked, populate pages ahead of the
/// walk. It holds the mapping, which stays mapped until the work is done.
pub struct PageWork {
    map: Arc<Watched>,
    /// Pages to release: from, to (offsets).
    release: Option<(usize, usize)>,
    /// Pages to populate: from, to (offsets).
    populate: Option<(usize, usize)>,
}

impl PageWork {
    /// Release and populate the pages. Errors are ignored: both are hints (a kernel before
    /// 5.14 does not know `MADV_POPULATE_READ`; the pages are then faulted in when read).
    pub fn run(self) {
        if let Some((from, to)) = self.release {
            dont_need(&self.map, from, to);
        }
        if let Some((from, to)) = self.populate {
            populate(&self.map, from, to);
        }
    }
}

/// Map the pages of `from..to` (`MADV_POPULATE_READ`, Linux 5.14); a hint, whose error (an
/// older kernel) is ignored: the pages are then faulted in when read.
fn populate(map: &Watched, from: usize, to: usize) {
    #[cfg(target_os = "linux")]
    let _ = map.advise_range(memmap2::Advice::PopulateRead, from, to - from);
    #[cfg(not(target_os = "linux"))]
    let _ = (map, from, to);
}

/// Drop the pages of `map` from `from` to `to` (offsets) from the process.
fn dont_need(map: &Watched, from: usize, to: usize) {
    // SAFETY: the range lies inside the mapping, which is file-backed, shared and never
    // written: dropping its pages only means that a later access (a record still being decoded
    // elsewhere, say) reads them again from the page cache.
    let _ = unsafe { map.unchecked_advise_range(UncheckedAdvice::DontNeed, from, to - from) };
}

impl MappedFile {
    /// Map `file` and read its header. `None` when the walker does not handle this file (not
    /// pcap/pcapng, an unusual header, or the map failed): the caller uses libpcap instead,
    /// which also words the errors.
    pub fn open(file: &File) -> Option<MappedFile> {
        // SAFETY: the mapping is read-only; a capture file changed by another process while it
        // is read gives wrong frames (as libpcap would), not undefined behaviour in practice,
        // and one cut short ends the run with one line (`Watched`, the SIGBUS it raises).
        let map = Arc::new(Watched::new(unsafe { Mmap::map(file) }.ok()?));
        let _ = map.advise(memmap2::Advice::Sequential);
        // The page cache may hold the file in 2 MiB folios (Linux 6.x reads ahead in large
        // folios on ext4 and xfs), and a fault on an aligned one maps all of it as one huge
        // page (`FilePmdMapped` 2048 kB in `smaps` while QPN spraying was read): up to 2 MiB
        // more resident than the window kept between releases. Asked not to, the kernel maps
        // them in 4 KiB entries.
        #[cfg(target_os = "linux")]
        let _ = map.advise(memmap2::Advice::NoHugePage);
        let mut m = MappedFile {
            map,
            format: Format::Pcapng { be: false },
            linktype: LinkType(0),
            ifaces: Vec::new(),
            pos: 0,
            released: 0,
            windows: Vec::new(),
            prefetched: 0,
            unreleased: None,
            populated: 0,
        };
        m.read_header()?;
        Some(m)
    }

    /// Whether the file is pcapng (else classic pcap).
    pub fn is_pcapng(&self) -> bool {
        matches!(self.format, Format::Pcapng { .. })
    }

    /// The link type of the file (of the first interface for pcapng).
    pub fn linktype(&self) -> LinkType {
        self.linktype
    }

    fn read_header(&mut self) -> Option<()> {
        let buf: &[u8] = &self.map;
        if buf.len() >= 4 && buf[..4] == [0x0a, 0x0d, 0x0d, 0x0a] {
            return self.read_pcapng_header();
        }
        let (_, h): (_, PcapHeader) = pcap_parser::pcap::parse_pcap_header(buf).ok()?;
        if h.is_modified_format()
            || (h.version_major, h.version_minor) != (2, 4)
            || h.snaplen == 0
            || h.snaplen > MAX_CAPLEN
        {
            return None;
        }
        self.format = Format::Pcap {
            be: h.is_bigendian(),
            nano: h.is_nanosecond_precision(),
            snaplen: h.snaplen,
        };
        self.linktype = LinkType(h.network.0 as u32);
        self.pos = 24;
        Some(())
    }

    /// The section header and the interface descriptions before the first packet.
    fn read_pcapng_header(&mut self) -> Option<()> {
        let (rest, shb) = parse_sectionheaderblock(&self.map).ok()?;
        // libpcap reads versions 1.0 and 1.2 only (and words the error for the others).
        if shb.major_version != 1 || !matches!(shb.minor_version, 0 | 2) {
            return None;
        }
        let be = shb.big_endian();
        self.format = Format::Pcapng { be };
        self.pos = self.map.len() - rest.len();
        // The first interface fixes the link type; read blocks until one is seen.
        while self.ifaces.is_empty() {
            match self.pcapng_block()? {
                BlockStep::Packet(_) => return None,
                BlockStep::Skip => {}
            }
        }
        Some(())
    }

    /// The whole mapping, shared: [`RawRecord::start`] and `caplen` locate a record in it.
    pub fn shared(&self) -> Arc<Watched> {
        Arc::clone(&self.map)
    }

    /// The captured bytes of `r`.
    pub fn bytes(&self, r: &RawRecord) -> &[u8] {
        &self.map[r.start..r.start + r.caplen as usize]
    }

    /// The next record, or the end, or an anomaly.
    pub fn step(&mut self) -> Step {
        self.release_walked();
        self.populate_sequential();
        self.prefetch_ahead();
        match self.format {
            Format::Pcap { be, nano, snaplen } => self.next_pcap(be, nano, snaplen),
            Format::Pcapng { .. } => loop {
                match self.pcapng_block() {
                    None if self.at_end() => return Step::End,
                    None => return Step::Anomaly,
                    Some(BlockStep::Skip) => continue,
                    Some(BlockStep::Packet(r)) => return Step::Record(r),
                }
            },
        }
    }

    fn next_pcap(&mut self, be: bool, nano: bool, snaplen: u32) -> Step {
        let rest = &self.map[self.pos..];
        if rest.is_empty() {
            return Step::End;
        }
        let parsed = if be {
            parse_pcap_frame_be(rest)
        } else {
            parse_pcap_frame(rest)
        };
        let Ok((after, b)) = parsed else {
            return Step::Anomaly;
        };
        let b: LegacyPcapBlock<'_> = b;
        // libpcap reads both timestamp words as signed 32-bit values and checks the capture
        // length against the snap length: leave those cases to it.
        if b.ts_sec > i32::MAX as u32
            || b.ts_usec > i32::MAX as u32
            || b.caplen > snaplen.min(MAX_CAPLEN)
            || b.caplen > b.origlen
        {
            return Step::Anomaly;
        }
        let frac = u64::from(b.ts_usec) * if nano { 1 } else { 1_000 };
        let rec = RawRecord {
            ts_ns: u64::from(b.ts_sec) * 1_000_000_000 + frac,
            caplen: b.caplen,
            len: b.origlen,
            start: b.data.as_ptr() as usize - self.map.as_ptr() as usize,
        };
        self.pos = self.map.len() - after.len();
        Step::Record(rec)
    }

    /// Parse one pcapng block: a packet (as offsets into the map), something skipped, or `None`
    /// for an anomaly (and at the end of the file, which callers tell apart by position).
    fn pcapng_block(&mut self) -> Option<BlockStep> {
        let Format::Pcapng { be } = self.format else {
            return None;
        };
        let base = self.map.as_ptr() as usize;
        let rest = &self.map[self.pos..];
        if rest.len() < 12 {
            return None;
        }
        // Block total length (bytes 4..8): libpcap refuses blocks larger than a packet of the
        // largest snap length needs; leave those to it.
        let word = [rest[4], rest[5], rest[6], rest[7]];
        let total = if be {
            u32::from_be_bytes(word)
        } else {
            u32::from_le_bytes(word)
        };
        if !(12..=MAX_CAPLEN).contains(&total) || total % 4 != 0 || rest.len() < total as usize {
            return None;
        }
        // The trailer repeats the total length; libpcap checks it.
        let t = total as usize;
        let tail = [rest[t - 4], rest[t - 3], rest[t - 2], rest[t - 1]];
        let trailer = if be {
            u32::from_be_bytes(tail)
        } else {
            u32::from_le_bytes(tail)
        };
        if trailer != total {
            return None;
        }
        let (after, block) = if be {
            parse_block_be(rest)
        } else {
            parse_block_le(rest)
        }
        .ok()?;
        let step = match block {
            Block::EnhancedPacket(e) => {
                let iface = *self.ifaces.get(e.if_id as usize)?;
                if e.caplen as usize > e.data.len()
                    || e.caplen > e.origlen
                    || e.caplen > MAX_CAPLEN
                    || (iface.snaplen != 0 && e.caplen > iface.snaplen)
                {
                    return None;
                }
                let units = (u64::from(e.ts_high) << 32) | u64::from(e.ts_low);
                let ts_ns = units.checked_mul(iface.ns_per_unit)?;
                BlockStep::Packet(RawRecord {
                    start: e.data.as_ptr() as usize - base,
                    caplen: e.caplen,
                    len: e.origlen,
                    ts_ns,
                })
            }
            Block::InterfaceDescription(idb) => {
                let lt = LinkType(idb.linktype.0 as u32);
                let ns_per_unit = match (idb.if_tsresol, idb.if_tsoffset) {
                    (6, 0) => 1_000,
                    (9, 0) => 1,
                    _ => return None,
                };
                if !self.ifaces.is_empty() && lt != self.linktype {
                    return None;
                }
                self.linktype = lt;
                self.ifaces.push(Iface {
                    ns_per_unit,
                    snaplen: idb.snaplen,
                });
                BlockStep::Skip
            }
            // A second section, a packet block without a timestamp, or the obsolete Packet
            // Block (type 2, which libpcap still reads as a packet): libpcap's job.
            Block::SectionHeader(_) | Block::SimplePacket(_) => return None,
            Block::Unknown(u) if u.block_type == 2 => return None,
            _ => BlockStep::Skip,
        };
        self.pos = self.map.len() - after.len();
        Some(step)
    }

    /// The walk is over: release every page walked or populated ahead of it. At the end of
    /// the records, the analysis report, built next, then has the memory the last stretch
    /// held; when libpcap reads the rest, the mapping may outlive the walk (the parallel
    /// reader's records point into it), and records still being decoded are read again from
    /// the page cache. (Pages that a [`PageWork`] taken before populates afterwards stay: at
    /// most `POPULATE_AHEAD` (512 KiB).)
    pub fn release_all_walked(&mut self) {
        self.windows.clear();
        let end = self.pos.max(self.populated).next_multiple_of(PAGE);
        self.release_up_to(end.min(self.map.len()));
    }

    /// Prefetch the cache lines not prefetched yet up to [`PREFETCH_AHEAD`] bytes past the
    /// walk.
    fn prefetch_ahead(&mut self) {
        let to = (self.pos + PREFETCH_AHEAD).min(self.map.len());
        let mut at = self.prefetched.max(self.pos);
        while at < to {
            prefetch(&self.map, at);
            at += CACHE_LINE;
        }
        self.prefetched = at;
    }

    /// Release the pages walked so far, every [`RELEASE_EVERY`] bytes ([`WINDOW_RELEASE_EVERY`]
    /// once records are located in windows).
    fn release_walked(&mut self) {
        // Keep the last stretch mapped: records located ahead are still being decoded by the
        // parallel reader's threads (a record released before it is decoded is read again from
        // the page cache).
        let behind = match self.windows.first() {
            Some(&start) => start,
            None => self.pos.saturating_sub(SEQUENTIAL_LAG),
        };
        let every = if self.windows.is_empty() {
            RELEASE_EVERY
        } else {
            WINDOW_RELEASE_EVERY
        };
        if behind < self.released + every {
            return;
        }
        self.release_up_to(behind);
    }

    /// Release the walked pages below offset `behind` (rounded down to a page): now, or, once
    /// records are located in windows, by the thread that runs [`MappedFile::page_work`].
    fn release_up_to(&mut self, behind: usize) {
        let end = behind / PAGE * PAGE;
        if end > self.released {
            let from = self
                .unreleased
                .take()
                .map_or(self.released, |(from, _)| from);
            if self.windows.is_empty() {
                dont_need(&self.map, from, end);
            } else {
                self.unreleased = Some((from, end));
            }
            self.released = end;
        }
    }

    /// The page work the walk left to be done outside it since the last call, once records are
    /// located in windows: the pages to release, and those to populate ahead of the walk
    /// (`POPULATE_AHEAD`, 512 KiB).
    pub fn page_work(&mut self) -> Option<PageWork> {
        if self.windows.is_empty() {
            return None;
        }
        let populate = self.next_populate();
        let release = self.unreleased.take();
        (release.is_some() || populate.is_some()).then(|| PageWork {
            map: Arc::clone(&self.map),
            release,
            populate,
        })
    }

    /// The pages to populate next, `POPULATE_AHEAD` (512 KiB) ahead of the walk, in steps of
    /// `POPULATE_CHUNK` (256 KiB); taken as populated.
    fn next_populate(&mut self) -> Option<(usize, usize)> {
        let want = (self.pos + POPULATE_AHEAD).min(self.map.len());
        let start = self.populated.max(self.pos);
        let from = start / PAGE * PAGE;
        (want >= from + POPULATE_CHUNK || (want == self.map.len() && want > start)).then(|| {
            self.populated = want;
            (from, want)
        })
    }

    /// While records are read one at a time, the walk maps the pages ahead of it itself, one
    /// `MADV_POPULATE_READ` per `POPULATE_CHUNK` (256 KiB) instead of a page fault every few
    /// pages.
    fn populate_sequential(&mut self) {
        if !self.windows.is_empty() {
            return;
        }
        if let Some((from, to)) = self.next_populate() {
            populate(&self.map, from, to);
        }
    }

    /// A window of records, the first at offset `first`, is now located ahead of its decoding
    /// (the parallel reader), while the `kept - 1` windows located before it may still be
    /// decoded or analysed: from now on pages are released only below the first record of the
    /// oldest of those `kept` windows.
    pub fn begin_window(&mut self, first: usize, kept: usize) {
        while self.windows.len() >= kept.max(1) {
            self.windows.remove(0);
        }
        self.windows.push(first);
    }

    /// A window of no records ended where the walk is: like [`MappedFile::begin_window`] at
    /// this offset, once records are located in windows (before that, the walk releases what
    /// it walked itself).
    pub fn end_empty_window(&mut self, kept: usize) {
        if !self.windows.is_empty() {
            self.begin_window(self.pos, kept);
        }
    }

    /// Offset of the next record or block to walk.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// Offset up to which walked pages were released, or left to be (tests).
    #[cfg(test)]
    pub(super) fn released(&self) -> usize {
        self.released
    }

    /// Whether the walk stopped at the end of the file.
    pub fn at_end(&self) -> bool {
        self.pos >= self.map.len()
    }
}

/// What one pcapng block was.
enum BlockStep {
    Packet(RawRecord),
    Skip,
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use std::io::Write;

    /// A classic little-endian µs pcap of `n` Ethernet records of `size` zero bytes each.
    pub(in crate::source) fn pcap(n: usize, size: u32) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        // The file header (magic, version 2.4, zone, sigfigs, snap length, Ethernet).
        let mut b = 0xa1b2_c3d4u32.to_le_bytes().to_vec();
        b.extend(2u16.to_le_bytes());
        b.extend(4u16.to_le_bytes());
        b.extend([0u8; 8]);
        b.extend(65_535u32.to_le_bytes());
        b.extend(1u32.to_le_bytes());
        for i in 0..n as u32 {
            b.extend(i.to_le_bytes());
            b.extend(0u32.to_le_bytes());
            b.extend(size.to_le_bytes());
            b.extend(size.to_le_bytes());
            b.extend(std::iter::repeat_n(0u8, size as usize));
        }
        f.write_all(&b).unwrap();
        f
    }

    /// Walk `k` records.
    /// A pcap of `n` records of `size` bytes ([`pcap`]), mapped (the file lives as long as the
    /// returned handle).
    fn mapped(n: usize, size: u32) -> (tempfile::NamedTempFile, MappedFile) {
        let f = pcap(n, size);
        let m = MappedFile::open(f.as_file()).unwrap();
        (f, m)
    }

    fn walk(m: &mut MappedFile, k: usize) {
        for _ in 0..k {
            assert!(matches!(m.step(), Step::Record(_)));
        }
    }

    /// Walked one record at a time, pages are released by the walk itself: nothing is left to
    /// another thread.
    #[test]
    fn a_sequential_walk_leaves_no_page_work() {
        let (_f, mut m) = mapped(2000, 1000);
        walk(&mut m, 1500);
        assert!(m.released > 0, "released up to {}", m.released);
        assert!(m.page_work().is_none());
    }

    /// Walked one record at a time, the walk populates the pages ahead of it itself, at least
    /// `POPULATE_AHEAD - POPULATE_CHUNK` bytes ahead and to the end of the file: the page just
    /// below the populated end, 256 KiB or more past the walk (beyond the 64 KiB a page fault
    /// maps around itself), is in the process's page table (`/proc/self/pagemap`, bit 63).
    #[test]
    fn a_sequential_walk_populates_ahead_of_itself() {
        use std::io::{Read, Seek, SeekFrom};
        let (n, size) = (3000, 1000);
        let (_f, mut m) = mapped(n, size);
        let len = m.map.len();
        let mut pagemap = File::open("/proc/self/pagemap").ok();
        let mut present = |addr: usize| -> Option<bool> {
            let pm = pagemap.as_mut()?;
            pm.seek(SeekFrom::Start((addr / PAGE * 8) as u64)).ok()?;
            let mut e = [0u8; 8];
            pm.read_exact(&mut e).ok()?;
            Some(u64::from_le_bytes(e) >> 63 == 1)
        };
        let mut checked = 0;
        for _ in 0..n / 100 {
            walk(&mut m, 100);
            assert!(m.populated >= (m.pos + POPULATE_AHEAD - POPULATE_CHUNK).min(len));
            assert!(m.populated <= (m.pos + POPULATE_AHEAD).min(len));
            if m.populated < len {
                let addr = m.map.as_ptr() as usize + m.populated - 1;
                if let Some(p) = present(addr) {
                    assert!(
                        p,
                        "the page below {} (walk at {}) is not mapped",
                        m.populated, m.pos
                    );
                    checked += 1;
                }
            }
        }
        assert_eq!(m.populated, len);
        if pagemap.is_none() || checked == 0 {
            eprintln!("skipped: /proc/self/pagemap not readable, mapping not checked");
        }
    }

    /// Located in windows, the pages below the oldest window kept are released by the page
    /// work (page-aligned, each once), and the pages ahead of the walk are populated once each,
    /// up to the end of the file.
    #[test]
    fn windows_leave_releases_and_populating_to_the_page_work() {
        let (n, size) = (4000, 1000);
        let (_f, mut m) = mapped(n, size);
        let len = m.map.len();
        let (mut released, mut populated) = (0, 0);
        for _ in 0..n / 100 {
            // The window's first record: its bytes follow its 16-byte header.
            m.begin_window(m.pos + 16, 3);
            walk(&mut m, 100);
            if let Some(w) = m.page_work() {
                if let Some((from, to)) = w.release {
                    assert_eq!((from, from % PAGE, to % PAGE), (released, 0, 0));
                    assert!(to <= m.windows[0], "released {to} past the oldest window");
                    released = to;
                }
                if let Some((from, to)) = w.populate {
                    // From where the last populating stopped (or the walk, when past it).
                    assert_eq!(from, populated.max(m.pos) / PAGE * PAGE, "{from}..{to}");
                    assert!(to > m.pos && to <= len, "{from}..{to}");
                    populated = to;
                }
                w.run();
            }
            assert!(populated >= (m.pos + POPULATE_AHEAD - POPULATE_CHUNK).min(len));
        }
        assert_eq!(populated, len);
        // Three windows of 100 records are kept: the pages below them were released.
        assert!(released >= len - 3 * 100 * (size as usize + 16) - WINDOW_RELEASE_EVERY - PAGE);
        // At the end every walked page goes at once, by the walking thread.
        m.release_all_walked();
        assert_eq!(m.released, len / PAGE * PAGE);
        assert!(m.unreleased.is_none());
    }

    /// When the walk stops (libpcap reads the rest), every page walked or populated ahead is
    /// released at once, the release still left to the page work included.
    #[test]
    fn release_all_drops_every_page_walked_or_populated() {
        let (_f, mut m) = mapped(3000, 1000);
        let len = m.map.len();
        let mut populated = 0;
        for _ in 0..10 {
            m.begin_window(m.pos + 16, 2);
            walk(&mut m, 100);
            if let Some(w) = m.page_work() {
                populated = w.populate.map_or(populated, |(_, to)| to);
                w.run();
            }
        }
        // Walked on past a release due, with no page work run since.
        for k in [700, 700, 10] {
            m.begin_window(m.pos + 16, 2);
            walk(&mut m, k);
        }
        let (from, _) = m.unreleased.expect("a release left to the page work");
        assert!(populated > from && populated < len, "{from} {populated}");
        m.release_all_walked();
        assert_eq!(m.released, m.pos.max(populated).div_ceil(PAGE) * PAGE);
        assert!(m.unreleased.is_none() && m.windows.is_empty());
        assert!(m.page_work().is_none());
    }
}
