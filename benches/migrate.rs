//! `cargo bench --bench migrate`: the time `kubectl crd migrate run` takes to move 10,000
//! CronTabs (three namespaces, each with a status; 5,000 dependents of another kind; links
//! between CronTabs; a controller stopped and restarted) to a new group and kind, with
//! its verification included, against the local engine (`--local=DIR`) and against
//! `kubectl crd serve` over HTTPS; then the time of a separate `migrate verify`.
//!
//! Loading the objects is not timed. Targets: 10 s locally, 30 s over HTTPS. Figures
//! only; nothing asserts a time.

#[path = "shared/allocator.rs"]
mod allocator;
// Only `Server::start` is used here.
#[allow(dead_code)]
#[path = "../tests/it/support/kubectl.rs"]
mod kubectl_support;
// The migration support builds its CRDs with the one fixture builder, its sibling.
#[allow(dead_code)]
#[path = "../tests/it/support/crd.rs"]
mod crd;
#[path = "../tests/it/support/migrate.rs"]
mod migrate_support;

use migrate_support::*;
use std::time::{Duration, Instant};

const OBJECTS: usize = 10_000;

/// Runs the CLI, timed; prints the steps' own timings (the `✓ step: ... (N.Ns)` lines).
fn timed(args: &[String]) -> Duration {
    let start = Instant::now();
    let out = cli(&strs(args), &[]);
    let took = start.elapsed();
    assert!(out.status.success(), "{}", text(&out));
    for line in String::from_utf8_lossy(&out.stdout).lines().filter(|l| l.starts_with('✓')) {
        let step = line.trim_start_matches("✓ ").split(':').next().unwrap_or_default();
        let secs = line.rsplit_once('(').map(|(_, t)| t.trim_end_matches(')')).unwrap_or_default();
        println!("    {step:<20} {secs}");
    }
    took
}

fn secs(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    println!("migrate {OBJECTS} CronTabs ({} dependents) to a new group and kind, verification included", OBJECTS / 2);

    // Local engine.
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    runtime.block_on(async {
        let conn = open_local(&data).await;
        populate(conn.client(), OBJECTS).await;
        conn.close().await;
    });
    let new = write_json(tmp.path(), "new.json", &new_crd().build());
    let local = vec![format!("--local={}", data.display())];
    let run = timed(&run_args(&local, &new, &tmp.path().join("journal")));
    let mut verify = local.clone();
    verify.extend(["migrate", "verify", "--journal"].map(String::from));
    verify.push(tmp.path().join("journal").display().to_string());
    let verify_only = timed(&verify);
    println!("  local engine (--local):  run {} (target 10 s), verify alone {}", secs(run), secs(verify_only));

    // Over HTTPS.
    let server = kubectl_support::Server::start();
    runtime.block_on(async {
        let kubeconfig = kube::config::Kubeconfig::read_from(&server.kubeconfig).expect("kubeconfig");
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &kube::config::KubeConfigOptions::default())
            .await
            .expect("config");
        let client = kube::Client::try_from(config).expect("client");
        populate(&client, OBJECTS).await;
    });
    let tmp = tempfile::tempdir().expect("tempdir");
    let new = write_json(tmp.path(), "new.json", &new_crd().build());
    let live = vec!["--kubeconfig".to_string(), server.kubeconfig.display().to_string()];
    let run = timed(&run_args(&live, &new, &tmp.path().join("journal")));
    let mut verify = live.clone();
    verify.extend(["migrate", "verify", "--journal"].map(String::from));
    verify.push(tmp.path().join("journal").display().to_string());
    let verify_only = timed(&verify);
    println!("  serve over HTTPS:        run {} (target 30 s), verify alone {}", secs(run), secs(verify_only));
}
