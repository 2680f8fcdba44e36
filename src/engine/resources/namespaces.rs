//! core/v1 Namespaces: cluster-scoped, no generation, phase Active on create.

use super::{ResourceInfo, Strategy};
use crate::engine::field::FieldError;
use crate::engine::meta;
use serde_json::{Value, json};

/// The namespaces every engine has from the start.
pub const INITIAL: [&str; 4] = ["default", "kube-node-lease", "kube-public", "kube-system"];

pub struct NamespaceStrategy {
    info: ResourceInfo,
}

impl Default for NamespaceStrategy {
    fn default() -> Self {
        NamespaceStrategy {
            info: ResourceInfo {
                group: String::new(),
                version: "v1".into(),
                plural: "namespaces".into(),
                singular: "namespace".into(),
                kind: "Namespace".into(),
                list_kind: "NamespaceList".into(),
                namespaced: false,
                short_names: vec!["ns".into()],
                categories: vec![],
                status_subresource: true,
            },
        }
    }
}

/// A namespace object as a client would send it.
pub fn new_namespace(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
}

fn validate_name(obj: &Value) -> Vec<FieldError> {
    let name = meta::name(obj).unwrap_or_default();
    if meta::is_dns1123_label(name) {
        return vec![];
    }
    vec![FieldError::invalid(
        "metadata.name",
        name,
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    )]
}

impl Strategy for NamespaceStrategy {
    fn info(&self) -> &ResourceInfo {
        &self.info
    }

    fn kube_storage_prefix(&self) -> String {
        super::builtin_storage_prefix(&self.info)
    }

    fn uses_generation(&self) -> bool {
        false
    }

    fn table_convertor(&self) -> crate::engine::representation::table::TableConvertor {
        crate::engine::representation::table::TableConvertor::namespaces()
    }

    /// kube's defaulting sets the `kubernetes.io/metadata.name` label while decoding, so
    /// the writer's managedFields entry owns it (reference 61).
    fn prune_and_default(&self, obj: &mut Value) -> Vec<String> {
        let Some(name) = meta::name(obj).map(String::from) else { return Vec::new() };
        let labels = meta::metadata_mut(obj).entry("labels").or_insert_with(|| json!({}));
        if let Some(l) = labels.as_object_mut() {
            l.insert("kubernetes.io/metadata.name".into(), Value::from(name));
        }
        Vec::new()
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        if let Some(map) = obj.as_object_mut() {
            map.insert("spec".into(), json!({"finalizers": ["kubernetes"]}));
            map.insert("status".into(), json!({"phase": "Active"}));
        }
    }

    fn validate_create(&self, obj: &Value) -> Vec<FieldError> {
        validate_name(obj)
    }

    /// A namespace goes only once the namespace controller has emptied it and cleared
    /// `spec.finalizers`.
    fn defers_deletion(&self, obj: &Value) -> bool {
        obj.pointer("/spec/finalizers").and_then(Value::as_array).is_some_and(|f| !f.is_empty())
    }

    /// kube's namespace REST: a deletionTimestamp and phase Terminating, nothing else.
    fn prepare_for_deletion(&self, obj: &mut Value, now: k8s_openapi::jiff::Timestamp) {
        if let Some(map) = obj.as_object_mut() {
            map.insert("status".into(), json!({"phase": "Terminating"}));
        }
        meta::metadata_mut(obj).insert("deletionTimestamp".into(), Value::from(meta::format_time(now)));
    }

    fn validate_update(&self, _new: &Value, _old: &Value) -> Vec<FieldError> {
        vec![]
    }
}
