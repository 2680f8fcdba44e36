//! What a create asks etcd, with `serve` replicas on a real etcd: the namespace and the CRD
//! are read from the replica's watch cache, as kube-apiserver reads them from its informers,
//! so a create costs etcd its write and no read (counted on etcd's own metrics); yet a
//! namespace the cache has not heard of yet (created through another replica a moment
//! before) is read from etcd rather than refused, and one deleted through this replica is
//! refused at once, as kube's NamespaceLifecycle admission answers both.

use super::etcd::{GROUP, client, etcd_in, widgets_resource};
use crate::support::cli::Served;
use crate::support::crd::CrdBuilder;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, PostParams};
use kubectl_crd_engine::store::etcd_process::EtcdProcess;
use serde_json::json;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

fn replica(dir: &Path, name: &str, etcd: &EtcdProcess) -> Served {
    Served::start(&dir.join(name), &["--storage", "etcd", "--etcd-servers", &etcd.url()])
}

/// How many Range requests etcd has served (its `grpc_server_started_total` for Range).
fn etcd_ranges(etcd: &EtcdProcess) -> u64 {
    let addr = etcd.url().trim_start_matches("http://").to_string();
    let mut conn = TcpStream::connect(&addr).expect("connect to etcd");
    conn.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
    conn.write_all(format!("GET /metrics HTTP/1.0\r\nHost: {addr}\r\n\r\n").as_bytes()).expect("send");
    let mut metrics = String::new();
    conn.read_to_string(&mut metrics).expect("read");
    let line = metrics
        .lines()
        .find(|l| l.starts_with("grpc_server_started_total{") && l.contains("grpc_method=\"Range\""))
        .unwrap_or_else(|| panic!("no Range counter in etcd's metrics"));
    line.rsplit(' ').next().and_then(|n| n.parse().ok()).expect("a count")
}

/// The Widget CRD created through `clients[0]`, once every client's replica serves it.
async fn widgets_served(clients: &[kube::Client]) {
    let crd: CustomResourceDefinition =
        serde_json::from_value(CrdBuilder::new(GROUP, "Widget").build()).expect("a CRD");
    Api::<CustomResourceDefinition>::all(clients[0].clone()).create(&PostParams::default(), &crd).await.expect("CRD");
    for c in clients {
        let deadline = Instant::now() + Duration::from_secs(20);
        while widgets_in(c, "default").list(&ListParams::default()).await.is_err() {
            assert!(Instant::now() < deadline, "a replica never served widgets");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

fn widgets_in(client: &kube::Client, ns: &str) -> Api<DynamicObject> {
    Api::namespaced_with(client.clone(), ns, &widgets_resource())
}

fn widget(name: &str) -> DynamicObject {
    DynamicObject::new(name, &widgets_resource()).data(json!({"spec": {"size": 1}}))
}

fn namespace(name: &str) -> Namespace {
    serde_json::from_value(json!({"metadata": {"name": name}})).expect("a namespace")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_create_reads_neither_the_namespace_nor_the_crd_from_etcd() {
    const CREATES: u64 = 40;
    let dir = tempfile::tempdir().expect("tempdir");
    let etcd = etcd_in(dir.path());
    let served = replica(dir.path(), "a", &etcd);
    let client = client(&served).await;
    widgets_served(std::slice::from_ref(&client)).await;
    let api = widgets_in(&client, "default");
    // One create first: whatever is read once (and kept) is not what this test counts.
    api.create(&PostParams::default(), &widget("first")).await.expect("create");

    let before = etcd_ranges(&etcd);
    for i in 0..CREATES {
        api.create(&PostParams::default(), &widget(&format!("w{i}"))).await.expect("create");
    }
    let ranges = etcd_ranges(&etcd) - before;
    // Reading the namespace and the CRD from etcd made two per create; the replica's
    // background work (its controllers, its election) may read now and then.
    assert!(ranges < CREATES / 4, "{ranges} etcd reads for {CREATES} creates");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_namespace_is_read_from_etcd_when_the_cache_has_not_heard_of_it_or_may_be_stale() {
    const ROUNDS: usize = 10;
    let dir = tempfile::tempdir().expect("tempdir");
    let etcd = etcd_in(dir.path());
    let (a, b) = (replica(dir.path(), "a", &etcd), replica(dir.path(), "b", &etcd));
    let clients = [client(&a).await, client(&b).await];
    widgets_served(&clients).await;
    let (on_a, on_b) = (Api::<Namespace>::all(clients[0].clone()), &clients[1]);

    for i in 0..ROUNDS {
        // Created through A, used through B at once: B's cache may hear of it later.
        let ns = format!("team-{i}");
        on_a.create(&PostParams::default(), &namespace(&ns)).await.expect("namespace");
        let created = widgets_in(on_b, &ns).create(&PostParams::default(), &widget("w")).await;
        assert!(created.is_ok(), "a create in {ns} through B right after A created it: {created:?}");

        // Deleted through A, used through A at once: A's cache may still say Active.
        on_a.delete(&ns, &DeleteParams::default()).await.expect("delete");
        let refused = widgets_in(&clients[0], &ns).create(&PostParams::default(), &widget("late")).await;
        match refused {
            Err(kube::Error::Api(status)) => assert_eq!(
                (status.code, status.message.as_str()),
                (
                    403,
                    format!(
                        "widgets.{GROUP} \"late\" is forbidden: unable to create new content in namespace {ns} because it is being terminated"
                    )
                    .as_str()
                ),
            ),
            other => panic!("a create in {ns} right after its delete through the same replica: {other:?}"),
        }
    }
}
