//! The event stream's share of the step function: `w` opens it on what is shown (the
//! resources list's namespace and selector, or one object), its keys (move, Space
//! pauses, Enter opens one event's full diff), and the watch's events coming in. The
//! watch itself is an [`Effect`]; nothing here does IO.

use crate::cluster::diff::Section;
use crate::cluster::watch::{ObjectEventType, Watching};
use crate::tui::action::{Action, Effect};
use crate::tui::events::{EventRecord, EventsScreen};
use crate::tui::state::{Screen, State, TextScreen};

/// `w` on the resources list or one resource: the event stream of what it shows.
pub(super) fn open(state: &mut State) -> Vec<Effect> {
    let (kind, what) = match state.screen() {
        Screen::Resources(r) => {
            let namespace = state.namespaces.one().filter(|_| r.kind.namespaced).map(String::from);
            (r.kind.clone(), Watching { namespace, name: None, label_selector: r.selector.clone() })
        }
        Screen::Resource(r) => {
            let what =
                Watching { namespace: r.key.namespace.clone(), name: Some(r.key.name.clone()), label_selector: None };
            (r.kind.clone(), what)
        }
        _ => {
            state.error("the event stream (w) is of a resources list or one resource");
            return vec![];
        }
    };
    state.next_watch += 1;
    let stream = state.next_watch;
    state.stack.push(Screen::Events(Box::new(EventsScreen::new(kind.clone(), what.clone(), stream))));
    vec![Effect::WatchEvents { stream, kind, what }]
}

/// The keys of the event stream screen; `None`: not its own (Esc, help, …).
pub(super) fn on_action(state: &mut State, action: Action, height: usize) -> Option<Vec<Effect>> {
    let Screen::Events(e) = state.screen_mut() else { return None };
    match action {
        Action::Move(n) => e.move_by(n, height),
        Action::Page(n) => e.move_by(n * height.max(1) as isize, height),
        Action::Jump(end) => e.move_by(if end { isize::MAX / 2 } else { isize::MIN / 2 }, height),
        Action::Pause => {
            e.paused = match e.paused {
                Some(_) => None,
                None => Some(e.log.newest()),
            };
            let word =
                if e.paused.is_some() { "paused: new events are kept, not shown (Space resumes)" } else { "resumed" };
            state.info(word);
        }
        Action::Enter => {
            let Some(text) = e.current().map(full_diff) else { return Some(vec![]) };
            state.stack.push(Screen::Text(text));
        }
        Action::Back => {
            state.stack.pop();
            state.message = None;
            return Some(vec![Effect::StopEvents]);
        }
        _ => return None,
    }
    Some(vec![])
}

/// One event of stream `stream`; a stream no screen listens to any more is stopped.
pub(super) fn on_event(
    state: &mut State,
    stream: u64,
    event: Result<crate::cluster::watch::ObjectEvent, String>,
) -> Vec<Effect> {
    let now = state.now;
    let screen = state.stack.iter_mut().find_map(|s| match s {
        Screen::Events(e) if e.stream == stream => Some(e),
        _ => None,
    });
    let Some(e) = screen else { return vec![Effect::StopEvents] };
    match event {
        Ok(event) => {
            e.error = None;
            e.log.push(event, now);
        }
        Err(why) => e.error = Some(why),
    }
    vec![]
}

/// Enter: the whole of one event, every changed path grouped by section.
fn full_diff(e: &EventRecord) -> TextScreen {
    let what = e.key.as_ref().map(|k| k.display()).unwrap_or_else(|| "(bookmark)".into());
    let mut lines = vec![
        format!("{} {what}", e.type_.as_str()),
        format!("resourceVersion: {}", e.resource_version),
        format!("received: {}", e.at),
    ];
    if let Some((manager, op)) = &e.manager {
        lines.push(format!("by: {manager} ({op})"));
    }
    if e.type_ == ObjectEventType::Modified && e.changes.is_empty() {
        lines.push(String::new());
        lines.push("no change seen (the version before is not known, or only bookkeeping changed)".into());
    }
    for section in [Section::Spec, Section::Status, Section::Metadata, Section::Other] {
        let changes: Vec<String> =
            e.changes.iter().filter(|c| c.section() == section).map(|c| format!("  {}", c.line(200))).collect();
        if !changes.is_empty() {
            lines.push(String::new());
            lines.push(format!("{}:", section.word()));
            lines.extend(changes);
        }
    }
    let mut text = TextScreen::new(format!("event {} {what}", e.seq), false, None);
    text.lines = lines;
    text
}

#[cfg(test)]
#[path = "events_update_tests.rs"]
mod tests;
