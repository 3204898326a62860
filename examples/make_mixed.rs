//! Write a large mixed RoCEv2 capture for benchmarks: `cargo run --release --example
//! make_mixed -- OUT.pcap [FRAMES]` (default 500 000). It tiles the sample scenarios — WRITEs
//! over PMTU 1024 with a loss and go-back-N, READs with timeouts, an incast with CE marks and
//! CNPs — one after another, each copy on its own hosts (10.x.y.n) so that flows do not merge,
//! until FRAMES frames are written. Every ICRC is valid (the frames are rebuilt per copy).

use roce_inspect::synth::capfile::{LINKTYPE_ETHERNET, Record, write_pcap};
use roce_inspect::synth::scenario::{congestion, read_timeout, relocate_ipv4, write_bw};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let out = args.next().ok_or("usage: make_mixed OUT.pcap [FRAMES]")?;
    let want: usize = args.next().map_or(Ok(500_000), |s| s.parse())?;
    let tiles: Vec<Vec<Record>> = vec![
        write_bw::scenario().sample.records,
        read_timeout::scenario().sample.records,
        congestion::scenario().sample.records,
    ];
    let mut recs = Vec::with_capacity(want);
    let mut t0 = tiles[0][0].ts_ns;
    let mut copy = 0u32;
    'fill: loop {
        for tile in &tiles {
            let base = tile[0].ts_ns;
            for r in tile {
                if recs.len() == want {
                    break 'fill;
                }
                recs.push(Record::new(
                    t0 + (r.ts_ns - base),
                    relocate_ipv4(&r.data, copy as u16),
                ));
            }
            t0 += tile.last().map_or(0, |r| r.ts_ns - base) + 1_000;
            copy = (copy + 1) % 65_536;
        }
    }
    let f = std::io::BufWriter::new(std::fs::File::create(&out)?);
    write_pcap(f, LINKTYPE_ETHERNET, 65_535, &recs)?;
    println!("{out}: {} frames", recs.len());
    Ok(())
}
