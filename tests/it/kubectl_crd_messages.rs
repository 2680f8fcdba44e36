//! Messages that name what happened, run by the real `kubectl`: a timeout names the time
//! limit that applied (kube's 30 s connect limit when no `--request-timeout` is given, not
//! `0ms`), and a `--local=DIR` held by another `--local` session says so at once.

use crate::support::cli::write_file;
use crate::support::plugin::Plugin;
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

#[test]
fn a_timeout_names_the_limit_that_applied() {
    // Accepts connections (the kernel does) but never speaks TLS.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = silent.local_addr().expect("addr").port();
    let p = Plugin::empty();
    let kubeconfig = write_file(
        p.data.path(),
        "silent.yaml",
        &format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: s\n  cluster: {{server: 'https://127.0.0.1:{port}'}}\nusers:\n- name: u\n  user: {{token: t}}\ncontexts:\n- name: s\n  context: {{cluster: s, user: u}}\ncurrent-context: s\n"
        ),
    );
    for (flags, limit) in [(&["--request-timeout", "2s"][..], "2s"), (&[][..], "30s")] {
        let started = Instant::now();
        let mut args = vec!["crd", "list", "--kubeconfig", &kubeconfig];
        args.extend(flags);
        let out = p.kubectl(&args).output().expect("kubectl crd list");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.starts_with(&format!(
                "error: could not connect to the cluster at https://127.0.0.1:{port} within {limit} (connection and TLS handshake)"
            )),
            "{stderr}"
        );
        assert!(started.elapsed() < Duration::from_secs(45), "took {:?}", started.elapsed());
    }
}

#[test]
fn a_data_dir_held_by_another_local_session_is_said_at_once() {
    let p = Plugin::with_demo();
    // A watch keeps its local engine (and the data directory) open.
    let mut holder = p.crd(&["get", "wd", "-w"]).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().expect("watch");
    let mut lines = BufReader::new(holder.stdout.take().expect("stdout")).lines();
    assert!(lines.next().is_some_and(|l| l.is_ok_and(|l| l.starts_with("NAME"))), "the watch started");
    let started = Instant::now();
    let (_, stderr) = p.exits(&["list"], 1);
    let elapsed = started.elapsed();
    let _ = holder.kill();
    let _ = holder.wait();
    assert_eq!(
        stderr,
        format!(
            "error: {dir} is in use by another 'kubectl crd --local' session (process {pid}): the local engine's data is open in one process at a time. Wait for it to end, or run 'kubectl crd serve --data-dir {dir}' so that several commands share it\n",
            dir = p.data.path().display(),
            pid = holder.id()
        )
    );
    assert!(elapsed < Duration::from_secs(3), "said after {elapsed:?}");
}
