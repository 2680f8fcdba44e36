//! The storage an in-process engine of a test opens: in memory, or, with
//! `KUBECTL_CRD_TEST_STORAGE=etcd`, an etcd of the test's own (Debian's `etcd-server` on
//! loopback, its data in memory where the machine has /dev/shm), so the engine suites check
//! the etcd backend too: `KUBECTL_CRD_TEST_STORAGE=etcd scripts/test.sh -E 'test(/^engine_/)'`.
//!
//! The etcd outlives the engines on it (their controllers run until the process ends), so it
//! stops when the test process exits (nextest runs each test in a process of its own), not
//! when a value is dropped: a watcher shell reads a pipe from this process, and when that
//! pipe closes (at exit, a panic or a kill alike) it kills etcd and removes its data.

use kubectl_crd_engine::StorageConfig;
use kubectl_crd_engine::store::EtcdConfig;
use kubectl_crd_engine::store::etcd_process::EtcdProcess;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;

/// The watchers of the etcds this process started (their stdin is the pipe).
static WATCHERS: Mutex<Vec<Child>> = Mutex::new(Vec::new());

/// Whether the tests run the engine on etcd.
pub fn on_etcd() -> bool {
    std::env::var("KUBECTL_CRD_TEST_STORAGE").as_deref() == Ok("etcd")
}

/// Memory, or a fresh etcd of this test's own (see the module's note).
pub fn test_storage() -> StorageConfig {
    if !on_etcd() {
        return StorageConfig::Memory;
    }
    let shm = std::path::Path::new("/dev/shm");
    let dir = if shm.is_dir() { tempfile::tempdir_in(shm) } else { tempfile::tempdir() }.expect("tempdir");
    let etcd = EtcdProcess::start(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let config = StorageConfig::Etcd(EtcdConfig::new(vec![etcd.url()]));
    let (pid, dir) = (etcd.pid().expect("etcd runs"), dir.keep());
    // From now on the watcher owns etcd and its directory.
    std::mem::forget(etcd);
    let watcher = Command::new("sh")
        .args(["-c", r#"read _; kill -KILL "$1"; while kill -0 "$1" 2>/dev/null; do sleep 0.05; done; rm -rf "$2""#])
        .arg("sh")
        .arg(pid.to_string())
        .arg(&dir)
        .stdin(Stdio::piped())
        // Not the test's output: nextest would wait for the watcher to close it.
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the etcd watcher");
    WATCHERS.lock().unwrap_or_else(|e| e.into_inner()).push(watcher);
    config
}
