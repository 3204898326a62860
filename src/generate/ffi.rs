//! libibverbs entry points and constants that rdma-sys 0.3 does not bind, resolved at run time.
//!
//! `_ibv_query_gid_ex` (IBVERBS_1.11, rdma-core v32) is missed by rdma-sys's `ibv_.*`
//! allowlist; `ibv_reg_dmabuf_mr` (IBVERBS_1.12, rdma-core v34) is bound, but linking it would
//! make the whole binary refuse to start on an older libibverbs. Both are looked up with
//! `dlsym` in the already loaded libibverbs instead, and callers fall back when they are absent.

use std::ffi::{CStr, c_int, c_void};

use rdma_sys::{ibv_context, ibv_gid_entry, ibv_mr, ibv_pd};

pub use crate::source::sniffer::verbs::IBV_LINK_LAYER_ETHERNET;

/// `int _ibv_query_gid_ex(struct ibv_context *, uint32_t port_num, uint32_t gid_index,
/// struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size)`: returns 0 or an errno
/// value (ENODATA for an empty slot). rdma-core `libibverbs/verbs.h`.
pub type QueryGidEx =
    unsafe extern "C" fn(*mut ibv_context, u32, u32, *mut ibv_gid_entry, u32, usize) -> c_int;

/// `struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *, uint64_t offset, size_t length,
/// uint64_t iova, int fd, int access)`: NULL with errno on failure. rdma-core verbs.h.
pub type RegDmabufMr =
    unsafe extern "C" fn(*mut ibv_pd, u64, usize, u64, c_int, c_int) -> *mut ibv_mr;

fn lookup(name: &CStr) -> Option<*mut c_void> {
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name only reads the loaded objects'
    // symbol tables.
    let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    (!p.is_null()).then_some(p)
}

/// `_ibv_query_gid_ex`, if this libibverbs has it.
pub fn query_gid_ex() -> Option<QueryGidEx> {
    // SAFETY: the symbol has this C signature in every rdma-core that exports it.
    lookup(c"_ibv_query_gid_ex")
        .map(|p| unsafe { std::mem::transmute::<*mut c_void, QueryGidEx>(p) })
}

/// `ibv_reg_dmabuf_mr`, if this libibverbs has it.
pub fn reg_dmabuf_mr() -> Option<RegDmabufMr> {
    // SAFETY: as above.
    lookup(c"ibv_reg_dmabuf_mr")
        .map(|p| unsafe { std::mem::transmute::<*mut c_void, RegDmabufMr>(p) })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The binary links libibverbs (rdma-core 44 here), so both symbols resolve.
    #[test]
    fn symbols_resolve() {
        // Make sure libibverbs is loaded even if nothing else in this test binary used it yet.
        // SAFETY: ibv_get_device_list/ibv_free_device_list with a valid out-pointer.
        unsafe {
            let mut n = 0;
            let l = rdma_sys::ibv_get_device_list(&mut n);
            if !l.is_null() {
                rdma_sys::ibv_free_device_list(l);
            }
        }
        assert!(query_gid_ex().is_some());
        assert!(reg_dmabuf_mr().is_some());
        assert!(lookup(c"no_such_verbs_symbol").is_none());
    }
}
