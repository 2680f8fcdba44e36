//! `kubectl crd serve` as users meet it: a real process on a real socket, talked to by the
//! real kubectl and by kube-rs through the kubeconfig it writes. Every server binds
//! 127.0.0.1 on port 0 in its own temporary data directory, is found through its ready line,
//! and is killed when its [`Served`] handle drops. Every wait is bounded.

use base64::Engine as _;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_kubectl-crd");
const STARTUP: Duration = Duration::from_secs(30);
const EXIT: Duration = Duration::from_secs(10);

/// A running `kubectl-crd serve`, killed on drop.
struct Served {
    child: Child,
    url: String,
    kubeconfig: PathBuf,
    /// Everything the server wrote to stderr, collected in the background.
    stderr: mpsc::Receiver<String>,
}

impl Served {
    /// Starts `serve` on a free port with `dir` as its data directory and waits for the ready
    /// line.
    fn start(dir: &Path, extra: &[&str]) -> Served {
        let mut child = serve_command(dir, extra).spawn().expect("spawn kubectl-crd serve");
        let stdout = child.stdout.take().expect("stdout");
        let stderr = collect(child.stderr.take().expect("stderr"));
        let (lines_tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if lines_tx.send(line).is_err() {
                    break;
                }
            }
        });
        let line = match lines.recv_timeout(STARTUP) {
            Ok(line) => line,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("no ready line within {STARTUP:?}; stderr: {}", stderr.recv_timeout(EXIT).unwrap_or_default());
            }
        };
        let (url, kubeconfig) = parse_ready_line(&line).unwrap_or_else(|| panic!("not a ready line: {line:?}"));
        Served { child, url, kubeconfig, stderr }
    }

    /// Sends SIGTERM and waits (bounded) for the exit; gives the status and what the server
    /// wrote to stderr.
    fn terminate(mut self) -> (ExitStatus, String) {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status().expect("run kill");
        assert!(sent.success(), "kill -TERM {pid} failed");
        let status = wait_bounded(&mut self.child, EXIT)
            .unwrap_or_else(|| panic!("serve did not exit within {EXIT:?} of SIGTERM"));
        (status, self.stderr.recv_timeout(EXIT).unwrap_or_default())
    }

    fn kubectl(&self, args: &[&str]) -> Output {
        kubectl(&self.kubeconfig, args)
    }

    fn kubeconfig_text(&self) -> String {
        std::fs::read_to_string(&self.kubeconfig).expect("read kubeconfig")
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve_command(dir: &Path, extra: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir)
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Reads a pipe to its end on a thread; the text arrives on the channel.
fn collect(mut pipe: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = pipe.read_to_string(&mut text);
        let _ = tx.send(text);
    });
    rx
}

/// `kubectl crd serve: ready on URL (kubeconfig: PATH)` → (URL, PATH).
fn parse_ready_line(line: &str) -> Option<(String, PathBuf)> {
    let rest = line.strip_prefix("kubectl crd serve: ready on ")?;
    let (url, rest) = rest.split_once(" (kubeconfig: ")?;
    Some((url.to_string(), PathBuf::from(rest.strip_suffix(')')?)))
}

fn wait_bounded(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return Some(status);
        }
        if Instant::now() > deadline {
            return None;
        }
        // Polling a child's exit: there is no readiness signal to wait on instead.
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs a command to completion, killing it if it takes longer than `limit`.
fn output_bounded(mut cmd: Command, limit: Duration) -> Output {
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
    let stdout = collect(child.stdout.take().expect("stdout"));
    let stderr = collect(child.stderr.take().expect("stderr"));
    let status = wait_bounded(&mut child, limit).unwrap_or_else(|| {
        let _ = child.kill();
        panic!("{cmd:?} did not finish within {limit:?}")
    });
    let text = |rx: mpsc::Receiver<String>| rx.recv_timeout(EXIT).unwrap_or_default().into_bytes();
    Output { status, stdout: text(stdout), stderr: text(stderr) }
}

fn kubectl(kubeconfig: &Path, args: &[&str]) -> Output {
    let mut cmd = crate::support::kubectl::kubectl_for(kubeconfig);
    cmd.args(["--request-timeout", "20s"]).args(args);
    output_bounded(cmd, Duration::from_secs(30))
}

fn assert_success(what: &str, out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{what} failed ({}):\nstdout: {stdout}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Runs a `serve` that must not start: it exits non-zero without a ready line. Gives stderr.
fn refused(cmd: Command) -> String {
    let out = output_bounded(cmd, STARTUP);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "serve should have failed; stderr: {stderr}");
    assert!(out.stdout.is_empty(), "no ready line: {}", String::from_utf8_lossy(&out.stdout));
    stderr
}

fn yaml(text: &str) -> serde_json::Value {
    serde_saphyr::from_str(text).expect("kubeconfig is YAML")
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).expect("metadata").permissions().mode() & 0o777
}

async fn kube_client(kubeconfig: kube::config::Kubeconfig) -> kube::Client {
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &kube::config::KubeConfigOptions::default())
        .await
        .expect("kube-rs accepts the kubeconfig");
    kube::Client::try_from(config).expect("client")
}

fn read_kubeconfig(path: &Path) -> kube::config::Kubeconfig {
    kube::config::Kubeconfig::read_from(path).expect("kube-rs reads the kubeconfig")
}

#[test]
fn kubectl_talks_to_it_over_tls_with_the_written_kubeconfig() {
    let dir = tempfile::tempdir().expect("tempdir");
    let served = Served::start(dir.path(), &[]);
    assert!(served.url.starts_with("https://127.0.0.1:"), "{}", served.url);
    assert!(!served.url.ends_with(":0"), "the real port is shown: {}", served.url);
    assert_eq!(served.kubeconfig, dir.path().join("kubeconfig"));

    let out = assert_success("kubectl version", &served.kubectl(&["version", "-o", "json"]));
    let version: serde_json::Value = serde_json::from_str(&out).expect("kubectl prints JSON");
    assert_eq!(version["serverVersion"]["major"], "1", "{version}");
    assert_eq!(version["serverVersion"]["minor"], "32", "{version}");

    let out = assert_success("kubectl get --raw /healthz", &served.kubectl(&["get", "--raw", "/healthz"]));
    assert_eq!(out.trim(), "ok");
}

#[test]
fn kubeconfig_and_token_are_private_and_complete() {
    let dir = tempfile::tempdir().expect("tempdir");
    let served = Served::start(dir.path(), &[]);
    let doc = yaml(&served.kubeconfig_text());
    assert_eq!(doc["current-context"], "kubectl-crd");
    assert_eq!(doc["clusters"][0]["name"], "kubectl-crd");
    assert_eq!(doc["clusters"][0]["cluster"]["server"], served.url.as_str());
    let ca = doc["clusters"][0]["cluster"]["certificate-authority-data"].as_str().expect("certificate-authority-data");
    let ca = base64::engine::general_purpose::STANDARD.decode(ca).expect("base64");
    assert_eq!(ca, std::fs::read(dir.path().join("ca.crt")).expect("ca.crt"), "the kubeconfig trusts the kept CA");
    let token = doc["users"][0]["user"]["token"].as_str().expect("token");
    let kept = std::fs::read_to_string(dir.path().join("token")).expect("DIR/token");
    assert_eq!(token, kept.trim());
    assert!(token.len() >= 43, "32 random bytes or more: {token}");
    #[cfg(unix)]
    for file in [
        served.kubeconfig.as_path(),
        &dir.path().join("token"),
        &dir.path().join("ca.key"),
        &dir.path().join("tls.key"),
    ] {
        assert_eq!(mode(file), 0o600, "{}", file.display());
    }
}

#[tokio::test]
async fn requests_without_the_token_get_kube_apiservers_401() {
    let dir = tempfile::tempdir().expect("tempdir");
    let served = Served::start(dir.path(), &[]);
    let mut config = read_kubeconfig(&served.kubeconfig);
    for user in &mut config.auth_infos {
        if let Some(info) = user.auth_info.as_mut() {
            info.token = None;
        }
    }
    let client = kube_client(config).await;

    let err =
        client.request_text(http::Request::get("/version").body(Vec::new()).expect("request")).await.expect_err("401");
    match err {
        kube::Error::Api(status) => {
            assert_eq!(status.code, 401, "{status:?}");
            assert_eq!(status.reason, "Unauthorized", "{status:?}");
            assert_eq!(status.message, "Unauthorized", "{status:?}");
        }
        other => panic!("expected a 401 Status, got {other:?}"),
    }

    // The whole answer, as kube-apiserver 1.32 gives it (reference 57-no-token-401.http).
    let request = http::Request::get("/apis/stable.example.com/v1/namespaces/default/widgets")
        .body(kube::client::Body::empty())
        .expect("request");
    let response = client.send(request).await.expect("an HTTP answer");
    assert_eq!(response.status(), 401);
    assert_eq!(response.headers()["content-type"], "application/json");
    assert_eq!(response.headers()["cache-control"], "no-cache, private");
    let body = http_body_util::BodyExt::collect(response.into_body()).await.expect("body").to_bytes();
    let body: serde_json::Value = serde_json::from_slice(&body).expect("JSON body");
    assert_eq!(
        body,
        serde_json::json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "Unauthorized", "reason": "Unauthorized", "code": 401})
    );
}

#[test]
fn a_restart_keeps_the_ca_and_the_token() {
    let dir = tempfile::tempdir().expect("tempdir");
    let first = Served::start(dir.path(), &[]);
    let before = yaml(&first.kubeconfig_text());
    let (status, stderr) = first.terminate();
    assert!(status.success(), "{status}: {stderr}");

    let second = Served::start(dir.path(), &[]);
    let after = yaml(&second.kubeconfig_text());
    let ca = |doc: &serde_json::Value| doc["clusters"][0]["cluster"]["certificate-authority-data"].clone();
    let token = |doc: &serde_json::Value| doc["users"][0]["user"]["token"].clone();
    assert!(ca(&before).is_string());
    assert_eq!(ca(&before), ca(&after), "same CA after a restart");
    assert_eq!(token(&before), token(&after), "same token after a restart");
    assert_success("kubectl after a restart", &second.kubectl(&["get", "--raw", "/readyz"]));
}

#[test]
fn a_second_server_on_the_same_directory_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let first = Served::start(dir.path(), &[]);
    let stderr = refused(serve_command(dir.path(), &[]));
    assert!(stderr.contains("is already being served"), "{stderr}");
    assert!(stderr.contains("--data-dir"), "{stderr}");
    // The first one is undisturbed.
    assert_success("kubectl on the first server", &first.kubectl(&["get", "--raw", "/healthz"]));
}

#[test]
fn a_second_memory_server_on_the_same_directory_is_refused_too() {
    let dir = tempfile::tempdir().expect("tempdir");
    let first = Served::start(dir.path(), &["--storage", "memory"]);
    let stderr = refused(serve_command(dir.path(), &["--storage", "memory"]));
    assert!(stderr.contains("is already being served"), "{stderr}");
    assert_success("kubectl on the first server", &first.kubectl(&["get", "--raw", "/healthz"]));
}

#[test]
fn sigterm_stops_it_cleanly_and_promptly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let served = Served::start(dir.path(), &[]);
    assert_success("kubectl before SIGTERM", &served.kubectl(&["get", "--raw", "/livez"]));
    let started = Instant::now();
    let (status, stderr) = served.terminate();
    assert_eq!(status.code(), Some(0), "exit status after SIGTERM: {status}; stderr: {stderr}");
    assert!(!stderr.contains("error"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
    // The data directory is free again: a new server starts on it at once.
    let again = Served::start(dir.path(), &[]);
    assert_success("kubectl after the restart", &again.kubectl(&["get", "--raw", "/healthz"]));
}

#[test]
fn insecure_http_serves_plain_http() {
    let dir = tempfile::tempdir().expect("tempdir");
    let served = Served::start(dir.path(), &["--insecure-http"]);
    assert!(served.url.starts_with("http://127.0.0.1:"), "{}", served.url);
    let doc = yaml(&served.kubeconfig_text());
    assert_eq!(doc["clusters"][0]["cluster"]["server"], served.url.as_str());
    assert!(doc["clusters"][0]["cluster"].get("certificate-authority-data").is_none(), "{doc}");
    // kubectl sends no credentials over plain HTTP, so this mode has none to check.
    assert!(doc["users"][0]["user"].get("token").is_none(), "{doc}");
    let out = assert_success("kubectl version over HTTP", &served.kubectl(&["version", "-o", "json"]));
    let version: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(version["serverVersion"]["major"], "1");
    assert_eq!(version["serverVersion"]["minor"], "32");
}

#[test]
fn insecure_http_is_refused_off_loopback() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cmd = Command::new(BIN);
    cmd.args(["serve", "--insecure-http", "--listen", "0.0.0.0:0", "--data-dir"]).arg(dir.path());
    let stderr = refused(cmd);
    assert!(stderr.contains("only on loopback addresses"), "{stderr}");
}

#[tokio::test]
async fn kube_rs_connects_with_the_written_kubeconfig() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("elsewhere").join("kc.yaml");
    let served = Served::start(dir.path(), &["--write-kubeconfig", kubeconfig.to_str().expect("utf-8 path")]);
    assert_eq!(served.kubeconfig, kubeconfig);
    let client = kube_client(read_kubeconfig(&served.kubeconfig)).await;
    let version = tokio::time::timeout(Duration::from_secs(20), client.apiserver_version())
        .await
        .expect("answers in time")
        .expect("version");
    assert_eq!(version.major, "1");
    assert_eq!(version.minor, "32");
}

#[test]
fn a_bad_listen_address_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cmd = Command::new(BIN);
    cmd.args(["serve", "--listen", "6443", "--data-dir"]).arg(dir.path());
    let stderr = refused(cmd);
    assert!(stderr.contains("invalid --listen \"6443\"") && stderr.contains("127.0.0.1:6443"), "{stderr}");
}

/// client-go's way of watching: HTTP/2 by ALPN, every watch a stream of one connection.
/// The server coalesces the streams' writes; every stream must still get every event, in
/// order, and promptly.
#[tokio::test]
async fn many_watches_on_one_http2_connection_each_get_every_event() {
    use futures::{StreamExt, TryStreamExt};
    use rustls::pki_types::pem::PemObject;
    const STREAMS: usize = 20;
    const CHANGES: usize = 5;
    rustls::crypto::ring::default_provider().install_default().ok();
    let dir = tempfile::tempdir().expect("tempdir");
    let served = Served::start(dir.path(), &[]);
    let ca = std::fs::read(dir.path().join("ca.crt")).expect("ca.crt");
    let mut roots = rustls::RootCertStore::empty();
    roots.add(rustls::pki_types::CertificateDer::from_pem_slice(&ca).expect("CA")).expect("root");
    let mut tls = rustls::ClientConfig::builder().with_root_certificates(roots).with_no_client_auth();
    tls.alpn_protocols = vec![b"h2".to_vec()];
    let addr: std::net::SocketAddr = served.url.trim_start_matches("https://").parse().expect("address");
    let tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let name = rustls::pki_types::ServerName::IpAddress(addr.ip().into());
    let tls = tokio_rustls::TlsConnector::from(std::sync::Arc::new(tls)).connect(name, tcp).await.expect("TLS");
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]), "the server speaks HTTP/2");
    let (send, conn) =
        hyper::client::conn::http2::handshake(hyper_util::rt::TokioExecutor::new(), hyper_util::rt::TokioIo::new(tls))
            .await
            .expect("HTTP/2 handshake");
    tokio::spawn(conn);
    let token = std::fs::read_to_string(dir.path().join("token")).expect("token");

    let mut watches = Vec::new();
    for _ in 0..STREAMS {
        let req = http::Request::get(format!("{}/api/v1/namespaces/default/configmaps?watch=1", served.url))
            .header("authorization", format!("Bearer {}", token.trim()))
            .body(http_body_util::Empty::<bytes::Bytes>::new())
            .expect("request");
        let res = send.clone().send_request(req).await.expect("watch");
        assert!(res.status().is_success(), "watch: {}", res.status());
        let body = http_body_util::BodyStream::new(res.into_body())
            .try_filter_map(|frame| futures::future::ready(Ok(frame.into_data().ok())))
            .map_err(std::io::Error::other)
            .into_async_read();
        watches.push(futures::AsyncBufReadExt::lines(body));
    }
    let client = kube_client(read_kubeconfig(&served.kubeconfig)).await;
    let api: kube::Api<k8s_openapi::api::core::v1::ConfigMap> = kube::Api::namespaced(client, "default");
    for i in 0..CHANGES {
        let cm = serde_json::from_value(serde_json::json!({"metadata": {"name": format!("cm-{i}")}})).expect("cm");
        api.create(&kube::api::PostParams::default(), &cm).await.expect("create");
    }
    for (w, lines) in watches.iter_mut().enumerate() {
        for i in 0..CHANGES {
            let line = tokio::time::timeout(Duration::from_secs(10), lines.next())
                .await
                .unwrap_or_else(|_| panic!("watch {w} waited too long for event {i}"))
                .expect("the watch is open")
                .expect("a line");
            let event: serde_json::Value = serde_json::from_str(&line).expect("JSON event");
            assert_eq!(event["type"], "ADDED", "watch {w}: {line}");
            assert_eq!(event["object"]["metadata"]["name"], format!("cm-{i}"), "watch {w}: {line}");
        }
    }
}

/// Issue 25: a CRD whose rules kube refuses at registration (a 3000-term sum, deeper than
/// cel-go parses; a triple-nested `all` over an unbounded list, far over its cost budget)
/// can still be in a data directory written by an older version. Creating its objects is
/// answered with errors in bounded time, and the server survives, across restarts.
#[tokio::test]
async fn a_stored_crd_with_rules_kube_refuses_does_not_take_the_server_down() {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    use kube::api::{Api, ApiResource, DynamicObject, PostParams};
    let dir = tempfile::tempdir().expect("tempdir");
    let served = Served::start(dir.path(), &[]);
    let crds: Api<CustomResourceDefinition> = Api::all(kube_client(read_kubeconfig(&served.kubeconfig)).await);
    let crd = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "widgets.cel.example.com"},
        "spec": {"group": "cel.example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                "type": "object", "properties": {"spec": {"type": "object", "properties": {
                    "tags": {"type": "array", "items": {"type": "string"}}}}}}}}]}
    }))
    .expect("CRD");
    crds.create(&PostParams::default(), &crd).await.expect("a CRD without rules is accepted");
    let (status, stderr) = served.terminate();
    assert!(status.success(), "{status}: {stderr}");

    let sum = format!("{} > 0", vec!["1"; 3000].join("+"));
    let triple = "self.tags.all(a, self.tags.all(b, self.tags.all(c, a == b || b == c || a != c)))";
    plant_rules(
        &dir.path().join("store.redb"),
        "widgets.cel.example.com",
        serde_json::json!([{"rule": sum}, {"rule": triple}]),
    )
    .await;

    let served = Served::start(dir.path(), &[]);
    let client = kube_client(read_kubeconfig(&served.kubeconfig)).await;
    let widgets = ApiResource {
        group: "cel.example.com".into(),
        version: "v1".into(),
        api_version: "cel.example.com/v1".into(),
        kind: "Widget".into(),
        plural: "widgets".into(),
    };
    let api: Api<DynamicObject> = Api::namespaced_with(client, "default", &widgets);
    // About 1 KiB, as in the issue: 250 one-letter tags.
    let widget: DynamicObject = serde_json::from_value(serde_json::json!({
        "apiVersion": "cel.example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
        "spec": {"tags": vec!["a"; 250]}
    }))
    .expect("widget");
    let dry_run = PostParams { dry_run: true, ..Default::default() };
    let started = Instant::now();
    let err = tokio::time::timeout(Duration::from_secs(60), api.create(&dry_run, &widget))
        .await
        .expect("answered in time")
        .expect_err("refused");
    let elapsed = started.elapsed();
    let kube::Error::Api(status) = err else { panic!("an API error: {err}") };
    assert_eq!(status.code, 422, "{status:?}");
    let message = &status.message;
    assert!(
        message.contains("spec: Invalid value: \"object\": rule compile error: compilation failed: ERROR: <input>:-1:0: max recursion depth exceeded"),
        "{message}"
    );
    assert!(
        message.contains(&format!("spec: Invalid value: \"object\": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: {triple}")),
        "{message}"
    );
    eprintln!("the refusal took {elapsed:?}");
    assert_success("readyz after the refusal", &served.kubectl(&["get", "--raw", "/readyz"]));
    let (status, stderr) = served.terminate();
    assert!(status.success(), "the server survived: {status}: {stderr}");

    let served = Served::start(dir.path(), &[]);
    let listed = assert_success("kubectl get widgets after a restart", &served.kubectl(&["get", "widgets", "-A"]));
    assert!(listed.is_empty() || listed.contains("No resources"), "{listed}");
    assert_success("kubectl get crd", &served.kubectl(&["get", "crd", "widgets.cel.example.com"]));
}

/// Writes `rules` onto the stored CRD's `spec` schema, as an older version could have
/// accepted them, straight into the (closed) data directory's database.
async fn plant_rules(db: &Path, crd: &str, rules: serde_json::Value) {
    use kubectl_crd_engine::store::{ListOptions, LocalStore, Store};
    let store = LocalStore::redb(db).expect("the database opens");
    let page = store.list("/registry/", &ListOptions::default()).await.expect("list");
    let kv = page
        .items
        .into_iter()
        .find(|kv| kv.key.contains("customresourcedefinitions") && kv.key.ends_with(&format!("/{crd}")))
        .expect("the CRD is stored");
    let mut stored: serde_json::Value = serde_json::from_slice(&kv.value).expect("JSON");
    stored["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["x-kubernetes-validations"] =
        rules;
    let value = serde_json::to_vec(&stored).expect("JSON");
    store.update(&kv.key, value.into(), Some(kv.mod_revision)).await.expect("update");
    store.close().await;
}
