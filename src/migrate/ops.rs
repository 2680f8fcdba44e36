//! The cluster operations a migration needs beyond [`crate::cluster`]'s: whole-kind lists
//! as JSON, the scan for dependents of any served kind, deletes that orphan dependents and
//! only take the object that was backed up (uid and resourceVersion preconditions), waits
//! for objects and registrations to be gone, CRDs created and removed, namespaces made
//! sure of, owner references rewritten, and controllers scaled through `/scale`.
//!
//! Everything speaks through `kube::Client` and answers with [`ClusterError`]s, or
//! [`MigrateError`]s where a wait or a refusal is the outcome.

use super::MigrateError;
use super::journal::{Controller, Dependent, ResourceRecord};
use super::model::{ORPHAN_FINALIZER, ObjectKey};
use crate::cluster::objects::{ObjectRef, get_scale, list_objects, set_scale};
use crate::cluster::registrations::{Crd, Establishment, wait_for_established};
use crate::cluster::{ClusterError, Discovery, ResourceType};
use futures::StreamExt;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{
    Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams, Preconditions, PropagationPolicy,
};
use serde_json::{Value, json};
use std::collections::{BTreeSet, HashSet};
use std::time::Duration;

/// The field manager of every write a migration makes.
pub const FIELD_MANAGER: &str = "kubectl-crd-migrate";
/// Requests in flight at once for per-object work.
pub const CONCURRENCY: usize = 48;
/// Page size of lists.
const PAGE: u32 = 500;

fn other(e: impl std::fmt::Display) -> ClusterError {
    ClusterError::Other(e.to_string())
}

fn to_value(obj: &impl serde::Serialize) -> Result<Value, ClusterError> {
    serde_json::to_value(obj).map_err(other)
}

fn to_dynamic(obj: &Value) -> Result<DynamicObject, ClusterError> {
    serde_json::from_value(obj.clone()).map_err(|e| other(format!("not an object: {e}")))
}

fn at<'a>(res: &'a ResourceType, key: &'a ObjectKey) -> ObjectRef<'a> {
    ObjectRef::new(res, key.ns(), &key.name)
}

fn post_params(dry_run: bool) -> PostParams {
    PostParams { dry_run, field_manager: Some(FIELD_MANAGER.into()) }
}

/// Every object of `res` in every namespace, as JSON. A kind that is not served (its CRD
/// is gone) has none.
pub async fn list_all(client: &kube::Client, res: &ResourceType) -> Result<Vec<Value>, ClusterError> {
    match list_objects(client, res, None, None).await {
        Ok(items) => items.iter().map(to_value).collect(),
        Err(e) if e.is_not_found() => Ok(vec![]),
        Err(e) => Err(e),
    }
}

/// Every object of `res` in every namespace, a page at a time, telling `progress` how many
/// have been read and how many there are (from the first page's `remainingItemCount`,
/// when the server gives it).
pub async fn list_with_progress(
    client: &kube::Client,
    res: &ResourceType,
    mut progress: impl FnMut(u64, Option<u64>),
) -> Result<Vec<Value>, ClusterError> {
    let api = res.api(client, None);
    let mut params = ListParams::default().limit(PAGE);
    let mut out = Vec::new();
    let mut total = None;
    loop {
        let page = match api.list(&params).await {
            Ok(page) => page,
            Err(e) => {
                let e = ClusterError::from_kube(e, None);
                return if e.is_not_found() { Ok(out) } else { Err(e) };
            }
        };
        if total.is_none() {
            total = page.metadata.remaining_item_count.map(|r| page.items.len() as u64 + u64::try_from(r).unwrap_or(0));
        }
        for item in &page.items {
            out.push(to_value(item)?);
        }
        progress(out.len() as u64, total);
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => return Ok(out),
        }
    }
}

/// One object, if it exists.
pub async fn get(client: &kube::Client, res: &ResourceType, key: &ObjectKey) -> Result<Option<Value>, ClusterError> {
    let r = at(res, key);
    match res.api(client, Some(key.ns())).get_opt(&key.name).await {
        Ok(Some(obj)) => Ok(Some(to_value(&obj)?)),
        Ok(None) => Ok(None),
        Err(e) => {
            let e = r.error(e);
            if e.is_not_found() { Ok(None) } else { Err(e) }
        }
    }
}

/// Creates `obj` (or only checks it, with `dry_run`); answers with what the server stored
/// (or would store).
pub async fn create(
    client: &kube::Client,
    res: &ResourceType,
    obj: &Value,
    dry_run: bool,
) -> Result<Value, ClusterError> {
    let key = ObjectKey::of(obj);
    let created = res
        .api(client, Some(key.ns()))
        .create(&post_params(dry_run), &to_dynamic(obj)?)
        .await
        .map_err(|e| at(res, &key).error(e))?;
    to_value(&created)
}

/// Writes `status` through `/status` onto `current` (the object as last read).
pub async fn put_status(
    client: &kube::Client,
    res: &ResourceType,
    current: &Value,
    status: &Value,
) -> Result<Value, ClusterError> {
    let key = ObjectKey::of(current);
    let mut obj = current.clone();
    obj["status"] = status.clone();
    let written = res
        .api(client, Some(key.ns()))
        .replace_status(&key.name, &post_params(false), &to_dynamic(&obj)?)
        .await
        .map_err(|e| at(res, &key).error(e))?;
    to_value(&written)
}

/// Merge-patches `patch` onto an object.
pub async fn merge_patch(
    client: &kube::Client,
    res: &ResourceType,
    key: &ObjectKey,
    patch: &Value,
) -> Result<Value, ClusterError> {
    let params = PatchParams { field_manager: Some(FIELD_MANAGER.into()), ..Default::default() };
    let patched = res
        .api(client, Some(key.ns()))
        .patch(&key.name, &params, &Patch::Merge(patch))
        .await
        .map_err(|e| at(res, key).error(e))?;
    to_value(&patched)
}

/// Sets an object's ownerReferences, if it still is at `resource_version`.
pub async fn set_owner_refs(
    client: &kube::Client,
    res: &ResourceType,
    key: &ObjectKey,
    resource_version: &str,
    refs: &[Value],
) -> Result<Value, ClusterError> {
    let refs = if refs.is_empty() { Value::Null } else { Value::Array(refs.to_vec()) };
    merge_patch(client, res, key, &json!({"metadata": {"ownerReferences": refs, "resourceVersion": resource_version}}))
        .await
}

/// Deletes the object `current` (as last read) with `propagationPolicy=Orphan`, so its
/// dependents lose the reference instead of being collected. Finalizers other than
/// `orphan` are removed first: the controllers that would clear them are stopped, and the
/// object lives on under its new kind with them. The delete carries the uid and
/// resourceVersion read as preconditions, so an object someone changed meanwhile is not
/// taken (409). An object already gone is fine.
pub async fn delete_orphaning(client: &kube::Client, res: &ResourceType, current: &Value) -> Result<(), ClusterError> {
    let key = ObjectKey::of(current);
    let mut rv = current.pointer("/metadata/resourceVersion").and_then(Value::as_str).unwrap_or_default().to_string();
    let finalizers: Vec<&str> = current
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .map(|f| f.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if finalizers.iter().any(|f| *f != ORPHAN_FINALIZER) {
        let keep: Vec<&str> = finalizers.iter().copied().filter(|f| *f == ORPHAN_FINALIZER).collect();
        let keep = if keep.is_empty() { Value::Null } else { json!(keep) };
        let patch = json!({"metadata": {"finalizers": keep, "resourceVersion": rv}});
        match merge_patch(client, res, &key, &patch).await {
            Ok(patched) => {
                rv = patched
                    .pointer("/metadata/resourceVersion")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
            }
            Err(e) if e.is_not_found() => return Ok(()),
            Err(e) => return Err(e),
        }
    }
    let params = DeleteParams {
        propagation_policy: Some(PropagationPolicy::Orphan),
        preconditions: Some(Preconditions {
            uid: Some(super::model::uid(current).to_string()).filter(|u| !u.is_empty()),
            resource_version: Some(rv).filter(|r| !r.is_empty()),
        }),
        ..Default::default()
    };
    match res.api(client, Some(key.ns())).delete(&key.name, &params).await {
        Ok(_) => Ok(()),
        Err(e) => {
            let e = at(res, &key).error(e);
            if e.is_not_found() { Ok(()) } else { Err(e) }
        }
    }
}

/// How many of `uids` are still listed under `res`.
pub async fn count_present(
    client: &kube::Client,
    res: &ResourceType,
    uids: &HashSet<String>,
) -> Result<usize, ClusterError> {
    let api = res.api(client, None);
    let mut params = ListParams::default().limit(PAGE);
    let mut n = 0;
    loop {
        let page = match api.list_metadata(&params).await {
            Ok(page) => page,
            Err(e) => {
                let e = ClusterError::from_kube(e, None);
                return if e.is_not_found() { Ok(0) } else { Err(e) };
            }
        };
        n += page.items.iter().filter(|m| m.metadata.uid.as_ref().is_some_and(|u| uids.contains(u))).count();
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => return Ok(n),
        }
    }
}

/// How many objects `res` holds, from a one-item list (`remainingItemCount`); `None` when
/// the server does not say.
async fn count_all(client: &kube::Client, res: &ResourceType) -> Result<Option<usize>, ClusterError> {
    match res.api(client, None).list_metadata(&ListParams::default().limit(1)).await {
        Ok(page) => Ok(crate::cluster::counts::known_count(page.items.len(), &page.metadata)
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX))),
        Err(e) => {
            let e = ClusterError::from_kube(e, None);
            if e.is_not_found() { Ok(Some(0)) } else { Err(e) }
        }
    }
}

/// Waits until none of `uids` is listed under `res` (the garbage collector has orphaned
/// their dependents and let them go). `others` is how many other objects `res` held when
/// the deletes began: while the kind holds more than that, ours are not all gone, which a
/// one-item list tells without listing everything (a full list each time would compete
/// with the garbage collector for the server).
pub async fn wait_gone(
    client: &kube::Client,
    res: &ResourceType,
    uids: &HashSet<String>,
    others: usize,
    timeout: Duration,
) -> Result<(), MigrateError> {
    let deadline = tokio::time::Instant::now() + timeout;
    let mut pause = Duration::from_millis(20);
    for poll in 0u32.. {
        // Now and then a full look, in case objects were added meanwhile.
        let cheap = if poll % 8 == 7 { None } else { count_all(client, res).await? };
        let left = match cheap {
            Some(total) if total > others => total - others,
            _ => count_present(client, res, uids).await?,
        };
        if left == 0 {
            return Ok(());
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(MigrateError::Timeout {
                what: format!("the deletion of {left} {} (orphaning their dependents)", res.qualified_name()),
                secs: timeout.as_secs(),
            });
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(500));
    }
    Ok(())
}

fn crd_api(client: &kube::Client) -> Api<Crd> {
    Api::all(client.clone())
}

fn crd_error(name: &str) -> impl Fn(kube::Error) -> ClusterError + '_ {
    move |e| ClusterError::from_kube(e, Some(("customresourcedefinitions.apiextensions.k8s.io", name, None)))
}

/// A CRD by name, if it exists.
pub async fn get_crd(client: &kube::Client, name: &str) -> Result<Option<Crd>, ClusterError> {
    crd_api(client).get_opt(name).await.map_err(crd_error(name))
}

/// Creates a CRD (or only checks it, with `dry_run`).
pub async fn create_crd(client: &kube::Client, doc: &Value, dry_run: bool) -> Result<Crd, ClusterError> {
    let crd: Crd = serde_json::from_value(doc.clone()).map_err(|e| other(format!("not a CRD: {e}")))?;
    let name = crd.metadata.name.clone().unwrap_or_default();
    crd_api(client).create(&post_params(dry_run), &crd).await.map_err(crd_error(&name))
}

/// Makes sure the CRD of `doc` exists and is Established. A CRD whose names are refused
/// (`NamesAccepted=False`) is a refusal. Answers whether this call created it.
pub async fn ensure_crd(client: &kube::Client, doc: &Value, timeout: Duration) -> Result<(Crd, bool), MigrateError> {
    let name = doc.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default().to_string();
    let mut created = false;
    if get_crd(client, &name).await?.is_none() {
        match create_crd(client, doc, false).await {
            Ok(_) => created = true,
            Err(ClusterError::AlreadyExists { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    match wait_for_established(client, &name, timeout).await? {
        Establishment::Established => {}
        Establishment::NamesNotAccepted { reason, message } => {
            return Err(MigrateError::refused(format!(
                "the CustomResourceDefinition {name} was created but its names were not accepted ({reason}: {message})"
            )));
        }
    }
    let crd = get_crd(client, &name).await?.ok_or_else(|| other(format!("{name} disappeared")))?;
    wait_served(client, &crd, timeout).await?;
    Ok((crd, created))
}

/// Waits until the CRD's resources answer a list: `Established` can come a moment before
/// the endpoint serves.
async fn wait_served(client: &kube::Client, crd: &Crd, timeout: Duration) -> Result<(), MigrateError> {
    let Some(version) = crd.spec.versions.iter().find(|v| v.served).map(|v| v.name.clone()) else { return Ok(()) };
    let ar = kube::api::ApiResource {
        group: crd.spec.group.clone(),
        version: version.clone(),
        api_version: format!("{}/{version}", crd.spec.group),
        kind: crd.spec.names.kind.clone(),
        plural: crd.spec.names.plural.clone(),
    };
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &ar);
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        match api.list_metadata(&ListParams::default().limit(1)).await {
            Ok(_) => return Ok(()),
            Err(e) => {
                let e = ClusterError::from_kube(e, None);
                if !e.is_not_found() {
                    return Err(e.into());
                }
            }
        }
        if tokio::time::Instant::now() >= deadline {
            let name = crd.metadata.name.clone().unwrap_or_default();
            return Err(MigrateError::Timeout {
                what: format!("customresourcedefinition {name} serving its resources"),
                secs: timeout.as_secs(),
            });
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Deletes the CRD `name` (only if its uid is `uid`, when given) and waits until it is
/// gone. Its custom resources must be gone already: the CRD's clean-up would delete any
/// left, collecting their dependents.
pub async fn delete_crd(
    client: &kube::Client,
    name: &str,
    uid: Option<&str>,
    timeout: Duration,
) -> Result<(), MigrateError> {
    let still_there = |crd: &Crd| uid.is_none_or(|u| crd.metadata.uid.as_deref() == Some(u));
    let Some(crd) = get_crd(client, name).await? else { return Ok(()) };
    if !still_there(&crd) {
        return Ok(());
    }
    if crd.metadata.deletion_timestamp.is_none() {
        let params = DeleteParams {
            preconditions: Some(Preconditions { uid: crd.metadata.uid.clone(), resource_version: None }),
            ..Default::default()
        };
        match crd_api(client).delete(name, &params).await.map_err(crd_error(name)) {
            Ok(_) => {}
            Err(e) if e.is_not_found() => return Ok(()),
            Err(e) => return Err(e.into()),
        }
    }
    let deadline = tokio::time::Instant::now() + timeout;
    let mut pause = Duration::from_millis(20);
    loop {
        match get_crd(client, name).await? {
            Some(crd) if still_there(&crd) => {}
            _ => return Ok(()),
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(MigrateError::Timeout {
                what: format!("the deletion of customresourcedefinition {name}"),
                secs: timeout.as_secs(),
            });
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(500));
    }
}

/// Namespaces among `names` that do not exist.
pub async fn missing_namespaces(client: &kube::Client, names: &BTreeSet<String>) -> Result<Vec<String>, ClusterError> {
    let api: Api<Namespace> = Api::all(client.clone());
    let mut missing = Vec::new();
    for name in names {
        if api.get_opt(name).await.map_err(|e| ClusterError::from_kube(e, None))?.is_none() {
            missing.push(name.clone());
        }
    }
    Ok(missing)
}

/// Creates the namespaces among `names` that do not exist; answers which it created.
pub async fn ensure_namespaces(client: &kube::Client, names: &BTreeSet<String>) -> Result<Vec<String>, ClusterError> {
    let api: Api<Namespace> = Api::all(client.clone());
    let missing = missing_namespaces(client, names).await?;
    for name in &missing {
        let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": name}})).map_err(other)?;
        match api.create(&post_params(false), &ns).await.map_err(|e| ClusterError::from_kube(e, None)) {
            Ok(_) | Err(ClusterError::AlreadyExists { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(missing)
}

/// What a scan for dependents found.
#[derive(Debug, Clone, Default)]
pub struct Scan {
    pub dependents: Vec<Dependent>,
    /// Resource types that could not be listed, with why: their objects were not checked.
    pub unchecked: Vec<String>,
}

/// Objects of every listable kind the server serves (preferred versions; `skip`: the
/// migrated kinds, whose own links the backup holds) whose ownerReferences name one of
/// `owners`. Read with metadata-only lists.
pub async fn find_dependents(
    client: &kube::Client,
    discovery: &Discovery,
    owners: &HashSet<String>,
    skip: &[(String, String)],
) -> Scan {
    let mut seen = HashSet::new();
    let types: Vec<&ResourceType> = discovery
        .resources()
        .iter()
        .filter(|r| r.preferred && r.verbs.iter().any(|v| v == "list"))
        .filter(|r| !skip.iter().any(|(g, p)| *g == r.group && *p == r.plural))
        .filter(|r| seen.insert((r.group.clone(), r.plural.clone())))
        .collect();
    let results: Vec<(&ResourceType, Result<Vec<Dependent>, ClusterError>)> = futures::stream::iter(
        types.into_iter().map(|r| async move { (r, dependents_of_type(client, r, owners).await) }),
    )
    .buffer_unordered(4)
    .collect()
    .await;
    let mut scan = Scan::default();
    for (r, result) in results {
        match result {
            Ok(found) => scan.dependents.extend(found),
            Err(e) => scan.unchecked.push(format!("{}: {e}", r.qualified_name())),
        }
    }
    scan.dependents.sort_by(|a, b| {
        (&a.group, &a.plural, &a.namespace, &a.name).cmp(&(&b.group, &b.plural, &b.namespace, &b.name))
    });
    scan.unchecked.sort();
    scan
}

async fn dependents_of_type(
    client: &kube::Client,
    r: &ResourceType,
    owners: &HashSet<String>,
) -> Result<Vec<Dependent>, ClusterError> {
    let api = r.api(client, None);
    let mut params = ListParams::default().limit(PAGE);
    let mut out = Vec::new();
    loop {
        let page = api.list_metadata(&params).await.map_err(|e| ClusterError::from_kube(e, None))?;
        for item in page.items {
            let m = item.metadata;
            let refs = m.owner_references.unwrap_or_default();
            if !refs.iter().any(|o| owners.contains(&o.uid)) {
                continue;
            }
            out.push(Dependent {
                group: r.group.clone(),
                version: r.version.clone(),
                kind: r.kind.clone(),
                plural: r.plural.clone(),
                namespaced: r.namespaced,
                namespace: m.namespace.filter(|n| !n.is_empty()),
                name: m.name.unwrap_or_default(),
                uid: m.uid.unwrap_or_default(),
                owner_references: refs.iter().map(to_value).collect::<Result<_, _>>()?,
            });
        }
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => return Ok(out),
        }
    }
}

/// How a controller is written: the reason [`parse_controller`] gives.
const CONTROLLER_SYNTAX: &str = "write NAMESPACE/DEPLOYMENT or NAMESPACE/RESOURCE/NAME";

/// The syntax of a controller to stop (`--controller`, the wizard's Controllers field):
/// `NS/DEPLOYMENT` or `NS/RESOURCE/NAME`, as `(namespace, resource, name)` — the resource
/// `None` for a Deployment. Checked without the cluster; [`resolve_controller`] then finds
/// the resource and its `/scale`.
pub fn parse_controller(spec: &str) -> Result<(&str, Option<&str>, &str), &'static str> {
    let (namespace, resource, name) = match spec.split('/').collect::<Vec<_>>().as_slice() {
        [ns, name] => (*ns, None, *name),
        [ns, resource, name] => (*ns, Some(*resource), *name),
        _ => return Err(CONTROLLER_SYNTAX),
    };
    if namespace.is_empty() || name.is_empty() || resource == Some("") {
        return Err(CONTROLLER_SYNTAX);
    }
    Ok((namespace, resource, name))
}

/// Resolves `--controller`: `NS/DEPLOYMENT` (apps/v1 Deployment) or `NS/RESOURCE/NAME`
/// (any resource served with `/scale`, such as a custom resource that stands for a
/// controller on the local engine, which has no Deployments).
pub fn resolve_controller(spec: &str, discovery: &Discovery) -> Result<Controller, MigrateError> {
    let invalid = |reason: String| MigrateError::input("--controller", spec, reason);
    let (namespace, named, name) = parse_controller(spec).map_err(|e| invalid(e.into()))?;
    let resource = named.unwrap_or("deployments.apps");
    let r = discovery.resolve(resource).map_err(|_| {
        if named.is_none() {
            invalid("this cluster serves no Deployments (the local engine has none); name a resource with a /scale subresource as NAMESPACE/RESOURCE/NAME".into())
        } else {
            invalid(format!("the server doesn't have a resource type {resource:?}"))
        }
    })?;
    if !r.scale {
        return Err(invalid(format!("{} has no /scale subresource, so it cannot be scaled to 0", r.qualified_name())));
    }
    Ok(Controller {
        spec: spec.to_string(),
        resource: ResourceRecord::of(r),
        namespace: namespace.into(),
        name: name.into(),
        replicas: None,
    })
}

/// A controller's desired replicas.
pub async fn controller_replicas(client: &kube::Client, c: &Controller) -> Result<i32, ClusterError> {
    let res = c.resource.resource();
    let (_, view) = get_scale(client, ObjectRef::new(&res, &c.namespace, &c.name)).await?;
    Ok(view.desired)
}

/// Sets a controller's replicas through `/scale`.
pub async fn scale_controller(client: &kube::Client, c: &Controller, replicas: i32) -> Result<(), ClusterError> {
    let res = c.resource.resource();
    set_scale(client, ObjectRef::new(&res, &c.namespace, &c.name), replicas, None, false).await.map(|_| ())
}

/// For Deployments, waits until no pod is left running (`status.replicas` 0): only then
/// has the controller stopped. Other resources have no such status to wait on.
pub async fn wait_scaled_down(client: &kube::Client, c: &Controller, timeout: Duration) -> Result<(), MigrateError> {
    if !(c.resource.group == "apps" && c.resource.kind == "Deployment") {
        return Ok(());
    }
    let deadline = tokio::time::Instant::now() + timeout;
    let res = c.resource.resource();
    loop {
        let (_, view) = get_scale(client, ObjectRef::new(&res, &c.namespace, &c.name)).await?;
        if view.current == 0 {
            return Ok(());
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(MigrateError::Timeout {
                what: format!("controller {} stopping its {} pods", c.spec, view.current),
                secs: timeout.as_secs(),
            });
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}
