//! kube's NamespaceLifecycle admission for creates: a namespace must exist and not be
//! terminating. What it owns is where the namespace is read from.
//!
//! kube reads the namespace from its informer and goes to storage only when the informer
//! does not know it (a namespace just created, perhaps through another apiserver) or when
//! this apiserver deleted it lately and the informer still says Active. The engine reads its
//! store's watch cache the same way (on etcd, the replica's cache; on local storage the
//! store is its own cache), so a create costs etcd one round trip, its write, as kube's does.
//! kube first sleeps 50 ms and asks its informer again before the live read; the engine
//! reads at once, which gives the same answer sooner.

use crate::status::{ApiError, GroupResource, StatusCause, StatusDetails};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a namespace deleted through this engine is read live (kube's `forceLiveLookupTTL`).
const LIVE_AFTER_DELETE: Duration = Duration::from_secs(30);
/// How many such namespaces are remembered (kube's LRU holds 100).
const REMEMBERED: usize = 100;

/// Where the admission reads a namespace from, given what the cache holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The cached object decides.
    Cache,
    /// The store itself must be read.
    Live,
}

/// The namespaces deleted through this engine lately, whose cached state may be stale.
#[derive(Default)]
pub struct RecentDeletes {
    at: Mutex<HashMap<String, Instant>>,
}

impl RecentDeletes {
    /// Records that `ns` was deleted through this engine at `now`.
    pub fn record(&self, ns: &str, now: Instant) {
        let mut at = self.at.lock().unwrap_or_else(|e| e.into_inner());
        at.retain(|_, when| now.duration_since(*when) < LIVE_AFTER_DELETE);
        if at.len() >= REMEMBERED
            && let Some(oldest) = at.iter().min_by_key(|(_, when)| **when).map(|(k, _)| k.clone())
        {
            at.remove(&oldest);
        }
        at.insert(ns.to_string(), now);
    }

    /// Whether `ns` was deleted through this engine less than kube's TTL before `now`.
    pub fn holds(&self, ns: &str, now: Instant) -> bool {
        let at = self.at.lock().unwrap_or_else(|e| e.into_inner());
        at.get(ns).is_some_and(|when| now.duration_since(*when) < LIVE_AFTER_DELETE)
    }
}

/// Where to read the namespace from: the cache, unless it does not know it, or it says
/// Active while this engine deleted it lately.
pub fn source(cached: Option<&[u8]>, deleted_here: bool) -> Source {
    match cached {
        None => Source::Live,
        Some(ns) if deleted_here && !terminating(ns) => Source::Live,
        Some(_) => Source::Cache,
    }
}

/// Whether the namespace stored as `ns` is being deleted: it has a deletion timestamp.
pub fn terminating(ns: &[u8]) -> bool {
    let at = crate::representation::raw::get_path(ns, &["metadata", "deletionTimestamp"]);
    at.is_some_and(|at| at.first() == Some(&b'"'))
}

/// kube's 403 for content created in a terminating namespace.
pub fn terminating_refusal(ns: &str, creating: &GroupResource, name: &str) -> ApiError {
    let mut e = ApiError::new(
        403,
        "Forbidden",
        format!(
            "{} {name:?} is forbidden: unable to create new content in namespace {ns} because it is being terminated",
            creating.qualified()
        ),
    );
    e.details = Some(Box::new(StatusDetails {
        name: Some(name.to_string()),
        // Go's `omitempty`: a core kind's Status names no group.
        group: Some(creating.group.clone()).filter(|g| !g.is_empty()),
        kind: Some(creating.resource.clone()),
        causes: vec![StatusCause {
            reason: Some("NamespaceTerminating".into()),
            message: Some(format!("namespace {ns} is being terminated")),
            field: Some("metadata.namespace".into()),
        }],
        ..Default::default()
    }));
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn active() -> Vec<u8> {
        stored(json!({"metadata": {"name": "a"}, "status": {"phase": "Active"}}))
    }

    fn deleting() -> Vec<u8> {
        stored(json!({"metadata": {"name": "a", "deletionTimestamp": "2026-01-01T00:00:00Z"}}))
    }

    fn stored(ns: Value) -> Vec<u8> {
        serde_json::to_vec(&ns).expect("JSON")
    }

    #[test]
    fn a_namespace_terminates_once_it_has_a_deletion_timestamp() {
        assert!(terminating(&deleting()));
        assert!(!terminating(&active()));
        // Another member of that name elsewhere, or a null one, is not one.
        let elsewhere = json!({"metadata": {"name": "a", "annotations": {"deletionTimestamp": "x"}},
            "status": {"deletionTimestamp": "2026-01-01T00:00:00Z"}});
        assert!(!terminating(&stored(elsewhere)));
        assert!(!terminating(&stored(json!({"metadata": {"name": "a", "deletionTimestamp": null}}))));
    }

    #[test]
    fn the_cache_decides_unless_it_misses_or_may_be_stale() {
        let cases = [
            (None, false, Source::Live),
            (None, true, Source::Live),
            (Some(active()), false, Source::Cache),
            (Some(active()), true, Source::Live),
            (Some(deleting()), false, Source::Cache),
            (Some(deleting()), true, Source::Cache),
        ];
        for (cached, deleted_here, want) in cases {
            assert_eq!(source(cached.as_deref(), deleted_here), want, "{cached:?} deleted here: {deleted_here}");
        }
    }

    #[test]
    fn deletes_are_remembered_for_kubes_ttl_and_bounded() {
        let recent = RecentDeletes::default();
        let t0 = Instant::now();
        recent.record("a", t0);
        assert!(recent.holds("a", t0 + Duration::from_secs(29)));
        assert!(!recent.holds("a", t0 + LIVE_AFTER_DELETE));
        assert!(!recent.holds("b", t0));
        for i in 0..=REMEMBERED {
            recent.record(&format!("n{i}"), t0 + Duration::from_millis(i as u64 + 1));
        }
        assert!(!recent.holds("a", t0 + Duration::from_secs(1)), "the oldest goes first");
        assert!(recent.holds(&format!("n{REMEMBERED}"), t0 + Duration::from_secs(1)));
    }
}
