//! Synthetic captures made by the project itself: a frame builder ([`frame`]), capture-file
//! writers ([`capfile`]), switch mirror tunnels ([`mirror`]) and scenario writers ([`scenario`]) that play RDMA exchanges (RC WRITEs
//! with loss and go-back-N, READ timeouts, congestion with CE marks and CNPs, …) and record
//! their ground truth. The bundled samples (`cargo run --example make_samples`), test inputs
//! and fuzz seeds come from here; nothing is taken from third-party captures.

pub mod capfile;
pub mod frame;
pub mod mirror;
pub mod scenario;
