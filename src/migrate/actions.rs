//! The bodies of the steps: each reads the journal and the cluster, does what is left to
//! do, and answers with a one-sentence summary. Rollback steps reuse the forward ones
//! with the mapping turned around (objects restored under the old kind are "recreated"
//! there; dependents are "re-adopted" by the restored objects).

use super::MigrateError;
use super::adopt;
use super::batch::{each, first_error, migrated_uids};
use super::context::Context;
use super::diff;
use super::guard;
use super::journal::{self, Backup, SourceKind};
use super::model::{Mapping, ObjectKey, being_deleted, uid, uids};
use super::ops;
use super::plan;
use super::progress::{Event, Report};
use super::step::Step;
use super::verify::{self, Verification};
use crate::cluster::{ClusterError, Discovery, ResourceType};
use serde_json::Value;
use std::collections::{BTreeSet, HashSet};

type Done = (String, Option<Verification>);

/// Runs one step's body.
pub(crate) async fn run(
    m: &mut Context,
    step: Step,
    client: &kube::Client,
    report: Report<'_>,
) -> Result<Done, MigrateError> {
    let plain = |s: String| Ok((s, None));
    match step {
        Step::StopControllers => plain(stop_controllers(m, client, report).await?),
        Step::Backup => plain(backup(m, client, report).await?),
        Step::CreateNewCrd => plain(create_new_crd(m, client, report).await?),
        Step::Validate => plain(validate(m, client, report).await?),
        Step::DeleteOldData => {
            let backup = m.backup()?;
            plain(delete_data(m, client, report, step, &back(m), &backup, true).await?)
        }
        Step::DeleteOldCrd => plain(delete_old_crd(m, client).await?),
        Step::Recreate => {
            let mapping = m.state().mapping.clone();
            plain(recreate(client, report, step, &mapping, &*m.backup()?).await?)
        }
        Step::Readopt => {
            let mapping = m.state().mapping.clone();
            plain(adopt::readopt(client, report, step, &mapping, &*m.backup()?).await?)
        }
        Step::RestartControllers => plain(restart_controllers(m, client).await?),
        Step::Verify | Step::VerifyRollback => {
            let v = verify::verify(client, &*m.backup()?, m.state()).await?;
            if !v.differences.is_empty() {
                return Err(MigrateError::Differences(v.differences.len()));
            }
            Ok((v.summary(), Some(v)))
        }
        Step::RemoveValidationCrd => {
            ops::delete_crd(client, &m.state().validation_crd.crd_name(), None, m.options().wait_timeout).await?;
            plain("the temporary validation CRD is gone".into())
        }
        Step::RemoveNewData => {
            let backup = m.backup()?;
            let mapping = m.state().mapping.clone();
            plain(delete_data(m, client, report, step, &mapping, &backup, false).await?)
        }
        Step::RemoveNewCrd => plain(remove_new_crd(m, client).await?),
        Step::RestoreOldCrd => plain(restore_old_crd(m, client).await.map_err(after_deletes)?),
        Step::RestoreOldData => {
            let mapping = back(m);
            plain(recreate(client, report, step, &mapping, &*m.backup()?).await?)
        }
        Step::ReadoptOld => {
            let mapping = back(m);
            plain(adopt::readopt(client, report, step, &mapping, &*m.backup()?).await?)
        }
    }
}

/// A refusal once objects have been deleted is no longer "nothing was deleted": the
/// objects are in the backup, and the run waits for the user to resume or roll back.
fn after_deletes(e: MigrateError) -> MigrateError {
    match e {
        MigrateError::Refused { reason } => MigrateError::State(format!(
            "{reason}. The objects are safe in the backup: free the names, then resume the migration (or roll it back)"
        )),
        other => other,
    }
}

/// The backup mapped onto the old kind again.
fn back(m: &Context) -> Mapping {
    let mapping = &m.state().mapping;
    mapping.towards(&mapping.from)
}

async fn stop_controllers(m: &mut Context, client: &kube::Client, report: Report<'_>) -> Result<String, MigrateError> {
    let step = Step::StopControllers;
    if m.state().controllers.is_empty() {
        return Ok("no controllers were named".into());
    }
    for i in 0..m.state().controllers.len() {
        let c = m.state().controllers[i].clone();
        if c.replicas.is_none() {
            // Recorded before scaling: once at 0, the cluster no longer knows the number.
            let replicas = ops::controller_replicas(client, &c).await?;
            m.state_mut().controllers[i].replicas = Some(replicas);
            m.save()?;
        }
        if m.state().controllers[i].replicas.is_some() {
            ops::scale_controller(client, &c, 0).await?;
            report(Event::Note { step, message: format!("{} scaled to 0", c.spec) });
            ops::wait_scaled_down(client, &c, m.options().wait_timeout).await?;
        }
    }
    let list: Vec<String> =
        m.state().controllers.iter().map(|c| format!("{} (was {})", c.spec, c.replicas.unwrap_or(0))).collect();
    Ok(format!("scaled to 0: {}", list.join(", ")))
}

async fn restart_controllers(m: &Context, client: &kube::Client) -> Result<String, MigrateError> {
    if m.state().controllers.is_empty() {
        return Ok("no controllers were named".into());
    }
    let mut list = Vec::new();
    for c in &m.state().controllers {
        if let Some(replicas) = c.replicas {
            ops::scale_controller(client, c, replicas).await?;
            list.push(format!("{} to {replicas}", c.spec));
        }
    }
    Ok(format!("scaled back: {}", list.join(", ")))
}

async fn backup(m: &mut Context, client: &kube::Client, report: Report<'_>) -> Result<String, MigrateError> {
    let step = Step::Backup;
    let from = m.state().mapping.from.clone();
    let (objects, old_crd) = match m.state().source {
        SourceKind::Cluster => {
            let name = m.state().old_crd_name.clone();
            let crd = ops::get_crd(client, &name).await?.ok_or_else(|| {
                MigrateError::refused(format!("the old CustomResourceDefinition {name} is not there"))
            })?;
            let mut started = false;
            let objects = ops::list_with_progress(client, &from.resource(), |done, total| {
                let total = total.unwrap_or(done).max(done);
                if !started {
                    report(Event::Started { step, total: Some(total) });
                    started = true;
                }
                report(Event::Progress { step, done, total });
            })
            .await?;
            let doc = serde_json::to_value(&crd).map_err(|e| ClusterError::Other(e.to_string()))?;
            (objects, Some(doc))
        }
        SourceKind::Files => {
            let objects = journal::read_docs(m.dir(), journal::INPUT_FILE)?;
            let total = objects.len() as u64;
            report(Event::Started { step, total: Some(total) });
            report(Event::Progress { step, done: total, total });
            (objects, None)
        }
    };
    let deleting = being_deleted(&objects);
    if !deleting.is_empty() {
        return Err(MigrateError::refused(format!(
            "{} object(s) are being deleted and wait for finalizers (first: {}); let them go first",
            deleting.len(),
            deleting[0]
        )));
    }
    let owners = uids(&objects);
    let discovery = Discovery::fetch(client).await?;
    let scan = ops::find_dependents(client, &discovery, &owners, &[(from.group.clone(), from.plural.clone())]).await;
    if !scan.unchecked.is_empty() {
        report(Event::Note { step, message: format!("not scanned for dependents: {}", scan.unchecked.join("; ")) });
    }
    let backup = Backup { objects, dependents: scan.dependents, old_crd };
    let summary = journal::write_backup(m.dir(), &backup)?;
    let line = format!(
        "{} object(s) in {} namespace(s) and {} dependent(s) written to {} and verified against SHA-256 sums",
        summary.objects,
        summary.per_namespace.len(),
        summary.dependents,
        m.dir().join(journal::BACKUP_DIR).display()
    );
    m.state_mut().backup = Some(summary);
    m.save()?;
    m.keep_backup(backup);
    Ok(line)
}

async fn create_new_crd(m: &Context, client: &kube::Client, report: Report<'_>) -> Result<String, MigrateError> {
    let step = Step::CreateNewCrd;
    let doc = journal::read_docs(m.dir(), journal::NEW_CRD_FILE)?.into_iter().next().unwrap_or_default();
    let name = m.state().new_crd_name.clone();
    // With the old CRD's name, the old one must be gone first (DeleteOldCrd comes before).
    if m.state().order == journal::Order::OldFirst
        && name == m.state().old_crd_name
        && let Some(old) = m.backup()?.old_crd.clone()
        && let Some(current) = ops::get_crd(client, &name).await?
        && current.metadata.uid.as_deref() == old.pointer("/metadata/uid").and_then(Value::as_str)
    {
        return Err(MigrateError::State(format!("the old CustomResourceDefinition {name} is still there")));
    }
    report(Event::Started { step, total: None });
    let ensured = ops::ensure_crd(client, &doc, m.options().wait_timeout).await;
    let (_, created) = if m.state().began(Step::DeleteOldData) { ensured.map_err(after_deletes)? } else { ensured? };
    Ok(if created { format!("{name} created and Established") } else { format!("{name} was there and is Established") })
}

async fn validate(m: &Context, client: &kube::Client, report: Report<'_>) -> Result<String, MigrateError> {
    let step = Step::Validate;
    let backup = m.backup()?;
    let mapping = m.state().mapping.clone();
    let migrated = migrated_uids(&backup);
    let keys: Vec<ObjectKey> = backup.objects.iter().map(|o| mapping.key(&ObjectKey::of(o))).collect();
    // Objects that would clash with objects already under the new kind.
    if m.state().new_crd_preexisted || m.state().order == journal::Order::NewFirst {
        let present: HashSet<ObjectKey> =
            ops::list_all(client, &mapping.to.resource()).await?.iter().map(ObjectKey::of).collect();
        let clash: Vec<String> = keys.iter().filter(|k| present.contains(k)).map(ToString::to_string).collect();
        if !clash.is_empty() {
            return Err(MigrateError::refused(format!(
                "{} object(s) already exist under the new kind (first: {})",
                clash.len(),
                clash[0]
            )));
        }
    }
    let namespaces: BTreeSet<String> = keys.iter().filter_map(|k| k.namespace.clone()).collect();
    let created = ops::ensure_namespaces(client, &namespaces).await?;
    if !created.is_empty() {
        report(Event::Note { step, message: format!("created namespace(s) {}", created.join(", ")) });
    }
    let new_doc = journal::read_docs(m.dir(), journal::NEW_CRD_FILE)?.into_iter().next().unwrap_or_default();
    let (shadow, shadow_doc) = super::names::validation_crd(&new_doc, &m.state().id);
    ops::ensure_crd(client, &shadow_doc, m.options().wait_timeout).await?;
    let shadow_mapping = Mapping { to: shadow.clone(), ..mapping.clone() };
    let res = shadow.resource();
    let results = each(step, &backup.objects, report, |o| {
        let (res, shadow_mapping, migrated) = (&res, &shadow_mapping, &migrated);
        async move { Ok(plan::check_object(client, res, shadow_mapping, o, migrated, true).await) }
    })
    .await;
    let rejected: Vec<plan::Rejection> = first_error(results)?.into_iter().flatten().collect();
    ops::delete_crd(client, &shadow.crd_name(), None, m.options().wait_timeout).await?;
    if !rejected.is_empty() {
        let shown: Vec<String> = rejected.iter().take(5).map(|r| format!("{}: {}", r.object, r.message)).collect();
        return Err(MigrateError::refused(format!(
            "the new schema refuses {} of {} object(s): {}{}",
            rejected.len(),
            backup.objects.len(),
            shown.join("; "),
            if rejected.len() > 5 { "; ..." } else { "" }
        )));
    }
    Ok(format!("all {} object(s) pass a dry run against the new schema (spec and status)", backup.objects.len()))
}

/// Deletes the backed-up objects as they are under `mapping.to` (the old kind going
/// forward; the new kind when rolling back), orphaning dependents, and waits until they are gone.
/// Going forward (`guard`), objects not in the backup, or changed since, stop the step
/// before anything is deleted: writers are still running.
async fn delete_data(
    m: &Context,
    client: &kube::Client,
    report: Report<'_>,
    step: Step,
    mapping: &Mapping,
    backup: &Backup,
    guard: bool,
) -> Result<String, MigrateError> {
    let res = mapping.to.resource();
    let current = ops::list_all(client, &res).await?;
    let targets = guard::with_backup(&current, backup, mapping);
    if guard {
        guard::unchanged_since_backup(&current, &targets, backup)?;
    }
    let uids: HashSet<String> = targets.iter().map(|(_, o)| uid(o).to_string()).collect();
    let results = each(step, &targets, report, |(backed_up, current)| {
        let res = &res;
        async move { delete_one(client, res, backed_up, current, guard).await }
    })
    .await;
    first_error(results)?;
    report(Event::Note { step, message: format!("waiting for {} object(s) to be gone", uids.len()) });
    let others = current.len().saturating_sub(targets.len());
    ops::wait_gone(client, &res, &uids, others, m.options().wait_timeout).await?;
    Ok(format!("{} {} deleted, dependents orphaned", targets.len(), res.qualified_name()))
}

/// Deletes one object, orphaning. A conflict is expected when the garbage collector has
/// just removed a reference to another migrated object (orphaning it): the object is read
/// again and, if it still is what was backed up, deleted with its new resourceVersion.
async fn delete_one(
    client: &kube::Client,
    res: &ResourceType,
    backed_up: &Value,
    current: &Value,
    guard: bool,
) -> Result<(), MigrateError> {
    let key = ObjectKey::of(current);
    let mut current = current.clone();
    for _ in 0..5 {
        match ops::delete_orphaning(client, res, &current).await {
            Ok(()) => return Ok(()),
            Err(e) if e.is_conflict() => {
                let Some(now) = ops::get(client, res, &key).await? else { return Ok(()) };
                if uid(&now) != uid(&current) {
                    return Ok(());
                }
                if guard
                    && now.pointer("/metadata/deletionTimestamp").is_none()
                    && guard::changed_since(backed_up, &now)
                {
                    return Err(MigrateError::Changed(format!(
                        "{key} changed while it was being deleted; writers are still running: stop them, then resume the migration"
                    )));
                }
                current = now;
            }
            Err(e) => return Err(e.into()),
        }
    }
    Err(MigrateError::Changed(format!("{key} kept changing while it was being deleted; stop the writers, then resume")))
}

async fn delete_old_crd(m: &Context, client: &kube::Client) -> Result<String, MigrateError> {
    let name = m.state().old_crd_name.clone();
    let backup = m.backup()?;
    let old_uid =
        backup.old_crd.as_ref().and_then(|c| c.pointer("/metadata/uid")).and_then(Value::as_str).map(String::from);
    let left = ops::list_all(client, &m.state().mapping.from.resource()).await?;
    if !left.is_empty() {
        return Err(MigrateError::Changed(format!(
            "{} object(s) are still under the old kind (first: {}); deleting the CRD would delete them and collect their dependents",
            left.len(),
            ObjectKey::of(&left[0])
        )));
    }
    ops::delete_crd(client, &name, old_uid.as_deref(), m.options().wait_timeout).await?;
    Ok(format!("{name} deleted"))
}

async fn remove_new_crd(m: &Context, client: &kube::Client) -> Result<String, MigrateError> {
    let name = m.state().new_crd_name.clone();
    let backup = m.backup().ok();
    let old_uid = backup
        .as_ref()
        .and_then(|b| b.old_crd.as_ref())
        .and_then(|c| c.pointer("/metadata/uid"))
        .and_then(Value::as_str);
    let Some(crd) = ops::get_crd(client, &name).await? else { return Ok(format!("{name} is not there")) };
    if old_uid.is_some() && crd.metadata.uid.as_deref() == old_uid {
        return Ok(format!("{name} is the old registration; kept"));
    }
    let left = ops::list_all(client, &m.state().mapping.to.resource()).await?;
    if !left.is_empty() {
        return Err(MigrateError::State(format!(
            "{} object(s) not from this migration are under the new kind (first: {}); the new CRD {name} is kept. Move or delete them, then run rollback again",
            left.len(),
            ObjectKey::of(&left[0])
        )));
    }
    ops::delete_crd(client, &name, crd.metadata.uid.as_deref(), m.options().wait_timeout).await?;
    Ok(format!("{name} deleted"))
}

async fn restore_old_crd(m: &Context, client: &kube::Client) -> Result<String, MigrateError> {
    let backup = m.backup()?;
    let Some(old) = &backup.old_crd else {
        return Err(MigrateError::State("the backup holds no old registration".into()));
    };
    let doc = super::convert::clean_crd(old);
    let (_, created) = ops::ensure_crd(client, &doc, m.options().wait_timeout).await?;
    let name = &m.state().old_crd_name;
    Ok(if created { format!("{name} created again and Established") } else { format!("{name} is there") })
}

/// Creates every backed-up object under `mapping.to` (skipping those already there with
/// the same content) and restores its status through `/status` where that is served.
async fn recreate(
    client: &kube::Client,
    report: Report<'_>,
    step: Step,
    mapping: &Mapping,
    backup: &Backup,
) -> Result<String, MigrateError> {
    let res = mapping.to.resource();
    let migrated = migrated_uids(backup);
    ops::ensure_namespaces(client, &mapping.target_namespaces(&backup.objects)).await?;
    let results = each(step, &backup.objects, report, |o| {
        let (res, migrated) = (&res, &migrated);
        async move { recreate_one(client, res, mapping, o, migrated).await }
    })
    .await;
    let created = first_error(results)?.into_iter().filter(|c| *c).count();
    Ok(format!(
        "{} object(s) under {} ({created} created, {} already there), status restored",
        backup.objects.len(),
        res.qualified_name(),
        backup.objects.len() - created
    ))
}

async fn recreate_one(
    client: &kube::Client,
    res: &ResourceType,
    mapping: &Mapping,
    old: &Value,
    migrated: &HashSet<String>,
) -> Result<bool, MigrateError> {
    let desired = mapping.object(old, migrated);
    let key = ObjectKey::of(&desired);
    let (mut current, created) = match ops::create(client, res, &desired, false).await {
        Ok(obj) => (obj, true),
        Err(ClusterError::AlreadyExists { .. }) => {
            let existing =
                ops::get(client, res, &key).await?.ok_or_else(|| MigrateError::Changed(format!("{key} vanished")))?;
            let lost = diff::losses(&desired, &existing, false);
            if !lost.is_empty() {
                return Err(MigrateError::Changed(format!(
                    "{key} already exists under {} with other content ({}); it was not created by this migration",
                    res.qualified_name(),
                    lost.join("; ")
                )));
            }
            (existing, false)
        }
        Err(e) => return Err(e.into()),
    };
    let Some(status) = desired.get("status").filter(|s| !s.is_null()) else { return Ok(created) };
    if !res.status {
        return Ok(created);
    }
    for _ in 0..5 {
        if current.get("status") == Some(status) {
            return Ok(created);
        }
        match ops::put_status(client, res, &current, status).await {
            Ok(_) => return Ok(created),
            Err(e) if e.is_conflict() => {
                current = ops::get(client, res, &key)
                    .await?
                    .ok_or_else(|| MigrateError::Changed(format!("{key} vanished")))?;
            }
            Err(e) => return Err(e.into()),
        }
    }
    Err(MigrateError::Changed(format!("{key}: its status kept changing while it was restored")))
}
