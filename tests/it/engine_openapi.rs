//! `/openapi/v2` and `/openapi/v3` in process, over the engine's router: the documents
//! kube-apiserver 1.32 served for the recorded Widget CRD (byte for byte for v3, as the
//! recorded content hash proves), their caching headers, and their rebuilding when CRDs
//! come and go.

use crate::support;
use crate::support::crd::CrdBuilder;

use axum::body::Body;
use http::{HeaderMap, Request, StatusCode};
use kubectl_crd_engine::Engine;
use serde_json::{Value, json};
use sha2::Digest;
use std::sync::Arc;
use std::time::Duration;
use support::compare::{COMPARED_HEADERS, assert_headers_match, assert_json_matches, headers_from_map};
use support::reference::{load, reference_dir};
use support::replay::openapi_v2_trimmed;
use tower::ServiceExt;

const WIDGETS: &str = "apis/stable.example.com/v1";
const PROTOBUF_V2: &str = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";

struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: Vec<u8>,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("JSON body ({e}): {}", self.text()))
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

async fn send(engine: &Arc<Engine>, method: &str, path: &str, headers: &[(&str, &str)], body: Vec<u8>) -> Answer {
    let mut req = Request::builder().method(method).uri(path);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let res = engine.router().oneshot(req.body(Body::from(body)).expect("request")).await.expect("response");
    let status = res.status();
    let headers = res.headers().clone();
    let body = axum::body::to_bytes(res.into_body(), usize::MAX).await.expect("body").to_vec();
    Answer { status, headers, body }
}

async fn get(engine: &Arc<Engine>, path: &str, headers: &[(&str, &str)]) -> Answer {
    send(engine, "GET", path, headers, Vec::new()).await
}

/// POSTs a recorded request body (a CRD) as the recording did.
async fn create_recorded(engine: &Arc<Engine>, prefix: &str) {
    let ex = load(prefix);
    let body = ex.request.body.clone().expect("a body");
    let answer = send(engine, "POST", ex.request.path(), &[("content-type", "application/json")], body).await;
    assert_eq!(answer.status, StatusCode::CREATED, "{}", answer.text());
}

/// The `/openapi/v3` index once `done` holds for it.
async fn index_when(engine: &Arc<Engine>, done: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..300 {
        let index = get(engine, "/openapi/v3", &[]).await.json();
        if done(&index) {
            return index;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the /openapi/v3 index never reached the expected state");
}

fn url_of(index: &Value, gv: &str) -> Option<String> {
    index["paths"][gv]["serverRelativeURL"].as_str().map(String::from)
}

async fn engine_with_widgets() -> Arc<Engine> {
    let engine = Engine::open(&crate::support::storage::test_storage()).await.expect("engine");
    create_recorded(&engine, "06").await;
    index_when(&engine, |i| url_of(i, WIDGETS).is_some()).await;
    engine
}

#[tokio::test]
async fn the_widget_document_is_the_one_kube_apiserver_served() {
    let engine = engine_with_widgets().await;
    let index = get(&engine, "/openapi/v3", &[]).await.json();
    // Reference 59: the same content hash, so the same bytes.
    let recorded = load("59").response.body.json().clone();
    assert_eq!(url_of(&index, WIDGETS), url_of(&recorded, WIDGETS));
    // Everything listed is listed by kube-apiserver too (which has many more built-ins);
    // like kube, no document for the CRD's group itself.
    for gv in index["paths"].as_object().expect("paths").keys() {
        assert!(recorded["paths"].get(gv).is_some(), "{gv} is not in reference 59");
    }
    assert!(url_of(&index, "apis/stable.example.com").is_none());

    let url = url_of(&index, WIDGETS).expect("listed");
    let answer = get(&engine, &url, &[("accept", "application/json")]).await;
    assert_eq!(answer.status, StatusCode::OK);
    let full = std::fs::read(reference_dir().join("60-openapi-v3-stable-v1.full.json")).expect("companion file");
    let expected: Value = serde_json::from_slice(&full).expect("json");
    assert_json_matches(&expected, &answer.json(), "/openapi/v3/apis/stable.example.com/v1 (reference 60)");

    let reference = load("60");
    assert_headers_match(
        &reference.response.headers,
        &headers_from_map(&answer.headers),
        COMPARED_HEADERS,
        "reference 60",
    );
    let hash = url.split("hash=").nth(1).expect("a hash");
    assert_eq!(answer.header("etag"), Some(format!("\"{hash}\"").as_str()));
    assert!(answer.header("expires").is_some_and(|e| e.ends_with(" UTC")), "{:?}", answer.header("expires"));
    assert!(answer.header("last-modified").is_some_and(|e| e.ends_with(" GMT")));
}

#[tokio::test]
async fn the_index_is_served_as_kube_serves_it() {
    let engine = Engine::open(&crate::support::storage::test_storage()).await.expect("engine");
    let answer = get(&engine, "/openapi/v3", &[("accept", "application/json")]).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_headers_match(
        &load("59").response.headers,
        &headers_from_map(&answer.headers),
        COMPARED_HEADERS,
        "reference 59",
    );
    let index = answer.json();
    let listed: Vec<&String> = index["paths"].as_object().expect("paths").keys().collect();
    // The built-in kinds' group-versions and kube's discovery documents, no CRD's yet.
    for gv in ["api", "api/v1", "apis", "apis/apiextensions.k8s.io", "apis/apiextensions.k8s.io/v1", "version"] {
        assert!(listed.iter().any(|l| *l == gv), "{gv} in {listed:?}");
    }
    assert!(!listed.iter().any(|l| l.starts_with("apis/stable.example.com")));
    for (gv, entry) in index["paths"].as_object().expect("paths") {
        let url = entry["serverRelativeURL"].as_str().expect("url");
        assert!(url.starts_with(&format!("/openapi/v3/{gv}?hash=")), "{url}");
        let doc = get(&engine, url, &[]).await;
        assert_eq!(doc.status, StatusCode::OK, "{gv}");
        assert_eq!(doc.json()["openapi"], "3.0.0");
    }
}

#[tokio::test]
async fn swagger_2_holds_the_recorded_widget_paths_parameters_and_definitions() {
    let engine = engine_with_widgets().await;
    let answer = get(&engine, "/openapi/v2", &[("accept", "application/json")]).await;
    assert_eq!(answer.status, StatusCode::OK);
    let reference = load("58");
    assert_headers_match(
        &reference.response.headers,
        &headers_from_map(&answer.headers),
        COMPARED_HEADERS,
        "reference 58",
    );
    let doc = answer.json();
    let (shown, companion) = openapi_v2_trimmed(&doc, "/apis/stable.example.com/", "com.example.stable.");
    let subset = std::fs::read(reference_dir().join("58-openapi-v2-widget-only.subset.json")).expect("companion");
    let expected: Value = serde_json::from_slice(&subset).expect("json");
    assert_json_matches(&expected, &companion, "/openapi/v2 widget subset (reference 58)");
    let recorded = reference.response.body.json();
    for key in ["swagger", "info", "securityDefinitions", "security", "paths"] {
        assert_json_matches(&recorded[key], &shown[key], &format!("/openapi/v2 {key} (reference 58)"));
    }
    // Every reference resolves.
    let text = answer.text();
    for (prefix, section) in [("#/definitions/", "definitions"), ("#/parameters/", "parameters")] {
        for piece in text.split(&format!("\"$ref\":\"{prefix}")).skip(1) {
            let name = piece.split('"').next().expect("name");
            assert!(doc[section].get(name).is_some(), "{prefix}{name} is not defined");
        }
    }
}

#[tokio::test]
async fn documents_are_rebuilt_when_crds_come_and_go() {
    let engine = Engine::open(&crate::support::storage::test_storage()).await.expect("engine");
    let before = get(&engine, "/openapi/v2", &[]).await;
    assert!(!before.text().contains("com.example.stable.v1.Widget"));
    let etag_before = before.header("etag").expect("etag").to_string();
    // Unchanged state: the cached document, same validator, 304 for a client that has it.
    assert_eq!(get(&engine, "/openapi/v2", &[]).await.header("etag"), Some(etag_before.as_str()));
    let revalidated = get(&engine, "/openapi/v2", &[("if-none-match", &etag_before)]).await;
    assert_eq!(revalidated.status, StatusCode::NOT_MODIFIED);
    assert!(revalidated.body.is_empty());

    create_recorded(&engine, "06").await;
    let index = index_when(&engine, |i| url_of(i, WIDGETS).is_some()).await;
    let after = get(&engine, "/openapi/v2", &[]).await;
    assert!(after.text().contains("\"com.example.stable.v1.Widget\""));
    assert_ne!(after.header("etag"), Some(etag_before.as_str()));
    assert_eq!(get(&engine, "/openapi/v2", &[("if-none-match", &etag_before)]).await.status, StatusCode::OK);
    let first_url = url_of(&index, WIDGETS).expect("listed");

    // A schema change alone (same names, same kinds) makes a new document.
    let patch = br#"[{"op": "add", "path": "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/label", "value": {"type": "string"}}]"#;
    let crd = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.stable.example.com";
    let patched = send(&engine, "PATCH", crd, &[("content-type", "application/json-patch+json")], patch.to_vec()).await;
    assert_eq!(patched.status, StatusCode::OK, "{}", patched.text());
    let index = index_when(&engine, |i| url_of(i, WIDGETS).is_some_and(|u| u != first_url)).await;
    let old_url = url_of(&index, WIDGETS).expect("listed");
    let doc = get(&engine, &old_url, &[]).await.json();
    let spec = &doc["components"]["schemas"]["com.example.stable.v1.Widget"]["properties"]["spec"];
    assert_eq!(spec["properties"]["label"]["type"], "string");
    // The old URL now redirects to the new one.
    let moved = get(&engine, &first_url, &[]).await;
    assert_eq!(moved.status, StatusCode::MOVED_PERMANENTLY);
    assert_eq!(moved.header("location"), Some(old_url.as_str()));

    let gone = send(
        &engine,
        "DELETE",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.stable.example.com",
        &[],
        Vec::new(),
    )
    .await;
    assert_eq!(gone.status, StatusCode::OK, "{}", gone.text());
    index_when(&engine, |i| url_of(i, WIDGETS).is_none()).await;
    assert_eq!(get(&engine, &old_url, &[]).await.status, StatusCode::NOT_FOUND);
    assert!(!get(&engine, "/openapi/v2", &[]).await.text().contains("com.example.stable.v1.Widget"));
}

#[tokio::test]
async fn a_stale_hash_redirects_and_only_a_hashed_url_is_immutable() {
    let engine = engine_with_widgets().await;
    let url = url_of(&get(&engine, "/openapi/v3", &[]).await.json(), WIDGETS).expect("listed");

    let stale = get(&engine, "/openapi/v3/apis/stable.example.com/v1?hash=0123", &[]).await;
    assert_eq!(stale.status, StatusCode::MOVED_PERMANENTLY);
    assert_eq!(stale.header("location"), Some(url.as_str()));

    let unhashed = get(&engine, "/openapi/v3/apis/stable.example.com/v1", &[]).await;
    assert_eq!(unhashed.status, StatusCode::OK);
    assert_eq!(unhashed.header("cache-control"), Some("no-cache, private"));
    assert_eq!(unhashed.header("expires"), None);
    let hashed = get(&engine, &url, &[]).await;
    assert_eq!(hashed.header("cache-control"), Some("public, immutable"));
    assert_eq!(hashed.body, unhashed.body);

    let etag = hashed.header("etag").expect("etag").to_string();
    assert_eq!(get(&engine, &url, &[("if-none-match", &etag)]).await.status, StatusCode::NOT_MODIFIED);
    assert_eq!(get(&engine, "/openapi/v3/apis/nope.example.com/v1", &[]).await.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn content_negotiation_gives_json_protobuf_or_406() {
    let engine = engine_with_widgets().await;
    let proto = get(&engine, "/openapi/v2", &[("accept", PROTOBUF_V2)]).await;
    assert_eq!(proto.status, StatusCode::OK);
    assert_eq!(proto.header("content-type"), Some("application/com.github.proto-openapi.spec.v2.v1.0+protobuf"));
    // gnostic's Document starts with field 1, `swagger: "2.0"`.
    assert!(proto.body.starts_with(&[0x0a, 3, b'2', b'.', b'0']));
    assert!(proto.body.windows(b"com.example.stable.v1.Widget".len()).any(|w| w == b"com.example.stable.v1.Widget"));
    let json = get(&engine, "/openapi/v2", &[]).await;
    assert_eq!(proto.header("etag"), json.header("etag"));

    assert_eq!(get(&engine, "/openapi/v2", &[("accept", "text/html")]).await.status, StatusCode::NOT_ACCEPTABLE);
    let v3_proto = "application/com.github.proto-openapi.spec.v3@v1.0+protobuf";
    let url = "/openapi/v3/apis/stable.example.com/v1";
    assert_eq!(get(&engine, url, &[("accept", v3_proto)]).await.status, StatusCode::NOT_ACCEPTABLE);
    assert_eq!(get(&engine, url, &[("accept", "*/*")]).await.status, StatusCode::OK);
}

/// kube-openapi puts a gzip handler in front of `/openapi/v2` only. Observed on
/// kube-apiserver 1.32 (2026-11-27): with `Accept-Encoding: gzip` (any case, any q above 0,
/// among other codings) `/openapi/v2`, JSON and protobuf alike, comes with
/// `Content-Encoding: gzip`, no `Content-Length` and the same ETag and `Vary`; without it,
/// or with `gzip;q=0` or `*`, as plain text with its length; a 304 and a 406 are never
/// encoded; `/openapi/v3` documents are never encoded, whatever the client accepts. The
/// documents are held compressed: every answer must decode to the same text, whose
/// SHA-512 is the ETag.
#[tokio::test]
async fn openapi_v2_is_gzipped_where_kube_gzips_it_and_decodes_to_the_plain_text() {
    let engine = engine_with_widgets().await;
    let gunzip = |bytes: &[u8]| {
        let mut text = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(bytes), &mut text).expect("gzip");
        text
    };
    for accept in ["application/json", PROTOBUF_V2] {
        let plain = get(&engine, "/openapi/v2", &[("accept", accept)]).await;
        assert_eq!(plain.status, StatusCode::OK);
        assert_eq!(plain.header("content-encoding"), None, "{accept}");
        assert_eq!(plain.header("content-length"), Some(plain.body.len().to_string().as_str()), "{accept}");
        for encoding in ["gzip", "GZIP", "deflate, gzip;q=0.5", "br;q=1.0, gzip"] {
            let gz = get(&engine, "/openapi/v2", &[("accept", accept), ("accept-encoding", encoding)]).await;
            assert_eq!(gz.status, StatusCode::OK);
            assert_eq!(gz.header("content-encoding"), Some("gzip"), "{accept} with {encoding}");
            assert_eq!(gz.header("content-length"), None, "{accept} with {encoding}");
            assert_eq!(gz.header("etag"), plain.header("etag"));
            assert_eq!(gz.header("content-type"), plain.header("content-type"));
            let vary: Vec<_> = gz.headers.get_all("vary").iter().map(|v| v.to_str().expect("vary")).collect();
            assert_eq!(vary, ["Accept-Encoding", "Accept"]);
            assert!(gunzip(&gz.body) == plain.body, "{accept} with {encoding}: gzip decodes to the plain answer");
        }
        for encoding in ["gzip;q=0", "*", "identity", "deflate"] {
            let other = get(&engine, "/openapi/v2", &[("accept", accept), ("accept-encoding", encoding)]).await;
            assert_eq!(other.header("content-encoding"), None, "{accept} with {encoding}");
            assert!(other.body == plain.body, "{accept} with {encoding}");
        }
    }
    let plain = get(&engine, "/openapi/v2", &[]).await;
    let etag = plain.header("etag").expect("etag").to_string();
    let sha512: String = sha2::Sha512::digest(&plain.body).iter().map(|b| format!("{b:02X}")).collect();
    assert_eq!(etag, format!("\"{sha512}\""), "the ETag is the SHA-512 of the text");
    let unchanged = get(&engine, "/openapi/v2", &[("if-none-match", &etag), ("accept-encoding", "gzip")]).await;
    assert_eq!(unchanged.status, StatusCode::NOT_MODIFIED);
    assert_eq!(unchanged.header("content-encoding"), None);
    let refused = get(&engine, "/openapi/v2", &[("accept", "text/html"), ("accept-encoding", "gzip")]).await;
    assert_eq!(refused.status, StatusCode::NOT_ACCEPTABLE);
    assert_eq!(refused.header("content-encoding"), None);

    let url = url_of(&get(&engine, "/openapi/v3", &[]).await.json(), WIDGETS).expect("listed");
    let v3 = get(&engine, &url, &[]).await;
    let v3_gzip = get(&engine, &url, &[("accept-encoding", "gzip")]).await;
    assert_eq!(v3_gzip.header("content-encoding"), None, "v3 documents are never encoded");
    assert_eq!(v3_gzip.header("content-length"), Some(v3.body.len().to_string().as_str()));
    assert!(v3_gzip.body == v3.body);
    let sha512: String = sha2::Sha512::digest(&v3.body).iter().map(|b| format!("{b:02X}")).collect();
    assert!(url.ends_with(&format!("?hash={sha512}")), "the index's hash is the SHA-512 of the text");
}

/// kubectl decides between server-side and client-side validation by looking for a PATCH
/// operation of the object's kind with a `fieldValidation` parameter; Namespace's stands
/// in for CRDs whose documents are not published yet.
#[tokio::test]
async fn every_kind_advertises_server_side_field_validation() {
    let engine = engine_with_widgets().await;
    let index = get(&engine, "/openapi/v3", &[]).await.json();
    for (gv, kind) in
        [("api/v1", "Namespace"), ("apis/apiextensions.k8s.io/v1", "CustomResourceDefinition"), (WIDGETS, "Widget")]
    {
        let doc = get(&engine, &url_of(&index, gv).expect("listed"), &[]).await.json();
        let patches: Vec<&Value> = doc["paths"]
            .as_object()
            .expect("paths")
            .values()
            .filter_map(|item| item.get("patch"))
            .filter(|op| op["x-kubernetes-group-version-kind"]["kind"] == kind)
            .collect();
        assert!(!patches.is_empty(), "{gv}: no PATCH for {kind}");
        for op in patches {
            let params: Vec<&str> =
                op["parameters"].as_array().expect("params").iter().filter_map(|p| p["name"].as_str()).collect();
            assert!(params.contains(&"fieldValidation"), "{gv} {}: {params:?}", op["operationId"]);
        }
        // The kind's schema carries its group-version-kind, which `kubectl explain` looks up.
        let marked = doc["components"]["schemas"].as_object().expect("schemas").values().any(|s| {
            s["x-kubernetes-group-version-kind"].as_array().is_some_and(|g| g.iter().any(|g| g["kind"] == kind))
        });
        assert!(marked, "{gv}: no schema marked as {kind}");
    }
}

/// A cluster-scoped CRD with versions `v1` and `v1beta1` served and `v1alpha1` not.
fn gizmos_crd() -> Value {
    let version = |name: &str, served: bool, storage: bool, field: &str| {
        json!({
            "name": name, "served": served, "storage": storage,
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "properties": {field: {"type": "string"}}},
            }}},
        })
    };
    CrdBuilder::new("tools.example.com", "Gizmo")
        .cluster_scoped()
        .versions(vec![
            version("v1", true, true, "size"),
            version("v1beta1", true, false, "legacySize"),
            version("v1alpha1", false, false, "ancient"),
        ])
        .build()
}

#[tokio::test]
async fn each_served_version_has_its_own_document_and_schema() {
    let engine = Engine::open(&crate::support::storage::test_storage()).await.expect("engine");
    let crd = serde_json::to_vec(&gizmos_crd()).expect("json");
    let created = send(
        &engine,
        "POST",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        &[("content-type", "application/json")],
        crd,
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    let index = index_when(&engine, |i| url_of(i, "apis/tools.example.com/v1beta1").is_some()).await;
    assert!(url_of(&index, "apis/tools.example.com/v1alpha1").is_none(), "v1alpha1 is not served");

    for (version, field) in [("v1", "size"), ("v1beta1", "legacySize")] {
        let url = url_of(&index, &format!("apis/tools.example.com/{version}")).expect("listed");
        let doc = get(&engine, &url, &[]).await.json();
        let paths: Vec<&String> = doc["paths"].as_object().expect("paths").keys().collect();
        // Cluster-scoped: no namespace in the paths and no list across namespaces.
        assert_eq!(
            paths,
            [
                &format!("/apis/tools.example.com/{version}/gizmos"),
                &format!("/apis/tools.example.com/{version}/gizmos/{{name}}")
            ]
        );
        let list = &doc["paths"][paths[0].as_str()]["get"];
        assert_eq!(list["operationId"], format!("listToolsExampleCom{}Gizmo", version.replace('v', "V")));
        let schema = &doc["components"]["schemas"][format!("com.example.tools.{version}.Gizmo")];
        assert_eq!(schema["properties"]["spec"]["properties"][field]["type"], "string", "{version}");
        assert_eq!(schema["x-kubernetes-group-version-kind"][0]["version"], version);
    }
}

/// A recorded golden of `engine_openapi/`.
fn golden(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/engine_openapi").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).trim_end().to_string()
}

/// A CRD whose schema holds what the definition steps treat apart (nullable properties
/// and lists, int-or-string with and without its `anyOf`, embedded resources, preserved
/// unknown fields, defaults, floats, escapes, CEL rules with every field, junctors): its
/// swagger 2.0 definition and v3 schema are, byte for byte, the ones kube-apiserver 1.32
/// published for it (recorded with the same CRD; swagger 2.0 drops defaults, writes the
/// rules' fields sorted and escapes no `<`, `>`, `&` or U+2028, and
/// `x-kubernetes-int-or-string: false` is left out).
#[tokio::test]
async fn an_edge_case_schema_is_published_as_kube_apiserver_publishes_it() {
    let engine = Engine::open(&crate::support::storage::test_storage()).await.expect("engine");
    let crd = golden("edge.crd.json").into_bytes();
    let path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let answer = send(&engine, "POST", path, &[("content-type", "application/json")], crd).await;
    assert_eq!(answer.status, StatusCode::CREATED, "{}", answer.text());
    let index = index_when(&engine, |i| url_of(i, "apis/edge.example.com/v1").is_some()).await;

    let v2 = get(&engine, "/openapi/v2", &[]).await.text();
    let expected = golden("edge-v2-definition.json");
    assert!(
        v2.contains(&expected),
        "/openapi/v2 has not kube's definition:\n{expected}\nin\n{}",
        around(&v2, "\"com.example.edge.v1.Edge0\":")
    );
    let url = url_of(&index, "apis/edge.example.com/v1").expect("listed");
    let v3 = get(&engine, &url, &[]).await.text();
    let expected = golden("edge-v3-schema.json");
    assert!(
        v3.contains(&expected),
        "v3 has not kube's schema:\n{expected}\nin\n{}",
        around(&v3, "\"com.example.edge.v1.Edge0\":")
    );
}

/// The text of a document from `key` on, for a failure message.
fn around(doc: &str, key: &str) -> String {
    doc.find(key).map(|i| doc[i..].chars().take(7000).collect()).unwrap_or_else(|| format!("(no {key})"))
}

/// The gzip answers recorded on kube-apiserver 1.32 (`engine_openapi/gzip-answers.json`):
/// for each request, the same status, `Content-Encoding`, `Content-Type`, `Vary`, and
/// whether a `Content-Length` is sent (for a 200: the in-process router leaves the length
/// of an empty answer to hyper, which writes it on the wire).
#[tokio::test]
async fn gzip_answers_match_the_recorded_ones() {
    let engine = engine_with_widgets().await;
    let recorded: Value = serde_json::from_str(&golden("gzip-answers.json")).expect("golden");
    let index = get(&engine, "/openapi/v3", &[]).await.json();
    let text = |v: &Value| v.as_str().map(str::to_string);
    for case in recorded["cases"].as_array().expect("cases") {
        let path = match case["path"].as_str().expect("path").strip_prefix("v3 ") {
            Some(gv) => url_of(&index, gv).expect("listed"),
            None => case["path"].as_str().expect("path").to_string(),
        };
        let mut headers = Vec::new();
        for (name, field) in [("accept", "accept"), ("accept-encoding", "accept_encoding")] {
            if let Some(v) = case[field].as_str() {
                headers.push((name, v));
            }
        }
        let answer = get(&engine, &path, &headers).await;
        let what = format!("{path} with {headers:?}");
        assert_eq!(answer.status.as_u16(), case["status"].as_u64().expect("status") as u16, "{what}");
        assert_eq!(answer.header("content-encoding").map(str::to_string), text(&case["content_encoding"]), "{what}");
        assert_eq!(answer.header("content-type").map(str::to_string), text(&case["content_type"]), "{what}");
        let vary: Vec<&str> = answer.headers.get_all("vary").iter().map(|v| v.to_str().expect("vary")).collect();
        let expected: Vec<&str> = case["vary"].as_array().expect("vary").iter().filter_map(Value::as_str).collect();
        assert_eq!(vary, expected, "{what}");
        if answer.status == StatusCode::OK {
            assert_eq!(answer.header("content-length").is_some(), case["content_length"] == true, "{what}");
        }
    }
}

/// Aggregated discovery lists CRD groups by name, whatever order they were created in:
/// kube sorts groups by their APIService's priority, ties by name, and every CRD group has
/// the same one. The legacy `/apis` lists them as the aggregator walks its APIServices by
/// name (`<version>.<group>`). Both observed on kube-apiserver 1.32.13.
#[tokio::test]
async fn crd_groups_are_discovered_in_kubes_order() {
    let engine = Engine::open(&crate::support::storage::test_storage()).await.expect("engine");
    // Kinds whose order is neither the groups' names' nor their creation's, nor their versions'.
    let groups = [
        ("g1x2201.example.com", "Zed", "v2"),
        ("g4x3867.example.com", "Cat", "bar"),
        ("g3x3898.example.com", "Bee", "foo"),
        ("g12x7775.example.com", "Ant", "v1"),
    ];
    for (group, kind, version) in groups {
        let schema = json!({"openAPIV3Schema": {"type": "object"}});
        let served = json!({"name": version, "served": true, "storage": true, "schema": schema});
        let crd = CrdBuilder::new(group, kind).versions(vec![served]).build();
        let body = serde_json::to_vec(&crd).expect("JSON");
        let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
        let answer = send(&engine, "POST", crds, &[("content-type", "application/json")], body).await;
        assert_eq!(answer.status, StatusCode::CREATED, "{}", answer.text());
    }
    let aggregated = [("accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")];
    let listed = |doc: Value, items: &str, name: &str| -> Vec<String> {
        doc[items]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|g| g.pointer(name).and_then(Value::as_str))
            .filter(|name| name.ends_with(".example.com"))
            .map(str::to_string)
            .collect()
    };
    let mut found = Vec::new();
    for _ in 0..300 {
        found = listed(get(&engine, "/apis", &aggregated).await.json(), "items", "/metadata/name");
        if found.len() == groups.len() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(found, ["g12x7775.example.com", "g1x2201.example.com", "g3x3898.example.com", "g4x3867.example.com"]);
    let legacy = listed(get(&engine, "/apis", &[]).await.json(), "groups", "/name");
    assert_eq!(legacy, ["g4x3867.example.com", "g3x3898.example.com", "g12x7775.example.com", "g1x2201.example.com"]);
}
