//! One `x-kubernetes-validations` rule evaluated alone, for tools that try rules out: the
//! same compilation, type conversion, limits and wording as validation
//! ([`super::cel`]), plus what validation keeps to itself — the static cost estimate kube
//! computes at registration and the runtime cost the evaluation took.

use super::cel::{self, Site};
use super::celcheck;
use super::node::Node;
use crate::field::Path;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{JSONSchemaProps, ValidationRule};
use serde_json::Value;

/// What the rule made of the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// It evaluated to `true`.
    Passed,
    /// It evaluated to `false`, or could not be evaluated: the causes say which.
    Failed,
    /// Not run: a transition rule without `oldSelf` (a create), as validation skips it.
    Skipped,
}

/// One problem, as a `StatusCause` of kube's 422 words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause {
    /// The field path (`spec.size`; `<nil>` at the root, as kube prints it).
    pub field: String,
    /// `FieldValueInvalid`, or what the rule's `reason` picks.
    pub reason: String,
    /// The message without the field: `Invalid value: "object": <message>`.
    pub message: String,
    /// The rule's part of the message: its `messageExpression`'s value, `message`, or
    /// kube's runtime error.
    pub detail: String,
}

impl Cause {
    /// The cause as the Status message prints it: `field: message`.
    pub fn text(&self) -> String {
        format!("{}: {}", self.field, self.message)
    }
}

/// The result of [`evaluate_rule`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Whether the rule held.
    pub verdict: Verdict,
    /// What a refusal would report (empty when it passed or was skipped).
    pub causes: Vec<Cause>,
    /// Why kube would refuse the rule at registration, in its words.
    pub compile_error: Option<String>,
    /// kube's static estimate of one evaluation's cost (0 when it does not compile).
    pub estimated_cost: u64,
    /// The same for the `messageExpression`.
    pub message_estimated_cost: u64,
    /// What the evaluation cost (the rule, and its `messageExpression` when it failed);
    /// `None` when a cost limit stopped it.
    pub runtime_cost: Option<u64>,
}

/// Evaluates `rule` of the schema node `schema` on `self_value` (and `old_self`, for a
/// transition rule) as validation does at `path` (the node's field path in the object;
/// empty for the root, `resource_root` then being `true`). The node's other rules and its
/// children's do not run.
pub fn evaluate_rule(
    schema: &JSONSchemaProps,
    rule: &ValidationRule,
    path: &str,
    resource_root: bool,
    self_value: &Value,
    old_self: Option<&Value>,
) -> Outcome {
    let checked = celcheck::compile(rule, schema, resource_root);
    let mut alone = schema.clone();
    alone.x_kubernetes_validations = Some(vec![rule.clone()]);
    // Rules in allOf branches run on the same value: they are other rules.
    alone.all_of = None;
    let node = Node::compile(&alone);
    let path = if path.is_empty() { Path::default() } else { Path::root(path) };
    let skipped = self_value.is_null()
        || node.rules.first().is_some_and(|r| r.uses_old_self && old_self.is_none() && !r.optional_old_self);
    let resource_root = resource_root || node.embedded_resource;
    let site = Site { path: &path, value: self_value, old: old_self, resource_root, ratchet: cel::Ratchet::Changed };
    let (errors, runtime_cost) = cel::evaluate_alone(&node, &site);
    let causes: Vec<Cause> = errors
        .into_iter()
        .map(|e| Cause {
            field: e.field.clone(),
            reason: e.error_type.cause_reason().to_string(),
            message: e.body(),
            detail: e.detail.clone(),
        })
        .collect();
    let verdict = match () {
        _ if !causes.is_empty() => Verdict::Failed,
        _ if skipped => Verdict::Skipped,
        _ => Verdict::Passed,
    };
    Outcome {
        verdict,
        causes,
        compile_error: checked.error,
        estimated_cost: checked.max_cost,
        message_estimated_cost: checked.message_cost,
        runtime_cost,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> JSONSchemaProps {
        serde_json::from_value(json!({"type": "object", "properties": {
            "min": {"type": "integer"}, "max": {"type": "integer"},
            "name": {"type": "string", "maxLength": 10}
        }}))
        .expect("schema")
    }

    fn rule(rule: &str, message_expression: Option<&str>) -> ValidationRule {
        ValidationRule {
            rule: rule.into(),
            message_expression: message_expression.map(String::from),
            ..Default::default()
        }
    }

    #[test]
    fn a_failing_rule_reports_as_validation_does_with_its_costs() {
        let r = rule("self.min <= self.max", Some("'min ' + string(self.min) + ' is over max'"));
        let out = evaluate_rule(&schema(), &r, "spec", false, &json!({"min": 5, "max": 2}), None);
        assert_eq!(out.verdict, Verdict::Failed);
        assert_eq!(out.causes.len(), 1);
        assert_eq!(out.causes[0].text(), r#"spec: Invalid value: "object": min 5 is over max"#);
        assert_eq!(out.causes[0].reason, "FieldValueInvalid");
        assert!(out.estimated_cost > 0 && out.message_estimated_cost > 0, "{out:?}");
        assert!(out.runtime_cost.is_some_and(|c| c > 0), "{out:?}");
        assert_eq!(out.compile_error, None);

        let ok = evaluate_rule(&schema(), &r, "spec", false, &json!({"min": 1, "max": 2}), None);
        assert_eq!((ok.verdict, ok.causes.len()), (Verdict::Passed, 0));
    }

    #[test]
    fn transition_rules_need_old_self_and_errors_are_kubes() {
        let r = rule("self.min >= oldSelf.min", None);
        let skipped = evaluate_rule(&schema(), &r, "spec", false, &json!({"min": 1}), None);
        assert_eq!(skipped.verdict, Verdict::Skipped);
        let shrunk = evaluate_rule(&schema(), &r, "spec", false, &json!({"min": 1}), Some(&json!({"min": 2})));
        assert_eq!(shrunk.causes[0].detail, "failed rule: self.min >= oldSelf.min");

        let missing = evaluate_rule(&schema(), &rule("self.max > 0", None), "spec", false, &json!({}), None);
        assert_eq!(missing.causes[0].detail, "no such key: max evaluating rule: self.max > 0");
        let bad = evaluate_rule(&schema(), &rule("self.nope > 0", None), "spec", false, &json!({}), None);
        assert!(bad.compile_error.as_deref().is_some_and(|e| e.starts_with("compilation failed")), "{bad:?}");
    }
}
