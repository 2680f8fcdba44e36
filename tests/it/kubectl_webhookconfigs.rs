//! Admission webhook configurations driven by the real `kubectl` (v1.32) against
//! `kubectl crd serve`: a kubebuilder-shaped manifest (one ValidatingWebhookConfiguration and
//! one MutatingWebhookConfiguration, as `make deploy` installs them) applied, listed with
//! kube's printer columns, applied again with a change, explained from the OpenAPI, refused
//! when invalid in kube-apiserver's words, and deleted. The same commands against
//! kube-apiserver 1.32.13 print the same text.

use crate::support;

use support::kubectl::Server;

/// One webhook configuration as kubebuilder's `config/webhook/manifests.yaml` writes it: a
/// webhook for CronJobs of batch.example.com behind the operator's webhook service.
fn configuration(kind: &str, name: &str, hook: &str, verb: &str, failure_policy: &str) -> String {
    format!(
        "apiVersion: admissionregistration.k8s.io/v1\nkind: {kind}\nmetadata:\n  name: {name}\nwebhooks:\n\
         - admissionReviewVersions:\n  - v1\n  clientConfig:\n    service:\n      name: webhook-service\n      \
         namespace: system\n      path: /{verb}-batch-example-com-v1-cronjob\n  failurePolicy: {failure_policy}\n  \
         name: {hook}\n  rules:\n  - apiGroups:\n    - batch.example.com\n    apiVersions:\n    - v1\n    \
         operations:\n    - CREATE\n    - UPDATE\n    resources:\n    - cronjobs\n  sideEffects: None\n"
    )
}

/// The manifest `make deploy` applies: both configurations.
fn manifest(failure_policy: &str) -> String {
    let mutating = configuration(
        "MutatingWebhookConfiguration",
        "mutating-webhook-configuration",
        "mcronjob-v1.kb.io",
        "mutate",
        failure_policy,
    );
    let validating = configuration(
        "ValidatingWebhookConfiguration",
        "validating-webhook-configuration",
        "vcronjob-v1.kb.io",
        "validate",
        failure_policy,
    );
    format!("---\n{mutating}---\n{validating}")
}

/// `kubectl apply -f -` of `yaml`: whether it succeeded, and its output (or error text).
fn apply(server: &Server, yaml: &str) -> (bool, String) {
    server.with_stdin(&["apply", "-f", "-"], yaml)
}

/// kubectl's table with the AGE column (the last) masked.
fn masked(table: &str) -> Vec<Vec<String>> {
    let rows = table.lines().filter(|l| !l.trim().is_empty());
    rows.map(|line| {
        let mut cells: Vec<String> = line.split_whitespace().map(String::from).collect();
        if let Some(age) = cells.last_mut()
            && age != "AGE"
        {
            *age = "<age>".into();
        }
        cells
    })
    .collect()
}

#[test]
fn kubectl_applies_and_reads_back_a_kubebuilder_webhook_manifest() {
    let server = Server::start();
    assert_eq!(
        apply(&server, &manifest("Fail")),
        (
            true,
            "mutatingwebhookconfiguration.admissionregistration.k8s.io/mutating-webhook-configuration created\n\
             validatingwebhookconfiguration.admissionregistration.k8s.io/validating-webhook-configuration created\n"
                .to_string()
        )
    );
    let row = |kind: &str, name: &str| {
        vec![format!("{kind}.admissionregistration.k8s.io/{name}"), "1".into(), "<age>".into()]
    };
    let header = || ["NAME", "WEBHOOKS", "AGE"].map(String::from).to_vec();
    assert_eq!(
        masked(&server.ok(&["get", "validatingwebhookconfigurations,mutatingwebhookconfigurations"])),
        [
            header(),
            row("validatingwebhookconfiguration", "validating-webhook-configuration"),
            header(),
            row("mutatingwebhookconfiguration", "mutating-webhook-configuration"),
        ]
    );
    // kube's v1 defaults, stored.
    assert_eq!(
        server.ok(&[
            "get",
            "mutatingwebhookconfiguration",
            "mutating-webhook-configuration",
            "-o",
            "jsonpath={.webhooks[0].timeoutSeconds} {.webhooks[0].reinvocationPolicy} {.webhooks[0].matchPolicy} \
             {.webhooks[0].clientConfig.service.port} {.webhooks[0].rules[0].scope} {.metadata.generation}",
        ]),
        "10 Never Equivalent 443 * 1"
    );
    // Applied again with a change: kubectl's patch moves the generation.
    let (ok, text) = apply(&server, &manifest("Ignore"));
    assert!(ok, "{text}");
    assert!(
        text.contains(
            "validatingwebhookconfiguration.admissionregistration.k8s.io/validating-webhook-configuration configured"
        ),
        "{text}"
    );
    assert_eq!(
        server.ok(&[
            "get",
            "validatingwebhookconfiguration",
            "validating-webhook-configuration",
            "-o",
            "jsonpath={.webhooks[0].failurePolicy} {.metadata.generation}",
        ]),
        "Ignore 2"
    );
    let explained = server.ok(&["explain", "validatingwebhookconfiguration.webhooks.sideEffects"]);
    assert!(explained.contains("FIELD: sideEffects <string>\nENUM:\n    None\n    NoneOnDryRun\n"), "{explained}");
    let refused = configuration("ValidatingWebhookConfiguration", "bad", "vbad.kb.io", "validate", "Fail")
        .replace("sideEffects: None", "sideEffects: Some");
    assert_eq!(
        apply(&server, &refused),
        (
            false,
            "The ValidatingWebhookConfiguration \"bad\" is invalid: webhooks[0].sideEffects: Unsupported value: \
             \"Some\": supported values: \"None\", \"NoneOnDryRun\"\n"
                .to_string()
        )
    );
    let deleted = server.ok(&["delete", "validatingwebhookconfiguration,mutatingwebhookconfiguration", "--all"]);
    assert!(deleted.contains("\"validating-webhook-configuration\" deleted"), "{deleted}");
    assert_eq!(server.ok(&["get", "validatingwebhookconfigurations,mutatingwebhookconfigurations", "-o", "name"]), "");
}
