//! The REST semantics every kind shares: keys, verbs, strategies.
//!
//! A kind is described by a [`ResourceInfo`] and given behaviour by a [`Strategy`] — the
//! hooks kube-apiserver's registry strategies have (prepare and validate on create and
//! update, the status variation). [`rest`] implements the verbs once for every kind:
//! namespaces, CustomResourceDefinitions and, later, custom resources.

pub mod admit;
pub mod builtin;
pub mod continue_token;
pub mod conversion_webhook;
mod crd_schemas;
pub mod crd_struct;
pub mod crds;
pub mod custom;
pub mod generate_name;
pub mod go_decode;
mod go_json;
pub mod go_text;
pub mod jsonpatch;
mod jsonpatch_splice;
mod list_plan;
mod list_scope;
pub mod listing;
pub mod managed_fields;
pub mod namespaces;
pub mod patch;
pub(crate) mod patched_json;
mod preconditions;
pub mod rest;
pub mod scale;
mod scale_rest;
pub mod selector;
pub mod strategic;
pub mod unlisted;
pub mod webhook_call;

use crate::field::FieldError;
use crate::representation::raw;
use crate::schema::Schema;
use crate::status::{ApiError, GroupResource};
use serde_json::Value;
use std::borrow::Cow;
use std::sync::Arc;

/// Resources stored under another group's prefix, as kube's storage factory cohabits
/// them: `(group, plural, storage group)`. events.k8s.io Events are the core Events,
/// one storage seen through two APIs.
pub const COHABITING: [(&str, &str, &str); 1] = [("events.k8s.io", "events", "")];

/// How a kind that shares its storage with another view of the same objects converts
/// between what it serves and what is stored (events.k8s.io/v1 Events are stored as core
/// v1 Events). Plain functions, so that watch streams can carry them.
#[derive(Debug, Clone, Copy)]
pub struct StorageConversion {
    /// The served form to the stored form.
    pub to_storage: fn(Value) -> Value,
    /// The stored form to the served form (the resourceVersion is kept).
    pub from_storage: fn(Value) -> Value,
}

/// How one version of a resource that several versions share (a CRD's) differs from the
/// stored objects. kube's `None` conversion between a CRD's versions rewrites `apiVersion`
/// and then prunes the object to the schema of the version it converts to, so a field
/// only one version declares is lost on the way to the storage version and not shown at a
/// version that lacks it. Objects are served at `served` whatever version the CRD still
/// lists they were stored at (an earlier storage version's included), and stored at
/// `storage`. A CRD with one version has one too: its objects may be stored at a version
/// it no longer lists ([`unlisted`]).
#[derive(Debug, Clone)]
pub struct VersionConversion {
    /// `group/version` of the endpoint.
    pub served: Arc<str>,
    /// `group/version` of the CRD's storage version.
    pub storage: Arc<str>,
    /// The served version's schema (`None`: nothing is pruned).
    pub served_schema: Option<Arc<Schema>>,
    /// The storage version's schema.
    pub storage_schema: Option<Arc<Schema>>,
    /// Every version's schema by `group/version`: kube's storage decoder defaults an
    /// object by the schema of the version it is stored at, not the one it is served at.
    pub stored_schemas: Arc<[(Arc<str>, Arc<Schema>)]>,
    /// Every version the CRD lists: an object stored at another is refused.
    pub listed: unlisted::Listed,
    /// The CRD's conversion webhook (`strategy: Webhook`): what converts an object from one
    /// version to another, in place of relabelling it.
    pub webhook: Option<Arc<conversion_webhook::ConversionWebhook>>,
}

impl VersionConversion {
    /// Converts `obj` to `api_version`, pruning it to `schema` when its version changes:
    /// by the CRD's webhook, else by relabelling it.
    fn convert(&self, obj: &mut Value, api_version: &str, schema: Option<&Schema>) -> Result<(), ApiError> {
        let converts = obj.get("apiVersion").and_then(Value::as_str) != Some(api_version);
        match self.webhook.as_ref().filter(|_| converts) {
            Some(webhook) => *obj = webhook.convert(obj, api_version)?,
            None => set_api_version(obj, api_version),
        }
        if let Some(schema) = schema.filter(|_| converts) {
            schema.prune_converted(obj);
        }
        Ok(())
    }

    /// An object converted to the storage version as kube stores it: pruned to the storage
    /// version's schema, and defaulted by it, since kube's storage decoder defaults every
    /// object it reads by the schema of its stored version (an object written at another
    /// version shows the storage version's defaults when read at the storage version).
    fn to_storage(&self, obj: &mut Value) -> Result<(), ApiError> {
        self.convert(obj, &self.storage, self.storage_schema.as_deref())?;
        if let Some(schema) = &self.storage_schema {
            schema.default(obj);
        }
        Ok(())
    }

    /// The schema of the version an object is stored at, if the CRD still has it.
    fn schema_of(&self, obj: &Value) -> Option<&Schema> {
        let api_version = obj.get("apiVersion").and_then(Value::as_str)?;
        self.stored_schemas.iter().find(|(v, _)| &**v == api_version).map(|(_, s)| &**s)
    }

    /// Whether objects written at the served version are pruned on their way to storage.
    fn prunes_writes(&self) -> bool {
        self.served != self.storage && (self.storage_schema.is_some() || self.webhook.is_some())
    }

    /// Whether the stored bytes are at another version than served and must be decoded to
    /// be: pruned to the served version's schema, or refused for a version the CRD no
    /// longer lists (the one look at `apiVersion` a read makes).
    fn decodes_read(&self, stored: &[u8]) -> bool {
        match raw::get(stored, "apiVersion") {
            Some(at) if raw::is_string(at, &self.served) => false,
            Some(at) => self.served_schema.is_some() || self.webhook.is_some() || !self.listed.lists_raw(at),
            None => self.served_schema.is_some() || self.webhook.is_some(),
        }
    }
}

/// How a kind reads its objects from the store and writes them to it: every read (get,
/// list, watch, the answer of a write) and every write goes through one of these.
#[derive(Debug, Clone, Default)]
pub struct Codec {
    /// Another shape than stored: every object is decoded to be served.
    pub conversion: Option<StorageConversion>,
    /// Another `apiVersion` than stored: the stored bytes are rewritten, never decoded.
    pub versions: Option<VersionConversion>,
    /// A schema newer than some stored objects: those are pruned and defaulted again.
    pub refresh: Option<Refresh>,
}

/// kube's storage decoder prunes and defaults every object it reads by the current
/// schema, so a field a CRD update removed goes, and one it added with a default shows,
/// on objects written before. The engine serves stored bytes as they are: only objects
/// stored before the schema was first served are read again by it.
#[derive(Clone)]
pub struct Refresh {
    /// The revision from which the schema has been served.
    pub since: crate::store::Revision,
    pub schema: Arc<crate::schema::Schema>,
}

impl std::fmt::Debug for Refresh {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Refresh").field("since", &self.since).finish_non_exhaustive()
    }
}

impl Refresh {
    fn applies(&self, kv: &crate::store::KeyValue) -> bool {
        kv.mod_revision < self.since
    }
}

impl Codec {
    /// Whether objects must be decoded to be served (else lists and watches pass the
    /// stored bytes along, see [`Codec::serve_at`]).
    pub fn decodes(&self) -> bool {
        self.conversion.is_some()
    }

    /// Whether [`Codec::read`] serves a stored object as [`crate::meta::from_stored`]
    /// reads it: no conversion of shape or `apiVersion`.
    pub fn reads_as_stored(&self) -> bool {
        self.conversion.is_none() && self.versions.is_none()
    }

    /// Whether an object stored at revision `rv` is read again by a newer schema (see
    /// [`Refresh`]).
    pub fn refreshes(&self, rv: crate::store::Revision) -> bool {
        self.refresh.as_ref().is_some_and(|r| rv < r.since)
    }

    /// Whether the stored `kv` must be decoded to be served: every object of a kind with a
    /// storage conversion, and those stored at another version than served (pruned to the
    /// served version's schema).
    pub fn decodes_item(&self, kv: &crate::store::KeyValue) -> bool {
        self.decodes()
            || self.versions.as_ref().is_some_and(|v| v.decodes_read(&kv.value))
            || self.refresh.as_ref().is_some_and(|r| r.applies(kv))
    }

    /// The `apiVersion` to put into stored bytes as they are served, when it may differ
    /// from the one they carry.
    pub fn serve_at(&self) -> Option<&Arc<str>> {
        self.versions.as_ref().map(|v| &v.served)
    }

    /// A stored object as served, with its resourceVersion; kube's 500 for one stored at a
    /// version its CRD no longer lists.
    pub fn read(&self, kv: &crate::store::KeyValue) -> Result<Value, crate::status::ApiError> {
        let obj = crate::meta::from_stored(kv);
        if let Some(v) = &self.versions {
            v.listed.check(obj.get("apiVersion").and_then(Value::as_str))?;
        }
        self.serve(obj, kv)
    }

    /// `obj`, stored as `kv`, at a version the CRD lists, as served.
    fn serve(&self, mut obj: Value, kv: &crate::store::KeyValue) -> Result<Value, ApiError> {
        // As kube's storage decoder: defaulted at the version stored, then converted.
        if let Some(r) = self.refresh.as_ref().filter(|r| r.applies(kv)) {
            let schema = self.versions.as_ref().and_then(|v| v.schema_of(&obj)).unwrap_or(&r.schema);
            schema.prune_and_default(&mut obj);
        }
        if let Some(v) = &self.versions {
            v.convert(&mut obj, &v.served, v.served_schema.as_deref())?;
        }
        Ok(match self.conversion {
            Some(c) => (c.from_storage)(obj),
            None => obj,
        })
    }

    /// What [`Codec::read`] gives for `kv`, which holds `obj` just written by
    /// [`Codec::write`]: without a conversion that is `obj` at its resourceVersion and
    /// served apiVersion, with no parse of the bytes.
    pub fn written(&self, mut obj: Value, kv: &crate::store::KeyValue) -> Result<Value, ApiError> {
        if self.conversion.is_some()
            || self.versions.as_ref().is_some_and(VersionConversion::prunes_writes)
            || !obj.get("metadata").is_some_and(Value::is_object)
        {
            // Just written, so at the storage version, which the CRD lists.
            return self.serve(crate::meta::from_stored(kv), kv);
        }
        let rv = Value::from(kv.mod_revision.to_string());
        crate::meta::metadata_mut(&mut obj).insert("resourceVersion".into(), rv);
        if let Some(api_version) = self.serve_at() {
            set_api_version(&mut obj, api_version);
        }
        Ok(obj)
    }

    /// `obj`, at any version its CRD lists, converted to the served version (through the
    /// conversion webhook if any): admission sends a webhook whose rules name another
    /// version the object at that version.
    pub fn to_served(&self, mut obj: Value) -> Result<Value, ApiError> {
        if let Some(v) = &self.versions {
            v.convert(&mut obj, &v.served, v.served_schema.as_deref())?;
        }
        Ok(obj)
    }

    /// `obj` as it would read back once stored, for answers that store nothing (dry runs).
    pub fn round_trip(&self, mut obj: Value) -> Result<Value, ApiError> {
        if let Some(v) = self.versions.as_ref().filter(|v| v.prunes_writes()) {
            v.to_storage(&mut obj)?;
            v.convert(&mut obj, &v.served, v.served_schema.as_deref())?;
        }
        Ok(obj)
    }

    /// An object as the store keeps it (without resourceVersion).
    pub fn write(&self, obj: &Value) -> Result<bytes::Bytes, ApiError> {
        if let Some(c) = self.conversion {
            return Ok(to_stored(&(c.to_storage)(obj.clone())));
        }
        let Some(versions) = &self.versions else { return Ok(to_stored(obj)) };
        if versions.prunes_writes() && obj.get("apiVersion").and_then(Value::as_str) != Some(&*versions.storage) {
            let mut converted = obj.clone();
            versions.to_storage(&mut converted)?;
            return Ok(to_stored(&converted));
        }
        let stored = to_stored(obj);
        Ok(match raw::with_api_version(&stored, &versions.storage) {
            Cow::Owned(rewritten) => crate::meta::exact(rewritten),
            Cow::Borrowed(_) => stored,
        })
    }
}

/// An object's bytes as the store keeps them (without resourceVersion), written as kube
/// writes its kind ([`builtin::struct_json`]).
pub fn to_stored(obj: &Value) -> bytes::Bytes {
    crate::meta::to_stored_as(obj, builtin::struct_json::to_vec)
}

/// Sets the `apiVersion` of `obj` (nothing when it is no object).
pub fn set_api_version(obj: &mut Value, api_version: &str) {
    if let Some(map) = obj.as_object_mut() {
        map.insert("apiVersion".into(), Value::from(api_version));
    }
}

/// How a field selector reads a field of an object (`None`: absent).
pub type FieldLookup = fn(&Value, &str) -> Option<String>;

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

    /// The store prefix holding every object of this kind: its own, unless it cohabits
    /// with another group's resource (see [`COHABITING`]).
    pub fn prefix(&self) -> String {
        let group = COHABITING
            .iter()
            .find(|(g, plural, _)| *g == self.group && *plural == self.plural)
            .map_or(self.group.as_str(), |(_, _, storage_group)| storage_group);
        Self::store_prefix(group, &self.plural)
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

/// Why a kind's Go decoder refuses a value, in its own words (`json: cannot unmarshal …`,
/// `illegal base64 data at input byte 0`): kube wraps them one way for a request body
/// (400) and another for a patched object (422 on `patch`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undecodable(pub String);

/// Kind-specific behaviour, as kube-apiserver's `rest.RESTCreateStrategy` and friends.
pub trait Strategy: Send + Sync {
    fn info(&self) -> &ResourceInfo;

    /// The top-level fields a `/status` write may not own (kube's `GetResetFields` of the
    /// status strategy).
    fn status_reset_fields(&self) -> &'static [&'static str] {
        &["spec"]
    }

    /// Checks that a body or patched object decodes as this kind's Go type.
    fn decode(&self, _obj: &serde_json::Value) -> Result<(), Undecodable> {
        Ok(())
    }

    /// kube's 400 for a request body the decoder refuses: `Kind in version "v1" cannot be
    /// handled as a Kind: why` (the version without its group, as kube prints it).
    fn undecodable_body(&self, why: &Undecodable) -> crate::status::ApiError {
        let info = self.info();
        crate::status::ApiError::bad_request(format!(
            "{kind} in version \"{}\" cannot be handled as a {kind}: {}",
            info.version,
            why.0,
            kind = info.kind
        ))
    }

    /// The Go struct a typed kind decodes into, whose field order kube's JSON follows
    /// (`None`: unstructured, or not described; its JSON has sorted keys).
    fn go_struct(&self) -> Option<&'static builtin::types::GoStruct> {
        None
    }

    /// Checks a body's `apiVersion` and `kind` against the endpoint's (400 otherwise):
    /// by default as kube's unstructured and CRD handlers word it; the built-in kinds
    /// answer as their scheme's decoder does (see [`builtin::check_type_meta`]).
    fn check_type_meta(&self, obj: &Value) -> Result<(), crate::status::ApiError> {
        let info = self.info();
        rest::check_type_meta(obj, &info.api_version(), &info.kind)
    }

    /// Whether an update without `metadata.resourceVersion` writes over whatever is
    /// stored (kube's `AllowUnconditionalUpdate`); custom resources and CRDs refuse it.
    fn allows_unconditional_update(&self) -> bool {
        true
    }

    /// Whether a PUT of a missing object creates it (kube's `AllowCreateOnUpdate`: leases
    /// and events do; the other kinds answer 404).
    fn allows_create_on_update(&self) -> bool {
        false
    }

    /// The etcd prefix kube-apiserver keeps this kind under, which its storage errors
    /// quote: `/registry/<group>/<plural>/` for CRDs and custom resources; built-in kinds
    /// live under `/registry/<plural>/`.
    fn kube_storage_prefix(&self) -> String {
        let info = self.info();
        format!("/registry/{}/{}/", info.group, info.plural)
    }

    /// The key prefix a failed uid precondition quotes: the etcd prefix, except where
    /// kube's store is given keys below its root (the CRD store of apiextensions-apiserver
    /// quotes `/apiextensions.k8s.io/customresourcedefinitions/<name>`).
    fn precondition_key_prefix(&self) -> String {
        self.kube_storage_prefix()
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

    /// [`Strategy::decode`], then [`Strategy::prune_and_default`] of what decodes (`obj`
    /// is untouched when it does not): one hook, for a kind whose decoding builds what its
    /// defaulting reads.
    fn decode_and_default(&self, obj: &mut Value) -> Result<Vec<String>, Undecodable> {
        self.decode(obj)?;
        Ok(self.prune_and_default(obj))
    }

    /// [`Strategy::decode_and_default`] of a server-side apply's merged object, which kube
    /// converts rather than decodes: a custom resource keeps the `null`s it was sent
    /// (defaults fill those that have one; validation refuses the rest), where a decoded
    /// body drops them. A typed kind's conversion drops them as its decoding does.
    fn decode_and_default_applied(&self, obj: &mut Value) -> Result<Vec<String>, Undecodable> {
        self.decode_and_default(obj)
    }

    /// The object a create is compared with to find the fields its manager set: kube's
    /// zero value of the kind as its converter writes it. A typed kind's fields without
    /// `omitempty` are there (empty), so setting them is a change, not an addition, and
    /// their parents get no `"."` entry.
    fn zero_object(&self) -> Value {
        let info = self.info();
        serde_json::json!({"apiVersion": info.api_version(), "kind": info.kind})
    }

    /// The field types server-side apply and managedFields use for the kind (a custom
    /// resource's come from its served schema); `None`: deduced from the value.
    fn field_types(&self) -> Option<Arc<managed_fields::schema::Schema>> {
        None
    }

    /// The field types of the kind's other served or stored versions, by `group/version`
    /// (a multi-version CRD's); empty for a kind of one version.
    fn other_field_types(&self) -> Vec<(String, Arc<managed_fields::schema::Schema>)> {
        Vec::new()
    }

    /// The `group/version`s the kind's objects convert to, when that is a closed list (a
    /// CRD's versions, served or not); `None`: any version of its group.
    fn convertible_versions(&self) -> Option<Vec<String>> {
        None
    }

    /// Each version's `/scale` replicas path by `group/version` (kube's
    /// `ResourcePathMappings`: a CRD's versions may each name another); `None`: every
    /// version of the group has the served version's.
    fn replicas_paths(&self) -> Option<scale::ReplicasPaths> {
        None
    }

    /// The conversion webhook the kind's versions convert through (a CRD's, if any).
    fn conversion_webhook(&self) -> Option<Arc<conversion_webhook::ConversionWebhook>> {
        None
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

    /// The warnings of a create that passed validation (kube's `WarningsOnCreate`).
    fn warnings_on_create(&self, _obj: &Value) -> Vec<String> {
        Vec::new()
    }

    /// The warnings of an update (not through `/status`) that passed validation (kube's
    /// `WarningsOnUpdate`).
    fn warnings_on_update(&self, _new: &Value, _old: &Value) -> Vec<String> {
        Vec::new()
    }

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
        if let Some(rv) = crate::meta::resource_version(new).map(String::from) {
            crate::meta::metadata_mut(&mut merged).insert("resourceVersion".into(), Value::from(rv));
        }
        *new = merged;
    }

    /// Every problem with a status update.
    fn validate_status_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        self.validate_update(new, old)
    }

    /// Normalizes an update through a namespace's `/finalize`: all but the status comes
    /// from the request (kube's finalize strategy). Only namespaces are routed there.
    fn prepare_for_finalize(&self, new: &mut Value, old: &Value) {
        copy_field(new, old, "status");
    }

    /// Every problem with an update through `/finalize`.
    fn validate_finalize(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        self.validate_update(new, old)
    }

    /// What storing writes differently from what was validated, done after validation and
    /// before the no-op check, the dry-run answer and the store (kube's validation sees the
    /// internal object, its storage the versioned one it encodes). A typed kind's zero
    /// times are written `null`.
    fn canonicalize(&self, obj: &mut Value) {
        if let Some(s) = self.go_struct() {
            s.null_zero_times(obj);
        }
    }

    /// The finalizers a DELETE with `delete` leaves on `obj`, when it changes them: the
    /// garbage collector's `orphan` and `foregroundDeletion` as the options ask.
    fn deletion_finalizers(&self, obj: &Value, delete: &rest::DeleteOptions) -> Option<Vec<String>> {
        rest::deletion_finalizers(&crate::meta::finalizers(obj), delete.propagation)
    }

    /// Whether the kind's REST checks a DELETE's preconditions itself, in its own words
    /// (kube's namespace and CRD REST do, before the generic store's check).
    fn own_delete_preconditions(&self) -> bool {
        false
    }

    /// Whether a DELETE of an object already being deleted, with finalizers pending, goes
    /// through kube's generic store, which marks it again (grace period zero). A
    /// namespace's own REST does not.
    fn marks_pending_deletion_again(&self) -> bool {
        true
    }

    /// Whether a DELETE only marks the object even without finalizers (a namespace waits
    /// for its content to go).
    fn defers_deletion(&self, _obj: &Value) -> bool {
        false
    }

    /// Whether an object being deleted is held by finalizers of the kind's own beyond
    /// `metadata.finalizers` (a namespace's `spec.finalizers`), so that an update
    /// removing its last metadata finalizer does not remove it.
    fn finalizing(&self, _obj: &Value) -> bool {
        false
    }

    /// Whether a DELETE that removes the object at once answers with the object rather
    /// than a `Success` Status (kube's `ReturnDeletedObject`, which few kinds set).
    fn returns_deleted_object(&self) -> bool {
        false
    }

    /// What a DELETE that leaves the object in place writes: kube's `markAsDeleting` by
    /// default; a namespace turns Terminating, a CRD takes its clean-up finalizer.
    fn prepare_for_deletion(&self, obj: &mut Value, now: k8s_openapi::jiff::Timestamp) {
        crate::meta::mark_as_deleting(obj, now);
    }

    /// Whether objects of this kind are unstructured, as custom resources are. kube's
    /// unstructured lists keep the empty `metadata.continue` of a complete list, which
    /// typed lists omit (references 34 and 44–46).
    fn unstructured(&self) -> bool {
        false
    }

    /// Whether `application/strategic-merge-patch+json` applies (not to custom resources,
    /// whose schemas carry no patch strategies: kube answers 415).
    fn supports_strategic_merge(&self) -> bool {
        true
    }

    /// Field paths a field selector may use.
    fn selectable_fields(&self) -> Vec<String> {
        let mut f = vec!["metadata.name".to_string()];
        if self.info().namespaced {
            f.push("metadata.namespace".into());
        }
        f
    }

    /// The group validation errors name the kind with (`Lease.coordination.k8s.io "l" is
    /// invalid`): kube names the internal type's, which is the served group but for
    /// events.k8s.io Events, validated as core Events.
    fn invalid_group(&self) -> &str {
        &self.info().group
    }

    /// kube's refusal of a field selector on `field`, which no selectable field is: the
    /// words of the kind's field label conversion (`field label not supported: …`).
    fn unsupported_field_label(&self, field: &str) -> String {
        format!("field label not supported: {field}")
    }

    /// How objects of this kind differ from their stored form (`None`: not at all, and
    /// lists serve the stored bytes as they are).
    fn storage_conversion(&self) -> Option<StorageConversion> {
        None
    }

    /// How objects of this kind differ from the stored ones by `apiVersion` alone (`None`:
    /// they are stored at the version served).
    fn version_conversion(&self) -> Option<&VersionConversion> {
        None
    }

    /// The schema objects stored before a revision are read again by (see [`Refresh`]).
    fn refreshed_before(&self) -> Option<Refresh> {
        None
    }

    /// How objects of this kind are read from and written to the store.
    fn codec(&self) -> Codec {
        Codec {
            conversion: self.storage_conversion(),
            versions: self.version_conversion().cloned(),
            refresh: self.refreshed_before(),
        }
    }

    /// How field selectors read fields that are not plain paths (core Events' `source`);
    /// `None`: every selectable field is the value at its dotted path.
    fn field_lookup(&self) -> Option<FieldLookup> {
        None
    }

    /// A create-only kind (kube's reviews) answers a POST from the request alone and
    /// stores nothing: `Some(answer)`. `None`: objects of this kind are stored. As kube's
    /// create handler before its REST, the request's system fields are wiped and its
    /// managedFields computed first.
    fn evaluate(
        &self,
        _obj: &Value,
        _now: k8s_openapi::jiff::Timestamp,
    ) -> Option<Result<Value, crate::status::ApiError>> {
        None
    }

    /// How a `meta.k8s.io` Table shows objects of this kind: kube-apiserver's default
    /// convertor (`Name`, `Created At`) unless the kind has its own printer.
    fn table_convertor(&self) -> crate::representation::table::TableConvertor {
        crate::representation::table::TableConvertor::default()
    }
}

/// apimachinery's `DefaultMetaV1FieldSelectorConversion` refusing `field`: the words of
/// every kind whose scheme registers no field label conversion of its own.
pub fn default_field_label_refusal(field: &str) -> String {
    format!(
        "{} is not a known field selector: only \"metadata.name\", \"metadata.namespace\"",
        crate::field::go_quote(field)
    )
}

/// kube-apiserver's etcd prefix of a built-in kind: `/registry/<plural>/`, whatever its
/// group (see [`Strategy::kube_storage_prefix`]).
pub fn builtin_storage_prefix(info: &ResourceInfo) -> String {
    format!("/registry/{}/", info.plural)
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

/// Whether an update bumps `generation`: anything outside `metadata` differs. With a
/// `/status` subresource the main endpoint keeps the old status and `/status` never
/// bumps it, so status is left out; without one it is an ordinary field (kube's custom
/// resource strategy compares everything but metadata).
pub fn spec_changed(new: &Value, old: &Value, status_subresource: bool) -> bool {
    let ignored: &[&str] = if status_subresource { &["metadata", "status"] } else { &["metadata"] };
    !crate::meta::equal_except(new, old, ignored)
}
