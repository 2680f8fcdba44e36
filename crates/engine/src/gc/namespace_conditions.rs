//! The conditions kube's namespace deleter keeps on a namespace being deleted: five of
//! them, each `False` with its "ok" words unless a problem is found. The engine's finds
//! only content left behind (objects held by finalizers): discovery, group versions and
//! deletions cannot fail here.

use super::decide::Remaining;
use serde_json::{Map, Value, json};

/// The condition types in kube's order, each with its reason and message when all is well.
const OK: [(&str, &str, &str); 5] = [
    ("NamespaceDeletionDiscoveryFailure", "ResourcesDiscovered", "All resources successfully discovered"),
    ("NamespaceDeletionGroupVersionParsingFailure", "ParsedGroupVersions", "All legacy kube types successfully parsed"),
    (
        "NamespaceDeletionContentFailure",
        "ContentDeleted",
        "All content successfully deleted, may be waiting on finalization",
    ),
    ("NamespaceContentRemaining", "ContentRemoved", "All content successfully removed"),
    ("NamespaceFinalizersRemaining", "ContentHasNoFinalizers", "All content-preserving finalizers finished"),
];

/// What one condition should say: its type, status, reason and message.
type Desired = (&'static str, &'static str, String, String);

fn desired(remaining: &Remaining) -> Vec<Desired> {
    OK.iter()
        .map(|&(type_, reason, message)| {
            let problem = match type_ {
                "NamespaceContentRemaining" if !remaining.resources.is_empty() => Some((
                    "SomeResourcesRemain",
                    format!("Some resources are remaining: {}", remaining.resources.join(", ")),
                )),
                "NamespaceFinalizersRemaining" if !remaining.finalizers.is_empty() => Some((
                    "SomeFinalizersRemain",
                    format!(
                        "Some content in the namespace has finalizers remaining: {}",
                        remaining.finalizers.join(", ")
                    ),
                )),
                _ => None,
            };
            match problem {
                Some((reason, message)) => (type_, "True", reason.to_string(), message),
                None => (type_, "False", reason.to_string(), message.to_string()),
            }
        })
        .collect()
}

/// Brings the `status.conditions` of `namespace` to what `remaining` says (see [`update`]).
/// Whether anything changed.
pub(super) fn report(namespace: &mut Value, remaining: &Remaining, now: &str) -> bool {
    let Some(object) = namespace.as_object_mut() else { return false };
    let status = object.entry("status").or_insert_with(|| Value::Object(Map::new()));
    let Some(status) = status.as_object_mut() else { return false };
    let conditions = status.entry("conditions").or_insert_with(|| Value::Array(Vec::new()));
    conditions.as_array_mut().is_some_and(|conditions| update(conditions, remaining, now))
}

/// Brings `conditions` (a namespace's `status.conditions`) to what `remaining` says, as
/// kube's `updateConditions` does: a missing condition is added, one whose status, reason
/// or message differ is rewritten (its transition time moving only with its status), the
/// others are left alone. `now` is the time to record. Whether anything changed.
fn update(conditions: &mut Vec<Value>, remaining: &Remaining, now: &str) -> bool {
    let mut changed = false;
    for (type_, status, reason, message) in desired(remaining) {
        let text = |c: &Map<String, Value>, k: &str| c.get(k).and_then(Value::as_str).map(str::to_string);
        let found =
            conditions.iter_mut().filter_map(Value::as_object_mut).find(|c| text(c, "type").as_deref() == Some(type_));
        match found {
            None => {
                conditions.push(json!({
                    "type": type_, "status": status, "lastTransitionTime": now, "reason": reason, "message": message,
                }));
                changed = true;
            }
            Some(c) => {
                let same = text(c, "status").as_deref() == Some(status)
                    && text(c, "reason").as_deref() == Some(&reason)
                    && text(c, "message").as_deref() == Some(&message);
                if same {
                    continue;
                }
                if text(c, "status").as_deref() != Some(status) {
                    c.insert("lastTransitionTime".into(), Value::from(now));
                }
                c.insert("status".into(), Value::from(status));
                c.insert("reason".into(), Value::from(reason));
                c.insert("message".into(), Value::from(message));
                changed = true;
            }
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remaining(resources: &[&str], finalizers: &[&str]) -> Remaining {
        Remaining {
            resources: resources.iter().map(|s| s.to_string()).collect(),
            finalizers: finalizers.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn a_namespace_being_emptied_reports_what_remains_in_kube_s_words() {
        let mut namespace = json!({"metadata": {"name": "team"}, "status": {"phase": "Terminating"}});
        let left =
            remaining(&["widgets.example.com has 2 resource instances"], &["example.com/hold in 2 resource instances"]);
        assert!(report(&mut namespace, &left, "2026-11-29T06:00:00Z"));
        assert_eq!(namespace["status"]["phase"], "Terminating", "the rest of the status stays");
        let conditions = |ns: &Value| ns["status"]["conditions"].as_array().cloned().unwrap_or_default();
        let now = conditions(&namespace);
        let types: Vec<&str> = now.iter().filter_map(|c| c["type"].as_str()).collect();
        assert_eq!(types, OK.map(|(t, _, _)| t));
        assert_eq!(
            now[3],
            json!({"type": "NamespaceContentRemaining", "status": "True", "lastTransitionTime": "2026-11-29T06:00:00Z",
                   "reason": "SomeResourcesRemain",
                   "message": "Some resources are remaining: widgets.example.com has 2 resource instances"})
        );
        assert_eq!(
            now[4]["message"],
            "Some content in the namespace has finalizers remaining: example.com/hold in 2 resource instances"
        );
        assert_eq!(now[0]["status"], "False");
        // Nothing new: nothing written.
        assert!(!report(&mut namespace, &left, "2026-11-29T06:01:00Z"));
        // A count that moves rewrites the message, not the transition time.
        let fewer =
            remaining(&["widgets.example.com has 1 resource instances"], &["example.com/hold in 1 resource instances"]);
        assert!(report(&mut namespace, &fewer, "2026-11-29T06:02:00Z"));
        assert_eq!(conditions(&namespace)[3]["lastTransitionTime"], "2026-11-29T06:00:00Z");
        // All gone: the ok words, and the status flip moves the time.
        assert!(report(&mut namespace, &Remaining::default(), "2026-11-29T06:03:00Z"));
        assert_eq!(
            conditions(&namespace)[4],
            json!({"type": "NamespaceFinalizersRemaining", "status": "False", "lastTransitionTime": "2026-11-29T06:03:00Z",
                   "reason": "ContentHasNoFinalizers", "message": "All content-preserving finalizers finished"})
        );
    }
}
