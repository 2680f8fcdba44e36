//! Versioned key/value storage: the source of every `resourceVersion`.
//!
//! The model is etcd v3's: one global, monotonic revision; every successful write gets the
//! next revision, and that revision is the written object's `resourceVersion`. The [`Store`]
//! trait is what the engine programs against, so an etcd backend can implement it later
//! without the layers above changing.
//!
//! [`EtcdStore`] keeps everything in an etcd v3 cluster, as kube-apiserver does, and
//! [`Backend`] is either, for the engine to hold.
//!
//! [`LocalStore`] is the embedded implementation: the whole current state and a bounded
//! history of changes live in memory ([`state`], also serving as the watch cache), and a
//! single committer thread ([`writer`]) batches concurrent writes into one durable commit
//! (group commit) through a [`Persist`] backend: nothing for the memory store; for the
//! durable one ([`redb_backend`]), one synced append to a write-ahead log ([`wal`]), which
//! a background thread carries into a redb database and checkpoints. A write is
//! acknowledged only after its batch is durable and visible to readers.

mod backend;
mod counts;
mod etcd;
mod redb_backend;
mod state;
mod wal;
mod watch;
mod writer;

#[cfg(test)]
mod conformance;

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::BoxStream;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

pub use backend::Backend;
pub(crate) use etcd::Election;
/// A real etcd for tests (the `etcd-testing` feature).
#[cfg(any(test, feature = "etcd-testing"))]
#[doc(hidden)]
pub use etcd::process as etcd_process;
pub use etcd::{DEFAULT_TIMEOUT as DEFAULT_ETCD_TIMEOUT, EtcdConfig, EtcdStore, EtcdTls, LEASE_TTL as ETCD_LEASE_TTL};
pub(crate) use redb_backend::RedbPersist;
pub(crate) use writer::{NoPersist, Persist};

/// A revision of the store; the `resourceVersion` of whatever was written at it.
pub type Revision = u64;

/// How long the engine's controllers wait before trying an unavailable store again.
pub const RETRY_PAUSE: std::time::Duration = std::time::Duration::from_millis(500);

/// How many changes the in-memory history keeps for watches and paged lists by default.
pub const DEFAULT_HISTORY: usize = 16_384;

/// How many bytes of changes the history keeps by default (see [`HistoryLimit`]).
///
/// kube-apiserver bounds its watch cache by count only, and etcd its history by time (a
/// compaction every 5 minutes); both live in other processes than the clients'. The engine
/// runs inside the plugin, so its memory is the user's: a count alone let 100 patches of a
/// 1 MiB object hold hundreds of MiB. 64 MiB is the count bound's worth of 2 KiB objects
/// (a typical custom resource: up to ~4 KiB of change with its previous value), so only
/// streams of large objects lose history sooner, and those still keep their last ~20
/// full-size (1.5 MiB) changes.
pub const DEFAULT_HISTORY_BYTES: usize = 64 * 1024 * 1024;

/// The largest write the store takes: etcd's default `--max-request-bytes` (1.5 MiB), which
/// is what bounds an object's size in kube-apiserver (its own 3 MiB body limit is higher).
/// etcd counts its whole transaction; [`request_bytes`] estimates it as etcd 3.4 does.
pub const MAX_REQUEST_BYTES: usize = 1_572_864;

/// The bytes etcd's transaction for one write of `value` at `key` takes, as measured
/// against the oracle's etcd: the value, the key twice (compare and put) and ~40 bytes of
/// envelope.
fn request_bytes(key: &str, value: &[u8]) -> usize {
    value.len() + 2 * key.len() + 40
}

/// The most kube-apiserver's etcd client sends in one gRPC message: clientv3's default
/// `MaxCallSendMsgSize` (2 MiB), which kube leaves as it is. A larger write never reaches
/// etcd, so its words are gRPC's, not etcd's.
pub const MAX_SEND_MESSAGE_BYTES: usize = 2 * 1024 * 1024;

/// The protobuf size of the `TxnRequest` kube's `OptimisticPut` sends to write `value` at
/// `key`: compare the key's mod revision with `expected` (0 for a create), put, and for an
/// update (`Some`) get the key when the compare fails.
fn message_bytes(key: &str, value_len: usize, update: Option<Revision>) -> usize {
    let varint = |n: u64| (64 - n.max(1).leading_zeros() as usize).div_ceil(7);
    // A length-delimited field of `len` bytes: its tag, its length, its bytes.
    let field = |len: usize| 1 + varint(len as u64) + len;
    let key_field = field(key.len());
    // target MOD, the key, mod_revision (written even when 0: a oneof member).
    let compare = 2 + key_field + 1 + varint(update.unwrap_or(0));
    let put = field(key_field + field(value_len));
    let get_on_failure = update.map_or(0, |_| field(field(key_field)));
    field(compare) + field(put) + get_on_failure
}

/// How much change history a [`LocalStore`] keeps in memory: the oldest changes are dropped
/// once either bound is passed, and a watch or list from before them is `Expired` (410).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryLimit {
    /// Changes kept at most.
    pub events: usize,
    /// Bytes as counted without sharing (an upper bound of what the history holds).
    pub bytes: usize,
}

impl Default for HistoryLimit {
    fn default() -> Self {
        HistoryLimit { events: DEFAULT_HISTORY, bytes: DEFAULT_HISTORY_BYTES }
    }
}

/// What the history holds at a moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryStats {
    /// Changes held.
    pub events: usize,
    /// Their bytes, counted as [`HistoryLimit::bytes`] counts them.
    pub bytes: usize,
    /// The oldest revision a watch may start after (and a list be read at).
    pub oldest: Revision,
}

/// One stored key with its value and revisions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyValue {
    /// The key (`/registry/<group>/<resource>/[<namespace>/]<name>`).
    pub key: String,
    /// The stored bytes (an object's JSON at its storage version).
    pub value: Bytes,
    /// The revision at which the key was created (the current incarnation).
    pub create_revision: Revision,
    /// The revision of the last write to the key: its `resourceVersion`.
    pub mod_revision: Revision,
}

/// One change, as watches deliver it and the history keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchEvent {
    /// The revision the change was written at.
    pub revision: Revision,
    /// The key it changed.
    pub key: String,
    /// The value after the change; `None` for a delete.
    pub current: Option<KeyValue>,
    /// The value before the change; `None` for a create.
    pub prev: Option<KeyValue>,
}

/// What a change did to its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// The key was created.
    Added,
    /// The key was updated.
    Modified,
    /// The key was deleted.
    Deleted,
}

impl WatchEvent {
    /// Whether the change created, updated or deleted its key.
    pub fn event_type(&self) -> EventType {
        match (&self.prev, &self.current) {
            (_, None) => EventType::Deleted,
            (None, Some(_)) => EventType::Added,
            (Some(_), Some(_)) => EventType::Modified,
        }
    }
}

/// Options of a list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListOptions {
    /// At most this many items; `None` or `Some(0)` for all.
    pub limit: Option<usize>,
    /// Start at this key (inclusive): the key a previous page returned as `next_key`.
    pub start_key: Option<String>,
    /// Read the state as it was at this revision (a continued list passes the first
    /// page's revision so every page comes from one snapshot). `None`: the latest.
    pub revision: Option<Revision>,
    /// Whether the watch cache may answer, at [`Store::cached_revision`] (a list with
    /// `resourceVersion=0` or `NotOlderThan`, as kube's cacher serves them); otherwise the
    /// list is consistent, read at the store's current revision. Only the etcd store tells
    /// the two apart: the local one is its own cache.
    pub cached: bool,
}

/// One page of a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListPage {
    /// The keys of the page, in key order.
    pub items: Vec<KeyValue>,
    /// The revision the page was read at.
    pub revision: Revision,
    /// Where the next page starts, when there is one.
    pub next_key: Option<String>,
    /// How many items remain after this page.
    pub remaining: u64,
}

/// The result of a delete: the last value and the revision of the deletion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deleted {
    /// The value the key held when it was deleted.
    pub prev: KeyValue,
    /// The revision of the deletion.
    pub revision: Revision,
}

/// A stream of changes under a prefix, in revision order. An `Err` ends it. Every
/// watcher of a change shares the one the history holds.
pub type WatchStream = BoxStream<'static, Result<Arc<WatchEvent>, StoreError>>;

/// Why a store operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// A create found the key present.
    #[error("key {key:?} already exists")]
    AlreadyExists {
        /// The key.
        key: String,
    },
    /// An update or delete found no key.
    #[error("key {key:?} not found")]
    NotFound {
        /// The key.
        key: String,
    },
    /// An update or delete with an expected revision found the key at another one.
    #[error("key {key:?} is at revision {actual}, not the expected {expected}")]
    Conflict {
        /// The key.
        key: String,
        /// The revision the write expected.
        expected: Revision,
        /// The revision the key is at.
        actual: Revision,
    },
    /// The requested revision is older than the history still held (HTTP 410 Gone).
    #[error("too old resource version: {requested} ({oldest})")]
    Expired {
        /// The revision asked for.
        requested: Revision,
        /// The oldest revision still held.
        oldest: Revision,
    },
    /// The requested revision is newer than the store's (HTTP 504 with retry, as kube).
    #[error("Too large resource version: {requested}, current resource version: {current}")]
    TooLarge {
        /// The revision asked for.
        requested: Revision,
        /// The store's current revision.
        current: Revision,
    },
    /// A write over [`MAX_REQUEST_BYTES`] (kube answers etcd's words with a 500).
    #[error("etcdserver: request is too large")]
    RequestTooLarge,
    /// A write whose message kube's etcd client refuses to send, `size` bytes being over
    /// [`MAX_SEND_MESSAGE_BYTES`] (kube answers gRPC's words with a 500, and, unlike after
    /// etcd's own refusal, does not try again without managedFields).
    #[error(
        "rpc error: code = ResourceExhausted desc = trying to send message larger than max ({size} vs. {MAX_SEND_MESSAGE_BYTES})"
    )]
    MessageTooLarge {
        /// The message's bytes.
        size: usize,
    },
    /// Another process holds the database.
    #[error("the data directory {path} is in use by another process")]
    Locked {
        /// The database file that is held.
        path: PathBuf,
    },
    /// The backend cannot be reached, or did not answer in time (etcd down: HTTP 504).
    #[error("storage unavailable: {0}")]
    Unavailable(String),
    /// The backend cannot do this (snapshots of an etcd store).
    #[error("{0}")]
    Unsupported(String),
    /// The backend failed (IO, a corrupt file); the text says how.
    #[error("storage backend: {0}")]
    Backend(String),
    /// The store was closed (the engine is shutting down).
    #[error("the store is closed")]
    Closed,
}

/// The keys of a [`LocalStore`] at one revision, taken by [`LocalStore::snapshot`] in O(1):
/// it shares the store's nodes, and neither side's later writes show in the other. A store
/// started from it ([`LocalStore::from_snapshot`]) is forked from that revision.
#[derive(Clone)]
pub struct Snapshot {
    items: imbl::OrdSet<state::Item>,
    counts: counts::DirectoryCounts,
    revision: Revision,
}

impl Snapshot {
    /// The revision it was taken at: a store forked from it goes on from the next one.
    pub fn revision(&self) -> Revision {
        self.revision
    }

    /// How many keys it holds.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether it holds no key.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot").field("revision", &self.revision).field("keys", &self.items.len()).finish()
    }
}

/// The storage every engine layer programs against.
#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// The latest revision.
    async fn current_revision(&self) -> Result<Revision, StoreError>;
    /// The key's current value, if it exists.
    async fn get(&self, key: &str) -> Result<Option<KeyValue>, StoreError>;
    /// The key's value as the watch cache holds it: on etcd, as this replica's cache has
    /// reached (it may lag a write by a round trip), for the reads kube serves from its
    /// informers; the local store is its own cache.
    async fn get_cached(&self, key: &str) -> Result<Option<KeyValue>, StoreError> {
        self.get(key).await
    }
    /// Keys starting with `prefix`, in key order, consistent at one revision.
    async fn list(&self, prefix: &str, opts: &ListOptions) -> Result<ListPage, StoreError>;
    /// Fails with `AlreadyExists` if the key exists.
    async fn create(&self, key: &str, value: Bytes) -> Result<KeyValue, StoreError>;
    /// Fails with `NotFound`, or `Conflict` when `expected` is given and is not the key's
    /// current `mod_revision`.
    async fn update(&self, key: &str, value: Bytes, expected: Option<Revision>) -> Result<KeyValue, StoreError>;
    /// Fails with `NotFound`, or `Conflict` like `update`.
    async fn delete(&self, key: &str, expected: Option<Revision>) -> Result<Deleted, StoreError>;
    /// Every change under `prefix` after revision `after`, then live changes.
    /// `Expired` when changes after `after` are no longer held.
    async fn watch(&self, prefix: &str, after: Revision) -> Result<WatchStream, StoreError>;
    /// The revision lists with [`ListOptions::cached`] and watches are served at: the
    /// store's own, or, on etcd, the revision the replica's watch cache has reached.
    async fn cached_revision(&self) -> Result<Revision, StoreError> {
        self.current_revision().await
    }
    /// Whether the store answers (`/readyz`), found out promptly: on etcd by a short probe
    /// (or a call that just failed), not within the whole request timeout.
    async fn ready(&self) -> bool {
        self.current_revision().await.is_ok()
    }
    /// Whether a watch from `after` has the changes since ready at once, so that polling it
    /// once tells whether any is pending (true of a store held in memory and of etcd's
    /// watch cache; not of a watch from before the cache, which etcd replays over the
    /// network).
    fn replays_at_once(&self, after: Revision) -> bool {
        let _ = after;
        true
    }
}

/// The embedded store: state in memory, writes made durable by `P` in group commits.
pub struct LocalStore {
    state: Arc<RwLock<state::State>>,
    writer: writer::Writer,
    revisions: tokio::sync::watch::Receiver<Revision>,
}

impl LocalStore {
    /// A store that keeps nothing across restarts (tests, `--storage memory`).
    pub fn memory() -> Self {
        Self::memory_with_history(HistoryLimit::default())
    }

    /// A memory store keeping `history` in memory for watches.
    pub fn memory_with_history(history: HistoryLimit) -> Self {
        Self::start(NoPersist, state::State::new(0, history))
    }

    /// A memory store holding what `snapshot` holds, going on from its revision (its history
    /// starts there: a watch or list from an older revision is `Expired`).
    pub fn from_snapshot(snapshot: &Snapshot) -> Self {
        Self::start(NoPersist, state::State::from_snapshot(snapshot, HistoryLimit::default()))
    }

    /// The current keys at the current revision, in O(1) (see [`Snapshot`]).
    pub fn snapshot(&self) -> Result<Snapshot, StoreError> {
        Ok(self.read()?.snapshot())
    }

    /// A durable store in a redb database file.
    pub fn redb(path: &Path) -> Result<Self, StoreError> {
        Self::redb_with_history(path, HistoryLimit::default())
    }

    /// A durable store keeping `history` in memory for watches.
    pub fn redb_with_history(path: &Path, history: HistoryLimit) -> Result<Self, StoreError> {
        Self::redb_tuned(path, history, redb_backend::Tuning::default())
    }

    fn redb_tuned(path: &Path, history: HistoryLimit, tuning: redb_backend::Tuning) -> Result<Self, StoreError> {
        let (persist, loaded) = RedbPersist::open_tuned(path, tuning)?;
        let mut initial = state::State::new(loaded.revision, history);
        for kv in loaded.items {
            initial.insert_loaded(kv);
        }
        Ok(Self::start(persist, initial))
    }

    fn start<P: Persist>(persist: P, initial: state::State) -> Self {
        let revision = initial.revision();
        let state = Arc::new(RwLock::new(initial));
        let (tx, rx) = tokio::sync::watch::channel(revision);
        let writer = writer::Writer::spawn(persist, Arc::clone(&state), tx);
        LocalStore { state, writer, revisions: rx }
    }

    /// Closes the store: waits for pending writes and releases the backend, so that the
    /// same database can be opened again at once (by this or another process).
    pub async fn close(self) {
        self.writer.close().await;
    }

    /// What the change history holds now.
    pub fn history_stats(&self) -> Result<HistoryStats, StoreError> {
        Ok(self.read()?.history_stats())
    }

    fn read(&self) -> Result<std::sync::RwLockReadGuard<'_, state::State>, StoreError> {
        self.state.read().map_err(|_| StoreError::Backend("state lock poisoned".into()))
    }
}

/// How long kube's stored form of `value` is: a JSON object as Go's encoder writes it, with
/// a newline after it (the engine stores none).
fn kube_value_len(value: &[u8]) -> usize {
    value.len() + usize::from(value.first() == Some(&b'{'))
}

/// Refuses a write kube's etcd client, or else etcd, would refuse for its size (`update`:
/// the revision an update expects; `None` for a create).
fn check_request_size(key: &str, value: &[u8], update: Option<Revision>) -> Result<(), StoreError> {
    let size = message_bytes(key, kube_value_len(value), update);
    if size > MAX_SEND_MESSAGE_BYTES {
        return Err(StoreError::MessageTooLarge { size });
    }
    if request_bytes(key, value) > MAX_REQUEST_BYTES {
        return Err(StoreError::RequestTooLarge);
    }
    Ok(())
}

#[async_trait]
impl Store for LocalStore {
    async fn current_revision(&self) -> Result<Revision, StoreError> {
        Ok(self.read()?.revision())
    }

    async fn get(&self, key: &str) -> Result<Option<KeyValue>, StoreError> {
        Ok(self.read()?.get(key).cloned())
    }

    async fn list(&self, prefix: &str, opts: &ListOptions) -> Result<ListPage, StoreError> {
        self.read()?.list(prefix, opts)
    }

    async fn create(&self, key: &str, value: Bytes) -> Result<KeyValue, StoreError> {
        check_request_size(key, &value, None)?;
        match self.writer.submit(writer::Op::Create { key: key.to_string(), value }).await? {
            writer::Outcome::Written(kv) => Ok(kv),
            writer::Outcome::Deleted(_) => Err(StoreError::Backend("unexpected outcome".into())),
        }
    }

    async fn update(&self, key: &str, value: Bytes, expected: Option<Revision>) -> Result<KeyValue, StoreError> {
        check_request_size(key, &value, Some(expected.unwrap_or_default()))?;
        match self.writer.submit(writer::Op::Update { key: key.to_string(), value, expected }).await? {
            writer::Outcome::Written(kv) => Ok(kv),
            writer::Outcome::Deleted(_) => Err(StoreError::Backend("unexpected outcome".into())),
        }
    }

    async fn delete(&self, key: &str, expected: Option<Revision>) -> Result<Deleted, StoreError> {
        match self.writer.submit(writer::Op::Delete { key: key.to_string(), expected }).await? {
            writer::Outcome::Deleted(d) => Ok(d),
            writer::Outcome::Written(_) => Err(StoreError::Backend("unexpected outcome".into())),
        }
    }

    async fn watch(&self, prefix: &str, after: Revision) -> Result<WatchStream, StoreError> {
        self.read()?.check_watchable(after)?;
        Ok(watch::stream(Arc::clone(&self.state), self.revisions.clone(), prefix.to_string(), after))
    }
}
