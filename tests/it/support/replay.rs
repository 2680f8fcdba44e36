//! Helpers for replaying the recorded scenario against our engine, in order: a [`Translations`]
//! table that maps values the recorded server produced (uids, resourceVersions, timestamps,
//! continue tokens, `/openapi/v3` URLs with hashes) to the ones our engine produced at the same
//! place, so later requests that quote them can be rewritten; a repair for the one body the
//! recorder cut mid-document (04); and Rust twins of the recorder's trimming filters
//! (`_tools/fmt.py`: `aggr_stable`, `openapi_v2`) so our full answers can be trimmed the same way
//! before they are compared with the trimmed recordings. Tests reach it as
//! `crate::support::replay`.

use std::collections::{BTreeSet, HashMap};

use serde_json::{Map, Value};

use super::reference::Body;

/// Keys whose string values differ between two servers for the same logical thing, and that a
/// later request may quote (in its body or its query string).
pub const TRANSLATED_KEYS: &[&str] = &[
    "uid",
    "resourceVersion",
    "continue",
    "creationTimestamp",
    "deletionTimestamp",
    "lastTransitionTime",
    "time",
    "serverRelativeURL",
];

/// Query parameters whose values are looked up in the table.
const TRANSLATED_PARAMETERS: &[&str] = &["resourceVersion", "continue"];

/// Recorded value → our value, learnt by walking a recorded response and ours side by side.
#[derive(Debug, Default, Clone)]
pub struct Translations {
    map: HashMap<String, String>,
}

impl Translations {
    /// Our value for a recorded one, if it was seen.
    pub fn get(&self, recorded: &str) -> Option<&str> {
        self.map.get(recorded).map(String::as_str)
    }

    /// Number of learnt values.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when nothing was learnt yet.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Learns from two response bodies (JSON documents, or watch streams event by event).
    pub fn learn(&mut self, recorded: &Body, ours: &Body) {
        match (recorded, ours) {
            (Body::Json(recorded), Body::Json(ours)) => self.learn_value(recorded, ours, None),
            (Body::WatchLines(recorded), Body::WatchLines(ours)) => {
                for (recorded, ours) in recorded.iter().zip(ours) {
                    self.learn_value(recorded, ours, None);
                }
            }
            _ => {}
        }
    }

    /// Learns from two JSON values: at every pointer present on both sides whose key is one
    /// of [`TRANSLATED_KEYS`], the recorded string maps to ours. The first mapping wins: a value
    /// is first seen in the response that produced it, where both sides agree on what it is.
    pub fn learn_value(&mut self, recorded: &Value, ours: &Value, key: Option<&str>) {
        match (recorded, ours) {
            (Value::Object(recorded), Value::Object(ours)) => {
                for (key, child) in recorded {
                    if let Some(other) = ours.get(key) {
                        self.learn_value(child, other, Some(key));
                    }
                }
            }
            (Value::Array(recorded), Value::Array(ours)) => {
                for (recorded, ours) in recorded.iter().zip(ours) {
                    self.learn_value(recorded, ours, key);
                }
            }
            (Value::String(recorded), Value::String(ours))
                if key.is_some_and(|key| TRANSLATED_KEYS.contains(&key)) && !recorded.is_empty() =>
            {
                self.map.entry(recorded.clone()).or_insert_with(|| ours.clone());
            }
            _ => {}
        }
    }

    /// The request target with recorded values replaced by ours: a whole target that a
    /// recorded response named (`serverRelativeURL`), or the values of `resourceVersion` and
    /// `continue` query parameters. Unknown values (e.g. `resourceVersion=1`) are kept.
    pub fn rewrite_target(&self, path_and_query: &str) -> String {
        if let Some(ours) = self.get(path_and_query) {
            return ours.to_string();
        }
        let Some((path, query)) = path_and_query.split_once('?') else {
            return path_and_query.to_string();
        };
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((name, value)) if TRANSLATED_PARAMETERS.contains(&name) => {
                    match self.get(&percent_decode(value)) {
                        Some(ours) => format!("{name}={}", percent_encode(ours)),
                        None => pair.to_string(),
                    }
                }
                _ => pair.to_string(),
            })
            .collect();
        format!("{path}?{}", pairs.join("&"))
    }

    /// A JSON request body with recorded values (under [`TRANSLATED_KEYS`]) replaced by ours;
    /// other bodies (YAML, patches without such keys) come back unchanged, byte for byte.
    pub fn rewrite_body(&self, body: &[u8]) -> Vec<u8> {
        let Ok(mut value) = serde_json::from_slice::<Value>(body) else {
            return body.to_vec();
        };
        if !self.rewrite_value(&mut value, None) {
            return body.to_vec();
        }
        let mut out = serde_json::to_vec_pretty(&value).unwrap_or_else(|_| body.to_vec());
        if body.ends_with(b"\n") {
            out.push(b'\n');
        }
        out
    }

    /// Rewrites in place; true when anything changed.
    fn rewrite_value(&self, value: &mut Value, key: Option<&str>) -> bool {
        match value {
            Value::Object(map) => {
                let mut changed = false;
                for (key, child) in map.iter_mut() {
                    changed |= self.rewrite_value(child, Some(key));
                }
                changed
            }
            Value::Array(items) => {
                let mut changed = false;
                for item in items {
                    changed |= self.rewrite_value(item, key);
                }
                changed
            }
            Value::String(text) if key.is_some_and(|key| TRANSLATED_KEYS.contains(&key)) => {
                match self.get(text).filter(|ours| ours != text) {
                    Some(ours) => {
                        *text = ours.to_string();
                        true
                    }
                    None => false,
                }
            }
            _ => false,
        }
    }
}

/// Decodes `%XX` escapes (and nothing else: query values in the corpus never use `+`).
pub fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let escaped = (bytes[index] == b'%')
            .then(|| bytes.get(index + 1..index + 3))
            .flatten()
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(byte) => {
                out.push(byte);
                index += 3;
            }
            None => {
                out.push(bytes[index]);
                index += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Escapes everything but RFC 3986 unreserved characters, as Python's `quote(safe='')` does.
pub fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => (byte as char).to_string(),
            other => format!("%{other:02X}"),
        })
        .collect()
}

/// Parses a pretty-printed JSON document that the recorder cut after some line: the last,
/// possibly incomplete, line is dropped and the open arrays and objects are closed. Values
/// inside the cut container may be missing; everything that is there is real.
pub fn repair_truncated_json(text: &str) -> Option<Value> {
    let mut lines: Vec<&str> = text.lines().collect();
    while !lines.is_empty() {
        let mut candidate = lines.join("\n");
        let trimmed_len = candidate.trim_end().trim_end_matches(',').len();
        candidate.truncate(trimmed_len);
        candidate.push_str(&closers(&candidate));
        if let Ok(value) = serde_json::from_str(&candidate) {
            return Some(value);
        }
        lines.pop();
    }
    None
}

/// The brackets that close every container left open in `text` (strings are skipped).
fn closers(text: &str) -> String {
    let mut stack = Vec::new();
    let (mut in_string, mut escaped) = (false, false);
    for ch in text.chars() {
        if in_string {
            match (escaped, ch) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match ch {
            '"' => in_string = true,
            '{' => stack.push('}'),
            '[' => stack.push(']'),
            '}' | ']' => {
                stack.pop();
            }
            _ => {}
        }
    }
    stack.iter().rev().collect()
}

/// `fmt.py`'s `aggr_stable`: an aggregated discovery list reduced to one group.
pub fn aggregated_discovery_only(doc: &Value, group: &str) -> Value {
    let mut out = doc.clone();
    if let Some(Value::Array(items)) = out.get_mut("items") {
        items.retain(|item| item.pointer("/metadata/name").and_then(Value::as_str) == Some(group));
    }
    out
}

/// The group names of an aggregated discovery list, in order.
pub fn aggregated_group_names(doc: &Value) -> Vec<String> {
    doc.get("items")
        .and_then(Value::as_array)
        .map(|items| {
            items.iter().filter_map(|item| item.pointer("/metadata/name").and_then(Value::as_str)).map(String::from)
        })
        .into_iter()
        .flatten()
        .collect()
}

/// The group order a `[trimmed by the recorder: ... in this order: a, b, c]` note lists.
pub fn group_order_from_note(note: &str) -> Vec<String> {
    let Some((_, rest)) = note.split_once("in this order: ") else {
        return Vec::new();
    };
    let list = rest.split(']').next().unwrap_or_default();
    list.split(", ").map(str::trim).filter(|name| !name.is_empty()).map(String::from).collect()
}

/// `fmt.py`'s `summarize_paths`: each path item reduced to `{method: operationId,
/// parameters: [$ref | name]}`.
pub fn summarize_paths(paths: &Map<String, Value>) -> Value {
    let mut out = Map::new();
    for (path, item) in paths {
        let mut summary = Map::new();
        for (method, operation) in item.as_object().into_iter().flatten() {
            if method == "parameters" {
                let names = operation.as_array().into_iter().flatten().map(|parameter| {
                    parameter.get("$ref").or_else(|| parameter.get("name")).cloned().unwrap_or(Value::Null)
                });
                summary.insert(method.clone(), Value::Array(names.collect()));
            } else if operation.is_object() {
                summary.insert(method.clone(), operation.get("operationId").cloned().unwrap_or(Value::Null));
            }
        }
        out.insert(path.clone(), Value::Object(summary));
    }
    Value::Object(out)
}

/// Every `$ref` string inside a value.
fn collect_refs(value: &Value, acc: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                match (key.as_str(), child) {
                    ("$ref", Value::String(reference)) => {
                        acc.insert(reference.clone());
                    }
                    _ => collect_refs(child, acc),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| collect_refs(item, acc)),
        _ => {}
    }
}

/// `fmt.py`'s `openapi_v2` filter: (the trimmed document the `.http` file shows, the companion
/// `.subset.json` with the group's paths in full and the parameters they reference).
pub fn openapi_v2_trimmed(doc: &Value, path_prefix: &str, definition_prefix: &str) -> (Value, Value) {
    let empty = Map::new();
    let object = |key: &str| doc.get(key).and_then(Value::as_object).unwrap_or(&empty);
    let definitions: Map<String, Value> = object("definitions")
        .iter()
        .filter(|(name, _)| name.starts_with(definition_prefix))
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect();
    let paths: Map<String, Value> = object("paths")
        .iter()
        .filter(|(path, _)| path.starts_with(path_prefix))
        .map(|(path, value)| (path.clone(), value.clone()))
        .collect();
    let mut used = BTreeSet::new();
    collect_refs(&Value::Object(paths.clone()), &mut used);
    let parameters: Map<String, Value> = object("parameters")
        .iter()
        .filter(|(name, _)| used.contains(&format!("#/parameters/{name}")))
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect();
    let mut shown: Map<String, Value> = doc
        .as_object()
        .unwrap_or(&empty)
        .iter()
        .filter(|(key, _)| !matches!(key.as_str(), "definitions" | "paths" | "parameters"))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    shown.insert("paths".into(), summarize_paths(&paths));
    shown.insert("definitions".into(), Value::Object(definitions.clone()));
    let mut companion = Map::new();
    companion.insert("swagger".into(), doc.get("swagger").cloned().unwrap_or(Value::Null));
    companion.insert("info".into(), doc.get("info").cloned().unwrap_or(Value::Null));
    companion.insert("parameters".into(), Value::Object(parameters));
    companion.insert("paths".into(), Value::Object(paths));
    companion.insert("definitions".into(), Value::Object(definitions));
    (Value::Object(shown), Value::Object(companion))
}
