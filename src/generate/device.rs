//! Finding and opening the RDMA device, checking its port, and reading its GID table.
//!
//! perftest's `ctx_find_dev` and `check_link`; the error cases follow rdma-core's
//! `ibv_get_device_list(3)`: a NULL list with errno ENOSYS means no RDMA support in the kernel,
//! an empty list means no devices (or no userspace provider for them).

use std::ffi::CStr;
use std::io;
use std::path::Path;
use std::ptr::NonNull;
use std::rc::Rc;

use anyhow::{Result, anyhow, bail};
use rdma_sys::{
    ___ibv_query_port, ibv_close_device, ibv_context, ibv_device, ibv_free_device_list,
    ibv_get_device_list, ibv_get_device_name, ibv_gid_entry, ibv_open_device, ibv_port_attr,
    ibv_port_state,
};

use super::ffi::{self, IBV_LINK_LAYER_ETHERNET};
use super::gid::Gid;
use super::gid_table::{self, GidEntry, GidType};
use super::mtu::Mtu;

/// The hint printed when there is no RDMA device to use.
pub const SOFT_ROCE_HINT: &str = "for a software RoCE device: modprobe rdma_rxe && \
     rdma link add rxe0 type rxe netdev eth0";

/// An open device (`ibv_open_device`), closed on drop after everything created from it.
#[derive(Debug)]
pub struct Context {
    ctx: NonNull<ibv_context>,
    name: String,
}

impl Context {
    /// The device name (`mlx5_0`, `rxe0`).
    pub fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn raw(&self) -> *mut ibv_context {
        self.ctx.as_ptr()
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: opened in `open`; every child object holds an Rc to this and is gone.
        unsafe {
            ibv_close_device(self.ctx.as_ptr());
        }
    }
}

/// What `generate` needs to know about the port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortInfo {
    /// Port number.
    pub port: u8,
    /// Active MTU.
    pub active_mtu: Mtu,
    /// Number of GID-table slots.
    pub gid_tbl_len: u32,
}

/// `ibv_get_device_list`, freed on drop.
struct DeviceList {
    list: NonNull<*mut ibv_device>,
    len: usize,
}

impl DeviceList {
    fn get() -> Result<DeviceList> {
        let mut n: i32 = 0;
        // SAFETY: valid out-pointer.
        let list = unsafe { ibv_get_device_list(&mut n) };
        let Some(list) = NonNull::new(list) else {
            let err = io::Error::last_os_error();
            return Err(match err.raw_os_error() {
                Some(libc::ENOSYS) => anyhow!(
                    "this kernel has no RDMA support (ibv_get_device_list: ENOSYS): generate \
                     needs an RDMA NIC or Soft-RoCE ({SOFT_ROCE_HINT}; needs CONFIG_RDMA_RXE)"
                ),
                _ => anyhow!("cannot list RDMA devices (ibv_get_device_list: {err})"),
            });
        };
        let dl = DeviceList {
            list,
            len: usize::try_from(n).unwrap_or(0),
        };
        if dl.len == 0 {
            bail!(
                "no RDMA device found (check `rdma link` and `ibv_devices`; a device without its \
                 ibverbs-providers library is not listed); {SOFT_ROCE_HINT}"
            );
        }
        Ok(dl)
    }

    fn devices(&self) -> impl Iterator<Item = (*mut ibv_device, String)> + '_ {
        (0..self.len).filter_map(move |i| {
            // SAFETY: the list has `len` entries.
            let dev = unsafe { *self.list.as_ptr().add(i) };
            if dev.is_null() {
                return None;
            }
            // SAFETY: a listed device has a NUL-terminated name.
            let name = unsafe { ibv_get_device_name(dev) };
            if name.is_null() {
                return None;
            }
            // SAFETY: checked non-NULL above.
            let name = unsafe { CStr::from_ptr(name) }
                .to_string_lossy()
                .into_owned();
            Some((dev, name))
        })
    }
}

impl Drop for DeviceList {
    fn drop(&mut self) {
        // SAFETY: from ibv_get_device_list; opened contexts stay valid after this.
        unsafe { ibv_free_device_list(self.list.as_ptr()) }
    }
}

fn open_one(dev: *mut ibv_device, name: &str) -> Result<Rc<Context>> {
    // SAFETY: `dev` comes from the live device list.
    let ctx = unsafe { ibv_open_device(dev) };
    let ctx = NonNull::new(ctx).ok_or_else(|| {
        anyhow!(
            "cannot open RDMA device {name}: {}",
            io::Error::last_os_error()
        )
    })?;
    Ok(Rc::new(Context {
        ctx,
        name: name.to_string(),
    }))
}

fn port_state_name(s: u32) -> &'static str {
    match s {
        ibv_port_state::IBV_PORT_NOP => "NOP",
        ibv_port_state::IBV_PORT_DOWN => "DOWN",
        ibv_port_state::IBV_PORT_INIT => "INIT",
        ibv_port_state::IBV_PORT_ARMED => "ARMED",
        ibv_port_state::IBV_PORT_ACTIVE => "ACTIVE",
        ibv_port_state::IBV_PORT_ACTIVE_DEFER => "ACTIVE_DEFER",
        _ => "unknown",
    }
}

/// Queries the port and checks that it is an active Ethernet (RoCE) port.
pub fn query_port(ctx: &Context, port: u8) -> Result<PortInfo> {
    // SAFETY: zeroed is a valid ibv_port_attr (integers only); rdma-sys does not memset on
    // its compat path, so start from zero (spec P2).
    let mut attr: ibv_port_attr = unsafe { std::mem::zeroed() };
    // SAFETY: live context, valid out-pointer; ___ibv_query_port mirrors verbs.h's inline.
    let rc = unsafe { ___ibv_query_port(ctx.raw(), port, &mut attr) };
    if rc != 0 {
        bail!(
            "{} has no port {port} (ibv_query_port: {})",
            ctx.name(),
            io::Error::from_raw_os_error(rc)
        );
    }
    if attr.state != ibv_port_state::IBV_PORT_ACTIVE {
        bail!(
            "{} port {port} is not active (state {}): check the link and `rdma link`",
            ctx.name(),
            port_state_name(attr.state)
        );
    }
    if attr.link_layer != IBV_LINK_LAYER_ETHERNET {
        bail!(
            "{} port {port} is not an Ethernet (RoCE) port (link layer {}): generate sends RoCE v2",
            ctx.name(),
            attr.link_layer
        );
    }
    let active_mtu = Mtu::from_code(attr.active_mtu).ok_or_else(|| {
        anyhow!(
            "{} port {port} reports an invalid active MTU code {}",
            ctx.name(),
            attr.active_mtu
        )
    })?;
    Ok(PortInfo {
        port,
        active_mtu,
        gid_tbl_len: u32::try_from(attr.gid_tbl_len).unwrap_or(0),
    })
}

/// Opens `--device` (or the first device whose `port` is an active RoCE port) and checks its
/// port.
pub fn open(name: Option<&str>, port: u8) -> Result<(Rc<Context>, PortInfo)> {
    let list = DeviceList::get()?;
    let devices: Vec<_> = list.devices().collect();
    if let Some(want) = name {
        let Some((dev, n)) = devices.iter().find(|(_, n)| n == want) else {
            let names: Vec<&str> = devices.iter().map(|(_, n)| n.as_str()).collect();
            bail!(
                "RDMA device {want} not found; this host has: {}",
                names.join(", ")
            );
        };
        let ctx = open_one(*dev, n)?;
        let info = query_port(&ctx, port)?;
        return Ok((ctx, info));
    }
    let mut reasons = Vec::new();
    for (dev, n) in &devices {
        match open_one(*dev, n).and_then(|ctx| query_port(&ctx, port).map(|i| (ctx, i))) {
            Ok(found) => return Ok(found),
            Err(e) => reasons.push(format!("{e:#}")),
        }
    }
    bail!(
        "no RDMA device has an active RoCE port {port}: {}",
        reasons.join("; ")
    )
}

/// Reads the port's GID table with `_ibv_query_gid_ex`, or from sysfs when this libibverbs
/// lacks it or the device refuses it.
pub fn gid_table(ctx: &Context, info: &PortInfo) -> Result<Vec<GidEntry>> {
    if let Some(query) = ffi::query_gid_ex() {
        let mut out = Vec::new();
        let mut supported = true;
        for index in 0..info.gid_tbl_len {
            // SAFETY: zeroed is a valid ibv_gid_entry (integers and a byte-array union).
            let mut e: ibv_gid_entry = unsafe { std::mem::zeroed() };
            // SAFETY: live context; entry_size tells the library how much it may write.
            let rc = unsafe {
                query(
                    ctx.raw(),
                    u32::from(info.port),
                    index,
                    &mut e,
                    0,
                    std::mem::size_of::<ibv_gid_entry>(),
                )
            };
            if rc == libc::ENODATA || rc == libc::EINVAL {
                continue;
            }
            if rc == libc::EOPNOTSUPP || rc == libc::ENOSYS {
                supported = false;
                break;
            }
            if rc != 0 {
                bail!(
                    "reading GID {index} of {} port {}: {}",
                    ctx.name(),
                    info.port,
                    io::Error::from_raw_os_error(rc)
                );
            }
            // SAFETY: raw is the byte view of the GID union.
            let gid = Gid(unsafe { e.gid.raw });
            let kind = match e.gid_type {
                rdma_sys::IBV_GID_TYPE_ROCE_V2 => GidType::RoceV2,
                rdma_sys::IBV_GID_TYPE_ROCE_V1 => GidType::RoceV1,
                _ => GidType::Ib,
            };
            if !gid.is_zero() {
                out.push(GidEntry {
                    index,
                    gid,
                    kind,
                    ndev: None,
                });
            }
        }
        if supported {
            return Ok(out);
        }
    }
    gid_table::read_sysfs(Path::new("/sys/class/infiniband"), ctx.name(), info.port).map_err(|e| {
        anyhow!(
            "cannot read the GID table of {} port {} from sysfs: {e}",
            ctx.name(),
            info.port
        )
    })
}
