//! Custom resources of one served CRD version as a kind.
//!
//! The spec/status split follows the subresources proposal: with `/status` enabled, a
//! create drops `.status` and the main endpoint keeps the stored status (the generic
//! `Strategy` defaults), while `/status` writes only `.status`.
//!
//! The version's structural schema ([`Schema`]) does the rest, as apiextensions-apiserver's
//! `customResourceStrategy` does: request bodies are checked and pruned/defaulted while
//! decoding, and every create, update and status update is validated by collecting the
//! errors of several checks in kube's order — type meta, object metadata, the schema's
//! values, embedded resources and list types, then the CEL rules (which kube skips when an
//! earlier error means the object has the wrong shape). Status updates validate the whole
//! object, like kube's status strategy. Schemas are compiled once per CRD generation and
//! version and shared by every strategy built for them.
//!
//! The versions of a CRD share one storage. As kube's `None` conversion does, an object is
//! served at the version of the request whatever version wrote it, and stored at the
//! storage version: `apiVersion` is rewritten and the object pruned to the schema of the
//! version it is converted to ([`VersionConversion`]); an object stored at a version the
//! CRD no longer lists is refused ([`super::unlisted`]).

use super::scale::{self, ScalePaths};
use super::{ResourceInfo, Strategy, Undecodable, VersionConversion, managed_fields};
use crate::field::{FieldError, Path};
use crate::schema::names::name_is_dns_subdomain;
use crate::schema::{Schema, object_meta, validate_object_meta, validate_object_meta_update};
use crate::store::Revision;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceDefinitionVersion,
};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, OnceLock, Weak};

/// The strategy of one served version of a CRD: its names and its compiled schema.
pub struct CustomResourceStrategy {
    info: ResourceInfo,
    schema: Option<Arc<Schema>>,
    /// The revision from which `schema` has been served: objects stored before are pruned
    /// and defaulted by it again when read, as kube's storage decoder does every object.
    schema_since: Revision,
    /// `spec.preserveUnknownFields`, which the field types follow too.
    preserve_unknown_fields: bool,
    /// The field types of managedFields, built from the schema when the kind is first
    /// written (as kube's CRD handler builds its type converter with the kind's serving
    /// info, not per request).
    field_types: OnceLock<Arc<managed_fields::schema::Schema>>,
    /// The other versions' field types, built with `field_types`'s laziness.
    other_field_types: OnceLock<Vec<(String, Arc<managed_fields::schema::Schema>)>>,
    /// The version's `selectableFields`, as field-selector paths (`spec.color`).
    selectable: Vec<String>,
    /// Served and storage apiVersions (the versions share one storage, and a single version's
    /// objects may be stored at one the CRD no longer lists).
    versions: VersionConversion,
    /// The version's `/scale` paths, which every write's values must fit.
    scale: Option<ScalePaths>,
    /// Every version's `specReplicasPath` (`None`: no `/scale`), by `group/version`.
    replicas_paths: scale::ReplicasPaths,
}

/// Which compiled schema a CRD version has: it changes only with the CRD's generation.
#[derive(Clone, PartialEq, Eq, Hash)]
struct SchemaKey {
    crd: String,
    version: String,
}

/// Schemas by CRD (uid, else name) and version, with the generation they are of. Held
/// weakly: a schema lives as long as a served kind uses it, so a deleted CRD's schemas go
/// with its kinds, and a status change (which rebuilds the kinds) finds them still alive.
#[derive(Default)]
struct SchemaCache {
    /// The generation a schema is of, the schema, and the revision it was first served at.
    by_key: HashMap<SchemaKey, (i64, Weak<Schema>, Revision)>,
    /// How many entries the last sweep of dead ones left: the next sweep waits until the
    /// map has doubled, so sweeping costs O(1) per insertion (a sweep on every insertion
    /// was a walk of every CRD's schemas per CRD published).
    swept_to: usize,
}

impl SchemaCache {
    /// The least size at which dead entries are swept.
    const SWEEP_FROM: usize = 64;

    /// The schema held for `key` at `generation`, if a served kind still uses it, with the
    /// revision it was first served at.
    fn live(&self, key: &SchemaKey, generation: i64) -> Option<(Arc<Schema>, Revision)> {
        let (held_generation, schema, since) = self.by_key.get(key)?;
        (*held_generation == generation).then(|| schema.upgrade().map(|s| (s, *since))).flatten()
    }

    fn insert(&mut self, key: SchemaKey, generation: i64, schema: &Arc<Schema>, since: Revision) {
        if self.by_key.len() >= 2 * self.swept_to.max(Self::SWEEP_FROM / 2) {
            self.by_key.retain(|_, (_, held, _)| held.strong_count() > 0);
            self.swept_to = self.by_key.len();
        }
        self.by_key.insert(key, (generation, Arc::downgrade(schema), since));
    }
}

static SCHEMAS: LazyLock<Mutex<SchemaCache>> = LazyLock::new(Default::default);

/// Where the schemas of a CRD's versions are read from to be compiled.
#[derive(Clone, Copy)]
pub enum SchemaSource<'a> {
    /// The typed CRD's own.
    Typed,
    /// The CRD as stored, as JSON (the typed CRD may leave its schemas out): the CRD
    /// controller publishes a CRD from the JSON it has at hand, typing none of its schemas
    /// (a third of a CRD's two writes was typing them).
    Stored(&'a Value),
}

impl SchemaSource<'_> {
    /// `version`'s `openAPIV3Schema` as JSON, if it has one.
    fn json(self, version: &CustomResourceDefinitionVersion) -> Option<Vec<u8>> {
        match self {
            SchemaSource::Typed => serde_json::to_vec(version.schema.as_ref()?.open_api_v3_schema.as_ref()?).ok(),
            SchemaSource::Stored(crd) => {
                let versions = crd.get("spec")?.get("versions")?.as_array()?;
                let stored = versions.iter().find(|v| v.get("name").and_then(Value::as_str) == Some(&version.name))?;
                let schema = stored.get("schema")?.get("openAPIV3Schema").filter(|s| !s.is_null())?;
                serde_json::to_vec(schema).ok()
            }
        }
    }
}

/// The schema of `version`, one per CRD generation, compiled on first use (most of a
/// large CRD set's kinds are never used: see [`Schema::lazy`]), with the revision from
/// which it has been served: the CRD's when this process first met the generation (an
/// object stored before may have been written under another schema).
fn compiled_schema(
    crd: &CustomResourceDefinition,
    version: &CustomResourceDefinitionVersion,
    source: SchemaSource<'_>,
) -> Option<(Arc<Schema>, Revision)> {
    let preserve = crd.spec.preserve_unknown_fields.unwrap_or(false);
    let build = |json: &[u8]| Arc::new(Schema::lazy_json(json).preserving_unknown_fields(preserve));
    let since = crd.metadata.resource_version.as_deref().and_then(crate::meta::parse_resource_version).unwrap_or(0);
    let (Some(crd_id), Some(generation)) =
        (crd.metadata.uid.clone().or_else(|| crd.metadata.name.clone()), crd.metadata.generation)
    else {
        return source.json(version).map(|json| (build(&json), since));
    };
    let key = |version: &str| SchemaKey { crd: crd_id.clone(), version: version.to_string() };
    let mut cache = SCHEMAS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    // Held already (a status change publishes the CRD again): its JSON is not written.
    if let Some(held) = cache.live(&key(&version.name), generation) {
        return Some(held);
    }
    let json = source.json(version)?;
    // Most CRDs with several versions repeat one schema: such versions share one, which is
    // kept (and compiled, once used) once. Only versions held already are compared.
    let same = crd.spec.versions.iter().filter(|v| v.name != version.name).find_map(|v| {
        cache.live(&key(&v.name), generation).filter(|_| source.json(v).is_some_and(|other| other == json))
    });
    let (schema, since) = same.unwrap_or_else(|| (build(&json), since));
    cache.insert(key(&version.name), generation, &schema, since);
    Some((schema, since))
}

impl CustomResourceStrategy {
    /// The kind a CRD serves at one version, under its *accepted* names, its versions'
    /// schemas read from `schemas`.
    pub fn new(
        crd: &CustomResourceDefinition,
        version: &CustomResourceDefinitionVersion,
        schemas: SchemaSource<'_>,
    ) -> Self {
        let names = crd.status.as_ref().and_then(|s| s.accepted_names.clone()).unwrap_or_default();
        let status_subresource = version.subresources.as_ref().is_some_and(|s| s.status.is_some());
        let compiled = compiled_schema(crd, version, schemas);
        let schema_since = compiled.as_ref().map_or(0, |(_, since)| *since);
        let schema = compiled.map(|(schema, _)| schema);
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
            versions: version_conversion(crd, version, schema.as_ref(), schemas),
            scale: version.subresources.as_ref().and_then(|s| s.scale.as_ref()).map(ScalePaths::from_crd),
            replicas_paths: crd
                .spec
                .versions
                .iter()
                .map(|v| {
                    let scale = v.subresources.as_ref().and_then(|s| s.scale.as_ref());
                    (format!("{}/{}", crd.spec.group, v.name), scale.map(|s| s.spec_replicas_path.clone()))
                })
                .collect(),
            schema,
            schema_since,
            preserve_unknown_fields: crd.spec.preserve_unknown_fields.unwrap_or(false),
            field_types: OnceLock::new(),
            other_field_types: OnceLock::new(),
            selectable: version
                .selectable_fields
                .iter()
                .flatten()
                .map(|f| f.json_path.trim_start_matches('.').to_string())
                .collect(),
        }
    }

    /// The served version's compiled schema, if it has one.
    pub fn schema(&self) -> Option<&Schema> {
        self.schema.as_deref()
    }

    /// The served version's `/scale` paths, when it has the subresource.
    pub fn scale_paths(&self) -> Option<&ScalePaths> {
        self.scale.as_ref()
    }

    /// `kind` and `apiVersion` must be this kind's (kube checks them before anything else).
    fn validate_type_meta(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default();
        if kind != self.info.kind {
            errs.push(FieldError::invalid("kind", kind, format!("must be {}", self.info.kind)));
        }
        let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
        let want = format!("{}/{}", self.info.group, self.info.version);
        if api_version != want {
            errs.push(FieldError::invalid("apiVersion", api_version, format!("must be {want}")));
        }
        errs
    }

    /// The schema's checks, in kube's order: values, the `/scale` paths, structure, then
    /// the CEL rules (told about every earlier error, `errs` included, since some of them
    /// block the rules). `status`: a `/status` write, whose values are checked under
    /// `.status` only.
    fn validate_schema(&self, obj: &Value, old: Option<&Value>, status: bool, errs: &mut Vec<FieldError>) {
        if let Some(schema) = self.schema() {
            errs.extend(if status { schema.validate_status_values(obj) } else { schema.validate_values(obj, old) });
        }
        // kube's validator checks the `/scale` paths right after the values (a `/status`
        // write only the status side), before embedded resources and rules.
        if let Some(paths) = &self.scale {
            if !status {
                errs.extend(scale::validate_spec(obj, paths));
            }
            errs.extend(scale::validate_status(obj, paths));
        }
        let Some(schema) = self.schema() else { return };
        errs.extend(schema.validate_structure(obj, old, super::builtin::types::object_meta_error));
        // kube 1.32 ratchets the rules of main writes only (see `Ratchet::Off`).
        let rules = schema.validate_rules(obj, old, errs, !status);
        errs.extend(rules);
    }

    /// An update (main endpoint or `/status`), after the generic metadata checks kube's
    /// registry makes on every update (see `Rest::write_update`): the type, the metadata
    /// update again, then the schema. `/status` checks only `.status` against the schema,
    /// as kube's status strategy does.
    fn validate_any_update(&self, new: &Value, old: &Value, status: bool) -> Vec<FieldError> {
        let metadata = Path::root("metadata");
        let (new_meta, old_meta) = (metadata_of(new), metadata_of(old));
        let mut errs = Vec::new();
        let type_meta = self.validate_type_meta(new);
        if !type_meta.is_empty() {
            errs.extend(type_meta);
            return errs;
        }
        let mut meta_errs = validate_object_meta_update(new_meta, old_meta, &metadata);
        // The third check of the update's metadata, after the registry's two.
        object_meta::at_check_addresses(&mut meta_errs, 2);
        errs.extend(meta_errs);
        self.validate_schema(new, Some(old), status, &mut errs);
        errs
    }
}

/// kube's `None` conversion between the versions of a CRD: every object is served at the
/// endpoint's version and stored at the storage version, pruned to the schema of the
/// version it is converted to.
fn version_conversion(
    crd: &CustomResourceDefinition,
    version: &CustomResourceDefinitionVersion,
    served_schema: Option<&Arc<Schema>>,
    schemas: SchemaSource<'_>,
) -> VersionConversion {
    let group = &crd.spec.group;
    // Validation makes exactly one version the storage version.
    let storage = crate::registry::defaults::storage_version(crd).unwrap_or(&version.name);
    let storage_schema = match crd.spec.versions.iter().find(|v| v.name == storage) {
        Some(v) if v.name != version.name => compiled_schema(crd, v, schemas).map(|(schema, _)| schema),
        _ => served_schema.cloned(),
    };
    let stored_schemas = crd
        .spec
        .versions
        .iter()
        .filter_map(|v| {
            let schema = if v.name == version.name {
                served_schema.cloned()
            } else {
                compiled_schema(crd, v, schemas).map(|(s, _)| s)
            };
            schema.map(|s| (Arc::from(format!("{group}/{}", v.name)), s))
        })
        .collect();
    VersionConversion {
        served: format!("{group}/{}", version.name).into(),
        storage: format!("{group}/{storage}").into(),
        served_schema: served_schema.cloned(),
        storage_schema,
        stored_schemas,
        listed: super::unlisted::Listed::of(crd),
        webhook: super::conversion_webhook::ConversionWebhook::of(crd),
    }
}

fn metadata_of(obj: &Value) -> &Value {
    obj.get("metadata").unwrap_or(&Value::Null)
}

impl Strategy for CustomResourceStrategy {
    fn info(&self) -> &ResourceInfo {
        &self.info
    }

    fn refreshed_before(&self) -> Option<super::Refresh> {
        let schema = Arc::clone(self.schema.as_ref()?);
        (self.schema_since > 0).then_some(super::Refresh { since: self.schema_since, schema })
    }

    /// The other versions' schemas as field types, built when the kind is first written.
    fn conversion_webhook(&self) -> Option<Arc<super::conversion_webhook::ConversionWebhook>> {
        self.versions.webhook.clone()
    }

    fn convertible_versions(&self) -> Option<Vec<String>> {
        Some(self.versions.listed.names())
    }

    fn replicas_paths(&self) -> Option<scale::ReplicasPaths> {
        Some(Arc::clone(&self.replicas_paths))
    }

    fn other_field_types(&self) -> Vec<(String, Arc<managed_fields::schema::Schema>)> {
        let versions = &self.versions;
        let built = self.other_field_types.get_or_init(|| {
            let preserve = self.preserve_unknown_fields;
            let others = versions.stored_schemas.iter().filter(|(v, _)| **v != *versions.served);
            others
                .map(|(v, schema)| {
                    let types = managed_fields::schema::Schema::for_kind(schema.props().as_ref(), preserve);
                    (v.to_string(), Arc::new(types))
                })
                .collect()
        });
        built.clone()
    }

    /// The served version's schema as field types (deduced from the value where the
    /// version has none).
    fn field_types(&self) -> Option<Arc<managed_fields::schema::Schema>> {
        let types = self.field_types.get_or_init(|| {
            let props = self.schema.as_ref().and_then(|s| s.props());
            Arc::new(managed_fields::schema::Schema::for_kind(props.as_ref(), self.preserve_unknown_fields))
        });
        Some(Arc::clone(types))
    }

    /// `metadata.name`, `metadata.namespace`, and the CRD's `selectableFields`.
    fn selectable_fields(&self) -> Vec<String> {
        let mut fields = vec!["metadata.name".to_string()];
        if self.info.namespaced {
            fields.push("metadata.namespace".into());
        }
        fields.extend(self.selectable.iter().cloned());
        fields
    }

    fn version_conversion(&self) -> Option<&VersionConversion> {
        Some(&self.versions)
    }

    /// Custom resources have no patch strategies: kube answers 415 (reference 27).
    fn supports_strategic_merge(&self) -> bool {
        false
    }

    fn unstructured(&self) -> bool {
        true
    }

    /// kube's unstructured decoder keeps `2.0` a float64 through validation (a multiple of
    /// 0.5 for an integer field; a `/scale` replicas path refuses it); Go's encoder stores
    /// it as `2`.
    fn canonicalize(&self, obj: &mut Value) {
        crate::representation::gofmt::integral_floats(obj);
    }

    /// kube's strategy answers `AllowUnconditionalUpdate` with false: an update names
    /// the resourceVersion it replaces.
    fn allows_unconditional_update(&self) -> bool {
        false
    }

    /// What kube's unstructured decoder refuses: metadata that is not an `ObjectMeta`,
    /// or an embedded resource whose `apiVersion`/`kind` is not a string.
    fn decode(&self, obj: &Value) -> Result<(), Undecodable> {
        use super::builtin::types::object_meta_error;
        let checked = match self.schema() {
            Some(schema) => schema.check_decode(obj, object_meta_error),
            None => obj.get("metadata").and_then(object_meta_error).map_or(Ok(()), Err),
        };
        checked.map_err(Undecodable)
    }

    /// kube converts an apply's merge with its schema coercer, which drops the metadata
    /// fields that do not decode (`DropMalformedFields`) where a decoded body fails.
    fn decode_and_default_applied(&self, obj: &mut Value) -> Result<Vec<String>, super::Undecodable> {
        use super::builtin::types::object_meta_error;
        if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.retain(|k, v| {
                let one = Value::Object(serde_json::Map::from_iter([(k.clone(), v.clone())]));
                object_meta_error(&one).is_none()
            });
        }
        match self.schema() {
            Some(schema) => {
                // An embedded resource's metadata is no field of a decoded struct here:
                // validation refuses one that is no `ObjectMeta` (a 422, where a body's
                // decoding answers 400).
                schema.check_decode(obj, |_| None).map_err(Undecodable)?;
                Ok(schema.prune_and_default_keeping_nulls(obj))
            }
            None => self.decode_and_default(obj),
        }
    }

    /// kube's schema coercer prunes and defaults only an object of the CRD's group and
    /// kind (a patch may have changed them), by the schema of the version it names; a
    /// version the CRD lacks has none, which keeps only the type and metadata. The
    /// metadata is coerced whatever the object is.
    fn prune_and_default(&self, obj: &mut Value) -> Vec<String> {
        let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or_default().to_string();
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", &api_version));
        let ours = group == self.info.group && obj.get("kind").and_then(Value::as_str) == Some(&self.info.kind);
        let schema = match version == self.info.version {
            true => self.schema(),
            false => self.versions.stored_schemas.iter().find(|(gv, _)| **gv == *api_version).map(|(_, s)| s.as_ref()),
        };
        if let (true, Some(schema)) = (ours, schema) {
            return schema.prune_and_default(obj);
        }
        let mut unknown = Vec::new();
        if let Some(meta) = obj.get_mut("metadata") {
            object_meta::coerce(meta, "metadata", &mut unknown);
        }
        if ours
            && version != self.info.version
            && !self.preserve_unknown_fields
            && let Some(map) = obj.as_object_mut()
        {
            let mut pruned: Vec<String> =
                map.keys().filter(|k| !matches!(k.as_str(), "apiVersion" | "kind" | "metadata")).cloned().collect();
            map.retain(|k, _| matches!(k.as_str(), "apiVersion" | "kind" | "metadata"));
            pruned.sort();
            unknown.extend(pruned);
        }
        unknown
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        if self.info.status_subresource
            && let Some(map) = obj.as_object_mut()
        {
            map.remove("status");
        }
    }

    fn validate_create(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = self.validate_type_meta(obj);
        if !errs.is_empty() {
            return errs;
        }
        errs.extend(validate_object_meta(
            metadata_of(obj),
            self.info.namespaced,
            name_is_dns_subdomain,
            &Path::root("metadata"),
        ));
        self.validate_schema(obj, None, false, &mut errs);
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        self.validate_any_update(new, old, false)
    }

    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        finalizer_warnings(obj, None)
    }

    fn warnings_on_update(&self, new: &Value, old: &Value) -> Vec<String> {
        finalizer_warnings(new, Some(old))
    }

    /// kube's status strategy validates the whole object too (metadata, `.status` values,
    /// rules), but in 1.32 ratchets nothing: unchanged invalid values are errors here.
    fn validate_status_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        self.validate_any_update(new, old, true)
    }
}

/// Finalizers kube's own controllers run, which need no domain.
const STANDARD_FINALIZERS: [&str; 3] = ["kubernetes", "orphan", "foregroundDeletion"];

/// apiextensions' warnings for the finalizers `new` adds to `old` (all of them on a
/// create), in name order: one without a domain may clash with another writer's.
fn finalizer_warnings(new: &Value, old: Option<&Value>) -> Vec<String> {
    use std::collections::BTreeSet;
    let before: BTreeSet<String> = old.map(crate::meta::finalizers).unwrap_or_default().into_iter().collect();
    let added: BTreeSet<String> = crate::meta::finalizers(new).into_iter().filter(|f| !before.contains(f)).collect();
    added
        .into_iter()
        .filter(|f| !f.contains('/') && !STANDARD_FINALIZERS.contains(&f.as_str()))
        .map(|f| {
            format!(
                "metadata.finalizers: {}: prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers",
                crate::field::go_quote(&f)
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The oracle's warnings: a create names every finalizer without a domain but kube's
    /// own, in name order; an update only those it adds.
    #[test]
    fn finalizers_without_a_domain_are_warned_of_when_added() {
        let with = |f: Value| json!({"metadata": {"finalizers": f}});
        let warning = |f: &str| {
            format!(
                "metadata.finalizers: \"{f}\": prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers"
            )
        };
        let created = with(json!(["g", "kubernetes", "example.com/f", "f", "orphan", "foregroundDeletion", "g"]));
        assert_eq!(finalizer_warnings(&created, None), [warning("f"), warning("g")]);
        let updated = with(json!(["f", "h", "example.com/f"]));
        assert_eq!(finalizer_warnings(&updated, Some(&created)), [warning("h")]);
        assert!(finalizer_warnings(&with(json!(["example.com/a"])), None).is_empty());
    }

    fn strategy(schema: Value) -> CustomResourceStrategy {
        let crd: CustomResourceDefinition = serde_json::from_value(json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.stable.example.com", "uid": format!("test-{}", crate::meta::new_uid()), "generation": 1},
            "spec": {"group": "stable.example.com", "scope": "Namespaced",
                     "names": {"plural": "widgets", "kind": "Widget"},
                     "versions": [{"name": "v1", "served": true, "storage": true,
                                   "schema": {"openAPIV3Schema": schema}, "subresources": {"status": {}}}]},
            "status": {"acceptedNames": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"}}
        }))
        .expect("crd");
        CustomResourceStrategy::new(&crd, &crd.spec.versions[0], SchemaSource::Typed)
    }

    #[test]
    fn the_schema_cache_sweeps_dead_schemas_as_it_doubles_and_keeps_live_ones() {
        let props = crate::registry::fixtures::schema(json!({"type": "object"}));
        let key = |i: usize| SchemaKey { crd: format!("crd-{i}"), version: "v1".into() };
        let live: Vec<Arc<Schema>> = (0..40).map(|_| Arc::new(Schema::lazy(&props))).collect();
        let mut cache = SchemaCache::default();
        for (i, schema) in live.iter().enumerate() {
            cache.insert(key(i), 1, schema, 1);
        }
        // Schemas dropped as soon as they are cached (their CRDs' kinds replaced).
        for i in live.len()..2_000 {
            cache.insert(key(i), 1, &Arc::new(Schema::lazy(&props)), 1);
            assert!(cache.by_key.len() <= 2 * live.len().max(SchemaCache::SWEEP_FROM / 2), "{i}: not swept");
        }
        for (i, schema) in live.iter().enumerate() {
            let held = cache.by_key.get(&key(i)).and_then(|(_, weak, _)| weak.upgrade());
            assert!(held.is_some_and(|h| Arc::ptr_eq(&h, schema)), "live schema {i} kept");
        }
    }

    fn widget(spec: Value) -> Value {
        json!({"apiVersion": "stable.example.com/v1", "kind": "Widget",
               "metadata": {"name": "w1", "namespace": "default", "generation": 1}, "spec": spec})
    }

    fn schema() -> Value {
        json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "size": {"type": "integer", "maximum": 10},
            "color": {"type": "string", "enum": ["red", "green", "blue"], "default": "red"}
        }}}})
    }

    fn strings(errs: &[FieldError]) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn create_collects_metadata_and_schema_errors() {
        let s = strategy(schema());
        let mut obj = widget(json!({"size": 42, "color": "purple"}));
        obj["metadata"]["name"] = json!("Bad");
        let errs = strings(&s.validate_create(&obj));
        assert_eq!(errs.len(), 3);
        assert!(errs[0].starts_with("metadata.name: Invalid value: \"Bad\": a lowercase RFC 1123 subdomain"));
        assert!(
            errs.contains(&"spec.size: Invalid value: 42: spec.size in body should be less than or equal to 10".into())
        );
        assert!(errs.contains(
            &"spec.color: Unsupported value: \"purple\": supported values: \"red\", \"green\", \"blue\"".into()
        ));
        assert!(s.validate_create(&widget(json!({"size": 3}))).is_empty());
    }

    #[test]
    fn decoding_prunes_defaults_and_refuses_bad_metadata() {
        let s = strategy(schema());
        let mut obj = widget(json!({"size": 1, "shape": "round"}));
        assert_eq!(s.prune_and_default(&mut obj), ["spec.shape"]);
        assert_eq!(obj["spec"], json!({"size": 1, "color": "red"}));
        let mut bad = widget(json!({}));
        bad["metadata"]["labels"] = json!("x");
        let err = s.undecodable_body(&s.decode(&bad).expect_err("labels must be a map"));
        assert_eq!(err.code, 400);
        assert!(err.message.starts_with("Widget in version \"v1\" cannot be handled as a Widget: "), "{}", err.message);
    }

    #[test]
    fn updates_ratchet_and_repeat_metadata_errors_as_kube_does() {
        let s = strategy(schema());
        let old = widget(json!({"size": 42}));
        assert!(s.validate_update(&old, &old).is_empty());
        let mut new = widget(json!({"size": 43}));
        new["metadata"]["labels"] = json!({"-bad": "x"});
        // The strategy's update check reports the label once more after the registry's two
        // (`Rest::common_update_errors`).
        let errs = strings(&s.validate_update(&new, &old));
        assert_eq!(errs.len(), 2, "{errs:?}");
        assert!(errs[0].starts_with("metadata.labels: Invalid value: \"-bad\""));
        assert_eq!(errs[1], "spec.size: Invalid value: 43: spec.size in body should be less than or equal to 10");
        // /status checks `.status` alone against the schema.
        let errs = strings(&s.validate_status_update(&new, &old));
        assert_eq!(errs.len(), 1, "{errs:?}");
    }

    #[test]
    fn schemas_are_compiled_once_per_generation() {
        let s1 = strategy(schema());
        let crd: CustomResourceDefinition = serde_json::from_value(json!({
            "metadata": {"name": "x.example.com", "uid": "fixed-uid-for-cache-test", "generation": 4},
            "spec": {"group": "example.com", "scope": "Cluster", "names": {"plural": "x", "kind": "X"},
                     "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": schema()}}]}
        }))
        .expect("crd");
        let a = CustomResourceStrategy::new(&crd, &crd.spec.versions[0], SchemaSource::Typed);
        let b = CustomResourceStrategy::new(&crd, &crd.spec.versions[0], SchemaSource::Typed);
        assert!(Arc::ptr_eq(a.schema.as_ref().expect("schema"), b.schema.as_ref().expect("schema")));
        assert!(s1.schema().is_some());
    }

    /// Versions with the same schema share one; a version with another schema has its own,
    /// and each validates by its own — the schemas read from the typed CRD, or from its
    /// JSON for a CRD typed without them (as the CRD controller publishes).
    #[test]
    fn versions_with_the_same_schema_share_one() {
        let other = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "size": {"type": "integer", "maximum": 3}}}}});
        let version = |name: &str, schema: serde_json::Value| json!({"name": name, "served": true, "storage": name == "v1", "schema": {"openAPIV3Schema": schema}});
        for from_json in [false, true] {
            let stored = json!({
                "metadata": {"name": "y.example.com", "uid": format!("uid-of-the-shared-schema-test-{from_json}"), "generation": 2},
                "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "y", "kind": "Y"},
                         "versions": [version("v1", schema()), version("v1beta2", schema()), version("v1beta1", other.clone())]},
                "status": {"acceptedNames": {"plural": "y", "kind": "Y"}}
            });
            let mut crd: CustomResourceDefinition = serde_json::from_value(stored.clone()).expect("crd");
            let source = if from_json {
                crd.spec.versions.iter_mut().for_each(|v| v.schema = None);
                SchemaSource::Stored(&stored)
            } else {
                SchemaSource::Typed
            };
            let kinds: Vec<CustomResourceStrategy> =
                crd.spec.versions.iter().map(|v| CustomResourceStrategy::new(&crd, v, source)).collect();
            versions_validate_by_their_own_schemas(&kinds);
        }
    }

    fn versions_validate_by_their_own_schemas(kinds: &[CustomResourceStrategy]) {
        let schema_of = |i: usize| kinds[i].schema.as_ref().expect("schema");
        assert!(Arc::ptr_eq(schema_of(0), schema_of(1)), "v1 and v1beta2 share their schema");
        assert!(!Arc::ptr_eq(schema_of(0), schema_of(2)));
        let y = |version: &str| {
            json!({"apiVersion": format!("example.com/{version}"), "kind": "Y",
                   "metadata": {"name": "y1", "namespace": "default"}, "spec": {"size": 5}})
        };
        let errs = strings(&kinds[1].validate_create(&y("v1beta2")));
        assert!(errs.is_empty(), "v1beta2 allows up to 10: {errs:?}");
        let errs = strings(&kinds[2].validate_create(&y("v1beta1")));
        assert_eq!(errs, ["spec.size: Invalid value: 5: spec.size in body should be less than or equal to 3"]);
    }

    #[test]
    fn schemas_are_compiled_on_first_use_and_dropped_with_their_kinds() {
        let s = strategy(schema());
        let compiled = Arc::clone(s.schema.as_ref().expect("schema"));
        assert!(!compiled.is_compiled(), "serving a kind compiles nothing");
        let errs = strings(&s.validate_create(&widget(json!({"size": 42}))));
        assert_eq!(errs, ["spec.size: Invalid value: 42: spec.size in body should be less than or equal to 10"]);
        assert!(compiled.is_compiled());
        let held = Arc::downgrade(&compiled);
        drop((compiled, s));
        assert!(held.upgrade().is_none(), "the cache keeps no schema of a kind no longer served");
    }

    #[test]
    fn several_versions_are_served_apart_and_stored_at_the_storage_version() {
        let crd: CustomResourceDefinition = serde_json::from_value(json!({
            "metadata": {"name": "dbs.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "dbs", "kind": "Db"},
                     "versions": [{"name": "v1beta1", "served": true, "storage": false},
                                  {"name": "v1", "served": true, "storage": true}]}
        }))
        .expect("crd");
        let conversion =
            |i: usize| CustomResourceStrategy::new(&crd, &crd.spec.versions[i], SchemaSource::Typed).versions;
        let beta = conversion(0);
        assert_eq!((&*beta.served, &*beta.storage), ("example.com/v1beta1", "example.com/v1"));
        assert_eq!(conversion(1).served, "example.com/v1".into());
        assert!(beta.listed.lists("example.com/v1") && !beta.listed.lists("example.com/v2"));
        let single = strategy(schema());
        let single = single.version_conversion().expect("a single version has one too");
        assert_eq!(single.served, single.storage, "it is served as stored");
    }
}
