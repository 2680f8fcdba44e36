//! What kube-apiserver's scheme (`legacyscheme`) says of a built-in kind's body before
//! anything else: a body names a kind its decoder knows, converts to the endpoint's
//! internal kind, and is of the endpoint's group version. kube's typed decoding words
//! each failure its own way, unlike the unstructured one custom resources get.

use crate::field::go_quote;
use crate::resources::ResourceInfo;
use crate::status::ApiError;
use serde_json::Value;

/// Where kube's scheme lives, as its "no kind is registered" errors name it.
const SCHEME: &str = "pkg/api/legacyscheme/scheme.go:30";

/// The kinds registered at the group versions a client of the built-in kinds is likely
/// to send (a kind not listed here is answered as unregistered).
const REGISTERED: &[(&str, &[&str])] = &[
    (
        "v1",
        &[
            "Binding",
            "ComponentStatus",
            "ConfigMap",
            "Endpoints",
            "Event",
            "LimitRange",
            "Namespace",
            "Node",
            "PersistentVolume",
            "PersistentVolumeClaim",
            "Pod",
            "PodTemplate",
            "ReplicationController",
            "ResourceQuota",
            "Secret",
            "Service",
            "ServiceAccount",
        ],
    ),
    ("admissionregistration.k8s.io/v1", ADMISSION_V1_KINDS),
    ("admissionregistration.k8s.io/v1beta1", ADMISSION_V1_KINDS),
    (
        "admissionregistration.k8s.io/v1alpha1",
        &[
            "MutatingAdmissionPolicy",
            "MutatingAdmissionPolicyBinding",
            "ValidatingAdmissionPolicy",
            "ValidatingAdmissionPolicyBinding",
        ],
    ),
    ("apps/v1", &["ControllerRevision", "DaemonSet", "Deployment", "ReplicaSet", "StatefulSet"]),
    ("batch/v1", &["CronJob", "Job"]),
    ("authentication.k8s.io/v1", &["SelfSubjectReview", "TokenReview"]),
    ("authentication.k8s.io/v1beta1", &["SelfSubjectReview", "TokenReview"]),
    ("authentication.k8s.io/v1alpha1", &["SelfSubjectReview"]),
    ("authorization.k8s.io/v1", AUTHORIZATION_KINDS),
    ("authorization.k8s.io/v1beta1", AUTHORIZATION_KINDS),
    ("coordination.k8s.io/v1", &["Lease"]),
    ("coordination.k8s.io/v1beta1", &["Lease"]),
    ("coordination.k8s.io/v1alpha2", &["LeaseCandidate"]),
    ("events.k8s.io/v1", &["Event"]),
    ("events.k8s.io/v1beta1", &["Event"]),
];

const ADMISSION_V1_KINDS: &[&str] = &[
    "MutatingWebhookConfiguration",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "ValidatingWebhookConfiguration",
];

const AUTHORIZATION_KINDS: &[&str] =
    &["LocalSubjectAccessReview", "SelfSubjectAccessReview", "SelfSubjectRulesReview", "SubjectAccessReview"];

fn registered(api_version: &str, kind: &str) -> bool {
    REGISTERED.iter().any(|(gv, kinds)| *gv == api_version && kinds.contains(&kind))
}

/// Whether kube-apiserver's legacy scheme holds the endpoint's kind (a CRD is another
/// server's, decoded by its own scheme).
pub fn holds(info: &ResourceInfo) -> bool {
    registered(&info.api_version(), &info.kind)
}

/// The package of a kind's internal type (`core.Event` serves both Event APIs).
fn internal_package(group: &str) -> &str {
    match group {
        "" | "events.k8s.io" => "core",
        other => other.split('.').next().unwrap_or(other),
    }
}

/// The `apiVersion`, `kind` and version a typed object is decoded as: what it gives, or
/// the endpoint's (`want_version`, its kind).
fn type_meta<'a>(obj: &'a Value, info: &'a ResourceInfo, want_version: &'a str) -> (&'a str, &'a str, &'a str) {
    let given = |field: &str| obj.get(field).and_then(Value::as_str).filter(|s| !s.is_empty());
    let api_version = given("apiVersion").unwrap_or(want_version);
    let kind = given("kind").unwrap_or(&info.kind);
    (api_version, kind, api_version.rsplit('/').next().unwrap_or(api_version))
}

/// Why kube's decoder cannot make the endpoint's internal kind of a typed object (missing
/// `apiVersion` and `kind` are the endpoint's): a kind unknown at its version, or another
/// kind. A create or update words it as the body's; a patch quotes it as it is.
pub fn undecodable(obj: &Value, info: &ResourceInfo) -> Option<String> {
    let want_version = info.api_version();
    let (api_version, kind, version) = type_meta(obj, info, &want_version);
    if !registered(api_version, kind) {
        return Some(format!(
            "no kind {} is registered for version {} in scheme {}",
            go_quote(kind),
            go_quote(api_version),
            go_quote(SCHEME)
        ));
    }
    (kind != info.kind).then(|| {
        format!(
            "converting ({version}.{kind}) to ({}.{}): unknown conversion",
            internal_package(&info.group),
            info.kind
        )
    })
}

/// kube's checks of a typed body's `apiVersion` and `kind` (missing ones are the
/// endpoint's): the decoder refuses a kind it does not know at that version, the
/// conversion to the endpoint's internal kind refuses another kind (see [`undecodable`]),
/// and the create and update handlers refuse another group version.
pub fn check_type_meta(obj: &Value, info: &ResourceInfo) -> Result<(), ApiError> {
    let want_version = info.api_version();
    let (api_version, kind, version) = type_meta(obj, info, &want_version);
    if let Some(why) = undecodable(obj, info) {
        return Err(ApiError::bad_request(format!(
            "{kind} in version {} cannot be handled as a {}: {why}",
            go_quote(version),
            info.kind
        )));
    }
    if api_version != want_version {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({api_version}) does not match the expected API version ({want_version})"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn message(body: Value, info: &ResourceInfo) -> String {
        check_type_meta(&body, info).err().map(|e| e.message).unwrap_or_default()
    }

    #[test]
    fn typed_bodies_are_refused_as_kubes_decoder_refuses_them() {
        let cm = super::super::info("", "configmaps", "ConfigMap", &[], true);
        assert_eq!(
            message(json!({"apiVersion": "v1", "kind": "Secret"}), &cm),
            "Secret in version \"v1\" cannot be handled as a ConfigMap: converting (v1.Secret) to (core.ConfigMap): unknown conversion"
        );
        assert_eq!(
            message(json!({"apiVersion": "apps/v1", "kind": "ConfigMap"}), &cm),
            "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: no kind \"ConfigMap\" is registered for version \"apps/v1\" in scheme \"pkg/api/legacyscheme/scheme.go:30\""
        );
        assert_eq!(message(json!({"metadata": {}}), &cm), "");
        let lease = super::super::info("coordination.k8s.io", "leases", "Lease", &[], true);
        assert_eq!(
            message(json!({"apiVersion": "coordination.k8s.io/v1beta1", "kind": "Lease"}), &lease),
            "the API version in the data (coordination.k8s.io/v1beta1) does not match the expected API version (coordination.k8s.io/v1)"
        );
        let events = super::super::info("events.k8s.io", "events", "Event", &[], true);
        assert_eq!(
            message(json!({"apiVersion": "v1", "kind": "Event"}), &events),
            "the API version in the data (v1) does not match the expected API version (events.k8s.io/v1)"
        );
    }
}
