//! kube's CEL quantity library over a model of apimachinery's `resource.Quantity`: a value
//! is either an `int64Amount` (an int64 times a power of ten) or an `inf.Dec`, chosen as
//! `ParseQuantity` chooses, and `Add`/`Sub` keep that choice as Go does. kube's answers
//! follow the representation, not the number: `isInteger()` is `AsInt64()` succeeding, so
//! `1.5Gi`, `1.0`, `1Ei` and `9223372036854775807` are no integers while `1k` is, and
//! `0.5 + 0.5` is none either. `asApproximateFloat()` reads the unscaled value times a
//! power of ten, after parsing rounded up to nanos and capped binary-SI amounts at 2^63-1.

use kube_cel::cel::extractors::This;
use kube_cel::cel::objects::{Opaque, Value};
use kube_cel::cel::{Context, ExecutionError, ResolveResult};
use std::cmp::Ordering;
use std::sync::Arc;

/// `resource.ParseQuantity`'s errors.
pub(super) const QUANTITY_FORMAT_WRONG: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
pub(super) const QUANTITY_NUMERIC: &str = "unable to parse numeric part of quantity";
pub(super) const QUANTITY_SUFFIX: &str = "unable to parse quantity's suffix";
const NOT_INTEGER: &str = "cannot convert value to integer";
const OVERFLOW: &str = "quantity overflow";

/// `int64Amount` (`value × 10^scale`) or `inf.Dec` (`unscaled × 10^-scale`).
#[derive(Debug, Clone, Copy)]
enum Amount {
    Int { value: i64, scale: i32 },
    Dec { unscaled: i128, scale: i32 },
}

/// A `kubernetes.Quantity` value.
#[derive(Debug, Clone, Copy)]
struct Quantity(Amount);

impl PartialEq for Quantity {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Quantity {}

impl Opaque for Quantity {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.Quantity"
    }
}

/// A number as `mantissa × 10^exponent`.
type Decimal = (i128, i32);

fn pow10(n: u32) -> Option<i128> {
    10i128.checked_pow(n)
}

/// Both numbers at the smaller exponent, or `None` when that overflows.
fn align((m1, e1): Decimal, (m2, e2): Decimal) -> Option<(i128, i128, i32)> {
    if e1 >= e2 {
        Some((m1.checked_mul(pow10(e1.abs_diff(e2))?)?, m2, e2))
    } else {
        Some((m1, m2.checked_mul(pow10(e2.abs_diff(e1))?)?, e1))
    }
}

fn compare(a: Decimal, b: Decimal) -> Ordering {
    let sign = a.0.signum().cmp(&b.0.signum());
    if sign != Ordering::Equal || a.0 == 0 {
        return sign;
    }
    match align(a, b) {
        Some((x, y, _)) => x.cmp(&y),
        // Scaling the one with the larger exponent overflowed, so its magnitude is larger.
        None => {
            let larger = if a.1 > b.1 { Ordering::Greater } else { Ordering::Less };
            if a.0 > 0 { larger } else { larger.reverse() }
        }
    }
}

impl Quantity {
    fn decimal(&self) -> Decimal {
        match self.0 {
            Amount::Int { value, scale } => (i128::from(value), scale),
            Amount::Dec { unscaled, scale } => (unscaled, -scale),
        }
    }

    fn cmp(&self, other: &Self) -> Ordering {
        compare(self.decimal(), other.decimal())
    }

    /// `AsInt64`: only an `int64Amount` with no negative scale that fits.
    fn as_int64(&self) -> Option<i64> {
        match self.0 {
            Amount::Int { value, scale: 0 } => Some(value),
            Amount::Int { value, scale } if scale > 0 => {
                value.checked_mul(10i64.checked_pow(u32::try_from(scale).ok()?)?)
            }
            _ => None,
        }
    }

    /// `AsApproximateFloat64`.
    fn as_approximate_float(&self) -> f64 {
        let (unscaled, exponent) = self.decimal();
        // i128 to f64 rounds to nearest, as big.Float's Float64 does.
        #[allow(clippy::cast_precision_loss)]
        let base = unscaled as f64;
        if exponent == 0 {
            return base;
        }
        // math.Pow10: exact, 0 below 1e-323 and +Inf past 1e308, as Rust's parse rounds.
        base * format!("1e{exponent}").parse::<f64>().unwrap_or(f64::NAN)
    }

    /// `Quantity.Add`: int64 amounts add as `int64Amount.Add` (at the smaller scale, not
    /// reduced), else as decimals.
    fn add(self, y: Quantity) -> Result<Quantity, ExecutionError> {
        if let (Amount::Int { value: a, scale: sa }, Amount::Int { value: b, scale: sb }) = (self.0, y.0)
            && let Some(sum) = int_add((a, sa), (b, sb))
        {
            return Ok(Quantity(Amount::Int { value: sum.0, scale: sum.1 }));
        }
        let (x, y, exponent) = align(self.decimal(), y.decimal()).ok_or_else(overflow)?;
        let unscaled = x.checked_add(y).ok_or_else(overflow)?;
        Ok(Quantity(Amount::Dec { unscaled, scale: -exponent }))
    }

    /// `Quantity.Sub`: `int64Amount.Sub` adds the negated value (Go's negation wraps).
    fn sub(self, y: Quantity) -> Result<Quantity, ExecutionError> {
        let negated = match y.0 {
            Amount::Int { value, scale } => Amount::Int { value: value.wrapping_neg(), scale },
            Amount::Dec { unscaled, scale } => Amount::Dec { unscaled: -unscaled, scale },
        };
        self.add(Quantity(negated))
    }
}

fn overflow() -> ExecutionError {
    ExecutionError::function_error("add", OVERFLOW)
}

/// `int64Amount.Add`, `None` when it overflows (Go then adds as decimals).
fn int_add((a, sa): (i64, i32), (b, sb): (i64, i32)) -> Option<(i64, i32)> {
    if b == 0 {
        return Some((a, sa));
    }
    if a == 0 {
        return Some((b, sb));
    }
    let scaled = |v: i64, by: u32| v.checked_mul(10i64.checked_pow(by)?);
    match sa.cmp(&sb) {
        Ordering::Equal => Some((a.checked_add(b)?, sa)),
        Ordering::Greater => Some((scaled(a, sa.abs_diff(sb))?.checked_add(b)?, sb)),
        Ordering::Less => Some((a.checked_add(scaled(b, sb.abs_diff(sa))?)?, sa)),
    }
}

/// `resource.ParseQuantity` of a string [`quantity_error`] takes.
fn parse(s: &str) -> Result<Quantity, ExecutionError> {
    let numeric = || ExecutionError::function_error("quantity", QUANTITY_NUMERIC);
    if s == "0" {
        return Ok(Quantity(Amount::Int { value: 0, scale: 0 }));
    }
    let negative = s.starts_with('-');
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    let digits = |t: &str| t.bytes().take_while(u8::is_ascii_digit).count();
    let int_len = digits(body);
    let num = body[..int_len].trim_start_matches('0');
    let num = if num.is_empty() { "0" } else { num };
    let rest = &body[int_len..];
    let (denom, suffix) = match rest.strip_prefix('.') {
        Some(after) => after.split_at(digits(after)),
        None => ("", rest),
    };
    let value_len = s.len() - suffix.len();
    let (binary, exponent) = match suffix {
        "" => (false, 0),
        "n" => (false, -9),
        "u" => (false, -6),
        "m" => (false, -3),
        "k" => (false, 3),
        "M" => (false, 6),
        "G" => (false, 9),
        "T" => (false, 12),
        "P" => (false, 15),
        "E" => (false, 18),
        "Ki" => (true, 10),
        "Mi" => (true, 20),
        "Gi" => (true, 30),
        "Ti" => (true, 40),
        "Pi" => (true, 50),
        "Ei" => (true, 60),
        e => (false, e[1..].parse::<i64>().map(|n| n as i32).map_err(|_| numeric())?),
    };
    let len = |t: &str| i32::try_from(t.len()).unwrap_or(i32::MAX);
    let (precision, mut scale, mantissa) = if binary {
        let precision = if denom.is_empty() { 15 - len(num) - (exponent as f32 * 3.0 / 10.0) as i32 - 1 } else { -1 };
        (precision, 0, 1i64 << exponent)
    } else {
        (18 - len(num) - len(denom), exponent, 1)
    };
    if precision >= 0 {
        scale -= len(denom);
        if scale >= -9 {
            let value: i64 = format!("{num}{denom}").parse().map_err(|_| numeric())?;
            if let Some(result) = value.checked_mul(mantissa) {
                let value = if negative { -result } else { result };
                return Ok(Quantity(Amount::Int { value, scale }));
            }
        }
    }
    // inf.Dec: the digits, the suffix applied, rounded up to nanos, binary SI capped.
    let number = s[..value_len].strip_prefix(['+', '-']).unwrap_or(&s[..value_len]);
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let mut unscaled: i128 = format!("{whole}{fraction}0").parse::<i128>().map_err(|_| numeric())? / 10;
    let mut dec_scale = len(fraction);
    if binary {
        unscaled = unscaled.checked_mul(1i128 << exponent).ok_or_else(overflow)?;
    } else {
        dec_scale -= exponent;
    }
    if unscaled != 0 {
        if dec_scale < 9 {
            unscaled = unscaled.checked_mul(pow10(dec_scale.abs_diff(9)).ok_or_else(overflow)?).ok_or_else(overflow)?;
        } else if dec_scale > 9 {
            let divisor = pow10(dec_scale.abs_diff(9)).ok_or_else(overflow)?;
            unscaled = unscaled / divisor + i128::from(unscaled % divisor != 0);
        }
        dec_scale = 9;
    }
    let max = i128::from(i64::MAX) * 1_000_000_000;
    if binary && dec_scale == 9 && unscaled > max {
        unscaled = max;
    }
    let unscaled = if negative { -unscaled } else { unscaled };
    Ok(Quantity(Amount::Dec { unscaled, scale: dec_scale }))
}

/// Why Go's `resource.ParseQuantity` refuses `s`, `None` when it takes it: its
/// `parseQuantityString` splits number and suffix (no digit is needed: `+` and `.` are
/// zero), the suffix must be one it interprets, and a number without digits fails only
/// where the fast integer path is not taken (`inf.Dec` then reads it).
pub(super) fn quantity_error(s: &str) -> Option<&'static str> {
    if s.is_empty() {
        return Some(QUANTITY_FORMAT_WRONG);
    }
    let b = s.as_bytes();
    let digits = |from: usize| from + b[from..].iter().take_while(|c| c.is_ascii_digit()).count();
    let mut pos = digits(usize::from(matches!(b[0], b'+' | b'-')));
    let mut denom_len = 0;
    if b.get(pos) == Some(&b'.') {
        let end = digits(pos + 1);
        denom_len = end - pos - 1;
        pos = end;
    }
    let number = &s[..pos];
    let suffix = &s[pos..];
    let letters = suffix.bytes().take_while(|c| b"eEinumkKMGTP".contains(c)).count();
    let after = &suffix[letters..];
    let after = after.strip_prefix(['+', '-']).unwrap_or(after);
    if !after.bytes().all(|c| c.is_ascii_digit()) {
        return Some(QUANTITY_FORMAT_WRONG);
    }
    let (binary, exponent) = match suffix {
        "" | "n" | "u" | "m" | "k" | "M" | "G" | "T" | "P" | "E" => (false, decimal_exponent(suffix)),
        "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" => (true, binary_exponent(suffix)),
        // Go reads the exponent as an int64 and keeps its low 32 bits.
        e if e.len() > 1 && e.starts_with(['e', 'E']) => match e[1..].parse::<i64>() {
            Ok(n) => (false, n as i32),
            Err(_) => return Some(QUANTITY_SUFFIX),
        },
        _ => return Some(QUANTITY_SUFFIX),
    };
    if number.bytes().any(|c| c.is_ascii_digit()) {
        return None;
    }
    // No digit: the number is `0` (one digit) unless `inf.Dec` has to read it. Go's binary
    // precision is `15 - len(num) - exponent*3/10 - 1`, `len(num)` being 1 here.
    let binary_precision = 13 - (exponent as f32 * 3.0 / 10.0) as i32;
    let fast = if binary { denom_len == 0 && binary_precision >= 0 } else { exponent >= -9 };
    (!fast).then_some(QUANTITY_NUMERIC)
}

fn decimal_exponent(suffix: &str) -> i32 {
    match suffix {
        "n" => -9,
        "u" => -6,
        "m" => -3,
        "k" => 3,
        "M" => 6,
        "G" => 9,
        "T" => 12,
        "P" => 15,
        "E" => 18,
        _ => 0,
    }
}

fn binary_exponent(suffix: &str) -> i32 {
    10 * ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"].iter().position(|x| *x == suffix).map_or(0, |i| i as i32 + 1)
}

/// Adds the functions to `ctx` (after kube-cel's, which they replace).
pub fn register(ctx: &mut Context) {
    ctx.add_function("quantity", quantity);
    ctx.add_function("isQuantity", |s: Arc<String>| quantity_error(&s).is_none());
    ctx.add_function("isInteger", |This(q): This<Value>| {
        Ok::<_, ExecutionError>(Value::Bool(of(&q)?.as_int64().is_some()))
    });
    ctx.add_function("asInteger", |This(q): This<Value>| {
        of(&q)?.as_int64().map(Value::Int).ok_or_else(|| ExecutionError::function_error("asInteger", NOT_INTEGER))
    });
    ctx.add_function("asApproximateFloat", |This(q): This<Value>| {
        Ok::<_, ExecutionError>(Value::Float(of(&q)?.as_approximate_float()))
    });
    ctx.add_function("sign", |This(q): This<Value>| {
        Ok::<_, ExecutionError>(Value::Int(of(&q)?.decimal().0.signum() as i64))
    });
    ctx.add_function("add", |This(q): This<Value>, y: Value| wrap(of(&q)?.add(operand(&y)?)));
    ctx.add_function("sub", |This(q): This<Value>, y: Value| wrap(of(&q)?.sub(operand(&y)?)));
    ctx.add_function("compareTo", |This(q): This<Value>, y: Value| {
        Ok::<_, ExecutionError>(Value::Int(of(&q)?.cmp(&of(&y)?) as i64))
    });
    ctx.add_function("isLessThan", |This(q): This<Value>, y: Value| {
        Ok::<_, ExecutionError>(Value::Bool(of(&q)?.cmp(&of(&y)?) == Ordering::Less))
    });
    ctx.add_function("isGreaterThan", |This(q): This<Value>, y: Value| {
        Ok::<_, ExecutionError>(Value::Bool(of(&q)?.cmp(&of(&y)?) == Ordering::Greater))
    });
}

fn quantity(s: Arc<String>) -> ResolveResult {
    if let Some(words) = quantity_error(&s) {
        return Err(ExecutionError::function_error("quantity", words));
    }
    wrap(parse(&s))
}

fn wrap(q: Result<Quantity, ExecutionError>) -> ResolveResult {
    Ok(Value::Opaque(Arc::new(q?)))
}

fn of(v: &Value) -> Result<Quantity, ExecutionError> {
    match v {
        Value::Opaque(o) => o.downcast_ref::<Quantity>().copied().ok_or(ExecutionError::NoSuchOverload),
        _ => Err(ExecutionError::NoSuchOverload),
    }
}

/// A quantity, or an int as `resource.NewQuantity(i, DecimalExponent)`.
fn operand(v: &Value) -> Result<Quantity, ExecutionError> {
    match v {
        Value::Int(i) => Ok(Quantity(Amount::Int { value: *i, scale: 0 })),
        other => of(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::celstd::run_with;

    fn text(expr: &str) -> String {
        match run_with(register, expr) {
            Ok(Value::Bool(b)) => b.to_string(),
            Ok(Value::Int(i)) => i.to_string(),
            Ok(Value::Float(f)) => crate::representation::gofmt::go_format_g(f),
            Ok(other) => format!("{other:?}"),
            Err(e) => format!("error: {e}"),
        }
    }

    /// kube-apiserver 1.32's answers (messageExpressions of failing rules), by quantity:
    /// isInteger, asInteger, asApproximateFloat, add('1').isInteger, add(1).asApproximateFloat,
    /// sub('0.5').isInteger, sub(1).asInteger, compareTo('1.5Gi'), add(self).asInteger.
    #[test]
    fn quantities_answer_as_kubes_resource_quantity() {
        let e = "error: cannot convert value to integer";
        let cases: &[(&str, [&str; 9])] = &[
            ("1.5Gi", ["false", e, "1.610612736e+09", "false", "1.610612737e+09", "false", e, "0", e]),
            (
                "1Gi",
                [
                    "true",
                    "1073741824",
                    "1.073741824e+09",
                    "true",
                    "1.073741825e+09",
                    "false",
                    "1073741823",
                    "-1",
                    "2147483648",
                ],
            ),
            ("1.5", ["false", e, "1.5", "false", "2.5", "false", e, "-1", e]),
            ("1500m", ["false", e, "1.5", "false", "2.5", "false", e, "-1", e]),
            ("1k", ["true", "1000", "1000", "true", "1001", "false", "999", "-1", "2000"]),
            ("1e3", ["true", "1000", "1000", "true", "1001", "false", "999", "-1", "2000"]),
            ("0.1", ["false", e, "0.1", "false", "1.1", "false", e, "-1", e]),
            (
                "9223372036854775807",
                ["false", e, "9.223372036854776e+18", "false", "9.223372036854776e+18", "false", e, "1", e],
            ),
            (
                "9223372036854775808",
                ["false", e, "9.223372036854776e+18", "false", "9.223372036854776e+18", "false", e, "1", e],
            ),
            (
                "-9223372036854775808",
                ["false", e, "-9.223372036854776e+18", "false", "-9.223372036854776e+18", "false", e, "-1", e],
            ),
            ("1Ei", ["false", e, "1.152921504606847e+18", "false", "1.152921504606847e+18", "false", e, "1", e]),
            ("8Ei", ["false", e, "9.223372036854776e+18", "false", "9.223372036854776e+18", "false", e, "1", e]),
            ("0", ["true", "0", "0", "true", "1", "false", "-1", "-1", "0"]),
            ("-1.5Gi", ["false", e, "-1.610612736e+09", "false", "-1.610612735e+09", "false", e, "-1", e]),
            ("0.5Ki", ["false", e, "512", "false", "513", "false", e, "-1", e]),
            ("1m", ["false", e, "0.001", "false", "1.0010000000000001", "false", e, "-1", e]),
            ("1n", ["false", e, "1e-09", "false", "1.000000001", "false", e, "-1", e]),
            ("12e-1", ["false", e, "1.2000000000000002", "false", "2.2", "false", e, "-1", e]),
            ("1.0", ["false", e, "1", "false", "2", "false", e, "-1", e]),
            ("1024m", ["false", e, "1.024", "false", "2.024", "false", e, "-1", e]),
            ("10Ei", ["false", e, "9.223372036854776e+18", "false", "9.223372036854776e+18", "false", e, "1", e]),
            ("1.5e-9", ["false", e, "2e-09", "false", "1.0000000020000002", "false", e, "-1", e]),
            ("100Pi", ["false", e, "1.125899906842624e+17", "false", "1.125899906842624e+17", "false", e, "1", e]),
            ("2.5", ["false", e, "2.5", "false", "3.5", "false", e, "-1", e]),
            ("-0.5", ["false", e, "-0.5", "false", "0.5", "false", e, "-1", e]),
        ];
        let exprs = [
            "quantity(q).isInteger()",
            "quantity(q).asInteger()",
            "quantity(q).asApproximateFloat()",
            "quantity(q).add(quantity('1')).isInteger()",
            "quantity(q).add(1).asApproximateFloat()",
            "quantity(q).sub(quantity('0.5')).isInteger()",
            "quantity(q).sub(1).asInteger()",
            "quantity(q).compareTo(quantity('1.5Gi'))",
            "quantity(q).add(quantity(q)).asInteger()",
        ];
        let mut wrong = Vec::new();
        for (q, answers) in cases {
            for (expr, kube) in exprs.iter().zip(answers) {
                let expr = expr.replace("(q)", &format!("('{q}')"));
                let ours = text(&expr);
                if ours != *kube {
                    wrong.push(format!("{expr}: kube {kube}, ours {ours}"));
                }
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    #[test]
    fn bad_quantities_fail_with_kubes_words() {
        for (expr, oracle) in [
            ("quantity('bad')", QUANTITY_FORMAT_WRONG),
            ("quantity(' 1')", QUANTITY_FORMAT_WRONG),
            ("quantity('1.2.3')", QUANTITY_FORMAT_WRONG),
            ("quantity('..5')", QUANTITY_FORMAT_WRONG),
            ("quantity('K')", QUANTITY_SUFFIX),
            ("quantity('.e-20')", QUANTITY_NUMERIC),
            ("quantity('1Ki5')", QUANTITY_SUFFIX),
        ] {
            assert_eq!(run_with(register, expr).err().as_deref(), Some(oracle), "{expr}");
        }
        let ok = "isQuantity('1Ki') && !isQuantity(' 1') && quantity('1.5Gi').isGreaterThan(quantity('1G')) \
                  && quantity('1k') == quantity('1000') && quantity('0.5').isLessThan(quantity('1'))";
        assert_eq!(run_with(register, ok), Ok(Value::Bool(true)));
    }
}
