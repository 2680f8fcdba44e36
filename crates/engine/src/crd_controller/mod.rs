//! The CRD controllers (kube's naming, establishing and finalizer controllers) as one
//! thin loop over a queue of CRD names: read, decide (pure, in `registry`), write.
//!
//! Like a kube informer, it lists the CRDs once and then follows the store's watch; a
//! change queues the CRD and every CRD of its group ([`cache`]). A round over the queue,
//! oldest first (so the first registration keeps a contested name), adds the cleanup
//! finalizer, settles accepted names, `NamesAccepted` and `Established`, runs clean-ups
//! (`Terminating`, custom resources deleted, finalizer dropped), and publishes what each CRD
//! serves to the routing table ahead of the write that announces it (`Established`, or the
//! CRD gone), so whoever sees the announcement finds the routes already changed. Work is
//! per change: with N CRDs arriving one by one, a round over all N after each was the
//! quadratic cost issue 31 measured. A restart, or a watch that fell behind, lists again
//! and looks at every CRD, so unfinished clean-ups resume from what is stored.
//!
//! With several replicas on one etcd ([`Replicas`]) every replica publishes, but only the
//! leader writes; a newly accepted CRD stays `Established=False/Installing` (and routed)
//! until every live replica reports serving it, and the leader looks at it again when one
//! does.

mod cache;
mod clean_up;
mod publish;
mod sync;

use crate::coordination::Replicas;
use crate::kinds::Kinds;
use crate::resources::Strategy;
use crate::resources::crds::CrdStrategy;
use crate::store::{ListOptions, Revision, Store, StoreError, WatchEvent, WatchStream};
use cache::{Applied, Cache};
use futures::{FutureExt, StreamExt};
use std::sync::Arc;

/// How often the leader looks again at the replicas' reports while a CRD installs, should
/// a report's change have been missed (etcd unreadable when it came).
const INSTALL_RECHECK: std::time::Duration = std::time::Duration::from_secs(1);

/// Runs the loop until the store closes. `passed` is told after each round the revision up
/// to which CRDs were read and their kinds published: after the first one, an engine
/// opened over existing data serves them; after a CRD write, its change is served once
/// `passed` reaches the write's revision. Only the leader of `replicas` writes.
pub async fn run(
    store: Arc<dyn Store>,
    kinds: Arc<Kinds>,
    passed: tokio::sync::watch::Sender<Option<Revision>>,
    replicas: Replicas,
) {
    let strategy = CrdStrategy::default();
    let mut cache = Cache::new(strategy.info().prefix());
    let mut leading = replicas.leading();
    loop {
        // List, then follow the watch from the list's revision.
        let (mut at, mut changes) = match list_and_watch(store.as_ref(), &kinds, &mut cache).await {
            Ok(started) => started,
            Err(StoreError::Closed) => return,
            // etcd is down, or more was written since the list than the history holds.
            Err(_) => {
                tokio::time::sleep(crate::store::RETRY_PAUSE).await;
                continue;
            }
        };
        loop {
            let leader = leading.borrow_and_update().then_some(&replicas);
            let left = sync::round(store.as_ref(), &strategy, &kinds, leader, &mut cache).await;
            passed.send_replace(Some(at));
            replicas.report_served(at);
            let waiting = Waiting {
                cleaning: leader.is_some() && cache.cleaning(),
                installing: leader.is_some() && cache.installing(),
                retry: left.retry,
            };
            match wait(&mut changes, &mut leading, &replicas, &mut cache, &kinds, waiting).await {
                Woken::At(revision) => at = at.max(revision),
                Woken::Relist => break,
                Woken::Closed => return,
            }
        }
    }
}

/// Lists the CRDs into `cache` (the gone ones serve nothing), and watches from there.
async fn list_and_watch(
    store: &dyn Store,
    kinds: &Kinds,
    cache: &mut Cache,
) -> Result<(Revision, WatchStream), StoreError> {
    let prefix = CrdStrategy::default().info().prefix();
    let page = store.list(&prefix, &ListOptions::default()).await?;
    // Watch all of `/registry/`: custom resources let clean-ups go on, and the replicas'
    // reports let installing CRDs be established.
    let changes = store.watch("/registry/", page.revision).await?;
    cache.relist(page.items);
    for known in kinds.custom_names().into_iter().chain(kinds.registered_names()) {
        if !cache.contains(&known) {
            kinds.set_custom(&known, Vec::new());
            kinds.set_registered(&known, None);
        }
    }
    Ok((page.revision, changes))
}

/// What a round left to wait for, beside changes to CRDs.
#[derive(Debug, Default, Clone, Copy)]
struct Waiting {
    /// A clean-up is under way (custom resources with finalizers of their own).
    cleaning: bool,
    /// A CRD is installing: not every replica serves it yet.
    installing: bool,
    /// A write failed: the next round comes after a pause in any case.
    retry: bool,
}

/// Why the wait ended.
enum Woken {
    /// Changes up to this revision are in the cache and queued.
    At(Revision),
    /// The watch failed: list again.
    Relist,
    /// The store is closed.
    Closed,
}

/// Waits until something is queued, then takes in every change already delivered (a burst
/// of CRDs is one round, not one per CRD).
async fn wait(
    changes: &mut WatchStream,
    leading: &mut tokio::sync::watch::Receiver<bool>,
    replicas: &Replicas,
    cache: &mut Cache,
    kinds: &Kinds,
    waiting: Waiting,
) -> Woken {
    // Set once: a stream of other changes must not keep putting it off.
    let recheck = tokio::time::sleep(INSTALL_RECHECK);
    tokio::pin!(recheck);
    let retry = tokio::time::sleep(crate::store::RETRY_PAUSE);
    tokio::pin!(retry);
    let mut at = 0;
    let take_in = |change: Option<Result<Arc<WatchEvent>, StoreError>>, cache: &mut Cache, at: &mut Revision| {
        let event = match change {
            Some(Ok(event)) => event,
            Some(Err(_)) => return Err(Woken::Relist),
            None => return Err(Woken::Closed),
        };
        *at = event.revision;
        Ok(match cache.apply(&event) {
            Applied::Stored => true,
            Applied::Gone(name) => {
                kinds.set_custom(&name, Vec::new());
                kinds.set_registered(&name, None);
                true
            }
            Applied::Other if waiting.cleaning => {
                cache.queue_cleaning();
                true
            }
            // Another replica serves more: an installing CRD may be established.
            Applied::Other if waiting.installing && replicas.is_others_report(&event.key) => {
                cache.queue_installing();
                true
            }
            Applied::Other => false,
        })
    };
    loop {
        tokio::select! {
            change = changes.next() => match take_in(change, cache, &mut at) {
                Ok(true) => break,
                Ok(false) => {}
                Err(woken) => return woken,
            },
            // Coming to lead, or ceasing to: the next round writes, or only publishes.
            Ok(()) = leading.changed() => {
                cache.queue_all();
                return Woken::At(at);
            }
            // The replicas' reports could not be read: look again.
            _ = &mut recheck, if waiting.installing => {
                cache.queue_installing();
                return Woken::At(at);
            }
            _ = &mut retry, if waiting.retry => return Woken::At(at),
        }
    }
    // Take in what is already there, without waiting.
    while let Some(change) = changes.next().now_or_never() {
        if let Err(woken) = take_in(change, cache, &mut at) {
            return woken;
        }
    }
    Woken::At(at)
}
