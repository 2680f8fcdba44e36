//! Drawing: every frame is a function of `&State`. The frame is a header (where requests
//! go), the screen on top of the stack, and a status line (input, messages, hints);
//! dialogs and help are drawn over the screen.

mod cel;
mod detail;
mod events;
mod explorer;
mod lists;
mod log;
mod owners;
mod popup;
mod resource;
mod timeline;
mod wizard;

use crate::tui::keys;
use crate::tui::state::{Connection, Level, Mode, Screen, State};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

/// Draws the whole UI.
pub fn draw(frame: &mut Frame, state: &State) {
    let [header, crumbs, body, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(state.status_rows()),
    ])
    .areas(frame.area());
    draw_header(frame, header, state);
    draw_crumbs(frame, crumbs, state);
    match state.screen() {
        Screen::Registrations => lists::registrations(frame, body, state),
        Screen::Detail(d) => detail::draw(frame, body, state, d),
        Screen::Resources(r) => lists::resources(frame, body, state, r),
        Screen::Resource(r) => resource::draw(frame, body, state, r),
        Screen::Text(t) => resource::text(frame, body, state, t),
        Screen::Wizard(w) => wizard::draw(frame, body, state, w),
        Screen::Log { scroll } => log::draw(frame, body, state, *scroll),
        Screen::Events(e) => events::draw(frame, body, state, e),
        Screen::Cel(b) => cel::draw(frame, body, state, b),
        Screen::Owners(o) => owners::draw(frame, body, state, o),
    }
    draw_status(frame, status, state);
    match &state.mode {
        Mode::Help { scroll } => popup::help(frame, body, state, *scroll),
        Mode::Scale(d) => popup::scale(frame, body, state, d),
        Mode::Conflict(d) => popup::conflict(frame, body, state, d),
        Mode::ConfirmQuit => popup::confirm_quit(frame, body, state),
        Mode::ConfirmDelete(d) => popup::confirm_delete(frame, body, state, d),
        Mode::PickNamespace { cursor } => popup::namespaces(frame, body, state, *cursor),
        _ => {}
    }
}

fn draw_header(frame: &mut Frame, area: Rect, state: &State) {
    let t = &state.theme;
    let conn = match state.target.connection {
        Connection::Live => "live",
        Connection::Local => "local",
    };
    let mut spans = vec![
        Span::styled(" kubectl-crd ", t.header_key()),
        Span::styled("│ ctx: ", t.header()),
        Span::styled(state.target.context.clone(), t.header_key()),
        Span::styled(" │ ns: ", t.header()),
        Span::styled(state.namespaces.label().to_string(), t.header_key()),
        // The favourite namespaces, as k9s lists them: the number keys pick one.
        Span::styled(format!(" [{}]", favourites(state)), t.header()),
        Span::styled(format!(" │ {conn}: "), t.header()),
        Span::styled(state.target.server.clone(), t.header_key()),
    ];
    if state.readonly {
        spans.push(Span::styled(" │ READ-ONLY", t.header_key()));
    }
    let used: usize = spans.iter().map(|s| s.content.chars().count()).sum();
    let help = " ? help ";
    let pad = usize::from(area.width).saturating_sub(used + help.len());
    spans.push(Span::styled(" ".repeat(pad), t.header()));
    spans.push(Span::styled(help, t.header()));
    frame.render_widget(Paragraph::new(Line::from(spans)).style(t.header()), area);
}

/// `0:all 1:default 2:team-a`: what the number keys pick.
fn favourites(state: &State) -> String {
    let numbered = state.favourites.iter().enumerate().map(|(i, ns)| format!("{}:{ns}", i + 1));
    std::iter::once("0:all".to_string()).chain(numbered).collect::<Vec<_>>().join(" ")
}

fn draw_crumbs(frame: &mut Frame, area: Rect, state: &State) {
    let t = &state.theme;
    let mut spans = vec![];
    for (i, s) in state.stack.iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(" › ", t.dim()));
        }
        let label = match s {
            Screen::Registrations => "crds".to_string(),
            Screen::Detail(d) => d.crd.clone(),
            Screen::Resources(r) => r.kind.plural.clone(),
            Screen::Resource(r) => r.key.display(),
            Screen::Text(x) => x.title.split_whitespace().next().unwrap_or_default().to_string(),
            Screen::Wizard(w) => format!("migrate {}", w.crd),
            Screen::Log { .. } => "messages".to_string(),
            Screen::Events(_) => "events".to_string(),
            Screen::Cel(b) => format!("cel {}", b.name),
            Screen::Owners(_) => "owners".to_string(),
        };
        let style = if i + 1 == state.stack.len() { t.title() } else { Style::new() };
        spans.push(Span::styled(label, style));
    }
    let hints = match state.screen() {
        Screen::Wizard(w) => wizard::hints(w).to_string(),
        screen => keys::hints(screen)
            .iter()
            .filter(|h| !(h.write && state.readonly))
            .map(|h| format!("  <{}> {}", h.key, h.what))
            .collect(),
    };
    spans.push(Span::styled(hints, t.dim()));
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn draw_status(frame: &mut Frame, area: Rect, state: &State) {
    let t = &state.theme;
    let line = match &state.mode {
        Mode::Command(i) => {
            let mut spans = vec![Span::styled(":", t.title()), Span::raw(i.text.clone()), Span::raw("▏")];
            // What Tab would complete to, while there is a choice.
            let found = crate::tui::commands::completions(state, &i.text);
            if !i.text.is_empty() && found.len() > 1 {
                let shown: Vec<&str> = found.iter().take(8).map(String::as_str).collect();
                let more = if found.len() > 8 { " …" } else { "" };
                spans.push(Span::styled(format!("   Tab: {}{more}", shown.join("  ")), t.dim()));
            }
            Line::from(spans)
        }
        Mode::Filter(i) => Line::from(vec![Span::styled("/", t.title()), Span::raw(i.text.clone()), Span::raw("▏")]),
        _ => match &state.message {
            Some((Level::Error, m)) => Line::from(Span::styled(format!("✗ {m}"), t.error())),
            Some((Level::Info, m)) => Line::from(Span::styled(format!("✓ {m}"), t.info())),
            None => Line::from(Span::styled("", t.dim())),
        },
    };
    // A long message wraps over the rows the status area has (see `State::status_rows`).
    frame.render_widget(Paragraph::new(line).wrap(ratatui::widgets::Wrap { trim: false }), area);
}

/// A bordered block whose border shows focus.
fn block<'a>(title: Line<'a>, focused: bool, state: &State) -> Block<'a> {
    let t = &state.theme;
    Block::bordered().title(title).border_style(if focused { t.border_focused() } else { t.border() })
}

/// Cells padded to their column widths, two spaces apart; cells past the widths as they are.
fn cells_line<'a>(cells: Vec<(String, Style)>, widths: &[usize]) -> Line<'a> {
    let mut spans = Vec::with_capacity(cells.len() * 2);
    for (i, (text, style)) in cells.into_iter().enumerate() {
        match widths.get(i) {
            Some(&w) => {
                spans.push(Span::styled(fit(&text, w), style));
                spans.push(Span::raw("  "));
            }
            // A last column without a width (a message) takes what is left.
            None => spans.push(Span::styled(text, style)),
        }
    }
    Line::from(spans)
}

/// Text fitted to a width: cut with `…` or padded with spaces.
fn fit(text: &str, width: usize) -> String {
    let n = text.chars().count();
    if n > width {
        let mut s: String = text.chars().take(width.saturating_sub(1)).collect();
        if width > 0 {
            s.push('…');
        }
        s
    } else {
        format!("{text}{}", " ".repeat(width - n))
    }
}

#[cfg(test)]
mod tests;
