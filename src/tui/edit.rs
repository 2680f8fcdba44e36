//! The pure half of editing an object: the document the editor shows, reading it back,
//! what to send, and what a conflict means. The runtime does the IO (files, the editor,
//! requests) around these functions.
//!
//! Spec edits show the object without `.status` (and without `managedFields`); a status
//! typed there is pointed out as ignored. Status edits show `status:` alone and are sent
//! through `/status` on the object as it was read. On a 409 the user's changes are kept
//! (what they started from and what they saved), so that [`crate::cluster::reapply`] can
//! carry them over to the server's new version.

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
}
