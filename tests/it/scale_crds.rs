//! The `scale` bench's quick CRD set (200 CRDs of `benches/shared/crds.rs`) against the
//! engine in process: every one Established, discovery listing every group-version,
//! `/openapi/v2` defining every kind, `/openapi/v3` serving every group-version. Correctness
//! only; the bench measures the times.

#[path = "../../benches/shared/crds.rs"]
mod crds;

use axum::body::Body;
use http::{Request, StatusCode};
use kubectl_crd_engine::{Engine, StorageConfig};
use serde_json::Value;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;
use tower::ServiceExt;

/// The bench's quick mode.
const N: usize = 200;
const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const AGGREGATED: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
const PROTOBUF_V2: &str = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";

async fn call(engine: &Arc<Engine>, req: Request<Body>) -> (StatusCode, Value) {
    let res = engine.router().oneshot(req).await.expect("response");
    let status = res.status();
    let body = axum::body::to_bytes(res.into_body(), usize::MAX).await.expect("body");
    (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
}

async fn get(engine: &Arc<Engine>, path: &str, accept: &str) -> Value {
    let req = Request::get(path).header("accept", accept).body(Body::empty()).expect("request");
    let (status, body) = call(engine, req).await;
    assert_eq!(status, StatusCode::OK, "GET {path}: {body}");
    body
}

fn is_established(crd: &Value) -> bool {
    crd.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| cs.iter().any(|c| c["type"] == "Established" && c["status"] == "True"))
}

/// Every group-version of the set, as `<group>/<version>`.
fn group_versions() -> BTreeSet<String> {
    (0..N).flat_map(|i| crds::versions(i).iter().map(move |v| format!("{}/{v}", crds::group(i)))).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_varied_crds_are_established_discovered_and_documented() {
    let engine = Engine::open(&StorageConfig::Memory).await.expect("engine");
    for i in 0..N {
        let body = serde_json::to_vec(&crds::crd(i)).expect("JSON");
        let req = Request::post(CRDS).header("content-type", "application/json").body(Body::from(body));
        let (status, answer) = call(&engine, req.expect("request")).await;
        assert_eq!(status, StatusCode::CREATED, "CRD {i}: {answer}");
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    loop {
        let list = get(&engine, CRDS, "application/json").await;
        let items = list["items"].as_array().cloned().unwrap_or_default();
        let pending: Vec<_> =
            items.iter().filter(|c| !is_established(c)).map(|c| c["metadata"]["name"].clone()).collect();
        if items.len() == N && pending.is_empty() {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{} CRDs, not Established: {pending:?}", items.len());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let wanted = group_versions();
    let aggregated = get(&engine, "/apis", AGGREGATED).await;
    assert_eq!(aggregated["kind"], "APIGroupDiscoveryList");
    let listed: BTreeSet<String> = aggregated["items"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| {
            let group = g["metadata"]["name"].as_str().unwrap_or_default().to_string();
            let versions = g["versions"].as_array().cloned().unwrap_or_default();
            versions.into_iter().map(move |v| format!("{group}/{}", v["version"].as_str().unwrap_or_default()))
        })
        .collect();
    assert!(listed.is_superset(&wanted), "aggregated discovery misses {:?}", wanted.difference(&listed));
    let plain = get(&engine, "/apis", "application/json").await;
    let listed: BTreeSet<String> = plain["groups"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| g["versions"].as_array().cloned().unwrap_or_default())
        .filter_map(|v| v["groupVersion"].as_str().map(String::from))
        .collect();
    assert!(listed.is_superset(&wanted), "discovery misses {:?}", wanted.difference(&listed));

    let v2 = get(&engine, "/openapi/v2", "application/json").await;
    let definitions = v2["definitions"].as_object().expect("definitions");
    let gvks: BTreeSet<(String, String, String)> = definitions
        .values()
        .flat_map(|d| d["x-kubernetes-group-version-kind"].as_array().cloned().unwrap_or_default())
        .map(|g| (g["group"].to_string(), g["version"].to_string(), g["kind"].to_string()))
        .collect();
    for i in 0..N {
        for v in crds::versions(i) {
            let gvk = (
                Value::from(crds::group(i)).to_string(),
                Value::from(*v).to_string(),
                Value::from(crds::kind(i)).to_string(),
            );
            assert!(gvks.contains(&gvk), "/openapi/v2 has no definition of {gvk:?}");
        }
    }

    // A document of several MiB is inflated by a task of its own while it is sent: the
    // plain answer is the text of the gzip one, also after a client dropped an answer
    // halfway through.
    let req = Request::get("/openapi/v2").header("accept", "application/json").body(Body::empty());
    let res = engine.router().oneshot(req.expect("request")).await.expect("response");
    let mut dropped = res.into_body().into_data_stream();
    assert!(futures::StreamExt::next(&mut dropped).await.is_some(), "a first chunk");
    drop(dropped);
    let plain = raw(&engine, "/openapi/v2", "application/json").await;
    assert!(plain.len() > 4 << 20, "the set's /openapi/v2 has {} bytes", plain.len());
    let req = Request::get("/openapi/v2").header("accept", "application/json").header("accept-encoding", "gzip");
    let res = engine.router().oneshot(req.body(Body::empty()).expect("request")).await.expect("response");
    assert_eq!(res.headers().get("content-encoding").map(|v| v.as_bytes()), Some(&b"gzip"[..]));
    let gzip = axum::body::to_bytes(res.into_body(), usize::MAX).await.expect("body");
    let mut text = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gzip[..]), &mut text).expect("gzip");
    assert!(text == plain, "the plain /openapi/v2 differs from its gzip answer's text");

    let index = get(&engine, "/openapi/v3", "application/json").await;
    for gv in &wanted {
        let path = format!("apis/{gv}");
        let url = index["paths"][&path]["serverRelativeURL"].as_str();
        let url = url.unwrap_or_else(|| panic!("the /openapi/v3 index has no {path}"));
        let doc = get(&engine, url, "application/json").await;
        let (group, version) = gv.split_once('/').expect("group/version");
        let kinds = (0..N).filter(|&i| crds::group(i) == group && crds::versions(i).contains(&version));
        let schemas = doc["components"]["schemas"].as_object().expect("schemas");
        for i in kinds {
            let kind = crds::kind(i);
            assert!(schemas.keys().any(|k| k.ends_with(&format!(".{version}.{kind}"))), "{path} has no {kind}");
        }
    }
}

/// The bytes of a GET that must succeed.
async fn raw(engine: &Arc<Engine>, path: &str, accept: &str) -> Vec<u8> {
    let req = Request::get(path).header("accept", accept).body(Body::empty()).expect("request");
    let res = engine.router().oneshot(req).await.expect("response");
    assert_eq!(res.status(), StatusCode::OK, "GET {path}");
    axum::body::to_bytes(res.into_body(), usize::MAX).await.expect("body").to_vec()
}

async fn send(engine: &Arc<Engine>, method: &str, path: &str, body: &Value) -> (StatusCode, Value) {
    let req = Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json")
        .body(Body::from(serde_json::to_vec(body).expect("JSON")));
    call(engine, req.expect("request")).await
}

/// The versions aggregated and plain discovery list for `group` (empty: not listed).
async fn discovered_versions(engine: &Arc<Engine>, group: &str) -> (Vec<String>, Vec<String>) {
    let aggregated = get(engine, "/apis", AGGREGATED).await;
    let aggregated = aggregated["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|g| g["metadata"]["name"] == group)
        .flat_map(|g| g["versions"].as_array().cloned().unwrap_or_default())
        .filter_map(|v| v["version"].as_str().map(String::from))
        .collect();
    let plain = get(engine, "/apis", "application/json").await;
    let plain = plain["groups"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|g| g["name"] == group)
        .flat_map(|g| g["versions"].as_array().cloned().unwrap_or_default())
        .filter_map(|v| v["version"].as_str().map(String::from))
        .collect();
    (aggregated, plain)
}

/// A custom resource of CRD `i` at `version` whose region is `region`.
fn resource(i: usize, version: &str, name: &str, region: &str) -> Value {
    serde_json::json!({"apiVersion": format!("{}/{version}", crds::group(i)), "kind": crds::kind(i),
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"forProvider": {"region": region}}})
}

/// Discovery is cached and the kinds' schemas compiled on first use: right after each
/// write of a CRD (new, new schema and version, deleted), discovery, validation and
/// `/openapi/v2` answer for the CRD as it is now, never as it was when they were cached;
/// and `/openapi/v2`, assembled from the kept parts of the state before, is byte for byte
/// what an engine that never saw that state builds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn caches_follow_every_crd_change() {
    let engine = Engine::open(&StorageConfig::Memory).await.expect("engine");
    let i = 3; // one version, v1; namespaced
    let (group, kind) = (crds::group(i), crds::kind(i));
    // Cache discovery and the documents of the state without the CRD.
    assert_eq!(discovered_versions(&engine, &group).await, (vec![], vec![]));
    let v2 = get(&engine, "/openapi/v2", "application/json").await;
    assert!(!v2.to_string().contains(&kind));

    let (status, answer) = send(&engine, "POST", CRDS, &crds::crd(i)).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    let one = vec!["v1".to_string()];
    assert_eq!(discovered_versions(&engine, &group).await, (one.clone(), one));
    let objects = format!("/apis/{group}/v1/namespaces/default/{}", crds::plural(i));
    let (status, answer) = send(&engine, "POST", &objects, &resource(i, "v1", "fits", "eu-west-1")).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    let long = "a-region-name-longer-than-32-characters";
    let (status, answer) = send(&engine, "POST", &objects, &resource(i, "v1", "too-long", long)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{answer}");
    let v2 = get(&engine, "/openapi/v2", "application/json").await;
    assert!(v2["definitions"].as_object().expect("definitions").keys().any(|k| k.ends_with(&format!(".v1.{kind}"))));

    // A tighter schema and a second served version.
    let path = format!("{CRDS}/{}", crds::name(i));
    let (_, mut crd) = send(&engine, "GET", &path, &Value::Null).await;
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["forProvider"]["properties"]
        ["region"]["maxLength"] = 4.into();
    let mut beta = crd["spec"]["versions"][0].clone();
    beta["name"] = "v2beta1".into();
    beta["storage"] = false.into();
    crd["spec"]["versions"].as_array_mut().expect("versions").push(beta);
    let (status, answer) = send(&engine, "PUT", &path, &crd).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let two = vec!["v1".to_string(), "v2beta1".to_string()];
    assert_eq!(discovered_versions(&engine, &group).await, (two.clone(), two));
    let (status, answer) = send(&engine, "POST", &objects, &resource(i, "v1", "now-too-long", "eu-west-1")).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "the new schema validates: {answer}");
    let beta_objects = format!("/apis/{group}/v2beta1/namespaces/default/{}", crds::plural(i));
    let (status, answer) = send(&engine, "POST", &beta_objects, &resource(i, "v2beta1", "short", "eu")).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    let v2 = get(&engine, "/openapi/v2", "application/json").await;
    // Built from the parts of the state before the change: the very bytes a fresh engine
    // with the same CRD builds from scratch, in JSON and in protobuf.
    let (_, stored) = send(&engine, "GET", &path, &Value::Null).await;
    let fresh = Engine::open(&StorageConfig::Memory).await.expect("engine");
    let copy = serde_json::json!({"apiVersion": stored["apiVersion"], "kind": stored["kind"],
        "metadata": {"name": stored["metadata"]["name"]}, "spec": stored["spec"]});
    let (status, answer) = send(&fresh, "POST", CRDS, &copy).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    for accept in ["application/json", PROTOBUF_V2] {
        let (ours, from_scratch) =
            (raw(&engine, "/openapi/v2", accept).await, raw(&fresh, "/openapi/v2", accept).await);
        assert!(ours == from_scratch, "/openapi/v2 ({accept}) after the change differs from a fresh build");
    }
    let region = &v2["definitions"][format!("com.example.scale.svc0000.v1.{kind}")]["properties"]["spec"]["properties"]
        ["forProvider"]["properties"]["region"];
    assert_eq!(region["maxLength"], 4, "{region}");
    assert!(
        v2["definitions"].as_object().expect("definitions").keys().any(|k| k.ends_with(&format!(".v2beta1.{kind}")))
    );

    let (status, answer) = send(&engine, "DELETE", &path, &Value::Null).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while discovered_versions(&engine, &group).await != (vec![], vec![]) {
        assert!(tokio::time::Instant::now() < deadline, "the deleted CRD stays in discovery");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let v2 = get(&engine, "/openapi/v2", "application/json").await;
    assert!(!v2.to_string().contains(&kind), "the deleted CRD stays in /openapi/v2");
}
