//! The store conformance suite: written once, run against every backend.
//!
//! Each test takes a fresh store from a factory; `backend_suite!` instantiates the whole
//! suite for one backend. The etcd backend runs it on a real etcd per test. The redb
//! backend runs it twice (default and tiny log segments), and the reopen tests below
//! check recovery both from a checkpointed database and from the log alone.

use super::*;
use futures::StreamExt;
use std::time::Duration;

fn b(s: &str) -> Bytes {
    Bytes::from(s.to_string())
}

async fn next_event(w: &mut WatchStream) -> WatchEvent {
    let event = tokio::time::timeout(Duration::from_secs(5), w.next())
        .await
        .expect("a watch event within 5 s")
        .expect("the watch stream is open")
        .expect("no watch error");
    WatchEvent::clone(&event)
}

pub async fn create_get_update_delete(s: impl Store) {
    let created = s.create("/w/a", b("1")).await.expect("create");
    assert_eq!(created.create_revision, created.mod_revision);
    assert_eq!(s.get("/w/a").await.expect("get"), Some(created.clone()));
    assert_eq!(s.create("/w/a", b("x")).await, Err(StoreError::AlreadyExists { key: "/w/a".into() }));

    let updated = s.update("/w/a", b("2"), Some(created.mod_revision)).await.expect("guarded update");
    assert!(updated.mod_revision > created.mod_revision);
    assert_eq!(updated.create_revision, created.create_revision);
    assert_eq!(
        s.update("/w/a", b("3"), Some(created.mod_revision)).await,
        Err(StoreError::Conflict { key: "/w/a".into(), expected: created.mod_revision, actual: updated.mod_revision })
    );
    assert_eq!(s.get("/w/a").await.expect("get").map(|kv| kv.value), Some(b("2")), "a stale update changes nothing");
    let unguarded = s.update("/w/a", b("4"), None).await.expect("unguarded update");

    assert!(matches!(s.delete("/w/a", Some(created.mod_revision)).await, Err(StoreError::Conflict { .. })));
    let deleted = s.delete("/w/a", Some(unguarded.mod_revision)).await.expect("delete");
    assert_eq!(deleted.prev, unguarded);
    assert!(deleted.revision > unguarded.mod_revision);
    assert_eq!(s.get("/w/a").await.expect("get"), None);
    assert_eq!(s.delete("/w/a", None).await, Err(StoreError::NotFound { key: "/w/a".into() }));
    assert_eq!(s.update("/w/a", b("5"), None).await, Err(StoreError::NotFound { key: "/w/a".into() }));
    assert_eq!(s.current_revision().await.expect("revision"), deleted.revision);
}

pub async fn revisions_are_global_and_monotonic(s: impl Store) {
    let start = s.current_revision().await.expect("revision");
    let a = s.create("/x/a", b("")).await.expect("create");
    let c = s.create("/y/c", b("")).await.expect("create");
    let a2 = s.update("/x/a", b("v"), None).await.expect("update");
    assert_eq!((a.mod_revision, c.mod_revision, a2.mod_revision), (start + 1, start + 2, start + 3));
    // A failed write takes no revision.
    let _ = s.create("/x/a", b("")).await;
    assert_eq!(s.create("/x/b", b("")).await.expect("create").mod_revision, start + 4);
}

pub async fn list_pages_are_one_snapshot(s: impl Store) {
    for i in 0..5 {
        s.create(&format!("/l/{i}"), b(&i.to_string())).await.expect("create");
    }
    s.create("/lz", b("outside the prefix")).await.expect("create");
    let first = s.list("/l/", &ListOptions { limit: Some(2), ..Default::default() }).await.expect("list");
    assert_eq!(first.items.iter().map(|kv| kv.key.as_str()).collect::<Vec<_>>(), ["/l/0", "/l/1"]);
    assert_eq!(first.remaining, 3);

    // Changes after the first page do not show in later pages of the same list.
    s.delete("/l/3", None).await.expect("delete");
    s.update("/l/2", b("changed"), None).await.expect("update");
    s.create("/l/9", b("new")).await.expect("create");

    let mut keys = Vec::new();
    let mut values = Vec::new();
    let mut opts = ListOptions {
        limit: Some(2),
        start_key: first.next_key.clone(),
        revision: Some(first.revision),
        ..Default::default()
    };
    loop {
        let page = s.list("/l/", &opts).await.expect("next page");
        assert_eq!(page.revision, first.revision);
        keys.extend(page.items.iter().map(|kv| kv.key.clone()));
        values.extend(page.items.iter().map(|kv| kv.value.clone()));
        match page.next_key {
            Some(next) => opts.start_key = Some(next),
            None => break,
        }
    }
    assert_eq!(keys, ["/l/2", "/l/3", "/l/4"]);
    assert_eq!(values, [b("2"), b("3"), b("4")]);

    let latest = s.list("/l/", &ListOptions::default()).await.expect("list");
    assert_eq!(
        latest.items.iter().map(|kv| kv.key.as_str()).collect::<Vec<_>>(),
        ["/l/0", "/l/1", "/l/2", "/l/4", "/l/9"]
    );
    assert_eq!(latest.next_key, None);
}

pub async fn watch_replays_then_follows(s: impl Store) {
    let before = s.create("/wt/a", b("1")).await.expect("create");
    s.create("/other/x", b("x")).await.expect("create");
    s.update("/wt/a", b("2"), None).await.expect("update");
    let mut w = s.watch("/wt/", before.mod_revision).await.expect("watch");
    let e = next_event(&mut w).await;
    assert_eq!((e.event_type(), e.current.map(|kv| kv.value)), (EventType::Modified, Some(b("2"))));

    s.create("/wt/b", b("b")).await.expect("create");
    s.delete("/wt/a", None).await.expect("delete");
    let added = next_event(&mut w).await;
    assert_eq!((added.event_type(), added.key.as_str()), (EventType::Added, "/wt/b"));
    let deleted = next_event(&mut w).await;
    assert_eq!(deleted.event_type(), EventType::Deleted);
    assert_eq!(deleted.prev.map(|kv| kv.value), Some(b("2")), "deletes carry the previous value");
    assert!(deleted.revision > added.revision);
}

pub async fn many_concurrent_writers_lose_nothing(s: impl Store) {
    let s = Arc::new(s);
    let mut tasks = Vec::new();
    for w in 0..16 {
        let s = Arc::clone(&s);
        tasks.push(tokio::spawn(async move {
            let mut revs = Vec::new();
            for i in 0..50 {
                revs.push(s.create(&format!("/c/{w:02}/{i:03}"), b("v")).await.expect("create").mod_revision);
            }
            revs
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        let revs = t.await.expect("task");
        assert!(revs.windows(2).all(|p| p[0] < p[1]), "each writer sees increasing revisions");
        all.extend(revs);
    }
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), 800, "every write has its own revision");
    assert_eq!(s.list("/c/", &ListOptions::default()).await.expect("list").items.len(), 800);
}

pub async fn guarded_updates_from_racing_writers_serialize(s: impl Store) {
    // Read-modify-write loops with retries on conflict: every increment survives.
    let s = Arc::new(s);
    s.create("/counter", b("0")).await.expect("create");
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let s = Arc::clone(&s);
        tasks.push(tokio::spawn(async move {
            for _ in 0..20 {
                loop {
                    let kv = s.get("/counter").await.expect("get").expect("present");
                    let n: u64 = std::str::from_utf8(&kv.value).expect("utf8").parse().expect("number");
                    match s.update("/counter", b(&(n + 1).to_string()), Some(kv.mod_revision)).await {
                        Ok(_) => break,
                        Err(StoreError::Conflict { .. }) => continue,
                        Err(e) => panic!("unexpected {e}"),
                    }
                }
            }
        }));
    }
    for t in tasks {
        t.await.expect("task");
    }
    assert_eq!(s.get("/counter").await.expect("get").expect("present").value, b("160"));
}

macro_rules! backend_suite {
    ($name:ident, $factory:expr) => {
        mod $name {
            use super::*;
            #[allow(unused_imports)]
            use std::path::Path;

            #[tokio::test]
            async fn create_get_update_delete() {
                let (_guard, s) = $factory;
                super::create_get_update_delete(s).await;
            }
            #[tokio::test]
            async fn revisions_are_global_and_monotonic() {
                let (_guard, s) = $factory;
                super::revisions_are_global_and_monotonic(s).await;
            }
            #[tokio::test]
            async fn list_pages_are_one_snapshot() {
                let (_guard, s) = $factory;
                super::list_pages_are_one_snapshot(s).await;
            }
            #[tokio::test]
            async fn watch_replays_then_follows() {
                let (_guard, s) = $factory;
                super::watch_replays_then_follows(s).await;
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn many_concurrent_writers_lose_nothing() {
                let (_guard, s) = $factory;
                super::many_concurrent_writers_lose_nothing(s).await;
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn guarded_updates_from_racing_writers_serialize() {
                let (_guard, s) = $factory;
                super::guarded_updates_from_racing_writers_serialize(s).await;
            }
        }
    };
}

backend_suite!(memory, ((), LocalStore::memory()));
backend_suite!(redb, {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = LocalStore::redb(&dir.path().join("store.redb")).expect("open redb");
    (dir, store)
});
// The same through small log segments and frequent checkpoints, so that rolling and
// deleting segments happen while the suite writes.
backend_suite!(redb_small_log, {
    let dir = tempfile::tempdir().expect("tempdir");
    let tuning = redb_backend::Tuning {
        segment_bytes: 2048,
        checkpoint: redb_backend::Policy::Every { changes: 7, bytes: 4096 },
        ..Default::default()
    };
    let store =
        LocalStore::redb_tuned(&dir.path().join("store.redb"), HistoryLimit::default(), tuning).expect("open redb");
    (dir, store)
});

// A real etcd per test (revisions are global, so tests cannot share one); no etcd
// installed fails every test with a message naming the package.
backend_suite!(etcd, {
    let (etcd, dir) = crate::store::etcd::tests::start_etcd();
    let store = EtcdStore::connect(&EtcdConfig::new(vec![etcd.url()])).await.expect("connect to etcd");
    ((etcd, dir), store)
});

/// Writes through a store opened with `tuning`, closes it, and checks that a default
/// reopen has every change and continues the revisions.
async fn reopen_keeps_everything(tuning: redb_backend::Tuning) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("store.redb");
    let (kept, last) = {
        let s = LocalStore::redb_tuned(&path, HistoryLimit::default(), tuning).expect("open");
        let a = s.create("/k/a", b("a")).await.expect("create");
        s.create("/k/b", b("b")).await.expect("create");
        s.delete("/k/b", None).await.expect("delete");
        let a2 = s.update("/k/a", b("a2"), Some(a.mod_revision)).await.expect("update");
        let last = s.current_revision().await.expect("rev");
        s.close().await;
        (a2, last)
    };
    let s = LocalStore::redb(&path).expect("a closed store can be reopened at once");
    assert_eq!(s.get("/k/a").await.expect("get"), Some(kept));
    assert_eq!(s.get("/k/b").await.expect("get"), None);
    assert_eq!(s.current_revision().await.expect("rev"), last);
    let next = s.create("/k/c", b("c")).await.expect("create");
    assert_eq!(next.mod_revision, last + 1, "revisions continue after a restart");
    assert!(matches!(s.watch("/k/", last - 1).await, Err(StoreError::Expired { .. })), "history is not persisted");
}

#[tokio::test]
async fn redb_keeps_everything_across_reopen() {
    reopen_keeps_everything(redb_backend::Tuning::default()).await;
}

#[tokio::test]
async fn redb_recovers_everything_from_the_log_when_the_database_never_saw_it() {
    let never = redb_backend::Tuning { checkpoint: redb_backend::Policy::Never, ..Default::default() };
    reopen_keeps_everything(never).await;
}

#[tokio::test]
async fn redb_refuses_a_second_opener() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("store.redb");
    let _first = LocalStore::redb(&path).expect("open");
    assert!(matches!(LocalStore::redb(&path), Err(StoreError::Locked { .. })));
}

#[tokio::test]
async fn a_watch_that_falls_out_of_history_expires_without_blocking_writers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = LocalStore::redb_with_history(&dir.path().join("s.redb"), HistoryLimit { events: 8, ..Default::default() })
        .expect("open");
    let start = s.current_revision().await.expect("rev");
    let mut slow = s.watch("/", start).await.expect("watch");
    for i in 0..50 {
        s.create(&format!("/s/{i}"), b("v")).await.expect("writers are never held up by a watcher");
    }
    let first = tokio::time::timeout(Duration::from_secs(5), slow.next()).await.expect("answer").expect("item");
    assert!(matches!(first, Err(StoreError::Expired { .. })), "got {first:?}");
}

#[tokio::test]
async fn a_write_over_etcd_s_request_limit_is_refused_as_etcd_refuses_it() {
    let s = LocalStore::memory();
    let fits = vec![b'x'; MAX_REQUEST_BYTES - 2 * "/k/a".len() - 40];
    let a = s.create("/k/a", Bytes::from(fits.clone())).await.expect("at the limit");
    let over = Bytes::from(vec![b'x'; fits.len() + 1]);
    assert_eq!(s.create("/k/b", over.clone()).await, Err(StoreError::RequestTooLarge));
    assert_eq!(s.update("/k/a", over, Some(a.mod_revision)).await, Err(StoreError::RequestTooLarge));
    assert_eq!(s.get("/k/b").await.expect("get"), None);
}

#[tokio::test]
async fn a_write_over_grpc_s_message_limit_is_refused_in_grpc_s_words() {
    // The oracle's answer to the create of a custom resource stored in 2,098,378 bytes at
    // this key (its size once kube dropped its managedFields to try again).
    let key = "/registry/edges.diff.example.com/frees/edge/s2098152";
    assert_eq!(message_bytes(key, 2_098_378, None), 2_098_507);
    let s = LocalStore::memory();
    let over = Bytes::from(vec![b'x'; 2_098_378]);
    let refused = s.create(key, over.clone()).await.expect_err("over 2 MiB");
    assert_eq!(refused, StoreError::MessageTooLarge { size: 2_098_507 });
    assert_eq!(
        refused.to_string(),
        "rpc error: code = ResourceExhausted desc = trying to send message larger than max (2098507 vs. 2097152)"
    );
    // An update also gets the key when its compare fails: a RequestOp of a RangeRequest.
    let updated = s.update(key, over, Some(7)).await;
    assert_eq!(updated, Err(StoreError::MessageTooLarge { size: 2_098_507 + 2 + 2 + 54 }));
}
