//! Connecting: from a [`Target`] to a `kube::Client`, the only thing the tools talk through.
//!
//! - **Live**: the kubeconfig as kubectl finds it — `--kubeconfig FILE`, else every file in
//!   `KUBECONFIG` merged (first one wins, missing files skipped, as client-go does), else
//!   `~/.kube/config` — with `--context` or the current context, and its namespace.
//! - **Local**: the engine opened in-process over the redb store in the data directory,
//!   handed over to `kube::Client::new` with no socket ([`in_process_client`]). The engine
//!   handle stays in the [`Connection`] so [`Connection::close`] can shut it down.
//! - **Served**: while a `kubectl crd serve --data-dir DIR` holds DIR, redb refuses a second
//!   opener with its lock error; we then connect to that server through the kubeconfig it
//!   wrote in DIR instead of opening the store twice. The server is recognised by its
//!   `/version` (which names `kubectlCrdVersion`), so a stale kubeconfig from an earlier run
//!   never sends us to a stranger, and a server still starting gets a few seconds.

use super::error::ClusterError;
use crate::datadir::{HOLDER_FILE, Holder, KUBECONFIG_FILE, STORE_FILE};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kubectl_crd_engine::store::StoreError;
use kubectl_crd_engine::{Engine, EngineError, StorageConfig};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The client local mode hands out: the engine's router behind `kube::Client::new`, with no
/// socket. One copy, in `kubectl-crd-testing` (the layer that knows both the engine and kube;
/// the engine must not know kube), re-exported here for the tools.
pub use kubectl_crd_testing::in_process_client;

/// How long we wait for a `serve` that holds the data directory to answer at its kubeconfig
/// (it writes the kubeconfig only once its socket is bound).
const SERVED_WAIT: Duration = Duration::from_secs(5);
/// Limit for one probe of such a server.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// Where the tools' requests go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// The cluster of the kubeconfig.
    Live { kubeconfig: Option<PathBuf>, context: Option<String> },
    /// The local engine with its data in this directory.
    Local { data_dir: PathBuf },
}

/// Everything needed to connect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectOptions {
    pub target: Target,
    /// `-n`: overrides the context's namespace (`default` when neither says).
    pub namespace: Option<String>,
    /// `--request-timeout` for live and served clusters (`None`: no limit).
    pub request_timeout: Option<Duration>,
}

/// What a [`Connection`] is connected to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A cluster from the kubeconfig.
    Live { context: String, server: String },
    /// The engine in this process, over the store in `data_dir`.
    Local { data_dir: PathBuf },
    /// A `kubectl crd serve` that holds `data_dir`, reached over its kubeconfig.
    Served { data_dir: PathBuf, server: String },
    /// An engine in this process with nothing on disk (tests, demos).
    Memory,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Live { context, server } => write!(f, "{server} (context {context})"),
            Origin::Local { data_dir } => write!(f, "the local engine in {}", data_dir.display()),
            Origin::Served { data_dir, server } => {
                write!(f, "kubectl crd serve at {server} (data in {})", data_dir.display())
            }
            Origin::Memory => write!(f, "an in-memory engine"),
        }
    }
}

/// A connection: the client, the default namespace, and (in local mode) the engine.
pub struct Connection {
    client: kube::Client,
    namespace: String,
    origin: Origin,
    /// (connecting, answering): the time limits the client was built with, named in a
    /// timeout's message.
    timeouts: (Option<Duration>, Option<Duration>),
    engine: Option<Arc<Engine>>,
    /// The holder file this `--local` session wrote, removed on close.
    holder: Option<PathBuf>,
}

impl Connection {
    /// Connects as `options` say. Must be called inside a tokio runtime.
    pub async fn open(options: &ConnectOptions) -> Result<Connection, ClusterError> {
        match &options.target {
            Target::Live { kubeconfig, context } => {
                let kubeconfig = load_kubeconfig(kubeconfig.as_deref())?;
                live(kubeconfig, context.as_deref(), options).await
            }
            Target::Local { data_dir } => local(data_dir, options).await,
        }
    }

    /// A fresh engine in memory, nothing on disk.
    pub async fn in_memory(namespace: Option<&str>) -> Result<Connection, ClusterError> {
        let engine = Engine::open(&StorageConfig::Memory)
            .await
            .map_err(|e| ClusterError::Other(format!("cannot start the in-memory engine: {e}")))?;
        let namespace = namespace.unwrap_or("default").to_string();
        let client = in_process_client(&engine, &namespace);
        Ok(Connection {
            client,
            namespace,
            origin: Origin::Memory,
            timeouts: (None, None),
            engine: Some(engine),
            holder: None,
        })
    }

    /// A connection over a client someone else built (tests, embedding).
    pub fn from_client(client: kube::Client, namespace: &str, origin: Origin) -> Connection {
        Connection {
            client,
            namespace: namespace.to_string(),
            origin,
            timeouts: (None, None),
            engine: None,
            holder: None,
        }
    }

    /// The client every operation takes. Clones are cheap and share the connection.
    pub fn client(&self) -> &kube::Client {
        &self.client
    }

    /// The namespace of `-n`, else the context's, else `default`.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// What this connection reaches.
    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// Adds where we were connected to a transport error's message.
    pub fn explain(&self, err: ClusterError) -> ClusterError {
        match &self.origin {
            Origin::Live { server, .. } | Origin::Served { server, .. } => err.at_server(server, self.timeouts),
            Origin::Local { .. } | Origin::Memory => err,
        }
    }

    /// Ends the connection; in local mode waits for the client's last request to let go of
    /// the engine, then shuts the engine down so its store is closed cleanly. Every clone
    /// of [`Connection::client`] must be dropped before.
    pub async fn close(self) {
        let Connection { client, engine, holder, .. } = self;
        drop(client);
        if let Some(path) = holder {
            // Best effort: a holder file left behind names a process that is gone, and is
            // ignored then.
            let _ = std::fs::remove_file(path);
        }
        let Some(engine) = engine else { return };
        // The client's buffer task holds the router (and so the engine) until it notices
        // that every sender is gone; give it a moment, bounded.
        for _ in 0..200 {
            if Arc::strong_count(&engine) == 1 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        engine.shutdown().await;
    }
}

/// Reads the kubeconfig the way kubectl finds it. Returns it with a description of where
/// it came from, for messages.
fn load_kubeconfig(explicit: Option<&Path>) -> Result<(Kubeconfig, String), ClusterError> {
    let read = |path: &Path| {
        Kubeconfig::read_from(path)
            .map_err(|e| ClusterError::Kubeconfig { path: path.display().to_string(), reason: kubeconfig_reason(&e) })
    };
    if let Some(path) = explicit {
        return Ok((read(path)?, path.display().to_string()));
    }
    if let Some(value) = std::env::var_os("KUBECONFIG") {
        // client-go skips files of the list that do not exist; so do we.
        let paths: Vec<PathBuf> =
            std::env::split_paths(&value).filter(|p| !p.as_os_str().is_empty() && p.exists()).collect();
        if !paths.is_empty() {
            let mut merged = Kubeconfig::default();
            for p in &paths {
                merged = merged.merge(read(p)?).map_err(|e| ClusterError::Kubeconfig {
                    path: p.display().to_string(),
                    reason: kubeconfig_reason(&e),
                })?;
            }
            let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            return Ok((merged, names.join(":")));
        }
    }
    let default = dirs::home_dir().map(|h| h.join(".kube").join("config"));
    match default {
        Some(path) if path.exists() => Ok((read(&path)?, path.display().to_string())),
        Some(path) => Err(ClusterError::NoKubeconfig { looked: path.display().to_string() }),
        None => Err(ClusterError::NoKubeconfig { looked: "~/.kube/config".into() }),
    }
}

fn kubeconfig_reason(e: &kube::config::KubeconfigError) -> String {
    use std::error::Error as _;
    match e.source() {
        Some(source) => format!("{e} ({source})"),
        None => e.to_string(),
    }
}

fn context_names(config: &Kubeconfig) -> Vec<String> {
    config.contexts.iter().map(|c| c.name.clone()).collect()
}

async fn live(
    (kubeconfig, source): (Kubeconfig, String),
    context: Option<&str>,
    options: &ConnectOptions,
) -> Result<Connection, ClusterError> {
    let available = context_names(&kubeconfig);
    let context = match context.map(String::from).or_else(|| kubeconfig.current_context.clone()) {
        Some(name) if name.is_empty() => return Err(ClusterError::NoContext { available }),
        Some(name) => name,
        None => return Err(ClusterError::NoContext { available }),
    };
    if !available.contains(&context) {
        return Err(ClusterError::UnknownContext { name: context, available });
    }
    let kube_options = KubeConfigOptions { context: Some(context.clone()), cluster: None, user: None };
    let mut config = kube::Config::from_custom_kubeconfig(kubeconfig, &kube_options)
        .await
        .map_err(|e| ClusterError::Kubeconfig { path: source.clone(), reason: kubeconfig_reason(&e) })?;
    apply_timeout(&mut config, options.request_timeout);
    let timeouts = (config.connect_timeout, config.read_timeout);
    let namespace = options.namespace.clone().unwrap_or_else(|| config.default_namespace.clone());
    config.default_namespace = namespace.clone();
    let server = config.cluster_url.to_string().trim_end_matches('/').to_string();
    let client = kube::Client::try_from(config)
        .map_err(|e| ClusterError::Kubeconfig { path: source, reason: format!("cannot set up the client: {e}") })?;
    Ok(Connection { client, namespace, origin: Origin::Live { context, server }, timeouts, engine: None, holder: None })
}

/// kubectl's `--request-timeout` bounds each request; kube-rs splits it into connecting,
/// writing and reading, each of which gets the whole limit.
fn apply_timeout(config: &mut kube::Config, timeout: Option<Duration>) {
    if let Some(t) = timeout {
        config.connect_timeout = Some(config.connect_timeout.map_or(t, |c| c.min(t)));
        config.read_timeout = Some(t);
        config.write_timeout = Some(t);
        // Pooled idle time must not count against the next response's limit.
        config.reset_reader_on_write = true;
    }
}

async fn local(dir: &Path, options: &ConnectOptions) -> Result<Connection, ClusterError> {
    create_private_dir(dir)?;
    let store = dir.join(STORE_FILE);
    match Engine::open(&StorageConfig::Redb(store)).await {
        Ok(engine) => {
            let namespace = options.namespace.clone().unwrap_or_else(|| "default".into());
            let client = in_process_client(&engine, &namespace);
            wait_until_served(&client).await;
            Ok(Connection {
                client,
                namespace,
                origin: Origin::Local { data_dir: dir.to_path_buf() },
                timeouts: (None, None),
                engine: Some(engine),
                holder: claim(dir),
            })
        }
        // Another --local session serves nobody, and a serve whose kubeconfig is elsewhere
        // cannot be found here: say so now rather than wait for a server.
        Err(EngineError::Store(StoreError::Locked { .. })) => match holder(dir) {
            Some(Holder::Local { pid }) => Err(ClusterError::DataDirHeld { dir: dir.to_path_buf(), pid }),
            Some(Holder::Serve { pid, kubeconfig }) if !kubeconfig_in(&kubeconfig, dir) => {
                Err(ClusterError::DataDirServedElsewhere { dir: dir.to_path_buf(), pid, kubeconfig })
            }
            _ => served(dir, options).await,
        },
        Err(e) => Err(ClusterError::LocalStore {
            dir: dir.to_path_buf(),
            reason: format!("{e}; if the directory holds something else, choose another with --local=DIR"),
        }),
    }
}

/// A freshly opened engine publishes the stored CRDs' endpoints once its controller has
/// made a pass; like clients of a kube-apiserver that just became ready, we wait (briefly,
/// bounded) until every established CRD is in discovery, so the first command after
/// opening does not find "no such resource".
async fn wait_until_served(client: &kube::Client) {
    let Ok(crds) = super::registrations::list_crd_summaries(client).await else { return };
    let wanted: Vec<(String, String)> =
        crds.iter().filter_map(super::registrations::served_resource).map(|ar| (ar.group, ar.plural)).collect();
    if !wanted.is_empty() {
        // Best effort: a command that still misses a resource says so itself.
        let _ = super::discovery::Discovery::fetch_including(client, &wanted, Duration::from_secs(2)).await;
    }
}

/// Records this process as the `--local` session holding `dir` (best effort).
fn claim(dir: &Path) -> Option<PathBuf> {
    let path = dir.join(HOLDER_FILE);
    std::fs::write(&path, Holder::Local { pid: std::process::id() }.to_text()).ok().map(|()| path)
}

/// Who holds `dir`, from its holder file. A file naming a process that is gone (one that
/// crashed) is ignored.
fn holder(dir: &Path) -> Option<Holder> {
    let holder = Holder::parse(&std::fs::read_to_string(dir.join(HOLDER_FILE)).ok()?)?;
    let pid = holder.pid();
    let alive = !Path::new("/proc").is_dir() || Path::new(&format!("/proc/{pid}")).exists();
    (alive && pid != std::process::id()).then_some(holder)
}

/// Whether `kubeconfig` is the one `dir` keeps (both paths resolved; when either cannot
/// be, it is taken to be, and the server is looked for there).
fn kubeconfig_in(kubeconfig: &Path, dir: &Path) -> bool {
    if kubeconfig.file_name() != Some(std::ffi::OsStr::new(KUBECONFIG_FILE)) {
        return false;
    }
    match (kubeconfig.parent().map(std::fs::canonicalize), std::fs::canonicalize(dir)) {
        (Some(Ok(parent)), Ok(dir)) => parent == dir,
        _ => true,
    }
}

fn create_private_dir(dir: &Path) -> Result<(), ClusterError> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).map_err(|e| ClusterError::LocalStore {
        dir: dir.to_path_buf(),
        reason: format!("cannot create the directory: {e}"),
    })
}

/// The data directory is locked: find the `serve` that holds it through the kubeconfig it
/// keeps there.
async fn served(dir: &Path, options: &ConnectOptions) -> Result<Connection, ClusterError> {
    let kubeconfig_path = dir.join(KUBECONFIG_FILE);
    let deadline = tokio::time::Instant::now() + SERVED_WAIT;
    loop {
        if kubeconfig_path.exists()
            && let Ok(kubeconfig) = Kubeconfig::read_from(&kubeconfig_path)
            && let Some(conn) = probe_served(dir, kubeconfig, options).await
        {
            return Ok(conn);
        }
        if tokio::time::Instant::now() >= deadline {
            let kubeconfig = kubeconfig_path.exists().then_some(kubeconfig_path);
            return Err(ClusterError::DataDirBusy { dir: dir.to_path_buf(), kubeconfig });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn probe_served(dir: &Path, kubeconfig: Kubeconfig, options: &ConnectOptions) -> Option<Connection> {
    let mut config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default()).await.ok()?;
    apply_timeout(&mut config, options.request_timeout);
    let timeouts = (config.connect_timeout, config.read_timeout);
    let namespace = options.namespace.clone().unwrap_or_else(|| "default".into());
    config.default_namespace = namespace.clone();
    let server = config.cluster_url.to_string().trim_end_matches('/').to_string();
    let client = kube::Client::try_from(config).ok()?;
    let request = http::Request::get("/version").body(Vec::new()).ok()?;
    let text = tokio::time::timeout(PROBE_TIMEOUT, client.request_text(request)).await.ok()?.ok()?;
    let version: serde_json::Value = serde_json::from_str(&text).ok()?;
    version.get("kubectlCrdVersion")?;
    Some(Connection {
        client,
        namespace,
        origin: Origin::Served { data_dir: dir.to_path_buf(), server },
        timeouts,
        engine: None,
        holder: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local_options(dir: &Path) -> ConnectOptions {
        ConnectOptions { target: Target::Local { data_dir: dir.to_path_buf() }, namespace: None, request_timeout: None }
    }

    #[tokio::test]
    async fn local_opens_the_engine_and_closes_it_so_it_can_be_opened_again() {
        let dir = tempfile::tempdir().expect("tempdir");
        let conn = Connection::open(&local_options(dir.path())).await.expect("opens");
        assert_eq!(conn.namespace(), "default");
        assert_eq!(conn.origin(), &Origin::Local { data_dir: dir.path().to_path_buf() });
        let version = conn.client().apiserver_version().await.expect("version");
        assert_eq!(version.major, "1");
        conn.close().await;
        let again = Connection::open(&local_options(dir.path())).await.expect("opens again");
        again.close().await;
    }

    #[tokio::test]
    async fn a_busy_data_dir_without_a_server_is_explained() {
        let dir = tempfile::tempdir().expect("tempdir");
        let first = Connection::open(&local_options(dir.path())).await.expect("opens");
        let err = match Connection::open(&local_options(dir.path())).await {
            Ok(_) => panic!("the store is held"),
            Err(e) => e,
        };
        // Held by a --local session of this process: it is not named as another one.
        assert!(matches!(err, ClusterError::DataDirBusy { .. }), "{err:?}");
        assert!(err.to_string().contains("is in use by another kubectl crd process"), "{err}");
        first.close().await;
    }

    #[tokio::test]
    async fn unknown_contexts_list_the_known_ones() {
        let yaml = "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: 'https://127.0.0.1:1'}\nusers:\n- name: u\n  user: {token: t}\ncontexts:\n- name: dev\n  context: {cluster: c, user: u, namespace: team}\ncurrent-context: dev\n";
        let kc = Kubeconfig::from_yaml(yaml).expect("kubeconfig");
        let options = ConnectOptions {
            target: Target::Live { kubeconfig: None, context: None },
            namespace: None,
            request_timeout: None,
        };
        let err = match live((kc.clone(), "k".into()), Some("prod"), &options).await {
            Ok(_) => panic!("prod is unknown"),
            Err(e) => e,
        };
        assert_eq!(
            err.to_string(),
            "context \"prod\" was not found in the kubeconfig; its contexts are: dev. Choose one with --context (see kubectl config get-contexts)"
        );
        assert!(err.is_usage());
        let conn = live((kc, "k".into()), None, &options).await.expect("dev");
        assert_eq!(conn.namespace(), "team");
        assert_eq!(conn.origin(), &Origin::Live { context: "dev".into(), server: "https://127.0.0.1:1".into() });
    }

    #[test]
    fn a_missing_explicit_kubeconfig_is_named() {
        let err = load_kubeconfig(Some(Path::new("/nonexistent/kubeconfig"))).expect_err("missing");
        assert!(err.to_string().contains("/nonexistent/kubeconfig"), "{err}");
        assert!(err.is_usage());
    }
}
