//! `--gpu N`: a buffer in CUDA device memory that the NIC reads or writes directly (GPUDirect
//! RDMA), through the CUDA driver API loaded at run time by cudarc (`dynamic-loading`: no CUDA
//! toolkit at build time, no libcuda needed to start the binary).
//!
//! The sequence is rdma-core's `tests/test_cuda_dmabuf.py` and perftest's `cuda_memory.c`:
//! `cuInit` → `cuDeviceGetCount`/`cuDeviceGet` → primary context → `cuMemAlloc` (rounded up to
//! 64 KiB, as perftest) → `cuPointerSetAttribute(SYNC_MEMOPS)` (so that synchronous copies are
//! complete before the NIC accesses the range) → `cuMemGetHandleForAddressRange(DMA_BUF_FD)`
//! (driver ≥ 11.7) → `ibv_reg_dmabuf_mr(pd, offset, len, iova = device pointer, fd)`, falling
//! back to plain `ibv_reg_mr` on the device pointer, which works with nvidia-peermem.
//!
//! cudarc panics on the first call if libcuda cannot be loaded, so [`GpuDevice::open`] checks
//! `is_culib_present` first; symbols newer than the driver are only called after a version check.

use std::ffi::{CStr, c_int, c_void};
use std::os::fd::{FromRawFd, OwnedFd};
use std::rc::Rc;

use anyhow::{Result, bail};
use cudarc::driver::sys;

/// cuMemAlloc granularity used for the buffer (perftest rounds to 64 KiB).
pub const ALLOC_ALIGN: usize = 64 * 1024;

/// The first driver version with `cuMemGetHandleForAddressRange` (CUDA 11.7, as an int).
pub const DMABUF_DRIVER_VERSION: i32 = 11070;

/// The oldest driver this code calls at all (CUDA 11.0: the `_v2` primary-context calls).
pub const MIN_DRIVER_VERSION: i32 = 11000;

fn cu_error(r: sys::CUresult) -> String {
    let mut p: *const std::ffi::c_char = std::ptr::null();
    // SAFETY: cuGetErrorString writes a pointer to a static string or leaves it NULL.
    let ok = unsafe { sys::cuGetErrorString(r, &mut p) } == sys::CUresult::CUDA_SUCCESS;
    if ok && !p.is_null() {
        // SAFETY: non-NULL results are static NUL-terminated strings.
        let s = unsafe { CStr::from_ptr(p) }.to_string_lossy();
        format!("{r:?}: {s}")
    } else {
        format!("{r:?}")
    }
}

fn check(r: sys::CUresult, what: &str) -> Result<()> {
    if r == sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        bail!("{what} failed: {}", cu_error(r))
    }
}

/// An opened CUDA GPU with its primary context current on this thread.
#[derive(Debug)]
pub struct GpuDevice {
    index: u32,
    dev: sys::CUdevice,
    driver_version: i32,
    dmabuf_supported: bool,
}

impl GpuDevice {
    /// Loads libcuda, checks `index` against the GPUs present, and makes the GPU's primary
    /// context current.
    pub fn open(index: u32) -> Result<Rc<GpuDevice>> {
        // SAFETY: only tries to dlopen the candidate library names.
        if !unsafe { sys::is_culib_present() } {
            bail!(
                "--gpu {index}: the CUDA driver (libcuda.so.1) was not found: --gpu needs an \
                 NVIDIA driver; omit --gpu to use host memory"
            );
        }
        // SAFETY (all calls below): documented CUDA driver API calls with valid out-pointers;
        // libcuda is present, and every symbol used exists since CUDA 11.0 (checked first).
        unsafe {
            let mut version: c_int = 0;
            check(sys::cuDriverGetVersion(&mut version), "cuDriverGetVersion")?;
            if version < MIN_DRIVER_VERSION {
                bail!(
                    "--gpu {index}: the CUDA driver supports CUDA {}.{}; --gpu needs 11.0 or newer",
                    version / 1000,
                    (version % 1000) / 10
                );
            }
            check(sys::cuInit(0), "cuInit")?;
            let mut count: c_int = 0;
            check(sys::cuDeviceGetCount(&mut count), "cuDeviceGetCount")?;
            if i64::from(index) >= i64::from(count) {
                bail!(
                    "--gpu {index}: GPU index out of range: this host has {count} CUDA GPU{}",
                    if count == 1 { "" } else { "s" }
                );
            }
            let mut dev: sys::CUdevice = 0;
            check(sys::cuDeviceGet(&mut dev, index as c_int), "cuDeviceGet")?;
            let mut ctx: sys::CUcontext = std::ptr::null_mut();
            check(
                sys::cuDevicePrimaryCtxRetain(&mut ctx, dev),
                "cuDevicePrimaryCtxRetain",
            )?;
            let mut gpu = GpuDevice {
                index,
                dev,
                driver_version: version,
                dmabuf_supported: false,
            };
            check(sys::cuCtxSetCurrent(ctx), "cuCtxSetCurrent")?;
            let mut attr: c_int = 0;
            let dmabuf = version >= DMABUF_DRIVER_VERSION
                && sys::cuDeviceGetAttribute(
                    &mut attr,
                    sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED,
                    dev,
                ) == sys::CUresult::CUDA_SUCCESS
                && attr != 0;
            gpu.dmabuf_supported = dmabuf;
            Ok(Rc::new(gpu))
        }
    }

    /// The `--gpu` index.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// Whether the GPU and driver can export dma-buf handles.
    pub fn dmabuf_supported(&self) -> bool {
        self.dmabuf_supported
    }

    /// Allocates `len` bytes of device memory (rounded up to [`ALLOC_ALIGN`]) with
    /// SYNC_MEMOPS set.
    pub fn alloc(self: &Rc<Self>, len: usize) -> Result<GpuBuffer> {
        let size = len.max(1).div_ceil(ALLOC_ALIGN) * ALLOC_ALIGN;
        let mut dptr: sys::CUdeviceptr = 0;
        // SAFETY: valid out-pointer; the context is current.
        unsafe {
            check(sys::cuMemAlloc_v2(&mut dptr, size), "cuMemAlloc")?;
        }
        let buf = GpuBuffer {
            gpu: Rc::clone(self),
            dptr,
            len,
        };
        let one: c_int = 1;
        // SAFETY: sets a documented attribute on memory we own; `one` outlives the call.
        unsafe {
            check(
                sys::cuPointerSetAttribute(
                    (&one as *const c_int).cast::<c_void>(),
                    sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_SYNC_MEMOPS,
                    dptr,
                ),
                "cuPointerSetAttribute(SYNC_MEMOPS)",
            )?;
        }
        Ok(buf)
    }
}

impl Drop for GpuDevice {
    fn drop(&mut self) {
        // SAFETY: releases the primary context retained in `open`.
        unsafe {
            sys::cuDevicePrimaryCtxRelease_v2(self.dev);
        }
    }
}

/// Device memory from `cuMemAlloc`, freed on drop (before the context is released).
#[derive(Debug)]
pub struct GpuBuffer {
    gpu: Rc<GpuDevice>,
    dptr: sys::CUdeviceptr,
    len: usize,
}

/// A dma-buf file descriptor covering a buffer, and the buffer's offset inside it.
#[derive(Debug)]
pub struct DmaBuf {
    /// The dma-buf; close it after `ibv_reg_dmabuf_mr`.
    pub fd: OwnedFd,
    /// Byte offset of the buffer start in the dma-buf.
    pub offset: u64,
}

impl GpuBuffer {
    /// The CUDA device pointer, used as the MR's iova.
    pub fn addr(&self) -> u64 {
        self.dptr
    }

    /// Requested length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Never empty; for clippy's `len_without_is_empty`.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The GPU this buffer lives on.
    pub fn gpu(&self) -> &GpuDevice {
        &self.gpu
    }

    /// Exports the page-aligned range around the buffer as a dma-buf (perftest's arithmetic).
    pub fn dmabuf(&self) -> Result<DmaBuf> {
        if !self.gpu.dmabuf_supported {
            bail!(
                "GPU {} does not support dma-buf (driver {} or CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED \
                 = 0; needs driver >= 11.7 and the open kernel modules)",
                self.gpu.index,
                self.gpu.driver_version
            );
        }
        let (aligned, offset, size) = dmabuf_range(self.dptr, self.len as u64, host_page_size());
        let mut fd: c_int = -1;
        // SAFETY: the driver writes an int fd; the range lies inside our allocation (rounded
        // to 64 KiB, a multiple of the page size).
        unsafe {
            check(
                sys::cuMemGetHandleForAddressRange(
                    (&mut fd as *mut c_int).cast::<c_void>(),
                    aligned,
                    size as usize,
                    sys::CUmemRangeHandleType::CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
                    0,
                ),
                "cuMemGetHandleForAddressRange(DMA_BUF_FD)",
            )?;
        }
        if fd < 0 {
            bail!("cuMemGetHandleForAddressRange returned no file descriptor");
        }
        // SAFETY: the driver handed us a new descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(DmaBuf { fd, offset })
    }
}

impl Drop for GpuBuffer {
    fn drop(&mut self) {
        // SAFETY: frees the allocation made in `GpuDevice::alloc`.
        unsafe {
            sys::cuMemFree_v2(self.dptr);
        }
    }
}

fn host_page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(p).ok().filter(|&p| p > 0).unwrap_or(4096)
}

/// The dma-buf range for a buffer: (page-aligned start, offset of the buffer in it, size rounded
/// up to whole pages). perftest `cuda_memory.c`.
pub fn dmabuf_range(dptr: u64, len: u64, page: u64) -> (u64, u64, u64) {
    let aligned = dptr & !(page - 1);
    let offset = dptr - aligned;
    let size = (len + offset).div_ceil(page) * page;
    (aligned, offset, size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_arithmetic() {
        assert_eq!(
            dmabuf_range(0x7f00_0000_0000, 65536, 4096),
            (0x7f00_0000_0000, 0, 65536)
        );
        assert_eq!(
            dmabuf_range(0x7f00_0000_0100, 4096, 4096),
            (0x7f00_0000_0000, 0x100, 8192)
        );
        assert_eq!(dmabuf_range(0x1000, 1, 4096), (0x1000, 0, 4096));
    }

    /// Without libcuda (this CI machine) opening a GPU is a clean error, not a panic.
    #[test]
    fn open_without_driver_is_an_error() {
        // SAFETY: only tries to dlopen.
        if unsafe { sys::is_culib_present() } {
            return; // a GPU host: covered by the device check script instead
        }
        let e = GpuDevice::open(0).unwrap_err().to_string();
        assert!(
            e.contains("CUDA driver (libcuda.so.1) was not found"),
            "{e}"
        );
    }
}
