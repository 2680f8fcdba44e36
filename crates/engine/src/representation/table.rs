//! `meta.k8s.io` Tables: what `kubectl get` prints, computed by the server.
//!
//! A [`TableConvertor`] is a kind's column layout, built the way kube-apiserver builds
//! its three relevant convertors: the CRD table convertor (a `Name` column, then the served
//! version's `additionalPrinterColumns` evaluated as JSONPath, or a lone `Age` column when
//! there are none), the generic default convertor (`Name`, `Created At`; used for
//! CustomResourceDefinitions themselves) and the namespace printer (`Name`, `Status`,
//! `Age`). Cells follow the CRD convertor's rules: a string column shows the JSONPath
//! printer's text of the first result, other types are typed cells, a date becomes a
//! human age (`5m`, `3h12m`, `2d`), and a missing value is a `null` cell.
//!
//! Rows are computed from an object's bytes: the plain leading fields of each path are
//! found in the raw JSON and only the value they lead to is decoded.

pub use super::duration::human_duration;
use super::gofmt::{go_json_float, print_text, write_go_string};
use super::jsonpath::JsonPath;
use super::partial::write_partial;
use super::{ListMeta, MetaVersion, RawObject, raw};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceColumnDefinition;
use k8s_openapi::jiff::Timestamp;
use serde_json::Value;
use std::borrow::Cow;

/// `ObjectMeta.name`'s description, which every Name column carries.
pub const NAME_DESCRIPTION: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";

/// `ObjectMeta.creationTimestamp`'s description (the default `Age` and `Created At`
/// columns, the namespace `Age` column).
pub const CREATION_TIMESTAMP_DESCRIPTION: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

/// One `columnDefinitions` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnDefinition {
    pub name: String,
    pub type_: String,
    pub format: String,
    pub description: String,
    pub priority: i32,
}

impl ColumnDefinition {
    /// A column shown by default (priority 0).
    pub fn new(name: &str, type_: &str, format: &str, description: &str) -> Self {
        ColumnDefinition {
            name: name.into(),
            type_: type_.into(),
            format: format.into(),
            description: description.into(),
            priority: 0,
        }
    }

    /// The column with `priority` (1: only in `-o wide`).
    pub fn with_priority(mut self, priority: i32) -> Self {
        self.priority = priority;
        self
    }
}

/// A built-in printer's cell function: the decoded object and the clock ages are read at.
pub type PrintCell = fn(&Value, Timestamp) -> Cell;

/// Where a column's cells come from.
#[derive(Debug, Clone)]
enum CellSource {
    /// `metadata.name`.
    Name,
    /// A printer column: JSONPath, the number of its leading plain fields, its type.
    Path { path: JsonPath, prefix: Vec<String> },
    /// `metadata.creationTimestamp` as RFC 3339 (the default convertor's `Created At`).
    CreatedAt,
    /// `metadata.creationTimestamp` as a human age (built-in printers' `Age`).
    Age,
    /// A string field, `""` when absent (the namespace `Status`).
    Text(&'static [&'static str]),
    /// A built-in printer's cell, computed from the decoded object.
    Computed(PrintCell),
}

/// One table cell.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Null,
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl Cell {
    /// The cell as JSON, as Go's encoder writes it.
    pub fn write_json(&self, out: &mut String) {
        match self {
            Cell::Null => out.push_str("null"),
            Cell::Str(s) => write_go_string(s, out),
            Cell::Int(i) => out.push_str(&i.to_string()),
            Cell::Float(f) => out.push_str(&go_json_float(*f)),
            Cell::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        }
    }

    /// The cell as text (CSV): empty for null.
    pub fn text(&self) -> String {
        match self {
            Cell::Null => String::new(),
            Cell::Str(s) => s.clone(),
            Cell::Int(i) => i.to_string(),
            Cell::Float(f) => go_json_float(*f),
            Cell::Bool(b) => b.to_string(),
        }
    }
}

/// What a Table row carries as `object` (`?includeObject=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IncludeObject {
    None,
    #[default]
    Metadata,
    Object,
}

impl IncludeObject {
    /// Parses `includeObject`; the error is kube's 400 message.
    pub fn parse(value: Option<&str>) -> Result<Self, String> {
        match value.unwrap_or("") {
            "" | "Metadata" => Ok(IncludeObject::Metadata),
            "None" => Ok(IncludeObject::None),
            "Object" => Ok(IncludeObject::Object),
            other => Err(format!(
                "Unable to convert to Table as requested: includeObject: Invalid value: {}: must be 'Metadata', 'Object', 'None', or empty",
                crate::field::go_quote(other)
            )),
        }
    }
}

/// Options of one Table conversion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TableOptions {
    pub include_object: IncludeObject,
    /// Omit `columnDefinitions` (`null`): every Table watch event after the first.
    pub no_headers: bool,
}

/// A kind's table layout.
#[derive(Debug, Clone)]
pub struct TableConvertor {
    columns: Vec<(ColumnDefinition, CellSource)>,
    /// The default convertor builds rows by appending, so an empty list has `rows: null`.
    null_rows_when_empty: bool,
}

impl Default for TableConvertor {
    /// kube-apiserver's default convertor: `Name`, `Created At`.
    fn default() -> Self {
        TableConvertor {
            columns: vec![
                (ColumnDefinition::new("Name", "string", "name", NAME_DESCRIPTION), CellSource::Name),
                (
                    ColumnDefinition::new("Created At", "date", "", CREATION_TIMESTAMP_DESCRIPTION),
                    CellSource::CreatedAt,
                ),
            ],
            null_rows_when_empty: true,
        }
    }
}

impl TableConvertor {
    /// The namespace printer: `Name`, `Status`, `Age`.
    pub fn namespaces() -> Self {
        TableConvertor {
            columns: vec![
                (ColumnDefinition::new("Name", "string", "name", NAME_DESCRIPTION), CellSource::Name),
                (
                    ColumnDefinition::new("Status", "string", "", "The status of the namespace"),
                    CellSource::Text(&["status", "phase"]),
                ),
                (ColumnDefinition::new("Age", "string", "", CREATION_TIMESTAMP_DESCRIPTION), CellSource::Age),
            ],
            null_rows_when_empty: false,
        }
    }

    /// A `/scale` endpoint's Table (the `Scale` printer kube registers for it): `Name`,
    /// `Desired`, `Available`, `Age`, whatever columns the kind itself prints. kube reads
    /// the cells off the Scale as written, whose `spec.replicas` is `omitempty`: zero
    /// desired replicas are a null cell, zero available ones `0`.
    pub fn scale() -> Self {
        fn replicas(scale: &Value, part: &str) -> Cell {
            let replicas = scale.get(part).and_then(|p| p.get("replicas")).and_then(Value::as_i64).unwrap_or(0);
            match (part, replicas) {
                ("spec", 0) => Cell::Null,
                _ => Cell::Int(replicas),
            }
        }
        TableConvertor {
            columns: vec![
                (ColumnDefinition::new("Name", "string", "name", NAME_DESCRIPTION), CellSource::Name),
                (
                    ColumnDefinition::new("Desired", "integer", "", "Number of desired replicas"),
                    CellSource::Computed(|s, _| replicas(s, "spec")),
                ),
                (
                    ColumnDefinition::new("Available", "integer", "", "Number of actual replicas"),
                    CellSource::Computed(|s, _| replicas(s, "status")),
                ),
                (ColumnDefinition::new("Age", "date", "", CREATION_TIMESTAMP_DESCRIPTION), CellSource::Age),
            ],
            null_rows_when_empty: false,
        }
    }

    /// A built-in kind's printer (kube's `pkg/printers/internalversion`): every column
    /// computed from the decoded object. Server-side Tables carry the wide columns too.
    pub fn printer(columns: Vec<(ColumnDefinition, PrintCell)>) -> Self {
        TableConvertor {
            columns: columns.into_iter().map(|(d, f)| (d, CellSource::Computed(f))).collect(),
            null_rows_when_empty: false,
        }
    }

    /// The CRD table convertor for a served version's printer columns (a lone `Age` column
    /// when there are none). A column whose path does not parse ends the list, as in kube,
    /// which logs it and keeps the columns built so far.
    pub fn custom_resource(columns: &[CustomResourceColumnDefinition]) -> Self {
        let default_age = [CustomResourceColumnDefinition {
            name: "Age".into(),
            type_: "date".into(),
            description: Some(CREATION_TIMESTAMP_DESCRIPTION.into()),
            json_path: ".metadata.creationTimestamp".into(),
            ..Default::default()
        }];
        let columns = if columns.is_empty() { &default_age[..] } else { columns };
        let mut out = vec![(ColumnDefinition::new("Name", "string", "name", NAME_DESCRIPTION), CellSource::Name)];
        for col in columns {
            let Ok(path) = JsonPath::parse_column(&col.json_path) else { break };
            let prefix = path
                .plain_prefix()
                .unwrap_or_default()
                .into_iter()
                .take_while(|k| !k.chars().any(|c| c == '"' || c == '\\' || c.is_control()))
                .map(String::from)
                .collect();
            let description = match col.description.as_deref() {
                Some(d) if !d.is_empty() => d.to_string(),
                _ => format!("Custom resource definition column (in JSONPath format): {}", col.json_path),
            };
            out.push((
                ColumnDefinition {
                    name: col.name.clone(),
                    type_: col.type_.clone(),
                    format: col.format.clone().unwrap_or_default(),
                    description,
                    priority: col.priority.unwrap_or(0),
                },
                CellSource::Path { path, prefix },
            ));
        }
        TableConvertor { columns: out, null_rows_when_empty: false }
    }

    /// The column definitions.
    pub fn definitions(&self) -> Vec<&ColumnDefinition> {
        self.columns.iter().map(|(d, _)| d).collect()
    }

    /// The cells of one object's row at time `now`.
    pub fn cells(&self, obj: &[u8], now: Timestamp) -> Vec<Cell> {
        // Split the object and its metadata once; every column looks up from there.
        let top = raw::members(obj).unwrap_or_default();
        let top_get = |key: &str| top.iter().find(|m| m.key == key.as_bytes()).map(|m| m.value);
        let meta = top_get("metadata").and_then(raw::members).unwrap_or_default();
        let meta_string = |key: &str| meta.iter().find(|m| m.key == key.as_bytes()).and_then(|m| raw::string(m.value));
        // Printers of built-in kinds read the whole object: decode it once per row.
        let decoded = std::cell::OnceCell::new();
        let decoded = || decoded.get_or_init(|| serde_json::from_slice::<Value>(obj).unwrap_or(Value::Null));
        self.columns
            .iter()
            .map(|(def, source)| match source {
                CellSource::Name => Cell::Str(meta_string("name").unwrap_or_default()),
                CellSource::CreatedAt => Cell::Str(
                    meta_string("creationTimestamp")
                        .and_then(|t| parse_time(&t))
                        .map(crate::meta::format_time)
                        .unwrap_or_else(|| "0001-01-01T00:00:00Z".into()),
                ),
                CellSource::Age => Cell::Str(match meta_string("creationTimestamp").filter(|t| !t.is_empty()) {
                    Some(t) => parse_time(&t).map_or_else(|| "<unknown>".into(), |t| human_age(t, now)),
                    None => "<unknown>".into(),
                }),
                CellSource::Text(path) => Cell::Str(
                    path.split_first()
                        .and_then(|(first, rest)| raw::get_path(top_get(first)?, rest))
                        .and_then(raw::string)
                        .unwrap_or_default(),
                ),
                CellSource::Computed(cell) => cell(decoded(), now),
                CellSource::Path { path, prefix } => {
                    let start = match prefix.split_first() {
                        Some((first, rest)) => top_get(first).and_then(|v| raw::get_path(v, rest)),
                        None => Some(obj),
                    };
                    path_cell(start, path, prefix.len(), &def.type_, now)
                }
            })
            .collect()
    }

    /// Writes the Table of `items` (one row each) as JSON.
    pub fn write_table(
        &self,
        items: &[RawObject<'_>],
        list_meta: &ListMeta,
        opts: TableOptions,
        version: MetaVersion,
        now: Timestamp,
        out: &mut Vec<u8>,
    ) {
        out.extend_from_slice(b"{\"kind\":\"Table\",\"apiVersion\":\"");
        out.extend_from_slice(version.api_version().as_bytes());
        out.extend_from_slice(b"\",\"metadata\":");
        super::write_list_meta(list_meta, true, out);
        out.extend_from_slice(b",\"columnDefinitions\":");
        if opts.no_headers {
            out.extend_from_slice(b"null");
        } else {
            let mut s = String::from("[");
            for (i, (d, _)) in self.columns.iter().enumerate() {
                if i > 0 {
                    s.push(',');
                }
                s.push_str("{\"name\":");
                write_go_string(&d.name, &mut s);
                s.push_str(",\"type\":");
                write_go_string(&d.type_, &mut s);
                s.push_str(",\"format\":");
                write_go_string(&d.format, &mut s);
                s.push_str(",\"description\":");
                write_go_string(&d.description, &mut s);
                s.push_str(&format!(",\"priority\":{}}}", d.priority));
            }
            s.push(']');
            out.extend_from_slice(s.as_bytes());
        }
        if items.is_empty() && self.null_rows_when_empty {
            out.extend_from_slice(b",\"rows\":null}");
            return;
        }
        out.extend_from_slice(b",\"rows\":[");
        let mut cell_text = String::new();
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            cell_text.clear();
            cell_text.push_str("{\"cells\":[");
            for (j, cell) in self.cells(&item.served_json(), now).iter().enumerate() {
                if j > 0 {
                    cell_text.push(',');
                }
                cell.write_json(&mut cell_text);
            }
            cell_text.push_str("],\"object\":");
            out.extend_from_slice(cell_text.as_bytes());
            match opts.include_object {
                IncludeObject::None => out.extend_from_slice(b"null"),
                IncludeObject::Metadata => write_partial(item, version, out),
                IncludeObject::Object => item.write_json(out),
            }
            out.push(b'}');
        }
        out.extend_from_slice(b"]}");
    }
}

/// A printer column's cell: the first result of its path, typed as the column says.
/// `start` is the value its `skip` leading plain fields lead to (`None`: missing, so the
/// result is empty and the cell null).
fn path_cell(start: Option<&[u8]>, path: &JsonPath, skip: usize, type_: &str, now: Timestamp) -> Cell {
    let Some(start) = start else { return Cell::Null };
    let plain = path.plain_len() == Some(skip);
    // The common case, a plain path to a string, needs no decoding into a Value.
    if plain
        && start.first() == Some(&b'"')
        && let Some(s) = raw::string(start)
    {
        return match type_ {
            "string" => Cell::Str(s),
            _ => typed_cell(type_, &Value::String(s), now),
        };
    }
    let Ok(value) = serde_json::from_slice::<Value>(start) else { return Cell::Null };
    let first = if plain {
        Cow::Borrowed(&value)
    } else {
        match path.find_from(&value, skip) {
            Ok(mut results) if !results.is_empty() => results.swap_remove(0),
            _ => return Cell::Null,
        }
    };
    if type_ == "string" {
        return Cell::Str(print_text(&first));
    }
    typed_cell(type_, &first, now)
}

/// The CRD convertor's `cellForJSONValue`.
pub fn typed_cell(type_: &str, value: &Value, now: Timestamp) -> Cell {
    match (type_, value) {
        (_, Value::Null) => Cell::Null,
        ("integer", Value::Number(n)) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => Cell::Int(i),
            (None, Some(f)) => Cell::Int(crate::schema::gofmt::go_int64(f)),
            _ => Cell::Null,
        },
        ("number", Value::Number(n)) => n.as_f64().map_or(Cell::Null, Cell::Float),
        ("boolean", Value::Bool(b)) => Cell::Bool(*b),
        ("string", Value::String(s)) => Cell::Str(s.clone()),
        // `metav1.Time.UnmarshalQueryParameter`: empty and `null` are the zero time, which
        // (as a zero time spelled out) prints as `<unknown>`.
        ("date", Value::String(s)) => Cell::Str(match s.as_str() {
            "" | "null" => "<unknown>".into(),
            s => match parse_time(s) {
                None => "<invalid>".into(),
                Some(t) if crate::schema::go_time::is_zero(t) => "<unknown>".into(),
                Some(t) => human_age(t, now),
            },
        }),
        _ => Cell::Null,
    }
}

/// Parses a time as kube reads a `metav1.Time` (Go's `time.Parse(time.RFC3339, s)`).
pub fn parse_time(s: &str) -> Option<Timestamp> {
    crate::schema::go_time::parse_rfc3339(s)
}

/// The age of something created at `then`, as kube prints ages (`HumanDuration` of
/// `time.Since`, whose Go duration stops at 292 years).
pub fn human_age(then: Timestamp, now: Timestamp) -> String {
    human_duration(crate::schema::go_time::seconds_since(then, now))
}

#[cfg(test)]
#[path = "table_tests.rs"]
mod tests;
