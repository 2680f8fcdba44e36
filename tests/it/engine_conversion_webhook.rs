//! A CRD whose versions convert through a webhook (`conversion.strategy: Webhook`): the
//! engine posts a `ConversionReview` to a real HTTPS server started here, whenever an object
//! changes version, and answers as kube-apiserver 1.32.13 answered for the same webhook
//! (recorded by hand against the oracle: every message below is its). The webhook marks
//! what it converted (`spec.convertedTo`), so each answer shows whether it was called. The
//! last test drives the real `kubectl` against `kubectl crd serve`, and passes against the
//! oracle too (`KUBECTL_CRD_TEST_ORACLE`).

use crate::support::crd::CrdBuilder;
use crate::support::https_webhook::{HttpsWebhook, Reply};
use base64::Engine as _;
use http::StatusCode;
use kubectl_crd_engine::Engine;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const GROUP: &str = "hooks.example.com";

/// How the test webhook answers.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    /// Converts: the desired apiVersion, `spec.convertedTo`, and labels of its own.
    Convert,
    /// `result.status: Failure` with a message.
    Fail,
    /// Two objects for one.
    TwoObjects,
    /// The object renamed.
    Rename,
    /// A label key kube refuses.
    BadLabel,
    /// A 404 without a Status.
    NotFound,
    /// Only renames a field: `spec.x` at v1 is `spec.y` at v2.
    RenameField,
    /// Converts, 3 s late.
    Slow,
    /// Sends every review but one to `/again` with a 307 (a loop, for `/loop`).
    Redirect,
    /// A 501 in HTML, as Python's `http.server` answers a method it lacks.
    Html,
}

/// A conversion webhook over HTTPS on 127.0.0.1 (see [`HttpsWebhook`]), answering as its
/// mode says.
struct Webhook {
    server: HttpsWebhook,
    mode: Arc<Mutex<Mode>>,
}

impl Webhook {
    fn start() -> Webhook {
        let mode = Arc::new(Mutex::new(Mode::Convert));
        let m = mode.clone();
        let server = HttpsWebhook::start(move |path, review| {
            let mode = *m.lock().expect("mode");
            let path = path.split('?').next().unwrap_or_default();
            match (mode, path) {
                (Mode::Slow, _) => answer(mode, review).after(Duration::from_secs(3)),
                (Mode::Redirect, "/loop") => Reply::redirect(307, "/loop"),
                (Mode::Redirect, p) if p != "/again" => Reply::redirect(307, "/again"),
                (Mode::Html, _) => {
                    Reply::text(501, "text/html;charset=utf-8", "<html>\n<p>Error code: 501</p>\n</html>\n")
                }
                _ => answer(mode, review),
            }
        });
        Webhook { server, mode }
    }

    fn set(&self, mode: Mode) {
        *self.mode.lock().expect("mode") = mode;
    }

    fn reviews(&self) -> Vec<Value> {
        self.server.received().into_iter().map(|r| r.body).collect()
    }
}

/// The webhook's answer to `review` in `mode`.
fn answer(mode: Mode, review: &Value) -> Reply {
    let request = &review["request"];
    let desired = request["desiredAPIVersion"].clone();
    let mut objects: Vec<Value> = request["objects"].as_array().cloned().unwrap_or_default();
    for o in &mut objects {
        o["apiVersion"] = desired.clone();
        if mode == Mode::RenameField {
            let (from, to) = if desired.as_str().is_some_and(|d| d.ends_with("/v2")) { ("x", "y") } else { ("y", "x") };
            if let Some(value) = o["spec"].as_object_mut().and_then(|spec| spec.remove(from)) {
                o["spec"][to] = value;
            }
            continue;
        }
        o["spec"]["convertedTo"] = desired.clone();
        o["metadata"]["labels"] = json!({"converted": "yes"});
        // Not the webhook's to change: kube puts the original back.
        o["metadata"]["generation"] = json!(99);
        match mode {
            Mode::Rename => o["metadata"]["name"] = json!("other"),
            Mode::BadLabel => o["metadata"]["labels"] = json!({"bad key!": "x"}),
            _ => {}
        }
    }
    if mode == Mode::TwoObjects {
        objects.extend(objects.clone());
    }
    let result = match mode {
        Mode::Fail => json!({"status": "Failure", "message": "cannot convert: nope"}),
        _ => json!({"status": "Success"}),
    };
    let body = json!({"apiVersion": review["apiVersion"], "kind": "ConversionReview",
        "response": {"uid": request["uid"], "convertedObjects": objects, "result": result}});
    Reply::json(if mode == Mode::NotFound { 404 } else { 200 }, &body)
}

/// `hooks` at v1 (storage) and v2, converting through `client_config`.
fn hooks_crd(client_config: Value) -> Value {
    let version = |name: &str, storage: bool| {
        json!({"name": name, "served": true, "storage": storage,
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}})
    };
    let mut crd = CrdBuilder::new(GROUP, "Hook").versions(vec![version("v1", true), version("v2", false)]).build();
    crd["spec"]["conversion"] =
        json!({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"], "clientConfig": client_config}});
    crd
}

fn path(version: &str, rest: &str) -> String {
    format!("/apis/{GROUP}/{version}/namespaces/default/hooks{rest}")
}

struct Cluster {
    engine: Arc<Engine>,
}

impl Cluster {
    async fn start(client_config: Value) -> Cluster {
        let cluster = Cluster { engine: Engine::open(&crate::support::storage::test_storage()).await.expect("engine") };
        let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
        let (status, body) = cluster.send("POST", crds, Some(hooks_crd(client_config))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        for _ in 0..300 {
            if cluster.send("GET", &path("v2", ""), None).await.0 == StatusCode::OK {
                return cluster;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("hooks never served");
    }

    async fn send(&self, method: &str, uri: &str, body: Option<Value>) -> (StatusCode, Value) {
        let body = body.map(|b| serde_json::to_vec(&b).expect("json"));
        self.request(method, uri, "application/json", body).await
    }

    async fn request(&self, method: &str, uri: &str, content_type: &str, body: Option<Vec<u8>>) -> (StatusCode, Value) {
        let answer = crate::support::inproc::send(&self.engine, method, uri, content_type, body).await;
        (answer.status, answer.body)
    }

    async fn ok(&self, method: &str, uri: &str, body: Option<Value>) -> Value {
        let (status, answer) = self.send(method, uri, body).await;
        assert!(status.is_success(), "{method} {uri}: {status} {answer}");
        answer
    }

    /// A server-side apply of `config` at `uri`.
    async fn apply(&self, uri: &str, config: &Value) -> (StatusCode, Value) {
        self.patch(uri, "application/apply-patch+yaml", &config.to_string()).await
    }

    /// A merge patch that succeeds.
    async fn ok_patch(&self, uri: &str, patch: &str) -> Value {
        let (status, answer) = self.patch(uri, "application/merge-patch+json", patch).await;
        assert!(status.is_success(), "PATCH {uri}: {status} {answer}");
        answer
    }

    async fn patch(&self, uri: &str, content_type: &str, body: &str) -> (StatusCode, Value) {
        self.request("PATCH", uri, content_type, Some(body.as_bytes().to_vec())).await
    }

    /// The message of kube's bare 500 for `method uri`.
    async fn refused(&self, method: &str, uri: &str, body: Option<Value>) -> String {
        let (status, answer) = self.send(method, uri, body).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{method} {uri}: {answer}");
        assert_eq!((answer["kind"].as_str(), answer.get("reason")), (Some("Status"), None), "{answer}");
        answer["message"].as_str().expect("message").to_string()
    }
}

fn hook(api_version: &str, name: &str) -> Value {
    json!({"apiVersion": api_version, "kind": "Hook", "metadata": {"name": name, "labels": {"l": "1"}}, "spec": {"x": 1}})
}

fn with_ca(webhook: &Webhook) -> Value {
    json!({"url": format!("https://{}/convert", webhook.server.addr),
        "caBundle": base64::engine::general_purpose::STANDARD.encode(&webhook.server.ca_pem)})
}

/// A cluster converting through `webhook`, holding `a` created at v1.
async fn cluster_with_a(webhook: &Webhook) -> Cluster {
    let cluster = Cluster::start(with_ca(webhook)).await;
    cluster.ok("POST", &path("v1", ""), Some(hook(&format!("{GROUP}/v1"), "a"))).await;
    cluster
}

// The engine waits for the webhook on its worker: a multi-threaded runtime, as `serve` runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn objects_change_version_through_the_webhook_and_keep_their_metadata() {
    let webhook = Webhook::start();
    let cluster = Cluster::start(with_ca(&webhook)).await;
    cluster.ok("POST", &path("v1", ""), Some(hook(&format!("{GROUP}/v1"), "a"))).await;
    assert!(webhook.reviews().is_empty(), "nothing to convert yet");

    // Read at v2: converted by the webhook, its labels kept, the rest of metadata kube's.
    let got = cluster.ok("GET", &path("v2", "/a"), None).await;
    assert_eq!(got["apiVersion"], format!("{GROUP}/v2"));
    assert_eq!(got["spec"], json!({"x": 1, "convertedTo": format!("{GROUP}/v2")}));
    assert_eq!(got["metadata"]["labels"], json!({"converted": "yes"}));
    assert_eq!(got["metadata"]["generation"], 1);
    assert!(got["metadata"]["resourceVersion"].is_string());
    let review = &webhook.reviews()[0];
    assert_eq!(review["apiVersion"], "apiextensions.k8s.io/v1");
    assert_eq!(review["request"]["desiredAPIVersion"], format!("{GROUP}/v2"));
    assert_eq!(review["request"]["objects"][0]["apiVersion"], format!("{GROUP}/v1"));
    assert_eq!(review["request"]["objects"][0]["metadata"].get("resourceVersion"), None, "as decoded from storage");

    // A list at v2 converts each item.
    let list = cluster.ok("GET", &path("v2", ""), None).await;
    assert_eq!(list["items"][0]["spec"]["convertedTo"], format!("{GROUP}/v2"));

    // A create at v2 is converted to the storage version on its way in, and back out.
    let created = cluster.ok("POST", &path("v2", ""), Some(hook(&format!("{GROUP}/v2"), "b"))).await;
    assert_eq!(created["spec"]["convertedTo"], format!("{GROUP}/v2"));
    let stored = cluster.ok("GET", &path("v1", "/b"), None).await;
    assert_eq!(stored["spec"], json!({"x": 1, "convertedTo": format!("{GROUP}/v1")}));
    assert_eq!(stored["metadata"]["labels"], json!({"converted": "yes"}));

    // Refusals, in kube's words; a refused write stores nothing.
    let prefix = format!("conversion webhook for {GROUP}/v1, Kind=Hook");
    webhook.set(Mode::Fail);
    assert_eq!(cluster.refused("GET", &path("v2", "/a"), None).await, format!("{prefix} failed: cannot convert: nope"));
    assert_eq!(cluster.refused("GET", &path("v2", ""), None).await, format!("{prefix} failed: cannot convert: nope"));
    assert_eq!(
        cluster.refused("POST", &path("v2", ""), Some(hook(&format!("{GROUP}/v2"), "c"))).await,
        format!("conversion webhook for {GROUP}/v2, Kind=Hook failed: cannot convert: nope")
    );
    assert_eq!(cluster.send("GET", &path("v1", "/c"), None).await.0, StatusCode::NOT_FOUND);
    webhook.set(Mode::TwoObjects);
    assert_eq!(
        cluster.refused("GET", &path("v2", "/a"), None).await,
        format!("{prefix} returned 2 objects, expected 1")
    );
    webhook.set(Mode::Rename);
    assert_eq!(
        cluster.refused("GET", &path("v2", "/a"), None).await,
        format!("{prefix} returned invalid object: must have the same name: a != other")
    );
    webhook.set(Mode::BadLabel);
    assert!(cluster.refused("GET", &path("v2", "/a"), None).await.starts_with(&format!(
        "{prefix} returned invalid metadata: metadata.labels: Invalid value: \"bad key!\": name part must consist of"
    )));
    webhook.set(Mode::NotFound);
    assert_eq!(
        cluster.refused("GET", &path("v2", "/a"), None).await,
        format!("{prefix} failed: the server could not find the requested resource")
    );
    // At its own version an object needs no webhook.
    assert_eq!(cluster.ok("GET", &path("v1", "/a"), None).await["spec"], json!({"x": 1}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_that_cannot_be_reached_is_refused_in_gos_words() {
    let webhook = Webhook::start();
    // A port nothing listens on: bound, then let go.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr");
    let cases = [
        (
            json!({"url": format!("https://{closed}/convert")}),
            format!("Post \"https://{closed}/convert?timeout=30s\": dial tcp {closed}: connect: connection refused"),
        ),
        (
            json!({"url": format!("https://{}/convert", webhook.server.addr)}),
            format!(
                "Post \"https://{}/convert?timeout=30s\": tls: failed to verify certificate: x509: certificate signed by unknown authority",
                webhook.server.addr
            ),
        ),
        (
            json!({"url": format!("https://localhost:{}/convert", webhook.server.addr.port()),
                "caBundle": with_ca(&webhook)["caBundle"]}),
            format!(
                "Post \"https://localhost:{}/convert?timeout=30s\": tls: failed to verify certificate: x509: certificate is not valid for any names, but wanted to match localhost",
                webhook.server.addr.port()
            ),
        ),
        (
            json!({"service": {"namespace": "default", "name": "conv", "path": "/convert"}}),
            "Post \"https://conv.default.svc:443/convert?timeout=30s\": service \"conv\" not found".to_string(),
        ),
    ];
    for (config, why) in cases {
        let cluster = Cluster::start(config.clone()).await;
        cluster.ok("POST", &path("v1", ""), Some(hook(&format!("{GROUP}/v1"), "a"))).await;
        assert_eq!(
            cluster.refused("GET", &path("v2", "/a"), None).await,
            format!("conversion webhook for {GROUP}/v1, Kind=Hook failed: {why}"),
            "{config}"
        );
    }
}

/// kube's field manager compares each manager's fields at that manager's version, which it
/// gets from the webhook: a field renamed between versions is still the same field.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_managers_compare_at_their_own_version_through_the_webhook() {
    let webhook = Webhook::start();
    webhook.set(Mode::RenameField);
    let cluster = Cluster::start(with_ca(&webhook)).await;
    let mut created = hook(&format!("{GROUP}/v1"), "a");
    created["metadata"].as_object_mut().expect("metadata").remove("labels");
    cluster.ok("POST", &path("v1", "?fieldManager=a"), Some(created)).await;
    let applied =
        json!({"apiVersion": format!("{GROUP}/v2"), "kind": "Hook", "metadata": {"name": "a"}, "spec": {"y": 2}});
    let (status, answer) = cluster.apply(&path("v2", "/a?fieldManager=b"), &applied).await;
    assert_eq!(status, StatusCode::CONFLICT, "{answer}");
    assert_eq!(
        answer["message"],
        format!("Apply failed with 1 conflict: conflict with \"a\" using {GROUP}/v1: .spec.x"),
    );
    let patched = cluster.ok_patch(&path("v2", "/a?fieldManager=c"), r#"{"spec":{"y":3}}"#).await;
    assert_eq!(patched["spec"], json!({"y": 3}));
    let entries: Vec<(Value, Value)> = patched["metadata"]["managedFields"]
        .as_array()
        .expect("managedFields")
        .iter()
        .map(|e| (e["manager"].clone(), e["fieldsV1"].clone()))
        .collect();
    // a's x was changed (seen at v1, where y is x): taken from a, as the oracle answered.
    assert_eq!(entries, vec![(json!("a"), json!({"f:spec": {}})), (json!("c"), json!({"f:spec": {"f:y": {}}}))]);
}

/// kube prunes what an applier stopped setting where it set it: the merged object goes
/// through the webhook to the applier's last version (v1, where `spec.x` was applied), so an
/// apply at v2 without `spec.y`, the same field there, removes it, as the oracle answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_apply_prunes_at_the_version_the_applier_last_applied_through_the_webhook() {
    let webhook = Webhook::start();
    webhook.set(Mode::RenameField);
    let cluster = Cluster::start(with_ca(&webhook)).await;
    let at = |version: &str, spec: Value| json!({"apiVersion": format!("{GROUP}/{version}"), "kind": "Hook", "metadata": {"name": "a"}, "spec": spec});
    let (status, answer) = cluster.apply(&path("v1", "/a?fieldManager=m"), &at("v1", json!({"x": 1, "z": 1}))).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    let (status, answer) = cluster.apply(&path("v2", "/a?fieldManager=m"), &at("v2", json!({"z": 1}))).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["spec"], json!({"z": 1}), "x, y at v2, is pruned");
    let entries: Vec<(Value, Value, Value)> = answer["metadata"]["managedFields"]
        .as_array()
        .expect("managedFields")
        .iter()
        .map(|e| (e["manager"].clone(), e["apiVersion"].clone(), e["fieldsV1"].clone()))
        .collect();
    assert_eq!(entries, vec![(json!("m"), json!(format!("{GROUP}/v2")), json!({"f:spec": {"f:z": {}}}))]);
    assert_eq!(cluster.ok("GET", &path("v1", "/a"), None).await["spec"], json!({"z": 1}));
}

/// A client's `?timeout=` bounds the wait for a slow webhook: kube's timeout handler
/// answers 504 in its words when the deadline passes, as the oracle did for a webhook that
/// slept past `timeout=3s`; without one the answer waits for the webhook.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_timeout_cuts_the_wait_for_a_slow_webhook() {
    let webhook = Webhook::start();
    let cluster = cluster_with_a(&webhook).await;
    webhook.set(Mode::Slow);
    let started = std::time::Instant::now();
    let (status, answer) = cluster.send("GET", &path("v2", "/a?timeout=1s"), None).await;
    assert_eq!(status, StatusCode::GATEWAY_TIMEOUT, "{answer}");
    assert_eq!(answer["message"], "Timeout: request did not complete within the allotted timeout");
    assert!(started.elapsed() < Duration::from_millis(2500), "answered at the deadline, not the webhook's");
    let slow = cluster.ok("GET", &path("v2", "/a?timeout=10s"), None).await;
    assert_eq!(slow["spec"]["convertedTo"], format!("{GROUP}/v2"));
}

/// Go's client follows a webhook's redirects (a 307 with the review, at most 10), and a
/// failure that is no Status is worded by client-go, its text quoted: the oracle's words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirects_are_followed_and_other_failures_worded_as_client_gos() {
    let webhook = Webhook::start();
    let cluster = cluster_with_a(&webhook).await;
    webhook.set(Mode::Redirect);
    let got = cluster.ok("GET", &path("v2", "/a"), None).await;
    assert_eq!(got["spec"]["convertedTo"], format!("{GROUP}/v2"), "converted at /again");
    let prefix = format!("conversion webhook for {GROUP}/v1, Kind=Hook failed:");
    webhook.set(Mode::Html);
    assert_eq!(
        cluster.refused("GET", &path("v2", "/a"), None).await,
        format!(
            "{prefix} an error on the server (\"<html>\\n<p>Error code: 501</p>\\n</html>\") has prevented the request from succeeding"
        )
    );
    let looping =
        json!({"url": format!("https://{}/loop", webhook.server.addr), "caBundle": with_ca(&webhook)["caBundle"]});
    let cluster = Cluster::start(looping).await;
    webhook.set(Mode::Redirect);
    cluster.ok("POST", &path("v1", ""), Some(hook(&format!("{GROUP}/v1"), "a"))).await;
    assert_eq!(
        cluster.refused("GET", &path("v2", "/a"), None).await,
        format!("{prefix} Post \"/loop\": stopped after 10 redirects")
    );
}

/// The real `kubectl` against `kubectl crd serve` over HTTPS (or the oracle, with
/// `KUBECTL_CRD_TEST_ORACLE` set: the same assertions hold there), the webhook in this test.
#[test]
fn kubectl_reads_and_writes_through_the_conversion_webhook() {
    let webhook = Webhook::start();
    let server = crate::support::kubectl::Server::start();
    let file = |name: &str, value: &Value| {
        let path = server.dir.path().join(name);
        std::fs::write(&path, serde_json::to_vec(value).expect("json")).expect("write");
        path.display().to_string()
    };
    let mut crd = hooks_crd(with_ca(&webhook));
    crd["spec"]["versions"][1]["additionalPrinterColumns"] =
        json!([{"name": "Converted", "type": "string", "jsonPath": ".spec.convertedTo"}]);
    server.ok(&["create", "-f", &file("crd.json", &crd)]);
    server.ok(&["wait", "--for=condition=Established", &format!("crd/hooks.{GROUP}"), "--timeout=20s"]);
    let mut a = hook(&format!("{GROUP}/v1"), "a");
    a["metadata"]["namespace"] = json!("default");
    server.ok(&["create", "-f", &file("a.json", &a)]);

    // Read at v2: the webhook's object, in kubectl's table and in full.
    let table = server.ok(&["get", &format!("hooks.v2.{GROUP}"), "-n", "default"]);
    assert!(table.lines().any(|l| l.starts_with("a ") && l.contains(&format!("{GROUP}/v2"))), "{table}");
    let converted = |version: &str, name: &str| {
        let resource = format!("hooks.{version}.{GROUP}");
        server.ok(&["get", &resource, name, "-n", "default", "-o", "jsonpath={.spec.convertedTo}"])
    };
    assert_eq!(converted("v2", "a"), format!("{GROUP}/v2"));
    // Applied at v2: stored through the webhook at v1.
    let mut b = hook(&format!("{GROUP}/v2"), "b");
    b["metadata"]["namespace"] = json!("default");
    server.ok(&["apply", "-f", &file("b.json", &b)]);
    assert_eq!(converted("v1", "b"), format!("{GROUP}/v1"));

    webhook.set(Mode::Fail);
    let out = server.kubectl(&["get", &format!("hooks.v2.{GROUP}"), "a", "-n", "default"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("conversion webhook for {GROUP}/v1, Kind=Hook failed: cannot convert: nope")),
        "{stderr}"
    );
    assert!(!webhook.reviews().is_empty());
}
