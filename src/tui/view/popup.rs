//! What is drawn over the screen: help, the scale dialog, the conflict dialog, and the
//! question before quitting while a migration step runs.

use super::block;
use crate::tui::keys::{BINDINGS, DIALOG_KEYS};
use crate::tui::state::{ConflictDialog, Deletion, ScaleChange, ScaleDialog, State};
use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};

fn centered(area: Rect, width: u16, height: u16) -> Rect {
    area.centered(Constraint::Length(width.min(area.width)), Constraint::Length(height.min(area.height)))
}

/// Every key, those of other screens dimmed.
pub fn help(frame: &mut Frame, area: Rect, state: &State, scroll: usize) {
    let t = &state.theme;
    let mut lines = vec![];
    // With --readonly the writes are off: not offered.
    for b in BINDINGS.iter().filter(|b| b.offered(state.readonly)) {
        let here = b.on_screen(state.screen());
        let style = if here { ratatui::style::Style::new() } else { t.dim() };
        lines.push(Line::from(vec![
            Span::styled(format!("{:<13}", b.label), if here { t.yaml_key() } else { t.dim() }),
            Span::styled(b.help, style),
        ]));
    }
    lines.push(Line::raw(""));
    for (k, h, _) in DIALOG_KEYS.iter().filter(|(_, _, write)| !(*write && state.readonly)) {
        lines.push(Line::from(vec![Span::styled(format!("{k:<13}"), t.yaml_key()), Span::raw(*h)]));
    }
    let height = (lines.len() as u16 + 2).min(area.height);
    let r = centered(area, 96, height);
    frame.render_widget(Clear, r);
    let b = block(Line::styled(" help (dimmed: other screens; Esc closes) ", t.title()), true, state);
    let inner = b.inner(r);
    frame.render_widget(b, r);
    let scroll = scroll.min(lines.len().saturating_sub(usize::from(inner.height)));
    frame.render_widget(Paragraph::new(lines).scroll((scroll as u16, 0)), inner);
}

pub fn scale(frame: &mut Frame, area: Rect, state: &State, d: &ScaleDialog) {
    let t = &state.theme;
    let mut lines = vec![];
    match (d.targets.as_slice(), &d.info) {
        ([one], Some(info)) => {
            lines.push(Line::raw(format!("{}/{}", d.kind.plural, one.display())));
            lines.push(Line::from(vec![Span::styled("desired   ", t.dim()), Span::raw(info.desired.to_string())]));
            lines.push(Line::from(vec![Span::styled("current   ", t.dim()), Span::raw(info.current.to_string())]));
            let selector = info.selector.clone().unwrap_or_else(|| "<none>".into());
            lines.push(Line::from(vec![Span::styled("selector  ", t.dim()), Span::raw(selector)]));
        }
        ([one], None) => {
            lines.push(Line::raw(format!("{}/{}", d.kind.plural, one.display())));
            lines.push(Line::styled("reading /scale…", t.dim()));
        }
        (many, _) => {
            lines.push(Line::raw(format!("{} marked {}", many.len(), d.kind.plural)));
            for k in many.iter().take(5) {
                lines.push(Line::styled(format!("  {}", k.display()), t.marked()));
            }
            if many.len() > 5 {
                lines.push(Line::styled(format!("  … and {} more", many.len() - 5), t.dim()));
            }
        }
    }
    lines.push(Line::raw(""));
    let target = match d.change() {
        Some(ScaleChange::To(n)) => format!("set replicas to {n}"),
        Some(ScaleChange::By(n)) => format!("change replicas by {n:+} each"),
        None => "type a number or press + / -".into(),
    };
    lines.push(Line::from(vec![
        Span::styled("→ ", t.title()),
        Span::styled(target, t.marked()),
        Span::raw(if d.typed.is_empty() { String::new() } else { format!("   (typed {})", d.typed) }),
    ]));
    lines.push(Line::styled("digits, + -, Enter applies, Esc cancels", t.dim()));
    let r = centered(area, 60, lines.len() as u16 + 2);
    frame.render_widget(Clear, r);
    let b = block(Line::styled(" scale (/scale) ", t.title()), true, state);
    let inner = b.inner(r);
    frame.render_widget(b, r);
    frame.render_widget(Paragraph::new(lines), inner);
}

pub fn conflict(frame: &mut Frame, area: Rect, state: &State, d: &ConflictDialog) {
    let t = &state.theme;
    let mut lines = vec![
        Line::styled(
            format!(
                "409 Conflict: {} {} changed on the server while you edited its {}.",
                d.kind.kind,
                d.key.display(),
                d.part.word()
            ),
            t.error(),
        ),
        Line::raw("What changed on the server:"),
    ];
    if d.server_changes.is_empty() {
        lines.push(Line::styled("  (only bookkeeping fields)", t.dim()));
    }
    for c in d.server_changes.iter().take(12) {
        lines.push(Line::styled(format!("  {c}"), t.warning()));
    }
    if d.server_changes.len() > 12 {
        lines.push(Line::styled(format!("  … and {} more", d.server_changes.len() - 12), t.dim()));
    }
    lines.push(Line::raw(""));
    lines.push(Line::from(vec![
        Span::raw("Your edit is kept in "),
        Span::styled(d.kept.display().to_string(), t.marked()),
    ]));
    lines.push(Line::raw(""));
    lines.push(answers(
        state,
        &[("r", "re-apply your changes on the new version"), ("e", "edit again"), ("d", "discard")],
    ));
    let height = lines.len() as u16 + 4;
    wrapped_dialog(frame, centered(area, 90, height), state, Line::styled(" conflict ", t.error()), lines);
}

/// The keys a dialog answers to: `y quit   n go on`.
fn answers(state: &State, keys: &[(&str, &str)]) -> Line<'static> {
    let mut spans = vec![];
    for (i, (key, what)) in keys.iter().enumerate() {
        let gap = if i + 1 < keys.len() { "   " } else { "" };
        spans.push(Span::styled(key.to_string(), state.theme.yaml_key()));
        spans.push(Span::raw(format!(" {what}{gap}")));
    }
    Line::from(spans)
}

/// A bordered dialog over the screen, its text wrapped.
fn wrapped_dialog(frame: &mut Frame, r: Rect, state: &State, title: Line, lines: Vec<Line>) {
    frame.render_widget(Clear, r);
    let b = block(title, true, state);
    let inner = b.inner(r);
    frame.render_widget(b, r);
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
}

/// Quit while a migration step runs.
pub fn confirm_quit(frame: &mut Frame, area: Rect, state: &State) {
    let t = &state.theme;
    let lines = vec![
        Line::styled("A migration step is running.", t.marked()),
        Line::raw("Quitting stops it half-way; the journal keeps the place and the step runs again when"),
        Line::raw("you resume (m on the CRD here, or kubectl crd migrate resume)."),
        Line::raw(""),
        answers(state, &[("y", "quit"), ("n", "go on")]),
    ];
    let height = lines.len() as u16 + 2;
    wrapped_dialog(frame, centered(area, 92, height), state, Line::styled(" quit? ", t.error()), lines);
}

/// `Ctrl-D`: what goes, named, before it goes.
pub fn confirm_delete(frame: &mut Frame, area: Rect, state: &State, d: &Deletion) {
    let t = &state.theme;
    let mut lines = vec![];
    match d {
        Deletion::Objects { kind, keys } => {
            let what = if keys.len() == 1 { kind.singular.clone() } else { format!("{} {}", keys.len(), kind.plural) };
            lines.push(Line::styled(format!("Delete {what}?"), t.marked()));
            for k in keys.iter().take(8) {
                lines.push(Line::raw(format!("  {}", k.display())));
            }
            if keys.len() > 8 {
                lines.push(Line::styled(format!("  … and {} more", keys.len() - 8), t.dim()));
            }
        }
        Deletion::Crd { name, plural, count } => {
            lines.push(Line::styled(format!("Delete the CustomResourceDefinition {name}?"), t.marked()));
            let with = match count {
                Some(0) => "It holds no custom resources.".to_string(),
                Some(n) => format!("All {n} {plural} (its custom resources) go with it."),
                None => format!("All its {plural} (not counted) go with it."),
            };
            lines.push(Line::styled(with, t.error()));
        }
    }
    lines.push(Line::raw(""));
    lines.push(answers(state, &[("y", "delete"), ("n", "keep")]));
    let height = lines.len() as u16 + 2;
    wrapped_dialog(frame, centered(area, 80, height), state, Line::styled(" delete? ", t.error()), lines);
}

/// `:ns` alone: the cluster's namespaces (then all), the current one selected.
pub fn namespaces(frame: &mut Frame, area: Rect, state: &State, cursor: usize) {
    let t = &state.theme;
    let choices = crate::tui::commands::namespace_choices(state);
    let height = (choices.len() as u16 + 2).min(area.height);
    let r = centered(area, 40, height);
    frame.render_widget(Clear, r);
    let b = block(Line::styled(" namespaces (Enter picks) ", t.title()), true, state);
    let inner = b.inner(r);
    frame.render_widget(b, r);
    let rows = usize::from(inner.height);
    let offset = crate::tui::table::scroll_offset(0, cursor, rows);
    let lines: Vec<Line> = choices
        .iter()
        .enumerate()
        .skip(offset)
        .take(rows)
        .map(|(i, ns)| {
            let line = Line::raw(format!(" {ns}"));
            if i == cursor { line.patch_style(t.selected()) } else { line }
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}
