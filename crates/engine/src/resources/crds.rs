//! apiextensions.k8s.io/v1 CustomResourceDefinitions as a kind: the strategy that ties
//! the registry's pure rules (defaults, validation) to the generic verbs.

use super::builtin::meta_update_errors;
use super::crd_schemas;
use super::managed_fields::schema::Schema;
use super::rest::{DeleteOptions, deletion_finalizers};
use super::{ResourceInfo, Strategy};
use crate::field::FieldError;
use crate::meta;
use crate::registry::{conditions, defaults, validation};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceDefinitionStatus,
};
use k8s_openapi::jiff::Timestamp;
use serde::Deserialize;
use serde_json::Value;
use std::sync::{Arc, LazyLock};

/// The finalizer that holds a CRD until its custom resources are gone.
pub const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

pub struct CrdStrategy {
    info: ResourceInfo,
}

impl Default for CrdStrategy {
    fn default() -> Self {
        CrdStrategy {
            info: ResourceInfo {
                group: "apiextensions.k8s.io".into(),
                version: "v1".into(),
                plural: "customresourcedefinitions".into(),
                singular: "customresourcedefinition".into(),
                kind: "CustomResourceDefinition".into(),
                list_kind: "CustomResourceDefinitionList".into(),
                namespaced: false,
                short_names: vec!["crd".into(), "crds".into()],
                categories: vec!["api-extensions".into()],
                status_subresource: true,
            },
        }
    }
}

/// Reads a CRD object; `None` when it does not decode. Read from the borrowed JSON: a
/// copy of a 40 KiB CRD first cost as much as the read.
pub fn typed(obj: &Value) -> Option<CustomResourceDefinition> {
    CustomResourceDefinition::deserialize(obj).ok()
}

/// A CRD object read as the decoder reads a body, with the decoder's complaint: in Go's
/// words where a value has the wrong type (`json: cannot unmarshal string into Go struct
/// field JSONSchemaProps.spec.versions.schema.openAPIV3Schema.maxLength of type int64`,
/// which says where), else serde's.
/// The Go structs are asked first: the typed model takes some values Go refuses (any JSON
/// for the empty struct `subresources.status`).
fn decoded(obj: &Value) -> Result<CustomResourceDefinition, super::Undecodable> {
    // Go's decoder words a time that does not parse itself (`parsing time "" as ...`), as it
    // does for every built-in kind; the typed model's own words would be jiff's.
    if let Some(go) = super::crd_struct::CUSTOM_RESOURCE_DEFINITION.decode_error(obj) {
        return Err(super::Undecodable(go));
    }
    CustomResourceDefinition::deserialize(obj).map_err(|e| super::Undecodable(e.to_string()))
}

/// Writes a typed CRD back over a JSON object, keeping the JSON's metadata (the typed
/// round trip would drop fields a newer client sent), moved rather than copied: its
/// managedFields mirror the whole spec.
fn write_back(obj: &mut Value, crd: &CustomResourceDefinition) {
    let Ok(Value::Object(mut typed)) = serde_json::to_value(crd) else { return };
    // The typed spec has no nil list: a missing `versions` stays missing, for validation
    // to quote it as Go's nil slice.
    if validation::Sent::of(obj).versions_nil
        && let Some(spec) = typed.get_mut("spec").and_then(Value::as_object_mut)
        && spec.get("versions").and_then(Value::as_array).is_some_and(Vec::is_empty)
    {
        spec.remove("versions");
    }
    if let Some(meta) = obj.as_object_mut().and_then(|m| m.remove("metadata")) {
        typed.insert("metadata".into(), meta);
    }
    let mut typed = Value::Object(typed);
    // The typed CRD holds `minimum`, `maximum` and `multipleOf` as f64, written `10.0`
    // where Go writes `10`.
    schemas_mut(&mut typed).for_each(crd_schemas::settle);
    *obj = typed;
}

fn edit(obj: &mut Value, f: impl FnOnce(&mut CustomResourceDefinition)) {
    if let Some(mut crd) = typed(obj) {
        f(&mut crd);
        write_back(obj, &crd);
    }
}

/// [`edit`] for an object that already went through it ([`Strategy::prune_and_default`]
/// does, at decode time): the versions' schemas, nearly all of a large CRD's bytes, are
/// set aside rather than typed and written again, since the typed round trip gives back
/// what it wrote. `f` must not need them (defaults and the create preparation do not).
fn edit_light(obj: &mut Value, f: impl FnOnce(&mut CustomResourceDefinition)) {
    let schemas = take_schemas(obj);
    edit(obj, f);
    put_schemas(obj, schemas);
}

fn versions_mut(obj: &mut Value) -> Option<&mut Vec<Value>> {
    obj.get_mut("spec")?.get_mut("versions")?.as_array_mut()
}

/// Each version's `schema`, where there is one.
fn schemas_mut(obj: &mut Value) -> impl Iterator<Item = &mut Value> {
    versions_mut(obj).into_iter().flatten().filter_map(|v| v.get_mut("schema"))
}

/// Each version's `schema` object, taken out (a `null` stays: the round trip drops it).
fn take_schemas(obj: &mut Value) -> Vec<Option<Value>> {
    let Some(versions) = versions_mut(obj) else { return Vec::new() };
    let take = |v: &mut Value| {
        let map = v.as_object_mut()?;
        map.get("schema").is_some_and(Value::is_object).then(|| map.remove("schema")).flatten()
    };
    versions.iter_mut().map(take).collect()
}

/// What [`crd_schemas::empty_collections_refused`] finds, version by version.
fn empty_collections_refused(obj: &Value) -> Vec<Vec<crd_schemas::EmptyCollection>> {
    let versions = obj.pointer("/spec/versions").and_then(Value::as_array);
    versions.into_iter().flatten().map(crd_schemas::empty_collections_refused).collect()
}

/// Puts back, version by version, what [`crd_schemas::empty_collections_refused`] found.
fn put_empty_collections(obj: &mut Value, found: Vec<Vec<crd_schemas::EmptyCollection>>) {
    let Some(versions) = versions_mut(obj) else { return };
    for (version, found) in versions.iter_mut().zip(found) {
        for empty in found {
            if let Some(Value::Object(node)) = version.pointer_mut(&empty.node) {
                node.insert(empty.key, empty.value);
            }
        }
    }
}

/// Puts back what [`take_schemas`] took, version by version.
fn put_schemas(obj: &mut Value, schemas: Vec<Option<Value>>) {
    let Some(versions) = versions_mut(obj) else { return };
    for (version, schema) in versions.iter_mut().zip(schemas) {
        if let (Some(map), Some(schema)) = (version.as_object_mut(), schema) {
            map.insert("schema".into(), schema);
        }
    }
}

impl Strategy for CrdStrategy {
    fn info(&self) -> &ResourceInfo {
        &self.info
    }

    /// apiextensions-apiserver's CRD store quotes its keys without the `/registry` root.
    fn precondition_key_prefix(&self) -> String {
        format!("/{}/{}/", self.info.group, self.info.plural)
    }

    /// kube's strategy answers `AllowUnconditionalUpdate` with false: an update names
    /// the resourceVersion it replaces.
    fn allows_unconditional_update(&self) -> bool {
        false
    }

    /// kube's CRD REST marks a CRD on its first delete without the garbage collector's
    /// finalizers; only a later delete, passed on to the generic store, sets them.
    fn deletion_finalizers(&self, obj: &Value, delete: &DeleteOptions) -> Option<Vec<String>> {
        meta::deletion_timestamp(obj)?;
        deletion_finalizers(&meta::finalizers(obj), delete.propagation)
    }

    /// kube's CRD strategy selects on `ObjectMetaFieldsSet(meta, true)`: a CRD has a
    /// `metadata.namespace` to select on (always empty) though it is cluster-scoped.
    fn selectable_fields(&self) -> Vec<String> {
        vec!["metadata.name".into(), "metadata.namespace".into()]
    }

    /// The apiextensions scheme registers no field label conversion for CRDs.
    fn unsupported_field_label(&self, field: &str) -> String {
        super::default_field_label_refusal(field)
    }

    fn own_delete_preconditions(&self) -> bool {
        true
    }

    /// A CRD always waits for the clean-up of its custom resources.
    fn defers_deletion(&self, _obj: &Value) -> bool {
        true
    }

    /// kube's CRD REST Delete: a deletionTimestamp, the clean-up finalizer and a
    /// `Terminating` condition (InstanceDeletionPending) in one write; no grace period
    /// and no new generation (reference 66).
    fn prepare_for_deletion(&self, obj: &mut Value, now: Timestamp) {
        meta::metadata_mut(obj).insert("deletionTimestamp".into(), Value::from(meta::format_time(now)));
        let mut finalizers = meta::finalizers(obj);
        if !finalizers.iter().any(|f| f == CLEANUP_FINALIZER) {
            finalizers.push(CLEANUP_FINALIZER.to_string());
            meta::set_finalizers(obj, &finalizers);
        }
        edit(obj, |crd| {
            let status = crd.status.get_or_insert_with(Default::default);
            conditions::set_status_condition(
                status,
                conditions::condition(
                    conditions::TERMINATING,
                    conditions::STATUS_TRUE,
                    conditions::reason::INSTANCE_DELETION_PENDING,
                    conditions::message::INSTANCE_DELETION_PENDING,
                ),
                now,
            );
        });
    }

    /// kube defaults a CRD while decoding it, so the defaults (`conversion`, `listKind`,
    /// `singular`) are in the object its managedFields are computed from (reference 07:
    /// the creator owns `f:conversion`).
    /// Decoding drops (and reports) what the Go struct lacks, then defaults.
    fn prune_and_default(&self, obj: &mut Value) -> Vec<String> {
        let refused = empty_collections_refused(obj);
        let dropped = super::crd_struct::CUSTOM_RESOURCE_DEFINITION.prune(obj);
        edit(obj, defaults::apply_defaults);
        put_empty_collections(obj, refused);
        dropped
    }

    /// As the two hooks, reading the CRD once when pruning dropped nothing (it drops only
    /// what it reports, so the object decoded is then the one to default).
    fn decode_and_default(&self, obj: &mut Value) -> Result<Vec<String>, super::Undecodable> {
        // The schemas, nearly all of a large CRD's bytes, are checked and settled where they
        // are (`crd_schemas`) rather than typed, written back and dropped; the rest is typed
        // as the decode types it, before pruning (k8s-openapi knows fields kube 1.32 lacks).
        let refused = empty_collections_refused(obj);
        let schemas = take_schemas(obj);
        // The typed model takes some values Go's structs refuse (see `decoded`); asked
        // without the schemas, the structs cost little.
        let light = typed(obj).filter(|_| super::crd_struct::CUSTOM_RESOURCE_DEFINITION.type_error(obj).is_none());
        let sure = light.is_some() && schemas.iter().flatten().all(crd_schemas::decodes);
        put_schemas(obj, schemas);
        if !sure {
            // What Go's decoder ignores goes; then the whole typed says why (or that the
            // check was only unsure).
            schemas_mut(obj).for_each(crd_schemas::drop_ignored);
            super::crd_struct::CUSTOM_RESOURCE_DEFINITION.zero_null_items(obj);
            decoded(obj)?;
        }
        let dropped = super::crd_struct::CUSTOM_RESOURCE_DEFINITION.prune(obj);
        let mut schemas = take_schemas(obj);
        let pruned = if dropped.is_empty() { light } else { typed(obj) };
        if let Some(mut crd) = pruned {
            defaults::apply_defaults(&mut crd);
            write_back(obj, &crd);
            // The typed CRD writes back the empty values Go's encoder leaves out (it was
            // typed before they were dropped); without its schemas this walk is short.
            super::crd_struct::CUSTOM_RESOURCE_DEFINITION.prune(obj);
            schemas.iter_mut().flatten().for_each(crd_schemas::settle);
        }
        put_schemas(obj, schemas);
        put_empty_collections(obj, refused);
        Ok(dropped)
    }

    /// Go's zero CustomResourceDefinition through kube's converter: the spec fields
    /// without `omitempty` are there, empty, so a create owns `f:spec` and `f:names`
    /// without `"."` entries but the defaulted `f:conversion` with one (reference 07).
    fn zero_object(&self) -> Value {
        serde_json::json!({
            "apiVersion": self.info.api_version(), "kind": self.info.kind,
            "spec": {"group": "", "names": {"plural": "", "kind": ""}, "scope": "", "versions": null},
            "status": {"acceptedNames": {"plural": "", "kind": ""}, "storedVersions": null}
        })
    }

    fn field_types(&self) -> Option<Arc<Schema>> {
        static TYPES: LazyLock<Arc<Schema>> =
            LazyLock::new(|| Arc::new(super::crd_struct::CUSTOM_RESOURCE_DEFINITION.schema()));
        Some(Arc::clone(&TYPES))
    }

    /// A CRD's `/status` keeps the metadata as sent, but owns none of it.
    fn status_reset_fields(&self) -> &'static [&'static str] {
        &["spec", "metadata"]
    }

    fn go_struct(&self) -> Option<&'static super::builtin::types::GoStruct> {
        Some(&super::crd_struct::CUSTOM_RESOURCE_DEFINITION)
    }

    fn decode(&self, obj: &Value) -> Result<(), super::Undecodable> {
        decoded(obj).map(|_| ())
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        // Defaulting happens at decode time in kube-apiserver, before validation.
        edit_light(obj, |crd| {
            defaults::apply_defaults(crd);
            defaults::prepare_for_create(crd);
        });
        // Go's status has `conditions` without omitempty: a new CRD answers
        // `"conditions": null` (references 06 and 09).
        if let Some(status) = obj.get_mut("status").and_then(Value::as_object_mut) {
            status.entry("conditions").or_insert(Value::Null);
        }
    }

    fn validate_create(&self, obj: &Value) -> Vec<FieldError> {
        typed(obj).map(|crd| validation::validate_crd_create(&crd, validation::Sent::of(obj))).unwrap_or_default()
    }

    /// A schema's values are validated as written (a default of `1.0` under `multipleOf:
    /// 0.5` is a valid float) and stored as Go writes them (`1`, which an update sending
    /// it back is refused for, as kube refuses it).
    fn canonicalize(&self, obj: &mut Value) {
        schemas_mut(obj).for_each(crd_schemas::store_numbers);
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        if let Some(old_crd) = typed(old) {
            edit(new, |crd| {
                defaults::apply_defaults(crd);
                defaults::prepare_for_update(crd, &old_crd);
            });
        }
    }

    /// The stored spec wins; metadata comes as sent (see `defaults::prepare_for_status_update`),
    /// so a status write may change labels, and a changed uid is refused, as in kube.
    /// A status write that sends the stored spec (the CRD controller's do) has nothing to
    /// take: `new` went through [`Strategy::prune_and_default`] already, which the typed
    /// round trip here would only repeat.
    fn prepare_for_status_update(&self, new: &mut Value, old: &Value) {
        if new.get("spec").is_some() && new.get("spec") == old.get("spec") {
            return;
        }
        if let Some(old_crd) = typed(old) {
            edit(new, |crd| defaults::prepare_for_status_update(crd, &old_crd));
        }
    }

    /// kube's `ValidateCustomResourceDefinitionUpdate`: the metadata update first.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = meta_update_errors(new, old);
        if let (Some(n), Some(o)) = (typed(new), typed(old)) {
            errs.extend(validation::validate_crd_update(&n, &o, validation::Sent::of(new)));
        }
        errs
    }

    fn validate_status_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = meta_update_errors(new, old);
        // Only the status is validated (kube's status strategy): only it is read.
        let status = match new.get("status") {
            None | Some(Value::Null) => Ok(None),
            Some(status) => CustomResourceDefinitionStatus::deserialize(status).map(Some),
        };
        if let Ok(status) = status {
            errs.extend(validation::validate_status(status.as_ref()));
        }
        errs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::fixtures::{VersionBuilder, widget};
    use serde_json::json;

    /// The Widget of reference 06 as a client sends it, with two versions and what only the
    /// typed round trip settles in their schemas: whole floats, a default and a `null`.
    fn body() -> Value {
        let v2 = VersionBuilder::new("v2").served(true).schema(json!({"type": "object"})).build();
        let mut crd = widget().build();
        crd.spec.versions.push(v2);
        let mut obj = serde_json::to_value(&crd).expect("JSON");
        let spec = obj.pointer_mut("/spec/versions/0/schema/openAPIV3Schema/properties/spec").expect("spec");
        spec["properties"]["size"]["maximum"] = json!(10.0);
        spec["properties"]["color"]["default"] = json!("red");
        spec["description"] = Value::Null;
        obj
    }

    /// A body whose schemas hold every shape the typed round trip changes or keeps: `null`s
    /// at each level, float64 fields given as integers, whole floats and huge integers, a
    /// CEL rule without `rule`, and schemas under every keyword that holds one.
    fn edges() -> Value {
        let node = json!({
            "type": "object", "description": null, "nullable": false, "maxLength": 5, "format": null,
            "minimum": 0, "maximum": 123456789012345678u64, "multipleOf": 0.5,
            "default": {"a": 1.0, "b": null, "c": [2.0, 2.5]}, "example": null, "enum": [null, 1.0, "x"],
            "required": [], "externalDocs": {"url": null, "description": "d"},
            "x-kubernetes-validations": [{"rule": "self.a > 0", "message": null}, {"message": "m"}, {"rule": null}],
            "x-kubernetes-list-map-keys": null,
        });
        let mut schema = node.clone();
        let map = schema.as_object_mut().expect("object");
        map.insert("properties".into(), json!({"p": node.clone(), "q": {}}));
        map.insert("patternProperties".into(), json!({"^x": node.clone()}));
        map.insert("definitions".into(), json!({"d": node.clone()}));
        map.insert("dependencies".into(), json!({"a": ["b"], "c": node.clone()}));
        map.insert("items".into(), json!([node.clone(), {"maximum": 2.0}]));
        map.insert("allOf".into(), json!([node.clone()]));
        map.insert("anyOf".into(), json!([{"minimum": 3.0}]));
        map.insert("oneOf".into(), json!([]));
        map.insert("not".into(), node.clone());
        map.insert("additionalItems".into(), json!(false));
        map.insert("additionalProperties".into(), json!({"items": node.clone(), "type": null}));
        let mut obj = body();
        obj["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = schema;
        obj["spec"]["versions"][1]["schema"] = json!({"openAPIV3Schema": null});
        obj
    }

    /// A body as the write path has it after decoding.
    fn decoded(mut obj: Value) -> Value {
        CrdStrategy::default().prune_and_default(&mut obj);
        obj
    }

    #[test]
    fn a_light_edit_of_a_decoded_crd_is_the_whole_round_trip() {
        let obj = decoded(body());
        assert_eq!(
            obj.pointer("/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/size/maximum"),
            Some(&json!(10))
        );
        let prepare = |crd: &mut CustomResourceDefinition| {
            defaults::apply_defaults(crd);
            defaults::prepare_for_create(crd);
            crd.spec.names.short_names = Some(vec!["w".into()]);
        };
        let (mut light, mut whole) = (obj.clone(), obj.clone());
        edit_light(&mut light, prepare);
        edit(&mut whole, prepare);
        assert_eq!(light, whole);
        assert_eq!(light.pointer("/spec/names/shortNames"), Some(&json!(["w"])));
        assert!(light.pointer("/spec/versions/1/schema/openAPIV3Schema").is_some());
    }

    #[test]
    fn decoding_and_defaulting_at_once_is_the_two_steps() {
        let strategy = CrdStrategy::default();
        let mut unknown = body();
        unknown["spec"]["bogus"] = json!(1);
        unknown["spec"]["versions"][0]["bogus"] = json!(true);
        let mut undecodable = body();
        undecodable["spec"]["versions"][0]["served"] = json!("yes");
        let mut unknown_in_schema = edges();
        unknown_in_schema["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["bogus"] = json!(1);
        let mut undecodable_schema = edges();
        undecodable_schema["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["maxLength"] = json!(1.5);
        assert_eq!(strategy.decode(&edges()).map_err(|e| e.0), Ok(()), "the edges decode");
        assert!(strategy.decode(&undecodable_schema).is_err());
        for sent in [body(), unknown, undecodable, edges(), unknown_in_schema, undecodable_schema] {
            let mut steps = sent.clone();
            let expected = strategy.decode(&steps).map(|()| strategy.prune_and_default(&mut steps));
            let mut at_once = sent.clone();
            let answer = strategy.decode_and_default(&mut at_once);
            assert_eq!(answer.as_ref().map_err(|e| &e.0), expected.as_ref().map_err(|e| &e.0));
            assert_eq!(at_once, steps);
        }
    }

    #[test]
    fn a_light_edit_sets_the_schemas_aside() {
        // Not decoded: a whole float the typed round trip would write as an integer.
        let mut obj = body();
        edit_light(&mut obj, |_| {});
        let maximum = "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/size/maximum";
        assert_eq!(obj.pointer(maximum), Some(&json!(10.0)));
        edit(&mut obj, |_| {});
        assert_eq!(obj.pointer(maximum), Some(&json!(10)));
    }

    /// What the status strategy made before it compared specs: the typed round trip of the
    /// new object with the stored spec.
    fn typed_status_update(new: &Value, old: &Value) -> Value {
        let mut expected = new.clone();
        let old_crd = typed(old).expect("typed");
        edit(&mut expected, |crd| defaults::prepare_for_status_update(crd, &old_crd));
        expected
    }

    #[test]
    fn a_status_write_keeps_the_stored_spec_as_the_typed_strategy_does() {
        let strategy = CrdStrategy::default();
        let mut old = decoded(body());
        strategy.prepare_for_create(&mut old);
        let mut sent = old.clone();
        sent["status"]["acceptedNames"] = json!({"plural": "widgets", "kind": "Widget"});
        let mut other_spec = sent.clone();
        other_spec["spec"]["names"]["shortNames"] = json!(["other"]);
        for sent in [sent, other_spec] {
            let new = decoded(sent);
            let mut written = new.clone();
            strategy.prepare_for_status_update(&mut written, &old);
            assert_eq!(written, typed_status_update(&new, &old));
            assert_eq!(written["spec"], old["spec"]);
            assert_eq!(written["status"]["acceptedNames"]["kind"], "Widget");
        }
    }

    #[test]
    fn a_status_write_validates_the_accepted_names() {
        let strategy = CrdStrategy::default();
        let old = decoded(body());
        let mut new = old.clone();
        new["status"] = json!({"acceptedNames": {"plural": "Bad_Plural", "kind": "Widget"}});
        let errors = strategy.validate_status_update(&new, &old);
        assert!(errors.iter().any(|e| e.field == "status.acceptedNames.plural"), "{errors:?}");
        new["status"] = json!({"acceptedNames": {"plural": "widgets", "kind": "Widget"}});
        assert_eq!(strategy.validate_status_update(&new, &old), Vec::new());
    }

    #[test]
    fn a_crd_selects_on_an_empty_namespace_and_refuses_other_fields_in_meta_words() {
        let strategy = CrdStrategy::default();
        assert_eq!(strategy.selectable_fields(), ["metadata.name", "metadata.namespace"]);
        assert_eq!(
            strategy.unsupported_field_label("spec.group"),
            "\"spec.group\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
        );
    }
}
