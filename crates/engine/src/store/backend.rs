//! The store an engine holds: the local one or etcd, behind one concrete type.
//!
//! An enum rather than `Arc<dyn Store>` because the engine also needs what only the local
//! store has (O(1) snapshots for forks, history statistics, a close that waits for pending
//! writes): those answer [`StoreError::Unsupported`] on etcd instead of being missing.

use super::{
    Deleted, EtcdStore, HistoryStats, KeyValue, ListOptions, ListPage, LocalStore, Revision, Snapshot, Store,
    StoreError, WatchStream,
};
use async_trait::async_trait;
use bytes::Bytes;

/// A local store or an etcd one.
pub enum Backend {
    /// In memory or redb, in this process.
    Local(LocalStore),
    /// A real etcd v3 cluster.
    Etcd(EtcdStore),
}

/// Calls the same method on whichever store `$backend` holds.
macro_rules! delegate {
    ($backend:expr, $s:ident => $call:expr) => {
        match $backend {
            Backend::Local($s) => $call,
            Backend::Etcd($s) => $call,
        }
    };
}

fn local_only(what: &str) -> StoreError {
    StoreError::Unsupported(format!("{what} are only available with local storage (memory or redb), not etcd"))
}

impl Backend {
    /// The current keys at the current revision (local storage only).
    pub fn snapshot(&self) -> Result<Snapshot, StoreError> {
        match self {
            Backend::Local(s) => s.snapshot(),
            Backend::Etcd(_) => Err(local_only("snapshots")),
        }
    }

    /// What the in-memory change history holds (local storage only).
    pub fn history_stats(&self) -> Result<HistoryStats, StoreError> {
        match self {
            Backend::Local(s) => s.history_stats(),
            Backend::Etcd(_) => Err(local_only("history statistics")),
        }
    }

    /// This engine among those sharing the store: alone on local storage; on etcd, one of
    /// the replicas, joined now.
    pub(crate) fn replicas(&self) -> crate::coordination::Replicas {
        match self {
            Backend::Local(_) => crate::coordination::Replicas::alone(),
            Backend::Etcd(s) => crate::coordination::Replicas::Etcd(std::sync::Arc::new(s.join(super::ETCD_LEASE_TTL))),
        }
    }

    /// Waits for pending writes and releases the backend.
    pub async fn close(self) {
        match self {
            Backend::Local(s) => s.close().await,
            // Every etcd write was acknowledged by etcd before it returned.
            Backend::Etcd(_) => {}
        }
    }
}

#[async_trait]
impl Store for Backend {
    async fn current_revision(&self) -> Result<Revision, StoreError> {
        delegate!(self, s => s.current_revision().await)
    }
    async fn get(&self, key: &str) -> Result<Option<KeyValue>, StoreError> {
        delegate!(self, s => s.get(key).await)
    }
    async fn get_cached(&self, key: &str) -> Result<Option<KeyValue>, StoreError> {
        delegate!(self, s => s.get_cached(key).await)
    }
    async fn list(&self, prefix: &str, opts: &ListOptions) -> Result<ListPage, StoreError> {
        delegate!(self, s => s.list(prefix, opts).await)
    }
    async fn create(&self, key: &str, value: Bytes) -> Result<KeyValue, StoreError> {
        delegate!(self, s => s.create(key, value).await)
    }
    async fn update(&self, key: &str, value: Bytes, expected: Option<Revision>) -> Result<KeyValue, StoreError> {
        delegate!(self, s => s.update(key, value, expected).await)
    }
    async fn delete(&self, key: &str, expected: Option<Revision>) -> Result<Deleted, StoreError> {
        delegate!(self, s => s.delete(key, expected).await)
    }
    async fn watch(&self, prefix: &str, after: Revision) -> Result<WatchStream, StoreError> {
        delegate!(self, s => s.watch(prefix, after).await)
    }
    async fn cached_revision(&self) -> Result<Revision, StoreError> {
        delegate!(self, s => s.cached_revision().await)
    }
    async fn ready(&self) -> bool {
        delegate!(self, s => s.ready().await)
    }
    fn replays_at_once(&self, after: Revision) -> bool {
        delegate!(self, s => s.replays_at_once(after))
    }
}
