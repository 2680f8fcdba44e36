//! The owner tree and the conditions timeline, drawn (helpers are the parent's).

use super::{on_resource, render, text};
use crate::tui::action::Msg;
use crate::tui::fixtures::{state, type_keys, widget};
use crate::tui::owner_tree::tests::listed;
use crate::tui::table::ObjKey;
use crate::tui::update::apply;
use serde_json::json;

#[test]
fn the_owner_tree_of_a_resource_shows_owners_dependents_and_a_missing_owner() {
    let mut s = state();
    on_resource(&mut s);
    type_keys(&mut s, "o");
    let loading = render(&mut s, 110, 14);
    assert!(text(&loading).contains("listing every kind…"), "{}", text(&loading));
    let request = s.next_watch;
    apply(&mut s, Msg::Owners { request, result: Ok(listed()) });
    type_keys(&mut s, "j");
    let buf = render(&mut s, 110, 14);
    snapshot!("owner_tree", buf);
    // Databases not listed (not served, or forbidden): the owner may exist, and it says so.
    let mut partial = listed();
    partial.kinds.retain(|k| k.kind != "Database");
    apply(&mut s, Msg::Owners { request, result: Ok(partial) });
    let buf = render(&mut s, 110, 14);
    assert!(text(&buf).contains("owner not listed: Database is not served or not readable"), "{}", text(&buf));
    apply(&mut s, Msg::Owners { request, result: Err("the server went away".into()) });
    let buf = render(&mut s, 110, 14);
    assert!(text(&buf).contains("✗ cannot list: the server went away"), "{}", text(&buf));
}

#[test]
fn the_conditions_timeline_lists_transitions_newest_first() {
    let mut s = state();
    on_resource(&mut s);
    let mut later = widget("widget-000", 0);
    later["status"]["conditions"] = json!([
        {"type": "Ready", "status": "False", "reason": "Degraded", "message": "one replica is down",
            "lastTransitionTime": "2026-11-22T12:10:00Z"},
        {"type": "Progressing", "status": "True", "reason": "Rollout", "message": "replacing it",
            "lastTransitionTime": "2026-11-22T12:10:05Z"},
    ]);
    apply(&mut s, Msg::Object { key: ObjKey::new(Some("default"), "widget-000"), result: Ok(later.clone()) });
    // Read again unchanged: nothing new.
    apply(&mut s, Msg::Object { key: ObjKey::new(Some("default"), "widget-000"), result: Ok(later) });
    type_keys(&mut s, "t");
    let buf = render(&mut s, 120, 20);
    snapshot!("conditions_timeline", buf);
    type_keys(&mut s, "t");
    let buf = render(&mut s, 120, 20);
    assert!(text(&buf).contains("spec") && !text(&buf).contains("conditions timeline"), "t again: spec and status");
}
