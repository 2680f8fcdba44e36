//! OpenAPI: `/openapi/v2` and `/openapi/v3` built from the served kinds — the built-in
//! ones and every served version of every established CRD — as kube-apiserver builds and
//! serves them, so that `kubectl explain` works and `kubectl apply`/`create` validate.
//!
//! What kubectl 1.32 does with them (observed against this server):
//! - Before sending objects it asks whether the server validates fields itself: it reads
//!   the `/openapi/v3` index, then the group-version document of each object's kind, and
//!   looks for a PATCH operation marked with that kind's `x-kubernetes-group-version-kind`
//!   that takes a `fieldValidation` parameter. Found: it sends `?fieldValidation=Strict`
//!   (or Warn/Ignore) and validates nothing itself. For a kind whose group-version is not
//!   published yet but whose CRD exists, the Namespace PATCH operation of `api/v1` decides.
//! - Otherwise (a `kind: List`, a kind without a document, an unreadable document) it
//!   falls back to client-side validation against `/openapi/v2`, which it only ever
//!   requests as gnostic protocol buffers; we serve those (see [`proto`]). A 406 there
//!   would not do: client-go then tries `/swagger-2.0.0.pb-v1` and gives up, and kubectl
//!   refuses the file.
//! - Re-applying an existing custom resource, it finds no strategic merge patch among the
//!   v3 PATCH operation's media types, reads `/openapi/v2` (protobuf) to pick a patch type,
//!   and sends a JSON merge patch.
//! - `kubectl explain` reads the v3 document of the kind's group-version (JSON) and walks
//!   the schema carrying the kind's `x-kubernetes-group-version-kind`.
//!
//! Documents are rebuilt only when what they are built from changes: the served kinds
//! and the stored CRDs' revisions form the cache key, checked per request by listing the
//! CRD keys (no decoding). Each engine has its own cache entry. A rebuild keeps the v3
//! document of every CRD group-version whose sources did not change (with 2,000 CRDs, one
//! more CRD rebuilds one of hundreds); `/openapi/v2` is one document and is rebuilt whole.
//!
//! Layout: [`routes`] and [`params`] describe operations, [`crd_schema`] turns a CRD
//! version's schema into definitions, [`definitions`] holds the built-in ones,
//! [`v2`]/[`v3`] write the documents, [`json`] writes Go-identical bytes, [`proto`]
//! encodes swagger 2.0 as protobuf, [`documents`] builds the set, and this module keeps the
//! set current per engine ([`current`]). The HTTP handlers that serve it with kube-openapi's
//! headers (ETag, `?hash=` redirects, immutable caching, 304, 406) are in
//! [`crate::api::openapi`]; nothing here speaks HTTP.

mod crd_schema;
pub(crate) mod definitions;
pub(crate) mod documents;
mod json;
mod params;
mod proto;
mod routes;
mod schema;
mod v2;
mod v3;

use crate::Engine;
use crate::kinds::ServedKind;
use crate::registry::structural::is_structural;
use crate::resources::ResourceInfo;
use crate::status::ApiError;
use crate::store::ListOptions;
use crd_schema::CrdVersion;
use documents::{Documents, Source};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use routes::{Flavor, KindSpec};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, Weak};

/// The documents for the engine's current state, from the cache when nothing changed.
pub(crate) async fn current(engine: &Arc<Engine>) -> Result<Arc<Documents>, ApiError> {
    let kinds = engine.kinds().all();
    let prefix = ResourceInfo::store_prefix("apiextensions.k8s.io", "customresourcedefinitions");
    let page = engine.store().list(&prefix, &ListOptions::default()).await.map_err(|e| ApiError::storage(&e))?;
    let key = Key {
        kinds: kinds.iter().map(summary).collect(),
        crds: page.items.iter().map(|kv| (kv.key.clone(), kv.mod_revision)).collect(),
    };
    let previous = cache_lookup(engine, &key);
    if let Some((true, docs)) = &previous {
        return Ok(Arc::clone(docs));
    }
    let crds: Vec<(Value, CustomResourceDefinition)> = page
        .items
        .iter()
        .filter_map(|kv| serde_json::from_slice::<Value>(&kv.value).ok())
        .filter_map(|raw| crate::resources::crds::typed(&raw).map(|typed| (raw, typed)))
        .collect();
    let served_by_crds: HashSet<String> = engine.kinds().custom_names().into_iter().collect();
    let owners = owners(&crds);
    let sources: Vec<Source> = kinds.iter().filter_map(|k| source(k, &owners, &served_by_crds)).collect();
    let (major, minor) = crate::KUBERNETES_API_LEVEL;
    let docs = Arc::new(Documents::build(
        &sources,
        &format!("{major}.{minor}.0"),
        engine.now(),
        previous.as_ref().map(|(_, d)| d.as_ref()),
    ));
    cache_store(engine, key, Arc::clone(&docs));
    Ok(docs)
}

/// What the documents are built from, cheap to compare.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Key {
    kinds: Vec<String>,
    crds: Vec<(String, u64)>,
}

fn summary(k: &ServedKind) -> String {
    let i = k.info();
    format!(
        "{}/{}/{}/{}/{}/{}/{}/{}/{}",
        i.group,
        i.version,
        i.plural,
        i.kind,
        i.list_kind,
        i.namespaced,
        i.status_subresource,
        k.scale.is_some(),
        k.verbs.join(",")
    )
}

struct Entry {
    engine: Weak<Engine>,
    key: Key,
    docs: Arc<Documents>,
}

static CACHE: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

/// The engine's cached documents and whether they are still current.
fn cache_lookup(engine: &Arc<Engine>, key: &Key) -> Option<(bool, Arc<Documents>)> {
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    cache.retain(|e| e.engine.strong_count() > 0);
    let mine = Arc::downgrade(engine);
    cache.iter().find(|e| e.engine.ptr_eq(&mine)).map(|e| (e.key == *key, Arc::clone(&e.docs)))
}

fn cache_store(engine: &Arc<Engine>, key: Key, docs: Arc<Documents>) {
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    let mine = Arc::downgrade(engine);
    cache.retain(|e| e.engine.strong_count() > 0 && !e.engine.ptr_eq(&mine));
    cache.push(Entry { engine: mine, key, docs });
}

/// The CRD serving each (group, accepted plural, served version): the first in the list,
/// as a search of the list would find it. An index, since a search per served kind was
/// quadratic in the CRDs (ten million comparisons at 2,000 CRDs).
type Owners<'a> = HashMap<(&'a str, &'a str, &'a str), &'a (Value, CustomResourceDefinition)>;

fn owners(crds: &[(Value, CustomResourceDefinition)]) -> Owners<'_> {
    let mut owners = Owners::new();
    for entry in crds {
        let crd = &entry.1;
        let Some(plural) = crd.status.as_ref().and_then(|s| s.accepted_names.as_ref()).map(|n| n.plural.as_str())
        else {
            continue;
        };
        for v in crd.spec.versions.iter().filter(|v| v.served) {
            owners.entry((crd.spec.group.as_str(), plural, v.name.as_str())).or_insert(entry);
        }
    }
    owners
}

/// A served kind as a document source: custom when an established CRD serves it. A kind
/// the routing table still has for a CRD that has just left the store is left out until
/// the table catches up.
fn source(k: &ServedKind, owners: &Owners<'_>, served_by_crds: &HashSet<String>) -> Option<Source> {
    let info = k.info();
    match owners.get(&(info.group.as_str(), info.plural.as_str(), info.version.as_str())) {
        Some((raw, crd)) => Some(custom_source(k, raw, crd)),
        None if served_by_crds.contains(&format!("{}.{}", info.plural, info.group)) => None,
        None => Some(builtin_source(k)),
    }
}

fn custom_source(k: &ServedKind, raw: &Value, crd: &CustomResourceDefinition) -> Source {
    let info = k.info();
    let names = &crd.spec.names;
    let list_kind = names.list_kind.clone().unwrap_or_else(|| format!("{}List", names.kind));
    let version = crd.spec.versions.iter().find(|v| v.name == info.version);
    let structural =
        version.and_then(|v| v.schema.as_ref()).and_then(|s| s.open_api_v3_schema.as_ref()).is_some_and(is_structural);
    let schema = raw
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .and_then(|vs| vs.iter().find(|v| v.get("name").and_then(Value::as_str) == Some(&info.version)))
        .and_then(|v| v.pointer("/schema/openAPIV3Schema"))
        .filter(|_| structural)
        .map(|s| Arc::new(s.clone()));
    let crd_version = CrdVersion {
        group: crd.spec.group.clone(),
        version: info.version.clone(),
        kind: names.kind.clone(),
        list_kind: list_kind.clone(),
        plural: names.plural.clone(),
        schema,
        selectable_fields: version
            .and_then(|v| v.selectable_fields.as_ref())
            .map(|fs| fs.iter().map(|f| f.json_path.clone()).collect())
            .unwrap_or_default(),
    };
    let subresources = version.and_then(|v| v.subresources.as_ref());
    let spec = KindSpec {
        group: crd.spec.group.clone(),
        version: info.version.clone(),
        kind: names.kind.clone(),
        plural: names.plural.clone(),
        namespaced: crd.spec.scope == "Namespaced",
        status: subresources.is_some_and(|s| s.status.is_some()),
        scale: subresources.is_some_and(|s| s.scale.is_some()),
        verbs: k.verbs.clone(),
        flavor: Flavor::Custom,
        definition: crd_schema::definition_name(&crd.spec.group, &info.version, &names.kind),
        list_definition: crd_schema::definition_name(&crd.spec.group, &info.version, &list_kind),
    };
    Source { spec, crd: Some(crd_version) }
}

fn builtin_source(k: &ServedKind) -> Source {
    let info = k.info();
    let defs = definitions::builtin();
    let fallback = {
        let group = info.group.split('.').next().filter(|g| !g.is_empty()).unwrap_or("core");
        format!("io.k8s.api.{group}.{}.{}", info.version, info.kind)
    };
    let definition = definitions::find_kind(defs, &info.group, &info.version, &info.kind).unwrap_or(fallback.clone());
    let list_definition = definitions::find_kind(defs, &info.group, &info.version, &info.list_kind)
        .unwrap_or_else(|| format!("{fallback}List"));
    let spec = KindSpec {
        group: info.group.clone(),
        version: info.version.clone(),
        kind: info.kind.clone(),
        plural: info.plural.clone(),
        namespaced: info.namespaced,
        status: info.status_subresource,
        scale: k.scale.is_some(),
        verbs: k.verbs.clone(),
        flavor: Flavor::BuiltIn,
        definition,
        list_definition,
    };
    Source { spec, crd: None }
}
