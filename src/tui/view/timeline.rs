//! The conditions timeline pane of the resource screen (`t`): one row per transition seen,
//! newest first — lastTransitionTime, type, the status change, reason and message.

use super::{block, cells_line};
use crate::cluster::transitions::{TIMELINE_LIMIT, Transition};
use crate::tui::state::{ResourceScreen, State};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// Widths of TIME, TYPE, CHANGE, REASON; MESSAGE takes the rest.
const WIDTHS: [usize; 4] = [20, 16, 14, 18];
const HEADINGS: [&str; 5] = ["LAST TRANSITION", "TYPE", "CHANGE", "REASON", "MESSAGE"];

pub fn draw(frame: &mut Frame, area: Rect, state: &State, r: &ResourceScreen) {
    let t = &state.theme;
    let tl = &r.timeline;
    let mut title = vec![
        Span::styled(" conditions timeline ", t.title()),
        Span::styled(format!("[{}] (t: spec and status) ", tl.len()), t.dim()),
    ];
    if tl.dropped > 0 {
        title.push(Span::styled(format!("{} dropped (the last {TIMELINE_LIMIT} kept) ", tl.dropped), t.warning()));
    }
    let b = block(Line::from(title), true, state);
    let inner = b.inner(area);
    frame.render_widget(b, area);
    let heading = HEADINGS.iter().map(|h| (h.to_string(), t.column_header())).collect();
    let mut lines = vec![cells_line(heading, &WIDTHS)];
    if tl.is_empty() {
        lines.push(Line::styled("no conditions seen yet: transitions show here as the object changes", t.dim()));
    }
    let scroll = r.timeline_shown.unwrap_or_default();
    let height = usize::from(inner.height).saturating_sub(1);
    lines.extend(tl.newest_first().skip(scroll).take(height).map(|x| row(x, state)));
    frame.render_widget(Paragraph::new(lines), inner);
}

fn row<'a>(x: &Transition, state: &State) -> Line<'a> {
    let t = &state.theme;
    let style = match x.to.as_deref() {
        Some("True") => t.good(),
        Some("False") => t.warning(),
        _ => t.dim(),
    };
    let cells = vec![
        (x.last_transition_time.clone(), t.dim()),
        (x.type_.clone(), Style::new()),
        (x.change(), style),
        (x.reason.clone(), Style::new()),
        (x.message.clone(), Style::new()),
    ];
    cells_line(cells, &WIDTHS)
}
