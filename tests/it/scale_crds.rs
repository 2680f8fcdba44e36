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
