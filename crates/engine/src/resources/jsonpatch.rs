//! JSON patch (RFC 6902) as kube-apiserver applies it: with `gopkg.in/evanphx/json-patch.v4`,
//! whose semantics differ from the RFC in ways clients rely on.
//!
//! - `test` of `null` passes on an absent member (kube-runtime adds a first finalizer with
//!   `test /metadata/finalizers null` then `add`); a member holding `null` counts as absent.
//! - `replace` of an absent object member adds it; `copy` from an absent member copies `null`.
//! - Negative array indices count from the end for every operation (`add` at `-1` appends);
//!   indices are Go's `strconv.Atoi` (`+1`, `01` and `-0` are indices).
//! - A path's first segment is dropped whatever it is (`spec/x` is `/x`); `""` is the
//!   whole document only for `replace` (an object or array; anything else is ignored) and
//!   `test`.
//! - Scalars `test` equal when their JSON texts are equal: the document's as Go's encoder
//!   writes it against the patch's as sent (`1` is not `1.0`).
//! - `copy` may add at most 3 MiB in all (the apiserver's `JSONPatchMaxCopyBytes`); a
//!   patch has at most 10,000 operations (413).
//!
//! Every operation that does not apply fails the whole patch with one 422 whose message
//! does not say why (kube's `NewGenericServerResponse`); cases where Go panics (a `test`
//! without `value` on an absent member, arrays with `null` items under `test`) fail the
//! same way here. The patch applies to a copy, so a failure leaves nothing to undo.

use super::jsonpatch_splice::{Splices, Step};
use crate::representation::gofmt::go_json;
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::HashMap;

/// `maxJSONPatchOperations`.
pub const MAX_OPERATIONS: usize = 10_000;
/// `JSONPatchMaxCopyBytes` (3 MiB), the bytes `copy` operations may add in all.
const MAX_COPY_BYTES: usize = 3 * 1024 * 1024;
/// Deeper results could not be read back (serde_json's recursion limit is 128).
const MAX_DEPTH: usize = 120;

/// Why a JSON patch was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonPatchError {
    /// 400: the body is not a list of operations (kube's message).
    #[error("{0}")]
    Decode(String),
    /// 413: more than [`MAX_OPERATIONS`].
    #[error("The allowed maximum operations in a JSON patch is {MAX_OPERATIONS}, got {0}")]
    TooManyOperations(usize),
    /// 422: an operation did not apply; the reason is for logs and tests, kube shows none.
    #[error("{0}")]
    Failed(String),
}

/// One decoded operation: `op`, `path` and `from` when they are strings, `value` as sent.
struct Operation {
    kind: String,
    path: Option<String>,
    from: Option<String>,
    /// `None`: no `value` member (Go tells that apart from `"value": null`).
    value: Option<Box<RawValue>>,
}

/// Decodes `body` as kube does: with `strict` (fieldValidation `Warn` or `Strict`) into
/// its typed operations first, whose type errors are a 400 too.
fn decode(body: &[u8], strict: bool) -> Result<Vec<Operation>, JsonPatchError> {
    let (prefix, list_type, item_type) = if strict {
        ("error decoding patch: ", "[]handlers.jsonPatchOp", "handlers.jsonPatchOp")
    } else {
        ("", "jsonpatch.Patch", "jsonpatch.Operation")
    };
    // Go's syntax check words what does not parse, before anything is decoded.
    super::go_decode::check_syntax(body).map_err(|e| JsonPatchError::Decode(format!("{prefix}{e}")))?;
    let decode_error = |e: serde_json::Error| JsonPatchError::Decode(format!("{prefix}{e}"));
    let mistyped = |raw: &RawValue, ty: &str| {
        JsonPatchError::Decode(format!("{prefix}json: cannot unmarshal {} into Go value of type {ty}", kind_of(raw)))
    };
    let top: Box<RawValue> = serde_json::from_slice(body).map_err(decode_error)?;
    if top.get() == "null" {
        return Ok(Vec::new());
    }
    let items: Vec<Box<RawValue>> = serde_json::from_str(top.get()).map_err(|_| mistyped(&top, list_type))?;
    let mut ops = Vec::with_capacity(items.len().min(MAX_OPERATIONS));
    for item in items {
        if item.get() == "null" {
            ops.push(Operation { kind: String::new(), path: None, from: None, value: None });
            continue;
        }
        let super::go_decode::Members(members) =
            serde_json::from_str(item.get()).map_err(|_| mistyped(&item, item_type))?;
        // Go's strict decoder meets every member, a repeated one too, and reports the first
        // (in the order sent) it cannot decode: a string member that is no string, or a
        // number beyond float64 anywhere in a `value` (an `interface{}`, whose numbers are
        // float64s); the operation then holds the last of each.
        let undecodable = members.iter().filter(|_| strict).find_map(|(name, raw)| match name.as_str() {
            "op" | "path" | "from" if raw.get() != "null" && serde_json::from_str::<String>(raw.get()).is_err() => {
                Some(format!(
                    "json: cannot unmarshal {} into Go struct field jsonPatchOp.{name} of type string",
                    kind_of(raw)
                ))
            }
            "value" => super::go_decode::number_beyond_float64(raw.get().as_bytes()).map(|n| {
                format!("json: cannot unmarshal number {n} into Go struct field jsonPatchOp.value of type float64")
            }),
            _ => None,
        });
        if let Some(why) = undecodable {
            return Err(JsonPatchError::Decode(format!("{prefix}{why}")));
        }
        let last = |name: &str| members.iter().rev().find(|(n, _)| n == name).map(|(_, raw)| raw);
        let string_member = |name: &str| {
            last(name).filter(|raw| raw.get() != "null").and_then(|raw| serde_json::from_str::<String>(raw.get()).ok())
        };
        let kind = string_member("op").unwrap_or_else(|| "unknown".into());
        let (path, from) = (string_member("path"), string_member("from"));
        ops.push(Operation { kind, path, from, value: last("value").cloned() });
    }
    Ok(ops)
}

/// Go's name for the JSON type of `raw` in unmarshal errors.
fn kind_of(raw: &RawValue) -> &'static str {
    match raw.get().as_bytes().first() {
        Some(b'{') => "object",
        Some(b'[') => "array",
        Some(b'"') => "string",
        Some(b't' | b'f') => "bool",
        _ => "number",
    }
}

#[cfg(test)]
/// Applies the JSON patch `body` to a copy of `target`.
pub fn apply(target: &Value, body: &[u8], strict: bool) -> Result<Value, JsonPatchError> {
    apply_strictly(target, body, strict).map(|(doc, _)| doc)
}

/// [`apply`], with the strict errors kube finds when `strict` (fieldValidation Warn or
/// Strict): the patch's own (`json patch ...`), then the members its values repeat in the
/// patched object (see [`super::jsonpatch_splice`]).
pub fn apply_strictly(target: &Value, body: &[u8], strict: bool) -> Result<(Value, Vec<String>), JsonPatchError> {
    let (doc, splices) = run(target, body, strict)?;
    let mut errors = Vec::new();
    if let Some(splices) = splices {
        errors = super::go_decode::json_patch_strict_errors(body);
        errors.extend(splices.errors());
    }
    Ok((doc, errors))
}

/// The values `body` splices into `target` that kube still holds as sent (compacted,
/// repeated members and all), by where they are in the patched object.
pub fn spliced(target: &Value, body: &[u8]) -> Vec<(Vec<String>, String)> {
    let Ok((_, Some(splices))) = run(target, body, true) else { return Vec::new() };
    splices.raw_values()
}

/// Applies the patch, following what it splices in when `strict`.
fn run(target: &Value, body: &[u8], strict: bool) -> Result<(Value, Option<Splices>), JsonPatchError> {
    let ops = decode(body, strict)?;
    if ops.len() > MAX_OPERATIONS {
        return Err(JsonPatchError::TooManyOperations(ops.len()));
    }
    let mut doc = target.clone();
    let mut copied = 0;
    let mut splices = strict.then(Splices::default);
    for op in &ops {
        let (path, from) = (op.path.as_deref(), op.from.as_deref());
        let insert = matches!(op.kind.as_str(), "add" | "move" | "copy");
        let located = splices.as_ref().map(|_| (locate(&doc, path, insert), locate(&doc, from, false)));
        match op.kind.as_str() {
            "add" => add(&mut doc, op),
            "remove" => remove(&mut doc, op),
            "replace" => replace(&mut doc, op),
            "move" => move_value(&mut doc, op),
            "copy" => copy(&mut doc, op, &mut copied),
            "test" => test(&doc, op),
            other => Err(failed(format!("Unexpected kind: {other}"))),
        }?;
        if let (Some(splices), Some((Some(to), from))) = (splices.as_mut(), located) {
            // Go inserts into an array for `add`, `move` and `copy`; it replaces otherwise.
            let inserted = insert && matches!(to.last(), Some(Step::Index(_)));
            match (op.kind.as_str(), from) {
                ("add" | "replace", _) => splices.written(&to, op.value.as_deref(), inserted),
                ("copy", Some(from)) => splices.carried(&from, &to, false, inserted),
                ("move", Some(from)) => splices.carried(&from, &to, true, inserted),
                (kind, _) => splices.read_or_removed(&to, kind == "remove"),
            }
        }
    }
    if depth(&doc) > MAX_DEPTH {
        return Err(failed("the patched object nests too deeply"));
    }
    Ok((doc, splices))
}

/// Where `path` leads in `doc` before an operation, array items by index (`insert`: the
/// index an `add` there inserts at); `Some` of nothing for the whole document.
fn locate(doc: &Value, path: Option<&str>, insert: bool) -> Option<Vec<Step>> {
    let path = path?;
    if path.is_empty() {
        return Some(Vec::new());
    }
    let (parents, key) = split(path)?;
    let mut steps = Vec::with_capacity(parents.len() + 1);
    let mut current = doc;
    let step = |container: &Value, key: &str, insert: bool| match container {
        Value::Array(items) if insert => insert_index(items.len(), key).ok().map(Step::Index),
        Value::Array(items) => array_index(items.len(), key).ok().map(Step::Index),
        _ => Some(Step::Key(key.to_string())),
    };
    for part in &parents {
        let next = step(current, part, false)?;
        current = match (&next, current) {
            (Step::Index(i), Value::Array(items)) => items.get(*i)?,
            (Step::Key(k), Value::Object(map)) => map.get(k)?,
            _ => return None,
        };
        steps.push(next);
    }
    steps.push(step(current, &key, insert)?);
    Some(steps)
}

fn failed(why: impl Into<String>) -> JsonPatchError {
    JsonPatchError::Failed(why.into())
}

/// The value an operation writes (`null` when it has none).
fn value_of(op: &Operation) -> Result<Value, JsonPatchError> {
    match &op.value {
        None => Ok(Value::Null),
        Some(raw) => serde_json::from_str(raw.get()).map_err(|e| failed(e.to_string())),
    }
}

/// A path as Go's `findObject` splits it: the segments between the first and the last
/// `/` lead to the container, the last names the member; the first is ignored.
fn split(path: &str) -> Option<(Vec<String>, String)> {
    let segments: Vec<&str> = path.split('/').collect();
    let (last, rest) = segments.split_last()?;
    let parents = rest.get(1..)?;
    Some((parents.iter().map(|s| unescape(s)).collect(), unescape(last)))
}

/// RFC 6901: `~1` is `/`, `~0` is `~`, left to right.
fn unescape(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    let mut chars = segment.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('~', Some('1')) => {
                out.push('/');
                chars.next();
            }
            ('~', Some('0')) => {
                out.push('~');
                chars.next();
            }
            _ => out.push(c),
        }
    }
    out
}

/// The object or array holding the member `path` names, and that member's key.
fn container<'a>(doc: &'a mut Value, path: Option<&str>) -> Result<(&'a mut Value, String), JsonPatchError> {
    let path = path.ok_or_else(|| failed("missing path"))?;
    let (parents, key) = split(path).ok_or_else(|| failed(format!("doc is missing path: {path:?}")))?;
    let mut current = doc;
    for part in &parents {
        let next = match current {
            Value::Object(map) => map.get_mut(part.as_str()),
            Value::Array(items) => {
                let len = items.len();
                array_index(len, part).ok().and_then(|i| items.get_mut(i))
            }
            _ => None,
        };
        current = match next {
            Some(v @ (Value::Object(_) | Value::Array(_))) => v,
            _ => return Err(failed(format!("doc is missing path: {path:?}"))),
        };
    }
    Ok((current, key))
}

/// Go's `strconv.Atoi`, in its words.
fn atoi(key: &str) -> Result<i64, JsonPatchError> {
    key.parse::<i64>().map_err(|_| failed(format!("strconv.Atoi: parsing {key:?}: invalid syntax")))
}

/// evanphx/json-patch's words for an index out of range.
fn invalid_index(i: i64) -> JsonPatchError {
    failed(format!("Unable to access invalid index: {i}: invalid index referenced"))
}

/// evanphx/json-patch's words for an operation whose path leads nowhere (kube shows them
/// when a mutating webhook's patch fails).
fn missing_path(kind: &str, path: Option<&str>) -> JsonPatchError {
    let path = path.unwrap_or_default();
    match kind {
        "add" | "remove" => {
            failed(format!("{kind} operation does not apply: doc is missing path: {path:?}: missing value"))
        }
        _ => failed(format!("{kind} operation does not apply: doc is missing path: {path}: missing value")),
    }
}

/// An operation's own failure, as evanphx/json-patch wraps it with the path.
fn failed_at(kind: &str, path: Option<&str>, e: JsonPatchError) -> JsonPatchError {
    match e {
        JsonPatchError::Failed(why) => {
            failed(format!("error in {kind} for path: '{}': {why}", path.unwrap_or_default()))
        }
        other => other,
    }
}

/// An existing item's index (`get`, `replace`, `remove`), negative ones from the end.
fn array_index(len: usize, key: &str) -> Result<usize, JsonPatchError> {
    let len = i64::try_from(len).unwrap_or(i64::MAX);
    let mut i = atoi(key)?;
    if i < 0 {
        if i < -len {
            return Err(invalid_index(i));
        }
        i += len;
    }
    if i >= len {
        return Err(invalid_index(i));
    }
    usize::try_from(i).map_err(|_| invalid_index(i))
}

/// An insertion index (`add`): up to the length, negative ones counted from one past the end.
fn insert_index(len: usize, key: &str) -> Result<usize, JsonPatchError> {
    if key == "-" {
        return Ok(len);
    }
    array_index(len + 1, key)
}

/// The member `key` of a container; `None` when absent or `null` (Go's nil).
fn get<'a>(container: &'a Value, key: &str) -> Result<Option<&'a Value>, JsonPatchError> {
    let found = match container {
        Value::Object(map) => map.get(key),
        Value::Array(items) => items.get(array_index(items.len(), key)?),
        _ => None,
    };
    Ok(found.filter(|v| !v.is_null()))
}

fn insert(container: &mut Value, key: String, value: Value) -> Result<(), JsonPatchError> {
    match container {
        Value::Object(map) => {
            map.insert(key, value);
        }
        Value::Array(items) => {
            let i = insert_index(items.len(), &key)?;
            items.insert(i, value);
        }
        _ => return Err(failed("not a container")),
    }
    Ok(())
}

/// Removes and returns the member `key` (an absent object member is an error).
fn take(container: &mut Value, key: &str) -> Result<Value, JsonPatchError> {
    match container {
        Value::Object(map) => {
            map.remove(key).ok_or_else(|| failed(format!("Unable to remove nonexistent key: {key}: missing value")))
        }
        Value::Array(items) => {
            let i = array_index(items.len(), key)?;
            Ok(items.remove(i))
        }
        _ => Err(failed("not a container")),
    }
}

fn add(doc: &mut Value, op: &Operation) -> Result<(), JsonPatchError> {
    let value = value_of(op)?;
    let path = op.path.as_deref();
    let (parent, key) = container(doc, path).map_err(|_| missing_path("add", path))?;
    insert(parent, key, value).map_err(|e| failed_at("add", path, e))
}

fn remove(doc: &mut Value, op: &Operation) -> Result<(), JsonPatchError> {
    let path = op.path.as_deref();
    let (parent, key) = container(doc, path).map_err(|_| missing_path("remove", path))?;
    take(parent, &key).map(drop).map_err(|e| failed_at("remove", path, e))
}

fn replace(doc: &mut Value, op: &Operation) -> Result<(), JsonPatchError> {
    if op.path.as_deref() == Some("") {
        // Go replaces the document with an object or array and ignores anything else.
        let raw = op.value.as_ref().ok_or_else(|| failed("replace of the document without a value"))?;
        if let Ok(v @ (Value::Object(_) | Value::Array(_))) = serde_json::from_str::<Value>(raw.get()) {
            *doc = v;
        }
        return Ok(());
    }
    let value = value_of(op)?;
    let path = op.path.as_deref();
    let (parent, key) = container(doc, path).map_err(|_| missing_path("replace", path))?;
    match parent {
        Value::Array(items) => {
            let i = array_index(items.len(), &key).map_err(|_| {
                failed(format!(
                    "replace operation does not apply: doc is missing key: {}: missing value",
                    path.unwrap_or_default()
                ))
            })?;
            items[i] = value;
        }
        Value::Object(map) => {
            map.insert(key, value);
        }
        _ => return Err(failed("not a container")),
    }
    Ok(())
}

fn move_value(doc: &mut Value, op: &Operation) -> Result<(), JsonPatchError> {
    let (from_parent, from_key) = container(doc, op.from.as_deref())?;
    let value = take(from_parent, &from_key)?;
    let (parent, key) = container(doc, op.path.as_deref())?;
    insert(parent, key, value)
}

fn copy(doc: &mut Value, op: &Operation, copied: &mut usize) -> Result<(), JsonPatchError> {
    let (from_parent, from_key) = container(doc, op.from.as_deref())?;
    let value = get(from_parent, &from_key)?.cloned();
    if let Some(v) = &value {
        *copied = copied.saturating_add(go_json(v).len());
        if *copied > MAX_COPY_BYTES {
            return Err(failed(format!(
                "Unable to complete the copy, the accumulated size increase of copy is {copied}, exceeding the limit {MAX_COPY_BYTES}"
            )));
        }
    }
    let (parent, key) = container(doc, op.path.as_deref())?;
    insert(parent, key, value.unwrap_or(Value::Null))
}

fn test(doc: &Value, op: &Operation) -> Result<(), JsonPatchError> {
    let path = op.path.as_deref().ok_or_else(|| failed("missing path"))?;
    let not_equal = || failed(format!("testing value {path} failed"));
    if path.is_empty() {
        let raw = op.value.as_ref().ok_or_else(not_equal)?;
        return if go_equal(doc, raw)? { Ok(()) } else { Err(not_equal()) };
    }
    let (parents, key) = split(path).ok_or_else(not_equal)?;
    let mut current = doc;
    for part in &parents {
        current = match get(current, part) {
            Ok(Some(v @ (Value::Object(_) | Value::Array(_)))) => v,
            _ => return Err(failed(format!("test operation does not apply: is missing path: {path}"))),
        };
    }
    match (get(current, &key)?, op.value.as_deref()) {
        (None, Some(raw)) if raw.get() == "null" => Ok(()),
        (Some(found), Some(raw)) if raw.get() != "null" && go_equal(found, raw)? => Ok(()),
        _ => Err(not_equal()),
    }
}

/// evanphx's `lazyNode.equal` of a document value and a patch value: objects and arrays
/// by members, scalars by JSON text (the document's as Go writes it). Go panics on `null`
/// array items, which fail here.
fn go_equal(doc: &Value, raw: &RawValue) -> Result<bool, JsonPatchError> {
    match doc {
        Value::Object(map) => {
            let Ok(other) = serde_json::from_str::<HashMap<String, Box<RawValue>>>(raw.get()) else {
                return Ok(false);
            };
            if other.len() != map.len() {
                return Ok(false);
            }
            for (k, v) in map {
                let Some(o) = other.get(k) else { return Ok(false) };
                match (v.is_null(), o.get() == "null") {
                    (true, true) => continue,
                    (false, false) if go_equal(v, o)? => continue,
                    _ => return Ok(false),
                }
            }
            Ok(true)
        }
        Value::Array(items) => {
            let Ok(other) = serde_json::from_str::<Vec<Box<RawValue>>>(raw.get()) else {
                return Ok(false);
            };
            if other.len() != items.len() {
                return Ok(false);
            }
            for (v, o) in items.iter().zip(&other) {
                if v.is_null() || o.get() == "null" {
                    return Err(failed("null array item under test"));
                }
                if !go_equal(v, o)? {
                    return Ok(false);
                }
            }
            Ok(true)
        }
        scalar => Ok(go_json(scalar) == raw.get()),
    }
}

/// How deeply objects and arrays nest in `v`, without recursion.
fn depth(v: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(v, 1)];
    while let Some((v, d)) = stack.pop() {
        match v {
            Value::Object(map) => stack.extend(map.values().map(|c| (c, d + 1))),
            Value::Array(items) => stack.extend(items.iter().map(|c| (c, d + 1))),
            _ => continue,
        }
        deepest = deepest.max(d);
    }
    deepest
}

#[cfg(test)]
#[path = "jsonpatch_tests.rs"]
mod tests;
