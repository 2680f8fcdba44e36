//! cel-go's static cost estimate (`checker.Cost`) with kube's extensions (its library's
//! `EstimateCallCost` and the schema's sizes), over a type-checked rule: the most one
//! evaluation can cost, which kube multiplies by how often the rule can run and holds
//! against its budgets at registration.
//!
//! Macros are costed as the comprehensions cel-go expands them into; an iteration
//! variable's size is that of its range's items (or keys). Functions this estimator does
//! not know cost 1 plus their arguments, as in cel-go.

use super::parse::{Expr, Kind, OPTIONAL_ENTRY};
use super::size::Sizes;
use super::types::CelType;
use crate::schema::celcost::{
    LIST_CREATE_BASE_COST, MAP_CREATE_BASE_COST, MAX_NAME_FORMAT_REGEX_SIZE, REGEX_STRING_LENGTH_COST_FACTOR, Range,
    SELECT_AND_IDENT_COST, STRING_TRAVERSAL_COST_FACTOR,
};
use std::collections::HashMap;

const ONE: Range = Range::exactly(1);
const IDENT: Range = Range::exactly(SELECT_AND_IDENT_COST);
/// cel-go's accumulator: paths through it are not sized from the schema.
const ACCUMULATOR: &str = "__result__";

/// The estimate of one rule.
pub struct Estimator<'a> {
    types: &'a HashMap<usize, CelType>,
    sizes: Sizes<'a>,
    /// Variables other than comprehension variables (`self`, `oldSelf`).
    variables: &'a [&'a str],
    paths: HashMap<usize, Vec<String>>,
    computed: HashMap<usize, Range>,
    /// Comprehension variables in scope: name, and the range's path and type.
    iterations: Vec<(String, Vec<String>, CelType)>,
}

/// What cel-go's `AstNode` gives a function estimator: a node's path, type and size.
struct Arg {
    path: Vec<String>,
    ty: CelType,
    computed: Option<Range>,
    /// The value of an int literal.
    int: Option<i64>,
}

impl<'a> Estimator<'a> {
    pub fn new(types: &'a HashMap<usize, CelType>, sizes: Sizes<'a>, variables: &'a [&'a str]) -> Self {
        Estimator { types, sizes, variables, paths: HashMap::new(), computed: HashMap::new(), iterations: Vec::new() }
    }

    fn ty(&self, e: &Expr) -> CelType {
        self.types.get(&e.id).cloned().unwrap_or(CelType::Dyn)
    }

    fn arg(&self, e: &Expr) -> Arg {
        let mut path = self.paths.get(&e.id).cloned().unwrap_or_default();
        if path.first().is_some_and(|p| p == ACCUMULATOR) {
            path.clear();
        }
        let computed = self.computed.get(&e.id).copied().or_else(|| literal_size(e));
        Arg { path, ty: self.ty(e), computed, int: super::literals::int_literal(e) }
    }

    /// cel-go's `sizeEstimate`: a computed size, else the schema's, else 1 for scalars
    /// (and, as the oracle answers, for values of kube's library types), else unknown.
    fn size(&self, a: &Arg) -> Range {
        if let Some(computed) = a.computed {
            return computed;
        }
        if !a.path.is_empty()
            && let Some(max) = self.sizes.max_size(&a.path)
        {
            return Range { min: 0, max };
        }
        if is_scalar(&a.ty) { ONE } else { Range::UNKNOWN }
    }

    /// The cost of `e`.
    pub fn cost(&mut self, e: &Expr) -> Range {
        match &e.kind {
            Kind::Literal(..) => Range::default(),
            Kind::Ident(name) => {
                let path = match self.iterations.iter().rev().find(|(n, ..)| n == name) {
                    Some((_, range, CelType::List(_))) => with(range, "@items"),
                    Some((_, range, CelType::Map(..))) => with(range, "@keys"),
                    Some(_) => Vec::new(),
                    None => vec![name.clone()],
                };
                self.paths.insert(e.id, path);
                IDENT
            }
            Kind::Select(operand, field) => {
                let mut sum = self.cost(operand);
                if matches!(self.ty(operand), CelType::Map(..) | CelType::Object(_)) {
                    sum = sum.plus(IDENT);
                }
                let path = with(self.paths.get(&operand.id).map_or(&[][..], |p| p), field);
                self.paths.insert(e.id, path);
                sum
            }
            Kind::List(items) => {
                items.iter().fold(Range::exactly(LIST_CREATE_BASE_COST), |sum, i| sum.plus(self.cost(i)))
            }
            Kind::Map(entries) => entries.iter().fold(Range::exactly(MAP_CREATE_BASE_COST), |sum, (k, v)| {
                let key = self.cost(k);
                sum.plus(key).plus(self.cost(v))
            }),
            Kind::Call { function, target, args } => self.call(e, function, target.as_deref(), args),
        }
    }

    fn is_variable(&self, e: &Expr) -> bool {
        matches!(&e.kind, Kind::Ident(n) if self.variables.contains(&n.as_str()) || self.iterations.iter().any(|(v, ..)| v == n))
    }

    fn call(&mut self, e: &Expr, function: &str, target: Option<&Expr>, args: &[Expr]) -> Range {
        // An optional entry of a literal costs what its value costs.
        if let (OPTIONAL_ENTRY, None, [value]) = (function, target, args) {
            return self.cost(value);
        }
        // `has()` is a presence test, free in kube.
        if let ("has", None, [Expr { kind: Kind::Select(operand, _), .. }]) = (function, target, args) {
            return self.cost(operand);
        }
        match (target, args) {
            (Some(range), [Expr { kind: Kind::Ident(var), .. }, rest @ ..])
                if !rest.is_empty() && is_macro(function, rest.len()) =>
            {
                return self.comprehension(e, function, range, var, rest);
            }
            // A namespaced function: `sets.contains(a, b)`.
            (Some(ns @ Expr { kind: Kind::Ident(name), .. }), _) if !self.is_variable(ns) => {
                return self.function(e, &format!("{name}.{function}"), None, args);
            }
            _ => {}
        }
        self.function(e, function, target, args)
    }

    fn function(&mut self, e: &Expr, function: &str, target: Option<&Expr>, args: &[Expr]) -> Range {
        let arg_costs: Vec<Range> = args.iter().map(|a| self.cost(a)).collect();
        let mut sum = Range::default();
        let target_arg = target.map(|t| {
            sum = self.cost(t);
            self.arg(t)
        });
        let arg_nodes: Vec<Arg> = args.iter().map(|a| self.arg(a)).collect();
        let arg_sum = arg_costs.iter().fold(Range::default(), |s, c| s.plus(*c));
        let (cost, result) = self.function_cost(function, target_arg.as_ref(), &arg_nodes, &arg_costs, arg_sum);
        if function == "_[_]"
            && let Some(list) = args.first()
        {
            let step = match self.ty(list) {
                CelType::Map(..) => Some("@values"),
                CelType::List(_) => Some("@items"),
                _ => None,
            };
            if let Some(step) = step {
                let path = with(self.paths.get(&list.id).map_or(&[][..], |p| p), step);
                self.paths.insert(e.id, path);
            }
        }
        if let Some(size) = result {
            self.computed.insert(e.id, size);
        }
        sum.plus(cost)
    }

    /// cel-go's `functionCost`, kube's `EstimateCallCost` first: the call's cost with its
    /// arguments', and the size of its result when known.
    fn function_cost(
        &self,
        function: &str,
        target: Option<&Arg>,
        args: &[Arg],
        arg_costs: &[Range],
        arg_sum: Range,
    ) -> (Range, Option<Range>) {
        let string_arg = |i: usize| args.get(i).map(|a| self.size(a).by_factor(STRING_TRAVERSAL_COST_FACTOR));
        if let Some((cost, size)) = self.library_cost(function, target, args) {
            return (cost.plus(arg_sum), size);
        }
        let types = |i: usize| args.get(i).map(|a| &a.ty);
        match (function, target) {
            // cel-go sizes a quote as every character escaped, plus the quotes.
            ("strings.quote", None) if args.len() == 1 => {
                let size = self.size(&args[0]);
                let quoted =
                    Range { min: size.min.saturating_add(2), max: size.max.saturating_mul(2).saturating_add(2) };
                return (string_arg(0).unwrap_or_default().plus(arg_sum), Some(quoted));
            }
            ("format", Some(t)) if args.len() == 1 => {
                return (self.size(t).by_factor(STRING_TRAVERSAL_COST_FACTOR).plus(arg_sum), None);
            }
            ("startsWith" | "endsWith", Some(_)) if args.len() == 1 => {
                return (string_arg(0).unwrap_or_default().plus(arg_sum), None);
            }
            ("@in", None) if matches!(types(1), Some(CelType::List(_))) => {
                return (self.size(&args[1]).plus(arg_sum), None);
            }
            ("matches", Some(t)) if args.len() == 1 => {
                let text = self.size(t).plus(ONE).by_factor(STRING_TRAVERSAL_COST_FACTOR);
                let regex = self.size(&args[0]).by_factor(REGEX_STRING_LENGTH_COST_FACTOR);
                return (text.multiply(regex).plus(arg_sum), None);
            }
            ("contains", Some(t)) if args.len() == 1 && is_text(&t.ty) => {
                let text = self.size(t).by_factor(STRING_TRAVERSAL_COST_FACTOR);
                return (text.multiply(string_arg(0).unwrap_or_default()).plus(arg_sum), None);
            }
            ("_&&_" | "_||_", None) if arg_costs.len() == 2 => {
                return (Range { min: arg_costs[0].min, max: arg_costs[0].plus(arg_costs[1]).max }, None);
            }
            ("_?_:_", None) if arg_costs.len() == 3 => {
                let size = self.size(&args[1]).union(self.size(&args[2]));
                return (arg_costs[0].plus(arg_costs[1].union(arg_costs[2])), Some(size));
            }
            ("_+_", None) if args.len() == 2 && (is_text(&args[0].ty) || matches!(args[0].ty, CelType::List(_))) => {
                let size = self.size(&args[0]).plus(self.size(&args[1]));
                let cost = if is_text(&args[0].ty) { size.by_factor(STRING_TRAVERSAL_COST_FACTOR) } else { ONE };
                return (cost.plus(arg_sum), Some(size));
            }
            ("_==_" | "_!=_", None) if args.len() == 2 => return (self.compare(args).plus(arg_sum), None),
            ("_<_" | "_<=_" | "_>_" | "_>=_", None) if args.len() == 2 && is_text(&args[0].ty) => {
                return (self.compare(args).plus(arg_sum), None);
            }
            // A dyn argument keeps every overload: the range covers them all (the others cost
            // 1 and leave the size unknown), and the size is the one overload's that knows it.
            ("string", None) if types(0).is_some_and(|t| *t == CelType::Bytes || t.is_open()) => {
                let size = self.size(&args[0]);
                let result = Range { min: size.min / 4, max: size.max };
                let cost = string_arg(0).unwrap_or_default();
                let cost = if types(0).is_some_and(CelType::is_open) { cost.union(ONE) } else { cost };
                return (cost.plus(arg_sum), Some(result));
            }
            ("bytes", None) if types(0).is_some_and(|t| *t == CelType::String || t.is_open()) => {
                let size = self.size(&args[0]);
                let result = Range { min: size.min, max: size.max.saturating_mul(4) };
                let cost = string_arg(0).unwrap_or_default();
                let cost = if types(0).is_some_and(CelType::is_open) { cost.union(ONE) } else { cost };
                return (cost.plus(arg_sum), Some(result));
            }
            _ => {}
        }
        (ONE.plus(arg_sum), None)
    }

    /// Equality and ordering of strings, bytes and lists: a traversal of the shorter side.
    fn compare(&self, args: &[Arg]) -> Range {
        let smallest = self.size(&args[0]).max.min(self.size(&args[1]).max);
        Range { min: u64::from(smallest > 0), max: smallest }.by_factor(STRING_TRAVERSAL_COST_FACTOR)
    }

    /// kube's `CostEstimator.EstimateCallCost` (and cel-go's sets extension): `None` for
    /// functions it leaves to cel-go.
    fn library_cost(&self, function: &str, target: Option<&Arg>, args: &[Arg]) -> Option<(Range, Option<Range>)> {
        let traversal = |a: &Arg| self.size(a).by_factor(STRING_TRAVERSAL_COST_FACTOR);
        let plain = Some((ONE, None));
        match function {
            "isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf" => {
                let t = target?;
                if let CelType::List(item) = &t.ty {
                    let mut per_item = ONE;
                    if is_text(item) {
                        let item = Arg { path: item_path(&t.path), ty: (**item).clone(), computed: None, int: None };
                        per_item = per_item.plus(traversal(&item));
                    }
                    Some((self.size(t).multiply(per_item), None))
                } else {
                    Some((traversal(t), None))
                }
            }
            "url" | "jsonpatch.escapeKey" if args.len() == 1 => {
                let size = self.size(&args[0]);
                Some((traversal(&args[0]), Some(size)))
            }
            "lowerAscii" | "upperAscii" | "substring" | "trim" => {
                let t = target?;
                Some((traversal(t), Some(self.size(t))))
            }
            "replace" if args.len() >= 2 => Some(self.replace(target?, args)),
            "split" => {
                let t = target?;
                let size = self.size(t);
                // A constant limit bounds how many parts there are.
                let parts = args.get(1).and_then(|a| u64::try_from(a.int?).ok()).unwrap_or(size.max);
                Some((size.by_factor(2.0 * STRING_TRAVERSAL_COST_FACTOR), Some(Range { min: 0, max: parts })))
            }
            "join" => Some(self.join(target?, args)),
            "find" | "findAll" if !args.is_empty() => {
                let t = target?;
                let size = self.size(t);
                let text = size.plus(ONE).by_factor(STRING_TRAVERSAL_COST_FACTOR);
                let regex = self.size(&args[0]).by_factor(REGEX_STRING_LENGTH_COST_FACTOR);
                Some((text.multiply(regex), Some(Range { min: 0, max: size.max })))
            }
            "cidr" | "isIP" | "isCIDR" | "quantity" | "isQuantity" => args.first().map(|a| (traversal(a), None)),
            "ip" => match args.first() {
                Some(a) => Some((traversal(a), None)),
                None => plain,
            },
            "ip.isCanonical" => {
                args.first().map(|a| (self.size(a).by_factor(2.0 * STRING_TRAVERSAL_COST_FACTOR), None))
            }
            "containsIP" | "containsCIDR" if !args.is_empty() => {
                let ip = Range { min: 4, max: 16 };
                let mut cost = ip.plus(ip).by_factor(STRING_TRAVERSAL_COST_FACTOR);
                if function == "containsCIDR" {
                    cost = cost.plus(ip.by_factor(STRING_TRAVERSAL_COST_FACTOR)).plus(ONE);
                }
                if is_text(&args[0].ty) {
                    cost = cost.plus(traversal(&args[0]));
                }
                Some((cost, None))
            }
            "validate" => {
                let per_char = MAX_NAME_FORMAT_REGEX_SIZE * REGEX_STRING_LENGTH_COST_FACTOR;
                args.first().map(|a| (traversal(a).by_factor(per_char), None))
            }
            "format.named"
            | "sign"
            | "asInteger"
            | "isInteger"
            | "asApproximateFloat"
            | "isGreaterThan"
            | "isLessThan"
            | "compareTo"
            | "add"
            | "sub"
            | "getScheme"
            | "getHostname"
            | "getHost"
            | "getPort"
            | "getEscapedPath"
            | "getQuery"
            | "masked"
            | "prefixLength"
            | "family"
            | "isUnspecified"
            | "isLoopback"
            | "isLinkLocalMulticast"
            | "isLinkLocalUnicast"
            | "isGlobalUnicast" => plain,
            "sets.contains" | "sets.intersects" | "sets.equivalent" if args.len() == 2 => {
                let factor = if function == "sets.equivalent" { 2.0 } else { 1.0 };
                Some((self.size(&args[0]).multiply(self.size(&args[1])).by_factor(factor).plus(ONE), None))
            }
            _ => None,
        }
    }

    /// kube's estimate of `s.replace(old, new)`.
    fn replace(&self, target: &Arg, args: &[Arg]) -> (Range, Option<Range>) {
        let size = self.size(target);
        let (old, new) = (self.size(&args[0]), self.size(&args[1]));
        // How many replacements and how many characters kept, at most and at least.
        let (most, kept_most) = replace_bound(size.max, old.min, new.max <= old.min);
        let (least, kept_least) = replace_bound(size.min, old.max, old.max <= new.min);
        let (count, retained) = (Range { min: least, max: most }, Range { min: kept_least, max: kept_most });
        let result = count.multiply(new).plus(retained);
        (size.by_factor(2.0 * STRING_TRAVERSAL_COST_FACTOR), Some(result))
    }

    /// kube's estimate of `list.join(sep)`.
    fn join(&self, target: &Arg, args: &[Arg]) -> (Range, Option<Range>) {
        let items = self.size(target);
        let mut size = Range::default();
        if let CelType::List(item) = &target.ty {
            let item = Arg { path: item_path(&target.path), ty: (**item).clone(), computed: None, int: None };
            size = items.multiply(self.size(&item));
        }
        if let Some(sep) = args.first() {
            let separators = Range { min: items.min.saturating_sub(1), max: items.max.saturating_sub(1) };
            size = size.plus(self.size(sep).multiply(separators));
        }
        (size.by_factor(STRING_TRAVERSAL_COST_FACTOR), Some(size))
    }

    /// `range.all(v, p)` and the other macros, costed as cel-go's comprehensions: range and
    /// accumulator init, then per item the loop condition and step, then the result.
    fn comprehension(&mut self, e: &Expr, function: &str, range: &Expr, var: &str, rest: &[Expr]) -> Range {
        let mut sum = self.cost(range);
        let range_path = self.paths.get(&range.id).cloned().unwrap_or_default();
        self.iterations.push((var.to_string(), range_path, self.ty(range)));
        let body: Vec<Range> = rest.iter().map(|r| self.cost(r)).collect();
        self.iterations.pop();
        let (init, condition, step, result) = match (function, body.as_slice()) {
            // `__result__ && p`, `@not_strictly_false(__result__)`.
            ("all", [p]) => {
                (Range::default(), Range::exactly(2), Range { min: 1, max: p.max.saturating_add(1) }, IDENT)
            }
            // `__result__ || p`, `@not_strictly_false(!__result__)`.
            ("exists", [p]) => {
                (Range::default(), Range::exactly(3), Range { min: 1, max: p.max.saturating_add(1) }, IDENT)
            }
            // `p ? __result__ + 1 : __result__`, then `__result__ == 1`.
            ("exists_one", [p]) => {
                (Range::default(), Range::default(), p.plus(Range { min: 1, max: 2 }), Range::exactly(2))
            }
            // `__result__ + [f]`.
            ("map", [f]) => {
                (Range::exactly(LIST_CREATE_BASE_COST), Range::default(), f.plus(Range::exactly(12)), IDENT)
            }
            // `p ? __result__ + [f] : __result__`.
            ("map", [p, f]) => {
                let step = p.plus(Range { min: 1, max: f.plus(Range::exactly(12)).max });
                (Range::exactly(LIST_CREATE_BASE_COST), Range::default(), step, IDENT)
            }
            // `p ? __result__ + [v] : __result__`.
            ("filter", [p]) => {
                (Range::exactly(LIST_CREATE_BASE_COST), Range::default(), p.plus(Range { min: 1, max: 13 }), IDENT)
            }
            _ => (Range::default(), Range::default(), ONE, IDENT),
        };
        sum = sum.plus(init).plus(result);
        let count = self.size(&self.arg(range));
        self.computed.insert(e.id, count);
        sum.plus(count.multiply(step.plus(condition)))
    }
}

/// One bound of kube's `replace` estimate for a string of `size` and a replaced string of
/// `old`: (replacements, characters kept whole).
fn replace_bound(size: u64, old: u64, kept_whole: bool) -> (u64, u64) {
    if old == 0 {
        (size.saturating_add(1), size)
    } else if kept_whole {
        (0, size)
    } else {
        ((size as f64 / old as f64).ceil() as u64, 0)
    }
}

/// The path of a list's items (kube's `listElementNode`): none for a list with no path
/// (a literal, a macro's result), which is then sized by its items' type alone.
fn item_path(list: &[String]) -> Vec<String> {
    if list.is_empty() { Vec::new() } else { with(list, "@items") }
}

fn with(path: &[String], next: &str) -> Vec<String> {
    let mut out = path.to_vec();
    out.push(next.to_string());
    out
}

fn is_macro(function: &str, rest: usize) -> bool {
    matches!((function, rest), ("all" | "exists" | "exists_one" | "filter", 1) | ("map", 1 | 2))
}

fn is_text(t: &CelType) -> bool {
    matches!(t, CelType::String | CelType::Bytes)
}

/// Types sized 1 when nothing else sizes them: cel-go's scalars, and the values of kube's
/// library types (a `dyn`, a type or an optional stays unknown: the oracle refuses
/// `dyn(1) == dyn(2)` as too expensive).
fn is_scalar(t: &CelType) -> bool {
    matches!(
        t,
        CelType::Bool
            | CelType::Double
            | CelType::Duration
            | CelType::Int
            | CelType::Timestamp
            | CelType::Uint
            | CelType::Opaque(_)
    )
}

/// cel-go's `ComputedSize` of literals, lists and maps.
fn literal_size(e: &Expr) -> Option<Range> {
    match &e.kind {
        Kind::Literal(CelType::Null, ..) => Some(ONE),
        Kind::Literal(_, size, ..) => Some(Range::exactly(*size)),
        Kind::List(items) => Some(Range::exactly(items.len() as u64)),
        Kind::Map(entries) => Some(Range::exactly(entries.len() as u64)),
        _ => None,
    }
}
