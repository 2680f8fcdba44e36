use super::*;
use serde_json::json;

fn node(v: Value) -> Node {
    Node::compile(&serde_json::from_value(v).expect("schema"))
}

/// The errors of `obj` under `spec` with schema `spec_schema`, as kube prints them.
fn errors(spec_schema: Value, spec: Value) -> Vec<String> {
    let root = node(json!({"type": "object", "properties": {"spec": spec_schema}}));
    validate(&root, "", &json!({"spec": spec}), None).errors.iter().map(ToString::to_string).collect()
}

fn field(schema: Value, value: Value) -> Vec<String> {
    errors(json!({"type": "object", "properties": {"x": schema}}), json!({"x": value}))
}

#[test]
fn wrong_types_name_the_found_type() {
    assert_eq!(
        errors(json!({"type": "object", "properties": {"replicas": {"type": "integer"}}}), json!({"replicas": "3"})),
        [r#"spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string""#]
    );
    assert_eq!(
        field(json!({"type": "string"}), json!({"a": 1})),
        [r#"spec.x: Invalid value: "object": spec.x in body must be of type string: "object""#]
    );
    assert_eq!(
        field(json!({"type": "boolean"}), json!(null)),
        [r#"spec.x: Invalid value: "null": spec.x in body must be of type boolean: "null""#]
    );
    assert_eq!(
        field(json!({"type": "integer"}), json!(1.5)),
        [r#"spec.x: Invalid value: "number": spec.x in body must be of type integer: "number""#]
    );
    // A float with an integral value is an integer; an integer is a number.
    assert!(field(json!({"type": "integer"}), json!(2.0)).is_empty());
    assert!(field(json!({"type": "number"}), json!(2)).is_empty());
    assert!(field(json!({"type": "string", "nullable": true}), json!(null)).is_empty());
}

#[test]
fn type_errors_are_type_invalid_causes() {
    let root = node(json!({"type": "object", "properties": {"x": {"type": "integer"}}}));
    let errs = validate(&root, "", &json!({"x": true}), None).errors;
    assert_eq!(errs[0].error_type.cause_reason(), "FieldValueTypeInvalid");
    assert_eq!(errs[0].field, "x");
}

#[test]
fn int_or_string_and_formats_interact_like_kube() {
    let ios = json!({"x-kubernetes-int-or-string": true});
    assert!(field(ios.clone(), json!(3)).is_empty());
    assert!(field(ios.clone(), json!("3")).is_empty());
    assert_eq!(
        field(ios, json!(true)),
        [r#"spec.x: Invalid value: "boolean": spec.x in body must be of type integer,string: "boolean""#]
    );
    assert_eq!(
        field(json!({"type": "string", "format": "date-time"}), json!(5)),
        [r#"spec.x: Invalid value: "int64": spec.x in body must be of type date-time: "int64""#]
    );
    // kube strips the formats that are no string formats (int32, double), and keeps the
    // string formats on any type (the oracle's answers).
    assert_eq!(
        field(json!({"type": "integer", "format": "int32"}), json!(1.5)),
        [r#"spec.x: Invalid value: "number": spec.x in body must be of type integer: "number""#]
    );
    assert_eq!(
        field(json!({"type": "number", "format": "double"}), json!(true)),
        [r#"spec.x: Invalid value: "boolean": spec.x in body must be of type number: "boolean""#]
    );
    assert_eq!(
        field(json!({"type": "integer", "format": "byte"}), json!(1.5)),
        [r#"spec.x: Invalid value: "float64": spec.x in body must be of type byte: "float64""#]
    );
    assert_eq!(
        field(json!({"type": "boolean", "format": "date"}), json!("x")),
        [r#"spec.x: Invalid value: "x": spec.x in body must be of type date: "x""#]
    );
    // kube does not range-check int32.
    assert!(field(json!({"type": "integer", "format": "int32"}), json!(9_999_999_999_i64)).is_empty());
}

#[test]
fn string_formats() {
    assert_eq!(
        field(json!({"type": "string", "format": "date"}), json!("2024-02-30")),
        [r#"spec.x: Invalid value: "2024-02-30": spec.x in body must be of type date: "2024-02-30""#]
    );
    assert_eq!(
        field(json!({"type": "string", "format": "uuid"}), json!("nope")),
        [r#"spec.x: Invalid value: "nope": spec.x in body must be of type uuid: "nope""#]
    );
    assert!(field(json!({"type": "string", "format": "date-time"}), json!("2024-01-02T03:04:05Z")).is_empty());
    assert!(field(json!({"type": "string", "format": "unknown-format"}), json!("anything")).is_empty());
}

#[test]
fn enums_list_supported_values() {
    assert_eq!(
        field(json!({"type": "string", "enum": ["a", "b"]}), json!("c")),
        [r#"spec.x: Unsupported value: "c": supported values: "a", "b""#]
    );
    assert_eq!(
        field(json!({"type": "integer", "enum": [1, 2]}), json!(3)),
        [r#"spec.x: Unsupported value: 3: supported values: "1", "2""#]
    );
    assert!(field(json!({"type": "integer", "enum": [1, 2]}), json!(2.0)).is_empty());
    assert_eq!(
        field(json!({"type": "string", "nullable": true, "enum": ["a"]}), json!(null)),
        [r#"spec.x: Unsupported value: "null": supported values: "a""#]
    );
}

#[test]
fn string_lengths_and_patterns_report_the_first_failure() {
    assert_eq!(
        field(json!({"type": "string", "maxLength": 5}), json!("toolongvalue")),
        ["spec.x: Too long: may not be more than 5 bytes"]
    );
    // kube 1.32 says "bytes" even for one (the singular came in 1.33).
    assert_eq!(
        field(json!({"type": "string", "maxLength": 1}), json!("ab")),
        ["spec.x: Too long: may not be more than 1 bytes"]
    );
    assert_eq!(
        field(json!({"type": "string", "minLength": 3, "pattern": "^z"}), json!("ab")),
        [r#"spec.x: Invalid value: "ab": spec.x in body should be at least 3 chars long"#]
    );
    assert_eq!(
        field(json!({"type": "string", "pattern": "^[a-z]+$"}), json!("A1")),
        [r#"spec.x: Invalid value: "A1": spec.x in body should match '^[a-z]+$'"#]
    );
    // Lengths count characters, not bytes.
    assert!(field(json!({"type": "string", "maxLength": 2}), json!("éé")).is_empty());
}

#[test]
fn numeric_bounds() {
    let bounded = json!({"type": "integer", "minimum": 0, "maximum": 10});
    assert_eq!(
        field(bounded.clone(), json!(42)),
        [r#"spec.x: Invalid value: 42: spec.x in body should be less than or equal to 10"#]
    );
    assert_eq!(
        field(bounded, json!(-1)),
        [r#"spec.x: Invalid value: -1: spec.x in body should be greater than or equal to 0"#]
    );
    let exclusive =
        json!({"type": "number", "minimum": 0, "exclusiveMinimum": true, "maximum": 1.5, "exclusiveMaximum": true});
    assert_eq!(
        field(exclusive.clone(), json!(0)),
        [r#"spec.x: Invalid value: 0: spec.x in body should be greater than 0"#]
    );
    assert_eq!(field(exclusive, json!(1.5)), [r#"spec.x: Invalid value: 1.5: spec.x in body should be less than 1.5"#]);
    assert_eq!(
        field(json!({"type": "number", "maximum": 1000000}), json!(2e6)),
        [r#"spec.x: Invalid value: 2e+06: spec.x in body should be less than or equal to 1e+06"#]
    );
    assert_eq!(
        field(json!({"type": "integer", "multipleOf": 5}), json!(7)),
        [r#"spec.x: Invalid value: 7: spec.x in body should be a multiple of 5"#]
    );
    assert!(field(json!({"type": "number", "multipleOf": 0.1}), json!(0.3)).is_empty());
    assert_eq!(
        field(json!({"type": "number", "multipleOf": 0.5}), json!(0.3)),
        [r#"spec.x: Invalid value: 0.3: spec.x in body should be a multiple of 0.5"#]
    );
}

/// kube-openapi compares an integer with `int64(bound)`, which on the oracle (amd64) is
/// MinInt64 for a bound beyond int64's range: such a bound refuses every integer, while a
/// float is compared with the bound as it is.
#[test]
fn integers_meet_bounds_converted_as_go_converts_them() {
    let huge = json!({"type": "integer", "maximum": 1e21, "minimum": -1e21});
    assert_eq!(
        field(huge.clone(), json!(5)),
        [r#"spec.x: Invalid value: 5: spec.x in body should be less than or equal to -9223372036854775808"#]
    );
    let number = json!({"type": "number", "maximum": 1e21});
    assert!(field(number, json!(5.5)).is_empty());
    assert_eq!(
        field(json!({"type": "number", "multipleOf": 0.5, "maximum": 1e21}), json!(3)),
        [
            r#"spec.x: Invalid value: 0: factor MultipleOf declared for spec.x must be positive: 0"#,
            r#"spec.x: Invalid value: 3: spec.x in body should be less than or equal to -9223372036854775808"#,
        ]
    );
    // A fractional bound is truncated toward zero for an integer.
    assert_eq!(
        field(json!({"type": "integer", "maximum": 1.5}), json!(2)),
        [r#"spec.x: Invalid value: 2: spec.x in body should be less than or equal to 1"#]
    );
    // A float is checked against a zero factor as a float: not positive either.
    assert_eq!(
        field(json!({"type": "number", "multipleOf": 0}), json!(1.5)),
        [r#"spec.x: Invalid value: 0: factor MultipleOf declared for spec.x must be positive: 0"#]
    );
}

#[test]
fn lists() {
    let s = json!({"type": "array", "minItems": 2, "maxItems": 3, "items": {"type": "string"}});
    assert_eq!(
        field(s.clone(), json!(["a"])),
        [r#"spec.x: Invalid value: 1: spec.x in body should have at least 2 items"#]
    );
    assert_eq!(field(s.clone(), json!(["a", "b", "c", "d"])), ["spec.x: Too many: 4: must have at most 3 items"]);
    assert_eq!(
        field(s, json!(["a", 1])),
        [r#"spec.x[1]: Invalid value: "integer": spec.x[1] in body must be of type string: "integer""#]
    );
    assert_eq!(
        field(json!({"type": "array", "maxItems": 1}), json!([1, 2])),
        ["spec.x: Too many: 2: must have at most 1 items"]
    );
}

#[test]
fn objects() {
    let s = json!({"type": "object", "required": ["a", "b"], "properties": {"a": {"type": "string"}, "b": {"type": "string"}}});
    assert_eq!(field(s, json!({"a": "x"})), ["spec.x.b: Required value"]);
    let sized =
        json!({"type": "object", "minProperties": 2, "maxProperties": 3, "additionalProperties": {"type": "string"}});
    // The count does not stop the properties' own checks (as the oracle answers).
    assert_eq!(
        field(sized.clone(), json!({"a": 1})),
        [
            r#"spec.x: Invalid value: 1: spec.x in body should have at least 2 properties"#,
            r#"spec.x.a: Invalid value: "integer": spec.x.a in body must be of type string: "integer""#
        ]
    );
    assert_eq!(
        field(sized.clone(), json!({"a": "1", "b": "2", "c": "3", "d": "4"})),
        ["spec.x: Too many: 4: must have at most 3 items"]
    );
    assert_eq!(
        field(sized, json!({"a": "1", "b": 2})),
        [r#"spec.x.b: Invalid value: "integer": spec.x.b in body must be of type string: "integer""#]
    );
    assert_eq!(
        errors(
            json!({"type": "object", "required": ["cronSpec"], "properties": {"cronSpec": {"type": "string"}}}),
            json!({})
        ),
        ["spec.cronSpec: Required value"]
    );
}

#[test]
fn junctors_report_on_the_nil_path_with_the_best_alternative() {
    let any = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                     "anyOf": [{"required": ["a"]}, {"required": ["b"]}]});
    assert_eq!(
        field(any.clone(), json!({})),
        [r#"<nil>: Invalid value: "": "spec.x" must validate at least one schema (anyOf)"#, "spec.x.a: Required value"]
    );
    assert!(field(any, json!({"b": "y"})).is_empty());
    let one = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                     "oneOf": [{"required": ["a"]}, {"required": ["b"]}]});
    assert_eq!(
        field(one, json!({"a": "x", "b": "y"})),
        [
            r#"<nil>: Invalid value: "": "spec.x" must validate one and only one schema (oneOf). Found 2 valid alternatives"#
        ]
    );
    let all = json!({"type": "integer", "allOf": [{"minimum": 5}, {"maximum": 3}]});
    assert_eq!(
        field(all, json!(4)),
        [
            r#"spec.x: Invalid value: 4: spec.x in body should be greater than or equal to 5"#,
            r#"spec.x: Invalid value: 4: spec.x in body should be less than or equal to 3"#,
            r#"<nil>: Invalid value: "": "spec.x" must validate all the schemas (allOf). None validated"#
        ]
    );
    let not = json!({"type": "string", "not": {"enum": ["forbidden"]}});
    assert_eq!(
        field(not, json!("forbidden")),
        [r#"<nil>: Invalid value: "": "spec.x" must not validate the schema (not)"#]
    );
}

#[test]
fn unchanged_values_ratchet_on_update() {
    let root = node(json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "a": {"type": "string", "maxLength": 2}, "b": {"type": "string", "maxLength": 2}
    }}}}));
    let old = json!({"spec": {"a": "toolong", "b": "ok"}});
    let same = validate(&root, "", &json!({"spec": {"a": "toolong", "b": "ok"}}), Some(&old));
    assert!(same.errors.is_empty());
    let changed = validate(&root, "", &json!({"spec": {"a": "toolong", "b": "bad!"}}), Some(&old));
    assert_eq!(
        changed.errors.iter().map(ToString::to_string).collect::<Vec<_>>(),
        ["spec.b: Too long: may not be more than 2 bytes"]
    );
}

#[test]
fn map_values_use_dotted_paths() {
    let s = json!({"type": "object", "additionalProperties": {"type": "integer"}});
    assert_eq!(
        field(s, json!({"k": "v"})),
        [r#"spec.x.k: Invalid value: "string": spec.x.k in body must be of type integer: "string""#]
    );
}
