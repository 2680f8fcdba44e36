//! Requests to an engine in this process, through its router (no socket): the answer's
//! status, JSON body and headers.

use axum::body::Body;
use http::{HeaderMap, Request, StatusCode};
use kubectl_crd_engine::Engine;
use serde_json::Value;
use std::sync::Arc;
use tower::ServiceExt;

/// One answer.
pub struct Answer {
    pub status: StatusCode,
    pub body: Value,
    pub headers: HeaderMap,
}

impl Answer {
    /// The `Warning` headers' texts, as kube sends them (`299 - "text"`).
    pub fn warnings(&self) -> Vec<String> {
        self.headers.get_all("Warning").iter().filter_map(|v| v.to_str().ok()).map(String::from).collect()
    }
}

/// Sends `method uri` with `body` of `content_type`.
pub async fn send(engine: &Arc<Engine>, method: &str, uri: &str, content_type: &str, body: Option<Vec<u8>>) -> Answer {
    let req = Request::builder()
        .method(method)
        .uri(uri)
        .header("Content-Type", content_type)
        .body(body.map_or_else(Body::empty, Body::from))
        .expect("request");
    let res = engine.router().oneshot(req).await.expect("response");
    let (status, headers) = (res.status(), res.headers().clone());
    let bytes = axum::body::to_bytes(res.into_body(), usize::MAX).await.expect("body");
    Answer { status, body: serde_json::from_slice(&bytes).unwrap_or(Value::Null), headers }
}

/// Sends `method uri` with a JSON body.
pub async fn send_json(engine: &Arc<Engine>, method: &str, uri: &str, body: Option<&Value>) -> Answer {
    let body = body.map(|b| serde_json::to_vec(b).expect("json"));
    send(engine, method, uri, "application/json", body).await
}
