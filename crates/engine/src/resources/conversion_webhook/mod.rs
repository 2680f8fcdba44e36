//! A CRD's conversion webhook (`spec.conversion.strategy: Webhook`), called as
//! kube-apiserver calls it: an HTTPS POST of a `ConversionReview` to the configured `url`
//! (with `?timeout=30s`), trusting the CRD's `caBundle` (or the system's roots without
//! one), whenever an object must change version — read at another version than stored,
//! or written at another than the storage version. A failure is kube's bare 500,
//! `conversion webhook for <group/version, Kind=Kind> failed: ...`.
//!
//! The engine's conversions are synchronous (inside its codec), so the call runs on a
//! runtime of its own and the caller waits for it; on a multi-threaded runtime the
//! waiting worker hands its other tasks on first, so a slow webhook holds only the request
//! that needs it. A webhook named by a `service` cannot be reached: the engine runs no
//! Services, and answers as kube does for a Service that does not exist.

mod review;

use crate::status::ApiError;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::Value;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// kube's timeout of a conversion webhook call (not configurable for conversions).
const TIMEOUT: Duration = Duration::from_secs(30);

type Https = hyper_rustls::HttpsConnector<HttpConnector>;
pub(crate) type HttpsClient = Client<Https, Full<Bytes>>;

/// Where and how a CRD's conversions are sent.
pub struct ConversionWebhook {
    target: Target,
    /// `v1` or `v1beta1`: the first of the CRD's `conversionReviewVersions` kube speaks.
    review_version: &'static str,
}

enum Target {
    /// `url?timeout=30s`, and the client trusting the CRD's CA bundle: made at the first
    /// conversion, not when the CRD is served (a CRD's every version holds a webhook, and
    /// without a bundle the system's roots are read from disk).
    Url { url: String, ca_bundle: Option<Vec<u8>>, client: OnceLock<Result<Box<HttpsClient>, String>> },
    /// Why nothing can be called (a Service reference).
    Unreachable(String),
}

impl std::fmt::Debug for ConversionWebhook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let target = match &self.target {
            Target::Url { url, .. } => url.as_str(),
            Target::Unreachable(why) => why.as_str(),
        };
        f.debug_struct("ConversionWebhook").field("target", &target).finish_non_exhaustive()
    }
}

impl ConversionWebhook {
    /// The webhook `crd` converts through, if its strategy is `Webhook`.
    pub fn of(crd: &CustomResourceDefinition) -> Option<Arc<ConversionWebhook>> {
        let conversion = crd.spec.conversion.as_ref().filter(|c| c.strategy == "Webhook")?;
        let webhook = conversion.webhook.as_ref()?;
        let review_version = webhook
            .conversion_review_versions
            .iter()
            .find_map(|v| ["v1", "v1beta1"].into_iter().find(|known| known == v))
            .unwrap_or("v1");
        let config = webhook.client_config.as_ref()?;
        let target = match (&config.url, &config.service) {
            (Some(url), _) => Target::Url {
                url: with_timeout(url, TIMEOUT),
                ca_bundle: config.ca_bundle.as_ref().map(|b| b.0.clone()),
                client: OnceLock::new(),
            },
            // The engine runs no Services: kube's resolver finds none.
            (None, Some(service)) => {
                let port = service.port.unwrap_or(443).into();
                let path = service.path.as_deref().unwrap_or_default();
                Target::Unreachable(unreachable_service(&service.namespace, &service.name, path, port, TIMEOUT))
            }
            (None, None) => return None,
        };
        Some(Arc::new(ConversionWebhook { target, review_version }))
    }

    /// `obj` (of `gvk`, `group/version, Kind=Kind`) converted to `desired` by the webhook,
    /// with kube's 500 when it cannot be.
    pub fn convert(&self, obj: &Value, desired: &str) -> Result<Value, ApiError> {
        let gvk = gvk_of(obj);
        let refused = |r: review::Refusal| ApiError::new(500, "", r.message(&gvk));
        let (url, client) = match &self.target {
            Target::Url { url, ca_bundle, client } => {
                match client.get_or_init(|| self::client(ca_bundle.as_deref()).map(Box::new)) {
                    Ok(client) => (url.clone(), HttpsClient::clone(client)),
                    Err(why) => return Err(refused(review::Refusal::Failed(why.clone()))),
                }
            }
            Target::Unreachable(why) => return Err(refused(review::Refusal::Failed(why.clone()))),
        };
        let uid = crate::meta::new_uid();
        let body = review::request(self.review_version, &uid, desired, obj);
        let answer = wait(post(client, url, body, TIMEOUT)).map_err(|why| refused(review::Refusal::Failed(why)))?;
        review::converted(&uid, desired, obj, &answer).map_err(refused)
    }
}

/// Go's `GroupVersionKind.String()` of an object.
fn gvk_of(obj: &Value) -> String {
    let text = |key: &str| obj.get(key).and_then(Value::as_str).unwrap_or_default();
    crate::resources::managed_fields::fieldmanager::gvk_string(text("apiVersion"), text("kind"))
}

/// client-go's REST client adds its timeout to the query.
pub(crate) fn with_timeout(url: &str, timeout: Duration) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}timeout={}s", timeout.as_secs())
}

/// Why a webhook named by a Service cannot be called: the engine runs no Services, and
/// kube's resolver answers so for a Service that does not exist.
pub(crate) fn unreachable_service(namespace: &str, name: &str, path: &str, port: i64, timeout: Duration) -> String {
    let url = with_timeout(&format!("https://{name}.{namespace}.svc:{port}{path}"), timeout);
    format!("Post {url:?}: service {name:?} not found")
}

/// POSTs `body` to `url` with `client` on the webhooks' own runtime (whose connections
/// outlive any one request's runtime), waiting without blocking the caller's.
pub(crate) async fn call(client: HttpsClient, url: String, body: Vec<u8>, timeout: Duration) -> Result<Value, String> {
    runtime()
        .spawn(post(client, url, body, timeout))
        .await
        .unwrap_or_else(|e| Err(format!("the webhook's call failed: {e}")))
}

/// An HTTPS client trusting `ca_bundle` (PEM), or the system's roots without one.
pub(crate) fn client(ca_bundle: Option<&[u8]>) -> Result<HttpsClient, String> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let unloadable = |e: &dyn std::fmt::Display| format!("unable to load root certificates: {e}");
    let mut roots = rustls::RootCertStore::empty();
    let mut bundle = Vec::new();
    match ca_bundle.filter(|b| !b.is_empty()) {
        Some(pem) => {
            for cert in CertificateDer::pem_slice_iter(pem) {
                let cert = cert.map_err(|e| unloadable(&e))?;
                roots.add(cert.clone()).map_err(|e| unloadable(&e))?;
                bundle.push(cert);
            }
        }
        None => {
            for cert in rustls_native_certs::load_native_certs().certs {
                let _ = roots.add(cert);
            }
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let webpki = rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .map_err(|e| unloadable(&e))?;
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(BundleVerifier { webpki, bundle }))
        .with_no_client_auth();
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http()
        .enable_http1()
        .wrap_connector(http);
    Ok(Client::builder(TokioExecutor::new()).build(https))
}

/// WebPKI's verification, and Go's one leniency a webhook's author relies on: a
/// self-signed certificate that is itself in the CA bundle (made with `openssl req -x509`,
/// so marked as a CA) is trusted as the server's, where WebPKI refuses a CA as an end
/// entity. Its names are still checked (its dates are not, there).
#[derive(Debug)]
struct BundleVerifier {
    webpki: Arc<rustls::client::WebPkiServerVerifier>,
    bundle: Vec<rustls::pki_types::CertificateDer<'static>>,
}

impl rustls::client::danger::ServerCertVerifier for BundleVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &rustls::pki_types::CertificateDer<'_>,
        intermediates: &[rustls::pki_types::CertificateDer<'_>],
        server_name: &rustls::pki_types::ServerName<'_>,
        ocsp_response: &[u8],
        now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        let verified = self.webpki.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now);
        match verified {
            Err(rustls::Error::InvalidCertificate(rustls::CertificateError::Other(_)))
                if self.bundle.iter().any(|c| c.as_ref() == end_entity.as_ref()) =>
            {
                let parsed = rustls::server::ParsedCertificate::try_from(end_entity)?;
                rustls::client::verify_server_name(&parsed, server_name)?;
                Ok(rustls::client::danger::ServerCertVerified::assertion())
            }
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.webpki.supported_verify_schemes()
    }
}

/// The runtime the calls run on, apart from the engine's (whose worker waits for them).
fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("webhooks")
            .enable_all()
            .build()
            .expect("a runtime for conversion webhooks")
    })
}

/// Runs `call` on the webhooks' runtime and waits for its answer.
fn wait(call: impl Future<Output = Result<Value, String>> + Send + 'static) -> Result<Value, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    runtime().spawn(async move {
        let _ = tx.send(call.await);
    });
    let receive = || rx.recv().unwrap_or_else(|_| Err("the conversion webhook's call was dropped".into()));
    match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(receive),
        _ => receive(),
    }
}

/// POSTs `body` to `url`: the review answered, or Go's words for why not.
async fn post(client: HttpsClient, url: String, body: Vec<u8>, timeout: Duration) -> Result<Value, String> {
    let request = http::Request::post(&url)
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(http::header::ACCEPT, "application/json, */*")
        .header(http::header::USER_AGENT, "kube-apiserver-admission")
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| format!("Post {url:?}: {e}"))?;
    let call = async {
        let response = client.request(request).await.map_err(|e| format!("Post {url:?}: {}", go_words(&e, &url)))?;
        let status = response.status();
        let mut body = response.into_body();
        let mut bytes = Vec::new();
        while let Some(frame) = body.frame().await {
            match frame {
                Ok(frame) => bytes.extend_from_slice(frame.data_ref().map_or(&[][..], |d| d.as_ref())),
                // A body that ends with the connection, closed without TLS's close_notify:
                // Go reads it as ended, and so does this.
                Err(e) if ends_unannounced(&e) => break,
                Err(e) => return Err(format!("Post {url:?}: {e}")),
            }
        }
        Ok::<_, String>((status, bytes))
    };
    let (status, bytes) = match tokio::time::timeout(timeout, call).await {
        Ok(answer) => answer?,
        Err(_) => return Err(format!("Post {url:?}: context deadline exceeded")),
    };
    // client-go's JSON serializer reads YAML too (as JSON it becomes).
    let value = serde_json::from_slice(&bytes)
        .or_else(|_| crate::representation::body_yaml::read(&bytes).map(|read| read.object));
    if !status.is_success() {
        return Err(unsuccessful(status.as_u16(), value.as_ref().ok()));
    }
    let value = value.map_err(|e| format!("couldn't get version/kind; json parse error: {e}"))?;
    if let Some(why) = crate::resources::go_decode::interpret_error(&value) {
        return Err(why);
    }
    Ok(value)
}

/// Whether `e` is a connection closed without TLS's close_notify.
fn ends_unannounced(e: &hyper::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        if err.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::UnexpectedEof) {
            return true;
        }
        source = err.source();
    }
    false
}

/// client-go's error for an answer that is no success: a Status's message, else its
/// words for the code.
fn unsuccessful(code: u16, body: Option<&Value>) -> String {
    let status_message = body
        .filter(|b| b.get("kind").and_then(Value::as_str) == Some("Status"))
        .and_then(|b| b.get("message").and_then(Value::as_str))
        .filter(|m| !m.is_empty());
    if let Some(message) = status_message {
        return message.to_string();
    }
    match code {
        404 => "the server could not find the requested resource".into(),
        _ => format!("the server responded with the status code {code} but did not return more information"),
    }
}

/// Go's words for a call that got no answer: a refused connection as its dialer says it,
/// a certificate nobody trusts as its TLS stack does.
fn go_words(e: &hyper_util::client::legacy::Error, url: &str) -> String {
    // An io::Error wrapping another error is walked into that error itself (its `source`
    // skips it).
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = next {
        if let Some(tls) = err.downcast_ref::<rustls::Error>() {
            return tls_words(tls, url);
        }
        next = match err.downcast_ref::<std::io::Error>() {
            Some(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
                return format!("dial tcp {}: connect: connection refused", host_port(url));
            }
            Some(io) => match io.get_ref() {
                Some(inner) => Some(inner as &(dyn std::error::Error + 'static)),
                None => std::error::Error::source(io),
            },
            None => err.source(),
        };
    }
    e.to_string()
}

/// Go's TLS stack's words for a certificate it does not take.
fn tls_words(e: &rustls::Error, url: &str) -> String {
    use rustls::CertificateError as C;
    let why = match e {
        // WebPKI refuses an untrusted self-signed certificate as a CA used as an end entity
        // before it looks for its issuer; Go finds no issuer.
        rustls::Error::InvalidCertificate(C::UnknownIssuer | C::Other(_)) => {
            "x509: certificate signed by unknown authority".into()
        }
        rustls::Error::InvalidCertificate(C::NotValidForNameContext { presented, .. }) => {
            hostname_words(&dialed(url).0, presented)
        }
        rustls::Error::InvalidCertificate(
            C::Expired | C::ExpiredContext { .. } | C::NotValidYet | C::NotValidYetContext { .. },
        ) => "x509: certificate has expired or is not yet valid".into(),
        other => return format!("remote error: {other}"),
    };
    format!("tls: failed to verify certificate: {why}")
}

/// Go's `HostnameError`: the names (or addresses, for an address) the certificate is valid
/// for, of those `presented` (its subject alternative names).
fn hostname_words(host: &str, presented: &[String]) -> String {
    let is_ip = |s: &str| s.parse::<std::net::IpAddr>().is_ok();
    // rustls shows each as `DnsName("name")` or `IpAddress(address)`.
    let unwrap = |p: &str| {
        let inner = p.split_once('(').map_or(p, |(_, rest)| rest.strip_suffix(')').unwrap_or(rest));
        inner.trim_matches('"').to_string()
    };
    let presented: Vec<String> = presented.iter().map(|p| unwrap(p)).collect();
    let names: Vec<&str> = presented.iter().map(String::as_str).filter(|p| is_ip(p) == is_ip(host)).collect();
    if is_ip(host) && names.is_empty() {
        return format!("x509: cannot validate certificate for {host} because it doesn't contain any IP SANs");
    }
    if names.is_empty() {
        return format!("x509: certificate is not valid for any names, but wanted to match {host}");
    }
    format!("x509: certificate is valid for {}, not {host}", names.join(", "))
}

/// The host and port a URL dials (https's port when it names none), read by the
/// engine's copy of Go's URL parser.
fn dialed(url: &str) -> (String, String) {
    let Ok(parsed) = crate::schema::go_url::parse_reference(url) else { return (url.to_string(), String::new()) };
    let port = parsed.port();
    (parsed.hostname(), if port.is_empty() { "443".into() } else { port })
}

/// Go's `host:port` of the address a URL dials.
fn host_port(url: &str) -> String {
    let (host, port) = dialed(url);
    if host.contains(':') { format!("[{host}]:{port}") } else { format!("{host}:{port}") }
}
