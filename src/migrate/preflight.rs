//! What a rollback needs, checked before its first delete, as `run` checks before its own
//! (the plan's name conflicts and dry runs, the `validate` step): once the objects under
//! the new kind and the new CRD are removed, the old CRD must be created again — so its
//! names must be free (another CRD may have taken a short name it freed) and the cluster
//! must accept its document; or, when it was never deleted, it must still be there. Found
//! only at `restore-old-crd`, a refusal would leave the objects in the backup alone.
//!
//! [`check_rollback`] reads (every CRD, a dry run of the old document) into a
//! [`RollbackView`]; [`rollback_problems`] decides from it alone, tested without a cluster.

use super::MigrateError;
use super::convert::clean_crd;
use super::journal::{Backup, JournalState};
use super::names;
use super::ops;
use super::step::Step;
use crate::cluster::ClusterError;
use crate::cluster::registrations::{Crd, list_crds};
use serde_json::Value;

/// What the rollback's check read from the cluster.
#[derive(Debug, Clone, Default)]
pub(crate) struct RollbackView {
    /// Every CRD on the cluster.
    pub crds: Vec<Crd>,
    /// Why the cluster refused a dry run of the old CRD's document, if it did (asked only
    /// when the rollback restores it).
    pub refused: Option<String>,
}

/// Refuses (changing nothing) when the rollback `steps` could not restore the old
/// registration (`backup.old_crd`) after removing what the migration created. Asked only
/// when [`needs_old`]`(steps)`: otherwise there is nothing to check, and maybe no backup.
pub(crate) async fn check_rollback(
    client: &kube::Client,
    state: &JournalState,
    backup: &Backup,
    steps: &[Step],
) -> Result<(), MigrateError> {
    let old = old_doc(backup)?;
    let crds = list_crds(client).await?;
    let mut refused = None;
    if steps.contains(&Step::RestoreOldCrd) {
        // A dry run of its document: under its own name when that is free, else (taken by
        // the new CRD, or by itself) as the temporary copy, which checks the same schema.
        let doc = clean_crd(old);
        let (probe, temporary) = if holder(&crds, &state.old_crd_name).is_some() {
            (names::validation_crd(&doc, &state.id).1, true)
        } else {
            (doc, false)
        };
        match ops::create_crd(client, &probe, true).await {
            Ok(_) => {}
            // The temporary copy's own name taken (a validation CRD left by a crash) says
            // nothing about the old document.
            Err(ClusterError::AlreadyExists { .. }) if temporary => {}
            Err(e) => refused = Some(e.to_string()),
        }
    }
    let view = RollbackView { crds, refused };
    let problems = rollback_problems(&state.old_crd_name, &state.new_crd_name, old, steps, &view)?;
    if problems.is_empty() {
        Ok(())
    } else {
        Err(MigrateError::refused(format!(
            "cannot roll back, the old registration could not be restored: {}",
            problems.join("; ")
        )))
    }
}

/// Whether the rollback `steps` need the old registration: restored, or still there.
pub(crate) fn needs_old(steps: &[Step]) -> bool {
    steps.contains(&Step::RestoreOldCrd) || steps.contains(&Step::RestoreOldData)
}

/// The old registration's document as backed up.
fn old_doc(backup: &Backup) -> Result<&Value, MigrateError> {
    backup.old_crd.as_ref().ok_or_else(|| MigrateError::State("the backup holds no old registration".into()))
}

/// The CRD named `name`, if any.
fn holder<'a>(crds: &'a [Crd], name: &str) -> Option<&'a Crd> {
    crds.iter().find(|c| c.metadata.name.as_deref() == Some(name))
}

/// What stops the rollback `steps` from bringing back the old registration `old_name`
/// (`old`, its backed-up document) once the migration's own (`new_name`) is removed, from
/// what was read: empty when nothing does. An error when the backed-up document is no CRD.
pub(crate) fn rollback_problems(
    old_name: &str,
    new_name: &str,
    old: &Value,
    steps: &[Step],
    view: &RollbackView,
) -> Result<Vec<String>, MigrateError> {
    if !needs_old(steps) {
        return Ok(vec![]);
    }
    let holder = holder(&view.crds, old_name);
    let old_uid = old.pointer("/metadata/uid").and_then(Value::as_str);
    let is_old = |c: &Crd| old_uid.is_some() && c.metadata.uid.as_deref() == old_uid;
    // The new CRD goes away before the old one comes back (unless it was there before).
    let going = steps.contains(&Step::RemoveNewCrd).then_some(new_name);
    let mut problems = vec![];
    if !steps.contains(&Step::RestoreOldCrd) {
        if !holder.is_some_and(is_old) {
            problems.push(format!("the old CustomResourceDefinition {old_name} is no longer there"));
        }
        return Ok(problems);
    }
    let typed: Crd = serde_json::from_value(clean_crd(old))
        .map_err(|e| MigrateError::State(format!("the backed-up {old_name} is not a CRD: {e}")))?;
    match holder {
        Some(c) if Some(old_name) != going && !is_old(c) => {
            problems.push(format!("another CustomResourceDefinition named {old_name} exists"));
        }
        _ => {}
    }
    problems
        .extend(names::name_conflicts(&typed, &view.crds, going).into_iter().map(|c| format!("name conflict: {c}")));
    if let Some(e) = &view.refused {
        problems.push(format!("the cluster does not accept {old_name} again: {e}"));
    }
    Ok(problems)
}

#[cfg(test)]
#[path = "preflight_tests.rs"]
mod tests;
