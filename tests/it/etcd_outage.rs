//! What `serve` answers while its etcd is down, next to what kube-apiserver 1.32 answered
//! with its etcd killed (recorded from the oracle kit: `etcd_outage/*.json`, made by
//! `etcd_outage/record.sh`, with how long kube took). Each recorded request is sent to
//! `serve` with its etcd stopped; the answers must match after normalising what is
//! volatile or kube's own:
//! - a Status is compared without `kind`, `apiVersion` and `metadata` (kube's timeout filter
//!   writes its 504 without them, its storage errors with them);
//! - `/readyz` by its failed checks and its last line (the passing ones name kube's hooks).
//!
//! kube answers reads after its 60 s request timeout, a create after its etcd client gives
//! up (34 s), a watch at its `timeoutSeconds`, `/readyz` after its two 2 s etcd checks;
//! `serve` answers each within its etcd timeout, and `/readyz` sooner, from a 1 s probe.

use super::etcd::{GROUP, client, widgets, widgets_resource};
use crate::support::cli::Served;
use crate::support::crd::CrdBuilder;
use http_body_util::BodyExt;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject, PostParams};
use kubectl_crd_engine::store::etcd_process::EtcdProcess;
use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, Instant};

const RECORDED: [&str; 5] = ["get", "list", "create", "watch", "readyz"];

fn golden(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/etcd_outage").join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A Status without its type and metadata (see the module's note).
fn strip(mut status: Value) -> Value {
    if let Some(o) = status.as_object_mut() {
        for k in ["kind", "apiVersion", "metadata"] {
            o.remove(k);
        }
    }
    status
}

/// A watch event with its Status stripped.
fn event(mut e: Value) -> Value {
    json!({"type": e["type"].take(), "object": strip(e["object"].take())})
}

/// An answer as compared: a Status stripped, a watch as its events, `/readyz` as its
/// failed checks and verdict.
fn normalise(path: &str, body: &[u8]) -> Value {
    let text = String::from_utf8_lossy(body);
    if path.starts_with("/readyz") {
        let lines = text.lines().filter(|l| !l.is_empty() && (l.starts_with("[-]") || !l.starts_with('[')));
        return Value::from(lines.map(String::from).collect::<Vec<_>>());
    }
    if path.contains("watch=1") {
        let events = text.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()).filter(Value::is_object);
        return Value::from(events.map(event).collect::<Vec<_>>());
    }
    strip(serde_json::from_slice(body).unwrap_or_else(|_| Value::from(text.into_owned())))
}

/// The recorded answer as compared (recorded already as lines or events where it streams).
fn expected(recorded: &Value) -> (u16, Value) {
    let code = recorded["code"].as_u64().and_then(|c| u16::try_from(c).ok()).expect("code");
    let path = recorded["request"]["path"].as_str().expect("path");
    let body = recorded["body"].clone();
    let body = match body {
        Value::Array(items) if path.contains("watch=1") => {
            Value::from(items.into_iter().map(event).collect::<Vec<_>>())
        }
        Value::Array(lines) => Value::Array(lines),
        status => strip(status),
    };
    (code, body)
}

/// The recorded request `name` sent to `client`: (code, normalised body, seconds taken).
async fn replay(client: &kube::Client, recorded: &Value) -> (u16, Value, Duration) {
    let path = recorded["request"]["path"].as_str().expect("path");
    let method = recorded["request"]["method"].as_str().expect("method");
    let body = match &recorded["request"]["body"] {
        Value::Null => Vec::new(),
        body => body.to_string().into_bytes(),
    };
    let request = http::Request::builder()
        .method(method)
        .uri(path)
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(http::header::ACCEPT, "application/json")
        .body(kube::client::Body::from(body))
        .expect("request");
    let started = Instant::now();
    let response = client.send(request).await.expect("an answer");
    let code = response.status().as_u16();
    let bytes = response.into_body().collect().await.expect("the body").to_bytes();
    (code, normalise(path, &bytes), started.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_etcd_down_serve_answers_as_kube_apiserver_answered() {
    let dir = tempfile::tempdir().expect("tempdir");
    let etcd_dir = dir.path().join("etcd");
    std::fs::create_dir_all(&etcd_dir).expect("etcd dir");
    let mut etcd = EtcdProcess::start(&etcd_dir).unwrap_or_else(|e| panic!("{e}"));
    let served = Served::start(&dir.path().join("serve"), &["--storage", "etcd", "--etcd-servers", &etcd.url()]);
    let client = client(&served).await;
    let crd: CustomResourceDefinition =
        serde_json::from_value(CrdBuilder::new(GROUP, "Widget").build()).expect("a CRD");
    Api::<CustomResourceDefinition>::all(client.clone()).create(&PostParams::default(), &crd).await.expect("CRD");
    let deadline = Instant::now() + Duration::from_secs(20);
    let w1 = DynamicObject::new("w1", &widgets_resource()).data(json!({"spec": {"size": 1}}));
    while widgets(&client).create(&PostParams::default(), &w1).await.is_err() {
        assert!(Instant::now() < deadline, "the CRD was never served");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    etcd.stop();
    let recorded: Vec<Value> = RECORDED.iter().map(|name| golden(name)).collect();
    let answers = futures::future::join_all(recorded.iter().map(|r| replay(&client, r))).await;
    let mut differences = Vec::new();
    let took_of = |name: &str| answers[RECORDED.iter().position(|n| *n == name).expect("recorded")].2;
    // All sent at once: `/readyz` answers from a short probe, well before the get gives up
    // on etcd (compared within the run, not to a clock).
    assert!(took_of("readyz") * 2 < took_of("get"), "readyz {:?}, get {:?}", took_of("readyz"), took_of("get"));
    for ((name, recorded), (code, body, took)) in RECORDED.iter().zip(&recorded).zip(answers) {
        let expected = expected(recorded);
        eprintln!("{name}: {code} in {took:?} (kube: {} in {}s)", recorded["code"], recorded["seconds"]);
        if (code, &body) != (expected.0, &expected.1) {
            differences
                .push(format!("{name}: serve answered {code} {body:#}\nkube answered {} {:#}", expected.0, expected.1));
        }
        assert!(took < Duration::from_secs(15), "{name} answered in {took:?}");
    }
    assert!(differences.is_empty(), "{}", differences.join("\n\n"));
}
