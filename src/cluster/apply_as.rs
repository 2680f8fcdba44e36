//! "Apply as manager X": a server-side apply of an edited document, as a dry run, to see
//! which fields would conflict with whom before a controller or a person applies it for
//! real. The server answers as it would the real apply: a 409 whose causes name each
//! conflicting field and its owner, or the object as it would be, from which the fields
//! the manager would own and what would change are read.
//!
//! The document the user edits carries the manager on a comment line (`# manager: X`), so
//! one editor session holds both.

use super::diff::{Change, diff};
use super::discovery::ResourceType;
use super::error::ClusterError;
use super::field_owners::field_owners;
use super::objects::ObjectRef;
use kube::api::{Patch, PatchParams};
use serde_json::{Map, Value};

/// The comment line that names the manager.
const MANAGER_LINE: &str = "# manager:";
/// The manager offered at first.
pub const DEFAULT_MANAGER: &str = "kubectl-crd-what-if";
/// The annotation `kubectl apply` keeps its last applied document in.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";
/// kube-apiserver refuses longer field managers.
const MANAGER_MAX: usize = 128;

/// Paths a what-if diff leaves out: they change on every write.
const NOT_DIFFED: [&str; 3] = ["metadata.resourceVersion", "metadata.managedFields", "metadata.generation"];

/// The document the editor starts from: the object's metadata that apply may set, and
/// everything but status, under comments that say what happens.
pub fn apply_document(obj: &Value, manager: &str) -> Result<String, String> {
    let mut doc = Map::new();
    for key in ["apiVersion", "kind"] {
        if let Some(v) = obj.get(key) {
            doc.insert(key.into(), v.clone());
        }
    }
    let mut meta = Map::new();
    for key in ["name", "namespace", "labels", "annotations"] {
        if let Some(v) = obj.pointer(&format!("/metadata/{key}")) {
            meta.insert(key.into(), v.clone());
        }
    }
    // kubectl's client-side bookkeeping, not something a manager means to apply.
    if let Some(Value::Object(annotations)) = meta.get_mut("annotations") {
        annotations.remove(LAST_APPLIED);
        if annotations.is_empty() {
            meta.remove("annotations");
        }
    }
    doc.insert("metadata".into(), Value::Object(meta));
    if let Some(fields) = obj.as_object() {
        for (k, v) in fields {
            if !matches!(k.as_str(), "apiVersion" | "kind" | "metadata" | "status") {
                doc.insert(k.clone(), v.clone());
            }
        }
    }
    let yaml = serde_saphyr::to_string(&Value::Object(doc)).map_err(|e| format!("cannot write YAML: {e}"))?;
    Ok(format!(
        "# Server-side apply as a dry run: nothing is saved. Set the manager, keep the fields\n\
         # it would apply (remove the others), and save: the answer lists the fields that\n\
         # would conflict and with whom. Delete everything to cancel.\n\
         {MANAGER_LINE} {manager}\n{yaml}"
    ))
}

/// The manager and the document from the edited text.
pub fn parse_apply_document(text: &str) -> Result<(String, Value), String> {
    let manager = text
        .lines()
        .find_map(|l| l.trim().strip_prefix(MANAGER_LINE))
        .map(str::trim)
        .ok_or_else(|| format!("the `{MANAGER_LINE} NAME` line is missing: name the field manager to apply as"))?;
    if manager.is_empty() {
        return Err(format!("the field manager is empty: write it after `{MANAGER_LINE}`"));
    }
    if manager.chars().count() > MANAGER_MAX {
        return Err(format!("the field manager is longer than {MANAGER_MAX} characters, which kube refuses"));
    }
    let doc =
        kubectl_crd_engine::manifests::from_yaml(text).map_err(|e| format!("the document is not valid YAML: {e}"))?;
    if !doc.is_object() {
        return Err("the document is empty: nothing to apply".into());
    }
    Ok((manager.to_string(), doc))
}

/// One field the apply would take from another manager.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// `.spec.size`, as kube writes it.
    pub field: String,
    /// `"e2e-author" using demo.example.com/v1`, kube's words for the owner.
    pub owner: String,
}

/// What the dry run found.
#[derive(Debug, Clone, PartialEq)]
pub enum ApplyVerdict {
    /// The apply would fail on these fields (kube's 409).
    Conflicts(Vec<Conflict>),
    /// It would go through: the fields the manager would own, and what would change.
    Clean { owned: Vec<String>, changes: Vec<Change> },
}

/// Sends the document as a server-side apply dry run by `manager`, without force.
pub async fn dry_run(
    client: &kube::Client,
    kind: &ResourceType,
    current: &Value,
    manager: &str,
    doc: &Value,
) -> Result<ApplyVerdict, ClusterError> {
    let text = |k: &str| current.pointer(&format!("/metadata/{k}")).and_then(Value::as_str).unwrap_or_default();
    let at = ObjectRef::new(kind, text("namespace"), text("name"));
    let params = PatchParams { dry_run: true, force: false, field_manager: Some(manager.into()), ..Default::default() };
    match kind.api(client, Some(at.namespace)).patch(at.name, &params, &Patch::Apply(doc)).await {
        Ok(after) => {
            let after = serde_json::to_value(after).map_err(|e| ClusterError::Other(e.to_string()))?;
            Ok(verdict_of(current, &after, manager))
        }
        Err(kube::Error::Api(status)) if status.code == 409 && status.reason == "Conflict" => {
            let causes = status.details.as_ref().map(|d| d.causes.as_slice()).unwrap_or_default();
            Ok(ApplyVerdict::Conflicts(conflicts_of(causes.iter().map(|c| (c.field.as_str(), c.message.as_str())))))
        }
        Err(e) => Err(at.error(e)),
    }
}

/// kube's conflict causes (`field`, `conflict with "x" using v1`) as conflicts.
pub fn conflicts_of<'a>(causes: impl Iterator<Item = (&'a str, &'a str)>) -> Vec<Conflict> {
    causes
        .map(|(field, message)| Conflict {
            field: field.to_string(),
            owner: message.strip_prefix("conflict with ").unwrap_or(message).to_string(),
        })
        .collect()
}

/// A clean dry run's verdict: the fields `manager`'s Apply entry holds in `after`, and
/// what changed from `current`.
pub fn verdict_of(current: &Value, after: &Value, manager: &str) -> ApplyVerdict {
    let owned = field_owners(after)
        .into_iter()
        .filter(|o| o.manager == manager && o.operation == "Apply")
        .map(|o| o.path)
        .collect();
    ApplyVerdict::Clean { owned, changes: diff(current, after, &NOT_DIFFED) }
}

/// The verdict as the lines the TUI shows.
pub fn verdict_lines(manager: &str, verdict: &ApplyVerdict) -> Vec<String> {
    let mut lines = vec![];
    match verdict {
        ApplyVerdict::Conflicts(conflicts) => {
            let n = conflicts.len();
            lines.push(format!(
                "apply as {manager:?} (dry run, nothing saved): {n} conflict{}",
                if n == 1 { "" } else { "s" }
            ));
            let width = conflicts.iter().map(|c| c.field.chars().count()).max().unwrap_or(0).max("FIELD".len());
            lines.push(format!("{:<width$}  OWNED BY", "FIELD"));
            lines.extend(conflicts.iter().map(|c| format!("{:<width$}  {}", c.field, c.owner)));
            lines.push(String::new());
            lines.push("To take these fields over, apply with force (kubectl apply --server-side".into());
            lines.push(format!("--force-conflicts --field-manager={manager}); or leave them out of the document."));
        }
        ApplyVerdict::Clean { owned, changes } => {
            lines.push(format!("apply as {manager:?} (dry run, nothing saved): no conflicts"));
            lines.push(String::new());
            lines.push(format!("{manager} would own:"));
            lines.extend(owned.iter().map(|p| format!("  {p}")));
            lines.push(String::new());
            if changes.is_empty() {
                lines.push("no field would change".into());
            } else {
                lines.push("it would change:".into());
                lines.extend(changes.iter().map(|c| format!("  {}", c.line(usize::MAX))));
            }
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object() -> Value {
        json!({"apiVersion": "demo.example.com/v1", "kind": "Widget",
            "metadata": {"name": "w", "namespace": "default", "uid": "u", "resourceVersion": "9",
                "labels": {"app": "x"}, "managedFields": [{"manager": "m"}],
                "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
            "spec": {"size": 3}, "status": {"ready": true}})
    }

    #[test]
    fn the_document_keeps_what_apply_sets_and_round_trips_with_its_manager() {
        let text = apply_document(&object(), "ci-bot").expect("yaml");
        assert!(text.contains("# manager: ci-bot"), "{text}");
        let (manager, doc) = parse_apply_document(&text).expect("parses");
        assert_eq!(manager, "ci-bot");
        assert_eq!(
            doc,
            json!({"apiVersion": "demo.example.com/v1", "kind": "Widget",
                "metadata": {"name": "w", "namespace": "default", "labels": {"app": "x"}}, "spec": {"size": 3}})
        );
    }

    #[test]
    fn a_missing_empty_or_overlong_manager_or_an_empty_document_is_refused() {
        let doc = "apiVersion: v1\nkind: X\n";
        for (text, says) in [
            (doc.to_string(), "is missing"),
            (format!("# manager:   \n{doc}"), "is empty"),
            (format!("# manager: {}\n{doc}", "m".repeat(129)), "longer than 128"),
            ("# manager: m\n".to_string(), "nothing to apply"),
            ("# manager: m\nkind: [\n".to_string(), "not valid YAML"),
        ] {
            let err = parse_apply_document(&text).expect_err(&text);
            assert!(err.contains(says), "{err} ({says})");
        }
    }

    #[test]
    fn conflicts_are_read_from_kube_s_causes_and_shown_with_the_force_hint() {
        let conflicts = conflicts_of(
            [
                (".spec.size", "conflict with \"e2e-author\" using demo.example.com/v1"),
                (".status.ready", "conflict with \"ctl\" with subresource \"status\" using demo.example.com/v1"),
            ]
            .into_iter(),
        );
        assert_eq!(conflicts[0].owner, "\"e2e-author\" using demo.example.com/v1");
        let lines = verdict_lines("ci-bot", &ApplyVerdict::Conflicts(conflicts));
        assert_eq!(lines[0], "apply as \"ci-bot\" (dry run, nothing saved): 2 conflicts");
        assert_eq!(lines[2], ".spec.size     \"e2e-author\" using demo.example.com/v1");
        assert!(lines.iter().any(|l| l.contains("--force-conflicts --field-manager=ci-bot")), "{lines:?}");
    }

    #[test]
    fn a_clean_run_names_the_fields_the_manager_would_own_and_the_changes() {
        let mut after = object();
        after["spec"]["size"] = json!(5);
        after["metadata"]["resourceVersion"] = json!("10");
        after["metadata"]["managedFields"] = json!([
            {"manager": "ci-bot", "operation": "Apply", "fieldsV1": {"f:spec": {"f:size": {}}}},
            {"manager": "other", "operation": "Update", "fieldsV1": {"f:metadata": {"f:labels": {"f:app": {}}}}},
        ]);
        let verdict = verdict_of(&object(), &after, "ci-bot");
        let ApplyVerdict::Clean { owned, changes } = &verdict else { panic!("{verdict:?}") };
        assert_eq!(owned, &["spec.size"]);
        assert_eq!(changes.len(), 1, "{changes:?}");
        let lines = verdict_lines("ci-bot", &verdict);
        assert!(lines.iter().any(|l| l.contains("spec.size") && l.contains('5')), "{lines:?}");
    }
}
