//! Strategic merge patch as kube's `strategicpatch` applies it to the built-in kinds served
//! here: a merge patch, except that the lists a Go type tags `patchStrategy:"merge"` are
//! merged (scalars by value, objects by their `patchMergeKey`) and ordered as kube orders
//! them, and the `$`-directives kubectl sends are understood: `$patch` (`replace`,
//! `delete`) on maps and list items, `$deleteFromPrimitiveList/<field>` and
//! `$setElementOrder/<field>`. `$retainKeys` is dropped (none of these kinds has a
//! `retainKeys` strategy).

use serde_json::{Map, Value};

/// A list a strategic merge patch merges rather than replaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MergeList {
    /// Its field path from the object's root.
    pub path: &'static [&'static str],
    /// The `patchMergeKey` of a list of objects; `None` for a list of scalars.
    pub key: Option<&'static str>,
}

/// ObjectMeta's merged lists, which every built-in kind has.
pub const OBJECT_META_LISTS: [MergeList; 2] = [
    MergeList { path: &["metadata", "finalizers"], key: None },
    MergeList { path: &["metadata", "ownerReferences"], key: Some("uid") },
];

const DELETE_FROM: &str = "$deleteFromPrimitiveList/";
const SET_ORDER: &str = "$setElementOrder/";

/// `patch` applied to `target`, with `lists` merged.
pub fn apply(target: &Value, patch: &Value, lists: &[MergeList]) -> Value {
    let mut out = target.clone();
    merge_value(&mut out, patch, &mut Vec::new(), lists);
    out
}

fn merge_list_at<'l>(path: &[&str], lists: &'l [MergeList]) -> Option<&'l MergeList> {
    lists.iter().find(|l| l.path == path)
}

fn merge_value<'p>(target: &mut Value, patch: &'p Value, path: &mut Vec<&'p str>, lists: &[MergeList]) {
    let Some(patch_map) = patch.as_object() else {
        *target = patch.clone();
        return;
    };
    match patch_map.get("$patch").and_then(Value::as_str) {
        Some("replace") => {
            let mut replaced = patch.clone();
            strip_directives(&mut replaced);
            *target = replaced;
            return;
        }
        Some("delete") => {
            *target = Value::Null;
            return;
        }
        _ => {}
    }
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Some(map) = target.as_object_mut() else { return };
    for (k, v) in patch_map {
        if k.starts_with('$') {
            continue;
        }
        path.push(k);
        let list = merge_list_at(path, lists);
        match (list, v, map.get(k)) {
            (_, Value::Null, _) => {
                map.remove(k);
            }
            (Some(list), Value::Array(items), _) => {
                let original = map.get(k).and_then(Value::as_array).cloned().unwrap_or_default();
                let order = patch_map.get(&format!("{SET_ORDER}{k}")).and_then(Value::as_array);
                let deleted = patch_map.get(&format!("{DELETE_FROM}{k}")).and_then(Value::as_array);
                let merged = merge_list(original, items, order, deleted, list.key, path, lists);
                map.insert(k.clone(), Value::Array(merged));
            }
            (_, Value::Object(_), _) => {
                let entry = map.entry(k.clone()).or_insert(Value::Null);
                merge_value(entry, v, path, lists);
                if entry.is_null() {
                    map.remove(k);
                }
            }
            _ => {
                map.insert(k.clone(), v.clone());
            }
        }
        path.pop();
    }
    // Directives for merged lists the patch does not otherwise name.
    for (k, v) in patch_map {
        let (field, order, deleted) = if let Some(f) = k.strip_prefix(DELETE_FROM) {
            (f, None, v.as_array())
        } else if let Some(f) = k.strip_prefix(SET_ORDER) {
            (f, v.as_array(), None)
        } else {
            continue;
        };
        if patch_map.contains_key(field) {
            continue;
        }
        path.push(field);
        if let Some(list) = merge_list_at(path, lists)
            && let Some(original) = map.get(field).and_then(Value::as_array).cloned()
        {
            let merged = merge_list(original, &[], order, deleted, list.key, path, lists);
            map.insert(field.to_string(), Value::Array(merged));
        }
        path.pop();
    }
}

/// The identity of a list item: itself for scalars, its merge key's value for objects.
fn identity<'v>(item: &'v Value, key: Option<&str>) -> Option<&'v Value> {
    match key {
        None => Some(item),
        Some(k) => item.get(k),
    }
}

fn index_of(list: &[Value], item: &Value, key: Option<&str>) -> Option<usize> {
    let id = identity(item, key)?;
    list.iter().position(|x| identity(x, key) == Some(id))
}

/// kube's `mergeSlice`: the merged items, then `normalizeElementOrder`.
fn merge_list<'p>(
    mut original: Vec<Value>,
    patch: &'p [Value],
    order: Option<&Vec<Value>>,
    deleted: Option<&Vec<Value>>,
    key: Option<&str>,
    path: &mut Vec<&'p str>,
    lists: &[MergeList],
) -> Vec<Value> {
    if let Some(deleted) = deleted {
        original.retain(|x| !deleted.contains(x));
    }
    let mut merged = original.clone();
    let mut patch_items: Vec<&Value> = Vec::new();
    match key {
        None => {
            for item in patch {
                if !merged.contains(item) {
                    merged.push(item.clone());
                }
                patch_items.push(item);
            }
        }
        Some(_) => {
            // `$patch: replace` in the list replaces it with the other items.
            if patch.iter().any(|i| i.get("$patch").and_then(Value::as_str) == Some("replace")) {
                return patch.iter().filter(|i| i.get("$patch").is_none()).cloned().collect();
            }
            for item in patch {
                let found = index_of(&merged, item, key);
                if item.get("$patch").and_then(Value::as_str) == Some("delete") {
                    if let Some(i) = found {
                        merged.remove(i);
                    }
                    continue;
                }
                match found {
                    Some(i) => merge_value(&mut merged[i], item, path, lists),
                    None => {
                        let mut new = Value::Null;
                        merge_value(&mut new, item, path, lists);
                        merged.push(new);
                    }
                }
                patch_items.push(item);
            }
        }
    }
    // The patch's order (or the one `$setElementOrder` gives) for the items it names, the
    // live order for the others, interleaved as kube's `mergeSortedSlice` does.
    let patch_order: Vec<Value> = match order {
        Some(o) => o.clone(),
        None => patch_items.into_iter().cloned().collect(),
    };
    let (mut named, mut server_only): (Vec<Value>, Vec<Value>) =
        merged.into_iter().partition(|x| index_of(&patch_order, x, key).is_some());
    named.sort_by_key(|x| index_of(&patch_order, x, key));
    server_only.sort_by_key(|x| index_of(&original, x, key));
    interleave(server_only, named, &original, key)
}

/// kube's `mergeSortedSlice`: each server-only item goes before the first named item
/// the live list has after it; named items new to the list come first.
fn interleave(left: Vec<Value>, right: Vec<Value>, live: &[Value], key: Option<&str>) -> Vec<Value> {
    let mut out = Vec::with_capacity(left.len() + right.len());
    let mut left = left.into_iter().peekable();
    let mut right = right.into_iter().peekable();
    loop {
        let take_left = match (left.peek(), right.peek()) {
            (None, None) => return out,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(l), Some(r)) => match (index_of(live, l, key), index_of(live, r, key)) {
                (Some(li), Some(ri)) => li < ri,
                _ => false,
            },
        };
        out.extend(if take_left { left.next() } else { right.next() });
    }
}

fn strip_directives(v: &mut Value) {
    if let Some(m) = v.as_object_mut() {
        m.retain(|k, _| !k.starts_with('$'));
        for child in m.values_mut() {
            strip_directives(child);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn finalizers(live: Value, patch: Value) -> Value {
        let target = json!({"metadata": {"finalizers": live}});
        apply(&target, &json!({"metadata": patch}), &OBJECT_META_LISTS)["metadata"]["finalizers"].clone()
    }

    /// The oracle's answers for a ConfigMap's finalizers.
    #[test]
    fn finalizers_merge_and_order_as_kube_orders_them() {
        assert_eq!(
            finalizers(json!(["a/1", "a/2", "a/3"]), json!({"finalizers": ["a/4", "a/2"]})),
            json!(["a/4", "a/1", "a/2", "a/3"])
        );
        assert_eq!(
            finalizers(
                json!(["a/4", "a/1", "a/2", "a/3"]),
                json!({"finalizers": ["a/5"], "$deleteFromPrimitiveList/finalizers": ["a/1"]})
            ),
            json!(["a/5", "a/4", "a/2", "a/3"])
        );
        assert_eq!(
            finalizers(
                json!(["a/5", "a/4", "a/2", "a/3"]),
                json!({"$setElementOrder/finalizers": ["a/3", "a/2"], "finalizers": ["a/2"]})
            ),
            json!(["a/5", "a/4", "a/3", "a/2"])
        );
        assert_eq!(finalizers(json!(["a/1"]), json!({"finalizers": []})), json!(["a/1"]));
        let target = json!({"metadata": {"finalizers": ["a/1"]}});
        assert_eq!(
            apply(&target, &json!({"metadata": {"finalizers": null}}), &OBJECT_META_LISTS),
            json!({"metadata": {}})
        );
    }
}
