//! Capture-file reader: arbitrary bytes written to a temporary file and read by `FileSource`
//! (libpcap) to the end or the first error, every record decoded and analysed. Seeds are whole
//! pcap and pcapng files.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/common/frames.rs"]
mod frames;
#[path = "../../tests/common/harness.rs"]
mod harness;

fuzz_target!(|data: &[u8]| harness::capture_file_target(data));
