//! Defaults checked against the schema they sit in, as kube's `ValidateDefaults` does once a
//! CRD's schema is otherwise valid and structural: a default must not carry fields its
//! schema prunes, must meet the schema's value validations, and its CEL rules.

use crate::field::{ErrorType, FieldError, Path};
use crate::schema::Schema;
use crate::schema::gofmt::with_value;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{JSONSchemaProps, JSONSchemaPropsOrArray};

/// Every default of a version's schema `s` (at `path`). The root's own default is checked as
/// an embedded resource (kube's `ValidateDefaults` clones the root with
/// `x-kubernetes-embedded-resource` set), so it needs an `apiVersion` and a `kind`.
pub(super) fn validate_root(s: &JSONSchemaProps, path: &Path, errs: &mut Vec<FieldError>) {
    if s.default.is_none() || s.x_kubernetes_embedded_resource == Some(true) {
        return validate(s, path, errs);
    }
    let root = JSONSchemaProps { x_kubernetes_embedded_resource: Some(true), ..s.clone() };
    validate(&root, path, errs);
}

/// Every default under `s` (at `path`), through properties and items; `additionalProperties`
/// is not followed because defaults are forbidden there.
fn validate(s: &JSONSchemaProps, path: &Path, errs: &mut Vec<FieldError>) {
    if let Some(default) = &s.default {
        let at = path.child("default");
        let (has_unknown, found) = Schema::for_defaults(s).default_errors(&default.0);
        if has_unknown {
            // kube prints the value as Go does (`map[string]interface {}{"b":1}`).
            errs.push(with_value(
                ErrorType::Invalid,
                at.to_string(),
                &default.0,
                "must not have unknown fields".into(),
            ));
        }
        errs.extend(found.into_iter().map(|mut e| {
            e.field =
                if e.field == "<nil>" || e.field.is_empty() { at.to_string() } else { at.child(&e.field).to_string() };
            e
        }));
    }
    if let Some(JSONSchemaPropsOrArray::Schema(items)) = &s.items {
        validate(items, &path.child("items"), errs);
    }
    for (name, property) in s.properties.iter().flatten() {
        validate(property, &path.child("properties").key(name), errs);
    }
}
