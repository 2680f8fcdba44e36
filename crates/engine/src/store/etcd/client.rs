//! The gRPC edge of the etcd backend: calls etcd's gRPC API (`wire`) over HTTP/2, as
//! kube-apiserver's client does, moving on to the next member when one refuses the
//! connection, breaks it, times out or has no leader.
//!
//! gRPC rather than etcd's JSON gateway: the gateway is a proxy inside etcd that turns each
//! JSON call into a gRPC call to itself, which cost etcd half as much CPU again per create
//! as kube-apiserver's calls (benches/etcd.rs), and it needed an HTTP/1 connection per
//! watch. Here each member gets one HTTP/2 connection, every call and every watch a stream
//! of it. The messages are written by hand (`proto`), not generated, so no `protoc`.
//!
//! Every call is bounded by the configured timeout as a whole (504 above), never a hang:
//! attempts cycle through the endpoints, with a short pause after a full round, until that
//! deadline. Which calls may be repeated:
//! - reads ([`Grpc::call`]) anywhere, any number of times;
//! - writes ([`Grpc::write`]) are always etcd transactions guarded by a compare (the key's
//!   create_revision is 0, or its mod_revision is the one read), so at most one attempt can
//!   ever apply, however many are sent: a repeat of an applied write fails its compare. A
//!   repeat after an attempt that may have reached etcd (the connection broke after sending,
//!   it timed out, etcd answered "unavailable") is reported as such, so the store can tell
//!   "my own earlier attempt applied" from a real conflict (see `EtcdStore`);
//! - a watch ([`Grpc::watch`]) that breaks, or that a member ends as unavailable (it lost
//!   its leader), is opened again, on whichever member answers, from the revision after the
//!   last event it delivered; only when no member takes it back within the timeout, or the
//!   revision was compacted meanwhile (etcd's cancel, 410 above), does it end.

use super::proto::{Decode, Encode};
use super::wire::{self, WatchCreate, WatchResponse};
use super::{EtcdConfig, EtcdTls};
use bytes::{Buf, BufMut, Bytes, BytesMut};
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use http::HeaderMap;
use http_body_util::{BodyExt, BodyStream, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};
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

/// How often an HTTP/2 connection with a call or watch open is pinged, and how long a ping
/// may go unanswered before the connection counts as broken.
const KEEP_ALIVE: Duration = Duration::from_secs(30);
const KEEP_ALIVE_TIMEOUT: Duration = Duration::from_secs(10);

/// HTTP/2 flow-control windows: what etcd may send on one call, and on all of them, before
/// the client has read it (a page of 500 objects of etcd's largest, 1.5 MiB, is 750 MiB;
/// of kube's typical few KiB, a few MiB).
const STREAM_WINDOW: u32 = 16 << 20;
const CONNECTION_WINDOW: u32 = 64 << 20;

/// The largest message read, as kube-apiserver's etcd client takes (`math.MaxInt32`): an
/// unpaged range of a big kind is one message. A length beyond it is a broken stream, not a
/// reason to allocate.
const MAX_MESSAGE: usize = i32::MAX as usize;

/// Why a call to etcd failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GrpcError {
    /// No endpoint could be reached (or one stopped answering mid-way, or has no leader).
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

impl GrpcError {
    /// Whether another member (or the same one a moment later) may answer.
    fn is_transient(&self) -> bool {
        matches!(self, GrpcError::Unreachable(_) | GrpcError::Timeout(_))
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
    error: GrpcError,
    maybe_applied: bool,
}

/// A client of one etcd cluster's gRPC API.
pub struct Grpc {
    client: Client<Https, Full<Bytes>>,
    endpoints: Vec<String>,
    /// The endpoint that answered last: tried first.
    preferred: AtomicUsize,
    timeout: Duration,
    /// When a call last ended, and whether etcd answered it (see [`Grpc::health`]).
    health: std::sync::Mutex<Option<(Instant, bool)>>,
}

impl Grpc {
    /// A client of `config`'s endpoints (no connection is made yet).
    pub fn new(config: &EtcdConfig) -> Result<Self, GrpcError> {
        let tls = tls_config(config.tls.as_ref())?;
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_nodelay(true);
        http.set_connect_timeout(Some(config.timeout));
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http2()
            .wrap_connector(http);
        // HTTP/2 only: over plain http with prior knowledge, over TLS by ALPN, as gRPC does.
        // Fixed flow-control windows large enough for a page of big objects, not adaptive
        // ones: those are found with a ping after every answer, a write and a read more per
        // call for both sides. Pings while a call or watch is open find a member gone
        // without a word (kube's etcd client pings every 30 s and gives up after 10; etcd
        // refuses pings closer than 5 s).
        let client = Client::builder(TokioExecutor::new())
            .http2_only(true)
            .http2_initial_stream_window_size(STREAM_WINDOW)
            .http2_initial_connection_window_size(CONNECTION_WINDOW)
            .timer(TokioTimer::new())
            .http2_keep_alive_interval(KEEP_ALIVE)
            .http2_keep_alive_timeout(KEEP_ALIVE_TIMEOUT)
            .build(https);
        let endpoints = config.endpoints.iter().map(|e| e.trim_end_matches('/').to_string()).collect();
        Ok(Grpc { client, endpoints, preferred: AtomicUsize::new(0), timeout: config.timeout, health: None.into() })
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

    /// Calls `method` with a read (or anything harmless to repeat) and reads its answer.
    pub async fn call<T: Decode>(&self, method: &str, request: &impl Encode) -> Result<T, GrpcError> {
        Ok(self.write(method, request).await?.answer)
    }

    /// Calls `method` with a guarded transaction (see the module's note) and reads its answer.
    pub async fn write<T: Decode>(&self, method: &str, request: &impl Encode) -> Result<Written<T>, GrpcError> {
        let body = framed(request);
        let repeated = AtomicBool::new(false);
        let message = self
            .each_endpoint(|at, budget| {
                let body = body.clone();
                let repeated = &repeated;
                async move {
                    let result = self.once(at, method, body, budget).await;
                    if let Err(Failed { maybe_applied: true, .. }) = &result {
                        repeated.store(true, Ordering::Relaxed);
                    }
                    result
                }
            })
            .await?;
        let answer = T::decode(message).map_err(|e| GrpcError::Malformed(e.to_string()))?;
        Ok(Written { answer, repeated: repeated.into_inner() })
    }

    /// Opens etcd's watch `create` as a stream of its answers (the first one says the watch
    /// exists), opened again from the revision after the last event seen when the member
    /// serving it goes away (see the module's note). Not bounded in time once open.
    pub async fn watch(
        self: &Arc<Self>,
        create: WatchCreate,
    ) -> Result<impl Stream<Item = Result<WatchResponse, GrpcError>> + Send + 'static, GrpcError> {
        let answers = self.open_watch(&create).await?;
        let state = Resuming { grpc: self.clone(), create, answers: Some(answers), lost: None, done: false };
        Ok(futures::stream::unfold(state, Resuming::next))
    }

    /// One watch stream, on the first member that takes it. The request side is closed
    /// after the create: etcd keeps a watch stream open until the client goes.
    async fn open_watch(
        &self,
        create: &WatchCreate,
    ) -> Result<BoxStream<'static, Result<Piece, GrpcError>>, GrpcError> {
        let body = framed(create);
        let answers = self
            .each_endpoint(|at, budget| {
                let body = body.clone();
                async move {
                    let response = self.send(at, wire::method::WATCH, body, budget).await?;
                    let (parts, body) = response.into_parts();
                    if let Some(Err(error)) = grpc_status(&parts.headers) {
                        return Err(Failed { maybe_applied: false, error });
                    }
                    Ok(pieces(BodyStream::new(body)).boxed())
                }
            })
            .await?;
        Ok(answers)
    }

    /// Runs `attempt` on each endpoint in turn, from the one that answered last, until one
    /// succeeds, one fails for good, or the timeout has passed. `attempt` gets the endpoint
    /// and the time it may take.
    async fn each_endpoint<T, F, Fut>(&self, mut attempt: F) -> Result<T, GrpcError>
    where
        F: FnMut(usize, Duration) -> Fut,
        Fut: std::future::Future<Output = Result<T, Failed>>,
    {
        let n = self.endpoints.len();
        if n == 0 {
            return Err(GrpcError::Unreachable("no etcd endpoint configured".into()));
        }
        let deadline = Instant::now() + self.timeout;
        let first = self.preferred.load(Ordering::Relaxed);
        let mut last = GrpcError::Timeout(self.timeout);
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

    /// One unary call to endpoint `at`: its one answer, read whole within `budget`.
    async fn once(&self, at: usize, method: &str, body: Bytes, budget: Duration) -> Result<Bytes, Failed> {
        let started = Instant::now();
        let response = self.send(at, method, body, budget).await?;
        let (parts, body) = response.into_parts();
        // An error without an answer comes in the head ("trailers-only").
        if let Some(Err(error)) = grpc_status(&parts.headers) {
            let maybe_applied = error.is_transient();
            return Err(Failed { error, maybe_applied });
        }
        let left = budget.saturating_sub(started.elapsed());
        let collected = match tokio::time::timeout(left, body.collect()).await {
            Ok(Ok(collected)) => collected,
            Ok(Err(e)) => return Err(Failed { error: self.unreachable(at, &e), maybe_applied: true }),
            Err(_) => return Err(Failed { error: GrpcError::Timeout(self.timeout), maybe_applied: true }),
        };
        let status = collected.trailers().and_then(grpc_status).or_else(|| grpc_status(&parts.headers));
        match status {
            Some(Ok(())) => {}
            Some(Err(error)) => {
                // "No leader", "leader changed", "request timed out": a proposal may still commit.
                let maybe_applied = error.is_transient();
                return Err(Failed { error, maybe_applied });
            }
            None => {
                let error = self.unreachable(at, &"the answer ended without a gRPC status");
                return Err(Failed { error, maybe_applied: true });
            }
        }
        let mut data = collected.to_bytes();
        match next_message(&mut data) {
            Ok(Some(message)) if data.is_empty() => Ok(message),
            Ok(_) => Err(Failed { error: GrpcError::Malformed("not one message".into()), maybe_applied: false }),
            Err(error) => Err(Failed { error, maybe_applied: false }),
        }
    }

    /// Sends one call to endpoint `at` and waits for its answer's head within `budget`.
    async fn send(
        &self,
        at: usize,
        method: &str,
        body: Bytes,
        budget: Duration,
    ) -> Result<hyper::Response<hyper::body::Incoming>, Failed> {
        let request = hyper::Request::post(format!("{}{method}", self.endpoints[at]))
            .header(http::header::CONTENT_TYPE, "application/grpc")
            .header(http::header::TE, "trailers")
            // etcd's "require leader": a member cut off from the others ends its watches
            // (and refuses requests) instead of serving stale data.
            .header("hasleader", "true")
            .body(Full::new(body))
            .map_err(|e| Failed { error: GrpcError::Unreachable(e.to_string()), maybe_applied: false })?;
        let response = match tokio::time::timeout(budget, self.client.request(request)).await {
            Ok(Ok(response)) => response,
            Err(_) => return Err(Failed { error: GrpcError::Timeout(self.timeout), maybe_applied: true }),
            // Not connected: nothing was sent.
            Ok(Err(e)) if e.is_connect() => {
                return Err(Failed { error: self.unreachable(at, &e), maybe_applied: false });
            }
            Ok(Err(e)) => return Err(Failed { error: self.unreachable(at, &e), maybe_applied: true }),
        };
        if !response.status().is_success() {
            // Not etcd's gRPC (a proxy's answer, or not etcd at all): try another member.
            let error = self.unreachable(at, &format!("HTTP {} instead of a gRPC answer", response.status()));
            return Err(Failed { error, maybe_applied: true });
        }
        Ok(response)
    }

    fn unreachable(&self, at: usize, e: &dyn std::fmt::Display) -> GrpcError {
        GrpcError::Unreachable(format!("{}: {e}", self.endpoints[at]))
    }
}

/// A message as gRPC frames it: uncompressed, its length, its bytes.
fn framed(message: &impl Encode) -> Bytes {
    let message = message.to_bytes();
    let mut buf = BytesMut::with_capacity(5 + message.len());
    buf.put_u8(0);
    buf.put_u32(message.len() as u32);
    buf.put_slice(&message);
    buf.freeze()
}

/// The length of the first message framed at the start of `buf`, once all of it is there.
fn framed_len(buf: &[u8]) -> Result<Option<usize>, GrpcError> {
    if buf.len() < 5 {
        return Ok(None);
    }
    if buf[0] != 0 {
        return Err(GrpcError::Malformed("a compressed message, never asked for".into()));
    }
    let len = u32::from_be_bytes([buf[1], buf[2], buf[3], buf[4]]) as usize;
    if len > MAX_MESSAGE {
        return Err(GrpcError::Malformed(format!("a message of {len} bytes")));
    }
    Ok((buf.len() >= 5 + len).then_some(len))
}

/// The first whole message framed in `buf`, taken off it; `None` while it is incomplete.
fn next_message(buf: &mut Bytes) -> Result<Option<Bytes>, GrpcError> {
    let Some(len) = framed_len(buf)? else { return Ok(None) };
    buf.advance(5);
    Ok(Some(buf.split_to(len)))
}

/// The call's gRPC status, if `headers` hold one: `Ok` for OK, else etcd's error.
fn grpc_status(headers: &HeaderMap) -> Option<Result<(), GrpcError>> {
    let code: u32 = headers.get("grpc-status")?.to_str().ok()?.trim().parse().ok()?;
    if code == 0 {
        return Some(Ok(()));
    }
    let words = headers.get("grpc-message").map(|m| percent_decode(m.as_bytes())).unwrap_or_default();
    let words = if words.is_empty() { format!("gRPC status {code}") } else { words };
    Some(Err(match code {
        wire::GRPC_UNAVAILABLE | wire::GRPC_DEADLINE_EXCEEDED => GrpcError::Unreachable(words),
        _ => GrpcError::Refused(words),
    }))
}

/// gRPC's `grpc-message`: UTF-8 with `%XX` escapes.
fn percent_decode(raw: &[u8]) -> String {
    percent_encoding::percent_decode(raw).decode_utf8_lossy().into_owned()
}

/// What a streamed answer brings: a message, or its end with etcd's status.
enum Piece {
    Message(Bytes),
    End(Result<(), GrpcError>),
}

/// Splits an HTTP/2 body into its gRPC messages and its closing status; an error is the
/// connection breaking (or bytes that are no gRPC). Messages whole in a frame are slices
/// of it; only a message spread over frames is gathered, in one growing buffer (not copied
/// again for every frame).
fn pieces<B, E>(body: B) -> impl Stream<Item = Result<Piece, GrpcError>> + Send + 'static
where
    B: Stream<Item = Result<hyper::body::Frame<Bytes>, E>> + Send + 'static,
    E: std::fmt::Display + 'static,
{
    let state = Split { body: Box::pin(body), frame: Bytes::new(), partial: BytesMut::new(), done: false };
    futures::stream::unfold(state, Split::next)
}

/// [`pieces`]' state: the rest of the frame read last, and the start of a message that
/// continues in the next frames.
struct Split<B> {
    body: std::pin::Pin<Box<B>>,
    frame: Bytes,
    partial: BytesMut,
    done: bool,
}

impl<B, E> Split<B>
where
    B: Stream<Item = Result<hyper::body::Frame<Bytes>, E>> + Send + 'static,
    E: std::fmt::Display + 'static,
{
    async fn next(mut self) -> Option<(Result<Piece, GrpcError>, Self)> {
        if self.done {
            return None;
        }
        loop {
            if !self.frame.is_empty() {
                match next_message(&mut self.frame) {
                    Ok(Some(message)) => return Some((Ok(Piece::Message(message)), self)),
                    // The rest begins a message the next frames finish.
                    Ok(None) => self.partial.extend_from_slice(&std::mem::take(&mut self.frame)),
                    Err(e) => return self.end(Err(e)),
                }
            }
            match framed_len(&self.partial) {
                Ok(Some(len)) => {
                    self.partial.advance(5);
                    let message = self.partial.split_to(len).freeze();
                    return Some((Ok(Piece::Message(message)), self));
                }
                Ok(None) => {}
                Err(e) => return self.end(Err(e)),
            }
            let frame = match self.body.next().await {
                Some(Ok(frame)) => frame,
                Some(Err(e)) => return self.end(Err(GrpcError::Unreachable(e.to_string()))),
                None => return self.end(Err(GrpcError::Unreachable("the stream ended".into()))),
            };
            match frame.into_data() {
                Ok(data) if self.partial.is_empty() => self.frame = data,
                Ok(data) => self.partial.extend_from_slice(&data),
                Err(frame) => {
                    let status = frame.trailers_ref().and_then(grpc_status);
                    let end = status.unwrap_or_else(|| Err(GrpcError::Malformed("trailers without a status".into())));
                    return self.end(Ok(Piece::End(end)));
                }
            }
        }
    }

    fn end(mut self, last: Result<Piece, GrpcError>) -> Option<(Result<Piece, GrpcError>, Self)> {
        self.done = true;
        Some((last, self))
    }
}

/// A watch that opens itself again (see [`Grpc::watch`]).
struct Resuming {
    grpc: Arc<Grpc>,
    /// The watch as opened; its start revision moves past each event delivered.
    create: WatchCreate,
    answers: Option<BoxStream<'static, Result<Piece, GrpcError>>>,
    /// When the open stream went away (the watch ends if none takes it back in time).
    lost: Option<Instant>,
    done: bool,
}

impl Resuming {
    async fn next(mut self) -> Option<(Result<WatchResponse, GrpcError>, Self)> {
        if self.done {
            return None;
        }
        loop {
            let Some(answers) = self.answers.as_mut() else {
                let lost = *self.lost.get_or_insert_with(Instant::now);
                if lost.elapsed() > self.grpc.timeout {
                    self.done = true;
                    return Some((Err(GrpcError::Timeout(self.grpc.timeout)), self));
                }
                match self.grpc.open_watch(&self.create).await {
                    Ok(mut answers) => {
                        // Its first answer says the watch exists, or why not (compacted: the
                        // caller's 410), which is the caller's to read.
                        match answers.next().await.map(decoded) {
                            Some(Answer::Response(r)) if r.is_created() => {
                                self.answers = Some(answers);
                                self.lost = None;
                                continue;
                            }
                            Some(Answer::Response(r)) => {
                                self.done = true;
                                return Some((Ok(r), self));
                            }
                            Some(Answer::Lost) | None => continue,
                            Some(Answer::Ended(e)) => {
                                self.done = true;
                                return Some((Err(e), self));
                            }
                        }
                    }
                    Err(e) => {
                        self.done = true;
                        return Some((Err(e), self));
                    }
                }
            };
            match answers.next().await.map(decoded) {
                Some(Answer::Response(r)) => {
                    if let Some(last) = r.last_revision() {
                        self.create.start_revision = last + 1;
                    }
                    self.done = r.canceled;
                    return Some((Ok(r), self));
                }
                // The member went away or lost its leader: open it again elsewhere.
                Some(Answer::Lost) | None => self.answers = None,
                Some(Answer::Ended(e)) => {
                    self.done = true;
                    return Some((Err(e), self));
                }
            }
        }
    }
}

/// A watch stream's piece, as [`Resuming`] acts on it.
enum Answer {
    Response(WatchResponse),
    /// The stream is gone for a reason another member may not share: open it again.
    Lost,
    /// etcd ended the watch for good, or sent what cannot be read.
    Ended(GrpcError),
}

fn decoded(piece: Result<Piece, GrpcError>) -> Answer {
    match piece {
        Ok(Piece::Message(bytes)) => match WatchResponse::decode(bytes) {
            Ok(r) => Answer::Response(r),
            Err(e) => Answer::Ended(GrpcError::Malformed(e.to_string())),
        },
        Ok(Piece::End(Ok(()))) => Answer::Lost,
        Ok(Piece::End(Err(e))) | Err(e) if e.is_transient() => Answer::Lost,
        Ok(Piece::End(Err(e))) | Err(e) => Answer::Ended(e),
    }
}

/// TLS as configured: etcd's CA, and a client certificate when etcd asks for one.
fn tls_config(tls: Option<&EtcdTls>) -> Result<rustls::ClientConfig, GrpcError> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let bad = |what: &str, path: &std::path::Path, e: &dyn std::fmt::Display| {
        GrpcError::Tls(format!("cannot read the {what} {}: {e}", path.display()))
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| GrpcError::Tls(e.to_string()))?;
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
            builder.with_client_auth_cert(certs, key).map_err(|e| GrpcError::Tls(e.to_string()))
        }
        (None, None) => Ok(builder.with_no_client_auth()),
        _ => Err(GrpcError::Tls("--etcd-certfile and --etcd-keyfile go together".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn etcd_without_a_leader_is_unreachable_and_its_other_refusals_keep_their_words() {
        let status = |code: &str, message: &str| {
            let mut headers = HeaderMap::new();
            headers.insert("grpc-status", code.parse().expect("header"));
            headers.insert("grpc-message", message.parse().expect("header"));
            grpc_status(&headers)
        };
        assert_eq!(
            status("14", "etcdserver: no leader"),
            Some(Err(GrpcError::Unreachable("etcdserver: no leader".into())))
        );
        assert_eq!(
            status("11", "etcdserver: mvcc: required revision has been compacted"),
            Some(Err(GrpcError::Refused("etcdserver: mvcc: required revision has been compacted".into())))
        );
        assert_eq!(status("3", "caf%C3%A9 100%25"), Some(Err(GrpcError::Refused("café 100%".into()))));
        assert_eq!(status("0", ""), Some(Ok(())));
        assert_eq!(grpc_status(&HeaderMap::new()), None);
    }

    #[test]
    fn messages_are_taken_whole_from_their_frames() {
        let one = framed(&wire::LeaseId { id: 5 });
        assert_eq!(&one[..], [0, 0, 0, 0, 2, 0x08, 0x05]);
        let two = [&one[..], &one[..]].concat();
        for cut in 0..two.len() {
            let mut buf = Bytes::copy_from_slice(&two[..cut]);
            let whole = usize::from(cut >= 7) + usize::from(cut >= 14);
            let mut got = 0;
            while let Some(m) = next_message(&mut buf).expect("no error") {
                assert_eq!(&m[..], [0x08, 0x05]);
                got += 1;
            }
            assert_eq!(got, whole, "cut at {cut}");
        }
        assert!(next_message(&mut Bytes::from_static(&[1, 0, 0, 0, 0])).is_err(), "compressed");
        assert!(next_message(&mut Bytes::from_static(&[0, 0xff, 0xff, 0xff, 0xff])).is_err(), "too long");
    }

    #[tokio::test]
    async fn streamed_messages_come_out_whole_however_the_frames_cut_them() {
        let messages: Vec<Bytes> =
            [&b"a"[..], &[7u8; 40][..], b"", b"xyz"].iter().map(|m| Bytes::copy_from_slice(m)).collect();
        let mut wire = BytesMut::new();
        for m in &messages {
            wire.put_u8(0);
            wire.put_u32(m.len() as u32);
            wire.put_slice(m);
        }
        let wire = wire.freeze();
        let mut ok = HeaderMap::new();
        ok.insert("grpc-status", "0".parse().expect("header"));
        // Every way of cutting the bytes in two or three frames.
        for a in 0..=wire.len() {
            for b in a..=wire.len() {
                let frames = [wire.slice(..a), wire.slice(a..b), wire.slice(b..)]
                    .into_iter()
                    .map(|d| Ok::<_, std::convert::Infallible>(hyper::body::Frame::data(d)))
                    .chain([Ok(hyper::body::Frame::trailers(ok.clone()))]);
                let got: Vec<_> = pieces(futures::stream::iter(frames)).collect().await;
                let (bodies, end): (Vec<_>, Vec<_>) = got.into_iter().partition(|p| matches!(p, Ok(Piece::Message(_))));
                let bodies: Vec<Bytes> = bodies
                    .into_iter()
                    .map(|p| match p {
                        Ok(Piece::Message(m)) => m,
                        _ => unreachable!(),
                    })
                    .collect();
                assert_eq!(bodies, messages, "cut at {a} and {b}");
                assert!(matches!(end[..], [Ok(Piece::End(Ok(())))]), "cut at {a} and {b}");
            }
        }
        // Cut short: the stream's end is an error (the connection went), after what was whole.
        let frames = [Ok::<_, std::convert::Infallible>(hyper::body::Frame::data(wire.slice(..8)))];
        let got: Vec<_> = pieces(futures::stream::iter(frames)).collect().await;
        assert!(matches!(&got[..], [Ok(Piece::Message(_)), Err(GrpcError::Unreachable(_))]), "{}", got.len());
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
}
