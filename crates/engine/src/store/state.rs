//! The in-memory state of a [`LocalStore`](super::LocalStore): every current key, and a
//! bounded history of the latest changes.
//!
//! Pure data and logic, no IO: the committer applies durable batches here, and readers
//! serve get, list and watch from it. The history is what makes two things possible
//! without a multi-version store: watches from a past revision, and lists *at* a past
//! revision (a paged list reads every page at the first page's revision) — a past state is
//! the current one with the newer changes undone. The history is in revision order, so a
//! revision is found in it by binary search; revisions need not be contiguous (the etcd
//! backend's watch cache sees none of those written outside its prefix).
//!
//! The current keys are a persistent ordered set (`imbl::OrdSet`: a B-tree whose nodes are
//! shared between copies and copied on write), so [`State::snapshot`] is O(1) whatever the
//! number of keys, and a store forked from it pays only for the nodes it changes. Each
//! entry is a [`KeyValue`] ordered by its key ([`Item`]): the key is held once, not once
//! as the map's key and again in the value (90 MiB at a million keys). The entry is a
//! pointer: keys stored in order leave imbl's leaves about half full, and a half-empty slot
//! of a pointer costs 8 bytes where one of a `KeyValue` cost 72; a branch's copy of a key
//! is a pointer too.

use super::counts::{Continuations, DirectoryCounts};
use super::{HistoryLimit, HistoryStats, KeyValue, ListOptions, ListPage, Revision, StoreError, WatchEvent};
use imbl::OrdSet;
use std::borrow::Borrow;
use std::cmp::Ordering;
use std::collections::{BTreeMap, VecDeque};
use std::ops::Bound;
use std::sync::{Arc, Mutex};

#[derive(Debug)]
pub struct State {
    revision: Revision,
    /// Changes at revisions up to and including this one are no longer in `history`.
    compacted: Revision,
    items: OrdSet<Item>,
    /// How many of `items` each directory holds: a first page's remaining count.
    counts: DirectoryCounts,
    /// The remaining counts of pages handed out: the next page's, without a walk. Readers
    /// share the state, so this one piece of it is behind a lock of its own.
    continuations: Mutex<Continuations>,
    history: VecDeque<Arc<WatchEvent>>,
    /// What `history` holds, as [`event_bytes`] counts it.
    history_bytes: usize,
    limit: HistoryLimit,
}

/// A stored key's entry in the current keys, ordered and found by its key alone.
#[derive(Debug, Clone)]
pub(super) struct Item(Arc<KeyValue>);

impl PartialEq for Item {
    fn eq(&self, other: &Self) -> bool {
        self.0.key == other.0.key
    }
}

impl Eq for Item {}

impl PartialOrd for Item {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Item {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.key.cmp(&other.0.key)
    }
}

impl Borrow<str> for Item {
    fn borrow(&self) -> &str {
        &self.0.key
    }
}

impl State {
    /// An empty state at `revision` (the revision a durable backend loaded), with no
    /// history before it.
    pub fn new(revision: Revision, limit: HistoryLimit) -> Self {
        State {
            revision,
            compacted: revision,
            items: OrdSet::new(),
            counts: DirectoryCounts::default(),
            continuations: Mutex::default(),
            history: VecDeque::new(),
            history_bytes: 0,
            limit,
        }
    }

    /// A state holding what `snapshot` holds, at its revision, with no history before it.
    pub fn from_snapshot(snapshot: &super::Snapshot, limit: HistoryLimit) -> Self {
        State { items: snapshot.items.clone(), counts: snapshot.counts.clone(), ..State::new(snapshot.revision, limit) }
    }

    /// The current keys at the current revision, sharing every node with this state (O(1)).
    pub fn snapshot(&self) -> super::Snapshot {
        super::Snapshot { items: self.items.clone(), counts: self.counts.clone(), revision: self.revision }
    }

    /// Adds a key read from durable storage at start-up.
    pub fn insert_loaded(&mut self, kv: KeyValue) {
        if !self.items.contains(kv.key.as_str()) {
            self.counts.add(&kv.key);
        }
        self.items.insert(Item(Arc::new(kv)));
    }

    pub fn revision(&self) -> Revision {
        self.revision
    }

    pub fn get(&self, key: &str) -> Option<&KeyValue> {
        self.items.get(key).map(|item| &*item.0)
    }

    /// Applies one committed change. The committer (or the watch cache) calls this in
    /// revision order.
    pub fn apply(&mut self, event: WatchEvent) {
        debug_assert!(event.revision >= self.revision);
        match &event.current {
            Some(kv) => {
                if self.items.insert(Item(Arc::new(kv.clone()))).is_none() {
                    self.counts.add(&event.key);
                }
            }
            None => {
                if self.items.remove(event.key.as_str()).is_some() {
                    self.counts.remove(&event.key);
                }
            }
        }
        self.revision = event.revision;
        self.history_bytes += event_bytes(&event);
        self.history.push_back(Arc::new(event));
        // The oldest changes go first, as etcd compacts; a watch or list from before them
        // is then `Expired`, whichever bound evicted them.
        while self.history.len() > self.limit.events.max(1) || self.history_bytes > self.limit.bytes {
            let Some(dropped) = self.history.pop_front() else { break };
            self.history_bytes -= event_bytes(&dropped);
            self.compacted = dropped.revision;
        }
    }

    /// What the history holds now.
    pub fn history_stats(&self) -> HistoryStats {
        HistoryStats { events: self.history.len(), bytes: self.history_bytes, oldest: self.compacted + 1 }
    }

    /// Whether changes after `after` are all still held.
    pub fn check_watchable(&self, after: Revision) -> Result<(), StoreError> {
        if after < self.compacted {
            return Err(StoreError::Expired { requested: after, oldest: self.compacted + 1 });
        }
        Ok(())
    }

    /// Up to `max` changes after `after` whose key starts with `prefix`, and the revision
    /// scanned up to (so the caller resumes from there even if nothing matched).
    pub fn events_after(
        &self,
        prefix: &str,
        after: Revision,
        max: usize,
    ) -> Result<(Vec<Arc<WatchEvent>>, Revision), StoreError> {
        self.check_watchable(after)?;
        let start = self.history.partition_point(|e| e.revision <= after);
        let mut out = Vec::new();
        let mut scanned = after;
        for event in self.history.iter().skip(start) {
            scanned = event.revision;
            if event.key.starts_with(prefix) {
                out.push(Arc::clone(event));
                if out.len() >= max {
                    break;
                }
            }
        }
        Ok((out, scanned))
    }

    /// A page of keys under `prefix`, read at `opts.revision` (default: latest).
    pub fn list(&self, prefix: &str, opts: &ListOptions) -> Result<ListPage, StoreError> {
        let at = opts.revision.unwrap_or(self.revision);
        if at > self.revision {
            return Err(StoreError::TooLarge { requested: at, current: self.revision });
        }
        if at < self.compacted {
            return Err(StoreError::Expired { requested: at, oldest: self.compacted + 1 });
        }
        let continued = opts.start_key.as_deref().filter(|k| *k > prefix);
        let start = continued.unwrap_or(prefix).to_string();
        let limit = opts.limit.filter(|l| *l > 0).unwrap_or(usize::MAX);
        let undo = self.undo_since(prefix, at);
        let current = self
            .items
            .range::<_, str>((Bound::Included(start.as_str()), Bound::Unbounded))
            .map(|item| &*item.0)
            .take_while(|kv| kv.key.starts_with(prefix))
            .filter(|kv| !undo.contains_key(kv.key.as_str()))
            .map(|kv| (kv.key.as_str(), Some(kv)));
        let past = undo.range::<str, _>((Bound::Included(start.as_str()), Bound::Unbounded)).map(|(k, v)| (*k, *v));
        let mut merged = merge_sorted(current, past).filter_map(|(_, v)| v);

        // The keys from `start` on, if known without a walk: a first page at the current
        // revision from the directory's count, a next page from what its previous page left.
        let from_start = match continued {
            None if at == self.revision => self.counts.under(prefix),
            None => None,
            Some(start) => self.continuations().from(prefix, at, start),
        };
        // Sized once when known: a whole list of a million keys would otherwise grow its
        // vector by doubling, up to twice what it needs.
        let mut items = Vec::with_capacity(from_start.map_or(0, |n| (n as usize).min(limit)));
        for kv in merged.by_ref() {
            items.push(kv.clone());
            if items.len() >= limit {
                break;
            }
        }
        let mut rest = merged.peekable();
        let Some(next_key) = rest.peek().map(|kv| kv.key.clone()) else {
            return Ok(ListPage { items, revision: at, next_key: None, remaining: 0 });
        };
        let remaining = match from_start {
            Some(n) => n.saturating_sub(items.len() as u64),
            None => rest.count() as u64,
        };
        // A next page starts at `next_key`, or just after the last key (the engine's
        // continue tokens say "after this name").
        let mut continuations = self.continuations();
        continuations.remember(prefix, at, &next_key, remaining);
        if let Some(last) = items.last() {
            continuations.remember(prefix, at, &format!("{}\0", last.key), remaining);
        }
        Ok(ListPage { items, revision: at, next_key: Some(next_key), remaining })
    }

    fn continuations(&self) -> std::sync::MutexGuard<'_, Continuations> {
        // What it holds is a cache: a panic elsewhere leaves nothing half-written that matters.
        self.continuations.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// For each key under `prefix` changed after `at`, its value at `at` (`None`: absent).
    fn undo_since<'a>(&'a self, prefix: &str, at: Revision) -> BTreeMap<&'a str, Option<&'a KeyValue>> {
        let mut undo = BTreeMap::new();
        if at == self.revision {
            return undo;
        }
        // Newest first, so the value left for a key is the `prev` of its oldest change after `at`.
        for event in self.history.iter().rev().take_while(|e| e.revision > at) {
            if event.key.starts_with(prefix) {
                undo.insert(event.key.as_str(), event.prev.as_ref());
            }
        }
        undo
    }
}

/// The memory one change holds, counted as if nothing were shared: its key (three copies:
/// the event's and each value's), both values and the event itself. Values are in fact
/// shared (a change's `prev` is the `current` of the key's change before), so the history
/// holds at most this much, and usually about half.
fn event_bytes(event: &WatchEvent) -> usize {
    let value = |kv: &Option<KeyValue>| kv.as_ref().map_or(0, |kv| kv.key.len() + kv.value.len());
    std::mem::size_of::<WatchEvent>() + event.key.len() + value(&event.current) + value(&event.prev)
}

/// Merges two iterators sorted by key with disjoint keys.
fn merge_sorted<'a, A, B, V>(a: A, b: B) -> impl Iterator<Item = (&'a str, V)>
where
    A: Iterator<Item = (&'a str, V)>,
    B: Iterator<Item = (&'a str, V)>,
{
    let mut a = a.peekable();
    let mut b = b.peekable();
    std::iter::from_fn(move || match (a.peek(), b.peek()) {
        (Some((ka, _)), Some((kb, _))) => {
            if ka <= kb {
                a.next()
            } else {
                b.next()
            }
        }
        (Some(_), None) => a.next(),
        (None, _) => b.next(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn limit(events: usize) -> HistoryLimit {
        HistoryLimit { events, bytes: usize::MAX }
    }

    fn kv(key: &str, value: &str, created: Revision, modified: Revision) -> KeyValue {
        KeyValue {
            key: key.into(),
            value: Bytes::from(value.to_string()),
            create_revision: created,
            mod_revision: modified,
        }
    }

    fn put(state: &mut State, key: &str, value: &str) {
        let rev = state.revision() + 1;
        let prev = state.get(key).cloned();
        let created = prev.as_ref().map_or(rev, |p| p.create_revision);
        state.apply(WatchEvent { revision: rev, key: key.into(), current: Some(kv(key, value, created, rev)), prev });
    }

    fn del(state: &mut State, key: &str) {
        let rev = state.revision() + 1;
        let prev = state.get(key).cloned();
        state.apply(WatchEvent { revision: rev, key: key.into(), current: None, prev });
    }

    fn keys_at(state: &State, at: Option<Revision>) -> Vec<(String, String)> {
        let page = state.list("/a/", &ListOptions { revision: at, ..Default::default() }).expect("list");
        page.items.into_iter().map(|kv| (kv.key, String::from_utf8_lossy(&kv.value).into_owned())).collect()
    }

    #[test]
    fn list_at_past_revision_undoes_newer_changes() {
        let mut s = State::new(0, limit(100));
        put(&mut s, "/a/1", "one"); // 1
        put(&mut s, "/a/2", "two"); // 2
        put(&mut s, "/b/1", "other"); // 3
        put(&mut s, "/a/1", "uno"); // 4
        del(&mut s, "/a/2"); // 5
        put(&mut s, "/a/0", "zero"); // 6
        assert_eq!(keys_at(&s, None), vec![("/a/0".into(), "zero".into()), ("/a/1".into(), "uno".into())]);
        assert_eq!(keys_at(&s, Some(3)), vec![("/a/1".into(), "one".into()), ("/a/2".into(), "two".into())]);
        assert_eq!(keys_at(&s, Some(1)), vec![("/a/1".into(), "one".into())]);
        assert_eq!(keys_at(&s, Some(0)), vec![]);
    }

    #[test]
    fn history_is_bounded_and_old_revisions_expire() {
        let mut s = State::new(0, limit(3));
        for i in 0..5 {
            put(&mut s, &format!("/a/{i}"), "v");
        }
        assert_eq!(
            s.list("/a/", &ListOptions { revision: Some(1), ..Default::default() }),
            Err(StoreError::Expired { requested: 1, oldest: 3 })
        );
        assert!(s.list("/a/", &ListOptions { revision: Some(2), ..Default::default() }).is_ok());
        assert!(matches!(s.events_after("/a/", 1, 10), Err(StoreError::Expired { .. })));
        let (events, scanned) = s.events_after("/a/", 2, 10).expect("events");
        assert_eq!(events.iter().map(|e| e.revision).collect::<Vec<_>>(), vec![3, 4, 5]);
        assert_eq!(scanned, 5);
    }

    #[test]
    fn history_is_bounded_by_bytes_as_well_as_count() {
        let mut s = State::new(0, HistoryLimit { events: 1000, bytes: 20_000 });
        let big = "x".repeat(1000);
        for _ in 0..100 {
            put(&mut s, "/a/1", &big);
        }
        let stats = s.history_stats();
        assert!(stats.bytes <= 20_000, "{stats:?}");
        assert!(stats.events > 5 && stats.events < 100, "{stats:?}");
        assert_eq!(stats.oldest, 101 - stats.events as Revision, "the newest changes stay: {stats:?}");
        assert!(matches!(s.events_after("/a/", stats.oldest - 2, 10), Err(StoreError::Expired { .. })));
        let (events, _) = s.events_after("/a/", stats.oldest - 1, 1000).expect("held");
        assert_eq!(events.len(), stats.events);
    }

    #[test]
    fn pages_report_next_key_and_remaining() {
        let mut s = State::new(0, limit(100));
        for i in 0..5 {
            put(&mut s, &format!("/a/{i}"), "v");
        }
        let page = s.list("/a/", &ListOptions { limit: Some(2), ..Default::default() }).expect("list");
        assert_eq!(page.items.len(), 2);
        assert_eq!(page.next_key.as_deref(), Some("/a/2"));
        assert_eq!(page.remaining, 3);
        let next = s
            .list(
                "/a/",
                &ListOptions {
                    limit: Some(2),
                    start_key: page.next_key,
                    revision: Some(page.revision),
                    ..Default::default()
                },
            )
            .expect("list");
        assert_eq!(next.items[0].key, "/a/2");
    }

    /// Every page's remaining count equals what a whole list at its revision has after it,
    /// whether it was known (a directory's count, a previous page's) or walked, with
    /// writes between the pages, in a namespace's prefix and a kind's.
    #[test]
    fn remaining_counts_match_the_whole_list_at_the_page_s_revision() {
        let mut s = State::new(0, limit(10_000));
        for i in 0..40 {
            put(&mut s, &format!("/r/p/{}/{i:03}", ["a", "b"][i % 2]), "v");
        }
        for prefix in ["/r/p/", "/r/p/a/", "/r/"] {
            let (mut start, mut at, mut pages) = (None::<String>, None, 0);
            loop {
                let opts = ListOptions { limit: Some(3), start_key: start.clone(), revision: at, ..Default::default() };
                let page = s.list(prefix, &opts).expect("page");
                let whole = s.list(prefix, &ListOptions { revision: Some(page.revision), ..Default::default() });
                let whole = whole.expect("whole").items;
                let last = page.items.last().map(|kv| kv.key.clone()).unwrap_or_default();
                let after = whole.iter().filter(|kv| kv.key > last).count() as u64;
                assert_eq!(page.remaining, after, "{prefix} page {pages} at {}", page.revision);
                pages += 1;
                // Writes between pages: the next page still reads the first one's revision.
                put(&mut s, &format!("/r/p/a/{pages:03}x"), "new");
                del(&mut s, &format!("/r/p/b/{:03}", 2 * pages + 1));
                at = Some(page.revision);
                if let Some(next) = &page.next_key {
                    let known = s.continuations.lock().expect("lock");
                    for start in [next.clone(), format!("{last}\0")] {
                        assert_eq!(known.from(prefix, page.revision, &start), Some(page.remaining), "{start}");
                    }
                }
                match page.next_key {
                    // The engine's continue tokens resume just after the last key.
                    Some(_) if prefix == "/r/p/a/" => start = Some(format!("{last}\0")),
                    Some(next) => start = Some(next),
                    None => break,
                }
            }
            assert!(pages > 3, "{prefix}: {pages} pages");
        }
        // A page this state did not hand out (a token from elsewhere) is walked, and right.
        let odd = ListOptions { limit: Some(2), start_key: Some("/r/p/a/010".into()), ..Default::default() };
        let page = s.list("/r/p/", &odd).expect("page");
        let whole = s.list("/r/p/", &ListOptions::default()).expect("whole").items;
        let last = page.items.last().map(|kv| kv.key.clone()).expect("items");
        assert_eq!(page.remaining, whole.iter().filter(|kv| kv.key > last).count() as u64);
    }

    #[test]
    fn a_state_from_a_snapshot_goes_on_from_its_revision_and_neither_sees_the_other() {
        let mut parent = State::new(0, limit(100));
        put(&mut parent, "/a/1", "one");
        put(&mut parent, "/a/2", "two");
        let snapshot = parent.snapshot();
        assert_eq!((snapshot.revision(), snapshot.len()), (2, 2));
        let mut fork = State::from_snapshot(&snapshot, limit(100));
        let mut sibling = State::from_snapshot(&snapshot, limit(100));
        put(&mut fork, "/a/3", "three");
        del(&mut fork, "/a/1");
        put(&mut parent, "/a/2", "deux");
        assert_eq!(fork.get("/a/3").map(|kv| kv.mod_revision), Some(3), "revisions go on");
        assert_eq!(keys_at(&fork, None), vec![("/a/2".into(), "two".into()), ("/a/3".into(), "three".into())]);
        assert_eq!(keys_at(&parent, None), vec![("/a/1".into(), "one".into()), ("/a/2".into(), "deux".into())]);
        assert_eq!(keys_at(&sibling, None), vec![("/a/1".into(), "one".into()), ("/a/2".into(), "two".into())]);
        assert_eq!(keys_at(&fork, Some(2)), vec![("/a/1".into(), "one".into()), ("/a/2".into(), "two".into())]);
        assert!(matches!(fork.events_after("/a/", 1, 10), Err(StoreError::Expired { .. })), "no history before");
        put(&mut sibling, "/a/1", "uno");
        assert_eq!(snapshot.len(), 2);
        assert_eq!(parent.get("/a/1").map(|kv| kv.value.clone()), Some(Bytes::from("one")));
    }

    #[test]
    fn too_large_revision_is_refused() {
        let s = State::new(7, limit(10));
        assert_eq!(
            s.list("/", &ListOptions { revision: Some(8), ..Default::default() }),
            Err(StoreError::TooLarge { requested: 8, current: 7 })
        );
    }
}
