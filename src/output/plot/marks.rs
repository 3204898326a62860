//! Marker kinds: colour-blind-safe colours (Okabe & Ito, "Color Universal Design", 2008; Paul
//! Tol's indigo and wine), and the SVG `class` each drawn marker gets so that it can be counted
//! and styled. plotters writes no classes, so every marker kind has a colour of its own and
//! [`tag_svg`] adds the class to the shapes of that colour. Legend samples use a colour one
//! step away in the blue channel, so they are not counted.

use plotters::element::{Drawable, PointCollection};
use plotters::style::{Color, RGBColor};
use plotters_backend::{BackendCoord, DrawingBackend, DrawingErrorKind};

/// A marker kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// A retransmitted packet (PSN behind the expected one).
    Retx,
    /// A packet revealing a PSN gap, drawn at the first missing PSN.
    Gap,
    /// A NAK (any code but RNR).
    Nak,
    /// An RNR NAK.
    Rnr,
    /// A CE-marked packet.
    Ce,
    /// A CNP arriving at the sender.
    Cnp,
    /// A completed message.
    MsgOk,
    /// A message that is incomplete or has a DMA length mismatch.
    MsgFailed,
    /// An NCCL step's wait: its clear-to-send to its first data packet (`--kind nccl`).
    NcclWait,
    /// An NCCL step's data: first to last data packet.
    NcclData,
    /// The data of the NCCL step that was its round's straggler.
    NcclStraggler,
}

impl Mark {
    /// Every kind.
    pub const ALL: [Mark; 11] = [
        Mark::Retx,
        Mark::Gap,
        Mark::Nak,
        Mark::Rnr,
        Mark::Ce,
        Mark::Cnp,
        Mark::MsgOk,
        Mark::MsgFailed,
        Mark::NcclWait,
        Mark::NcclData,
        Mark::NcclStraggler,
    ];

    /// The SVG class.
    pub fn class(self) -> &'static str {
        match self {
            Mark::Retx => "m-retx",
            Mark::Gap => "m-gap",
            Mark::Nak => "m-nak",
            Mark::Rnr => "m-rnr",
            Mark::Ce => "m-ce",
            Mark::Cnp => "m-cnp",
            Mark::MsgOk => "m-msg-ok",
            Mark::MsgFailed => "m-msg-failed",
            Mark::NcclWait => "m-nccl-wait",
            Mark::NcclData => "m-nccl-data",
            Mark::NcclStraggler => "m-nccl-straggler",
        }
    }

    /// Colour of drawn markers.
    pub fn color(self) -> RGBColor {
        match self {
            Mark::Retx => RGBColor(0xD5, 0x5E, 0x00),      // vermillion
            Mark::Gap => RGBColor(0x00, 0x00, 0x00),       // black
            Mark::Nak => RGBColor(0xCC, 0x79, 0xA7),       // reddish purple
            Mark::Rnr => RGBColor(0xE6, 0x9F, 0x00),       // orange
            Mark::Ce => RGBColor(0x56, 0xB4, 0xE9),        // sky blue
            Mark::Cnp => RGBColor(0x33, 0x22, 0x88),       // indigo
            Mark::MsgOk => RGBColor(0x00, 0x72, 0xB2),     // blue
            Mark::MsgFailed => RGBColor(0xD5, 0x5E, 0x01), // vermillion
            Mark::NcclWait => RGBColor(0xAA, 0xAA, 0xAA),  // grey
            Mark::NcclData => RGBColor(0x00, 0x72, 0xB6),  // blue
            Mark::NcclStraggler => RGBColor(0xD5, 0x5E, 0x04), // vermillion
        }
    }

    /// Colour of the legend sample (not tagged).
    pub fn legend_color(self) -> RGBColor {
        let RGBColor(r, g, b) = self.color();
        RGBColor(r, g, if b >= 0x80 { b - 2 } else { b + 2 })
    }
}

/// A pixel-sized marker of one kind at a data point: a triangle for a retransmission, a ring
/// for a gap, a square for a NAK, a diamond for an RNR NAK, a dot for CE, a downward triangle
/// for a CNP, a square otherwise.
#[derive(Clone, Debug)]
pub struct Marker<C> {
    at: C,
    kind: Mark,
    color: RGBColor,
}

/// A marker of kind `m` in colour `color` at `at`.
pub fn marker<C>(m: Mark, at: C, color: RGBColor) -> Marker<C> {
    Marker { at, kind: m, color }
}

impl<'a, C> PointCollection<'a, C> for &'a Marker<C> {
    type Point = &'a C;
    type IntoIter = std::iter::Once<&'a C>;
    fn point_iter(self) -> Self::IntoIter {
        std::iter::once(&self.at)
    }
}

impl<C, DB: DrawingBackend> Drawable<DB> for Marker<C> {
    fn draw<I: Iterator<Item = BackendCoord>>(
        &self,
        mut pos: I,
        backend: &mut DB,
        _: (u32, u32),
    ) -> Result<(), DrawingErrorKind<DB::ErrorType>> {
        let Some((x, y)) = pos.next() else {
            return Ok(());
        };
        let fill = self.color.filled();
        match self.kind {
            Mark::Retx => backend.fill_polygon([(x, y - 6), (x + 6, y + 4), (x - 6, y + 4)], &fill),
            Mark::Gap => backend.draw_circle((x, y), 6, &self.color.stroke_width(2), false),
            Mark::Rnr => {
                backend.fill_polygon([(x, y - 6), (x + 6, y), (x, y + 6), (x - 6, y)], &fill)
            }
            Mark::Ce => backend.draw_circle((x, y), 2, &fill, true),
            Mark::Cnp => backend.fill_polygon([(x - 6, y - 2), (x + 6, y - 2), (x, y + 8)], &fill),
            Mark::Nak
            | Mark::MsgOk
            | Mark::MsgFailed
            | Mark::NcclWait
            | Mark::NcclData
            | Mark::NcclStraggler => backend.draw_rect((x - 4, y - 4), (x + 4, y + 4), &fill, true),
        }
    }
}

/// Colour of first transmissions (blue, Okabe & Ito).
pub const SENT: RGBColor = RGBColor(0x00, 0x72, 0xB3);
/// Colour of the ACK line (bluish green, Okabe & Ito).
pub const ACK: RGBColor = RGBColor(0x00, 0x9E, 0x73);
/// Line colours for per-flow series (Okabe & Ito without yellow).
pub const SERIES: [RGBColor; 7] = [
    RGBColor(0x00, 0x72, 0xB2),
    RGBColor(0xD5, 0x5E, 0x00),
    RGBColor(0x00, 0x9E, 0x73),
    RGBColor(0xCC, 0x79, 0xA7),
    RGBColor(0xE6, 0x9F, 0x00),
    RGBColor(0x56, 0xB4, 0xE9),
    RGBColor(0x00, 0x00, 0x00),
];

/// `#RRGGBB` as plotters' SVG backend writes it.
fn hex(c: RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

/// Add `class="…"` to every `<circle>`, `<rect>` and `<polygon>` whose fill or stroke is a
/// marker colour. Series lines (`<polyline>`, `<path>`, `<line>`) are never tagged.
pub fn tag_svg(svg: &str) -> String {
    let colors: Vec<(String, &str)> = Mark::ALL
        .iter()
        .map(|m| (hex(m.color()), m.class()))
        .collect();
    let mut out = String::with_capacity(svg.len() + svg.len() / 8);
    let mut rest = svg;
    while let Some(k) = rest.find('<') {
        out.push_str(&rest[..k]);
        rest = &rest[k..];
        let end = rest.find('>').map_or(rest.len(), |e| e + 1);
        let tag = &rest[..end];
        let shape = ["<circle ", "<rect ", "<polygon "]
            .iter()
            .find(|p| tag.starts_with(**p));
        let class = shape.and_then(|_| {
            colors.iter().find_map(|(c, class)| {
                (tag.contains(&format!("fill=\"{c}\"")) || tag.contains(&format!("stroke=\"{c}\"")))
                    .then_some(*class)
            })
        });
        match (shape, class) {
            (Some(p), Some(class)) => {
                out.push_str(p);
                out.push_str("class=\"");
                out.push_str(class);
                out.push_str("\" ");
                out.push_str(&tag[p.len()..]);
            }
            _ => out.push_str(tag),
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_marker_shapes_only() {
        let svg = "<svg><circle cx=\"1\" fill=\"#D55E00\"/><polyline stroke=\"#D55E00\"/><rect fill=\"#CC79A5\"/></svg>";
        let t = tag_svg(svg);
        assert!(t.contains("<circle class=\"m-retx\" cx=\"1\""), "{t}");
        assert!(t.contains("<polyline stroke"), "{t}");
        assert!(
            t.contains("<rect fill=\"#CC79A5\""),
            "legend colour untagged: {t}"
        );
    }

    #[test]
    fn colours_are_distinct() {
        let mut c: Vec<String> = Mark::ALL.iter().map(|m| hex(m.color())).collect();
        c.extend(Mark::ALL.iter().map(|m| hex(m.legend_color())));
        c.push(hex(SENT));
        c.push(hex(ACK));
        let n = c.len();
        c.sort();
        c.dedup();
        assert_eq!(c.len(), n);
    }
}
