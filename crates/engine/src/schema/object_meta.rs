//! Object metadata rules shared by every kind (apimachinery's `ValidateObjectMetaAccessor`
//! and `ValidateObjectMetaAccessorUpdate`), on the JSON `metadata` object, plus what
//! decoding an `ObjectMeta` does: refuse fields of the wrong type and drop unknown ones.
//!
//! Messages and paths are kube's: label and annotation problems are reported on
//! `metadata.labels` / `metadata.annotations` (not on the key), owner-reference problems
//! on `metadata.ownerReferences.<field>` (without an index), managed fields with one.

use super::gofmt::{go_time_string, with_value};
use super::names::{NameFn, is_qualified_name, is_valid_label_value, name_is_dns_label};
use crate::field::{ErrorType, FieldError, Path, go_quote};
use crate::meta::{MANAGED_FIELDS_ENTRY_FIELDS, OBJECT_META_FIELDS, OWNER_REFERENCE_FIELDS};
use serde_json::{Map, Value};

/// Annotations may hold at most this many bytes, keys and values together.
pub const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;
const FIELD_MANAGER_MAX_LENGTH: usize = 128;
const MAX_SUBRESOURCE_NAME_LENGTH: usize = 256;
const FINALIZER_ORPHAN: &str = "orphan";
const FINALIZER_FOREGROUND: &str = "foregroundDeletion";

fn text<'a>(m: &'a Value, k: &str) -> &'a str {
    m.get(k).and_then(Value::as_str).unwrap_or_default()
}

fn int(m: &Value, k: &str) -> i64 {
    m.get(k).and_then(Value::as_i64).unwrap_or(0)
}

fn string_map<'a>(m: &'a Value, k: &str) -> Vec<(&'a str, &'a str)> {
    m.get(k)
        .and_then(Value::as_object)
        .map(|o| o.iter().map(|(k, v)| (k.as_str(), v.as_str().unwrap_or_default())).collect())
        .unwrap_or_default()
}

fn list<'a>(m: &'a Value, k: &str) -> &'a [Value] {
    m.get(k).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
}

fn strings<'a>(m: &'a Value, k: &str) -> Vec<&'a str> {
    list(m, k).iter().filter_map(Value::as_str).collect()
}

/// Problems with the metadata of a new object. `name_fn` checks `name` and
/// `generateName` (custom resources: [`super::names::name_is_dns_subdomain`]);
/// `namespaced` says whether the kind requires a namespace or forbids one.
pub fn validate_object_meta(meta: &Value, namespaced: bool, name_fn: NameFn, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let generate_name = text(meta, "generateName");
    if !generate_name.is_empty() {
        for msg in name_fn(generate_name, true) {
            errs.push(FieldError::invalid(path.child("generateName"), generate_name, msg));
        }
    }
    let name = text(meta, "name");
    if name.is_empty() {
        errs.push(FieldError::required(path.child("name"), "name or generateName is required"));
    } else {
        for msg in name_fn(name, false) {
            errs.push(FieldError::invalid(path.child("name"), name, msg));
        }
    }
    let namespace = text(meta, "namespace");
    if namespaced {
        if namespace.is_empty() {
            errs.push(FieldError::required(path.child("namespace"), ""));
        } else {
            for msg in name_is_dns_label(namespace, false) {
                errs.push(FieldError::invalid(path.child("namespace"), namespace, msg));
            }
        }
    } else if !namespace.is_empty() {
        errs.push(FieldError::forbidden(path.child("namespace"), "not allowed on this type"));
    }
    errs.extend(validate_meta_fields(meta, path));
    errs
}

/// The rules of [`validate_object_meta`] after the name and namespace, which every kind
/// shares whatever its naming: generation, labels, annotations, owner references,
/// finalizers and managed fields.
pub fn validate_meta_fields(meta: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let generation = int(meta, "generation");
    if generation < 0 {
        errs.push(FieldError::invalid(path.child("generation"), generation, "must be greater than or equal to 0"));
    }
    errs.extend(validate_labels(meta, &path.child("labels")));
    errs.extend(validate_annotations(meta, &path.child("annotations")));
    errs.extend(validate_owner_references(meta, &path.child("ownerReferences")));
    errs.extend(validate_finalizers(meta, &path.child("finalizers")));
    errs.extend(validate_managed_fields(meta, &path.child("managedFields")));
    errs
}

/// Problems with the metadata of an update: the rules of a new object's metadata that
/// still apply, immutable fields, generation, and no new finalizers once deleting.
pub fn validate_object_meta_update(new: &Value, old: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if old.get("deletionTimestamp").is_some_and(|d| !d.is_null()) {
        let old_finalizers = strings(old, "finalizers");
        let mut extra: Vec<&str> =
            strings(new, "finalizers").into_iter().filter(|f| !old_finalizers.contains(f)).collect();
        extra.sort_unstable();
        extra.dedup();
        if !extra.is_empty() {
            let shown: Vec<String> = extra.iter().map(|f| go_quote(f)).collect();
            errs.push(FieldError::forbidden(
                path.child("finalizers"),
                format!(
                    "no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
                    shown.join(", ")
                ),
            ));
        }
    }
    let (new_generation, old_generation) = (int(new, "generation"), int(old, "generation"));
    if new_generation < old_generation {
        errs.push(FieldError::invalid(path.child("generation"), new_generation, "must not be decremented"));
    }
    for field in ["name", "namespace", "uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"] {
        let (n, o) = (new.get(field).unwrap_or(&Value::Null), old.get(field).unwrap_or(&Value::Null));
        if n != o {
            let immutable = "field is immutable".to_string();
            // kube shows a time as Go's `time.Time.String()`.
            if n.is_string() && field.ends_with("Timestamp") {
                errs.push(rendered(ErrorType::Invalid, path.child(field), go_time_string(Some(n)), immutable));
                continue;
            }
            let shown = if n.is_null() && field != "deletionGracePeriodSeconds" { &Value::from("") } else { n };
            errs.push(with_value(ErrorType::Invalid, path.child(field), shown, immutable));
        }
    }
    errs.extend(validate_labels(new, &path.child("labels")));
    errs.extend(validate_annotations(new, &path.child("annotations")));
    errs.extend(validate_owner_references(new, &path.child("ownerReferences")));
    errs.extend(validate_managed_fields(new, &path.child("managedFields")));
    errs
}

pub(crate) fn validate_labels(meta: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (k, v) in string_map(meta, "labels") {
        errs.extend(is_qualified_name(k).into_iter().map(|m| FieldError::invalid(path.clone(), k, m)));
        errs.extend(is_valid_label_value(v).into_iter().map(|m| FieldError::invalid(path.clone(), v, m)));
    }
    errs
}

pub(crate) fn validate_annotations(meta: &Value, path: &Path) -> Vec<FieldError> {
    let annotations = string_map(meta, "annotations");
    let mut errs = Vec::new();
    for (k, _) in &annotations {
        // Like a qualified name, except that case does not matter.
        errs.extend(is_qualified_name(&k.to_lowercase()).into_iter().map(|m| FieldError::invalid(path.clone(), *k, m)));
    }
    let size: usize = annotations.iter().map(|(k, v)| k.len() + v.len()).sum();
    if size > TOTAL_ANNOTATION_SIZE_LIMIT {
        errs.push(FieldError::too_long(path.clone(), TOTAL_ANNOTATION_SIZE_LIMIT));
    }
    errs
}

/// `schema.ParseGroupVersion`: `(group, version)`, or the error sentence.
pub fn parse_group_version(gv: &str) -> Result<(&str, &str), String> {
    if gv.is_empty() || gv == "/" {
        return Ok(("", ""));
    }
    match gv.matches('/').count() {
        0 => Ok(("", gv)),
        1 => Ok(gv.split_once('/').unwrap_or(("", gv))),
        _ => Err(format!("unexpected GroupVersion string: {gv}")),
    }
}

/// What Go prints for a pointer that is not nil: an address; this one stands for any.
const ADDRESS: &str = "0xc000000000";

/// Go's `%#v` of a `metav1.OwnerReference` (pointers print as nil or as an opaque address).
fn owner_reference_v(r: &Value) -> String {
    let ptr = |k: &str| match r.get(k).and_then(Value::as_bool) {
        Some(_) => format!("(*bool)({ADDRESS})"),
        None => "(*bool)(nil)".to_string(),
    };
    format!(
        "v1.OwnerReference{{APIVersion:{}, Kind:{}, Name:{}, UID:{}, Controller:{}, BlockOwnerDeletion:{}}}",
        go_quote(text(r, "apiVersion")),
        go_quote(text(r, "kind")),
        go_quote(text(r, "name")),
        go_quote(text(r, "uid")),
        ptr("controller"),
        ptr("blockOwnerDeletion")
    )
}

/// Moves the owner references the errors of one metadata check quote to the stand-in
/// addresses of that check. kube reads a custom resource's through an accessor that copies
/// them on every call, so each check an update runs quotes them at fresh addresses, and the
/// aggregate message (which folds equal strings only) repeats the error once per check; a
/// typed object's stay put, and so do those of one check.
pub fn at_check_addresses(errors: &mut [FieldError], check: usize) {
    let moved = format!("0xc{:09x}", check * 0x10);
    for e in errors.iter_mut().filter(|e| e.detail.contains("v1.OwnerReference{")) {
        e.detail = e.detail.replace(ADDRESS, &moved);
    }
}

fn rendered(error_type: ErrorType, field: Path, value: String, detail: String) -> FieldError {
    FieldError { error_type, field: field.into(), value: None, detail: format!("{value}: {detail}") }
}

fn validate_owner_references(meta: &Value, path: &Path) -> Vec<FieldError> {
    let refs = list(meta, "ownerReferences");
    let mut errs = Vec::new();
    let mut first_controller: Option<String> = None;
    for r in refs {
        let api_version = text(r, "apiVersion");
        let kind = text(r, "kind");
        let version = parse_group_version(api_version).map(|(_, v)| v).unwrap_or_default();
        if version.is_empty() {
            errs.push(FieldError::invalid(path.child("apiVersion"), api_version, "version must not be empty"));
        }
        if kind.is_empty() {
            errs.push(FieldError::invalid(path.child("kind"), kind, "kind must not be empty"));
        }
        if text(r, "name").is_empty() {
            errs.push(FieldError::invalid(path.child("name"), "", "name must not be empty"));
        }
        if text(r, "uid").is_empty() {
            errs.push(FieldError::invalid(path.child("uid"), "", "uid must not be empty"));
        }
        if api_version == "v1" && kind == "Event" {
            let detail = "/v1, Kind=Event is disallowed from being an owner".to_string();
            errs.push(rendered(ErrorType::Invalid, path.clone(), owner_reference_v(r), detail));
        }
        if r.get("controller").and_then(Value::as_bool) == Some(true) {
            let current = format!("{kind}/{}", text(r, "name"));
            match &first_controller {
                Some(first) => {
                    let all: Vec<String> = refs.iter().map(owner_reference_v).collect();
                    let detail = format!(
                        "Only one reference can have Controller set to true. Found \"true\" in references for {first} and {current}"
                    );
                    errs.push(rendered(
                        ErrorType::Invalid,
                        path.clone(),
                        format!("[]v1.OwnerReference{{{}}}", all.join(", ")),
                        detail,
                    ));
                }
                None => first_controller = Some(current),
            }
        }
    }
    errs
}

fn validate_finalizers(meta: &Value, path: &Path) -> Vec<FieldError> {
    let finalizers = strings(meta, "finalizers");
    let mut errs = Vec::new();
    for f in &finalizers {
        errs.extend(is_qualified_name(f).into_iter().map(|m| FieldError::invalid(path.clone(), *f, m)));
    }
    if finalizers.contains(&FINALIZER_ORPHAN) && finalizers.contains(&FINALIZER_FOREGROUND) {
        let shown: Vec<String> = finalizers.iter().map(|f| go_quote(f)).collect();
        errs.push(rendered(
            ErrorType::Invalid,
            path.clone(),
            format!("[]string{{{}}}", shown.join(", ")),
            format!("finalizer {FINALIZER_ORPHAN} and {FINALIZER_FOREGROUND} cannot be both set"),
        ));
    }
    errs
}

fn validate_managed_fields(meta: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, entry) in list(meta, "managedFields").iter().enumerate() {
        let p = path.index(i);
        let operation = text(entry, "operation");
        if operation != "Apply" && operation != "Update" {
            errs.push(FieldError::invalid(p.child("operation"), operation, "must be `Apply` or `Update`"));
        }
        let fields_type = text(entry, "fieldsType");
        if !fields_type.is_empty() && fields_type != "FieldsV1" {
            errs.push(FieldError::invalid(p.child("fieldsType"), fields_type, "must be `FieldsV1`"));
        }
        let manager = text(entry, "manager");
        if manager.len() > FIELD_MANAGER_MAX_LENGTH {
            errs.push(FieldError::too_long(p.child("manager"), FIELD_MANAGER_MAX_LENGTH));
        }
        let mut position = 0;
        for c in manager.chars() {
            if c.is_control() || (c.is_whitespace() && c != ' ') {
                let detail = format!("invalid character U+{:04X} (at position {position})", u32::from(c));
                errs.push(FieldError::invalid(p.child("manager"), manager, detail));
            }
            position += c.len_utf8();
        }
        if text(entry, "subresource").len() > MAX_SUBRESOURCE_NAME_LENGTH {
            errs.push(FieldError::too_long(p.child("subresource"), MAX_SUBRESOURCE_NAME_LENGTH));
        }
    }
    errs
}

fn retain_known(map: &mut Map<String, Value>, known: &[&str], path: &str, unknown: &mut Vec<String>) {
    map.retain(|k, _| {
        let keep = known.contains(&k.as_str());
        if !keep {
            unknown.push(format!("{path}.{k}"));
        }
        keep
    });
}

/// What a round trip through `ObjectMeta` does to a `metadata` object (`path` is where it
/// sits, e.g. `metadata`): unknown fields are dropped and reported, empty optional fields
/// disappear, `null` label and annotation values and finalizers become `""`.
pub fn coerce(meta: &mut Value, path: &str, unknown: &mut Vec<String>) {
    let Some(map) = meta.as_object_mut() else { return };
    retain_known(map, OBJECT_META_FIELDS, path, unknown);
    for (list, known) in [("ownerReferences", OWNER_REFERENCE_FIELDS), ("managedFields", MANAGED_FIELDS_ENTRY_FIELDS)] {
        if let Some(items) = map.get_mut(list).and_then(Value::as_array_mut) {
            for (i, item) in items.iter_mut().enumerate() {
                if let Some(o) = item.as_object_mut() {
                    retain_known(o, known, &format!("{path}.{list}[{i}]"), unknown);
                    o.retain(|k, v| {
                        !(v.is_null() || (list == "managedFields" && v.as_str() == Some("") && k != "apiVersion"))
                    });
                }
            }
        }
    }
    for key in ["labels", "annotations"] {
        if let Some(o) = map.get_mut(key).and_then(Value::as_object_mut) {
            for v in o.values_mut().filter(|v| v.is_null()) {
                *v = Value::from("");
            }
        }
    }
    // Go decodes a `null` item of a `[]string` as the empty string.
    if let Some(items) = map.get_mut("finalizers").and_then(Value::as_array_mut) {
        for v in items.iter_mut().filter(|v| v.is_null()) {
            *v = Value::from("");
        }
    }
    map.retain(|k, v| match v {
        Value::Null => false,
        Value::String(s) => !s.is_empty() || k == "creationTimestamp",
        Value::Number(n) => k == "deletionGracePeriodSeconds" || n.as_i64() != Some(0),
        Value::Object(o) => !o.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Bool(_) => true,
    });
}

#[cfg(test)]
#[path = "object_meta_tests.rs"]
mod tests;
