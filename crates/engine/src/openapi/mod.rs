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
//! and the stored CRDs' revisions form the cache key, read (listing the CRD keys, no
//! decoding) only when the kinds' generation or the store's revision moved since it was
//! last found the same ([`current`]). Each engine has its own cache entry. A rebuild decodes and
//! writes only what changed: every served kind's share of `/openapi/v2` is kept
//! ([`parts`]) and v2 is assembled from the shares; the v3 document of every
//! group-version whose kinds did not change is kept, and the others are written again from
//! the sources of all their kinds ([`group_versions`]: a v3 document is one compressed
//! stream). With 2,000 CRDs, one more CRD writes one v2 share of thousands and one v3
//! document of hundreds, decoding only the few CRDs of its group-version. Each document
//! is written when a client first asks for it ([`documents`]).
//!
//! Layout: [`routes`] and [`params`] describe operations, [`crd_schema`] turns a CRD
//! version's schema into definitions, [`definitions`] holds the built-in ones,
//! [`v2`]/[`v3`] write the documents' pieces, [`json`] writes Go-identical bytes, [`proto`]
//! encodes swagger 2.0 as protobuf, [`sources`] says what each served kind is built from,
//! [`parts`] writes one kind's share, [`compressed`] keeps the text gzip-compressed (in
//! reusable pieces, or as one stream), [`group_versions`] writes the v3 documents,
//! [`documents`] assembles the set, and this module keeps
//! the set current per engine ([`current`]). The HTTP handlers that serve it with kube-openapi's
//! headers (ETag, `?hash=` redirects, immutable caching, 304, 406) are in
//! [`crate::api::openapi`]; nothing here speaks HTTP.

pub(crate) mod compressed;
mod crd_schema;
pub(crate) mod definitions;
pub(crate) mod documents;
mod group_versions;
mod json;
mod params;
mod parts;
mod proto;
mod routes;
mod schema;
mod sources;
mod v2;
mod v3;

use crate::Engine;
use crate::kinds::ServedKind;
use crate::resources::ResourceInfo;
use crate::status::ApiError;
use crate::store::{ListOptions, Revision};
use documents::Documents;
use sources::CrdIndex;
use std::sync::{Arc, Mutex, Weak};

/// The documents for the engine's current state, from the cache when nothing changed.
///
/// Most requests find the state as the cache last saw it: the kinds' generation and the
/// store's revision are what they were, and the documents are served without looking
/// further. Otherwise the key is read (the CRDs' keys and revisions, and the kinds' summaries
/// if their generation moved), and only a different key builds again: with 2,000 CRDs,
/// reading the key was 85% of a cached v3 document's answer.
pub(crate) async fn current(engine: &Arc<Engine>) -> Result<Arc<Documents>, ApiError> {
    // Read before what they stamp: whatever is read after is at least as new.
    let stamp = Stamp {
        kinds: engine.kinds().generation(),
        store: engine.store().cached_revision().await.map_err(|e| ApiError::storage(&e))?,
    };
    let previous = cache_lookup(engine);
    if let Some(p) = previous.as_ref().filter(|p| p.stamp == stamp) {
        return Ok(Arc::clone(&p.docs));
    }
    let prefix = ResourceInfo::store_prefix("apiextensions.k8s.io", "customresourcedefinitions");
    // The replica's own view, as its kinds follow it (on etcd, its watch cache).
    let opts = ListOptions { cached: true, ..ListOptions::default() };
    let page = engine.store().list(&prefix, &opts).await.map_err(|e| ApiError::storage(&e))?;
    let crds: Vec<(String, Revision)> = page.items.iter().map(|kv| (kv.key.clone(), kv.mod_revision)).collect();
    if let Some(p) = previous.as_ref().filter(|p| p.stamp.kinds == stamp.kinds && p.key.crds == crds) {
        cache_restamp(engine, &p.docs, stamp);
        return Ok(Arc::clone(&p.docs));
    }
    let kinds = engine.kinds().all();
    let key = Arc::new(Key { kinds: kinds.iter().map(summary).collect(), crds });
    if let Some(p) = previous.as_ref().filter(|p| p.key == key) {
        cache_restamp(engine, &p.docs, stamp);
        return Ok(Arc::clone(&p.docs));
    }
    let (custom, now) = (engine.kinds().custom_names(), engine.now());
    // Reading the CRDs written since (all of them the first time: 2,000 of them took
    // 150 ms of a core) is no work for an async worker.
    let (docs, index) = tokio::task::spawn_blocking(move || {
        let index = CrdIndex::new(&page.items, previous.as_ref().map(|c| c.index.as_ref()));
        let old = previous.as_ref().map(|c| c.docs.as_ref());
        let units = sources::units(&kinds, &page.items, &index, &custom);
        let (major, minor) = crate::KUBERNETES_API_LEVEL;
        (Arc::new(Documents::new(units, &format!("{major}.{minor}.0"), now, old)), Arc::new(index))
    })
    .await
    .map_err(|e| ApiError::internal(e.to_string()))?;
    Ok(cache_store(engine, key, stamp, docs, index))
}

/// What the documents are built from, cheap to compare.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Key {
    kinds: Vec<String>,
    crds: Vec<(String, Revision)>,
}

/// The state a key was read in: the kinds' generation and the store's revision. The same
/// stamp means the same key, so it need not be read again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    kinds: u64,
    store: Revision,
}

/// What the documents need to know of a served kind, as text: part of the cache key and
/// of each kind's fingerprint.
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

/// An engine's cached documents, what they were built from, the state that was last found
/// to have that key, and the CRDs' names they were built with.
#[derive(Clone)]
struct Entry {
    engine: Weak<Engine>,
    key: Arc<Key>,
    stamp: Stamp,
    docs: Arc<Documents>,
    index: Arc<CrdIndex>,
}

static CACHE: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

fn cache_lookup(engine: &Arc<Engine>) -> Option<Entry> {
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    cache.retain(|e| e.engine.strong_count() > 0);
    let mine = Arc::downgrade(engine);
    cache.iter().find(|e| e.engine.ptr_eq(&mine)).cloned()
}

/// Records that `stamp`'s state has the key `docs` were built from (unless another build
/// has replaced them meanwhile).
fn cache_restamp(engine: &Arc<Engine>, docs: &Arc<Documents>, stamp: Stamp) {
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    let mine = Arc::downgrade(engine);
    if let Some(e) = cache.iter_mut().find(|e| e.engine.ptr_eq(&mine) && Arc::ptr_eq(&e.docs, docs)) {
        e.stamp = stamp;
    }
}

/// Keeps `docs` as the engine's documents and returns them, unless a request that found
/// the same state meanwhile kept its own: those are returned, so that both requests share
/// one writing of each document.
fn cache_store(
    engine: &Arc<Engine>,
    key: Arc<Key>,
    stamp: Stamp,
    docs: Arc<Documents>,
    index: Arc<CrdIndex>,
) -> Arc<Documents> {
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    let mine = Arc::downgrade(engine);
    cache.retain(|e| e.engine.strong_count() > 0);
    if let Some(e) = cache.iter().find(|e| e.engine.ptr_eq(&mine) && e.key == key) {
        return Arc::clone(&e.docs);
    }
    cache.retain(|e| !e.engine.ptr_eq(&mine));
    cache.push(Entry { engine: mine, key, stamp, docs: Arc::clone(&docs), index });
    docs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::StorageConfig;

    #[tokio::test]
    async fn requests_that_find_one_state_share_its_documents() {
        let engine = Engine::open(&StorageConfig::Memory).await.expect("engine");
        let first = current(&engine).await.expect("documents");
        let entry = cache_lookup(&engine).expect("a cache entry");
        let (key, stamp, index) = (Arc::clone(&entry.key), entry.stamp, Arc::clone(&entry.index));
        // Another request read the same state meanwhile and made documents of its own:
        // it gets the kept ones, so each document is written once.
        let other = Arc::new(Documents::new(Vec::new(), "v1.32.0", engine.now(), None));
        let kept = cache_store(&engine, Arc::clone(&key), stamp, Arc::clone(&other), Arc::clone(&index));
        assert!(Arc::ptr_eq(&kept, &first));
        assert!(Arc::ptr_eq(&current(&engine).await.expect("documents"), &first));
        // Documents of another state replace them.
        let changed = Arc::new(Key { kinds: Vec::new(), crds: key.crds.clone() });
        let kept = cache_store(&engine, changed, stamp, Arc::clone(&other), index);
        assert!(Arc::ptr_eq(&kept, &other));
        assert!(Arc::ptr_eq(&current(&engine).await.expect("documents"), &other));
    }
}
