//! The cells of report tables: text, alignment and colour, and their printed width
//! (`output::fit` draws the tables, `output::stack` stacks them on narrow terminals).

use unicode_width::UnicodeWidthStr;

/// One cell of a report table: its text, alignment and colour (shown only in tables made
/// with colour on).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    pub(super) text: String,
    pub(super) right: bool,
    pub(super) fg: Option<Tint>,
}

/// The colours of report cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Tint {
    /// A problem.
    Red,
    /// A warning.
    Yellow,
}

impl Tint {
    /// comfy-table's colour.
    #[cfg(test)]
    pub(super) fn comfy(self) -> comfy_table::Color {
        use comfy_table::Color;
        match self {
            Tint::Red => Color::Red,
            Tint::Yellow => Color::Yellow,
        }
    }

    /// The ANSI sequence crossterm writes for it (an index of the 256-colour palette, where
    /// the bright colours are 9–15); [`ANSI_RESET`] ends it.
    pub(super) fn ansi(self) -> &'static str {
        match self {
            Tint::Red => "\x1b[38;5;9m",
            Tint::Yellow => "\x1b[38;5;11m",
        }
    }
}

/// What a cell can show: text (moved, not copied, when it is a `String`) or an integer
/// (written with `itoa`). Report tables make tens of cells per flow.
pub trait CellText {
    /// The cell's text.
    fn into_text(self) -> String;
}

impl CellText for String {
    fn into_text(self) -> String {
        self
    }
}

impl CellText for &str {
    fn into_text(self) -> String {
        self.to_string()
    }
}

macro_rules! integer_cell_text {
    ($($t:ty),*) => {$(
        impl CellText for $t {
            fn into_text(self) -> String {
                itoa::Buffer::new().format(self).to_string()
            }
        }
    )*};
}
integer_cell_text!(u8, u16, u32, u64, usize, i32, i64);

impl Cell {
    /// A left-aligned cell showing `s`.
    pub fn new(s: impl CellText) -> Cell {
        Cell {
            text: s.into_text(),
            right: false,
            fg: None,
        }
    }

    /// This cell in red: a problem.
    #[must_use]
    pub fn red(mut self) -> Cell {
        self.fg = Some(Tint::Red);
        self
    }

    /// This cell in yellow: a warning.
    #[must_use]
    pub fn yellow(mut self) -> Cell {
        self.fg = Some(Tint::Yellow);
        self
    }

    /// The same cell for comfy-table.
    #[cfg(test)]
    pub(super) fn comfy(&self) -> comfy_table::Cell {
        let mut c = comfy_table::Cell::new(&self.text);
        if self.right {
            c = c.set_alignment(comfy_table::CellAlignment::Right);
        }
        if let Some(fg) = self.fg {
            c = c.fg(fg.comfy());
        }
        c
    }

    /// Printed width in terminal columns (Unicode width, as comfy-table measures it).
    pub(super) fn width(&self) -> usize {
        text_width(&self.text)
    }

    /// The cell's text.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// `s` in this cell's colour when `color` (as is otherwise).
    pub(crate) fn paint(&self, s: &str, color: bool) -> String {
        match self.fg {
            Some(t) if color => format!("{}{s}{ANSI_RESET}", t.ansi()),
            _ => s.to_string(),
        }
    }
}

/// Printed width of `s` in terminal columns.
pub(super) fn text_width(s: &str) -> usize {
    if s.is_ascii() { s.len() } else { s.width() }
}

/// A right-aligned cell (numbers).
pub fn right(s: impl CellText) -> Cell {
    Cell {
        right: true,
        ..Cell::new(s)
    }
}

/// A count, right-aligned, red when `bad` and the value non-zero.
pub fn num(v: u64, bad: bool) -> Cell {
    let c = right(v);
    if bad && v > 0 { c.red() } else { c }
}

/// The ANSI sequence that ends a coloured cell (SGR 39: the default foreground colour).
pub(super) const ANSI_RESET: &str = "\x1b[39m";
