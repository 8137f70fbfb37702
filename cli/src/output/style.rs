//! Colors, only for a terminal and never when `NO_COLOR` is set (https://no-color.org).

use std::fmt::Display;

use owo_colors::OwoColorize;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    pub color: bool,
}

impl Style {
    /// Colors when `is_terminal` and `NO_COLOR` is unset or empty.
    pub fn detect(is_terminal: bool) -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Self {
            color: is_terminal && !no_color,
        }
    }

    #[cfg(test)]
    pub fn plain() -> Self {
        Self { color: false }
    }

    pub fn green(self, s: impl Display) -> String {
        if self.color {
            s.green().to_string()
        } else {
            s.to_string()
        }
    }

    pub fn red(self, s: impl Display) -> String {
        if self.color {
            s.red().to_string()
        } else {
            s.to_string()
        }
    }

    pub fn yellow(self, s: impl Display) -> String {
        if self.color {
            s.yellow().to_string()
        } else {
            s.to_string()
        }
    }

    pub fn dim(self, s: impl Display) -> String {
        if self.color {
            s.dimmed().to_string()
        } else {
            s.to_string()
        }
    }

    pub fn bold(self, s: impl Display) -> String {
        if self.color {
            s.bold().to_string()
        } else {
            s.to_string()
        }
    }
}
