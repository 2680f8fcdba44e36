//! The HTTP surface: routes Kubernetes API paths to discovery and to the served kinds.
//!
//! Every error is a `metav1.Status` with kube-apiserver's code, reason and message;
//! paths nothing serves answer kube's plain-text `404 page not found`.

pub mod body;
mod deadline;
pub mod discovery;
mod discovery_http;
mod health;
pub mod openapi;
pub mod options;
pub mod protobuf;
pub mod protobuf_status;
pub mod query;
pub mod request;
pub mod respond;
pub mod route;
pub mod routes;
mod version;
pub mod watch;

use crate::Engine;
use crate::status::ApiError;
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
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
        .route("/version", any(version::version))
        .route("/version/", any(version::version))
        .route("/version/{*rest}", any(version::under_version))
        .route("/healthz", any(health::health))
        .route("/livez", any(health::health))
        .route("/readyz", any(health::readyz))
        .route("/healthz/{check}", any(health::health_check))
        .route("/livez/{check}", any(health::health_check))
        .route("/readyz/{check}", any(health::health_check))
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
    let deadline = match deadline::of(&parts.method, request::parse_target(&path).as_ref(), &query) {
        Ok(deadline) => deadline,
        Err(e) => return error_response(&e),
    };
    deadline::within(deadline, serve(engine, parts, path, query, body)).await
}

/// A request past kube's filters: discovery, or a resource.
async fn serve(
    engine: Arc<Engine>,
    parts: axum::http::request::Parts,
    path: String,
    query: query::Query,
    body: axum::body::Body,
) -> Response {
    let kinds = engine.kinds();
    if let Some(res) = discovery_http::serve_discovery(kinds, &path, &parts, &query) {
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
