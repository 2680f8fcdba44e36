//! The owner tree screen: one row per object, indented by depth, `↑` for an owner (of the
//! row it hangs under) and `↓` for a dependent, each with its kind, `ns/name` and status
//! summary; a missing owner and a cycle say so in place of a status.

use super::block;
use crate::cluster::owners::{Link, OwnerRef, Row, Target};
use crate::cluster::owners_fetch::Listed;
use crate::tui::owner_tree::{About, Loading, OwnerTreeScreen};
use crate::tui::state::State;
use crate::tui::table::scroll_offset;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

pub fn draw(frame: &mut Frame, area: Rect, state: &State, o: &OwnerTreeScreen) {
    let t = &state.theme;
    let mut title = vec![Span::styled(format!(" owners {} ", o.title()), t.title())];
    let mut notes = vec![];
    if let Loading::Ready { listed, rows, unlinked } = &o.loading {
        title.push(Span::styled(
            format!(
                "[{}/{}] {} objects of {} kinds listed ",
                (o.cursor + 1).min(rows.len()),
                rows.len(),
                listed.graph.len(),
                listed.kinds.len()
            ),
            t.dim(),
        ));
        if matches!(o.about, About::Kind(_)) {
            notes.push(Line::styled(format!("{unlinked} more with neither owners nor dependents"), t.dim()));
        }
        for (kind, why) in &listed.skipped {
            notes.push(Line::styled(format!("not listed: {kind}: {why}"), t.warning()));
        }
    }
    let b = block(Line::from(title), true, state);
    let inner = b.inner(area);
    frame.render_widget(b, area);
    let mut lines = match &o.loading {
        Loading::Pending => vec![Line::styled("listing every kind…", t.dim())],
        Loading::Failed(why) => vec![Line::styled(format!("✗ {why}"), t.error())],
        Loading::Ready { rows, .. } if rows.is_empty() => {
            vec![Line::styled("no object of this kind has owners or dependents", t.dim())]
        }
        Loading::Ready { .. } => vec![],
    };
    let height = usize::from(inner.height).saturating_sub(notes.len());
    if let Loading::Ready { listed, rows, .. } = &o.loading {
        let offset = scroll_offset(o.offset, o.cursor, height);
        for (i, r) in rows.iter().enumerate().skip(offset).take(height) {
            let line = row(r, listed, state);
            lines.push(if i == o.cursor { line.style(t.selected()) } else { line });
        }
    }
    lines.extend(notes);
    frame.render_widget(Paragraph::new(lines), inner);
}

fn row<'a>(r: &Row, listed: &Listed, state: &State) -> Line<'a> {
    let t = &state.theme;
    let indent = "  ".repeat(r.depth);
    let arrow = match r.link {
        Link::Root => "●",
        Link::Owner => "↑",
        Link::Dependent => "↓",
    };
    let controller = if r.controller { " (controller)" } else { "" };
    let (what, status, style) = match &r.target {
        Target::Object(uid) => match listed.graph.node(uid) {
            Some(n) => (format!("{} {}", n.kind, n.display()), n.summary.clone(), status_style(&n.summary, state)),
            None => (uid.clone(), String::new(), Style::new()),
        },
        Target::Missing(o) => (format!("{} {}", o.kind, o.name), missing(o, listed), t.error()),
        Target::Cycle(uid) => {
            let name = listed.graph.node(uid).map(|n| format!("{} {}", n.kind, n.display())).unwrap_or_default();
            (name, "cycle: already on this path".into(), t.warning())
        }
    };
    let head = if r.link == Link::Root { t.title() } else { Style::new() };
    Line::from(vec![
        Span::styled(format!("{indent}{arrow} "), t.dim()),
        Span::styled(what, head),
        Span::styled(controller.to_string(), t.dim()),
        Span::raw("  "),
        Span::styled(status, style),
    ])
}

/// Why an owner is not in the graph: gone, or of a kind that was not listed (not served,
/// or forbidden on a live cluster), in which case it may well exist.
fn missing(o: &OwnerRef, listed: &Listed) -> String {
    let group = o.api_version.split_once('/').map(|(g, _)| g).unwrap_or_default();
    // No kinds at all: lists from elsewhere (tests) with nothing to tell by.
    let listed_kind = listed.kinds.is_empty() || listed.kinds.iter().any(|k| k.group == group && k.kind == o.kind);
    if listed_kind {
        format!("owner missing (uid {})", o.uid)
    } else {
        format!("owner not listed: {} is not served or not readable", o.kind)
    }
}

/// A status that names a `False` condition reads as trouble.
fn status_style(summary: &str, state: &State) -> Style {
    let t = &state.theme;
    if summary.contains("=False") || summary.contains("synced no") {
        t.warning()
    } else if summary.contains("=True") {
        t.good()
    } else {
        t.dim()
    }
}
