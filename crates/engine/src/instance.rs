//! The engine instance: storage plus everything built on it, behind one handle.
//!
//! An [`Engine`] is opened on a storage backend, starts its controllers, and hands out
//! its HTTP surface as an axum [`Router`](axum::Router) — a tower `Service` that `serve`
//! puts behind a socket and local mode hands to `kube::Client::new` with no socket at all.

use crate::gc::GraphAt;
use crate::kinds::{BUILTIN_VERBS, CustomKinds, Kinds, ServedKind};
use crate::namespace_lifecycle::{self, RecentDeletes, Source};
use crate::resources::Strategy;
use crate::resources::builtin::storage_version_hash;
use crate::resources::crds::CrdStrategy;
use crate::resources::generate_name::{NameGenerator, RandomSuffix};
use crate::resources::namespaces::{INITIAL, NamespaceStrategy, new_namespace};
use crate::resources::rest::{Rest, WriteOptions};
use crate::status::{ApiError, GroupResource};
use crate::store::{Backend, EtcdConfig, EtcdStore, LocalStore, Store, StoreError};
use k8s_openapi::jiff::Timestamp;
use std::path::PathBuf;
use std::sync::Arc;

/// How many times a snapshot is retaken when writes outran the garbage collector.
const SNAPSHOT_TRIES: usize = 3;
/// How long a CRD write waits for its change to be served (see [`Engine::crds_settled`]).
const CRD_SETTLE: std::time::Duration = std::time::Duration::from_secs(2);
/// How long opening waits to know whether the engine leads (see [`crate::coordination::Replicas::campaigned`]).
const CAMPAIGN: std::time::Duration = std::time::Duration::from_secs(2);
/// How long a snapshot waits for the collector to take in the latest writes.
const GC_CATCH_UP: std::time::Duration = std::time::Duration::from_millis(500);

/// Where the engine keeps its objects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StorageConfig {
    /// Nothing survives the process.
    Memory,
    /// A redb database file (durable; one process at a time).
    Redb(PathBuf),
    /// An etcd v3 cluster, keyed as kube-apiserver keys it (snapshots are not available).
    Etcd(EtcdConfig),
}

/// Why the engine could not start.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The store could not be opened (unreadable or locked data directory, corrupt files).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The namespaces every cluster has (`default`, `kube-system`, ...) could not be created.
    #[error("cannot create the initial namespaces: {0}")]
    Bootstrap(ApiError),
}

/// Everything an engine holds at one revision (from [`Engine::snapshot`]): its objects,
/// sharing the store's nodes, and the kinds its CRDs serve. Cheap to clone and to keep.
#[derive(Clone)]
pub struct Snapshot {
    store: crate::store::Snapshot,
    kinds: CustomKinds,
    /// The collector's graph at the store's revision, when it was had in time.
    gc: Option<GraphAt>,
}

impl Snapshot {
    /// The revision it was taken at: an engine forked from it goes on from the next one.
    pub fn revision(&self) -> crate::store::Revision {
        self.store.revision()
    }

    /// How many objects it holds.
    pub fn len(&self) -> usize {
        self.store.len()
    }

    /// Whether it holds no object.
    pub fn is_empty(&self) -> bool {
        self.store.is_empty()
    }
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot")
            .field("store", &self.store)
            .field("served_crds", &self.kinds.len())
            .field("with_gc_graph", &self.gc.is_some())
            .finish()
    }
}

/// A running engine.
pub struct Engine {
    store: Arc<Backend>,
    kinds: Arc<Kinds>,
    namespaces: Arc<NamespaceStrategy>,
    controllers: std::sync::Mutex<Vec<tokio::task::JoinHandle<()>>>,
    names: Arc<dyn NameGenerator>,
    /// Watch lines of recent changes, encoded once for all the watchers they go to.
    watch_lines: crate::api::watch::SharedLines,
    /// The garbage collector's graph, as it publishes it, for snapshots.
    gc_graph: tokio::sync::watch::Receiver<Option<GraphAt>>,
    /// The revision up to which the CRD controller has published the kinds CRDs serve.
    crds_passed: tokio::sync::watch::Receiver<Option<crate::store::Revision>>,
    /// This engine among those sharing its store.
    replicas: crate::coordination::Replicas,
    /// Namespaces deleted through this engine lately (see [`Engine::note_delete`]).
    deleted_namespaces: RecentDeletes,
    /// The tokens that name the engine's user, as TokenReviews check them.
    tokens: Arc<crate::authn::Tokens>,
    /// The admission webhooks every request's writes pass.
    admission: crate::admission::Webhooks,
}

impl Engine {
    /// Opens the storage, creates the initial namespaces and starts the controllers.
    /// Must be called inside a tokio runtime.
    pub async fn open(storage: &StorageConfig) -> Result<Arc<Engine>, EngineError> {
        Self::open_with_names(storage, Arc::new(RandomSuffix)).await
    }

    /// [`Engine::open`], with `generateName` names from `names` (tests force collisions so).
    pub async fn open_with_names(
        storage: &StorageConfig,
        names: Arc<dyn NameGenerator>,
    ) -> Result<Arc<Engine>, EngineError> {
        let store = match storage {
            StorageConfig::Memory => Backend::Local(LocalStore::memory()),
            StorageConfig::Redb(path) => Backend::Local(LocalStore::redb(path)?),
            StorageConfig::Etcd(config) => Backend::Etcd(EtcdStore::connect(config).await?),
        };
        Self::start(store, names, None).await
    }

    /// A new engine in memory over what `snapshot` holds (see [`Engine::snapshot`]): a fork
    /// of the engine it was taken from, going on from the snapshot's revision, that shares
    /// nothing writable with it. Must be called inside a tokio runtime.
    pub async fn from_snapshot(snapshot: &Snapshot) -> Result<Arc<Engine>, EngineError> {
        let store = Backend::Local(LocalStore::from_snapshot(&snapshot.store));
        Self::start(store, Arc::new(RandomSuffix), Some(snapshot)).await
    }

    /// Every stored object at the current revision, in O(1) whatever their number, with the
    /// kinds the CRDs serve (compiled once, shared by the forks) and the garbage collector's
    /// graph at that revision (so a fork's collector parses nothing); an engine is forked
    /// from it with [`Engine::from_snapshot`]. Waits, briefly, for the collector to have
    /// taken in the latest writes; a snapshot taken while writes go on may come without the
    /// graph, and a fork of it then builds its own.
    pub async fn snapshot(&self) -> Result<Snapshot, StoreError> {
        let mut graph = self.gc_graph.clone();
        for _ in 0..SNAPSHOT_TRIES {
            let store = self.store.snapshot()?;
            let revision = store.revision();
            let caught_up = graph.wait_for(|g| g.as_ref().is_some_and(|g| g.revision() >= revision));
            let gc = match tokio::time::timeout(GC_CATCH_UP, caught_up).await {
                Ok(Ok(at)) => at.clone().filter(|g| g.revision() == revision),
                // The collector is gone or slow: the fork builds its own graph.
                _ => return Ok(Snapshot { kinds: self.kinds.custom_kinds(), store, gc: None }),
            };
            if gc.is_some() {
                return Ok(Snapshot { kinds: self.kinds.custom_kinds(), store, gc });
            }
        }
        Ok(Snapshot { kinds: self.kinds.custom_kinds(), store: self.store.snapshot()?, gc: None })
    }

    /// Creates the initial namespaces (unless the store has them) and starts the controllers;
    /// a fork's store comes with the `snapshot` it was made from, whose kinds and collector
    /// graph are taken over.
    async fn start(
        store: Backend,
        names: Arc<dyn NameGenerator>,
        snapshot: Option<&Snapshot>,
    ) -> Result<Arc<Engine>, EngineError> {
        let store = Arc::new(store);
        let namespaces = Arc::new(NamespaceStrategy::default());
        let builtin = |strategy: Arc<dyn Strategy>| ServedKind {
            strategy,
            verbs: BUILTIN_VERBS.to_vec(),
            scale: None,
            storage_version_hash: None,
            terminating: false,
            installing: false,
            deprecation_warning: None,
        };
        let crds = ServedKind {
            // kube-apiserver still stores CRDs as v1beta1 (reference 05).
            storage_version_hash: Some(storage_version_hash(
                "apiextensions.k8s.io",
                "v1beta1",
                "CustomResourceDefinition",
            )),
            ..builtin(Arc::new(CrdStrategy::default()))
        };
        let namespaces_kind = ServedKind {
            storage_version_hash: Some(storage_version_hash("", "v1", "Namespace")),
            verbs: crate::kinds::NAMESPACE_VERBS.to_vec(),
            ..builtin(namespaces.clone())
        };
        let mut served = vec![namespaces_kind, crds];
        let tokens = Arc::new(crate::authn::Tokens::default());
        served.extend(crate::resources::builtin::all(&tokens));
        let kinds = Arc::new(Kinds::new(served));
        if let Some(snapshot) = snapshot {
            // The controller's first pass still checks them against the stored CRDs.
            kinds.restore(snapshot.kinds.clone());
        }
        let rest = Rest {
            store: store.as_ref(),
            strategy: namespaces.as_ref(),
            now: Timestamp::now(),
            scale: None,
            names: names.as_ref(),
            admission: &crate::resources::admit::NoAdmission,
        };
        for ns in INITIAL {
            // A reopened or forked store has them: a read spares the write path a refusal.
            if rest.get(None, ns).await.is_ok() {
                continue;
            }
            match rest.create(None, new_namespace(ns), &WriteOptions::internal()).await {
                Ok(_) => {}
                Err(e) if e.code == 409 => {}
                Err(e) => return Err(EngineError::Bootstrap(e)),
            }
        }
        let (gc_published, gc_graph) = tokio::sync::watch::channel(None);
        let gc_start = snapshot.and_then(|s| s.gc.clone());
        let (passed, crds_passed) = tokio::sync::watch::channel(None);
        let replicas = store.replicas();
        // Over etcd, a CRD written before the engine knows it leads would be answered
        // unserved: its names wait for a leader (bounded: etcd may be slow to answer).
        let _ = tokio::time::timeout(CAMPAIGN, replicas.campaigned()).await;
        let mut gc_start = gc_start;
        let (gc_store, gc_kinds) = (store.clone(), Arc::clone(&kinds));
        // The collector and the namespace finalizer run once: on the leader only.
        let gc = crate::coordination::while_leading(replicas.clone(), move || {
            crate::gc::run(gc_store.clone(), Arc::clone(&gc_kinds), gc_start.take(), gc_published.clone())
        });
        let controllers = vec![
            tokio::spawn(crate::crd_controller::run(store.clone(), Arc::clone(&kinds), passed, replicas.clone())),
            tokio::spawn(gc),
        ];
        // Serve stored CRDs from the first request (bounded: a pass over many CRDs is quick).
        let mut first_pass = crds_passed.clone();
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), first_pass.wait_for(Option::is_some)).await;
        Ok(Arc::new(Engine {
            admission: crate::admission::Webhooks::new(store.clone(), kinds.clone()),
            store,
            kinds,
            namespaces,
            controllers: std::sync::Mutex::new(controllers),
            names,
            watch_lines: Default::default(),
            gc_graph,
            crds_passed,
            replicas,
            deleted_namespaces: RecentDeletes::default(),
            tokens,
        }))
    }

    /// From now on, `token` names the engine's user to TokenReviews: `serve`'s bearer token.
    /// An engine whose host accepts no token authenticates none.
    pub fn accept_token(&self, token: &str) {
        self.tokens.accept(token);
    }

    /// The storage every resource lives in.
    pub fn store(&self) -> Arc<dyn Store> {
        self.store.clone()
    }

    /// What the store's change history (the watch cache) holds now.
    pub fn history_stats(&self) -> Result<crate::store::HistoryStats, StoreError> {
        self.store.history_stats()
    }

    /// The admission a request's writes pass.
    pub fn admission(&self) -> &dyn crate::resources::admit::Admission {
        &self.admission
    }

    /// Where `generateName` names come from.
    pub fn names(&self) -> &dyn NameGenerator {
        self.names.as_ref()
    }

    /// The kinds served right now.
    pub fn kinds(&self) -> &Kinds {
        &self.kinds
    }

    /// The clock every write reads.
    pub fn now(&self) -> Timestamp {
        Timestamp::now()
    }

    /// 404 `namespaces "x" not found` unless the namespace exists (reference 62); 403
    /// while it is being deleted, as kube's NamespaceLifecycle admission answers, reading
    /// the namespace where kube would (see [`namespace_lifecycle`](crate::namespace_lifecycle)).
    pub async fn require_namespace(&self, ns: &str, creating: &GroupResource, name: &str) -> Result<(), ApiError> {
        let rest = Rest {
            store: self.store.as_ref(),
            strategy: self.namespaces.as_ref(),
            now: self.now(),
            scale: None,
            names: self.names.as_ref(),
            admission: &crate::resources::admit::NoAdmission,
        };
        // Only `metadata.deletionTimestamp` matters: read from the stored bytes, not decoded
        // (a whole decode of the namespace was 4% of a create's CPU).
        let cached = rest.get_cached(None, ns).await.map_err(ApiError::read_timeout_as_write)?;
        let deleted_here = self.deleted_namespaces.holds(ns, std::time::Instant::now());
        let namespace =
            match (namespace_lifecycle::source(cached.as_ref().map(|kv| &kv.value[..]), deleted_here), cached) {
                (Source::Cache, Some(cached)) => cached,
                _ => rest.get_stored(None, ns).await.map_err(ApiError::read_timeout_as_write)?,
            };
        match namespace_lifecycle::terminating(&namespace.value) {
            false => Ok(()),
            true => Err(namespace_lifecycle::terminating_refusal(ns, creating, name)),
        }
    }

    /// Notes a delete of `name` of `kind` through this engine: a namespace is then read
    /// live by the next creates in it, until the cache has surely caught up (kube's TTL).
    pub fn note_delete(&self, kind: &ServedKind, name: &str) {
        let info = kind.info();
        if info.group.is_empty() && info.plural == self.namespaces.info().plural {
            self.deleted_namespaces.record(name, std::time::Instant::now());
        }
    }

    /// 405 while the kind's CRD is terminating (reference 69).
    pub async fn check_create_allowed(&self, kind: &ServedKind) -> Result<(), ApiError> {
        if !kind.terminating {
            return Ok(());
        }
        // kube rewords its MethodNotSupported error, keeping the details.
        let mut e = ApiError::method_not_supported(&kind.info().group_resource(), "create");
        e.message = "create not allowed while custom resource definition is terminating".into();
        Err(e)
    }

    /// Waits (at most [`CRD_SETTLE`]) until the CRD controller has taken in the CRDs as of
    /// `rv`, so that a client that changed a CRD finds the change served by its next
    /// request. Kube leaves this race to its clients; in process it is won in microseconds,
    /// but over etcd the controller hears of the change a network round trip later.
    pub(crate) async fn crds_settled(&self, rv: crate::store::Revision) {
        let mut passed = self.crds_passed.clone();
        let _ = tokio::time::timeout(CRD_SETTLE, passed.wait_for(|p| p.is_some_and(|p| p >= rv))).await;
    }

    /// Watch lines of recent changes, shared by the watchers they go to.
    pub(crate) fn watch_lines(&self) -> &crate::api::watch::SharedLines {
        &self.watch_lines
    }

    /// The engine's HTTP API as a tower service.
    pub fn router(self: &Arc<Self>) -> axum::Router {
        crate::api::router(Arc::clone(self))
    }

    /// Stops the controllers and closes the storage (waiting for pending writes).
    pub async fn shutdown(self: Arc<Self>) {
        let controllers = std::mem::take(&mut *self.controllers.lock().unwrap_or_else(|e| e.into_inner()));
        for c in controllers {
            c.abort();
            // Wait until the task has dropped its handle on the store.
            let _ = c.await;
        }
        self.replicas.resign().await;
        if let Ok(engine) = Arc::try_unwrap(self)
            && let Ok(store) = Arc::try_unwrap(engine.store)
        {
            store.close().await;
        }
    }
}
