//! The collector's graph: what it knows of the stored objects, kept current from their
//! changes. It keeps a node only for an object it acts on or for (one with owners, one
//! being deleted, a namespace), the uid of every object (whether an owner is there), and
//! per namespace the kinds that have held objects in it (where to list a namespace's
//! content when it goes, as kube's namespace controller lists it per resource). A plain
//! object costs it one uid: a million of them must not cost a million nodes.

use super::uids::Uids;
use crate::store::{KeyValue, Revision};
use imbl::{OrdMap, OrdSet};
use serde::Deserialize;
use std::collections::BTreeSet;
use std::sync::Arc;

pub(super) const ROOT: &str = "/registry/";
pub(super) const NAMESPACES: &str = "/registry/core/namespaces/";

/// A stored key or a uid, shared by every index that holds it.
pub(super) type Shared = Arc<str>;

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
    owner_references: Vec<OwnerRef>,
    /// Only whether there is one matters.
    #[serde(default)]
    deletion_timestamp: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    finalizers: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct OwnerRef {
    #[serde(default)]
    uid: String,
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    name: String,
}

/// Where an owner reference says its owner is: kube's collector looks the owner up by
/// kind and name (in the dependent's namespace) and compares its uid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Coordinates {
    pub(super) uid: Shared,
    pub(super) api_version: Shared,
    pub(super) kind: Shared,
    pub(super) name: Shared,
}

#[derive(Debug, Default, Deserialize)]
struct DocSpec {
    #[serde(default)]
    finalizers: Vec<String>,
}

/// An object the collector acts on or for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Node {
    pub(super) uid: Shared,
    pub(super) deleting: bool,
    /// Where each owner reference says its owner is.
    pub(super) coordinates: Vec<Coordinates>,
    pub(super) finalizers: Vec<String>,
    /// For namespaces: `spec.finalizers`.
    pub(super) namespace_finalizers: Vec<String>,
}

impl Node {
    /// The owners' uids, one per reference.
    pub(super) fn owners(&self) -> impl Iterator<Item = &Shared> {
        self.coordinates.iter().map(|c| &c.uid)
    }
}

/// One stored value as the collector reads it: its uid, and its node when it needs one.
#[derive(Debug)]
pub(super) struct Parsed {
    pub(super) uid: String,
    pub(super) node: Option<Node>,
    /// Its finalizers, when it has no node (a node holds them).
    pub(super) finalizers: Vec<String>,
}

impl Parsed {
    pub(super) fn of(key: &str, value: &[u8]) -> Parsed {
        let m = serde_json::from_slice::<Doc>(value).map(|d| d.metadata).unwrap_or_default();
        let namespace = key.starts_with(NAMESPACES);
        let coordinates: Vec<Coordinates> = m
            .owner_references
            .into_iter()
            .filter(|o| !o.uid.is_empty())
            .map(|o| Coordinates {
                uid: Shared::from(o.uid),
                api_version: Shared::from(o.api_version),
                kind: Shared::from(o.kind),
                name: Shared::from(o.name),
            })
            .collect();
        let deleting = m.deletion_timestamp.is_some();
        if coordinates.is_empty() && !deleting && !namespace {
            return Parsed { uid: m.uid, node: None, finalizers: m.finalizers };
        }
        let namespace_finalizers = if namespace {
            serde_json::from_slice::<NamespaceDoc>(value).map(|d| d.spec.finalizers).unwrap_or_default()
        } else {
            Vec::new()
        };
        let node = Node {
            uid: Shared::from(m.uid.as_str()),
            deleting,
            coordinates,
            finalizers: m.finalizers,
            namespace_finalizers,
        };
        Parsed { uid: m.uid, node: Some(node), finalizers: Vec::new() }
    }
}

/// The name of the namespace stored at `key`, if it is one.
pub(super) fn namespace_name(key: &str) -> Option<&str> {
    key.strip_prefix(NAMESPACES)
}

/// `/registry/<group>/<plural>/<namespace>/<name>` → (`/registry/<group>/<plural>/`,
/// namespace); `None` for a cluster-scoped key (one segment fewer: names hold no `/`).
pub(super) fn namespaced(key: &str) -> Option<(&str, &str)> {
    let rest = key.strip_prefix(ROOT)?;
    let mut slashes = rest.match_indices('/').map(|(i, _)| i);
    let (plural_end, namespace_end) = (slashes.nth(1)?, slashes.next()?);
    Some((&key[..ROOT.len() + plural_end + 1], &rest[plural_end + 1..namespace_end]))
}

/// What needs settling after a change.
#[derive(Debug, Default)]
pub(super) struct Dirty {
    pub(super) owners: BTreeSet<Shared>,
    pub(super) namespaces: BTreeSet<Shared>,
    /// The keys of nodes written since: whether their owners are where their references
    /// say is checked once per write, not on every change of a sibling.
    pub(super) dependents: BTreeSet<Shared>,
}

/// A change the graph cannot follow: a deleted object's previous value was not delivered
/// (etcd leaves it out once compacted), so which uid went is unknown. The collector then
/// builds its graph again from a list.
#[derive(Debug, thiserror::Error)]
#[error("the deletion of {0} came without its previous value")]
pub(super) struct Untraceable(pub(super) String);

/// B-trees rather than hash tries: imbl's trie grows a sparse level past about 260,000
/// keys (measured). Persistent, so a published graph costs O(1) ([`GraphAt`]).
#[derive(Debug, Default, Clone)]
pub(super) struct Graph {
    /// Every stored object's uid.
    uids: Uids,
    /// The objects the collector acts on or for, by key.
    pub(super) nodes: OrdMap<Shared, Node>,
    /// The nodes' keys by uid.
    pub(super) key_of_uid: OrdMap<Shared, Shared>,
    /// Owner uid → the keys of the nodes naming it.
    pub(super) dependents: OrdMap<Shared, OrdSet<Shared>>,
    /// Namespace → the `/registry/<group>/<plural>/` prefixes that have held objects in
    /// it (kept until the namespace goes: a prefix left empty only costs a list).
    kinds_in_namespace: OrdMap<Shared, OrdSet<Shared>>,
    /// The names of the namespaces being deleted: asked on every namespaced change, so
    /// kept apart rather than looked up by a key built each time.
    deleting_namespaces: OrdSet<Shared>,
}

/// The collector's graph as of a revision: every change up to it applied, none after.
#[derive(Debug, Clone)]
pub struct GraphAt {
    pub(super) graph: Graph,
    pub(super) revision: Revision,
}

impl GraphAt {
    /// The revision the graph is current at.
    pub fn revision(&self) -> Revision {
        self.revision
    }
}

impl Graph {
    /// What a collector starting from this graph must settle: every owner with dependents
    /// or being deleted, every namespace being deleted (what building it marks dirty).
    pub(super) fn all_dirty(&self) -> Dirty {
        let mut dirty = Dirty {
            owners: self.dependents.keys().cloned().collect(),
            dependents: self
                .nodes
                .iter()
                .filter(|(_, n)| !n.coordinates.is_empty())
                .map(|(k, _)| Arc::clone(k))
                .collect(),
            ..Dirty::default()
        };
        for (key, node) in self.nodes.iter().filter(|(_, n)| n.deleting) {
            dirty.owners.insert(Arc::clone(&node.uid));
            if let Some(name) = namespace_name(key) {
                dirty.namespaces.insert(Shared::from(name));
            }
        }
        dirty
    }

    /// Whether an object with this uid is stored.
    pub(super) fn alive(&self, uid: &str) -> bool {
        self.uids.contains(uid)
    }

    /// Whether the one object holding `uid` lives in another namespace than `namespace`.
    pub(super) fn held_elsewhere(&self, uid: &str, namespace: &str) -> bool {
        self.uids.elsewhere(uid, namespace)
    }

    /// Whether the object stored at `key` holds this uid.
    pub(super) fn stored_at(&self, uid: &str, key: &str) -> bool {
        self.uids.at(uid, key)
    }

    /// The namespace named `name` if it is being deleted: its key and node.
    pub(super) fn deleting_namespace(&self, name: &str) -> Option<(String, &Node)> {
        let key = format!("{NAMESPACES}{name}");
        let node = self.nodes.get(key.as_str()).filter(|n| n.deleting)?;
        Some((key, node))
    }

    /// Where the objects of namespace `name` are stored: one prefix per kind that has held
    /// any there.
    pub(super) fn namespace_prefixes(&self, name: &str) -> Vec<String> {
        self.kinds_in_namespace.get(name).map(|p| p.iter().map(|p| format!("{p}{name}/")).collect()).unwrap_or_default()
    }

    /// Applies one change to `key`: `prev` and `current` are its values before and after
    /// (`prev` is `None` for a create and while building from a list).
    pub(super) fn apply(
        &mut self,
        key: &str,
        prev: Option<&KeyValue>,
        current: Option<&KeyValue>,
        dirty: &mut Dirty,
    ) -> Result<(), Untraceable> {
        let new = current.map(|kv| Parsed::of(key, &kv.value));
        let old_uid = match self.remove_node(key, dirty) {
            Some(uid) => Some(uid.to_string()),
            None => match (prev, &new) {
                (None, _) => None,
                // An update keeps its uid (kube's is immutable): the previous value is read
                // only when the new uid is not known already.
                (Some(_), Some(new)) if self.uids.contains(&new.uid) => Some(new.uid.clone()),
                (Some(prev), None) if prev.value.is_empty() => return Err(Untraceable(key.to_string())),
                (Some(prev), _) => Some(Parsed::of(key, &prev.value).uid),
            },
        };
        let kept = matches!((&old_uid, &new), (Some(old), Some(new)) if *old == new.uid);
        if let Some(uid) = old_uid.as_ref().filter(|_| !kept) {
            self.uids.remove(uid);
            if new.is_none() {
                // Its dependents now point at nothing.
                if let Some((owner, _)) = self.dependents.get_key_value(uid.as_str()) {
                    dirty.owners.insert(Arc::clone(owner));
                }
            }
        }
        if let Some((prefix, namespace)) = namespaced(key) {
            let namespace = self.note_kind_in_namespace(prefix, namespace, new.is_some());
            if self.deleting_namespaces.contains(&namespace) {
                dirty.namespaces.insert(namespace);
            }
        }
        match new {
            Some(Parsed { uid, node, .. }) => {
                if !kept {
                    self.uids.insert(&uid, key);
                }
                if let Some(node) = node {
                    self.insert_node(key, node, dirty);
                }
            }
            None => {
                if let Some(name) = namespace_name(key) {
                    self.kinds_in_namespace.remove(name);
                }
            }
        }
        Ok(())
    }

    /// Records that `prefix` holds objects in `namespace` (when `present`), and gives the
    /// graph's one copy of the namespace's name.
    fn note_kind_in_namespace(&mut self, prefix: &str, namespace: &str, present: bool) -> Shared {
        let name = match self.kinds_in_namespace.get_key_value(namespace) {
            Some((name, _)) => Arc::clone(name),
            None => Shared::from(namespace),
        };
        if present {
            let prefixes = self.kinds_in_namespace.entry(Arc::clone(&name)).or_default();
            if !prefixes.contains(prefix) {
                prefixes.insert(Shared::from(prefix));
            }
        }
        name
    }

    /// Removes the node at `key`, if the graph has one: its uid.
    fn remove_node(&mut self, key: &str, dirty: &mut Dirty) -> Option<Shared> {
        let old = self.nodes.remove(key)?;
        if let Some(name) = namespace_name(key) {
            self.deleting_namespaces.remove(name);
        }
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
        Some(old.uid)
    }

    fn insert_node(&mut self, key: &str, node: Node, dirty: &mut Dirty) {
        let key = Shared::from(key);
        if !node.coordinates.is_empty() {
            dirty.dependents.insert(Arc::clone(&key));
        }
        for owner in node.owners() {
            self.dependents.entry(Arc::clone(owner)).or_default().insert(Arc::clone(&key));
            dirty.owners.insert(Arc::clone(owner));
        }
        if node.deleting {
            if let Some(name) = namespace_name(&key) {
                let name = Shared::from(name);
                self.deleting_namespaces.insert(Arc::clone(&name));
                dirty.namespaces.insert(name);
            }
            dirty.owners.insert(Arc::clone(&node.uid));
        }
        self.key_of_uid.insert(Arc::clone(&node.uid), Arc::clone(&key));
        self.nodes.insert(key, node);
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use serde_json::json;

    /// A node whose owners are referenced by uid alone (of kinds the engine does not serve).
    pub(in crate::gc) fn node(uid: &str, owners: &[&str]) -> Node {
        Node {
            uid: uid.into(),
            deleting: false,
            coordinates: owners
                .iter()
                .map(|&o| Coordinates { uid: o.into(), api_version: "".into(), kind: "".into(), name: "".into() })
                .collect(),
            finalizers: Vec::new(),
            namespace_finalizers: Vec::new(),
        }
    }

    /// `node` being deleted, with finalizers.
    pub(in crate::gc) fn deleting(node: Node, finalizers: &[&str], namespace_finalizers: &[&str]) -> Node {
        Node {
            deleting: true,
            finalizers: finalizers.iter().map(|f| f.to_string()).collect(),
            namespace_finalizers: namespace_finalizers.iter().map(|f| f.to_string()).collect(),
            ..node
        }
    }

    /// A graph holding these nodes (and their uids).
    pub(in crate::gc) fn graph(nodes: Vec<(&str, Node)>) -> Graph {
        let mut g = Graph::default();
        let mut dirty = Dirty::default();
        for (key, n) in nodes {
            g.uids.insert(&n.uid, key);
            g.insert_node(key, n, &mut dirty);
        }
        g
    }

    fn kv(key: &str, value: serde_json::Value) -> KeyValue {
        KeyValue { key: key.into(), value: value.to_string().into(), create_revision: 1, mod_revision: 1 }
    }

    #[test]
    fn nodes_parse_only_what_the_collector_needs() {
        let doc = json!({"metadata": {"uid": "u", "name": "n", "namespace": "ns",
            "ownerReferences": [{"uid": "o1", "kind": "K", "name": "x", "apiVersion": "v1"}],
            "deletionTimestamp": "2026-01-01T00:00:00Z", "finalizers": ["orphan"]}, "spec": {"big": [1, 2, 3]}});
        let n = Parsed::of("/registry/g/p/ns/n", doc.to_string().as_bytes()).node.expect("a node");
        assert_eq!(n.owners().cloned().collect::<Vec<_>>(), [Shared::from("o1")]);
        assert_eq!(n.finalizers, ["orphan"]);
        assert!(n.deleting);
        let ns = json!({"metadata": {"uid": "nu", "name": "team"}, "spec": {"finalizers": ["kubernetes"]}});
        let ns = Parsed::of("/registry/core/namespaces/team", ns.to_string().as_bytes()).node.expect("a node");
        assert_eq!(ns.namespace_finalizers, ["kubernetes"]);
        assert!(!ns.deleting);
        // A plain object is only its uid.
        let plain = json!({"metadata": {"uid": "u2", "name": "m", "namespace": "ns", "finalizers": ["x"]}});
        let plain = Parsed::of("/registry/g/p/ns/m", plain.to_string().as_bytes());
        assert_eq!((plain.uid.as_str(), plain.node), ("u2", None));
    }

    #[test]
    fn keys_tell_their_kind_and_namespace() {
        assert_eq!(namespaced("/registry/g/p/ns/n"), Some(("/registry/g/p/", "ns")));
        assert_eq!(namespaced("/registry/core/configmaps/default/c"), Some(("/registry/core/configmaps/", "default")));
        assert_eq!(namespaced("/registry/core/namespaces/team"), None);
        assert_eq!(namespaced("/registry/apiextensions.k8s.io/customresourcedefinitions/a.b.c"), None);
        assert_eq!(namespaced("/elsewhere/g/p/ns/n"), None);
        assert_eq!(namespace_name("/registry/core/namespaces/team"), Some("team"));
    }

    #[test]
    fn plain_objects_cost_a_uid_and_owners_are_known_alive_by_it() {
        let mut g = Graph::default();
        let mut dirty = Dirty::default();
        let owner = kv("/registry/g/p/ns/o", json!({"metadata": {"uid": "o"}}));
        let dependent = kv("/registry/g/p/ns/d", json!({"metadata": {"uid": "d", "ownerReferences": [{"uid": "o"}]}}));
        g.apply(&owner.key, None, Some(&owner), &mut dirty).expect("applied");
        g.apply(&dependent.key, None, Some(&dependent), &mut dirty).expect("applied");
        assert_eq!(g.nodes.keys().map(|k| &**k).collect::<Vec<_>>(), ["/registry/g/p/ns/d"]);
        assert!(g.alive("o") && g.alive("d") && !g.alive("x"));
        assert_eq!(g.namespace_prefixes("ns"), ["/registry/g/p/ns/"]);
        // An update of the owner keeps it alive; its deletion (by its previous value) does not,
        // and marks it to settle for its dependents.
        let mut dirty = Dirty::default();
        g.apply(&owner.key, Some(&owner), Some(&owner), &mut dirty).expect("applied");
        assert!(g.alive("o") && dirty.owners.is_empty());
        g.apply(&owner.key, Some(&owner), None, &mut dirty).expect("applied");
        assert!(!g.alive("o"));
        assert_eq!(dirty.owners.iter().map(|o| &**o).collect::<Vec<_>>(), ["o"]);
        // A deletion whose previous value is unknown cannot be followed.
        let empty = KeyValue { value: bytes::Bytes::new(), ..dependent.clone() };
        let untracked = kv("/registry/g/p/ns/u", json!({"metadata": {"uid": "u"}}));
        g.apply(&untracked.key, None, Some(&untracked), &mut dirty).expect("applied");
        assert!(g.apply(&untracked.key, Some(&empty), None, &mut dirty).is_err());
        assert!(g.alive("u"));
        // An update that changes the uid (data written from elsewhere) moves it.
        let renamed = kv("/registry/g/p/ns/u", json!({"metadata": {"uid": "u2"}}));
        g.apply(&untracked.key, Some(&untracked), Some(&renamed), &mut dirty).expect("applied");
        assert!(g.alive("u2") && !g.alive("u"));
        // A node's deletion needs no previous value: the node has its uid.
        g.apply(&dependent.key, Some(&empty), None, &mut dirty).expect("applied");
        assert!(!g.alive("d") && g.nodes.is_empty() && g.dependents.is_empty());
    }

    #[test]
    fn a_namespace_being_deleted_is_marked_by_changes_to_its_content() {
        let mut g = Graph::default();
        let ns = kv("/registry/core/namespaces/team", json!({"metadata": {"uid": "n"}}));
        let obj = kv("/registry/g/p/team/x", json!({"metadata": {"uid": "x"}}));
        let mut dirty = Dirty::default();
        g.apply(&ns.key, None, Some(&ns), &mut dirty).expect("applied");
        g.apply(&obj.key, None, Some(&obj), &mut dirty).expect("applied");
        assert!(dirty.namespaces.is_empty());
        let going = kv(
            "/registry/core/namespaces/team",
            json!({"metadata": {"uid": "n", "deletionTimestamp": "2026-01-01T00:00:00Z"},
                "spec": {"finalizers": ["kubernetes"]}}),
        );
        g.apply(&ns.key, Some(&ns), Some(&going), &mut dirty).expect("applied");
        assert_eq!(dirty.namespaces.iter().map(|n| &**n).collect::<Vec<_>>(), ["team"]);
        let mut dirty = Dirty::default();
        g.apply(&obj.key, Some(&obj), None, &mut dirty).expect("applied");
        assert_eq!(dirty.namespaces.iter().map(|n| &**n).collect::<Vec<_>>(), ["team"]);
        let (key, node) = g.deleting_namespace("team").expect("being deleted");
        assert_eq!(
            (key.as_str(), node.namespace_finalizers.as_slice()),
            (ns.key.as_str(), &["kubernetes".to_string()][..])
        );
        // The namespace gone, so is what the graph knew of its content.
        g.apply(&ns.key, Some(&going), None, &mut Dirty::default()).expect("applied");
        assert!(g.namespace_prefixes("team").is_empty() && !g.alive("n"));
        // A namespace of that name made again, not being deleted: its content marks nothing.
        let mut dirty = Dirty::default();
        g.apply(&ns.key, None, Some(&ns), &mut dirty).expect("applied");
        g.apply(&obj.key, None, Some(&obj), &mut dirty).expect("applied");
        assert!(dirty.namespaces.is_empty() && g.deleting_namespace("team").is_none());
    }
}
