//! The subcommands against the local engine: the real binary with `--local=DIR`, the
//! engine opened in-process over redb in a temporary directory, no socket. The scenarios
//! are the same as in `cli_live.rs` (see `cli_common/scenarios.rs`); this file adds what is
//! particular to local mode: the demo, `--local` anywhere on the line, a data directory
//! held by another process, and data surviving from one command to the next.

use crate::support::cli;

use cli::{Crd, Served, scenarios};
use tempfile::TempDir;

/// A data directory with the demo loaded, and a runner for it.
fn demo() -> (TempDir, Crd) {
    let dir = tempfile::tempdir().expect("tempdir");
    let local = format!("--local={}", dir.path().display());
    let c = Crd::new(&[&local]);
    let summary = c.ok(&["demo"]);
    assert!(summary.contains("5 CustomResourceDefinitions\n"), "{summary}");
    (dir, c)
}

#[test]
fn demo_summarises_what_it_loaded_and_runs_again_safely() {
    let dir = tempfile::tempdir().expect("tempdir");
    let local = format!("--local={}", dir.path().display());
    let c = Crd::new(&[&local]);
    cli::assert_text(
        &c.ok(&["demo"]),
        &format!(
            "\
Demo loaded into the local engine in {dir}:
  5 CustomResourceDefinitions
    gadgets.demo.example.com: not established: names not accepted (ShortNamesConflict: \"wd\" is already in use)
  298 custom resources in 5 namespaces and cluster scope (298 created, 0 configured, 0 unchanged)
  1 ConfigMap, and owner references among them (o in the TUI shows the tree)
  legacyjobs.demo.example.com was deleted while legacyjob stuck-job holds a finalizer, so it stays Terminating
Try: kubectl crd --local={dir} list
",
            dir = dir.path().display()
        ),
        "demo",
    );
    let again = c.ok(&["demo"]);
    assert!(
        again.contains(
            "295 custom resources in 5 namespaces and cluster scope (0 created, 0 configured, 295 unchanged)"
        ),
        "{again}"
    );
    assert!(!again.contains("was deleted"), "{again}");
    // Demo refuses to go anywhere but the local engine.
    let stderr = Crd::new(&["--kubeconfig", "/nonexistent"]).fails(&["demo"], 2);
    assert!(stderr.contains("demo loads into the local engine only"), "{stderr}");
}

#[test]
fn registrations_locally() {
    let (_dir, c) = demo();
    scenarios::registrations(&c);
}

#[test]
fn objects_locally() {
    let (_dir, c) = demo();
    scenarios::objects(&c);
}

#[test]
fn server_tables_locally() {
    let (_dir, c) = demo();
    scenarios::server_tables(&c);
}

#[test]
fn status_locally() {
    let (dir, c) = demo();
    scenarios::status(&c, dir.path());
}

#[test]
fn spec_edit_locally() {
    let (_dir, c) = demo();
    scenarios::spec_edit(&c);
}

#[test]
fn type_slash_name_locally() {
    let (_dir, c) = demo();
    scenarios::type_slash_name(&c);
}

#[test]
fn scale_locally() {
    let (_dir, c) = demo();
    scenarios::scale(&c);
}

#[test]
fn apply_locally() {
    let (dir, c) = demo();
    scenarios::apply(&c, dir.path());
}

#[test]
fn local_goes_before_or_after_the_subcommand_and_data_persists() {
    let dir = tempfile::tempdir().expect("tempdir");
    let local = format!("--local={}", dir.path().display());
    let ns = "apiVersion: v1\nkind: Namespace\nmetadata: {name: kept}\n";
    let before = Crd::new(&[]);
    let out = cli::output_bounded(
        {
            let mut cmd = std::process::Command::new(cli::BIN);
            cmd.args([local.as_str(), "apply", "-f", "-"]);
            cmd
        },
        Some(ns),
        std::time::Duration::from_secs(60),
    );
    assert_eq!(cli::assert_success(&["apply"], &out), "namespace/kept created\n");
    drop(before);
    // A new process finds it in the store.
    assert_eq!(Crd::new(&[&local]).ok(&["get", "namespaces", "kept", "-o", "name"]), "namespace/kept\n");
    assert_eq!(Crd::new(&[&local]).ok(&["list"]), "");
}

#[test]
fn a_data_dir_held_by_a_server_that_wrote_its_kubeconfig_elsewhere_is_explained() {
    let dir = tempfile::tempdir().expect("tempdir");
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let kubeconfig = elsewhere.path().join("config");
    let _served = Served::start(dir.path(), &["--write-kubeconfig", &kubeconfig.display().to_string()]);
    let local = format!("--local={}", dir.path().display());
    let started = std::time::Instant::now();
    let stderr = Crd::new(&[&local]).fails(&["list"], 1);
    let pid = std::fs::read_to_string(dir.path().join("holder")).expect("the holder file");
    let pid = pid.lines().next().and_then(|l| l.strip_prefix("serve ")).expect("held by serve");
    assert_eq!(
        stderr,
        format!(
            "error: {dir} is held by 'kubectl crd serve' (process {pid}), which writes its kubeconfig to {kubeconfig}: reach that server with --kubeconfig {kubeconfig}, or stop it to use --local={dir}\n",
            dir = dir.path().display(),
            kubeconfig = kubeconfig.display()
        )
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(3), "said after {:?}", started.elapsed());
}

#[test]
fn local_reaches_the_server_that_holds_the_data() {
    let dir = tempfile::tempdir().expect("tempdir");
    let served = Served::start(dir.path(), &[]);
    let local = format!("--local={}", dir.path().display());
    let c = Crd::new(&[&local]);
    let summary = c.ok(&["demo"]);
    assert!(
        summary.starts_with(&format!(
            "Demo loaded into kubectl crd serve at {} (data in {}):\n",
            served.url,
            dir.path().display()
        )),
        "{summary}"
    );
    // The same data through the server's kubeconfig.
    let live = Crd::new(&["--kubeconfig", &served.kubeconfig.display().to_string()]);
    assert!(live.ok(&["list", "-o", "name"]).contains("widgets.demo.example.com"));
}
