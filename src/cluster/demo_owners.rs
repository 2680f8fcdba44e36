//! The demo's owner chains. Owner references name their owner by uid, which the server
//! gives on create, so they cannot be in the demo files: [`link`] reads each owner's uid
//! after the files are applied and writes the references. There is no dangling reference
//! to show an owner missing: the engine's garbage collector, as kube-controller-manager's,
//! deletes an object whose owners are all gone and drops a dangling reference beside a
//! live one.
//!
//! In `team-a`: the cluster-scoped ClusterPolicy `policy-01` owns the Database
//! `postgres-01`, which controls the Widgets `widget-001` and `widget-002` and the
//! ConfigMap `postgres-01-config`.

use super::error::ClusterError;
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams};
use serde_json::{Value, json};

/// An object of the demo, by kind and where it is.
#[derive(Debug, Clone, Copy)]
struct At {
    api_version: &'static str,
    kind: &'static str,
    plural: &'static str,
    namespace: Option<&'static str>,
    name: &'static str,
}

const fn demo(kind: &'static str, plural: &'static str, namespace: Option<&'static str>, name: &'static str) -> At {
    At { api_version: "demo.example.com/v1", kind, plural, namespace, name }
}

const POLICY: At = demo("ClusterPolicy", "clusterpolicies", None, "policy-01");
const DATABASE: At = demo("Database", "databases", Some("team-a"), "postgres-01");

/// Dependents and their owners (`true`: the controller).
const LINKS: &[(At, &[(At, bool)])] = &[
    (DATABASE, &[(POLICY, false)]),
    (demo("Widget", "widgets", Some("team-a"), "widget-001"), &[(DATABASE, true)]),
    (demo("Widget", "widgets", Some("team-a"), "widget-002"), &[(DATABASE, true)]),
    (
        At {
            api_version: "v1",
            kind: "ConfigMap",
            plural: "configmaps",
            namespace: Some("team-a"),
            name: "postgres-01-config",
        },
        &[(DATABASE, true)],
    ),
];

fn api(client: &kube::Client, at: At) -> Api<DynamicObject> {
    let (group, version) = at.api_version.split_once('/').unwrap_or(("", at.api_version));
    let ar = ApiResource {
        group: group.into(),
        version: version.into(),
        api_version: at.api_version.into(),
        kind: at.kind.into(),
        plural: at.plural.into(),
    };
    match at.namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &ar),
        None => Api::all_with(client.clone(), &ar),
    }
}

fn reference(at: At, uid: &str, controller: bool) -> Value {
    json!({"apiVersion": at.api_version, "kind": at.kind, "name": at.name, "uid": uid, "controller": controller})
}

/// The demo's owner references are what a controller would write: they are recorded as
/// its, so the demo's objects show a second field manager beside `kubectl crd apply`.
const OWNERS_MANAGER: &str = "demo-controller";

async fn patch_owners(client: &kube::Client, at: At, refs: Vec<Value>) -> Result<(), ClusterError> {
    let body = json!({"metadata": {"ownerReferences": refs}});
    let params = PatchParams { field_manager: Some(OWNERS_MANAGER.into()), ..Default::default() };
    api(client, at)
        .patch(at.name, &params, &Patch::Merge(&body))
        .await
        .map_err(|e| ClusterError::from_kube(e, None))?;
    Ok(())
}

/// Writes the demo's owner references (again: a second run writes the same).
pub async fn link(client: &kube::Client) -> Result<(), ClusterError> {
    for (dependent, owners) in LINKS {
        let mut refs = vec![];
        for (owner, controller) in owners.iter() {
            let obj = api(client, *owner).get(owner.name).await.map_err(|e| ClusterError::from_kube(e, None))?;
            refs.push(reference(*owner, &obj.metadata.uid.unwrap_or_default(), *controller));
        }
        patch_owners(client, *dependent, refs).await?;
    }
    Ok(())
}
