//! Custom-resource life cycle through kube-rs, in process: `/scale`, garbage collection of
//! dependents (background, foreground, orphan), namespace deletion, delete preconditions
//! and dry runs. Each test checks what the store holds afterwards, not just the answer.

mod writes;

use crate::support;
use crate::support::crd::CrdBuilder;

use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, PropagationPolicy};
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use kubectl_crd_engine::{Engine, StorageConfig};
use serde_json::{Value, json};
use std::time::Duration;
use support::reference::load;

type Crd = k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
type Namespace = k8s_openapi::api::core::v1::Namespace;
type Scale = k8s_openapi::api::autoscaling::v1::Scale;

async fn engine() -> (std::sync::Arc<Engine>, kube::Client) {
    let engine = Engine::open(&crate::support::storage::test_storage()).await.expect("engine");
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
        .patch_status("w1", &PatchParams::default(), &Patch::Merge(json!({"status": {"replicas": -2}})))
        .await
        .expect_err("negative status replicas");
    let err = api_error(bad_status);
    assert_eq!(err.code, 422);
    assert!(err.message.contains(".status.replicas: Invalid value: -2"), "{}", err.message);
    // The selector is only read as a string, never parsed (the oracle takes this one).
    api.patch_status("w1", &PatchParams::default(), &Patch::Merge(json!({"status": {"selector": "a in (b"}})))
        .await
        .expect("a selector that does not parse");

    let stored = api.get("w1").await.expect("get");
    assert_eq!(stored.data["spec"]["replicas"], 1);
    assert_eq!(stored.data["status"], json!({"selector": "a in (b"}));
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

/// kube's collector looks an owner up by its reference's kind and name, in the dependent's
/// namespace, and compares the uid: a reference to another namespace's widget, or to a
/// uid under another name, dangles (the dependent is collected, or loses that reference
/// when another owner is there), even though an object with that uid exists.
#[tokio::test]
async fn an_owner_is_found_by_kind_and_name_in_the_dependent_s_namespace() {
    let (_engine, client) = engine().await;
    let widgets = widgets(&client, "default").await;
    let owner = widgets.create(&PostParams::default(), &widget("owner", 1)).await.expect("owner");
    let other = widgets.create(&PostParams::default(), &widget("other", 1)).await.expect("other");
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    let team = serde_json::from_value(json!({"metadata": {"name": "team"}})).expect("namespace");
    namespaces.create(&PostParams::default(), &team).await.expect("team");
    let home = parts(&client, "default").await;
    let away: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        "team",
        &ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("stable.example.com", "v1", "Part"), "parts"),
    );
    home.create(&PostParams::default(), &part_owned_by("kept", &[&owner])).await.expect("kept");
    away.create(&PostParams::default(), &part_owned_by("elsewhere", &[&owner])).await.expect("elsewhere");
    let mut misnamed = part_owned_by("misnamed", &[&owner]);
    misnamed.metadata.owner_references.as_mut().expect("refs")[0].name = "someone-else".into();
    home.create(&PostParams::default(), &misnamed).await.expect("misnamed");
    let mut half = part_owned_by("half", &[&other, &owner]);
    half.metadata.owner_references.as_mut().expect("refs")[1].name = "someone-else".into();
    home.create(&PostParams::default(), &half).await.expect("half");

    eventually("the part in another namespace to be collected", async || {
        away.get_opt("elsewhere").await.ok()?.is_none().then_some(())
    })
    .await;
    eventually("the misnamed reference's part to be collected", async || {
        home.get_opt("misnamed").await.ok()?.is_none().then_some(())
    })
    .await;
    let half = eventually("the misnamed reference to be dropped", async || {
        let p = home.get("half").await.ok()?;
        (p.metadata.owner_references.as_ref()?.len() == 1).then_some(p)
    })
    .await;
    assert_eq!(half.metadata.owner_references.expect("refs")[0].name, "other");
    let kept = home.get("kept").await.expect("a part whose owner is where it says stays");
    assert_eq!(kept.metadata.owner_references.expect("refs").len(), 1);

    // kube's graph builder warns of the owner in another namespace, on the dependent; a
    // misnamed reference in the owner's namespace gets no such Event.
    let events = |ns: &str| Api::<k8s_openapi::api::core::v1::Event>::namespaced(client.clone(), ns);
    let warned = events("team").list(&Default::default()).await.expect("events").items;
    assert_eq!(warned.len(), 1, "{warned:?}");
    let event = &warned[0];
    assert_eq!((event.type_.as_deref(), event.reason.as_deref()), (Some("Warning"), Some("OwnerRefInvalidNamespace")));
    let uid = owner.metadata.uid.as_deref().expect("uid");
    assert_eq!(
        event.message.as_deref(),
        Some(format!("ownerRef [stable.example.com/v1/Widget, namespace: team, name: owner, uid: {uid}] does not exist in namespace \"team\"").as_str())
    );
    assert_eq!(event.involved_object.name.as_deref(), Some("elsewhere"));
    assert_eq!(event.involved_object.kind.as_deref(), Some("Part"));
    assert_eq!(event.source.as_ref().and_then(|s| s.component.as_deref()), Some("garbage-collector-controller"));
    let home_events = events("default").list(&Default::default()).await.expect("events").items;
    assert!(home_events.iter().all(|e| e.reason.as_deref() != Some("OwnerRefInvalidNamespace")), "{home_events:?}");
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
    // kube's namespace deleter says what holds it, in the namespace's conditions.
    let conditions = eventually("the namespace's deletion conditions", async || {
        let ns = namespaces.get("team").await.ok()?;
        let conditions = ns.status?.conditions?;
        conditions.iter().any(|c| c.type_ == "NamespaceContentRemaining" && c.status == "True").then_some(conditions)
    })
    .await;
    let said: Vec<(&str, &str, Option<&str>, Option<&str>)> = conditions
        .iter()
        .map(|c| (c.type_.as_str(), c.status.as_str(), c.reason.as_deref(), c.message.as_deref()))
        .collect();
    assert_eq!(
        said,
        [
            (
                "NamespaceDeletionDiscoveryFailure",
                "False",
                Some("ResourcesDiscovered"),
                Some("All resources successfully discovered")
            ),
            (
                "NamespaceDeletionGroupVersionParsingFailure",
                "False",
                Some("ParsedGroupVersions"),
                Some("All legacy kube types successfully parsed")
            ),
            (
                "NamespaceDeletionContentFailure",
                "False",
                Some("ContentDeleted"),
                Some("All content successfully deleted, may be waiting on finalization")
            ),
            (
                "NamespaceContentRemaining",
                "True",
                Some("SomeResourcesRemain"),
                Some("Some resources are remaining: widgets.stable.example.com has 1 resource instances")
            ),
            (
                "NamespaceFinalizersRemaining",
                "True",
                Some("SomeFinalizersRemain"),
                Some(
                    "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances"
                )
            ),
        ]
    );

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

/// The namespace controller takes only its own token (`kubernetes`) from `spec.finalizers`:
/// a namespace another finalizer holds stays Terminating, empty, without being written
/// again, until that finalizer is removed through `/finalize` (kubectl's `replace --raw`
/// of it, the known way to free a stuck namespace), which deletes it in the same write.
#[tokio::test]
async fn a_namespace_held_by_another_finalizer_waits_for_finalize() {
    let (engine, client) = engine().await;
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .create(&PostParams::default(), &serde_json::from_value(json!({"metadata": {"name": "held"}})).expect("ns"))
        .await
        .expect("namespace");
    let finalize = |finalizers: Value| json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "held"}, "spec": {"finalizers": finalizers}});
    let pp = PostParams::default();
    let added = namespaces
        .replace_subresource(
            "finalize",
            "held",
            &pp,
            &finalize(json!(["kubernetes", "example.com/z", "example.com/a"])),
        )
        .await
        .expect("finalize");
    assert_eq!(added.spec.and_then(|s| s.finalizers).map(|f| f.len()), Some(3));
    namespaces.delete("held", &DeleteParams::default()).await.expect("delete ns");

    let left = eventually("the controller's token to go", async || {
        let ns = namespaces.get("held").await.ok()?;
        let finalizers = ns.spec.clone().and_then(|s| s.finalizers).unwrap_or_default();
        (!finalizers.iter().any(|f| f == "kubernetes")).then_some((ns, finalizers))
    })
    .await;
    assert_eq!(left.1, ["example.com/a", "example.com/z"], "others' finalizers kept, sorted");
    assert_eq!(left.0.status.and_then(|s| s.phase).as_deref(), Some("Terminating"));
    // Settled: the controller does not write it again.
    let revision = left.0.metadata.resource_version.clone();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let later = namespaces.get("held").await.expect("still there");
    assert_eq!(later.metadata.resource_version, revision);

    let answer = namespaces.replace_subresource("finalize", "held", &pp, &finalize(json!([]))).await.expect("freed");
    assert_eq!(answer.status.and_then(|s| s.phase).as_deref(), Some("Terminating"));
    assert!(namespaces.get_opt("held").await.expect("read").is_none(), "gone in the same write");
    assert!(engine.store().get("/registry/core/namespaces/held").await.expect("store").is_none());
}
