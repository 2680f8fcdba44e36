//! Small readers over k8s-openapi's `JSONSchemaProps` shared by the schema checks, and
//! Go's `SchemaHas` walk.
//!
//! k8s-openapi models Go's plain fields (`bool`, `string`) as `Option`s; the readers here
//! give them Go's zero-value meaning in one place. The walk answers spec-wide questions
//! ("does any schema use defaults?", "was the stored schema already non-structural?")
//! that decide which rules apply, notably the update ratchets.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinitionSpec, CustomResourceValidation, JSONSchemaProps, JSONSchemaPropsOrArray,
    JSONSchemaPropsOrBool, JSONSchemaPropsOrStringArray,
};

/// The types an OpenAPI v3 schema may name (sorted, as kube lists them).
pub const OPENAPI_TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];

/// A Go `bool` field: unset is `false`.
pub fn flag(b: Option<bool>) -> bool {
    b.unwrap_or(false)
}

/// A Go `string` field: unset is `""`.
pub fn text(s: &Option<String>) -> &str {
    s.as_deref().unwrap_or_default()
}

/// `items` when it is a single schema (the only form kube supports).
pub fn item_schema(s: &JSONSchemaProps) -> Option<&JSONSchemaProps> {
    match &s.items {
        Some(JSONSchemaPropsOrArray::Schema(item)) => Some(item),
        _ => None,
    }
}

/// `x-kubernetes-list-map-keys`, empty when unset.
pub fn list_map_keys(s: &JSONSchemaProps) -> &[String] {
    s.x_kubernetes_list_map_keys.as_deref().unwrap_or_default()
}

/// The `openAPIV3Schema` of a `schema` field, if any.
pub fn schema_of(validation: Option<&CustomResourceValidation>) -> Option<&JSONSchemaProps> {
    validation.and_then(|v| v.open_api_v3_schema.as_ref())
}

/// Whether `pred` holds for the schema of some version.
pub fn spec_has_schema_with(spec: &CustomResourceDefinitionSpec, pred: impl Fn(&JSONSchemaProps) -> bool) -> bool {
    spec.versions.iter().filter_map(|v| schema_of(v.schema.as_ref())).any(pred)
}

fn schema_of_or_bool(b: &Option<JSONSchemaPropsOrBool>) -> Option<&JSONSchemaProps> {
    match b {
        Some(JSONSchemaPropsOrBool::Schema(x)) => Some(x),
        _ => None,
    }
}

/// Go's `SchemaHas`: whether `pred` holds for `s` or any schema nested in it.
pub fn schema_has(s: &JSONSchemaProps, pred: &dyn Fn(&JSONSchemaProps) -> bool) -> bool {
    if pred(s) {
        return true;
    }
    let items: Box<dyn Iterator<Item = &JSONSchemaProps>> = match &s.items {
        Some(JSONSchemaPropsOrArray::Schema(item)) => Box::new(std::iter::once(item.as_ref())),
        Some(JSONSchemaPropsOrArray::Schemas(list)) => Box::new(list.iter()),
        None => Box::new(std::iter::empty()),
    };
    let dependencies = s.dependencies.iter().flatten().filter_map(|(_, d)| match d {
        JSONSchemaPropsOrStringArray::Schema(x) => Some(x.as_ref()),
        JSONSchemaPropsOrStringArray::Strings(_) => None,
    });
    let mut children = items
        .chain(s.all_of.iter().flatten())
        .chain(s.any_of.iter().flatten())
        .chain(s.one_of.iter().flatten())
        .chain(s.not.as_deref())
        .chain(s.properties.iter().flatten().map(|(_, p)| p))
        .chain(schema_of_or_bool(&s.additional_properties))
        .chain(s.pattern_properties.iter().flatten().map(|(_, p)| p))
        .chain(schema_of_or_bool(&s.additional_items))
        .chain(s.definitions.iter().flatten().map(|(_, p)| p))
        .chain(dependencies);
    children.any(|c| schema_has(c, pred))
}

/// Uses a Kubernetes extension that only makes sense with pruning (structural schemas).
pub fn has_kubernetes_extension(s: &JSONSchemaProps) -> bool {
    flag(s.x_kubernetes_embedded_resource)
        || s.x_kubernetes_preserve_unknown_fields.is_some()
        || flag(s.x_kubernetes_int_or_string)
        || !list_map_keys(s).is_empty()
        || s.x_kubernetes_list_type.is_some()
        || s.x_kubernetes_validations.as_ref().is_some_and(|v| !v.is_empty())
}

/// Names a type outside the OpenAPI v3 set.
pub fn has_invalid_type(s: &JSONSchemaProps) -> bool {
    let t = text(&s.type_);
    !t.is_empty() && !OPENAPI_TYPES.contains(&t)
}

/// A `set` list whose items do not compare as a whole.
pub fn has_non_atomic_set(s: &JSONSchemaProps) -> bool {
    let Some(item) = item_schema(s).filter(|_| s.x_kubernetes_list_type.as_deref() == Some("set")) else {
        return false;
    };
    match text(&item.type_) {
        "array" => item.x_kubernetes_list_type.as_deref().is_some_and(|t| t != "atomic"),
        "object" => item.x_kubernetes_map_type.as_deref() != Some("atomic"),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::fixtures::schema;
    use serde_json::json;

    #[test]
    fn schema_has_reaches_every_nested_position() {
        let deep = [
            json!({"items": {"default": 1}}),
            json!({"items": [{"default": 1}]}),
            json!({"allOf": [{"default": 1}]}),
            json!({"anyOf": [{"default": 1}]}),
            json!({"oneOf": [{"default": 1}]}),
            json!({"not": {"default": 1}}),
            json!({"properties": {"a": {"default": 1}}}),
            json!({"additionalProperties": {"default": 1}}),
            json!({"patternProperties": {"a": {"default": 1}}}),
            json!({"additionalItems": {"default": 1}}),
            json!({"definitions": {"a": {"default": 1}}}),
            json!({"dependencies": {"a": {"default": 1}}}),
        ];
        let has_default = |s: &JSONSchemaProps| s.default.is_some();
        for value in deep {
            assert!(schema_has(&schema(value.clone()), &has_default), "{value}");
        }
        assert!(!schema_has(&schema(json!({"type": "object", "dependencies": {"a": ["b"]}})), &has_default));
    }

    #[test]
    fn predicates() {
        assert!(has_invalid_type(&schema(json!({"type": "date"}))));
        assert!(!has_invalid_type(&schema(json!({"type": "number"}))));
        assert!(has_kubernetes_extension(&schema(json!({"x-kubernetes-list-type": "atomic"}))));
        assert!(!has_kubernetes_extension(&schema(json!({"type": "object"}))));
        let set_of =
            |item: serde_json::Value| schema(json!({"type": "array", "x-kubernetes-list-type": "set", "items": item}));
        assert!(has_non_atomic_set(&set_of(json!({"type": "object"}))));
        assert!(!has_non_atomic_set(&set_of(json!({"type": "object", "x-kubernetes-map-type": "atomic"}))));
        assert!(!has_non_atomic_set(&set_of(json!({"type": "string"}))));
    }
}
