//! Where the kube-rs tests send their requests: the engine in process (the default), or,
//! with `KUBECTL_CRD_TEST_ORACLE=DIR` (the oracle kit, e.g. `../shared/oracle`), a fresh
//! real kube-apiserver per test, so the tests can be run against the reference to check
//! that they assert what kube does:
//! `KUBECTL_CRD_TEST_ORACLE=../shared/oracle scripts/test.sh -E 'test(/^engine_schema::/)'`.

use super::kubectl::Server;
use http_body_util::BodyExt;
use kubectl_crd_engine::Engine;
use serde_json::Value;
use std::sync::Arc;

/// What answers a test's requests; it stops (or drops the engine) when dropped.
pub struct Target {
    /// The engine, when the test runs in process.
    pub engine: Option<Arc<Engine>>,
    _oracle: Option<Server>,
}

impl Target {
    /// The engine behind the client; tests that reach past the API (the router, the
    /// store) have no oracle counterpart and say so by calling this.
    pub fn engine(&self) -> &Arc<Engine> {
        self.engine.as_ref().expect("this test reaches into the engine and cannot run against the oracle")
    }
}

/// Whether the tests run against the oracle.
pub fn against_oracle() -> bool {
    std::env::var_os("KUBECTL_CRD_TEST_ORACLE").is_some()
}

/// For a test of a guarantee the engine gives and kube-apiserver does not (an ordering
/// kube leaves racy), or of what the oracle lacks (controller-manager): true, after
/// saying why, when running against the oracle, where the test has nothing to check.
pub fn engine_only(why: &str) -> bool {
    let skip = against_oracle();
    if skip {
        eprintln!("not run against the oracle: {why}");
    }
    skip
}

/// A fresh target and a kube-rs client for it, in namespace `default`.
pub async fn target() -> (Target, kube::Client) {
    if against_oracle() {
        let server = Server::start();
        let kubeconfig = kube::config::Kubeconfig::read_from(&server.kubeconfig).expect("the oracle's kubeconfig");
        let options = kube::config::KubeConfigOptions::default();
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &options).await.expect("a client config");
        let client = kube::Client::try_from(config).expect("a client");
        return (Target { engine: None, _oracle: Some(server) }, client);
    }
    let engine = Engine::open(&super::storage::test_storage()).await.expect("engine");
    let client = kubectl_crd::cluster::connect::in_process_client(&engine, "default");
    (Target { engine: Some(engine), _oracle: None }, client)
}

/// Sends one request as it is (kube-rs would refuse to build some of them, and the
/// reference exchanges come as raw requests) and reads the answer; the client's own
/// authentication replaces any in the request.
pub async fn send(client: &kube::Client, mut req: http::Request<Vec<u8>>) -> (u16, Value) {
    req.headers_mut().remove(http::header::AUTHORIZATION);
    let res = client.send(req.map(kube::client::Body::from)).await.expect("answer");
    let status = res.status().as_u16();
    let body = res.into_body().collect().await.expect("body").to_bytes();
    (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
}
