//! The pure half of editing an object, shared by `kubectl crd spec|status edit` and the TUI:
//! the document the editor shows, reading it back, and what to send. The callers do the IO
//! (the file and the editor through [`super::editor`], the requests), and a 409 is carried
//! over to the server's new version by [`super::reapply`].
//!
//! Spec edits show the object without `.status` (and without `managedFields`); a status
//! typed there is pointed out as ignored. Status edits show `status:` alone — `status: {}`
//! when the object has none, as kubectl prints an empty status — and are sent through
//! `/status` on the object as it was read. A kind without a status subresource has its
//! `.status` as an ordinary field: its edits show and send the whole object.

use serde_json::{Map, Value};

/// Which part of an object an edit changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditPart {
    /// Everything but `.status`, through the main endpoint.
    Spec,
    /// `.status` alone, through `/status`.
    Status,
    /// The whole object, status included, through the main endpoint: for kinds without a
    /// status subresource, whose `.status` is an ordinary field.
    Object,
}

impl EditPart {
    pub fn word(self) -> &'static str {
        match self {
            EditPart::Spec => "spec",
            EditPart::Status => "status",
            EditPart::Object => "object",
        }
    }
}

/// The document a status edit shows: `status:` alone (empty when the object has none).
pub fn status_document(status: Option<&Value>) -> Value {
    let mut m = Map::new();
    m.insert("status".into(), status.cloned().unwrap_or_else(|| Value::Object(Map::new())));
    Value::Object(m)
}

/// Whether an edited file is empty once comments and blank lines are gone (kubectl then
/// cancels the edit).
pub fn is_blank(text: &str) -> bool {
    text.lines().all(|l| {
        let t = l.trim();
        t.is_empty() || t.starts_with('#')
    })
}

/// Reads the edited text: `Ok(None)` when nothing but comments is left.
pub fn parse(text: &str) -> Result<Option<Value>, String> {
    if is_blank(text) {
        return Ok(None);
    }
    kubectl_crd_engine::manifests::from_yaml(text).map(Some).map_err(|e| e.to_string())
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
    /// Send the whole object, status included, to the main endpoint.
    Object { object: Value },
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
        EditPart::Status | EditPart::Object if edited == *base => Outcome::Unchanged { ignored_status: false },
        EditPart::Status => Outcome::Status { document: edited },
        EditPart::Object => Outcome::Object { object: edited },
    }
}

/// A spec edit's document, for the tests of both faces of an edit.
#[cfg(test)]
pub(crate) fn spec_doc() -> Value {
    serde_json::json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w1", "resourceVersion": "5"}, "spec": {"size": 1, "color": "red"}})
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn blank_means_only_comments() {
        assert!(is_blank("# a\n\n   # b\n"));
        assert!(!is_blank("# a\nstatus: {}\n"));
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
        let mut whole = spec_doc();
        whole["status"] = json!({"ready": true});
        assert_eq!(
            outcome(&spec_doc(), None, whole.clone(), EditPart::Object),
            Outcome::Object { object: whole },
            "without /status the status typed is kept and sent"
        );
        let same = status_document(Some(&stored));
        assert_eq!(
            outcome(&same, Some(&stored), same.clone(), EditPart::Status),
            Outcome::Unchanged { ignored_status: false }
        );
    }
}
