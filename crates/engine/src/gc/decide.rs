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

/// An owner reference as kube's collector names it in a warning.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct OwnerRef {
    pub(super) api_version: String,
    pub(super) kind: String,
    pub(super) name: String,
    pub(super) uid: String,
}

/// One step the collector takes; computed from the graph, then carried out.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Action {
    /// Record kube's `OwnerRefInvalidNamespace` Warning Event on the object at this key:
    /// the owner it names lives in another namespace.
    WarnInvalidNamespace(String, OwnerRef),
    /// Delete the object at this key (its own finalizers still apply).
    Delete(String),
    /// Remove the references to these owners from the object at this key.
    DropOwners(String, Vec<String>),
    /// Clear a finalizer from the object at this key.
    ClearFinalizer(String, &'static str),
    /// Take the namespace controller's token from a namespace's `spec.finalizers` (and let
    /// it go when none is left).
    FinalizeNamespace(String),
    /// Set the deletion conditions of the namespace at this key from what remains in it.
    ReportContent(String, Remaining),
}

impl Action {
    /// The object the action writes.
    pub(super) fn key(&self) -> &str {
        match self {
            Action::WarnInvalidNamespace(key, _)
            | Action::Delete(key)
            | Action::DropOwners(key, _)
            | Action::ClearFinalizer(key, _)
            | Action::FinalizeNamespace(key)
            | Action::ReportContent(key, _) => key,
        }
    }
}

/// What the dependent stored at `key` needs for its owners, as kube's collector finds
/// them (by kind and name, in the dependent's namespace, holding the referenced uid):
/// deleted once every owner is gone, the references to gone owners dropped while another
/// owner is there. A reference to an owner that could not be there (another namespace's,
/// another name's uid) is dangling too; one kube cannot look up leaves it alone. A
/// dangling reference whose uid an object in another namespace holds is first warned of,
/// as kube's graph builder does when it meets it.
pub(super) fn settle_dependent(graph: &Graph, key: &str, locate: &dyn Locate) -> Vec<Action> {
    let Some(node) = graph.nodes.get(key) else { return Vec::new() };
    let namespace = namespaced(key).map(|(_, namespace)| namespace);
    let mut dangling: Vec<&Coordinates> = Vec::new();
    for reference in &node.coordinates {
        let there = match locate.locate(reference, namespace) {
            Whereabouts::At(owner_key) => graph.stored_at(&reference.uid, &owner_key),
            Whereabouts::Unserved => graph.alive(&reference.uid),
            Whereabouts::OutOfScope => return Vec::new(),
        };
        if !there && !dangling.iter().any(|d| d.uid == reference.uid) {
            dangling.push(reference);
        }
    }
    if dangling.is_empty() {
        return Vec::new();
    }
    let mut actions: Vec<Action> = dangling
        .iter()
        .filter(|r| graph.held_elsewhere(&r.uid, namespace.unwrap_or("")))
        .map(|r| {
            let owner = OwnerRef {
                api_version: r.api_version.to_string(),
                kind: r.kind.to_string(),
                name: r.name.to_string(),
                uid: r.uid.to_string(),
            };
            Action::WarnInvalidNamespace(key.to_string(), owner)
        })
        .collect();
    if node.owners().all(|o| dangling.iter().any(|d| d.uid == *o)) {
        if !node.deleting {
            actions.push(Action::Delete(key.to_string()));
        }
    } else {
        actions.push(Action::DropOwners(key.to_string(), dangling.iter().map(|d| d.uid.to_string()).collect()));
    }
    actions
}

/// The actions that settle one owner.
pub(super) fn settle_owner(graph: &Graph, uid: &str, locate: &dyn Locate) -> Vec<Action> {
    let dependents: Vec<&Shared> = graph.dependents.get(uid).map(|s| s.iter().collect()).unwrap_or_default();
    if !graph.alive(uid) {
        return dependents.into_iter().flat_map(|key| settle_dependent(graph, key, locate)).collect();
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
    pub(super) finalizers: Vec<String>,
}

/// What kube's namespace deleter reports of a namespace's content, once it has deleted
/// what it could: the objects left (those with finalizers) by resource, and the
/// finalizers holding them, each as the condition's message lists it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub(super) struct Remaining {
    /// `plural.group has N resource instances`, sorted.
    pub(super) resources: Vec<String>,
    /// `finalizer in N resource instances`, sorted.
    pub(super) finalizers: Vec<String>,
}

impl Remaining {
    fn of(content: &[Content]) -> Remaining {
        let mut resources: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
        let mut finalizers: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
        for c in content.iter().filter(|c| !c.finalizers.is_empty()) {
            if let Some((group, plural)) = super::resource_of(&c.key) {
                // Go's `%s.%s` of resource and group: a core resource ends in a dot.
                *resources.entry(format!("{plural}.{group}")).or_default() += 1;
            }
            for f in &c.finalizers {
                *finalizers.entry(f).or_default() += 1;
            }
        }
        let mut resources: Vec<String> =
            resources.into_iter().map(|(r, n)| format!("{r} has {n} resource instances")).collect();
        let mut finalizers: Vec<String> =
            finalizers.into_iter().map(|(f, n)| format!("{f} in {n} resource instances")).collect();
        resources.sort();
        finalizers.sort();
        Remaining { resources, finalizers }
    }
}

/// The actions that settle the namespace stored at `key`, being deleted, holding `content`:
/// delete what is not being deleted yet and report what remains in its conditions, as
/// kube's namespace deleter does on each pass; once nothing is left, clear its finalizers.
pub(super) fn settle_namespace(key: &str, namespace: &Node, content: &[Content]) -> Vec<Action> {
    if !namespace.deleting {
        return Vec::new();
    }
    let report = Action::ReportContent(key.to_string(), Remaining::of(content));
    if content.is_empty() {
        return if namespace.namespace_finalizers.is_empty() {
            Vec::new()
        } else {
            vec![report, Action::FinalizeNamespace(key.to_string())]
        };
    }
    let mut actions: Vec<Action> =
        content.iter().filter(|c| !c.deleting).map(|c| Action::Delete(c.key.clone())).collect();
    actions.push(report);
    actions
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
        let warn = |key: &str| {
            let owner =
                OwnerRef { api_version: "g/v1".into(), kind: "Widget".into(), name: "w".into(), uid: "w".into() };
            Action::WarnInvalidNamespace(key.into(), owner)
        };
        assert_eq!(settle("/registry/g/things/a/ok"), []);
        // Another namespace's owner is warned of first, as kube's graph builder does.
        let elsewhere = "/registry/g/things/b/elsewhere";
        assert_eq!(settle(elsewhere), [warn(elsewhere), Action::Delete(elsewhere.into())]);
        assert_eq!(settle("/registry/g/things/a/renamed"), [Action::Delete("/registry/g/things/a/renamed".into())]);
        let half = "/registry/g/things/b/half";
        assert_eq!(settle(half), [warn(half), Action::DropOwners(half.into(), vec!["w".into()])]);
        assert_eq!(settle("/registry/g/gizmos/z"), []);
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
        let content = |key: &str, deleting, finalizers: &[&str]| Content {
            key: key.into(),
            deleting,
            finalizers: finalizers.iter().map(|f| f.to_string()).collect(),
        };
        let held = Remaining {
            resources: vec!["configmaps. has 1 resource instances".into(), "p.g has 2 resource instances".into()],
            finalizers: vec!["a/hold in 2 resource instances".into(), "b/hold in 2 resource instances".into()],
        };
        assert_eq!(
            settle_namespace(
                key,
                &ns,
                &[
                    content("/registry/g/p/team/x", false, &[]),
                    content("/registry/g/p/team/y", true, &["a/hold", "b/hold"]),
                    content("/registry/g/p/team/z", false, &["a/hold"]),
                    content("/registry/core/configmaps/team/c", true, &["b/hold"]),
                ]
            ),
            vec![
                Action::Delete("/registry/g/p/team/x".into()),
                Action::Delete("/registry/g/p/team/z".into()),
                Action::ReportContent(key.into(), held),
            ]
        );
        assert_eq!(
            settle_namespace(key, &ns, &[]),
            vec![Action::ReportContent(key.into(), Remaining::default()), Action::FinalizeNamespace(key.into())]
        );
        // Finalized already, or not being deleted: nothing.
        assert!(settle_namespace(key, &deleting(node("ns-uid", &[]), &[], &[]), &[]).is_empty());
        assert!(settle_namespace(key, &node("ns-uid", &[]), &[content("/registry/g/p/team/x", false, &[])]).is_empty());
    }
}
