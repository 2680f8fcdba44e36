//! The HTTP edge of the etcd backend: POSTs JSON to the first etcd endpoint that answers.
//!
//! Every call is bounded by the configured timeout, so an unreachable etcd costs a request
//! that long at most, never a hang. A request that could not connect moves on to the next
//! endpoint (nothing was sent, so retrying is safe); a request that was sent and timed out is
//! not retried: a write may have been applied, and only the caller can tell.

use super::{EtcdConfig, EtcdTls};
use bytes::{Bytes, BytesMut};
use futures::{Stream, StreamExt};
use http_body_util::{BodyExt, BodyStream, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

type Https = hyper_rustls::HttpsConnector<HttpConnector>;

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

/// A client of one etcd cluster's JSON gateway.
pub struct Gateway {
    client: Client<Https, Full<Bytes>>,
    endpoints: Vec<String>,
    /// The endpoint that answered last: tried first.
    preferred: AtomicUsize,
    timeout: Duration,
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
        Ok(Gateway { client, endpoints, preferred: AtomicUsize::new(0), timeout: config.timeout })
    }

    /// The longest one call may take.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// POSTs `body` to `path` and reads the JSON answer.
    pub async fn call<T: DeserializeOwned>(&self, path: &str, body: &impl Serialize) -> Result<T, GatewayError> {
        let body = serde_json::to_vec(body).map_err(|e| GatewayError::Malformed(e.to_string()))?;
        let response = self.send(path, Bytes::from(body)).await?;
        let (parts, body) = response.into_parts();
        let bytes = tokio::time::timeout(self.timeout, body.collect())
            .await
            .map_err(|_| GatewayError::Timeout(self.timeout))?
            .map_err(|e| GatewayError::Unreachable(e.to_string()))?
            .to_bytes();
        if !parts.status.is_success() {
            return Err(refusal(&bytes));
        }
        serde_json::from_slice(&bytes).map_err(|e| GatewayError::Malformed(e.to_string()))
    }

    /// POSTs `body` to a streaming `path` (a watch): once etcd has answered, the lines it
    /// streams, with no time bound (a watch may stay quiet for hours).
    pub async fn stream(
        &self,
        path: &str,
        body: &impl Serialize,
    ) -> Result<impl Stream<Item = Result<Bytes, GatewayError>> + Send + 'static, GatewayError> {
        let body = serde_json::to_vec(body).map_err(|e| GatewayError::Malformed(e.to_string()))?;
        let response = self.send(path, Bytes::from(body)).await?;
        if !response.status().is_success() {
            let bytes = response.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
            return Err(refusal(&bytes));
        }
        let frames = BodyStream::new(response.into_body());
        Ok(lines(frames.filter_map(|frame| async move {
            match frame {
                Ok(frame) => frame.into_data().ok().map(Ok),
                Err(e) => Some(Err(GatewayError::Unreachable(e.to_string()))),
            }
        })))
    }

    async fn send(&self, path: &str, body: Bytes) -> Result<hyper::Response<hyper::body::Incoming>, GatewayError> {
        let first = self.preferred.load(Ordering::Relaxed);
        let mut last = GatewayError::Unreachable("no etcd endpoint configured".into());
        for i in 0..self.endpoints.len() {
            let at = (first + i) % self.endpoints.len();
            let request = hyper::Request::post(format!("{}{path}", self.endpoints[at]))
                .header(http::header::CONTENT_TYPE, "application/json")
                .body(Full::new(body.clone()))
                .map_err(|e| GatewayError::Unreachable(e.to_string()))?;
            match tokio::time::timeout(self.timeout, self.client.request(request)).await {
                Err(_) => return Err(GatewayError::Timeout(self.timeout)),
                Ok(Ok(response)) => {
                    self.preferred.store(at, Ordering::Relaxed);
                    return Ok(response);
                }
                // Not connected: nothing was sent, the next endpoint may take it.
                Ok(Err(e)) if e.is_connect() => {
                    last = GatewayError::Unreachable(format!("{}: {e}", self.endpoints[at]))
                }
                Ok(Err(e)) => return Err(GatewayError::Unreachable(format!("{}: {e}", self.endpoints[at]))),
            }
        }
        Err(last)
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

    #[tokio::test]
    async fn lines_are_split_across_and_within_chunks() {
        let chunks = ["{\"a\":1}\n{\"b\"", ":2}\n", "{\"c\":3}"].map(|s| Ok(Bytes::from(s)));
        let got: Vec<_> = lines(futures::stream::iter(chunks)).map(|l| l.expect("line")).collect().await;
        assert_eq!(got, [Bytes::from("{\"a\":1}"), Bytes::from("{\"b\":2}"), Bytes::from("{\"c\":3}")]);
    }
}
