//! `selectableFields` of a CRD version (apiextensions' `ValidateCustomResourceSelectableFields`).
//!
//! Each `jsonPath` is resolved against the schema it selects from with kube's
//! `cel.ValidFieldPath` (array notation refused), must not lead into `metadata`, must end
//! at a string, boolean or integer, must not repeat, and at most eight distinct paths are
//! allowed. Like the other per-version fields they are hoisted to `spec.selectableFields`
//! when every version has the same list; kube then resolves them against the hoisted
//! schema only, so a hoisted list with per-version schemas (or the reverse) is refused
//! with the sentences kube uses for that.

use crate::field::{FieldError, Path};
use crate::schema::fieldpath::{self, Brackets, Resolved};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{JSONSchemaProps, SelectableField};

/// `MaxSelectableFields`.
const MAX_SELECTABLE_FIELDS: usize = 8;

const NOT_SCALAR: &str = "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.";

/// Where the fields are reported and which schema they select from.
pub enum Scope<'a> {
    /// Hoisted to `spec.selectableFields`: the schema is the hoisted one, if there is one.
    Spec(Option<&'a JSONSchemaProps>),
    /// `spec.versions[i].selectableFields`: the version's own schema, unless it was hoisted.
    Version(Option<&'a JSONSchemaProps>),
}

/// Validates `fields` (`path` is the `selectableFields` path); nothing when the list is empty.
pub fn validate_selectable_fields(fields: &[SelectableField], scope: Scope<'_>, path: &Path) -> Vec<FieldError> {
    if fields.is_empty() {
        return Vec::new();
    }
    let schema = match scope {
        Scope::Spec(Some(schema)) | Scope::Version(Some(schema)) => schema,
        Scope::Spec(None) => {
            return vec![FieldError::invalid(
                path,
                "",
                "selectableFields may only be set when validations.schema is included",
            )];
        }
        // kube's sentence, "not" included.
        Scope::Version(None) => {
            return vec![FieldError::invalid(
                path,
                "",
                "selectableFields may only be set when version.schema.openAPIV3Schema is not included",
            )];
        }
    };
    let mut errs = Vec::new();
    let mut unique: Vec<String> = Vec::new();
    for (i, field) in fields.iter().enumerate() {
        let json_path = field.json_path.as_str();
        let p = path.index(i).child("jsonPath");
        if json_path.is_empty() {
            errs.push(FieldError::required(p, ""));
            continue;
        }
        let Resolved { path: resolved, leaf } = match fieldpath::resolve_in(json_path, schema, Brackets::Refused) {
            Ok(found) => found,
            Err(e) => {
                errs.push(FieldError::invalid(p, json_path, format!("is an invalid path: {e}")));
                continue;
            }
        };
        if resolved.as_str() == "metadata" || resolved.as_str().starts_with("metadata.") {
            errs.push(FieldError::invalid(&p, json_path, "must not point to fields in metadata"));
        }
        let scalar =
            leaf.and_then(|s| s.type_.as_deref()).is_some_and(|t| matches!(t, "string" | "boolean" | "integer"));
        if !scalar {
            errs.push(FieldError::invalid(&p, json_path, NOT_SCALAR));
        }
        let key = resolved.as_str().to_string();
        if unique.contains(&key) {
            errs.push(FieldError::duplicate(&p, json_path));
        } else {
            unique.push(key);
        }
    }
    if unique.len() > MAX_SELECTABLE_FIELDS {
        errs.push(FieldError::too_many(path, unique.len(), MAX_SELECTABLE_FIELDS));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> JSONSchemaProps {
        serde_json::from_value(json!({"type": "object", "properties": {
            "metadata": {"type": "object", "properties": {"name": {"type": "string"}}},
            "spec": {"type": "object", "properties": {
                "name": {"type": "string"}, "count": {"type": "integer"}, "ok": {"type": "boolean"},
                "f": {"type": "number"}, "obj": {"type": "object", "properties": {"x": {"type": "string"}}},
                "list": {"type": "array", "items": {"type": "string"}},
                "m": {"type": "object", "additionalProperties": {"type": "string"}},
                "any": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                "ios": {"x-kubernetes-int-or-string": true}}}}}))
        .expect("schema")
    }

    fn fields(paths: &[&str]) -> Vec<SelectableField> {
        paths.iter().map(|p| SelectableField { json_path: p.to_string() }).collect()
    }

    /// Each case: the paths, then the oracle's messages (`field: body`).
    #[test]
    fn paths_are_refused_as_kube_refuses_them() {
        let s = schema();
        let cases: &[(&[&str], &[&str])] = &[
            (&[".spec.name", ".spec.count", ".spec.ok", ".spec.obj.x", ".spec.m.k"], &[]),
            (
                &["spec.name"],
                &[
                    r#"spec.selectableFields[0].jsonPath: Invalid value: "spec.name": is an invalid path: expected [ or . but got: spec"#,
                ],
            ),
            (
                &[".spec.nope"],
                &[
                    r#"spec.selectableFields[0].jsonPath: Invalid value: ".spec.nope": is an invalid path: does not refer to a valid field"#,
                ],
            ),
            (
                &[".spec.any.x"],
                &[
                    r#"spec.selectableFields[0].jsonPath: Invalid value: ".spec.any.x": is an invalid path: does not refer to a valid field"#,
                ],
            ),
            (
                &["..spec"],
                &[
                    r#"spec.selectableFields[0].jsonPath: Invalid value: "..spec": is an invalid path: does not refer to a valid field"#,
                ],
            ),
            (
                &[".spec."],
                &[
                    r#"spec.selectableFields[0].jsonPath: Invalid value: ".spec.": is an invalid path: unexpected end of JSON path"#,
                ],
            ),
            (
                &[".spec]"],
                &[
                    r#"spec.selectableFields[0].jsonPath: Invalid value: ".spec]": is an invalid path: expected [ or . but got: ]"#,
                ],
            ),
            (
                &[".spec.list[0]"],
                &[
                    r#"spec.selectableFields[0].jsonPath: Invalid value: ".spec.list[0]": is an invalid path: array notation is not allowed"#,
                ],
            ),
            (
                &[".spec.obj"],
                &[&format!(r#"spec.selectableFields[0].jsonPath: Invalid value: ".spec.obj": {NOT_SCALAR}"#)],
            ),
            (
                &[".spec.ios"],
                &[&format!(r#"spec.selectableFields[0].jsonPath: Invalid value: ".spec.ios": {NOT_SCALAR}"#)],
            ),
            (
                &[".metadata.name"],
                &[
                    r#"spec.selectableFields[0].jsonPath: Invalid value: ".metadata.name": must not point to fields in metadata"#,
                ],
            ),
            (&[""], &["spec.selectableFields[0].jsonPath: Required value"]),
            (&[".spec.name", ".spec.name"], &[r#"spec.selectableFields[1].jsonPath: Duplicate value: ".spec.name""#]),
            (
                &[
                    ".spec.name",
                    ".spec.count",
                    ".spec.ok",
                    ".spec.f",
                    ".spec.obj.x",
                    ".spec.m.a",
                    ".spec.m.b",
                    ".spec.m.c",
                    ".spec.m.d",
                ],
                &[
                    &format!(r#"spec.selectableFields[3].jsonPath: Invalid value: ".spec.f": {NOT_SCALAR}"#),
                    "spec.selectableFields: Too many: 9: must have at most 8 items",
                ],
            ),
        ];
        let path = Path::root("spec").child("selectableFields");
        for (paths, want) in cases {
            let got: Vec<String> = validate_selectable_fields(&fields(paths), Scope::Spec(Some(&s)), &path)
                .iter()
                .map(|e| format!("{}: {}", e.field, e.body()))
                .collect();
            assert_eq!(&got, want, "{paths:?}");
        }
    }

    #[test]
    fn fields_and_schema_hoisted_differently_are_refused() {
        let path = Path::root("spec").child("selectableFields");
        let errs = validate_selectable_fields(&fields(&[".spec.name"]), Scope::Spec(None), &path);
        assert_eq!(
            errs[0].body(),
            r#"Invalid value: "": selectableFields may only be set when validations.schema is included"#
        );
        let errs = validate_selectable_fields(&fields(&[".spec.name"]), Scope::Version(None), &path);
        assert_eq!(
            errs[0].body(),
            r#"Invalid value: "": selectableFields may only be set when version.schema.openAPIV3Schema is not included"#
        );
        assert!(validate_selectable_fields(&[], Scope::Version(None), &path).is_empty());
    }
}
