//! `x-kubernetes-validations` at registration: the static checks on each rule, each
//! rule compiled with the types its node gives `self` (kube's `cel.Compile`), and kube's
//! cost budgets: a rule's estimated cost times how often it can run (its node's
//! cardinality: the product of the `maxItems`/`maxProperties` above it) must stay within
//! [`STATIC_ESTIMATED_COST_LIMIT`], and all the rules of a schema within
//! [`STATIC_ESTIMATED_CRD_COST_LIMIT`].

use crate::field::{ErrorType, FieldError, Path};
use crate::registry::schema_walk::text;
use crate::registry::structural::new_structural_error;
use crate::schema::celcheck::{self, size};
use crate::schema::celcost::{STATIC_ESTIMATED_COST_LIMIT, STATIC_ESTIMATED_CRD_COST_LIMIT, exceeds_budget};
use crate::schema::fieldpath;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;

const SUPPORTED_RULE_REASONS: [&str; 4] =
    ["FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"];

fn has_newlines(s: &str) -> bool {
    s.contains(['\n', '\r'])
}

/// The static checks on `x-kubernetes-validations`; compiling the CEL is the schema
/// module's business.
pub fn validation_rules(s: &JSONSchemaProps, path: &Path, errs: &mut Vec<FieldError>) {
    for (i, rule) in s.x_kubernetes_validations.iter().flatten().enumerate() {
        let p = path.child("x-kubernetes-validations").index(i);
        let message = text(&rule.message);
        let (trimmed_rule, trimmed_message) = (rule.rule.trim(), message.trim());
        if trimmed_rule.is_empty() {
            errs.push(FieldError::required(p.child("rule"), "rule is not specified"));
        } else if !message.is_empty() && trimmed_message.is_empty() {
            errs.push(FieldError::invalid(p.child("message"), message, "message must be non-empty if specified"));
        } else if has_newlines(trimmed_message) {
            errs.push(FieldError::invalid(p.child("message"), message, "message must not contain line breaks"));
        } else if has_newlines(trimmed_rule) && trimmed_message.is_empty() {
            errs.push(FieldError::required(
                p.child("message"),
                "message must be specified if rule contains line breaks",
            ));
        }
        let expression = text(&rule.message_expression);
        if !expression.is_empty() && expression.trim().is_empty() {
            errs.push(FieldError::required(
                p.child("messageExpression"),
                "messageExpression must be non-empty if specified",
            ));
        }
        if let Some(reason) = rule.reason.as_deref()
            && !SUPPORTED_RULE_REASONS.contains(&reason)
        {
            errs.push(FieldError::not_supported(p.child("reason"), reason, &SUPPORTED_RULE_REASONS));
        }
        let field_path = text(&rule.field_path);
        if !field_path.is_empty() && field_path.trim().is_empty() {
            errs.push(FieldError::invalid(
                p.child("fieldPath"),
                field_path,
                "fieldPath must be non-empty if specified",
            ));
        }
        if has_newlines(field_path) {
            errs.push(FieldError::invalid(p.child("fieldPath"), field_path, "fieldPath must not contain line breaks"));
        }
        // kube only resolves paths on a structural node.
        if !field_path.is_empty() && new_structural_error(s).is_none() && fieldpath::resolve(field_path, s).is_err() {
            errs.push(FieldError::invalid(p.child("fieldPath"), field_path, "fieldPath must be a valid path"));
        }
    }
}

/// How often the rules of a node can run in one object (kube's `MaxCardinality`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cardinality {
    Bounded(u64),
    /// Under a list or map with no `maxItems`/`maxProperties`: kube then sizes it from
    /// the request size limit and the node's smallest serialized value.
    Unbounded,
}

impl Cardinality {
    pub const ROOT: Cardinality = Cardinality::Bounded(1);

    /// The cardinality of `parent`'s children (kube's `extractMaxElements`).
    pub fn child(self, parent: &JSONSchemaProps) -> Cardinality {
        let Cardinality::Bounded(n) = self else { return self };
        let bound = |limit: Option<i64>| match limit {
            Some(m) => Cardinality::Bounded(n.saturating_mul(m.max(0) as u64)),
            None => Cardinality::Unbounded,
        };
        match parent.type_.as_deref() {
            Some("object") if parent.additional_properties.is_some() => bound(parent.max_properties),
            Some("array") => bound(parent.max_items),
            _ => self,
        }
    }

    /// kube's `getExpressionCost`: one evaluation's estimate times the cardinality.
    fn expression_cost(self, max_cost: u64, node: &JSONSchemaProps) -> u64 {
        let times = match self {
            Cardinality::Bounded(n) => n,
            Cardinality::Unbounded => size::unbounded_cardinality(node),
        };
        max_cost.saturating_mul(times)
    }
}

/// The estimated cost of all of a schema's rules (kube's `TotalCost`).
#[derive(Debug, Default)]
pub struct RuleCosts {
    total: u64,
    /// The (at most 4) costliest rules, most expensive first: kube names them.
    most_expensive: Vec<(String, u64)>,
}

impl RuleCosts {
    fn observe(&mut self, field: String, cost: u64) {
        self.total = self.total.saturating_add(cost);
        // Rules under 1% of the limit are not worth naming.
        if cost < STATIC_ESTIMATED_CRD_COST_LIMIT / 100 {
            return;
        }
        self.most_expensive.push((field, cost));
        self.most_expensive.sort_by_key(|(_, cost)| std::cmp::Reverse(*cost));
        self.most_expensive.truncate(4);
    }

    /// kube's errors when the total exceeds its limit (`root` is `openAPIV3Schema`).
    pub fn errors(&self, root: &Path) -> Vec<FieldError> {
        if self.total <= STATIC_ESTIMATED_CRD_COST_LIMIT {
            return Vec::new();
        }
        let contributed = "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema";
        let mut errs: Vec<FieldError> =
            self.most_expensive.iter().map(|(field, _)| FieldError::forbidden(field.as_str(), contributed)).collect();
        let what = "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema";
        errs.push(FieldError::forbidden(root, exceeds_budget(what, self.total, STATIC_ESTIMATED_CRD_COST_LIMIT)));
        errs
    }
}

/// Where a node's rules are compiled.
pub struct RuleSite<'a> {
    pub path: &'a Path,
    /// The node is the resource's root (`self` has `apiVersion`, `kind`, `metadata`).
    pub is_root: bool,
    /// How often the rules can run.
    pub cardinality: Cardinality,
    /// The ancestor below which `oldSelf` cannot be correlated, if any.
    pub uncorrelatable: Option<&'a Path>,
    /// The version's schema is unchanged by an update: the per-rule budgets are not held.
    pub suppress_cost: bool,
}

/// Each rule compiled with the types the schema gives `self` (kube's `cel.Compile`), in
/// kube's order per rule: its cost against the per-rule budget (added to `costs`), its
/// compile error, its `messageExpression`'s, then its use of `oldSelf`.
pub fn compiled_rules(s: &JSONSchemaProps, site: &RuleSite, costs: &mut RuleCosts, errs: &mut Vec<FieldError>) {
    for (i, rule) in s.x_kubernetes_validations.iter().flatten().enumerate() {
        if rule.rule.trim().is_empty() {
            continue;
        }
        let at = site.path.child("x-kubernetes-validations").index(i);
        let compiled = celcheck::compile(rule, s, site.is_root);
        let cost = site.cardinality.expression_cost(compiled.max_cost, s);
        if !site.suppress_cost && cost > STATIC_ESTIMATED_COST_LIMIT {
            errs.push(FieldError::forbidden(
                at.child("rule"),
                exceeds_budget("estimated rule cost", cost, STATIC_ESTIMATED_COST_LIMIT),
            ));
        }
        costs.observe(at.child("rule").into(), cost);
        // The bad value is the rule as Go prints the struct, unquoted.
        let invalid_rule = |field: Path, detail: String| FieldError {
            error_type: ErrorType::Invalid,
            field: field.into(),
            value: None,
            detail: format!("{}: {detail}", celcheck::go_rule_value(rule)),
        };
        if let Some(detail) = compiled.error {
            errs.push(invalid_rule(at.child("rule"), detail));
        }
        if let Some(detail) = compiled.message_error {
            errs.push(invalid_rule(at.child("messageExpression"), detail));
        } else if compiled.message_cost > 0 {
            // kube does not multiply a message's cost by the cardinality.
            if !site.suppress_cost && compiled.message_cost > STATIC_ESTIMATED_COST_LIMIT {
                errs.push(FieldError::forbidden(
                    at.child("messageExpression"),
                    exceeds_budget(
                        "estimated messageExpression cost",
                        compiled.message_cost,
                        STATIC_ESTIMATED_COST_LIMIT,
                    ),
                ));
            }
            costs.observe(at.child("messageExpression").into(), compiled.message_cost);
        }
        if compiled.uses_old_self {
            if let Some(within) = site.uncorrelatable {
                errs.push(FieldError::invalid(
                    at.child("rule"),
                    rule.rule.as_str(),
                    format!("oldSelf cannot be used on the uncorrelatable portion of the schema within {within}"),
                ));
            }
        } else if let Some(optional) = rule.optional_old_self {
            errs.push(FieldError::invalid(
                at.child("optionalOldSelf"),
                optional,
                "may not be set if oldSelf is not used in rule",
            ));
        }
    }
}

#[cfg(test)]
#[path = "schema_cel_tests.rs"]
mod tests;
