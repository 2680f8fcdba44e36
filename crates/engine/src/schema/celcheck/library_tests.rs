//! kube-apiserver 1.32's answers (the oracle's, `selfType<N>` masked) for rules calling
//! library functions, with right and wrong arguments, constant arguments its validators
//! check, `format` strings and homogeneous literals, on the object `spec` of this schema.
//! An empty answer means kube compiles the rule.

use super::*;
use cases::{CASES, COSTS};
use serde_json::json;

mod cases;

fn spec() -> JSONSchemaProps {
    serde_json::from_value(json!({"type": "object", "properties": {
        "name": {"type": "string"}, "short": {"type": "string", "maxLength": 10},
        "count": {"type": "integer"}, "f": {"type": "number"}, "ok": {"type": "boolean"},
        "ts": {"type": "string", "format": "date-time"}, "d": {"type": "string", "format": "duration"},
        "b": {"type": "string", "format": "byte"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "stags": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 10}},
        "nums": {"type": "array", "items": {"type": "integer"}},
        "dbls": {"type": "array", "items": {"type": "number"}},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "obj": {"type": "object", "properties": {"x": {"type": "string"}}},
        "objs": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "string"}}}},
        "ios": {"x-kubernetes-int-or-string": true},
        "any": {"x-kubernetes-preserve-unknown-fields": true}}}))
    .expect("schema")
}

#[test]
fn library_calls_compile_as_kube_compiles_them() {
    let node = spec();
    let re = regex::Regex::new(r"selfType\d+").expect("regex");
    let mut wrong = Vec::new();
    for (rule, want) in CASES {
        let rule = ValidationRule { rule: rule.to_string(), ..Default::default() };
        let got = compile(&rule, &node, false).error.map(|e| re.replace_all(&e, "selfTypeN").into_owned());
        if got.as_deref().unwrap_or_default() != *want {
            wrong.push(format!("{}\n  kube: {want}\n  ours: {got:?}", rule.rule));
        }
    }
    assert!(wrong.is_empty(), "{} of {} differ:\n{}", wrong.len(), CASES.len(), wrong.join("\n"));
}

/// A `messageExpression` is compiled as its rule is, and kube words its refusals for it.
#[test]
fn message_expressions_compile_as_kube_compiles_them() {
    let node = spec();
    let message_error = |expression: &str| {
        let rule = ValidationRule {
            rule: "self.count > 0".into(),
            message_expression: Some(expression.into()),
            ..Default::default()
        };
        compile(&rule, &node, false).message_error
    };
    assert_eq!(
        message_error("self.name.foo()").as_deref(),
        Some(
            "messageExpression compilation failed: ERROR: <input>:1:14: undeclared reference to 'foo' (in container '')\n | self.name.foo()\n | .............^"
        )
    );
    assert_eq!(
        message_error("matches(self.name, ')') ? 'a' : 'b'").as_deref(),
        Some("messageExpression instantiation failed: error parsing regexp: unexpected ): `)`")
    );
    assert_eq!(message_error("\"%s has %d\".format([self.name, self.count])"), None);
}

/// The estimated cost of each rule kube compiles, held against the budget of one rule
/// (the rules are on `spec`, which runs once): kube's factor over the budget, or nothing
/// when within it.
#[test]
fn library_calls_cost_what_kube_estimates() {
    use crate::schema::celcost::{STATIC_ESTIMATED_COST_LIMIT, exceeds_budget};
    let node = spec();
    let mut wrong = Vec::new();
    for (rule, factor) in COSTS {
        let rule = ValidationRule { rule: rule.to_string(), ..Default::default() };
        let compiled = compile(&rule, &node, false);
        assert_eq!(compiled.error, None, "{}", rule.rule);
        let over = compiled.max_cost > STATIC_ESTIMATED_COST_LIMIT;
        let got = over.then(|| exceeds_budget("estimated rule cost", compiled.max_cost, STATIC_ESTIMATED_COST_LIMIT));
        let want = (!factor.is_empty()).then(|| format!("estimated rule cost exceeds budget by factor of {factor} ("));
        if got.as_deref().map(|g| g.split_inclusive(" (").next().unwrap_or_default()) != want.as_deref() {
            wrong.push(format!("{}: kube {factor:?}, ours {got:?} (cost {})", rule.rule, compiled.max_cost));
        }
    }
    assert!(wrong.is_empty(), "{} of {} differ:\n{}", wrong.len(), COSTS.len(), wrong.join("\n"));
}
