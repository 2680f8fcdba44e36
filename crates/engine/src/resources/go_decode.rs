//! Request JSON as kube-apiserver's Go decoders read it, with the sentences they answer:
//! the syntax check of `encoding/json` (through the transcription of Go's scanner in
//! [`super::continue_token`]), the type error of a top-level value that is no object, and
//! the duplicate fields `sigs.k8s.io/json`'s `UnmarshalStrict` reports as strict errors.
//!
//! kube quotes these to the client (`error decoding patch: unexpected end of JSON input`,
//! `duplicate field "spec.replicas"`), so serde's own messages would not do. Decoding into a
//! map keeps the last of duplicate keys, as serde does; the reports are found in the same
//! pass ([`read_strict`]).

use super::go_json;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::fmt;

/// How many strict errors Go's decoder keeps (`saveStrictError`).
const MAX_STRICT_ERRORS: usize = 100;

/// Go's `json.Unmarshal` syntax check: `Err` holds its sentence (`unexpected end of JSON
/// input`, `invalid character 'x' looking for beginning of value`).
pub fn check_syntax(data: &[u8]) -> Result<(), String> {
    go_json::check_valid(data)
}

/// Go's name for the JSON type of a value in `cannot unmarshal` errors.
pub fn go_kind(v: &Value) -> &'static str {
    match v {
        Value::Object(_) => "object",
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::Null => "null",
    }
}

/// `kjson.UnmarshalStrict(data, &map[string]interface{}{})`: the map (`null` for a JSON
/// `null`) and the strict errors, or the error that stopped decoding.
pub fn unmarshal_map_strict(data: &[u8]) -> Result<(Value, Vec<String>), String> {
    check_syntax(data)?;
    // Go reads a number past float64 only to refuse it, by its text; serde refuses the body.
    let (value, duplicates) = read_strict(data).map_err(|e| match number_beyond_float64(data) {
        Some(n) => format!("json: cannot unmarshal number {n} into Go value of type float64"),
        None => e.to_string(),
    })?;
    match &value {
        Value::Object(_) | Value::Null => {}
        other => {
            return Err(format!(
                "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                go_kind(other)
            ));
        }
    }
    Ok((value, duplicates))
}

/// JSON `data` read into a [`Value`] as `serde_json::from_slice` reads it, with the
/// `duplicate field "<path>"` strict errors `sigs.k8s.io/json` reports for it: in the order
/// Go's decoder meets them, each once, paths as Go's (keys joined with `.`, list items as
/// `[i]`). One pass: the repeats are found while the value is built.
pub fn read_strict(data: &[u8]) -> serde_json::Result<(Value, Vec<String>)> {
    let (value, paths) = read_noting_repeats(data)?;
    Ok((value, paths.iter().map(|path| duplicate_field(path)).collect()))
}

/// Go's strict error for a field met twice at `path`.
pub fn duplicate_field(path: &str) -> String {
    format!("duplicate field {}", crate::field::go_quote(path))
}

/// The paths of the fields valid JSON `data` repeats ([`read_strict`]'s); none for what
/// does not parse (a document too deep for serde is refused elsewhere).
pub fn duplicate_paths(data: &[u8]) -> Vec<String> {
    read_noting_repeats(data).map(|(_, paths)| paths).unwrap_or_default()
}

/// `data` read whole, and the paths of the fields it repeats.
fn read_noting_repeats(data: &[u8]) -> serde_json::Result<(Value, Vec<String>)> {
    let mut found = Found::default();
    let mut de = serde_json::Deserializer::from_slice(data);
    let value = Read { at: &Step::Root, found: &mut found }.deserialize(&mut de)?;
    de.end()?;
    Ok((value, found.paths))
}

/// The strict errors of `kjson.UnmarshalStrict(data, &[]jsonPatchOp{})` (a JSON patch that
/// decodes), each as kube reports it (`json patch duplicate field "[0].value.a"`): members
/// an operation repeats, those it has beside `op`, `path`, `from` and `value` (whose values
/// are skipped), and those repeated inside a `value`.
pub fn json_patch_strict_errors(data: &[u8]) -> Vec<String> {
    let Ok(ops) = serde_json::from_slice::<Vec<Members>>(data) else { return Vec::new() };
    let mut errors = Vec::new();
    for (i, Members(members)) in ops.iter().enumerate() {
        let mut seen = HashSet::new();
        for (key, value) in members {
            let path = format!("[{i}].{key}");
            if !["op", "path", "from", "value"].contains(&key.as_str()) {
                errors.push(format!("unknown field {}", crate::field::go_quote(&path)));
                continue;
            }
            if !seen.insert(key.as_str()) {
                errors.push(duplicate_field(&path));
            }
            if key == "value" {
                errors.extend(
                    duplicate_paths(value.get().as_bytes()).iter().map(|inner| duplicate_field(&join(&path, inner))),
                );
            }
        }
    }
    errors.truncate(MAX_STRICT_ERRORS);
    errors.into_iter().map(|e| format!("json patch {e}")).collect()
}

/// A Go strict-error path under `parent`: `.key`, or `[i]` with no dot.
pub fn join(parent: &str, inner: &str) -> String {
    match (parent.is_empty(), inner.starts_with('[')) {
        (true, _) => inner.to_string(),
        (false, true) => format!("{parent}{inner}"),
        (false, false) => format!("{parent}.{inner}"),
    }
}

/// An object's members in order, repeated ones included; `null` has none.
pub(crate) struct Members(pub(crate) Vec<(String, Box<serde_json::value::RawValue>)>);

impl<'de> serde::Deserialize<'de> for Members {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Members;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON patch operation")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members, A::Error> {
                let mut members = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    members.push((key, map.next_value()?));
                }
                Ok(Members(members))
            }
            fn visit_unit<E>(self) -> Result<Members, E> {
                Ok(Members(Vec::new()))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Default)]
struct Found {
    paths: Vec<String>,
    seen: HashSet<String>,
}

impl Found {
    fn duplicate(&mut self, at: &Step<'_>, key: &str) {
        if self.paths.len() >= MAX_STRICT_ERRORS {
            return;
        }
        let mut path = at.path();
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(key);
        if self.seen.insert(path.clone()) {
            self.paths.push(path);
        }
    }
}

/// Where a value is: Go's `strictFieldStack`, kept as links up the stack and joined into a
/// path only when a duplicate is met (bodies rarely have one).
enum Step<'a> {
    Root,
    Key(&'a Step<'a>, &'a str),
    Index(&'a Step<'a>, usize),
}

impl Step<'_> {
    fn path(&self) -> String {
        match self {
            Step::Root => String::new(),
            Step::Key(parent, key) => {
                let mut path = parent.path();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
                path
            }
            Step::Index(parent, i) => format!("{}[{i}]", parent.path()),
        }
    }
}

/// One value read into a [`Value`] as serde reads it (the last of repeated keys kept),
/// noting the keys an object repeats as Go's strict decoder meets them: when the repeat
/// is read, before its value.
struct Read<'a> {
    at: &'a Step<'a>,
    found: &'a mut Found,
}

impl<'de> DeserializeSeed<'de> for Read<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Read<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                self.found.duplicate(self.at, &key);
            }
            let value = map.next_value_seed(Read { at: &Step::Key(self.at, &key), found: self.found })?;
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(item) =
            seq.next_element_seed(Read { at: &Step::Index(self.at, out.len()), found: self.found })?
        {
            out.push(item);
        }
        Ok(Value::Array(out))
    }

    crate::representation::json_scalar_visits!();
}

/// The struct apimachinery's `SimpleMetaFactory.Interpret` reads the type from, as Go
/// names its type in errors.
const FIND_KIND: &str =
    r#"struct { APIVersion string "json:\"apiVersion,omitempty\""; Kind string "json:\"kind,omitempty\"" }"#;

/// What `SimpleMetaFactory.Interpret` refuses in a decoded body: a value that is no
/// object, an `apiVersion` or `kind` that is no string, an `apiVersion` that is no
/// group/version.
pub fn interpret_error(obj: &Value) -> Option<String> {
    let parse_error = |what: String| Some(format!("couldn't get version/kind; json parse error: {what}"));
    if !matches!(obj, Value::Object(_) | Value::Null) {
        return parse_error(format!("json: cannot unmarshal {} into Go value of type {FIND_KIND}", go_kind(obj)));
    }
    for field in ["apiVersion", "kind"] {
        match obj.get(field) {
            None | Some(Value::Null | Value::String(_)) => {}
            Some(other) => {
                return parse_error(format!(
                    "json: cannot unmarshal {} into Go struct field .{field} of type string",
                    go_kind(other)
                ));
            }
        }
    }
    let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    (api_version.matches('/').count() > 1).then(|| format!("unexpected GroupVersion string: {api_version}"))
}

/// Why the unstructured decoder of custom resources refuses `obj`, whose JSON text was
/// `raw`: [`interpret_error`], or no `kind` (quoting the text).
pub fn unstructured_error_in(obj: &Value, raw: &str) -> Option<String> {
    interpret_error(obj).or_else(|| {
        obj.get("kind")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
            .then(|| format!("Object 'Kind' is missing in '{raw}'"))
    })
}

/// The first number in JSON `data` beyond a float64 (`1e400`): serde refuses the whole body
/// for it, where Go's decoder of an unstructured object names it (`json: cannot unmarshal
/// number 1e400 into Go value of type float64`). Read only once a decode has failed.
pub fn number_beyond_float64(data: &[u8]) -> Option<&str> {
    let (mut i, mut in_string) = (0, false);
    while i < data.len() {
        let b = data[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
        } else if b == b'"' {
            in_string = true;
        } else if b == b'-' || b.is_ascii_digit() {
            let end = data[i..]
                .iter()
                .position(|c| !matches!(c, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
                .map_or(data.len(), |n| i + n);
            let literal = std::str::from_utf8(&data[i..end]).ok()?;
            if literal.parse::<f64>().is_ok_and(f64::is_infinite) {
                return Some(literal);
            }
            i = end;
            continue;
        }
        i += 1;
    }
    None
}

/// [`unstructured_error_in`] for an object kube re-encoded (a patched one).
pub fn unstructured_decode_error(obj: &Value) -> Option<String> {
    unstructured_error_in(obj, &crate::representation::gofmt::go_json(obj))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_number_beyond_float64_is_found_outside_strings_only() {
        assert_eq!(number_beyond_float64(br#"{"a":"1e400","b":[1,-2.5e3,-1E+400]}"#), Some("-1E+400"));
        assert_eq!(number_beyond_float64(br#"{"a":"x\"1e999","b":12345678901234567890123}"#), None);
        assert_eq!(
            unmarshal_map_strict(br#"{"spec":{"v":1e400}}"#),
            Err("json: cannot unmarshal number 1e400 into Go value of type float64".to_string())
        );
    }

    #[test]
    fn a_map_is_decoded_with_go_errors() {
        assert_eq!(unmarshal_map_strict(b"").expect_err("refused"), "unexpected end of JSON input");
        assert_eq!(unmarshal_map_strict(br#"{"spec": "#).expect_err("refused"), "unexpected end of JSON input");
        assert_eq!(
            unmarshal_map_strict(b"[1]").expect_err("refused"),
            "json: cannot unmarshal array into Go value of type map[string]interface {}"
        );
        assert_eq!(
            unmarshal_map_strict(br#""x""#).expect_err("refused"),
            "json: cannot unmarshal string into Go value of type map[string]interface {}"
        );
        assert_eq!(unmarshal_map_strict(b"null").expect("null"), (Value::Null, vec![]));
    }

    #[test]
    fn duplicate_fields_are_named_by_go_paths_once_each() {
        let (v, errs) = unmarshal_map_strict(
            br#"{"spec":{"replicas":6,"replicas":7,"replicas":8},"l":[{"a":1,"a":2}],"k":1,"k":2}"#,
        )
        .expect("valid");
        assert_eq!(v["spec"]["replicas"], json!(8), "the last one wins, as in Go");
        assert_eq!(
            errs,
            [r#"duplicate field "spec.replicas""#, r#"duplicate field "l[0].a""#, r#"duplicate field "k""#]
        );
    }

    #[test]
    fn a_body_is_read_as_serde_reads_it_with_its_repeats_found_in_the_same_pass() {
        let bodies: [&[u8]; 8] = [
            br#"{"a":{"b":[1,-2,3.5,18446744073709551615,-9223372036854775808,1e300,0.1]},"s":"\u00e9\n","n":null,"t":true}"#,
            br#"[{"a":1},{"a":2,"b":{"c":[[],{}]}}]"#,
            b" 7 ",
            br#""x""#,
            br#"{"a":1} x"#,
            br#"{"a":1,}"#,
            br#"{"a":1e400}"#,
            br#"{"a":[1,2"#,
        ];
        for body in bodies {
            let serde = serde_json::from_slice::<Value>(body).map_err(|e| e.to_string());
            let ours = read_strict(body).map(|(v, _)| v).map_err(|e| e.to_string());
            assert_eq!(ours, serde, "{}", String::from_utf8_lossy(body));
        }
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(read_strict(deep.as_bytes()).is_err(), "serde's depth limit holds");
        let (v, errs) = read_strict(br#"[{"a":{"x":1,"x":2},"a":{"y":1,"y":2}},{"b":1,"b":2}]"#).expect("valid");
        assert_eq!(v, json!([{"a": {"y": 2}}, {"b": 2}]));
        assert_eq!(
            errs,
            [
                r#"duplicate field "[0].a.x""#,
                r#"duplicate field "[0].a""#,
                r#"duplicate field "[0].a.y""#,
                r#"duplicate field "[1].b""#
            ],
            "each as it is met: a repeated key before what its value repeats"
        );
        let many: String = (0..150).map(|i| format!(r#""k{i}":1,"k{i}":2"#)).collect::<Vec<_>>().join(",");
        assert_eq!(read_strict(format!("{{{many}}}").as_bytes()).expect("valid").1.len(), MAX_STRICT_ERRORS);
    }

    #[test]
    fn a_patched_object_without_a_kind_is_quoted_as_go_encodes_it() {
        assert_eq!(unstructured_decode_error(&json!({})).as_deref(), Some("Object 'Kind' is missing in '{}'"));
        assert_eq!(
            unstructured_decode_error(&json!({"a": "<"})).as_deref(),
            Some(r#"Object 'Kind' is missing in '{"a":"\u003c"}'"#)
        );
        assert_eq!(unstructured_decode_error(&json!({"kind": "Widget"})), None);
        assert_eq!(
            unstructured_decode_error(&json!([1])).as_deref(),
            Some(
                r#"couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string "json:\"apiVersion,omitempty\""; Kind string "json:\"kind,omitempty\"" }"#
            )
        );
    }
}
