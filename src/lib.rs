//! roce-inspect: a packet inspector for RDMA over Converged Ethernet (RoCEv2, RoCEv1) and
//! native InfiniBand.
//!
//! The pipeline, as README's "Architecture" draws it:
//!
//! - [`source`]: capture files (pcap, pcapng, ERF; mapped and walked in place), standard input
//!   and live interfaces, yielding records (frame number, time in ns, captured and wire length,
//!   bytes).
//! - [`decode`]: pure, no I/O and no allocation per packet: link layer, IP/UDP, the mirror
//!   encapsulations (GRE, ERSPAN, VXLAN), GRH/LRH, BTH and the extended transport headers, ICRC.
//! - [`filter`]: the display filter (`-Y`) over the decoded frame's fields and analysis marks.
//! - [`analyze`]: per-QP flows, PSN gaps, retransmissions, NAKs, messages, ECN/CNP and the
//!   report with its findings.
//! - [`nccl`] and [`correlate`]: NCCL's connections and steps, and one job's packets matched
//!   across the captures of several hosts, both over [`source`] and [`decode`].
//! - [`output`]: packet lines (text, `-V`, JSON, `-T fields`), the text, JSON and HTML
//!   reports, plots and the Parquet export.
//! - [`tui`]: the live dashboard (`top`), fed from [`decode`] and [`analyze`].
//! - [`pipeline`]: the frame's path from [`source`] through [`decode`], [`filter`] and
//!   [`analyze`] to [`output`]: the run, the sequential, parallel (`--threads`) and live loops.
//! - [`cli`]: clap's arguments and dispatch to [`pipeline`] and the subcommands.
//! - [`synth`]: frame builder, capture writers and scenario writers (samples and test inputs).
//! - [`generate`]: RDMA traffic over libibverbs, apart from the rest (its libibverbs calls
//!   behind the `verbs` feature).

pub mod analyze;
pub mod cli;
pub mod correlate;
pub mod decode;
pub mod filter;
pub mod generate;
pub mod nccl;
pub mod output;
pub mod pipeline;
pub mod source;
pub mod synth;
pub mod tui;
