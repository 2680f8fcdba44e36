//! A user's edit carried over to a newer version of what they edited: the TUI's `r` after a
//! 409 and the subcommands' `--retry-conflicts` both re-apply only what the user changed,
//! so whatever someone else changed meanwhile stays. The patches come from
//! [`super::merge_patch`].
//!
//! The edit is the JSON merge patch (RFC 7386) from the document as shown (`base`) to the
//! document as saved (`edited`); the other writer's changes are the patch from `base` to
//! the server's current document. When both patches set the same field to different
//! values the edit is not re-applied: one of the two changes would be lost, and only the
//! user can say which. Pure functions of the documents.

use super::merge_patch::merge_diff;
use serde_json::Value;

/// Bookkeeping the server changes on every write; nobody edits it by hand.
const BOOKKEEPING: [&str; 3] = ["metadata.resourceVersion", "metadata.managedFields", "metadata.generation"];

/// Fields both the user and another writer changed, differently.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("both your edit and another writer changed {}", fields.join(", "))]
pub struct Overlap {
    /// Dotted paths (`spec.workers`).
    pub fields: Vec<String>,
}

/// The user's edit (`base → edited`) re-applied on `current`, the same document of the
/// server's new version; refused when the server changed a field the edit changed too
/// (to another value).
pub fn reapply(current: &Value, base: &Value, edited: &Value) -> Result<Value, Overlap> {
    let mut mine = merge_diff(base, edited);
    // The edit's resourceVersion is the one that conflicted: the new version's wins.
    if let Some(meta) = mine.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("resourceVersion");
    }
    let theirs = merge_diff(base, current);
    let mut doc = current.clone();
    json_patch::merge(&mut doc, &mine);
    let mut fields = vec![];
    overlaps("", &mine, &theirs, &doc, current, &mut fields);
    if fields.is_empty() { Ok(doc) } else { Err(Overlap { fields }) }
}

/// Collects the paths both patches touch where the result of the user's patch differs
/// from what the server has: the same change on both sides is no conflict.
fn overlaps(path: &str, mine: &Value, theirs: &Value, merged: &Value, current: &Value, out: &mut Vec<String>) {
    let (Value::Object(mine), Value::Object(theirs)) = (mine, theirs) else {
        if merged != current && !BOOKKEEPING.contains(&path) {
            out.push(path.to_string());
        }
        return;
    };
    for (k, m) in mine {
        let Some(t) = theirs.get(k) else { continue };
        let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
        let at = |v: &Value| v.get(k).cloned().unwrap_or(Value::Null);
        overlaps(&p, m, t, &at(merged), &at(current), out);
    }
}

/// Field paths whose value differs, as `~ a.b: old → new`, `+ a.c: v`, `- a.d`; server-set
/// bookkeeping (resourceVersion, managedFields, generation) is left out.
pub fn changes(old: &Value, new: &Value) -> Vec<String> {
    super::diff::diff(old, new, &BOOKKEEPING).iter().map(|c| c.line(40)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(rv: &str, spec: Value) -> Value {
        json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1", "resourceVersion": rv, "generation": 1}, "spec": spec})
    }

    #[test]
    fn only_the_user_s_changes_are_reapplied_and_the_server_s_stay() {
        let base = doc("5", json!({"size": 1, "color": "red", "workers": 3}));
        let edited = doc("5", json!({"size": 4, "color": "red", "workers": 3}));
        let mut current = doc("9", json!({"size": 1, "color": "red", "workers": 9}));
        current["metadata"]["generation"] = json!(2);
        let again = reapply(&current, &base, &edited).expect("no overlap");
        assert_eq!(again["spec"], json!({"size": 4, "color": "red", "workers": 9}));
        assert_eq!(again["metadata"]["resourceVersion"], "9");
        assert_eq!(changes(&base, &current), ["~ spec.workers: 3 → 9"]);
    }

    #[test]
    fn a_field_both_changed_refuses_unless_both_made_the_same_change() {
        let base = doc("5", json!({"size": 1, "workers": 3, "tags": {"a": "1"}}));
        let edited = doc("5", json!({"size": 2, "workers": 4, "tags": {"a": "2"}}));
        let current = doc("9", json!({"size": 2, "workers": 9}));
        let overlap = reapply(&current, &base, &edited).expect_err("workers and tags overlap");
        assert_eq!(overlap.fields, ["spec.tags", "spec.workers"]);
        assert_eq!(overlap.to_string(), "both your edit and another writer changed spec.tags, spec.workers");
        let same = doc("9", json!({"size": 2, "workers": 4, "tags": {"a": "2"}}));
        assert_eq!(reapply(&same, &base, &edited).expect("the same changes")["spec"], edited["spec"]);
    }

    #[test]
    fn merge_patches_remove_what_the_user_removed() {
        let base = json!({"status": {"phase": "Ready", "replicas": 1}});
        let edited = json!({"status": {"replicas": 1}});
        assert_eq!(merge_diff(&base, &edited), json!({"status": {"phase": null}}));
        let current = json!({"status": {"phase": "Ready", "replicas": 1, "observed": 7}});
        assert_eq!(
            reapply(&current, &base, &edited).expect("no overlap"),
            json!({"status": {"replicas": 1, "observed": 7}})
        );
    }
}
