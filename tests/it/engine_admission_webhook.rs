//! Admission webhooks: `MutatingWebhookConfiguration`s and `ValidatingWebhookConfiguration`s
//! whose webhooks the engine calls over HTTPS (a real server started here) for the writes
//! their rules take, answering as kube-apiserver 1.32.13 answered for the same webhooks and
//! requests (recorded by hand against the oracle with a webhook of the same modes: every
//! message below is its).

use crate::support::crd::CrdBuilder;
use crate::support::https_webhook::{HttpsWebhook, Reply};
use crate::support::inproc::{Answer, send, send_json};
use http::StatusCode;
use kubectl_crd_engine::Engine;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

const GROUP: &str = "adm.example.com";
const ADMISSION: &str = "/apis/admissionregistration.k8s.io/v1";

fn b64(v: &Value) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(serde_json::to_vec(v).expect("json"))
}

/// The test webhook: its answer chosen by the last segment of the path it is called at.
fn webhook() -> HttpsWebhook {
    HttpsWebhook::start(|path, review| {
        let uid = review["request"]["uid"].clone();
        let mode = path.split('?').next().unwrap_or_default().trim_start_matches('/');
        let patch = |ops: Value| json!({"uid": uid, "allowed": true, "patchType": "JSONPatch", "patch": b64(&ops)});
        let response = match mode {
            "deny" => {
                json!({"uid": uid, "allowed": false, "status": {"message": "no widgets today", "code": 403, "reason": "Forbidden"}})
            }
            "denybare" => json!({"uid": uid, "allowed": false}),
            "warn" => json!({"uid": uid, "allowed": true, "warnings": ["first warning", "second"]}),
            "addfield" => patch(
                json!([{"op": "add", "path": "/spec/unknownx", "value": 1}, {"op": "add", "path": "/spec/b", "value": "set-by-hook"}]),
            ),
            "label" => patch(json!([{"op": "add", "path": "/metadata/labels/hooked", "value": "yes"}])),
            "scalefive" => patch(json!([{"op": "replace", "path": "/spec/replicas", "value": 5}])),
            "badpatch" => patch(json!([{"op": "remove", "path": "/spec/nothere"}])),
            "wronguid" => json!({"uid": "x", "allowed": true}),
            _ => json!({"uid": uid, "allowed": true}),
        };
        Reply::json(200, &json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}))
    })
}

struct Cluster {
    engine: Arc<Engine>,
}

impl Cluster {
    async fn start() -> Cluster {
        let engine = Engine::open(&crate::support::storage::test_storage()).await.expect("engine");
        let cluster = Cluster { engine };
        let crd = CrdBuilder::new(GROUP, "Widget")
            .schema(json!({"type": "object", "properties": {
                "spec": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string", "default": "dflt"}}},
                "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}))
            .status()
            .build();
        cluster.ok("POST", "/api/v1/namespaces", &json!({"metadata": {"name": "t1", "labels": {"team": "x"}}})).await;
        cluster.serve(&crd, &widgets("")).await;
        cluster
    }

    /// Registers `crd` and waits until `path` (a list of its kind) is served.
    async fn serve(&self, crd: &Value, path: &str) {
        self.ok("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd).await;
        for _ in 0..300 {
            if self.send("GET", path, None).await.status == StatusCode::OK {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("{path} never served");
    }

    async fn send(&self, method: &str, uri: &str, body: Option<&Value>) -> Answer {
        send_json(&self.engine, method, uri, body).await
    }

    /// A JSON merge patch of `uri`.
    async fn merge_patch(&self, uri: &str, patch: &str) -> Answer {
        send(&self.engine, "PATCH", uri, "application/merge-patch+json", Some(patch.as_bytes().to_vec())).await
    }

    async fn ok(&self, method: &str, uri: &str, body: &Value) -> Value {
        let answer = self.send(method, uri, Some(body)).await;
        assert!(answer.status.is_success(), "{method} {uri}: {} {}", answer.status, answer.body);
        answer.body
    }

    /// Stores a configuration of `kind` whose one webhook `name` is called at `mode`
    /// for `operations` on `resources` of the test's group, `extra` merged into it.
    async fn configure(&self, kind: &str, webhook: &HttpsWebhook, name: &str, mode: &str, rule: Value, extra: Value) {
        let mut hook = json!({"name": format!("{name}.adm.example.com"),
            "clientConfig": {"url": webhook.url(mode), "caBundle": webhook.ca_bundle()},
            "rules": [rule], "sideEffects": "None", "admissionReviewVersions": ["v1"]});
        for (k, v) in extra.as_object().into_iter().flatten() {
            hook[k] = v.clone();
        }
        let plural = format!("{}s", kind.to_lowercase());
        let config = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
            "metadata": {"name": name}, "webhooks": [hook]});
        self.ok("POST", &format!("{ADMISSION}/{plural}"), &config).await;
    }
}

fn widgets(rest: &str) -> String {
    format!("/apis/{GROUP}/v1/namespaces/t1/widgets{rest}")
}

fn rule(operations: &[&str], resources: &[&str]) -> Value {
    json!({"operations": operations, "apiGroups": [GROUP], "apiVersions": ["*"], "resources": resources})
}

fn widget(name: &str) -> Value {
    json!({"apiVersion": format!("{GROUP}/v1"), "kind": "Widget", "metadata": {"name": name, "labels": {"l": "1"}}, "spec": {"a": 1}})
}

/// The one review the webhook received since it was last cleared.
fn only_review(webhook: &HttpsWebhook) -> Value {
    let received = webhook.received();
    assert_eq!(received.len(), 1, "{received:?}");
    received[0].body["request"].clone()
}

// The engine waits for webhooks on its workers: a multi-threaded runtime, as `serve` runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mutating_webhook_patches_the_object_before_it_is_validated_and_pruned() {
    let (webhook, cluster) = (webhook(), Cluster::start().await);
    cluster
        .configure(
            "MutatingWebhookConfiguration",
            &webhook,
            "m-add",
            "addfield",
            rule(&["CREATE"], &["widgets"]),
            json!({}),
        )
        .await;
    let created = cluster.ok("POST", &widgets(""), &widget("w1")).await;
    // The unknown field the patch added is pruned; the one it set is kept over the default.
    assert_eq!(created["spec"], json!({"a": 1, "b": "set-by-hook"}));
    let r = only_review(&webhook);
    assert!(webhook.received()[0].path.ends_with("/addfield?timeout=10s"), "{}", webhook.received()[0].path);
    assert_eq!(
        (r["operation"].as_str(), r["name"].as_str(), r["namespace"].as_str()),
        (Some("CREATE"), Some("w1"), Some("t1"))
    );
    assert_eq!(r["kind"], json!({"group": GROUP, "version": "v1", "kind": "Widget"}));
    assert_eq!(r["requestResource"], json!({"group": GROUP, "version": "v1", "resource": "widgets"}));
    assert_eq!(r["options"], json!({"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}));
    assert_eq!((r["oldObject"].clone(), r["dryRun"].clone()), (Value::Null, json!(false)));
    // Mutating admission comes before the strategy: defaulted and tracked, but no uid yet.
    let object = &r["object"];
    assert_eq!(object["spec"], json!({"a": 1, "b": "dflt"}));
    assert!(object["metadata"]["managedFields"].is_array(), "{object}");
    assert!(
        object["metadata"].get("uid").is_none() && object["metadata"].get("creationTimestamp").is_none(),
        "{object}"
    );

    // A patch that cannot be applied fails the create in the JSON patch's own words.
    cluster
        .configure(
            "MutatingWebhookConfiguration",
            &webhook,
            "m-bad",
            "badpatch",
            rule(&["CREATE"], &["widgets"]),
            json!({}),
        )
        .await;
    let refused = cluster.send("POST", &widgets(""), Some(&widget("w2"))).await;
    assert_eq!(
        (refused.status, refused.body["reason"].as_str()),
        (StatusCode::INTERNAL_SERVER_ERROR, Some("InternalError"))
    );
    assert_eq!(
        refused.body["message"],
        "Internal error occurred: error in remove for path: '/spec/nothere': Unable to remove nonexistent key: nothere: missing value"
    );
    assert_eq!(cluster.send("GET", &widgets("/w2"), None).await.status, StatusCode::NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_validating_webhook_refuses_in_its_own_words_after_validation_and_nothing_is_stored() {
    let (webhook, cluster) = (webhook(), Cluster::start().await);
    cluster
        .configure(
            "ValidatingWebhookConfiguration",
            &webhook,
            "v-deny",
            "deny",
            rule(&["CREATE"], &["widgets"]),
            json!({}),
        )
        .await;
    let refused = cluster.send("POST", &widgets(""), Some(&widget("w1"))).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    assert_eq!(
        refused.body["message"],
        "admission webhook \"v-deny.adm.example.com\" denied the request: no widgets today"
    );
    assert_eq!(refused.body["reason"], "Forbidden");
    assert_eq!(cluster.send("GET", &widgets("/w1"), None).await.status, StatusCode::NOT_FOUND);
    // It sees what would be stored: a uid, a creation time, a generation.
    let r = only_review(&webhook);
    assert!(r["object"]["metadata"]["uid"].is_string() && r["object"]["metadata"]["generation"] == 1, "{r}");
    // An invalid object is refused by validation first: the webhook is not called.
    webhook.clear();
    let invalid = cluster.send("POST", &widgets(""), Some(&widget("Bad"))).await;
    assert_eq!(invalid.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", invalid.body);
    assert!(webhook.received().is_empty());
    // An update is not among its operations.
    cluster
        .configure(
            "ValidatingWebhookConfiguration",
            &webhook,
            "v-bare",
            "denybare",
            rule(&["UPDATE"], &["widgets"]),
            json!({}),
        )
        .await;
    webhook.clear();
    let refused = cluster.send("POST", &widgets(""), Some(&widget("w2"))).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "only v-deny takes a create");
    assert_eq!(webhook.received().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn updates_deletes_and_subresources_are_reviewed_with_the_old_object() {
    let (webhook, cluster) = (webhook(), Cluster::start().await);
    cluster.ok("POST", &widgets(""), &widget("w1")).await;
    cluster
        .configure("ValidatingWebhookConfiguration", &webhook, "v-log", "log", rule(&["*"], &["*/*"]), json!({}))
        .await;
    assert_eq!(
        cluster.merge_patch(&widgets("/w1?fieldManager=fm3"), r#"{"spec":{"a":5}}"#).await.status,
        StatusCode::OK
    );
    let r = only_review(&webhook);
    assert_eq!((r["operation"].as_str(), r.get("subResource")), (Some("UPDATE"), None));
    assert_eq!(r["options"], json!({"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1", "fieldManager": "fm3"}));
    assert_eq!((r["object"]["spec"]["a"].clone(), r["oldObject"]["spec"]["a"].clone()), (json!(5), json!(1)));
    assert_eq!(r["object"]["metadata"]["generation"], 2, "validated after the strategy");
    assert_eq!(r["object"]["metadata"]["resourceVersion"], r["oldObject"]["metadata"]["resourceVersion"]);

    webhook.clear();
    assert_eq!(cluster.merge_patch(&widgets("/w1/status"), r#"{"status":{"x":5}}"#).await.status, StatusCode::OK);
    let r = only_review(&webhook);
    assert_eq!((r["subResource"].as_str(), r["requestSubResource"].as_str()), (Some("status"), Some("status")));

    webhook.clear();
    let deleted = cluster.send("DELETE", &widgets("/w1?dryRun=All&propagationPolicy=Foreground"), None).await;
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.body);
    let r = only_review(&webhook);
    assert_eq!(
        (r["operation"].as_str(), r["object"].clone(), r["dryRun"].clone()),
        (Some("DELETE"), Value::Null, json!(true))
    );
    assert_eq!(r["oldObject"]["metadata"]["name"], "w1");
    assert_eq!(
        r["options"],
        json!({"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1", "propagationPolicy": "Foreground", "dryRun": ["All"]})
    );

    // Built-in kinds too; a namespace is named as its own namespace.
    let core = json!({"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["*"], "resources": ["namespaces"]});
    cluster.configure("ValidatingWebhookConfiguration", &webhook, "v-core", "log", core, json!({})).await;
    webhook.clear();
    cluster.ok("POST", "/api/v1/namespaces", &json!({"metadata": {"name": "nsx"}})).await;
    let r = only_review(&webhook);
    assert_eq!((r["name"].as_str(), r["namespace"].as_str()), (Some("nsx"), Some("nsx")));
    assert_eq!(r["kind"], json!({"group": "", "version": "v1", "kind": "Namespace"}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_that_cannot_be_used_fails_closed_unless_it_is_ignored() {
    let (webhook, cluster) = (webhook(), Cluster::start().await);
    let down = json!({"clientConfig": {"url": "https://127.0.0.1:1/x"}});
    cluster.configure("MutatingWebhookConfiguration", &webhook, "down", "x", rule(&["*"], &["*"]), down.clone()).await;
    let refused = cluster.send("POST", &widgets(""), Some(&widget("w1"))).await;
    assert_eq!(refused.status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(
        refused.body["message"],
        "Internal error occurred: failed calling webhook \"down.adm.example.com\": failed to call webhook: Post \"https://127.0.0.1:1/x?timeout=10s\": dial tcp 127.0.0.1:1: connect: connection refused"
    );
    let ignored = json!({"clientConfig": {"url": "https://127.0.0.1:1/x"}, "failurePolicy": "Ignore"});
    cluster.ok("DELETE", &format!("{ADMISSION}/mutatingwebhookconfigurations/down"), &json!({})).await;
    cluster.configure("MutatingWebhookConfiguration", &webhook, "down", "x", rule(&["*"], &["*"]), ignored).await;
    cluster.ok("POST", &widgets(""), &widget("w1")).await;

    // An answer for another review is no answer.
    cluster
        .configure(
            "ValidatingWebhookConfiguration",
            &webhook,
            "v-uid",
            "wronguid",
            rule(&["UPDATE"], &["*"]),
            json!({}),
        )
        .await;
    let refused =
        cluster.send("PUT", &widgets("/w1"), Some(&cluster.ok("GET", &widgets("/w1"), &json!(null)).await)).await;
    let message = refused.body["message"].as_str().unwrap_or_default().to_string();
    assert!(
        message.starts_with("Internal error occurred: failed calling webhook \"v-uid.adm.example.com\": received invalid webhook response: expected response.uid="),
        "{message}"
    );
    // A refusal without a Status: 400 and kube's words.
    cluster
        .configure(
            "ValidatingWebhookConfiguration",
            &webhook,
            "v-bare",
            "denybare",
            rule(&["DELETE"], &["*"]),
            json!({}),
        )
        .await;
    let refused = cluster.send("DELETE", &widgets("/w1"), None).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        refused.body["message"],
        "admission webhook \"v-bare.adm.example.com\" denied the request without explanation"
    );
    assert!(refused.body.get("reason").is_none(), "{}", refused.body);
    assert_eq!(cluster.send("GET", &widgets("/w1"), None).await.status, StatusCode::OK, "still there");

    // A webhook for everything that cannot be called holds back built-in kinds too, but
    // never the admission configurations themselves.
    let everything = json!({"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]});
    let down = json!({"clientConfig": {"url": "https://127.0.0.1:1/x"}});
    cluster.configure("ValidatingWebhookConfiguration", &webhook, "all-down", "x", everything.clone(), down).await;
    let configmap = json!({"metadata": {"name": "cm"}, "data": {"a": "b"}});
    let refused = cluster.send("POST", "/api/v1/namespaces/t1/configmaps", Some(&configmap)).await;
    assert_eq!(refused.status, StatusCode::INTERNAL_SERVER_ERROR, "{}", refused.body);
    cluster.configure("MutatingWebhookConfiguration", &webhook, "still-allowed", "deny", everything, json!({})).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn selectors_dry_runs_and_warnings_decide_and_shape_the_calls() {
    let (webhook, cluster) = (webhook(), Cluster::start().await);
    // The namespace's labels and the object's choose the webhook.
    let other_team = json!({"namespaceSelector": {"matchLabels": {"team": "y"}}});
    cluster
        .configure(
            "ValidatingWebhookConfiguration",
            &webhook,
            "v-ns",
            "deny",
            rule(&["CREATE"], &["widgets"]),
            other_team,
        )
        .await;
    let labelled = json!({"objectSelector": {"matchExpressions": [{"key": "l", "operator": "In", "values": ["2"]}]}});
    cluster
        .configure(
            "ValidatingWebhookConfiguration",
            &webhook,
            "v-obj",
            "deny",
            rule(&["CREATE"], &["widgets"]),
            labelled,
        )
        .await;
    cluster.ok("POST", &widgets(""), &widget("w1")).await;
    assert!(webhook.received().is_empty(), "neither selector takes w1 in t1");
    let mut second = widget("w2");
    second["metadata"]["labels"]["l"] = json!("2");
    assert_eq!(cluster.send("POST", &widgets(""), Some(&second)).await.status, StatusCode::FORBIDDEN);

    // Warnings come back as kube's headers; a dry run says so.
    cluster
        .configure(
            "ValidatingWebhookConfiguration",
            &webhook,
            "v-warn",
            "warn",
            rule(&["UPDATE"], &["widgets"]),
            json!({}),
        )
        .await;
    webhook.clear();
    let answer = cluster.merge_patch(&widgets("/w1?dryRun=All"), r#"{"spec":{"a":2}}"#).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    assert_eq!(answer.warnings(), ["299 - \"first warning\"", "299 - \"second\""]);
    assert_eq!(only_review(&webhook)["dryRun"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_that_may_be_reinvoked_is_called_again_after_a_later_one_changes_the_object() {
    let (webhook, cluster) = (webhook(), Cluster::start().await);
    let again = json!({"reinvocationPolicy": "IfNeeded"});
    cluster
        .configure("MutatingWebhookConfiguration", &webhook, "a-first", "log", rule(&["CREATE"], &["widgets"]), again)
        .await;
    cluster
        .configure(
            "MutatingWebhookConfiguration",
            &webhook,
            "b-label",
            "label",
            rule(&["CREATE"], &["widgets"]),
            json!({}),
        )
        .await;
    let created = cluster.ok("POST", &widgets(""), &widget("w1")).await;
    assert_eq!(created["metadata"]["labels"], json!({"l": "1", "hooked": "yes"}));
    let paths: Vec<String> =
        webhook.received().iter().map(|r| r.path.split('?').next().unwrap_or_default().to_string()).collect();
    assert_eq!(paths, ["/log", "/label", "/log"], "configurations in name order, the first once more");
    assert_eq!(webhook.received()[2].body["request"]["object"]["metadata"]["labels"]["hooked"], "yes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rule_naming_another_version_takes_the_request_at_that_version_unless_the_policy_is_exact() {
    let (webhook, cluster) = (webhook(), Cluster::start().await);
    let version = |name: &str, storage: bool| {
        json!({"name": name, "served": true, "storage": storage,
            "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}})
    };
    let gizmos = CrdBuilder::new(GROUP, "Gizmo").versions(vec![version("v1", true), version("v2", false)]).build();
    let at = |v: &str| format!("/apis/{GROUP}/{v}/namespaces/t1/gizmos");
    cluster.serve(&gizmos, &at("v2")).await;
    let v1_only =
        json!({"operations": ["CREATE"], "apiGroups": [GROUP], "apiVersions": ["v1"], "resources": ["gizmos"]});
    cluster
        .configure(
            "MutatingWebhookConfiguration",
            &webhook,
            "m-exact",
            "deny",
            v1_only.clone(),
            json!({"matchPolicy": "Exact"}),
        )
        .await;
    cluster.configure("MutatingWebhookConfiguration", &webhook, "m-eq", "label", v1_only, json!({})).await;
    let gizmo = json!({"apiVersion": format!("{GROUP}/v2"), "kind": "Gizmo", "metadata": {"name": "g1", "labels": {"l": "1"}}, "spec": {"a": 1}});
    let created = cluster.ok("POST", &at("v2"), &gizmo).await;
    // The exact webhook (which would refuse) is not called; the other sees the object at v1
    // and its label comes back at v2.
    assert_eq!(
        (created["apiVersion"].as_str(), created["metadata"]["labels"]["hooked"].as_str()),
        (Some("adm.example.com/v2"), Some("yes"))
    );
    let r = only_review(&webhook);
    assert_eq!(r["kind"], json!({"group": GROUP, "version": "v1", "kind": "Gizmo"}));
    assert_eq!(r["requestKind"], json!({"group": GROUP, "version": "v2", "kind": "Gizmo"}));
    assert_eq!(r["resource"]["version"], "v1");
    assert_eq!(r["requestResource"]["version"], "v2");
    assert_eq!(r["object"]["apiVersion"], "adm.example.com/v1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn match_conditions_pass_a_webhook_over_when_one_is_false_and_refuse_when_one_fails() {
    let (webhook, cluster) = (webhook(), Cluster::start().await);
    let conditions = json!({"matchConditions": [
        {"name": "is-create", "expression": "request.operation == 'CREATE' && request.kind.kind == 'Widget' && request.namespace == 't1'"},
        {"name": "has-extra", "expression": "object.metadata.labels.extra == 'x'"},
        {"name": "labelled", "expression": "'deny' in object.metadata.labels"}]});
    cluster
        .configure(
            "ValidatingWebhookConfiguration",
            &webhook,
            "v-mc",
            "deny",
            rule(&["CREATE"], &["widgets"]),
            conditions,
        )
        .await;
    // `labelled` is false: the webhook is passed over, whatever `has-extra` made of it.
    cluster.ok("POST", &widgets(""), &widget("mc1")).await;
    assert!(webhook.received().is_empty());
    // Nothing false, one error: kube's 403 names the expression.
    let mut denied = widget("mc2");
    denied["metadata"]["labels"]["deny"] = json!("1");
    let refused = cluster.send("POST", &widgets(""), Some(&denied)).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    assert_eq!(
        refused.body["message"],
        "widgets.adm.example.com \"mc2\" is forbidden: expression 'object.metadata.labels.extra == 'x'' resulted in error: no such key: extra"
    );
    assert_eq!(refused.body["details"], json!({"name": "mc2", "group": GROUP, "kind": "widgets"}));
    // All true: the webhook is called, and refuses.
    denied["metadata"]["labels"]["extra"] = json!("x");
    denied["metadata"]["name"] = json!("mc3");
    let refused = cluster.send("POST", &widgets(""), Some(&denied)).await;
    assert_eq!(
        refused.body["message"],
        "admission webhook \"v-mc.adm.example.com\" denied the request: no widgets today"
    );
    assert_eq!(webhook.received().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scale_write_is_admitted_as_the_scale_and_takes_the_replicas_a_webhook_sets() {
    let (webhook, cluster) = (webhook(), Cluster::start().await);
    let scalers = CrdBuilder::new(GROUP, "Scaler").status().scale().build();
    let at = |rest: &str| format!("/apis/{GROUP}/v1/namespaces/t1/scalers{rest}");
    cluster.serve(&scalers, &at("")).await;
    let scaler = json!({"apiVersion": format!("{GROUP}/v1"), "kind": "Scaler", "metadata": {"name": "s1"}, "spec": {"replicas": 1}});
    cluster.ok("POST", &at(""), &scaler).await;
    cluster
        .configure(
            "MutatingWebhookConfiguration",
            &webhook,
            "m-five",
            "scalefive",
            rule(&["UPDATE"], &["scalers/scale"]),
            json!({}),
        )
        .await;
    let scaled = cluster.merge_patch(&at("/s1/scale"), r#"{"spec":{"replicas":2}}"#).await;
    assert_eq!(
        (scaled.status, scaled.body["spec"].clone()),
        (StatusCode::OK, json!({"replicas": 5})),
        "{}",
        scaled.body
    );
    assert_eq!(cluster.ok("GET", &at("/s1"), &json!(null)).await["spec"]["replicas"], 5);
    let r = only_review(&webhook);
    let scale = json!({"group": "autoscaling", "version": "v1", "kind": "Scale"});
    assert_eq!(
        (r["kind"].clone(), r["requestKind"].clone(), r["subResource"].as_str()),
        (scale.clone(), scale, Some("scale"))
    );
    assert_eq!(r["resource"], json!({"group": GROUP, "version": "v1", "resource": "scalers"}));
    assert_eq!((r["object"]["kind"].as_str(), r["object"]["spec"].clone()), (Some("Scale"), json!({"replicas": 2})));
    assert_eq!(r["oldObject"]["spec"], json!({"replicas": 1}));
}
