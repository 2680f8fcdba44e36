//! The author views end to end, in tmux on `serve` (a live cluster as far as the TUI
//! knows): the resources' SYNCED and CONDITIONS columns, and the event stream (`w`) with
//! each change's manager and diff, its pause, filter and full diff, as kubectl changes
//! the objects; and a resource's field owners (`M`). Helpers are `tui_e2e`'s.

use crate::tui_e2e::{editor_script, kubectl, tui_on_served, tui_on_served_with};

fn patch(data: &std::path::Path, name: &str, size: u32) {
    let body = format!(r#"{{"spec":{{"size":{size}}}}}"#);
    let args = ["patch", "widgets.demo.example.com", name, "--type=merge", "--field-manager=e2e-author", "-p", &body];
    kubectl(data, &args);
}

#[test]
fn the_event_stream_and_the_field_owners_follow_kubectl_s_changes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_served, t, data) = tui_on_served(dir.path());
    t.keys(&[":"]);
    t.type_text("widgets");
    t.keys(&["Enter"]);
    t.wait_for(&["widgets(default)", "widget-004", "SYNCED", "CONDITIONS"]);

    t.keys(&["w"]);
    t.wait_for(&["events widgets(default)", "ADDED"]);
    // The filter keeps widget-004's events: its ADDED (the version later diffs start from).
    t.keys(&["/"]);
    t.type_text("widget-004");
    t.keys(&["Enter"]);
    t.wait_for(&["[1/", "</widget-004>", "default/widget-004"]);
    patch(&data, "widget-004", 7);
    let screen = t.wait_for(&["MODIFIED", "e2e-author", "spec: size 3→7"]);
    assert!(screen.lines().any(|l| l.contains("MODIFIED") && l.contains("Update")), "{screen}");

    // Paused, a change is counted, not shown; resumed, it is.
    t.keys(&["Space"]);
    t.wait_for(&["PAUSED (0 new)"]);
    patch(&data, "widget-004", 8);
    t.wait_for(&["PAUSED (1 new)"]);
    assert!(!t.screen().contains("size 7→8"), "{}", t.screen());
    t.keys(&["Space"]);
    t.wait_for(&["size 7→8"]);

    // Enter opens the newest event's whole diff.
    t.wait_for(&["[3/"]);
    t.keys(&["Enter"]);
    t.wait_for(&["MODIFIED default/widget-004", "by: e2e-author (Update)", "~ spec.size: 7 → 8", "metadata:"]);

    // Back on the list, widget-004's controller has not seen generation 3 yet.
    t.keys(&["Escape"]);
    t.wait_for(&["events widgets(default)"]);
    t.keys(&["Escape"]);
    let screen = t.wait_for(&["widgets(default)", "no (1/3)"]);
    assert!(screen.lines().any(|l| l.contains("widget-004") && l.contains("no (1/3)")), "{screen}");

    // Field owners (M on the resource): the patch's manager owns spec.size.
    t.keys(&["/"]);
    t.type_text("^widget-004$");
    t.keys(&["Enter"]);
    t.wait_for(&["widgets(default) [1/"]);
    t.keys(&["Enter"]);
    t.wait_for(&["widgets/default/widget-004", "size: 8"]);
    t.keys(&["M"]);
    let screen = t.wait_for(&["PATH", "MANAGER", "OPERATION", "SUBRESOURCE", "e2e-author"]);
    assert!(
        screen.lines().any(|l| l.contains("spec.size") && l.contains("e2e-author") && l.contains("Update")),
        "{screen}"
    );
    t.keys(&["q"]);
    t.wait_for(&["TUI-EXIT=0"]);
}

#[test]
fn apply_as_another_manager_names_the_conflicting_fields_and_their_owner() {
    let dir = tempfile::tempdir().expect("tempdir");
    // First run: ci-bot sets the size e2e-author owns (a conflict); second: only a new
    // label (clean). Nothing is saved either time.
    let second = dir.path().join("second");
    let editor = editor_script(
        dir.path(),
        &format!(
            "if [ -e {second} ]; then sed -i 's/^# manager: .*/# manager: ci-bot/; s/^  labels:/  labels:\\n    team: platform/' \"$1\"\n\
             else touch {second}; sed -i 's/^# manager: .*/# manager: ci-bot/; s/^  size: 4/  size: 6/' \"$1\"; fi",
            second = second.display()
        ),
    );
    let (_served, t, data) = tui_on_served_with(dir.path(), Some(&editor), (160, 30));
    patch(&data, "widget-003", 4);
    t.keys(&[":"]);
    t.type_text("widgets");
    t.keys(&["Enter"]);
    t.wait_for(&["widgets(default)", "widget-003"]);
    t.keys(&["/"]);
    t.type_text("^widget-003$");
    t.keys(&["Enter"]);
    t.wait_for(&["widgets(default) [1/"]);
    t.keys(&["Enter"]);
    t.wait_for(&["widgets/default/widget-003", "size: 4", "<A> apply as"]);

    t.keys(&["A"]);
    let screen = t.wait_for(&["apply as ci-bot", "1 conflict", "OWNED BY", ".spec.size"]);
    assert!(
        screen.lines().any(|l| l.contains(".spec.size") && l.contains("\"e2e-author\" using demo.example.com/v1")),
        "{screen}"
    );
    assert!(screen.contains("--force-conflicts --field-manager=ci-bot"), "{screen}");
    t.keys(&["Escape"]);
    t.wait_for(&["widgets/default/widget-003"]);

    t.keys(&["A"]);
    let screen = t.wait_for(&["no conflicts", "ci-bot would own:", "metadata.labels.team", "it would change:"]);
    assert!(screen.contains("platform"), "{screen}");
    // A dry run: the stored object has neither the new size nor the label.
    t.keys(&["Escape"]);
    t.wait_for(&["widgets/default/widget-003", "size: 4"]);
    assert!(!t.screen().contains("team: platform"), "{}", t.screen());
    t.keys(&["q"]);
    t.wait_for(&["TUI-EXIT=0"]);
}
