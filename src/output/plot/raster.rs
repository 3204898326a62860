//! PNG plots: the plot's SVG document rasterised by `resvg` (issue 39), so a PNG is the same
//! picture as the SVG, text included. The only font `resvg` is given is the one embedded at
//! build time ([`font`](super::font), DejaVu Sans); it stands for the generic `sans-serif`
//! family the SVG names, so nothing depends on the fonts installed where the PNG is made.
//!
//! Sources: resvg/usvg 0.49 documentation (`usvg::Options::fontdb`, `fontdb::Database::
//! load_font_data`, `set_sans_serif_family`, `resvg::render`).

use std::sync::{Arc, OnceLock};

use anyhow::{Context, Result, anyhow, bail};
use resvg::tiny_skia::{Pixmap, Transform};
use resvg::usvg::{self, fontdb};

/// The largest PNG side drawn, pixels (at `--scale`): 16k keeps a picture under 1 GiB of RGBA.
pub const MAX_SIDE: u32 = 16_384;

/// The font database (the embedded font alone, as `sans-serif`) and the font's family name.
fn database() -> Result<(Arc<fontdb::Database>, String)> {
    static DB: OnceLock<Option<(Arc<fontdb::Database>, String)>> = OnceLock::new();
    let found = DB.get_or_init(|| {
        let mut db = fontdb::Database::new();
        db.load_font_data(super::font::bytes().to_vec());
        let family = db.faces().next()?.families.first()?.0.clone();
        db.set_sans_serif_family(family.clone());
        Some((Arc::new(db), family))
    });
    match found {
        Some((db, family)) => Ok((db.clone(), family.clone())),
        None => bail!("the embedded plot font could not be read"),
    }
}

/// Rasterise `svg` at `scale` PNG pixels per SVG pixel (white background), as PNG bytes.
///
/// # Errors
/// No usable embedded font, an SVG `usvg` cannot parse, a picture larger than [`MAX_SIDE`]
/// pixels a side, or a PNG encoder error.
pub fn png(svg: &str, scale: u32) -> Result<Vec<u8>> {
    super::font::register()?;
    let (fontdb, family) = database()?;
    let opt = usvg::Options {
        fontdb,
        font_family: family,
        ..usvg::Options::default()
    };
    let tree = usvg::Tree::from_str(svg, &opt).context("reading the plot's SVG")?;
    let size = tree.size();
    let scale = scale.max(1);
    let (w, h) = (
        (size.width() * scale as f32).ceil() as u32,
        (size.height() * scale as f32).ceil() as u32,
    );
    if w > MAX_SIDE || h > MAX_SIDE {
        bail!("a {w}x{h} PNG is too large (at most {MAX_SIDE} pixels a side)");
    }
    let mut pixmap = Pixmap::new(w, h).ok_or_else(|| anyhow!("empty picture size"))?;
    pixmap.fill(resvg::tiny_skia::Color::WHITE);
    let s = scale as f32;
    resvg::render(&tree, Transform::from_scale(s, s), &mut pixmap.as_mut());
    pixmap.encode_png().context("encoding the PNG")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decode `png` to (width, height, RGBA bytes).
    fn decode(png: &[u8]) -> (u32, u32, Vec<u8>) {
        let p = Pixmap::decode_png(png).expect("a PNG");
        (p.width(), p.height(), p.data().to_vec())
    }

    #[test]
    fn size_scale_and_colours() {
        let svg = r##"<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20" viewBox="0 0 40 20">
            <rect x="0" y="0" width="20" height="20" fill="#000000"/></svg>"##;
        let (w, h, px) = decode(&png(svg, 1).unwrap());
        assert_eq!((w, h), (40, 20));
        // Left half black, right half the white background.
        assert_eq!(&px[..4], &[0, 0, 0, 255]);
        assert_eq!(&px[px.len() - 4..], &[255, 255, 255, 255]);
        let (w, h, _) = decode(&png(svg, 2).unwrap());
        assert_eq!((w, h), (80, 40));
    }

    #[test]
    fn sans_serif_text_is_drawn_with_the_embedded_font() {
        if super::super::font::register().is_err() {
            eprintln!("skipped: this build has no plot font");
            return;
        }
        let text = |family: &str| {
            format!(
                r##"<svg xmlns="http://www.w3.org/2000/svg" width="200" height="40"><text x="5" y="30" {family} font-size="24">10.0.0.1</text></svg>"##
            )
        };
        let dark = |png: &[u8]| {
            let (_, _, px) = decode(png);
            px.chunks(4).filter(|p| p[0] < 128).count()
        };
        let a = png(&text(r#"font-family="sans-serif""#), 1).unwrap();
        // Some ink, and the same glyphs as the font named, or no family named at all.
        assert!(dark(&a) > 50, "no text drawn");
        assert_eq!(a, png(&text(r#"font-family="DejaVu Sans""#), 1).unwrap());
        assert_eq!(a, png(&text(""), 1).unwrap());
    }

    #[test]
    fn refuses_bad_svg_and_huge_pictures() {
        assert!(png("<svg", 1).is_err());
        let big = r#"<svg xmlns="http://www.w3.org/2000/svg" width="9000" height="10"/>"#;
        let e = png(big, 2).unwrap_err().to_string();
        assert!(e.contains("too large"), "{e}");
    }
}
