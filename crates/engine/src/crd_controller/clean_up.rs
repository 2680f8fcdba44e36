//! Deleting a CRD: `Terminating`, every custom resource deleted, then the clean-up
//! finalizer dropped so the CRD goes (kube's finalizer controller).

use crate::kinds::Kinds;
use crate::meta;
use crate::registry::conditions::{self, TERMINATING};
use crate::resources::ResourceInfo;
use crate::resources::crds::CLEANUP_FINALIZER;
use crate::resources::rest::{Rest, Subresource, WriteOptions};
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
    let in_progress = conditions::find_condition(conditions::crd_conditions(crd), TERMINATING).is_some_and(|c| {
        c.status == conditions::STATUS_TRUE
            && c.reason.as_deref() == Some(conditions::reason::INSTANCE_DELETION_IN_PROGRESS)
    });
    if !in_progress {
        let mut status = crd.status.clone().unwrap_or_default();
        conditions::set_status_condition(
            &mut status,
            conditions::condition(
                TERMINATING,
                conditions::STATUS_TRUE,
                conditions::reason::INSTANCE_DELETION_IN_PROGRESS,
                conditions::message::INSTANCE_DELETION_IN_PROGRESS,
            ),
            rest.now,
        );
        let mut updated = obj.clone();
        if let Some(map) = updated.as_object_mut() {
            map.insert("status".into(), serde_json::to_value(&status).unwrap_or(Value::Null));
        }
        rest.update(None, &name, updated, Subresource::Status, &WriteOptions::internal()).await?;
        return Ok(Step::WroteCrd);
    }
    let plural =
        crd.status.as_ref().and_then(|s| s.accepted_names.as_ref()).map(|n| n.plural.clone()).unwrap_or_default();
    let mut remaining = 0;
    if !plural.is_empty() {
        let prefix = ResourceInfo::store_prefix(&crd.spec.group, &plural);
        let page =
            rest.store.list(&prefix, &ListOptions::default()).await.map_err(|e| ApiError::internal(e.to_string()))?;
        for kv in page.items {
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
