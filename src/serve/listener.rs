//! The socket side of `serve`: the accept loop, one task per connection (TLS handshake, then
//! hyper-util's auto builder, which speaks HTTP/1.1 or HTTP/2 as the client chooses), and
//! graceful shutdown — stop accepting, ask every connection to finish its in-flight requests
//! (HTTP/2 GOAWAY, HTTP/1.1 close after the response), wait a bounded time, then drop what
//! is left. Nothing here knows about the engine: it serves any axum router.

use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt;

/// A client that has not finished its TLS handshake by then is dropped.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Pause after a failed `accept` (e.g. out of file descriptors) before trying again.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// How the connections ended, for the shutdown log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Drained {
    /// Connections still busy when the drain time ran out, and closed mid-request.
    pub aborted: usize,
}

/// Serves `app` on `listener` until `shutdown` completes, then drains for at most `drain`.
pub async fn serve(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    app: Router,
    shutdown: impl Future<Output = ()>,
    drain: Duration,
) -> Drained {
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut builder = auto::Builder::new(TokioExecutor::new());
    // Timers let hyper enforce its header-read timeout and HTTP/2 keep-alives.
    builder.http1().timer(TokioTimer::new());
    builder.http2().timer(TokioTimer::new());
    let mut connections = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            // Shutdown wins over new connections.
            biased;
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    // Watch events are small writes: without TCP_NODELAY, Nagle's algorithm
                    // holds each one until the peer's delayed ACK (about 40 ms on Linux).
                    if let Err(e) = stream.set_nodelay(true) {
                        tracing::debug!("TCP_NODELAY on {peer}: {e}");
                    }
                    let conn = Connection { builder: builder.clone(), app: app.clone(), stop: stop_rx.clone(), peer };
                    connections.spawn(conn.run(stream, tls.clone()));
                }
                Err(e) => {
                    tracing::warn!("accepting a connection failed: {e}");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                }
            },
            // Reap finished connections so the set does not grow for the server's lifetime.
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    drop(listener);
    // Receivers only fail when the sender is gone, which it is not; nothing to handle.
    let _ = stop_tx.send(true);
    let drained = tokio::time::timeout(drain, async { while connections.join_next().await.is_some() {} }).await;
    let aborted = if drained.is_err() { connections.len() } else { 0 };
    connections.abort_all();
    Drained { aborted }
}

/// One accepted client.
struct Connection {
    builder: auto::Builder<TokioExecutor>,
    app: Router,
    stop: watch::Receiver<bool>,
    peer: SocketAddr,
}

impl Connection {
    async fn run(mut self, stream: tokio::net::TcpStream, tls: Option<TlsAcceptor>) {
        let Some(tls) = tls else {
            return self.http(stream).await;
        };
        let handshake = tokio::time::timeout(HANDSHAKE_TIMEOUT, tls.accept(stream));
        let done = tokio::select! {
            done = handshake => done,
            () = stopped(&mut self.stop) => return,
        };
        match done {
            // HTTP/2 puts many watches on one connection: coalesce their writes.
            Ok(Ok(stream)) if stream.get_ref().1.alpn_protocol() == Some(b"h2") => {
                self.http(super::coalesce::Coalesced::new(stream)).await
            }
            Ok(Ok(stream)) => self.http(stream).await,
            Ok(Err(e)) => tracing::debug!(peer = %self.peer, "TLS handshake failed: {e}"),
            Err(_) => tracing::debug!(peer = %self.peer, "TLS handshake timed out"),
        }
    }

    async fn http<I>(mut self, io: I)
    where
        I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let app = self.app;
        let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| app.clone().oneshot(request));
        let conn = self.builder.serve_connection(TokioIo::new(io), service);
        tokio::pin!(conn);
        let result = tokio::select! {
            result = conn.as_mut() => result,
            () = stopped(&mut self.stop) => {
                conn.as_mut().graceful_shutdown();
                conn.await
            }
        };
        if let Err(e) = result {
            tracing::debug!(peer = %self.peer, "connection ended with an error: {e}");
        }
    }
}

/// Completes once shutdown is asked for (or the server is gone).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    // The guard `wait_for` returns is not `Send`; it must not live across the caller's awaits.
    let _ = stop.wait_for(|stop| *stop).await;
}
