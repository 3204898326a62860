//! The floor for reading a capture: a bare libpcap `pcap_next_ex` loop that touches every
//! frame and does nothing else (`cargo run --release --example pcap_loop -- FILE`). Prints the
//! frame and byte counts. `scripts/bench-vs-tshark.sh` times roce-inspect against it.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: pcap_loop FILE")?;
    let mut cap = pcap::Capture::from_file_with_precision(&path, pcap::Precision::Nano)?;
    let (mut frames, mut bytes, mut sum) = (0u64, 0u64, 0u64);
    while let Ok(p) = cap.next_packet() {
        frames += 1;
        bytes += u64::from(p.header.caplen);
        sum = sum.wrapping_add(u64::from(*p.data.last().unwrap_or(&0)));
    }
    println!("{frames} frames, {bytes} bytes (checksum {sum})");
    Ok(())
}
