//! The metadata rules of a CRD: its name is `<plural>.<group>`, it is cluster-scoped, and
//! in the Kubernetes project's own groups it carries an API-approval annotation.
//!
//! Generic object-metadata rules (labels, annotations syntax, finalizers, owner
//! references) are shared by every kind and live with the generic object layer
//! ([`validate_meta_fields`]); only the CRD-specific ones live here.

use crate::field::{FieldError, Path, go_quote};
use crate::schema::names::name_is_dns_subdomain;
use crate::schema::object_meta::validate_meta_fields;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

/// The annotation a CRD in a protected group (`*.k8s.io`, `*.kubernetes.io`) must carry.
pub const API_APPROVED_ANNOTATION: &str = "api-approved.kubernetes.io";

const ENHANCEMENT: &str = "see https://github.com/kubernetes/enhancements/pull/1111";

/// Name (and `generateName`) rules, no namespace, and the rules of every kind's metadata.
pub fn validate_metadata(crd: &CustomResourceDefinition) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let metadata = Path::root("metadata");
    let required_name = format!("{}.{}", crd.spec.names.plural, crd.spec.group);
    let name_problems = |name: &str, prefix: bool| {
        let mut problems = name_is_dns_subdomain(name, prefix);
        if name != required_name {
            problems.push("must be spec.names.plural+\".\"+spec.group".to_string());
        }
        problems
    };
    let meta = &crd.metadata;
    if let Some(generate_name) = meta.generate_name.as_deref().filter(|g| !g.is_empty()) {
        for problem in name_problems(generate_name, true) {
            errs.push(FieldError::invalid(metadata.child("generateName"), generate_name, problem));
        }
    }
    match meta.name.as_deref().filter(|n| !n.is_empty()) {
        None => errs.push(FieldError::required(metadata.child("name"), "name or generateName is required")),
        Some(name) => {
            for problem in name_problems(name, false) {
                errs.push(FieldError::invalid(metadata.child("name"), name, problem));
            }
        }
    }
    if meta.namespace.as_deref().is_some_and(|n| !n.is_empty()) {
        errs.push(FieldError::forbidden(metadata.child("namespace"), "not allowed on this type"));
    }
    if let Ok(json) = serde_json::to_value(meta) {
        errs.extend(validate_meta_fields(&json, &metadata));
    }
    errs
}

#[derive(PartialEq)]
enum Approval {
    Missing,
    Bypassed,
    Approved,
    Invalid,
}

fn approval_annotation(crd: &CustomResourceDefinition) -> &str {
    crd.metadata.annotations.as_ref().and_then(|a| a.get(API_APPROVED_ANNOTATION)).map_or("", String::as_str)
}

/// Go's `GetAPIApprovalState`: the state and the sentence explaining it.
fn approval_state(crd: &CustomResourceDefinition) -> (Approval, String) {
    let annotation = approval_annotation(crd);
    let quoted = go_quote(API_APPROVED_ANNOTATION);
    // url.ParseRequestURI with a scheme and a host.
    let is_url = annotation
        .split_once("://")
        .is_some_and(|(scheme, rest)| !scheme.is_empty() && !rest.split('/').next().unwrap_or_default().is_empty());
    if annotation.is_empty() {
        (Approval::Missing, format!("protected groups must have approval annotation {quoted}, {ENHANCEMENT}"))
    } else if annotation.starts_with("unapproved") {
        (Approval::Bypassed, format!("not approved: {}", go_quote(annotation)))
    } else if is_url {
        (Approval::Approved, format!("approved in {annotation}"))
    } else {
        let detail = format!(
            "protected groups must have approval annotation {quoted} with either a URL or a reason starting with \"unapproved\", {ENHANCEMENT}"
        );
        (Approval::Invalid, detail)
    }
}

/// Groups under `k8s.io` and `kubernetes.io` belong to the Kubernetes project.
pub fn is_protected_community_group(group: &str) -> bool {
    group == "k8s.io" || group.ends_with(".k8s.io") || group == "kubernetes.io" || group.ends_with(".kubernetes.io")
}

/// A protected group needs an approval annotation (a URL, or a reason starting with
/// `unapproved`). An update that leaves the state as it was never fails, so controllers
/// rewriting old objects keep working.
pub fn validate_api_approval(
    crd: &CustomResourceDefinition,
    old: Option<&CustomResourceDefinition>,
) -> Vec<FieldError> {
    if !is_protected_community_group(&crd.spec.group) {
        return Vec::new();
    }
    let (state, reason) = approval_state(crd);
    if old.is_some_and(|old| approval_state(old).0 == state) {
        return Vec::new();
    }
    let path = Path::root("metadata").child("annotations").key(API_APPROVED_ANNOTATION);
    match state {
        Approval::Approved | Approval::Bypassed => Vec::new(),
        Approval::Missing => vec![FieldError::required(path, reason)],
        Approval::Invalid => vec![FieldError::invalid(path, approval_annotation(crd), reason)],
    }
}
