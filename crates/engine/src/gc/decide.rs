//! What the collector does about an owner or a namespace: pure, from the graph (and, for
//! a namespace, its content as listed), so every decision can be made again after any
//! change or a restart.

use super::graph::{Coordinates, Graph, Node, Shared, namespaced};
use crate::resources::rest::{FOREGROUND_FINALIZER, ORPHAN_FINALIZER};

/// Where an owner reference's owner would be stored, as the served kinds tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Whereabouts {
    /// At this key: the owner is there if the object stored there holds its uid.
    At(String),
    /// Of a kind the engine does not serve: only its uid tells (no object of such a kind
    /// can be stored here, so a kind kube serves is judged as kube would find it).
    Unserved,
    /// A namespaced kind named by a cluster-scoped dependent: kube's collector leaves such
    /// a dependent alone.
    OutOfScope,
}

/// Finds where owners are: the collector's view of the served kinds.
pub(super) trait Locate {
    /// Where the owner `reference` names is, for a dependent in `namespace` (`None`:
    /// cluster-scoped).
    fn locate(&self, reference: &Coordinates, namespace: Option<&str>) -> Whereabouts;
}

/// One step the collector takes; computed from the graph, then carried out.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Action {
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
    pub(super) fn key(&self) -> &str {
        match self {
            Action::Delete(key)
            | Action::DropOwners(key, _)
            | Action::ClearFinalizer(key, _)
            | Action::FinalizeNamespace(key) => key,
        }
    }
}

/// What the dependent stored at `key` needs for its owners, as kube's collector finds
/// them (by kind and name, in the dependent's namespace, holding the referenced uid):
/// deleted once every owner is gone, the references to gone owners dropped while another
/// owner is there. A reference to an owner that could not be there (another namespace's,
/// another name's uid) is dangling too; one kube cannot look up leaves it alone.
pub(super) fn settle_dependent(graph: &Graph, key: &str, locate: &dyn Locate) -> Option<Action> {
    let node = graph.nodes.get(key)?;
    let namespace = namespaced(key).map(|(_, namespace)| namespace);
    let mut dangling: Vec<String> = Vec::new();
    for reference in &node.coordinates {
        let there = match locate.locate(reference, namespace) {
            Whereabouts::At(owner_key) => graph.stored_at(&reference.uid, &owner_key),
            Whereabouts::Unserved => graph.alive(&reference.uid),
            Whereabouts::OutOfScope => return None,
        };
        if !there && !dangling.iter().any(|d| **d == *reference.uid) {
            dangling.push(reference.uid.to_string());
        }
    }
    if dangling.is_empty() {
        return None;
    }
    if node.owners().all(|o| dangling.iter().any(|d| **d == **o)) {
        return (!node.deleting).then(|| Action::Delete(key.to_string()));
    }
    Some(Action::DropOwners(key.to_string(), dangling))
}

/// The actions that settle one owner.
pub(super) fn settle_owner(graph: &Graph, uid: &str, locate: &dyn Locate) -> Vec<Action> {
    let dependents: Vec<&Shared> = graph.dependents.get(uid).map(|s| s.iter().collect()).unwrap_or_default();
    if !graph.alive(uid) {
        return dependents.into_iter().filter_map(|key| settle_dependent(graph, key, locate)).collect();
    }
    // An owner with no node is not being deleted: nothing to do for it.
    let Some(owner_key) = graph.key_of_uid.get(uid) else { return Vec::new() };
    let Some(owner) = graph.nodes.get(owner_key) else { return Vec::new() };
    if !owner.deleting {
        return Vec::new();
    }
    let has = |f: &str| owner.finalizers.iter().any(|x| x == f);
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

/// One object in a namespace being deleted, as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Content {
    pub(super) key: String,
    pub(super) deleting: bool,
}

/// The actions that settle the namespace stored at `key`, being deleted, holding `content`:
/// delete what is not being deleted yet; once nothing is left, clear its finalizers.
pub(super) fn settle_namespace(key: &str, namespace: &Node, content: &[Content]) -> Vec<Action> {
    if !namespace.deleting {
        return Vec::new();
    }
    if content.is_empty() {
        return if namespace.namespace_finalizers.is_empty() {
            Vec::new()
        } else {
            vec![Action::FinalizeNamespace(key.to_string())]
        };
    }
    content.iter().filter(|c| !c.deleting).map(|c| Action::Delete(c.key.clone())).collect()
}

#[cfg(test)]
mod tests {
    use super::super::graph::tests::{deleting, graph, node};
    use super::*;

    /// Owners of kinds the engine does not serve: judged by uid alone.
    struct ByUid;

    impl Locate for ByUid {
        fn locate(&self, _: &Coordinates, _: Option<&str>) -> Whereabouts {
            Whereabouts::Unserved
        }
    }

    /// A served namespaced kind `Widget` (`/registry/g/widgets/`) and a cluster-scoped
    /// `Gadget` (`/registry/g/gadgets/`).
    struct Served;

    impl Locate for Served {
        fn locate(&self, r: &Coordinates, namespace: Option<&str>) -> Whereabouts {
            match (&*r.kind, namespace) {
                ("Widget", Some(ns)) => Whereabouts::At(format!("/registry/g/widgets/{ns}/{}", r.name)),
                ("Widget", None) => Whereabouts::OutOfScope,
                ("Gadget", _) => Whereabouts::At(format!("/registry/g/gadgets/{}", r.name)),
                _ => Whereabouts::Unserved,
            }
        }
    }

    fn owned_by(uid: &str, owners: &[(&str, &str, &str)]) -> Node {
        let mut n = node(uid, &[]);
        n.coordinates = owners
            .iter()
            .map(|&(uid, kind, name)| Coordinates {
                uid: uid.into(),
                api_version: "g/v1".into(),
                kind: kind.into(),
                name: name.into(),
            })
            .collect();
        n
    }

    #[test]
    fn an_owner_is_looked_up_by_kind_and_name_in_the_dependent_s_namespace() {
        let g = graph(vec![
            ("/registry/g/widgets/a/w", node("w", &[])),
            ("/registry/g/gadgets/gg", node("gg", &[])),
            // Right: the owner in its namespace, a cluster-scoped owner from anywhere.
            ("/registry/g/things/a/ok", owned_by("ok", &[("w", "Widget", "w"), ("gg", "Gadget", "gg")])),
            // Another namespace's widget, and a name that is not the uid's.
            ("/registry/g/things/b/elsewhere", owned_by("e", &[("w", "Widget", "w")])),
            ("/registry/g/things/a/renamed", owned_by("r", &[("w", "Widget", "x")])),
            // One owner right, one from another namespace: the wrong reference goes.
            ("/registry/g/things/b/half", owned_by("h", &[("gg", "Gadget", "gg"), ("w", "Widget", "w")])),
            // A cluster-scoped dependent of a namespaced kind: left alone.
            ("/registry/g/gizmos/z", owned_by("z", &[("w", "Widget", "w"), ("nope", "Gadget", "nope")])),
        ]);
        let settle = |key: &str| settle_dependent(&g, key, &Served);
        assert_eq!(settle("/registry/g/things/a/ok"), None);
        assert_eq!(
            settle("/registry/g/things/b/elsewhere"),
            Some(Action::Delete("/registry/g/things/b/elsewhere".into()))
        );
        assert_eq!(settle("/registry/g/things/a/renamed"), Some(Action::Delete("/registry/g/things/a/renamed".into())));
        assert_eq!(
            settle("/registry/g/things/b/half"),
            Some(Action::DropOwners("/registry/g/things/b/half".into(), vec!["w".into()]))
        );
        assert_eq!(settle("/registry/g/gizmos/z"), None);
    }

    #[test]
    fn dependents_of_a_gone_owner_are_deleted_unless_another_owner_lives() {
        let g =
            graph(vec![("/k/a", node("a", &["gone"])), ("/k/b", node("b", &["gone", "c"])), ("/k/c", node("c", &[]))]);
        let actions = settle_owner(&g, "gone", &ByUid);
        assert_eq!(
            actions,
            vec![Action::Delete("/k/a".into()), Action::DropOwners("/k/b".into(), vec!["gone".into()])]
        );
    }

    #[test]
    fn orphaning_drops_references_then_the_finalizer() {
        let owner = deleting(node("o", &[]), &[ORPHAN_FINALIZER], &[]);
        let g = graph(vec![("/k/o", owner.clone()), ("/k/d", node("d", &["o"]))]);
        assert_eq!(settle_owner(&g, "o", &ByUid), vec![Action::DropOwners("/k/d".into(), vec!["o".into()])]);
        let g = graph(vec![("/k/o", owner)]);
        assert_eq!(settle_owner(&g, "o", &ByUid), vec![Action::ClearFinalizer("/k/o".into(), ORPHAN_FINALIZER)]);
    }

    #[test]
    fn foreground_deletes_dependents_before_the_owner() {
        let owner = deleting(node("o", &[]), &[FOREGROUND_FINALIZER], &[]);
        let g = graph(vec![("/k/o", owner.clone()), ("/k/d", node("d", &["o"]))]);
        assert_eq!(settle_owner(&g, "o", &ByUid), vec![Action::Delete("/k/d".into())]);
        let g = graph(vec![("/k/o", owner)]);
        assert_eq!(settle_owner(&g, "o", &ByUid), vec![Action::ClearFinalizer("/k/o".into(), FOREGROUND_FINALIZER)]);
    }

    #[test]
    fn a_live_owner_not_being_deleted_needs_nothing() {
        let g = graph(vec![("/k/o", node("o", &[])), ("/k/d", node("d", &["o"]))]);
        assert!(settle_owner(&g, "o", &ByUid).is_empty());
    }

    #[test]
    fn a_terminating_namespace_is_emptied_then_finalized() {
        let ns = deleting(node("ns-uid", &[]), &[], &["kubernetes"]);
        let key = "/registry/core/namespaces/team";
        let content = |key: &str, deleting| Content { key: key.into(), deleting };
        assert_eq!(
            settle_namespace(
                key,
                &ns,
                &[content("/registry/g/p/team/x", false), content("/registry/g/p/team/y", true)]
            ),
            vec![Action::Delete("/registry/g/p/team/x".into())]
        );
        assert_eq!(settle_namespace(key, &ns, &[]), vec![Action::FinalizeNamespace(key.into())]);
        // Finalized already, or not being deleted: nothing.
        assert!(settle_namespace(key, &deleting(node("ns-uid", &[]), &[], &[]), &[]).is_empty());
        assert!(settle_namespace(key, &node("ns-uid", &[]), &[content("/registry/g/p/team/x", false)]).is_empty());
    }
}
