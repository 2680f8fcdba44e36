//! Custom resources of one served CRD version as a kind.
//!
//! The spec/status split follows the subresources proposal: with `/status` enabled, a
//! create drops `.status` and the main endpoint keeps the stored status (the generic
//! `Strategy` defaults), while `/status` writes only `.status`. Schema validation, pruning
//! and defaulting arrive with the custom-resources issue; until then objects are checked
//! for a valid name only.

use super::{ResourceInfo, Strategy};
use crate::engine::field::FieldError;
use crate::engine::meta;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceDefinitionVersion,
};
use serde_json::Value;

pub struct CustomResourceStrategy {
    info: ResourceInfo,
}

impl CustomResourceStrategy {
    /// The kind a CRD serves at one version, under its *accepted* names.
    pub fn new(crd: &CustomResourceDefinition, version: &CustomResourceDefinitionVersion) -> Self {
        let names = crd.status.as_ref().and_then(|s| s.accepted_names.clone()).unwrap_or_default();
        let status_subresource = version.subresources.as_ref().is_some_and(|s| s.status.is_some());
        CustomResourceStrategy {
            info: ResourceInfo {
                group: crd.spec.group.clone(),
                version: version.name.clone(),
                plural: names.plural.clone(),
                singular: names.singular.clone().unwrap_or_default(),
                kind: names.kind.clone(),
                list_kind: names.list_kind.clone().unwrap_or_else(|| format!("{}List", names.kind)),
                namespaced: crd.spec.scope == "Namespaced",
                short_names: names.short_names.clone().unwrap_or_default(),
                categories: names.categories.clone().unwrap_or_default(),
                status_subresource,
            },
        }
    }
}

/// A DNS-1123 subdomain, as custom resource names must be.
fn valid_name(name: &str) -> bool {
    name.len() <= 253 && name.split('.').all(meta::is_dns1123_label)
}

impl Strategy for CustomResourceStrategy {
    fn info(&self) -> &ResourceInfo {
        &self.info
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        if self.info.status_subresource
            && let Some(map) = obj.as_object_mut()
        {
            map.remove("status");
        }
    }

    fn validate_create(&self, obj: &Value) -> Vec<FieldError> {
        let name = meta::name(obj).unwrap_or_default();
        if valid_name(name) {
            return vec![];
        }
        vec![FieldError::invalid(
            "metadata.name",
            name,
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        )]
    }

    fn validate_update(&self, _new: &Value, _old: &Value) -> Vec<FieldError> {
        vec![]
    }
}
