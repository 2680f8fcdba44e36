//! Patches: JSON merge patch, JSON patch (applied as kube applies it, see [`super::jsonpatch`]),
//! and the strategic merge patch built-in kinds get.
//!
//! Custom resources refuse strategic merge patch (415), as kube-apiserver does, because the
//! server knows no merge keys for them; a built-in kind's is merged by its Go struct's
//! patch strategies ([`super::strategic`]).

use super::jsonpatch::{self, JsonPatchError};
use super::strategic::StrategicError;
use crate::status::{ApiError, StatusDetails};
use serde_json::{Map, Value};

/// The patch types the API accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    Json,
    Merge,
    StrategicMerge,
    Apply,
}

/// The media type of each patch type (CBOR apply patches need a feature gate 1.32 leaves off).
const MEDIA_TYPES: [(&str, PatchType); 4] = [
    ("application/json-patch+json", PatchType::Json),
    ("application/merge-patch+json", PatchType::Merge),
    ("application/strategic-merge-patch+json", PatchType::StrategicMerge),
    ("application/apply-patch+yaml", PatchType::Apply),
];

impl PatchType {
    /// From a request's `Content-Type`, read as kube's patch handler reads it: what comes
    /// before the first `;`, exactly (the HTTP server already trimmed the header).
    pub fn from_content_type(ct: &str) -> Option<Self> {
        let ct = ct.split(';').next().unwrap_or("");
        MEDIA_TYPES.iter().find(|(media_type, _)| *media_type == ct).map(|(_, patch)| *patch)
    }

    /// Whether go-restful, which serves built-in kinds and CRDs, routes a PATCH with this
    /// Content-Type to kube's handler: one of its comma-separated types, without parameters
    /// and spaces, must be a patch type (an empty one is `application/octet-stream`).
    pub fn restful_consumes(ct: &str) -> bool {
        ct.split(',').any(|t| {
            let t = t.split(';').next().unwrap_or("").trim_matches(' ');
            MEDIA_TYPES.iter().any(|(media_type, _)| *media_type == t)
        })
    }
}

/// Why a patch could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    /// 400: the body is not a patch of its type.
    #[error("{0}")]
    Malformed(String),
    /// 413: a JSON patch with too many operations.
    #[error("{0}")]
    TooLarge(String),
    /// 422: a JSON patch operation did not apply (the reason is not shown).
    #[error("{0}")]
    Failed(String),
    /// A strategic merge patch that did not apply, answered as kube's handler answers it.
    #[error("{0}")]
    Strategic(super::strategic::StrategicError),
}

/// What kube answers when a JSON patch operation does not apply: a generic 422 that
/// does not say which (`NewGenericServerResponse` with an empty resource).
const JSON_PATCH_FAILED: &str = "the server rejected our request due to an error in our request";

impl From<PatchError> for ApiError {
    fn from(e: PatchError) -> Self {
        match e {
            PatchError::Malformed(m) => ApiError::bad_request(m),
            PatchError::TooLarge(m) => {
                ApiError::new(413, "RequestEntityTooLarge", format!("Request entity too large: {m}"))
            }
            PatchError::Failed(_) => {
                let mut err = ApiError::new(422, "Invalid", JSON_PATCH_FAILED);
                err.details = Some(Box::new(StatusDetails::default()));
                err
            }
            PatchError::Strategic(StrategicError::Internal(m)) => ApiError::new(500, "", m),
            PatchError::Strategic(StrategicError::BadRequest(m)) => ApiError::bad_request(m),
            PatchError::Strategic(StrategicError::Unprocessable(m)) => {
                let mut err = ApiError::new(422, "Invalid", JSON_PATCH_FAILED);
                err.details = Some(Box::new(StatusDetails {
                    causes: vec![crate::status::StatusCause {
                        reason: Some("UnexpectedServerResponse".into()),
                        message: Some(m),
                        field: None,
                    }],
                    ..StatusDetails::default()
                }));
                err
            }
        }
    }
}

/// evanphx/json-patch's `ErrBadJSONPatch`: a merge patch that is no JSON object or array.
const BAD_JSON_PATCH: &str = "Invalid JSON Patch";

/// Applies a JSON merge patch (RFC 7386), and gives the strict errors of its decoding.
///
/// With `strict` (fieldValidation `Warn` or `Strict`) kube first decodes the patch into a
/// Go map, which words what it refuses (`error decoding patch: unexpected end of JSON
/// input`) and finds duplicate fields. Then evanphx/json-patch's `MergePatch` refuses what
/// is no object or array; an array replaces the whole document, for decoding to refuse.
pub fn merge(target: &Value, patch_body: &[u8], strict: bool) -> Result<(Value, Vec<String>), PatchError> {
    let patch_body = &*super::go_text::as_go_reads(patch_body);
    let strict_errors = match strict {
        true => {
            super::go_decode::unmarshal_map_strict(patch_body)
                .map_err(|e| PatchError::Malformed(format!("error decoding patch: {e}")))?
                .1
        }
        false => Vec::new(),
    };
    let patch: Value = serde_json::from_slice(patch_body).map_err(|_| PatchError::Malformed(BAD_JSON_PATCH.into()))?;
    match patch {
        Value::Object(patch) => {
            let mut out = target.clone();
            match &mut out {
                Value::Object(doc) => merge_docs(doc, &patch),
                other => *other = Value::Object(patch),
            }
            Ok((out, strict_errors))
        }
        Value::Array(mut items) => {
            prune_nulls(&mut items);
            Ok((Value::Array(items), strict_errors))
        }
        _ => Err(PatchError::Malformed(BAD_JSON_PATCH.into())),
    }
}

/// evanphx/json-patch's `mergeDocs`: a null member removes its key; a value the document
/// lacks (or holds as null) goes in with its nulls pruned; others merge (see [`merge_value`]).
fn merge_docs(doc: &mut Map<String, Value>, patch: &Map<String, Value>) {
    for (key, value) in patch {
        if value.is_null() {
            doc.remove(key);
            continue;
        }
        match doc.get_mut(key) {
            Some(current) if !current.is_null() => merge_value(current, value),
            _ => {
                let mut value = value.clone();
                prune_value(&mut value);
                doc.insert(key.clone(), value);
            }
        }
    }
}

/// evanphx/json-patch's `merge`: objects merge; a current value that is no object is
/// replaced by the patch, nulls pruned; an object is replaced by a patch that is none, as
/// given (RFC 7386 would merge an object into an empty one instead, dropping its nulls).
fn merge_value(current: &mut Value, patch: &Value) {
    match (current, patch) {
        (Value::Object(doc), Value::Object(patch)) => merge_docs(doc, patch),
        (current @ Value::Object(_), patch) => *current = patch.clone(),
        (current, patch) => {
            let mut patch = patch.clone();
            prune_value(&mut patch);
            *current = patch;
        }
    }
}

/// `pruneAryNulls`: null members go from the objects of an array, at every depth; its null
/// items stay (the oracle kept them).
fn prune_nulls(items: &mut [Value]) {
    items.iter_mut().for_each(prune_value);
}

fn prune_value(v: &mut Value) {
    match v {
        Value::Array(items) => prune_nulls(items),
        Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            map.values_mut().for_each(prune_value);
        }
        _ => {}
    }
}

/// Applies a JSON patch (RFC 6902) with kube's semantics; `strict` decodes the operations
/// as kube does unless `fieldValidation=Ignore`.
pub fn json(target: &Value, patch_body: &[u8], strict: bool) -> Result<(Value, Vec<String>), PatchError> {
    jsonpatch::apply_strictly(target, patch_body, strict).map_err(|e| match e {
        JsonPatchError::Decode(m) => PatchError::Malformed(m),
        JsonPatchError::TooManyOperations(_) => PatchError::TooLarge(e.to_string()),
        JsonPatchError::Failed(m) => PatchError::Failed(m),
    })
}

/// A strategic merge patch of an object of the built-in kind `kind`. `strict`
/// (fieldValidation Warn or Strict) decodes the patch as kube does then, for its repeated
/// members.
pub fn strategic(
    target: &Value,
    patch_body: &[u8],
    strict: bool,
    kind: &'static super::builtin::types::GoStruct,
) -> Result<(Value, Vec<String>), PatchError> {
    let strict_errors = match strict {
        true => super::go_decode::unmarshal_map_strict(patch_body).map_err(PatchError::Malformed)?.1,
        false => Vec::new(),
    };
    // kube decodes the patch into a Go map: `null` leaves it empty.
    let patch = match serde_json::from_slice(patch_body).map_err(|e| PatchError::Malformed(e.to_string()))? {
        Value::Object(patch) => patch,
        Value::Null => Map::new(),
        other => {
            return Err(PatchError::Malformed(format!(
                "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                super::go_decode::go_kind(&other)
            )));
        }
    };
    let patched = super::strategic::apply(target, patch, kind).map_err(PatchError::Strategic)?;
    Ok((patched, strict_errors))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strategic_merge_drops_directives_and_merges() {
        use crate::resources::builtin::types::CONFIG_MAP;
        let target = json!({"metadata": {"labels": {"a": "1", "b": "2"}}, "data": {"x": "1"}});
        let patch = br#"{"$retainKeys": ["metadata", "data"], "metadata": {"labels": {"a": null, "c": "3"}}, "data": {"y": "2"}}"#;
        assert_eq!(
            strategic(&target, patch, true, &CONFIG_MAP).expect("patch").0,
            json!({"metadata": {"labels": {"b": "2", "c": "3"}}, "data": {"x": "1", "y": "2"}})
        );
        assert!(matches!(strategic(&target, b"[1]", true, &CONFIG_MAP), Err(PatchError::Malformed(_))));
        assert_eq!(strategic(&target, b"null", false, &CONFIG_MAP).expect("patch").0, target);
    }

    /// The oracle's answers: evanphx/json-patch merges as RFC 7386 does but where a value
    /// is new or replaces one that is no object, its objects' nulls go (inside arrays too)
    /// while an array's null items stay; an object replaced by what is none keeps its nulls.
    #[test]
    fn merge_patches_prune_nulls_as_evanphx_does() {
        let target = json!({"spec": {"e": "a", "pres": {"k": 1}, "cel": {"a": 1}}});
        let merged = |patch: Value| merge(&target, patch.to_string().as_bytes(), true).expect("merged").0;
        assert_eq!(
            merged(json!({"spec": {"e": [{"y": -1, "b": null}, null, 2]}}))["spec"]["e"],
            json!([{"y": -1}, null, 2])
        );
        assert_eq!(
            merged(json!({"spec": {"pres": {"new": {"a": null, "b": [null, {"c": null}]}}}}))["spec"]["pres"],
            json!({"k": 1, "new": {"b": [null, {}]}})
        );
        assert_eq!(merged(json!({"spec": {"cel": [{"a": null}]}}))["spec"]["cel"], json!([{"a": null}]));
        assert_eq!(merged(json!({"spec": {"cel": {"a": null, "b": 2}}}))["spec"]["cel"], json!({"b": 2}));
    }

    #[test]
    fn merge_patches_are_decoded_as_kube_decodes_them() {
        let target = json!({"spec": {"replicas": 1}});
        let malformed = |body: &[u8], strict| match merge(&target, body, strict) {
            Err(PatchError::Malformed(m)) => m,
            other => panic!("not refused: {other:?}"),
        };
        assert_eq!(malformed(b"", true), "error decoding patch: unexpected end of JSON input");
        assert_eq!(malformed(br#"{"spec": "#, true), "error decoding patch: unexpected end of JSON input");
        assert_eq!(
            malformed(b"[1]", true),
            "error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}"
        );
        assert_eq!(
            malformed(br#""x""#, true),
            "error decoding patch: json: cannot unmarshal string into Go value of type map[string]interface {}"
        );
        assert_eq!(malformed(b"", false), "Invalid JSON Patch");
        assert_eq!(malformed(b"null", true), "Invalid JSON Patch");
        assert_eq!(
            merge(&target, br#"[1, null, {"a": null, "b": [null, 2]}]"#, false).expect("an array").0,
            json!([1, null, {"b": [null, 2]}])
        );
        let (patched, strict) = merge(&target, br#"{"spec":{"replicas":6,"replicas":7}}"#, true).expect("patch");
        assert_eq!(patched, json!({"spec": {"replicas": 7}}));
        assert_eq!(strict, [r#"duplicate field "spec.replicas""#]);
        assert!(merge(&target, br#"{"spec":{"replicas":6,"replicas":7}}"#, false).expect("patch").1.is_empty());
    }

    #[test]
    fn merge_and_json_patches() {
        let target = json!({"spec": {"color": "red", "size": 1}});
        assert_eq!(
            merge(&target, br#"{"spec": {"size": null}}"#, true).expect("merge").0,
            json!({"spec": {"color": "red"}})
        );
        assert_eq!(
            json(&target, br#"[{"op": "replace", "path": "/spec/color", "value": "blue"}]"#, true).expect("json").0,
            json!({"spec": {"color": "blue", "size": 1}})
        );
        let failed = json(&target, br#"[{"op": "remove", "path": "/nope"}]"#, true).expect_err("fails");
        assert!(matches!(failed, PatchError::Failed(_)));
        // A move onto its own parent, then an operation that fails: refused, not a panic.
        let undo =
            br#"[{"op": "move", "from": "/spec/color", "path": "/spec"}, {"op": "remove", "path": "/spec/color"}]"#;
        let nested = json!({"spec": {"color": "red", "size": 3}});
        assert!(matches!(json(&nested, undo, true), Err(PatchError::Failed(_))));
        let status = ApiError::from(failed).to_json();
        assert_eq!(
            status,
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                   "message": "the server rejected our request due to an error in our request",
                   "reason": "Invalid", "details": {}, "code": 422})
        );
        assert!(matches!(merge(&target, b"{not json", true), Err(PatchError::Malformed(_))));
    }
}
