//! `kubectl crd serve`: the engine behind a real socket, for kubectl and anything else that
//! speaks to a cluster. This module owns the lifecycle — data directory, engine, token, TLS
//! identity, listener, kubeconfig, the ready line, signals, drain, close — in the order that
//! keeps it safe: the engine opens (and locks the data directory) before any file in it is
//! touched, so a second server on the same directory stops without disturbing the first;
//! the kubeconfig is written only once the real port is known; the ready line is printed
//! only once connections are accepted. The steps are a straight line, so they are one
//! function ([`Server::start`]) rather than a state machine. Over TLS every request needs
//! the bearer token; with `--insecure-http` (loopback only) none does, because kubectl never
//! sends credentials over plain HTTP. The parts are in submodules: [`options`] (the validated
//! options `cli` builds, pure), [`token`], [`tls`], [`auth`], [`kubeconfig`], and the socket loop in `listener`.

pub mod auth;
mod coalesce;
mod files;
pub mod kubeconfig;
mod listener;
pub mod options;
pub mod tls;
pub mod token;

pub use files::FileError;
pub use listener::Drained;
pub use options::{ListenAddr, OptionsError, ServeOptions, StorageKind, Transport};

use crate::datadir::{HOLDER_FILE, Holder, LOCK_FILE, STORE_FILE};
use kubeconfig::KubeconfigError;
use kubectl_crd_engine::store::StoreError;
use kubectl_crd_engine::{Engine, EngineError, StorageConfig};
use std::future::Future;
use std::io::{self, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tls::TlsError;
use token::TokenError;
use tokio::net::TcpListener;

/// How long in-flight requests get to finish after a shutdown signal.
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

/// How long the async runtime waits for its last tasks after the drain.
const RUNTIME_SHUTDOWN: Duration = Duration::from_secs(1);

/// Why the server could not start or run. Each message says what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Options(#[from] OptionsError),
    #[error(transparent)]
    File(#[from] FileError),
    #[error(transparent)]
    Token(#[from] TokenError),
    #[error(transparent)]
    Tls(#[from] TlsError),
    #[error(transparent)]
    Kubeconfig(#[from] KubeconfigError),
    #[error(
        "{} is already being served by another kubectl crd serve (or used by --local); stop it or use another --data-dir",
        dir.display()
    )]
    Locked { dir: PathBuf },
    #[error("cannot open the engine's storage in {} (delete or move the directory to start empty)", dir.display())]
    Engine {
        dir: PathBuf,
        #[source]
        source: EngineError,
    },
    #[error("cannot use etcd at {servers} (is it running, and are --etcd-servers and the TLS files right?)")]
    Etcd {
        servers: String,
        #[source]
        source: EngineError,
    },
    #[error("cannot resolve the --listen host {host:?} (use an IP address such as 127.0.0.1)")]
    Resolve {
        host: String,
        #[source]
        source: io::Error,
    },
    #[error(
        "{addr} is already in use by another program; stop it, or choose another port with --listen (127.0.0.1:0 picks a free one)"
    )]
    PortInUse { addr: SocketAddr },
    #[error("not allowed to listen on {addr} (ports below 1024 need privileges); choose a higher port with --listen")]
    ListenPermission { addr: SocketAddr },
    #[error("cannot listen on {addr} (is it an address of this machine? 127.0.0.1 always is)")]
    Listen {
        addr: SocketAddr,
        #[source]
        source: io::Error,
    },
    #[error(
        "--insecure-http serves without TLS or authentication, so it listens only on loopback addresses (127.0.0.1, ::1), not {addr}; drop --insecure-http to serve there"
    )]
    InsecureNotLoopback { addr: SocketAddr },
    #[error("cannot start the async runtime")]
    Runtime(#[source] io::Error),
    #[error("cannot install the SIGINT/SIGTERM handlers")]
    Signals(#[source] io::Error),
}

/// The line printed to stdout once the server accepts connections: scripts wait for `ready`
/// and take the URL and the kubeconfig path from it.
pub fn ready_line(url: &str, kubeconfig: &Path) -> String {
    format!("kubectl crd serve: ready on {url} (kubeconfig: {})", kubeconfig.display())
}

/// Prints the engine's and the server's notices on stderr as they happen (a log replayed at
/// start, a store compaction, a checkpoint that failed), with their time and level.
/// Dependencies stay quiet: their notices are theirs to debug.
fn print_notices() {
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let ours = tracing_subscriber::filter::Targets::new()
        .with_target("kubectl_crd_engine", tracing::Level::INFO)
        .with_target("kubectl_crd", tracing::Level::INFO);
    let printed = tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_target(false).with_ansi(false);
    // Already set (a test running several servers in one process): theirs stays.
    let _ = tracing_subscriber::registry().with(printed).with(ours).try_init();
}

/// `kubectl crd serve`: starts the server, prints the ready line to `out`, and serves until
/// SIGINT or SIGTERM, then drains and stops. Blocks; builds its own async runtime.
pub fn run(options: &ServeOptions, out: &mut dyn Write) -> Result<(), ServeError> {
    print_notices();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(ServeError::Runtime)?;
    let result = runtime.block_on(async {
        // Handlers go in before the ready line: a signal sent the moment a script sees it must
        // stop us gracefully, not kill us.
        let shutdown = shutdown_signal()?;
        let server = Server::start(options).await?;
        let announced = writeln!(out, "{}", server.ready_line()).and_then(|()| out.flush());
        if let Err(e) = announced {
            // Nobody reads stdout any more; the server is still useful to those who know it.
            tracing::warn!("cannot print the ready line: {e}");
        }
        let drained = server.run_until(shutdown).await;
        if drained.aborted > 0 {
            eprintln!(
                "kubectl crd serve: closed {} connection(s) still busy after {}s",
                drained.aborted,
                DRAIN_TIMEOUT.as_secs()
            );
        }
        Ok(())
    });
    // Tasks still running (aborted connections winding down) get a moment, not forever.
    runtime.shutdown_timeout(RUNTIME_SHUTDOWN);
    result
}

/// A started server: engine open, files written, socket bound, not yet serving.
pub struct Server {
    engine: Arc<Engine>,
    listener: TcpListener,
    tls: Option<tokio_rustls::TlsAcceptor>,
    app: axum::Router,
    addr: SocketAddr,
    url: String,
    kubeconfig: PathBuf,
    /// With memory storage nothing else locks DIR: this file does, while the server runs.
    _dir_lock: Option<std::fs::File>,
}

impl Server {
    /// Prepares everything and binds the socket. Must run inside a tokio runtime.
    pub async fn start(options: &ServeOptions) -> Result<Server, ServeError> {
        let dir = &options.data_dir;
        files::create_dir(dir)?;
        let dir_lock = lock_memory_dir(options)?;
        let engine = open_engine(options).await?;
        // Says who holds DIR, so that a `--local=DIR` whose kubeconfig is not there says so
        // at once (best effort: without it, `--local` waits for a server to answer).
        let holder = Holder::Serve { pid: std::process::id(), kubeconfig: options.kubeconfig.clone() };
        let _ = std::fs::write(dir.join(HOLDER_FILE), holder.to_text());
        let token = token::load_or_create(dir)?;
        let requested = resolve(&options.listen).await?;
        if options.transport == Transport::Http && !requested.ip().is_loopback() {
            return Err(ServeError::InsecureNotLoopback { addr: requested });
        }
        let (tls, ca_pem) = match options.transport {
            Transport::Https => {
                let names = tls::serving_names(&options.listen.host, requested.ip());
                let material = tls::load_or_create(dir, &names)?;
                let acceptor = tokio_rustls::TlsAcceptor::from(tls::server_config_for(&material)?);
                (Some(acceptor), Some(material.ca_pem))
            }
            Transport::Http => (None, None),
        };
        let listener = bind(requested).await?;
        let addr = listener.local_addr().map_err(|source| ServeError::Listen { addr: requested, source })?;
        let url = options::server_url(options.transport, addr);
        let credentials = (options.transport == Transport::Https).then_some(&token);
        kubeconfig::write(&options.kubeconfig, &kubeconfig::document(&url, ca_pem.as_deref(), credentials)?)?;
        let app = match options.transport {
            // Authentication wraps the engine's whole router, so no path escapes it; the
            // engine's TokenReviews know the token too.
            Transport::Https => {
                engine.accept_token(token.as_str());
                auth::layer(engine.router(), token)
            }
            Transport::Http => engine.router(),
        };
        Ok(Server {
            engine,
            listener,
            tls,
            app,
            addr,
            url,
            kubeconfig: options.kubeconfig.clone(),
            _dir_lock: dir_lock,
        })
    }

    /// The address the socket is bound to (with the real port when port 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The URL clients use, as written in the kubeconfig.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Where the kubeconfig was written.
    pub fn kubeconfig_path(&self) -> &Path {
        &self.kubeconfig
    }

    /// The ready line for this server.
    pub fn ready_line(&self) -> String {
        ready_line(&self.url, &self.kubeconfig)
    }

    /// Serves until `shutdown` completes, drains for at most [`DRAIN_TIMEOUT`], then closes
    /// the engine.
    pub async fn run_until(self, shutdown: impl Future<Output = ()>) -> Drained {
        let Server { engine, listener, tls, app, .. } = self;
        let drained = listener::serve(listener, tls, app, shutdown, DRAIN_TIMEOUT).await;
        // The router and every connection (and with them their engine handles) are gone;
        // close the engine so the database is closed before the process exits.
        engine.shutdown().await;
        drained
    }
}

/// redb locks its file; memory storage takes an advisory lock on `DIR/serve.lock`, so a
/// second `serve` on the same DIR is refused the same way either way.
fn lock_memory_dir(options: &ServeOptions) -> Result<Option<std::fs::File>, ServeError> {
    // redb locks its own file; with etcd, DIR still holds this server's certificates.
    if options.storage == StorageKind::Redb {
        return Ok(None);
    }
    let dir = &options.data_dir;
    let engine_error = |e: io::Error| ServeError::Engine {
        dir: dir.clone(),
        source: EngineError::Store(StoreError::Backend(format!("cannot lock {}: {e}", dir.display()))),
    };
    std::fs::create_dir_all(dir).map_err(engine_error)?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(LOCK_FILE))
        .map_err(engine_error)?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => Err(ServeError::Locked { dir: dir.clone() }),
        Err(std::fs::TryLockError::Error(e)) => Err(engine_error(e)),
    }
}

async fn open_engine(options: &ServeOptions) -> Result<Arc<Engine>, ServeError> {
    let dir = &options.data_dir;
    let storage = match &options.storage {
        StorageKind::Memory => StorageConfig::Memory,
        StorageKind::Redb => StorageConfig::Redb(dir.join(STORE_FILE)),
        StorageKind::Etcd(config) => StorageConfig::Etcd(config.clone()),
    };
    Engine::open(&storage).await.map_err(|source| match (source, &options.storage) {
        (EngineError::Store(StoreError::Locked { .. }), _) => ServeError::Locked { dir: dir.clone() },
        (source, StorageKind::Etcd(config)) => ServeError::Etcd { servers: config.endpoints.join(","), source },
        (source, _) => ServeError::Engine { dir: dir.clone(), source },
    })
}

async fn resolve(listen: &ListenAddr) -> Result<SocketAddr, ServeError> {
    if let Some(ip) = listen.ip() {
        return Ok(SocketAddr::new(ip, listen.port));
    }
    let not_found = || io::Error::new(io::ErrorKind::NotFound, "the name has no addresses");
    let resolve_err = |source| ServeError::Resolve { host: listen.host.clone(), source };
    let mut addrs = tokio::net::lookup_host((listen.host.as_str(), listen.port)).await.map_err(resolve_err)?;
    addrs.next().ok_or_else(|| resolve_err(not_found()))
}

async fn bind(addr: SocketAddr) -> Result<TcpListener, ServeError> {
    TcpListener::bind(addr).await.map_err(|source| match source.kind() {
        io::ErrorKind::AddrInUse => ServeError::PortInUse { addr },
        io::ErrorKind::PermissionDenied => ServeError::ListenPermission { addr },
        _ => ServeError::Listen { addr, source },
    })
}

/// Completes on the first SIGINT or SIGTERM (Ctrl-C elsewhere). The handlers are installed
/// when this is called, not when the future is first polled.
fn shutdown_signal() -> Result<impl Future<Output = ()>, ServeError> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut terminate = signal(SignalKind::terminate()).map_err(ServeError::Signals)?;
        let mut interrupt = signal(SignalKind::interrupt()).map_err(ServeError::Signals)?;
        Ok(async move {
            tokio::select! {
                _ = terminate.recv() => {}
                _ = interrupt.recv() => {}
            }
        })
    }
    #[cfg(not(unix))]
    {
        Ok(async {
            if tokio::signal::ctrl_c().await.is_err() {
                // Without a handler there is no signal to wait for; serve until killed.
                std::future::pending::<()>().await;
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ready_line_names_the_url_and_the_kubeconfig() {
        assert_eq!(
            ready_line("https://127.0.0.1:43111", Path::new("/tmp/d/kubeconfig")),
            "kubectl crd serve: ready on https://127.0.0.1:43111 (kubeconfig: /tmp/d/kubeconfig)"
        );
    }

    #[test]
    fn the_locked_message_says_what_to_do() {
        let text = ServeError::Locked { dir: PathBuf::from("/data") }.to_string();
        assert_eq!(
            text,
            "/data is already being served by another kubectl crd serve (or used by --local); stop it or use another --data-dir"
        );
    }

    #[tokio::test]
    async fn a_taken_port_is_reported_as_such() {
        let taken = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = taken.local_addr().expect("addr");
        let err = bind(addr).await.expect_err("in use");
        assert!(matches!(err, ServeError::PortInUse { .. }), "{err:?}");
        assert!(err.to_string().contains("--listen"), "{err}");
    }

    #[tokio::test]
    async fn starts_serves_and_stops_in_process() {
        let dir = tempfile::tempdir().expect("tempdir");
        let options = ServeOptions {
            listen: options::parse_listen("127.0.0.1:0").expect("listen"),
            data_dir: dir.path().to_path_buf(),
            kubeconfig: dir.path().join("kubeconfig"),
            storage: StorageKind::Memory,
            transport: Transport::Http,
        };
        let server = Server::start(&options).await.expect("starts");
        assert_ne!(server.local_addr().port(), 0);
        assert_eq!(server.url(), format!("http://{}", server.local_addr()));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(server.run_until(async move {
            let _ = stopped.await;
        }));
        let _ = stop.send(());
        let drained = tokio::time::timeout(Duration::from_secs(10), task).await.expect("stops in time").expect("joins");
        assert_eq!(drained, Drained { aborted: 0 });
    }
}
