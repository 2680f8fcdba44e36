//! `kubectl crd serve --storage etcd` on a real etcd (Debian's `etcd-server`, started on
//! loopback per test): objects survive a restart of `serve` with their resourceVersions,
//! sit in etcd where kube-apiserver puts them, a watch from a compacted revision ends with
//! 410 Gone, an etcd that goes away makes requests answer 5xx in bounded time until it is
//! back, TLS with client certificates works, two replicas see each other's writes, a
//! resourceVersion the watch cache has not reached is answered as kube answers it, one
//! replica leads the controllers and another takes over when it dies, a CRD is
//! Established only once every replica serves it, and a replica killed without a word does
//! not hold a new CRD back until its etcd lease expires.
//! Without etcd installed these tests fail, naming the package.

use crate::support::cli::{Served, output_bounded, write_file};
use crate::support::crd::CrdBuilder;
use crate::support::kubectl::kubectl_for;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use futures::StreamExt;
use kube::api::{Api, DynamicObject, PostParams};
use kube::discovery::ApiResource;
use kubectl_crd_engine::store::etcd_process::{EtcdProcess, ServerTls};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

pub(crate) const GROUP: &str = "etcd.example.com";

/// etcd in `dir/etcd`, `serve` on it with `dir/serve` as its data directory.
fn start(dir: &Path) -> (EtcdProcess, Served) {
    let etcd = etcd_in(dir);
    let served = serve(dir, &etcd);
    (etcd, served)
}

/// etcd in `dir/etcd`.
pub(crate) fn etcd_in(dir: &Path) -> EtcdProcess {
    let etcd_dir = dir.join("etcd");
    std::fs::create_dir_all(&etcd_dir).expect("etcd dir");
    EtcdProcess::start(&etcd_dir).unwrap_or_else(|e| panic!("{e}"))
}

pub(crate) fn serve(dir: &Path, etcd: &EtcdProcess) -> Served {
    Served::start(&dir.join("serve"), &["--storage", "etcd", "--etcd-servers", &etcd.url()])
}

fn kubectl(served: &Served, args: &[&str]) -> Output {
    let mut cmd = kubectl_for(&served.kubeconfig);
    cmd.args(["--request-timeout", "20s"]).args(args);
    output_bounded(cmd, None, Duration::from_secs(30))
}

pub(crate) fn ok(served: &Served, args: &[&str]) -> String {
    let out = kubectl(served, args);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "kubectl {args:?} failed: {}{stdout}", String::from_utf8_lossy(&out.stderr));
    stdout
}

/// The Widget CRD applied and established, and two widgets.
fn apply_widgets(dir: &Path, served: &Served) {
    let crd = CrdBuilder::new(GROUP, "Widget").build();
    let crd = write_file(dir, "crd.json", &crd.to_string());
    ok(served, &["apply", "-f", &crd]);
    ok(served, &["wait", "--for=condition=Established", &format!("crd/widgets.{GROUP}"), "--timeout=20s"]);
    for name in ["w1", "w2"] {
        let doc = json!({"apiVersion": format!("{GROUP}/v1"), "kind": "Widget",
            "metadata": {"name": name, "namespace": "default"}, "spec": {"size": 1}});
        let file = write_file(dir, &format!("{name}.json"), &doc.to_string());
        ok(served, &["apply", "-f", &file]);
    }
}

/// Every name with its resourceVersion: the CRD and the widgets.
fn versions(served: &Served) -> String {
    let rv = "{range .items[*]}{.metadata.name}={.metadata.resourceVersion} {end}";
    let crds = ok(served, &["get", "crd", "-o", &format!("jsonpath={rv}")]);
    let widgets = ok(served, &["get", "widgets", "-o", &format!("jsonpath={rv}")]);
    format!("{crds}| {widgets}")
}

/// A POST to etcd's JSON gateway, read without the engine (as etcdctl would).
fn etcd_call(etcd: &EtcdProcess, path: &str, body: &Value) -> Value {
    let addr = etcd.url().trim_start_matches("http://").to_string();
    let mut conn = TcpStream::connect(&addr).expect("connect to etcd");
    conn.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
    let body = body.to_string();
    let request = format!(
        "POST {path} HTTP/1.0\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    conn.write_all(request.as_bytes()).expect("send");
    let mut answer = String::new();
    conn.read_to_string(&mut answer).expect("read");
    let (_, json) = answer.split_once("\r\n\r\n").expect("an HTTP answer");
    serde_json::from_str(json).unwrap_or_else(|e| panic!("etcd answered {json:?}: {e}"))
}

/// The keys etcd holds under `prefix`.
pub(crate) fn etcd_keys(etcd: &EtcdProcess, prefix: &str) -> Vec<String> {
    let mut end = prefix.as_bytes().to_vec();
    *end.last_mut().expect("a prefix") += 1;
    let body = json!({"key": B64.encode(prefix), "range_end": B64.encode(&end), "keys_only": true});
    let answer = etcd_call(etcd, "/v3/kv/range", &body);
    let kvs = answer["kvs"].as_array().cloned().unwrap_or_default();
    kvs.iter()
        .map(|kv| String::from_utf8(B64.decode(kv["key"].as_str().unwrap_or_default()).expect("base64")).expect("utf8"))
        .collect()
}

pub(crate) async fn client(served: &Served) -> kube::Client {
    let kubeconfig = kube::config::Kubeconfig::read_from(&served.kubeconfig).expect("kubeconfig");
    let mut config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await.expect("config");
    // kube-rs retries 504s by itself for minutes; the test sees each answer.
    config.default_retry = false;
    kube::Client::try_from(config).expect("client")
}

pub(crate) fn widgets(client: &kube::Client) -> Api<DynamicObject> {
    Api::namespaced_with(client.clone(), "default", &widgets_resource())
}

#[test]
fn objects_survive_a_restart_of_serve_with_their_resource_versions_where_kube_keeps_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (etcd, served) = start(dir.path());
    apply_widgets(dir.path(), &served);
    let before = versions(&served);
    drop(served);

    let served = serve(dir.path(), &etcd);
    assert_eq!(versions(&served), before, "the same objects at the same resourceVersions");
    assert_eq!(
        etcd_keys(&etcd, &format!("/registry/{GROUP}/widgets/")),
        [format!("/registry/{GROUP}/widgets/default/w1"), format!("/registry/{GROUP}/widgets/default/w2")]
    );
    assert_eq!(
        etcd_keys(&etcd, "/registry/apiextensions.k8s.io/customresourcedefinitions/"),
        [format!("/registry/apiextensions.k8s.io/customresourcedefinitions/widgets.{GROUP}")]
    );
    let key = format!("/registry/{GROUP}/widgets/default/w1");
    let stored = etcd_call(&etcd, "/v3/kv/range", &json!({"key": B64.encode(&key)}));
    let value = B64.decode(stored["kvs"][0]["value"].as_str().expect("a value")).expect("base64");
    let object: Value = serde_json::from_slice(&value).expect("JSON at the storage version");
    assert_eq!(
        (object["apiVersion"].as_str(), object["metadata"]["name"].as_str()),
        (Some("etcd.example.com/v1"), Some("w1"))
    );
}

#[test]
fn a_watch_from_a_compacted_revision_ends_with_410_gone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (etcd, served) = start(dir.path());
    apply_widgets(dir.path(), &served);
    let old = ok(&served, &["get", "widget", "w1", "-o", "jsonpath={.metadata.resourceVersion}"]);
    for size in 2..5 {
        ok(&served, &["patch", "widget", "w1", "--type=merge", "-p", &format!("{{\"spec\":{{\"size\":{size}}}}}")]);
    }
    let now = etcd_call(&etcd, "/v3/kv/range", &json!({"key": B64.encode("/"), "count_only": true}));
    let now = now["header"]["revision"].as_str().expect("revision").to_string();
    etcd_call(&etcd, "/v3/kv/compaction", &json!({"revision": now, "physical": true}));
    // The replica's watch cache still holds those changes (kube's would too); a replica
    // started since has none of them, so its watch asks etcd, which compacted them.
    drop(served);
    let served = serve(dir.path(), &etcd);

    let path = format!("/apis/{GROUP}/v1/namespaces/default/widgets?watch=1&resourceVersion={old}");
    let out = ok(&served, &["get", "--raw", &path]);
    let event: Value = serde_json::from_str(out.lines().next().unwrap_or_default()).expect("one event");
    assert_eq!(event["type"], "ERROR", "{out}");
    assert_eq!(event["object"]["code"], 410, "{out}");
    assert_eq!(event["object"]["reason"], "Expired", "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_etcd_down_requests_answer_5xx_promptly_and_serve_recovers_when_it_is_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut etcd, served) = start(dir.path());
    let d = dir.path().to_path_buf();
    let served = tokio::task::spawn_blocking(move || {
        apply_widgets(&d, &served);
        served
    })
    .await
    .expect("setup");
    let client = client(&served).await;
    let api = widgets(&client);
    let from = api.list_metadata(&Default::default()).await.expect("list").metadata.resource_version;
    let mut watch =
        api.watch(&kube::api::WatchParams::default(), from.as_deref().unwrap_or("0")).await.expect("a watch").boxed();

    etcd.stop();
    let started = Instant::now();
    match api.get("w1").await {
        Err(kube::Error::Api(status)) => {
            assert!(status.code >= 500, "a 5xx Status: {status:?}");
            assert_eq!(status.code, 504, "{status:?}");
        }
        other => panic!("expected a 5xx Status, got {other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(10), "answered in {:?}", started.elapsed());
    let readyz = client.request_text(http::Request::get("/readyz").body(Vec::new()).expect("request")).await;
    assert!(readyz.is_err(), "/readyz fails while etcd is down: {readyz:?}");

    etcd.restart().expect("etcd restarts");
    let deadline = Instant::now() + Duration::from_secs(20);
    let w1 = loop {
        match api.get("w1").await {
            Ok(w1) => break w1,
            Err(e) if Instant::now() < deadline => {
                let _ = e;
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => panic!("serve did not recover: {e}"),
        }
    };
    assert_eq!(w1.data["spec"]["size"], 1);
    let w3 = DynamicObject::new("w3", &widgets_resource()).data(json!({"spec": {"size": 3}}));
    api.create(&PostParams::default(), &w3).await.expect("writes work again");
    // The watch opened before the outage stayed open and goes on without a gap.
    let event = tokio::time::timeout(Duration::from_secs(10), watch.next()).await.expect("an event");
    match event {
        Some(Ok(kube::api::WatchEvent::Added(w))) => assert_eq!(w.metadata.name.as_deref(), Some("w3")),
        other => panic!("expected w3 ADDED on the watch from before the outage, got {other:?}"),
    }
    client
        .request_text(http::Request::get("/readyz").body(Vec::new()).expect("request"))
        .await
        .expect("/readyz passes again");
}

pub(crate) fn widgets_resource() -> ApiResource {
    ApiResource {
        group: GROUP.into(),
        version: "v1".into(),
        api_version: format!("{GROUP}/v1"),
        kind: "Widget".into(),
        plural: "widgets".into(),
    }
}

/// A CA, etcd's serving certificate for 127.0.0.1 and a client certificate, as PEM files in
/// `dir`: (etcd's TLS, the client's CA file, certificate file, key file).
fn certificates(dir: &Path) -> (ServerTls, String, String, String) {
    use rcgen::{BasicConstraints, CertificateParams, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair};
    let ca_key = KeyPair::generate().expect("key");
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("params");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.clone().self_signed(&ca_key).expect("CA");
    let issuer = Issuer::new(ca_params, &ca_key);
    let issue = |name: &str, usages: Vec<ExtendedKeyUsagePurpose>| {
        let key = KeyPair::generate().expect("key");
        let mut params = CertificateParams::new(vec!["127.0.0.1".to_string()]).expect("params");
        params.extended_key_usages = usages;
        let cert = params.signed_by(&key, &issuer).expect("certificate");
        (
            write_file(dir, &format!("{name}.crt"), &cert.pem()),
            write_file(dir, &format!("{name}.key"), &key.serialize_pem()),
        )
    };
    let ca_file = write_file(dir, "ca.crt", &ca.pem());
    // A serving certificate good for server auth only: `serve` speaks etcd's gRPC itself
    // (etcd's JSON gateway, which dials etcd with that certificate, would need client
    // auth in it too).
    let (server_cert, server_key) = issue("server", vec![ExtendedKeyUsagePurpose::ServerAuth]);
    let (client_cert, client_key) = issue("client", vec![ExtendedKeyUsagePurpose::ClientAuth]);
    let server = ServerTls {
        cert_file: server_cert.into(),
        key_file: server_key.into(),
        client_ca_file: ca_file.clone().into(),
    };
    (server, ca_file, client_cert, client_key)
}

#[test]
fn serve_reaches_an_etcd_that_checks_client_certificates() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (server_tls, ca, cert, key) = certificates(dir.path());
    let etcd_dir = dir.path().join("etcd");
    std::fs::create_dir_all(&etcd_dir).expect("etcd dir");
    let etcd = EtcdProcess::start_tls(&etcd_dir, server_tls).unwrap_or_else(|e| panic!("{e}"));
    assert!(etcd.url().starts_with("https://"));
    let flags = ["--storage", "etcd", "--etcd-servers", &etcd.url(), "--etcd-cafile", &ca];
    let served = Served::start(
        &dir.path().join("serve"),
        &[&flags[..], &["--etcd-certfile", &cert, "--etcd-keyfile", &key]].concat(),
    );
    apply_widgets(dir.path(), &served);
    assert!(versions(&served).contains("w2="), "objects written over TLS");
    drop(served);

    // Without a client certificate etcd refuses the connection: serve says so and exits.
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kubectl-crd"));
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--data-dir"]).arg(dir.path().join("other")).args(flags);
    let out = output_bounded(cmd, None, Duration::from_secs(30));
    assert!(!out.status.success(), "serve must not start");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot use etcd at https://127.0.0.1:"), "{stderr}");
}

#[test]
fn two_replicas_on_one_etcd_see_each_other_s_writes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (etcd, a) = start(dir.path());
    let b = Served::start(&dir.path().join("serve-b"), &["--storage", "etcd", "--etcd-servers", &etcd.url()]);
    apply_widgets(dir.path(), &a);
    // B's CRD controller learns of the CRD from its etcd watch.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !kubectl(&b, &["get", "widgets"]).status.success() {
        assert!(Instant::now() < deadline, "replica B never served the CRD created through A");
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(versions(&b), versions(&a), "both read the same objects at the same resourceVersions");

    let list: Value =
        serde_json::from_str(&ok(&a, &["get", "--raw", &format!("/apis/{GROUP}/v1/widgets")])).expect("a list");
    let before = list["metadata"]["resourceVersion"].as_str().expect("the list's resourceVersion").to_string();
    let doc = json!({"apiVersion": format!("{GROUP}/v1"), "kind": "Widget",
        "metadata": {"name": "w3", "namespace": "default"}, "spec": {"size": 3}});
    ok(&b, &["apply", "-f", &write_file(dir.path(), "w3.json", &doc.to_string())]);
    let path = format!("/apis/{GROUP}/v1/namespaces/default/widgets?watch=1&resourceVersion={before}&timeoutSeconds=2");
    let events = ok(&a, &["get", "--raw", &path]);
    let event: Value = serde_json::from_str(events.lines().next().unwrap_or_default()).expect("an event");
    assert_eq!((event["type"].as_str(), event["object"]["metadata"]["name"].as_str()), (Some("ADDED"), Some("w3")));
}

/// What the oracle answered for resourceVersions its watch cache had not reached
/// (recorded with curl from kube-apiserver 1.32.13 on etcd 3.4.23).
const TOO_LARGE_GOLDEN: &str = include_str!("etcd_goldens/too_large_resource_version.json");

/// `current: N` names each server's own revision.
fn without_current(message: &str) -> String {
    regex::Regex::new(r"current: \d+").expect("regex").replace(message, "current: N").into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resource_version_the_cache_has_not_reached_is_answered_as_kube_answers_it() {
    use http_body_util::BodyExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let (_etcd, served) = start(dir.path());
    let client = client(&served).await;
    let golden: Value = serde_json::from_str(TOO_LARGE_GOLDEN).expect("golden");
    for answer in golden["answers"].as_array().expect("answers") {
        let path = answer["path"].as_str().expect("path");
        let started = Instant::now();
        let request = http::Request::get(path).body(kube::client::Body::empty()).expect("request");
        let response = client.send(request).await.expect("an answer");
        let code = response.status().as_u16();
        let retry_after = response.headers().get("retry-after").map(|v| v.to_str().unwrap_or_default().to_string());
        let body = response.into_body().collect().await.expect("body").to_bytes();
        assert_eq!(code, answer["code"], "{path}");
        assert_eq!(retry_after.unwrap_or_default(), answer["retryAfter"], "{path}");
        if code == 200 {
            // A watch from a revision not reached yet waits for it: nothing until it ends.
            assert_eq!(String::from_utf8_lossy(&body), answer["body"].as_str().expect("body"), "{path}");
            assert!(started.elapsed() >= Duration::from_secs(4), "held open until timeoutSeconds: {path}");
            continue;
        }
        // kube's watch cache waits 3 s for the revision before answering.
        assert!(started.elapsed() >= Duration::from_secs(3), "answered after {:?}: {path}", started.elapsed());
        let mut ours: Value = serde_json::from_slice(&body).expect("a Status");
        let mut theirs = answer["body"].clone();
        for status in [&mut ours, &mut theirs] {
            let message = without_current(status["message"].as_str().unwrap_or_default());
            status["message"] = Value::from(message);
        }
        assert_eq!(ours, theirs, "{path}");
    }
}

/// The replica (index into `replicas`) whose process holds the controllers' Lease, once one does.
fn leader(replicas: &[&Served], ask: &Served) -> Option<usize> {
    let out = kubectl(
        ask,
        &["get", "lease", "-n", "kube-system", "kubectl-crd-controllers", "-o", "jsonpath={.spec.holderIdentity}"],
    );
    let holder = String::from_utf8_lossy(&out.stdout).into_owned();
    let pid = holder.split('_').nth(1)?.parse::<u32>().ok()?;
    replicas.iter().position(|r| r.pid() == pid)
}

fn wait_for_leader(replicas: &[&Served], ask: &Served, within: Duration) -> usize {
    let deadline = Instant::now() + within;
    loop {
        if let Some(i) = leader(replicas, ask) {
            return i;
        }
        assert!(Instant::now() < deadline, "no replica leads after {within:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn serve_replica(dir: &Path, etcd: &EtcdProcess, name: &str) -> Served {
    Served::start(&dir.join(name), &["--storage", "etcd", "--etcd-servers", &etcd.url()])
}

#[test]
fn one_replica_leads_and_another_takes_over_within_the_lease_when_it_dies() {
    let dir = tempfile::tempdir().expect("tempdir");
    let etcd = etcd_in(dir.path());
    let mut replicas = [Some(serve_replica(dir.path(), &etcd, "a")), Some(serve_replica(dir.path(), &etcd, "b"))];
    let both: Vec<&Served> = replicas.iter().flatten().collect();
    let first = wait_for_leader(&both, both[0], Duration::from_secs(10));
    assert_eq!(leader(&both, both[1]), Some(first), "both replicas see the same leader");
    let survivor_pid = both[1 - first].pid();

    // The leader dies without a word (SIGKILL): its etcd lease expires, the other takes over.
    drop(replicas[first].take());
    let killed = Instant::now();
    let survivor = replicas[1 - first].take().expect("the other replica");
    let deadline = killed + kubectl_crd_engine::store::ETCD_LEASE_TTL + Duration::from_secs(3);
    loop {
        if leader(&[&survivor], &survivor) == Some(0) {
            break;
        }
        assert!(Instant::now() < deadline, "no takeover within the lease ({:?})", killed.elapsed());
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(survivor.pid(), survivor_pid);
    // The new leader runs the CRD controller's writes: a new CRD becomes Established.
    apply_widgets(dir.path(), &survivor);
    assert!(versions(&survivor).contains("w2="));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crd_is_established_only_once_every_replica_serves_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let etcd = etcd_in(dir.path());
    let replicas: Vec<Served> = ["a", "b", "c"].iter().map(|n| serve_replica(dir.path(), &etcd, n)).collect();
    let mut clients = Vec::new();
    for served in &replicas {
        clients.push(client(served).await);
    }
    let crds: Api<DynamicObject> = Api::all_with(clients[0].clone(), &crd_resource());
    for round in 0..4 {
        let kind = format!("Gizmo{round}");
        let seen = create_until_established(&crds, &kind).await;
        // Established: every replica serves the kind, at once.
        let resource = ApiResource {
            group: GROUP.into(),
            version: "v1".into(),
            api_version: format!("{GROUP}/v1"),
            kind: kind.clone(),
            plural: format!("{}s", kind.to_lowercase()),
        };
        let creates = clients.iter().enumerate().map(|(i, c)| {
            let api: Api<DynamicObject> = Api::namespaced_with(c.clone(), "default", &resource);
            let obj = DynamicObject::new(&format!("from-{i}"), &resource).data(json!({"spec": {"size": i}}));
            async move { api.create(&PostParams::default(), &obj).await.map(|_| ()) }
        });
        let results = futures::future::join_all(creates).await;
        for (i, r) in results.into_iter().enumerate() {
            if let Err(e) = r {
                panic!(
                    "round {round}: a create on replica {i} right after Established failed: {e} (conditions {seen:?})"
                );
            }
        }
        assert_eq!(
            seen.first().map(String::as_str),
            Some("False/Installing"),
            "held while replicas caught up: {seen:?}"
        );
    }
}

/// Creates the CRD of `kind` through `crds` and follows it until it is Established: the
/// `status/reason` of every Established condition it went through.
async fn create_until_established(crds: &Api<DynamicObject>, kind: &str) -> Vec<String> {
    let crd = CrdBuilder::new(GROUP, kind).build();
    let name = crd["metadata"]["name"].as_str().expect("name").to_string();
    let crd: DynamicObject = serde_json::from_value(crd).expect("a CRD");
    let from = crds.list_metadata(&Default::default()).await.expect("list").metadata.resource_version;
    let params = kube::api::WatchParams::default().fields(&format!("metadata.name={name}"));
    let mut changes = crds.watch(&params, from.as_deref().unwrap_or("0")).await.expect("watch").boxed();
    crds.create(&PostParams::default(), &crd).await.expect("CRD created");
    let mut seen: Vec<String> = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(30), changes.next())
            .await
            .unwrap_or_else(|_| panic!("{name} never Established: {seen:?}"))
            .expect("the watch goes on")
            .expect("an event");
        let (kube::api::WatchEvent::Added(got) | kube::api::WatchEvent::Modified(got)) = event else { continue };
        let established = got.data["status"]["conditions"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["type"] == "Established").cloned());
        if let Some(c) = established {
            seen.push(format!("{}/{}", c["status"].as_str().unwrap_or(""), c["reason"].as_str().unwrap_or("")));
            if c["status"] == "True" {
                return seen;
            }
        }
    }
}

/// The name of the heartbeat Lease of the replica with process id `pid`, as `ask` lists them.
fn heartbeat_of(ask: &Served, pid: u32) -> String {
    let each = "{range .items[*]}{.metadata.name} {.spec.holderIdentity}{\"\\n\"}{end}";
    let leases = ok(ask, &["get", "lease", "-n", "kube-system", "-o", &format!("jsonpath={each}")]);
    let heartbeat = leases.lines().find_map(|line| {
        let (name, holder) = line.split_once(' ')?;
        let ours = name.starts_with("kubectl-crd-serve-") && holder.split('_').nth(1) == Some(&pid.to_string());
        ours.then(|| name.to_string())
    });
    heartbeat.unwrap_or_else(|| panic!("no heartbeat of {pid} in {leases}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_killed_without_a_word_does_not_hold_a_new_crd_until_its_lease_expires() {
    let dir = tempfile::tempdir().expect("tempdir");
    let etcd = etcd_in(dir.path());
    let mut replicas = [Some(serve_replica(dir.path(), &etcd, "a")), Some(serve_replica(dir.path(), &etcd, "b"))];
    let both: Vec<&Served> = replicas.iter().flatten().collect();
    let first = wait_for_leader(&both, both[0], Duration::from_secs(10));
    let leader = replicas[first].take().expect("the leader");
    let other = replicas[1 - first].take().expect("the other replica");
    let heartbeat = heartbeat_of(&leader, other.pid());

    // The other replica dies (SIGKILL): its heartbeat stays in etcd until its lease expires.
    drop(other);
    let killed = Instant::now();
    let crds: Api<DynamicObject> = Api::all_with(client(&leader).await, &crd_resource());
    let seen = create_until_established(&crds, "Gadget").await;
    let still_there = kubectl(&leader, &["get", "lease", "-n", "kube-system", &heartbeat]);
    assert!(
        still_there.status.success(),
        "Established ({seen:?}) {:?} after the kill, only once the dead replica's lease expired: {}",
        killed.elapsed(),
        String::from_utf8_lossy(&still_there.stderr)
    );
}

fn crd_resource() -> ApiResource {
    ApiResource {
        group: "apiextensions.k8s.io".into(),
        version: "v1".into(),
        api_version: "apiextensions.k8s.io/v1".into(),
        kind: "CustomResourceDefinition".into(),
        plural: "customresourcedefinitions".into(),
    }
}

#[test]
fn a_leader_stopped_gracefully_hands_over_at_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let etcd = etcd_in(dir.path());
    let replicas = [serve_replica(dir.path(), &etcd, "a"), serve_replica(dir.path(), &etcd, "b")];
    let both: Vec<&Served> = replicas.iter().collect();
    let first = wait_for_leader(&both, both[0], Duration::from_secs(10));
    let other = both[1 - first];
    let stopped = Instant::now();
    let term = Command::new("kill").args(["-TERM", &both[first].pid().to_string()]).status().expect("kill");
    assert!(term.success());
    // It revokes its etcd lease as it stops: no waiting for the lease to expire.
    let deadline = stopped + Duration::from_secs(4);
    while leader(&[other], other) != Some(0) {
        assert!(Instant::now() < deadline, "no handover {:?} after a graceful stop", stopped.elapsed());
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(stopped.elapsed() < kubectl_crd_engine::store::ETCD_LEASE_TTL / 2, "{:?}", stopped.elapsed());
}
