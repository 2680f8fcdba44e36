//! What the etcd backend adds to the conformance suite: compaction, the key layout, and
//! an etcd that went away.

use super::process::EtcdProcess;
use super::*;
use crate::store::ListOptions;
use std::time::Instant;

/// A fresh etcd in a temporary directory (in memory where the machine has /dev/shm, for
/// quick fsyncs). The process is listed first so that it stops before its data goes.
pub fn start_etcd() -> (EtcdProcess, tempfile::TempDir) {
    let shm = std::path::Path::new("/dev/shm");
    let dir = if shm.is_dir() { tempfile::tempdir_in(shm) } else { tempfile::tempdir() }.expect("tempdir");
    let etcd = EtcdProcess::start(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    (etcd, dir)
}

fn config(etcd: &EtcdProcess) -> EtcdConfig {
    EtcdConfig { timeout: Duration::from_secs(2), ..EtcdConfig::new(vec![etcd.url()]) }
}

async fn compact(store: &EtcdStore, revision: Revision) {
    let body = serde_json::json!({ "revision": revision.to_string(), "physical": true });
    let _: serde_json::Value = store.gateway.call("/v3/kv/compaction", &body).await.expect("compaction");
}

#[tokio::test]
async fn keys_sit_under_the_prefix_where_kube_apiserver_puts_them() {
    let (etcd, _dir) = start_etcd();
    let store = EtcdStore::connect(&EtcdConfig { prefix: "/team-a".into(), ..config(&etcd) }).await.expect("connect");
    let key = "/registry/stable.example.com/widgets/default/w1";
    store.create(key, Bytes::from_static(b"{}")).await.expect("create");
    // Read it back with a plain range, as etcdctl would.
    let body = serde_json::json!({ "key": wire::enc(b"/team-a/stable.example.com/widgets/default/w1") });
    let raw: wire::RangeResponse = store.gateway.call("/v3/kv/range", &body).await.expect("range");
    assert_eq!(raw.kvs.len(), 1, "stored at <prefix>/<group>/<plural>/<namespace>/<name>");
    let page = store.list("/registry/stable.example.com/widgets/", &ListOptions::default()).await.expect("list");
    assert_eq!(page.items.iter().map(|kv| kv.key.as_str()).collect::<Vec<_>>(), [key]);
}

#[tokio::test]
async fn reads_and_watches_below_the_compacted_revision_are_expired() {
    let (etcd, _dir) = start_etcd();
    let store = EtcdStore::connect(&config(&etcd)).await.expect("connect");
    let first = store.create("/registry/g/p/a", Bytes::from_static(b"1")).await.expect("create");
    for i in 0..3 {
        store.update("/registry/g/p/a", Bytes::from(i.to_string()), None).await.expect("update");
    }
    let now = store.current_revision().await.expect("revision");
    compact(&store, now).await;
    let old = ListOptions { revision: Some(first.mod_revision), ..Default::default() };
    assert!(matches!(store.list("/registry/g/", &old).await, Err(StoreError::Expired { .. })));
    let mut watch = store.watch("/registry/g/", first.mod_revision).await.expect("the watch starts");
    let first_item = tokio::time::timeout(Duration::from_secs(5), watch.next()).await.expect("an answer");
    assert!(matches!(first_item, Some(Err(StoreError::Expired { oldest, .. })) if oldest == now), "got {first_item:?}");
    let future = ListOptions { revision: Some(now + 100), ..Default::default() };
    assert!(matches!(store.list("/registry/g/", &future).await, Err(StoreError::TooLarge { .. })));
}

#[tokio::test]
async fn an_etcd_that_went_away_is_unavailable_in_bounded_time_then_recovers() {
    let (mut etcd, _dir) = start_etcd();
    let store = EtcdStore::connect(&config(&etcd)).await.expect("connect");
    store.create("/registry/g/p/a", Bytes::from_static(b"1")).await.expect("create");
    let mut watch = store.watch("/registry/g/", 0).await.expect("watch");
    assert!(tokio::time::timeout(Duration::from_secs(5), watch.next()).await.expect("replay").is_some());
    etcd.stop();
    let started = Instant::now();
    assert!(matches!(store.get("/registry/g/p/a").await, Err(StoreError::Unavailable(_))));
    assert!(started.elapsed() < Duration::from_secs(5), "bounded by the timeout: {:?}", started.elapsed());
    let ended = tokio::time::timeout(Duration::from_secs(5), watch.next()).await.expect("the watch ends");
    assert!(matches!(ended, Some(Err(StoreError::Unavailable(_)))), "got {ended:?}");
    etcd.restart().expect("etcd restarts");
    let kv = store.get("/registry/g/p/a").await.expect("the same store works again").expect("kept");
    assert_eq!(kv.value, Bytes::from_static(b"1"));
}

#[tokio::test]
async fn bookmarks_on_etcd_claim_only_what_was_sent() {
    let (etcd, _dir) = start_etcd();
    let store = EtcdStore::connect(&config(&etcd)).await.expect("connect");
    let before = store.current_revision().await.expect("revision");
    store.create("/registry/g/p/a", Bytes::from_static(b"1")).await.expect("create");
    // The change may not have reached the watcher yet: no bookmark may pass it.
    assert_eq!(crate::api::watch::progress(&store, "/registry/g/", before).await, before);
}
