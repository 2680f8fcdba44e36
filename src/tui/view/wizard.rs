//! The migration wizard's screen: the path line, the resume offer, the plan, and the run —
//! steps with their state beside the log, a gauge for the running step, and the question
//! or the outcome at the bottom. Every word the wizard says is here.

use super::block;
use crate::migrate::report;
use crate::migrate::{Phase, StepRecord, StepState};
use crate::tui::model::age;
use crate::tui::state::State;
use crate::tui::wizard::{Field, Found, Run, RunStatus, Stage, Undo, Wizard};
use k8s_openapi::jiff::Timestamp;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

/// The keys the crumbs line shows for the wizard's stage.
pub fn hints(w: &Wizard) -> &'static str {
    match &w.stage {
        Stage::Target => "  <enter> plan  <tab> switch field  <ctrl-e> editor  <esc> cancel",
        Stage::Resume(_) => "  <y> resume  <r> roll back  <n> start anew  <esc> cancel",
        Stage::Plan { .. } => "  <enter> start  <j/k> scroll  <esc> back",
        Stage::Run(r) => match r.status {
            RunStatus::Asking(_) => "  <y> run the step  <n> stop here",
            RunStatus::Halted { .. } | RunStatus::Done(_) => "  <esc> close  <j/k> scroll the log",
            _ => "  <q> quit (the journal keeps the place)",
        },
        Stage::Looking | Stage::Busy(_) => "  <esc> cancel",
    }
}

/// Draws the wizard in the body.
pub fn draw(frame: &mut Frame, area: Rect, state: &State, w: &Wizard) {
    let t = &state.theme;
    let b = block(Line::styled(format!(" migrate {} ", w.crd), t.title()), true, state);
    let inner = b.inner(area);
    frame.render_widget(b, area);
    match &w.stage {
        Stage::Looking => {
            let root = state.journal_root.as_ref().map(|r| r.display().to_string()).unwrap_or_default();
            let line = format!("looking for an unfinished migration of {} in {root}…", w.crd);
            frame.render_widget(Paragraph::new(Line::styled(line, t.dim())), inner);
        }
        Stage::Busy(what) => frame.render_widget(Paragraph::new(Line::styled(what.clone(), t.dim())), inner),
        Stage::Target => target(frame, inner, state, w),
        Stage::Resume(found) => resume(frame, inner, state, found),
        Stage::Plan { plan, lines, asking, starting } => {
            let footer = if plan.is_blocked() {
                vec![Line::styled(
                    "The migration cannot start: the problems above must be fixed first (Esc: back).",
                    t.error(),
                )]
            } else if *starting {
                vec![Line::styled("creating the journal…", t.dim())]
            } else if *asking {
                vec![question(state, &report::start_question(plan))]
            } else {
                vec![Line::styled(
                    "Enter starts the migration (it asks before each destructive step) · j/k scroll · Esc back",
                    t.dim(),
                )]
            };
            // As tall as the footer's wrapped rows, so the question's [y/n] is never cut off.
            let footer = Paragraph::new(footer).wrap(Wrap { trim: false });
            let footer_rows = u16::try_from(footer.line_count(inner.width)).unwrap_or(u16::MAX);
            let [body, foot] = Layout::vertical([Constraint::Min(1), Constraint::Length(footer_rows)]).areas(inner);
            let scroll = w.scroll.min(lines.len().saturating_sub(usize::from(body.height)));
            let shown: Vec<Line> =
                lines.iter().skip(scroll).take(usize::from(body.height)).map(|l| plan_line(state, l)).collect();
            frame.render_widget(Paragraph::new(shown), body);
            frame.render_widget(footer, foot);
        }
        Stage::Run(run) => run_screen(frame, inner, state, w, run),
    }
}

fn phase_word(phase: Phase) -> &'static str {
    match phase {
        Phase::Forward => "migrating",
        Phase::Rollback => "rolling back",
        Phase::Completed => "completed",
        Phase::RolledBack => "rolled back",
    }
}

fn question<'a>(state: &State, text: &str) -> Line<'a> {
    let t = &state.theme;
    Line::from(vec![Span::styled(format!("{text} "), t.marked()), Span::styled("[y/n]", t.yaml_key())])
}

/// Headings of the plan in the title style, problems in red.
fn plan_line<'a>(state: &State, line: &str) -> Line<'a> {
    let t = &state.theme;
    let style = if line.starts_with("  - ") || line.starts_with("Problems (") {
        t.error()
    } else if !line.starts_with(' ') && line.ends_with(':') || line.starts_with("Migration ") {
        t.title()
    } else {
        Style::new()
    };
    Line::styled(line.to_string(), style)
}

fn target(frame: &mut Frame, area: Rect, state: &State, w: &Wizard) {
    let t = &state.theme;
    let lines = vec![
        Line::raw(format!("Move the objects of {} to a new CRD (another group, kind, plural or scope).", w.crd)),
        Line::styled(
            "The plan comes first and changes nothing; the run asks before each destructive step and keeps a journal and a backup, so it can be resumed or rolled back.",
            t.dim(),
        ),
        Line::raw(""),
        field(state, "New CRD file:       ", &w.path.text, w.field == Field::Path),
        field(state, "Controllers to stop:", &w.controllers.text, w.field == Field::Controllers),
        Line::styled(
            "  NS/DEPLOYMENT or NS/RESOURCE/NAME (any with /scale), comma- or space-separated; scaled to 0, then back",
            t.dim(),
        ),
        Line::raw(""),
        Line::styled(
            format!(
                "Enter plans · Tab (↑/↓) switches fields · Ctrl-E writes the new CRD in the editor, starting from {} · Esc cancels",
                w.crd
            ),
            t.dim(),
        ),
    ];
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), area);
}

/// A line of the first screen: its label, and the cursor when keys type into it.
fn field<'a>(state: &State, label: &'static str, text: &str, focused: bool) -> Line<'a> {
    let t = &state.theme;
    let label = Span::styled(format!("{label} "), if focused { t.title() } else { t.dim() });
    let cursor = if focused { "▏" } else { "" };
    Line::from(vec![label, Span::raw(text.to_string()), Span::raw(cursor)])
}

fn resume(frame: &mut Frame, area: Rect, state: &State, found: &Found) {
    let t = &state.theme;
    let j = &found.journal;
    let phase = phase_word(j.phase);
    let begun = match j.created.parse::<Timestamp>() {
        Ok(created) => format!("begun {} ago", age(created, state.now)),
        Err(_) => format!("begun {}", j.created),
    };
    let mut lines = vec![
        Line::styled(
            format!("An unfinished migration of {} to {} ({phase}, {begun}).", j.old_crd_name, j.new_crd_name),
            t.marked(),
        ),
        Line::from(vec![Span::styled("journal ", t.dim()), Span::raw(found.dir.display().to_string())]),
        Line::raw(""),
    ];
    let next = j.steps().iter().position(|r| r.state != StepState::Done);
    for (i, r) in j.steps().iter().enumerate() {
        lines.push(step_line(state, r, if Some(i) == next { Some("▶") } else { None }, true));
    }
    if found.others > 0 {
        lines.push(Line::styled(format!("(and {} other unfinished journal(s))", found.others), t.dim()));
    }
    lines.push(Line::raw(""));
    if found.asking_rollback {
        lines.push(question(
            state,
            &format!("Roll back the migration of {} to {} from its backup?", j.old_crd_name, j.new_crd_name),
        ));
    } else {
        lines.push(Line::styled(
            "y resumes where it stopped · r rolls it back · n starts a new migration · Esc cancels",
            t.yaml_key(),
        ));
    }
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), area);
}

/// A step as a row: a mark for its state, its name, `(asks)` when destructive, and its
/// summary when there is room.
fn step_line<'a>(state: &State, r: &StepRecord, current: Option<&'static str>, summary: bool) -> Line<'a> {
    let t = &state.theme;
    let (mark, style) = match (r.state, current) {
        (StepState::Done, _) => ("✓", t.good()),
        (_, Some(mark)) => (mark, t.marked()),
        (StepState::Started, None) => ("!", t.warning()),
        (StepState::Pending, None) => ("·", t.dim()),
    };
    let asks = if r.step.is_destructive() { " (asks)" } else { "" };
    let mut spans = vec![Span::styled(format!("{mark} {:<24}", format!("{}{asks}", r.step.name())), style)];
    if let Some(s) = r.summary.as_ref().filter(|_| summary) {
        spans.push(Span::styled(format!(" {s}"), t.dim()));
    }
    Line::from(spans)
}

fn run_screen(frame: &mut Frame, area: Rect, state: &State, w: &Wizard, run: &Run) {
    let t = &state.theme;
    let j = &run.journal;
    let phase = phase_word(j.phase);
    let head = vec![
        Line::from(vec![
            Span::styled(format!("{} → {}", j.old_crd, j.new_crd), t.title()),
            Span::styled(format!("  {phase}"), t.dim()),
        ]),
        Line::from(vec![Span::styled("journal ", t.dim()), Span::raw(j.dir.display().to_string())]),
    ];
    let bottom = Paragraph::new(status_lines(state, run)).wrap(Wrap { trim: false });
    // Sized by the rows its lines take once wrapped, not by how many lines there are: a
    // long error would otherwise push the question under it out of sight.
    let bottom_rows = u16::try_from(bottom.line_count(area.width)).unwrap_or(u16::MAX);
    let bottom_height = bottom_rows.min(area.height / 2);
    let [head_area, middle, gauge_area, bottom_area] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Min(2),
        Constraint::Length(1),
        Constraint::Length(bottom_height),
    ])
    .areas(area);
    frame.render_widget(Paragraph::new(head), head_area);

    let [steps_area, _, log_area] =
        Layout::horizontal([Constraint::Length(26), Constraint::Length(2), Constraint::Min(10)]).areas(middle);
    let marker = match &run.status {
        RunStatus::Running(_) => Some("▶"),
        RunStatus::Asking(_) => Some("?"),
        RunStatus::Halted { .. } => Some("✗"),
        _ => None,
    };
    let steps: Vec<Line> =
        j.steps.iter().map(|r| step_line(state, r, marker.filter(|_| Some(r.step) == j.next), false)).collect();
    frame.render_widget(Paragraph::new(steps), steps_area);
    // The log's tail, wrapped to the pane; scrolling goes back from it.
    let rows: Vec<Line> = run
        .log
        .iter()
        .flat_map(|l| {
            let style = if l.starts_with('✗') {
                t.error()
            } else if l.starts_with("  ") {
                t.dim()
            } else {
                Style::new()
            };
            wrap(l, usize::from(log_area.width)).into_iter().map(move |row| Line::styled(row, style))
        })
        .collect();
    let height = usize::from(log_area.height);
    let end = rows.len().saturating_sub(w.scroll.min(rows.len().saturating_sub(height)));
    let log: Vec<Line> = rows[end.saturating_sub(height)..end].to_vec();
    frame.render_widget(Paragraph::new(log), log_area);

    frame.render_widget(Paragraph::new(gauge(state, run, usize::from(gauge_area.width))), gauge_area);
    // When even half the screen is too little, the end shows: the question, or what to do
    // next (the whole error is in the log above).
    frame.render_widget(bottom.scroll((bottom_rows.saturating_sub(bottom_height), 0)), bottom_area);
}

/// A log line cut into rows of `width` characters at spaces where it can be, the rows
/// after the first indented.
fn wrap(line: &str, width: usize) -> Vec<String> {
    const INDENT: &str = "    ";
    if width < 2 * INDENT.len() {
        return vec![line.to_string()];
    }
    let mut rows = vec![];
    let mut rest = line;
    loop {
        let (indent, room) = if rows.is_empty() { ("", width) } else { (INDENT, width - INDENT.len()) };
        let Some((cut, _)) = rest.char_indices().nth(room) else {
            rows.push(format!("{indent}{rest}"));
            return rows;
        };
        let (row, next) = match rest[..cut].rfind(' ').filter(|&at| rest[..at].chars().count() > room / 2) {
            Some(at) => (&rest[..at], &rest[at + 1..]),
            None => rest.split_at(cut),
        };
        rows.push(format!("{indent}{row}"));
        rest = next;
    }
}

/// `▶ recreate [=========>          ] 120/180`, in text so it reads without colour.
fn gauge<'a>(state: &State, run: &Run, width: usize) -> Line<'a> {
    let t = &state.theme;
    let RunStatus::Running(step) = run.status else {
        return Line::raw("");
    };
    let Some((done, total)) = run.progress else {
        return Line::styled(format!("▶ {step}: running…"), t.marked());
    };
    let label = format!("▶ {step} ");
    let count = format!(" {done}/{total}");
    let bar = width.saturating_sub(label.chars().count() + count.len() + 2).min(60);
    let filled = (bar as u64 * done.min(total)).checked_div(total).map_or(bar, |n| n as usize);
    let mut cells = "=".repeat(filled);
    if filled < bar {
        cells.push('>');
        cells.push_str(&" ".repeat(bar - filled - 1));
    }
    Line::from(vec![Span::styled(label, t.marked()), Span::styled(format!("[{cells}]"), t.good()), Span::raw(count)])
}

/// The bottom of the run: the question, why it stopped and what now, or the summary.
fn status_lines<'a>(state: &State, run: &Run) -> Vec<Line<'a>> {
    let t = &state.theme;
    let j = &run.journal;
    match &run.status {
        RunStatus::Waiting => vec![Line::styled("preparing the roll-back…", t.dim())],
        RunStatus::Running(_) => vec![],
        RunStatus::Verifying => vec![Line::styled("verifying the backup against the cluster…", t.dim())],
        RunStatus::Asking(q) => vec![question(state, q)],
        RunStatus::Halted { error, undo } => {
            let mut lines = vec![Line::styled(format!("✗ {error}"), t.error())];
            match undo {
                Undo::Refusal => lines.push(question(
                    state,
                    "Nothing was deleted. Undo what the run changed (controllers back, the new CRD removed)?",
                )),
                Undo::Asking => lines.push(question(
                    state,
                    &format!("Roll back the migration of {} to {} from its backup?", j.old_crd, j.new_crd),
                )),
                Undo::Available | Undo::Nothing => {
                    lines.push(Line::styled(report::resume_hint(&j.dir, &state.target.shell), t.warning()));
                    let undo = if *undo == Undo::Available { " · r rolls it back" } else { "" };
                    lines.push(Line::styled(
                        format!("m on {} or {} resumes it here{undo} · Esc closes", j.old_crd, j.new_crd),
                        t.yaml_key(),
                    ));
                }
            }
            lines
        }
        RunStatus::Done(summary) => {
            let (word, style) = match (j.phase, summary.differences) {
                (Phase::RolledBack, 0) => ("Rolled back", t.good()),
                (_, 0) => ("Done", t.good()),
                _ => ("Done, with differences", t.error()),
            };
            let mut lines = vec![Line::styled(format!("{word}: {} difference(s).", summary.differences), style)];
            lines.extend(summary.lines.iter().map(|l| Line::raw(l.clone())));
            lines.push(Line::styled("Esc closes", t.dim()));
            lines
        }
    }
}
