//! The set of OpenAPI documents for one state of the served kinds: `/openapi/v2` (JSON and
//! protobuf), the `/openapi/v3` index and one `/openapi/v3/<group-version>` document per
//! group-version, each with its ETag (the SHA-512 of its bytes, which is also the
//! `?hash=` in the index's `serverRelativeURL`s).

use super::crd_schema::{self, CrdVersion};
use super::definitions::{self, Definitions};
use super::json::J;
use super::routes::{self, Flavor, KindSpec, Route};
use super::{proto, v2, v3};
use bytes::Bytes;
use k8s_openapi::jiff::Timestamp;
use serde_json::json;
use sha2::{Digest, Sha512};
use std::collections::BTreeMap;

const API_VERSIONS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.APIVersions";
const API_GROUP_LIST: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.APIGroupList";
const API_GROUP: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.APIGroup";
const API_RESOURCE_LIST: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList";
const VERSION_INFO: &str = "io.k8s.apimachinery.pkg.version.Info";

/// One served kind and, for a custom one, what its CRD says about the version.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    pub spec: KindSpec,
    pub crd: Option<CrdVersion>,
}

/// One served document.
#[derive(Debug, Clone)]
pub struct Doc {
    pub body: Bytes,
    /// Upper-case hex SHA-512 of `body`, unquoted.
    pub etag: String,
    pub last_modified: Timestamp,
}

/// Every document, built together from one list of sources.
#[derive(Debug, Clone)]
pub struct Documents {
    pub v2: Doc,
    /// `v2` as gnostic protocol buffers (same ETag, as kube serves it).
    pub v2_protobuf: Bytes,
    pub v3_index: Bytes,
    /// By group-version path (`api/v1`, `apis/<group>/<version>`).
    pub v3: BTreeMap<String, Doc>,
    /// What each CRDs-only group-version's document was built from: the next build keeps
    /// the documents whose sources did not change rather than rebuilding every one.
    custom_sources: BTreeMap<String, Vec<Source>>,
}

/// Upper-case hex SHA-512.
pub fn etag(body: &[u8]) -> String {
    Sha512::digest(body).iter().map(|b| format!("{b:02X}")).collect()
}

impl Documents {
    /// Builds everything; documents whose bytes did not change keep `previous`'s
    /// `Last-Modified`.
    pub fn build(sources: &[Source], api_version: &str, now: Timestamp, previous: Option<&Documents>) -> Documents {
        let builtin = definitions::builtin();
        let mut v2_defs: Definitions = builtin.clone();
        let mut v3_defs: Definitions = builtin.clone();
        for crd in sources.iter().filter_map(|s| s.crd.as_ref()) {
            let kind = crd_schema::definition_name(&crd.group, &crd.version, &crd.kind);
            let list = crd_schema::definition_name(&crd.group, &crd.version, &crd.list_kind);
            v2_defs.insert(kind, crd_schema::kind_definition(crd, true));
            v2_defs.insert(list, crd_schema::list_definition(crd));
        }
        for s in sources.iter().filter(|s| s.crd.is_none()) {
            fallback_definitions(&s.spec, &mut v2_defs);
            fallback_definitions(&s.spec, &mut v3_defs);
        }

        // Every document's routes: each group-version's kinds, plus kube's discovery
        // endpoints (documented in built-in documents only, as kube does).
        let mut groups: BTreeMap<String, Group> = BTreeMap::new();
        for s in sources {
            let group = groups.entry(s.spec.group_version_path()).or_insert_with(Group::custom);
            group.sources.push(s.clone());
            group.routes.extend(routes::routes(&s.spec));
            if s.spec.flavor == Flavor::BuiltIn && group.custom {
                group.custom = false;
                group.routes.push(routes::discovery(
                    &format!("/{}/", s.spec.group_version_path()),
                    "getAPIResources",
                    "get available resources",
                    API_RESOURCE_LIST,
                ));
            }
        }
        let mut roots = vec![(
            "version".to_string(),
            routes::discovery("/version/", "getCodeVersion", "get the code version", VERSION_INFO),
        )];
        if sources.iter().any(|s| s.spec.group.is_empty()) {
            roots.push((
                "api".into(),
                routes::discovery("/api/", "getAPIVersions", "get available API versions", API_VERSIONS),
            ));
        }
        if sources.iter().any(|s| !s.spec.group.is_empty()) {
            roots.push((
                "apis".into(),
                routes::discovery("/apis/", "getAPIVersions", "get available API versions", API_GROUP_LIST),
            ));
        }
        for s in sources.iter().filter(|s| s.spec.flavor == Flavor::BuiltIn && !s.spec.group.is_empty()) {
            let path = format!("/apis/{}/", s.spec.group);
            roots.push((
                format!("apis/{}", s.spec.group),
                routes::discovery(&path, "getAPIGroup", "get information of a group", API_GROUP),
            ));
        }
        for (gv, route) in roots {
            let group = groups.entry(gv).or_insert_with(Group::custom);
            group.custom = false;
            if !group.routes.iter().any(|r| r.path == route.path) {
                group.routes.push(route);
            }
        }

        let all_routes: Vec<Route> = groups.values().flat_map(|g| g.routes.iter().cloned()).collect();
        let v2_json = v2::document(api_version, &all_routes, &v2_defs);
        // Each form of the whole document is several times its bytes: let each go as soon
        // as the next is made, so the peak of a build is not all of them at once.
        drop((all_routes, v2_defs));
        let v2_protobuf = Bytes::from(proto::encode(&v2_json));
        let kept = |body: &Bytes, old: Option<&Doc>| match old {
            Some(old) if old.body == *body => old.last_modified,
            _ => now,
        };
        let v2_body = Bytes::from(v2_json.to_text());
        drop(v2_json);
        let v2 = Doc { etag: etag(&v2_body), last_modified: kept(&v2_body, previous.map(|p| &p.v2)), body: v2_body };

        let mut v3 = BTreeMap::new();
        let mut custom_sources = BTreeMap::new();
        for (gv, group) in groups {
            if group.custom {
                let unchanged = previous.filter(|p| p.custom_sources.get(&gv) == Some(&group.sources));
                if let Some(doc) = unchanged.and_then(|p| p.v3.get(&gv)) {
                    v3.insert(gv.clone(), doc.clone());
                    custom_sources.insert(gv, group.sources);
                    continue;
                }
            }
            // A CRDs-only document reaches only its own kinds' definitions (CRD schemas have
            // no references): they are added for it and removed after, rather than every
            // group's being held until the last document is written.
            let mut own = Vec::new();
            for crd in group.sources.iter().filter(|_| group.custom).filter_map(|s| s.crd.as_ref()) {
                let kind = crd_schema::definition_name(&crd.group, &crd.version, &crd.kind);
                let list = crd_schema::definition_name(&crd.group, &crd.version, &crd.list_kind);
                let replaced = v3_defs.insert(kind.clone(), crd_schema::kind_definition(crd, false));
                own.push((kind, replaced));
                let replaced = v3_defs.insert(list.clone(), crd_schema::list_definition(crd));
                own.push((list, replaced));
            }
            // apiextensions-apiserver titles its documents; kube's own say "Kubernetes".
            let (title, version) =
                if group.custom { ("Kubernetes CRD Swagger", "v0.1.0") } else { ("Kubernetes", "unversioned") };
            let body = Bytes::from(v3::document(title, version, &group.routes, &v3_defs).to_text());
            for (name, replaced) in own.into_iter().rev() {
                match replaced {
                    Some(def) => v3_defs.insert(name, def),
                    None => v3_defs.remove(&name),
                };
            }
            let last_modified = kept(&body, previous.and_then(|p| p.v3.get(&gv)));
            v3.insert(gv.clone(), Doc { etag: etag(&body), last_modified, body });
            if group.custom {
                custom_sources.insert(gv, group.sources);
            }
        }
        let index = J::obj().with(
            "paths",
            J::Obj(
                v3.iter()
                    .map(|(gv, doc)| {
                        let url = format!("/openapi/v3/{gv}?hash={}", doc.etag);
                        (gv.clone(), J::obj().with("serverRelativeURL", J::str(url)))
                    })
                    .collect(),
            ),
        );
        Documents { v2, v2_protobuf, v3_index: Bytes::from(index.to_text()), v3, custom_sources }
    }
}

/// The routes of one v3 document.
struct Group {
    sources: Vec<Source>,
    routes: Vec<Route>,
    /// Only CRDs' kinds: apiextensions-apiserver's document rather than kube's.
    custom: bool,
}

impl Group {
    fn custom() -> Group {
        Group { sources: Vec::new(), routes: Vec::new(), custom: true }
    }
}

/// A built-in kind with no recorded schema still gets definitions (an open object), so
/// that its operations resolve and kubectl sees its group-version-kind.
fn fallback_definitions(spec: &KindSpec, defs: &mut Definitions) {
    for (name, kind) in [(&spec.definition, &spec.kind), (&spec.list_definition, &format!("{}List", spec.kind))] {
        defs.entry(name.clone()).or_insert_with(|| {
            json!({
                "type": "object",
                "x-kubernetes-group-version-kind": [{"group": spec.group, "kind": kind, "version": spec.version}],
            })
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn etags_are_upper_case_sha512() {
        let e = etag(b"");
        assert_eq!(e.len(), 128);
        assert!(e.starts_with("CF83E1357EEFB8BD"));
    }
}
