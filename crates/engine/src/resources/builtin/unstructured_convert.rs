//! What kube's unstructured converter (`runtime.DefaultUnstructuredConverter`) refuses
//! when it turns a strategically merged map into a kind's Go struct, in its words.
//!
//! A strategic merge patch of a built-in kind is applied to maps, then converted, not
//! decoded as JSON: a value of the wrong type is refused in the converter's terms
//! (`cannot convert int64 to string`, `unrecognized type: bool`, `cannot restore slice
//! from int64`), and kube quotes the patch itself with Go's `%+v` (`map[data:map[k:5]]`).
//! The converter walks a struct in its field order and stops at the first refusal.

use super::types::{GoStruct, GoType, OBJECT_META, go_name, time_value_error};
use serde_json::Value;

/// The converter's refusal of `obj` as the struct `kind`, if any.
pub fn conversion_error(obj: &Value, kind: &'static GoStruct) -> Option<String> {
    static META: GoType = GoType::Struct(&OBJECT_META);
    let map = obj.as_object()?;
    let envelope = [("kind", &GoType::String), ("apiVersion", &GoType::String), ("metadata", &META)];
    let fields = kind.fields.iter().map(|f| (f.json, &f.ty));
    envelope.into_iter().chain(fields).find_map(|(key, ty)| map.get(key).and_then(|v| convert(v, ty)))
}

/// The integers of `obj` as the converter stores them in `kind`'s fields: `reflect`
/// converts an integral float, or an integer, through int64 and keeps the field's bits,
/// so `3000000000` in an `int32` is `-1294967296` (and validation judges that). Call it
/// once [`conversion_error`] has found nothing to refuse.
pub fn convert_integers(obj: &mut Value, kind: &'static GoStruct) {
    static META: GoType = GoType::Struct(&OBJECT_META);
    let Some(map) = obj.as_object_mut() else { return };
    if let Some(meta) = map.get_mut("metadata") {
        integers(meta, &META);
    }
    for f in kind.fields {
        if let Some(v) = map.get_mut(f.json) {
            integers(v, &f.ty);
        }
    }
}

fn integers(value: &mut Value, ty: &'static GoType) {
    match (ty, value) {
        (GoType::Int32 | GoType::Int64, Value::Number(n)) => {
            let wide = match n.as_i64() {
                Some(i) => i,
                None => crate::schema::gofmt::go_int64(n.as_f64().unwrap_or(f64::NAN)),
            };
            let kept = if matches!(ty, GoType::Int32) { i64::from(wide as i32) } else { wide };
            *n = kept.into();
        }
        (GoType::Map(items), Value::Object(map)) => map.values_mut().for_each(|v| integers(v, items)),
        (GoType::Slice { items, .. }, Value::Array(list)) => list.iter_mut().for_each(|v| integers(v, items)),
        (GoType::Struct(s) | GoType::Union(_, s), Value::Object(map)) => {
            for f in s.fields {
                if let Some(v) = map.get_mut(f.json) {
                    integers(v, &f.ty);
                }
            }
        }
        _ => {}
    }
}

/// Go's `reflect.Kind` name of a decoded JSON value, as the converter prints its source.
fn source_kind(value: &Value) -> &'static str {
    match value {
        Value::String(_) => "string",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_i64() || n.is_u64() => "int64",
        Value::Number(_) => "float64",
        Value::Array(_) => "slice",
        Value::Object(_) => "map",
        Value::Null => "invalid",
    }
}

fn convert(value: &Value, ty: &'static GoType) -> Option<String> {
    if value.is_null() {
        return None;
    }
    match ty {
        GoType::String | GoType::Named(_) => scalar(value, "string", &go_name(ty)),
        GoType::Int32 => scalar(value, "int32", "int32"),
        GoType::Int64 => scalar(value, "int64", "int64"),
        GoType::Float64 => scalar(value, "float64", "float64"),
        GoType::Bool => scalar(value, "bool", "bool"),
        // Times and raw JSON unmarshal themselves from their JSON.
        GoType::Time | GoType::MicroTime => time_value_error(value, ty),
        GoType::Raw | GoType::Json => None,
        GoType::Bytes => match value {
            Value::String(text) => super::data::decode_base64(text)
                .err()
                .map(|at| format!("error decoding from json: illegal base64 data at input byte {at}")),
            // A list of bytes converts item by item.
            Value::Array(list) => list.iter().find_map(|v| scalar(v, "uint8", "uint8")),
            other => Some(format!("cannot restore slice from {}", source_kind(other))),
        },
        GoType::Map(items) => match value {
            Value::Object(map) => map.values().find_map(|v| convert(v, items)),
            other => Some(format!("cannot restore map from {}", source_kind(other))),
        },
        GoType::Slice { items, .. } => match value {
            Value::Array(list) => list.iter().find_map(|v| convert(v, items)),
            other => Some(format!("cannot restore slice from {}", source_kind(other))),
        },
        // A union's `UnmarshalJSON` takes other shapes too: only its struct is checked.
        GoType::Union(_, s) => match value {
            Value::Object(map) => s.fields.iter().find_map(|f| map.get(f.json).and_then(|v| convert(v, &f.ty))),
            _ => None,
        },
        GoType::Struct(s) => match value {
            Value::Object(map) => s.fields.iter().find_map(|f| map.get(f.json).and_then(|v| convert(v, &f.ty))),
            other => Some(format!("cannot restore struct from: {}", source_kind(other))),
        },
    }
}

/// A simple value: JSON's four groups (bools, integers, floats, strings) do not convert
/// into each other, except integers into floats and integral floats into integers.
fn scalar(value: &Value, dest_kind: &str, dest_type: &str) -> Option<String> {
    let unrecognized = || Some(format!("unrecognized type: {dest_kind}"));
    let integer = matches!(dest_kind, "int32" | "int64" | "uint8");
    match value {
        Value::String(_) if dest_kind == "string" => None,
        Value::Bool(_) if dest_kind == "bool" => None,
        Value::Number(_) if dest_kind == "float64" => None,
        Value::Number(n) if n.is_i64() || n.is_u64() => match dest_kind {
            _ if integer => None,
            // Go converts an integer to a string (a rune), which JSON does not allow.
            "string" => Some(format!("cannot convert int64 to {dest_type}")),
            _ => unrecognized(),
        },
        Value::Number(n) if integer => {
            let f = n.as_f64().unwrap_or(f64::NAN);
            if f == f.trunc() { None } else { Some(format!("cannot convert float64 to {dest_type}")) }
        }
        _ => unrecognized(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::builtin::types::SECRET;
    use serde_json::json;

    fn refusal(patch: Value) -> Option<String> {
        let obj = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}, "data": {"a": "YQ=="}});
        let body = serde_json::to_vec(&patch).expect("patch");
        let (patched, _) = crate::resources::patch::merge(&obj, &body, false).expect("merge");
        conversion_error(&patched, &SECRET)
    }

    #[test]
    fn the_converter_refuses_in_its_own_words() {
        // The oracle's answers to these strategic merge patches of a Secret.
        assert_eq!(refusal(json!({"type": 5})).as_deref(), Some("cannot convert int64 to v1.SecretType"));
        assert_eq!(refusal(json!({"data": {"a": 5}})).as_deref(), Some("cannot restore slice from int64"));
        assert_eq!(
            refusal(json!({"metadata": {"labels": {"a": 1}}})).as_deref(),
            Some("cannot convert int64 to string")
        );
        assert_eq!(refusal(json!({"immutable": "yes"})).as_deref(), Some("unrecognized type: bool"));
        // Metadata comes before data in the struct.
        assert_eq!(
            refusal(json!({"data": {"b": "%%"}, "metadata": {"labels": {"a": [1, 2.5, true, null]}}})).as_deref(),
            Some("unrecognized type: string")
        );
        assert_eq!(
            refusal(json!({"data": {"b": "%%"}})).as_deref(),
            Some("error decoding from json: illegal base64 data at input byte 0")
        );
        assert_eq!(refusal(json!({"data": {"b": "Yg=="}})), None);
    }

    #[test]
    fn integers_keep_their_fields_bits() {
        use crate::resources::builtin::types::LEASE;
        // The oracle's lease applied with these validates -1294967296 and 2.
        let mut lease = json!({"metadata": {"generation": 2.0}, "spec": {"leaseDurationSeconds": 3000000000u64, "leaseTransitions": 2.0}});
        convert_integers(&mut lease, &LEASE);
        assert_eq!(
            lease,
            json!({"metadata": {"generation": 2}, "spec": {"leaseDurationSeconds": -1294967296, "leaseTransitions": 2}})
        );
    }
}
