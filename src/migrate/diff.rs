//! The comparison behind validation and verification: is everything the backup holds
//! still there, with the same value?
//!
//! It is loss-oriented: a field of the backup that is missing or has another value is a
//! [`Change`]; a field only the cluster has (a default the new schema fills in, say) is an
//! addition, reported apart so that a schema with defaults does not make every migrated
//! object "different". Lists are compared whole; numbers by value (`1` equals `1.0`).

use serde_json::Value;

/// How a field differs.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase", tag = "type")]
pub enum Change {
    /// The backup has it; the cluster does not.
    Missing { path: String, expected: Value },
    /// Both have it, with different values.
    Changed { path: String, expected: Value, actual: Value },
    /// Only the cluster has it.
    Added { path: String, actual: Value },
}

impl Change {
    /// Whether this is a loss or a change (not an addition).
    pub fn is_loss(&self) -> bool {
        !matches!(self, Change::Added { .. })
    }

    pub fn path(&self) -> &str {
        match self {
            Change::Missing { path, .. } | Change::Changed { path, .. } | Change::Added { path, .. } => path,
        }
    }
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Change::Missing { path, expected } => write!(f, "{path}: missing (was {})", short(expected)),
            Change::Changed { path, expected, actual } => write!(f, "{path}: {} → {}", short(expected), short(actual)),
            Change::Added { path, actual } => write!(f, "{path}: added {}", short(actual)),
        }
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 60 { format!("{}…", s.chars().take(59).collect::<String>()) } else { s }
}

/// Compares `expected` (from the backup) with `actual` (from the cluster) under `path`.
pub fn compare(expected: &Value, actual: &Value, path: &str, out: &mut Vec<Change>) {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (k, ev) in e {
                let p = join(path, k);
                match a.get(k) {
                    Some(av) => compare(ev, av, &p, out),
                    None => out.push(Change::Missing { path: p, expected: ev.clone() }),
                }
            }
            for (k, av) in a {
                if !e.contains_key(k) {
                    out.push(Change::Added { path: join(path, k), actual: av.clone() });
                }
            }
        }
        _ if equal(expected, actual) => {}
        _ => out.push(Change::Changed { path: path.to_string(), expected: expected.clone(), actual: actual.clone() }),
    }
}

/// Compares what a migration keeps of two objects: every top-level field but
/// `apiVersion`, `kind` and `metadata` (so `spec`, `status` and any other data), and the
/// metadata's labels and annotations. Owner references are compared by the caller, after
/// mapping uids.
pub fn compare_objects(expected: &Value, actual: &Value) -> Vec<Change> {
    let mut out = Vec::new();
    let keys = |v: &Value| v.as_object().map(|m| m.keys().cloned().collect::<Vec<_>>()).unwrap_or_default();
    let mut all = keys(expected);
    all.extend(keys(actual));
    all.sort();
    all.dedup();
    for k in all.iter().filter(|k| !matches!(k.as_str(), "apiVersion" | "kind" | "metadata")) {
        field(expected.get(k), actual.get(k), k, &mut out);
    }
    for k in ["labels", "annotations"] {
        let meta = |v: &Value| v.get("metadata").and_then(|m| m.get(k)).cloned();
        field(meta(expected).as_ref(), meta(actual).as_ref(), &format!("metadata.{k}"), &mut out);
    }
    out
}

/// What of `expected` is lost or changed in `actual` ([`compare_objects`] without the
/// additions), as text; the status is left out unless `with_status`.
pub fn losses(expected: &Value, actual: &Value, with_status: bool) -> Vec<String> {
    let mut expected = expected.clone();
    if !with_status && let Some(m) = expected.as_object_mut() {
        m.remove("status");
    }
    compare_objects(&expected, actual).iter().filter(|c| c.is_loss()).map(ToString::to_string).collect()
}

fn field(e: Option<&Value>, a: Option<&Value>, path: &str, out: &mut Vec<Change>) {
    match (e, a) {
        (Some(e), Some(a)) => compare(e, a, path, out),
        (Some(e), None) => out.push(Change::Missing { path: path.into(), expected: e.clone() }),
        (None, Some(a)) => out.push(Change::Added { path: path.into(), actual: a.clone() }),
        (None, None) => {}
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_string() } else { format!("{path}.{key}") }
}

/// JSON equality with numbers compared by value.
fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| equal(a, b)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal(v, w)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn losses_and_additions_are_told_apart() {
        let backup = json!({"apiVersion": "a/v1", "kind": "A", "metadata": {"name": "x", "labels": {"l": "1"}},
            "spec": {"a": 1, "b": [1, 2], "c": {"d": "x"}}, "status": {"phase": "Ok"}});
        let cluster = json!({"apiVersion": "b/v1", "kind": "B", "metadata": {"name": "x", "uid": "u", "labels": {"l": "1"}},
            "spec": {"a": 1.0, "b": [1, 3], "c": {}, "e": true}, "status": {"phase": "Ok"}});
        let changes = compare_objects(&backup, &cluster);
        let text: Vec<String> = changes.iter().map(ToString::to_string).collect();
        assert_eq!(text, ["spec.b: [1,2] → [1,3]", "spec.c.d: missing (was \"x\")", "spec.e: added true"]);
        assert_eq!(changes.iter().filter(|c| c.is_loss()).count(), 2);
    }

    #[test]
    fn a_missing_status_or_label_set_is_a_loss() {
        let backup = json!({"metadata": {"annotations": {"a": "b"}}, "status": {"x": 1}});
        let cluster = json!({"metadata": {}});
        let changes = compare_objects(&backup, &cluster);
        assert_eq!(changes.iter().map(Change::path).collect::<Vec<_>>(), ["status", "metadata.annotations"]);
        assert!(changes.iter().all(Change::is_loss));
        assert!(compare_objects(&backup, &backup).is_empty());
    }
}
