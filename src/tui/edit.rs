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
        EditPart::Object => format!(
            "# Editing {what} with its status: its kind has no status subresource, so .status is an\n\
             # ordinary field, saved with the rest to the main endpoint.\n"
        ),
    };
    let body = serde_saphyr::to_string(doc).unwrap_or_default();
    format!("{header}# Lines starting with '#' are ignored. Save an unchanged or empty file to cancel.\n{body}")
}

/// The first line of the reason a refused edit is reopened with; the block ends with
/// [`REFUSED_END`], so a second refusal replaces the first instead of piling up.
const REFUSED_START: &str = "# NOT SAVED: the server refused this edit. Fix it and save, or quit without saving";
const REFUSED_END: &str = "# ----";

/// A refused edit's text for the editor again: the reason as `#` comments on top (wrapped),
/// then what the user typed, as `kubectl edit` reopens a refused edit.
pub fn reopen(typed: &str, error: &str) -> String {
    let mut rest = typed;
    if rest.starts_with(REFUSED_START)
        && let Some(end) = rest.find(&format!("\n{REFUSED_END}\n"))
    {
        rest = &rest[end + REFUSED_END.len() + 2..];
    }
    let mut out = format!("{REFUSED_START}\n# to abandon it (the file is kept).\n#\n");
    for line in wrap(error, 96) {
        out.push_str(&format!("# {line}\n"));
    }
    out.push_str(REFUSED_END);
    out.push('\n');
    out.push_str(rest);
    out
}

/// Words of `text` in lines of at most `width` characters (a longer word has a line alone).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = vec![];
    for word in text.split_whitespace() {
        match lines.last_mut() {
            Some(line) if line.chars().count() + 1 + word.chars().count() <= width => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
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

#[cfg(test)]
mod reopen_tests {
    use super::*;
    use crate::cluster::edit::{parse, spec_doc};

    #[test]
    fn a_refused_edit_reopens_with_the_reason_on_top_and_the_text_as_typed() {
        let typed = render(&spec_doc(), EditPart::Spec, "widgets/w1").replace("size: 1", "size: -1");
        let error = format!("the server refused the object (422 Invalid): {}", "spec.size: must be >= 0; ".repeat(6));
        let again = reopen(&typed, &error);
        assert!(again.starts_with(REFUSED_START), "{again}");
        assert!(again.lines().all(|l| l.chars().count() <= 100), "the reason is wrapped:\n{again}");
        assert!(again.ends_with(&typed), "the user's text follows as typed:\n{again}");
        let mut doc = spec_doc();
        doc["spec"]["size"] = serde_json::json!(-1);
        assert_eq!(parse(&again).expect("comments are ignored"), Some(doc));
        let twice = reopen(&again, "another reason");
        assert_eq!(twice.matches(REFUSED_START).count(), 1, "a new refusal replaces the old:\n{twice}");
        assert!(twice.contains("# another reason") && !twice.contains("must be >= 0"), "{twice}");
    }
}
