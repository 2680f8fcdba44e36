//! Per-version fields of a CRD (`schema`, `subresources`, `additionalPrinterColumns`,
//! `selectableFields`, `deprecationWarning`) and where kube reports their errors.
//!
//! kube-apiserver validates its internal CRD type, not v1. Converting v1 to internal
//! hoists a per-version field to the spec when every version carries the same value, so a
//! CRD whose versions share one schema (every single-version CRD) gets its schema errors
//! under `spec.validation.openAPIV3Schema`, its subresource errors under
//! `spec.subresources` and its column errors under `spec.additionalPrinterColumns[i]`,
//! while versions that differ are reported under `spec.versions[i]...`. [`Hoisted`]
//! records that decision so every check reports where kube does.

use crate::field::{FieldError, Path};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceColumnDefinition, CustomResourceDefinition, CustomResourceDefinitionVersion,
    CustomResourceSubresources,
};
use std::cmp::Ordering;

/// Which per-version fields kube hoists to the spec (all versions equal, at least one version).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hoisted {
    pub schema: bool,
    pub subresources: bool,
    pub columns: bool,
    pub selectable_fields: bool,
}

impl Hoisted {
    /// The fields that stay per version.
    pub fn inverse(self) -> Self {
        Hoisted {
            schema: !self.schema,
            subresources: !self.subresources,
            columns: !self.columns,
            selectable_fields: !self.selectable_fields,
        }
    }

    pub fn of(versions: &[CustomResourceDefinitionVersion]) -> Self {
        let Some(first) = versions.first() else {
            return Hoisted { schema: false, subresources: false, columns: false, selectable_fields: false };
        };
        Hoisted {
            schema: versions.iter().all(|v| v.schema == first.schema),
            subresources: versions.iter().all(|v| v.subresources == first.subresources),
            columns: versions.iter().all(|v| v.additional_printer_columns == first.additional_printer_columns),
            selectable_fields: versions.iter().all(|v| v.selectable_fields == first.selectable_fields),
        }
    }
}

/// Kubernetes' version priority (`Less`: `a` comes first): GA before beta before alpha, higher numbers first,
/// anything else last in lexical order.
pub fn compare_priority(a: &str, b: &str) -> Ordering {
    fn parse(v: &str) -> (u8, u32, u32) {
        let Some(rest) = v.strip_prefix('v') else { return (0, 0, 0) };
        let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
        let Ok(major) = digits.parse::<u32>() else { return (0, 0, 0) };
        let tail = &rest[digits.len()..];
        let sub = |t: &str| t.parse::<u32>().ok();
        if tail.is_empty() {
            (3, major, 0)
        } else if let Some(n) = tail.strip_prefix("beta").and_then(sub) {
            (2, major, n)
        } else if let Some(n) = tail.strip_prefix("alpha").and_then(sub) {
            (1, major, n)
        } else {
            (0, 0, 0)
        }
    }
    let (pa, pb) = (parse(a), parse(b));
    pb.cmp(&pa).then_with(|| a.cmp(b))
}

/// The warning kube-apiserver sends with every answer at a deprecated `version` of `crd`:
/// the CRD's own, or `<group>/<version> <Kind> is deprecated`, naming the served version
/// of higher priority that is not deprecated, if any (`; use <group>/<version> <Kind>`).
pub fn deprecation_warning(
    crd: &CustomResourceDefinition,
    version: &CustomResourceDefinitionVersion,
) -> Option<String> {
    if !version.deprecated.unwrap_or(false) {
        return None;
    }
    if let Some(own) = &version.deprecation_warning {
        return Some(own.clone());
    }
    let (group, kind) = (&crd.spec.group, &crd.spec.names.kind);
    let warning = format!("{group}/{} {kind} is deprecated", version.name);
    let newer = crd
        .spec
        .versions
        .iter()
        .filter(|v| v.served && !v.deprecated.unwrap_or(false))
        .filter(|v| compare_priority(&v.name, &version.name) == Ordering::Less)
        .min_by(|a, b| compare_priority(&a.name, &b.name));
    Some(match newer {
        Some(v) => format!("{warning}; use {group}/{} {kind}", v.name),
        None => warning,
    })
}

/// Whether the `/status` subresource is enabled.
pub fn has_status(subresources: Option<&CustomResourceSubresources>) -> bool {
    subresources.is_some_and(|s| s.status.is_some())
}

/// Go's `validateDeprecationWarning`, one message per problem.
pub fn deprecation_warning_problems(version: &CustomResourceDefinitionVersion) -> Vec<String> {
    let Some(warning) = &version.deprecation_warning else {
        return Vec::new();
    };
    if !version.deprecated.unwrap_or(false) {
        return vec!["can only be set for deprecated versions".to_string()];
    }
    let mut problems = Vec::new();
    if warning.len() > 256 {
        problems.push("must be <= 256 characters long".to_string());
    }
    if warning.is_empty() {
        problems.push("must not be an empty string".to_string());
    }
    // Go's unicode.IsPrint, approximated: control characters and any whitespace but the
    // ASCII space are not printable. Every control character is also non-printable, so
    // kube's separate "control character" sentence can never be reached.
    if let Some((i, _)) = warning.char_indices().find(|&(_, c)| c.is_control() || (c.is_whitespace() && c != ' ')) {
        problems
            .push(format!("must only contain printable UTF-8 characters; non-printable character found at index {i}"));
    }
    problems
}

/// Go's `validateSimpleJSONPath`: only the leading dot is checked (array notation is not
/// refused at registration; it simply finds nothing when evaluated).
fn simple_json_path(value: &str, path: &Path) -> Option<FieldError> {
    if value.is_empty() {
        Some(FieldError::invalid(path, value, "must not be empty"))
    } else if !value.starts_with('.') {
        Some(FieldError::invalid(path, value, "must be a simple json path starting with ."))
    } else {
        None
    }
}

/// `subresources.scale` paths (`path` is `spec.subresources` or `spec.versions[i].subresources`).
pub fn validate_subresources(subresources: Option<&CustomResourceSubresources>, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(scale) = subresources.and_then(|s| s.scale.as_ref()) else {
        return errs;
    };
    let checks = [
        (
            "scale.specReplicasPath",
            scale.spec_replicas_path.as_str(),
            [".spec."].as_slice(),
            "should be a json path under .spec",
        ),
        (
            "scale.statusReplicasPath",
            scale.status_replicas_path.as_str(),
            &[".status."],
            "should be a json path under .status",
        ),
    ];
    for (field, value, prefixes, detail) in checks {
        let p = path.child(field);
        if value.is_empty() {
            errs.push(FieldError::required(&p, ""));
        } else if let Some(e) = simple_json_path(value, &p) {
            errs.push(e);
        } else if !prefixes.iter().any(|prefix| value.starts_with(prefix)) {
            errs.push(FieldError::invalid(&p, value, detail));
        }
    }
    if let Some(selector) = scale.label_selector_path.as_deref().filter(|s| !s.is_empty()) {
        let p = path.child("scale.labelSelectorPath");
        if let Some(e) = simple_json_path(selector, &p) {
            errs.push(e);
        } else if !selector.starts_with(".spec.") && !selector.starts_with(".status.") {
            errs.push(FieldError::invalid(&p, selector, "should be a json path under either .spec or .status"));
        }
    }
    errs
}

const COLUMN_TYPES: &str = "boolean,date,integer,number,string";
const COLUMN_FORMATS: &str = "byte,date,date-time,double,float,int32,int64,password";

/// One printer column at `path` (kube names the JSON path field `JSONPath`, after its Go
/// field, not `jsonPath`). Kube checks no `priority` range.
pub fn validate_column(column: &CustomResourceColumnDefinition, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if column.name.is_empty() {
        errs.push(FieldError::required(path.child("name"), ""));
    }
    let one_of = |list: &str| format!("must be one of {list}");
    if column.type_.is_empty() {
        errs.push(FieldError::required(path.child("type"), one_of(COLUMN_TYPES)));
    } else if !COLUMN_TYPES.split(',').any(|t| t == column.type_) {
        errs.push(FieldError::invalid(path.child("type"), column.type_.as_str(), one_of(COLUMN_TYPES)));
    }
    if let Some(format) = column.format.as_deref().filter(|f| !f.is_empty())
        && !COLUMN_FORMATS.split(',').any(|f| f == format)
    {
        errs.push(FieldError::invalid(path.child("format"), format, one_of(COLUMN_FORMATS)));
    }
    let json_path = path.child("JSONPath");
    if column.json_path.is_empty() {
        errs.push(FieldError::required(&json_path, ""));
    } else {
        errs.extend(simple_json_path(&column.json_path, &json_path));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::fixtures::VersionBuilder;
    use serde_json::json;

    fn messages(errs: &[FieldError]) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn version_priority_follows_kubernetes() {
        let mut v = vec!["v1alpha1", "v2", "v1beta2", "foo", "v1", "v1beta1", "v10"];
        v.sort_by(|a, b| compare_priority(a, b));
        assert_eq!(v, ["v10", "v2", "v1", "v1beta2", "v1beta1", "v1alpha1", "foo"]);
    }

    /// The oracle's warnings for a CRD served at v1alpha1 (with its own warning), v1beta1
    /// and v1 (deprecated: none), and a CRD whose newest version is the deprecated one.
    #[test]
    fn a_deprecated_version_names_the_newest_served_one_that_is_not() {
        let crd = |versions: serde_json::Value| -> CustomResourceDefinition {
            serde_json::from_value(json!({"metadata": {"name": "widgets.example.com"}, "spec": {"group": "example.com",
                "names": {"plural": "widgets", "kind": "Widget"}, "scope": "Namespaced", "versions": versions}}))
            .expect("crd")
        };
        let widgets = crd(json!([
            {"name": "v1alpha1", "served": true, "storage": false, "deprecated": true, "deprecationWarning": "old"},
            {"name": "v1beta1", "served": true, "storage": false, "deprecated": true},
            {"name": "v2", "served": false, "storage": false},
            {"name": "v1", "served": true, "storage": true},
        ]));
        let warning = |crd: &CustomResourceDefinition, i: usize| deprecation_warning(crd, &crd.spec.versions[i]);
        assert_eq!(warning(&widgets, 0).as_deref(), Some("old"));
        assert_eq!(
            warning(&widgets, 1).as_deref(),
            Some("example.com/v1beta1 Widget is deprecated; use example.com/v1 Widget")
        );
        assert_eq!(warning(&widgets, 3), None);
        let gadgets = crd(json!([
            {"name": "v1", "served": true, "storage": true},
            {"name": "v2", "served": true, "storage": false, "deprecated": true},
        ]));
        assert_eq!(warning(&gadgets, 1).as_deref(), Some("example.com/v2 Widget is deprecated"));
    }

    #[test]
    fn hoisting_follows_equality_across_versions() {
        let a = VersionBuilder::new("v1").schema(json!({"type": "object"})).status_subresource().build();
        let b = VersionBuilder::new("v2").schema(json!({"type": "object"})).build();
        let c = VersionBuilder::new("v3")
            .schema(json!({"type": "object", "description": "c"}))
            .status_subresource()
            .build();
        let hoisted =
            |schema, subresources, columns| Hoisted { schema, subresources, columns, selectable_fields: true };
        assert_eq!(Hoisted::of(std::slice::from_ref(&a)), hoisted(true, true, true));
        assert_eq!(Hoisted::of(&[a.clone(), b]), hoisted(true, false, true));
        assert_eq!(Hoisted::of(&[a, c]), hoisted(false, true, true));
        assert_eq!(
            Hoisted::of(&[]),
            Hoisted { schema: false, subresources: false, columns: false, selectable_fields: false }
        );
    }

    #[test]
    fn scale_paths() {
        let base = Path::root("spec").child("subresources");
        let cases = [
            ((".spec.replicas", ".status.replicas", Some(".status.selector")), vec![]),
            ((".spec.replicas", ".status.replicas", Some(".spec.selector")), vec![]),
            (
                ("", "", None),
                vec![
                    "spec.subresources.scale.specReplicasPath: Required value",
                    "spec.subresources.scale.statusReplicasPath: Required value",
                ],
            ),
            (
                ("spec.replicas", "status.replicas", Some("status.selector")),
                vec![
                    "spec.subresources.scale.specReplicasPath: Invalid value: \"spec.replicas\": must be a simple json path starting with .",
                    "spec.subresources.scale.statusReplicasPath: Invalid value: \"status.replicas\": must be a simple json path starting with .",
                    "spec.subresources.scale.labelSelectorPath: Invalid value: \"status.selector\": must be a simple json path starting with .",
                ],
            ),
            (
                (".status.replicas", ".spec.replicas", Some(".metadata.labels")),
                vec![
                    "spec.subresources.scale.specReplicasPath: Invalid value: \".status.replicas\": should be a json path under .spec",
                    "spec.subresources.scale.statusReplicasPath: Invalid value: \".spec.replicas\": should be a json path under .status",
                    "spec.subresources.scale.labelSelectorPath: Invalid value: \".metadata.labels\": should be a json path under either .spec or .status",
                ],
            ),
            // `.spec` alone is not "under" .spec; array notation is not refused.
            (
                (".spec", ".status.items[0].n", Some("")),
                vec![
                    "spec.subresources.scale.specReplicasPath: Invalid value: \".spec\": should be a json path under .spec",
                ],
            ),
        ];
        for ((spec, status, selector), want) in cases {
            let v = VersionBuilder::new("v1").scale(spec, status, selector).build();
            assert_eq!(
                messages(&validate_subresources(v.subresources.as_ref(), &base)),
                want,
                "{spec} {status} {selector:?}"
            );
        }
    }

    #[test]
    fn printer_columns() {
        let base = Path::root("spec").child("additionalPrinterColumns").index(0);
        let cases = [
            (VersionBuilder::new("v1").column("Age", "date", ".metadata.creationTimestamp"), vec![]),
            (VersionBuilder::new("v1").column("Size", "integer", ".spec.size").column_format("int64"), vec![]),
            (
                VersionBuilder::new("v1").column("", "", ""),
                vec![
                    "spec.additionalPrinterColumns[0].name: Required value",
                    "spec.additionalPrinterColumns[0].type: Required value: must be one of boolean,date,integer,number,string",
                    "spec.additionalPrinterColumns[0].JSONPath: Required value",
                ],
            ),
            (
                VersionBuilder::new("v1").column("X", "text", "spec.x").column_format("money"),
                vec![
                    "spec.additionalPrinterColumns[0].type: Invalid value: \"text\": must be one of boolean,date,integer,number,string",
                    "spec.additionalPrinterColumns[0].format: Invalid value: \"money\": must be one of byte,date,date-time,double,float,int32,int64,password",
                    "spec.additionalPrinterColumns[0].JSONPath: Invalid value: \"spec.x\": must be a simple json path starting with .",
                ],
            ),
        ];
        for (builder, want) in cases {
            let v = builder.build();
            let column = &v.additional_printer_columns.as_ref().expect("one column")[0];
            assert_eq!(messages(&validate_column(column, &base)), want, "{column:?}");
        }
    }

    #[test]
    fn deprecation_warnings() {
        let cases = [
            (VersionBuilder::new("v1").deprecation_warning("old"), vec!["can only be set for deprecated versions"]),
            (VersionBuilder::new("v1").deprecated(None), vec![]),
            (VersionBuilder::new("v1").deprecated(Some("use v2")), vec![]),
            (VersionBuilder::new("v1").deprecated(Some("")), vec!["must not be an empty string"]),
            (
                VersionBuilder::new("v1").deprecated(Some("tab\there")),
                vec!["must only contain printable UTF-8 characters; non-printable character found at index 3"],
            ),
        ];
        for (builder, want) in cases {
            let v = builder.build();
            assert_eq!(deprecation_warning_problems(&v), want, "{:?}", v.deprecation_warning);
        }
        let long = VersionBuilder::new("v1").deprecated(Some(&"x".repeat(257))).build();
        assert_eq!(deprecation_warning_problems(&long), vec!["must be <= 256 characters long"]);
    }
}
