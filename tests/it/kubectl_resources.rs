//! Custom resources driven by the real `kubectl` against `kubectl crd serve` over HTTPS:
//! apply, get, watch, patch, scale, the status and scale subresources, edit through a
//! scripted editor, and delete with and without orphaning.

use crate::support;

use std::process::Stdio;
use std::time::Duration;
use support::kubectl::{Server, kubectl_for};

fn crd_file(dir: &std::path::Path, prefix: &str) -> String {
    let ex = support::reference::load(prefix);
    let path = dir.join(format!("{prefix}.json"));
    std::fs::write(&path, ex.request.body.expect("a body")).expect("write");
    path.display().to_string()
}

fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path.display().to_string()
}

/// A server with the Widget CRD of reference 06 established.
fn server_with_widgets() -> (Server, tempfile::TempDir) {
    let server = Server::start();
    let dir = tempfile::tempdir().expect("tempdir");
    server.ok(&["apply", "-f", &crd_file(dir.path(), "06")]);
    server.ok(&["wait", "--for=condition=Established", "crd/widgets.stable.example.com", "--timeout=20s"]);
    (server, dir)
}

const W1: &str = "apiVersion: stable.example.com/v1
kind: Widget
metadata:
  name: w1
  labels: {app: demo}
spec:
  color: red
";

fn jsonpath(server: &Server, args: &[&str], path: &str) -> String {
    let mut all = args.to_vec();
    let expr = format!("jsonpath={path}");
    all.extend(["-o", &expr]);
    server.ok(&all)
}

#[test]
fn kubectl_applies_gets_patches_and_scales_a_custom_resource() {
    let (server, dir) = server_with_widgets();
    let w1 = write(dir.path(), "w1.yaml", W1);
    assert!(server.ok(&["apply", "-f", &w1]).contains("widget.stable.example.com/w1 created"));
    assert_eq!(server.ok(&["get", "widgets", "-o", "name"]), "widget.stable.example.com/w1\n");
    assert_eq!(server.ok(&["get", "wd", "w1", "-o", "name"]), "widget.stable.example.com/w1\n");

    server.ok(&["patch", "widget", "w1", "--type=merge", "-p", r#"{"spec":{"size":3}}"#]);
    server.ok(&[
        "patch",
        "widget",
        "w1",
        "--type=json",
        "-p",
        r#"[{"op":"replace","path":"/spec/color","value":"blue"}]"#,
    ]);
    assert_eq!(
        jsonpath(&server, &["get", "widget", "w1"], "{.spec.size} {.spec.color} {.metadata.generation}"),
        "3 blue 3"
    );

    // Scale from 0 (no spec.replicas yet), then with a precondition.
    assert!(server.ok(&["scale", "widget", "w1", "--replicas=2"]).contains("scaled"));
    assert_eq!(jsonpath(&server, &["get", "widget", "w1"], "{.spec.replicas}"), "2");
    server.ok(&["scale", "widget", "w1", "--current-replicas=2", "--replicas=4"]);
    let wrong = server.kubectl(&["scale", "widget", "w1", "--current-replicas=3", "--replicas=9"]);
    assert!(!wrong.status.success(), "a wrong --current-replicas is refused");
    assert_eq!(jsonpath(&server, &["get", "widget", "w1"], "{.spec.replicas}"), "4");

    // The scale subresource as kubectl reads it.
    assert_eq!(
        jsonpath(
            &server,
            &["get", "widget", "w1", "--subresource=scale"],
            "{.kind} {.spec.replicas} {.status.replicas}"
        ),
        "Scale 4 0"
    );
    let negative = server.kubectl(&["scale", "widget", "w1", "--replicas=-1"]);
    assert!(!negative.status.success());
}

#[test]
fn kubectl_writes_status_only_through_the_status_subresource() {
    let (server, dir) = server_with_widgets();
    server.ok(&["apply", "-f", &write(dir.path(), "w1.yaml", W1)]);

    server.ok(&[
        "patch",
        "widget",
        "w1",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"phase":"Ready","replicas":1,"selector":"app=demo"},"spec":{"color":"green"}}"#,
    ]);
    assert_eq!(
        jsonpath(
            &server,
            &["get", "widget", "w1", "--subresource=status"],
            "{.status.phase} {.spec.color} {.metadata.generation}"
        ),
        "Ready red 1",
        "status written, spec change through /status ignored, generation kept"
    );
    // The main endpoint ignores status.
    server.ok(&["patch", "widget", "w1", "--type=merge", "-p", r#"{"status":{"phase":"Lost"}}"#]);
    assert_eq!(jsonpath(&server, &["get", "widget", "w1"], "{.status.phase}"), "Ready");
    // w1 has no spec.replicas yet: kube-apiserver refuses to read its Scale (checked against
    // the oracle); a write through /scale would create them.
    let unscaled = server.kubectl(&["get", "widget", "w1", "--subresource=scale"]);
    assert!(!unscaled.status.success());
    let stderr = String::from_utf8_lossy(&unscaled.stderr);
    assert!(
        stderr.contains(r#"Error from server (InternalError): Internal error occurred: the spec replicas field ".spec.replicas" does not exist"#),
        "{stderr}"
    );
    server.ok(&["patch", "widget", "w1", "--type=merge", "-p", r#"{"spec":{"replicas":1}}"#]);
    assert_eq!(
        jsonpath(&server, &["get", "widget", "w1", "--subresource=scale"], "{.status.replicas} {.status.selector}"),
        "1 app=demo"
    );
}

#[test]
fn kubectl_edit_saves_through_a_scripted_editor() {
    let (server, dir) = server_with_widgets();
    server.ok(&["apply", "-f", &write(dir.path(), "w1.yaml", W1)]);
    let editor = dir.path().join("editor.sh");
    std::fs::write(&editor, "#!/bin/sh\nsed -i 's/color: red/color: green/' \"$1\"\n").expect("editor");
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    let out = kubectl_for(&server.kubeconfig)
        .args(["edit", "widget", "w1"])
        .env("KUBE_EDITOR", &editor)
        .output()
        .expect("kubectl edit");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("edited"));
    assert_eq!(jsonpath(&server, &["get", "widget", "w1"], "{.spec.color} {.metadata.generation}"), "green 2");
}

#[test]
fn kubectl_get_watch_receives_events() {
    let (server, dir) = server_with_widgets();
    // One object before the watch: kubectl prints it from its list and then watches from
    // the list's resourceVersion, so every write made after that line reaches the watch.
    server.ok(&["apply", "-f", &write(dir.path(), "w0.yaml", &W1.replace("name: w1", "name: w0"))]);
    let stderr = tempfile::NamedTempFile::new().expect("a file for kubectl's stderr");
    let mut watch = kubectl_for(&server.kubeconfig)
        .args([
            "get",
            "widgets",
            "-w",
            "--output-watch-events",
            "-o",
            "jsonpath={.type} {.object.metadata.name}{\"\\n\"}",
        ])
        .stdout(Stdio::piped())
        .stderr(stderr.reopen().expect("reopen"))
        .spawn()
        .expect("kubectl get -w");
    let rx = crate::support::cli::lines_of(&mut watch);
    let listed = rx.recv_timeout(Duration::from_secs(20));
    let said = || std::fs::read_to_string(stderr.path()).unwrap_or_default();
    assert_eq!(listed.as_deref(), Ok("ADDED w0"), "kubectl said: {}", said());
    server.ok(&["apply", "-f", &write(dir.path(), "w1.yaml", W1)]);
    server.ok(&["patch", "widget", "w1", "--type=merge", "-p", r#"{"spec":{"size":1}}"#]);
    server.ok(&["delete", "widget", "w1"]);
    let mut seen = Vec::new();
    while seen.len() < 3 {
        match rx.recv_timeout(Duration::from_secs(10)) {
            Ok(line) => seen.push(line),
            Err(_) => break,
        }
    }
    let _ = watch.kill();
    let _ = watch.wait();
    assert_eq!(seen, ["ADDED w1", "MODIFIED w1", "DELETED w1"], "kubectl said: {}", said());
}

#[test]
fn kubectl_delete_cascades_unless_told_to_orphan() {
    let (server, dir) = server_with_widgets();
    server.ok(&["apply", "-f", &write(dir.path(), "w1.yaml", W1)]);
    let uid = jsonpath(&server, &["get", "widget", "w1"], "{.metadata.uid}");
    let dependent = |name: &str, uid: &str| {
        format!(
            "apiVersion: stable.example.com/v1\nkind: Widget\nmetadata:\n  name: {name}\n  ownerReferences:\n  - apiVersion: stable.example.com/v1\n    kind: Widget\n    name: w1\n    uid: {uid}\nspec:\n  color: red\n"
        )
    };
    server.ok(&["apply", "-f", &write(dir.path(), "d1.yaml", &dependent("d1", &uid))]);

    // Orphan: the owner goes, the dependent stays without its owner reference.
    assert!(server.ok(&["delete", "widget", "w1", "--cascade=orphan"]).contains("deleted"));
    server.ok(&["wait", "--for=delete", "widget/w1", "--timeout=20s"]);
    assert_eq!(jsonpath(&server, &["get", "widget", "d1"], "{.metadata.ownerReferences}"), "");

    // Background (the default): the dependent is collected with its owner.
    server.ok(&["apply", "-f", &write(dir.path(), "w1.yaml", W1)]);
    let uid = jsonpath(&server, &["get", "widget", "w1"], "{.metadata.uid}");
    server.ok(&["apply", "-f", &write(dir.path(), "d2.yaml", &dependent("d2", &uid))]);
    server.ok(&["delete", "widget", "w1"]);
    server.ok(&["wait", "--for=delete", "widget/d2", "--timeout=20s"]);
    assert!(server.ok(&["get", "widgets", "-o", "name"]).contains("widget.stable.example.com/d1"));
}
