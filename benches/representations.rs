//! `cargo bench --bench representations`: list latency at 10,000 custom resources as
//! JSON, as a Table and as a PartialObjectMetadataList, through the engine's router in
//! process (request in, whole body out), so negotiation, the store read and the encoding
//! are all in the figure. Prints the median and the best of several runs for each; no
//! assertion (tests never assert wall-clock times). The objects are realistic widgets
//! (labels, annotations, managedFields, spec and status: about 560 bytes each).

#[path = "shared/allocator.rs"]
mod allocator;

use axum::body::Body;
use http::Request;
use kubectl_crd::cluster::registrations::{Establishment, wait_for_established};
use kubectl_crd_engine::{Engine, StorageConfig};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tower::ServiceExt;

const OBJECTS: usize = 10_000;
const RUNS: usize = 15;
const WIDGETS: &str = "/apis/stable.example.com/v1/namespaces/default/widgets";

fn crd() -> serde_json::Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.stable.example.com"},
        "spec": {"group": "stable.example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wd"]},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
                "subresources": {"status": {}},
                "additionalPrinterColumns": [
                    {"name": "Color", "type": "string", "jsonPath": ".spec.color"},
                    {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
                    {"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status", "priority": 1},
                    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]}]}
    })
}

fn widget(i: usize) -> bytes::Bytes {
    let obj = json!({
        "apiVersion": "stable.example.com/v1", "kind": "Widget",
        "metadata": {"name": format!("w{i:05}"), "namespace": "default", "uid": format!("8df4f063-6b9d-45bf-8947-{i:012}"),
            "generation": 3, "creationTimestamp": "2026-11-22T02:36:58Z",
            "labels": {"app": "demo", "tier": "gold"}, "annotations": {"note": "bench"},
            "managedFields": [{"manager": "kubectl", "operation": "Update", "apiVersion": "stable.example.com/v1",
                "time": "2026-11-22T02:37:02Z", "fieldsType": "FieldsV1",
                "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}, "f:tier": {}}}, "f:spec": {".": {}, "f:color": {}, "f:size": {}}}}]},
        "spec": {"color": "blue", "replicas": i % 7, "size": 5},
        "status": {"conditions": [{"type": "Ready", "status": "True"}], "phase": "Ready"}
    });
    serde_json::to_vec(&obj).expect("json").into()
}

async fn list(engine: &Arc<Engine>, accept: &str) -> (Duration, usize) {
    let req = Request::get(WIDGETS).header("Accept", accept).body(Body::empty()).expect("request");
    let start = Instant::now();
    let res = engine.router().oneshot(req).await.expect("response");
    let body = axum::body::to_bytes(res.into_body(), usize::MAX).await.expect("body");
    (start.elapsed(), body.len())
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

#[tokio::main]
async fn main() {
    let engine = Engine::open(&StorageConfig::Memory).await.expect("engine");
    let client = kubectl_crd::cluster::connect::in_process_client(&engine, "default");
    let crds: kube::Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
        kube::Api::all(client.clone());
    crds.create(&Default::default(), &serde_json::from_value(crd()).expect("crd")).await.expect("crd");
    // The engine routes a kind before it announces it Established.
    let established =
        wait_for_established(&client, "widgets.stable.example.com", Duration::from_secs(10)).await.expect("the CRD");
    assert!(matches!(established, Establishment::Established), "{established:?}");
    let store = engine.store();
    let writes = (0..OBJECTS).map(|i| {
        let store = Arc::clone(&store);
        async move { store.create(&format!("/registry/stable.example.com/widgets/default/w{i:05}"), widget(i)).await }
    });
    for r in futures::future::join_all(writes).await {
        r.expect("create");
    }
    println!("list latency, {OBJECTS} widgets, {RUNS} runs each (median / best):");
    for (label, accept) in [
        ("JSON", "application/json"),
        (
            "Table",
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json",
        ),
        (
            "PartialObjectMetadataList",
            "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json",
        ),
    ] {
        list(&engine, accept).await;
        let mut times = Vec::with_capacity(RUNS);
        let mut size = 0;
        for _ in 0..RUNS {
            let (t, n) = list(&engine, accept).await;
            times.push(t);
            size = n;
        }
        times.sort();
        println!("  {label:<26} {:>9} / {:>9}   ({:.1} MB)", ms(times[RUNS / 2]), ms(times[0]), size as f64 / 1e6);
    }
}
