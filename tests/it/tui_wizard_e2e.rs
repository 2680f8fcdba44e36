//! The migration wizard end to end, in tmux as `tui_e2e`: run to the end, run again after a
//! crash half-way, and `kubectl crd migrate run`'s questions answered in a terminal.

use super::tui_e2e::{KEEP_PANE, NEW_CRD, Tmux, editor_script, gizmos_crd, load_demo, only, read_local};
use crate::support::migrate::{
    CONTROLLER, CONTROLLER_REPLICAS, ar, controller_crd, controller_replicas, crd_exists, create_crd,
};
use kube::api::{Api, DynamicObject};
use std::path::Path;

const OLD_CRD: &str = "widgets.demo.example.com";

/// What the local engine in `data` holds: which of the two CRDs exist, and every object
/// of `kind` by namespace/name with its spec and status.
struct Stored {
    crds: Vec<String>,
    objects: std::collections::BTreeMap<String, serde_json::Value>,
}

fn stored(data: &Path, group: &str, kind: &str) -> Stored {
    read_local(data, async |client| {
        let mut crds = vec![];
        for name in [OLD_CRD, NEW_CRD] {
            if crd_exists(&client, name).await {
                crds.push(name.to_string());
            }
        }
        let resource = ar(group, kind);
        let mut objects = std::collections::BTreeMap::new();
        if crds.contains(&format!("{}.{group}", resource.plural)) {
            let api: Api<DynamicObject> = Api::all_with(client, &resource);
            for o in api.list(&Default::default()).await.expect("list").items {
                let ns = o.metadata.namespace.clone().unwrap_or_default();
                let key = format!("{ns}/{}", o.metadata.name.clone().unwrap_or_default());
                objects.insert(key, serde_json::json!({"spec": o.data["spec"], "status": o.data["status"]}));
            }
        }
        Stored { crds, objects }
    })
}

/// Adds a stand-in for a controller to `data`: an object with `/scale` in namespace
/// `ops` (the local engine has no Deployments), at [`CONTROLLER_REPLICAS`].
fn add_controller(data: &Path) {
    read_local(data, async |client| {
        let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
        let ns = serde_json::from_value(serde_json::json!({"metadata": {"name": "ops"}})).expect("ns");
        namespaces.create(&Default::default(), &ns).await.expect("namespace");
        create_crd(&client, &controller_crd()).await;
        let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), "ops", &ar("ops.example.com", "Controller"));
        let c = serde_json::from_value(serde_json::json!({"apiVersion": "ops.example.com/v1", "kind": "Controller",
            "metadata": {"name": "crontab-controller"}, "spec": {"replicas": CONTROLLER_REPLICAS}}))
        .expect("controller");
        api.create(&Default::default(), &c).await.expect("controller");
    })
}

/// Asserts the widgets moved: the old CRD gone, the new one there, every object under the
/// new kind with the spec and status it had.
fn assert_migrated(data: &Path, before: &Stored) {
    let after = stored(data, "migrated.example.org", "Gizmo");
    assert_eq!(after.crds, vec![NEW_CRD.to_string()], "the old CRD is gone, the new one is there");
    assert_eq!(after.objects.len(), 180);
    assert_eq!(after.objects, before.objects, "every widget is a gizmo with its spec and status");
}

fn journal_phase(xdg: &Path) -> String {
    let path = xdg.join("kubectl-crd/migrations").join(format!("{OLD_CRD}--to--{NEW_CRD}")).join("journal.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let journal: serde_json::Value = serde_json::from_str(&text).expect("journal");
    journal["phase"].as_str().unwrap_or_default().to_string()
}

/// The TUI on the local engine in `data`, its journals under `xdg`, its standard error in
/// `run` (where its [`Tmux`] lives), with `env` set.
fn tui_command(run: &Path, xdg: &Path, data: &Path, env: &str) -> String {
    format!(
        "XDG_DATA_HOME={} {env} {} --local={} tui 2>{}; echo TUI-EXIT=$?; {KEEP_PANE}",
        xdg.display(),
        env!("CARGO_BIN_EXE_kubectl-crd"),
        data.display(),
        run.join("stderr").display(),
    )
}

/// Answers the questions of a run from the start question to the end; with a
/// `controller` named, the question before it is scaled to 0 too.
fn confirm_run(t: &Tmux, controller: Option<&str>) {
    t.wait_for(&["Start the migration of 180 objects to gizmos.migrated.example.org? [y/n]"]);
    t.keys(&["y"]);
    if let Some(c) = controller {
        t.wait_for(&[&format!("Scale {c} to 0 replicas until the migration is done? [y/n]")]);
        t.keys(&["y"]);
    }
    t.wait_for(&["Delete the 180 widgets.demo.example.com objects", "[y/n]"]);
    t.keys(&["y"]);
    t.wait_for(&["Delete the old CustomResourceDefinition widgets.demo.example.com? [y/n]"]);
    t.keys(&["y"]);
}

#[test]
fn the_wizard_migrates_a_registration_to_a_new_crd() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    load_demo(&data);
    let before = stored(&data, "demo.example.com", "Widget");
    assert_eq!(before.objects.len(), 180);
    add_controller(&data);
    let new_crd = dir.path().join("gizmos.yaml");
    std::fs::write(&new_crd, serde_json::to_vec_pretty(&gizmos_crd()).expect("json")).expect("write");
    let xdg = dir.path().join("xdg");
    let t = Tmux::start(dir.path(), &tui_command(dir.path(), &xdg, &data, ""), 130, 50);

    t.wait_for(&["customresourcedefinitions [", OLD_CRD]);
    only(&t, "^widgets");
    t.keys(&["m"]);
    t.wait_for(&["migrate widgets.demo.example.com", "New CRD file:", "Controllers to stop:"]);
    t.type_text(&new_crd.display().to_string());
    // A wrong controller is refused before planning; the field is fixed in place.
    t.keys(&["Tab"]);
    t.type_text("ops/a/b/c");
    t.keys(&["Enter"]);
    t.wait_for(&["invalid controller(s) to stop: \"ops/a/b/c\""]);
    t.keys(&["C-u"]);
    t.type_text(CONTROLLER);
    t.keys(&["Enter"]);
    // The plan, as `kubectl crd migrate plan` prints it.
    let screen = t.wait_for(&[
        "Migration widgets.demo.example.com--to--gizmos.migrated.example.org",
        "Objects: 180",
        "ops/controllers/crontab-controller (controllers.ops.example.com): 2 replica(s)",
        "Enter starts the migration",
    ]);
    for ns in ["default", "team-a", "team-b", "team-c"] {
        assert!(screen.contains(&format!("  {ns} ")), "{ns} in the plan:\n{screen}");
    }
    t.keys(&["Enter"]);
    confirm_run(&t, Some(CONTROLLER));
    let screen = t.wait_for(&["Done: 0 difference(s).", "checked against the new kind: 0 difference(s)"]);
    assert!(screen.contains("✓ recreate") && screen.contains("✓ verify"), "{screen}");
    // Esc closes the wizard, Esc again drops the filter: the new CRD is in the list.
    t.keys(&["Escape"]);
    t.wait_until("the wizard closed", |screen| !screen.contains(" migrate widgets.demo.example.com "));
    t.keys(&["Escape"]);
    t.wait_for(&["customresourcedefinitions [", NEW_CRD]);
    t.keys(&["q"]);
    t.wait_for(&["TUI-EXIT=0"]);

    assert_eq!(journal_phase(&xdg), "completed");
    assert_migrated(&data, &before);
    let replicas = read_local(&data, async |client| controller_replicas(&client).await);
    assert_eq!(replicas, CONTROLLER_REPLICAS, "the controller is back");
}

#[test]
fn an_interrupted_wizard_is_offered_for_resuming_and_finishes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    load_demo(&data);
    let before = stored(&data, "demo.example.com", "Widget");
    // The new CRD written in the editor from the current one, as a person would in vi.
    let editor = editor_script(
        dir.path(),
        "sed -i -e 's/name: widgets.demo.example.com/name: gizmos.migrated.example.org/' \\
            -e 's/group: demo.example.com/group: migrated.example.org/' -e 's/kind: Widget$/kind: Gizmo/' \\
            -e 's/listKind: WidgetList/listKind: GizmoList/' -e 's/plural: widgets/plural: gizmos/' \\
            -e 's/singular: widget$/singular: gizmo/' -e 's/- wd$/- gz/' \"$1\"",
    );
    // The first run dies (SIGKILL) half-way through recreating the objects.
    let crash = format!("KUBE_EDITOR={} KUBECTL_CRD_MIGRATE_CRASH_AT=recreate:20", editor.display());
    let xdg = dir.path().join("xdg");
    let t = Tmux::start(dir.path(), &tui_command(dir.path(), &xdg, &data, &crash), 130, 50);
    t.wait_for(&["customresourcedefinitions [", OLD_CRD]);
    only(&t, "^widgets");
    t.keys(&["m"]);
    t.wait_for(&["New CRD file:"]);
    t.keys(&["C-e"]);
    t.wait_for(&["Migration widgets.demo.example.com--to--gizmos.migrated.example.org", "Enter starts the migration"]);
    t.keys(&["Enter"]);
    confirm_run(&t, None);
    t.wait_for(&["TUI-EXIT=137"]);
    drop(t);
    assert_eq!(journal_phase(&xdg), "forward", "the journal kept the place");

    // Started again (a tmux server of its own): the unfinished migration is offered at
    // once; Esc declines, and `m` on the new CRD (the old one is gone by now) offers it again.
    let again = dir.path().join("again");
    std::fs::create_dir_all(&again).expect("mkdir");
    let t = Tmux::start(&again, &tui_command(&again, &xdg, &data, ""), 130, 50);
    let screen = t.wait_for(&["An unfinished migration of widgets.demo.example.com to gizmos.migrated.example.org"]);
    assert!(screen.contains("✓ delete-old-crd") && screen.contains("▶ recreate"), "{screen}");
    t.keys(&["Escape"]);
    t.wait_for(&["customresourcedefinitions [", NEW_CRD]);
    only(&t, "^gizmos");
    t.keys(&["m"]);
    t.wait_for(&["An unfinished migration of widgets.demo.example.com", "y resumes where it stopped"]);
    t.keys(&["y"]);
    t.wait_for(&["Done: 0 difference(s).", "checked against the new kind: 0 difference(s)"]);
    t.keys(&["Escape"]);
    t.keys(&["q"]);
    t.wait_for(&["TUI-EXIT=0"]);

    assert_eq!(journal_phase(&xdg), "completed");
    assert_migrated(&data, &before);
}

/// `kubectl crd migrate run` without `--yes`, in a terminal: each question is answered as
/// a person answers it, `y` then Enter, and the run goes to the end. A prompt that took the
/// `y` alone would leave the Enter to answer the next question "no".
#[test]
fn the_migrate_command_s_questions_take_a_whole_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    load_demo(&data);
    let before = stored(&data, "demo.example.com", "Widget");
    add_controller(&data);
    let new_crd = dir.path().join("gizmos.yaml");
    std::fs::write(&new_crd, serde_json::to_vec_pretty(&gizmos_crd()).expect("json")).expect("write");
    let command = format!(
        "XDG_DATA_HOME={} {} --local={} migrate run --from {OLD_CRD} --to {} --controller {CONTROLLER} 2>&1; echo MIGRATE-EXIT=$?; {KEEP_PANE}",
        dir.path().join("xdg").display(),
        env!("CARGO_BIN_EXE_kubectl-crd"),
        data.display(),
        new_crd.display(),
    );
    let t = Tmux::start(dir.path(), &command, 200, 50);
    for question in [
        "Start the migration of 180 objects to gizmos.migrated.example.org? [y/N]",
        &format!("Scale {CONTROLLER} to 0 replicas until the migration is done? [y/N]"),
        "Delete the 180 widgets.demo.example.com objects (backed up;",
        "Delete the old CustomResourceDefinition widgets.demo.example.com? [y/N]",
    ] {
        t.wait_for(&[question]);
        t.keys(&["y", "Enter"]);
    }
    let screen = t.wait_for(&["MIGRATE-EXIT="]);
    assert!(screen.contains("MIGRATE-EXIT=0") && screen.contains("Done in"), "{screen}");
    assert_migrated(&data, &before);
}
