//! The two lists: registrations, and the custom resources of one CRD. Only the rows on
//! screen are built.

use super::{block, cells_line, fit};
use crate::tui::model::Registration;
use crate::tui::state::{ResourcesScreen, State};
use crate::tui::table::{SortKey, is_age};
use crate::tui::theme::{MARK, TROUBLE_MARK};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// The RESOURCES cell of a registration whose count is on its way.
pub const COUNTING: &str = "…";

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
        match r.count() {
            Some(c) => c.to_string(),
            None if r.counting => COUNTING.into(),
            None => "?".into(),
        },
        r.group().to_string(),
    ]
}

/// The registrations screen.
pub fn registrations(frame: &mut Frame, area: Rect, state: &State) {
    let t = &state.theme;
    let regs = &state.registrations;
    let shown = regs.shown();
    let filter = regs.filter.as_ref().map(|f| format!(" </{}>", f.text())).unwrap_or_default();
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
    let height = usize::from(inner.height).saturating_sub(1);
    let offset = crate::tui::table::scroll_offset(regs.offset, regs.cursor, height);
    // Cells of the rows on screen only: thousands of CRDs cost no more a frame than a few.
    let on_screen: Vec<(usize, [String; 10])> =
        shown.iter().enumerate().skip(offset).take(height).map(|(pos, &i)| (pos, reg_cells(&regs.items[i]))).collect();
    let mut widths: Vec<usize> = REG_HEADINGS.iter().map(|h| h.len()).collect();
    for (_, row) in &on_screen {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    // The names as wide as the widest of all, so columns do not move while scrolling (a
    // length per name, names being ASCII: no cells built).
    for (column, text) in [(1, Registration::name as fn(&Registration) -> &str), (3, Registration::kind)] {
        let widest = shown.iter().map(|&i| text(&regs.items[i]).len()).max().unwrap_or(0);
        widths[column] = widths[column].max(widest);
    }
    let mut lines =
        vec![cells_line(REG_HEADINGS.iter().map(|h| (h.to_string(), t.column_header())).collect(), &widths)];
    if shown.is_empty() {
        lines.push(Line::styled(
            if regs.items.is_empty() { "no CustomResourceDefinitions" } else { "nothing matches the filter" },
            t.dim(),
        ));
    }
    for (pos, row) in &on_screen {
        let pos = *pos;
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
        title.push(Span::styled(format!(" </{f}>"), t.warning()));
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
    if screen.stale {
        title.push(Span::styled(" STALE: the last list failed (L shows why)", t.error()));
    }
    if screen.wide {
        title.push(Span::styled(" wide", t.dim()));
    }
    title.push(Span::raw(" "));
    let b = block(Line::from(title), true, state);
    let inner = b.inner(area);
    frame.render_widget(b, area);

    // Columns shown: the mark, then what `on_screen` says (NAMESPACE with -A, the server's
    // columns, the wide ones with Ctrl-W); the sort arrow on the sorted one.
    let columns = screen.on_screen(&state.namespaces);
    let ns_width = 9;
    let mut widths = vec![1];
    let mut headings = vec![(String::new(), t.column_header())];
    for (heading, key) in &columns {
        let arrow = match table.sort() {
            Some(s) if s.column == *key && s.descending => "↓",
            Some(s) if s.column == *key => "↑",
            _ => "",
        };
        let w = match key {
            SortKey::Namespace => ns_width,
            SortKey::Column(c) if is_age(&table.columns[*c]) => 5,
            SortKey::Column(c) => table.widths()[*c],
        };
        widths.push(w.max(heading.chars().count() + arrow.chars().count()));
        headings.push((format!("{heading}{arrow}"), t.column_header()));
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
    // Rows of a list that failed are the old ones: dimmed, and the title says so.
    let plain = if screen.stale { t.dim() } else { Style::new() };
    for (pos, row) in table.visible(height) {
        let marked = table.is_marked(&row.key);
        let base = if marked { t.marked() } else { plain };
        let mut cells = vec![(if marked { MARK } else { " " }.to_string(), base)];
        for (i, (_, key)) in columns.iter().enumerate() {
            let text = match key {
                SortKey::Namespace => fit(row.key.namespace.as_deref().unwrap_or_default(), widths[i + 1]),
                SortKey::Column(c) => table.cell(row, *c, state.now).into_owned(),
            };
            cells.push((text, base));
        }
        let mut line = cells_line(cells, &widths);
        if pos == table.cursor() {
            line = line.patch_style(t.selected());
        }
        lines.push(line);
    }
    frame.render_widget(Paragraph::new(lines), inner);
}
