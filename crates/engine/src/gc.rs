//! The garbage collector and the namespace controller: what kube-controller-manager does
//! for a real cluster, run inside the engine because the engine is the whole cluster.
//!
//! One loop keeps a graph of every stored object's owner references (built from a full
//! list, then kept current from a watch of everything) and, after each change, settles
//! the owners and namespaces the change touched:
//! - an owner that is gone: dependents whose owners are all gone are deleted
//!   (background propagation), the others lose the dangling reference;
//! - an owner deleted with `propagationPolicy=Orphan`: its dependents lose the reference,
//!   then the `orphan` finalizer is cleared;
//! - an owner deleted with `Foreground`: its dependents are deleted, and once none is
//!   left the `foregroundDeletion` finalizer is cleared;
//! - a namespace being deleted: everything in it is deleted, then its
//!   `spec.finalizers` are cleared and it goes.
//!
//! Every decision is re-made from the graph, so a restart simply resumes.
//!
//! The graph is made of persistent maps, so the collector publishes it after every change
//! it applies at O(1) cost ([`GraphAt`]); an engine snapshot carries the graph at its
//! revision, and the collector of an engine forked from it starts from that graph instead
//! of parsing every object again.

use crate::kinds::Kinds;
use crate::meta;
use crate::resources::generate_name::RANDOM;
use crate::resources::rest::{DeleteOptions, FOREGROUND_FINALIZER, ORPHAN_FINALIZER, Rest, WriteOptions};
use crate::store::Revision;
use crate::store::{KeyValue, ListOptions, Store, StoreError};
use futures::{FutureExt as _, StreamExt};
use imbl::{OrdMap, OrdSet};
use k8s_openapi::jiff::Timestamp;
use serde::Deserialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

const ROOT: &str = "/registry/";
const NAMESPACES: &str = "/registry/core/namespaces/";
/// How many objects the collector writes at once.
const CONCURRENCY: usize = 64;

/// The metadata the collector reads; everything else in an object is skipped unparsed.
#[derive(Debug, Default, Deserialize)]
struct Doc {
    #[serde(default)]
    metadata: DocMeta,
}

/// A namespace's `spec.finalizers` (parsed for namespaces only: other kinds' specs are
/// theirs to shape).
#[derive(Debug, Default, Deserialize)]
struct NamespaceDoc {
    #[serde(default)]
    spec: DocSpec,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct DocMeta {
    #[serde(default)]
    uid: String,
    #[serde(default)]
    namespace: Option<String>,
    #[serde(default)]
    owner_references: Vec<OwnerRef>,
    /// Only whether there is one matters.
    #[serde(default)]
    deletion_timestamp: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    finalizers: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
struct OwnerRef {
    #[serde(default)]
    uid: String,
}

#[derive(Debug, Default, Deserialize)]
struct DocSpec {
    #[serde(default)]
    finalizers: Vec<String>,
}

/// A stored key or a uid, shared by every index that holds it (the graph holds every
/// stored object: a million objects must not cost a million copies per index).
type Shared = Arc<str>;

/// One stored object as the collector sees it. Its name, when needed (namespaces), is the
/// end of its key; what most objects lack (owners, finalizers) sits behind one pointer.
#[derive(Debug, Clone)]
struct Node {
    uid: Shared,
    namespace: Option<Shared>,
    deleting: bool,
    rare: Option<Box<Rare>>,
}

/// What a node holds only when it has any: owners and finalizers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Rare {
    owners: Vec<Shared>,
    finalizers: Vec<String>,
    /// For namespaces: `spec.finalizers`.
    namespace_finalizers: Vec<String>,
}

impl Node {
    /// `shared` gives the one copy of a namespace name the graph holds (there are few,
    /// and every object names one).
    fn parse(key: &str, value: &[u8], shared: impl Fn(&str) -> Shared) -> Node {
        let m = serde_json::from_slice::<Doc>(value).map(|d| d.metadata).unwrap_or_default();
        let namespace_finalizers = if key.starts_with(NAMESPACES) {
            serde_json::from_slice::<NamespaceDoc>(value).map(|d| d.spec.finalizers).unwrap_or_default()
        } else {
            Vec::new()
        };
        let rare = Rare {
            owners: m.owner_references.into_iter().map(|o| o.uid).filter(|u| !u.is_empty()).map(Shared::from).collect(),
            finalizers: m.finalizers,
            namespace_finalizers,
        };
        Node {
            uid: Shared::from(m.uid),
            namespace: m.namespace.filter(|n| !n.is_empty()).map(|n| shared(&n)),
            deleting: m.deletion_timestamp.is_some(),
            rare: (rare != Rare::default()).then(|| Box::new(rare)),
        }
    }

    fn owners(&self) -> &[Shared] {
        self.rare.as_ref().map_or(&[], |r| &r.owners)
    }

    fn finalizers(&self) -> &[String] {
        self.rare.as_ref().map_or(&[], |r| &r.finalizers)
    }

    fn namespace_finalizers(&self) -> &[String] {
        self.rare.as_ref().map_or(&[], |r| &r.namespace_finalizers)
    }
}

/// The name of the namespace stored at `key`, if it is one.
fn namespace_name(key: &str) -> Option<&str> {
    key.strip_prefix(NAMESPACES)
}

/// What needs settling after a change.
#[derive(Debug, Default)]
struct Dirty {
    owners: BTreeSet<Shared>,
    namespaces: BTreeSet<Shared>,
}

/// Every object's owners, and the indexes to walk them both ways. B-trees rather than
/// hash tries: imbl's trie grows a sparse level past about 260,000 keys, and a million
/// objects then cost the graph 650 bytes each instead of about 400 (measured).
#[derive(Debug, Default, Clone)]
struct Graph {
    nodes: OrdMap<Shared, Node>,
    key_of_uid: OrdMap<Shared, Shared>,
    dependents: OrdMap<Shared, OrdSet<Shared>>,
    in_namespace: OrdMap<Shared, OrdSet<Shared>>,
}

/// The collector's graph as of a revision: every change up to it applied, none after.
#[derive(Debug, Clone)]
pub struct GraphAt {
    graph: Graph,
    revision: Revision,
}

impl GraphAt {
    /// The revision the graph is current at.
    pub fn revision(&self) -> Revision {
        self.revision
    }
}

/// Where the collector publishes its graph after every change it applies.
pub type Published = tokio::sync::watch::Sender<Option<GraphAt>>;

impl Graph {
    /// What a collector starting from this graph must settle: every owner with dependents
    /// or being deleted, every namespace being deleted (what building it marks dirty).
    fn all_dirty(&self) -> Dirty {
        let mut dirty = Dirty { owners: self.dependents.keys().cloned().collect(), ..Dirty::default() };
        for (key, node) in self.nodes.iter().filter(|(_, n)| n.deleting) {
            dirty.owners.insert(Arc::clone(&node.uid));
            if let Some(name) = namespace_name(key) {
                dirty.namespaces.insert(Shared::from(name));
            }
        }
        dirty
    }

    fn remove(&mut self, key: &str, dirty: &mut Dirty) {
        let Some(old) = self.nodes.remove(key) else { return };
        if self.key_of_uid.get(&old.uid).is_some_and(|k| &**k == key) {
            self.key_of_uid.remove(&old.uid);
        }
        for owner in old.owners() {
            if let Some(set) = self.dependents.get_mut(owner) {
                set.remove(key);
                if set.is_empty() {
                    self.dependents.remove(owner);
                }
            }
            dirty.owners.insert(Arc::clone(owner));
        }
        if let Some(ns) = &old.namespace {
            if let Some(set) = self.in_namespace.get_mut(ns) {
                set.remove(key);
            }
            dirty.namespaces.insert(Arc::clone(ns));
        }
        // Its own dependents now point at nothing.
        dirty.owners.insert(old.uid);
    }

    fn insert(&mut self, key: &str, node: Node, dirty: &mut Dirty) {
        self.remove(key, dirty);
        let key = Shared::from(key);
        for owner in node.owners() {
            self.dependents.entry(Arc::clone(owner)).or_default().insert(Arc::clone(&key));
            dirty.owners.insert(Arc::clone(owner));
        }
        if let Some(ns) = &node.namespace {
            self.in_namespace.entry(Arc::clone(ns)).or_default().insert(Arc::clone(&key));
        }
        if node.deleting {
            if let Some(name) = namespace_name(&key) {
                dirty.namespaces.insert(Shared::from(name));
            }
            dirty.owners.insert(Arc::clone(&node.uid));
        }
        self.key_of_uid.insert(Arc::clone(&node.uid), Arc::clone(&key));
        self.nodes.insert(key, node);
    }

    fn apply(&mut self, key: &str, current: Option<&KeyValue>, dirty: &mut Dirty) {
        let shared =
            |ns: &str| self.in_namespace.get_key_value(ns).map_or_else(|| Shared::from(ns), |(k, _)| Arc::clone(k));
        match current.map(|kv| Node::parse(key, &kv.value, shared)) {
            Some(node) => self.insert(key, node, dirty),
            None => self.remove(key, dirty),
        }
    }

    fn alive(&self, uid: &str) -> bool {
        self.key_of_uid.contains_key(uid)
    }
}

/// One step the collector takes; computed from the graph, then carried out.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Action {
    /// Delete the object at this key (its own finalizers still apply).
    Delete(String),
    /// Remove the references to these owners from the object at this key.
    DropOwners(String, Vec<String>),
    /// Clear a finalizer from the object at this key.
    ClearFinalizer(String, &'static str),
    /// Clear a namespace's `spec.finalizers` (and let it go).
    FinalizeNamespace(String),
}

impl Action {
    /// The object the action writes.
    fn key(&self) -> &str {
        match self {
            Action::Delete(key)
            | Action::DropOwners(key, _)
            | Action::ClearFinalizer(key, _)
            | Action::FinalizeNamespace(key) => key,
        }
    }
}

/// The actions that settle one owner (pure: reads the graph only).
fn settle_owner(graph: &Graph, uid: &str) -> Vec<Action> {
    let dependents: Vec<&Shared> = graph.dependents.get(uid).map(|s| s.iter().collect()).unwrap_or_default();
    let Some(owner_key) = graph.key_of_uid.get(uid) else {
        return dependents
            .into_iter()
            .filter_map(|key| {
                let node = graph.nodes.get(key)?;
                let dead: Vec<String> =
                    node.owners().iter().filter(|o| !graph.alive(o)).map(|o| o.to_string()).collect();
                if dead.len() == node.owners().len() {
                    (!node.deleting).then(|| Action::Delete(key.to_string()))
                } else {
                    Some(Action::DropOwners(key.to_string(), dead))
                }
            })
            .collect();
    };
    let Some(owner) = graph.nodes.get(owner_key) else { return Vec::new() };
    if !owner.deleting {
        return Vec::new();
    }
    let has = |f: &str| owner.finalizers().iter().any(|x| x == f);
    if has(ORPHAN_FINALIZER) {
        if dependents.is_empty() {
            return vec![Action::ClearFinalizer(owner_key.to_string(), ORPHAN_FINALIZER)];
        }
        return dependents.into_iter().map(|k| Action::DropOwners(k.to_string(), vec![uid.to_string()])).collect();
    }
    if has(FOREGROUND_FINALIZER) {
        if dependents.is_empty() {
            return vec![Action::ClearFinalizer(owner_key.to_string(), FOREGROUND_FINALIZER)];
        }
        return dependents
            .into_iter()
            .filter(|k| graph.nodes.get(*k).is_some_and(|n| !n.deleting))
            .map(|k| Action::Delete(k.to_string()))
            .collect();
    }
    Vec::new()
}

/// The actions that settle one namespace being deleted.
fn settle_namespace(graph: &Graph, name: &str) -> Vec<Action> {
    let key = format!("{NAMESPACES}{name}");
    let Some(ns) = graph.nodes.get(key.as_str()) else { return Vec::new() };
    if !ns.deleting {
        return Vec::new();
    }
    let content: Vec<&Shared> = graph.in_namespace.get(name).map(|s| s.iter().collect()).unwrap_or_default();
    if content.is_empty() {
        return if ns.namespace_finalizers().is_empty() { Vec::new() } else { vec![Action::FinalizeNamespace(key)] };
    }
    content
        .into_iter()
        .filter(|k| graph.nodes.get(*k).is_some_and(|n| !n.deleting))
        .map(|k| Action::Delete(k.to_string()))
        .collect()
}

/// Runs the collector until the store closes, starting from `start` (a snapshot's graph,
/// at the store's revision) when given, and publishing its graph to `published`.
pub async fn run(store: Arc<dyn Store>, kinds: Arc<Kinds>, mut start: Option<GraphAt>, published: Published) {
    loop {
        match run_once(store.as_ref(), &kinds, start.take(), &published).await {
            Ok(()) => return,
            // Fell behind the history (or a transient error): rebuild from a fresh list.
            Err(StoreError::Closed) => return,
            Err(e) => {
                tracing::debug!("garbage collector restarts: {e}");
                if matches!(e, StoreError::Unavailable(_)) {
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
) -> Result<(), StoreError> {
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
        settle(store, kinds, &graph, std::mem::take(&mut dirty)).await;
        let Some(event) = changes.next().await else { return Ok(()) };
        // The watches the same change woke go first: clients wait on them, and nothing
        // here is urgent (kube's collector works from a queue too).
        tokio::task::yield_now().await;
        let event = event?;
        graph.apply(&event.key, event.current.as_ref(), &mut dirty);
        revision = event.revision;
        // Take whatever else is already waiting before acting, so a burst settles once;
        // publishing the graph at each revision, so a snapshot at any of them finds it.
        while let Some(Some(more)) = changes.next().now_or_never() {
            published.send_replace(Some(GraphAt { graph: graph.clone(), revision }));
            let more = more?;
            graph.apply(&more.key, more.current.as_ref(), &mut dirty);
            revision = more.revision;
        }
    }
}

/// The graph of every stored object, from a list, with everything it found to settle.
async fn build(store: &dyn Store) -> Result<(Graph, Dirty, Revision), StoreError> {
    let mut graph = Graph::default();
    let mut dirty = Dirty::default();
    let mut opts = ListOptions::default();
    loop {
        let page = store.list(ROOT, &opts).await?;
        for kv in &page.items {
            graph.apply(&kv.key, Some(kv), &mut dirty);
        }
        opts.revision = Some(page.revision);
        match page.next_key {
            Some(next) => opts.start_key = Some(next),
            None => return Ok((graph, dirty, page.revision)),
        }
    }
}

async fn settle(store: &dyn Store, kinds: &Kinds, graph: &Graph, dirty: Dirty) {
    let mut actions: Vec<Action> = Vec::new();
    for uid in &dirty.owners {
        actions.extend(settle_owner(graph, uid));
    }
    for ns in &dirty.namespaces {
        actions.extend(settle_namespace(graph, ns));
    }
    actions.dedup();
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
        Action::FinalizeNamespace(key) => {
            rewrite(store, key, |obj| {
                if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
                    spec.insert("finalizers".into(), Value::Array(Vec::new()));
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
    change(&mut obj);
    let spec_finalizers = obj.pointer("/spec/finalizers").and_then(Value::as_array).is_some_and(|f| !f.is_empty());
    let done = meta::deletion_timestamp(&obj).is_some()
        && meta::finalizers(&obj).is_empty()
        && !(key.starts_with(NAMESPACES) && spec_finalizers);
    let result = if done {
        store.delete(key, Some(kv.mod_revision)).await.map(|_| ())
    } else {
        store.update(key, meta::to_stored(&obj), Some(kv.mod_revision)).await.map(|_| ())
    };
    result.map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(uid: &str, owners: &[&str]) -> Node {
        let rare = Rare { owners: owners.iter().map(|&o| Shared::from(o)).collect(), ..Rare::default() };
        Node {
            uid: uid.into(),
            namespace: Some("default".into()),
            deleting: false,
            rare: (rare != Rare::default()).then(|| Box::new(rare)),
        }
    }

    /// `node` being deleted, with finalizers.
    fn deleting(node: Node, finalizers: &[&str], namespace_finalizers: &[&str]) -> Node {
        let mut rare = node.rare.map(|r| *r).unwrap_or_default();
        rare.finalizers = finalizers.iter().map(|f| f.to_string()).collect();
        rare.namespace_finalizers = namespace_finalizers.iter().map(|f| f.to_string()).collect();
        Node { deleting: true, rare: Some(Box::new(rare)), ..node }
    }

    fn graph(nodes: Vec<(&str, Node)>) -> Graph {
        let mut g = Graph::default();
        let mut dirty = Dirty::default();
        for (key, n) in nodes {
            g.insert(key, n, &mut dirty);
        }
        g
    }

    #[test]
    fn dependents_of_a_gone_owner_are_deleted_unless_another_owner_lives() {
        let g =
            graph(vec![("/k/a", node("a", &["gone"])), ("/k/b", node("b", &["gone", "c"])), ("/k/c", node("c", &[]))]);
        let actions = settle_owner(&g, "gone");
        assert_eq!(
            actions,
            vec![Action::Delete("/k/a".into()), Action::DropOwners("/k/b".into(), vec!["gone".into()])]
        );
    }

    #[test]
    fn orphaning_drops_references_then_the_finalizer() {
        let owner = deleting(node("o", &[]), &[ORPHAN_FINALIZER], &[]);
        let g = graph(vec![("/k/o", owner.clone()), ("/k/d", node("d", &["o"]))]);
        assert_eq!(settle_owner(&g, "o"), vec![Action::DropOwners("/k/d".into(), vec!["o".into()])]);
        let g = graph(vec![("/k/o", owner)]);
        assert_eq!(settle_owner(&g, "o"), vec![Action::ClearFinalizer("/k/o".into(), ORPHAN_FINALIZER)]);
    }

    #[test]
    fn foreground_deletes_dependents_before_the_owner() {
        let owner = deleting(node("o", &[]), &[FOREGROUND_FINALIZER], &[]);
        let g = graph(vec![("/k/o", owner.clone()), ("/k/d", node("d", &["o"]))]);
        assert_eq!(settle_owner(&g, "o"), vec![Action::Delete("/k/d".into())]);
        let g = graph(vec![("/k/o", owner)]);
        assert_eq!(settle_owner(&g, "o"), vec![Action::ClearFinalizer("/k/o".into(), FOREGROUND_FINALIZER)]);
    }

    #[test]
    fn a_live_owner_not_being_deleted_needs_nothing() {
        let g = graph(vec![("/k/o", node("o", &[])), ("/k/d", node("d", &["o"]))]);
        assert!(settle_owner(&g, "o").is_empty());
    }

    #[test]
    fn a_terminating_namespace_is_emptied_then_finalized() {
        let ns = deleting(Node { namespace: None, ..node("ns-uid", &[]) }, &[], &["kubernetes"]);
        let mut obj = node("x", &[]);
        obj.namespace = Some("team".into());
        let g = graph(vec![("/registry/core/namespaces/team", ns.clone()), ("/registry/g/p/team/x", obj)]);
        assert_eq!(settle_namespace(&g, "team"), vec![Action::Delete("/registry/g/p/team/x".into())]);
        let g = graph(vec![("/registry/core/namespaces/team", ns)]);
        assert_eq!(
            settle_namespace(&g, "team"),
            vec![Action::FinalizeNamespace("/registry/core/namespaces/team".into())]
        );
    }

    #[test]
    fn nodes_parse_only_what_the_collector_needs() {
        let doc = json!({"metadata": {"uid": "u", "name": "n", "namespace": "ns",
            "ownerReferences": [{"uid": "o1", "kind": "K", "name": "x", "apiVersion": "v1"}],
            "deletionTimestamp": "2026-01-01T00:00:00Z", "finalizers": ["orphan"]}, "spec": {"big": [1, 2, 3]}});
        let mut g = Graph::default();
        let n = Node::parse("/registry/g/p/ns/n", doc.to_string().as_bytes(), |ns: &str| Shared::from(ns));
        assert_eq!(n.owners(), [Shared::from("o1")]);
        assert_eq!(n.finalizers(), ["orphan"]);
        assert!(n.deleting);
        assert_eq!(n.namespace.as_deref(), Some("ns"));
        // Namespace names are shared; an object with nothing rare holds no box.
        let plain = json!({"metadata": {"uid": "u2", "name": "m", "namespace": "ns"}});
        g.insert("/registry/g/p/ns/n", n.clone(), &mut Dirty::default());
        let kv = KeyValue {
            key: "/registry/g/p/ns/m".into(),
            value: plain.to_string().into(),
            create_revision: 1,
            mod_revision: 1,
        };
        g.apply(&kv.key, Some(&kv), &mut Dirty::default());
        let m = g.nodes.get("/registry/g/p/ns/m").expect("applied").clone();
        assert!(Arc::ptr_eq(m.namespace.as_ref().expect("ns"), n.namespace.as_ref().expect("ns")));
        assert!(m.rare.is_none());
        assert_eq!(namespace_name("/registry/core/namespaces/team"), Some("team"));
        assert_eq!(resource_of("/registry/core/namespaces/a"), Some(("", "namespaces")));
        assert_eq!(
            resource_of("/registry/stable.example.com/widgets/default/w1"),
            Some(("stable.example.com", "widgets"))
        );
    }
}
