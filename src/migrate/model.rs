//! What a migration moves and where to: the [`Identity`] of the old and the new kind,
//! objects' [`ObjectKey`]s, and the [`Mapping`] that turns a backed-up object into the
//! object to create (server fields stripped, apiVersion, kind and namespace mapped,
//! references to other migrated objects left for re-adoption). Pure functions only.

use crate::cluster::ResourceType;
use crate::cluster::registrations::Crd;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// The metadata a server fills in; a create must not carry them.
const SERVER_FIELDS: [&str; 8] = [
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "generation",
    "managedFields",
    "selfLink",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
];

/// The finalizer the API server adds for `propagationPolicy=Orphan`.
pub const ORPHAN_FINALIZER: &str = "orphan";

/// One kind of custom resource as a migration addresses it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Identity {
    pub group: String,
    /// The version objects are read and written at.
    pub version: String,
    pub kind: String,
    pub plural: String,
    pub namespaced: bool,
    /// `/status` is served: a create drops the status, which goes through `/status` after.
    pub status: bool,
}

impl Identity {
    /// The kind a CRD serves under its spec names at `version` (its storage version when
    /// `None`). `None` when the CRD has no such version.
    pub fn of_crd(crd: &Crd, version: Option<&str>) -> Option<Identity> {
        let v = match version {
            Some(name) => crd.spec.versions.iter().find(|v| v.name == name)?,
            None => crd
                .spec
                .versions
                .iter()
                .find(|v| v.storage && v.served)
                .or_else(|| crd.spec.versions.iter().find(|v| v.served))?,
        };
        Some(Identity {
            group: crd.spec.group.clone(),
            version: v.name.clone(),
            kind: crd.spec.names.kind.clone(),
            plural: crd.spec.names.plural.clone(),
            namespaced: crd.spec.scope == "Namespaced",
            status: v.subresources.as_ref().is_some_and(|s| s.status.is_some()),
        })
    }

    /// `group/version`.
    pub fn api_version(&self) -> String {
        format!("{}/{}", self.group, self.version)
    }

    /// `plural.group`, the CRD's name.
    pub fn crd_name(&self) -> String {
        format!("{}.{}", self.plural, self.group)
    }

    /// The resource as the cluster layer addresses it.
    pub fn resource(&self) -> ResourceType {
        let mut r = resource_type(&self.group, &self.version, &self.kind, &self.plural, self.namespaced);
        r.status = self.status;
        r
    }
}

/// A resource type to address objects with, from what the journal keeps of it (no
/// subresources; callers say which are served).
pub fn resource_type(group: &str, version: &str, kind: &str, plural: &str, namespaced: bool) -> ResourceType {
    ResourceType {
        group: group.to_string(),
        version: version.to_string(),
        kind: kind.to_string(),
        plural: plural.to_string(),
        singular: kind.to_ascii_lowercase(),
        short_names: vec![],
        categories: vec![],
        namespaced,
        verbs: vec![],
        status: false,
        scale: false,
        preferred: true,
    }
}

/// An object's address within one kind: namespace (`None` when cluster-scoped) and name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ObjectKey {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    pub name: String,
}

impl ObjectKey {
    /// The key of an object document.
    pub fn of(obj: &Value) -> ObjectKey {
        let meta = obj.get("metadata");
        let s =
            |k: &str| meta.and_then(|m| m.get(k)).and_then(Value::as_str).filter(|s| !s.is_empty()).map(String::from);
        ObjectKey { namespace: s("namespace"), name: s("name").unwrap_or_default() }
    }

    /// The namespace for requests (`""` for cluster-scoped objects, which ignore it).
    pub fn ns(&self) -> &str {
        self.namespace.as_deref().unwrap_or("")
    }
}

impl std::fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{ns}/{}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

/// An object's uid, or `""`.
pub fn uid(obj: &Value) -> &str {
    obj.pointer("/metadata/uid").and_then(Value::as_str).unwrap_or_default()
}

/// The uids of `objects` (those that have one).
pub fn uids(objects: &[Value]) -> HashSet<String> {
    objects.iter().map(|o| uid(o).to_string()).filter(|u| !u.is_empty()).collect()
}

/// The keys of the `objects` being deleted (waiting for finalizers).
pub fn being_deleted(objects: &[Value]) -> Vec<String> {
    objects
        .iter()
        .filter(|o| o.pointer("/metadata/deletionTimestamp").is_some())
        .map(|o| ObjectKey::of(o).to_string())
        .collect()
}

/// An object's ownerReferences (empty when it has none).
pub fn owner_refs(obj: &Value) -> Vec<Value> {
    obj.pointer("/metadata/ownerReferences").and_then(Value::as_array).cloned().unwrap_or_default()
}

fn ref_uid(r: &Value) -> &str {
    r.get("uid").and_then(Value::as_str).unwrap_or_default()
}

/// Removes what the server fills in from an object's metadata.
pub fn strip_server_fields(obj: &mut Value) {
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        for f in SERVER_FIELDS {
            meta.remove(f);
        }
    }
}

/// How backed-up objects of the old kind become objects of another kind (the new one; or
/// the old one again when rolling back).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Mapping {
    pub from: Identity,
    pub to: Identity,
    /// Old version → new version, for objects (exported data) that carry several versions.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub versions: BTreeMap<String, String>,
    /// Where objects of a cluster-scoped kind go when the new kind is namespaced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub into_namespace: Option<String>,
}

impl Mapping {
    /// The same objects, mapped to `to` instead (rollback maps the backup to the old kind).
    pub fn towards(&self, to: &Identity) -> Mapping {
        Mapping { from: self.from.clone(), to: to.clone(), versions: BTreeMap::new(), into_namespace: None }
    }

    /// Where an object of the old kind lives in the new one.
    pub fn key(&self, old: &ObjectKey) -> ObjectKey {
        let namespace =
            if self.to.namespaced { old.namespace.clone().or_else(|| self.into_namespace.clone()) } else { None };
        ObjectKey { namespace, name: old.name.clone() }
    }

    /// The namespaces the `objects` of the old kind go to.
    pub fn target_namespaces(&self, objects: &[Value]) -> BTreeSet<String> {
        objects.iter().filter_map(|o| self.key(&ObjectKey::of(o)).namespace).collect()
    }

    /// The apiVersion a backed-up object gets.
    pub fn api_version_for(&self, old: &Value) -> String {
        let old_version = old
            .get("apiVersion")
            .and_then(Value::as_str)
            .and_then(|av| av.rsplit_once('/').map(|(_, v)| v))
            .unwrap_or(&self.from.version);
        let version = self.versions.get(old_version).unwrap_or(&self.to.version);
        format!("{}/{version}", self.to.group)
    }

    /// The object to create for a backed-up one: server fields stripped, apiVersion, kind
    /// and namespace mapped, and ownerReferences to other migrated objects (`migrated`
    /// uids) removed — they are re-adopted once their owners exist under their new uids
    /// (a reference to a uid that does not exist would make the garbage collector delete
    /// the object). The status stays; a create drops it where `/status` is served.
    pub fn object(&self, old: &Value, migrated: &HashSet<String>) -> Value {
        let mut obj = old.clone();
        strip_server_fields(&mut obj);
        let key = self.key(&ObjectKey::of(old));
        obj["apiVersion"] = json!(self.api_version_for(old));
        obj["kind"] = json!(self.to.kind);
        if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
            match key.namespace {
                Some(ns) => {
                    meta.insert("namespace".into(), json!(ns));
                }
                None => {
                    meta.remove("namespace");
                }
            }
            let refs: Vec<Value> = owner_refs(old).into_iter().filter(|r| !migrated.contains(ref_uid(r))).collect();
            if refs.is_empty() {
                meta.remove("ownerReferences");
            } else {
                meta.insert("ownerReferences".into(), Value::Array(refs));
            }
        }
        obj
    }
}

/// Old uids of migrated objects → their identity now (uid, apiVersion, kind).
#[derive(Debug, Clone, Default)]
pub struct Adoption {
    owners: HashMap<String, NewOwner>,
    /// The current uids, to recognise references already rewritten.
    new_uids: HashSet<String>,
}

/// A migrated owner under its current identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewOwner {
    pub uid: String,
    pub api_version: String,
    pub kind: String,
}

impl Adoption {
    /// Records that the object whose uid was `old_uid` is now `owner`.
    pub fn insert(&mut self, old_uid: String, owner: NewOwner) {
        self.new_uids.insert(owner.uid.clone());
        self.owners.insert(old_uid, owner);
    }

    /// The ownerReferences a dependent should have: its backed-up references with every
    /// migrated owner replaced by its current identity (references whose owner is not
    /// there are left out), plus any reference added since the backup that is not to a
    /// migrated object (`current`).
    pub fn desired_refs(&self, backed_up: &[Value], current: &[Value], migrated_old: &HashSet<String>) -> Vec<Value> {
        let mut out: Vec<Value> = Vec::new();
        for r in backed_up {
            let uid = ref_uid(r);
            if migrated_old.contains(uid) {
                if let Some(owner) = self.owners.get(uid) {
                    let mut mapped = r.clone();
                    mapped["uid"] = json!(owner.uid);
                    mapped["apiVersion"] = json!(owner.api_version);
                    mapped["kind"] = json!(owner.kind);
                    out.push(mapped);
                }
            } else {
                out.push(r.clone());
            }
        }
        for r in current {
            let uid = ref_uid(r);
            let known = out.iter().any(|o| ref_uid(o) == uid);
            if !known && !migrated_old.contains(uid) && !self.new_uids.contains(uid) {
                out.push(r.clone());
            }
        }
        out
    }
}

/// Two ownerReference lists are the same links (order aside).
pub fn same_refs(a: &[Value], b: &[Value]) -> bool {
    let norm = |refs: &[Value]| {
        let mut v: Vec<String> = refs
            .iter()
            .map(|r| {
                let s = |k: &str| r.get(k).map(|v| v.to_string()).unwrap_or_default();
                format!("{}|{}|{}|{}|{}", s("apiVersion"), s("kind"), s("name"), s("uid"), s("controller"))
            })
            .collect();
        v.sort();
        v
    };
    norm(a) == norm(b)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn identity(group: &str, kind: &str, namespaced: bool, status: bool) -> Identity {
        Identity {
            group: group.into(),
            version: "v1".into(),
            kind: kind.into(),
            plural: format!("{}s", kind.to_ascii_lowercase()),
            namespaced,
            status,
        }
    }

    fn mapping() -> Mapping {
        Mapping {
            from: identity("old.example.com", "CronTab", true, false),
            to: identity("new.example.com", "Schedule", true, true),
            versions: BTreeMap::new(),
            into_namespace: None,
        }
    }

    #[test]
    fn objects_map_to_the_new_kind_without_server_fields() {
        let old = json!({"apiVersion": "old.example.com/v1", "kind": "CronTab",
            "metadata": {"name": "a", "namespace": "team", "uid": "u-a", "resourceVersion": "7", "generation": 3,
                "creationTimestamp": "2020-01-01T00:00:00Z", "labels": {"x": "1"}, "finalizers": ["f"],
                "ownerReferences": [{"apiVersion": "old.example.com/v1", "kind": "CronTab", "name": "b", "uid": "u-b"},
                                    {"apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": "u-c"}]},
            "spec": {"cron": "* * * * *"}, "status": {"phase": "Ok"}});
        let migrated: HashSet<String> = ["u-a".to_string(), "u-b".to_string()].into();
        let new = mapping().object(&old, &migrated);
        assert_eq!(new["apiVersion"], "new.example.com/v1");
        assert_eq!(new["kind"], "Schedule");
        assert_eq!(new["metadata"]["namespace"], "team");
        assert_eq!(new["metadata"]["labels"], json!({"x": "1"}));
        assert_eq!(new["metadata"]["finalizers"], json!(["f"]));
        for gone in ["uid", "resourceVersion", "generation", "creationTimestamp"] {
            assert!(new["metadata"].get(gone).is_none(), "{gone}");
        }
        assert_eq!(
            new["metadata"]["ownerReferences"],
            json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": "u-c"}])
        );
        assert_eq!(new["status"], json!({"phase": "Ok"}));
    }

    #[test]
    fn scope_changes_move_the_namespace() {
        let mut m = mapping();
        m.to.namespaced = false;
        let key = ObjectKey { namespace: Some("team".into()), name: "a".into() };
        assert_eq!(m.key(&key), ObjectKey { namespace: None, name: "a".into() });
        let obj = m.object(&json!({"metadata": {"name": "a", "namespace": "team"}}), &HashSet::new());
        assert!(obj["metadata"].get("namespace").is_none());
        let mut m = mapping();
        m.from.namespaced = false;
        m.into_namespace = Some("moved".into());
        assert_eq!(m.key(&ObjectKey { namespace: None, name: "a".into() }).namespace.as_deref(), Some("moved"));
    }

    #[test]
    fn versions_map_by_the_object_s_own_api_version() {
        let mut m = mapping();
        m.versions.insert("v1beta1".into(), "v2".into());
        assert_eq!(m.api_version_for(&json!({"apiVersion": "old.example.com/v1beta1"})), "new.example.com/v2");
        assert_eq!(m.api_version_for(&json!({"apiVersion": "old.example.com/v1"})), "new.example.com/v1");
    }

    #[test]
    fn dependents_are_readopted_by_the_new_uids() {
        let mut adoption = Adoption::default();
        adoption.insert(
            "old-1".into(),
            NewOwner { uid: "new-1".into(), api_version: "new.example.com/v1".into(), kind: "Schedule".into() },
        );
        let migrated: HashSet<String> = ["old-1".to_string()].into();
        let backed_up = vec![
            json!({"apiVersion": "old.example.com/v1", "kind": "CronTab", "name": "a", "uid": "old-1", "controller": true}),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "name": "other", "uid": "cm-1"}),
        ];
        // Orphaning removed the reference to the old owner; someone added another since.
        let current =
            vec![backed_up[1].clone(), json!({"apiVersion": "v1", "kind": "Secret", "name": "s", "uid": "s-1"})];
        let desired = adoption.desired_refs(&backed_up, &current, &migrated);
        assert_eq!(desired.len(), 3);
        assert_eq!(
            desired[0],
            json!({"apiVersion": "new.example.com/v1", "kind": "Schedule", "name": "a", "uid": "new-1", "controller": true})
        );
        assert!(same_refs(&desired, &adoption.desired_refs(&backed_up, &desired, &migrated)), "idempotent");
        assert!(!same_refs(&desired, &current));
    }
}
