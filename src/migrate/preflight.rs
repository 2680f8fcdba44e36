//! What a rollback needs, checked before its first delete, as `run` checks before its own
//! (the plan's name conflicts and dry runs, the `validate` step): once the objects under
//! the new kind and the new CRD are removed, the old CRD must be created again — so its
//! names must be free (another CRD may have taken a short name it freed) and the cluster
//! must accept its document; or, when it was never deleted, it must still be there. Found
//! only at `restore-old-crd`, a refusal would leave the objects in the backup alone.

use super::MigrateError;
use super::convert::clean_crd;
use super::names;
use super::ops;
use super::step::Step;
use super::steps::Migration;
use crate::cluster::ClusterError;
use crate::cluster::registrations::{Crd, list_crds};
use serde_json::Value;

/// Refuses (changing nothing) when the rollback `steps` could not restore the old
/// registration after removing what the migration created.
pub(crate) async fn check_rollback(m: &Migration, client: &kube::Client, steps: &[Step]) -> Result<(), MigrateError> {
    let restores_crd = steps.contains(&Step::RestoreOldCrd);
    if !restores_crd && !steps.contains(&Step::RestoreOldData) {
        return Ok(());
    }
    let state = m.state();
    let old_name = &state.old_crd_name;
    let backup = m.backup()?;
    let Some(old) = &backup.old_crd else {
        return Err(MigrateError::State("the backup holds no old registration".into()));
    };
    let crds = list_crds(client).await?;
    let holder = crds.iter().find(|c| c.metadata.name.as_deref() == Some(old_name.as_str()));
    let old_uid = old.pointer("/metadata/uid").and_then(Value::as_str);
    let is_old = |c: &Crd| old_uid.is_some() && c.metadata.uid.as_deref() == old_uid;
    // The new CRD goes away before the old one comes back (unless it was there before).
    let going = steps.contains(&Step::RemoveNewCrd).then_some(state.new_crd_name.as_str());
    let mut problems = vec![];
    if !restores_crd {
        if !holder.is_some_and(is_old) {
            problems.push(format!("the old CustomResourceDefinition {old_name} is no longer there"));
        }
    } else {
        let doc = clean_crd(old);
        let typed: Crd = serde_json::from_value(doc.clone())
            .map_err(|e| MigrateError::State(format!("the backed-up {old_name} is not a CRD: {e}")))?;
        match holder {
            Some(c) if Some(old_name.as_str()) != going && !is_old(c) => {
                problems.push(format!("another CustomResourceDefinition named {old_name} exists"));
            }
            _ => {}
        }
        problems.extend(names::name_conflicts(&typed, &crds, going).into_iter().map(|c| format!("name conflict: {c}")));
        // A dry run of its document: under its own name when that is free, else (taken by
        // the new CRD, or by itself) as the temporary copy, which checks the same schema.
        let (probe, temporary) =
            if holder.is_some() { (names::validation_crd(&doc, &state.id).1, true) } else { (doc, false) };
        match ops::create_crd(client, &probe, true).await {
            Ok(_) => {}
            // The temporary copy's own name taken (a validation CRD left by a crash) says
            // nothing about the old document.
            Err(ClusterError::AlreadyExists { .. }) if temporary => {}
            Err(e) => problems.push(format!("the cluster does not accept {old_name} again: {e}")),
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(MigrateError::refused(format!(
            "cannot roll back, the old registration could not be restored: {}",
            problems.join("; ")
        )))
    }
}
