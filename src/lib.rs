//! roce-inspect: a packet inspector for RDMA over Converged Ethernet.
//!
//! The pipeline: [`source`] (capture files, live interfaces) → [`decode`] (pure, no I/O) →
//! [`analyze`] (flows, PSN, messages, congestion) → [`output`] (text, table, JSON). The [`cli`]
//! module wires them together; `generate` (RDMA traffic over libibverbs) stands apart.

pub mod decode;
pub mod generate;
