//! `cargo bench --bench store`: throughput and latency of the store backends.
//!
//! Prints, for the memory and the redb backend: sequential writes/s, writes/s with 16
//! concurrent writers, get latency, the time to list 10,000 keys, and watch delivery
//! latency (from the start of a write to its event reaching a watcher). Figures only; no
//! assertion on time anywhere (tests never assert wall-clock times).

#[path = "shared/allocator.rs"]
mod allocator;

use futures::StreamExt;
use kubectl_crd_engine::store::{ListOptions, LocalStore, Store};
use std::sync::Arc;
use std::time::{Duration, Instant};

const VALUE_BYTES: usize = 512;

fn value(i: usize) -> bytes::Bytes {
    let mut v = format!("{{\"apiVersion\":\"stable.example.com/v1\",\"kind\":\"Widget\",\"i\":{i},\"pad\":\"");
    v.push_str(&"x".repeat(VALUE_BYTES.saturating_sub(v.len() + 2)));
    v.push_str("\"}");
    v.into()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx]
}

fn micros(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}

async fn sequential_writes(s: &dyn Store, n: usize) -> f64 {
    let start = Instant::now();
    for i in 0..n {
        s.create(&format!("/seq/{i:08}"), value(i)).await.expect("create");
    }
    n as f64 / start.elapsed().as_secs_f64()
}

async fn concurrent_writes(s: Arc<dyn Store>, writers: usize, per_writer: usize) -> f64 {
    let start = Instant::now();
    let mut tasks = Vec::new();
    for w in 0..writers {
        let s = Arc::clone(&s);
        tasks.push(tokio::spawn(async move {
            for i in 0..per_writer {
                s.create(&format!("/conc/{w:02}/{i:08}"), value(i)).await.expect("create");
            }
        }));
    }
    for t in tasks {
        t.await.expect("writer");
    }
    (writers * per_writer) as f64 / start.elapsed().as_secs_f64()
}

async fn get_latency(s: &dyn Store, n: usize) -> (Duration, Duration) {
    let mut samples = Vec::with_capacity(n);
    for i in 0..n {
        let key = format!("/list/{:08}", i % 10_000);
        let t = Instant::now();
        let got = s.get(&key).await.expect("get");
        samples.push(t.elapsed());
        assert!(got.is_some());
    }
    samples.sort();
    (percentile(&samples, 0.5), percentile(&samples, 0.99))
}

async fn fill_for_list(s: Arc<dyn Store>) {
    let mut tasks = Vec::new();
    for w in 0..16 {
        let s = Arc::clone(&s);
        tasks.push(tokio::spawn(async move {
            for i in (w..10_000).step_by(16) {
                s.create(&format!("/list/{i:08}"), value(i)).await.expect("create");
            }
        }));
    }
    for t in tasks {
        t.await.expect("filler");
    }
}

async fn list_latency(s: &dyn Store, rounds: usize) -> (Duration, Duration) {
    let mut samples = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let t = Instant::now();
        let page = s.list("/list/", &ListOptions::default()).await.expect("list");
        samples.push(t.elapsed());
        assert_eq!(page.items.len(), 10_000);
    }
    samples.sort();
    (percentile(&samples, 0.5), percentile(&samples, 0.99))
}

async fn watch_latency(s: &dyn Store, n: usize) -> (Duration, Duration) {
    let from = s.current_revision().await.expect("revision");
    let mut watch = s.watch("/watch/", from).await.expect("watch");
    let mut samples = Vec::with_capacity(n);
    for i in 0..n {
        let t = Instant::now();
        s.create(&format!("/watch/{i:08}"), value(i)).await.expect("create");
        let _event = watch.next().await.expect("open").expect("event");
        samples.push(t.elapsed());
    }
    samples.sort();
    (percentile(&samples, 0.5), percentile(&samples, 0.99))
}

async fn bench(name: &str, store: Arc<dyn Store>, sequential: usize) {
    println!("== {name}");
    let seq = sequential_writes(store.as_ref(), sequential).await;
    println!("  sequential writes:           {seq:>10.0} writes/s ({sequential} writes, 1 writer)");
    let conc = concurrent_writes(Arc::clone(&store), 16, 1_000).await;
    println!("  16 concurrent writers:       {conc:>10.0} writes/s (16,000 writes)");
    fill_for_list(Arc::clone(&store)).await;
    let (p50, p99) = get_latency(store.as_ref(), 20_000).await;
    println!("  get latency:                 p50 {}, p99 {}", micros(p50), micros(p99));
    let (p50, p99) = list_latency(store.as_ref(), 50).await;
    println!(
        "  list of 10,000 keys:         p50 {:.2} ms, p99 {:.2} ms",
        p50.as_secs_f64() * 1e3,
        p99.as_secs_f64() * 1e3
    );
    let (p50, p99) = watch_latency(store.as_ref(), 2_000).await;
    println!("  watch delivery (write→event): p50 {}, p99 {}", micros(p50), micros(p99));
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` would pass nothing useful.
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    rt.block_on(async {
        bench("memory", Arc::new(LocalStore::memory()), 50_000).await;
        let dir = tempfile::tempdir_in(
            std::env::var_os("BENCH_DIR").unwrap_or_else(|| std::env::temp_dir().into_os_string()),
        )
        .expect("tempdir");
        let redb = LocalStore::redb(&dir.path().join("bench.redb")).expect("open redb");
        bench("redb (durable: every acknowledged write fsynced)", Arc::new(redb), 2_000).await;
    });
}
