//! The axis and legend set-up every plot kind shares (issue 39): label and description type
//! sizes, grid colours, the time axis's description, whole-number y labels, and the legend box.

use std::ops::Range;

use anyhow::Result;
use plotters::chart::MeshStyle;
use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::prelude::*;

use super::{err, font::FAMILY};

/// Type size of tick labels, px.
pub const LABEL_PX: u32 = 13;
/// Type size of axis descriptions, px.
pub const DESC_PX: u32 = 14;
/// Type size of legend entries, px.
pub const LEGEND_PX: u32 = 13;
/// The light grid lines' colour.
const LIGHT_GRID: RGBColor = RGBColor(235, 235, 235);

/// The shared style of a chart's mesh: label and description fonts, light grid lines.
pub fn mesh<'m, 'a, 'b, X, Y, XT, YT, DB>(
    m: &'m mut MeshStyle<'a, 'b, X, Y, DB>,
) -> &'m mut MeshStyle<'a, 'b, X, Y, DB>
where
    X: Ranged<ValueType = XT> + ValueFormatter<XT>,
    Y: Ranged<ValueType = YT> + ValueFormatter<YT>,
    DB: DrawingBackend,
{
    m.label_style((FAMILY, LABEL_PX))
        .axis_desc_style((FAMILY, DESC_PX))
        .light_line_style(LIGHT_GRID)
}

/// The time axis's description for an axis in `unit` (µs, ms, s).
pub fn time_desc(unit: &str) -> String {
    format!("time since first frame ({unit})")
}

/// A time tick label: the value with no more decimals than it needs (`1052800`, `2.5`; plotters
/// printed `1052800.0`), to the ns at most.
pub fn time_label(v: &f64) -> String {
    let s = format!("{v:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// How many y labels to ask for on a whole-number axis spanning `range`: never more than one
/// per whole number, so that no two labels print the same number (a PSN axis of four PSNs
/// printed `86, 86, 85` with fractional ticks), and at most `most`.
pub fn whole_labels(range: &Range<f64>, most: usize) -> usize {
    let span = (range.end - range.start).max(0.0).floor() as usize;
    (span + 1).clamp(2, most)
}

/// A whole-number tick label: the number, or nothing for a fractional tick.
pub fn whole(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{:.0}", v.round())
    } else {
        String::new()
    }
}

/// Draw the chart's legend at `pos` in the shared style (a white, slightly see-through box).
///
/// # Errors
/// Drawing errors.
pub fn legend<'a, DB, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    pos: SeriesLabelPosition,
) -> Result<()>
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    CT: CoordTranslate,
{
    chart
        .configure_series_labels()
        .position(pos)
        .label_font((FAMILY, LEGEND_PX))
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(160, 160, 160))
        .draw()
        .map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_number_labels_never_repeat() {
        // Four PSNs: at most one label per whole number.
        assert_eq!(whole_labels(&(84.0..88.0), 10), 5);
        assert_eq!(whole_labels(&(0.0..1e6), 10), 10);
        assert_eq!(whole_labels(&(3.0..3.0), 10), 2);
        assert_eq!(whole(86.0), "86");
        assert_eq!(whole(85.5), "");
        let labels: Vec<String> = [85.0, 85.5, 86.0, 86.5].iter().map(|&v| whole(v)).collect();
        assert_eq!(labels, ["85", "", "86", ""]);
        assert_eq!(time_label(&1_052_800.0), "1052800");
        assert_eq!(time_label(&2.5), "2.5");
        assert_eq!(time_label(&(0.1 + 0.2)), "0.3");
        assert_eq!(time_label(&0.0), "0");
    }
}
