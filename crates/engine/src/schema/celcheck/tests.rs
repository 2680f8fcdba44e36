//! kube-apiserver 1.32's answers for rules on the root of this schema (the number in
//! `selfType<N>` is arbitrary and masked).

use super::*;
use serde_json::json;

fn root() -> JSONSchemaProps {
    serde_json::from_value(json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "name": {"type": "string"}, "count": {"type": "integer"}, "f": {"type": "number"},
        "ok": {"type": "boolean"}, "ts": {"type": "string", "format": "date-time"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "obj": {"type": "object", "properties": {"x": {"type": "string"}}},
        "any": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
        "ios": {"x-kubernetes-int-or-string": true}}}}}))
    .expect("schema")
}

fn error_of(rule: &str, node: &JSONSchemaProps, is_root: bool) -> Option<String> {
    let rule = ValidationRule { rule: rule.to_string(), ..Default::default() };
    let masked = compile(&rule, node, is_root).error?;
    let re = regex::Regex::new(r"selfType\d+").expect("regex");
    Some(re.replace_all(&masked, "selfTypeN").into_owned())
}

/// `(rule, column, message)` as kube reports them, or no message when it accepts the rule.
const ROOT_CASES: &[(&str, usize, &str)] = &[
    ("size(self.spec) > 1", 5, "found no matching overload for 'size' applied to '(selfTypeN.spec)'"),
    ("self.spec.obj == 1", 15, "found no matching overload for '_==_' applied to '(selfTypeN.spec.obj, int)'"),
    ("self.spec.tags == 1", 16, "found no matching overload for '_==_' applied to '(list(string), int)'"),
    ("self.spec.labels == 1", 18, "found no matching overload for '_==_' applied to '(map(string, string), int)'"),
    ("self.spec.count.startsWith(\"a\")", 27, "found no matching overload for 'startsWith' applied to 'int.(string)'"),
    ("!self.spec.name", 1, "found no matching overload for '!_' applied to '(string)'"),
    ("self.spec.count && true", 10, "expected type 'bool' but found 'int'"),
    ("self.spec.obj.nope == \"a\"", 14, "undefined field 'nope'"),
    ("self.spec.any.x == 1", 14, "undefined field 'x'"),
    ("self.spec.f == 1", 13, "found no matching overload for '_==_' applied to '(double, int)'"),
    ("self.metadata.name == 1", 20, "found no matching overload for '_==_' applied to '(string, int)'"),
    ("self.metadata.labels == 1", 14, "undefined field 'labels'"),
    ("self.spec.ts == 1", 14, "found no matching overload for '_==_' applied to '(timestamp, int)'"),
    ("self.spec.tags[0] == 1", 19, "found no matching overload for '_==_' applied to '(string, int)'"),
    ("self.spec.labels[\"a\"] == 1", 23, "found no matching overload for '_==_' applied to '(string, int)'"),
    ("self.spec.tags.exists(t, t == 1)", 28, "found no matching overload for '_==_' applied to '(string, int)'"),
    ("self.spec.name.size() == \"a\"", 23, "found no matching overload for '_==_' applied to '(int, string)'"),
    (
        "self.spec.count < 1 || self.spec.name == 2",
        39,
        "found no matching overload for '_==_' applied to '(string, int)'",
    ),
    ("self.spec.name.matches(1)", 23, "found no matching overload for 'matches' applied to 'string.(int)'"),
    ("self.spec.count == 1 ? \"a\" : 2", 22, "found no matching overload for '_?_:_' applied to '(bool, string, int)'"),
    ("[1, \"a\"] == [1]", 5, "expected type 'int' but found 'string'"),
    ("self.apiVersion == 1", 17, "found no matching overload for '_==_' applied to '(string, int)'"),
    ("self.spec == 1", 11, "found no matching overload for '_==_' applied to '(selfTypeN.spec, int)'"),
    ("self.spec.count in self.spec.tags", 17, "found no matching overload for '@in' applied to '(int, list(string))'"),
    ("self.nope.x == 1", 5, "undefined field 'nope'"),
    ("size(self.spec.name) == \"a\"", 22, "found no matching overload for '_==_' applied to '(int, string)'"),
    ("int(self.spec.name) == \"a\"", 21, "found no matching overload for '_==_' applied to '(int, string)'"),
    ("self.spec.tags.map(t, t + 1) == []", 25, "found no matching overload for '_+_' applied to '(string, int)'"),
    ("has(self.spec.obj.nope)", 4, "undefined field 'nope'"),
    ("self.spec.ios == 1", 0, ""),
];

#[test]
fn rules_are_refused_where_kube_refuses_them() {
    let node = root();
    for (rule, col, message) in ROOT_CASES {
        let want = (!message.is_empty()).then(|| {
            format!("compilation failed: ERROR: <input>:1:{col}: {message}\n | {rule}\n | {}^", ".".repeat(col - 1))
        });
        assert_eq!(error_of(rule, &node, true), want, "{rule}");
    }
}

/// Rules on `spec` itself (kube names its type `selfType<N>`).
#[test]
fn rules_on_a_nested_object() {
    let root = root();
    let spec = &root.properties.as_ref().expect("properties")["spec"];
    let refused = [
        (
            "size(self) <= 64",
            "ERROR: <input>:1:5: found no matching overload for 'size' applied to '(selfTypeN)'\n | size(self) <= 64\n | ....^",
        ),
        ("self.nope == 1", "ERROR: <input>:1:5: undefined field 'nope'\n | self.nope == 1\n | ....^"),
        (
            "self.name == 1",
            "ERROR: <input>:1:11: found no matching overload for '_==_' applied to '(string, int)'\n | self.name == 1\n | ..........^",
        ),
        (
            "self.name.startsWith(1)",
            "ERROR: <input>:1:21: found no matching overload for 'startsWith' applied to 'string.(int)'\n | self.name.startsWith(1)\n | ....................^",
        ),
        (
            "self.count + \"a\" == \"b\"",
            "ERROR: <input>:1:12: found no matching overload for '_+_' applied to '(int, string)'\n | self.count + \"a\" == \"b\"\n | ...........^",
        ),
        (
            "self.tags.all(t, t > 0)",
            "ERROR: <input>:1:20: found no matching overload for '_>_' applied to '(string, int)'\n | self.tags.all(t, t > 0)\n | ...................^",
        ),
        ("has(self.nope)", "ERROR: <input>:1:4: undefined field 'nope'\n | has(self.nope)\n | ...^"),
        (
            "self.count == 1.0",
            "ERROR: <input>:1:12: found no matching overload for '_==_' applied to '(int, double)'\n | self.count == 1.0\n | ...........^",
        ),
        (
            "self.name == null",
            "ERROR: <input>:1:11: found no matching overload for '_==_' applied to '(string, null)'\n | self.name == null\n | ..........^",
        ),
        (
            "self.name ==",
            "ERROR: <input>:1:13: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | self.name ==\n | ............^",
        ),
    ];
    for (rule, want) in refused {
        assert_eq!(error_of(rule, spec, false), Some(format!("compilation failed: {want}")), "{rule}");
    }
    assert_eq!(error_of("self.name", spec, false).as_deref(), Some(NOT_BOOL));
    for accepted in [
        "self.count > 0 && size(self.name) < 10",
        "size(self.labels) < 3",
        "self.labels.nope == \"x\"",
        "oldSelf.name == self.name",
        "self.tags.all(t, t.startsWith('a')) && self.f > 1",
        "self.ts < timestamp('2024-01-01T00:00:00Z') || !has(self.obj)",
        "self.tags.filter(t, t != '').size() == size(self.tags)",
        "self.name.lowerAscii() == 'a' && self.count + 1 >= 2",
        "self.?name.orValue('') == ''",
        "self.obj == null",
        "sets.contains(self.tags, ['a']) && type(self) != int",
        "optional.of(1).hasValue()",
    ] {
        assert_eq!(error_of(accepted, spec, false), None, "{accepted}");
    }
}

#[test]
fn the_rule_is_shown_as_go_prints_it() {
    let rule = ValidationRule { rule: "size(self) <= 64".into(), ..Default::default() };
    assert_eq!(
        go_rule_value(&rule),
        r#"apiextensions.ValidationRule{Rule:"size(self) <= 64", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}"#
    );
}

/// cel-go's limits, at their edges, with the oracle's answers (`{"type": "object"}` as
/// the rule's node). Each over-limit source is refused before any deeper parser sees it.
#[test]
fn parser_limits_are_cel_gos() {
    let node: JSONSchemaProps = serde_json::from_value(json!({"type": "object"})).expect("schema");
    let sum = |n: usize| format!("{} > 0", vec!["1"; n].join("+"));
    let parens = |n: usize| format!("{}true{}", "(".repeat(n), ")".repeat(n));
    let lists = |n: usize| format!("size({}{}) > 0", "[".repeat(n), "]".repeat(n));
    let ternaries = |n: usize| format!("{}true", "false ? false : ".repeat(n));
    let string = |n: usize| format!("'{}' != ''", "a".repeat(n));
    let nested = "expression recursion limit exceeded: 250";
    let deep = "max recursion depth exceeded";
    let cases = [
        (sum(250), None),
        (sum(251), Some(deep.to_string())),
        (sum(3000), Some(deep.to_string())),
        (parens(249), None),
        (parens(250), Some(nested.to_string())),
        (lists(249), None),
        (lists(250), Some(nested.to_string())),
        (ternaries(249), None),
        (ternaries(250), Some(nested.to_string())),
        (string(99_992), None),
        (string(99_993), Some("expression code point size exceeds limit: size: 100001, limit 100000".to_string())),
        // Long chains of `||` are balanced and `!`s fold: neither is deep.
        (format!("{} || true", vec!["false"; 5000].join(" || ")), None),
        (format!("{}false", "!".repeat(3001)), None),
    ];
    for (rule, want) in cases {
        let want = want.map(|m| format!("compilation failed: ERROR: <input>:-1:0: {m}"));
        let got = error_of(&rule, &node, false);
        assert_eq!(got, want, "{}...", &rule[..rule.len().min(40)]);
    }
}

/// With `optionalOldSelf`, `oldSelf` is `optional_type(T)`, and so is what is selected or
/// indexed from it: rules that forget `.value()` are refused (the oracle's answers).
#[test]
fn an_optional_old_self_must_be_unwrapped() {
    let node: JSONSchemaProps = serde_json::from_value(json!({"type": "object", "properties": {
        "a": {"type": "string"}, "n": {"type": "integer"},
        "l": {"type": "array", "items": {"type": "string"}}}}))
    .expect("schema");
    let optional = |rule: &str| {
        let rule = ValidationRule { rule: rule.to_string(), optional_old_self: Some(true), ..Default::default() };
        let masked = compile(&rule, &node, false).error?;
        Some(regex::Regex::new(r"selfType\d+").expect("regex").replace_all(&masked, "selfTypeN").into_owned())
    };
    let refused = [
        ("self.n >= oldSelf.n", 8, "found no matching overload for '_>=_' applied to '(int, optional_type(int))'"),
        (
            "self == oldSelf",
            6,
            "found no matching overload for '_==_' applied to '(selfTypeN, optional_type(selfTypeN))'",
        ),
        ("size(oldSelf.a) > 0", 5, "found no matching overload for 'size' applied to '(optional_type(string))'"),
        (
            "oldSelf.a.startsWith(\"x\")",
            21,
            "found no matching overload for 'startsWith' applied to 'optional_type(string).(string)'",
        ),
        (
            "oldSelf.a + \"x\" == \"y\"",
            11,
            "found no matching overload for '_+_' applied to '(optional_type(string), string)'",
        ),
        (
            "oldSelf.l[0] == \"x\"",
            14,
            "found no matching overload for '_==_' applied to '(optional_type(string), string)'",
        ),
        ("int(oldSelf.n) == 1", 4, "found no matching overload for 'int' applied to '(optional_type(int))'"),
        (
            "oldSelf.l.all(x, x == \"a\")",
            8,
            "expression of type 'optional_type(list(string))' cannot be range of a comprehension (must be list, map, or dynamic)",
        ),
        (
            "\"a\" in oldSelf.l",
            5,
            "found no matching overload for '@in' applied to '(string, optional_type(list(string)))'",
        ),
        (
            "oldSelf.l.size() > 0",
            15,
            "found no matching overload for 'size' applied to 'optional_type(list(string)).()'",
        ),
        (
            "oldSelf.n.orValue(\"x\") == 1",
            18,
            "found no matching overload for 'orValue' applied to 'optional_type(int).(string)'",
        ),
    ];
    for (rule, col, message) in refused {
        let want =
            format!("compilation failed: ERROR: <input>:1:{col}: {message}\n | {rule}\n | {}^", ".".repeat(col - 1));
        assert_eq!(optional(rule), Some(want), "{rule}");
    }
    for accepted in [
        "!oldSelf.hasValue() || self.n >= oldSelf.value().n",
        "oldSelf.n.orValue(0) <= self.n",
        "oldSelf == optional.of(self)",
        "has(oldSelf.a)",
        "oldSelf.?n.orValue(0) >= 0",
        "oldSelf.n == null",
        "oldSelf.l.orValue([]).size() >= 0",
        "oldSelf.n.value() <= self.n",
        "oldSelf.n == optional.of(1)",
        "oldSelf.a.or(optional.of(\"x\")).value() == \"x\"",
        "oldSelf.n == oldSelf.n",
    ] {
        assert_eq!(optional(accepted), None, "{accepted}");
    }
}

/// A property named with a reserved word is declared escaped (`__namespace__`), and kube
/// finds it when the rule writes the word itself too (the oracle's answers).
#[test]
fn reserved_words_reach_their_escaped_fields() {
    let node: JSONSchemaProps = serde_json::from_value(json!({"type": "object", "properties": {
        "namespace": {"type": "string"}, "if": {"type": "string"}}}))
    .expect("schema");
    for accepted in [
        "self.namespace == 'x'",
        "has(self.namespace)",
        "self.__namespace__ == 'x'",
        "self.if == 'x' && self.__if__ == 'x'",
    ] {
        assert_eq!(error_of(accepted, &node, false), None, "{accepted}");
    }
    assert_eq!(
        error_of("self.namespace == 1", &node, false),
        Some(
            "compilation failed: ERROR: <input>:1:16: found no matching overload for '_==_' applied to '(string, int)'\n | self.namespace == 1\n | ...............^"
                .to_string()
        )
    );
}

/// cel-go's homogeneous-literal validator exempts the literals of a `format` call: the
/// oracle creates this CRD (a mixed list elsewhere is refused, as above).
#[test]
fn format_takes_a_list_of_mixed_types() {
    let node: JSONSchemaProps = serde_json::from_value(json!({"type": "object", "properties": {
        "name": {"type": "string", "maxLength": 10}, "replicas": {"type": "integer", "maximum": 10}}}))
    .expect("schema");
    let rule = ValidationRule {
        rule: "self.replicas < 5".into(),
        message_expression: Some(r#""%s has %d replicas".format([self.name, self.replicas])"#.into()),
        ..Default::default()
    };
    let compiled = compile(&rule, &node, false);
    assert_eq!((compiled.error, compiled.message_error), (None, None));
    let nested = r#""%s %s".format([[1, "a"], {"k": [true, 2]}]) == "x""#;
    assert_eq!(error_of(nested, &node, false), None);
}

/// A conditional's type is its more specific branch, as cel-go binds its type parameter:
/// `optional.none()` and `[]` say nothing, so the rules below are strings and lists of
/// strings the estimate bounds, and kube accepts them all (the oracle's answers).
#[test]
fn conditionals_take_the_type_of_their_more_specific_branch() {
    let node: JSONSchemaProps = serde_json::from_value(json!({"type": "object", "properties": {
        "a": {"type": "string", "maxLength": 8}, "n": {"type": "integer"}}}))
    .expect("schema");
    for rule in [
        "string(self.?a.optFlatMap(v, v == 'x' ? optional.none() : optional.of(v)).orValue('gone')) == 'zzz'",
        "(self.n > 0 ? optional.none() : optional.of(self.a)).orValue('') == ''",
        "(self.n > 0 ? optional.of(self.a) : optional.none()).orValue('') == ''",
        "(self.n > 0 ? [] : [self.a]).size() == 0",
        "(self.n > 0 ? [] : [1]).size() == 0",
        "(self.n > 0 ? dyn(1) : 'x') == 'x'",
        "(self.n > 0 ? {} : {'a': self.a}).size() == 0",
    ] {
        let compiled = compile(&ValidationRule { rule: rule.into(), ..Default::default() }, &node, false);
        assert_eq!(compiled.error, None, "{rule}");
        assert!(
            compiled.max_cost <= crate::schema::celcost::STATIC_ESTIMATED_COST_LIMIT,
            "{rule}: {}",
            compiled.max_cost
        );
    }
}

/// The oracle's caret line under a rule with characters of more than one byte.
#[test]
fn wide_characters_are_marked_with_wide_dots() {
    let shown = located("'ü'.split(self.s.reverse())[0]", 1, 25, "undeclared reference to 'reverse' (in container '')");
    assert_eq!(
        shown,
        "ERROR: <input>:1:25: undeclared reference to 'reverse' (in container '')\n | 'ü'.split(self.s.reverse())[0]\n | .\u{ff0e}......................^"
    );
}
