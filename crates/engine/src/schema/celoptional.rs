//! cel-go's `optMap` and `optFlatMap` macros, which the `cel` crate lacks:
//! `o.optMap(x, f)` is `optional.of(f)` with `x` bound to `o.value()` when `o` has a value,
//! else `optional.none()`; `optFlatMap`'s `f` is an optional itself and is its result.

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
        ] {
            assert_eq!(run_with(register, expr), Ok(Value::Bool(true)), "{expr}");
        }
    }
}
