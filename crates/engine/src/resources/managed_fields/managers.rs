//! `metadata.managedFields` read into per-manager field sets and written back.
//!
//! Each entry is identified as kube identifies it: manager, operation, subresource and,
//! for `Update` entries only, the apiVersion (an applier keeps one entry whatever version
//! it applies through). Entries are written sorted as kube sorts them: `Apply` before
//! `Update`, then oldest first, then by manager and apiVersion.

use super::set::Set;
use crate::meta;
use k8s_openapi::jiff::Timestamp;
use serde_json::{Map, Value};
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// The operation of entries written by server-side apply.
pub const APPLY: &str = "Apply";
/// The operation of entries written by every other write.
pub const UPDATE: &str = "Update";

/// Who owns a set of fields. Built through its constructors, which compute the
/// identifier once: managers are map keys, compared many times per write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManagerId {
    pub manager: String,
    pub operation: String,
    /// Only `Update` entries are told apart by version.
    pub api_version: Option<String>,
    pub subresource: Option<String>,
    identifier: String,
}

impl ManagerId {
    /// The identity of an update by `manager` through `api_version`.
    pub fn update(manager: &str, api_version: &str, subresource: Option<&str>) -> Self {
        ManagerId::new(manager, UPDATE, Some(api_version), subresource)
    }

    /// The identity of an applier, whatever version it applies through.
    pub fn apply(manager: &str, subresource: Option<&str>) -> Self {
        ManagerId::new(manager, APPLY, None, subresource)
    }

    /// A private identity for one step of a computation, never written out.
    pub fn internal(name: &str) -> Self {
        ManagerId::new(name, "", None, None)
    }

    fn new(manager: &str, operation: &str, api_version: Option<&str>, subresource: Option<&str>) -> Self {
        // Built on every write: appended in place rather than formatted piece by piece.
        let mut identifier = String::with_capacity(96);
        identifier.push('{');
        let parts = [
            ("manager", manager),
            ("operation", operation),
            ("apiVersion", api_version.unwrap_or("")),
            ("subresource", subresource.unwrap_or("")),
        ];
        for (key, value) in parts.into_iter().filter(|(_, v)| !v.is_empty()) {
            if identifier.len() > 1 {
                identifier.push(',');
            }
            identifier.push('"');
            identifier.push_str(key);
            identifier.push_str("\":");
            identifier.push_str(&super::path::go_json_str(value));
        }
        identifier.push('}');
        ManagerId {
            manager: manager.to_string(),
            operation: operation.to_string(),
            api_version: api_version.map(String::from),
            subresource: subresource.map(String::from),
            identifier,
        }
    }

    /// kube's manager identifier: the entry as JSON without its fields, time and (for
    /// appliers) apiVersion. Conflicts and the update cap sort managers by it.
    pub fn identifier(&self) -> &str {
        &self.identifier
    }

    /// The manager as conflict messages name it: `"kubectl" using v1` for updaters,
    /// `"kubectl"` for appliers, with the subresource when there is one.
    pub fn describe(&self) -> String {
        let mut out = crate::field::go_quote(&self.manager);
        if let Some(sub) = self.subresource.as_deref().filter(|s| !s.is_empty()) {
            out = format!("{out} with subresource {}", crate::field::go_quote(sub));
        }
        if self.operation == UPDATE {
            out = format!("{out} using {}", self.api_version.as_deref().unwrap_or(""));
        }
        out
    }
}

impl Ord for ManagerId {
    fn cmp(&self, other: &Self) -> Ordering {
        self.identifier.cmp(&other.identifier)
    }
}

impl PartialOrd for ManagerId {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The fields one manager owns, at the apiVersion it wrote them through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionedSet {
    pub set: Set,
    pub api_version: String,
    pub applied: bool,
}

/// Every manager's fields, and when each last changed something.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Managed {
    pub fields: BTreeMap<ManagerId, VersionedSet>,
    pub times: BTreeMap<ManagerId, String>,
}

/// What a write says about `metadata.managedFields`.
#[derive(Debug, Clone, PartialEq)]
pub enum Given {
    /// Absent, or not something kube can read: the live object's entries are kept.
    Unreadable,
    /// `[]` or `[{}]`: the client resets the entries.
    Reset,
    /// Entries to use instead of the live object's.
    Entries(Managed),
}

/// What `obj` carries in `metadata.managedFields`.
pub fn given(obj: &Value) -> Given {
    let Some(list) = obj.get("metadata").and_then(|m| m.get("managedFields")).and_then(Value::as_array) else {
        return Given::Unreadable;
    };
    if list.is_empty() || (list.len() == 1 && is_zero_entry(&list[0])) {
        return Given::Reset;
    }
    match decode(list) {
        Ok(m) if !m.fields.is_empty() => Given::Entries(m),
        _ => Given::Unreadable,
    }
}

/// The live object's entries; nothing when they cannot be read.
pub fn live(obj: &Value) -> Managed {
    match given(obj) {
        Given::Entries(m) => m,
        _ => Managed::default(),
    }
}

/// Whether kube's accessor of an unstructured object (`GetManagedFields`, which server-side
/// apply asks of the configuration) finds entries in `obj`: a list whose items are all
/// objects that convert into `ManagedFieldsEntry`. Anything else reads as nil, even `[{}]`
/// does not (an empty entry converts).
pub fn accessor_finds(obj: &Value) -> bool {
    let Some(list) = obj.get("metadata").and_then(|m| m.get("managedFields")).and_then(Value::as_array) else {
        return false;
    };
    list.iter().all(|entry| {
        let Some(e) = entry.as_object() else { return false };
        let strings = ["manager", "operation", "apiVersion", "fieldsType", "subresource"];
        // `fieldsV1` takes any JSON; the time is `metav1.Time`, which Go's RFC 3339 must parse.
        strings.iter().all(|k| e.get(*k).is_none_or(|v| v.is_null() || v.is_string()))
            && e.get("time").is_none_or(|t| match t {
                Value::Null => true,
                Value::String(s) => crate::schema::go_time::parse_error(s, crate::schema::go_time::RFC3339).is_none(),
                _ => false,
            })
    })
}

fn is_zero_entry(v: &Value) -> bool {
    v.as_object().is_some_and(|m| {
        m.values().all(|v| match v {
            Value::Null => true,
            Value::String(s) => s.is_empty(),
            _ => false,
        })
    })
}

/// Reads entries as kube's `DecodeManagedFields` does.
pub fn decode(list: &[Value]) -> Result<Managed, String> {
    let mut managed = Managed::default();
    for (i, entry) in list.iter().enumerate() {
        let Some(e) = entry.as_object() else { return Err(format!("managed fields entry {i} is not an object")) };
        let text = |k: &str| -> Result<String, String> {
            match e.get(k) {
                None | Some(Value::Null) => Ok(String::new()),
                Some(Value::String(s)) => Ok(s.clone()),
                Some(other) => Err(format!("{k} must be a string, got {other}")),
            }
        };
        let operation = text("operation")?;
        if operation != APPLY && operation != UPDATE {
            return Err("operation must be `Apply` or `Update`".into());
        }
        let api_version = text("apiVersion")?;
        if api_version.is_empty() {
            return Err("apiVersion must not be empty".into());
        }
        match text("fieldsType")?.as_str() {
            "FieldsV1" => {}
            "" => return Err(format!("missing fieldsType in managed fields entry {i}")),
            other => return Err(format!("invalid fieldsType {other:?} in managed fields entry {i}")),
        }
        let time = match text("time")? {
            t if t.is_empty() => None,
            t => Some(t.parse::<Timestamp>().map_err(|e| format!("time {t:?}: {e}"))?),
        };
        let set = match e.get("fieldsV1") {
            None | Some(Value::Null) => Set::new(),
            Some(v) => Set::from_fields_v1(v).map_err(|e| format!("error decoding set: {e}"))?,
        };
        let manager = text("manager")?;
        let subresource = Some(text("subresource")?).filter(|s| !s.is_empty());
        let applied = operation == APPLY;
        let id = if applied {
            ManagerId::apply(&manager, subresource.as_deref())
        } else {
            ManagerId::update(&manager, &api_version, subresource.as_deref())
        };
        match time {
            Some(t) => managed.times.insert(id.clone(), meta::format_time(t)),
            None => managed.times.remove(&id),
        };
        managed.fields.insert(id, VersionedSet { set, api_version, applied });
    }
    Ok(managed)
}

/// Writes entries as kube does, sorted; `None` when there are none.
pub fn encode(managed: &Managed) -> Option<Value> {
    if managed.fields.is_empty() {
        return None;
    }
    let mut entries: Vec<(Map<String, Value>, i64)> = managed
        .fields
        .iter()
        .map(|(id, vs)| {
            let mut e = Map::new();
            e.insert("apiVersion".into(), Value::from(vs.api_version.clone()));
            e.insert("fieldsType".into(), Value::from("FieldsV1"));
            e.insert("fieldsV1".into(), vs.set.to_fields_v1());
            // Go's `omitempty`: an entry sent without a manager keeps none.
            if !id.manager.is_empty() {
                e.insert("manager".into(), Value::from(id.manager.clone()));
            }
            let operation = if vs.applied { APPLY } else { id.operation.as_str() };
            e.insert("operation".into(), Value::from(operation));
            if let Some(sub) = id.subresource.as_deref().filter(|s| !s.is_empty()) {
                e.insert("subresource".into(), Value::from(sub));
            }
            let seconds = match managed.times.get(id) {
                Some(t) => {
                    e.insert("time".into(), Value::from(t.clone()));
                    t.parse::<Timestamp>().map(|t| t.as_second()).unwrap_or(0)
                }
                None => 0,
            };
            (e, seconds)
        })
        .collect();
    let key = |e: &Map<String, Value>, k: &str| e.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    entries.sort_by(|(p, ps), (q, qs)| {
        key(p, "operation")
            .cmp(&key(q, "operation"))
            .then(ps.cmp(qs))
            .then_with(|| key(p, "manager").cmp(&key(q, "manager")))
            .then_with(|| key(p, "apiVersion").cmp(&key(q, "apiVersion")))
            .then_with(|| key(p, "subresource").cmp(&key(q, "subresource")))
    });
    Some(Value::Array(entries.into_iter().map(|(e, _)| Value::Object(e)).collect()))
}

/// Whether two entry lists differ only in their timestamps.
pub fn equal_but_times(a: &Value, b: &Value) -> bool {
    let strip = |v: &Value| -> Option<Vec<Value>> {
        v.as_array().map(|l| {
            l.iter()
                .map(|e| {
                    let mut e = e.clone();
                    if let Some(m) = e.as_object_mut() {
                        m.remove("time");
                    }
                    e
                })
                .collect()
        })
    };
    strip(a).is_some_and(|x| Some(x) == strip(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(manager: &str, operation: &str, time: &str, sub: Option<&str>) -> Value {
        let mut e = json!({
            "apiVersion": "stable.example.com/v1", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:size": {}}}, "manager": manager, "operation": operation, "time": time
        });
        if let Some(s) = sub {
            e["subresource"] = json!(s);
        }
        e
    }

    #[test]
    fn entries_round_trip_sorted_as_kube_sorts_them() {
        let list = vec![
            entry("curl", "Update", "2026-11-22T02:37:02Z", None),
            entry("curl", "Update", "2026-11-22T02:37:00Z", Some("status")),
            entry("kubectl", "Apply", "2026-11-22T02:38:00Z", None),
        ];
        let managed = decode(&list).expect("decodes");
        assert_eq!(managed.fields.len(), 3);
        let out = encode(&managed).expect("entries");
        let order: Vec<(&str, &str)> = out
            .as_array()
            .expect("list")
            .iter()
            .map(|e| (e["manager"].as_str().expect("m"), e["time"].as_str().expect("t")))
            .collect();
        assert_eq!(
            order,
            [("kubectl", "2026-11-22T02:38:00Z"), ("curl", "2026-11-22T02:37:00Z"), ("curl", "2026-11-22T02:37:02Z")]
        );
        assert_eq!(out[1], list[1]);
    }

    #[test]
    fn an_applied_configuration_s_entries_are_found_only_where_they_convert() {
        let with = |list: Value| json!({"metadata": {"managedFields": list}});
        assert!(accessor_finds(&with(json!([]))));
        assert!(accessor_finds(&with(json!([{}]))));
        assert!(accessor_finds(&with(json!([{"manager": "m", "operation": "Bogus", "fieldsV1": 5}]))));
        assert!(accessor_finds(&with(json!([{"time": "2020-01-01T00:00:00Z", "manager": null}]))));
        assert!(!accessor_finds(&json!({"metadata": {}})));
        assert!(!accessor_finds(&with(json!(null))));
        assert!(!accessor_finds(&with(json!({"manager": "m"}))));
        assert!(!accessor_finds(&with(json!([{}, 1]))));
        assert!(!accessor_finds(&with(json!([{"time": "garbage"}]))));
        assert!(!accessor_finds(&with(json!([{"time": ""}]))));
        assert!(!accessor_finds(&with(json!([{}, {"manager": 5}]))));
    }

    #[test]
    fn what_a_client_sends_is_read_as_kube_reads_it() {
        let with = |mf: Value| json!({"metadata": {"managedFields": mf}});
        assert_eq!(given(&json!({"metadata": {}})), Given::Unreadable);
        assert_eq!(given(&with(json!([]))), Given::Reset);
        assert_eq!(given(&with(json!([{}]))), Given::Reset);
        assert_eq!(given(&with(json!("nonsense"))), Given::Unreadable);
        let mut bad = entry("x", "Patch", "2026-11-22T02:37:02Z", None);
        assert_eq!(given(&with(json!([bad.clone()]))), Given::Unreadable);
        bad["operation"] = json!("Update");
        bad["fieldsType"] = json!("FieldsV2");
        assert_eq!(given(&with(json!([bad]))), Given::Unreadable);
        assert!(matches!(given(&with(json!([entry("x", "Update", "2026-11-22T02:37:02Z", None)]))), Given::Entries(_)));
    }

    #[test]
    fn managers_are_named_as_conflict_messages_name_them() {
        let u = ManagerId::update("kubectl-client-side-apply", "stable.example.com/v1", None);
        assert_eq!(u.describe(), r#""kubectl-client-side-apply" using stable.example.com/v1"#);
        assert_eq!(
            u.identifier(),
            r#"{"manager":"kubectl-client-side-apply","operation":"Update","apiVersion":"stable.example.com/v1"}"#
        );
        let a = ManagerId::apply("kubectl", Some("status"));
        assert_eq!(a.describe(), r#""kubectl" with subresource "status""#);
        assert_eq!(a.identifier(), r#"{"manager":"kubectl","operation":"Apply","subresource":"status"}"#);
    }
}
