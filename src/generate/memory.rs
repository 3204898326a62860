//! The buffers RDMA WRITEs read from (client) or land in (server): page-aligned host memory, or
//! CUDA device memory with the `gpu` feature.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ptr::NonNull;

use anyhow::{Result, anyhow};

/// Page size the host buffer is aligned to (bytes).
pub const PAGE: usize = 4096;

/// Zeroed, page-aligned host memory.
#[derive(Debug)]
pub struct HostBuffer {
    ptr: NonNull<u8>,
    layout: Layout,
}

impl HostBuffer {
    /// Allocates `len` zeroed bytes (at least one page).
    pub fn new(len: usize) -> Result<HostBuffer> {
        let layout = Layout::from_size_align(len.max(PAGE), PAGE)
            .map_err(|e| anyhow!("buffer of {len} bytes: {e}"))?;
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { alloc_zeroed(layout) };
        let ptr =
            NonNull::new(raw).ok_or_else(|| anyhow!("cannot allocate a {len}-byte host buffer"))?;
        Ok(HostBuffer { ptr, layout })
    }

    /// Start address.
    pub fn addr(&self) -> u64 {
        self.ptr.as_ptr() as u64
    }

    /// Start pointer, for `ibv_reg_mr`.
    pub fn as_mut_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Allocated length in bytes.
    pub fn len(&self) -> usize {
        self.layout.size()
    }

    /// Never empty (at least one page); for clippy's `len_without_is_empty`.
    pub fn is_empty(&self) -> bool {
        false
    }
}

impl Drop for HostBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

/// Where a registered buffer lives.
#[derive(Debug)]
pub enum Memory {
    /// Host memory.
    Host(HostBuffer),
    /// Device memory of a CUDA GPU.
    #[cfg(feature = "gpu")]
    Gpu(super::gpu::GpuBuffer),
}

impl Memory {
    /// The address the NIC uses for the buffer (virtual address, or CUDA device pointer).
    pub fn addr(&self) -> u64 {
        match self {
            Memory::Host(h) => h.addr(),
            #[cfg(feature = "gpu")]
            Memory::Gpu(g) => g.addr(),
        }
    }

    /// Usable length in bytes.
    pub fn len(&self) -> usize {
        match self {
            Memory::Host(h) => h.len(),
            #[cfg(feature = "gpu")]
            Memory::Gpu(g) => g.len(),
        }
    }

    /// Never empty; for clippy's `len_without_is_empty`.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_zeroed() {
        let b = HostBuffer::new(10_000).unwrap();
        assert_eq!(b.addr() % PAGE as u64, 0);
        assert_eq!(b.len(), 10_000);
        // SAFETY: the buffer is `len` initialised (zeroed) bytes.
        let s = unsafe { std::slice::from_raw_parts(b.as_mut_ptr(), b.len()) };
        assert!(s.iter().all(|&x| x == 0));
        assert_eq!(HostBuffer::new(1).unwrap().len(), PAGE);
        let m = Memory::Host(b);
        assert_eq!(m.len(), 10_000);
        assert!(!m.is_empty());
    }
}
