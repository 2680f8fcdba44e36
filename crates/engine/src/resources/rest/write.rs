//! The writing verbs: create (with `generateName` retries), update of the main endpoint
//! and `/status`, and every patch type, applies included.

use super::options::{FieldValidation, WriteOptions};
use super::{Origin, Rest, Subresource, generate_name, parse_precondition, patch_invalid, patch_shown};
use crate::meta;
use crate::resources::admit::{Attributes, Operation, write_options_document};
use crate::resources::managed_fields::fieldmanager::keep_times_if_nothing_else_changed;
use crate::resources::managed_fields::verbs::{ApplyStep, check_name, validate_patch_options};
use crate::resources::managed_fields::{Tracking, WriteOutcome};
use crate::resources::patch::{self, PatchType};
use crate::resources::patched_json::PatchSource;
use crate::resources::scale;
use crate::resources::spec_changed;
use crate::status::ApiError;
use crate::store::{Revision, StoreError};
use serde_json::Value;
use std::borrow::Cow;

/// How many times a read-modify-write that keeps losing races is tried (see
/// [`Rest::guaranteed`]). Each loss is another writer's success, so only a steady stream
/// of writes to the one object reaches this.
const RACED_ATTEMPTS: usize = 64;

/// An object as [`meta::from_stored`] read it at `revision`, held by a writer.
#[derive(Clone, Copy)]
pub struct Held<'a> {
    pub object: &'a Value,
    pub revision: Revision,
}

impl Rest<'_> {
    /// POST: creates an object. `dry_run` answers as if it had, storing nothing.
    pub async fn create(&self, namespace: Option<&str>, obj: Value, opts: &WriteOptions) -> Result<Value, ApiError> {
        self.create_admitted(namespace, obj, opts, Tracking::Update, |_| std::future::ready(Ok(()))).await
    }

    /// A create whose body, once decoded, passes `admit` before it is validated and
    /// stored, as kube's handler decodes a body before admission: a strict decoding error
    /// or a body naming another namespace is a 400 before a missing namespace's 404, and
    /// the body's warnings come with a refusal.
    pub async fn create_after<F, A>(
        &self,
        namespace: Option<&str>,
        obj: Value,
        opts: &WriteOptions,
        admit: A,
    ) -> Result<Value, ApiError>
    where
        A: FnOnce(&Value) -> F,
        F: std::future::Future<Output = Result<(), ApiError>>,
    {
        self.create_admitted(namespace, obj, opts, Tracking::Update, admit).await
    }

    /// A create whose managedFields are recorded as an update, or were set by an apply.
    pub(in crate::resources) async fn create_tracked(
        &self,
        namespace: Option<&str>,
        obj: Value,
        opts: &WriteOptions,
        tracking: Tracking,
    ) -> Result<Value, ApiError> {
        self.create_admitted(namespace, obj, opts, tracking, |_| std::future::ready(Ok(()))).await
    }

    /// [`Rest::create_after`]. One whose name the server generates is tried again with a
    /// new name while that name exists, as kube's registry retries (see
    /// [`generate_name`](crate::resources::generate_name)).
    async fn create_admitted<F, A>(
        &self,
        namespace: Option<&str>,
        mut obj: Value,
        opts: &WriteOptions,
        tracking: Tracking,
        admit: A,
    ) -> Result<Value, ApiError>
    where
        A: FnOnce(&Value) -> F,
        F: std::future::Future<Output = Result<(), ApiError>>,
    {
        self.check_type_meta(&mut obj)?;
        let given_rv = meta::resource_version(&obj).and_then(meta::parse_resource_version);
        // Decoded before its namespace is checked and a name is required or generated, as
        // kube's handler decodes the body first (`metadata.name: 5` is a 400, not a 422).
        self.decode(&mut obj, opts, Origin::Body { applied: tracking == Tracking::Applied })?;
        self.check_decoded_version(&obj)?;
        self.check_namespace(&mut obj, namespace)?;
        admit(&obj).await?;
        if meta::name(&obj).is_some() || generate_name(&obj).is_none() {
            return self.create_decoded(namespace, obj, given_rv, opts, tracking).await;
        }
        let mut attempts = 1;
        loop {
            match self.create_decoded(namespace, obj.clone(), given_rv, opts, tracking).await {
                Err(e) if e.reason == "AlreadyExists" && attempts < crate::resources::generate_name::MAX_ATTEMPTS => {
                    attempts += 1
                }
                answer => return answer,
            }
        }
    }

    /// The part of a create after its body is decoded and its namespace checked; shared
    /// by the PUT of a kind that creates on update.
    async fn create_decoded(
        &self,
        namespace: Option<&str>,
        mut obj: Value,
        given_rv: Option<Revision>,
        opts: &WriteOptions,
        tracking: Tracking,
    ) -> Result<Value, ApiError> {
        let dry_run = opts.dry_run;
        // kube's create handler, before its REST: system fields wiped, ownerReferences
        // deduplicated, managedFields computed (the name, which the store's strategy may
        // generate next, is not tracked).
        if tracking == Tracking::Update {
            meta::wipe_system_fields(&mut obj);
        }
        dedup_owner_references(&mut obj, opts, Dedup::Body);
        self.track_create(&mut obj, opts, tracking).await;
        // Mutating admission sees the request's object before the strategy prepares it:
        // no uid or creation time yet, and no name when one is to be generated.
        let requested = meta::name(&obj).unwrap_or_default().to_string();
        let attrs = self.admission_attributes(Operation::Create, namespace, &requested, None, opts);
        self.mutated(&attrs, &mut obj, None).await?;
        if let Some(answer) = self.strategy.evaluate(&obj, self.now) {
            return answer;
        }
        let generated = generate_name(&obj).is_some();
        // Without either, the name stays empty for validation to refuse, with whatever
        // else is wrong (kube's `ValidateObjectMeta`).
        if meta::name(&obj).is_none()
            && let Some(name) = generate_name(&obj).map(|prefix| self.names.generate(prefix))
        {
            meta::metadata_mut(&mut obj).insert("name".into(), Value::from(name));
        }
        let name = meta::name(&obj).unwrap_or_default().to_string();
        let sent_generation = obj.pointer("/metadata/generation").cloned();
        meta::prepare_create(&mut obj, self.now);
        if !self.strategy.uses_generation() {
            // A kind that counts no generations keeps the one a create sends (validation
            // refuses a negative one), as kube's strategies leave it; an update keeps the old.
            // Zero is Go's omitted value.
            let metadata = meta::metadata_mut(&mut obj);
            match sent_generation.filter(|g| g.as_i64().is_some_and(|g| g != 0)) {
                Some(generation) => metadata.insert("generation".into(), generation),
                None => metadata.remove("generation"),
            };
        }
        self.strategy.prepare_for_create(&mut obj);
        self.check_kind(&obj, &name)?;
        let errors = self.strategy.validate_create(&obj);
        if !errors.is_empty() {
            return Err(self.invalid(&name, &errors));
        }
        self.strategy.warnings_on_create(&obj).into_iter().for_each(|w| opts.warn(w));
        self.strategy.canonicalize(&mut obj);
        // Validating admission, on what would be stored (its generated name included).
        let attrs = Attributes { name: &name, ..attrs };
        self.admission.validate(&attrs, Some(&obj), None).await?;
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
            return self.strategy.codec().round_trip(obj);
        }
        let kv = match self.shrinking(&mut obj, tracking, |value| self.store.create(&key, value)).await? {
            Ok(kv) => kv,
            Err(StoreError::AlreadyExists { .. }) => {
                let existing = self.store.get(&key).await.map_err(|e| self.store_error(e, &name))?;
                let existing = existing.map(|kv| kv.value).unwrap_or_default();
                return Err(self.already_exists(&existing, &name, generated));
            }
            Err(e) => return Err(self.store_error(e, &name)),
        };
        self.strategy.codec().written(obj, &kv)
    }

    /// PUT on the main endpoint or `/status`.
    pub async fn update(
        &self,
        namespace: Option<&str>,
        name: &str,
        obj: Value,
        sub: Subresource,
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        Ok(self.update_over(namespace, name, obj, None, sub, opts).await?.object)
    }

    /// [`Rest::update`], with whether it created the object: a kind that creates on
    /// update (kube's `AllowCreateOnUpdate`: leases and events) creates a missing one.
    pub async fn update_outcome(
        &self,
        namespace: Option<&str>,
        name: &str,
        obj: Value,
        sub: Subresource,
        opts: &WriteOptions,
    ) -> Result<WriteOutcome, ApiError> {
        self.update_over(namespace, name, obj, None, sub, opts).await
    }

    /// [`Rest::update`] by a writer holding the object it changed ([`Held`], the CRD
    /// controller): while that is what is stored, it is the old object rather than a
    /// second parse of the same bytes (a CRD's are 40 KiB).
    pub async fn update_held(
        &self,
        namespace: Option<&str>,
        name: &str,
        obj: Value,
        held: Held<'_>,
        sub: Subresource,
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        Ok(self.update_over(namespace, name, obj, Some(held), sub, opts).await?.object)
    }

    /// The object stored now as [`Rest::get`] reads it: `held` when it is what is stored and
    /// the codec serves stored objects as they are.
    async fn current<'h>(
        &self,
        namespace: Option<&str>,
        name: &str,
        held: Option<Held<'h>>,
    ) -> Result<Cow<'h, Value>, ApiError> {
        let kv = self.get_stored(namespace, name).await?;
        match held {
            Some(h) if h.revision == kv.mod_revision && self.strategy.codec().reads_as_stored() => {
                Ok(Cow::Borrowed(h.object))
            }
            _ => Ok(Cow::Owned(self.read(&kv)?)),
        }
    }

    async fn update_over(
        &self,
        namespace: Option<&str>,
        name: &str,
        mut obj: Value,
        held: Option<Held<'_>>,
        sub: Subresource,
        opts: &WriteOptions,
    ) -> Result<WriteOutcome, ApiError> {
        // Decoded first, then its name and namespace checked, as kube's handler does.
        self.check_type_meta(&mut obj)?;
        self.decode(&mut obj, opts, Origin::Body { applied: false })?;
        self.check_decoded_version(&obj)?;
        self.check_namespace(&mut obj, namespace)?;
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
        let pinned = meta::resource_version(&obj).map(parse_precondition).is_some_and(|rv| rv != Ok(0));
        let attempt = |obj: Value| async move {
            let old = match self.current(namespace, name, held).await {
                Err(e) if e.is_not_found() && sub == Subresource::Main && self.strategy.allows_create_on_update() => {
                    // kube checks a body's uid against the missing object, which has none.
                    self.check_uid_precondition(namespace, name, meta::uid(&obj), &Value::Null, opts.dry_run)?;
                    return self.create_on_update(namespace, obj, opts).await;
                }
                // The storage checks the uid before it finds the object missing: a 409, not
                // the 404 that follows.
                Err(e) if e.is_not_found() && sub == Subresource::Main => {
                    self.check_uid_precondition(namespace, name, meta::uid(&obj), &Value::Null, opts.dry_run)?;
                    return Err(e);
                }
                old => old?,
            };
            self.check_uid_precondition(namespace, name, meta::uid(&obj), &old, opts.dry_run)?;
            let expected = meta::resource_version(&obj).map(parse_precondition).transpose()?;
            let mut obj = obj;
            dedup_owner_references(&mut obj, opts, Dedup::Body);
            let object = self.write_update(namespace, name, obj, &old, expected, sub, opts).await?;
            Ok(WriteOutcome { object, created: false })
        };
        if pinned {
            // A fresh read would only turn a lost race into the same conflict.
            return attempt(obj).await.map_err(|mut e| {
                e.raced = false;
                e
            });
        }
        // Unconditional (kinds that allow it): the body is written over whatever is stored.
        Self::guaranteed(|| attempt(obj.clone())).await
    }

    /// kube's update of a missing object of a kind that creates on update: a create of
    /// the decoded body, whatever resourceVersion it names (kube's store clears it). Lost
    /// to a concurrent create, it is tried again as an update.
    async fn create_on_update(
        &self,
        namespace: Option<&str>,
        mut obj: Value,
        opts: &WriteOptions,
    ) -> Result<WriteOutcome, ApiError> {
        meta::metadata_mut(&mut obj).remove("resourceVersion");
        let object = self.create_decoded(namespace, obj, None, opts, Tracking::Update).await.map_err(|mut e| {
            e.raced = e.reason == "AlreadyExists";
            e
        })?;
        Ok(WriteOutcome { object, created: true })
    }

    /// The shared tail of update and patch: normalize, validate, guard, write.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::resources) async fn write_update(
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
    pub(in crate::resources) async fn write_tracked(
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
        let managed_fields = self.track_update(old, &mut obj, sub, opts, tracking).await;
        // Mutating admission sees the request's object with its managedFields, before the
        // strategy prepares it.
        managed_fields.show(&mut obj);
        let attrs = self.admission_attributes(Operation::Update, namespace, name, sub.name(), opts);
        match self.scale.filter(|_| sub == Subresource::Scale) {
            // A /scale write is admitted as the Scale; what a webhook made of its replicas
            // is what the object gets.
            Some(paths) => {
                let mut shown = scale::scale_of(&obj, paths);
                if self.admission.mutate(&attrs, Some(&mut shown), Some(&scale::scale_of(old, paths))).await? {
                    scale::set_spec_replicas(&mut obj, paths, scale::requested_replicas(&shown));
                }
            }
            None => self.mutated(&attrs, &mut obj, Some(old)).await?,
        }
        match sub {
            Subresource::Main | Subresource::Scale => self.strategy.prepare_for_update(&mut obj, old),
            Subresource::Status => self.strategy.prepare_for_status_update(&mut obj, old),
            Subresource::Finalize => self.strategy.prepare_for_finalize(&mut obj, old),
        }
        // Taken after the strategy: a custom resource's /status keeps none of the metadata.
        let self_link = meta::given_self_link(&obj);
        meta::preserve_on_update(&mut obj, old);
        managed_fields.restore(&mut obj);
        if self.strategy.uses_generation()
            && sub != Subresource::Status
            && spec_changed(&obj, old, self.info().status_subresource)
        {
            let next = meta::generation(old) + 1;
            meta::metadata_mut(&mut obj).insert("generation".into(), Value::from(next));
        }
        // After the strategy, as kube's store does: what it reset counts as unchanged.
        keep_times_if_nothing_else_changed(old, &mut obj);
        // kube's registry checks the metadata of every update itself before the strategy
        // does (so a changed uid is reported twice, an invalid label three times).
        let mut errors = self.common_update_errors(&obj, old);
        if let Some((kind, group, type_errors)) = self.kind_errors(&obj) {
            // A custom resource's validation is then its type meta alone.
            errors.extend(type_errors);
            return Err(ApiError::invalid(&kind, &group, name, &errors));
        }
        // Rules that ratchet warn, as kube's validator does through the request's context.
        let (validated, warnings) = crate::schema::warnings::collecting(|| match sub {
            Subresource::Main | Subresource::Scale => self.strategy.validate_update(&obj, old),
            Subresource::Status => self.strategy.validate_status_update(&obj, old),
            Subresource::Finalize => self.strategy.validate_finalize(&obj, old),
        });
        warnings.into_iter().for_each(|w| opts.warn(w));
        errors.extend(validated);
        if !errors.is_empty() {
            return Err(self.invalid(name, &errors));
        }
        if sub != Subresource::Status {
            self.strategy.warnings_on_update(&obj, old).into_iter().for_each(|w| opts.warn(w));
        }
        if sub == Subresource::Scale {
            // kube stores the object as the Scale left it, so replicas at a path the schema
            // prunes are validated and move the generation, and it prunes and defaults on
            // every read; the engine serves what it stores, so it does both now.
            self.strategy.prune_and_default(&mut obj);
        }
        self.strategy.canonicalize(&mut obj);
        // Validating admission, even of an update that changes nothing, as kube's store.
        match self.scale.filter(|_| sub == Subresource::Scale) {
            Some(paths) => {
                let (shown, old_shown) = (scale::scale_of(&obj, paths), scale::scale_of(old, paths));
                self.admission.validate(&attrs, Some(&shown), Some(&old_shown)).await?;
            }
            None => self.admission.validate(&attrs, Some(&obj), Some(old)).await?,
        }
        // `obj` has no resourceVersion (see `preserve_on_update`).
        if meta::equal_except_metadata(&obj, old, &["resourceVersion"])
            && self.stored_as_read(namespace, name, &obj, old_rv).await?
        {
            let mut out = old.clone();
            if dry_run {
                meta::restore_self_link(&mut out, self_link);
            }
            return Ok(out);
        }
        if dry_run {
            meta::restore_self_link(&mut obj, self_link);
            let mut out = self.strategy.codec().round_trip(obj)?;
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
            self.store.delete(&key, old_rv).await.map_err(|e| self.raced_store_error(e, name))?;
            // Reported at its last stored revision, not the deletion's: the oracle answers
            // so (its storage decodes the deleted object as it was).
            if let Some(rv) = meta::resource_version(old).map(String::from) {
                meta::metadata_mut(&mut obj).insert("resourceVersion".into(), Value::from(rv));
            }
            meta::restore_self_link(&mut obj, self_link);
            return Ok(obj);
        }
        let kv = self
            .shrinking(&mut obj, tracking, |value| self.store.update(&key, value, old_rv))
            .await?
            .map_err(|e| self.raced_store_error(e, name))?;
        self.strategy.codec().written(obj, &kv)
    }

    /// Whether `obj`, equal to the stored object as read, is also what is stored. kube's
    /// store skips a write only when the new bytes are the stored ones, so an object read
    /// otherwise than stored (defaulted or pruned by a schema newer than it, converted from
    /// another version) is written on a no-op update: a new resourceVersion and a MODIFIED
    /// event, and the stored form catches up with the schema.
    async fn stored_as_read(
        &self,
        namespace: Option<&str>,
        name: &str,
        obj: &Value,
        old_rv: Option<Revision>,
    ) -> Result<bool, ApiError> {
        let codec = self.strategy.codec();
        if codec.reads_as_stored() && !old_rv.is_some_and(|rv| codec.refreshes(rv)) {
            return Ok(true);
        }
        let kv = self.get_stored(namespace, name).await?;
        if Some(kv.mod_revision) != old_rv {
            // Changed since it was read: the write's guard reports the race.
            return Ok(false);
        }
        let written: Value = serde_json::from_slice(&codec.write(obj)?).unwrap_or(Value::Null);
        Ok(meta::equal_except_metadata(&written, &meta::from_stored(&kv), &["resourceVersion"]))
    }

    /// A store error of the write after the read: a conflict there means another write came
    /// in between (the request's own resourceVersion, if any, matched what was read).
    fn raced_store_error(&self, e: StoreError, name: &str) -> ApiError {
        let raced = matches!(e, StoreError::Conflict { .. });
        let mut error = self.store_error(e, name);
        error.raced = raced;
        error
    }

    /// kube's `GuaranteedUpdate`: a read-modify-write whose write lost a race with another
    /// write is run again from a fresh read, so a patch (or an update without a
    /// resourceVersion) never fails for a concurrent writer; one that names a
    /// resourceVersion then gets its conflict from the fresh read. kube retries without
    /// bound; a livelock here ends after [`RACED_ATTEMPTS`] with the conflict.
    pub(in crate::resources) async fn guaranteed<T, Fut>(mut attempt: impl FnMut() -> Fut) -> Result<T, ApiError>
    where
        Fut: std::future::Future<Output = Result<T, ApiError>>,
    {
        let mut attempts = 1;
        loop {
            match attempt().await {
                Err(e) if e.raced && attempts < RACED_ATTEMPTS => attempts += 1,
                Err(mut e) => {
                    e.raced = false;
                    return Err(e);
                }
                done => return done,
            }
        }
    }

    /// What admission is told of a write of this kind through this endpoint.
    pub(super) fn admission_attributes<'s>(
        &'s self,
        operation: Operation,
        namespace: Option<&'s str>,
        name: &'s str,
        subresource: Option<&'static str>,
        opts: &'s WriteOptions,
    ) -> Attributes<'s> {
        let options = match operation {
            Operation::Create => write_options_document("CreateOptions", opts),
            _ => write_options_document("UpdateOptions", opts),
        };
        // kube's scale endpoint admits the Scale it reads and writes.
        let object_kind = (subresource == Subresource::Scale.name()).then_some(("autoscaling", "v1", "Scale"));
        Attributes {
            operation,
            info: self.info(),
            subresource,
            object_kind,
            namespace,
            name,
            options,
            dry_run: opts.dry_run,
            opts,
        }
    }

    /// Mutating admission of `obj`; what a webhook changed is pruned and defaulted again
    /// by the kind's schema, as kube's defaulter runs after each patch and its storage
    /// prunes.
    async fn mutated(&self, attrs: &Attributes<'_>, obj: &mut Value, old: Option<&Value>) -> Result<(), ApiError> {
        if self.admission.mutate(attrs, Some(obj), old).await? {
            self.strategy.prune_and_default(obj);
        }
        Ok(())
    }

    /// Stores `obj` with `write`; an object too large for storage is written once more
    /// without its managedFields (which can be large, and are the server's bookkeeping), as
    /// kube's create, update and patch handlers retry, except for an apply. The outer error
    /// is the conversion's to the storage version (a conversion webhook's refusal).
    async fn shrinking<F, Fut>(
        &self,
        obj: &mut Value,
        tracking: Tracking,
        write: F,
    ) -> Result<Result<crate::store::KeyValue, StoreError>, ApiError>
    where
        F: Fn(bytes::Bytes) -> Fut,
        Fut: std::future::Future<Output = Result<crate::store::KeyValue, StoreError>>,
    {
        Ok(match write(self.stored(obj)?).await {
            // Too large for etcd or for its client's gRPC message: kube's handlers retry both.
            Err(e @ (StoreError::RequestTooLarge | StoreError::MessageTooLarge { .. }))
                if tracking == Tracking::Update =>
            {
                if meta::metadata_mut(obj).remove("managedFields").is_none() {
                    return Ok(Err(e));
                }
                write(self.stored(obj)?).await
            }
            other => other,
        })
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
    ) -> Result<WriteOutcome, ApiError> {
        Self::guaranteed(|| async {
            validate_patch_options(patch_type == PatchType::Apply, opts)?;
            let source = PatchSource { patch_type, body };
            // kube decodes a merge patch strictly (for its duplicate fields) unless told to ignore.
            let strict_decoding = opts.field_validation != FieldValidation::Ignore;
            let (old, patched, tracking) = match patch_type {
                PatchType::Apply => match self.apply_patch(namespace, name, body, sub, opts).await? {
                    ApplyStep::Create(obj) => {
                        // Created by another writer since the read: apply to it instead.
                        let object =
                            self.create_tracked(namespace, obj, opts, Tracking::Applied).await.map_err(|mut e| {
                                e.raced = e.reason == "AlreadyExists";
                                e
                            })?;
                        return Ok(WriteOutcome { object, created: true });
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
                        _ => match self.strategy.go_struct() {
                            Some(kind) => patch::strategic(&old, body, strict_decoding, kind),
                            None => return Err(ApiError::unsupported_patch()),
                        },
                    };
                    (old, patched, Tracking::Update)
                }
            };
            let (mut patched, applied) = patched.map_err(ApiError::from)?;
            if self.strategy.unstructured() && tracking == Tracking::Update {
                // The patched JSON is decoded as a body is: without a kind it is no object.
                if let Some(why) = crate::resources::go_decode::unstructured_decode_error(&patched) {
                    return Err(patch_invalid(&crate::representation::gofmt::go_json(&patched), &why));
                }
            }
            let show = |patched: &Value| patch_shown(&source, &old, patched, self.strategy.go_struct());
            if let (PatchType::Merge | PatchType::Json, Some(kind)) = (patch_type, self.strategy.go_struct()) {
                self.decode_typed_patch(&patched, kind, name, &applied, opts, &show)?;
            }
            let origin = Origin::Patch { patch_type, show: &show, applied };
            self.decode(&mut patched, opts, origin)?;
            check_name(&patched, name, namespace)?;
            if self.strategy.unstructured()
                && patched.get("apiVersion").and_then(Value::as_str).is_none_or(str::is_empty)
            {
                // kube's `BeforeUpdate` cannot type an unstructured object without a version.
                return Err(ApiError::internal("Object 'apiVersion' is missing in 'object has no apiVersion field'"));
            }
            self.check_type_meta(&mut patched)?;
            self.check_namespace(&mut patched, namespace)?;
            // A resourceVersion the patch set that is no number fails as an update's does.
            let expected = meta::resource_version(&patched).map(parse_precondition).transpose()?;
            if tracking == Tracking::Update {
                dedup_owner_references(&mut patched, opts, Dedup::Patched);
            }
            let object = self.write_tracked(namespace, name, patched, &old, expected, sub, opts, tracking).await?;
            Ok(WriteOutcome { object, created: false })
        })
        .await
    }
}

#[cfg(test)]
#[path = "write_held_tests.rs"]
mod held_tests;

/// When kube's handlers drop an ownerReference equal to an earlier one.
#[derive(Clone, Copy)]
enum Dedup {
    /// A create's or an update's body, before the field manager sees it.
    Body,
    /// A patched object, after the field manager and admission (its transformer).
    Patched,
}

/// kube's handlers drop an ownerReference equal to an earlier one, with a warning naming
/// the duplicated uids (each repeat), worded by when it happens.
fn dedup_owner_references(obj: &mut Value, opts: &WriteOptions, when: Dedup) {
    let duplicates = meta::dedup_owner_references(obj);
    if !duplicates.is_empty() {
        let after = match when {
            Dedup::Body => "",
            Dedup::Patched => " after mutating admission happens",
        };
        opts.warn(format!(
            ".metadata.ownerReferences contains duplicate entries{after}; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: {}",
            duplicates.join(", ")
        ));
    }
}
