//! CEL's type values: `type(x)` and the type names (`int`, `string`, `list`, ...) that it is
//! compared with, as in `type(self) == int` on an `x-kubernetes-int-or-string` field. The
//! interpreter has no type values of its own, so a type is an opaque value naming it.

use kube_cel::cel::objects::Opaque;
use kube_cel::cel::{Context, FunctionContext, ResolveResult, Value};
use std::sync::Arc;

/// The names CEL gives the types of the values a custom resource holds.
const TYPE_NAMES: [&str; 11] =
    ["int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type", "optional_type"];

/// A CEL type, by its name.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CelType(String);

impl Opaque for CelType {
    fn runtime_type_name(&self) -> &str {
        "type"
    }
}

/// Adds `type()` and the type names to the environment rules run in.
pub fn register(ctx: &mut Context) {
    for name in TYPE_NAMES {
        ctx.add_variable_from_value(name, type_value(name));
    }
    ctx.add_function("type", type_of);
}

fn type_value(name: &str) -> Value {
    Value::Opaque(Arc::new(CelType(name.to_string())))
}

fn type_of(ftx: &FunctionContext) -> ResolveResult {
    let Some(arg) = ftx.args.first() else { return Err(ftx.error("type() takes one argument")) };
    let value = ftx.ptx.resolve(arg)?;
    Ok(type_value(type_name(&value)))
}

/// The name of the type that `v` is, when `v` is a type value (`int` for `type(1)`).
pub(super) fn type_value_name(v: &Value) -> Option<&str> {
    match v {
        Value::Opaque(o) => o.downcast_ref::<CelType>().map(|t| t.0.as_str()),
        _ => None,
    }
}

/// The name of `value`'s CEL type.
pub(super) fn type_name(value: &Value) -> &str {
    match value {
        Value::List(_) => "list",
        Value::Map(_) => "map",
        Value::Function(..) => "function",
        Value::Int(_) => "int",
        Value::UInt(_) => "uint",
        Value::Float(_) => "double",
        Value::String(_) => "string",
        Value::Bytes(_) => "bytes",
        Value::Bool(_) => "bool",
        Value::Duration(_) => "google.protobuf.Duration",
        Value::Timestamp(_) => "google.protobuf.Timestamp",
        Value::Opaque(o) => o.runtime_type_name(),
        Value::Null => "null_type",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube_cel::KubeCelExt;
    use kube_cel::cel::Program;

    fn eval(expr: &str) -> Value {
        let mut ctx = Context::default().with_all();
        register(&mut ctx);
        ctx.add_variable_from_value("self", Value::Int(3));
        Program::compile(expr).expect("compiles").execute(&ctx).expect("runs")
    }

    #[test]
    fn types_compare_with_their_names() {
        assert_eq!(eval("type(self) == int"), Value::Bool(true));
        assert_eq!(eval("type(self) == string"), Value::Bool(false));
        assert_eq!(eval("type('a') == string && type([1]) == list && type({'a': 1}) == map"), Value::Bool(true));
        assert_eq!(eval("type(1.5) == double && type(true) == bool && type(null) == null_type"), Value::Bool(true));
        assert_eq!(eval("type(type(1)) == type"), Value::Bool(true));
        assert_eq!(eval("type(self) == type(4)"), Value::Bool(true));
    }
}
