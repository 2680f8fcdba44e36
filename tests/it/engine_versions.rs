//! The versions of a multi-version CRD over one storage, in process through the router.
//! kube-apiserver's `None` conversion serves every object at the version of the request —
//! gets, lists in every representation, watch events (initial ones too, filtered or not)
//! and the answers of writes — and stores it at the storage version, whichever version
//! wrote it. Each test reads the store as well as the answers.

use crate::support::crd::CrdBuilder;
use axum::body::Body;
use futures::StreamExt;
use http::{Request, StatusCode};
use kubectl_crd_engine::Engine;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tower::ServiceExt;

const GROUP: &str = "versions.example.com";
const V1: &str = "versions.example.com/v1";
const V1BETA1: &str = "versions.example.com/v1beta1";
/// Both served versions, the storage version first.
const VERSIONS: [(&str, &str); 2] = [("v1", V1), ("v1beta1", V1BETA1)];
const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";
const PARTIAL_LIST: &str = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io";

/// `databases` at v1beta1 (served) and v1 (storage), with /status, /scale and a printer
/// column showing each object's apiVersion.
fn databases_crd() -> Value {
    let version = |name: &str, storage: bool| {
        json!({"name": name, "served": true, "storage": storage,
            "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
            "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}},
            "additionalPrinterColumns": [{"name": "API", "type": "string", "jsonPath": ".apiVersion"}]})
    };
    CrdBuilder::new(GROUP, "Database").versions(vec![version("v1beta1", false), version("v1", true)]).build()
}

/// A Database at `api_version`.
fn database(api_version: &str, name: &str) -> Value {
    json!({"apiVersion": api_version, "kind": "Database",
        "metadata": {"name": name, "labels": {"app": "db"}}, "spec": {"engine": "postgres", "replicas": 1}})
}

/// The collection path at `version`, with `rest` after it (`/db1`, `?watch=1`).
fn path(version: &str, rest: &str) -> String {
    format!("/apis/{GROUP}/{version}/namespaces/default/databases{rest}")
}

/// One request to the engine's router.
struct Call<'a> {
    method: &'a str,
    uri: String,
    accept: &'a str,
    content_type: &'a str,
    body: Option<Vec<u8>>,
}

impl<'a> Call<'a> {
    fn new(method: &'a str, uri: String) -> Self {
        Call { method, uri, accept: "application/json", content_type: "application/json", body: None }
    }

    fn accept(self, accept: &'a str) -> Self {
        Call { accept, ..self }
    }

    fn json(self, body: &Value) -> Self {
        Call { body: Some(serde_json::to_vec(body).expect("json")), ..self }
    }

    fn patch(self, content_type: &'a str, body: &str) -> Self {
        Call { content_type, body: Some(body.as_bytes().to_vec()), ..self }
    }

    fn request(self) -> Request<Body> {
        Request::builder()
            .method(self.method)
            .uri(self.uri)
            .header("Accept", self.accept)
            .header("Content-Type", self.content_type)
            .body(self.body.map_or_else(Body::empty, Body::from))
            .expect("request")
    }
}

/// An engine serving [`databases_crd`] at both versions.
struct Cluster {
    engine: Arc<Engine>,
}

impl Cluster {
    async fn start() -> Self {
        Self::serving(&databases_crd(), &VERSIONS.map(|(v, _)| path(v, ""))).await
    }

    /// An engine serving `crd`, once every one of `paths` answers.
    async fn serving(crd: &Value, paths: &[String]) -> Self {
        let cluster = Cluster { engine: Engine::open(&crate::support::storage::test_storage()).await.expect("engine") };
        let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions".to_string();
        cluster.ok(Call::new("POST", crds).json(crd)).await;
        for _ in 0..300 {
            let mut served = true;
            for path in paths {
                served &= cluster.send(Call::new("GET", path.clone())).await.0 == StatusCode::OK;
            }
            if served {
                return cluster;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("{} never served", crd["metadata"]["name"]);
    }

    async fn send(&self, call: Call<'_>) -> (StatusCode, Vec<u8>) {
        let res = self.engine.router().oneshot(call.request()).await.expect("response");
        let status = res.status();
        (status, axum::body::to_bytes(res.into_body(), usize::MAX).await.expect("body").to_vec())
    }

    /// The body of a successful answer.
    async fn text(&self, call: Call<'_>) -> String {
        let what = format!("{} {}", call.method, call.uri);
        let (status, body) = self.send(call).await;
        let body = String::from_utf8(body).expect("utf-8");
        assert!(status.is_success(), "{what}: {status} {body}");
        body
    }

    /// The JSON body of a successful answer.
    async fn ok(&self, call: Call<'_>) -> Value {
        serde_json::from_str(&self.text(call).await).expect("json")
    }

    /// The object `name` as the store holds it.
    async fn stored(&self, name: &str) -> Value {
        let kv = self.engine.store().get(&stored_key(name)).await.expect("store").expect("stored");
        serde_json::from_slice(&kv.value).expect("stored json")
    }

    /// A watch in progress at `uri`.
    async fn watch(&self, uri: String) -> Watch {
        let res = self.engine.router().oneshot(Call::new("GET", uri).request()).await.expect("response");
        assert_eq!(res.status(), StatusCode::OK);
        Watch { body: res.into_body().into_data_stream().boxed(), buf: Vec::new() }
    }
}

fn stored_key(name: &str) -> String {
    format!("/registry/{GROUP}/databases/default/{name}")
}

/// The lines of a watch in progress.
struct Watch {
    body: futures::stream::BoxStream<'static, Result<axum::body::Bytes, axum::Error>>,
    buf: Vec<u8>,
}

impl Watch {
    /// The next event, as `(type, apiVersion of its object)`.
    async fn next(&mut self) -> (String, String) {
        let event = self.next_event().await;
        let api_version = event["object"]["apiVersion"].as_str().unwrap_or_default().to_string();
        (event["type"].as_str().unwrap_or_default().to_string(), api_version)
    }

    /// The next event whole.
    async fn next_event(&mut self) -> Value {
        loop {
            if let Some(end) = self.buf.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=end).collect();
                return serde_json::from_slice(&line).expect("event");
            }
            let chunk = tokio::time::timeout(Duration::from_secs(10), self.body.next())
                .await
                .expect("an event in time")
                .expect("stream open")
                .expect("chunk");
            self.buf.extend_from_slice(&chunk);
        }
    }
}

fn api_version(v: &Value) -> &str {
    v["apiVersion"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn objects_are_stored_at_the_storage_version_and_read_at_the_version_of_the_request() {
    let c = Cluster::start().await;
    let created = c.ok(Call::new("POST", path("v1beta1", "")).json(&database(V1BETA1, "db1"))).await;
    assert_eq!(api_version(&created), V1BETA1, "a create answers at the version of the request");
    assert_eq!(api_version(&c.stored("db1").await), V1, "and stores at the storage version");
    c.ok(Call::new("POST", path("v1", "")).json(&database(V1, "db2"))).await;
    assert_eq!(api_version(&c.stored("db2").await), V1);

    for (version, want) in VERSIONS {
        for name in ["db1", "db2"] {
            let got = c.ok(Call::new("GET", path(version, &format!("/{name}")))).await;
            assert_eq!(api_version(&got), want, "GET {name} at {version}");
        }
        let list = c.ok(Call::new("GET", path(version, ""))).await;
        assert_eq!(api_version(&list), want);
        let items = list["items"].as_array().expect("items");
        assert_eq!(items.len(), 2);
        assert!(items.iter().all(|i| api_version(i) == want), "LIST at {version}: {items:?}");
        let limited = c.ok(Call::new("GET", path(version, "?limit=1&labelSelector=app%3Ddb"))).await;
        assert_eq!(api_version(&limited["items"][0]), want, "a filtered page at {version}");
    }
}

#[tokio::test]
async fn objects_stored_at_an_earlier_storage_version_are_read_at_the_version_of_the_request() {
    let c = Cluster::start().await;
    let mut old = database(V1BETA1, "old");
    old["metadata"]["namespace"] = json!("default");
    old["metadata"]["uid"] = json!("3f0e0d5c-0000-4000-8000-000000000001");
    old["metadata"]["creationTimestamp"] = json!("2026-01-01T00:00:00Z");
    let bytes = serde_json::to_vec(&old).expect("json");
    c.engine.store().create(&stored_key("old"), bytes.into()).await.expect("store");

    let got = c.ok(Call::new("GET", path("v1", "/old"))).await;
    assert_eq!(api_version(&got), V1);
    let list = c.ok(Call::new("GET", path("v1", ""))).await;
    assert_eq!(api_version(&list["items"][0]), V1);
    let patched = c
        .ok(Call::new("PATCH", path("v1", "/old")).patch("application/merge-patch+json", r#"{"spec":{"replicas":2}}"#))
        .await;
    assert_eq!(api_version(&patched), V1);
    assert_eq!(api_version(&c.stored("old").await), V1, "rewritten at the storage version");
}

#[tokio::test]
async fn every_representation_shows_the_version_of_the_request() {
    let c = Cluster::start().await;
    c.ok(Call::new("POST", path("v1", "")).json(&database(V1, "db1"))).await;

    let yaml = c.text(Call::new("GET", path("v1beta1", "")).accept("application/yaml")).await;
    assert_eq!(yaml.matches(&format!("apiVersion: {V1BETA1}\n")).count(), 2, "list and item: {yaml}");
    let pretty = c.text(Call::new("GET", path("v1beta1", "?pretty=true"))).await;
    assert_eq!(pretty.matches(&format!("\"apiVersion\": \"{V1BETA1}\"")).count(), 2, "{pretty}");

    for (version, want) in VERSIONS {
        let objects = c.ok(Call::new("GET", path(version, "?includeObject=Object")).accept(TABLE)).await;
        let row = &objects["rows"][0];
        assert_eq!(row["cells"][1], want, "the printer column reads the served object");
        assert_eq!(api_version(&row["object"]), want);
        let table = c.ok(Call::new("GET", path(version, "")).accept(TABLE)).await;
        assert_eq!(table["rows"][0]["cells"][1], want);
        assert_eq!(api_version(&table["rows"][0]["object"]), "meta.k8s.io/v1", "PartialObjectMetadata, as kube");
        let one = c.ok(Call::new("GET", path(version, "/db1?includeObject=Object")).accept(TABLE)).await;
        assert_eq!((&one["rows"][0]["cells"][1], api_version(&one["rows"][0]["object"])), (&json!(want), want));
        let csv = c.text(Call::new("GET", path(version, "")).accept("text/csv")).await;
        assert!(csv.contains(&format!(",{want},")) || csv.contains(&format!(",{want}\n")), "{csv}");
    }
    let partial = c.ok(Call::new("GET", path("v1beta1", "")).accept(PARTIAL_LIST)).await;
    assert_eq!(api_version(&partial), "meta.k8s.io/v1");
    assert_eq!(api_version(&partial["items"][0]), "meta.k8s.io/v1", "no object apiVersion, as kube");
    assert_eq!(partial["items"][0]["metadata"]["name"], "db1");
}

#[tokio::test]
async fn writes_answer_at_the_version_of_the_request_and_store_at_the_storage_version() {
    let c = Cluster::start().await;
    c.ok(Call::new("POST", path("v1", "")).json(&database(V1, "db1"))).await;
    let beta = |rest: &str| path("v1beta1", rest);
    let merge = "application/merge-patch+json";

    let mut obj = c.ok(Call::new("GET", beta("/db1"))).await;
    obj["spec"]["engine"] = json!("mysql");
    let answers = [
        ("PUT", c.ok(Call::new("PUT", beta("/db1")).json(&obj)).await),
        ("PATCH", c.ok(Call::new("PATCH", beta("/db1")).patch(merge, r#"{"spec":{"replicas":2}}"#)).await),
        (
            "apply",
            c.ok(Call::new("PATCH", beta("/db1?fieldManager=test&force=true")).patch(
                "application/apply-patch+yaml",
                &json!({"apiVersion": V1BETA1, "kind": "Database", "metadata": {"name": "db1"}, "spec": {"tier": "gold"}})
                    .to_string(),
            ))
            .await,
        ),
        ("status", c.ok(Call::new("PATCH", beta("/db1/status")).patch(merge, r#"{"status":{"replicas":2}}"#)).await),
        (
            "dry-run create",
            c.ok(Call::new("POST", beta("?dryRun=All")).json(&database(V1BETA1, "db2"))).await,
        ),
        (
            "finalizer",
            c.ok(Call::new("PATCH", beta("/db1")).patch(merge, r#"{"metadata":{"finalizers":["example.com/hold"]}}"#))
                .await,
        ),
        ("DELETE held", c.ok(Call::new("DELETE", beta("/db1"))).await),
    ];
    for (what, answer) in &answers {
        assert_eq!(api_version(answer), V1BETA1, "{what}: {answer}");
    }
    let scale = c.ok(Call::new("PATCH", beta("/db1/scale")).patch(merge, r#"{"spec":{"replicas":3}}"#)).await;
    assert_eq!(scale["spec"]["replicas"], 3);
    let stored = c.stored("db1").await;
    assert_eq!(api_version(&stored), V1, "every write stored at the storage version");
    assert_eq!(stored["spec"], json!({"engine": "mysql", "replicas": 3, "tier": "gold"}));
    assert!(stored["metadata"]["deletionTimestamp"].is_string());
    let listed = c.ok(Call::new("DELETE", beta("?labelSelector=app%3Ddb"))).await;
    assert_eq!(api_version(&listed["items"][0]), V1BETA1, "deletecollection lists at the request's version");
}

#[tokio::test]
async fn watches_send_every_event_at_the_version_of_the_watch() {
    let c = Cluster::start().await;
    c.ok(Call::new("POST", path("v1beta1", "")).json(&database(V1BETA1, "db1"))).await;
    let mut watches = Vec::new();
    for (version, want) in VERSIONS {
        // Unfiltered (the stored bytes passed along) and filtered (each object decoded).
        for query in ["?watch=1", "?watch=1&labelSelector=app%3Ddb"] {
            watches.push((format!("{version}{query}"), want, c.watch(path(version, query)).await));
        }
    }
    c.ok(Call::new("PATCH", path("v1", "/db1")).patch("application/merge-patch+json", r#"{"spec":{"replicas":4}}"#))
        .await;
    c.ok(Call::new("DELETE", path("v1beta1", "/db1"))).await;
    for (watch, want, lines) in &mut watches {
        for event_type in ["ADDED", "MODIFIED", "DELETED"] {
            let (got_type, got_version) = lines.next().await;
            assert_eq!((got_type.as_str(), got_version.as_str()), (event_type, *want), "watch {watch}");
        }
    }
    let send_initial = "?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true";
    c.ok(Call::new("POST", path("v1", "")).json(&database(V1, "db2"))).await;
    let mut initial = c.watch(path("v1beta1", send_initial)).await;
    assert_eq!(initial.next().await, ("ADDED".to_string(), V1BETA1.to_string()));
}

/// `gadgets` at v1 (storage, `spec.common` and `spec.onlyV1`) and v2 (`spec.common` and
/// `spec.onlyV2`), conversion `None`.
fn gadgets_crd() -> Value {
    let version = |name: &str, only: &str| {
        json!({"name": name, "served": true, "storage": name == "v1",
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object",
                "properties": {"common": {"type": "string"}, only: {"type": "string"}}}}}}})
    };
    let mut crd =
        CrdBuilder::new(GROUP, "Gadget").versions(vec![version("v1", "onlyV1"), version("v2", "onlyV2")]).build();
    crd["spec"]["conversion"] = json!({"strategy": "None"});
    crd
}

/// What the oracle answers: a conversion prunes the object to the schema of the version
/// it converts to, on the way to storage and when read at another version than stored.
#[tokio::test]
async fn conversions_prune_to_the_schema_of_the_target_version() {
    let gadgets = |version: &str, rest: &str| format!("/apis/{GROUP}/{version}/namespaces/default/gadgets{rest}");
    let c = Cluster::serving(&gadgets_crd(), &[gadgets("v1", ""), gadgets("v2", "")]).await;
    let gadget = |version: &str, name: &str, only: &str| {
        json!({"apiVersion": format!("{GROUP}/{version}"), "kind": "Gadget",
            "metadata": {"name": name, "labels": {"app": "g"}}, "spec": {"common": "c", only: "x"}})
    };
    let common = json!({"common": "c"});
    let at_v1 = json!({"common": "c", "onlyV1": "x"});
    let stored = async |name: &str| {
        let key = format!("/registry/{GROUP}/gadgets/default/{name}");
        let kv = c.engine.store().get(&key).await.expect("store").expect("stored");
        serde_json::from_slice::<Value>(&kv.value).expect("json")
    };

    let dry = c.ok(Call::new("POST", gadgets("v2", "?dryRun=All")).json(&gadget("v2", "g2", "onlyV2"))).await;
    assert_eq!(dry["spec"], common, "a dry run answers as if stored");
    let created = c.ok(Call::new("POST", gadgets("v2", "")).json(&gadget("v2", "g2", "onlyV2"))).await;
    assert_eq!(created["spec"], common, "onlyV2 does not survive storage at v1");
    assert_eq!(stored("g2").await["spec"], common);
    let patched = c
        .ok(Call::new("PATCH", gadgets("v2", "/g2"))
            .patch("application/merge-patch+json", r#"{"spec":{"onlyV2":"y"}}"#))
        .await;
    assert_eq!(patched["spec"], common);
    c.ok(Call::new("POST", gadgets("v1", "")).json(&gadget("v1", "g1", "onlyV1"))).await;
    assert_eq!(stored("g1").await["spec"], at_v1);

    assert_eq!(c.ok(Call::new("GET", gadgets("v1", "/g1"))).await["spec"], at_v1);
    assert_eq!(c.ok(Call::new("GET", gadgets("v2", "/g1"))).await["spec"], common, "onlyV1 is not shown at v2");
    for query in ["", "?labelSelector=app%3Dg"] {
        let list = c.ok(Call::new("GET", gadgets("v2", query))).await;
        let specs: Vec<&Value> = list["items"].as_array().expect("items").iter().map(|i| &i["spec"]).collect();
        assert_eq!(specs, [&common, &common], "list at v2{query}");
        let mut watch = c.watch(gadgets("v2", &format!("?watch=1&{}", &query.trim_start_matches('?')))).await;
        for _ in 0..2 {
            let event = watch.next_event().await;
            assert_eq!(event["object"]["spec"], common, "watch at v2{query}: {event}");
        }
    }
    let list = c.ok(Call::new("GET", gadgets("v1", ""))).await;
    assert_eq!(list["items"][0]["spec"], at_v1, "read at the version stored, nothing is converted");
}

/// The `Warning` headers of an answer, in order.
fn warnings(res: &http::Response<Body>) -> Vec<String> {
    res.headers().get_all("Warning").iter().map(|v| v.to_str().expect("ascii").to_string()).collect()
}

/// Every answer at a deprecated version carries kube's deprecation warning before any other
/// (here the unknown-field one of a write): the CRD's own text, or `<group>/<version> <Kind>
/// is deprecated; use <group>/<newer version> <Kind>` (the oracle's words). The storage
/// version, not deprecated, carries none.
#[tokio::test]
async fn answers_at_a_deprecated_version_warn_first() {
    for (custom, expected) in [
        (None, format!("{GROUP}/v1beta1 Database is deprecated; use {GROUP}/v1 Database")),
        (Some("use v1"), "use v1".into()),
    ] {
        let mut crd = databases_crd();
        crd["spec"]["versions"][0]["deprecated"] = json!(true);
        crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"engine": {"type": "string"}}}}});
        if let Some(text) = custom {
            crd["spec"]["versions"][0]["deprecationWarning"] = json!(text);
        }
        let cluster = Cluster::serving(&crd, &VERSIONS.map(|(v, _)| path(v, ""))).await;
        let deprecated = format!("299 - \"{expected}\"");
        let create = Call::new("POST", path("v1beta1", "")).json(&database(V1BETA1, "db1")).request();
        let res = cluster.engine.router().oneshot(create).await.expect("response");
        assert_eq!(res.status(), StatusCode::CREATED);
        assert_eq!(warnings(&res), [deprecated.clone(), "299 - \"unknown field \\\"spec.replicas\\\"\"".to_string()]);
        for call in [Call::new("GET", path("v1beta1", "/db1")), Call::new("GET", path("v1beta1", "/missing"))] {
            let res = cluster.engine.router().oneshot(call.request()).await.expect("response");
            assert_eq!(warnings(&res), std::slice::from_ref(&deprecated), "{}", res.status());
        }
        let res =
            cluster.engine.router().oneshot(Call::new("GET", path("v1", "/db1")).request()).await.expect("response");
        assert_eq!(warnings(&res), Vec::<String>::new());
    }
}

/// Creating an object whose name is held by one waiting for its finalizers is a 409 that
/// says so, as kube's: here the CRD itself, held by a custom resource's finalizer.
#[tokio::test]
async fn a_create_in_the_way_of_a_deleting_object_says_it_is_being_deleted() {
    let cluster = Cluster::start().await;
    let mut held = database(V1, "held");
    held["metadata"]["finalizers"] = json!(["example.com/hold"]);
    cluster.ok(Call::new("POST", path("v1", "")).json(&held)).await;
    let crd_path = format!("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/databases.{GROUP}");
    cluster.ok(Call::new("DELETE", crd_path)).await;
    let (status, body) = cluster
        .send(
            Call::new("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions".into()).json(&databases_crd()),
        )
        .await;
    let status_body: Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(
        status_body["message"],
        format!(
            "object is being deleted: customresourcedefinitions.apiextensions.k8s.io \"databases.{GROUP}\" already exists"
        )
    );
}
