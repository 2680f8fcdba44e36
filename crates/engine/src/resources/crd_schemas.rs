//! A CRD version's `schema` as the typed decode and round trip treat it, on the JSON where
//! it is: whether it decodes as k8s-openapi's `CustomResourceValidation`, and what writing
//! it back from that type would change. A large CRD's schemas are nearly all of its bytes,
//! and typing them builds 864 bytes a node (a map of properties allocates room for eleven):
//! typing schemas was 29% of the CPU of a burst of CRD writes, most of it only to check
//! them and write them back.

use crate::representation::gofmt::{go_float64, integral_floats};
use serde_json::Value;

/// Whether `validation` surely decodes as `CustomResourceValidation`. `false` means "not
/// sure" as well as "no": the caller then decodes it typed, which says which, and why in
/// its words. Never `true` for what the typed decode refuses.
pub fn decodes(validation: &Value) -> bool {
    let Some(map) = validation.as_object() else { return false };
    map.get("openAPIV3Schema").is_none_or(|s| s.is_null() || node_decodes(s))
}

/// [`decodes`] for one `JSONSchemaProps`: every field is optional (`null` is none), and
/// unknown fields are skipped.
fn node_decodes(node: &Value) -> bool {
    let Some(map) = node.as_object() else { return false };
    map.iter().all(|(key, v)| {
        v.is_null()
            || match key.as_str() {
                "id"
                | "$schema"
                | "$ref"
                | "description"
                | "type"
                | "format"
                | "title"
                | "pattern"
                | "x-kubernetes-list-type"
                | "x-kubernetes-map-type" => v.is_string(),
                "maximum" | "minimum" | "multipleOf" => v.is_number(),
                "maxLength" | "minLength" | "maxItems" | "minItems" | "maxProperties" | "minProperties" => v.is_i64(),
                "exclusiveMaximum"
                | "exclusiveMinimum"
                | "uniqueItems"
                | "nullable"
                | "x-kubernetes-preserve-unknown-fields"
                | "x-kubernetes-embedded-resource"
                | "x-kubernetes-int-or-string" => v.is_boolean(),
                "default" | "example" => true,
                "enum" => v.is_array(),
                "required" | "x-kubernetes-list-map-keys" => strings(v),
                "items" => v.as_array().map_or_else(|| node_decodes(v), |a| a.iter().all(node_decodes)),
                "allOf" | "anyOf" | "oneOf" => v.as_array().is_some_and(|a| a.iter().all(node_decodes)),
                "not" => node_decodes(v),
                "properties" | "patternProperties" | "definitions" => {
                    v.as_object().is_some_and(|m| m.values().all(node_decodes))
                }
                "additionalProperties" | "additionalItems" => v.is_boolean() || node_decodes(v),
                "dependencies" => v.as_object().is_some_and(|m| m.values().all(|d| strings(d) || node_decodes(d))),
                "externalDocs" => fields_decode(v, &["description", "url"], &[]),
                "x-kubernetes-validations" => v.as_array().is_some_and(|rules| {
                    rules.iter().all(|r| {
                        fields_decode(
                            r,
                            &["rule", "message", "messageExpression", "reason", "fieldPath"],
                            &["optionalOldSelf"],
                        )
                    })
                }),
                _ => true,
            }
    })
}

fn strings(v: &Value) -> bool {
    v.as_array().is_some_and(|a| a.iter().all(Value::is_string))
}

/// A plain struct of optional string and bool fields.
fn fields_decode(v: &Value, strings: &[&str], bools: &[&str]) -> bool {
    let Some(map) = v.as_object() else { return false };
    map.iter().all(|(k, v)| {
        v.is_null()
            || if strings.contains(&k.as_str()) {
                v.is_string()
            } else {
                !bools.contains(&k.as_str()) || v.is_boolean()
            }
    })
}

/// What the typed round trip does to a decoded `validation`, done in place: every field of
/// a schema node is optional, so a `null` is dropped; `maximum`, `minimum` and
/// `multipleOf` are float64, written as Go writes one ([`go_float64`]); a CEL rule without
/// `rule` gets an empty one. The values a schema holds (`default`, `enum`, `example`) stay
/// as written: kube validates them so, and writes them as Go does only when storing.
/// Only for what [`decodes`] or the typed decode accepted.
pub fn settle(validation: &mut Value) {
    if let Some(map) = validation.as_object_mut() {
        map.retain(|_, v| !v.is_null());
        map.values_mut().for_each(settle_node);
    }
}

/// An empty collection (`enum: []`, `properties: {}`) found in a schema.
#[derive(Debug, Clone, PartialEq)]
pub struct EmptyCollection {
    /// The JSON pointer, under the version, of the schema node holding it.
    pub node: String,
    pub key: String,
    pub value: Value,
}

/// The empty collections of a version's schema, when the version has `/status` and its
/// root holds what kube's root check refuses there. Go decodes `[]` and
/// `{}` into slices and maps that are not nil, which that check refuses at the root and
/// quotes as `[]T{}` anywhere in the schema, though its encoder would have left them out.
/// The round trip drops them, so they are taken here and put back for validation to see;
/// never stored, as the check refuses every schema they are put back into.
pub fn empty_collections_refused(version: &Value) -> Vec<EmptyCollection> {
    // The fields of `JSONSchemaProps` the check refuses at the root (their Go zero, and
    // `null`, pass it).
    const REFUSED_AT_ROOT: [&str; 22] = [
        "id",
        "$schema",
        "$ref",
        "nullable",
        "default",
        "enum",
        "maxProperties",
        "minProperties",
        "allOf",
        "oneOf",
        "anyOf",
        "not",
        "additionalProperties",
        "patternProperties",
        "dependencies",
        "additionalItems",
        "definitions",
        "x-kubernetes-embedded-resource",
        "x-kubernetes-int-or-string",
        "x-kubernetes-list-map-keys",
        "x-kubernetes-list-type",
        "x-kubernetes-map-type",
    ];
    let status = version.pointer("/subresources/status").is_some_and(Value::is_object);
    let Some(root) = version.pointer("/schema/openAPIV3Schema").filter(|_| status) else { return Vec::new() };
    let set = |v: &Value| !matches!(v, Value::Null | Value::Bool(false)) && v.as_str() != Some("");
    let refused = REFUSED_AT_ROOT.iter().any(|key| root.get(*key).is_some_and(set))
        || root.get("type").and_then(Value::as_str).is_some_and(|t| !t.is_empty() && t != "object");
    if !refused {
        return Vec::new();
    }
    let mut found = Vec::new();
    empty_collections_in(root, &mut "/schema/openAPIV3Schema".to_string(), &mut found);
    found
}

fn is_empty_collection(v: &Value) -> bool {
    match v {
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        _ => false,
    }
}

/// [`empty_collections_refused`]'s walk: `node`'s empty collections, then those of the
/// schemas it holds by value (Go prints the ones held by pointer as addresses).
fn empty_collections_in(node: &Value, pointer: &mut String, found: &mut Vec<EmptyCollection>) {
    const COLLECTIONS: [&str; 11] = [
        "enum",
        "required",
        "allOf",
        "oneOf",
        "anyOf",
        "properties",
        "patternProperties",
        "dependencies",
        "definitions",
        "x-kubernetes-list-map-keys",
        "x-kubernetes-validations",
    ];
    let Some(map) = node.as_object() else { return };
    for (key, value) in map {
        if COLLECTIONS.contains(&key.as_str()) && is_empty_collection(value) {
            found.push(EmptyCollection { node: pointer.clone(), key: key.clone(), value: value.clone() });
            continue;
        }
        let len = pointer.len();
        // A step of a JSON pointer: `~` and `/` escaped.
        let mut visit = |step: &str, child: &Value, pointer: &mut String| {
            pointer.push('/');
            pointer.push_str(key);
            pointer.push('/');
            pointer.push_str(&step.replace('~', "~0").replace('/', "~1"));
            empty_collections_in(child, pointer, found);
            pointer.truncate(len);
        };
        match (key.as_str(), value) {
            ("properties" | "patternProperties" | "definitions" | "dependencies", Value::Object(children)) => {
                children.iter().for_each(|(name, child)| visit(name, child, pointer));
            }
            ("allOf" | "oneOf" | "anyOf", Value::Array(children)) => {
                children.iter().enumerate().for_each(|(i, child)| visit(&i.to_string(), child, pointer));
            }
            _ => {}
        }
    }
}

/// Drops what kube's decoder ignores and k8s-openapi's refuses: an `items` that is neither
/// a schema nor a list of them, and a `dependencies` entry that is neither a schema nor a
/// list (their Go unions' `UnmarshalJSON` leaves those unset).
pub fn drop_ignored(validation: &mut Value) {
    if let Some(schema) = validation.get_mut("openAPIV3Schema") {
        drop_ignored_in(schema);
    }
}

fn drop_ignored_in(node: &mut Value) {
    let Some(map) = node.as_object_mut() else { return };
    if map.get("items").is_some_and(|items| !(items.is_object() || items.is_array() || items.is_null())) {
        map.remove("items");
    }
    if let Some(Value::Object(dependencies)) = map.get_mut("dependencies") {
        // The entry stays, holding the zero value (an empty list of names, as the typed
        // decode takes no null): the map is not empty to `omitempty`, and is refused.
        for d in dependencies.values_mut().filter(|d| !(d.is_object() || d.is_array())) {
            *d = Value::Array(Vec::new());
        }
    }
    for (key, value) in map.iter_mut() {
        sub_schemas(key, value, drop_ignored_in);
    }
}

/// Runs `f` on each schema the keyword `key` holds in `value` (none for other keywords):
/// the maps of them, the lists of them, and the single ones.
fn sub_schemas(key: &str, value: &mut Value, f: fn(&mut Value)) {
    match (key, value) {
        // A dependency may be a list of names: not an object, and `f` leaves it as it is.
        ("properties" | "patternProperties" | "definitions" | "dependencies", Value::Object(schemas)) => {
            schemas.values_mut().for_each(f);
        }
        ("items" | "allOf" | "anyOf" | "oneOf", Value::Array(schemas)) => schemas.iter_mut().for_each(f),
        ("items" | "not" | "additionalProperties" | "additionalItems", value) => f(value),
        _ => {}
    }
}

/// The numbers of a settled `validation` as kube stores them: the float64 keywords as Go
/// writes a float64, and the values a schema holds (`default`, `enum`, `example`) as the
/// numbers kube's decoder reads back ([`integral_floats`]: `2.0` is `2`, `-0` is `0`).
pub fn store_numbers(validation: &mut Value) {
    if let Some(schema) = validation.get_mut("openAPIV3Schema") {
        store_numbers_in(schema);
    }
}

fn store_numbers_in(node: &mut Value) {
    let Some(map) = node.as_object_mut() else { return };
    for (key, value) in map.iter_mut() {
        match key.as_str() {
            "maximum" | "minimum" | "multipleOf" => typed_float64(value),
            "properties"
            | "patternProperties"
            | "definitions"
            | "dependencies"
            | "items"
            | "allOf"
            | "anyOf"
            | "oneOf"
            | "not"
            | "additionalProperties"
            | "additionalItems" => sub_schemas(key, value, store_numbers_in),
            _ => integral_floats(value),
        }
    }
}

/// A float64 field of `JSONSchemaProps` as Go writes it: a whole number without fraction,
/// but a zero keeps its sign (`-0`), which the integer form would lose.
fn typed_float64(value: &mut Value) {
    match value.as_f64() {
        Some(f) if f == 0.0 && f.is_sign_negative() => *value = Value::from(f),
        Some(f) => *value = go_float64(f),
        None => {}
    }
}

/// [`settle`] for one `JSONSchemaProps` and the schemas under it.
fn settle_node(node: &mut Value) {
    let Some(map) = node.as_object_mut() else { return };
    map.retain(|_, v| !v.is_null());
    for (key, value) in map.iter_mut() {
        match (key.as_str(), value) {
            ("maximum" | "minimum" | "multipleOf", value) => typed_float64(value),
            ("externalDocs", Value::Object(docs)) => docs.retain(|_, v| !v.is_null()),
            ("x-kubernetes-validations", Value::Array(rules)) => {
                for rule in rules.iter_mut().filter_map(Value::as_object_mut) {
                    rule.retain(|_, v| !v.is_null());
                    rule.entry("rule").or_insert_with(|| Value::from(""));
                }
            }
            (key, value) => sub_schemas(key, value, settle_node),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceValidation;
    use serde::Deserialize;
    use serde_json::json;

    /// Every field of `JSONSchemaProps` (kube's, which k8s-openapi's has too), and one
    /// it lacks.
    fn fields() -> Vec<&'static str> {
        super::super::crd_struct::SCHEMA.fields.iter().map(|f| f.json).chain(["bogus"]).collect()
    }

    /// A value of every JSON shape a field may be given.
    fn shapes() -> Vec<Value> {
        vec![
            json!(null),
            json!(true),
            json!(3),
            json!(-3),
            json!(1.5),
            json!(2.0),
            json!(u64::MAX),
            json!("s"),
            json!([]),
            json!(["s"]),
            json!([1]),
            json!([null]),
            json!({}),
            json!([{}]),
            json!([{}, 1]),
            json!({"type": "string"}),
            json!({"type": 1}),
            json!({"a": {}}),
            json!({"a": ["b"]}),
            json!({"a": 1}),
            json!({"a": null}),
            json!({"rule": "self > 0"}),
            json!([{"rule": "self > 0", "optionalOldSelf": true}]),
            json!([{"rule": 1}]),
            json!([{"optionalOldSelf": "yes"}]),
            json!([{"bogus": 1}]),
            json!({"url": 1}),
            json!({"url": "u", "description": null}),
        ]
    }

    fn typed_decodes(validation: &Value) -> bool {
        CustomResourceValidation::deserialize(validation).is_ok()
    }

    #[test]
    fn a_schema_is_sure_to_decode_exactly_when_the_typed_decode_takes_it() {
        let mut checked = 0;
        for field in fields() {
            for shape in shapes() {
                // At the root, and one level down under each keyword that holds schemas.
                let node = json!({ field: shape });
                for schema in [
                    node.clone(),
                    json!({"properties": {"p": node}}),
                    json!({"items": [node]}),
                    json!({"additionalProperties": node}),
                    json!({"dependencies": {"d": node}}),
                ] {
                    let validation = json!({"openAPIV3Schema": schema});
                    assert_eq!(decodes(&validation), typed_decodes(&validation), "{validation}");
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, 45 * shapes().len() * 5, "every field of JSONSchemaProps, and one more");
        for validation in [json!(null), json!([]), json!({"openAPIV3Schema": []}), json!({"openAPIV3Schema": null})] {
            assert_eq!(decodes(&validation), typed_decodes(&validation), "{validation}");
        }
    }

    #[test]
    fn empty_collections_are_kept_only_where_the_root_check_refuses_the_schema() {
        let version = |subresources: Value, root: Value| json!({"name": "v1", "subresources": subresources, "schema": {"openAPIV3Schema": root}});
        let root = json!({"type": "object", "enum": [], "required": [], "properties": {"a/b~c": {"properties": {}}},
            "allOf": [{"required": []}], "not": {"required": []}});
        let found = empty_collections_refused(&version(json!({"status": {}}), root.clone()));
        let found: Vec<_> = found.iter().map(|e| format!("{} {} {}", e.node, e.key, e.value)).collect();
        assert_eq!(
            found,
            [
                "/schema/openAPIV3Schema/allOf/0 required []",
                "/schema/openAPIV3Schema enum []",
                "/schema/openAPIV3Schema/properties/a~1b~0c properties {}",
                "/schema/openAPIV3Schema required []",
            ]
        );
        // No /status, or a root the check lets pass (zero values and nulls pass it).
        assert!(empty_collections_refused(&version(json!({"scale": null}), root)).is_empty());
        let allowed = json!({"type": "object", "required": [], "nullable": false, "default": null, "id": ""});
        assert!(empty_collections_refused(&version(json!({"status": {}}), allowed)).is_empty());
        let typed = json!({"type": "string", "required": []});
        assert_eq!(empty_collections_refused(&version(json!({"status": {}}), typed)).len(), 1);
    }
}
