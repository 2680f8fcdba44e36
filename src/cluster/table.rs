//! Resources as the server tabulates them: a `meta.k8s.io/v1` Table, asked for with
//! kubectl's `Accept` header, so the columns are the CRD's printer columns exactly as
//! kube-apiserver computes them. A server that sends no Table gets kubectl's fallback,
//! Name and Age, computed here from the objects.

use super::error::ClusterError;
use super::health::Health;
use k8s_openapi::jiff::Timestamp;
use serde_json::Value;
use std::time::Duration;

/// kubectl's Accept for tables: v1 Table, v1beta1 Table, or whatever JSON the server has.
pub const ACCEPT_TABLE: &str =
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

/// One column definition.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TableColumn {
    pub name: String,
    #[serde(rename = "type", default)]
    pub type_: String,
    #[serde(default)]
    pub format: String,
    #[serde(default)]
    pub description: String,
    /// 0: always shown; more: only with `-o wide`.
    #[serde(default)]
    pub priority: i32,
}

/// One row with the identity of its object.
#[derive(Debug, Clone, PartialEq)]
pub struct TableRow {
    /// Cells as the server sent them (strings, numbers, booleans, null for missing values).
    pub cells: Vec<Value>,
    pub name: String,
    pub namespace: Option<String>,
    pub created: Option<Timestamp>,
    /// Whether the controller caught up, and the conditions, when the row came with its
    /// whole object (`includeObject=Object`, or a server without Tables); `None` with
    /// metadata only.
    pub health: Option<Health>,
}

/// A table of resources.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub columns: Vec<TableColumn>,
    pub rows: Vec<TableRow>,
    /// Whether the server sent the table (else it is the Name/Age fallback).
    pub from_server: bool,
}

impl Table {
    /// The fallback table of objects (each a JSON object with metadata).
    pub fn fallback(objects: &[Value], now: Timestamp) -> Table {
        let columns = vec![
            TableColumn {
                name: "Name".into(),
                type_: "string".into(),
                format: "name".into(),
                description: String::new(),
                priority: 0,
            },
            TableColumn {
                name: "Age".into(),
                type_: "string".into(),
                format: String::new(),
                description: String::new(),
                priority: 0,
            },
        ];
        let rows = objects
            .iter()
            .map(|o| {
                let mut row = row_identity(o.get("metadata"));
                row.health = Some(Health::of(o));
                row.cells = vec![
                    Value::String(row.name.clone()),
                    Value::String(row.created.map_or_else(unknown_age, |t| age(t, now))),
                ];
                row
            })
            .collect();
        Table { columns, rows, from_server: false }
    }
}

fn unknown_age() -> String {
    "<unknown>".to_string()
}

fn row_identity(meta: Option<&Value>) -> TableRow {
    let text = |k: &str| meta.and_then(|m| m.get(k)).and_then(Value::as_str).map(String::from);
    TableRow {
        cells: Vec::new(),
        name: text("name").unwrap_or_default(),
        namespace: text("namespace").filter(|n| !n.is_empty()),
        created: text("creationTimestamp").and_then(|t| t.parse().ok()),
        health: None,
    }
}

/// Sends a request with `accept` (kubectl's Table `Accept`, or plain JSON) and reads the
/// JSON answer; `target`
/// (what, name, namespace) words a 404 for one object.
pub(super) async fn request_table(
    client: &kube::Client,
    mut http_request: http::Request<Vec<u8>>,
    target: Option<(&str, &str, Option<&str>)>,
    accept: &'static str,
) -> Result<Value, ClusterError> {
    http_request.headers_mut().insert(http::header::ACCEPT, http::HeaderValue::from_static(accept));
    let text = client.request_text(http_request).await.map_err(|e| ClusterError::from_kube(e, target))?;
    serde_json::from_str(&text).map_err(|e| ClusterError::Other(format!("cannot read the server's answer: {e}")))
}

/// The Table in a server's answer; `None` when the server sent objects instead.
pub(super) fn server_table(doc: &Value) -> Result<Option<Table>, ClusterError> {
    if doc.get("kind").and_then(Value::as_str) != Some("Table") {
        return Ok(None);
    }
    let columns: Vec<TableColumn> = match doc.get("columnDefinitions") {
        Some(v) if !v.is_null() => serde_json::from_value(v.clone())
            .map_err(|e| ClusterError::Other(format!("cannot read the table's columns: {e}")))?,
        _ => Vec::new(),
    };
    let rows = doc.get("rows").and_then(Value::as_array).into_iter().flatten().map(table_row).collect();
    Ok(Some(Table { columns, rows, from_server: true }))
}

/// One row of a Table: its cells, and who it is from its `object`'s metadata.
pub(super) fn table_row(row: &Value) -> TableRow {
    let mut identity = row_identity(row.pointer("/object/metadata"));
    identity.cells = row.get("cells").and_then(Value::as_array).cloned().unwrap_or_default();
    identity.health = row
        .get("object")
        .filter(|o| o.get("kind").and_then(Value::as_str) != Some("PartialObjectMetadata"))
        .map(Health::of);
    identity
}

/// The age of something created at `created`, as kubectl prints it (`translateTimestampSince`).
pub fn age(created: Timestamp, now: Timestamp) -> String {
    let seconds = now.as_second() - created.as_second();
    if seconds < -1 {
        return "<invalid>".into();
    }
    human_duration(Duration::from_secs(u64::try_from(seconds).unwrap_or(0)))
}

/// apimachinery's `HumanDuration`: `45s`, `3m20s`, `15m`, `5h10m`, `2d4h`, `90d`, `3y10d`.
pub fn human_duration(d: Duration) -> String {
    kubectl_crd_engine::duration::human_duration(i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_like_kubectl() {
        let cases = [
            (0, "0s"),
            (119, "119s"),
            (120, "2m"),
            (200, "3m20s"),
            (600, "10m"),
            (179 * 60, "179m"),
            (3 * 3600, "3h"),
            (5 * 3600 + 600, "5h10m"),
            (47 * 3600, "47h"),
            (52 * 3600, "2d4h"),
            (8 * 86400, "8d"),
            (3 * 365 * 86400 + 10 * 86400, "3y10d"),
            (9 * 365 * 86400, "9y"),
        ];
        for (secs, text) in cases {
            assert_eq!(human_duration(Duration::from_secs(secs)), text, "{secs}s");
        }
        let t: Timestamp = "2026-11-22T02:36:58Z".parse().expect("ts");
        let later: Timestamp = "2026-11-22T02:37:03Z".parse().expect("ts");
        assert_eq!(age(t, later), "5s");
        assert_eq!(age(later, t), "<invalid>");
    }
}
