//! `cargo bench --bench engine_http`: the engine as a client sees it, over HTTPS on
//! loopback, against the real `kubectl-crd serve` binary in a child process.
//!
//! Prints: time from process start to the ready line; creates/s and updates/s with 16
//! concurrent clients (10,000 custom resources stored); list latency of all 10,000
//! (p50/p99); watch event latency with 100 watchers (from the start of the write to the
//! event reaching each watcher; p50/p99 over 1,000 writes made after 50 unmeasured ones),
//! once as kube-rs watches (HTTP/1.1, a connection per watch) and once as client-go does
//! (HTTP/2, every watch a stream of one connection), each with when the first and the
//! last watcher of a write had it (the difference is the fan-out) and the writes' own
//! round trip; the server's resident memory with 10,000 objects; and two floors under every
//! watched write: the same HTTP/1.1 watches served by a bare server that does nothing but
//! make the write durable and fan the engine's own event line out (`floor.rs`: what this
//! machine charges any server), and what the disk alone takes to make 4 KiB durable.
//! Figures only; nothing asserts a time.

#[path = "shared/allocator.rs"]
mod allocator;
#[path = "engine_http/floor.rs"]
mod floor;
#[path = "shared/served.rs"]
mod served;
#[path = "shared/widget.rs"]
mod widget;

use futures::{StreamExt, TryStreamExt};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use kubectl_crd::cluster::registrations::{Establishment, wait_for_established};
use serde_json::json;
use served::{Served, connect, ms, percentile, rss_mib, serve, settled_rss_mib, stop};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const OBJECTS: usize = 10_000;
const CLIENTS: usize = 16;
const WATCHERS: usize = 100;
/// Enough writes that the p99 stands on the slowest ten, not on one or two.
const WATCHED_WRITES: usize = 1000;
/// Writes made before the measured ones, as any benchmark warms up: the first writes after
/// the watches open pay one-time costs (each connection's first event grows its buffers,
/// pages are touched for the first time), and were up to a third of a run's slow writes.
const WARMUP_WRITES: usize = 50;
/// The pause after each watched write: the fan-outs of two writes never overlap.
const PACE: Duration = Duration::from_millis(5);

fn now_micros() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_micros()).unwrap_or(0)
}

async fn register(client: &kube::Client) -> Api<DynamicObject> {
    let crds: Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
        Api::all(client.clone());
    crds.create(&PostParams::default(), &serde_json::from_value(widget::crd()).expect("crd")).await.expect("crd");
    // The engine routes a kind before it announces it Established.
    let established = wait_for_established(client, widget::CRD, Duration::from_secs(10)).await.expect("the CRD");
    assert!(matches!(established, Establishment::Established), "{established:?}");
    widgets(client)
}

/// The widgets of namespace `default`.
fn widgets(client: &kube::Client) -> Api<DynamicObject> {
    let ar = ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("stable.example.com", "v1", "Widget"), "widgets");
    Api::namespaced_with(client.clone(), "default", &ar)
}

/// Widget `w-{i:05}` as kube-rs sends it.
fn widget_object(i: usize) -> DynamicObject {
    serde_json::from_value(widget::widget(i)).expect("widget")
}

/// Runs `total` operations split across CLIENTS tasks; returns operations per second.
async fn concurrently<F, Fut>(total: usize, op: F) -> f64
where
    F: Fn(usize) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let op = Arc::new(op);
    let start = Instant::now();
    let tasks: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let op = op.clone();
            tokio::spawn(async move {
                let mut i = c;
                while i < total {
                    op(i).await;
                    i += CLIENTS;
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.expect("task");
    }
    total as f64 / start.elapsed().as_secs_f64()
}

/// The bench's stamp in an event line: the write's start, in µs since the epoch. Found by
/// a byte search rather than by decoding the event, so the watchers spend on each line only
/// what reading it costs and the figure is the server's latency, not the bench's decoding.
fn sent_stamp(line: &str) -> Option<u128> {
    const KEY: &str = "\"bench/sent\":\"";
    let rest = &line[line.find(KEY)? + KEY.len()..];
    rest[..rest.find('"')?].parse().ok()
}

/// Sets one annotation on the widget `name` with a merge patch: each watched write.
async fn annotate(api: &Api<DynamicObject>, name: &str, key: &str, value: String) {
    let patch = json!({"metadata": {"annotations": {key: value}}});
    api.patch(name, &PatchParams::default(), &Patch::Merge(patch)).await.expect("patch");
}

/// A watch as the lines of its response body.
type Lines = futures::stream::BoxStream<'static, std::io::Result<String>>;

/// What one transport's watches measured, each list sorted.
struct Watched {
    /// Every watcher's latency for every write.
    events: Vec<Duration>,
    /// Per write, the first and the last watcher's.
    first: Vec<Duration>,
    last: Vec<Duration>,
    /// The writes' own round trips.
    writes: Vec<Duration>,
}

/// Event latencies with the watches opened by `open` (at the current resourceVersion).
async fn watch_latency<F, Fut>(api: &Api<DynamicObject>, open: F) -> Watched
where
    F: Fn(String) -> Fut,
    Fut: std::future::Future<Output = Lines>,
{
    let rv = api.list(&ListParams::default().limit(1)).await.expect("list").metadata.resource_version.expect("rv");
    let mut watchers = Vec::new();
    for _ in 0..WATCHERS {
        let uri = format!(
            "/apis/stable.example.com/v1/namespaces/default/widgets?watch=1&resourceVersion={rv}&timeoutSeconds=60"
        );
        let mut lines = open(uri).await;
        watchers.push(tokio::spawn(async move {
            let mut seen = Vec::new();
            while seen.len() < WATCHED_WRITES {
                let Ok(Some(line)) = lines.try_next().await else { break };
                // The line has arrived: that is the moment measured.
                let arrived = now_micros();
                if let Some(sent) = sent_stamp(&line) {
                    seen.push((sent, Duration::from_micros(arrived.saturating_sub(sent) as u64)));
                }
            }
            seen
        }));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Objects the measured writes never touch, and no `bench/sent` stamp: the watchers see
    // these events and count none of them.
    for i in 0..WARMUP_WRITES {
        annotate(api, &format!("w-{:05}", OBJECTS - 1 - i), "bench/warmup", i.to_string()).await;
        tokio::time::sleep(PACE).await;
    }
    let mut writes = Vec::with_capacity(WATCHED_WRITES);
    for i in 0..WATCHED_WRITES {
        let start = Instant::now();
        annotate(api, &format!("w-{i:05}"), "bench/sent", now_micros().to_string()).await;
        writes.push(start.elapsed());
        tokio::time::sleep(PACE).await;
    }
    writes.sort();
    let mut events = Vec::new();
    let mut per_write: std::collections::HashMap<u128, (Duration, Duration)> = std::collections::HashMap::new();
    for w in watchers {
        for (sent, latency) in w.await.expect("watcher") {
            events.push(latency);
            let span = per_write.entry(sent).or_insert((latency, latency));
            *span = (span.0.min(latency), span.1.max(latency));
        }
    }
    events.sort();
    let (mut first, mut last): (Vec<_>, Vec<_>) = per_write.into_values().unzip();
    first.sort();
    last.sort();
    Watched { events, first, last, writes }
}

/// kube-rs's way: HTTP/1.1, one connection per watch.
async fn open_http1(client: &kube::Client, uri: String) -> Lines {
    use futures::AsyncBufReadExt;
    let req = http::Request::get(uri).body(Vec::new()).expect("request");
    let body = client.request_stream(req).await.expect("watch");
    body.lines().boxed()
}

/// client-go's way (kubectl, most controllers): HTTP/2 negotiated by ALPN, every watch a
/// stream of one connection.
struct Http2 {
    send: hyper::client::conn::http2::SendRequest<http_body_util::Empty<bytes::Bytes>>,
    token: String,
}

impl Http2 {
    async fn connect(served: &Served) -> Http2 {
        use rustls::pki_types::pem::PemObject;
        let dir = served.dir.path();
        let ca = std::fs::read(dir.join("ca.crt")).expect("ca.crt");
        let mut roots = rustls::RootCertStore::empty();
        roots.add(rustls::pki_types::CertificateDer::from_pem_slice(&ca).expect("CA")).expect("root");
        let mut config = rustls::ClientConfig::builder().with_root_certificates(roots).with_no_client_auth();
        config.alpn_protocols = vec![b"h2".to_vec()];
        let tcp = tokio::net::TcpStream::connect(served.addr).await.expect("connect");
        tcp.set_nodelay(true).expect("nodelay");
        let name = rustls::pki_types::ServerName::IpAddress(served.addr.ip().into());
        let tls = tokio_rustls::TlsConnector::from(Arc::new(config)).connect(name, tcp).await.expect("TLS");
        assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]), "the server speaks HTTP/2");
        let io = hyper_util::rt::TokioIo::new(tls);
        let (send, conn) = hyper::client::conn::http2::handshake(hyper_util::rt::TokioExecutor::new(), io)
            .await
            .expect("HTTP/2 handshake");
        tokio::spawn(conn);
        let token = std::fs::read_to_string(dir.join("token")).expect("token").trim().to_string();
        Http2 { send, token }
    }

    async fn open(&self, uri: String) -> Lines {
        use futures::AsyncBufReadExt;
        let req = http::Request::get(format!("https://{}{uri}", "127.0.0.1"))
            .header("authorization", format!("Bearer {}", self.token))
            .body(http_body_util::Empty::new())
            .expect("request");
        let res = self.send.clone().send_request(req).await.expect("watch");
        assert!(res.status().is_success(), "watch: {}", res.status());
        let bytes = http_body_util::BodyStream::new(res.into_body())
            .try_filter_map(|frame| futures::future::ready(Ok(frame.into_data().ok())))
            .map_err(std::io::Error::other);
        bytes.into_async_read().lines().boxed()
    }
}

fn print_watch(how: &str, w: Watched) {
    let p50_p99 = |d: &[Duration]| format!("{} / {}", ms(percentile(d, 0.5)), ms(percentile(d, 0.99)));
    println!("  watch latency, {WATCHERS} watchers {how} p50/p99: {} ({} events)", p50_p99(&w.events), w.events.len());
    println!("    (a write's first watcher p50/p99: {}; its last: {})", p50_p99(&w.first), p50_p99(&w.last));
    println!("    (the writes themselves p50/p99: {})", p50_p99(&w.writes));
}

/// What the disk under `dir` takes to make 4 KiB durable the way the log does (a direct
/// write, then a flush of the device's cache), paced like the watched writes: the floor
/// under every watched write, and much of its tail.
fn device_sync(dir: &std::path::Path) -> Vec<Duration> {
    let mut disk = floor::Durable::open(dir);
    let mut syncs = Vec::with_capacity(400);
    for _ in 0..400 {
        let start = Instant::now();
        disk.write();
        syncs.push(start.elapsed());
        std::thread::sleep(Duration::from_millis(5));
    }
    syncs.sort();
    syncs
}

/// The floor server in a child process (the bench binary again, with `floor::FLOOR_ARG`),
/// killed when dropped, as the engine's is.
struct FloorServer {
    child: Child,
    addr: std::net::SocketAddr,
}

impl FloorServer {
    fn spawn(dir: &std::path::Path) -> FloorServer {
        let mut child = Command::new(std::env::current_exe().expect("the bench binary"))
            .arg(floor::FLOOR_ARG)
            .arg(dir)
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the floor server");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line).expect("address line");
        let addr = line.trim().parse();
        FloorServer { child, addr: addr.expect("the floor server prints its address") }
    }
}

impl Drop for FloorServer {
    fn drop(&mut self) {
        stop(&mut self.child);
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    if args.next().as_deref() == Some(floor::FLOOR_ARG) {
        return floor::run(std::path::Path::new(&args.next().expect("the floor server's data dir")));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        rustls::crypto::ring::default_provider().install_default().ok();
        let mut served = serve();
        println!("engine over HTTPS on loopback ({CLIENTS} clients, {OBJECTS} custom resources)");
        println!("  start to ready:            {}", ms(served.ready_after));
        let client = connect(&served.dir.path().join("kubeconfig"), None).await;
        let api = register(&client).await;
        let idle = settled_rss_mib(served.child.id());

        let creator = api.clone();
        let creates = concurrently(OBJECTS, move |i| {
            let api = creator.clone();
            async move {
                api.create(&PostParams::default(), &widget_object(i)).await.expect("create");
            }
        })
        .await;
        println!("  creates/s:                 {creates:.0}");

        let updater = api.clone();
        let updates = concurrently(OBJECTS, move |i| {
            let api = updater.clone();
            async move {
                let patch = json!({"spec": {"size": (i % 10) + 1}});
                api.patch(&format!("w-{i:05}"), &PatchParams::default(), &Patch::Merge(patch)).await.expect("update");
            }
        })
        .await;
        println!("  updates/s (merge patch):   {updates:.0}");

        // Raw bytes: the server's time, not the bench's own decoding of 5 MB.
        let mut lists = Vec::new();
        for _ in 0..20 {
            let start = Instant::now();
            let req = http::Request::get("/apis/stable.example.com/v1/namespaces/default/widgets")
                .body(Vec::new())
                .expect("request");
            let body = client.request_text(req).await.expect("list");
            lists.push(start.elapsed());
            assert!(body.len() > OBJECTS * 200);
        }
        lists.sort();
        println!(
            "  list {OBJECTS} (JSON) p50/p99:  {} / {}",
            ms(percentile(&lists, 0.5)),
            ms(percentile(&lists, 0.99))
        );

        // The 20,000 writes above started a checkpoint (one comes every 10,000 changes),
        // whose fsyncs queue with the log's; let it finish. The next one falls due among
        // the 2,100 watched writes, ten times its share in the steady state (once in
        // 10,000): the three or so writes it slows (4-8 ms) are 0.3% of the HTTP/1.1 ones,
        // too few to move a p99.
        tokio::time::sleep(Duration::from_secs(2)).await;
        print_watch("(HTTP/1.1, a connection each)", watch_latency(&api, |uri| open_http1(&client, uri)).await);
        let h2 = Http2::connect(&served).await;
        print_watch("(HTTP/2, one connection)", watch_latency(&api, |uri| h2.open(uri)).await);
        println!("  resident memory: {idle:.0} MiB idle, {:.0} MiB with {OBJECTS} objects", rss_mib(served.child.id()));
        let dir = served.dir.path().to_path_buf();
        let template = serde_json::to_vec(&api.get("w-00000").await.expect("a watched widget")).expect("JSON");
        std::fs::write(dir.join(floor::TEMPLATE_FILE), template).expect("template");
        stop(&mut served.child);
        let floor_server = FloorServer::spawn(&dir);
        let floor_client = connect(&dir.join("kubeconfig"), Some(floor_server.addr)).await;
        let floor = watch_latency(&widgets(&floor_client), |uri| open_http1(&floor_client, uri)).await;
        drop(floor_server);
        print_watch("(HTTP/1.1, from the bare floor server)", floor);
        let syncs = tokio::task::spawn_blocking(move || device_sync(&dir)).await.expect("device sync");
        println!(
            "  the disk alone, 4 KiB made durable as the log does it, p50/p99: {} / {}",
            ms(percentile(&syncs, 0.5)),
            ms(percentile(&syncs, 0.99))
        );
    });
}
