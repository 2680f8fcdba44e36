//! The CEL workbench end to end, in tmux on `serve`: `c` on the demo's databases CRD, its
//! transition rule tried twice through a scripted editor (a shrinking storageGB fails in
//! the rule's own words, a growing one passes), the cases saved with `s`, and the saved
//! directory run by `kubectl crd test`, which must pass. Helpers are `tui_e2e`'s.

use crate::tui_e2e::{editor_script, only, tui_on_served_with};
use std::process::Command;

#[test]
fn the_cel_workbench_evaluates_edited_values_and_saves_cases_kubectl_crd_test_passes() {
    let dir = tempfile::tempdir().expect("tempdir");
    // First edit: storageGB shrinks to 5 (below every demo database's); then it grows to 50.
    let count = dir.path().join("edits");
    let editor = editor_script(
        dir.path(),
        &format!(
            "n=$(cat {count} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {count}\n\
             if [ $n = 1 ]; then v=5; else v=50; fi\n\
             sed -i \"s/^self: .*/self: $v/\" \"$1\"",
            count = count.display()
        ),
    );
    // The TUI saves into its working directory: the test's.
    let (_served, t, _data) = tui_on_served_with(dir.path(), Some(&editor), (140, 34));
    t.wait_for(&["databases.demo.example.com"]);
    only(&t, "databases");
    t.keys(&["c"]);
    t.wait_for(&["cel databases.demo.example.com", "[6 rules]", "spec.storageGB", "values start from"]);

    // The transition rule (third row): a shrink fails with its message, a growth passes.
    t.keys(&["j", "j", "Enter"]);
    let screen =
        t.wait_for(&["FAILED", "spec.storageGB: Invalid value: \"integer\": storageGB can grow but never shrink"]);
    assert!(screen.contains("self      5") && screen.contains("estimated 3 · actual 3"), "{screen}");
    t.keys(&["Enter"]);
    t.wait_for(&["PASSED", "self      50", "[2 cases kept"]);

    t.keys(&["s"]);
    t.wait_for(&["saved 2 cases to cel-databases.demo.example.com"]);
    t.keys(&["q"]);
    t.wait_for(&["TUI-EXIT=0"]);

    let saved = dir.path().join("cel-databases.demo.example.com");
    let out =
        Command::new(env!("CARGO_BIN_EXE_kubectl-crd")).arg("test").arg(&saved).output().expect("kubectl-crd test");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout.matches("PASS").count(), 2, "{stdout}");
}
