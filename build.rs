//! Records the git commit for `roce-inspect --version`, and copies the font the PNG plots are
//! drawn with into OUT_DIR (embedded by `src/output/plot/font.rs`).
//!
//! The font is not part of this repository: it is DejaVu Sans from Debian's `fonts-dejavu-core`
//! package (Bitstream Vera licence with public-domain DejaVu changes, which allows embedding it
//! in software; see /usr/share/doc/fonts-dejavu-core/copyright), or any TrueType file named by
//! `ROCE_INSPECT_FONT`. Without one, the build still succeeds and `plot` reports the missing
//! font at run time.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Where Debian (`fonts-dejavu-core`) and Fedora (`dejavu-sans-fonts`) install DejaVu Sans.
const FONT_PATHS: [&str; 2] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
];

fn copy_font() {
    println!("cargo:rerun-if-env-changed=ROCE_INSPECT_FONT");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR")).join("plot_font.ttf");
    let chosen = std::env::var_os("ROCE_INSPECT_FONT")
        .map(PathBuf::from)
        .or_else(|| FONT_PATHS.iter().map(PathBuf::from).find(|p| p.is_file()));
    let bytes = chosen.as_deref().and_then(|p: &Path| {
        println!("cargo:rerun-if-changed={}", p.display());
        std::fs::read(p).ok()
    });
    if bytes.is_none() {
        println!(
            "cargo:warning=no font for PNG plots (install fonts-dejavu-core or set ROCE_INSPECT_FONT)"
        );
    }
    std::fs::write(&out, bytes.unwrap_or_default()).expect("writing plot_font.ttf");
}

fn main() {
    copy_font();
    let hash = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=ROCE_INSPECT_GIT_HASH={hash}");
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/refs/heads");
}
