//! Where a write meets admission, as kube-apiserver's handlers and store call its admission
//! chain: mutating admission on the object the request made (after its managedFields are
//! computed, before the strategy prepares and validates it), validating admission on the
//! object about to be stored (after the strategy's validation). A delete is admitted with
//! the object it deletes as the old one and no new one.
//!
//! The verbs know only this interface; what admits (the engine's webhook dispatcher, see
//! `crate::admission`) sits above them.

use super::ResourceInfo;
use super::rest::WriteOptions;
use crate::status::ApiError;
use async_trait::async_trait;
use serde_json::Value;

/// kube's admission operations (those a write can be).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Create,
    Update,
    Delete,
}

impl Operation {
    /// The name in an AdmissionReview and in a webhook's rules.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
        }
    }
}

/// What one write tells admission about itself (kube's `admission.Attributes`).
pub struct Attributes<'a> {
    pub operation: Operation,
    /// The kind at the request's version.
    pub info: &'a ResourceInfo,
    /// `status`, `scale`, `finalize`; `None` for the main endpoint.
    pub subresource: Option<&'static str>,
    /// The group, version and kind of the objects admission is shown, when not the
    /// resource's own: a `/scale` write's `autoscaling/v1` Scale.
    pub object_kind: Option<(&'static str, &'static str, &'static str)>,
    pub namespace: Option<&'a str>,
    /// The object's name (empty for a create whose name is not generated yet).
    pub name: &'a str,
    /// The operation's options as kube shows them (`CreateOptions`, `UpdateOptions`,
    /// `DeleteOptions`), with their `kind` and `apiVersion`.
    pub options: Value,
    pub dry_run: bool,
    /// The request's options, where its warnings go.
    pub opts: &'a WriteOptions,
}

/// An admission chain.
#[async_trait]
pub trait Admission: Send + Sync {
    /// Mutating admission: may change `obj` (`None` for a delete, which has only `old`);
    /// says whether it did.
    async fn mutate(
        &self,
        attrs: &Attributes<'_>,
        obj: Option<&mut Value>,
        old: Option<&Value>,
    ) -> Result<bool, ApiError>;

    /// Validating admission: may refuse, changes nothing.
    async fn validate(&self, attrs: &Attributes<'_>, obj: Option<&Value>, old: Option<&Value>) -> Result<(), ApiError>;
}

/// No admission at all: the engine's own controllers' writes, and tests of the verbs.
pub struct NoAdmission;

#[async_trait]
impl Admission for NoAdmission {
    async fn mutate(&self, _: &Attributes<'_>, _: Option<&mut Value>, _: Option<&Value>) -> Result<bool, ApiError> {
        Ok(false)
    }

    async fn validate(&self, _: &Attributes<'_>, _: Option<&Value>, _: Option<&Value>) -> Result<(), ApiError> {
        Ok(())
    }
}

/// kube's `CreateOptions` / `UpdateOptions` of a write as admission shows them: only what
/// the request set (a field manager derived from the User-Agent is not shown).
pub fn write_options_document(kind: &str, opts: &WriteOptions) -> Value {
    let mut doc = serde_json::Map::new();
    doc.insert("kind".into(), Value::from(kind));
    doc.insert("apiVersion".into(), Value::from("meta.k8s.io/v1"));
    if opts.dry_run {
        doc.insert("dryRun".into(), serde_json::json!(["All"]));
    }
    if let Some(manager) = opts.field_manager.as_ref().filter(|_| opts.field_manager_given) {
        doc.insert("fieldManager".into(), Value::from(manager.as_str()));
    }
    if let Some(validation) = opts.field_validation_given {
        doc.insert("fieldValidation".into(), Value::from(validation));
    }
    Value::Object(doc)
}

/// kube's `DeleteOptions` of a delete as admission shows them.
pub fn delete_options_document(delete: &super::rest::DeleteOptions, dry_run: bool) -> Value {
    let mut doc = serde_json::Map::new();
    doc.insert("kind".into(), Value::from("DeleteOptions"));
    doc.insert("apiVersion".into(), Value::from("meta.k8s.io/v1"));
    let mut preconditions = serde_json::Map::new();
    if let Some(uid) = &delete.precondition_uid {
        preconditions.insert("uid".into(), Value::from(uid.as_str()));
    }
    if let Some(rv) = &delete.precondition_rv {
        preconditions.insert("resourceVersion".into(), Value::from(rv.as_str()));
    }
    if !preconditions.is_empty() {
        doc.insert("preconditions".into(), Value::Object(preconditions));
    }
    // The deprecated field, when given, is folded into the policy; it is shown as given.
    match (delete.orphan_dependents, delete.propagation) {
        (Some(orphan), _) => {
            doc.insert("orphanDependents".into(), Value::from(orphan));
        }
        (None, Some(policy)) => {
            doc.insert("propagationPolicy".into(), Value::from(policy.as_str()));
        }
        (None, None) => {}
    }
    if dry_run {
        doc.insert("dryRun".into(), serde_json::json!(["All"]));
    }
    Value::Object(doc)
}
