//! The store on a real etcd v3 cluster, as kube-apiserver keeps its objects.
//!
//! etcd's revision is the `resourceVersion`; a create is a transaction "create_revision is
//! 0 → put", an update or delete one "mod_revision is the expected one → put/delete"; a list
//! is a range at one revision (pages continue from the last key at the first page's
//! revision); a watch is etcd's, from the revision after the one asked. A read below etcd's
//! compacted revision is [`StoreError::Expired`] (410 Gone above), an etcd that does not
//! answer is [`StoreError::Unavailable`] (a 504 above) within the configured timeout.
//!
//! The client speaks etcd's gRPC API over HTTP/2 (`client`), as kube-apiserver does, over
//! the hyper and rustls the workspace already builds. Its dozen messages are written by hand
//! (`proto`, `wire`) rather than through the `etcd-client` crate, which brings tonic and
//! prost and compiles etcd's `.proto` files at build time with `protoc`, a tool a clean
//! machine lacks.
//!
//! Keys: the engine's keys all start with `/registry`; that part becomes the configured
//! prefix (`--etcd-prefix`, by default `/registry`), and built-in kinds are keyed by their
//! bare resource name as kube-apiserver keys them (see `keys`), so `etcdctl` finds objects
//! where kube-apiserver would put them. Values are the JSON the engine stores at the
//! storage version.

mod cache;
mod client;
mod election;
pub(crate) use election::Election;
mod keys;
#[cfg(any(test, feature = "etcd-testing"))]
#[doc(hidden)]
pub mod process;
mod proto;
#[cfg(test)]
pub(super) mod tests;
mod wire;

use super::{Deleted, KeyValue, ListOptions, ListPage, Revision, Store, StoreError, WatchEvent, WatchStream};
use async_trait::async_trait;
use bytes::Bytes;
use client::{Grpc, GrpcError, Written};
use futures::StreamExt;
use keys::{ENGINE_ROOT, KeyMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use wire::{Cmp, Target, method};

/// How long one etcd request may take by default before the API answers 504.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a readiness probe may take, and how long a call that failed to reach etcd
/// stands for its health without one (kube's etcd checks rate-limit their probes so).
const READY_PROBE: Duration = Duration::from_secs(1);

/// How long a replica's etcd lease lives without renewal: a dead leader is replaced, and a
/// dead replica stops holding back `Established`, that long after it stopped.
pub const LEASE_TTL: Duration = Duration::from_secs(10);

/// Where and how to reach etcd.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EtcdConfig {
    /// Client URLs (`http://127.0.0.1:2379`), tried in turn.
    pub endpoints: Vec<String>,
    /// What replaces `/registry` at the start of every key.
    pub prefix: String,
    /// TLS files, for `https` endpoints.
    pub tls: Option<EtcdTls>,
    /// The longest one request may take.
    pub timeout: Duration,
}

impl EtcdConfig {
    /// `endpoints` with kube-apiserver's defaults (prefix `/registry`, no TLS).
    pub fn new(endpoints: Vec<String>) -> Self {
        EtcdConfig { endpoints, prefix: ENGINE_ROOT.into(), tls: None, timeout: DEFAULT_TIMEOUT }
    }
}

/// TLS files to reach etcd with (PEM).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EtcdTls {
    /// The CA that signed etcd's serving certificate.
    pub ca_file: Option<PathBuf>,
    /// A client certificate, when etcd checks clients.
    pub cert_file: Option<PathBuf>,
    /// Its key.
    pub key_file: Option<PathBuf>,
}

/// The store on etcd: reads that must be consistent and every write go to etcd; lists that
/// may be served from a cache, and watches, come from this replica's watch cache.
pub struct EtcdStore {
    etcd: Arc<Etcd>,
    cache: cache::WatchCache,
}

impl EtcdStore {
    /// A store on `config`'s etcd; checks that etcd answers and fills the watch cache.
    pub async fn connect(config: &EtcdConfig) -> Result<Self, StoreError> {
        if config.endpoints.is_empty() {
            return Err(StoreError::Backend("no etcd endpoint given".into()));
        }
        let grpc = Grpc::new(config).map_err(|e| StoreError::Backend(e.to_string()))?;
        let keys = KeyMap::new(&config.prefix);
        let etcd = Arc::new(Etcd { grpc: Arc::new(grpc), keys });
        etcd.current_revision().await?;
        let cache = cache::WatchCache::start(Arc::clone(&etcd), super::HistoryLimit::default()).await?;
        Ok(EtcdStore { etcd, cache })
    }

    /// Joins the replicas of this etcd, with an etcd lease of `ttl` (see [`Election`]).
    pub(crate) fn join(&self, ttl: Duration) -> Election {
        Election::start(Arc::clone(&self.etcd), ttl)
    }
}

#[async_trait]
impl Store for EtcdStore {
    async fn current_revision(&self) -> Result<Revision, StoreError> {
        self.etcd.current_revision().await
    }
    async fn cached_revision(&self) -> Result<Revision, StoreError> {
        self.cache.revision()
    }
    async fn get(&self, key: &str) -> Result<Option<KeyValue>, StoreError> {
        self.etcd.get(key).await
    }
    async fn get_cached(&self, key: &str) -> Result<Option<KeyValue>, StoreError> {
        if !cache::covers(key) {
            return self.etcd.get(key).await;
        }
        self.cache.get(key)
    }
    async fn list(&self, prefix: &str, opts: &ListOptions) -> Result<ListPage, StoreError> {
        if opts.cached && cache::covers(prefix) {
            return self.cache.list(prefix, opts);
        }
        self.etcd.list(prefix, opts).await
    }
    async fn create(&self, key: &str, value: Bytes) -> Result<KeyValue, StoreError> {
        self.etcd.create(key, value).await
    }
    async fn update(&self, key: &str, value: Bytes, expected: Option<Revision>) -> Result<KeyValue, StoreError> {
        self.etcd.update(key, value, expected).await
    }
    async fn delete(&self, key: &str, expected: Option<Revision>) -> Result<Deleted, StoreError> {
        self.etcd.delete(key, expected).await
    }
    /// From the cache, or from etcd for a revision older than the cache's window (kube
    /// answers 410 there; etcd still has those changes unless it compacted them).
    async fn watch(&self, prefix: &str, after: Revision) -> Result<WatchStream, StoreError> {
        if !cache::covers(prefix) {
            return self.etcd.watch(prefix, after).await;
        }
        match self.cache.watch(prefix, after) {
            Err(StoreError::Expired { .. }) => self.etcd.watch(prefix, after).await,
            cached => cached,
        }
    }
    fn replays_at_once(&self, after: Revision) -> bool {
        self.cache.holds(after)
    }
    /// A probe of at most [`READY_PROBE`] (kube's two etcd checks take 2 s each with etcd
    /// down), or no probe while a call failed to reach etcd less than that ago. A recent
    /// success proves nothing about now: etcd may have gone since, and a probe of a live
    /// etcd takes a round trip.
    async fn ready(&self) -> bool {
        let grpc = &self.etcd.grpc;
        if grpc.health(READY_PROBE) == Some(false) {
            return false;
        }
        match tokio::time::timeout(READY_PROBE, self.etcd.current_revision()).await {
            Ok(answer) => answer.is_ok(),
            Err(_) => {
                grpc.note_health(false);
                false
            }
        }
    }
}

/// etcd itself, read and written directly (the cache's source, and every consistent read).
struct Etcd {
    grpc: Arc<Grpc>,
    keys: KeyMap,
}

impl Etcd {
    async fn txn(&self, txn: wire::Txn) -> Result<wire::TxnResponse, StoreError> {
        self.grpc.call(method::TXN, &txn).await.map_err(|e| store_error(e, 0))
    }

    /// Runs a guarded transaction; `repeated` says an earlier attempt may have applied it
    /// (see `client`): then a failed compare may be that attempt's own doing.
    async fn written_txn(&self, txn: wire::Txn) -> Result<Written<wire::TxnResponse>, StoreError> {
        self.grpc.write(method::TXN, &txn).await.map_err(|e| store_error(e, 0))
    }

    /// Runs `ops` if the key exists (at `expected` if given); else `NotFound` or `Conflict`,
    /// from the key as the failure branch read it. A failed compare after an attempt that
    /// may have applied (see `client`) is [`Guarded::Repeated`]: the caller tells whether
    /// that attempt was its own.
    async fn guarded(&self, key: &str, expected: Option<Revision>, ops: Vec<wire::Op>) -> Result<Guarded, StoreError> {
        let k = self.keys.etcd_key(key);
        let Written { answer: r, repeated } = self
            .written_txn(wire::Txn {
                compare: vec![Self::guard(&k, expected)],
                success: ops,
                failure: vec![wire::get(&k, true)],
            })
            .await?;
        if r.succeeded {
            return Ok(Guarded::Applied(r));
        }
        let error = match (r.first_kv(), expected) {
            (Some(kv), Some(expected)) => StoreError::Conflict { key: key.into(), expected, actual: kv.mod_revision },
            _ => StoreError::NotFound { key: key.into() },
        };
        if repeated { Ok(Guarded::Repeated(error)) } else { Err(error) }
    }

    /// A write guarded as `update` and `delete` are: the key exists, at `expected` if given.
    fn guard(key: &[u8], expected: Option<Revision>) -> wire::Compare {
        match expected {
            Some(rev) => wire::compare(key, Target::Mod, Cmp::Equal, rev),
            None => wire::compare(key, Target::Create, Cmp::NotEqual, 0),
        }
    }
}

/// A guarded write's outcome (see [`EtcdStore::guarded`]).
enum Guarded {
    Applied(wire::TxnResponse),
    /// The compare failed, after an attempt that may have applied.
    Repeated(StoreError),
}

/// The store's error for a failed call; `requested` is the revision a read asked for.
fn store_error(e: GrpcError, requested: Revision) -> StoreError {
    match e {
        GrpcError::Refused(words) if words.contains(wire::COMPACTED) => {
            // etcd does not say how far it compacted; anything above `requested` may be held.
            StoreError::Expired { requested, oldest: requested + 1 }
        }
        GrpcError::Refused(words) if words.contains(wire::TOO_LARGE) => StoreError::RequestTooLarge,
        e @ (GrpcError::Unreachable(_) | GrpcError::Timeout(_)) => StoreError::Unavailable(e.to_string()),
        e => StoreError::Backend(e.to_string()),
    }
}

#[async_trait]
impl Store for Etcd {
    async fn current_revision(&self) -> Result<Revision, StoreError> {
        // A count of one key that need not exist: only the header's revision is wanted.
        let range = wire::Range { count_only: true, ..wire::Range::key(self.keys.etcd_key(ENGINE_ROOT)) };
        let r: wire::RangeResponse = self.grpc.call(method::RANGE, &range).await.map_err(|e| store_error(e, 0))?;
        Ok(r.header.revision)
    }

    async fn get(&self, key: &str) -> Result<Option<KeyValue>, StoreError> {
        let range = wire::Range::key(self.keys.etcd_key(key));
        let r: wire::RangeResponse = self.grpc.call(method::RANGE, &range).await.map_err(|e| store_error(e, 0))?;
        Ok(r.kvs.into_iter().next().map(|kv| kv.into_key_value(key.to_string())))
    }

    async fn list(&self, prefix: &str, opts: &ListOptions) -> Result<ListPage, StoreError> {
        let etcd_prefix = self.keys.etcd_key(prefix);
        let start = opts.start_key.as_deref().map_or_else(|| etcd_prefix.clone(), |k| self.keys.etcd_key(k));
        let limit = opts.limit.filter(|&l| l > 0);
        let range = wire::Range {
            key: start,
            range_end: wire::prefix_end(&etcd_prefix),
            // One more than asked: its key is where the next page starts.
            limit: limit.map_or(0, |limit| limit as u64 + 1),
            revision: opts.revision.filter(|&r| r > 0).unwrap_or(0),
            ..wire::Range::default()
        };
        let requested = opts.revision.unwrap_or(0);
        let r: wire::RangeResponse = match self.grpc.call(method::RANGE, &range).await {
            Ok(r) => r,
            Err(GrpcError::Refused(words)) if words.contains(wire::FUTURE) => {
                let current = self.current_revision().await?;
                return Err(StoreError::TooLarge { requested, current });
            }
            Err(e) => return Err(store_error(e, requested)),
        };
        let revision = opts.revision.filter(|&r| r > 0).unwrap_or(r.header.revision);
        let mut items: Vec<KeyValue> = r
            .kvs
            .into_iter()
            .map(|kv| {
                let key = self.keys.engine_key(&kv.key);
                kv.into_key_value(key)
            })
            .collect();
        let next_key = match limit {
            Some(limit) if items.len() > limit => items.drain(limit..).next().map(|kv| kv.key),
            _ => None,
        };
        let remaining = r.count.saturating_sub(items.len() as u64);
        Ok(ListPage { items, revision, next_key, remaining })
    }

    async fn create(&self, key: &str, value: Bytes) -> Result<KeyValue, StoreError> {
        super::check_request_size(key, &value, None)?;
        let k = self.keys.etcd_key(key);
        let Written { answer: r, repeated } = self
            .written_txn(wire::Txn {
                compare: vec![wire::compare(&k, Target::Create, Cmp::Equal, 0)],
                success: vec![wire::put(&k, &value)],
                failure: vec![],
            })
            .await?;
        if !r.succeeded {
            // The compare lets at most one attempt apply; the same bytes (which hold the
            // object's uid) are that attempt's.
            if repeated && let Some(kv) = self.get(key).await?.filter(|kv| kv.value == value) {
                return Ok(kv);
            }
            return Err(StoreError::AlreadyExists { key: key.into() });
        }
        let rev = r.header.revision;
        Ok(KeyValue { key: key.into(), value, create_revision: rev, mod_revision: rev })
    }

    async fn update(&self, key: &str, value: Bytes, expected: Option<Revision>) -> Result<KeyValue, StoreError> {
        super::check_request_size(key, &value, Some(expected.unwrap_or_default()))?;
        let k = self.keys.etcd_key(key);
        // The key's create_revision, without its (possibly large) value, then the put.
        let r = match self.guarded(key, expected, vec![wire::get(&k, true), wire::put(&k, &value)]).await? {
            Guarded::Applied(r) => r,
            // The same bytes past the expected revision: the earlier attempt applied (the
            // compare lets only one attempt through).
            Guarded::Repeated(error) => {
                return match self.get(key).await? {
                    Some(kv) if kv.value == value && expected.is_none_or(|e| kv.mod_revision > e) => Ok(kv),
                    _ => Err(error),
                };
            }
        };
        let rev = r.header.revision;
        let created = r.first_kv().map_or(rev, |kv| kv.create_revision);
        Ok(KeyValue { key: key.into(), value, create_revision: created, mod_revision: rev })
    }

    async fn delete(&self, key: &str, expected: Option<Revision>) -> Result<Deleted, StoreError> {
        let k = self.keys.etcd_key(key);
        let r = match self.guarded(key, expected, vec![wire::delete(&k)]).await? {
            Guarded::Applied(r) => r,
            // Gone now, and it was at the expected revision: the earlier attempt deleted
            // it. Its value is read at that revision; the deletion's own revision is not
            // known any more, the current one stands in.
            Guarded::Repeated(StoreError::NotFound { .. }) if expected.is_some() => {
                let at = expected.unwrap_or_default();
                let opts = ListOptions { revision: Some(at), limit: Some(1), ..Default::default() };
                let page = self.list(key, &opts).await?;
                let prev = page.items.into_iter().find(|kv| kv.key == key && kv.mod_revision == at);
                let prev = prev.ok_or_else(|| StoreError::NotFound { key: key.into() })?;
                return Ok(Deleted { prev, revision: self.current_revision().await? });
            }
            Guarded::Repeated(error) => return Err(error),
        };
        let revision = r.header.revision;
        let prev = r
            .responses
            .into_iter()
            .find_map(|r| r.response_delete_range)
            .and_then(|d| d.prev_kvs.into_iter().next())
            .ok_or_else(|| StoreError::NotFound { key: key.into() })?;
        Ok(Deleted { prev: prev.into_key_value(key.into()), revision })
    }

    fn replays_at_once(&self, _after: Revision) -> bool {
        false
    }

    async fn watch(&self, prefix: &str, after: Revision) -> Result<WatchStream, StoreError> {
        self.changes(prefix, after, Previous::FromEtcd).await
    }
}

/// Where a watch's events get the values their keys held before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Previous {
    /// etcd sends them (it reads each one back: a range per update or delete).
    FromEtcd,
    /// The caller holds every key and fills them in itself (the watch cache): events come
    /// without them, an update's `prev` standing in as its current value and a delete's
    /// as an empty one.
    Held,
}

impl Etcd {
    /// Changes under `prefix` after `after`, with their previous values as `previous` says.
    async fn changes(&self, prefix: &str, after: Revision, previous: Previous) -> Result<WatchStream, StoreError> {
        let etcd_prefix = self.keys.etcd_key(prefix);
        let create = wire::WatchCreate {
            range_end: wire::prefix_end(&etcd_prefix),
            key: etcd_prefix,
            start_revision: after + 1,
            prev_kv: previous == Previous::FromEtcd,
        };
        let mut answers = Box::pin(self.grpc.watch(create).await.map_err(|e| store_error(e, after))?);
        // The first answer says the watch exists: from then on no change is missed.
        let first = tokio::time::timeout(self.grpc.timeout(), answers.next())
            .await
            .map_err(|_| StoreError::Unavailable("etcd did not start the watch in time".into()))?;
        match first {
            Some(Ok(r)) if r.created => {}
            Some(Ok(r)) => return Err(StoreError::Backend(format!("etcd refused the watch: {r:?}"))),
            Some(Err(e)) => return Err(store_error(e, after)),
            None => return Err(StoreError::Unavailable("etcd closed the watch".into())),
        }
        let keys = self.keys.clone();
        let events = answers.flat_map(move |answer| futures::stream::iter(decode_answer(&keys, answer, after)));
        // etcd going away may end the stream cleanly; for the engine only a closed store
        // ends a watch without an error.
        let end = futures::stream::once(async { Err(StoreError::Unavailable("etcd closed the watch".into())) });
        // An error ends the watch, without waiting for more (etcd keeps a canceled
        // watch's stream open).
        let until_error = futures::stream::unfold(Some(events.chain(end).boxed()), |events| async move {
            let mut events = events?;
            let item = events.next().await?;
            let rest = item.is_ok().then_some(events);
            Some((item, rest))
        });
        Ok(until_error.boxed())
    }
}

/// The store's events (or its one error, which ends the stream) from one watch answer.
fn decode_answer(
    keys: &KeyMap,
    answer: Result<wire::WatchResponse, GrpcError>,
    after: Revision,
) -> Vec<Result<Arc<WatchEvent>, StoreError>> {
    let result = match answer {
        Ok(result) => result,
        Err(e) => return vec![Err(store_error(e, after))],
    };
    if result.compact_revision > 0 {
        return vec![Err(StoreError::Expired { requested: after, oldest: result.compact_revision })];
    }
    if result.canceled {
        return vec![Err(StoreError::Unavailable(format!("etcd canceled the watch: {}", result.cancel_reason)))];
    }
    result.events.into_iter().map(|e| Ok(Arc::new(event(e, keys)))).collect()
}

/// One etcd event as the store's.
fn event(e: wire::Event, keys: &KeyMap) -> WatchEvent {
    let key = keys.engine_key(&e.kv.key);
    let revision = e.kv.mod_revision;
    let delete = e.delete;
    let created = e.kv.create_revision == e.kv.mod_revision;
    let prev = e.prev_kv.map(|kv| kv.into_key_value(key.clone()));
    if delete {
        // etcd leaves out the last value when it was compacted away: an empty one stands in.
        let prev = prev.unwrap_or(KeyValue {
            key: key.clone(),
            value: Bytes::new(),
            create_revision: e.kv.create_revision,
            mod_revision: revision,
        });
        return WatchEvent { revision, key, current: None, prev: Some(prev) };
    }
    let current = e.kv.into_key_value(key.clone());
    // An update whose previous value was compacted away still is an update, not a create.
    let prev = if created { None } else { prev.or_else(|| Some(current.clone())) };
    WatchEvent { revision, key, current: Some(current), prev }
}
