//! `metav1.Status`: the one shape every engine error takes on the wire.
//!
//! Constructors mirror apimachinery's `apierrors` (NewNotFound, NewAlreadyExists,
//! NewConflict, NewInvalid, ...) with the same messages, so that clients which look at
//! `reason` and `code` (kubectl, client-go, kube-rs) behave as they do against kube-apiserver.

use crate::field::{FieldError, aggregate_message};
use serde::{Deserialize, Serialize};

/// A group and resource, as in `widgets.stable.example.com` (empty group for core).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupResource {
    /// The API group; empty for the core group.
    pub group: String,
    /// The plural resource name.
    pub resource: String,
}

impl GroupResource {
    /// The group resource `resource.group`.
    pub fn new(group: &str, resource: &str) -> Self {
        GroupResource { group: group.to_string(), resource: resource.to_string() }
    }
    /// `widgets.stable.example.com`, or `namespaces` for the core group.
    pub fn qualified(&self) -> String {
        if self.group.is_empty() { self.resource.clone() } else { format!("{}.{}", self.resource, self.group) }
    }
}

/// One entry of `details.causes`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatusCause {
    /// Machine-readable kind of the cause (`FieldValueInvalid`, `FieldValueRequired`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The human-readable cause.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The field path the cause is about (`spec.replicas`), when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

/// `details` of a Status. Field order is the wire order kube-apiserver uses.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StatusDetails {
    /// The name of the object the error is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its API group.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Its kind, or its resource where kube reports that (NotFound, AlreadyExists).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Its uid, when a precondition on it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// Every cause, in the order they were found (each field error of a 422).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub causes: Vec<StatusCause>,
    /// How long a client should wait before retrying (429, 503, 504).
    #[serde(rename = "retryAfterSeconds", skip_serializing_if = "Option::is_none")]
    pub retry_after_seconds: Option<u32>,
}

/// A failure Status. Serializes exactly as kube-apiserver's error bodies.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ApiError {
    /// The HTTP status code.
    pub code: u16,
    /// The `StatusReason` (`NotFound`, `Invalid`, `Conflict`, ...); empty when kube gives none.
    pub reason: String,
    /// The message, worded as kube-apiserver words it.
    pub message: String,
    /// Boxed: errors travel in `Result`s everywhere and should stay small.
    pub details: Option<Box<StatusDetails>>,
    /// Not part of the Status: a write found the object changed since it was read, after
    /// the request's own preconditions had held, so the whole read-modify-write may run
    /// again on what is stored now (see `Rest::guaranteed`).
    pub(crate) raced: bool,
}

#[derive(Serialize)]
struct StatusWire<'a> {
    kind: &'static str,
    #[serde(rename = "apiVersion")]
    api_version: &'static str,
    metadata: serde_json::Map<String, serde_json::Value>,
    status: &'static str,
    message: &'a str,
    /// Go's `omitempty`: an error kube did not classify (a 500 passed on as is) has none.
    #[serde(skip_serializing_if = "str::is_empty")]
    reason: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    details: Option<&'a StatusDetails>,
    code: u16,
}

impl ApiError {
    /// A Status with this code, reason and message and no details.
    pub fn new(code: u16, reason: &str, message: impl Into<String>) -> Self {
        ApiError { code, reason: reason.to_string(), message: message.into(), details: None, raced: false }
    }

    fn with_details(mut self, details: StatusDetails) -> Self {
        self.details = Some(Box::new(details));
        self
    }

    fn named(gr: &GroupResource, name: &str) -> StatusDetails {
        StatusDetails {
            // An empty name and the core group are omitted, as Go's omitempty does
            // (reference 62; `gizmos/%2Fg1/status` names no object).
            name: Some(name.to_string()).filter(|n| !n.is_empty()),
            group: Some(gr.group.clone()).filter(|g| !g.is_empty()),
            kind: Some(gr.resource.clone()),
            ..Default::default()
        }
    }

    /// 403 `widgets.stable.example.com "w1" is forbidden: why` (kube's `NewForbidden`).
    pub fn forbidden(gr: &GroupResource, name: &str, why: &str) -> Self {
        Self::new(403, "Forbidden", format!("{} {name:?} is forbidden: {why}", gr.qualified()))
            .with_details(Self::named(gr, name))
    }

    /// 404 `widgets.stable.example.com "w1" not found`.
    pub fn not_found(gr: &GroupResource, name: &str) -> Self {
        Self::new(404, "NotFound", format!("{} \"{}\" not found", gr.qualified(), name))
            .with_details(Self::named(gr, name))
    }

    /// 404 for a path under a built-in group version that no route of it matches:
    /// go-restful's service error, which kube writes as a generic Status with empty details.
    pub fn no_route() -> Self {
        Self::new(404, "NotFound", "the server could not find the requested resource")
            .with_details(StatusDetails::default())
    }

    /// 415 listing the patch types custom resources take (reference 27 wording).
    pub fn unsupported_patch() -> Self {
        Self::unsupported_patch_of(false)
    }

    /// 415 listing the patch types an endpoint takes: built-in kinds and CRDs take strategic
    /// merge patches too.
    pub fn unsupported_patch_of(strategic: bool) -> Self {
        let types = if strategic {
            "application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml"
        } else {
            "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
        };
        Self::new(
            415,
            "UnsupportedMediaType",
            format!("the body of the request was in an unknown format - accepted media types include: {types}"),
        )
    }

    /// 415 for a PATCH whose Content-Type no route of a built-in group version consumes:
    /// go-restful's service error, written as a generic Status with empty details.
    pub fn no_route_consumes() -> Self {
        Self::new(415, "UnsupportedMediaType", "415: Unsupported Media Type").with_details(StatusDetails::default())
    }

    /// 409 `widgets.stable.example.com "w1" already exists`.
    pub fn already_exists(gr: &GroupResource, name: &str) -> Self {
        Self::new(409, "AlreadyExists", format!("{} \"{}\" already exists", gr.qualified(), name))
            .with_details(Self::named(gr, name))
    }

    /// 409 AlreadyExists for a create whose name came from `generateName`, with the retry
    /// kube suggests (`NewGenerateNameConflict`; details name the resource as `kind`).
    pub fn generate_name_conflict(gr: &GroupResource, name: &str) -> Self {
        let message = format!(
            "{} \"{}\" already exists, the server was not able to generate a unique name for the object",
            gr.qualified(),
            name
        );
        Self::new(409, "AlreadyExists", message)
            .with_details(StatusDetails { retry_after_seconds: Some(1), ..Self::named(gr, name) })
    }

    /// 409 Conflict with kube's optimistic-concurrency wording.
    pub fn conflict(gr: &GroupResource, name: &str, why: &str) -> Self {
        Self::new(409, "Conflict", format!("Operation cannot be fulfilled on {} \"{}\": {}", gr.qualified(), name, why))
            .with_details(Self::named(gr, name))
    }

    /// The reason kube gives for a stale resourceVersion.
    pub const STALE_OBJECT: &'static str =
        "the object has been modified; please apply your changes to the latest version and try again";

    /// 422 Invalid: `Kind.group "name" is invalid: ...` with one cause per field error.
    pub fn invalid(kind: &str, group: &str, name: &str, errors: &[FieldError]) -> Self {
        let qualified_kind = if group.is_empty() { kind.to_string() } else { format!("{kind}.{group}") };
        let message = format!("{} \"{}\" is invalid: {}", qualified_kind, name, aggregate_message(errors));
        let causes = errors
            .iter()
            .map(|e| StatusCause {
                reason: Some(e.error_type.cause_reason().to_string()),
                message: Some(e.body()),
                field: Some(e.field.clone()),
            })
            .collect();
        // Go's `omitempty`: an unnamed object (options) or the core group leave them out.
        let given = |s: &str| (!s.is_empty()).then(|| s.to_string());
        Self::new(422, "Invalid", message).with_details(StatusDetails {
            name: given(name),
            group: given(group),
            kind: given(kind),
            causes,
            ..Default::default()
        })
    }

    /// 400 BadRequest.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    /// 405 MethodNotAllowed, as kube answers a method no route of a path takes (its
    /// `NewGenericServerResponse`): the method is not named and the details are empty.
    pub fn method_not_allowed() -> Self {
        Self::new(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
            .with_details(StatusDetails::default())
    }

    /// 405 `create is not supported on resources of kind "widgets.stable.example.com"`:
    /// apimachinery's `NewMethodNotSupported`, which the custom resource handler gives for
    /// a verb an endpoint lacks (`verb` is empty for a method that maps to no verb).
    pub fn method_not_supported(gr: &GroupResource, verb: &str) -> Self {
        let message =
            format!("{verb} is not supported on resources of kind {}", crate::field::go_quote(&gr.qualified()));
        Self::new(405, "MethodNotAllowed", message).with_details(StatusDetails {
            group: Some(gr.group.clone()).filter(|g| !g.is_empty()),
            kind: Some(gr.resource.clone()),
            ..Default::default()
        })
    }

    /// 504 `Too large resource version`, with kube's cause and retry hint (the message is
    /// `NewTimeoutError`'s, which puts `Timeout: ` first).
    pub fn too_large_resource_version(requested: u64, current: u64) -> Self {
        let message = format!("Timeout: Too large resource version: {requested}, current: {current}");
        let mut err = ApiError::new(504, "Timeout", message);
        err.details = Some(Box::new(StatusDetails {
            causes: vec![StatusCause {
                reason: Some("ResourceVersionTooLarge".into()),
                message: Some("Too large resource version".into()),
                field: None,
            }],
            retry_after_seconds: Some(1),
            ..Default::default()
        }));
        err
    }

    /// A read of etcd at a revision it has not reached (an `Exact` list, a legacy exact one
    /// with a limit, a continue token naming it): kube passes etcd's error on as a bare 500,
    /// at once, where its watch cache would have waited and answered 504.
    pub fn future_revision() -> Self {
        ApiError::new(500, "", "etcdserver: mvcc: required revision is a future revision")
    }

    /// 429 TooManyRequests, with the seconds to wait before retrying (kube's
    /// `NewTooManyRequests`).
    pub fn too_many_requests(message: impl Into<String>, retry_after_seconds: u32) -> Self {
        Self::new(429, "TooManyRequests", message)
            .with_details(StatusDetails { retry_after_seconds: Some(retry_after_seconds), ..Default::default() })
    }

    /// 410 Expired, as a watch from a compacted resourceVersion receives.
    pub fn expired(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }

    /// A store failure with no meaning of its own: 504 when the store (etcd) did not answer,
    /// in the words kube-apiserver's etcd client gives up with on a write (recorded with its
    /// etcd down: `tests/it/etcd_outage/`), else 500.
    pub fn storage(e: &crate::store::StoreError) -> Self {
        match e {
            crate::store::StoreError::Unavailable(why) => {
                tracing::warn!("storage unavailable: {why}");
                Self::new(
                    504,
                    "Timeout",
                    "Timeout: request did not complete within requested timeout - context deadline exceeded",
                )
                .with_details(StatusDetails::default())
            }
            // Refusals for size, passed on as kube passes them: a 500 without a reason.
            too_large @ (crate::store::StoreError::RequestTooLarge
            | crate::store::StoreError::MessageTooLarge { .. }) => Self::new(500, "", too_large.to_string()),
            other => Self::internal(other.to_string()),
        }
    }

    /// As [`ApiError::storage`], for a read: kube's reads wait for etcd until its request
    /// timeout, and its timeout filter answers them in its own words.
    pub fn storage_read(e: &crate::store::StoreError) -> Self {
        match e {
            crate::store::StoreError::Unavailable(why) => {
                tracing::warn!("storage unavailable: {why}");
                Self::new(504, "Timeout", Self::READ_TIMEOUT).with_details(StatusDetails::default())
            }
            other => Self::storage(other),
        }
    }

    /// What [`ApiError::storage_read`] says.
    const READ_TIMEOUT: &str = "Timeout: request did not complete within the allotted timeout";

    /// A read's timeout (see [`ApiError::storage_read`]) reworded as a write's, for a read
    /// that only checks a write (kube reads those from its caches, and the write's storage
    /// call is the one that times out).
    pub fn read_timeout_as_write(self) -> Self {
        if self.code == 504 && self.message == Self::READ_TIMEOUT {
            return Self::storage(&crate::store::StoreError::Unavailable("etcd did not answer".into()));
        }
        self
    }

    /// The ERROR event a watch gets when the store (etcd) does not answer as it starts:
    /// kube's, whose watch answers 200 and then this.
    pub fn watch_storage_unavailable() -> Self {
        Self::new(500, "InternalError", "context deadline exceeded")
    }

    /// 500 InternalError.
    pub fn internal(message: impl Into<String>) -> Self {
        let message = message.into();
        Self::new(500, "InternalError", format!("Internal error occurred: {message}")).with_details(StatusDetails {
            causes: vec![StatusCause { reason: None, message: Some(message), field: None }],
            ..Default::default()
        })
    }

    /// 401 Unauthorized.
    pub fn unauthorized() -> Self {
        Self::new(401, "Unauthorized", "Unauthorized")
    }

    /// The Status object as JSON (a `Value`: keys sorted; see [`ApiError::to_body`]).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self.wire()).unwrap_or(serde_json::Value::Null)
    }

    /// The Status body as sent, field order as kube-apiserver writes it.
    pub fn to_body(&self) -> String {
        serde_json::to_string(&self.wire()).unwrap_or_default()
    }

    fn wire(&self) -> StatusWire<'_> {
        StatusWire {
            kind: "Status",
            api_version: "v1",
            metadata: serde_json::Map::new(),
            status: "Failure",
            message: &self.message,
            reason: &self.reason,
            details: self.details.as_deref(),
            code: self.code,
        }
    }

    /// Whether this is a 404 (as apimachinery's `IsNotFound`).
    pub fn is_not_found(&self) -> bool {
        self.code == 404
    }
    /// Whether this is a 409 (as apimachinery's `IsConflict`).
    pub fn is_conflict(&self) -> bool {
        self.code == 409
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn invalid_status_matches_reference_shape() {
        let errs = vec![FieldError::invalid(
            "metadata.name",
            "gizmo.stable.example.com",
            "must be spec.names.plural+\".\"+spec.group",
        )];
        let s =
            ApiError::invalid("CustomResourceDefinition", "apiextensions.k8s.io", "gizmo.stable.example.com", &errs);
        // From reference 11-crd-invalid-name-422.http.
        let expected = json!({
          "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
          "message": "CustomResourceDefinition.apiextensions.k8s.io \"gizmo.stable.example.com\" is invalid: metadata.name: Invalid value: \"gizmo.stable.example.com\": must be spec.names.plural+\".\"+spec.group",
          "reason": "Invalid",
          "details": {"name": "gizmo.stable.example.com", "group": "apiextensions.k8s.io", "kind": "CustomResourceDefinition",
            "causes": [{"reason": "FieldValueInvalid",
              "message": "Invalid value: \"gizmo.stable.example.com\": must be spec.names.plural+\".\"+spec.group",
              "field": "metadata.name"}]},
          "code": 422
        });
        assert_eq!(s.to_json(), expected);
    }

    #[test]
    fn not_found_names_the_qualified_resource() {
        let s = ApiError::not_found(&GroupResource::new("stable.example.com", "widgets"), "w3");
        assert_eq!(s.message, "widgets.stable.example.com \"w3\" not found");
        assert_eq!(s.to_json()["details"]["kind"], "widgets");
        assert!(s.is_not_found());
    }
}
