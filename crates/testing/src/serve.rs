//! The served variant: a cluster behind a real socket, for clients that need a URL or a
//! kubeconfig (kubectl, a controller run as another process, an HTTP library).
//!
//! It is plain HTTP on a free port of 127.0.0.1 with no authentication, and the kubeconfig
//! says so: the plugin's `serve` (TLS with its own CA, a bearer token, the data-directory
//! lifecycle) lives in the plugin crate, which this crate must not depend on, and a test on
//! loopback needs none of it. kubectl sends no credentials over plain HTTP anyway.

use crate::Error;
use kubectl_crd_engine::Engine;
use serde_json::json;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

/// A cluster served on 127.0.0.1 (from [`TestCluster::serve`](crate::TestCluster::serve)).
/// Serves until dropped or [`Served::stop`]ped; the cluster goes on in process either way.
pub struct Served {
    addr: SocketAddr,
    url: String,
    namespace: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Served {
    pub(crate) async fn start(engine: &Arc<Engine>, namespace: &str) -> Result<Served, Error> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await.map_err(Error::Serve)?;
        let addr = listener.local_addr().map_err(Error::Serve)?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let app = engine.router();
        let task = tokio::spawn(async move {
            let graceful = axum::serve(listener, app).with_graceful_shutdown(async {
                // A dropped sender stops the server as a sent stop does.
                let _ = stopped.await;
            });
            // `serve` only fails on accept errors it cannot go past; the clients see those.
            let _ = graceful.await;
        });
        Ok(Served {
            addr,
            url: format!("http://{addr}"),
            namespace: namespace.to_string(),
            stop: Some(stop),
            task: Some(task),
        })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The server's URL (`http://127.0.0.1:PORT`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// A `kube::Config` for it, defaulting to the cluster's namespace:
    /// `kube::Client::try_from(served.config())`.
    pub fn config(&self) -> kube::Config {
        // The URL is built from a socket address, so it always parses.
        let mut config = kube::Config::new(self.url.parse().unwrap_or_default());
        config.default_namespace = self.namespace.clone();
        config
    }

    /// A kubeconfig for it (JSON, which kubectl and kube read as YAML), context `test`.
    pub fn kubeconfig(&self) -> String {
        let doc = json!({
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "test", "cluster": {"server": self.url}}],
            "users": [{"name": "test", "user": {}}],
            "contexts": [{"name": "test", "context": {"cluster": "test", "user": "test", "namespace": self.namespace}}],
            "current-context": "test",
        });
        serde_json::to_string_pretty(&doc).unwrap_or_default()
    }

    /// Writes [`Served::kubeconfig`] to `path` (for `KUBECONFIG=path kubectl ...`).
    pub fn write_kubeconfig(&self, path: impl AsRef<Path>) -> Result<(), Error> {
        let path = path.as_ref();
        std::fs::write(path, self.kubeconfig()).map_err(|source| Error::Io { path: path.to_path_buf(), source })
    }

    /// Stops accepting, lets open connections finish their requests, and returns once the
    /// server is gone.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}
