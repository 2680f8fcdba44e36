//! ConfigMaps, Secrets, ServiceAccounts (core v1) and Leases (coordination.k8s.io/v1):
//! stored as given, validated with kube-apiserver's rules (`ValidateConfigMap`,
//! `ValidateSecret`, `ValidateServiceAccount`, `ValidateLease` and their updates), with
//! what kube's strategies and conversions do on the way in.

use super::types::{self, GoStruct};
use super::{TimeKind, core_meta_errors, core_meta_update_errors, data, meta_update_errors, normalize_time};
use crate::field::FieldError;
use crate::representation::table::TableConvertor;
use crate::resources::managed_fields::schema::Schema;
use crate::resources::{ResourceInfo, Strategy, Undecodable};
use crate::schema::names::{NameFn, is_qualified_name, name_is_dns_subdomain};
use crate::schema::object_meta::validate_object_meta;
use crate::status::ApiError;
use serde_json::{Map, Value};
use std::sync::Arc;

/// Which kind a [`BuiltinStrategy`] serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    ConfigMap,
    Secret,
    ServiceAccount,
    Lease,
}

/// The strategy of one of the kinds stored as given.
pub struct BuiltinStrategy {
    kind: Builtin,
    info: ResourceInfo,
    /// The kind's Go struct, and the field types managedFields derive from it.
    go: &'static GoStruct,
    types: Arc<Schema>,
}

/// The coordinated-leader-election strategies kube knows.
const LEASE_STRATEGIES: [&str; 1] = ["OldestEmulationVersion"];
/// The Lease fields of coordinated leader election, which kube 1.32 drops while its
/// `CoordinatedLeaderElection` feature (alpha) is off, unless the stored Lease has them.
const LEASE_GATED: [&str; 2] = ["strategy", "preferredHolder"];

impl BuiltinStrategy {
    pub fn new(kind: Builtin) -> Self {
        let (info, go) = match kind {
            Builtin::ConfigMap => (super::info("", "configmaps", "ConfigMap", &["cm"], true), &types::CONFIG_MAP),
            Builtin::Secret => (super::info("", "secrets", "Secret", &[], true), &types::SECRET),
            Builtin::ServiceAccount => {
                (super::info("", "serviceaccounts", "ServiceAccount", &["sa"], true), &types::SERVICE_ACCOUNT)
            }
            Builtin::Lease => (super::info("coordination.k8s.io", "leases", "Lease", &[], true), &types::LEASE),
        };
        BuiltinStrategy { kind, info, go, types: Arc::new(go.schema()) }
    }

    /// kube's `dropDisabledFields` for Leases: the gated fields go unless `old` has them.
    fn drop_disabled(&self, obj: &mut Value, old: Option<&Value>) {
        if self.kind != Builtin::Lease {
            return;
        }
        let in_use =
            old.and_then(|o| o.get("spec")).is_some_and(|spec| LEASE_GATED.iter().any(|f| spec.get(f).is_some()));
        if in_use {
            return;
        }
        if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
            LEASE_GATED.iter().for_each(|f| {
                spec.remove(*f);
            });
        }
    }

    fn name_fn(&self) -> NameFn {
        // Every one of these uses NameIsDNSSubdomain.
        name_is_dns_subdomain
    }

    /// The rules of a new object past its metadata.
    fn kind_errors(&self, obj: &Value) -> Vec<FieldError> {
        match self.kind {
            Builtin::ConfigMap => data::config_map_errors(obj),
            Builtin::Secret => data::secret_errors(obj),
            Builtin::ServiceAccount => Vec::new(),
            Builtin::Lease => lease_spec_errors(obj),
        }
    }

    /// kube's Secret strategy warns of a TLS Secret whose pair Go's `tls.X509KeyPair`
    /// refuses (on create and update alike).
    fn kind_warnings(&self, obj: &Value) -> Vec<String> {
        if self.kind != Builtin::Secret || obj.get("type").and_then(Value::as_str) != Some("kubernetes.io/tls") {
            return Vec::new();
        }
        let bytes = |key: &str| {
            obj.pointer(&format!("/data/{}", key.replace('~', "~0").replace('/', "~1")))
                .and_then(Value::as_str)
                .and_then(|text| data::decode_base64(text).ok())
                .unwrap_or_default()
        };
        super::tls_pair::pair_problem(&bytes("tls.crt"), &bytes("tls.key")).into_iter().collect()
    }

    /// What kube's strategies do to a body before validation.
    fn normalize(&self, obj: &mut Value) {
        match self.kind {
            // The service account strategy keeps only the names of referenced secrets.
            Builtin::ServiceAccount => {
                if let Some(secrets) = obj.get_mut("secrets").and_then(Value::as_array_mut) {
                    for s in secrets.iter_mut() {
                        let mut only_name = Map::new();
                        if let Some(name) = s.get("name").filter(|n| n.as_str().is_some_and(|n| !n.is_empty())) {
                            only_name.insert("name".into(), name.clone());
                        }
                        *s = Value::Object(only_name);
                    }
                }
            }
            Builtin::Lease => {
                // `spec` is a struct value, not a pointer: Go decodes a missing or null one
                // as the empty spec and always writes it back.
                if let Some(o) = obj.as_object_mut()
                    && o.get("spec").is_none_or(Value::is_null)
                {
                    o.insert("spec".into(), Value::Object(Map::new()));
                }
                if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
                    for field in ["acquireTime", "renewTime"] {
                        if let Some(t) = spec.remove(field) {
                            spec.insert(field.into(), normalize_time(t, TimeKind::Micro));
                        }
                    }
                }
            }
            Builtin::ConfigMap | Builtin::Secret => {}
        }
    }
}

impl Strategy for BuiltinStrategy {
    fn info(&self) -> &ResourceInfo {
        &self.info
    }

    fn kube_storage_prefix(&self) -> String {
        super::super::builtin_storage_prefix(&self.info)
    }

    /// These kinds carry no generation in kube's answers.
    fn uses_generation(&self) -> bool {
        false
    }

    /// A lease must name the resourceVersion it updates, and a missing one is created on
    /// update (kube's lease strategy); the others overwrite, and answer 404 when missing.
    fn allows_unconditional_update(&self) -> bool {
        self.kind != Builtin::Lease
    }

    fn allows_create_on_update(&self) -> bool {
        self.kind == Builtin::Lease
    }

    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        self.kind_warnings(obj)
    }

    fn warnings_on_update(&self, new: &Value, _old: &Value) -> Vec<String> {
        self.kind_warnings(new)
    }

    fn check_type_meta(&self, obj: &Value) -> Result<(), ApiError> {
        super::scheme::check_type_meta(obj, &self.info)
    }

    /// Values of the wrong JSON type, `[]byte` fields that are not base64 and times that
    /// are not RFC 3339 fail decoding (400), before any validation.
    fn decode(&self, obj: &Value) -> Result<(), Undecodable> {
        if let Some(why) = self.go.decode_error(obj) {
            return Err(Undecodable(why));
        }
        match self.kind {
            Builtin::Secret => data::check_base64(obj, "data"),
            Builtin::ConfigMap => data::check_base64(obj, "binaryData"),
            Builtin::Lease | Builtin::ServiceAccount => Ok(()),
        }
    }

    fn go_struct(&self) -> Option<&'static GoStruct> {
        Some(self.go)
    }

    /// Decoding drops what the Go struct lacks; a Secret's v1 conversion folds
    /// `stringData` into `data` and its defaulting sets the type, so the field manager
    /// sees (and records) `data` and `type` only.
    fn prune_and_default(&self, obj: &mut Value) -> Vec<String> {
        let dropped = self.go.prune(obj);
        match self.kind {
            Builtin::Secret => data::normalize_map_values(obj, "data"),
            Builtin::ConfigMap => {
                data::normalize_map_values(obj, "data");
                data::normalize_map_values(obj, "binaryData");
            }
            // `Lease.spec` is a struct, not a pointer: Go decodes a missing or null one
            // as its zero value, which it encodes `{}`.
            Builtin::Lease => {
                if let Some(map) = obj.as_object_mut()
                    && map.get("spec").is_none_or(Value::is_null)
                {
                    map.insert("spec".into(), Value::Object(Map::new()));
                }
            }
            Builtin::ServiceAccount => {}
        }
        if self.kind == Builtin::Secret {
            data::fold_string_data(obj);
            if obj.get("type").and_then(Value::as_str).is_none_or(str::is_empty)
                && let Some(map) = obj.as_object_mut()
            {
                map.insert("type".into(), Value::from("Opaque"));
            }
        }
        dropped
    }

    fn zero_object(&self) -> Value {
        self.go.zero_object(&self.info.api_version(), &self.info.kind)
    }

    fn field_types(&self) -> Option<Arc<Schema>> {
        Some(Arc::clone(&self.types))
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        self.normalize(obj);
        self.drop_disabled(obj, None);
    }

    fn validate_create(&self, obj: &Value) -> Vec<FieldError> {
        let mut errors = match self.kind {
            // Leases are validated with apimachinery's ObjectMeta rules, not core's.
            Builtin::Lease => {
                let empty = Value::Object(Map::new());
                let meta = obj.get("metadata").unwrap_or(&empty);
                validate_object_meta(meta, true, self.name_fn(), &crate::field::Path::root("metadata"))
            }
            _ => core_meta_errors(obj, self.name_fn()),
        };
        errors.extend(self.kind_errors(obj));
        errors
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        self.normalize(new);
        self.drop_disabled(new, Some(old));
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        // Core kinds run core's metadata update rules; a Lease, apimachinery's.
        let mut errors = match self.kind {
            Builtin::Lease => meta_update_errors(new, old),
            _ => core_meta_update_errors(new, old),
        };
        match self.kind {
            Builtin::ConfigMap => {
                errors.extend(data::immutability_errors(new, old, &["data", "binaryData"]));
                errors.extend(self.validate_create(new));
            }
            Builtin::Secret => {
                if new.get("type") != old.get("type") {
                    let t = new.get("type").and_then(Value::as_str).unwrap_or_default();
                    errors.push(FieldError::invalid("type", t, "field is immutable"));
                }
                errors.extend(data::immutability_errors(new, old, &["data"]));
                errors.extend(self.validate_create(new));
            }
            Builtin::ServiceAccount => errors.extend(self.validate_create(new)),
            Builtin::Lease => errors.extend(lease_spec_errors(new)),
        }
        errors
    }

    fn selectable_fields(&self) -> Vec<String> {
        let mut fields = vec!["metadata.name".to_string(), "metadata.namespace".to_string()];
        if self.kind == Builtin::Secret {
            fields.push("type".into());
        }
        fields
    }

    /// kube's serviceaccount storage sets `ReturnDeletedObject`.
    fn returns_deleted_object(&self) -> bool {
        self.kind == Builtin::ServiceAccount
    }

    /// Only Secrets have a field label conversion of their own; the others get apimachinery's
    /// `DefaultMetaV1FieldSelectorConversion`, which names the two it knows.
    fn unsupported_field_label(&self, field: &str) -> String {
        match self.kind {
            Builtin::Secret => format!("field label not supported: {field}"),
            _ => crate::resources::default_field_label_refusal(field),
        }
    }

    fn table_convertor(&self) -> TableConvertor {
        match self.kind {
            Builtin::ConfigMap => super::printers::config_maps(),
            Builtin::Secret => super::printers::secrets(),
            Builtin::ServiceAccount => super::printers::service_accounts(),
            Builtin::Lease => super::printers::leases(),
        }
    }
}

/// kube's `ValidateLeaseSpec`.
fn lease_spec_errors(obj: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let spec = obj.get("spec");
    let int = |k: &str| spec.and_then(|s| s.get(k)).and_then(Value::as_i64);
    let text = |k: &str| spec.and_then(|s| s.get(k)).and_then(Value::as_str);
    if let Some(d) = int("leaseDurationSeconds")
        && d <= 0
    {
        errors.push(FieldError::invalid("spec.leaseDurationSeconds", d, "must be greater than 0"));
    }
    if let Some(t) = int("leaseTransitions")
        && t < 0
    {
        errors.push(FieldError::invalid("spec.leaseTransitions", t, "must be greater than or equal to 0"));
    }
    let strategy = text("strategy");
    if let Some(s) = strategy {
        // kube appends `strategy` to the path it is given: `spec.strategy.strategy`.
        if s.contains('/') {
            for msg in is_qualified_name(s) {
                errors.push(FieldError::invalid("spec.strategy.strategy", s, msg));
            }
        } else if !LEASE_STRATEGIES.contains(&s) {
            errors.push(FieldError::not_supported("spec.strategy.strategy", s, &LEASE_STRATEGIES));
        }
    }
    if text("preferredHolder").is_some_and(|h| !h.is_empty()) && strategy.is_none_or(str::is_empty) {
        errors.push(FieldError::forbidden("spec.preferredHolder", "may only be specified if `strategy` is defined"));
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn errors(kind: Builtin, obj: Value) -> Vec<String> {
        BuiltinStrategy::new(kind).validate_create(&obj).iter().map(ToString::to_string).collect()
    }

    #[test]
    fn a_lease_with_a_negative_duration_is_invalid() {
        let errs = errors(
            Builtin::Lease,
            json!({"metadata": {"name": "l", "namespace": "default"}, "spec": {"leaseDurationSeconds": -1, "leaseTransitions": -2}}),
        );
        assert_eq!(
            errs,
            [
                "spec.leaseDurationSeconds: Invalid value: -1: must be greater than 0",
                "spec.leaseTransitions: Invalid value: -2: must be greater than or equal to 0",
            ]
        );
        let errs = errors(
            Builtin::Lease,
            json!({"metadata": {"name": "l", "namespace": "default"}, "spec": {"preferredHolder": "a", "strategy": "Newest"}}),
        );
        assert_eq!(
            errs,
            ["spec.strategy.strategy: Unsupported value: \"Newest\": supported values: \"OldestEmulationVersion\""]
        );
    }

    #[test]
    fn lease_times_are_written_as_micro_times() {
        let s = BuiltinStrategy::new(Builtin::Lease);
        let mut obj = json!({"spec": {"renewTime": "2024-01-01T00:00:00Z"}});
        s.prepare_for_create(&mut obj);
        assert_eq!(obj["spec"]["renewTime"], "2024-01-01T00:00:00.000000Z");
        assert!(s.decode(&json!({"spec": {"renewTime": "later"}})).is_err());
    }

    #[test]
    fn a_lease_without_spec_is_written_with_an_empty_one() {
        let s = BuiltinStrategy::new(Builtin::Lease);
        for spec in [None, Some(Value::Null)] {
            let mut obj = json!({"metadata": {"name": "l"}});
            if let Some(spec) = spec {
                obj["spec"] = spec;
            }
            s.prepare_for_create(&mut obj);
            assert_eq!(obj["spec"], json!({}));
        }
    }

    #[test]
    fn secrets_default_their_type_and_keep_it() {
        let s = BuiltinStrategy::new(Builtin::Secret);
        let mut obj = json!({"metadata": {"name": "s"}, "stringData": {"user": "admin"}});
        assert!(s.prune_and_default(&mut obj).is_empty());
        assert_eq!(obj, json!({"metadata": {"name": "s"}, "data": {"user": "YWRtaW4="}, "type": "Opaque"}));
        let old = json!({"metadata": {"name": "s", "namespace": "default"}, "type": "kubernetes.io/tls",
                         "data": {"tls.crt": "eA==", "tls.key": "eA=="}});
        let mut new =
            json!({"metadata": {"name": "s", "namespace": "default"}, "data": {"tls.crt": "eA==", "tls.key": "eA=="}});
        s.prune_and_default(&mut new);
        s.prepare_for_update(&mut new, &old);
        let errs: Vec<String> = s.validate_update(&new, &old).iter().map(ToString::to_string).collect();
        assert_eq!(errs, ["type: Invalid value: \"Opaque\": field is immutable"]);
    }

    #[test]
    fn service_accounts_keep_only_secret_names() {
        let s = BuiltinStrategy::new(Builtin::ServiceAccount);
        let mut obj = json!({"secrets": [{"name": "a", "namespace": "x", "uid": "u"}]});
        s.prepare_for_create(&mut obj);
        assert_eq!(obj, json!({"secrets": [{"name": "a"}]}));
    }

    #[test]
    fn an_immutable_config_map_keeps_its_data() {
        let s = BuiltinStrategy::new(Builtin::ConfigMap);
        let old = json!({"metadata": {"name": "c", "namespace": "default"}, "immutable": true, "data": {"a": "1"}});
        let new = json!({"metadata": {"name": "c", "namespace": "default"}, "immutable": true, "data": {"a": "2"}});
        let errs: Vec<String> = s.validate_update(&new, &old).iter().map(ToString::to_string).collect();
        assert_eq!(errs, ["data: Forbidden: field is immutable when `immutable` is set"]);
    }
}
