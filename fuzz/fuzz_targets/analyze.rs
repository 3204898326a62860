//! Analysis pipeline: a structured sequence of RoCEv2 frames (chosen opcode, QP, PSN, AETH, ECN,
//! RETH DMA length, payload, time step) mixed with garbage, truncated and corrupted frames, fed
//! through the decoder into the analyzer, so the PSN, message and congestion state machines see
//! wrap-around, duplicates, READ responses without requests, CNPs for unknown QPs, absurd DMA
//! lengths and time going backwards. The report is then printed as JSON and as text tables,
//! and its frame counts are checked.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/common/frames.rs"]
mod frames;
#[path = "../../tests/common/harness.rs"]
mod harness;
use harness::Input;

fuzz_target!(|input: Input| harness::analyze_target(&input));
