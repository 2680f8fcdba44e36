//! Field paths as structured-merge-diff names them: a path is a list of elements, each a
//! struct or map field (`.spec`), the key of an item in a `map` list (`[name="a"]`), the
//! value of an item in a `set` list (`[="x"]`) or an index (`[0]`).
//!
//! Elements have a total order (fields, then keys, then values, then indexes), which is
//! the order `fieldsV1` lists them in, and two encodings: the `fieldsV1` key (`f:spec`,
//! `k:{"name":"a"}`, `v:"x"`, `i:0`) and the human form conflicts are reported with.

use crate::field::go_quote;
use serde_json::Value;
use std::cmp::Ordering;
use std::fmt;

/// One step of a field path.
#[derive(Debug, Clone)]
pub enum PathElement {
    /// A struct or map field.
    Field(String),
    /// An item of a `map` list, by its key fields (sorted by name).
    Key(Vec<(String, Value)>),
    /// An item of a `set` list, by its value.
    Value(Value),
    /// An item of a list without keys.
    Index(usize),
}

/// A path from the object's root.
pub type Path = Vec<PathElement>;

/// structured-merge-diff's total order of values: numbers (ints and floats compared
/// numerically), then strings, booleans, lists, maps, and null last.
pub fn compare_values(a: &Value, b: &Value) -> Ordering {
    fn rank(v: &Value) -> u8 {
        match v {
            Value::Number(_) => 0,
            Value::String(_) => 1,
            Value::Bool(_) => 2,
            Value::Array(_) => 3,
            Value::Object(_) => 4,
            Value::Null => 5,
        }
    }
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i.cmp(&j),
            _ => x.as_f64().unwrap_or(0.0).total_cmp(&y.as_f64().unwrap_or(0.0)),
        },
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (l, r) in x.iter().zip(y) {
                match compare_values(l, r) {
                    Ordering::Equal => {}
                    other => return other,
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(x), Value::Object(y)) => {
            // Maps compare as their sorted (key, value) lists.
            for ((lk, lv), (rk, rv)) in x.iter().zip(y) {
                match lk.cmp(rk).then_with(|| compare_values(lv, rv)) {
                    Ordering::Equal => {}
                    other => return other,
                }
            }
            x.len().cmp(&y.len())
        }
        _ => rank(a).cmp(&rank(b)),
    }
}

/// Equality as structured-merge-diff sees it: `1` and `1.0` are the same number.
pub fn values_equal(a: &Value, b: &Value) -> bool {
    compare_values(a, b) == Ordering::Equal
}

impl PathElement {
    fn rank(&self) -> u8 {
        match self {
            PathElement::Field(_) => 0,
            PathElement::Key(_) => 1,
            PathElement::Value(_) => 2,
            PathElement::Index(_) => 3,
        }
    }

    /// The key this element has in `fieldsV1`.
    pub fn encode(&self) -> String {
        match self {
            PathElement::Field(name) => format!("f:{name}"),
            PathElement::Key(fields) => {
                let body: Vec<String> =
                    fields.iter().map(|(k, v)| format!("{}:{}", go_json_str(k), go_json(v))).collect();
                format!("k:{{{}}}", body.join(","))
            }
            PathElement::Value(v) => format!("v:{}", go_json(v)),
            PathElement::Index(i) => format!("i:{i}"),
        }
    }

    /// Reads a `fieldsV1` key. `Ok(None)` for a prefix this version does not know, which
    /// kube skips rather than refuses.
    pub fn decode(key: &str) -> Result<Option<PathElement>, String> {
        let Some((prefix, rest)) = key.split_once(':') else {
            return Err(format!("unable to parse {key:?}: no prefix"));
        };
        match prefix {
            "f" => Ok(Some(PathElement::Field(rest.to_string()))),
            "v" => serde_json::from_str(rest)
                .map(|v| Some(PathElement::Value(v)))
                .map_err(|e| format!("unable to parse {key:?}: {e}")),
            "k" => {
                let parsed: serde_json::Map<String, Value> =
                    serde_json::from_str(rest).map_err(|e| format!("unable to parse {key:?}: {e}"))?;
                if parsed.is_empty() {
                    return Err(format!("unable to parse {key:?}: a key needs at least one field"));
                }
                Ok(Some(PathElement::Key(parsed.into_iter().collect())))
            }
            "i" => {
                rest.parse().map(|i| Some(PathElement::Index(i))).map_err(|e| format!("unable to parse {key:?}: {e}"))
            }
            _ => Ok(None),
        }
    }
}

impl Ord for PathElement {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (PathElement::Field(a), PathElement::Field(b)) => a.cmp(b),
            (PathElement::Key(a), PathElement::Key(b)) => {
                for ((an, av), (bn, bv)) in a.iter().zip(b) {
                    match an.cmp(bn).then_with(|| compare_values(av, bv)) {
                        Ordering::Equal => {}
                        other => return other,
                    }
                }
                a.len().cmp(&b.len())
            }
            (PathElement::Value(a), PathElement::Value(b)) => compare_values(a, b),
            (PathElement::Index(a), PathElement::Index(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for PathElement {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for PathElement {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for PathElement {}

impl fmt::Display for PathElement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathElement::Field(name) => write!(f, ".{name}"),
            PathElement::Key(fields) => {
                let parts: Vec<String> = fields.iter().map(|(k, v)| format!("{k}={}", go_value_string(v))).collect();
                write!(f, "[{}]", parts.join(","))
            }
            PathElement::Value(v) => write!(f, "[={}]", go_value_string(v)),
            PathElement::Index(i) => write!(f, "[{i}]"),
        }
    }
}

/// A path as conflicts print it: `.spec.ports[name="http"].port`.
pub fn path_string(path: &[PathElement]) -> String {
    path.iter().map(ToString::to_string).collect()
}

/// structured-merge-diff's `value.ToString`: strings quoted Go-style, lists in brackets.
fn go_value_string(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::String(s) => go_quote(s),
        Value::Array(items) => format!("[{}]", items.iter().map(go_value_string).collect::<Vec<_>>().join(",")),
        Value::Object(m) => {
            format!(
                "{{{}}}",
                m.iter().map(|(k, v)| format!("{k}={}", go_value_string(v))).collect::<Vec<_>>().join(",")
            )
        }
        other => other.to_string(),
    }
}

/// JSON as Go's encoder writes it (HTML characters escaped, floats as Go prints them:
/// a set item `1.0` is `v:1`), so keys match the ones kube-apiserver writes byte for byte.
pub fn go_json(v: &Value) -> String {
    String::from_utf8_lossy(&crate::go_json::to_vec(v)).into_owned()
}

/// A string as Go's encoding/json writes it; one that needs no escaping is only quoted.
pub fn go_json_str(s: &str) -> String {
    let plain = |b: u8| (b' '..=b'~').contains(&b) && !matches!(b, b'"' | b'\\' | b'<' | b'>' | b'&');
    if s.bytes().all(plain) {
        let mut out = String::with_capacity(s.len() + 2);
        out.push('"');
        out.push_str(s);
        out.push('"');
        return out;
    }
    go_json(&Value::from(s))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strings_are_written_as_go_writes_them() {
        for s in ["kubectl-client-side-apply", "stable.example.com/v1", "", "a\"b", "<&>", "tab\there", "é\u{2028}"] {
            assert_eq!(go_json_str(s), go_json(&Value::from(s)), "{s:?}");
        }
        assert_eq!(go_json_str("a<b"), "\"a\\u003cb\"");
    }

    #[test]
    fn elements_encode_and_decode_as_fields_v1_keys() {
        let cases = [
            (PathElement::Field("spec".into()), "f:spec"),
            (
                PathElement::Key(vec![("name".into(), json!("a")), ("port".into(), json!(80))]),
                r#"k:{"name":"a","port":80}"#,
            ),
            (PathElement::Value(json!("stable.example.com/hold")), r#"v:"stable.example.com/hold""#),
            (PathElement::Index(3), "i:3"),
        ];
        for (pe, key) in cases {
            assert_eq!(pe.encode(), key);
            assert_eq!(PathElement::decode(key).expect("decodes"), Some(pe));
        }
        assert_eq!(PathElement::decode("x:whatever").expect("unknown prefixes are skipped"), None);
        assert!(PathElement::decode("v:{not json").is_err());
        assert!(PathElement::decode("nothing").is_err());
        assert_eq!(PathElement::Value(json!("a<b")).encode(), r#"v:"a\u003cb""#);
        assert_eq!(PathElement::Value(json!(1.0)).encode(), "v:1");
        assert_eq!(PathElement::Value(json!(1e21)).encode(), "v:1e+21");
    }

    #[test]
    fn elements_order_fields_before_keys_values_and_indexes() {
        let mut v = [
            PathElement::Index(0),
            PathElement::Value(json!("b")),
            PathElement::Key(vec![("k".into(), json!("a"))]),
            PathElement::Field("z".into()),
            PathElement::Field("a".into()),
            PathElement::Value(json!(2)),
        ];
        v.sort();
        let keys: Vec<String> = v.iter().map(PathElement::encode).collect();
        assert_eq!(keys, ["f:a", "f:z", r#"k:{"k":"a"}"#, "v:2", r#"v:"b""#, "i:0"]);
        assert!(values_equal(&json!(1), &json!(1.0)));
    }

    #[test]
    fn paths_print_as_kube_reports_them() {
        let p = vec![
            PathElement::Field("spec".into()),
            PathElement::Key(vec![("name".into(), json!("http")), ("port".into(), json!(80))]),
            PathElement::Field("x".into()),
            PathElement::Value(json!("v")),
            PathElement::Index(2),
        ];
        assert_eq!(path_string(&p), r#".spec[name="http",port=80].x[="v"][2]"#);
    }
}
