//! Admission webhooks, called as kube-apiserver's `MutatingAdmissionWebhook` and
//! `ValidatingAdmissionWebhook` plugins call them: the webhooks of the stored
//! `MutatingWebhookConfiguration`s and `ValidatingWebhookConfiguration`s (configurations
//! in name order, webhooks in their order), each called when its rules, namespace
//! selector and object selector take the request, with an `AdmissionReview` POSTed over
//! HTTPS to its `url` (`?timeout=<timeoutSeconds>s`), trusting its `caBundle`.
//!
//! - Mutating webhooks are called one after another, each on the object the previous one
//!   left; their JSON patches are applied, and a webhook with `reinvocationPolicy:
//!   IfNeeded` is called once more when a later one changed the object.
//! - Validating webhooks are called together, on the object about to be stored; the first
//!   refusal (in their order) is the answer.
//! - A webhook that cannot be called or answers nonsense fails the request with kube's
//!   500 (`failed calling webhook ...`), unless its `failurePolicy` is `Ignore`. A refusal
//!   is the webhook's own Status, worded as kube words it.
//!
//! The configurations are read from the store (its watch cache, as kube's informers) at
//! each admitted write; each is parsed once per revision. The verbs reach this through
//! [`crate::resources::admit::Admission`].
//!
//! With `matchPolicy: Equivalent` (the default), a rule naming another version of the
//! requested resource takes the request too, and the webhook sees the object converted to
//! that version (a mutation converted back). `matchConditions` are evaluated with
//! `object`, `oldObject` and `request` (not `authorizer`). Left for later: the
//! equivalence of core and `events.k8s.io` Events, and the engine's own controllers'
//! writes (kube admits those too).

pub mod hooks;
pub mod matching;
pub mod review;

use crate::kinds::{Kinds, ServedKind};
use crate::resources::admit::{Admission, Attributes, Operation};
use crate::resources::builtin::webhook_configs::{GROUP, Hooks};
use crate::resources::webhook_call::{self as http_call, HttpsClient};
use crate::resources::{ResourceInfo, jsonpatch};
use crate::status::{ApiError, GroupResource};
use crate::store::{ListOptions, Revision, Store};
use async_trait::async_trait;
use hooks::{Hook, Target};
use matching::Requested;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

/// The engine's one user, as a review names who asks.
static USER: std::sync::LazyLock<Value> = std::sync::LazyLock::new(|| {
    use crate::resources::builtin::reviews::{GROUPS, USERNAME};
    json!({"username": USERNAME, "groups": GROUPS})
});

/// The version a webhook is called at.
enum Called {
    /// The request's own.
    Own,
    /// Another version of the same resource, which its rules name (`matchPolicy:
    /// Equivalent`).
    Equivalent(ServedKind),
}

/// Each stored configuration's webhooks, by key, at the revision they were read.
type Parsed = HashMap<String, (Revision, Arc<Vec<Hook>>)>;
/// An HTTPS client per URL and CA bundle (or why none could be made).
type Clients = HashMap<(String, Option<Vec<u8>>), Result<HttpsClient, String>>;

/// The admission webhooks of one engine.
pub struct Webhooks {
    /// Weak: the engine closes its store when it holds the last reference.
    store: Weak<dyn Store>,
    /// The kinds served, for the other versions of a resource.
    kinds: Arc<Kinds>,
    parsed: Mutex<Parsed>,
    /// Made at a webhook's first call.
    clients: Mutex<Clients>,
}

impl Webhooks {
    pub fn new(store: Weak<dyn Store>, kinds: Arc<Kinds>) -> Self {
        Webhooks { store, kinds, parsed: Mutex::default(), clients: Mutex::default() }
    }

    fn store(&self) -> Result<Arc<dyn Store>, ApiError> {
        self.store.upgrade().ok_or_else(|| ApiError::internal("the store is closed"))
    }

    /// The webhooks of every stored configuration of `resource`, configurations in name
    /// order (their keys' order), each configuration's parsed once per revision.
    async fn stored(&self, kind: Hooks) -> Result<Vec<Arc<Vec<Hook>>>, ApiError> {
        let prefix = ResourceInfo::store_prefix(GROUP, kind.plural());
        let page = self
            .store()?
            .list(&prefix, &ListOptions { cached: true, ..Default::default() })
            .await
            .map_err(|e| ApiError::storage_read(&e))?;
        let mut parsed = self.parsed.lock().unwrap_or_else(|e| e.into_inner());
        // Configurations gone since are forgotten.
        parsed.retain(|key, _| !key.starts_with(&prefix) || page.items.iter().any(|kv| &kv.key == key));
        let mut configurations = Vec::with_capacity(page.items.len());
        for kv in &page.items {
            let current = parsed.get(&kv.key).filter(|(rev, _)| *rev == kv.mod_revision).map(|(_, h)| h.clone());
            let these = current.unwrap_or_else(|| {
                let config: Value = serde_json::from_slice(&kv.value).unwrap_or(Value::Null);
                let these = Arc::new(hooks::hooks_of(&config));
                parsed.insert(kv.key.clone(), (kv.mod_revision, these.clone()));
                these
            });
            configurations.push(these);
        }
        Ok(configurations)
    }

    /// Whether `hook` is to be called for this request, and at which version (kube's
    /// `ShouldCallHook`): its selectors and one of its rules take it. A selector's error
    /// counts only when a rule matched.
    async fn takes(
        &self,
        hook: &Hook,
        attrs: &Attributes<'_>,
        obj: Option<&Value>,
        old: Option<&Value>,
    ) -> Result<Option<Called>, ApiError> {
        let namespace = match self.namespace_matches(hook, attrs, obj).await {
            Ok(false) => return Ok(None),
            other => other,
        };
        let object = match &hook.object_selector {
            Ok(s) if s.is_everything() => Ok(true),
            Ok(s) => Ok(obj.is_some_and(|o| s.matches(o)) || old.is_some_and(|o| s.matches(o))),
            Err(e) => Err(ApiError::internal(e.clone())),
        };
        if matches!(object, Ok(false)) {
            return Ok(None);
        }
        let info = attrs.info;
        let mut requested = Requested {
            operation: attrs.operation.as_str(),
            group: &info.group,
            version: &info.version,
            resource: &info.plural,
            subresource: attrs.subresource.unwrap_or_default(),
            namespace: attrs.namespace,
        };
        let called = if hook.rules.iter().any(|r| matching::rule_matches(r, &requested)) {
            Some(Called::Own)
        } else if hook.exact || !hook.rules.iter().any(|r| matching::matches_at_some_version(r, &requested)) {
            None
        } else {
            let others =
                self.kinds.matching(|i| i.group == info.group && i.plural == info.plural && i.version != info.version);
            hook.rules.iter().find_map(|rule| {
                others.iter().find_map(|other| {
                    requested.version = &other.info().version;
                    matching::rule_matches(rule, &requested).then(|| Called::Equivalent(other.clone()))
                })
            })
        };
        let Some(called) = called else { return Ok(None) };
        namespace?;
        object?;
        if hook.match_conditions.is_empty() || self.conditions_match(hook, attrs, &called, obj, old)? {
            Ok(Some(called))
        } else {
            Ok(None)
        }
    }

    /// kube's match conditions: any that is false passes the webhook over; otherwise their
    /// errors refuse the request with a 403 (or pass it over when it fails open).
    fn conditions_match(
        &self,
        hook: &Hook,
        attrs: &Attributes<'_>,
        called: &Called,
        obj: Option<&Value>,
        old: Option<&Value>,
    ) -> Result<bool, ApiError> {
        let called_info = match called {
            Called::Own => attrs.info,
            Called::Equivalent(kind) => kind.info(),
        };
        let mut request = review::request("v1", "", &self.asked(attrs, called_info, None, None))["request"].take();
        if let Some(map) = request.as_object_mut() {
            for key in ["uid", "object", "oldObject"] {
                map.remove(key);
            }
        }
        let (obj, old) = (obj.cloned().unwrap_or(Value::Null), old.cloned().unwrap_or(Value::Null));
        let variables = [("object", &obj), ("oldObject", &old), ("request", &request)];
        let mut errors = Vec::new();
        for (_, expression) in &hook.match_conditions {
            match crate::schema::cel::evaluate_condition(expression, &variables) {
                Ok(false) => return Ok(false),
                Ok(true) => {}
                Err(e) => errors.push(format!("expression '{expression}' resulted in error: {e}")),
            }
        }
        match errors.len() {
            0 => Ok(true),
            _ if hook.fail_open => Ok(false),
            1 => Err(ApiError::forbidden(&attrs.info.group_resource(), attrs.name, &errors[0])),
            _ => {
                Err(ApiError::forbidden(&attrs.info.group_resource(), attrs.name, &format!("[{}]", errors.join(", "))))
            }
        }
    }

    /// What a review asks about this request, at the version `called`.
    fn asked<'a>(
        &self,
        attrs: &'a Attributes<'a>,
        called: &'a ResourceInfo,
        obj: Option<&'a Value>,
        old: Option<&'a Value>,
    ) -> review::Asked<'a> {
        let info = attrs.info;
        let (kind, request_kind) = match attrs.object_kind {
            Some((group, version, name)) => {
                (review::Gvx { group, version, name }, review::Gvx { group, version, name })
            }
            None => (
                review::Gvx { group: &called.group, version: &called.version, name: &called.kind },
                review::Gvx { group: &info.group, version: &info.version, name: &info.kind },
            ),
        };
        review::Asked {
            kind,
            resource: review::Gvx { group: &called.group, version: &called.version, name: &called.plural },
            request_kind,
            request_resource: review::Gvx { group: &info.group, version: &info.version, name: &info.plural },
            subresource: attrs.subresource.unwrap_or_default(),
            name: attrs.name,
            // kube names a namespace as its own namespace.
            namespace: match info.namespaced {
                true => attrs.namespace.unwrap_or_default(),
                false if info.group.is_empty() && info.plural == "namespaces" => attrs.name,
                false => "",
            },
            operation: attrs.operation.as_str(),
            user: &USER,
            object: obj,
            old_object: old,
            dry_run: attrs.dry_run,
            options: &attrs.options,
        }
    }

    /// kube's namespace matcher: a cluster-scoped object (but a namespace) always
    /// matches; a namespace being created or updated is matched by its own labels; any
    /// other object by its namespace's.
    async fn namespace_matches(
        &self,
        hook: &Hook,
        attrs: &Attributes<'_>,
        obj: Option<&Value>,
    ) -> Result<bool, ApiError> {
        let is_namespace = attrs.info.group.is_empty() && attrs.info.plural == "namespaces";
        let namespace = if is_namespace { Some(attrs.name) } else { attrs.namespace };
        let Some(namespace) = namespace.filter(|n| !n.is_empty()) else { return Ok(true) };
        let selector = match &hook.namespace_selector {
            Ok(s) if s.is_everything() => return Ok(true),
            Ok(s) => s,
            Err(e) => return Err(ApiError::internal(e.clone())),
        };
        if is_namespace && attrs.subresource.is_none() && attrs.operation != Operation::Delete {
            return Ok(obj.is_some_and(|o| selector.matches(o)));
        }
        let key = ResourceInfo::store_prefix("", "namespaces") + namespace;
        match self.store()?.get_cached(&key).await.map_err(|e| ApiError::storage_read(&e))? {
            Some(kv) => {
                let stored: Value = serde_json::from_slice(&kv.value).unwrap_or(Value::Null);
                Ok(selector.matches(&stored))
            }
            None => Err(ApiError::not_found(&GroupResource::new("", "namespaces"), namespace)),
        }
    }

    /// Calls `hook` with a review of `obj` and `old`: its verdict, or the error kube
    /// answers for a webhook it could not use (`None` when that webhook fails open).
    async fn ask(
        &self,
        hook: &Hook,
        mutating: bool,
        attrs: &Attributes<'_>,
        called: &ResourceInfo,
        obj: Option<&Value>,
        old: Option<&Value>,
    ) -> Result<Option<review::Verdict>, ApiError> {
        if attrs.dry_run {
            match hook.side_effects.as_deref() {
                None => return self.failed(hook, "Webhook SideEffects is nil".into()),
                Some("None" | "NoneOnDryRun") => {}
                Some(_) => {
                    return Err(ApiError::bad_request(format!(
                        "admission webhook {:?} does not support dry run",
                        hook.name
                    )));
                }
            }
        }
        let Some(version) = crate::schema::webhook_client::first_recognized(&hook.review_versions) else {
            let why = "could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)";
            return self.failed(hook, why.into());
        };
        let uid = crate::meta::new_uid();
        // A validated update's object has the resourceVersion it was read at.
        let shown;
        let obj = match (obj, old) {
            (Some(o), Some(old)) if crate::meta::resource_version(o).is_none() => {
                let mut o = o.clone();
                if let Some(rv) = crate::meta::resource_version(old) {
                    crate::meta::metadata_mut(&mut o).insert("resourceVersion".into(), Value::from(rv));
                }
                shown = o;
                Some(&shown)
            }
            _ => obj,
        };
        let asked = self.asked(attrs, called, obj, old);
        let body = serde_json::to_vec(&review::request(version, &uid, &asked)).unwrap_or_default();
        let timeout = Duration::from_secs(hook.timeout_seconds);
        let answer = match &hook.target {
            Target::Service { namespace, name, path, port } => {
                Err(http_call::unreachable_service(namespace, name, path, *port, timeout))
            }
            Target::Url { url, ca_bundle } => match self.client(url, ca_bundle.as_deref()) {
                Ok(client) => {
                    http_call::call(
                        client,
                        http_call::with_timeout(url, timeout),
                        body,
                        http_call::Deadline::Context(timeout),
                    )
                    .await
                }
                Err(why) => Err(why),
            },
        };
        let answer = match answer {
            Ok(answer) => answer,
            Err(why) => return self.failed(hook, format!("failed to call webhook: {why}")),
        };
        match review::verdict(version, &uid, mutating, &answer) {
            Ok(verdict) => Ok(Some(verdict)),
            Err(why) => self.failed(hook, format!("received invalid webhook response: {why}")),
        }
    }

    /// A webhook that could not be used: passed over when it fails open, else kube's 500.
    fn failed<T>(&self, hook: &Hook, why: String) -> Result<Option<T>, ApiError> {
        if hook.fail_open { Ok(None) } else { Err(review::calling_failed(&hook.name, &why)) }
    }

    fn client(&self, url: &str, ca_bundle: Option<&[u8]>) -> Result<HttpsClient, String> {
        let mut clients = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        let key = (url.to_string(), ca_bundle.map(<[u8]>::to_vec));
        clients.entry(key).or_insert_with(|| http_call::client(ca_bundle)).clone()
    }

    /// One round of the mutating webhooks over `obj`: calls those `only` names (all when
    /// `None`); says which were called that may be called again, and which of those a
    /// later change asks to call again.
    async fn mutate_round(
        &self,
        hooks: &[&Hook],
        only: Option<&HashSet<usize>>,
        attrs: &Attributes<'_>,
        obj: &mut Option<&mut Value>,
        old: Option<&Value>,
    ) -> Result<(bool, HashSet<usize>), ApiError> {
        let (mut changed_any, mut invoked, mut again) = (false, HashSet::new(), HashSet::new());
        for (i, hook) in hooks.iter().enumerate() {
            if only.is_some_and(|o| !o.contains(&i)) {
                continue;
            }
            let changed = match self.takes(hook, attrs, obj.as_deref(), old).await? {
                None => continue,
                Some(Called::Own) => match self.ask(hook, true, attrs, attrs.info, obj.as_deref(), old).await? {
                    Some(verdict) => self.apply_verdict(hook, verdict, attrs, obj)?,
                    None => false,
                },
                Some(Called::Equivalent(kind)) => self.mutate_at(hook, &kind, attrs, obj, old).await?,
            };
            if changed {
                changed_any = true;
                again = invoked.clone();
            }
            if hook.reinvoke {
                invoked.insert(i);
            }
        }
        Ok((changed_any, again))
    }

    /// A mutating webhook called at another version than requested: on the objects at
    /// its version, its change converted back.
    async fn mutate_at(
        &self,
        hook: &Hook,
        kind: &ServedKind,
        attrs: &Attributes<'_>,
        obj: &mut Option<&mut Value>,
        old: Option<&Value>,
    ) -> Result<bool, ApiError> {
        let mut view = obj.as_deref().map(|o| self.view_at(kind, attrs, o)).transpose()?;
        let old_view = old.map(|o| self.view_at(kind, attrs, o)).transpose()?;
        let Some(verdict) = self.ask(hook, true, attrs, kind.info(), view.as_ref(), old_view.as_ref()).await? else {
            return Ok(false);
        };
        if !self.apply_verdict(hook, verdict, attrs, &mut view.as_mut())? {
            return Ok(false);
        }
        let info = attrs.info;
        let requested = self.kinds.find(&info.group, &info.version, &info.plural);
        if let (Some(target), Some(view), Some(requested)) = (obj.as_deref_mut(), view, requested) {
            *target = self.view_at(&requested, attrs, &view)?;
        }
        Ok(true)
    }

    /// `obj` as a webhook called at `kind`'s version sees it: converted there, unless it is
    /// no object of the resource (a Scale is the same at every version).
    fn view_at(&self, kind: &ServedKind, attrs: &Attributes<'_>, obj: &Value) -> Result<Value, ApiError> {
        match attrs.object_kind {
            Some(_) => Ok(obj.clone()),
            None => kind.strategy.codec().to_served(obj.clone()),
        }
    }

    /// A mutating webhook's verdict: its warnings, its refusal, or its patch applied.
    fn apply_verdict(
        &self,
        hook: &Hook,
        verdict: review::Verdict,
        attrs: &Attributes<'_>,
        obj: &mut Option<&mut Value>,
    ) -> Result<bool, ApiError> {
        verdict.warnings.into_iter().for_each(|w| attrs.opts.warn(w));
        if !verdict.allowed {
            return Err(review::denied(&hook.name, verdict.result.as_ref()));
        }
        let Some(patch) = verdict.patch else { return Ok(false) };
        let ops: Vec<Value> = serde_json::from_slice(&patch).map_err(|e| ApiError::internal(e.to_string()))?;
        if ops.is_empty() {
            return Ok(false);
        }
        let Some(target) = obj.as_deref_mut() else {
            return Err(ApiError::internal(format!(
                "admission webhook {:?} attempted to modify the object, which is not supported for this operation",
                hook.name
            )));
        };
        let (patched, _) =
            jsonpatch::apply_strictly(target, &patch, false).map_err(|e| ApiError::internal(e.to_string()))?;
        let changed = patched != *target;
        *target = patched;
        Ok(changed)
    }
}

#[async_trait]
impl Admission for Webhooks {
    async fn mutate(
        &self,
        attrs: &Attributes<'_>,
        mut obj: Option<&mut Value>,
        old: Option<&Value>,
    ) -> Result<bool, ApiError> {
        if matching::exempt(&attrs.info.group, &attrs.info.kind) {
            return Ok(false);
        }
        let configurations = self.stored(Hooks::Mutating).await?;
        let hooks: Vec<&Hook> = configurations.iter().flat_map(|c| c.iter()).collect();
        if hooks.is_empty() {
            return Ok(false);
        }
        let (changed, again) = self.mutate_round(&hooks, None, attrs, &mut obj, old).await?;
        // kube's admission chain runs the mutating webhooks a second time when one changed
        // the object, calling only those that may be reinvoked and were called before it.
        if changed && !again.is_empty() {
            self.mutate_round(&hooks, Some(&again), attrs, &mut obj, old).await?;
        }
        Ok(changed)
    }

    async fn validate(&self, attrs: &Attributes<'_>, obj: Option<&Value>, old: Option<&Value>) -> Result<(), ApiError> {
        if matching::exempt(&attrs.info.group, &attrs.info.kind) {
            return Ok(());
        }
        let configurations = self.stored(Hooks::Validating).await?;
        let hooks = configurations.iter().flat_map(|c| c.iter());
        // Each webhook with the objects at the version it is called at.
        let mut calls = Vec::new();
        for hook in hooks {
            match self.takes(hook, attrs, obj, old).await? {
                None => {}
                Some(Called::Own) => calls.push((hook, attrs.info.clone(), obj.cloned(), old.cloned())),
                Some(Called::Equivalent(kind)) => {
                    let view = obj.map(|o| self.view_at(&kind, attrs, o)).transpose()?;
                    let old_view = old.map(|o| self.view_at(&kind, attrs, o)).transpose()?;
                    calls.push((hook, kind.info().clone(), view, old_view));
                }
            }
        }
        let asks =
            calls.iter().map(|(hook, info, o, old)| self.ask(hook, false, attrs, info, o.as_ref(), old.as_ref()));
        let verdicts = futures::future::join_all(asks).await;
        let mut first = None;
        for ((hook, ..), verdict) in calls.iter().zip(verdicts) {
            match verdict {
                Ok(Some(verdict)) => {
                    verdict.warnings.iter().for_each(|w| attrs.opts.warn(w.clone()));
                    if !verdict.allowed {
                        first.get_or_insert_with(|| review::denied(&hook.name, verdict.result.as_ref()));
                    }
                }
                Ok(None) => {}
                Err(e) => {
                    first.get_or_insert(e);
                }
            }
        }
        first.map_or(Ok(()), Err)
    }
}
