//! The verbs, implemented once for every kind: create, get, list, update (main and
//! status), patch, delete, deletecollection and watch, over the store and a [`Strategy`].
//!
//! Pure of HTTP: requests come in as values and answers go out as JSON objects or
//! [`ApiError`]s; the api layer does the wire.

use super::patch::{self, PatchError, PatchType};
use super::scale::{self, ScalePaths};
use super::selector::{FieldSelector, LabelSelector};
use super::{Strategy, spec_changed};
use crate::engine::field::FieldError;
use crate::engine::meta;
use crate::engine::status::ApiError;
use crate::engine::store::{EventType, ListOptions, Revision, Store, StoreError, WatchEvent};
use base64::Engine as _;
use futures::StreamExt;
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
}

impl WriteOptions {
    /// Options for a write the engine makes itself (controllers).
    pub fn internal() -> Self {
        WriteOptions::default()
    }

    pub fn dry_run() -> Self {
        WriteOptions { dry_run: true, ..Default::default() }
    }

    pub fn warn(&self, message: String) {
        self.warnings.lock().unwrap_or_else(|e| e.into_inner()).push(message);
    }

    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut *self.warnings.lock().unwrap_or_else(|e| e.into_inner()))
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
    pub precondition_rv: Option<Revision>,
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
}

/// The query of a list or watch.
#[derive(Debug, Clone, Default)]
pub struct ListQuery {
    pub labels: Option<String>,
    pub fields: Option<String>,
    pub limit: Option<usize>,
    pub continue_token: Option<String>,
    pub resource_version: Option<String>,
    pub resource_version_match: Option<String>,
}

/// One watch event, or the error that ends the watch.
#[derive(Debug, Clone)]
pub enum WatchItem {
    Event { event_type: &'static str, object: Value },
    Error(ApiError),
}

/// A continue token: kube's shape, `{"v":"meta.k8s.io/v1","rv":N,"start":"key"}` base64.
fn encode_continue(revision: Revision, start: &str) -> String {
    let doc = json!({"v": "meta.k8s.io/v1", "rv": revision, "start": start});
    base64::engine::general_purpose::URL_SAFE.encode(doc.to_string())
}

fn decode_continue(token: &str) -> Result<(Revision, String), ApiError> {
    let bad = || ApiError::bad_request("The provided continue parameter is invalid");
    let raw = base64::engine::general_purpose::URL_SAFE.decode(token).map_err(|_| bad())?;
    let doc: Value = serde_json::from_slice(&raw).map_err(|_| bad())?;
    let rv = doc.get("rv").and_then(Value::as_u64).ok_or_else(bad)?;
    let start = doc.get("start").and_then(Value::as_str).ok_or_else(bad)?;
    Ok((rv, start.to_string()))
}

const GENERATE_NAME_CHARS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

fn generated_name(base: &str) -> String {
    use rand::Rng;
    let mut rng = rand::rng();
    let suffix: String =
        (0..5).map(|_| GENERATE_NAME_CHARS[rng.random_range(0..GENERATE_NAME_CHARS.len())] as char).collect();
    format!("{base}{suffix}")
}

impl Rest<'_> {
    fn info(&self) -> &super::ResourceInfo {
        self.strategy.info()
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
            other => ApiError::internal(other.to_string()),
        }
    }

    fn invalid(&self, name: &str, errors: &[FieldError]) -> ApiError {
        ApiError::invalid(&self.info().kind, &self.info().group, name, errors)
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
        match obj.get("apiVersion").and_then(Value::as_str) {
            Some(v) if v != want_version => {
                return Err(ApiError::bad_request(format!(
                    "the API version in the data ({v}) does not match the expected API version ({want_version})"
                )));
            }
            _ => {}
        }
        match obj.get("kind").and_then(Value::as_str) {
            Some(k) if k != self.info().kind => {
                return Err(ApiError::bad_request(format!(
                    "the kind in the data ({k}) does not match the expected kind ({})",
                    self.info().kind
                )));
            }
            _ => {}
        }
        let map = obj.as_object_mut().ok_or_else(|| ApiError::bad_request("expected an object"))?;
        map.insert("apiVersion".into(), Value::from(want_version));
        map.insert("kind".into(), Value::from(self.info().kind.clone()));
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

    /// Decode-time checks of a request body: the kind's own, then pruning and defaulting,
    /// with unknown fields refused or reported as `fieldValidation` asks.
    fn decode(&self, obj: &mut Value, opts: &WriteOptions) -> Result<(), ApiError> {
        self.strategy.decode(obj)?;
        let unknown = self.strategy.prune_and_default(obj);
        if unknown.is_empty() {
            return Ok(());
        }
        let described: Vec<String> = unknown.iter().map(|f| format!("unknown field {f:?}")).collect();
        match opts.field_validation {
            FieldValidation::Ignore => Ok(()),
            FieldValidation::Warn => {
                described.into_iter().for_each(|w| opts.warn(w));
                Ok(())
            }
            FieldValidation::Strict => {
                Err(ApiError::bad_request(format!("strict decoding error: {}", described.join(", "))))
            }
        }
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
    pub async fn create(
        &self,
        namespace: Option<&str>,
        mut obj: Value,
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        let dry_run = opts.dry_run;
        self.check_body(&mut obj, namespace)?;
        if meta::name(&obj).is_none() {
            let generate =
                obj.get("metadata").and_then(|m| m.get("generateName")).and_then(Value::as_str).map(String::from);
            match generate.filter(|g| !g.is_empty()) {
                Some(base) => {
                    meta::metadata_mut(&mut obj).insert("name".into(), Value::from(generated_name(&base)));
                }
                None => {
                    return Err(
                        self.invalid("", &[FieldError::required("metadata.name", "name or generateName is required")])
                    );
                }
            }
        }
        let name = meta::name(&obj).unwrap_or_default().to_string();
        self.decode(&mut obj, opts)?;
        meta::prepare_create(&mut obj, self.now);
        if !self.strategy.uses_generation() {
            meta::metadata_mut(&mut obj).remove("generation");
        }
        self.strategy.prepare_for_create(&mut obj);
        let mut errors = self.strategy.validate_create(&obj);
        errors.extend(self.scale_errors(&obj, Subresource::Main));
        if !errors.is_empty() {
            return Err(self.invalid(&name, &errors));
        }
        if dry_run {
            if self
                .store
                .get(&self.info().key(namespace, &name))
                .await
                .map_err(|e| self.store_error(e, &name))?
                .is_some()
            {
                return Err(ApiError::already_exists(&self.info().group_resource(), &name));
            }
            return Ok(obj);
        }
        let kv = self
            .store
            .create(&self.info().key(namespace, &name), meta::to_stored(&obj))
            .await
            .map_err(|e| self.store_error(e, &name))?;
        Ok(meta::from_stored(&kv))
    }

    /// GET one object.
    pub async fn get(&self, namespace: Option<&str>, name: &str) -> Result<Value, ApiError> {
        self.store
            .get(&self.info().key(namespace, name))
            .await
            .map_err(|e| self.store_error(e, name))?
            .map(|kv| meta::from_stored(&kv))
            .ok_or_else(|| ApiError::not_found(&self.info().group_resource(), name))
    }

    fn selectors(&self, q: &ListQuery) -> Result<(LabelSelector, FieldSelector), ApiError> {
        let labels = LabelSelector::parse(q.labels.as_deref().unwrap_or("")).map_err(|e| ApiError::bad_request(e.0))?;
        let fields = FieldSelector::parse(q.fields.as_deref().unwrap_or(""), &self.strategy.selectable_fields())
            .map_err(|e| ApiError::bad_request(e.0))?;
        Ok((labels, fields))
    }

    /// GET a list: selectors, `limit` and `continue` over one consistent snapshot.
    pub async fn list(&self, namespace: Option<&str>, q: &ListQuery) -> Result<Value, ApiError> {
        let (labels, fields) = self.selectors(q)?;
        let prefix = self.info().namespace_prefix(namespace);
        let mut opts = ListOptions { limit: q.limit.filter(|l| *l > 0), ..Default::default() };
        if let Some(token) = q.continue_token.as_deref().filter(|t| !t.is_empty()) {
            let (rv, start) = decode_continue(token)?;
            opts.revision = Some(rv);
            opts.start_key = Some(format!("{prefix}{start}"));
        } else if q.resource_version_match.as_deref() == Some("Exact") {
            let rv = q
                .resource_version
                .as_deref()
                .and_then(meta::parse_resource_version)
                .ok_or_else(|| ApiError::bad_request("resourceVersionMatch=Exact requires a resourceVersion"))?;
            opts.revision = Some(rv);
        }
        let filtering = !labels.0.is_empty() || !fields.0.is_empty();
        let want = opts.limit.unwrap_or(usize::MAX);
        let mut items = Vec::new();
        let (revision, next_key, remaining) = loop {
            let page = self.store.list(&prefix, &opts).await.map_err(|e| self.store_error(e, ""))?;
            opts.revision = Some(page.revision);
            for kv in &page.items {
                if items.len() >= want {
                    break;
                }
                let obj = meta::from_stored(kv);
                if labels.matches(&obj) && fields.matches(&obj) {
                    items.push(obj);
                }
            }
            match page.next_key {
                Some(next) if items.len() < want => opts.start_key = Some(next),
                next => break (page.revision, next, page.remaining),
            }
        };
        let mut list_meta = serde_json::Map::new();
        list_meta.insert("resourceVersion".into(), Value::from(revision.to_string()));
        if let Some(next) = next_key {
            let start = next.strip_prefix(&prefix).unwrap_or(&next);
            list_meta.insert("continue".into(), Value::from(encode_continue(revision, start)));
            if !filtering {
                list_meta.insert("remainingItemCount".into(), Value::from(remaining));
            }
        }
        Ok(json!({
            "apiVersion": self.info().api_version(),
            "items": items,
            "kind": self.info().list_kind,
            "metadata": list_meta,
        }))
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
                meta::metadata_mut(&mut obj).insert("name".into(), Value::from(name));
            }
        }
        self.decode(&mut obj, opts)?;
        let old = self.get(namespace, name).await?;
        let expected =
            match meta::resource_version(&obj) {
                Some(rv) => Some(meta::parse_resource_version(rv).ok_or_else(|| {
                    ApiError::bad_request(format!("invalid resourceVersion {rv:?}: must be a number"))
                })?),
                None => None,
            };
        self.write_update(namespace, name, obj, &old, expected, sub, opts).await
    }

    /// The shared tail of update and patch: normalize, validate, guard, write.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn write_update(
        &self,
        namespace: Option<&str>,
        name: &str,
        mut obj: Value,
        old: &Value,
        expected: Option<Revision>,
        sub: Subresource,
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        let dry_run = opts.dry_run;
        let old_rv = meta::resource_version(old).and_then(meta::parse_resource_version);
        if let (Some(exp), Some(cur)) = (expected, old_rv)
            && exp != cur
        {
            return Err(ApiError::conflict(&self.info().group_resource(), name, ApiError::STALE_OBJECT));
        }
        match sub {
            Subresource::Main | Subresource::Scale => self.strategy.prepare_for_update(&mut obj, old),
            Subresource::Status => self.strategy.prepare_for_status_update(&mut obj, old),
        }
        meta::preserve_on_update(&mut obj, old);
        if self.strategy.uses_generation() && sub != Subresource::Status && spec_changed(&obj, old) {
            let next = meta::generation(old) + 1;
            meta::metadata_mut(&mut obj).insert("generation".into(), Value::from(next));
        }
        // An update may not add finalizers to an object being deleted, but may remove them.
        let mut errors = match sub {
            Subresource::Main | Subresource::Scale => self.strategy.validate_update(&obj, old),
            Subresource::Status => self.strategy.validate_status_update(&obj, old),
        };
        errors.extend(self.scale_errors(&obj, sub));
        if !errors.is_empty() {
            return Err(self.invalid(name, &errors));
        }
        let mut old_cmp = old.clone();
        meta::metadata_mut(&mut old_cmp).remove("resourceVersion");
        if obj == old_cmp {
            return Ok(old.clone());
        }
        if dry_run {
            let mut out = obj;
            if let Some(rv) = meta::resource_version(old).map(String::from) {
                meta::metadata_mut(&mut out).insert("resourceVersion".into(), Value::from(rv));
            }
            return Ok(out);
        }
        let key = self.info().key(namespace, name);
        // The last finalizer gone from an object being deleted: it goes now.
        if meta::deletion_timestamp(&obj).is_some() && meta::finalizers(&obj).is_empty() {
            self.store.delete(&key, old_rv).await.map_err(|e| self.store_error(e, name))?;
            return Ok(obj);
        }
        let kv = self.store.update(&key, meta::to_stored(&obj), old_rv).await.map_err(|e| self.store_error(e, name))?;
        Ok(meta::from_stored(&kv))
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
        let old = self.get(namespace, name).await?;
        let patched = match patch_type {
            PatchType::Merge => patch::merge(&old, body),
            PatchType::Json => patch::json(&old, body),
            PatchType::StrategicMerge => patch::strategic(&old, body),
            PatchType::Apply => {
                return Err(ApiError::new(
                    415,
                    "UnsupportedMediaType",
                    "apply patches are not supported for this resource yet",
                ));
            }
        };
        let mut patched = patched.map_err(|e| match e {
            PatchError::Malformed(m) => ApiError::bad_request(m),
            PatchError::Failed(m) => ApiError::new(422, "Invalid", m),
        })?;
        self.check_body(&mut patched, namespace)?;
        self.decode(&mut patched, opts)?;
        if meta::name(&patched) != Some(name) {
            return Err(ApiError::bad_request("metadata.name in a patch must not change"));
        }
        let expected = meta::resource_version(&patched).and_then(meta::parse_resource_version);
        self.write_update(namespace, name, patched, &old, expected, sub, opts).await
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
            if !dry_run {
                self.store.delete(&key, rv).await.map_err(|e| self.store_error(e, name))?;
            }
            return Ok(current);
        }
        let already_marked = meta::deletion_timestamp(&current).is_some();
        if (already_marked && !changed) || dry_run {
            return Ok(current);
        }
        let mut marked = current.clone();
        let m = meta::metadata_mut(&mut marked);
        m.insert("finalizers".into(), Value::from(finalizers));
        if !already_marked {
            m.insert("deletionTimestamp".into(), Value::from(meta::format_time(self.now)));
            m.insert("deletionGracePeriodSeconds".into(), Value::from(0));
            if self.strategy.uses_generation() {
                m.insert("generation".into(), Value::from(meta::generation(&current) + 1));
            }
            self.strategy.prepare_for_deletion(&mut marked);
        }
        let kv = self.store.update(&key, meta::to_stored(&marked), rv).await.map_err(|e| self.store_error(e, name))?;
        Ok(meta::from_stored(&kv))
    }

    /// `DeleteOptions.preconditions`: 409 when the object is not the one the client meant.
    fn check_delete_preconditions(&self, name: &str, current: &Value, delete: &DeleteOptions) -> Result<(), ApiError> {
        let failed = |what: &str, want: &str, have: &str| {
            ApiError::conflict(
                &self.info().group_resource(),
                name,
                &format!("Precondition failed: {what} in precondition: {want}, {what} in object meta: {have}"),
            )
        };
        if let Some(want) = &delete.precondition_uid {
            let have = meta::uid(current).unwrap_or_default();
            if want != have {
                return Err(failed("UID", want, have));
            }
        }
        if let Some(want) = delete.precondition_rv {
            let have = meta::resource_version(current).unwrap_or_default();
            if want.to_string() != have {
                return Err(failed("ResourceVersion", &want.to_string(), have));
            }
        }
        Ok(())
    }

    /// DELETE a collection: every object the selectors match, each as a single delete.
    pub async fn delete_collection(
        &self,
        namespace: Option<&str>,
        q: &ListQuery,
        delete: &DeleteOptions,
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        let list = self.list(namespace, &ListQuery { limit: None, continue_token: None, ..q.clone() }).await?;
        let mut deleted = Vec::new();
        for item in list.get("items").and_then(Value::as_array).cloned().unwrap_or_default() {
            let name = meta::name(&item).unwrap_or_default().to_string();
            let ns = meta::namespace(&item).map(String::from);
            match self.delete(ns.as_deref(), &name, delete, opts).await {
                Ok(obj) => deleted.push(obj),
                Err(e) if e.is_not_found() => {}
                Err(e) => return Err(e),
            }
        }
        Ok(json!({
            "apiVersion": self.info().api_version(),
            "items": deleted,
            "kind": self.info().list_kind,
            "metadata": {"resourceVersion": list["metadata"]["resourceVersion"].clone()},
        }))
    }

    /// WATCH: without a resourceVersion (or "0"), the current objects first as ADDED, then
    /// every change; from a resourceVersion, every change after it (410 if too old).
    pub async fn watch(
        &self,
        namespace: Option<&str>,
        q: &ListQuery,
    ) -> Result<BoxStream<'static, WatchItem>, ApiError> {
        let (labels, fields) = self.selectors(q)?;
        let prefix = self.info().namespace_prefix(namespace);
        let rv = q.resource_version.as_deref().filter(|s| !s.is_empty() && *s != "0");
        let (initial, after) = match rv {
            Some(rv) => {
                let after = meta::parse_resource_version(rv).ok_or_else(|| {
                    ApiError::bad_request(format!("invalid resourceVersion {rv:?}: must be a number"))
                })?;
                (Vec::new(), after)
            }
            None => {
                let page =
                    self.store.list(&prefix, &ListOptions::default()).await.map_err(|e| self.store_error(e, ""))?;
                let objs: Vec<WatchItem> = page
                    .items
                    .iter()
                    .map(meta::from_stored)
                    .filter(|o| labels.matches(o) && fields.matches(o))
                    .map(|object| WatchItem::Event { event_type: "ADDED", object })
                    .collect();
                (objs, page.revision)
            }
        };
        let changes = match self.store.watch(&prefix, after).await {
            Ok(s) => s,
            Err(StoreError::Expired { requested, oldest }) => {
                let err = ApiError::expired(format!("too old resource version: {requested} ({oldest})"));
                return Ok(futures::stream::iter([WatchItem::Error(err)]).boxed());
            }
            Err(e) => return Err(self.store_error(e, "")),
        };
        let events = changes.filter_map(move |item| {
            let out = match item {
                Ok(event) => translate(&event, &labels, &fields),
                Err(StoreError::Expired { requested, oldest }) => Some(WatchItem::Error(ApiError::expired(format!(
                    "too old resource version: {requested} ({oldest})"
                )))),
                Err(e) => Some(WatchItem::Error(ApiError::internal(e.to_string()))),
            };
            futures::future::ready(out)
        });
        Ok(futures::stream::iter(initial).chain(events).boxed())
    }
}

/// A store change as the watcher of a filtered view sees it: an object moving into the
/// view is ADDED, one moving out is DELETED.
fn translate(event: &WatchEvent, labels: &LabelSelector, fields: &FieldSelector) -> Option<WatchItem> {
    let matches = |o: &Value| labels.matches(o) && fields.matches(o);
    let current = event.current.as_ref().map(meta::from_stored);
    let prev = event.prev.as_ref().map(meta::from_stored);
    let (event_type, object) = match event.event_type() {
        EventType::Added => ("ADDED", current?),
        EventType::Deleted => {
            // A deleted object is reported at the deletion's revision.
            let mut obj = prev?;
            meta::metadata_mut(&mut obj).insert("resourceVersion".into(), Value::from(event.revision.to_string()));
            ("DELETED", obj)
        }
        EventType::Modified => {
            let (cur, old) = (current?, prev?);
            match (matches(&old), matches(&cur)) {
                (true, true) => ("MODIFIED", cur),
                (false, true) => ("ADDED", cur),
                (true, false) => ("DELETED", cur),
                (false, false) => return None,
            }
        }
    };
    if event_type != "DELETED" && !matches(&object) {
        return None;
    }
    if event_type == "DELETED" && event.event_type() == EventType::Deleted && !matches(&object) {
        return None;
    }
    Some(WatchItem::Event { event_type, object })
}
