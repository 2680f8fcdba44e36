//! The runtime cost of one CEL evaluation, counted as cel-go's cost tracker counts it
//! (with kube's library costs), and its cancellation past [`PER_CALL_LIMIT`].
//!
//! The `cel` crate has no hook into its interpreter, so a rule's expression is rewritten
//! once, when compiled ([`instrument`]): every node cel-go charges for is wrapped in a call
//! to a metering function of ours that charges it and then evaluates the node. Variables
//! and selections cost 1 each (a chain `self.a.b` is charged as one node, 3); a list
//! literal 10, a map literal 30 (constant ones nothing, as cel-go's planner makes them
//! constants); a function call 1, or, for the functions whose cost depends on their
//! arguments (comparing or concatenating strings, `contains`, `matches`, kube's string
//! and list functions), what cel-go's formula gives for the values, which are evaluated
//! first and then passed to the original function. `&&`, `||` and `?:` cost nothing but
//! their evaluated operands, and comprehensions their evaluated steps, as in cel-go.
//!
//! Beside kube's cost, the meter counts the values it passes on (their nodes): the `cel`
//! crate copies values where cel-go shares them, so a rule cheap in kube's units can take
//! far longer here (re-reading a long list in every iteration). Past [`WORK_LIMIT`] the
//! evaluation is cancelled as if over kube's limit.

use super::celcost::{
    CANCELLED, LIST_CREATE_BASE_COST, MAP_CREATE_BASE_COST, MAX_NAME_FORMAT_REGEX_SIZE, PER_CALL_LIMIT,
    REGEX_STRING_LENGTH_COST_FACTOR, SELECT_AND_IDENT_COST, STRING_TRAVERSAL_COST_FACTOR, by_factor,
};
use super::celkept;
use super::cellogic;
use kube_cel::cel::common::ast::{
    CallExpr, ComprehensionExpr, EntryExpr, Expr, IdedExpr, ListExpr, LiteralValue, MapEntryExpr, MapExpr, SelectExpr,
};
use kube_cel::cel::objects::Key;
use kube_cel::cel::{Context, ExecutionError, FunctionContext, ResolveResult, Value};
use std::cell::Cell;

/// `@metered(cost, expr)`: charges `cost`, then evaluates `expr`.
pub(super) const METERED: &str = "@metered";
/// `@sized("function", template, values...)`: evaluates the values, calls the template
/// (the original call with `@arg<i>` in their place) and charges by their sizes.
pub(super) const SIZED: &str = "@sized";
/// How many value nodes one evaluation may pass through the meter (see the module doc).
const WORK_LIMIT: u64 = 20_000_000;

/// The functions whose cost depends on their arguments' sizes (cel-go's and kube's).
const SIZED_FUNCTIONS: &[&str] = &[
    "_==_",
    "_!=_",
    "_<_",
    "_<=_",
    "_>_",
    "_>=_",
    "_+_",
    "@in",
    "startsWith",
    "endsWith",
    "matches",
    "contains",
    "string",
    "bytes",
    "format",
    "strings.quote",
    "isSorted",
    "sum",
    "max",
    "min",
    "indexOf",
    "lastIndexOf",
    "url",
    "lowerAscii",
    "upperAscii",
    "substring",
    "trim",
    "replace",
    "split",
    "join",
    "find",
    "findAll",
    "cidr",
    "isIP",
    "isCIDR",
    "ip",
    "ip.isCanonical",
    "containsIP",
    "containsCIDR",
    "quantity",
    "isQuantity",
    "validate",
    "sets.contains",
    "sets.intersects",
    "sets.equivalent",
];

/// Registers the metering functions in the environment rules run in.
pub fn register(ctx: &mut Context) {
    ctx.add_function(METERED, metered);
    ctx.add_function(SIZED, sized);
}

fn node(expr: Expr) -> IdedExpr {
    IdedExpr { id: 0, expr }
}

fn call(function: &str, args: Vec<IdedExpr>) -> IdedExpr {
    node(Expr::Call(CallExpr { func_name: function.to_string(), target: None, args }))
}

fn meter(cost: u64, e: IdedExpr) -> IdedExpr {
    let cost = node(Expr::Literal(LiteralValue::Int((cost as i64).into())));
    call(METERED, vec![cost, e])
}

fn placeholder(i: usize) -> String {
    format!("@arg{i}")
}

/// Rewrites a parsed rule so that evaluating it charges the meter.
pub fn instrument(e: &IdedExpr) -> IdedExpr {
    let instrumented = Instrumenter { variables: vec!["self".into(), "oldSelf".into()] }.expr(e);
    if celkept::makes_optionals(e) { celkept::keep_optionals(&instrumented) } else { instrumented }
}

struct Instrumenter {
    /// The variables in scope (comprehension variables included).
    variables: Vec<String>,
}

impl Instrumenter {
    fn is_variable(&self, e: &IdedExpr) -> bool {
        matches!(&e.expr, Expr::Ident(name) if self.variables.contains(name))
    }

    /// `v.a.b` on a variable: one meter for the whole chain.
    fn chain_cost(&self, e: &IdedExpr) -> Option<u64> {
        match &e.expr {
            Expr::Ident(_) if self.is_variable(e) => Some(SELECT_AND_IDENT_COST),
            Expr::Select(s) if !s.test => Some(self.chain_cost(&s.operand)? + SELECT_AND_IDENT_COST),
            _ => None,
        }
    }

    fn expr(&mut self, e: &IdedExpr) -> IdedExpr {
        if let Some(cost) = self.chain_cost(e) {
            return meter(cost, e.clone());
        }
        match &e.expr {
            // After an optional qualifier every qualifier is optional in cel-go
            // (`self.?o.x` is `optional.none()` when `x` is absent).
            Expr::Select(s) if !s.test && is_optional_chain(&s.operand) => {
                let field = node(Expr::Literal(LiteralValue::String(s.field.as_str().into())));
                meter(SELECT_AND_IDENT_COST, call("_[?_]", vec![self.expr(&s.operand), field]))
            }
            Expr::Call(c) if c.func_name == "_[_]" && c.args.first().is_some_and(is_optional_chain) => {
                self.call(&CallExpr { func_name: "_[?_]".into(), ..c.clone() })
            }
            Expr::Select(s) => {
                let select = Expr::Select(SelectExpr {
                    operand: Box::new(self.expr(&s.operand)),
                    field: s.field.clone(),
                    test: s.test,
                });
                // A presence test is free in kube (`PresenceTestHasCost(false)`).
                if s.test { node(select) } else { meter(SELECT_AND_IDENT_COST, node(select)) }
            }
            Expr::List(list) if !is_constant(e) => {
                let elements = list.elements.iter().map(|i| self.expr(i)).collect();
                let list = ListExpr { elements, optional_indices: list.optional_indices.clone() };
                meter(LIST_CREATE_BASE_COST, node(Expr::List(list)))
            }
            Expr::Map(map) if !is_constant(e) => {
                let entries = map
                    .entries
                    .iter()
                    .map(|entry| match &entry.expr {
                        EntryExpr::MapEntry(m) => {
                            let m = MapEntryExpr {
                                key: self.expr(&m.key),
                                value: self.expr(&m.value),
                                optional: m.optional,
                            };
                            kube_cel::cel::common::ast::IdedEntryExpr { id: entry.id, expr: EntryExpr::MapEntry(m) }
                        }
                        EntryExpr::StructField(_) => entry.clone(),
                    })
                    .collect();
                meter(MAP_CREATE_BASE_COST, node(Expr::Map(MapExpr { entries })))
            }
            Expr::Comprehension(c) => {
                let iter_range = self.expr(&c.iter_range);
                let accu_init = self.expr(&c.accu_init);
                let scoped = [Some(&c.iter_var), c.iter_var2.as_ref(), Some(&c.accu_var)];
                let before = self.variables.len();
                self.variables.extend(scoped.into_iter().flatten().cloned());
                let mut comprehension = ComprehensionExpr {
                    iter_range,
                    iter_var: c.iter_var.clone(),
                    iter_var2: c.iter_var2.clone(),
                    accu_var: c.accu_var.clone(),
                    accu_init,
                    loop_cond: self.expr(&c.loop_cond),
                    loop_step: self.expr(&c.loop_step),
                    result: self.expr(&c.result),
                };
                self.variables.truncate(before);
                absorbing_errors(c, &mut comprehension);
                node(Expr::Comprehension(Box::new(comprehension)))
            }
            Expr::Call(c) => self.call(c),
            _ => e.clone(),
        }
    }

    fn call(&mut self, c: &CallExpr) -> IdedExpr {
        let args: Vec<IdedExpr> = c.args.iter().map(|a| self.expr(a)).collect();
        let logic = match c.func_name.as_str() {
            "_||_" => Some(cellogic::OR),
            "_&&_" => Some(cellogic::AND),
            "_?_:_" => Some("_?_:_"),
            _ => None,
        };
        if let Some(function) = logic {
            return node(Expr::Call(CallExpr { func_name: function.into(), target: None, args }));
        }
        // cel-go's planner makes `x in []` the constant false: `x` is never evaluated.
        if c.func_name == "@in"
            && matches!(c.args.get(1), Some(IdedExpr { expr: Expr::List(l), .. }) if l.elements.is_empty())
        {
            return node(Expr::Literal(LiteralValue::Boolean(false.into())));
        }
        // A target that is not a value names a namespace (`sets.contains`): kept as is.
        let (name, target) = match c.target.as_deref() {
            Some(t @ IdedExpr { expr: Expr::Ident(ns), .. }) if !self.is_variable(t) => {
                (format!("{ns}.{}", c.func_name), Some((t.clone(), false)))
            }
            Some(t) => (c.func_name.clone(), Some((self.expr(t), true))),
            None => (c.func_name.clone(), None),
        };
        // A global call of the crate's (`uint(x)`, `format.named(x)`) reads its first argument as a
        // receiver and words that argument's failure `Missing argument or target`; cel-go
        // passes the failure on. Evaluated first, as the sized calls are, it is passed on.
        let strict = matches!(target, None | Some((_, false))) && name.starts_with(|c: char| c.is_ascii_alphabetic());
        if !SIZED_FUNCTIONS.contains(&name.as_str()) && !strict {
            let target = target.map(|(t, _)| Box::new(t));
            return meter(1, node(Expr::Call(CallExpr { func_name: runtime_name(&c.func_name), target, args })));
        }
        let mut values = Vec::new();
        let template_target = match target {
            Some((t, true)) => {
                values.push(t);
                Some(Box::new(node(Expr::Ident(placeholder(0)))))
            }
            Some((ns, false)) => Some(Box::new(ns)),
            None => None,
        };
        let mut template_args = Vec::new();
        for a in args {
            template_args.push(node(Expr::Ident(placeholder(values.len()))));
            values.push(a);
        }
        let template =
            node(Expr::Call(CallExpr { func_name: c.func_name.clone(), target: template_target, args: template_args }));
        let function = node(Expr::Literal(LiteralValue::String(name.as_str().into())));
        call(SIZED, [function, template].into_iter().chain(values).collect())
    }
}

/// Whether `e` is an optional selection or index (`a.?b`, `a[?i]`), or a selection or index
/// of one.
fn is_optional_chain(e: &IdedExpr) -> bool {
    match &e.expr {
        Expr::Call(c) if c.func_name == "_?._" || c.func_name == "_[?_]" => true,
        Expr::Call(c) if c.func_name == "_[_]" => c.args.first().is_some_and(is_optional_chain),
        Expr::Select(s) => !s.test && is_optional_chain(&s.operand),
        _ => false,
    }
}

/// An `exists` or `all` (its step `@result || p` or `@result && p`) made to absorb errors
/// as cel-go's does ([`super::cellogic`]).
fn absorbing_errors(original: &ComprehensionExpr, instrumented: &mut ComprehensionExpr) {
    let Expr::Call(step) = &original.loop_step.expr else { return };
    let on_result = matches!(step.args.first(), Some(IdedExpr { expr: Expr::Ident(v), .. }) if *v == original.accu_var);
    let name = match step.func_name.as_str() {
        "_||_" => cellogic::OR_STEP,
        "_&&_" => cellogic::AND_STEP,
        _ => return,
    };
    let Expr::Call(instrumented_step) = &mut instrumented.loop_step.expr else { return };
    if !on_result {
        return;
    }
    instrumented_step.func_name = name.into();
    let result = std::mem::replace(&mut instrumented.result, node(Expr::Unspecified));
    instrumented.result = call(cellogic::ACCUMULATED, vec![result]);
}

/// The function the interpreter runs for `name`: `x.?f` as `x[?"f"]`, since the `cel`
/// crate's `.?` fails with `no such key` where cel-go gives `optional.none()` (every value
/// a rule selects from is a map, which the two read alike); `-x` as a negation of ours
/// ([`super::celstd`]), since the crate's wraps around (or panics) on the lowest int.
fn runtime_name(name: &str) -> String {
    match name {
        "_?._" => "_[?_]".into(),
        "-_" => super::celstd::NEGATE.into(),
        _ => name.into(),
    }
}

/// How deeply an expression nests: the interpreter recurses once per level, so this bounds
/// the stack its evaluation takes (see [`super::celcost::on_stack_for`]).
pub fn depth(e: &IdedExpr) -> usize {
    1 + children(e).into_iter().map(depth).max().unwrap_or(0)
}

/// The expressions `e` is made of, in evaluation order.
pub(super) fn children(e: &IdedExpr) -> Vec<&IdedExpr> {
    match &e.expr {
        Expr::Call(c) => c.target.as_deref().into_iter().chain(&c.args).collect(),
        Expr::Comprehension(c) => vec![&c.iter_range, &c.accu_init, &c.loop_cond, &c.loop_step, &c.result],
        Expr::List(l) => l.elements.iter().collect(),
        Expr::Map(m) => m.entries.iter().flat_map(entry_children).collect(),
        Expr::Struct(s) => s.entries.iter().flat_map(entry_children).collect(),
        Expr::Select(s) => vec![&s.operand],
        Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => vec![],
    }
}

fn entry_children(entry: &kube_cel::cel::common::ast::IdedEntryExpr) -> Vec<&IdedExpr> {
    match &entry.expr {
        EntryExpr::MapEntry(m) => vec![&m.key, &m.value],
        EntryExpr::StructField(f) => vec![&f.value],
    }
}

/// What cel-go's planner turns into a constant: literals, and lists and maps of them.
fn is_constant(e: &IdedExpr) -> bool {
    match &e.expr {
        Expr::Literal(_) => true,
        Expr::List(l) => l.optional_indices.is_empty() && l.elements.iter().all(is_constant),
        Expr::Map(m) => m.entries.iter().all(|entry| match &entry.expr {
            EntryExpr::MapEntry(m) => !m.optional && is_constant(&m.key) && is_constant(&m.value),
            EntryExpr::StructField(_) => false,
        }),
        _ => false,
    }
}

/// The state of the evaluation running on this thread.
#[derive(Clone, Copy, Default)]
struct State {
    cost: u64,
    work: u64,
    cancelled: bool,
}

thread_local! {
    static STATE: Cell<State> = const { Cell::new(State { cost: 0, work: 0, cancelled: false }) };
}

fn cancelled() -> ExecutionError {
    ExecutionError::function_error("cost", CANCELLED)
}

/// Adds to the cost and the work; an error once over a limit (and from then on).
fn charge(cost: u64, work: u64) -> Result<(), ExecutionError> {
    STATE.with(|s| {
        let mut state = s.get();
        state.cost = state.cost.saturating_add(cost);
        state.work = state.work.saturating_add(work);
        state.cancelled |= state.cost > PER_CALL_LIMIT || state.work > WORK_LIMIT;
        s.set(state);
        if state.cancelled { Err(cancelled()) } else { Ok(()) }
    })
}

/// How one evaluation went.
pub struct Metered {
    pub result: ResolveResult,
    /// kube's runtime cost of what was evaluated.
    pub cost: u64,
    /// Stopped past a limit: `result` means nothing.
    pub cancelled: bool,
}

/// Evaluates an [`instrument`]ed expression with the meter at zero (a panic in the `cel`
/// crate is an error of the rule).
pub fn evaluate(e: &IdedExpr, ctx: &Context) -> Metered {
    let before = STATE.with(|s| s.replace(State::default()));
    let run = std::panic::AssertUnwindSafe(|| Value::resolve(e, ctx));
    let result =
        std::panic::catch_unwind(run).unwrap_or_else(|_| Err(ExecutionError::function_error("cel", "internal error")));
    let state = STATE.with(|s| s.replace(before));
    Metered { result, cost: state.cost, cancelled: state.cancelled }
}

fn literal_int(e: &IdedExpr) -> u64 {
    match &e.expr {
        Expr::Literal(LiteralValue::Int(i)) => u64::try_from(*i.inner()).unwrap_or(0),
        _ => 0,
    }
}

fn metered(ftx: &FunctionContext) -> ResolveResult {
    let (Some(cost), Some(e)) = (ftx.args.first(), ftx.args.get(1)) else { return Err(ftx.error("bad meter")) };
    charge(literal_int(cost), 0)?;
    let value = go_duration(ftx.ptx.resolve(e)?)?;
    charge(0, nodes(&value))?;
    Ok(value)
}

/// A value cel-go can hold: its durations are Go's, nanoseconds in an int64, where the
/// `cel` crate's reach further; arithmetic past them is cel-go's `integer overflow`.
fn go_duration(value: Value) -> ResolveResult {
    match &value {
        Value::Duration(d) if d.num_nanoseconds().is_none() => {
            Err(ExecutionError::function_error("duration", "integer overflow"))
        }
        _ => Ok(value),
    }
}

fn sized(ftx: &FunctionContext) -> ResolveResult {
    let [function, template, exprs @ ..] = ftx.args else { return Err(ftx.error("bad meter")) };
    let function = match &function.expr {
        Expr::Literal(LiteralValue::String(s)) => s.inner().to_string(),
        _ => String::new(),
    };
    let values = exprs.iter().map(|e| ftx.ptx.resolve(e)).collect::<Result<Vec<_>, _>>()?;
    charge(0, values.iter().map(nodes).sum())?;
    let mut scope = ftx.ptx.new_inner_scope();
    for (i, v) in values.iter().enumerate() {
        scope.add_variable_from_value(placeholder(i), v.clone());
    }
    let result = match (function.as_str(), values.as_slice()) {
        // A value kube cannot convert fails what compares it ([`super::cel_invalid`]), held
        // in a list or map of the other's size too (kube converts items as it compares them).
        ("_==_" | "_!=_", [a, b]) if super::cel_invalid::words(a).or(super::cel_invalid::words(b)).is_some() => {
            Err(ExecutionError::UnsupportedBinaryOperator("==", a.clone(), b.clone()))
        }
        ("_==_" | "_!=_", [a, b])
            if same_size(a, b) && super::cel_invalid::first(a).or(super::cel_invalid::first(b)).is_some() =>
        {
            let words = super::cel_invalid::first(a).or(super::cel_invalid::first(b)).unwrap_or_default();
            Err(super::cel_invalid::failure(words))
        }
        // cel-go's equality, not the crate's (numbers across types).
        ("_==_", [a, b]) => Ok(Value::Bool(cellogic::equal(a, b))),
        ("_!=_", [a, b]) => Ok(Value::Bool(!cellogic::equal(a, b))),
        ("@in", [a, Value::List(items)]) => Ok(Value::Bool(items.iter().any(|item| cellogic::equal(a, item)))),
        // cel-go refuses to order a NaN, against any number.
        ("_<_" | "_<=_" | "_>_" | "_>=_", [a, b]) if is_nan(a) || is_nan(b) => {
            Err(ExecutionError::function_error(&function, "NaN values cannot be ordered"))
        }
        // cel-go adds a duration to a timestamp either way round; the crate only one way.
        ("_+_", [d @ Value::Duration(_), t @ Value::Timestamp(_)]) => t.clone() + d.clone(),
        _ => scope.resolve(template).and_then(go_duration),
    };
    charge(call_cost(&function, &values, result.as_ref().ok()), 0)?;
    result
}

/// Whether two lists or two maps have as many items (what kube's equality checks first).
fn same_size(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::List(a), Value::List(b)) => a.len() == b.len(),
        (Value::Map(a), Value::Map(b)) => a.map.len() == b.map.len(),
        _ => false,
    }
}

fn is_nan(v: &Value) -> bool {
    matches!(v, Value::Float(f) if f.is_nan())
}

/// How many values `v` holds (itself included), counted without recursion.
fn nodes(v: &Value) -> u64 {
    let mut count = 0u64;
    let mut pending = vec![v];
    while let Some(v) = pending.pop() {
        count += 1;
        match v {
            Value::List(items) => pending.extend(items.iter()),
            Value::Map(map) => pending.extend(map.map.values()),
            _ => {}
        }
    }
    count
}

/// `traits.Sizer`: code points, bytes, items or entries; 1 for the rest.
fn size(v: Option<&Value>) -> u64 {
    match v {
        Some(Value::String(s)) => s.chars().count() as u64,
        Some(Value::Bytes(b)) => b.len() as u64,
        Some(Value::List(l)) => l.len() as u64,
        Some(Value::Map(m)) => m.map.len() as u64,
        _ => 1,
    }
}

fn is_text(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::String(_) | Value::Bytes(_)))
}

/// kube's `traversalCost`: a string's bytes by the traversal factor (rounded down), summed
/// over a list's items or a map's keys and values.
fn traversal(v: &Value) -> u64 {
    let mut cost = 0u64;
    let mut pending = vec![v];
    while let Some(v) = pending.pop() {
        match v {
            Value::String(s) => cost += (s.len() as f64 * STRING_TRAVERSAL_COST_FACTOR) as u64,
            Value::Bytes(b) => cost += (b.len() as f64 * STRING_TRAVERSAL_COST_FACTOR) as u64,
            Value::List(items) => pending.extend(items.iter()),
            Value::Map(map) => {
                let key = |k: &Key| match k {
                    Key::String(s) => (s.len() as f64 * STRING_TRAVERSAL_COST_FACTOR) as u64,
                    _ => 1,
                };
                cost += map.map.keys().map(key).sum::<u64>();
                pending.extend(map.map.values());
            }
            _ => cost += 1,
        }
    }
    cost
}

/// What cel-go's tracker (kube's `CallCost` first) charges for a call of `function` on
/// `values` (the receiver first).
fn call_cost(function: &str, values: &[Value], result: Option<&Value>) -> u64 {
    let (a, b) = (values.first(), values.get(1));
    let text = |v: Option<&Value>| by_factor(size(v), STRING_TRAVERSAL_COST_FACTOR);
    let regex = |v: Option<&Value>| by_factor(size(v), REGEX_STRING_LENGTH_COST_FACTOR);
    let matching = |s: Option<&Value>, re: u64| by_factor(1 + size(s), STRING_TRAVERSAL_COST_FACTOR).saturating_mul(re);
    let twice = |v: Option<&Value>| by_factor(size(v), 2.0 * STRING_TRAVERSAL_COST_FACTOR);
    match function {
        "sets.contains" | "sets.intersects" | "sets.equivalent" => {
            let factor = if function == "sets.equivalent" { 2.0 } else { 1.0 };
            1 + (size(a).saturating_mul(size(b)) as f64 * factor) as u64
        }
        "isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf" => a.map_or(0, traversal),
        "url" | "lowerAscii" | "upperAscii" | "substring" | "trim" | "cidr" | "isIP" | "isCIDR" | "quantity"
        | "isQuantity" => text(a),
        "replace" | "split" | "ip.isCanonical" => twice(a),
        "join" => twice(result),
        "find" | "findAll" => matching(a, regex(b)),
        "ip" if is_text(a) => text(a),
        "containsIP" | "containsCIDR" => {
            let cidr = size(a);
            let mut cost = by_factor(2 * cidr, STRING_TRAVERSAL_COST_FACTOR);
            if function == "containsCIDR" {
                cost += by_factor(cidr, STRING_TRAVERSAL_COST_FACTOR) + 1;
            }
            if is_text(b) {
                cost += text(b);
            }
            cost
        }
        "validate" => matching(b, by_factor(1, MAX_NAME_FORMAT_REGEX_SIZE * REGEX_STRING_LENGTH_COST_FACTOR)),
        "startsWith" | "endsWith" | "format" | "strings.quote" => text(a),
        "string" if matches!(a, Some(Value::Bytes(_))) => text(a),
        "bytes" if matches!(a, Some(Value::String(_))) => text(a),
        "@in" if matches!(b, Some(Value::List(_))) => size(b),
        "_==_" | "_!=_" => by_factor(size(a).min(size(b)), STRING_TRAVERSAL_COST_FACTOR),
        "_<_" | "_<=_" | "_>_" | "_>=_" if is_text(a) => by_factor(size(a).min(size(b)), STRING_TRAVERSAL_COST_FACTOR),
        "_+_" if is_text(a) => by_factor(size(a) + size(b), STRING_TRAVERSAL_COST_FACTOR),
        "matches" => matching(a, regex(b)),
        "contains" if is_text(a) => text(a).saturating_mul(text(b)),
        _ => 1,
    }
}
