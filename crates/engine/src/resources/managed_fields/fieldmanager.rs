//! kube-apiserver's field manager: the layers around the [`Updater`] that every write
//! goes through, in kube's order.
//!
//! - the managedFields a client sends are used when readable, reset by `[]` or `[{}]`,
//!   and ignored through a subresource;
//! - `apiVersion`, `kind` and the server-owned metadata are never owned;
//! - an update's changes go to one `Update` entry per manager, apiVersion and
//!   subresource, whose time moves only when it takes something; past ten such entries
//!   the oldest fold into `ancient-changes`;
//! - an object nobody tracked stays untracked through updates, and its fields go to
//!   `before-first-apply` when someone applies;
//! - `kubectl`'s server-side apply may take fields the client-side apply annotation
//!   still describes, and keeps that annotation up to date.

use super::managers::{self, Given, Managed, ManagerId, VersionedSet};
use super::path::{PathElement, path_string};
use super::schema::Schema;
use super::set::Set;
use super::updater::{Conflicts, Filter, Managers, Refusal, Updater};
use super::walk;
use crate::meta;
use crate::resources::conversion_webhook::ConversionWebhook;
use crate::status::{ApiError, StatusCause, StatusDetails};
use serde_json::{Value, json};
use std::sync::Arc;

/// The annotation client-side `kubectl apply` keeps its last configuration in.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";
const CURRENT_OPERATION: &str = "current-operation";
const BEFORE_FIRST_APPLY: &str = "before-first-apply";
const ANCIENT_CHANGES: &str = "ancient-changes";
/// kube's `DefaultMaxUpdateManagers`.
pub const MAX_UPDATE_MANAGERS: usize = 10;

/// Field management for writes to one kind through one endpoint.
pub struct FieldManager<'a> {
    pub schema: &'a Schema,
    /// `group/version` of the kind.
    pub api_version: String,
    pub kind: String,
    /// `status` or `scale`; `None` for the main endpoint.
    pub subresource: Option<&'a str>,
    /// What writes through this endpoint may own.
    pub filter: Filter,
    /// Whether an entry's time moves when it changes something. kube's `/scale` handler
    /// loses the times of the entries it writes, so scale writes do not.
    pub stamps_time: bool,
    /// The time of this write, in kube's format.
    pub now: String,
    /// The kind's zero object ([`Strategy::zero_object`](crate::resources::Strategy::zero_object)):
    /// what `before-first-apply` is computed from, as kube's skip-non-applied layer does.
    pub zero: Value,
    /// The field types of the kind's other versions by `group/version` (a multi-version
    /// CRD's): kube compares an update at each version a manager's entry is at.
    pub other_versions: Vec<(String, Arc<Schema>)>,
    /// The `group/version`s the kind converts to when that is a closed list (a CRD's):
    /// kube's CRD converter refuses any other, and an entry recorded at one (a version
    /// the CRD dropped) fails every write that compares at it.
    pub convertible_versions: Option<Vec<String>>,
    /// The CRD's conversion webhook, which brings objects to other managers' versions.
    pub webhook: Option<Arc<ConversionWebhook>>,
}

/// Why an apply was refused.
#[derive(Debug, Clone, PartialEq)]
pub enum ApplyError {
    Conflicts(Conflicts),
    BadRequest(String),
    /// An error kube does not classify (a configuration that does not fit the schema).
    Unclassified(String),
}

impl From<ApplyError> for ApiError {
    fn from(e: ApplyError) -> ApiError {
        match e {
            ApplyError::Conflicts(c) => conflict_error(&c),
            ApplyError::BadRequest(m) => ApiError::bad_request(m),
            ApplyError::Unclassified(m) => ApiError::new(500, "", m),
        }
    }
}

/// 409 as kube words apply conflicts: one line for one conflict, a list per manager
/// otherwise; one `FieldManagerConflict` cause per field.
pub fn conflict_error(conflicts: &Conflicts) -> ApiError {
    let list = &conflicts.0;
    let message = match list.as_slice() {
        [(id, path)] => format!("Apply failed with 1 conflict: conflict with {}: {}", id.describe(), path_string(path)),
        _ => {
            let mut lines = Vec::new();
            let mut last: Option<&ManagerId> = None;
            for (id, path) in list {
                if last != Some(id) {
                    lines.push(format!("conflicts with {}:", id.describe()));
                    last = Some(id);
                }
                lines.push(format!("- {}", path_string(path)));
            }
            format!("Apply failed with {} conflicts: {}", list.len(), lines.join("\n"))
        }
    };
    let causes = list
        .iter()
        .map(|(id, path)| StatusCause {
            reason: Some("FieldManagerConflict".into()),
            message: Some(format!("conflict with {}", id.describe())),
            field: Some(path_string(path)),
        })
        .collect();
    let mut err = ApiError::new(409, "Conflict", message);
    err.details = Some(Box::new(StatusDetails { causes, ..Default::default() }));
    err
}

/// The fields no manager ever owns (kube's `stripMeta`), built once.
fn server_fields() -> &'static Set {
    static FIELDS: std::sync::LazyLock<Set> = std::sync::LazyLock::new(build_server_fields);
    &FIELDS
}

fn build_server_fields() -> Set {
    let f = |n: &str| PathElement::Field(n.to_string());
    let mut s = Set::of(&[vec![f("apiVersion")], vec![f("kind")], vec![f("metadata")]]);
    for field in [
        "name",
        "namespace",
        "creationTimestamp",
        "selfLink",
        "uid",
        "clusterName",
        "generation",
        "managedFields",
        "resourceVersion",
    ] {
        s.insert(&[f("metadata"), f(field)]);
    }
    s
}

fn strip(managers: &mut Managers, id: &ManagerId) {
    if let Some(vs) = managers.get_mut(id) {
        vs.set.subtract(server_fields());
        if vs.set.is_empty() {
            managers.remove(id);
        }
    }
}

/// A copy of the object without `metadata.managedFields`, which is not copied (a CRD's
/// mirror its whole spec): an apply returns the merged object, and tells a no-op by
/// comparing it with this.
fn without_managed_fields(obj: &Value) -> Value {
    let Some(map) = obj.as_object() else { return obj.clone() };
    let copy = |(key, value): (&String, &Value)| {
        let value = match value.as_object() {
            Some(metadata) if key == "metadata" => {
                let kept = metadata.iter().filter(|(k, _)| *k != "managedFields");
                Value::Object(kept.map(|(k, v)| (k.clone(), v.clone())).collect())
            }
            _ => value.clone(),
        };
        (key.clone(), value)
    };
    Value::Object(map.iter().map(copy).collect())
}

/// Writes the entries into `obj` (removing the field when there are none).
fn set_managed_fields(obj: &mut Value, managed: &Managed) {
    match managers::encode(managed) {
        Some(entries) => {
            meta::metadata_mut(obj).insert("managedFields".into(), entries);
        }
        None => {
            if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
                m.remove("managedFields");
            }
        }
    }
}

/// kube's `IgnoreManagedFieldsTimestampsTransformer`: a write that changes nothing but
/// entry times keeps the old times, so that it is no write at all. kube's store runs it
/// after the strategy prepared the update (a status sent to the main endpoint is gone by
/// then), so the update path calls it there, not the field manager.
pub(in crate::resources) fn keep_times_if_nothing_else_changed(live: &Value, new: &mut Value) {
    fn field(v: &Value) -> Option<&Value> {
        v.get("metadata").and_then(|m| m.get("managedFields"))
    }
    let (Some(old_entries), Some(new_entries)) = (field(live), field(new)) else { return };
    if old_entries == new_entries
        || !meta::equal_except_metadata(new, live, &["managedFields", "resourceVersion"])
        || !managers::equal_but_times(old_entries, new_entries)
    {
        return;
    }
    let old_entries = old_entries.clone();
    meta::metadata_mut(new).insert("managedFields".into(), old_entries);
}

/// Go's `GroupVersionKind.String()`: `group/version, Kind=Kind`.
pub(crate) fn gvk_string(api_version: &str, kind: &str) -> String {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    format!("{group}/{version}, Kind={kind}")
}

/// kube's `objectGVKNN` of an applied configuration, as its field manager's errors name
/// it: `<namespace>/<name>; <group>/<version>, Kind=<kind>` (empty where it gives none).
pub(in crate::resources) fn config_gvknn(config: &Value, gvk: &str) -> String {
    let given = |k: &str| config.get("metadata").and_then(|m| m.get(k)).and_then(Value::as_str).unwrap_or("");
    format!("{}/{}; {gvk}", given("namespace"), given("name"))
}

impl FieldManager<'_> {
    fn updater(&self) -> Updater<'_> {
        Updater {
            schema: self.schema,
            filter: &self.filter,
            other_versions: &self.other_versions,
            webhook: self.webhook.as_deref(),
        }
    }

    /// One update's bookkeeping: the writer's changes go to its `Update` entry, merged
    /// with what that entry owned; the entry's time moves only if it took something.
    /// `false` (and no entries left) when the objects could not be converted to another
    /// entry's version.
    fn record_update(&self, live: &Value, new: &Value, managed: &mut Managed, manager: &str) -> bool {
        let manager = if manager.is_empty() { "unknown" } else { manager };
        let id = ManagerId::update(manager, &self.api_version, self.subresource);
        let current = ManagerId::internal(CURRENT_OPERATION);
        let updated =
            self.updater().update(live, new, &self.api_version, std::mem::take(&mut managed.fields), &current);
        let Some(mut fields) = updated else { return false };
        strip(&mut fields, &current);
        if let Some(vs) = fields.remove(&current) {
            let set = match fields.remove(&id) {
                Some(mut previous) => {
                    previous.set.union_with(&vs.set);
                    previous.set
                }
                None => vs.set,
            };
            fields.insert(id.clone(), VersionedSet { set, api_version: vs.api_version, applied: false });
            if self.stamps_time {
                managed.times.insert(id, self.now.clone());
            }
        }
        managed.fields = fields;
        cap_update_managers(managed);
        true
    }

    /// Sets `new`'s managedFields for a create, update or patch that is not an apply, as
    /// kube's `UpdateNoErrors` does. `live` is the stored object (for a create, an object
    /// with only `apiVersion` and `kind`).
    pub fn update(&self, live: &Value, new: &mut Value, manager: Option<&str>) {
        let mut managed = if self.subresource.is_some() {
            managers::live(live)
        } else {
            match managers::given(new) {
                Given::Reset => Managed::default(),
                Given::Entries(m) => m,
                Given::Unreadable => managers::live(live),
            }
        };
        if let Some(m) = new.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("managedFields");
        }
        // kube cannot type an object of the wrong shape (a `status: 5` the status strategy
        // is about to reset, a `spec` a status write ignores); its `UpdateNoErrors` then
        // leaves managedFields out rather than keep entries it could not compute.
        if !walk::types_for_update(self.schema, new) || !walk::types_for_update(self.schema, live) {
            return;
        }
        if !managed.fields.values().all(|vs| self.fits_version(&vs.api_version, live, new))
            || self.unconvertible(&managed).is_some()
        {
            return;
        }
        // An existing object nobody tracks stays untracked until someone applies. The
        // stored entries are not compared (the walk skips them), so `live` needs no copy
        // without them.
        if !(managed.fields.is_empty() && meta::uid(live).is_some())
            && self.record_update(live, new, &mut managed, manager.unwrap_or(""))
        {
            set_managed_fields(new, &managed);
        }
    }

    /// Whether `live` and `new` type at `api_version`: kube converts both objects to each
    /// version another manager's entry is at and types them there, so an object that does
    /// not fit that version's schema (a field only this version declares) fails the update
    /// of every entry alike. kube's version converter types without `AllowDuplicates`, so
    /// there a list with a repeated key fails too. A version the kind no longer has is no
    /// check.
    fn fits_version(&self, api_version: &str, live: &Value, new: &Value) -> bool {
        // Through a conversion webhook the objects at that version are the webhook's, which
        // the update converts (and drops every entry if it cannot).
        if api_version == self.api_version || self.webhook.is_some() {
            return true;
        }
        let types = self.other_versions.iter().find(|(v, _)| v == api_version);
        types.is_none_or(|(_, t)| walk::validate(t, new).is_empty() && walk::validate(t, live).is_empty())
    }

    /// The first entry's version the kind does not convert to, which kube's CRD converter
    /// refuses (`UpdateNoErrors` then drops every entry; an apply fails with its error).
    fn unconvertible<'m>(&self, managed: &'m Managed) -> Option<&'m str> {
        let versions = self.convertible_versions.as_ref()?;
        let entries = managed.fields.values().map(|vs| vs.api_version.as_str());
        entries.into_iter().find(|v| !versions.iter().any(|known| known == v))
    }

    /// Merges an applied configuration into `live` (for a create, an object with only
    /// `apiVersion` and `kind`) and returns the object to write, managedFields included.
    pub fn apply(&self, live: &Value, config: &Value, manager: &str, force: bool) -> Result<Value, ApplyError> {
        self.check_type(config)?;
        let managed = managers::live(live);
        if let Some(version) = self.unconvertible(&managed) {
            return Err(ApplyError::Unclassified(format!(
                "request to convert CR to an invalid group/version: {version}"
            )));
        }
        let stored = without_managed_fields(live);
        let (mut obj, managed) = match self.apply_tracked(&stored, config, managed.clone(), manager, force) {
            Err(ApplyError::Conflicts(conflicts)) if manager == "kubectl" => {
                // Fields client-side apply set and that still hold their value may move
                // to kubectl's server-side apply without a conflict.
                let Some(allowed) = self.last_applied_fields(&stored) else {
                    return Err(ApplyError::Conflicts(conflicts));
                };
                let remaining: Vec<_> = conflicts.0.iter().filter(|(_, p)| !allowed.has(p)).cloned().collect();
                if !remaining.is_empty() {
                    return Err(ApplyError::Conflicts(Conflicts(remaining)));
                }
                self.apply_tracked(&stored, config, managed, manager, true)?
            }
            other => other?,
        };
        if manager == "kubectl" && last_applied(&obj).is_some() {
            set_last_applied(&mut obj, config);
        }
        set_managed_fields(&mut obj, &managed);
        Ok(obj)
    }

    /// An applied configuration must be of this field manager's kind (kube checks it first).
    pub fn check_type(&self, config: &Value) -> Result<(), ApplyError> {
        let applied_gvk = gvk_string(
            config.get("apiVersion").and_then(Value::as_str).unwrap_or(""),
            config.get("kind").and_then(Value::as_str).unwrap_or(""),
        );
        if applied_gvk != gvk_string(&self.api_version, &self.kind) {
            return Err(ApplyError::BadRequest(format!("invalid object type: {applied_gvk}")));
        }
        Ok(())
    }

    /// An apply to an object whose fields nobody tracks first gives them all to
    /// `before-first-apply`.
    fn apply_tracked(
        &self,
        live: &Value,
        config: &Value,
        mut managed: Managed,
        manager: &str,
        force: bool,
    ) -> Result<(Value, Managed), ApplyError> {
        if managed.fields.is_empty() {
            // Nobody else's entry to convert to: this cannot fail.
            self.record_update(&self.zero, live, &mut managed, BEFORE_FIRST_APPLY);
        }
        let id = ManagerId::apply(if manager.is_empty() { "unknown" } else { manager }, self.subresource);
        if super::managers::accessor_finds(config) {
            return Err(ApplyError::BadRequest("metadata.managedFields must be nil".into()));
        }
        if let Some(message) = walk::type_error(self.schema, config) {
            // kube-apiserver passes this on as a plain Go error: a 500 without a reason
            // (kubernetes/kubernetes#139253).
            return Err(ApplyError::Unclassified(format!(
                "failed to create typed patch object ({}): {message}",
                config_gvknn(config, &gvk_string(&self.api_version, &self.kind))
            )));
        }
        let (new, mut fields) = self
            .updater()
            .apply(live, config, &self.api_version, std::mem::take(&mut managed.fields), &id, force)
            .map_err(|refusal| match refusal {
                Refusal::Conflicts(c) => ApplyError::Conflicts(c),
                Refusal::Unconvertible(m) => ApplyError::Unclassified(m),
            })?;
        strip(&mut fields, &id);
        managed.fields = fields;
        let obj = match new {
            Some(obj) => {
                managed.times.insert(id, self.now.clone());
                obj
            }
            None => live.clone(),
        };
        Ok((obj, managed))
    }

    /// The fields the client-side apply annotation sets that still hold its values.
    fn last_applied_fields(&self, live: &Value) -> Option<Set> {
        let text = last_applied(live)?;
        let last: Value = serde_json::from_str(text).ok().filter(Value::is_object)?;
        if last.get("apiVersion").and_then(Value::as_str) != Some(self.api_version.as_str()) {
            return None;
        }
        if !walk::validate(self.schema, &last).is_empty() {
            return None;
        }
        let c = walk::compare(self.schema, &last, live);
        Some(walk::field_set(self.schema, &last).difference(&c.modified).difference(&c.added).difference(&c.removed))
    }
}

fn last_applied(obj: &Value) -> Option<&str> {
    obj.get("metadata")?.get("annotations")?.get(LAST_APPLIED)?.as_str().filter(|s| !s.is_empty())
}

/// kube keeps annotations under 256 kB in total; a last-applied annotation that would
/// break that is dropped instead.
const ANNOTATIONS_LIMIT: usize = 256 * 1024;

fn set_last_applied(obj: &mut Value, config: &Value) {
    let mut config = config.clone();
    if let Some(a) = config.get_mut("metadata").and_then(|m| m.get_mut("annotations")).and_then(Value::as_object_mut) {
        a.remove(LAST_APPLIED);
    }
    let value = format!("{}\n", super::path::go_json(&config));
    let meta = meta::metadata_mut(obj);
    let annotations = meta.entry("annotations").or_insert_with(|| json!({}));
    let Some(a) = annotations.as_object_mut() else { return };
    a.insert(LAST_APPLIED.into(), Value::from(value));
    let size: usize = a.iter().map(|(k, v)| k.len() + v.as_str().map_or(0, str::len)).sum();
    if size > ANNOTATIONS_LIMIT {
        a.remove(LAST_APPLIED);
    }
}

/// Folds the oldest `Update` entries into `ancient-changes` (one per apiVersion) until
/// at most [`MAX_UPDATE_MANAGERS`] remain, as kube's `capManagersManager` does.
fn cap_update_managers(managed: &mut Managed) {
    let seconds = |id: &ManagerId| {
        managed.times.get(id).and_then(|t| t.parse::<k8s_openapi::jiff::Timestamp>().ok()).map_or(0, |t| t.as_second())
    };
    let mut updaters: Vec<ManagerId> =
        managed.fields.iter().filter(|(_, vs)| !vs.applied).map(|(id, _)| id.clone()).collect();
    if updaters.len() <= MAX_UPDATE_MANAGERS {
        return;
    }
    updaters.sort_by(|a, b| seconds(a).cmp(&seconds(b)).then_with(|| a.cmp(b)));
    let mut first_of_version: std::collections::BTreeMap<String, ManagerId> = Default::default();
    let mut count = updaters.len();
    for id in updaters {
        if count <= MAX_UPDATE_MANAGERS {
            break;
        }
        let Some(vs) = managed.fields.get(&id).cloned() else { continue };
        let bucket = ManagerId::update(ANCIENT_CHANGES, &vs.api_version, None);
        match first_of_version.get(&vs.api_version) {
            Some(first) => {
                if !managed.fields.contains_key(&bucket)
                    && let Some(s) = managed.fields.remove(first)
                {
                    managed.fields.insert(bucket.clone(), s);
                }
                let union = match managed.fields.get(&bucket) {
                    Some(b) => vs.set.union(&b.set),
                    None => vs.set.clone(),
                };
                managed.fields.insert(bucket.clone(), VersionedSet { set: union, ..vs });
                managed.fields.remove(&id);
                count -= 1;
                // The bucket takes the newer time of what was merged into it.
                match managed.times.get(&id).cloned() {
                    Some(t) => managed.times.insert(bucket, t),
                    None => managed.times.remove(&bucket),
                };
            }
            None => {
                first_of_version.insert(vs.api_version.clone(), id);
            }
        }
    }
}

#[cfg(test)]
#[path = "fieldmanager_tests.rs"]
mod tests;
