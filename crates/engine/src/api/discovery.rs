//! Discovery documents built from the served kinds: `/api`, `/api/v1`, `/apis`,
//! `/apis/<group>`, `/apis/<group>/<version>`, and aggregated discovery (apidiscovery v2).
//!
//! Everything comes from [`Kinds`], which holds a CRD's *accepted* names, never its spec
//! names, so discovery publishes exactly what the names controller accepted.
//!
//! `/apis` in both forms is served from bytes cached by the kinds' generation, which moves
//! with every change to the served kinds: clients ask for it on every command, and with
//! thousands of CRDs building it took longer than anything else they ask for.

use crate::kinds::{Kinds, ServedKind};
use bytes::Bytes;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The documents that are cached.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Cached {
    /// Aggregated discovery of `/api`.
    AggregatedCore,
    /// Aggregated discovery of `/apis`.
    Aggregated,
    /// `/apis` as an `APIGroupList`.
    GroupList,
}

/// A cached document: its JSON, and for aggregated discovery its ETag.
#[derive(Clone)]
pub struct Document {
    pub json: Bytes,
    /// kube's `calculateETag`: SHA-512 of the list as `json.Marshal` writes it without its
    /// type (kube hashes the list it built, whose kind and apiVersion are unset), in
    /// upper-case hex.
    pub etag: Option<Arc<str>>,
}

/// Serialized documents by the generation of the kinds they were built from (unique in
/// the process, see [`Kinds::generation`]), the latest few: one per engine and document
/// in use is what is ever read again.
static CACHE: Mutex<Vec<(u64, Cached, Document)>> = Mutex::new(Vec::new());
const CACHED: usize = 32;

/// Document `which` of `kinds`' current state, built only when they changed.
pub fn cached(kinds: &Kinds, which: Cached) -> Document {
    let generation = kinds.generation();
    let lock = || CACHE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((_, _, doc)) = lock().iter().find(|(g, w, _)| *g == generation && *w == which) {
        return doc.clone();
    }
    let doc = match which {
        Cached::AggregatedCore => aggregated(kinds, true),
        Cached::Aggregated => aggregated(kinds, false),
        Cached::GroupList => group_list(kinds),
    };
    let json = Bytes::from(crate::resources::builtin::struct_json::to_vec(&doc));
    let etag = (which != Cached::GroupList).then(|| Arc::from(aggregated_etag(&json)));
    let doc = Document { json, etag };
    let mut cache = lock();
    if cache.len() >= CACHED {
        cache.remove(0);
    }
    cache.push((generation, which, doc.clone()));
    doc
}

/// How an aggregated discovery list's JSON begins: its type, as `struct_json` writes it.
const V2_TYPE: &[u8] = br#"{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","#;

/// The v2 list written as `json`, as v2beta1: the same fields under another apiVersion.
pub fn as_v2beta1(json: &[u8]) -> Vec<u8> {
    const V2BETA1: &[u8] = br#"{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2beta1","#;
    match json.strip_prefix(V2_TYPE) {
        Some(rest) => [V2BETA1, rest].concat(),
        None => json.to_vec(),
    }
}

/// The ETag of an aggregated discovery list written as `json` (see [`Document::etag`]).
fn aggregated_etag(json: &[u8]) -> String {
    use sha2::{Digest, Sha512};
    let mut sha = Sha512::new();
    match json.strip_prefix(V2_TYPE) {
        Some(rest) => {
            sha.update(b"{");
            sha.update(rest);
        }
        None => sha.update(json),
    }
    crate::openapi::compressed::upper_hex(&sha.finalize())
}

/// Groups (not core) with their versions in priority order, from the served kinds.
fn groups(kinds: &[ServedKind]) -> Vec<(String, Vec<String>)> {
    grouped(kinds.iter().map(|k| (k.info().group.as_str(), k.info().version.as_str())))
}

/// Groups (not core) with their versions as the aggregator lists them in `/apis` and
/// `/apis/<group>`: the built-in kinds' and every version a stored CRD registers, whether
/// the CRD is established or not (see [`crate::kinds::Registered`]).
fn registered_groups(kinds: &Kinds, only: Option<&str>) -> Vec<(String, Vec<String>)> {
    let wanted = |g: &str| only.is_none_or(|name| name == g);
    let builtin = kinds.builtin().iter().map(|k| (k.info().group.clone(), k.info().version.clone()));
    let all: Vec<(String, String)> = builtin.chain(kinds.registered()).filter(|(g, _)| wanted(g)).collect();
    grouped(all.iter().map(|(g, v)| (g.as_str(), v.as_str())))
}

/// Group-versions (core left out) as groups with their versions in priority order.
fn grouped<'a>(gvs: impl Iterator<Item = (&'a str, &'a str)>) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for (g, v) in gvs.filter(|(g, _)| !g.is_empty()) {
        match out.iter_mut().find(|(name, _)| name == g) {
            Some((_, versions)) => {
                if !versions.iter().any(|known| known == v) {
                    versions.push(v.to_string());
                }
            }
            None => out.push((g.to_string(), vec![v.to_string()])),
        }
    }
    for (_, versions) in &mut out {
        versions.sort_by(|a, b| crate::registry::versions::compare_priority(a, b));
    }
    // kube-apiserver lists its built-in groups in a fixed priority order (reference 03),
    // then the CRD groups as the aggregator meets them walking its APIServices by name
    // (`<version>.<group>`, one per served version): by the least such name of the group.
    out.sort_by_key(|(name, _)| BUILTIN_GROUP_ORDER.iter().position(|g| g == name).unwrap_or(usize::MAX));
    let builtin = out.iter().filter(|(g, _)| BUILTIN_GROUP_ORDER.contains(&g.as_str())).count();
    out[builtin..].sort_by_cached_key(|(g, versions)| versions.iter().map(|v| format!("{v}.{g}")).min());
    out
}

/// The order of kube-apiserver 1.32's built-in groups in `/apis`.
const BUILTIN_GROUP_ORDER: [&str; 19] = [
    "apiregistration.k8s.io",
    "apps",
    "events.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "networking.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "node.k8s.io",
    "discovery.k8s.io",
    "flowcontrol.apiserver.k8s.io",
];

fn group_doc(name: &str, versions: &[String]) -> Value {
    let gv = |v: &String| json!({"groupVersion": format!("{name}/{v}"), "version": v});
    json!({
        "name": name,
        "versions": versions.iter().map(gv).collect::<Vec<_>>(),
        "preferredVersion": versions.first().map(gv).unwrap_or(Value::Null),
    })
}

/// `/api`.
pub fn core_versions(server_address: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    })
}

/// `/apis`.
pub fn group_list(kinds: &Kinds) -> Value {
    let groups: Vec<Value> = registered_groups(kinds, None).iter().map(|(g, v)| group_doc(g, v)).collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `/apis/<group>`, if the group is served.
pub fn group(kinds: &Kinds, name: &str) -> Option<Value> {
    // Its own kinds only: copying every served kind was most of the answer with 2,000 CRDs.
    let (g, versions) = registered_groups(kinds, Some(name)).into_iter().find(|(g, _)| g == name)?;
    let mut doc = group_doc(&g, &versions);
    let map = doc.as_object_mut()?;
    let mut out = serde_json::Map::new();
    out.insert("kind".into(), json!("APIGroup"));
    out.insert("apiVersion".into(), json!("v1"));
    out.append(map);
    Some(Value::Object(out))
}

fn resource_entries(k: &ServedKind) -> Vec<Value> {
    let info = k.info();
    let mut main = json!({
        "name": info.plural,
        "singularName": info.singular,
        "namespaced": info.namespaced,
        "kind": info.kind,
        "verbs": k.discovery_verbs(),
    });
    if !info.short_names.is_empty() {
        main["shortNames"] = json!(info.short_names);
    }
    if !info.categories.is_empty() {
        main["categories"] = json!(info.categories);
    }
    if let Some(hash) = &k.storage_version_hash {
        main["storageVersionHash"] = json!(hash);
    }
    let mut out = vec![main];
    if info.status_subresource {
        out.push(json!({
            "name": format!("{}/status", info.plural), "singularName": "", "namespaced": info.namespaced,
            "kind": info.kind, "verbs": ["get", "patch", "update"],
        }));
    }
    if k.scale.is_some() {
        out.push(json!({
            "name": format!("{}/scale", info.plural), "singularName": "", "namespaced": info.namespaced,
            "group": "autoscaling", "version": "v1", "kind": "Scale", "verbs": ["get", "patch", "update"],
        }));
    }
    out
}

/// `/api/v1` (group "") or `/apis/<group>/<version>`, if served.
pub fn resource_list(kinds: &Kinds, group: &str, version: &str) -> Option<Value> {
    let served = kinds.matching(|i| i.group == group && i.version == version);
    if served.is_empty() {
        return None;
    }
    let group_version = if group.is_empty() { version.to_string() } else { format!("{group}/{version}") };
    let resources: Vec<Value> = served.iter().flat_map(resource_entries).collect();
    let mut doc = json!({"kind": "APIResourceList", "groupVersion": group_version, "resources": resources});
    // kube's legacy `/api/v1` handler writes its list without an apiVersion.
    if !group.is_empty() {
        doc["apiVersion"] = json!("v1");
    }
    Some(doc)
}

/// Aggregated discovery (`APIGroupDiscoveryList`, apidiscovery.k8s.io/v2) for `/api`
/// (`core = true`) or `/apis`.
pub fn aggregated(kinds: &Kinds, core: bool) -> Value {
    let all = kinds.all();
    let mut group_names: Vec<(String, Vec<String>)> =
        if core { vec![(String::new(), vec!["v1".to_string()])] } else { groups(&all) };
    // Aggregated discovery sorts groups by their APIService's priority, ties by name; every
    // CRD group has the same (1000, below any built-in), so CRD groups come by name.
    let builtin = group_names.iter().filter(|(g, _)| BUILTIN_GROUP_ORDER.contains(&g.as_str())).count();
    group_names[builtin..].sort_by(|a, b| a.0.cmp(&b.0));
    // By group-version once: a search of every kind per group-version was quadratic.
    let mut by_gv: HashMap<(&str, &str), Vec<&ServedKind>> = HashMap::new();
    for k in &all {
        by_gv.entry((k.info().group.as_str(), k.info().version.as_str())).or_default().push(k);
    }
    let items: Vec<Value> = group_names
        .iter()
        .map(|(g, versions)| {
            let versions: Vec<Value> = versions
                .iter()
                .map(|v| {
                    let resources: Vec<Value> = by_gv
                        .get(&(g.as_str(), v.as_str()))
                        .into_iter()
                        .flatten()
                        .map(|k| aggregated_resource(k, kinds.is_builtin(k)))
                        .collect();
                    json!({"version": v, "resources": resources, "freshness": "Current"})
                })
                .collect();
            let mut metadata = json!({"creationTimestamp": null});
            if !g.is_empty() {
                metadata["name"] = json!(g);
            }
            json!({"metadata": metadata, "versions": versions})
        })
        .collect();
    json!({"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": items})
}

/// One resource of aggregated discovery. kube-apiserver leaves the group and version of a
/// built-in kind's `responseKind` empty (reference 04); a CRD's are filled in.
fn aggregated_resource(k: &ServedKind, builtin: bool) -> Value {
    let info = k.info();
    let kind = if builtin {
        json!({"group": "", "version": "", "kind": info.kind})
    } else {
        json!({"group": info.group, "version": info.version, "kind": info.kind})
    };
    let mut r = json!({
        "resource": info.plural,
        "responseKind": kind,
        "scope": if info.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": info.singular,
        "verbs": k.discovery_verbs(),
    });
    if !info.short_names.is_empty() {
        r["shortNames"] = json!(info.short_names);
    }
    if !info.categories.is_empty() {
        r["categories"] = json!(info.categories);
    }
    let mut subs = Vec::new();
    if info.status_subresource {
        subs.push(json!({"subresource": "status", "responseKind": kind, "verbs": ["get", "patch", "update"]}));
    }
    if k.scale.is_some() {
        subs.push(json!({
            "subresource": "scale",
            "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"},
            "verbs": ["get", "patch", "update"],
        }));
    }
    if !subs.is_empty() {
        r["subresources"] = json!(subs);
    }
    r
}

#[cfg(test)]
mod tests {

    /// kube-apiserver 1.32's aggregated `/api` as it sent it (to a client not asking for
    /// pretty JSON), and the ETag it sent with it.
    #[test]
    fn the_etag_is_kubes_hash_of_the_list_without_its_type() {
        let json = include_bytes!("testdata/core-aggregated-discovery.json");
        let json = json.strip_suffix(b"\n").unwrap_or(json);
        assert_eq!(
            aggregated_etag(json),
            "7E2E4FBD8CDC884130EBFEF64757F6BC507A8EA6A2EA8F94E05F1B6F207B4E183C63D6D6EA5513FDDC10FC16233248F933DC787C288493D52745A3FAFD68CCD8"
        );
    }

    #[test]
    fn a_v2beta1_list_is_the_v2_list_under_its_own_api_version() {
        let v2 = br#"{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","metadata":{},"items":[]}"#;
        assert_eq!(
            as_v2beta1(v2),
            br#"{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2beta1","metadata":{},"items":[]}"#
        );
    }
    use super::*;
    use crate::kinds::Registered;

    fn register(kinds: &Kinds, crd: &str, versions: &[&str]) {
        let versions = versions.iter().map(|v| v.to_string()).collect();
        kinds.set_registered(crd, Some(Registered { group: "x.io".into(), versions }));
    }

    /// `/apis` and `/apis/<group>` list what CRDs register (the aggregator's APIServices),
    /// served or not; the version documents and aggregated discovery list served kinds only.
    #[test]
    fn group_lists_show_registered_versions_by_priority() {
        let kinds = Kinds::default();
        register(&kinds, "a.x.io", &["v1", "v10"]);
        register(&kinds, "b.x.io", &["v2", "v1"]);
        let versions = |doc: &Value| {
            doc["versions"].as_array().map(|v| v.iter().map(|g| g["version"].clone()).collect::<Vec<_>>())
        };
        let listed = group_list(&kinds);
        let group_doc = listed["groups"].as_array().and_then(|g| g.iter().find(|g| g["name"] == "x.io")).cloned();
        assert_eq!(group_doc.as_ref().and_then(versions), Some(vec![json!("v10"), json!("v2"), json!("v1")]));
        let one = group(&kinds, "x.io").expect("the group is listed");
        assert_eq!(versions(&one), Some(vec![json!("v10"), json!("v2"), json!("v1")]));
        assert_eq!(one["preferredVersion"]["version"], "v10");
        assert!(resource_list(&kinds, "x.io", "v10").is_none(), "nothing serves it");
        let aggregated = aggregated(&kinds, false);
        assert!(aggregated["items"].as_array().is_some_and(|i| i.iter().all(|g| g["metadata"]["name"] != "x.io")));
        kinds.set_registered("a.x.io", None);
        assert_eq!(versions(&group(&kinds, "x.io").expect("b still registers")), Some(vec![json!("v2"), json!("v1")]));
        kinds.set_registered("b.x.io", None);
        assert!(group(&kinds, "x.io").is_none());
    }
}
