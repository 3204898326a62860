//! roce-inspect: a packet inspector for RDMA over Converged Ethernet.
//!
//! The pipeline: [`source`] (capture files, live interfaces) → [`decode`] (pure, no I/O) →
//! [`output`] (text, JSON) with the [`cli`] module wiring them together; [`generate`] (RDMA
//! traffic over libibverbs) stands apart. [`correlate`] reads several captures of one job
//! through [`source`] and [`decode`] and matches their packets across hosts.

pub mod analyze;
pub mod cli;
pub mod correlate;
pub mod decode;
pub mod filter;
pub mod generate;
pub mod nccl;
pub mod output;
pub mod source;
pub mod synth;
pub mod tui;
