use super::*;
use serde_json::json;

fn node(v: Value) -> Node {
    Node::compile(&serde_json::from_value(v).expect("schema"))
}

fn run(schema: &Node, obj: Value, old: Option<Value>) -> Vec<String> {
    let path = Path::default();
    let ratchet = match &old {
        Some(o) if correlate::equal(Some(schema), &obj, o) => Ratchet::Unchanged,
        _ => Ratchet::Changed,
    };
    let site = Site { path: &path, value: &obj, old: old.as_ref(), resource_root: true, ratchet };
    validate(schema, &site).iter().map(ToString::to_string).collect()
}

fn spec_with_rules(rules: Value) -> Node {
    node(json!({"type": "object", "properties": {"spec": {
        "type": "object",
        "x-kubernetes-validations": rules,
        "properties": {"min": {"type": "integer"}, "max": {"type": "integer"}, "name": {"type": "string"}}
    }}}))
}

#[test]
fn failed_rules_report_the_schema_type_and_message() {
    let s = spec_with_rules(json!([
        {"rule": "self.min <= self.max", "message": "min must not exceed max"},
        {"rule": "self.min >= 0"}
    ]));
    assert_eq!(
        run(&s, json!({"spec": {"min": -3, "max": -5}}), None),
        [
            r#"spec: Invalid value: "object": min must not exceed max"#,
            r#"spec: Invalid value: "object": failed rule: self.min >= 0"#
        ]
    );
    assert!(run(&s, json!({"spec": {"min": 1, "max": 5}}), None).is_empty());
}

#[test]
fn message_expression_reason_and_field_path() {
    let s = spec_with_rules(json!([
        {"rule": "self.min <= self.max", "messageExpression": "'min ' + string(self.min) + ' exceeds max'",
         "reason": "FieldValueForbidden", "fieldPath": ".min"},
        {"rule": "has(self.name)", "message": "name is needed", "reason": "FieldValueRequired", "fieldPath": ".name"},
        {"rule": "false", "reason": "FieldValueDuplicate"}
    ]));
    assert_eq!(
        run(&s, json!({"spec": {"min": 9, "max": 1}}), None),
        [
            "spec.min: Forbidden: min 9 exceeds max",
            "spec.name: Required value: name is needed",
            r#"spec: Duplicate value: "object""#
        ]
    );
}

#[test]
fn bad_message_expressions_fall_back_to_the_message() {
    let s = spec_with_rules(json!([{"rule": "false", "message": "static", "messageExpression": "''"}]));
    assert_eq!(run(&s, json!({"spec": {}}), None), [r#"spec: Invalid value: "object": static"#]);
}

#[test]
fn evaluation_errors_are_worded_like_cel_go() {
    let s = spec_with_rules(json!([{"rule": "self.min > 0"}]));
    assert_eq!(
        run(&s, json!({"spec": {}}), None),
        [r#"spec: Invalid value: "object": no such key: min evaluating rule: self.min > 0"#]
    );
}

#[test]
fn transition_rules_need_an_old_value() {
    let s = node(json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "name": {"type": "string", "x-kubernetes-validations": [
            {"rule": "self == oldSelf", "message": "name is immutable"}]},
        "size": {"type": "integer", "x-kubernetes-validations": [
            {"rule": "!oldSelf.hasValue() || self >= oldSelf.value()", "message": "may not shrink", "optionalOldSelf": true},
            {"rule": "self < 100", "message": "too big"}]}
    }}}}));
    assert!(run(&s, json!({"spec": {"name": "a", "size": 5}}), None).is_empty());
    assert_eq!(
        run(&s, json!({"spec": {"name": "b", "size": 3}}), Some(json!({"spec": {"name": "a", "size": 5}}))),
        [
            r#"spec.name: Invalid value: "string": name is immutable"#,
            r#"spec.size: Invalid value: "integer": may not shrink"#
        ]
    );
    // An unchanged value ratchets rules that do not use oldSelf.
    assert!(
        run(&s, json!({"spec": {"name": "a", "size": 200}}), Some(json!({"spec": {"name": "a", "size": 200}})))
            .is_empty()
    );
    assert_eq!(
        run(&s, json!({"spec": {"name": "a", "size": 300}}), Some(json!({"spec": {"name": "a", "size": 200}}))),
        [r#"spec.size: Invalid value: "integer": too big"#]
    );
}

#[test]
fn lists_and_maps_use_field_path_keys() {
    let s = node(json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "items": {"type": "array", "items": {"type": "string", "x-kubernetes-validations": [{"rule": "self.size() < 3"}]}},
        "labels": {"type": "object", "additionalProperties": {"type": "string",
            "x-kubernetes-validations": [{"rule": "self != 'bad'", "message": "bad value"}]}}
    }}}}));
    assert_eq!(
        run(&s, json!({"spec": {"items": ["ok", "long"], "labels": {"a": "bad"}}}), None),
        [
            r#"spec.items[1]: Invalid value: "string": failed rule: self.size() < 3"#,
            r#"spec.labels[a]: Invalid value: "string": bad value"#
        ]
    );
}

#[test]
fn root_rules_see_only_name_and_generate_name_of_metadata() {
    let s = node(json!({"type": "object", "x-kubernetes-validations": [
        {"rule": "self.metadata.name.startsWith('w')", "message": "name must start with w"},
        {"rule": "self.kind == 'Widget' && self.apiVersion == 'x/v1'"},
        {"rule": "has(self.metadata.labels)", "message": "labels hidden"}
    ]}));
    let obj = json!({"apiVersion": "x/v1", "kind": "Widget", "metadata": {"name": "a", "labels": {"x": "y"}}});
    assert_eq!(
        run(&s, obj, None),
        [
            r#"<nil>: Invalid value: "object": name must start with w"#,
            r#"<nil>: Invalid value: "object": labels hidden"#
        ]
    );
}

#[test]
fn formats_become_cel_types() {
    let s = node(json!({"type": "object", "properties": {"spec": {"type": "object",
    "x-kubernetes-validations": [
        {"rule": "self.until > timestamp('2024-01-01T00:00:00Z')", "message": "too early"},
        {"rule": "self.timeout <= duration('1h')", "message": "too long"},
        {"rule": "self.when == timestamp('2024-05-06T00:00:00Z')", "message": "date"}
    ],
    "properties": {
        "until": {"type": "string", "format": "date-time"},
        "timeout": {"type": "string", "format": "duration"},
        "when": {"type": "string", "format": "date"}
    }}}}));
    let good = json!({"spec": {"until": "2025-01-01T00:00:00Z", "timeout": "30m", "when": "2024-05-06"}});
    assert!(run(&s, good, None).is_empty());
    let bad = json!({"spec": {"until": "2020-01-01T00:00:00Z", "timeout": "2h", "when": "2024-05-07"}});
    assert_eq!(run(&s, bad, None).len(), 3);
}

#[test]
fn property_names_are_escaped() {
    assert_eq!(escape("my-field").as_deref(), Some("my__dash__field"));
    assert_eq!(escape("a.b/c").as_deref(), Some("a__dot__b__slash__c"));
    assert_eq!(escape("x__y").as_deref(), Some("x__underscores__y"));
    assert_eq!(escape("x_y").as_deref(), Some("x_y"));
    assert_eq!(escape("namespace").as_deref(), Some("__namespace__"));
    assert_eq!(escape("1abc"), None);
    assert_eq!(escape("a b"), None);
    let s = node(json!({"type": "object", "properties": {"spec": {"type": "object",
        "x-kubernetes-validations": [{"rule": "self.my__dash__field == 1 && self.__namespace__ == 'n'"}],
        "properties": {"my-field": {"type": "integer"}, "namespace": {"type": "string"}}}}}));
    assert!(run(&s, json!({"spec": {"my-field": 1, "namespace": "n"}}), None).is_empty());
    // A reserved word is reachable as itself too, as in kube.
    let s = node(json!({"type": "object", "properties": {"spec": {"type": "object",
        "x-kubernetes-validations": [{"rule": "!has(self.namespace) || self.namespace == 'n'"}],
        "properties": {"namespace": {"type": "string"}}}}}));
    assert!(run(&s, json!({"spec": {"namespace": "n"}}), None).is_empty());
    assert!(run(&s, json!({"spec": {}}), None).is_empty());
    assert_eq!(
        run(&s, json!({"spec": {"namespace": "m"}}), None),
        [r#"spec: Invalid value: "object": failed rule: !has(self.namespace) || self.namespace == 'n'"#]
    );
}

#[test]
fn compile_errors_are_reported_at_the_node() {
    let s = spec_with_rules(json!([{"rule": "self.min <"}]));
    let errs = run(&s, json!({"spec": {}}), None);
    assert_eq!(errs.len(), 1);
    assert!(errs[0].starts_with(r#"spec: Invalid value: "object": rule compile error: "#), "{}", errs[0]);
}

const PAIRS: &str = "self.tags.all(a, self.tags.all(b, a == b || a != b))";

/// `spec.tags` as in the oracle's CRDs below: a bounded list of short strings and `rules`.
fn tags_spec(max_items: usize, rules: Value) -> Node {
    node(json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"tags": {"type": "array", "maxItems": max_items, "items": {"type": "string", "maxLength": 10}}},
        "x-kubernetes-validations": rules}}}))
}

fn tags_object(n: usize) -> Value {
    json!({"spec": {"tags": (0..n).map(|i| format!("t{i}")).collect::<Vec<_>>()}})
}

/// Within its static budget (3.75M for 500 tags), 9n²+3n+3 at runtime: 999,003 for 333
/// tags, 1,004,004 for 334, over kube's per-call limit, where the oracle cancels it too
/// and runs no further rule.
#[test]
fn an_evaluation_over_the_per_call_limit_is_cancelled_and_stops_validation() {
    let s = tags_spec(500, json!([{"rule": PAIRS}, {"rule": "self.tags.size() < 334", "message": "second rule"}]));
    assert!(run(&s, tags_object(333), None).is_empty());
    assert_eq!(
        run(&s, tags_object(334), None),
        [format!(
            "spec: Invalid value: \"object\": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: {PAIRS}"
        )]
    );
}

/// Five regex rules on each of up to 11 items, 225,252 each at runtime: the request's
/// budget of 10M runs out at the ninth item, where the oracle stops too.
#[test]
fn a_request_over_the_runtime_budget_stops_validating() {
    let regex = format!("^({})*$", vec!["a"; 499].join("|"));
    let rules: Vec<Value> =
        (0..5).map(|k| json!({"rule": format!("self.s.matches('{regex}'){}", " || true".repeat(k))})).collect();
    let item = json!({"type": "object", "properties": {"s": {"type": "string", "maxLength": 9000}},
        "x-kubernetes-validations": rules});
    let s = node(json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "items": {"type": "array", "maxItems": 11, "items": item}}}}}));
    let object = |n: usize| json!({"spec": {"items": vec![json!({"s": "a".repeat(9000)}); n]}});
    assert!(run(&s, object(8), None).is_empty());
    assert_eq!(
        run(&s, object(11), None),
        [
            r#"spec.items[8]: Invalid value: "object": validation failed due to running out of cost budget, no further validation rules will be run"#
        ]
    );
}

/// Rules kube refuses at registration, as a data directory written by an older version
/// can still hold them: served as errors, never evaluated past kube's limits.
#[test]
fn stored_rules_over_kubes_limits_are_errors_not_crashes() {
    let sum = format!("{} > 0", vec!["1"; 3000].join("+"));
    let s = spec_with_rules(json!([{"rule": sum}]));
    assert_eq!(
        run(&s, json!({"spec": {}}), None),
        [
            r#"spec: Invalid value: "object": rule compile error: compilation failed: ERROR: <input>:-1:0: max recursion depth exceeded"#
        ]
    );
    let triple = "self.tags.all(a, self.tags.all(b, self.tags.all(c, a == b || b == c || a != c)))";
    let s = node(json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"tags": {"type": "array", "items": {"type": "string"}}},
        "x-kubernetes-validations": [{"rule": triple}]}}}));
    // About 1 KiB: 250 tags of one letter.
    let object = json!({"spec": {"tags": vec!["a"; 250]}});
    let started = std::time::Instant::now();
    assert_eq!(
        run(&s, object, None),
        [format!(
            "spec: Invalid value: \"object\": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: {triple}"
        )]
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "took {:?}", started.elapsed());
}

/// Shallow work (rules and values nesting [`celcost::SHALLOW_DEPTH`] deep) runs on the
/// caller's stack when it has `SHALLOW_STACK` left: here it runs on a thread with no more
/// than that (and room for the test's own frames), bypassing the check; too little would
/// crash the test.
#[test]
fn shallow_work_fits_its_stack() {
    let depth = celcost::SHALLOW_DEPTH;
    // `self.x + 1 + 1 …`: each `+` one level deeper (metered as the sized call it is).
    let rule = format!("self.x{} > 0", " + 1".repeat(depth - 4));
    let mut schema = json!({"type": "object", "properties": {"x": {"type": "integer"}},
        "x-kubernetes-validations": [{"rule": rule}]});
    let mut value = json!({"x": 1});
    for _ in 0..depth - 1 {
        schema = json!({"type": "object", "properties": {"n": schema}});
        value = json!({"n": value});
    }
    schema["x-kubernetes-validations"] = json!([{"rule": "self == oldSelf"}]);
    let schema = node(schema);
    assert!((depth - 4..=depth).contains(&schema.cel_depth), "{}", schema.cel_depth);
    let path = Path::default();
    let site = Site { path: &path, value: &value, old: Some(&value), resource_root: true, ratchet: Ratchet::Changed };
    assert!(shallow(&schema, &site));
    assert!(!nests_within(&json!({"n": value}), depth), "one level more is not shallow");

    let errors = std::thread::scope(|scope| {
        let run = std::thread::Builder::new().stack_size(celcost::SHALLOW_STACK_FOR_TESTS + (64 << 10));
        let worker = run.spawn_scoped(scope, || {
            let mut budget = RUNTIME_COST_BUDGET;
            walk(&schema, &site, &mut budget).len()
        });
        worker.expect("thread").join().expect("no panic")
    });
    assert_eq!(errors, 0);
}

/// A string node with `rules`, for the oracle's answers on one value.
fn string_with_rules(rules: Value) -> Node {
    node(json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "v": {"type": "string", "x-kubernetes-validations": rules}}}}}))
}

/// Rules over the whole of cel-go's library that the oracle accepts on `"1.2.3.4"`.
#[test]
fn ip_and_cidr_functions_run() {
    let rules: Vec<Value> = [
        "isIP(self) && ip(self).family() == 4 && ip.isCanonical(self)",
        "ip('::1').isLoopback() && ip('fe80::1').isLinkLocalUnicast() && ip('ff02::1').isLinkLocalMulticast()",
        "ip('10.0.0.1').isGlobalUnicast() && !ip('255.255.255.255').isGlobalUnicast()",
        "!ip('ff05::1').isLinkLocalMulticast() && !ip('0.0.0.0').isGlobalUnicast() && ip('224.0.0.1').isLinkLocalMulticast()",
        "isCIDR('10.0.0.0/8') && !isCIDR('10.0.0.1') && !isIP('::ffff:1.2.3.4') && !ip.isCanonical('2001:db8:0:0::1')",
        "cidr('10.0.0.0/8').containsIP('10.1.1.1') && cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16')",
        "!cidr('10.0.0.0/8').containsCIDR('10.0.0.0/7') && cidr('10.0.0.0/8').containsCIDR(cidr('10.0.0.0/8'))",
        "cidr('10.1.2.3/8').prefixLength() == 8 && cidr('10.1.2.3/8').masked() == cidr('10.0.0.0/8')",
        "string(ip(self)) == self && string(cidr('10.1.2.3/8')) == '10.1.2.3/8' && ip('1.2.3.4') == ip('1.2.3.4')",
    ]
    .iter()
    .map(|r| json!({"rule": r}))
    .collect();
    let s = string_with_rules(Value::Array(rules));
    assert_eq!(run(&s, json!({"spec": {"v": "1.2.3.4"}}), None), Vec::<String>::new());
}

#[test]
fn string_size_counts_code_points() {
    let s = string_with_rules(json!([{"rule": "self.size() == 2"}, {"rule": "size(self) == 2"}]));
    assert_eq!(run(&s, json!({"spec": {"v": "éé"}}), None), Vec::<String>::new());
    assert_eq!(
        run(&s, json!({"spec": {"v": "é"}}), None),
        [
            r#"spec.v: Invalid value: "string": failed rule: self.size() == 2"#,
            r#"spec.v: Invalid value: "string": failed rule: size(self) == 2"#
        ]
    );
}

#[test]
fn conversions_and_optional_syntax_run() {
    let s = string_with_rules(json!([
        {"rule": "bool(self)"},
        {"rule": "dyn(self) == self"},
        {"rule": r#"{"a": self}.?a.value() == self && [self][?0].value() == self"#},
    ]));
    assert_eq!(run(&s, json!({"spec": {"v": "true"}}), None), Vec::<String>::new());
}

/// The oracle's messages: `messageExpression`s print values as cel-go does.
#[test]
fn message_expressions_print_values_as_cel_go() {
    let s = string_with_rules(json!([
        {"rule": "false", "messageExpression": "string(duration('90m'))"},
        {"rule": "false", "messageExpression": "'%s'.format([timestamp('2020-01-01T00:00:00Z')])"},
        {"rule": "false", "messageExpression": "string(123456789.0)"},
    ]));
    assert_eq!(
        run(&s, json!({"spec": {"v": "x"}}), None),
        [
            r#"spec.v: Invalid value: "string": 5400s"#,
            r#"spec.v: Invalid value: "string": 2020-01-01T00:00:00Z"#,
            r#"spec.v: Invalid value: "string": 1.23456789e+08"#
        ]
    );
}

/// `.?` of a field that is not there is `optional.none()`, not an error (the oracle's answers).
#[test]
fn optional_selection_of_an_absent_field_is_none() {
    let s = node(json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"v": {
        "type": "object",
        "properties": {"x": {"type": "object", "properties": {"y": {"type": "string"}}}},
        "x-kubernetes-validations": [
            {"rule": r#"self.?x.?y.orValue("d") == "d" && !self.?x.hasValue()"#},
            {"rule": r#"{"a": self}.?b.hasValue()"#}
        ]
    }}}}}));
    let failed = |rule: &str| format!(r#"spec.v: Invalid value: "object": failed rule: {rule}"#);
    let second = failed(r#"{"a": self}.?b.hasValue()"#);
    assert_eq!(run(&s, json!({"spec": {"v": {}}}), None), std::slice::from_ref(&second));
    assert_eq!(
        run(&s, json!({"spec": {"v": {"x": {"y": "v"}}}}), None),
        [failed(r#"self.?x.?y.orValue("d") == "d" && !self.?x.hasValue()"#), second]
    );
}

/// After an optional qualifier the plain ones are optional too: `self.?o.y.z` and
/// `self.?l[0][1]` are `optional.none()` when a part is absent (the oracle's answers).
#[test]
fn qualifiers_after_an_optional_one_are_optional() {
    let s = node(json!({"type": "object", "properties": {"spec": {
        "type": "object",
        "properties": {
            "o": {"type": "object", "properties": {"x": {"type": "string"},
                "y": {"type": "object", "properties": {"z": {"type": "string"}}}}},
            "l": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}}
        },
        "x-kubernetes-validations": [
            {"rule": "false", "messageExpression":
                "self.?o.x.orValue('-') + self.?o.y.z.orValue('-') + self.?l[0][1].orValue('-')"}
        ]
    }}}));
    let message = |spec: Value| run(&s, json!({"spec": spec}), None);
    let said = |m: &str| vec![format!(r#"spec: Invalid value: "object": {m}"#)];
    assert_eq!(message(json!({"o": {}, "l": [["a"]]})), said("---"));
    assert_eq!(message(json!({"o": {"y": {}}, "l": []})), said("---"));
    assert_eq!(message(json!({"o": {"x": "X", "y": {"z": "Z"}}, "l": [["a", "b"]]})), said("XZb"));
}

/// The oracle's answers: cel-go's words for values that do not fit, and for what kube's
/// libraries refuse, after `evaluating rule: `.
#[test]
fn runtime_errors_say_cel_gos_words() {
    for (rule, spec, oracle) in [
        ("-self.min < 0", json!({"min": i64::MIN}), "integer overflow"),
        (
            "duration('2562047h') + duration(self.name) > duration('0s')",
            json!({"name": "2562047h"}),
            "integer overflow",
        ),
        ("uint(self.min) - 2u > 0u", json!({"min": 1}), "unsigned integer overflow"),
        ("int(self.name) == 1", json!({"name": "x"}), "type conversion error from 'string' to 'int'"),
        ("self.name.charAt(10) == 'a'", json!({"name": "abc"}), "index out of range: 10"),
        // A global call passes its argument's failure on.
        ("uint(self.min) == 2u", json!({}), "no such key: min"),
        ("size(self.name) == 2", json!({}), "no such key: name"),
        (
            "cidr('10.0.0.0/8').containsCIDR(self.name)",
            json!({"name": "a+"}),
            r#"network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("a+"): no '/'"#,
        ),
        // Both operands failing: the first's error.
        ("uint(self.min) == 2u || int(self.name) == 1", json!({"min": -1, "name": "x"}), "unsigned integer overflow"),
        (
            "int(self.name) == 1 && uint(self.min) == 2u",
            json!({"min": -1, "name": "x"}),
            "type conversion error from 'string' to 'int'",
        ),
        (
            "quantity(self.name).isInteger()",
            json!({"name": "bad"}),
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
    ] {
        let s = spec_with_rules(json!([{"rule": rule}]));
        let want = format!(r#"spec: Invalid value: "object": {oracle} evaluating rule: {rule}"#);
        assert_eq!(run(&s, json!({"spec": spec}), None), [want], "{rule}");
    }
    let s = spec_with_rules(
        json!([{"rule": "-self.min == 3"}, {"rule": "--self.min == -3 && !!true && -0x3 == self.min"}]),
    );
    assert!(run(&s, json!({"spec": {"min": -3}}), None).is_empty());
    let s = spec_with_rules(
        json!([{"rule": "duration('1h') + timestamp('2020-01-01T00:00:00Z') == timestamp('2020-01-01T01:00:00Z')"}]),
    );
    assert!(run(&s, json!({"spec": {"min": -3}}), None).is_empty());
    // kube's containsIP of a string that is no IP fails as its receiver's overload error.
    let s = spec_with_rules(json!([{"rule": "cidr('10.0.0.0/8').containsIP(self.name)"}]));
    assert_eq!(
        run(&s, json!({"spec": {"name": "01.2.3.4"}}), None),
        [
            r#"spec: Invalid value: "object": 'no such overload': call arguments did not match a supported operator, function or macro signature for rule: cidr('10.0.0.0/8').containsIP(self.name)"#
        ]
    );
    // cel-go makes `x in []` false without evaluating `x`.
    let s = spec_with_rules(json!([{"rule": "!(int(self.name) in [])"}]));
    assert!(run(&s, json!({"spec": {"name": "x"}}), None).is_empty());
    let s = spec_with_rules(json!([{"rule": "[self.max, 1].sum() > 0"}]));
    assert_eq!(
        run(&s, json!({"spec": {"max": i64::MAX}}), None),
        [r#"spec: Invalid value: "object": integer overflow evaluating rule: [self.max, 1].sum() > 0"#]
    );
}

/// The oracle's answers: an error in one iteration is absorbed when another decides an
/// `exists` or an `all`, and numbers compare by value across types.
#[test]
fn comprehensions_absorb_errors_and_numbers_compare_across_types() {
    for (rule, spec, oracle) in [
        ("[0, 1].exists(x, self.max / x > 5)", json!({"max": 10}), None),
        ("[0, 20].all(x, self.max / x > 5)", json!({"max": 10}), Some("failed rule: [0, 20].all(x, self.max / x > 5)")),
        (
            "[0, 20].exists(x, self.max / x > 5)",
            json!({"max": 10}),
            Some("division by zero evaluating rule: [0, 20].exists(x, self.max / x > 5)"),
        ),
        (
            "[0, 1].all(x, self.max / x > 5)",
            json!({"max": 100}),
            Some("division by zero evaluating rule: [0, 1].all(x, self.max / x > 5)"),
        ),
        ("dyn(self.max) == 1.0 && dyn(self.max) == 1u && [dyn(self.max)] == [1.0]", json!({"max": 1}), None),
        ("dyn(self.max) != 1.0", json!({"max": 1}), Some("failed rule: dyn(self.max) != 1.0")),
        ("dyn(self.max) in [1.0] && !(dyn(self.max) in [2.0])", json!({"max": 1}), None),
    ] {
        let s = spec_with_rules(json!([{"rule": rule}]));
        let want: Vec<String> = oracle.map(|o| format!(r#"spec: Invalid value: "object": {o}"#)).into_iter().collect();
        assert_eq!(run(&s, json!({"spec": spec}), None), want, "{rule}");
    }
}

/// A ratcheted failure is a warning, with the text kube sends in its `Warning` header.
#[test]
fn ratcheted_failures_warn() {
    let s = spec_with_rules(json!([{"rule": "self.min < 5"}]));
    let obj = json!({"spec": {"min": 10}});
    let (errs, warned) = super::warnings::collecting(|| run(&s, obj.clone(), Some(obj.clone())));
    assert!(errs.is_empty());
    assert_eq!(warned, [r#"spec: Invalid value: "object": failed rule: self.min < 5"#]);
}

/// The oracle's answers: a `date-time` written with a lower-case `t` or `z` passes kube's
/// format check, but a rule that reaches it fails on its conversion to a timestamp.
#[test]
fn lower_case_date_times_fail_the_rules_that_reach_them() {
    let s = node(json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"t": {"type": "string", "format": "date-time"}, "n": {"type": "integer"}},
        "x-kubernetes-validations": [{"rule": "has(self.t)"}, {"rule": "self.n == 1"}]}}}));
    assert_eq!(
        run(&s, json!({"spec": {"t": "2021-01-01t00:00:00z", "n": 1}}), None),
        [
            r#"spec: Invalid value: "object": Invalid date-time formatted string 2021-01-01t00:00:00z: parsing time "2021-01-01t00:00:00z" as "2006-01-02T15:04:05": cannot parse "t00:00:00z" as "T" evaluating rule: has(self.t)"#
        ]
    );
    let s = node(json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"t": {"type": "string", "format": "date-time"}},
        "x-kubernetes-validations": [{"rule": "self.t == self.t"}]}}}));
    assert_eq!(
        run(&s, json!({"spec": {"t": "2021-01-01T00:00:00z"}}), None),
        [
            r#"spec: Invalid value: "object": Invalid date-time formatted string 2021-01-01T00:00:00z: parsing time "2021-01-01T00:00:00z": extra text: "z" evaluating rule: self.t == self.t"#
        ]
    );
    assert!(run(&s, json!({"spec": {"t": "2021-01-01T00:00:00Z"}}), None).is_empty());
}

/// The oracle's answers: lists of optionals are iterated, compared and searched as any list.
#[test]
fn lists_of_optionals_are_iterated_and_compared() {
    let s = spec_with_rules(json!([
        {"rule": "[self.?name, self.?min].exists(o, o.hasValue())"},
        {"rule": "[self.?name, self.?min].filter(o, o.hasValue()).size() == 1"},
        {"rule": "[self.?name, self.?min].map(o, o.orValue('z')) == ['x', 'z']"},
        {"rule": "[self.?name].map(o, o) == [self.?name]"},
        {"rule": "optional.none() in [optional.none()] && [self.?min] == [optional.none()]"},
        {"rule": "{'k': [self.?name]}.k.all(o, o.hasValue())"},
        {"rule": "[[self.?name], [self.?min]].exists(l, l.all(o, !o.hasValue()))"},
    ]));
    assert_eq!(run(&s, json!({"spec": {"name": "x"}}), None), Vec::<String>::new());
}

/// The oracle's answers: oldSelf is bound only at a node one of whose rules uses it, so a
/// messageExpression reading it at another node fails and the rule's message stands.
#[test]
fn old_self_is_bound_only_where_a_rule_uses_it() {
    let message = json!({"rule": "self.min >= 0", "messageExpression": "'was ' + string(oldSelf.min)"});
    let s = spec_with_rules(json!([message]));
    let (obj, old) = (json!({"spec": {"min": -1}}), json!({"spec": {"min": 1}}));
    assert_eq!(
        run(&s, obj.clone(), Some(old.clone())),
        [r#"spec: Invalid value: "object": failed rule: self.min >= 0"#]
    );
    let s = spec_with_rules(json!([message, {"rule": "oldSelf.min <= 1"}]));
    assert_eq!(run(&s, obj, Some(old)), [r#"spec: Invalid value: "object": was 1"#]);
}

/// The oracle's answers: an `optionalOldSelf` rule sees the old value as decoded, its
/// formatted strings not converted and its names not escaped.
#[test]
fn optional_old_self_is_the_old_value_untyped() {
    let s = node(json!({"type": "object", "properties": {"spec": {
        "type": "object",
        "properties": {"a-b": {"type": "string"}, "du": {"type": "string", "format": "duration"}, "k": {"type": "integer"}},
        "x-kubernetes-validations": [
            {"rule": "oldSelf.orValue(self).du > duration('0s')", "optionalOldSelf": true},
            {"rule": "has(oldSelf.orValue(self).a__dash__b)", "optionalOldSelf": true},
            {"rule": "oldSelf.orValue(self)['a-b'] == 'x' || !oldSelf.hasValue()", "optionalOldSelf": true}
        ]
    }}}));
    let spec = |k: i64| json!({"spec": {"a-b": "x", "du": "1h", "k": k}});
    assert!(run(&s, spec(1), None).is_empty());
    assert_eq!(
        run(&s, spec(2), Some(spec(1))),
        [
            r#"spec: Invalid value: "object": 'no such overload': call arguments did not match a supported operator, function or macro signature for rule: oldSelf.orValue(self).du > duration('0s')"#,
            r#"spec: Invalid value: "object": failed rule: has(oldSelf.orValue(self).a__dash__b)"#
        ]
    );
}

/// The oracle's answer: comparing objects of one size, one holding a value kube cannot
/// convert (a `byte` string with `/`), fails with that value's words.
#[test]
fn comparing_objects_that_hold_unconvertible_values_fails() {
    let s = node(json!({"type": "object", "properties": {"spec": {
        "type": "object",
        "properties": {"by": {"type": "string", "format": "byte"}, "k": {"type": "integer"}},
        "x-kubernetes-validations": [{"rule": "oldSelf == self", "message": "changed"}]
    }}}));
    let spec = |k: i64| json!({"spec": {"by": "YdjM/w==", "k": k}});
    assert_eq!(
        run(&s, spec(2), Some(spec(1))),
        [
            r#"spec: Invalid value: "object": Invalid byte formatted string YdjM/w==: illegal base64 data at input byte 4 evaluating rule: changed"#
        ]
    );
}
