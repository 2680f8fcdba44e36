//! Deleting objects as `kubectl delete` does: one DELETE per object with the propagation
//! policy (`--cascade`) and server dry run asked for, and waiting until each deleted
//! object is gone — its finalizers done (a CRD waits for its custom resources to go).

use super::error::ClusterError;
use super::objects::ObjectRef;
use kube::api::{DeleteParams, PropagationPolicy};
use std::time::Duration;

/// How often a wait looks again whether an object is gone.
const POLL: Duration = Duration::from_millis(200);

/// What happens to an object's dependents (`--cascade`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cascade {
    Background,
    Foreground,
    Orphan,
}

/// Deletes one object (`server_dry_run`: the server checks everything and deletes
/// nothing); gives the uid of the object deleted, to wait for that one object.
pub async fn delete(
    client: &kube::Client,
    at: ObjectRef<'_>,
    cascade: Cascade,
    server_dry_run: bool,
) -> Result<Option<String>, ClusterError> {
    let params = DeleteParams {
        dry_run: server_dry_run,
        propagation_policy: Some(match cascade {
            Cascade::Background => PropagationPolicy::Background,
            Cascade::Foreground => PropagationPolicy::Foreground,
            Cascade::Orphan => PropagationPolicy::Orphan,
        }),
        ..DeleteParams::default()
    };
    let api = at.resource.api(client, Some(at.namespace));
    let deleted = api.delete(at.name, &params).await.map_err(|e| at.error(e))?;
    Ok(deleted.left().and_then(|obj| obj.metadata.uid))
}

/// Waits until the object with `uid` is gone: not found, or found with another uid (a
/// new object of the same name). `None` when it is, a [`ClusterError::WaitTimeout`] when
/// `timeout` passes first.
pub async fn wait_gone(
    client: &kube::Client,
    at: ObjectRef<'_>,
    uid: Option<&str>,
    timeout: Duration,
) -> Result<(), ClusterError> {
    let api = at.resource.api(client, Some(at.namespace));
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        match api.get_opt(at.name).await.map_err(|e| at.error(e))? {
            None => return Ok(()),
            Some(obj) if uid.is_some() && obj.metadata.uid.as_deref() != uid => return Ok(()),
            Some(_) => {}
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(ClusterError::WaitTimeout {
                what: format!("the deletion of {}/{}", at.resource.plural, at.name),
                after: timeout,
            });
        }
        tokio::time::sleep(POLL).await;
    }
}
