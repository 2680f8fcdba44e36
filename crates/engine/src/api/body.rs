//! Request bodies as kube-apiserver's decoders read them: the decoder the `Content-Type`
//! names (415 for any other), JSON or YAML to one object, and, for custom resources, the
//! type checks of the unstructured decoder.
//!
//! A typed kind's decoder fills a missing `apiVersion` and `kind` in from the endpoint; the
//! unstructured decoder of custom resources does not: a body without a `kind` is refused
//! with the body itself quoted, which is why this is done here, where the bytes are.
//! A body that does not parse is refused as kube's `transformDecodeError` words it, with
//! Go's JSON scanner's or go-yaml's sentence.

use crate::representation::body_yaml;
use crate::resources::{go_decode, go_text};
use crate::status::ApiError;
use axum::http::{HeaderMap, header};
use serde_json::Value;

/// The decoders kube-apiserver has for an object body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Input {
    Json,
    Yaml,
}

/// The decoder for a body's `Content-Type` (kube's `NegotiateInputSerializer`): none is
/// JSON, and the media type, lowercased and without parameters, must be one the endpoint
/// decodes exactly. Protobuf never gets here (it is decoded before, or refused).
fn input(headers: &HeaderMap) -> Result<Input, ApiError> {
    let ct = headers.get(header::CONTENT_TYPE).map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let ct = ct.unwrap_or_default();
    if ct.trim().is_empty() {
        return Ok(Input::Json);
    }
    match ct.split(';').next().unwrap_or_default().trim().to_ascii_lowercase().as_str() {
        "application/json" => Ok(Input::Json),
        "application/yaml" => Ok(Input::Yaml),
        _ => Err(unsupported_media_type()),
    }
}

/// kube's 415 for a body in a format the endpoint does not decode.
pub fn unsupported_media_type() -> ApiError {
    ApiError::new(
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf",
    )
}

/// A decoded body and the strict decoding complaints it leaves, which `fieldValidation`
/// turns into warnings or a 400.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    pub object: Value,
    /// A YAML body's repeated keys, in go-yaml's words.
    pub duplicates: Vec<String>,
    /// A JSON body's repeated fields (`duplicate field "spec.replicas"`), which kube's
    /// strict JSON decoding reports with the unknown ones.
    pub duplicate_fields: Vec<String>,
}

/// Whether the body is JSON (not YAML) by its `Content-Type`.
pub fn is_json(headers: &HeaderMap) -> bool {
    matches!(input(headers), Ok(Input::Json))
}

/// The body of a write to `kind` as JSON, read by the decoder its `Content-Type` names.
pub fn json(headers: &HeaderMap, body: &[u8], kind: &str) -> Result<Decoded, ApiError> {
    match input(headers)? {
        Input::Yaml => {
            let read = body_yaml::read(body).map_err(|why| unrecognized(kind, &why, body))?;
            Ok(Decoded { object: read.object, duplicates: read.duplicates, duplicate_fields: Vec::new() })
        }
        // Read as Go reads it (a lone surrogate or a byte that is no UTF-8 is U+FFFD, `-0`
        // is 0), serde reads no body Go's scanner refuses (it is the stricter: depth), so
        // the scan is needed only to name a failure as Go does.
        Input::Json => match go_decode::read_strict(&go_text::as_go_reads(body)) {
            Ok((object, duplicate_fields)) => Ok(Decoded { object, duplicates: Vec::new(), duplicate_fields }),
            Err(e) => {
                // Go's decoder scans the whole body before it reads the kind.
                go_decode::check_syntax(body).map_err(|e| {
                    unrecognized(kind, &format!("couldn't get version/kind; json parse error: {e}"), body)
                })?;
                Err(ApiError::bad_request(format!("the body of the request was in an unknown format: {e}")))
            }
        },
    }
}

/// The body of a request for options (a DELETE's `DeleteOptions`) as one JSON value, read
/// by the decoder its `Content-Type` names. kube's handler passes that decoder's errors on
/// as they are: 500s without a reason, go-yaml's sentence for YAML, Go's scanner's for JSON.
pub fn options_document(headers: &HeaderMap, body: &[u8]) -> Result<Value, ApiError> {
    let unreason = |message: String| ApiError::new(500, "", message);
    match input(headers)? {
        Input::Yaml => body_yaml::read(body).map(|read| read.object).map_err(unreason),
        Input::Json => {
            go_decode::check_syntax(body)
                .map_err(|e| unreason(format!("couldn't get version/kind; json parse error: {e}")))?;
            serde_json::from_slice(&go_text::as_go_reads(body))
                .map_err(|e| unreason(format!("couldn't get version/kind; json parse error: {e}")))
        }
    }
}

/// The body of a create or update of a typed kind (kind `kind`), whose type the
/// serializer reads first as `SimpleMetaFactory.Interpret` does: a value that is no object
/// (or whose `apiVersion` or `kind` is no string, or no group/version) is refused with a
/// glimpse of the body, and `null` is the empty object Go's decoder leaves it.
pub fn typed(headers: &HeaderMap, body: &[u8], kind: &str) -> Result<Decoded, ApiError> {
    let mut decoded = json(headers, body, kind)?;
    if let Some(why) = go_decode::interpret_error(&decoded.object) {
        return Err(unrecognized(kind, &why, body));
    }
    if decoded.object.is_null() {
        decoded.object = Value::Object(serde_json::Map::new());
    }
    Ok(decoded)
}

/// The number a JSON body holds beyond a float64 (`1e400`) when that is why it could not be
/// read: serde refuses such a body whole, where Go's decoder of an unstructured object
/// names the number. Asked only once a decode has failed.
pub fn number_beyond_float64<'a>(headers: &HeaderMap, body: &'a [u8]) -> Option<&'a str> {
    let syntax_ok = matches!(input(headers), Ok(Input::Json)) && go_decode::check_syntax(body).is_ok();
    let refused = syntax_ok && serde_json::from_slice::<Value>(body).is_err();
    refused.then(|| go_decode::number_beyond_float64(body)).flatten()
}

/// Why a custom resource's body is refused for lacking what the unstructured decoder
/// needs (`apiVersion` and `kind` strings, a `kind` given).
pub enum Unrecognized {
    /// The strict decoder's answer, complete.
    Refused(ApiError),
    /// The non-strict decoder's (`fieldValidation=Ignore`): its reason, for the kind's own
    /// `cannot be handled as` answer.
    Undecodable(String),
}

/// The body of a create or update of a custom resource (kind `kind`), checked as the
/// unstructured decoder checks it. Under `fieldValidation=Ignore` kube decodes without
/// the strict decoder, which quotes the JSON without the whitespace around it (a YAML
/// body as the JSON it became) and lets the kind's handler word the refusal.
pub fn unstructured(headers: &HeaderMap, body: &[u8], kind: &str, strict: bool) -> Result<Decoded, Unrecognized> {
    let decoded = json(headers, body, kind).map_err(Unrecognized::Refused)?;
    let raw = match (strict, input(headers)) {
        (false, Ok(Input::Yaml)) => crate::representation::gofmt::go_json(&decoded.object),
        (false, _) => String::from_utf8_lossy(body.trim_ascii()).into_owned(),
        (true, _) => String::from_utf8_lossy(body).into_owned(),
    };
    match go_decode::unstructured_error_in(&decoded.object, &raw) {
        Some(why) if strict => Err(Unrecognized::Refused(unrecognized(kind, &why, body))),
        Some(why) => Err(Unrecognized::Undecodable(why)),
        None => Ok(decoded),
    }
}

/// kube's `transformDecodeError` without a kind: the error and a glimpse of the body.
pub fn unrecognized(kind: &str, why: &str, body: &[u8]) -> ApiError {
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
        match unstructured(&HeaderMap::new(), body.as_bytes(), "Widget", true) {
            Err(Unrecognized::Refused(e)) => Some(e.message),
            Err(Unrecognized::Undecodable(why)) => Some(why),
            Ok(_) => None,
        }
    }

    #[test]
    fn options_are_read_by_their_content_type() {
        let with = |ct: &str| {
            let mut h = HeaderMap::new();
            h.insert(header::CONTENT_TYPE, ct.parse().expect("a header"));
            h
        };
        let yaml = options_document(&with("application/yaml; charset=utf-8"), b"kind: DeleteOptions\ndryRun: [All]\n");
        assert_eq!(yaml.expect("YAML"), serde_json::json!({"kind": "DeleteOptions", "dryRun": ["All"]}));
        assert_eq!(options_document(&with("application/json"), b"{}").expect("JSON"), serde_json::json!({}));
        assert_eq!(options_document(&with("text/plain"), b"{}").expect_err("415").code, 415);
        let bad = options_document(&with("application/yaml"), b"kind: [DeleteOptions\n").expect_err("500");
        assert_eq!((bad.code, bad.reason.as_str()), (500, ""));
        assert_eq!(bad.message, "yaml: line 1: did not find expected ',' or ']'");
    }

    /// `json` scans with Go's scanner only once serde has refused a body: that is sound
    /// only if serde never reads a body the scanner refuses.
    #[test]
    fn serde_reads_no_body_go_s_scanner_refuses() {
        use rand::{Rng, SeedableRng};
        let fixed: [&[u8]; 14] = [
            br#""\ud800""#,
            br#"{"a":1,}"#,
            b"[1 2]",
            b"1e400",
            b"\"\xff\"",
            b" {} ",
            b"{}x",
            b"-0",
            b"0.0e+1",
            br#""\u0000""#,
            b"\"\x01\"",
            b"01",
            b"\xef\xbb\xbf{}",
            b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
        ];
        // Random bodies from JSON's own alphabet, with bytes it refuses mixed in.
        let alphabet = b"{}[]:,\"\\/ \t\n\r0123456789-+.eEtrufalsnbu\x00\x1f\x7f\xc3\xa9\xff\xed\xa0\x80";
        let mut rng = rand::rngs::StdRng::seed_from_u64(20261127);
        let random = (0..200_000).map(|_| {
            let len = rng.random_range(1..12);
            (0..len).map(|_| alphabet[rng.random_range(0..alphabet.len())]).collect::<Vec<u8>>()
        });
        let mut read = 0;
        for body in fixed.iter().map(|b| b.to_vec()).chain(random) {
            if serde_json::from_slice::<Value>(&body).is_ok() {
                read += 1;
                assert!(go_decode::check_syntax(&body).is_ok(), "{:?}", String::from_utf8_lossy(&body));
            }
        }
        assert!(read > 1_000, "only {read} bodies were valid JSON: the sample proves little");
    }

    fn typed(ct: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::CONTENT_TYPE, ct.parse().expect("header"));
        headers
    }

    #[test]
    fn only_json_and_yaml_bodies_are_decoded() {
        let body = br#"{"apiVersion":"a/v1","kind":"Widget"}"#;
        for ct in ["application/json", "application/json;charset=utf-8", "Application/JSON; charset=UTF-8", ""] {
            assert!(json(&typed(ct), body, "Widget").is_ok(), "{ct}");
        }
        assert!(json(&HeaderMap::new(), body, "Widget").is_ok());
        for ct in [
            "text/plain",
            "application/x-yaml",
            "text/yaml",
            "application/merge-patch+json",
            "*/*",
            "application/cbor",
            "application/xml",
        ] {
            let e = json(&typed(ct), body, "Widget").expect_err(ct);
            assert_eq!((e.code, e.reason.as_str()), (415, "UnsupportedMediaType"), "{ct}");
            assert_eq!(e.message, unsupported_media_type().message);
        }
    }

    #[test]
    fn bodies_that_do_not_parse_are_refused_in_go_s_words() {
        let yaml = "apiVersion: negotiation.diff.example.com/v1\nkind: Widget\n";
        let e = json(&typed("application/json"), yaml.as_bytes(), "Widget").expect_err("not JSON");
        assert_eq!(
            e.message,
            "the object provided is unrecognized (must be of type Widget): couldn't get version/kind; json parse error: invalid character 'a' looking for beginning of value (61706956657273696f6e3a206e65676f74696174696f6e2e646966662e65 ...)"
        );
        let e = json(&typed("application/yaml"), b"a: [b\n", "Widget").expect_err("not YAML");
        assert!(
            e.message.starts_with("the object provided is unrecognized (must be of type Widget): yaml: line "),
            "{}",
            e.message
        );
        let dup = json(&typed("application/yaml"), b"kind: Widget\nkind: Gadget\n", "Widget").expect("decodes");
        assert_eq!(dup.object["kind"], "Gadget");
        assert_eq!(dup.duplicates, [r#"line 2: key "kind" already set in map"#]);
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
        let Err(Unrecognized::Refused(err)) = unstructured(&headers, body.as_bytes(), "Widget", true) else {
            panic!("no kind is refused")
        };
        assert_eq!(
            err.message,
            "the object provided is unrecognized (must be of type Widget): Object 'Kind' is missing in 'apiVersion: stable.example.com/v1\nmetadata:\n  name: y1\n' (61706956657273696f6e3a20737461626c652e6578616d706c652e636f6d ...)"
        );
        assert_eq!(summary(b""), "<empty>");
        assert_eq!(summary(b"{}"), "{}");
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
            let Err(Unrecognized::Refused(err)) = unstructured(&headers, b"a=b", "Widget", true) else {
                panic!("{ct} is refused")
            };
            assert_eq!((err.code, err.reason.as_str()), (415, "UnsupportedMediaType"));
        }
        let mut headers = HeaderMap::new();
        headers.insert(header::CONTENT_TYPE, "application/json; charset=utf-8".parse().expect("header"));
        assert!(unstructured(&headers, br#"{"kind":"Widget"}"#, "Widget", true).is_ok());
    }
}
