//! Write the bundled samples: `cargo run --example make_samples [-- DIR]` (default `samples/`).
//!
//! Every sample comes from a scenario writer of `roce_inspect::synth::scenario`, so rerunning
//! this gives identical bytes (tests/samples.rs checks that against the committed files).

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/samples")));
    std::fs::create_dir_all(&dir)?;
    for s in roce_inspect::synth::scenario::samples() {
        let bytes = s.bytes();
        let path = dir.join(s.file);
        std::fs::write(&path, &bytes)?;
        println!(
            "{} ({} frames, {} bytes)",
            path.display(),
            s.records.len(),
            bytes.len()
        );
    }
    Ok(())
}
