//! Who owns which field of an object, as server-side apply records it: every field path
//! of each `metadata.managedFields` entry's `fieldsV1` set, with the entry's manager,
//! operation (Apply or Update), subresource and time — what `kubectl-blame` shows. Pure:
//! the TUI's field owners view (`M` on a resource) draws it.
//!
//! A fieldsV1 set is a tree of keys: `f:name` a field, `k:{"port":80}` a list item by its
//! keys, `v:"x"` a set item by value, `i:0` an item by index, and `.` the node itself
//! (a map or list owned as a whole besides its members).

use serde_json::Value;

/// One owned field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owned {
    /// `spec.ports[port=80].name`.
    pub path: String,
    pub manager: String,
    pub operation: String,
    /// `status`, `scale`, or empty for the main resource.
    pub subresource: String,
    pub time: String,
}

/// Every field each managedFields entry owns, in path order (a field owned by several
/// managers, as an Apply and an Update can share one, is listed once per owner).
pub fn field_owners(obj: &Value) -> Vec<Owned> {
    let entries = obj.pointer("/metadata/managedFields").and_then(Value::as_array).map(Vec::as_slice);
    let mut out = vec![];
    for entry in entries.unwrap_or_default() {
        let text = |k: &str| entry.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
        let mut paths = vec![];
        if let Some(fields) = entry.get("fieldsV1").and_then(Value::as_object) {
            walk("", fields, &mut paths);
        }
        out.extend(paths.into_iter().map(|path| Owned {
            path,
            manager: text("manager"),
            operation: text("operation"),
            subresource: text("subresource"),
            time: text("time"),
        }));
    }
    out.sort_by(|a, b| a.path.cmp(&b.path).then_with(|| a.manager.cmp(&b.manager)));
    out
}

fn walk(prefix: &str, node: &serde_json::Map<String, Value>, out: &mut Vec<String>) {
    for (key, child) in node {
        if key == "." {
            out.push(prefix.to_string());
            continue;
        }
        let path = join(prefix, key);
        match child.as_object() {
            Some(members) if !members.is_empty() => walk(&path, members, out),
            _ => out.push(path),
        }
    }
}

/// `prefix` and one fieldsV1 key as a path: `.name`, `[port=80]`, `[="x"]`, `[0]`.
fn join(prefix: &str, key: &str) -> String {
    let (kind, rest) = key.split_at(key.find(':').map_or(0, |i| i + 1));
    let segment = match kind {
        "f:" if prefix.is_empty() => return rest.to_string(),
        "f:" => return format!("{prefix}.{rest}"),
        "k:" => match serde_json::from_str::<serde_json::Map<String, Value>>(rest) {
            Ok(keys) => {
                let pairs: Vec<String> = keys
                    .iter()
                    .map(|(k, v)| format!("{k}={}", v.as_str().map_or_else(|| v.to_string(), String::from)))
                    .collect();
                format!("[{}]", pairs.join(","))
            }
            Err(_) => format!("[{rest}]"),
        },
        "v:" => format!("[={rest}]"),
        "i:" => format!("[{rest}]"),
        _ => format!("[{key}]"),
    };
    format!("{prefix}{segment}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn paths(fields: Value) -> Vec<String> {
        let obj = json!({"metadata": {"managedFields": [{"manager": "m", "operation": "Apply", "fieldsV1": fields}]}});
        field_owners(&obj).into_iter().map(|o| o.path).collect()
    }

    #[test]
    fn fields_v1_keys_become_paths() {
        let cases: [(&str, Value, &[&str]); 6] = [
            ("nothing", json!({}), &[]),
            ("plain fields", json!({"f:spec": {"f:size": {}, "f:color": {}}}), &["spec.color", "spec.size"]),
            (
                "a map owned itself and through a member",
                json!({"f:metadata": {"f:labels": {".": {}, "f:app": {}}}}),
                &["metadata.labels", "metadata.labels.app"],
            ),
            (
                "list items by key",
                json!({"f:spec": {"f:ports": {"k:{\"port\":80,\"protocol\":\"TCP\"}": {".": {}, "f:name": {}}}}}),
                &["spec.ports[port=80,protocol=TCP]", "spec.ports[port=80,protocol=TCP].name"],
            ),
            ("set items by value", json!({"f:spec": {"f:finalizers": {"v:\"a\"": {}}}}), &["spec.finalizers[=\"a\"]"]),
            ("items by index", json!({"f:args": {"i:0": {}}}), &["args[0]"]),
        ];
        for (what, fields, want) in cases {
            assert_eq!(paths(fields), want, "{what}");
        }
    }

    #[test]
    fn each_owner_with_its_operation_subresource_and_time() {
        let obj = json!({"metadata": {"managedFields": [
            {"manager": "kubectl", "operation": "Apply", "time": "2026-11-26T08:00:00Z", "fieldsV1": {"f:spec": {"f:size": {}}}},
            {"manager": "ctl", "operation": "Update", "subresource": "status", "time": "2026-11-26T08:01:00Z",
                "fieldsV1": {"f:status": {"f:ready": {}}}},
            {"manager": "broken", "operation": "Update"}
        ]}});
        let owners = field_owners(&obj);
        let rows: Vec<(&str, &str, &str, &str)> = owners
            .iter()
            .map(|o| (o.path.as_str(), o.manager.as_str(), o.operation.as_str(), o.subresource.as_str()))
            .collect();
        assert_eq!(rows, [("spec.size", "kubectl", "Apply", ""), ("status.ready", "ctl", "Update", "status")]);
        assert_eq!(owners[1].time, "2026-11-26T08:01:00Z");
        assert!(field_owners(&json!({"metadata": {}})).is_empty());
    }
}
