//! The owner tree and the conditions timeline end to end, in tmux on `serve` loaded with
//! the demo: `o` on the demo's Database `team-a/postgres-01` shows its cluster-scoped
//! owner and its dependents (two Widgets and a ConfigMap), Enter opens a dependent; `t` on
//! the Database shows its Ready condition, and a status patch by kubectl shows as a
//! transition. Helpers are `tui_e2e`'s.

use crate::tui_e2e::{kubectl, tui_on_served};

#[test]
fn the_owner_tree_and_the_conditions_timeline_follow_the_demo_and_kubectl() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_served, t, data) = tui_on_served(dir.path());
    t.keys(&[":"]);
    t.type_text("ns team-a");
    t.keys(&["Enter"]);
    t.keys(&[":"]);
    t.type_text("databases");
    t.keys(&["Enter"]);
    t.wait_for(&["databases(team-a)", "postgres-01"]);
    t.keys(&["/"]);
    t.type_text("^postgres-01$");
    t.keys(&["Enter"]);
    t.wait_for(&["databases(team-a) [1/"]);

    // One list per kind: the owner above (cluster scope), the dependents below.
    t.keys(&["o"]);
    let screen = t.wait_for(&[
        "owners databases/team-a/postgres-01",
        "● Database team-a/postgres-01",
        "↑ ClusterPolicy policy-01",
        "↓ ConfigMap team-a/postgres-01-config (controller)",
        "↓ Widget team-a/widget-001 (controller)",
        "↓ Widget team-a/widget-002 (controller)",
    ]);
    assert!(screen.contains("Ready=True"), "the root's status summary:\n{screen}");
    // Enter on a dependent opens it (the last row: widget-002).
    t.keys(&["G", "Enter"]);
    t.wait_for(&["widgets/team-a/widget-002", "kind Widget"]);
    t.keys(&["Escape"]);
    t.wait_for(&["owners databases/team-a/postgres-01"]);
    t.keys(&["Escape"]);
    t.wait_for(&["databases(team-a) [1/"]);

    // The timeline starts with the condition as first read; kubectl flips it.
    t.keys(&["Enter"]);
    t.wait_for(&["databases/team-a/postgres-01", "kind Database"]);
    t.keys(&["t"]);
    t.wait_for(&["conditions timeline [1]", "→True", "every replica accepts connections"]);
    let body = r#"{"status":{"conditions":[{"type":"Ready","status":"False","reason":"Failover","message":"the primary is lost","lastTransitionTime":"2026-11-26T10:00:00Z"}]}}"#;
    let args = [
        "patch",
        "databases.demo.example.com",
        "postgres-01",
        "-n",
        "team-a",
        "--subresource=status",
        "--type=merge",
        "-p",
        body,
    ];
    kubectl(&data, &args);
    let screen = t.wait_for(&["conditions timeline [2]", "True→False", "Failover", "the primary is lost"]);
    let newest = screen.lines().position(|l| l.contains("True→False"));
    let oldest = screen.lines().position(|l| l.contains("→True") && !l.contains("True→False"));
    assert!(newest < oldest && oldest.is_some(), "newest first:\n{screen}");

    // On a CRD: its objects with owners or dependents (in the namespace), the rest counted.
    t.keys(&[":"]);
    t.type_text("crd");
    t.keys(&["Enter"]);
    t.keys(&["/"]);
    t.type_text("^databases");
    t.keys(&["Enter"]);
    t.wait_for(&["[1/"]);
    t.keys(&["o"]);
    t.wait_for(&[
        "owners databases.demo.example.com (its objects)",
        "● Database team-a/postgres-01",
        "29 more with neither owners nor dependents",
    ]);
    t.keys(&["q"]);
    t.wait_for(&["TUI-EXIT=0"]);
}
