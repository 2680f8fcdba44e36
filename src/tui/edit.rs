//! The TUI's face of an edit: the comment header its editor file opens with (which names
//! the TUI's keys). What the document holds and what an edit means are in
//! [`crate::cluster::edit`], shared with the subcommands.

use crate::cluster::edit::EditPart;
use serde_json::Value;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::edit::{parse, spec_doc};

    #[test]
    fn documents_round_trip_through_the_editor_text() {
        let text = render(&spec_doc(), EditPart::Spec, "widgets/w1");
        assert!(text.starts_with("# Editing widgets/w1 without its status"), "{text}");
        assert_eq!(parse(&text).expect("parses"), Some(spec_doc()));
    }
}
