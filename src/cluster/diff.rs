//! What changed between two versions of an object, field by field: the paths whose
//! values differ (objects walked key by key, anything else compared whole), each with the
//! old and new value, and the part of the object it belongs to (spec, status, metadata).
//! The TUI's event stream shows these per watch event, and the conflict dialog's list of
//! the server's changes is drawn from them. Pure functions of the documents.

use serde_json::Value;
use std::collections::BTreeSet;

/// The part of an object a path is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Section {
    Spec,
    Status,
    Metadata,
    /// Anything else at the top (`data`, `apiVersion`, …).
    Other,
}

impl Section {
    fn of(path: &str) -> Section {
        match path.split('.').next().unwrap_or_default() {
            "spec" => Section::Spec,
            "status" => Section::Status,
            "metadata" => Section::Metadata,
            _ => Section::Other,
        }
    }

    /// How the section is named on screen.
    pub fn word(self) -> &'static str {
        match self {
            Section::Spec => "spec",
            Section::Status => "status",
            Section::Metadata => "metadata",
            Section::Other => "other",
        }
    }
}

/// One changed path.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// Dotted (`spec.size`, `metadata.labels.app`); array items compare whole.
    pub path: String,
    /// `None`: the path was added.
    pub old: Option<Value>,
    /// `None`: the path was removed.
    pub new: Option<Value>,
}

impl Change {
    pub fn section(&self) -> Section {
        Section::of(&self.path)
    }

    /// `~ path: old → new`, `+ path: new`, `- path`, values cut to `width` characters.
    pub fn line(&self, width: usize) -> String {
        match (&self.old, &self.new) {
            (Some(a), Some(b)) => format!("~ {}: {} → {}", self.path, short(a, width), short(b, width)),
            (None, Some(b)) => format!("+ {}: {}", self.path, short(b, width)),
            _ => format!("- {}", self.path),
        }
    }
}

/// A value as compact JSON, cut to `width` characters with `…`.
pub fn short(v: &Value, width: usize) -> String {
    let s = v.to_string();
    if s.chars().count() > width {
        format!("{}…", s.chars().take(width.saturating_sub(1)).collect::<String>())
    } else {
        s
    }
}

/// The paths that differ between `old` and `new`, in path order, leaving out the dotted
/// paths in `skip` (and everything under them).
pub fn diff(old: &Value, new: &Value, skip: &[&str]) -> Vec<Change> {
    let mut out = vec![];
    walk("", Some(old), Some(new), skip, &mut out);
    out
}

fn walk(path: &str, old: Option<&Value>, new: Option<&Value>, skip: &[&str], out: &mut Vec<Change>) {
    if skip.contains(&path) {
        return;
    }
    match (old, new) {
        (Some(Value::Object(a)), Some(Value::Object(b))) => {
            let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in keys {
                let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                walk(&p, a.get(k), b.get(k), skip, out);
            }
        }
        (Some(a), Some(b)) if a == b => {}
        (None, None) => {}
        (a, b) => out.push(Change { path: path.to_string(), old: a.cloned(), new: b.cloned() }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn changed_paths_with_old_and_new_values() {
        let base = json!({"metadata": {"name": "w", "generation": 1, "labels": {"app": "a"}}, "spec": {"size": 1}});
        let cases: [(&str, Value, &[&str], &[&str]); 6] = [
            ("nothing", base.clone(), &[], &[]),
            (
                "a scalar",
                json!({"metadata": {"name": "w", "generation": 2, "labels": {"app": "a"}}, "spec": {"size": 2}}),
                &[],
                &["~ metadata.generation: 1 → 2", "~ spec.size: 1 → 2"],
            ),
            (
                "skipped paths",
                json!({"metadata": {"name": "w", "generation": 2, "labels": {"app": "a"}}, "spec": {"size": 1}}),
                &["metadata.generation"],
                &[],
            ),
            (
                "added and removed",
                json!({"metadata": {"name": "w", "generation": 1}, "spec": {"size": 1}, "status": {"phase": "Up"}}),
                &[],
                &["- metadata.labels", "+ status: {\"phase\":\"Up\"}"],
            ),
            (
                "arrays compare whole",
                json!({"metadata": {"name": "w", "generation": 1, "labels": {"app": "a"}}, "spec": {"size": [1, 2]}}),
                &[],
                &["~ spec.size: 1 → [1,2]"],
            ),
            (
                "a type change",
                json!({"metadata": {"name": "w", "generation": 1, "labels": {"app": "a"}}, "spec": "x"}),
                &[],
                &["~ spec: {\"size\":1} → \"x\""],
            ),
        ];
        for (what, new, skip, want) in cases {
            let lines: Vec<String> = diff(&base, &new, skip).iter().map(|c| c.line(40)).collect();
            assert_eq!(lines, want, "{what}");
        }
    }

    #[test]
    fn sections_and_cut_values() {
        let d = diff(&json!({"spec": {"a": 1}, "data": {}}), &json!({"spec": {"a": 2}, "data": {"k": "v"}}), &[]);
        let sections: Vec<Section> = d.iter().map(Change::section).collect();
        assert_eq!(sections, [Section::Other, Section::Spec]);
        assert_eq!(short(&json!("abcdefgh"), 5), "\"abc…");
    }
}
