//! The TUI's IO half against a real engine (in memory, through `kube::Client`): edits of
//! spec and status, a 409 Conflict shown with what changed on the server and re-applied on
//! the new version with nothing the user typed lost, and scale from 0 on marked rows.

use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kubectl_crd::cluster::registrations::find_crd;
use kubectl_crd::cluster::tui_ops::resource_of;
use kubectl_crd::cluster::{Connection, ResourceType, demo};
use kubectl_crd::tui::action::{Effect, Msg};
use kubectl_crd::tui::edit;
use kubectl_crd::tui::runtime::{EditJob, finish_edit, perform, prepare_edit};
use kubectl_crd::tui::state::{EditPart, ScaleChange};
use kubectl_crd::tui::table::ObjKey;
use serde_json::{Value, json};

async fn demo_engine() -> (Connection, ResourceType) {
    let conn = Connection::in_memory(None).await.expect("engine");
    demo::load(conn.client(), |_| {}).await.expect("demo");
    let crd = find_crd(conn.client(), "widgets").await.expect("widgets");
    (conn, resource_of(&crd).expect("served"))
}

fn key(name: &str) -> ObjKey {
    ObjKey::new(Some("default"), name)
}

async fn stored(conn: &Connection, kind: &ResourceType, name: &str) -> Value {
    let api: Api<DynamicObject> = kind.api(conn.client(), Some("default"));
    serde_json::to_value(api.get(name).await.expect("get")).expect("json")
}

async fn server_patch(conn: &Connection, kind: &ResourceType, name: &str, patch: Value, status: bool) {
    let api: Api<DynamicObject> = kind.api(conn.client(), Some("default"));
    let pp = PatchParams::default();
    if status {
        api.patch_status(name, &pp, &Patch::Merge(&patch)).await.expect("status patch");
    } else {
        api.patch(name, &pp, &Patch::Merge(&patch)).await.expect("patch");
    }
}

/// Writes what "the user typed" into the kept file, as the editor would.
fn type_into(path: &std::path::Path, doc: &Value, part: EditPart) {
    std::fs::write(path, edit::render(doc, part, "test")).expect("write edit");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_spec_conflict_shows_the_server_change_and_reapplies_the_edit() {
    let (conn, kind) = demo_engine().await;
    let client = conn.client();
    let (against, base, kept) = prepare_edit(client, &kind, &key("widget-002"), EditPart::Spec).await.expect("prepare");
    assert!(base.get("status").is_none(), "a spec edit shows no status");
    let mut edited = base.clone();
    edited["spec"]["size"] = json!(7);
    type_into(&kept, &edited, EditPart::Spec);
    // Meanwhile someone else changes the color.
    server_patch(&conn, &kind, "widget-002", json!({"spec": {"color": "blue"}}), false).await;

    let job = EditJob {
        kind: kind.clone(),
        key: key("widget-002"),
        part: EditPart::Spec,
        kept: kept.clone(),
        base: base.clone(),
        edited: base.clone(),
    };
    let Msg::Conflict(dialog) = finish_edit(client, against, job).await else { panic!("expected a conflict") };
    assert!(
        dialog.server_changes.iter().any(|c| c.starts_with("~ spec.color:") && c.ends_with("\"blue\"")),
        "{:?}",
        dialog.server_changes
    );
    assert!(kept.exists(), "the edit is kept while the user decides");
    assert_eq!(dialog.edited["spec"]["size"], 7);

    let effect = Effect::Reapply {
        kind: dialog.kind.clone(),
        key: dialog.key.clone(),
        part: dialog.part,
        base: dialog.base.clone(),
        edited: dialog.edited.clone(),
        kept: dialog.kept.clone(),
    };
    let msg = perform(client, effect).await.expect("a message");
    assert!(matches!(&msg, Msg::Saved(m) if m.starts_with("saved the spec of widgets/default/widget-002")), "{msg:?}");
    let obj = stored(&conn, &kind, "widget-002").await;
    assert_eq!((obj["spec"]["size"].clone(), obj["spec"]["color"].clone()), (json!(7), json!("blue")), "both changes");
    assert!(!kept.exists(), "saved edits leave no file behind");
}

/// `r` after a 409 where the server changed the field the user changed: not saved (one of
/// the two changes would be lost); the edit stays in its file and goes back to the editor.
#[tokio::test(flavor = "multi_thread")]
async fn a_reapply_over_the_same_field_is_refused_and_the_edit_kept() {
    let (conn, kind) = demo_engine().await;
    let client = conn.client();
    let (_against, base, kept) =
        prepare_edit(client, &kind, &key("widget-006"), EditPart::Spec).await.expect("prepare");
    let mut edited = base.clone();
    edited["spec"]["size"] = json!(7);
    type_into(&kept, &edited, EditPart::Spec);
    server_patch(&conn, &kind, "widget-006", json!({"spec": {"size": 2}}), false).await;
    let effect = Effect::Reapply {
        kind: kind.clone(),
        key: key("widget-006"),
        part: EditPart::Spec,
        base,
        edited,
        kept: kept.clone(),
    };
    let msg = perform(client, effect).await.expect("a message");
    assert!(
        matches!(&msg, Msg::EditRefused(r) if r.error.contains("both your edit and another writer changed spec.size") && r.kept == kept),
        "back to the editor with the reason: {msg:?}"
    );
    assert!(kept.exists(), "the edit is kept");
    assert_eq!(stored(&conn, &kind, "widget-006").await["spec"]["size"], 2, "the other writer's change stays");
}

#[tokio::test(flavor = "multi_thread")]
async fn status_edits_go_through_status_and_conflict_too() {
    let (conn, kind) = demo_engine().await;
    let client = conn.client();
    let (against, base, kept) =
        prepare_edit(client, &kind, &key("widget-003"), EditPart::Status).await.expect("prepare");
    assert_eq!(base.as_object().map(|m| m.len()), Some(1), "status alone: {base}");
    let mut edited = base.clone();
    edited["status"]["phase"] = json!("Degraded");
    type_into(&kept, &edited, EditPart::Status);
    server_patch(&conn, &kind, "widget-003", json!({"status": {"observedGeneration": 99}}), true).await;
    let job = EditJob {
        kind: kind.clone(),
        key: key("widget-003"),
        part: EditPart::Status,
        kept: kept.clone(),
        base: base.clone(),
        edited: base,
    };
    let Msg::Conflict(dialog) = finish_edit(client, against, job).await else { panic!("expected a conflict") };
    assert!(
        dialog.server_changes.iter().any(|c| c.contains("status.observedGeneration")),
        "{:?}",
        dialog.server_changes
    );
    let effect = Effect::Reapply {
        kind: kind.clone(),
        key: key("widget-003"),
        part: EditPart::Status,
        base: dialog.base,
        edited: dialog.edited,
        kept,
    };
    let msg = perform(client, effect).await.expect("a message");
    assert!(matches!(&msg, Msg::Saved(m) if m.contains("status")), "{msg:?}");
    let obj = stored(&conn, &kind, "widget-003").await;
    assert_eq!(obj["status"]["phase"], "Degraded");
    assert_eq!(obj["status"]["observedGeneration"], 99);
}

#[tokio::test(flavor = "multi_thread")]
async fn status_typed_in_a_spec_edit_is_ignored_and_said() {
    let (conn, kind) = demo_engine().await;
    let client = conn.client();
    let before = stored(&conn, &kind, "widget-004").await;
    let (against, base, kept) = prepare_edit(client, &kind, &key("widget-004"), EditPart::Spec).await.expect("prepare");
    let mut edited = base.clone();
    edited["spec"]["size"] = json!(9);
    edited["status"] = json!({"phase": "Typed"});
    type_into(&kept, &edited, EditPart::Spec);
    let job = EditJob {
        kind: kind.clone(),
        key: key("widget-004"),
        part: EditPart::Spec,
        kept,
        base: base.clone(),
        edited: base,
    };
    let msg = finish_edit(client, against, job).await;
    assert!(matches!(&msg, Msg::Saved(m) if m.contains("status typed there was ignored")), "{msg:?}");
    let after = stored(&conn, &kind, "widget-004").await;
    assert_eq!(after["spec"]["size"], 9);
    assert_eq!(after["status"], before["status"], "the status did not change");
}

#[tokio::test(flavor = "multi_thread")]
async fn marked_rows_scale_from_zero_by_a_step() {
    let (conn, kind) = demo_engine().await;
    let client = conn.client();
    let targets = vec![key("widget-001"), key("widget-005")];
    for t in &targets {
        server_patch(&conn, &kind, &t.name, json!({"spec": {"replicas": 0}}), false).await;
    }
    let msg =
        perform(client, Effect::SetScale { kind: kind.clone(), targets: targets.clone(), change: ScaleChange::By(2) })
            .await
            .expect("a message");
    assert!(matches!(&msg, Msg::Saved(m) if m.contains("widget-001 → 2") && m.contains("widget-005 → 2")), "{msg:?}");
    for t in &targets {
        assert_eq!(stored(&conn, &kind, &t.name).await["spec"]["replicas"], 2);
    }
    let msg = perform(
        client,
        Effect::SetScale { kind: kind.clone(), targets: vec![key("no-such")], change: ScaleChange::To(1) },
    )
    .await
    .expect("a message");
    assert!(matches!(&msg, Msg::Error(m) if m.contains("no-such")), "{msg:?}");
}

/// The wizard's IO offers and opens only journals made on its own cluster: at start (and
/// on `m`) another engine's unfinished migration is not listed, and opening it by its
/// directory is refused, naming the cluster it belongs to.
#[tokio::test(flavor = "multi_thread")]
async fn the_wizard_offers_and_opens_only_its_own_cluster_s_journals() {
    use kubectl_crd::cluster::identity::identify;
    use kubectl_crd::migrate::plan::{Input, Request, Source};
    use kubectl_crd::migrate::{Migration, journal::journals_here};
    use kubectl_crd::tui::wizard::driver::Driver;
    use kubectl_crd::tui::wizard::{WizardEffect, WizardMsg};
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("journals");
    let (mine, _) = demo_engine().await;
    let (theirs, _) = demo_engine().await;
    // An unfinished migration of the widgets on the other engine.
    let crd = tmp.path().join("gizmos.json");
    let mut doc: Value =
        serde_json::to_value(find_crd(theirs.client(), "widgets").await.expect("widgets")).expect("json");
    doc["metadata"] = json!({"name": "gizmos.migrated.example.org"});
    doc["spec"]["group"] = json!("migrated.example.org");
    doc["spec"]["names"] = json!({"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo", "listKind": "GizmoList"});
    doc.as_object_mut().expect("object").remove("status");
    std::fs::write(&crd, doc.to_string()).expect("write");
    let request = Request {
        from: Source::Crd { name: "widgets".into() },
        to: Some(Input::read(&crd).expect("read")),
        tpr_names: None,
        controllers: vec![],
        versions: Default::default(),
        into_namespace: None,
        validate: false,
    };
    let plan = Migration::plan(theirs.client(), &request).await.expect("plan");
    let there = identify(theirs.client(), theirs.origin()).await.expect("identity");
    let dir = root.join(&plan.id);
    Migration::create(&plan, &dir, &there).expect("journal");
    assert_eq!(journals_here(&root, &there).0.len(), 1);

    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut driver = Driver::default();
    let mut reply = async |effect: WizardEffect, conn: &Connection| {
        driver.perform(conn.client(), conn.origin(), &tx, effect);
        loop {
            match tokio::time::timeout(std::time::Duration::from_secs(10), rx.recv()).await.expect("a reply") {
                Some(Msg::Wizard(msg)) => return msg,
                _ => continue,
            }
        }
    };
    for crd in [None, Some("widgets.demo.example.com".to_string())] {
        let found = reply(WizardEffect::FindJournals { root: root.clone(), crd: crd.clone() }, &mine).await;
        assert_eq!(
            found,
            WizardMsg::Journals { crd: crd.clone(), found: vec![] },
            "another cluster's journal is not offered"
        );
        let WizardMsg::Journals { found, .. } =
            reply(WizardEffect::FindJournals { root: root.clone(), crd }, &theirs).await
        else {
            panic!("journals")
        };
        assert_eq!(found.len(), 1, "its own cluster is offered it");
    }
    let WizardMsg::Ready(Err(e)) = reply(WizardEffect::Open { dir, rollback: false }, &mine).await else {
        panic!("opening another cluster's journal is refused")
    };
    assert!(e.contains("belongs to another cluster, memory (kube-system uid "), "{e}");
}

/// A save the server refuses (422 from the schema) goes back to the editor with the reason,
/// and the text as typed stays in the file; a refused edit fixed and saved goes through.
#[tokio::test(flavor = "multi_thread")]
async fn a_refused_save_goes_back_to_the_editor_with_the_reason() {
    let (conn, kind) = demo_engine().await;
    let client = conn.client();
    let (against, base, kept) = prepare_edit(client, &kind, &key("widget-007"), EditPart::Spec).await.expect("prepare");
    let mut edited = base.clone();
    edited["spec"]["size"] = json!(99);
    type_into(&kept, &edited, EditPart::Spec);
    let job = EditJob {
        kind: kind.clone(),
        key: key("widget-007"),
        part: EditPart::Spec,
        kept: kept.clone(),
        base: base.clone(),
        edited: base,
    };
    let Msg::EditRefused(refused) = finish_edit(client, against, job.clone()).await else {
        panic!("expected a refusal")
    };
    assert!(refused.error.contains("422") && refused.error.contains("spec.size"), "{}", refused.error);
    let written = kubectl_crd::tui::runtime::write_refused(&refused).expect("rewritten");
    assert!(written.contains("# NOT SAVED") && written.contains("size: 99"), "{written}");
    // The user fixes the value under the comments and saves.
    std::fs::write(&kept, written.replace("size: 99", "size: 9")).expect("fix");
    let against = kubectl_crd::tui::runtime::reread(client, &refused).await.expect("reread");
    let msg = finish_edit(client, against, job).await;
    assert!(matches!(&msg, Msg::Saved(m) if m.starts_with("saved the spec")), "{msg:?}");
    assert_eq!(stored(&conn, &kind, "widget-007").await["spec"]["size"], 9);
}

/// A kind without a status subresource: the edit shows the status, and a status typed there
/// is saved with the object (it is an ordinary field), not dropped.
#[tokio::test(flavor = "multi_thread")]
async fn without_a_status_subresource_the_status_is_edited_with_the_object() {
    let (conn, _) = demo_engine().await;
    let client = conn.client();
    let crd = find_crd(client, "clusterpolicies").await.expect("clusterpolicies");
    let kind = resource_of(&crd).expect("served");
    assert!(!kind.status);
    let at = ObjKey::new(None, "policy-02");
    let (against, base, kept) = prepare_edit(client, &kind, &at, EditPart::Object).await.expect("prepare");
    assert_eq!(base["status"]["violations"], 7, "the status is shown: {base}");
    let mut edited = base.clone();
    edited["status"]["violations"] = json!(0);
    edited["spec"]["action"] = json!("audit");
    type_into(&kept, &edited, EditPart::Object);
    let job = EditJob { kind: kind.clone(), key: at, part: EditPart::Object, kept, base: base.clone(), edited: base };
    let msg = finish_edit(client, against, job).await;
    assert!(matches!(&msg, Msg::Saved(m) if m.starts_with("saved the object of clusterpolicies/policy-02")), "{msg:?}");
    let api: Api<DynamicObject> = kind.api(client, None);
    let obj = serde_json::to_value(api.get("policy-02").await.expect("get")).expect("json");
    assert_eq!((obj["spec"]["action"].clone(), obj["status"]["violations"].clone()), (json!("audit"), json!(0)));
}

/// Ctrl-D's IO: the confirmed objects go, and a CRD goes with its custom resources.
#[tokio::test(flavor = "multi_thread")]
async fn confirmed_deletes_remove_objects_and_a_crd() {
    use kubectl_crd::tui::state::Deletion;
    let (conn, kind) = demo_engine().await;
    let client = conn.client();
    let keys = vec![key("widget-001"), key("widget-002")];
    let msg = perform(client, Effect::Delete(Deletion::Objects { kind: kind.clone(), keys })).await.expect("a message");
    assert!(matches!(&msg, Msg::Saved(m) if m == "deleted widgets default/widget-001, default/widget-002"), "{msg:?}");
    let api: Api<DynamicObject> = kind.api(client, Some("default"));
    assert!(api.get_opt("widget-001").await.expect("get").is_none());
    let crd = Deletion::Crd { name: "widgets.demo.example.com".into(), plural: "widgets".into(), count: None };
    let msg = perform(client, Effect::Delete(crd)).await.expect("a message");
    assert!(matches!(&msg, Msg::Saved(m) if m.contains("deleted customresourcedefinition widgets")), "{msg:?}");
    let crds: Api<kubectl_crd::cluster::registrations::Crd> = Api::all(client.clone());
    let gone = crds.get_opt("widgets.demo.example.com").await.expect("get");
    assert!(gone.is_none_or(|c| c.metadata.deletion_timestamp.is_some()), "deleted or terminating");
}
