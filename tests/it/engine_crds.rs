//! CRD registration through kube-rs, in process: a `kube::Client` built over the engine's
//! router with no socket, compared with the real kube-apiserver's recorded answers.

use crate::support;
use crate::support::crd::CrdBuilder;

use kube::api::{Api, DeleteParams, PostParams};
use kube::core::DynamicObject;
use serde_json::{Value, json};
use std::time::Duration;
use support::compare::assert_json_matches;
use support::reference::load;
use support::target::{Target, send};

type Crd = k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

/// The engine in process, or the oracle (see [`support::target`]).
async fn engine() -> (Target, kube::Client) {
    support::target::target().await
}

/// The request body a reference exchange sent.
fn recorded_body(prefix: &str) -> Value {
    let ex = load(prefix);
    serde_json::from_slice(ex.request.body.as_deref().expect("a body")).expect("json body")
}

async fn wait_for(api: &Api<Crd>, name: &str, done: impl Fn(&Crd) -> bool) -> Crd {
    for _ in 0..200 {
        let crd = api.get(name).await.expect("get crd");
        if done(&crd) {
            return crd;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{name} never reached the expected state");
}

/// Creates the widget CRD of reference 06 and waits until it has an Established condition.
async fn register_widget(crds: &Api<Crd>) {
    crds.create(&PostParams::default(), &serde_json::from_value(recorded_body("06")).expect("crd"))
        .await
        .expect("widget");
    wait_for(crds, "widgets.stable.example.com", |c| condition(c, "Established").is_some()).await;
}

fn condition<'a>(
    crd: &'a Crd,
    type_: &str,
) -> Option<&'a k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinitionCondition> {
    crd.status.as_ref()?.conditions.as_ref()?.iter().find(|c| c.type_ == type_)
}

#[tokio::test]
async fn a_crd_is_accepted_established_and_discoverable() {
    let (_target, client) = engine().await;
    let crds: Api<Crd> = Api::all(client.clone());
    let created: Crd = serde_json::from_value(recorded_body("06")).expect("crd");
    let answer = crds.create(&PostParams::default(), &created).await.expect("create");
    // Reference 06: the create answers before any controller ran.
    assert_eq!(answer.status.as_ref().and_then(|s| s.accepted_names.as_ref()).map(|n| n.plural.as_str()), Some(""));

    let crd = wait_for(&crds, "widgets.stable.example.com", |c| {
        condition(c, "Established").is_some_and(|c| c.status == "True")
    })
    .await;
    let expected = load("08").response.body.json().clone();
    let actual = serde_json::to_value(&crd).expect("json");
    assert_json_matches(&expected["status"], &actual["status"], "status of an established CRD (reference 08)");
    // Reference 08: the clean-up finalizer arrives with the DELETE, not before.
    assert!(crd.metadata.finalizers.unwrap_or_default().is_empty());

    let discovery = kube::Discovery::new(client.clone()).run().await.expect("discovery");
    let (resource, caps) = discovery
        .groups()
        .flat_map(|g| g.recommended_resources())
        .find(|(r, _)| r.plural == "widgets")
        .expect("widgets are discoverable");
    assert_eq!(resource.kind, "Widget");
    assert!(caps.subresources.iter().any(|(r, _)| r.plural == "widgets/status" || r.plural == "status"));
}

#[tokio::test]
async fn a_short_name_conflict_keeps_the_first_registration() {
    let (_target, client) = engine().await;
    let crds: Api<Crd> = Api::all(client.clone());
    register_widget(&crds).await;
    crds.create(&PostParams::default(), &serde_json::from_value(recorded_body("09")).expect("crd"))
        .await
        .expect("gadget");
    let gadget = wait_for(&crds, "gadgets.stable.example.com", |c| condition(c, "NamesAccepted").is_some()).await;

    let expected = load("10").response.body.json().clone();
    let actual = serde_json::to_value(&gadget).expect("json");
    assert_json_matches(&expected["status"], &actual["status"], "gadget with a conflicting short name (reference 10)");

    // Reference 13: the gadget is not served while its names are not accepted.
    let doc: Value = client
        .request(http::Request::get("/apis/stable.example.com/v1").body(Vec::new()).expect("request"))
        .await
        .expect("discovery");
    let names: Vec<&str> =
        doc["resources"].as_array().expect("resources").iter().filter_map(|r| r["name"].as_str()).collect();
    assert_eq!(names, ["widgets", "widgets/status", "widgets/scale"]);

    // Reference 73: once the widget CRD is gone, the gadget gets `wd`.
    crds.delete("widgets.stable.example.com", &DeleteParams::default()).await.expect("delete widget crd");
    let gadget = wait_for(&crds, "gadgets.stable.example.com", |c| {
        condition(c, "Established").is_some_and(|c| c.status == "True")
    })
    .await;
    let expected = load("73").response.body.json().clone();
    assert_json_matches(&expected["status"], &serde_json::to_value(&gadget).expect("json")["status"], "reference 73");
}

#[tokio::test]
async fn deleting_a_crd_deletes_its_resources_then_the_crd() {
    let (_target, client) = engine().await;
    let crds: Api<Crd> = Api::all(client.clone());
    register_widget(&crds).await;
    let ar = kube::core::ApiResource {
        group: "stable.example.com".into(),
        version: "v1".into(),
        api_version: "stable.example.com/v1".into(),
        kind: "Widget".into(),
        plural: "widgets".into(),
    };
    let widgets: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &ar);
    let mut w1 = DynamicObject::new("w1", &ar);
    w1.data = json!({"spec": {"size": 3}});
    widgets.create(&PostParams::default(), &w1).await.expect("create w1");

    crds.delete("widgets.stable.example.com", &DeleteParams::default()).await.expect("delete");
    for _ in 0..200 {
        if crds.get_opt("widgets.stable.example.com").await.expect("get").is_none() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(crds.get_opt("widgets.stable.example.com").await.expect("get").is_none(), "the CRD is gone after clean-up");
    // Reference 72: the path is no longer served at all.
    let list = http::Request::get("/apis/stable.example.com/v1/namespaces/default/widgets").body(Vec::new());
    let (status, _) = send(&client, list.expect("req")).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn an_invalid_crd_name_is_refused_as_kube_apiserver_refuses_it() {
    let (_target, client) = engine().await;
    let ex = load("11");
    let (status, body) = send(&client, ex.request.to_http_request("unused")).await;
    assert_eq!(status, ex.response.status);
    assert_json_matches(ex.response.body.json(), &body, "reference 11");
}

/// The fieldsV1 of `crd`'s managedFields entry written by `manager`.
fn fields_of(crd: &Crd, manager: &str) -> Value {
    let entries = crd.metadata.managed_fields.as_ref().expect("managedFields");
    let entry = entries.iter().find(|e| e.manager.as_deref() == Some(manager)).expect("the manager's entry");
    serde_json::to_value(entry.fields_v1.as_ref().expect("fieldsV1")).expect("json")
}

#[tokio::test]
async fn a_crds_managed_fields_are_typed_as_kube_types_them() {
    let (_target, client) = engine().await;
    let crds: Api<Crd> = Api::all(client);
    let pp = PostParams { field_manager: Some("creator".into()), ..Default::default() };
    crds.create(&pp, &serde_json::from_value(recorded_body("06")).expect("crd")).await.expect("create");
    let crd = wait_for(&crds, "widgets.stable.example.com", |c| condition(c, "Established").is_some()).await;

    // Compared with Go's zero CRD: spec and names exist there, so they get no "." entry;
    // conversion is defaulted while decoding, so its creator owns it (with a ".").
    let spec = fields_of(&crd, "creator")["f:spec"].clone();
    assert_eq!(spec.get("."), None, "{spec}");
    assert_eq!(spec["f:names"].get("."), None, "{spec}");
    assert_eq!(spec["f:conversion"], json!({".": {}, "f:strategy": {}}), "{spec}");
    assert_eq!(spec["f:versions"], json!({}), "versions is an atomic list: {spec}");

    // Conditions are a map list keyed by type: the controller owns each one it wrote.
    let status = fields_of(&crd, "kube-apiserver")["f:status"].clone();
    for kind in ["NamesAccepted", "Established"] {
        let item = &status["f:conditions"][format!("k:{{\"type\":\"{kind}\"}}")];
        assert_eq!(item["."], json!({}), "{kind}: {status}");
        assert_eq!(item["f:reason"], json!({}), "{kind}: {status}");
    }
}

/// How many CRDs the serve-then-announce tests race with: each is one chance to lose.
const RACED_CRDS: usize = 12;

/// `things.g<i>.example.com`: a cluster-scoped kind that takes any object.
fn thing_crd(i: usize) -> Crd {
    serde_json::from_value(CrdBuilder::new(&format!("g{i}.example.com"), "Thing").cluster_scoped().build())
        .expect("crd")
}

/// The things of `group`.
fn things(client: &kube::Client, group: &str) -> Api<DynamicObject> {
    let gvk = kube::api::GroupVersionKind::gvk(group, "v1", "Thing");
    Api::all_with(client.clone(), &kube::api::ApiResource::from_gvk_with_plural(&gvk, "things"))
}

/// The next CRD event of `events`, within 30 s.
async fn next_crd_event(
    events: &mut futures::stream::BoxStream<'static, kube::Result<kube::api::WatchEvent<Crd>>>,
) -> kube::api::WatchEvent<Crd> {
    tokio::time::timeout(Duration::from_secs(30), futures::TryStreamExt::try_next(events))
        .await
        .expect("a CRD event within 30 s")
        .expect("watch event")
        .expect("watch open")
}

/// Serve first, then announce: a client that creates an object the moment its watch shows
/// the CRD `Established` is served, never answered `404 page not found`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crd_seen_established_is_already_served() {
    use futures::StreamExt;
    use kube::api::{WatchEvent, WatchParams};
    if support::target::engine_only("kube-apiserver serves a new CRD a moment after its watch shows it Established") {
        return;
    }
    let (_target, client) = engine().await;
    let crds: Api<Crd> = Api::all(client.clone());
    let mut events = crds.watch(&WatchParams::default(), "0").await.expect("watch").boxed();
    for i in 0..RACED_CRDS {
        crds.create(&PostParams::default(), &thing_crd(i)).await.expect("create crd");
    }
    let mut served = std::collections::BTreeSet::new();
    while served.len() < RACED_CRDS {
        let WatchEvent::Modified(crd) = next_crd_event(&mut events).await else { continue };
        let established = condition(&crd, "Established").is_some_and(|c| c.status == "True");
        if !established || !served.insert(crd.spec.group.clone()) {
            continue;
        }
        let thing = serde_json::from_value(json!({"apiVersion": format!("{}/v1", crd.spec.group), "kind": "Thing",
            "metadata": {"name": "first"}}))
        .expect("thing");
        if let Err(e) = things(&client, &crd.spec.group).create(&PostParams::default(), &thing).await {
            panic!("{} was seen Established but creating in it failed: {e}", crd.spec.group);
        }
    }
}

/// Ours answers a CRD write once its change is served, in whatever representation the
/// answer is asked for: an object created right after its CRD is never answered `404
/// page not found` (kube-apiserver serves a new CRD a moment after it answers).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crd_created_is_served_when_its_create_is_answered() {
    if support::target::engine_only("kube-apiserver answers a CRD's create before it serves the CRD") {
        return;
    }
    // Over etcd, the first CRD comes the moment the engine is open: it knows by then
    // whether it leads (and so accepts names).
    let (_target, client) = engine().await;
    for i in 0..RACED_CRDS {
        let accept = ["application/json", "application/yaml"][i % 2];
        let create = http::Request::post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, accept)
            .body(serde_json::to_vec(&thing_crd(i)).expect("crd"))
            .expect("request");
        let (code, _) = send(&client, create).await;
        assert_eq!(code, 201, "the CRD of g{i} is created");
        let thing =
            json!({"apiVersion": format!("g{i}.example.com/v1"), "kind": "Thing", "metadata": {"name": "first"}});
        let create = http::Request::post(format!("/apis/g{i}.example.com/v1/things"))
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(serde_json::to_vec(&thing).expect("thing"))
            .expect("request");
        let (code, answer) = send(&client, create).await;
        assert_eq!(code, 201, "a Thing created right after its CRD's create (answered as {accept}): {answer}");
    }
}

/// And the other way round: a client that sees a CRD gone finds its kind gone, with
/// kube's `404 page not found`, not still served as terminating.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crd_seen_deleted_is_no_longer_served() {
    use futures::StreamExt;
    use kube::api::{ListParams, WatchEvent, WatchParams};
    if support::target::engine_only(
        "kube-apiserver still serves a deleted CRD's kind a moment after its watch shows it gone",
    ) {
        return;
    }
    let (_target, client) = engine().await;
    let crds: Api<Crd> = Api::all(client.clone());
    for i in 0..RACED_CRDS {
        crds.create(&PostParams::default(), &thing_crd(i)).await.expect("create crd");
    }
    for i in 0..RACED_CRDS {
        wait_for(&crds, &format!("things.g{i}.example.com"), |c| {
            condition(c, "Established").is_some_and(|c| c.status == "True")
        })
        .await;
    }
    let rv = crds.list(&ListParams::default()).await.expect("list").metadata.resource_version.expect("rv");
    let mut events = crds.watch(&WatchParams::default(), &rv).await.expect("watch").boxed();
    for i in 0..RACED_CRDS {
        crds.delete(&format!("things.g{i}.example.com"), &DeleteParams::default()).await.expect("delete crd");
    }
    let mut gone = std::collections::BTreeSet::new();
    while gone.len() < RACED_CRDS {
        let WatchEvent::Deleted(crd) = next_crd_event(&mut events).await else { continue };
        gone.insert(crd.spec.group.clone());
        match things(&client, &crd.spec.group).list(&ListParams::default()).await {
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            other => panic!("{} was seen deleted but its things answered {other:?}", crd.spec.group),
        }
    }
}

/// Deleting a CRD ends the open watches of its kind once its objects' DELETED events are
/// sent, as kube-apiserver ends them when it tears the kind's storage down (about a second
/// after the CRD goes); a watch left open would follow a kind that no longer exists, and a
/// CRD created again under the same name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_crd_ends_the_watches_of_its_kind() {
    use futures::StreamExt;
    use kube::api::{WatchEvent, WatchParams};
    let (_target, client) = engine().await;
    let crds: Api<Crd> = Api::all(client.clone());
    let crd = thing_crd(90);
    crds.create(&PostParams::default(), &crd).await.expect("create crd");
    let name = format!("things.{}", crd.spec.group);
    wait_for(&crds, &name, |c| condition(c, "Established").is_some_and(|c| c.status == "True")).await;
    let things = things(&client, &crd.spec.group);
    let thing = serde_json::from_value(json!({"apiVersion": format!("{}/v1", crd.spec.group), "kind": "Thing",
        "metadata": {"name": "doomed"}}))
    .expect("thing");
    let created = things.create(&PostParams::default(), &thing).await.expect("create thing");
    let rv = created.metadata.resource_version.expect("rv");
    let mut events = things.watch(&WatchParams::default().timeout(120), &rv).await.expect("watch").boxed();
    let started = std::time::Instant::now();
    crds.delete(&name, &DeleteParams::default()).await.expect("delete crd");
    let mut deleted = false;
    let ended = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(event) = events.next().await {
            if let Ok(WatchEvent::Deleted(obj)) = event {
                deleted |= obj.metadata.name.as_deref() == Some("doomed");
            }
        }
    })
    .await;
    assert!(ended.is_ok(), "the watch was still open 60 s after its CRD was deleted");
    assert!(deleted, "the object's DELETED event came before the watch ended");
    assert!(started.elapsed() < Duration::from_secs(30), "ended {:?} after the delete", started.elapsed());
}

/// A change of a CRD's spec tears its storage down as kube-apiserver's handler does: the
/// open watches of its kinds end about a second later, and a watch from a revision before
/// the change is 410 Gone (the new storage's window starts there). A change of its
/// metadata alone ends nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_crd_spec_ends_the_watches_of_its_kind() {
    use futures::StreamExt;
    use kube::api::{Patch, PatchParams, WatchEvent, WatchParams};
    let (_target, client) = engine().await;
    let crds: Api<Crd> = Api::all(client.clone());
    let crd = thing_crd(91);
    crds.create(&PostParams::default(), &crd).await.expect("create crd");
    let name = format!("things.{}", crd.spec.group);
    wait_for(&crds, &name, |c| condition(c, "Established").is_some_and(|c| c.status == "True")).await;
    let things = things(&client, &crd.spec.group);
    let thing = |name: &str| -> DynamicObject {
        serde_json::from_value(json!({"apiVersion": format!("{}/v1", crd.spec.group), "kind": "Thing",
            "metadata": {"name": name}}))
        .expect("thing")
    };
    let rv = things.create(&PostParams::default(), &thing("first")).await.expect("first").metadata.resource_version;
    let rv = rv.expect("rv");
    let mut events = things.watch(&WatchParams::default().timeout(120), &rv).await.expect("watch").boxed();

    let label = json!({"metadata": {"labels": {"team": "a"}}});
    crds.patch(&name, &PatchParams::default(), &Patch::Merge(&label)).await.expect("label the crd");
    tokio::time::sleep(Duration::from_millis(2500)).await;
    things.create(&PostParams::default(), &thing("second")).await.expect("second");
    let next = tokio::time::timeout(Duration::from_secs(10), events.next()).await.expect("an event");
    assert!(matches!(next, Some(Ok(WatchEvent::Added(_)))), "a label left the watch open: {next:?}");

    let started = std::time::Instant::now();
    let short = json!({"spec": {"names": {"shortNames": ["th"]}}});
    crds.patch(&name, &PatchParams::default(), &Patch::Merge(&short)).await.expect("change the spec");
    let ended = tokio::time::timeout(Duration::from_secs(30), async { while events.next().await.is_some() {} }).await;
    assert!(ended.is_ok(), "the watch was still open 30 s after its CRD's spec changed");
    assert!(started.elapsed() >= Duration::from_millis(900), "ended {:?} after the change", started.elapsed());

    let mut old = things.watch(&WatchParams::default().timeout(5), &rv).await.expect("watch").boxed();
    match tokio::time::timeout(Duration::from_secs(10), old.next()).await.expect("an answer") {
        Some(Ok(WatchEvent::Error(e))) => assert_eq!((e.code, e.reason.as_str()), (410, "Expired"), "{e:?}"),
        other => panic!("a watch from before the change: {other:?}"),
    }
}
