//! Events: one storage (kube keeps both APIs under /registry/events), two views.
//!
//! Objects are stored as core v1 Events. The core API serves them as stored; the
//! events.k8s.io/v1 API converts on the way in and out ([`super::event_conversion`]).
//!
//! Validation is kube's `ValidateEventCreate`/`ValidateEventUpdate`: the legacy rules
//! for every request, the strict ones for events.k8s.io, on the core form with core's
//! field names. Field selectors are each API's own (kube's field label conversions).

use super::event_conversion::{core_to_events, events_to_core, normalize_core};
use super::types::{self, GoStruct};
use super::{core_meta_errors, core_meta_update_errors};
use crate::field::FieldError;
use crate::representation::table::TableConvertor;
use crate::resources::managed_fields::schema::Schema;
use crate::resources::rest::{self, DeleteOptions};
use crate::resources::selector::field_at;
use crate::resources::{FieldLookup, ResourceInfo, StorageConversion, Strategy, Undecodable};
use crate::schema::gofmt::go_time_string;
use crate::schema::names::{
    is_dns1123_subdomain, is_qualified_name, name_is_dns_subdomain, validate_path_segment_name,
};
use crate::schema::object_meta::validate_object_meta;
use crate::status::ApiError;
use serde_json::{Map, Value};
use std::sync::{Arc, LazyLock};

const REPORTING_INSTANCE_LIMIT: usize = 128;
const ACTION_LIMIT: usize = 128;
const REASON_LIMIT: usize = 128;
const NOTE_LIMIT: usize = 1024;

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

// ---- validation (on the core form) ------------------------------------------------

fn text<'a>(e: &'a Value, pointer: &str) -> &'a str {
    e.pointer(pointer).and_then(Value::as_str).unwrap_or_default()
}

/// Whether a time field holds a time (Go's zero time is `null` or absent).
fn is_set(e: &Value, pointer: &str) -> bool {
    e.pointer(pointer).and_then(Value::as_str).is_some_and(|s| !s.is_empty())
}

/// The field kube's `legacyValidateEvent` names the reporting controller by: the core
/// API's own name for it, or events.k8s.io's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Api {
    Core,
    EventsV1,
}

impl Api {
    fn reporting_controller(self) -> &'static str {
        match self {
            Api::Core => "reportingComponent",
            Api::EventsV1 => "reportingController",
        }
    }
}

/// kube's `legacyValidateEvent`, which every Event passes, through either API.
fn legacy_errors(e: &Value, api: Api) -> Vec<FieldError> {
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
            errors.push(FieldError::required(api.reporting_controller(), ""));
        }
        for msg in is_qualified_name(controller) {
            errors.push(FieldError::invalid(api.reporting_controller(), controller, msg));
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
            errors.push(match field {
                // kube quotes its internal structs as Go's `%#v` prints them.
                "involvedObject" => {
                    FieldError::invalid_shown(path, &go_struct(n, &types::OBJECT_REFERENCE), "field is immutable")
                }
                "source" => FieldError::invalid_shown(path, &go_struct(n, &types::EVENT_SOURCE), "field is immutable"),
                // A time is a Stringer to kube's field errors: Go's `time.Time.String()`.
                "firstTimestamp" | "lastTimestamp" | "eventTime" => {
                    FieldError::invalid_shown(path, &go_time_string(n), "field is immutable")
                }
                _ => FieldError::invalid(path, n.cloned().unwrap_or(Value::from("")), "field is immutable"),
            });
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

// ---- strategies -------------------------------------------------------------------

static CORE_TYPES: LazyLock<Arc<Schema>> = LazyLock::new(|| Arc::new(types::CORE_EVENT.schema()));
static V1_TYPES: LazyLock<Arc<Schema>> = LazyLock::new(|| Arc::new(types::EVENTS_V1_EVENT.schema()));

/// What both Event APIs decode alike: the body judged by the API's Go struct (values of
/// the wrong type refused, then times), and unknown fields dropped.
fn decode_event(go: &'static GoStruct, obj: &Value) -> Result<(), Undecodable> {
    go.decode_error(obj).map_or(Ok(()), |why| Err(Undecodable(why)))
}

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
    /// kube's event strategy has no garbage collection (`rest.Unsupported`): a delete
    /// leaves neither `orphan` nor `foregroundDeletion`, whatever its options ask.
    fn deletion_finalizers(&self, obj: &Value, _delete: &DeleteOptions) -> Option<Vec<String>> {
        rest::deletion_finalizers(&crate::meta::finalizers(obj), Some(rest::Propagation::Background))
    }

    fn info(&self) -> &ResourceInfo {
        &self.info
    }

    fn kube_storage_prefix(&self) -> String {
        super::super::builtin_storage_prefix(&self.info)
    }

    fn uses_generation(&self) -> bool {
        false
    }

    /// kube's event strategy creates a missing event on update.
    fn allows_create_on_update(&self) -> bool {
        true
    }

    fn check_type_meta(&self, obj: &Value) -> Result<(), ApiError> {
        super::scheme::check_type_meta(obj, &self.info)
    }

    fn decode(&self, obj: &Value) -> Result<(), Undecodable> {
        decode_event(&types::CORE_EVENT, obj)
    }

    fn prune_and_default(&self, obj: &mut Value) -> Vec<String> {
        types::CORE_EVENT.prune(obj)
    }

    fn go_struct(&self) -> Option<&'static GoStruct> {
        Some(&types::CORE_EVENT)
    }

    /// With the fields Go always writes (times without `omitempty` are `null`), as kube's
    /// converter gives the zero Event: `before-first-apply` does not own them.
    fn zero_object(&self) -> Value {
        let zero = types::CORE_EVENT.zero_object(&self.info.api_version(), &self.info.kind);
        with_always_written(
            zero,
            &["eventTime", "firstTimestamp", "lastTimestamp"],
            &["reportingComponent", "reportingInstance"],
        )
    }

    fn field_types(&self) -> Option<Arc<Schema>> {
        Some(Arc::clone(&CORE_TYPES))
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        *obj = normalize_core(obj.take());
    }

    /// The legacy rules; only when they pass, the generic metadata rules (kube's
    /// `BeforeCreate` runs the strategy's validation first).
    fn validate_create(&self, obj: &Value) -> Vec<FieldError> {
        let errors = legacy_errors(obj, Api::Core);
        if !errors.is_empty() {
            return errors;
        }
        let empty = Value::Object(Map::new());
        validate_object_meta(
            obj.get("metadata").unwrap_or(&empty),
            true,
            validate_path_segment_name,
            &crate::field::Path::root("metadata"),
        )
    }

    fn prepare_for_update(&self, new: &mut Value, _old: &Value) {
        *new = normalize_core(new.take());
    }

    /// The legacy rules alone: kube's `ValidateEventUpdate` checks nothing more for the core
    /// API (its metadata update is the generic store's check, made once).
    fn validate_update(&self, new: &Value, _old: &Value) -> Vec<FieldError> {
        legacy_errors(new, Api::Core)
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
    /// kube's event strategy has no garbage collection (`rest.Unsupported`): a delete
    /// leaves neither `orphan` nor `foregroundDeletion`, whatever its options ask.
    fn deletion_finalizers(&self, obj: &Value, _delete: &DeleteOptions) -> Option<Vec<String>> {
        rest::deletion_finalizers(&crate::meta::finalizers(obj), Some(rest::Propagation::Background))
    }

    fn info(&self) -> &ResourceInfo {
        &self.info
    }

    fn kube_storage_prefix(&self) -> String {
        super::super::builtin_storage_prefix(&self.info)
    }

    fn uses_generation(&self) -> bool {
        false
    }

    /// kube's event strategy creates a missing event on update.
    fn allows_create_on_update(&self) -> bool {
        true
    }

    fn check_type_meta(&self, obj: &Value) -> Result<(), ApiError> {
        super::scheme::check_type_meta(obj, &self.info)
    }

    fn decode(&self, obj: &Value) -> Result<(), Undecodable> {
        decode_event(&types::EVENTS_V1_EVENT, obj)
    }

    /// Validated as the internal `core.Event`: `Event "name" is invalid`.
    fn invalid_group(&self) -> &str {
        ""
    }

    fn prune_and_default(&self, obj: &mut Value) -> Vec<String> {
        types::EVENTS_V1_EVENT.prune(obj)
    }

    fn go_struct(&self) -> Option<&'static GoStruct> {
        Some(&types::EVENTS_V1_EVENT)
    }

    /// See the core Event's.
    fn zero_object(&self) -> Value {
        let zero = types::EVENTS_V1_EVENT.zero_object(&self.info.api_version(), &self.info.kind);
        with_always_written(zero, &["eventTime", "deprecatedFirstTimestamp", "deprecatedLastTimestamp"], &[])
    }

    fn field_types(&self) -> Option<Arc<Schema>> {
        Some(Arc::clone(&V1_TYPES))
    }

    fn storage_conversion(&self) -> Option<StorageConversion> {
        Some(StorageConversion { to_storage: events_to_core, from_storage: core_to_events })
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        *obj = core_to_events(events_to_core(obj.take()));
    }

    fn validate_create(&self, obj: &Value) -> Vec<FieldError> {
        let core = events_to_core(obj.clone());
        let mut errors = legacy_errors(&core, Api::EventsV1);
        errors.extend(strict_create_errors(&core));
        errors
    }

    fn prepare_for_update(&self, new: &mut Value, _old: &Value) {
        *new = core_to_events(events_to_core(new.take()));
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let (new, old) = (events_to_core(new.clone()), events_to_core(old.clone()));
        let mut errors = core_meta_update_errors(&new, &old);
        errors.extend(legacy_errors(&new, Api::EventsV1));
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

/// A struct of string fields as Go's `%#v` prints kube's internal type for it
/// (`core.EventSource{Component:"x", Host:""}`), its fields in `go_type`'s order.
fn go_struct(value: Option<&Value>, go_type: &GoStruct) -> String {
    let fields: Vec<String> = go_type
        .fields
        .iter()
        .map(|field| {
            let text = value.and_then(|v| v.get(field.json)).and_then(Value::as_str).unwrap_or_default();
            format!("{}:{}", go_field_name(field.json), crate::field::go_quote(text))
        })
        .collect();
    let name = go_type.name.rsplit('.').next().unwrap_or(go_type.name);
    format!("core.{name}{{{}}}", fields.join(", "))
}

/// The Go name of a JSON field: capitalized, with Go's initialisms.
fn go_field_name(json: &str) -> String {
    match json {
        "uid" => "UID".into(),
        "apiVersion" => "APIVersion".into(),
        other => {
            let mut chars = other.chars();
            chars.next().map(|first| first.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
        }
    }
}

/// `zero` with the zero values an Event's encoder writes: `null` times and empty strings.
fn with_always_written(mut zero: Value, times: &[&str], strings: &[&str]) -> Value {
    if let Some(map) = zero.as_object_mut() {
        map.extend(times.iter().map(|t| (t.to_string(), Value::Null)));
        map.extend(strings.iter().map(|s| (s.to_string(), Value::from(""))));
    }
    zero
}

#[cfg(test)]
mod tests {
    use super::super::event_conversion::tests::v1_event;
    use super::*;
    use serde_json::json;

    fn shown(errors: Vec<FieldError>) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
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
        let mut moved = old.clone();
        moved["regarding"] = json!({"kind": "Pod", "name": "p"});
        assert_eq!(
            shown(s.validate_update(&moved, &old)),
            [
                "involvedObject.namespace: Invalid value: \"\": does not match event.namespace",
                "involvedObject: Invalid value: core.ObjectReference{Kind:\"Pod\", Namespace:\"\", Name:\"p\", UID:\"\", APIVersion:\"\", ResourceVersion:\"\", FieldPath:\"\"}: field is immutable"
            ]
        );
    }

    #[test]
    fn each_api_names_the_reporting_controller_its_own_way() {
        let e = json!({"metadata": {"name": "e", "namespace": "default"}, "eventTime": "2024-05-01T10:00:00.000000Z",
                       "reportingInstance": "i", "action": "a", "reason": "r"});
        let fields = |api| legacy_errors(&e, api).into_iter().map(|e| e.field).collect::<Vec<_>>();
        assert!(fields(Api::Core).iter().all(|f| f == "reportingComponent"), "{:?}", fields(Api::Core));
        assert!(fields(Api::EventsV1).iter().all(|f| f == "reportingController"), "{:?}", fields(Api::EventsV1));
        assert_eq!(fields(Api::Core).len(), 3, "required, then the qualified-name problems");
    }

    #[test]
    fn core_field_selectors_read_source_like_kube() {
        let e = json!({"source": {}, "reportingComponent": "ctl", "involvedObject": {"name": "w1"}});
        assert_eq!(core_field(&e, "source").as_deref(), Some("ctl"));
        assert_eq!(core_field(&e, "involvedObject.name").as_deref(), Some("w1"));
    }

    /// The oracle's words for a changed eventTime (a MicroTime, printed by its String()).
    #[test]
    fn times_are_shown_as_go_prints_them() {
        assert_eq!(go_time_string(Some(&json!("2026-01-01T00:00:00.000000Z"))), "2026-01-01 00:00:00 +0000 UTC");
        assert_eq!(go_time_string(Some(&json!("2026-01-01T00:00:00.120000Z"))), "2026-01-01 00:00:00.12 +0000 UTC");
        assert_eq!(go_time_string(None), "0001-01-01 00:00:00 +0000 UTC");
    }
}
