//! The uniqueness invariants of `x-kubernetes-list-type` (kube's `listtype` package):
//! items of a `set` list are unique, and items of a `map` list are objects with unique
//! `x-kubernetes-list-map-keys`. Each repeated item is reported once, at its second
//! appearance, as `Duplicate value` (printed as Go prints the item or its key map).

use super::gofmt;
use super::gofmt::with_value;
use super::node::Node;
use crate::field::{ErrorType, FieldError, Path};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// Every list-type violation in `obj` (an object validated by `s`).
pub fn validate(path: &Path, s: &Node, obj: &Map<String, Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if !s.unique_lists_below {
        return errs;
    }
    if let Some(additional) = s.additional_schema() {
        for (k, v) in obj {
            errs.extend(validate_value(&path.key(k), additional, v));
        }
    }
    for (k, v) in obj {
        if let Some(prop) = s.properties.get(k) {
            errs.extend(validate_value(&path.child(k), prop, v));
        }
    }
    errs
}

fn validate_value(path: &Path, s: &Node, v: &Value) -> Vec<FieldError> {
    if !s.unique_lists_below {
        return vec![];
    }
    match v {
        Value::Array(items) => validate_array(path, s, items),
        Value::Object(map) => validate(path, s, map),
        _ => vec![],
    }
}

fn validate_array(path: &Path, s: &Node, items: &[Value]) -> Vec<FieldError> {
    let mut errs = Vec::new();
    match s.list_type.as_deref() {
        Some("set") => {
            for i in first_repeats(items) {
                errs.push(duplicate(path.index(i), &items[i]));
            }
        }
        Some("map") => errs.extend(validate_map_list(path, s, items)),
        _ => {}
    }
    if let Some(item_schema) = s.items.as_deref() {
        for (i, item) in items.iter().enumerate() {
            errs.extend(validate_value(&path.index(i), item_schema, item));
        }
    }
    errs
}

fn duplicate(path: Path, v: &Value) -> FieldError {
    with_value(ErrorType::Duplicate, path, v, String::new())
}

/// What two items must share to be the same: scalars compare by Go value (an integer
/// never equals a float), compound values by their JSON encoding.
fn identity(v: &Value) -> String {
    match v {
        Value::Object(_) | Value::Array(_) => format!("c{}", super::validate::go_json(v)),
        Value::Number(n) => match gofmt::GoNumber::of(n) {
            gofmt::GoNumber::Int(i) => format!("i{i}"),
            gofmt::GoNumber::Float(f) => format!("f{}", f.to_bits()),
        },
        Value::String(s) => format!("s{s}"),
        Value::Bool(b) => format!("b{b}"),
        Value::Null => "n".into(),
    }
}

/// Indices of the second appearance of every repeated value.
fn first_repeats(values: &[Value]) -> Vec<usize> {
    first_repeats_of(values.iter().map(identity))
}

fn first_repeats_of(ids: impl Iterator<Item = String>) -> Vec<usize> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut repeats = Vec::new();
    for (i, id) in ids.enumerate() {
        let times = seen.entry(id).or_insert(0);
        *times += 1;
        if *times == 2 {
            repeats.push(i);
        }
    }
    repeats
}

fn validate_map_list(path: &Path, s: &Node, items: &[Value]) -> Vec<FieldError> {
    if let Some(i) = items.iter().position(|x| !x.is_null() && !x.is_object()) {
        return vec![with_value(
            ErrorType::Invalid,
            path.index(i),
            &items[i],
            "must be an object for an array of list-type map".into(),
        )];
    }
    if items.len() <= 1 {
        return vec![];
    }
    let keys: Vec<Map<String, Value>> = items
        .iter()
        .map(|x| {
            let obj = x.as_object();
            s.list_map_keys.iter().filter_map(|k| obj.and_then(|o| o.get(k)).map(|v| (k.clone(), v.clone()))).collect()
        })
        .collect();
    let ids = keys.iter().map(|k| {
        if s.list_map_keys.len() == 1 {
            // One key: compared as the key's value itself, an unset key being its own value.
            k.values().next().map_or_else(|| "unset".to_string(), identity)
        } else {
            identity(&Value::Object(k.clone()))
        }
    });
    first_repeats_of(ids).into_iter().map(|i| duplicate(path.index(i), &Value::Object(keys[i].clone()))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(schema: Value, obj: Value) -> Vec<String> {
        let s = Node::compile(&serde_json::from_value(schema).expect("schema"));
        let obj = obj.as_object().cloned().unwrap_or_default();
        validate(&Path::default(), &s, &obj).iter().map(ToString::to_string).collect()
    }

    #[test]
    fn set_items_are_unique() {
        let schema = json!({"type": "object", "properties": {"tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}}});
        assert_eq!(check(schema.clone(), json!({"tags": ["a", "b", "a", "a"]})), ["tags[2]: Duplicate value: \"a\""]);
        assert!(check(schema, json!({"tags": ["a", "b"]})).is_empty());
        let numbers = json!({"type": "object", "properties": {"n": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "number"}}}});
        assert!(check(numbers, json!({"n": [1, 1.0]})).is_empty());
    }

    #[test]
    fn map_list_keys_are_unique() {
        let schema = json!({"type": "object", "properties": {"ports": {
            "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}
        }}});
        assert_eq!(
            check(schema.clone(), json!({"ports": [{"name": "http", "port": 80}, {"name": "http", "port": 81}]})),
            [r#"ports[1]: Duplicate value: map[string]interface {}{"name":"http"}"#]
        );
        assert_eq!(
            check(schema, json!({"ports": [{"name": "a"}, "x"]})),
            [r#"ports[1]: Invalid value: "x": must be an object for an array of list-type map"#]
        );
    }

    #[test]
    fn multi_key_maps_compare_all_keys_and_nest_under_map_keys() {
        let schema = json!({"type": "object", "properties": {"m": {"type": "object", "additionalProperties": {
            "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["a", "b"],
            "items": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}}
        }}}});
        assert_eq!(
            check(schema, json!({"m": {"k": [{"a": "x", "b": 1}, {"a": "x", "b": 2}, {"b": 1, "a": "x"}]}})),
            [r#"m[k][2]: Duplicate value: map[string]interface {}{"a":"x", "b":1}"#]
        );
    }
}
