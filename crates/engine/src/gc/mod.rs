//! The garbage collector and the namespace controller: what kube-controller-manager does
//! for a real cluster, run inside the engine because the engine is the whole cluster.
//!
//! One loop keeps a graph of the stored objects' owner references ([`graph`]: built from a
//! full list, then kept current from a watch of everything) and, after each change,
//! settles the owners and namespaces the change touched ([`decide`]):
//! - an owner that is gone: dependents whose owners are all gone are deleted
//!   (background propagation), the others lose the dangling reference. As in kube, an
//!   owner is where its reference says (its kind and name, in the dependent's namespace
//!   for a namespaced kind) holding the referenced uid, so a reference to another
//!   namespace's object dangles from the start;
//! - an owner deleted with `propagationPolicy=Orphan`: its dependents lose the reference,
//!   then the `orphan` finalizer is cleared;
//! - an owner deleted with `Foreground`: its dependents are deleted, and once none is
//!   left the `foregroundDeletion` finalizer is cleared;
//! - a namespace being deleted: everything in it is deleted, then its
//!   `spec.finalizers` are cleared and it goes.
//!
//! Every decision is re-made from the graph (and, for a namespace, its content as listed
//! then), so a restart simply resumes.
//!
//! The graph is made of persistent maps, so the collector publishes it after every change
//! it applies at O(1) cost ([`GraphAt`]); an engine snapshot carries the graph at its
//! revision, and the collector of an engine forked from it starts from that graph instead
//! of parsing every object again.

mod decide;
mod events;
mod graph;
mod namespace_conditions;
mod uids;

pub use graph::GraphAt;

use crate::kinds::Kinds;
use crate::meta;
use crate::resources::generate_name::RANDOM;
use crate::resources::rest::{DeleteOptions, Rest, WriteOptions};
use crate::store::{ListOptions, Revision, Store, StoreError};
use decide::{Action, Content, Locate, Whereabouts};
use futures::{FutureExt as _, StreamExt};
use graph::Coordinates;
use graph::{Dirty, Graph, NAMESPACES, Parsed, ROOT};
use k8s_openapi::jiff::Timestamp;
use serde_json::Value;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::Arc;

/// How many objects the collector writes at once.
const CONCURRENCY: usize = 64;
/// How many objects of a namespace being deleted are read at once.
const CONTENT_PAGE: usize = 500;

/// Where the collector publishes its graph after every change it applies.
pub type Published = tokio::sync::watch::Sender<Option<GraphAt>>;

/// Why the collector builds its graph again from a list.
#[derive(Debug, thiserror::Error)]
enum Restart {
    /// It fell behind the history, or the store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Untraceable(#[from] graph::Untraceable),
}

/// Runs the collector until the store closes, starting from `start` (a snapshot's graph,
/// at the store's revision) when given, and publishing its graph to `published`.
pub async fn run(store: Arc<dyn Store>, kinds: Arc<Kinds>, mut start: Option<GraphAt>, published: Published) {
    loop {
        match run_once(store.as_ref(), &kinds, start.take(), &published).await {
            Ok(()) | Err(Restart::Store(StoreError::Closed)) => return,
            Err(e) => {
                tracing::debug!("garbage collector restarts: {e}");
                if matches!(e, Restart::Store(StoreError::Unavailable(_))) {
                    // etcd is down: wait for it instead of spinning on refused connections.
                    tokio::time::sleep(crate::store::RETRY_PAUSE).await;
                }
            }
        }
    }
}

async fn run_once(
    store: &dyn Store,
    kinds: &Kinds,
    start: Option<GraphAt>,
    published: &Published,
) -> Result<(), Restart> {
    let (mut graph, mut dirty, mut revision) = match start {
        Some(GraphAt { graph, revision }) => {
            let dirty = graph.all_dirty();
            (graph, dirty, revision)
        }
        None => build(store).await?,
    };
    let mut changes = store.watch(ROOT, revision).await?;
    loop {
        published.send_replace(Some(GraphAt { graph: graph.clone(), revision }));
        settle(store, kinds, &graph, std::mem::take(&mut dirty)).await?;
        let Some(event) = changes.next().await else { return Ok(()) };
        // The watches the same change woke go first: clients wait on them, and nothing
        // here is urgent (kube's collector works from a queue too).
        tokio::task::yield_now().await;
        let event = event?;
        graph.apply(&event.key, event.prev.as_ref(), event.current.as_ref(), &mut dirty)?;
        revision = event.revision;
        // Take whatever else is already waiting before acting, so a burst settles once;
        // publishing the graph at each revision, so a snapshot at any of them finds it.
        while let Some(Some(more)) = changes.next().now_or_never() {
            published.send_replace(Some(GraphAt { graph: graph.clone(), revision }));
            let more = more?;
            graph.apply(&more.key, more.prev.as_ref(), more.current.as_ref(), &mut dirty)?;
            revision = more.revision;
        }
    }
}

/// The graph of every stored object, from a list, with everything it found to settle.
async fn build(store: &dyn Store) -> Result<(Graph, Dirty, Revision), Restart> {
    let mut graph = Graph::default();
    let mut dirty = Dirty::default();
    let mut opts = ListOptions::default();
    loop {
        let page = store.list(ROOT, &opts).await?;
        for kv in &page.items {
            graph.apply(&kv.key, None, Some(kv), &mut dirty)?;
        }
        opts.revision = Some(page.revision);
        match page.next_key {
            Some(next) => opts.start_key = Some(next),
            None => return Ok((graph, dirty, page.revision)),
        }
    }
}

/// Decides and carries out what the dirty owners and namespaces need. Only a failed read
/// of a namespace's content is an error (nothing else would bring the namespace back);
/// a failed write is left to the change that caused it, which comes through the watch.
async fn settle(store: &dyn Store, kinds: &Kinds, graph: &Graph, dirty: Dirty) -> Result<(), StoreError> {
    let mut actions: Vec<Action> = Vec::new();
    {
        let locate = ServedKinds { kinds, found: RefCell::default() };
        for key in &dirty.dependents {
            actions.extend(decide::settle_dependent(graph, key, &locate));
        }
        for uid in &dirty.owners {
            actions.extend(decide::settle_owner(graph, uid, &locate));
        }
    }
    for name in &dirty.namespaces {
        if let Some((key, namespace)) = graph.deleting_namespace(name) {
            let content = namespace_content(store, graph, name).await?;
            actions.extend(decide::settle_namespace(&key, namespace, &content));
        }
    }
    // A written dependent of a gone owner is settled from both sides: each action once.
    let mut seen = std::collections::HashSet::new();
    actions.retain(|action| seen.insert(action.clone()));
    // Actions on different objects are independent (an owner's finalizer is cleared only
    // in a later pass, once the graph shows its dependents released), so they run
    // together and their writes share group commits; those on one object stay in order.
    let mut by_key: BTreeMap<&str, Vec<&Action>> = BTreeMap::new();
    for action in &actions {
        by_key.entry(action.key()).or_default().push(action);
    }
    futures::stream::iter(by_key.into_values())
        .for_each_concurrent(CONCURRENCY, |group| async move {
            for action in group {
                if let Err(e) = carry_out(store, kinds, action).await {
                    // A conflict or a vanished object: the change that caused it comes
                    // through the watch and the decision is made again.
                    tracing::debug!("garbage collector: {action:?}: {e}");
                }
            }
        })
        .await;
    Ok(())
}

/// An owner reference's `(apiVersion, kind)`.
type KindId = (Arc<str>, Arc<str>);

/// The kinds served now, as one settling pass looks owners up (each kind found once).
struct ServedKinds<'a> {
    kinds: &'a Kinds,
    found: RefCell<BTreeMap<KindId, Option<crate::resources::ResourceInfo>>>,
}

impl Locate for ServedKinds<'_> {
    fn locate(&self, reference: &Coordinates, namespace: Option<&str>) -> Whereabouts {
        let id = (Arc::clone(&reference.api_version), Arc::clone(&reference.kind));
        let mut found = self.found.borrow_mut();
        let info = found.entry(id).or_insert_with(|| {
            let (group, version) = reference.api_version.rsplit_once('/').unwrap_or(("", &reference.api_version));
            let kind = &*reference.kind;
            let served = self.kinds.matching(|i| i.group == group && i.version == version && i.kind == kind);
            served.first().map(|k| k.info().clone())
        });
        match (info, namespace) {
            (None, _) => Whereabouts::Unserved,
            (Some(info), None) if info.namespaced => Whereabouts::OutOfScope,
            (Some(info), namespace) => {
                Whereabouts::At(info.key(namespace.filter(|_| info.namespaced), &reference.name))
            }
        }
    }
}

/// What namespace `name` holds now, read from the store kind by kind (as kube's
/// namespace controller lists each resource), in pages.
async fn namespace_content(store: &dyn Store, graph: &Graph, name: &str) -> Result<Vec<Content>, StoreError> {
    let mut content = Vec::new();
    for prefix in graph.namespace_prefixes(name) {
        let mut opts = ListOptions { limit: Some(CONTENT_PAGE), ..ListOptions::default() };
        loop {
            let page = store.list(&prefix, &opts).await?;
            content.extend(page.items.iter().map(|kv| {
                let parsed = Parsed::of(&kv.key, &kv.value);
                let (deleting, finalizers) = match parsed.node {
                    Some(node) => (node.deleting, node.finalizers),
                    None => (false, parsed.finalizers),
                };
                Content { key: kv.key.clone(), deleting, finalizers }
            }));
            opts.revision = Some(page.revision);
            match page.next_key {
                Some(next) => opts.start_key = Some(next),
                None => break,
            }
        }
    }
    Ok(content)
}

/// `/registry/<group>/<plural>/...` → (group, plural); "core" is the empty group.
fn resource_of(key: &str) -> Option<(&str, &str)> {
    let mut parts = key.strip_prefix(ROOT)?.splitn(3, '/');
    let group = parts.next()?;
    let plural = parts.next()?;
    Some((if group == "core" { "" } else { group }, plural))
}

async fn carry_out(store: &dyn Store, kinds: &Kinds, action: &Action) -> Result<(), String> {
    match action {
        Action::WarnInvalidNamespace(key, owner) => {
            let Some(kv) = store.get(key).await.map_err(|e| e.to_string())? else { return Ok(()) };
            let event = events::invalid_namespace(&meta::from_stored(&kv), owner, Timestamp::now());
            let Some(kind) = kinds.find_resource("", "events") else { return Ok(()) };
            let rest = Rest {
                store,
                strategy: kind.strategy.as_ref(),
                now: Timestamp::now(),
                scale: None,
                names: &RANDOM,
                admission: &crate::resources::admit::NoAdmission,
            };
            // As kube-controller-manager's event client, whose user agent names the manager.
            let opts = WriteOptions { field_manager: Some("kube-controller-manager".into()), ..Default::default() };
            let namespace = meta::namespace(&event).map(str::to_string);
            rest.create(namespace.as_deref(), event, &opts).await.map(|_| ()).map_err(|e| e.message)
        }
        Action::Delete(key) => {
            let Some(kv) = store.get(key).await.map_err(|e| e.to_string())? else { return Ok(()) };
            let obj = meta::from_stored(&kv);
            let served = resource_of(key).and_then(|(g, p)| kinds.find_resource(g, p));
            match served {
                Some(kind) => {
                    let rest = Rest {
                        store,
                        strategy: kind.strategy.as_ref(),
                        now: Timestamp::now(),
                        scale: kind.scale.as_ref(),
                        names: &RANDOM,
                        admission: &crate::resources::admit::NoAdmission,
                    };
                    let name = meta::name(&obj).unwrap_or_default();
                    rest.delete(meta::namespace(&obj), name, &DeleteOptions::default(), &WriteOptions::internal())
                        .await
                        .map(|_| ())
                        .map_err(|e| e.message)
                }
                // Nothing serves it any more (its CRD is gone): honour finalizers by hand.
                None if meta::finalizers(&obj).is_empty() => {
                    store.delete(key, Some(kv.mod_revision)).await.map(|_| ()).map_err(|e| e.to_string())
                }
                None => Ok(()),
            }
        }
        Action::DropOwners(key, owners) => {
            rewrite(store, key, |obj| {
                let refs = meta::metadata_mut(obj).get_mut("ownerReferences").and_then(Value::as_array_mut);
                if let Some(refs) = refs {
                    refs.retain(|r| !owners.iter().any(|o| r.get("uid").and_then(Value::as_str) == Some(o)));
                    if refs.is_empty() {
                        meta::metadata_mut(obj).remove("ownerReferences");
                    }
                }
            })
            .await
        }
        Action::ClearFinalizer(key, finalizer) => {
            rewrite(store, key, |obj| {
                let list = meta::metadata_mut(obj).get_mut("finalizers").and_then(Value::as_array_mut);
                if let Some(list) = list {
                    list.retain(|f| f.as_str() != Some(finalizer));
                    if list.is_empty() {
                        meta::metadata_mut(obj).remove("finalizers");
                    }
                }
            })
            .await
        }
        Action::ReportContent(key, remaining) => {
            let Some(kv) = store.get(key).await.map_err(|e| e.to_string())? else { return Ok(()) };
            let mut namespace = meta::from_stored(&kv);
            if !namespace_conditions::report(&mut namespace, remaining, &meta::format_time(Timestamp::now())) {
                return Ok(());
            }
            let value = crate::resources::to_stored(&namespace);
            store.update(key, value, Some(kv.mod_revision)).await.map(|_| ()).map_err(|e| e.to_string())
        }
        // kube's namespace controller takes its own token (`kubernetes`) from
        // `spec.finalizers` and leaves the others, sorted; the namespace goes once none is
        // left (another's is removed through `/finalize`).
        Action::FinalizeNamespace(key) => {
            rewrite(store, key, |obj| {
                if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
                    let given = spec.get("finalizers").and_then(Value::as_array).cloned().unwrap_or_default();
                    let kept: std::collections::BTreeSet<&str> =
                        given.iter().filter_map(Value::as_str).filter(|f| *f != "kubernetes").collect();
                    spec.insert("finalizers".into(), kept.into_iter().map(Value::from).collect());
                }
            })
            .await
        }
    }
}

/// Read, change, write back under the read revision; an object being deleted whose last
/// finalizer (and, for a namespace, spec finalizer) is gone is removed instead.
async fn rewrite(store: &dyn Store, key: &str, change: impl FnOnce(&mut Value)) -> Result<(), String> {
    let Some(kv) = store.get(key).await.map_err(|e| e.to_string())? else { return Ok(()) };
    let mut obj = meta::from_stored(&kv);
    let before = obj.clone();
    change(&mut obj);
    let spec_finalizers = obj.pointer("/spec/finalizers").and_then(Value::as_array).is_some_and(|f| !f.is_empty());
    let done = meta::deletion_timestamp(&obj).is_some()
        && meta::finalizers(&obj).is_empty()
        && !(key.starts_with(NAMESPACES) && spec_finalizers);
    let result = if done {
        store.delete(key, Some(kv.mod_revision)).await.map(|_| ())
    } else if obj == before {
        // Nothing to write (a namespace whose only spec finalizers are others'): a write
        // would wake the collector for the same step again.
        Ok(())
    } else {
        store.update(key, crate::resources::to_stored(&obj), Some(kv.mod_revision)).await.map(|_| ())
    };
    result.map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_name_their_group_and_plural() {
        assert_eq!(resource_of("/registry/core/namespaces/a"), Some(("", "namespaces")));
        assert_eq!(
            resource_of("/registry/stable.example.com/widgets/default/w1"),
            Some(("stable.example.com", "widgets"))
        );
    }
}
