//! cel-go's logic where the `cel` crate's differs: `exists` and `all` absorb the errors of
//! some iterations when another decides the answer (`[0, 1].exists(x, 10 / x > 5)` is
//! true, as `||` and `&&` are commutative for errors in cel-go), and `==` (and `in` a list)
//! compares numbers of different types by value at runtime (`dyn(1) == 1.0`), in lists and
//! maps too.
//!
//! The crate's comprehension stops at the first error, so an error that may still be
//! absorbed is carried as a value ([`Pending`]) in the accumulator, and raised only if it
//! is the result.

use kube_cel::cel::objects::{Key, Opaque, Value};
use kube_cel::cel::{Context, ExecutionError, FunctionContext, ResolveResult};
use std::sync::Arc;

/// The step of an `exists`: `@result || predicate`, errors absorbed.
pub(super) const OR_STEP: &str = "@or_step";
/// The step of an `all`: `@result && predicate`, errors absorbed.
pub(super) const AND_STEP: &str = "@and_step";
/// The result of an `exists` or `all`: the accumulator, its pending error raised.
pub(super) const ACCUMULATED: &str = "@accumulated";

/// `a || b`, as cel-go's `evalOr`.
pub(super) const OR: &str = "@or";
/// `a && b`, as cel-go's `evalAnd`.
pub(super) const AND: &str = "@and";

/// Adds the functions the instrumented rules call (see `celmeter::instrument`).
pub fn register(ctx: &mut Context) {
    ctx.add_function(OR, |ftx: &FunctionContext| logic(ftx, true));
    ctx.add_function(AND, |ftx: &FunctionContext| logic(ftx, false));
    ctx.add_function(OR_STEP, |ftx: &FunctionContext| step(ftx, true));
    ctx.add_function(AND_STEP, |ftx: &FunctionContext| step(ftx, false));
    ctx.add_function(ACCUMULATED, accumulated);
}

/// An error an `exists` or `all` met and may still absorb.
#[derive(Debug)]
struct Pending(ExecutionError);

impl PartialEq for Pending {
    fn eq(&self, _: &Self) -> bool {
        false
    }
}

impl Eq for Pending {}

impl Opaque for Pending {
    fn runtime_type_name(&self) -> &str {
        "error"
    }
}

fn pending(e: ExecutionError) -> Value {
    Value::Opaque(Arc::new(Pending(e)))
}

fn pending_error(v: &Value) -> Option<&ExecutionError> {
    match v {
        Value::Opaque(o) => o.downcast_ref::<Pending>().map(|p| &p.0),
        _ => None,
    }
}

/// cel-go's `||` (`deciding` true) or `&&` (false) of the accumulator and the predicate:
/// the deciding value wins over errors; else the first error stays.
fn step(ftx: &FunctionContext, deciding: bool) -> ResolveResult {
    let [acc, predicate] = ftx.args else { return Err(ftx.error("a step takes two arguments")) };
    let acc = ftx.ptx.resolve(acc)?;
    let predicate = match ftx.ptx.resolve(predicate) {
        // A cancelled evaluation stops, as in cel-go.
        Err(e @ ExecutionError::FunctionError { .. }) if is_cancellation(&e) => return Err(e),
        other => other,
    };
    if acc == Value::Bool(deciding) || matches!(predicate, Ok(Value::Bool(b)) if b == deciding) {
        return Ok(Value::Bool(deciding));
    }
    Ok(match (acc, predicate) {
        (acc, _) if pending_error(&acc).is_some() => acc,
        (Value::Bool(_), Ok(Value::Bool(b))) => Value::Bool(b),
        (_, Err(e)) => pending(e),
        (_, Ok(_)) => pending(ExecutionError::NoSuchOverload),
    })
}

/// `||` (`deciding` true) or `&&`: a deciding operand on either side decides; failing
/// that, the first operand's error wins (the crate's raises the second's), then the
/// second's; an operand that is no bool is `no such overload`.
fn logic(ftx: &FunctionContext, deciding: bool) -> ResolveResult {
    let [left, right] = ftx.args else { return Err(ftx.error("a logical operator takes two operands")) };
    let decides = |v: &ResolveResult| matches!(v, Ok(Value::Bool(b)) if *b == deciding);
    let left = ftx.ptx.resolve(left);
    if decides(&left) {
        return left;
    }
    if let Err(e) = &left
        && is_cancellation(e)
    {
        return left;
    }
    let right = ftx.ptx.resolve(right);
    if decides(&right) {
        return right;
    }
    match (left, right) {
        (Err(e), _) => Err(e),
        (Ok(Value::Bool(_)), Ok(b @ Value::Bool(_))) => Ok(b),
        (Ok(Value::Bool(_)), Err(e)) => Err(e),
        _ => Err(ExecutionError::NoSuchOverload),
    }
}

fn is_cancellation(e: &ExecutionError) -> bool {
    matches!(e, ExecutionError::FunctionError { function, .. } if function == "cost")
}

fn accumulated(ftx: &FunctionContext) -> ResolveResult {
    let Some(result) = ftx.args.first() else { return Err(ftx.error("no result")) };
    let value = ftx.ptx.resolve(result)?;
    match pending_error(&value) {
        Some(e) => Err(e.clone()),
        None => Ok(value),
    }
}

/// cel-go's runtime equality: numbers by value whatever their types, lists and maps
/// element by element.
pub(super) fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Int(i), Value::UInt(u)) | (Value::UInt(u), Value::Int(i)) => u64::try_from(*i).is_ok_and(|i| i == *u),
        (Value::Int(i), Value::Float(f)) | (Value::Float(f), Value::Int(i)) => float_is(*f, *i as i128),
        (Value::UInt(u), Value::Float(f)) | (Value::Float(f), Value::UInt(u)) => float_is(*f, i128::from(*u)),
        (Value::List(x), Value::List(y)) => x.len() == y.len() && x.iter().zip(y.iter()).all(|(a, b)| equal(a, b)),
        (Value::Map(x), Value::Map(y)) => {
            x.map.len() == y.map.len()
                && x.map
                    .iter()
                    .all(|(k, v)| y.map.get(k).or_else(|| numeric_key(&y.map, k)).is_some_and(|w| equal(v, w)))
        }
        _ => a == b,
    }
}

/// Whether the double `f` is the integer `n` exactly.
fn float_is(f: f64, n: i128) -> bool {
    f.is_finite() && f.fract() == 0.0 && (-1e39..=1e39).contains(&f) && f as i128 == n
}

/// The value under the key of the other numeric type that `k` equals (`1` and `1u`).
fn numeric_key<'m>(map: &'m std::collections::HashMap<Key, Value>, k: &Key) -> Option<&'m Value> {
    match k {
        Key::Int(i) => u64::try_from(*i).ok().and_then(|u| map.get(&Key::Uint(u))),
        Key::Uint(u) => i64::try_from(*u).ok().and_then(|i| map.get(&Key::Int(i))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_equal_across_types() {
        assert!(equal(&Value::Int(1), &Value::Float(1.0)));
        assert!(equal(&Value::UInt(1), &Value::Int(1)));
        assert!(!equal(&Value::Int(-1), &Value::UInt(u64::MAX)));
        assert!(!equal(&Value::Int(1), &Value::Float(1.5)));
        assert!(!equal(&Value::Float(f64::NAN), &Value::Float(f64::NAN)));
        let list = |v: Vec<Value>| Value::List(Arc::new(v));
        assert!(equal(&list(vec![Value::Int(1), Value::Float(2.0)]), &list(vec![Value::Float(1.0), Value::UInt(2)])));
    }
}
