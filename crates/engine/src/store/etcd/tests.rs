//! What the etcd backend adds to the conformance suite: compaction, the key layout, and
//! an etcd that went away.

use super::process::EtcdProcess;
use super::*;
use crate::store::ListOptions;
use std::sync::Arc;
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
    let compaction = wire::Compaction { revision, physical: true };
    let _: wire::Ignored = store.etcd.grpc.call(wire::method::COMPACT, &compaction).await.expect("compaction");
}

#[tokio::test]
async fn keys_sit_under_the_prefix_where_kube_apiserver_puts_them() {
    let (etcd, _dir) = start_etcd();
    let store = EtcdStore::connect(&EtcdConfig { prefix: "/team-a".into(), ..config(&etcd) }).await.expect("connect");
    let key = "/registry/stable.example.com/widgets/default/w1";
    store.create(key, Bytes::from_static(b"{}")).await.expect("create");
    // Read it back with a plain range, as etcdctl would.
    let range = wire::Range::key(b"/team-a/stable.example.com/widgets/default/w1".to_vec());
    let raw: wire::RangeResponse = store.etcd.grpc.call(wire::method::RANGE, &range).await.expect("range");
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
    // A compaction cancels an etcd watch still catching up: the cache's has caught up.
    assert_eq!(store.cache.reach(now, Duration::from_secs(5)).await, now);
    compact(&store, now).await;
    let old = ListOptions { revision: Some(first.mod_revision), ..Default::default() };
    assert!(matches!(store.list("/registry/g/", &old).await, Err(StoreError::Expired { .. })));
    // The cache's window still holds those changes (kube's does too); etcd does not.
    let mut cached = store.watch("/registry/g/", first.mod_revision).await.expect("the watch starts");
    let replayed = tokio::time::timeout(Duration::from_secs(5), cached.next()).await.expect("an answer");
    assert!(matches!(replayed, Some(Ok(ref e)) if e.revision == first.mod_revision + 1), "got {replayed:?}");
    let mut watch = store.etcd.watch("/registry/g/", first.mod_revision).await.expect("the watch starts");
    let first_item = tokio::time::timeout(Duration::from_secs(5), watch.next()).await.expect("an answer");
    assert!(matches!(first_item, Some(Err(StoreError::Expired { oldest, .. })) if oldest == now), "got {first_item:?}");
    let future = ListOptions { revision: Some(now + 100), ..Default::default() };
    assert!(matches!(store.list("/registry/g/", &future).await, Err(StoreError::TooLarge { .. })));
}

#[tokio::test]
async fn an_etcd_that_went_away_is_unavailable_in_bounded_time_then_recovers() {
    let (mut etcd, _dir) = start_etcd();
    let store = EtcdStore::connect(&config(&etcd)).await.expect("connect");
    let from = store.current_revision().await.expect("revision");
    store.create("/registry/g/p/a", Bytes::from_static(b"1")).await.expect("create");
    let mut watch = store.watch("/registry/g/", from).await.expect("watch");
    assert!(tokio::time::timeout(Duration::from_secs(5), watch.next()).await.expect("replay").is_some());
    let mut direct = store.etcd.watch("/registry/g/", from).await.expect("watch");
    assert!(tokio::time::timeout(Duration::from_secs(5), direct.next()).await.expect("replay").is_some());
    etcd.stop();
    let started = Instant::now();
    assert!(matches!(store.get("/registry/g/p/a").await, Err(StoreError::Unavailable(_))));
    assert!(started.elapsed() < Duration::from_secs(5), "bounded by the timeout: {:?}", started.elapsed());
    let ended = tokio::time::timeout(Duration::from_secs(5), direct.next()).await.expect("the etcd watch ends");
    assert!(matches!(ended, Some(Err(StoreError::Unavailable(_)))), "got {ended:?}");
    // The cached watch stays open, and resumes without loss once etcd is back.
    assert!(tokio::time::timeout(Duration::from_millis(500), watch.next()).await.is_err(), "no error, no event");
    etcd.restart().expect("etcd restarts");
    let kv = store.get("/registry/g/p/a").await.expect("the same store works again").expect("kept");
    assert_eq!(kv.value, Bytes::from_static(b"1"));
    let b = store.create("/registry/g/p/b", Bytes::from_static(b"2")).await.expect("create");
    let next = tokio::time::timeout(Duration::from_secs(10), watch.next()).await.expect("the watch resumed");
    assert!(matches!(next, Some(Ok(ref e)) if e.revision == b.mod_revision), "got {next:?}");
}

/// A TCP relay to etcd that the test can cut, so that one client loses etcd while
/// another keeps it.
struct Relay {
    url: String,
    open: Arc<std::sync::atomic::AtomicBool>,
    cut: tokio::sync::watch::Sender<u64>,
    task: tokio::task::JoinHandle<()>,
}

impl Relay {
    async fn to(etcd: &EtcdProcess) -> Relay {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let target = etcd.url().trim_start_matches("http://").to_string();
        let open = Arc::new(std::sync::atomic::AtomicBool::new(true));
        let (cut, cuts) = tokio::sync::watch::channel(0u64);
        let is_open = Arc::clone(&open);
        let task = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                if !is_open.load(std::sync::atomic::Ordering::SeqCst) {
                    continue;
                }
                let target = target.clone();
                let mut cuts = cuts.clone();
                // Only a cut after this connection ends it.
                cuts.borrow_and_update();
                tokio::spawn(async move {
                    let Ok(mut outbound) = tokio::net::TcpStream::connect(&target).await else { return };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                        _ = cuts.changed() => {}
                    }
                });
            }
        });
        Relay { url, open, cut, task }
    }

    fn set_open(&self, open: bool) {
        self.open.store(open, std::sync::atomic::Ordering::SeqCst);
        if !open {
            self.cut.send_modify(|n| *n += 1);
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A replica reaching etcd through a relay, and a writer reaching it directly.
async fn replica_behind_a_relay(etcd: &EtcdProcess) -> (Relay, EtcdStore, EtcdStore) {
    let relay = Relay::to(etcd).await;
    let replica =
        EtcdStore::connect(&EtcdConfig { timeout: Duration::from_secs(1), ..EtcdConfig::new(vec![relay.url.clone()]) })
            .await
            .expect("connect");
    let writer = EtcdStore::connect(&config(etcd)).await.expect("connect");
    (relay, replica, writer)
}

#[tokio::test]
async fn a_cached_watch_resumes_without_loss_when_etcd_is_back() {
    let (etcd, _dir) = start_etcd();
    let (relay, replica, writer) = replica_behind_a_relay(&etcd).await;
    let from = replica.current_revision().await.expect("revision");
    let mut watch = replica.watch("/registry/g/", from).await.expect("watch");
    relay.set_open(false);
    let mut written = Vec::new();
    for i in 0..5 {
        written.push(
            writer.create(&format!("/registry/g/p/{i}"), Bytes::from_static(b"1")).await.expect("create").mod_revision,
        );
    }
    assert!(tokio::time::timeout(Duration::from_millis(300), watch.next()).await.is_err(), "open, and quiet");
    relay.set_open(true);
    let mut seen = Vec::new();
    while seen.len() < written.len() {
        match tokio::time::timeout(Duration::from_secs(10), watch.next()).await.expect("the watch resumed") {
            Some(Ok(e)) => seen.push(e.revision),
            other => panic!("the watch ended: {other:?}"),
        }
    }
    assert_eq!(seen, written, "every change, in order");
}

/// A value near etcd's request limit arrives in a watch event whole, although HTTP/2 brings
/// it in many frames (16 KiB each by default), on etcd's own watch and the cache's alike.
#[tokio::test]
async fn watch_events_of_large_values_arrive_whole() {
    let (etcd, _dir) = start_etcd();
    let store = EtcdStore::connect(&config(&etcd)).await.expect("connect");
    let from = store.current_revision().await.expect("revision");
    let value: Bytes = (0..1_200_000u32).map(|i| (i % 251) as u8).collect::<Vec<u8>>().into();
    for prefix in ["/big/", "/registry/big/"] {
        store.create(&format!("{prefix}v"), value.clone()).await.expect("create");
    }
    for prefix in ["/big/", "/registry/big/"] {
        let mut watch = store.watch(prefix, from).await.expect("watch");
        match tokio::time::timeout(Duration::from_secs(10), watch.next()).await.expect("an event") {
            Some(Ok(e)) => assert!(e.current.as_ref().is_some_and(|kv| kv.value == value), "{prefix}: the value whole"),
            other => panic!("{prefix}: the watch ended: {other:?}"),
        }
    }
}

/// The cache's etcd watch asks for no previous values (etcd would read each one back): the
/// cache's events carry them all the same, from what it held before each change, also for
/// changes another replica made.
#[tokio::test]
async fn cached_events_carry_previous_values_that_etcd_did_not_send() {
    let (etcd, _dir) = start_etcd();
    let store = EtcdStore::connect(&config(&etcd)).await.expect("connect");
    let other = EtcdStore::connect(&config(&etcd)).await.expect("connect");
    let from = store.current_revision().await.expect("revision");
    let key = "/registry/g/p/a";
    other.create(key, Bytes::from_static(b"1")).await.expect("create");
    other.update(key, Bytes::from_static(b"2"), None).await.expect("update");
    other.delete(key, None).await.expect("delete");
    let mut watch = store.watch("/registry/g/", from).await.expect("watch");
    let mut prevs = Vec::new();
    while prevs.len() < 3 {
        match tokio::time::timeout(Duration::from_secs(10), watch.next()).await.expect("an event") {
            Some(Ok(e)) => prevs.push(e.prev.as_ref().map(|kv| (kv.value.clone(), kv.mod_revision))),
            other => panic!("the watch ended: {other:?}"),
        }
    }
    let created = from + 1;
    assert_eq!(prevs, [None, Some((Bytes::from_static(b"1"), created)), Some((Bytes::from_static(b"2"), created + 1))]);
}

#[tokio::test]
async fn a_cache_that_cannot_resume_after_a_compaction_ends_its_watches_with_expired() {
    let (etcd, _dir) = start_etcd();
    let (relay, replica, writer) = replica_behind_a_relay(&etcd).await;
    let from = replica.current_revision().await.expect("revision");
    let mut watch = replica.watch("/registry/g/", from).await.expect("watch");
    relay.set_open(false);
    writer.create("/registry/g/p/a", Bytes::from_static(b"1")).await.expect("create");
    for i in 0..3 {
        writer.update("/registry/g/p/a", Bytes::from(i.to_string()), None).await.expect("update");
    }
    let now = writer.current_revision().await.expect("revision");
    compact(&writer, now).await;
    relay.set_open(true);
    let ended = tokio::time::timeout(Duration::from_secs(10), watch.next()).await.expect("an answer");
    assert!(matches!(ended, Some(Err(StoreError::Expired { .. }))), "got {ended:?}");
    // The cache read everything afresh: it serves the latest state and new watches.
    assert!(replica.cache.reach(now, Duration::from_secs(10)).await >= now);
    let page = replica.list("/registry/g/", &ListOptions { cached: true, ..Default::default() }).await.expect("list");
    assert_eq!(page.items.len(), 1);
    assert_eq!(page.items[0].value, Bytes::from_static(b"2"));
}

/// The cache's effect, measured in one run against the same etcd: a list of every object
/// (`resourceVersion=0` from the cache, a consistent list from etcd) and the time for one
/// write to reach many watchers (cursors over the cache, or one etcd watch each).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cache_lists_and_fans_out_faster_than_etcd() {
    const OBJECTS: usize = 2_000;
    const WATCHERS: usize = 50;
    const LISTS: u32 = 10;
    let (etcd, _dir) = start_etcd();
    let store = Arc::new(EtcdStore::connect(&config(&etcd)).await.expect("connect"));
    let value = Bytes::from(vec![b'x'; 1024]);
    let writes = (0..OBJECTS).map(|i| {
        let (store, value) = (Arc::clone(&store), value.clone());
        async move { store.create(&format!("/registry/g/p/ns/{i:05}"), value).await.expect("create") }
    });
    futures::stream::iter(writes).buffer_unordered(32).collect::<Vec<_>>().await;
    let now = store.current_revision().await.expect("revision");
    assert_eq!(store.cache.reach(now, Duration::from_secs(10)).await, now);
    let time_lists = |cached: bool| {
        let store = Arc::clone(&store);
        async move {
            let started = Instant::now();
            for _ in 0..LISTS {
                let page =
                    store.list("/registry/g/p/", &ListOptions { cached, ..Default::default() }).await.expect("list");
                assert_eq!(page.items.len(), OBJECTS);
            }
            started.elapsed() / LISTS
        }
    };
    let from_etcd = time_lists(false).await;
    let from_cache = time_lists(true).await;

    let fan_out = |cached: bool| {
        let store = Arc::clone(&store);
        async move {
            let after = store.current_revision().await.expect("revision");
            let mut watches = Vec::new();
            for _ in 0..WATCHERS {
                let watch = if cached {
                    store.watch("/registry/g/", after).await
                } else {
                    store.etcd.watch("/registry/g/", after).await
                };
                watches.push(watch.expect("watch"));
            }
            let started = Instant::now();
            store.create(&format!("/registry/g/q/{cached}"), Bytes::from_static(b"1")).await.expect("create");
            for w in &mut watches {
                let got = tokio::time::timeout(Duration::from_secs(10), w.next()).await.expect("an event");
                assert!(matches!(got, Some(Ok(_))), "got {got:?}");
            }
            started.elapsed()
        }
    };
    let fan_etcd = fan_out(false).await;
    let fan_cache = fan_out(true).await;
    println!(
        "list of {OBJECTS} objects of 1 KiB: etcd {from_etcd:?}, cache {from_cache:?} ({:.0}x); \
         one write to {WATCHERS} watchers: etcd {fan_etcd:?}, cache {fan_cache:?} ({:.1}x)",
        from_etcd.as_secs_f64() / from_cache.as_secs_f64(),
        fan_etcd.as_secs_f64() / fan_cache.as_secs_f64()
    );
    // Loose bounds: the point is the figure above, not a race on a shared machine.
    assert!(from_cache * 3 < from_etcd, "a cached list costs no etcd round trip: {from_cache:?} vs {from_etcd:?}");
}

/// Waits until `leading` says `want`, at most `within`.
async fn leads(leading: &mut tokio::sync::watch::Receiver<bool>, want: bool, within: Duration) -> bool {
    tokio::time::timeout(within, leading.wait_for(|l| *l == want)).await.is_ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_replica_leads_keeps_its_lease_under_a_stream_of_reports_and_hands_over_when_it_resigns() {
    let (etcd, _dir) = start_etcd();
    let store = EtcdStore::connect(&config(&etcd)).await.expect("connect");
    let ttl = Duration::from_secs(3);
    let first = store.join(ttl);
    let mut first_leads = first.leading();
    assert!(leads(&mut first_leads, true, Duration::from_secs(5)).await, "the first replica leads");
    let second = store.join(ttl);
    let mut second_leads = second.leading();
    // Reports many times a second for longer than the TTL: the renewals still go.
    let started = Instant::now();
    let mut revision = 1;
    while started.elapsed() < ttl * 2 {
        first.report_served(revision);
        revision += 1;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(*first_leads.borrow(), "still leading after {:?} of reports", started.elapsed());
    assert!(!*second_leads.borrow(), "one leader at a time");
    let least = second.least_served_by_others().await.expect("reports read").expect("the first's report");
    assert!(least >= revision / 2 && least < revision, "the first's latest reports are written: {least}");
    first.resign().await;
    assert!(leads(&mut second_leads, true, Duration::from_secs(2)).await, "the second leads within a tick");
    assert_eq!(second.least_served_by_others().await.expect("reports read"), None, "the first's report went with it");
}
