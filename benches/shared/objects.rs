//! The "many objects" workload of the `scale` bench (issue 31): one namespaced kind with a
//! real schema, objects of about 0.6 KiB, and the steps the bench times and the test
//! `tests/it/scale_objects.rs` checks for correctness (through any `kube::Client`).

use futures::{AsyncBufReadExt, StreamExt};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

pub const GROUP: &str = "scale.example.com";
pub const NAMESPACE: &str = "default";
pub const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

/// The kind's collection in `default`.
pub fn collection(plural: &str) -> String {
    format!("/apis/{GROUP}/v1/namespaces/{NAMESPACE}/{plural}")
}

/// A CRD for `plural` (`Load` for `loads`): spec fields of the common types, a status
/// subresource, printer columns.
pub fn crd(plural: &str, kind: &str) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{GROUP}")},
        "spec": {"group": GROUP, "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.to_lowercase(), "kind": kind},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "additionalPrinterColumns": [
                    {"name": "Image", "type": "string", "jsonPath": ".spec.image"},
                    {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"}],
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "image": {"type": "string"},
                        "replicas": {"type": "integer", "minimum": 0},
                        "tier": {"type": "string", "enum": ["web", "batch", "cache"]},
                        "env": {"type": "array", "items": {"type": "object", "properties": {
                            "name": {"type": "string"}, "value": {"type": "string"}}}},
                        "notes": {"type": "string"}}},
                    "status": {"type": "object", "properties": {"ready": {"type": "integer"}}}}}}}]}
    })
}

/// Object `i` of the workload, about 0.6 KiB as stored (with the server's metadata);
/// `generation` varies its spec for updates.
pub fn object(kind: &str, i: usize, generation: usize) -> Vec<u8> {
    let tiers = ["web", "batch", "cache"];
    serde_json::to_vec(&serde_json::json!({
        "apiVersion": format!("{GROUP}/v1"), "kind": kind,
        "metadata": {"name": name(i), "labels": {"app": "load", "shard": (i % 16).to_string()}},
        "spec": {"image": format!("registry.example.com/team/app:v{generation}"), "replicas": (i + generation) % 7,
            "tier": tiers[i % 3],
            "env": [{"name": "MODE", "value": "production"}, {"name": "REGION", "value": "eu-west-1"}],
            "notes": "x".repeat(120)}
    }))
    .expect("JSON")
}

pub fn name(i: usize) -> String {
    format!("load-{i:07}")
}

/// Sends `req`; the body, or what went wrong.
async fn send(client: &kube::Client, req: http::Request<Vec<u8>>) -> Result<String, String> {
    let what = format!("{} {}", req.method(), req.uri());
    client.request_text(req).await.map_err(|e| format!("{what}: {e}"))
}

/// Creates the CRD for `plural` and waits until the kind is served.
pub async fn create_kind(client: &kube::Client, plural: &str, kind: &str) {
    let body = serde_json::to_vec(&crd(plural, kind)).expect("JSON");
    let req = http::Request::post(CRDS).header("content-type", "application/json").body(body).expect("request");
    send(client, req).await.unwrap_or_else(|e| panic!("{e}"));
    let deadline = Instant::now() + Duration::from_secs(60);
    let uri = format!("{}?limit=1", collection(plural));
    while send(client, http::Request::get(&uri).body(Vec::new()).expect("request")).await.is_err() {
        assert!(Instant::now() < deadline, "{plural} never served");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// What writing did: how many, how long, the bytes the server answered with (its stored
/// objects, about), and the first error if any.
#[derive(Debug, Default)]
pub struct Written {
    pub count: usize,
    pub took: Duration,
    pub answered_bytes: usize,
    pub errors: usize,
    pub first_error: Option<String>,
}

/// Writes objects `range` of the kind (a create when `generation_of(i)` is 0, else an
/// update of object `i % distinct` to that generation) from `clients` concurrent tasks.
pub async fn write(
    client: &kube::Client,
    plural: &str,
    kind: &str,
    range: std::ops::Range<usize>,
    generation_of: fn(usize) -> usize,
    distinct: usize,
    clients: usize,
) -> Written {
    let next = Arc::new(AtomicUsize::new(range.start));
    let start = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|_| {
            let (client, next, plural, kind, end) =
                (client.clone(), next.clone(), plural.to_string(), kind.to_string(), range.end);
            tokio::spawn(async move {
                let mut done = Written::default();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= end {
                        break done;
                    }
                    let generation = generation_of(i);
                    let target = i % distinct;
                    let body = object(&kind, target, generation);
                    let req = if generation == 0 {
                        http::Request::post(collection(&plural)).header("content-type", "application/json")
                    } else {
                        // A merge patch of the whole object: unconditional, as custom
                        // resources refuse an update without a resourceVersion.
                        http::Request::patch(format!("{}/{}", collection(&plural), name(target)))
                            .header("content-type", "application/merge-patch+json")
                    };
                    let req = req.body(body).expect("request");
                    match send(&client, req).await {
                        Ok(answer) => {
                            done.count += 1;
                            done.answered_bytes += answer.len();
                        }
                        Err(e) => {
                            done.errors += 1;
                            done.first_error.get_or_insert(e);
                        }
                    }
                }
            })
        })
        .collect();
    let mut all = Written::default();
    for t in tasks {
        let done = t.await.expect("writer");
        all.count += done.count;
        all.answered_bytes += done.answered_bytes;
        all.errors += done.errors;
        if all.first_error.is_none() {
            all.first_error = done.first_error;
        }
    }
    all.took = start.elapsed();
    all
}

/// The generation update `i` writes (never 0: that is a create).
pub fn update_generation(i: usize) -> usize {
    1 + i / 7
}

pub fn create_generation(_: usize) -> usize {
    0
}

/// Walks the whole collection in pages of `limit`: the names in order, and each page's time.
pub async fn page_through(client: &kube::Client, plural: &str, limit: usize) -> (Vec<String>, Vec<Duration>) {
    let mut names = Vec::new();
    let mut times = Vec::new();
    let mut token = String::new();
    loop {
        let uri = format!("{}?limit={limit}&continue={token}", collection(plural));
        let start = Instant::now();
        let page = send(client, http::Request::get(&uri).body(Vec::new()).expect("request"))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        times.push(start.elapsed());
        let page: serde_json::Value = serde_json::from_str(&page).expect("a list");
        for item in page["items"].as_array().expect("items") {
            names.push(item["metadata"]["name"].as_str().expect("name").to_string());
        }
        token = page["metadata"]["continue"].as_str().unwrap_or("").to_string();
        if token.is_empty() {
            return (names, times);
        }
    }
}

/// Reads one unpaged list as it arrives, counting items without keeping the body: the
/// bytes, the item count, and the time. `tick` is called after every piece read (the
/// bench samples the server's memory there).
pub async fn read_whole_list(client: &kube::Client, plural: &str, mut tick: impl FnMut()) -> (usize, usize, Duration) {
    let start = Instant::now();
    let req = http::Request::get(collection(plural)).body(Vec::new()).expect("request");
    let mut body = client.request_stream(req).await.expect("list");
    let mut buf = vec![0u8; 64 * 1024];
    let (mut bytes, mut items) = (0usize, 0usize);
    // Every item's metadata carries its resourceVersion, and the list's metadata one more.
    let needle = b"\"resourceVersion\":\"";
    let mut tail: Vec<u8> = Vec::new();
    loop {
        let n = futures::AsyncReadExt::read(&mut body, &mut buf).await.expect("list body");
        if n == 0 {
            break;
        }
        bytes += n;
        tail.extend_from_slice(&buf[..n]);
        items += tail.windows(needle.len()).filter(|w| *w == needle).count();
        let keep = tail.len().min(needle.len() - 1);
        tail.drain(..tail.len() - keep);
        tick();
    }
    (bytes, items.saturating_sub(1), start.elapsed())
}

/// Watch latency: `rounds` creates of fresh objects (names from `first`), each timed from
/// its POST to its ADDED event; sorted.
pub async fn watch_latency(
    client: &kube::Client,
    plural: &str,
    kind: &str,
    first: usize,
    rounds: usize,
) -> Vec<Duration> {
    let list =
        send(client, http::Request::get(format!("{}?limit=1", collection(plural))).body(Vec::new()).expect("request"))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    let list: serde_json::Value = serde_json::from_str(&list).expect("list");
    let rv = list["metadata"]["resourceVersion"].as_str().expect("resourceVersion").to_string();
    let uri = format!("{}?watch=1&resourceVersion={rv}&timeoutSeconds=600", collection(plural));
    let mut lines =
        client.request_stream(http::Request::get(uri).body(Vec::new()).expect("request")).await.expect("watch").lines();
    let mut times = Vec::with_capacity(rounds);
    for i in first..first + rounds {
        let start = Instant::now();
        let req = http::Request::post(collection(plural))
            .header("content-type", "application/json")
            .body(object(kind, i, 0))
            .expect("request");
        send(client, req).await.unwrap_or_else(|e| panic!("{e}"));
        let wanted = format!("\"name\":\"{}\"", name(i));
        loop {
            let line = lines.next().await.expect("the watch ended").expect("a watch line");
            if line.contains(&wanted) {
                break;
            }
        }
        times.push(start.elapsed());
    }
    times.sort();
    times
}
