//! Compiling `x-kubernetes-validations` rules at CRD registration, as apiextensions'
//! `cel.Compile` does: parse, then type-check against the types the schema gives `self`
//! and `oldSelf`, and refuse the rule with cel-go's messages.
//!
//! The `cel` crate parses but has no type checker, so [`parse`] and [`check`] cover the
//! cases kube refuses most: functions and operators applied to types without an overload
//! (`size(self)` on an object, `self.name == 1`), fields an object does not declare
//! (`self.nope`), non-bool logical operands and mixed list literals, and rules that do not
//! evaluate to a bool. Functions outside the standard set are not checked.

mod check;
mod parse;
mod types;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{JSONSchemaProps, ValidationRule};
use types::CelType;

/// kube's refusal when a rule's type is not bool.
const NOT_BOOL: &str = "cel expression must evaluate to a bool";

/// Why kube refuses `rule` on the schema node `node` (the resource root when `root`):
/// the detail of its `Invalid` error, or `None` when the rule compiles.
pub fn compile_error(rule: &ValidationRule, node: &JSONSchemaProps, root: bool) -> Option<String> {
    let source = rule.rule.as_str();
    if let Err(errors) = kube_cel::cel::Program::compile(source) {
        // The optional syntax (`self.?x`, `m[?k]`) kube accepts; the `cel` crate does not parse it.
        if errors.errors.iter().any(|e| e.msg.starts_with("unsupported syntax")) {
            return None;
        }
        let found = errors.errors.iter().map(|e| (e.pos, e.msg.clone()));
        let shown: Vec<String> = found.map(|((line, col), msg)| located(source, line, col, &msg)).collect();
        return Some(format!("compilation failed: {}", shown.join("\n")));
    }
    let expr = parse::parse(source)?;
    let self_type = CelType::of_schema(node, &self_type_name(source), root);
    let old_self = if rule.optional_old_self == Some(true) { CelType::Dyn } else { self_type.clone() };
    let mut checker = check::Checker::new(vec![("self".into(), self_type), ("oldSelf".into(), old_self)]);
    let result = checker.check(&expr);
    let mut errors = checker.errors;
    if errors.is_empty() {
        return (!result.is_open() && result != CelType::Bool).then(|| NOT_BOOL.to_string());
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
    Some(format!("compilation failed: {}", shown.join("\n")))
}

/// cel-go's error text: `ERROR: <input>:L:C: msg` and the line with a caret under C.
fn located(source: &str, line: isize, col: isize, msg: &str) -> String {
    let mut out = format!("ERROR: <input>:{line}:{col}: {msg}");
    let index = usize::try_from(line - 1).unwrap_or(0);
    if let Some(text) = source.split('\n').nth(index) {
        let dots = ".".repeat(usize::try_from(col - 1).unwrap_or(0).min(text.chars().count()));
        out.push_str(&format!("\n | {}\n | {dots}^", text.replace('\t', " ")));
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
    let q = |s: &Option<String>| crate::engine::field::go_quote(s.as_deref().unwrap_or_default());
    let pointer = |set: bool, ty: &str| format!("({ty})({})", if set { "0xc000000000" } else { "nil" });
    format!(
        "apiextensions.ValidationRule{{Rule:{}, Message:{}, MessageExpression:{}, Reason:{}, FieldPath:{}, OptionalOldSelf:{}}}",
        crate::engine::field::go_quote(&rule.rule),
        q(&rule.message),
        q(&rule.message_expression),
        pointer(rule.reason.is_some(), "*apiextensions.FieldValueErrorReason"),
        q(&rule.field_path),
        pointer(rule.optional_old_self.is_some(), "*bool"),
    )
}

#[cfg(test)]
mod tests;
