//! Custom-resource paths, verbs and write options against the engine's HTTP surface, in
//! process: each answer as the oracle (kube-apiserver 1.32) gave it in the differential
//! scenarios verbs, subresources, deletes and writes.

use crate::support::crd::CrdBuilder;
use axum::body::Body;
use http::Request;
use http_body_util::BodyExt;
use kubectl_crd_engine::Engine;
use serde_json::{Value, json};
use std::sync::Arc;
use tower::ServiceExt;

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const WIDGETS: &str = "/apis/rt.example.com/v1/namespaces/default/widgets";

/// One answer: status, Content-Type and body (JSON, or the text; `Null` when empty).
struct Answer {
    status: u16,
    content_type: String,
    body: Value,
}

async fn send(engine: &Arc<Engine>, method: &str, uri: &str, content_type: &str, body: &str) -> Answer {
    let req = Request::builder()
        .method(method)
        .uri(uri)
        .header("Content-Type", content_type)
        .body(Body::from(body.to_string()))
        .expect("request");
    let res = engine.router().oneshot(req).await.expect("a response");
    let status = res.status().as_u16();
    let content_type = res.headers().get("Content-Type").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    let bytes = res.into_body().collect().await.expect("body").to_bytes();
    let body = match bytes.is_empty() {
        true => Value::Null,
        false => {
            serde_json::from_slice(&bytes).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into()))
        }
    };
    Answer { status, content_type, body }
}

async fn json(engine: &Arc<Engine>, method: &str, uri: &str, body: &Value) -> Answer {
    send(engine, method, uri, "application/json", &body.to_string()).await
}

/// A namespaced `Widget` CRD in `rt.example.com` with `/status` and `/scale`.
fn widget_crd() -> Value {
    CrdBuilder::new("rt.example.com", "Widget").status().scale().build()
}

/// A widget named `name`, with `extra` merged into its metadata.
fn widget(name: &str, extra: Value) -> Value {
    let mut metadata = json!({"name": name});
    if let (Some(m), Some(e)) = (metadata.as_object_mut(), extra.as_object()) {
        m.extend(e.clone());
    }
    json!({"apiVersion": "rt.example.com/v1", "kind": "Widget", "metadata": metadata, "spec": {"replicas": 1}})
}

async fn serving_widgets() -> Arc<Engine> {
    let engine = Engine::open(&crate::support::storage::test_storage()).await.expect("engine");
    assert_eq!(json(&engine, "POST", CRDS, &widget_crd()).await.status, 201);
    for _ in 0..300 {
        if send(&engine, "GET", WIDGETS, "application/json", "").await.status == 200 {
            return engine;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("widgets never served");
}

async fn create(engine: &Arc<Engine>, name: &str, extra: Value) -> Value {
    let answer = json(engine, "POST", WIDGETS, &widget(name, extra)).await;
    assert_eq!(answer.status, 201, "{}", answer.body);
    answer.body
}

fn message(answer: &Answer) -> (u16, &str) {
    (answer.status, answer.body["message"].as_str().unwrap_or_default())
}

#[tokio::test]
async fn custom_resource_paths_answer_as_the_crd_handler() {
    let engine = serving_widgets().await;
    create(&engine, "w1", json!({})).await;
    let w1 = format!("{WIDGETS}/w1");
    // An unknown subresource is the object's NotFound, as JSON, whatever the method.
    for method in ["GET", "POST", "OPTIONS"] {
        let answer = send(&engine, method, &format!("{w1}/bogus"), "application/json", "{}").await;
        assert_eq!(message(&answer), (404, "widgets.rt.example.com \"w1\" not found"), "{method}");
        assert_eq!(answer.body["details"], json!({"name": "w1", "group": "rt.example.com", "kind": "widgets"}));
    }
    // POST on an item creates what the body names.
    assert_eq!(json(&engine, "POST", &w1, &widget("posted", json!({}))).await.status, 201);
    let refused = |verb: &str| format!("{verb} is not supported on resources of kind \"widgets.rt.example.com\"");
    let answer = json(&engine, "POST", &format!("{w1}/status"), &widget("w1", json!({}))).await;
    assert_eq!(message(&answer), (405, refused("create").as_str()));
    assert_eq!(answer.body["details"], json!({"group": "rt.example.com", "kind": "widgets"}));
    let answer = send(&engine, "DELETE", &format!("{w1}/scale"), "application/json", "").await;
    assert_eq!(message(&answer), (405, refused("delete").as_str()));
    let answer = send(&engine, "OPTIONS", WIDGETS, "application/json", "").await;
    assert_eq!(message(&answer), (405, refused("").as_str()));
    // HEAD is a GET without a body, across namespaces too.
    for path in [w1.clone(), format!("{w1}/scale"), WIDGETS.into(), "/apis/rt.example.com/v1/widgets".into()] {
        let answer = send(&engine, "HEAD", &path, "application/json", "").await;
        assert_eq!(
            (answer.status, answer.content_type.as_str(), &answer.body),
            (200, "application/json", &Value::Null),
            "{path}"
        );
    }
    assert_eq!(send(&engine, "HEAD", &format!("{WIDGETS}/nope"), "application/json", "").await.status, 404);
    // Updates and patches need a name, but a patch checks its type first.
    let answer = json(&engine, "PUT", WIDGETS, &widget("w1", json!({}))).await;
    assert_eq!(message(&answer), (400, "name must be provided"));
    let answer = send(&engine, "PATCH", WIDGETS, "application/merge-patch+json", "{}").await;
    assert_eq!(message(&answer), (400, "name must be provided"));
    let answer = send(&engine, "PATCH", WIDGETS, "application/strategic-merge-patch+json", "{}").await;
    assert_eq!(answer.status, 415);
    // A Scale of another type, in the words of the handler's Scale codec.
    let answer = json(&engine, "PUT", &format!("{w1}/scale"), &widget("w1", json!({}))).await;
    assert_eq!(
        message(&answer),
        (400, "no kind is registered for the type v1.Scale in scheme \"pkg/apiserver/customresource_handler.go:725\"")
    );
}

#[tokio::test]
async fn write_options_are_validated_before_anything_is_written() {
    let engine = serving_widgets().await;
    let answer = json(&engine, "POST", &format!("{WIDGETS}?fieldValidation=Loose"), &widget("o1", json!({}))).await;
    assert_eq!(answer.status, 422);
    assert_eq!(
        answer.body["details"],
        json!({"group": "meta.k8s.io", "kind": "CreateOptions", "causes": [{"reason": "FieldValueNotSupported",
            "message": "Unsupported value: \"Loose\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"", "field": "fieldValidation"}]})
    );
    create(&engine, "o1", json!({})).await;
    let answer = json(&engine, "PUT", &format!("{WIDGETS}/o1?dryRun=Some"), &widget("o1", json!({}))).await;
    assert_eq!(
        message(&answer),
        (
            422,
            "UpdateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: []string{\"Some\"}: supported values: \"All\""
        )
    );
    let answer =
        send(&engine, "PATCH", &format!("{WIDGETS}/o1?force=true"), "application/merge-patch+json", "{}").await;
    assert_eq!(
        message(&answer),
        (422, "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch")
    );
}

#[tokio::test]
async fn deletes_read_their_options_and_preconditions_as_kube() {
    let engine = serving_widgets().await;
    let d1 = create(&engine, "d1", json!({})).await;
    let path = format!("{WIDGETS}/d1");
    let rv = d1["metadata"]["resourceVersion"].as_str().expect("a resourceVersion");
    let uid = d1["metadata"]["uid"].as_str().expect("a uid");
    let answer = json(&engine, "DELETE", &path, &json!({"preconditions": {"uid": "other"}})).await;
    assert_eq!(
        message(&answer),
        (409, format!("Operation cannot be fulfilled on Widget.rt.example.com \"d1\": the UID in the precondition (other) does not match the UID in record ({uid}). The object might have been deleted and then recreated").as_str())
    );
    assert_eq!(answer.body["details"], json!({"name": "d1", "group": "rt.example.com", "kind": "Widget"}));
    let answer = json(&engine, "DELETE", &path, &json!({"preconditions": {"resourceVersion": "abc"}})).await;
    assert_eq!(
        message(&answer),
        (409, format!("Operation cannot be fulfilled on Widget.rt.example.com \"d1\": the ResourceVersion in the precondition (abc) does not match the ResourceVersion in record ({rv}). The object might have been modified").as_str())
    );
    let answer =
        json(&engine, "DELETE", &path, &json!({"orphanDependents": true, "propagationPolicy": "Background"})).await;
    assert_eq!(
        message(&answer),
        (
            422,
            "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Invalid value: \"Background\": orphanDependents and deletionPropagation cannot be both set"
        )
    );
    let answer = json(&engine, "DELETE", &path, &json!({"apiVersion": "v1", "kind": "Pod"})).await;
    assert_eq!(answer.status, 500);
    assert_eq!(answer.body.get("reason"), None, "{}", answer.body);
    let answer = send(&engine, "DELETE", &format!("{path}?gracePeriodSeconds=soon"), "application/json", "").await;
    assert_eq!(message(&answer), (400, "strconv.ParseInt: parsing \"soon\": invalid syntax"));
    // A body makes the query unread: this is no dry run.
    let answer = send(&engine, "DELETE", &format!("{path}?dryRun=All"), "application/json", "null").await;
    assert_eq!((answer.status, answer.body["status"].as_str()), (200, Some("Success")));
    assert_eq!(send(&engine, "GET", &path, "application/json", "").await.status, 404);
}

#[tokio::test]
async fn a_limited_deletecollection_deletes_one_page_and_says_where_the_rest_is() {
    let engine = serving_widgets().await;
    for name in ["c1", "c2", "c3"] {
        create(&engine, name, json!({})).await;
    }
    let answer = send(&engine, "DELETE", &format!("{WIDGETS}?limit=1"), "application/json", "").await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let names: Vec<&str> =
        answer.body["items"].as_array().expect("items").iter().filter_map(|i| i["metadata"]["name"].as_str()).collect();
    assert_eq!(names, ["c1"]);
    assert_eq!(answer.body["metadata"]["remainingItemCount"], 2);
    assert!(answer.body["metadata"]["continue"].as_str().is_some_and(|c| !c.is_empty()));
    let answer = send(&engine, "DELETE", &format!("{WIDGETS}?labelSelector=none%3Dhere"), "application/json", "").await;
    assert_eq!(answer.body["metadata"]["continue"], "", "an unstructured list always has its continue");
    let left = send(&engine, "GET", WIDGETS, "application/json", "").await;
    assert_eq!(left.body["items"].as_array().map(Vec::len), Some(2));
}

#[tokio::test]
async fn removing_the_last_finalizer_answers_with_the_last_stored_revision() {
    let engine = serving_widgets().await;
    create(&engine, "f1", json!({"finalizers": ["rt.example.com/hold"]})).await;
    let path = format!("{WIDGETS}/f1");
    let marked = send(&engine, "DELETE", &path, "application/json", "").await;
    let rv = marked.body["metadata"]["resourceVersion"].clone();
    let gone =
        send(&engine, "PATCH", &path, "application/merge-patch+json", r#"{"metadata":{"finalizers":null}}"#).await;
    assert_eq!(gone.status, 200, "{}", gone.body);
    assert_eq!(gone.body["metadata"]["resourceVersion"], rv, "as the oracle answers");
    assert_eq!(send(&engine, "GET", &path, "application/json", "").await.status, 404);
}

#[tokio::test]
async fn creates_naming_a_resource_version_and_updates_naming_no_object_are_refused_as_kube_refuses_them() {
    let engine = serving_widgets().await;
    // kube's storage passes these on as plain errors: 500s without a reason.
    let answer = json(&engine, "POST", WIDGETS, &widget("r1", json!({"resourceVersion": "5"}))).await;
    assert_eq!(message(&answer), (500, "resourceVersion should not be set on objects to be created"));
    let answer =
        json(&engine, "POST", &format!("{WIDGETS}?dryRun=All"), &widget("r1", json!({"resourceVersion": "5"}))).await;
    assert_eq!(answer.status, 201, "kube's dry run never reaches the check");
    let created = create(&engine, "r1", json!({})).await;
    let mut nameless = created.clone();
    nameless["metadata"].as_object_mut().expect("metadata").remove("name");
    let answer = json(&engine, "PUT", &format!("{WIDGETS}/r1"), &nameless).await;
    assert_eq!(
        message(&answer),
        (400, "the name of the object (r1 based on URL) was undeterminable: name must be provided")
    );
    let mut bad_rv = created;
    bad_rv["metadata"]["resourceVersion"] = json!("abc");
    let answer = json(&engine, "PUT", &format!("{WIDGETS}/r1"), &bad_rv).await;
    assert_eq!(message(&answer), (500, "strconv.ParseUint: parsing \"abc\": invalid syntax"));
}

/// `/apis/<group>` as kube-apiserver 1.32 answered it (recorded from the oracle): a CRD
/// group's served versions by Kubernetes' priority, the first preferred; a built-in group;
/// a group nobody serves is Go's plain 404.
#[tokio::test]
async fn a_group_answers_its_versions_by_priority_as_kube_apiserver_does() {
    let engine = Engine::open(&crate::support::storage::test_storage()).await.expect("engine");
    let version = |name: &str, storage: bool| json!({"name": name, "served": true, "storage": storage, "schema": {"openAPIV3Schema": {"type": "object"}}});
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.two.example.com"},
        "spec": {"group": "two.example.com", "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [version("v1beta1", false), version("v1", true), version("v2alpha1", false)]}
    });
    assert_eq!(json(&engine, "POST", CRDS, &crd).await.status, 201);
    let mut group = send(&engine, "GET", "/apis/two.example.com", "", "").await;
    for _ in 0..300 {
        if group.status == 200 && group.body["versions"].as_array().is_some_and(|v| v.len() == 3) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        group = send(&engine, "GET", "/apis/two.example.com", "", "").await;
    }
    let gv = |v: &str| json!({"groupVersion": format!("two.example.com/{v}"), "version": v});
    assert_eq!(
        group.body,
        json!({"kind": "APIGroup", "apiVersion": "v1", "name": "two.example.com",
            "versions": [gv("v1"), gv("v1beta1"), gv("v2alpha1")], "preferredVersion": gv("v1")})
    );
    assert_eq!(group.content_type, "application/json");
    let builtin = send(&engine, "GET", "/apis/apiextensions.k8s.io", "", "").await;
    let v1 = json!({"groupVersion": "apiextensions.k8s.io/v1", "version": "v1"});
    assert_eq!(
        builtin.body,
        json!({"kind": "APIGroup", "apiVersion": "v1", "name": "apiextensions.k8s.io",
            "versions": [v1], "preferredVersion": v1})
    );
    let nobody = send(&engine, "GET", "/apis/nope.example.com", "", "").await;
    assert_eq!((nobody.status, nobody.content_type.as_str()), (404, "text/plain; charset=utf-8"));
    assert_eq!(nobody.body, json!("404 page not found\n"));
}

/// A request line Go's server cannot parse (a `%` without two hex digits in the path) is
/// its own plain 400, the connection closed, before kube reads the path; the differential
/// scenario `routed` cannot send one (over HTTP/2 Go resets the stream instead).
#[tokio::test]
async fn a_bad_escape_in_the_path_is_go_servers_400() {
    let engine = serving_widgets().await;
    for path in [format!("{WIDGETS}/w%zz"), format!("{WIDGETS}/w%"), "/api/v1/namespaces/r%f/configmaps".into()] {
        let req = Request::builder().method("GET").uri(path.as_str()).body(Body::empty()).expect("request");
        let res = engine.router().oneshot(req).await.expect("a response");
        assert_eq!(res.status(), 400, "{path}");
        assert_eq!(res.headers().get("Connection").and_then(|v| v.to_str().ok()), Some("close"));
        let bytes = res.into_body().collect().await.expect("body").to_bytes();
        assert_eq!(&bytes[..], b"400 Bad Request");
    }
    // A bad escape in the query is no matter of the path's.
    let answer = send(&engine, "GET", &format!("{WIDGETS}?x=%zz"), "application/json", "").await;
    assert_eq!(answer.status, 200);
}
