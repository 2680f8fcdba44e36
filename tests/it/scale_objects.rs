//! The `scale` bench's "many objects" workload (`benches/shared/objects.rs`) at a CI size,
//! against a durable engine in process: every create and update answered, the pages
//! covering every object once and in order, the whole list streamed with every item, watch
//! events arriving, and everything there after a restart. Correctness only; the bench
//! (`cargo bench --bench scale -- objects`) measures the times and the memory.

#[path = "../../benches/shared/objects.rs"]
mod objects;

use kubectl_crd_testing::TestCluster;
use objects::{create_generation, update_generation};

/// Objects loaded (the bench's quick mode loads 50,000 over HTTPS in release; a debug
/// build in process does a fifth in about as long).
const N: usize = 10_000;
const WRITERS: usize = 16;

async fn names_after(dir: &std::path::Path) -> usize {
    let cluster = TestCluster::builder().durable(dir).start().await.expect("the cluster reopens");
    let (names, _) = objects::page_through(&cluster.client(), "loads", 500).await;
    let count = names.len();
    cluster.shutdown().await;
    count
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_objects_are_written_paged_listed_watched_and_kept() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = TestCluster::builder().durable(dir.path()).start().await.expect("cluster");
    let client = cluster.client();
    objects::create_kind(&client, "loads", "Load").await;

    let loaded = objects::write(&client, "loads", "Load", 0..N, create_generation, usize::MAX, WRITERS).await;
    assert_eq!((loaded.count, loaded.errors), (N, 0), "{:?}", loaded.first_error);

    let (names, pages) = objects::page_through(&client, "loads", 500).await;
    assert_eq!(names.len(), N);
    assert_eq!(pages.len(), N / 500);
    assert!(names.windows(2).all(|w| w[0] < w[1]), "pages in order, each name once");
    assert_eq!(names.first().map(String::as_str), Some("load-0000000"));

    let (bytes, items, _) = objects::read_whole_list(&client, "loads", || {}).await;
    assert_eq!(items, N);
    assert!(bytes > N * 500, "{bytes} bytes for {N} objects");

    let latencies = objects::watch_latency(&client, "loads", "Load", N, 20).await;
    assert_eq!(latencies.len(), 20);

    let churned = objects::write(&client, "loads", "Load", 0..N, update_generation, N / 10, WRITERS).await;
    assert_eq!((churned.count, churned.errors), (N, 0), "{:?}", churned.first_error);
    let (after_churn, _) = objects::page_through(&client, "loads", 500).await;
    assert_eq!(after_churn.len(), N + 20);

    drop(client);
    cluster.shutdown().await;
    assert_eq!(names_after(dir.path()).await, N + 20, "every object after a restart");
}
