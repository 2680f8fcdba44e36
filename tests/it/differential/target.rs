//! The servers a scenario runs against, all reached through one `kube::Client` so that the
//! requests travel the same way: the engine in process (its router, no socket), the engine
//! behind `serve` over HTTPS on 127.0.0.1, and the oracle (a real kube-apiserver) through its
//! kubeconfig. [`Target::send`] sends one request and reads the whole answer, or a watch
//! stream until it ends, a number of events came, or a deadline passed.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::BodyExt;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kubectl_crd::serve::options::{ListenAddr, ServeOptions, StorageKind, Transport};
use kubectl_crd_engine::store::EtcdConfig;
use kubectl_crd_engine::store::etcd_process::EtcdProcess;
use kubectl_crd_engine::{Engine, StorageConfig};
use tokio::sync::oneshot;

/// Whether the engines keep their objects in an etcd of their own
/// (`KUBECTL_CRD_TEST_STORAGE=etcd`; see `support::kubectl`).
fn on_etcd() -> bool {
    std::env::var("KUBECTL_CRD_TEST_STORAGE").as_deref() == Ok("etcd")
}

/// Longest wait for an answer that is not a watch.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// One answer, as received.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    pub headers: http::HeaderMap,
    pub body: Vec<u8>,
    /// For a watch: whether the server ended the stream itself (false: we stopped reading).
    pub ended: bool,
}

/// The token the engine in process takes for its user (it has no client that sends one).
const IN_PROCESS_TOKEN: &str = "differential-in-process-token";

/// A server to send scenarios to, kept alive as long as this value.
pub struct Target {
    client: kube::Client,
    /// The bearer token that names this server's user (scenarios say `${token}`).
    token: String,
    _keep: Keep,
}

/// What must live as long as the client: the engine, or the served engine's shutdown handle
/// and data directory.
enum Keep {
    Nothing,
    Engine(#[allow(dead_code)] Arc<Engine>),
    /// An engine on an etcd of its own (its process and data directory), listed after the
    /// engine so that the engine goes first.
    EngineOnEtcd(
        #[allow(dead_code)] Arc<Engine>,
        #[allow(dead_code)] EtcdProcess,
        #[allow(dead_code)] tempfile::TempDir,
    ),
    Served {
        shutdown: Option<oneshot::Sender<()>>,
        _dir: tempfile::TempDir,
        task: tokio::task::JoinHandle<()>,
        _etcd: Option<EtcdProcess>,
    },
}

impl Drop for Keep {
    fn drop(&mut self) {
        if let Keep::Served { shutdown, task, .. } = self {
            if let Some(shutdown) = shutdown.take() {
                let _ = shutdown.send(());
            }
            task.abort();
        }
    }
}

impl Target {
    /// A fresh in-memory engine, reached through its router in process; with
    /// `KUBECTL_CRD_TEST_STORAGE=etcd`, on an etcd of its own on loopback.
    pub async fn in_process() -> Target {
        if on_etcd() {
            return Self::engine_on_etcd().await;
        }
        let engine = Engine::open(&StorageConfig::Memory).await.expect("open an in-memory engine");
        engine.accept_token(IN_PROCESS_TOKEN);
        let client = kubectl_crd::cluster::connect::in_process_client(&engine, "default");
        Target { client, token: IN_PROCESS_TOKEN.to_string(), _keep: Keep::Engine(engine) }
    }

    async fn engine_on_etcd() -> Target {
        let dir = tempfile::tempdir().expect("a data directory");
        let etcd = EtcdProcess::start(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let config = EtcdConfig::new(vec![etcd.url()]);
        let engine = Engine::open(&StorageConfig::Etcd(config)).await.expect("open an engine on etcd");
        engine.accept_token(IN_PROCESS_TOKEN);
        let client = kubectl_crd::cluster::connect::in_process_client(&engine, "default");
        Target { client, token: IN_PROCESS_TOKEN.to_string(), _keep: Keep::EngineOnEtcd(engine, etcd, dir) }
    }

    /// A fresh engine behind `serve` (HTTPS, bearer token, memory storage, or an etcd of its
    /// own with `KUBECTL_CRD_TEST_STORAGE=etcd`) on 127.0.0.1.
    pub async fn served() -> Target {
        let dir = tempfile::tempdir().expect("a data directory");
        let etcd = on_etcd().then(|| EtcdProcess::start(dir.path()).unwrap_or_else(|e| panic!("{e}")));
        let options = ServeOptions {
            listen: ListenAddr { host: "127.0.0.1".to_string(), port: 0 },
            data_dir: dir.path().to_path_buf(),
            kubeconfig: dir.path().join("kubeconfig"),
            storage: match &etcd {
                Some(etcd) => StorageKind::Etcd(EtcdConfig::new(vec![etcd.url()])),
                None => StorageKind::Memory,
            },
            transport: Transport::Https,
        };
        let server = kubectl_crd::serve::Server::start(&options).await.expect("start serve");
        let kubeconfig = server.kubeconfig_path().to_path_buf();
        let (shutdown, stop) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            server
                .run_until(async {
                    let _ = stop.await;
                })
                .await;
        });
        let (client, token) = client_from_kubeconfig(&kubeconfig).await;
        Target { client, token, _keep: Keep::Served { shutdown: Some(shutdown), _dir: dir, task, _etcd: etcd } }
    }

    /// The oracle (or any server) its kubeconfig points at.
    pub async fn kubeconfig(path: &Path) -> Target {
        let (client, token) = client_from_kubeconfig(path).await;
        Target { client, token, _keep: Keep::Nothing }
    }

    /// The bearer token that names this server's user.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// Sends one request. A watch (`watch` given) is read until the stream ends, `events`
    /// lines came, or `wait` passed.
    pub async fn send(
        &self,
        method: &str,
        path: &str,
        headers: &[(String, String)],
        body: Option<Vec<u8>>,
        watch: Option<(Option<usize>, Duration)>,
    ) -> Result<Answer, String> {
        let mut request = http::Request::builder().method(method).uri(path);
        for (name, value) in headers {
            request = request.header(name, value);
        }
        let request = request
            .body(kube::client::Body::from(body.unwrap_or_default()))
            .map_err(|e| format!("build the request: {e}"))?;
        let wait = watch.map_or(REQUEST_TIMEOUT, |(_, wait)| wait);
        let deadline = tokio::time::Instant::now() + wait;
        let response = tokio::time::timeout_at(deadline, self.client.send(request))
            .await
            .map_err(|_| format!("no answer within {wait:?}"))?
            .map_err(|e| format!("send: {e}"))?;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let mut stream = response.into_body();
        let mut body = Vec::new();
        let wanted = watch.and_then(|(events, _)| events);
        loop {
            if wanted.is_some_and(|wanted| body.iter().filter(|b| **b == b'\n').count() >= wanted) {
                return Ok(Answer { status, headers, body, ended: false });
            }
            match tokio::time::timeout_at(deadline, stream.frame()).await {
                Err(_) if watch.is_some() => return Ok(Answer { status, headers, body, ended: false }),
                Err(_) => return Err(format!("the body did not end within {wait:?}")),
                Ok(None) => return Ok(Answer { status, headers, body, ended: true }),
                Ok(Some(Err(e))) => return Err(format!("read the body: {e}")),
                Ok(Some(Ok(frame))) => {
                    if let Ok(data) = frame.into_data() {
                        body.extend_from_slice(&data);
                    }
                }
            }
        }
    }
}

/// A client from the kubeconfig at `path`, and the bearer token it sends.
async fn client_from_kubeconfig(path: &Path) -> (kube::Client, String) {
    let kubeconfig = Kubeconfig::read_from(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let document =
        kubectl_crd_engine::manifests::from_yaml(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let token = document
        .pointer("/users/0/user/token")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_else(|| panic!("{} names no bearer token", path.display()))
        .to_string();
    let mut config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .unwrap_or_else(|e| panic!("load {}: {e}", path.display()));
    // Each request is sent once: kube-rs retries a 429, 503 or 504 by default, which would
    // hide the answer observed (the in-process client has no retry layer either).
    config.default_retry = false;
    (kube::Client::try_from(config).expect("a client from the kubeconfig"), token)
}
