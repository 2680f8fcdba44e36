//! The registration detail: names (spec beside accepted, differences marked), conditions,
//! subresources, versions and their printer columns previewed on objects on the left; the
//! schema explorer ([`super::explorer`]) on the right.

use super::{block, cells_line};
use crate::cluster::registrations::{ConditionView, Description};
use crate::tui::model::{Registration, TERMINATING, age};
use crate::tui::state::{DetailScreen, Pane, State};
use crate::tui::theme::DIFF_MARK;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

pub fn draw(frame: &mut Frame, area: Rect, state: &State, d: &DetailScreen) {
    let Some(reg) = state.registrations.find(&d.crd) else {
        frame.render_widget(Paragraph::new(format!("{} is gone", d.crd)), area);
        return;
    };
    let [left, right] = if area.width >= 110 {
        Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(area)
    } else {
        Layout::vertical([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(area)
    };
    let t = &state.theme;
    let troubles = reg.troubles();
    let mut title = vec![Span::styled(format!(" {} ", reg.name()), t.title())];
    if !troubles.is_empty() {
        let words: Vec<_> = troubles.iter().map(|t| t.word()).collect();
        title.push(Span::styled(format!("! {} ", words.join(",")), t.trouble()));
    }
    let b = block(Line::from(title), d.focus == Pane::Left, state);
    let inner = b.inner(left);
    frame.render_widget(b, left);
    let lines = info_lines(reg, d, state);
    let scroll = d.scroll.min(lines.len().saturating_sub(1));
    frame.render_widget(Paragraph::new(lines).scroll((scroll as u16, 0)), inner);

    super::explorer::draw_tree(frame, right, state, d);
}

fn section(title: &str, state: &State) -> Line<'static> {
    Line::styled(title.to_string(), state.theme.title())
}

/// The conditions table shared by the detail and resource screens.
pub fn condition_lines(conditions: &[ConditionView], state: &State) -> Vec<Line<'static>> {
    let t = &state.theme;
    let w = |f: &dyn Fn(&ConditionView) -> usize, h: usize| conditions.iter().map(f).max().unwrap_or(0).max(h);
    let widths = [w(&|c| c.type_.len(), 4), w(&|c| c.status.len(), 6), w(&|c| c.reason.len(), 6), 4];
    let heads = ["TYPE", "STATUS", "REASON", "AGE", "MESSAGE"];
    let mut lines = vec![cells_line(heads.iter().map(|h| (h.to_string(), t.column_header())).collect(), &widths)];
    for c in conditions {
        let good_when_true = c.type_ != TERMINATING;
        lines.push(cells_line(
            vec![
                (c.type_.clone(), Style::new()),
                (c.status.clone(), t.condition_status(&c.status, good_when_true)),
                (c.reason.clone(), Style::new()),
                (c.last_transition_time.map(|x| age(x, state.now)).unwrap_or_else(|| "?".into()), t.dim()),
                (c.message.clone(), Style::new()),
            ],
            &widths,
        ));
    }
    lines
}

/// The left pane's text: what `kubectl crd describe` says, laid out for the screen.
fn info_lines(reg: &Registration, detail: &DetailScreen, state: &State) -> Vec<Line<'static>> {
    let t = &state.theme;
    let d = Description::from_crd(&reg.crd, reg.count());
    if detail.columns_only {
        let mut lines = vec![section("Printer columns, previewed on objects (p: everything)", state)];
        for v in &d.versions {
            lines.push(Line::styled(v.name.clone(), t.yaml_key()));
            lines.extend(super::explorer::column_lines(v, &detail.preview, state));
        }
        return lines;
    }
    let count = d.resources.map(|c| c.to_string()).unwrap_or_else(|| "?".into());
    let mut lines = vec![Line::raw(format!(
        "group {}  scope {}  versions {}  resources {count}",
        d.group,
        d.scope,
        reg.versions()
    ))];
    lines.push(Line::raw(""));
    lines.push(section("Names (spec ⇄ accepted)", state));
    let w0 = d.names.iter().map(|r| r.field.len()).max().unwrap_or(0);
    let w1 = d.names.iter().map(|r| r.spec.chars().count()).max().unwrap_or(0).max(4);
    let w2 = d.names.iter().map(|r| r.accepted.chars().count()).max().unwrap_or(0).max(8);
    let widths = [1, w0, w1, w2];
    let heads = ["", "FIELD", "SPEC", "ACCEPTED"];
    lines.push(cells_line(heads.iter().map(|h| (h.to_string(), t.column_header())).collect(), &widths));
    for r in &d.names {
        let (mark, style) = if r.differs { (DIFF_MARK, t.diff()) } else { (" ", Style::new()) };
        let accepted = if r.accepted.is_empty() && r.differs { "<none>".to_string() } else { r.accepted.clone() };
        lines.push(cells_line(
            vec![
                (mark.into(), t.trouble()),
                (r.field.into(), Style::new()),
                (r.spec.clone(), style),
                (accepted, style),
            ],
            &widths,
        ));
    }
    lines.push(Line::raw(""));
    lines.push(section("Conditions", state));
    if d.conditions.is_empty() {
        lines.push(Line::styled("none yet", t.dim()));
    } else {
        lines.extend(condition_lines(&d.conditions, state));
    }
    lines.push(Line::raw(""));
    lines.push(section("Versions", state));
    for v in &d.versions {
        let mut words = vec![if v.served { "served" } else { "not served" }];
        if v.storage {
            words.push("storage");
        }
        if v.deprecated {
            words.push("deprecated");
        }
        lines
            .push(Line::from(vec![Span::styled(format!("{:<10}", v.name), t.yaml_key()), Span::raw(words.join(", "))]));
        let mut sub = vec![];
        if v.status_subresource {
            sub.push("/status".to_string());
        }
        if let Some(scale) = &v.scale {
            let selector = scale.label_selector_path.as_ref().map(|s| format!(" selector {s}")).unwrap_or_default();
            sub.push(format!(
                "/scale (spec {} status {}{selector})",
                scale.spec_replicas_path, scale.status_replicas_path
            ));
        }
        let sub = if sub.is_empty() { "none".to_string() } else { sub.join(", ") };
        lines.push(Line::from(vec![Span::raw("  subresources: "), Span::styled(sub, t.yaml_string())]));
        lines.extend(super::explorer::column_lines(v, &detail.preview, state));
    }
    lines
}
