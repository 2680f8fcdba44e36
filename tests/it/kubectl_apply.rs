//! `kubectl apply`, server-side and client-side, against `kubectl crd serve`: creation,
//! updates, pruning of what a manifest stops setting, conflicts between managers and
//! `--force-conflicts`, and the move from client-side to server-side apply.

use crate::support;

use serde_json::Value;
use support::kubectl::Server;

fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path.display().to_string()
}

/// A server with the Widget CRD of reference 06 established.
fn server_with_widgets() -> (Server, tempfile::TempDir) {
    let server = Server::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let crd = support::reference::load("06").request.body.expect("a body");
    let crd = write(dir.path(), "crd.json", std::str::from_utf8(&crd).expect("utf8"));
    server.ok(&["apply", "--server-side", "-f", &crd]);
    server.ok(&["wait", "--for=condition=Established", "crd/widgets.stable.example.com", "--timeout=20s"]);
    (server, dir)
}

fn widget(spec: &str) -> String {
    format!(
        "apiVersion: stable.example.com/v1\nkind: Widget\nmetadata:\n  name: w1\n  labels: {{app: demo}}\nspec:\n{spec}"
    )
}

fn get(server: &Server) -> Value {
    serde_json::from_str(&server.ok(&["get", "widget", "w1", "-o", "json", "--show-managed-fields"])).expect("json")
}

fn entry<'a>(obj: &'a Value, manager: &str) -> &'a Value {
    obj["metadata"]["managedFields"]
        .as_array()
        .expect("managedFields")
        .iter()
        .find(|e| e["manager"] == manager)
        .unwrap_or_else(|| panic!("no entry for {manager} in {obj}"))
}

#[test]
fn server_side_apply_creates_updates_and_prunes() {
    let (server, dir) = server_with_widgets();
    let file = write(dir.path(), "w1.yaml", &widget("  size: 3\n  color: red\n"));
    let out = server.ok(&["apply", "--server-side", "-f", &file]);
    assert_eq!(out, "widget.stable.example.com/w1 serverside-applied\n");
    let obj = get(&server);
    assert_eq!(obj["spec"], serde_json::json!({"size": 3, "color": "red"}));
    let e = entry(&obj, "kubectl");
    assert_eq!(e["operation"], "Apply");
    assert_eq!(
        e["fieldsV1"],
        serde_json::json!({"f:metadata": {"f:labels": {"f:app": {}}}, "f:spec": {"f:color": {}, "f:size": {}}})
    );

    // The manifest stops setting the color and sets replicas: the color goes.
    let file = write(dir.path(), "w1.yaml", &widget("  size: 3\n  replicas: 2\n"));
    server.ok(&["apply", "--server-side", "-f", &file]);
    assert_eq!(get(&server)["spec"], serde_json::json!({"size": 3, "replicas": 2}));

    // Applying again changes nothing, not even the resourceVersion.
    let before = get(&server)["metadata"]["resourceVersion"].clone();
    server.ok(&["apply", "--server-side", "-f", &file]);
    assert_eq!(get(&server)["metadata"]["resourceVersion"], before);
}

#[test]
fn a_conflict_with_client_side_apply_is_reported_then_forced() {
    let (server, dir) = server_with_widgets();
    let file = write(dir.path(), "w1.yaml", &widget("  size: 3\n  replicas: 1\n"));
    assert_eq!(server.ok(&["apply", "-f", &file]), "widget.stable.example.com/w1 created\n");
    let obj = get(&server);
    assert_eq!(entry(&obj, "kubectl-client-side-apply")["operation"], "Update");
    assert!(obj["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"].is_string());

    // Client-side apply of a change: a merge patch computed from the annotation.
    let file = write(dir.path(), "w1.yaml", &widget("  size: 4\n  replicas: 1\n"));
    assert_eq!(server.ok(&["apply", "-f", &file]), "widget.stable.example.com/w1 configured\n");
    assert_eq!(get(&server)["spec"]["size"], 4);

    // Another manager applying a different replicas conflicts.
    let other = write(dir.path(), "other.yaml", &widget("  replicas: 5\n"));
    let out = server.kubectl(&["apply", "--server-side", "--field-manager=other", "-f", &other]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "Apply failed with 1 conflict: conflict with \"kubectl-client-side-apply\" using stable.example.com/v1: .spec.replicas"
        ),
        "{stderr}"
    );
    assert_eq!(get(&server)["spec"]["replicas"], 1);

    // Forced, the fields are taken; kubectl then migrates what client-side apply owned to
    // the server-side manager and applies again, so what the manifest does not set goes.
    server.ok(&["apply", "--server-side", "--field-manager=other", "--force-conflicts", "-f", &other]);
    let obj = get(&server);
    assert_eq!(obj["spec"], serde_json::json!({"replicas": 5}));
    assert!(obj["metadata"].get("annotations").is_none(), "the client-side annotation went with the migration");
    let entries = obj["metadata"]["managedFields"].as_array().expect("entries");
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["manager"], "other");
    assert_eq!(entries[0]["operation"], "Apply");
    assert_eq!(
        entries[0]["fieldsV1"],
        serde_json::json!({"f:metadata": {"f:labels": {"f:app": {}}}, "f:spec": {"f:replicas": {}}})
    );
}

#[test]
fn kubectl_moves_from_client_side_to_server_side_apply_without_conflicts() {
    let (server, dir) = server_with_widgets();
    let file = write(dir.path(), "w1.yaml", &widget("  size: 3\n  replicas: 1\n"));
    server.ok(&["apply", "-f", &file]);

    // kubectl's own server-side apply may take what its client-side apply set.
    let file = write(dir.path(), "w1.yaml", &widget("  size: 3\n  replicas: 2\n"));
    assert_eq!(
        server.ok(&["apply", "--server-side", "-f", &file]),
        "widget.stable.example.com/w1 serverside-applied\n"
    );
    let obj = get(&server);
    assert_eq!(obj["spec"]["replicas"], 2);
    let last: Value = serde_json::from_str(
        obj["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
            .as_str()
            .expect("annotation"),
    )
    .expect("json");
    assert_eq!(last["spec"]["replicas"], 2, "the client-side annotation follows the server-side apply");
}

/// Client-side `kubectl apply` of built-in kinds sends strategic merge patches built from
/// the server's OpenAPI: one more finalizer is sent alone (with `$setElementOrder`), a
/// removed secret as a `$patch: delete` item. kube-apiserver 1.32 answered these three
/// applies with the lists asserted here; ours replaced each list with the patch's items,
/// so the first finalizer was lost, and published no patch strategies, so the removed
/// secret stayed.
#[test]
fn client_side_apply_of_built_in_kinds_merges_their_lists() {
    let server = Server::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let config_map = |finalizers: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  namespace: default\n  finalizers: [{finalizers}]\ndata: {{k: v}}\n"
        )
    };
    let account = |secrets: &str| {
        format!(
            "apiVersion: v1\nkind: ServiceAccount\nmetadata: {{name: sa, namespace: default}}\nimagePullSecrets: [{secrets}]\nsecrets: [{secrets}]\n"
        )
    };
    let apply = |name: &str, text: String| server.ok(&["apply", "-f", &write(dir.path(), name, &text)]);
    let field = |what: &str, path: &str| server.ok(&["get", what, "-o", &format!("jsonpath={{{path}}}")]);
    apply("cm1.yaml", config_map("example.com/a"));
    apply("cm2.yaml", config_map("example.com/a, example.com/b"));
    assert_eq!(field("cm/cm", ".metadata.finalizers"), r#"["example.com/a","example.com/b"]"#);
    apply("cm3.yaml", config_map("example.com/b"));
    assert_eq!(field("cm/cm", ".metadata.finalizers"), r#"["example.com/b"]"#);
    apply("sa1.yaml", account("{name: a}, {name: b}"));
    apply("sa2.yaml", account("{name: a}, {name: b}, {name: c}"));
    apply("sa3.yaml", account("{name: a}, {name: c}"));
    assert_eq!(field("sa/sa", ".secrets"), r#"[{"name":"a"},{"name":"c"}]"#);
    assert_eq!(field("sa/sa", ".imagePullSecrets"), r#"[{"name":"a"},{"name":"c"}]"#);
    server.ok(&["patch", "cm", "cm", "--type", "merge", "-p", r#"{"metadata":{"finalizers":null}}"#]);
}
