//! The CEL workbench screen: the CRD's rules (version, where, transition or not, rule,
//! message) above the rule under the cursor and its latest try — the values, the verdict,
//! the causes in kube's words, the estimated and the actual cost — and how many cases are
//! kept for `s`.

use super::{block, cells_line};
use crate::tui::cel_workbench::{CelWorkbench, Sample, Tried};
use crate::tui::state::State;
use crate::tui::table::scroll_offset;
use kubectl_crd_engine::cel::Verdict;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

/// Widths of VERSION, PATH, OLDSELF, RULE; MESSAGE takes the rest.
const WIDTHS: [usize; 4] = [8, 24, 7, 40];
const HEADINGS: [&str; 5] = ["VERSION", "PATH", "OLDSELF", "RULE", "MESSAGE"];

pub fn draw(frame: &mut Frame, area: Rect, state: &State, b: &CelWorkbench) {
    let rows = u16::try_from(b.rules.len()).unwrap_or(u16::MAX).saturating_add(3);
    let [list, detail] = Layout::vertical([Constraint::Max(rows.max(4)), Constraint::Min(6)]).areas(area);
    rules(frame, list, state, b);
    result(frame, detail, state, b);
}

fn rules(frame: &mut Frame, area: Rect, state: &State, b: &CelWorkbench) {
    let t = &state.theme;
    let title = Line::from(vec![
        Span::styled(format!(" cel {} ", b.name), t.title()),
        Span::styled(format!("[{} rules] ", b.rules.len()), t.dim()),
    ]);
    let block = block(title, true, state);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let height = usize::from(inner.height).saturating_sub(1);
    let heading = HEADINGS.iter().map(|h| (h.to_string(), t.column_header())).collect();
    let mut lines = vec![cells_line(heading, &WIDTHS)];
    let offset = scroll_offset(b.offset, b.cursor, height);
    for (i, site) in b.rules.iter().enumerate().skip(offset).take(height) {
        let cells = vec![
            (site.version.clone(), t.dim()),
            (site.schema_path(), Style::new()),
            ((if site.transition() { "yes" } else { "" }).to_string(), t.warning()),
            (site.rule.rule.replace('\n', " "), Style::new()),
            (site.message(), t.dim()),
        ];
        let style = if i == b.cursor { t.selected() } else { Style::new() };
        lines.push(cells_line(cells, &WIDTHS).style(style));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

fn result(frame: &mut Frame, area: Rect, state: &State, b: &CelWorkbench) {
    let t = &state.theme;
    let kept = format!("[{} case{} kept: s saves] ", b.tried.len(), if b.tried.len() == 1 { "" } else { "s" });
    let title = Line::from(vec![Span::styled(" try ", t.title()), Span::styled(kept, t.dim())]);
    let block = block(title, false, state);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let label = |l: &str| Span::styled(format!("{l:<10}"), t.column_header());
    let mut lines = vec![];
    if let Some(site) = b.current() {
        lines.push(Line::from(vec![label("rule"), Span::raw(site.rule.rule.replace('\n', " "))]));
        lines.push(Line::from(vec![label("message"), Span::raw(site.message())]));
    }
    let source = match &b.sample {
        Sample::Loading => "reading an object of the kind…".to_string(),
        Sample::Absent(why) => why.clone(),
        Sample::Found(v) => format!("values start from {}", v["metadata"]["name"].as_str().unwrap_or("an object")),
    };
    match b.last_try() {
        None => {
            lines.push(Line::raw(""));
            lines.push(Line::styled(format!("Enter: edit self in the editor and evaluate ({source})"), t.dim()));
        }
        Some(tried) => lines.extend(try_lines(tried, state)),
    }
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
}

fn try_lines<'a>(tried: &Tried, state: &State) -> Vec<Line<'a>> {
    let t = &state.theme;
    let label = |l: &str| Span::styled(format!("{l:<10}"), t.column_header());
    let out = &tried.outcome;
    let mut lines = vec![Line::from(vec![label("self"), Span::raw(tried.self_value.to_string())])];
    if let Some(old) = &tried.old_self {
        lines.push(Line::from(vec![label("oldSelf"), Span::raw(old.to_string())]));
    }
    let (word, style) = match out.verdict {
        Verdict::Passed => ("PASSED", t.good()),
        Verdict::Failed => ("FAILED", t.trouble()),
        Verdict::Skipped => ("SKIPPED (a transition rule runs on updates only)", t.warning()),
    };
    lines.push(Line::from(vec![label("result"), Span::styled(word, style)]));
    let runtime = out.runtime_cost.map_or_else(|| "stopped by a cost limit".to_string(), |c| c.to_string());
    let message_cost = if out.message_estimated_cost > 0 {
        format!(" (messageExpression {})", out.message_estimated_cost)
    } else {
        String::new()
    };
    lines.push(Line::from(vec![
        label("cost"),
        Span::raw(format!("estimated {}{message_cost} · actual {runtime}", out.estimated_cost)),
    ]));
    if let Some(e) = &out.compile_error {
        lines.push(Line::from(vec![label("compile"), Span::styled(e.clone(), t.error())]));
    }
    // Last: they can be long, and wrap.
    for cause in &out.causes {
        lines.push(Line::from(vec![label("cause"), Span::styled(cause.text(), t.error())]));
    }
    lines
}
