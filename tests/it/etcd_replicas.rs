//! Three `kubectl crd serve` replicas on a three-member etcd on loopback, each replica given
//! all three members in a different order: a write through one is seen by gets, lists and
//! watches on the others, in order; under continuous writes, killing a replica and an etcd
//! member costs the clients nothing but retryable errors and loses no acknowledged write;
//! after everything (replicas and members) restarts, every write is still there.

use super::etcd::{GROUP, client, widgets, widgets_resource};
use crate::support::cli::Served;
use crate::support::crd::CrdBuilder;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject, ListParams, PostParams, WatchEvent, WatchParams};
use kubectl_crd_engine::store::etcd_process::EtcdCluster;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Replica `i` on the cluster, its members listed from member `i` on.
fn replica(dir: &Path, i: usize, urls: &[String]) -> Served {
    let mut order = urls.to_vec();
    order.rotate_left(i);
    Served::start(&dir.join(format!("serve-{i}")), &["--storage", "etcd", "--etcd-servers", &order.join(",")])
}

/// Waits until `served` serves widgets (its CRD controller heard of the CRD through etcd).
async fn serving_widgets(served: &Served) -> kube::Client {
    let client = client(served).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    while widgets(&client).list(&ListParams::default()).await.is_err() {
        assert!(Instant::now() < deadline, "replica {} never served widgets", served.url);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    client
}

fn widget(name: &str, token: u64) -> DynamicObject {
    DynamicObject::new(name, &widgets_resource()).data(json!({"spec": {"token": token}}))
}

/// Every widget's name and resourceVersion as `client` lists them.
async fn listed(client: &kube::Client) -> BTreeMap<String, String> {
    let list = widgets(client).list(&ListParams::default()).await.expect("list");
    list.items
        .into_iter()
        .map(|w| (w.metadata.name.unwrap_or_default(), w.metadata.resource_version.unwrap_or_default()))
        .collect()
}

fn rv(object: &DynamicObject) -> u64 {
    object.metadata.resource_version.as_deref().and_then(|rv| rv.parse().ok()).expect("a numeric resourceVersion")
}

/// Whether a failed request may be sent again (to another replica): kube's retryable
/// answers, and a replica that cannot be reached or broke the connection.
fn retryable(e: &kube::Error) -> bool {
    match e {
        kube::Error::Api(status) => matches!(status.code, 429 | 500 | 503 | 504),
        kube::Error::HyperError(_) | kube::Error::Service(_) => true,
        _ => false,
    }
}

/// What one writer saw: the writes acknowledged (name → resourceVersion) and any answer
/// that was not retryable.
#[derive(Default)]
struct Outcome {
    acknowledged: BTreeMap<String, String>,
    errors: Vec<String>,
    retried: usize,
}

/// Creates widgets `<writer>-<n>` one after another until `stop`, each through the next
/// replica in turn, moving on to another replica after a retryable error. A create that
/// failed in a way that may have reached the server (the replica died mid-request) and
/// then finds its name taken reads it back: the token says whether it is its own.
async fn write_until(writer: usize, replicas: Vec<kube::Client>, stop: Arc<AtomicBool>) -> Outcome {
    let mut out = Outcome::default();
    let mut at = writer;
    for n in 0.. {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let name = format!("load-{writer}-{n}");
        let token = (writer * 1_000_000 + n) as u64;
        let mut ambiguous = false;
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let api = widgets(&replicas[at % replicas.len()]);
            match api.create(&PostParams::default(), &widget(&name, token)).await {
                Ok(created) => {
                    out.acknowledged.insert(name.clone(), created.metadata.resource_version.unwrap_or_default());
                    break;
                }
                Err(kube::Error::Api(s)) if s.code == 409 && ambiguous => match api.get(&name).await {
                    Ok(w) if w.data["spec"]["token"] == token => {
                        out.acknowledged.insert(name.clone(), w.metadata.resource_version.unwrap_or_default());
                        break;
                    }
                    other => {
                        out.errors.push(format!("{name}: taken by another write: {other:?}"));
                        break;
                    }
                },
                Err(e) if retryable(&e) && Instant::now() < deadline => {
                    out.retried += 1;
                    ambiguous = true;
                    at += 1;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(e) => {
                    out.errors.push(format!("{name}: {e}"));
                    break;
                }
            }
        }
        at += 1;
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_replicas_on_three_members_lose_no_acknowledged_write_when_a_replica_and_a_member_die() {
    let shm = Path::new("/dev/shm");
    let dir = if shm.is_dir() { tempfile::tempdir_in(shm) } else { tempfile::tempdir() }.expect("tempdir");
    let mut cluster = EtcdCluster::start(&dir.path().join("etcd"), 3).unwrap_or_else(|e| panic!("{e}"));
    let urls = cluster.urls();
    let mut replicas: Vec<Option<Served>> = (0..3).map(|i| Some(replica(dir.path(), i, &urls))).collect();

    // The CRD through replica 0; every replica serves it.
    let a = client(replicas[0].as_ref().expect("replica 0")).await;
    let crd: CustomResourceDefinition =
        serde_json::from_value(CrdBuilder::new(GROUP, "Widget").build()).expect("a CRD");
    Api::<CustomResourceDefinition>::all(a.clone()).create(&PostParams::default(), &crd).await.expect("create CRD");
    let mut clients = Vec::new();
    for served in replicas.iter().flatten() {
        clients.push(serving_widgets(served).await);
    }

    // A write through one replica is seen by gets, lists and watches on the others, in order.
    let start = widgets(&clients[1]).list(&ListParams::default()).await.expect("list");
    let from = start.metadata.resource_version.expect("a list resourceVersion");
    let mut watches = Vec::new();
    for c in &clients[1..] {
        watches.push(widgets(c).watch(&WatchParams::default().timeout(30), &from).await.expect("watch").boxed());
    }
    let mut written = Vec::new();
    for i in 0..5 {
        let created = widgets(&clients[0]).create(&PostParams::default(), &widget(&format!("seen-{i}"), i)).await;
        written.push(created.expect("create through replica 0"));
    }
    assert!(written.windows(2).all(|w| rv(&w[0]) < rv(&w[1])), "resourceVersions increase");
    for (c, watch) in clients[1..].iter().zip(&mut watches) {
        for w in &written {
            let name = w.metadata.name.as_deref().expect("name");
            let got = widgets(c).get(name).await.expect("a get on another replica");
            assert_eq!(got.metadata.resource_version, w.metadata.resource_version, "{name}");
        }
        let list = listed(c).await;
        for w in &written {
            assert_eq!(list.get(w.metadata.name.as_deref().expect("name")), w.metadata.resource_version.as_ref());
        }
        let mut events = Vec::new();
        while events.len() < written.len() {
            match tokio::time::timeout(Duration::from_secs(10), watch.try_next()).await {
                Ok(Ok(Some(WatchEvent::Added(o)))) => {
                    events.push((o.metadata.name.clone().unwrap_or_default(), rv(&o)))
                }
                Ok(Ok(Some(WatchEvent::Bookmark(_)))) => {}
                other => panic!("watch on another replica: {other:?} after {events:?}"),
            }
        }
        let expected: Vec<_> = written.iter().map(|w| (w.metadata.name.clone().unwrap_or_default(), rv(w))).collect();
        assert_eq!(events, expected, "the events of the writes, in order");
    }

    // Writes under load; replica 2 and etcd member 1 die on the way. A watch on replica 1
    // (whose etcd watch sits on member 1, first in its list) follows throughout.
    let load_from = listed(&clients[1]).await;
    let from = widgets(&clients[1]).list(&ListParams::default()).await.expect("list");
    let mut follow = widgets(&clients[1])
        .watch(&WatchParams::default().timeout(60), &from.metadata.resource_version.expect("rv"))
        .await
        .expect("watch")
        .boxed();
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..4).map(|w| tokio::spawn(write_until(w, clients.clone(), stop.clone()))).collect();
    let seen = Arc::new(Mutex::new(Vec::<(String, u64)>::new()));
    let follower = {
        let seen = seen.clone();
        tokio::spawn(async move {
            while let Ok(Some(event)) = follow.try_next().await {
                if let WatchEvent::Added(o) = event {
                    let mut seen = seen.lock().expect("seen");
                    seen.push((o.metadata.name.clone().unwrap_or_default(), rv(&o)));
                }
            }
        })
    };
    tokio::time::sleep(Duration::from_millis(1500)).await;
    drop(replicas[2].take());
    cluster.member(1).expect("member 1").stop();
    tokio::time::sleep(Duration::from_millis(3000)).await;
    stop.store(true, Ordering::Relaxed);
    let mut acknowledged = BTreeMap::new();
    let mut retried = 0;
    for writer in writers {
        let out = writer.await.expect("writer");
        assert!(out.errors.is_empty(), "only retryable errors: {:?}", out.errors);
        retried += out.retried;
        acknowledged.extend(out.acknowledged);
    }
    eprintln!("under load: {} writes acknowledged, {retried} retries", acknowledged.len());
    assert!(acknowledged.len() >= 20, "the load wrote {} objects", acknowledged.len());
    assert!(retried > 0, "the killed replica made some writers retry");
    for c in &clients[..2] {
        let list = listed(c).await;
        for (name, rv) in &acknowledged {
            assert_eq!(list.get(name), Some(rv), "acknowledged {name} at {rv}, on every live replica");
        }
        assert_eq!(list.len(), load_from.len() + acknowledged.len(), "nothing but the acknowledged writes");
    }
    // The watch on replica 1 saw every write once, in resourceVersion order.
    let deadline = Instant::now() + Duration::from_secs(10);
    while seen.lock().expect("seen").len() < acknowledged.len() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    follower.abort();
    let seen = seen.lock().expect("seen").clone();
    assert!(seen.windows(2).all(|w| w[0].1 < w[1].1), "watch events in order: {seen:?}");
    let watched: BTreeMap<_, _> = seen.iter().map(|(n, rv)| (n.clone(), rv.to_string())).collect();
    assert_eq!(watched, acknowledged, "the watch through the member's death saw every write once");

    // Everything restarts: every write is there, at its resourceVersion, on every replica.
    drop(clients);
    replicas.clear();
    cluster.stop();
    cluster.start_stopped().unwrap_or_else(|e| panic!("{e}"));
    let replicas: Vec<Served> = (0..3).map(|i| replica(dir.path(), i, &urls)).collect();
    for served in &replicas {
        let list = listed(&serving_widgets(served).await).await;
        for (name, rv) in load_from.iter().chain(&acknowledged) {
            assert_eq!(list.get(name), Some(rv), "{name} after the restart");
        }
    }
}
