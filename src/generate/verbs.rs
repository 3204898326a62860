//! RAII wrappers of the verbs objects `generate` uses: PD, MR, CQ and RC QP.
//!
//! Each object holds an `Rc` of its parents, so they are destroyed in reverse order of creation
//! (QP → CQ, MR → PD → device context) whatever order the caller drops them in. Raw pointers stay
//! private (spec pitfall P7); the calls follow rdma-core's man pages (`ibv_alloc_pd(3)`,
//! `ibv_reg_mr(3)`, `ibv_create_cq(3)`, `ibv_create_qp(3)`, `ibv_modify_qp(3)`,
//! `ibv_post_send(3)`, `ibv_poll_cq(3)`).

use std::io;
use std::ptr::{self, NonNull};
use std::rc::Rc;

use anyhow::{Result, anyhow, bail};
use rdma_sys::{
    ibv_access_flags, ibv_alloc_pd, ibv_cq, ibv_create_cq, ibv_create_qp, ibv_dealloc_pd,
    ibv_dereg_mr, ibv_destroy_cq, ibv_destroy_qp, ibv_modify_qp, ibv_mr, ibv_pd, ibv_poll_cq,
    ibv_post_recv, ibv_post_send, ibv_qp, ibv_qp_attr, ibv_qp_attr_mask, ibv_qp_init_attr,
    ibv_qp_type, ibv_recv_wr, ibv_reg_mr, ibv_send_flags, ibv_send_wr, ibv_sge, ibv_wc,
    ibv_wr_opcode, rdma_t,
};

use super::device::Context;
use super::memory::Memory;

/// A protection domain.
#[derive(Debug)]
pub struct Pd {
    pd: NonNull<ibv_pd>,
    ctx: Rc<Context>,
}

impl Pd {
    /// `ibv_alloc_pd`.
    pub fn new(ctx: &Rc<Context>) -> Result<Rc<Pd>> {
        // SAFETY: live context.
        let pd = unsafe { ibv_alloc_pd(ctx.raw()) };
        let pd = NonNull::new(pd).ok_or_else(|| {
            anyhow!(
                "ibv_alloc_pd on {}: {}",
                ctx.name(),
                io::Error::last_os_error()
            )
        })?;
        Ok(Rc::new(Pd {
            pd,
            ctx: Rc::clone(ctx),
        }))
    }

    /// The device this PD belongs to.
    pub fn context(&self) -> &Rc<Context> {
        &self.ctx
    }
}

impl Drop for Pd {
    fn drop(&mut self) {
        // SAFETY: allocated in `new`; MRs and QPs hold an Rc to this, so they are gone.
        unsafe {
            ibv_dealloc_pd(self.pd.as_ptr());
        }
    }
}

/// How a memory region was registered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegKind {
    /// `ibv_reg_mr` on host memory.
    Host,
    /// `ibv_reg_dmabuf_mr` on a CUDA dma-buf.
    DmaBuf,
    /// `ibv_reg_mr` on a CUDA device pointer (nvidia-peermem).
    PeerMem,
}

/// A registered memory region that owns its memory: deregistered, then freed, on drop.
#[derive(Debug)]
pub struct Mr {
    mr: NonNull<ibv_mr>,
    kind: RegKind,
    memory: Memory,
    _pd: Rc<Pd>,
}

/// The access the buffers need: local write (required with remote write) and remote write
/// (perftest's `setup_mr_flags` for WRITE tests).
pub fn access_flags() -> ibv_access_flags {
    ibv_access_flags::IBV_ACCESS_LOCAL_WRITE | ibv_access_flags::IBV_ACCESS_REMOTE_WRITE
}

impl Mr {
    /// Registers `memory` with [`access_flags`]: host memory with `ibv_reg_mr`, GPU memory
    /// through dma-buf first and nvidia-peermem second.
    pub fn register(pd: &Rc<Pd>, memory: Memory) -> Result<Mr> {
        let access = access_flags().0 as i32;
        let (mr, kind) = match &memory {
            Memory::Host(h) => {
                // SAFETY: live PD; the buffer stays allocated as long as the MR (owned below).
                let mr =
                    unsafe { ibv_reg_mr(pd.pd.as_ptr(), h.as_mut_ptr().cast(), h.len(), access) };
                let mr = NonNull::new(mr).ok_or_else(|| {
                    let e = io::Error::last_os_error();
                    anyhow!(
                        "ibv_reg_mr of {} bytes on {}: {e}{}",
                        h.len(),
                        pd.ctx.name(),
                        if e.raw_os_error() == Some(libc::ENOMEM) {
                            " (raise the locked-memory limit: ulimit -l unlimited)"
                        } else {
                            ""
                        }
                    )
                })?;
                (mr, RegKind::Host)
            }
            #[cfg(feature = "gpu")]
            Memory::Gpu(g) => register_gpu(pd, g, access)?,
        };
        Ok(Mr {
            mr,
            kind,
            memory,
            _pd: Rc::clone(pd),
        })
    }

    /// Local key, for the SGEs of our work requests.
    pub fn lkey(&self) -> u32 {
        // SAFETY: live MR.
        unsafe { self.mr.as_ref().lkey }
    }

    /// Remote key, sent to the peer.
    pub fn rkey(&self) -> u32 {
        // SAFETY: live MR.
        unsafe { self.mr.as_ref().rkey }
    }

    /// The address the NIC uses for the buffer (iova).
    pub fn addr(&self) -> u64 {
        self.memory.addr()
    }

    /// Buffer length in bytes.
    pub fn len(&self) -> usize {
        self.memory.len()
    }

    /// Never empty; for clippy's `len_without_is_empty`.
    pub fn is_empty(&self) -> bool {
        self.memory.is_empty()
    }

    /// How it was registered.
    pub fn kind(&self) -> RegKind {
        self.kind
    }
}

#[cfg(feature = "gpu")]
fn register_gpu(
    pd: &Rc<Pd>,
    g: &super::gpu::GpuBuffer,
    access: i32,
) -> Result<(NonNull<ibv_mr>, RegKind)> {
    use std::os::fd::AsRawFd;
    let dmabuf_err = match (g.dmabuf(), super::ffi::reg_dmabuf_mr()) {
        (Ok(d), Some(reg)) => {
            // SAFETY: live PD; offset/len lie inside the dma-buf; the fd stays open until
            // after the call (dropped at the end of this arm), as the man page allows.
            let mr = unsafe {
                reg(
                    pd.pd.as_ptr(),
                    d.offset,
                    g.len(),
                    g.addr(),
                    d.fd.as_raw_fd(),
                    access,
                )
            };
            match NonNull::new(mr) {
                Some(mr) => return Ok((mr, RegKind::DmaBuf)),
                None => {
                    let e = io::Error::last_os_error();
                    if e.raw_os_error() == Some(libc::EOPNOTSUPP) {
                        format!("ibv_reg_dmabuf_mr: {e} (this RDMA stack does not support dma-buf)")
                    } else {
                        format!("ibv_reg_dmabuf_mr: {e}")
                    }
                }
            }
        }
        (Err(e), _) => format!("{e:#}"),
        (Ok(_), None) => "this libibverbs has no ibv_reg_dmabuf_mr (rdma-core < 34)".to_string(),
    };
    // SAFETY: live PD; with nvidia-peermem the kernel pins the GPU pages behind the pointer.
    let mr = unsafe { ibv_reg_mr(pd.pd.as_ptr(), g.addr() as *mut _, g.len(), access) };
    match NonNull::new(mr) {
        Some(mr) => Ok((mr, RegKind::PeerMem)),
        None => bail!(
            "--gpu {}: {} cannot register GPU memory: dma-buf: {dmabuf_err}; nvidia-peermem \
             (ibv_reg_mr): {} (needs a NIC and kernel with dma-buf import, or nvidia-peermem; \
             Soft-RoCE supports neither)",
            g.gpu().index(),
            pd.ctx.name(),
            io::Error::last_os_error()
        ),
    }
}

impl Drop for Mr {
    fn drop(&mut self) {
        // SAFETY: registered in `register`; the memory is freed after this (field drop).
        unsafe {
            ibv_dereg_mr(self.mr.as_ptr());
        }
    }
}

/// A completion queue.
#[derive(Debug)]
pub struct Cq {
    cq: NonNull<ibv_cq>,
    _ctx: Rc<Context>,
}

impl Cq {
    /// `ibv_create_cq` with room for `depth` completions.
    pub fn new(ctx: &Rc<Context>, depth: u32) -> Result<Rc<Cq>> {
        let cqe = i32::try_from(depth).map_err(|_| anyhow!("CQ depth {depth} too large"))?;
        // SAFETY: live context; no channel, vector 0.
        let cq = unsafe { ibv_create_cq(ctx.raw(), cqe, ptr::null_mut(), ptr::null_mut(), 0) };
        let cq = NonNull::new(cq).ok_or_else(|| {
            anyhow!(
                "ibv_create_cq({depth}) on {}: {}",
                ctx.name(),
                io::Error::last_os_error()
            )
        })?;
        Ok(Rc::new(Cq {
            cq,
            _ctx: Rc::clone(ctx),
        }))
    }

    /// Polls up to `wcs.len()` completions; returns how many were written.
    pub fn poll(&self, wcs: &mut [Wc]) -> Result<usize> {
        let n = i32::try_from(wcs.len()).unwrap_or(i32::MAX);
        // SAFETY: live CQ; Wc is repr(transparent) over ibv_wc, the buffer holds `n` entries.
        let got = unsafe { ibv_poll_cq(self.cq.as_ptr(), n, wcs.as_mut_ptr().cast::<ibv_wc>()) };
        usize::try_from(got).map_err(|_| anyhow!("ibv_poll_cq failed ({got})"))
    }
}

impl Drop for Cq {
    fn drop(&mut self) {
        // SAFETY: created in `new`; QPs using it hold an Rc, so they are destroyed.
        unsafe {
            ibv_destroy_cq(self.cq.as_ptr());
        }
    }
}

/// One work completion.
#[repr(transparent)]
pub struct Wc(ibv_wc);

impl Wc {
    /// A zeroed completion, for poll buffers.
    pub fn zeroed() -> Wc {
        // SAFETY: ibv_wc is integers and an integer union; zero is valid (spec P6).
        Wc(unsafe { std::mem::zeroed() })
    }

    /// `wr_id` of the work request.
    pub fn wr_id(&self) -> u64 {
        self.0.wr_id
    }

    /// `enum ibv_wc_status` value.
    pub fn status(&self) -> u32 {
        self.0.status
    }

    /// `enum ibv_wc_opcode` value.
    pub fn opcode(&self) -> u32 {
        self.0.opcode
    }

    /// Vendor error code (meaningful only when the status is an error).
    pub fn vendor_err(&self) -> u32 {
        self.0.vendor_err
    }

    /// The local QPN the completion belongs to.
    pub fn qp_num(&self) -> u32 {
        self.0.qp_num
    }

    /// Immediate data in host order (valid for receive completions with IBV_WC_WITH_IMM).
    pub fn imm(&self) -> u32 {
        // SAFETY: both union members are u32.
        u32::from_be(unsafe { self.0.imm_data_invalidated_rkey_union.imm_data })
    }
}

/// An RC queue pair.
#[derive(Debug)]
pub struct Qp {
    qp: NonNull<ibv_qp>,
    _pd: Rc<Pd>,
    _cq: Rc<Cq>,
}

/// One RDMA WRITE to post.
#[derive(Clone, Copy, Debug)]
pub struct Write {
    /// Returned in the completion.
    pub wr_id: u64,
    /// Local source address (inside `lkey`'s MR).
    pub local_addr: u64,
    /// Bytes.
    pub len: u32,
    /// Local key.
    pub lkey: u32,
    /// Remote address (inside `rkey`'s MR).
    pub remote_addr: u64,
    /// Remote key.
    pub rkey: u32,
    /// `Some(value)`: RDMA WRITE WITH IMMEDIATE carrying `value`.
    pub imm: Option<u32>,
    /// Ask for a completion.
    pub signaled: bool,
}

impl Qp {
    /// `ibv_create_qp`: RC, one CQ for both queues, `max_send_wr` send and `max_recv_wr`
    /// receive WRs, one SGE each, no inline data, `sq_sig_all = 0`.
    pub fn new(pd: &Rc<Pd>, cq: &Rc<Cq>, max_send_wr: u32, max_recv_wr: u32) -> Result<Qp> {
        // SAFETY: plain C struct; zero is the documented default for unused fields.
        let mut init: ibv_qp_init_attr = unsafe { std::mem::zeroed() };
        init.send_cq = cq.cq.as_ptr();
        init.recv_cq = cq.cq.as_ptr();
        init.qp_type = ibv_qp_type::IBV_QPT_RC;
        init.sq_sig_all = 0;
        init.cap.max_send_wr = max_send_wr;
        init.cap.max_recv_wr = max_recv_wr.max(1);
        init.cap.max_send_sge = 1;
        init.cap.max_recv_sge = 1;
        init.cap.max_inline_data = 0;
        // SAFETY: live PD and CQ, initialised attributes.
        let qp = unsafe { ibv_create_qp(pd.pd.as_ptr(), &mut init) };
        let qp = NonNull::new(qp).ok_or_else(|| {
            anyhow!(
                "ibv_create_qp (RC, {max_send_wr} send WRs) on {}: {}",
                pd.ctx.name(),
                io::Error::last_os_error()
            )
        })?;
        Ok(Qp {
            qp,
            _pd: Rc::clone(pd),
            _cq: Rc::clone(cq),
        })
    }

    /// The QP number.
    pub fn qpn(&self) -> u32 {
        // SAFETY: live QP.
        unsafe { self.qp.as_ref().qp_num }
    }

    /// `ibv_modify_qp`; `what` names the transition in the error.
    pub fn modify(&self, mut attr: ibv_qp_attr, mask: ibv_qp_attr_mask, what: &str) -> Result<()> {
        // SAFETY: live QP, initialised attributes.
        let rc = unsafe { ibv_modify_qp(self.qp.as_ptr(), &mut attr, mask.0 as i32) };
        if rc != 0 {
            bail!(
                "ibv_modify_qp to {what} (QPN {:#x}): {}",
                self.qpn(),
                io::Error::from_raw_os_error(rc)
            );
        }
        Ok(())
    }

    /// Posts one RDMA WRITE (WITH IMMEDIATE).
    pub fn post_write(&self, w: &Write) -> Result<()> {
        let mut sge = ibv_sge {
            addr: w.local_addr,
            length: w.len,
            lkey: w.lkey,
        };
        // SAFETY: hand-written rdma-sys struct without Default; zero is valid (spec P6).
        let mut wr: ibv_send_wr = unsafe { std::mem::zeroed() };
        wr.wr_id = w.wr_id;
        wr.next = ptr::null_mut();
        wr.sg_list = &mut sge;
        wr.num_sge = 1;
        wr.opcode = match w.imm {
            Some(_) => ibv_wr_opcode::IBV_WR_RDMA_WRITE_WITH_IMM,
            None => ibv_wr_opcode::IBV_WR_RDMA_WRITE,
        };
        wr.send_flags = if w.signaled {
            ibv_send_flags::IBV_SEND_SIGNALED.0
        } else {
            0
        };
        if let Some(imm) = w.imm {
            wr.imm_data_invalidated_rkey_union.imm_data = imm.to_be();
        }
        wr.wr.rdma = rdma_t {
            remote_addr: w.remote_addr,
            rkey: w.rkey,
        };
        let mut bad: *mut ibv_send_wr = ptr::null_mut();
        // SAFETY: live QP; `wr` and `sge` outlive the call (the provider copies them).
        let rc = unsafe { ibv_post_send(self.qp.as_ptr(), &mut wr, &mut bad) };
        if rc != 0 {
            bail!(
                "ibv_post_send (QPN {:#x}): {}",
                self.qpn(),
                io::Error::from_raw_os_error(rc)
            );
        }
        Ok(())
    }

    /// Posts one receive WR without buffers: enough for WRITE WITH IMMEDIATE, whose payload
    /// goes to the RDMA address and only the immediate to the completion.
    pub fn post_recv(&self, wr_id: u64) -> Result<()> {
        // SAFETY: plain C struct.
        let mut wr: ibv_recv_wr = unsafe { std::mem::zeroed() };
        wr.wr_id = wr_id;
        wr.num_sge = 0;
        wr.sg_list = ptr::null_mut();
        let mut bad: *mut ibv_recv_wr = ptr::null_mut();
        // SAFETY: live QP; `wr` outlives the call.
        let rc = unsafe { ibv_post_recv(self.qp.as_ptr(), &mut wr, &mut bad) };
        if rc != 0 {
            bail!(
                "ibv_post_recv (QPN {:#x}): {}",
                self.qpn(),
                io::Error::from_raw_os_error(rc)
            );
        }
        Ok(())
    }
}

impl Drop for Qp {
    fn drop(&mut self) {
        // SAFETY: created in `new`; destroyed before the CQ and PD it holds.
        unsafe {
            ibv_destroy_qp(self.qp.as_ptr());
        }
    }
}
