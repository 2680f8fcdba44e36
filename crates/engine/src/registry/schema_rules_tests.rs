//! Tests of `schema_rules` (kept apart so that each file stays readable).

use super::*;
use crate::registry::fixtures::schema;
use serde_json::json;

const ALL: SchemaOptions = SchemaOptions {
    require_structural: true,
    require_valid_property_type: true,
    require_atomic_set_type: true,
    require_map_list_keys_map_set_validation: true,
    suppress_expression_cost: false,
};

fn check(value: Value, status_enabled: bool) -> Vec<String> {
    let validation = CustomResourceValidation { open_api_v3_schema: Some(schema(value)) };
    validate_validation(Some(&validation), status_enabled, ALL, &Path::root("spec").child("validation"))
        .iter()
        .map(ToString::to_string)
        .collect()
}

const ROOT: &str = "spec.validation.openAPIV3Schema";

/// A rule with only `rule` and `messageExpression` set, as Go's `%#v` prints it in kube's
/// compile errors.
fn go_rule(rule: &str, message_expression: &str) -> String {
    format!(
        "apiextensions.ValidationRule{{Rule:{rule:?}, Message:\"\", MessageExpression:{message_expression:?}, Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}}"
    )
}

/// Errors with CEL's random `selfType<N>` names made comparable.
fn masked_self_types(errs: Vec<String>) -> Vec<String> {
    let re = regex::Regex::new(r"selfType\d+").expect("re");
    errs.iter().map(|e| re.replace_all(e, "selfTypeN").into_owned()).collect()
}

/// `{type: object, properties: {p: <p>}}`: a structural frame around the node under test.
fn prop(p: Value) -> Value {
    json!({"type": "object", "properties": {"p": p}})
}

#[test]
fn the_widget_schema_passes_with_status_on() {
    let widget = json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"size": {"type": "integer", "minimum": 0, "maximum": 10}}},
        "status": {"type": "object", "properties": {"phase": {"type": "string"}}}
    }});
    assert_eq!(check(widget, true), Vec::<String>::new());
    assert_eq!(
        check(json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}), true),
        Vec::<String>::new()
    );
}

#[test]
fn root_restrictions_with_status_subresource() {
    assert_eq!(check(json!({"type": "string"}), true), [
        "spec.validation.openAPIV3Schema.type: Invalid value: \"string\": only \"object\" is allowed as the type at the root of the schema if the status subresource is enabled".to_string(),
        format!("{ROOT}.type: Invalid value: \"string\": must be object at the root"),
    ]);
    let errs =
        check(json!({"type": "object", "properties": {"a": {"type": "string"}}, "anyOf": [{"required": ["a"]}]}), true);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].starts_with(&format!("{ROOT}: Invalid value: apiextensions.JSONSchemaProps{{ID:\"\", ")),
        "{}",
        errs[0]
    );
    assert!(
        errs[0].ends_with(&format!(
            "only {ALLOWED_AT_ROOT} fields are allowed at the root of the schema if the status subresource is enabled"
        )),
        "{}",
        errs[0]
    );
    // Without /status the same schema is fine.
    assert_eq!(
        check(
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "anyOf": [{"required": ["a"]}]}),
            false
        ),
        Vec::<String>::new()
    );
}

#[test]
fn openapi_subset() {
    let cases: Vec<(Value, Vec<String>)> = vec![
        (
            json!({"type": "object", "nullable": true}),
            vec![format!("{ROOT}.nullable: Forbidden: nullable cannot be true at the root")],
        ),
        (
            prop(json!({"type": "foo"})),
            vec![format!(
                "{ROOT}.properties[p].type: Unsupported value: \"foo\": supported values: \"array\", \"boolean\", \"integer\", \"number\", \"object\", \"string\""
            )],
        ),
        (
            prop(json!({"type": "null"})),
            vec![
                format!(
                    "{ROOT}.properties[p].type: Unsupported value: \"null\": supported values: \"array\", \"boolean\", \"integer\", \"number\", \"object\", \"string\""
                ),
                format!(
                    "{ROOT}.properties[p].type: Forbidden: type cannot be set to null, use nullable as an alternative"
                ),
            ],
        ),
        (
            prop(json!({"type": "string", "id": "x"})),
            vec![format!("{ROOT}.properties[p].id: Forbidden: id is not supported")],
        ),
        (
            prop(json!({"type": "string", "$ref": "#/d"})),
            vec![format!("{ROOT}.properties[p].$ref: Forbidden: $ref is not supported")],
        ),
        (
            prop(json!({"type": "array", "items": {"type": "string"}, "additionalItems": false})),
            vec![format!("{ROOT}.properties[p].additionalItems: Forbidden: additionalItems is not supported")],
        ),
        (
            prop(json!({"type": "object", "patternProperties": {"^a": {"type": "string"}}})),
            vec![format!("{ROOT}.properties[p].patternProperties: Forbidden: patternProperties is not supported")],
        ),
        (
            prop(json!({"type": "object", "definitions": {"d": {"type": "string"}}})),
            vec![format!("{ROOT}.properties[p].definitions: Forbidden: definitions is not supported")],
        ),
        (
            prop(json!({"type": "object", "dependencies": {"a": ["b"]}})),
            vec![format!("{ROOT}.properties[p].dependencies: Forbidden: dependencies is not supported")],
        ),
        (
            prop(json!({"type": "array", "items": [{"type": "string"}]})),
            vec![format!("{ROOT}.properties[p].items: Forbidden: items must be a schema object and not an array")],
        ),
        (
            prop(json!({"type": "array", "items": {"type": "string"}, "uniqueItems": true})),
            vec![format!(
                "{ROOT}.properties[p].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic"
            )],
        ),
        (
            prop(json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false})),
            vec![format!(
                "{ROOT}.properties[p].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive"
            )],
        ),
        (
            prop(json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": true})),
            vec![],
        ),
        // NewStructural's refusal shows only when nothing else is wrong.
        (
            json!({"type": "object", "$schema": "http://json-schema.org/draft-04/schema#"}),
            vec![format!("{ROOT}: Invalid value: \"\": OpenAPIV3Schema 'schema' is not supported")],
        ),
        (
            prop(json!({"type": "string", "x-kubernetes-preserve-unknown-fields": false})),
            vec![format!(
                "{ROOT}.properties[p].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined"
            )],
        ),
    ];
    for (value, want) in cases {
        assert_eq!(check(value.clone(), false), want, "{value}");
    }
}

#[test]
fn defaults_in_resource_meta() {
    let cases: Vec<(Value, Vec<String>)> = vec![
        (json!({"type": "object", "properties": {"spec": {"type": "object", "default": {}}}}), vec![]),
        (
            json!({"type": "object", "properties": {"kind": {"type": "string", "default": "Widget"}}}),
            vec![format!("{ROOT}.properties[kind].default: Forbidden: must not be set in top-level kind")],
        ),
        (
            json!({"type": "object", "properties": {"metadata": {"type": "object", "default": {}}}}),
            vec![format!("{ROOT}.properties[metadata].default: Forbidden: must not be set in top-level metadata")],
        ),
        (
            json!({"type": "object", "properties": {"e": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {
                "metadata": {"type": "object", "additionalProperties": {"type": "string", "default": "x"}}
            }}}}),
            vec![format!(
                "{ROOT}.properties[e].properties[metadata].additionalProperties.default: Forbidden: must not be set inside additionalProperties applying to object metadata"
            )],
        ),
        (
            json!({"type": "object", "properties": {"metadata": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}}}),
            vec![
                format!(
                    "{ROOT}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified"
                ),
                format!(
                    "{ROOT}.properties[metadata].x-kubernetes-embedded-resource: Forbidden: must not be used inside of resource meta"
                ),
            ],
        ),
    ];
    for (value, want) in cases {
        assert_eq!(check(value.clone(), false), want, "{value}");
    }
}

#[test]
fn list_and_map_extensions() {
    let cases: Vec<(Value, Vec<String>)> = vec![
        (prop(json!({"type": "object", "x-kubernetes-map-type": "atomic"})), vec![]),
        (
            prop(json!({"type": "string", "x-kubernetes-map-type": "sparse"})),
            vec![
                format!(
                    "{ROOT}.properties[p].type: Invalid value: \"string\": must be object if x-kubernetes-map-type is specified"
                ),
                format!(
                    "{ROOT}.properties[p].x-kubernetes-map-type: Unsupported value: \"sparse\": supported values: \"atomic\", \"granular\""
                ),
            ],
        ),
        (
            prop(json!({"x-kubernetes-preserve-unknown-fields": true, "x-kubernetes-list-type": "atomic"})),
            vec![format!(
                "{ROOT}.properties[p].type: Required value: must be array if x-kubernetes-list-type is specified"
            )],
        ),
        (
            prop(json!({"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "bag"})),
            vec![format!(
                "{ROOT}.properties[p].x-kubernetes-list-type: Unsupported value: \"bag\": supported values: \"atomic\", \"set\", \"map\""
            )],
        ),
        (
            prop(json!({"type": "array", "items": {"type": "object"}, "x-kubernetes-list-type": "set"})),
            vec![format!(
                "{ROOT}.properties[p].items.x-kubernetes-map-type: Invalid value: \"null\": must be atomic as item of a list with x-kubernetes-list-type=set"
            )],
        ),
        (
            prop(
                json!({"type": "array", "items": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"}, "x-kubernetes-list-type": "set"}),
            ),
            vec![format!(
                "{ROOT}.properties[p].items.x-kubernetes-list-type: Invalid value: \"set\": must be atomic as item of a list with x-kubernetes-list-type=set"
            )],
        ),
        (
            prop(json!({"type": "array", "items": {"type": "string"}, "x-kubernetes-list-map-keys": ["k"]})),
            vec![format!(
                "{ROOT}.properties[p].x-kubernetes-list-type: Required value: must be map if x-kubernetes-list-map-keys is non-empty"
            )],
        ),
        (
            prop(json!({"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "map"})),
            vec![
                format!(
                    "{ROOT}.properties[p].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map"
                ),
                format!(
                    "{ROOT}.properties[p].items.type: Invalid value: \"string\": must be object if parent array's x-kubernetes-list-type is map"
                ),
            ],
        ),
        (
            prop(
                json!({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name", "name", "missing", "obj"],
            "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "obj": {"type": "object", "nullable": true}}}}),
            ),
            vec![
                format!(
                    "{ROOT}.properties[p].x-kubernetes-list-map-keys: Invalid value: []string{{\"name\", \"name\", \"missing\", \"obj\"}}: must not contain duplicate entries"
                ),
                format!(
                    "{ROOT}.properties[p].x-kubernetes-list-map-keys: Invalid value: []string{{\"name\", \"name\", \"missing\", \"obj\"}}: entries must all be names of item properties"
                ),
                format!(
                    "{ROOT}.properties[p].items.properties[obj].type: Invalid value: \"object\": must be a scalar type if parent array's x-kubernetes-list-type is map"
                ),
                format!(
                    "{ROOT}.properties[p].items.properties[obj].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"
                ),
                format!(
                    "{ROOT}.properties[p].items.properties[obj].nullable: Forbidden: this property is in x-kubernetes-list-map-keys, so it cannot be nullable"
                ),
            ],
        ),
        (
            prop(
                json!({"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string", "nullable": true}}),
            ),
            vec![format!(
                "{ROOT}.properties[p].items.nullable: Forbidden: cannot be nullable when x-kubernetes-list-type is set"
            )],
        ),
    ];
    for (value, want) in cases {
        assert_eq!(check(value.clone(), false), want, "{value}");
    }
}

/// The oracle's 422 for rules that do not type-check, on the node they sit on.
#[test]
fn compiled_rules_are_type_checked() {
    let rules = json!([
        {"rule": "size(self) <= 64"},
        {"rule": "self.nope == 1"},
        {"rule": "self.name == 1"},
        {"rule": "self.name"},
        {"rule": "self.count > 0 && size(self.name) < 10"}
    ]);
    let object = json!({"type": "object", "properties": {"name": {"type": "string"}, "count": {"type": "integer"}},
        "x-kubernetes-validations": rules});
    let masked = masked_self_types(check(prop(object), false));
    let v = format!("{ROOT}.properties[p].x-kubernetes-validations");
    let rule = |r: &str| go_rule(r, "");
    assert_eq!(
        masked,
        [
            format!(
                "{v}[0].rule: Invalid value: {}: compilation failed: ERROR: <input>:1:5: found no matching overload for 'size' applied to '(selfTypeN)'\n | size(self) <= 64\n | ....^",
                rule("size(self) <= 64")
            ),
            format!(
                "{v}[1].rule: Invalid value: {}: compilation failed: ERROR: <input>:1:5: undefined field 'nope'\n | self.nope == 1\n | ....^",
                rule("self.nope == 1")
            ),
            format!(
                "{v}[2].rule: Invalid value: {}: compilation failed: ERROR: <input>:1:11: found no matching overload for '_==_' applied to '(string, int)'\n | self.name == 1\n | ..........^",
                rule("self.name == 1")
            ),
            format!("{v}[3].rule: Invalid value: {}: cel expression must evaluate to a bool", rule("self.name")),
        ]
    );
}

#[test]
fn validation_rules_static_checks() {
    let rules = json!([
        {"rule": " "},
        {"rule": "self.a > 0", "message": "  "},
        {"rule": "self.a > 0", "message": "two\nlines"},
        {"rule": "self.a >\n 0"},
        {"rule": "true", "messageExpression": " "},
        {"rule": "true", "reason": "Because"},
        {"rule": "true", "fieldPath": " "},
        {"rule": "true", "fieldPath": ".a\n"},
        {"rule": "true", "message": "fine", "reason": "FieldValueForbidden"}
    ]);
    // The words are kube 1.32's (the oracle's). These schema errors keep kube from compiling
    // the node's rules, so none of the type errors of `compiled_rules_are_type_checked` show.
    let object = json!({"type": "object", "properties": {"a": {"type": "integer"}}, "x-kubernetes-validations": rules});
    let got = check(prop(object), false);
    let v = format!("{ROOT}.properties[p].x-kubernetes-validations");
    assert_eq!(
        got,
        [
            format!("{v}[0].rule: Required value: rule is not specified"),
            format!("{v}[1].message: Invalid value: \"  \": message must be non-empty if specified"),
            format!("{v}[2].message: Invalid value: \"two\\nlines\": message must not contain line breaks"),
            format!("{v}[3].message: Required value: message must be specified if rule contains line breaks"),
            format!("{v}[4].messageExpression: Required value: messageExpression must be non-empty if specified"),
            format!(
                "{v}[5].reason: Unsupported value: \"Because\": supported values: \"FieldValueDuplicate\", \"FieldValueForbidden\", \"FieldValueInvalid\", \"FieldValueRequired\""
            ),
            format!("{v}[6].fieldPath: Invalid value: \" \": fieldPath must be non-empty if specified"),
            format!("{v}[6].fieldPath: Invalid value: \" \": fieldPath must be a valid path"),
            format!("{v}[7].fieldPath: Invalid value: \".a\\n\": fieldPath must not contain line breaks"),
            format!("{v}[7].fieldPath: Invalid value: \".a\\n\": fieldPath must be a valid path"),
        ]
    );
}

/// The oracle's answers for `oldSelf` at registration: `optionalOldSelf` (true or false)
/// only with a rule that uses `oldSelf`, and `oldSelf` only where old and new values
/// correlate (not below a list other than a map list; the highest such list is named).
#[test]
fn old_self_needs_a_rule_that_uses_it_and_a_correlatable_place() {
    let rules = json!([
        {"rule": "self.n > 0", "optionalOldSelf": true},
        {"rule": "self.n > 0", "optionalOldSelf": false},
        {"rule": "oldSelf.hasValue()", "optionalOldSelf": true},
        {"rule": "self.n >= oldSelf.n"}
    ]);
    let object = json!({"type": "object", "properties": {"n": {"type": "integer"}}, "x-kubernetes-validations": rules});
    let v = format!("{ROOT}.properties[p].x-kubernetes-validations");
    assert_eq!(
        check(prop(object), false),
        [
            format!("{v}[0].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule"),
            format!("{v}[1].optionalOldSelf: Invalid value: false: may not be set if oldSelf is not used in rule"),
        ]
    );

    // Bounded, so that no cost error stands beside the one under test.
    let item = |rule: Value| json!({"type": "object", "properties": {"a": {"type": "string", "maxLength": 10}}, "x-kubernetes-validations": [rule]});
    let inner = json!({"type": "array", "maxItems": 10, "items": item(json!({"rule": "self.a == oldSelf.a"}))});
    let nested = json!({"type": "array", "maxItems": 10, "items": inner});
    assert_eq!(
        check(prop(nested), false),
        [format!(
            "{ROOT}.properties[p].items.items.x-kubernetes-validations[0].rule: Invalid value: \"self.a == oldSelf.a\": oldSelf cannot be used on the uncorrelatable portion of the schema within {ROOT}.properties[p]"
        )]
    );
    let optional = json!({"type": "array", "maxItems": 10, "items": item(json!({"rule": "oldSelf.hasValue()", "optionalOldSelf": true}))});
    assert_eq!(
        check(prop(optional), false),
        [format!(
            "{ROOT}.properties[p].items.x-kubernetes-validations[0].rule: Invalid value: \"oldSelf.hasValue()\": oldSelf cannot be used on the uncorrelatable portion of the schema within {ROOT}.properties[p]"
        )]
    );
    let mut map_item = item(json!({"rule": "self.a == oldSelf.a"}));
    map_item["required"] = json!(["a"]);
    let map_list = json!({"type": "array", "maxItems": 10, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["a"], "items": map_item});
    let mut atomic_map = item(json!({"rule": "self.a == oldSelf.a"}));
    atomic_map["x-kubernetes-map-type"] = json!("atomic");
    let granular = json!({"type": "object", "properties": {"m": atomic_map}});
    assert_eq!(check(prop(map_list), false), Vec::<String>::new());
    assert_eq!(check(prop(granular), false), Vec::<String>::new());
}

/// A `messageExpression` is compiled once its rule compiles: it must compile and give a
/// string (the oracle's words).
#[test]
fn message_expressions_compile_to_strings() {
    let rules = json!([
        {"rule": "self.n > 0", "messageExpression": "1"},
        {"rule": "self.n > 0", "messageExpression": "self.nope"},
        {"rule": "self.n > 0", "messageExpression": "self.a"},
        {"rule": "self.nope > 0", "messageExpression": "1"}
    ]);
    let object = json!({"type": "object", "properties": {"a": {"type": "string", "maxLength": 10}, "n": {"type": "integer"}}, "x-kubernetes-validations": rules});
    let masked = masked_self_types(check(prop(object), false));
    let v = format!("{ROOT}.properties[p].x-kubernetes-validations");
    let rule = go_rule;
    assert_eq!(
        masked,
        [
            format!(
                "{v}[0].messageExpression: Invalid value: {}: messageExpression must evaluate to a string",
                rule("self.n > 0", "1")
            ),
            format!(
                "{v}[1].messageExpression: Invalid value: {}: messageExpression compilation failed: ERROR: <input>:1:5: undefined field 'nope'\n | self.nope\n | ....^",
                rule("self.n > 0", "self.nope")
            ),
            format!(
                "{v}[3].rule: Invalid value: {}: compilation failed: ERROR: <input>:1:5: undefined field 'nope'\n | self.nope > 0\n | ....^",
                rule("self.nope > 0", "1")
            ),
        ]
    );
}

#[test]
fn field_paths_must_resolve_on_the_node() {
    let rules = json!([
        {"rule": "true", "fieldPath": ".nope"},
        {"rule": "true", "fieldPath": "a"},
        {"rule": "true", "fieldPath": ".a[0]"},
        {"rule": "true", "fieldPath": ".a", "reason": "FieldValueInvalid"},
        {"rule": "true", "fieldPath": ".m['k.x']"}
    ]);
    let object = json!({"type": "object", "properties": {
        "a": {"type": "string"},
        "m": {"type": "object", "additionalProperties": {"type": "string"}}
    }, "x-kubernetes-validations": rules});
    let v = format!("{ROOT}.properties[p].x-kubernetes-validations");
    assert_eq!(
        check(prop(object), false),
        [
            format!("{v}[0].fieldPath: Invalid value: \".nope\": fieldPath must be a valid path"),
            format!("{v}[1].fieldPath: Invalid value: \"a\": fieldPath must be a valid path"),
            format!("{v}[2].fieldPath: Invalid value: \".a[0]\": fieldPath must be a valid path"),
        ]
    );
}

/// kube lists schema errors before compile errors, compiles no rule of a node with a
/// schema error at or below it, checks defaults before the rest, and compiles nothing when
/// a default is wrong (the oracle's answers).
#[test]
fn schema_errors_come_first_and_keep_rules_from_compiling() {
    let unique = json!({"type": "array", "uniqueItems": true, "items": {"type": "string"}});
    let unique_error = |at: &str| {
        format!(
            "{ROOT}.properties[p].properties[{at}].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic"
        )
    };
    let broken = json!([{"rule": "self.nope == 1"}]);
    let above = json!({"type": "object", "properties": {"l": unique}, "x-kubernetes-validations": broken});
    assert_eq!(check(prop(above), false), [unique_error("l")]);

    let beside = json!({"type": "object", "properties": {
        "a": {"type": "object", "x-kubernetes-validations": broken},
        "b": unique
    }});
    let got = check(prop(beside), false);
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[0], unique_error("b"));
    assert!(got[1].starts_with(&format!("{ROOT}.properties[p].properties[a].x-kubernetes-validations[0].rule: ")));

    let bad_default = json!({"type": "integer", "maximum": 3, "default": 5});
    let default_error = format!(
        "{ROOT}.properties[p].properties[n].default: Invalid value: 5:  in body should be less than or equal to 3"
    );
    let with_unique = json!({"type": "object", "properties": {"n": bad_default, "l": unique}});
    assert_eq!(check(prop(with_unique), false), [default_error.clone(), unique_error("l")]);
    let with_rule = json!({"type": "object", "properties": {"n": bad_default}, "x-kubernetes-validations": broken});
    assert_eq!(check(prop(with_rule), false), [default_error]);
}

/// kube validates an integer default against `int64(maximum)`: MinInt64 on the oracle for
/// a bound beyond int64 (and a fractional factor below 1 is 0, not positive).
#[test]
fn integer_defaults_meet_bounds_as_go_converts_them() {
    let object = json!({"type": "object", "properties": {
        "huge": {"type": "integer", "maximum": 1e21, "default": 5},
        "half": {"type": "integer", "multipleOf": 0.5, "default": 3},
        "fine": {"type": "integer", "maximum": 1e21}
    }});
    assert_eq!(
        check(prop(object), false),
        [
            format!(
                "{ROOT}.properties[p].properties[half].default: Invalid value: 0: factor MultipleOf declared for  must be positive: 0"
            ),
            format!(
                "{ROOT}.properties[p].properties[huge].default: Invalid value: 5:  in body should be less than or equal to -9223372036854775808"
            ),
        ]
    );
}

#[test]
fn a_default_with_unknown_fields_is_printed_as_go_prints_it() {
    let object = json!({"type": "object", "properties": {"a": {"type": "string"}}, "default": {"b": 1}});
    assert_eq!(
        check(prop(object), false),
        [format!(
            "{ROOT}.properties[p].default: Invalid value: map[string]interface {{}}{{\"b\":1}}: must not have unknown fields"
        )]
    );
}

/// kube validates a default against the structural schema, where int-or-string is only
/// the extension: a default of any type passes it (the oracle takes `[1]` and `1.5`), and
/// an object still has unknown fields; a custom resource's value is checked as
/// `integer,string`.
#[test]
fn an_int_or_string_default_of_any_type_passes() {
    let ios = |default: Value| json!({"x-kubernetes-int-or-string": true, "default": default});
    assert_eq!(check(prop(ios(json!([1]))), false), Vec::<String>::new());
    assert_eq!(check(prop(ios(json!(1.5))), false), Vec::<String>::new());
    let nested = json!({"type": "object", "properties": {"b": {"x-kubernetes-int-or-string": true}, "a": {"type": "boolean"}},
        "default": {"b": [1], "a": "s"}});
    assert_eq!(
        check(prop(nested), false),
        [format!(
            "{ROOT}.properties[p].default.a: Invalid value: \"string\": a in body must be of type boolean: \"string\""
        )]
    );
    assert_eq!(
        check(prop(ios(json!({"a": 1}))), false),
        [format!(
            "{ROOT}.properties[p].default: Invalid value: map[string]interface {{}}{{\"a\":1}}: must not have unknown fields"
        )]
    );
}

/// kube checks a default's embedded resources before its values (the oracle: an empty
/// embedded default misses apiVersion and kind, and its wrong boolean goes unreported).
#[test]
fn a_default_s_embedded_resources_are_checked_before_its_values() {
    let object = json!({"type": "object", "properties": {
        "g": {"type": "boolean"},
        "d": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}
    }, "default": {"g": "s", "d": {}}});
    assert_eq!(
        check(prop(object), false),
        [
            format!("{ROOT}.properties[p].default.d.apiVersion: Required value: must not be empty"),
            format!("{ROOT}.properties[p].default.d.kind: Required value: must not be empty"),
        ]
    );
}

/// kube runs a default's rules on an update from the default to itself (a transition rule
/// sees it as `oldSelf`), then on a create of it (the oracle's answers).
#[test]
fn a_default_meets_transition_rules_as_its_own_old_value() {
    let ruled = |rule: Value| json!({"type": "integer", "default": 5, "x-kubernetes-validations": [rule]});
    let failed = |rule: &str| format!("{ROOT}.properties[p].default: Invalid value: \"integer\": failed rule: {rule}");
    assert_eq!(check(prop(ruled(json!({"rule": "self < oldSelf"}))), false), [failed("self < oldSelf")]);
    assert_eq!(
        check(prop(ruled(json!({"rule": "oldSelf.hasValue()", "optionalOldSelf": true}))), false),
        [failed("oldSelf.hasValue()")]
    );
    assert_eq!(check(prop(ruled(json!({"rule": "self == oldSelf"}))), false), Vec::<String>::new());
}

/// A default meets the rules at and below its node as kube's validator compiles them: a
/// rule that does not type-check is a `rule compile error` at each value it would check,
/// and, the defaults being wrong, no rule's own refusal is reported (the oracle's answers).
#[test]
fn a_default_meets_rules_that_do_not_compile_as_compile_errors() {
    let object = json!({"type": "object", "default": {"a": {"b": 1}}, "properties": {"a": {"type": "object",
        "properties": {"b": {"type": "integer", "x-kubernetes-validations": [{"rule": "self.size() > 0"}]}},
        "x-kubernetes-validations": [{"rule": "self.b == \"x\""}]}}});
    assert_eq!(
        masked_self_types(check(prop(object), false)),
        [
            format!(
                "{ROOT}.properties[p].default.a: Invalid value: \"object\": rule compile error: compilation failed: ERROR: <input>:1:8: found no matching overload for '_==_' applied to '(int, string)'\n | self.b == \"x\"\n | .......^"
            ),
            format!(
                "{ROOT}.properties[p].default.a.b: Invalid value: \"integer\": rule compile error: compilation failed: ERROR: <input>:1:10: found no matching overload for 'size' applied to 'int.()'\n | self.size() > 0\n | .........^"
            ),
        ]
    );
}

/// kube validates a default with the formats as written (objects with the string formats
/// it supports only): `int32` and unknown formats name the expected type (the oracle's
/// answers).
#[test]
fn a_default_meets_its_formats_as_written() {
    let object = json!({"type": "object", "properties": {
        "i": {"type": "integer", "format": "int32", "default": 1.5},
        "u": {"type": "integer", "format": "foo", "default": 1.5},
        "s": {"type": "string", "format": "int32", "default": "x"}
    }});
    assert_eq!(
        check(prop(object), false),
        [
            format!(
                "{ROOT}.properties[p].properties[i].default: Invalid value: \"float64\":  in body must be of type int32: \"float64\""
            ),
            format!(
                "{ROOT}.properties[p].properties[u].default: Invalid value: \"float64\":  in body must be of type foo: \"float64\""
            ),
        ]
    );
}
