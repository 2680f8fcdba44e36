//! A `ConversionReview`: what the engine sends a CRD's conversion webhook, and what it
//! takes from the answer, as apiextensions-apiserver's `webhookConverter` does.
//!
//! Pure: JSON in, JSON or the refusal out. kube converts one object per request (a list
//! item by item), so a review holds one object.

use crate::field::{FieldError, Path, aggregate_message};
use crate::schema::object_meta::{validate_annotations, validate_labels};
use serde_json::{Map, Value, json};

/// Why a webhook's answer is refused, each worded after `conversion webhook for <gvk> `.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The call failed, or the review said so: `failed: <why>`.
    Failed(String),
    /// Not one object back: `returned <n> objects, expected 1`.
    Count(usize),
    /// The object back is another version or kind: `returned invalid object at index 0: <why>`.
    AtIndex(String),
    /// Its name, namespace or uid changed: `returned invalid object: <why>`.
    Object(String),
    /// Its labels or annotations are no such maps: `returned invalid metadata: <why>`.
    Metadata(String),
}

impl Refusal {
    /// kube's message, for an object of `gvk` (`group/version, Kind=Kind`).
    pub fn message(&self, gvk: &str) -> String {
        match self {
            Refusal::Failed(why) => format!("conversion webhook for {gvk} failed: {why}"),
            Refusal::Count(n) => format!("conversion webhook for {gvk} returned {n} objects, expected 1"),
            Refusal::AtIndex(why) => format!("conversion webhook for {gvk} returned invalid object at index 0: {why}"),
            Refusal::Object(why) => format!("conversion webhook for {gvk} returned invalid object: {why}"),
            Refusal::Metadata(why) => format!("conversion webhook for {gvk} returned invalid metadata: {why}"),
        }
    }
}

/// The review asking to convert `object` to `desired` (`group/version`), in the review
/// version `review_version` (`v1` or `v1beta1`). Like kube's, it carries an empty
/// response, and the object as decoded from storage: without its resourceVersion.
pub fn request(review_version: &str, uid: &str, desired: &str, object: &Value) -> Vec<u8> {
    let mut object = object.clone();
    if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("resourceVersion");
    }
    let review = json!({
        "kind": "ConversionReview",
        "apiVersion": format!("apiextensions.k8s.io/{review_version}"),
        "request": {"uid": uid, "desiredAPIVersion": desired, "objects": [object]},
        "response": {"uid": "", "convertedObjects": null, "result": {"metadata": {}}},
    });
    crate::go_json::to_vec(&review)
}

/// The converted object in the webhook's answer `review` to the request `uid` converting
/// `original` to `desired`: its own labels and annotations, every other metadata field the
/// original's.
pub fn converted(uid: &str, desired: &str, original: &Value, review: &Value) -> Result<Value, Refusal> {
    let failed = |why: String| Refusal::Failed(why);
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
    // The answer is decoded by its own type, whichever version was asked for; only a v1
    // review's uid is checked (v1beta1 reviews never were).
    let checks_uid = match (text(review, "apiVersion").as_str(), text(review, "kind").as_str()) {
        ("apiextensions.k8s.io/v1", "ConversionReview") => true,
        ("apiextensions.k8s.io/v1beta1", "ConversionReview") => false,
        (api_version, kind) => {
            return Err(failed(format!(
                "no kind {kind:?} is registered for version {api_version:?} in scheme \"pkg/util/webhook/client.go:71\""
            )));
        }
    };
    let response =
        review.get("response").filter(|r| r.is_object()).ok_or_else(|| failed("no response provided".into()))?;
    if checks_uid && text(response, "uid") != uid {
        return Err(failed(format!("expected response.uid={uid:?}, got {:?}", text(response, "uid"))));
    }
    let result = response.get("result").unwrap_or(&Value::Null);
    if text(result, "status") != "Success" {
        let message = text(result, "message");
        return Err(failed(if message.is_empty() {
            format!("response.result.status was '{}', not 'Success'", text(result, "status"))
        } else {
            message
        }));
    }
    let objects = response.get("convertedObjects").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let [converted] = objects else { return Err(Refusal::Count(objects.len())) };
    let got = text(converted, "apiVersion");
    if got != desired {
        return Err(Refusal::AtIndex(format!("invalid groupVersion (expected {desired}, received {got})")));
    }
    let (kind, got) = (text(original, "kind"), text(converted, "kind"));
    if kind != got {
        return Err(Refusal::AtIndex(format!("invalid kind (expected {kind}, received {got})")));
    }
    same_identity(original, converted).map_err(Refusal::Object)?;
    restore_metadata(original, converted.clone()).map_err(Refusal::Metadata)
}

/// kube's `validateConvertedObject`: name, namespace and uid unchanged.
fn same_identity(original: &Value, converted: &Value) -> Result<(), String> {
    let meta = |v: &Value, key: &str| {
        v.get("metadata").and_then(|m| m.get(key)).and_then(Value::as_str).unwrap_or_default().to_string()
    };
    for (key, what) in [("name", "name"), ("namespace", "namespace"), ("uid", "UID")] {
        let (e, a) = (meta(original, key), meta(converted, key));
        if e != a {
            return Err(format!("must have the same {what}: {e} != {a}"));
        }
    }
    Ok(())
}

/// kube's `restoreObjectMeta`: the original's metadata, with the converted object's labels
/// and annotations (validated when they changed).
fn restore_metadata(original: &Value, mut converted: Value) -> Result<Value, String> {
    let response_meta = match converted.get("metadata") {
        None => return Err("missing metadata in converted object".into()),
        Some(Value::Object(m)) => m.clone(),
        Some(other) => return Err(format!("invalid metadata of type {} in converted object", go_type(other))),
    };
    let mut meta = original.get("metadata").and_then(Value::as_object).cloned().unwrap_or_default();
    for key in ["labels", "annotations"] {
        let given = match response_meta.get(key) {
            None | Some(Value::Null) => {
                meta.remove(key);
                continue;
            }
            Some(Value::Object(m)) => m,
            Some(other) => {
                return Err(format!("invalid metadata.{key} of type {} in converted object", go_type(other)));
            }
        };
        if let Some((k, v)) = given.iter().find(|(_, v)| !v.is_string()) {
            return Err(format!("metadata.{key}[{k}] must be a string, but is {} in converted object", go_type(v)));
        }
        let before = meta.get(key).and_then(Value::as_object);
        if before != Some(given) && !(before.is_none_or(Map::is_empty) && given.is_empty()) {
            let holder = json!({ key: given });
            let errs: Vec<FieldError> = if key == "labels" {
                validate_labels(&holder, &Path::root("metadata").child("labels"))
            } else {
                // kube names the path `metadata.annotation`.
                validate_annotations(&holder, &Path::root("metadata").child("annotation"))
            };
            if !errs.is_empty() {
                return Err(aggregate_message(&errs));
            }
        }
        meta.insert(key.into(), Value::Object(given.clone()));
    }
    if let Some(obj) = converted.as_object_mut() {
        obj.insert("metadata".into(), Value::Object(meta));
    }
    Ok(converted)
}

/// The Go type `%T` prints for a value decoded into `interface{}`.
fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float64",
        Value::Number(_) => "int64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn original() -> Value {
        json!({"apiVersion": "g/v1", "kind": "Hook", "metadata": {"name": "a", "namespace": "n", "uid": "u",
            "resourceVersion": "7", "generation": 1, "labels": {"l": "1"}}, "spec": {"x": 1}})
    }

    fn answer(objects: Value) -> Value {
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "response": {"uid": "id", "convertedObjects": objects, "result": {"status": "Success"}}})
    }

    fn convert(review: &Value) -> Result<Value, String> {
        converted("id", "g/v2", &original(), review).map_err(|r| r.message("g/v1, Kind=Hook"))
    }

    #[test]
    fn the_request_holds_the_object_without_its_resource_version_and_an_empty_response() {
        let sent: Value = serde_json::from_slice(&request("v1", "id", "g/v2", &original())).expect("json");
        assert_eq!(sent["apiVersion"], "apiextensions.k8s.io/v1");
        assert_eq!(sent["request"]["desiredAPIVersion"], "g/v2");
        assert_eq!(sent["request"]["objects"][0]["metadata"].get("resourceVersion"), None);
        assert_eq!(sent["response"], json!({"uid": "", "convertedObjects": null, "result": {"metadata": {}}}));
    }

    #[test]
    fn the_converted_object_keeps_the_originals_metadata_but_labels_and_annotations() {
        let mut back = original();
        back["apiVersion"] = json!("g/v2");
        back["spec"] = json!({"y": 1});
        back["metadata"]["generation"] = json!(99);
        back["metadata"]["labels"] = json!({"added": "yes"});
        back["metadata"]["annotations"] = json!({"a": "b"});
        let got = convert(&answer(json!([back]))).expect("converted");
        assert_eq!(got["spec"], json!({"y": 1}));
        assert_eq!(got["metadata"]["generation"], 1);
        assert_eq!(got["metadata"]["resourceVersion"], "7");
        assert_eq!(got["metadata"]["labels"], json!({"added": "yes"}));
        assert_eq!(got["metadata"]["annotations"], json!({"a": "b"}));
    }

    #[test]
    fn refusals_are_worded_as_kubes() {
        let mut back = original();
        back["apiVersion"] = json!("g/v2");
        let with = |f: &dyn Fn(&mut Value)| {
            let mut b = back.clone();
            f(&mut b);
            convert(&answer(json!([b]))).expect_err("refused")
        };
        let prefix = "conversion webhook for g/v1, Kind=Hook";
        assert_eq!(
            with(&|b| b["apiVersion"] = json!("g/v9")),
            format!("{prefix} returned invalid object at index 0: invalid groupVersion (expected g/v2, received g/v9)")
        );
        assert_eq!(
            with(&|b| b["kind"] = json!("Other")),
            format!("{prefix} returned invalid object at index 0: invalid kind (expected Hook, received Other)")
        );
        assert_eq!(
            with(&|b| b["metadata"]["name"] = json!("other")),
            format!("{prefix} returned invalid object: must have the same name: a != other")
        );
        assert_eq!(
            with(&|b| {
                b.as_object_mut().expect("object").remove("metadata");
            }),
            format!("{prefix} returned invalid object: must have the same name: a != ")
        );
        assert!(with(&|b| b["metadata"]["labels"] = json!({"bad key!": "x"})).starts_with(&format!("{prefix} returned invalid metadata: metadata.labels: Invalid value: \"bad key!\": name part must consist of")));
        assert_eq!(
            convert(&answer(json!([back.clone(), back.clone()]))).expect_err("two"),
            format!("{prefix} returned 2 objects, expected 1")
        );
        let mut failed = answer(json!([]));
        failed["response"]["result"] = json!({"status": "Failure", "message": "cannot convert: nope"});
        assert_eq!(convert(&failed).expect_err("failed"), format!("{prefix} failed: cannot convert: nope"));
        failed["response"]["result"] = json!({"status": "Failure"});
        assert_eq!(
            convert(&failed).expect_err("failed"),
            format!("{prefix} failed: response.result.status was 'Failure', not 'Success'")
        );
        let mut uid = answer(json!([back]));
        uid["response"]["uid"] = json!("x");
        assert_eq!(
            convert(&uid).expect_err("uid"),
            format!("{prefix} failed: expected response.uid=\"id\", got \"x\"")
        );
        assert_eq!(
            convert(&json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview"})).expect_err("none"),
            format!("{prefix} failed: no response provided")
        );
        assert_eq!(
            convert(&json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "Other"})).expect_err("kind"),
            format!(
                "{prefix} failed: no kind \"Other\" is registered for version \"apiextensions.k8s.io/v1\" in scheme \"pkg/util/webhook/client.go:71\""
            )
        );
    }
}
