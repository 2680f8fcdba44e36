use super::*;
use crate::cluster::counts::CountTarget;
use crate::tui::action::{Effect, Msg, WatchEvent};
use crate::tui::fixtures::{self, ctrl, open_widgets, press, state, top, type_keys, widget, widget_table};
use crate::tui::model::Registration;
use crate::tui::state::{ConflictDialog, Deletion, Level, ScaleChange};
use crate::tui::table::ObjKey;
use crossterm::event::KeyCode;

#[test]
fn enter_drills_in_and_esc_comes_back_stopping_the_watch() {
    let mut s = state();
    open_widgets(&mut s, 5);
    assert_eq!(top(&s), "resources");
    let effects = press(&mut s, KeyCode::Enter);
    assert_eq!(top(&s), "resource");
    assert!(matches!(&effects[..], [Effect::LoadObject { key, .. }] if key.name == "widget-000"));
    assert_eq!(press(&mut s, KeyCode::Esc), vec![]);
    assert_eq!(press(&mut s, KeyCode::Esc), vec![Effect::StopWatch]);
    assert_eq!(top(&s), "registrations", "Enter on a CRD went straight to its objects");
    type_keys(&mut s, "i");
    assert_eq!(top(&s), "detail", "the detail is one key away");
    assert!(matches!(&press(&mut s, KeyCode::Enter)[..], [Effect::LoadTable { .. }]), "and its objects from there");
    assert!(type_keys(&mut s, "q").is_empty() && s.quit);
}

#[test]
fn watch_events_change_rows_and_stale_ones_are_dropped() {
    let mut s = state();
    let watch = open_widgets(&mut s, 3);
    let row = |name: &str| widget_table(1).rows[0].clone().renamed(name);
    apply(&mut s, Msg::Watch { watch, event: WatchEvent::Upsert(row("widget-new")) });
    apply(&mut s, Msg::Watch { watch, event: WatchEvent::Delete(ObjKey::new(Some("default"), "widget-001")) });
    apply(&mut s, Msg::Watch { watch: watch - 1, event: WatchEvent::Upsert(row("from-an-old-watch")) });
    s.prepare();
    let Screen::Resources(r) = s.screen() else { panic!() };
    assert_eq!(r.table.total(), 3);
    assert!(r.table.get(&ObjKey::new(Some("default"), "widget-new")).is_some());
    assert!(r.table.get(&ObjKey::new(Some("default"), "from-an-old-watch")).is_none());
}

#[test]
fn marks_and_scale_of_several_rows_step_each() {
    let mut s = state();
    open_widgets(&mut s, 10);
    type_keys(&mut s, "  ");
    let Screen::Resources(r) = s.screen() else { panic!() };
    assert_eq!(r.table.marks().len(), 2);
    let effects = type_keys(&mut s, "s");
    assert!(effects.is_empty(), "no single scale to read for several rows");
    let effects = type_keys(&mut s, "++-+");
    assert!(effects.is_empty());
    let effects = press(&mut s, KeyCode::Enter);
    let [Effect::SetScale { targets, change, .. }] = &effects[..] else { panic!("{effects:?}") };
    assert_eq!(targets.len(), 2);
    assert_eq!(*change, ScaleChange::By(2));
}

/// The scale dialog of widget-000, opened from its detail screen and loaded with `desired`.
fn scale_dialog_of_widget_000(desired: i32) -> State {
    let mut s = state();
    open_widgets(&mut s, 3);
    press(&mut s, KeyCode::Enter);
    let key = ObjKey::new(Some("default"), "widget-000");
    apply(&mut s, Msg::Object { key: key.clone(), result: Ok(widget("widget-000", 0)) });
    let effects = type_keys(&mut s, "s");
    assert!(matches!(&effects[..], [Effect::LoadScale { .. }]));
    let selector = Some("app=widget-000".into());
    let view = crate::cluster::objects::ScaleView { desired, current: 0, selector, resource_version: None };
    apply(&mut s, Msg::Scale { key, result: Ok(view) });
    s
}

#[test]
fn scale_one_from_zero_and_type_a_number() {
    let mut s = scale_dialog_of_widget_000(0);
    type_keys(&mut s, "+");
    let effects = press(&mut s, KeyCode::Enter);
    assert!(matches!(&effects[..], [Effect::SetScale { change: ScaleChange::To(1), .. }]));
    type_keys(&mut s, "s");
    type_keys(&mut s, "12");
    let effects = press(&mut s, KeyCode::Enter);
    assert!(matches!(&effects[..], [Effect::SetScale { change: ScaleChange::To(12), .. }]));
    let effects = apply(&mut s, Msg::Saved("scaled".into()));
    assert!(matches!(&effects[..], [Effect::LoadObject { .. }]), "the resource screen reloads after a write");
}

#[test]
fn a_step_past_the_largest_count_stays_there_instead_of_wrapping_to_zero() {
    let mut s = scale_dialog_of_widget_000(i32::MAX);
    type_keys(&mut s, "++");
    let effects = press(&mut s, KeyCode::Enter);
    assert!(matches!(&effects[..], [Effect::SetScale { change: ScaleChange::To(i32::MAX), .. }]), "{effects:?}");
}

#[test]
fn edits_need_the_subresource_and_readonly_turns_writes_off() {
    let mut s = state();
    open_widgets(&mut s, 3);
    assert!(matches!(&type_keys(&mut s, "e")[..], [Effect::Edit { part: EditPart::Spec, .. }]));
    assert!(matches!(&type_keys(&mut s, "E")[..], [Effect::Edit { part: EditPart::Status, .. }]));
    s.readonly = true;
    for k in ["e", "E", "s"] {
        assert!(type_keys(&mut s, k).is_empty(), "{k}");
        assert!(matches!(&s.message, Some((Level::Error, m)) if m.contains("read-only")));
    }
    let mut s = state();
    type_keys(&mut s, ":crd");
    press(&mut s, KeyCode::Enter);
    // clusterpolicies: no subresources.
    let reg = s.registrations.find("clusterpolicies.demo.example.com").cloned().expect("fixture");
    open_resources(&mut s, &reg);
    let watch = s.next_watch;
    apply(&mut s, Msg::Table { watch, result: Ok(widget_table(1)) });
    s.prepare();
    // Without /status, .status is an ordinary field: e and E both edit the whole object.
    for k in ["e", "E"] {
        assert!(matches!(&type_keys(&mut s, k)[..], [Effect::Edit { part: EditPart::Object, .. }]), "{k}");
        assert!(
            matches!(&s.message, Some((Level::Info, m)) if m.contains("no status subresource: .status is an ordinary field"))
        );
    }
    assert!(type_keys(&mut s, "s").is_empty());
    assert!(matches!(&s.message, Some((Level::Error, m)) if m.contains("no scale subresource")));
}

#[test]
fn troubled_registrations_say_why_they_cannot_be_opened() {
    let mut s = state();
    let reg = s.registrations.find("gadgets.demo.example.com").cloned().expect("fixture");
    assert!(open_resources(&mut s, &reg).is_empty());
    assert!(matches!(&s.message, Some((Level::Error, m)) if m.contains("NameConflict")), "{:?}", s.message);
}

#[test]
fn conflicts_offer_reapply_or_discard() {
    let mut s = state();
    let kind = s.registrations.find("widgets.demo.example.com").and_then(|r| r.resource.clone()).expect("served");
    let dialog = ConflictDialog {
        kind,
        key: ObjKey::new(Some("default"), "w1"),
        part: EditPart::Status,
        server_changes: vec!["~ status.phase: \"A\" → \"B\"".into()],
        kept: "/tmp/kept.yaml".into(),
        base: serde_json::json!({"status": {}}),
        edited: serde_json::json!({"status": {"phase": "C"}}),
    };
    apply(&mut s, Msg::Conflict(Box::new(dialog.clone())));
    assert!(type_keys(&mut s, "x").is_empty(), "other keys wait");
    let effects = type_keys(&mut s, "r");
    assert!(matches!(&effects[..], [Effect::Reapply { part: EditPart::Status, .. }]));
    apply(&mut s, Msg::Conflict(Box::new(dialog.clone())));
    let effects = type_keys(&mut s, "e");
    let [Effect::EditAgain(again)] = &effects[..] else { panic!("back to the editor: {effects:?}") };
    assert!(again.error.contains("409 Conflict") && again.error.contains("status.phase"), "{}", again.error);
    assert_eq!(again.kept, dialog.kept);
    // A refusal from the re-apply goes back to the editor too.
    assert_eq!(apply(&mut s, Msg::EditRefused(again.clone())), vec![Effect::EditAgain(again.clone())]);
    apply(&mut s, Msg::Conflict(Box::new(dialog)));
    let effects = type_keys(&mut s, "d");
    assert!(matches!(&effects[..], [Effect::LoadObject { .. }]));
    assert!(matches!(&s.message, Some((Level::Info, m)) if m.contains("/tmp/kept.yaml")));
}

#[test]
fn yaml_and_describe_of_the_selection() {
    let mut s = state();
    type_keys(&mut s, "y");
    let Screen::Text(t) = s.screen() else { panic!() };
    assert!(t.yaml && t.title == "yaml customresourcedefinition/clusterpolicies.demo.example.com");
    assert!(t.lines.iter().any(|l| l == "kind: CustomResourceDefinition"));
    press(&mut s, KeyCode::Esc);
    open_widgets(&mut s, 2);
    let effects = type_keys(&mut s, "d");
    assert!(matches!(&effects[..], [Effect::LoadObject { .. }]));
    apply(&mut s, Msg::Object { key: ObjKey::new(Some("default"), "widget-000"), result: Ok(widget("widget-000", 1)) });
    let Screen::Text(t) = s.screen() else { panic!() };
    assert_eq!(t.lines[0], "Name:         widget-000");
}

#[test]
fn esc_and_a_key_typed_together_are_both_taken() {
    let mut s = state();
    type_keys(&mut s, "G");
    press(&mut s, KeyCode::Enter);
    assert_eq!(top(&s), "resources");
    let alt_k = crossterm::event::KeyEvent::new(KeyCode::Char('k'), crossterm::event::KeyModifiers::ALT);
    crate::tui::on_event(&mut s, crossterm::event::Event::Key(alt_k));
    assert_eq!(top(&s), "registrations");
    assert_eq!(s.registrations.cursor, 2, "back, then up");
}

#[test]
fn a_list_arrives_page_by_page() {
    let mut s = state();
    let watch = open_widgets(&mut s, 3);
    let more = widget_table(6).rows.split_off(3);
    apply(&mut s, Msg::Rows { watch, rows: more, done: false });
    let Screen::Resources(r) = s.screen() else { panic!() };
    assert!(r.loading);
    apply(&mut s, Msg::Rows { watch, rows: vec![], done: true });
    s.prepare();
    let Screen::Resources(r) = s.screen() else { panic!() };
    assert_eq!((r.table.total(), r.loading), (6, false));
}

fn names(s: &State) -> Vec<&str> {
    s.registrations.items.iter().map(|r| r.name()).collect()
}

#[test]
fn the_first_list_starts_the_crd_watch_and_its_changes_keep_the_cursor_where_it_was() {
    let mut s = state();
    assert_eq!(apply(&mut s, Msg::Registrations(Ok(fixtures::registrations()))), vec![Effect::WatchRegistrations]);
    type_keys(&mut s, "G");
    assert_eq!(s.registrations.current().map(|r| r.name()), Some("widgets.demo.example.com"));

    // A new CRD sorting above the cursor: shown at once, counted, the cursor still on widgets.
    let anvils = fixtures::crd("anvils", "Anvil").build();
    let effects = apply(&mut s, Msg::CrdChanged(Box::new(anvils.clone())));
    assert_eq!(effects, vec![Effect::CountResources(CountTarget::of(&anvils).into_iter().collect())]);
    assert_eq!(names(&s)[0], "anvils.demo.example.com");
    let pending = s.registrations.find("anvils.demo.example.com").expect("anvils");
    assert_eq!((pending.count(), pending.counting), (None, true), "shown as being counted");
    assert_eq!(s.registrations.current().map(|r| r.name()), Some("widgets.demo.example.com"));
    apply(&mut s, Msg::Counted { crd: "anvils.demo.example.com".into(), count: Some(0) });
    let counted = s.registrations.find("anvils.demo.example.com").expect("anvils");
    assert_eq!((counted.count(), counted.counting), (Some(0), false));

    // The same CRD again (a relist) changes nothing and counts nothing.
    assert_eq!(apply(&mut s, Msg::CrdChanged(Box::new(anvils))), vec![]);

    // A changed CRD that serves the same endpoint keeps its count.
    let mut labelled = s.registrations.find("widgets.demo.example.com").expect("widgets").crd.clone();
    labelled.metadata.labels = Some([("team".to_string(), "a".to_string())].into());
    assert_eq!(apply(&mut s, Msg::CrdChanged(Box::new(labelled))), vec![]);
    let widgets = s.registrations.find("widgets.demo.example.com").expect("widgets");
    assert_eq!((widgets.count(), widgets.crd.metadata.labels.as_ref().map(|l| l.len())), (Some(180), Some(1)));

    // Deleted, and gone from a relist: the cursor stays on widgets throughout.
    apply(&mut s, Msg::CrdDeleted("anvils.demo.example.com".into()));
    assert!(s.registrations.find("anvils.demo.example.com").is_none());
    let kept = ["widgets.demo.example.com", "clusterpolicies.demo.example.com"].map(String::from).to_vec();
    apply(&mut s, Msg::CrdsListed(kept));
    assert_eq!(names(&s), ["clusterpolicies.demo.example.com", "widgets.demo.example.com"]);
    assert_eq!(s.registrations.current().map(|r| r.name()), Some("widgets.demo.example.com"));
}

#[test]
fn a_crd_that_starts_serving_is_counted_again() {
    let mut s = state();
    let mut waiting = fixtures::crd("anvils", "Anvil").build();
    waiting.status = None;
    apply(&mut s, Msg::CrdChanged(Box::new(waiting)));
    let anvils = s.registrations.find("anvils.demo.example.com").expect("shown before it is established");
    assert!(anvils.resource.is_none());
    // No verdict on its names yet is no name conflict: it only waits to be established.
    assert_eq!((anvils.names_accepted(), anvils.troubles()), (None, vec![crate::tui::model::Trouble::NotEstablished]));
    let established = fixtures::crd("anvils", "Anvil").build();
    let effects = apply(&mut s, Msg::CrdChanged(Box::new(established.clone())));
    assert_eq!(effects, vec![Effect::CountResources(CountTarget::of(&established).into_iter().collect())]);
}

#[test]
fn deleting_the_crd_of_the_open_resources_stops_their_watch_and_says_why() {
    let mut s = state();
    open_widgets(&mut s, 3);
    assert_eq!(apply(&mut s, Msg::CrdDeleted("gadgets.demo.example.com".into())), vec![]);
    assert_eq!(apply(&mut s, Msg::CrdDeleted("widgets.demo.example.com".into())), vec![Effect::StopWatch]);
    assert!(matches!(&s.message, Some((Level::Error, m)) if m.contains("widgets.demo.example.com was deleted")));
    assert!(s.registrations.find("widgets.demo.example.com").is_none());
}

#[test]
fn every_message_goes_to_the_log_and_an_error_goes_with_its_cause() {
    let mut s = state();
    let watch = open_widgets(&mut s, 3);
    let broken = WatchEvent::Error("connection refused; reconnecting".into());
    apply(&mut s, Msg::Watch { watch, event: broken.clone() });
    apply(&mut s, Msg::Watch { watch, event: broken });
    assert!(matches!(&s.message, Some((Level::Error, m)) if m.contains("connection refused")));
    let row = widget_table(1).rows[0].clone();
    apply(&mut s, Msg::Watch { watch, event: WatchEvent::Upsert(row.clone()) });
    assert_eq!(s.message, None, "the watch is back: its error goes");
    apply(&mut s, Msg::Error("cannot write: forbidden".into()));
    apply(&mut s, Msg::Watch { watch, event: WatchEvent::Upsert(row) });
    assert!(s.message.is_some(), "an error of another cause stays");
    let logged: Vec<&str> = s.log.iter().map(|e| e.text.as_str()).collect();
    assert_eq!(logged.iter().filter(|t| t.contains("connection refused")).count(), 1, "a repeat is logged once");
    assert!(logged.contains(&"cannot write: forbidden"), "{logged:?}");
    type_keys(&mut s, "L");
    assert_eq!(top(&s), "log");
    press(&mut s, KeyCode::Esc);
    assert_eq!(top(&s), "resources");
    let key = ObjKey::new(Some("default"), "widget-000");
    apply(&mut s, Msg::Object { key: key.clone(), result: Err("not found".into()) });
    assert!(matches!(&s.message, Some((Level::Error, m)) if m.contains("cannot read default/widget-000")));
    apply(&mut s, Msg::Object { key, result: Ok(widget("widget-000", 1)) });
    assert_eq!(s.message, None);
}

#[test]
fn the_resource_screen_follows_its_object_through_the_watch_until_it_is_gone() {
    let mut s = state();
    let watch = open_widgets(&mut s, 3);
    press(&mut s, KeyCode::Enter);
    let key = ObjKey::new(Some("default"), "widget-000");
    apply(&mut s, Msg::Object { key: key.clone(), result: Ok(widget("widget-000", 0)) });
    let row = |name: &str| widget_table(1).rows[0].clone().renamed(name);
    let other = apply(&mut s, Msg::Watch { watch, event: WatchEvent::Upsert(row("widget-001")) });
    assert_eq!(other, vec![], "another object's change reads nothing");
    let effects = apply(&mut s, Msg::Watch { watch, event: WatchEvent::Upsert(row("widget-000")) });
    assert!(matches!(&effects[..], [Effect::LoadObject { key: k, .. }] if *k == key), "{effects:?}");
    let effects = apply(&mut s, Msg::Watch { watch, event: WatchEvent::Delete(key.clone()) });
    assert!(matches!(&effects[..], [Effect::LoadObject { .. }]), "a delete is checked: {effects:?}");
    apply(&mut s, Msg::ObjectGone(key));
    let Screen::Resource(r) = s.screen() else { panic!() };
    assert!(r.gone && r.object.is_some(), "what it last was stays shown");
    assert!(matches!(&s.message, Some((Level::Info, m)) if m.contains("default/widget-000 was deleted")));
}

#[test]
fn a_crd_s_objects_open_on_every_namespace_when_the_current_one_has_none() {
    let mut s = state();
    type_keys(&mut s, "G");
    press(&mut s, KeyCode::Enter);
    let watch = s.next_watch;
    let effects = apply(&mut s, Msg::Table { watch, result: Ok(widget_table(0)) });
    assert!(matches!(&effects[..], [Effect::LoadTable { namespaces: Namespaces::All, .. }]), "{effects:?}");
    assert!(matches!(&s.message, Some((Level::Info, m)) if m.contains("no widgets in default")));
    let watch = s.next_watch;
    assert_eq!(apply(&mut s, Msg::Table { watch, result: Ok(widget_table(0)) }), vec![], "once");
    assert!(
        matches!(&type_keys(&mut s, "1")[..], [Effect::LoadTable { namespaces: Namespaces::One(ns), .. }] if ns == "default")
    );
    // A cluster-scoped kind is listed across namespaces whatever the namespace.
    press(&mut s, KeyCode::Esc);
    type_keys(&mut s, "1g");
    let effects = press(&mut s, KeyCode::Enter);
    assert!(
        matches!(&effects[..], [Effect::LoadTable { kind, namespaces: Namespaces::All, .. }] if kind.plural == "clusterpolicies"),
        "{effects:?}"
    );
    press(&mut s, KeyCode::Esc);
    type_keys(&mut s, "G");
    // From the detail, the namespace asked for stays even when empty.
    press(&mut s, KeyCode::Esc);
    type_keys(&mut s, "i");
    press(&mut s, KeyCode::Enter);
    let watch = s.next_watch;
    assert_eq!(apply(&mut s, Msg::Table { watch, result: Ok(widget_table(0)) }), vec![]);
}

#[test]
fn ctrl_d_deletes_marked_objects_or_a_crd_after_a_question_and_never_when_read_only() {
    let mut s = state();
    open_widgets(&mut s, 5);
    type_keys(&mut s, "  ");
    assert!(ctrl(&mut s, 'd').is_empty(), "nothing goes before the answer");
    let Mode::ConfirmDelete(Deletion::Objects { keys, .. }) = &s.mode else { panic!("{:?}", s.mode) };
    assert_eq!(keys.iter().map(|k| k.name.as_str()).collect::<Vec<_>>(), ["widget-000", "widget-001"]);
    assert!(type_keys(&mut s, "n").is_empty());
    assert!(matches!(&s.message, Some((Level::Info, m)) if m == "nothing deleted"));
    ctrl(&mut s, 'd');
    let effects = type_keys(&mut s, "y");
    assert!(matches!(&effects[..], [Effect::Delete(Deletion::Objects { keys, .. })] if keys.len() == 2), "{effects:?}");

    press(&mut s, KeyCode::Esc);
    ctrl(&mut s, 'd');
    let Mode::ConfirmDelete(Deletion::Crd { name, count, .. }) = &s.mode else { panic!("{:?}", s.mode) };
    assert_eq!((name.as_str(), *count), ("widgets.demo.example.com", Some(180)), "the question counts what goes");
    press(&mut s, KeyCode::Esc);

    s.readonly = true;
    assert!(ctrl(&mut s, 'd').is_empty());
    assert_eq!(s.mode, Mode::Normal);
    assert!(matches!(&s.message, Some((Level::Error, m)) if m.contains("read-only")));
}

#[test]
fn the_registrations_are_counted_again_as_the_clock_moves_and_a_click_selects_a_row() {
    let mut s = state();
    let later = |secs: i64| {
        Msg::Tick(fixtures::now().checked_add(k8s_openapi::jiff::SignedDuration::from_secs(secs)).expect("time"))
    };
    assert_eq!(apply(&mut s, later(1)), vec![], "not yet");
    let effects = apply(&mut s, later(5));
    let counted: Vec<String> = effects
        .iter()
        .flat_map(|e| match e {
            Effect::CountResources(targets) => targets.iter().map(|t| t.crd.clone()),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(counted.len(), 3, "every served CRD on screen (not the one in conflict): {counted:?}");
    let mouse = |row| {
        crossterm::event::Event::Mouse(crossterm::event::MouseEvent {
            kind: crossterm::event::MouseEventKind::Down(crossterm::event::MouseButton::Left),
            column: 10,
            row,
            modifiers: crossterm::event::KeyModifiers::NONE,
        })
    };
    crate::tui::on_event(&mut s, mouse(6));
    assert_eq!(s.registrations.cursor, 2);
    crate::tui::on_event(&mut s, mouse(1));
    assert_eq!(s.registrations.cursor, 2, "a click above the rows selects nothing");
    open_widgets(&mut s, 20);
    crate::tui::on_event(&mut s, mouse(9));
    let Screen::Resources(r) = s.screen() else { panic!() };
    assert_eq!(r.table.current().map(|row| row.key.name.as_str()), Some("widget-005"));
    assert_eq!(apply(&mut s, later(10)), vec![], "counted on the registrations screen only");
}

#[test]
fn with_thousands_of_crds_the_list_shows_at_once_and_only_the_rows_on_screen_are_recounted() {
    let mut s = state();
    let crds: Vec<_> =
        (0..2_000).map(|i| fixtures::crd(&format!("kind{i:04}s"), &format!("Kind{i:04}")).build()).collect();
    let list = crds.iter().cloned().map(Registration::uncounted).collect();
    let effects = apply(&mut s, Msg::Registrations(Ok(list)));
    let targets = crds.iter().filter_map(CountTarget::of).collect();
    assert_eq!(effects, vec![Effect::WatchRegistrations, Effect::CountResources(targets)], "counted once, after");
    assert!(s.registrations.loaded && s.registrations.items.iter().all(|r| r.counting));
    apply(&mut s, Msg::Counted { crd: "kind0000s.demo.example.com".into(), count: Some(7) });
    assert_eq!(s.registrations.items[0].count(), Some(7));
    assert!(!s.registrations.items[0].counting);

    let later = fixtures::now().checked_add(k8s_openapi::jiff::SignedDuration::from_secs(5)).expect("time");
    let effects = apply(&mut s, Msg::Tick(later));
    let [Effect::CountResources(recounted)] = effects.as_slice() else { panic!("{effects:?}") };
    assert_eq!(recounted.len(), s.list_height(), "a screenful, not 2,000");
}

#[test]
fn m_on_a_resource_lists_its_field_owners_and_m_there_changes_nothing() {
    let mut s = state();
    open_widgets(&mut s, 3);
    press(&mut s, KeyCode::Enter);
    let mut obj = widget("widget-000", 1);
    obj["metadata"]["managedFields"] = serde_json::json!([
        {"manager": "kubectl", "operation": "Apply", "time": "2026-11-26T08:00:00Z",
            "fieldsV1": {"f:spec": {"f:size": {}, "f:ports": {"k:{\"port\":80}": {".": {}}}}}},
        {"manager": "widget-controller", "operation": "Update", "subresource": "status", "time": "2026-11-26T08:01:00Z",
            "fieldsV1": {"f:status": {"f:phase": {}}}}
    ]);
    apply(&mut s, Msg::Object { key: ObjKey::new(Some("default"), "widget-000"), result: Ok(obj) });
    assert!(type_keys(&mut s, "M").is_empty());
    let Screen::Text(t) = s.screen() else { panic!("the field owners") };
    assert_eq!(t.title, "field-owners widgets/default/widget-000");
    assert_eq!(
        t.lines,
        [
            "PATH                 MANAGER            OPERATION  SUBRESOURCE  TIME",
            "spec.ports[port=80]  kubectl            Apply                   2026-11-26T08:00:00Z",
            "spec.size            kubectl            Apply                   2026-11-26T08:00:00Z",
            "status.phase         widget-controller  Update     status       2026-11-26T08:01:00Z",
        ]
    );
    let before = t.lines.clone();
    type_keys(&mut s, "M");
    let Screen::Text(t) = s.screen() else { panic!() };
    assert_eq!(t.lines, before, "M on the owners is not the YAML's managedFields toggle");
}

#[test]
fn a_first_page_of_many_crds_joins_what_is_shown_and_is_counted_in_one_effect() {
    let mut s = state();
    apply(&mut s, Msg::Registrations(Ok(fixtures::registrations())));
    let before = s.registrations.items.len();
    let anvils = fixtures::crd("anvils", "Anvil").build();
    let bolts = fixtures::crd("bolts", "Bolt").build();
    let page = [anvils.clone(), bolts.clone()].map(Registration::uncounted).to_vec();
    let effects = apply(&mut s, Msg::FirstRegistrations(page));
    let targets = [&anvils, &bolts].into_iter().filter_map(CountTarget::of).collect();
    assert_eq!(effects, vec![Effect::WatchRegistrations, Effect::CountResources(targets)]);
    assert_eq!(s.registrations.items.len(), before + 2, "added beside, none replaced: {:?}", names(&s));
    assert_eq!(names(&s)[..2], ["anvils.demo.example.com", "bolts.demo.example.com"]);
}
