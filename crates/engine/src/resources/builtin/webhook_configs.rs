//! `ValidatingWebhookConfiguration`s and `MutatingWebhookConfiguration`s
//! (admissionregistration.k8s.io/v1): cluster-scoped, stored with kube's v1 defaults
//! (`SetDefaults_ValidatingWebhook`, `SetDefaults_MutatingWebhook`, `SetDefaults_Rule`,
//! `SetDefaults_ServiceReference`), validated by [`super::webhook_validation`], counted in
//! generations as kube's strategies count them. Storing them calls nothing: the admission
//! dispatcher reads them.

use super::types::GoStruct;
use super::webhook_structs::{MUTATING_WEBHOOK_CONFIGURATION, VALIDATING_WEBHOOK_CONFIGURATION};
use super::webhook_validation;
pub use super::webhook_validation::Hooks;
use crate::field::FieldError;
use crate::representation::table::TableConvertor;
use crate::resources::managed_fields::schema::Schema;
use crate::resources::{ResourceInfo, Strategy, Undecodable};
use crate::schema::webhook_client::DEFAULT_SERVICE_PORT;
use crate::status::ApiError;
use serde_json::{Map, Value};
use std::sync::Arc;

/// The group both kinds are served at.
pub const GROUP: &str = "admissionregistration.k8s.io";

/// kube's defaults of a webhook in v1, in the order its defaulter sets them.
const HOOK_DEFAULTS: [(&str, &str); 2] = [("failurePolicy", "Fail"), ("matchPolicy", "Equivalent")];
/// kube's `timeoutSeconds` of a webhook that names none.
pub const DEFAULT_TIMEOUT_SECONDS: i64 = 10;

/// The strategy of one of the two kinds.
pub struct WebhookConfigStrategy {
    hooks: Hooks,
    info: ResourceInfo,
    go: &'static GoStruct,
    types: Arc<Schema>,
}

impl WebhookConfigStrategy {
    pub fn new(hooks: Hooks) -> Self {
        let go = match hooks {
            Hooks::Validating => &VALIDATING_WEBHOOK_CONFIGURATION,
            Hooks::Mutating => &MUTATING_WEBHOOK_CONFIGURATION,
        };
        let mut info = super::info(GROUP, hooks.plural(), hooks.kind(), &[], false);
        info.categories = vec!["api-extensions".into()];
        WebhookConfigStrategy { hooks, info, go, types: Arc::new(go.schema()) }
    }
}

/// Sets what kube's v1 defaulter sets on each webhook of `obj`.
pub fn set_defaults(obj: &mut Value, hooks: Hooks) {
    let Some(list) = obj.get_mut("webhooks").and_then(Value::as_array_mut) else { return };
    for hook in list.iter_mut().filter_map(Value::as_object_mut) {
        let mut absent = |key: &str, value: Value| {
            if hook.get(key).is_none_or(Value::is_null) {
                hook.insert(key.into(), value);
            }
        };
        for (key, value) in HOOK_DEFAULTS {
            absent(key, Value::from(value));
        }
        absent("namespaceSelector", Value::Object(Map::new()));
        absent("objectSelector", Value::Object(Map::new()));
        absent("timeoutSeconds", Value::from(DEFAULT_TIMEOUT_SECONDS));
        if hooks == Hooks::Mutating {
            absent("reinvocationPolicy", Value::from("Never"));
        }
        let rules = hook.get_mut("rules").and_then(Value::as_array_mut).into_iter().flatten();
        for rule in rules.filter_map(Value::as_object_mut) {
            if rule.get("scope").is_none_or(Value::is_null) {
                rule.insert("scope".into(), Value::from("*"));
            }
        }
        if let Some(service) =
            hook.get_mut("clientConfig").and_then(|c| c.get_mut("service")).and_then(Value::as_object_mut)
            && service.get("port").is_none_or(Value::is_null)
        {
            service.insert("port".into(), Value::from(DEFAULT_SERVICE_PORT));
        }
    }
}

/// A `caBundle` that is not base64 fails decoding, as any `[]byte` field does.
fn check_ca_bundles(obj: &Value) -> Result<(), Undecodable> {
    let hooks = obj.get("webhooks").and_then(Value::as_array).into_iter().flatten();
    for bundle in hooks.filter_map(|h| h.pointer("/clientConfig/caBundle")).filter_map(Value::as_str) {
        if let Err(at) = super::data::decode_base64(bundle) {
            return Err(Undecodable(format!("illegal base64 data at input byte {at}")));
        }
    }
    Ok(())
}

impl Strategy for WebhookConfigStrategy {
    fn info(&self) -> &ResourceInfo {
        &self.info
    }

    fn kube_storage_prefix(&self) -> String {
        super::super::builtin_storage_prefix(&self.info)
    }

    /// kube's webhook configuration strategies refuse an update that names no
    /// resourceVersion.
    fn allows_unconditional_update(&self) -> bool {
        false
    }

    fn check_type_meta(&self, obj: &Value) -> Result<(), ApiError> {
        super::scheme::check_type_meta(obj, &self.info)
    }

    fn decode(&self, obj: &Value) -> Result<(), Undecodable> {
        if let Some(why) = self.go.decode_error(obj) {
            return Err(Undecodable(why));
        }
        check_ca_bundles(obj)
    }

    fn go_struct(&self) -> Option<&'static GoStruct> {
        Some(self.go)
    }

    fn prune_and_default(&self, obj: &mut Value) -> Vec<String> {
        let dropped = self.go.prune(obj);
        set_defaults(obj, self.hooks);
        dropped
    }

    fn zero_object(&self) -> Value {
        self.go.zero_object(&self.info.api_version(), &self.info.kind)
    }

    fn field_types(&self) -> Option<Arc<Schema>> {
        Some(Arc::clone(&self.types))
    }

    fn validate_create(&self, obj: &Value) -> Vec<FieldError> {
        webhook_validation::validate_create(obj, self.hooks)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errors = super::meta_update_errors(new, old);
        errors.extend(webhook_validation::validate_update(new, old, self.hooks));
        errors
    }

    /// apimachinery's `DefaultMetaV1FieldSelectorConversion`: both metadata fields, though
    /// the kind is cluster-scoped.
    fn selectable_fields(&self) -> Vec<String> {
        vec!["metadata.name".into(), "metadata.namespace".into()]
    }

    fn unsupported_field_label(&self, field: &str) -> String {
        crate::resources::default_field_label_refusal(field)
    }

    fn table_convertor(&self) -> TableConvertor {
        super::printers::webhook_configurations()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn webhooks_get_kubes_v1_defaults() {
        let s = WebhookConfigStrategy::new(Hooks::Mutating);
        let mut obj = json!({"metadata": {"name": "m"}, "webhooks": [{
            "name": "a.example.com", "clientConfig": {"service": {"namespace": "d", "name": "s"}},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}],
            "sideEffects": "None", "admissionReviewVersions": ["v1"], "unknown": 1,
        }]});
        assert_eq!(s.prune_and_default(&mut obj), ["webhooks[0].unknown"]);
        let hook = &obj["webhooks"][0];
        assert_eq!(hook["failurePolicy"], "Fail");
        assert_eq!(hook["matchPolicy"], "Equivalent");
        assert_eq!(hook["namespaceSelector"], json!({}));
        assert_eq!(hook["timeoutSeconds"], 10);
        assert_eq!(hook["reinvocationPolicy"], "Never");
        assert_eq!(hook["rules"][0]["scope"], "*");
        assert_eq!(hook["clientConfig"]["service"]["port"], 443);
        assert!(s.validate_create(&obj).is_empty());
    }

    #[test]
    fn a_ca_bundle_must_be_base64() {
        let s = WebhookConfigStrategy::new(Hooks::Validating);
        let obj = json!({"webhooks": [{"clientConfig": {"caBundle": "not base64!"}}]});
        assert!(s.decode(&obj).is_err());
    }
}
