//! Values written as Go's `encoding/json` writes them, as kube-apiserver answers and
//! stores objects: `<`, `>`, `&`, U+2028 and U+2029 escaped as `\u003c`..., and floats in
//! plain decimal for 1e-6 ≤ |f| < 1e21, else in exponent form (`1e+21`, `1e-7`). A leaf
//! module: the stored bytes (`meta`) and every answer are written through it.

use serde_json::Value;
use std::io;

/// Shortest digits and decimal exponent of a finite float, from Rust's `{:e}`.
pub(crate) fn mantissa_exponent(f: f64) -> (String, i32) {
    let s = format!("{:e}", f.abs());
    let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
    (m.replace('.', ""), e.parse().unwrap_or(0))
}

/// Go's `%e`-style text with shortest digits: `1.5e+06`, `1e-07`.
pub(crate) fn go_exponent(f: f64, exp_digits: usize) -> String {
    let (digits, exp) = mantissa_exponent(f);
    let sign = if f.is_sign_negative() { "-" } else { "" };
    let mantissa = if digits.len() > 1 { format!("{}.{}", &digits[..1], &digits[1..]) } else { digits };
    let esign = if exp < 0 { '-' } else { '+' };
    format!("{sign}{mantissa}e{esign}{:0width$}", exp.abs(), width = exp_digits)
}

/// `encoding/json`'s float64: plain decimal for 1e-6 ≤ |f| < 1e21, else exponent form
/// (`1e+21`, `1e-7`).
pub fn go_json_float(f: f64) -> String {
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        return go_exponent(f, 1);
    }
    format!("{f}")
}

/// `v` as Go's `json.Marshal` writes it (keys are sorted already: `serde_json`'s maps are).
pub fn to_vec(v: &Value) -> Vec<u8> {
    to_vec_of(v)
}

/// `v` in Go's text, its members in the order it serializes them.
pub fn to_vec_of<T: serde::Serialize + ?Sized>(v: &T) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, GoFormatter);
    // Writing values of JSON into a vector cannot fail.
    let _ = v.serialize(&mut ser);
    out
}

/// serde_json's compact text but for Go's floats and HTML-safe strings.
struct GoFormatter;

impl serde_json::ser::Formatter for GoFormatter {
    fn write_f64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        writer.write_all(go_json_float(value).as_bytes())
    }

    /// serde_json escapes quotes, backslashes and control characters between fragments;
    /// Go also escapes these.
    fn write_string_fragment<W: ?Sized + io::Write>(&mut self, writer: &mut W, fragment: &str) -> io::Result<()> {
        let bytes = fragment.as_bytes();
        let mut start = 0;
        let mut i = 0;
        while i < bytes.len() {
            let escape: Option<&[u8]> = match bytes[i] {
                b'<' => Some(b"\\u003c"),
                b'>' => Some(b"\\u003e"),
                b'&' => Some(b"\\u0026"),
                // U+2028 and U+2029 are E2 80 A8 and E2 80 A9.
                0xe2 if bytes.get(i + 1) == Some(&0x80) && matches!(bytes.get(i + 2), Some(0xa8 | 0xa9)) => {
                    Some(if bytes[i + 2] == 0xa8 { b"\\u2028" } else { b"\\u2029" })
                }
                _ => None,
            };
            match escape {
                Some(text) => {
                    writer.write_all(&bytes[start..i])?;
                    writer.write_all(text)?;
                    i += if bytes[i] == 0xe2 { 3 } else { 1 };
                    start = i;
                }
                None => i += 1,
            }
        }
        writer.write_all(&bytes[start..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// What kube-apiserver 1.32 answered for these values in a custom resource (recorded
    /// from the oracle, 2026-11-28).
    #[test]
    fn values_are_written_as_kube_answers_them() {
        let v = json!({"spec": {"a": 0.000001, "b": 1.5e-7, "c": 1e20, "d": 1e21, "e": 0.00001234,
            "f": 123456789.125, "g": 1e300, "h": -2.5e-6, "i": 7, "s": "<&>", "u": "a\u{2028}b\u{2029}\u{e9}\n\"x"}});
        assert_eq!(
            String::from_utf8(to_vec(&v)).expect("utf-8"),
            r#"{"spec":{"a":0.000001,"b":1.5e-7,"c":100000000000000000000,"d":1e+21,"e":0.00001234,"f":123456789.125,"g":1e+300,"h":-0.0000025,"i":7,"s":"\u003c\u0026\u003e","u":"a\u2028b\u2029é\n\"x"}}"#
        );
    }

    /// Texts a fast float parser reads one unit in the last place off: kube's decoder (Go's
    /// `strconv`) rounds them correctly, and answered these (recorded from the oracle).
    #[test]
    fn floats_are_read_correctly_rounded() {
        let read: Value =
            serde_json::from_str(r#"[123456789.123456789, 1.00000000000000011, 0.30000000000000004]"#).expect("json");
        assert_eq!(String::from_utf8(to_vec(&read)).expect("utf-8"), "[123456789.12345679,1,0.30000000000000004]");
    }

    #[test]
    fn the_text_reads_back_as_the_same_value() {
        let v = json!({"k<>": ["&", 1.5, -3, "\u{2028}", {"x": null, "y": true}], "e": 1e-7});
        assert_eq!(serde_json::from_slice::<Value>(&to_vec(&v)).expect("json"), v);
    }
}
