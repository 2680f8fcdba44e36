//! The schema explorer end to end, in tmux on `serve` with the demo: the databases CRD's
//! detail previews its printer columns on real objects (the Backup column flagged as empty
//! on all of them), and its schema tree shows each field's markers, the selected field's
//! attributes and CEL rules; `d` prints the same in text. Helpers are `tui_e2e`'s.

use crate::tui_e2e::tui_on_served_with;

#[test]
fn the_schema_explorer_shows_attributes_rules_and_the_printer_column_preview() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_served, t, _data) = tui_on_served_with(dir.path(), None, (160, 45));
    t.wait_for(&["databases.demo.example.com"]);
    t.keys(&["/"]);
    t.type_text("^databases");
    t.keys(&["Enter"]);
    t.keys(&["i"]);
    // The left pane: each column's path and cells on three objects; Backup's are all empty.
    let screen = t.wait_for(&["printer columns on", "Engine", ".spec.engine", "empty on all 3 objects"]);
    assert!(
        screen.lines().any(|l| l.contains("Backup")
            && l.contains(".spec.backup.schedule")
            && l.contains("! empty on all 3 objects")),
        "{screen}"
    );
    assert!(screen.lines().any(|l| l.contains("Engine") && l.contains("mysql")), "{screen}");
    // p: the left pane shows only the preview, every version's; again: everything.
    t.keys(&["p"]);
    // Both versions' previews, drawn as each version's objects are read.
    let screen = t.wait_until("both versions' previews", |s| {
        s.contains("Printer columns, previewed on objects (p: everything)")
            && s.matches("! empty on all 3 objects").count() >= 2
    });
    assert_eq!(screen.matches("! empty on all 3 objects").count(), 2, "v1 and v1beta1: {screen}");
    t.keys(&["p"]);
    t.wait_for(&["Names (spec ⇄ accepted)"]);

    // The tree: spec's CEL rules under it once selected.
    t.keys(&["Tab", "j"]);
    let screen = t.wait_for(&["spec", "CEL×2", "rule: self.engine != 'redis'", "fieldPath: .storageGB"]);
    assert!(screen.contains("messageExpression: self.engine + ' keeps its data in memory"), "{screen}");
    assert!(screen.contains("message: redis databases are not backed up"), "{screen}");
    // Into spec, down to storageGB (backup, engine, parameters, podTemplate, ports, replicas).
    t.keys(&["l", "j", "j", "j", "j", "j", "j", "j"]);
    let screen = t.wait_for(&["minimum 1, maximum 1000", "default: 10"]);
    assert!(
        screen.lines().any(|l| l.contains("storageGB") && l.contains("<integer int32>") && l.contains("≥1 ≤1000")),
        "{screen}"
    );
    assert!(screen.lines().any(|l| l.contains("ports") && l.contains("list:map[name]")), "{screen}");
    assert!(screen.lines().any(|l| l.contains("version") && l.contains("pattern")), "{screen}");

    // describe: one line per field path, the rules under it, the preview at the end.
    t.keys(&["d"]);
    t.wait_for(&["describe customresourcedefinition/databases.demo.example.com"]);
    t.keys(&["/"]);
    t.type_text("spec.storageGB  <integer");
    t.keys(&["Enter"]);
    let screen = t.wait_for(&["spec.storageGB  <integer int32>  minimum 1, maximum 1000; default: 10"]);
    assert!(screen.contains("rule: self.engine != 'redis'") || screen.contains("spec.version"), "{screen}");
    t.keys(&["/"]);
    t.type_text("Printer columns v1beta1");
    t.keys(&["Enter"]);
    t.wait_for(&["Printer columns v1beta1 on 3 objects:", "! empty on all 3 objects"]);
    t.keys(&["q"]);
    t.wait_for(&["TUI-EXIT=0"]);
}
