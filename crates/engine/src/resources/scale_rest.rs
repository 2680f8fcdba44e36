//! The `/scale` verbs: get, update and patch of an `autoscaling/v1` Scale over a custom
//! resource. The Scale is a view: every write becomes an update of the custom resource
//! through the main endpoint's rules, so generation, validation and the shared
//! resourceVersion all behave as for an ordinary update.

use super::builtin::types::SCALE;
use super::managed_fields::verbs::{Tracking, check_repeated_keys, decode_yaml, validate_patch_options};
use super::patch::{self, PatchType};
use super::patched_json::{PatchSource, patched_json};
use super::rest::{
    FieldValidation, Rest, Subresource, WriteOptions, check_type_meta, parse_precondition, patch_invalid,
};
use super::scale::{self, ScalePaths};
use crate::meta;
use crate::status::ApiError;
use serde_json::Value;

impl Rest<'_> {
    fn scale_paths(&self) -> Result<&ScalePaths, ApiError> {
        self.scale.ok_or_else(|| ApiError::not_found(&self.strategy.info().group_resource(), "scale"))
    }

    /// GET `/scale`, read as a GET of the object at `rv` (kube's scale storage passes its
    /// GetOptions on). kube's scale GET refuses an object without the replicas its spec path names (a 500;
    /// writes through `/scale` create them).
    pub async fn get_scale(&self, namespace: Option<&str>, name: &str, rv: Option<&str>) -> Result<Value, ApiError> {
        let paths = self.scale_paths()?;
        let obj = self.get_at(namespace, name, rv).await?;
        if !scale::has_spec_replicas(&obj, paths) {
            return Err(ApiError::internal(format!(
                "the spec replicas field {:?} does not exist",
                paths.spec_replicas
            )));
        }
        Ok(scale::scale_of(&obj, paths))
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
        check_scale_type(&requested)?;
        check_scale_body(&requested, name, namespace)?;
        Self::guaranteed(|| async {
            let old = self.get(namespace, name).await?;
            self.check_uid_precondition(namespace, name, meta::uid(&requested), &old, opts.dry_run)?;
            self.write_scale(namespace, name, &requested, &old, paths, opts).await
        })
        .await
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
        Self::guaranteed(|| async {
            let paths = self.scale_paths()?;
            let old = self.get(namespace, name).await?;
            let current = self.scale_with_entries(&old, paths);
            let strict = opts.field_validation != FieldValidation::Ignore;
            let (patched, strict_errors) = match patch_type {
                PatchType::Merge => patch::merge(&current, body, strict),
                PatchType::Json => patch::json(&current, body, strict),
                // The api layer answers these with 415 before calling here.
                PatchType::StrategicMerge | PatchType::Apply => {
                    return Err(ApiError::new(
                        415,
                        "UnsupportedMediaType",
                        "only JSON and merge patches apply to /scale",
                    ));
                }
            }
            .map_err(ApiError::from)?;
            if let Some(why) = SCALE.type_error(&patched) {
                let source = PatchSource { patch_type, body };
                return Err(patch_invalid(&patched_json(&current, &patched, &source, Some(&SCALE)), &why));
            }
            if opts.field_validation == FieldValidation::Warn {
                strict_errors.into_iter().for_each(|w| opts.warn(w));
            }
            check_scale_body(&patched, name, namespace)?;
            self.write_scale(namespace, name, &patched, &old, paths, opts).await
        })
        .await
    }

    /// An apply patch to `/scale`: kube's scale handler needs the object (404 without it)
    /// and applies an `autoscaling/v1` Scale ([`Rest::apply_scale_patch`]).
    pub async fn apply_scale(
        &self,
        namespace: Option<&str>,
        name: &str,
        body: &[u8],
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        validate_patch_options(true, opts)?;
        Self::guaranteed(|| async {
            let paths = self.scale_paths()?;
            let live = self.get(namespace, name).await?;
            let (config, duplicates) = decode_yaml(body)?;
            let obj = self.apply_scale_patch(&live, &config, paths, opts)?;
            check_repeated_keys(&duplicates, opts)?;
            let expected = meta::resource_version(&live).and_then(meta::parse_resource_version);
            let written = self
                .write_tracked(namespace, name, obj, &live, expected, Subresource::Scale, opts, Tracking::Applied)
                .await?;
            Ok(scale::scale_of(&written, paths))
        })
        .await
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
        let expected = scale::precondition(requested).map(parse_precondition).transpose()?;
        let mut obj = old.clone();
        // Pruned and defaulted after validation ([`Rest::write_tracked`]).
        scale::set_spec_replicas(&mut obj, paths, scale::requested_replicas(requested));
        let written = self.write_update(namespace, name, obj, old, expected, Subresource::Scale, opts).await?;
        Ok(scale::scale_of(&written, paths))
    }
}

/// The type a PUT `/scale` body names, when it names one, must be `autoscaling/v1` `Scale`,
/// and it must decode into one: the custom resource handler's Scale codec knows no other
/// type, and answers a body it cannot decode (replicas of `1.5`, `"5"` or past int32) in
/// the same words, before it looks for the object.
fn check_scale_type(scale: &Value) -> Result<(), ApiError> {
    let given = |field: &str| scale.get(field).and_then(Value::as_str).filter(|s| !s.is_empty());
    let api_version_ok = given("apiVersion").is_none_or(|v| v == "autoscaling/v1");
    let decodes = !scale.is_object() || SCALE.type_error(scale).is_none();
    if api_version_ok && given("kind").is_none_or(|k| k == "Scale") && decodes {
        return Ok(());
    }
    Err(ApiError::bad_request(
        "no kind is registered for the type v1.Scale in scheme \"pkg/apiserver/customresource_handler.go:725\"",
    ))
}

/// A Scale body must be `autoscaling/v1` `Scale` (when it says), in the URL's namespace
/// (kube's handler checks a namespace the Scale names before it reads the object, as for
/// any body) and name the URL's object.
fn check_scale_body(scale: &Value, name: &str, namespace: Option<&str>) -> Result<(), ApiError> {
    if !scale.is_object() {
        return Err(ApiError::bad_request("the object provided is unrecognized (must be of type Scale)"));
    }
    check_type_meta(scale, "autoscaling/v1", "Scale")?;
    if let (Some(ns), Some(given)) = (namespace, meta::namespace(scale))
        && !given.is_empty()
        && given != ns
    {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    match meta::name(scale) {
        Some(n) if n != name => Err(ApiError::bad_request(format!(
            "the name of the object ({n}) does not match the name on the URL ({name})"
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_scale_put_of_another_type_is_refused_in_the_crd_handlers_words() {
        // The oracle's answers to each body.
        let refused = |body: Value| check_scale_type(&body).err().map(|e| (e.code, e.message));
        let words = Some((
            400,
            "no kind is registered for the type v1.Scale in scheme \"pkg/apiserver/customresource_handler.go:725\""
                .to_string(),
        ));
        assert_eq!(refused(json!({"apiVersion": "g.example.com/v1", "kind": "Widget"})), words);
        assert_eq!(refused(json!({"apiVersion": "autoscaling/v2", "kind": "Scale"})), words);
        assert_eq!(refused(json!({"apiVersion": "autoscaling/v1", "kind": "Pod"})), words);
        assert_eq!(refused(json!({"kind": "Scale"})), None);
        assert_eq!(refused(json!({"apiVersion": "autoscaling/v1"})), None);
        assert_eq!(refused(json!({"metadata": {"name": "s1"}})), None);
        for replicas in [json!(1.5), json!(3.0), json!("5"), json!(3_000_000_000u64), json!(true), json!({})] {
            assert_eq!(refused(json!({"kind": "Scale", "spec": {"replicas": replicas}})), words);
        }
        assert_eq!(refused(json!({"kind": "Scale", "spec": {"replicas": -2}})), None);
        assert_eq!(refused(json!({"kind": "Scale", "spec": {"replicas": null}})), None);
    }

    #[test]
    fn a_scale_in_another_namespace_is_refused_before_its_name_is_read() {
        let refused = |body: Value| check_scale_body(&body, "s1", Some("ns")).err().map(|e| (e.code, e.message));
        let words =
            Some((400, "the namespace of the provided object does not match the namespace sent on the request".into()));
        assert_eq!(refused(json!({"metadata": {"name": "other", "namespace": "x"}})), words);
        assert_eq!(refused(json!({"metadata": {"name": "s1", "namespace": ""}})), None);
        assert_eq!(refused(json!({"metadata": {"name": "s1", "namespace": "ns"}})), None);
    }
}
