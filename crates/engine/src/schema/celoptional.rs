//! cel-go's `optMap` and `optFlatMap` macros, which the `cel` crate lacks:
//! `o.optMap(x, f)` is `optional.of(f)` with `x` bound to `o.value()` when `o` has a value,
//! else `optional.none()`; `optFlatMap`'s `f` is an optional itself and is its result.
//!
//! `or` and `orValue` are lazy, as cel-go's interpreter plans them: the alternative is
//! evaluated only when the optional has no value (the `cel` crate evaluates it first, and
//! fails with it).
//!
//! Also kube's `format.named(name)`, which answers an optional format (none for a name it
//! does not know) where the `kube-cel` crate answers the format itself or null.

use kube_cel::cel::common::ast::{CallExpr, Expr, IdedExpr};
use kube_cel::cel::extractors::{Identifier, This};
use kube_cel::cel::objects::{OptionalValue, Value};
use kube_cel::cel::parser::Expression;
use kube_cel::cel::{Context, ExecutionError, FunctionContext, ResolveResult};
use std::sync::Arc;

/// Adds the macros to `ctx`.
pub fn register(ctx: &mut Context) {
    ctx.add_function("optMap", |ftx: &FunctionContext, This(o): This<Value>, x: Identifier, f: Expression| {
        map(ftx, &o, &x, &f, true)
    });
    ctx.add_function("optFlatMap", |ftx: &FunctionContext, This(o): This<Value>, x: Identifier, f: Expression| {
        map(ftx, &o, &x, &f, false)
    });
    ctx.add_function("format.named", format_named);
    ctx.add_function("orValue", |ftx: &FunctionContext, This(o): This<Value>, alternative: Expression| {
        or_else(ftx, &o, &alternative, true)
    });
    ctx.add_function("or", |ftx: &FunctionContext, This(o): This<Value>, alternative: Expression| {
        or_else(ftx, &o, &alternative, false)
    });
}

/// `o.orValue(v)` (`unwrap`) or `o.or(p)`: `alternative` evaluated only for an empty `o`.
fn or_else(ftx: &FunctionContext, o: &Value, alternative: &Expression, unwrap: bool) -> ResolveResult {
    let optional: &OptionalValue = o.try_into()?;
    match optional.value() {
        Some(value) if unwrap => Ok(value.clone()),
        Some(_) => Ok(o.clone()),
        None => ftx.ptx.resolve(alternative),
    }
}

/// The formats `format.named` knows: kube's `ConstantFormats`.
const NAMED_FORMATS: [&str; 13] = [
    "dns1123Label",
    "dns1123Subdomain",
    "dns1035Label",
    "dns1035LabelPrefix",
    "dns1123LabelPrefix",
    "dns1123SubdomainPrefix",
    "qualifiedName",
    "labelValue",
    "uri",
    "uuid",
    "byte",
    "date",
    "datetime",
];

/// `format.named(name)`: the format `format.<name>()` makes, as an optional.
fn format_named(ftx: &FunctionContext, This(name): This<Arc<String>>) -> ResolveResult {
    if !NAMED_FORMATS.contains(&name.as_str()) {
        return Ok(Value::Opaque(Arc::new(OptionalValue::none())));
    }
    let call = CallExpr { func_name: format!("format.{name}"), target: None, args: vec![] };
    let format = ftx.ptx.resolve(&IdedExpr { id: 0, expr: Expr::Call(call) })?;
    Ok(Value::Opaque(Arc::new(OptionalValue::of(format))))
}

fn map(ftx: &FunctionContext, o: &Value, x: &Identifier, f: &Expression, wrap: bool) -> ResolveResult {
    let optional: &OptionalValue = o.try_into()?;
    let Some(value) = optional.value() else { return Ok(o.clone()) };
    let mut scope = ftx.ptx.new_inner_scope();
    scope.add_variable_from_value(x.0.as_str(), value.clone());
    let result = scope.resolve(f)?;
    if wrap {
        return Ok(Value::Opaque(Arc::new(OptionalValue::of(result))));
    }
    match &result {
        Value::Opaque(inner) if inner.runtime_type_name() == "optional_type" => Ok(result),
        _ => Err(ExecutionError::NoSuchOverload),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::celstd::run_with;

    /// The oracle's answers for rules on `self.a` set to `x` and absent.
    #[test]
    fn opt_map_and_opt_flat_map_bind_the_value() {
        for expr in [
            "optional.of('x').optMap(v, v + 'z').orValue('') == 'xz'",
            "optional.none().optMap(v, v + 'z').orValue('d') == 'd'",
            "optional.of('x').optFlatMap(v, optional.of(v)).orValue('') == 'x'",
            "optional.of('x').optFlatMap(v, optional.none()).orValue('d') == 'd'",
            "optional.of('x').optMap(v, 1).orValue(2) == 1",
            "!optional.none().optFlatMap(v, optional.of(v)).hasValue()",
            "optional.of(1).orValue(1 / 0) == 1 && optional.none().orValue(2) == 2",
            "optional.of(1).or(optional.of(1 / 0)).value() == 1 && optional.none().or(optional.of(2)).value() == 2",
            "format.named('dns1123Label').hasValue() && !format.named('nope').hasValue()",
            "format.named('uuid').value().validate('x').hasValue()",
            "!format.named('dns1123Label').value().validate('ok').hasValue()",
        ] {
            assert_eq!(run_with(register, expr), Ok(Value::Bool(true)), "{expr}");
        }
    }
}
