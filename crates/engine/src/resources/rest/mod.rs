//! The verbs, implemented once for every kind: create, get, list, update (main and
//! status), patch, delete, deletecollection and watch, over the store and a [`Strategy`].
//!
//! Pure of HTTP: requests come in as values and answers go out as JSON objects or
//! [`ApiError`]s; the api layer does the wire. This module owns [`Rest`] and what every
//! verb shares (decoding, validation and the store's errors in kube's words); the verbs
//! live in [`read`] (get, list, watch), [`write`] (create, update, patch) and [`delete`]
//! (delete, deletecollection), and their option types in [`options`] (re-exported here).

mod delete;
pub mod options;
mod read;
mod typed_patch;
mod write;

pub use delete::deletion_finalizers;
pub use options::{
    DeleteOptions, FOREGROUND_FINALIZER, FieldValidation, ListQuery, ORPHAN_FINALIZER, Propagation, WatchItem,
    WriteOptions,
};
pub use write::Held;

use super::Strategy;
use super::generate_name::NameGenerator;
use super::patch::PatchType;
use super::patched_json::PatchSource;
use super::scale::ScalePaths;
use crate::field::FieldError;
use crate::meta;
use crate::schema::names::validate_path_segment_name;
use crate::schema::{validate_object_meta, validate_object_meta_update};
use crate::status::ApiError;
use crate::store::{Revision, Store, StoreError};
use k8s_openapi::jiff::Timestamp;
use serde_json::Value;

/// The endpoint an update or patch goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subresource {
    Main,
    Status,
    /// `/scale`: written with the main endpoint's rules (status kept, generation bumped).
    Scale,
    /// A namespace's `/finalize`: an update of all but its status, `spec.finalizers`
    /// included (the main endpoint keeps those).
    Finalize,
}

impl Subresource {
    /// The name kube records in managedFields (`None` for the main endpoint).
    pub fn name(self) -> Option<&'static str> {
        match self {
            Subresource::Main => None,
            Subresource::Status => Some("status"),
            Subresource::Scale => Some("scale"),
            Subresource::Finalize => Some("finalize"),
        }
    }
}

/// Where the object of a write came from: kube words its strict decoding errors
/// differently for a request body and for the result of a patch.
pub(super) enum Origin<'a> {
    /// A create or update body (duplicate fields noted in [`WriteOptions::decode_errors`]),
    /// or the object a server-side apply creates (`applied`).
    Body { applied: bool },
    /// A patch: its type, how kube shows what it decoded (see [`patch_shown`]), and its
    /// strict errors.
    Patch { patch_type: PatchType, show: &'a dyn Fn(&Value) -> String, applied: Vec<String> },
}

/// kube's `transformDecodeError` for a body whose kind was read, decoded as `target`:
/// `Widget in version "v1" cannot be handled as a Widget: <why>`.
pub(crate) fn undecodable(obj: &Value, target: &str, why: &str) -> ApiError {
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default();
    let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
    let version = api_version.rsplit_once('/').map_or(api_version, |(_, v)| v);
    ApiError::bad_request(format!(
        "{kind} in version {} cannot be handled as a {target}: {why}",
        crate::field::go_quote(version)
    ))
}

/// kube's answer when a patched object does not decode: a 422 on the field `patch`, with
/// what it decoded shown as its value (`NewInvalid` of an empty kind and name).
pub(super) fn patch_invalid(shown: &str, why: &str) -> ApiError {
    ApiError::invalid("", "", "", &[FieldError::invalid("patch", shown, why)])
}

/// Strict decoding errors as `fieldValidation` asks: ignored, warned, or refused by
/// `refuse`, given kube's words (`strict decoding error: ...`).
pub(super) fn report_strict(
    strict: Vec<String>,
    opts: &WriteOptions,
    refuse: impl FnOnce(&str) -> ApiError,
) -> Result<(), ApiError> {
    if strict.is_empty() {
        return Ok(());
    }
    match opts.field_validation {
        FieldValidation::Ignore => Ok(()),
        FieldValidation::Warn => {
            strict.into_iter().for_each(|w| opts.warn(w));
            Ok(())
        }
        FieldValidation::Strict => Err(refuse(&format!("strict decoding error: {}", strict.join(", ")))),
    }
}

/// How kube shows `patched`, what a patch made of `old`, when it does not decode: a
/// strategic merge patch, which kube decodes from a map, as the patch map printed by Go's
/// `%+v`; otherwise the JSON evanphx/json-patch wrote (see [`super::patched_json`]).
pub(super) fn patch_shown(
    source: &PatchSource,
    old: &Value,
    patched: &Value,
    kind: Option<&'static super::builtin::types::GoStruct>,
) -> String {
    match source.patch_type {
        PatchType::StrategicMerge => {
            crate::schema::gofmt::plain_v(&serde_json::from_slice(source.body).unwrap_or(Value::Null))
        }
        _ => super::patched_json::patched_json(old, patched, source, kind),
    }
}

/// Everything a verb needs: where objects live and how this kind behaves.
pub struct Rest<'a> {
    pub store: &'a dyn Store,
    pub strategy: &'a dyn Strategy,
    pub now: Timestamp,
    /// The `/scale` paths when the kind serves that subresource.
    pub scale: Option<&'a ScalePaths>,
    /// Where `generateName` names come from ([`super::generate_name::RANDOM`] but in tests).
    pub names: &'a dyn NameGenerator,
    /// The admission a request's writes pass ([`super::admit::NoAdmission`] for the
    /// engine's own).
    pub admission: &'a dyn super::admit::Admission,
}

/// A body's `apiVersion` and `kind`, when given, must be the endpoint's (kube answers 400).
pub(super) fn check_type_meta(obj: &Value, api_version: &str, kind: &str) -> Result<(), ApiError> {
    match obj.get("apiVersion").and_then(Value::as_str) {
        Some(v) if v != api_version => {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({v}) does not match the expected API version ({api_version})"
            )));
        }
        _ => {}
    }
    match obj.get("kind").and_then(Value::as_str) {
        Some(k) if k != kind => {
            Err(ApiError::bad_request(format!("the kind in the data ({k}) does not match the expected kind ({kind})")))
        }
        _ => Ok(()),
    }
}

/// A resourceVersion an update names, read as kube's storage reads it (`strconv.ParseUint`).
/// kube passes the parse error on as it is: a 500 without a reason.
pub(super) fn parse_precondition(rv: &str) -> Result<Revision, ApiError> {
    meta::parse_resource_version(rv).ok_or_else(|| {
        let why = if !rv.is_empty() && rv.bytes().all(|b| b.is_ascii_digit()) {
            "value out of range"
        } else {
            "invalid syntax"
        };
        ApiError::new(500, "", format!("strconv.ParseUint: parsing {}: {why}", crate::field::go_quote(rv)))
    })
}

/// `metadata.generateName` when given (not empty).
fn generate_name(obj: &Value) -> Option<&str> {
    obj.get("metadata").and_then(|m| m.get("generateName")).and_then(Value::as_str).filter(|g| !g.is_empty())
}

impl Rest<'_> {
    fn info(&self) -> &super::ResourceInfo {
        self.strategy.info()
    }

    /// A create's 409 for the object `existing` (stored bytes): kube says when the object in
    /// the way is only waiting for its finalizers (`object is being deleted: ...`), and
    /// when the object had a `generateName`, that it could not make a unique name (even
    /// if the name was the client's: kube's `CheckGeneratedNameError` looks no further).
    fn already_exists(&self, existing: &[u8], name: &str, generated: bool) -> ApiError {
        let gr = self.info().group_resource();
        let mut err =
            if generated { ApiError::generate_name_conflict(&gr, name) } else { ApiError::already_exists(&gr, name) };
        let deleting = serde_json::from_slice::<Value>(existing)
            .is_ok_and(|obj| obj.pointer("/metadata/deletionTimestamp").is_some_and(|t| !t.is_null()));
        if deleting {
            err.message = format!("object is being deleted: {}", err.message);
        }
        err
    }

    fn store_error(&self, e: StoreError, name: &str) -> ApiError {
        let gr = self.info().group_resource();
        match e {
            StoreError::AlreadyExists { .. } => ApiError::already_exists(&gr, name),
            StoreError::NotFound { .. } => ApiError::not_found(&gr, name),
            StoreError::Conflict { .. } => ApiError::conflict(&gr, name, ApiError::STALE_OBJECT),
            StoreError::Expired { .. } => ApiError::expired(
                "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.",
            ),
            StoreError::TooLarge { requested, current } => ApiError::too_large_resource_version(requested, current),
            other => ApiError::storage(&other),
        }
    }

    /// A stored object as this kind serves it (see [`super::Codec`]).
    fn read(&self, kv: &crate::store::KeyValue) -> Result<Value, ApiError> {
        self.strategy.codec().read(kv)
    }

    /// An object of this kind as the store keeps it.
    fn stored(&self, obj: &Value) -> Result<bytes::Bytes, ApiError> {
        self.strategy.codec().write(obj)
    }

    fn invalid(&self, name: &str, errors: &[FieldError]) -> ApiError {
        ApiError::invalid(&self.info().kind, self.strategy.invalid_group(), name, errors)
    }

    /// Checks `apiVersion` and `kind` of a request body or of a patched object: a custom
    /// resource patched to another `apiVersion` is for its validation to refuse (422), as
    /// kube's patcher decodes it rather than a body.
    fn check_type_meta(&self, obj: &mut Value) -> Result<(), ApiError> {
        if !obj.is_object() {
            return Err(ApiError::bad_request(format!(
                "the object provided is unrecognized (must be of type {}): expected an object",
                self.info().kind
            )));
        }
        let want_version = self.info().api_version();
        if self.strategy.unstructured() {
            // A custom resource names its version; another kind is refused by validation
            // (see `check_kind`), so it stays as given. A body's version is checked once
            // it is decoded ([`Rest::check_decoded_version`]).
            if obj.get("kind").and_then(Value::as_str).is_none_or(str::is_empty) {
                let map = obj.as_object_mut().ok_or_else(|| ApiError::bad_request("expected an object"))?;
                map.insert("kind".into(), Value::from(self.info().kind.clone()));
            }
        } else {
            self.strategy.check_type_meta(obj)?;
            let map = obj.as_object_mut().ok_or_else(|| ApiError::bad_request("expected an object"))?;
            map.insert("apiVersion".into(), Value::from(want_version));
            map.insert("kind".into(), Value::from(self.info().kind.clone()));
        }
        Ok(())
    }

    /// A custom resource body must be of the endpoint's version, which kube's handler
    /// checks once the body decoded: a body of another version of the CRD was decoded by
    /// that version's schema, its unknown fields reported (or refused under `Strict`) by it.
    fn check_decoded_version(&self, obj: &Value) -> Result<(), ApiError> {
        let want_version = self.info().api_version();
        match obj.get("apiVersion").and_then(Value::as_str).unwrap_or("") {
            given if self.strategy.unstructured() && given != want_version => Err(ApiError::bad_request(format!(
                "the API version in the data ({given}) does not match the expected API version ({want_version})"
            ))),
            _ => Ok(()),
        }
    }

    /// Checks the namespace of a decoded body against the request's, as kube's handlers do
    /// once the body decodes, and writes it in (or out, for a cluster-scoped kind).
    fn check_namespace(&self, obj: &mut Value, namespace: Option<&str>) -> Result<(), ApiError> {
        // Metadata that is no object is the decoder's to refuse (400), not ours to replace.
        if obj.get("metadata").is_some_and(|m| !m.is_object() && !m.is_null()) {
            return Ok(());
        }
        let ns_in_body = meta::namespace(obj).map(String::from);
        match (self.info().namespaced, namespace, ns_in_body) {
            (true, Some(path_ns), Some(body_ns)) if body_ns != path_ns => Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            )),
            (true, Some(path_ns), _) => {
                meta::metadata_mut(obj).insert("namespace".into(), Value::from(path_ns));
                Ok(())
            }
            (false, _, _) => {
                meta::metadata_mut(obj).remove("namespace");
                Ok(())
            }
            (true, None, _) => Err(ApiError::bad_request("a namespace is required for this resource")),
        }
    }

    /// Decode-time checks of a request body or patched object: the kind's own, then
    /// pruning and defaulting, with the strict errors (the decoder's duplicate fields, then
    /// unknown fields) refused or reported as `fieldValidation` asks, in kube's words for
    /// where the object came from.
    fn decode(&self, obj: &mut Value, opts: &WriteOptions, origin: Origin<'_>) -> Result<(), ApiError> {
        // What kube shows of a patch refused under Strict is what it decoded, before
        // pruning and defaulting.
        let patched = (matches!(origin, Origin::Patch { .. }) && opts.field_validation == FieldValidation::Strict)
            .then(|| obj.clone());
        if let (Origin::Patch { patch_type: PatchType::StrategicMerge, show, .. }, Some(go)) =
            (&origin, self.strategy.go_struct())
        {
            // A strategic merge is converted from maps, not decoded: what the converter
            // takes keeps its field's bits (4294967298 in an int32 is 2), as an apply's does.
            if let Some(why) = super::builtin::unstructured_convert::conversion_error(obj, go) {
                return Err(patch_invalid(&show(obj), &why));
            }
            super::builtin::unstructured_convert::convert_integers(obj, go);
        }
        // A server-side apply's merge is converted, not decoded: it keeps its `null`s.
        let applied =
            matches!(origin, Origin::Body { applied: true } | Origin::Patch { patch_type: PatchType::Apply, .. });
        let decoded = match applied {
            true => self.strategy.decode_and_default_applied(obj),
            false => self.strategy.decode_and_default(obj),
        };
        let unknown = match decoded {
            Ok(unknown) => unknown,
            Err(why) => {
                return Err(match &origin {
                    Origin::Body { .. } => {
                        let first = opts.take_document_error().map(crate::resources::Undecodable);
                        self.strategy.undecodable_body(first.as_ref().unwrap_or(&why))
                    }
                    // Nothing has changed `obj` yet: it is the patched object.
                    Origin::Patch { show, .. } => patch_invalid(&show(obj), &why.0),
                });
            }
        };
        let mut strict = match &origin {
            Origin::Body { .. } => opts.take_decode_errors(),
            Origin::Patch { applied, .. } => applied.clone(),
        };
        // An applied configuration was typed by structured-merge-diff, which refuses an
        // undeclared field itself: what pruning drops after it sat under a deduced node
        // (an int-or-string given an object, for validation to refuse) and goes unreported.
        if !applied {
            strict.extend(unknown.iter().map(|f| format!("unknown field {f:?}")));
        }
        report_strict(strict, opts, |why| match origin {
            Origin::Patch { show, .. } => patch_invalid(&show(patched.as_ref().unwrap_or(obj)), why),
            Origin::Body { .. } => self.undecodable(obj, why),
        })
    }

    /// [`undecodable`] as this kind.
    fn undecodable(&self, obj: &Value, why: &str) -> ApiError {
        undecodable(obj, &self.info().kind, why)
    }

    /// kube's `validateCommonFields` of an update, for every kind: the new metadata as any
    /// metadata (names as path segments), then as an update of the old.
    fn common_update_errors(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let empty = Value::Object(serde_json::Map::new());
        let (new, old) = (new.get("metadata").unwrap_or(&empty), old.get("metadata").unwrap_or(&empty));
        let path = crate::field::Path::root("metadata");
        let mut errors = validate_object_meta(new, self.info().namespaced, validate_path_segment_name, &path);
        let mut update = validate_object_meta_update(new, old, &path);
        if self.strategy.go_struct().is_none() {
            // A custom resource's owner references are copied for each check (see
            // `at_check_addresses`); its strategy's check is the third.
            crate::schema::object_meta::at_check_addresses(&mut update, 1);
        }
        errors.extend(update);
        errors
    }
}
