//! An `AdmissionReview` as kube-apiserver sends it to a webhook, and its answer read and
//! checked as kube reads it (`request.CreateV1AdmissionReview`,
//! `VerifyAdmissionResponse`, `webhookerrors.ToStatusErr`). Pure: no IO.

use crate::status::ApiError;
use serde_json::{Map, Value, json};

/// A group, version and kind or resource, as a review names them.
#[derive(Debug, Clone, Copy)]
pub struct Gvx<'a> {
    pub group: &'a str,
    pub version: &'a str,
    /// The kind, or the resource.
    pub name: &'a str,
}

/// What one review asks about.
pub struct Asked<'a> {
    /// The kind and resource at the version the webhook is called at.
    pub kind: Gvx<'a>,
    pub resource: Gvx<'a>,
    /// The kind and resource requested (another version under `matchPolicy: Equivalent`).
    pub request_kind: Gvx<'a>,
    pub request_resource: Gvx<'a>,
    pub subresource: &'a str,
    pub name: &'a str,
    pub namespace: &'a str,
    pub operation: &'a str,
    pub user: &'a Value,
    pub object: Option<&'a Value>,
    pub old_object: Option<&'a Value>,
    pub dry_run: bool,
    pub options: &'a Value,
}

/// The review sent, as JSON (kube's field order).
pub fn request(version: &str, uid: &str, asked: &Asked<'_>) -> Value {
    let gvk = |g: Gvx<'_>| json!({"group": g.group, "version": g.version, "kind": g.name});
    let gvr = |g: Gvx<'_>| json!({"group": g.group, "version": g.version, "resource": g.name});
    let mut request = Map::new();
    request.insert("uid".into(), Value::from(uid));
    request.insert("kind".into(), gvk(asked.kind));
    request.insert("resource".into(), gvr(asked.resource));
    if !asked.subresource.is_empty() {
        request.insert("subResource".into(), Value::from(asked.subresource));
    }
    request.insert("requestKind".into(), gvk(asked.request_kind));
    request.insert("requestResource".into(), gvr(asked.request_resource));
    if !asked.subresource.is_empty() {
        request.insert("requestSubResource".into(), Value::from(asked.subresource));
    }
    if !asked.name.is_empty() {
        request.insert("name".into(), Value::from(asked.name));
    }
    if !asked.namespace.is_empty() {
        request.insert("namespace".into(), Value::from(asked.namespace));
    }
    request.insert("operation".into(), Value::from(asked.operation));
    request.insert("userInfo".into(), asked.user.clone());
    request.insert("object".into(), asked.object.cloned().unwrap_or(Value::Null));
    request.insert("oldObject".into(), asked.old_object.cloned().unwrap_or(Value::Null));
    request.insert("dryRun".into(), Value::from(asked.dry_run));
    request.insert("options".into(), asked.options.clone());
    json!({"kind": "AdmissionReview", "apiVersion": format!("admission.k8s.io/{version}"), "request": request})
}

/// A webhook's answer, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub allowed: bool,
    /// A JSON patch (mutating webhooks only).
    pub patch: Option<Vec<u8>>,
    pub warnings: Vec<String>,
    /// `response.status`, a refusal's Status.
    pub result: Option<Value>,
}

/// kube's `VerifyAdmissionResponse`: why an answer is no valid response to the review
/// `uid` sent in `version`, or what it says.
pub fn verdict(version: &str, uid: &str, mutating: bool, answer: &Value) -> Result<Verdict, String> {
    let Some(response) = answer.get("response").filter(|r| !r.is_null()) else {
        return Err("webhook response was absent".into());
    };
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
    let patch_bytes = match response.get("patch").and_then(Value::as_str) {
        Some(b64) => {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD.decode(b64).map_err(|e| format!("illegal base64 data: {e}"))?
        }
        None => Vec::new(),
    };
    let patch_type = response.get("patchType").filter(|t| !t.is_null()).map(|t| t.as_str().unwrap_or_default());
    let mut patch = None;
    if version == "v1" {
        let answered = text(response, "uid");
        if answered != uid {
            return Err(format!("expected response.uid={uid:?}, got {answered:?}"));
        }
        let (api_version, kind) = (text(answer, "apiVersion"), text(answer, "kind"));
        if api_version != "admission.k8s.io/v1" || kind != "AdmissionReview" {
            let got = crate::resources::managed_fields::fieldmanager::gvk_string(&api_version, &kind);
            return Err(format!("expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got {got}"));
        }
        if mutating {
            match (patch_bytes.is_empty(), patch_type) {
                (false, None) => return Err("webhook returned response.patch but not response.patchType".into()),
                (true, Some(_)) => return Err("webhook returned response.patchType but not response.patch".into()),
                (_, Some("")) => return Err("webhook returned invalid response.patchType of \"\"".into()),
                (false, Some(t)) if t != "JSONPatch" => return Err(format!("unsupported patch type {t:?}")),
                _ => {}
            }
        } else if !patch_bytes.is_empty() {
            return Err("validating webhook may not return response.patch".into());
        } else if patch_type.is_some() {
            return Err("validating webhook may not return response.patchType".into());
        }
    }
    if mutating && !patch_bytes.is_empty() {
        patch = Some(patch_bytes);
    }
    let warnings = response.get("warnings").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    Ok(Verdict {
        allowed: response.get("allowed").and_then(Value::as_bool).unwrap_or(false),
        patch,
        warnings: warnings.iter().filter_map(Value::as_str).map(String::from).collect(),
        result: response.get("status").filter(|s| !s.is_null()).cloned(),
    })
}

/// kube's `ToStatusErr`: the Status a refusing webhook gave, its message prefixed, at
/// least a 400, always a Failure.
pub fn denied(hook: &str, result: Option<&Value>) -> ApiError {
    let denied_by = format!("admission webhook {hook:?} denied the request");
    let text = |key: &str| result.and_then(|r| r.get(key)).and_then(Value::as_str).unwrap_or_default();
    let code = result.and_then(|r| r.get("code")).and_then(Value::as_u64).unwrap_or(0);
    let code = if code < 400 { 400 } else { code.min(u64::from(u16::MAX)) as u16 };
    let (message, reason) = (text("message"), text("reason"));
    let message = match (message, reason) {
        (m, _) if !m.is_empty() => format!("{denied_by}: {m}"),
        (_, r) if !r.is_empty() => format!("{denied_by}: {r}"),
        _ => format!("{denied_by} without explanation"),
    };
    let mut error = ApiError::new(code, reason, message);
    if let Some(details) = result.and_then(|r| r.get("details")).filter(|d| !d.is_null()) {
        error.details = serde_json::from_value(details.clone()).ok().map(Box::new);
    }
    error
}

/// kube's error for a webhook that could not be called or answered nonsense (its
/// `ErrCallingWebhook`), as a fail-closed webhook's 500 carries it.
pub fn calling_failed(hook: &str, why: &str) -> ApiError {
    ApiError::internal(format!("failed calling webhook {hook:?}: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(response: Value) -> Value {
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response})
    }

    #[test]
    fn a_v1_answer_must_name_the_review_and_may_patch_only_when_mutating() {
        let ok = answer(json!({"uid": "u", "allowed": true, "warnings": ["w"]}));
        let v = verdict("v1", "u", false, &ok).expect("taken");
        assert!(v.allowed && v.patch.is_none());
        assert_eq!(v.warnings, ["w"]);
        let wrong_uid = answer(json!({"uid": "x", "allowed": true}));
        assert_eq!(
            verdict("v1", "u", false, &wrong_uid).expect_err("refused"),
            r#"expected response.uid="u", got "x""#
        );
        assert_eq!(
            verdict("v1", "u", false, &json!({"kind": "AdmissionReview"})).expect_err("refused"),
            "webhook response was absent"
        );
        let patched = answer(json!({"uid": "u", "allowed": true, "patch": "W10=", "patchType": "JSONPatch"}));
        assert_eq!(verdict("v1", "u", true, &patched).expect("taken").patch.as_deref(), Some(&b"[]"[..]));
        assert_eq!(
            verdict("v1", "u", false, &patched).expect_err("refused"),
            "validating webhook may not return response.patch"
        );
        let untyped = answer(json!({"uid": "u", "allowed": true, "patch": "W10="}));
        assert_eq!(
            verdict("v1", "u", true, &untyped).expect_err("refused"),
            "webhook returned response.patch but not response.patchType"
        );
        // A v1beta1 answer is not checked for its uid, and its patch is a JSON patch.
        let beta = json!({"response": {"allowed": true, "patch": "W10="}});
        assert!(verdict("v1beta1", "u", true, &beta).expect("taken").patch.is_some());
    }

    #[test]
    fn a_refusal_is_the_webhooks_status_with_kubes_words_before_its_message() {
        let e = denied("h.example.com", Some(&json!({"message": "no", "code": 403, "reason": "Forbidden"})));
        assert_eq!((e.code, e.reason.as_str()), (403, "Forbidden"));
        assert_eq!(e.message, r#"admission webhook "h.example.com" denied the request: no"#);
        let bare = denied("h", None);
        assert_eq!((bare.code, bare.reason.as_str()), (400, ""));
        assert_eq!(bare.message, r#"admission webhook "h" denied the request without explanation"#);
        let reason_only = denied("h", Some(&json!({"reason": "NotAllowed", "code": 200})));
        assert_eq!(
            (reason_only.code, reason_only.message.as_str()),
            (400, r#"admission webhook "h" denied the request: NotAllowed"#)
        );
    }

    #[test]
    fn the_request_names_the_object_its_resource_and_who_asks() {
        let user = json!({"username": "u"});
        let (obj, options) = (json!({"kind": "Widget"}), json!({"kind": "CreateOptions"}));
        let asked = Asked {
            kind: Gvx { group: "g", version: "v1", name: "Widget" },
            resource: Gvx { group: "g", version: "v1", name: "widgets" },
            request_kind: Gvx { group: "g", version: "v2", name: "Widget" },
            request_resource: Gvx { group: "g", version: "v2", name: "widgets" },
            subresource: "status",
            name: "w",
            namespace: "ns",
            operation: "UPDATE",
            user: &user,
            object: Some(&obj),
            old_object: None,
            dry_run: true,
            options: &options,
        };
        let review = request("v1", "uid-1", &asked);
        let r = &review["request"];
        assert_eq!(review["apiVersion"], "admission.k8s.io/v1");
        assert_eq!(
            (r["uid"].as_str(), r["subResource"].as_str(), r["requestSubResource"].as_str()),
            (Some("uid-1"), Some("status"), Some("status"))
        );
        assert_eq!(r["resource"], json!({"group": "g", "version": "v1", "resource": "widgets"}));
        assert_eq!(r["requestKind"], json!({"group": "g", "version": "v2", "kind": "Widget"}));
        assert_eq!((r["oldObject"].clone(), r["dryRun"].clone()), (Value::Null, Value::from(true)));
    }
}
