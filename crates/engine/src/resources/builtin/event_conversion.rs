//! The two forms of an Event: core v1 (how every Event is stored) and events.k8s.io/v1,
//! converted as kube's `pkg/apis/events/v1` conversions do (involvedObject↔regarding,
//! message↔note, source↔deprecatedSource, firstTimestamp/lastTimestamp/count↔
//! deprecated*, reportingComponent↔reportingController). Both are written back as Go's
//! encoder writes the typed struct: fields without `omitempty` are always there
//! (`involvedObject: {}`, `eventTime: null`, `reportingComponent: ""`), empty optional
//! ones are not, and times take kube's formats.

use super::{TimeKind, normalize_time};
use serde_json::{Map, Value};

/// The fields of an `ObjectReference` (all strings, all `omitempty`).
const REFERENCE_FIELDS: [&str; 7] = ["kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"];
/// The fields of an `EventSource`.
const SOURCE_FIELDS: [&str; 2] = ["component", "host"];

fn take(m: &mut Map<String, Value>, key: &str) -> Value {
    m.remove(key).unwrap_or(Value::Null)
}

/// A string field with `omitempty`: set only when non-empty.
fn put_text(out: &mut Map<String, Value>, key: &str, v: Value) {
    if let Value::String(s) = &v
        && !s.is_empty()
    {
        out.insert(key.into(), v);
    }
}

/// A string field without `omitempty`: `""` when absent.
fn put_string(out: &mut Map<String, Value>, key: &str, v: Value) {
    out.insert(key.into(), if v.is_string() { v } else { Value::from("") });
}

/// A struct field (always written): only its known, non-empty string fields.
fn put_struct(out: &mut Map<String, Value>, key: &str, v: Value, fields: &[&str]) {
    out.insert(key.into(), strings_of(v, fields));
}

fn strings_of(v: Value, fields: &[&str]) -> Value {
    let mut m = match v {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    let mut kept = Map::new();
    for f in fields {
        put_text(&mut kept, f, take(&mut m, f));
    }
    Value::Object(kept)
}

/// A time struct field (always written, `null` when zero).
fn put_time(out: &mut Map<String, Value>, key: &str, v: Value, kind: TimeKind) {
    let v = match v {
        Value::String(s) if s.is_empty() => Value::Null,
        other => normalize_time(other, kind),
    };
    out.insert(key.into(), v);
}

/// An `int32` with `omitempty`.
fn put_count(out: &mut Map<String, Value>, key: &str, v: Value) {
    if v.as_i64().is_some_and(|n| n != 0) {
        out.insert(key.into(), v);
    }
}

/// An optional `*ObjectReference`.
fn put_reference(out: &mut Map<String, Value>, key: &str, v: Value) {
    if v.is_object() {
        out.insert(key.into(), strings_of(v, &REFERENCE_FIELDS));
    }
}

/// An optional `*EventSeries`: events.k8s.io always writes both fields, core omits a
/// zero count.
fn put_series(out: &mut Map<String, Value>, v: Value, core: bool) {
    let Value::Object(mut s) = v else { return };
    let mut series = Map::new();
    let count = take(&mut s, "count");
    if core {
        put_count(&mut series, "count", count);
    } else {
        series.insert("count".into(), if count.is_i64() { count } else { Value::from(0) });
    }
    put_time(&mut series, "lastObservedTime", take(&mut s, "lastObservedTime"), TimeKind::Micro);
    out.insert("series".into(), Value::Object(series));
}

fn fields(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// A stored (core v1) Event as events.k8s.io/v1 serves it.
pub fn core_to_events(core: Value) -> Value {
    let mut m = fields(core);
    let mut out = Map::new();
    out.insert("apiVersion".into(), Value::from("events.k8s.io/v1"));
    out.insert("kind".into(), Value::from("Event"));
    out.insert("metadata".into(), take(&mut m, "metadata"));
    put_time(&mut out, "eventTime", take(&mut m, "eventTime"), TimeKind::Micro);
    put_series(&mut out, take(&mut m, "series"), false);
    put_text(&mut out, "reportingController", take(&mut m, "reportingComponent"));
    put_text(&mut out, "reportingInstance", take(&mut m, "reportingInstance"));
    put_text(&mut out, "action", take(&mut m, "action"));
    put_text(&mut out, "reason", take(&mut m, "reason"));
    put_struct(&mut out, "regarding", take(&mut m, "involvedObject"), &REFERENCE_FIELDS);
    put_reference(&mut out, "related", take(&mut m, "related"));
    put_text(&mut out, "note", take(&mut m, "message"));
    put_text(&mut out, "type", take(&mut m, "type"));
    put_struct(&mut out, "deprecatedSource", take(&mut m, "source"), &SOURCE_FIELDS);
    put_time(&mut out, "deprecatedFirstTimestamp", take(&mut m, "firstTimestamp"), TimeKind::Seconds);
    put_time(&mut out, "deprecatedLastTimestamp", take(&mut m, "lastTimestamp"), TimeKind::Seconds);
    put_count(&mut out, "deprecatedCount", take(&mut m, "count"));
    Value::Object(out)
}

/// An events.k8s.io/v1 Event as it is stored (a core v1 Event).
pub fn events_to_core(ev: Value) -> Value {
    let mut m = fields(ev);
    let mut out = Map::new();
    out.insert("apiVersion".into(), Value::from("v1"));
    out.insert("kind".into(), Value::from("Event"));
    out.insert("metadata".into(), take(&mut m, "metadata"));
    put_struct(&mut out, "involvedObject", take(&mut m, "regarding"), &REFERENCE_FIELDS);
    put_text(&mut out, "reason", take(&mut m, "reason"));
    put_text(&mut out, "message", take(&mut m, "note"));
    put_struct(&mut out, "source", take(&mut m, "deprecatedSource"), &SOURCE_FIELDS);
    put_time(&mut out, "firstTimestamp", take(&mut m, "deprecatedFirstTimestamp"), TimeKind::Seconds);
    put_time(&mut out, "lastTimestamp", take(&mut m, "deprecatedLastTimestamp"), TimeKind::Seconds);
    put_count(&mut out, "count", take(&mut m, "deprecatedCount"));
    put_text(&mut out, "type", take(&mut m, "type"));
    put_time(&mut out, "eventTime", take(&mut m, "eventTime"), TimeKind::Micro);
    put_series(&mut out, take(&mut m, "series"), true);
    put_text(&mut out, "action", take(&mut m, "action"));
    put_reference(&mut out, "related", take(&mut m, "related"));
    put_string(&mut out, "reportingComponent", take(&mut m, "reportingController"));
    put_string(&mut out, "reportingInstance", take(&mut m, "reportingInstance"));
    Value::Object(out)
}

/// A core v1 Event as kube writes it back (decoded into the typed struct and encoded).
pub fn normalize_core(core: Value) -> Value {
    events_to_core(core_to_events(core))
}

/// An object in either form, as a core v1 Event.
pub fn as_core(obj: &Value) -> std::borrow::Cow<'_, Value> {
    if obj.get("apiVersion").and_then(Value::as_str) == Some("events.k8s.io/v1") {
        std::borrow::Cow::Owned(events_to_core(obj.clone()))
    } else {
        std::borrow::Cow::Borrowed(obj)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use serde_json::json;

    /// An events.k8s.io/v1 Event as a controller writes it.
    pub(in crate::resources::builtin) fn v1_event() -> Value {
        json!({
            "apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": "w1.17", "namespace": "team"},
            "eventTime": "2024-05-01T10:00:00.123456Z",
            "reportingController": "example.com/widgets", "reportingInstance": "widgets-0",
            "action": "Reconcile", "reason": "Synced", "note": "all good", "type": "Normal",
            "regarding": {"apiVersion": "stable.example.com/v1", "kind": "Widget", "name": "w1", "namespace": "team", "uid": "u1"},
        })
    }

    #[test]
    fn events_convert_both_ways_as_kube_writes_them() {
        let core = events_to_core(v1_event());
        assert_eq!(
            core,
            json!({
                "apiVersion": "v1", "kind": "Event",
                "metadata": {"name": "w1.17", "namespace": "team"},
                "involvedObject": {"apiVersion": "stable.example.com/v1", "kind": "Widget", "name": "w1", "namespace": "team", "uid": "u1"},
                "reason": "Synced", "message": "all good", "source": {},
                "firstTimestamp": null, "lastTimestamp": null, "type": "Normal",
                "eventTime": "2024-05-01T10:00:00.123456Z", "action": "Reconcile",
                "reportingComponent": "example.com/widgets", "reportingInstance": "widgets-0",
            })
        );
        let mut back = v1_event();
        let m = back.as_object_mut().expect("object");
        m.insert("deprecatedSource".into(), json!({}));
        m.insert("deprecatedFirstTimestamp".into(), Value::Null);
        m.insert("deprecatedLastTimestamp".into(), Value::Null);
        assert_eq!(core_to_events(core), back);
    }

    #[test]
    fn a_legacy_event_gets_its_go_shape() {
        let e =
            normalize_core(json!({"metadata": {"name": "e"}, "count": 3, "firstTimestamp": "2024-05-01T10:00:00.5Z",
                                      "source": {"component": "kubelet", "host": ""}, "series": {"count": 0}}));
        assert_eq!(
            e,
            json!({
                "apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"}, "involvedObject": {},
                "source": {"component": "kubelet"}, "firstTimestamp": "2024-05-01T10:00:00Z", "lastTimestamp": null,
                "count": 3, "eventTime": null, "series": {"lastObservedTime": null},
                "reportingComponent": "", "reportingInstance": "",
            })
        );
    }
}
