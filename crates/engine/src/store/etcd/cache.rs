//! One replica's watch cache, as kube-apiserver's cacher keeps one: every current key under
//! the prefix and a bounded window of the latest changes, fed by a single etcd watch.
//!
//! One watch of the whole prefix rather than one per resource: the engine's own controllers
//! (CRD, garbage collector) watch everything anyway, the kinds come and go with CRDs (no
//! watch to start or stop with them), and etcd keeps one watcher per watch, each
//! replaying and filtering every change on its own. The cache is the local store's [`State`] (the same history, the
//! same bounds, the same watch cursors), so lists at `resourceVersion=0` and every watch
//! are served from memory the way a local store serves them, whatever the number of
//! watchers: each one holds a cursor, not an etcd stream.
//!
//! The feed resumes where it stopped when etcd goes away and comes back: no change is lost
//! and the client watches stay open. Only when etcd compacted the revisions it missed
//! meanwhile does it read everything afresh; the new state has no history before its
//! revision, so every client watch behind it ends with `Expired` (410 Gone), as kube's.

use super::super::state::State;
use super::super::{HistoryLimit, KeyValue, ListOptions, ListPage, Revision, Store, StoreError, WatchStream};
use super::{Etcd, Previous};
use futures::StreamExt;
use futures::future::FutureExt as _;
use std::sync::{Arc, RwLock};
use tokio::sync::watch;

/// Every engine key starts with it.
const ROOT: &str = "/registry/";
/// Keys read per page while the cache fills.
const PAGE: usize = 500;

/// Whether the cache holds the keys under `prefix` (every engine key; not others, which
/// only tests write).
pub fn covers(prefix: &str) -> bool {
    prefix.starts_with(ROOT)
}

/// The cache of one replica; the feed stops when it is dropped.
pub struct WatchCache {
    state: Arc<RwLock<State>>,
    revisions: watch::Receiver<Revision>,
    feed: tokio::task::JoinHandle<()>,
}

impl Drop for WatchCache {
    fn drop(&mut self) {
        self.feed.abort();
    }
}

impl WatchCache {
    /// Reads everything under the prefix from `etcd`, then follows its changes.
    pub async fn start(etcd: Arc<Etcd>, limit: HistoryLimit) -> Result<Self, StoreError> {
        let initial = fill(&etcd, limit).await?;
        let revision = initial.revision();
        let state = Arc::new(RwLock::new(initial));
        let (tx, revisions) = watch::channel(revision);
        let feed = tokio::spawn(feed(etcd, Arc::clone(&state), tx, limit));
        Ok(WatchCache { state, revisions, feed })
    }

    /// The revision the cache has reached.
    pub fn revision(&self) -> Result<Revision, StoreError> {
        Ok(self.read()?.revision())
    }

    /// Whether changes after `after` are in the cache (else a watch asks etcd).
    pub fn holds(&self, after: Revision) -> bool {
        self.read().is_ok_and(|s| s.check_watchable(after).is_ok())
    }

    /// The key as the cache holds it now.
    pub fn get(&self, key: &str) -> Result<Option<KeyValue>, StoreError> {
        Ok(self.read()?.get(key).cloned())
    }

    /// A page as the cache holds it now (or at a revision of its window).
    pub fn list(&self, prefix: &str, opts: &ListOptions) -> Result<ListPage, StoreError> {
        self.read()?.list(prefix, opts)
    }

    /// Changes under `prefix` after `after`, from the cache's window.
    pub fn watch(&self, prefix: &str, after: Revision) -> Result<WatchStream, StoreError> {
        self.read()?.check_watchable(after)?;
        Ok(super::super::watch::stream(Arc::clone(&self.state), self.revisions.clone(), prefix.to_string(), after))
    }

    /// Waits until the cache has reached `revision`, at most `wait`; the revision reached.
    #[cfg(test)]
    pub async fn reach(&self, revision: Revision, wait: std::time::Duration) -> Revision {
        let mut revisions = self.revisions.clone();
        let _ = tokio::time::timeout(wait, revisions.wait_for(|r| *r >= revision)).await;
        *revisions.borrow()
    }

    fn read(&self) -> Result<std::sync::RwLockReadGuard<'_, State>, StoreError> {
        self.state.read().map_err(|_| StoreError::Backend("watch cache lock poisoned".into()))
    }
}

/// Everything under the prefix at one revision, as a state with no history before it.
async fn fill(etcd: &Etcd, limit: HistoryLimit) -> Result<State, StoreError> {
    let mut opts = ListOptions { limit: Some(PAGE), ..Default::default() };
    let mut items: Vec<KeyValue> = Vec::new();
    loop {
        let page = etcd.list(ROOT, &opts).await?;
        items.extend(page.items);
        opts.revision = Some(page.revision);
        match page.next_key {
            Some(next) => opts.start_key = Some(next),
            None => {
                let mut state = State::new(page.revision, limit);
                for kv in items {
                    state.insert_loaded(kv);
                }
                return Ok(state);
            }
        }
    }
}

/// Follows etcd from the cache's revision on, for as long as the cache lives.
async fn feed(etcd: Arc<Etcd>, state: Arc<RwLock<State>>, tx: watch::Sender<Revision>, limit: HistoryLimit) {
    loop {
        let Ok(after) = state.read().map(|s| s.revision()) else { return };
        let changes = match etcd.changes(ROOT, after, Previous::Held).await {
            Ok(changes) => changes,
            Err(StoreError::Expired { .. }) => {
                refill(&etcd, &state, &tx, limit).await;
                continue;
            }
            Err(e) => {
                tracing::debug!("watch cache: etcd watch from {after}: {e}");
                tokio::time::sleep(crate::store::RETRY_PAUSE).await;
                continue;
            }
        };
        match follow(changes, &state, &tx).await {
            Err(StoreError::Expired { .. }) => refill(&etcd, &state, &tx, limit).await,
            Err(StoreError::Backend(e)) => {
                tracing::error!("watch cache: {e}");
                return;
            }
            // etcd went away: resume from the last change taken in once it is back.
            _ => tokio::time::sleep(crate::store::RETRY_PAUSE).await,
        }
    }
}

/// Applies the changes of one etcd watch until it ends; why it ended.
async fn follow(
    mut changes: WatchStream,
    state: &RwLock<State>,
    tx: &watch::Sender<Revision>,
) -> Result<(), StoreError> {
    while let Some(first) = changes.next().await {
        let mut batch = vec![first?];
        // Whatever else has arrived goes in under the same lock, and wakes watchers once.
        while let Some(Some(more)) = changes.next().now_or_never() {
            batch.push(more?);
        }
        let revision = {
            let mut state = state.write().map_err(|_| StoreError::Backend("watch cache lock poisoned".into()))?;
            // In revision order; a resumed watch starts after the last one applied. (A
            // transaction of several keys, which only other writers of the etcd make, gives
            // several events one revision.)
            for event in batch {
                let mut event = Arc::unwrap_or_clone(event);
                // etcd sends the cache no previous values (each would cost it a read): the
                // cache holds every key, as it was before this change.
                if let Some(prev) = state.get(&event.key) {
                    event.prev = Some(prev.clone());
                }
                state.apply(event);
            }
            state.revision()
        };
        tx.send_replace(revision);
    }
    Err(StoreError::Unavailable("etcd closed the watch".into()))
}

/// Reads everything afresh after etcd compacted changes the cache had not taken in; every
/// watch behind the new revision then ends with `Expired`.
async fn refill(etcd: &Etcd, state: &RwLock<State>, tx: &watch::Sender<Revision>, limit: HistoryLimit) {
    loop {
        match fill(etcd, limit).await {
            Ok(fresh) => {
                let revision = fresh.revision();
                if let Ok(mut state) = state.write() {
                    tracing::warn!("watch cache: etcd compacted past {}; read again at {revision}", state.revision());
                    *state = fresh;
                }
                tx.send_replace(revision);
                return;
            }
            Err(e) => {
                tracing::debug!("watch cache: refill: {e}");
                tokio::time::sleep(crate::store::RETRY_PAUSE).await;
            }
        }
    }
}
