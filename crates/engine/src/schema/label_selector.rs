//! apimachinery's `ValidateLabelSelector` (`meta/v1/validation`): a `metav1.LabelSelector`'s
//! `matchLabels` and `matchExpressions`, in kube's words and paths.

use super::names::{is_qualified_name, is_valid_label_value};
use crate::field::{FieldError, Path};
use serde_json::Value;

/// `ValidateLabelSelector` of `selector` (a JSON `LabelSelector`) at `path`;
/// `allow_invalid_label_value` is kube's `AllowInvalidLabelValueInSelector`, set on an
/// update when the stored object already had one.
pub fn validate(selector: &Value, allow_invalid_label_value: bool, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let labels_path = path.child("matchLabels");
    // kube walks a Go map, in no set order; sorted here.
    for (key, value) in selector.get("matchLabels").and_then(Value::as_object).into_iter().flatten() {
        errs.extend(label_name_errors(key, &labels_path));
        let value = value.as_str().unwrap_or_default();
        errs.extend(is_valid_label_value(value).into_iter().map(|m| FieldError::invalid(&labels_path, value, m)));
    }
    let expressions = selector.get("matchExpressions").and_then(Value::as_array).into_iter().flatten();
    for (i, requirement) in expressions.enumerate() {
        errs.extend(requirement_errors(
            requirement,
            allow_invalid_label_value,
            &path.child("matchExpressions").index(i),
        ));
    }
    errs
}

fn label_name_errors(key: &str, path: &Path) -> Vec<FieldError> {
    is_qualified_name(key).into_iter().map(|m| FieldError::invalid(path, key, m)).collect()
}

/// `ValidateLabelSelectorRequirement`.
fn requirement_errors(requirement: &Value, allow_invalid_label_value: bool, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let text = |k: &str| requirement.get(k).and_then(Value::as_str).unwrap_or_default();
    let values: Vec<&str> = requirement
        .get("values")
        .and_then(Value::as_array)
        .map(|v| v.iter().map(|s| s.as_str().unwrap_or_default()).collect())
        .unwrap_or_default();
    match text("operator") {
        "In" | "NotIn" if values.is_empty() => errs
            .push(FieldError::required(path.child("values"), "must be specified when `operator` is 'In' or 'NotIn'")),
        "Exists" | "DoesNotExist" if !values.is_empty() => errs.push(FieldError::forbidden(
            path.child("values"),
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        )),
        "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
        other => errs.push(FieldError::invalid(path.child("operator"), other, "not a valid selector operator")),
    }
    errs.extend(label_name_errors(text("key"), &path.child("key")));
    if !allow_invalid_label_value {
        for (i, value) in values.iter().enumerate() {
            let at = path.child("values").index(i);
            errs.extend(is_valid_label_value(value).into_iter().map(|m| FieldError::invalid(&at, *value, m)));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn requirements_are_checked_as_kube_checks_them() {
        let selector = json!({"matchExpressions": [
            {"key": "a", "operator": "In"},
            {"key": "b", "operator": "Exists", "values": ["x"]},
            {"key": "c", "operator": "Near", "values": ["-x"]},
        ]});
        let errs: Vec<String> = validate(&selector, false, &Path::root("s")).iter().map(ToString::to_string).collect();
        assert_eq!(
            errs[0],
            "s.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"
        );
        assert_eq!(
            errs[1],
            "s.matchExpressions[1].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
        );
        assert_eq!(errs[2], "s.matchExpressions[2].operator: Invalid value: \"Near\": not a valid selector operator");
        assert!(errs[3].starts_with("s.matchExpressions[2].values[0]: Invalid value: \"-x\": a valid label must be"));
        assert!(validate(&selector, true, &Path::root("s")).len() == 3);
    }
}
