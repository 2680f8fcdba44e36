//! Compiling `x-kubernetes-validations` rules at CRD registration, as apiextensions'
//! `cel.Compile` does: parse, then type-check against the types the schema gives `self`
//! and `oldSelf`, and refuse the rule with cel-go's messages.
//!
//! The `cel` crate parses but has no type checker, so [`parse`] and [`check`] do what
//! cel-go's checker does with the functions kube declares ([`decls`]): refuse functions no
//! library declares (`self.foo()`), functions and operators applied to types without an
//! overload (`size(self)` on an object, `self.name == 1`, `isURL(1)`), fields an object
//! does not declare (`self.nope`), non-bool logical operands, mixed list and map literals,
//! and rules that do not evaluate to a bool. Then cel-go's validators ([`literals`]):
//! constant durations, timestamps, regexes and `format` strings, exactly homogeneous
//! literals.
//!
//! A rule that compiles gets cel-go's cost estimate ([`cost`]), from the sizes the schema
//! declares ([`size`]).

mod check;
mod cost;
mod decls;
mod literals;
mod parse;
mod signs;
pub mod size;
mod types;

pub use types::{escape, keyword_field};

use crate::schema::celcost::{MAX_RECURSION_DEPTH, guarded, on_cel_stack};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{JSONSchemaProps, ValidationRule};
use parse::Failure;
use types::CelType;

/// kube's refusal when a rule's type is not bool.
const NOT_BOOL: &str = "cel expression must evaluate to a bool";

/// kube's refusal when a `messageExpression`'s type is not string.
const NOT_STRING: &str = "messageExpression must evaluate to a string";

/// What compiling one rule finds at registration.
#[derive(Debug, Default)]
pub struct Compiled {
    /// Why kube refuses the rule: the detail of its `Invalid` error.
    pub error: Option<String>,
    /// The most one evaluation can cost (0 when the rule does not compile, as in kube).
    pub max_cost: u64,
    /// Why kube refuses the `messageExpression` (only looked at when the rule compiles).
    pub message_error: Option<String>,
    /// The same for the `messageExpression`, when it compiles.
    pub message_cost: u64,
    /// The rule compiles and refers to `oldSelf` (kube's `UsesOldSelf`, false when the rule
    /// does not compile).
    pub uses_old_self: bool,
}

/// Compiles `rule` on the schema node `node` (the resource root when `root`) as kube's
/// `cel.Compile` does, on a stack deep enough for any rule within cel-go's limits.
pub fn compile(rule: &ValidationRule, node: &JSONSchemaProps, root: bool) -> Compiled {
    on_cel_stack(|| compile_here(rule, node, root))
}

/// The issues of a source over cel-go's limits, at cel-go's location for them.
fn limit_issue(message: &str) -> String {
    format!("ERROR: <input>:-1:0: {message}")
}

/// The gate every CEL source passes before the `cel` crate parses it: our parse (`None`
/// for syntax we do not know, still within cel-go's limits), or cel-go's issues for a
/// source over its limits, which no deeper parser may see.
fn gate(source: &str) -> Result<Option<parse::Expr>, String> {
    match parse::parse(source) {
        Ok(expr) => Ok(Some(expr)),
        Err(Failure::Limit(message)) => Err(limit_issue(&message)),
        Err(Failure::Unrecognized) => match parse::bounded(source) {
            Err(Failure::Limit(message)) => Err(limit_issue(&message)),
            _ => Ok(None),
        },
    }
}

/// The `cel` crate's parse of a source that passed [`check_limits`], allowed as deep as
/// cel-go's limits (the crate's own default is shallower), with the optional syntax
/// (`self.?x`, `l[?0]`) kube enables.
pub fn cel_parse(source: &str) -> Result<kube_cel::cel::parser::Expression, kube_cel::cel::ParseErrors> {
    let parser = || {
        kube_cel::cel::parser::Parser::new()
            .max_recursion_depth(MAX_RECURSION_DEPTH as u16)
            .enable_optional_syntax(true)
            .parse(&signs::mend(source))
    };
    guarded(parser).unwrap_or_else(|msg| {
        let error = kube_cel::cel::ParseError { source: None, pos: (-1, 0), msg, expr_id: 0, source_info: None };
        Err(kube_cel::cel::ParseErrors { errors: vec![error] })
    })
}

/// kube's compile error for a source over cel-go's limits (size, nesting), if it is.
pub fn check_limits(source: &str) -> Result<(), String> {
    on_cel_stack(|| gate(source).map(drop).map_err(|issues| format!("compilation failed: {issues}")))
}

/// One expression type-checked with `variables`.
enum Checked {
    /// Syntax our checker does not know (kube may still refuse it; we accept it unchecked),
    /// with whether it refers to `oldSelf`.
    Unchecked {
        uses_old_self: bool,
    },
    Typed {
        expr: parse::Expr,
        result: CelType,
        types: std::collections::HashMap<usize, CelType>,
    },
}

/// Parses and type-checks one CEL source as cel-go's `Env.Compile` does: `Err` holds its
/// issues (`ERROR: <input>:L:C: ...` lines with carets).
fn check_source(source: &str, variables: Vec<(String, CelType)>) -> Result<Checked, String> {
    check_source_with(source, check::Checker::new(variables))
}

/// [`check_source`] with the checker `checker`.
fn check_source_with(source: &str, mut checker: check::Checker) -> Result<Checked, String> {
    let parsed = gate(source)?;
    let cel_expr = match cel_parse(source) {
        Ok(expr) => expr,
        Err(errors) => {
            let found = errors.errors.iter().map(|e| (e.pos, e.msg.clone()));
            let shown: Vec<String> = found.map(|((line, col), msg)| located(source, line, col, &msg)).collect();
            return Err(shown.join("\n"));
        }
    };
    let Some(expr) = parsed else {
        return Ok(Checked::Unchecked { uses_old_self: cel_expr.references().has_variable(OLD_SELF) });
    };
    let result = checker.check(&expr);
    let mut errors = checker.errors;
    if errors.is_empty() {
        // cel-go runs its validators only over an expression that type-checked.
        errors = literals::validate(&expr, &checker.types);
    }
    if errors.is_empty() {
        return Ok(Checked::Typed { expr, result, types: checker.types });
    }
    errors.sort_by_key(|(pos, _)| *pos);
    let shown: Vec<String> = errors
        .iter()
        .map(|(pos, msg)| {
            let before = &source[..*pos];
            let line = before.matches('\n').count() + 1;
            let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            located(source, line as isize, col as isize, msg)
        })
        .collect();
    Err(shown.join("\n"))
}

/// What folding the constant conversions of `source` refuses ([`super::celfold`]).
fn constant_error(source: &str) -> Option<String> {
    super::celfold::constant_error(&cel_parse(source).ok()?)
}

/// The name of the previous value's variable.
const OLD_SELF: &str = "oldSelf";

fn compile_here(rule: &ValidationRule, node: &JSONSchemaProps, root: bool) -> Compiled {
    let source = rule.rule.as_str();
    let self_type = CelType::of_schema(node, &self_type_name(source), root);
    let old_self = match rule.optional_old_self {
        Some(true) => CelType::Optional(Box::new(self_type.clone())),
        _ => self_type.clone(),
    };
    let variables = vec![("self".to_string(), self_type), (OLD_SELF.to_string(), old_self)];
    let (expr, types) = match check_source(source, variables.clone()) {
        Err(issues) => return Compiled { error: Some(format!("compilation failed: {issues}")), ..Default::default() },
        Ok(Checked::Unchecked { uses_old_self }) => return Compiled { uses_old_self, ..Default::default() },
        Ok(Checked::Typed { result, .. }) if !result.is_open() && result != CelType::Bool => {
            return Compiled { error: Some(NOT_BOOL.to_string()), ..Default::default() };
        }
        Ok(Checked::Typed { expr, types, .. }) => (expr, types),
    };
    if let Some(error) = literals::program_error(&expr).or_else(|| constant_error(source)) {
        return Compiled { error: Some(format!("program instantiation failed: {error}")), ..Default::default() };
    }
    let uses_old_self = expr.references(OLD_SELF);
    let max_cost = estimate(&expr, &types, node, root);
    let (message_error, message_cost) = match compile_message(rule, node, root, variables) {
        Ok(cost) => (None, cost),
        Err(error) => (Some(error), 0),
    };
    Compiled { error: None, max_cost, message_error, message_cost, uses_old_self }
}

/// kube's `kubernetes.AdmissionRequest` (`BuildRequestType`), the type of `request`.
fn admission_request_type() -> CelType {
    use std::collections::BTreeMap;
    use std::sync::Arc;
    use types::ObjectType;
    let object = |name: &str, fields: &[(&str, CelType)]| {
        let fields: BTreeMap<String, CelType> = fields.iter().map(|(k, t)| (k.to_string(), t.clone())).collect();
        CelType::Object(Arc::new(ObjectType { name: name.into(), fields }))
    };
    let strings = |names: [&'static str; 3]| names.map(|n| (n, CelType::String));
    let gvk = object("kubernetes.GroupVersionKind", &strings(["group", "version", "kind"]));
    let gvr = object("kubernetes.GroupVersionResource", &strings(["group", "version", "resource"]));
    let string_list = CelType::List(Box::new(CelType::String));
    let user_info = object(
        "kubernetes.UserInfo",
        &[
            ("username", CelType::String),
            ("uid", CelType::String),
            ("groups", string_list.clone()),
            ("extra", CelType::Map(Box::new(CelType::String), Box::new(string_list))),
        ],
    );
    object(
        "kubernetes.AdmissionRequest",
        &[
            ("kind", gvk.clone()),
            ("resource", gvr.clone()),
            ("subResource", CelType::String),
            ("requestKind", gvk),
            ("requestResource", gvr),
            ("requestSubResource", CelType::String),
            ("name", CelType::String),
            ("namespace", CelType::String),
            ("operation", CelType::String),
            ("userInfo", user_info),
            ("dryRun", CelType::Bool),
            ("options", CelType::Dyn),
        ],
    )
}

/// The variables an admission webhook's `matchConditions` see (kube's admission
/// environment without `params`): `object` and `oldObject` are `dyn`, `request` kube's
/// request type, `authorizer` and `authorizer.requestResource` its authorization library's;
/// `namespaceObject` (a typed Namespace in kube) is open here.
fn admission_variables() -> Vec<(String, CelType)> {
    vec![
        ("object".into(), CelType::Dyn),
        ("oldObject".into(), CelType::Dyn),
        ("namespaceObject".into(), CelType::Dyn),
        ("request".into(), admission_request_type()),
        ("authorizer".into(), CelType::Opaque("kubernetes.authorization.Authorizer")),
        ("authorizer.requestResource".into(), CelType::Opaque("kubernetes.authorization.ResourceCheck")),
    ]
}

/// Why kube's `CompileCELExpression` refuses a webhook's match condition `source` (already
/// trimmed), as the detail of its `Invalid` error; `None` when it compiles to a bool.
pub fn match_condition_error(source: &str) -> Option<String> {
    on_cel_stack(|| match check_source_with(source, check::Checker::new(admission_variables()).with_strict_names()) {
        Err(issues) => Some(format!("compilation failed: {issues}")),
        Ok(Checked::Unchecked { .. }) => None,
        // cel-go's exact type test: an open `dyn` result is no bool either.
        Ok(Checked::Typed { result, .. }) if result != CelType::Bool => {
            Some(format!("must evaluate to bool but got {result}"))
        }
        Ok(Checked::Typed { .. }) => None,
    })
}

/// The estimated maximum cost of a type-checked expression.
fn estimate(
    expr: &parse::Expr,
    types: &std::collections::HashMap<usize, CelType>,
    node: &JSONSchemaProps,
    root: bool,
) -> u64 {
    let sizes = size::Sizes { node, resource: root || node.x_kubernetes_embedded_resource == Some(true) };
    cost::Estimator::new(types, sizes, &["self", OLD_SELF]).cost(expr).max
}

/// The estimated cost of the rule's `messageExpression` (0 when there is none, or it is
/// syntax not checked here), or kube's refusal of it.
fn compile_message(
    rule: &ValidationRule,
    node: &JSONSchemaProps,
    root: bool,
    variables: Vec<(String, CelType)>,
) -> Result<u64, String> {
    let Some(source) = rule.message_expression.as_deref().filter(|m| !m.is_empty()) else { return Ok(0) };
    match check_source(source, variables) {
        Err(issues) => Err(format!("messageExpression compilation failed: {issues}")),
        Ok(Checked::Unchecked { .. }) => Ok(0),
        Ok(Checked::Typed { result, .. }) if !result.is_open() && result != CelType::String => Err(NOT_STRING.into()),
        Ok(Checked::Typed { expr, .. })
            if let Some(error) = literals::program_error(&expr).or_else(|| constant_error(source)) =>
        {
            Err(format!("messageExpression instantiation failed: {error}"))
        }
        Ok(Checked::Typed { expr, types, .. }) => Ok(estimate(&expr, &types, node, root)),
    }
}

/// cel-go's error text: `ERROR: <input>:L:C: msg` and the line with a caret under C.
fn located(source: &str, line: isize, col: isize, msg: &str) -> String {
    let mut out = format!("ERROR: <input>:{line}:{col}: {msg}");
    let index = usize::try_from(line - 1).unwrap_or(0);
    if let Some(text) = source.split('\n').nth(index) {
        // cel-go marks a character of more than one byte with a full-width dot (and caret).
        let wide = |c: char, narrow: char, full: char| if c.len_utf8() > 1 { full } else { narrow };
        let before = usize::try_from(col - 1).unwrap_or(0);
        let dots: String = text.chars().take(before).map(|c| wide(c, '.', '\u{ff0e}')).collect();
        let caret = text.chars().nth(before).map_or('^', |c| wide(c, '^', '\u{ff3e}'));
        out.push_str(&format!("\n | {}\n | {dots}{caret}", text.replace('\t', " ")));
    }
    out
}

/// kube names the type of `self` `selfType<N>` with an arbitrary number; here it is
/// derived from the rule so that the same rule always gets the same name.
fn self_type_name(rule: &str) -> String {
    let hash = rule.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    format!("selfType{}", hash % 1_000_000_000)
}

/// The rule as Go's `%#v` prints an `apiextensions.ValidationRule`: the bad value of the
/// `Invalid` error. Set pointers print as addresses in Go; a fixed one stands in for them.
pub fn go_rule_value(rule: &ValidationRule) -> String {
    let q = |s: &Option<String>| crate::field::go_quote(s.as_deref().unwrap_or_default());
    let pointer = |set: bool, ty: &str| format!("({ty})({})", if set { "0xc000000000" } else { "nil" });
    format!(
        "apiextensions.ValidationRule{{Rule:{}, Message:{}, MessageExpression:{}, Reason:{}, FieldPath:{}, OptionalOldSelf:{}}}",
        crate::field::go_quote(&rule.rule),
        q(&rule.message),
        q(&rule.message_expression),
        pointer(rule.reason.is_some(), "*apiextensions.FieldValueErrorReason"),
        q(&rule.field_path),
        pointer(rule.optional_old_self.is_some(), "*bool"),
    )
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod library_tests;
