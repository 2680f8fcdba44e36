//! Defaulting: kube-apiserver fills `default` values of a structural schema into a custom
//! resource while decoding it (after pruning), at every depth: fields of objects, values
//! of maps and items of lists.
//!
//! A default applies when the field is absent, or `null` while the schema is not
//! nullable. Defaults come from the structural spine only (`properties`, `items`,
//! `additionalProperties`), never from inside `allOf`/`anyOf`/`oneOf`/`not`.

use super::node::Node;
use serde_json::Value;

fn is_non_nullable_null(x: &Value, s: &Node) -> bool {
    x.is_null() && !s.nullable
}

/// Applies the defaults of `s` to `x`, recursively.
pub fn default(x: &mut Value, s: &Node) {
    match x {
        Value::Object(map) => {
            for (k, prop) in &s.properties {
                let Some(d) = &prop.default else { continue };
                if map.get(k).is_none_or(|v| is_non_nullable_null(v, prop)) {
                    map.insert(k.clone(), d.clone());
                }
            }
            for (k, v) in map.iter_mut() {
                if let Some(prop) = s.properties.get(k) {
                    default(v, prop);
                } else if let Some(additional) = s.additional_schema() {
                    if let Some(d) = additional.default.as_ref().filter(|_| is_non_nullable_null(v, additional)) {
                        *v = d.clone();
                    }
                    default(v, additional);
                }
            }
        }
        Value::Array(items) => {
            let Some(item_schema) = s.items.as_deref() else { return };
            for v in items {
                if let Some(d) = item_schema.default.as_ref().filter(|_| is_non_nullable_null(v, item_schema)) {
                    *v = d.clone();
                }
                default(v, item_schema);
            }
        }
        _ => {}
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
    fn defaults_fill_absent_fields_at_every_depth() {
        let s = node(json!({"type": "object", "properties": {"spec": {"type": "object", "default": {}, "properties": {
            "replicas": {"type": "integer", "default": 1},
            "ports": {"type": "array", "items": {"type": "object", "properties": {
                "protocol": {"type": "string", "default": "TCP"}}}},
            "limits": {"type": "object", "additionalProperties": {"type": "object", "properties": {
                "max": {"type": "integer", "default": 10}}}}
        }}}}));
        let mut obj = json!({});
        default(&mut obj, &s);
        assert_eq!(obj, json!({"spec": {"replicas": 1}}));
        let mut obj = json!({"spec": {"replicas": 3, "ports": [{}, {"protocol": "UDP"}], "limits": {"cpu": {}}}});
        default(&mut obj, &s);
        assert_eq!(
            obj,
            json!({"spec": {"replicas": 3, "ports": [{"protocol": "TCP"}, {"protocol": "UDP"}], "limits": {"cpu": {"max": 10}}}})
        );
    }

    #[test]
    fn null_is_defaulted_unless_nullable() {
        let s = node(json!({"type": "object", "properties": {
            "a": {"type": "string", "default": "x"},
            "b": {"type": "string", "default": "y", "nullable": true},
            "list": {"type": "array", "items": {"type": "string", "default": "z"}}
        }}));
        let mut obj = json!({"a": null, "b": null, "list": [null, "q"]});
        default(&mut obj, &s);
        assert_eq!(obj, json!({"a": "x", "b": null, "list": ["z", "q"]}));
    }
}
