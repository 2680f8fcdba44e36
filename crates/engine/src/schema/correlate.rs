//! Correlation of an updated value with its old value, as kube's `CorrelatedObject`.
//!
//! On update, kube-apiserver pairs each node of the new object with the node at the same
//! place in the old object: object fields by name, and list items only in
//! `x-kubernetes-list-type: map` lists (by their map keys); other list items are not
//! correlated. A correlated node that is unchanged has its validation errors ratcheted
//! (dropped), and CEL transition rules see its old value as `oldSelf`.

use super::node::Node;
use serde_json::Value;

/// The old value of field `key`, when both objects have it and the schema knows it.
pub fn field<'a>(node: Option<&Node>, old: Option<&'a Value>, key: &str) -> Option<&'a Value> {
    node.and_then(|n| n.field(key))?;
    old?.as_object()?.get(key)
}

/// The composite key of a map-list item: the values of its `x-kubernetes-list-map-keys`
/// (a missing key takes its schema default). `None` when the item is not an object or a
/// key is not a scalar.
fn map_key(list: &Node, item: &Value) -> Option<Vec<Value>> {
    let obj = item.as_object()?;
    list.list_map_keys
        .iter()
        .map(|k| {
            let v = obj.get(k).cloned().or_else(|| list.items.as_ref()?.properties.get(k)?.default.clone())?;
            matches!(v, Value::String(_) | Value::Number(_) | Value::Bool(_)).then_some(v)
        })
        .collect()
}

/// The old item correlated with `item` in a list: only map lists correlate, by key.
pub fn item<'a>(list: Option<&Node>, old: Option<&'a Value>, item: &Value) -> Option<&'a Value> {
    let list = list.filter(|l| l.is_list_type("map"))?;
    let key = map_key(list, item)?;
    old?.as_array()?.iter().find(|o| map_key(list, o).as_ref() == Some(&key))
}

/// kube's `CachedDeepEqual`: objects are equal when every field is correlatable and
/// equal, map lists when every item finds an equal old item by key, other lists and
/// scalars when they are deeply equal.
pub fn equal(node: Option<&Node>, new: &Value, old: &Value) -> bool {
    match (new, old) {
        (Value::Object(n), Value::Object(o)) => {
            if n.len() != o.len() {
                return false;
            }
            if n.is_empty() {
                return true;
            }
            n.iter().all(|(k, v)| match (node.and_then(|s| s.field(k)), o.get(k)) {
                (Some(child), Some(ov)) => equal(Some(child), v, ov),
                _ => false,
            })
        }
        (Value::Array(n), Value::Array(o)) => {
            if n.len() != o.len() {
                return false;
            }
            match node.filter(|s| s.is_list_type("map")) {
                Some(list) => n.iter().all(|v| match item(Some(list), Some(old), v) {
                    Some(ov) => equal(list.items.as_deref(), v, ov),
                    None => false,
                }),
                None => new == old,
            }
        }
        _ => new == old,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(v: Value) -> Node {
        Node::compile(&serde_json::from_value(v).expect("schema"))
    }

    #[test]
    fn map_lists_correlate_by_key_and_ignore_order() {
        let list = node(json!({
            "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object", "properties": {"name": {"type": "string"}, "v": {"type": "integer"}}}
        }));
        let old = json!([{"name": "a", "v": 1}, {"name": "b", "v": 2}]);
        assert_eq!(item(Some(&list), Some(&old), &json!({"name": "b", "v": 9})), Some(&json!({"name": "b", "v": 2})));
        assert!(equal(Some(&list), &json!([{"name": "b", "v": 2}, {"name": "a", "v": 1}]), &old));
        assert!(!equal(Some(&list), &json!([{"name": "b", "v": 2}, {"name": "a", "v": 3}]), &old));
    }

    #[test]
    fn other_lists_do_not_correlate_items() {
        let list = node(json!({"type": "array", "items": {"type": "string"}}));
        assert_eq!(item(Some(&list), Some(&json!(["a"])), &json!("a")), None);
        assert!(equal(Some(&list), &json!(["a"]), &json!(["a"])));
    }

    #[test]
    fn unknown_fields_are_never_equal() {
        let obj = node(json!({"type": "object", "properties": {"a": {"type": "string"}}}));
        assert!(equal(Some(&obj), &json!({"a": "x"}), &json!({"a": "x"})));
        assert!(!equal(Some(&obj), &json!({"b": "x"}), &json!({"b": "x"})));
        assert!(!equal(Some(&obj), &json!({"a": 1}), &json!({"a": 1.0})));
    }
}
