//! What client and server share: opening the device, choosing the GID, allocating the buffer,
//! creating the QPs, the QP transitions, and printing.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::rc::Rc;

use anyhow::{Result, anyhow, bail};

use super::args::GenerateArgs;
use super::device::{self, Context, PortInfo};
use super::gid::Family;
use super::gid_table::{self, GidEntry};
use super::memory::{HostBuffer, Memory};
use super::mtu::{self, Mtu};
use super::qp_attr::{self, RtrParams};
use super::stats::{QpLine, Report};
use super::verbs::{Cq, Mr, Pd, Qp, RegKind, access_flags};
use super::wire::{Params, QpInfo};

#[cfg(feature = "gpu")]
use super::gpu::GpuDevice;

/// The GPU handle when `--gpu` is given (a unit placeholder in builds without `gpu`).
#[cfg(feature = "gpu")]
pub type Gpu = Rc<GpuDevice>;
/// The GPU handle when `--gpu` is given (a unit placeholder in builds without `gpu`).
#[cfg(not(feature = "gpu"))]
pub type Gpu = ();

/// Opens `--gpu N` before anything else, so that a missing driver or a wrong index is reported
/// first.
pub fn open_gpu(index: Option<u32>) -> Result<Option<Gpu>> {
    let Some(index) = index else {
        return Ok(None);
    };
    #[cfg(feature = "gpu")]
    {
        GpuDevice::open(index).map(Some)
    }
    #[cfg(not(feature = "gpu"))]
    {
        bail!(
            "--gpu {index}: this build has no GPU support: rebuild with \
             `cargo build --release --features gpu` (no CUDA toolkit needed)"
        )
    }
}

/// The device, its port, and the GID table.
pub struct Device {
    /// The open device.
    pub ctx: Rc<Context>,
    /// The port.
    pub port: PortInfo,
    /// The populated GID-table entries.
    pub gids: Vec<GidEntry>,
}

impl Device {
    /// Opens `--device`/`--ib-port` and reads the GID table.
    pub fn open(args: &GenerateArgs) -> Result<Device> {
        let (ctx, port) = device::open(args.device.as_deref(), args.ib_port)?;
        let gids = device::gid_table(&ctx, &port)?;
        Ok(Device { ctx, port, gids })
    }

    /// `--gid-index`, or the first RoCE v2 GID of `family`.
    pub fn pick_gid(&self, index: Option<u32>, family: Family) -> Result<GidEntry> {
        let e = match index {
            Some(i) => gid_table::by_index(&self.gids, i).map_err(|e| anyhow!(e))?,
            None => gid_table::select(&self.gids, family).ok_or_else(|| {
                let fam = match family {
                    Family::Ipv4 => "IPv4",
                    Family::Ipv6 => "IPv6",
                };
                anyhow!(
                    "{} port {} has no RoCE v2 GID for an {fam} peer: is an {fam} address \
                     configured on its netdev (`ip addr`, `ls /sys/class/infiniband/{}/ports/{}/gids`)? \
                     --gid-index chooses one explicitly",
                    self.ctx.name(),
                    self.port.port,
                    self.ctx.name(),
                    self.port.port
                )
            })?,
        };
        if e.index > u32::from(u8::MAX) {
            bail!("GID index {} does not fit the 8-bit sgid_index", e.index);
        }
        Ok(e.clone())
    }

    /// The port's active MTU, capped by `--mtu`.
    pub fn local_mtu(&self, cap: Option<Mtu>) -> Mtu {
        cap.map_or(self.port.active_mtu, |c| c.min(self.port.active_mtu))
    }
}

/// A random 24-bit PSN (perftest: `lrand48() & 0xffffff`), from the std hasher's random keys.
pub fn random_psn() -> u32 {
    let mut h = RandomState::new().build_hasher();
    h.write_u64(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64),
    );
    (h.finish() & 0xff_ffff) as u32
}

/// Allocates `len` bytes on the host or the GPU and registers them.
pub fn buffer(pd: &Rc<Pd>, gpu: Option<&Gpu>, len: usize) -> Result<Mr> {
    let memory = match gpu {
        None => Memory::Host(HostBuffer::new(len)?),
        #[cfg(feature = "gpu")]
        Some(g) => Memory::Gpu(g.alloc(len)?),
        #[cfg(not(feature = "gpu"))]
        Some(()) => bail!("this build has no GPU support"),
    };
    Mr::register(pd, memory)
}

/// Where the buffer is, for the output.
pub fn memory_text(mr: &Mr, gpu: Option<&Gpu>) -> String {
    #[cfg(feature = "gpu")]
    let idx = gpu.map_or(0, |g| g.index());
    #[cfg(not(feature = "gpu"))]
    let idx = {
        let _ = gpu;
        0
    };
    match mr.kind() {
        RegKind::Host => "host".to_string(),
        RegKind::DmaBuf => format!("gpu {idx} (dma-buf)"),
        RegKind::PeerMem => format!("gpu {idx} (nvidia-peermem)"),
    }
}

/// The verbs objects of one side.
pub struct Endpoint {
    /// Protection domain.
    pub pd: Rc<Pd>,
    /// The buffer.
    pub mr: Mr,
    /// The CQ all QPs share.
    pub cq: Rc<Cq>,
    /// The QPs, in INIT.
    pub qps: Vec<Qp>,
    /// Their starting PSNs.
    pub psns: Vec<u32>,
}

impl Endpoint {
    /// PD → MR (`buf_len` bytes) → CQ → `n` RC QPs → INIT.
    pub fn new(
        dev: &Device,
        gpu: Option<&Gpu>,
        buf_len: usize,
        n: usize,
        send_depth: u32,
        recv_depth: u32,
    ) -> Result<Endpoint> {
        let pd = Pd::new(&dev.ctx)?;
        let mr = buffer(&pd, gpu, buf_len)?;
        let per_qp = send_depth.saturating_add(recv_depth);
        let cq = Cq::new(&dev.ctx, per_qp.saturating_mul(n as u32).max(1))?;
        let mut qps = Vec::with_capacity(n);
        let mut psns = Vec::with_capacity(n);
        for _ in 0..n {
            let qp = Qp::new(&pd, &cq, send_depth, recv_depth)?;
            let (attr, mask) = qp_attr::to_init(dev.port.port, access_flags());
            qp.modify(attr, mask, "INIT")?;
            qps.push(qp);
            psns.push(random_psn());
        }
        Ok(Endpoint {
            pd,
            mr,
            cq,
            qps,
            psns,
        })
    }

    /// Our Params: one entry per QP, QP `i` advertising `len` bytes at offset `i · stride` of
    /// the buffer.
    pub fn params(&self, mtu: Mtu, flags: u8, gid: &GidEntry, stride: u64, len: u64) -> Params {
        let qps = self
            .qps
            .iter()
            .zip(&self.psns)
            .enumerate()
            .map(|(i, (qp, &psn))| QpInfo {
                qpn: qp.qpn(),
                psn,
                rkey: self.mr.rkey(),
                addr: self.mr.addr() + i as u64 * stride,
                len,
                gid: gid.gid,
            })
            .collect();
        Params { mtu, flags, qps }
    }

    /// INIT→RTR for every QP against the peer's entries, and RTR→RTS when `rts`.
    pub fn connect(
        &self,
        dev: &Device,
        gid: &GidEntry,
        remote: &Params,
        mtu: Mtu,
        tclass: u8,
        rts: bool,
    ) -> Result<()> {
        for ((qp, &psn), r) in self.qps.iter().zip(&self.psns).zip(&remote.qps) {
            let (attr, mask) = qp_attr::to_rtr(&RtrParams {
                mtu,
                dest_qpn: r.qpn,
                rq_psn: r.psn,
                dgid: r.gid,
                sgid_index: gid.index as u8,
                port: dev.port.port,
                traffic_class: tclass,
            });
            qp.modify(attr, mask, "RTR")?;
            if rts {
                let (attr, mask) = qp_attr::to_rts(psn);
                qp.modify(attr, mask, "RTS")?;
            }
        }
        Ok(())
    }
}

/// The negotiated MTU.
pub fn path_mtu(local: Mtu, remote: &Params) -> Mtu {
    mtu::negotiate(local, remote.mtu, None)
}

/// Per-QP lines from both sides' Params.
pub fn qp_lines(local: &Params, remote: &Params, mtu: Mtu) -> Vec<QpLine> {
    local
        .qps
        .iter()
        .zip(&remote.qps)
        .enumerate()
        .map(|(i, (l, r))| QpLine::new(i, l, r, mtu))
        .collect()
}

/// Prints the report as text (QP lines, then the table) or JSON.
pub fn print_lines(report: &Report, json: bool) {
    if json {
        return;
    }
    println!(
        "{} on {} port {}, GID index {}, {} memory",
        report.role, report.device, report.port, report.gid_index, report.memory
    );
    for l in &report.qps {
        println!("{}", l.text());
    }
}
