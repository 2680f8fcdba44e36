//! Backup against cluster: is every object there under the kind it should be under now,
//! with the same spec (every top-level field but metadata), status, labels and
//! annotations, and the same owner links once old uids are mapped to the current ones?
//! Are the dependents still there with their own uids (never deleted), pointing at the
//! objects as they are now? Is the registration that should be gone gone?
//!
//! After a run (or during one) the objects are looked for under the new kind; once a
//! rollback has begun, under the old kind. Fields only the cluster has (defaults of the
//! new schema) are listed as additions, not differences.

use super::MigrateError;
use super::adopt::{adoption, current_of, links};
use super::batch::migrated_uids;
use super::diff;
use super::journal::Backup;
use super::journal::{self, JournalState, Phase, SourceKind};
use super::model::{Mapping, ObjectKey, owner_refs, same_refs, uid};
use super::ops;
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;

/// One thing that differs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// `Kind ns/name`, or the registration.
    pub object: String,
    pub detail: String,
}

/// What a verification found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Verification {
    /// `new` (the migrated objects) or `old` (after a rollback).
    pub against: String,
    pub objects: usize,
    pub dependents: usize,
    /// Losses and changes: what must be zero.
    pub differences: Vec<Finding>,
    /// Fields only the cluster has (defaults filled in by the new schema).
    pub additions: Vec<Finding>,
}

impl Verification {
    /// One sentence.
    pub fn summary(&self) -> String {
        format!(
            "{} object(s) and {} dependent(s) checked against the {} kind: {} difference(s){}",
            self.objects,
            self.dependents,
            self.against,
            self.differences.len(),
            if self.additions.is_empty() {
                String::new()
            } else {
                format!(", {} field(s) added by the server", self.additions.len())
            }
        )
    }
}

/// Compares the journal's backup with the cluster.
pub async fn verify(
    client: &kube::Client,
    backup: &Backup,
    state: &JournalState,
) -> Result<Verification, MigrateError> {
    let rolling_back = matches!(state.phase, Phase::Rollback | Phase::RolledBack);
    let mut v = Verification {
        against: if rolling_back { "old".into() } else { "new".into() },
        objects: backup.objects.len(),
        dependents: backup.dependents.len(),
        differences: vec![],
        additions: vec![],
    };
    if rolling_back && state.source == SourceKind::Files {
        return verify_removed(client, state, backup, v).await;
    }
    let mapping: Mapping =
        if rolling_back { state.mapping.towards(&state.mapping.from) } else { state.mapping.clone() };
    let migrated = migrated_uids(backup);
    let now = ops::list_all(client, &mapping.to.resource()).await?;
    let by_key: HashMap<ObjectKey, &Value> = now.iter().map(|o| (ObjectKey::of(o), o)).collect();
    let adoption = adoption(&mapping, backup, &now);
    let kind = &mapping.to.kind;
    for old in &backup.objects {
        let key = mapping.key(&ObjectKey::of(old));
        let label = format!("{kind} {key}");
        let Some(actual) = by_key.get(&key) else {
            v.differences.push(Finding { object: label, detail: format!("missing under {}", mapping.to.crd_name()) });
            continue;
        };
        let expected = mapping.object(old, &migrated);
        for change in diff::compare_objects(&expected, actual) {
            let f = Finding { object: label.clone(), detail: change.to_string() };
            if change.is_loss() { v.differences.push(f) } else { v.additions.push(f) }
        }
        let actual_refs = owner_refs(actual);
        let want = adoption.desired_refs(&owner_refs(old), &actual_refs, &migrated);
        if !same_refs(&want, &actual_refs) {
            v.differences.push(Finding {
                object: label,
                detail: format!("ownerReferences: expected {}, found {}", refs_text(&want), refs_text(&actual_refs)),
            });
        }
    }
    let links = links(&mapping, backup);
    let current = current_of(client, &links).await?;
    for l in links.iter().filter(|l| l.uid.is_some()) {
        let found = current.get(&(l.resource.group.clone(), l.resource.plural.clone())).and_then(|m| m.get(&l.key));
        let Some(obj) = found else {
            v.differences.push(Finding { object: l.label.clone(), detail: "dependent is gone".into() });
            continue;
        };
        if l.uid.as_deref() != Some(uid(obj)) {
            v.differences.push(Finding {
                object: l.label.clone(),
                detail: format!(
                    "dependent was recreated: uid {} is not the backed-up {}",
                    uid(obj),
                    l.uid.clone().unwrap_or_default()
                ),
            });
            continue;
        }
        let actual_refs = owner_refs(obj);
        let want = adoption.desired_refs(&l.backed_up_refs, &actual_refs, &migrated);
        if !same_refs(&want, &actual_refs) {
            v.differences.push(Finding {
                object: l.label.clone(),
                detail: format!("ownerReferences: expected {}, found {}", refs_text(&want), refs_text(&actual_refs)),
            });
        }
    }
    registrations(client, state, backup, rolling_back, &mut v).await?;
    Ok(v)
}

/// After a file source's rollback: the created objects are gone.
async fn verify_removed(
    client: &kube::Client,
    state: &JournalState,
    backup: &journal::Backup,
    mut v: Verification,
) -> Result<Verification, MigrateError> {
    let now = ops::list_all(client, &state.mapping.to.resource()).await?;
    let present: std::collections::HashSet<ObjectKey> = now.iter().map(ObjectKey::of).collect();
    for old in &backup.objects {
        let key = state.mapping.key(&ObjectKey::of(old));
        if present.contains(&key) {
            v.differences.push(Finding {
                object: format!("{} {key}", state.mapping.to.kind),
                detail: "still there after the rollback".into(),
            });
        }
    }
    Ok(v)
}

async fn registrations(
    client: &kube::Client,
    state: &JournalState,
    backup: &journal::Backup,
    rolling_back: bool,
    v: &mut Verification,
) -> Result<(), MigrateError> {
    let old_uid = backup.old_crd.as_ref().and_then(|c| c.pointer("/metadata/uid")).and_then(Value::as_str);
    let (want, gone) = if rolling_back {
        (
            &state.old_crd_name,
            (!state.new_crd_preexisted && state.new_crd_name != state.old_crd_name).then_some(&state.new_crd_name),
        )
    } else {
        (&state.new_crd_name, (state.source == SourceKind::Cluster).then_some(&state.old_crd_name))
    };
    match ops::get_crd(client, want).await? {
        None => v
            .differences
            .push(Finding { object: format!("CustomResourceDefinition {want}"), detail: "is not there".into() }),
        Some(crd) if !rolling_back && want == &state.old_crd_name && crd.metadata.uid.as_deref() == old_uid => {
            v.differences.push(Finding {
                object: format!("CustomResourceDefinition {want}"),
                detail: "is still the old registration".into(),
            })
        }
        Some(_) => {}
    }
    if let Some(name) = gone
        && name != want
        && let Some(crd) = ops::get_crd(client, name).await?
        && (rolling_back || crd.metadata.uid.as_deref() == old_uid)
    {
        v.differences
            .push(Finding { object: format!("CustomResourceDefinition {name}"), detail: "is still there".into() });
    }
    Ok(())
}

fn refs_text(refs: &[Value]) -> String {
    if refs.is_empty() {
        return "none".into();
    }
    let items: Vec<String> = refs
        .iter()
        .map(|r| {
            let s = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
            format!("{} {} ({})", s("kind"), s("name"), s("uid"))
        })
        .collect();
    items.join(", ")
}
