//! A webhook over HTTPS on 127.0.0.1, as a CRD's conversion or an admission
//! configuration points at one: a real TLS server on a runtime of its own (it stops with the
//! test's process) whose certificate is self-signed and marked as a CA, as `openssl req
//! -x509` makes one (Go trusts it as its own issuer). Each request's path and JSON body are
//! kept; the answer is the test's [`Reply`].

use http::Request;
use http_body_util::BodyExt;
use serde_json::Value;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

/// How a test answers: from the request's path (with its query) and JSON body.
pub type Answer = dyn Fn(&str, &Value) -> Reply + Send + Sync;

/// One answer: its status, headers and body, sent after `delay`.
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
    pub delay: std::time::Duration,
}

impl Reply {
    /// `status` with a JSON body.
    pub fn json(status: u16, body: &Value) -> Reply {
        let headers = vec![("Content-Type", "application/json".to_string())];
        Reply { status, headers, body: serde_json::to_vec(body).expect("json"), delay: Default::default() }
    }

    /// `status` with `body` of `content_type`.
    pub fn text(status: u16, content_type: &str, body: &str) -> Reply {
        let headers = vec![("Content-Type", content_type.to_string())];
        Reply { status, headers, body: body.as_bytes().to_vec(), delay: Default::default() }
    }

    /// A redirect to `location`.
    pub fn redirect(status: u16, location: &str) -> Reply {
        Reply { status, headers: vec![("Location", location.to_string())], body: Vec::new(), delay: Default::default() }
    }

    /// The same answer, `delay` late.
    pub fn after(self, delay: std::time::Duration) -> Reply {
        Reply { delay, ..self }
    }
}

/// One request the webhook received.
#[derive(Debug, Clone)]
pub struct Received {
    /// The path and query.
    pub path: String,
    pub body: Value,
}

pub struct HttpsWebhook {
    pub addr: SocketAddr,
    /// PEM of its certificate, to trust it by.
    pub ca_pem: String,
    seen: Arc<Mutex<Vec<Received>>>,
}

impl HttpsWebhook {
    pub fn start(answer: impl Fn(&str, &Value) -> Reply + Send + Sync + 'static) -> HttpsWebhook {
        let answer: Arc<Answer> = Arc::new(answer);
        let mut params = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()]).expect("params");
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let key = rcgen::KeyPair::generate().expect("key");
        let cert = params.self_signed(&key).expect("certificate");
        let ca_pem = cert.pem();
        let tls = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .expect("protocols")
            .with_no_client_auth()
            .with_single_cert(
                vec![cert.der().clone()],
                rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
            )
            .expect("tls config");
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("addr");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let kept = seen.clone();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                loop {
                    let Ok((tcp, _)) = listener.accept().await else { continue };
                    let (acceptor, answer, kept) = (acceptor.clone(), answer.clone(), kept.clone());
                    tokio::spawn(async move {
                        let Ok(tls) = acceptor.accept(tcp).await else { return };
                        let service = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                            let (answer, kept) = (answer.clone(), kept.clone());
                            async move {
                                let path = req.uri().path_and_query().map(|p| p.to_string()).unwrap_or_default();
                                let body = req.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
                                let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                                let reply = answer(&path, &body);
                                kept.lock().expect("seen").push(Received { path, body });
                                tokio::time::sleep(reply.delay).await;
                                let mut response = http::Response::builder().status(reply.status);
                                for (name, value) in reply.headers {
                                    response = response.header(name, value);
                                }
                                let body = http_body_util::Full::new(bytes::Bytes::from(reply.body));
                                Ok::<_, std::convert::Infallible>(response.body(body).expect("response"))
                            }
                        });
                        let io = hyper_util::rt::TokioIo::new(tls);
                        let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, service).await;
                    });
                }
            });
        });
        HttpsWebhook { addr, ca_pem, seen }
    }

    /// The requests received so far.
    pub fn received(&self) -> Vec<Received> {
        self.seen.lock().expect("seen").clone()
    }

    /// Forgets what was received.
    pub fn clear(&self) {
        self.seen.lock().expect("seen").clear();
    }

    /// `https://127.0.0.1:PORT/<path>`.
    pub fn url(&self, path: &str) -> String {
        format!("https://{}/{path}", self.addr)
    }

    /// The certificate as a `caBundle` (base64 of its PEM).
    pub fn ca_bundle(&self) -> String {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(&self.ca_pem)
    }
}
