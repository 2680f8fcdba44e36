//! The checks kube-apiserver makes of a write before its strategy sees the object: the
//! preconditions its storage enforces (the uid a PUT names, the resourceVersion an update
//! must name for kinds that refuse unconditional updates) and a custom resource's type
//! meta. Each answers with kube's own words.

use super::rest::Rest;
use crate::field::{ErrorType, FieldError};
use crate::meta;
use crate::status::ApiError;
use serde_json::Value;

impl Rest<'_> {
    /// The `metadata.uid` of a PUT body is a precondition on the stored object (kube's
    /// `UpdatedObjectInfo.Preconditions`), which kube's storage checks before anything
    /// else and reports with the etcd key (a dry run's storage checks the key it was
    /// given, before the etcd store prefixes it with `/registry`).
    pub(super) fn check_uid_precondition(
        &self,
        namespace: Option<&str>,
        name: &str,
        requested: Option<&str>,
        current: &Value,
        dry_run: bool,
    ) -> Result<(), ApiError> {
        let Some(want) = requested.filter(|uid| !uid.is_empty()) else { return Ok(()) };
        let have = meta::uid(current).unwrap_or_default();
        if want == have {
            return Ok(());
        }
        let scope = match namespace.filter(|_| self.strategy.info().namespaced) {
            Some(ns) => format!("{ns}/"),
            None => String::new(),
        };
        let prefix = self.strategy.precondition_key_prefix();
        // A dry run's storage checks the precondition itself, on the key below etcd's root.
        let prefix = match dry_run {
            true => prefix.strip_prefix("/registry").map_or(prefix.clone(), String::from),
            false => prefix,
        };
        let key = format!("{prefix}{scope}{name}");
        let why = format!(
            "StorageError: invalid object, Code: 4, Key: {key}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: {want}, UID in object meta: {have}"
        );
        Err(ApiError::conflict(&self.strategy.info().group_resource(), name, &why))
    }

    /// kube's 422 for an update without a resourceVersion to a kind that needs one, named
    /// by its resource (`widgets.stable.example.com "w1" is invalid`).
    pub(super) fn resource_version_required(&self, name: &str) -> ApiError {
        // Go prints the missing uint64 with `%#v`: `0x0`, bare.
        let error = FieldError {
            error_type: ErrorType::Invalid,
            field: "metadata.resourceVersion".into(),
            value: None,
            detail: "0x0: must be specified for an update".into(),
        };
        ApiError::invalid(&self.strategy.info().plural, &self.strategy.info().group, name, &[error])
    }

    /// kube's `ValidateTypeMeta` of a custom resource, which its validation runs first and
    /// alone: another kind or `apiVersion` than the endpoint's (a patch may change them)
    /// is a 422 naming the object's own kind and group.
    pub(super) fn check_kind(&self, obj: &Value, name: &str) -> Result<(), ApiError> {
        match self.kind_errors(obj) {
            Some((kind, group, errors)) => Err(ApiError::invalid(&kind, &group, name, &errors)),
            None => Ok(()),
        }
    }

    /// [`Self::check_kind`]'s errors, with the kind and group its Status names.
    pub(super) fn kind_errors(&self, obj: &Value) -> Option<(String, String, Vec<FieldError>)> {
        if !self.strategy.unstructured() {
            return None;
        }
        let info = self.strategy.info();
        let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default();
        let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
        let want = info.api_version();
        let mut errors = Vec::new();
        if !kind.is_empty() && kind != info.kind {
            errors.push(FieldError::invalid("kind", kind, format!("must be {}", info.kind)));
        }
        if !api_version.is_empty() && api_version != want {
            errors.push(FieldError::invalid("apiVersion", api_version, format!("must be {want}")));
        }
        if errors.is_empty() {
            return None;
        }
        let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
        Some((kind.to_string(), group.to_string(), errors))
    }
}
