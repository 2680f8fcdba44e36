//! What the collector does about an owner or a namespace: pure, from the graph (and, for
//! a namespace, its content as listed), so every decision can be made again after any
//! change or a restart.

use super::graph::{Graph, Node, Shared};
use crate::resources::rest::{FOREGROUND_FINALIZER, ORPHAN_FINALIZER};

/// One step the collector takes; computed from the graph, then carried out.
#[derive(Debug, Clone, PartialEq, Eq)]
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

/// The actions that settle one owner.
pub(super) fn settle_owner(graph: &Graph, uid: &str) -> Vec<Action> {
    let dependents: Vec<&Shared> = graph.dependents.get(uid).map(|s| s.iter().collect()).unwrap_or_default();
    if !graph.alive(uid) {
        return dependents
            .into_iter()
            .filter_map(|key| {
                let node = graph.nodes.get(key)?;
                let dead: Vec<String> = node.owners.iter().filter(|o| !graph.alive(o)).map(|o| o.to_string()).collect();
                if dead.len() == node.owners.len() {
                    (!node.deleting).then(|| Action::Delete(key.to_string()))
                } else {
                    Some(Action::DropOwners(key.to_string(), dead))
                }
            })
            .collect();
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
