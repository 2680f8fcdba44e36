//! The type check of one parsed rule, as cel-go's checker does it: functions resolved
//! against the declarations kube's environment has (an undeclared one refused, a declared
//! one refused when no overload takes its arguments), operators, fields an object does not
//! declare, logical operands and literals whose items do not join into one type.

use super::decls;
use super::parse::{Expr, Kind, OPTIONAL_ENTRY};
use super::types::{CelType, keyword_field};
use std::collections::HashMap;

/// Type-checks expressions with the variables in scope, collecting cel-go's errors.
pub struct Checker {
    scopes: Vec<(String, CelType)>,
    /// `(offset, message)` in the order found.
    pub errors: Vec<(usize, String)>,
    /// The type found for each node (by [`Expr::id`]), for the cost estimate.
    pub types: HashMap<usize, CelType>,
    /// Set just before a list or map literal is checked when cel-go's homogeneous literal
    /// validator exempts it: it is an argument of `format`, directly or within other literals.
    exempt: bool,
    /// Whether a field of an undeclared name (`params.x`) is refused as cel-go refuses the
    /// name, rather than left unchecked as a qualified name cel-go might resolve.
    strict_names: bool,
}

impl Checker {
    pub fn new(variables: Vec<(String, CelType)>) -> Self {
        Checker { scopes: variables, errors: Vec::new(), types: HashMap::new(), exempt: false, strict_names: false }
    }

    /// A checker of an environment that declares no qualified names: admission's, where
    /// every name is one of its variables.
    pub fn with_strict_names(mut self) -> Self {
        self.strict_names = true;
        self
    }

    fn error(&mut self, pos: usize, message: String) -> CelType {
        self.errors.push((pos, message));
        CelType::Error
    }

    fn no_overload(&mut self, e: &Expr, function: &str, target: Option<&CelType>, args: &[CelType]) -> CelType {
        let args = args.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
        let applied = match target {
            Some(t) => format!("{t}.({args})"),
            None => format!("({args})"),
        };
        self.error(e.pos, format!("found no matching overload for '{function}' applied to '{applied}'"))
    }

    /// The type of `e`.
    pub fn check(&mut self, e: &Expr) -> CelType {
        let t = self.type_of(e);
        self.types.insert(e.id, t.clone());
        t
    }

    fn type_of(&mut self, e: &Expr) -> CelType {
        match &e.kind {
            Kind::Literal(t, ..) => t.clone(),
            Kind::Ident(name) => match self.lookup(name) {
                Some(t) => t,
                None => match type_name(name) {
                    Some(t) => CelType::Type(Box::new(t)),
                    None => self.error(e.pos, format!("undeclared reference to '{name}' (in container '')")),
                },
            },
            // A qualified name (`a.b`) cel-go resolves otherwise: left unchecked.
            // cel-go resolves a variable whose name has a dot (`authorizer.requestResource`)
            // before the field of its prefix.
            Kind::Select(operand, field) if let Some(t) = self.dotted_variable(operand, field) => t,
            Kind::Select(operand, _) if !self.strict_names && self.is_unknown_ident(operand) => CelType::Dyn,
            Kind::Select(operand, field) => {
                let t = self.check(operand);
                self.field(e.pos, &t, field)
            }
            Kind::List(items) => {
                let exempt = std::mem::take(&mut self.exempt);
                self.list(items, exempt)
            }
            Kind::Map(entries) => {
                let exempt = std::mem::take(&mut self.exempt);
                let (mut key, mut value) = (None, None);
                for (k, v) in entries {
                    let t = self.check_within(k, exempt);
                    key = Self::join(key, t, exempt);
                    let t = self.check_within(v, exempt);
                    value = Self::join(value, t, exempt);
                }
                let or_dyn = |t: Option<CelType>| Box::new(t.unwrap_or(CelType::Dyn));
                CelType::Map(or_dyn(key), or_dyn(value))
            }
            Kind::Call { function, target: None, args } if function == OPTIONAL_ENTRY => self.optional_entry(args),
            Kind::Call { function, target: None, args } => self.global(e, function, args),
            Kind::Call { function, target: Some(target), args } => self.member(e, function, target, args),
        }
    }

    /// An optional entry's value (`[?x]`): an optional, whose held type the literal holds.
    fn optional_entry(&mut self, args: &[Expr]) -> CelType {
        let Some(value) = args.first() else { return CelType::Error };
        match self.check(value) {
            CelType::Optional(inner) => *inner,
            t if t.is_open() || t == CelType::Error => t,
            t => self.error(value.pos, format!("expected type 'optional_type({t})' but found '{t}'")),
        }
    }

    fn lookup(&self, name: &str) -> Option<CelType> {
        self.scopes.iter().rev().find(|(n, _)| n == name).map(|(_, t)| t.clone())
    }

    /// The type of the variable named `<ident>.<field>`, when one is in scope.
    fn dotted_variable(&self, operand: &Expr, field: &str) -> Option<CelType> {
        match &operand.kind {
            Kind::Ident(name) => self.lookup(&format!("{name}.{field}")),
            _ => None,
        }
    }

    /// An identifier that names no variable: a namespace (`sets.contains`) or a mistake.
    fn is_unknown_ident(&self, e: &Expr) -> bool {
        matches!(&e.kind, Kind::Ident(name) if self.lookup(name).is_none())
    }

    /// A field of a value of type `t`: objects declare theirs, maps take any key; an
    /// optional's field is optional.
    fn field(&mut self, pos: usize, t: &CelType, field: &str) -> CelType {
        match t {
            CelType::Optional(inner) => match self.field(pos, inner, field) {
                CelType::Error => CelType::Error,
                found => CelType::Optional(Box::new(found)),
            },
            CelType::Object(o) => match o.fields.get(field).or_else(|| o.fields.get(&keyword_field(field)?)) {
                Some(f) => f.clone(),
                None => self.error(pos, format!("undefined field '{field}'")),
            },
            CelType::Map(_, value) => (**value).clone(),
            t if t.is_open() => CelType::Dyn,
            t => self.error(pos, format!("type '{t}' does not support field selection")),
        }
    }

    /// Checks `e`, a part of a literal (`exempt` when that literal is): a literal passes
    /// the exemption on.
    fn check_within(&mut self, e: &Expr, exempt: bool) -> CelType {
        self.exempt = exempt && matches!(e.kind, Kind::List(_) | Kind::Map(_));
        self.check(e)
    }

    /// A list literal: its items have one type (cel-go's homogeneous aggregate literals),
    /// unless it is `exempt`.
    fn list(&mut self, items: &[Expr], exempt: bool) -> CelType {
        let mut item_type: Option<CelType> = None;
        for item in items {
            let t = self.check_within(item, exempt);
            item_type = Self::join(item_type, t, exempt);
        }
        CelType::List(Box::new(item_type.unwrap_or(CelType::Dyn)))
    }

    /// cel-go's `joinTypes`: the type of a literal's items so far, with one more item of
    /// type `t`. Items that do not join make the literal's items `dyn`: kube's environment
    /// lets the checker pass mixed literals and refuses them in its validator afterwards
    /// (`literals`), which an error elsewhere in the rule keeps from running.
    fn join(before: Option<CelType>, t: CelType, exempt: bool) -> Option<CelType> {
        match before {
            _ if exempt => Some(CelType::Dyn),
            None => Some(t),
            Some(before) if decls::assignable(&before, &t) => Some(decls::most_general(&before, &t)),
            Some(_) => Some(CelType::Dyn),
        }
    }

    fn global(&mut self, e: &Expr, function: &str, args: &[Expr]) -> CelType {
        match (function, args) {
            ("has", [arg]) => {
                if let Kind::Select(operand, field) = &arg.kind {
                    let t = self.check(operand);
                    // The macro reports at `has(`, not at the selection.
                    self.field(e.pos, &t, field);
                }
                return CelType::Bool;
            }
            ("_?._", [operand, Expr { kind: Kind::Literal(_, _, Some(field)), .. }]) => {
                let t = self.check(operand);
                return match self.field(e.pos, &t, field) {
                    found @ (CelType::Error | CelType::Optional(_)) => found,
                    found => CelType::Optional(Box::new(found)),
                };
            }
            ("_&&_" | "_||_", _) => {
                for arg in args {
                    let t = self.check(arg);
                    if !t.is_open() && t != CelType::Bool {
                        self.error(arg.pos, format!("expected type 'bool' but found '{t}'"));
                    }
                }
                return CelType::Bool;
            }
            _ => {}
        }
        let types: Vec<CelType> = args.iter().map(|a| self.check(a)).collect();
        if !is_operator(function) {
            return self.resolve(e, function, None, types);
        }
        if types.contains(&CelType::Error) {
            return CelType::Error;
        }
        let result = match (function, types.as_slice()) {
            ("!_", [t]) => (t.is_open() || *t == CelType::Bool).then_some(CelType::Bool),
            ("-_", [t]) => match t {
                CelType::Int | CelType::Double => Some(t.clone()),
                t if t.is_open() => Some(CelType::Dyn),
                _ => None,
            },
            ("_==_" | "_!=_", [a, b]) => a.unifies(b).then_some(CelType::Bool),
            ("_<_" | "_<=_" | "_>_" | "_>=_", [a, b]) => ordered(a, b).then_some(CelType::Bool),
            ("_+_" | "_-_" | "_*_" | "_/_" | "_%_", [a, b]) => arithmetic(function, a, b),
            ("@in", [a, b]) => match b {
                CelType::List(item) | CelType::Map(item, _) => a.unifies(item).then_some(CelType::Bool),
                b if b.is_open() => Some(CelType::Bool),
                _ => None,
            },
            ("_[_]", [a, i]) => index(a, i),
            ("_[?_]", [a, i]) => index(a, i).map(|found| match found {
                CelType::Optional(_) => found,
                found => CelType::Optional(Box::new(found)),
            }),
            ("_?_:_", [c, a, b]) => ((c.is_open() || *c == CelType::Bool) && a.unifies(b)).then(|| more_specific(a, b)),
            _ => Some(CelType::Dyn),
        };
        result.unwrap_or_else(|| self.no_overload(e, function, None, &types))
    }

    /// A call of a named function (`receiver` is the type of a member call's target):
    /// cel-go's `undeclared reference` when no library declares it, else its overload
    /// resolution.
    fn resolve(&mut self, e: &Expr, function: &str, receiver: Option<CelType>, types: Vec<CelType>) -> CelType {
        if !decls::declared(function) {
            return self.error(e.pos, format!("undeclared reference to '{function}' (in container '')"));
        }
        let member = receiver.is_some();
        let all: Vec<CelType> = receiver.iter().cloned().chain(types.iter().cloned()).collect();
        match decls::resolve(function, member, &all) {
            decls::Resolved::Type(t) => t,
            decls::Resolved::NoOverload => self.no_overload(e, function, receiver.as_ref(), &types),
        }
    }

    fn member(&mut self, e: &Expr, function: &str, target: &Expr, args: &[Expr]) -> CelType {
        if let Kind::Ident(namespace) = &target.kind
            && self.lookup(namespace).is_none()
        {
            // A namespaced function (`sets.contains(...)`, `optional.of(...)`).
            let qualified = format!("{namespace}.{function}");
            if decls::declared(&qualified) {
                let types: Vec<CelType> = args.iter().map(|a| self.check(a)).collect();
                return self.resolve(e, &qualified, None, types);
            }
        }
        let receiver = self.check(target);
        if let Some(result) = self.macro_call(e, function, &receiver, target.pos, args) {
            return result;
        }
        let types: Vec<CelType> = args.iter().map(|a| self.check_within(a, function == "format")).collect();
        self.resolve(e, function, Some(receiver), types)
    }

    /// `all`, `exists`, `exists_one`, `filter` and `map` over a list (items) or a map (keys).
    fn macro_call(
        &mut self,
        e: &Expr,
        function: &str,
        range: &CelType,
        range_pos: usize,
        args: &[Expr],
    ) -> Option<CelType> {
        let ([var, rest @ ..], true) = (args, is_macro(function, args.len())) else {
            return None;
        };
        let Kind::Ident(name) = &var.kind else { return None };
        if function.starts_with("opt") {
            return Some(self.optional_macro(e, function, range, name, rest));
        }
        let item = match range {
            CelType::List(item) | CelType::Map(item, _) => (**item).clone(),
            t if !t.is_open() => {
                let detail = format!(
                    "expression of type '{range}' cannot be range of a comprehension (must be list, map, or dynamic)"
                );
                self.error(range_pos, detail);
                CelType::Dyn
            }
            _ => CelType::Dyn,
        };
        let types = self.within(name, item.clone(), rest);
        Some(match (function, types.as_slice()) {
            ("filter", _) => CelType::List(Box::new(item)),
            ("map", [predicate, mapped]) => {
                let result = CelType::List(Box::new(mapped.clone()));
                if !predicate.is_open() && *predicate != CelType::Bool {
                    // cel-go's expansion: `predicate ? result + [mapped] : result`.
                    self.no_overload(e, "_?_:_", None, &[predicate.clone(), result.clone(), result.clone()]);
                }
                result
            }
            ("map", [.., mapped]) => CelType::List(Box::new(mapped.clone())),
            ("map", _) => CelType::List(Box::new(CelType::Dyn)),
            _ => CelType::Bool,
        })
    }

    /// `opt.optMap(v, f)` and `opt.optFlatMap(v, f)`, which cel-go expands into calls of
    /// `hasValue()` and `value()` on `opt` (refused, at the macro, on a value that is no
    /// optional) with `v` bound to the value; `optFlatMap`'s `f` must be an optional.
    fn optional_macro(&mut self, e: &Expr, function: &str, range: &CelType, name: &str, rest: &[Expr]) -> CelType {
        let value = match range {
            CelType::Optional(inner) => (**inner).clone(),
            t if t.is_open() => CelType::Dyn,
            t => {
                self.no_overload(e, "hasValue", Some(t), &[]);
                self.no_overload(e, "value", Some(t), &[]);
                CelType::Error
            }
        };
        let failed = value == CelType::Error;
        let result = self.within(name, value, rest).pop().unwrap_or(CelType::Dyn);
        match function {
            _ if failed => CelType::Error,
            "optMap" => CelType::Optional(Box::new(result)),
            // cel-go's expansion is `hasValue() ? f : optional.none()`, whose branches must
            // join.
            _ if matches!(result, CelType::Optional(_)) || result.is_open() || result == CelType::Error => result,
            _ => {
                let none = CelType::Optional(Box::new(CelType::Dyn));
                self.no_overload(e, "_?_:_", None, &[CelType::Bool, result, none])
            }
        }
    }

    /// The types of `exprs` with `name` bound to a value of `item`.
    fn within(&mut self, name: &str, item: CelType, exprs: &[Expr]) -> Vec<CelType> {
        self.scopes.push((name.to_string(), item));
        let types: Vec<CelType> = exprs.iter().map(|a| self.check(a)).collect();
        self.scopes.pop();
        types
    }
}

/// The type an identifier names (`type(self) == int`), if it names one.
fn type_name(name: &str) -> Option<CelType> {
    Some(match name {
        "bool" => CelType::Bool,
        "bytes" => CelType::Bytes,
        "double" => CelType::Double,
        "duration" => CelType::Duration,
        "dyn" => CelType::Dyn,
        "int" => CelType::Int,
        "uint" => CelType::Uint,
        "string" => CelType::String,
        "timestamp" => CelType::Timestamp,
        "null_type" => CelType::Null,
        "list" => CelType::List(Box::new(CelType::Dyn)),
        "map" => CelType::Map(Box::new(CelType::Dyn), Box::new(CelType::Dyn)),
        "type" | "optional_type" => CelType::Type(Box::new(CelType::Dyn)),
        _ => return None,
    })
}

/// Operators (`_==_`, `@in`, `!_`), as the parser names them; every other call names a
/// function.
fn is_operator(function: &str) -> bool {
    function.starts_with('_') || function.starts_with('@') || function.ends_with('_')
}

/// The macros cel-go expands, by their argument count (the iteration variable first).
fn is_macro(function: &str, args: usize) -> bool {
    matches!(
        (function, args),
        ("all" | "exists" | "exists_one" | "filter" | "optMap" | "optFlatMap", 2) | ("map", 2 | 3)
    )
}

/// The type of `a[i]`, `None` when no overload takes these operands (an optional list or
/// map gives an optional item).
fn index(a: &CelType, i: &CelType) -> Option<CelType> {
    match a {
        CelType::List(item) => (i.is_open() || *i == CelType::Int).then(|| (**item).clone()),
        CelType::Map(key, value) => i.unifies(key).then(|| (**value).clone()),
        CelType::Optional(inner) => index(inner, i).map(|found| CelType::Optional(Box::new(found))),
        a if a.is_open() => Some(CelType::Dyn),
        _ => None,
    }
}

/// Whether `<` and friends apply (numbers compare across types).
fn ordered(a: &CelType, b: &CelType) -> bool {
    a.is_open()
        || b.is_open()
        || (a.is_numeric() && b.is_numeric())
        || (a == b
            && matches!(a, CelType::String | CelType::Bytes | CelType::Bool | CelType::Timestamp | CelType::Duration))
}

/// The result of an arithmetic operator, `None` when no overload takes these operands.
fn arithmetic(function: &str, a: &CelType, b: &CelType) -> Option<CelType> {
    use CelType::*;
    if a.is_open() || b.is_open() {
        return Some(Dyn);
    }
    match (function, a, b) {
        ("_+_", List(x), List(y)) if x.unifies(y) => Some(a.clone()),
        ("_+_", Int | Uint | Double | String | Bytes | Duration, _) if a == b => Some(a.clone()),
        ("_+_", Timestamp, Duration) | ("_+_", Duration, Timestamp) => Some(Timestamp),
        ("_-_", Int | Uint | Double | Duration, _) if a == b => Some(a.clone()),
        ("_-_", Timestamp, Timestamp) => Some(Duration),
        ("_-_", Timestamp, Duration) => Some(Timestamp),
        ("_*_" | "_/_", Int | Uint | Double, _) if a == b => Some(a.clone()),
        ("_%_", Int | Uint, _) if a == b => Some(a.clone()),
        _ => None,
    }
}

/// Of two types that unify, the one that says more, part by part: cel-go binds a type
/// parameter to the first type that is not open, so `c ? optional.none() : optional.of('a')`
/// is an `optional_type(string)` and `c ? [] : [1]` a `list(int)`.
fn more_specific(a: &CelType, b: &CelType) -> CelType {
    match (a, b) {
        (a, b) if a.is_open() => b.clone(),
        (CelType::Optional(x), CelType::Optional(y)) => CelType::Optional(Box::new(more_specific(x, y))),
        (CelType::List(x), CelType::List(y)) => CelType::List(Box::new(more_specific(x, y))),
        (CelType::Map(k1, v1), CelType::Map(k2, v2)) => {
            CelType::Map(Box::new(more_specific(k1, k2)), Box::new(more_specific(v1, v2)))
        }
        (a, _) => a.clone(),
    }
}
