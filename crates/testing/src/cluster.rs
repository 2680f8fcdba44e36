//! [`TestCluster`]: an engine in this process with a `kube::Client` over it, and
//! [`Snapshot`]s of one forked into new clusters.
//!
//! A cluster is an [`Engine`] (memory store unless [`Builder::durable`] asks for a directory)
//! and an [`in_process_client`]: no socket, no file, so starting one costs about as much as
//! spawning the store's committer thread and writing the initial namespaces. Clusters share
//! nothing, so tests run them in parallel. A snapshot shares the store's persistent map with
//! its cluster (O(1) whatever the number of objects); a fork is a new engine over it whose
//! writes copy only the nodes they touch, so neither parent nor siblings see them.

use crate::install::{self, Document};
use crate::{Error, Served, in_process_client};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::DynamicObject;
use kube::{CustomResourceExt, Resource};
use kubectl_crd_engine::{Engine, StorageConfig};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The file a durable cluster keeps its objects in, inside its directory.
pub const STORE_FILE: &str = "store.redb";

/// An in-process Kubernetes cluster for tests: CRDs, custom resources, the built-in kinds
/// operators use (namespaces, configmaps, secrets, events, leases, ...), watch, `/status`,
/// `/scale`, server-side apply and garbage collection, answered as kube-apiserver 1.32 does.
///
/// Dropping it stops its controllers; [`TestCluster::shutdown`] also waits for the store to
/// close (a durable cluster's directory can then be opened again at once).
pub struct TestCluster {
    engine: Arc<Engine>,
    client: kube::Client,
    namespace: String,
}

/// How to start a [`TestCluster`] (from [`TestCluster::builder`]).
#[derive(Debug, Clone)]
pub struct Builder {
    durable: Option<PathBuf>,
    namespace: String,
}

impl Builder {
    /// Keeps the objects in `dir` (a redb database, [`STORE_FILE`]), created if missing, so
    /// they outlive the cluster: a later cluster on the same directory finds them.
    pub fn durable(mut self, dir: impl Into<PathBuf>) -> Builder {
        self.durable = Some(dir.into());
        self
    }

    /// The client's default namespace (`default` unless set; it must exist, or be installed).
    pub fn namespace(mut self, namespace: impl Into<String>) -> Builder {
        self.namespace = namespace.into();
        self
    }

    /// Starts the cluster. Must be called inside a tokio runtime.
    pub async fn start(self) -> Result<TestCluster, Error> {
        let storage = match &self.durable {
            None => StorageConfig::Memory,
            Some(dir) => {
                std::fs::create_dir_all(dir).map_err(|source| Error::Io { path: dir.clone(), source })?;
                StorageConfig::Redb(dir.join(STORE_FILE))
            }
        };
        let engine = Engine::open(&storage).await?;
        Ok(TestCluster::over(engine, self.namespace))
    }
}

impl TestCluster {
    /// Starts an empty cluster in memory (the namespaces every cluster has, no CRD). Must be
    /// called inside a tokio runtime.
    pub async fn start() -> Result<TestCluster, Error> {
        TestCluster::builder().start().await
    }

    /// Options: a durable directory, the client's default namespace.
    pub fn builder() -> Builder {
        Builder { durable: None, namespace: "default".into() }
    }

    fn over(engine: Arc<Engine>, namespace: String) -> TestCluster {
        let client = in_process_client(&engine, &namespace);
        TestCluster { engine, client, namespace }
    }

    /// A client of this cluster (clones are cheap and share it), defaulting to the
    /// builder's namespace.
    pub fn client(&self) -> kube::Client {
        self.client.clone()
    }

    /// The client's default namespace.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The engine itself, for what the client cannot reach (its router, its store).
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// Installs the CRD of a `#[derive(CustomResource)]` type and waits until it is
    /// Established, so its kind is served.
    pub async fn install_crd<K: CustomResourceExt>(&self) -> Result<CustomResourceDefinition, Error> {
        self.install_crd_object(&K::crd()).await
    }

    /// Installs a CRD and waits until it is Established; returns it as stored.
    pub async fn install_crd_object(&self, crd: &CustomResourceDefinition) -> Result<CustomResourceDefinition, Error> {
        let stored = self.install(crd).await?;
        let name = stored.metadata.name.clone().unwrap_or_default();
        let api: kube::Api<CustomResourceDefinition> = kube::Api::all(self.client());
        api.get(&name).await.map_err(|source| Error::Kube { what: format!("reading the CRD {name}"), source })
    }

    /// Installs one object of a typed kind (`k8s-openapi`'s, or a custom resource's): created,
    /// or updated by server-side apply when it exists; its `status`, if any, written through
    /// `/status`. Returns it as stored.
    pub async fn install<K: Resource<DynamicType = ()> + Serialize>(&self, object: &K) -> Result<DynamicObject, Error> {
        let mut value = serde_json::to_value(object)
            .map_err(|e| Error::Document { origin: K::kind(&()).into_owned(), reason: e.to_string() })?;
        if let Some(map) = value.as_object_mut() {
            map.entry("apiVersion").or_insert_with(|| K::api_version(&()).into());
            map.entry("kind").or_insert_with(|| K::kind(&()).into());
        }
        let mut stored = self.install_documents(install::from_value(value, &K::kind(&()))?).await?;
        stored.pop().ok_or_else(|| Error::Document { origin: K::kind(&()).into_owned(), reason: "not written".into() })
    }

    /// Installs every object in `yaml` (multi-document YAML or JSON; `List`s flattened):
    /// namespaces first, then CRDs (waited for until Established), then the rest, by
    /// server-side apply; a document's `status` goes through `/status`. Nothing is written
    /// when a document is malformed. Returns the objects as stored.
    pub async fn install_yaml(&self, yaml: &str) -> Result<Vec<DynamicObject>, Error> {
        self.install_documents(install::parse(yaml, "YAML")?).await
    }

    /// [`TestCluster::install_yaml`] on a file's text.
    pub async fn install_file(&self, path: impl AsRef<Path>) -> Result<Vec<DynamicObject>, Error> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
        self.install_documents(install::parse(&text, &path.display().to_string())?).await
    }

    async fn install_documents(&self, docs: Vec<Document>) -> Result<Vec<DynamicObject>, Error> {
        install::install(&self.client, &self.namespace, docs).await
    }

    /// Every object now, in O(1) whatever their number (once the engine's controllers have
    /// taken in the last writes, which takes microseconds): fork it into new clusters with
    /// [`Snapshot::fork`] (seed once, fork per test).
    pub async fn snapshot(&self) -> Result<Snapshot, Error> {
        Ok(Snapshot { store: self.engine.snapshot().await?, namespace: self.namespace.clone() })
    }

    /// Serves this cluster over plain HTTP on a free loopback port, for clients that need a
    /// URL or a kubeconfig (kubectl, another process). See [`Served`].
    pub async fn serve(&self) -> Result<Served, Error> {
        Served::start(&self.engine, &self.namespace).await
    }

    /// Stops the controllers and closes the store, waiting for the client's last request to
    /// let go of the engine (bounded). Drop every clone of [`TestCluster::client`] first.
    pub async fn shutdown(self) {
        let engine = Arc::clone(&self.engine);
        // Dropping stops the controllers (see `Drop`); what is left holding the engine then
        // is the client's buffer task, and our handle, which closes the store below.
        drop(self);
        // The client's buffer task holds the router (and so the engine) until it notices
        // that every sender is gone; give it a moment, bounded.
        for _ in 0..200 {
            if Arc::strong_count(&engine) == 1 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        engine.shutdown().await;
    }
}

impl Drop for TestCluster {
    fn drop(&mut self) {
        // The controllers hold the engine: without this they would run until the runtime ends.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(Arc::clone(&self.engine).shutdown());
        }
    }
}

/// Every object of a [`TestCluster`] at one revision (from [`TestCluster::snapshot`]);
/// cheap to clone and to keep, and shared across tests (e.g. in a `static`).
#[derive(Debug, Clone)]
pub struct Snapshot {
    store: kubectl_crd_engine::Snapshot,
    namespace: String,
}

impl Snapshot {
    /// A new cluster in memory holding what the snapshot holds: its resourceVersions go on
    /// from the snapshot's, its writes are its own (the parent and other forks never see
    /// them). Must be called inside a tokio runtime.
    pub async fn fork(&self) -> Result<TestCluster, Error> {
        let engine = Engine::from_snapshot(&self.store).await?;
        Ok(TestCluster::over(engine, self.namespace.clone()))
    }

    /// The revision (resourceVersion) it was taken at.
    pub fn revision(&self) -> u64 {
        self.store.revision()
    }

    /// How many objects it holds (the initial namespaces included).
    pub fn len(&self) -> usize {
        self.store.len()
    }

    /// Whether it holds no object (never, for a snapshot of a started cluster).
    pub fn is_empty(&self) -> bool {
        self.store.is_empty()
    }
}
