//! The webhooks of stored `ValidatingWebhookConfiguration`s and
//! `MutatingWebhookConfiguration`s, read into what dispatch needs. The objects were
//! defaulted and validated when stored, so a field missing here takes kube's default.

use crate::resources::builtin::webhook_configs::DEFAULT_TIMEOUT_SECONDS;
use crate::resources::selector::LabelSelector;
use crate::schema::webhook_client::DEFAULT_SERVICE_PORT;
use serde_json::Value;

/// One webhook of one configuration.
#[derive(Debug, Clone)]
pub struct Hook {
    /// The webhook's name (`vwidget.example.com`).
    pub name: String,
    /// Where it is called.
    pub target: Target,
    /// What it takes.
    pub rules: Vec<Rule>,
    /// `failurePolicy: Ignore`: a webhook that cannot be called is passed over.
    pub fail_open: bool,
    /// `matchPolicy: Exact`: rules naming another version of the requested resource do not
    /// take it (by default they do, and the webhook sees the object at their version).
    pub exact: bool,
    /// The parsed `namespaceSelector` and `objectSelector`, or why they do not parse
    /// (kube answers that as an internal error when the webhook would be called).
    pub namespace_selector: Result<LabelSelector, String>,
    /// See `namespace_selector`.
    pub object_selector: Result<LabelSelector, String>,
    /// `sideEffects` (dry runs reach only `None` and `NoneOnDryRun`).
    pub side_effects: Option<String>,
    /// `timeoutSeconds` (10 by default).
    pub timeout_seconds: u64,
    /// `admissionReviewVersions`, in the webhook's order.
    pub review_versions: Vec<String>,
    /// `reinvocationPolicy: IfNeeded` (mutating webhooks).
    pub reinvoke: bool,
    /// `matchConditions`: each condition's name and CEL expression.
    pub match_conditions: Vec<(String, String)>,
}

/// Where a webhook is called.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `clientConfig.url`, trusting `caBundle` (the system's roots without one).
    Url {
        /// The URL as configured.
        url: String,
        /// The PEM bundle, decoded from base64.
        ca_bundle: Option<Vec<u8>>,
    },
    /// `clientConfig.service`, which the engine cannot reach (it runs no Services).
    Service {
        /// The Service's namespace.
        namespace: String,
        /// The Service's name.
        name: String,
        /// The path called (empty for `/`).
        path: String,
        /// The port (443 by default).
        port: i64,
    },
}

/// One of a webhook's rules (`RuleWithOperations`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rule {
    /// `CREATE`, `UPDATE`, `DELETE`, `CONNECT` or `*`.
    pub operations: Vec<String>,
    /// Groups, or `*` (the core group is empty).
    pub api_groups: Vec<String>,
    /// Versions, or `*`.
    pub api_versions: Vec<String>,
    /// Resources (`widgets`, `widgets/status`, `*`, `*/*`, `widgets/*`).
    pub resources: Vec<String>,
    /// `*`, `Cluster` or `Namespaced`.
    pub scope: String,
}

/// The webhooks of one stored configuration, in its order (kube calls configurations in
/// name order, as the store lists them).
pub fn hooks_of(config: &Value) -> Vec<Hook> {
    let webhooks = config.get("webhooks").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    webhooks.iter().map(hook_of).collect()
}

fn hook_of(w: &Value) -> Hook {
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(String::from);
    let client = w.get("clientConfig").cloned().unwrap_or(Value::Null);
    let target = match client.get("service") {
        Some(service) if !service.is_null() => Target::Service {
            namespace: text(service, "namespace").unwrap_or_default(),
            name: text(service, "name").unwrap_or_default(),
            path: text(service, "path").unwrap_or_default(),
            port: service.get("port").and_then(Value::as_i64).unwrap_or(DEFAULT_SERVICE_PORT.into()),
        },
        _ => Target::Url {
            url: text(&client, "url").unwrap_or_default(),
            ca_bundle: text(&client, "caBundle").and_then(|b| {
                use base64::Engine as _;
                base64::engine::general_purpose::STANDARD.decode(b).ok()
            }),
        },
    };
    let rules = w.get("rules").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    Hook {
        name: text(w, "name").unwrap_or_default(),
        target,
        rules: rules.iter().map(rule_of).collect(),
        fail_open: text(w, "failurePolicy").as_deref() == Some("Ignore"),
        exact: text(w, "matchPolicy").as_deref() == Some("Exact"),
        namespace_selector: selector_of(w.get("namespaceSelector")),
        object_selector: selector_of(w.get("objectSelector")),
        side_effects: text(w, "sideEffects"),
        timeout_seconds: w.get("timeoutSeconds").and_then(Value::as_u64).unwrap_or(DEFAULT_TIMEOUT_SECONDS as u64),
        review_versions: strings(w.get("admissionReviewVersions")),
        reinvoke: text(w, "reinvocationPolicy").as_deref() == Some("IfNeeded"),
        match_conditions: w
            .get("matchConditions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|c| (text(c, "name").unwrap_or_default(), text(c, "expression").unwrap_or_default()))
            .collect(),
    }
}

fn rule_of(rule: &Value) -> Rule {
    Rule {
        operations: strings(rule.get("operations")),
        api_groups: strings(rule.get("apiGroups")),
        api_versions: strings(rule.get("apiVersions")),
        resources: strings(rule.get("resources")),
        scope: rule.get("scope").and_then(Value::as_str).unwrap_or("*").to_string(),
    }
}

fn strings(v: Option<&Value>) -> Vec<String> {
    let items = v.and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    items.iter().filter_map(Value::as_str).map(String::from).collect()
}

/// A `metav1.LabelSelector` as kube's `LabelSelectorAsSelector` reads it (none selects
/// everything).
fn selector_of(v: Option<&Value>) -> Result<LabelSelector, String> {
    match v {
        None | Some(Value::Null) => Ok(LabelSelector::default()),
        Some(selector) => LabelSelector::from_structured(selector),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_stored_configuration_reads_as_its_webhooks_with_kubes_defaults_for_what_is_missing() {
        let config = json!({"metadata": {"name": "cfg"}, "webhooks": [
            {"name": "a.example.com", "clientConfig": {"url": "https://127.0.0.1:9/x", "caBundle": "YWJj"},
             "rules": [{"operations": ["CREATE"], "apiGroups": ["g"], "apiVersions": ["v1"], "resources": ["widgets/status"]}],
             "failurePolicy": "Ignore", "matchPolicy": "Exact", "sideEffects": "None",
             "admissionReviewVersions": ["v1beta1", "v1"], "timeoutSeconds": 3,
             "objectSelector": {"matchLabels": {"a": "b"}}},
            {"name": "b.example.com", "clientConfig": {"service": {"namespace": "ns", "name": "svc"}}}
        ]});
        let hooks = hooks_of(&config);
        assert_eq!(hooks.len(), 2);
        let a = &hooks[0];
        assert_eq!(a.name, "a.example.com");
        assert_eq!(a.target, Target::Url { url: "https://127.0.0.1:9/x".into(), ca_bundle: Some(b"abc".to_vec()) });
        assert!(a.fail_open && a.exact && !a.reinvoke);
        assert_eq!(a.timeout_seconds, 3);
        assert_eq!(a.rules[0].scope, "*");
        assert!(!a.object_selector.as_ref().expect("taken").matches(&json!({"metadata": {}})));
        let b = &hooks[1];
        assert_eq!(
            b.target,
            Target::Service { namespace: "ns".into(), name: "svc".into(), path: String::new(), port: 443 }
        );
        assert!(!b.fail_open && !b.exact);
        assert_eq!(b.timeout_seconds, 10);
        assert!(b.namespace_selector.as_ref().expect("taken").is_everything());
    }
}
