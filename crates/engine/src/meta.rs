//! Object metadata the server owns, on JSON objects.
//!
//! Every object the engine stores is a JSON document (custom resources are schemaless to
//! the server's Go types, so the engine treats every kind alike). These helpers read and
//! set the `metadata` fields kube-apiserver manages: uid, resourceVersion, generation,
//! creationTimestamp, deletionTimestamp. resourceVersion is never stored: it is the
//! store's `mod_revision`, injected on every read.

use crate::store::{KeyValue, Revision};
use k8s_openapi::jiff::Timestamp;
use rand::RngCore;
use serde_json::{Map, Value};

/// `ObjectMeta` fields in Go's struct order (the order kube writes them in).
pub const OBJECT_META_FIELDS: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

/// `OwnerReference` fields in Go's struct order.
pub const OWNER_REFERENCE_FIELDS: &[&str] = &["apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion"];

/// `ManagedFieldsEntry` fields in Go's struct order.
pub const MANAGED_FIELDS_ENTRY_FIELDS: &[&str] =
    &["manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1", "subresource"];

/// The `metadata` map of an object, created if missing or not an object.
pub fn metadata_mut(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj.is_object() {
        *obj = Value::Object(Map::new());
    }
    let map = obj.as_object_mut().expect("just made an object");
    let meta = map.entry("metadata").or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    meta.as_object_mut().expect("just made an object")
}

fn meta_str<'a>(obj: &'a Value, field: &str) -> Option<&'a str> {
    obj.get("metadata")?.get(field)?.as_str()
}

pub fn name(obj: &Value) -> Option<&str> {
    meta_str(obj, "name").filter(|s| !s.is_empty())
}

/// kube's `markAsDeleting`: the deletionTimestamp, a zero grace period, and one more
/// generation for kinds that count them.
pub fn mark_as_deleting(obj: &mut Value, now: Timestamp) {
    let bump = deletion_timestamp(obj).is_none() && generation(obj) > 0;
    let next = generation(obj) + 1;
    let m = metadata_mut(obj);
    if bump {
        m.insert("generation".into(), Value::from(next));
    }
    m.insert("deletionTimestamp".into(), Value::from(format_time(now)));
    m.insert("deletionGracePeriodSeconds".into(), Value::from(0));
}

pub fn uid(obj: &Value) -> Option<&str> {
    meta_str(obj, "uid").filter(|s| !s.is_empty())
}

pub fn namespace(obj: &Value) -> Option<&str> {
    meta_str(obj, "namespace").filter(|s| !s.is_empty())
}

pub fn resource_version(obj: &Value) -> Option<&str> {
    meta_str(obj, "resourceVersion").filter(|s| !s.is_empty())
}

pub fn deletion_timestamp(obj: &Value) -> Option<&str> {
    meta_str(obj, "deletionTimestamp")
}

pub fn generation(obj: &Value) -> i64 {
    obj.get("metadata").and_then(|m| m.get("generation")).and_then(Value::as_i64).unwrap_or(0)
}

/// The finalizers of an object.
pub fn finalizers(obj: &Value) -> Vec<String> {
    obj.get("metadata")
        .and_then(|m| m.get("finalizers"))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|v| v.as_str().map(String::from)).collect())
        .unwrap_or_default()
}

pub fn set_finalizers(obj: &mut Value, finalizers: &[String]) {
    let meta = metadata_mut(obj);
    if finalizers.is_empty() {
        meta.remove("finalizers");
    } else {
        meta.insert("finalizers".into(), Value::from(finalizers.to_vec()));
    }
}

/// kube's timestamp format: RFC 3339 in UTC with whole seconds.
pub fn format_time(t: Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// An RFC 1123 label, as namespace names must be: whether `schema::names` (the engine's
/// one copy of the grammar) finds no problem with it.
pub fn is_dns1123_label(s: &str) -> bool {
    crate::schema::names::is_dns1123_label(s).is_empty()
}

/// A random (version 4) UUID.
pub fn new_uid() -> String {
    let mut b = [0u8; 16];
    rand::rng().fill_bytes(&mut b);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut uid = String::with_capacity(36);
    for (i, x) in b.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            uid.push('-');
        }
        uid.push(HEX[usize::from(x >> 4)] as char);
        uid.push(HEX[usize::from(x & 0xf)] as char);
    }
    uid
}

/// Parses a `resourceVersion` given by a client. kube answers a malformed one with 400.
pub fn parse_resource_version(rv: &str) -> Option<Revision> {
    rv.parse().ok()
}

/// Sets the fields a create owns, dropping whatever the client put there.
pub fn prepare_create(obj: &mut Value, now: Timestamp) {
    let meta = metadata_mut(obj);
    meta.insert("uid".into(), Value::from(new_uid()));
    meta.insert("creationTimestamp".into(), Value::from(format_time(now)));
    meta.insert("generation".into(), Value::from(1));
    meta.remove("resourceVersion");
    meta.remove("deletionTimestamp");
    meta.remove("deletionGracePeriodSeconds");
    meta.remove("selfLink");
}

/// kube's `dedupOwnerReferences`: removes each ownerReference equal to an earlier one
/// and answers the removed ones' uids.
pub fn dedup_owner_references(obj: &mut Value) -> Vec<String> {
    let Some(refs) = obj.pointer_mut("/metadata/ownerReferences").and_then(Value::as_array_mut) else {
        return Vec::new();
    };
    let mut kept: Vec<Value> = Vec::with_capacity(refs.len());
    let mut duplicates = Vec::new();
    for r in refs.drain(..) {
        if kept.contains(&r) {
            duplicates.push(r.get("uid").and_then(Value::as_str).unwrap_or_default().to_string());
        } else {
            kept.push(r);
        }
    }
    *refs = kept;
    duplicates
}

/// Keeps the fields an update may not change from the stored object, as kube's
/// `BeforeUpdate` does. What it leaves as the update gives it stays for validation to
/// refuse when it differs: a uid given, a deletionTimestamp or grace period on an object
/// not being deleted, a grace period changed (a patch can set them; an update's
/// precondition refuses a uid first).
pub fn preserve_on_update(new: &mut Value, old: &Value) {
    let old_meta = old.get("metadata").and_then(Value::as_object);
    let old_field = |field: &str| old_meta.and_then(|m| m.get(field)).filter(|v| !v.is_null());
    let meta = metadata_mut(new);
    let given = |meta: &Map<String, Value>, field: &str| {
        meta.get(field).is_some_and(|v| !v.is_null() && v.as_str().is_none_or(|s| !s.is_empty()))
    };
    let mut keep = vec!["creationTimestamp", "generation"];
    if !given(meta, "uid") {
        keep.push("uid");
    }
    if old_field("deletionTimestamp").is_some() {
        keep.push("deletionTimestamp");
    }
    if old_field("deletionGracePeriodSeconds").is_some() && !given(meta, "deletionGracePeriodSeconds") {
        keep.push("deletionGracePeriodSeconds");
    }
    for field in keep {
        match old_field(field) {
            Some(v) => meta.insert(field.into(), v.clone()),
            None => meta.remove(field),
        };
    }
    // A null the client sent for what the stored object lacks is no change.
    for field in ["deletionTimestamp", "deletionGracePeriodSeconds"] {
        if meta.get(field).is_some_and(Value::is_null) {
            meta.remove(field);
        }
    }
    meta.remove("resourceVersion");
    meta.remove("selfLink");
}

/// The selfLink a client sent with an update. kube's storage clears it as it stores an
/// object (`PrepareObjectForStorage`), so only answers of updates it did not store keep it:
/// a dry run's, and one that emptied the finalizers of an object being deleted.
pub fn given_self_link(obj: &Value) -> Option<String> {
    meta_str(obj, "selfLink").filter(|s| !s.is_empty()).map(String::from)
}

/// Puts back a selfLink [`given_self_link`] took.
pub fn restore_self_link(obj: &mut Value, link: Option<String>) {
    if let Some(link) = link {
        metadata_mut(obj).insert("selfLink".into(), Value::from(link));
    }
}

/// kube's `WipeObjectMetaSystemFields`, which a create runs on the body before its field
/// manager sees it: what the server sets is not the client's to own.
pub fn wipe_system_fields(obj: &mut Value) {
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        for field in ["creationTimestamp", "uid", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"] {
            meta.remove(field);
        }
    }
}

/// Serializes an object for storage (without its resourceVersion), keys sorted.
pub fn to_stored(obj: &Value) -> bytes::Bytes {
    to_stored_as(obj, crate::go_json::to_vec)
}

/// Serializes an object for storage (without its resourceVersion) with `write`.
pub fn to_stored_as(obj: &Value, write: fn(&Value) -> Vec<u8>) -> bytes::Bytes {
    // Written objects come without one: no copy to take it out.
    let json = match obj.get("metadata").and_then(Value::as_object) {
        Some(m) if !m.contains_key("resourceVersion") => write(obj),
        _ => {
            let mut obj = obj.clone();
            metadata_mut(&mut obj).remove("resourceVersion");
            write(&obj)
        }
    };
    exact(json)
}

/// Bytes that hold exactly `json`, for keeping. An encoder's vector grows by doubling (an
/// object of 870 bytes sits in 1,024), and the store keeps every value for as long as it
/// lives: a copy of the right size costs a memcpy once, the slack costs memory always.
pub fn exact(json: Vec<u8>) -> bytes::Bytes {
    if json.capacity() - json.len() < 64 { bytes::Bytes::from(json) } else { bytes::Bytes::copy_from_slice(&json) }
}

/// Whether two objects are equal but for the top-level fields in `skip` (compared
/// in place: a write's checks run on every write and objects are not small).
pub fn equal_except(a: &Value, b: &Value, skip: &[&str]) -> bool {
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else { return a == b };
    let kept = |m: &Map<String, Value>| m.keys().filter(|k| !skip.contains(&k.as_str())).count();
    kept(a) == kept(b) && a.iter().filter(|(k, _)| !skip.contains(&k.as_str())).all(|(k, v)| b.get(k) == Some(v))
}

/// Whether two objects are equal but for the metadata fields in `skip`.
pub fn equal_except_metadata(a: &Value, b: &Value, skip: &[&str]) -> bool {
    let none = Value::Null;
    equal_except(a, b, &["metadata"])
        && equal_except(a.get("metadata").unwrap_or(&none), b.get("metadata").unwrap_or(&none), skip)
}

/// Reads a stored object and injects its resourceVersion.
pub fn from_stored(kv: &KeyValue) -> Value {
    let mut obj: Value = serde_json::from_slice(&kv.value).unwrap_or(Value::Null);
    metadata_mut(&mut obj).insert("resourceVersion".into(), Value::from(kv.mod_revision.to_string()));
    obj
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kept_bytes_are_the_encoding_whatever_the_vector_s_slack() {
        let mut roomy = Vec::with_capacity(4096);
        roomy.extend_from_slice(b"{\"a\":1}");
        let mut snug = b"{\"b\":2}".to_vec();
        snug.shrink_to_fit();
        assert_eq!(&exact(roomy)[..], b"{\"a\":1}");
        assert_eq!(&exact(snug)[..], b"{\"b\":2}");
        let obj = json!({"metadata": {"name": "x", "resourceVersion": "7"}, "spec": {"n": 1}});
        assert_eq!(&to_stored(&obj)[..], br#"{"metadata":{"name":"x"},"spec":{"n":1}}"#);
    }

    #[test]
    fn uids_are_version_4() {
        let u = new_uid();
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
        assert!(matches!(&u[19..20], "8" | "9" | "a" | "b"), "{u}");
        let dashes: Vec<usize> = u.match_indices('-').map(|(i, _)| i).collect();
        assert_eq!(dashes, [8, 13, 18, 23], "{u}");
        assert!(u.chars().all(|c| c == '-' || c.is_ascii_hexdigit() && !c.is_ascii_uppercase()), "{u}");
        assert_ne!(u, new_uid());
    }

    #[test]
    fn updates_keep_server_owned_fields() {
        let old = json!({"metadata": {"name": "a", "uid": "u1", "generation": 3, "creationTimestamp": "t"}});
        let mut new = json!({"metadata": {"name": "a", "resourceVersion": "9"}});
        preserve_on_update(&mut new, &old);
        assert_eq!(new, json!({"metadata": {"name": "a", "uid": "u1", "generation": 3, "creationTimestamp": "t"}}));
        // A uid given stays, for validation to refuse as kube's `BeforeUpdate` leaves it.
        let mut forged = json!({"metadata": {"name": "a", "uid": "forged"}});
        preserve_on_update(&mut forged, &old);
        assert_eq!(forged["metadata"]["uid"], "forged");
    }

    #[test]
    fn a_given_self_link_is_one_that_is_not_empty() {
        let mut obj = json!({"metadata": {"name": "a", "selfLink": "/x"}});
        let link = given_self_link(&obj);
        assert_eq!(link.as_deref(), Some("/x"));
        assert_eq!(given_self_link(&json!({"metadata": {"selfLink": ""}})), None);
        preserve_on_update(&mut obj, &json!({"metadata": {"name": "a"}}));
        assert_eq!(obj.pointer("/metadata/selfLink"), None);
        restore_self_link(&mut obj, link);
        assert_eq!(obj["metadata"]["selfLink"], "/x");
    }

    #[test]
    fn a_create_wipes_what_the_server_sets() {
        let mut obj = json!({"metadata": {"name": "a", "uid": "u", "creationTimestamp": "t", "deletionTimestamp": "t",
                                          "deletionGracePeriodSeconds": 0, "selfLink": "/x", "generation": 7}});
        wipe_system_fields(&mut obj);
        assert_eq!(obj, json!({"metadata": {"name": "a", "generation": 7}}));
    }

    #[test]
    fn stored_objects_get_their_resource_version_on_read() {
        let obj = json!({"metadata": {"name": "a", "resourceVersion": "1"}});
        let kv = KeyValue { key: "k".into(), value: to_stored(&obj), create_revision: 5, mod_revision: 7 };
        assert_eq!(from_stored(&kv), json!({"metadata": {"name": "a", "resourceVersion": "7"}}));
        let without = json!({"metadata": {"name": "a"}});
        assert_eq!(to_stored(&without), to_stored(&obj), "the same bytes, with or without one to drop");
    }

    #[test]
    fn objects_compare_equal_but_for_the_fields_named() {
        let a = json!({"spec": {"x": 1}, "status": {"y": 1}, "metadata": {"name": "a", "resourceVersion": "1"}});
        let b = json!({"spec": {"x": 1}, "status": {"y": 2}, "metadata": {"name": "a", "resourceVersion": "2"}});
        assert!(equal_except(&a, &b, &["status", "metadata"]));
        assert!(!equal_except(&a, &b, &["metadata"]), "the status differs");
        let mut c = b.clone();
        c["status"] = a["status"].clone();
        assert!(equal_except_metadata(&a, &c, &["resourceVersion"]));
        assert!(!equal_except_metadata(&a, &c, &["managedFields"]), "the resourceVersion differs");
        // A field only one side has is a difference, whichever side it is on.
        let extra = json!({"spec": {"x": 1}, "status": {"y": 1}, "metadata": {"name": "a"}, "data": 1});
        assert!(!equal_except_metadata(&a, &extra, &["resourceVersion"]));
        assert!(!equal_except_metadata(&extra, &a, &["resourceVersion"]));
        let no_rv = json!({"spec": {"x": 1}, "status": {"y": 1}, "metadata": {"name": "a"}});
        assert!(equal_except_metadata(&a, &no_rv, &["resourceVersion"]));
        assert!(equal_except(&json!(1), &json!(1), &["x"]) && !equal_except(&json!(1), &json!(2), &["x"]));
    }
}
