//! Pruning: kube-apiserver drops every field a structural schema does not specify while
//! it decodes a custom resource, and reports the dropped paths (which become
//! `unknown field "spec.foo"` warnings, or an error with `fieldValidation=Strict`).
//!
//! `x-kubernetes-preserve-unknown-fields` keeps unknown fields of a node (its known
//! fields are still pruned inside); `apiVersion`, `kind` and `metadata` of the root and of
//! `x-kubernetes-embedded-resource` objects are left to the metadata coercion. Afterwards
//! `null` values of fields that are neither nullable nor defaulted are dropped as well
//! (`PruneNonNullableNullsWithoutDefaults`). Paths are kube's: `.` between fields and map
//! keys, `[i]` for list items, sorted.

use super::node::{Additional, Node};
use serde_json::Value;

const META_FIELDS: [&str; 3] = ["apiVersion", "kind", "metadata"];

fn join(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_string() } else { format!("{path}.{key}") }
}

/// The schema for a map value not among the properties, when `additionalProperties` is
/// set: `Some(None)` when it is a boolean (no schema, so everything inside is unknown).
fn additional(s: &Node) -> Option<Option<&Node>> {
    match &s.additional_properties {
        Additional::Absent => None,
        Additional::Allows(_) => Some(None),
        Additional::Schema(schema) => Some(Some(schema)),
    }
}

/// Prunes the resource `x` in place against its root schema `s` (the root keeps its
/// `apiVersion`, `kind` and `metadata` like an embedded resource) and returns the pruned
/// paths, sorted.
pub fn prune(x: &mut Value, s: &Node) -> Vec<String> {
    let mut out = Vec::new();
    if s.preserve_unknown_fields {
        skip_prune(x, s, true, "", &mut out);
    } else {
        prune_object(x, Some(s), true, "", &mut out);
    }
    out.sort();
    out
}

fn prune_node(x: &mut Value, s: Option<&Node>, path: &str, out: &mut Vec<String>) {
    if let Some(s) = s.filter(|s| s.preserve_unknown_fields) {
        skip_prune(x, s, false, path, out);
        return;
    }
    prune_object(x, s, false, path, out);
}

/// `root` marks the resource root, whose type and object metadata are never pruned.
fn prune_object(x: &mut Value, s: Option<&Node>, root: bool, path: &str, out: &mut Vec<String>) {
    match x {
        Value::Object(map) => {
            let Some(s) = s else {
                out.extend(map.keys().map(|k| join(path, k)));
                map.clear();
                return;
            };
            let keys: Vec<String> = map.keys().cloned().collect();
            for k in keys {
                if (root || s.embedded_resource) && META_FIELDS.contains(&k.as_str()) {
                    continue;
                }
                let child = if let Some(prop) = s.properties.get(&k) { Some(Some(prop)) } else { additional(s) };
                match child {
                    Some(schema) => {
                        if let Some(v) = map.get_mut(&k) {
                            prune_node(v, schema, &join(path, &k), out);
                        }
                    }
                    None => {
                        if !META_FIELDS.contains(&k.as_str()) || !path.is_empty() {
                            out.push(join(path, &k));
                        }
                        map.remove(&k);
                    }
                }
            }
        }
        Value::Array(items) => {
            let item_schema = s.and_then(|s| s.items.as_deref());
            for (i, v) in items.iter_mut().enumerate() {
                prune_node(v, item_schema, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// Inside `x-kubernetes-preserve-unknown-fields`: unknown fields stay, known ones are
/// pruned by their own schema.
fn skip_prune(x: &mut Value, s: &Node, root: bool, path: &str, out: &mut Vec<String>) {
    match x {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                if (root || s.embedded_resource) && META_FIELDS.contains(&k.as_str()) {
                    continue;
                }
                if let Some(prop) = s.properties.get(k) {
                    prune_node(v, Some(prop), &join(path, k), out);
                } else if let Some(schema) = additional(s) {
                    prune_node(v, schema, &join(path, k), out);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = s.items.as_deref() {
                for (i, v) in items.iter_mut().enumerate() {
                    skip_prune(v, item_schema, false, &format!("{path}[{i}]"), out);
                }
            }
        }
        _ => {}
    }
}

/// Drops `null` fields whose schema is neither nullable nor defaulted (the defaulted ones
/// get their default next).
pub fn prune_non_nullable_nulls(x: &mut Value, s: Option<&Node>) {
    match x {
        Value::Object(map) => {
            map.retain(|k, v| {
                let schema = s.and_then(|s| s.field(k));
                let drop = v.is_null() && schema.is_some_and(|c| !c.nullable && c.default.is_none());
                if !drop {
                    prune_non_nullable_nulls(v, schema);
                }
                !drop
            });
        }
        Value::Array(items) => {
            let item_schema = s.and_then(|s| s.items.as_deref());
            for v in items {
                prune_non_nullable_nulls(v, item_schema);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn root(v: Value) -> Node {
        Node::compile(&serde_json::from_value(v).expect("schema"))
    }

    #[test]
    fn unknown_fields_are_dropped_and_reported_in_kube_paths() {
        let s = root(json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "a": {"type": "string"},
                "list": {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "string"}}}},
                "map": {"type": "object", "additionalProperties": {"type": "object", "properties": {"k": {"type": "integer"}}}}
            }}
        }}));
        let mut obj = json!({
            "apiVersion": "x/v1", "kind": "X", "metadata": {"name": "n"}, "extra": 1,
            "spec": {"a": "x", "b": 2, "list": [{"n": "1", "z": true}], "map": {"one": {"k": 1, "q": 2}}}
        });
        let pruned = prune(&mut obj, &s);
        assert_eq!(pruned, ["extra", "spec.b", "spec.list[0].z", "spec.map.one.q"]);
        assert_eq!(
            obj,
            json!({"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "n"},
                   "spec": {"a": "x", "list": [{"n": "1"}], "map": {"one": {"k": 1}}}})
        );
    }

    #[test]
    fn preserve_unknown_fields_keeps_unknowns_but_prunes_known_children() {
        let s = root(json!({"type": "object", "properties": {
            "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {
                "inner": {"type": "object", "properties": {"k": {"type": "string"}}}
            }}
        }}));
        let mut obj = json!({"spec": {"free": {"any": 1}, "inner": {"k": "v", "drop": 1}}});
        assert_eq!(prune(&mut obj, &s), ["spec.inner.drop"]);
        assert_eq!(obj, json!({"spec": {"free": {"any": 1}, "inner": {"k": "v"}}}));
    }

    #[test]
    fn embedded_resources_keep_their_type_and_object_meta() {
        let s = root(json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "template": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {"spec": {"type": "object"}}}
        }}}}));
        let mut obj = json!({"spec": {"template": {"apiVersion": "v1", "kind": "Pod", "metadata": {}, "spec": {"x": 1}, "y": 2}}});
        assert_eq!(prune(&mut obj, &s), ["spec.template.spec.x", "spec.template.y"]);
    }

    #[test]
    fn nulls_go_unless_nullable_or_defaulted() {
        let s = root(json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "plain": {"type": "string"}, "nullable": {"type": "string", "nullable": true},
            "defaulted": {"type": "string", "default": "d"}
        }}}}));
        let mut obj = json!({"spec": {"plain": null, "nullable": null, "defaulted": null}});
        prune_non_nullable_nulls(&mut obj, Some(&s));
        assert_eq!(obj, json!({"spec": {"nullable": null, "defaulted": null}}));
    }
}
