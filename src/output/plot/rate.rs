//! `plot --kind rate`.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::select::Selection;
use crate::analyze::Report;

/// Draw.
///
/// # Errors
/// Drawing errors.
pub fn draw<DB: DrawingBackend>(
    _root: &DrawingArea<DB, Shift>,
    _report: &Report,
    _trace: &super::Trace,
    _sel: &Selection,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    Ok(())
}
