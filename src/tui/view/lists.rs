//! The two lists: registrations, and the custom resources of one CRD. Only the rows on
//! screen are built.

use super::{block, cells_line, fit};
use crate::tui::model::Registration;
use crate::tui::state::{ResourcesScreen, State};
use crate::tui::table::is_age;
use crate::tui::theme::{MARK, TROUBLE_MARK};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// STATUS next to NAME, so trouble reads first; GROUP (also in the name) last.
const REG_HEADINGS: [&str; 10] =
    ["", "NAME", "STATUS", "KIND", "SCOPE", "VERSIONS", "ESTABLISHED", "NAMES", "RESOURCES", "GROUP"];

fn reg_cells(r: &Registration) -> [String; 10] {
    let troubles = r.troubles();
    [
        if troubles.is_empty() { " ".into() } else { TROUBLE_MARK.into() },
        r.name().to_string(),
        // The worst trouble only (a refused name is why it is not established); the detail
        // screen lists them all.
        troubles.first().map_or("OK", |t| t.word()).to_string(),
        r.kind().to_string(),
        r.scope().to_string(),
        r.versions(),
        if r.established() { "True" } else { "False" }.to_string(),
        match r.names_accepted() {
            Some(true) => "Accepted",
            Some(false) => "Conflict",
            None => "Pending",
        }
        .to_string(),
        r.count().map(|c| c.to_string()).unwrap_or_else(|| "?".into()),
        r.group().to_string(),
    ]
}

/// The registrations screen.
pub fn registrations(frame: &mut Frame, area: Rect, state: &State) {
    let t = &state.theme;
    let regs = &state.registrations;
    let shown = regs.shown();
    let filter =
        regs.filter.as_ref().map(|f| format!(" </{}>", f.as_str().trim_start_matches("(?i)"))).unwrap_or_default();
    let title = Line::from(vec![
        Span::styled(" customresourcedefinitions", t.title()),
        Span::raw(format!(" [{}/{}]{filter} ", shown.len(), regs.items.len())),
    ]);
    let b = block(title, true, state);
    let inner = b.inner(area);
    frame.render_widget(b, area);
    if !regs.loaded {
        frame.render_widget(Paragraph::new("loading…"), inner);
        return;
    }
    let cells: Vec<[String; 10]> = shown.iter().map(|&i| reg_cells(&regs.items[i])).collect();
    let mut widths: Vec<usize> = REG_HEADINGS.iter().map(|h| h.len()).collect();
    for row in &cells {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let height = usize::from(inner.height).saturating_sub(1);
    let offset = crate::tui::table::scroll_offset(regs.offset, regs.cursor, height);
    let mut lines =
        vec![cells_line(REG_HEADINGS.iter().map(|h| (h.to_string(), t.column_header())).collect(), &widths)];
    if cells.is_empty() {
        lines.push(Line::styled(
            if regs.items.is_empty() { "no CustomResourceDefinitions" } else { "nothing matches the filter" },
            t.dim(),
        ));
    }
    for (pos, row) in cells.iter().enumerate().skip(offset).take(height) {
        let reg = &regs.items[shown[pos]];
        let trouble = !reg.troubles().is_empty();
        let base = if trouble { t.trouble() } else { Style::new() };
        let styled = row
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let style = match i {
                    2 if c == "OK" => t.good(),
                    6 if c == "True" => t.good(),
                    6 => t.trouble(),
                    7 if c == "Accepted" => t.good(),
                    7 => t.trouble(),
                    _ => base,
                };
                (c.clone(), style)
            })
            .collect();
        let mut line = cells_line(styled, &widths);
        if pos == regs.cursor {
            line = line.patch_style(t.selected());
        }
        lines.push(line);
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

/// The resources screen: the server's Table columns for the rows on screen.
pub fn resources(frame: &mut Frame, area: Rect, state: &State, screen: &ResourcesScreen) {
    let t = &state.theme;
    let table = &screen.table;
    let mut title = vec![
        Span::styled(format!(" {}", screen.kind.plural), t.title()),
        Span::raw(format!("({})", if screen.kind.namespaced { state.namespaces.label() } else { "cluster" })),
        Span::raw(format!(" [{}/{}]", table.shown(), table.total())),
    ];
    if let Some(f) = table.filter() {
        title.push(Span::styled(format!(" </{}>", f.trim_start_matches("(?i)")), t.warning()));
    }
    if let Some(sel) = &screen.selector {
        title.push(Span::styled(format!(" <-l {sel}>"), t.warning()));
    }
    if !table.marks().is_empty() {
        title.push(Span::styled(format!(" marked: {}", table.marks().len()), t.marked()));
    }
    if screen.loading {
        title.push(Span::styled(" loading…", t.dim()));
    }
    title.push(Span::raw(" "));
    let b = block(Line::from(title), true, state);
    let inner = b.inner(area);
    frame.render_widget(b, area);

    let all_ns = screen.kind.namespaced && state.namespaces.one().is_none();
    // Columns shown: the mark, NAMESPACE with -A, then the server's priority-0 columns.
    let shown_cols: Vec<usize> = (0..table.columns.len()).filter(|&i| table.columns[i].priority == 0).collect();
    let mut widths = vec![1];
    let mut headings = vec![(String::new(), t.column_header())];
    let ns_width = 9;
    if all_ns {
        widths.push(ns_width);
        headings.push(("NAMESPACE".to_string(), t.column_header()));
    }
    let sort = table.sort();
    for &c in &shown_cols {
        let col = &table.columns[c];
        let arrow = match sort {
            Some(s) if s.column == c => {
                if s.descending {
                    "↓"
                } else {
                    "↑"
                }
            }
            _ => "",
        };
        let w = if is_age(col) { 5 } else { table.widths()[c] };
        widths.push(w.max(col.name.chars().count() + arrow.chars().count()));
        headings.push((format!("{}{arrow}", col.name.to_uppercase()), t.column_header()));
    }
    let height = usize::from(inner.height).saturating_sub(1);
    let mut lines = Vec::with_capacity(height + 1);
    lines.push(cells_line(headings, &widths));
    if table.shown() == 0 && !screen.loading {
        let what = if table.total() == 0 {
            format!("no {} in {}", screen.kind.plural, state.namespaces.label())
        } else {
            "nothing matches the filter".into()
        };
        lines.push(Line::styled(what, t.dim()));
    }
    for (pos, row) in table.visible(height) {
        let marked = table.is_marked(&row.key);
        let base = if marked { t.marked() } else { Style::new() };
        let mut cells = vec![(if marked { MARK } else { " " }.to_string(), base)];
        if all_ns {
            cells.push((fit(row.key.namespace.as_deref().unwrap_or_default(), ns_width), base));
        }
        for &c in &shown_cols {
            cells.push((table.cell(row, c, state.now).into_owned(), base));
        }
        let mut line = cells_line(cells, &widths);
        if pos == table.cursor() {
            line = line.patch_style(t.selected());
        }
        lines.push(line);
    }
    frame.render_widget(Paragraph::new(lines), inner);
}
