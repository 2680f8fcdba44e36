use crate::tui::action::{Effect, Msg};
use crate::tui::fixtures::{self, ctrl, open_widgets, press, state, top, type_keys, widget, widget_table};
use crate::tui::state::{Level, Mode, Namespaces, Screen, State};
use crate::tui::table::ObjKey;
use crate::tui::update::apply;
use crossterm::event::KeyCode;

#[test]
fn colon_commands_switch_namespace_resource_and_registrations() {
    let mut s = state();
    open_widgets(&mut s, 2);
    type_keys(&mut s, ":ns team");
    let effects = press(&mut s, KeyCode::Enter);
    assert!(matches!(&effects[..], [Effect::LoadTable { namespaces: Namespaces::One(ns), .. }] if ns == "team"));
    assert_eq!(s.namespaces, Namespaces::One("team".into()));
    let effects = type_keys(&mut s, "0");
    assert!(matches!(&effects[..], [Effect::LoadTable { namespaces: Namespaces::All, .. }]));
    let effects = type_keys(&mut s, "1");
    assert!(matches!(&effects[..], [Effect::LoadTable { namespaces: Namespaces::One(ns), .. }] if ns == "team"));
    type_keys(&mut s, ":wd");
    assert_eq!(press(&mut s, KeyCode::Enter), vec![Effect::Resolve("wd".into())]);
    let crd = fixtures::crd("gizmos", "Gizmo").build();
    let effects = apply(&mut s, Msg::Resolved(Ok(Box::new(crd))));
    assert!(matches!(&effects[..], [Effect::StopWatch, Effect::LoadTable { kind, .. }] if kind.plural == "gizmos"));
    type_keys(&mut s, ":crd");
    assert_eq!(press(&mut s, KeyCode::Enter), vec![Effect::StopWatch, Effect::LoadRegistrations]);
    assert_eq!(s.stack.len(), 1);
    type_keys(&mut s, ":ns Bad_Name");
    press(&mut s, KeyCode::Enter);
    assert!(matches!(&s.message, Some((Level::Error, m)) if m.contains("DNS label")));
}

#[test]
fn filters_are_regexes_or_label_selectors() {
    let mut s = state();
    type_keys(&mut s, "/gadg");
    press(&mut s, KeyCode::Enter);
    assert_eq!(s.registrations.shown().len(), 1);
    press(&mut s, KeyCode::Esc);
    assert_eq!(s.registrations.shown().len(), 4, "Esc clears the filter");
    open_widgets(&mut s, 20);
    type_keys(&mut s, "/widget-01");
    press(&mut s, KeyCode::Enter);
    s.prepare();
    let Screen::Resources(r) = s.screen() else { panic!() };
    assert_eq!(r.table.shown(), 10);
    type_keys(&mut s, "/-l app=x");
    let effects = press(&mut s, KeyCode::Enter);
    assert!(matches!(&effects[..], [Effect::LoadTable { selector: Some(sel), .. }] if sel == "app=x"));
    type_keys(&mut s, "/([");
    press(&mut s, KeyCode::Enter);
    assert!(matches!(&s.message, Some((Level::Error, m)) if m.starts_with("not a regex")));
}

#[test]
fn number_keys_pick_favourite_namespaces_most_recent_first() {
    let mut s = state();
    open_widgets(&mut s, 2);
    for ns in ["team-a", "team-b"] {
        type_keys(&mut s, &format!(":ns {ns}"));
        press(&mut s, KeyCode::Enter);
    }
    assert_eq!(s.favourites, ["team-b", "team-a", "default"]);
    let effects = type_keys(&mut s, "3");
    assert!(matches!(&effects[..], [Effect::LoadTable { namespaces: Namespaces::One(ns), .. }] if ns == "default"));
    assert_eq!(s.favourites, ["default", "team-b", "team-a"]);
    assert!(type_keys(&mut s, "9").is_empty(), "no ninth favourite");
}

#[test]
fn ctrl_w_shows_wide_columns_and_shift_letters_sort_by_the_columns_on_screen() {
    let mut s = state();
    let watch = open_widgets(&mut s, 1);
    let mut data = widget_table(6);
    let mut size = data.columns[1].clone();
    (size.name, size.priority) = ("Size".into(), 1);
    data.columns.push(size);
    for (i, row) in data.rows.iter_mut().enumerate() {
        row.cells.push((10 - i).to_string());
        row.key.namespace = Some(if i % 2 == 0 { "team-b" } else { "team-a" }.into());
    }
    apply(&mut s, Msg::Table { watch, result: Ok(data) });
    let sorted = |s: &mut State| {
        type_keys(s, "g");
        let Screen::Resources(r) = s.screen() else { panic!() };
        (r.table.sort(), r.table.visible(3).map(|(_, row)| row.key.name.clone()).collect::<Vec<_>>())
    };
    type_keys(&mut s, "S");
    assert!(matches!(&s.message, Some((Level::Error, m)) if m.contains("no column on screen starts with S")));
    ctrl(&mut s, 'w');
    type_keys(&mut s, "S");
    let (sort, names) = sorted(&mut s);
    assert_eq!(sort.map(|x| x.column), Some(crate::tui::table::SortKey::Column(4)));
    assert_eq!(names, ["widget-005", "widget-004", "widget-003"], "by SIZE, a wide column");
    type_keys(&mut s, "P");
    assert!(matches!(&s.message, Some((Level::Error, m)) if m.contains("starts with P")), "no NAMESPACE column in one");
    type_keys(&mut s, "0");
    let watch = s.next_watch;
    apply(&mut s, Msg::Table { watch, result: Ok(widget_table(0)) });
    let Screen::Resources(r) = s.screen() else { panic!() };
    assert!(r.on_screen(&s.namespaces).first().is_some_and(|(h, _)| h == "NAMESPACE"));
    type_keys(&mut s, "NN");
    let (sort, _) = sorted(&mut s);
    assert_eq!(
        sort.map(|x| (x.column, x.descending)),
        Some((crate::tui::table::SortKey::Column(0), true)),
        "again reverses"
    );
}

#[test]
fn esc_clears_a_filter_first_filters_survive_a_return_and_invert_with_a_bang() {
    let mut s = state();
    type_keys(&mut s, "/!gadg");
    press(&mut s, KeyCode::Enter);
    assert_eq!(s.registrations.shown().len(), 3, "all but the gadgets");
    type_keys(&mut s, "G");
    let watch = match press(&mut s, KeyCode::Enter).last() {
        Some(Effect::LoadTable { watch, .. }) => *watch,
        other => panic!("{other:?}"),
    };
    apply(&mut s, Msg::Table { watch, result: Ok(widget_table(20)) });
    type_keys(&mut s, "/widget-01");
    press(&mut s, KeyCode::Enter);
    press(&mut s, KeyCode::Enter);
    assert_eq!(top(&s), "resource");
    press(&mut s, KeyCode::Esc);
    s.prepare();
    let Screen::Resources(r) = s.screen() else { panic!() };
    assert_eq!((r.table.filter().as_deref(), r.table.shown()), (Some("widget-01"), 10), "the filter survives a return");
    assert_eq!(press(&mut s, KeyCode::Esc), vec![], "Esc clears the filter first");
    s.prepare();
    let Screen::Resources(r) = s.screen() else { panic!() };
    assert_eq!((r.table.filter(), r.table.shown()), (None, 20));
    assert_eq!(top(&s), "resources");
    // A selector the server refuses: the old rows stay, marked stale; Esc drops the selector.
    type_keys(&mut s, "/-l app in (");
    let watch = match &press(&mut s, KeyCode::Enter)[..] {
        [Effect::LoadTable { watch, selector: Some(_), .. }] => *watch,
        other => panic!("{other:?}"),
    };
    apply(&mut s, Msg::Table { watch, result: Err("unable to parse requirement".into()) });
    let Screen::Resources(r) = s.screen() else { panic!() };
    assert!(r.stale && r.table.total() == 20, "old rows, marked stale");
    assert!(matches!(&press(&mut s, KeyCode::Esc)[..], [Effect::LoadTable { selector: None, .. }]));
    press(&mut s, KeyCode::Esc);
    assert_eq!(top(&s), "registrations");
    assert_eq!(s.registrations.shown().len(), 3, "the registrations' filter survived too");
}

#[test]
fn tab_completes_commands_kinds_and_namespaces_and_ns_alone_picks_one() {
    let mut s = state();
    let names = ["default", "team-a", "team-b"].map(String::from).to_vec();
    apply(&mut s, Msg::Namespaces(Ok(names)));
    let line = |s: &State| match &s.mode {
        Mode::Command(i) => i.text.clone(),
        other => panic!("{other:?}"),
    };
    type_keys(&mut s, ":wi");
    press(&mut s, KeyCode::Tab);
    assert_eq!(line(&s), "widget", "the prefix widget and widgets share");
    type_keys(&mut s, "s");
    assert_eq!(crate::tui::commands::completions(&s, &line(&s)), ["widgets"]);
    press(&mut s, KeyCode::Esc);
    type_keys(&mut s, ":n");
    press(&mut s, KeyCode::Tab);
    assert_eq!(line(&s), "ns ");
    type_keys(&mut s, "t");
    press(&mut s, KeyCode::Tab);
    assert_eq!(line(&s), "ns team-");
    type_keys(&mut s, "x");
    assert_eq!(press(&mut s, KeyCode::Enter), vec![Effect::LoadNamespaces], "the list is read again");
    assert!(matches!(&s.message, Some((Level::Error, m)) if m.contains("namespace \"team-x\" not found")));
    assert_eq!(s.namespaces, Namespaces::One("default".into()), "an unknown namespace changes nothing");

    type_keys(&mut s, ":ns");
    assert_eq!(press(&mut s, KeyCode::Enter), vec![Effect::LoadNamespaces], "read again as it opens");
    assert_eq!(s.mode, Mode::PickNamespace { cursor: 0 }, "on the current namespace");
    type_keys(&mut s, "jj");
    press(&mut s, KeyCode::Enter);
    assert_eq!((s.namespaces.clone(), s.mode.clone()), (Namespaces::One("team-b".into()), Mode::Normal));
}

#[test]
fn slash_searches_yaml_and_m_shows_managed_fields() {
    let mut s = state();
    open_widgets(&mut s, 2);
    press(&mut s, KeyCode::Enter);
    let mut obj = widget("widget-000", 1);
    obj["metadata"]["managedFields"] = serde_json::json!([{"manager": "kubectl-edit", "operation": "Update"}]);
    apply(&mut s, Msg::Object { key: ObjKey::new(Some("default"), "widget-000"), result: Ok(obj) });
    type_keys(&mut s, "y");
    let text = |s: &State| match s.screen() {
        Screen::Text(t) => (t.lines.join("\n"), t.scroll),
        _ => panic!("not a text screen"),
    };
    assert!(!text(&s).0.contains("managedFields"), "hidden at first, as kubectl hides them");
    type_keys(&mut s, "M");
    assert!(text(&s).0.contains("manager: kubectl-edit"));
    type_keys(&mut s, "M");
    type_keys(&mut s, "/replicas");
    press(&mut s, KeyCode::Enter);
    let (lines, first) = text(&s);
    assert!(lines.lines().nth(first).is_some_and(|l| l.contains("replicas")), "on the first match");
    type_keys(&mut s, "n");
    let (_, second) = text(&s);
    assert!(second > first);
    type_keys(&mut s, "N");
    assert_eq!(text(&s).1, first, "N goes back");
    type_keys(&mut s, "/nowhere-at-all");
    press(&mut s, KeyCode::Enter);
    assert!(matches!(&s.message, Some((Level::Error, m)) if m.contains("no line matches")));
    press(&mut s, KeyCode::Esc);
    assert_eq!(top(&s), "yaml", "Esc clears the search first");
    press(&mut s, KeyCode::Esc);
    assert_eq!(top(&s), "resource");
}
