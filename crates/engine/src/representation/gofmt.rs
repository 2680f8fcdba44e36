//! Values printed as Go prints them: `fmt.Fprint` (what a string printer column shows),
//! `encoding/json` (objects and arrays in cells, float cells in Table JSON). Go and Rust
//! disagree on float text (`1e+06` vs `1000000`, `1` vs `1.0`), and these strings end up in
//! `kubectl get` output, so they follow Go's rules. Go's float formatting is
//! [`crate::go_json`]'s, re-exported here: the schema's messages, OpenAPI documents and
//! Tables all use it.

pub use crate::go_json::go_json_float;
use crate::go_json::{go_exponent, mantissa_exponent};
use serde_json::Value;

/// The text client-go's `JSONPath.PrintResults` writes for one value: JSON for objects
/// and arrays, `fmt.Fprint` for the rest (`<no value>` for null). A number past int64 was
/// decoded as a float64, and prints as one (`9.223372036854776e+18`).
pub fn print_text(v: &Value) -> String {
    match v {
        Value::Null => "<no value>".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::String(s) => s.clone(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.to_string(),
            None => go_format_g(n.as_f64().unwrap_or(0.0)),
        },
        Value::Array(_) | Value::Object(_) => go_json(v),
    }
}

/// `json.Marshal` of a decoded value: keys sorted, `<`, `>` and `&` escaped, floats as
/// Go writes them ([`crate::go_json`], which writes stored objects and answers too).
pub fn go_json(v: &Value) -> String {
    // The encoder writes UTF-8 only.
    String::from_utf8(crate::go_json::to_vec(v)).unwrap_or_default()
}

/// A value as [`go_json`] writes it, or, not `html_safe`, with strings as
/// [`write_json_string`] leaves them (kube-openapi's swagger 2.0 encoder).
pub fn write_json_value(v: &Value, html_safe: bool, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_json_number(n, out),
        Value::String(s) => write_json_string(s, html_safe, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json_value(item, html_safe, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json_string(k, html_safe, out);
                out.push(':');
                write_json_value(item, html_safe, out);
            }
            out.push('}');
        }
    }
}

/// A number as Go's `encoding/json` writes it: integers as they are, floats Go's way.
pub fn write_json_number(n: &serde_json::Number, out: &mut String) {
    match (n.as_i64(), n.as_u64()) {
        (Some(i), _) => out.push_str(&i.to_string()),
        (None, Some(u)) => out.push_str(&u.to_string()),
        _ => out.push_str(&go_json_float(n.as_f64().unwrap_or(0.0))),
    }
}

/// A JSON string as Go's encoder escapes it: `<`, `>`, `&`, U+2028 and U+2029 as `\u`
/// escapes, the short escapes for `\b \f \n \r \t`, `\u00XX` for other control characters.
pub fn write_go_string(s: &str, out: &mut String) {
    write_json_string(s, true, out);
}

/// A JSON string escaped as [`write_go_string`] does, or, not `html_safe`, with `<`, `>`,
/// `&`, U+2028 and U+2029 as they are (kube-openapi's swagger 2.0 encoder).
pub fn write_json_string(s: &str, html_safe: bool, out: &mut String) {
    // Most strings need no escape at all: copy them whole.
    let special = |b: u8| b < 0x20 || b == b'"' || b == b'\\' || (html_safe && matches!(b, b'<' | b'>' | b'&' | 0xe2));
    if !s.bytes().any(special) {
        out.reserve(s.len() + 2);
        out.push('"');
        out.push_str(s);
        out.push('"');
        return;
    }
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            // Go 1.22+ (kube 1.32 is built with 1.23) writes these two short forms.
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' if html_safe => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `fmt.Fprint` of a float64 (`%v`, i.e. `%g` with the shortest representation).
pub fn go_format_g(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf".into() } else { "-Inf".into() };
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0".into() } else { "0".into() };
    }
    // strconv's %g with the shortest precision switches to exponent form outside
    // 1e-4 <= |f| < 1e6 (precision 6 decides when the precision is the shortest).
    let (_, exp) = mantissa_exponent(f);
    if !(-4..6).contains(&exp) {
        return go_exponent(f, 2);
    }
    format!("{f}")
}

/// A float64 as the number Go's encoder writes and kube's decoder reads back: a whole one
/// within int64's range has no fraction (`2`, not `2.0`; `-0` is `0`), so it reads back
/// as an integer; floats past int64 stay floats.
pub fn go_float64(f: f64) -> Value {
    // i64::MAX as f64 rounds up to 2^63, which does not fit: stay below it.
    if f.fract() != 0.0 || f.abs() >= 9.2e18 {
        return Value::from(f);
    }
    // Go writes the shortest digits that read back as `f`, then zeros (2^56 is
    // `72057594037927940`), and that text is the integer read back: Rust's `{}` writes
    // the same digits. Below 2^53 they are the exact integer.
    format!("{f}").parse::<i64>().map_or_else(|_| Value::from(f as i64), Value::from)
}

/// Every number under `v` as kube holds it once stored: floats as Go's encoder writes them
/// ([`go_float64`]), and integers past int64, which kube's decoder reads as float64. What
/// storing a value kube decoded (`2.0` stays a float64 until then) and converting YAML to
/// JSON make of numbers.
pub fn integral_floats(v: &mut Value) {
    match v {
        Value::Number(n) if n.as_i64().is_none() => *v = go_float64(n.as_f64().unwrap_or(0.0)),
        Value::Array(items) => items.iter_mut().for_each(integral_floats),
        Value::Object(map) => map.values_mut().for_each(integral_floats),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn whole_floats_become_integers() {
        let mut v = json!({"a": 2.0, "b": 1.5, "c": [-3.0], "d": 1e300, "e": -0.0, "f": 0.0, "g": 1e16, "h": u64::MAX,
            "i": 72057594037927936.0});
        integral_floats(&mut v);
        let expected = json!({
            "a": 2, "b": 1.5, "c": [-3], "d": 1e300, "e": 0, "f": 0, "g": 10_000_000_000_000_000i64, "h": 1.8446744073709552e19,
            // The oracle's answer for 7.2057594037927933e16 (2^56): Go's shortest digits.
            "i": 72057594037927940i64
        });
        assert_eq!(v, expected);
        assert!(v["e"].is_i64() && v["h"].is_f64());
    }

    #[test]
    fn floats_print_like_go_v() {
        assert_eq!(go_format_g(10.0), "10");
        assert_eq!(go_format_g(1.5), "1.5");
        assert_eq!(go_format_g(123456.0), "123456");
        assert_eq!(go_format_g(1234567.0), "1.234567e+06");
        assert_eq!(go_format_g(1e6), "1e+06");
        assert_eq!(go_format_g(0.0001), "0.0001");
        assert_eq!(go_format_g(0.00001), "1e-05");
        assert_eq!(go_format_g(-2.5e-7), "-2.5e-07");
        assert_eq!(go_format_g(1e21), "1e+21");
        assert_eq!(go_format_g(0.0), "0");
    }
}
