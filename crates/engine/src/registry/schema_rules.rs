//! The rules on one `openAPIV3Schema` beyond structurality (Go's
//! `validateCustomResourceDefinitionValidation` and `ValidateCustomResourceDefinitionOpenAPISchema`):
//! the OpenAPI subset kube supports, the Kubernetes list/map extensions, the static part of
//! `x-kubernetes-validations`, and the root restrictions that let a schema be projected to
//! `.status` when the status subresource is on.
//!
//! The order of errors follows kube: root restrictions, then structural errors, then the
//! per-node rules; `NewStructural`'s refusal is only shown when nothing else was found,
//! because the per-node rules already explain the same problem better.

use crate::field::{FieldError, Path};
use crate::registry::schema_cel::{Cardinality, RuleCosts, RuleSite, compiled_rules, validation_rules};
use crate::registry::schema_walk::{OPENAPI_TYPES, flag, item_schema, list_map_keys, text};
use crate::registry::structural::{new_structural_error, validate_structural};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceValidation, JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
    JSONSchemaPropsOrStringArray,
};
use serde_json::Value;

/// Which ratcheted rules apply (all on create; on update some only if the old object met them).
#[derive(Debug, Clone, Copy)]
pub struct SchemaOptions {
    pub require_structural: bool,
    pub require_valid_property_type: bool,
    pub require_atomic_set_type: bool,
    pub require_map_list_keys_map_set_validation: bool,
    /// The version's schema is unchanged by an update: rules over the per-rule cost budget
    /// stay (the schema's total still counts).
    pub suppress_expression_cost: bool,
}

/// kube prints its Go field list with `%v`.
const ALLOWED_AT_ROOT: &str = "[Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations]";

/// With `/status` on, the root may only hold fields that survive projecting the schema to
/// `properties.status`. Fields are visited in the Go struct's order; the first offender ends
/// the check, as in kube. Returns `Err(type)` for a non-object root type.
fn first_root_offender(s: &JSONSchemaProps) -> Option<Result<(), String>> {
    let type_ = text(&s.type_);
    // ID, $schema, $ref come before Type in the Go struct.
    if !text(&s.id).is_empty() || !text(&s.schema).is_empty() || s.ref_path.is_some() {
        return Some(Ok(()));
    }
    if !type_.is_empty() && type_ != "object" {
        return Some(Err(type_.to_string()));
    }
    let disallowed = flag(s.nullable)
        || s.default.is_some()
        || s.enum_.is_some()
        || s.max_properties.is_some()
        || s.min_properties.is_some()
        || s.all_of.is_some()
        || s.one_of.is_some()
        || s.any_of.is_some()
        || s.not.is_some()
        || s.additional_properties.is_some()
        || s.pattern_properties.is_some()
        || s.dependencies.is_some()
        || s.additional_items.is_some()
        || s.definitions.is_some()
        || flag(s.x_kubernetes_embedded_resource)
        || flag(s.x_kubernetes_int_or_string)
        || s.x_kubernetes_list_map_keys.is_some()
        || s.x_kubernetes_list_type.is_some()
        || s.x_kubernetes_map_type.is_some();
    disallowed.then_some(Ok(()))
}

/// Validates one `schema` field (`path` is `spec.validation` or `spec.versions[i].schema`).
pub fn validate_validation(
    validation: Option<&CustomResourceValidation>,
    status_enabled: bool,
    opts: SchemaOptions,
    path: &Path,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(schema) = validation.and_then(|v| v.open_api_v3_schema.as_ref()) else {
        return errs;
    };
    let root = path.child("openAPIV3Schema");
    if status_enabled {
        match first_root_offender(schema) {
            Some(Err(type_)) => errs.push(FieldError::invalid(
                path.child("openAPIV3Schema.type"),
                type_,
                "only \"object\" is allowed as the type at the root of the schema if the status subresource is enabled",
            )),
            Some(Ok(())) => errs.push(FieldError::invalid_shown(
                &root,
                &super::gostring::schema_props(schema),
                &format!("only {ALLOWED_AT_ROOT} fields are allowed at the root of the schema if the status subresource is enabled"),
            )),
            None => {}
        }
    }
    if flag(schema.nullable) {
        errs.push(FieldError::forbidden(path.child("openAPIV3Schema.nullable"), "nullable cannot be true at the root"));
    }
    let mut init_errs = Vec::new();
    // Rules are compiled only against a structural schema whose defaults are valid (kube's
    // CEL context exists only then).
    let mut compile_rules = false;
    if opts.require_structural {
        match new_structural_error(schema) {
            Some(e) => init_errs.push(FieldError::invalid(&root, "", e)),
            None => {
                let structural = validate_structural(&root, schema);
                if structural.is_empty() {
                    let before = errs.len();
                    super::schema_defaults::validate_root(schema, &root, &mut errs);
                    compile_rules = errs.len() == before;
                }
                errs.extend(structural);
            }
        }
    }
    let ctx = Ctx {
        allow_defaults: true,
        disallow_reason: String::new(),
        inside_resource_meta: false,
        opts,
        compile_rules,
        cardinality: Some(Cardinality::ROOT),
        uncorrelatable: None,
    };
    let mut costs = RuleCosts::default();
    let mut found = NodeErrors::default();
    openapi_schema(schema, &root, &ctx, true, &mut costs, &mut found);
    errs.extend(found.schema);
    errs.extend(found.cel);
    if errs.is_empty() {
        errs = init_errs;
    }
    if compile_rules {
        errs.extend(costs.errors(&root));
    }
    errs
}

/// kube's `OpenAPISchemaErrorList`: the schema's own errors, then those of its rules'
/// compilation, which only runs on nodes whose subtree has no schema error.
#[derive(Default)]
struct NodeErrors {
    schema: Vec<FieldError>,
    cel: Vec<FieldError>,
}

/// Go's `specStandardValidatorV3` state, copied on the way down.
#[derive(Clone)]
struct Ctx {
    allow_defaults: bool,
    disallow_reason: String,
    inside_resource_meta: bool,
    opts: SchemaOptions,
    compile_rules: bool,
    /// How often the node's rules can run; `None` where kube has no CEL context (under
    /// `allOf`, `anyOf`, `oneOf`, `not`): their rules are not compiled.
    cardinality: Option<Cardinality>,
    /// The highest ancestor whose old and new values cannot be correlated (the items of
    /// a list that is not a map list): `oldSelf` cannot be used below it.
    uncorrelatable: Option<Path>,
}

impl Ctx {
    fn forbid_defaults(&self, reason: String) -> Ctx {
        Ctx { allow_defaults: false, disallow_reason: reason, ..self.clone() }
    }

    /// The context of a child of `parent` (a property, the items, the map values).
    fn child_of(&self, parent: &JSONSchemaProps) -> Ctx {
        Ctx { cardinality: self.cardinality.map(|c| c.child(parent)), ..self.clone() }
    }

    /// The context of a schema kube validates without CEL context.
    fn without_cel(&self) -> Ctx {
        Ctx { cardinality: None, ..self.clone() }
    }

    /// Forbids `oldSelf` below `path` unless an ancestor already did (that one is named).
    fn uncorrelatable_below(mut self, path: &Path) -> Ctx {
        self.uncorrelatable.get_or_insert_with(|| path.clone());
        self
    }
}

/// The OpenAPI subset kube accepts, at one node.
fn node_rules(s: &JSONSchemaProps, path: &Path, ctx: &Ctx, errs: &mut Vec<FieldError>) {
    let type_ = text(&s.type_);
    if ctx.opts.require_valid_property_type && !type_.is_empty() && !OPENAPI_TYPES.contains(&type_) {
        errs.push(FieldError::not_supported(path.child("type"), type_, &OPENAPI_TYPES));
    }
    if s.default.is_some() && !ctx.allow_defaults {
        let detail = match ctx.disallow_reason.as_str() {
            "" => "must not be set".to_string(),
            reason => format!("must not be set {reason}"),
        };
        errs.push(FieldError::forbidden(path.child("default"), detail));
    }
    let mut forbid = |cond: bool, field: &str, detail: &str| {
        if cond {
            errs.push(FieldError::forbidden(path.child(field), detail));
        }
    };
    forbid(!text(&s.id).is_empty(), "id", "id is not supported");
    forbid(s.additional_items.is_some(), "additionalItems", "additionalItems is not supported");
    forbid(
        s.pattern_properties.as_ref().is_some_and(|m| !m.is_empty()),
        "patternProperties",
        "patternProperties is not supported",
    );
    forbid(s.definitions.as_ref().is_some_and(|m| !m.is_empty()), "definitions", "definitions is not supported");
    forbid(s.dependencies.is_some(), "dependencies", "dependencies is not supported");
    forbid(s.ref_path.is_some(), "$ref", "$ref is not supported");
    forbid(type_ == "null", "type", "type cannot be set to null, use nullable as an alternative");
    let items_array = matches!(&s.items, Some(JSONSchemaPropsOrArray::Schemas(list)) if !list.is_empty());
    forbid(items_array, "items", "items must be a schema object and not an array");
    forbid(
        ctx.inside_resource_meta && flag(s.x_kubernetes_embedded_resource),
        "x-kubernetes-embedded-resource",
        "must not be used inside of resource meta",
    );
}

fn openapi_schema(
    s: &JSONSchemaProps,
    path: &Path,
    ctx: &Ctx,
    is_root: bool,
    costs: &mut RuleCosts,
    found: &mut NodeErrors,
) {
    let schema_errors_before = found.schema.len();
    let errs = &mut found.schema;
    node_rules(s, path, ctx, errs);
    if flag(s.unique_items) {
        errs.push(FieldError::forbidden(
            path.child("uniqueItems"),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }
    let has_properties = s.properties.as_ref().is_some_and(|p| !p.is_empty());
    if let Some(ap) = &s.additional_properties {
        // Properties are for structs, additionalProperties for maps; both would contradict
        // the convention that unknown fields are dropped.
        if has_properties && !matches!(ap, JSONSchemaPropsOrBool::Bool(true)) {
            errs.push(FieldError::forbidden(
                path.child("additionalProperties"),
                "additionalProperties and properties are mutual exclusive",
            ));
        }
        if let JSONSchemaPropsOrBool::Schema(ap) = ap {
            let sub = if ctx.inside_resource_meta {
                // Pruning a default without the actual key is ambiguous.
                ctx.forbid_defaults("inside additionalProperties applying to object metadata".into())
            } else {
                ctx.clone()
            };
            openapi_schema(ap, &path.child("additionalProperties"), &sub.child_of(s), false, costs, found);
        }
    }
    let embedded = flag(s.x_kubernetes_embedded_resource);
    // kube correlates the properties of the map types it knows, and assumes a new one does not.
    let uncorrelated_map = s.x_kubernetes_map_type.as_deref().is_some_and(|t| t != "granular" && t != "atomic");
    for (key, property) in s.properties.iter().flatten() {
        let mut sub = ctx.child_of(s);
        if uncorrelated_map {
            sub = sub.uncorrelatable_below(path);
        }
        if (is_root || embedded) && ["metadata", "kind", "apiVersion"].contains(&key.as_str()) {
            sub.inside_resource_meta = true;
            if is_root {
                sub = sub.forbid_defaults(format!("in top-level {key}"));
            }
        }
        openapi_schema(property, &path.child("properties").key(key), &sub, false, costs, found);
    }
    let plain = ctx.without_cel();
    if let Some(not) = &s.not {
        openapi_schema(not, &path.child("not"), &plain, false, costs, found);
    }
    for (junctor, list) in [("allOf", &s.all_of), ("oneOf", &s.one_of), ("anyOf", &s.any_of)] {
        for (i, x) in list.iter().flatten().enumerate() {
            openapi_schema(x, &path.child(junctor).index(i), &plain, false, costs, found);
        }
    }
    for (key, definition) in s.definitions.iter().flatten() {
        openapi_schema(definition, &path.child("definitions").key(key), &plain, false, costs, found);
    }
    let mut items = ctx.child_of(s);
    // Only a map list's items are correlated by key (a set's are not, for CEL).
    if s.x_kubernetes_list_type.as_deref() != Some("map") {
        items = items.uncorrelatable_below(path);
    }
    match &s.items {
        Some(JSONSchemaPropsOrArray::Schema(item)) => {
            openapi_schema(item, &path.child("items"), &items, false, costs, found);
        }
        Some(JSONSchemaPropsOrArray::Schemas(list)) => {
            for (i, item) in list.iter().enumerate() {
                openapi_schema(item, &path.child("items").index(i), &items, false, costs, found);
            }
        }
        None => {}
    }
    for (key, dependency) in s.dependencies.iter().flatten() {
        if let JSONSchemaPropsOrStringArray::Schema(d) = dependency {
            openapi_schema(d, &path.child("dependencies").key(key), &plain, false, costs, found);
        }
    }
    let errs = &mut found.schema;
    if s.x_kubernetes_preserve_unknown_fields == Some(false) {
        errs.push(FieldError::invalid(
            path.child("x-kubernetes-preserve-unknown-fields"),
            false,
            "must be true or undefined",
        ));
    }
    list_and_map_rules(s, path, ctx, errs);
    validation_rules(s, path, errs);
    // Schema errors here or below make types CEL cannot build, and compile errors nobody
    // can act on: kube compiles nothing then.
    if let Some(cardinality) = ctx.cardinality.filter(|_| ctx.compile_rules)
        && found.schema.len() == schema_errors_before
    {
        let site = RuleSite {
            path,
            is_root,
            cardinality,
            uncorrelatable: ctx.uncorrelatable.as_ref(),
            suppress_cost: ctx.opts.suppress_expression_cost,
        };
        compiled_rules(s, &site, costs, &mut found.cel);
    }
}

/// Required when missing, Invalid when wrong: kube's pattern for "type must be X if ...".
fn type_must_be(s: &JSONSchemaProps, want: &str, detail: &str, path: &Path) -> Option<FieldError> {
    match text(&s.type_) {
        t if t == want => None,
        "" => Some(FieldError::required(path.child("type"), detail)),
        t => Some(FieldError::invalid(path.child("type"), t, detail)),
    }
}

fn list_and_map_rules(s: &JSONSchemaProps, path: &Path, ctx: &Ctx, errs: &mut Vec<FieldError>) {
    let item = item_schema(s);
    if let Some(map_type) = s.x_kubernetes_map_type.as_deref() {
        errs.extend(type_must_be(s, "object", "must be object if x-kubernetes-map-type is specified", path));
        if map_type != "atomic" && map_type != "granular" {
            errs.push(FieldError::not_supported(
                path.child("x-kubernetes-map-type"),
                map_type,
                &["atomic", "granular"],
            ));
        }
    }
    let list_type = s.x_kubernetes_list_type.as_deref();
    if let Some(list_type) = list_type {
        if let Some(e) = type_must_be(s, "array", "must be array if x-kubernetes-list-type is specified", path) {
            errs.push(e);
        } else if ctx.opts.require_atomic_set_type && list_type == "set" {
            atomic_set_items(item, path, errs);
        }
        if !["atomic", "set", "map"].contains(&list_type) {
            errs.push(FieldError::not_supported(
                path.child("x-kubernetes-list-type"),
                list_type,
                &["atomic", "set", "map"],
            ));
        }
    }
    let keys = list_map_keys(s);
    if !keys.is_empty() {
        match list_type {
            None => errs.push(FieldError::required(
                path.child("x-kubernetes-list-type"),
                "must be map if x-kubernetes-list-map-keys is non-empty",
            )),
            Some("map") => {}
            Some(other) => errs.push(FieldError::invalid(
                path.child("x-kubernetes-list-type"),
                other,
                "must be map if x-kubernetes-list-map-keys is non-empty",
            )),
        }
    }
    if list_type == Some("map") {
        map_list_rules(s, item, keys, path, errs);
    }
    if ctx.opts.require_map_list_keys_map_set_validation {
        errs.extend(map_set_keys_rules(s, item, keys, path));
    }
}

/// A set's items must compare as a whole.
fn atomic_set_items(item: Option<&JSONSchemaProps>, path: &Path, errs: &mut Vec<FieldError>) {
    let Some(item) = item else { return };
    let detail = "must be atomic as item of a list with x-kubernetes-list-type=set";
    let item_list_type = || item.x_kubernetes_list_type.clone().map_or(Value::Null, Value::from);
    match text(&item.type_) {
        "array" if item.x_kubernetes_list_type.as_deref().is_some_and(|t| t != "atomic") => {
            errs.push(FieldError::invalid(
                path.child("items").child("x-kubernetes-list-type"),
                item_list_type(),
                detail,
            ));
        }
        // kube reports the item's list type (usually null) as the value here.
        "object" if item.x_kubernetes_map_type.as_deref() != Some("atomic") => {
            errs.push(FieldError::invalid(
                path.child("items").child("x-kubernetes-map-type"),
                item_list_type(),
                detail,
            ));
        }
        _ => {}
    }
}

fn map_list_rules(
    s: &JSONSchemaProps,
    item: Option<&JSONSchemaProps>,
    keys: &[String],
    path: &Path,
    errs: &mut Vec<FieldError>,
) {
    if keys.is_empty() {
        errs.push(FieldError::required(
            path.child("x-kubernetes-list-map-keys"),
            "must not be empty if x-kubernetes-list-type is map",
        ));
    }
    match (&s.items, item) {
        (None, _) => {
            errs.push(FieldError::required(path.child("items"), "must have a schema if x-kubernetes-list-type is map"))
        }
        (Some(items), None) => errs.push(FieldError::invalid(
            path.child("items"),
            serde_json::to_value(items).unwrap_or(Value::Null),
            "must only have a single schema if x-kubernetes-list-type is map",
        )),
        (Some(_), Some(item)) if text(&item.type_) != "object" => errs.push(FieldError::invalid(
            path.child("items").child("type"),
            text(&item.type_),
            "must be object if parent array's x-kubernetes-list-type is map",
        )),
        (Some(_), Some(item)) => {
            let mut seen: Vec<&str> = Vec::new();
            for key in keys {
                match item.properties.as_ref().and_then(|p| p.get(key)) {
                    // kube reports the item's type ("object") as the value here.
                    Some(p) if matches!(text(&p.type_), "array" | "object") => errs.push(FieldError::invalid(
                        path.child("items").child("properties").key(key).child("type"),
                        text(&item.type_),
                        "must be a scalar type if parent array's x-kubernetes-list-type is map",
                    )),
                    Some(_) => {}
                    None => errs.push(FieldError::invalid_shown(
                        path.child("x-kubernetes-list-map-keys"),
                        &super::gostring::strings(Some(keys)),
                        "entries must all be names of item properties",
                    )),
                }
                if seen.contains(&key.as_str()) {
                    errs.push(FieldError::invalid_shown(
                        path.child("x-kubernetes-list-map-keys"),
                        &super::gostring::strings(Some(keys)),
                        "must not contain duplicate entries",
                    ));
                }
                seen.push(key);
            }
        }
    }
}

/// Go's `validateMapListKeysMapSet`: set and map items, and map keys, cannot be null, and
/// a map key must always be present (required or defaulted).
pub fn map_set_keys_rules(
    s: &JSONSchemaProps,
    item: Option<&JSONSchemaProps>,
    keys: &[String],
    path: &Path,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let (Some(item), Some(list_type)) = (item, s.x_kubernetes_list_type.as_deref()) else {
        return errs;
    };
    if list_type != "set" && list_type != "map" {
        return errs;
    }
    if flag(item.nullable) {
        errs.push(FieldError::forbidden(
            path.child("items").child("nullable"),
            format!("cannot be nullable when x-kubernetes-list-type is {list_type}"),
        ));
    }
    if list_type == "map" {
        let required = item.required.as_deref().unwrap_or_default();
        for key in keys {
            let Some(p) = item.properties.as_ref().and_then(|props| props.get(key)) else {
                continue;
            };
            let key_path = path.child("items").child("properties").key(key);
            if !required.contains(key) && p.default.is_none() {
                errs.push(FieldError::required(
                    key_path.child("default"),
                    "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
                ));
            }
            if flag(p.nullable) {
                errs.push(FieldError::forbidden(
                    key_path.child("nullable"),
                    "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
                ));
            }
        }
    }
    errs
}

#[cfg(test)]
#[path = "schema_rules_tests.rs"]
mod tests;
