//! The HTTP edge of the etcd backend: POSTs JSON to the members of one etcd cluster, moving
//! on to the next member when one refuses the connection, breaks it, times out or has no
//! leader.
//!
//! Every call is bounded by the configured timeout as a whole (504 above), never a hang:
//! attempts cycle through the endpoints, with a short pause after a full round, until that
//! deadline. Which calls may be repeated:
//! - reads ([`Gateway::call`]) anywhere, any number of times;
//! - writes ([`Gateway::write`]) are always etcd transactions guarded by a compare (the key's
//!   create_revision is 0, or its mod_revision is the one read), so at most one attempt can
//!   ever apply, however many are sent: a repeat of an applied write fails its compare. A
//!   repeat after an attempt that may have reached etcd (the connection broke after sending,
//!   it timed out, etcd answered "unavailable") is reported as such, so the store can tell
//!   "my own earlier attempt applied" from a real conflict (see `EtcdStore`);
//! - a watch ([`Gateway::watch`]) that breaks is opened again, on whichever member answers,
//!   from the revision after the last event it delivered; only when no member takes it back
//!   within the timeout, or the revision was compacted meanwhile (etcd's cancel, 410 above),
//!   does it end.

use super::wire::{self, WatchCreate};
use super::{EtcdConfig, EtcdTls};
use bytes::{Bytes, BytesMut};
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use http_body_util::{BodyExt, BodyStream, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;
use tokio::time::Instant;

type Https = hyper_rustls::HttpsConnector<HttpConnector>;

/// The pause after every endpoint failed once, before the next round (an election takes
/// about a second; a restarted member a little more).
const ROUND_PAUSE: Duration = Duration::from_millis(100);

/// The least time one attempt gets before the next endpoint is tried.
const MIN_ATTEMPT: Duration = Duration::from_millis(500);

/// Why a call to etcd failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GatewayError {
    /// No endpoint could be reached (or one stopped answering mid-way).
    #[error("etcd unreachable: {0}")]
    Unreachable(String),
    /// An endpoint took the request and did not answer in time.
    #[error("etcd did not answer within {0:?}")]
    Timeout(Duration),
    /// etcd refused the request; its words.
    #[error("{0}")]
    Refused(String),
    /// etcd's answer could not be read.
    #[error("unreadable answer from etcd: {0}")]
    Malformed(String),
    /// The TLS files could not be read.
    #[error("etcd TLS: {0}")]
    Tls(String),
}

impl GatewayError {
    /// Whether another member (or the same one a moment later) may answer.
    fn is_transient(&self) -> bool {
        matches!(self, GatewayError::Unreachable(_) | GatewayError::Timeout(_))
    }
}

/// A write's answer, and whether an earlier attempt of it may have reached etcd (and so
/// may be what made this one's compare fail).
#[derive(Debug)]
pub struct Written<T> {
    pub answer: T,
    pub repeated: bool,
}

/// How one attempt failed: whether it may have reached etcd.
struct Failed {
    error: GatewayError,
    maybe_applied: bool,
}

/// A client of one etcd cluster's JSON gateway.
pub struct Gateway {
    client: Client<Https, Full<Bytes>>,
    endpoints: Vec<String>,
    /// The endpoint that answered last: tried first.
    preferred: AtomicUsize,
    timeout: Duration,
    /// When a call last ended, and whether etcd answered it (see [`Gateway::health`]).
    health: std::sync::Mutex<Option<(Instant, bool)>>,
}

impl Gateway {
    /// A client of `config`'s endpoints (no connection is made yet).
    pub fn new(config: &EtcdConfig) -> Result<Self, GatewayError> {
        let tls = tls_config(config.tls.as_ref())?;
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_nodelay(true);
        http.set_connect_timeout(Some(config.timeout));
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        let client = Client::builder(TokioExecutor::new()).build(https);
        let endpoints = config.endpoints.iter().map(|e| e.trim_end_matches('/').to_string()).collect();
        Ok(Gateway { client, endpoints, preferred: AtomicUsize::new(0), timeout: config.timeout, health: None.into() })
    }

    /// Whether etcd answered the last call, if that call ended less than `age` ago.
    pub fn health(&self, age: Duration) -> Option<bool> {
        let health = *self.health.lock().unwrap_or_else(|e| e.into_inner());
        health.filter(|(at, _)| at.elapsed() < age).map(|(_, answered)| answered)
    }

    /// Records how a call ended: whether etcd answered (a refusal is an answer).
    pub fn note_health(&self, answered: bool) {
        *self.health.lock().unwrap_or_else(|e| e.into_inner()) = Some((Instant::now(), answered));
    }

    /// The longest one call may take.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// POSTs a read (or anything harmless to repeat) to `path` and reads the JSON answer.
    pub async fn call<T: DeserializeOwned>(&self, path: &str, body: &impl Serialize) -> Result<T, GatewayError> {
        Ok(self.write(path, body).await?.answer)
    }

    /// POSTs a guarded transaction (see the module's note) and reads the JSON answer.
    pub async fn write<T: DeserializeOwned>(
        &self,
        path: &str,
        body: &impl Serialize,
    ) -> Result<Written<T>, GatewayError> {
        let body = Bytes::from(serde_json::to_vec(body).map_err(|e| GatewayError::Malformed(e.to_string()))?);
        let repeated = AtomicBool::new(false);
        let bytes = self
            .each_endpoint(|at, budget| {
                let body = body.clone();
                let repeated = &repeated;
                async move {
                    let result = self.once(at, path, body, budget).await;
                    if let Err(Failed { maybe_applied: true, .. }) = &result {
                        repeated.store(true, Ordering::Relaxed);
                    }
                    result
                }
            })
            .await?;
        let answer = serde_json::from_slice(&bytes).map_err(|e| GatewayError::Malformed(e.to_string()))?;
        Ok(Written { answer, repeated: repeated.into_inner() })
    }

    /// Opens etcd's watch `create` as a stream of the gateway's lines (the first one says
    /// the watch exists), opened again from the revision after the last event seen when the
    /// member serving it goes away (see the module's note). Not bounded in time once open.
    pub async fn watch(
        self: &Arc<Self>,
        create: WatchCreate,
    ) -> Result<impl Stream<Item = Result<Bytes, GatewayError>> + Send + 'static, GatewayError> {
        let lines = self.open_watch(&create).await?;
        let state = Resuming { gateway: self.clone(), create, lines: Some(lines), lost: None, done: false };
        Ok(futures::stream::unfold(state, Resuming::next))
    }

    /// One watch stream, on the first member that takes it.
    async fn open_watch(
        &self,
        create: &WatchCreate,
    ) -> Result<BoxStream<'static, Result<Bytes, GatewayError>>, GatewayError> {
        let body = Bytes::from(serde_json::to_vec(&create.body()).map_err(|e| GatewayError::Malformed(e.to_string()))?);
        let lines = self
            .each_endpoint(|at, budget| {
                let body = body.clone();
                async move {
                    let response = self.send(at, "/v3/watch", body, budget).await?;
                    if !response.status().is_success() {
                        let bytes = response.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
                        return Err(Failed { error: refusal(&bytes), maybe_applied: false });
                    }
                    let frames = BodyStream::new(response.into_body());
                    Ok(lines(frames.filter_map(|frame| async move {
                        match frame {
                            Ok(frame) => frame.into_data().ok().map(Ok),
                            Err(e) => Some(Err(GatewayError::Unreachable(e.to_string()))),
                        }
                    }))
                    .boxed())
                }
            })
            .await?;
        Ok(lines)
    }

    /// Runs `attempt` on each endpoint in turn, from the one that answered last, until one
    /// succeeds, one fails for good, or the timeout has passed. `attempt` gets the endpoint
    /// and the time it may take.
    async fn each_endpoint<T, F, Fut>(&self, mut attempt: F) -> Result<T, GatewayError>
    where
        F: FnMut(usize, Duration) -> Fut,
        Fut: std::future::Future<Output = Result<T, Failed>>,
    {
        let n = self.endpoints.len();
        if n == 0 {
            return Err(GatewayError::Unreachable("no etcd endpoint configured".into()));
        }
        let deadline = Instant::now() + self.timeout;
        let first = self.preferred.load(Ordering::Relaxed);
        let mut last = GatewayError::Timeout(self.timeout);
        for i in 0.. {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            if i > 0 && i % n == 0 {
                tokio::time::sleep(ROUND_PAUSE.min(left)).await;
            }
            let at = (first + i) % n;
            // A member that hangs must leave time for the others.
            let left = deadline.saturating_duration_since(Instant::now());
            let budget = if n == 1 { left } else { (left / n as u32).max(MIN_ATTEMPT).min(left) };
            match attempt(at, budget).await {
                Ok(answer) => {
                    self.preferred.store(at, Ordering::Relaxed);
                    self.note_health(true);
                    return Ok(answer);
                }
                Err(Failed { error, .. }) if error.is_transient() => last = error,
                Err(Failed { error, .. }) => {
                    self.note_health(true);
                    return Err(error);
                }
            }
        }
        self.note_health(false);
        Err(last)
    }

    /// One POST to endpoint `at`, its answer read whole within `budget`.
    async fn once(&self, at: usize, path: &str, body: Bytes, budget: Duration) -> Result<Bytes, Failed> {
        let started = Instant::now();
        let response = self.send(at, path, body, budget).await?;
        let (parts, body) = response.into_parts();
        let left = budget.saturating_sub(started.elapsed());
        let bytes = match tokio::time::timeout(left, body.collect()).await {
            Ok(Ok(collected)) => collected.to_bytes(),
            Ok(Err(e)) => {
                return Err(Failed { error: self.unreachable(at, &e), maybe_applied: true });
            }
            Err(_) => return Err(Failed { error: GatewayError::Timeout(self.timeout), maybe_applied: true }),
        };
        if !parts.status.is_success() {
            let error = refusal(&bytes);
            // "No leader", "leader changed", "request timed out": a proposal may still commit.
            let maybe_applied = error.is_transient();
            return Err(Failed { error, maybe_applied });
        }
        Ok(bytes)
    }

    /// Sends one POST to endpoint `at` and waits for its answer's head within `budget`.
    async fn send(
        &self,
        at: usize,
        path: &str,
        body: Bytes,
        budget: Duration,
    ) -> Result<hyper::Response<hyper::body::Incoming>, Failed> {
        let request = hyper::Request::post(format!("{}{path}", self.endpoints[at]))
            .header(http::header::CONTENT_TYPE, "application/json")
            // etcd's "require leader": a member cut off from the others ends its watches
            // (and refuses requests) instead of serving stale data.
            .header("grpc-metadata-hasleader", "true")
            .body(Full::new(body))
            .map_err(|e| Failed { error: GatewayError::Unreachable(e.to_string()), maybe_applied: false })?;
        match tokio::time::timeout(budget, self.client.request(request)).await {
            Ok(Ok(response)) => Ok(response),
            Err(_) => Err(Failed { error: GatewayError::Timeout(self.timeout), maybe_applied: true }),
            // Not connected: nothing was sent.
            Ok(Err(e)) if e.is_connect() => Err(Failed { error: self.unreachable(at, &e), maybe_applied: false }),
            Ok(Err(e)) => Err(Failed { error: self.unreachable(at, &e), maybe_applied: true }),
        }
    }

    fn unreachable(&self, at: usize, e: &dyn std::fmt::Display) -> GatewayError {
        GatewayError::Unreachable(format!("{}: {e}", self.endpoints[at]))
    }
}

/// A watch that opens itself again (see [`Gateway::watch`]).
struct Resuming {
    gateway: Arc<Gateway>,
    /// The watch as opened; its start revision moves past each event delivered.
    create: WatchCreate,
    lines: Option<BoxStream<'static, Result<Bytes, GatewayError>>>,
    /// When the open stream went away (the watch ends if none takes it back in time).
    lost: Option<Instant>,
    done: bool,
}

impl Resuming {
    async fn next(mut self) -> Option<(Result<Bytes, GatewayError>, Self)> {
        if self.done {
            return None;
        }
        loop {
            let Some(lines) = self.lines.as_mut() else {
                let lost = *self.lost.get_or_insert_with(Instant::now);
                if lost.elapsed() > self.gateway.timeout {
                    self.done = true;
                    return Some((Err(GatewayError::Timeout(self.gateway.timeout)), self));
                }
                match self.gateway.open_watch(&self.create).await {
                    Ok(mut lines) => {
                        // Its first line says the watch exists, or why not (compacted: the
                        // caller's 410), which is the caller's to read.
                        match lines.next().await {
                            Some(Ok(line)) if wire::WatchProgress::of(&line).is_created() => {
                                self.lines = Some(lines);
                                self.lost = None;
                                continue;
                            }
                            Some(Ok(line)) => {
                                self.done = true;
                                return Some((Ok(line), self));
                            }
                            Some(Err(_)) | None => continue,
                        }
                    }
                    Err(e) => {
                        self.done = true;
                        return Some((Err(e), self));
                    }
                }
            };
            match lines.next().await {
                Some(Ok(line)) => {
                    let progress = wire::WatchProgress::of(&line);
                    if let Some(last) = progress.last_revision() {
                        self.create.start_revision = last + 1;
                    }
                    self.done = progress.ends();
                    return Some((Ok(line), self));
                }
                // The member went away: open it again elsewhere.
                Some(Err(_)) | None => self.lines = None,
            }
        }
    }
}
/// etcd's error answer, in its words.
fn refusal(body: &[u8]) -> GatewayError {
    match serde_json::from_slice::<super::wire::ErrorBody>(body) {
        // gRPC's Unavailable: etcd has no leader, or the gateway lost etcd.
        Ok(e) if e.code == super::wire::GRPC_UNAVAILABLE => {
            GatewayError::Unreachable(if e.error.is_empty() { e.message } else { e.error })
        }
        Ok(e) if !e.error.is_empty() => GatewayError::Refused(e.error),
        Ok(e) if !e.message.is_empty() => GatewayError::Refused(e.message),
        _ => GatewayError::Malformed(String::from_utf8_lossy(body).into_owned()),
    }
}

/// Splits a byte stream into its newline-terminated lines (the gateway's stream framing).
fn lines(
    chunks: impl Stream<Item = Result<Bytes, GatewayError>> + Send + 'static,
) -> impl Stream<Item = Result<Bytes, GatewayError>> + Send + 'static {
    let chunks = Box::pin(chunks);
    futures::stream::unfold((chunks, BytesMut::new(), false), |(mut chunks, mut buf, done)| async move {
        if done {
            return None;
        }
        loop {
            if let Some(at) = buf.iter().position(|&b| b == b'\n') {
                let line = buf.split_to(at + 1).freeze().slice(..at);
                return Some((Ok(line), (chunks, buf, false)));
            }
            match chunks.next().await {
                Some(Ok(chunk)) => buf.extend_from_slice(&chunk),
                Some(Err(e)) => return Some((Err(e), (chunks, buf, true))),
                None if buf.is_empty() => return None,
                None => {
                    let line = std::mem::take(&mut buf).freeze();
                    return Some((Ok(line), (chunks, BytesMut::new(), true)));
                }
            }
        }
    })
}

/// TLS as configured: etcd's CA, and a client certificate when etcd asks for one.
fn tls_config(tls: Option<&EtcdTls>) -> Result<rustls::ClientConfig, GatewayError> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let bad = |what: &str, path: &std::path::Path, e: &dyn std::fmt::Display| {
        GatewayError::Tls(format!("cannot read the {what} {}: {e}", path.display()))
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| GatewayError::Tls(e.to_string()))?;
    let mut roots = rustls::RootCertStore::empty();
    let Some(tls) = tls else {
        // Plain http endpoints only: an https one fails verification against no roots.
        return Ok(builder.with_root_certificates(roots).with_no_client_auth());
    };
    if let Some(ca) = &tls.ca_file {
        for cert in CertificateDer::pem_file_iter(ca).map_err(|e| bad("CA file", ca, &e))? {
            roots.add(cert.map_err(|e| bad("CA file", ca, &e))?).map_err(|e| bad("CA file", ca, &e))?;
        }
    }
    let builder = builder.with_root_certificates(roots);
    match (&tls.cert_file, &tls.key_file) {
        (Some(cert), Some(key)) => {
            let certs = CertificateDer::pem_file_iter(cert)
                .map_err(|e| bad("certificate file", cert, &e))?
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| bad("certificate file", cert, &e))?;
            let key = PrivateKeyDer::from_pem_file(key).map_err(|e| bad("key file", key, &e))?;
            builder.with_client_auth_cert(certs, key).map_err(|e| GatewayError::Tls(e.to_string()))
        }
        (None, None) => Ok(builder.with_no_client_auth()),
        _ => Err(GatewayError::Tls("--etcd-certfile and --etcd-keyfile go together".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn etcd_without_a_leader_is_unreachable_and_its_other_refusals_keep_their_words() {
        let no_leader = br#"{"error":"etcdserver: no leader","message":"etcdserver: no leader","code":14}"#;
        assert_eq!(refusal(no_leader), GatewayError::Unreachable("etcdserver: no leader".into()));
        let compacted = br#"{"error":"etcdserver: mvcc: required revision has been compacted","code":11}"#;
        assert_eq!(
            refusal(compacted),
            GatewayError::Refused("etcdserver: mvcc: required revision has been compacted".into())
        );
    }

    /// Three members; the store given all three. Killing the member in use (and later
    /// another one) loses no write and no watch event: writes move on, the watch opens
    /// again on another member from the revision after its last event.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn writes_and_a_watch_move_on_to_the_next_member_when_one_is_killed() {
        use crate::store::etcd::process::EtcdCluster;
        use crate::store::etcd::{EtcdConfig, EtcdStore};
        use crate::store::{Store, StoreError};
        let shm = std::path::Path::new("/dev/shm");
        let dir = if shm.is_dir() { tempfile::tempdir_in(shm) } else { tempfile::tempdir() }.expect("tempdir");
        let mut cluster = EtcdCluster::start(dir.path(), 3).unwrap_or_else(|e| panic!("{e}"));
        let store = EtcdStore::connect(&EtcdConfig::new(cluster.urls())).await.expect("connect");
        let key = |i: usize| format!("/registry/g/things/t{i:03}");
        let first = store.create(&key(0), Bytes::from_static(b"0")).await.expect("create");
        let mut watch = store.watch("/registry/g/things/", first.mod_revision).await.expect("watch");
        let mut written = vec![first.mod_revision];
        for (round, killed) in [0usize, 1].into_iter().enumerate() {
            cluster.member(killed).expect("member").stop();
            for i in 1..=5 {
                let i = round * 5 + i;
                let kv = store.create(&key(i), Bytes::from(i.to_string())).await.expect("a write after a kill");
                written.push(kv.mod_revision);
            }
            cluster.member(killed).expect("member").restart().expect("restart");
        }
        let mut seen = Vec::new();
        while seen.len() < written.len() - 1 {
            match tokio::time::timeout(Duration::from_secs(10), watch.next()).await {
                Ok(Some(Ok(event))) => seen.push(event.revision),
                other => panic!("the watch ended after {seen:?}: {:?}", other.map(|o| o.map(|r| r.err()))),
            }
        }
        assert_eq!(seen, written[1..], "every write once, in order");
        let dup = store.create(&key(1), Bytes::from_static(b"other")).await;
        assert!(matches!(dup, Err(StoreError::AlreadyExists { .. })), "{dup:?}");
    }

    /// A TCP proxy to `target` that, once `cut` is set, still forwards every request but
    /// drops the answer and closes the connection: a write that reached etcd and whose
    /// answer was lost, as when a member dies right after applying it.
    async fn lossy_proxy(target: String, cut: Arc<AtomicBool>) -> String {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(upstream) = tokio::net::TcpStream::connect(&target).await else { continue };
                let cut = cut.clone();
                let (mut from_client, mut to_client) = client.into_split();
                let (mut from_etcd, mut to_etcd) = upstream.into_split();
                tokio::spawn(async move { tokio::io::copy(&mut from_client, &mut to_etcd).await });
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 64 * 1024];
                    while let Ok(n @ 1..) = from_etcd.read(&mut buf).await {
                        if cut.load(Ordering::Relaxed) {
                            break;
                        }
                        if to_client.write_all(&buf[..n]).await.is_err() {
                            break;
                        }
                    }
                    // Dropping both halves closes the client's connection.
                });
            }
        });
        url
    }

    /// Writes whose answer is lost after etcd applied them are repeated on the next member
    /// and recognised as applied: each applies once (one revision each) and answers as if
    /// nothing had happened; a create of a name another write holds still is a conflict.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_write_whose_answer_was_lost_is_applied_once_and_answered() {
        use crate::store::etcd::tests::start_etcd;
        use crate::store::etcd::{EtcdConfig, EtcdStore};
        use crate::store::{Store, StoreError};
        let (etcd, _dir) = start_etcd();
        let cut = Arc::new(AtomicBool::new(false));
        let proxy = lossy_proxy(etcd.url().trim_start_matches("http://").to_string(), cut.clone()).await;
        // Through the proxy first (the endpoint that answered last is tried first, so each
        // step connects anew while the proxy still answers).
        let connect = || async {
            cut.store(false, Ordering::Relaxed);
            let store = EtcdStore::connect(&EtcdConfig::new(vec![proxy.clone(), etcd.url()])).await.expect("connect");
            cut.store(true, Ordering::Relaxed);
            store
        };
        let key = "/registry/g/things/t";
        let created = connect().await.create(key, Bytes::from_static(b"one")).await.expect("create");
        let store = connect().await;
        assert_eq!(store.current_revision().await.expect("rev"), created.mod_revision, "applied once");
        let updated = store.update(key, Bytes::from_static(b"two"), Some(created.mod_revision)).await.expect("update");
        assert_eq!(updated.create_revision, created.create_revision);
        let store = connect().await;
        assert_eq!(store.current_revision().await.expect("rev"), updated.mod_revision, "applied once");
        let taken = store.create(key, Bytes::from_static(b"three")).await;
        assert!(matches!(taken, Err(StoreError::AlreadyExists { .. })), "{taken:?}");
        let store = connect().await;
        let deleted = store.delete(key, Some(updated.mod_revision)).await.expect("delete");
        assert_eq!(deleted.prev.value, Bytes::from_static(b"two"));
        assert_eq!(store.get(key).await.expect("get"), None);
        assert_eq!(store.current_revision().await.expect("rev"), updated.mod_revision + 1, "deleted once");
    }

    #[tokio::test]
    async fn lines_are_split_across_and_within_chunks() {
        let chunks = ["{\"a\":1}\n{\"b\"", ":2}\n", "{\"c\":3}"].map(|s| Ok(Bytes::from(s)));
        let got: Vec<_> = lines(futures::stream::iter(chunks)).map(|l| l.expect("line")).collect().await;
        assert_eq!(got, [Bytes::from("{\"a\":1}"), Bytes::from("{\"b\":2}"), Bytes::from("{\"c\":3}")]);
    }
}
