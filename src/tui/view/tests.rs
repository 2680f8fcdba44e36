//! Every screen drawn on a `TestBackend`, driven by key events: insta snapshots of the
//! text (ages and resourceVersions filtered), and checks of the styles that carry meaning.

use super::*;
use crate::tui::action::{Msg, WatchEvent};
use crate::tui::fixtures::{ctrl, press, state, type_keys, widget, widget_table};
use crate::tui::state::{ConflictDialog, EditPart, State};
use crate::tui::table::ObjKey;
use crate::tui::update::apply;
use crossterm::event::KeyCode;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::Color;

fn render(state: &mut State, width: u16, height: u16) -> Buffer {
    state.size = (width, height);
    state.prepare();
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("terminal");
    terminal.draw(|f| draw(f, state)).expect("draw");
    terminal.backend().buffer().clone()
}

fn text(buf: &Buffer) -> String {
    let area = buf.area;
    (0..area.height)
        .map(|y| (0..area.width).map(|x| buf[(x, y)].symbol()).collect::<String>().trim_end().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Snapshots a screen with ages and resourceVersions filtered.
macro_rules! snapshot {
    ($name:expr, $buf:expr) => {
        insta::with_settings!({filters => vec![
            (r"\b\d+(s|m|h|d|y)(\d+(s|m|h|d))?\b", "[age]"),
            (r"resourceVersion \d+", "resourceVersion [rv]"),
        ]}, {
            insta::assert_snapshot!($name, text(&$buf));
        });
    };
}

fn find(buf: &Buffer, needle: &str) -> Option<(u16, u16)> {
    let t = text(buf);
    t.lines()
        .enumerate()
        .find_map(|(y, line)| line.find(needle).map(|byte| (line[..byte].chars().count() as u16, y as u16)))
}

fn on_resources(s: &mut State, rows: usize) -> u64 {
    type_keys(s, "G");
    press(s, KeyCode::Enter);
    let watch = s.next_watch;
    apply(s, Msg::Table { watch, result: Ok(widget_table(rows)) });
    watch
}

fn on_resource(s: &mut State) {
    on_resources(s, 5);
    press(s, KeyCode::Enter);
    apply(s, Msg::Object { key: ObjKey::new(Some("default"), "widget-000"), result: Ok(widget("widget-000", 0)) });
}

#[test]
fn registrations_screen() {
    let mut s = state();
    let buf = render(&mut s, 120, 14);
    snapshot!("registrations", buf);
}

#[test]
fn troubled_registrations_stand_out_in_colour_and_without() {
    let mut s = state();
    let buf = render(&mut s, 120, 14);
    let (x, y) = find(&buf, "gadgets.demo").expect("gadgets row");
    assert_eq!(buf[(x, y)].fg, Color::Red);
    assert_eq!(buf[(x - 3, y)].symbol(), "!", "a marker that reads without colour");
    let (x, y) = find(&buf, "widgets.demo").expect("widgets row");
    assert_ne!(buf[(x, y)].fg, Color::Red);
    s.theme.color = false;
    let buf = render(&mut s, 120, 14);
    let colours: Vec<Color> = buf.content().iter().flat_map(|c| [c.fg, c.bg]).filter(|c| *c != Color::Reset).collect();
    assert!(colours.is_empty(), "no colour at all with --no-color: {colours:?}");
    let t = text(&buf);
    assert!(t.contains("!  gadgets.demo.example.com") && t.contains("NameConflict"), "{t}");
    assert!(t.contains("Terminating"), "{t}");
}

#[test]
fn detail_screen_with_names_conditions_and_schema_tree() {
    let mut s = state();
    type_keys(&mut s, "ji");
    let buf = render(&mut s, 130, 32);
    snapshot!("detail_conflict", buf);
    let (x, y) = find(&buf, "≠").expect("a difference is marked");
    assert_eq!(buf[(x + 3, y)].symbol(), "s", "on the shortNames row");
    press(&mut s, KeyCode::Esc);
    type_keys(&mut s, "Gi");
    press(&mut s, KeyCode::Tab);
    type_keys(&mut s, "jl");
    let buf = render(&mut s, 130, 32);
    snapshot!("detail_widgets_schema_open", buf);
}

#[test]
fn resources_screen_with_marks_sort_and_live_rows() {
    let mut s = state();
    let watch = on_resources(&mut s, 40);
    type_keys(&mut s, "Rg");
    type_keys(&mut s, " j ");
    let buf = render(&mut s, 100, 16);
    snapshot!("resources_marked_sorted", buf);
    let mut row = widget_table(1).rows.remove(0);
    row.key.name = "widget-000".into();
    row.cells[2] = "Changed".into();
    apply(&mut s, Msg::Watch { watch, event: WatchEvent::Upsert(row) });
    let buf = render(&mut s, 100, 16);
    assert!(text(&buf).contains("Changed"), "a watch event shows without a key press");
}

#[test]
fn resources_across_namespaces_show_the_namespace() {
    let mut s = state();
    on_resources(&mut s, 3);
    let effects = type_keys(&mut s, "0");
    let watch = s.next_watch;
    assert_eq!(effects.len(), 1);
    apply(&mut s, Msg::Table { watch, result: Ok(widget_table(3)) });
    let buf = render(&mut s, 100, 10);
    snapshot!("resources_all_namespaces", buf);
}

#[test]
fn resource_screen_with_spec_beside_status() {
    let mut s = state();
    on_resource(&mut s);
    let buf = render(&mut s, 110, 24);
    snapshot!("resource", buf);
    let t = text(&buf);
    assert!(t.contains("generation 3") && t.contains("observedGeneration 2 (behind)"), "{t}");
}

#[test]
fn yaml_and_describe_views() {
    let mut s = state();
    on_resource(&mut s);
    type_keys(&mut s, "y");
    let buf = render(&mut s, 90, 30);
    snapshot!("yaml", buf);
    let (x, y) = find(&buf, "replicas:").expect("a key");
    assert_eq!(buf[(x, y)].fg, Color::Cyan, "keys are coloured");
    press(&mut s, KeyCode::Esc);
    type_keys(&mut s, "d");
    let buf = render(&mut s, 90, 36);
    snapshot!("describe", buf);
}

#[test]
fn dialogs_help_and_command_line() {
    let mut s = state();
    on_resource(&mut s);
    type_keys(&mut s, "s");
    let view = crate::cluster::objects::ScaleView {
        desired: 0,
        current: 0,
        selector: Some("app=widget-000".into()),
        resource_version: None,
    };
    apply(&mut s, Msg::Scale { key: ObjKey::new(Some("default"), "widget-000"), result: Ok(view) });
    type_keys(&mut s, "++");
    snapshot!("scale_dialog", render(&mut s, 100, 24));
    press(&mut s, KeyCode::Esc);
    let kind = s.registrations.find("widgets.demo.example.com").and_then(|r| r.resource.clone()).expect("served");
    let dialog = ConflictDialog {
        kind,
        key: ObjKey::new(Some("default"), "widget-000"),
        part: EditPart::Spec,
        server_changes: vec!["~ spec.size: 2 → 5".into(), "+ metadata.labels.tier: \"web\"".into()],
        kept: "/tmp/kubectl-crd-edits/widgets-default-widget-000-spec.yaml".into(),
        base: serde_json::json!({}),
        edited: serde_json::json!({}),
    };
    apply(&mut s, Msg::Conflict(Box::new(dialog)));
    snapshot!("conflict_dialog", render(&mut s, 100, 24));
    type_keys(&mut s, "d");
    type_keys(&mut s, "?");
    snapshot!("help", render(&mut s, 100, 44));
    press(&mut s, KeyCode::Esc);
    type_keys(&mut s, ":ns tea");
    let t = text(&render(&mut s, 100, 24));
    assert!(t.lines().last().is_some_and(|l| l.starts_with(":ns tea")), "{t}");
}

#[test]
fn the_help_lists_every_key() {
    let mut s = state();
    type_keys(&mut s, "?");
    let t = text(&render(&mut s, 100, 50));
    for b in crate::tui::keys::BINDINGS.iter().filter(|b| !b.label.is_empty()) {
        assert!(t.contains(b.label), "{} missing from help:\n{t}", b.label);
    }
}

#[test]
fn small_and_resized_terminals_lay_out_without_panicking() {
    let mut s = state();
    on_resource(&mut s);
    for (w, h) in [(20, 5), (1, 1), (200, 60), (60, 12)] {
        render(&mut s, w, h);
    }
    type_keys(&mut s, "?");
    render(&mut s, 10, 4);
}

#[test]
fn a_hundred_thousand_rows_build_only_what_is_on_screen() {
    let mut s = state();
    on_resources(&mut s, 100_000);
    let started = std::time::Instant::now();
    for _ in 0..50 {
        press(&mut s, KeyCode::PageDown);
        render(&mut s, 120, 40);
    }
    let per_frame = started.elapsed() / 50;
    // Debug build, shared machine: generous, but far below what building 100,000 rows takes.
    assert!(per_frame.as_millis() < 50, "{per_frame:?} per frame");
}

/// Snapshots a wizard screen with the journal's directory and times filtered.
fn snapshot_wizard(name: &str, buf: &Buffer, dir: &std::path::Path) {
    insta::with_settings!({filters => vec![
        (regex::escape(&dir.display().to_string()).as_str(), "[journal]"),
        (r"\d{4}-\d\d-\d\dT[\d:.]+Z", "[time]"),
    ]}, {
        insta::assert_snapshot!(name, text(buf));
    });
}

#[test]
fn migration_wizard_path_plan_and_run() {
    use crate::migrate::{Step, progress::Event};
    use crate::tui::fixtures::{migration, plan};
    use crate::tui::wizard::{Journal, WizardMsg};
    let wizard = |s: &mut State, m: WizardMsg| apply(s, Msg::Wizard(m));
    let dir = tempfile::tempdir().expect("tempdir");
    let mut s = state();
    type_keys(&mut s, "Gm");
    wizard(&mut s, WizardMsg::Journals { crd: Some("widgets.demo.example.com".into()), found: vec![] });
    type_keys(&mut s, "/tmp/gizmos.yaml");
    press(&mut s, KeyCode::Tab);
    type_keys(&mut s, "ops/widgets/ctl");
    snapshot!("wizard_target", render(&mut s, 110, 15));

    press(&mut s, KeyCode::Enter);
    wizard(&mut s, WizardMsg::Planned(Ok(Box::new(plan(&["the new schema refuses 3 object(s)"])))));
    let buf = render(&mut s, 120, 50);
    snapshot!("wizard_plan_blocked", buf);
    let (x, y) = find(&buf, "  - the new schema refuses").expect("the problem");
    assert_eq!(buf[(x + 4, y)].fg, Color::Red, "problems stand out");

    press(&mut s, KeyCode::Esc);
    press(&mut s, KeyCode::Enter);
    wizard(&mut s, WizardMsg::Planned(Ok(Box::new(plan(&[])))));
    press(&mut s, KeyCode::Enter);
    let t = text(&render(&mut s, 120, 50));
    assert!(t.contains("Start the migration of 180 objects to gizmos.migrated.example.org? [y/n]"), "{t}");

    wizard(&mut s, WizardMsg::Ready(Ok(Journal::of(&migration(dir.path(), 3, false)))));
    wizard(&mut s, WizardMsg::Event(Event::Started { step: Step::Validate, total: Some(180) }));
    wizard(&mut s, WizardMsg::Event(Event::Progress { step: Step::Validate, done: 90, total: 180 }));
    snapshot_wizard("wizard_run_progress", &render(&mut s, 120, 20), dir.path());

    let journal = Journal::of(&migration(dir.path(), 4, false));
    let took = std::time::Duration::from_millis(2400);
    wizard(&mut s, WizardMsg::Stepped { step: Step::Validate, result: Ok("180 object(s) pass".into()), took, journal });
    snapshot_wizard("wizard_run_asking", &render(&mut s, 120, 20), dir.path());

    type_keys(&mut s, "y");
    let note = format!("waiting for {} to be gone END-OF-NOTE", "widget-000, ".repeat(12));
    wizard(&mut s, WizardMsg::Event(Event::Note { step: Step::DeleteOldData, message: note }));
    let t = text(&render(&mut s, 120, 20));
    assert!(t.contains("END-OF-NOTE"), "a long log line wraps instead of being cut:\n{t}");
    type_keys(&mut s, "q");
    let t = text(&render(&mut s, 120, 20));
    assert!(t.contains("A migration step is running") && t.contains("y quit"), "{t}");

    type_keys(&mut s, "n");
    let failure =
        crate::tui::wizard::Failure { message: "refused: the new schema refuses 3 objects".into(), undo: true };
    let journal = Journal::of(&migration(dir.path(), 4, true));
    wizard(&mut s, WizardMsg::Stepped { step: Step::DeleteOldData, result: Err(failure), took, journal });
    let t = text(&render(&mut s, 120, 24));
    assert!(t.contains("✗ refused: the new schema refuses 3 objects"), "{t}");
    assert!(t.contains("Undo what the run changed (controllers back, the new CRD removed)? [y/n]"), "{t}");
    assert!(t.contains("✗ delete-old-data (asks)"), "the step that stopped is marked:\n{t}");
}

#[test]
fn migration_wizard_offers_an_unfinished_journal() {
    use crate::tui::fixtures::migration;
    use crate::tui::wizard::WizardMsg;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut journal = migration(dir.path(), 5, true).state().clone();
    journal.created = "2026-11-22T11:45:00Z".into();
    let mut s = state();
    apply(&mut s, Msg::Wizard(WizardMsg::Journals { crd: None, found: vec![(dir.path().to_path_buf(), journal)] }));
    snapshot_wizard("wizard_resume", &render(&mut s, 120, 24), dir.path());
    type_keys(&mut s, "r");
    let t = text(&render(&mut s, 120, 24));
    assert!(t.contains("Roll back the migration of widgets.demo.example.com to gizmos.migrated.example.org"), "{t}");
}

/// After a refusal whose message wraps over several rows of a narrow terminal, the undo
/// question is still on screen: the bottom area is as tall as its wrapped rows.
#[test]
fn the_undo_question_shows_below_a_long_wrapped_refusal() {
    use crate::migrate::Step;
    use crate::tui::fixtures::migration;
    use crate::tui::wizard::{Failure, Journal, WizardMsg};
    let dir = tempfile::tempdir().expect("tempdir");
    let mut s = state();
    type_keys(&mut s, "Gm");
    apply(&mut s, Msg::Wizard(WizardMsg::Journals { crd: Some("widgets.demo.example.com".into()), found: vec![] }));
    apply(&mut s, Msg::Wizard(WizardMsg::Ready(Ok(Journal::of(&migration(dir.path(), 3, false))))));
    let rejected = "team-a/widget-001: spec.size: Invalid value: 12: must be less than or equal to 10; ".repeat(4);
    let failure =
        Failure { message: format!("refused: the new schema refuses 4 of 180 object(s): {rejected}"), undo: true };
    let journal = Journal::of(&migration(dir.path(), 3, false));
    let took = std::time::Duration::from_millis(100);
    apply(&mut s, Msg::Wizard(WizardMsg::Stepped { step: Step::Validate, result: Err(failure), took, journal }));
    let t = text(&render(&mut s, 60, 30));
    assert!(t.contains("Undo what the run changed") && t.contains("[y/n]"), "the question is hidden:\n{t}");
}

#[test]
fn a_long_error_wraps_in_the_status_area_and_the_log_keeps_it_whole() {
    let mut s = state();
    on_resources(&mut s, 3);
    let causes = (1..=4).map(|i| format!("spec.size: Invalid value: {i}: must be at most 0")).collect::<Vec<_>>();
    apply(&mut s, Msg::Error(format!("widgets \"widget-000\" is invalid: [{}] END-OF-MESSAGE", causes.join(", "))));
    let buf = render(&mut s, 80, 16);
    snapshot!("status_wrapped", buf);
    assert!(text(&buf).contains("END-OF-MESSAGE"), "the whole message is on screen");
    apply(&mut s, Msg::Info("saved".into()));
    type_keys(&mut s, "L");
    snapshot!("log", render(&mut s, 80, 12));
}

#[test]
fn a_terminating_object_says_what_it_waits_for_and_a_deleted_one_says_so() {
    let mut s = state();
    on_resource(&mut s);
    let mut obj = widget("widget-000", 0);
    obj["metadata"]["deletionTimestamp"] = serde_json::json!("2026-11-22T11:58:00Z");
    obj["metadata"]["finalizers"] = serde_json::json!(["demo.example.com/cleanup", "kubernetes"]);
    apply(&mut s, Msg::Object { key: ObjKey::new(Some("default"), "widget-000"), result: Ok(obj) });
    snapshot!("resource_terminating", render(&mut s, 110, 14));
    apply(&mut s, Msg::ObjectGone(ObjKey::new(Some("default"), "widget-000")));
    let t = text(&render(&mut s, 110, 14));
    assert!(t.contains("DELETED") && t.contains("deleted: the object is gone"), "{t}");
}

#[test]
fn delete_questions_name_what_goes() {
    let mut s = state();
    type_keys(&mut s, "G");
    ctrl(&mut s, 'd');
    snapshot!("delete_crd", render(&mut s, 100, 16));
    press(&mut s, KeyCode::Esc);
    on_resources(&mut s, 5);
    type_keys(&mut s, " j ");
    ctrl(&mut s, 'd');
    let t = text(&render(&mut s, 100, 16));
    assert!(t.contains("Delete 2 widgets?") && t.contains("default/widget-002"), "{t}");
}

#[test]
fn read_only_hints_and_help_offer_no_writes() {
    let mut s = state();
    s.readonly = true;
    on_resource(&mut s);
    type_keys(&mut s, "?");
    let t = text(&render(&mut s, 100, 50));
    for write in ["edit spec", "scale through", "Ctrl-D", "migrate", "conflict"] {
        assert!(!t.contains(write), "{write} offered with --readonly:\n{t}");
    }
    press(&mut s, KeyCode::Esc);
    let t = text(&render(&mut s, 140, 20));
    assert!(t.contains("<tab> pane") && !t.contains("<e>") && !t.contains("<s>"), "{t}");
}

#[test]
fn wide_columns_and_the_namespace_sorted() {
    let mut s = state();
    on_resources(&mut s, 0);
    type_keys(&mut s, "0");
    let mut data = widget_table(4);
    let mut size = data.columns[1].clone();
    (size.name, size.priority) = ("Size".into(), 1);
    data.columns.push(size);
    for (i, row) in data.rows.iter_mut().enumerate() {
        row.cells.push(format!("{}", i * 3));
        row.key.namespace = Some(if i % 2 == 0 { "team-b" } else { "team-a" }.into());
    }
    let watch = s.next_watch;
    apply(&mut s, Msg::Table { watch, result: Ok(data) });
    ctrl(&mut s, 'w');
    type_keys(&mut s, "P");
    snapshot!("resources_wide_by_namespace", render(&mut s, 100, 10));
}

#[test]
fn a_failed_list_leaves_the_old_rows_marked_stale() {
    let mut s = state();
    on_resources(&mut s, 3);
    type_keys(&mut s, "/-l app in (");
    press(&mut s, KeyCode::Enter);
    let watch = s.next_watch;
    apply(
        &mut s,
        Msg::Table { watch, result: Err("unable to parse requirement: found '(', expected: identifier".into()) },
    );
    let buf = render(&mut s, 100, 10);
    let t = text(&buf);
    assert!(t.contains("STALE: the last list failed") && t.contains("widget-002"), "{t}");
    let (x, y) = find(&buf, "widget-001").expect("an old row");
    assert_eq!(buf[(x, y)].fg, Color::DarkGray, "dimmed");
}

#[test]
fn the_namespace_picker_and_completions_on_the_command_line() {
    let mut s = state();
    apply(&mut s, Msg::Namespaces(Ok(["default", "staging", "team-a"].map(String::from).to_vec())));
    type_keys(&mut s, ":ns");
    press(&mut s, KeyCode::Enter);
    type_keys(&mut s, "j");
    snapshot!("namespace_picker", render(&mut s, 100, 14));
    press(&mut s, KeyCode::Esc);
    type_keys(&mut s, ":ns ");
    let t = text(&render(&mut s, 100, 14));
    assert!(t.lines().last().is_some_and(|l| l.contains("Tab: ns all  ns default  ns staging  ns team-a")), "{t}");
}

#[test]
fn a_search_marks_the_lines_it_matches() {
    let mut s = state();
    on_resource(&mut s);
    type_keys(&mut s, "d");
    type_keys(&mut s, "/replicas");
    press(&mut s, KeyCode::Enter);
    let buf = render(&mut s, 90, 20);
    let t = text(&buf);
    assert!(t.contains("</replicas> n/N"), "{t}");
    let (x, y) = find(&buf, "Replicas").expect("a match on screen");
    assert_eq!(buf[(x, y)].fg, Color::Yellow, "marked:\n{t}");
}

#[test]
fn the_health_columns_say_who_is_behind_and_which_conditions_fail() {
    let mut s = state();
    on_resources(&mut s, 0);
    let mut behind = widget("widget-behind", 1);
    behind["status"]["conditions"][0]["status"] = "False".into();
    let mut synced = widget("widget-synced", 2);
    synced["status"]["observedGeneration"] = 3.into();
    let mut silent = widget("widget-silent", 0);
    silent["status"] = serde_json::json!({});
    let table = crate::cluster::table::Table::fallback(&[behind, synced, silent], s.now);
    let watch = s.next_watch;
    apply(&mut s, Msg::Table { watch, result: Ok(table.into()) });
    type_keys(&mut s, "S");
    let buf = render(&mut s, 90, 10);
    snapshot!("resources_health", buf);
    let t = text(&buf);
    assert!(t.contains("SYNCED") && t.contains("no (2/3)") && t.contains("Ready=False"), "{t}");
}

#[test]
fn the_event_stream_shows_each_change_with_its_manager_and_diff() {
    let mut s = state();
    on_resources(&mut s, 3);
    type_keys(&mut s, "w");
    let stream = s.next_watch;
    let at: k8s_openapi::jiff::Timestamp = "2026-11-22T12:00:00Z".parse().expect("time");
    s.now = at;
    let mut obj = widget("widget-000", 1);
    obj["metadata"]["managedFields"] =
        serde_json::json!([{"manager": "kubectl-edit", "operation": "Update", "time": "2026-11-22T11:55:00Z"}]);
    let ev =
        |type_, object| Msg::ObjectEvent { stream, event: Ok(crate::cluster::watch::ObjectEvent { type_, object }) };
    use crate::cluster::watch::ObjectEventType::*;
    apply(&mut s, ev(Added, obj.clone()));
    obj["spec"]["size"] = 3.into();
    obj["metadata"]["generation"] = 4.into();
    obj["metadata"]["resourceVersion"] = "4243".into();
    apply(&mut s, ev(Modified, obj.clone()));
    apply(&mut s, ev(Deleted, obj));
    apply(&mut s, ev(Bookmark, serde_json::json!({"metadata": {"resourceVersion": "4250"}})));
    type_keys(&mut s, " ");
    snapshot!("events", render(&mut s, 120, 12));
}

#[test]
fn the_cel_workbench_shows_the_rules_and_the_latest_try_with_its_costs() {
    let mut s = state();
    let mut bench = crate::tui::cel_workbench::tests::bench();
    bench.cursor = crate::tui::cel_workbench::tests::STORAGE_RULE;
    s.stack.push(crate::tui::state::Screen::Cel(Box::new(bench.clone())));
    snapshot!("cel_workbench", render(&mut s, 120, 18));
    bench.try_text(crate::tui::cel_workbench::tests::STORAGE_RULE, "self: 5\noldSelf: 10\n").expect("evaluates");
    *s.screen_mut() = crate::tui::state::Screen::Cel(Box::new(bench));
    let buf = render(&mut s, 120, 24);
    snapshot!("cel_workbench_tried", buf);
    let t = text(&buf);
    assert!(
        t.contains("FAILED") && t.contains("storageGB can grow but never shrink") && t.contains("estimated"),
        "{t}"
    );
    let (x, y) = find(&buf, "FAILED").expect("verdict");
    assert_eq!(buf[(x, y)].fg, Color::Red, "a failure reads as trouble");
}

#[path = "owners_tests.rs"]
mod owners;

/// The schema explorer's screens (in their own file to keep this one short).
#[path = "explorer_tests.rs"]
mod explorer;

/// `A` on a resource asks the runtime for the dry run; its verdict is a screen of its own.
#[test]
fn apply_as_shows_the_conflicts_with_their_owners() {
    use crate::cluster::apply_as::{ApplyVerdict, conflicts_of, verdict_lines};
    let mut s = state();
    on_resource(&mut s);
    let effects = type_keys(&mut s, "A");
    assert!(matches!(&effects[..], [crate::tui::action::Effect::ApplyAs { .. }]), "{effects:?}");
    let conflicts = conflicts_of(
        [
            (".spec.replicas", "conflict with \"autoscaler\" using demo.example.com/v1"),
            (".spec.size", "conflict with \"kubectl-crd-edit\" using demo.example.com/v1"),
        ]
        .into_iter(),
    );
    let lines = verdict_lines("ci-bot", &ApplyVerdict::Conflicts(conflicts));
    apply(&mut s, Msg::ApplyVerdict { title: "apply as ci-bot widgets/default/widget-000".into(), lines });
    let buf = render(&mut s, 100, 12);
    snapshot!("apply_as_conflicts", buf);
    let t = text(&buf);
    assert!(t.contains(".spec.replicas  \"autoscaler\" using demo.example.com/v1"), "{t}");
}

/// `M` on a resource: every owned field with its manager, operation, subresource and time.
#[test]
fn field_owners_list_each_field_with_its_manager() {
    let mut s = state();
    on_resources(&mut s, 5);
    press(&mut s, KeyCode::Enter);
    let mut obj = widget("widget-000", 0);
    obj["metadata"]["managedFields"] = serde_json::json!([
        {"manager": "kubectl-crd-apply", "operation": "Update", "time": "2026-11-26T10:00:00Z",
            "fieldsV1": {"f:spec": {"f:color": {}, "f:size": {}}}},
        {"manager": "widget-controller", "operation": "Update", "subresource": "status",
            "time": "2026-11-26T10:01:00Z", "fieldsV1": {"f:status": {"f:replicas": {}}}},
        {"manager": "ci-bot", "operation": "Apply", "time": "2026-11-26T10:02:00Z",
            "fieldsV1": {"f:spec": {"f:replicas": {}}}},
    ]);
    apply(&mut s, Msg::Object { key: ObjKey::new(Some("default"), "widget-000"), result: Ok(obj) });
    type_keys(&mut s, "M");
    let buf = render(&mut s, 100, 10);
    snapshot!("field_owners", buf);
    let t = text(&buf);
    assert!(
        t.lines().any(|l| l.contains("status.replicas") && l.contains("widget-controller") && l.contains("status")),
        "{t}"
    );
}

#[test]
fn a_count_on_its_way_shows_as_pending_and_then_as_the_count() {
    let mut s = state();
    let crd = crate::tui::fixtures::crd("anvils", "Anvil").build();
    apply(&mut s, Msg::Registrations(Ok(vec![crate::tui::model::Registration::uncounted(crd)])));
    let line = |s: &mut State| {
        let screen = text(&render(s, 140, 10));
        screen.lines().find(|l| l.contains("anvils.demo.example.com")).map(String::from).unwrap_or(screen)
    };
    assert!(line(&mut s).contains(lists::COUNTING), "{}", line(&mut s));
    apply(&mut s, Msg::Counted { crd: "anvils.demo.example.com".into(), count: Some(42) });
    let counted = line(&mut s);
    assert!(counted.contains(" 42 ") && !counted.contains(lists::COUNTING), "{counted}");
}
