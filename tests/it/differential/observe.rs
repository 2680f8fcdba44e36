//! What an answer says, with what legitimately differs between two servers replaced by facts
//! about it. An observation keeps the status code, the Content-Type, the Warning headers and
//! the body (or a watch's events); inside bodies:
//!
//! - an object's uid and resourceVersions become labels named after the object, numbered in
//!   order of first sight (`w1 uid 1`, `w1 rv 3`), and generated names keep their prefix
//!   (`prefix-<gen-1>`), so "the same as before", "changed" and "equal to another's" survive
//!   while the values do not, and one extra write on one object does not renumber the others;
//! - list and bookmark resourceVersions become `<rv>` (on the oracle, etcd's revision also
//!   moves for the apiserver's own writes, so they carry no comparable fact), continue tokens
//!   `<continue>` (opaque: only whether there is one is a fact);
//! - timestamps become `<time>`, Table age cells `<age>`, Go pointers in messages
//!   (`(*bool)(0xc001ef0827)`) `(*bool)(<pointer>)`;
//! - validation causes are sorted (kube-apiserver's order is not stable, see the reference
//!   INDEX), and the bracketed list in the message with them, unless the step keeps their
//!   order (`cause_order: true`, where every cause comes from a stable source); managedFields entries are
//!   sorted by manager (kube orders them by a time kept to the second).
//!
//! Pure: everything here is a function of the answers and the labels seen so far.

use std::collections::HashMap;

use regex::Regex;
use serde_json::{Map, Value, json};

use super::scenario::Step;
use super::target::Answer;

/// Labels handed out so far in one scenario run.
#[derive(Debug, Default)]
pub struct Labels {
    uids: HashMap<String, String>,
    resource_versions: HashMap<String, String>,
    /// How many labels of each kind each object has had.
    counts: HashMap<String, usize>,
    /// Generated name → its normalized form.
    generated: HashMap<String, String>,
    /// `generateName` prefixes sent: a name made from one that no object shows (in a refusal's
    /// message) becomes `prefix<gen>`.
    prefixes: Vec<String>,
    /// The age and date columns of the last Table seen: a Table watch's later events carry no
    /// column definitions, only the first does.
    timed_columns: Vec<usize>,
}

/// The characters kube-apiserver draws a generated name's five-character suffix from.
const SUFFIX_ALPHABET: &str = "bcdfghjklmnpqrstvwxz2456789";

impl Labels {
    /// Remembers the `generateName` of a request body.
    pub fn learn_request(&mut self, body: &Value) {
        if let Some(prefix) = body.pointer("/metadata/generateName").and_then(Value::as_str)
            && !prefix.is_empty()
            && !self.prefixes.iter().any(|p| p == prefix)
        {
            self.prefixes.push(prefix.to_string());
        }
    }
}

impl Labels {
    /// The label of `raw`, a value of `what` (`uid`, `rv`) of the object called `owner`.
    fn label(&mut self, what: &str, owner: &str, raw: &str) -> String {
        let map = if what == "uid" { &mut self.uids } else { &mut self.resource_versions };
        if let Some(label) = map.get(raw) {
            return label.clone();
        }
        let count = self.counts.entry(format!("{owner} {what}")).or_default();
        *count += 1;
        let label = format!("{owner} {what} {count}");
        map.insert(raw.to_string(), label.clone());
        label
    }
}

struct Patterns {
    uuid: Regex,
    time: Regex,
    too_old: Regex,
    /// `Too large resource version: 99999999, current: 206`: the current one is the server's.
    too_large: Regex,
    /// A timestamp or a resourceVersion inside a longer text (a message quoting an object).
    embedded_time: Regex,
    embedded_rv: Regex,
    /// CEL's name for `self`'s type in a compile error carries a random number.
    cel_self_type: Regex,
    /// A Go pointer printed with `%#v` (`OptionalOldSelf:(*bool)(0xc001ef0827)`): an address.
    go_pointer: Regex,
}

fn patterns() -> &'static Patterns {
    static PATTERNS: std::sync::OnceLock<Patterns> = std::sync::OnceLock::new();
    PATTERNS.get_or_init(|| Patterns {
        uuid: Regex::new("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}").expect("uuid regex"),
        time: Regex::new(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$").expect("time regex"),
        too_old: Regex::new(r"(too old resource version: \d+) \(\d+\)").expect("too-old regex"),
        too_large: Regex::new(r"(Too large resource version: \d+, current: )\d+").expect("too-large regex"),
        embedded_time: Regex::new(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z").expect("embedded time regex"),
        embedded_rv: Regex::new(r#"(\\?"resourceVersion\\?":\\?"|ResourceVersion in record \()\d+"#)
            .expect("embedded rv regex"),
        cel_self_type: Regex::new(r"selfType\d+").expect("self type regex"),
        go_pointer: Regex::new(r"(\(\*[A-Za-z0-9_.]+\))\(0x[0-9a-f]+\)").expect("go pointer regex"),
    })
}

/// The observation of one step's answer.
pub fn observe(step: &Step, answer: &Answer, labels: &mut Labels) -> Value {
    let mut observation = Map::new();
    observation.insert("step".into(), json!(step.name));
    observation.insert("request".into(), json!(format!("{} {}", step.method, step.path)));
    observation.insert("status".into(), json!(answer.status));
    let header = |name: &str| answer.headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
    observation.insert("contentType".into(), header("content-type").map_or(Value::Null, Value::String));
    let warnings: Vec<Value> = answer
        .headers
        .get_all("warning")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .map(|w| Value::String(normalize_text(w, labels)))
        .collect();
    if !warnings.is_empty() {
        observation.insert("warnings".into(), Value::Array(warnings));
    }
    if step.watch.is_some() && answer.status == 200 {
        // Only whole lines are events (a stream cut after N events may hold part of the next).
        let whole = answer.body.iter().rposition(|b| *b == b'\n').map_or(&[][..], |end| &answer.body[..end]);
        let events: Vec<Value> = whole
            .split(|b| *b == b'\n')
            .filter(|line| !line.iter().all(u8::is_ascii_whitespace))
            .take(step.watch.as_ref().and_then(|watch| watch.events).unwrap_or(usize::MAX))
            .map(|line| match serde_json::from_slice::<Value>(line) {
                Ok(event) => normalize(&event, labels),
                Err(_) => json!({ "unparsed": String::from_utf8_lossy(line) }),
            })
            .collect();
        observation.insert("events".into(), Value::Array(events));
        observation.insert("ended".into(), json!(answer.ended));
    } else {
        let body = body_value(&answer.body, labels);
        let body = match &step.extract {
            Some(pointers) => Value::Object(
                pointers.iter().map(|p| (p.clone(), body.pointer(p).cloned().unwrap_or(Value::Null))).collect(),
            ),
            None => body,
        };
        observation.insert("body".into(), body);
    }
    let mut observation = Value::Object(observation);
    if !step.cause_order {
        sort_all_causes(&mut observation);
    }
    observation
}

/// An error observation: the server did not answer (or not in time).
pub fn failure(step: &Step, error: &str) -> Value {
    json!({ "step": step.name, "request": format!("{} {}", step.method, step.path), "error": error })
}

fn body_value(bytes: &[u8], labels: &mut Labels) -> Value {
    if bytes.is_empty() {
        return Value::Null;
    }
    if let Ok(value) = serde_json::from_slice::<Value>(bytes) {
        return normalize(&value, labels);
    }
    // A YAML answer is compared as the document it holds.
    if let Ok(text) = std::str::from_utf8(bytes)
        && let Ok(value @ Value::Object(_)) = serde_saphyr::from_str::<Value>(text)
    {
        return json!({ "yaml": normalize(&value, labels) });
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => json!({ "text": normalize_text(text, labels) }),
        Err(_) => {
            use base64::Engine as _;
            json!({ "base64": base64::engine::general_purpose::STANDARD.encode(bytes) })
        }
    }
}

/// Normalizes a JSON body or watch event.
pub fn normalize(value: &Value, labels: &mut Labels) -> Value {
    learn_generated_names(value, labels);
    let mut out = walk(value, labels, &[]);
    mask_age_cells(&mut out, &mut labels.timed_columns);
    out
}

/// Finds objects named from a `generateName`, so every mention of the name is replaced.
fn learn_generated_names(value: &Value, labels: &mut Labels) {
    match value {
        Value::Object(map) => {
            if let Some(meta) = map.get("metadata").and_then(Value::as_object)
                && let (Some(prefix), Some(name)) =
                    (meta.get("generateName").and_then(Value::as_str), meta.get("name").and_then(Value::as_str))
                && name.len() > prefix.len()
                && name.starts_with(prefix)
                && !labels.generated.contains_key(name)
            {
                let next = labels.generated.len() + 1;
                labels.generated.insert(name.to_string(), format!("{prefix}<gen-{next}>"));
            }
            map.values().for_each(|child| learn_generated_names(child, labels));
        }
        Value::Array(items) => items.iter().for_each(|item| learn_generated_names(item, labels)),
        _ => {}
    }
}

fn walk(value: &Value, labels: &mut Labels, path: &[&str]) -> Value {
    match value {
        Value::Object(map) => {
            let is_object_meta = path.last() == Some(&"metadata") && map.contains_key("name");
            if is_object_meta
                && let (Some(name), Some(Value::String(uid))) =
                    (map.get("name").and_then(Value::as_str), map.get("uid"))
            {
                let owner = normalize_text(name, labels);
                labels.label("uid", &owner, uid);
            }
            let owner = map.get("name").and_then(Value::as_str).map(|name| normalize_text(name, labels));
            let mut out = Map::new();
            for (key, child) in map {
                let normalized = match (key.as_str(), child) {
                    ("resourceVersion", Value::String(rv)) if path.last() == Some(&"metadata") && !rv.is_empty() => {
                        if let (true, Some(owner)) = (is_object_meta, &owner) {
                            Value::String(labels.label("rv", owner, rv))
                        } else {
                            Value::String("<rv>".into())
                        }
                    }
                    // Tokens are opaque: only whether there is one is a fact.
                    ("continue", Value::String(token)) if path.last() == Some(&"metadata") && !token.is_empty() => {
                        Value::String("<continue>".into())
                    }
                    _ => {
                        let mut child_path = path.to_vec();
                        child_path.push(key);
                        walk(child, labels, &child_path)
                    }
                };
                out.insert(key.clone(), normalized);
            }
            Value::Object(out)
        }
        Value::Array(items) => {
            let mut items: Vec<Value> = items.iter().map(|item| walk(item, labels, path)).collect();
            // kube orders managedFields by time (to the second), then manager: entries written
            // within one second on one server may straddle a second on the other.
            if path.last() == Some(&"managedFields") {
                items.sort_by_key(|entry| {
                    ["manager", "operation", "subresource", "apiVersion"]
                        .map(|key| entry.get(key).and_then(Value::as_str).unwrap_or_default().to_string())
                });
            }
            Value::Array(items)
        }
        Value::String(text) => Value::String(normalize_text(text, labels)),
        other => other.clone(),
    }
}

/// A string with uids, generated names and timestamps replaced.
pub fn normalize_text(text: &str, labels: &mut Labels) -> String {
    let patterns = patterns();
    if patterns.time.is_match(text) {
        return "<time>".to_string();
    }
    let mut out = text.to_string();
    if patterns.uuid.is_match(&out) {
        let found: Vec<String> = patterns.uuid.find_iter(&out).map(|m| m.as_str().to_string()).collect();
        for uid in found {
            // A uid no object has shown yet (a precondition in a message) gets a label of its own.
            let label = labels.label("uid", "unseen", &uid);
            out = out.replace(&uid, &label);
        }
    }
    for (name, normalized) in &labels.generated {
        if out.contains(name.as_str()) {
            out = out.replace(name.as_str(), normalized);
        }
    }
    for prefix in &labels.prefixes {
        let made = Regex::new(&format!("{}[{SUFFIX_ALPHABET}]{{5}}", regex::escape(prefix))).expect("prefix regex");
        out = made.replace_all(&out, regex::NoExpand(&format!("{prefix}<gen>"))).into_owned();
    }
    let out = patterns.embedded_time.replace_all(&out, "<time>");
    let out = patterns.embedded_rv.replace_all(&out, "${1}<rv>");
    let out = patterns.cel_self_type.replace_all(&out, "selfType<n>");
    let out = patterns.go_pointer.replace_all(&out, "${1}(<pointer>)");
    let out = patterns.too_large.replace_all(&out, "${1}<rv>");
    patterns.too_old.replace_all(&out, "$1 (<rv>)").into_owned()
}

/// In every Table, the ages and times in age and date columns become `<age>` (they are
/// computed from the clock when the server answers); `<invalid>` and `<unknown>` are facts
/// about the value and stay.
fn mask_age_cells(value: &mut Value, timed: &mut Vec<usize>) {
    match value {
        Value::Object(map) => {
            if map.get("kind").and_then(Value::as_str) == Some("Table") {
                if let Some(columns) = map.get("columnDefinitions").and_then(Value::as_array) {
                    *timed = columns
                        .iter()
                        .enumerate()
                        .filter(|(_, c)| c.get("name") == Some(&json!("Age")) || c.get("type") == Some(&json!("date")))
                        .map(|(i, _)| i)
                        .collect();
                }
                if let Some(Value::Array(rows)) = map.get_mut("rows") {
                    for row in rows {
                        for &column in timed.iter() {
                            if let Some(cell) = row.pointer_mut(&format!("/cells/{column}"))
                                && cell.as_str().is_some_and(is_age)
                            {
                                *cell = json!("<age>");
                            }
                        }
                    }
                }
            }
            map.values_mut().for_each(|child| mask_age_cells(child, timed));
        }
        Value::Array(items) => items.iter_mut().for_each(|item| mask_age_cells(item, timed)),
        _ => {}
    }
}

/// Whether a cell of an age or date column hangs on the clock: everything but the texts
/// kube writes for a missing or unreadable time.
fn is_age(cell: &str) -> bool {
    !matches!(cell, "<invalid>" | "<unknown>")
}

fn sort_all_causes(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.get("kind").and_then(Value::as_str) == Some("Status") {
                crate::support::compare::sort_causes(map);
            }
            map.values_mut().for_each(sort_all_causes);
        }
        Value::Array(items) => items.iter_mut().for_each(sort_all_causes),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_keep_equality_and_drop_values() {
        let mut labels = Labels::default();
        let object = json!({"kind": "Widget", "metadata": {"name": "a", "uid": "0f0e8f4c-3d4c-4a57-8f8c-1c0b7d9e2a11",
            "resourceVersion": "812", "creationTimestamp": "2026-11-26T01:02:03Z"}});
        let list = json!({"kind": "WidgetList", "metadata": {"resourceVersion": "900", "continue": "eyJ2Ijo"},
            "items": [object.clone()]});
        let first = normalize(&object, &mut labels);
        let again = normalize(&list, &mut labels);
        assert_eq!(first["metadata"]["uid"], "a uid 1");
        assert_eq!(first["metadata"]["resourceVersion"], "a rv 1");
        assert_eq!(first["metadata"]["creationTimestamp"], "<time>");
        assert_eq!(again["items"][0], first, "the same object reads the same");
        assert_eq!(again["metadata"], json!({"resourceVersion": "<rv>", "continue": "<continue>"}));
    }

    #[test]
    fn generated_names_keep_their_prefix_everywhere() {
        let mut labels = Labels::default();
        let created = json!({"metadata": {"generateName": "w-", "name": "w-x7k2p"}});
        assert_eq!(normalize(&created, &mut labels)["metadata"]["name"], "w-<gen-1>");
        let status = json!({"kind": "Status", "message": "widgets \"w-x7k2p\" not found"});
        assert_eq!(normalize(&status, &mut labels)["message"], "widgets \"w-<gen-1>\" not found");
    }
}
