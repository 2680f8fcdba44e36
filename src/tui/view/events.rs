//! The event stream screen: one line per watch event, newest first — type, time, object,
//! resourceVersion, the manager and operation of the change, and the first changed paths
//! by section (`spec: size 1→2 · status: …`); the title says what is watched, how many
//! events are kept, shown and dropped, and whether it is paused.

use super::{block, cells_line};
use crate::cluster::diff::{Section, short};
use crate::cluster::watch::ObjectEventType;
use crate::tui::events::{EVENT_LIMIT, EventRecord, EventsScreen};
use crate::tui::state::State;
use crate::tui::table::scroll_offset;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// Widths of TYPE, TIME, NAME, RV, MANAGER, OPERATION; CHANGES takes the rest.
const WIDTHS: [usize; 6] = [8, 8, 22, 7, 14, 13];
const HEADINGS: [&str; 7] = ["TYPE", "TIME", "NAME", "RV", "MANAGER", "OPERATION", "CHANGES"];

pub fn draw(frame: &mut Frame, area: Rect, state: &State, e: &EventsScreen) {
    let t = &state.theme;
    let shown = e.shown();
    let mut title = vec![
        Span::styled(format!(" events {} ", e.title()), t.title()),
        Span::styled(format!("[{}/{}] ", shown.len(), e.log.len()), t.dim()),
    ];
    if e.log.dropped() > 0 {
        title.push(Span::styled(format!("{} dropped (the last {EVENT_LIMIT} kept) ", e.log.dropped()), t.warning()));
    }
    if e.paused.is_some() {
        let waiting = e.log.newest().saturating_sub(e.paused.unwrap_or_default());
        title.push(Span::styled(format!("PAUSED ({waiting} new) "), t.warning()));
    }
    if let Some(f) = &e.filter {
        title.push(Span::styled(format!("</{}> ", f.text()), t.dim()));
    }
    let b = block(Line::from(title), true, state);
    let inner = b.inner(area);
    frame.render_widget(b, area);
    let height = usize::from(inner.height).saturating_sub(1);
    let heading = HEADINGS.iter().map(|h| (h.to_string(), t.column_header())).collect();
    let mut lines = vec![cells_line(heading, &WIDTHS)];
    if let Some(why) = &e.error {
        lines.push(Line::styled(format!("✗ {why}"), t.error()));
    } else if shown.is_empty() {
        lines.push(Line::styled("waiting for events…", t.dim()));
    }
    let cursor = e.cursor();
    let offset = scroll_offset(e.offset, cursor, height);
    for (i, ev) in shown.iter().enumerate().skip(offset).take(height.saturating_sub(lines.len() - 1)) {
        let style = if i == cursor { t.selected() } else { Style::new() };
        lines.push(row(ev, state).style(style));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

fn row<'a>(e: &EventRecord, state: &State) -> Line<'a> {
    let t = &state.theme;
    let type_style = match e.type_ {
        ObjectEventType::Added => t.good(),
        ObjectEventType::Modified => t.info(),
        ObjectEventType::Deleted => t.trouble(),
        ObjectEventType::Bookmark => t.dim(),
    };
    let (manager, op) = e.manager.clone().unwrap_or_default();
    let cells = vec![
        (e.type_.as_str().to_string(), type_style),
        (e.at.strftime("%H:%M:%S").to_string(), t.dim()),
        (e.key.as_ref().map(|k| k.display()).unwrap_or_default(), Style::new()),
        (e.resource_version.clone(), t.dim()),
        (manager, Style::new()),
        (op, Style::new()),
        (compact(e), Style::new()),
    ];
    cells_line(cells, &WIDTHS)
}

/// The changes in one cell: by section, paths without their section, `old→new`.
pub fn compact(e: &EventRecord) -> String {
    let mut parts = vec![];
    for section in [Section::Spec, Section::Status, Section::Metadata, Section::Other] {
        let changes: Vec<String> = e
            .changes
            .iter()
            .filter(|c| c.section() == section)
            .map(|c| {
                let path = c.path.split_once('.').map_or(c.path.as_str(), |(_, rest)| rest);
                let value = |v: &Option<serde_json::Value>| v.as_ref().map_or("∅".to_string(), |v| short(v, 16));
                format!("{path} {}→{}", value(&c.old), value(&c.new))
            })
            .collect();
        if !changes.is_empty() {
            parts.push(format!("{}: {}", section.word(), changes.join(", ")));
        }
    }
    parts.join(" · ")
}
