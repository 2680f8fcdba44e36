//! The type check of one parsed rule: the subset of cel-go's checker that refuses rules at
//! registration — functions and operators applied to types they have no overload for,
//! fields an object does not declare, logical operands and list items of the wrong type.
//! Functions it does not know are not checked (they give `dyn`), so it refuses only what
//! kube refuses.

use super::parse::{Expr, Kind};
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
}

impl Checker {
    pub fn new(variables: Vec<(String, CelType)>) -> Self {
        Checker { scopes: variables, errors: Vec::new(), types: HashMap::new(), exempt: false }
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
            Kind::Literal(t, _) => t.clone(),
            Kind::Ident(name) => match self.lookup(name) {
                Some(t) => t,
                None if TYPE_NAMES.contains(&name.as_str()) => CelType::Dyn,
                None => self.error(e.pos, format!("undeclared reference to '{name}' (in container '')")),
            },
            // A qualified name (`a.b`) cel-go resolves otherwise: left unchecked.
            Kind::Select(operand, _) if self.is_unknown_ident(operand) => CelType::Dyn,
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
                let mut types =
                    entries.iter().map(|(k, v)| (self.check_within(k, exempt), self.check_within(v, exempt)));
                match types.next() {
                    Some((k, v)) => CelType::Map(Box::new(k), Box::new(v)),
                    None => CelType::Map(Box::new(CelType::Dyn), Box::new(CelType::Dyn)),
                }
            }
            Kind::Call { function, target: None, args } => self.global(e, function, args),
            Kind::Call { function, target: Some(target), args } => self.member(e, function, target, args),
        }
    }

    fn lookup(&self, name: &str) -> Option<CelType> {
        self.scopes.iter().rev().find(|(n, _)| n == name).map(|(_, t)| t.clone())
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
            match &item_type {
                _ if exempt => {}
                Some(want) if !want.unifies(&t) => {
                    self.error(item.pos, format!("expected type '{want}' but found '{t}'"));
                }
                Some(_) => {}
                None if !t.is_open() => item_type = Some(t),
                None => {}
            }
        }
        CelType::List(Box::new(item_type.unwrap_or(CelType::Dyn)))
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
        if types.contains(&CelType::Error) {
            return CelType::Error;
        }
        let result = match (function, types.as_slice()) {
            ("size", [t]) => sized(t).then_some(CelType::Int),
            // No conversion takes an optional.
            (_, [CelType::Optional(_)]) if CONVERSIONS.contains(&function) => None,
            ("int", [_]) => Some(CelType::Int),
            ("uint", [_]) => Some(CelType::Uint),
            ("double", [_]) => Some(CelType::Double),
            ("string", [_]) => Some(CelType::String),
            ("bool", [_]) => Some(CelType::Bool),
            ("bytes", [_]) => Some(CelType::Bytes),
            ("timestamp", [_]) => Some(CelType::Timestamp),
            ("duration", [_]) => Some(CelType::Duration),
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
            ("_?_:_", [c, a, b]) => {
                ((c.is_open() || *c == CelType::Bool) && a.unifies(b)).then(|| if a.is_open() { b } else { a }.clone())
            }
            _ => Some(CelType::Dyn),
        };
        result.unwrap_or_else(|| self.no_overload(e, function, None, &types))
    }

    fn member(&mut self, e: &Expr, function: &str, target: &Expr, args: &[Expr]) -> CelType {
        if self.is_unknown_ident(target) {
            // A namespaced function (`sets.contains(...)`, `optional.of(...)`).
            args.iter().for_each(|a| drop(self.check(a)));
            return CelType::Dyn;
        }
        let receiver = self.check(target);
        if let Some(result) = self.macro_call(function, &receiver, target.pos, args) {
            return result;
        }
        let types: Vec<CelType> = args.iter().map(|a| self.check_within(a, function == "format")).collect();
        if receiver == CelType::Error || types.contains(&CelType::Error) {
            return CelType::Error;
        }
        let string_arg = |t: &CelType| t.is_open() || *t == CelType::String;
        let result = match (function, types.as_slice(), &receiver) {
            ("hasValue", [], CelType::Optional(_)) => Some(CelType::Bool),
            ("value", [], CelType::Optional(inner)) => Some((**inner).clone()),
            ("orValue", [arg], CelType::Optional(inner)) => inner.unifies(arg).then(|| (**inner).clone()),
            ("or", [_], CelType::Optional(_)) => Some(receiver.clone()),
            ("size", [], _) => sized(&receiver).then_some(CelType::Int),
            ("startsWith" | "endsWith" | "contains" | "matches", [arg], _) => {
                (string_arg(&receiver) && string_arg(arg)).then_some(CelType::Bool)
            }
            _ => Some(CelType::Dyn),
        };
        result.unwrap_or_else(|| self.no_overload(e, function, Some(&receiver), &types))
    }

    /// `all`, `exists`, `exists_one`, `filter` and `map` over a list (items) or a map (keys).
    fn macro_call(&mut self, function: &str, range: &CelType, range_pos: usize, args: &[Expr]) -> Option<CelType> {
        let ([var, rest @ ..], true) = (args, matches!(function, "all" | "exists" | "exists_one" | "filter" | "map"))
        else {
            return None;
        };
        let Kind::Ident(name) = &var.kind else { return None };
        let item = match range {
            CelType::List(item) | CelType::Map(item, _) => (**item).clone(),
            CelType::Optional(_) => {
                let detail = format!(
                    "expression of type '{range}' cannot be range of a comprehension (must be list, map, or dynamic)"
                );
                self.error(range_pos, detail);
                CelType::Dyn
            }
            _ => CelType::Dyn,
        };
        self.scopes.push((name.clone(), item.clone()));
        let types: Vec<CelType> = rest.iter().map(|a| self.check(a)).collect();
        self.scopes.pop();
        Some(match (function, types.as_slice()) {
            ("filter", _) => CelType::List(Box::new(item)),
            ("map", [.., mapped]) => CelType::List(Box::new(mapped.clone())),
            ("map", _) => CelType::List(Box::new(CelType::Dyn)),
            _ => CelType::Bool,
        })
    }
}

/// Identifiers that name types (`type(self) == int`).
const TYPE_NAMES: [&str; 12] =
    ["bool", "bytes", "double", "duration", "dyn", "int", "list", "map", "null_type", "string", "timestamp", "type"];

/// The functions that convert a value to a type.
const CONVERSIONS: [&str; 8] = ["int", "uint", "double", "string", "bool", "bytes", "timestamp", "duration"];

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

/// Whether `size` applies.
fn sized(t: &CelType) -> bool {
    t.is_open() || matches!(t, CelType::String | CelType::Bytes | CelType::List(_) | CelType::Map(..))
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
