//! Watching: streams of changes for the TUI (and anything else that keeps a view live).
//!
//! These wrap kube-rs' `watcher`, which lists, then watches, and re-lists after a `410
//! Gone` on its own; errors come out as [`ClusterError`] items and the stream goes on
//! (with backoff), so a view can show "reconnecting" and keep its rows.

use super::discovery::ResourceType;
use super::error::ClusterError;
use super::registrations::Crd;
use futures::{Stream, StreamExt};
use kube::api::{Api, DynamicObject};
use kube::runtime::{WatchStreamExt, watcher};

pub use kube::runtime::watcher::Event;

/// Changes to every CRD.
pub fn watch_crds(client: &kube::Client) -> impl Stream<Item = Result<Event<Crd>, ClusterError>> + Send + use<> {
    let api: Api<Crd> = Api::all(client.clone());
    watcher(api, watcher::Config::default()).default_backoff().map(|r| r.map_err(from_watcher))
}

/// Changes to the objects of `resource` in `namespace` (`None`: every namespace).
pub fn watch_objects(
    client: &kube::Client,
    resource: &ResourceType,
    namespace: Option<&str>,
) -> impl Stream<Item = Result<Event<DynamicObject>, ClusterError>> + Send + use<> {
    let api = resource.api(client, namespace);
    watcher(api, watcher::Config::default()).default_backoff().map(|r| r.map_err(from_watcher))
}

fn from_watcher(e: watcher::Error) -> ClusterError {
    match e {
        watcher::Error::InitialListFailed(e) | watcher::Error::WatchStartFailed(e) | watcher::Error::WatchFailed(e) => {
            ClusterError::from_kube(e, None)
        }
        watcher::Error::WatchError(status) => ClusterError::from_status(&status, None),
        other => ClusterError::Other(other.to_string()),
    }
}
