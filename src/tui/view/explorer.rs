//! The detail screen's schema explorer: the tree, one line per field with its type and
//! short markers, and — under the selected field, while the tree has the keys — every
//! attribute and CEL rule in full. Expanding in place rather than in a side panel reads the
//! same at 80 columns (panes stacked) and 160 (side by side). Also the printer-column
//! preview the left pane shows under each version.

use super::{block, cells_line};
use crate::cluster::column_preview::{ColumnPreview, VersionPreview};
use crate::cluster::registrations::VersionDetail;
use crate::tui::schema::{Preview, SchemaNode};
use crate::tui::state::{DetailScreen, Pane, State};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// Object cells wider than this are cut (the describe view has them whole).
const CELL_WIDTH: usize = 14;

/// The right pane: the schema tree.
pub fn draw_tree(frame: &mut Frame, area: Rect, state: &State, d: &DetailScreen) {
    let t = &state.theme;
    let focused = d.focus == Pane::Right;
    let b = block(Line::styled(" schema (←/→ fold) ", t.title()), focused, state);
    let inner = b.inner(area);
    frame.render_widget(b, area);
    let visible = d.schema.visible();
    if visible.is_empty() {
        frame.render_widget(Paragraph::new(Line::styled("no schema", t.dim())), inner);
        return;
    }
    let mut lines = vec![];
    let mut cursor_span = (0, 0);
    for (i, v) in visible.iter().enumerate() {
        let line = node_line(v.node, v.depth, v.expanded, state);
        if i != d.schema.cursor {
            lines.push(line);
            continue;
        }
        let start = lines.len();
        if focused {
            lines.push(line.patch_style(t.selected()));
            lines.extend(detail_lines(v.node, v.depth, usize::from(inner.width), state));
        } else {
            lines.push(line);
        }
        cursor_span = (start, lines.len());
    }
    // The selected line sits mid-pane, moved up so its detail fits, never off the top.
    let height = usize::from(inner.height);
    let (start, end) = cursor_span;
    let offset = start.saturating_sub(height / 2).max(end.saturating_sub(height)).min(start);
    let lines: Vec<Line> = lines.into_iter().skip(offset).take(height).collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

fn node_line(n: &SchemaNode, depth: usize, expanded: bool, state: &State) -> Line<'static> {
    let t = &state.theme;
    let fold = match (n.children.is_empty(), expanded) {
        (true, _) => "  ",
        (false, true) => "▾ ",
        (false, false) => "▸ ",
    };
    let mut spans = vec![
        Span::raw("  ".repeat(depth)),
        Span::styled(fold, t.dim()),
        Span::styled(n.label.clone(), if depth == 0 { t.title() } else { t.yaml_key() }),
    ];
    if n.required {
        spans.push(Span::styled("*", t.warning()));
    }
    if !n.type_.is_empty() {
        spans.push(Span::styled(format!(" <{}>", n.type_), t.yaml_number()));
    }
    let markers = n.attrs.markers();
    if !markers.is_empty() {
        spans.push(Span::styled(format!(" {}", markers.join(" ")), t.yaml_string()));
    }
    if !n.description.is_empty() {
        spans.push(Span::styled(format!("  {}", n.description.lines().next().unwrap_or_default()), t.dim()));
    }
    Line::from(spans)
}

/// The selected node's attributes in full, under it: constraints, default, CEL rules.
fn detail_lines(n: &SchemaNode, depth: usize, width: usize, state: &State) -> Vec<Line<'static>> {
    let t = &state.theme;
    let pad = "  ".repeat(depth + 2);
    // CEL rules run long: they wrap rather than run off the pane (20 columns at the least).
    let room = width.saturating_sub(pad.len() + 2).max(20);
    let mut out = vec![];
    for l in n.attrs.details() {
        let style = if l.starts_with("rule:") { t.info() } else { t.dim() };
        for part in wrap(&l, room) {
            out.push(Line::from(vec![Span::raw(pad.clone()), Span::styled("│ ", t.dim()), Span::styled(part, style)]));
        }
    }
    out
}

/// `text` cut into pieces of at most `width` characters, at a space where there is one,
/// the pieces after the first indented by two more than the text is.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let leading = text.len() - text.trim_start().len();
    let indent = " ".repeat(leading + 2);
    let chars: Vec<char> = text.chars().collect();
    let mut out = vec![];
    let mut at = 0;
    while at < chars.len() || out.is_empty() {
        let lead = if out.is_empty() { String::new() } else { indent.clone() };
        let take = width.saturating_sub(lead.chars().count()).max(1);
        let mut end = (at + take).min(chars.len());
        // At a space where there is one, so words stay whole.
        // (Not in the text's own indentation, which would leave an empty piece.)
        let floor = if at == 0 { leading + 1 } else { at + 1 };
        if end < chars.len()
            && chars[end] != ' '
            && floor < end
            && let Some(space) = chars[floor..end].iter().rposition(|c| *c == ' ')
        {
            end = floor + space + 1;
        }
        let piece: String = chars[at..end].iter().collect();
        out.push(format!("{lead}{}", piece.trim_end()));
        at = end;
        while chars.get(at) == Some(&' ') {
            at += 1;
        }
    }
    out
}

/// The left pane's printer columns of one version: previewed on objects once read, until
/// then (or when it is not served) as declared.
pub fn column_lines(v: &VersionDetail, preview: &Preview, state: &State) -> Vec<Line<'static>> {
    let t = &state.theme;
    if let Some(p) = preview.of(&v.name) {
        return preview_lines(p, state);
    }
    let status = match preview {
        Preview::Loading => Some(Line::styled("    reading objects to preview the columns on…", t.dim())),
        Preview::Failed(e) => Some(Line::styled(format!("    no preview: {e}"), t.error())),
        Preview::Ready(_) => None,
    };
    if v.printer_columns.is_empty() {
        return vec![Line::styled("  printer columns: none (Name, Age)", t.dim())];
    }
    let mut lines = vec![Line::raw("  printer columns:")];
    for c in &v.printer_columns {
        let prio = if c.priority > 0 { format!(" priority {}", c.priority) } else { String::new() };
        lines.push(Line::from(vec![
            Span::raw(format!("    {:<14}", c.name)),
            Span::styled(format!("{:<8}", c.type_), t.yaml_number()),
            Span::styled(c.json_path.clone(), t.yaml_string()),
            Span::styled(prio, t.dim()),
        ]));
    }
    lines.extend(status);
    lines
}

fn preview_lines(p: &VersionPreview, state: &State) -> Vec<Line<'static>> {
    let t = &state.theme;
    let mut lines = vec![];
    if let Some(e) = &p.error {
        lines.push(Line::styled(format!("  printer columns (no objects read: {e}):"), t.error()));
    } else if p.objects.is_empty() {
        lines.push(Line::raw("  printer columns (no objects to preview on):"));
    } else {
        lines.push(Line::raw(format!("  printer columns on {}:", p.objects.join(", "))));
    }
    let short = |o: &String| o.rsplit('/').next().unwrap_or_default().to_string();
    let w = |f: &dyn Fn(&ColumnPreview) -> usize, min: usize| p.columns.iter().map(f).max().unwrap_or(0).max(min);
    // The first column is indented two, under the "printer columns" line.
    let mut widths = vec![
        w(&|c| c.name.chars().count() + if c.implicit { 1 } else { 0 }, 6) + 2,
        w(&|c| c.type_.len(), 4),
        w(&|c| c.json_path.chars().count(), 8),
    ];
    for (i, o) in p.objects.iter().enumerate() {
        let cells = p.columns.iter().filter_map(|c| c.cells.get(i)).map(|s| s.chars().count());
        widths.push(cells.chain([short(o).chars().count()]).max().unwrap_or(1).clamp(1, CELL_WIDTH));
    }
    let mut head = vec![("  COLUMN".to_string(), t.column_header())];
    head.extend(["TYPE", "JSONPATH"].map(|h| (h.to_string(), t.column_header())));
    head.extend(p.objects.iter().map(|o| (short(o), t.column_header())));
    lines.push(cells_line(head, &widths));
    for c in &p.columns {
        let name = if c.implicit { format!("  {}°", c.name) } else { format!("  {}", c.name) };
        let mut cells =
            vec![(name, t.yaml_key()), (c.type_.clone(), t.yaml_number()), (c.json_path.clone(), t.yaml_string())];
        match c.flag() {
            // Every cell is empty anyway: the flag takes their place.
            Some(flag) => cells.push((format!("! {flag}"), t.warning())),
            None => cells.extend(c.cells.iter().map(|s| match s.as_str() {
                "" => ("<none>".to_string(), t.dim()),
                s => (s.to_string(), Style::new()),
            })),
        }
        let widths = if c.flag().is_some() { &widths[..3] } else { &widths[..] };
        lines.push(cells_line(cells, widths));
    }
    if p.columns.iter().any(|c| c.implicit) {
        lines.push(Line::styled("    ° kube's own Age: the version declares no columns", t.dim()));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn long_lines_wrap_indented() {
        assert_eq!(wrap("rule: abcdefgh", 8), ["rule:", "  abcdef", "  gh"]);
        assert_eq!(wrap("abcdefghij", 8), ["abcdefgh", "  ij"]);
        assert_eq!(wrap("  message: x", 20), ["  message: x"]);
        assert_eq!(wrap("  abcdefgh", 6), ["  abcd", "    ef", "    gh"]);
        assert_eq!(wrap("", 5), [""]);
    }
}
