//! The `/scale` subresource of custom resources: an `autoscaling/v1` Scale read from and
//! written to the paths the CRD names, as the subresources proposal and today's
//! kube-apiserver define it.
//!
//! Only `spec.replicas` is ever written back; the Scale shares the custom resource's
//! resourceVersion. The replica paths are also checked on every ordinary write, so a
//! custom resource never holds a value `/scale` could not read.

use crate::field::FieldError;
use crate::field::go_type;
use crate::meta;
use crate::representation::gofmt::go_format_g;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceSubresourceScale;
use serde_json::{Map, Value, json};

/// Every version's `specReplicasPath` by `group/version` (`None`: no `/scale`): kube's
/// `ResourcePathMappings`.
pub type ReplicasPaths = std::sync::Arc<[(String, Option<String>)]>;

/// The JSON paths of one CRD version's scale subresource (`.spec.replicas` form).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScalePaths {
    pub spec_replicas: String,
    pub status_replicas: String,
    pub label_selector: Option<String>,
}

impl ScalePaths {
    pub fn from_crd(scale: &CustomResourceSubresourceScale) -> Self {
        ScalePaths {
            spec_replicas: scale.spec_replicas_path.clone(),
            status_replicas: scale.status_replicas_path.clone(),
            label_selector: scale.label_selector_path.clone().filter(|p| !p.is_empty()),
        }
    }
}

/// The segments of a `.a.b` path (the leading dot is optional, as in kube).
fn segments(path: &str) -> impl Iterator<Item = &str> {
    path.strip_prefix('.').unwrap_or(path).split('.')
}

fn lookup<'v>(obj: &'v Value, path: &str) -> Option<&'v Value> {
    segments(path).try_fold(obj, |v, key| v.as_object()?.get(key))
}

/// The integer at `path`: absent is `Ok(None)`; any other type is apimachinery's
/// accessor error, word for word.
fn nested_int64(obj: &Value, path: &str) -> Result<Option<i64>, String> {
    let Some(value) = lookup(obj, path) else { return Ok(None) };
    match value.as_i64() {
        Some(n) => Ok(Some(n)),
        None => Err(format!(
            ".{} accessor error: {} is of the type {}, expected int64",
            segments(path).collect::<Vec<_>>().join("."),
            go_value(value),
            go_type(value)
        )),
    }
}

/// A JSON value as Go's `%v` prints its unstructured form.
fn go_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "<nil>".into(),
        Value::Array(items) => format!("[{}]", items.iter().map(go_value).collect::<Vec<_>>().join(" ")),
        Value::Object(m) => {
            let inner: Vec<String> = m.iter().map(|(k, v)| format!("{k}:{}", go_value(v))).collect();
            format!("map[{}]", inner.join(" "))
        }
        // An integer past int64 decodes as a float64 (`9.223372036854776e+18`).
        Value::Number(n) if !n.is_i64() => go_format_g(n.as_f64().unwrap_or(f64::NAN)),
        other => other.to_string(),
    }
}

fn check_replicas(obj: &Value, path: &str) -> Option<FieldError> {
    match nested_int64(obj, path) {
        Err(message) => Some(FieldError::invalid(path, 0, message)),
        Ok(Some(n)) if n < 0 => Some(FieldError::invalid(path, n, "should be a non-negative integer")),
        Ok(Some(n)) if n > i64::from(i32::MAX) => {
            Some(FieldError::invalid(path, n, format!("should be less than or equal to {}", i32::MAX)))
        }
        Ok(_) => None,
    }
}

/// kube's `ValidateScaleSpec`: the value at `specReplicasPath`.
pub fn validate_spec(obj: &Value, paths: &ScalePaths) -> Vec<FieldError> {
    check_replicas(obj, &paths.spec_replicas).into_iter().collect()
}

/// kube's `ValidateScaleStatus`: the value at `statusReplicasPath`, and the selector's
/// type: any string passes (kube reads it with `NestedString` and never parses it), a
/// `null` is the accessor's error as any other type is.
pub fn validate_status(obj: &Value, paths: &ScalePaths) -> Vec<FieldError> {
    let mut errors: Vec<FieldError> = check_replicas(obj, &paths.status_replicas).into_iter().collect();
    if let Some(path) = &paths.label_selector {
        match lookup(obj, path) {
            None | Some(Value::String(_)) => {}
            Some(other) => errors.push(FieldError::invalid(
                path,
                "",
                format!(
                    ".{} accessor error: {} is of the type {}, expected string",
                    segments(path).collect::<Vec<_>>().join("."),
                    go_value(other),
                    go_type(other)
                ),
            )),
        }
    }
    errors
}

/// Whether `obj` holds a value at the spec replicas path (of any type: a wrong type is the
/// Scale's own error).
pub fn has_spec_replicas(obj: &Value, paths: &ScalePaths) -> bool {
    !matches!(nested_int64(obj, &paths.spec_replicas), Ok(None))
}

/// The Scale of a custom resource (kube's `scaleFromCustomResource`): missing replicas
/// read as 0, and `spec.replicas` is omitted when 0 as Go's `omitempty` does.
pub fn scale_of(obj: &Value, paths: &ScalePaths) -> Value {
    let spec_replicas = nested_int64(obj, &paths.spec_replicas).ok().flatten().unwrap_or(0);
    let status_replicas = nested_int64(obj, &paths.status_replicas).ok().flatten().unwrap_or(0);
    let selector =
        paths.label_selector.as_deref().and_then(|p| lookup(obj, p)).and_then(Value::as_str).unwrap_or_default();
    let mut metadata = Map::new();
    let source = obj.get("metadata").and_then(Value::as_object);
    for key in ["name", "namespace", "uid", "resourceVersion", "creationTimestamp"] {
        if let Some(v) = source.and_then(|m| m.get(key)) {
            metadata.insert(key.into(), v.clone());
        }
    }
    let mut spec = Map::new();
    if spec_replicas != 0 {
        spec.insert("replicas".into(), Value::from(spec_replicas));
    }
    let mut status = Map::new();
    status.insert("replicas".into(), Value::from(status_replicas));
    if !selector.is_empty() {
        status.insert("selector".into(), Value::from(selector));
    }
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": metadata,
        "spec": spec,
        "status": status,
    })
}

/// The desired replicas a Scale asks for (0 when absent, as Go's zero value).
pub fn requested_replicas(scale: &Value) -> i64 {
    scale.get("spec").and_then(|s| s.get("replicas")).and_then(Value::as_i64).unwrap_or(0)
}

/// Writes `replicas` at `specReplicasPath`, creating the objects on the way.
pub fn set_spec_replicas(obj: &mut Value, paths: &ScalePaths, replicas: i64) {
    let keys: Vec<&str> = segments(&paths.spec_replicas).collect();
    let Some((last, parents)) = keys.split_last() else { return };
    let mut cur = obj;
    for key in parents {
        let Some(map) = cur.as_object_mut() else { return };
        let next = map.entry(key.to_string()).or_insert_with(|| Value::Object(Map::new()));
        if !next.is_object() {
            *next = Value::Object(Map::new());
        }
        cur = next;
    }
    if let Some(map) = cur.as_object_mut() {
        map.insert(last.to_string(), Value::from(replicas));
    }
}

/// The resourceVersion a Scale carries as its precondition, if any.
pub fn precondition(scale: &Value) -> Option<&str> {
    meta::resource_version(scale).filter(|rv| !rv.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths() -> ScalePaths {
        ScalePaths {
            spec_replicas: ".spec.replicas".into(),
            status_replicas: ".status.replicas".into(),
            label_selector: Some(".status.selector".into()),
        }
    }

    #[test]
    fn scale_reads_the_paths_and_shares_metadata() {
        let obj = json!({
            "metadata": {"name": "w1", "namespace": "default", "uid": "u", "resourceVersion": "79",
                         "creationTimestamp": "2026-11-22T02:36:58Z", "labels": {"a": "b"}},
            "spec": {"replicas": 1}, "status": {"replicas": 1, "selector": "app=demo"}
        });
        let scale = scale_of(&obj, &paths());
        assert_eq!(
            scale,
            json!({"kind": "Scale", "apiVersion": "autoscaling/v1",
                   "metadata": {"name": "w1", "namespace": "default", "uid": "u", "resourceVersion": "79",
                                "creationTimestamp": "2026-11-22T02:36:58Z"},
                   "spec": {"replicas": 1}, "status": {"replicas": 1, "selector": "app=demo"}})
        );
    }

    #[test]
    fn missing_replicas_read_as_zero_and_spec_is_empty() {
        let scale = scale_of(&json!({"metadata": {"name": "a"}}), &paths());
        assert_eq!(scale["spec"], json!({}));
        assert_eq!(scale["status"], json!({"replicas": 0}));
    }

    #[test]
    fn spec_replicas_must_be_a_non_negative_int32() {
        let err = |v: Value| validate_spec(&json!({"spec": {"replicas": v}}), &paths());
        assert!(err(json!(3)).is_empty());
        assert_eq!(
            err(json!(-1))[0].to_string(),
            ".spec.replicas: Invalid value: -1: should be a non-negative integer"
        );
        assert_eq!(
            err(json!("three"))[0].to_string(),
            ".spec.replicas: Invalid value: 0: .spec.replicas accessor error: three is of the type string, expected int64"
        );
        assert_eq!(
            err(json!(1.5))[0].to_string(),
            ".spec.replicas: Invalid value: 0: .spec.replicas accessor error: 1.5 is of the type float64, expected int64"
        );
        assert_eq!(
            err(json!(3_000_000_000i64))[0].to_string(),
            ".spec.replicas: Invalid value: 3000000000: should be less than or equal to 2147483647"
        );
    }

    /// The oracle takes a selector that does not parse (`a in (b`) and refuses a `null` one.
    #[test]
    fn status_replicas_and_the_selector_s_type_are_checked() {
        let errors = validate_status(&json!({"status": {"replicas": -2, "selector": null}}), &paths());
        assert_eq!(errors.len(), 2);
        assert_eq!(errors[0].field, ".status.replicas");
        assert_eq!(errors[1].field, ".status.selector");
        assert_eq!(
            errors[1].to_string(),
            ".status.selector: Invalid value: \"\": .status.selector accessor error: <nil> is of the type <nil>, expected string"
        );
        assert!(validate_status(&json!({"status": {"replicas": 2, "selector": "a in (b"}}), &paths()).is_empty());
    }

    /// Go decodes an integer past int64 as a float64, and its accessor error says so.
    #[test]
    fn replicas_past_int64_are_a_float64() {
        let errors = validate_spec(&json!({"spec": {"replicas": 9223372036854775808u64}}), &paths());
        assert_eq!(
            errors[0].to_string(),
            ".spec.replicas: Invalid value: 0: .spec.replicas accessor error: 9.223372036854776e+18 is of the type float64, expected int64"
        );
    }

    #[test]
    fn replicas_are_written_creating_parents() {
        let mut obj = json!({"metadata": {}});
        set_spec_replicas(&mut obj, &paths(), 4);
        assert_eq!(obj["spec"]["replicas"], 4);
        let deep = ScalePaths { spec_replicas: ".spec.scaling.count".into(), ..paths() };
        set_spec_replicas(&mut obj, &deep, 2);
        assert_eq!(obj["spec"]["scaling"]["count"], 2);
    }
}
