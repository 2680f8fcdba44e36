//! `meta.k8s.io` PartialObjectMetadata: an object reduced to its `metadata`.
//!
//! Written straight from the object's bytes: the metadata object is copied member by
//! member in the order Go's typed `ObjectMeta` serializes (name, generateName, namespace,
//! ..., managedFields), with the resourceVersion put in, so that a PartialObjectMetadataList
//! of ten thousand objects costs a scan and a copy, not a decode and an encode.

use super::raw::{self, Member};
use super::{MetaVersion, RawObject};
use crate::meta::{MANAGED_FIELDS_ENTRY_FIELDS, OBJECT_META_FIELDS, OWNER_REFERENCE_FIELDS};

/// Writes the object `obj` with its members in `order` (unknown members after, as given),
/// rewriting member values with `rewrite` when it returns `true`.
fn write_ordered(
    members: &[Member<'_>],
    order: &[&str],
    out: &mut Vec<u8>,
    mut rewrite: impl FnMut(&[u8], &[u8], &mut Vec<u8>) -> bool,
) {
    out.push(b'{');
    let mut first = true;
    let mut emit = |m: &Member<'_>, out: &mut Vec<u8>, first: &mut bool| {
        if !*first {
            out.push(b',');
        }
        *first = false;
        out.push(b'"');
        out.extend_from_slice(m.key);
        out.extend_from_slice(b"\":");
        if !rewrite(m.key, m.value, out) {
            out.extend_from_slice(m.value);
        }
    };
    for key in order {
        if let Some(m) = members.iter().find(|m| m.key == key.as_bytes()) {
            emit(m, out, &mut first);
        }
    }
    for m in members.iter().filter(|m| !order.iter().any(|k| k.as_bytes() == m.key)) {
        emit(m, out, &mut first);
    }
    out.push(b'}');
}

/// Writes an array of objects, each with its members in `order`.
fn write_ordered_array(array: &[u8], order: &[&str], out: &mut Vec<u8>) -> bool {
    let Some(items) = array_items(array) else { return false };
    out.push(b'[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        match raw::members(item) {
            Some(m) => write_ordered(&m, order, out, |_, _, _| false),
            None => out.extend_from_slice(item),
        }
    }
    out.push(b']');
    true
}

/// The items of a JSON array, undecoded.
fn array_items(array: &[u8]) -> Option<Vec<&[u8]>> {
    let mut out = Vec::new();
    let mut pos = 1 + array.iter().position(|b| *b == b'[')?;
    loop {
        while array.get(pos).is_some_and(u8::is_ascii_whitespace) {
            pos += 1;
        }
        match array.get(pos)? {
            b']' => return Some(out),
            b',' => pos += 1,
            _ => {
                let end = raw::skip_value(array, pos)?;
                out.push(&array[pos..end]);
                pos = end;
            }
        }
    }
}

/// Writes the `metadata` of `obj` as typed `ObjectMeta` would serialize, with its
/// resourceVersion (and `creationTimestamp: null` when it has none, as Go writes a zero
/// time).
pub fn write_object_meta(obj: &RawObject<'_>, out: &mut Vec<u8>) {
    let meta = raw::get(obj.json, "metadata").unwrap_or(b"{}");
    let Some(mut members) = raw::members(meta) else {
        out.extend_from_slice(b"{\"creationTimestamp\":null}");
        return;
    };
    let rv_text;
    if let Some(rv) = obj.resource_version {
        rv_text = format!("\"{rv}\"");
        members.retain(|m| m.key != b"resourceVersion");
        members.push(Member { key: b"resourceVersion", value: rv_text.as_bytes() });
    }
    if !members.iter().any(|m| m.key == b"creationTimestamp") {
        members.push(Member { key: b"creationTimestamp", value: b"null" });
    }
    write_ordered(&members, OBJECT_META_FIELDS, out, |key, value, out| match key {
        b"managedFields" => write_ordered_array(value, MANAGED_FIELDS_ENTRY_FIELDS, out),
        b"ownerReferences" => write_ordered_array(value, OWNER_REFERENCE_FIELDS, out),
        _ => false,
    });
}

/// Writes `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{..}}`.
pub fn write_partial(obj: &RawObject<'_>, version: MetaVersion, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"");
    out.extend_from_slice(version.api_version().as_bytes());
    out.extend_from_slice(b"\",\"metadata\":");
    write_object_meta(obj, out);
    out.push(b'}');
}

/// Writes a PartialObjectMetadataList of `items` (`"items": null` when there are none, as
/// Go writes the nil slice kube builds).
pub fn write_partial_list(items: &[RawObject<'_>], meta: &super::ListMeta, version: MetaVersion, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"kind\":\"PartialObjectMetadataList\",\"apiVersion\":\"");
    out.extend_from_slice(version.api_version().as_bytes());
    out.extend_from_slice(b"\",\"metadata\":");
    super::write_list_meta(meta, true, out);
    if items.is_empty() {
        out.extend_from_slice(b",\"items\":null}");
        return;
    }
    out.extend_from_slice(b",\"items\":[");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_partial(item, version, out);
    }
    out.extend_from_slice(b"]}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn partial(obj: &Value, rv: Option<u64>) -> String {
        let bytes = serde_json::to_vec(obj).expect("json");
        let mut out = Vec::new();
        write_partial(&RawObject { resource_version: rv, ..RawObject::complete(&bytes) }, MetaVersion::V1, &mut out);
        String::from_utf8(out).expect("utf8")
    }

    #[test]
    fn metadata_comes_out_in_object_meta_order_with_its_resource_version() {
        let obj = json!({"apiVersion": "g/v1", "kind": "W", "spec": {"a": 1}, "metadata": {
            "uid": "u", "name": "w1", "namespace": "default", "labels": {"a": "b"}, "generation": 2,
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "managedFields": [{"time": "t", "manager": "m", "operation": "Update", "apiVersion": "g/v1"}]}});
        assert_eq!(
            partial(&obj, Some(9)),
            r#"{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"w1","namespace":"default","uid":"u","resourceVersion":"9","generation":2,"creationTimestamp":"2026-01-01T00:00:00Z","labels":{"a":"b"},"managedFields":[{"manager":"m","operation":"Update","apiVersion":"g/v1","time":"t"}]}}"#
        );
        let without_time = json!({"metadata": {"name": "x", "resourceVersion": "3"}});
        assert_eq!(
            partial(&without_time, None),
            r#"{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"x","resourceVersion":"3","creationTimestamp":null}}"#
        );
    }

    #[test]
    fn lists_carry_list_meta_and_null_items_when_empty() {
        let meta = super::super::ListMeta {
            resource_version: "5".into(),
            continue_token: Some("tok".into()),
            remaining_item_count: Some(2),
        };
        let mut out = Vec::new();
        write_partial_list(&[], &meta, MetaVersion::V1beta1, &mut out);
        assert_eq!(
            String::from_utf8_lossy(&out),
            r#"{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1beta1","metadata":{"resourceVersion":"5","continue":"tok","remainingItemCount":2},"items":null}"#
        );
    }
}
