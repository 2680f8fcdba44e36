//! Names: which registrations the new CRD's names collide with (the old one decides the
//! order; any other is a conflict that stops the migration), and the temporary
//! validation CRD, registered under a group of its own so that it collides with nothing.
//! Pure functions of the CRDs.

use super::convert;
use super::model::Identity;
use crate::cluster::registrations::Crd;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The group under which a migration's temporary validation CRD is registered.
pub const VALIDATION_GROUP_SUFFIX: &str = "migrate.kubectl-crd.io";

/// The temporary CRD objects are dry-run against before anything is deleted: the new
/// CRD's versions and schemas under a group of its own (so its names collide with
/// nothing, the old registration included), without subresources (so a create keeps and
/// validates the status as well as the spec), short names, categories or conversion.
pub fn validation_crd(new_doc: &Value, id: &str) -> (Identity, Value) {
    let hash: String = Sha256::digest(id.as_bytes()).iter().take(4).map(|b| format!("{b:02x}")).collect();
    let group = format!("v{hash}.{VALIDATION_GROUP_SUFFIX}");
    let mut doc = convert::clean_crd(new_doc);
    let plural = doc.pointer("/spec/names/plural").and_then(Value::as_str).unwrap_or_default().to_string();
    doc["metadata"] =
        json!({"name": format!("{plural}.{group}"), "labels": {"app.kubernetes.io/managed-by": "kubectl-crd-migrate"}});
    doc["spec"]["group"] = json!(group);
    if let Some(names) = doc.pointer_mut("/spec/names").and_then(Value::as_object_mut) {
        names.remove("shortNames");
        names.remove("categories");
    }
    if let Some(spec) = doc.get_mut("spec").and_then(Value::as_object_mut) {
        spec.remove("conversion");
    }
    if let Some(versions) = doc.pointer_mut("/spec/versions").and_then(Value::as_array_mut) {
        for v in versions.iter_mut().filter_map(Value::as_object_mut) {
            v.remove("subresources");
        }
    }
    let typed: Option<Crd> = serde_json::from_value(doc.clone()).ok();
    let identity = typed.as_ref().and_then(|c| Identity::of_crd(c, None)).unwrap_or(Identity {
        group,
        version: String::new(),
        kind: String::new(),
        plural,
        namespaced: true,
        status: false,
    });
    (identity, doc)
}

/// Whether the new CRD cannot be registered while the old one is: the same name, or a
/// name of one value space shared within the same group.
pub fn collides(old: &Crd, new: &Crd) -> bool {
    old.metadata.name == new.metadata.name || (old.spec.group == new.spec.group && !shared_names(old, new).is_empty())
}

fn resource_names(c: &Crd) -> Vec<String> {
    let n = c
        .status
        .as_ref()
        .and_then(|s| s.accepted_names.as_ref())
        .filter(|n| !n.plural.is_empty())
        .unwrap_or(&c.spec.names);
    let mut v = vec![n.plural.clone()];
    v.extend(n.singular.clone().filter(|s| !s.is_empty()));
    v.extend(n.short_names.clone().unwrap_or_default());
    v
}

fn kind_names(c: &Crd) -> Vec<String> {
    let n = c
        .status
        .as_ref()
        .and_then(|s| s.accepted_names.as_ref())
        .filter(|n| !n.kind.is_empty())
        .unwrap_or(&c.spec.names);
    let mut v = vec![n.kind.clone()];
    v.extend(n.list_kind.clone().filter(|s| !s.is_empty()));
    v
}

/// The names of `new` that `other` holds, as `what "name"`.
fn shared_names(other: &Crd, new: &Crd) -> Vec<String> {
    let mut out = Vec::new();
    let theirs = resource_names(other);
    for n in resource_names(new) {
        if theirs.contains(&n) {
            out.push(format!("resource name {n:?}"));
        }
    }
    let theirs = kind_names(other);
    for n in kind_names(new) {
        if theirs.contains(&n) {
            out.push(format!("kind {n:?}"));
        }
    }
    out
}

/// Names of `new` that a registration in the same group other than `old` (which goes
/// away first) and other than `new`'s own name already holds.
pub fn name_conflicts(new: &Crd, crds: &[Crd], old: Option<&str>) -> Vec<String> {
    let new_name = new.metadata.name.as_deref();
    crds.iter()
        .filter(|c| c.spec.group == new.spec.group)
        .filter(|c| c.metadata.name.as_deref() != old && c.metadata.name.as_deref() != new_name)
        .flat_map(|c| {
            let holder = c.metadata.name.clone().unwrap_or_default();
            shared_names(c, new).into_iter().map(move |n| format!("{n} is held by {holder}"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::registrations::tests::crd;

    #[test]
    fn a_new_group_does_not_collide_and_the_same_names_do() {
        let old = crd("crontabs", "CronTab", &["ct"], json!({}));
        let mut other_group = crd("crontabs", "CronTab", &["ct"], json!({}));
        other_group.spec.group = "new.example.com".into();
        other_group.metadata.name = Some("crontabs.new.example.com".into());
        assert!(!collides(&old, &other_group));
        let mut scope_change = old.clone();
        scope_change.spec.scope = "Cluster".into();
        assert!(collides(&old, &scope_change));
        let renamed = crd("schedules", "CronTab", &[], json!({}));
        assert!(collides(&old, &renamed), "same kind in the same group");
        let free = crd("schedules", "Schedule", &["sc"], json!({}));
        assert!(!collides(&old, &free));
    }

    #[test]
    fn conflicts_name_the_holder_and_ignore_the_old_registration() {
        let old = crd("crontabs", "CronTab", &["ct"], json!({}));
        let holder = crd("jobs", "Job", &["sc"], json!({}));
        let new = crd("schedules", "Schedule", &["sc"], json!({}));
        let crds = vec![old.clone(), holder];
        let conflicts = name_conflicts(&new, &crds, old.metadata.name.as_deref());
        assert_eq!(conflicts.len(), 1, "{conflicts:?}");
        assert!(conflicts[0].contains("resource name \"sc\"") && conflicts[0].contains("jobs."), "{conflicts:?}");
        let renamed = crd("crontabs2", "CronTab", &[], json!({}));
        assert!(name_conflicts(&renamed, &crds, old.metadata.name.as_deref()).is_empty());
        assert!(!name_conflicts(&renamed, &crds, None).is_empty());
    }

    #[test]
    fn the_validation_crd_keeps_the_schema_under_a_group_of_its_own() {
        let new = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "schedules.new.example.com", "uid": "x"},
            "spec": {"group": "new.example.com", "scope": "Namespaced",
                "names": {"plural": "schedules", "kind": "Schedule", "shortNames": ["sc"]},
                "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
                    "schema": {"openAPIV3Schema": {"type": "object"}}}]}});
        let (id, doc) = validation_crd(&new, "a--to--b");
        assert!(id.group.ends_with(".migrate.kubectl-crd.io") && id.group.starts_with('v'), "{}", id.group);
        assert_eq!(doc["metadata"]["name"], format!("schedules.{}", id.group));
        assert_eq!(id.kind, "Schedule");
        assert!(!id.status);
        assert!(doc["spec"]["versions"][0].get("subresources").is_none());
        assert!(doc["spec"]["names"].get("shortNames").is_none());
        assert_eq!(validation_crd(&new, "a--to--b").0, id, "stable for one journal");
        assert_ne!(validation_crd(&new, "a--to--b-2").0.group, id.group);
    }
}
