//! Build the fuzz seed corpora from the project's own inputs — the samples, the hostile files
//! under `tests/hostile`, every sample scenario cut to snap lengths 64, 96 and 128 and wrapped
//! in ERF records — and,
//! when present, the third-party captures (`ROCE_INSPECT_CAPTURES`, default
//! `../shared/captures`): `cargo run --example fuzz_seeds [CAPTURES_DIR [CORPUS_DIR]]`.
//!
//! * `CORPUS_DIR/decode_frame/`: every distinct frame, prefixed with the selector byte the
//!   `decode_frame` target reads (link type index; bit 4 set when the snap length cut the frame),
//!   plus each Ethernet frame's IP packet again as raw IP (link type 101).
//! * `CORPUS_DIR/capture_file/`: every capture file whole.
//! * `CORPUS_DIR/analyze/`: left to libFuzzer (its input is structured, not captured bytes).
//!
//! File names are content hashes, so running it twice adds nothing. `fuzz/corpus` is
//! git-ignored; `make fuzz` runs this first.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::{fs, io};

/// Must match `LINKTYPES` in `fuzz/fuzz_targets/decode_frame.rs`.
const LINKTYPES: [u32; 11] = [0, 1, 101, 108, 113, 197, 228, 229, 247, 276, 147];

fn put(dir: &Path, bytes: &[u8]) -> io::Result<bool> {
    let mut h = DefaultHasher::new();
    bytes.hash(&mut h);
    let p = dir.join(format!("{:016x}", h.finish()));
    if p.exists() {
        return Ok(false);
    }
    fs::write(p, bytes)?;
    Ok(true)
}

fn captures(dir: &Path, out: &mut Vec<PathBuf>) -> io::Result<()> {
    let mut entries: Vec<_> = fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let p = e.path();
        if p.is_dir() {
            captures(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "pcap" || x == "pcapng") {
            out.push(p);
        }
    }
    Ok(())
}

/// Every sample scenario cut to snap lengths 64, 96 and 128, and as ERF records (link type
/// 197) in pcap and pcapng, whole and cut to 96 bytes of frame, written under `dir`.
fn snap_cuts(dir: &Path) -> io::Result<Vec<PathBuf>> {
    use roce_inspect::synth::capfile::{LINKTYPE_ERF, LINKTYPE_ETHERNET, pcap_bytes, pcapng_bytes};
    let mut out = Vec::new();
    let mut write = |name: String, bytes: Vec<u8>| {
        let p = dir.join(name);
        fs::write(&p, bytes)?;
        out.push(p);
        io::Result::Ok(())
    };
    for s in roce_inspect::synth::scenario::samples() {
        for snap in [64usize, 96, 128] {
            let recs: Vec<_> = s.records.iter().map(|r| r.cut(snap)).collect();
            let bytes = pcap_bytes(LINKTYPE_ETHERNET, snap as u32, &recs);
            write(format!("{}.snap{snap}.pcap", s.file), bytes)?;
        }
        for (snap, tag) in [(96, ".snap96"), (usize::MAX, "")] {
            let recs: Vec<_> = s
                .records
                .iter()
                .map(|r| r.cut(snap).erf_ethernet())
                .collect();
            let (pcap, ng) = (
                pcap_bytes(LINKTYPE_ERF, 65535, &recs),
                pcapng_bytes(LINKTYPE_ERF, 65535, &recs),
            );
            write(format!("{}.erf{tag}.pcap", s.file), pcap)?;
            write(format!("{}.erf{tag}.pcapng", s.file), ng)?;
        }
    }
    Ok(out)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut args = std::env::args().skip(1);
    let caps = args
        .next()
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("ROCE_INSPECT_CAPTURES").map(PathBuf::from))
        .unwrap_or_else(|| root.join("../shared/captures"));
    let corpus = args
        .next()
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("fuzz/corpus"));
    let (frames_dir, files_dir) = (corpus.join("decode_frame"), corpus.join("capture_file"));
    for d in [&frames_dir, &files_dir, &corpus.join("analyze")] {
        fs::create_dir_all(d)?;
    }
    let mut files = Vec::new();
    if caps.is_dir() {
        captures(&caps, &mut files)?;
    } else {
        eprintln!(
            "fuzz_seeds: {} not found; seeding from tests/ only",
            caps.display()
        );
    }
    captures(&root.join("tests/hostile"), &mut files)?;
    captures(&root.join("samples"), &mut files)?;
    let cuts = corpus.join("generated");
    fs::create_dir_all(&cuts)?;
    files.extend(snap_cuts(&cuts)?);
    let (mut nf, mut nc) = (0, 0);
    for path in &files {
        nc += usize::from(put(&files_dir, &fs::read(path)?)?);
        let Ok(mut cap) = pcap::Capture::from_file(path) else {
            continue;
        };
        let lt = roce_inspect::decode::LinkType::from_dlt(cap.get_datalink().0).0;
        let Some(sel) = LINKTYPES.iter().position(|&l| l == lt) else {
            continue;
        };
        while let Ok(p) = cap.next_packet() {
            let cut = p.header.caplen < p.header.len;
            let mut v = vec![sel as u8 | if cut { 0x10 } else { 0 }];
            v.extend_from_slice(p.data);
            nf += usize::from(put(&frames_dir, &v)?);
            if lt == 1 && p.data.len() > 14 && p.data[12..14] == [0x08, 0x00] {
                let mut raw = vec![2u8 | if cut { 0x10 } else { 0 }];
                raw.extend_from_slice(&p.data[14..]);
                nf += usize::from(put(&frames_dir, &raw)?);
            }
        }
    }
    println!(
        "fuzz_seeds: {} capture files → {nc} new in {}, {nf} new frames in {}",
        files.len(),
        files_dir.display(),
        frames_dir.display()
    );
    Ok(())
}
