//! An ordered JSON value and a writer that produces exactly the bytes Go's `encoding/json`
//! produces for kube-openapi's types.
//!
//! The OpenAPI documents are content-addressed (`?hash=` is the SHA-512 of the bytes), so
//! the bytes matter: keys come out in the order of kube-openapi's struct fields (not sorted,
//! as `serde_json::Value` would have them), `<`, `>` and `&` are escaped as `\u003c` and
//! friends, and floating-point numbers are formatted like Go's `strconv` (`1e+21`, `1e-7`).
//! With these rules our document for the recorded Widget CRD hashes to the very value the
//! real kube-apiserver served.

use serde_json::{Number, Value};

/// How strings are escaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Escape {
    /// Go's `encoding/json`: also `<`, `>`, `&`, U+2028 and U+2029 as `\u` escapes (the
    /// v3 documents, and the texts kube hashes).
    Html,
    /// kube-openapi's swagger 2.0 encoder: only what JSON requires.
    Plain,
}

/// Writes `s` as a JSON string escaped as `escape` says.
pub fn write_str(s: &str, escape: Escape, out: &mut String) {
    crate::representation::gofmt::write_json_string(s, escape == Escape::Html, out);
}

/// An object's members in order.
pub type Fields = Vec<(String, J)>;

/// A JSON value whose objects keep their keys in insertion order.
#[derive(Debug, Clone, PartialEq)]
pub enum J {
    Null,
    Bool(bool),
    Num(Number),
    Str(String),
    Arr(Vec<J>),
    Obj(Fields),
}

impl J {
    /// An empty object.
    pub fn obj() -> J {
        J::Obj(Vec::new())
    }

    /// A string.
    pub fn str(s: impl Into<String>) -> J {
        J::Str(s.into())
    }

    /// An array of strings.
    pub fn strs<S: AsRef<str>>(items: &[S]) -> J {
        J::Arr(items.iter().map(|s| J::str(s.as_ref())).collect())
    }

    /// Appends `key: value` to an object (no-op on other values), builder style.
    pub fn with(mut self, key: &str, value: J) -> J {
        self.push(key, value);
        self
    }

    /// Appends `key: value` to an object (no-op on other values).
    pub fn push(&mut self, key: &str, value: J) {
        if let J::Obj(fields) = self {
            fields.push((key.to_string(), value));
        }
    }

    /// The value of `key` in an object.
    pub fn get(&self, key: &str) -> Option<&J> {
        match self {
            J::Obj(fields) => fields.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The string inside a `J::Str`.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            J::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Whether this is an object with no keys.
    pub fn is_empty_obj(&self) -> bool {
        matches!(self, J::Obj(fields) if fields.is_empty())
    }

    /// The compact text, as Go's `json.Marshal` writes it.
    pub fn to_text(&self) -> String {
        self.to_text_as(Escape::Html)
    }

    /// The compact text, strings escaped as `escape` says.
    pub fn to_text_as(&self, escape: Escape) -> String {
        let mut out = String::new();
        write(self, escape, &mut out);
        out
    }

    /// Appends the compact text to `out`, strings escaped as `escape` says.
    pub fn write_to(&self, escape: Escape, out: &mut String) {
        write(self, escape, out);
    }
}

impl From<&Value> for J {
    /// A `serde_json` value; its objects are sorted by key, as Go writes maps.
    fn from(v: &Value) -> J {
        match v {
            Value::Null => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Number(n) => J::Num(n.clone()),
            Value::String(s) => J::Str(s.clone()),
            Value::Array(items) => J::Arr(items.iter().map(J::from).collect()),
            Value::Object(map) => J::Obj(map.iter().map(|(k, v)| (k.clone(), J::from(v))).collect()),
        }
    }
}

impl From<&J> for Value {
    fn from(j: &J) -> Value {
        match j {
            J::Null => Value::Null,
            J::Bool(b) => Value::Bool(*b),
            J::Num(n) => Value::Number(n.clone()),
            J::Str(s) => Value::String(s.clone()),
            J::Arr(items) => Value::Array(items.iter().map(Value::from).collect()),
            J::Obj(fields) => Value::Object(fields.iter().map(|(k, v)| (k.clone(), Value::from(v))).collect()),
        }
    }
}

/// Writes a `serde_json` value as `J::from(v).write_to(escape, out)` would, without the copy.
pub fn write_value(v: &Value, escape: Escape, out: &mut String) {
    crate::representation::gofmt::write_json_value(v, escape == Escape::Html, out);
}

/// Reads JSON text keeping every object's keys in the order written (the protobuf form
/// of a document is derived from its JSON when first asked for).
impl<'de> serde::Deserialize<'de> for J {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<J, D::Error> {
        d.deserialize_any(Visitor)
    }
}

struct Visitor;

impl<'de> serde::de::Visitor<'de> for Visitor {
    type Value = J;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("JSON")
    }
    fn visit_unit<E>(self) -> Result<J, E> {
        Ok(J::Null)
    }
    fn visit_bool<E>(self, b: bool) -> Result<J, E> {
        Ok(J::Bool(b))
    }
    fn visit_i64<E>(self, i: i64) -> Result<J, E> {
        Ok(J::Num(i.into()))
    }
    fn visit_u64<E>(self, u: u64) -> Result<J, E> {
        Ok(J::Num(u.into()))
    }
    fn visit_f64<E>(self, f: f64) -> Result<J, E> {
        Ok(Number::from_f64(f).map_or(J::Null, J::Num))
    }
    fn visit_str<E>(self, s: &str) -> Result<J, E> {
        Ok(J::Str(s.to_string()))
    }
    fn visit_string<E>(self, s: String) -> Result<J, E> {
        Ok(J::Str(s))
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<J, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(J::Arr(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<J, A::Error> {
        let mut fields = Vec::with_capacity(map.size_hint().unwrap_or(0));
        while let Some((k, v)) = map.next_entry::<String, J>()? {
            fields.push((k, v));
        }
        Ok(J::Obj(fields))
    }
}

fn write(j: &J, escape: Escape, out: &mut String) {
    match j {
        J::Null => out.push_str("null"),
        J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        J::Num(n) => crate::representation::gofmt::write_json_number(n, out),
        J::Str(s) => write_str(s, escape, out),
        J::Arr(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(item, escape, out);
            }
            out.push(']');
        }
        J::Obj(fields) => {
            out.push('{');
            for (i, (k, v)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_str(k, escape, out);
                out.push(':');
                write(v, escape, out);
            }
            out.push('}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::representation::gofmt::go_json_float;
    use serde_json::json;

    #[test]
    fn strings_are_escaped_as_go_escapes_them() {
        let j = J::str("a<b>&c\"\\\n\t\u{1}\u{8}\u{2028}é");
        assert_eq!(j.to_text(), r#""a\u003cb\u003e\u0026c\"\\\n\t\u0001\b\u2028é""#);
        assert_eq!(j.to_text_as(Escape::Plain), "\"a<b>&c\\\"\\\\\\n\\t\\u0001\\b\u{2028}é\"");
    }

    #[test]
    fn floats_are_formatted_as_go_formats_them() {
        let cases = [
            (0.0, "0"),
            (10.0, "10"),
            (1.5, "1.5"),
            (-0.25, "-0.25"),
            (1e21, "1e+21"),
            (1.5e300, "1.5e+300"),
            (1e-7, "1e-7"),
            (2.5e-10, "2.5e-10"),
            (0.000001, "0.000001"),
            (123456789012345680000.0, "123456789012345680000"),
        ];
        for (f, want) in cases {
            assert_eq!(go_json_float(f), want, "{f}");
        }
        assert_eq!(J::from(&json!(3)).to_text(), "3");
        assert_eq!(J::from(&json!(-3)).to_text(), "-3");
    }

    #[test]
    fn text_reads_back_in_its_order() {
        let text = r#"{"z":[1,-2,1.5,1e+21,null,true],"a":{"y":"\u003c","b":{}}}"#;
        let j: J = serde_json::from_str(text).expect("JSON");
        assert_eq!(j.to_text(), text);
        let mut out = String::new();
        write_value(&json!({"b": [1, 2.5, "<"], "a": null}), Escape::Html, &mut out);
        assert_eq!(out, r#"{"a":null,"b":[1,2.5,"\u003c"]}"#);
    }

    #[test]
    fn objects_keep_insertion_order_and_values_sort_maps() {
        let j = J::obj().with("z", J::Bool(true)).with("a", J::from(&json!({"b": 1, "a": [null, "x"]})));
        assert_eq!(j.to_text(), r#"{"z":true,"a":{"a":[null,"x"],"b":1}}"#);
        assert_eq!(Value::from(&j), json!({"z": true, "a": {"a": [null, "x"], "b": 1}}));
    }
}
