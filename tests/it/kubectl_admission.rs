//! Admission webhooks as a kubebuilder project installs them, driven by the real `kubectl`
//! against `kubectl crd serve`: a `MutatingWebhookConfiguration` and a
//! `ValidatingWebhookConfiguration` applied from YAML, pointing at a real HTTPS webhook
//! started here, then objects created and refused through them. Passes against
//! kube-apiserver 1.32.13 too (`KUBECTL_CRD_TEST_ORACLE`), whose informers see a new
//! configuration a moment after it is stored: the test waits for the webhooks to act.

use crate::support::crd::CrdBuilder;
use crate::support::https_webhook::{HttpsWebhook, Reply};
use crate::support::kubectl::Server;
use serde_json::{Value, json};
use std::time::Duration;

const GROUP: &str = "webhooked.example.com";

/// The project's webhook: `/mutate` labels every object, `/validate` refuses names
/// starting with `bad`.
fn project_webhook() -> HttpsWebhook {
    HttpsWebhook::start(|path, review| {
        let request = &review["request"];
        let uid = request["uid"].clone();
        let response = if path.starts_with("/mutate") {
            let has_labels = request["object"]["metadata"]["labels"].is_object();
            let op = if has_labels {
                json!({"op": "add", "path": "/metadata/labels/hooked", "value": "yes"})
            } else {
                json!({"op": "add", "path": "/metadata/labels", "value": {"hooked": "yes"}})
            };
            use base64::Engine as _;
            let patch = base64::engine::general_purpose::STANDARD.encode(json!([op]).to_string());
            json!({"uid": uid, "allowed": true, "patchType": "JSONPatch", "patch": patch})
        } else if request["name"].as_str().is_some_and(|n| n.starts_with("bad")) {
            json!({"uid": uid, "allowed": false, "status": {"code": 403, "reason": "Forbidden", "message": "bad names are refused"}})
        } else {
            json!({"uid": uid, "allowed": true})
        };
        Reply::json(200, &json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}))
    })
}

fn configurations(webhook: &HttpsWebhook) -> String {
    let hook = |kind: &str, name: &str, path: &str| {
        format!(
            "apiVersion: admissionregistration.k8s.io/v1
kind: {kind}
metadata:
  name: {name}
webhooks:
- name: {path}.widgets.{GROUP}
  admissionReviewVersions: [v1]
  clientConfig:
    url: {url}
    caBundle: {ca}
  failurePolicy: Fail
  sideEffects: None
  rules:
  - apiGroups: [{GROUP}]
    apiVersions: [v1]
    operations: [CREATE, UPDATE]
    resources: [widgets]
",
            url = webhook.url(path),
            ca = webhook.ca_bundle()
        )
    };
    [
        hook("MutatingWebhookConfiguration", "project-mutating", "mutate"),
        hook("ValidatingWebhookConfiguration", "project-validating", "validate"),
    ]
    .join("---\n")
}

fn widget(name: &str) -> Value {
    json!({"apiVersion": format!("{GROUP}/v1"), "kind": "Widget", "metadata": {"name": name, "namespace": "default"}, "spec": {"size": 1}})
}

#[test]
fn kubectl_applies_webhook_configurations_and_objects_pass_through_their_webhooks() {
    let webhook = project_webhook();
    let server = Server::start();
    let file = |name: &str, text: &str| {
        let path = server.dir.path().join(name);
        std::fs::write(&path, text).expect("write");
        path.display().to_string()
    };
    let crd = CrdBuilder::new(GROUP, "Widget").build();
    server.ok(&["create", "-f", &file("crd.json", &crd.to_string())]);
    server.ok(&["wait", "--for=condition=Established", &format!("crd/widgets.{GROUP}"), "--timeout=20s"]);
    let applied = server.ok(&["apply", "-f", &file("webhooks.yaml", &configurations(&webhook))]);
    assert!(
        applied.contains("mutatingwebhookconfiguration.admissionregistration.k8s.io/project-mutating created"),
        "{applied}"
    );
    let listed = server.ok(&["get", "validatingwebhookconfigurations"]);
    assert!(
        listed.lines().any(|l| l.starts_with("project-validating") && l.split_whitespace().nth(1) == Some("1")),
        "{listed}"
    );

    // A bad name is refused by the validating webhook, in kube's words (once the server
    // has taken the configurations in).
    let bad = file("bad.json", &widget("bad-one").to_string());
    let mut refusal = String::new();
    for _ in 0..100 {
        let out = server.kubectl(&["create", "-f", &bad]);
        refusal = String::from_utf8_lossy(&out.stderr).to_string();
        if !out.status.success() {
            break;
        }
        server.ok(&["delete", "-f", &bad]);
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        refusal.contains(&format!(
            "admission webhook \"validate.widgets.{GROUP}\" denied the request: bad names are refused"
        )),
        "{refusal}"
    );
    // A good one is created, labelled by the mutating webhook.
    server.ok(&["apply", "-f", &file("good.json", &widget("good").to_string())]);
    let label = server.ok(&[
        "get",
        &format!("widgets.{GROUP}"),
        "good",
        "-n",
        "default",
        "-o",
        "jsonpath={.metadata.labels.hooked}",
    ]);
    assert_eq!(label, "yes");
    // `kubectl crd describe` shows the webhooks the CRD's objects go through.
    let described = std::process::Command::new(env!("CARGO_BIN_EXE_kubectl-crd"))
        .arg("--kubeconfig")
        .arg(&server.kubeconfig)
        .args(["describe", &format!("widgets.{GROUP}")])
        .output()
        .expect("the plugin runs");
    let text = String::from_utf8_lossy(&described.stdout);
    assert!(described.status.success(), "{}", String::from_utf8_lossy(&described.stderr));
    let row =
        |kind: &str| text.lines().map(|l| l.split_whitespace().collect::<Vec<_>>()).find(|w| w.first() == Some(&kind));
    let mutating = row("mutating").unwrap_or_else(|| panic!("{text}"));
    let url = webhook.url("mutate");
    let expected =
        ["mutating", "project-mutating", &format!("mutate.widgets.{GROUP}"), "CREATE,UPDATE", "widgets", "Fail", &url];
    assert_eq!(mutating, expected, "{text}");
    assert!(row("validating").is_some(), "{text}");

    let paths: Vec<String> = webhook.received().iter().map(|r| r.path.clone()).collect();
    assert!(
        paths.iter().any(|p| p == "/mutate?timeout=10s") && paths.iter().any(|p| p == "/validate?timeout=10s"),
        "{paths:?}"
    );
}
