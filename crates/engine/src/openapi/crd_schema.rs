//! A CRD version's schema as the definitions kube-apiserver publishes for it.
//!
//! The steps are apiextensions-apiserver's OpenAPI builder's: keep what a structural
//! schema holds (dropping `example`, `externalDocs`, `$ref`, `definitions`, ...), unfold
//! `x-kubernetes-int-or-string` into its `anyOf`, for swagger 2.0 strip what kubectl's
//! client-side validation cannot cope with (`ToStructuralOpenAPIV2`), then add the
//! Kubernetes-native parts: `apiVersion`, `kind`, a `metadata` reference, the same for
//! embedded resources, `x-kubernetes-group-version-kind` and
//! `x-kubernetes-selectable-fields`. The list kind gets the standard list schema.

use super::schema::reference;
use serde_json::{Map, Value, json};

pub const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
pub const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";

const API_VERSION_DESCRIPTION: &str = "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
const KIND_DESCRIPTION: &str = "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";
const METADATA_DESCRIPTION: &str = "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
const LIST_METADATA_DESCRIPTION: &str = "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";
const EMBEDDED_API_VERSION_DESCRIPTION: &str = "apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
const EMBEDDED_KIND_DESCRIPTION: &str = "kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";

const PRESERVE_UNKNOWN: &str = "x-kubernetes-preserve-unknown-fields";
const EMBEDDED: &str = "x-kubernetes-embedded-resource";
const INT_OR_STRING: &str = "x-kubernetes-int-or-string";

/// Fields of a structural schema besides `items`, `properties`, `additionalProperties` and
/// the logical junctors (generic fields, value validations and extensions).
const KEPT: [&str; 28] = [
    "description",
    "type",
    "title",
    "default",
    "nullable",
    "format",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "multipleOf",
    "enum",
    "maxProperties",
    "minProperties",
    "required",
    PRESERVE_UNKNOWN,
    EMBEDDED,
    INT_OR_STRING,
    "x-kubernetes-list-map-keys",
    "x-kubernetes-list-type",
    "x-kubernetes-map-type",
    "x-kubernetes-validations",
];

/// What the builder needs to know about one served version of a CRD (spec names, as kube's
/// builder uses them).
#[derive(Debug, Clone, PartialEq)]
pub struct CrdVersion {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub list_kind: String,
    pub plural: String,
    /// `openAPIV3Schema`, when the version has a structural one.
    /// Shared: every document source of the version holds it, and a large CRD set's
    /// schemas are most of what the documents are built from.
    pub schema: Option<std::sync::Arc<Value>>,
    /// `selectableFields[].jsonPath`.
    pub selectable_fields: Vec<String>,
}

/// The definition name kube-openapi gives a CRD kind: the group reversed, then version and
/// kind (`stable.example.com/v1.Widget` → `com.example.stable.v1.Widget`).
pub fn definition_name(group: &str, version: &str, kind: &str) -> String {
    let reversed: Vec<&str> = group.split('.').rev().collect();
    format!("{}.{version}.{kind}", reversed.join("."))
}

/// The kind's definition (swagger 2.0 form; `v2` applies the swagger 2.0 reductions).
pub fn kind_definition(crd: &CrdVersion, v2: bool) -> Value {
    let unfolded = crd.schema.as_ref().map(|s| {
        let mut s = structural(s, false);
        unfold(&mut s);
        s
    });
    let mut out = match unfolded {
        Some(s) if !(v2 && is_true(&s, PRESERVE_UNKNOWN)) => {
            let mut s = s;
            if v2 {
                to_v2(&mut s);
            }
            set_properties(
                &mut s,
                [
                    ("metadata", described_ref(METADATA_DESCRIPTION, OBJECT_META)),
                    ("apiVersion", json!({"description": API_VERSION_DESCRIPTION, "type": "string"})),
                    ("kind", json!({"description": KIND_DESCRIPTION, "type": "string"})),
                ],
            );
            add_embedded(&mut s, v2);
            s
        }
        // No (structural) schema, or a root preserving unknown fields in swagger 2.0:
        // properties would make kubectl reject every field the schema does not list.
        _ => object_map(json!({"type": "object"})),
    };
    out.insert("x-kubernetes-group-version-kind".into(), gvk(crd, &crd.kind));
    out.insert("x-kubernetes-selectable-fields".into(), selectable_fields(crd));
    Value::Object(out)
}

/// The list kind's definition.
pub fn list_definition(crd: &CrdVersion) -> Value {
    let item = definition_name(&crd.group, &crd.version, &crd.kind);
    let mut out = object_map(json!({
        "description": format!("{} is a list of {}", crd.list_kind, crd.kind),
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": {"description": API_VERSION_DESCRIPTION, "type": "string"},
            "items": {
                "description": format!("List of {}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md", crd.plural),
                "type": "array",
                "items": reference(&item),
            },
            "kind": {"description": KIND_DESCRIPTION, "type": "string"},
            "metadata": described_ref(LIST_METADATA_DESCRIPTION, LIST_META),
        },
    }));
    out.insert("x-kubernetes-group-version-kind".into(), gvk(crd, &crd.list_kind));
    out.insert("x-kubernetes-selectable-fields".into(), selectable_fields(crd));
    Value::Object(out)
}

fn gvk(crd: &CrdVersion, kind: &str) -> Value {
    json!([{"group": crd.group, "kind": kind, "version": crd.version}])
}

fn selectable_fields(crd: &CrdVersion) -> Value {
    Value::Array(crd.selectable_fields.iter().map(|p| json!({"fieldPath": p.strip_prefix('.').unwrap_or(p)})).collect())
}

fn described_ref(description: &str, definition: &str) -> Value {
    let mut r = object_map(reference(definition));
    r.insert("description".into(), Value::String(description.into()));
    Value::Object(r)
}

fn object_map(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

fn is_true(s: &Map<String, Value>, key: &str) -> bool {
    s.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// Sets (or replaces) properties of an object schema.
fn set_properties(s: &mut Map<String, Value>, entries: [(&str, Value); 3]) {
    let mut props = match s.remove("properties") {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    for (k, v) in entries {
        props.insert(k.into(), v);
    }
    s.insert("properties".into(), Value::Object(props));
}

/// What a structural schema keeps of a JSONSchemaProps object. Nested value validations
/// (under `allOf`/`anyOf`/`oneOf`/`not`) carry no `additionalProperties`.
fn structural(v: &Value, nested: bool) -> Map<String, Value> {
    let mut out = Map::new();
    let Value::Object(src) = v else { return out };
    for key in KEPT {
        if let Some(x) = src.get(key) {
            out.insert(key.into(), x.clone());
        }
    }
    if let Some(items @ Value::Object(_)) = src.get("items") {
        out.insert("items".into(), Value::Object(structural(items, nested)));
    }
    if let Some(Value::Object(props)) = src.get("properties") {
        let converted = props.iter().map(|(k, p)| (k.clone(), Value::Object(structural(p, nested)))).collect();
        out.insert("properties".into(), Value::Object(converted));
    }
    match src.get("additionalProperties") {
        Some(Value::Bool(b)) if !nested => {
            out.insert("additionalProperties".into(), Value::Bool(*b));
        }
        Some(ap @ Value::Object(_)) if !nested => {
            out.insert("additionalProperties".into(), Value::Object(structural(ap, false)));
        }
        _ => {}
    }
    for junctor in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(list)) = src.get(junctor) {
            let converted = list.iter().map(|s| Value::Object(structural(s, true))).collect();
            out.insert(junctor.into(), Value::Array(converted));
        }
    }
    if let Some(not @ Value::Object(_)) = src.get("not") {
        out.insert("not".into(), Value::Object(structural(not, true)));
    }
    out
}

/// Calls `f` on every structural node below `s` (not on nested value validations).
fn each_child(s: &mut Map<String, Value>, f: &mut dyn FnMut(&mut Map<String, Value>)) {
    if let Some(Value::Object(items)) = s.get_mut("items") {
        f(items);
    }
    if let Some(Value::Object(props)) = s.get_mut("properties") {
        for p in props.values_mut() {
            if let Value::Object(p) = p {
                f(p);
            }
        }
    }
    if let Some(Value::Object(ap)) = s.get_mut("additionalProperties") {
        f(ap);
    }
}

/// `x-kubernetes-int-or-string` spelled out as `anyOf: [{type: integer}, {type: string}]`.
fn unfold(s: &mut Map<String, Value>) {
    if is_true(s, INT_OR_STRING) {
        let pattern = json!([{"type": "integer"}, {"type": "string"}]);
        let any_of_is_pattern = s.get("anyOf") == Some(&pattern);
        let all_of_starts_with_pattern = s
            .get("allOf")
            .and_then(Value::as_array)
            .and_then(|a| a.first())
            .is_some_and(|first| first.get("anyOf") == Some(&pattern));
        if !any_of_is_pattern && !all_of_starts_with_pattern {
            if s.contains_key("anyOf") {
                let mut all_of = vec![json!({"anyOf": pattern})];
                if let Some(Value::Array(rest)) = s.remove("allOf") {
                    all_of.extend(rest);
                }
                s.insert("allOf".into(), Value::Array(all_of));
            } else {
                s.insert("anyOf".into(), pattern);
            }
        }
    }
    each_child(s, &mut unfold);
}

/// apiextensions' `ToStructuralOpenAPIV2`, top down.
fn to_v2(s: &mut Map<String, Value>) {
    for junctor in ["allOf", "oneOf", "anyOf", "not"] {
        s.remove(junctor);
    }
    if is_true(s, "nullable") {
        for key in ["type", "nullable", "items", "properties"] {
            s.remove(key);
        }
    }
    if is_true(s, PRESERVE_UNKNOWN) {
        s.remove("items");
        s.remove("properties");
    }
    let type_is = |s: &Map<String, Value>, t: &str| s.get("type").and_then(Value::as_str) == Some(t);
    if !s.contains_key("items") && type_is(s, "array") {
        s.remove("type");
    }
    if is_true(s, PRESERVE_UNKNOWN) && type_is(s, "object") {
        s.remove("type");
    }
    let nullable_props: Vec<String> = match s.get("properties") {
        Some(Value::Object(props)) => props
            .iter()
            .filter(|(_, p)| p.get("nullable") == Some(&Value::Bool(true)))
            .map(|(k, _)| k.clone())
            .collect(),
        _ => Vec::new(),
    };
    if let Some(Value::Array(required)) = s.get_mut("required") {
        required.retain(|r| !r.as_str().is_some_and(|r| nullable_props.iter().any(|p| p == r)));
    }
    if s.get("additionalProperties").and_then(|ap| ap.get("nullable")) == Some(&Value::Bool(true)) {
        s.remove("required");
    }
    if s.get("required").and_then(Value::as_array).is_some_and(Vec::is_empty) {
        s.remove("required");
    }
    each_child(s, &mut to_v2);
}

/// `apiVersion`, `kind` and `metadata` on embedded resources (bottom up), except where
/// swagger 2.0 lets unknown fields through (kubectl would then reject the others).
fn add_embedded(s: &mut Map<String, Value>, v2: bool) {
    each_child(s, &mut |child| add_embedded(child, v2));
    if v2 && is_true(s, PRESERVE_UNKNOWN) {
        return;
    }
    if is_true(s, EMBEDDED) {
        set_properties(
            s,
            [
                ("apiVersion", json!({"description": EMBEDDED_API_VERSION_DESCRIPTION, "type": "string"})),
                ("kind", json!({"description": EMBEDDED_KIND_DESCRIPTION, "type": "string"})),
                ("metadata", described_ref(METADATA_DESCRIPTION, OBJECT_META)),
            ],
        );
        let required = s.entry("required").or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(required) = required {
            for field in ["kind", "apiVersion"] {
                if !required.iter().any(|r| r == field) {
                    required.push(Value::String(field.into()));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd(schema: Value) -> CrdVersion {
        CrdVersion {
            group: "stable.example.com".into(),
            version: "v1".into(),
            kind: "Widget".into(),
            list_kind: "WidgetList".into(),
            plural: "widgets".into(),
            schema: Some(schema.into()),
            selectable_fields: vec![".spec.color".into()],
        }
    }

    #[test]
    fn definition_names_reverse_the_group() {
        assert_eq!(definition_name("stable.example.com", "v1", "Widget"), "com.example.stable.v1.Widget");
    }

    #[test]
    fn the_kind_gets_type_meta_object_meta_and_its_markers() {
        let def = kind_definition(
            &crd(
                json!({"type": "object", "example": {}, "properties": {"metadata": {"type": "object"}, "spec": {"type": "object", "externalDocs": {"url": "x"}}}}),
            ),
            false,
        );
        assert_eq!(
            def["properties"]["metadata"],
            json!({"description": METADATA_DESCRIPTION, "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"})
        );
        assert_eq!(def["properties"]["spec"], json!({"type": "object"}));
        assert_eq!(def["properties"]["kind"]["type"], "string");
        assert!(def.get("example").is_none());
        assert_eq!(
            def["x-kubernetes-group-version-kind"],
            json!([{"group": "stable.example.com", "kind": "Widget", "version": "v1"}])
        );
        assert_eq!(def["x-kubernetes-selectable-fields"], json!([{"fieldPath": "spec.color"}]));
    }

    #[test]
    fn int_or_string_unfolds_and_swagger_2_drops_junctors() {
        let schema = json!({"type": "object", "properties": {
            "port": {"x-kubernetes-int-or-string": true},
            "both": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
        }});
        let v3 = kind_definition(&crd(schema.clone()), false);
        assert_eq!(v3["properties"]["port"]["anyOf"], json!([{"type": "integer"}, {"type": "string"}]));
        assert!(v3["properties"]["both"].get("allOf").is_none());
        let v2 = kind_definition(&crd(schema), true);
        assert_eq!(v2["properties"]["port"], json!({"x-kubernetes-int-or-string": true}));
    }

    #[test]
    fn swagger_2_reduces_what_kubectl_cannot_validate() {
        let schema = json!({"type": "object", "required": ["a", "b"], "properties": {
            "a": {"type": "string", "nullable": true},
            "b": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"c": {"type": "string"}}},
            "list": {"type": "array", "items": {"type": "object", "nullable": true, "properties": {"x": {"type": "string"}}}},
            "emb": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true},
        }});
        let v2 = kind_definition(&crd(schema.clone()), true);
        let p = &v2["properties"];
        assert_eq!(v2["required"], json!(["b"]));
        assert_eq!(p["a"], json!({}));
        assert_eq!(p["b"], json!({"x-kubernetes-preserve-unknown-fields": true}));
        assert_eq!(p["list"], json!({"type": "array", "items": {}}));
        assert_eq!(
            p["emb"],
            json!({"x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true})
        );
        let v3 = kind_definition(&crd(schema), false);
        assert_eq!(v3["properties"]["emb"]["required"], json!(["kind", "apiVersion"]));
        assert_eq!(
            v3["properties"]["emb"]["properties"]["metadata"]["$ref"],
            json!("#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
        );
    }

    #[test]
    fn a_root_preserving_unknown_fields_is_a_bare_object_in_swagger_2() {
        let schema = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"spec": {"type": "object"}}});
        let v2 = kind_definition(&crd(schema.clone()), true);
        assert_eq!(v2["type"], "object");
        assert!(v2.get("properties").is_none());
        assert!(kind_definition(&crd(schema), false)["properties"].get("spec").is_some());
        let none = kind_definition(&CrdVersion { schema: None, ..crd(json!({})) }, false);
        assert_eq!(none.as_object().map(|m| m.len()), Some(3));
    }

    #[test]
    fn the_list_kind_lists_items_of_the_kind() {
        let list = list_definition(&crd(json!({"type": "object"})));
        assert_eq!(list["description"], "WidgetList is a list of Widget");
        assert_eq!(list["properties"]["items"]["items"], json!({"$ref": "#/definitions/com.example.stable.v1.Widget"}));
        assert_eq!(list["x-kubernetes-group-version-kind"][0]["kind"], "WidgetList");
    }
}
