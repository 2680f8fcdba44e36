//! The type conversions `int()`, `uint()`, `double()`, `duration()` and `timestamp()` as
//! cel-go makes them, with its words when they fail (kube quotes them: `type conversion
//! error from 'string' to 'int'`, `integer overflow`), where the `cel` crate says its own
//! (`string parse error: invalid digit found in string`) or converts what cel-go refuses
//! (`int(-9223372036854775808.0)`, durations in days).

use super::formats;
use kube_cel::cel::extractors::This;
use kube_cel::cel::functions::{self as cel_functions, time as cel_time};
use kube_cel::cel::objects::Value;
use kube_cel::cel::{Context, ExecutionError, FunctionContext, ResolveResult};

/// Adds the conversions to `ctx` (after the `cel` crate's, which they replace).
pub fn register(ctx: &mut Context) {
    ctx.add_function("int", int);
    ctx.add_function("uint", uint);
    ctx.add_function("double", double);
    ctx.add_function("duration", duration);
    ctx.add_function("timestamp", timestamp);
    ctx.add_function("bytes", bytes);
}

fn error(words: &str) -> ExecutionError {
    ExecutionError::function_error("conversion", words)
}

/// cel-go's `type conversion error from '<from>' to '<to>'`.
fn conversion_error(to: &str) -> ExecutionError {
    error(&format!("type conversion error from 'string' to '{to}'"))
}

const INT_OVERFLOW: &str = "integer overflow";
const UINT_OVERFLOW: &str = "unsigned integer overflow";

fn int(ftx: &FunctionContext, This(this): This<Value>) -> ResolveResult {
    match this {
        Value::String(s) => s.parse::<i64>().map(Value::Int).map_err(|_| conversion_error("int")),
        // `doubleToInt64Checked`: both ends excluded.
        Value::Float(f) if !(f > i64::MIN as f64 && f < i64::MAX as f64) => Err(error(INT_OVERFLOW)),
        Value::UInt(u) => i64::try_from(u).map(Value::Int).map_err(|_| error(INT_OVERFLOW)),
        // Seconds since the epoch; a duration's nanoseconds.
        Value::Timestamp(t) => Ok(Value::Int(t.timestamp())),
        Value::Duration(d) => d.num_nanoseconds().map(Value::Int).ok_or_else(|| error(INT_OVERFLOW)),
        other => cel_functions::int(ftx, This(other)),
    }
}

fn uint(ftx: &FunctionContext, This(this): This<Value>) -> ResolveResult {
    match this {
        // Go's `ParseUint` takes no sign.
        Value::String(s) if s.starts_with('+') => Err(conversion_error("uint")),
        Value::String(s) => s.parse::<u64>().map(Value::UInt).map_err(|_| conversion_error("uint")),
        Value::Float(f) if !(f >= 0.0 && f < u64::MAX as f64) => Err(error(UINT_OVERFLOW)),
        Value::Int(i) => u64::try_from(i).map(Value::UInt).map_err(|_| error(UINT_OVERFLOW)),
        other => cel_functions::uint(ftx, This(other)),
    }
}

fn double(ftx: &FunctionContext, This(this): This<Value>) -> ResolveResult {
    match this {
        Value::String(s) => go_parse_float(&s).map(Value::Float).ok_or_else(|| conversion_error("double")),
        other => cel_functions::double(ftx, This(other)),
    }
}

/// Go's `strconv.ParseFloat`: Rust's reading, with Go's digit separators (`1_000`) and
/// hexadecimal form (`0x1.4p3`), and no infinity but a written one (`1e400` is out of range).
fn go_parse_float(s: &str) -> Option<f64> {
    let plain: String = if s.contains('_') { underscores_ok(s).then(|| s.replace('_', ""))? } else { s.to_string() };
    let unsigned = plain.strip_prefix(['+', '-']).unwrap_or(&plain);
    let negative = plain.starts_with('-');
    let value = match unsigned.strip_prefix("0x").or_else(|| unsigned.strip_prefix("0X")) {
        Some(hex) => hex_float(hex)?,
        None if unsigned.starts_with(['i', 'I', 'n', 'N']) => return plain.parse().ok(),
        None if unsigned.bytes().all(|b| b.is_ascii_digit() || b"eE.+-".contains(&b)) => {
            unsigned.parse::<f64>().ok()?
        }
        None => return None,
    };
    value.is_finite().then_some(if negative { -value } else { value })
}

/// Go's `underscoreOK`: each `_` between two digits (or after a base prefix).
fn underscores_ok(s: &str) -> bool {
    let s = s.strip_prefix(['+', '-']).unwrap_or(s).as_bytes();
    let hex = s.len() >= 2 && s[0] == b'0' && matches!(s[1].to_ascii_lowercase(), b'b' | b'o' | b'x');
    let (mut saw, start) = if hex { (b'0', 2) } else { (b'^', 0) };
    let hex = hex && s[1].eq_ignore_ascii_case(&b'x');
    for &c in &s[start..] {
        if c.is_ascii_digit() || (hex && c.is_ascii_hexdigit()) {
            saw = b'0';
        } else if c == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
        } else if saw == b'_' {
            return false;
        } else {
            saw = b'!';
        }
    }
    saw != b'_'
}

/// A hexadecimal float after its `0x`: hex digits with an optional point, then `p` and a
/// binary exponent.
fn hex_float(s: &str) -> Option<f64> {
    let (mantissa, exponent) = s.split_once(['p', 'P'])?;
    let exponent: i32 = exponent.parse().ok()?;
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let mut value = 0f64;
    for c in int.chars().chain(frac.chars()) {
        value = value * 16.0 + f64::from(c.to_digit(16)?);
    }
    let scale = exponent.checked_sub(4 * i32::try_from(frac.len()).ok()?)?;
    Some(value * 2f64.powi(scale))
}

/// `duration(string)`: Go's `time.ParseDuration`.
fn duration(This(this): This<Value>) -> ResolveResult {
    match this {
        Value::String(s) => formats::parse_go_duration(&s)
            .and_then(|ns| i64::try_from(ns).ok())
            .map(|ns| Value::Duration(chrono::Duration::nanoseconds(ns)))
            .ok_or_else(|| conversion_error("google.protobuf.Duration")),
        d @ Value::Duration(_) => Ok(d),
        _ => Err(ExecutionError::NoSuchOverload),
    }
}

/// `timestamp(string)`: RFC 3339 as Go reads it, or seconds since the epoch.
fn timestamp(This(this): This<Value>) -> ResolveResult {
    match this {
        // cel-go reads the string with Go's `time.Parse(time.RFC3339, s)`, looser and
        // stricter than RFC 3339 in places: Go's reader decides, then the strict text is
        // converted.
        Value::String(s) => super::go_time::strict_rfc3339(&s)
            .ok_or(())
            .and_then(|strict| cel_time::timestamp(strict.into()).map_err(|_| ()))
            .map_err(|_| conversion_error("google.protobuf.Timestamp")),
        t @ Value::Timestamp(_) => Ok(t),
        Value::Int(secs) => chrono::DateTime::from_timestamp(secs, 0)
            .map(|t| Value::Timestamp(t.fixed_offset()))
            .ok_or_else(|| error("timestamp overflow")),
        _ => Err(ExecutionError::NoSuchOverload),
    }
}

/// `bytes()`: cel-go's identity on bytes too.
fn bytes(This(this): This<Value>) -> ResolveResult {
    match this {
        b @ Value::Bytes(_) => Ok(b),
        Value::String(s) => cel_functions::bytes(s),
        _ => Err(ExecutionError::NoSuchOverload),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(expr: &str) -> Result<Value, String> {
        super::super::celstd::run_with(register, expr)
    }

    /// The oracle's words (the rules took the values from the object).
    #[test]
    fn failed_conversions_say_cel_gos_words() {
        for (expr, oracle) in [
            ("int('x')", "type conversion error from 'string' to 'int'"),
            ("int(1e20)", "integer overflow"),
            ("int(-1e20)", "integer overflow"),
            ("uint(-1)", "unsigned integer overflow"),
            ("uint('x')", "type conversion error from 'string' to 'uint'"),
            ("double('x')", "type conversion error from 'string' to 'double'"),
            ("duration('bad')", "type conversion error from 'string' to 'google.protobuf.Duration'"),
            ("timestamp('bad')", "type conversion error from 'string' to 'google.protobuf.Timestamp'"),
            ("timestamp('2020-01-01t01:00:00z')", "type conversion error from 'string' to 'google.protobuf.Timestamp'"),
            ("uint('+1')", "type conversion error from 'string' to 'uint'"),
            ("double('1e400')", "type conversion error from 'string' to 'double'"),
            ("double('1__0')", "type conversion error from 'string' to 'double'"),
            ("double('_10')", "type conversion error from 'string' to 'double'"),
        ] {
            assert_eq!(eval(expr), Err(oracle.to_string()), "{expr}");
        }
    }

    #[test]
    fn conversions_that_succeed_are_unchanged() {
        assert_eq!(eval("int('-12')"), Ok(Value::Int(-12)));
        assert_eq!(eval("int(2.9)"), Ok(Value::Int(2)));
        assert_eq!(eval("int(timestamp('2021-01-01T00:00:00Z'))"), Ok(Value::Int(1_609_459_200)));
        assert_eq!(eval("int(duration('1s'))"), Ok(Value::Int(1_000_000_000)));
        assert_eq!(eval("uint(3)"), Ok(Value::UInt(3)));
        assert_eq!(eval("double('1.5')"), Ok(Value::Float(1.5)));
        for (text, want) in
            [("1_0", 10.0), ("0x1.4p3", 10.0), ("0x_1.4p3", 10.0), ("1e1_0", 1e10), ("-inf", f64::NEG_INFINITY)]
        {
            assert_eq!(eval(&format!("double('{text}')")), Ok(Value::Float(want)), "{text}");
        }
        assert_eq!(eval("duration('1h30m') == duration('90m')"), Ok(Value::Bool(true)));
        assert_eq!(eval("timestamp('2020-01-01T00:00:00Z') == timestamp(1577836800)"), Ok(Value::Bool(true)));
        // Go's readings (the oracle compiles these literals).
        assert_eq!(
            eval("timestamp('2020-01-01T00:00:00,5Z') == timestamp('2020-01-01T00:00:00.5Z')"),
            Ok(Value::Bool(true))
        );
        assert_eq!(
            eval("timestamp('2020-01-02T00:00:00+24:00') == timestamp('2020-01-01T00:00:00Z')"),
            Ok(Value::Bool(true))
        );
        assert_eq!(eval("bytes(b'a') == b'a' && bytes('a') == b'a'"), Ok(Value::Bool(true)));
    }
}
