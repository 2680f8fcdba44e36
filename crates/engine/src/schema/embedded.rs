//! Objects marked `x-kubernetes-embedded-resource` (kube's `schema/objectmeta` package):
//! they carry their own `apiVersion`, `kind` and `metadata`, which the schema need not
//! describe. Decoding refuses a non-string `apiVersion`/`kind` or a `metadata` that is not
//! an `ObjectMeta`, and round-trips the metadata (dropping unknown fields); validation
//! requires `apiVersion` and `kind` and applies the object-metadata rules, with any name
//! allowed that fits a URL path segment.

use super::gofmt::with_value;
use super::names::{is_dns1035_label, validate_path_segment_name};
use super::node::{Additional, Node};
use super::object_meta::{self, parse_group_version};
use crate::field::{ErrorType, FieldError, Path};
use serde_json::{Map, Value};

/// The schema of a map value outside `properties`: `Some(None)` when
/// `additionalProperties` is a boolean.
fn additional(s: &Node) -> Option<Option<&Node>> {
    match &s.additional_properties {
        Additional::Absent => None,
        Additional::Allows(_) => Some(None),
        Additional::Schema(schema) => Some(Some(schema)),
    }
}

/// Every problem with the embedded resources under `x` (kube's `objectmeta.Validate`
/// with `isResourceRoot=false`: the root's own metadata is validated elsewhere).
/// `meta_error` says why a `metadata` is no `ObjectMeta`: decoding refuses that for a body,
/// but an apply's merge is converted, not decoded, and meets it here.
pub fn validate(path: &Path, x: &Value, s: Option<&Node>, meta_error: super::MetaError) -> Vec<FieldError> {
    let Some(s) = s.filter(|s| s.embedded_below) else { return vec![] };
    let mut errs = Vec::new();
    match x {
        Value::Object(map) => {
            if s.embedded_resource {
                errs.extend(validate_resource(path, map, meta_error));
            }
            for (k, v) in map {
                if let Some(prop) = s.properties.get(k) {
                    errs.extend(validate(&path.child(k), v, Some(prop), meta_error));
                } else if let Some(schema) = additional(s) {
                    errs.extend(validate(&path.key(k), v, schema, meta_error));
                }
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                errs.extend(validate(&path.index(i), v, s.items.as_deref(), meta_error));
            }
        }
        _ => {}
    }
    errs
}

fn validate_resource(path: &Path, x: &Map<String, Value>, meta_error: super::MetaError) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for required in ["apiVersion", "kind"] {
        if !x.contains_key(required) {
            errs.push(FieldError::required(path.child(required), "must not be empty"));
        }
    }
    for (k, v) in x {
        match k.as_str() {
            "apiVersion" => match v.as_str() {
                None => errs.push(with_value(ErrorType::Invalid, path.child(k), v, "must be a string".into())),
                Some("") => errs.push(FieldError::invalid(path.child(k), "", "must not be empty")),
                Some(api_version) => {
                    if let Err(e) = parse_group_version(api_version) {
                        errs.push(FieldError::invalid(path.child(k), api_version, e));
                    }
                }
            },
            "kind" => match v.as_str() {
                None => errs.push(with_value(ErrorType::Invalid, path.child(k), v, "must be a string".into())),
                Some("") => errs.push(FieldError::invalid(path.child(k), "", "must not be empty")),
                Some(kind) => {
                    let problems = is_dns1035_label(&kind.to_lowercase());
                    if !problems.is_empty() {
                        let detail = format!("may have mixed case, but should otherwise match: {}", problems.join(","));
                        errs.push(FieldError::invalid(path.child(k), kind, detail));
                    }
                }
            },
            "metadata" => {
                if let Some(why) = meta_error(v) {
                    errs.push(with_value(ErrorType::Invalid, path.child(k), v, why));
                    continue;
                }
                let mut meta = if v.is_object() { v.clone() } else { Value::Object(Map::new()) };
                if let Some(m) = meta.as_object_mut()
                    && m.get("name").and_then(Value::as_str).unwrap_or_default().is_empty()
                {
                    // kube validates an unnamed embedded object as if it were named.
                    m.insert("name".into(), Value::from("fakename"));
                }
                let namespaced = meta.get("namespace").and_then(Value::as_str).is_some_and(|n| !n.is_empty());
                errs.extend(object_meta::validate_object_meta(
                    &meta,
                    namespaced,
                    validate_path_segment_name,
                    &path.child(k),
                ));
            }
            _ => {}
        }
    }
    errs
}

/// The first decoding error among the embedded resources under `x`: a non-string
/// `apiVersion` or `kind`, or a `metadata` that is not an `ObjectMeta`.
pub fn check(path: &Path, x: &Value, s: Option<&Node>, meta_error: super::MetaError) -> Result<(), FieldError> {
    let Some(s) = s.filter(|s| s.embedded_below) else { return Ok(()) };
    match x {
        Value::Object(map) => {
            for (k, v) in map {
                if s.embedded_resource {
                    match k.as_str() {
                        "apiVersion" | "kind" if !v.is_string() => {
                            return Err(with_value(ErrorType::Invalid, path.child(k), v, "must be a string".into()));
                        }
                        "metadata" => {
                            if let Some(e) = meta_error(v) {
                                return Err(with_value(ErrorType::Invalid, path.child(k), v, e));
                            }
                        }
                        _ => {}
                    }
                }
                if let Some(prop) = s.properties.get(k) {
                    check(&path.child(k), v, Some(prop), meta_error)?;
                } else if let Some(schema) = additional(s) {
                    check(&path.key(k), v, schema, meta_error)?;
                }
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                check(&path.index(i), v, s.items.as_deref(), meta_error)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// Round-trips the metadata of every embedded resource under `x` through `ObjectMeta`,
/// recording the dropped unknown fields.
pub fn coerce(path: &Path, x: &mut Value, s: Option<&Node>, unknown: &mut Vec<String>) {
    let Some(s) = s.filter(|s| s.embedded_below) else { return };
    match x {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                if s.embedded_resource && k == "metadata" && v.is_object() {
                    object_meta::coerce(v, path.child(k).as_str(), unknown);
                }
                if let Some(prop) = s.properties.get(k) {
                    coerce(&path.child(k), v, Some(prop), unknown);
                } else if let Some(schema) = additional(s) {
                    coerce(&path.key(k), v, schema, unknown);
                }
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter_mut().enumerate() {
                coerce(&path.index(i), v, s.items.as_deref(), unknown);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Node {
        Node::compile(
            &serde_json::from_value(json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
                "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                             "x-kubernetes-preserve-unknown-fields": true}
            }}}}))
            .expect("schema"),
        )
    }

    fn errors(obj: Value) -> Vec<String> {
        let meta_error: super::super::MetaError = crate::resources::builtin::types::object_meta_error;
        validate(&Path::default(), &obj, Some(&schema()), meta_error).iter().map(ToString::to_string).collect()
    }

    #[test]
    fn type_meta_is_required_and_checked() {
        assert_eq!(
            errors(json!({"spec": {"template": {}}})),
            [
                "spec.template.apiVersion: Required value: must not be empty",
                "spec.template.kind: Required value: must not be empty"
            ]
        );
        assert_eq!(
            errors(json!({"spec": {"template": {"apiVersion": "a/b/c", "kind": "Bad_Kind"}}})),
            [
                "spec.template.apiVersion: Invalid value: \"a/b/c\": unexpected GroupVersion string: a/b/c",
                "spec.template.kind: Invalid value: \"Bad_Kind\": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
            ]
        );
    }

    #[test]
    fn embedded_metadata_that_is_no_object_meta_is_invalid_as_a_whole() {
        let errs = errors(json!({"spec": {"template": {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "a", "generation": 1.5}}}}));
        assert_eq!(
            errs,
            [
                "spec.template.metadata: Invalid value: map[string]interface {}{\"generation\":1.5, \"name\":\"a\"}: json: cannot unmarshal number 1.5 into Go struct field ObjectMeta.generation of type int64"
            ]
        );
    }

    #[test]
    fn embedded_metadata_follows_object_meta_rules() {
        let errs = errors(json!({"spec": {"template": {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "a/b", "labels": {"-x": "y"}}}}}));
        assert_eq!(errs[0], "spec.template.metadata.name: Invalid value: \"a/b\": may not contain '/'");
        assert!(errs[1].starts_with("spec.template.metadata.labels: Invalid value: \"-x\": name part must consist"));
        assert!(errors(json!({"spec": {"template": {"apiVersion": "v1", "kind": "Pod", "metadata": {}}}})).is_empty());
    }

    #[test]
    fn decoding_refuses_wrong_types_and_drops_unknown_metadata() {
        let s = schema();
        let bad = json!({"spec": {"template": {"apiVersion": 1, "kind": "Pod"}}});
        assert_eq!(
            check(&Path::default(), &bad, Some(&s), |_| None).map_err(|e| e.to_string()),
            Err("spec.template.apiVersion: Invalid value: 1: must be a string".to_string())
        );
        let mut obj = json!({"spec": {"template": {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "bogus": 1, "labels": {}}}}});
        let mut unknown = Vec::new();
        coerce(&Path::default(), &mut obj, Some(&s), &mut unknown);
        assert_eq!(unknown, ["spec.template.metadata.bogus"]);
        assert_eq!(obj["spec"]["template"]["metadata"], json!({"name": "p"}));
    }
}
