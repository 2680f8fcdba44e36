//! The verbs, implemented once for every kind: create, get, list, update (main and
//! status), patch, delete, deletecollection and watch, over the store and a [`Strategy`].
//!
//! Pure of HTTP: requests come in as values and answers go out as JSON objects or
//! [`ApiError`]s; the api layer does the wire.

use super::generate_name::NameGenerator;
use super::managed_fields::verbs::{ApplyStep, check_name, validate_patch_options};
use super::managed_fields::{PatchOutcome, Tracking};
use super::patch::{self, PatchType};
use super::patched_json::PatchSource;
use super::scale::{self, ScalePaths};
use super::{Strategy, spec_changed};
use crate::engine::field::FieldError;
use crate::engine::meta;
use crate::engine::schema::names::validate_path_segment_name;
use crate::engine::schema::{validate_object_meta, validate_object_meta_update};
use crate::engine::status::{ApiError, GroupResource};
use crate::engine::store::{Revision, Store, StoreError};
use futures::stream::BoxStream;
use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

/// The endpoint an update or patch goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subresource {
    Main,
    Status,
    /// `/scale`: written with the main endpoint's rules (status kept, generation bumped).
    Scale,
}

impl Subresource {
    /// The name kube records in managedFields (`None` for the main endpoint).
    pub fn name(self) -> Option<&'static str> {
        match self {
            Subresource::Main => None,
            Subresource::Status => Some("status"),
            Subresource::Scale => Some("scale"),
        }
    }
}

/// `fieldValidation`: what happens to fields the schema does not know (kube's default is Warn).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum FieldValidation {
    Ignore,
    #[default]
    Warn,
    Strict,
}

/// The query parameters every mutating verb shares, and the warnings it gives back
/// (sent as `Warning` headers).
#[derive(Debug, Default)]
pub struct WriteOptions {
    /// `dryRun=All`: validate and answer as if written, store nothing.
    pub dry_run: bool,
    /// `fieldManager`, or the one kube derives from the User-Agent.
    pub field_manager: Option<String>,
    pub field_validation: FieldValidation,
    /// `force=true` on an apply patch: take over conflicting fields.
    pub force: bool,
    pub warnings: std::sync::Mutex<Vec<String>>,
    /// Strict errors the body's decoder found before the object was made (duplicate
    /// fields): kube reports them first, with the unknown fields, as one strict error.
    pub decode_errors: std::sync::Mutex<Vec<String>>,
}

impl WriteOptions {
    /// Options for a write the engine makes itself (controllers).
    /// Options for a write the engine makes itself (its controllers), recorded in
    /// managedFields under kube-apiserver's name.
    pub fn internal() -> Self {
        WriteOptions { field_manager: Some("kube-apiserver".into()), ..Default::default() }
    }

    pub fn dry_run() -> Self {
        WriteOptions { dry_run: true, ..Default::default() }
    }

    /// Adds a warning once: kube's recorder drops a text it already holds (a create
    /// retried for its generated name warns once).
    pub fn warn(&self, message: String) {
        let mut warnings = self.warnings.lock().unwrap_or_else(|e| e.into_inner());
        if !warnings.contains(&message) {
            warnings.push(message);
        }
    }

    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut *self.warnings.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Keeps the strict errors of the body's decoding for the write to report.
    pub fn note_decode_errors(&self, errors: Vec<String>) {
        self.decode_errors.lock().unwrap_or_else(|e| e.into_inner()).extend(errors);
    }

    fn take_decode_errors(&self) -> Vec<String> {
        std::mem::take(&mut *self.decode_errors.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// Where the object of a write came from: kube words its strict decoding errors
/// differently for a request body and for the result of a patch.
pub(super) enum Origin<'a> {
    /// A create or update body (duplicate fields noted in [`WriteOptions::decode_errors`]).
    Body,
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
        crate::engine::field::go_quote(version)
    ))
}

/// kube's answer when a patched object does not decode: a 422 on the field `patch`, with
/// what it decoded shown as its value (`NewInvalid` of an empty kind and name).
pub(super) fn patch_invalid(shown: &str, why: &str) -> ApiError {
    ApiError::invalid("", "", "", &[FieldError::invalid("patch", shown, why)])
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
            crate::engine::schema::gofmt::plain_v(&serde_json::from_slice(source.body).unwrap_or(Value::Null))
        }
        _ => super::patched_json::patched_json(old, patched, source, kind),
    }
}

/// The finalizer the garbage collector clears after orphaning an owner's dependents.
pub const ORPHAN_FINALIZER: &str = "orphan";
/// The finalizer the garbage collector clears once an owner's dependents are gone.
pub const FOREGROUND_FINALIZER: &str = "foregroundDeletion";

/// `propagationPolicy`: what happens to the dependents of a deleted owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Propagation {
    Orphan,
    Background,
    Foreground,
}

/// The parts of `metav1.DeleteOptions` the engine honours.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeleteOptions {
    pub precondition_uid: Option<String>,
    /// Compared as text, as kube compares it (a resourceVersion that is no number fails).
    pub precondition_rv: Option<String>,
    /// `None`: the kind's default (background for every kind the engine serves).
    pub propagation: Option<Propagation>,
    /// `dryRun: ["All"]` in the body (clients put it there rather than in the query).
    pub dry_run: bool,
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
}

/// How many objects a DELETE of a collection without `limit` lists at a time (kube's
/// `deleteCollectionPageSize`).
pub const DELETE_COLLECTION_PAGE: usize = 10_000;

/// The query of a list or watch.
#[derive(Debug, Clone, Default)]
pub struct ListQuery {
    pub labels: Option<String>,
    pub fields: Option<String>,
    pub limit: Option<usize>,
    pub continue_token: Option<String>,
    pub resource_version: Option<String>,
    pub resource_version_match: Option<String>,
    /// `sendInitialEvents` of a watch (`None`: not given).
    pub send_initial_events: Option<bool>,
    /// `allowWatchBookmarks` of a watch.
    pub allow_watch_bookmarks: bool,
}

/// One watch event, or the error that ends the watch.
#[derive(Debug, Clone)]
pub enum WatchItem {
    Event {
        event_type: &'static str,
        object: Value,
    },
    /// An event whose object is sent as the store holds it (no selector or conversion had
    /// to read it), with `resource_version` spliced into its metadata (and `api_version`
    /// over its own, when given): the common watch
    /// is served without parsing and re-serializing each object once per watcher.
    Stored {
        event_type: &'static str,
        json: bytes::Bytes,
        resource_version: Revision,
        /// The `apiVersion` to write into it when the store may hold it at another.
        api_version: Option<std::sync::Arc<str>>,
    },
    /// Every event up to `resource_version` has been sent; `initial_events_end` marks the
    /// end of a `sendInitialEvents` watch's initial state.
    Bookmark {
        resource_version: Revision,
        initial_events_end: bool,
    },
    Error(ApiError),
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
        ApiError::new(500, "", format!("strconv.ParseUint: parsing {}: {why}", crate::engine::field::go_quote(rv)))
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
            StoreError::TooLarge { requested, current } => {
                let mut err = ApiError::new(
                    504,
                    "Timeout",
                    format!("Too large resource version: {requested}, current: {current}"),
                );
                err.details = Some(Box::new(crate::engine::status::StatusDetails {
                    retry_after_seconds: Some(1),
                    ..Default::default()
                }));
                err
            }
            // etcd's refusal, passed on as kube passes it: a 500 without a reason.
            StoreError::RequestTooLarge => ApiError::new(500, "", StoreError::RequestTooLarge.to_string()),
            other => ApiError::internal(other.to_string()),
        }
    }

    /// A stored object as this kind serves it (see [`super::Codec`]).
    fn read(&self, kv: &crate::engine::store::KeyValue) -> Value {
        self.strategy.codec().read(kv)
    }

    /// An object of this kind as the store keeps it.
    fn stored(&self, obj: &Value) -> bytes::Bytes {
        self.strategy.codec().write(obj)
    }

    fn invalid(&self, name: &str, errors: &[FieldError]) -> ApiError {
        ApiError::invalid(&self.info().kind, self.strategy.invalid_group(), name, errors)
    }

    /// Checks `apiVersion`, `kind` and the namespace of a request body.
    fn check_body(&self, obj: &mut Value, namespace: Option<&str>) -> Result<(), ApiError> {
        if !obj.is_object() {
            return Err(ApiError::bad_request(format!(
                "the object provided is unrecognized (must be of type {}): expected an object",
                self.info().kind
            )));
        }
        let want_version = self.info().api_version();
        if self.strategy.unstructured() {
            // A custom resource names its version; another kind is refused by validation
            // (see `check_kind`), so it stays as given.
            let given = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
            if given != want_version {
                return Err(ApiError::bad_request(format!(
                    "the API version in the data ({given}) does not match the expected API version ({want_version})"
                )));
            }
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
        if self.strategy.unstructured() {
            // The unstructured decoder reads `2.0` as a float Go writes back as `2`.
            super::go_decode::integral_floats(obj);
        }
        if let (Origin::Patch { patch_type: PatchType::StrategicMerge, show, .. }, Some(go)) =
            (&origin, self.strategy.go_struct())
            && let Some(why) = super::builtin::unstructured_convert::conversion_error(obj, go)
        {
            // A strategic merge is converted from maps, not decoded.
            return Err(patch_invalid(&show(obj), &why));
        }
        if let Err(why) = self.strategy.decode(obj) {
            return Err(match &origin {
                Origin::Body => self.strategy.undecodable_body(&why),
                // Nothing has changed `obj` yet: it is the patched object.
                Origin::Patch { show, .. } => patch_invalid(&show(obj), &why.0),
            });
        }
        let mut strict = match &origin {
            Origin::Body => opts.take_decode_errors(),
            Origin::Patch { applied, .. } => applied.clone(),
        };
        let unknown = self.strategy.prune_and_default(obj);
        strict.extend(unknown.iter().map(|f| format!("unknown field {f:?}")));
        if strict.is_empty() {
            return Ok(());
        }
        match opts.field_validation {
            FieldValidation::Ignore => Ok(()),
            FieldValidation::Warn => {
                strict.into_iter().for_each(|w| opts.warn(w));
                Ok(())
            }
            FieldValidation::Strict => {
                let why = format!("strict decoding error: {}", strict.join(", "));
                Err(match origin {
                    Origin::Patch { show, .. } => patch_invalid(&show(patched.as_ref().unwrap_or(obj)), &why),
                    Origin::Body => self.undecodable(obj, &why),
                })
            }
        }
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
        let path = crate::engine::field::Path::root("metadata");
        let mut errors = validate_object_meta(new, self.info().namespaced, validate_path_segment_name, &path);
        errors.extend(validate_object_meta_update(new, old, &path));
        errors
    }

    /// The `/scale` paths' checks every write makes (kube's ValidateScaleSpec/Status);
    /// a status write checks only the status side.
    fn scale_errors(&self, obj: &Value, sub: Subresource) -> Vec<FieldError> {
        let Some(paths) = self.scale else { return Vec::new() };
        let mut errors = Vec::new();
        if sub != Subresource::Status {
            errors.extend(scale::validate_spec(obj, paths));
        }
        errors.extend(scale::validate_status(obj, paths));
        errors
    }

    /// POST: creates an object. `dry_run` answers as if it had, storing nothing.
    pub async fn create(&self, namespace: Option<&str>, obj: Value, opts: &WriteOptions) -> Result<Value, ApiError> {
        self.create_tracked(namespace, obj, opts, Tracking::Update).await
    }

    /// A create whose managedFields are recorded as an update, or were set by an apply.
    /// One whose name the server generates is tried again with a new name while that name
    /// exists, as kube's registry retries (see [`generate_name`](super::generate_name)).
    pub(super) async fn create_tracked(
        &self,
        namespace: Option<&str>,
        obj: Value,
        opts: &WriteOptions,
        tracking: Tracking,
    ) -> Result<Value, ApiError> {
        if meta::name(&obj).is_some() || generate_name(&obj).is_none() {
            return self.create_once(namespace, obj, opts, tracking).await;
        }
        let mut attempts = 1;
        loop {
            match self.create_once(namespace, obj.clone(), opts, tracking).await {
                Err(e) if e.reason == "AlreadyExists" && attempts < super::generate_name::MAX_ATTEMPTS => attempts += 1,
                answer => return answer,
            }
        }
    }

    /// One attempt of [`Rest::create_tracked`].
    async fn create_once(
        &self,
        namespace: Option<&str>,
        mut obj: Value,
        opts: &WriteOptions,
        tracking: Tracking,
    ) -> Result<Value, ApiError> {
        let dry_run = opts.dry_run;
        self.check_body(&mut obj, namespace)?;
        let given_rv = meta::resource_version(&obj).and_then(meta::parse_resource_version);
        if let Some(answer) = self.strategy.evaluate(&obj) {
            return answer;
        }
        let generated = generate_name(&obj).is_some();
        if meta::name(&obj).is_none() {
            match generate_name(&obj).map(|prefix| self.names.generate(prefix)) {
                Some(name) => {
                    meta::metadata_mut(&mut obj).insert("name".into(), Value::from(name));
                }
                None => {
                    return Err(
                        self.invalid("", &[FieldError::required("metadata.name", "name or generateName is required")])
                    );
                }
            }
        }
        let name = meta::name(&obj).unwrap_or_default().to_string();
        self.decode(&mut obj, opts, Origin::Body)?;
        if tracking == Tracking::Update {
            meta::wipe_system_fields(&mut obj);
        }
        self.track_create(&mut obj, opts, tracking).await;
        meta::prepare_create(&mut obj, self.now);
        if !self.strategy.uses_generation() {
            meta::metadata_mut(&mut obj).remove("generation");
        }
        self.strategy.prepare_for_create(&mut obj);
        self.check_kind(&obj, &name)?;
        let mut errors = self.strategy.validate_create(&obj);
        errors.extend(self.scale_errors(&obj, Subresource::Main));
        if !errors.is_empty() {
            return Err(self.invalid(&name, &errors));
        }
        // kube's storage refuses it last, and its dry run never gets there: a plain Go error,
        // so a 500 without a reason.
        if !dry_run && given_rv.is_some_and(|rv| rv != 0) {
            return Err(ApiError::new(500, "", "resourceVersion should not be set on objects to be created"));
        }
        let key = self.info().key(namespace, &name);
        if dry_run {
            if let Some(existing) = self.store.get(&key).await.map_err(|e| self.store_error(e, &name))? {
                return Err(self.already_exists(&existing.value, &name, generated));
            }
            return Ok(self.strategy.codec().round_trip(obj));
        }
        let kv = match self.shrinking(&mut obj, tracking, |value| self.store.create(&key, value)).await {
            Ok(kv) => kv,
            Err(StoreError::AlreadyExists { .. }) => {
                let existing = self.store.get(&key).await.map_err(|e| self.store_error(e, &name))?;
                let existing = existing.map(|kv| kv.value).unwrap_or_default();
                return Err(self.already_exists(&existing, &name, generated));
            }
            Err(e) => return Err(self.store_error(e, &name)),
        };
        Ok(self.strategy.codec().written(obj, &kv))
    }

    /// GET one object.
    pub async fn get(&self, namespace: Option<&str>, name: &str) -> Result<Value, ApiError> {
        self.store
            .get(&self.info().key(namespace, name))
            .await
            .map_err(|e| self.store_error(e, name))?
            .map(|kv| self.read(&kv))
            .ok_or_else(|| ApiError::not_found(&self.info().group_resource(), name))
    }

    /// GET a list: selectors, `limit` and `continue` over one consistent snapshot (see
    /// [`Rest::list_raw`] for the stored bytes without decoding).
    pub async fn list(&self, namespace: Option<&str>, q: &ListQuery) -> Result<Value, ApiError> {
        let info = self.info();
        Ok(self.list_raw(namespace, q).await?.to_value(&info.api_version(), &info.list_kind))
    }

    /// PUT on the main endpoint or `/status`.
    pub async fn update(
        &self,
        namespace: Option<&str>,
        name: &str,
        mut obj: Value,
        sub: Subresource,
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        self.check_body(&mut obj, namespace)?;
        match meta::name(&obj) {
            Some(n) if n != name => {
                return Err(ApiError::bad_request(format!(
                    "the name of the object ({n}) does not match the name on the URL ({name})"
                )));
            }
            Some(_) => {}
            None => {
                return Err(ApiError::bad_request(format!(
                    "the name of the object ({name} based on URL) was undeterminable: name must be provided"
                )));
            }
        }
        self.decode(&mut obj, opts, Origin::Body)?;
        let old = self.get(namespace, name).await?;
        self.check_uid_precondition(namespace, name, meta::uid(&obj), &old)?;
        let expected = meta::resource_version(&obj).map(parse_precondition).transpose()?;
        self.write_update(namespace, name, obj, &old, expected, sub, opts).await
    }

    /// The shared tail of update and patch: normalize, validate, guard, write.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn write_update(
        &self,
        namespace: Option<&str>,
        name: &str,
        obj: Value,
        old: &Value,
        expected: Option<Revision>,
        sub: Subresource,
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        self.write_tracked(namespace, name, obj, old, expected, sub, opts, Tracking::Update).await
    }

    /// [`Rest::write_update`], with managedFields recorded as an update or set by an apply.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn write_tracked(
        &self,
        namespace: Option<&str>,
        name: &str,
        mut obj: Value,
        old: &Value,
        expected: Option<Revision>,
        sub: Subresource,
        opts: &WriteOptions,
        tracking: Tracking,
    ) -> Result<Value, ApiError> {
        let dry_run = opts.dry_run;
        let old_rv = meta::resource_version(old).and_then(meta::parse_resource_version);
        // A resourceVersion of 0 is none; a Scale without one updates whatever is stored.
        let expected = expected.filter(|rv| *rv != 0);
        if expected.is_none() && sub != Subresource::Scale && !self.strategy.allows_unconditional_update() {
            return Err(self.resource_version_required(name));
        }
        if let (Some(exp), Some(cur)) = (expected, old_rv)
            && exp != cur
        {
            return Err(ApiError::conflict(&self.info().group_resource(), name, ApiError::STALE_OBJECT));
        }
        let managed_fields = self.track_update(old, &obj, sub, opts, tracking).await;
        match sub {
            Subresource::Main | Subresource::Scale => self.strategy.prepare_for_update(&mut obj, old),
            Subresource::Status => self.strategy.prepare_for_status_update(&mut obj, old),
        }
        meta::preserve_on_update(&mut obj, old);
        managed_fields.restore(&mut obj);
        if self.strategy.uses_generation()
            && sub != Subresource::Status
            && spec_changed(&obj, old, self.info().status_subresource)
        {
            let next = meta::generation(old) + 1;
            meta::metadata_mut(&mut obj).insert("generation".into(), Value::from(next));
        }
        self.check_kind(&obj, name)?;
        // kube's registry checks the metadata of every update itself before the strategy
        // does (so a changed uid is reported twice, an invalid label three times).
        let mut errors = self.common_update_errors(&obj, old);
        errors.extend(match sub {
            Subresource::Main | Subresource::Scale => self.strategy.validate_update(&obj, old),
            Subresource::Status => self.strategy.validate_status_update(&obj, old),
        });
        errors.extend(self.scale_errors(&obj, sub));
        if !errors.is_empty() {
            return Err(self.invalid(name, &errors));
        }
        // `obj` has no resourceVersion (see `preserve_on_update`).
        if meta::equal_except_metadata(&obj, old, &["resourceVersion"]) {
            return Ok(old.clone());
        }
        if dry_run {
            let mut out = self.strategy.codec().round_trip(obj);
            if let Some(rv) = meta::resource_version(old).map(String::from) {
                meta::metadata_mut(&mut out).insert("resourceVersion".into(), Value::from(rv));
            }
            return Ok(out);
        }
        let key = self.info().key(namespace, name);
        // The last finalizer gone from an object being deleted: it goes now.
        if meta::deletion_timestamp(&obj).is_some()
            && meta::finalizers(&obj).is_empty()
            && !self.strategy.finalizing(&obj)
        {
            self.store.delete(&key, old_rv).await.map_err(|e| self.store_error(e, name))?;
            // Reported at its last stored revision, not the deletion's: the oracle answers
            // so (its storage decodes the deleted object as it was).
            if let Some(rv) = meta::resource_version(old).map(String::from) {
                meta::metadata_mut(&mut obj).insert("resourceVersion".into(), Value::from(rv));
            }
            return Ok(obj);
        }
        let kv = self
            .shrinking(&mut obj, tracking, |value| self.store.update(&key, value, old_rv))
            .await
            .map_err(|e| self.store_error(e, name))?;
        Ok(self.strategy.codec().written(obj, &kv))
    }

    /// Stores `obj` with `write`; an object too large for storage is written once more
    /// without its managedFields (which can be large, and are the server's bookkeeping), as
    /// kube's create, update and patch handlers retry, except for an apply.
    async fn shrinking<F, Fut>(
        &self,
        obj: &mut Value,
        tracking: Tracking,
        write: F,
    ) -> Result<crate::engine::store::KeyValue, StoreError>
    where
        F: Fn(bytes::Bytes) -> Fut,
        Fut: std::future::Future<Output = Result<crate::engine::store::KeyValue, StoreError>>,
    {
        match write(self.stored(obj)).await {
            Err(StoreError::RequestTooLarge) if tracking == Tracking::Update => {
                if meta::metadata_mut(obj).remove("managedFields").is_none() {
                    return Err(StoreError::RequestTooLarge);
                }
                write(self.stored(obj)).await
            }
            other => other,
        }
    }

    /// PATCH on the main endpoint or `/status`.
    pub async fn patch(
        &self,
        namespace: Option<&str>,
        name: &str,
        patch_type: PatchType,
        body: &[u8],
        sub: Subresource,
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        Ok(self.patch_outcome(namespace, name, patch_type, body, sub, opts).await?.object)
    }

    /// PATCH, telling whether it created the object: an apply patch creates what does not
    /// exist yet, and kube answers that with 201.
    pub async fn patch_outcome(
        &self,
        namespace: Option<&str>,
        name: &str,
        patch_type: PatchType,
        body: &[u8],
        sub: Subresource,
        opts: &WriteOptions,
    ) -> Result<PatchOutcome, ApiError> {
        validate_patch_options(patch_type == PatchType::Apply, opts)?;
        let source = PatchSource { patch_type, body };
        // kube decodes a merge patch strictly (for its duplicate fields) unless told to ignore.
        let strict_decoding = opts.field_validation != FieldValidation::Ignore;
        let (old, patched, tracking) = match patch_type {
            PatchType::Apply => match self.apply_patch(namespace, name, body, sub, opts).await? {
                ApplyStep::Create(obj) => {
                    let object = self.create_tracked(namespace, obj, opts, Tracking::Applied).await?;
                    return Ok(PatchOutcome { object, created: true });
                }
                ApplyStep::Update { live, obj } => (live, Ok((obj, Vec::new())), Tracking::Applied),
            },
            PatchType::StrategicMerge if !self.strategy.supports_strategic_merge() => {
                return Err(ApiError::unsupported_patch());
            }
            other => {
                let old = self.get(namespace, name).await?;
                let patched = match other {
                    PatchType::Merge => patch::merge(&old, body, strict_decoding),
                    PatchType::Json => patch::json(&old, body, strict_decoding),
                    _ => patch::strategic(&old, body, strict_decoding),
                };
                (old, patched, Tracking::Update)
            }
        };
        let (mut patched, applied) = patched.map_err(ApiError::from)?;
        if self.strategy.unstructured() && tracking == Tracking::Update {
            // The patched JSON is decoded as a body is: without a kind it is no object.
            if let Some(why) = super::go_decode::unstructured_decode_error(&patched) {
                return Err(patch_invalid(&crate::engine::representation::gofmt::go_json(&patched), &why));
            }
        }
        let show = |patched: &Value| patch_shown(&source, &old, patched, self.strategy.go_struct());
        let origin = Origin::Patch { patch_type, show: &show, applied };
        self.decode(&mut patched, opts, origin)?;
        check_name(&patched, name, namespace)?;
        if self.strategy.unstructured() && patched.get("apiVersion").and_then(Value::as_str).is_none_or(str::is_empty) {
            // kube's `BeforeUpdate` cannot type an unstructured object without a version.
            return Err(ApiError::internal("Object 'apiVersion' is missing in 'object has no apiVersion field'"));
        }
        self.check_body(&mut patched, namespace)?;
        let expected = meta::resource_version(&patched).and_then(meta::parse_resource_version);
        let object = self.write_tracked(namespace, name, patched, &old, expected, sub, opts, tracking).await?;
        Ok(PatchOutcome { object, created: false })
    }

    /// DELETE one object. Finalizers (the object's own, plus `orphan` or
    /// `foregroundDeletion` for those propagation policies, and a kind's own deferral such
    /// as a namespace's) make it only marked with a deletionTimestamp; the engine's
    /// controllers finish the job. Answers with the object's last state, as kube does.
    pub async fn delete(
        &self,
        namespace: Option<&str>,
        name: &str,
        delete: &DeleteOptions,
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        let dry_run = opts.dry_run || delete.dry_run;
        let current = self.get(namespace, name).await?;
        let rv = meta::resource_version(&current).and_then(meta::parse_resource_version);
        self.check_delete_preconditions(name, &current, delete)?;
        let key = self.info().key(namespace, name);
        let mut finalizers = meta::finalizers(&current);
        let policy_finalizer = match delete.propagation {
            Some(Propagation::Orphan) => Some(ORPHAN_FINALIZER),
            Some(Propagation::Foreground) => Some(FOREGROUND_FINALIZER),
            _ => None,
        };
        let mut changed = false;
        if let Some(f) = policy_finalizer
            && !finalizers.iter().any(|x| x == f)
        {
            finalizers.push(f.to_string());
            changed = true;
        }
        let deferred = self.strategy.defers_deletion(&current);
        if finalizers.is_empty() && !deferred {
            let mut deleted = current;
            if !dry_run {
                let gone = self.store.delete(&key, rv).await.map_err(|e| self.store_error(e, name))?;
                // kube decodes the deleted object at the deletion's revision.
                meta::metadata_mut(&mut deleted)
                    .insert("resourceVersion".into(), Value::from(gone.revision.to_string()));
            }
            if self.strategy.returns_deleted_object() {
                return Ok(deleted);
            }
            return Ok(self.deleted_status(&deleted));
        }
        let already_marked = meta::deletion_timestamp(&current).is_some();
        if (already_marked && !changed) || dry_run {
            return Ok(current);
        }
        let mut marked = current.clone();
        if !finalizers.is_empty() {
            meta::metadata_mut(&mut marked).insert("finalizers".into(), Value::from(finalizers));
        }
        if !already_marked {
            self.strategy.prepare_for_deletion(&mut marked, self.now);
        }
        let kv = self.store.update(&key, self.stored(&marked), rv).await.map_err(|e| self.store_error(e, name))?;
        Ok(self.read(&kv))
    }

    /// What kube answers for an object deleted at once: a `Success` Status naming it.
    fn deleted_status(&self, obj: &Value) -> Value {
        let info = self.info();
        let mut details = serde_json::Map::new();
        details.insert("name".into(), Value::from(meta::name(obj).unwrap_or_default()));
        if !info.group.is_empty() {
            details.insert("group".into(), Value::from(info.group.clone()));
        }
        details.insert("kind".into(), Value::from(info.plural.clone()));
        if let Some(uid) = meta::uid(obj) {
            details.insert("uid".into(), Value::from(uid));
        }
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details})
    }

    /// `DeleteOptions.preconditions`: 409 when the object is not the one the client meant,
    /// worded as kube's `BeforeDelete`, which names the kind rather than the resource.
    fn check_delete_preconditions(&self, name: &str, current: &Value, delete: &DeleteOptions) -> Result<(), ApiError> {
        let info = self.info();
        let failed = |why: String| ApiError::conflict(&GroupResource::new(&info.group, &info.kind), name, &why);
        if let Some(want) = &delete.precondition_uid {
            let have = meta::uid(current).unwrap_or_default();
            if want != have {
                return Err(failed(format!(
                    "the UID in the precondition ({want}) does not match the UID in record ({have}). The object might have been deleted and then recreated"
                )));
            }
        }
        if let Some(want) = &delete.precondition_rv {
            let have = meta::resource_version(current).unwrap_or_default();
            if want != have {
                return Err(failed(format!(
                    "the ResourceVersion in the precondition ({want}) does not match the ResourceVersion in record ({have}). The object might have been modified"
                )));
            }
        }
        Ok(())
    }

    /// DELETE a collection as kube's `Store.DeleteCollection` does: list (a page of
    /// `limit` when the client gives one, else every page of [`DELETE_COLLECTION_PAGE`]),
    /// delete each listed object on its own, and answer the list as it was read — the
    /// objects before their deletion, with the first page's metadata (`continue` and
    /// `remainingItemCount` included when the client's limit left some).
    pub async fn delete_collection(
        &self,
        namespace: Option<&str>,
        q: &ListQuery,
        delete: &DeleteOptions,
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        let client_limit = q.limit.filter(|l| *l > 0);
        let mut page_query = ListQuery { limit: Some(client_limit.unwrap_or(DELETE_COLLECTION_PAGE)), ..q.clone() };
        let mut answer: Option<Value> = None;
        let mut listed = Vec::new();
        loop {
            let page = self.list(namespace, &page_query).await?;
            let items = page.get("items").and_then(Value::as_array).cloned().unwrap_or_default();
            for item in &items {
                let name = meta::name(item).unwrap_or_default().to_string();
                let ns = meta::namespace(item).map(String::from);
                match self.delete(ns.as_deref(), &name, delete, opts).await {
                    Ok(_) => {}
                    Err(e) if e.is_not_found() => {}
                    Err(e) => return Err(e),
                }
            }
            listed.extend(items);
            let next = page["metadata"]["continue"].as_str().filter(|c| !c.is_empty()).map(String::from);
            let first = answer.get_or_insert(page);
            match next {
                Some(token) if client_limit.is_none() => page_query.continue_token = Some(token),
                _ => {
                    // A typed list's items carry no apiVersion and kind (see
                    // `KindNames::typed`); the engine's own readers of `list` want them.
                    if !self.strategy.unstructured() {
                        for item in listed.iter_mut().filter_map(Value::as_object_mut) {
                            item.remove("apiVersion");
                            item.remove("kind");
                        }
                    }
                    first["items"] = Value::Array(listed);
                    let mut list = answer.unwrap_or_default();
                    // An unstructured list (a custom resource's) always has its `continue`.
                    if self.strategy.unstructured()
                        && let Some(list_meta) = list.get_mut("metadata").and_then(Value::as_object_mut)
                    {
                        list_meta.entry("continue").or_insert_with(|| Value::from(""));
                    }
                    return Ok(list);
                }
            }
        }
    }

    /// WATCH: the current objects first as ADDED (without a resourceVersion, or with
    /// `sendInitialEvents=true`), then every change; from a resourceVersion, every change
    /// after it (an ERROR event with 410 if too old). See [`Rest::watch_items`].
    pub async fn watch(
        &self,
        namespace: Option<&str>,
        q: &ListQuery,
    ) -> Result<BoxStream<'static, WatchItem>, ApiError> {
        self.watch_items(namespace, q).await
    }
}
