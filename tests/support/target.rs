//! Where the kube-rs tests send their requests: the engine in process (the default), or,
//! with `KUBECTL_CRD_TEST_ORACLE=DIR` (the oracle kit, e.g. `../shared/oracle`), a fresh
//! real kube-apiserver per test, so the tests can be run against the reference to check
//! that they assert what kube does:
//! `KUBECTL_CRD_TEST_ORACLE=../shared/oracle cargo nextest run -E 'binary(engine_schema)'`.

use super::kubectl::Server;
use kubectl_crd::engine::{Engine, StorageConfig};
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
    let engine = Engine::open(&StorageConfig::Memory).await.expect("engine");
    let client = kubectl_crd::cluster::connect::in_process_client(&engine, "default");
    (Target { engine: Some(engine), _oracle: None }, client)
}
