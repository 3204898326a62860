//! Frame decoder: the first byte picks the link type (every supported one plus an unsupported
//! one) and how the on-the-wire length relates to the captured length; the rest is the frame.
//! Every printer (text, `-V`, colour, JSON) then runs on the result into a `Vec`.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/common/frames.rs"]
mod frames;
#[path = "../../tests/common/harness.rs"]
mod harness;

fuzz_target!(|data: &[u8]| harness::decode_frame_target(data));
