//! The built-in kinds operators touch beside their CRDs, served through the same storage,
//! REST, watch and negotiation machinery as custom resources, each with kube-apiserver's
//! validation rules and messages and `kubectl get`'s columns:
//! - [`objects`]: ConfigMaps, Secrets, ServiceAccounts (core v1) and Leases
//!   (coordination.k8s.io/v1), stored as given;
//! - [`events`]: Events, one storage seen through core v1 and events.k8s.io/v1
//!   ([`event_conversion`] between the two forms);
//! - [`reviews`]: the self reviews (authorization.k8s.io/v1, authentication.k8s.io/v1),
//!   create-only and not stored, answering for the one user the engine knows;
//! - [`webhook_configs`]: Validating and MutatingWebhookConfigurations
//!   (admissionregistration.k8s.io/v1), with kube's defaults and validation;
//! - [`printers`]: their Table columns, as kube's `pkg/printers/internalversion`.

pub mod data;
pub mod discovery_structs;
pub mod doc_order;
pub mod event_conversion;
pub mod events;
pub mod objects;
pub mod printers;
pub mod review_structs;
pub mod reviews;
pub mod scheme;
pub mod struct_json;
mod tls_der;
mod tls_pair;
pub mod types;
pub mod unstructured_convert;
pub mod webhook_configs;
pub mod webhook_structs;
pub mod webhook_validation;

use super::{ResourceInfo, Strategy};
use crate::field::{FieldError, Path};
use crate::kinds::{BUILTIN_VERBS, ServedKind};
use crate::schema::go_time;
use crate::schema::names::{NameFn, is_qualified_name};
use crate::schema::object_meta::validate_object_meta;
use base64::Engine as _;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::sync::Arc;

/// Every built-in kind of this module, ready to serve; TokenReviews find the engine's user
/// behind `tokens`.
pub fn all(tokens: &Arc<crate::authn::Tokens>) -> Vec<ServedKind> {
    use objects::{Builtin, BuiltinStrategy};
    let stored = |strategy: Arc<dyn Strategy>, storage_kind: (&str, &str)| ServedKind {
        verbs: BUILTIN_VERBS.to_vec(),
        scale: None,
        storage_version_hash: Some(storage_version_hash(storage_kind.0, "v1", storage_kind.1)),
        terminating: false,
        installing: false,
        deprecation_warning: None,
        strategy,
    };
    let create_only = |strategy: Arc<dyn Strategy>| ServedKind {
        strategy,
        verbs: vec!["create"],
        scale: None,
        storage_version_hash: None,
        terminating: false,
        installing: false,
        deprecation_warning: None,
    };
    let mut out: Vec<ServedKind> = [Builtin::ConfigMap, Builtin::Secret, Builtin::ServiceAccount, Builtin::Lease]
        .into_iter()
        .map(|k| {
            let strategy = BuiltinStrategy::new(k);
            let storage = (strategy.info().group.clone(), strategy.info().kind.clone());
            stored(Arc::new(strategy), (&storage.0, &storage.1))
        })
        .collect();
    // kube lists its resources of a group by name: mutating before validating.
    for hooks in [webhook_configs::Hooks::Mutating, webhook_configs::Hooks::Validating] {
        let strategy = webhook_configs::WebhookConfigStrategy::new(hooks);
        let kind = strategy.info().kind.clone();
        out.push(stored(Arc::new(strategy), (webhook_configs::GROUP, &kind)));
    }
    // Both Event APIs are stored as core v1 Events.
    out.push(stored(Arc::new(events::CoreEventStrategy::default()), ("", "Event")));
    out.push(stored(Arc::new(events::EventsV1Strategy::default()), ("", "Event")));
    out.push(create_only(Arc::new(reviews::ReviewStrategy::new(reviews::Review::Access))));
    out.push(create_only(Arc::new(reviews::ReviewStrategy::new(reviews::Review::Rules))));
    out.push(create_only(Arc::new(reviews::ReviewStrategy::new(reviews::Review::Identity))));
    out.push(create_only(Arc::new(reviews::ReviewStrategy::with_tokens(reviews::Review::Token, tokens.clone()))));
    out
}

/// Discovery's `storageVersionHash`: the first 8 bytes of the SHA-256 of the storage
/// version's `group/version/kind`, base64 (apiserver's `StorageVersionHash`).
pub fn storage_version_hash(group: &str, version: &str, kind: &str) -> String {
    let digest = Sha256::digest(format!("{group}/{version}/{kind}").as_bytes());
    base64::engine::general_purpose::STANDARD.encode(&digest[..8])
}

/// The names of a built-in kind at `v1`.
pub(crate) fn info(group: &str, plural: &str, kind: &str, short: &[&str], namespaced: bool) -> ResourceInfo {
    ResourceInfo {
        group: group.into(),
        version: "v1".into(),
        plural: plural.into(),
        singular: kind.to_lowercase(),
        kind: kind.into(),
        list_kind: format!("{kind}List"),
        namespaced,
        short_names: short.iter().map(|s| s.to_string()).collect(),
        categories: vec![],
        status_subresource: false,
    }
}

/// The standard finalizers a core kind may carry without a domain.
const STANDARD_FINALIZERS: [&str; 3] = ["kubernetes", "orphan", "foregroundDeletion"];

/// Core's `ValidateObjectMeta`: apimachinery's rules, plus finalizer names that are
/// either standard or fully qualified.
pub(crate) fn core_meta_errors(obj: &Value, name_fn: NameFn) -> Vec<FieldError> {
    let empty = Value::Object(Map::new());
    let meta = obj.get("metadata").unwrap_or(&empty);
    let path = Path::root("metadata");
    let mut errors = validate_object_meta(meta, true, name_fn, &path);
    errors.extend(kube_finalizers_errors(obj));
    errors
}

/// Core's check, after apimachinery's, that `metadata.finalizers` are standard or fully
/// qualified (both its `ValidateObjectMeta` and its `ValidateObjectMetaUpdate` run it).
pub(crate) fn kube_finalizers_errors(obj: &Value) -> Vec<FieldError> {
    let path = Path::root("metadata").child("finalizers");
    let finalizers =
        obj.pointer("/metadata/finalizers").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let names = finalizers.iter().enumerate();
    names.filter_map(|(i, f)| kube_finalizer_errors(f.as_str().unwrap_or_default(), path.index(i))).collect()
}

/// Core's `validateKubeFinalizerName`: a finalizer without a domain must be a standard one.
fn kube_finalizer_errors(name: &str, path: Path) -> Option<FieldError> {
    (!name.contains('/') && !STANDARD_FINALIZERS.contains(&name))
        .then(|| FieldError::invalid(path, name, "name is neither a standard finalizer name nor is it fully qualified"))
}

/// Core's `validateFinalizerName` (a Namespace's `spec.finalizers`): a qualified name, and
/// a standard one when it has no domain.
pub(crate) fn finalizer_name_errors(name: &str, path: &Path) -> Vec<FieldError> {
    let mut errors: Vec<FieldError> =
        is_qualified_name(name).into_iter().map(|m| FieldError::invalid(path.clone(), name, m)).collect();
    errors.extend(kube_finalizer_errors(name, path.clone()));
    errors
}

/// apimachinery's `ValidateObjectMetaUpdate` on two whole objects.
pub(crate) fn meta_update_errors(new: &Value, old: &Value) -> Vec<FieldError> {
    let empty = Value::Object(Map::new());
    crate::schema::object_meta::validate_object_meta_update(
        new.get("metadata").unwrap_or(&empty),
        old.get("metadata").unwrap_or(&empty),
        &Path::root("metadata"),
    )
}

/// Core's `ValidateObjectMetaUpdate`: apimachinery's, then the finalizer names. A core
/// kind's update runs it and then its create validation, so kube reports a finalizer
/// without a domain twice there.
pub(crate) fn core_meta_update_errors(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errors = meta_update_errors(new, old);
    errors.extend(kube_finalizers_errors(new));
    errors
}

/// How a time field is written: `metav1.Time` (whole seconds) or `metav1.MicroTime`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeKind {
    Seconds,
    Micro,
}

/// A time as kube writes it back (UTC, seconds or microseconds); `None` when Go's
/// RFC 3339 reader refuses it.
pub fn format_time(text: &str, kind: TimeKind) -> Option<String> {
    let t = go_time::parse_rfc3339(text)?;
    let layout = match kind {
        TimeKind::Seconds => "%Y-%m-%dT%H:%M:%SZ",
        TimeKind::Micro => "%Y-%m-%dT%H:%M:%S%.6fZ",
    };
    k8s_openapi::jiff::fmt::strtime::format(layout, t).ok()
}

/// A time value normalized as kube re-encodes it: a parseable string reformatted,
/// anything else (null, or what decoding refused) as it is.
pub fn normalize_time(value: Value, kind: TimeKind) -> Value {
    match value.as_str().and_then(|s| format_time(s, kind)) {
        Some(t) => Value::from(t),
        None => value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_version_hashes_are_kubes() {
        assert_eq!(storage_version_hash("", "v1", "ConfigMap"), "qFsyl6wFWjQ=");
        assert_eq!(storage_version_hash("coordination.k8s.io", "v1", "Lease"), "gqkMMb/YqFM=");
        assert_eq!(storage_version_hash("", "v1", "Event"), "r2yiGXH7wu8=");
    }

    #[test]
    fn times_are_written_back_as_kube_writes_them() {
        assert_eq!(
            format_time("2024-05-01T10:00:00.123456789+02:00", TimeKind::Micro).as_deref(),
            Some("2024-05-01T08:00:00.123456Z")
        );
        assert_eq!(format_time("2024-05-01T10:00:00.9Z", TimeKind::Seconds).as_deref(), Some("2024-05-01T10:00:00Z"));
        assert_eq!(format_time("yesterday", TimeKind::Seconds), None);
    }

    #[test]
    fn core_finalizers_are_standard_or_qualified() {
        let obj = serde_json::json!({"metadata": {"name": "a", "namespace": "default", "finalizers": ["kubernetes", "mine", "example.com/mine"]}});
        let errs: Vec<String> = core_meta_errors(&obj, crate::schema::names::name_is_dns_subdomain)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            errs,
            [
                "metadata.finalizers[1]: Invalid value: \"mine\": name is neither a standard finalizer name nor is it fully qualified"
            ]
        );
    }
}
