//! Which of several decoding errors in a JSON body Go's decoder reports: it meets values in
//! the order the document gives them, saves the first value of the wrong type and goes on,
//! but stops at a time that does not parse (its `UnmarshalJSON` fails), which then wins.
//! The engine's objects keep their keys sorted (as a YAML body's, converted to JSON by
//! sorting, are in kube), so for a JSON body the order is read from its bytes here.
//!
//! The first error is found as the shortest prefix of the document (its values in document
//! order, each object or list holding only the members met so far) that has one: a value
//! added to a prefix never takes an error away.

use super::types::GoStruct;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;

/// The error Go's decoder gives for `raw`, a JSON body that decodes into `go` with an error
/// somewhere; `None` if `raw` is no JSON or has no such error.
pub fn first_decode_error(raw: &[u8], go: &'static GoStruct) -> Option<String> {
    let doc: Ordered = serde_json::from_slice(raw).ok()?;
    let (at, why) = first(&doc, |v| go.time_error(v)).or_else(|| first(&doc, |v| go.type_error(v)))?;
    Some(match nth_number(raw, at) {
        Some(literal) => with_literal(why, literal),
        None => why,
    })
}

/// Go's `UnmarshalTypeError` names a number by its text in the body (`1e2`, `2147483648`),
/// which the parsed value has lost (`100.0`): the error's number written as `literal`.
fn with_literal(why: String, literal: &str) -> String {
    const HEAD: &str = "json: cannot unmarshal number ";
    match why.strip_prefix(HEAD).and_then(|rest| rest.split_once(" into ")) {
        Some((_, tail)) => format!("{HEAD}{literal} into {tail}"),
        None => why,
    }
}

/// `check`'s answer for the shortest prefix of `doc` it answers for, and that prefix's
/// size: the value it ends with, counted in document order from 1, is the one in error.
fn first(doc: &Ordered, check: impl Fn(&Value) -> Option<String>) -> Option<(usize, String)> {
    let (mut lo, mut hi) = (1, doc.size());
    check(&doc.prefix(hi))?;
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match check(&doc.prefix(mid)) {
            Some(_) => hi = mid,
            None => lo = mid + 1,
        }
    }
    check(&doc.prefix(lo)).map(|why| (lo, why))
}

/// The text of the `n`th value of JSON `raw` in document order (from 1, as
/// [`Ordered::size`] counts), when it is a number. Keys are no values: a string is a key
/// when a `:` follows it.
fn nth_number(raw: &[u8], n: usize) -> Option<&str> {
    let (mut i, mut seen) = (0, 0);
    while i < raw.len() {
        let start = i;
        match raw[i] {
            b'"' => {
                i += 1;
                while i < raw.len() && raw[i] != b'"' {
                    i += if raw[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                let next = raw.get(i..).and_then(|rest| rest.iter().find(|b| !b.is_ascii_whitespace()));
                if next != Some(&b':') {
                    seen += 1;
                }
            }
            b'-' | b'0'..=b'9' => {
                while i < raw.len() && matches!(raw[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') {
                    i += 1;
                }
                seen += 1;
                if seen == n {
                    return std::str::from_utf8(&raw[start..i]).ok();
                }
            }
            b'{' | b'[' | b't' | b'f' | b'n' => {
                seen += 1;
                i += 1;
                while raw[start].is_ascii_alphabetic() && i < raw.len() && raw[i].is_ascii_alphabetic() {
                    i += 1;
                }
            }
            _ => i += 1,
        }
        if seen >= n {
            return None;
        }
    }
    None
}

/// A JSON value with its members in document order.
enum Ordered {
    Object(Vec<(String, Ordered)>),
    Array(Vec<Ordered>),
    Scalar(Value),
}

impl Ordered {
    /// How many values it holds, itself included.
    fn size(&self) -> usize {
        1 + match self {
            Ordered::Object(members) => members.iter().map(|(_, v)| v.size()).sum(),
            Ordered::Array(items) => items.iter().map(Ordered::size).sum(),
            Ordered::Scalar(_) => 0,
        }
    }

    /// The first `n` values in document order, as the engine holds JSON (a repeated key
    /// keeps its last value, as Go's decoder does).
    fn prefix(&self, n: usize) -> Value {
        let mut budget = n;
        self.take(&mut budget)
    }

    fn take(&self, budget: &mut usize) -> Value {
        *budget = budget.saturating_sub(1);
        match self {
            Ordered::Scalar(v) => v.clone(),
            Ordered::Object(members) => {
                let mut map = Map::new();
                for (k, v) in members {
                    if *budget == 0 {
                        break;
                    }
                    map.insert(k.clone(), v.take(budget));
                }
                Value::Object(map)
            }
            Ordered::Array(items) => {
                let mut list = Vec::new();
                for v in items {
                    if *budget == 0 {
                        break;
                    }
                    list.push(v.take(budget));
                }
                Value::Array(list)
            }
        }
    }
}

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(OrderedVisitor)
    }
}

struct OrderedVisitor;

impl<'de> Visitor<'de> for OrderedVisitor {
    type Value = Ordered;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Ordered, E> {
        Ok(Ordered::Scalar(Value::Bool(v)))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Ordered, E> {
        Ok(Ordered::Scalar(Value::from(v)))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Ordered, E> {
        Ok(Ordered::Scalar(Value::from(v)))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Ordered, E> {
        Ok(Ordered::Scalar(Value::from(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Ordered, E> {
        Ok(Ordered::Scalar(Value::from(v)))
    }

    fn visit_unit<E>(self) -> Result<Ordered, E> {
        Ok(Ordered::Scalar(Value::Null))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Ordered, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Ordered::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
        let mut members = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Ordered>()? {
            members.push((k, v));
        }
        Ok(Ordered::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use super::super::types::CONFIG_MAP;
    use super::*;

    #[test]
    fn go_reports_the_first_error_it_meets_and_a_time_over_any() {
        let first = |raw: &str| first_decode_error(raw.as_bytes(), &CONFIG_MAP);
        let map =
            "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type map[string]string";
        let data = "json: cannot unmarshal array into Go struct field ConfigMap.data of type map[string]string";
        assert_eq!(first(r#"{"metadata":{"labels":5},"data":[]}"#).as_deref(), Some(map));
        assert_eq!(first(r#"{"data":[],"metadata":{"labels":5}}"#).as_deref(), Some(data));
        assert_eq!(
            first(r#"{"data":{"b":1,"a":[]}}"#).as_deref(),
            Some("json: cannot unmarshal number into Go struct field ConfigMap.data of type string")
        );
        assert!(
            first(r#"{"data":[],"metadata":{"creationTimestamp":"x"}}"#).is_some_and(|e| e.starts_with("parsing time"))
        );
        assert_eq!(first(r#"{"data":{"a":"b"}}"#), None);
        assert_eq!(first("not json"), None);
    }

    #[test]
    fn a_number_is_named_by_its_text_in_the_body() {
        use super::super::types::LEASE;
        let first = |raw: &str| first_decode_error(raw.as_bytes(), &LEASE);
        let duration = |n: &str| {
            format!(
                "json: cannot unmarshal number {n} into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32"
            )
        };
        for n in ["1e2", "1E+2", "0e0", "2147483648", "-9223372036854775809", "18446744073709551616", "4.9e-324", "1.0"]
        {
            let body = format!(
                r#"{{"metadata":{{"name":"a:b","labels":{{"k":"1e2"}}}},"spec":{{"holderIdentity":"x","leaseDurationSeconds": {n}}}}}"#
            );
            assert_eq!(first(&body), Some(duration(n)), "{n}");
        }
        assert_eq!(nth_number(br#"{"a":[1, "b", {"c": -2.5e3}], "d": true}"#, 6), Some("-2.5e3"));
        assert_eq!(nth_number(br#"{"a":"\"", "b": 7}"#, 3), Some("7"));
        assert_eq!(nth_number(br#"{"a": null, "b": 7}"#, 2), None);
    }
}
