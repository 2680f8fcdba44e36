//! The patched object as kube quotes it when it does not decode (a 422 on `patch` whose
//! value is the JSON the patch produced).
//!
//! kube applies JSON and merge patches with evanphx/json-patch v4, which parses only what
//! a patch reaches: the containers it walks into are Go maps, written back with sorted
//! keys, and everything else keeps the bytes it came with. A typed kind's stored JSON is
//! written in its Go struct's field order, so the quoted text mixes both orders: sorted
//! where the patch went, struct order elsewhere. An unstructured kind's JSON has sorted
//! keys throughout. Values a JSON patch spliced in stay as sent, repeated members and all
//! (see [`super::jsonpatch_splice`]).

use super::builtin::struct_json;
use super::builtin::types::{GoStruct, GoType};
use super::patch::PatchType;
use crate::representation::gofmt::{go_json, write_go_string};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// The patch an object came from.
#[derive(Debug, Clone, Copy)]
pub struct PatchSource<'a> {
    pub patch_type: PatchType,
    pub body: &'a [u8],
}

/// Which parts of the object the patch parsed (and so wrote back sorted).
enum Reached {
    /// Everything (strategic merge, or an unstructured kind whose bytes are sorted anyway).
    All,
    /// A merge patch reaches what it names.
    Merge(Value),
    /// A JSON patch reaches the containers on its operations' paths.
    Pointers(Vec<Vec<String>>),
}

impl Reached {
    fn of(source: &PatchSource) -> Reached {
        match source.patch_type {
            PatchType::Merge => serde_json::from_slice(source.body).map_or(Reached::All, Reached::Merge),
            PatchType::Json => Reached::Pointers(operation_paths(source.body)),
            PatchType::StrategicMerge | PatchType::Apply => Reached::All,
        }
    }

    fn reaches(&self, path: &[String]) -> bool {
        match self {
            Reached::All => true,
            Reached::Merge(patch) => {
                let mut at = patch;
                for key in path {
                    match at {
                        // Below a value the patch set, everything is the patch's (parsed).
                        Value::Object(map) => match map.get(key) {
                            Some(next) => at = next,
                            None => return false,
                        },
                        _ => return true,
                    }
                }
                true
            }
            Reached::Pointers(paths) => paths.iter().any(|p| p.starts_with(path) || path.starts_with(p)),
        }
    }
}

/// The `path` and `from` of every operation, as reference tokens.
fn operation_paths(body: &[u8]) -> Vec<Vec<String>> {
    let Ok(Value::Array(ops)) = serde_json::from_slice::<Value>(body) else { return Vec::new() };
    let tokens =
        |p: &str| -> Vec<String> { p.split('/').skip(1).map(|t| t.replace("~1", "/").replace("~0", "~")).collect() };
    ops.iter()
        .flat_map(|op| ["path", "from"].into_iter().filter_map(move |k| op.get(k).and_then(Value::as_str)))
        .map(tokens)
        .collect()
}

/// The scalars a merge patch sets, by where they are, as sent: evanphx/json-patch keeps
/// them as their bytes (`1.0` stays `1.0`), where it parses and rewrites the containers.
/// Of a repeated member, the last is kept, as Go's map does.
fn merged_scalars(body: &[u8]) -> Vec<(Vec<String>, String)> {
    fn walk(raw: &RawValue, path: &mut Vec<String>, out: &mut Vec<(Vec<String>, String)>) {
        let text = raw.get();
        if text.starts_with('{') {
            let Ok(super::go_decode::Members(members)) = serde_json::from_str(text) else { return };
            for (i, (key, value)) in members.iter().enumerate() {
                if members[i + 1..].iter().any(|(later, _)| later == key) {
                    continue;
                }
                path.push(key.clone());
                walk(value, path, out);
                path.pop();
            }
        } else if text.starts_with('[') {
            let items: Vec<Box<RawValue>> = serde_json::from_str(text).unwrap_or_default();
            for (i, item) in items.iter().enumerate() {
                path.push(i.to_string());
                walk(item, path, out);
                path.pop();
            }
        } else if text != "null" {
            out.push((path.clone(), super::jsonpatch_splice::compact(text)));
        }
    }
    let mut out = Vec::new();
    if let Ok(raw) = serde_json::from_slice::<Box<RawValue>>(body) {
        walk(&raw, &mut Vec::new(), &mut out);
    }
    out
}

/// How one patched object is written: what the patch reached, and the values it spliced
/// in as sent.
struct Writer {
    reached: Reached,
    /// By path: a patch may splice in thousands, each looked up at every value written.
    raw: HashMap<Vec<String>, String>,
}

/// The JSON kube quotes for `patched`, the result of `source` on `old`, an object of the
/// Go struct `kind` (`None`: an unstructured kind).
pub fn patched_json(old: &Value, patched: &Value, source: &PatchSource, kind: Option<&'static GoStruct>) -> String {
    let raw: HashMap<_, _> = match source.patch_type {
        PatchType::Json => super::jsonpatch::spliced(old, source.body),
        PatchType::Merge => merged_scalars(source.body),
        _ => Vec::new(),
    }
    .into_iter()
    .collect();
    let Some(kind) = kind.filter(|_| source.patch_type != PatchType::StrategicMerge) else {
        if raw.is_empty() {
            return go_json(patched);
        }
        let writer = Writer { reached: Reached::All, raw };
        let mut out = String::new();
        writer.value(patched, None, &[], &mut out);
        return out;
    };
    let writer = Writer { reached: Reached::of(source), raw };
    let mut out = String::new();
    writer.object_root(patched, kind, &mut out);
    out
}

/// What a JSON object is in Go, for the order of its members.
#[derive(Clone, Copy)]
enum Shape {
    /// A struct (`root`: a kind's object, its envelope first).
    Struct(&'static GoStruct, bool),
    /// A Go map of values of one type: written sorted.
    Map(&'static GoType),
    /// Unknown: written sorted.
    Plain,
}

impl Writer {
    fn object_root(&self, obj: &Value, kind: &'static GoStruct, out: &mut String) {
        match obj {
            Value::Object(map) => self.map(map, Shape::Struct(kind, true), &[], out),
            _ => out.push_str(&go_json(obj)),
        }
    }

    /// An object: sorted where the patch reached it, else in its struct's order (then
    /// unknown keys sorted, as they cannot come from a Go struct anyway).
    fn map(&self, map: &Map<String, Value>, shape: Shape, path: &[String], out: &mut String) {
        let mut keys: Vec<&str> = map.keys().map(String::as_str).collect();
        if let Shape::Struct(st, root) = shape
            && !self.reached.reaches(path)
        {
            keys.sort_by_key(|key| struct_json::member(st, root, key).0);
        }
        out.push('{');
        for (i, key) in keys.into_iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            write_go_string(key, out);
            out.push(':');
            let ty = match shape {
                Shape::Struct(st, root) => struct_json::member(st, root, key).1,
                Shape::Map(items) => Some(items),
                Shape::Plain => None,
            };
            let mut child = path.to_vec();
            child.push(key.to_string());
            self.value(&map[key], ty, &child, out);
        }
        out.push('}');
    }

    fn value(&self, value: &Value, ty: Option<&'static GoType>, path: &[String], out: &mut String) {
        if let Some(raw) = self.raw.get(path) {
            out.push_str(raw);
            return;
        }
        match (value, ty) {
            (Value::Object(map), Some(GoType::Struct(s) | GoType::Union(_, s))) => {
                self.map(map, Shape::Struct(s, false), path, out);
            }
            // Go writes a map's keys sorted: no order to keep.
            (Value::Object(map), Some(GoType::Map(items))) => self.map(map, Shape::Map(items), path, out),
            (Value::Object(map), None) => self.map(map, Shape::Plain, path, out),
            (Value::Array(list), Some(GoType::Slice { items, .. })) => self.items(list, Some(items), path, out),
            (Value::Array(list), None) => self.items(list, None, path, out),
            _ => out.push_str(&go_json(value)),
        }
    }

    fn items(&self, list: &[Value], ty: Option<&'static GoType>, path: &[String], out: &mut String) {
        out.push('[');
        for (i, item) in list.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let mut child = path.to_vec();
            child.push(i.to_string());
            self.value(item, ty, &child, out);
        }
        out.push(']');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::builtin::types::{SCALE, SECRET};
    use serde_json::json;

    fn secret() -> Value {
        json!({"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "data": {"user": "%%%"},
            "metadata": {"uid": "u1", "name": "s-1", "namespace": "ns", "resourceVersion": "7",
                "managedFields": [{"time": "t", "manager": "m", "operation": "Update", "apiVersion": "v1",
                    "fieldsType": "FieldsV1", "fieldsV1": {"f:type": {}, "f:data": {".": {}}}}]}})
    }

    #[test]
    fn a_merge_patch_sorts_what_it_reaches_and_keeps_struct_order_elsewhere() {
        // The oracle's text for this patch of a Secret: the top level and `data` sorted,
        // `metadata` and its managedFields in their Go structs' order.
        let source = PatchSource { patch_type: PatchType::Merge, body: br#"{"data":{"user":"%%%"}}"# };
        assert_eq!(
            patched_json(&secret(), &secret(), &source, Some(&SECRET)),
            r#"{"apiVersion":"v1","data":{"user":"%%%"},"kind":"Secret","metadata":{"name":"s-1","namespace":"ns","uid":"u1","resourceVersion":"7","managedFields":[{"manager":"m","operation":"Update","apiVersion":"v1","time":"t","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{}},"f:type":{}}}]},"type":"Opaque"}"#
        );
    }

    #[test]
    fn a_merge_patch_into_metadata_sorts_metadata_but_not_its_untouched_children() {
        let source =
            PatchSource { patch_type: PatchType::Merge, body: br#"{"metadata":{"labels":{"b":"1","a":"2"}}}"# };
        let mut obj = secret();
        obj["metadata"]["labels"] = json!({"b": "1", "a": "2"});
        let text = patched_json(&secret(), &obj, &source, Some(&SECRET));
        assert!(text.contains(r#""metadata":{"labels":{"a":"2","b":"1"},"managedFields":[{"manager":"m","#), "{text}");
    }

    #[test]
    fn a_json_patch_sorts_the_containers_on_its_paths() {
        let scale = json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "spec": {"replicas": "four"},
            "status": {"selector": "a=b", "replicas": 0}, "metadata": {"resourceVersion": "3", "uid": "u", "name": "s1"}});
        let source = PatchSource {
            patch_type: PatchType::Json,
            body: br#"[{"op":"replace","path":"/spec/replicas","value":"four"}]"#,
        };
        assert_eq!(
            patched_json(&scale, &scale, &source, Some(&SCALE)),
            r#"{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"s1","uid":"u","resourceVersion":"3"},"spec":{"replicas":"four"},"status":{"replicas":0,"selector":"a=b"}}"#
        );
    }

    #[test]
    fn unstructured_and_strategic_patches_quote_sorted_json() {
        let source = PatchSource { patch_type: PatchType::Merge, body: b"{}" };
        assert_eq!(patched_json(&secret(), &secret(), &source, None), go_json(&secret()));
        let source = PatchSource { patch_type: PatchType::StrategicMerge, body: b"{}" };
        assert_eq!(patched_json(&secret(), &secret(), &source, Some(&SECRET)), go_json(&secret()));
    }
}
