//! Printer columns previewed on real objects: for each served version, each column's
//! JSONPath and the cell a few of the kind's objects yield, evaluated by the engine's CRD
//! table convertor (so the cells are what `kubectl get` would print). A column empty on
//! every object is flagged: a path with a typo, or to a field the controller never sets,
//! is a common CRD-author bug that `kubectl get` hides as blank cells.
//!
//! [`preview`] is pure (columns × objects); [`sample`] reads the objects.

use super::error::ClusterError;
use super::registrations::Crd;
use super::tui_ops::resource_of;
use crate::text::tabwrite::tabwrite;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceColumnDefinition, CustomResourceDefinitionVersion,
};
use k8s_openapi::jiff::Timestamp;
use kube::api::ListParams;
use kubectl_crd_engine::jsonpath::JsonPath;
use kubectl_crd_engine::table::TableConvertor;
use serde_json::Value;

/// How many objects of each version are read for the preview.
pub const SAMPLE: u32 = 3;

/// One printer column and its cells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnPreview {
    pub name: String,
    pub type_: String,
    pub json_path: String,
    pub priority: i32,
    /// kube's `Age`, added when a version declares no columns.
    pub implicit: bool,
    /// Why the server shows no such column (its JSONPath does not parse).
    pub error: Option<String>,
    /// The cell of each object, in [`VersionPreview::objects`] order; empty for none.
    pub cells: Vec<String>,
}

impl ColumnPreview {
    /// What is wrong with the column on these objects, if anything.
    pub fn flag(&self) -> Option<String> {
        if let Some(e) = &self.error {
            return Some(e.clone());
        }
        let n = self.cells.len();
        let empty = n > 0 && self.cells.iter().all(String::is_empty);
        empty.then(|| if n == 1 { "empty on the only object".into() } else { format!("empty on all {n} objects") })
    }
}

/// One version's columns on a few of its objects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionPreview {
    pub version: String,
    /// `namespace/name` (or `name`) of each object previewed.
    pub objects: Vec<String>,
    pub columns: Vec<ColumnPreview>,
    /// Why no objects were read at this version (the others may still have a preview).
    pub error: Option<String>,
}

/// The columns of `version` evaluated on `objects` (served at that version).
pub fn preview(version: &CustomResourceDefinitionVersion, objects: &[Value], now: Timestamp) -> VersionPreview {
    let declared = version.additional_printer_columns.clone().unwrap_or_default();
    let implicit = declared.is_empty();
    let columns = if implicit {
        vec![CustomResourceColumnDefinition {
            name: "Age".into(),
            type_: "date".into(),
            json_path: ".metadata.creationTimestamp".into(),
            ..Default::default()
        }]
    } else {
        declared
    };
    let convertor = TableConvertor::custom_resource(&columns);
    // Each row: Name, then one cell per column up to the first that does not parse.
    let rows: Vec<Vec<String>> = objects
        .iter()
        .map(|o| {
            let bytes = serde_json::to_vec(o).unwrap_or_default();
            convertor.cells(&bytes, now).iter().skip(1).map(|c| c.text()).collect()
        })
        .collect();
    let mut broken: Option<String> = None;
    let previews = columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            if broken.is_none()
                && let Err(e) = JsonPath::parse_column(&c.json_path)
            {
                broken = Some(c.name.clone());
                return column(
                    c,
                    implicit,
                    Some(format!("JSONPath does not parse ({e}): the server drops it")),
                    vec![],
                );
            }
            if let Some(first) = &broken {
                let why = format!("not shown: the server drops every column from {first} on");
                return column(c, implicit, Some(why), vec![]);
            }
            let cells = rows.iter().map(|r| r.get(i).cloned().unwrap_or_default()).collect();
            column(c, implicit, None, cells)
        })
        .collect();
    VersionPreview {
        version: version.name.clone(),
        objects: objects.iter().map(object_name).collect(),
        columns: previews,
        error: None,
    }
}

fn column(
    c: &CustomResourceColumnDefinition,
    implicit: bool,
    error: Option<String>,
    cells: Vec<String>,
) -> ColumnPreview {
    ColumnPreview {
        name: c.name.clone(),
        type_: c.type_.clone(),
        json_path: c.json_path.clone(),
        priority: c.priority.unwrap_or(0),
        implicit,
        error,
        cells,
    }
}

fn object_name(o: &Value) -> String {
    let meta = &o["metadata"];
    let name = meta["name"].as_str().unwrap_or_default();
    match meta["namespace"].as_str() {
        Some(ns) => format!("{ns}/{name}"),
        None => name.to_string(),
    }
}

/// Reads up to [`SAMPLE`] objects of each served version of `crd` and previews its columns
/// on them. A version that cannot be read (a conversion webhook down) says why in its
/// preview; only when none can is it an error.
pub async fn sample(client: &kube::Client, crd: &Crd, now: Timestamp) -> Result<Vec<VersionPreview>, ClusterError> {
    let Some(base) = resource_of(crd) else { return Ok(vec![]) };
    let mut out = vec![];
    let mut last_error = None;
    for v in crd.spec.versions.iter().filter(|v| v.served) {
        let mut resource = base.clone();
        resource.version = v.name.clone();
        let api = resource.api(client, None);
        match api.list(&ListParams::default().limit(SAMPLE)).await {
            Ok(list) => {
                let objects: Vec<Value> = list.items.iter().filter_map(|o| serde_json::to_value(o).ok()).collect();
                out.push(preview(v, &objects, now));
            }
            Err(e) => {
                let e = ClusterError::from_kube(e, None);
                out.push(VersionPreview { error: Some(e.to_string()), ..preview(v, &[], now) });
                last_error = Some(e);
            }
        }
    }
    match last_error {
        Some(e) if out.iter().all(|p| p.error.is_some()) => Err(e),
        _ => Ok(out),
    }
}

/// `describe`'s preview section: per version, a table of columns with one cell per object
/// and the flag of each column that has one.
pub fn describe_lines(previews: &[VersionPreview]) -> Vec<String> {
    let mut out = vec![];
    for p in previews {
        let n = p.objects.len();
        out.push(format!("Printer columns {} on {n} object{}:", p.version, if n == 1 { "" } else { "s" }));
        let mut rows = vec![["COLUMN", "TYPE", "JSONPATH"].map(String::from).to_vec()];
        rows[0].extend(p.objects.iter().cloned());
        for c in &p.columns {
            let name = if c.implicit { format!("{} (implicit)", c.name) } else { c.name.clone() };
            let mut row = vec![name, c.type_.clone(), c.json_path.clone()];
            match c.flag() {
                // Its cells are all empty (or there are none): the flag says it in their place.
                Some(flag) => row.push(format!("! {flag}")),
                None => row.extend(c.cells.iter().map(|s| if s.is_empty() { "<none>".to_string() } else { s.clone() })),
            }
            rows.push(row);
        }
        out.extend(tabwrite(&rows).lines().map(|l| format!("  {}", l.trim_end())));
        match &p.error {
            Some(e) => out.push(format!("  no objects read: {e}")),
            None if p.objects.is_empty() => out.push("  no objects to preview on".into()),
            None => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn version(columns: Value) -> CustomResourceDefinitionVersion {
        serde_json::from_value(json!({"name": "v1", "served": true, "storage": true,
            "additionalPrinterColumns": columns}))
        .expect("version")
    }

    fn obj(name: &str, spec: Value) -> Value {
        json!({"metadata": {"name": name, "namespace": "ns", "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": spec})
    }

    fn now() -> Timestamp {
        "2026-01-01T00:05:00Z".parse().expect("time")
    }

    #[test]
    fn cells_come_from_each_object_and_empty_columns_are_flagged() {
        let v = version(json!([
            {"name": "Engine", "type": "string", "jsonPath": ".spec.engine"},
            {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
            {"name": "Backup", "type": "string", "jsonPath": ".spec.backup.schedule", "priority": 1},
        ]));
        let objects = [obj("a", json!({"engine": "pg", "size": 3})), obj("b", json!({"engine": "redis"}))];
        let p = preview(&v, &objects, now());
        assert_eq!(p.objects, ["ns/a", "ns/b"]);
        let cells: Vec<_> = p.columns.iter().map(|c| (c.name.as_str(), c.cells.clone(), c.flag())).collect();
        assert_eq!(
            cells,
            [
                ("Engine", vec!["pg".to_string(), "redis".into()], None),
                ("Size", vec!["3".into(), String::new()], None),
                ("Backup", vec![String::new(), String::new()], Some("empty on all 2 objects".into())),
            ]
        );
        let text = describe_lines(&[p]).join("\n");
        assert!(text.contains("Size     integer   .spec.size              3      <none>"), "{text}");
        assert!(text.contains("Backup   string    .spec.backup.schedule   ! empty on all 2 objects"), "{text}");
    }

    #[test]
    fn no_columns_mean_kubes_age_and_a_bad_path_drops_the_rest() {
        let p = preview(&version(json!([])), &[obj("a", json!({}))], now());
        assert_eq!(p.columns.len(), 1);
        assert!(p.columns[0].implicit);
        assert_eq!(p.columns[0].cells, ["5m"]);
        let v = version(json!([
            {"name": "Bad", "type": "string", "jsonPath": ".spec[.x"},
            {"name": "After", "type": "string", "jsonPath": ".spec.x"},
        ]));
        let p = preview(&v, &[obj("a", json!({"x": "1"}))], now());
        assert!(p.columns[0].flag().is_some_and(|f| f.starts_with("JSONPath does not parse")), "{:?}", p.columns[0]);
        assert_eq!(p.columns[1].flag().as_deref(), Some("not shown: the server drops every column from Bad on"));
        assert_eq!(p.objects.len(), 1);
        assert_eq!(preview(&v, &[], now()).columns[0].flag().map(|f| f.starts_with("JSONPath")), Some(true));
        let unread = VersionPreview { error: Some("conversion webhook down".into()), ..preview(&v, &[], now()) };
        assert!(describe_lines(&[unread]).contains(&"  no objects read: conversion webhook down".to_string()));
    }
}
