//! Test fixtures: small fluent builders for CRDs shared by every registry test.
//!
//! Test-only (`#[cfg(test)]`): integration tests drive the engine through a real client and
//! send CRDs as JSON, so they gain nothing from these builders and the library's public API
//! stays free of test helpers. The two reference CRDs (Widget, Gadget) mirror the bodies
//! POSTed in reference files 06 and 09.

use crate::registry::conditions::{self, ESTABLISHED, NAMES_ACCEPTED, STATUS_TRUE, message, reason};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceColumnDefinition, CustomResourceConversion, CustomResourceDefinition, CustomResourceDefinitionNames,
    CustomResourceDefinitionSpec, CustomResourceDefinitionStatus, CustomResourceDefinitionVersion,
    CustomResourceSubresourceScale, CustomResourceSubresourceStatus, CustomResourceSubresources,
    CustomResourceValidation, JSONSchemaProps, SelectableField, ServiceReference, WebhookClientConfig,
    WebhookConversion,
};
use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

/// A schema from a JSON literal (panics on a malformed fixture, which is a test bug).
pub fn schema(value: Value) -> JSONSchemaProps {
    serde_json::from_value(value).expect("fixture schema deserializes")
}

/// A timestamp `seconds` after the epoch.
pub fn at(seconds: i64) -> Timestamp {
    Timestamp::from_second(seconds).expect("valid timestamp")
}

/// Builds one `spec.versions[]` entry.
pub struct VersionBuilder(CustomResourceDefinitionVersion);

impl VersionBuilder {
    /// A version that is neither served nor storage and has no schema.
    pub fn new(name: &str) -> Self {
        VersionBuilder(CustomResourceDefinitionVersion { name: name.to_string(), ..Default::default() })
    }
    pub fn served(mut self, served: bool) -> Self {
        self.0.served = served;
        self
    }
    pub fn storage(mut self, storage: bool) -> Self {
        self.0.storage = storage;
        self
    }
    pub fn schema(mut self, value: Value) -> Self {
        self.0.schema = Some(CustomResourceValidation { open_api_v3_schema: Some(schema(value)) });
        self
    }
    pub fn status_subresource(mut self) -> Self {
        let sub = self.0.subresources.get_or_insert_with(Default::default);
        sub.status = Some(CustomResourceSubresourceStatus(json!({})));
        self
    }
    pub fn scale(mut self, spec: &str, status: &str, selector: Option<&str>) -> Self {
        let sub = self.0.subresources.get_or_insert_with(CustomResourceSubresources::default);
        sub.scale = Some(CustomResourceSubresourceScale {
            spec_replicas_path: spec.to_string(),
            status_replicas_path: status.to_string(),
            label_selector_path: selector.map(str::to_string),
        });
        self
    }
    pub fn column(mut self, name: &str, type_: &str, json_path: &str) -> Self {
        self.0.additional_printer_columns.get_or_insert_with(Vec::new).push(CustomResourceColumnDefinition {
            name: name.to_string(),
            type_: type_.to_string(),
            json_path: json_path.to_string(),
            ..Default::default()
        });
        self
    }
    pub fn column_format(mut self, format: &str) -> Self {
        if let Some(last) = self.0.additional_printer_columns.as_mut().and_then(|c| c.last_mut()) {
            last.format = Some(format.to_string());
        }
        self
    }
    pub fn selectable(mut self, json_path: &str) -> Self {
        let fields = self.0.selectable_fields.get_or_insert_with(Vec::new);
        fields.push(SelectableField { json_path: json_path.to_string() });
        self
    }
    pub fn deprecated(mut self, warning: Option<&str>) -> Self {
        self.0.deprecated = Some(true);
        self.0.deprecation_warning = warning.map(str::to_string);
        self
    }
    pub fn deprecation_warning(mut self, warning: &str) -> Self {
        self.0.deprecation_warning = Some(warning.to_string());
        self
    }
    pub fn build(self) -> CustomResourceDefinitionVersion {
        self.0
    }
}

/// Builds a CRD named `<plural>.<group>`, namespaced, with one served storage version `v1`
/// whose schema is `{"type": "object"}`. No defaults are applied.
pub struct CrdBuilder(CustomResourceDefinition);

impl CrdBuilder {
    pub fn new(plural: &str, group: &str) -> Self {
        let mut crd = CustomResourceDefinition::default();
        crd.metadata.name = Some(format!("{plural}.{group}"));
        crd.spec = CustomResourceDefinitionSpec {
            group: group.to_string(),
            names: CustomResourceDefinitionNames { plural: plural.to_string(), ..Default::default() },
            scope: "Namespaced".to_string(),
            versions: vec![
                VersionBuilder::new("v1").served(true).storage(true).schema(json!({"type": "object"})).build(),
            ],
            ..Default::default()
        };
        CrdBuilder(crd)
    }
    pub fn name(mut self, name: &str) -> Self {
        self.0.metadata.name = Some(name.to_string());
        self
    }
    pub fn kind(mut self, kind: &str) -> Self {
        self.0.spec.names.kind = kind.to_string();
        self
    }
    pub fn singular(mut self, singular: &str) -> Self {
        self.0.spec.names.singular = Some(singular.to_string());
        self
    }
    pub fn list_kind(mut self, list_kind: &str) -> Self {
        self.0.spec.names.list_kind = Some(list_kind.to_string());
        self
    }
    pub fn short_names<const N: usize>(mut self, short_names: [&str; N]) -> Self {
        self.0.spec.names.short_names = Some(short_names.iter().map(|s| s.to_string()).collect());
        self
    }
    pub fn categories<const N: usize>(mut self, categories: [&str; N]) -> Self {
        self.0.spec.names.categories = Some(categories.iter().map(|s| s.to_string()).collect());
        self
    }
    pub fn scope(mut self, scope: &str) -> Self {
        self.0.spec.scope = scope.to_string();
        self
    }
    pub fn versions(mut self, versions: Vec<CustomResourceDefinitionVersion>) -> Self {
        self.0.spec.versions = versions;
        self
    }
    /// Replaces the first version's schema.
    pub fn schema(mut self, value: Value) -> Self {
        if let Some(v) = self.0.spec.versions.first_mut() {
            v.schema = Some(CustomResourceValidation { open_api_v3_schema: Some(schema(value)) });
        }
        self
    }
    pub fn preserve_unknown_fields(mut self, preserve: bool) -> Self {
        self.0.spec.preserve_unknown_fields = Some(preserve);
        self
    }
    pub fn conversion(mut self, strategy: &str) -> Self {
        self.0.spec.conversion = Some(CustomResourceConversion { strategy: strategy.to_string(), webhook: None });
        self
    }
    /// `strategy: Webhook` calling a service, accepting ConversionReview `v1`.
    pub fn webhook_service(mut self, name: &str, namespace: &str) -> Self {
        let service =
            ServiceReference { name: name.to_string(), namespace: namespace.to_string(), ..Default::default() };
        self.0.spec.conversion = Some(CustomResourceConversion {
            strategy: "Webhook".to_string(),
            webhook: Some(WebhookConversion {
                client_config: Some(WebhookClientConfig { service: Some(service), ..Default::default() }),
                conversion_review_versions: vec!["v1".to_string()],
            }),
        });
        self
    }
    pub fn label(mut self, key: &str, value: &str) -> Self {
        self.0.metadata.labels.get_or_insert_with(Default::default).insert(key.to_string(), value.to_string());
        self
    }
    pub fn annotation(mut self, key: &str, value: &str) -> Self {
        self.0.metadata.annotations.get_or_insert_with(Default::default).insert(key.to_string(), value.to_string());
        self
    }
    fn status(&mut self) -> &mut CustomResourceDefinitionStatus {
        self.0.status.get_or_insert_with(Default::default)
    }
    /// `status.acceptedNames` equal to `spec.names` (as the names controller leaves it).
    pub fn accepted_names_from_spec(mut self) -> Self {
        let names = self.0.spec.names.clone();
        self.status().accepted_names = Some(names);
        self
    }
    /// Adds a condition stamped at `seconds`.
    pub fn condition(mut self, type_: &str, status: &str, reason: &str, message: &str, seconds: i64) -> Self {
        let c = conditions::condition(type_, status, reason, message);
        conditions::set_status_condition(self.status(), c, at(seconds));
        self
    }
    /// NamesAccepted and Established both `True` since `seconds`, as reference 08 shows.
    pub fn established_at(self, seconds: i64) -> Self {
        self.condition(NAMES_ACCEPTED, STATUS_TRUE, reason::NO_CONFLICTS, message::NO_CONFLICTS, seconds).condition(
            ESTABLISHED,
            STATUS_TRUE,
            reason::INITIAL_NAMES_ACCEPTED,
            message::INITIAL_NAMES_ACCEPTED,
            seconds,
        )
    }
    pub fn build(self) -> CustomResourceDefinition {
        self.0
    }
}

/// The Widget CRD POSTed in reference 06 (schema, status and scale subresources, columns).
pub fn widget() -> CrdBuilder {
    let version = VersionBuilder::new("v1")
        .served(true)
        .storage(true)
        .schema(json!({
            "type": "object",
            "properties": {
                "spec": {"type": "object", "properties": {
                    "size": {"type": "integer", "minimum": 0, "maximum": 10},
                    "color": {"type": "string", "enum": ["red", "green", "blue"]},
                    "replicas": {"type": "integer", "minimum": 0}
                }},
                "status": {"type": "object", "properties": {
                    "replicas": {"type": "integer"},
                    "selector": {"type": "string"},
                    "phase": {"type": "string"}
                }}
            }
        }))
        .status_subresource()
        .scale(".spec.replicas", ".status.replicas", Some(".status.selector"))
        .column("Color", "string", ".spec.color")
        .column("Replicas", "integer", ".spec.replicas")
        .column("Phase", "string", ".status.phase")
        .column("Age", "date", ".metadata.creationTimestamp")
        .build();
    CrdBuilder::new("widgets", "stable.example.com")
        .kind("Widget")
        .singular("widget")
        .list_kind("WidgetList")
        .short_names(["wd"])
        .versions(vec![version])
}

/// The Gadget CRD POSTed in reference 09: same group, also claiming short name `wd`.
pub fn gadget() -> CrdBuilder {
    CrdBuilder::new("gadgets", "stable.example.com")
        .kind("Gadget")
        .singular("gadget")
        .list_kind("GadgetList")
        .short_names(["wd"])
        .schema(json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}))
}
