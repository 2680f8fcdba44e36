//! The pure half of editing an object: the document the editor shows, reading it back,
//! what to send, and what a conflict means. The runtime does the IO (files, the editor,
//! requests) around these functions.
//!
//! Spec edits show the object without `.status` (and without `managedFields`); a status
//! typed there is pointed out as ignored. Status edits show `status:` alone and are sent
//! through `/status` on the object as it was read. On a 409 the user's changes are kept as
//! a merge patch from what they started from to what they saved, so they can be re-applied
//! on the server's new version.

use crate::tui::state::EditPart;
use serde_json::{Map, Value};

/// The document a status edit shows: `status:` alone (empty when the object has none).
pub fn status_document(status: Option<&Value>) -> Value {
    let mut m = Map::new();
    m.insert("status".into(), status.cloned().unwrap_or_else(|| Value::Object(Map::new())));
    Value::Object(m)
}

/// The text written to the editor's file: a comment header, then the document as YAML.
pub fn render(doc: &Value, part: EditPart, what: &str) -> String {
    let header = match part {
        EditPart::Spec => format!(
            "# Editing {what} without its status; saved to the main endpoint.\n\
             # Changes to status typed here are ignored: edit the status with E (/status).\n"
        ),
        EditPart::Status => format!("# Editing the status of {what}; saved through the /status subresource.\n"),
    };
    let body = serde_saphyr::to_string(doc).unwrap_or_default();
    format!("{header}# Lines starting with '#' are ignored. Save an unchanged or empty file to cancel.\n{body}")
}

/// Reads the edited text: `Ok(None)` when nothing but comments is left.
pub fn parse(text: &str) -> Result<Option<Value>, String> {
    if text.lines().all(|l| l.trim().is_empty() || l.trim_start().starts_with('#')) {
        return Ok(None);
    }
    serde_saphyr::from_str::<Value>(text).map(Some).map_err(|e| e.to_string())
}

/// What to do with an edit.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Nothing to send; `ignored_status` when only a status was typed in a spec edit.
    Unchanged { ignored_status: bool },
    /// Send the object (without status) to the main endpoint.
    Spec { object: Value, ignored_status: bool },
    /// Send `{"status": ...}` through `/status`.
    Status { document: Value },
}

/// What an edit from `base` (the document shown) to `edited` asks for; `stored_status` is
/// the object's status when the edit began (to tell a typed status from the stored one).
pub fn outcome(base: &Value, stored_status: Option<&Value>, edited: Value, part: EditPart) -> Outcome {
    match part {
        EditPart::Spec => {
            let mut object = edited;
            let typed = object.as_object_mut().and_then(|m| m.remove("status"));
            let ignored_status = typed.is_some_and(|s| Some(&s) != stored_status);
            if object == *base {
                Outcome::Unchanged { ignored_status }
            } else {
                Outcome::Spec { object, ignored_status }
            }
        }
        EditPart::Status if edited == *base => Outcome::Unchanged { ignored_status: false },
        EditPart::Status => Outcome::Status { document: edited },
    }
}

/// The JSON merge patch (RFC 7386) that turns `from` into `to`.
pub fn merge_diff(from: &Value, to: &Value) -> Value {
    match (from, to) {
        (Value::Object(a), Value::Object(b)) => {
            let mut patch = Map::new();
            for (k, va) in a {
                match b.get(k) {
                    None => {
                        patch.insert(k.clone(), Value::Null);
                    }
                    Some(vb) if vb != va => {
                        patch.insert(k.clone(), merge_diff(va, vb));
                    }
                    Some(_) => {}
                }
            }
            for (k, vb) in b {
                if !a.contains_key(k) {
                    patch.insert(k.clone(), vb.clone());
                }
            }
            Value::Object(patch)
        }
        _ => to.clone(),
    }
}

/// The user's edit (`base → edited`) re-applied on `current`, the same document of the
/// server's new version.
pub fn reapply(current: &Value, base: &Value, edited: &Value) -> Value {
    let mut doc = current.clone();
    let mut patch = merge_diff(base, edited);
    // The edit's resourceVersion is the one that conflicted: the new version's wins.
    if let Some(meta) = patch.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("resourceVersion");
    }
    json_patch::merge(&mut doc, &patch);
    doc
}

/// Field paths whose value differs, as `~ a.b: old → new`, `+ a.c: v`, `- a.d`; server-set
/// bookkeeping (resourceVersion, managedFields, generation) is left out.
pub fn changes(old: &Value, new: &Value) -> Vec<String> {
    fn short(v: &Value) -> String {
        let s = v.to_string();
        if s.chars().count() > 40 { format!("{}…", s.chars().take(39).collect::<String>()) } else { s }
    }
    fn walk(path: &str, old: Option<&Value>, new: Option<&Value>, out: &mut Vec<String>) {
        if matches!(path, "metadata.resourceVersion" | "metadata.managedFields" | "metadata.generation") {
            return;
        }
        match (old, new) {
            (Some(Value::Object(a)), Some(Value::Object(b))) => {
                let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
                for k in keys {
                    let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                    walk(&p, a.get(k), b.get(k), out);
                }
            }
            (Some(a), Some(b)) if a != b => out.push(format!("~ {path}: {} → {}", short(a), short(b))),
            (None, Some(b)) => out.push(format!("+ {path}: {}", short(b))),
            (Some(_), None) => out.push(format!("- {path}")),
            _ => {}
        }
    }
    let mut out = vec![];
    walk("", Some(old), Some(new), &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec_doc() -> Value {
        json!({"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w1", "resourceVersion": "5"}, "spec": {"size": 1, "color": "red"}})
    }

    #[test]
    fn documents_round_trip_through_the_editor_text() {
        let text = render(&spec_doc(), EditPart::Spec, "widgets/w1");
        assert!(text.starts_with("# Editing widgets/w1 without its status"), "{text}");
        assert_eq!(parse(&text).expect("parses"), Some(spec_doc()));
        assert_eq!(parse("# only comments\n\n"), Ok(None));
        assert_eq!(status_document(None), json!({"status": {}}));
    }

    #[test]
    fn typed_status_in_a_spec_edit_is_dropped_and_said() {
        let stored = json!({"ready": false});
        let mut edited = spec_doc();
        edited["status"] = json!({"ready": true});
        edited["spec"]["size"] = json!(2);
        match outcome(&spec_doc(), Some(&stored), edited.clone(), EditPart::Spec) {
            Outcome::Spec { object, ignored_status } => {
                assert!(ignored_status);
                assert!(object.get("status").is_none());
                assert_eq!(object["spec"]["size"], 2);
            }
            other => panic!("{other:?}"),
        }
        edited["spec"]["size"] = json!(1);
        assert_eq!(
            outcome(&spec_doc(), Some(&stored), edited, EditPart::Spec),
            Outcome::Unchanged { ignored_status: true }
        );
        let same = status_document(Some(&stored));
        assert_eq!(
            outcome(&same, Some(&stored), same.clone(), EditPart::Status),
            Outcome::Unchanged { ignored_status: false }
        );
    }

    #[test]
    fn conflicts_reapply_only_what_the_user_changed() {
        let base = spec_doc();
        let mut edited = base.clone();
        edited["spec"]["size"] = json!(3);
        let mut current = spec_doc();
        current["spec"]["color"] = json!("blue");
        current["metadata"]["resourceVersion"] = json!("9");
        let again = reapply(&current, &base, &edited);
        assert_eq!(again["spec"], json!({"size": 3, "color": "blue"}));
        assert_eq!(again["metadata"]["resourceVersion"], "9");
        assert_eq!(changes(&base, &current), ["~ spec.color: \"red\" → \"blue\""]);
    }
}
