//! Structural schemas: the shape rules every `openAPIV3Schema` of a v1 CRD must satisfy
//! (apiextensions' `apiserver/schema`: `NewStructural`, `ValidateStructural` and its
//! completeness check).
//!
//! A schema is structural when every node that describes data says what it is (`type`,
//! or one of the `x-kubernetes-int-or-string` / `x-kubernetes-preserve-unknown-fields`
//! escapes) and the logical junctors `allOf`/`anyOf`/`oneOf`/`not` only add value
//! validations to fields already specified outside them. Pruning, defaulting and the
//! projection of a schema to `.status` all depend on that, so kube refuses anything else.
//!
//! The walk runs directly on k8s-openapi's `JSONSchemaProps`; "structural" positions are
//! the root, `properties`, `items` and `additionalProperties`, "nested" ones are everything
//! under a junctor. Like kube, the errors are sorted by their text, because map iteration
//! would otherwise make their order random.

use crate::field::{FieldError, Path};
use crate::registry::schema_walk::{flag, item_schema, text};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};
use serde_json::Value;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Item,
    Field,
}

fn is_set_json<T>(v: &Option<T>, inner: impl Fn(&T) -> &Value) -> bool {
    v.as_ref().is_some_and(|j| !inner(j).is_null())
}

/// Go's `validateUnsupportedFields` plus the two other ways `NewStructural` refuses a node.
fn unsupported_field(s: &JSONSchemaProps) -> Option<&'static str> {
    if !text(&s.id).is_empty() {
        return Some("OpenAPIV3Schema 'id' is not supported");
    }
    if !text(&s.schema).is_empty() {
        return Some("OpenAPIV3Schema 'schema' is not supported");
    }
    if !text(&s.ref_path).is_empty() {
        return Some("OpenAPIV3Schema '$ref' is not supported");
    }
    if s.pattern_properties.as_ref().is_some_and(|m| !m.is_empty()) {
        return Some("OpenAPIV3Schema 'patternProperties' is not supported");
    }
    if s.dependencies.as_ref().is_some_and(|m| !m.is_empty()) {
        return Some("OpenAPIV3Schema 'dependencies' is not supported");
    }
    if s.additional_items.is_some() {
        return Some("OpenAPIV3Schema 'additionalItems' is not supported");
    }
    if s.definitions.as_ref().is_some_and(|m| !m.is_empty()) {
        return Some("OpenAPIV3Schema 'definitions' is not supported");
    }
    None
}

/// The error `NewStructural` stops at, in its walk order (junctors, then the node's own
/// extensions, then items, properties and additionalProperties), if any.
pub fn new_structural_error(s: &JSONSchemaProps) -> Option<&'static str> {
    if let Some(e) = unsupported_field(s) {
        return Some(e);
    }
    let junctors = s.not.as_deref().into_iter().chain(s.all_of.iter().flatten()).chain(s.any_of.iter().flatten());
    if let Some(e) = junctors.chain(s.one_of.iter().flatten()).find_map(new_structural_error) {
        return Some(e);
    }
    if s.x_kubernetes_preserve_unknown_fields == Some(false) {
        return Some("internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined");
    }
    match &s.items {
        Some(JSONSchemaPropsOrArray::Schemas(list)) if !list.is_empty() => {
            return Some("OpenAPIV3Schema 'items' must be a schema, but is an array");
        }
        Some(JSONSchemaPropsOrArray::Schema(item)) => {
            if let Some(e) = new_structural_error(item) {
                return Some(e);
            }
        }
        _ => {}
    }
    if let Some(e) = s.properties.iter().flatten().find_map(|(_, p)| new_structural_error(p)) {
        return Some(e);
    }
    match &s.additional_properties {
        Some(JSONSchemaPropsOrBool::Schema(ap)) => new_structural_error(ap),
        _ => None,
    }
}

/// Whether `s` has nothing set, as Go's zero `Structural` / `NestedValueValidation`. The
/// `nested` flag follows Go's conversion: `additionalProperties: false` vanishes in a
/// nested context but not in a structural one.
fn is_zero(s: &JSONSchemaProps, nested: bool) -> bool {
    let additional_properties_zero = match &s.additional_properties {
        None => true,
        Some(JSONSchemaPropsOrBool::Bool(false)) => nested,
        Some(_) => false,
    };
    text(&s.type_).is_empty()
        && text(&s.description).is_empty()
        && text(&s.title).is_empty()
        && text(&s.format).is_empty()
        && text(&s.pattern).is_empty()
        && !flag(s.nullable)
        && !flag(s.exclusive_maximum)
        && !flag(s.exclusive_minimum)
        && !flag(s.unique_items)
        && !flag(s.x_kubernetes_embedded_resource)
        && !flag(s.x_kubernetes_int_or_string)
        && s.x_kubernetes_preserve_unknown_fields.is_none()
        && !is_set_json(&s.default, |j| &j.0)
        && !is_set_json(&s.example, |j| &j.0)
        && s.external_docs.is_none()
        && s.maximum.is_none()
        && s.minimum.is_none()
        && s.max_length.is_none()
        && s.min_length.is_none()
        && s.max_items.is_none()
        && s.min_items.is_none()
        && s.max_properties.is_none()
        && s.min_properties.is_none()
        && s.multiple_of.is_none()
        && s.enum_.as_ref().is_none_or(Vec::is_empty)
        // Go copies these slices as given, so an explicit empty list is not zero.
        && s.required.is_none()
        && s.x_kubernetes_list_map_keys.is_none()
        && s.x_kubernetes_list_type.is_none()
        && s.x_kubernetes_map_type.is_none()
        && s.x_kubernetes_validations.as_ref().is_none_or(Vec::is_empty)
        && s.all_of.as_ref().is_none_or(Vec::is_empty)
        && s.any_of.as_ref().is_none_or(Vec::is_empty)
        && s.one_of.as_ref().is_none_or(Vec::is_empty)
        && s.not.is_none()
        && s.items.is_none()
        && s.properties.as_ref().is_none_or(|m| m.is_empty())
        && additional_properties_zero
}

/// `{type: <t>}` and nothing else.
fn is_only_type(s: &JSONSchemaProps, t: &str) -> bool {
    text(&s.type_) == t && {
        let mut rest = s.clone();
        rest.type_ = None;
        is_zero(&rest, true)
    }
}

/// `anyOf: [{type: integer}, {type: string}]`, the first int-or-string exception.
fn is_int_or_string_any_of(any_of: Option<&Vec<JSONSchemaProps>>) -> bool {
    matches!(any_of.map(Vec::as_slice), Some([i, s]) if is_only_type(i, "integer") && is_only_type(s, "string"))
}

/// `allOf: [{anyOf: [{type: integer}, {type: string}]}, ...]`, the second exception.
fn is_int_or_string_all_of(s: &JSONSchemaProps) -> bool {
    s.all_of.as_ref().and_then(|a| a.first()).is_some_and(|first| is_int_or_string_any_of(first.any_of.as_ref()))
}

/// Validates `s` as a structural schema rooted at `path` (`...openAPIV3Schema`). Assumes
/// [`new_structural_error`] found nothing. Errors are sorted by their text, as kube does.
pub fn validate_structural(path: &Path, s: &JSONSchemaProps) -> Vec<FieldError> {
    let mut errs = Vec::new();
    invariants(s, Level::Root, path, &mut errs);
    completeness(s, s, path, path, &mut errs);
    errs.sort_by_key(ToString::to_string);
    errs
}

/// Whether `s` is a structural schema.
pub fn is_structural(s: &JSONSchemaProps) -> bool {
    new_structural_error(s).is_none() && validate_structural(&Path::default(), s).is_empty()
}

fn invariants(s: &JSONSchemaProps, lvl: Level, path: &Path, errs: &mut Vec<FieldError>) {
    let type_ = text(&s.type_);
    if type_ == "array" && s.items.is_none() {
        errs.push(FieldError::required(path.child("items"), "must be specified"));
    }
    if let Some(item) = item_schema(s) {
        invariants(item, Level::Item, &path.child("items"), errs);
    }
    for (key, property) in s.properties.iter().flatten() {
        invariants(property, Level::Field, &path.child("properties").key(key), errs);
    }
    if let Some(ap) = &s.additional_properties {
        if lvl == Level::Root {
            errs.push(FieldError::forbidden(path.child("additionalProperties"), "must not be used at the root"));
        }
        if let JSONSchemaPropsOrBool::Schema(ap) = ap {
            invariants(ap, Level::Field, &path.child("additionalProperties"), errs);
        }
    }

    let int_or_string = flag(s.x_kubernetes_int_or_string);
    let preserve = flag(s.x_kubernetes_preserve_unknown_fields);
    let embedded = flag(s.x_kubernetes_embedded_resource);
    if int_or_string && preserve {
        errs.push(FieldError::invalid(
            path.child("x-kubernetes-preserve-unknown-fields"),
            true,
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    if int_or_string && embedded {
        errs.push(FieldError::invalid(
            path.child("x-kubernetes-embedded-resource"),
            true,
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }

    let skip_any_of = is_int_or_string_any_of(s.any_of.as_ref());
    value_validation(s, skip_any_of, is_int_or_string_all_of(s), path, errs);

    if embedded && type_ != "object" {
        let detail = "must be object if x-kubernetes-embedded-resource is true";
        errs.push(if type_.is_empty() {
            FieldError::required(path.child("type"), detail)
        } else {
            FieldError::invalid(path.child("type"), type_, detail)
        });
    } else if type_.is_empty() && !int_or_string && !preserve {
        let detail = match lvl {
            Level::Root => "must not be empty at the root",
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        errs.push(FieldError::required(path.child("type"), detail));
    }
    if embedded && s.additional_properties.is_some() {
        errs.push(FieldError::forbidden(
            path.child("additionalProperties"),
            "must not be used if x-kubernetes-embedded-resource is set",
        ));
    }
    if lvl == Level::Root && !type_.is_empty() && type_ != "object" {
        errs.push(FieldError::invalid(path.child("type"), type_, "must be object at the root"));
    }

    let check_metadata = lvl == Level::Root || embedded;
    let properties = s.properties.as_ref();
    for key in ["kind", "apiVersion"] {
        if let Some(p) = properties.and_then(|p| p.get(key)).filter(|_| check_metadata)
            && text(&p.type_) != "string"
        {
            errs.push(FieldError::invalid(
                path.child("properties").key(key).child("type"),
                text(&p.type_),
                "must be string",
            ));
        }
    }
    if let Some(metadata) = properties.and_then(|p| p.get("metadata")) {
        metadata_invariants(metadata, check_metadata, lvl, &path.child("properties").key("metadata"), errs);
    }
    if embedded && !preserve && properties.is_none_or(|p| p.is_empty()) {
        errs.push(FieldError::required(
            path.child("properties"),
            "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
        ));
    }
}

/// At the root, a `metadata` schema may only restrict `name` and `generateName`: anything
/// else would let a CRD change how object metadata is validated or pruned.
fn metadata_invariants(s: &JSONSchemaProps, check_metadata: bool, lvl: Level, path: &Path, errs: &mut Vec<FieldError>) {
    if check_metadata && text(&s.type_) != "object" {
        errs.push(FieldError::invalid(path.child("type"), text(&s.type_), "must be object"));
    }
    if lvl != Level::Root {
        return;
    }
    let mut rest = s.clone();
    rest.type_ = None;
    rest.default = None;
    if let Some(p) = &rest.properties {
        let (name, generate_name) = (p.contains_key("name"), p.contains_key("generateName"));
        if (name && generate_name && p.len() == 2) || ((name || generate_name) && p.len() == 1) {
            rest.properties = None;
        }
    }
    if !is_zero(&rest, false) {
        errs.push(FieldError::forbidden(
            path.clone(),
            "must not specify anything other than name and generateName, but metadata is implicitly specified",
        ));
    }
}

/// The junctors of a node: every nested schema must only carry value validations.
fn value_validation(
    s: &JSONSchemaProps,
    skip_any_of: bool,
    skip_first_all_of_any_of: bool,
    path: &Path,
    errs: &mut Vec<FieldError>,
) {
    if !skip_any_of {
        for (i, x) in s.any_of.iter().flatten().enumerate() {
            nested(x, false, &path.child("anyOf").index(i), errs);
        }
    }
    for (i, x) in s.all_of.iter().flatten().enumerate() {
        nested(x, skip_first_all_of_any_of && i == 0, &path.child("allOf").index(i), errs);
    }
    for (i, x) in s.one_of.iter().flatten().enumerate() {
        nested(x, false, &path.child("oneOf").index(i), errs);
    }
    if let Some(not) = &s.not {
        nested(not, false, &path.child("not"), errs);
    }
    if let Some(pattern) = s.pattern.as_deref().filter(|p| !p.is_empty())
        && let Err(e) = crate::schema::go_regexp::check(pattern)
    {
        let detail = format!("must be a valid regular expression, but isn't: {e}");
        errs.push(FieldError::invalid(path.child("pattern"), pattern, detail));
    }
}

fn nested(v: &JSONSchemaProps, skip_any_of: bool, path: &Path, errs: &mut Vec<FieldError>) {
    value_validation(v, skip_any_of, false, path, errs);
    if let Some(item) = item_schema(v) {
        nested(item, false, &path.child("items"), errs);
    }
    for (key, property) in v.properties.iter().flatten() {
        nested(property, false, &path.child("properties").key(key), errs);
    }
    let forbid = |errs: &mut Vec<FieldError>, field: &str, detail: &str| {
        errs.push(FieldError::forbidden(path.child(field), detail))
    };
    if !text(&v.type_).is_empty() {
        forbid(errs, "type", "must be empty to be structural");
    }
    if matches!(
        v.additional_properties,
        Some(JSONSchemaPropsOrBool::Schema(_)) | Some(JSONSchemaPropsOrBool::Bool(true))
    ) {
        forbid(errs, "additionalProperties", "must be undefined to be structural");
    }
    if is_set_json(&v.default, |j| &j.0) {
        forbid(errs, "default", "must be undefined to be structural");
    }
    if !text(&v.title).is_empty() {
        forbid(errs, "title", "must be empty to be structural");
    }
    if !text(&v.description).is_empty() {
        forbid(errs, "description", "must be empty to be structural");
    }
    if flag(v.nullable) {
        forbid(errs, "nullable", "must be false to be structural");
    }
    if flag(v.x_kubernetes_preserve_unknown_fields) {
        forbid(errs, "x-kubernetes-preserve-unknown-fields", "must be false to be structural");
    }
    if flag(v.x_kubernetes_embedded_resource) {
        forbid(errs, "x-kubernetes-embedded-resource", "must be false to be structural");
    }
    if flag(v.x_kubernetes_int_or_string) {
        forbid(errs, "x-kubernetes-int-or-string", "must be false to be structural");
    }
    if v.x_kubernetes_list_map_keys.as_ref().is_some_and(|k| !k.is_empty()) {
        forbid(errs, "x-kubernetes-list-map-keys", "must be empty to be structural");
    }
    if v.x_kubernetes_list_type.is_some() {
        forbid(errs, "x-kubernetes-list-type", "must be undefined to be structural");
    }
    if v.x_kubernetes_map_type.is_some() {
        forbid(errs, "x-kubernetes-map-type", "must be undefined to be structural");
    }
    if v.x_kubernetes_validations.as_ref().is_some_and(|x| !x.is_empty()) {
        forbid(errs, "x-kubernetes-validations", "must be empty to be structural");
    }
    if v.properties.as_ref().is_some_and(|p| p.contains_key("metadata")) {
        errs.push(FieldError::forbidden(
            path.child("properties").key("metadata"),
            "must not be specified in a nested context",
        ));
    }
}

/// Every field or array a junctor talks about must also be specified outside it. Like
/// kube, only the junctors of the root are checked (with what they nest).
fn completeness(v: &JSONSchemaProps, s: &JSONSchemaProps, s_path: &Path, v_path: &Path, errs: &mut Vec<FieldError>) {
    if let Some(not) = &v.not {
        nested_completeness(not, Some(s), s_path, &v_path.child("not"), errs);
    }
    for (junctor, list) in [("allOf", &v.all_of), ("anyOf", &v.any_of), ("oneOf", &v.one_of)] {
        for (i, x) in list.iter().flatten().enumerate() {
            nested_completeness(x, Some(s), s_path, &v_path.child(junctor).index(i), errs);
        }
    }
}

fn nested_completeness(
    v: &JSONSchemaProps,
    s: Option<&JSONSchemaProps>,
    s_path: &Path,
    v_path: &Path,
    errs: &mut Vec<FieldError>,
) {
    let Some(s) = s else {
        errs.push(FieldError::required(s_path.clone(), format!("because it is defined in {v_path}")));
        return;
    };
    completeness(v, s, s_path, v_path, errs);
    if let Some(item) = item_schema(v) {
        nested_completeness(item, item_schema(s), &s_path.child("items"), &v_path.child("items"), errs);
    }
    for (key, v_field) in v.properties.iter().flatten() {
        let s_field = s.properties.as_ref().and_then(|p| p.get(key));
        let (s_key, v_key) = (s_path.child("properties").key(key), v_path.child("properties").key(key));
        match s_field {
            None => errs.push(FieldError::required(s_key, format!("because it is defined in {v_key}"))),
            Some(s_field) => nested_completeness(v_field, Some(s_field), &s_key, &v_key, errs),
        }
    }
}

#[cfg(test)]
#[path = "structural_tests.rs"]
mod tests;
