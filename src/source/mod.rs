//! Packet sources: capture files (pcap, pcapng, standard input) and, separately, live
//! interfaces. Every source yields [`Record`]s that borrow the source's buffer until the next call.

pub mod erf;
pub mod file;
pub mod live;
pub mod mapped;
pub mod privdrop;
pub mod sigbus;
pub mod sniffer;
pub mod tag_miss;

pub use file::FileSource;
pub use live::LiveSource;

/// One captured frame as libpcap delivers it.
#[derive(Clone, Copy, Debug)]
pub struct Record<'a> {
    /// Frame number in the source, from 1 as in Wireshark, counting frames a filter skipped.
    pub number: u64,
    /// Capture time in nanoseconds since the Unix epoch (exact for µs and ns files).
    pub ts_ns: u64,
    /// Capture time of the source's first frame, filtered out or not: the zero of relative
    /// times, as in Wireshark.
    pub base_ts_ns: u64,
    /// Bytes captured (`caplen` in libpcap's `pcap_pkthdr`; of link type ERF, the frame's bytes
    /// after the ERF header, [`erf::Framed::caplen`]).
    pub caplen: u32,
    /// Bytes on the wire (`len` in `pcap_pkthdr`; of link type ERF, the header's `wlen`).
    pub len: u32,
    /// The captured bytes (`caplen` of them; of link type ERF, the ERF header and then the
    /// frame's bytes).
    pub data: &'a [u8],
}

/// Per-frame facts from the source, shared by the printers and the display filter.
#[derive(Clone, Copy, Debug)]
pub struct FrameCtx {
    /// Frame number, starting at 1 as in Wireshark.
    pub number: u64,
    /// Capture time, ns since the Unix epoch.
    pub ts_ns: u64,
    /// Time since the first frame, ns (0 for the first; negative for a frame stamped before
    /// it, as tshark's `frame.time_relative`).
    pub rel_ns: i64,
    /// Bytes captured.
    pub caplen: u32,
    /// Bytes on the wire.
    pub len: u32,
}

impl FrameCtx {
    /// A frame of `bytes` bytes captured whole (`caplen == len`), number `number` (from 1),
    /// stamped `ts_ns` ns since the Unix epoch, the first of its capture (`rel_ns` 0).
    ///
    /// # Panics
    /// When `bytes` exceeds `u32::MAX` (no pcap record does).
    pub fn whole(number: u64, ts_ns: u64, bytes: usize) -> FrameCtx {
        let len = u32::try_from(bytes).expect("a frame of at most 4 GiB");
        FrameCtx {
            number,
            ts_ns,
            rel_ns: 0,
            caplen: len,
            len,
        }
    }
}

/// Convert a libpcap timestamp read with nanosecond precision (`tv_usec` holds ns) to ns since
/// the epoch. Times before 1970 clamp to 0.
pub fn ts_to_ns(ts: &libc::timeval) -> u64 {
    let ns = (ts.tv_sec as i128) * 1_000_000_000 + ts.tv_usec as i128;
    ns.clamp(0, u64::MAX as i128) as u64
}
