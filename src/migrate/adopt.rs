//! Re-adoption: the dependents, orphaned when the old objects went, get owner references
//! to the objects as they are now — the new kind's after a run, the old kind's restored
//! objects after a rollback. Migrated objects owned by other migrated objects are linked
//! the same way (their references were left out when they were created, since a
//! reference to a uid that does not exist gets an object collected).

use super::MigrateError;
use super::batch::{each, first_error, migrated_uids};
use super::journal::{Backup, Dependent};
use super::model::{Adoption, Mapping, NewOwner, ObjectKey, owner_refs, same_refs, uid};
use super::ops;
use super::progress::{Event, Report};
use super::step::Step;
use crate::cluster::ResourceType;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};

/// Where each migrated object is now, by its old uid.
pub(crate) fn adoption(mapping: &Mapping, backup: &Backup, now: &[Value]) -> Adoption {
    let by_key: HashMap<ObjectKey, &Value> = now.iter().map(|o| (ObjectKey::of(o), o)).collect();
    let mut adoption = Adoption::default();
    for o in &backup.objects {
        let old_uid = uid(o);
        if old_uid.is_empty() {
            continue;
        }
        if let Some(current) = by_key.get(&mapping.key(&ObjectKey::of(o))) {
            adoption.insert(
                old_uid.to_string(),
                NewOwner {
                    uid: uid(current).to_string(),
                    api_version: current
                        .get("apiVersion")
                        .and_then(Value::as_str)
                        .map(String::from)
                        .unwrap_or_else(|| mapping.api_version_for(o)),
                    kind: mapping.to.kind.clone(),
                },
            );
        }
    }
    adoption
}

/// One object whose ownerReferences a re-adoption sets: a dependent of another kind, or a
/// migrated object owned by another migrated object.
pub(crate) struct Link {
    pub resource: ResourceType,
    pub key: ObjectKey,
    /// The uid it must still have (dependents are never recreated); `None` for migrated objects.
    pub uid: Option<String>,
    pub backed_up_refs: Vec<Value>,
    pub label: String,
}

/// Every link a re-adoption under `mapping` sets.
pub(crate) fn links(mapping: &Mapping, backup: &Backup) -> Vec<Link> {
    let migrated = migrated_uids(backup);
    let mut out: Vec<Link> = backup
        .dependents
        .iter()
        .map(|d: &Dependent| Link {
            resource: d.resource(),
            key: ObjectKey { namespace: d.namespace.clone(), name: d.name.clone() },
            uid: Some(d.uid.clone()),
            backed_up_refs: d.owner_references.clone(),
            label: d.label(),
        })
        .collect();
    let res = mapping.to.resource();
    for o in &backup.objects {
        let refs = owner_refs(o);
        if refs.iter().any(|r| r.get("uid").and_then(Value::as_str).is_some_and(|u| migrated.contains(u))) {
            let key = mapping.key(&ObjectKey::of(o));
            out.push(Link {
                resource: res.clone(),
                label: format!("{} {key}", mapping.to.kind),
                key,
                uid: None,
                backed_up_refs: refs,
            });
        }
    }
    out
}

/// Current objects of every resource type the links name, by type and key.
pub(crate) async fn current_of(
    client: &kube::Client,
    links: &[Link],
) -> Result<HashMap<(String, String), HashMap<ObjectKey, Value>>, MigrateError> {
    let mut types: BTreeMap<(String, String), &ResourceType> = BTreeMap::new();
    for l in links {
        types.entry((l.resource.group.clone(), l.resource.plural.clone())).or_insert(&l.resource);
    }
    let mut out = HashMap::new();
    for (k, r) in types {
        let objects = ops::list_all(client, r).await?;
        out.insert(k, objects.into_iter().map(|o| (ObjectKey::of(&o), o)).collect());
    }
    Ok(out)
}

/// Rewrites the links' ownerReferences so that they point at the objects as they are
/// under `mapping.to`. Dependents that are gone or were recreated are reported, not
/// touched.
pub(crate) async fn readopt(
    client: &kube::Client,
    report: Report<'_>,
    step: Step,
    mapping: &Mapping,
    backup: &Backup,
) -> Result<String, MigrateError> {
    let migrated = migrated_uids(backup);
    let now = ops::list_all(client, &mapping.to.resource()).await?;
    let adoption = adoption(mapping, backup, &now);
    let links = links(mapping, backup);
    let current = current_of(client, &links).await?;
    let results = each(step, &links, report, |l| {
        let (adoption, migrated, current) = (&adoption, &migrated, &current);
        async move {
            let found = current
                .get(&(l.resource.group.clone(), l.resource.plural.clone()))
                .and_then(|m| m.get(&l.key))
                .cloned();
            readopt_one(client, l, found, adoption, migrated).await
        }
    })
    .await;
    let outcomes = first_error(results)?;
    let changed = outcomes.iter().filter(|o| matches!(o, Adopted::Changed)).count();
    let lost: Vec<&String> =
        outcomes.iter().filter_map(|o| if let Adopted::Lost(l) = o { Some(l) } else { None }).collect();
    if !lost.is_empty() {
        report(Event::Note {
            step,
            message: format!("{} dependent(s) are gone or were recreated: {:?}", lost.len(), lost),
        });
    }
    Ok(format!(
        "{} link(s) checked, {changed} rewritten to {}, {} dependent(s) gone",
        links.len(),
        mapping.to.kind,
        lost.len()
    ))
}

enum Adopted {
    Changed,
    Unchanged,
    Lost(String),
}

async fn readopt_one(
    client: &kube::Client,
    link: &Link,
    mut current: Option<Value>,
    adoption: &Adoption,
    migrated: &HashSet<String>,
) -> Result<Adopted, MigrateError> {
    for _ in 0..5 {
        let Some(obj) = current.take() else { return Ok(Adopted::Lost(link.label.clone())) };
        if link.uid.as_deref().is_some_and(|u| u != uid(&obj)) {
            return Ok(Adopted::Lost(format!("{} (recreated)", link.label)));
        }
        let now = owner_refs(&obj);
        let desired = adoption.desired_refs(&link.backed_up_refs, &now, migrated);
        if same_refs(&desired, &now) {
            return Ok(Adopted::Unchanged);
        }
        let rv = obj.pointer("/metadata/resourceVersion").and_then(Value::as_str).unwrap_or_default();
        match ops::set_owner_refs(client, &link.resource, &link.key, rv, &desired).await {
            Ok(_) => return Ok(Adopted::Changed),
            Err(e) if e.is_conflict() => current = ops::get(client, &link.resource, &link.key).await?,
            Err(e) if e.is_not_found() => return Ok(Adopted::Lost(link.label.clone())),
            Err(e) => return Err(e.into()),
        }
    }
    Err(MigrateError::Changed(format!("{}: its ownerReferences kept changing while they were rewritten", link.label)))
}
