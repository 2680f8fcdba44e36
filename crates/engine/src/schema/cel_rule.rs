//! One compiled `x-kubernetes-validations` rule: its expressions parsed (within cel-go's
//! limits) and instrumented for cost, its `fieldPath` resolved against the schema it sits
//! on. The compiled schema tree ([`super::node`]) holds these; [`super::cel`] evaluates them.

use super::celcheck;
use super::celcost;
use super::celmeter;
use super::fieldpath;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{JSONSchemaProps, ValidationRule};
use kube_cel::cel::parser::Expression;

/// One compiled `x-kubernetes-validations` entry.
#[derive(Debug)]
pub struct CompiledRule {
    pub rule: String,
    pub message: String,
    pub message_expression: String,
    pub reason: Option<String>,
    /// `fieldPath` normalized to a field path (`a.b`, `a[key]`), empty when unset.
    pub field_path: String,
    pub optional_old_self: bool,
    /// The expressions, [`celmeter::instrument`]ed.
    pub(super) program: Result<Expression, String>,
    pub(super) message_program: Option<Result<Expression, String>>,
    pub(super) uses_old_self: bool,
    /// How deeply the expressions nest ([`celmeter::depth`]; 0 for one that did not compile).
    pub(super) depth: usize,
}

/// Parses a CEL expression, refusing one over cel-go's limits (whatever stored it: a CRD
/// written by an older version must not take the server down); the error is kube's or the
/// parser's.
pub(super) fn parse(expression: &str) -> Result<Expression, String> {
    celcheck::check_limits(expression)?;
    celcheck::cel_parse(expression).map_err(|e| e.to_string().trim().to_string())
}

impl CompiledRule {
    /// Compiles the rule of a node (`node` resolves its `fieldPath`), on the CEL stack:
    /// the instrumentation walks the expression too.
    pub fn compile(rule: &ValidationRule, node: &JSONSchemaProps) -> CompiledRule {
        celcost::on_cel_stack(|| Self::compile_here(rule, node))
    }

    fn compile_here(rule: &ValidationRule, node: &JSONSchemaProps) -> CompiledRule {
        let parsed = parse(&rule.rule);
        let uses_old_self = parsed.as_ref().is_ok_and(|p| p.references().has_variable("oldSelf"));
        let program = parsed.map(|p| celmeter::instrument(&p));
        let message_expression = rule.message_expression.clone().unwrap_or_default();
        let message_program = (!message_expression.trim().is_empty())
            .then(|| parse(&message_expression).map(|p| celmeter::instrument(&p)));
        let depth_of =
            |p: Option<&Result<Expression, String>>| p.and_then(|p| p.as_ref().ok()).map_or(0, celmeter::depth);
        let depth = depth_of(Some(&program)).max(depth_of(message_program.as_ref()));
        let raw_field_path = rule.field_path.clone().unwrap_or_default();
        let field_path = fieldpath::resolve(&raw_field_path, node).unwrap_or(raw_field_path);
        CompiledRule {
            rule: rule.rule.clone(),
            message: rule.message.clone().unwrap_or_default(),
            message_expression,
            reason: rule.reason.clone(),
            field_path,
            optional_old_self: rule.optional_old_self.unwrap_or(false),
            program,
            message_program,
            uses_old_self,
            depth,
        }
    }

    /// `ruleErrorString`: the message when set, else the rule.
    pub(super) fn error_string(&self) -> &str {
        let message = self.message.trim();
        if message.is_empty() { self.rule.trim() } else { message }
    }

    /// `ruleMessageOrDefault`.
    pub(super) fn message_or_default(&self) -> String {
        let message = self.message.trim();
        if message.is_empty() { format!("failed rule: {}", self.rule.trim()) } else { message.to_string() }
    }
}
