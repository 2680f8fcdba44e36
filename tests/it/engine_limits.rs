//! The limits the engine holds as kube-apiserver 1.32 holds them (issue 25), in process:
//! generated names retried on collision, the watch history bounded by bytes, etcd's request
//! size limit, and patches that cannot amplify an object past it. Expected answers are the
//! oracle's.

use crate::support;
use crate::support::crd::CrdBuilder;
use axum::body::Body;
use http::{HeaderMap, Request, StatusCode};
use http_body_util::BodyExt;
use kubectl_crd_engine::Engine;
use kubectl_crd_engine::generate_name::{MAX_ATTEMPTS, NameGenerator};
use kubectl_crd_engine::store::DEFAULT_HISTORY_BYTES;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tower::ServiceExt;

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const WIDGETS: &str = "/apis/limits.example.com/v1/namespaces/default/widgets";

/// One answer: status, headers and the body as JSON (or as text when it is none).
struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: Value,
}

async fn send(engine: &Arc<Engine>, method: &str, uri: &str, content_type: &str, body: Vec<u8>) -> Answer {
    let req = Request::builder()
        .method(method)
        .uri(uri)
        .header("Content-Type", content_type)
        .header("Accept", "application/json")
        .body(Body::from(body))
        .expect("request");
    let res = engine.router().oneshot(req).await.expect("a response");
    let (status, headers) = (res.status(), res.headers().clone());
    let bytes = res.into_body().collect().await.expect("body").to_bytes();
    let body = serde_json::from_slice(&bytes).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into()));
    Answer { status, headers, body }
}

async fn post(engine: &Arc<Engine>, uri: &str, body: &Value) -> Answer {
    send(engine, "POST", uri, "application/json", body.to_string().into_bytes()).await
}

/// `widgets.limits.example.com`, whose spec keeps any field.
fn widget_crd() -> Value {
    let schema = json!({"type": "object",
        "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}});
    CrdBuilder::new("limits.example.com", "Widget").list_kind().schema(schema).build()
}

fn widget(metadata: Value, spec: Value) -> Value {
    json!({"apiVersion": "limits.example.com/v1", "kind": "Widget", "metadata": metadata, "spec": spec})
}

/// An engine serving widgets, its `generateName` names from `names`.
async fn serving_widgets(names: Option<Arc<dyn NameGenerator>>) -> Arc<Engine> {
    let engine = match names {
        Some(names) => Engine::open_with_names(&crate::support::storage::test_storage(), names).await,
        None => Engine::open(&crate::support::storage::test_storage()).await,
    }
    .expect("engine");
    assert_eq!(post(&engine, CRDS, &widget_crd()).await.status, StatusCode::CREATED);
    for _ in 0..500 {
        if send(&engine, "GET", WIDGETS, "application/json", Vec::new()).await.status == StatusCode::OK {
            return engine;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("widgets never served");
}

/// Names from a script, then `fresh` ones; counts what it was asked.
struct Scripted {
    script: Mutex<Vec<&'static str>>,
    asked: Mutex<usize>,
}

impl Scripted {
    fn new(script: &[&'static str]) -> Arc<Scripted> {
        Arc::new(Scripted { script: Mutex::new(script.iter().rev().copied().collect()), asked: Mutex::new(0) })
    }

    fn asked(&self) -> usize {
        *self.asked.lock().expect("asked")
    }
}

impl NameGenerator for Scripted {
    fn generate(&self, prefix: &str) -> String {
        *self.asked.lock().expect("asked") += 1;
        match self.script.lock().expect("script").pop() {
            Some(name) => name.to_string(),
            None => format!("{prefix}fresh"),
        }
    }
}

#[tokio::test]
async fn a_generated_name_that_collides_is_generated_again() {
    let names = Scripted::new(&["gen-taken", "gen-taken", "gen-taken"]);
    let engine = serving_widgets(Some(names.clone())).await;
    let taken = post(&engine, WIDGETS, &widget(json!({"name": "gen-taken"}), json!({}))).await;
    assert_eq!(taken.status, StatusCode::CREATED);
    let generated = post(&engine, WIDGETS, &widget(json!({"generateName": "gen-"}), json!({}))).await;
    assert_eq!(generated.status, StatusCode::CREATED, "{}", generated.body);
    assert_eq!(generated.body["metadata"]["name"], "gen-fresh");
    assert_eq!(names.asked(), 4, "three collisions, then a name that was free");
}

#[tokio::test]
async fn after_eight_collisions_the_answer_is_kube_s_generate_name_conflict() {
    let names = Scripted::new(&["gen-taken"; 2 * MAX_ATTEMPTS]);
    let engine = serving_widgets(Some(names.clone())).await;
    post(&engine, WIDGETS, &widget(json!({"name": "gen-taken"}), json!({}))).await;
    for dry_run in ["", "?dryRun=All"] {
        let before = names.asked();
        let uri = format!("{WIDGETS}{dry_run}");
        let answer = post(&engine, &uri, &widget(json!({"generateName": "gen-"}), json!({}))).await;
        assert_eq!(names.asked() - before, MAX_ATTEMPTS, "kube's maxNameGenerationCreateAttempts");
        assert_eq!(answer.status, StatusCode::CONFLICT);
        assert_eq!(answer.headers.get("retry-after").map(|v| v.as_bytes()), Some(&b"1"[..]));
        assert_eq!(answer.body, generate_name_conflict("gen-taken"));
    }
}

/// The oracle's answer to a create whose generated (or given) name exists.
fn generate_name_conflict(name: &str) -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": format!("widgets.limits.example.com \"{name}\" already exists, the server was not able to generate a unique name for the object"),
        "reason": "AlreadyExists",
        "details": {"name": name, "group": "limits.example.com", "kind": "widgets", "retryAfterSeconds": 1},
        "code": 409})
}

#[tokio::test]
async fn a_given_name_that_exists_beside_a_generate_name_is_a_generate_name_conflict_without_retry() {
    let names = Scripted::new(&[]);
    let engine = serving_widgets(Some(names.clone())).await;
    post(&engine, WIDGETS, &widget(json!({"name": "w1"}), json!({}))).await;
    let answer = post(&engine, WIDGETS, &widget(json!({"name": "w1", "generateName": "gen-"}), json!({}))).await;
    assert_eq!(answer.status, StatusCode::CONFLICT);
    assert_eq!(answer.body, generate_name_conflict("w1"));
    assert_eq!(names.asked(), 0, "kube generates only a missing name");
    let plain = post(&engine, WIDGETS, &widget(json!({"name": "w1"}), json!({}))).await;
    assert_eq!(plain.body["message"], "widgets.limits.example.com \"w1\" already exists");
}

/// The first watch event from `resource_version`.
async fn first_watch_event(engine: &Arc<Engine>, resource_version: &str) -> Value {
    let uri = format!("{WIDGETS}?watch=true&resourceVersion={resource_version}");
    let req = Request::builder().uri(uri).header("Accept", "application/json").body(Body::empty()).expect("request");
    let res = engine.router().oneshot(req).await.expect("a response");
    assert_eq!(res.status(), StatusCode::OK);
    let mut body = res.into_body();
    let mut line = Vec::new();
    while !line.contains(&b'\n') {
        let frame = tokio::time::timeout(Duration::from_secs(10), body.frame()).await.expect("in time");
        let frame = frame.expect("a frame").expect("no error");
        line.extend_from_slice(frame.data_ref().expect("data"));
    }
    serde_json::from_slice(&line[..line.iter().position(|b| *b == b'\n').unwrap_or(line.len())]).expect("json")
}

#[tokio::test]
async fn the_watch_history_is_bounded_by_bytes_and_a_watch_from_before_it_is_gone() {
    if crate::support::storage::on_etcd() {
        // etcd keeps its own history, bounded by compaction (410 then: `etcd::` tests).
        eprintln!("not run on etcd: the byte-bounded history is the local stores'");
        return;
    }
    let engine = serving_widgets(None).await;
    let big = "x".repeat(1024 * 1024);
    let created = post(&engine, WIDGETS, &widget(json!({"name": "big"}), json!({"data": big, "n": 0}))).await;
    assert_eq!(created.status, StatusCode::CREATED);
    let first = created.body["metadata"]["resourceVersion"].as_str().expect("rv").to_string();
    let start = Instant::now();
    for n in 1..=100 {
        let patch = json!({"spec": {"n": n}}).to_string().into_bytes();
        let answer = send(&engine, "PATCH", &format!("{WIDGETS}/big"), "application/merge-patch+json", patch).await;
        assert_eq!(answer.status, StatusCode::OK);
    }
    let stats = engine.history_stats().expect("stats");
    eprintln!("100 patches of a 1 MiB object in {:?}: history {stats:?}", start.elapsed());
    assert!(stats.bytes <= DEFAULT_HISTORY_BYTES, "{stats:?}");
    assert!(stats.events < 100, "older changes were dropped: {stats:?}");
    let event = first_watch_event(&engine, &first).await;
    assert_eq!(event["type"], "ERROR", "{event}");
    assert_eq!(event["object"]["code"], 410);
    assert_eq!(event["object"]["reason"], "Expired");
    let message = event["object"]["message"].as_str().expect("message");
    assert_eq!(message, format!("too old resource version: {first} ({})", stats.oldest));
}

/// etcd's refusal, as kube passes it on.
fn too_large() -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "etcdserver: request is too large", "code": 500})
}

/// kube's etcd client's refusal of a write whose message is `size` bytes, over gRPC's 2 MiB.
fn over_message_limit(size: usize) -> Value {
    let message = format!(
        "rpc error: code = ResourceExhausted desc = trying to send message larger than max ({size} vs. 2097152)"
    );
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message, "code": 500})
}

#[tokio::test]
async fn objects_over_etcd_s_request_limit_are_refused_and_patches_cannot_grow_them_past_it() {
    let engine = serving_widgets(None).await;
    let mib = |n: usize| "x".repeat(n * 1024 * 1024);
    // Over 2 MiB, kube's etcd client refuses the message before etcd sees it; the sizes are
    // the oracle's for these requests.
    let answer = post(&engine, WIDGETS, &widget(json!({"name": "two"}), json!({"a": mib(2)}))).await;
    assert_eq!((answer.status, answer.body), (StatusCode::INTERNAL_SERVER_ERROR, over_message_limit(2_097_495)));
    let answer = post(&engine, WIDGETS, &widget(json!({"name": "one"}), json!({"a": mib(1)}))).await;
    assert_eq!(answer.status, StatusCode::CREATED);
    // Each patch is under the 3 MiB body limit; their results would not be.
    let uri = format!("{WIDGETS}/one?fieldManager=m");
    let merge = json!({"spec": {"b": mib(1)}}).to_string().into_bytes();
    let json_patch = json!([{"op": "add", "path": "/spec/b", "value": mib(1)}]).to_string().into_bytes();
    let apply = widget(json!({"name": "one"}), json!({"b": mib(1)})).to_string().into_bytes();
    // An update's message holds the revision it expects, as a varint: the oracle's revisions
    // are hundreds, ours single digits, one byte shorter. (An apply's managedFields entry
    // is a few bytes longer than kube's, so only its words are checked.)
    for (content_type, patch, size) in [
        ("application/merge-patch+json", merge, Some(2_097_557 - 1)),
        ("application/json-patch+json", json_patch, Some(2_097_557 - 1)),
        ("application/apply-patch+yaml", apply, None),
    ] {
        let answer = send(&engine, "PATCH", &uri, content_type, patch).await;
        assert_eq!(answer.status, StatusCode::INTERNAL_SERVER_ERROR, "{content_type}");
        match size {
            Some(size) => assert_eq!(answer.body, over_message_limit(size), "{content_type}"),
            None => {
                let message = answer.body["message"].as_str().unwrap_or_default();
                let words = "rpc error: code = ResourceExhausted desc = trying to send message larger than max (";
                assert!(message.starts_with(words) && message.ends_with(" vs. 2097152)"), "{message}");
            }
        }
    }
    let stored = send(&engine, "GET", &format!("{WIDGETS}/one"), "application/json", Vec::new()).await;
    assert!(stored.body["spec"].get("b").is_none(), "nothing was written");
}

#[tokio::test]
async fn an_object_that_fits_only_without_its_managed_fields_is_written_without_them() {
    let engine = serving_widgets(None).await;
    // Its managedFields name each of 80,000 fields: more than the object itself.
    let spec: serde_json::Map<String, Value> = (0..80_000).map(|i| (format!("k{i:05}"), json!(1))).collect();
    let answer = post(&engine, WIDGETS, &widget(json!({"name": "many"}), Value::Object(spec.clone()))).await;
    assert_eq!(answer.status, StatusCode::CREATED);
    assert!(answer.body["metadata"].get("managedFields").is_none(), "kube retries without them");
    // A merge patch too; an apply is not retried.
    let patch: serde_json::Map<String, Value> = spec.keys().map(|k| (k.clone(), json!(2))).collect();
    let patch = json!({"spec": patch}).to_string().into_bytes();
    let answer = send(&engine, "PATCH", &format!("{WIDGETS}/many"), "application/merge-patch+json", patch).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.body["spec"]["k00001"], 2);
    let apply = widget(json!({"name": "many2"}), Value::Object(spec)).to_string().into_bytes();
    let answer =
        send(&engine, "PATCH", &format!("{WIDGETS}/many2?fieldManager=a"), "application/apply-patch+yaml", apply).await;
    assert_eq!((answer.status, answer.body), (StatusCode::INTERNAL_SERVER_ERROR, too_large()));
}

#[tokio::test]
async fn a_json_patch_copying_spec_into_itself_is_refused_at_once() {
    if !support::alone::in_own_process("engine_limits::a_json_patch_copying_spec_into_itself_is_refused_at_once") {
        return;
    }
    let engine = serving_widgets(None).await;
    let spec = json!({"replicas": 1, "pad": "x".repeat(1000)});
    assert_eq!(post(&engine, WIDGETS, &widget(json!({"name": "w"}), spec)).await.status, StatusCode::CREATED);
    let ops: Vec<Value> =
        (0..18).map(|i| json!({"op": "copy", "from": "/spec", "path": format!("/spec/k{i:02}")})).collect();
    let body = serde_json::to_vec(&ops).expect("json");
    assert!(body.len() < 1000, "{} bytes", body.len());
    let (start, peak_before) = (Instant::now(), peak_rss_kib());
    let answer = send(&engine, "PATCH", &format!("{WIDGETS}/w"), "application/json-patch+json", body).await;
    let (took, grew) = (start.elapsed(), peak_rss_kib().saturating_sub(peak_before));
    eprintln!("18 copies of /spec into itself refused in {took:?}, the peak memory grew {grew} KiB");
    // The test runs in a process of its own, so the peak is this patch's.
    assert!(grew < 48 * 1024, "the peak memory grew {grew} KiB");
    // The oracle's answer: the copy limit (3 MiB in all) fails the patch like any operation.
    assert_eq!(answer.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(answer.body["message"], "the server rejected our request due to an error in our request");
    assert!(took < Duration::from_secs(5), "{took:?}");
}

/// The process's peak resident memory (`VmHWM`), 0 where /proc does not say.
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap_or_default();
    line.split_whitespace().nth(1).and_then(|n| n.parse().ok()).unwrap_or(0)
}
