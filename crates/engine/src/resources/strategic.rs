//! kube's strategic merge patch of a built-in kind (`strategicpatch.StrategicMergeMapPatch`
//! as the patch handler runs it), in its order and words.
//!
//! Maps merge and lists are replaced, except where the kind's Go struct tags a list
//! `patchStrategy:"merge"`: a list of scalars is then a union (`finalizers`), and a list of
//! objects is merged item by item on its `patchMergeKey` (a ServiceAccount's `secrets` by
//! `name`). The directives `kubectl apply` and `kubectl patch` send are understood:
//! `$patch` (`replace`, `delete`, in maps and list items), `$setElementOrder/<list>`,
//! `$deleteFromPrimitiveList/<list>` and `$retainKeys`. Treating the patch as a merge patch
//! lost list items: `kubectl apply` of a ConfigMap with one more finalizer sends only the
//! new one, and ours replaced the list with it.
//!
//! Where kube's errors are plain Go errors they are answered as kube does, a 500 without a
//! reason; its named format errors are 400s, and lists of lists 422.

use super::builtin::types::{GoStruct, GoType, OBJECT_META, SchemaOr};
use crate::schema::gofmt::plain_v;
use serde_json::{Map, Value};

/// Fields whose Go struct tag says `patchStrategy:"merge"`: the struct (as Go names it,
/// without its package), the JSON field, and its `patchMergeKey` (empty for scalars). The
/// published OpenAPI says the same (`x-kubernetes-patch-strategy`); a test holds the two
/// together.
const MERGE_LISTS: &[(&str, &str, &str)] = &[
    ("ObjectMeta", "finalizers", ""),
    ("ObjectMeta", "ownerReferences", "uid"),
    ("ServiceAccount", "secrets", "name"),
    ("NamespaceStatus", "conditions", "type"),
    ("JSONSchemaProps", "x-kubernetes-validations", "rule"),
    ("ValidatingWebhookConfiguration", "webhooks", "name"),
    ("MutatingWebhookConfiguration", "webhooks", "name"),
    ("ValidatingWebhook", "matchConditions", "name"),
    ("MutatingWebhook", "matchConditions", "name"),
];

const DIRECTIVE: &str = "$patch";
const RETAIN_KEYS: &str = "$retainKeys";
const SET_ELEMENT_ORDER: &str = "$setElementOrder";
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList";

/// Why a strategic merge patch did not apply, as kube's handler answers it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StrategicError {
    /// A plain Go error passed on: 500 without a reason.
    #[error("{0}")]
    Internal(String),
    /// One of `mergepatch`'s format errors: 400.
    #[error("{0}")]
    BadRequest(String),
    /// Lists of lists: 422.
    #[error("{0}")]
    Unprocessable(String),
}

type Result<T> = std::result::Result<T, StrategicError>;

/// Where in the kind a value sits, for its fields' Go types and tags.
#[derive(Clone, Copy)]
enum Meta {
    /// The kind itself: its struct, with `apiVersion`, `kind` and `metadata` beside it.
    Kind(&'static GoStruct),
    Struct(&'static GoStruct),
    /// A Go map: every value is of this type.
    Map(&'static GoType),
    /// A Go type without JSON fields (`v1.JSON`, a CRD schema's unions): any lookup fails.
    Opaque(&'static str),
    /// A scalar.
    Scalar,
}

/// What a field is: the Go type of its value (of its items for a list), and its merge
/// key when it merges (`Some("")` for scalars).
struct FieldMeta {
    meta: Meta,
    merge_key: Option<&'static str>,
}

fn meta_of(ty: &'static GoType) -> Meta {
    match ty {
        GoType::Struct(s) => Meta::Struct(s),
        GoType::Union(SchemaOr::Array, _) => Meta::Opaque("JSONSchemaPropsOrArray"),
        GoType::Union(SchemaOr::Bool, _) => Meta::Opaque("JSONSchemaPropsOrBool"),
        GoType::Union(SchemaOr::Strings, _) => Meta::Opaque("JSONSchemaPropsOrStringArray"),
        GoType::Map(items) => Meta::Map(items),
        GoType::Slice { items, .. } => meta_of(items),
        GoType::Json => Meta::Opaque("JSON"),
        GoType::Raw => Meta::Opaque("FieldsV1"),
        _ => Meta::Scalar,
    }
}

impl Meta {
    /// `LookupPatchMetadataForStruct` / `ForSlice`: the field `key` of this value.
    fn field(self, key: &str) -> Result<FieldMeta> {
        let plain = |meta| Ok(FieldMeta { meta, merge_key: None });
        let s = match self {
            Meta::Kind(_) if key == "metadata" => return plain(Meta::Struct(&OBJECT_META)),
            Meta::Kind(_) if key == "apiVersion" || key == "kind" => return plain(Meta::Scalar),
            Meta::Kind(s) | Meta::Struct(s) => s,
            Meta::Map(items) => return plain(meta_of(items)),
            Meta::Opaque(name) => return Err(no_field(name, key)),
            Meta::Scalar => return Err(no_field("", key)),
        };
        let name = s.short_name();
        let Some(f) = s.get(key) else { return Err(no_field(name, key)) };
        let merge_key = MERGE_LISTS.iter().find(|(st, field, _)| *st == name && *field == key).map(|(_, _, k)| *k);
        Ok(FieldMeta { meta: meta_of(&f.ty), merge_key })
    }

    fn name(self) -> &'static str {
        match self {
            Meta::Kind(s) | Meta::Struct(s) => s.short_name(),
            Meta::Opaque(name) => name,
            Meta::Map(_) | Meta::Scalar => "",
        }
    }
}

fn no_field(name: &str, key: &str) -> StrategicError {
    StrategicError::Internal(format!("unable to find api field in struct {name} for the json field \"{key}\""))
}

/// Applies `patch` (a decoded JSON object) to `original`, an object of the kind `kind`.
pub fn apply(original: &Value, patch: Map<String, Value>, kind: &'static GoStruct) -> Result<Value> {
    let original = original.as_object().cloned().unwrap_or_default();
    merge_map(original, patch, Meta::Kind(kind)).map(Value::Object)
}

fn merge_map(
    mut original: Map<String, Value>,
    mut patch: Map<String, Value>,
    meta: Meta,
) -> Result<Map<String, Value>> {
    if let Some(directive) = patch.get(DIRECTIVE) {
        return match directive.as_str() {
            Some("replace") => {
                patch.remove(DIRECTIVE);
                Ok(patch)
            }
            Some("delete") => Ok(Map::new()),
            _ => Err(bad_patch_type(directive, &patch)),
        };
    }
    retain_keys(&mut original, &mut patch)?;
    merge_element_orders(&mut original, &mut patch, meta)?;
    for (key, patch_value) in patch {
        let (key, delete_list) = match key.starts_with(DELETE_FROM_PRIMITIVE_LIST) {
            true => (directive_target(&key, DELETE_FROM_PRIMITIVE_LIST)?, true),
            false => (key, false),
        };
        if patch_value.is_null() {
            original.remove(&key);
            continue;
        }
        let same_type = original.get(&key).is_some_and(|o| go_type(o) == go_type(&patch_value));
        if !same_type {
            if !delete_list {
                put(&mut original, key, patch_value);
            }
            continue;
        }
        let merged = match (original.remove(&key), patch_value) {
            (Some(Value::Object(o)), Value::Object(p)) => Value::Object(merge_map(o, p, meta.field(&key)?.meta)?),
            (Some(Value::Array(o)), Value::Array(p)) => {
                let f = meta.field(&key)?;
                Value::Array(merge_list_field(o, p, &f, delete_list)?)
            }
            (_, scalar) => scalar,
        };
        original.insert(key, merged);
    }
    Ok(original)
}

/// A patch value where the original has none, or one of another type: itself, without
/// its nulls and directives.
fn put(original: &mut Map<String, Value>, key: String, mut value: Value) {
    discard_nulls(&mut value);
    match remove_directives(value) {
        Some(v) => original.insert(key, v),
        None => original.remove(&key),
    };
}

/// `mergeSliceHandler`: a list that merges (or a deletion list) is merged, any other is
/// the patch's.
fn merge_list_field(original: Vec<Value>, patch: Vec<Value>, f: &FieldMeta, delete_list: bool) -> Result<Vec<Value>> {
    match (f.merge_key, delete_list) {
        (Some(key), _) => merge_list(original, patch, f.meta, key, delete_list),
        (None, true) => merge_list(original, patch, f.meta, "", true),
        (None, false) => Ok(patch),
    }
}

/// `$retainKeys`: the original keeps only the keys it lists, which must name every key the
/// patch sets.
fn retain_keys(original: &mut Map<String, Value>, patch: &mut Map<String, Value>) -> Result<()> {
    let Some(retained) = patch.remove(RETAIN_KEYS) else { return Ok(()) };
    let bad = || StrategicError::BadRequest("invalid patch format of retainKeys".into());
    let Value::Array(retained) = retained else { return Err(bad()) };
    let listed = |k: &str| retained.iter().any(|r| r.as_str() == Some(k));
    for (k, v) in patch.iter() {
        let directive = k.starts_with(DELETE_FROM_PRIMITIVE_LIST) || k.starts_with(SET_ELEMENT_ORDER);
        if !v.is_null() && !directive && !listed(k) {
            return Err(bad());
        }
    }
    original.retain(|k, _| listed(k));
    Ok(())
}

/// `$setElementOrder/<list>`: merges the list now, and orders it as the directive says,
/// the original's other items among them where they were.
fn merge_element_orders(original: &mut Map<String, Value>, patch: &mut Map<String, Value>, meta: Meta) -> Result<()> {
    let keys: Vec<String> = patch.keys().filter(|k| k.starts_with(SET_ELEMENT_ORDER)).cloned().collect();
    for key in keys {
        let Some(order) = patch.remove(&key) else { continue };
        let Value::Array(order) = order else { return Err(bad_arg_type("[]interface {}", &order)) };
        let field = directive_target(&key, SET_ELEMENT_ORDER)?;
        let original_list = list_at(original, &field)?;
        let patch_list = list_at(patch, &field)?;
        let f = meta.field(&field)?;
        let merge_key = f.merge_key.unwrap_or("");
        check_against_order(patch_list.as_deref().unwrap_or_default(), &order, merge_key)?;
        let merged = match (original_list.clone(), patch_list.clone()) {
            (Some(o), None) => o,
            (None, Some(p)) => match remove_directives(Value::Array(p)) {
                Some(Value::Array(p)) => p,
                _ => continue,
            },
            (Some(o), Some(p)) => merge_list_field(o, p, &f, false)?,
            (None, None) => continue,
        };
        let (in_order, server_only) = partition(merged, &order, merge_key)?;
        let original_list = original_list.unwrap_or_default();
        let kind = element_type(&original_list, patch_list.as_deref().unwrap_or_default())?;
        let both = normalize_element_order(in_order, server_only, &order, &original_list, merge_key, kind)?;
        original.insert(field.clone(), Value::Array(both));
        patch.remove(&field);
    }
    Ok(())
}

/// The list a directive names (`$setElementOrder/finalizers` → `finalizers`).
fn directive_target(key: &str, prefix: &str) -> Result<String> {
    match key.split_once('/') {
        Some((p, rest)) if p == prefix => Ok(rest.to_string()),
        _ => Err(StrategicError::BadRequest(match prefix {
            DELETE_FROM_PRIMITIVE_LIST => "invalid patch format of primitive list".into(),
            _ => "invalid patch format of setElementOrder list".into(),
        })),
    }
}

fn list_at(map: &Map<String, Value>, key: &str) -> Result<Option<Vec<Value>>> {
    match map.get(key) {
        None => Ok(None),
        Some(Value::Array(items)) => Ok(Some(items.clone())),
        Some(other) => Err(bad_arg_type("[]interface {}", other)),
    }
}

/// `validatePatchWithSetOrderList`: the patch's items come in the directive's order.
fn check_against_order(patch_list: &[Value], order: &[Value], merge_key: &str) -> Result<()> {
    if order.is_empty() || patch_list.is_empty() {
        return Ok(());
    }
    let kept = match merge_key.is_empty() {
        true => patch_list.to_vec(),
        false => split_deletions(patch_list.to_vec())?.0,
    };
    let (mut p, mut o) = (0, 0);
    while p < kept.len() && o < order.len() {
        if kept[p].get(DIRECTIVE).is_some() {
            p += 1;
            continue;
        }
        if merge_key_equal(&kept[p], &order[o], merge_key)? {
            p += 1;
        }
        o += 1;
    }
    if p < kept.len() && o >= order.len() {
        return Err(StrategicError::Internal(format!(
            "The order in patch list:\n{}\n doesn't match {SET_ELEMENT_ORDER} list:\n{}\n",
            plain_v(&Value::Array(patch_list.to_vec())),
            plain_v(&Value::Array(order.to_vec()))
        )));
    }
    Ok(())
}

fn merge_key_equal(left: &Value, right: &Value, merge_key: &str) -> Result<bool> {
    if merge_key.is_empty() {
        return Ok(left == right);
    }
    let key_of = |v: &Value| -> Result<Value> {
        let m = v.as_object().ok_or_else(|| bad_arg_type("map[string]interface {}", v))?;
        m.get(merge_key).cloned().ok_or_else(|| no_merge_key(m, merge_key))
    };
    Ok(key_of(left)? == key_of(right)?)
}

/// `mergeSlice`: a list that merges, of scalars (a union, or a deletion) or of objects
/// (merged on `merge_key`), ordered as kube orders it.
fn merge_list(
    original: Vec<Value>,
    patch: Vec<Value>,
    meta: Meta,
    merge_key: &str,
    delete_list: bool,
) -> Result<Vec<Value>> {
    if original.is_empty() && patch.is_empty() {
        return Ok(original);
    }
    let kind = element_type(&original, &patch)?;
    let (original, patch, merged) = if kind != GoKind::Map {
        if delete_list {
            return Ok(original.into_iter().filter(|v| !patch.contains(v)).collect());
        }
        let merged = dedupe_scalars(original.iter().chain(&patch).cloned().collect());
        (original, patch, merged)
    } else {
        if merge_key.is_empty() {
            return Err(StrategicError::Internal(format!("cannot merge lists without merge key for {}", meta.name())));
        }
        let (original, patch) = special_items(original, patch, merge_key)?;
        let merged = merge_items(original.clone(), &patch, merge_key, meta)?;
        (original, patch, merged)
    };
    let key = if kind == GoKind::Map { merge_key } else { "" };
    let (in_patch, server_only) = partition(merged, &patch, key)?;
    normalize_element_order(in_patch, server_only, &patch, &original, key, kind)
}

/// `mergeSliceWithSpecialElements`: list items carrying `$patch` delete the original's
/// items with their key, or make the rest of the patch replace the list.
fn special_items(mut original: Vec<Value>, patch: Vec<Value>, merge_key: &str) -> Result<(Vec<Value>, Vec<Value>)> {
    let mut plain = Vec::new();
    let mut replace = false;
    for item in patch {
        let Some(m) = item.as_object() else { continue };
        let Some(directive) = m.get(DIRECTIVE) else {
            plain.push(item);
            continue;
        };
        match directive.as_str() {
            Some("delete") => {
                let Some(value) = m.get(merge_key) else { return Err(no_merge_key(m, merge_key)) };
                original.retain(|o| o.get(merge_key) != Some(value));
            }
            Some("replace") => replace = true,
            Some("merge") => {
                return Err(StrategicError::Internal("merging lists cannot yet be specified in the patch".into()));
            }
            _ => return Err(bad_patch_type(directive, m)),
        }
    }
    Ok(if replace { (plain, Vec::new()) } else { (original, plain) })
}

/// `mergeSliceWithoutSpecialElements`: each patch item merges into the original's item
/// with its key, or is added at the end.
fn merge_items(mut original: Vec<Value>, patch: &[Value], merge_key: &str, meta: Meta) -> Result<Vec<Value>> {
    for item in patch {
        let Some(m) = item.as_object() else { continue };
        let Some(value) = m.get(merge_key) else { return Err(no_merge_key(m, merge_key)) };
        match original.iter().position(|o| o.get(merge_key) == Some(value)) {
            Some(i) => {
                let o = std::mem::take(&mut original[i]).as_object().cloned().unwrap_or_default();
                original[i] = Value::Object(merge_map(o, m.clone(), meta)?);
            }
            None => original.push(item.clone()),
        }
    }
    Ok(original)
}

/// Splits `merged` into the items `by` names (by key, or equal scalars) and the rest.
fn partition(merged: Vec<Value>, by: &[Value], merge_key: &str) -> Result<(Vec<Value>, Vec<Value>)> {
    let mut named = Vec::new();
    let mut rest = Vec::new();
    for item in merged {
        let found = if merge_key.is_empty() {
            by.contains(&item)
        } else {
            let m = item.as_object().ok_or_else(|| bad_arg_type("map[string]interface {}", &item))?;
            let value = m.get(merge_key).ok_or_else(|| no_merge_key(m, merge_key))?;
            by.iter().any(|b| b.get(merge_key) == Some(value))
        };
        if found { named.push(item) } else { rest.push(item) }
    }
    Ok((named, rest))
}

/// `normalizeElementOrder`: the patch's items in the patch's order, the server's others
/// in the server's, then the two interleaved by where the server had them.
fn normalize_element_order(
    patch: Vec<Value>,
    server_only: Vec<Value>,
    patch_order: &[Value],
    server_order: &[Value],
    merge_key: &str,
    kind: GoKind,
) -> Result<Vec<Value>> {
    let patch = sort_by_order(patch, patch_order, merge_key, kind)?;
    let server_only = sort_by_order(server_only, server_order, merge_key, kind)?;
    Ok(merge_sorted(server_only, patch, server_order, merge_key, kind))
}

/// `normalizeSliceOrder`: a stable sort by place in `order`; deletions go last.
fn sort_by_order(items: Vec<Value>, order: &[Value], merge_key: &str, kind: GoKind) -> Result<Vec<Value>> {
    let (mut items, deletions) = match kind {
        GoKind::Map => {
            for item in items.iter().chain(order) {
                let m = item.as_object().ok_or_else(|| bad_arg_type("map[string]interface {}", item))?;
                if !m.contains_key(merge_key) {
                    return Err(no_merge_key(m, merge_key));
                }
            }
            split_deletions(items)?
        }
        _ => (items, Vec::new()),
    };
    // Every item is in `order` here, so any stable sort gives Go's.
    items.sort_by_key(|item| index_in(order, item, merge_key, kind).unwrap_or(usize::MAX));
    items.extend(deletions);
    Ok(items)
}

/// `mergeSortedSlice`: inserts the server's items among the patch's, keeping both orders.
fn merge_sorted(
    left: Vec<Value>,
    right: Vec<Value>,
    server_order: &[Value],
    merge_key: &str,
    kind: GoKind,
) -> Vec<Value> {
    let mut out = Vec::with_capacity(left.len() + right.len());
    let (mut left, mut right) = (left.into_iter().peekable(), right.into_iter().peekable());
    loop {
        let take_left = match (left.peek(), right.peek()) {
            (None, None) => return out,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(l), Some(r)) => {
                match (index_in(server_order, l, merge_key, kind), index_in(server_order, r, merge_key, kind)) {
                    (Some(li), Some(ri)) => li < ri,
                    _ => false,
                }
            }
        };
        let next = if take_left { left.next() } else { right.next() };
        out.extend(next);
    }
}

/// Where `item` is in `list`: by its merge key's value for objects (a missing key
/// matches a missing key, as Go's nil does), else by equality.
fn index_in(list: &[Value], item: &Value, merge_key: &str, kind: GoKind) -> Option<usize> {
    match kind {
        GoKind::Map => {
            let key_of = |v: &Value| v.as_object().and_then(|m| m.get(merge_key)).cloned();
            let wanted = key_of(item);
            list.iter().position(|v| key_of(v) == wanted)
        }
        _ => list.iter().position(|v| v == item),
    }
}

/// `extractToDeleteItems`: the items that are no `$patch: delete`, and those that are.
fn split_deletions(items: Vec<Value>) -> Result<(Vec<Value>, Vec<Value>)> {
    let mut kept = Vec::new();
    let mut deletions = Vec::new();
    for item in items {
        let m = item.as_object().ok_or_else(|| bad_arg_type("map[string]interface {}", &item))?;
        if m.get(DIRECTIVE).and_then(Value::as_str) == Some("delete") {
            deletions.push(item);
        } else {
            kept.push(item);
        }
    }
    Ok((kept, deletions))
}

/// `deduplicateScalars`: each repeat is replaced by the last item, as Go's does it.
fn dedupe_scalars(mut s: Vec<Value>) -> Vec<Value> {
    if s.is_empty() {
        return s;
    }
    let mut last = s.len() - 1;
    let mut i = 0;
    while i < last {
        let mut j = i + 1;
        while j <= last {
            if s[i] == s[j] {
                s[j] = s[last].clone();
                s.truncate(last);
                last -= 1;
                continue;
            }
            j += 1;
        }
        i += 1;
    }
    s
}

/// A decoded JSON value's Go type, as `reflect.TypeOf` tells them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GoKind {
    Nil,
    Bool,
    Float,
    String,
    Slice,
    Map,
}

fn go_type(v: &Value) -> GoKind {
    match v {
        Value::Null => GoKind::Nil,
        Value::Bool(_) => GoKind::Bool,
        Value::Number(_) => GoKind::Float,
        Value::String(_) => GoKind::String,
        Value::Array(_) => GoKind::Slice,
        Value::Object(_) => GoKind::Map,
    }
}

/// `sliceElementType`: every item of both lists has one type, which is no list.
fn element_type(original: &[Value], patch: &[Value]) -> Result<GoKind> {
    let mut kind = None;
    for v in original.iter().chain(patch) {
        let t = go_type(v);
        match kind {
            None if t == GoKind::Slice => {
                return Err(StrategicError::Unprocessable("lists of lists are not supported".into()));
            }
            None => kind = Some(t),
            Some(k) if k != t => {
                let both = Value::Array(vec![Value::Array(original.to_vec()), Value::Array(patch.to_vec())]);
                return Err(StrategicError::Internal(format!(
                    "list element types are not identical: {}",
                    plain_v(&both)
                )));
            }
            Some(_) => {}
        }
    }
    kind.ok_or_else(|| StrategicError::Internal("no elements in any of the given slices".into()))
}

/// `removeDirectives`: an object carrying `$patch` goes, wherever it is.
fn remove_directives(v: Value) -> Option<Value> {
    match v {
        Value::Object(m) if m.contains_key(DIRECTIVE) => None,
        Value::Object(m) => {
            Some(Value::Object(m.into_iter().filter_map(|(k, v)| Some((k, remove_directives(v)?))).collect()))
        }
        Value::Array(items) => Some(Value::Array(items.into_iter().filter_map(remove_directives).collect())),
        other => Some(other),
    }
}

/// `discardNullValuesFromPatch`: an object's null members go, at every depth.
fn discard_nulls(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|_, v| !v.is_null());
            m.values_mut().for_each(discard_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(discard_nulls),
        _ => {}
    }
}

fn no_merge_key(m: &Map<String, Value>, merge_key: &str) -> StrategicError {
    StrategicError::Internal(format!(
        "map: {} does not contain declared merge key: {merge_key}",
        plain_v(&Value::Object(m.clone()))
    ))
}

/// `ErrBadArgType`: Go's names of the type wanted and the type found.
fn bad_arg_type(expected: &str, actual: &Value) -> StrategicError {
    let actual = match go_type(actual) {
        GoKind::Nil => "%!s(<nil>)",
        GoKind::Bool => "bool",
        GoKind::Float => go_number_type(actual),
        GoKind::String => "string",
        GoKind::Slice => "[]interface {}",
        GoKind::Map => "map[string]interface {}",
    };
    StrategicError::Internal(format!("expected a {expected}, but received a {actual}"))
}

/// The Go type of a number in the patch as kube decodes it (unstructured JSON): an
/// integer literal is an `int64`, anything else a `float64`.
fn go_number_type(n: &Value) -> &'static str {
    match n.is_i64() {
        true => "int64",
        false => "float64",
    }
}

/// `ErrBadPatchType`: the directive with `%s`, the map with `%v`.
fn bad_patch_type(directive: &Value, m: &Map<String, Value>) -> StrategicError {
    let shown = match directive {
        Value::String(s) => s.clone(),
        Value::Bool(b) => format!("%!s(bool={b})"),
        Value::Number(_) => format!("%!s({}={})", go_number_type(directive), plain_v(directive)),
        Value::Null => "%!s(<nil>)".into(),
        other => plain_v(other),
    };
    StrategicError::Internal(format!("unknown patch type: {shown} in map: {}", plain_v(&Value::Object(m.clone()))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::builtin::types::{CONFIG_MAP, SERVICE_ACCOUNT};
    use serde_json::json;

    fn patched(kind: &'static GoStruct, original: Value, patch: Value) -> Result<Value> {
        let Value::Object(patch) = patch else { panic!("a patch object") };
        apply(&original, patch, kind)
    }

    #[test]
    fn merging_lists_keep_what_the_patch_does_not_name() {
        // kubectl apply's patch for one more finalizer, and kube's answer.
        let cm = json!({"metadata": {"name": "c", "finalizers": ["example.com/a"]}});
        let patch = json!({"metadata": {"$setElementOrder/finalizers": ["example.com/a", "example.com/b"], "finalizers": ["example.com/b"]}});
        assert_eq!(
            patched(&CONFIG_MAP, cm.clone(), patch).expect("patched")["metadata"]["finalizers"],
            json!(["example.com/a", "example.com/b"])
        );
        let removed = json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["example.com/a"]}});
        assert_eq!(patched(&CONFIG_MAP, cm, removed).expect("patched")["metadata"]["finalizers"], json!([]));
        // The oracle: a new secret comes first, the server's after it.
        let sa = json!({"secrets": [{"name": "a"}]});
        assert_eq!(
            patched(&SERVICE_ACCOUNT, sa.clone(), json!({"secrets": [{"name": "b"}]})).expect("patched")["secrets"],
            json!([{"name": "b"}, {"name": "a"}])
        );
        assert_eq!(
            patched(&SERVICE_ACCOUNT, sa, json!({"secrets": [{"$patch": "delete", "name": "a"}]})).expect("patched")["secrets"],
            json!([])
        );
    }

    /// The oracle's orders: new finalizers first, the server's after them where they were.
    #[test]
    fn finalizers_merge_and_order_as_kube_orders_them() {
        let finalizers = |original: Value, patch: Value| {
            let cm = json!({"metadata": {"name": "c", "finalizers": original}});
            patched(&CONFIG_MAP, cm, json!({"metadata": patch})).expect("patched")["metadata"]["finalizers"].clone()
        };
        assert_eq!(
            finalizers(json!(["a/1", "a/2", "a/3"]), json!({"finalizers": ["a/4", "a/2"]})),
            json!(["a/4", "a/1", "a/2", "a/3"])
        );
        assert_eq!(
            finalizers(
                json!(["a/4", "a/1", "a/2", "a/3"]),
                json!({"finalizers": ["a/5"], "$deleteFromPrimitiveList/finalizers": ["a/1"]})
            ),
            json!(["a/5", "a/4", "a/2", "a/3"])
        );
        assert_eq!(
            finalizers(
                json!(["a/5", "a/4", "a/2", "a/3"]),
                json!({"$setElementOrder/finalizers": ["a/3", "a/2"], "finalizers": ["a/2"]})
            ),
            json!(["a/5", "a/4", "a/3", "a/2"])
        );
        assert_eq!(finalizers(json!(["a/1"]), json!({"finalizers": []})), json!(["a/1"]));
        assert_eq!(finalizers(json!(["a/1"]), json!({"finalizers": null})), Value::Null);
    }

    #[test]
    fn refusals_are_in_kubes_words() {
        let sa = json!({"secrets": [{"name": "a"}]});
        let refused = |patch: Value| patched(&SERVICE_ACCOUNT, sa.clone(), patch).expect_err("refused").to_string();
        assert_eq!(
            refused(json!({"secrets": [{"kind": "Secret"}]})),
            "map: map[kind:Secret] does not contain declared merge key: name"
        );
        assert_eq!(
            refused(json!({"secrets": [{"$patch": "merge", "name": "x"}]})),
            "merging lists cannot yet be specified in the patch"
        );
        assert_eq!(
            refused(json!({"secrets": [{"$patch": "bogus", "name": "x"}]})),
            "unknown patch type: bogus in map: map[$patch:bogus name:x]"
        );
        assert_eq!(
            refused(json!({"$setElementOrder/secrets": [{"name": "z"}], "secrets": [{"name": "b"}]})),
            "The order in patch list:\n[map[name:b]]\n doesn't match $setElementOrder list:\n[map[name:z]]\n"
        );
        assert_eq!(
            refused(json!({"$deleteFromPrimitiveList/secrets": ["a"]})),
            "list element types are not identical: [[map[name:a]] [a]]"
        );
        assert_eq!(refused(json!({"secrets": [1]})), "list element types are not identical: [[map[name:a]] [1]]");
        assert_eq!(refused(json!({"$patch": "bogus"})), "unknown patch type: bogus in map: map[$patch:bogus]");
        assert_eq!(
            refused(json!({"$setElementOrder/bogus": [1]})),
            "unable to find api field in struct ServiceAccount for the json field \"bogus\""
        );
    }

    /// The table is the OpenAPI's patch strategies, which kubectl builds its patches from.
    #[test]
    fn the_merge_lists_are_those_the_openapi_publishes() {
        let defs: Value = serde_json::from_str(include_str!("../openapi/definitions.json")).expect("definitions");
        let mut published: Vec<(String, String, String)> = Vec::new();
        for (name, def) in defs.as_object().expect("an object") {
            for (field, prop) in def.get("properties").and_then(Value::as_object).into_iter().flatten() {
                if prop.get("x-kubernetes-patch-strategy").and_then(Value::as_str) == Some("merge") {
                    let key = prop.get("x-kubernetes-patch-merge-key").and_then(Value::as_str).unwrap_or("");
                    let short = name.rsplit('.').next().unwrap_or(name);
                    published.push((short.into(), field.clone(), key.into()));
                }
            }
        }
        published.sort();
        published.dedup();
        let mut table: Vec<(String, String, String)> =
            MERGE_LISTS.iter().map(|(s, f, k)| (s.to_string(), f.to_string(), k.to_string())).collect();
        table.sort();
        assert_eq!(table, published);
    }

    #[test]
    fn go_dedupes_by_moving_the_last_item() {
        let s = |v: &[&str]| v.iter().map(|x| Value::from(*x)).collect::<Vec<_>>();
        assert_eq!(dedupe_scalars(s(&["a", "b", "a", "c"])), s(&["a", "b", "c"]));
        assert_eq!(dedupe_scalars(s(&["a", "a", "b", "c"])), s(&["a", "c", "b"]));
    }
}
