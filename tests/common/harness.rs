//! The bodies of the fuzz targets, shared by `fuzz/fuzz_targets/*.rs` (libFuzzer) and
//! `tests/fuzz_replay.rs` (which replays the corpora and `fuzz/regressions/` under `cargo test`).
//! Each function must never panic on any input; the assertions inside are the oracles.
//! The including crate root must also include `frames.rs` as `mod frames`.
#![allow(dead_code)]

use std::io::Write;

use arbitrary::Arbitrary;
use roce_inspect::analyze::{AnalyzeConfig, Analyzer};
use roce_inspect::decode::erf::ErfHeader;
use roce_inspect::decode::{Aeth, DecodeConfig, Deth, LinkType, Reth, decode_frame};
use roce_inspect::output::json::JsonPrinter;
use roce_inspect::output::summary::{write_gaps, write_messages, write_summary};
use roce_inspect::output::text::TextPrinter;
use roce_inspect::output::{FrameCtx, Printer};
use roce_inspect::source::FileSource;

use crate::frames::{Ext, V2};

/// Supported link types, then one that is not (147, a user DLT).
pub const LINKTYPES: [u32; 11] = [0, 1, 101, 108, 113, 197, 228, 229, 247, 276, 147];

/// `decode_frame` target: the first byte picks the link type (low 4 bits), how the wire length
/// relates to the captured length (bits 4–5) and extra RoCE ports (bit 7); the rest is the
/// frame. Every printer (text, `-V`, colour, JSON) runs on the result into a `Vec`.
pub fn decode_frame_target(data: &[u8]) {
    let Some((&sel, frame)) = data.split_first() else {
        return;
    };
    let lt = LinkType(LINKTYPES[(sel & 0x0f) as usize % LINKTYPES.len()]);
    let caplen = frame.len() as u32;
    // Bits 4–5: wire length equal to, larger than (snap length cut), or smaller than (a hostile
    // record header) the captured length.
    let orig_len = match (sel >> 4) & 3 {
        0 | 3 => caplen,
        1 => caplen.saturating_add(1 + u32::from(sel >> 6) * 1000),
        _ => caplen / 2,
    };
    let cfg = if sel & 0x80 != 0 {
        DecodeConfig::with_ports(&[4792, 0])
    } else {
        DecodeConfig::default()
    };
    let f = decode_frame(lt, frame, orig_len, &cfg);
    let ctx = FrameCtx {
        number: 1,
        ts_ns: u64::MAX - u64::from(sel),
        rel_ns: i64::from(sel) << 40,
        caplen,
        len: orig_len,
    };
    let mut out = Vec::with_capacity(4096);
    {
        let mut p = TextPrinter::new(&mut out, sel & 1 != 0, false);
        p.frame(&ctx, &f).unwrap();
        p.flush().unwrap();
    }
    {
        let mut p = TextPrinter::new(&mut out, sel & 2 != 0, true);
        p.frame(&ctx, &f).unwrap();
        p.flush().unwrap();
    }
    let start = out.len();
    {
        let mut p = JsonPrinter::new(&mut out);
        p.frame(&ctx, &f).unwrap();
        p.flush().unwrap();
    }
    // The JSON line must be one valid JSON object.
    let line = &out[start..];
    assert_eq!(line.last(), Some(&b'\n'));
    let v: serde_json::Value = serde_json::from_slice(line).expect("printer wrote invalid JSON");
    assert!(v.is_object());
    assert!(
        std::str::from_utf8(&out).is_ok(),
        "printer wrote invalid UTF-8"
    );
}

/// Opcodes worth reaching often; any other byte is also possible.
const OPS: [u8; 40] = [
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
    0x10, 0x11, 0x12, 0x13, 0x14, 0x16, 0x17, 0x1c, 0x1d, 0x20, 0x24, 0x26, 0x28, 0x2a, 0x64, 0x65,
    0x80, 0x81, 0xa0, 0xa4, 0xac, 0x4c, 0xe0, 0xff,
];

#[derive(Arbitrary, Debug)]
pub enum Psn {
    Next,
    Same,
    Back(u8),
    Ahead(u16),
    NearWrap(u8),
    Raw(u32),
}

#[derive(Arbitrary, Debug)]
pub enum DmaLen {
    Small(u16),
    Max,
    Zero,
    Raw(u32),
}

#[derive(Arbitrary, Debug)]
pub struct Pkt {
    /// Host pair: low 2 bits source, next 2 destination (4 hosts).
    hosts: u8,
    /// QP: one of 8 small ones, QP1, or any.
    qp: u8,
    raw_qp: u32,
    psn: Psn,
    op: u8,
    raw_op: Option<u8>,
    flags: u8,
    tos: u8,
    dma: DmaLen,
    syndrome: u8,
    msn: u32,
    src_qp: u8,
    payload: u16,
    sport: u8,
}

#[derive(Arbitrary, Debug)]
pub enum Step {
    Pkt(Pkt),
    Truncated(Pkt, u16),
    Corrupt(Pkt, u16, u8),
    Garbage(u8, Vec<u8>),
}

#[derive(Arbitrary, Debug)]
pub struct Input {
    mtu: Option<u16>,
    max_flows: u8,
    keep_messages: bool,
    keep_gaps: u8,
    steps: Vec<(i16, Step)>,
}

fn build(p: &Pkt, cursors: &mut [u32; 10]) -> Vec<u8> {
    let ip = |i: u8| [10, 0, 0, 1 + (i & 3)];
    let slot = usize::from(p.qp % 10);
    let dest_qp = match slot {
        8 => 1,
        9 => p.raw_qp,
        s => 0x100 + s as u32,
    };
    let c = &mut cursors[slot];
    let psn = match p.psn {
        Psn::Next => c.wrapping_add(1),
        Psn::Same => *c,
        Psn::Back(n) => c.wrapping_sub(u32::from(n)),
        Psn::Ahead(n) => c.wrapping_add(u32::from(n)),
        Psn::NearWrap(n) => 0xff_ff00u32.wrapping_add(u32::from(n)),
        Psn::Raw(r) => r,
    } & 0xff_ffff;
    *c = psn;
    let dma_len = match p.dma {
        DmaLen::Small(n) => u32::from(n),
        DmaLen::Max => u32::MAX,
        DmaLen::Zero => 0,
        DmaLen::Raw(r) => r,
    };
    V2 {
        src: ip(p.hosts),
        dst: ip(p.hosts >> 2),
        sport: 0xc000 + u16::from(p.sport & 7),
        tos: p.tos,
        opcode: p.raw_op.unwrap_or(OPS[usize::from(p.op) % OPS.len()]),
        se: p.flags & 1 != 0,
        m: p.flags & 2 != 0,
        pad: (p.flags >> 2) & 3,
        fecn: p.flags & 16 != 0,
        becn: p.flags & 32 != 0,
        ack_req: p.flags & 64 != 0,
        dest_qp,
        psn,
        ext: Ext {
            reth: Reth {
                va: 0x7f00_0000_0000,
                rkey: 0x1234,
                dma_len,
            },
            aeth: Aeth {
                syndrome: p.syndrome,
                msn: p.msn,
            },
            deth: Deth {
                qkey: 0x8001_0000,
                src_qp: 0x100 + u32::from(p.src_qp & 7),
            },
            ..Ext::default()
        },
        payload: usize::from(p.payload % 4200),
        ..V2::default()
    }
    .build()
}

/// `analyze` target: build and decode the frame sequence, analyse it, print the report as JSON
/// and text, and check the frame counts.
pub fn analyze_target(input: &Input) {
    let cfg = AnalyzeConfig {
        mtu: input.mtu.map(u32::from),
        max_flows: if input.max_flows == 0 {
            16_384
        } else {
            usize::from(input.max_flows)
        },
        keep_messages: input.keep_messages,
        keep_gaps: usize::from(input.keep_gaps),
        ..AnalyzeConfig::default()
    };
    let dcfg = DecodeConfig::default();
    let mut a = Analyzer::new(cfg);
    let mut cursors = [0u32; 10];
    let mut ts: u64 = 1_700_000_000_000_000_000;
    let mut n = 0u64;
    for (dt, step) in input.steps.iter().take(4096) {
        ts = ts.wrapping_add_signed(i64::from(*dt) * 97);
        n += 1;
        let (lt, bytes, orig) = match step {
            Step::Pkt(p) => {
                let f = build(p, &mut cursors);
                let l = f.len() as u32;
                (LinkType::ETHERNET, f, l)
            }
            Step::Truncated(p, cut) => {
                let mut f = build(p, &mut cursors);
                let l = f.len() as u32;
                f.truncate(usize::from(*cut) % (f.len() + 1));
                (LinkType::ETHERNET, f, l)
            }
            Step::Corrupt(p, at, x) => {
                let mut f = build(p, &mut cursors);
                let k = usize::from(*at) % f.len();
                f[k] ^= *x;
                let l = f.len() as u32;
                (LinkType::ETHERNET, f, l)
            }
            Step::Garbage(sel, g) => {
                let lt = LinkType(LINKTYPES[usize::from(*sel) % LINKTYPES.len()]);
                (lt, g.clone(), g.len() as u32)
            }
        };
        let frame = decode_frame(lt, &bytes, orig, &dcfg);
        a.push(n, ts, &frame);
    }
    let r = a.finish();
    let f = &r.frames;
    assert_eq!(f.total, n);
    assert_eq!(f.total, f.roce + f.other);
    assert!(f.malformed <= f.roce && f.truncated <= f.roce && f.untracked <= f.roce);
    assert_eq!(r.icrc.good + r.icrc.bad + r.icrc.unchecked, f.roce);
    let mut out = Vec::new();
    serde_json::to_writer(&mut out, &r).unwrap();
    let _: serde_json::Value = serde_json::from_slice(&out).unwrap();
    write_summary(&r, &mut out, input.keep_gaps & 1 != 0).unwrap();
    write_gaps(&r, &mut out, false).unwrap();
    write_messages(&r, &mut out, true).unwrap();
}

/// What a reader made of a capture file: every record (number, ts, caplen, len, bytes) and the
/// error that ended it, if any.
type ReadLog = (Vec<(u64, u64, u32, u32, Vec<u8>)>, Option<String>);

fn read_all(src: &mut FileSource, bound: u64) -> ReadLog {
    let erf = src.linktype() == LinkType::ERF;
    let mut recs = Vec::new();
    let mut last = 0u64;
    loop {
        match src.next_record() {
            Ok(Some(rec)) => {
                assert!(
                    recs.len() as u64 <= bound,
                    "more records than the file can hold"
                );
                assert!(rec.number > last);
                last = rec.number;
                // An ERF record's bytes are its ERF header and then `caplen` bytes of the frame.
                match ErfHeader::parse(rec.data) {
                    Ok(h) if erf => {
                        assert_eq!(rec.data.len(), h.frame_at + rec.caplen as usize);
                        assert!(rec.caplen <= rec.len);
                    }
                    _ => assert!(rec.data.len() as u64 <= u64::from(rec.caplen)),
                }
                recs.push((
                    rec.number,
                    rec.ts_ns,
                    rec.caplen,
                    rec.len,
                    rec.data.to_vec(),
                ));
            }
            Ok(None) => break (recs, None),
            Err(e) => {
                let m = e.to_string();
                assert!(!m.contains('\n'), "multi-line error: {m}");
                break (recs, Some(m));
            }
        }
    }
}

/// `capture_file` target: the bytes as a capture file, read by `FileSource` to the end or the
/// first error — once in place (the mapped reader, with libpcap taking over at an anomaly) and
/// once through libpcap alone, which must agree record for record and on the error — then every
/// record decoded and analysed.
pub fn capture_file_target(data: &[u8]) {
    let mut tmp = tempfile::NamedTempFile::new().unwrap();
    tmp.write_all(data).unwrap();
    tmp.flush().unwrap();
    let path = tmp.path().to_str().unwrap().to_owned();
    let (Ok(mut src), Ok(mut lib)) = (FileSource::open(&path), FileSource::open(&path)) else {
        return;
    };
    lib.use_libpcap().unwrap();
    let lt = src.linktype();
    assert_eq!(lt, lib.linktype());
    // Every record holds at least 12 bytes (a pcapng block header), so no file yields more than this many.
    let bound = data.len() as u64 / 12 + 1;
    let mapped = read_all(&mut src, bound);
    let libpcap = read_all(&mut lib, bound);
    if mapped != libpcap {
        let first = mapped.0.iter().zip(&libpcap.0).position(|(a, b)| a != b);
        let show = |r: &(u64, u64, u32, u32, Vec<u8>)| (r.0, r.1, r.2, r.3, r.4.len());
        panic!(
            "the two readers differ: mapped {} records ({:?}), libpcap {} ({:?}); first differing record: {:?} vs {:?}",
            mapped.0.len(),
            mapped.1,
            libpcap.0.len(),
            libpcap.1,
            first.map(|k| show(&mapped.0[k])),
            first.map(|k| show(&libpcap.0[k])),
        );
    }
    assert!(matches!(src.next_record(), Ok(None)));
    let cfg = DecodeConfig::default();
    let mut a = Analyzer::new(AnalyzeConfig::default());
    for (number, ts, _, len, bytes) in &mapped.0 {
        let f = decode_frame(lt, bytes, *len, &cfg);
        a.push(*number, *ts, &f);
    }
    let r = a.finish();
    assert_eq!(r.frames.total, mapped.0.len() as u64);
}
