//! Cluster operations only the terminal UI needs, built on the rest of this layer: the
//! endpoint of a CRD's resources as a [`ResourceType`], a watch of a resource list as
//! Table rows (what `kubectl get -w` receives), and the whole-object replace of a kind
//! without a status subresource.
//!
//! Lists are read a page at a time ([`fetch_table_page`]) so the first rows show while the
//! rest arrive. The watch asks for Table events with kubectl's `Accept`; a server that
//! sends plain objects instead gets each changed object's row through [`fetch_table`], so
//! the columns stay the server's either way. Tables and their rows are read by
//! [`super::table`]'s one reader.

use super::discovery::ResourceType;
use super::error::ClusterError;
use super::listing::{add_query, fetch_table};
use super::objects::ObjectRef;
use super::registrations::{Crd, served_resource};
use super::table::{ACCEPT_TABLE, Table, TableRow, request_table, server_table, table_row};
use futures::StreamExt;
use futures::stream::BoxStream;
use kube::api::{DeleteParams, DynamicObject, ListParams, PostParams, WatchParams};
use kube::core::WatchEvent;
use serde_json::Value;

/// The endpoint of a CRD's custom resources under its accepted names, if it is served.
pub fn resource_of(crd: &Crd) -> Option<ResourceType> {
    let ar = served_resource(crd)?;
    let accepted = crd.status.as_ref()?.accepted_names.as_ref()?;
    let version = crd.spec.versions.iter().find(|v| v.name == ar.version)?;
    let sub = version.subresources.as_ref();
    Some(ResourceType {
        group: ar.group,
        version: ar.version,
        kind: ar.kind,
        plural: ar.plural,
        singular: accepted.singular.clone().unwrap_or_default(),
        short_names: accepted.short_names.clone().unwrap_or_default(),
        categories: accepted.categories.clone().unwrap_or_default(),
        namespaced: crd.spec.scope == "Namespaced",
        verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
            .map(String::from)
            .to_vec(),
        status: sub.is_some_and(|s| s.status.is_some()),
        scale: sub.is_some_and(|s| s.scale.is_some()),
        preferred: true,
    })
}

/// One object of the kind from any namespace (the CEL workbench starts values from it).
pub async fn first_object(client: &kube::Client, kind: &ResourceType) -> Result<Option<Value>, ClusterError> {
    let list = kind.api(client, None).list(&ListParams::default().limit(1)).await;
    let list = list.map_err(|e| ClusterError::from_kube(e, None))?;
    Ok(list.items.into_iter().next().map(|o| serde_json::to_value(o).unwrap_or_default()))
}

/// Replaces an object with `edited`, status included: for kinds without a status
/// subresource, whose `.status` is an ordinary field the main endpoint saves.
pub async fn replace_object(
    client: &kube::Client,
    at: ObjectRef<'_>,
    edited: &Value,
    source: &str,
) -> Result<DynamicObject, ClusterError> {
    let obj: DynamicObject = serde_json::from_value(edited.clone()).map_err(|e| ClusterError::InvalidInput {
        what: "object",
        source_name: source.to_string(),
        reason: e.to_string(),
    })?;
    if obj.metadata.name.as_deref() != Some(at.name) {
        let reason = format!("metadata.name must stay {:?}", at.name);
        return Err(ClusterError::InvalidInput { what: "object", source_name: source.to_string(), reason });
    }
    let api = at.resource.api(client, Some(at.namespace));
    api.replace(at.name, &PostParams { field_manager: Some(super::managers::EDIT.into()), ..Default::default() }, &obj)
        .await
        .map_err(|e| at.error(e))
}

/// Deletes one object (foreground deletion is the server's default for custom resources:
/// finalizers run, and the object shows as terminating until they are done).
pub async fn delete_object(client: &kube::Client, at: ObjectRef<'_>) -> Result<(), ClusterError> {
    let api = at.resource.api(client, Some(at.namespace));
    api.delete(at.name, &DeleteParams::default()).await.map(|_| ()).map_err(|e| at.error(e))
}

/// Deletes a CustomResourceDefinition (its custom resources go with it).
pub async fn delete_crd(client: &kube::Client, name: &str) -> Result<(), ClusterError> {
    let api: kube::Api<Crd> = kube::Api::all(client.clone());
    let what = "customresourcedefinitions.apiextensions.k8s.io";
    api.delete(name, &DeleteParams::default())
        .await
        .map(|_| ())
        .map_err(|e| ClusterError::from_kube(e, Some((what, name, None))))
}

/// The names of the cluster's namespaces.
pub async fn list_namespaces(client: &kube::Client) -> Result<Vec<String>, ClusterError> {
    let api: kube::Api<k8s_openapi::api::core::v1::Namespace> = kube::Api::all(client.clone());
    let list = api.list(&ListParams::default()).await.map_err(|e| ClusterError::from_kube(e, None))?;
    Ok(list.items.into_iter().filter_map(|n| n.metadata.name).collect())
}

/// One page of a Table list, with where the list stands and where it goes on.
#[derive(Debug, Clone, PartialEq)]
pub struct TablePage {
    pub table: Table,
    /// The list's resourceVersion (the same on every page of one list): a watch that
    /// follows the list starts there and misses nothing.
    pub resource_version: String,
    /// The `continue` token of the next page, if any.
    pub next: Option<String>,
    /// How many objects the server counted after this page (`remainingItemCount`), when it
    /// said: a view sizes itself once rather than growing through a million rows.
    pub remaining: Option<u64>,
}

/// Reads one page of `resource`'s Table (`limit` rows from `continue_token`), so a view can
/// show the first rows while the rest arrive. A server that sends no Table gets the cluster
/// layer's Name/Age fallback for the whole list in one page.
pub async fn fetch_table_page(
    client: &kube::Client,
    resource: &ResourceType,
    namespace: Option<&str>,
    label_selector: Option<&str>,
    limit: u32,
    continue_token: Option<&str>,
) -> Result<TablePage, ClusterError> {
    let mut params = ListParams::default().limit(limit);
    if let Some(selector) = label_selector {
        params = params.labels(selector);
    }
    if let Some(token) = continue_token {
        params = params.continue_token(token);
    }
    let request = kube::core::Request::new(resource.collection_path(namespace));
    let mut http_request = request.list(&params).map_err(|e| ClusterError::Other(e.to_string()))?;
    // Whole objects in the rows: the health columns read status and generation.
    add_query(&mut http_request, "includeObject=Object")?;
    let doc = request_table(client, http_request, None, ACCEPT_TABLE).await?;
    let meta = doc.get("metadata");
    let text_at = |k: &str| meta.and_then(|m| m.get(k)).and_then(Value::as_str).unwrap_or_default().to_string();
    let resource_version = text_at("resourceVersion");
    let Some(table) = server_table(&doc)? else {
        let table = fetch_table(client, resource, namespace, None, label_selector).await?;
        return Ok(TablePage { table, resource_version, next: None, remaining: None });
    };
    let next = Some(text_at("continue")).filter(|c| !c.is_empty());
    let remaining = meta.and_then(|m| m.get("remainingItemCount")).and_then(Value::as_u64);
    Ok(TablePage { table, resource_version, next, remaining })
}

/// A change to a watched list.
#[derive(Debug, Clone, PartialEq)]
pub enum TableEvent {
    /// A new or changed object's row.
    Upsert(TableRow),
    Deleted {
        name: String,
        namespace: Option<String>,
    },
    /// The watch has seen everything up to this resourceVersion.
    Bookmark,
}

/// An event's object with the resourceVersion it carries.
#[derive(Debug, Clone, PartialEq)]
pub struct Watched {
    pub event: TableEvent,
    pub resource_version: Option<String>,
}

/// Whether a watch error means the resourceVersion is too old and the list must be read
/// again (410 Gone / `Expired`).
pub fn is_gone(e: &ClusterError) -> bool {
    matches!(e, ClusterError::Api { code: 410, .. })
}

/// Watches `resource` from `resource_version`, as Table rows.
pub async fn watch_table(
    client: &kube::Client,
    resource: &ResourceType,
    namespace: Option<&str>,
    label_selector: Option<&str>,
    resource_version: &str,
) -> Result<BoxStream<'static, Result<Watched, ClusterError>>, ClusterError> {
    let mut params = WatchParams::default().timeout(290);
    if let Some(selector) = label_selector {
        params = params.labels(selector);
    }
    let request = kube::core::Request::new(resource.collection_path(namespace));
    let mut http_request = request.watch(&params, resource_version).map_err(|e| ClusterError::Other(e.to_string()))?;
    add_query(&mut http_request, "includeObject=Object")?;
    http_request.headers_mut().insert(http::header::ACCEPT, http::HeaderValue::from_static(ACCEPT_TABLE));
    let events = client.request_events::<Value>(http_request).await.map_err(|e| ClusterError::from_kube(e, None))?;
    let client = client.clone();
    let resource = resource.clone();
    let namespace = namespace.map(String::from);
    Ok(events
        .then(move |item| {
            let (client, resource, namespace) = (client.clone(), resource.clone(), namespace.clone());
            async move {
                let event = item.map_err(|e| ClusterError::from_kube(e, None))?;
                watched(&client, &resource, namespace.as_deref(), event).await
            }
        })
        .boxed())
}

async fn watched(
    client: &kube::Client,
    resource: &ResourceType,
    namespace: Option<&str>,
    event: WatchEvent<Value>,
) -> Result<Watched, ClusterError> {
    let (object, deleted) = match event {
        WatchEvent::Added(o) | WatchEvent::Modified(o) => (o, false),
        WatchEvent::Deleted(o) => (o, true),
        WatchEvent::Bookmark(b) => {
            return Ok(Watched { event: TableEvent::Bookmark, resource_version: Some(b.metadata.resource_version) });
        }
        WatchEvent::Error(status) => return Err(ClusterError::from_status(&status, None)),
    };
    // A Table event holds one row whose `object` is the object's metadata.
    let table_event = object.get("kind").and_then(Value::as_str) == Some("Table");
    let row = object.pointer("/rows/0").filter(|_| table_event).map(table_row);
    let meta = if table_event { object.pointer("/rows/0/object/metadata") } else { object.get("metadata") };
    let text = |k: &str| meta.and_then(|m| m.get(k)).and_then(Value::as_str).map(String::from);
    let name = text("name").unwrap_or_default();
    let ns = text("namespace").filter(|n| !n.is_empty());
    let resource_version = text("resourceVersion");
    if deleted {
        return Ok(Watched { event: TableEvent::Deleted { name, namespace: ns }, resource_version });
    }
    let row = match row {
        Some(row) => row,
        None => {
            let in_ns = ns.as_deref().or(namespace);
            let table = fetch_table(client, resource, in_ns, Some(&name), None).await?;
            table.rows.into_iter().next().ok_or_else(|| ClusterError::Other(format!("no row for {name}")))?
        }
    };
    Ok(Watched { event: TableEvent::Upsert(row), resource_version })
}
