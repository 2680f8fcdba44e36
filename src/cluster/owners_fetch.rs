//! The IO half of the owner tree: one list request per listable kind the server serves
//! (its preferred version), in one namespace or all, read into an [`owners::Graph`].
//! Never a request per object: references are matched by uid in memory.

use super::discovery::{Discovery, ResourceType};
use super::error::ClusterError;
use super::owners::{Graph, Node};
use futures::stream::{self, StreamExt};
use kube::api::ListParams;

/// Lists running at once: enough to hide latency, few enough not to flood a live server.
const CONCURRENT_LISTS: usize = 8;

/// Where to look for owners and dependents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// Namespaced kinds in this namespace, and cluster-scoped kinds: everything a namespaced
    /// object can be owned by or own (owner references never cross namespaces).
    Namespace(String),
    /// Every namespace (the dependents of a cluster-scoped object may be in any).
    All,
}

/// What the lists brought.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listed {
    pub graph: Graph,
    /// The kinds listed.
    pub kinds: Vec<ResourceType>,
    /// Kinds that could not be listed (forbidden, gone meanwhile), with why.
    pub skipped: Vec<(String, String)>,
}

/// The kinds worth one list each: preferred versions that can be listed.
pub fn listable(discovery: &Discovery) -> Vec<ResourceType> {
    let mut out: Vec<ResourceType> = vec![];
    for r in discovery.resources() {
        let dup = out.iter().any(|o| o.group == r.group && o.plural == r.plural);
        if r.preferred && r.verbs.iter().any(|v| v == "list") && !dup {
            out.push(r.clone());
        }
    }
    out
}

/// Reads discovery, then lists every listable kind once, in `scope`.
pub async fn list_everything(client: &kube::Client, scope: &Scope) -> Result<Listed, ClusterError> {
    let kinds = listable(&Discovery::fetch(client).await?);
    let namespace = match scope {
        Scope::Namespace(ns) => Some(ns.clone()),
        Scope::All => None,
    };
    // Owned futures: the TUI runs this in a spawned task, which borrowed ones upset.
    let lists = stream::iter(kinds.iter().cloned().map(|kind| {
        let api = kind.api(client, namespace.as_deref());
        async move {
            let result = api.list(&ListParams::default()).await;
            (kind, result)
        }
    }))
    .buffered(CONCURRENT_LISTS)
    .collect::<Vec<_>>()
    .await;
    let mut nodes = vec![];
    let mut skipped = vec![];
    for (kind, result) in lists {
        match result {
            Ok(list) => {
                let api_version = kind.api_version();
                for obj in list.items {
                    let value = serde_json::to_value(&obj).unwrap_or_default();
                    nodes.extend(Node::of(&api_version, &kind.kind, &value));
                }
            }
            Err(e) => skipped.push((kind.qualified_name(), ClusterError::from_kube(e, None).to_string())),
        }
    }
    Ok(Listed { graph: Graph::build(nodes), kinds, skipped })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::discovery::tests::resource;

    #[test]
    fn one_list_per_kind_at_its_preferred_version_and_only_where_list_is_allowed() {
        let with = |r: ResourceType, verbs: &[&str], preferred: bool| ResourceType {
            verbs: verbs.iter().map(|v| v.to_string()).collect(),
            preferred,
            ..r
        };
        let d = Discovery::from_resources(vec![
            with(resource("", "v1", "ConfigMap", "configmaps", &[]), &["get", "list", "watch"], true),
            with(resource("demo.example.com", "v1", "Database", "databases", &[]), &["list"], true),
            with(resource("demo.example.com", "v1beta1", "Database", "databases", &[]), &["list"], false),
            with(
                resource("authorization.k8s.io", "v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews", &[]),
                &["create"],
                true,
            ),
        ]);
        let kinds: Vec<String> = listable(&d).iter().map(|k| format!("{}/{}", k.api_version(), k.plural)).collect();
        assert_eq!(kinds, ["v1/configmaps", "demo.example.com/v1/databases"]);
    }
}
