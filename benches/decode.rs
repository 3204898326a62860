//! Decoder and printer throughput on the frames of `samples/write_bw.pcap` (made by `make_samples`) (criterion).
//!
//! Run with `cargo bench --bench decode`; `scripts/bench-vs-tshark.sh` compares the whole
//! binary with tcpdump and tshark on a generated 1M-packet trace.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use roce_inspect::decode::{DecodeConfig, LinkType, decode_frame};
use roce_inspect::output::FrameCtx;
use roce_inspect::output::json::write_frame;
use roce_inspect::output::line::Line;
use roce_inspect::output::style::{AnsiPalette, Palette};
use roce_inspect::output::text::write_line;

fn load(name: &str) -> Vec<Vec<u8>> {
    let path = format!("{}/samples/{name}", env!("CARGO_MANIFEST_DIR"));
    let mut cap = pcap::Capture::from_file(&path).expect("sample capture");
    let mut frames = Vec::new();
    while let Ok(p) = cap.next_packet() {
        frames.push(p.data.to_vec());
    }
    frames
}

fn bench(c: &mut Criterion) {
    let cfg = DecodeConfig::default();
    let frames = load("write_bw.pcap");
    let bytes: usize = frames.iter().map(Vec::len).sum();
    let mut g = c.benchmark_group("write_bw");
    g.throughput(Throughput::Elements(frames.len() as u64));
    g.bench_function("decode", |b| {
        b.iter(|| {
            for f in &frames {
                black_box(decode_frame(
                    LinkType::ETHERNET,
                    black_box(f),
                    f.len() as u32,
                    &cfg,
                ));
            }
        })
    });
    let ctx = FrameCtx {
        number: 1,
        ts_ns: 1_700_000_000_000_000_000,
        rel_ns: 1_234_567,
        caplen: 0,
        len: 0,
    };
    let pal = AnsiPalette::new(&Palette::new(false));
    let mut line = Line::new();
    g.bench_function("decode+text", |b| {
        b.iter(|| {
            for f in &frames {
                line.buf.clear();
                let fr = decode_frame(LinkType::ETHERNET, f, f.len() as u32, &cfg);
                write_line(&mut line, &pal, &ctx, &fr);
            }
            black_box(line.buf.len())
        })
    });
    g.bench_function("decode+json", |b| {
        b.iter(|| {
            for f in &frames {
                line.buf.clear();
                let fr = decode_frame(LinkType::ETHERNET, f, f.len() as u32, &cfg);
                write_frame(&mut line, &ctx, &fr);
            }
            black_box(line.buf.len())
        })
    });
    g.finish();
    let _ = bytes;
}

criterion_group!(benches, bench);
criterion_main!(benches);
