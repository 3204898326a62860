//! The verbs side of the RDMA sniffer: the sequence of libpcap's `pcap-rdmasniff.c`
//! (`rdmasniff_activate`, `rdmasniff_read`) with rdma-core's man pages (`ibv_create_qp(3)`
//! for `IBV_QPT_RAW_PACKET`, `ibv_create_flow(3)` for `IBV_FLOW_ATTR_SNIFFER`,
//! `ibv_create_comp_channel(3)`, `ibv_get_cq_event(3)`, `ibv_poll_cq(3)`, `ibv_post_recv(3)`):
//! open the device, check the port, PD, completion channel, CQ, raw packet QP moved to INIT
//! (with the port) and RTR, the sniffer flow rule on the port, one memory region over the
//! receive ring, every slot posted. Frames are timestamped with the host clock when their
//! completion is polled.

use std::ffi::CStr;
use std::io;
use std::ptr::{self, NonNull};

use pcap::BpfProgram;
use rdma_sys::{
    ___ibv_query_port, ibv_access_flags, ibv_ack_cq_events, ibv_alloc_pd, ibv_close_device,
    ibv_comp_channel, ibv_context, ibv_cq, ibv_create_comp_channel, ibv_create_cq, ibv_create_flow,
    ibv_create_qp, ibv_dealloc_pd, ibv_dereg_mr, ibv_destroy_comp_channel, ibv_destroy_cq,
    ibv_destroy_flow, ibv_destroy_qp, ibv_flow, ibv_flow_attr, ibv_flow_attr_type,
    ibv_free_device_list, ibv_get_cq_event, ibv_get_device_list, ibv_get_device_name,
    ibv_modify_qp, ibv_mr, ibv_open_device, ibv_pd, ibv_poll_cq, ibv_port_attr, ibv_post_recv,
    ibv_qp, ibv_qp_attr, ibv_qp_attr_mask, ibv_qp_init_attr, ibv_qp_state, ibv_qp_type,
    ibv_recv_wr, ibv_reg_mr, ibv_req_notify_cq, ibv_sge, ibv_wc,
};

use super::deliver::Delivery;
use super::ring::{Completion, Outcome, Ring};
use super::{DEFAULT_SLOTS, DROP_COUNTER, SLOT_SIZE, SnifferError, flow_error, qp_error, sysfs};
use crate::decode::LinkType;
use crate::source::live::Next;
use crate::source::tag_miss::{IsRoce, TagMiss};

/// `IBV_LINK_LAYER_ETHERNET`, the value of `ibv_port_attr.link_layer` on a RoCE port: the
/// third entry of the anonymous enum in rdma-core's `libibverbs/verbs.h` (`UNSPECIFIED`,
/// `INFINIBAND`, `ETHERNET`), which rdma-sys does not export.
pub const IBV_LINK_LAYER_ETHERNET: u8 = 2;

/// The verbs objects, destroyed in reverse order of creation (whatever was created).
struct Objects {
    ctx: NonNull<ibv_context>,
    pd: *mut ibv_pd,
    channel: *mut ibv_comp_channel,
    cq: *mut ibv_cq,
    qp: *mut ibv_qp,
    flow: *mut ibv_flow,
    mr: *mut ibv_mr,
}

impl Drop for Objects {
    fn drop(&mut self) {
        // SAFETY: each pointer is NULL or a live object created from `ctx`; children first.
        unsafe {
            if !self.flow.is_null() {
                ibv_destroy_flow(self.flow);
            }
            if !self.qp.is_null() {
                ibv_destroy_qp(self.qp);
            }
            if !self.mr.is_null() {
                ibv_dereg_mr(self.mr);
            }
            if !self.cq.is_null() {
                ibv_destroy_cq(self.cq);
            }
            if !self.channel.is_null() {
                ibv_destroy_comp_channel(self.channel);
            }
            if !self.pd.is_null() {
                ibv_dealloc_pd(self.pd);
            }
            ibv_close_device(self.ctx.as_ptr());
        }
    }
}

fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

fn verbs_err(dev: &str, call: &'static str, e: io::Error) -> SnifferError {
    SnifferError::Verbs {
        dev: dev.to_string(),
        call,
        err: e.to_string(),
    }
}

/// Open the device called `dev` (`ibv_get_device_list`, `ibv_open_device`).
fn open_device(dev: &str) -> Result<NonNull<ibv_context>, SnifferError> {
    let mut n = 0;
    // SAFETY: valid out-pointer.
    let list = unsafe { ibv_get_device_list(&mut n) };
    if list.is_null() {
        return Err(SnifferError::NoSuchDevice {
            name: dev.to_string(),
            available: format!("none ({})", io::Error::last_os_error()),
        });
    }
    let mut names = Vec::new();
    let mut found = None;
    for i in 0..usize::try_from(n).unwrap_or(0) {
        // SAFETY: the list has `n` entries, each with a NUL-terminated name.
        let d = unsafe { *list.add(i) };
        let name = unsafe { CStr::from_ptr(ibv_get_device_name(d)) }.to_string_lossy();
        if name == dev {
            found = Some(d);
        }
        names.push(name.into_owned());
    }
    // SAFETY: `found` stays valid for ibv_open_device until the list is freed.
    let ctx = found.map(|d| unsafe { ibv_open_device(d) });
    let open_err = io::Error::last_os_error();
    // SAFETY: from ibv_get_device_list; an opened context outlives the list.
    unsafe { ibv_free_device_list(list) };
    match ctx {
        None => Err(SnifferError::NoSuchDevice {
            name: dev.to_string(),
            available: if names.is_empty() {
                "none".into()
            } else {
                names.join(", ")
            },
        }),
        Some(c) => NonNull::new(c).ok_or_else(|| verbs_err(dev, "ibv_open_device", open_err)),
    }
}

/// The link type of `port`: Ethernet for RoCE, InfiniBand (LRH first) otherwise.
fn port_linktype(o: &Objects, dev: &str, port: u8) -> Result<LinkType, SnifferError> {
    // SAFETY: zeroed is a valid ibv_port_attr; live context, valid out-pointer.
    let mut attr: ibv_port_attr = unsafe { std::mem::zeroed() };
    let rc = unsafe { ___ibv_query_port(o.ctx.as_ptr(), port, &mut attr) };
    match rc {
        0 if attr.link_layer == IBV_LINK_LAYER_ETHERNET => Ok(LinkType::ETHERNET),
        0 => Ok(LinkType::INFINIBAND),
        libc::EINVAL => Err(SnifferError::NoSuchPort {
            dev: dev.to_string(),
            port,
        }),
        e => Err(verbs_err(
            dev,
            "ibv_query_port",
            io::Error::from_raw_os_error(e),
        )),
    }
}

/// PD, completion channel (non-blocking) and CQ.
fn create_cq(o: &mut Objects, dev: &str, slots: usize) -> Result<(), SnifferError> {
    let ctx = o.ctx.as_ptr();
    // SAFETY: live context for each call; results checked before use.
    unsafe {
        o.pd = ibv_alloc_pd(ctx);
        if o.pd.is_null() {
            return Err(verbs_err(dev, "ibv_alloc_pd", io::Error::last_os_error()));
        }
        o.channel = ibv_create_comp_channel(ctx);
        if o.channel.is_null() {
            return Err(verbs_err(
                dev,
                "ibv_create_comp_channel",
                io::Error::last_os_error(),
            ));
        }
        let fd = (*o.channel).fd;
        let fl = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK);
        o.cq = ibv_create_cq(ctx, slots as i32, ptr::null_mut(), o.channel, 0);
        if o.cq.is_null() {
            return Err(verbs_err(dev, "ibv_create_cq", io::Error::last_os_error()));
        }
    }
    Ok(())
}

/// The raw packet QP, moved to INIT on `port`, then RTR (receive only).
fn create_qp(o: &mut Objects, dev: &str, port: u8, slots: usize) -> Result<(), SnifferError> {
    let soft = sysfs::devices(std::path::Path::new(sysfs::SYSFS_ROOT))
        .iter()
        .any(|d| d.name == dev && d.is_soft());
    // SAFETY: plain C structs, zeroed then filled; live PD and CQ.
    unsafe {
        let mut init: ibv_qp_init_attr = std::mem::zeroed();
        init.send_cq = o.cq;
        init.recv_cq = o.cq;
        init.cap.max_recv_wr = slots as u32;
        init.cap.max_recv_sge = 1;
        init.qp_type = ibv_qp_type::IBV_QPT_RAW_PACKET;
        o.qp = ibv_create_qp(o.pd, &mut init);
        if o.qp.is_null() {
            return Err(qp_error(dev, soft, errno()));
        }
        let mut attr: ibv_qp_attr = std::mem::zeroed();
        attr.qp_state = ibv_qp_state::IBV_QPS_INIT;
        attr.port_num = port;
        let mask = ibv_qp_attr_mask::IBV_QP_STATE | ibv_qp_attr_mask::IBV_QP_PORT;
        let rc = ibv_modify_qp(o.qp, &mut attr, mask.0 as i32);
        if rc != 0 {
            let e = io::Error::from_raw_os_error(rc);
            return Err(verbs_err(dev, "ibv_modify_qp(INIT)", e));
        }
        let mut attr: ibv_qp_attr = std::mem::zeroed();
        attr.qp_state = ibv_qp_state::IBV_QPS_RTR;
        let rc = ibv_modify_qp(o.qp, &mut attr, ibv_qp_attr_mask::IBV_QP_STATE.0 as i32);
        if rc != 0 {
            let e = io::Error::from_raw_os_error(rc);
            return Err(verbs_err(dev, "ibv_modify_qp(RTR)", e));
        }
    }
    Ok(())
}

/// The flow rule: every packet of `port` (`IBV_FLOW_ATTR_SNIFFER`, no specs) to the QP.
pub fn sniffer_flow_attr(port: u8) -> ibv_flow_attr {
    ibv_flow_attr {
        comp_mask: 0,
        type_: ibv_flow_attr_type::IBV_FLOW_ATTR_SNIFFER,
        size: std::mem::size_of::<ibv_flow_attr>() as u16,
        priority: 0,
        num_of_specs: 0,
        port,
        flags: 0,
    }
}

fn create_flow(o: &mut Objects, dev: &str, port: u8) -> Result<(), SnifferError> {
    let mut attr = sniffer_flow_attr(port);
    // SAFETY: live QP in RTR; `attr` outlives the call. rdma-sys returns None (errno
    // EOPNOTSUPP) when the provider has no create_flow.
    let flow = unsafe { ibv_create_flow(o.qp, &mut attr) };
    match flow {
        Some(f) if !f.is_null() => {
            o.flow = f;
            Ok(())
        }
        _ => Err(flow_error(dev, errno())),
    }
}

/// A capture on an RDMA device through a raw packet QP and the sniffer flow rule.
pub struct RdmaSniffer {
    o: Objects,
    dev: String,
    port: u8,
    linktype: LinkType,
    /// The receive ring's memory (registered as `o.mr`; never resized).
    mem: Vec<u8>,
    ring: Ring,
    lkey: u32,
    /// One completion polled while arming the CQ in [`RdmaSniffer::wait`].
    stash: Option<Completion>,
    delivery: Delivery,
    drops_at_open: Option<u64>,
    snaplen: u32,
}

impl RdmaSniffer {
    /// Open `DEVICE[:PORT]` and start sniffing, frames cut to `snaplen` bytes.
    ///
    /// # Errors
    /// One-line [`SnifferError`]s: no such device or port, CAP_NET_RAW missing, no raw
    /// packet QP support (Soft-RoCE), the flow rule refused, another verbs failure.
    pub fn open(spec: &str, snaplen: u32) -> Result<RdmaSniffer, SnifferError> {
        let (dev, port) = super::parse_device(spec)?;
        let mut o = Objects {
            ctx: open_device(dev)?,
            pd: ptr::null_mut(),
            channel: ptr::null_mut(),
            cq: ptr::null_mut(),
            qp: ptr::null_mut(),
            flow: ptr::null_mut(),
            mr: ptr::null_mut(),
        };
        let linktype = port_linktype(&o, dev, port)?;
        create_cq(&mut o, dev, DEFAULT_SLOTS)?;
        create_qp(&mut o, dev, port, DEFAULT_SLOTS)?;
        create_flow(&mut o, dev, port)?;
        let mut mem = vec![0u8; DEFAULT_SLOTS * SLOT_SIZE];
        let access = ibv_access_flags::IBV_ACCESS_LOCAL_WRITE.0 as i32;
        // SAFETY: live PD; `mem` lives (unmoved, never resized) as long as the MR.
        o.mr = unsafe { ibv_reg_mr(o.pd, mem.as_mut_ptr().cast(), mem.len(), access) };
        if o.mr.is_null() {
            return Err(verbs_err(dev, "ibv_reg_mr", io::Error::last_os_error()));
        }
        // SAFETY: checked non-NULL.
        let lkey = unsafe { (*o.mr).lkey };
        let root = std::path::Path::new(sysfs::SYSFS_ROOT);
        let mut s = RdmaSniffer {
            o,
            dev: dev.to_string(),
            port,
            linktype,
            mem,
            ring: Ring::new(DEFAULT_SLOTS, SLOT_SIZE, snaplen),
            lkey,
            stash: None,
            delivery: Delivery::default(),
            drops_at_open: sysfs::counter(root, dev, port, DROP_COUNTER),
            snaplen: snaplen.clamp(1, SLOT_SIZE as u32),
        };
        for i in 0..DEFAULT_SLOTS {
            s.post(i)?;
        }
        Ok(s)
    }

    /// `DEVICE:PORT`.
    pub fn name(&self) -> String {
        format!("{}:{}", self.dev, self.port)
    }

    /// Ethernet for a RoCE port, InfiniBand for an IB port.
    pub fn linktype(&self) -> LinkType {
        self.linktype
    }

    /// Snap length, bytes: the one asked for, at most a receive buffer ([`SLOT_SIZE`]).
    pub fn snaplen(&self) -> u32 {
        self.snaplen
    }

    /// Keep only frames matching `prog` (applied here: the sniffer receives every packet of
    /// the port); `is_roce` counts the tagged RoCE frames a user's filter rejects.
    pub fn set_filter(&mut self, prog: BpfProgram, is_roce: Option<IsRoce>) {
        self.delivery.set_filter(prog, is_roce);
    }

    /// The tagged-frame counter of a user filter.
    pub fn tag_miss(&self) -> Option<&TagMiss> {
        self.delivery.tag_miss()
    }

    /// Write every frame returned from now on to a pcap savefile (ns timestamps).
    ///
    /// # Errors
    /// libpcap's message when the file cannot be created.
    pub fn save_to(&mut self, path: &str) -> Result<(), String> {
        self.delivery.save_to(path, self.linktype)
    }

    /// Flush the savefile.
    ///
    /// # Errors
    /// The OS error.
    pub fn flush_savefile(&mut self) -> Result<(), String> {
        self.delivery.flush()
    }

    fn post(&mut self, slot: usize) -> Result<(), SnifferError> {
        let off = self.ring.offset(slot);
        let mut sge = ibv_sge {
            // SAFETY: the slot lies inside the registered region.
            addr: unsafe { self.mem.as_mut_ptr().add(off) } as u64,
            length: self.ring.slot_size() as u32,
            lkey: self.lkey,
        };
        // SAFETY: plain C struct; live QP; `wr` and `sge` outlive the call.
        let mut wr: ibv_recv_wr = unsafe { std::mem::zeroed() };
        wr.wr_id = slot as u64;
        wr.sg_list = &mut sge;
        wr.num_sge = 1;
        let mut bad: *mut ibv_recv_wr = ptr::null_mut();
        let rc = unsafe { ibv_post_recv(self.o.qp, &mut wr, &mut bad) };
        if rc != 0 {
            return Err(verbs_err(
                &self.dev,
                "ibv_post_recv",
                io::Error::from_raw_os_error(rc),
            ));
        }
        self.ring.mark_posted(slot);
        Ok(())
    }

    fn poll_one(&mut self) -> Result<Option<Completion>, SnifferError> {
        if let Some(c) = self.stash.take() {
            return Ok(Some(c));
        }
        // SAFETY: zeroed is a valid ibv_wc; live CQ, room for one entry.
        let mut wc: ibv_wc = unsafe { std::mem::zeroed() };
        let n = unsafe { ibv_poll_cq(self.o.cq, 1, &mut wc) };
        match n {
            0 => Ok(None),
            1 => Ok(Some(Completion {
                wr_id: wc.wr_id,
                status: wc.status,
                byte_len: wc.byte_len,
            })),
            _ => Err(verbs_err(
                &self.dev,
                "ibv_poll_cq",
                io::Error::last_os_error(),
            )),
        }
    }

    /// The next frame, without waiting ([`Next::Empty`] when none is there; [`Next::Skipped`]
    /// for one the filter rejected). The slot of the frame returned before is reposted first.
    ///
    /// # Errors
    /// A failed poll or repost.
    pub fn next_frame(&mut self) -> Result<Next<'_>, SnifferError> {
        if let Some(s) = self.ring.take_lent() {
            self.post(s)?;
        }
        loop {
            let Some(c) = self.poll_one()? else {
                return Ok(Next::Empty);
            };
            let r = match self.ring.complete(c) {
                Outcome::Frame(r) => r,
                Outcome::Repost(s) => {
                    self.post(s)?;
                    continue;
                }
                Outcome::Stray => continue,
            };
            let off = self.ring.offset(r.slot);
            let data = &self.mem[off..off + r.caplen as usize];
            let ts_ns = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64);
            return Ok(match self.delivery.accept(data, r, ts_ns) {
                Some(rec) => Next::Record(rec),
                None => Next::Skipped,
            });
        }
    }

    /// Wait up to `timeout_ms` for a completion (`ibv_req_notify_cq`, then `poll(2)` on the
    /// completion channel). `Ok(true)`: read again; `Ok(false)`: nothing came.
    ///
    /// # Errors
    /// A failed notify request or poll.
    pub fn wait(&mut self, timeout_ms: i32) -> Result<bool, SnifferError> {
        // SAFETY: live CQ.
        let rc = unsafe { ibv_req_notify_cq(self.o.cq, 0) };
        if rc != 0 {
            let e = io::Error::from_raw_os_error(rc);
            return Err(verbs_err(&self.dev, "ibv_req_notify_cq", e));
        }
        // A completion that arrived before the CQ was armed raises no event: look once more.
        if let Some(c) = self.poll_one()? {
            self.stash = Some(c);
            return Ok(true);
        }
        // SAFETY: live channel.
        let fd = unsafe { (*self.o.channel).fd };
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut pfd, 1, timeout_ms) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                return Ok(true);
            }
            return Err(verbs_err(&self.dev, "poll", e));
        }
        if n == 0 {
            return Ok(false);
        }
        let mut cq: *mut ibv_cq = ptr::null_mut();
        let mut cx: *mut std::ffi::c_void = ptr::null_mut();
        // SAFETY: non-blocking channel with an event pending; each event is acknowledged.
        if unsafe { ibv_get_cq_event(self.o.channel, &mut cq, &mut cx) } == 0 {
            unsafe { ibv_ack_cq_events(cq, 1) };
        }
        Ok(true)
    }

    /// The end-of-capture line on receptions and drops ([`super::drop_report`]).
    pub fn report(&self) -> String {
        let root = std::path::Path::new(sysfs::SYSFS_ROOT);
        let now = sysfs::counter(root, &self.dev, self.port, DROP_COUNTER);
        let delta = now
            .zip(self.drops_at_open)
            .map(|(b, a)| b.saturating_sub(a));
        super::drop_report(&self.ring.counters, delta)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffer_flow_rule_is_libpcaps() {
        let a = sniffer_flow_attr(2);
        assert_eq!(a.type_, 3);
        assert_eq!((a.port, a.num_of_specs, a.priority, a.flags), (2, 0, 0, 0));
        assert_eq!(usize::from(a.size), std::mem::size_of::<ibv_flow_attr>());
    }

    /// This machine has no RDMA device (and no RDMA in its kernel): opening fails with one
    /// line naming the device, before any verbs object exists.
    #[test]
    fn open_errors_before_the_device() {
        if !sysfs::devices(std::path::Path::new(sysfs::SYSFS_ROOT)).is_empty() {
            println!("skipped: this host has RDMA devices");
            return;
        }
        let Err(e) = RdmaSniffer::open("mlx5_9", 256) else {
            panic!("opened a device that does not exist")
        };
        assert!(matches!(e, SnifferError::NoSuchDevice { .. }), "{e}");
        let msg = e.to_string();
        assert!(
            msg.starts_with("mlx5_9: no such RDMA device (RDMA devices: none"),
            "{msg}"
        );
        assert_eq!(msg.lines().count(), 1);
        assert!(matches!(
            RdmaSniffer::open("mlx5_0:zero", 256),
            Err(SnifferError::BadPort(_))
        ));
    }
}
