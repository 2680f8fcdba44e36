//! Whole answers: each target and format over the same objects.

use super::*;
use negotiation::{Endpoint, negotiate};
use serde_json::json;
use table::IncludeObject;

fn shape(accept: &str) -> Shape {
    Shape {
        negotiated: negotiate(Some(accept), Endpoint::Resource).expect("acceptable"),
        table: TableOptions::default(),
        now: "2026-11-22T12:00:00Z".parse().expect("time"),
    }
}

fn widget(name: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({"apiVersion": "g.example.com/v1", "kind": "Widget",
        "metadata": {"name": name, "namespace": "default", "uid": "u", "creationTimestamp": "2026-11-22T11:59:00Z"},
        "spec": {"color": "blue"}}))
    .expect("json")
}

fn kind() -> KindNames {
    KindNames::new("g.example.com", "v1", "Widget", "WidgetList")
}

fn json_of(e: &Encoded) -> Value {
    serde_json::from_slice(&e.body).expect("json body")
}

#[test]
fn typed_list_items_carry_no_type_meta() {
    let a = widget("a");
    let items = [RawObject::stored(&a, 7)];
    let meta = ListMeta { resource_version: "9".into(), ..Default::default() };
    let typed = KindNames { typed: true, ..kind() };
    let e = encode_list(&shape("application/json"), &typed, &TableConvertor::default(), &meta, &items).expect("ok");
    let v = json_of(&e);
    assert_eq!(v["kind"], "WidgetList");
    assert!(v["items"][0].get("apiVersion").is_none() && v["items"][0].get("kind").is_none(), "{v}");
    assert_eq!(v["items"][0]["metadata"]["resourceVersion"], "7");
    let e = encode_list(&shape("application/json"), &kind(), &TableConvertor::default(), &meta, &items).expect("ok");
    assert_eq!(json_of(&e)["items"][0]["kind"], "Widget", "unstructured items keep theirs");
}

#[test]
fn lists_splice_resource_versions_into_stored_bytes() {
    let (a, b) = (widget("a"), widget("b"));
    let items = [RawObject::stored(&a, 7), RawObject::stored(&b, 8)];
    let meta = ListMeta { resource_version: "9".into(), ..Default::default() };
    let e = encode_list(&shape("application/json"), &kind(), &TableConvertor::default(), &meta, &items).expect("ok");
    let v = json_of(&e);
    assert_eq!(v["kind"], "WidgetList");
    assert_eq!(v["items"][1]["metadata"]["resourceVersion"], "8");
    assert_eq!(v["metadata"], json!({"resourceVersion": "9"}));
    assert!(e.body.ends_with(b"}\n"));
}

#[test]
fn partial_metadata_and_its_406s() {
    let a = widget("a");
    let obj = RawObject::stored(&a, 3);
    let conv = TableConvertor::default();
    let s = shape("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1");
    let v = json_of(&encode_object(&s, &kind(), &conv, obj).expect("ok"));
    assert_eq!(v["kind"], "PartialObjectMetadata");
    assert_eq!(v["metadata"]["resourceVersion"], "3");
    assert!(v.get("spec").is_none());
    let e = encode_list(&s, &kind(), &conv, &ListMeta::default(), &[obj]).expect_err("a list");
    assert_eq!(e.code, 406);
    assert_eq!(
        e.message,
        "you requested PartialObjectMetadata, but the requested object is a list (*unstructured.UnstructuredList)"
    );
    let s = shape("application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1");
    // kube's Unstructured passes for a list until its items are read: a bare 500.
    let e = encode_object(&s, &kind(), &conv, obj).expect_err("not a list");
    assert_eq!((e.code, e.reason.as_str(), e.message.as_str()), (500, "", "content is not a list"));
    // A typed object fails the list check itself.
    let e = encode_object(&s, &KindNames::scale(), &conv, obj).expect_err("not a list");
    assert_eq!(
        (e.code, e.message.as_str()),
        (406, "you requested PartialObjectMetadataList, but the requested object is not a list (*v1.Scale)")
    );
}

#[test]
fn built_in_kinds_are_named_by_their_internal_types() {
    let names = |group: &str, kind: &str| {
        let k = KindNames::new(group, "v1", kind, &format!("{kind}List"));
        (k.go_type, k.go_list_type)
    };
    assert_eq!(names("coordination.k8s.io", "Lease"), ("*coordination.Lease".into(), "*coordination.LeaseList".into()));
    // events.k8s.io Events are core Events inside kube-apiserver.
    assert_eq!(names("events.k8s.io", "Event"), ("*core.Event".into(), "*core.EventList".into()));
    assert_eq!(names("", "ConfigMap"), ("*core.ConfigMap".into(), "*core.ConfigMapList".into()));
    assert_eq!(names("g.example.com", "Widget").0, UNSTRUCTURED);
}

#[test]
fn tables_include_objects_as_asked() {
    let a = widget("a");
    let obj = RawObject::stored(&a, 3);
    let conv = TableConvertor::custom_resource(&[]);
    let mut s = shape("application/json;as=Table;g=meta.k8s.io;v=v1beta1");
    let v = json_of(&encode_object(&s, &kind(), &conv, obj).expect("ok"));
    assert_eq!(v["apiVersion"], "meta.k8s.io/v1beta1");
    assert_eq!(v["metadata"]["resourceVersion"], "3");
    assert_eq!(v["rows"][0]["cells"], json!(["a", "60s"]));
    assert_eq!(v["rows"][0]["object"]["kind"], "PartialObjectMetadata");
    assert_eq!(v["rows"][0]["object"]["apiVersion"], "meta.k8s.io/v1beta1");
    s.table.include_object = IncludeObject::Object;
    let v = json_of(&encode_object(&s, &kind(), &conv, obj).expect("ok"));
    assert_eq!(v["rows"][0]["object"]["spec"]["color"], "blue");
    s.table.include_object = IncludeObject::None;
    let v = json_of(&encode_object(&s, &kind(), &conv, obj).expect("ok"));
    assert_eq!(v["rows"][0]["object"], Value::Null);
}

#[test]
fn csv_yaml_pretty_and_export() {
    let a = widget("a");
    let obj = RawObject::stored(&a, 3);
    let conv = TableConvertor::custom_resource(&[]);
    let e = encode_list(&shape("text/csv"), &kind(), &conv, &ListMeta::default(), &[obj]).expect("ok");
    assert_eq!(String::from_utf8_lossy(&e.body), "Name,Age\na,60s\n");
    assert_eq!(e.content_type, "text/csv; charset=utf-8");
    let e = encode_object(&shape("application/yaml"), &kind(), &conv, obj).expect("ok");
    assert!(String::from_utf8_lossy(&e.body).contains("  resourceVersion: \"3\"\n"));
    assert_eq!(e.content_type, "application/yaml");
    let e = encode_object(&shape("application/json;pretty=1"), &kind(), &conv, obj).expect("ok");
    assert!(String::from_utf8_lossy(&e.body).starts_with("{\n  \"apiVersion\": \"g.example.com/v1\",\n"));
    let e = encode_object(&shape("application/json;export=1"), &kind(), &conv, obj).expect("ok");
    let v = json_of(&e);
    assert!(v["metadata"].get("uid").is_none() && v["metadata"].get("resourceVersion").is_none());
    assert_eq!(v["metadata"]["name"], "a");
}

#[test]
fn table_watches_send_headers_once() {
    let a = widget("a");
    let obj = RawObject::stored(&a, 3);
    let s = shape("application/json;as=Table;g=meta.k8s.io;v=v1");
    let mut w = WatchEncoder::new(s, kind(), std::sync::Arc::new(TableConvertor::custom_resource(&[])));
    let first: Value = serde_json::from_slice(&w.event("ADDED", obj, s.now).expect("a line")).expect("json");
    let second: Value = serde_json::from_slice(&w.event("MODIFIED", obj, s.now).expect("a line")).expect("json");
    assert!(first["object"]["columnDefinitions"].is_array());
    assert_eq!(second["object"]["columnDefinitions"], Value::Null);
    assert_eq!(second["type"], "MODIFIED");
}

#[test]
fn a_metadata_list_watch_ends_at_its_first_event() {
    let a = widget("a");
    let obj = RawObject::stored(&a, 3);
    let s = shape("application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1");
    let mut w = WatchEncoder::new(s, kind(), std::sync::Arc::new(TableConvertor::default()));
    assert_eq!(w.event("ADDED", obj, s.now), None, "kube cannot encode it and closes the stream");
    let s = shape("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1");
    let mut w = WatchEncoder::new(s, kind(), std::sync::Arc::new(TableConvertor::default()));
    assert!(w.event("ADDED", obj, s.now).is_some());
}
