//! Go's `fmt` rendering of unstructured values, as kube-apiserver's messages print them.
//!
//! kube-apiserver decodes a custom resource into `map[string]interface{}` with `int64` and
//! `float64` numbers, and its messages print those Go values with `%v` (numbers in
//! bounds, bad values) or `%#v` (maps and slices in `Duplicate value` errors). JSON
//! rendering differs in the details users see (`1e+06` vs `1000000.0`,
//! `map[string]interface {}{"name":"a"}` vs `{"name":"a"}`), so the schema validator
//! renders through these helpers. Floats are formatted by the engine's one Go float
//! formatter, [`crate::representation::gofmt`].

use crate::field::{ErrorType, FieldError, format_value, go_quote};
use crate::representation::gofmt::go_format_g;
use serde_json::{Number, Value};

/// The Go value a JSON number decodes to in an unstructured object: `int64` when it is
/// an integer that fits, `float64` otherwise.
pub enum GoNumber {
    Int(i64),
    Float(f64),
}

impl GoNumber {
    pub fn of(n: &Number) -> GoNumber {
        match n.as_i64() {
            Some(i) => GoNumber::Int(i),
            None => GoNumber::Float(n.as_f64().unwrap_or(f64::NAN)),
        }
    }

    pub fn as_f64(&self) -> f64 {
        match *self {
            GoNumber::Int(i) => i as f64,
            GoNumber::Float(f) => f,
        }
    }
}

/// Go's `int64(f)` as the oracle (linux/amd64) computes it: truncation toward zero, and
/// MinInt64 (the CPU's "integer indefinite") for NaN and anything outside int64's range,
/// where Rust's `as` saturates. kube-openapi compares an integer against a schema bound
/// converted this way, so `maximum: 1e21` refuses every integer.
pub fn go_int64(f: f64) -> i64 {
    // 2^63 is exact in f64; the range is [-2^63, 2^63).
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if f.is_nan() || !(-LIMIT..LIMIT).contains(&f) { i64::MIN } else { f as i64 }
}

/// `%v` of a decoded JSON number.
pub fn number_v(n: &Number) -> String {
    match GoNumber::of(n) {
        GoNumber::Int(i) => i.to_string(),
        GoNumber::Float(f) => go_format_g(f),
    }
}

/// `%#v` of an unstructured value: `map[string]interface {}{"a":1}`, `[]interface {}{"a", 1}`.
pub fn sharp_v(v: &Value) -> String {
    match v {
        Value::Null => "interface {}(nil)".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => number_v(n),
        Value::String(s) => go_quote(s),
        Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(sharp_v).collect();
            format!("[]interface {{}}{{{}}}", inner.join(", "))
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let inner: Vec<String> =
                keys.iter().map(|k| format!("{}:{}", go_quote(k), sharp_v(&map[k.as_str()]))).collect();
            format!("map[string]interface {{}}{{{}}}", inner.join(", "))
        }
    }
}

/// `%v` (or `%+v`) of an unstructured value: `map[a:1 b:[x <nil>]]`, strings bare, map
/// keys sorted.
pub fn plain_v(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => number_v(n),
        Value::String(s) => s.clone(),
        Value::Array(items) => format!("[{}]", items.iter().map(plain_v).collect::<Vec<_>>().join(" ")),
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let inner: Vec<String> = keys.iter().map(|k| format!("{k}:{}", plain_v(&map[k.as_str()]))).collect();
            format!("map[{}]", inner.join(" "))
        }
    }
}

/// How `field.Error` prints a bad value: strings quoted, numbers and booleans with `%v`,
/// `nil` as `"null"`, maps and slices with `%#v`.
pub fn bad_value(v: &Value) -> String {
    match v {
        Value::Null => go_quote("null"),
        Value::String(s) => go_quote(s),
        Value::Number(n) => number_v(n),
        Value::Bool(b) => b.to_string(),
        other => sharp_v(other),
    }
}

/// A field error whose bad value is printed the Go way. Values that [`format_value`]
/// prints differently (floats, maps, slices, null) are written into the detail instead.
pub fn with_value(error_type: ErrorType, field: impl Into<String>, v: &Value, detail: String) -> FieldError {
    let go = bad_value(v);
    if go == format_value(v) {
        return FieldError { error_type, field: field.into(), value: Some(v.clone()), detail };
    }
    let detail = if detail.is_empty() { go } else { format!("{go}: {detail}") };
    FieldError { error_type, field: field.into(), value: None, detail }
}

/// Go's `time.Time.String()` of a stored (UTC) time: `2006-01-02 15:04:05.999999999 +0000 UTC`,
/// the zero time for `null`.
pub fn go_time_string(v: Option<&Value>) -> String {
    let parsed = v.and_then(Value::as_str).and_then(|t| t.parse::<k8s_openapi::jiff::Timestamp>().ok());
    let Some(t) = parsed else { return "0001-01-01 00:00:00 +0000 UTC".into() };
    let whole = t.strftime("%Y-%m-%d %H:%M:%S").to_string();
    let nanos = t.subsec_nanosecond();
    let fraction = if nanos == 0 { String::new() } else { format!(".{nanos:09}").trim_end_matches('0').to_string() };
    format!("{whole}{fraction} +0000 UTC")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn go_int64_is_amd64_conversion() {
        assert_eq!(go_int64(1.9), 1);
        assert_eq!(go_int64(-1.9), -1);
        assert_eq!(go_int64(1e21), i64::MIN);
        assert_eq!(go_int64(-1e21), i64::MIN);
        assert_eq!(go_int64(9_223_372_036_854_775_808.0), i64::MIN);
        assert_eq!(go_int64(-9_223_372_036_854_775_808.0), i64::MIN);
        assert_eq!(go_int64(f64::NAN), i64::MIN);
    }

    #[test]
    fn numbers_keep_their_go_type() {
        assert_eq!(number_v(&Number::from(42)), "42");
        assert_eq!(number_v(&Number::from_f64(2.0).expect("finite")), "2");
        assert_eq!(number_v(&Number::from(u64::MAX)), "1.8446744073709552e+19");
    }

    #[test]
    fn maps_and_slices_print_like_go_plain_v() {
        // The oracle's `%+v` of a strategic merge patch.
        let patch = json!({"spec": {"foo": [1, "x", 2.5, {"k": 1e21}]}, "a": null, "b": true});
        assert_eq!(plain_v(&patch), "map[a:<nil> b:true spec:map[foo:[1 x 2.5 map[k:1e+21]]]]");
    }

    #[test]
    fn maps_and_slices_print_like_go_sharp_v() {
        assert_eq!(sharp_v(&json!({"name": "a", "port": 80})), r#"map[string]interface {}{"name":"a", "port":80}"#);
        assert_eq!(sharp_v(&json!({})), "map[string]interface {}{}");
        assert_eq!(sharp_v(&json!(["a", 1, null, true])), r#"[]interface {}{"a", 1, interface {}(nil), true}"#);
        assert_eq!(bad_value(&json!(null)), r#""null""#);
        assert_eq!(bad_value(&json!("x")), r#""x""#);
    }
}
