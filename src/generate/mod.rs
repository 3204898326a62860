//! `roce-inspect generate`: known RoCE v2 traffic — RDMA WRITEs over RC QPs through libibverbs,
//! from host or GPU memory — to inspect with `capture` on the same or another host.
//!
//! It is perftest's `ib_write_bw` reduced to what an inspector user needs, with output that
//! says which QPNs, PSNs, GIDs and sizes were sent. Two roles: the server (`--listen`) and the
//! client (`--peer`), which exchange their QP parameters over TCP ([`oob`], [`wire`]).
//!
//! The parts that call libibverbs need the `verbs` cargo feature (rdma-sys); the address,
//! message, GID-table, MTU and statistics code is pure and always built. Without `verbs`,
//! [`run`] explains how to rebuild.

pub mod args;
pub mod gid;
pub mod gid_table;
pub mod mtu;
pub mod oob;
pub mod peer;
pub mod stats;
pub mod wc_status;
pub mod wire;

#[cfg(feature = "verbs")]
pub mod client;
#[cfg(feature = "verbs")]
pub mod device;
#[cfg(feature = "verbs")]
pub mod ffi;
#[cfg(feature = "gpu")]
pub mod gpu;
#[cfg(feature = "verbs")]
pub mod memory;
#[cfg(feature = "verbs")]
pub mod qp_attr;
#[cfg(feature = "verbs")]
pub mod server;
#[cfg(feature = "verbs")]
pub mod setup;
#[cfg(feature = "verbs")]
pub mod traffic;
#[cfg(feature = "verbs")]
pub mod verbs;

pub use args::GenerateArgs;

use anyhow::Result;

/// Runs `generate`: validates the arguments, then acts as server or client.
///
/// Errors are one line each (format them with `{:#}`); the caller exits with status 1.
pub fn run(args: &GenerateArgs) -> Result<()> {
    #[cfg(not(feature = "verbs"))]
    {
        let _ = args;
        anyhow::bail!(
            "this build of roce-inspect has no verbs support (built without the `verbs` \
             feature): rebuild with `cargo build --release --features verbs` \
             (needs libibverbs-dev, librdmacm-dev, libclang-dev and pkg-config; `make deps`)"
        )
    }
    #[cfg(feature = "verbs")]
    {
        let peer = match (&args.peer, args.listen) {
            (Some(p), false) => Some(peer::Peer::parse(p)?),
            (None, true) => None,
            _ => anyhow::bail!("give exactly one of --listen and --peer"),
        };
        let gpu = setup::open_gpu(args.gpu)?;
        match peer {
            Some(p) => client::run(args, p, gpu),
            None => server::run(args, gpu),
        }
    }
}
