use super::*;
use crate::cluster::watch::ObjectEvent;
use crate::tui::action::Msg;
use crate::tui::fixtures::{open_widgets, press, state, top, type_keys, widget};
use crate::tui::update::apply;
use crossterm::event::KeyCode;

fn event(type_: ObjectEventType, replicas: i64, rv: &str) -> Result<ObjectEvent, String> {
    let mut object = widget("widget-000", replicas);
    object["metadata"]["resourceVersion"] = rv.into();
    object["metadata"]["managedFields"] = serde_json::json!([
        {"manager": "widget-controller", "operation": "Update", "subresource": "status", "time": "2026-11-22T11:55:00Z"}
    ]);
    Ok(ObjectEvent { type_, object })
}

fn events(s: &State) -> &EventsScreen {
    match s.screen() {
        Screen::Events(e) => e,
        other => panic!("not on the event stream: {}", other.name()),
    }
}

/// Opens the widgets' event stream; returns its id.
pub(crate) fn open_stream(s: &mut State) -> u64 {
    open_widgets(s, 3);
    let effects = type_keys(s, "w");
    let [Effect::WatchEvents { stream, kind, what }] = &effects[..] else { panic!("{effects:?}") };
    assert_eq!(kind.plural, "widgets");
    assert_eq!(what, &Watching { namespace: Some("default".into()), name: None, label_selector: None });
    *stream
}

#[test]
fn w_watches_what_is_shown_and_esc_stops_it() {
    let mut s = state();
    open_stream(&mut s);
    assert_eq!(top(&s), "events");
    assert_eq!(press(&mut s, KeyCode::Esc), vec![Effect::StopEvents]);
    assert_eq!(top(&s), "resources");
    press(&mut s, KeyCode::Enter);
    let effects = type_keys(&mut s, "w");
    let [Effect::WatchEvents { what, .. }] = &effects[..] else { panic!("{effects:?}") };
    assert_eq!(what.name.as_deref(), Some("widget-000"), "on a resource: that object alone");
    assert_eq!(what.namespace.as_deref(), Some("default"));
}

#[test]
fn events_come_in_newest_first_and_a_stream_nobody_shows_is_stopped() {
    let mut s = state();
    let stream = open_stream(&mut s);
    apply(&mut s, Msg::ObjectEvent { stream, event: event(ObjectEventType::Added, 1, "10") });
    apply(&mut s, Msg::ObjectEvent { stream, event: event(ObjectEventType::Modified, 2, "11") });
    let e = events(&s);
    let rvs: Vec<&str> = e.shown().iter().map(|e| e.resource_version.as_str()).collect();
    assert_eq!(rvs, ["11", "10"]);
    let current = e.current().expect("an event");
    assert_eq!(current.manager, Some(("widget-controller".into(), "Update/status".into())));
    let paths: Vec<&str> = current.changes.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(paths, ["spec.replicas", "status.replicas"]);
    apply(&mut s, Msg::ObjectEvent { stream, event: Err("connection refused; reconnecting".into()) });
    assert!(events(&s).error.is_some());
    assert_eq!(
        apply(&mut s, Msg::ObjectEvent { stream: stream + 7, event: event(ObjectEventType::Added, 1, "1") }),
        vec![Effect::StopEvents]
    );
}

#[test]
fn space_pauses_slash_filters_and_enter_opens_the_full_diff() {
    let mut s = state();
    let stream = open_stream(&mut s);
    apply(&mut s, Msg::ObjectEvent { stream, event: event(ObjectEventType::Added, 1, "10") });
    apply(&mut s, Msg::ObjectEvent { stream, event: event(ObjectEventType::Modified, 2, "11") });
    type_keys(&mut s, " ");
    apply(&mut s, Msg::ObjectEvent { stream, event: event(ObjectEventType::Modified, 3, "12") });
    assert_eq!(events(&s).shown().len(), 2, "paused: the new one is kept, not shown");
    assert_eq!(events(&s).log.len(), 3);
    type_keys(&mut s, " ");
    assert_eq!(events(&s).shown().len(), 3, "resumed");
    type_keys(&mut s, "/ADDED");
    press(&mut s, KeyCode::Enter);
    assert_eq!(events(&s).shown().len(), 1, "filtered");
    type_keys(&mut s, "/");
    press(&mut s, KeyCode::Enter);
    type_keys(&mut s, "j");
    assert_eq!(events(&s).current().map(|e| e.resource_version.as_str()), Some("11"));
    apply(&mut s, Msg::ObjectEvent { stream, event: event(ObjectEventType::Modified, 4, "13") });
    assert_eq!(events(&s).current().map(|e| e.resource_version.as_str()), Some("11"), "the cursor stays on its event");
    press(&mut s, KeyCode::Enter);
    let Screen::Text(t) = s.screen() else { panic!("the full diff") };
    let want =
        ["MODIFIED default/widget-000", "by: widget-controller (Update/status)", "spec:", "  ~ spec.replicas: 1 → 2"];
    for line in want {
        assert!(t.lines.iter().any(|l| l == line), "{line:?} in {:?}", t.lines);
    }
    press(&mut s, KeyCode::Esc);
    assert_eq!(top(&s), "events");
    assert!(s.stack.iter().any(|x| matches!(x, Screen::Resources(_))));
}
