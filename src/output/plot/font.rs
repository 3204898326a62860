//! The font plots are laid out (SVG) and drawn (PNG) with: DejaVu Sans, embedded at build time
//! from the system's copy (see `build.rs`: Debian's `fonts-dejavu-core`, Bitstream Vera licence,
//! which allows embedding), registered with plotters' `ab_glyph` text renderer under the family
//! name `sans-serif`, so PNGs need no fontconfig or FreeType and SVG text names a generic family
//! every browser has.

use std::sync::OnceLock;

use anyhow::{Result, bail};
use plotters::style::FontStyle;

/// The TrueType file `build.rs` copied (empty when the build found none).
static FONT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/plot_font.ttf"));

/// The embedded TrueType font's bytes (empty when the build found none).
pub fn bytes() -> &'static [u8] {
    FONT
}

/// Family name used in plots.
pub const FAMILY: &str = "sans-serif";

/// Register the font once.
///
/// # Errors
/// This build carries no usable font.
pub fn register() -> Result<()> {
    static DONE: OnceLock<bool> = OnceLock::new();
    let ok = *DONE.get_or_init(|| {
        !FONT.is_empty()
            && [
                FontStyle::Normal,
                FontStyle::Bold,
                FontStyle::Italic,
                FontStyle::Oblique,
            ]
            .iter()
            .all(|s| plotters::style::register_font(FAMILY, *s, FONT).is_ok())
    });
    if !ok {
        bail!(
            "this build has no font for plots (rebuild with fonts-dejavu-core installed, or set ROCE_INSPECT_FONT=FILE.ttf when building)"
        );
    }
    Ok(())
}
