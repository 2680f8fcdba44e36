//! The apiserver the checks ask: an in-memory engine in this process, reached through its
//! router with no socket and no kube client in between (a check is one request). It holds
//! the CRDs being checked, the namespaces the objects name, and the old objects of
//! transition checks; nothing is written for the objects themselves (dry runs).

use super::ValidateError;
use axum::body::Body;
use http::{Method, Request, StatusCode};
use kubectl_crd_engine::{Engine, StorageConfig};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tower::ServiceExt as _;

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
/// How long a CRD may take to be Established (the engine takes microseconds; this bounds
/// a CRD whose names never settle).
const ESTABLISH_WAIT: Duration = Duration::from_secs(5);

/// One answer of the engine.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: StatusCode,
    /// The `Warning` headers' texts.
    pub warnings: Vec<String>,
    pub body: Value,
}

impl Answer {
    pub fn ok(&self) -> bool {
        self.status.is_success()
    }
}

/// Where a kind is served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Served {
    /// `/apis/<group>/<version>` or `/api/v1`.
    pub base: String,
    pub plural: String,
    pub namespaced: bool,
}

impl Served {
    /// The collection path in `namespace` (ignored for cluster-scoped kinds).
    pub fn collection(&self, namespace: &str) -> String {
        if self.namespaced {
            format!("{}/namespaces/{namespace}/{}", self.base, self.plural)
        } else {
            format!("{}/{}", self.base, self.plural)
        }
    }
}

/// The engine and what has been learnt of it.
pub struct Offline {
    engine: Arc<Engine>,
    router: axum::Router,
    /// `(apiVersion, kind)` → where it is served, or `None` when it is not.
    served: Mutex<HashMap<(String, String), Option<Served>>>,
}

impl Offline {
    pub async fn start() -> Result<Offline, ValidateError> {
        let engine = Engine::open(&StorageConfig::Memory).await.map_err(|e| ValidateError::Engine(e.to_string()))?;
        let router = engine.router();
        Ok(Offline { engine, router, served: Mutex::new(HashMap::new()) })
    }

    pub async fn stop(self) {
        self.engine.shutdown().await;
    }

    /// Sends one request; a body is sent as JSON.
    pub async fn send(&self, method: Method, uri: &str, body: Option<&Value>) -> Answer {
        let mut request = Request::builder().method(method).uri(uri).header(http::header::ACCEPT, "application/json");
        if body.is_some() {
            request = request.header(http::header::CONTENT_TYPE, "application/json");
        }
        let bytes = body.map(|b| b.to_string()).unwrap_or_default();
        let Ok(request) = request.body(Body::from(bytes)) else {
            return failure(format!("cannot build a request for {uri}"));
        };
        let Ok(response) = self.router.clone().oneshot(request).await;
        let status = response.status();
        let warnings =
            response.headers().get_all("Warning").iter().filter_map(|v| v.to_str().ok()).map(warning_text).collect();
        let body = match axum::body::to_bytes(response.into_body(), usize::MAX).await {
            Ok(bytes) if bytes.is_empty() => Value::Null,
            Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|_| json!(String::from_utf8_lossy(&bytes))),
            Err(e) => return failure(format!("cannot read the engine's answer: {e}")),
        };
        Answer { status, warnings, body }
    }

    /// Registers `crd` and waits until it is Established; the refusal (a Status) or the
    /// condition that keeps it from serving otherwise.
    pub async fn install_crd(&self, crd: &Value) -> Result<Answer, CrdRefusal> {
        let created = self.send(Method::POST, CRDS, Some(crd)).await;
        if !created.ok() {
            return Err(CrdRefusal::Refused(created));
        }
        let name = created.body.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default().to_string();
        let started = Instant::now();
        loop {
            let read = self.send(Method::GET, &format!("{CRDS}/{name}"), None).await;
            let conditions =
                read.body.pointer("/status/conditions").and_then(Value::as_array).cloned().unwrap_or_default();
            let condition = |t: &str| conditions.iter().find(|c| c["type"] == t);
            if condition("Established").is_some_and(|c| c["status"] == "True") {
                self.served.lock().unwrap_or_else(|e| e.into_inner()).clear();
                return Ok(created);
            }
            if let Some(c) = condition("NamesAccepted").filter(|c| c["status"] == "False") {
                let why = c["message"].as_str().unwrap_or_default();
                return Err(CrdRefusal::NotServed(format!("its names are not accepted: {why}")));
            }
            if started.elapsed() > ESTABLISH_WAIT {
                return Err(CrdRefusal::NotServed("it did not become Established".into()));
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    /// Creates `name` unless it exists.
    pub async fn ensure_namespace(&self, name: &str) -> Result<(), String> {
        let body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
        let answer = self.send(Method::POST, "/api/v1/namespaces", Some(&body)).await;
        if answer.ok() || answer.status == StatusCode::CONFLICT {
            return Ok(());
        }
        Err(status_message(&answer.body))
    }

    /// Where `kind` of `api_version` is served, read from discovery once.
    pub async fn served(&self, api_version: &str, kind: &str) -> Option<Served> {
        let key = (api_version.to_string(), kind.to_string());
        if let Some(known) = self.served.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return known.clone();
        }
        let base =
            if api_version.contains('/') { format!("/apis/{api_version}") } else { format!("/api/{api_version}") };
        let list = self.send(Method::GET, &base, None).await;
        let found = list.body["resources"].as_array().and_then(|resources| {
            resources.iter().find(|r| r["kind"] == kind && r["name"].as_str().is_some_and(|n| !n.contains('/'))).map(
                |r| Served {
                    base: base.clone(),
                    plural: r["name"].as_str().unwrap_or_default().to_string(),
                    namespaced: r["namespaced"].as_bool().unwrap_or(false),
                },
            )
        });
        self.served.lock().unwrap_or_else(|e| e.into_inner()).insert(key, found.clone());
        found
    }
}

/// Why a CRD does not serve.
#[derive(Debug, Clone)]
pub enum CrdRefusal {
    /// Registration refused it (the Status is in the answer).
    Refused(Answer),
    /// It was stored but does not serve (its names, or it never settled).
    NotServed(String),
}

/// A Status's message.
pub fn status_message(body: &Value) -> String {
    body.get("message").and_then(Value::as_str).map_or_else(|| body.to_string(), str::to_string)
}

/// The text of a `Warning: 299 - "text"` header.
fn warning_text(header: &str) -> String {
    let quoted = header.splitn(3, ' ').nth(2).unwrap_or(header);
    serde_json::from_str::<String>(quoted).unwrap_or_else(|_| quoted.trim_matches('"').to_string())
}

fn failure(message: String) -> Answer {
    Answer {
        status: StatusCode::INTERNAL_SERVER_ERROR,
        warnings: Vec::new(),
        body: json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message, "code": 500}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_are_read_from_their_header() {
        assert_eq!(warning_text(r#"299 - "unknown field \"spec.x\"""#), r#"unknown field "spec.x""#);
        assert_eq!(warning_text("299 - plain"), "plain");
    }
}
