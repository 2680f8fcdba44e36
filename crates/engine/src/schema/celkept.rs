//! Optionals that survive the `cel` crate's copies. The crate copies a value each time it
//! binds a comprehension's variable (the element, the accumulator), and its copy of an
//! optional with a value is that bare value (`Optional::clone_as_boxed`), so
//! `[self.?a, self.?b].exists(o, o.hasValue())` fails with `no such overload` where cel-go
//! evaluates it. A rule that can make optionals is rewritten once, after its instrumentation
//! ([`super::celmeter::instrument`]): what a comprehension binds passes through `@keep`,
//! which wraps optionals (in lists and map values too) in an opaque value of ours that the
//! crate copies whole, and every use of a comprehension's variable through `@unkeep`.

use super::celmeter::SIZED;
use kube_cel::cel::common::ast::{
    CallExpr, ComprehensionExpr, EntryExpr, Expr, IdedEntryExpr, IdedExpr, ListExpr, LiteralValue, MapEntryExpr,
    MapExpr, SelectExpr, StructExpr, StructFieldExpr,
};
use kube_cel::cel::objects::{Map, Opaque, OptionalValue, Value};
use kube_cel::cel::{Context, ResolveResult};
use std::sync::Arc;

/// `@keep(v)`: `v` with its optionals wrapped.
const KEEP: &str = "@keep";
/// `@unkeep(v)`: `v` with its wrapped optionals restored.
const UNKEEP: &str = "@unkeep";

/// Adds `@keep` and `@unkeep` to the environment rules run in.
pub fn register(ctx: &mut Context) {
    ctx.add_function(KEEP, |v: Value| -> ResolveResult { Ok(keep(&v).unwrap_or(v)) });
    ctx.add_function(UNKEEP, |v: Value| -> ResolveResult { Ok(unkeep(&v).unwrap_or(v)) });
}

/// An optional held where the crate would copy it.
#[derive(Debug, PartialEq, Eq)]
struct Kept(Value);

impl Opaque for Kept {
    fn runtime_type_name(&self) -> &str {
        "@kept"
    }
}

/// `v` rewritten by `wrap` element by element, or `None` when nothing in it changed.
fn rebuild(v: &Value, wrap: fn(&Value) -> Option<Value>) -> Option<Value> {
    match v {
        Value::List(items) => {
            let changed: Vec<Option<Value>> = items.iter().map(wrap).collect();
            changed.iter().any(Option::is_some).then(|| {
                let items = items.iter().zip(changed).map(|(old, new)| new.unwrap_or_else(|| old.clone()));
                Value::List(Arc::new(items.collect()))
            })
        }
        Value::Map(map) => {
            let changed: Vec<_> = map.map.iter().filter_map(|(k, v)| wrap(v).map(|v| (k.clone(), v))).collect();
            (!changed.is_empty()).then(|| {
                let mut entries = (*map.map).clone();
                entries.extend(changed);
                Value::Map(Map { map: Arc::new(entries) })
            })
        }
        _ => None,
    }
}

fn keep(v: &Value) -> Option<Value> {
    match v {
        Value::Opaque(o) if o.downcast_ref::<OptionalValue>().is_some() => {
            Some(Value::Opaque(Arc::new(Kept(v.clone()))))
        }
        _ => rebuild(v, keep),
    }
}

fn unkeep(v: &Value) -> Option<Value> {
    match v {
        Value::Opaque(o) => match (o.downcast_ref::<Kept>(), o.downcast_ref::<OptionalValue>()) {
            (Some(kept), _) => Some(kept.0.clone()),
            // An optional made of a kept element (`l[?0]`).
            (_, Some(optional)) => {
                optional.value().and_then(unkeep).map(|inner| Value::Opaque(Arc::new(OptionalValue::of(inner))))
            }
            _ => None,
        },
        _ => rebuild(v, unkeep),
    }
}

/// Whether `e` can make an optional: every optional starts at `x.?f`, `x[?k]` or an
/// `optional.*` function.
pub fn makes_optionals(e: &IdedExpr) -> bool {
    let own = match &e.expr {
        Expr::Call(c) => {
            matches!(c.func_name.as_str(), "_?._" | "_[?_]")
                || c.func_name.starts_with("optional.")
                || matches!(c.target.as_deref(), Some(IdedExpr { expr: Expr::Ident(ns), .. }) if ns == "optional")
        }
        _ => false,
    };
    own || super::celmeter::children(e).into_iter().any(makes_optionals)
}

/// Rewrites an (instrumented) expression so that comprehensions keep their optionals.
pub fn keep_optionals(e: &IdedExpr) -> IdedExpr {
    Rewriter { bound: Vec::new() }.expr(e)
}

struct Rewriter {
    /// The comprehension variables in scope.
    bound: Vec<String>,
}

fn call(function: &str, arg: IdedExpr) -> IdedExpr {
    IdedExpr { id: 0, expr: Expr::Call(CallExpr { func_name: function.to_string(), target: None, args: vec![arg] }) }
}

impl Rewriter {
    fn expr(&mut self, e: &IdedExpr) -> IdedExpr {
        let expr = match &e.expr {
            Expr::Ident(name) if self.bound.contains(name) => return call(UNKEEP, e.clone()),
            Expr::Comprehension(c) => Expr::Comprehension(Box::new(self.comprehension(c))),
            Expr::Call(c) => Expr::Call(CallExpr {
                func_name: c.func_name.clone(),
                target: c.target.as_deref().map(|t| Box::new(self.expr(t))),
                args: c.args.iter().enumerate().map(|(i, a)| self.argument(c, i, a)).collect(),
            }),
            Expr::List(l) => Expr::List(ListExpr {
                elements: l.elements.iter().map(|i| self.expr(i)).collect(),
                optional_indices: l.optional_indices.clone(),
            }),
            Expr::Map(m) => Expr::Map(MapExpr { entries: m.entries.iter().map(|entry| self.entry(entry)).collect() }),
            Expr::Struct(s) => Expr::Struct(StructExpr {
                type_name: s.type_name.clone(),
                entries: s.entries.iter().map(|entry| self.entry(entry)).collect(),
            }),
            Expr::Select(s) => Expr::Select(SelectExpr {
                operand: Box::new(self.expr(&s.operand)),
                field: s.field.clone(),
                test: s.test,
            }),
            Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => e.expr.clone(),
        };
        let rewritten = IdedExpr { id: e.id, expr };
        match &e.expr {
            // A list's or map's elements are copied when read, and a list's when two are
            // concatenated (`map`'s `@result + [f(x)]`): kept, and restored when read.
            Expr::Map(_) | Expr::List(_) => call(KEEP, rewritten),
            Expr::Select(s) if !s.test => call(UNKEEP, rewritten),
            Expr::Call(c) if c.func_name == "_[_]" => call(UNKEEP, rewritten),
            _ => rewritten,
        }
    }

    /// What `==`, `!=` and `in` compare is restored (the meter compares values, not the
    /// crate's copies), so that a kept optional equals an optional. A concatenation's
    /// operands stay kept: the crate copies them.
    fn argument(&mut self, c: &CallExpr, i: usize, a: &IdedExpr) -> IdedExpr {
        let rewritten = self.expr(a);
        let compares = c.func_name == SIZED
            && matches!(&c.args[0].expr, Expr::Literal(LiteralValue::String(f)) if ["_==_", "_!=_", "@in"].contains(&f.inner()));
        if compares && i >= 2 { call(UNKEEP, rewritten) } else { rewritten }
    }

    fn entry(&mut self, entry: &IdedEntryExpr) -> IdedEntryExpr {
        let expr = match &entry.expr {
            EntryExpr::MapEntry(m) => EntryExpr::MapEntry(MapEntryExpr {
                key: self.expr(&m.key),
                value: self.expr(&m.value),
                optional: m.optional,
            }),
            EntryExpr::StructField(f) => EntryExpr::StructField(StructFieldExpr {
                field: f.field.clone(),
                value: self.expr(&f.value),
                optional: f.optional,
            }),
        };
        IdedEntryExpr { id: entry.id, expr }
    }

    fn comprehension(&mut self, c: &ComprehensionExpr) -> ComprehensionExpr {
        let iter_range = call(KEEP, self.expr(&c.iter_range));
        let accu_init = call(KEEP, self.expr(&c.accu_init));
        let outer = self.bound.clone();
        // The accumulator stays kept while it accumulates, and is restored as the result.
        self.bound.retain(|name| *name != c.accu_var);
        self.bound.extend([Some(&c.iter_var), c.iter_var2.as_ref()].into_iter().flatten().cloned());
        let loop_cond = self.expr(&c.loop_cond);
        let loop_step = call(KEEP, self.expr(&c.loop_step));
        self.bound = outer;
        ComprehensionExpr {
            iter_range,
            iter_var: c.iter_var.clone(),
            iter_var2: c.iter_var2.clone(),
            accu_var: c.accu_var.clone(),
            accu_init,
            loop_cond,
            loop_step,
            result: call(UNKEEP, self.expr(&c.result)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube_cel::KubeCelExt;

    fn run(expr: &str) -> Result<Value, String> {
        let parsed = crate::schema::celcheck::cel_parse(expr).expect("parses");
        let mut ctx = Context::default().with_all();
        register(&mut ctx);
        crate::schema::celoptional::register(&mut ctx);
        let program = keep_optionals(&parsed);
        ctx.resolve(&program).map_err(|e| e.to_string())
    }

    /// The oracle's answers: cel-go iterates lists of optionals as it does any list.
    #[test]
    fn comprehensions_bind_optionals_whole() {
        for expr in [
            "[optional.of(1), optional.none()].exists(o, o.hasValue())",
            "![optional.of(1), optional.none()].all(o, o.hasValue())",
            "[optional.of(1), optional.none()].map(o, o.orValue(0)) == [1, 0]",
            "[optional.of(1), optional.none()].filter(o, o.hasValue()).size() == 1",
            "[optional.of(1), optional.none()].exists_one(o, o.hasValue())",
            "{'k': [optional.of('x')]}.k.all(o, o.value() == 'x')",
            "[[optional.of(1)], [optional.none()]].exists(l, l.all(o, o.hasValue()))",
            "[optional.of('x')].map(o, o.optMap(v, v + '!')).size() == 1",
            "[optional.of('x')].map(o, o).all(o, o.value() == 'x')",
            "[optional.of('x')].map(o, o.optMap(v, v + '!'))[0].value() == 'x!'",
            "[optional.of('x')].map(o, o.optMap(v, v + '!')).all(o, o.value() == 'x!')",
            "[optional.of(1), optional.none()].map(o, o.hasValue(), o.value() + 1) == [2]",
            "{'k': optional.of(1)}.k.hasValue() && !{'k': [optional.none()]}['k'][0].hasValue()",
            "[[optional.of(2)]][?0].value()[0].value() == 2",
        ] {
            assert_eq!(run(expr), Ok(Value::Bool(true)), "{expr}");
        }
    }

    #[test]
    fn only_optional_syntax_makes_optionals() {
        let parsed = |e: &str| crate::schema::celcheck::cel_parse(e).expect("parses");
        assert!(makes_optionals(&parsed("[self.?a].all(o, o.hasValue())")));
        assert!(makes_optionals(&parsed("[optional.none()].size() == 1")));
        assert!(!makes_optionals(&parsed("self.all(x, x > 0)")));
    }
}
