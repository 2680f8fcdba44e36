//! The Events the collector records, as kube's event recorder writes them (core/v1, from
//! the component `garbage-collector-controller`).

use super::decide::OwnerRef;
use crate::meta;
use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

/// The component kube's collector records its Events as.
const COMPONENT: &str = "garbage-collector-controller";

/// kube's `OwnerRefInvalidNamespace` Warning on `dependent`, whose reference `owner` names
/// an object that lives in another namespace; made at `now`.
pub(super) fn invalid_namespace(dependent: &Value, owner: &OwnerRef, now: Timestamp) -> Value {
    let namespace = meta::namespace(dependent).unwrap_or_default();
    // The collector's objectReference as Go's `String()` prints it: the dependent's
    // namespace, where the owner was looked for.
    let reference = format!(
        "[{}/{}, namespace: {namespace}, name: {}, uid: {}]",
        owner.api_version, owner.kind, owner.name, owner.uid
    );
    let message = format!("ownerRef {reference} does not exist in namespace {}", crate::field::go_quote(namespace));
    let text = |pointer: &str| dependent.pointer(pointer).and_then(Value::as_str).unwrap_or_default();
    let involved = json!({
        "kind": text("/kind"),
        "apiVersion": text("/apiVersion"),
        "namespace": namespace,
        "name": text("/metadata/name"),
        "uid": text("/metadata/uid"),
    });
    record(involved, "Warning", "OwnerRefInvalidNamespace", &message, now)
}

/// A core/v1 Event as client-go's recorder makes it: named after the object and the time
/// in nanoseconds (a uuid when that is no DNS subdomain), in the object's namespace or
/// `default` for a cluster-scoped one.
fn record(mut involved: Value, type_: &str, reason: &str, message: &str, now: Timestamp) -> Value {
    let name = involved["name"].as_str().unwrap_or_default();
    let mut event_name = format!("{name}.{:x}", now.as_nanosecond());
    if !crate::schema::names::name_is_dns_subdomain(&event_name, false).is_empty() {
        event_name = meta::new_uid();
    }
    let namespace = match involved["namespace"].as_str() {
        Some(ns) if !ns.is_empty() => ns.to_string(),
        _ => "default".to_string(),
    };
    if let Some(map) = involved.as_object_mut() {
        // Go's omitempty: a cluster-scoped object's reference has no namespace.
        map.retain(|_, v| v.as_str() != Some(""));
    }
    let time = meta::format_time(now);
    json!({
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": event_name, "namespace": namespace},
        "involvedObject": involved,
        "reason": reason,
        "message": message,
        "source": {"component": COMPONENT},
        "firstTimestamp": time,
        "lastTimestamp": time,
        "count": 1,
        "type": type_,
        "reportingComponent": COMPONENT,
        "reportingInstance": "",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reference_to_another_namespace_s_owner_is_warned_of_as_kube_s_collector_words_it() {
        let dependent =
            json!({"apiVersion": "g/v1", "kind": "Part", "metadata": {"name": "p", "namespace": "b", "uid": "d-1"}});
        let owner = OwnerRef { api_version: "g/v1".into(), kind: "Widget".into(), name: "w".into(), uid: "o-1".into() };
        let now: Timestamp = "2026-11-29T05:40:00.5Z".parse().expect("time");
        let event = invalid_namespace(&dependent, &owner, now);
        assert_eq!(event["metadata"], json!({"name": format!("p.{:x}", now.as_nanosecond()), "namespace": "b"}));
        assert_eq!(
            event["message"],
            "ownerRef [g/v1/Widget, namespace: b, name: w, uid: o-1] does not exist in namespace \"b\""
        );
        assert_eq!(
            event["involvedObject"],
            json!({"kind": "Part", "apiVersion": "g/v1", "namespace": "b", "name": "p", "uid": "d-1"})
        );
        assert_eq!(
            (event["type"].as_str(), event["reason"].as_str()),
            (Some("Warning"), Some("OwnerRefInvalidNamespace"))
        );
        assert_eq!(event["firstTimestamp"], "2026-11-29T05:40:00Z");
        assert_eq!(event["source"], json!({"component": "garbage-collector-controller"}));
    }
}
