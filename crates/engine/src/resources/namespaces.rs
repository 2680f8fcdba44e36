//! core/v1 Namespaces: cluster-scoped, no generation, phase Active on create.

use super::rest::{DeleteOptions, FOREGROUND_FINALIZER, ORPHAN_FINALIZER, Propagation, deletion_finalizers};
use super::{ResourceInfo, Strategy};
use crate::field::{FieldError, Path};
use crate::meta;
use crate::schema::names::name_is_dns_label;
use crate::schema::object_meta::validate_object_meta;
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// The namespaces every engine has from the start.
pub const INITIAL: [&str; 4] = ["default", "kube-node-lease", "kube-public", "kube-system"];

/// The finalizer every namespace gets on create, which the namespace controller clears.
const KUBERNETES_FINALIZER: &str = "kubernetes";

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

/// kube's `ValidateNamespace` on the metadata: core's rules (apimachinery's for a
/// cluster-scoped object named by `NameIsDNSLabel`, then finalizer names), the automatic
/// name label included (so a name too long for a label value fails twice).
fn validate_meta(obj: &Value) -> Vec<FieldError> {
    let empty = Value::Object(serde_json::Map::new());
    let meta = obj.get("metadata").unwrap_or(&empty);
    let mut errs = validate_object_meta(meta, false, name_is_dns_label, &Path::root("metadata"));
    errs.extend(super::builtin::kube_finalizers_errors(obj));
    errs
}

impl Strategy for NamespaceStrategy {
    fn info(&self) -> &ResourceInfo {
        &self.info
    }

    fn check_type_meta(&self, obj: &Value) -> Result<(), crate::status::ApiError> {
        super::builtin::scheme::check_type_meta(obj, &self.info)
    }

    fn kube_storage_prefix(&self) -> String {
        super::builtin_storage_prefix(&self.info)
    }

    fn uses_generation(&self) -> bool {
        false
    }

    fn table_convertor(&self) -> crate::representation::table::TableConvertor {
        crate::representation::table::TableConvertor::namespaces()
    }

    /// Values of the wrong JSON type and times that are not RFC 3339 fail decoding (400).
    fn decode(&self, obj: &Value) -> Result<(), super::Undecodable> {
        super::builtin::types::NAMESPACE.decode_error(obj).map_or(Ok(()), |why| Err(super::Undecodable(why)))
    }

    /// kube's defaulting sets the `kubernetes.io/metadata.name` label while decoding, so
    /// the writer's managedFields entry owns it (reference 61).
    fn go_struct(&self) -> Option<&'static super::builtin::types::GoStruct> {
        Some(&super::builtin::types::NAMESPACE)
    }

    /// The Go struct types the fields, as kube's OpenAPI does: `spec` is a named field, so
    /// an apply owns it without a `"."` of its own (the oracle's Apply entry).
    fn field_types(&self) -> Option<std::sync::Arc<super::managed_fields::schema::Schema>> {
        use super::managed_fields::schema::Schema;
        static TYPES: std::sync::LazyLock<std::sync::Arc<Schema>> =
            std::sync::LazyLock::new(|| std::sync::Arc::new(super::builtin::types::NAMESPACE.schema()));
        Some(std::sync::Arc::clone(&TYPES))
    }

    /// Go's zero Namespace: its `spec` and `status` are `{}`, which a write does not own.
    fn zero_object(&self) -> Value {
        super::builtin::types::NAMESPACE.zero_object(&self.info().api_version(), &self.info().kind)
    }

    /// Decoding drops (and reports) what the Go struct lacks; every namespace is
    /// labelled with its name.
    fn prune_and_default(&self, obj: &mut Value) -> Vec<String> {
        let dropped = super::builtin::types::NAMESPACE.prune(obj);
        label_with_name(obj);
        dropped
    }

    /// kube's namespace `Canonicalize` labels the namespace with its name once more, after
    /// validation: a generated name, which defaulting (before it existed) could not.
    fn canonicalize(&self, obj: &mut Value) {
        super::builtin::types::NAMESPACE.null_zero_times(obj);
        label_with_name(obj);
    }

    /// kube's namespace strategy: phase Active, and the `kubernetes` finalizer appended to
    /// those sent when it is not among them.
    fn prepare_for_create(&self, obj: &mut Value) {
        let mut finalizers: Vec<Value> =
            obj.pointer("/spec/finalizers").and_then(Value::as_array).cloned().unwrap_or_default();
        if !finalizers.iter().any(|f| f == KUBERNETES_FINALIZER) {
            finalizers.push(Value::from(KUBERNETES_FINALIZER));
        }
        if let Some(map) = obj.as_object_mut() {
            map.insert("spec".into(), json!({"finalizers": finalizers}));
            map.insert("status".into(), json!({"phase": "Active"}));
        }
    }

    /// kube's `ValidateNamespace`: the metadata, and each of `spec.finalizers` (all on the
    /// list's own path, as kube reports them).
    fn validate_create(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = validate_meta(obj);
        let path = Path::root("spec").child("finalizers");
        for f in obj.pointer("/spec/finalizers").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default() {
            errs.extend(super::builtin::finalizer_name_errors(f.as_str().unwrap_or_default(), &path));
        }
        errs
    }

    /// kube's namespace REST sets the garbage collector's finalizers on the first delete
    /// only, from the options alone, where the deprecated `orphanDependents=false` asks for
    /// `foregroundDeletion`; then they are sorted. A later delete leaves them while
    /// `spec.finalizers` hold it.
    fn deletion_finalizers(&self, obj: &Value, delete: &DeleteOptions) -> Option<Vec<String>> {
        let stored = meta::finalizers(obj);
        if meta::deletion_timestamp(obj).is_some() {
            return if self.finalizing(obj) { None } else { deletion_finalizers(&stored, delete.propagation) };
        }
        let has = |f: &str| stored.iter().any(|x| x == f);
        let (orphan, foreground) = match (delete.orphan_dependents, delete.propagation) {
            (Some(orphan), _) => (orphan, !orphan),
            (None, Some(policy)) => (policy == Propagation::Orphan, policy == Propagation::Foreground),
            (None, None) => (has(ORPHAN_FINALIZER), has(FOREGROUND_FINALIZER)),
        };
        if orphan == has(ORPHAN_FINALIZER) && foreground == has(FOREGROUND_FINALIZER) {
            return None;
        }
        let mut kept: BTreeSet<String> =
            stored.into_iter().filter(|f| f != ORPHAN_FINALIZER && f != FOREGROUND_FINALIZER).collect();
        kept.extend(orphan.then(|| ORPHAN_FINALIZER.to_string()));
        kept.extend(foreground.then(|| FOREGROUND_FINALIZER.to_string()));
        Some(kept.into_iter().collect())
    }

    fn own_delete_preconditions(&self) -> bool {
        true
    }

    /// A namespace goes only once the namespace controller has emptied it and cleared
    /// `spec.finalizers`.
    fn defers_deletion(&self, obj: &Value) -> bool {
        self.finalizing(obj)
    }

    /// kube's namespace REST deletes on its own: a later DELETE leaves the marked
    /// namespace as it is.
    fn marks_pending_deletion_again(&self) -> bool {
        false
    }

    fn finalizing(&self, obj: &Value) -> bool {
        obj.pointer("/spec/finalizers").and_then(Value::as_array).is_some_and(|f| !f.is_empty())
    }

    /// kube's namespace REST: a deletionTimestamp and phase Terminating, nothing else.
    fn prepare_for_deletion(&self, obj: &mut Value, now: k8s_openapi::jiff::Timestamp) {
        if let Some(map) = obj.as_object_mut() {
            map.insert("status".into(), json!({"phase": "Terminating"}));
        }
        meta::metadata_mut(obj).insert("deletionTimestamp".into(), Value::from(meta::format_time(now)));
    }

    /// kube's namespace strategy keeps the stored `spec.finalizers` (only the `/finalize`
    /// subresource changes them) and status (only `/status` does).
    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        super::copy_field(new, old, "spec");
        super::copy_field(new, old, "status");
    }

    /// `status.phase` beside the metadata (kube's namespace field label conversion).
    fn selectable_fields(&self) -> Vec<String> {
        vec!["metadata.name".into(), "status.phase".into()]
    }

    /// kube's `ValidateNamespace` and `ValidateNamespaceUpdate`.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = validate_meta(new);
        errs.extend(super::builtin::core_meta_update_errors(new, old));
        errs
    }

    /// kube's namespace status strategy keeps the stored spec, and nothing else: the
    /// metadata comes as sent.
    /// An empty phase is `Active`, as kube's defaulting sets it.
    fn prepare_for_status_update(&self, new: &mut Value, old: &Value) {
        super::copy_field(new, old, "spec");
        if new.pointer("/status/phase").and_then(Value::as_str).is_none_or(str::is_empty)
            && let Some(map) = new.as_object_mut()
        {
            let status = map.entry("status").or_insert_with(|| json!({}));
            if let Some(status) = status.as_object_mut() {
                status.insert("phase".into(), Value::from("Active"));
            }
        }
    }

    /// kube's `ValidateNamespaceFinalizeUpdate`: the metadata, and each finalizer by its
    /// index (where a create reports them on the list).
    fn validate_finalize(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = super::builtin::core_meta_update_errors(new, old);
        let finalizers =
            new.pointer("/spec/finalizers").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        for (i, f) in finalizers.iter().enumerate() {
            let path = Path::root("spec").child("finalizers").index(i);
            errs.extend(super::builtin::finalizer_name_errors(f.as_str().unwrap_or_default(), &path));
        }
        errs
    }

    /// kube's `ValidateNamespaceStatusUpdate`: the phase says whether it is being deleted
    /// (on the field `status.Phase`, as kube names it).
    fn validate_status_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = super::builtin::core_meta_update_errors(new, old);
        let phase = new.pointer("/status/phase").and_then(Value::as_str).unwrap_or_default();
        let (want, why) = match meta::deletion_timestamp(new) {
            None => ("Active", "may only be 'Active' if `deletionTimestamp` is empty"),
            Some(_) => ("Terminating", "may only be 'Terminating' if `deletionTimestamp` is not empty"),
        };
        if phase != want {
            errs.push(FieldError::invalid("status.Phase", phase, why));
        }
        errs
    }
}

/// Sets the `kubernetes.io/metadata.name` label to the namespace's name, when it has one.
fn label_with_name(obj: &mut Value) {
    let Some(name) = meta::name(obj).map(String::from) else { return };
    let labels = meta::metadata_mut(obj).entry("labels").or_insert_with(|| json!({}));
    if let Some(l) = labels.as_object_mut() {
        l.insert("kubernetes.io/metadata.name".into(), Value::from(name));
    }
}
