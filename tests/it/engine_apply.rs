//! Server-side apply and managedFields through kube-rs, in process: the recorded
//! kube-apiserver sequence (references 15–30) leaves the same managedFields, apply patches
//! merge with field ownership (conflicts, force, pruning, keyed lists), and the answers to
//! bad apply requests are kube's.

use crate::support;
use crate::support::crd::CrdBuilder;

use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, DynamicObject};
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

/// Registers a CRD and waits until it is served.
async fn register(client: &kube::Client, crd: Value) {
    let crds: Api<Crd> = Api::all(client.clone());
    let name = crd["metadata"]["name"].as_str().expect("name").to_string();
    crds.create(&PostParams::default(), &serde_json::from_value(crd).expect("crd")).await.expect("create crd");
    for _ in 0..300 {
        let crd = crds.get(&name).await.expect("get crd");
        let established = crd
            .status
            .and_then(|s| s.conditions)
            .unwrap_or_default()
            .iter()
            .any(|c| c.type_ == "Established" && c.status == "True");
        if established {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{name} was never established");
}

/// The widget CRD of reference 06 (status and scale subresources).
async fn widgets(client: &kube::Client) -> Api<DynamicObject> {
    let body = load("06").request.body.expect("a body");
    register(client, serde_json::from_slice(&body).expect("json")).await;
    let ar = ApiResource {
        group: "stable.example.com".into(),
        version: "v1".into(),
        api_version: "stable.example.com/v1".into(),
        kind: "Widget".into(),
        plural: "widgets".into(),
    };
    Api::namespaced_with(client.clone(), "default", &ar)
}

/// A CRD whose spec has a keyed list, a set and an atomic list.
async fn gizmos(client: &kube::Client) -> Api<DynamicObject> {
    register(
        client,
        CrdBuilder::new("apply.example.com", "Gizmo")
            .status()
            .schema(json!({"type": "object", "properties": {
                "spec": {"type": "object", "properties": {
                    "size": {"type": "integer"},
                    "color": {"type": "string"},
                    "ports": {"type": "array", "x-kubernetes-list-type": "map",
                              "x-kubernetes-list-map-keys": ["name"],
                              "items": {"type": "object", "required": ["name"], "properties": {
                                  "name": {"type": "string"}, "port": {"type": "integer"}}}},
                    "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                    "args": {"type": "array", "items": {"type": "string"}}
                }},
                "status": {"type": "object", "properties": {"phase": {"type": "string"}}}
            }}))
            .build(),
    )
    .await;
    let ar = ApiResource {
        group: "apply.example.com".into(),
        version: "v1".into(),
        api_version: "apply.example.com/v1".into(),
        kind: "Gizmo".into(),
        plural: "gizmos".into(),
    };
    Api::namespaced_with(client.clone(), "default", &ar)
}

fn gizmo(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "apply.example.com/v1", "kind": "Gizmo", "metadata": {"name": name}, "spec": spec})
}

fn widget(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "stable.example.com/v1", "kind": "Widget", "metadata": {"name": name}, "spec": spec})
}

fn value(obj: &DynamicObject) -> Value {
    serde_json::to_value(obj).expect("json")
}

/// The managedFields of a recorded response, and ours, as sets of entries: the order of
/// entries written in the same second is not a fidelity fact (kube sorts by time).
fn assert_managed_fields(reference: &str, ours: &Value) {
    let sorted = |v: &Value| {
        let mut entries = v["metadata"]["managedFields"].as_array().cloned().unwrap_or_default();
        entries.sort_by_key(|e| format!("{}{}{}", e["manager"], e["operation"], e["subresource"]));
        json!({"metadata": {"managedFields": entries}})
    };
    let expected = load(reference).response.body.json().clone();
    assert_json_matches(&sorted(&expected), &sorted(ours), &format!("managedFields of reference {reference}"));
}

fn curl() -> PostParams {
    PostParams { field_manager: Some("curl".into()), ..Default::default() }
}

fn curl_patch() -> PatchParams {
    PatchParams { field_manager: Some("curl".into()), ..Default::default() }
}

fn request_body(reference: &str) -> Value {
    serde_json::from_slice(&load(reference).request.body.expect("a body")).expect("json")
}

#[tokio::test]
async fn the_recorded_writes_leave_the_recorded_managed_fields() {
    let (_target, client) = engine().await;
    let widgets = widgets(&client).await;

    // 15: create.
    let created = widgets.create(&curl(), &serde_json::from_value(request_body("15")).expect("w1")).await.expect("15");
    assert_managed_fields("15", &value(&created));

    // 19: PUT with a new size and a status the main endpoint drops.
    let mut put = request_body("19");
    put["metadata"] = value(&created)["metadata"].clone();
    let replaced = widgets.replace("w1", &curl(), &serde_json::from_value(put).expect("w1")).await.expect("19");
    assert_managed_fields("19", &value(&replaced));

    // 22: PUT /status that also tries to change a label and the spec.
    let mut status = request_body("22");
    status["metadata"]["resourceVersion"] = value(&replaced)["metadata"]["resourceVersion"].clone();
    // The recorded uid is the oracle's object's; here it would fail the uid precondition.
    status["metadata"]["uid"] = value(&replaced)["metadata"]["uid"].clone();
    status["metadata"]["managedFields"] = value(&replaced)["metadata"]["managedFields"].clone();
    let after = widgets.replace_status("w1", &curl(), &serde_json::from_value(status).expect("w1")).await.expect("22");
    assert_managed_fields("22", &value(&after));

    // 23: merge patch of /status.
    let patch: Value = request_body("23");
    let after = widgets.patch_status("w1", &curl_patch(), &Patch::Merge(&patch)).await.expect("23");
    assert_managed_fields("23", &value(&after));

    // 25, 26: the scale subresource writes replicas.
    let replicas = json!({"spec": {"replicas": 4}});
    widgets.patch_scale("w1", &curl_patch(), &Patch::Merge(&replicas)).await.expect("25");
    widgets.patch_scale("w1", &curl_patch(), &Patch::Merge(&request_body("26"))).await.expect("26");

    // 28: JSON patch; 29: merge patch.
    let ops: json_patch::Patch = serde_json::from_value(request_body("28")).expect("ops");
    let after = widgets.patch("w1", &curl_patch(), &Patch::<()>::Json(ops)).await.expect("28");
    assert_managed_fields("28", &value(&after));
    let after = widgets.patch("w1", &curl_patch(), &Patch::Merge(&request_body("29"))).await.expect("29");
    assert_managed_fields("29", &value(&after));
}

#[tokio::test]
async fn an_apply_creates_what_does_not_exist_as_reference_30() {
    let (_target, client) = engine().await;
    let widgets = widgets(&client).await;
    let ex = load("30");
    let config: Value = serde_saphyr::from_slice(ex.request.body.as_deref().expect("yaml")).expect("yaml");
    let created =
        widgets.patch("w2", &PatchParams::apply("demo-manager"), &Patch::Apply(&config)).await.expect("apply");
    assert_json_matches(ex.response.body.json(), &value(&created), "reference 30");
}

fn apply_request(query: &str, body: &Value) -> http::Request<Vec<u8>> {
    http::Request::patch(format!("/apis/stable.example.com/v1/namespaces/default/widgets/w1{query}"))
        .header("Content-Type", "application/apply-patch+yaml")
        .body(body.to_string().into_bytes())
        .expect("request")
}

#[tokio::test]
async fn an_apply_that_changes_another_managers_field_conflicts_until_forced() {
    let (_target, client) = engine().await;
    let widgets = widgets(&client).await;
    let csa = PostParams { field_manager: Some("kubectl-client-side-apply".into()), ..Default::default() };
    let w1 = widget("w1", json!({"size": 3, "color": "red", "replicas": 1}));
    widgets.create(&csa, &serde_json::from_value(w1).expect("w1")).await.expect("create");

    let config = widget("w1", json!({"replicas": 3}));
    let (status, body) = send(&client, apply_request("?fieldManager=other", &config)).await;
    assert_eq!(status, 409);
    assert_eq!(
        body,
        json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "Apply failed with 1 conflict: conflict with \"kubectl-client-side-apply\" using stable.example.com/v1: .spec.replicas",
            "reason": "Conflict",
            "details": {"causes": [{"reason": "FieldManagerConflict",
                "message": "conflict with \"kubectl-client-side-apply\" using stable.example.com/v1",
                "field": ".spec.replicas"}]},
            "code": 409
        })
    );

    // Applying a value the other manager already holds is no conflict: both own it.
    let same = widget("w1", json!({"size": 3}));
    let shared = widgets.patch("w1", &PatchParams::apply("other"), &Patch::Apply(&same)).await.expect("same value");
    let entries = value(&shared)["metadata"]["managedFields"].clone();
    assert_eq!(entries[0]["manager"], "other");
    assert_eq!(entries[0]["fieldsV1"], json!({"f:spec": {"f:size": {}}}));
    assert_eq!(entries[1]["fieldsV1"]["f:spec"]["f:size"], json!({}), "still owned by the first manager");

    let (status, forced) = send(&client, apply_request("?fieldManager=other&force=true", &config)).await;
    assert_eq!(status, 200);
    assert_eq!(forced["spec"], json!({"size": 3, "color": "red", "replicas": 3}));
    let entries = &forced["metadata"]["managedFields"];
    assert_eq!(entries[0]["manager"], "other");
    assert_eq!(entries[0]["operation"], "Apply");
    assert_eq!(
        entries[0]["fieldsV1"],
        json!({"f:spec": {"f:replicas": {}}}),
        "the forced config replaced the last one"
    );
    assert_eq!(
        entries[1]["fieldsV1"]["f:spec"],
        json!({".": {}, "f:color": {}, "f:size": {}}),
        "the taken field left the other manager; size was stopped being applied but stays owned by it"
    );
}

#[tokio::test]
async fn an_apply_needs_a_field_manager_and_a_well_formed_configuration() {
    let (_target, client) = engine().await;
    let _widgets = widgets(&client).await;
    let config = widget("w1", json!({"size": 1}));
    let (status, body) = send(&client, apply_request("", &config)).await;
    assert_eq!(status, 422);
    assert_eq!(
        body["message"],
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
    );
    assert_eq!(
        body["details"]["causes"][0],
        json!({"reason": "FieldValueRequired", "message": "Required value: is required for apply patch", "field": "fieldManager"})
    );

    let merge = http::Request::patch("/apis/stable.example.com/v1/namespaces/default/widgets/w1?force=true")
        .header("Content-Type", "application/merge-patch+json")
        .body(b"{}".to_vec())
        .expect("request");
    let (status, body) = send(&client, merge).await;
    assert_eq!(status, 422);
    assert_eq!(
        body["message"],
        "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch"
    );

    let (status, body) = send(&client, apply_request("?fieldManager=m", &widget("other-name", json!({})))).await;
    assert_eq!(status, 400);
    assert_eq!(body["message"], "the name of the object (other-name) does not match the name on the URL (w1)");

    let mut v2 = config.clone();
    v2["apiVersion"] = json!("stable.example.com/v2");
    let (status, body) = send(&client, apply_request("?fieldManager=m", &v2)).await;
    assert_eq!(
        (status, body["message"].as_str()),
        (400, Some("invalid object type: stable.example.com/v2, Kind=Widget"))
    );

    let unknown = widget("w1", json!({"bogus": true}));
    let (status, body) = send(&client, apply_request("?fieldManager=m", &unknown)).await;
    // kube-apiserver answers a plain 500 here (kubernetes/kubernetes#139253), as does the engine.
    assert_eq!((status, body["reason"].as_str()), (500, None));
    assert_eq!(
        body["message"],
        "failed to create typed patch object (/w1; stable.example.com/v1, Kind=Widget): .spec.bogus: field not declared in schema"
    );
    let (status, _) = send(
        &client,
        http::Request::get("/apis/stable.example.com/v1/namespaces/default/widgets/w1")
            .body(Vec::new())
            .expect("request"),
    )
    .await;
    assert_eq!(status, 404, "nothing was created by the refused applies");
}

#[tokio::test]
async fn keyed_lists_and_sets_merge_item_by_item_between_appliers() {
    let (_target, client) = engine().await;
    let gizmos = gizmos(&client).await;
    let a = gizmo("g", json!({"ports": [{"name": "http", "port": 80}], "tags": ["a"], "args": ["x"]}));
    gizmos.patch("g", &PatchParams::apply("alice"), &Patch::Apply(&a)).await.expect("alice");
    let b = gizmo("g", json!({"ports": [{"name": "metrics", "port": 9090}], "tags": ["b"]}));
    let both = value(&gizmos.patch("g", &PatchParams::apply("bob"), &Patch::Apply(&b)).await.expect("bob"));
    assert_eq!(
        both["spec"],
        json!({"ports": [{"name": "http", "port": 80}, {"name": "metrics", "port": 9090}], "tags": ["a", "b"], "args": ["x"]})
    );
    let bob = both["metadata"]["managedFields"]
        .as_array()
        .expect("entries")
        .iter()
        .find(|e| e["manager"] == "bob")
        .cloned()
        .expect("bob's entry");
    assert_eq!(
        bob["fieldsV1"],
        json!({"f:spec": {"f:ports": {"k:{\"name\":\"metrics\"}": {".": {}, "f:name": {}, "f:port": {}}}, "f:tags": {"v:\"b\"": {}}}})
    );

    // Alice stops applying her port and tag: they go; Bob's stay.
    let a2 = gizmo("g", json!({"args": ["x"]}));
    let after = value(&gizmos.patch("g", &PatchParams::apply("alice"), &Patch::Apply(&a2)).await.expect("alice again"));
    assert_eq!(after["spec"], json!({"ports": [{"name": "metrics", "port": 9090}], "tags": ["b"], "args": ["x"]}));

    // An atomic list is one field: changing it is a conflict with its owner.
    let c = gizmo("g", json!({"args": ["y"]}));
    let err = gizmos.patch("g", &PatchParams::apply("carol"), &Patch::Apply(&c)).await.expect_err("conflict");
    let kube::Error::Api(status) = err else { panic!("an API error") };
    assert_eq!(status.code, 409);
    assert_eq!(status.message, "Apply failed with 1 conflict: conflict with \"alice\": .spec.args");
}

#[tokio::test]
async fn an_apply_through_status_owns_only_the_status() {
    let (_target, client) = engine().await;
    let gizmos = gizmos(&client).await;
    gizmos
        .patch("g", &PatchParams::apply("owner"), &Patch::Apply(&gizmo("g", json!({"size": 1}))))
        .await
        .expect("create");
    let status = json!({"apiVersion": "apply.example.com/v1", "kind": "Gizmo", "metadata": {"name": "g"},
        "spec": {"size": 5}, "status": {"phase": "Ready"}});
    let after = value(
        &gizmos.patch_status("g", &PatchParams::apply("controller"), &Patch::Apply(&status)).await.expect("status"),
    );
    assert_eq!(after["status"], json!({"phase": "Ready"}));
    assert_eq!(after["spec"], json!({"size": 1}), "the spec does not change through /status");
    let entry = after["metadata"]["managedFields"]
        .as_array()
        .expect("entries")
        .iter()
        .find(|e| e["manager"] == "controller")
        .cloned()
        .expect("controller's entry");
    assert_eq!(entry["operation"], "Apply");
    assert_eq!(entry["subresource"], "status");
    assert_eq!(entry["fieldsV1"], json!({"f:status": {"f:phase": {}}}));
}

#[tokio::test]
async fn resetting_managed_fields_stops_tracking_until_the_next_apply() {
    let (_target, client) = engine().await;
    let gizmos = gizmos(&client).await;
    let g = gizmos
        .create(&curl(), &serde_json::from_value(gizmo("g", json!({"size": 1}))).expect("g"))
        .await
        .expect("create");
    assert_eq!(value(&g)["metadata"]["managedFields"][0]["manager"], "curl");

    // An empty list is dropped while decoding a custom resource, so it resets nothing
    // (kube documents `[{}]` as the way to clear the entries).
    let empty = json!({"metadata": {"managedFields": []}});
    let g = value(&gizmos.patch("g", &curl_patch(), &Patch::Merge(&empty)).await.expect("empty list"));
    assert_eq!(g["metadata"]["managedFields"][0]["manager"], "curl");

    let reset = json!({"metadata": {"managedFields": [{}]}, "spec": {"size": 2}});
    let g = value(&gizmos.patch("g", &curl_patch(), &Patch::Merge(&reset)).await.expect("reset"));
    assert!(g["metadata"].get("managedFields").is_none(), "{g}");
    let g =
        value(&gizmos.patch("g", &curl_patch(), &Patch::Merge(&json!({"spec": {"size": 3}}))).await.expect("update"));
    assert!(g["metadata"].get("managedFields").is_none(), "an untracked object stays untracked");

    let err = gizmos
        .patch("g", &PatchParams::apply("m"), &Patch::Apply(&gizmo("g", json!({"size": 4}))))
        .await
        .expect_err("the fields belong to before-first-apply now");
    let kube::Error::Api(status) = err else { panic!("an API error") };
    assert_eq!(
        status.message,
        "Apply failed with 1 conflict: conflict with \"before-first-apply\" using apply.example.com/v1: .spec.size"
    );
}

#[tokio::test]
async fn an_unchanged_reapply_is_no_write() {
    let (_target, client) = engine().await;
    let gizmos = gizmos(&client).await;
    let config = gizmo("g", json!({"size": 1}));
    let first = gizmos.patch("g", &PatchParams::apply("m"), &Patch::Apply(&config)).await.expect("first");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let second = gizmos.patch("g", &PatchParams::apply("m"), &Patch::Apply(&config)).await.expect("second");
    assert_eq!(first.metadata.resource_version, second.metadata.resource_version);
    assert_eq!(value(&first)["metadata"]["managedFields"], value(&second)["metadata"]["managedFields"]);
}

/// kube's store keeps the managedFields times of an update that changes nothing else once
/// the strategy has prepared it: a status applied through the main endpoint (which drops
/// it) a second after the last write is no write at all, as the recorded `patches`
/// scenario shows. Keeping the times before the strategy dropped the status made it one.
#[tokio::test]
async fn an_apply_whose_only_change_the_strategy_drops_is_no_write_a_second_later() {
    let (_target, client) = engine().await;
    let widgets = widgets(&client).await;
    let alice = PatchParams::apply("alice");
    let config = widget("w-still", json!({"replicas": 2}));
    let first = widgets.patch("w-still", &alice, &Patch::Apply(&config)).await.expect("apply");
    // managedFields times count whole seconds: let one pass.
    let millis = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").subsec_millis();
    tokio::time::sleep(Duration::from_millis(u64::from(1_050 - millis))).await;
    let mut with_status = config.clone();
    with_status["status"] = json!({"replicas": 5});
    let again = widgets.patch("w-still", &alice, &Patch::Apply(&with_status)).await.expect("apply again");
    assert_eq!(again.metadata.resource_version, first.metadata.resource_version, "no write");
    assert_eq!(value(&again)["metadata"]["managedFields"], value(&first)["metadata"]["managedFields"]);
    assert_eq!(value(&again).get("status"), value(&first).get("status"), "the status was not the main endpoint's");
}
