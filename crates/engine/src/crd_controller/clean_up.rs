//! Deleting a CRD: `Terminating`, every custom resource deleted, then the clean-up
//! finalizer dropped so the CRD goes (kube's finalizer controller). While an instance is
//! stored at a version the CRD no longer lists, kube cannot list them: `Terminating` says
//! so until the CRD lists that version again (a change that brings the CRD back here).

use crate::kinds::Kinds;
use crate::meta;
use crate::registry::conditions::{self, TERMINATING};
use crate::resources::ResourceInfo;
use crate::resources::crds::CLEANUP_FINALIZER;
use crate::resources::rest::{Rest, Subresource, WriteOptions};
use crate::resources::unlisted::Listed;
use crate::status::ApiError;
use crate::store::ListOptions;
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
    let plural =
        crd.status.as_ref().and_then(|s| s.accepted_names.as_ref()).map(|n| n.plural.clone()).unwrap_or_default();
    let instances = match plural.is_empty() {
        true => Vec::new(),
        false => {
            let prefix = ResourceInfo::store_prefix(&crd.spec.group, &plural);
            let all = ListOptions::default();
            rest.store.list(&prefix, &all).await.map_err(|e| ApiError::internal(e.to_string()))?.items
        }
    };
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
    if remaining > 0 {
        return Ok(Step::Waiting);
    }
    let held: Vec<String> = meta::finalizers(obj);
    if !held.iter().any(|f| f == CLEANUP_FINALIZER) {
        // Only finalizers of others hold it: their removal brings it back.
        return Ok(Step::Waiting);
    }
    let mut done = obj.clone();
    let fins: Vec<String> = held.into_iter().filter(|f| f != CLEANUP_FINALIZER).collect();
    meta::set_finalizers(&mut done, &fins);
    if fins.is_empty() {
        // This write deletes the CRD: stop serving first, so whoever sees it gone finds
        // its kinds gone too. Should the write fail, the CRD is looked at again and
        // published from what is stored.
        kinds.set_custom(&name, Vec::new());
    }
    rest.update(None, &name, done, Subresource::Main, &WriteOptions::internal()).await?;
    Ok(Step::WroteCrd)
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
    let mut status = crd.status.clone().unwrap_or_default();
    let terminating = conditions::condition(TERMINATING, conditions::STATUS_TRUE, reason, message);
    conditions::set_status_condition(&mut status, terminating, rest.now);
    let mut updated = obj.clone();
    if let Some(map) = updated.as_object_mut() {
        map.insert("status".into(), serde_json::to_value(&status).unwrap_or(Value::Null));
    }
    let name = crd.metadata.name.clone().unwrap_or_default();
    rest.update(None, &name, updated, Subresource::Status, &WriteOptions::internal()).await?;
    Ok(Step::WroteCrd)
}
