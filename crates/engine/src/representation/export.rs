//! `export`: an object with the fields the server sets cleared, ready to be applied to
//! another cluster (what `kubectl get --export` used to do, and what the representations
//! proposal keeps as `export=1` / `?export=1`).

use serde_json::Value;

/// Metadata fields the server owns.
const SERVER_METADATA: &[&str] = &[
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "selfLink",
];

/// Clears the server-set fields of one object: its uid, resourceVersion, generation,
/// timestamps, managedFields and its status.
pub fn export_object(obj: &mut Value) {
    let Some(map) = obj.as_object_mut() else { return };
    map.remove("status");
    if let Some(meta) = map.get_mut("metadata").and_then(Value::as_object_mut) {
        for field in SERVER_METADATA {
            meta.remove(*field);
        }
    }
}

/// Clears the server-set fields of every item of a list, and the list's resourceVersion.
pub fn export_list(list: &mut Value) {
    if let Some(items) = list.get_mut("items").and_then(Value::as_array_mut) {
        items.iter_mut().for_each(export_object);
    }
    if let Some(meta) = list.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("resourceVersion");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn server_fields_go_user_fields_stay() {
        let mut obj = json!({"apiVersion": "g/v1", "kind": "W", "metadata": {"name": "w", "namespace": "d", "uid": "u",
            "resourceVersion": "3", "generation": 2, "creationTimestamp": "t", "managedFields": [], "labels": {"a": "b"},
            "finalizers": ["f"]}, "spec": {"x": 1}, "status": {"phase": "Ready"}});
        export_object(&mut obj);
        assert_eq!(
            obj,
            json!({"apiVersion": "g/v1", "kind": "W", "metadata": {"name": "w", "namespace": "d",
            "labels": {"a": "b"}, "finalizers": ["f"]}, "spec": {"x": 1}})
        );
        let mut list = json!({"items": [{"metadata": {"uid": "u", "name": "a"}}], "metadata": {"resourceVersion": "9", "continue": "c"}});
        export_list(&mut list);
        assert_eq!(list, json!({"items": [{"metadata": {"name": "a"}}], "metadata": {"continue": "c"}}));
    }
}
