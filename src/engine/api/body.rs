//! Request bodies as kube-apiserver's decoders read them: JSON or YAML to one object,
//! and, for custom resources, the type checks of the unstructured decoder.
//!
//! A typed kind's decoder fills a missing `apiVersion` and `kind` in from the endpoint; the
//! unstructured decoder of custom resources does not: a body without a `kind` is refused
//! with the body itself quoted, which is why this is done here, where the bytes are.

use crate::engine::resources::go_decode;
use crate::engine::status::ApiError;
use axum::http::{HeaderMap, header};
use serde_json::Value;

/// The media types a body may have (kube's `NegotiateInputSerializer`; protobuf bodies are
/// JSON by the time they get here).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Media {
    Json,
    Yaml,
}

/// The body's media type; none is JSON, the serializer's first. Anything else is a 415.
fn media(headers: &HeaderMap) -> Result<Media, ApiError> {
    let ct = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let media = ct.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    match media.as_str() {
        "" | "application/json" => Ok(Media::Json),
        "application/yaml" => Ok(Media::Yaml),
        _ => Err(ApiError::new(
            415,
            "UnsupportedMediaType",
            "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf",
        )),
    }
}

/// The body as JSON: `application/yaml` is read as YAML, JSON as JSON, anything else refused.
pub fn json(headers: &HeaderMap, body: &[u8]) -> Result<Value, ApiError> {
    let parsed = match media(headers)? {
        Media::Yaml => crate::engine::representation::yaml::from_yaml(body),
        Media::Json => serde_json::from_slice::<Value>(body).map_err(|e| e.to_string()),
    };
    // kube-apiserver answers an undecodable body with 400 BadRequest.
    parsed.map_err(|e| ApiError::bad_request(format!("the body of the request was in an unknown format: {e}")))
}

/// The strict errors of a body's decoding: the duplicate fields of a JSON body (those of
/// YAML bodies are not looked for).
pub fn duplicate_fields(headers: &HeaderMap, body: &[u8]) -> Vec<String> {
    match media(headers) {
        Ok(Media::Json) => go_decode::duplicate_fields(body),
        _ => Vec::new(),
    }
}

/// The body of a create or update of a custom resource (kind `kind`): JSON, with
/// `apiVersion` and `kind` strings and a `kind` given, as the unstructured decoder needs.
pub fn unstructured(headers: &HeaderMap, body: &[u8], kind: &str) -> Result<Value, ApiError> {
    let obj = match media(headers)? {
        Media::Yaml => {
            crate::engine::representation::yaml::from_yaml(body).map_err(|e| unrecognized(kind, &e, body))?
        }
        Media::Json => {
            // Go's syntax errors, as `Interpret` words them when it reads the type first.
            if let Err(e) = go_decode::check_syntax(body) {
                return Err(unrecognized(kind, &format!("couldn't get version/kind; json parse error: {e}"), body));
            }
            json(headers, body)?
        }
    };
    match go_decode::unstructured_error_in(&obj, &String::from_utf8_lossy(body)) {
        Some(why) => Err(unrecognized(kind, &why, body)),
        None => Ok(obj),
    }
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
    fn undecodable_bodies_are_refused_in_go_words() {
        assert_eq!(
            message(r#"{"apiVersion": "#).as_deref(),
            Some(
                r#"the object provided is unrecognized (must be of type Widget): couldn't get version/kind; json parse error: unexpected end of JSON input ({"apiVersion": )"#
            )
        );
        assert_eq!(
            message("").as_deref(),
            Some(
                "the object provided is unrecognized (must be of type Widget): couldn't get version/kind; json parse error: unexpected end of JSON input (<empty>)"
            )
        );
        assert!(message(r#""widget""#).is_some_and(|m| m.contains(
            "json: cannot unmarshal string into Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind"
        )));
    }

    #[test]
    fn bodies_of_other_media_types_are_refused_with_415() {
        for ct in ["text/plain", "application/x-www-form-urlencoded"] {
            let mut headers = HeaderMap::new();
            headers.insert(header::CONTENT_TYPE, ct.parse().expect("header"));
            let err = unstructured(&headers, b"a=b", "Widget").expect_err("refused");
            assert_eq!((err.code, err.reason.as_str()), (415, "UnsupportedMediaType"));
        }
        let mut headers = HeaderMap::new();
        headers.insert(header::CONTENT_TYPE, "application/json; charset=utf-8".parse().expect("header"));
        assert!(unstructured(&headers, br#"{"kind":"Widget"}"#, "Widget").is_ok());
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
