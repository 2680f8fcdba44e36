//! `cargo bench --bench validate`: how many objects per second `kubectl crd validate`
//! checks ([`kubectl_crd::validate::validate`]: server-side dry runs through the in-memory
//! engine's router) for the example CRD of `examples/crdtest`, whose schema has CEL rules
//! (one on `spec`, a transition rule on `spec.version`), on one core (a current-thread
//! runtime). The target is 20,000 objects/s.
//!
//! Printed beside it, measured here on the same objects:
//! - the same CRD with its CEL rules taken out: what CEL adds;
//! - a floor: each object serialized to JSON and parsed back once, the least any check
//!   over the engine's HTTP surface does (the engine parses the body and writes an answer).
//!
//! Each figure is the best of a few runs of the whole call (engine start and CRD
//! registration included, a few milliseconds). Figures only; nothing asserts a rate.
//!
//! On the 2-core VM this was written on (sharing it with a compile): about 14,500 objects/s
//! with CEL (69 µs each), 28,600 without: CEL was 46% of an object's time, most of it not
//! CEL at all but a fresh 32 MiB stack mapped, guarded, faulted in and unmapped for every
//! request. Shallow rules now run on the caller's stack (see `celcost::on_stack_for`):
//! 22,800 objects/s with CEL (43.8 µs), 27,900 without, on a quiet machine; CEL's share
//! 18%, and 19% in a run beside a compile (14,300 and 17,700). The rest is many small
//! costs along the request: allocation, JSON parsing and writing, managed fields.

#[path = "shared/allocator.rs"]
mod allocator;

use kubectl_crd::cluster::apply::Document;
use kubectl_crd::validate::{ValidateOptions, validate};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const OBJECTS: usize = 5000;
const RUNS: usize = 3;

fn crd(with_cel: bool) -> Document {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/crdtest/gizmos.crd.yaml");
    let text = std::fs::read_to_string(path).expect("the example CRD");
    let mut value: Value = serde_saphyr::from_str(&text).expect("YAML");
    if !with_cel {
        strip_rules(&mut value);
    }
    Document { origin: path.into(), value }
}

fn strip_rules(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.remove("x-kubernetes-validations");
            map.values_mut().for_each(strip_rules);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_rules),
        _ => {}
    }
}

/// Gizmos; one in ten breaks the CEL rule on `spec` (and passes without it).
fn objects() -> Vec<Document> {
    (0..OBJECTS)
        .map(|i| {
            let (min, max) = if i % 10 == 0 { (5, 2) } else { (1, 3 + i % 5) };
            let value = json!({"apiVersion": "example.com/v1", "kind": "Gizmo",
                "metadata": {"name": format!("g-{i:05}"), "namespace": "bench", "labels": {"app": "bench"}},
                "spec": {"size": 1 + i % 10, "minReplicas": min, "maxReplicas": max, "version": "v1"}});
            Document { origin: format!("object {i}"), value }
        })
        .collect()
}

fn best(mut run: impl FnMut() -> Duration) -> Duration {
    (0..RUNS).map(|_| run()).min().unwrap_or_default()
}

fn rate(took: Duration) -> f64 {
    OBJECTS as f64 / took.as_secs_f64()
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let objects = objects();
    let check = |crd: Document, refused: usize| {
        best(|| {
            let started = Instant::now();
            let report = runtime
                .block_on(validate(std::slice::from_ref(&crd), &objects, &[], ValidateOptions::default()))
                .expect("validates");
            let took = started.elapsed();
            assert!(report.crds[0].valid, "{}", report.crds[0].verdict());
            assert_eq!(report.objects.iter().filter(|c| !c.valid).count(), refused);
            took
        })
    };
    let with_cel = check(crd(true), OBJECTS / 10);
    let without_cel = check(crd(false), 0);
    let floor = best(|| {
        let started = Instant::now();
        for doc in &objects {
            let bytes = serde_json::to_vec(&doc.value).expect("json");
            let back: Value = serde_json::from_slice(&bytes).expect("json");
            std::hint::black_box(back);
        }
        started.elapsed()
    });
    println!("validate, {OBJECTS} objects, one core (best of {RUNS}):");
    println!(
        "  with CEL rules      {:>10.0} objects/s ({:.1} µs each; target 20,000/s)",
        rate(with_cel),
        micros(with_cel)
    );
    println!("  without CEL rules   {:>10.0} objects/s ({:.1} µs each)", rate(without_cel), micros(without_cel));
    println!("  floor: JSON round trip {:>7.0} objects/s ({:.2} µs each)", rate(floor), micros(floor));
    println!(
        "  with CEL / floor: {:.1}x slower; CEL's share: {:.0}%",
        with_cel.as_secs_f64() / floor.as_secs_f64(),
        100.0 * (1.0 - without_cel.as_secs_f64() / with_cel.as_secs_f64())
    );
}

fn micros(took: Duration) -> f64 {
    took.as_secs_f64() * 1e6 / OBJECTS as f64
}
