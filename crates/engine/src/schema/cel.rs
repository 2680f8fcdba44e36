//! `x-kubernetes-validations`: CEL rules evaluated on each schema node, as
//! apiextensions-apiserver's `schema/cel` validator runs them (through the `kube-cel`
//! crate's Kubernetes function library).
//!
//! A node's rules see its value as `self` (and, on update, its correlated old value as
//! `oldSelf`; transition rules are skipped when there is none, unless `optionalOldSelf`).
//! Values are exposed as kube types them: only declared fields (with kube's identifier
//! escaping: `__dash__`, `__dot__`, `__slash__`, `__underscores__`, `__{keyword}__`),
//! map keys verbatim, `date`/`date-time` strings as timestamps, `duration` as durations,
//! `byte` as bytes, and at a resource root only `apiVersion`, `kind`, `metadata.name` and
//! `metadata.generateName` of the object metadata. A whole float (`1.0`) under an integer
//! or int-or-string schema is a value kube cannot convert: a rule that reaches it fails
//! with kube's "invalid data" ([`cel_invalid`]).
//!
//! A failed rule is reported on the node's path (plus its `fieldPath`) with the schema type
//! as the value: `spec: Invalid value: "object": <message>`, the message being the
//! evaluated `messageExpression`, else `message`, else `failed rule: <rule>`; `reason`
//! picks the error type. Unchanged correlated values ratchet for rules that do not use
//! `oldSelf`: their failures become warnings ([`warnings`]), as kube's do.
//!
//! Rules are parsed only within cel-go's limits and evaluated on a stack of their own
//! ([`celcost::on_cel_stack`]); each evaluation is metered ([`celmeter`]) and cancelled past
//! kube's per-call limit, and the rules of one request share kube's runtime budget.

use super::cel_invalid;
use super::cel_rule::CompiledRule;
use super::celcheck::{escape, keyword_field};
use super::celcost::{self, CANCELLED, OUT_OF_BUDGET, RUNTIME_COST_BUDGET};
use super::celmeter;
use super::correlate;
use super::formats;
use super::go_base64;
use super::go_time;
use super::gofmt::with_value;
use super::node::Node;
use super::warnings;
use crate::field::{ErrorType, FieldError, Path};
use kube_cel::KubeCelExt;
use kube_cel::cel::objects::{Key, Map as CelMap, OptionalValue};
use kube_cel::cel::parser::Expression;
use kube_cel::cel::{Context, ExecutionError, Value as CelValue};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// `MaxEvaluatedMessageExpressionSizeBytes`.
const MAX_MESSAGE_EXPRESSION_BYTES: usize = 5 * 1024;

fn cel_map(entries: HashMap<Key, CelValue>) -> CelValue {
    CelValue::Map(CelMap { map: Arc::new(entries) })
}

fn cel_string(s: &str) -> CelValue {
    CelValue::String(Arc::new(s.to_string()))
}

/// A string as kube types it for CEL, by the schema's `format`. A string the format's
/// parser refuses (kept by ratcheting) is a value kube cannot convert: a marker with the
/// parser's words.
fn string_value(s: &str, node: Option<&Node>) -> CelValue {
    use kube_cel::cel::functions::time::{duration, timestamp};
    let unreadable = |what: &str, why: Option<String>| why.map(|why| cel_invalid::unreadable(what, s, &why));
    let converted = match node.map(|n| n.raw_format.as_str()) {
        Some("byte") => Some(match go_base64::decode(s) {
            Ok(bytes) => CelValue::Bytes(Arc::new(bytes)),
            Err(at) => {
                cel_invalid::unreadable("byte formatted string", s, &format!("illegal base64 data at input byte {at}"))
            }
        }),
        Some("duration") => match formats::parse_duration(s) {
            Some(ns) => duration(Arc::new(format!("{ns}ns"))).ok(),
            None => unreadable("duration", Some(format!("unable to parse {s} as duration"))),
        },
        Some("date") => match formats::parse_date(s) {
            Some(_) => timestamp(Arc::new(format!("{s}T00:00:00Z"))).ok(),
            None => unreadable("date formatted string", go_time::parse_error(s, go_time::DATE)),
        },
        Some("date-time") => cel_invalid::date_time_marker(s).or_else(|| match formats::parse_date_time(s) {
            Some(t) => timestamp(Arc::new(t)).ok(),
            None => unreadable("date-time formatted string", go_time::parse_error(s, go_time::DATE_TIME)),
        }),
        _ => None,
    };
    converted.unwrap_or_else(|| cel_string(s))
}

/// The CEL value of `v` typed by `node` (`resource_root`: the root of a resource or an
/// embedded resource, whose object metadata is limited to name and generateName).
pub fn to_cel(v: &Value, node: Option<&Node>, resource_root: bool) -> CelValue {
    match v {
        Value::Null => match node {
            Some(n) if !n.nullable => cel_invalid::null_marker(),
            _ => CelValue::Null,
        },
        Value::Bool(b) => CelValue::Bool(*b),
        Value::Number(n) => {
            if let Some(marker) = cel_invalid::marker(n, node) {
                return marker;
            }
            let is_number_type = node.is_some_and(|s| s.type_ == "number");
            match n.as_i64() {
                Some(i) if !is_number_type => CelValue::Int(i),
                _ => CelValue::Float(n.as_f64().unwrap_or(f64::NAN)),
            }
        }
        Value::String(s) => string_value(s, node),
        Value::Array(items) => {
            let item_schema = node.and_then(|s| s.items.as_deref());
            let embedded = item_schema.is_some_and(|s| s.embedded_resource);
            CelValue::List(Arc::new(items.iter().map(|i| to_cel(i, item_schema, embedded)).collect()))
        }
        Value::Object(map) => {
            let mut entries = HashMap::new();
            match node {
                Some(s) if !s.properties.is_empty() || resource_root => {
                    // kube treats a null field of an object with properties as absent.
                    for (k, v) in map.iter().filter(|(_, v)| !v.is_null()) {
                        if let (Some(prop), Some(key)) = (s.properties.get(k), escape(k)) {
                            let value = to_cel(v, Some(prop), prop.embedded_resource);
                            // A reserved word is reachable as itself too (`self.namespace`).
                            if keyword_field(k).is_some() {
                                entries.insert(Key::from(k.as_str()), value.clone());
                            }
                            entries.insert(Key::from(key), value);
                        }
                    }
                    if resource_root {
                        for k in ["apiVersion", "kind"] {
                            if let Some(Value::String(s)) = map.get(k) {
                                entries.insert(Key::from(k), cel_string(s));
                            }
                        }
                        if let Some(meta) = map.get("metadata").and_then(Value::as_object) {
                            let visible = ["name", "generateName"]
                                .into_iter()
                                .filter_map(|k| Some((Key::from(k), cel_string(meta.get(k)?.as_str()?))))
                                .collect();
                            entries.insert(Key::from("metadata"), cel_map(visible));
                        }
                    }
                }
                _ => {
                    let child = node.and_then(Node::additional_schema);
                    let embedded = child.is_some_and(|s| s.embedded_resource);
                    for (k, v) in map {
                        entries.insert(Key::from(k.as_str()), to_cel(v, child, embedded));
                    }
                }
            }
            cel_map(entries)
        }
    }
}

thread_local! {
    /// The CEL environment: the standard library plus kube's (building it is not cheap),
    /// the meter's functions, and cel-go's answers where the `cel` crate's differ.
    static BASE: Context<'static> = {
        let mut ctx = Context::default().with_all();
        celmeter::register(&mut ctx);
        cel_invalid::register(&mut ctx);
        super::celtypes::register(&mut ctx);
        super::celstd::register(&mut ctx);
        super::celtime::register(&mut ctx);
        super::celconv::register(&mut ctx);
        super::celstrings::register(&mut ctx);
        super::celnet::register(&mut ctx);
        super::celurl::register(&mut ctx);
        super::celquantity::register(&mut ctx);
        super::celoptional::register(&mut ctx);
        super::cellogic::register(&mut ctx);
        super::celkept::register(&mut ctx);
        ctx
    };
}

/// An admission webhook's match condition: `expression` evaluated with `variables` bound
/// to untyped JSON (kube's dynamic objects, `null` for none): its boolean, or why it has
/// none in cel-go's words.
pub fn evaluate_condition(expression: &str, variables: &[(&str, &Value)]) -> Result<bool, String> {
    celcost::on_cel_stack(|| {
        let program = super::cel_rule::parse(expression).map(|p| celmeter::instrument(&p))?;
        BASE.with(|base| {
            let mut ctx = base.new_inner_scope();
            for (name, value) in variables {
                ctx.add_variable_from_value(*name, to_cel(value, None, false));
            }
            match celmeter::evaluate(&program, &ctx).result {
                Ok(CelValue::Bool(b)) => Ok(b),
                Ok(_) => Err("no such overload".into()),
                Err(e) => Err(error_text(&e)),
            }
        })
    })
}

/// The value of a constant expression (no variables), or its error in cel-go's words.
pub(super) fn evaluate_constant(e: &Expression) -> Result<CelValue, String> {
    BASE.with(|base| CelValue::resolve(e, base)).map_err(|e| error_text(&e))
}

/// cel-go's wording of an evaluation error, which kube quotes in its messages.
fn error_text(e: &ExecutionError) -> String {
    match e {
        ExecutionError::NoSuchKey(k) => format!("no such key: {k}"),
        // cel-go's errors are their text alone; the functions replaced here say cel-go's.
        ExecutionError::FunctionError { message, .. } => message.clone(),
        ExecutionError::DivisionByZero(_) => "division by zero".into(),
        ExecutionError::RemainderByZero(_) => "modulus by zero".into(),
        ExecutionError::Overflow(_, CelValue::UInt(_), _) => "unsigned integer overflow".into(),
        ExecutionError::Overflow(_, CelValue::Timestamp(_), _) => "timestamp overflow".into(),
        ExecutionError::Overflow(..) => "integer overflow".into(),
        ExecutionError::IndexOutOfBounds(i) => format!("index out of bounds: {}", cel_text(i)),
        ExecutionError::NoSuchOverload
        | ExecutionError::UnsupportedBinaryOperator(..)
        | ExecutionError::UnsupportedUnaryOperator(..)
        | ExecutionError::ValuesNotComparable(..)
        | ExecutionError::UnexpectedType { .. } => "no such overload".into(),
        other => other.to_string(),
    }
}

fn cel_text(v: &CelValue) -> String {
    match v {
        CelValue::Int(i) => i.to_string(),
        CelValue::UInt(u) => u.to_string(),
        CelValue::String(s) => s.to_string(),
        other => format!("{other:?}"),
    }
}

/// kube's field path of a node: the root (a nil path in Go) prints as `<nil>`.
fn error_field(path: &Path) -> Path {
    if path.as_str().is_empty() { Path::root("<nil>") } else { path.clone() }
}

/// Whether a node's rule failures ratchet into warnings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ratchet {
    /// The write does not ratchet at all: kube 1.32's status strategy passes no
    /// correlation to its CEL validator, so every failure of a `/status` write is an error.
    Off,
    /// The node (or its nearest correlated ancestor) is unchanged: failures of rules
    /// without `oldSelf` become warnings.
    Unchanged,
    /// The node changed, or is new.
    Changed,
}

/// What the rules of one node need besides the node.
pub struct Site<'a> {
    pub path: &'a Path,
    pub value: &'a Value,
    pub old: Option<&'a Value>,
    pub resource_root: bool,
    pub ratchet: Ratchet,
}

/// What is left of the request's runtime budget; negative once spent, when no further
/// rule runs.
type Budget = i64;

/// Evaluates one node's rules.
fn evaluate(node: &Node, rules: &[CompiledRule], site: &Site, budget: &mut Budget) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if site.value.is_null() || rules.is_empty() {
        return errs;
    }
    let type_ = Value::from(node.type_.as_str());
    if *budget <= 0 {
        *budget = -1;
        return vec![with_value(ErrorType::Invalid, error_field(site.path), &type_, OUT_OF_BUDGET.into())];
    }
    BASE.with(|base| {
        let (self_value, any_invalid) = cel_invalid::tracking(|| to_cel(site.value, Some(node), site.resource_root));
        let self_invalid = cel_invalid::words(&self_value).map(str::to_string);
        // kube binds oldSelf only at a node one of whose rules uses it
        // (`validationActivationWithOldSelf`): a messageExpression reading it elsewhere
        // fails, and its rule's message stands.
        let binds_old = rules.iter().any(|r| r.uses_old_self);
        let (old_value, old_invalid) = cel_invalid::tracking(|| {
            site.old.filter(|_| binds_old).map(|o| to_cel(o, Some(node), site.resource_root))
        });
        // Searched for the markers an error was about, only when there are some.
        let reachable = (any_invalid || old_invalid).then(|| self_value.clone());
        let mut ctx = base.new_inner_scope();
        ctx.add_variable_from_value("self", self_value.clone());
        if let Some(old) = &old_value {
            ctx.add_variable_from_value("oldSelf", old.clone());
        }
        let mut optional_ctx = base.new_inner_scope();
        optional_ctx.add_variable_from_value("self", self_value);
        // kube 1.32 hands an `optionalOldSelf` rule the old value untyped, as decoded: no
        // formats (a duration is a string), no escaped names, no markers.
        let optional = match site.old.filter(|_| binds_old) {
            Some(old) => OptionalValue::of(to_cel(old, None, false)),
            None => OptionalValue::none(),
        };
        if binds_old {
            optional_ctx.add_variable_from_value("oldSelf", CelValue::Opaque(Arc::new(optional)));
        }
        for rule in rules {
            // kube compiles an empty rule to no program and no error, and skips it.
            if rule.rule.trim().is_empty() {
                continue;
            }
            let program = match &rule.program {
                Ok(p) => p,
                Err(e) => {
                    let detail = format!("rule compile error: {e}");
                    errs.push(with_value(ErrorType::Invalid, error_field(site.path), &type_, detail));
                    continue;
                }
            };
            if rule.uses_old_self && site.old.is_none() && !rule.optional_old_self {
                continue;
            }
            let invalid = |detail: String| with_value(ErrorType::Invalid, error_field(site.path), &type_, detail);
            if let Some(words) = &self_invalid {
                errs.push(invalid(format!("{words} evaluating rule: {}", rule.error_string())));
                continue;
            }
            let activation = if rule.optional_old_self { &optional_ctx } else { &ctx };
            let failing = reachable.as_ref().and_then(|r| cel_invalid::with_failing_reads(program, r));
            let run = celmeter::evaluate(failing.as_ref().unwrap_or(program), activation);
            if spend(budget, run.cost) {
                errs.push(invalid(OUT_OF_BUDGET.into()));
                return;
            }
            if run.cancelled {
                let detail = format!(
                    "'{CANCELLED}': no further validation rules will be run due to call cost exceeds limit for rule: {}",
                    rule.error_string()
                );
                errs.push(invalid(detail));
                *budget = -1;
                return;
            }
            match run.result {
                Ok(CelValue::Bool(true)) => continue,
                Ok(_) => {}
                Err(e) => {
                    let text = error_text(&e);
                    let invalid_data = reachable.as_ref().and_then(|r| cel_invalid::words_of_error(&e, r, failing.as_ref()));
                    let detail = if let Some(words) = invalid_data {
                        format!("{words} evaluating rule: {}", rule.error_string())
                    } else if text.starts_with("no such overload") {
                        format!(
                            "'{text}': call arguments did not match a supported operator, function or macro signature for rule: {}",
                            rule.error_string()
                        )
                    } else {
                        format!("{text} evaluating rule: {}", rule.error_string())
                    };
                    errs.push(invalid(detail));
                    continue;
                }
            }
            let ratcheted = !rule.uses_old_self && site.ratchet == Ratchet::Unchanged;
            let path = if rule.field_path.is_empty() {
                error_field(site.path)
            } else {
                Path::root(site.path.as_str()).child(&rule.field_path)
            };
            let detail = match &rule.message_program {
                Some(Ok(p)) => match message(p, &rule.message_expression, &ctx, budget) {
                    Ok(message) => message.unwrap_or_else(|| rule.message_or_default()),
                    Err(stop) => {
                        let error = with_value(ErrorType::Invalid, path, &type_, stop);
                        if ratcheted {
                            warnings::warn(error.to_string());
                        } else {
                            errs.push(error);
                        }
                        *budget = -1;
                        return;
                    }
                },
                _ => rule.message_or_default(),
            };
            let error = match rule.reason.as_deref() {
                Some("FieldValueForbidden") => FieldError::forbidden(path, detail),
                Some("FieldValueRequired") => FieldError::required(path, detail),
                Some("FieldValueDuplicate") => with_value(ErrorType::Duplicate, path, &type_, String::new()),
                _ => with_value(ErrorType::Invalid, path, &type_, detail),
            };
            // kube lets the write through and says why it would have been refused.
            if ratcheted {
                warnings::warn(error.to_string());
            } else {
                errs.push(error);
            }
        }
    });
    errs
}

/// A node's own rules alone (not its children's), with what they cost at runtime: `None`
/// when a limit stopped them (the per-call limit, or the request's budget).
pub(super) fn evaluate_alone(node: &Node, site: &Site) -> (Vec<FieldError>, Option<u64>) {
    let mut budget = RUNTIME_COST_BUDGET;
    let errs = celcost::on_stack_for(shallow(node, site), || evaluate(node, &node.rules, site, &mut budget));
    let spent = u64::try_from(RUNTIME_COST_BUDGET - budget).ok().filter(|_| budget >= 0);
    (errs, spent)
}

/// Takes `cost` from the budget; `true` (and the budget spent) when it does not fit.
fn spend(budget: &mut Budget, cost: u64) -> bool {
    match i64::try_from(cost) {
        Ok(cost) if cost <= *budget => {
            *budget -= cost;
            false
        }
        _ => {
            *budget = -1;
            true
        }
    }
}

/// A failed rule's evaluated `messageExpression` (`None` when kube falls back to the
/// message), or kube's error when it stops validation: over the budget or the call limit.
fn message(program: &Expression, source: &str, ctx: &Context, budget: &mut Budget) -> Result<Option<String>, String> {
    let run = celmeter::evaluate(program, ctx);
    if spend(budget, run.cost) {
        return Err(
            "messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run"
                .into(),
        );
    }
    if run.cancelled {
        return Err(format!(
            "no further validation rules will be run due to call cost exceeds limit for messageExpression: {}",
            crate::field::go_quote(source)
        ));
    }
    Ok(run.result.ok().and_then(message_from))
}

/// A `messageExpression` result kube accepts: a non-empty single-line string (trimmed)
/// of bounded size.
fn message_from(v: CelValue) -> Option<String> {
    let CelValue::String(s) = v else { return None };
    let trimmed = s.trim();
    (!trimmed.is_empty() && trimmed.len() <= MAX_MESSAGE_EXPRESSION_BYTES && !trimmed.contains('\n'))
        .then(|| trimmed.to_string())
}

/// The rule failures under one child value, its ratchet state following from its own
/// correlation, else from its parent's.
fn visit(
    schema: &Node,
    path: &Path,
    value: &Value,
    old: Option<&Value>,
    parent_ratchet: Ratchet,
    budget: &mut Budget,
) -> Vec<FieldError> {
    let ratchet = match (parent_ratchet, old) {
        (Ratchet::Off, _) => Ratchet::Off,
        (_, Some(o)) if correlate::equal(Some(schema), value, o) => Ratchet::Unchanged,
        (_, Some(_)) => Ratchet::Changed,
        (parent, None) => parent,
    };
    walk(schema, &Site { path, value, old, resource_root: schema.embedded_resource, ratchet }, budget)
}

/// Every rule failure at and under `site` (kube's `Validator.Validate`), within kube's
/// runtime budget for one request.
pub fn validate(node: &Node, site: &Site) -> Vec<FieldError> {
    let mut budget = RUNTIME_COST_BUDGET;
    celcost::on_stack_for(shallow(node, site), || walk(node, site, &mut budget))
}

/// Whether the rules under `node` and the values they see nest at most
/// [`celcost::SHALLOW_DEPTH`] deep.
fn shallow(node: &Node, site: &Site) -> bool {
    let limit = celcost::SHALLOW_DEPTH;
    node.cel_depth <= limit && nests_within(site.value, limit) && site.old.is_none_or(|o| nests_within(o, limit))
}

/// Whether `v` nests at most `levels` deep (recursing no deeper than that).
fn nests_within(v: &Value, levels: usize) -> bool {
    match v {
        Value::Object(m) => levels > 0 && m.values().all(|c| nests_within(c, levels - 1)),
        Value::Array(a) => levels > 0 && a.iter().all(|c| nests_within(c, levels - 1)),
        _ => true,
    }
}

fn walk(node: &Node, site: &Site, budget: &mut Budget) -> Vec<FieldError> {
    if site.value.is_null() {
        return vec![];
    }
    let mut errs = evaluate(node, &node.rules, site, budget);
    // Rules inside allOf branches apply to the same value (ratcheting on the parent).
    for branch in &node.all_of {
        if *budget < 0 {
            return errs;
        }
        errs.extend(evaluate(node, &branch.rules, site, budget));
    }
    match site.value {
        Value::Array(items) => {
            if let Some(item_schema) = node.items.as_deref().filter(|s| s.has_rules()) {
                for (i, item) in items.iter().enumerate() {
                    if *budget < 0 {
                        return errs;
                    }
                    let old = correlate::item(Some(node), site.old, item);
                    errs.extend(visit(item_schema, &site.path.index(i), item, old, site.ratchet, budget));
                }
            }
        }
        Value::Object(map) => {
            let old_map = site.old.and_then(Value::as_object);
            if let Some(additional) = node.additional_schema().filter(|s| s.has_rules()) {
                for (k, v) in map {
                    if *budget < 0 {
                        return errs;
                    }
                    let old = old_map.and_then(|o| o.get(k));
                    errs.extend(visit(additional, &site.path.key(k), v, old, site.ratchet, budget));
                }
            }
            for (k, v) in map {
                let Some(prop) = node.properties.get(k).filter(|s| s.has_rules()) else { continue };
                if *budget < 0 {
                    return errs;
                }
                let (path, old) = (site.path.child(k), old_map.and_then(|o| o.get(k)));
                if site.resource_root && (k == "apiVersion" || k == "kind") {
                    // Never ratcheted: kube cannot see the type of a resource change.
                    let resource_root = prop.embedded_resource;
                    let ratchet = if site.ratchet == Ratchet::Off { Ratchet::Off } else { Ratchet::Changed };
                    let site = Site { path: &path, value: v, old, resource_root, ratchet };
                    errs.extend(walk(prop, &site, budget));
                } else {
                    errs.extend(visit(prop, &path, v, old, site.ratchet, budget));
                }
            }
        }
        _ => {}
    }
    errs
}

#[cfg(test)]
#[path = "cel_tests.rs"]
mod tests;
