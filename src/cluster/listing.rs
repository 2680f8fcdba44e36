//! What `kubectl crd get` reads: a list (or one object) as the server's Table with each
//! row's object, or as plain objects, with the list's resourceVersion; and the watch that
//! follows it (`get -w`), as raw events in the same shape.
//!
//! kubectl asks for Tables only for its human-readable formats and for plain objects
//! otherwise; when it sorts a Table it asks for whole objects in the rows
//! (`includeObject=Object`) to evaluate `--sort-by` on them. So do we. A server that sends
//! no Table gets [`Table::fallback`] (Name and Age) with the objects beside it.

use super::discovery::ResourceType;
use super::error::ClusterError;
use super::table::{ACCEPT_TABLE, Table, request_table, server_table};
use futures::StreamExt;
use futures::stream::BoxStream;
use k8s_openapi::jiff::Timestamp;
use kube::api::{GetParams, ListParams, WatchParams};
use kube::core::WatchEvent;
use serde_json::Value;

/// Rows per page, as kubectl's `--chunk-size` default.
const PAGE: u32 = 500;

/// Which objects a `get` reads.
#[derive(Debug, Clone, Copy, Default)]
pub struct Query<'a> {
    /// `None`: every namespace (ignored for cluster-scoped resources).
    pub namespace: Option<&'a str>,
    /// One object by name.
    pub name: Option<&'a str>,
    pub label_selector: Option<&'a str>,
    pub field_selector: Option<&'a str>,
}

/// How the server is asked to answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A Table whose rows carry the objects' metadata (kubectl's default).
    Table,
    /// A Table whose rows carry the whole objects (kubectl with `--sort-by`).
    TableWithObjects,
    /// Plain objects.
    Objects,
}

impl Shape {
    fn accept(self) -> &'static str {
        match self {
            Shape::Table | Shape::TableWithObjects => ACCEPT_TABLE,
            Shape::Objects => "application/json",
        }
    }
}

/// A list as read: its Table, the object of each row (in row order), and where the list
/// stands (a watch that follows starts there).
#[derive(Debug, Clone, PartialEq)]
pub struct Listing {
    pub table: Table,
    /// One per row: the whole object, or its metadata (`PartialObjectMetadata`) when the
    /// server tabulated it with metadata only.
    pub objects: Vec<Value>,
    pub resource_version: String,
}

/// Reads `resource` as `query` says, a page at a time, in `shape`.
pub async fn fetch(
    client: &kube::Client,
    resource: &ResourceType,
    query: &Query<'_>,
    shape: Shape,
) -> Result<Listing, ClusterError> {
    let request = kube::core::Request::new(resource.collection_path(query.namespace));
    let target_ns = query.namespace.filter(|_| resource.namespaced).map(String::from);
    let qualified = resource.qualified_name();
    let mut params = ListParams::default().limit(PAGE);
    if let Some(selector) = query.label_selector {
        params = params.labels(selector);
    }
    if let Some(selector) = query.field_selector {
        params = params.fields(selector);
    }
    let mut listing =
        Listing { table: Table::fallback(&[], Timestamp::now()), objects: Vec::new(), resource_version: String::new() };
    let mut first = true;
    loop {
        let http_request = match query.name {
            Some(n) => request.get(n, &GetParams::default()),
            None => request.list(&params),
        };
        let mut http_request = http_request.map_err(|e| ClusterError::Other(e.to_string()))?;
        if shape == Shape::TableWithObjects {
            add_query(&mut http_request, "includeObject=Object")?;
        }
        let target = query.name.map(|n| (qualified.as_str(), n, target_ns.as_deref()));
        let doc = request_table(client, http_request, target, shape.accept()).await?;
        let page = page(doc, query.name.is_some())?;
        if first {
            listing.table.columns = page.table.columns;
            listing.table.from_server = page.table.from_server;
            listing.resource_version = page.resource_version;
            first = false;
        }
        listing.table.rows.extend(page.table.rows);
        listing.objects.extend(page.objects);
        match page.next {
            Some(token) if query.name.is_none() => params = params.continue_token(&token),
            _ => return Ok(listing),
        }
    }
}

/// Adds `param` to a request's query string.
pub(super) fn add_query(request: &mut http::Request<Vec<u8>>, param: &str) -> Result<(), ClusterError> {
    let uri = request.uri().to_string();
    let joined = if uri.contains('?') { format!("{uri}&{param}") } else { format!("{uri}?{param}") };
    *request.uri_mut() = joined.parse().map_err(|e| ClusterError::Other(format!("bad request address: {e}")))?;
    Ok(())
}

/// One answer read: rows, their objects, the list's resourceVersion and continue token.
pub(super) struct Page {
    pub table: Table,
    objects: Vec<Value>,
    resource_version: String,
    next: Option<String>,
}

pub(super) fn page(mut doc: Value, single: bool) -> Result<Page, ClusterError> {
    let meta = |doc: &Value, key: &str| {
        doc.pointer(&format!("/metadata/{key}")).and_then(Value::as_str).filter(|s| !s.is_empty()).map(String::from)
    };
    let resource_version = meta(&doc, "resourceVersion").unwrap_or_default();
    let next = meta(&doc, "continue");
    if let Some(table) = server_table(&doc)? {
        let objects = rows_objects(&doc);
        return Ok(Page { table, objects, resource_version, next });
    }
    let objects = if single {
        vec![doc]
    } else {
        let kind = doc.get("kind").and_then(Value::as_str).and_then(|k| k.strip_suffix("List")).map(Value::from);
        let api_version = doc.get("apiVersion").cloned();
        let mut items = match doc.get_mut("items").map(Value::take) {
            Some(Value::Array(items)) => items,
            _ => Vec::new(),
        };
        // Items of a typed list come without their kind; kubectl puts it back, so do we.
        for item in items.iter_mut().filter_map(Value::as_object_mut) {
            for (key, value) in [("kind", &kind), ("apiVersion", &api_version)] {
                if let Some(value) = value.as_ref().filter(|_| !item.contains_key(key)) {
                    item.insert(key.to_string(), value.clone());
                }
            }
        }
        items
    };
    Ok(Page { table: Table::fallback(&objects, Timestamp::now()), objects, resource_version, next })
}

/// The `object` of every row of a Table document.
fn rows_objects(doc: &Value) -> Vec<Value> {
    let rows = doc.get("rows").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    rows.iter().map(|r| r.get("object").cloned().unwrap_or(Value::Null)).collect()
}

/// What happened to an object in a watch, as kubectl names it in `--output-watch-events`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    Added,
    Modified,
    Deleted,
}

impl EventType {
    /// The event's type as the API spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }

    /// The EVENT cell of a table, padded to one width as kubectl's `formatEventType` pads it.
    pub fn cell(self) -> &'static str {
        match self {
            EventType::Added => "ADDED   ",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED ",
        }
    }
}

/// One watch event read as a [`Listing`] of the changed object (one row).
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub event: EventType,
    pub listing: Listing,
}

/// Watches what `query` selects from `resource_version` (a name becomes kubectl's
/// `metadata.name` field selector); each event comes in `shape`. Bookmarks are skipped.
/// The server sends a Table's column definitions with the first event only, so later
/// events' tables have no columns: the caller keeps the list's.
pub async fn watch(
    client: &kube::Client,
    resource: &ResourceType,
    query: &Query<'_>,
    shape: Shape,
    resource_version: &str,
) -> Result<BoxStream<'static, Result<Change, ClusterError>>, ClusterError> {
    let mut params = WatchParams::default();
    if let Some(selector) = query.label_selector {
        params = params.labels(selector);
    }
    let by_name = query.name.map(|n| format!("metadata.name={n}"));
    let fields: Vec<&str> = query.field_selector.into_iter().chain(by_name.as_deref()).collect();
    if !fields.is_empty() {
        params = params.fields(&fields.join(","));
    }
    let request = kube::core::Request::new(resource.collection_path(query.namespace));
    let mut http_request = request.watch(&params, resource_version).map_err(|e| ClusterError::Other(e.to_string()))?;
    if shape == Shape::TableWithObjects {
        add_query(&mut http_request, "includeObject=Object")?;
    }
    let accept = http::HeaderValue::from_static(shape.accept());
    http_request.headers_mut().insert(http::header::ACCEPT, accept);
    let events = client.request_events::<Value>(http_request).await.map_err(|e| ClusterError::from_kube(e, None))?;
    Ok(events
        .filter_map(|item| async move {
            let event = match item {
                Ok(event) => event,
                Err(e) => return Some(Err(ClusterError::from_kube(e, None))),
            };
            let (event, object) = match event {
                WatchEvent::Added(o) => (EventType::Added, o),
                WatchEvent::Modified(o) => (EventType::Modified, o),
                WatchEvent::Deleted(o) => (EventType::Deleted, o),
                WatchEvent::Bookmark(_) => return None,
                WatchEvent::Error(status) => return Some(Err(ClusterError::from_status(&status, None))),
            };
            Some(page(object, true).map(|p| Change {
                event,
                listing: Listing { table: p.table, objects: p.objects, resource_version: p.resource_version },
            }))
        })
        .boxed())
}

/// Fetches a table of `resource` in `namespace` (`None`: every namespace), of one object
/// when `name` is given, filtered by `label_selector`.
pub async fn fetch_table(
    client: &kube::Client,
    resource: &ResourceType,
    namespace: Option<&str>,
    name: Option<&str>,
    label_selector: Option<&str>,
) -> Result<Table, ClusterError> {
    let query = Query { namespace, name, label_selector, field_selector: None };
    Ok(fetch(client, resource, &query, Shape::Table).await?.table)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_server_table_keeps_its_cells_and_object_identity() {
        // Reference 35, shortened.
        let doc = json!({
            "kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": "86"},
            "columnDefinitions": [
                {"name": "Name", "type": "string", "format": "name", "description": "", "priority": 0},
                {"name": "Phase", "type": "string", "format": "", "description": "", "priority": 1}
            ],
            "rows": [{"cells": ["w1", null], "object": {"kind": "PartialObjectMetadata", "metadata": {"name": "w1", "namespace": "default", "creationTimestamp": "2026-11-22T02:36:58Z"}}}]
        });
        let t = page(doc, false).expect("table").table;
        assert!(t.from_server);
        assert_eq!(t.columns[1].priority, 1);
        assert_eq!(t.rows[0].cells, vec![json!("w1"), Value::Null]);
        assert_eq!(t.rows[0].namespace.as_deref(), Some("default"));
        assert!(t.rows[0].created.is_some());
    }

    #[test]
    fn without_a_table_the_fallback_is_name_and_age() {
        let doc = json!({"kind": "WidgetList", "items": [{"metadata": {"name": "w1", "creationTimestamp": "2026-11-22T02:36:58Z"}}, {"metadata": {"name": "w2"}}]});
        let t = page(doc, false).expect("fallback").table;
        assert!(!t.from_server);
        let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["Name", "Age"]);
        assert_eq!(t.rows[0].cells[0], json!("w1"));
        assert_eq!(t.rows[1].cells[1], json!("<unknown>"));
        let one = page(json!({"kind": "Widget", "metadata": {"name": "w1"}}), true).expect("one").table;
        assert_eq!(one.rows.len(), 1);
    }
}
