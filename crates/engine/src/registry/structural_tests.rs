//! Tests of `structural`: each rule with kube's exact path and message.

use super::*;
use crate::registry::fixtures::schema;
use serde_json::json;

fn errors(value: Value) -> Vec<String> {
    let s = schema(value);
    assert_eq!(new_structural_error(&s), None);
    validate_structural(&Path::root("spec").child("validation").child("openAPIV3Schema"), &s)
        .iter()
        .map(ToString::to_string)
        .collect()
}

const ROOT: &str = "spec.validation.openAPIV3Schema";

#[test]
fn structural_schemas_pass() {
    let ok = [
        json!({"type": "object"}),
        json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
        json!({"x-kubernetes-preserve-unknown-fields": true}),
        json!({"type": "object", "properties": {"port": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]}}}),
        json!({"type": "object", "properties": {"port": {"x-kubernetes-int-or-string": true, "allOf": [{"anyOf": [{"type": "integer"}, {"type": "string"}]}, {"maximum": 3}]}}}),
        json!({"type": "object", "properties": {"metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 5}}}}}),
        json!({"type": "object", "properties": {"a": {"type": "string"}}, "anyOf": [{"properties": {"a": {"pattern": "x"}}}, {"required": ["a"]}]}),
        json!({"type": "object", "properties": {"spec": {"type": "object", "additionalProperties": {"type": "string"}}}}),
        json!({"type": "object", "properties": {"pod": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}}}),
    ];
    for value in ok {
        assert_eq!(errors(value.clone()), Vec::<String>::new(), "{value}");
        assert!(is_structural(&schema(value)));
    }
}

#[test]
fn each_rule_has_kubes_message() {
    let cases: Vec<(Value, Vec<String>)> = vec![
        (json!({}), vec![format!("{ROOT}.type: Required value: must not be empty at the root")]),
        (
            json!({"type": "object", "properties": {"spec": {}}}),
            vec![format!(
                "{ROOT}.properties[spec].type: Required value: must not be empty for specified object fields"
            )],
        ),
        (
            json!({"type": "object", "properties": {"l": {"type": "array"}}}),
            vec![format!("{ROOT}.properties[l].items: Required value: must be specified")],
        ),
        (
            json!({"type": "object", "properties": {"l": {"type": "array", "items": {}}}}),
            vec![format!(
                "{ROOT}.properties[l].items.type: Required value: must not be empty for specified array items"
            )],
        ),
        (
            json!({"type": "string"}),
            vec![format!("{ROOT}.type: Invalid value: \"string\": must be object at the root")],
        ),
        (
            json!({"type": "object", "additionalProperties": {"type": "string"}}),
            vec![format!("{ROOT}.additionalProperties: Forbidden: must not be used at the root")],
        ),
        (
            json!({"type": "object", "properties": {"p": {"x-kubernetes-int-or-string": true, "x-kubernetes-preserve-unknown-fields": true}}}),
            vec![format!(
                "{ROOT}.properties[p].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true"
            )],
        ),
        (
            json!({"type": "object", "properties": {"p": {"type": "object", "x-kubernetes-int-or-string": true, "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}}}),
            vec![
                format!(
                    "{ROOT}.properties[p].x-kubernetes-embedded-resource: Invalid value: true: must be false if x-kubernetes-int-or-string is true"
                ),
                format!(
                    "{ROOT}.properties[p].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true"
                ),
            ],
        ),
        (
            json!({"type": "object", "properties": {"e": {"x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}}}),
            vec![format!(
                "{ROOT}.properties[e].type: Required value: must be object if x-kubernetes-embedded-resource is true"
            )],
        ),
        (
            json!({"type": "object", "properties": {"e": {"type": "string", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}}}),
            vec![format!(
                "{ROOT}.properties[e].type: Invalid value: \"string\": must be object if x-kubernetes-embedded-resource is true"
            )],
        ),
        (
            json!({"type": "object", "properties": {"e": {"type": "object", "x-kubernetes-embedded-resource": true}}}),
            vec![format!(
                "{ROOT}.properties[e].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"
            )],
        ),
        (
            json!({"type": "object", "properties": {"e": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true, "additionalProperties": {"type": "string"}}}}),
            vec![format!(
                "{ROOT}.properties[e].additionalProperties: Forbidden: must not be used if x-kubernetes-embedded-resource is set"
            )],
        ),
        (
            json!({"type": "object", "properties": {"kind": {"type": "integer"}, "apiVersion": {"type": "integer"}}}),
            vec![
                format!("{ROOT}.properties[apiVersion].type: Invalid value: \"integer\": must be string"),
                format!("{ROOT}.properties[kind].type: Invalid value: \"integer\": must be string"),
            ],
        ),
        // The type is checked on its own, then ignored by the name/generateName rule.
        (
            json!({"type": "object", "properties": {"metadata": {"type": "string"}}}),
            vec![format!("{ROOT}.properties[metadata].type: Invalid value: \"string\": must be object")],
        ),
        (
            json!({"type": "object", "properties": {"metadata": {"type": "object", "properties": {"labels": {"type": "object"}}}}}),
            vec![format!(
                "{ROOT}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified"
            )],
        ),
        (
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "anyOf": [{"type": "string"}]}),
            vec![format!("{ROOT}.anyOf[0].type: Forbidden: must be empty to be structural")],
        ),
        (
            json!({"type": "object", "properties": {"a": {"type": "string", "not": {"description": "d", "title": "t", "nullable": true, "default": "x"}}}}),
            vec![
                format!("{ROOT}.properties[a].not.default: Forbidden: must be undefined to be structural"),
                format!("{ROOT}.properties[a].not.description: Forbidden: must be empty to be structural"),
                format!("{ROOT}.properties[a].not.nullable: Forbidden: must be false to be structural"),
                format!("{ROOT}.properties[a].not.title: Forbidden: must be empty to be structural"),
            ],
        ),
        (
            json!({"type": "object", "oneOf": [{"additionalProperties": true, "x-kubernetes-list-type": "set", "x-kubernetes-map-type": "atomic", "x-kubernetes-list-map-keys": ["k"], "x-kubernetes-preserve-unknown-fields": true, "x-kubernetes-embedded-resource": true, "x-kubernetes-int-or-string": true, "x-kubernetes-validations": [{"rule": "true"}]}]}),
            vec![
                format!("{ROOT}.oneOf[0].additionalProperties: Forbidden: must be undefined to be structural"),
                format!("{ROOT}.oneOf[0].x-kubernetes-embedded-resource: Forbidden: must be false to be structural"),
                format!("{ROOT}.oneOf[0].x-kubernetes-int-or-string: Forbidden: must be false to be structural"),
                format!("{ROOT}.oneOf[0].x-kubernetes-list-map-keys: Forbidden: must be empty to be structural"),
                format!("{ROOT}.oneOf[0].x-kubernetes-list-type: Forbidden: must be undefined to be structural"),
                format!("{ROOT}.oneOf[0].x-kubernetes-map-type: Forbidden: must be undefined to be structural"),
                format!(
                    "{ROOT}.oneOf[0].x-kubernetes-preserve-unknown-fields: Forbidden: must be false to be structural"
                ),
                format!("{ROOT}.oneOf[0].x-kubernetes-validations: Forbidden: must be empty to be structural"),
            ],
        ),
        (
            json!({"type": "object", "properties": {"metadata": {"type": "object"}}, "allOf": [{"properties": {"metadata": {}}}]}),
            vec![format!("{ROOT}.allOf[0].properties[metadata]: Forbidden: must not be specified in a nested context")],
        ),
        (
            json!({"type": "object", "anyOf": [{"properties": {"a": {"items": {}}}}]}),
            vec![format!(
                "{ROOT}.properties[a]: Required value: because it is defined in {ROOT}.anyOf[0].properties[a]"
            )],
        ),
        (
            json!({"type": "object", "properties": {"a": {"type": "object"}}, "anyOf": [{"properties": {"a": {"items": {}}}}]}),
            vec![format!(
                "{ROOT}.properties[a].items: Required value: because it is defined in {ROOT}.anyOf[0].properties[a].items"
            )],
        ),
        // An int-or-string pattern anywhere but in the exempt position is a violation.
        (
            json!({"type": "object", "properties": {"p": {"x-kubernetes-int-or-string": true, "oneOf": [{"type": "integer"}, {"type": "string"}]}}}),
            vec![
                format!("{ROOT}.properties[p].oneOf[0].type: Forbidden: must be empty to be structural"),
                format!("{ROOT}.properties[p].oneOf[1].type: Forbidden: must be empty to be structural"),
            ],
        ),
    ];
    for (value, want) in cases {
        assert_eq!(errors(value.clone()), want, "{value}");
        assert!(!is_structural(&schema(value)));
    }
}

#[test]
fn new_structural_refusals() {
    let cases = [
        (json!({"type": "object", "id": "x"}), "OpenAPIV3Schema 'id' is not supported"),
        (json!({"type": "object", "$schema": "x"}), "OpenAPIV3Schema 'schema' is not supported"),
        (json!({"type": "object", "$ref": "#/x"}), "OpenAPIV3Schema '$ref' is not supported"),
        (
            json!({"type": "object", "patternProperties": {"a": {}}}),
            "OpenAPIV3Schema 'patternProperties' is not supported",
        ),
        (json!({"type": "object", "dependencies": {"a": ["b"]}}), "OpenAPIV3Schema 'dependencies' is not supported"),
        (json!({"type": "object", "additionalItems": false}), "OpenAPIV3Schema 'additionalItems' is not supported"),
        (json!({"type": "object", "definitions": {"a": {}}}), "OpenAPIV3Schema 'definitions' is not supported"),
        (
            json!({"type": "object", "properties": {"l": {"type": "array", "items": [{}]}}}),
            "OpenAPIV3Schema 'items' must be a schema, but is an array",
        ),
        (
            json!({"type": "object", "x-kubernetes-preserve-unknown-fields": false}),
            "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined",
        ),
        (json!({"type": "object", "allOf": [{"id": "nested"}]}), "OpenAPIV3Schema 'id' is not supported"),
    ];
    for (value, want) in cases {
        assert_eq!(new_structural_error(&schema(value.clone())), Some(want), "{value}");
    }
}
