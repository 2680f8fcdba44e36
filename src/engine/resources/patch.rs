//! Patches: JSON merge patch, JSON patch, and the strategic merge patch built-in kinds get.
//!
//! Custom resources refuse strategic merge patch (415), as kube-apiserver does, because the
//! server knows no merge keys for them. Built-in kinds here (namespaces, CRDs) have no
//! list with a merge key that kubectl patches, so their strategic merge patch is a merge
//! patch with the `$`-directives kubectl adds (`$setElementOrder/…`, `$retainKeys`)
//! understood and removed.

use serde_json::Value;

/// The patch types the API accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    Json,
    Merge,
    StrategicMerge,
    Apply,
}

impl PatchType {
    /// From a request's `Content-Type` (parameters ignored).
    pub fn from_content_type(ct: &str) -> Option<Self> {
        match ct.split(';').next().unwrap_or("").trim() {
            "application/json-patch+json" => Some(PatchType::Json),
            "application/merge-patch+json" => Some(PatchType::Merge),
            "application/strategic-merge-patch+json" => Some(PatchType::StrategicMerge),
            "application/apply-patch+yaml" | "application/apply-patch+cbor" => Some(PatchType::Apply),
            _ => None,
        }
    }
}

/// Why a patch could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    #[error("{0}")]
    Malformed(String),
    #[error("{0}")]
    Failed(String),
}

/// Applies a JSON merge patch (RFC 7386).
pub fn merge(target: &Value, patch_body: &[u8]) -> Result<Value, PatchError> {
    let patch: Value = serde_json::from_slice(patch_body).map_err(|e| PatchError::Malformed(e.to_string()))?;
    let mut out = target.clone();
    json_patch::merge(&mut out, &patch);
    Ok(out)
}

/// Applies a JSON patch (RFC 6902).
pub fn json(target: &Value, patch_body: &[u8]) -> Result<Value, PatchError> {
    let patch: json_patch::Patch =
        serde_json::from_slice(patch_body).map_err(|e| PatchError::Malformed(e.to_string()))?;
    // On a copy, dropped if an operation fails, so nothing needs undoing: json-patch's own
    // undo panics on some sequences (a `move` onto the parent of its `from`, then a failing
    // operation), and a request must never panic the server.
    let mut out = target.clone();
    json_patch::patch_unsafe(&mut out, &patch).map_err(|e| PatchError::Failed(e.to_string()))?;
    Ok(out)
}

/// A strategic merge patch for kinds with no merge-keyed lists: a merge patch once the
/// directives are taken out (`$patch: replace` on a map replaces it; `$patch: delete`
/// removes it).
pub fn strategic(target: &Value, patch_body: &[u8]) -> Result<Value, PatchError> {
    let patch: Value = serde_json::from_slice(patch_body).map_err(|e| PatchError::Malformed(e.to_string()))?;
    let mut out = target.clone();
    apply_strategic(&mut out, &patch);
    Ok(out)
}

fn apply_strategic(target: &mut Value, patch: &Value) {
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
        *target = Value::Object(Default::default());
    }
    let Some(map) = target.as_object_mut() else { return };
    for (k, v) in patch_map {
        if k.starts_with('$') {
            continue;
        }
        if v.is_null() {
            map.remove(k);
        } else if v.is_object() {
            let entry = map.entry(k.clone()).or_insert(Value::Null);
            apply_strategic(entry, v);
            if entry.is_null() {
                map.remove(k);
            }
        } else {
            map.insert(k.clone(), v.clone());
        }
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

    #[test]
    fn strategic_merge_drops_directives_and_merges() {
        let target = json!({"metadata": {"labels": {"a": "1", "b": "2"}}, "spec": {"x": [1, 2]}});
        let patch = br#"{"$setElementOrder/versions": [{"name": "v1"}], "metadata": {"labels": {"a": null, "c": "3"}}, "spec": {"x": [3]}}"#;
        assert_eq!(
            strategic(&target, patch).expect("patch"),
            json!({"metadata": {"labels": {"b": "2", "c": "3"}}, "spec": {"x": [3]}})
        );
    }

    #[test]
    fn merge_and_json_patches() {
        let target = json!({"spec": {"color": "red", "size": 1}});
        assert_eq!(merge(&target, br#"{"spec": {"size": null}}"#).expect("merge"), json!({"spec": {"color": "red"}}));
        assert_eq!(
            json(&target, br#"[{"op": "replace", "path": "/spec/color", "value": "blue"}]"#).expect("json"),
            json!({"spec": {"color": "blue", "size": 1}})
        );
        assert!(matches!(json(&target, br#"[{"op": "remove", "path": "/nope"}]"#), Err(PatchError::Failed(_))));
        // A move onto its own parent, then an operation that fails: refused, not a panic.
        let undo =
            br#"[{"op": "move", "from": "/spec/color", "path": "/spec"}, {"op": "remove", "path": "/spec/color"}]"#;
        let nested = json!({"spec": {"color": "red", "size": 3}});
        assert!(matches!(json(&nested, undo), Err(PatchError::Failed(_))));
        assert!(matches!(merge(&target, b"{not json"), Err(PatchError::Malformed(_))));
    }
}
