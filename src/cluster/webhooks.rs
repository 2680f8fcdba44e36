//! The webhooks a CRD's objects go through: its conversion webhook, and the admission
//! webhooks of the cluster's `MutatingWebhookConfiguration`s and
//! `ValidatingWebhookConfiguration`s whose rules take its resource at any served version
//! (the main resource or a subresource, by any operation), matched as the engine's
//! admission matches them.

use super::error::ClusterError;
use super::registrations::Crd;
use kube::api::{Api, ApiResource, DynamicObject, ListParams};
use kubectl_crd_engine::admission_rules::{Requested, Target, hooks_of, rule_matches};
use serde::Serialize;
use serde_json::Value;

/// One webhook a CRD's objects go through.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookLine {
    /// `conversion`, `mutating` or `validating`.
    pub kind: &'static str,
    /// The configuration holding it (empty for the conversion webhook).
    pub configuration: String,
    /// Its name (empty for the conversion webhook).
    pub name: String,
    /// The operations it takes (`CREATE`, `UPDATE`, `DELETE`), in that order.
    pub operations: Vec<String>,
    /// What it takes: the resource and its subresources (`widgets`, `widgets/status`).
    pub resources: Vec<String>,
    /// Where it is called: its URL, or `service NAMESPACE/NAME:PORT/PATH`.
    pub target: String,
    /// `Fail` or `Ignore` (empty for the conversion webhook, which always fails closed).
    pub failure_policy: String,
}

const OPERATIONS: [&str; 3] = ["CREATE", "UPDATE", "DELETE"];

/// Reads the configurations from the cluster and picks the webhooks `crd` goes through.
pub async fn for_crd(client: &kube::Client, crd: &Crd) -> Result<Vec<WebhookLine>, ClusterError> {
    let list = |plural: &str, kind: &str| {
        let ar = ApiResource {
            group: "admissionregistration.k8s.io".into(),
            version: "v1".into(),
            api_version: "admissionregistration.k8s.io/v1".into(),
            kind: kind.into(),
            plural: plural.into(),
        };
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &ar);
        async move {
            let items = api.list(&ListParams::default()).await.map_err(|e| ClusterError::from_kube(e, None))?.items;
            Ok::<_, ClusterError>(items.iter().filter_map(|o| serde_json::to_value(o).ok()).collect::<Vec<Value>>())
        }
    };
    let mutating = list("mutatingwebhookconfigurations", "MutatingWebhookConfiguration").await?;
    let validating = list("validatingwebhookconfigurations", "ValidatingWebhookConfiguration").await?;
    Ok(lines(crd, &mutating, &validating))
}

/// The webhooks `crd` goes through, of these configurations (each list in name order).
pub fn lines(crd: &Crd, mutating: &[Value], validating: &[Value]) -> Vec<WebhookLine> {
    let mut out: Vec<WebhookLine> = conversion(crd).into_iter().collect();
    for (kind, configs) in [("mutating", mutating), ("validating", validating)] {
        for config in configs {
            let configuration = config.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default();
            for hook in hooks_of(config) {
                let (operations, resources) = taken(crd, &hook.rules);
                if operations.is_empty() {
                    continue;
                }
                out.push(WebhookLine {
                    kind,
                    configuration: configuration.to_string(),
                    name: hook.name.clone(),
                    operations,
                    resources,
                    target: target_text(&hook.target),
                    failure_policy: if hook.fail_open { "Ignore" } else { "Fail" }.into(),
                });
            }
        }
    }
    out
}

/// The operations and resources of `crd` that `rules` take, at any served version.
fn taken(crd: &Crd, rules: &[kubectl_crd_engine::admission_rules::Rule]) -> (Vec<String>, Vec<String>) {
    let (group, plural) = (crd.spec.group.as_str(), crd.spec.names.plural.as_str());
    let namespace = (crd.spec.scope == "Namespaced").then_some("ns");
    let (mut operations, mut resources) = (Vec::new(), Vec::new());
    for version in crd.spec.versions.iter().filter(|v| v.served) {
        let subs = version.subresources.as_ref();
        let mut subresources = vec![""];
        if subs.is_some_and(|s| s.status.is_some()) {
            subresources.push("status");
        }
        if subs.is_some_and(|s| s.scale.is_some()) {
            subresources.push("scale");
        }
        for operation in OPERATIONS {
            // A subresource is only ever updated.
            for subresource in subresources.iter().filter(|s| s.is_empty() || operation == "UPDATE") {
                let requested =
                    Requested { operation, group, version: &version.name, resource: plural, subresource, namespace };
                if rules.iter().any(|r| rule_matches(r, &requested)) {
                    let resource =
                        if subresource.is_empty() { plural.to_string() } else { format!("{plural}/{subresource}") };
                    if !operations.iter().any(|o| o == operation) {
                        operations.push(operation.to_string());
                    }
                    if !resources.contains(&resource) {
                        resources.push(resource);
                    }
                }
            }
        }
    }
    operations.sort_by_key(|o| OPERATIONS.iter().position(|x| x == o));
    (operations, resources)
}

/// `crd`'s conversion webhook, if its versions convert through one.
fn conversion(crd: &Crd) -> Option<WebhookLine> {
    let conversion = crd.spec.conversion.as_ref().filter(|c| c.strategy == "Webhook")?;
    let config = conversion.webhook.as_ref()?.client_config.as_ref()?;
    let target = match (&config.url, &config.service) {
        (Some(url), _) => url.clone(),
        (None, Some(s)) => {
            service_text(&s.namespace, &s.name, s.port.unwrap_or(443).into(), s.path.as_deref().unwrap_or(""))
        }
        (None, None) => return None,
    };
    Some(WebhookLine {
        kind: "conversion",
        configuration: String::new(),
        name: String::new(),
        operations: Vec::new(),
        resources: vec![crd.spec.names.plural.clone()],
        target,
        failure_policy: String::new(),
    })
}

fn target_text(target: &Target) -> String {
    match target {
        Target::Url { url, .. } => url.clone(),
        Target::Service { namespace, name, path, port } => service_text(namespace, name, *port, path),
    }
}

fn service_text(namespace: &str, name: &str, port: i64, path: &str) -> String {
    format!("service {namespace}/{name}:{port}{path}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd() -> Crd {
        serde_json::from_value(json!({
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"plural": "widgets", "kind": "Widget"},
                "conversion": {"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"],
                    "clientConfig": {"service": {"namespace": "sys", "name": "conv", "path": "/convert"}}}},
                "versions": [
                    {"name": "v1", "served": true, "storage": true, "subresources": {"status": {}}},
                    {"name": "v2", "served": false, "storage": false}]}
        }))
        .expect("crd")
    }

    fn config(name: &str, rules: Value, extra: Value) -> Value {
        let mut hook = json!({"name": format!("{name}.example.com"), "clientConfig": {"url": "https://127.0.0.1:9443/x"}, "rules": rules});
        for (k, v) in extra.as_object().into_iter().flatten() {
            hook[k] = v.clone();
        }
        json!({"metadata": {"name": name}, "webhooks": [hook]})
    }

    #[test]
    fn a_crd_goes_through_its_conversion_webhook_and_the_admission_webhooks_whose_rules_take_it() {
        let mutating = [config(
            "m",
            json!([{"operations": ["UPDATE", "CREATE"], "apiGroups": ["example.com"], "apiVersions": ["*"], "resources": ["widgets"]}]),
            json!({"failurePolicy": "Ignore"}),
        )];
        let validating = [
            config(
                "other",
                json!([{"operations": ["*"], "apiGroups": ["apps"], "apiVersions": ["*"], "resources": ["*"]}]),
                json!({}),
            ),
            config(
                "status",
                json!([{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["v1"], "resources": ["*/status"]}]),
                json!({}),
            ),
            config(
                "v2-only",
                json!([{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["v2"], "resources": ["*"]}]),
                json!({}),
            ),
            config(
                "cluster",
                json!([{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"], "scope": "Cluster"}]),
                json!({}),
            ),
        ];
        let lines = lines(&crd(), &mutating, &validating);
        let brief: Vec<String> = lines
            .iter()
            .map(|l| {
                format!(
                    "{} {} {} {} {}",
                    l.kind,
                    l.name,
                    l.operations.join(","),
                    l.resources.join(","),
                    l.failure_policy
                )
            })
            .collect();
        assert_eq!(
            brief,
            [
                "conversion   widgets ",
                "mutating m.example.com CREATE,UPDATE widgets Ignore",
                "validating status.example.com UPDATE widgets/status Fail"
            ],
            "v2 is not served, and a namespaced kind is no Cluster-scoped one"
        );
        assert_eq!(lines[0].target, "service sys/conv:443/convert");
        assert_eq!(lines[1].target, "https://127.0.0.1:9443/x");
    }
}
