//! Schemas as kube-openapi writes them: the field order of its `spec.Schema` struct, the
//! swagger 2.0 and OpenAPI v3 spellings of references, and reference walking.
//!
//! Schemas are held as `serde_json::Value`s in swagger 2.0 form (`$ref` next to a
//! `description`, pointing into `#/definitions/`); [`to_v3`] rewrites one for OpenAPI v3,
//! where a reference with siblings is wrapped in `allOf` as kube-openapi's v3 builder does.

use super::json::J;
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// Where definitions live in swagger 2.0.
pub const V2_PREFIX: &str = "#/definitions/";
/// Where schemas live in OpenAPI v3.
pub const V3_PREFIX: &str = "#/components/schemas/";

/// `spec.Schema`'s JSON fields in struct order (`SchemaProps`, then `SwaggerSchemaProps`,
/// then `$schema` and `$ref`); extensions follow, sorted.
pub const FIELD_ORDER: [&str; 40] = [
    "id",
    "description",
    "type",
    "nullable",
    "format",
    "title",
    "default",
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
    "items",
    "allOf",
    "oneOf",
    "anyOf",
    "not",
    "properties",
    "additionalProperties",
    "patternProperties",
    "dependencies",
    "additionalItems",
    "definitions",
    "discriminator",
    "readOnly",
    "xml",
    "externalDocs",
    "example",
    "$schema",
    "$ref",
];

/// Fields holding floats (`*float64` in Go), written with Go's float formatting.
pub const FLOAT_FIELDS: [&str; 3] = ["maximum", "minimum", "multipleOf"];

/// `x-kubernetes-validations` rules in `ValidationRule`'s field order.
pub const RULE_ORDER: [&str; 6] = ["rule", "message", "messageExpression", "reason", "fieldPath", "optionalOldSelf"];

/// A schema in kube-openapi's field order, zero values omitted as Go's `omitempty` does.
pub fn ordered(schema: &Value) -> J {
    let Value::Object(map) = schema else { return J::from(schema) };
    let mut out = J::obj();
    for key in FIELD_ORDER {
        if let Some(v) = map.get(key).filter(|v| !is_omitted(key, v)) {
            out.push(key, field(key, v));
        }
    }
    for (key, v) in map {
        if !FIELD_ORDER.contains(&key.as_str()) {
            out.push(key, extension(key, v));
        }
    }
    out
}

/// Whether Go leaves the field out (`omitempty` / `omitzero` on a zero value).
pub fn is_omitted(key: &str, v: &Value) -> bool {
    if matches!(key, "default" | "example") {
        // Raw values: only an absent (nil) one is left out.
        return v.is_null();
    }
    match v {
        Value::Null => true,
        Value::Bool(b) => !b && key != "additionalProperties" && key != "additionalItems",
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => {
            o.is_empty() && matches!(key, "properties" | "patternProperties" | "dependencies" | "definitions")
        }
        Value::Number(_) => false,
    }
}

fn field(key: &str, v: &Value) -> J {
    match (key, v) {
        ("items", Value::Array(schemas)) => J::Arr(schemas.iter().map(ordered).collect()),
        ("items" | "not", _) => ordered(v),
        ("additionalProperties" | "additionalItems", Value::Bool(b)) => J::Bool(*b),
        ("additionalProperties" | "additionalItems", _) => ordered(v),
        ("allOf" | "oneOf" | "anyOf", Value::Array(schemas)) => J::Arr(schemas.iter().map(ordered).collect()),
        ("properties" | "patternProperties" | "definitions", Value::Object(m)) => {
            J::Obj(m.iter().map(|(k, s)| (k.clone(), ordered(s))).collect())
        }
        (k, Value::Number(n)) if FLOAT_FIELDS.contains(&k) => {
            J::Num(n.as_f64().and_then(serde_json::Number::from_f64).unwrap_or_else(|| n.clone()))
        }
        _ => J::from(v),
    }
}

fn extension(key: &str, v: &Value) -> J {
    match (key, v) {
        ("x-kubernetes-validations", Value::Array(rules)) => J::Arr(
            rules
                .iter()
                .map(|rule| {
                    let mut out = J::obj();
                    for k in RULE_ORDER {
                        if let Some(x) = rule.get(k).filter(|x| !is_omitted(k, x)) {
                            out.push(k, J::from(x));
                        }
                    }
                    out
                })
                .collect(),
        ),
        _ => J::from(v),
    }
}

/// The swagger 2.0 schema in OpenAPI v3 form: references point into
/// `#/components/schemas/`, and a reference with siblings becomes `allOf: [{$ref}]`.
pub fn to_v3(schema: &Value) -> Value {
    match schema {
        Value::Array(items) => Value::Array(items.iter().map(to_v3).collect()),
        Value::Object(map) => {
            let mut out = Map::new();
            for (k, v) in map {
                match (k.as_str(), v) {
                    ("$ref", Value::String(r)) => {
                        let r = Value::String(r.replacen(V2_PREFIX, V3_PREFIX, 1));
                        if map.len() == 1 {
                            out.insert(k.clone(), r);
                        } else {
                            let mut only = Map::new();
                            only.insert("$ref".into(), r);
                            out.insert("allOf".into(), Value::Array(vec![Value::Object(only)]));
                        }
                    }
                    // Raw values, not schemas.
                    ("default" | "enum" | "example" | "x-kubernetes-validations", _) => {
                        out.insert(k.clone(), v.clone());
                    }
                    ("properties" | "patternProperties" | "definitions", Value::Object(props)) => {
                        out.insert(
                            k.clone(),
                            Value::Object(props.iter().map(|(p, s)| (p.clone(), to_v3(s))).collect()),
                        );
                    }
                    _ => {
                        out.insert(k.clone(), to_v3(v));
                    }
                }
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// The names of the definitions a schema refers to directly (swagger 2.0 form).
pub fn refs(schema: &Value, out: &mut BTreeSet<String>) {
    match schema {
        Value::Object(map) => {
            for (k, v) in map {
                match (k.as_str(), v) {
                    ("$ref", Value::String(r)) => {
                        if let Some(name) = r.strip_prefix(V2_PREFIX) {
                            out.insert(name.to_string());
                        }
                    }
                    ("default" | "enum" | "example" | "x-kubernetes-validations", _) => {}
                    // Keys of these maps are names, not keywords (JSONSchemaProps has a
                    // property called `default`).
                    ("properties" | "patternProperties" | "definitions", Value::Object(named)) => {
                        named.values().for_each(|s| refs(s, out));
                    }
                    _ => refs(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}

/// A `$ref` to a definition, swagger 2.0 form.
pub fn reference(definition: &str) -> Value {
    let mut map = Map::new();
    map.insert("$ref".into(), Value::String(format!("{V2_PREFIX}{definition}")));
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_follow_kube_openapi_struct_order() {
        let s = json!({
            "x-kubernetes-list-type": "atomic",
            "properties": {"b": {"type": "string", "description": "B"}, "a": {"maximum": 10, "type": "integer"}},
            "type": "object",
            "description": "d",
            "required": ["a"],
            "$ref": "#/definitions/x",
            "nullable": false,
        });
        assert_eq!(
            ordered(&s).to_text(),
            r##"{"description":"d","type":"object","required":["a"],"properties":{"a":{"type":"integer","maximum":10},"b":{"description":"B","type":"string"}},"$ref":"#/definitions/x","x-kubernetes-list-type":"atomic"}"##
        );
    }

    #[test]
    fn validation_rules_keep_go_field_order() {
        let s =
            json!({"x-kubernetes-validations": [{"message": "m", "rule": "self > 0", "reason": "FieldValueInvalid"}]});
        assert_eq!(
            ordered(&s).to_text(),
            r#"{"x-kubernetes-validations":[{"rule":"self \u003e 0","message":"m","reason":"FieldValueInvalid"}]}"#
        );
    }

    #[test]
    fn v3_wraps_references_that_have_siblings() {
        let s = json!({
            "properties": {
                "metadata": {"description": "m", "$ref": "#/definitions/io.k8s.M"},
                "items": {"type": "array", "items": {"$ref": "#/definitions/io.k8s.I"}},
                "default": {"$ref": "#/definitions/io.k8s.D"},
            },
            "default": {"$ref": "not a reference"},
        });
        assert_eq!(
            to_v3(&s),
            json!({
                "properties": {
                    "metadata": {"description": "m", "allOf": [{"$ref": "#/components/schemas/io.k8s.M"}]},
                    "items": {"type": "array", "items": {"$ref": "#/components/schemas/io.k8s.I"}},
                    "default": {"$ref": "#/components/schemas/io.k8s.D"},
                },
                "default": {"$ref": "not a reference"},
            })
        );
        let mut found = BTreeSet::new();
        refs(&s, &mut found);
        assert_eq!(found.into_iter().collect::<Vec<_>>(), ["io.k8s.D", "io.k8s.I", "io.k8s.M"]);
    }
}
