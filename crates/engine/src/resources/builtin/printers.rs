//! The Table columns of the built-in kinds, as kube's `pkg/printers/internalversion`
//! prints them server-side (wide columns included: kubectl hides priority 1 unless
//! `-o wide`). Column descriptions are the types' own documentation, read from the
//! built-in OpenAPI definitions as kube reads them from its SwaggerDocs.

use super::event_conversion::as_core;
use crate::openapi::definitions;
use crate::representation::table::{
    CREATION_TIMESTAMP_DESCRIPTION, Cell, ColumnDefinition, NAME_DESCRIPTION, PrintCell, TableConvertor, human_age,
    parse_time,
};
use k8s_openapi::jiff::Timestamp;
use serde_json::Value;

/// The documentation of `field` in the definition `definition`.
fn doc(definition: &str, field: &str) -> String {
    definitions::builtin()
        .get(definition)
        .and_then(|d| d.pointer(&format!("/properties/{field}/description")))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn name_column() -> (ColumnDefinition, PrintCell) {
    (ColumnDefinition::new("Name", "string", "name", NAME_DESCRIPTION), name)
}

fn age_column() -> (ColumnDefinition, PrintCell) {
    (ColumnDefinition::new("Age", "string", "", CREATION_TIMESTAMP_DESCRIPTION), age)
}

fn text<'a>(obj: &'a Value, pointer: &str) -> &'a str {
    obj.pointer(pointer).and_then(Value::as_str).unwrap_or_default()
}

/// The number of entries of a map or list.
fn count(obj: &Value, field: &str) -> i64 {
    match obj.get(field) {
        Some(Value::Object(m)) => m.len() as i64,
        Some(Value::Array(a)) => a.len() as i64,
        _ => 0,
    }
}

fn name(obj: &Value, _now: Timestamp) -> Cell {
    Cell::Str(text(obj, "/metadata/name").to_string())
}

/// `translateTimestampSince`: `<unknown>` for the zero time, else a human age.
fn since(value: Option<&Value>, now: Timestamp) -> String {
    match value.and_then(Value::as_str).filter(|s| !s.is_empty()) {
        Some(t) => match parse_time(t) {
            Some(t) if !crate::schema::go_time::is_zero(t) => human_age(t, now),
            _ => "<unknown>".into(),
        },
        None => "<unknown>".into(),
    }
}

fn age(obj: &Value, now: Timestamp) -> Cell {
    Cell::Str(since(obj.pointer("/metadata/creationTimestamp"), now))
}

/// ConfigMaps: `NAME DATA AGE` (data counts `data` and `binaryData`).
pub fn config_maps() -> TableConvertor {
    TableConvertor::printer(vec![
        name_column(),
        (ColumnDefinition::new("Data", "string", "", &doc("io.k8s.api.core.v1.ConfigMap", "data")), |o, _| {
            Cell::Int(count(o, "data") + count(o, "binaryData"))
        }),
        age_column(),
    ])
}

/// Secrets: `NAME TYPE DATA AGE`.
pub fn secrets() -> TableConvertor {
    const SECRET: &str = "io.k8s.api.core.v1.Secret";
    TableConvertor::printer(vec![
        name_column(),
        (ColumnDefinition::new("Type", "string", "", &doc(SECRET, "type")), |o, _| Cell::Str(text(o, "/type").into())),
        (ColumnDefinition::new("Data", "string", "", &doc(SECRET, "data")), |o, _| Cell::Int(count(o, "data"))),
        age_column(),
    ])
}

/// ServiceAccounts: `NAME SECRETS AGE`.
pub fn service_accounts() -> TableConvertor {
    TableConvertor::printer(vec![
        name_column(),
        (
            ColumnDefinition::new("Secrets", "string", "", &doc("io.k8s.api.core.v1.ServiceAccount", "secrets")),
            |o, _| Cell::Int(count(o, "secrets")),
        ),
        age_column(),
    ])
}

/// Leases: `NAME HOLDER AGE`.
pub fn leases() -> TableConvertor {
    TableConvertor::printer(vec![
        name_column(),
        (
            ColumnDefinition::new(
                "Holder",
                "string",
                "",
                &doc("io.k8s.api.coordination.v1.LeaseSpec", "holderIdentity"),
            ),
            |o, _| Cell::Str(text(o, "/spec/holderIdentity").into()),
        ),
        age_column(),
    ])
}

/// Validating and mutating webhook configurations: `NAME WEBHOOKS AGE` (the column's
/// description is the printer's own, not a field's).
pub fn webhook_configurations() -> TableConvertor {
    const WEBHOOKS: &str = "Webhooks indicates the number of webhooks registered in this configuration";
    TableConvertor::printer(vec![
        name_column(),
        (ColumnDefinition::new("Webhooks", "integer", "", WEBHOOKS), |o, _| Cell::Int(count(o, "webhooks"))),
        age_column(),
    ])
}

/// The cells `printEvent` computes, from an Event in either form.
struct EventRow {
    last_seen: String,
    first_seen: String,
    count: i64,
    target: String,
}

impl EventRow {
    fn of(e: &Value, now: Timestamp) -> EventRow {
        let first_set = e.get("firstTimestamp").is_some_and(|t| t.as_str().is_some_and(|s| !s.is_empty()));
        let first_seen = if first_set { since(e.get("firstTimestamp"), now) } else { since(e.get("eventTime"), now) };
        let last_set = e.get("lastTimestamp").is_some_and(|t| t.as_str().is_some_and(|s| !s.is_empty()));
        let mut last_seen = if last_set { since(e.get("lastTimestamp"), now) } else { first_seen.clone() };
        let mut count = e.get("count").and_then(Value::as_i64).unwrap_or(0);
        match e.get("series").filter(|s| s.is_object()) {
            Some(series) => {
                last_seen = since(series.get("lastObservedTime"), now);
                count = series.get("count").and_then(Value::as_i64).unwrap_or(0);
            }
            // Singleton events don't have a count set in the new API.
            None if count == 0 => count = 1,
            None => {}
        }
        let (kind, name) = (text(e, "/involvedObject/kind").to_lowercase(), text(e, "/involvedObject/name"));
        let target = if name.is_empty() { kind } else { format!("{kind}/{name}") };
        EventRow { last_seen, first_seen, count, target }
    }
}

/// `formatEventSource`: the component (or reporting controller), then the host (or
/// reporting instance) after a comma.
fn event_source(e: &Value) -> String {
    let first = |a: &str, b: &str| {
        let preferred = text(e, a);
        if preferred.is_empty() { text(e, b) } else { preferred }.to_string()
    };
    let component = first("/source/component", "/reportingComponent");
    let instance = first("/source/host", "/reportingInstance");
    if instance.is_empty() { component } else { format!("{component}, {instance}") }
}

/// Events, through either API: `LAST SEEN TYPE REASON OBJECT MESSAGE`, and in `-o wide`
/// `SUBOBJECT SOURCE FIRST SEEN COUNT NAME`.
pub fn events() -> TableConvertor {
    const EVENT: &str = "io.k8s.api.core.v1.Event";
    let col = |name: &str, field: &str| ColumnDefinition::new(name, "string", "", &doc(EVENT, field));
    TableConvertor::printer(vec![
        (col("Last Seen", "lastTimestamp"), |o, now| Cell::Str(EventRow::of(&as_core(o), now).last_seen)),
        (col("Type", "type"), |o, _| Cell::Str(text(&as_core(o), "/type").into())),
        (col("Reason", "reason"), |o, _| Cell::Str(text(&as_core(o), "/reason").into())),
        (col("Object", "involvedObject"), |o, now| Cell::Str(EventRow::of(&as_core(o), now).target)),
        (
            ColumnDefinition::new("Subobject", "string", "", &doc("io.k8s.api.core.v1.ObjectReference", "fieldPath"))
                .with_priority(1),
            |o, _| Cell::Str(text(&as_core(o), "/involvedObject/fieldPath").into()),
        ),
        (col("Source", "source").with_priority(1), |o, _| Cell::Str(event_source(&as_core(o)))),
        (col("Message", "message"), |o, _| Cell::Str(text(&as_core(o), "/message").trim().into())),
        (col("First Seen", "firstTimestamp").with_priority(1), |o, now| {
            Cell::Str(EventRow::of(&as_core(o), now).first_seen)
        }),
        (col("Count", "count").with_priority(1), |o, now| Cell::Int(EventRow::of(&as_core(o), now).count)),
        (ColumnDefinition::new("Name", "string", "name", NAME_DESCRIPTION).with_priority(1), name),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn now() -> Timestamp {
        "2024-05-01T10:05:00Z".parse().expect("time")
    }

    fn row(t: &TableConvertor, obj: Value) -> Vec<Cell> {
        t.cells(&serde_json::to_vec(&obj).expect("json"), now())
    }

    fn s(v: &str) -> Cell {
        Cell::Str(v.into())
    }

    #[test]
    fn event_rows_are_kubes_in_both_forms() {
        let core = json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "w1.1"},
            "involvedObject": {"kind": "Widget", "name": "w1"}, "reason": "Synced", "message": " done \n",
            "type": "Normal", "source": {"component": "ctl"}, "firstTimestamp": "2024-05-01T10:00:00Z",
            "lastTimestamp": "2024-05-01T10:04:00Z", "count": 3});
        assert_eq!(
            row(&events(), core),
            [
                s("60s"),
                s("Normal"),
                s("Synced"),
                s("widget/w1"),
                s(""),
                s("ctl"),
                s("done"),
                s("5m"),
                Cell::Int(3),
                s("w1.1")
            ]
        );
        let v1 = json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "w1.2"},
            "regarding": {"kind": "Widget", "name": "w1"}, "reason": "Synced", "note": "ok", "type": "Warning",
            "eventTime": "2024-05-01T10:03:00.000000Z", "reportingController": "ctl", "reportingInstance": "ctl-0",
            "series": {"count": 4, "lastObservedTime": "2024-05-01T10:04:30.000000Z"}});
        assert_eq!(
            row(&events(), v1),
            [
                s("30s"),
                s("Warning"),
                s("Synced"),
                s("widget/w1"),
                s(""),
                s("ctl, ctl-0"),
                s("ok"),
                s("2m"),
                Cell::Int(4),
                s("w1.2")
            ]
        );
        let defs = events();
        let names: Vec<&str> = defs.definitions().iter().map(|d| d.name.as_str()).collect();
        assert_eq!(
            names,
            ["Last Seen", "Type", "Reason", "Object", "Subobject", "Source", "Message", "First Seen", "Count", "Name"]
        );
        assert_eq!(
            defs.definitions()[0].description,
            "The time at which the most recent occurrence of this event was recorded."
        );
    }

    #[test]
    fn data_kinds_count_their_entries() {
        let cm = json!({"metadata": {"name": "c", "creationTimestamp": "2024-05-01T10:00:00Z"}, "data": {"a": "1"}, "binaryData": {"b": "eA=="}});
        assert_eq!(row(&config_maps(), cm), [s("c"), Cell::Int(2), s("5m")]);
        let secret = json!({"metadata": {"name": "s"}, "type": "Opaque", "data": {"a": "eA=="}});
        assert_eq!(row(&secrets(), secret), [s("s"), s("Opaque"), Cell::Int(1), s("<unknown>")]);
        assert_eq!(
            row(&service_accounts(), json!({"metadata": {"name": "sa"}})),
            [s("sa"), Cell::Int(0), s("<unknown>")]
        );
        assert_eq!(
            row(&leases(), json!({"metadata": {"name": "l"}, "spec": {"holderIdentity": "me"}})),
            [s("l"), s("me"), s("<unknown>")]
        );
    }
}
