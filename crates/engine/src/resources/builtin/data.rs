//! The data of ConfigMaps and Secrets: keys, sizes, base64 `[]byte` values, `stringData`,
//! the keys each Secret type requires, and immutability (kube's `ValidateConfigMap`,
//! `ValidateSecret` and their update variants).

use crate::field::{FieldError, Path};
use crate::resources::Undecodable;
use base64::Engine as _;
use serde_json::{Map, Value};

/// ConfigMaps and Secrets may hold at most this many bytes of data (`MaxSecretSize`).
pub const MAX_DATA_SIZE: usize = 1024 * 1024;
const IMMUTABLE: &str = "field is immutable when `immutable` is set";

/// Go's `base64.StdEncoding` (which skips line breaks): the decoded bytes, or the offset
/// of the first byte it refuses.
pub fn decode_base64(text: &str) -> Result<Vec<u8>, usize> {
    let clean: String = text.chars().filter(|c| *c != '\r' && *c != '\n').collect();
    if let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(&clean) {
        return Ok(bytes);
    }
    let bytes = clean.as_bytes();
    let body_end = bytes.iter().position(|b| *b == b'=').unwrap_or(bytes.len());
    if let Some(i) = bytes[..body_end].iter().position(|b| !(b.is_ascii_alphanumeric() || *b == b'+' || *b == b'/')) {
        return Err(i);
    }
    // Bad padding or length: Go reports the end of the last complete quantum.
    Err(body_end - body_end % 4)
}

/// Decoding `[]byte` maps (`Secret.data`, `ConfigMap.binaryData`): a value that is not
/// base64 fails the whole body, as kube's decoder does.
pub fn check_base64(obj: &Value, field: &str) -> Result<(), Undecodable> {
    let Some(map) = obj.get(field).and_then(Value::as_object) else { return Ok(()) };
    for value in map.values() {
        let problem = match value {
            Value::String(text) => decode_base64(text).err(),
            // A list of bytes, which the Go struct's decoder has checked.
            Value::Null | Value::Array(_) => None,
            _ => Some(0),
        };
        if let Some(at) = problem {
            return Err(Undecodable(format!("illegal base64 data at input byte {at}")));
        }
    }
    Ok(())
}

/// A map's null values are Go's zero values, stored as empty text; a `[]byte` map's values
/// sent as JSON lists of bytes become the base64 text Go encodes them as (a null byte is 0).
pub fn normalize_map_values(obj: &mut Value, field: &str) {
    let Some(map) = obj.get_mut(field).and_then(Value::as_object_mut) else { return };
    for value in map.values_mut() {
        if value.is_null() {
            *value = Value::from("");
        } else if let Value::Array(items) = value {
            let bytes: Vec<u8> =
                items.iter().map(|b| b.as_u64().and_then(|b| u8::try_from(b).ok()).unwrap_or(0)).collect();
            *value = Value::from(base64::engine::general_purpose::STANDARD.encode(bytes));
        }
    }
}

/// `stringData` entries become base64 `data` entries (they win), and `stringData` goes,
/// as kube's v1 conversion of a Secret does.
pub fn fold_string_data(obj: &mut Value) {
    let Some(map) = obj.as_object_mut() else { return };
    let Some(strings) = map.remove("stringData") else { return };
    let Value::Object(strings) = strings else { return };
    if strings.is_empty() {
        return;
    }
    let data = map.entry("data").or_insert_with(|| Value::Object(Map::new()));
    if !data.is_object() {
        *data = Value::Object(Map::new());
    }
    if let Some(data) = data.as_object_mut() {
        for (k, v) in strings {
            let encoded = base64::engine::general_purpose::STANDARD.encode(v.as_str().unwrap_or_default());
            data.insert(k, Value::from(encoded));
        }
    }
}

/// apimachinery's `IsConfigMapKey`.
pub fn config_key_problems(key: &str) -> Vec<String> {
    let mut out = Vec::new();
    if key.len() > 253 {
        out.push("must be no more than 253 characters".to_string());
    }
    if key.is_empty() || !key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.') {
        out.push(
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
                .to_string(),
        );
    }
    match key {
        "." => out.push("must not be '.'".into()),
        ".." => out.push("must not be '..'".into()),
        k if k.starts_with("..") => out.push("must not start with '..'".into()),
        _ => {}
    }
    out
}

fn entries<'a>(obj: &'a Value, field: &str) -> Vec<(&'a String, &'a Value)> {
    obj.get(field).and_then(Value::as_object).map(|m| m.iter().collect()).unwrap_or_default()
}

fn key_errors(path: &Path, key: &str) -> impl Iterator<Item = FieldError> {
    let path = path.key(key);
    config_key_problems(key).into_iter().map(move |p| FieldError::invalid(path.as_str(), key, p))
}

/// The length of a `[]byte` value (base64 in JSON).
fn byte_len(value: &Value) -> usize {
    value.as_str().and_then(|s| decode_base64(s).ok()).map_or(0, |b| b.len())
}

/// `ValidateConfigMap` past the metadata: keys, duplicates between `data` and
/// `binaryData`, the total size.
pub fn config_map_errors(obj: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut total = 0;
    let binary = obj.get("binaryData").and_then(Value::as_object);
    for (key, value) in entries(obj, "data") {
        errors.extend(key_errors(&Path::root("data"), key));
        if binary.is_some_and(|b| b.contains_key(key)) {
            errors.push(FieldError::invalid(
                Path::root("data").key(key).as_str(),
                key.as_str(),
                "duplicate of key present in binaryData",
            ));
        }
        total += value.as_str().map_or(0, str::len);
    }
    for (key, value) in entries(obj, "binaryData") {
        errors.extend(key_errors(&Path::root("binaryData"), key));
        total += byte_len(value);
    }
    if total > MAX_DATA_SIZE {
        // kube reports it at `field.NewPath("")`, an element with neither a name nor an
        // index, which apimachinery prints as `[]`.
        errors.push(FieldError::too_long("[]", MAX_DATA_SIZE));
    }
    errors
}

/// `ValidateSecret` past the metadata: keys, total size, and what each well-known type
/// requires.
pub fn secret_errors(obj: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut total = 0;
    for (key, value) in entries(obj, "data") {
        errors.extend(key_errors(&Path::root("data"), key));
        total += byte_len(value);
    }
    if total > MAX_DATA_SIZE {
        errors.push(FieldError::too_long("data", MAX_DATA_SIZE));
    }
    let data = |k: &str| obj.get("data").and_then(|d| d.get(k));
    let required = |path: &str, k: &str| FieldError::required(Path::root(path).key(k).as_str(), "");
    match obj.get("type").and_then(Value::as_str).unwrap_or_default() {
        "kubernetes.io/service-account-token" => {
            let annotated = obj
                .pointer("/metadata/annotations")
                .and_then(|a| a.get("kubernetes.io/service-account.name"))
                .and_then(Value::as_str)
                .is_some_and(|n| !n.is_empty());
            if !annotated {
                let path = Path::root("metadata").child("annotations").key("kubernetes.io/service-account.name");
                errors.push(FieldError::required(path.as_str(), ""));
            }
        }
        t @ ("kubernetes.io/dockercfg" | "kubernetes.io/dockerconfigjson") => {
            let key = if t == "kubernetes.io/dockercfg" { ".dockercfg" } else { ".dockerconfigjson" };
            match data(key) {
                None => errors.push(required("data", key)),
                Some(value) => {
                    let bytes = value.as_str().and_then(|s| decode_base64(s).ok()).unwrap_or_default();
                    if let Err(problem) = json_problem(&bytes) {
                        errors.push(FieldError::invalid(
                            Path::root("data").key(key).as_str(),
                            "<secret contents redacted>",
                            problem,
                        ));
                    }
                }
            }
        }
        "kubernetes.io/basic-auth" if data("username").is_none() && data("password").is_none() => {
            errors.push(required("data", "username"));
            errors.push(required("data", "password"));
        }
        "kubernetes.io/ssh-auth" if data("ssh-privatekey").is_none_or(|v| byte_len(v) == 0) => {
            errors.push(required("data", "ssh-privatekey"));
        }
        "kubernetes.io/tls" => {
            errors
                .extend(["tls.crt", "tls.key"].into_iter().filter(|k| data(k).is_none()).map(|k| required("data", k)));
        }
        _ => {}
    }
    errors
}

/// Why Go's `json.Unmarshal` into a map refuses `bytes`, in its words: its scanner's syntax
/// errors first, then a value that is no object.
fn json_problem(bytes: &[u8]) -> Result<(), String> {
    crate::resources::go_decode::check_syntax(bytes)?;
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(_) | Value::Null) => Ok(()),
        Ok(other) => Err(format!(
            "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            crate::resources::go_decode::go_kind(&other)
        )),
        Err(e) => Err(e.to_string()),
    }
}

/// Once `immutable: true`, neither it nor `fields` may change.
pub fn immutability_errors(new: &Value, old: &Value, fields: &[&str]) -> Vec<FieldError> {
    if old.get("immutable").and_then(Value::as_bool) != Some(true) {
        return Vec::new();
    }
    let mut errors = Vec::new();
    if new.get("immutable").and_then(Value::as_bool) != Some(true) {
        errors.push(FieldError::forbidden("immutable", IMMUTABLE));
    }
    for field in fields {
        if new.get(*field) != old.get(*field) {
            errors.push(FieldError::forbidden(*field, IMMUTABLE));
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn shown(errors: Vec<FieldError>) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
    }

    /// The oracle's words for a docker config that is no JSON object (builtins golden).
    #[test]
    fn docker_configs_are_refused_in_go_s_json_words() {
        assert_eq!(json_problem(b"not json"), Err("invalid character 'o' in literal null (expecting 'u')".into()));
        assert_eq!(json_problem(b"{\"a\":"), Err("unexpected end of JSON input".into()));
        assert_eq!(
            json_problem(b"[1]"),
            Err("json: cannot unmarshal array into Go value of type map[string]interface {}".into())
        );
        assert_eq!(json_problem(b"{\"auths\":{}}"), Ok(()));
    }

    #[test]
    fn base64_errors_name_the_offset_go_names() {
        assert_eq!(decode_base64("aGVsbG8="), Ok(b"hello".to_vec()));
        assert_eq!(decode_base64("aGVs\nbG8="), Ok(b"hello".to_vec()));
        assert_eq!(decode_base64("abc$def"), Err(3));
        assert_eq!(decode_base64("abcde"), Err(4));
        let e = check_base64(&json!({"data": {"k": "abc$def"}}), "data").expect_err("bad base64");
        assert_eq!(e.0, "illegal base64 data at input byte 3");
        let e = check_base64(&json!({"binaryData": {"k": "!"}}), "binaryData").expect_err("bad");
        assert_eq!(e.0, "illegal base64 data at input byte 0");
    }

    #[test]
    fn string_data_folds_into_data() {
        let mut obj = json!({"data": {"user": "b2xk", "keep": "eA=="}, "stringData": {"user": "admin"}});
        fold_string_data(&mut obj);
        assert_eq!(obj, json!({"data": {"user": "YWRtaW4=", "keep": "eA=="}}));
    }

    #[test]
    fn config_map_keys_and_duplicates_are_checked() {
        let bad = config_map_errors(&json!({"data": {"bad key": "v", "dup": "x"}, "binaryData": {"dup": "eA=="}}));
        assert_eq!(
            shown(bad),
            [
                "data[bad key]: Invalid value: \"bad key\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
                "data[dup]: Invalid value: \"dup\": duplicate of key present in binaryData",
            ]
        );
    }

    #[test]
    fn secret_types_require_their_keys() {
        let tls = secret_errors(&json!({"type": "kubernetes.io/tls", "data": {"tls.crt": "eA=="}}));
        assert_eq!(shown(tls), ["data[tls.key]: Required value"]);
        let basic = secret_errors(&json!({"type": "kubernetes.io/basic-auth"}));
        assert_eq!(shown(basic), ["data[username]: Required value", "data[password]: Required value"]);
        let docker =
            secret_errors(&json!({"type": "kubernetes.io/dockerconfigjson", "data": {".dockerconfigjson": "e30="}}));
        assert!(docker.is_empty());
        let docker =
            secret_errors(&json!({"type": "kubernetes.io/dockerconfigjson", "data": {".dockerconfigjson": "eA=="}}));
        assert_eq!(docker.len(), 1);
        assert!(
            docker[0].to_string().starts_with("data[.dockerconfigjson]: Invalid value: \"<secret contents redacted>\"")
        );
    }

    #[test]
    fn secret_size_counts_decoded_bytes() {
        let big = base64::engine::general_purpose::STANDARD.encode(vec![0u8; MAX_DATA_SIZE]);
        assert!(secret_errors(&json!({"data": {"a": big}})).is_empty(), "exactly the limit is fine");
        let over = base64::engine::general_purpose::STANDARD.encode(vec![0u8; MAX_DATA_SIZE + 1]);
        assert_eq!(
            shown(secret_errors(&json!({"data": {"a": over}}))),
            ["data: Too long: may not be more than 1048576 bytes"]
        );
    }

    #[test]
    fn config_map_size_is_reported_at_the_empty_path() {
        let at = |n: usize| config_map_errors(&json!({"data": {"a": "x".repeat(n - 1)}, "binaryData": {"b": "eA=="}}));
        assert!(at(MAX_DATA_SIZE).is_empty(), "exactly the limit is fine");
        assert_eq!(shown(at(MAX_DATA_SIZE + 1)), ["[]: Too long: may not be more than 1048576 bytes"]);
    }

    #[test]
    fn immutable_data_stays() {
        let old = json!({"immutable": true, "data": {"a": "1"}});
        assert_eq!(
            shown(immutability_errors(&json!({"immutable": true, "data": {"a": "2"}}), &old, &["data"])),
            ["data: Forbidden: field is immutable when `immutable` is set"]
        );
        assert_eq!(
            shown(immutability_errors(&json!({"data": {"a": "1"}}), &old, &["data"])),
            ["immutable: Forbidden: field is immutable when `immutable` is set"]
        );
    }
}
