//! Shared by the migration tests and benchmark: CRD fixtures built in code, a cluster
//! loaded with CronTabs (status, labels, annotations, links between CronTabs) and
//! Runs (a custom kind of another group) that depend on them, the `kubectl-crd` binary run as a child process, and
//! the checks that a migration (or a rollback) kept everything.

#![allow(dead_code)]

use futures::StreamExt;
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams, PostParams};
use kubectl_crd::cluster::registrations::{Establishment, wait_for_established};
use kubectl_crd::cluster::{ConnectOptions, Connection, Target};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

pub const OLD_GROUP: &str = "stable.example.com";
pub const OLD_CRD: &str = "crontabs.stable.example.com";
pub const NEW_GROUP: &str = "batch.example.org";
pub const NEW_CRD: &str = "schedules.batch.example.org";
pub const NAMESPACES: [&str; 3] = ["team-a", "team-b", "team-c"];
pub const CONTROLLER: &str = "ops/controllers/crontab-controller";
pub const CONTROLLER_REPLICAS: i64 = 2;

pub use super::crd::CrdBuilder;

/// A CRD for CronTab-like objects: `kind` in `group`, one version `v1` with a schema for
/// `cronSpec`, `image` and `replicas` and a `/status`.
pub fn crontab_like(group: &str, kind: &str) -> CrdBuilder {
    let schema = json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
            "cronSpec": {"type": "string"}, "image": {"type": "string"}, "replicas": {"type": "integer", "minimum": 0}}},
        "status": {"type": "object", "properties": {
            "phase": {"type": "string"}, "lastRun": {"type": "integer"}, "replicas": {"type": "integer"}}}}});
    CrdBuilder::new(group, kind).list_kind().schema(schema).status()
}

pub fn old_crd() -> Value {
    crontab_like(OLD_GROUP, "CronTab").short_names(&["ct"]).build()
}

pub fn new_crd() -> CrdBuilder {
    crontab_like(NEW_GROUP, "Schedule").short_names(&["sched"])
}

pub fn controller_crd() -> Value {
    crontab_like("ops.example.com", "Controller").scale().build()
}

pub fn write_json(dir: &Path, name: &str, doc: &Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec_pretty(doc).expect("json")).expect("write");
    path
}

pub fn ar(group: &str, kind: &str) -> ApiResource {
    let plural = format!("{}s", kind.to_ascii_lowercase());
    ApiResource {
        group: group.into(),
        version: "v1".into(),
        api_version: format!("{group}/v1"),
        kind: kind.into(),
        plural,
    }
}

/// The dependents' kind: Runs, a custom kind of another group (the engine serves no
/// ConfigMaps or Jobs; any kind with ownerReferences is a dependent).
pub fn runs() -> ApiResource {
    ar("ops.example.com", "Run")
}

pub fn run_crd() -> Value {
    crontab_like("ops.example.com", "Run").build()
}

pub async fn create_crd(client: &kube::Client, doc: &Value) {
    let api: Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
        Api::all(client.clone());
    let crd = serde_json::from_value(doc.clone()).expect("crd");
    api.create(&PostParams::default(), &crd).await.expect("create crd");
    let name = doc["metadata"]["name"].as_str().expect("name");
    assert_eq!(
        wait_for_established(client, name, Duration::from_secs(30)).await.expect("wait"),
        Establishment::Established
    );
}

/// What was loaded: every CronTab's spec, status, labels and annotations by (namespace,
/// name), and every Run dependent with its uid and owner.
#[derive(Debug, Clone, Default)]
pub struct Fixture {
    pub objects: BTreeMap<(String, String), Value>,
    /// (namespace, name) → (uid, owner name).
    pub dependents: BTreeMap<(String, String), (String, String)>,
    /// CronTabs owned by another CronTab: (namespace, name) → owner name.
    pub links: BTreeMap<(String, String), String>,
}

fn ns_of(i: usize) -> &'static str {
    NAMESPACES[i % NAMESPACES.len()]
}

/// Loads `n` CronTabs over three namespaces, each with a status; every second one has a
/// Run dependent; every tenth (from the fourth) is owned by the CronTab three before
/// it; plus the controller object with its replicas.
pub async fn populate(client: &kube::Client, n: usize) -> Fixture {
    let ns_api: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    for ns in NAMESPACES.iter().chain(["ops"].iter()) {
        ns_api
            .create(&PostParams::default(), &serde_json::from_value(json!({"metadata": {"name": ns}})).expect("ns"))
            .await
            .expect("namespace");
    }
    create_crd(client, &old_crd()).await;
    create_crd(client, &controller_crd()).await;
    create_crd(client, &run_crd()).await;
    let controllers: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), "ops", &ar("ops.example.com", "Controller"));
    let c: DynamicObject = serde_json::from_value(json!({"apiVersion": "ops.example.com/v1", "kind": "Controller",
        "metadata": {"name": "crontab-controller"}, "spec": {"replicas": CONTROLLER_REPLICAS}}))
    .expect("controller");
    controllers.create(&PostParams::default(), &c).await.expect("controller");

    let old = ar(OLD_GROUP, "CronTab");
    let created: Vec<(usize, DynamicObject)> = futures::stream::iter((0..n).map(|i| {
        let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns_of(i), &old);
        async move {
            let obj: DynamicObject = serde_json::from_value(json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
                "metadata": {"name": format!("ct-{i:05}"), "labels": {"app": "crontab", "idx": i.to_string()},
                    "annotations": {"note": format!("n{i}")}, "finalizers": if i % 7 == 0 { json!(["example.com/cleanup"]) } else { json!(null) }},
                "spec": {"cronSpec": format!("*/{} * * * *", i % 60 + 1), "image": format!("img:{i}"), "replicas": i % 5}}))
            .expect("crontab");
            let created = api.create(&PostParams::default(), &obj).await.expect("create crontab");
            let mut with_status = created.clone();
            with_status.data["status"] = json!({"phase": "Active", "lastRun": i, "replicas": i % 5});
            let written = api.replace_status(&format!("ct-{i:05}"), &PostParams::default(), &with_status).await.expect("status");
            (i, written)
        }
    }))
    .buffer_unordered(16)
    .collect()
    .await;
    let mut fixture = Fixture::default();
    let mut uids = BTreeMap::new();
    for (i, obj) in &created {
        let v = serde_json::to_value(obj).expect("json");
        uids.insert(*i, obj.metadata.uid.clone().expect("uid"));
        fixture.objects.insert((ns_of(*i).to_string(), format!("ct-{i:05}")), v);
    }
    // Links between CronTabs.
    for i in (3..n).filter(|i| i % 10 == 3) {
        let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns_of(i), &old);
        let owner = format!("ct-{:05}", i - 3);
        let patch = json!({"metadata": {"ownerReferences": [{"apiVersion": "stable.example.com/v1", "kind": "CronTab", "name": owner, "uid": uids[&(i - 3)]}]}});
        let patched =
            api.patch(&format!("ct-{i:05}"), &PatchParams::default(), &Patch::Merge(&patch)).await.expect("link");
        let key = (ns_of(i).to_string(), format!("ct-{i:05}"));
        fixture.objects.insert(key.clone(), serde_json::to_value(&patched).expect("json"));
        fixture.links.insert(key, owner);
    }
    // Run dependents.
    let cms: Vec<(usize, DynamicObject)> = futures::stream::iter((0..n).filter(|i| i % 2 == 0).map(|i| {
        let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns_of(i), &runs());
        let uid = uids[&i].clone();
        async move {
            let cm: DynamicObject = serde_json::from_value(json!({"apiVersion": "ops.example.com/v1", "kind": "Run",
                "metadata": {"name": format!("run-{i:05}"), "ownerReferences": [{"apiVersion": "stable.example.com/v1", "kind": "CronTab",
                    "name": format!("ct-{i:05}"), "uid": uid, "controller": true, "blockOwnerDeletion": true}]},
                "spec": {"image": format!("run:{i}")}}))
            .expect("run");
            (i, api.create(&PostParams::default(), &cm).await.expect("run"))
        }
    }))
    .buffer_unordered(16)
    .collect()
    .await;
    for (i, cm) in cms {
        fixture.dependents.insert(
            (ns_of(i).to_string(), format!("run-{i:05}")),
            (cm.metadata.uid.expect("uid"), format!("ct-{i:05}")),
        );
    }
    fixture
}

fn keep(v: &Value) -> Value {
    json!({"spec": v["spec"], "status": v["status"], "labels": v["metadata"]["labels"], "annotations": v["metadata"]["annotations"]})
}

/// Asserts that every loaded CronTab is under `(group, kind)` with its spec, status,
/// labels and annotations, that CronTab links and Run dependents point at the
/// objects as they are now (kind and uid), and that the dependents were never deleted.
pub async fn assert_kept(client: &kube::Client, fixture: &Fixture, group: &str, kind: &str) {
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &ar(group, kind));
    let items = api.list(&Default::default()).await.expect("list").items;
    assert_eq!(items.len(), fixture.objects.len(), "object count under {kind}");
    let mut uids = BTreeMap::new();
    for obj in &items {
        let key = (obj.metadata.namespace.clone().expect("ns"), obj.metadata.name.clone().expect("name"));
        let expected = fixture.objects.get(&key).unwrap_or_else(|| panic!("unexpected {key:?}"));
        let v = serde_json::to_value(obj).expect("json");
        assert_eq!(keep(&v), keep(expected), "{key:?}");
        uids.insert(key, obj.metadata.uid.clone().expect("uid"));
    }
    let api_version = format!("{group}/v1");
    for obj in &items {
        let key = (obj.metadata.namespace.clone().expect("ns"), obj.metadata.name.clone().expect("name"));
        let refs = obj.metadata.owner_references.clone().unwrap_or_default();
        match fixture.links.get(&key) {
            Some(owner) => {
                assert_eq!(refs.len(), 1, "{key:?}: {refs:?}");
                assert_eq!(
                    (refs[0].kind.as_str(), refs[0].api_version.as_str(), refs[0].name.as_str()),
                    (kind, api_version.as_str(), owner.as_str())
                );
                assert_eq!(
                    refs[0].uid,
                    uids[&(key.0.clone(), owner.clone())],
                    "{key:?} points at its owner's current uid"
                );
            }
            None => assert!(refs.is_empty(), "{key:?}: {refs:?}"),
        }
    }
    let cm_api: Api<DynamicObject> = Api::all_with(client.clone(), &runs());
    let cms = cm_api.list(&Default::default()).await.expect("runs").items;
    let by_key: BTreeMap<(String, String), &DynamicObject> = cms
        .iter()
        .map(|c| ((c.metadata.namespace.clone().unwrap_or_default(), c.metadata.name.clone().unwrap_or_default()), c))
        .collect();
    for (key, (uid, owner)) in &fixture.dependents {
        let cm = by_key.get(key).unwrap_or_else(|| panic!("dependent {key:?} was deleted"));
        assert_eq!(cm.metadata.uid.as_ref(), Some(uid), "dependent {key:?} keeps its uid (never deleted)");
        let refs = cm.metadata.owner_references.clone().unwrap_or_default();
        assert_eq!(refs.len(), 1, "{key:?}: {refs:?}");
        let r = &refs[0];
        assert_eq!(
            (r.kind.as_str(), r.api_version.as_str(), r.name.as_str()),
            (kind, api_version.as_str(), owner.as_str()),
            "{key:?}"
        );
        assert_eq!(r.uid, uids[&(key.0.clone(), owner.clone())], "{key:?} points at the new uid");
        assert_eq!((r.controller, r.block_owner_deletion), (Some(true), Some(true)), "{key:?}");
    }
}

/// Asserts, on the local engine in `dir`, that the fixture is kept under `(group, kind)`
/// ([`assert_kept`]), that the CRD `gone` is gone, and that the controller is back.
pub async fn assert_local_state(dir: &Path, fixture: &Fixture, group: &str, kind: &str, gone: &str) {
    let conn = open_local(dir).await;
    let client = conn.client().clone();
    assert_kept(&client, fixture, group, kind).await;
    assert!(!crd_exists(&client, gone).await, "{gone} is gone");
    assert_eq!(
        controller_replicas(&client).await,
        CONTROLLER_REPLICAS,
        "the controller is back at its recorded replicas"
    );
    drop(client);
    conn.close().await;
}

/// Whether the CRD `name` exists.
pub async fn crd_exists(client: &kube::Client, name: &str) -> bool {
    let api: Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
        Api::all(client.clone());
    api.get_opt(name).await.expect("get crd").is_some()
}

/// The controller's desired replicas.
pub async fn controller_replicas(client: &kube::Client) -> i64 {
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), "ops", &ar("ops.example.com", "Controller"));
    api.get("crontab-controller").await.expect("controller").data["spec"]["replicas"].as_i64().expect("replicas")
}

/// The local engine on `dir`, in this process.
pub async fn open_local(dir: &Path) -> Connection {
    let options = ConnectOptions {
        target: Target::Local { data_dir: dir.to_path_buf() },
        namespace: None,
        request_timeout: None,
    };
    Connection::open(&options).await.expect("open the local engine")
}

/// Runs `kubectl-crd` with `args` (and extra environment), bounded in time.
pub fn cli(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kubectl-crd"));
    cmd.args(args).env("NO_COLOR", "1").stdin(std::process::Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn kubectl-crd");
    child.wait_with_output().expect("kubectl-crd runs")
}

pub fn text(out: &Output) -> String {
    format!("stdout:\n{}\nstderr:\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// The arguments of `migrate run` for the fixture, with the journal in `journal`.
pub fn run_args(target: &[String], new_crd: &Path, journal: &Path) -> Vec<String> {
    let mut args: Vec<String> = target.to_vec();
    args.extend(
        ["migrate", "run", "--from", OLD_CRD, "--to"]
            .map(String::from)
            .into_iter()
            .chain([new_crd.display().to_string()]),
    );
    args.extend([
        "--journal".to_string(),
        journal.display().to_string(),
        "--controller".into(),
        CONTROLLER.into(),
        "--yes".into(),
    ]);
    args
}

pub fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}
