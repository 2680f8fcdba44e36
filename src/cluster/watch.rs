//! Watching: streams of changes for the TUI (and anything else that keeps a view live).
//!
//! These wrap kube-rs' `watcher`, which lists, then watches, and re-lists after a `410
//! Gone` on its own; errors come out as [`ClusterError`] items and the stream goes on
//! (with backoff), so a view can show "reconnecting" and keep its rows. [`watch_events`]
//! is the raw watch of whole objects the event stream shows, event by event, bookmarks
//! included, its resourceVersion kept by the caller.

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

/// What a watch event says happened, as the API spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectEventType {
    Added,
    Modified,
    Deleted,
    /// The watch has seen everything up to the object's resourceVersion.
    Bookmark,
}

impl ObjectEventType {
    pub fn as_str(self) -> &'static str {
        match self {
            ObjectEventType::Added => "ADDED",
            ObjectEventType::Modified => "MODIFIED",
            ObjectEventType::Deleted => "DELETED",
            ObjectEventType::Bookmark => "BOOKMARK",
        }
    }
}

/// One event of a watch of whole objects (a bookmark's object holds its resourceVersion).
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectEvent {
    pub type_: ObjectEventType,
    pub object: serde_json::Value,
}

/// What a watch of objects follows: the namespace (`None`: every one), one object by
/// name, a label selector.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Watching {
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub label_selector: Option<String>,
}

/// Watches `resource`'s whole objects (not Table rows: a diff needs every field) from
/// `resource_version`, bookmarks included; an empty `resource_version` starts with an
/// ADDED event for every object there is, as kube-apiserver does.
pub async fn watch_events(
    client: &kube::Client,
    resource: &ResourceType,
    what: &Watching,
    resource_version: &str,
) -> Result<futures::stream::BoxStream<'static, Result<ObjectEvent, ClusterError>>, ClusterError> {
    use kube::core::WatchEvent;
    let mut params = kube::api::WatchParams::default().timeout(290);
    if let Some(selector) = &what.label_selector {
        params = params.labels(selector);
    }
    if let Some(name) = &what.name {
        params = params.fields(&format!("metadata.name={name}"));
    }
    let request = kube::core::Request::new(resource.collection_path(what.namespace.as_deref()));
    let http_request = request.watch(&params, resource_version).map_err(|e| ClusterError::Other(e.to_string()))?;
    let events =
        client.request_events::<serde_json::Value>(http_request).await.map_err(|e| ClusterError::from_kube(e, None))?;
    Ok(events
        .map(|item| {
            let (type_, object) = match item.map_err(|e| ClusterError::from_kube(e, None))? {
                WatchEvent::Added(o) => (ObjectEventType::Added, o),
                WatchEvent::Modified(o) => (ObjectEventType::Modified, o),
                WatchEvent::Deleted(o) => (ObjectEventType::Deleted, o),
                WatchEvent::Bookmark(b) => (
                    ObjectEventType::Bookmark,
                    serde_json::json!({"metadata": {"resourceVersion": b.metadata.resource_version}}),
                ),
                WatchEvent::Error(status) => return Err(ClusterError::from_status(&status, None)),
            };
            Ok(ObjectEvent { type_, object })
        })
        .boxed())
}
