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
//! CRD keys (no decoding). Each engine has its own cache entry.
//!
//! Layout: [`routes`] and [`params`] describe operations, [`crd_schema`] turns a CRD
//! version's schema into definitions, [`definitions`] holds the built-in ones,
//! [`v2`]/[`v3`] write the documents, [`json`] writes Go-identical bytes, [`proto`]
//! encodes swagger 2.0 as protobuf, [`documents`] builds the set, and this module serves
//! it with kube-openapi's headers (ETag, `?hash=` redirects, immutable caching, 304, 406).

mod crd_schema;
pub(crate) mod definitions;
mod documents;
mod json;
mod params;
mod proto;
mod routes;
mod schema;
mod v2;
mod v3;

use crate::engine::Engine;
use crate::engine::api::routes::plain_not_found;
use crate::engine::kinds::ServedKind;
use crate::engine::registry::structural::is_structural;
use crate::engine::resources::ResourceInfo;
use crate::engine::store::ListOptions;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use crd_schema::CrdVersion;
use documents::{Doc, Documents, Source};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::jiff::{Timestamp, ToSpan, tz::TimeZone};
use routes::{Flavor, KindSpec};
use serde_json::Value;
use std::sync::{Arc, Mutex, Weak};

/// kube-openapi's media types.
const JSON: &str = "application/json";
const PROTOBUF_V2: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
const PROTOBUF_V2_DEPRECATED: &str = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";

/// `GET /openapi/v2`: JSON, or protobuf when asked for.
pub async fn serve_v2(State(engine): State<Arc<Engine>>, headers: HeaderMap) -> Response {
    let docs = match current(&engine).await {
        Ok(d) => d,
        Err(res) => return res,
    };
    let offers = [(JSON, Repr::Json), (PROTOBUF_V2_DEPRECATED, Repr::Protobuf), (PROTOBUF_V2, Repr::Protobuf)];
    let mut res = match negotiate(&headers, &offers) {
        Some(Repr::Json) => content(&headers, &docs.v2, docs.v2.body.clone(), JSON),
        Some(Repr::Protobuf) => content(&headers, &docs.v2, docs.v2_protobuf.clone(), PROTOBUF_V2),
        None => empty(StatusCode::NOT_ACCEPTABLE),
    };
    // The gzip handler in front of kube's v2 handler varies on the encoding too.
    let h = res.headers_mut();
    h.append(header::VARY, HeaderValue::from_static("Accept-Encoding"));
    h.append(header::VARY, HeaderValue::from_static("Accept"));
    res
}

/// `GET /openapi/v3`: the index of group-version documents (served as plain text, as
/// kube's content sniffing labels it).
pub async fn serve_v3_index(State(engine): State<Arc<Engine>>) -> Response {
    let docs = match current(&engine).await {
        Ok(d) => d,
        Err(res) => return res,
    };
    let mut res = Response::new(Body::from(docs.v3_index.clone()));
    let h = res.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache, private"));
    insert(h, header::LAST_MODIFIED, &http_date(engine.now()));
    res
}

/// `GET /openapi/v3/<group-version>[?hash=...]`.
pub async fn serve_v3_document(State(engine): State<Arc<Engine>>, uri: Uri, headers: HeaderMap) -> Response {
    let docs = match current(&engine).await {
        Ok(d) => d,
        Err(res) => return res,
    };
    let gv = uri.path().trim_start_matches("/openapi/v3/");
    let mut res = match (negotiate(&headers, &[(JSON, Repr::Json)]), docs.v3.get(gv)) {
        (None, _) => empty(StatusCode::NOT_ACCEPTABLE),
        (Some(_), None) => plain_not_found(),
        (Some(_), Some(doc)) => match hash_query(&uri) {
            // kube-openapi has set the document's type and ETag before it redirects, so Go's
            // `http.Redirect` writes no body.
            Some(hash) if hash != doc.etag => {
                let mut res = empty(StatusCode::MOVED_PERMANENTLY);
                let h = res.headers_mut();
                insert(h, header::LOCATION, &format!("/openapi/v3/{gv}?hash={}", doc.etag));
                h.insert(header::CONTENT_TYPE, HeaderValue::from_static(JSON));
                insert(h, header::ETAG, &format!("\"{}\"", doc.etag));
                res
            }
            Some(_) => {
                let mut res = content(&headers, doc, doc.body.clone(), JSON);
                let h = res.headers_mut();
                h.insert(header::CACHE_CONTROL, HeaderValue::from_static("public, immutable"));
                insert(h, header::EXPIRES, &expires(engine.now()));
                res
            }
            None => content(&headers, doc, doc.body.clone(), JSON),
        },
    };
    res.headers_mut().append(header::VARY, HeaderValue::from_static("Accept"));
    res
}

/// The documents for the engine's current state, from the cache when nothing changed.
async fn current(engine: &Arc<Engine>) -> Result<Arc<Documents>, Response> {
    let kinds = engine.kinds().all();
    let prefix = ResourceInfo::store_prefix("apiextensions.k8s.io", "customresourcedefinitions");
    let page =
        engine.store().list(&prefix, &ListOptions::default()).await.map_err(|e| {
            crate::engine::api::error_response(&crate::engine::status::ApiError::internal(e.to_string()))
        })?;
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
        .filter_map(|raw| crate::engine::resources::crds::typed(&raw).map(|typed| (raw, typed)))
        .collect();
    let served_by_crds = engine.kinds().custom_names();
    let sources: Vec<Source> = kinds.iter().filter_map(|k| source(k, &crds, &served_by_crds)).collect();
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

/// A served kind as a document source: custom when an established CRD serves it. A kind
/// the routing table still has for a CRD that has just left the store is left out until
/// the table catches up.
fn source(k: &ServedKind, crds: &[(Value, CustomResourceDefinition)], served_by_crds: &[String]) -> Option<Source> {
    let info = k.info();
    let owner = crds.iter().find(|(_, crd)| {
        crd.spec.group == info.group
            && crd.status.as_ref().and_then(|s| s.accepted_names.as_ref()).is_some_and(|n| n.plural == info.plural)
            && crd.spec.versions.iter().any(|v| v.name == info.version && v.served)
    });
    match owner {
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
        .cloned();
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

/// The representations the v2 endpoint offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Repr {
    Json,
    Protobuf,
}

/// kube-openapi's negotiation: Accept clauses by quality (wildcards last), the first
/// offer a clause matches wins; no Accept means `*/*`.
fn negotiate(headers: &HeaderMap, offers: &[(&str, Repr)]) -> Option<Repr> {
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).filter(|a| !a.trim().is_empty());
    let mut clauses: Vec<(f32, String, String)> = accept
        .unwrap_or("*/*")
        .split(',')
        .filter_map(|clause| {
            let mut parts = clause.split(';');
            let range = parts.next()?.trim();
            let (t, s) = match range.split_once('/') {
                Some((t, s)) => (t.trim().to_string(), s.trim().to_string()),
                None if range == "*" => ("*".to_string(), "*".to_string()),
                None => return None,
            };
            let q = parts
                .filter_map(|p| p.split_once('='))
                .find(|(k, _)| k.trim() == "q")
                .and_then(|(_, v)| v.trim().parse::<f32>().ok())
                .unwrap_or(1.0);
            Some((q, t, s))
        })
        .collect();
    clauses.sort_by(|a, b| {
        b.0.partial_cmp(&a.0)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| (a.1 == "*").cmp(&(b.1 == "*")))
            .then_with(|| (a.2 == "*").cmp(&(b.2 == "*")))
    });
    clauses.iter().filter(|c| c.0 > 0.0).find_map(|(_, t, s)| {
        offers.iter().find_map(|(media, repr)| {
            let (ot, os) = media.split_once('/')?;
            ((t == "*" || t == ot) && (s == "*" || s == os)).then_some(*repr)
        })
    })
}

/// A document with its validators, or 304 when the client's copy is current (Go's
/// `http.ServeContent`).
fn content(headers: &HeaderMap, doc: &Doc, body: bytes::Bytes, content_type: &'static str) -> Response {
    let etag = format!("\"{}\"", doc.etag);
    let not_modified = match headers.get(header::IF_NONE_MATCH).and_then(|v| v.to_str().ok()) {
        Some(inm) => inm.split(',').map(str::trim).any(|t| t == "*" || t.trim_start_matches("W/") == etag),
        None => headers
            .get(header::IF_MODIFIED_SINCE)
            .and_then(|v| v.to_str().ok())
            .and_then(parse_http_date)
            .is_some_and(|since| doc.last_modified.as_second() <= since.as_second()),
    };
    let mut res = if not_modified { empty(StatusCode::NOT_MODIFIED) } else { Response::new(Body::from(body)) };
    let h = res.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache, private"));
    insert(h, header::ETAG, &etag);
    // A 304 carries the ETag only, as Go's `writeNotModified` leaves it.
    if !not_modified {
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
        insert(h, header::LAST_MODIFIED, &http_date(doc.last_modified));
    }
    res
}

fn empty(status: StatusCode) -> Response {
    let mut res = status.into_response();
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache, private"));
    res
}

fn hash_query(uri: &Uri) -> Option<String> {
    uri.query()?
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(k, _)| *k == "hash")
        .map(|(_, v)| v.to_string())
        .filter(|v| !v.is_empty())
}

fn insert(h: &mut HeaderMap, name: header::HeaderName, value: &str) {
    if let Ok(v) = HeaderValue::from_str(value) {
        h.insert(name, v);
    }
}

/// An HTTP date (`Sun, 22 Nov 2026 02:37:13 GMT`).
fn http_date(t: Timestamp) -> String {
    t.strftime("%a, %d %b %Y %H:%M:%S GMT").to_string()
}

fn parse_http_date(s: &str) -> Option<Timestamp> {
    let dt = k8s_openapi::jiff::civil::DateTime::strptime("%a, %d %b %Y %H:%M:%S GMT", s).ok()?;
    dt.to_zoned(TimeZone::UTC).ok().map(|z| z.timestamp())
}

/// A year from now in Go's RFC 1123 layout (`Mon, 22 Nov 2027 02:37:14 UTC`).
fn expires(now: Timestamp) -> String {
    let zoned = now.to_zoned(TimeZone::UTC);
    let later = zoned.checked_add(1.year()).unwrap_or(zoned);
    later.strftime("%a, %d %b %Y %H:%M:%S UTC").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accept(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::ACCEPT, HeaderValue::from_str(value).expect("header"));
        h
    }

    #[test]
    fn negotiation_follows_kube_openapi() {
        let offers = [(JSON, Repr::Json), (PROTOBUF_V2_DEPRECATED, Repr::Protobuf), (PROTOBUF_V2, Repr::Protobuf)];
        assert_eq!(negotiate(&HeaderMap::new(), &offers), Some(Repr::Json));
        assert_eq!(negotiate(&accept(PROTOBUF_V2_DEPRECATED), &offers), Some(Repr::Protobuf));
        assert_eq!(
            negotiate(&accept("*/*;q=0.5, application/com.github.proto-openapi.spec.v2.v1.0+protobuf"), &offers),
            Some(Repr::Protobuf)
        );
        assert_eq!(negotiate(&accept("application/json;q=0.9,*/*;q=0.8"), &offers), Some(Repr::Json));
        assert_eq!(negotiate(&accept("text/html"), &offers), None);
        assert_eq!(negotiate(&accept(PROTOBUF_V2), &[(JSON, Repr::Json)]), None);
    }

    #[test]
    fn dates_are_written_as_http_and_go_write_them() {
        let t: Timestamp = "2026-11-22T02:37:13.5Z".parse().expect("time");
        assert_eq!(http_date(t), "Sun, 22 Nov 2026 02:37:13 GMT");
        assert_eq!(parse_http_date("Sun, 22 Nov 2026 02:37:13 GMT").map(|p| p.as_second()), Some(t.as_second()));
        assert_eq!(expires(t), "Mon, 22 Nov 2027 02:37:13 UTC");
    }

    #[test]
    fn the_hash_comes_from_the_query() {
        let uri: Uri = "/openapi/v3/apis/g/v1?x=1&hash=ABC".parse().expect("uri");
        assert_eq!(hash_query(&uri).as_deref(), Some("ABC"));
        assert_eq!(hash_query(&"/openapi/v3/api/v1".parse().expect("uri")), None);
    }
}
