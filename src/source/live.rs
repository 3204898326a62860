//! Live capture from a network interface through libpcap (`pcap_create` + `pcap_activate`).
//!
//! The handle is set up the way a RoCE capture wants it (libpcap man pages `pcap_set_*(3PCAP)`):
//! a snap length that keeps whole RoCE frames (default 262144 bytes, libpcap's maximum), a large
//! kernel buffer (default 64 MiB) so bursts are not dropped, immediate mode (when asked for) so
//! each packet is delivered as soon as it arrives, nanosecond timestamps when the platform offers them
//! (`pcap_set_tstamp_precision`, falling back to microseconds), and a short read timeout so a
//! stop request is noticed even when no packet arrives. The handle is read in non-blocking mode
//! and waited on with `poll(2)` on its selectable fd, because libpcap 1.10 on Linux does not
//! return from a blocking read when its timeout expires with no packet.
//!
//! The default capture filter keeps RoCE only ([`default_filter`]). Frames can be copied,
//! unmodified, to a pcap savefile (`pcap_dump_open`) as they are read.
//!
//! Note on NIC-offloaded RoCE: see [`OFFLOAD_NOTE`].

use std::ffi::{CStr, c_char, c_int, c_void};
use std::fmt::Write as _;
use std::ptr::NonNull;

use pcap::{Active, BpfProgram, BreakLoop, Capture, Device, Savefile};

use super::tag_miss::{self, IsRoce, TagMiss};
use super::{Record, ts_to_ns};
use crate::decode::{LinkType, ROCEV1_ETHERTYPE, ROCEV2_PORT};

/// libpcap's largest snapshot length (`MAXIMUM_SNAPLEN`, 262144 bytes); also the default.
pub const MAX_SNAPLEN: u32 = 262_144;

/// Default kernel capture buffer: 64 MiB (`pcap_set_buffer_size`, bytes).
pub const DEFAULT_BUFFER_SIZE: u32 = 64 << 20;

/// Default read timeout in milliseconds (`pcap_set_timeout`): how long a read waits when no
/// packet arrives before returning, so stop requests and `--duration` are noticed.
pub const DEFAULT_TIMEOUT_MS: i32 = 100;

/// How to capture RoCE that a NIC offloads (kernel bypass), shown by `roce-inspect list` and
/// in the README. Sources: spec/verbs.md §5 (libpcap `pcap-rdmasniff.c`, NVIDIA MLNX_OFED
/// "Offloaded Traffic Sniffer", ibdump, Linux `rxe_net.c`).
pub const OFFLOAD_NOTE: &str = "\
Capturing RoCE that the NIC offloads:
  * NVIDIA/Mellanox ConnectX: RoCE bypasses the kernel, so a capture on the netdev (eth0, ens1f0)
    sees nothing of it. Capture on the RDMA device instead: roce-inspect capture mlx5_0[:PORT]
    uses libpcap's RDMA sniffer when libpcap offers the device (built with --enable-rdma;
    Debian's and Ubuntu's libpcap are not), and otherwise its own verbs sniffer (a raw packet
    QP with a sniffer flow rule, as libpcap does; needs CAP_NET_RAW). Either way the NIC copies
    every packet of the port to host memory, which slows the offloaded traffic. Other ways:
    NVIDIA's tcpdump-rdma container, or ibdump (ibdump -d mlx5_0 -w out.pcap, then
    roce-inspect read out.pcap).
  * Other RDMA NICs (e.g. Intel E810 irdma): mirror the switch port (ERSPAN, GRE or VXLAN; the
    tunnels are decoded) and capture on the mirror.
  * Soft-RoCE (rxe) builds real UDP packets in the kernel: capture on its netdev
    (roce-inspect capture eth0). Traffic between two GIDs of the same rxe device never reaches
    the netdev.";

/// Options for opening a live capture.
#[derive(Clone, Debug)]
pub struct LiveOptions {
    /// Snapshot length in bytes (1..=[`MAX_SNAPLEN`]); longer frames are cut (`pcap_set_snaplen`).
    pub snaplen: u32,
    /// Put the interface into promiscuous mode (`pcap_set_promisc`).
    pub promisc: bool,
    /// Kernel capture buffer in bytes (`pcap_set_buffer_size`).
    pub buffer_size: u32,
    /// Read timeout in milliseconds (`pcap_set_timeout`), > 0: how long a read waits when no
    /// packet arrives, and, without immediate mode, the longest a packet waits in the kernel.
    pub timeout_ms: i32,
    /// Deliver every packet as soon as it arrives (`pcap_set_immediate_mode`). Without it,
    /// libpcap on Linux uses TPACKET_V3: packets are handed over in blocks (at the latest after
    /// `timeout_ms`), with far fewer wake-ups, and the ring stores packets at their real size
    /// instead of in snaplen-sized slots, so it holds many more of them.
    pub immediate: bool,
}

impl Default for LiveOptions {
    fn default() -> Self {
        LiveOptions {
            snaplen: MAX_SNAPLEN,
            promisc: false,
            buffer_size: DEFAULT_BUFFER_SIZE,
            timeout_ms: DEFAULT_TIMEOUT_MS,
            immediate: true,
        }
    }
}

/// Errors of a live capture; `Display` is the one line shown to the user.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// libpcap knows no interface of that name (`PCAP_ERROR_NO_SUCH_DEVICE`).
    #[error("{iface}: no such interface; available: {available}")]
    NoSuchDevice {
        /// The name asked for.
        iface: String,
        /// Names from `pcap_findalldevs`, comma-separated.
        available: String,
    },
    /// Opening the capture was refused (`PCAP_ERROR_PERM_DENIED`, `PCAP_ERROR_PROMISC_PERM_DENIED`).
    #[error(
        "{iface}: permission denied ({msg}): capture needs root or CAP_NET_RAW + CAP_NET_ADMIN, e.g. sudo setcap cap_net_raw,cap_net_admin=eip $(which roce-inspect)"
    )]
    PermissionDenied {
        /// The interface.
        iface: String,
        /// libpcap's message.
        msg: String,
    },
    /// The interface is administratively down (`PCAP_ERROR_IFACE_NOT_UP`).
    #[error("{0}: interface is down (bring it up with: ip link set {0} up)")]
    InterfaceDown(String),
    /// A bad BPF filter expression of the user's: the expression and libpcap's `pcap_compile`
    /// message (a usage error: `roce-inspect` exits with status 2).
    #[error("bad filter expression '{0}': {1}")]
    Filter(String, String),
    /// None of the default RoCE-only filters compiled for the interface's link type (libpcap's
    /// message for the last one tried, with its expression).
    #[error("cannot set the default RoCE filter: {0}")]
    DefaultFilter(String),
    /// A compiled filter could not be installed (`pcap_setfilter`: the kernel refused it).
    #[error("cannot install the capture filter: {0}")]
    SetFilter(String),
    /// The savefile could not be created (`pcap_dump_open`'s message).
    #[error("cannot write savefile {path}: {msg}")]
    Savefile {
        /// The path given to `-w`.
        path: String,
        /// libpcap's or the OS's message.
        msg: String,
    },
    /// The savefile could not be flushed (disk full, I/O error).
    #[error("writing savefile: {0}")]
    SavefileWrite(String),
    /// The interface's link type is not one the decoder handles.
    #[error("{iface}: link type {linktype} ({name}) is not supported for RoCE decoding")]
    LinkType {
        /// The interface.
        iface: String,
        /// LINKTYPE_* value.
        linktype: u32,
        /// libpcap's name for it.
        name: String,
    },
    /// Any other libpcap error (its message), e.g. the interface went away while capturing.
    #[error("{0}")]
    Pcap(String),
}

// libpcap status codes (pcap/pcap.h).
const PCAP_ERROR: c_int = -1;
const PCAP_ERROR_NO_SUCH_DEVICE: c_int = -5;
const PCAP_ERROR_PERM_DENIED: c_int = -8;
const PCAP_ERROR_IFACE_NOT_UP: c_int = -9;
const PCAP_ERROR_PROMISC_PERM_DENIED: c_int = -11;
const PCAP_TSTAMP_PRECISION_NANO: c_int = 1;

// The `pcap` crate's `open()` treats activation warnings (`PCAP_WARNING_*`, > 0) as errors and
// drops the status code needed to tell "no such device" from "permission denied", so the few
// calls that need the code are made directly. libpcap is linked by the `pcap` crate.
unsafe extern "C" {
    fn pcap_activate(p: *mut c_void) -> c_int;
    fn pcap_geterr(p: *mut c_void) -> *mut c_char;
    fn pcap_statustostr(status: c_int) -> *const c_char;
    fn pcap_set_tstamp_precision(p: *mut c_void, precision: c_int) -> c_int;
    fn pcap_get_tstamp_precision(p: *mut c_void) -> c_int;
    fn pcap_get_selectable_fd(p: *mut c_void) -> c_int;
}

fn cstr(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: libpcap returns NUL-terminated strings that live at least until the next call
    // on the same handle; we copy immediately.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

fn pcap_msg(e: pcap::Error) -> String {
    match e {
        pcap::Error::PcapError(s) => s,
        other => other.to_string(),
    }
}

/// What a read from a live capture produced.
pub enum Next<'a> {
    /// A captured frame (already written to the savefile, if any).
    Record(Record<'a>),
    /// Nothing is buffered right now: call [`LiveSource::wait`] (after flushing output, so no
    /// printed packet lags behind a wait).
    Empty,
    /// The read timeout expired with no packet (blocking mode, where the read itself waits).
    Timeout,
    /// The capture was stopped through a [`BreakLoop`] handle (`pcap_breakloop`).
    Stopped,
    /// A frame the user's filter rejects was read (and counted, see
    /// [`LiveSource::set_filter_counting_tag_misses`]): read again.
    Skipped,
}

/// libpcap's counters for a live capture (`pcap_stats(3PCAP)`; on Linux `received` counts
/// packets that passed the filter).
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    /// `ps_recv`.
    pub received: u32,
    /// `ps_drop`: dropped because the buffer was full (the reader was too slow).
    pub dropped: u32,
    /// `ps_ifdrop`: dropped by the interface or its driver.
    pub if_dropped: u32,
}

/// An activated live capture on one interface.
pub struct LiveSource {
    cap: Capture<Active>,
    iface: String,
    linktype: LinkType,
    nano: bool,
    snaplen: u32,
    savefile: Option<Savefile>,
    /// `pcap_get_selectable_fd`, when the handle is read in non-blocking mode.
    fd: Option<c_int>,
    timeout_ms: i32,
    /// Frames captured so far (the last one's number).
    number: u64,
    /// Time of the first captured frame (ns).
    base_ts_ns: Option<u64>,
    /// The user's filter, applied here, and the tagged RoCE frames it rejected.
    user_filter: Option<(BpfProgram, TagMiss)>,
}

impl LiveSource {
    /// Open and activate a capture on `iface`.
    ///
    /// # Errors
    /// [`LiveError::NoSuchDevice`] (with the available names), [`LiveError::PermissionDenied`],
    /// [`LiveError::InterfaceDown`], [`LiveError::LinkType`] when the decoder cannot handle
    /// the interface's link type, [`LiveError::Pcap`] otherwise (libpcap's message).
    pub fn open(iface: &str, opts: &LiveOptions) -> Result<LiveSource, LiveError> {
        let inactive = Capture::from_device(iface)
            .map_err(|e| LiveError::Pcap(format!("{iface}: {}", pcap_msg(e))))?
            .snaplen(opts.snaplen.min(i32::MAX as u32) as i32)
            .promisc(opts.promisc)
            .buffer_size(opts.buffer_size.min(i32::MAX as u32) as i32)
            .immediate_mode(opts.immediate)
            .timeout(opts.timeout_ms);
        let raw = inactive.as_ptr() as *mut c_void;
        // Nanosecond timestamps where supported (PCAP_ERROR_TSTAMP_PRECISION_NOTSUP otherwise,
        // and libpcap keeps microseconds).
        // SAFETY: `raw` is a valid, not yet activated handle owned by `inactive`.
        unsafe { pcap_set_tstamp_precision(raw, PCAP_TSTAMP_PRECISION_NANO) };
        // SAFETY: as above.
        let status = unsafe { pcap_activate(raw) };
        if status < 0 {
            // SAFETY: as above; the message is copied before the handle is closed.
            let msg = cstr(unsafe { pcap_geterr(raw) });
            let msg = if msg.is_empty() {
                // SAFETY: pcap_statustostr returns a static or thread-local string.
                cstr(unsafe { pcap_statustostr(status) })
            } else {
                msg
            };
            drop(inactive);
            return Err(activate_error(iface, status, msg));
        }
        if status > 0 {
            // PCAP_WARNING_*: the capture works, with a caveat worth telling.
            // SAFETY: as above.
            let msg = cstr(unsafe { pcap_geterr(raw) });
            let msg = if msg.is_empty() {
                // SAFETY: as above.
                cstr(unsafe { pcap_statustostr(status) })
            } else {
                msg
            };
            eprintln!("roce-inspect: warning: {iface}: {msg}");
        }
        // SAFETY: the handle is activated now.
        let nano = unsafe { pcap_get_tstamp_precision(raw) } == PCAP_TSTAMP_PRECISION_NANO;
        // Re-wrap the now activated handle as `Capture<Active>`. The inactive wrapper is
        // forgotten so the handle is closed exactly once (by the new owner); this leaks only the
        // wrapper's small reference-count allocation, once per capture.
        let nn = NonNull::new(inactive.as_ptr())
            .ok_or_else(|| LiveError::Pcap(format!("{iface}: null capture handle")))?;
        std::mem::forget(inactive);
        let mut cap: Capture<Active> = Capture::from(nn);
        // libpcap 1.10 on Linux keeps polling inside pcap_next_ex when its read timeout
        // expires, so an idle capture would never return. Read in non-blocking mode instead and
        // wait on the selectable fd with our own timeout (pcap_get_selectable_fd(3PCAP)).
        // SAFETY: the handle is activated.
        let sfd = unsafe { pcap_get_selectable_fd(cap.as_ptr() as *mut c_void) };
        let fd = if sfd >= 0 {
            cap = cap
                .setnonblock()
                .map_err(|e| LiveError::Pcap(format!("{iface}: {}", pcap_msg(e))))?;
            Some(sfd)
        } else {
            None
        };
        let dl = cap.get_datalink();
        let linktype = LinkType::from_dlt(dl.0);
        if !linktype.is_supported() {
            return Err(LiveError::LinkType {
                iface: iface.to_string(),
                linktype: linktype.0,
                name: dl.get_name().unwrap_or_else(|_| "unknown".into()),
            });
        }
        Ok(LiveSource {
            cap,
            iface: iface.to_string(),
            linktype,
            nano,
            snaplen: opts.snaplen,
            savefile: None,
            fd,
            timeout_ms: opts.timeout_ms,
            number: 0,
            base_ts_ns: None,
            user_filter: None,
        })
    }

    /// The interface name.
    pub fn iface(&self) -> &str {
        &self.iface
    }

    /// The interface's link type.
    pub fn linktype(&self) -> LinkType {
        self.linktype
    }

    /// The snapshot length asked for, bytes.
    pub fn snaplen(&self) -> u32 {
        self.snaplen
    }

    /// Whether timestamps have nanosecond precision (otherwise microseconds).
    pub fn nanosecond_timestamps(&self) -> bool {
        self.nano
    }

    /// Install a BPF filter expression (tcpdump syntax, `pcap_compile` + `pcap_setfilter`).
    ///
    /// # Errors
    /// [`LiveError::Filter`] with libpcap's message when `expr` does not compile,
    /// [`LiveError::SetFilter`] when the kernel refuses the program.
    pub fn set_filter(&mut self, expr: &str) -> Result<(), LiveError> {
        self.cap
            .compile(expr, true)
            .map_err(|e| LiveError::Filter(expr.to_string(), super::file::filter_msg(e)))?;
        self.cap
            .filter(expr, true)
            .map_err(|e| LiveError::SetFilter(pcap_msg(e)))
    }

    /// Install the user's filter `expr` and count the tagged RoCE frames it misses
    /// ([`TagMiss`]): on Ethernet the kernel filter also passes tagged frames that `expr`
    /// matches untagged, and `expr` itself is then applied here; those it rejects are counted
    /// and never returned nor saved. Elsewhere, or when the wider filter does not compile, just
    /// `expr`. Returns the kernel filter installed.
    ///
    /// # Errors
    /// [`LiveError::Filter`] with libpcap's message for `expr`.
    pub fn set_filter_counting_tag_misses(
        &mut self,
        expr: &str,
        is_roce: IsRoce,
    ) -> Result<String, LiveError> {
        let prog = self
            .cap
            .compile(expr, true)
            .map_err(|e| LiveError::Filter(expr.to_string(), super::file::filter_msg(e)))?;
        let wide = tag_miss::suggest(expr, 2);
        if self.linktype == LinkType::ETHERNET && self.set_filter(&wide).is_ok() {
            self.user_filter = Some((prog, TagMiss::new(is_roce)));
            return Ok(wide);
        }
        self.set_filter(expr)?;
        Ok(expr.to_string())
    }

    /// The tagged-frame counter, when [`LiveSource::set_filter_counting_tag_misses`] set one.
    pub fn tag_miss(&self) -> Option<&TagMiss> {
        self.user_filter.as_ref().map(|(_, m)| m)
    }

    /// Install the default RoCE-only filter for this link type (see [`default_filter`]) and
    /// return the expression used. Link types without VLAN support in libpcap's filter
    /// compiler (Linux cooked, raw IP) get the filter without the `vlan` part, and those
    /// without Ethertypes the UDP part only.
    ///
    /// # Errors
    /// [`LiveError::DefaultFilter`] when no candidate compiles (libpcap's message for the last
    /// one), [`LiveError::SetFilter`] when the kernel refuses it.
    pub fn set_default_filter(&mut self, extra_ports: &[u16]) -> Result<String, LiveError> {
        let mut last = String::new();
        for level in [FilterLevel::Vlan, FilterLevel::NoVlan, FilterLevel::UdpOnly] {
            let expr = filter_expr(extra_ports, level);
            match self.set_filter(&expr) {
                Ok(()) => return Ok(expr),
                Err(LiveError::Filter(e, m)) => last = format!("'{e}': {m}"),
                Err(e) => return Err(e),
            }
        }
        Err(LiveError::DefaultFilter(last))
    }

    /// Copy every frame read from now on, unmodified, to a pcap savefile at `path`
    /// (`pcap_dump_open`: the handle's link type, snap length and timestamp precision). The
    /// file header is flushed at once, so the file is a valid (empty) capture from the start.
    ///
    /// # Errors
    /// [`LiveError::Savefile`] when the file cannot be created.
    pub fn save_to(&mut self, path: &str) -> Result<(), LiveError> {
        let err = |msg: String| LiveError::Savefile {
            path: path.to_string(),
            msg,
        };
        if path.contains('\0') {
            return Err(err("the path contains a NUL byte".into()));
        }
        let mut sf = self.cap.savefile(path).map_err(|e| {
            let m = pcap_msg(e);
            // libpcap says "PATH: <strerror>"; keep the OS part.
            let m = m
                .strip_prefix(path)
                .and_then(|r| r.strip_prefix(": "))
                .map(str::to_string)
                .unwrap_or(m);
            err(m)
        })?;
        sf.flush().map_err(|e| err(pcap_msg(e)))?;
        self.savefile = Some(sf);
        Ok(())
    }

    /// Flush the savefile's buffered records to the OS (`pcap_dump_flush`); no-op without one.
    ///
    /// # Errors
    /// [`LiveError::SavefileWrite`] (disk full, I/O error).
    pub fn flush_savefile(&mut self) -> Result<(), LiveError> {
        match &mut self.savefile {
            Some(sf) => sf
                .flush()
                .map_err(|e| LiveError::SavefileWrite(pcap_msg(e))),
            None => Ok(()),
        }
    }

    /// A handle that stops a blocked [`LiveSource::next_frame`] from another thread
    /// (`pcap_breakloop`); the next read then returns [`Next::Stopped`].
    pub fn break_handle(&mut self) -> BreakLoop {
        self.cap.breakloop_handle()
    }

    /// Read the next buffered frame without waiting ([`Next::Empty`] when there is none). The
    /// frame is written to the savefile (if any) before it is returned. Allocation-free.
    ///
    /// # Errors
    /// [`LiveError::Pcap`] when reading fails (e.g. the interface went down or away).
    pub fn next_frame(&mut self) -> Result<Next<'_>, LiveError> {
        match self.cap.next_packet() {
            Ok(p) => {
                if let Some((prog, miss)) = &mut self.user_filter
                    && !prog.filter(p.data)
                {
                    miss.rejected(prog, p.data, p.header.len);
                    return Ok(Next::Skipped);
                }
                if let Some(sf) = &mut self.savefile {
                    sf.write(&p);
                }
                let ts = &p.header.ts;
                let ts_ns = if self.nano {
                    ts_to_ns(ts)
                } else {
                    let ns = (ts.tv_sec as i128) * 1_000_000_000 + ts.tv_usec as i128 * 1000;
                    ns.clamp(0, u64::MAX as i128) as u64
                };
                self.number += 1;
                let mut rec = Record {
                    number: self.number,
                    ts_ns,
                    base_ts_ns: 0,
                    caplen: p.header.caplen,
                    len: p.header.len,
                    data: p.data,
                };
                // A DAG card's records: their time and lengths are the ERF header's.
                super::erf::Rule::new(self.linktype, false).apply(&mut rec);
                rec.base_ts_ns = *self.base_ts_ns.get_or_insert(rec.ts_ns);
                Ok(Next::Record(rec))
            }
            // Non-blocking: nothing buffered. Blocking fallback: the timeout expired.
            Err(pcap::Error::TimeoutExpired) => Ok(if self.fd.is_some() {
                Next::Empty
            } else {
                Next::Timeout
            }),
            // pcap_next_ex returns PCAP_ERROR_BREAK (-2) after pcap_breakloop.
            Err(pcap::Error::NoMorePackets) => Ok(Next::Stopped),
            Err(e) => Err(LiveError::Pcap(format!("{}: {}", self.iface, pcap_msg(e)))),
        }
    }

    /// Wait until a frame may be available, at most the read timeout (`poll(2)` on the
    /// selectable fd). `Ok(true)`: something arrived or a signal interrupted the wait, read
    /// again; `Ok(false)`: the timeout expired. Returns `Ok(true)` at once in blocking mode.
    ///
    /// # Errors
    /// [`LiveError::Pcap`] when `poll` fails.
    pub fn wait(&mut self) -> Result<bool, LiveError> {
        let Some(fd) = self.fd else {
            return Ok(true);
        };
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        match unsafe { libc::poll(&mut pfd, 1, self.timeout_ms) } {
            0 => Ok(false),
            n if n > 0 => Ok(true),
            _ => {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    Ok(true)
                } else {
                    Err(LiveError::Pcap(format!("{}: poll: {e}", self.iface)))
                }
            }
        }
    }

    /// libpcap's counters since the capture started.
    ///
    /// # Errors
    /// [`LiveError::Pcap`] when the platform cannot report them.
    pub fn stats(&mut self) -> Result<Stats, LiveError> {
        let s = self.cap.stats().map_err(|e| LiveError::Pcap(pcap_msg(e)))?;
        Ok(Stats {
            received: s.received,
            dropped: s.dropped,
            if_dropped: s.if_dropped,
        })
    }
}

fn activate_error(iface: &str, status: c_int, msg: String) -> LiveError {
    let perm = msg.contains("Operation not permitted") || msg.contains("Permission denied");
    match status {
        PCAP_ERROR_NO_SUCH_DEVICE => LiveError::NoSuchDevice {
            iface: iface.to_string(),
            available: available_names(),
        },
        PCAP_ERROR_PERM_DENIED | PCAP_ERROR_PROMISC_PERM_DENIED => LiveError::PermissionDenied {
            iface: iface.to_string(),
            msg,
        },
        PCAP_ERROR if perm => LiveError::PermissionDenied {
            iface: iface.to_string(),
            msg,
        },
        PCAP_ERROR_IFACE_NOT_UP => LiveError::InterfaceDown(iface.to_string()),
        _ => LiveError::Pcap(format!("{iface}: {msg}")),
    }
}

fn available_names() -> String {
    match Device::list() {
        Ok(list) if !list.is_empty() => list
            .iter()
            .map(|d| d.name.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        Ok(_) => "none".into(),
        Err(e) => format!("(cannot list interfaces: {})", pcap_msg(e)),
    }
}

/// How much of the default filter a link type supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FilterLevel {
    /// RoCEv2 and RoCEv1, untagged and behind one or two VLAN tags (Ethernet).
    Vlan,
    /// RoCEv2 and RoCEv1, untagged (Linux cooked capture).
    NoVlan,
    /// RoCEv2 only (raw IP).
    UdpOnly,
}

fn filter_expr(extra_ports: &[u16], level: FilterLevel) -> String {
    let mut udp = format!("udp dst port {ROCEV2_PORT}");
    for p in extra_ports {
        if *p != ROCEV2_PORT {
            let _ = write!(udp, " or udp dst port {p}");
        }
    }
    let roce = format!("{udp} or ether proto {ROCEV1_ETHERTYPE:#06x}");
    match level {
        FilterLevel::Vlan => {
            // Nested, not `… or (vlan and vlan and …)`: a `vlan` keyword shifts the offsets
            // for the rest of the whole expression, across `or` too (pcap-filter(7)).
            format!("({roce}) or (vlan and (({roce}) or (vlan and ({roce}))))")
        }
        FilterLevel::NoVlan => roce,
        FilterLevel::UdpOnly => udp,
    }
}

/// The default capture filter for Ethernet interfaces: RoCEv2 (UDP to 4791 and to every
/// `extra_ports` port) and RoCEv1 (Ethertype 0x8915), untagged, behind one 802.1Q/802.1ad tag,
/// and behind two (QinQ). Each `vlan` keyword in libpcap moves the offsets of what follows by
/// one tag for the rest of the expression (pcap-filter(7)), so the QinQ clause is nested
/// inside the single-tag one.
pub fn default_filter(extra_ports: &[u16]) -> String {
    filter_expr(extra_ports, FilterLevel::Vlan)
}

/// The interfaces libpcap can capture on (`pcap_findalldevs`).
///
/// # Errors
/// [`LiveError::Pcap`] with libpcap's message.
pub fn list_devices() -> Result<Vec<Device>, LiveError> {
    Device::list().map_err(|e| LiveError::Pcap(pcap_msg(e)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pcap::Linktype;

    /// Ethernet frame: dst, src MACs, `tags` (TPID, TCI) pairs, then `ethertype` and `payload`.
    fn eth(tags: &[(u16, u16)], ethertype: u16, payload: &[u8]) -> Vec<u8> {
        let mut f = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2];
        for (tpid, tci) in tags {
            f.extend_from_slice(&tpid.to_be_bytes());
            f.extend_from_slice(&tci.to_be_bytes());
        }
        f.extend_from_slice(&ethertype.to_be_bytes());
        f.extend_from_slice(payload);
        f
    }

    /// IPv4 + UDP to `dport` with a 12-byte BTH and 4-byte ICRC of zeros.
    fn ipv4_udp(dport: u16) -> Vec<u8> {
        let mut p = vec![
            0x45, 0, 0, 44, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
        ];
        p.extend_from_slice(&0xc000u16.to_be_bytes());
        p.extend_from_slice(&dport.to_be_bytes());
        p.extend_from_slice(&24u16.to_be_bytes());
        p.extend_from_slice(&[0, 0]);
        p.extend_from_slice(&[0x0a, 0, 0xff, 0xff, 0, 0, 0, 0x11, 0x80, 0, 0, 1]);
        p.extend_from_slice(&[0; 4]);
        p
    }

    fn matches(expr: &str, frame: &[u8]) -> bool {
        let cap = Capture::dead(Linktype::ETHERNET).expect("dead handle");
        let prog = cap.compile(expr, true).expect("filter compiles");
        prog.filter(frame)
    }

    #[test]
    fn default_filter_compiles_and_matches_tagged_and_untagged() {
        let f = default_filter(&[9741]);
        let v2 = ipv4_udp(4791);
        let v2_extra = ipv4_udp(9741);
        let grh = [0x60u8; 52];
        // untagged, one 802.1Q tag, 802.1ad outer + 802.1Q inner
        for tags in [
            &[][..],
            &[(0x8100, 100)][..],
            &[(0x88a8, 10), (0x8100, 20)][..],
        ] {
            assert!(matches(&f, &eth(tags, 0x0800, &v2)), "v2 tags {tags:?}");
            assert!(
                matches(&f, &eth(tags, 0x0800, &v2_extra)),
                "v2 port 9741 tags {tags:?}"
            );
            assert!(matches(&f, &eth(tags, 0x8915, &grh)), "v1 tags {tags:?}");
            assert!(
                !matches(&f, &eth(tags, 0x0800, &ipv4_udp(53))),
                "udp 53 tags {tags:?}"
            );
            assert!(
                !matches(&f, &eth(tags, 0x0806, &[0; 28])),
                "arp tags {tags:?}"
            );
        }
        // A frame *from* port 4791 (not to it) is not RoCE.
        let mut rev = ipv4_udp(53);
        rev[20..22].copy_from_slice(&4791u16.to_be_bytes());
        assert!(!matches(&f, &eth(&[], 0x0800, &rev)));
    }

    #[test]
    fn default_filter_text() {
        assert_eq!(
            default_filter(&[]),
            "(udp dst port 4791 or ether proto 0x8915) or (vlan and ((udp dst port 4791 or ether \
             proto 0x8915) or (vlan and (udp dst port 4791 or ether proto 0x8915))))"
        );
        assert_eq!(
            filter_expr(&[4791, 9741], FilterLevel::UdpOnly),
            "udp dst port 4791 or udp dst port 9741"
        );
    }

    #[test]
    fn fallback_levels_compile_where_vlan_does_not() {
        // Linux cooked v2 ("any" device): no `vlan`, but Ethertypes.
        let sll2 = Capture::dead(Linktype(276)).expect("dead handle");
        assert!(sll2.compile(&default_filter(&[]), true).is_err());
        assert!(
            sll2.compile(&filter_expr(&[], FilterLevel::NoVlan), true)
                .is_ok()
        );
        // Raw IP: UDP only.
        let raw = Capture::dead(Linktype(228)).expect("dead handle");
        assert!(
            raw.compile(&filter_expr(&[], FilterLevel::UdpOnly), true)
                .is_ok()
        );
    }
}
