//! What must hold before the forward phase deletes the old objects, decided from what was
//! read: every object there is one the backup holds, unchanged since — else writers are
//! still running, and deleting would lose what they wrote. Pure functions of the objects
//! and the backup; the `delete-old-data` step reads, then asks here.

use super::MigrateError;
use super::diff;
use super::journal::Backup;
use super::model::{Mapping, ObjectKey, owner_refs, same_refs, uid, uids};
use serde_json::Value;
use std::collections::HashMap;

/// Each backed-up object that is there under `mapping.to` now, with its current self, as
/// `(backed up, current)`.
pub(crate) fn with_backup<'a>(
    current: &'a [Value],
    backup: &'a Backup,
    mapping: &Mapping,
) -> Vec<(&'a Value, &'a Value)> {
    let by_key: HashMap<ObjectKey, &Value> = current.iter().map(|o| (ObjectKey::of(o), o)).collect();
    backup.objects.iter().filter_map(|b| by_key.get(&mapping.key(&ObjectKey::of(b))).map(|c| (b, *c))).collect()
}

/// Refuses when `current` (the objects under the old kind now) holds objects the backup
/// does not, or when one of `pairs` (see [`with_backup`]) changed since it was backed up.
/// Objects being deleted do not count: they go anyway.
pub(crate) fn unchanged_since_backup(
    current: &[Value],
    pairs: &[(&Value, &Value)],
    backup: &Backup,
) -> Result<(), MigrateError> {
    let backed_up = uids(&backup.objects);
    let extra: Vec<String> = current
        .iter()
        .filter(|o| !backed_up.contains(uid(o)) && !is_deleting(o))
        .map(|o| ObjectKey::of(o).to_string())
        .collect();
    let changed: Vec<String> = pairs
        .iter()
        .filter(|(b, c)| !is_deleting(c) && changed_since(b, c))
        .map(|(_, c)| ObjectKey::of(c).to_string())
        .collect();
    if extra.is_empty() && changed.is_empty() {
        return Ok(());
    }
    Err(MigrateError::Changed(format!(
        "objects changed after the backup: {} new ({}), {} modified ({}). Writers are still running: stop them, then roll the migration back and run it again",
        extra.len(),
        extra.first().map(String::as_str).unwrap_or("-"),
        changed.len(),
        changed.first().map(String::as_str).unwrap_or("-"),
    )))
}

fn is_deleting(o: &Value) -> bool {
    o.pointer("/metadata/deletionTimestamp").is_some()
}

/// Whether an object differs from its backup in what a migration keeps. Owner references
/// may have been removed (orphaning by the garbage collector), not added or changed.
pub(crate) fn changed_since(backup: &Value, current: &Value) -> bool {
    let kept = owner_refs(backup);
    let refs_ok = owner_refs(current)
        .iter()
        .all(|r| kept.iter().any(|k| same_refs(std::slice::from_ref(k), std::slice::from_ref(r))));
    !diff::compare_objects(backup, current).is_empty() || !refs_ok
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(name: &str, spec: Value, owners: &[&str]) -> Value {
        let refs: Vec<Value> = owners
            .iter()
            .map(|u| json!({"apiVersion": "v1", "kind": "ConfigMap", "name": format!("owner-{u}"), "uid": u}))
            .collect();
        json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
            "metadata": {"namespace": "a", "name": name, "uid": format!("uid-{name}"), "ownerReferences": refs},
            "spec": spec})
    }

    fn deleting(mut o: Value) -> Value {
        o["metadata"]["deletionTimestamp"] = json!("2026-11-22T02:36:55Z");
        o
    }

    #[test]
    fn only_what_the_backup_holds_unchanged_may_be_deleted() {
        let one = object("one", json!({"x": 1}), &["o1"]);
        let two = object("two", json!({"x": 2}), &[]);
        let backup = Backup { objects: vec![one.clone(), two.clone()], dependents: vec![], old_crd: None };
        let identity = crate::migrate::model::Identity {
            group: "stable.example.com".into(),
            version: "v1".into(),
            kind: "CronTab".into(),
            plural: "crontabs".into(),
            namespaced: true,
            status: false,
        };
        let mapping =
            Mapping { from: identity.clone(), to: identity, versions: Default::default(), into_namespace: None };
        let cases: Vec<(&str, Vec<Value>, Option<&str>)> = vec![
            ("as backed up", vec![one.clone(), two.clone()], None),
            ("one gone already", vec![two.clone()], None),
            ("an owner removed by the garbage collector", vec![object("one", json!({"x": 1}), &[]), two.clone()], None),
            (
                "a new object",
                vec![one.clone(), two.clone(), object("three", json!({}), &[])],
                Some("1 new (a/three), 0 modified"),
            ),
            ("a new object being deleted", vec![one.clone(), deleting(object("three", json!({}), &[]))], None),
            (
                "a changed spec",
                vec![one.clone(), object("two", json!({"x": 3}), &[])],
                Some("0 new (-), 1 modified (a/two)"),
            ),
            ("a changed spec being deleted", vec![one.clone(), deleting(object("two", json!({"x": 3}), &[]))], None),
            (
                "an owner added",
                vec![object("one", json!({"x": 1}), &["o1", "o2"]), two.clone()],
                Some("1 modified (a/one)"),
            ),
        ];
        for (name, current, want) in cases {
            let pairs = with_backup(&current, &backup, &mapping);
            match (unchanged_since_backup(&current, &pairs, &backup), want) {
                (Ok(()), None) => {}
                (Err(e), Some(says)) => assert!(e.to_string().contains(says), "{name}: {e}"),
                (got, want) => panic!("{name}: {got:?}, wanted {want:?}"),
            }
        }
    }
}
