//! `cargo bench --bench write_path`: what the engine's own write path costs, with no
//! network, TLS or disk: the merge patch that `engine_http` watches (one annotation on a
//! widget) sent through the engine's router in process, memory store, 1,000 widgets.
//!
//! Prints p50/p99 of the request, request in to response body out, with the server's two
//! runtime workers and then with one:
//! - back to back, as a busy server runs it;
//! - with 5 ms of idle before each, as the watch benchmark paces its writes: waking idle
//!   cores and cold caches are then part of every write, and this is the engine's share of
//!   a watcher's latency (the bare floor server of `engine_http` does almost none of it);
//! - the same after idle, but with a patch that changes nothing: every step of the request
//!   (decode, merge, managed fields, validation, response) except the commit, which the
//!   engine skips for an unchanged object. The difference is what a commit adds.
//!
//! How far the second line sits above the third depends on the VM. On the 2-core VM this
//! was written on, with two workers it was several times the third (289 µs against 49),
//! far more than the commit's own work, and close to it with one worker: there, where the
//! request, the committer thread and the tasks a commit wakes land on the two cores was
//! most of a quiet server's write latency. On another 2-core VM (AMD EPYC) it was 185
//! against 146 µs with two workers and 216 against 166 with one: there, the request's
//! own steps after idle dominate.
//!
//! Figures only; nothing asserts a time.

#[path = "shared/allocator.rs"]
mod allocator;
#[path = "shared/widget.rs"]
mod widget;

use axum::body::Body;
use http::Request;
use kubectl_crd::cluster::registrations::{Establishment, wait_for_established};
use kubectl_crd_engine::{Engine, StorageConfig};
use serde_json::json;
use std::time::{Duration, Instant};
use tower::ServiceExt;

const WIDGETS: &str = "/apis/stable.example.com/v1/namespaces/default/widgets";
const OBJECTS: usize = 1000;
const WARM_WRITES: usize = 5000;
const IDLE_WRITES: usize = 1000;
/// The watch benchmark's pause after each write.
const IDLE: Duration = Duration::from_millis(5);

/// Sends one request; answers its status and how long it took, body read included.
async fn send(router: &axum::Router, req: Request<Body>) -> (http::StatusCode, Duration) {
    let start = Instant::now();
    let res = router.clone().oneshot(req).await.expect("response");
    let status = res.status();
    axum::body::to_bytes(res.into_body(), usize::MAX).await.expect("body");
    (status, start.elapsed())
}

/// `count` watched writes, each after `idle`; their sorted latencies. With `seq` a patch
/// sets a new value each time; without, the same one (the second and later change nothing).
async fn patches(
    router: &axum::Router,
    count: usize,
    idle: Option<Duration>,
    mut seq: Option<&mut u64>,
) -> Vec<Duration> {
    let mut times = Vec::with_capacity(count);
    for k in 0..count {
        if let Some(idle) = idle {
            tokio::time::sleep(idle).await;
        }
        let value = match seq.as_deref_mut() {
            Some(seq) => {
                *seq += 1;
                seq.to_string()
            }
            None => "unchanged".to_string(),
        };
        let patch = json!({"metadata": {"annotations": {"bench/sent": value}}});
        let req = Request::patch(format!("{WIDGETS}/w-{:05}", k % OBJECTS))
            .header("content-type", "application/merge-patch+json")
            .body(Body::from(serde_json::to_vec(&patch).expect("json")))
            .expect("request");
        let (status, took) = send(router, req).await;
        assert!(status.is_success(), "patch: {status}");
        times.push(took);
    }
    times.sort();
    times
}

fn p50_p99(sorted: &[Duration]) -> String {
    let at = |p: f64| sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)];
    format!("{:.0} µs / {:.0} µs", at(0.50).as_secs_f64() * 1e6, at(0.99).as_secs_f64() * 1e6)
}

fn main() {
    // Two workers, as `kubectl crd serve` runs on this 2-core machine, then one: with one,
    // the request, its commit and the next request stay on one core. The requests run on
    // a worker, as the server's do, not on the thread that started the runtime.
    for workers in [2, 1] {
        let runtime =
            tokio::runtime::Builder::new_multi_thread().worker_threads(workers).enable_all().build().expect("runtime");
        runtime.block_on(async { tokio::spawn(measure(workers)).await.expect("the measurement") });
    }
}

async fn measure(workers: usize) {
    let engine = Engine::open(&StorageConfig::Memory).await.expect("engine");
    let router = engine.router();
    let req = Request::post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
        .header("content-type", "application/json")
        .body(Body::from(widget::crd().to_string()))
        .expect("request");
    assert!(send(&router, req).await.0.is_success(), "the CRD");
    // The router dispatches by the engine's current kinds, so it serves widgets as soon as
    // the CRD is Established (the engine routes a kind before announcing it).
    let client = kubectl_crd::cluster::connect::in_process_client(&engine, "default");
    let established = wait_for_established(&client, widget::CRD, Duration::from_secs(10)).await.expect("the CRD");
    assert!(matches!(established, Establishment::Established), "{established:?}");
    for i in 0..OBJECTS {
        let req = Request::post(WIDGETS)
            .header("content-type", "application/json")
            .body(Body::from(widget::widget(i).to_string()))
            .expect("request");
        assert!(send(&router, req).await.0.is_success(), "create");
    }
    let mut seq = 0;
    // Unmeasured: every widget has been patched once, so each measured patch changes an
    // annotation that exists, as the watch benchmark's do after its warm-up.
    patches(&router, OBJECTS, None, Some(&mut seq)).await;
    println!(
        "engine write path in process, {workers} runtime worker{} (merge patch of one annotation, {OBJECTS} widgets, memory store)",
        if workers == 1 { "" } else { "s" }
    );
    let warm = patches(&router, WARM_WRITES, None, Some(&mut seq)).await;
    println!("  {:<38} {} ({WARM_WRITES} writes)", "back to back, p50/p99:", p50_p99(&warm));
    let idle = patches(&router, IDLE_WRITES, Some(IDLE), Some(&mut seq)).await;
    let ms = IDLE.as_millis();
    println!("  {:<38} {} ({IDLE_WRITES} writes)", format!("after {ms} ms idle each, p50/p99:"), p50_p99(&idle));
    // Unmeasured: sets the unchanging value once on every widget.
    patches(&router, OBJECTS, None, None).await;
    let before = engine.store().current_revision().await.expect("revision");
    let unchanged = patches(&router, IDLE_WRITES, Some(IDLE), None).await;
    let after = engine.store().current_revision().await.expect("revision");
    assert_eq!(before, after, "a patch changing nothing commits nothing");
    let label = format!("after {ms} ms idle, changing nothing:");
    println!("  {label:<38} {} ({IDLE_WRITES} writes, no commit)", p50_p99(&unchanged));
}
