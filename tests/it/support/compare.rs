//! Comparison helpers for fidelity tests: they decide what "the same answer as the real
//! kube-apiserver" means. [`normalize`] replaces values that legitimately differ between two
//! servers (uids, resourceVersions, timestamps, Table `Age` cells, continue tokens, the current
//! resourceVersion inside "too old resource version" messages) with placeholders, and orders
//! schema-validation causes canonically because the real server does not keep their order
//! stable (INDEX.md). [`diff_json`] lists every differing JSON pointer, and the `assert_*`
//! functions panic with a readable expected-vs-actual report. Tests reach it as
//! `crate::support::compare`.

use std::fmt;

use serde_json::{Map, Value};

use super::reference::{Body, RecordedResponse, header_values};

pub const UID: &str = "<uid>";
pub const RESOURCE_VERSION: &str = "<resourceVersion>";
pub const TIMESTAMP: &str = "<timestamp>";
pub const AGE: &str = "<age>";
pub const CONTINUE: &str = "<continue>";

/// Headers worth comparing on every response (Content-Length is never compared: the recorded
/// bodies are pretty-printed and the framing choice, chunked or not, is not a fidelity fact).
pub const COMPARED_HEADERS: &[&str] = &["Content-Type", "Cache-Control", "Vary", "X-Content-Type-Options"];

const TOO_OLD: &str = "too old resource version: ";

/// One place where two JSON values differ. `None` means the value is absent on that side.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    /// RFC 6901 pointer, `""` for the root.
    pub pointer: String,
    pub expected: Option<Value>,
    pub actual: Option<Value>,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = if self.pointer.is_empty() { "(root)" } else { &self.pointer };
        writeln!(f, "  {pointer}")?;
        writeln!(f, "      expected: {}", show(self.expected.as_ref()))?;
        write!(f, "      actual:   {}", show(self.actual.as_ref()))
    }
}

fn show(value: Option<&Value>) -> String {
    value.map_or_else(|| "(absent)".to_string(), Value::to_string)
}

/// The value with every volatile field replaced by a placeholder and validation causes sorted.
pub fn normalize(value: &Value) -> Value {
    Normalizer::default().value(value, &[])
}

/// Normalizes a watch stream. Table watches only carry `columnDefinitions` on their first
/// event, so the `Age` column found there is remembered for the following events.
pub fn normalize_events(events: &[Value]) -> Vec<Value> {
    let mut normalizer = Normalizer::default();
    events.iter().map(|event| normalizer.value(event, &[])).collect()
}

/// State carried through one normalization: the index of the Table's `Age` column.
#[derive(Default)]
struct Normalizer {
    age_column: Option<usize>,
}

impl Normalizer {
    fn value(&mut self, value: &Value, path: &[&str]) -> Value {
        match value {
            Value::Object(map) => self.object(map, path),
            Value::Array(items) => Value::Array(self.array(items, path)),
            Value::String(text) => Value::String(normalize_string(text, path)),
            other => other.clone(),
        }
    }

    fn array(&mut self, items: &[Value], path: &[&str]) -> Vec<Value> {
        let indices: Vec<String> = (0..items.len()).map(|index| index.to_string()).collect();
        items.iter().zip(&indices).map(|(item, index)| self.value(item, &child_path(path, index))).collect()
    }

    fn object(&mut self, map: &Map<String, Value>, path: &[&str]) -> Value {
        if let Some(columns) = table_columns(map) {
            self.age_column =
                columns.iter().position(|column| column.get("name").and_then(Value::as_str) == Some("Age"));
        }
        let mut out = Map::new();
        for (key, child) in map {
            let normalized = self.value(child, &child_path(path, key));
            out.insert(key.clone(), normalized);
        }
        if is_table(&out) {
            self.mask_age_cells(&mut out);
        }
        sort_causes(&mut out);
        Value::Object(out)
    }

    fn mask_age_cells(&self, table: &mut Map<String, Value>) {
        let (Some(column), Some(Value::Array(rows))) = (self.age_column, table.get_mut("rows")) else {
            return;
        };
        for row in rows {
            if let Some(cell) = row.pointer_mut(&format!("/cells/{column}"))
                && !cell.is_null()
            {
                *cell = Value::String(AGE.to_string());
            }
        }
    }
}

fn child_path<'a>(path: &[&'a str], key: &'a str) -> Vec<&'a str> {
    let mut child = path.to_vec();
    child.push(key);
    child
}

/// Placeholder for a string at `path` (keys from the root), or the string itself. Empty
/// strings stay empty: `"continue": ""` (no more pages) is a fact, not a volatile value.
fn normalize_string(text: &str, path: &[&str]) -> String {
    if text.is_empty() {
        return String::new();
    }
    let placeholder = match path {
        [.., "metadata" | "details", "uid"] => Some(UID),
        [.., "ownerReferences", _, "uid"] => Some(UID),
        [.., "metadata", "resourceVersion"] => Some(RESOURCE_VERSION),
        [.., "metadata", "continue"] => Some(CONTINUE),
        [.., "creationTimestamp" | "deletionTimestamp" | "lastTransitionTime"] => Some(TIMESTAMP),
        [.., "managedFields", _, "time"] => Some(TIMESTAMP),
        _ => None,
    };
    match (placeholder, path.last()) {
        (Some(placeholder), _) => placeholder.to_string(),
        (None, Some(&"message")) => mask_too_old_resource_version(text),
        _ => text.to_string(),
    }
}

/// `too old resource version: 1 (75)` → `too old resource version: 1 (<resourceVersion>)`.
fn mask_too_old_resource_version(message: &str) -> String {
    let Some(start) = message.find(TOO_OLD) else {
        return message.to_string();
    };
    let rest = &message[start + TOO_OLD.len()..];
    let Some((requested, current)) = rest.split_once(" (") else {
        return message.to_string();
    };
    let Some((number, tail)) = current.split_once(')') else {
        return message.to_string();
    };
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return message.to_string();
    }
    let head = &message[..start];
    format!("{head}{TOO_OLD}{requested} ({RESOURCE_VERSION}){tail}")
}

fn is_table(map: &Map<String, Value>) -> bool {
    map.get("kind").and_then(Value::as_str) == Some("Table") && map.contains_key("rows")
}

/// A Table's `columnDefinitions`, when present (watch events after the first carry `null`).
fn table_columns(map: &Map<String, Value>) -> Option<&Vec<Value>> {
    if map.get("kind").and_then(Value::as_str) != Some("Table") {
        return None;
    }
    map.get("columnDefinitions")?.as_array()
}

/// In a Status, orders `details.causes` canonically and rewrites the bracketed aggregate
/// message (`... is invalid: [a, b]`) in the same order, so both compare as sets.
pub fn sort_causes(status: &mut Map<String, Value>) {
    let Some(Value::Array(causes)) = status.get_mut("details").and_then(|details| details.get_mut("causes")) else {
        return;
    };
    causes.sort_by_key(Value::to_string);
    let mut parts: Vec<String> = causes.iter().map(cause_text).collect();
    parts.sort();
    if let Some(Value::String(message)) = status.get_mut("message") {
        *message = reorder_bracketed(message, &parts);
    }
}

/// How a cause appears inside the aggregate message: `field: message`.
fn cause_text(cause: &Value) -> String {
    let text = |key: &str| cause.get(key).and_then(Value::as_str).unwrap_or_default();
    match text("field") {
        "" => text("message").to_string(),
        field => format!("{field}: {}", text("message")),
    }
}

/// Rewrites the trailing `[...]` of `message` with `sorted_parts` when it holds exactly those
/// parts in some order; otherwise leaves the message alone (so the difference shows).
fn reorder_bracketed(message: &str, sorted_parts: &[String]) -> String {
    let (Some(open), true) = (message.rfind(": ["), message.ends_with(']')) else {
        return message.to_string();
    };
    let inner = &message[open + 3..message.len() - 1];
    if !is_permutation_of(inner, sorted_parts) {
        return message.to_string();
    }
    format!("{}: [{}]", &message[..open], sorted_parts.join(", "))
}

/// True when `text` is the `", "`-join of all `parts` in some order.
fn is_permutation_of(text: &str, parts: &[String]) -> bool {
    if parts.is_empty() {
        return text.is_empty();
    }
    parts.iter().enumerate().any(|(index, part)| {
        let Some(rest) = text.strip_prefix(part.as_str()) else {
            return false;
        };
        let mut others = parts.to_vec();
        others.remove(index);
        match rest.strip_prefix(", ") {
            Some(rest) => !others.is_empty() && is_permutation_of(rest, &others),
            None => rest.is_empty() && others.is_empty(),
        }
    })
}

/// Every place where `actual` differs from `expected` (no normalization applied).
pub fn diff_json(expected: &Value, actual: &Value) -> Vec<Difference> {
    let mut differences = Vec::new();
    diff_into(expected, actual, String::new(), &mut differences);
    differences
}

fn diff_into(expected: &Value, actual: &Value, pointer: String, out: &mut Vec<Difference>) {
    match (expected, actual) {
        (Value::Object(left), Value::Object(right)) => diff_objects(left, right, &pointer, out),
        (Value::Array(left), Value::Array(right)) => diff_arrays(left, right, &pointer, out),
        _ if expected == actual => {}
        _ => out.push(Difference { pointer, expected: Some(expected.clone()), actual: Some(actual.clone()) }),
    }
}

fn diff_objects(expected: &Map<String, Value>, actual: &Map<String, Value>, pointer: &str, out: &mut Vec<Difference>) {
    let mut keys: Vec<&String> = expected.keys().chain(actual.keys()).collect();
    keys.sort();
    keys.dedup();
    for key in keys {
        let child = format!("{pointer}/{}", escape_pointer_token(key));
        diff_optional(expected.get(key), actual.get(key), child, out);
    }
}

fn diff_arrays(expected: &[Value], actual: &[Value], pointer: &str, out: &mut Vec<Difference>) {
    for index in 0..expected.len().max(actual.len()) {
        let child = format!("{pointer}/{index}");
        diff_optional(expected.get(index), actual.get(index), child, out);
    }
}

fn diff_optional(expected: Option<&Value>, actual: Option<&Value>, pointer: String, out: &mut Vec<Difference>) {
    match (expected, actual) {
        (Some(expected), Some(actual)) => diff_into(expected, actual, pointer, out),
        (None, None) => {}
        (expected, actual) => out.push(Difference { pointer, expected: expected.cloned(), actual: actual.cloned() }),
    }
}

fn escape_pointer_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The differences left after normalizing both sides.
pub fn diff_normalized(expected: &Value, actual: &Value) -> Vec<Difference> {
    diff_json(&normalize(expected), &normalize(actual))
}

/// Renders differences one per block, for failure messages.
pub fn format_differences(differences: &[Difference]) -> String {
    differences.iter().map(Difference::to_string).collect::<Vec<_>>().join("\n")
}

/// Panics with a readable report unless the two values match after normalization.
pub fn assert_json_matches(expected: &Value, actual: &Value, ctx: &str) {
    let (expected, actual) = (normalize(expected), normalize(actual));
    report_json_differences(&expected, &actual, ctx);
}

/// Panics unless two watch streams have the same number of events and each matches.
pub fn assert_events_match(expected: &[Value], actual: &[Value], ctx: &str) {
    let (expected, actual) = (normalize_events(expected), normalize_events(actual));
    report_json_differences(&Value::Array(expected), &Value::Array(actual), &format!("{ctx} (watch events)"));
}

fn report_json_differences(expected: &Value, actual: &Value, ctx: &str) {
    let differences = diff_json(expected, actual);
    if differences.is_empty() {
        return;
    }
    panic!(
        "\n{ctx}: JSON differs in {} place(s) after normalization:\n{}\n\n\
         --- expected (normalized) ---\n{}\n--- actual (normalized) ---\n{}\n",
        differences.len(),
        format_differences(&differences),
        pretty_excerpt(expected),
        pretty_excerpt(actual),
    );
}

/// Pretty JSON, cut to a readable size.
fn pretty_excerpt(value: &Value) -> String {
    const LIMIT: usize = 6000;
    let text = serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string());
    match text.char_indices().nth(LIMIT) {
        Some((cut, _)) => format!("{}\n[... {} more bytes]", &text[..cut], text.len() - cut),
        None => text,
    }
}

/// Compares a recorded response body with ours. Bodies the recorder truncated or trimmed are
/// not compared (check the parts you need by hand); YAML is compared as parsed values.
pub fn assert_body_matches(expected: &RecordedResponse, actual: &Body, ctx: &str) {
    if expected.truncated {
        return;
    }
    match (&expected.body, actual) {
        (Body::Json(expected), Body::Json(actual)) => assert_json_matches(expected, actual, ctx),
        (Body::WatchLines(expected), Body::WatchLines(actual)) => {
            assert_events_match(expected, actual, ctx);
        }
        (Body::Yaml(_), Body::Yaml(_)) => {
            assert_json_matches(&expected.body.yaml_value(), &actual.yaml_value(), ctx);
        }
        (Body::Text(expected), Body::Text(actual)) => {
            assert_eq!(expected, actual, "\n{ctx}: text body differs\nexpected: {expected:?}\nactual:   {actual:?}\n")
        }
        (Body::Empty, Body::Empty) => {}
        (expected, actual) => panic!(
            "\n{ctx}: body kinds differ: expected {}, actual {}\nexpected: {expected:?}\n\
             actual:   {actual:?}\n",
            expected.kind(),
            actual.kind()
        ),
    }
}

/// Panics unless each named header has exactly the same values, in the same order, on both
/// sides (names compared case-insensitively; absent equals absent; Content-Length skipped).
pub fn assert_headers_match(expected: &[(String, String)], actual: &[(String, String)], names: &[&str], ctx: &str) {
    let mismatches: Vec<String> = names
        .iter()
        .filter(|name| !name.eq_ignore_ascii_case("content-length"))
        .filter_map(|name| header_mismatch(expected, actual, name))
        .collect();
    assert!(mismatches.is_empty(), "\n{ctx}: headers differ:\n{}\n", mismatches.join("\n"));
}

fn header_mismatch(expected: &[(String, String)], actual: &[(String, String)], name: &str) -> Option<String> {
    let (want, got) = (header_values(expected, name), header_values(actual, name));
    (want != got).then(|| format!("  {name}\n      expected: {want:?}\n      actual:   {got:?}"))
}

/// Header pairs from an `http::HeaderMap` (our engine's side), one pair per value.
pub fn headers_from_map(map: &http::HeaderMap) -> Vec<(String, String)> {
    map.iter()
        .map(|(name, value)| {
            let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
            (name.as_str().to_string(), value)
        })
        .collect()
}

/// Every difference between a recorded body and ours, without panicking: JSON and YAML are
/// compared as normalized values, watch streams event by event (pointer `/<index>/...`), text
/// exactly. A difference in body kind is one root difference naming both kinds. Unlike
/// [`assert_body_matches`], truncated recordings are the caller's business (compare a trimmed
/// view of our body instead).
pub fn diff_bodies(expected: &Body, actual: &Body) -> Vec<Difference> {
    match (expected, actual) {
        (Body::Json(expected), Body::Json(actual)) => diff_normalized(expected, actual),
        (Body::WatchLines(expected), Body::WatchLines(actual)) => {
            diff_json(&Value::Array(normalize_events(expected)), &Value::Array(normalize_events(actual)))
        }
        (Body::Yaml(expected_text), Body::Yaml(actual_text)) => match serde_saphyr::from_str::<Value>(actual_text) {
            Ok(actual) => diff_normalized(&expected.yaml_value(), &actual),
            Err(err) => vec![root_difference(
                Value::String(expected_text.clone()),
                Value::String(format!("(YAML does not parse: {err}) {actual_text}")),
            )],
        },
        (Body::Text(expected), Body::Text(actual)) if expected == actual => Vec::new(),
        (Body::Empty, Body::Empty) => Vec::new(),
        (expected, actual) => vec![root_difference(body_summary(expected), body_summary(actual))],
    }
}

fn root_difference(expected: Value, actual: Value) -> Difference {
    Difference { pointer: String::new(), expected: Some(expected), actual: Some(actual) }
}

/// A body as one JSON value for a root difference: `"<Kind>: <content, cut>"`.
fn body_summary(body: &Body) -> Value {
    const LIMIT: usize = 300;
    let content = match body {
        Body::Json(value) => value.to_string(),
        Body::WatchLines(events) => Value::Array(events.clone()).to_string(),
        Body::Text(text) | Body::Yaml(text) => text.clone(),
        Body::Empty => String::new(),
    };
    let cut: String = content.chars().take(LIMIT).collect();
    let ellipsis = if cut.len() < content.len() { " ..." } else { "" };
    Value::String(format!("{}: {cut}{ellipsis}", body.kind()))
}

/// The named headers whose values differ (same rules as [`assert_headers_match`]), one
/// readable block per header; empty when they all match.
pub fn header_differences(expected: &[(String, String)], actual: &[(String, String)], names: &[&str]) -> Vec<String> {
    names
        .iter()
        .filter(|name| !name.eq_ignore_ascii_case("content-length"))
        .filter_map(|name| header_mismatch(expected, actual, name))
        .collect()
}
