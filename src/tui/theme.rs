//! Colours and markers, in one place.
//!
//! Every state that colour signals is also signalled by a character or a word, so the UI
//! reads the same with `--no-color`/`NO_COLOR` (then styles keep only bold, reverse and
//! underline).

use ratatui::style::{Color, Modifier, Style};

/// The marker in front of a registration or resource that needs attention.
pub const TROUBLE_MARK: &str = "!";
/// The marker in front of a marked row.
pub const MARK: &str = "*";
/// The marker beside a spec name that differs from the accepted one.
pub const DIFF_MARK: &str = "≠";

/// The styles the views use; `color: false` drops every colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    pub color: bool,
}

impl Theme {
    fn fg(&self, c: Color) -> Style {
        if self.color { Style::new().fg(c) } else { Style::new() }
    }

    pub fn header(&self) -> Style {
        if self.color {
            Style::new().fg(Color::Black).bg(Color::Cyan)
        } else {
            Style::new().add_modifier(Modifier::REVERSED)
        }
    }
    pub fn header_key(&self) -> Style {
        self.header().add_modifier(Modifier::BOLD)
    }
    pub fn title(&self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }
    pub fn column_header(&self) -> Style {
        self.fg(Color::White).add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
    }
    pub fn selected(&self) -> Style {
        if self.color {
            Style::new().bg(Color::Blue).fg(Color::White).add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::REVERSED)
        }
    }
    pub fn marked(&self) -> Style {
        self.fg(Color::Yellow).add_modifier(Modifier::BOLD)
    }
    pub fn trouble(&self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }
    pub fn warning(&self) -> Style {
        self.fg(Color::Yellow)
    }
    pub fn good(&self) -> Style {
        self.fg(Color::Green)
    }
    pub fn dim(&self) -> Style {
        if self.color { Style::new().fg(Color::DarkGray) } else { Style::new().add_modifier(Modifier::DIM) }
    }
    pub fn error(&self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }
    pub fn info(&self) -> Style {
        self.fg(Color::Green)
    }
    pub fn diff(&self) -> Style {
        if self.color {
            Style::new().fg(Color::Black).bg(Color::Yellow)
        } else {
            Style::new().add_modifier(Modifier::UNDERLINED | Modifier::BOLD)
        }
    }
    pub fn border(&self) -> Style {
        self.fg(Color::DarkGray)
    }
    pub fn border_focused(&self) -> Style {
        self.fg(Color::Cyan)
    }
    // YAML syntax.
    pub fn yaml_key(&self) -> Style {
        self.fg(Color::Cyan)
    }
    pub fn yaml_string(&self) -> Style {
        self.fg(Color::Green)
    }
    pub fn yaml_number(&self) -> Style {
        self.fg(Color::Magenta)
    }
    pub fn yaml_literal(&self) -> Style {
        self.fg(Color::Yellow)
    }
    pub fn yaml_punct(&self) -> Style {
        self.fg(Color::DarkGray)
    }
    pub fn yaml_comment(&self) -> Style {
        self.dim().add_modifier(Modifier::ITALIC)
    }

    /// The style of a condition's status: `True` good, `False` trouble, else a warning.
    pub fn condition_status(&self, status: &str, good_when_true: bool) -> Style {
        match (status, good_when_true) {
            ("True", true) | ("False", false) => self.good(),
            ("True", false) | ("False", true) => self.trouble(),
            _ => self.warning(),
        }
    }
}
