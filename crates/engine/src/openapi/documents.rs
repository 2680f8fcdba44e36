//! The set of OpenAPI documents for one state of the served kinds: `/openapi/v2` (JSON, and
//! protobuf once asked for), the `/openapi/v3` index and one `/openapi/v3/<group-version>` document per
//! group-version, each with its ETag (the SHA-512 of its bytes, which is also the
//! `?hash=` in the index's `serverRelativeURL`s).
//!
//! The documents are assembled from [`Part`]s, one per served kind, kept by what each was
//! built from: the next build writes only the parts of kinds that changed, reuses the
//! others', and keeps every v3 document whose kinds did not change.
//!
//! Every document is held gzip-compressed, as the list of its members' compressed bytes
//! ([`super::compressed`]), which it shares with the parts: keeping the parts costs no
//! second copy, and a rebuild copies no member. The members' bytes are about a sixth of
//! the text (2,000 CRDs of the scale bench make 152 MiB of `/openapi/v2`, held in 26.6).
//!
//! The protobuf form of `/openapi/v2` is derived from its JSON, member by member, the first
//! time a client asks for it (as kube-openapi converts its JSON spec lazily): most clients
//! never do (kubectl reads `/openapi/v2` only to validate what the server cannot), and a
//! large set's protobuf is nearly as big as its JSON.

use super::compressed::{Deflater, GzipWriter, Gzipped, Written};
use super::json::{Escape, J};
use super::parts::{self, Member, Part, Source};
use super::routes::{self, Flavor, Route};
use super::{proto, v2, v3};
use bytes::Bytes;
use k8s_openapi::jiff::Timestamp;
#[cfg(test)]
use sha2::{Digest, Sha512};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::OnceLock;

const API_VERSIONS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.APIVersions";
const API_GROUP_LIST: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.APIGroupList";
const API_GROUP: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.APIGroup";
const API_RESOURCE_LIST: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList";
const VERSION_INFO: &str = "io.k8s.apimachinery.pkg.version.Info";

/// One served document.
#[derive(Debug, Clone)]
pub struct Doc {
    pub body: Gzipped,
    /// Upper-case hex SHA-512 of `body`'s text, unquoted.
    pub etag: String,
    pub last_modified: Timestamp,
}

/// One served kind as the documents see it.
#[derive(Debug, Clone)]
pub struct Unit {
    /// Changes whenever the kind's part would: the next build reuses a part by it.
    pub fingerprint: String,
    pub group: String,
    pub version: String,
    pub flavor: Flavor,
    /// What to build the part from; `None` when the previous build has it
    /// ([`Documents::has_part`]), which spares decoding the CRD.
    pub source: Option<Source>,
}

impl Unit {
    /// The OpenAPI v3 document path: `api/v1` or `apis/<group>/<version>`.
    fn group_version_path(&self) -> String {
        if self.group.is_empty() {
            format!("api/{}", self.version)
        } else {
            format!("apis/{}/{}", self.group, self.version)
        }
    }
}

/// Every document, assembled from one list of units.
#[derive(Debug)]
pub struct Documents {
    pub v2: Doc,
    /// `v2` as gnostic protocol buffers (same ETag, as kube serves it), once asked for.
    v2_protobuf: OnceLock<Gzipped>,
    /// What `v2_protobuf` is derived from: the API version in the head, and the members of
    /// the paths, definitions and parameters sections, in order.
    v2_layout: (String, [Vec<Member>; 3]),
    pub v3_index: Bytes,
    /// By group-version path (`api/v1`, `apis/<group>/<version>`).
    pub v3: BTreeMap<String, Doc>,
    /// How many kinds' parts this build wrote (the others came from the previous build).
    pub written: usize,
    /// Every kind's part by fingerprint, for the next build.
    parts: HashMap<String, Arc<Part>>,
    /// What each v3 document was assembled from: an unchanged list keeps the document.
    v3_from: BTreeMap<String, Vec<String>>,
}

/// Upper-case hex SHA-512, as the documents' ETags (written while they are assembled).
#[cfg(test)]
pub fn etag(body: &[u8]) -> String {
    super::compressed::upper_hex(&Sha512::digest(body))
}

/// The parts of one v3 document.
struct Group {
    kinds: Vec<(String, Arc<Part>)>,
    /// kube's discovery endpoints, documented in built-in documents only.
    discovery: Vec<Route>,
    /// Only CRDs' kinds: apiextensions-apiserver's document rather than kube's.
    custom: bool,
}

impl Group {
    fn custom() -> Group {
        Group { kinds: Vec::new(), discovery: Vec::new(), custom: true }
    }

    /// What the document is assembled from.
    fn identity(&self) -> Vec<String> {
        let kinds = self.kinds.iter().map(|(f, _)| f.clone());
        kinds.chain(self.discovery.iter().map(|r| r.path.clone())).collect()
    }
}

impl Documents {
    /// `/openapi/v2` as gnostic protocol buffers, derived from the JSON the first time (a
    /// second or so for thousands of CRDs: call it off the async workers).
    pub fn v2_protobuf(&self) -> Gzipped {
        self.v2_protobuf
            .get_or_init(|| {
                let (api_version, [paths, defs, params]) = &self.v2_layout;
                let mut pb = GzipWriter::new(false);
                pb.text(&proto::encode(&v2::head(api_version)));
                let mut text = Vec::new();
                for (field, members, entry) in [
                    (proto::PATHS, paths, proto::path_entry as fn(&str, &J) -> Vec<u8>),
                    (proto::DEFINITIONS, defs, proto::definition_entry),
                    (proto::PARAMETERS, params, proto::parameter_entry),
                ] {
                    // A section is reused whole: one stream, compressed as it is encoded.
                    let mut entries = Deflater::new();
                    for m in members {
                        text.clear();
                        m.json.inflate_into(&mut text);
                        // The bytes are ours, written as JSON: they read back.
                        let value: J = serde_json::from_slice(&text[m.value_at.min(text.len())..]).unwrap_or(J::Null);
                        entries.write(&entry(&m.key, &value));
                    }
                    let entries = entries.finish();
                    pb.text(&proto::section(field, entries.len()));
                    pb.piece(&entries);
                }
                pb.text(&proto::encode(&v2::tail()));
                pb.finish().gzip
            })
            .clone()
    }

    /// Whether this build has the part of `fingerprint`, which the next one would reuse.
    pub fn has_part(&self, fingerprint: &str) -> bool {
        self.parts.contains_key(fingerprint)
    }

    /// Assembles everything, writing only the parts `previous` does not have; documents
    /// whose bytes did not change keep `previous`'s `Last-Modified`.
    pub fn build(units: Vec<Unit>, api_version: &str, now: Timestamp, previous: Option<&Documents>) -> Documents {
        let (groups, written) = group(units, previous);
        let none = Default::default();
        let discovery: BTreeMap<String, Part> = groups
            .iter()
            .filter(|(_, g)| !g.discovery.is_empty())
            .map(|(gv, g)| (gv.clone(), Part::of_routes(&g.discovery, &none, &none)))
            .collect();

        // `/openapi/v3/<group-version>`: a document whose parts did not change is kept, the
        // others are assembled on every core, and `/openapi/v2` beside them (assembling
        // hashes every member's text, inflated again: the larger part of a first build).
        let groups: Vec<(String, Group, Vec<String>)> = groups
            .into_iter()
            .map(|(gv, g)| {
                let identity = g.identity();
                (gv, g, identity)
            })
            .collect();
        let all: Vec<&Part> = groups
            .iter()
            .flat_map(|(gv, g, _)| g.kinds.iter().map(|(_, p)| p.as_ref()).chain(discovery.get(gv)))
            .collect();
        let (v2_assembled, v3_assembled) = std::thread::scope(|scope| {
            let v2 = scope.spawn(|| assemble_v2(api_version, &all));
            let v3 = on_cores(&groups, 8, |(gv, group, identity)| {
                let unchanged = previous.filter(|p| p.v3_from.get(gv) == Some(identity));
                if let Some(doc) = unchanged.and_then(|p| p.v3.get(gv)) {
                    return V3::Kept(doc.clone());
                }
                let members: Vec<&Part> =
                    group.kinds.iter().map(|(_, p)| p.as_ref()).chain(discovery.get(gv)).collect();
                // apiextensions-apiserver titles its documents; kube's own say "Kubernetes".
                let (title, version) =
                    if group.custom { ("Kubernetes CRD Swagger", "v0.1.0") } else { ("Kubernetes", "unversioned") };
                V3::Assembled(assemble_v3(title, version, &members))
            });
            (v2.join().unwrap_or_else(|e| std::panic::resume_unwind(e)), v3)
        });

        let (v2_body, orders) = v2_assembled;
        let v2_layout = (api_version.to_string(), orders);
        let kept = |etag: &str, old: Option<&Doc>| match old {
            Some(old) if old.etag == etag => old.last_modified,
            _ => now,
        };
        let v2 = Doc::of(v2_body, |etag| kept(etag, previous.map(|p| &p.v2)));

        let mut v3 = BTreeMap::new();
        let mut v3_from = BTreeMap::new();
        let mut parts = HashMap::new();
        for ((gv, group, identity), assembled) in groups.into_iter().zip(v3_assembled) {
            let doc = match assembled {
                V3::Kept(doc) => doc,
                V3::Assembled(body) => Doc::of(body, |etag| kept(etag, previous.and_then(|p| p.v3.get(&gv)))),
            };
            parts.extend(group.kinds);
            v3.insert(gv.clone(), doc);
            v3_from.insert(gv, identity);
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
        Documents {
            v2,
            v2_protobuf: OnceLock::new(),
            v2_layout,
            v3_index: Bytes::from(index.to_text()),
            v3,
            written,
            parts,
            v3_from,
        }
    }
}

/// Every unit's part (`previous`'s, or written now) in its v3 document's group, with kube's
/// discovery endpoints in the built-in groups; and how many parts were written.
fn group(units: Vec<Unit>, previous: Option<&Documents>) -> (BTreeMap<String, Group>, usize) {
    let mut written = 0;
    let mut groups: BTreeMap<String, Group> = BTreeMap::new();
    let (mut core, mut named) = (false, false);
    let mut builtin_groups = Vec::new();
    let reused: Vec<Option<Arc<Part>>> =
        units.iter().map(|u| previous.and_then(|p| p.parts.get(&u.fingerprint)).cloned()).collect();
    let sources: Vec<&Source> =
        units.iter().zip(&reused).filter(|(_, r)| r.is_none()).filter_map(|(u, _)| u.source.as_ref()).collect();
    let mut fresh = write_parts(&sources).into_iter();
    for (unit, reused) in units.into_iter().zip(reused) {
        let part = match (reused, &unit.source) {
            (Some(part), _) => part,
            (None, Some(_)) => match fresh.next() {
                Some(part) => {
                    written += 1;
                    Arc::new(part)
                }
                None => continue,
            },
            (None, None) => continue,
        };
        core |= unit.group.is_empty();
        named |= !unit.group.is_empty();
        let gv = unit.group_version_path();
        let group = groups.entry(gv.clone()).or_insert_with(Group::custom);
        group.kinds.push((unit.fingerprint, part));
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
                builtin_groups.push(unit.group);
            }
        }
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
    (groups, written)
}

/// The parts of `sources`, in order, written on every core: a first build writes one per
/// served version of every CRD, and the parts are independent. Below a few dozen parts a
/// thread costs more than it saves.
fn write_parts(sources: &[&Source]) -> Vec<Part> {
    on_cores(sources, 32, |s| Part::of_source(s))
}

/// A v3 document as the build found it: kept from the previous build, or assembled.
enum V3 {
    Kept(Doc),
    Assembled(Written),
}

/// `f` of every item, in order, on every core, at least `least` items a thread.
fn on_cores<T: Sync, R: Send>(items: &[T], least: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = items.len().div_ceil(threads).max(least);
    if items.len() <= chunk {
        return items.iter().map(f).collect();
    }
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> =
            items.chunks(chunk).map(|chunk| scope.spawn(move || chunk.iter().map(f).collect::<Vec<_>>())).collect();
        // A thread's panic goes on as it would have without threads: a result left out
        // would give the next items' results to the wrong items.
        handles.into_iter().flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
    })
}

impl Doc {
    /// The document written, its `Last-Modified` by its ETag.
    fn of(written: Written, last_modified: impl FnOnce(&str) -> Timestamp) -> Doc {
        let etag = written.etag.unwrap_or_default();
        Doc { last_modified: last_modified(&etag), etag, body: written.gzip }
    }
}

/// Writes `{member,...}`.
fn section(doc: &mut GzipWriter, members: &[&Member]) {
    doc.text(b"{");
    for (i, m) in members.iter().enumerate() {
        if i > 0 {
            doc.text(b",");
        }
        doc.piece(&m.json);
    }
    doc.text(b"}");
}

/// A JSON object's text without its closing brace, to be continued.
fn open(head: &J, escape: Escape) -> GzipWriter {
    let mut text = head.to_text_as(escape).into_bytes();
    text.pop();
    let mut doc = GzipWriter::new(true);
    doc.text(&text);
    doc
}

/// The members of a document's `definitions` (or `schemas`): each part's own and the
/// built-in ones they reach, once each, by name.
fn definitions<'a>(
    parts: &[&'a Part],
    own: impl Fn(&'a Part) -> &'a [Member],
    builtin: impl Fn(&'a Part) -> &'a [&'static str],
    version: impl Fn(&'static parts::Builtin) -> &'static Member,
) -> Vec<&'a Member> {
    let mut by_name: BTreeMap<&str, &Member> = BTreeMap::new();
    for part in parts {
        for m in own(part) {
            by_name.entry(m.key.as_str()).or_insert(m);
        }
        for name in builtin(part) {
            if let Some(b) = parts::builtin(name) {
                by_name.entry(name).or_insert(version(b));
            }
        }
    }
    by_name.into_values().collect()
}

/// `/openapi/v2` from every part, and its paths, definitions and parameters in order.
fn assemble_v2(api_version: &str, parts: &[&Part]) -> (Written, [Vec<Member>; 3]) {
    let mut paths: Vec<&Member> = parts.iter().flat_map(|p| &p.v2_paths).collect();
    paths.sort_by(|a, b| a.key.cmp(&b.key));
    let defs = definitions(parts, |p| &p.v2_definitions, |p| &p.v2_builtin, |b| &b.v2);
    // kube-openapi sorts them by name, the same names by text (never met: a name ends in
    // a hash of the text, so the compressed text, which orders differently, stands in).
    let params: BTreeMap<(&str, &[u8]), &Member> =
        parts.iter().flat_map(|p| &p.v2_parameters).map(|m| ((m.key.as_str(), &m.json.bytes[..]), m)).collect();
    let params: Vec<&Member> = params.into_values().collect();

    let mut doc = open(&v2::head(api_version), Escape::Plain);
    doc.text(b",\"paths\":");
    section(&mut doc, &paths);
    doc.text(b",\"definitions\":");
    section(&mut doc, &defs);
    doc.text(b",\"parameters\":");
    section(&mut doc, &params);
    doc.text(b",");
    doc.text(&v2::tail().to_text_as(Escape::Plain).as_bytes()[1..]);
    let order = |members: Vec<&Member>| members.into_iter().cloned().collect();
    (doc.finish(), [order(paths), order(defs), order(params)])
}

/// One `/openapi/v3` document from its parts.
fn assemble_v3(title: &str, version: &str, parts: &[&Part]) -> Written {
    let mut paths: Vec<&Member> = parts.iter().flat_map(|p| &p.v3_paths).collect();
    paths.sort_by(|a, b| a.key.cmp(&b.key));
    let schemas = definitions(parts, |p| &p.v3_schemas, |p| &p.v3_builtin, |b| &b.v3);
    let mut doc = open(&v3::head(title, version), Escape::Html);
    doc.text(b",\"paths\":");
    section(&mut doc, &paths);
    doc.text(b",\"components\":{\"schemas\":");
    section(&mut doc, &schemas);
    doc.text(b"}}");
    doc.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openapi::crd_schema::{CrdVersion, definition_name};
    use crate::openapi::routes::KindSpec;
    use serde_json::json;

    /// A served kind: CRD kind `n` of `group` whose `spec.size` allows at most `max`, or
    /// the built-in Namespace.
    fn unit(group: &str, n: usize, max: u64) -> Unit {
        let (kind, plural) = (format!("Kind{n}"), format!("kind{n}s"));
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"size": {"type": "integer", "maximum": max}}}}});
        let spec = KindSpec {
            group: group.into(),
            version: "v1".into(),
            kind: kind.clone(),
            plural: plural.clone(),
            namespaced: n.is_multiple_of(2),
            status: n.is_multiple_of(3),
            scale: false,
            verbs: crate::kinds::CUSTOM_VERBS.to_vec(),
            flavor: Flavor::Custom,
            definition: definition_name(group, "v1", &kind),
            list_definition: definition_name(group, "v1", &format!("{kind}List")),
        };
        let crd = CrdVersion {
            group: group.into(),
            version: "v1".into(),
            kind: kind.clone(),
            list_kind: format!("{kind}List"),
            plural,
            schema: Some(crate::openapi::crd_schema::Schema::of("v1", &schema)),
            selectable_fields: Vec::new(),
        };
        let fingerprint = format!("{group}/{kind}/{max}");
        Unit {
            fingerprint,
            group: group.into(),
            version: "v1".into(),
            flavor: Flavor::Custom,
            source: Some(Source { spec, crd: Some(crd) }),
        }
    }

    fn namespaces() -> Unit {
        let spec = KindSpec {
            group: String::new(),
            version: "v1".into(),
            kind: "Namespace".into(),
            plural: "namespaces".into(),
            namespaced: false,
            status: true,
            scale: false,
            verbs: crate::kinds::BUILTIN_VERBS.to_vec(),
            flavor: Flavor::BuiltIn,
            definition: "io.k8s.api.core.v1.Namespace".into(),
            list_definition: "io.k8s.api.core.v1.NamespaceList".into(),
        };
        let source = Some(Source { spec, crd: None });
        Unit {
            fingerprint: "namespaces".into(),
            group: String::new(),
            version: "v1".into(),
            flavor: Flavor::BuiltIn,
            source,
        }
    }

    /// The units of a state: the built-in kind and kinds 0..5 over two groups, kind 2 with `max`.
    fn state(max: u64, without: Option<usize>) -> Vec<Unit> {
        let custom = (0..5).filter(|n| Some(*n) != without).map(|n| {
            let group = if n < 3 { "a.example.com" } else { "b.example.com" };
            unit(group, n, if n == 2 { max } else { 10 })
        });
        std::iter::once(namespaces()).chain(custom).collect()
    }

    fn build(units: Vec<Unit>, previous: Option<&Documents>) -> Documents {
        Documents::build(units, "v1.32.0", Timestamp::UNIX_EPOCH, previous)
    }

    /// What the previous build has comes without a source, as `current` passes it.
    fn known_to(previous: &Documents, units: Vec<Unit>) -> Vec<Unit> {
        units
            .into_iter()
            .map(|u| Unit { source: u.source.filter(|_| !previous.has_part(&u.fingerprint)), ..u })
            .collect()
    }

    /// The text of a document: what a plain answer sends, and what gzip's decoder reads.
    fn text(doc: &Gzipped) -> Vec<u8> {
        let mut gunzipped = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&doc.bytes()[..]), &mut gunzipped).expect("gzip");
        assert!(gunzipped == doc.text(), "gzip's decoder and the plain answer read the same text");
        assert_eq!(doc.len, gunzipped.len());
        gunzipped
    }

    fn json(doc: &Doc) -> serde_json::Value {
        let text = text(&doc.body);
        assert_eq!(doc.etag, etag(&text), "the ETag is the SHA-512 of the text");
        serde_json::from_slice(&text).expect("JSON")
    }

    /// The same text, and the same compressed bytes (a rebuild's reused members compress
    /// as they did when written).
    fn assert_same(a: &Documents, b: &Documents) {
        assert!(text(&a.v2.body) == text(&b.v2.body), "/openapi/v2 differs from a whole build");
        assert!(a.v2.body.bytes() == b.v2.body.bytes(), "/openapi/v2 compressed differs from a whole build");
        assert!(text(&a.v2_protobuf()) == text(&b.v2_protobuf()), "/openapi/v2 protobuf differs from a whole build");
        assert_eq!(a.v2.etag, b.v2.etag);
        assert_eq!(a.v3_index, b.v3_index);
        assert_eq!(a.v3.keys().collect::<Vec<_>>(), b.v3.keys().collect::<Vec<_>>());
        for (gv, doc) in &a.v3 {
            assert!(text(&doc.body) == text(&b.v3[gv].body), "{gv} differs from a whole build");
            assert_eq!(doc.etag, b.v3[gv].etag);
        }
    }

    #[test]
    fn a_change_writes_only_its_kind_s_part_and_equals_a_whole_build() {
        let first = build(state(10, None), None);
        assert_eq!(first.written, 6);
        let v2 = json(&first.v2);
        assert_eq!(
            v2["definitions"]["com.example.a.v1.Kind2"]["properties"]["spec"]["properties"]["size"]["maximum"],
            10
        );
        assert!(v2["parameters"].as_object().is_some_and(|p| p.contains_key("pretty-tJGM1-ng")));

        // Kind 2's schema changes: one part written; b's document kept as it was.
        let changed = build(known_to(&first, state(4, None)), Some(&first));
        assert_eq!(changed.written, 1);
        assert_same(&changed, &build(state(4, None), None));
        let v2 = json(&changed.v2);
        assert_eq!(
            v2["definitions"]["com.example.a.v1.Kind2"]["properties"]["spec"]["properties"]["size"]["maximum"],
            4
        );
        let b = "apis/b.example.com/v1";
        assert!(changed.v3[b].body.same(&first.v3[b].body), "an unchanged group's document is kept");
        let kind0 = "a.example.com/Kind0/10";
        assert!(Arc::ptr_eq(&changed.parts[kind0], &first.parts[kind0]), "an unchanged kind's part is reused");
        for (gv, doc) in &changed.v3 {
            assert_eq!(json(doc)["openapi"], "3.0.0", "{gv}");
        }
        assert_ne!(changed.v3["apis/a.example.com/v1"].etag, first.v3["apis/a.example.com/v1"].etag);

        // Nothing changes: nothing written, the same bytes (from the re-pointed parts).
        let again = build(known_to(&changed, state(4, None)), Some(&changed));
        assert_eq!(again.written, 0);
        assert_same(&again, &changed);

        // Kind 4 goes: its group's document loses it, nothing is written.
        let fewer = build(known_to(&again, state(4, Some(4))), Some(&again));
        assert_eq!(fewer.written, 0);
        assert_same(&fewer, &build(state(4, Some(4)), None));
        assert!(!String::from_utf8_lossy(&text(&fewer.v2.body)).contains("Kind4"));
    }

    #[test]
    fn work_on_every_core_comes_back_in_order() {
        let items: Vec<usize> = (0..100).collect();
        let on_one = |x: &usize| (*x * 2, std::thread::current().id());
        let doubled = on_cores(&items, 8, on_one);
        assert_eq!(doubled.iter().map(|(x, _)| *x).collect::<Vec<_>>(), (0..200).step_by(2).collect::<Vec<_>>());
        let few = on_cores(&items[..5], 8, on_one);
        assert!(few.iter().all(|(_, t)| *t == std::thread::current().id()), "a few items stay on this thread");
    }

    #[test]
    fn etags_are_upper_case_sha512() {
        let e = etag(b"");
        assert_eq!(e.len(), 128);
        assert!(e.starts_with("CF83E1357EEFB8BD"));
    }
}
