//! The `/scale` verbs: get, update and patch of an `autoscaling/v1` Scale over a custom
//! resource. The Scale is a view: every write becomes an update of the custom resource
//! through the main endpoint's rules, so generation, validation and the shared
//! resourceVersion all behave as for an ordinary update.

use super::patch::{self, PatchType};
use super::rest::{FieldValidation, Rest, Subresource, WriteOptions, check_type_meta};
use super::scale::{self, ScalePaths};
use crate::engine::meta;
use crate::engine::status::ApiError;
use serde_json::Value;

impl Rest<'_> {
    fn scale_paths(&self) -> Result<&ScalePaths, ApiError> {
        self.scale.ok_or_else(|| ApiError::not_found(&self.strategy.info().group_resource(), "scale"))
    }

    /// GET `/scale`.
    pub async fn get_scale(&self, namespace: Option<&str>, name: &str) -> Result<Value, ApiError> {
        let paths = self.scale_paths()?;
        Ok(scale::scale_of(&self.get(namespace, name).await?, paths))
    }

    /// PUT `/scale`: only `spec.replicas` is written back; the Scale's resourceVersion is
    /// the custom resource's precondition.
    pub async fn update_scale(
        &self,
        namespace: Option<&str>,
        name: &str,
        requested: Value,
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        let paths = self.scale_paths()?;
        check_scale_body(&requested, name)?;
        let old = self.get(namespace, name).await?;
        self.check_uid_precondition(namespace, name, meta::uid(&requested), &old)?;
        self.write_scale(namespace, name, &requested, &old, paths, opts).await
    }

    /// PATCH `/scale` (merge or JSON patch of the Scale, as `kubectl scale` and autoscalers
    /// send them).
    pub async fn patch_scale(
        &self,
        namespace: Option<&str>,
        name: &str,
        patch_type: PatchType,
        body: &[u8],
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        let paths = self.scale_paths()?;
        let old = self.get(namespace, name).await?;
        let current = scale::scale_of(&old, paths);
        let patched = match patch_type {
            PatchType::Merge => patch::merge(&current, body),
            PatchType::Json => patch::json(&current, body, opts.field_validation != FieldValidation::Ignore),
            // The api layer answers these with 415 before calling here.
            PatchType::StrategicMerge | PatchType::Apply => {
                return Err(ApiError::new(415, "UnsupportedMediaType", "only JSON and merge patches apply to /scale"));
            }
        }
        .map_err(ApiError::from)?;
        check_scale_body(&patched, name)?;
        self.write_scale(namespace, name, &patched, &old, paths, opts).await
    }

    async fn write_scale(
        &self,
        namespace: Option<&str>,
        name: &str,
        requested: &Value,
        old: &Value,
        paths: &ScalePaths,
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        let errors = scale::validate_scale(requested);
        if !errors.is_empty() {
            return Err(ApiError::invalid("Scale", "autoscaling", name, &errors));
        }
        let expected =
            match scale::precondition(requested) {
                Some(rv) => Some(meta::parse_resource_version(rv).ok_or_else(|| {
                    ApiError::bad_request(format!("invalid resourceVersion {rv:?}: must be a number"))
                })?),
                None => None,
            };
        let mut obj = old.clone();
        scale::set_spec_replicas(&mut obj, paths, scale::requested_replicas(requested));
        let written = self.write_update(namespace, name, obj, old, expected, Subresource::Scale, opts).await?;
        Ok(scale::scale_of(&written, paths))
    }
}

/// A Scale body must be `autoscaling/v1` `Scale` (when it says) and name the URL's object.
fn check_scale_body(scale: &Value, name: &str) -> Result<(), ApiError> {
    if !scale.is_object() {
        return Err(ApiError::bad_request("the object provided is unrecognized (must be of type Scale)"));
    }
    check_type_meta(scale, "autoscaling/v1", "Scale")?;
    match meta::name(scale) {
        Some(n) if n != name => Err(ApiError::bad_request(format!(
            "the name of the object ({n}) does not match the name on the URL ({name})"
        ))),
        _ => Ok(()),
    }
}
