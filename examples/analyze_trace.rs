//! Run the analyzer alone over a capture and print the summary and the time it took:
//! `cargo run --release --example analyze_trace -- FILE.pcap [--json]`. A stand-in for
//! `read --summary` while measuring the analysis cost.

use roce_inspect::analyze::{AnalyzeConfig, Analyzer};
use roce_inspect::decode::{DecodeConfig, LinkType, decode_frame};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: analyze_trace FILE [--json]");
        std::process::exit(2);
    };
    let start = Instant::now();
    let mut cap = pcap::Capture::from_file_with_precision(path, pcap::Precision::Nano)
        .unwrap_or_else(|e| {
            eprintln!("{path}: {e}");
            std::process::exit(1)
        });
    let lt = LinkType::from_dlt(cap.get_datalink().0);
    let dcfg = DecodeConfig::default();
    let mut a = Analyzer::new(AnalyzeConfig::default());
    let mut n = 0u64;
    // DECODE_ONLY=1 measures the decoder alone, for comparison.
    let skip = std::env::var_os("DECODE_ONLY").is_some();
    while let Ok(p) = cap.next_packet() {
        n += 1;
        let ts = p.header.ts.tv_sec as u64 * 1_000_000_000 + p.header.ts.tv_usec as u64;
        let f = decode_frame(lt, p.data, p.header.len, &dcfg);
        if skip {
            std::hint::black_box(&f);
        } else {
            a.push(n, ts, &f);
        }
    }
    let r = a.finish();
    let el = start.elapsed();
    let mut out = std::io::stdout().lock();
    if args.iter().any(|a| a == "--json") {
        serde_json::to_writer_pretty(&mut out, &r).unwrap();
    } else {
        roce_inspect::output::summary::write_summary(&r, &mut out, false).unwrap();
    }
    eprintln!(
        "{n} frames in {:.3} s ({:.2} M frames/s)",
        el.as_secs_f64(),
        n as f64 / el.as_secs_f64() / 1e6
    );
}
