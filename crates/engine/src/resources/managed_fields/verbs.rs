//! Field management inside the REST verbs: the bookkeeping create and update run, and
//! the apply patch (create when absent, merge with ownership otherwise).
//!
//! The field types come from the kind's CRD (its served version's `openAPIV3Schema`);
//! kinds without one are handled untyped. Which fields a write may own follows kube's
//! reset fields: the main endpoint of a kind with `/status` never owns `.status`, `/status`
//! never owns `.spec`, and `/scale` owns only the replicas path, kept as kube's scale
//! handler keeps it ([`super::scale`]).

use super::fieldmanager::{FieldManager, config_gvknn, gvk_string};
use super::path::PathElement;
use super::scale::{self, ReplicasChange, SCALE_API_VERSION, ScaleWrite};
use super::schema::Schema;
use super::set::Set;
use super::updater::Filter;
use crate::field::FieldError;
use crate::meta;
use crate::representation::body_yaml;
use crate::resources::builtin::unstructured_convert;
use crate::resources::rest::{FieldValidation, Rest, Subresource, WriteOptions};
use crate::resources::scale::{ScalePaths, scale_of};
use crate::status::ApiError;
use serde_json::{Value, json};
use std::sync::Arc;

/// Whether a create or update still has to compute its managedFields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tracking {
    /// An ordinary write: record it as an `Update` by the request's field manager.
    Update,
    /// An apply already set them.
    Applied,
}

/// The managedFields a write ends with, put back after the strategy hooks (the status
/// strategy rebuilds the object from the stored one, as kube's copies them over too).
#[derive(Debug, Clone, PartialEq)]
pub struct ManagedFieldsAfter(Option<Value>);

impl ManagedFieldsAfter {
    /// Puts a copy of the entries on `obj`, for admission to see before the strategy runs
    /// ([`ManagedFieldsAfter::restore`] puts them back after it).
    pub fn show(&self, obj: &mut Value) {
        if let Some(entries) = &self.0 {
            meta::metadata_mut(obj).insert("managedFields".into(), entries.clone());
        }
    }

    /// Puts the entries on `obj` (removing the field when there are none).
    pub fn restore(self, obj: &mut Value) {
        match self.0 {
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
}

/// The answer to a write that may create: the object, and whether it was created (kube
/// answers 201 then): by an apply patch, or by a PUT of a kind that creates on update.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteOutcome {
    pub object: Value,
    pub created: bool,
}

fn path_of(dotted: &str) -> Vec<PathElement> {
    dotted.trim_start_matches('.').split('.').filter(|s| !s.is_empty()).map(|s| PathElement::Field(s.into())).collect()
}

impl Rest<'_> {
    /// The field types of this kind: its strategy's (a custom resource's come from its
    /// served schema), else deduced from the value.
    fn type_schema(&self) -> Arc<Schema> {
        self.strategy.field_types().unwrap_or_else(|| Arc::new(Schema::for_kind(None, false)))
    }

    fn field_manager<'s>(&self, schema: &'s Schema, sub: Subresource) -> FieldManager<'s> {
        let info = self.strategy.info();
        let top = |field: &str| Set::of(&[vec![PathElement::Field(field.into())]]);
        let filter = match sub {
            Subresource::Main if info.status_subresource => Filter::Except(top("status")),
            // kube's finalize strategy resets the status.
            Subresource::Finalize => Filter::Except(top("status")),
            Subresource::Main => Filter::Everything,
            Subresource::Status => {
                let mut reset = Set::default();
                for field in self.strategy.status_reset_fields() {
                    reset = reset.union(&top(field));
                }
                Filter::Except(reset)
            }
            Subresource::Scale => match self.scale {
                Some(paths) => Filter::Only(Set::of(&[path_of(&paths.spec_replicas)])),
                None => Filter::Everything,
            },
        };
        FieldManager {
            schema,
            api_version: info.api_version(),
            kind: info.kind.clone(),
            subresource: sub.name(),
            filter,
            stamps_time: sub != Subresource::Scale,
            now: meta::format_time(self.now),
            zero: self.strategy.zero_object(),
            other_versions: self.strategy.other_field_types(),
            convertible_versions: self.strategy.convertible_versions(),
            webhook: self.strategy.conversion_webhook(),
        }
    }

    /// A create's managedFields: everything it sets belongs to its field manager.
    pub(in crate::resources) async fn track_create(&self, obj: &mut Value, opts: &WriteOptions, tracking: Tracking) {
        if tracking == Tracking::Applied {
            return;
        }
        let schema = self.type_schema();
        let fm = self.field_manager(&schema, Subresource::Main);
        fm.update(&fm.zero, obj, opts.field_manager.as_deref());
    }

    /// An update's managedFields, computed from the request before the strategy touches
    /// it; [`ManagedFieldsAfter::restore`] puts them on the object the strategy made.
    pub(in crate::resources) async fn track_update(
        &self,
        old: &Value,
        obj: &mut Value,
        sub: Subresource,
        opts: &WriteOptions,
        tracking: Tracking,
    ) -> ManagedFieldsAfter {
        if tracking == Tracking::Update
            && sub == Subresource::Scale
            && let Some(paths) = self.scale
        {
            // kube tracks a scale write on the Scale, not on the custom resource.
            let replicas = path_of(&paths.spec_replicas);
            let spec_replicas = |o: &Value| crate::resources::scale::scale_of(o, paths)["spec"]["replicas"].clone();
            let write = ScaleWrite {
                manager: opts.field_manager.as_deref().unwrap_or(""),
                api_version: &self.strategy.info().api_version(),
                replicas: &replicas,
                change: match (spec_replicas(old), spec_replicas(obj)) {
                    (before, after) if before == after => ReplicasChange::Kept,
                    (_, Value::Null) => ReplicasChange::Removed,
                    _ => ReplicasChange::Set,
                },
            };
            return ManagedFieldsAfter(scale::after_scale_write(old, &write));
        }
        if tracking == Tracking::Applied {
            return ManagedFieldsAfter(obj.get("metadata").and_then(|m| m.get("managedFields")).cloned());
        }
        // A subresource's field manager reads the stored entries and drops the sent ones,
        // so those are taken out rather than copied (a CRD's mirror its 40 KiB spec).
        let sent = match sub.name() {
            Some(_) => obj.get_mut("metadata").and_then(Value::as_object_mut).and_then(|m| m.remove("managedFields")),
            None => obj.get("metadata").and_then(|m| m.get("managedFields")).cloned(),
        };
        // Computed on the request itself, which gets the entries it was sent back after:
        // the field manager changes nothing else, and a copy of a large object cost more
        // than the bookkeeping.
        let schema = self.type_schema();
        self.field_manager(&schema, sub).update(old, obj, opts.field_manager.as_deref());
        let after = obj.get_mut("metadata").and_then(Value::as_object_mut).and_then(|m| m.remove("managedFields"));
        ManagedFieldsAfter(sent).restore(obj);
        ManagedFieldsAfter(after)
    }

    /// The first half of an apply patch (PATCH with `application/apply-patch+yaml`): the
    /// configuration in `body` merged into the live object with field ownership, or the
    /// object to create when there is none. The caller writes it like any patch.
    pub(in crate::resources) async fn apply_patch(
        &self,
        namespace: Option<&str>,
        name: &str,
        body: &[u8],
        sub: Subresource,
        opts: &WriteOptions,
    ) -> Result<ApplyStep, ApiError> {
        validate_patch_options(true, opts)?;
        let manager = opts.field_manager.as_deref().unwrap_or_default();
        let (config, duplicates) = decode_yaml(body)?;
        let live = match self.get(namespace, name).await {
            Ok(live) => Some(live),
            Err(e) if e.is_not_found() && sub == Subresource::Main => None,
            Err(e) => return Err(e),
        };
        let schema = self.type_schema();
        let fm = self.field_manager(&schema, sub);
        let info = self.strategy.info();
        let Some(live) = live else {
            let mut obj = fm.apply(&fm.zero, &config, manager, opts.force).map_err(ApiError::from)?;
            self.convert_applied(&mut obj, &config)?;
            check_repeated_keys(&duplicates, opts)?;
            if let Some(uid) = meta::uid(&obj) {
                return Err(ApiError::conflict(
                    &info.group_resource(),
                    name,
                    &format!("uid mismatch: the provided object specified uid {uid}, and no existing object was found"),
                ));
            }
            check_name(&obj, name, namespace)?;
            meta::metadata_mut(&mut obj).remove("resourceVersion");
            return Ok(ApplyStep::Create(obj));
        };
        let mut obj = fm.apply(&live, &config, manager, opts.force).map_err(ApiError::from)?;
        self.convert_applied(&mut obj, &config)?;
        check_repeated_keys(&duplicates, opts)?;
        check_name(&obj, name, namespace)?;
        Ok(ApplyStep::Update { live, obj })
    }

    /// An apply's merge of a typed kind is converted from maps into its Go struct, not
    /// decoded: what the converter refuses is kube's plain error (a 500 without a reason,
    /// naming the applied configuration), and its integers keep their field's bits.
    fn convert_applied(&self, obj: &mut Value, config: &Value) -> Result<(), ApiError> {
        let Some(go) = self.strategy.go_struct() else { return Ok(()) };
        // Entries the configuration carries that kube's accessor could not read (else the
        // apply was refused) are in kube's merge, and the converter refuses them there.
        let refused = match config.pointer("/metadata/managedFields").filter(|v| !v.is_null()) {
            Some(entries) => {
                let mut merged = obj.clone();
                meta::metadata_mut(&mut merged).insert("managedFields".into(), entries.clone());
                unstructured_convert::conversion_error(&merged, go)
            }
            None => unstructured_convert::conversion_error(obj, go),
        };
        if let Some(why) = refused {
            let info = self.strategy.info();
            let gvk = gvk_string(&info.api_version(), &info.kind);
            let named = config_gvknn(config, &gvk);
            return Err(ApiError::new(
                500,
                "",
                format!(
                    "failed to convert new object ({named}) to proper version: unable to convert unstructured object to {gvk}: {why}"
                ),
            ));
        }
        unstructured_convert::convert_integers(obj, go);
        Ok(())
    }
}

impl Rest<'_> {
    /// An apply patch through `/scale`, as kube's scale handler runs it: the configuration
    /// is applied to the Scale, carrying the entries that own the replicas
    /// (`ToSubresource`), by a field manager that types the Scale from its values.
    /// Conflicts answer 409. An apply that changes nothing still takes ownership, written
    /// back to the custom resource (`ToParent`); one that changes the Scale fails in
    /// kube-apiserver 1.32 (its scale field manager converts the applied Scale with the
    /// custom resource's converter), and the engine answers that 500 as kube does, so a
    /// controller tested here meets what it meets on a cluster. Answers the custom
    /// resource to write.
    /// The Scale of `live` as kube's scale handler hands it to a patch: with the entries
    /// that own the replicas (`ToSubresource`).
    pub(in crate::resources) fn scale_with_entries(&self, live: &Value, paths: &ScalePaths) -> Value {
        let replicas = path_of(&paths.spec_replicas);
        let api_version = self.strategy.info().api_version();
        let write =
            ScaleWrite { manager: "", api_version: &api_version, replicas: &replicas, change: ReplicasChange::Kept };
        let mut scale = scale_of(live, paths);
        if let Some(entries) = scale::scale_entries(live, &write) {
            meta::metadata_mut(&mut scale).insert("managedFields".into(), entries);
        }
        scale
    }

    pub(in crate::resources) fn apply_scale_patch(
        &self,
        live: &Value,
        config: &Value,
        paths: &ScalePaths,
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        let replicas = path_of(&paths.spec_replicas);
        let api_version = self.strategy.info().api_version();
        let manager = opts.field_manager.as_deref().unwrap_or_default();
        let write =
            ScaleWrite { manager, api_version: &api_version, replicas: &replicas, change: ReplicasChange::Kept };
        let convert_error = |what: &str, named: &str| {
            format!(
                "failed to convert {what} object ({named}) to proper version: \
                 request to convert CR to an invalid group/version: {SCALE_API_VERSION}"
            )
        };
        let scale_gvk = gvk_string(SCALE_API_VERSION, "Scale");
        let schema = Schema::Deduced;
        let fm = FieldManager {
            schema: &schema,
            api_version: SCALE_API_VERSION.into(),
            kind: "Scale".into(),
            subresource: Some("scale"),
            filter: Filter::Everything,
            stamps_time: false,
            now: meta::format_time(self.now),
            zero: json!({"apiVersion": SCALE_API_VERSION, "kind": "Scale"}),
            other_versions: Vec::new(),
            convertible_versions: None,
            webhook: None,
        };
        fm.check_type(config).map_err(ApiError::from)?;
        let current = self.scale_with_entries(live, paths);
        if current.pointer("/metadata/managedFields").is_none() {
            // An untracked Scale is first given to `before-first-apply`, an update of an
            // empty Scale that fails the same conversion.
            let why = convert_error("live", &config_gvknn(&Value::Null, &scale_gvk));
            return Err(ApiError::new(500, "", format!("failed to create manager for existing fields: {why}")));
        }
        let applied = fm.apply(&current, config, manager, opts.force).map_err(ApiError::from)?;
        if !same_but_managed_fields(&applied, &current) {
            return Err(ApiError::new(500, "", convert_error("new", &config_gvknn(config, &scale_gvk))));
        }
        let mut obj = live.clone();
        ManagedFieldsAfter(scale::after_scale_apply(live, &applied, &write)).restore(&mut obj);
        Ok(obj)
    }
}

fn same_but_managed_fields(a: &Value, b: &Value) -> bool {
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("managedFields");
        }
        v
    };
    strip(a) == strip(b)
}

/// What an apply patch writes.
#[derive(Debug, Clone, PartialEq)]
pub enum ApplyStep {
    /// The object did not exist: create this one.
    Create(Value),
    /// Update `live` to `obj`.
    Update { live: Value, obj: Value },
}

/// kube's `ValidatePatchOptions`: an apply names its field manager; `force` is for
/// applies only.
pub fn validate_patch_options(apply: bool, opts: &WriteOptions) -> Result<(), ApiError> {
    let mut errors = Vec::new();
    if apply && opts.field_manager.is_none() {
        errors.push(FieldError::required("fieldManager", "is required for apply patch"));
    }
    if !apply && opts.force {
        errors.push(FieldError::forbidden("force", "may not be specified for non-apply patch"));
    }
    if errors.is_empty() { Ok(()) } else { Err(ApiError::invalid("PatchOptions", "meta.k8s.io", "", &errors)) }
}

/// The body of an apply patch: YAML (JSON is YAML) holding one object.
pub(in crate::resources) fn decode_yaml(body: &[u8]) -> Result<(Value, Vec<String>), ApiError> {
    let text = std::str::from_utf8(body).map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?;
    if text.trim().is_empty() {
        return Ok((json!({}), Vec::new()));
    }
    // go-yaml's lenient pass keeps the last of repeated keys (as resolved: `on` and `Y` are
    // one); the strict pass after the apply names them (see `check_repeated_keys`).
    let (value, duplicates) = match body_yaml::read(text.as_bytes()) {
        Ok(read) => (read.object, read.duplicates),
        Err(e) => {
            // sigs.k8s.io/yaml says which step go-yaml's error comes from.
            let step = if e.starts_with("yaml: ") { "error converting YAML to JSON: " } else { "" };
            return Err(ApiError::bad_request(format!("error decoding YAML: {step}{e}")));
        }
    };
    match value {
        Value::Object(_) => Ok((value, duplicates)),
        Value::Null => Ok((json!({}), duplicates)),
        other => Err(ApiError::bad_request(format!(
            "error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            match other {
                Value::Array(_) => "array",
                Value::String(_) => "string",
                Value::Bool(_) => "bool",
                _ => "number",
            }
        ))),
    }
}

/// kube's strict pass over an apply patch, made once the apply succeeded (so a conflict
/// is answered first): repeated keys are a 400 under `fieldValidation=Strict`, warnings
/// under Warn.
pub(in crate::resources) fn check_repeated_keys(duplicates: &[String], opts: &WriteOptions) -> Result<(), ApiError> {
    match opts.field_validation {
        _ if duplicates.is_empty() => Ok(()),
        FieldValidation::Ignore => Ok(()),
        FieldValidation::Warn => {
            duplicates.iter().for_each(|d| opts.warn(d.clone()));
            Ok(())
        }
        FieldValidation::Strict => Err(ApiError::bad_request(format!(
            "error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  {}",
            duplicates.join("\n  ")
        ))),
    }
}

/// kube's checks of a patched object: its namespace, if it names one, must be the
/// request's (`EnsureObjectNamespaceMatchesRequestNamespace`), then its name the URL's
/// (`checkName`).
pub(in crate::resources) fn check_name(obj: &Value, name: &str, namespace: Option<&str>) -> Result<(), ApiError> {
    if let (Some(ns), Some(obj_ns)) = (namespace, meta::namespace(obj))
        && !obj_ns.is_empty()
        && ns != obj_ns
    {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    let obj_name = obj.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str).unwrap_or("");
    if obj_name.is_empty() {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({name} based on URL) was undeterminable: name must be provided"
        )));
    }
    if obj_name != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({obj_name}) does not match the name on the URL ({name})"
        )));
    }
    Ok(())
}
