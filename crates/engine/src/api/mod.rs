//! The HTTP surface: routes Kubernetes API paths to discovery and to the served kinds.
//!
//! Every error is a `metav1.Status` with kube-apiserver's code, reason and message;
//! paths nothing serves answer kube's plain-text `404 page not found`.

pub mod body;
pub mod discovery;
pub mod openapi;
pub mod options;
pub mod protobuf;
pub mod protobuf_status;
pub mod query;
pub mod request;
pub mod respond;
pub mod route;
pub mod routes;
pub mod watch;

use crate::Engine;
use crate::representation::negotiation;
use crate::status::ApiError;
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use std::sync::Arc;

/// The engine's router. No authentication here: `serve` adds its bearer-token layer in
/// front, and local mode has no one to authenticate.
pub fn router(engine: Arc<Engine>) -> Router {
    Router::new()
        // kube serves `/version` through a GET-only go-restful route (HEAD included in the
        // refusal, and no `Allow` header); the health checks and the OpenAPI documents are
        // plain handlers that answer any method alike.
        .route("/version", any(version))
        .route("/version/", any(version))
        .route("/version/{*rest}", any(under_version))
        .route("/healthz", any(health))
        .route("/livez", any(health))
        .route("/readyz", any(readyz))
        .route("/healthz/{check}", any(health_check))
        .route("/livez/{check}", any(health_check))
        .route("/readyz/{check}", any(health_check))
        .route("/openapi/v2", any(openapi::serve_v2))
        .route("/openapi/v3", any(openapi::serve_v3_index))
        // The aggregator's prefix handler: `/openapi/v3/` alone is one more unknown document.
        .route("/openapi/v3/", any(openapi::serve_v3_document))
        .route("/openapi/v3/{*group_version}", any(openapi::serve_v3_document))
        .fallback(dispatch)
        .with_state(engine)
}

/// Go's server's own answer to a request line it cannot parse (a bad `%` escape in the
/// path): plain text, and the connection closed, before kube sees the request.
pub fn bad_request_line() -> Response {
    let mut res = (StatusCode::BAD_REQUEST, "400 Bad Request").into_response();
    let h = res.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    h.insert(header::CONNECTION, HeaderValue::from_static("close"));
    res
}

/// kube's filter that reads a request's `RequestInfo` fails on the path: Go's `http.Error`
/// with the request line quoted, a 500 before any route.
fn request_info_failed(uri: &axum::http::Uri, why: &str) -> Response {
    let raw = uri.path_and_query().map_or("/", |pq| pq.as_str());
    let text =
        format!("Internal Server Error: {}: failed to create RequestInfo: {why}, {raw}\n", crate::field::go_quote(raw));
    let mut res = (StatusCode::INTERNAL_SERVER_ERROR, text).into_response();
    let h = res.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    h.insert("X-Content-Type-Options", HeaderValue::from_static("nosniff"));
    res
}

/// A JSON body with the headers kube-apiserver sends on every API response.
pub fn json_response(status: StatusCode, body: &serde_json::Value) -> Response {
    // Straight into bytes, as Go's encoder writes them (kube's answers escape `<`, `>`
    // and `&`, write floats Go's way, and a built-in kind's members in its struct's order).
    json_text_response(status, crate::resources::builtin::struct_json::to_vec(body))
}

fn json_text_response(status: StatusCode, body: impl Into<axum::body::Body>) -> Response {
    let body: axum::body::Body = body.into();
    let mut res = (status, body).into_response();
    let h = res.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache, private"));
    res
}

/// An error as a `Status` response.
pub fn error_response(e: &ApiError) -> Response {
    let status = StatusCode::from_u16(e.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    json_text_response(status, e.to_body())
}

/// `version.Info`, in its struct's field order; `kubectlCrdVersion` is ours (the CLI tells
/// a kubectl-crd server from another by it).
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct VersionInfo {
    major: String,
    minor: String,
    git_version: String,
    git_commit: &'static str,
    git_tree_state: &'static str,
    build_date: &'static str,
    go_version: &'static str,
    compiler: &'static str,
    platform: String,
    kubectl_crd_version: String,
}

/// `/version`, indented whatever the client, as kube's handler writes it (`WriteRawJSON`).
/// Its go-restful route produces JSON alone: another `Accept` is go-restful's 406 (the
/// handler itself negotiates nothing, so conversions and parameters are ignored).
async fn version(method: Method, uri: axum::http::Uri, headers: HeaderMap) -> Response {
    if method != Method::GET {
        return error_response(&ApiError::method_not_allowed());
    }
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok());
    if let Err(e) = negotiation::restful_accepts_version(accept) {
        return respond::error_for(&e, &headers, &query::Query::parse(uri.query()));
    }
    let (major, minor) = crate::KUBERNETES_API_LEVEL;
    let info = VersionInfo {
        major: major.to_string(),
        minor: minor.to_string(),
        git_version: format!("v{major}.{minor}.0+kubectl-crd.v{}", crate::VERSION),
        git_commit: "",
        git_tree_state: "clean",
        build_date: "",
        go_version: "",
        compiler: "rustc",
        platform: format!("{}/{}", std::env::consts::OS, go_arch(std::env::consts::ARCH)),
        kubectl_crd_version: format!("v{}", crate::VERSION),
    };
    json_text_response(StatusCode::OK, serde_json::to_vec_pretty(&info).unwrap_or_default())
}

/// Go's name (`GOARCH`) for a Rust target architecture, as kube's `platform` says it.
fn go_arch(arch: &str) -> &str {
    match arch {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    }
}

/// A path under `/version` that its go-restful web service routes nowhere.
async fn under_version() -> Response {
    error_response(&ApiError::no_route())
}

/// A plain-text answer with the headers kube's handlers set on it.
fn text(status: StatusCode, body: &'static str, nosniff: bool) -> Response {
    let mut res = (status, body).into_response();
    let h = res.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache, private"));
    if nosniff {
        h.insert("X-Content-Type-Options", HeaderValue::from_static("nosniff"));
    }
    res
}

/// `/healthz` and `/livez`, which kube's handler answers with `nosniff`.
async fn health() -> Response {
    text(StatusCode::OK, "ok", true)
}

/// The checks kube registers under `/healthz/<name>` (and `/livez/`, `/readyz/`) that ours
/// has as well: the server answering (`ping`, `log`) and its store (`etcd`,
/// `etcd-readiness`). A check ours has not (kube's post-start hooks) is a plain 404, as
/// any unknown one is.
async fn health_check(
    State(engine): State<Arc<Engine>>,
    axum::extract::Path(check): axum::extract::Path<String>,
) -> Response {
    match check.as_str() {
        "ping" | "log" => text(StatusCode::OK, "ok", false),
        "etcd" | "etcd-readiness" if engine.store().ready().await => text(StatusCode::OK, "ok", false),
        // kube's `adaptCheckToHandler`: Go's `http.Error` with the check's error.
        "etcd" | "etcd-readiness" => {
            text(StatusCode::INTERNAL_SERVER_ERROR, "internal server error: etcd not ready\n", true)
        }
        _ => routes::plain_not_found(),
    }
}

/// `/readyz`: ready while the store answers. A failure reads as kube-apiserver's when its
/// etcd check fails (a 500 listing the failed check, the reason withheld).
async fn readyz(State(engine): State<Arc<Engine>>) -> Response {
    if engine.store().ready().await {
        return health().await;
    }
    let body = "[-]etcd failed: reason withheld\n[-]etcd-readiness failed: reason withheld\nreadyz check failed\n";
    text(StatusCode::INTERNAL_SERVER_ERROR, body, true)
}

/// The address `/api` reports for every client CIDR: kube reports its external address
/// (host and port); the engine knows only the one the client dialled, from the Host header
/// or, over HTTP/2 (kubectl's), the request's authority, which has no Host header.
fn server_address(parts: &axum::http::request::Parts) -> String {
    let host = parts.headers.get(header::HOST).and_then(|h| h.to_str().ok());
    let authority = parts.uri.authority().map(|a| a.as_str());
    host.or(authority).unwrap_or("127.0.0.1").to_string()
}

/// Aggregated discovery with kube's validators: its ETag, and a 304 without a body when
/// `If-None-Match` is that ETag exactly (kube compares the header whole), which is how
/// kubectl's disk cache revalidates it. The ETag is the list's, whatever its encoding.
fn aggregated_response(
    headers: &HeaderMap,
    (version, negotiated): (negotiation::AggregatedVersion, negotiation::Negotiated),
    doc: discovery::Document,
) -> Response {
    let etag = doc.etag.map(|e| format!("\"{e}\""));
    let current = etag
        .as_deref()
        .is_some_and(|e| headers.get(header::IF_NONE_MATCH).is_some_and(|inm| inm.as_bytes() == e.as_bytes()));
    let mut res = if current {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let json = match version {
            negotiation::AggregatedVersion::V2 => doc.json.to_vec(),
            negotiation::AggregatedVersion::V2beta1 => discovery::as_v2beta1(&doc.json),
        };
        let encoded = crate::representation::encode_json(&negotiated, json);
        let mut res = (StatusCode::OK, encoded.body).into_response();
        res.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(aggregated_content_type(version, negotiated.format)),
        );
        res
    };
    let h = res.headers_mut();
    if let Some(etag) = etag.and_then(|e| HeaderValue::from_str(&e).ok()) {
        h.insert(header::ETAG, etag);
    }
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("public"));
    h.insert(header::VARY, HeaderValue::from_static("Accept"));
    res
}

/// An aggregated list's Content-Type: the format's, with the type it converts to.
fn aggregated_content_type(version: negotiation::AggregatedVersion, format: negotiation::Format) -> &'static str {
    use negotiation::{AggregatedVersion as V, Format as F};
    match (version, format) {
        (V::V2, F::Yaml) => "application/yaml;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
        (V::V2beta1, F::Yaml) => "application/yaml;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList",
        (V::V2, _) => "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
        (V::V2beta1, _) => "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList",
    }
}

/// Whether `/api` or `/apis` is asked for as an aggregated list, and how. `/api` is a
/// go-restful route, whose own check of `Accept` comes first.
fn aggregated_negotiated(
    path: &str,
    headers: &HeaderMap,
    q: &query::Query,
) -> Option<Result<(negotiation::AggregatedVersion, negotiation::Negotiated), ApiError>> {
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok());
    let (version, mut negotiated) = negotiation::negotiate_aggregated(accept)?;
    if path == "/api"
        && let Err(e) = negotiation::restful_accepts(accept, false)
    {
        return Some(Err(e));
    }
    let user_agent = headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok());
    negotiated.pretty |= negotiation::wants_pretty(q.get("pretty"), user_agent);
    Some(Ok((version, negotiated)))
}

/// The representation of the discovery document at `path` (one that exists). The
/// built-in group-versions and `/api` are go-restful routes, which check `Accept` first;
/// `/apis` and `/apis/<group>`, and a CRD's group-version, are plain handlers. Then kube
/// negotiates as for any object, without conversions.
fn discovery_negotiated(
    kinds: &crate::kinds::Kinds,
    path: &str,
    headers: &HeaderMap,
    q: &query::Query,
) -> Result<negotiation::Negotiated, ApiError> {
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok());
    if restful_discovery(kinds, path) {
        negotiation::restful_accepts(accept, false)?;
    }
    let mut negotiated = negotiation::negotiate(accept, negotiation::Endpoint::Discovery)?;
    let user_agent = headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok());
    negotiated.pretty |= negotiation::wants_pretty(q.get("pretty"), user_agent);
    Ok(negotiated)
}

/// A discovery document (`json`) in the representation negotiated, or the refusal.
fn discovery_response(
    negotiated: Result<negotiation::Negotiated, ApiError>,
    json: Vec<u8>,
    headers: &HeaderMap,
    q: &query::Query,
) -> Response {
    match negotiated {
        Ok(n) => respond::encoded_response(StatusCode::OK, crate::representation::encode_json(&n, json)),
        Err(e) => respond::error_for(&e, headers, q),
    }
}

async fn dispatch(State(engine): State<Arc<Engine>>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let Some(path) = request::request_path(&parts.uri) else { return bad_request_line() };
    if let Some(why) = request::request_info_error(&path) {
        return request_info_failed(&parts.uri, why);
    }
    // kube's director hands a path to a handler by its prefix (`/api`, `/apis/`): one that
    // starts with an empty segment has none, whatever follows.
    if path.starts_with("//") {
        return routes::plain_not_found();
    }
    let path = path.trim_end_matches('/').to_string();
    let query = query::Query::parse(parts.uri.query());
    let kinds = engine.kinds();
    if let Some(res) = serve_discovery(kinds, &path, &parts, &query) {
        // kube answers HEAD as GET; Go's server then sends the headers alone.
        return if parts.method == Method::HEAD { routes::without_body(res) } else { res };
    }
    let body = match axum::body::to_bytes(body, routes::MAX_BODY).await {
        Ok(b) => b,
        Err(_) => {
            return error_response(&ApiError::new(
                413,
                "RequestEntityTooLarge",
                format!("Request entity too large: limit is {}", routes::MAX_BODY),
            ));
        }
    };
    let crd_write = parts.method != Method::GET && path.starts_with(CRDS);
    let response = routes::serve_resource(Arc::clone(&engine), parts.method, &path, query, &parts.headers, body).await;
    if crd_write && response.status().is_success() {
        return settle_crd_write(&engine, response).await;
    }
    response
}

/// The discovery document at `path`, if one is there. kube serves `/apis`, `/apis/<group>`
/// and a CRD's group-version from plain handlers that answer any method alike; `/api`,
/// `/api/v1` and a built-in group-version are go-restful routes that take GET alone (HEAD
/// too is their 405).
fn serve_discovery(
    kinds: &crate::kinds::Kinds,
    path: &str,
    parts: &axum::http::request::Parts,
    query: &query::Query,
) -> Option<Response> {
    let headers = &parts.headers;
    let negotiated = || discovery_negotiated(kinds, path, headers, query);
    let found = match path {
        "/api" | "/apis" if let Some(aggregated) = aggregated_negotiated(path, headers, query) => {
            if parts.method != Method::GET && restful_discovery(kinds, path) {
                return Some(error_response(&ApiError::method_not_allowed()));
            }
            let which = if path == "/api" { discovery::Cached::AggregatedCore } else { discovery::Cached::Aggregated };
            return Some(match aggregated {
                Ok(chosen) => aggregated_response(headers, chosen, discovery::cached(kinds, which)),
                Err(e) => respond::error_for(&e, headers, query),
            });
        }
        "/api" => Some(discovery::core_versions(&server_address(parts))),
        "/apis" => {
            let list = discovery::cached(kinds, discovery::Cached::GroupList);
            return Some(discovery_response(negotiated(), list.json.to_vec(), headers, query));
        }
        "/api/v1" => discovery::resource_list(kinds, "", "v1"),
        p => match p.strip_prefix("/apis/").map(|r| r.split('/').collect::<Vec<_>>()).as_deref() {
            Some([g]) => discovery::group(kinds, g),
            Some([g, v]) => discovery::resource_list(kinds, g, v),
            _ => None,
        },
    }?;
    if parts.method != Method::GET && restful_discovery(kinds, path) {
        return Some(error_response(&ApiError::method_not_allowed()));
    }
    let json = crate::resources::builtin::struct_json::to_vec(&found);
    Some(discovery_response(negotiated(), json, headers, query))
}

/// Whether the discovery document at `path` is a go-restful route (`/api`, `/api/v1`, a
/// built-in group-version) rather than a plain handler (`/apis`, a group, a CRD's version).
fn restful_discovery(kinds: &crate::kinds::Kinds, path: &str) -> bool {
    match path.strip_prefix("/apis/").map(|r| r.split_once('/')) {
        Some(Some((g, v))) => kinds.builtin().iter().any(|k| k.info().group == g && k.info().version == v),
        Some(None) => false,
        None => path != "/apis",
    }
}

/// Where CRDs are written.
const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

/// A successful CRD write's answer, once the change it made is served (bounded).
async fn settle_crd_write(engine: &Engine, response: Response) -> Response {
    // The revision is read off the answer's JSON where it is made: decoding a whole CRD
    // again here cost a burst of creates as much as encoding the answers.
    if let Some(respond::AnsweredRevision(rv)) = response.extensions().get().copied() {
        engine.crds_settled(rv).await;
    }
    response
}
