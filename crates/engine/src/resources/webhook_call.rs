//! A webhook called over HTTPS as kube-apiserver's webhook clients call one (client-go's
//! REST client over Go's `net/http`): a POST trusting the configured CA bundle (or the
//! system's roots), redirects followed as Go follows them, answers read as client-go reads
//! them, and every failure in Go's words. Shared by a CRD's conversion webhook and the
//! admission webhooks.
//!
//! Calls run on a runtime of their own, whose pooled connections outlive any one request's
//! runtime: [`call`] awaits one from async code, [`wait`] blocks for one (the engine's
//! conversions are synchronous; on a multi-threaded runtime the waiting worker hands its
//! other tasks on first, so a slow webhook holds only the request that needs it).

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

type Https = hyper_rustls::HttpsConnector<HttpConnector>;
/// The HTTPS client a webhook is called with.
pub(crate) type HttpsClient = Client<Https, Full<Bytes>>;

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
pub(crate) async fn call(client: HttpsClient, url: String, body: Vec<u8>, deadline: Deadline) -> Result<Value, String> {
    runtime()
        .spawn(post(client, url, body, deadline))
        .await
        .unwrap_or_else(|e| Err(format!("the webhook's call failed: {e}")))
}

/// [`call`] for a synchronous caller: blocks until the webhook answers (see [`wait`]).
pub(crate) fn call_blocking(
    client: HttpsClient,
    url: String,
    body: Vec<u8>,
    deadline: Deadline,
) -> Result<Value, String> {
    wait(post(client, url, body, deadline))
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
            .expect("a runtime for webhooks")
    })
}

/// Runs `call` on the webhooks' runtime and waits for its answer.
fn wait(call: impl Future<Output = Result<Value, String>> + Send + 'static) -> Result<Value, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    runtime().spawn(async move {
        let _ = tx.send(call.await);
    });
    let receive = || rx.recv().unwrap_or_else(|_| Err("the webhook's call was dropped".into()));
    match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(receive),
        _ => receive(),
    }
}

/// POSTs `body` to `url`, following redirects as Go's client does, within `deadline`: the
/// review answered, or Go's words for why not.
async fn post(client: HttpsClient, url: String, body: Vec<u8>, deadline: Deadline) -> Result<Value, String> {
    // The whole exchange is timed out, worded by what it was waiting for.
    let (limit, deadline) = (deadline, tokio::time::Instant::now() + deadline.duration());
    let (mut method, mut url, mut body) = (http::Method::POST, url, Some(Bytes::from(body)));
    let mut redirects = 0;
    let response = loop {
        let verb = go_method(&method);
        let mut request = http::Request::builder()
            .method(method.clone())
            .uri(&url)
            .header(http::header::ACCEPT, "application/json, */*")
            .header(http::header::USER_AGENT, "kube-apiserver-admission");
        if body.is_some() {
            request = request.header(http::header::CONTENT_TYPE, "application/json");
        }
        let request =
            request.body(Full::new(body.clone().unwrap_or_default())).map_err(|e| format!("{verb} {url:?}: {e}"))?;
        let response = match tokio::time::timeout_at(deadline, client.request(request)).await {
            Ok(response) => response.map_err(|e| format!("{verb} {url:?}: {}", go_words(&e, &url)))?,
            Err(_) => return Err(format!("{verb} {url:?}: {}", limit.expired_awaiting_headers())),
        };
        let location = response.headers().get(http::header::LOCATION).and_then(|l| l.to_str().ok());
        match redirect(response.status().as_u16(), &method, &url, location) {
            // Go names the first request's method and the Location as sent.
            Some(_) if redirects == MAX_REDIRECTS => {
                return Err(format!("Post {:?}: stopped after 10 redirects", location.unwrap_or_default()));
            }
            Some((next, to, keeps_body)) => {
                (method, url, redirects) = (next, to, redirects + 1);
                body = body.filter(|_| keeps_body);
            }
            None => break response,
        }
    };
    let status = response.status();
    let content_type = response.headers().get(http::header::CONTENT_TYPE).and_then(|c| c.to_str().ok());
    let text = content_type.is_some_and(|c| c.trim_start().to_ascii_lowercase().starts_with("text/"));
    let call = async {
        let mut body = response.into_body();
        let mut bytes = Vec::new();
        while let Some(frame) = body.frame().await {
            match frame {
                Ok(frame) => {
                    bytes.extend_from_slice(frame.data_ref().map_or(&[][..], |d| d.as_ref()));
                    // Go reads any size; the engine's memory stays bounded.
                    if bytes.len() > MAX_ANSWER {
                        return Err(format!("{} {url:?}: the answer is over {MAX_ANSWER} bytes", go_method(&method)));
                    }
                }
                // A body that ends with the connection, closed without TLS's close_notify:
                // Go reads it as ended, and so does this.
                Err(e) if ends_unannounced(&e) => break,
                Err(e) => return Err(format!("{} {url:?}: {e}", go_method(&method))),
            }
        }
        Ok::<_, String>(bytes)
    };
    let bytes = match tokio::time::timeout_at(deadline, call).await {
        Ok(answer) => answer?,
        // client-go's REST client words a body cut short by the timeout without the URL.
        Err(_) => {
            return Err(format!(
                "unexpected error when reading response body. Please retry. Original error: {}",
                limit.expired_reading_body()
            ));
        }
    };
    // client-go's JSON serializer reads YAML too (as JSON it becomes).
    let value = serde_json::from_slice(&bytes)
        .or_else(|_| crate::representation::body_yaml::read(&bytes).map(|read| read.object));
    if !status.is_success() {
        return Err(unsuccessful(status.as_u16(), value.as_ref().ok(), text.then_some(&bytes[..])));
    }
    let value = value.map_err(|e| format!("couldn't get version/kind; json parse error: {e}"))?;
    if let Some(why) = crate::resources::go_decode::interpret_error(&value) {
        return Err(why);
    }
    Ok(value)
}

/// How long a webhook call may take, and whose deadline words its expiry: a conversion's
/// is its HTTP client's `Timeout`, an admission webhook's its request context's.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Deadline {
    Client(Duration),
    Context(Duration),
}

impl Deadline {
    fn duration(self) -> Duration {
        match self {
            Deadline::Client(d) | Deadline::Context(d) => d,
        }
    }

    /// Go's words for a deadline passed before the answer's headers came.
    fn expired_awaiting_headers(self) -> &'static str {
        match self {
            Deadline::Client(_) => "net/http: request canceled (Client.Timeout exceeded while awaiting headers)",
            Deadline::Context(_) => "context deadline exceeded",
        }
    }

    /// Go's words for a deadline passed while the answer's body was read.
    fn expired_reading_body(self) -> &'static str {
        match self {
            Deadline::Client(_) => {
                "net/http: request canceled (Client.Timeout or context cancellation while reading body)"
            }
            Deadline::Context(_) => "context deadline exceeded",
        }
    }
}

/// The largest answer read from a webhook (a review holds one object of at most 3 MiB).
const MAX_ANSWER: usize = 64 << 20;

/// Go's client follows at most this many redirects.
const MAX_REDIRECTS: usize = 10;

/// Go's word for a method in its errors (`Post`, `Get`).
fn go_method(method: &http::Method) -> String {
    let upper = method.as_str();
    let mut word = upper[..1].to_string();
    word.push_str(&upper[1..].to_ascii_lowercase());
    word
}

/// Where Go's client goes after a `code` answer to `method` at `url` with `location`: the
/// method, the URL, and whether the body goes too (a 307 or 308 keeps both; a 301, 302 or
/// 303 to a POST is a GET without one). `None`: no redirect.
fn redirect(
    code: u16,
    method: &http::Method,
    url: &str,
    location: Option<&str>,
) -> Option<(http::Method, String, bool)> {
    let location = location.filter(|l| !l.is_empty())?;
    let (method, keeps_body) = match code {
        301..=303 if *method != http::Method::GET && *method != http::Method::HEAD => (http::Method::GET, false),
        301..=303 => (method.clone(), false),
        307 | 308 => (method.clone(), true),
        _ => return None,
    };
    let to = if location.contains("://") {
        location.to_string()
    } else {
        let (scheme, rest) = url.split_once("://")?;
        let authority = rest.split(['/', '?']).next().unwrap_or(rest);
        if location.starts_with('/') {
            format!("{scheme}://{authority}{location}")
        } else {
            let path = rest[authority.len()..].split('?').next().unwrap_or_default();
            let dir = path.rsplit_once('/').map_or("", |(dir, _)| dir);
            format!("{scheme}://{authority}{dir}/{location}")
        }
    };
    Some((method, to, keeps_body))
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

/// client-go's error for an answer that is no success: a Status's message, else
/// apimachinery's `NewGenericServerResponse` words for the code, quoting the body when it
/// is text (`text`, its first 2048 bytes) where they quote the server.
fn unsuccessful(code: u16, body: Option<&Value>, text: Option<&[u8]>) -> String {
    let status_message = body
        .filter(|b| b.get("kind").and_then(Value::as_str) == Some("Status"))
        .and_then(|b| b.get("message").and_then(Value::as_str))
        .filter(|m| !m.is_empty());
    if let Some(message) = status_message {
        return message.to_string();
    }
    let server = match text {
        Some(text) => String::from_utf8_lossy(&text[..text.len().min(2048)]).trim().to_string(),
        None => "unknown".to_string(),
    };
    match code {
        409 => "the server reported a conflict".into(),
        404 => "the server could not find the requested resource".into(),
        400 => "the server rejected our request for an unknown reason".into(),
        401 => "the server has asked for the client to provide credentials".into(),
        403 | 415 => server,
        406 if server != "unknown" && !server.is_empty() => server,
        406 => "the server was unable to respond with a content type that the client supports".into(),
        405 => "the server does not allow this method on the requested resource".into(),
        422 => "the server rejected our request due to an error in our request".into(),
        503 => "the server is currently unable to handle the request".into(),
        504 => "the server was unable to return a response in the time allotted, but may still be processing the \
                request"
            .into(),
        429 => "the server has received too many requests and has asked us to try again later".into(),
        500.. => {
            format!(
                "an error on the server ({}) has prevented the request from succeeding",
                crate::field::go_quote(&server)
            )
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirects_go_where_gos_client_goes() {
        let at = "https://127.0.0.1:9/hooks/convert?timeout=30s";
        let post = http::Method::POST;
        assert_eq!(
            redirect(302, &post, at, Some("/rename")),
            Some((http::Method::GET, "https://127.0.0.1:9/rename".into(), false))
        );
        assert_eq!(
            redirect(307, &post, at, Some("other")),
            Some((post.clone(), "https://127.0.0.1:9/hooks/other".into(), true))
        );
        assert_eq!(redirect(308, &post, at, Some("https://h/x")), Some((post.clone(), "https://h/x".into(), true)));
        assert_eq!(redirect(302, &post, at, None), None);
        assert_eq!(redirect(200, &post, at, Some("/x")), None);
    }

    #[test]
    fn an_unsuccessful_answer_is_worded_as_client_gos() {
        let html = b"  <html>no</html>\n";
        assert_eq!(
            unsuccessful(501, None, Some(html)),
            r#"an error on the server ("<html>no</html>") has prevented the request from succeeding"#
        );
        assert_eq!(
            unsuccessful(500, None, None),
            r#"an error on the server ("unknown") has prevented the request from succeeding"#
        );
        assert_eq!(
            unsuccessful(418, None, None),
            "the server responded with the status code 418 but did not return more information"
        );
        let status = serde_json::json!({"kind": "Status", "message": "hook broke"});
        assert_eq!(unsuccessful(500, Some(&status), None), "hook broke");
    }
}
