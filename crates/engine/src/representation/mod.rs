//! Alternate representations of API resources (the representations proposal, as
//! kube-apiserver 1.32 implements it): content negotiation on `Accept`, and the
//! transformations it selects — `meta.k8s.io` Table (server-side `kubectl get` columns),
//! PartialObjectMetadata(List), YAML, indented JSON — plus the proposal's extras that kube
//! dropped or never had: `export` and `text/csv`.
//!
//! Pure of HTTP and storage: objects come in as serialized JSON ([`RawObject`]: the
//! store's bytes, the resourceVersion to put in them and the apiVersion to serve them at),
//! answers go out as bytes with their `Content-Type` ([`Encoded`]). Lists are assembled from each object's bytes so that
//! ten thousand objects cost a copy, not a decode and an encode.

/// The scalar methods of a `serde::de::Visitor` whose `Value` is a `serde_json::Value`,
/// reading each scalar as `serde_json::Value` does (a non-finite float, which JSON cannot
/// hold, as `null`): for the readers that build a value while they note something else.
macro_rules! json_scalar_visits {
    () => {
        fn visit_bool<E>(self, b: bool) -> Result<serde_json::Value, E> {
            Ok(serde_json::Value::Bool(b))
        }
        fn visit_i64<E>(self, n: i64) -> Result<serde_json::Value, E> {
            Ok(serde_json::Value::from(n))
        }
        fn visit_u64<E>(self, n: u64) -> Result<serde_json::Value, E> {
            Ok(serde_json::Value::from(n))
        }
        fn visit_f64<E>(self, n: f64) -> Result<serde_json::Value, E> {
            Ok(serde_json::Number::from_f64(n).map_or(serde_json::Value::Null, serde_json::Value::Number))
        }
        fn visit_str<E>(self, s: &str) -> Result<serde_json::Value, E> {
            Ok(serde_json::Value::String(s.to_owned()))
        }
        fn visit_string<E>(self, s: String) -> Result<serde_json::Value, E> {
            Ok(serde_json::Value::String(s))
        }
        fn visit_unit<E>(self) -> Result<serde_json::Value, E> {
            Ok(serde_json::Value::Null)
        }
        fn visit_none<E>(self) -> Result<serde_json::Value, E> {
            Ok(serde_json::Value::Null)
        }
        fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<serde_json::Value, D::Error> {
            d.deserialize_any(self)
        }
    };
}
pub(crate) use json_scalar_visits;

pub mod body_yaml;
pub mod csv;
pub mod duration;
pub mod export;
mod go_sort;
pub mod go_yaml;
pub mod gofmt;
pub mod jsonpath;
mod jsonpath_parse;
pub mod list_stream;
pub mod negotiation;
pub mod partial;
pub mod raw;
pub mod table;
pub mod yaml;

use crate::status::ApiError;
use k8s_openapi::jiff::Timestamp;
use negotiation::{Format, Negotiated, Target};
use serde_json::Value;
use table::{TableConvertor, TableOptions};

/// A `meta.k8s.io` version a conversion may target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetaVersion {
    V1,
    V1beta1,
}

impl MetaVersion {
    pub fn api_version(self) -> &'static str {
        match self {
            MetaVersion::V1 => "meta.k8s.io/v1",
            MetaVersion::V1beta1 => "meta.k8s.io/v1beta1",
        }
    }
}

/// One object as serialized JSON.
#[derive(Debug, Clone, Copy)]
pub struct RawObject<'a> {
    pub json: &'a [u8],
    /// The resourceVersion to put into `metadata` (the store keeps objects without it);
    /// `None` when `json` already carries its own.
    pub resource_version: Option<u64>,
    /// The `apiVersion` to serve the object at when the store may hold it at another (the
    /// versions of a CRD share one storage); `None`: as `json` says.
    pub api_version: Option<&'a str>,
}

impl<'a> RawObject<'a> {
    /// An object that already carries its resourceVersion.
    pub fn complete(json: &'a [u8]) -> Self {
        RawObject { json, resource_version: None, api_version: None }
    }

    /// An object as stored, served at `resource_version`.
    pub fn stored(json: &'a [u8], resource_version: u64) -> Self {
        RawObject { json, resource_version: Some(resource_version), api_version: None }
    }

    /// The object served at `api_version` when given.
    pub fn served_at(self, api_version: Option<&'a str>) -> Self {
        RawObject { api_version, ..self }
    }

    /// Writes the object with its resourceVersion and served apiVersion.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        match (self.api_version, self.resource_version) {
            (None, None) => out.extend_from_slice(self.json),
            (api_version, rv) => raw::write_served(self.json, api_version, rv, out),
        }
    }

    /// The object's bytes with its served apiVersion (resourceVersion as `json` has it),
    /// for readers of its fields: a copy only when the apiVersion changes.
    pub fn served_json(&self) -> std::borrow::Cow<'a, [u8]> {
        match self.api_version {
            Some(api_version) => raw::with_api_version(self.json, api_version),
            None => std::borrow::Cow::Borrowed(self.json),
        }
    }

    /// The object's resourceVersion.
    pub fn resource_version(&self) -> String {
        match self.resource_version {
            Some(rv) => rv.to_string(),
            None => {
                raw::get_path(self.json, &["metadata", "resourceVersion"]).and_then(raw::string).unwrap_or_default()
            }
        }
    }
}

/// `metav1.ListMeta`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListMeta {
    pub resource_version: String,
    pub continue_token: Option<String>,
    pub remaining_item_count: Option<u64>,
}

/// What a kind is called where representations need its names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindNames {
    /// `group/version` (`v1` for core).
    pub api_version: String,
    /// The list kind (`WidgetList`).
    pub list_kind: String,
    /// The Go type kube-apiserver names in its 406 messages (`*unstructured.Unstructured`).
    pub go_type: String,
    pub go_list_type: String,
    /// Whether the kind is typed (built in): kube's typed lists write their items without
    /// `apiVersion` and `kind` (their conversion from the internal list never sets them),
    /// its unstructured ones with them.
    pub typed: bool,
}

impl KindNames {
    /// The names of a kind served at `group/version`.
    pub fn new(group: &str, version: &str, kind: &str, list_kind: &str) -> Self {
        let api_version = if group.is_empty() { version.to_string() } else { format!("{group}/{version}") };
        // The package of kube's internal type: events.k8s.io Events are core Events inside.
        let package = match group {
            "" | "events.k8s.io" => "core",
            "apiextensions.k8s.io" => "apiextensions",
            "coordination.k8s.io" => "coordination",
            "admissionregistration.k8s.io" => "admissionregistration",
            _ => "",
        };
        let (go_type, go_list_type) = if package.is_empty() {
            (UNSTRUCTURED.to_string(), "*unstructured.UnstructuredList".to_string())
        } else {
            (format!("*{package}.{kind}"), format!("*{package}.{list_kind}"))
        };
        KindNames { api_version, list_kind: list_kind.to_string(), go_type, go_list_type, typed: false }
    }

    /// The names of `autoscaling/v1` `Scale`, what every `/scale` endpoint answers with.
    pub fn scale() -> Self {
        KindNames {
            api_version: "autoscaling/v1".into(),
            list_kind: "ScaleList".into(),
            go_type: "*v1.Scale".into(),
            go_list_type: "*v1.ScaleList".into(),
            typed: true,
        }
    }
}

/// The Go type of a custom resource's objects, as kube's messages name it.
const UNSTRUCTURED: &str = "*unstructured.Unstructured";

/// Everything about one request that shapes its answer.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    pub negotiated: Negotiated,
    pub table: TableOptions,
    /// The clock ages are computed against.
    pub now: Timestamp,
}

/// An encoded answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Encoded {
    pub body: Vec<u8>,
    pub content_type: &'static str,
}

fn not_acceptable(message: String) -> ApiError {
    ApiError::new(406, "NotAcceptable", message)
}

/// Serializes finished JSON bytes in the negotiated format (JSON compact or pretty, YAML).
fn finish(json: Vec<u8>, negotiated: &Negotiated) -> Encoded {
    match negotiated.format {
        Format::Yaml => {
            let value: Value = serde_json::from_slice(&json).unwrap_or(Value::Null);
            Encoded { body: yaml::to_yaml(&value).into_bytes(), content_type: Format::Yaml.content_type() }
        }
        _ if negotiated.pretty => {
            let mut out = Vec::with_capacity(json.len() * 2);
            raw::pretty(&json, &mut out);
            Encoded { body: out, content_type: Format::Json.content_type() }
        }
        _ => {
            let mut json = json;
            // Go's json.Encoder ends every document with a newline.
            json.push(b'\n');
            Encoded { body: json, content_type: Format::Json.content_type() }
        }
    }
}

/// A plain value (a Status, a discovery document) in the negotiated format, untransformed.
pub fn encode_value(negotiated: &Negotiated, value: &Value) -> Encoded {
    finish(crate::go_json::to_vec(value), negotiated)
}

/// A plain document already serialized as JSON (a discovery document) in the negotiated
/// format, untransformed.
pub fn encode_json(negotiated: &Negotiated, json: Vec<u8>) -> Encoded {
    finish(json, negotiated)
}

/// Re-encodes `json` with the server-set fields cleared (`export`).
fn exported(json: Vec<u8>, list: bool) -> Vec<u8> {
    let Ok(mut value) = serde_json::from_slice::<Value>(&json) else { return json };
    if list {
        export::export_list(&mut value)
    } else {
        export::export_object(&mut value)
    }
    crate::go_json::to_vec(&value)
}

/// The Table of `items` as CSV.
fn csv_table(table: &TableConvertor, items: &[RawObject<'_>], now: Timestamp) -> Encoded {
    let defs = table.definitions();
    let names: Vec<&str> = defs.iter().map(|d| d.name.as_str()).collect();
    let rows: Vec<_> = items.iter().map(|i| table.cells(&i.served_json(), now)).collect();
    Encoded { body: csv::to_csv(&names, &rows).into_bytes(), content_type: Format::Csv.content_type() }
}

/// One object (a get, or the answer of a write) in the negotiated representation.
pub fn encode_object(
    shape: &Shape,
    kind: &KindNames,
    table: &TableConvertor,
    obj: RawObject<'_>,
) -> Result<Encoded, ApiError> {
    let n = &shape.negotiated;
    let mut out = Vec::with_capacity(obj.json.len() + 64);
    match n.target {
        Target::Object => {
            obj.write_json(&mut out);
            if n.export {
                out = exported(out, false);
            }
        }
        Target::PartialObjectMetadata(v) => partial::write_partial(&obj, v, &mut out),
        // An `Unstructured` passes kube's list check (it has a list's accessors) and
        // fails when its items are read: a 500 that names no reason, after a write is done.
        Target::PartialObjectMetadataList(_) if kind.go_type == UNSTRUCTURED => {
            return Err(ApiError::new(500, "", "content is not a list"));
        }
        Target::PartialObjectMetadataList(_) => {
            return Err(not_acceptable(format!(
                "you requested PartialObjectMetadataList, but the requested object is not a list ({})",
                kind.go_type
            )));
        }
        Target::Table(_) if n.format == Format::Csv => return Ok(csv_table(table, &[obj], shape.now)),
        Target::Table(v) => {
            let meta = ListMeta { resource_version: obj.resource_version(), ..Default::default() };
            table.write_table(&[obj], &meta, shape.table, v, shape.now, &mut out);
        }
    }
    Ok(finish(out, n))
}

/// A list in the negotiated representation.
pub fn encode_list(
    shape: &Shape,
    kind: &KindNames,
    table: &TableConvertor,
    meta: &ListMeta,
    items: &[RawObject<'_>],
) -> Result<Encoded, ApiError> {
    let n = &shape.negotiated;
    let size: usize = items.iter().map(|i| i.json.len() + 24).sum();
    let mut out = Vec::with_capacity(size + 256);
    match n.target {
        Target::Object => {
            write_list(kind, meta, items, &mut out);
            if n.export {
                out = exported(out, true);
            }
        }
        Target::PartialObjectMetadataList(v) => partial::write_partial_list(items, meta, v, &mut out),
        Target::PartialObjectMetadata(_) => {
            return Err(not_acceptable(format!(
                "you requested PartialObjectMetadata, but the requested object is a list ({})",
                kind.go_list_type
            )));
        }
        Target::Table(_) if n.format == Format::Csv => return Ok(csv_table(table, items, shape.now)),
        Target::Table(v) => table.write_table(items, meta, shape.table, v, shape.now, &mut out),
    }
    Ok(finish(out, n))
}

/// A list as kube writes it: a typed (built-in) kind's in `ListMeta`'s struct order,
/// `{"kind":..,"apiVersion":..,"metadata":{..},"items":[..]}`; an unstructured one's
/// keys sorted, `{"apiVersion":..,"items":[..],"kind":..,"metadata":{..}}`.
fn write_list(kind: &KindNames, meta: &ListMeta, items: &[RawObject<'_>], out: &mut Vec<u8>) {
    write_list_head(kind, meta, out);
    for (i, item) in items.iter().enumerate() {
        write_list_item(kind, i, item, out);
    }
    write_list_tail(kind, meta, out);
}

/// What a list starts with, up to its first item.
fn write_list_head(kind: &KindNames, meta: &ListMeta, out: &mut Vec<u8>) {
    let string = |s: &str| Value::from(s).to_string().into_bytes();
    if kind.typed {
        out.extend_from_slice(b"{\"kind\":");
        out.extend_from_slice(&string(&kind.list_kind));
        out.extend_from_slice(b",\"apiVersion\":");
        out.extend_from_slice(&string(&kind.api_version));
        out.extend_from_slice(b",\"metadata\":");
        write_list_meta(meta, true, out);
        out.extend_from_slice(b",\"items\":[");
    } else {
        out.extend_from_slice(b"{\"apiVersion\":");
        out.extend_from_slice(&string(&kind.api_version));
        out.extend_from_slice(b",\"items\":[");
    }
}

/// The list's item at `index`, with the comma before it.
fn write_list_item(kind: &KindNames, index: usize, item: &RawObject<'_>, out: &mut Vec<u8>) {
    if index > 0 {
        out.push(b',');
    }
    if kind.typed {
        let mut served = Vec::with_capacity(item.json.len() + 24);
        item.write_json(&mut served);
        out.extend_from_slice(&raw::without_type_meta(&served));
    } else {
        item.write_json(out);
    }
}

/// What a list ends with after its last item.
fn write_list_tail(kind: &KindNames, meta: &ListMeta, out: &mut Vec<u8>) {
    if kind.typed {
        out.extend_from_slice(b"]}");
        return;
    }
    out.extend_from_slice(b"],\"kind\":");
    out.extend_from_slice(Value::from(kind.list_kind.as_str()).to_string().as_bytes());
    out.extend_from_slice(b",\"metadata\":");
    write_list_meta(meta, false, out);
    out.push(b'}');
}

/// `ListMeta`'s members in its Go struct's field order (`selfLink` is never set).
pub const LIST_META_ORDER: [&str; 3] = ["resourceVersion", "continue", "remainingItemCount"];

/// A list's `metadata`: in `ListMeta`'s field order for a typed list, sorted for an
/// unstructured one. A typed list leaves an empty `continue` out (`omitempty`); an
/// unstructured one writes what its map holds.
fn write_list_meta(meta: &ListMeta, typed: bool, out: &mut Vec<u8>) {
    let mut order = LIST_META_ORDER;
    if !typed {
        order.sort_unstable();
    }
    let value = |key: &str| match key {
        "resourceVersion" => (!meta.resource_version.is_empty()).then(|| format!("\"{}\"", meta.resource_version)),
        "continue" => {
            meta.continue_token.as_deref().filter(|c| !typed || !c.is_empty()).map(|c| Value::from(c).to_string())
        }
        _ => meta.remaining_item_count.map(|n| n.to_string()),
    };
    out.push(b'{');
    for (i, (key, value)) in order.into_iter().filter_map(|key| Some((key, value(key)?))).enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(format!("\"{key}\":{value}").as_bytes());
    }
    out.push(b'}');
}

/// Encodes the events of one watch: every object in the negotiated representation, a
/// Table's column definitions on the first event only (kube's `NoHeaders` after it).
pub struct WatchEncoder {
    shape: Shape,
    kind: KindNames,
    table: std::sync::Arc<TableConvertor>,
}

impl WatchEncoder {
    pub fn new(shape: Shape, kind: KindNames, table: std::sync::Arc<TableConvertor>) -> Self {
        WatchEncoder { shape, kind, table }
    }

    /// One event line (`{"type":..,"object":..}` and a newline), ages computed at `now`;
    /// `None` where kube's watch ends instead: no object of a watch is a list, so one asked
    /// for as a PartialObjectMetadataList fails to encode and kube closes the stream.
    pub fn event(&mut self, event_type: &str, obj: RawObject<'_>, now: Timestamp) -> Option<Vec<u8>> {
        let mut body = Vec::with_capacity(obj.json.len() + 64);
        let mut shape = self.shape;
        shape.now = now;
        shape.negotiated.pretty = false;
        shape.negotiated.format = Format::Json;
        match encode_object(&shape, &self.kind, &self.table, obj) {
            Ok(mut encoded) => {
                encoded.body.pop_if(|b| *b == b'\n');
                body = encoded.body;
            }
            Err(_) if matches!(self.shape.negotiated.target, Target::PartialObjectMetadataList(_)) => return None,
            // kube logs a failed conversion and sends the object as it is.
            Err(_) => obj.write_json(&mut body),
        }
        if matches!(self.shape.negotiated.target, Target::Table(_)) {
            self.shape.table.no_headers = true;
        }
        Some(Self::line(event_type, &body))
    }

    /// Whether events are sent as the objects themselves in JSON (not a Table, not
    /// metadata only, not exported): the same line for every such watcher of a change.
    pub fn is_plain(&self) -> bool {
        self.shape.negotiated.target == Target::Object && !self.shape.negotiated.export
    }

    /// An `ERROR` event carrying a Status.
    pub fn error(&self, status: &ApiError) -> Vec<u8> {
        Self::line("ERROR", status.to_body().as_bytes())
    }

    fn line(event_type: &str, object: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(object.len() + 32);
        out.extend_from_slice(b"{\"type\":\"");
        out.extend_from_slice(event_type.as_bytes());
        out.extend_from_slice(b"\",\"object\":");
        out.extend_from_slice(object);
        out.extend_from_slice(b"}\n");
        out
    }
}

#[cfg(test)]
#[path = "representation_tests.rs"]
mod tests;
