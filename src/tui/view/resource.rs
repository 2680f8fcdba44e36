//! One custom resource (its bookkeeping, conditions, and spec beside status as coloured
//! YAML) and the full-screen text views (YAML, describe).

use super::block;
use crate::tui::model::{age, object_conditions};
use crate::tui::state::{Pane, ResourceScreen, State, TextScreen};
use crate::tui::yaml;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use serde_json::Value;

pub fn draw(frame: &mut Frame, area: Rect, state: &State, r: &ResourceScreen) {
    let t = &state.theme;
    let Some(obj) = &r.object else {
        let b = block(Line::styled(format!(" {}/{} ", r.kind.plural, r.key.display()), t.title()), true, state);
        let inner = b.inner(area);
        frame.render_widget(b, area);
        frame.render_widget(Paragraph::new(Line::styled("loading…", t.dim())), inner);
        return;
    };
    let conditions = object_conditions(obj);
    let deleting = lifecycle_line(obj, r.gone, state);
    let top_height =
        3 + u16::from(deleting.is_some()) + if conditions.is_empty() { 0 } else { conditions.len() as u16 + 2 };
    let [top, bottom] = Layout::vertical([Constraint::Length(top_height), Constraint::Min(3)]).areas(area);

    let meta = &obj["metadata"];
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    let mut facts = vec![
        Span::styled("kind ", t.dim()),
        Span::raw(format!("{}  ", text(&obj["kind"]))),
        Span::styled("generation ", t.dim()),
        Span::raw(format!("{}  ", text(&meta["generation"]))),
    ];
    let generation = meta.get("generation").and_then(Value::as_i64);
    if let Some(og) = obj.pointer("/status/observedGeneration").and_then(Value::as_i64) {
        let style = if Some(og) == generation { t.good() } else { t.warning() };
        let behind = if Some(og) == generation { "" } else { " (behind)" };
        facts.push(Span::styled("observedGeneration ", t.dim()));
        facts.push(Span::styled(format!("{og}{behind}  "), style));
    }
    facts.push(Span::styled("resourceVersion ", t.dim()));
    facts.push(Span::raw(format!("{}  ", text(&meta["resourceVersion"]))));
    if let Some(created) = meta.get("creationTimestamp").and_then(Value::as_str).and_then(|c| c.parse().ok()) {
        facts.push(Span::styled("age ", t.dim()));
        facts.push(Span::raw(age(created, state.now)));
    }
    let mut lines = vec![Line::from(facts)];
    lines.extend(deleting);
    if !conditions.is_empty() {
        lines.push(Line::styled("Conditions", t.title()));
        lines.extend(super::detail::condition_lines(&conditions, state));
    }
    let mut title = vec![Span::styled(format!(" {}/{} ", r.kind.plural, r.key.display()), t.title())];
    if r.gone {
        title.push(Span::styled(" DELETED ", t.error()));
    } else if meta.get("deletionTimestamp").is_some() {
        title.push(Span::styled(" TERMINATING ", t.warning()));
    }
    let b = block(Line::from(title), false, state);
    let inner = b.inner(top);
    frame.render_widget(b, top);
    frame.render_widget(Paragraph::new(lines), inner);

    if r.timeline_shown.is_some() {
        super::timeline::draw(frame, bottom, state, r);
        return;
    }
    let [left, right] = Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(bottom);
    let panes = [
        (left, "spec", obj.get("spec"), Pane::Left, if r.kind.status { "e" } else { "e, with the status" }),
        (
            right,
            "status",
            obj.get("status"),
            Pane::Right,
            if r.kind.status { "E, /status" } else { "e or E, an ordinary field" },
        ),
    ];
    for (i, (area, name, value, pane, key)) in panes.into_iter().enumerate() {
        let title = Line::from(vec![
            Span::styled(format!(" {name} "), t.title()),
            Span::styled(format!("(edit: {key}) "), t.dim()),
        ]);
        let b = block(title, r.focus == pane, state);
        let inner = b.inner(area);
        frame.render_widget(b, area);
        let lines = match value {
            Some(v) => yaml::to_lines(v),
            None => vec![format!("# no {name}")],
        };
        yaml_paragraph(frame, inner, state, &lines, r.scroll[i]);
    }
}

/// What the header says of an object on its way out: deleted while on screen, or
/// terminating (deletionTimestamp set) with the finalizers it waits for.
fn lifecycle_line(obj: &Value, gone: bool, state: &State) -> Option<Line<'static>> {
    let t = &state.theme;
    let meta = &obj["metadata"];
    if gone {
        return Some(Line::styled("deleted: the object is gone from the server; this is what it last was", t.error()));
    }
    let since = meta.get("deletionTimestamp").and_then(Value::as_str)?;
    let when = since.parse().map(|at| format!(" ({})", age(at, state.now))).unwrap_or_default();
    let finalizers: Vec<&str> =
        meta.get("finalizers").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    let waits = if finalizers.is_empty() { "none left".to_string() } else { finalizers.join(", ") };
    Some(Line::styled(format!("deletionTimestamp {since}{when}; finalizers: {waits}"), t.warning()))
}

/// Draws the YAML lines on screen only, coloured.
fn yaml_paragraph(frame: &mut Frame, area: Rect, state: &State, lines: &[String], scroll: usize) {
    let scroll = scroll.min(lines.len().saturating_sub(1));
    let shown: Vec<Line> =
        lines.iter().skip(scroll).take(usize::from(area.height)).map(|l| yaml::highlight(l, &state.theme)).collect();
    frame.render_widget(Paragraph::new(shown), area);
}

/// The YAML or describe view; the lines a `/` search matches are marked.
pub fn text(frame: &mut Frame, area: Rect, state: &State, s: &TextScreen) {
    let t = &state.theme;
    let mut title = vec![
        Span::styled(format!(" {} ", s.title), t.title()),
        Span::styled(format!("[{}/{}] ", (s.scroll + 1).min(s.lines.len()), s.lines.len()), t.dim()),
    ];
    if let Some(search) = &s.search {
        title.push(Span::styled(format!("</{}> n/N ", search.text()), t.warning()));
    }
    if s.yaml && s.managed {
        title.push(Span::styled("managedFields shown (M) ", t.dim()));
    }
    let b = block(Line::from(title), true, state);
    let inner = b.inner(area);
    frame.render_widget(b, area);
    let shown: Vec<Line> = s
        .lines
        .iter()
        .enumerate()
        .skip(s.scroll)
        .take(usize::from(inner.height))
        .map(|(i, l)| {
            let line = if s.yaml {
                yaml::highlight(l, t)
            } else {
                match l.split_once(':') {
                    Some((k, v)) if !k.starts_with(' ') => {
                        Line::from(vec![Span::styled(format!("{k}:"), t.yaml_key()), Span::raw(v.to_string())])
                    }
                    _ => Line::raw(l.clone()),
                }
            };
            if s.matches(i) { line.patch_style(t.marked()) } else { line }
        })
        .collect();
    frame.render_widget(Paragraph::new(shown), inner);
}
