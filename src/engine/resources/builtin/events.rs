//! Events: one storage (kube keeps both APIs under /registry/events), two views.
//!
//! Objects are stored as core v1 Events. The core API serves them as stored; the
//! events.k8s.io/v1 API converts on the way in and out (involvedObject↔regarding,
//! message↔note, source↔deprecatedSource, firstTimestamp/lastTimestamp/count↔
//! deprecated*, reportingComponent↔reportingController), as kube's
//! `pkg/apis/events/v1` conversions do. Both write back what Go's encoder writes for
//! the typed struct: fields without `omitempty` are always there (`involvedObject: {}`,
//! `eventTime: null`, `reportingComponent: ""`), empty optional ones are not.
//!
//! Validation is kube's `ValidateEventCreate`/`ValidateEventUpdate`: the legacy rules
//! for every request, the strict ones for events.k8s.io, on the core form with core's
//! field names.

use super::{TimeKind, check_times, core_meta_errors, meta_update_errors, normalize_time};
use crate::engine::field::FieldError;
use crate::engine::representation::table::TableConvertor;
use crate::engine::resources::selector::field_at;
use crate::engine::resources::{FieldLookup, ResourceInfo, StorageConversion, Strategy};
use crate::engine::schema::names::{
    is_dns1123_subdomain, is_qualified_name, name_is_dns_subdomain, validate_path_segment_name,
};
use crate::engine::schema::object_meta::validate_object_meta;
use crate::engine::status::ApiError;
use serde_json::{Map, Value};

const REPORTING_INSTANCE_LIMIT: usize = 128;
const ACTION_LIMIT: usize = 128;
const REASON_LIMIT: usize = 128;
const NOTE_LIMIT: usize = 1024;

/// The fields of an `ObjectReference` (all strings, all `omitempty`).
const REFERENCE_FIELDS: [&str; 7] = ["kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"];
/// The fields of an `EventSource`.
const SOURCE_FIELDS: [&str; 2] = ["component", "host"];

/// Field selectors core v1 Events support (kube's `AddFieldLabelConversionsForEvent`).
const CORE_SELECTABLE: [&str; 13] = [
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
    "metadata.namespace",
    "metadata.name",
];
/// Field selectors events.k8s.io/v1 Events support.
const V1_SELECTABLE: [&str; 12] = [
    "reason",
    "regarding.kind",
    "regarding.namespace",
    "regarding.name",
    "regarding.uid",
    "regarding.apiVersion",
    "regarding.resourceVersion",
    "regarding.fieldPath",
    "reportingController",
    "type",
    "metadata.namespace",
    "metadata.name",
];

// ---- conversion -------------------------------------------------------------------

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

// ---- validation (on the core form) ------------------------------------------------

fn text<'a>(e: &'a Value, pointer: &str) -> &'a str {
    e.pointer(pointer).and_then(Value::as_str).unwrap_or_default()
}

/// Whether a time field holds a time (Go's zero time is `null` or absent).
fn is_set(e: &Value, pointer: &str) -> bool {
    e.pointer(pointer).and_then(Value::as_str).is_some_and(|s| !s.is_empty())
}

/// kube's `legacyValidateEvent`, which every Event passes, through either API.
fn legacy_errors(e: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let namespace = text(e, "/metadata/namespace");
    let involved = text(e, "/involvedObject/namespace");
    let mismatch = || FieldError::invalid("involvedObject.namespace", involved, "does not match event.namespace");
    if !is_set(e, "/eventTime") {
        // An old-style Event: its namespace and its object's agree (an object without a
        // namespace is reported in "default", or nowhere).
        let ok =
            if involved.is_empty() { namespace.is_empty() || namespace == "default" } else { involved == namespace };
        if !ok {
            errors.push(mismatch());
        }
    } else {
        if involved.is_empty() && namespace != "default" && namespace != "kube-system" {
            errors.push(mismatch());
        }
        let controller = text(e, "/reportingComponent");
        if controller.is_empty() {
            errors.push(FieldError::required("reportingController", ""));
        }
        for msg in is_qualified_name(controller) {
            errors.push(FieldError::invalid("reportingController", controller, msg));
        }
        let limited = |errors: &mut Vec<FieldError>, field: &str, pointer: &str, limit: usize, required: bool| {
            let value = text(e, pointer);
            if required && value.is_empty() {
                errors.push(FieldError::required(field, ""));
            }
            if value.len() > limit {
                errors.push(FieldError::invalid(field, "", format!("can have at most {limit} characters")));
            }
        };
        limited(&mut errors, "reportingInstance", "/reportingInstance", REPORTING_INSTANCE_LIMIT, true);
        limited(&mut errors, "action", "/action", ACTION_LIMIT, true);
        limited(&mut errors, "reason", "/reason", REASON_LIMIT, true);
        limited(&mut errors, "message", "/message", NOTE_LIMIT, false);
    }
    for msg in is_dns1123_subdomain(namespace) {
        errors.push(FieldError::invalid("namespace", namespace, msg));
    }
    errors
}

/// kube's `validateV1EventSeries`.
fn series_errors(e: &Value) -> Vec<FieldError> {
    let Some(series) = e.get("series").filter(|s| s.is_object()) else { return Vec::new() };
    let mut errors = Vec::new();
    if series.get("count").and_then(Value::as_i64).unwrap_or(0) < 2 {
        errors.push(FieldError::invalid("series.count", "", "should be at least 2"));
    }
    if !is_set(series, "/lastObservedTime") {
        errors.push(FieldError::required("series.lastObservedTime", ""));
    }
    errors
}

/// The strict rules of an Event created through events.k8s.io/v1.
fn strict_create_errors(e: &Value) -> Vec<FieldError> {
    let mut errors = core_meta_errors(e, name_is_dns_subdomain);
    errors.extend(series_errors(e));
    if !is_set(e, "/eventTime") {
        errors.push(FieldError::required("eventTime", ""));
    }
    let t = text(e, "/type");
    if t != "Normal" && t != "Warning" {
        errors.push(FieldError::invalid("type", "", format!("has invalid value: {t}")));
    }
    for field in ["firstTimestamp", "lastTimestamp"] {
        if is_set(e, &format!("/{field}")) {
            errors.push(FieldError::invalid(field, "", "needs to be unset"));
        }
    }
    if e.get("count").and_then(Value::as_i64).is_some_and(|c| c != 0) {
        errors.push(FieldError::invalid("count", "", "needs to be unset"));
    }
    if !text(e, "/source/component").is_empty() || !text(e, "/source/host").is_empty() {
        errors.push(FieldError::invalid("source", "", "needs to be unset"));
    }
    errors
}

/// The strict rules of an update through events.k8s.io/v1: a series may grow, nothing
/// else may change.
fn strict_update_errors(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if new.get("series") != old.get("series") {
        errors.extend(series_errors(new));
    }
    let fields = [
        ("involvedObject", "involvedObject"),
        ("reason", "reason"),
        ("message", "message"),
        ("source", "source"),
        ("firstTimestamp", "firstTimestamp"),
        ("lastTimestamp", "lastTimestamp"),
        ("count", "count"),
        ("reason", "reason"),
        ("type", "type"),
        ("eventTime", "eventTime"),
        ("action", "action"),
        ("related", "related"),
        ("reportingComponent", "reportingController"),
        ("reportingInstance", "reportingInstance"),
    ];
    for (field, path) in fields {
        let (n, o) = (new.get(field), old.get(field));
        if n != o {
            let shown = n.cloned().unwrap_or(Value::from(""));
            errors.push(FieldError::invalid(path, shown, "field is immutable"));
        }
    }
    errors
}

/// The value a field selector compares for a core Event (`source` falls back to the
/// reporting controller, as kube's `ToSelectableFields` does).
fn core_field(obj: &Value, path: &str) -> Option<String> {
    match path {
        "source" => {
            let component = text(obj, "/source/component");
            Some(if component.is_empty() { text(obj, "/reportingComponent") } else { component }.to_string())
        }
        _ => field_at(obj, path),
    }
}

fn time_pointers(core: bool) -> &'static [&'static str] {
    if core {
        &["/eventTime", "/firstTimestamp", "/lastTimestamp", "/series/lastObservedTime"]
    } else {
        &["/eventTime", "/deprecatedFirstTimestamp", "/deprecatedLastTimestamp", "/series/lastObservedTime"]
    }
}

// ---- strategies -------------------------------------------------------------------

/// core v1 Events: served as stored.
pub struct CoreEventStrategy {
    info: ResourceInfo,
}

impl Default for CoreEventStrategy {
    fn default() -> Self {
        CoreEventStrategy { info: super::info("", "events", "Event", &["ev"], true) }
    }
}

impl Strategy for CoreEventStrategy {
    fn info(&self) -> &ResourceInfo {
        &self.info
    }

    fn uses_generation(&self) -> bool {
        false
    }

    fn decode(&self, obj: &Value) -> Result<(), ApiError> {
        check_times(obj, "Event", "v1", time_pointers(true))
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        *obj = normalize_core(obj.take());
    }

    /// The legacy rules; only when they pass, the generic metadata rules (kube's
    /// `BeforeCreate` runs the strategy's validation first).
    fn validate_create(&self, obj: &Value) -> Vec<FieldError> {
        let errors = legacy_errors(obj);
        if !errors.is_empty() {
            return errors;
        }
        let empty = Value::Object(Map::new());
        validate_object_meta(
            obj.get("metadata").unwrap_or(&empty),
            true,
            validate_path_segment_name,
            &crate::engine::field::Path::root("metadata"),
        )
    }

    fn prepare_for_update(&self, new: &mut Value, _old: &Value) {
        *new = normalize_core(new.take());
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errors = meta_update_errors(new, old);
        errors.extend(legacy_errors(new));
        errors
    }

    fn selectable_fields(&self) -> Vec<String> {
        CORE_SELECTABLE.iter().map(|s| s.to_string()).collect()
    }

    fn field_lookup(&self) -> Option<FieldLookup> {
        Some(core_field)
    }

    fn table_convertor(&self) -> TableConvertor {
        super::printers::events()
    }
}

/// events.k8s.io/v1 Events: the same objects, converted.
pub struct EventsV1Strategy {
    info: ResourceInfo,
}

impl Default for EventsV1Strategy {
    fn default() -> Self {
        EventsV1Strategy { info: super::info("events.k8s.io", "events", "Event", &["ev"], true) }
    }
}

impl Strategy for EventsV1Strategy {
    fn info(&self) -> &ResourceInfo {
        &self.info
    }

    fn uses_generation(&self) -> bool {
        false
    }

    fn decode(&self, obj: &Value) -> Result<(), ApiError> {
        check_times(obj, "Event", "events.k8s.io/v1", time_pointers(false))
    }

    fn storage_conversion(&self) -> Option<StorageConversion> {
        Some(StorageConversion { to_storage: events_to_core, from_storage: core_to_events })
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        *obj = core_to_events(events_to_core(obj.take()));
    }

    fn validate_create(&self, obj: &Value) -> Vec<FieldError> {
        let core = events_to_core(obj.clone());
        let mut errors = legacy_errors(&core);
        errors.extend(strict_create_errors(&core));
        errors
    }

    fn prepare_for_update(&self, new: &mut Value, _old: &Value) {
        *new = core_to_events(events_to_core(new.take()));
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let (new, old) = (events_to_core(new.clone()), events_to_core(old.clone()));
        let mut errors = meta_update_errors(&new, &old);
        errors.extend(legacy_errors(&new));
        errors.extend(strict_update_errors(&new, &old));
        errors
    }

    fn selectable_fields(&self) -> Vec<String> {
        V1_SELECTABLE.iter().map(|s| s.to_string()).collect()
    }

    fn table_convertor(&self) -> TableConvertor {
        super::printers::events()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn shown(errors: Vec<FieldError>) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
    }

    fn v1_event() -> Value {
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

    #[test]
    fn an_event_without_an_involved_object_outside_default_is_invalid() {
        let s = CoreEventStrategy::default();
        let mut e = json!({"metadata": {"name": "e", "namespace": "team"}, "reason": "X"});
        s.prepare_for_create(&mut e);
        assert_eq!(
            shown(s.validate_create(&e)),
            ["involvedObject.namespace: Invalid value: \"\": does not match event.namespace"]
        );
        let mut ok = json!({"metadata": {"name": "e", "namespace": "default"}});
        s.prepare_for_create(&mut ok);
        assert!(s.validate_create(&ok).is_empty());
    }

    #[test]
    fn events_k8s_io_is_strict() {
        let s = EventsV1Strategy::default();
        assert!(s.validate_create(&v1_event()).is_empty());
        let mut bad = v1_event();
        let m = bad.as_object_mut().expect("object");
        m.remove("action");
        m.insert("type".into(), json!("Odd"));
        m.insert("deprecatedCount".into(), json!(2));
        m.insert("series".into(), json!({"count": 1}));
        assert_eq!(
            shown(s.validate_create(&bad)),
            [
                "action: Required value",
                "series.count: Invalid value: \"\": should be at least 2",
                "series.lastObservedTime: Required value",
                "type: Invalid value: \"\": has invalid value: Odd",
                "count: Invalid value: \"\": needs to be unset",
            ]
        );
    }

    #[test]
    fn an_events_k8s_io_update_may_grow_the_series_only() {
        let s = EventsV1Strategy::default();
        let old = v1_event();
        let mut new = v1_event();
        new["series"] = json!({"count": 2, "lastObservedTime": "2024-05-01T10:01:00.000000Z"});
        assert!(s.validate_update(&new, &old).is_empty());
        new["note"] = json!("changed");
        assert_eq!(shown(s.validate_update(&new, &old)), ["message: Invalid value: \"changed\": field is immutable"]);
    }

    #[test]
    fn core_field_selectors_read_source_like_kube() {
        let e = json!({"source": {}, "reportingComponent": "ctl", "involvedObject": {"name": "w1"}});
        assert_eq!(core_field(&e, "source").as_deref(), Some("ctl"));
        assert_eq!(core_field(&e, "involvedObject.name").as_deref(), Some("w1"));
    }
}
