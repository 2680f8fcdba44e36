//! The set of OpenAPI documents for one state of the served kinds: `/openapi/v2` (JSON, and
//! protobuf once asked for), the `/openapi/v3` index and one `/openapi/v3/<group-version>` document per
//! group-version, each with its ETag (the SHA-512 of its bytes, which is also the
//! `?hash=` in the index's `serverRelativeURL`s).
//!
//! Each document is written the first time a client asks for it, as kube-openapi builds
//! its merged specs lazily: kubectl's `apply` reads the v3 index and a group-version's
//! document, never `/openapi/v2`; a client validating on its side reads `/openapi/v2`
//! alone. Writing every document for either was half again the first `/openapi/v2` of
//! 2,000 CRDs. A state knows what the states before it wrote ([`Documents::new`]): the
//! kinds' parts, the v3 documents whose kinds did not change, and each document's last
//! ETag and `Last-Modified`.
//!
//! `/openapi/v2` is assembled from [`Part`]s, one per served kind, kept by what each was
//! built from: the next build writes only the parts of kinds that changed and reuses the
//! others'. It is held gzip-compressed, as the list of its members' compressed bytes
//! ([`super::compressed`]), which it shares with the parts: keeping the parts costs no
//! second copy, and a rebuild copies no member. The members' bytes are about a sixth of
//! the text (2,000 CRDs of the scale bench make 152 MiB of `/openapi/v2`, held in 26.6).
//!
//! Each v3 document is held as one compressed stream ([`super::group_versions`]): kept
//! while its kinds do not change, written again whole from all its kinds' sources when
//! one does.
//!
//! The protobuf form of `/openapi/v2` is derived from its JSON, member by member, the first
//! time a client asks for it (as kube-openapi converts its JSON spec lazily): most clients
//! never do (kubectl reads `/openapi/v2` only to validate what the server cannot), and a
//! large set's protobuf is nearly as big as its JSON.
//!
//! Writing takes seconds for thousands of CRDs: call [`Documents::v2`],
//! [`Documents::v2_protobuf`], [`Documents::v3`] and [`Documents::v3_index`] off the async
//! workers.

use super::compressed::{Deflater, GzipWriter, Gzipped, Written};
use super::group_versions::{self, Group};
use super::json::{Escape, J};
use super::parts::{self, Member, Part};
use super::routes::Flavor;
use super::sources::SourceOf;
use super::{proto, v2};
use bytes::Bytes;
use k8s_openapi::jiff::Timestamp;
#[cfg(test)]
use sha2::{Digest, Sha512};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::OnceLock;

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
    /// What to write the kind's part and v3 share from.
    pub source: SourceOf,
}

impl Unit {
    /// The OpenAPI v3 document path: `api/v1` or `apis/<group>/<version>`.
    pub fn group_version_path(&self) -> String {
        if self.group.is_empty() {
            format!("api/{}", self.version)
        } else {
            format!("apis/{}/{}", self.group, self.version)
        }
    }
}

/// A document's ETag and `Last-Modified` as a state before had them: a document written
/// again with the same bytes keeps its `Last-Modified`.
#[derive(Debug, Clone)]
struct Before {
    etag: String,
    last_modified: Timestamp,
}

impl Before {
    /// A document's as written in this state, else as it was before.
    fn last(written: Option<&Doc>, before: &Option<Before>) -> Option<Before> {
        written
            .map(|doc| Before { etag: doc.etag.clone(), last_modified: doc.last_modified })
            .or_else(|| before.clone())
    }
}

/// Every document of one state, each written when first asked for.
#[derive(Debug)]
pub struct Documents {
    api_version: String,
    /// When the state was found: the `Last-Modified` of a document whose bytes changed.
    now: Timestamp,
    /// By group-version path (`api/v1`, `apis/<group>/<version>`).
    groups: BTreeMap<String, GroupVersion>,
    /// The parts states before wrote of this state's kinds, by fingerprint.
    known_parts: HashMap<String, Arc<Part>>,
    v2_before: Option<Before>,
    v2: OnceLock<V2>,
    v3_index: OnceLock<Bytes>,
}

/// One group-version: its kinds and its v3 document.
#[derive(Debug)]
struct GroupVersion {
    group: Group,
    /// Set from the start when a state before wrote it with the same kinds.
    doc: OnceLock<Doc>,
    before: Option<Before>,
}

impl GroupVersion {
    /// The ETag and `Last-Modified` of its document as last written.
    fn last(&self) -> Option<Before> {
        Before::last(self.doc.get(), &self.before)
    }
}

/// `/openapi/v2` of one state.
#[derive(Debug)]
pub struct V2 {
    pub doc: Doc,
    /// `doc` as gnostic protocol buffers (same ETag, as kube serves it), once asked for.
    protobuf: OnceLock<Gzipped>,
    /// What `protobuf` is derived from: the members of the paths, definitions and
    /// parameters sections, in order.
    sections: [Vec<Member>; 3],
    /// Every kind's part by fingerprint, for the states after.
    parts: HashMap<String, Arc<Part>>,
}

/// Upper-case hex SHA-512, as the documents' ETags (written while they are assembled).
#[cfg(test)]
pub fn etag(body: &[u8]) -> String {
    super::compressed::upper_hex(&Sha512::digest(body))
}

impl Documents {
    /// The documents of a state, writing none yet: what `previous` (the state before)
    /// wrote or knew is kept where its kinds are the same.
    pub fn new(units: Vec<Unit>, api_version: &str, now: Timestamp, previous: Option<&Documents>) -> Documents {
        let groups: BTreeMap<String, GroupVersion> = group_versions::group(units)
            .into_iter()
            .map(|(gv, group)| {
                let old = previous.and_then(|p| p.groups.get(&gv));
                let kept = old.filter(|o| o.group.fingerprints().eq(group.fingerprints())).and_then(|o| o.doc.get());
                let doc = kept.cloned().map(OnceLock::from).unwrap_or_default();
                let before = old.and_then(GroupVersion::last);
                (gv, GroupVersion { group, doc, before })
            })
            .collect();
        let known_parts = previous
            .map(|p| {
                let known = p.parts_known();
                let fingerprints = groups.values().flat_map(|g| g.group.fingerprints());
                fingerprints.filter_map(|f| Some((f.to_string(), Arc::clone(known.get(f)?)))).collect()
            })
            .unwrap_or_default();
        let v2_before = previous.and_then(|p| Before::last(p.v2.get().map(|v| &v.doc), &p.v2_before));
        Documents {
            api_version: api_version.to_string(),
            now,
            groups,
            known_parts,
            v2_before,
            v2: OnceLock::new(),
            v3_index: OnceLock::new(),
        }
    }

    /// The parts this state has: all of them once `/openapi/v2` is written.
    fn parts_known(&self) -> &HashMap<String, Arc<Part>> {
        self.v2.get().map_or(&self.known_parts, |v| &v.parts)
    }

    /// `/openapi/v2`, written the first time: the parts not known yet on every core, then
    /// all of them assembled (which hashes every member's text, inflated again).
    pub fn v2(&self) -> &V2 {
        self.v2.get_or_init(|| {
            let missing: Vec<&Unit> = self
                .groups
                .values()
                .flat_map(|g| &g.group.kinds)
                .filter(|u| !self.known_parts.contains_key(&u.fingerprint))
                .collect();
            let new_parts = on_cores(&missing, 4, |u| u.source.get().map(|s| Arc::new(parts::of_source(&s))));
            let (mut parts, mut written) = (self.known_parts.clone(), 0);
            for (unit, part) in missing.iter().zip(new_parts) {
                if let Some(part) = part {
                    parts.insert(unit.fingerprint.clone(), part);
                    written += 1;
                }
            }
            let none = Default::default();
            let discovery: BTreeMap<&str, Part> = self
                .groups
                .iter()
                .filter(|(_, g)| !g.group.discovery.is_empty())
                .map(|(gv, g)| (gv.as_str(), Part::of_routes(&g.group.discovery, &none)))
                .collect();
            // Each group-version's kinds, then its discovery endpoints: the first of two
            // definitions of one name is the one written.
            let all: Vec<&Part> = self
                .groups
                .iter()
                .flat_map(|(gv, g)| {
                    let kinds = g.group.kinds.iter().filter_map(|u| parts.get(&u.fingerprint)).map(Arc::as_ref);
                    kinds.chain(discovery.get(gv.as_str()))
                })
                .collect();
            let (body, orders) = assemble_v2(&self.api_version, &all);
            let doc = Doc::of(body, |etag| self.last_modified(etag, self.v2_before.as_ref()));
            tracing::debug!(kinds = parts.len(), written, "/openapi/v2 assembled");
            V2 { doc, protobuf: OnceLock::new(), sections: orders, parts }
        })
    }

    /// `/openapi/v2` as gnostic protocol buffers, derived from the JSON the first time (a
    /// second or so for thousands of CRDs).
    pub fn v2_protobuf(&self) -> Gzipped {
        let v2 = self.v2();
        v2.protobuf
            .get_or_init(|| {
                let [paths, defs, params] = &v2.sections;
                let mut pb = GzipWriter::new(false);
                pb.text(&proto::encode(&v2::head(&self.api_version)));
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

    /// The v3 document of `gv` (a group-version path), written the first time.
    pub fn v3(&self, gv: &str) -> Option<&Doc> {
        let g = self.groups.get(gv)?;
        Some(g.doc.get_or_init(|| {
            let written = group_versions::write_doc(&g.group);
            Doc::of(written, |etag| self.last_modified(etag, g.before.as_ref()))
        }))
    }

    /// The group-version paths that have a v3 document, in order.
    #[cfg(test)]
    pub fn group_versions(&self) -> impl Iterator<Item = &str> {
        self.groups.keys().map(String::as_str)
    }

    /// The `/openapi/v3` index: every group-version's document and its hash, so every
    /// document not written yet is, on every core.
    pub fn v3_index(&self) -> &Bytes {
        self.v3_index.get_or_init(|| {
            let unwritten: Vec<&str> =
                self.groups.iter().filter(|(_, g)| g.doc.get().is_none()).map(|(gv, _)| gv.as_str()).collect();
            on_cores(&unwritten, 4, |gv| {
                self.v3(gv);
            });
            let paths = self
                .groups
                .keys()
                .filter_map(|gv| {
                    let url = format!("/openapi/v3/{gv}?hash={}", self.v3(gv)?.etag);
                    Some((gv.clone(), J::obj().with("serverRelativeURL", J::str(url))))
                })
                .collect();
            Bytes::from(J::obj().with("paths", J::Obj(paths)).to_text())
        })
    }

    /// A written document's `Last-Modified`: the one it had before if its bytes are the same.
    fn last_modified(&self, etag: &str, before: Option<&Before>) -> Timestamp {
        match before {
            Some(b) if b.etag == etag => b.last_modified,
            _ => self.now,
        }
    }
}

/// `f` of every item, in order, on every core, at least `least` items a thread.
pub(super) fn on_cores<T: Sync, R: Send>(items: &[T], least: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
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

/// `/openapi/v2` from every part, and its paths, definitions and parameters in order.
fn assemble_v2(api_version: &str, parts: &[&Part]) -> (Written, [Vec<Member>; 3]) {
    let mut paths: Vec<&Member> = parts.iter().flat_map(|p| &p.v2_paths).collect();
    paths.sort_by(|a, b| a.key.cmp(&b.key));
    let defs = parts::definitions(parts, |p| &p.v2_definitions, |p| &p.v2_builtin, |b| &b.v2);
    // kube-openapi sorts them by name, the same names by text (never met: a name ends in
    // a hash of the text, so the compressed text, which orders differently, stands in).
    let params: BTreeMap<(&str, &[u8]), &Member> =
        parts.iter().flat_map(|p| &p.v2_parameters).map(|m| ((m.key.as_str(), &m.json.bytes[..]), m)).collect();
    let params: Vec<&Member> = params.into_values().collect();

    let mut doc = GzipWriter::new(true);
    doc.text(&group_versions::unclosed(&v2::head(api_version), Escape::Plain));
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

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::openapi::crd_schema::{CrdVersion, definition_name};
    use crate::openapi::parts::Source;
    use crate::openapi::routes::KindSpec;
    use crate::openapi::sources::CrdAtRevision;
    use serde_json::json;

    /// A served kind: CRD kind `n` of `group` whose `spec.size` allows at most `max`, or
    /// the built-in Namespace.
    pub(in crate::openapi) fn unit(group: &str, n: usize, max: u64) -> Unit {
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
            schema: Some(crate::openapi::crd_schema::Schema::of(&schema)),
            selectable_fields: Vec::new(),
        };
        let fingerprint = format!("{group}/{kind}/{max}");
        Unit {
            fingerprint,
            group: group.into(),
            version: "v1".into(),
            flavor: Flavor::Custom,
            source: SourceOf::Given(Box::new(Source { spec, crd: Some(crd) })),
        }
    }

    pub(in crate::openapi) fn namespaces() -> Unit {
        let spec = KindSpec {
            group: String::new(),
            version: "v1".into(),
            kind: "Namespace".into(),
            plural: "namespaces".into(),
            namespaced: false,
            status: true,
            scale: false,
            verbs: crate::kinds::NAMESPACE_VERBS.to_vec(),
            flavor: Flavor::BuiltIn,
            definition: "io.k8s.api.core.v1.Namespace".into(),
            list_definition: "io.k8s.api.core.v1.NamespaceList".into(),
        };
        let source = SourceOf::Given(Box::new(Source { spec, crd: None }));
        Unit {
            fingerprint: "namespaces".into(),
            group: String::new(),
            version: "v1".into(),
            flavor: Flavor::BuiltIn,
            source,
        }
    }

    /// `unit(group, n, max)` as a stored CRD serves it: its source is read from the CRD's
    /// bytes when first needed.
    fn stored(group: &str, n: usize, max: u64) -> (Unit, Arc<CrdAtRevision>) {
        let given = unit(group, n, max);
        let SourceOf::Given(source) = &given.source else { unreachable!("a given source") };
        let spec = &source.spec;
        let crd = json!({"spec": {
            "group": group,
            "names": {"kind": spec.kind, "listKind": format!("{}List", spec.kind), "plural": spec.plural},
            "scope": if spec.namespaced { "Namespaced" } else { "Cluster" },
            "versions": [{
                "name": "v1",
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object",
                    "properties": {"size": {"type": "integer", "maximum": max}}}}}},
                "subresources": if spec.status { json!({"status": {}}) } else { json!({}) },
            }],
        }});
        let crd = Arc::new(CrdAtRevision::new(Bytes::from(crd.to_string())));
        let source = SourceOf::Stored { crd: Arc::clone(&crd), version: "v1".into(), verbs: spec.verbs.clone() };
        (Unit { source, ..given }, crd)
    }

    /// The group of custom kind `n` of a state.
    fn group_of(n: usize) -> &'static str {
        if n < 3 { "a.example.com" } else { "b.example.com" }
    }

    /// The units of a state: the built-in kind and kinds 0..5 over two groups, kind 2 with `max`.
    fn state(max: u64, without: Option<usize>) -> Vec<Unit> {
        let custom =
            (0..5).filter(|n| Some(*n) != without).map(|n| unit(group_of(n), n, if n == 2 { max } else { 10 }));
        std::iter::once(namespaces()).chain(custom).collect()
    }

    /// `state`'s units served by stored CRDs, and the CRDs.
    fn stored_state(max: u64) -> (Vec<Unit>, Vec<Arc<CrdAtRevision>>) {
        let (custom, crds): (Vec<Unit>, Vec<Arc<CrdAtRevision>>) =
            (0..5).map(|n| stored(group_of(n), n, if n == 2 { max } else { 10 })).unzip();
        (std::iter::once(namespaces()).chain(custom).collect(), crds)
    }

    /// The documents of a state found at `now` (seconds), none written yet.
    fn at(now: i64, units: Vec<Unit>, previous: Option<&Documents>) -> Documents {
        let now = Timestamp::from_second(now).expect("a time");
        Documents::new(units, "v1.32.0", now, previous)
    }

    /// The documents of a state, every one written.
    fn build(units: Vec<Unit>, previous: Option<&Documents>) -> Documents {
        let docs = at(0, units, previous);
        docs.v2();
        docs.v3_index();
        docs
    }

    /// How many kinds' parts writing `/openapi/v2` wrote (the others were known).
    fn written(docs: &Documents) -> usize {
        docs.v2().parts.len() - docs.known_parts.len()
    }

    fn v3<'a>(docs: &'a Documents, gv: &str) -> &'a Doc {
        docs.v3(gv).unwrap_or_else(|| panic!("no document for {gv}"))
    }

    /// The group-versions whose v3 document is written.
    fn v3_written(docs: &Documents) -> Vec<&str> {
        docs.groups.iter().filter(|(_, g)| g.doc.get().is_some()).map(|(gv, _)| gv.as_str()).collect()
    }

    /// Which of `crds` (kinds 0..5) have been read.
    fn read(crds: &[Arc<CrdAtRevision>]) -> Vec<usize> {
        (0..crds.len()).filter(|n| crds[*n].read()).collect()
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
        let (a2, b2) = (&a.v2().doc, &b.v2().doc);
        assert!(text(&a2.body) == text(&b2.body), "/openapi/v2 differs from a whole build");
        assert!(a2.body.bytes() == b2.body.bytes(), "/openapi/v2 compressed differs from a whole build");
        assert!(text(&a.v2_protobuf()) == text(&b.v2_protobuf()), "/openapi/v2 protobuf differs from a whole build");
        assert_eq!(a2.etag, b2.etag);
        assert_eq!(a.v3_index(), b.v3_index());
        assert_eq!(a.group_versions().collect::<Vec<_>>(), b.group_versions().collect::<Vec<_>>());
        for gv in a.group_versions() {
            assert!(text(&v3(a, gv).body) == text(&v3(b, gv).body), "{gv} differs from a whole build");
            assert_eq!(v3(a, gv).etag, v3(b, gv).etag);
        }
    }

    #[test]
    fn a_change_writes_only_its_kind_s_part_and_equals_a_whole_build() {
        let first = build(state(10, None), None);
        assert_eq!(written(&first), 6);
        let v2 = json(&first.v2().doc);
        assert_eq!(
            v2["definitions"]["com.example.a.v1.Kind2"]["properties"]["spec"]["properties"]["size"]["maximum"],
            10
        );
        assert!(v2["parameters"].as_object().is_some_and(|p| p.contains_key("pretty-tJGM1-ng")));

        // Kind 2's schema changes: one part written; a's document written again from all
        // its kinds' sources, b's kept as it was.
        let changed = build(state(4, None), Some(&first));
        assert_eq!(written(&changed), 1);
        assert_same(&changed, &build(state(4, None), None));
        let v2 = json(&changed.v2().doc);
        assert_eq!(
            v2["definitions"]["com.example.a.v1.Kind2"]["properties"]["spec"]["properties"]["size"]["maximum"],
            4
        );
        let b = "apis/b.example.com/v1";
        assert!(v3(&changed, b).body.same(&v3(&first, b).body), "an unchanged group's document is kept");
        let kind0 = "a.example.com/Kind0/10";
        assert!(
            Arc::ptr_eq(&changed.v2().parts[kind0], &first.v2().parts[kind0]),
            "an unchanged kind's part is reused"
        );
        for gv in changed.group_versions() {
            assert_eq!(json(v3(&changed, gv))["openapi"], "3.0.0", "{gv}");
        }
        let a = "apis/a.example.com/v1";
        assert_ne!(v3(&changed, a).etag, v3(&first, a).etag);

        // Nothing changes: nothing written, the same bytes (from the re-pointed parts).
        let again = build(state(4, None), Some(&changed));
        assert_eq!(written(&again), 0);
        assert_same(&again, &changed);

        // Kind 4 goes: its group's document is written again without it, no part is.
        let fewer = build(state(4, Some(4)), Some(&again));
        assert_eq!(written(&fewer), 0);
        assert_same(&fewer, &build(state(4, Some(4)), None));
        assert!(!String::from_utf8_lossy(&text(&fewer.v2().doc.body)).contains("Kind4"));
        assert!(!v3(&fewer, b).body.same(&v3(&again, b).body), "the group that lost a kind is written again");
        assert!(v3(&fewer, a).body.same(&v3(&again, a).body), "the other group's document is kept");
    }

    #[test]
    fn each_document_is_written_when_first_asked_for() {
        let docs = at(0, state(10, None), None);
        let (a, b) = ("apis/a.example.com/v1", "apis/b.example.com/v1");
        assert!(v3_written(&docs).is_empty() && docs.v2.get().is_none(), "nothing is written before it is asked for");

        // kubectl apply's way: one group-version's document.
        assert_eq!(json(v3(&docs, a))["openapi"], "3.0.0");
        assert_eq!(v3_written(&docs), [a]);
        assert!(docs.v2.get().is_none(), "a v3 document writes no /openapi/v2");

        // A client validating on its side: /openapi/v2 writes no other v3 document.
        assert!(json(&docs.v2().doc)["definitions"].get("com.example.b.v1.Kind3").is_some());
        assert_eq!(v3_written(&docs), [a]);

        // The index needs every document's hash.
        let index: serde_json::Value = serde_json::from_slice(docs.v3_index()).expect("JSON");
        let url = format!("/openapi/v3/{b}?hash={}", v3(&docs, b).etag);
        assert_eq!(index["paths"][b]["serverRelativeURL"], url.as_str());
        assert_eq!(v3_written(&docs), docs.group_versions().collect::<Vec<_>>());
        assert_same(&docs, &build(state(10, None), None));
    }

    #[test]
    fn a_stored_crd_is_read_only_when_a_document_of_its_kind_is_written() {
        let (units, crds) = stored_state(10);
        let first = at(0, units, None);
        assert_eq!(read(&crds), [] as [usize; 0]);
        v3(&first, "apis/b.example.com/v1");
        assert_eq!(read(&crds), [3, 4], "group b's document reads b's CRDs alone");
        first.v2();
        assert_eq!(read(&crds), [0, 1, 2, 3, 4]);
        assert_same(&first, &build(state(10, None), None));

        // Kind 2's CRD changes: /openapi/v2 reads it alone; group a's document reads a's.
        let (units, crds) = stored_state(4);
        let changed = at(1, units, Some(&first));
        changed.v2();
        assert_eq!(read(&crds), [2]);
        v3(&changed, "apis/a.example.com/v1");
        assert_eq!(read(&crds), [0, 1, 2]);
        v3(&changed, "apis/b.example.com/v1");
        assert_eq!(read(&crds), [0, 1, 2], "group b's document is kept");
        assert_same(&changed, &build(state(4, None), None));
    }

    #[test]
    fn whether_a_schema_is_structural_is_found_once_for_every_document() {
        let kind0 = "com.example.a.v1.Kind0";
        let (unit, crd) = stored("a.example.com", 0, 10);
        let docs = at(0, vec![unit], None);
        assert!(json(&docs.v2().doc)["definitions"][kind0]["properties"].get("spec").is_some());
        assert_eq!(crd.structural("v1").get(), Some(&true), "kept for the CRD's revision");

        // Another document of the revision takes it as found: found not structural, the
        // schema is published as kube publishes such a one, without its properties.
        let (unit, crd) = stored("a.example.com", 0, 10);
        crd.structural("v1").set(false).expect("not found yet");
        let docs = at(0, vec![unit], None);
        let schema = &json(v3(&docs, "apis/a.example.com/v1"))["components"]["schemas"][kind0];
        assert!(schema.get("properties").is_none(), "{schema}");
    }

    #[test]
    fn what_a_state_was_never_asked_for_it_carries_from_the_state_before() {
        // /openapi/v2 alone, then a state (kind 2 changed) where only the v3 index is
        // asked for, then the same state found again, where /openapi/v2 is.
        let first = at(10, state(10, None), None);
        first.v2();
        let changed = at(20, state(4, None), Some(&first));
        changed.v3_index();
        let again = at(30, state(4, None), Some(&changed));
        assert_eq!(written(&again), 1, "the parts /openapi/v2 wrote two states before are reused");
        assert_same(&again, &build(state(4, None), None));
        assert_eq!(again.v2().doc.last_modified.as_second(), 30, "its bytes changed when it was not written");
        let b = "apis/b.example.com/v1";
        assert!(v3(&again, b).body.same(&v3(&changed, b).body));
        assert_eq!(v3(&again, b).last_modified.as_second(), 20);

        // The same bytes written again keep the Last-Modified of the last time they were
        // written, however many states passed in between.
        let unasked = at(40, state(4, None), Some(&again));
        let later = at(50, state(4, None), Some(&unasked));
        assert_eq!(written(&later), 0);
        assert_eq!(later.v2().doc.last_modified.as_second(), 30);
        let reverted = at(60, state(10, None), Some(&later));
        assert_eq!(reverted.v2().doc.etag, first.v2().doc.etag);
        assert_eq!(reverted.v2().doc.last_modified.as_second(), 60, "changed since it was last written");
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
