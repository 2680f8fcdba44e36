//! Values kube's CEL conversion cannot type by their schema. kube's decoders keep `1.0` a
//! float64, which passes an integer's type check; its lazy conversion (`UnstructuredToVal`)
//! then fails on that value when a rule reaches it — reads it, or tests it with `has()` —
//! and the rule fails with "invalid data, …" (a rule that never reaches it passes). Here the
//! value is an [`InvalidData`] marker: a rule on the value itself, an operation a rule
//! applies to one, and a `has()` test of one report kube's words.

use super::node::Node;
use kube_cel::cel::common::ast::{CallExpr, EntryExpr, Expr, IdedExpr, LiteralValue};
use kube_cel::cel::objects::Key;
use kube_cel::cel::{Context, ExecutionError, FunctionContext, ResolveResult, Value as CelValue};
use std::cell::Cell;
use std::sync::Arc;

/// The function a `has()` test of a marker becomes: it fails with its argument's words.
const FAIL_WITH: &str = "@invalid_data";

#[derive(Debug, PartialEq, Eq)]
struct InvalidData(Arc<str>);

impl kube_cel::cel::objects::Opaque for InvalidData {
    fn runtime_type_name(&self) -> &str {
        "invalid data"
    }
}

pub(super) fn register(ctx: &mut Context) {
    ctx.add_function(FAIL_WITH, fail_with);
}

fn fail_with(ftx: &FunctionContext, words: Arc<String>) -> ResolveResult {
    Err(ftx.error(words.as_str()))
}

thread_local! {
    /// How many markers this thread has made ([`tracking`]).
    static MADE: Cell<u64> = const { Cell::new(0) };
}

/// `convert`'s value, and whether it holds a marker (so a value without one is not
/// searched for them).
pub(super) fn tracking<T>(convert: impl FnOnce() -> T) -> (T, bool) {
    let before = MADE.with(Cell::get);
    let value = convert();
    (value, MADE.with(Cell::get) != before)
}

/// The marker for a number `node` types as kube cannot: a float under an integer or an
/// int-or-string schema.
pub(super) fn marker(n: &serde_json::Number, node: Option<&Node>) -> Option<CelValue> {
    let node = node?;
    if n.as_i64().is_some() {
        return None;
    }
    let words = if node.int_or_string {
        "invalid data, expected XIntOrString value to be either a string or integer"
    } else if node.type_ == "integer" {
        "invalid data, expected int, got float64"
    } else {
        return None;
    };
    Some(invalid(words.into()))
}

fn invalid(words: Arc<str>) -> CelValue {
    MADE.with(|made| made.set(made.get().wrapping_add(1)));
    CelValue::Opaque(Arc::new(InvalidData(words)))
}

/// The marker for a `null` where the schema is not nullable (a value kept by ratcheting,
/// or a list item or map value kube's pruning leaves).
pub(super) fn null_marker() -> CelValue {
    invalid("invalid data, got null for schema with nullable=false".into())
}

/// The marker for a string of a `format` kube's CEL conversion cannot read (a value kept
/// by ratcheting from before the format applied): `Invalid {what} {s}: {why}`, `what`
/// naming the format as kube's conversion does (`duration`, `byte formatted string`).
pub(super) fn unreadable(what: &str, s: &str, why: &str) -> CelValue {
    invalid(format!("Invalid {what} {s}: {why}").into())
}

/// The marker for a `date-time` string that kube's format check takes but its CEL
/// conversion does not (Go's `time.Parse` wants an upper-case `T` and `Z`): the words of
/// the last layout it tries, `2006-01-02T15:04:05`.
pub(super) fn date_time_marker(s: &str) -> Option<CelValue> {
    let lower_case = s.as_bytes().get(10) == Some(&b't') || s.ends_with('z');
    let why = lower_case.then(|| super::go_time::parse_error(s, super::go_time::DATE_TIME)).flatten()?;
    Some(unreadable("date-time formatted string", s, &why))
}

/// The words of a marker, if `v` is one.
pub(super) fn words(v: &CelValue) -> Option<&str> {
    match v {
        CelValue::Opaque(o) => o.downcast_ref::<InvalidData>().map(|d| &*d.0),
        _ => None,
    }
}

/// The error of a marker's words, as a failing read raises it.
pub(super) fn failure(words: &str) -> ExecutionError {
    ExecutionError::function_error(FAIL_WITH, words)
}

/// The first marker in a value, depth first.
pub(super) fn first(v: &CelValue) -> Option<&str> {
    match v {
        CelValue::List(items) => items.iter().find_map(first),
        CelValue::Map(map) => map.map.values().find_map(first),
        other => words(other),
    }
}

/// kube's words for an evaluation error a marker caused: the failing `has()` test's, or a
/// type error's about a marker (the one it names, else the first `reachable` holds: an
/// operator's error does not always name its operands).
pub(super) fn words_of_error(e: &ExecutionError, reachable: &CelValue, rewritten: Option<&IdedExpr>) -> Option<String> {
    match e {
        ExecutionError::FunctionError { function, message } if function == FAIL_WITH => Some(message.clone()),
        // A function taking its receiver as an argument (`size(x)`) hides that argument's
        // error behind this one: it was a failing read's.
        ExecutionError::MissingArgumentOrTarget => {
            rewritten.and_then(first_failing_read).or_else(|| first(reachable).map(String::from))
        }
        ExecutionError::UnsupportedBinaryOperator(_, a, b) | ExecutionError::ValuesNotComparable(a, b) => {
            words(a).or_else(|| words(b)).or_else(|| first(reachable)).map(String::from)
        }
        ExecutionError::UnsupportedUnaryOperator(..)
        | ExecutionError::NoSuchOverload
        | ExecutionError::UnexpectedType { .. } => first(reachable).map(String::from),
        _ => None,
    }
}

/// `program` with each `has()` test and each read of a marker reached from `self` (through
/// fields) made a call failing with its words: testing a key never looks at its value here,
/// where kube converts it, and the error of a read is the marker's own, whichever other
/// markers the value holds. `None` when there is no such test or read.
/// The words of the first failing read [`with_failing_reads`] put in `e`.
fn first_failing_read(e: &IdedExpr) -> Option<String> {
    match &e.expr {
        Expr::Call(c) if c.func_name == FAIL_WITH => match c.args.first().map(|a| &a.expr) {
            Some(Expr::Literal(LiteralValue::String(words))) => Some(words.to_string()),
            _ => None,
        },
        Expr::Call(c) => c.target.as_deref().into_iter().chain(&c.args).find_map(first_failing_read),
        Expr::Comprehension(c) => [&c.iter_range, &c.accu_init, &c.loop_cond, &c.loop_step, &c.result]
            .into_iter()
            .find_map(first_failing_read),
        Expr::List(l) => l.elements.iter().find_map(first_failing_read),
        Expr::Select(select) => first_failing_read(&select.operand),
        _ => None,
    }
}

pub(super) fn with_failing_reads(program: &IdedExpr, self_value: &CelValue) -> Option<IdedExpr> {
    let mut rewritten = program.clone();
    fail_tests(&mut rewritten, self_value).then_some(rewritten)
}

fn fail_tests(e: &mut IdedExpr, self_value: &CelValue) -> bool {
    if let Expr::Select(select) = &e.expr
        && let Some(words) = reached(&select.operand, self_value).and_then(|v| field(v, &select.field)).and_then(words)
    {
        let words = IdedExpr { id: e.id, expr: Expr::Literal(LiteralValue::String(words.to_string().into())) };
        e.expr = Expr::Call(CallExpr { func_name: FAIL_WITH.into(), target: None, args: vec![words] });
        return true;
    }
    let mut any = false;
    let mut visit = |child: &mut IdedExpr| any |= fail_tests(child, self_value);
    match &mut e.expr {
        Expr::Call(c) => c.target.as_deref_mut().into_iter().chain(&mut c.args).for_each(&mut visit),
        Expr::Comprehension(c) => {
            [&mut c.iter_range, &mut c.accu_init, &mut c.loop_cond, &mut c.loop_step, &mut c.result]
                .into_iter()
                .for_each(&mut visit);
        }
        Expr::List(l) => l.elements.iter_mut().for_each(&mut visit),
        Expr::Map(m) => m.entries.iter_mut().for_each(|entry| entry_children(&mut entry.expr, &mut visit)),
        Expr::Struct(s) => s.entries.iter_mut().for_each(|entry| entry_children(&mut entry.expr, &mut visit)),
        Expr::Select(s) => visit(&mut s.operand),
        Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => {}
    }
    any
}

fn entry_children(entry: &mut EntryExpr, visit: &mut impl FnMut(&mut IdedExpr)) {
    match entry {
        EntryExpr::MapEntry(m) => {
            visit(&mut m.key);
            visit(&mut m.value);
        }
        EntryExpr::StructField(f) => visit(&mut f.value),
    }
}

/// The value an expression of `self` and field selections reaches (through the meter's
/// wrappers), if it is one.
fn reached<'v>(e: &IdedExpr, self_value: &'v CelValue) -> Option<&'v CelValue> {
    match &e.expr {
        Expr::Ident(name) if name == "self" => Some(self_value),
        Expr::Select(s) if !s.test => field(reached(&s.operand, self_value)?, &s.field),
        Expr::Call(c) if c.func_name == super::celmeter::METERED && c.args.len() == 2 => {
            reached(&c.args[1], self_value)
        }
        _ => None,
    }
}

fn field<'v>(v: &'v CelValue, name: &str) -> Option<&'v CelValue> {
    match v {
        CelValue::Map(map) => map.map.get(&Key::from(name)),
        _ => None,
    }
}
