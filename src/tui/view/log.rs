//! The log: every message of the session, newest first, each wrapped in full (the status
//! line shows one message at a time and only as much as fits).

use super::block;
use crate::tui::state::{Level, State};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

pub fn draw(frame: &mut Frame, area: Rect, state: &State, scroll: usize) {
    let t = &state.theme;
    let title = Line::from(vec![
        Span::styled(" messages ", t.title()),
        Span::styled(format!("[{}] newest first ", state.log.len()), t.dim()),
    ]);
    let b = block(title, true, state);
    let inner = b.inner(area);
    frame.render_widget(b, area);
    if state.log.is_empty() {
        frame.render_widget(Paragraph::new(Line::styled("no messages yet", t.dim())), inner);
        return;
    }
    let lines: Vec<Line> = state
        .log
        .iter()
        .rev()
        .skip(scroll)
        .map(|e| {
            let (mark, style) = match e.level {
                Level::Error => ("✗ ", t.error()),
                Level::Info => ("✓ ", t.info()),
            };
            let at = e.at.strftime("%H:%M:%S").to_string();
            Line::from(vec![Span::styled(format!("{at} "), t.dim()), Span::styled(format!("{mark}{}", e.text), style)])
        })
        .collect();
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
}
