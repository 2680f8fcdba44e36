//! `<string>.format(<list>)` as kube 1.32 runs it (cel-go 0.22's strings extension, whose
//! floats go through `golang.org/x/text`'s printer for the `en` locale): `%f` groups
//! thousands (`1,234.567800`) and prints infinities as `∞`; `%e` writes
//! `1.234568 × 10⁰³` (narrow no-break spaces, superscript exponent of two digits at
//! least) and reads its "precision" as a width (`%.20e` pads to 20 characters); `%x`,
//! `%o` and `%b` of a negative int keep the sign (`-ff`); `%s` of a list or map prints
//! CEL literals (`[1.500000, "x", b"ab", duration("1s")]`, keys sorted).
//!
//! The wording of every failure is cel-go's; the checker refuses most of them before a
//! rule runs, so they show only on values of dynamic type.

use super::celstd::text;
use super::celtypes::{type_name, type_value_name};
use crate::field::go_quote;
use kube_cel::cel::extractors::This;
use kube_cel::cel::objects::{Key, Value};
use kube_cel::cel::{ExecutionError, ResolveResult};
use std::sync::Arc;

/// How many fraction digits `%f` and `%e` print unless told.
const DEFAULT_PRECISION: usize = 6;

fn error(words: String) -> ExecutionError {
    ExecutionError::function_error("format", words)
}

/// `format`: the string with each clause replaced by its argument's text.
pub fn format(This(this): This<Arc<String>>, args: Value) -> ResolveResult {
    let Value::List(args) = args else { return Err(ExecutionError::NoSuchOverload) };
    let bytes = this.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let (mut i, mut arg) = (0, 0);
    while i < bytes.len() {
        if bytes[i] != b'%' {
            out.push(bytes[i]);
            i += 1;
            continue;
        }
        if bytes.get(i + 1) == Some(&b'%') {
            out.push(b'%');
            i += 2;
            continue;
        }
        let value = args.get(arg).ok_or_else(|| error(format!("index {arg} out of range")))?;
        if i + 1 >= bytes.len() {
            return Err(error("unexpected end of string".into()));
        }
        let (read, clause) =
            parse_clause(&bytes[i + 1..]).map_err(|e| error(format!("could not parse formatting clause: {e}")))?;
        let text = clause.apply(value).map_err(|e| error(format!("error during formatting: {e}")))?;
        out.extend_from_slice(text.as_bytes());
        i += 1 + read;
        arg += 1;
    }
    // Whole clauses and ASCII bytes replaced whole: still UTF-8.
    Ok(Value::String(Arc::new(String::from_utf8_lossy(&out).into_owned())))
}

/// One formatting clause: its verb and precision.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Clause {
    String,
    Decimal,
    Fixed(usize),
    /// The "precision" cel-go passes to the printer as a width.
    Scientific(Option<usize>),
    Binary,
    Hex {
        upper: bool,
    },
    Octal,
}

/// The clause at the start of `s` (after `%`) and how many bytes it takes.
fn parse_clause(s: &[u8]) -> Result<(usize, Clause), String> {
    let mut i = 0;
    let mut precision = None;
    if s.first() == Some(&b'.') {
        i = 1;
        let digits = s[1..].iter().take_while(|b| b.is_ascii_digit()).count();
        if 1 + digits >= s.len() {
            return Err("error while parsing precision: could not find end of precision specifier".into());
        }
        let text = std::str::from_utf8(&s[1..1 + digits]).unwrap_or_default();
        let parsed = text.parse::<usize>().map_err(|_| {
            format!(
                "error while parsing precision: error while converting precision to integer: strconv.Atoi: parsing {}: {}",
                go_quote(text),
                if text.is_empty() { "invalid syntax" } else { "value out of range" }
            )
        })?;
        precision = Some(parsed);
        i += digits;
    }
    let verb = s[i];
    let clause = match verb {
        b's' => Clause::String,
        b'd' => Clause::Decimal,
        b'f' => Clause::Fixed(precision.unwrap_or(DEFAULT_PRECISION)),
        b'e' => Clause::Scientific(Some(precision.unwrap_or(DEFAULT_PRECISION))),
        b'b' => Clause::Binary,
        b'x' | b'X' => Clause::Hex { upper: verb == b'X' },
        b'o' => Clause::Octal,
        // Go's `rune(formatStr[i])`: one byte as a code point.
        other => return Err(format!("unrecognized formatting clause {}", go_quote(&char::from(other).to_string()))),
    };
    Ok((i + 1, clause))
}

impl Clause {
    fn apply(self, v: &Value) -> Result<String, String> {
        let name = type_name(v);
        match self {
            Clause::String => format_string(v),
            Clause::Decimal => {
                decimal(v).ok_or_else(|| format!("decimal clause can only be used on integers, was given {name}"))
            }
            Clause::Fixed(precision) => float_arg(v)
                .map(|f| fixed(f, precision))
                .ok_or_else(|| format!("fixed-point clause can only be used on doubles, was given {name}")),
            Clause::Scientific(width) => float_arg(v)
                .map(|f| pad(scientific(f), width.unwrap_or(0)))
                .ok_or_else(|| format!("scientific clause can only be used on doubles, was given {name}")),
            Clause::Binary => match v {
                Value::Int(i) => Ok(signed(*i, |u| format!("{u:b}"))),
                Value::UInt(u) => Ok(format!("{u:b}")),
                Value::Bool(b) => Ok(if *b { "1" } else { "0" }.into()),
                _ => Err(format!("only integers and bools can be formatted as binary, was given {name}")),
            },
            Clause::Hex { upper } => {
                let hex = match v {
                    Value::Int(i) => signed(*i, |u| format!("{u:x}")),
                    Value::UInt(u) => format!("{u:x}"),
                    Value::String(s) => s.bytes().map(|b| format!("{b:02x}")).collect(),
                    Value::Bytes(b) => b.iter().map(|b| format!("{b:02x}")).collect(),
                    _ => {
                        return Err(format!(
                            "only integers, byte buffers, and strings can be formatted as hex, was given {name}"
                        ));
                    }
                };
                Ok(if upper { hex.to_uppercase() } else { hex })
            }
            Clause::Octal => match v {
                Value::Int(i) => Ok(signed(*i, |u| format!("{u:o}"))),
                Value::UInt(u) => Ok(format!("{u:o}")),
                _ => Err(format!("octal clause can only be used on integers, was given {name}")),
            },
        }
    }
}

/// Go's `%b`/`%x`/`%o` of an int64: the sign, then the magnitude.
fn signed(i: i64, digits: impl Fn(u64) -> String) -> String {
    let sign = if i < 0 { "-" } else { "" };
    format!("{sign}{}", digits(i.unsigned_abs()))
}

fn decimal(v: &Value) -> Option<String> {
    match v {
        Value::Int(i) => Some(i.to_string()),
        Value::UInt(u) => Some(u.to_string()),
        _ => None,
    }
}

/// A double, or one of the strings cel-go takes for the non-finite ones.
fn float_arg(v: &Value) -> Option<f64> {
    match v {
        Value::Float(f) => Some(*f),
        Value::String(s) => match s.as_str() {
            "NaN" => Some(f64::NAN),
            "Infinity" => Some(f64::INFINITY),
            "-Infinity" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        _ => None,
    }
}

/// x/text's rendering of a non-finite number, or `None` for a finite one.
fn special(f: f64) -> Option<String> {
    if f.is_nan() {
        Some("NaN".into())
    } else if f.is_infinite() {
        Some(if f < 0.0 { "-∞" } else { "∞" }.into())
    } else {
        None
    }
}

/// `%.<precision>f` in the `en` locale: correctly rounded, thousands grouped, and no sign
/// on a negative zero (the printer signs only what is below zero).
fn fixed(f: f64, precision: usize) -> String {
    if let Some(s) = special(f) {
        return s;
    }
    let digits = format!("{:.precision$}", f.abs());
    let (int, frac) = digits.split_once('.').map_or((digits.as_str(), None), |(i, f)| (i, Some(f)));
    let sign = if f < 0.0 { "-" } else { "" };
    match frac {
        Some(frac) => format!("{sign}{}.{frac}", group(int)),
        None => format!("{sign}{}", group(int)),
    }
}

/// Digits grouped by three with commas.
fn group(int: &str) -> String {
    let mut out = String::with_capacity(int.len() + int.len() / 3);
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `%e` in the `en` locale: seven significant digits, then `× 10` and the exponent in
/// superscript.
fn scientific(f: f64) -> String {
    if let Some(s) = special(f) {
        return s;
    }
    let text = format!("{:.6e}", f.abs());
    let (mantissa, exponent) = text.split_once('e').unwrap_or((text.as_str(), "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let sign = if f < 0.0 { "-" } else { "" };
    let minus = if exponent < 0 { "\u{207b}" } else { "" };
    let digits: String = format!("{:02}", exponent.unsigned_abs()).chars().map(superscript).collect();
    format!("{sign}{mantissa}\u{202f}×\u{202f}10{minus}{digits}")
}

fn superscript(digit: char) -> char {
    match digit {
        '1' => '¹',
        '2' => '²',
        '3' => '³',
        d => char::from_u32(0x2070 + d.to_digit(10).unwrap_or(0)).unwrap_or('⁰'),
    }
}

/// Spaces before `s` up to `width` characters.
fn pad(s: String, width: usize) -> String {
    let count = s.chars().count();
    if count >= width { s } else { format!("{}{s}", " ".repeat(width - count)) }
}

/// `%s`: a scalar's string conversion, a list's or map's CEL literal.
fn format_string(v: &Value) -> Result<String, String> {
    match v {
        Value::List(items) => {
            let members = items.iter().map(literal).collect::<Result<Vec<_>, _>>()?;
            Ok(format!("[{}]", members.join(", ")))
        }
        Value::Map(map) => {
            let mut entries = map
                .map
                .iter()
                .map(|(k, v)| Ok((key_literal(k), literal(v)?)))
                .collect::<Result<Vec<(String, String)>, String>>()?;
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            let entries: Vec<String> = entries.into_iter().map(|(k, v)| format!("{k}:{v}")).collect();
            Ok(format!("{{{}}}", entries.join(", ")))
        }
        Value::Null => Ok("null".into()),
        // cel-go quotes the conversion's error value as the argument it could not convert.
        Value::Bytes(b) => String::from_utf8(b.to_vec()).map_err(|_| {
            r#"could not convert argument "invalid UTF-8 in bytes, cannot convert to string" to string"#.into()
        }),
        other => type_value_name(other)
            .map(str::to_string)
            .or_else(|| text(other))
            .ok_or_else(|| {
                format!(
                    "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given {}",
                    type_name(other)
                )
            }),
    }
}

/// A list member or map value as cel-go writes it inside `%s` of a list or map.
fn literal(v: &Value) -> Result<String, String> {
    Ok(match v {
        Value::String(s) => go_quote(s),
        Value::Bytes(_) => format!("b{}", go_quote(&format_string(v)?)),
        Value::Float(f) if f.is_finite() => format!("{f:.DEFAULT_PRECISION$}"),
        Value::Float(f) => go_quote(&go_float_fixed(*f)),
        Value::Timestamp(_) => format!("timestamp({})", go_quote(&format_string(v)?)),
        Value::Duration(_) => format!("duration({})", go_quote(&format_string(v)?)),
        other => format_string(other)?,
    })
}

/// Go's `%.6f` of a non-finite double.
fn go_float_fixed(f: f64) -> String {
    if f.is_nan() {
        "NaN".into()
    } else if f < 0.0 {
        "-Inf".into()
    } else {
        "+Inf".into()
    }
}

fn key_literal(k: &Key) -> String {
    match k {
        Key::String(s) => go_quote(s),
        Key::Int(i) => i.to_string(),
        Key::Uint(u) => u.to_string(),
        Key::Bool(b) => b.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube_cel::KubeCelExt;
    use kube_cel::cel::{Context, Program};

    fn formatted(expr: &str) -> Result<String, String> {
        let mut ctx = Context::default().with_all();
        super::super::celtypes::register(&mut ctx);
        ctx.add_function("format", format);
        match Program::compile(expr).expect("compiles").execute(&ctx) {
            Ok(Value::String(s)) => Ok(s.to_string()),
            Ok(other) => panic!("{expr}: {other:?}"),
            Err(ExecutionError::FunctionError { message, .. }) => Err(message),
            Err(other) => Err(other.to_string()),
        }
    }

    /// The oracle's texts, from `messageExpression`s of failing rules.
    #[test]
    fn clauses_print_as_kube_prints_them() {
        for (expr, oracle) in [
            ("'%e'.format([1234.5678])", "1.234568\u{202f}×\u{202f}10⁰³"),
            ("'%e'.format([0.0])", "0.000000\u{202f}×\u{202f}10⁰⁰"),
            ("'%e'.format([-1.5e-10])", "-1.500000\u{202f}×\u{202f}10⁻¹⁰"),
            ("'%e'.format([1e100])", "1.000000\u{202f}×\u{202f}10¹⁰⁰"),
            ("'%.3e'.format([1234.5678])", "1.234568\u{202f}×\u{202f}10⁰³"),
            ("'%.0e'.format([1234.5678])", "1.234568\u{202f}×\u{202f}10⁰³"),
            ("'%.2e'.format([9.999])", "9.999000\u{202f}×\u{202f}10⁰⁰"),
            ("'%e'.format([123456789012.0])", "1.234568\u{202f}×\u{202f}10¹¹"),
            ("'%e'.format([-0.0])", "0.000000\u{202f}×\u{202f}10⁰⁰"),
            // Padded to the width 6 (the message trims the spaces; a rule's comparison sees them).
            ("'%e'.format([double('NaN')])", "   NaN"),
            ("'%e'.format([double('Inf')])", "     ∞"),
            ("'%e'.format([double('-Inf')])", "    -∞"),
            ("'%f'.format([1234.5678])", "1,234.567800"),
            ("'%f'.format([1e20])", "100,000,000,000,000,000,000.000000"),
            ("'%f'.format([double('-Inf')])", "-∞"),
            ("'%f'.format([double('NaN')])", "NaN"),
            ("'%.0f'.format([2.5])", "2"),
            ("'%.3f'.format([1.0005])", "1.000"),
            ("'%.3f'.format([-0.0])", "0.000"),
            ("'%.10f'.format([0.1])", "0.1000000000"),
            ("'%x'.format([-255])", "-ff"),
            ("'%X'.format([255])", "FF"),
            ("'%x'.format(['hello'])", "68656c6c6f"),
            ("'%X'.format([b'\\x01\\xff'])", "01FF"),
            ("'%o'.format([-8])", "-10"),
            ("'%b'.format([-5])", "-101"),
            ("'%b'.format([true])", "1"),
            ("'%d'.format([1u])", "1"),
            ("'%s'.format([[1.5, 'x', true, null]])", r#"[1.500000, "x", true, null]"#),
            ("'%s'.format([{'b': 'x', 'a': [1]}])", r#"{"a":[1], "b":"x"}"#),
            ("'%s'.format([{1: 'x', 2: 'y'}])", r#"{1:"x", 2:"y"}"#),
            (
                "'%s'.format([[b'ab', duration('1s'), timestamp('2020-01-01T00:00:00Z')]])",
                r#"[b"ab", duration("1s"), timestamp("2020-01-01T00:00:00Z")]"#,
            ),
            ("'%s'.format([type(1)])", "int"),
            ("'%s'.format([[type(1)]])", "[int]"),
            ("'%s'.format([null])", "null"),
            ("'%s'.format([1e21])", "1e+21"),
            ("'%.2s'.format(['abc'])", "abc"),
            ("'%% %d%%'.format([3])", "% 3%"),
        ] {
            assert_eq!(formatted(expr), Ok(oracle.to_string()), "{expr}");
        }
    }

    #[test]
    fn failures_say_cel_gos_words() {
        assert_eq!(
            formatted("'%f'.format(['1.5'])"),
            Err("error during formatting: fixed-point clause can only be used on doubles, was given string".into())
        );
        assert_eq!(
            formatted("'%s'.format([b'\\xff'])"),
            Err(r#"error during formatting: could not convert argument "invalid UTF-8 in bytes, cannot convert to string" to string"#.into())
        );
        assert_eq!(formatted("'%d %d'.format([1])"), Err("index 1 out of range".into()));
    }

    #[test]
    fn a_scientific_precision_is_a_width() {
        assert_eq!(pad(scientific(1234.5678), 20), format!("     {}", scientific(1234.5678)));
    }
}
