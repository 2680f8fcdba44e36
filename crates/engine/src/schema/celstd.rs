//! The functions whose answers in the `cel` crate (and kube-cel's library on it) differ
//! from cel-go's, replaced for the rules the engine runs: `size` of a string counts code
//! points, `bool()` and `dyn()` exist, `string()` prints values as cel-go does (Go's
//! floats, `5400s`, RFC 3339 with the value's own offset), `sum()` adds durations, `-x`
//! fails on the lowest int, `max()`/`min()` of an empty list fail with kube's words;
//! `format` is [`super::celformat`]'s, quantities [`super::celquantity`]'s.
//!
//! What these do not handle themselves (IP and CIDR values, sums of numbers, lists'
//! `indexOf`) goes back to kube-cel's own function, run in an environment of its own:
//! the `cel` crate keeps one function per name, so the replaced one is reachable no other way.

use crate::representation::gofmt::go_format_g;
use kube_cel::KubeCelExt;
use kube_cel::cel::extractors::{Arguments, This};
use kube_cel::cel::objects::Value;
use kube_cel::cel::{Context, ExecutionError, FunctionContext, Program, ResolveResult};
use std::cmp::Ordering;
use std::sync::Arc;

/// kube-cel's functions that the replacements hand back to, as calls on the variables
/// `a`, `b` and `c`.
#[derive(Clone, Copy)]
pub(super) enum Handed {
    String,
    Sum,
    IndexOf,
    LastIndexOf,
    Find,
    FindAll,
    FindAllN,
    Ip,
    Cidr,
    IsCanonical,
    ContainsIp,
    ContainsCidr,
}

impl Handed {
    const ALL: [Handed; 12] = [
        Handed::String,
        Handed::Sum,
        Handed::IndexOf,
        Handed::LastIndexOf,
        Handed::Find,
        Handed::FindAll,
        Handed::FindAllN,
        Handed::Ip,
        Handed::Cidr,
        Handed::IsCanonical,
        Handed::ContainsIp,
        Handed::ContainsCidr,
    ];

    fn name(self) -> &'static str {
        self.source().split(['(', '.']).nth(1).unwrap_or_default()
    }

    fn source(self) -> &'static str {
        match self {
            Handed::String => "a.string()",
            Handed::Sum => "a.sum()",
            Handed::IndexOf => "a.indexOf(b)",
            Handed::LastIndexOf => "a.lastIndexOf(b)",
            Handed::Find => "a.find(b)",
            Handed::FindAll => "a.findAll(b)",
            Handed::FindAllN => "a.findAll(b, c)",
            Handed::Ip => "a.ip()",
            Handed::Cidr => "a.cidr()",
            Handed::IsCanonical => "a.isCanonical()",
            Handed::ContainsIp => "a.containsIP(b)",
            Handed::ContainsCidr => "a.containsCIDR(b)",
        }
    }

    /// The source as a call: `string(a)` is not a method in CEL.
    fn program_source(self) -> String {
        match self {
            Handed::String => "string(a)".into(),
            Handed::Ip => "ip(a)".into(),
            Handed::Cidr => "cidr(a)".into(),
            Handed::IsCanonical => "ip.isCanonical(a)".into(),
            other => other.source().into(),
        }
    }
}

/// kube-cel's library unchanged, and the calls handed back to it compiled once (a rule
/// summing numbers would otherwise compile `a.sum()` at every evaluation).
struct Kube {
    base: Context<'static>,
    programs: [Option<Program>; Handed::ALL.len()],
}

thread_local! {
    static KUBE: Kube = Kube {
        base: Context::default().with_all(),
        programs: Handed::ALL.map(|h| Program::compile(&h.program_source()).ok()),
    };
}

/// Adds the replacements to `ctx` (after kube-cel's library, which they override).
pub fn register(ctx: &mut Context) {
    ctx.add_function("size", size);
    ctx.add_function("bool", to_bool);
    ctx.add_function("dyn", dyn_of);
    ctx.add_function("string", string);
    ctx.add_function("format", super::celformat::format);
    ctx.add_function("sum", sum);
    ctx.add_function(NEGATE, negate);
    ctx.add_function("max", max);
    ctx.add_function("min", min);
    ctx.add_function("isSorted", is_sorted);
}

/// Runs kube-cel's own function `handed`, with `a`, `b`, ... bound to `args`.
pub(super) fn kube(handed: Handed, args: Vec<Value>) -> ResolveResult {
    KUBE.with(|kube| {
        let Some(program) = &kube.programs[handed as usize] else {
            return Err(ExecutionError::function_error(handed.name(), "does not compile"));
        };
        let mut ctx = kube.base.new_inner_scope();
        for (name, arg) in ["a", "b", "c"].into_iter().zip(args) {
            ctx.add_variable_from_value(name, arg);
        }
        program.execute(&ctx)
    })
}

/// `size`: a string's length is its number of code points, as in cel-go.
fn size(This(this): This<Value>) -> ResolveResult {
    let n = match &this {
        Value::String(s) => s.chars().count(),
        Value::Bytes(b) => b.len(),
        Value::List(l) => l.len(),
        Value::Map(m) => m.map.len(),
        _ => return Err(ExecutionError::NoSuchOverload),
    };
    Ok(Value::Int(i64::try_from(n).unwrap_or(i64::MAX)))
}

/// `bool()`: a bool, or a string Go's `strconv.ParseBool` reads.
fn to_bool(ftx: &FunctionContext, This(this): This<Value>) -> ResolveResult {
    match &this {
        Value::Bool(b) => Ok(Value::Bool(*b)),
        Value::String(s) => match s.as_str() {
            "1" | "t" | "T" | "TRUE" | "true" | "True" => Ok(Value::Bool(true)),
            "0" | "f" | "F" | "FALSE" | "false" | "False" => Ok(Value::Bool(false)),
            _ => Err(ftx.error(format!("type conversion error from 'string' to 'bool': {s}"))),
        },
        _ => Err(ExecutionError::NoSuchOverload),
    }
}

/// `dyn()`: the value itself (it only changes the type the checker sees).
fn dyn_of(This(this): This<Value>) -> ResolveResult {
    Ok(this)
}

/// `string()` as cel-go converts to a string.
fn string(This(this): This<Value>) -> ResolveResult {
    if let Value::Opaque(_) = this {
        return kube(Handed::String, vec![this]);
    }
    if let Value::Bytes(b) = &this
        && std::str::from_utf8(b).is_err()
    {
        return Err(ExecutionError::function_error("string", "invalid UTF-8 in bytes, cannot convert to string"));
    }
    text(&this).map(|s| Value::String(Arc::new(s))).ok_or(ExecutionError::NoSuchOverload)
}

/// cel-go's text of a scalar (`None` for what has no string conversion: lists, maps,
/// null, opaque values, bytes that are not UTF-8).
pub fn text(v: &Value) -> Option<String> {
    Some(match v {
        Value::String(s) => s.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::Float(f) => go_format_g(*f),
        Value::Bytes(b) => String::from_utf8(b.to_vec()).ok()?,
        // `strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"`; Rust's `{}` of a float is
        // that plain shortest decimal.
        Value::Duration(d) => format!("{}s", d.num_seconds() as f64 + f64::from(d.subsec_nanos()) / 1e9),
        // `time.RFC3339Nano`: trailing zeros of the fraction dropped, `Z` for UTC.
        Value::Timestamp(t) => {
            let nanos = t.format("%f").to_string();
            let fraction = nanos.trim_end_matches('0');
            let offset = t.format("%:z").to_string();
            let zone = if offset == "+00:00" { "Z" } else { offset.as_str() };
            let dot = if fraction.is_empty() { "" } else { "." };
            format!("{}{dot}{fraction}{zone}", t.format("%Y-%m-%dT%H:%M:%S"))
        }
        Value::List(_) | Value::Map(_) | Value::Function(..) | Value::Opaque(_) | Value::Null => return None,
    })
}

/// `sum()`: kube-cel's, with durations added and cel-go's overflow errors.
fn sum(This(this): This<Value>) -> ResolveResult {
    let Value::List(items) = &this else { return kube(Handed::Sum, vec![this]) };
    let overflow = |words: &str| ExecutionError::function_error("sum", words);
    let mut items = items.iter();
    let Some(first) = items.next() else { return kube(Handed::Sum, vec![this.clone()]) };
    items.try_fold(first.clone(), |total, item| match (total, item) {
        (Value::Int(a), Value::Int(b)) => a.checked_add(*b).map(Value::Int).ok_or_else(|| overflow("integer overflow")),
        (Value::UInt(a), Value::UInt(b)) => {
            a.checked_add(*b).map(Value::UInt).ok_or_else(|| overflow("unsigned integer overflow"))
        }
        (Value::Float(a), Value::Float(b)) => Ok(Value::Float(a + b)),
        (Value::Duration(a), Value::Duration(b)) => {
            a.checked_add(b).map(Value::Duration).ok_or_else(|| overflow("duration overflow"))
        }
        _ => Err(ExecutionError::NoSuchOverload),
    })
}

/// The function `-x` runs as (see `celmeter::runtime_name`).
pub(super) const NEGATE: &str = "@negate";

/// `-x`, failing as cel-go does where the negation does not fit.
fn negate(v: Value) -> ResolveResult {
    let overflow = |words: &str| ExecutionError::function_error("negate", words);
    match v {
        Value::Int(i) => i.checked_neg().map(Value::Int).ok_or_else(|| overflow("integer overflow")),
        Value::Float(f) => Ok(Value::Float(-f)),
        Value::Duration(d) => Ok(Value::Duration(-d)),
        _ => Err(ExecutionError::NoSuchOverload),
    }
}

/// `max()` of a list, as kube's `cmp` folds it: an item replaces the result when the
/// result compares below it; a comparison that fails (a NaN) replaces nothing.
fn max(This(this): This<Value>, Arguments(args): Arguments) -> ResolveResult {
    extreme("max", this, &args, Ordering::Less)
}

/// `min()` of a list, as [`max`], an item replacing a result that compares above it.
fn min(This(this): This<Value>, Arguments(args): Arguments) -> ResolveResult {
    extreme("min", this, &args, Ordering::Greater)
}

fn extreme(name: &str, this: Value, args: &[Value], replaced_when: Ordering) -> ResolveResult {
    let Value::List(items) = &this else { return Err(ExecutionError::NoSuchOverload) };
    if !args.is_empty() {
        return Err(ExecutionError::NoSuchOverload);
    }
    let mut items = items.iter();
    let first =
        items.next().ok_or_else(|| ExecutionError::function_error(name, format!("{name} called on empty list")))?;
    let chosen =
        items.fold(first, |result, next| if result.partial_cmp(next) == Some(replaced_when) { next } else { result });
    Ok(chosen.clone())
}

/// `isSorted()`: false only where an item compares above the next; kube passes over a
/// comparison that fails (a NaN), where kube-cel fails the rule.
fn is_sorted(This(this): This<Value>) -> ResolveResult {
    let Value::List(items) = &this else { return Err(ExecutionError::NoSuchOverload) };
    Ok(Value::Bool(items.windows(2).all(|pair| pair[0].partial_cmp(&pair[1]) != Some(Ordering::Greater))))
}

/// Evaluates `expr` in kube-cel's environment with `register`'s functions added: its value,
/// or its error as cel-go words it (a function's message alone).
#[cfg(test)]
pub(super) fn run_with(register: fn(&mut Context), expr: &str) -> Result<Value, String> {
    let mut ctx = Context::default().with_all();
    register(&mut ctx);
    Program::compile(expr).expect("compiles").execute(&ctx).map_err(|e| match e {
        ExecutionError::FunctionError { message, .. } => message,
        other => other.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(expr: &str) -> Value {
        let mut ctx = Context::default().with_all();
        register(&mut ctx);
        Program::compile(expr).expect("compiles").execute(&ctx).expect("runs")
    }

    fn string_of(expr: &str) -> String {
        match eval(expr) {
            Value::String(s) => s.to_string(),
            other => panic!("{expr}: not a string: {other:?}"),
        }
    }

    /// Rules the oracle accepts.
    #[test]
    fn sizes_conversions_and_sums_are_cel_gos() {
        for expr in [
            "!('é'.size() == 2)",
            "size('éé') == 2 && b'ab'.size() == 2 && [1].size() == 1",
            "bool('true') && bool('T') && !bool('False') && bool(true)",
            "dyn('a') == 'a'",
            "[duration('1s'), duration('2s')].sum() == duration('3s')",
            "[1, 2].sum() == 3 && [].sum() == 0",
            // kube passes over comparisons that fail.
            "[double('NaN'), 1.0].isSorted() && [2.0, double('NaN')].isSorted() && ![2, 1].isSorted()",
            "[3, 1, 2].min() == 1 && [3, 1, 2].max() == 3 && [1.0, double('NaN'), 0.5].min() == 0.5",
            "[1, 2.5, 2u].max() == 2.5 && ['b', 'a'].min() == 'a'",
        ] {
            assert_eq!(eval(expr), Value::Bool(true), "{expr}");
        }
    }

    #[test]
    fn bytes_that_are_not_utf8_have_no_text() {
        assert_eq!(
            run_with(register, "string(b'\\xff')"),
            Err("invalid UTF-8 in bytes, cannot convert to string".to_string())
        );
    }

    /// The oracle's texts (`string()` and `format`'s), from `messageExpression`s of failing
    /// rules.
    #[test]
    fn values_print_as_cel_go() {
        for (expr, oracle) in [
            ("string(true)", "true"),
            ("string(1e20)", "1e+20"),
            ("string(123456789.0)", "1.23456789e+08"),
            ("string(1e-7)", "1e-07"),
            ("string(5.0/0.0)", "+Inf"),
            ("string(duration('90m'))", "5400s"),
            ("string(duration('1.5s'))", "1.5s"),
            ("string(duration('-1ns'))", "-0.000000001s"),
            ("string(timestamp('2021-03-04T05:06:07.5+02:00'))", "2021-03-04T05:06:07.5+02:00"),
            ("string(timestamp('2021-03-04T05:06:07+00:00'))", "2021-03-04T05:06:07Z"),
            ("string(timestamp('2021-03-04T05:06:07.120Z'))", "2021-03-04T05:06:07.12Z"),
            ("string(ip('1.2.3.4'))", "1.2.3.4"),
            ("string(cidr('10.1.2.3/8'))", "10.1.2.3/8"),
            ("string(cidr('10.1.2.3/8').masked())", "10.0.0.0/8"),
            ("'%s'.format([1.0])", "1"),
            ("'%s'.format([1.5e20])", "1.5e+20"),
            ("'%s'.format([duration('90m')])", "5400s"),
            ("'%s'.format([duration('1ms')])", "0.001s"),
            ("'%s'.format([timestamp('2020-01-01T00:00:00Z')])", "2020-01-01T00:00:00Z"),
            ("'%s'.format([b'ab'])", "ab"),
            ("'%s'.format([-0.0])", "-0"),
            ("'%d and %s'.format([3, 2.5])", "3 and 2.5"),
            ("'%.2f'.format([2.5])", "2.50"),
        ] {
            assert_eq!(string_of(expr), oracle, "{expr}");
        }
    }

    #[test]
    fn empty_lists_fail_with_kubes_words() {
        let mut ctx = Context::default().with_all();
        register(&mut ctx);
        for (expr, oracle) in [("[].max()", "max called on empty list"), ("[].min()", "min called on empty list")] {
            match Program::compile(expr).expect("compiles").execute(&ctx) {
                Err(ExecutionError::FunctionError { message, .. }) => assert_eq!(message, oracle, "{expr}"),
                other => panic!("{expr}: {other:?}"),
            }
        }
        assert_eq!(eval("[1, 3, 2].max() == 3 && [2, 1].min() == 1"), Value::Bool(true));
    }
}
