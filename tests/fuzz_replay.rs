//! Replays the fuzz inputs under `cargo test` (issue 7): every file of `fuzz/regressions/<target>/`
//! (committed: inputs that once crashed or were miscounted) and of the local, git-ignored
//! corpora `fuzz/corpus/<target>/` when present, through the same harness functions the
//! libFuzzer targets call (`tests/common/harness.rs`), plus every capture under `tests/hostile/`
//! and `samples/`, and the samples wrapped in ERF records, through the capture-file harness. The corpora are large, so by default each
//! is replayed for at most 5 s and 3000 files (regressions always in full); set
//! `ROCE_REPLAY_MAX=0` to replay every corpus file.

#[path = "common/frames.rs"]
mod frames;
#[path = "common/harness.rs"]
mod harness;

use std::path::{Path, PathBuf};

use arbitrary::{Arbitrary, Unstructured};

fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.file_name().is_none_or(|n| n != "README.md"))
        .collect();
    v.sort();
    v
}

fn limit() -> usize {
    match std::env::var("ROCE_REPLAY_MAX")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        Some(0) => usize::MAX,
        Some(n) => n,
        None => 3000,
    }
}

fn replay(target: &str, run: impl Fn(&[u8])) -> usize {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut n = 0;
    for base in ["fuzz/regressions", "fuzz/corpus"] {
        let cap = if base == "fuzz/regressions" {
            usize::MAX
        } else {
            limit()
        };
        for p in files(&root.join(base).join(target)).into_iter().take(cap) {
            // A fuzzer running meanwhile replaces corpus files; skip those that vanished.
            let data = match std::fs::read(&p) {
                Ok(d) => d,
                Err(e) if base == "fuzz/corpus" && e.kind() == std::io::ErrorKind::NotFound => {
                    continue;
                }
                Err(e) => panic!("{}: {e}", p.display()),
            };
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&data)));
            assert!(r.is_ok(), "{target}: {} panicked", p.display());
            n += 1;
        }
    }
    eprintln!("{target}: {n} inputs replayed");
    n
}

#[test]
fn replay_decode_frame() {
    let n = replay("decode_frame", harness::decode_frame_target);
    assert!(n > 0, "fuzz/regressions/decode_frame must not be empty");
}

#[test]
fn replay_analyze() {
    let n = replay("analyze", |data| {
        // libfuzzer-sys builds typed inputs exactly this way.
        if let Ok(input) = harness::Input::arbitrary_take_rest(Unstructured::new(data)) {
            harness::analyze_target(&input);
        }
    });
    assert!(n > 0, "fuzz/regressions/analyze must not be empty");
}

#[test]
fn replay_capture_file() {
    let n = replay("capture_file", harness::capture_file_target);
    assert!(n > 0, "fuzz/regressions/capture_file must not be empty");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for dir in ["tests/hostile", "samples"] {
        for p in files(&root.join(dir)) {
            if p.extension().is_some_and(|x| x == "pcap" || x == "pcapng") {
                harness::capture_file_target(&std::fs::read(&p).unwrap());
            }
        }
    }
}

/// The sample scenarios as ERF records (link type 197), whole and cut to 96 bytes, in pcap and
/// pcapng files, through the capture-file harness: an ERF record's bytes are its header and
/// then the frame, so its `caplen` counts fewer bytes than the record holds.
#[test]
fn replay_samples_as_erf() {
    use roce_inspect::synth::capfile::{LINKTYPE_ERF, pcap_bytes, pcapng_bytes};
    for s in roce_inspect::synth::scenario::samples() {
        for snap in [96, usize::MAX] {
            let recs: Vec<_> = s
                .records
                .iter()
                .map(|r| r.cut(snap).erf_ethernet())
                .collect();
            harness::capture_file_target(&pcap_bytes(LINKTYPE_ERF, 65535, &recs));
            harness::capture_file_target(&pcapng_bytes(LINKTYPE_ERF, 65535, &recs));
        }
    }
}
