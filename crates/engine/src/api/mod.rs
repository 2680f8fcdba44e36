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
use axum::routing::{any, get};
use std::sync::Arc;

/// The engine's router. No authentication here: `serve` adds its bearer-token layer in
/// front, and local mode has no one to authenticate.
pub fn router(engine: Arc<Engine>) -> Router {
    Router::new()
        // kube serves `/version` through a GET-only route; the health checks and the
        // OpenAPI documents are plain handlers that answer any method alike.
        .route("/version", get(version))
        .route("/healthz", any(ok_text))
        .route("/livez", any(ok_text))
        .route("/readyz", any(readyz))
        .route("/openapi/v2", any(openapi::serve_v2))
        .route("/openapi/v3", any(openapi::serve_v3_index))
        // The aggregator's prefix handler: `/openapi/v3/` alone is one more unknown document.
        .route("/openapi/v3/", any(openapi::serve_v3_document))
        .route("/openapi/v3/{*group_version}", any(openapi::serve_v3_document))
        .fallback(dispatch)
        .method_not_allowed_fallback(non_resource_method_not_allowed)
        .with_state(engine)
}

/// Another method than GET on `/version`: the 405 `Status` kube-apiserver gives for a
/// method its routes do not take, where axum would answer with an empty body.
async fn non_resource_method_not_allowed() -> Response {
    error_response(&ApiError::method_not_allowed())
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
async fn version(uri: axum::http::Uri, headers: HeaderMap) -> Response {
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

async fn ok_text() -> Response {
    let mut res = (StatusCode::OK, "ok").into_response();
    res.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    res
}

/// `/readyz`: ready while the store answers. A failure reads as kube-apiserver's when its
/// etcd check fails (a 500 listing the failed check, the reason withheld).
async fn readyz(State(engine): State<Arc<Engine>>) -> Response {
    if engine.store().ready().await {
        return ok_text().await;
    }
    let body = "[-]etcd failed: reason withheld\n[-]etcd-readiness failed: reason withheld\nreadyz check failed\n";
    let mut res = (StatusCode::INTERNAL_SERVER_ERROR, body).into_response();
    res.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    res
}

/// Whether the client asked for aggregated discovery (apidiscovery.k8s.io/v2).
fn wants_aggregated(headers: &HeaderMap) -> Option<discovery::AggregatedVersion> {
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok())?;
    let first = accept.split(',').next()?;
    let params: Vec<(&str, &str)> = first.split(';').skip(1).filter_map(|p| p.trim().split_once('=')).collect();
    let param = |name: &str| params.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
    if param("g") != Some("apidiscovery.k8s.io") || param("as") != Some("APIGroupDiscoveryList") {
        return None;
    }
    match param("v") {
        Some("v2") => Some(discovery::AggregatedVersion::V2),
        // Clients of client-go before 1.30 ask for v2beta1 first, and read the answer as
        // aggregated only when its type says v2beta1.
        Some("v2beta1") => Some(discovery::AggregatedVersion::V2beta1),
        _ => None,
    }
}

/// The address `/api` reports for every client CIDR: kube reports its external address
/// (host and port); the engine knows only the one the client dialled, from the Host header
/// or, over HTTP/2 (kubectl's), the request's authority, which has no Host header.
fn server_address(parts: &axum::http::request::Parts) -> String {
    let host = parts.headers.get(header::HOST).and_then(|h| h.to_str().ok());
    let authority = parts.uri.authority().map(|a| a.as_str());
    host.or(authority).unwrap_or("127.0.0.1").to_string()
}

/// A discovery document as kube's serializer writes it: indented when the client asks for
/// it (`?pretty`, or curl's and browsers' user agents: `json.MarshalIndent`), else ended by
/// a newline (`json.Encoder`).
fn discovery_body(json: &[u8], pretty: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(json.len() * if pretty { 2 } else { 1 } + 1);
    if pretty {
        crate::representation::raw::pretty(json, &mut out);
    } else {
        out.extend_from_slice(json);
        out.push(b'\n');
    }
    out
}

/// Aggregated discovery with kube's validators: its ETag, and a 304 without a body when
/// `If-None-Match` is that ETag exactly (kube compares the header whole), which is how
/// kubectl's disk cache revalidates it.
fn aggregated_response(
    headers: &HeaderMap,
    version: discovery::AggregatedVersion,
    doc: discovery::Document,
    body: impl FnOnce(&[u8]) -> Vec<u8>,
) -> Response {
    let etag = doc.etag.map(|e| format!("\"{e}\""));
    let current = etag
        .as_deref()
        .is_some_and(|e| headers.get(header::IF_NONE_MATCH).is_some_and(|inm| inm.as_bytes() == e.as_bytes()));
    let mut res = if current {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let json = match version {
            discovery::AggregatedVersion::V2 => body(&doc.json),
            discovery::AggregatedVersion::V2beta1 => body(&discovery::as_v2beta1(&doc.json)),
        };
        let mut res = json_text_response(StatusCode::OK, json);
        res.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(version.content_type()));
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
    let restful = match path.strip_prefix("/apis/").map(|r| r.split_once('/')) {
        Some(Some((g, v))) => kinds.builtin().iter().any(|k| k.info().group == g && k.info().version == v),
        Some(None) => false,
        None => path != "/apis",
    };
    if restful {
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
    let path = parts.uri.path().trim_end_matches('/').to_string();
    let query = query::Query::parse(parts.uri.query());
    let kinds = engine.kinds();
    if parts.method == Method::GET {
        let user_agent = parts.headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok());
        let document = |json: &[u8]| discovery_body(json, negotiation::wants_pretty(query.get("pretty"), user_agent));
        let negotiated = || discovery_negotiated(kinds, &path, &parts.headers, &query);
        let found = match path.as_str() {
            "/api" | "/apis" if let Some(version) = wants_aggregated(&parts.headers) => {
                let which =
                    if path == "/api" { discovery::Cached::AggregatedCore } else { discovery::Cached::Aggregated };
                return aggregated_response(&parts.headers, version, discovery::cached(kinds, which), document);
            }
            "/api" => Some(discovery::core_versions(&server_address(&parts))),
            "/apis" => {
                let list = discovery::cached(kinds, discovery::Cached::GroupList);
                return discovery_response(negotiated(), list.json.to_vec(), &parts.headers, &query);
            }
            "/api/v1" => discovery::resource_list(kinds, "", "v1"),
            p => match p.strip_prefix("/apis/").map(|r| r.split('/').collect::<Vec<_>>()).as_deref() {
                Some([g]) => discovery::group(kinds, g),
                Some([g, v]) => discovery::resource_list(kinds, g, v),
                _ => None,
            },
        };
        if let Some(doc) = found {
            let json = crate::resources::builtin::struct_json::to_vec(&doc);
            return discovery_response(negotiated(), json, &parts.headers, &query);
        }
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
