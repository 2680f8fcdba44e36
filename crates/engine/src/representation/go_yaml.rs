//! YAML as kube and kubectl turn it into JSON: go-yaml v2 reads it into Go values (YAML
//! 1.1: `0777` is octal; a plain `on`, `y` or `no` is a boolean, as a key too) and
//! sigs.k8s.io/yaml writes them as JSON through Go's encoder, keys as strings (`on:` and
//! `Y:` are both `"true"`, `0x10:` is `"16"`) and whole floats as integers.

use super::gofmt::{go_format_g, integral_floats};
use crate::field::go_quote;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use serde_saphyr::{Options, Spanned};
use std::fmt;

/// The parser's options for YAML as go-yaml v2 reads it (YAML 1.1: `0777` is octal).
pub fn options() -> Options {
    let mut options = Options::default();
    options.legacy_octal_numbers = true;
    options
}

/// A document as JSON, parsed into [`GoYaml`]: its numbers as Go's encoder writes them.
pub fn to_json(GoYaml { mut value, .. }: GoYaml) -> Value {
    integral_floats(&mut value);
    value
}

/// A YAML node read as go-yaml reads it into `interface{}`, keys resolved like values, with
/// go-yaml's strict complaints about keys set twice once resolved (`line 6: key true
/// already set in map`), in document order.
pub struct GoYaml {
    pub value: Value,
    pub repeated: Vec<String>,
}

impl<'de> Deserialize<'de> for GoYaml {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut repeated = Vec::new();
        let value = d.deserialize_any(NodeVisitor { repeated: &mut repeated })?;
        Ok(GoYaml { value, repeated })
    }
}

struct NodeVisitor<'r> {
    repeated: &'r mut Vec<String>,
}

impl<'de> Visitor<'de> for NodeVisitor<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a YAML node")
    }

    // A non-finite float has no JSON: the parser's policy refuses it before.
    super::json_scalar_visits!();

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(GoYaml { value, repeated }) = seq.next_element()? {
            items.push(value);
            self.repeated.extend(repeated);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(Spanned { value: key, referenced, .. }) = map.next_key::<Spanned<GoKey>>()? {
            let GoYaml { value, repeated } = map.next_value()?;
            // Keys that resolve alike (`on`, `Y`) are one key: the last value stays, as in
            // the JSON kube reads; go-yaml's strict pass names the key.
            if out.insert(key.text.clone(), value).is_some() {
                self.repeated.push(format!("line {}: key {} already set in map", referenced.line(), key.go_syntax()));
            }
            self.repeated.extend(repeated);
        }
        Ok(Value::Object(out))
    }
}

/// A mapping key resolved like a value, written as sigs.k8s.io/yaml writes a Go map's key:
/// a string as it is, a boolean as `true`/`false`, a number as Go formats it.
struct GoKey {
    text: String,
    string: bool,
}

impl GoKey {
    /// The key as Go's `%#v` prints it (a string quoted).
    fn go_syntax(&self) -> String {
        if self.string { go_quote(&self.text) } else { self.text.clone() }
    }
}

impl<'de> Deserialize<'de> for GoKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(KeyVisitor)
    }
}

struct KeyVisitor;

impl KeyVisitor {
    fn other(text: String) -> GoKey {
        GoKey { text, string: false }
    }
}

impl Visitor<'_> for KeyVisitor {
    type Value = GoKey;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string, boolean or number key")
    }

    fn visit_bool<E>(self, b: bool) -> Result<GoKey, E> {
        Ok(Self::other(b.to_string()))
    }

    fn visit_i64<E>(self, i: i64) -> Result<GoKey, E> {
        Ok(Self::other(i.to_string()))
    }

    fn visit_u64<E>(self, u: u64) -> Result<GoKey, E> {
        Ok(Self::other(u.to_string()))
    }

    fn visit_f64<E>(self, f: f64) -> Result<GoKey, E> {
        Ok(Self::other(go_format_g(f)))
    }

    fn visit_str<E>(self, s: &str) -> Result<GoKey, E> {
        Ok(GoKey { text: s.to_string(), string: true })
    }

    fn visit_string<E>(self, text: String) -> Result<GoKey, E> {
        Ok(GoKey { text, string: true })
    }

    fn visit_unit<E: de::Error>(self) -> Result<GoKey, E> {
        Err(E::custom("unsupported map key of type: %!s(<nil>), key: <nil>"))
    }

    fn visit_none<E: de::Error>(self) -> Result<GoKey, E> {
        self.visit_unit()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(yaml: &str) -> Value {
        to_json(serde_saphyr::from_str_with_options(yaml, options()).expect("yaml"))
    }

    /// The oracle's answers to the same YAML bodies (go-yaml v2 through sigs.k8s.io/yaml).
    #[test]
    fn keys_and_values_are_resolved_as_go_yaml_resolves_them() {
        let doc = "on: 1\n\"off\": 2\nY: 3\n0777: 4\n1.5: 5\n0x10: 6\nNO: 7\nnested: {yes: {n: 8}}\nlist: [{on: 9}]\n";
        assert_eq!(
            read(doc),
            json!({"1.5": 5, "16": 6, "511": 4, "false": 7, "list": [{"true": 9}], "nested": {"true": {"false": 8}},
                   "off": 2, "true": 3})
        );
        let doc: GoYaml =
            serde_saphyr::from_str_with_options("a: 1\non: 2\nb:\n  Y: 3\n  yes: 4\n", options()).expect("yaml");
        assert_eq!(doc.repeated, ["line 5: key true already set in map"]);
        let values = "a: y\nb: n\nc: 0777\nd: +0777\ne: 2.0\nf: -0.0\ng: \"yes\"\nh: 1:30\ni: ~\n";
        assert_eq!(
            read(values),
            json!({"a": true, "b": false, "c": 511, "d": 511, "e": 2, "f": 0, "g": "yes", "h": "1:30", "i": null})
        );
    }
}
