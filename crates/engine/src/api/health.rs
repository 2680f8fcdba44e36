//! The health checks (`/healthz`, `/livez`, `/readyz` and their named checks), answered
//! as kube's plain-text handlers answer them.

use super::routes;
use crate::Engine;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// A plain-text answer with the headers kube's handlers set on it.
pub(super) fn text(status: StatusCode, body: &'static str, nosniff: bool) -> Response {
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
pub(super) async fn health() -> Response {
    text(StatusCode::OK, "ok", true)
}

/// The checks kube registers under `/healthz/<name>` (and `/livez/`, `/readyz/`) that ours
/// has as well: the server answering (`ping`, `log`) and its store (`etcd`,
/// `etcd-readiness`). A check ours has not (kube's post-start hooks) is a plain 404, as
/// any unknown one is.
pub(super) async fn health_check(
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
pub(super) async fn readyz(State(engine): State<Arc<Engine>>) -> Response {
    if engine.store().ready().await {
        return health().await;
    }
    let body = "[-]etcd failed: reason withheld\n[-]etcd-readiness failed: reason withheld\nreadyz check failed\n";
    text(StatusCode::INTERNAL_SERVER_ERROR, body, true)
}
