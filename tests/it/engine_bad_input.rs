//! Bad input against the engine's HTTP surface, in process: every refusal is a
//! `metav1.Status` with the right code and reason, nothing panics, and nothing is stored.

mod fuzz;
use crate::support;

use axum::body::Body;
use http::{Request, StatusCode};
use http_body_util::BodyExt;
use kubectl_crd_engine::Engine;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tower::ServiceExt;

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

async fn send(engine: &Arc<Engine>, method: &str, uri: &str, content_type: &str, body: Vec<u8>) -> (StatusCode, Value) {
    let req = Request::builder()
        .method(method)
        .uri(uri)
        .header("Content-Type", content_type)
        .header("Accept", "application/json")
        .body(Body::from(body))
        .expect("request");
    let res = engine.router().oneshot(req).await.expect("a response");
    let status = res.status();
    let bytes = res.into_body().collect().await.expect("body").to_bytes();
    let value =
        serde_json::from_slice(&bytes).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into()));
    (status, value)
}

/// The names of every stored CRD.
async fn stored_crds(engine: &Arc<Engine>) -> Vec<String> {
    let (status, list) = send(engine, "GET", CRDS, "application/json", Vec::new()).await;
    assert_eq!(status, StatusCode::OK);
    list["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap_or("").into())
        .collect()
}

fn assert_status(body: &Value, code: u16, reason: &str) {
    assert_eq!(body["kind"], "Status", "{body}");
    assert_eq!(body["status"], "Failure", "{body}");
    assert_eq!(body["code"], code, "{body}");
    assert_eq!(body["reason"], reason, "{body}");
    assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()), "{body}");
}

fn widget_crd() -> Value {
    let ex = support::reference::load("06");
    serde_json::from_slice(&ex.request.body.expect("body")).expect("json")
}

async fn engine() -> Arc<Engine> {
    Engine::open(&crate::support::storage::test_storage()).await.expect("engine")
}

#[tokio::test]
async fn an_oversized_body_is_413_and_nothing_is_stored() {
    let engine = engine().await;
    let mut crd = widget_crd();
    crd["metadata"]["annotations"] = json!({"big": "x".repeat(10 * 1024 * 1024)});
    let (status, body) = send(&engine, "POST", CRDS, "application/json", crd.to_string().into_bytes()).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_status(&body, 413, "RequestEntityTooLarge");
    assert!(stored_crds(&engine).await.is_empty());
}

#[tokio::test]
async fn malformed_and_deeply_nested_bodies_are_400() {
    let engine = engine().await;
    for (what, body) in [
        ("truncated JSON", b"{\"apiVersion\": \"apiextensions.k8s.io/v1\", ".to_vec()),
        ("not JSON at all", b"\x00\x01\x02garbage".to_vec()),
        ("10,000 nested arrays", format!("{}{}", "[".repeat(10_000), "]".repeat(10_000)).into_bytes()),
        ("a JSON string", b"\"a string\"".to_vec()),
    ] {
        let (status, answer) = send(&engine, "POST", CRDS, "application/json", body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{what}: {answer}");
        assert_status(&answer, 400, "BadRequest");
    }
    let (status, answer) = send(&engine, "POST", CRDS, "application/yaml", b"a: [unclosed".to_vec()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    // One line, as kube words it: go-yaml's sentence, the parser's snippet of the body left out.
    let message = answer["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with(
            "the object provided is unrecognized (must be of type CustomResourceDefinition): yaml: line 1: "
        ) && !message.contains('\n'),
        "{message}"
    );
    // Nine levels of nine aliases each: a few hundred bytes that would expand to 387
    // million strings. Refused while parsing, not after filling the memory.
    let mut bomb = String::from("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for (name, previous) in ('b'..='i').zip('a'..) {
        let refs = vec![format!("*{previous}"); 9].join(", ");
        bomb.push_str(&format!("{name}: &{name} [{refs}]\n"));
    }
    let (status, answer) = send(&engine, "POST", CRDS, "application/yaml", bomb.into_bytes()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_status(&answer, 400, "BadRequest");
    assert!(stored_crds(&engine).await.is_empty());
}

#[tokio::test]
async fn a_body_of_another_kind_or_version_is_400() {
    let engine = engine().await;
    let mut wrong_kind = widget_crd();
    wrong_kind["kind"] = json!("Namespace");
    let (status, answer) = send(&engine, "POST", CRDS, "application/json", wrong_kind.to_string().into_bytes()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(
        answer["message"],
        "the kind in the data (Namespace) does not match the expected kind (CustomResourceDefinition)"
    );
    let mut wrong_version = widget_crd();
    wrong_version["apiVersion"] = json!("apiextensions.k8s.io/v1beta1");
    let (status, _) = send(&engine, "POST", CRDS, "application/json", wrong_version.to_string().into_bytes()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(stored_crds(&engine).await.is_empty());
}

#[tokio::test]
async fn a_non_structural_schema_is_422_with_kube_s_causes() {
    let engine = engine().await;
    let mut crd = widget_crd();
    // No type on spec, and a property with neither type nor preserve-unknown-fields.
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"] =
        json!({"properties": {"size": {"minimum": 0}}});
    let (status, answer) = send(&engine, "POST", CRDS, "application/json", crd.to_string().into_bytes()).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{answer}");
    assert_status(&answer, 422, "Invalid");
    let causes: Vec<String> = answer["details"]["causes"]
        .as_array()
        .expect("causes")
        .iter()
        .map(|c| format!("{}: {}", c["field"].as_str().unwrap_or(""), c["message"].as_str().unwrap_or("")))
        .collect();
    assert!(
        causes.contains(
            &"spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields"
                .to_string()
        ),
        "{causes:?}"
    );
    assert!(stored_crds(&engine).await.is_empty());
}

#[tokio::test]
async fn unknown_methods_paths_and_subresources_answer_without_touching_data() {
    let engine = engine().await;
    let (status, _) = send(&engine, "POST", CRDS, "application/json", widget_crd().to_string().into_bytes()).await;
    assert_eq!(status, StatusCode::CREATED);
    let one = format!("{CRDS}/widgets.stable.example.com");
    let (status, answer) = send(&engine, "POST", &one, "application/json", b"{}".to_vec()).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{answer}");
    assert_status(&answer, 405, "MethodNotAllowed");
    let (status, _) = send(&engine, "DELETE", &format!("{one}/status"), "application/json", Vec::new()).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "DELETE on /status must not delete the object");
    let (status, _) = send(&engine, "GET", &format!("{one}/nonsense"), "application/json", Vec::new()).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, answer) =
        send(&engine, "PATCH", &one, "application/merge-patch+json", b"{\"metadata\": [1, 2".to_vec()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    // `/version` takes GET only, as kube's route does; anything else is a 405 Status.
    let (status, answer) = send(&engine, "POST", "/version", "application/json", b"{}".to_vec()).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{answer}");
    assert_status(&answer, 405, "MethodNotAllowed");
    // kube's health checks and OpenAPI handlers look at no method: they answer as to a GET.
    let (_, index) = send(&engine, "GET", "/openapi/v3", "application/json", Vec::new()).await;
    let listed = index["paths"].as_object().and_then(|p| p.keys().next().cloned()).expect("a listed document");
    let document = format!("/openapi/v3/{listed}");
    for path in ["/healthz", "/readyz", "/openapi/v2", "/openapi/v3", &document] {
        let (status, by_get) = send(&engine, "GET", path, "application/json", Vec::new()).await;
        assert_eq!(status, StatusCode::OK, "GET {path}");
        for method in ["POST", "PUT", "DELETE", "OPTIONS"] {
            let (status, answer) = send(&engine, method, path, "application/json", b"{}".to_vec()).await;
            assert_eq!(status, StatusCode::OK, "{method} {path}: {answer}");
            assert_eq!(answer, by_get, "{method} {path}");
        }
    }
    assert_eq!(stored_crds(&engine).await, ["widgets.stable.example.com"]);
}

#[tokio::test]
async fn malformed_numbers_in_the_query_are_400_in_go_s_words() {
    let engine = engine().await;
    for (query, message) in [
        ("limit=abc", r#"strconv.ParseInt: parsing "abc": invalid syntax"#),
        ("limit=99999999999999999999", r#"strconv.ParseInt: parsing "99999999999999999999": value out of range"#),
        ("watch=1&timeoutSeconds=1.5", r#"strconv.ParseInt: parsing "1.5": invalid syntax"#),
    ] {
        let (status, answer) = send(&engine, "GET", &format!("{CRDS}?{query}"), "application/json", Vec::new()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}: {answer}");
        assert_status(&answer, 400, "BadRequest");
        assert_eq!(answer["message"], message, "{query}");
    }
}

const WIDGETS: &str = "/apis/stable.example.com/v1/namespaces/default/widgets";
const ALL_WIDGETS: &str = "/apis/stable.example.com/v1/widgets";

/// An engine serving the widgets of reference 06.
async fn serving_widgets() -> Arc<Engine> {
    let engine = engine().await;
    let (status, _) = send(&engine, "POST", CRDS, "application/json", widget_crd().to_string().into_bytes()).await;
    assert_eq!(status, StatusCode::CREATED);
    for _ in 0..300 {
        if send(&engine, "GET", WIDGETS, "application/json", Vec::new()).await.0 == StatusCode::OK {
            return engine;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("widgets never served");
}

async fn stored_widgets(engine: &Arc<Engine>) -> Vec<String> {
    let (_, list) = send(engine, "GET", ALL_WIDGETS, "application/json", Vec::new()).await;
    let items = list["items"].as_array().expect("items");
    items.iter().map(|i| i["metadata"]["name"].as_str().unwrap_or("").to_string()).collect()
}

#[tokio::test]
async fn a_custom_resource_body_names_its_kind_and_version() {
    let engine = serving_widgets().await;
    let unrecognized = |why: &str, glimpse: &str| {
        format!("the object provided is unrecognized (must be of type Widget): {why} ({glimpse})")
    };
    // The oracle's answers, body by body.
    for (body, code, message) in [
        (
            r#"{"metadata":{"name":"t1"},"spec":{}}"#,
            400,
            unrecognized(
                r#"Object 'Kind' is missing in '{"metadata":{"name":"t1"},"spec":{}}'"#,
                r#"{"metadata":{"name":"t1"},"spe ..."#,
            ),
        ),
        (
            r#"{"apiVersion":"stable.example.com/v1","metadata":{"name":"t3"}}"#,
            400,
            unrecognized(
                r#"Object 'Kind' is missing in '{"apiVersion":"stable.example.com/v1","metadata":{"name":"t3"}}'"#,
                r#"{"apiVersion":"stable.example. ..."#,
            ),
        ),
        (
            r#"{"kind":"Widget","metadata":{"name":"t2"}}"#,
            400,
            "the API version in the data () does not match the expected API version (stable.example.com/v1)".into(),
        ),
        (
            r#"{"apiVersion":"stable.example.com/v2","kind":"Widget","metadata":{"name":"t5"}}"#,
            400,
            "the API version in the data (stable.example.com/v2) does not match the expected API version (stable.example.com/v1)".into(),
        ),
        (
            r#"{"apiVersion":"other.example.com/v1","kind":"Widget","metadata":{"name":"t6"}}"#,
            400,
            "the API version in the data (other.example.com/v1) does not match the expected API version (stable.example.com/v1)".into(),
        ),
        (
            r#"{"apiVersion":"stable.example.com/v1","kind":"Gadget","metadata":{"name":"t4"},"spec":{"color":"purple"}}"#,
            422,
            r#"Gadget.stable.example.com "t4" is invalid: kind: Invalid value: "Gadget": must be Widget"#.into(),
        ),
    ] {
        let (status, answer) = send(&engine, "POST", WIDGETS, "application/json", body.as_bytes().to_vec()).await;
        assert_eq!(status.as_u16(), code, "{body}: {answer}");
        assert_eq!(answer["message"], message, "{body}");
    }
    let wrong_kind = r#"{"apiVersion":"stable.example.com/v1","kind":"Gadget","metadata":{"name":"t4"}}"#;
    let (_, answer) = send(&engine, "POST", WIDGETS, "application/json", wrong_kind.as_bytes().to_vec()).await;
    assert_eq!(
        answer["details"],
        json!({"name": "t4", "group": "stable.example.com", "kind": "Gadget", "causes": [
            {"reason": "FieldValueInvalid", "message": "Invalid value: \"Gadget\": must be Widget", "field": "kind"}]})
    );
    // A PUT is decoded alike.
    let (status, answer) = send(
        &engine,
        "PUT",
        &format!("{WIDGETS}/t1"),
        "application/json",
        br#"{"apiVersion":"stable.example.com/v1","metadata":{"name":"t1"}}"#.to_vec(),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert!(answer["message"].as_str().unwrap_or("").contains("Object 'Kind' is missing in"), "{answer}");
    assert!(stored_widgets(&engine).await.is_empty());
}

#[tokio::test]
async fn writes_across_namespaces_are_not_routes() {
    let engine = serving_widgets().await;
    let body =
        br#"{"apiVersion":"stable.example.com/v1","kind":"Widget","metadata":{"name":"w1","namespace":"default"}}"#;
    let (status, _) = send(&engine, "POST", WIDGETS, "application/json", body.to_vec()).await;
    assert_eq!(status, StatusCode::CREATED);
    for (method, content_type) in [
        ("POST", "application/json"),
        ("DELETE", "application/json"),
        ("PUT", "application/json"),
        ("PATCH", "application/merge-patch+json"),
        ("PATCH", "application/apply-patch+yaml"),
    ] {
        let req = Request::builder()
            .method(method)
            .uri(format!("{ALL_WIDGETS}?fieldManager=m"))
            .header("Content-Type", content_type)
            .body(Body::from(body.to_vec()))
            .expect("request");
        let res = engine.router().oneshot(req).await.expect("a response");
        assert_eq!(res.status(), StatusCode::NOT_FOUND, "{method}");
        let content_type = res.headers().get("Content-Type").and_then(|v| v.to_str().ok()).map(String::from);
        assert_eq!(content_type.as_deref(), Some("text/plain; charset=utf-8"), "{method}");
        let bytes = res.into_body().collect().await.expect("body").to_bytes();
        assert_eq!(&bytes[..], b"404 page not found\n", "{method}");
    }
    assert_eq!(stored_widgets(&engine).await, ["w1"], "nothing created or deleted");
    // A built-in kind's route across namespaces takes GET only.
    let (status, answer) = send(&engine, "DELETE", "/api/v1/configmaps", "application/json", Vec::new()).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(answer["message"], "the server does not allow this method on the requested resource");
}

#[tokio::test]
async fn an_apply_without_a_field_manager_is_422_on_its_options() {
    let engine = serving_widgets().await;
    let body = br#"{"apiVersion":"stable.example.com/v1","kind":"Widget","metadata":{"name":"w1"}}"#.to_vec();
    // Whatever the User-Agent says, in a namespace that does not even exist.
    for path in [format!("{WIDGETS}/w1"), "/apis/stable.example.com/v1/namespaces/nope/widgets/w1".into()] {
        let req = Request::builder()
            .method("PATCH")
            .uri(&path)
            .header("Content-Type", "application/apply-patch+yaml")
            .header("User-Agent", "kubectl/v1.32.0 (linux/amd64) kubernetes/abc")
            .body(Body::from(body.clone()))
            .expect("request");
        let res = engine.router().oneshot(req).await.expect("a response");
        assert_eq!(res.status(), StatusCode::UNPROCESSABLE_ENTITY, "{path}");
        let bytes = res.into_body().collect().await.expect("body").to_bytes();
        let answer: Value = serde_json::from_slice(&bytes).expect("a Status");
        assert_eq!(
            answer,
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
                "reason": "Invalid",
                "details": {"group": "meta.k8s.io", "kind": "PatchOptions", "causes": [
                    {"reason": "FieldValueRequired", "message": "Required value: is required for apply patch", "field": "fieldManager"}]},
                "code": 422})
        );
    }
    assert!(stored_widgets(&engine).await.is_empty());
}

/// [`send`], with the `Warning` headers of the answer.
async fn send_warned(
    engine: &Arc<Engine>,
    method: &str,
    uri: &str,
    content_type: &str,
    body: &str,
) -> (u16, Value, Vec<String>) {
    let req = Request::builder()
        .method(method)
        .uri(uri)
        .header("Content-Type", content_type)
        .header("Accept", "application/json")
        .body(Body::from(body.to_string()))
        .expect("request");
    let res = engine.router().oneshot(req).await.expect("a response");
    let status = res.status().as_u16();
    let warnings = res.headers().get_all("Warning").iter().map(|v| v.to_str().unwrap_or("").to_string()).collect();
    let bytes = res.into_body().collect().await.expect("body").to_bytes();
    (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null), warnings)
}

const MERGE: &str = "application/merge-patch+json";

#[tokio::test]
async fn create_bodies_are_decoded_in_go_s_words() {
    let engine = serving_widgets().await;
    let widget = |name: &str, spec: &str| {
        format!(
            r#"{{"apiVersion":"stable.example.com/v1","kind":"Widget","metadata":{{"name":"{name}"}},"spec":{spec}}}"#
        )
    };
    // The oracle's answers, body by body.
    let (code, answer, _) = send_warned(&engine, "POST", WIDGETS, "text/plain", &widget("plain", "{}")).await;
    assert_eq!(code, 415, "{answer}");
    assert_eq!(
        answer["message"],
        "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf"
    );
    let (code, answer, _) = send_warned(&engine, "POST", WIDGETS, "application/json", "").await;
    assert_eq!(code, 400);
    assert_eq!(
        answer["message"],
        "the object provided is unrecognized (must be of type Widget): couldn't get version/kind; json parse error: unexpected end of JSON input (<empty>)"
    );
    let duplicated = widget("dup", r#"{"replicas":1,"replicas":2}"#);
    let (code, answer, warnings) = send_warned(&engine, "POST", WIDGETS, "application/json", &duplicated).await;
    assert_eq!((code, &answer["spec"]["replicas"]), (201, &json!(2)), "{answer}");
    assert_eq!(warnings, [r#"299 - "duplicate field \"spec.replicas\"""#]);
    let strict = format!("{WIDGETS}?fieldValidation=Strict");
    let body = widget("dupstrict", r#"{"replicas":1,"replicas":2,"extra":1}"#);
    let (code, answer, _) = send_warned(&engine, "POST", &strict, "application/json", &body).await;
    assert_eq!(code, 400);
    assert_eq!(
        answer["message"],
        r#"Widget in version "v1" cannot be handled as a Widget: strict decoding error: duplicate field "spec.replicas", unknown field "spec.extra""#
    );
    // Beyond a float64: Go's decoder names the number, where serde refuses the body whole.
    let huge = widget("huge", r#"{"note":"1e400","sizes":[1,-1e400]}"#);
    let (code, answer, _) = send_warned(&engine, "POST", WIDGETS, "application/json", &huge).await;
    assert_eq!((code, &answer["reason"]), (400, &json!("BadRequest")), "{answer}");
    assert_eq!(
        answer["message"],
        r#"Widget in version "v1" cannot be handled as a Widget: json: cannot unmarshal number -1e400 into Go value of type float64"#
    );
    // A whole float is validated as the float64 Go decodes (the scale path wants an int64)
    // and stored as the integer Go writes.
    let (code, answer, _) =
        send_warned(&engine, "POST", WIDGETS, "application/json", &widget("whole", r#"{"size":2.0}"#)).await;
    assert_eq!(code, 201);
    assert_eq!(answer["spec"]["size"], json!(2), "a whole float is the integer Go writes back");
    let (code, answer, _) =
        send_warned(&engine, "POST", WIDGETS, "application/json", &widget("float", r#"{"replicas":2.0}"#)).await;
    assert_eq!(code, 422);
    assert_eq!(
        answer["details"]["causes"][0]["message"],
        "Invalid value: 0: .spec.replicas accessor error: 2 is of the type float64, expected int64"
    );
    // The server's own metadata is wiped before the field manager sees the body.
    let timestamps = r#"{"apiVersion":"stable.example.com/v1","kind":"Widget","metadata":{"name":"stamped","deletionTimestamp":"2020-01-01T00:00:00Z"}}"#;
    let (code, answer, _) = send_warned(&engine, "POST", WIDGETS, "application/json", timestamps).await;
    assert_eq!(code, 201);
    assert!(answer["metadata"].get("managedFields").is_none(), "{answer}");
    let with_rv =
        r#"{"apiVersion":"stable.example.com/v1","kind":"Widget","metadata":{"name":"rv","resourceVersion":"5"}}"#;
    let (code, answer, _) = send_warned(&engine, "POST", WIDGETS, "application/json", with_rv).await;
    assert_eq!(code, 500, "kube's storage refuses it with a plain error");
    assert!(answer.get("reason").is_none(), "{answer}");
}

#[tokio::test]
async fn merge_patches_are_decoded_and_checked_as_kube_does() {
    let engine = serving_widgets().await;
    let w1 = r#"{"apiVersion":"stable.example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"replicas":1}}"#;
    assert_eq!(send_warned(&engine, "POST", WIDGETS, "application/json", w1).await.0, 201);
    let uri = format!("{WIDGETS}/w1");
    let refused = |body: &'static str| {
        let (engine, uri) = (engine.clone(), uri.clone());
        async move {
            let (code, answer, _) = send_warned(&engine, "PATCH", &uri, MERGE, body).await;
            (code, answer["message"].as_str().unwrap_or_default().to_string())
        }
    };
    assert_eq!(
        refused("[1]").await,
        (
            400,
            "error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}".into()
        )
    );
    assert_eq!(refused(r#"{"spec": "#).await, (400, "error decoding patch: unexpected end of JSON input".into()));
    assert_eq!(
        refused(r#"{"metadata":{"namespace":"other","name":"x"}}"#).await,
        (400, "the namespace of the provided object does not match the namespace sent on the request".into())
    );
    assert_eq!(
        refused(r#"{"metadata":{"uid":"another"}}"#).await,
        (
            422,
            r#"Widget.stable.example.com "w1" is invalid: metadata.uid: Invalid value: "another": field is immutable"#
                .into()
        )
    );
    let (code, answer, warnings) =
        send_warned(&engine, "PATCH", &uri, MERGE, r#"{"spec":{"replicas":6,"replicas":7}}"#).await;
    assert_eq!((code, &answer["spec"]["replicas"]), (200, &json!(7)));
    assert_eq!(warnings, [r#"299 - "duplicate field \"spec.replicas\"""#]);
    // Strict: the patched object is quoted as Go encodes it.
    let (code, answer, _) =
        send_warned(&engine, "PATCH", &format!("{uri}?fieldValidation=Strict"), MERGE, r#"{"spec":{"extra":1}}"#).await;
    assert_eq!(code, 422);
    let message = answer["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with(
            r#" "" is invalid: patch: Invalid value: "{\"apiVersion\":\"stable.example.com/v1\",\"kind\":\"Widget\","#
        ),
        "{message}"
    );
    assert!(
        message
            .ends_with(r#"\"spec\":{\"extra\":1,\"replicas\":7}}": strict decoding error: unknown field "spec.extra""#),
        "{message}"
    );
    assert_eq!(answer["details"], json!({"causes": answer["details"]["causes"].clone()}), "no kind, group nor name");
    // A JSON patch that leaves no kind, or no apiVersion.
    let json_patch = "application/json-patch+json";
    let (code, answer, _) =
        send_warned(&engine, "PATCH", &uri, json_patch, r#"[{"op":"replace","path":"","value":{}}]"#).await;
    assert_eq!(
        (code, answer["message"].as_str()),
        (422, Some(r#" "" is invalid: patch: Invalid value: "{}": Object 'Kind' is missing in '{}'"#))
    );
    let (code, answer, _) =
        send_warned(&engine, "PATCH", &uri, json_patch, r#"[{"op":"remove","path":"/apiVersion"}]"#).await;
    assert_eq!((code, answer["reason"].as_str()), (500, Some("InternalError")));
}

#[tokio::test]
async fn a_status_write_is_validated_against_the_status_schema() {
    let engine = serving_widgets().await;
    let w1 = r#"{"apiVersion":"stable.example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"replicas":1}}"#;
    assert_eq!(send_warned(&engine, "POST", WIDGETS, "application/json", w1).await.0, 201);
    let (code, answer, _) =
        send_warned(&engine, "PATCH", &format!("{WIDGETS}/w1/status"), MERGE, r#"{"status":{"selector":5}}"#).await;
    assert_eq!(code, 422, "{answer}");
    let message = answer["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(r#"status.selector: Invalid value: "integer": selector in body must be of type string"#),
        "{message}"
    );
    // /scale writes are validated as the custom resource they become.
    let (code, answer, _) =
        send_warned(&engine, "PATCH", &format!("{WIDGETS}/w1/scale"), MERGE, r#"{"spec":{"replicas":-4}}"#).await;
    assert_eq!(code, 422);
    let message = answer["message"].as_str().unwrap_or_default();
    // kube's order of the two is not stable; both are there, on the Widget.
    assert!(message.starts_with(r#"Widget.stable.example.com "w1" is invalid: ["#), "{message}");
    assert!(message.contains(".spec.replicas: Invalid value: -4: should be a non-negative integer"), "{message}");
    assert!(
        message
            .contains("spec.replicas: Invalid value: -4: spec.replicas in body should be greater than or equal to 0")
    );
    let apply = "application/apply-patch+yaml";
    let widget_config = r#"{"apiVersion":"stable.example.com/v1","kind":"Widget","metadata":{"name":"w1"}}"#;
    let (code, answer, _) =
        send_warned(&engine, "PATCH", &format!("{WIDGETS}/w1/scale?fieldManager=m"), apply, widget_config).await;
    assert_eq!(
        (code, answer["message"].as_str()),
        (400, Some("invalid object type: stable.example.com/v1, Kind=Widget"))
    );
    let (code, _, _) =
        send_warned(&engine, "PATCH", &format!("{WIDGETS}/nope/scale?fieldManager=m"), apply, widget_config).await;
    assert_eq!(code, 404);
}

/// The resident memory of this process, in bytes.
fn resident_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap_or("VmRSS: 0 kB");
    line.split_whitespace().nth(1).and_then(|kb| kb.parse::<u64>().ok()).unwrap_or(0) * 1024
}

/// One request under a time bound; every answer is JSON, and a refusal is a Status with
/// its code.
async fn bounded(engine: &Arc<Engine>, method: &str, uri: &str, content_type: &str, body: String) -> (u16, Duration) {
    const BOUND: Duration = Duration::from_secs(10);
    let started = std::time::Instant::now();
    let what = format!("{method} {uri} ({} bytes)", body.len());
    let (status, answer) = tokio::time::timeout(BOUND, send(engine, method, uri, content_type, body.into_bytes()))
        .await
        .unwrap_or_else(|_| panic!("{what} was not answered within {BOUND:?}"));
    if status.as_u16() >= 400 {
        assert_eq!(answer["kind"], "Status", "{what}: {answer}");
        assert_eq!(answer["code"], status.as_u16(), "{what}: {answer}");
    } else {
        assert!(answer.is_object(), "{what}: {answer}");
    }
    (status.as_u16(), started.elapsed())
}

/// Random CRDs with generated CEL rules (ordinary ones, and 20,000-term sums, 1,000-deep
/// nesting, nested comprehensions over unbounded lists), random objects and random
/// patches (self-copying JSON patches, deep merge patches): every request is answered
/// within a bound, refusals are Statuses, and memory stays bounded.
/// `FUZZ_SEED=n` replays another sequence.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_crds_rules_and_patches_are_answered_within_bounds() {
    if !support::alone::in_own_process("engine_bad_input::random_crds_rules_and_patches_are_answered_within_bounds") {
        return;
    }
    let seed = std::env::var("FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(1_126);
    let mut fuzz = fuzz::Fuzz::new(seed);
    let engine = engine().await;
    let before = resident_bytes();
    let mut slowest = Duration::ZERO;
    let mut answers = std::collections::BTreeMap::<u16, usize>::new();
    let mut note = |(status, took): (u16, Duration)| {
        slowest = slowest.max(took);
        *answers.entry(status).or_default() += 1;
        status
    };
    for n in 0..24 {
        let crd = fuzz.crd(n);
        let group = crd["spec"]["group"].as_str().expect("group").to_string();
        if note(bounded(&engine, "POST", CRDS, "application/json", crd.to_string()).await) != 201 {
            continue;
        }
        let things = format!("/apis/{group}/v1/namespaces/default/things");
        for _ in 0..300 {
            if send(&engine, "GET", &things, "application/json", Vec::new()).await.0 == StatusCode::OK {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        for i in 0..4 {
            let obj = fuzz.object(&format!("t{i}"), &group, 300);
            if note(bounded(&engine, "POST", &things, "application/json", obj.to_string()).await) != 201 {
                continue;
            }
            for _ in 0..3 {
                let (content_type, patch) = fuzz.patch();
                note(bounded(&engine, "PATCH", &format!("{things}/t{i}"), content_type, patch).await);
            }
        }
    }
    let grown = resident_bytes().saturating_sub(before);
    eprintln!("seed {seed}: answers {answers:?}, slowest {slowest:?}, resident memory grew {} MiB", grown >> 20);
    assert!(grown < 512 << 20, "resident memory grew by {} MiB", grown >> 20);
}
