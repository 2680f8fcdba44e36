//! The REST semantics every kind shares: keys, verbs, strategies.
//!
//! A kind is described by a [`ResourceInfo`] and given behaviour by a [`Strategy`] — the
//! hooks kube-apiserver's registry strategies have (prepare and validate on create and
//! update, the status variation). [`rest`] implements the verbs once for every kind:
//! namespaces, CustomResourceDefinitions and, later, custom resources.

pub mod crds;
pub mod custom;
pub mod namespaces;
pub mod patch;
pub mod listing;
pub mod managed_fields;
pub mod rest;
pub mod scale;
mod scale_rest;
pub mod selector;

use crate::engine::field::FieldError;
use crate::engine::status::GroupResource;
use serde_json::Value;

/// What the API calls a kind: names, scope and subresources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceInfo {
    /// Empty for the core group.
    pub group: String,
    pub version: String,
    pub plural: String,
    pub singular: String,
    pub kind: String,
    pub list_kind: String,
    pub namespaced: bool,
    pub short_names: Vec<String>,
    pub categories: Vec<String>,
    /// Whether `/status` is a subresource (then the main endpoint ignores status).
    pub status_subresource: bool,
}

impl ResourceInfo {
    /// `group/version`, or `v1` for core.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() { self.version.clone() } else { format!("{}/{}", self.group, self.version) }
    }

    pub fn group_resource(&self) -> GroupResource {
        GroupResource::new(&self.group, &self.plural)
    }

    /// The store prefix holding every object of this kind.
    pub fn prefix(&self) -> String {
        Self::store_prefix(&self.group, &self.plural)
    }

    /// The store prefix of every object of `plural` in `group`, whatever the version.
    pub fn store_prefix(group: &str, plural: &str) -> String {
        let group = if group.is_empty() { "core" } else { group };
        format!("/registry/{group}/{plural}/")
    }

    /// The store prefix of one namespace (or of everything for cluster-scoped kinds).
    pub fn namespace_prefix(&self, namespace: Option<&str>) -> String {
        match (self.namespaced, namespace) {
            (true, Some(ns)) => format!("{}{}/", self.prefix(), ns),
            _ => self.prefix(),
        }
    }

    /// The store key of one object.
    pub fn key(&self, namespace: Option<&str>, name: &str) -> String {
        format!("{}{}", self.namespace_prefix(namespace), name)
    }
}

/// Kind-specific behaviour, as kube-apiserver's `rest.RESTCreateStrategy` and friends.
pub trait Strategy: Send + Sync {
    fn info(&self) -> &ResourceInfo;

    /// Checks that a request body decodes as this kind (kube answers 400 otherwise).
    fn decode(&self, _obj: &serde_json::Value) -> Result<(), crate::engine::status::ApiError> {
        Ok(())
    }

    /// Whether objects of this kind carry `metadata.generation`.
    fn uses_generation(&self) -> bool {
        true
    }

    /// Decode-time processing of a request body, as kube-apiserver does while decoding a
    /// custom resource: drop fields the schema does not know and apply schema defaults.
    /// Returns the dropped fields' paths (`spec.foo`), which `fieldValidation=Strict|Warn`
    /// turns into an error or warnings.
    fn prune_and_default(&self, _obj: &mut Value) -> Vec<String> {
        vec![]
    }

    /// Normalizes a new object before validation (drop status, set defaults, finalizers).
    fn prepare_for_create(&self, _obj: &mut Value) {}

    /// Every problem with a new object.
    fn validate_create(&self, obj: &Value) -> Vec<FieldError>;

    /// Normalizes an update on the main endpoint (keep the old status when `/status` is a
    /// subresource).
    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        if self.info().status_subresource {
            copy_field(new, old, "status");
        }
    }

    /// Every problem with an update.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError>;

    /// Normalizes an update through `/status`: only `.status` comes from the request.
    fn prepare_for_status_update(&self, new: &mut Value, old: &Value) {
        let status = new.get("status").cloned();
        let mut merged = old.clone();
        match (merged.as_object_mut(), status) {
            (Some(m), Some(s)) => {
                m.insert("status".into(), s);
            }
            (Some(m), None) => {
                m.remove("status");
            }
            _ => {}
        }
        // The request's resourceVersion is the precondition; keep it for the guard.
        if let Some(rv) = crate::engine::meta::resource_version(new).map(String::from) {
            crate::engine::meta::metadata_mut(&mut merged).insert("resourceVersion".into(), Value::from(rv));
        }
        *new = merged;
    }

    /// Every problem with a status update.
    fn validate_status_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        self.validate_update(new, old)
    }

    /// Whether a DELETE only marks the object even without finalizers (a namespace waits
    /// for its content to go).
    fn defers_deletion(&self, _obj: &Value) -> bool {
        false
    }

    /// Changes a DELETE makes besides the deletionTimestamp (a namespace turns
    /// Terminating).
    fn prepare_for_deletion(&self, _obj: &mut Value) {}

    /// Field paths a field selector may use.
    fn selectable_fields(&self) -> Vec<String> {
        let mut f = vec!["metadata.name".to_string()];
        if self.info().namespaced {
            f.push("metadata.namespace".into());
        }
        f
    }

    /// How a `meta.k8s.io` Table shows objects of this kind: kube-apiserver's default
    /// convertor (`Name`, `Created At`) unless the kind has its own printer.
    fn table_convertor(&self) -> crate::engine::representation::table::TableConvertor {
        crate::engine::representation::table::TableConvertor::default()
    }
}

/// Sets `new[field]` to `old[field]` (or removes it when `old` has none).
pub fn copy_field(new: &mut Value, old: &Value, field: &str) {
    let Some(map) = new.as_object_mut() else { return };
    match old.get(field) {
        Some(v) => {
            map.insert(field.into(), v.clone());
        }
        None => {
            map.remove(field);
        }
    }
}

/// Whether anything outside `metadata` and `status` differs: what bumps `generation`.
pub fn spec_changed(new: &Value, old: &Value) -> bool {
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(m) = v.as_object_mut() {
            m.remove("metadata");
            m.remove("status");
        }
        v
    };
    strip(new) != strip(old)
}
