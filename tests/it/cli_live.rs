//! The subcommands against a live cluster: `kubectl crd serve` over HTTPS, reached through
//! the kubeconfig it writes (`--kubeconfig`, `KUBECONFIG`, `--context`), with the same
//! scenarios as `cli_local.rs`. The demo is loaded with `--local=DIR` while the server holds
//! DIR, which goes through the server. This file adds what is particular to live clusters:
//! kubeconfig discovery, contexts, credentials, unreachable and slow servers.

use crate::support::cli;

use cli::{Crd, Served, scenarios, write_file};
use tempfile::TempDir;

/// A server over a data directory with the demo loaded, and a runner with its kubeconfig.
fn served_demo() -> (TempDir, Served, Crd) {
    let dir = tempfile::tempdir().expect("tempdir");
    let served = Served::start(dir.path(), &[]);
    let local = format!("--local={}", dir.path().display());
    Crd::new(&[&local]).ok(&["demo"]);
    let c = Crd::new(&["--kubeconfig", &served.kubeconfig.display().to_string()]);
    (dir, served, c)
}

#[test]
fn registrations_live() {
    let (_dir, _served, c) = served_demo();
    scenarios::registrations(&c);
}

#[test]
fn objects_live() {
    let (_dir, _served, c) = served_demo();
    scenarios::objects(&c);
}

#[test]
fn server_tables_live() {
    let (_dir, _served, c) = served_demo();
    scenarios::server_tables(&c);
}

#[test]
fn status_live() {
    let (dir, _served, c) = served_demo();
    scenarios::status(&c, dir.path());
}

#[test]
fn spec_edit_live() {
    let (_dir, _served, c) = served_demo();
    scenarios::spec_edit(&c);
}

#[test]
fn type_slash_name_live() {
    let (_dir, _served, c) = served_demo();
    scenarios::type_slash_name(&c);
}

#[test]
fn scale_live() {
    let (_dir, _served, c) = served_demo();
    scenarios::scale(&c);
}

#[test]
fn apply_live() {
    let (dir, _served, c) = served_demo();
    let work = tempfile::tempdir().expect("tempdir");
    let _ = dir;
    scenarios::apply(&c, work.path());
}

/// An editor that makes the user's change (`sed`) while another writer, the real
/// `kubectl`, changes the object on the server: the edit's save then meets a 409.
fn racing_editor(dir: &std::path::Path, name: &str, sed: &str, kubectl: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\nsed -i '{sed}' \"$1\"\nkubectl {kubectl} >/dev/null\n")).expect("write");
    let mut perms = std::fs::metadata(&path).expect("editor").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&path, perms).expect("chmod");
    path.display().to_string()
}

/// `spec edit` and `status edit` with `--retry-conflicts` re-apply the user's changes on
/// the version another writer made meanwhile, keeping that writer's change; when both
/// changed the same field the edit is refused and kept in its file.
#[test]
fn retried_edits_reapply_only_the_user_s_changes() {
    let (_dir, served, c) = served_demo();
    let work = tempfile::tempdir().expect("tempdir");
    let named = |args: &[&'static str]| -> Vec<&'static str> {
        args.iter().copied().chain(["wd", "widget-010", "-n", "team-c"]).collect()
    };
    let get = || -> serde_json::Value { serde_json::from_str(&c.ok(&named(&["get", "-o", "json"]))).expect("json") };
    let patch = |body: &str, sub: &str| {
        format!(
            "--kubeconfig {} patch widgets.demo.example.com widget-010 -n team-c --type merge {sub} -p '{body}'",
            served.kubeconfig.display()
        )
    };
    let spec_edit = named(&["spec", "edit", "--retry-conflicts"]);

    // The user changes the color while someone scales to 9: both stay.
    let editor =
        racing_editor(work.path(), "color.sh", "s/color: red/color: green/", &patch(r#"{"spec":{"replicas":9}}"#, ""));
    assert_eq!(c.ok_with(&spec_edit, None, &[("KUBE_EDITOR", &editor)]), "widget.demo.example.com/widget-010 edited\n");
    let obj = get();
    assert_eq!((obj["spec"]["color"].as_str(), obj["spec"]["replicas"].as_i64()), (Some("green"), Some(9)));

    // Both change the replicas: refused, the file kept, the other writer's 7 stays.
    let editor = racing_editor(
        work.path(),
        "replicas.sh",
        "s/replicas: 9/replicas: 3/",
        &patch(r#"{"spec":{"replicas":7}}"#, ""),
    );
    let stderr = c.fails_with(&spec_edit, None, &[("KUBE_EDITOR", &editor)], 1);
    assert!(stderr.contains("both your edit and another writer changed spec.replicas"), "{stderr}");
    assert!(c.kept_edit(&stderr).contains("replicas: 3"), "the kept copy holds the edit");
    assert_eq!(get()["spec"]["replicas"], 7);

    // The status: the user's phase and another writer's replicas both stay.
    let status_edit = named(&["status", "edit", "--retry-conflicts"]);
    let editor = racing_editor(
        work.path(),
        "phase.sh",
        "s/phase: Stopped/phase: Edited/",
        &patch(r#"{"status":{"replicas":5}}"#, "--subresource=status"),
    );
    assert_eq!(
        c.ok_with(&status_edit, None, &[("KUBE_EDITOR", &editor)]),
        "widget.demo.example.com/widget-010 status edited\n"
    );
    let obj = get();
    assert_eq!((obj["status"]["phase"].as_str(), obj["status"]["replicas"].as_i64()), (Some("Edited"), Some(5)));
}

/// A kubeconfig with the server's cluster and user under other names, plus contexts.
fn kubeconfig_with_contexts(served: &Served, dir: &std::path::Path) -> String {
    let text = std::fs::read_to_string(&served.kubeconfig).expect("kubeconfig");
    let doc: serde_json::Value = serde_saphyr::from_str(&text).expect("yaml");
    let cluster = &doc["clusters"][0]["cluster"];
    let token = doc["users"][0]["user"]["token"].as_str().expect("token");
    write_file(
        dir,
        "contexts.yaml",
        &format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: dev\n  cluster: {{server: {}, certificate-authority-data: {}}}\n- name: gone\n  cluster: {{server: 'https://127.0.0.1:1'}}\nusers:\n- name: admin\n  user: {{token: {token}}}\n- name: stranger\n  user: {{token: not-the-token-0123456789}}\ncontexts:\n- name: dev\n  context: {{cluster: dev, user: admin, namespace: team-a}}\n- name: gone\n  context: {{cluster: gone, user: admin}}\n- name: wrong-user\n  context: {{cluster: dev, user: stranger}}\ncurrent-context: gone\n",
            cluster["server"].as_str().expect("server"),
            cluster["certificate-authority-data"].as_str().expect("ca"),
        ),
    )
}

#[test]
fn contexts_namespaces_and_kubeconfig_lists_work_as_in_kubectl() {
    let (_dir, served, _c) = served_demo();
    let work = tempfile::tempdir().expect("tempdir");
    let contexts = kubeconfig_with_contexts(&served, work.path());
    // --context picks the cluster, and its namespace is the default one.
    let dev = Crd::new(&["--kubeconfig", &contexts, "--context", "dev"]);
    assert_eq!(dev.ok(&["get", "wd", "-l", "app=widget-001", "-o", "name"]), "widget.demo.example.com/widget-001\n");
    let one =
        serde_json::from_str::<serde_json::Value>(&dev.ok(&["get", "wd", "widget-001", "-o", "json"])).expect("json");
    assert_eq!(one["metadata"]["namespace"], "team-a");
    // KUBECONFIG with several files, a missing one skipped, the first file's current context wins.
    let current_dev = write_file(work.path(), "current.yaml", "apiVersion: v1\nkind: Config\ncurrent-context: dev\n");
    let list = format!("/nonexistent/config:{current_dev}:{contexts}");
    let env = Crd::new(&[]);
    let out = env.ok_with(&["get", "wd", "widget-001", "-o", "name"], None, &[("KUBECONFIG", &list)]);
    assert_eq!(out, "widget.demo.example.com/widget-001\n");

    let unknown = Crd::new(&["--kubeconfig", &contexts, "--context", "prod"]).fails(&["list"], 2);
    assert_eq!(
        unknown,
        "error: context \"prod\" was not found in the kubeconfig; its contexts are: dev, gone, wrong-user. Choose one with --context (see kubectl config get-contexts)\n"
    );
    let unreachable = Crd::new(&["--kubeconfig", &contexts]).fails(&["list"], 1);
    assert!(
        unreachable.starts_with("error: cannot reach the cluster at https://127.0.0.1:1: ")
            && unreachable.contains("Is it running?"),
        "{unreachable}"
    );
    let refused = Crd::new(&["--kubeconfig", &contexts, "--context", "wrong-user"]).fails(&["list"], 1);
    assert!(refused.starts_with("error: the cluster refused our credentials (401 Unauthorized)"), "{refused}");
    let missing = Crd::new(&["--kubeconfig", "/nonexistent/kubeconfig"]).fails(&["list"], 2);
    assert!(missing.starts_with("error: cannot use the kubeconfig /nonexistent/kubeconfig: "), "{missing}");
    let none = Crd::new(&[]).fails_with(&["list"], None, &[("HOME", &work.path().display().to_string())], 2);
    assert!(none.starts_with("error: no kubeconfig found: "), "{none}");
}

#[test]
fn a_server_that_never_answers_times_out_with_the_request_timeout() {
    // Accepts connections (the kernel does) but never speaks TLS.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = silent.local_addr().expect("addr").port();
    let work = tempfile::tempdir().expect("tempdir");
    let kubeconfig = write_file(
        work.path(),
        "silent.yaml",
        &format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: s\n  cluster: {{server: 'https://127.0.0.1:{port}'}}\nusers:\n- name: u\n  user: {{token: t}}\ncontexts:\n- name: s\n  context: {{cluster: s, user: u}}\ncurrent-context: s\n"
        ),
    );
    let started = std::time::Instant::now();
    let stderr = Crd::new(&["--kubeconfig", &kubeconfig, "--request-timeout", "1s"]).fails(&["list"], 1);
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "took {:?}", started.elapsed());
    assert!(stderr.contains(&format!("at https://127.0.0.1:{port}")), "{stderr}");
    assert!(stderr.contains("could not connect to the cluster") && stderr.contains(" within 1s "), "{stderr}");
}
