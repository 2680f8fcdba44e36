//! Request bodies as kube-apiserver's decoders read them: JSON or YAML to one object,
//! and, for custom resources, the type checks of the unstructured decoder.
//!
//! A typed kind's decoder fills a missing `apiVersion` and `kind` in from the endpoint; the
//! unstructured decoder of custom resources does not: a body without a `kind` is refused
//! with the body itself quoted, which is why this is done here, where the bytes are.

use crate::engine::status::ApiError;
use axum::http::{HeaderMap, header};
use serde_json::Value;

/// The body as JSON: `application/yaml` is read as YAML, anything else as JSON.
pub fn json(headers: &HeaderMap, body: &[u8]) -> Result<Value, ApiError> {
    let ct = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("application/json");
    let media = ct.split(';').next().unwrap_or("").trim();
    let parsed = match media {
        "application/yaml" => crate::engine::representation::yaml::from_yaml(body),
        _ => serde_json::from_slice::<Value>(body).map_err(|e| e.to_string()),
    };
    // kube-apiserver answers an undecodable body with 400 BadRequest.
    parsed.map_err(|e| ApiError::bad_request(format!("the body of the request was in an unknown format: {e}")))
}

/// The body of a create or update of a custom resource (kind `kind`): JSON, with
/// `apiVersion` and `kind` strings and a `kind` given, as the unstructured decoder needs.
pub fn unstructured(headers: &HeaderMap, body: &[u8], kind: &str) -> Result<Value, ApiError> {
    let obj = json(headers, body)?;
    if let Some(why) = type_meta_problem(&obj) {
        return Err(unrecognized(kind, &why, body));
    }
    if obj.get("kind").and_then(Value::as_str).is_none_or(str::is_empty) {
        let why = format!("Object 'Kind' is missing in '{}'", String::from_utf8_lossy(body));
        return Err(unrecognized(kind, &why, body));
    }
    Ok(obj)
}

/// What apimachinery's `DefaultMetaFactory.Interpret` refuses: an `apiVersion` or `kind`
/// that is not a string, or an `apiVersion` that is no group/version.
fn type_meta_problem(obj: &Value) -> Option<String> {
    for field in ["apiVersion", "kind"] {
        let go_type = match obj.get(field) {
            None | Some(Value::Null | Value::String(_)) => continue,
            Some(Value::Number(_)) => "number",
            Some(Value::Bool(_)) => "bool",
            Some(Value::Array(_)) => "array",
            Some(Value::Object(_)) => "object",
        };
        return Some(format!(
            "couldn't get version/kind; json parse error: json: cannot unmarshal {go_type} into Go struct field .{field} of type string"
        ));
    }
    let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    (api_version.matches('/').count() > 1).then(|| format!("unexpected GroupVersion string: {api_version}"))
}

/// kube's `transformDecodeError` without a kind: the error and a glimpse of the body.
fn unrecognized(kind: &str, why: &str, body: &[u8]) -> ApiError {
    ApiError::bad_request(format!(
        "the object provided is unrecognized (must be of type {kind}): {why} ({})",
        summary(body)
    ))
}

/// apiserver's `summarizeData(body, 30)`: a JSON object's first 30 bytes as text,
/// anything else's in hex.
fn summary(body: &[u8]) -> String {
    const MAX: usize = 30;
    let head = &body[..body.len().min(MAX)];
    let more = if body.len() > MAX { " ..." } else { "" };
    match body.first() {
        None => "<empty>".into(),
        Some(b'{') => format!("{}{more}", String::from_utf8_lossy(head)),
        Some(_) => format!("{}{more}", head.iter().map(|b| format!("{b:02x}")).collect::<String>()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(body: &str) -> Option<String> {
        unstructured(&HeaderMap::new(), body.as_bytes(), "Widget").err().map(|e| e.message)
    }

    #[test]
    fn a_custom_resource_without_a_kind_is_refused_quoting_the_body() {
        // The oracle's words for each body.
        assert_eq!(
            message(r#"{"metadata":{"name":"t1"},"spec":{}}"#).as_deref(),
            Some(
                r#"the object provided is unrecognized (must be of type Widget): Object 'Kind' is missing in '{"metadata":{"name":"t1"},"spec":{}}' ({"metadata":{"name":"t1"},"spe ...)"#
            )
        );
        assert_eq!(
            message(r#"{"apiVersion":"stable.example.com/v1","kind":"","metadata":{"name":"t9"}}"#).as_deref(),
            Some(
                r#"the object provided is unrecognized (must be of type Widget): Object 'Kind' is missing in '{"apiVersion":"stable.example.com/v1","kind":"","metadata":{"name":"t9"}}' ({"apiVersion":"stable.example. ...)"#
            )
        );
        assert_eq!(
            message(r#"{"apiVersion":"a/b/c","kind":"Widget","metadata":{"name":"t11"}}"#).as_deref(),
            Some(
                r#"the object provided is unrecognized (must be of type Widget): unexpected GroupVersion string: a/b/c ({"apiVersion":"a/b/c","kind":" ...)"#
            )
        );
        assert_eq!(
            message(r#"{"apiVersion":5,"kind":"Widget","metadata":{"name":"t12"}}"#).as_deref(),
            Some(
                r#"the object provided is unrecognized (must be of type Widget): couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct field .apiVersion of type string ({"apiVersion":5,"kind":"Widget ...)"#
            )
        );
        assert_eq!(message(r#"{"kind":"Widget"}"#), None, "apiVersion is checked later");
    }

    #[test]
    fn a_yaml_body_is_quoted_as_sent_and_summarized_in_hex() {
        let mut headers = HeaderMap::new();
        headers.insert(header::CONTENT_TYPE, "application/yaml".parse().expect("header"));
        let body = "apiVersion: stable.example.com/v1\nmetadata:\n  name: y1\n";
        let err = unstructured(&headers, body.as_bytes(), "Widget").expect_err("no kind");
        assert_eq!(
            err.message,
            "the object provided is unrecognized (must be of type Widget): Object 'Kind' is missing in 'apiVersion: stable.example.com/v1\nmetadata:\n  name: y1\n' (61706956657273696f6e3a20737461626c652e6578616d706c652e636f6d ...)"
        );
        assert_eq!(summary(b""), "<empty>");
        assert_eq!(summary(b"{}"), "{}");
    }
}
