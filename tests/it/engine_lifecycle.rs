//! Custom-resource life cycle through kube-rs, in process: `/scale`, garbage collection of
//! dependents (background, foreground, orphan), namespace deletion, delete preconditions
//! and dry runs. Each test checks what the store holds afterwards, not just the answer.

use crate::support;
use crate::support::crd::CrdBuilder;

use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, PropagationPolicy};
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use kubectl_crd::engine::{Engine, StorageConfig};
use serde_json::{Value, json};
use std::time::Duration;
use support::reference::load;

type Crd = k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
type Namespace = k8s_openapi::api::core::v1::Namespace;
type Scale = k8s_openapi::api::autoscaling::v1::Scale;

async fn engine() -> (std::sync::Arc<Engine>, kube::Client) {
    let engine = Engine::open(&StorageConfig::Memory).await.expect("engine");
    let client = kubectl_crd::cluster::connect::in_process_client(&engine, "default");
    (engine, client)
}

async fn eventually<T>(what: &str, mut probe: impl AsyncFnMut() -> Option<T>) -> T {
    for _ in 0..300 {
        if let Some(v) = probe().await {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{what} never happened");
}

/// Registers a CRD and waits until its kind is served.
async fn register(client: &kube::Client, crd: Value) {
    let crds: Api<Crd> = Api::all(client.clone());
    let name = crd["metadata"]["name"].as_str().expect("name").to_string();
    crds.create(&PostParams::default(), &serde_json::from_value(crd).expect("crd")).await.expect("create crd");
    eventually("the CRD to be established", async || {
        let crd = crds.get(&name).await.ok()?;
        let established = crd.status?.conditions?.iter().any(|c| c.type_ == "Established" && c.status == "True");
        established.then_some(())
    })
    .await;
}

/// The Widget CRD of reference 06 (status and scale subresources).
async fn widgets(client: &kube::Client, ns: &str) -> Api<DynamicObject> {
    let body = load("06").request.body.expect("body");
    register(client, serde_json::from_slice(&body).expect("json")).await;
    Api::namespaced_with(client.clone(), ns, &widget_resource())
}

fn widget_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("stable.example.com", "v1", "Widget"), "widgets")
}

/// A second kind, used as dependents of widgets.
async fn parts(client: &kube::Client, ns: &str) -> Api<DynamicObject> {
    register(client, CrdBuilder::new("stable.example.com", "Part").build()).await;
    let ar = ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("stable.example.com", "v1", "Part"), "parts");
    Api::namespaced_with(client.clone(), ns, &ar)
}

fn widget(name: &str, replicas: i64) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "stable.example.com/v1", "kind": "Widget",
        "metadata": {"name": name}, "spec": {"color": "red", "replicas": replicas}
    }))
    .expect("widget")
}

fn part_owned_by(name: &str, owners: &[&DynamicObject]) -> DynamicObject {
    let refs: Vec<Value> = owners
        .iter()
        .map(|o| {
            json!({"apiVersion": "stable.example.com/v1", "kind": "Widget",
                   "name": o.metadata.name.clone().expect("name"), "uid": o.metadata.uid.clone().expect("uid")})
        })
        .collect();
    serde_json::from_value(json!({
        "apiVersion": "stable.example.com/v1", "kind": "Part",
        "metadata": {"name": name, "ownerReferences": refs}, "spec": {"n": 1}
    }))
    .expect("part")
}

fn api_error(e: kube::Error) -> kube::core::Status {
    match e {
        kube::Error::Api(status) => *status,
        other => panic!("expected an API error, got {other}"),
    }
}

#[tokio::test]
async fn scale_reads_and_writes_only_spec_replicas_sharing_the_resource_version() {
    let (_engine, client) = engine().await;
    let api = widgets(&client, "default").await;
    api.create(&PostParams::default(), &widget("w1", 0)).await.expect("create");
    api.patch_status(
        "w1",
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"replicas": 2, "selector": "app=demo"}})),
    )
    .await
    .expect("status");

    let scale: Scale = api.get_scale("w1").await.expect("get scale");
    assert_eq!(scale.spec.as_ref().and_then(|s| s.replicas), None, "0 replicas is omitted, as Go's omitempty does");
    let status = scale.status.clone().expect("status");
    assert_eq!((status.replicas, status.selector.as_deref()), (2, Some("app=demo")));

    // Scaling from 0 with the Scale's resourceVersion as precondition.
    let mut up = scale.clone();
    up.spec = Some(k8s_openapi::api::autoscaling::v1::ScaleSpec { replicas: Some(3) });
    up.status = Some(k8s_openapi::api::autoscaling::v1::ScaleStatus { replicas: 99, selector: Some("x=y".into()) });
    let scaled = api.replace_scale("w1", &PostParams::default(), &up).await;
    let scaled: Scale = scaled.expect("replace scale");
    assert_eq!(scaled.spec.and_then(|s| s.replicas), Some(3));
    let stored = api.get("w1").await.expect("get");
    assert_eq!(stored.data["spec"]["replicas"], 3);
    assert_eq!(stored.data["status"]["replicas"], 2, "status is never written through /scale");
    assert_eq!(stored.metadata.generation, Some(2), "a spec change bumps generation");
    assert_eq!(stored.metadata.resource_version, scaled.metadata.resource_version);

    // The old resourceVersion is now stale: 409, nothing changes.
    let stale = api.replace_scale("w1", &PostParams::default(), &up).await;
    let err = api_error(stale.expect_err("stale scale"));
    assert_eq!((err.code, err.reason.as_str()), (409, "Conflict"));
    assert_eq!(
        err.message,
        "Operation cannot be fulfilled on widgets.stable.example.com \"w1\": the object has been modified; please apply your changes to the latest version and try again"
    );

    // Merge patch, as `kubectl scale` sends it.
    let patched: Scale = api
        .patch_scale("w1", &PatchParams::default(), &Patch::Merge(json!({"spec": {"replicas": 5}})))
        .await
        .expect("patch scale");
    assert_eq!(patched.spec.and_then(|s| s.replicas), Some(5));
    assert_eq!(api.get("w1").await.expect("get").data["spec"]["replicas"], 5);
}

#[tokio::test]
async fn invalid_replicas_are_refused_on_scale_and_on_ordinary_writes() {
    let (_engine, client) = engine().await;
    let api = widgets(&client, "default").await;
    api.create(&PostParams::default(), &widget("w1", 1)).await.expect("create");

    let negative = api
        .patch_scale("w1", &PatchParams::default(), &Patch::Merge(json!({"spec": {"replicas": -1}})))
        .await
        .expect_err("negative replicas");
    let err = api_error(negative);
    assert_eq!((err.code, err.reason.as_str()), (422, "Invalid"));
    // kube refuses it as the custom resource it is written to, not as a Scale.
    assert!(
        err.message.starts_with("Widget.stable.example.com \"w1\" is invalid: ")
            && err.message.contains(".spec.replicas: Invalid value: -1: should be a non-negative integer"),
        "{}",
        err.message
    );

    // A status replicas value /scale could not read is refused on /status too.
    let bad_status = api
        .patch_status("w1", &PatchParams::default(), &Patch::Merge(json!({"status": {"selector": "a in (b"}})))
        .await
        .expect_err("bad selector");
    let err = api_error(bad_status);
    assert_eq!(err.code, 422);
    assert!(err.message.contains(".status.selector: Invalid value: \"a in (b\""), "{}", err.message);

    let stored = api.get("w1").await.expect("get");
    assert_eq!(stored.data["spec"]["replicas"], 1);
    assert!(stored.data.get("status").is_none());
}

#[tokio::test]
async fn scale_is_not_served_without_the_subresource() {
    let (_engine, client) = engine().await;
    let api = parts(&client, "default").await;
    let part = json!({"apiVersion": "stable.example.com/v1", "kind": "Part", "metadata": {"name": "p"}});
    api.create(&PostParams::default(), &serde_json::from_value(part).expect("p")).await.expect("create");
    let err = api.get_scale("p").await.expect_err("no scale");
    assert!(matches!(err, kube::Error::Api(ref s) if s.code == 404), "{err}");
}

#[tokio::test]
async fn background_deletion_collects_dependents_whose_owners_are_all_gone() {
    let (_engine, client) = engine().await;
    let widgets = widgets(&client, "default").await;
    let parts = parts(&client, "default").await;
    let a = widgets.create(&PostParams::default(), &widget("a", 1)).await.expect("a");
    let b = widgets.create(&PostParams::default(), &widget("b", 1)).await.expect("b");
    parts.create(&PostParams::default(), &part_owned_by("only-a", &[&a])).await.expect("only-a");
    parts.create(&PostParams::default(), &part_owned_by("a-and-b", &[&a, &b])).await.expect("a-and-b");

    widgets.delete("a", &DeleteParams::background()).await.expect("delete a");
    eventually("only-a to be collected", async || parts.get_opt("only-a").await.ok()?.is_none().then_some(())).await;
    let shared = eventually("a-and-b to lose its reference to a", async || {
        let p = parts.get("a-and-b").await.ok()?;
        (p.metadata.owner_references.as_ref()?.len() == 1).then_some(p)
    })
    .await;
    assert_eq!(shared.metadata.owner_references.expect("refs")[0].name, "b");
}

#[tokio::test]
async fn foreground_deletion_removes_dependents_before_the_owner() {
    let (_engine, client) = engine().await;
    let widgets = widgets(&client, "default").await;
    let parts = parts(&client, "default").await;
    let owner = widgets.create(&PostParams::default(), &widget("owner", 1)).await.expect("owner");
    let mut held = part_owned_by("held", &[&owner]);
    held.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    parts.create(&PostParams::default(), &held).await.expect("held");

    let answer = widgets.delete("owner", &DeleteParams::foreground()).await.expect("delete");
    let marked = answer.left().expect("the owner stays while dependents exist");
    assert!(marked.metadata.deletion_timestamp.is_some());
    assert_eq!(marked.metadata.finalizers, Some(vec!["foregroundDeletion".to_string()]));

    // The dependent is being deleted but held by its finalizer; the owner waits.
    eventually("the dependent to be marked", async || {
        parts.get("held").await.ok()?.metadata.deletion_timestamp.map(|_| ())
    })
    .await;
    assert!(widgets.get_opt("owner").await.expect("get").is_some());

    parts.patch("held", &PatchParams::default(), &Patch::Merge(json!({"metadata": {"finalizers": null}}))).await.ok();
    eventually("the owner to go", async || widgets.get_opt("owner").await.ok()?.is_none().then_some(())).await;
    assert!(parts.get_opt("held").await.expect("get").is_none());
}

#[tokio::test]
async fn orphan_deletion_keeps_dependents_and_drops_the_reference() {
    let (_engine, client) = engine().await;
    let widgets = widgets(&client, "default").await;
    let parts = parts(&client, "default").await;
    let owner = widgets.create(&PostParams::default(), &widget("owner", 1)).await.expect("owner");
    parts.create(&PostParams::default(), &part_owned_by("kept", &[&owner])).await.expect("kept");

    let dp = DeleteParams { propagation_policy: Some(PropagationPolicy::Orphan), ..Default::default() };
    widgets.delete("owner", &dp).await.expect("delete");
    eventually("the owner to go", async || widgets.get_opt("owner").await.ok()?.is_none().then_some(())).await;
    let kept = parts.get("kept").await.expect("the dependent survives");
    assert!(kept.metadata.owner_references.is_none_or(|r| r.is_empty()));
    assert!(kept.metadata.deletion_timestamp.is_none());
}

#[tokio::test]
async fn deleting_a_namespace_deletes_its_content_and_refuses_new_content() {
    let (_engine, client) = engine().await;
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .create(&PostParams::default(), &serde_json::from_value(json!({"metadata": {"name": "team"}})).expect("ns"))
        .await
        .expect("namespace");
    let api = widgets(&client, "team").await;
    let mut held = widget("held", 1);
    held.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    api.create(&PostParams::default(), &held).await.expect("held");
    api.create(&PostParams::default(), &widget("plain", 1)).await.expect("plain");
    let elsewhere = Api::<DynamicObject>::namespaced_with(client.clone(), "default", &widget_resource());
    elsewhere.create(&PostParams::default(), &widget("other", 1)).await.expect("other namespace");

    let answer = namespaces.delete("team", &DeleteParams::default()).await.expect("delete ns");
    let terminating = answer.left().expect("a namespace waits for its content");
    assert_eq!(terminating.status.and_then(|s| s.phase).as_deref(), Some("Terminating"));

    eventually("plain to be deleted", async || api.get_opt("plain").await.ok()?.is_none().then_some(())).await;
    let refused = api.create(&PostParams::default(), &widget("late", 1)).await.expect_err("terminating");
    let err = api_error(refused);
    assert_eq!((err.code, err.reason.as_str()), (403, "Forbidden"));
    assert_eq!(
        err.message,
        "widgets.stable.example.com \"late\" is forbidden: unable to create new content in namespace team because it is being terminated"
    );
    assert!(namespaces.get_opt("team").await.expect("get").is_some(), "held content keeps the namespace");

    api.patch("held", &PatchParams::default(), &Patch::Merge(json!({"metadata": {"finalizers": null}})))
        .await
        .expect("release");
    eventually("the namespace to go", async || namespaces.get_opt("team").await.ok()?.is_none().then_some(())).await;
    assert!(elsewhere.get_opt("other").await.expect("get").is_some(), "other namespaces are untouched");
}

#[tokio::test]
async fn delete_preconditions_and_dry_runs_change_nothing() {
    let (_engine, client) = engine().await;
    let api = widgets(&client, "default").await;
    let w = api.create(&PostParams::default(), &widget("w1", 1)).await.expect("create");

    let wrong_uid = DeleteParams {
        preconditions: Some(kube::api::Preconditions { uid: Some("nope".into()), resource_version: None }),
        ..Default::default()
    };
    let err = api_error(api.delete("w1", &wrong_uid).await.expect_err("uid precondition"));
    assert_eq!(err.code, 409);
    assert_eq!(
        err.message,
        format!(
            // kube's BeforeDelete words, naming the kind (the differential scenario deletes).
            "Operation cannot be fulfilled on Widget.stable.example.com \"w1\": the UID in the precondition (nope) does not match the UID in record ({}). The object might have been deleted and then recreated",
            w.metadata.uid.clone().expect("uid")
        )
    );

    api.delete("w1", &DeleteParams { dry_run: true, ..Default::default() }).await.expect("dry-run delete");
    let dry = PostParams { dry_run: true, ..Default::default() };
    api.create(&dry, &widget("w2", 1)).await.expect("dry-run create");
    api.patch("w1", &PatchParams { dry_run: true, ..Default::default() }, &Patch::Merge(json!({"spec": {"size": 3}})))
        .await
        .expect("dry-run patch");

    let stored = api.get("w1").await.expect("still there");
    assert_eq!(stored.metadata.resource_version, w.metadata.resource_version);
    assert!(api.get_opt("w2").await.expect("get").is_none());
}

#[tokio::test]
async fn status_round_trips_through_get_status_and_replace_status() {
    let (_engine, client) = engine().await;
    let api = widgets(&client, "default").await;
    api.create(&PostParams::default(), &widget("w1", 1)).await.expect("create");
    let mut current = api.get_status("w1").await.expect("get status");
    current.data["status"] = json!({"phase": "Ready", "replicas": 1});
    current.data["spec"]["color"] = json!("blue");
    let written = api.replace_status("w1", &PostParams::default(), &current).await.expect("replace status");
    assert_eq!(written.data["status"]["phase"], "Ready");
    assert_eq!(written.data["spec"]["color"], "red", "spec changes through /status are ignored");
    assert_eq!(written.metadata.generation, Some(1));
    // The same stale object again: the shared resourceVersion makes it a conflict.
    let stale = api.replace_status("w1", &PostParams::default(), &current).await;
    assert_eq!(api_error(stale.expect_err("stale")).code, 409);
}

#[tokio::test]
async fn a_runtime_watcher_sees_every_change_in_order() {
    use futures::StreamExt;
    use kube::runtime::watcher::{self, Event};
    let (_engine, client) = engine().await;
    let api = widgets(&client, "default").await;
    api.create(&PostParams::default(), &widget("before", 1)).await.expect("create");
    let mut stream = watcher::watcher(api.clone(), watcher::Config::default()).boxed();
    let mut initial = Vec::new();
    loop {
        match stream.next().await.expect("event").expect("no error") {
            Event::Init => {}
            Event::InitApply(o) => initial.push(o.metadata.name.expect("name")),
            Event::InitDone => break,
            other => panic!("unexpected before InitDone: {other:?}"),
        }
    }
    assert_eq!(initial, ["before"]);
    api.create(&PostParams::default(), &widget("after", 2)).await.expect("create");
    api.patch("after", &PatchParams::default(), &Patch::Merge(json!({"spec": {"size": 4}}))).await.expect("patch");
    api.delete("after", &DeleteParams::default()).await.expect("delete");
    let mut seen = Vec::new();
    while seen.len() < 3 {
        let event = tokio::time::timeout(Duration::from_secs(5), stream.next()).await.expect("in time");
        match event.expect("event").expect("no error") {
            Event::Apply(o) => {
                seen.push(format!("apply {} size={}", o.metadata.name.expect("name"), o.data["spec"]["size"]))
            }
            Event::Delete(o) => seen.push(format!("delete {}", o.metadata.name.expect("name"))),
            _ => {}
        }
    }
    assert_eq!(seen, ["apply after size=null", "apply after size=4", "delete after"]);
}

#[tokio::test]
async fn field_selectors_take_the_crd_s_selectable_fields() {
    let (_engine, client) = engine().await;
    let mut crd: Value = serde_json::from_slice(&load("06").request.body.expect("body")).expect("json");
    crd["spec"]["versions"][0]["selectableFields"] = json!([{"jsonPath": ".spec.color"}]);
    register(&client, crd).await;
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &widget_resource());
    api.create(&PostParams::default(), &widget("red-one", 1)).await.expect("red");
    let mut blue = widget("blue-one", 1);
    blue.data["spec"]["color"] = json!("blue");
    api.create(&PostParams::default(), &blue).await.expect("blue");

    let names = |list: kube::core::ObjectList<DynamicObject>| {
        list.items.into_iter().map(|o| o.metadata.name.expect("name")).collect::<Vec<_>>()
    };
    let reds = api.list(&kube::api::ListParams::default().fields("spec.color=red")).await.expect("list");
    assert_eq!(names(reds), ["red-one"]);
    let not_red = api.list(&kube::api::ListParams::default().fields("spec.color!=red")).await.expect("list");
    assert_eq!(names(not_red), ["blue-one"]);
    let err = api.list(&kube::api::ListParams::default().fields("spec.size=1")).await.expect_err("not selectable");
    let err = api_error(err);
    assert_eq!((err.code, err.message.as_str()), (400, "field label not supported: spec.size"));
}

#[tokio::test]
async fn a_restart_in_the_middle_of_a_crd_clean_up_finishes_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let storage = StorageConfig::Redb(dir.path().join("store.redb"));
    let crds_name = "widgets.stable.example.com";
    {
        let engine = Engine::open(&storage).await.expect("engine");
        let client = kubectl_crd::cluster::connect::in_process_client(&engine, "default");
        let api = widgets(&client, "default").await;
        let mut held = widget("held", 1);
        held.metadata.finalizers = Some(vec!["example.com/hold".into()]);
        api.create(&PostParams::default(), &held).await.expect("held");
        let crds: Api<Crd> = Api::all(client.clone());
        crds.delete(crds_name, &DeleteParams::default()).await.expect("delete crd");
        eventually("the clean-up to start", async || {
            api.get("held").await.ok()?.metadata.deletion_timestamp.map(|_| ())
        })
        .await;
        drop(api);
        drop(crds);
        drop(client);
        engine.shutdown().await;
    }
    let engine = Engine::open(&storage).await.expect("reopen");
    let client = kubectl_crd::cluster::connect::in_process_client(&engine, "default");
    let crds: Api<Crd> = Api::all(client.clone());
    let crd = crds.get(crds_name).await.expect("still terminating");
    assert!(crd.metadata.deletion_timestamp.is_some());
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &widget_resource());
    api.patch("held", &PatchParams::default(), &Patch::Merge(json!({"metadata": {"finalizers": null}})))
        .await
        .expect("release the last object");
    eventually("the CRD to go after the restart", async || crds.get_opt(crds_name).await.ok()?.is_none().then_some(()))
        .await;
}

fn labelled_widget(name: &str) -> DynamicObject {
    let mut w = widget(name, 1);
    w.metadata.labels = Some([("set".to_string(), "list".to_string())].into());
    w
}

/// The names of each page of a list, following continue tokens, and each page's token.
async fn pages(api: &Api<DynamicObject>, params: ListParams) -> Vec<(Vec<String>, Option<String>)> {
    let mut out = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let lp = match token.take() {
            Some(t) => params.clone().continue_token(&t),
            None => params.clone(),
        };
        let page = api.list(&lp).await.expect("list");
        assert_eq!(page.metadata.remaining_item_count, None, "never with a selector");
        let names = page.items.iter().map(|o| o.metadata.name.clone().unwrap_or_default()).collect();
        let next = page.metadata.continue_.filter(|c| !c.is_empty());
        out.push((names, next.as_ref().map(|t| decoded_start(t))));
        match next {
            Some(t) => token = Some(t),
            None => return out,
        }
    }
}

/// Where a continue token resumes (its `start`).
fn decoded_start(token: &str) -> String {
    use base64::Engine as _;
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(token).expect("kube's unpadded base64");
    let doc: Value = serde_json::from_slice(&raw).expect("json");
    doc["start"].as_str().expect("start").to_string()
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[tokio::test]
async fn a_selected_page_resumes_right_after_the_last_object_it_returned() {
    let (_engine, client) = engine().await;
    let api = widgets(&client, "default").await;
    api.create(&PostParams::default(), &widget("crud-1", 1)).await.expect("create");
    for i in 0..7 {
        api.create(&PostParams::default(), &labelled_widget(&format!("list-{i}"))).await.expect("create");
    }
    // The oracle's pages: each token starts after the last item returned ("list-2\0").
    let by_label = pages(&api, ListParams::default().labels("set=list").limit(3)).await;
    assert_eq!(
        by_label,
        [
            (names(&["list-0", "list-1", "list-2"]), Some("list-2\0".into())),
            (names(&["list-3", "list-4", "list-5"]), Some("list-5\0".into())),
            (names(&["list-6"]), None),
        ]
    );
    let by_field = pages(&api, ListParams::default().fields("metadata.name!=list-1").limit(3)).await;
    assert_eq!(
        by_field,
        [
            (names(&["crud-1", "list-0", "list-2"]), Some("list-2\0".into())),
            (names(&["list-3", "list-4", "list-5"]), Some("list-5\0".into())),
            (names(&["list-6"]), None),
        ]
    );
    // A selector that matches nothing more after a full page still hands out a token.
    let last_out = pages(&api, ListParams::default().fields("metadata.name!=list-6").limit(7)).await;
    assert_eq!(last_out[0].1.as_deref(), Some("list-5\0"));
    assert_eq!(last_out[1], (Vec::new(), None));
    // One name in one namespace is read as one key: nothing to continue.
    let single = pages(&api, ListParams::default().fields("metadata.name=crud-1").limit(1)).await;
    assert_eq!(single, [(names(&["crud-1"]), None)]);
    // Across namespaces, a selected namespace is where the list reads, tokens included.
    let all: Api<DynamicObject> = Api::all_with(client.clone(), &widget_resource());
    let in_default = pages(&all, ListParams::default().fields("metadata.namespace=default").limit(3)).await;
    assert_eq!(in_default[0], (names(&["crud-1", "list-0", "list-1"]), Some("list-1\0".into())));
    let across = pages(&all, ListParams::default().labels("set=list").limit(3)).await;
    assert_eq!(across[0], (names(&["list-0", "list-1", "list-2"]), Some("default/list-2\0".into())));
    assert_eq!(across.iter().map(|(n, _)| n.len()).sum::<usize>(), 7);
    // Without a selector the count of what remains is given.
    let first = api.list(&ListParams::default().limit(3)).await.expect("list");
    assert_eq!(first.metadata.remaining_item_count, Some(5));
    assert_eq!(decoded_start(first.metadata.continue_.as_deref().expect("token")), "list-1\0");
}

#[tokio::test]
async fn a_put_names_the_resource_version_and_uid_it_replaces() {
    let (_engine, client) = engine().await;
    let api = widgets(&client, "default").await;
    let created = api.create(&PostParams::default(), &widget("w1", 1)).await.expect("create");
    let mut change = widget("w1", 2);
    let err = api_error(api.replace("w1", &PostParams::default(), &change).await.expect_err("no resourceVersion"));
    assert_eq!((err.code, err.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        err.message,
        "widgets.stable.example.com \"w1\" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update"
    );
    let details = err.details.expect("details");
    assert_eq!(
        (details.name.as_str(), details.group.as_str(), details.kind.as_str()),
        ("w1", "stable.example.com", "widgets")
    );
    let cause = &details.causes[0];
    assert_eq!(
        (cause.reason.as_str(), cause.message.as_str(), cause.field.as_str()),
        ("FieldValueInvalid", "Invalid value: 0x0: must be specified for an update", "metadata.resourceVersion")
    );
    // The same through /status, and through a patch that drops the resourceVersion.
    let err = api_error(api.replace_status("w1", &PostParams::default(), &change).await.expect_err("status"));
    assert_eq!(err.code, 422);
    let drop_rv = Patch::Merge(json!({"metadata": {"resourceVersion": null}, "spec": {"replicas": 3}}));
    let err = api_error(api.patch("w1", &PatchParams::default(), &drop_rv).await.expect_err("patch"));
    assert!(
        err.message.ends_with("metadata.resourceVersion: Invalid value: 0x0: must be specified for an update"),
        "{}",
        err.message
    );

    // Another object's uid: 409 from the storage precondition, before the resourceVersion.
    let uid = created.metadata.uid.clone().expect("uid");
    change.metadata.uid = Some("6a1c6a5e-0000-4000-8000-000000000000".into());
    let err = api_error(api.replace("w1", &PostParams::default(), &change).await.expect_err("uid"));
    assert_eq!((err.code, err.reason.as_str()), (409, "Conflict"));
    assert_eq!(
        err.message,
        format!(
            "Operation cannot be fulfilled on widgets.stable.example.com \"w1\": StorageError: invalid object, Code: 4, Key: /registry/stable.example.com/widgets/default/w1, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: 6a1c6a5e-0000-4000-8000-000000000000, UID in object meta: {uid}"
        )
    );
    change.metadata.resource_version = created.metadata.resource_version.clone();
    let err = api_error(api.replace("w1", &PostParams::default(), &change).await.expect_err("uid"));
    assert_eq!(err.code, 409);
    let stored = api.get("w1").await.expect("get");
    assert_eq!(
        (stored.data["spec"]["replicas"].clone(), stored.metadata.resource_version),
        (json!(1), created.metadata.resource_version.clone())
    );

    // The right uid and resourceVersion write; built-in kinds need neither.
    change.metadata.uid = Some(uid);
    let written = api.replace("w1", &PostParams::default(), &change).await.expect("replace");
    assert_eq!(written.data["spec"]["replicas"], 2);
    let maps: Api<k8s_openapi::api::core::v1::ConfigMap> = Api::namespaced(client.clone(), "default");
    let mut cm: k8s_openapi::api::core::v1::ConfigMap =
        serde_json::from_value(json!({"metadata": {"name": "cm"}, "data": {"a": "b"}})).expect("cm");
    maps.create(&PostParams::default(), &cm).await.expect("create cm");
    cm.data = Some([("a".to_string(), "c".to_string())].into());
    maps.replace("cm", &PostParams::default(), &cm).await.expect("an unconditional update of a ConfigMap");
    cm.metadata.uid = Some("x".into());
    let err = api_error(maps.replace("cm", &PostParams::default(), &cm).await.expect_err("uid"));
    assert!(err.message.contains("Key: /registry/configmaps/default/cm, ResourceVersion: 0"), "{}", err.message);
}

#[tokio::test]
async fn without_a_status_subresource_a_status_change_is_a_new_generation() {
    let (_engine, client) = engine().await;
    let api = parts(&client, "default").await;
    let created: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "stable.example.com/v1", "kind": "Part", "metadata": {"name": "p"}, "spec": {"n": 1}
    }))
    .expect("part");
    let mut current = api.create(&PostParams::default(), &created).await.expect("create");
    assert_eq!(current.metadata.generation, Some(1));
    current.data["status"] = json!({"a": 1});
    let put = api.replace("p", &PostParams::default(), &current).await.expect("put");
    assert_eq!(put.metadata.generation, Some(2), "PUT");
    let merge =
        api.patch("p", &PatchParams::default(), &Patch::Merge(json!({"status": {"a": 2}}))).await.expect("merge");
    assert_eq!(merge.metadata.generation, Some(3), "merge patch");
    let ops: json_patch::Patch =
        serde_json::from_value(json!([{"op": "replace", "path": "/status/a", "value": 3}])).expect("json patch");
    let json_patched = api.patch("p", &PatchParams::default(), &Patch::Json::<()>(ops)).await.expect("json patch");
    assert_eq!(json_patched.metadata.generation, Some(4), "JSON patch");
    let apply =
        json!({"apiVersion": "stable.example.com/v1", "kind": "Part", "metadata": {"name": "p"}, "status": {"b": 1}});
    let applied = api.patch("p", &PatchParams::apply("m"), &Patch::Apply(apply)).await.expect("apply");
    assert_eq!(applied.metadata.generation, Some(5), "apply");
    assert_eq!(applied.data["status"], json!({"a": 3, "b": 1}));
    let labelled = api
        .patch("p", &PatchParams::default(), &Patch::Merge(json!({"metadata": {"labels": {"x": "y"}}})))
        .await
        .expect("labels");
    assert_eq!(labelled.metadata.generation, Some(5), "metadata is no new generation");
}

/// kube-runtime's `finalizer` helper through its whole life: it adds the first finalizer
/// with `test /metadata/finalizers null` + `add` (a JSON patch kube applies, as it does
/// every RFC 6902 extension of evanphx/json-patch), reconciles, and on deletion removes it
/// with `test` + `remove` at its index, after which the object goes.
#[tokio::test]
async fn kube_runtime_finalizers_are_added_and_removed_by_json_patch() {
    use kube::runtime::controller::Action;
    use kube::runtime::finalizer::{Event as Finalizer, finalizer};
    use std::sync::Arc;
    const NAME: &str = "example.com/cleanup";

    let (_engine, client) = engine().await;
    let api = widgets(&client, "default").await;
    api.create(&PostParams::default(), &widget("w1", 1)).await.expect("create");
    let step = async |seen: &mut Vec<&'static str>| {
        let obj = Arc::new(api.get("w1").await.expect("get"));
        let mut event = "";
        finalizer(&api, NAME, obj, |e| {
            event = match e {
                Finalizer::Apply(_) => "apply",
                Finalizer::Cleanup(_) => "cleanup",
            };
            std::future::ready(Ok::<_, std::io::Error>(Action::await_change()))
        })
        .await
        .expect("finalizer step");
        seen.push(event);
    };
    let mut seen = Vec::new();
    step(&mut seen).await;
    assert_eq!(api.get("w1").await.expect("get").metadata.finalizers, Some(vec![NAME.to_string()]));
    step(&mut seen).await;
    api.delete("w1", &DeleteParams::default()).await.expect("delete");
    step(&mut seen).await;
    assert_eq!(seen, ["", "apply", "cleanup"]);
    assert!(api.get_opt("w1").await.expect("get").is_none(), "gone once its finalizer is");

    // The same first-finalizer patch on an object that has finalizers fails as kube's does.
    let mut held = widget("w2", 1);
    held.metadata.finalizers = Some(vec!["other".into()]);
    api.create(&PostParams::default(), &held).await.expect("create");
    let first: json_patch::Patch = serde_json::from_value(json!([
        {"op": "test", "path": "/metadata/finalizers", "value": null},
        {"op": "add", "path": "/metadata/finalizers", "value": [NAME]},
    ]))
    .expect("patch");
    let err =
        api_error(api.patch("w2", &PatchParams::default(), &Patch::Json::<()>(first)).await.expect_err("test fails"));
    assert_eq!(
        (err.code, err.reason.as_str(), err.message.as_str()),
        (422, "Invalid", "the server rejected our request due to an error in our request")
    );
}
