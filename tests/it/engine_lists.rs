//! Lists, collection deletes and scale writes through the router, each checked against
//! what kube-apiserver 1.32 answered for the same requests: `resourceVersion=0` answers
//! everything whatever the limit, a DELETE of a collection answers the page it listed,
//! and a `/scale` write keeps managedFields as kube's scale handler does.

use crate::support::crd::CrdBuilder;
use axum::body::Body;
use http::{Request, StatusCode};
use kubectl_crd_engine::Engine;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tower::ServiceExt;

const WIDGETS: &str = "/apis/lists.example.com/v1/namespaces/default/widgets";

fn widgets_crd() -> Value {
    let schema = json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"replicas": {"type": "integer"}, "size": {"type": "string"}}},
        "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}});
    CrdBuilder::new("lists.example.com", "Widget").list_kind().status().scale().schema(schema).build()
}

struct Cluster {
    engine: Arc<Engine>,
}

impl Cluster {
    async fn start() -> Self {
        let cluster = Cluster { engine: Engine::open(&crate::support::storage::test_storage()).await.expect("engine") };
        let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
        cluster.ok("POST", crds, Some(("application/json", widgets_crd()))).await;
        for _ in 0..300 {
            if cluster.send("GET", WIDGETS, None).await.0 == StatusCode::OK {
                return cluster;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("widgets never served");
    }

    async fn send(&self, method: &str, uri: &str, body: Option<(&str, Value)>) -> (StatusCode, Value) {
        let builder = Request::builder().method(method).uri(uri).header("User-Agent", "lists-test");
        let request = match body {
            Some((content_type, body)) => {
                builder.header("Content-Type", content_type).body(Body::from(body.to_string())).expect("request")
            }
            None => builder.body(Body::empty()).expect("request"),
        };
        let res = self.engine.router().oneshot(request).await.expect("response");
        let status = res.status();
        let bytes = axum::body::to_bytes(res.into_body(), usize::MAX).await.expect("body");
        (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
    }

    async fn ok(&self, method: &str, uri: &str, body: Option<(&str, Value)>) -> Value {
        let (status, body) = self.send(method, uri, body).await;
        assert!(status.is_success(), "{method} {uri}: {status} {body}");
        body
    }

    async fn create(&self, name: &str) {
        let widget = json!({"apiVersion": "lists.example.com/v1", "kind": "Widget",
            "metadata": {"name": name}, "spec": {"replicas": 1, "size": "small"}});
        self.ok("POST", WIDGETS, Some(("application/json", widget))).await;
    }
}

fn revision_of(list: &Value) -> u64 {
    list["metadata"]["resourceVersion"].as_str().and_then(|rv| rv.parse().ok()).expect("a list's resourceVersion")
}

fn names(list: &Value) -> Vec<&str> {
    list["items"].as_array().into_iter().flatten().filter_map(|i| i["metadata"]["name"].as_str()).collect()
}

#[tokio::test]
async fn a_list_at_resource_version_0_is_the_whole_cache_whatever_the_limit() {
    let cluster = Cluster::start().await;
    for name in ["a", "b", "c"] {
        cluster.create(name).await;
    }
    // `resourceVersion=0` is "any": on etcd the watch cache answers as far as it has got, as
    // kube's does, so the whole cache is awaited at the revision a consistent read gives.
    let consistent = cluster.ok("GET", WIDGETS, None).await;
    let written = revision_of(&consistent);
    let mut list = Value::Null;
    for _ in 0..250 {
        list = cluster.ok("GET", &format!("{WIDGETS}?limit=2&resourceVersion=0"), None).await;
        if revision_of(&list) >= written {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(revision_of(&list) >= written, "the cache never reached {written}: {list}");
    assert_eq!(names(&list), ["a", "b", "c"]);
    assert_eq!(list["metadata"]["continue"], "");
    assert!(list["metadata"].get("remainingItemCount").is_none());
    let paged = cluster.ok("GET", &format!("{WIDGETS}?limit=2"), None).await;
    assert_eq!((names(&paged), &paged["metadata"]["remainingItemCount"]), (vec!["a", "b"], &json!(1)));
    // A bad resourceVersion: the cache's bare 500, etcd's 400 for the legacy exact read.
    let (status, body) = cluster.send("GET", &format!("{WIDGETS}?resourceVersion=x"), None).await;
    assert_eq!((status, body.get("reason")), (StatusCode::INTERNAL_SERVER_ERROR, None));
    let (status, body) = cluster.send("GET", &format!("{WIDGETS}?resourceVersion=x&limit=1"), None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body["message"].as_str().unwrap_or("").starts_with("invalid resource version: "), "{body}");
}

#[tokio::test]
async fn a_collection_delete_answers_the_page_it_listed() {
    let cluster = Cluster::start().await;
    for name in ["a", "b", "c"] {
        cluster.create(name).await;
    }
    let first = cluster.ok("DELETE", &format!("{WIDGETS}?limit=2"), None).await;
    assert_eq!(names(&first), ["a", "b"]);
    assert_eq!(first["metadata"]["remainingItemCount"], 1);
    assert!(first["metadata"]["continue"].as_str().is_some_and(|c| !c.is_empty()), "{first}");
    let rest = cluster.ok("DELETE", WIDGETS, None).await;
    assert_eq!((names(&rest), &rest["metadata"]["continue"]), (vec!["c"], &json!("")));
    assert_eq!(names(&cluster.ok("GET", WIDGETS, None).await), Vec::<&str>::new());
}

#[tokio::test]
async fn a_scale_write_keeps_managed_fields_as_kube_s_scale_handler() {
    let cluster = Cluster::start().await;
    cluster.create("w").await;
    let merge = "application/merge-patch+json";
    // Replicas kept: the creator's replicas move to an entry of their own, without a time.
    let scale = format!("{WIDGETS}/w/scale");
    cluster.ok("PATCH", &scale, Some((merge, json!({"metadata": {"labels": {"l": "v"}}})))).await;
    let w = cluster.ok("GET", &format!("{WIDGETS}/w"), None).await;
    let entries = w["metadata"]["managedFields"].as_array().cloned().unwrap_or_default();
    let fields: Vec<(&Value, Option<&Value>)> = entries.iter().map(|e| (&e["fieldsV1"], e.get("time"))).collect();
    assert_eq!(fields.len(), 2, "{entries:?}");
    assert_eq!(fields[0], (&json!({"f:spec": {"f:replicas": {}}}), None));
    assert_eq!(fields[1].0, &json!({"f:spec": {".": {}, "f:size": {}}}));
    // Replicas changed: the writer owns them through the scale subresource.
    cluster.create("v").await;
    cluster
        .ok("PATCH", &format!("{WIDGETS}/v/scale?fieldManager=hpa"), Some((merge, json!({"spec": {"replicas": 5}}))))
        .await;
    let v = cluster.ok("GET", &format!("{WIDGETS}/v"), None).await;
    let first = &v["metadata"]["managedFields"][0];
    assert_eq!((&first["manager"], &first["subresource"]), (&json!("hpa"), &json!("scale")));
    assert_eq!(first["fieldsV1"], json!({"f:spec": {"f:replicas": {}}}));
    assert!(first.get("time").is_none());
}

/// A list of more than a mebibyte goes out as it is encoded (kube 1.32 streams the JSON of
/// collections too): in chunks, without a Content-Length, the first one long before the
/// whole; put together they are the same list the pages make.
#[tokio::test]
async fn a_large_list_is_sent_in_chunks_as_it_is_encoded() {
    use http_body_util::BodyExt as _;
    let cluster = Cluster::start().await;
    let pad = "p".repeat(1_000);
    let count = 1_200;
    for i in 0..count {
        let widget = json!({"apiVersion": "lists.example.com/v1", "kind": "Widget",
            "metadata": {"name": format!("w-{i:04}")}, "spec": {"replicas": i, "size": pad}});
        cluster.ok("POST", WIDGETS, Some(("application/json", widget))).await;
    }
    let request = Request::builder().uri(WIDGETS).body(Body::empty()).expect("request");
    let res = cluster.engine.router().oneshot(request).await.expect("response");
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.headers()["content-type"], "application/json");
    assert!(res.headers().get("content-length").is_none(), "{:?}", res.headers());
    let mut body = res.into_body();
    let mut frames = Vec::new();
    while let Some(frame) = body.frame().await {
        frames.push(frame.expect("a frame").into_data().expect("data"));
    }
    let whole: Vec<u8> = frames.concat();
    assert!(frames.len() > 10, "{} frames", frames.len());
    assert!(frames[0].len() < whole.len() / 10, "first frame {} of {}", frames[0].len(), whole.len());
    assert_eq!(whole.last(), Some(&b'\n'));
    let list: Value = serde_json::from_slice(&whole).expect("the chunks make one JSON list");
    assert_eq!(list["kind"], "WidgetList");
    let mut paged = Vec::new();
    let mut next = String::new();
    loop {
        let page = cluster.ok("GET", &format!("{WIDGETS}?limit=500&continue={next}"), None).await;
        paged.extend(page["items"].as_array().expect("items").iter().cloned());
        next = page["metadata"]["continue"].as_str().unwrap_or("").to_string();
        if next.is_empty() {
            break;
        }
    }
    assert_eq!(list["items"].as_array().expect("items"), &paged);
    assert_eq!(paged.len(), count);
    // A small list still goes out whole.
    let small = Request::builder().uri(format!("{WIDGETS}?limit=2")).body(Body::empty()).expect("request");
    let res = cluster.engine.router().oneshot(small).await.expect("response");
    assert!(hyper::body::Body::size_hint(res.body()).exact().is_some(), "the small list has a known length");
}

/// One object read at a resourceVersion the server has not reached waits for it as a list
/// does, then answers kube's 504 (what kube-apiserver 1.32 answered after its 3 s wait:
/// `Timeout: Too large resource version: 99999999, current: 277`, reason Timeout, cause
/// `ResourceVersionTooLarge`, retry after 1 s); one at a revision it has is read. Its
/// `/status` and `/scale` read it the same way (kube's scale GET passes its options on;
/// ours ignored the resourceVersion there until 2026-11-28).
#[tokio::test]
async fn a_get_at_a_resource_version_not_reached_yet_is_a_504_after_the_wait() {
    let cluster = Cluster::start().await;
    cluster.create("w1").await;
    for sub in ["", "/status", "/scale"] {
        let path = format!("{WIDGETS}/w1{sub}?resourceVersion=999999999");
        let (status, body) = cluster.send("GET", &path, None).await;
        assert_eq!(status, StatusCode::GATEWAY_TIMEOUT, "{sub}: {body}");
        assert_eq!(body["reason"], "Timeout");
        assert_eq!(body["details"]["causes"][0]["reason"], "ResourceVersionTooLarge");
        assert_eq!(body["details"]["retryAfterSeconds"], 1);
        let message = body["message"].as_str().unwrap_or_default();
        assert!(message.starts_with("Timeout: Too large resource version: 999999999, current: "), "{message}");
        let (status, body) = cluster.send("GET", &format!("{WIDGETS}/w1{sub}?resourceVersion=1"), None).await;
        assert_eq!(status, StatusCode::OK, "{sub}: {body}");
        // kube-apiserver 1.32: `resourceVersion: Invalid value: "x": strconv.ParseUint: …`.
        let (status, body) = cluster.send("GET", &format!("{WIDGETS}/w1{sub}?resourceVersion=x"), None).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{sub}: {body}");
    }
}
