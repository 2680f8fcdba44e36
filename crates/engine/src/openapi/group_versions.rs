//! The `/openapi/v3/<group-version>` documents: the served kinds grouped by group-version,
//! each group's document kept from the previous build when its kinds are the same ones,
//! otherwise written again whole as one compressed stream, from the sources of all its
//! kinds (a stream cannot be cut back into members; a group has a few kinds, so one more
//! CRD decodes only its neighbours again).

use super::compressed::{StreamWriter, Written};
use super::documents::Unit;
use super::json::{Escape, J};
use super::parts::{self, MemberText, OwnDefinitions, V3Share};
use super::routes::{self, Flavor, Route};
use super::v3;
use std::collections::BTreeMap;

const API_VERSIONS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.APIVersions";
const API_GROUP_LIST: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.APIGroupList";
const API_GROUP: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.APIGroup";
const API_RESOURCE_LIST: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList";
const VERSION_INFO: &str = "io.k8s.apimachinery.pkg.version.Info";

/// The served kinds of one v3 document.
#[derive(Debug)]
pub struct Group {
    pub kinds: Vec<Unit>,
    /// kube's discovery endpoints, documented in built-in documents only. They follow from
    /// the group-version and its kinds' flavours (which the kinds' fingerprints tell), so a
    /// document with the same kinds has the same ones.
    pub discovery: Vec<Route>,
    /// Only CRDs' kinds: apiextensions-apiserver's document rather than kube's.
    custom: bool,
}

impl Group {
    /// Its kinds by fingerprint, in order: the same ones make the same document.
    pub fn fingerprints(&self) -> impl Iterator<Item = &str> {
        self.kinds.iter().map(|u| u.fingerprint.as_str())
    }

    fn custom() -> Group {
        Group { kinds: Vec::new(), discovery: Vec::new(), custom: true }
    }
}

/// The units by group-version path, with kube's discovery endpoints in the built-in
/// groups (and the documents of discovery alone: `version`, `api`, `apis`, `apis/<group>`).
pub fn group(units: Vec<Unit>) -> BTreeMap<String, Group> {
    let mut groups: BTreeMap<String, Group> = BTreeMap::new();
    let (mut core, mut named) = (false, false);
    let mut builtin_groups = Vec::new();
    for unit in units {
        core |= unit.group.is_empty();
        named |= !unit.group.is_empty();
        let gv = unit.group_version_path();
        let group = groups.entry(gv.clone()).or_insert_with(Group::custom);
        if unit.flavor == Flavor::BuiltIn {
            if group.custom {
                group.custom = false;
                let path = format!("/{gv}/");
                group.discovery.push(routes::discovery(
                    &path,
                    "getAPIResources",
                    "get available resources",
                    API_RESOURCE_LIST,
                ));
            }
            if !unit.group.is_empty() {
                builtin_groups.push(unit.group.clone());
            }
        }
        group.kinds.push(unit);
    }
    let mut roots = vec![(
        "version".to_string(),
        routes::discovery("/version/", "getCodeVersion", "get the code version", VERSION_INFO),
    )];
    if core {
        roots.push((
            "api".into(),
            routes::discovery("/api/", "getAPIVersions", "get available API versions", API_VERSIONS),
        ));
    }
    if named {
        roots.push((
            "apis".into(),
            routes::discovery("/apis/", "getAPIVersions", "get available API versions", API_GROUP_LIST),
        ));
    }
    for group in builtin_groups {
        let path = format!("/apis/{group}/");
        roots.push((
            format!("apis/{group}"),
            routes::discovery(&path, "getAPIGroup", "get information of a group", API_GROUP),
        ));
    }
    for (gv, route) in roots {
        let group = groups.entry(gv).or_insert_with(Group::custom);
        group.custom = false;
        if !group.discovery.iter().any(|r| r.path == route.path) {
            group.discovery.push(route);
        }
    }
    groups
}

/// The document of `group`, written from all its kinds' sources (a kind whose CRD does not
/// read is left out).
pub fn write_doc(group: &Group) -> Written {
    let sources = group.kinds.iter().filter_map(|u| u.source.get());
    let mut shares: Vec<V3Share> = sources.map(|s| parts::v3_share(&s)).collect();
    shares.push(V3Share::of_routes(&group.discovery, &OwnDefinitions::new()));
    let (title, version) = title(group);
    write(title, version, &shares)
}

/// The document's title and version: apiextensions-apiserver titles its documents; kube's
/// own say "Kubernetes".
fn title(group: &Group) -> (&'static str, &'static str) {
    if group.custom { ("Kubernetes CRD Swagger", "v0.1.0") } else { ("Kubernetes", "unversioned") }
}

/// One document from its kinds' shares, as one stream.
fn write(title: &str, version: &str, shares: &[V3Share]) -> Written {
    let shares: Vec<&V3Share> = shares.iter().collect();
    let mut paths: Vec<&MemberText> = shares.iter().flat_map(|s| &s.paths).collect();
    paths.sort_by(|a, b| a.key.cmp(&b.key));
    let schemas = parts::definitions(&shares, |s| &s.schemas, |s| &s.builtin, |b| &b.v3);
    let mut doc = StreamWriter::new();
    doc.text(&unclosed(&v3::head(title, version), Escape::Html));
    doc.text(b",\"paths\":");
    section(&mut doc, &paths);
    doc.text(b",\"components\":{\"schemas\":");
    section(&mut doc, &schemas);
    doc.text(b"}}");
    doc.finish()
}

/// Writes `{member,...}`.
fn section(doc: &mut StreamWriter, members: &[&MemberText]) {
    doc.text(b"{");
    for (i, m) in members.iter().enumerate() {
        if i > 0 {
            doc.text(b",");
        }
        doc.text(m.json.as_bytes());
    }
    doc.text(b"}");
}

/// A JSON object's text without its closing brace, to be continued.
pub fn unclosed(head: &J, escape: Escape) -> Vec<u8> {
    let mut text = head.to_text_as(escape).into_bytes();
    text.pop();
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openapi::compressed::{Deflated, GzipWriter};
    use crate::openapi::documents::tests::{namespaces, unit};
    use crate::openapi::sources::{CrdAtRevision, SourceOf};
    use bytes::Bytes;
    use std::sync::Arc;

    /// The document as it was held before it became one stream: every member compressed
    /// on its own, glued.
    fn member_by_member(title: &str, version: &str, shares: &[V3Share]) -> Written {
        let shares: Vec<&V3Share> = shares.iter().collect();
        let mut paths: Vec<&MemberText> = shares.iter().flat_map(|s| &s.paths).collect();
        paths.sort_by(|a, b| a.key.cmp(&b.key));
        let schemas = parts::definitions(&shares, |s| &s.schemas, |s| &s.builtin, |b| &b.v3);
        let mut doc = GzipWriter::new(true);
        doc.text(&unclosed(&v3::head(title, version), Escape::Html));
        for (open, members) in [(&b",\"paths\":{"[..], paths), (b",\"components\":{\"schemas\":{", schemas)] {
            doc.text(open);
            for (i, m) in members.iter().enumerate() {
                if i > 0 {
                    doc.text(b",");
                }
                doc.piece(&Deflated::new(m.json.as_bytes()));
            }
            doc.text(b"}");
        }
        doc.text(b"}}");
        doc.finish()
    }

    #[test]
    fn a_document_as_one_stream_reads_as_member_by_member() {
        let units = vec![namespaces(), unit("a.example.com", 0, 10), unit("a.example.com", 1, 10)];
        for (gv, group) in group(units) {
            let sources = group.kinds.iter().filter_map(|u| u.source.get());
            let mut shares: Vec<V3Share> = sources.map(|s| parts::v3_share(&s)).collect();
            shares.push(V3Share::of_routes(&group.discovery, &OwnDefinitions::new()));
            let stream = write_doc(&group);
            let (title, version) = title(&group);
            let pieces = member_by_member(title, version, &shares);
            assert!(stream.gzip.text() == pieces.gzip.text(), "{gv}: the same text");
            assert_eq!(stream.etag, pieces.etag, "{gv}");
            let text: serde_json::Value = serde_json::from_slice(&stream.gzip.text()).expect("JSON");
            assert_eq!(text["openapi"], "3.0.0", "{gv}");
            if gv == "apis/a.example.com/v1" {
                let (stream, pieces) = (stream.gzip.bytes().len(), pieces.gzip.bytes().len());
                assert!(
                    stream * 3 < pieces * 2,
                    "{gv}: smaller as one stream: {stream} bytes, member by member {pieces}"
                );
            }
        }
    }

    #[test]
    fn a_kind_whose_crd_does_not_read_is_left_out() {
        let mut units = vec![unit("a.example.com", 0, 10), unit("a.example.com", 1, 10)];
        let crd = Arc::new(CrdAtRevision::new(Bytes::from_static(b"{not JSON")));
        units[0].source = SourceOf::Stored { crd, version: "v1".into(), verbs: Vec::new() };
        let groups = group(units);
        let doc = write_doc(&groups["apis/a.example.com/v1"]);
        let text: serde_json::Value = serde_json::from_slice(&doc.gzip.text()).expect("JSON");
        let schemas = text["components"]["schemas"].as_object().expect("schemas");
        assert!(schemas.contains_key("com.example.a.v1.Kind1"), "{:?}", schemas.keys());
        assert!(!schemas.contains_key("com.example.a.v1.Kind0"), "{:?}", schemas.keys());
    }
}
