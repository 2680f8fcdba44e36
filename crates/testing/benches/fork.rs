//! `cargo bench -p kubectl-crd-testing --bench fork`: what a test suite pays for its clusters.
//!
//! Prints the time to start a cluster; for clusters seeded with 1,000 and 10,000 custom
//! resources, the time to snapshot one and to fork the snapshot into a ready cluster, next
//! to a floor measured here on the same objects — cloning them as a `Vec<serde_json::Value>`,
//! the least a copy of a seeded state in a test could cost — and the ratio of the two; the
//! heap an idle cluster holds; and 100 clusters started at once. Figures only: no assertion
//! on time (ratios against the floor are what to compare across machines).

use kube::api::{Api, ApiResource, DynamicObject, ListParams};
use kube::core::GroupVersionKind;
use kubectl_crd_testing::{Snapshot, TestCluster};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// The process's resident memory in bytes (Linux; `None` elsewhere), for the memory of an
/// idle cluster. The workspace forbids `unsafe`, so no counting allocator: RSS it is.
fn resident() -> Option<usize> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: usize = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// The integration tests' seed: the Gadget CRD (a default, a CEL rule, `/status`), one gadget
/// and its namespace.
const SEED: &str = include_str!("../tests/it/seed.yaml");

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn micros(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}

/// A cluster with the seed and `n` more gadgets (a realistic ~600-byte object each), in `default`.
async fn seeded(n: usize) -> TestCluster {
    let cluster = TestCluster::start().await.expect("starts");
    cluster.install_yaml(SEED).await.expect("seed");
    let items: Vec<Value> = (0..n)
        .map(|i| {
            json!({
                "apiVersion": "example.com/v1", "kind": "Gadget",
                "metadata": {"name": format!("gadget-{i:05}"), "labels": {"app": "bench", "shard": (i % 8).to_string()}},
                "spec": {"size": i, "labels": {"team": "storage", "tier": "gold", "zone": "eu-west-1a"}},
                "status": {"phase": if i % 2 == 0 { "Ready" } else { "Pending" }},
            })
        })
        .collect();
    let list = json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string();
    cluster.install_yaml(&list).await.expect("seed");
    cluster
}

async fn fork_figures(n: usize) {
    let cluster = seeded(n).await;
    let api: Api<DynamicObject> = Api::default_namespaced_with(cluster.client(), &gadgets());
    let listed = api.list(&ListParams::default()).await.expect("list");
    assert_eq!(listed.items.len(), n);
    let values: Vec<Value> = listed.items.iter().map(|o| serde_json::to_value(o).expect("json")).collect();
    let rounds = if n > 1000 { 20 } else { 100 };
    let floor = median((0..rounds).map(|_| timed(|| drop(std::hint::black_box(values.clone())))).collect());

    let mut snapshots = Vec::new();
    for _ in 0..rounds {
        let started = Instant::now();
        drop(cluster.snapshot().await.expect("snapshot"));
        snapshots.push(started.elapsed());
    }
    let snapshot_time = median(snapshots);
    let snapshot: Snapshot = cluster.snapshot().await.expect("snapshot");
    let mut forks = Vec::new();
    for _ in 0..rounds {
        let started = Instant::now();
        let fork = snapshot.fork().await.expect("fork");
        forks.push(started.elapsed());
        drop(fork);
    }
    let fork_time = median(forks);
    // A fork that is used: fork, one write, one read of everything.
    let mut used = Vec::new();
    for i in 0..rounds.min(20) {
        let started = Instant::now();
        let fork = snapshot.fork().await.expect("fork");
        let api: Api<DynamicObject> = Api::default_namespaced_with(fork.client(), &gadgets());
        let patch = kube::api::Patch::Merge(json!({"spec": {"size": i}}));
        api.patch("gadget-00000", &Default::default(), &patch).await.expect("patch");
        used.push(started.elapsed());
        drop(fork);
    }
    let per_thousand = |d: Duration| d.mul_f64(1000.0 / n as f64);
    println!(
        "{n:>6} objects: snapshot {}, fork {} ({} per 1,000), fork + a write {}; floor (clone as Vec<Value>) {} ({} per 1,000); fork / floor = {:.3}",
        micros(snapshot_time),
        micros(fork_time),
        micros(per_thousand(fork_time)),
        micros(median(used)),
        micros(floor),
        micros(per_thousand(floor)),
        fork_time.as_secs_f64() / floor.as_secs_f64(),
    );
}

/// The gadget kind, for a dynamic API.
fn gadgets() -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("example.com", "v1", "Gadget"), "gadgets")
}

fn timed(f: impl FnOnce()) -> Duration {
    let started = Instant::now();
    f();
    started.elapsed()
}

async fn start_figures() {
    drop(TestCluster::start().await.expect("warm-up"));
    let mut times = Vec::new();
    for _ in 0..100 {
        let started = Instant::now();
        let cluster = TestCluster::start().await.expect("starts");
        times.push(started.elapsed());
        drop(cluster);
    }
    let fastest = times.iter().min().copied().unwrap_or_default();
    println!("start: {} median, {} fastest (of 100)", micros(median(times)), micros(fastest));

    tokio::time::sleep(Duration::from_millis(100)).await;
    let before = resident();
    let clusters: Vec<TestCluster> =
        futures::future::try_join_all((0..100).map(|_| TestCluster::start())).await.expect("starts");
    let started = Instant::now();
    let more: Vec<TestCluster> =
        futures::future::try_join_all((0..100).map(|_| TestCluster::start())).await.expect("starts");
    let parallel = started.elapsed();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let per_cluster = match (before, resident()) {
        (Some(before), Some(after)) => format!("{:.0} KiB", after.saturating_sub(before) as f64 / 200.0 / 1024.0),
        _ => "n/a".into(),
    };
    println!(
        "100 clusters started at once: {:.1} ms; resident memory per idle cluster: {per_cluster} (of 200 held)",
        parallel.as_secs_f64() * 1e3
    );
    drop((clusters, more));
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    runtime.block_on(async {
        start_figures().await;
        fork_figures(1_000).await;
        fork_figures(10_000).await;
    });
}
