//! Write the man pages and shell completions: `cargo run --example gen_assets [ROOT]`
//! (`make assets`). ROOT defaults to the crate directory.

use std::path::PathBuf;

fn main() -> std::io::Result<()> {
    let root = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    for (rel, bytes) in roce_inspect::cli::assets::render_all()? {
        let path = root.join(&rel);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(&path, bytes)?;
        println!("wrote {}", rel.display());
    }
    Ok(())
}
