//! Write one NCCL job's captures, one per host: `cargo run --example make_nccl [-- DIR
//! [STEPS]]` (default `.` and 16 steps), for trying `roce-inspect nccl DIR/nccl_node*.pcap`.
//!
//! The scenario (`roce_inspect::synth::scenario::nccl`): 4 hosts in rings on 2 channels, 2 QPs
//! per connection, 16 steps of 64 KiB; host 10.0.0.4 is a slow receiver in rounds 3 and 11, and
//! the link 10.0.0.2 → 10.0.0.3 (channel 0) loses a packet in rounds 6 and 13.

use std::path::PathBuf;

use roce_inspect::synth::capfile::{LINKTYPE_ETHERNET, pcap_bytes};
use roce_inspect::synth::scenario::SNAPLEN;
use roce_inspect::synth::scenario::nccl::{Algo, Mode, Params, scenario};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| ".".into()));
    let steps = match std::env::args().nth(2) {
        Some(s) => s.parse()?,
        None => 16,
    };
    std::fs::create_dir_all(&dir)?;
    let s = scenario(&Params {
        hosts: 4,
        algo: Algo::Ring,
        channels: 2,
        qps: 2,
        mode: Mode::RoundRobin,
        imm_big_endian: false,
        size64: false,
        steps,
        step_bytes: 64 << 10,
        slow: Some((3, vec![3, 11])),
        lossy: Some((1, 2, 0, vec![6, 13])),
    });
    for (i, recs) in s.captures.iter().enumerate() {
        let path = dir.join(format!("nccl_node{i}.pcap"));
        std::fs::write(&path, pcap_bytes(LINKTYPE_ETHERNET, SNAPLEN, recs))?;
        println!("{} ({} frames)", path.display(), recs.len());
    }
    Ok(())
}
