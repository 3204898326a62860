//! Colour policy and palette (owo-colors). Colour is used only when the decision in
//! [`ColorChoice::enabled`] says so; every printer takes a [`Palette`].

use std::fmt::Display;
use std::io::IsTerminal;

use owo_colors::{OwoColorize, Style};

/// The `--color` setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum ColorChoice {
    /// Colour when stdout is a terminal and NO_COLOR is unset or empty.
    #[default]
    Auto,
    /// Always colour (overrides NO_COLOR).
    Always,
    /// Never colour.
    Never,
}

impl ColorChoice {
    /// Whether to colour stdout, following <https://no-color.org>: a non-empty NO_COLOR turns
    /// `auto` off.
    pub fn enabled(self) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
                !no_color && std::io::stdout().is_terminal()
            }
        }
    }
}

/// Styles for the parts of a line; all plain when colour is off.
#[derive(Clone, Copy, Debug)]
pub struct Palette {
    /// Addresses.
    pub addr: Style,
    /// Opcode names.
    pub op: Style,
    /// QP numbers.
    pub qp: Style,
    /// Problems: bad ICRC, malformed, truncated, NAKs, CE.
    pub bad: Style,
    /// Warnings: congestion marks, CNPs, RNR.
    pub warn: Style,
    /// De-emphasised text (non-RoCE lines, frame numbers).
    pub dim: Style,
}

impl Palette {
    /// The palette for `on`.
    pub fn new(on: bool) -> Palette {
        if !on {
            let p = Style::new();
            return Palette {
                addr: p,
                op: p,
                qp: p,
                bad: p,
                warn: p,
                dim: p,
            };
        }
        Palette {
            addr: Style::new().cyan(),
            op: Style::new().green(),
            qp: Style::new().yellow(),
            bad: Style::new().red().bold(),
            warn: Style::new().magenta(),
            dim: Style::new().dimmed(),
        }
    }
}

/// Apply `style` to `v` for display.
pub fn paint<T: Display>(v: T, style: Style) -> impl Display {
    StyledOwned(v, style)
}

struct StyledOwned<T>(T, Style);

impl<T: Display> Display for StyledOwned<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.style(self.1).fmt(f)
    }
}

/// A style rendered once to its ANSI start and end sequences (empty when colour is off), for
/// printers that build lines byte by byte.
#[derive(Clone, Debug, Default)]
pub struct Ansi {
    /// Escape sequence that starts the style.
    pub start: String,
    /// Escape sequence that ends it.
    pub end: String,
}

impl Ansi {
    /// Render `style`'s sequences.
    pub fn new(style: Style) -> Ansi {
        struct Pre(Style);
        impl Display for Pre {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0.fmt_prefix(f)
            }
        }
        struct Post(Style);
        impl Display for Post {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0.fmt_suffix(f)
            }
        }
        Ansi {
            start: Pre(style).to_string(),
            end: Post(style).to_string(),
        }
    }
}

/// [`Palette`] rendered to escape sequences.
#[derive(Clone, Debug, Default)]
pub struct AnsiPalette {
    /// Addresses.
    pub addr: Ansi,
    /// Opcode names.
    pub op: Ansi,
    /// QP numbers.
    pub qp: Ansi,
    /// Problems.
    pub bad: Ansi,
    /// Warnings.
    pub warn: Ansi,
    /// De-emphasised text.
    pub dim: Ansi,
}

impl AnsiPalette {
    /// Render every style of `p`.
    pub fn new(p: &Palette) -> AnsiPalette {
        AnsiPalette {
            addr: Ansi::new(p.addr),
            op: Ansi::new(p.op),
            qp: Ansi::new(p.qp),
            bad: Ansi::new(p.bad),
            warn: Ansi::new(p.warn),
            dim: Ansi::new(p.dim),
        }
    }
}
