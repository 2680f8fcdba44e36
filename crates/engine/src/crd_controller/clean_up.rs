//! Deleting a CRD: `Terminating`, every custom resource deleted, then the clean-up
//! finalizer dropped so the CRD goes (kube's finalizer controller). While an instance is
//! stored at a version the CRD no longer lists, kube cannot list them: `Terminating` says
//! so until the CRD lists that version again (a change that brings the CRD back here).

use crate::kinds::Kinds;
use crate::meta;
use crate::registry::conditions::{self, ESTABLISHED, TERMINATING};
use crate::resources::ResourceInfo;
use crate::resources::crds::CLEANUP_FINALIZER;
use crate::resources::rest::{Rest, Subresource, WriteOptions};
use crate::resources::unlisted::Listed;
use crate::status::ApiError;
use crate::store::{KeyValue, ListOptions};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::Value;

/// What one step of a clean-up did.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Step {
    /// The CRD was written (marked `Terminating`, or its finalizer dropped).
    WroteCrd,
    /// Custom resources held by finalizers of their own remain; their changes bring the
    /// CRD back.
    Waiting,
}

/// One step of deleting `crd`, stored as `obj`.
pub(super) async fn clean_up(
    rest: &Rest<'_>,
    kinds: &Kinds,
    crd: &CustomResourceDefinition,
    obj: &Value,
) -> Result<Step, ApiError> {
    let name = crd.metadata.name.clone().unwrap_or_default();
    let held: Vec<String> = meta::finalizers(obj);
    if !held.iter().any(|f| f == CLEANUP_FINALIZER) {
        // Done, or not ours to do: only finalizers of others hold it, and their removal
        // brings it back.
        return Ok(Step::Waiting);
    }
    // Like kube, only an established CRD has instances to delete; one that never was goes
    // saying so.
    let established = conditions::is_crd_condition_true(crd, ESTABLISHED);
    let instances = if established { list_instances(rest, crd).await? } else { Vec::new() };
    // Checked before `InstanceDeletionInProgress` is written, so that the two conditions
    // do not take turns: kube's retries write both, ours waits for the CRD to change.
    if let Some(refused) = Listed::of(crd).first_refused(&instances) {
        let message = format!("could not list instances: {}", refused.message);
        return set_terminating(rest, crd, obj, conditions::reason::INSTANCE_DELETION_FAILED, &message).await;
    }
    let in_progress = conditions::find_condition(conditions::crd_conditions(crd), TERMINATING).is_some_and(|c| {
        c.status == conditions::STATUS_TRUE
            && c.reason.as_deref() == Some(conditions::reason::INSTANCE_DELETION_IN_PROGRESS)
    });
    if !in_progress {
        let (reason, message) =
            (conditions::reason::INSTANCE_DELETION_IN_PROGRESS, conditions::message::INSTANCE_DELETION_IN_PROGRESS);
        return set_terminating(rest, crd, obj, reason, message).await;
    }
    if delete_instances(rest, instances).await > 0 {
        return Ok(Step::Waiting);
    }
    // kube's last write: `Terminating=False` and its finalizer gone, as one status update.
    // A CRD that finalizers of others hold stays so, served again with every verb.
    let (reason, message) = match established {
        true => (conditions::reason::INSTANCE_DELETION_COMPLETED, conditions::message::INSTANCE_DELETION_COMPLETED),
        false => (conditions::reason::NEVER_ESTABLISHED, conditions::message::NEVER_ESTABLISHED),
    };
    let mut done = obj.clone();
    if let Some(map) = done.as_object_mut() {
        map.insert("status".into(), terminating(crd, conditions::STATUS_FALSE, reason, message, rest));
    }
    let fins: Vec<String> = held.into_iter().filter(|f| f != CLEANUP_FINALIZER).collect();
    meta::set_finalizers(&mut done, &fins);
    if fins.is_empty() {
        // This write deletes the CRD: stop serving first, so whoever sees it gone finds
        // its kinds gone too. Should the write fail, the CRD is looked at again and
        // published from what is stored.
        kinds.set_custom(&name, Vec::new());
    }
    rest.update(None, &name, done, Subresource::Status, &WriteOptions::internal()).await?;
    Ok(Step::WroteCrd)
}

/// `crd`'s status with its `Terminating` condition set so, as JSON.
fn terminating(crd: &CustomResourceDefinition, status: &str, reason: &str, message: &str, rest: &Rest<'_>) -> Value {
    let mut out = crd.status.clone().unwrap_or_default();
    conditions::set_status_condition(&mut out, conditions::condition(TERMINATING, status, reason, message), rest.now);
    serde_json::to_value(&out).unwrap_or(Value::Null)
}

/// Writes `Terminating=True` with `reason` and `message`, unless the CRD says so already.
async fn set_terminating(
    rest: &Rest<'_>,
    crd: &CustomResourceDefinition,
    obj: &Value,
    reason: &str,
    message: &str,
) -> Result<Step, ApiError> {
    let said = conditions::find_condition(conditions::crd_conditions(crd), TERMINATING).is_some_and(|c| {
        c.status == conditions::STATUS_TRUE
            && c.reason.as_deref() == Some(reason)
            && c.message.as_deref() == Some(message)
    });
    if said {
        return Ok(Step::Waiting);
    }
    let mut updated = obj.clone();
    if let Some(map) = updated.as_object_mut() {
        map.insert("status".into(), terminating(crd, conditions::STATUS_TRUE, reason, message, rest));
    }
    let name = crd.metadata.name.clone().unwrap_or_default();
    rest.update(None, &name, updated, Subresource::Status, &WriteOptions::internal()).await?;
    Ok(Step::WroteCrd)
}

/// The stored custom resources of `crd`.
async fn list_instances(rest: &Rest<'_>, crd: &CustomResourceDefinition) -> Result<Vec<KeyValue>, ApiError> {
    let plural =
        crd.status.as_ref().and_then(|s| s.accepted_names.as_ref()).map(|n| n.plural.clone()).unwrap_or_default();
    if plural.is_empty() {
        return Ok(Vec::new());
    }
    let prefix = ResourceInfo::store_prefix(&crd.spec.group, &plural);
    let page =
        rest.store.list(&prefix, &ListOptions::default()).await.map_err(|e| ApiError::internal(e.to_string()))?;
    Ok(page.items)
}

/// Deletes the `instances` that no finalizer holds and marks the others as being deleted;
/// how many remain.
async fn delete_instances(rest: &Rest<'_>, instances: Vec<KeyValue>) -> usize {
    let mut remaining = 0;
    for kv in instances {
        let mut cr = meta::from_stored(&kv);
        if meta::finalizers(&cr).is_empty() {
            let _ = rest.store.delete(&kv.key, Some(kv.mod_revision)).await;
        } else {
            remaining += 1;
            if meta::deletion_timestamp(&cr).is_none() {
                meta::mark_as_deleting(&mut cr, rest.now);
                let _ = rest.store.update(&kv.key, meta::to_stored(&cr), Some(kv.mod_revision)).await;
            }
        }
    }
    remaining
}
