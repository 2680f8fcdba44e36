//! The set of OpenAPI documents for one state of the served kinds: `/openapi/v2` (JSON, and
//! protobuf once asked for), the `/openapi/v3` index and one `/openapi/v3/<group-version>` document per
//! group-version, each with its ETag (the SHA-512 of its bytes, which is also the
//! `?hash=` in the index's `serverRelativeURL`s).
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

use super::compressed::{Deflater, GzipWriter, Gzipped, Written};
use super::group_versions::{self, Group, V3};
use super::json::{Escape, J};
use super::parts::{self, Member, Part, Source};
use super::routes::Flavor;
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
    /// What to write the kind's part and v3 share from; `None` when the previous build
    /// keeps its group-version's document ([`Documents::keeps`]), which spares decoding the
    /// CRD.
    pub source: Option<Source>,
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
    /// The kinds each v3 document holds, by fingerprint: an unchanged list keeps the
    /// document (its discovery endpoints follow from them).
    v3_from: BTreeMap<String, Vec<String>>,
}

/// Upper-case hex SHA-512, as the documents' ETags (written while they are assembled).
#[cfg(test)]
pub fn etag(body: &[u8]) -> String {
    super::compressed::upper_hex(&Sha512::digest(body))
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

    /// Whether this build's v3 document of `gv` (a group-version path) holds exactly
    /// these kinds, by fingerprint in order, and would be kept by the next build, which
    /// then needs no source for them.
    pub fn keeps(&self, gv: &str, fingerprints: &[&str]) -> bool {
        self.v3_of(gv, fingerprints).is_some()
    }

    /// This build's v3 document of `gv`, if it holds exactly these kinds.
    pub(super) fn v3_of(&self, gv: &str, fingerprints: &[&str]) -> Option<&Doc> {
        let kinds = self.v3_from.get(gv)?;
        let same = kinds.len() == fingerprints.len() && kinds.iter().zip(fingerprints).all(|(a, b)| a == b);
        same.then(|| self.v3.get(gv)).flatten()
    }

    /// This build's part of the kind of `fingerprint`.
    pub(super) fn part(&self, fingerprint: &str) -> Option<&Arc<Part>> {
        self.parts.get(fingerprint)
    }

    /// Assembles everything, writing only the parts `previous` does not have and the v3
    /// documents whose kinds changed; documents whose bytes did not change keep
    /// `previous`'s `Last-Modified`.
    pub fn build(units: Vec<Unit>, api_version: &str, now: Timestamp, previous: Option<&Documents>) -> Documents {
        let groups: Vec<(String, Group)> = group_versions::group(units).into_iter().collect();
        // Each group-version's document, and its kinds' parts, on every core: a first build
        // writes them all, one more CRD its group-version's alone.
        let built = on_cores(&groups, 4, |(gv, group)| group_versions::build(gv, group, previous));
        let none = Default::default();
        let discovery: BTreeMap<&str, Part> = groups
            .iter()
            .filter(|(_, g)| !g.discovery.is_empty())
            .map(|(gv, g)| (gv.as_str(), Part::of_routes(&g.discovery, &none)))
            .collect();
        let all: Vec<&Part> = groups
            .iter()
            .zip(&built)
            .flat_map(|((gv, _), b)| b.parts.iter().map(|(_, p)| p.as_ref()).chain(discovery.get(gv.as_str())))
            .collect();
        // Assembling hashes every member's text, inflated again.
        let (v2_body, orders) = assemble_v2(api_version, &all);
        let v2_layout = (api_version.to_string(), orders);
        let kept = |etag: &str, old: Option<&Doc>| match old {
            Some(old) if old.etag == etag => old.last_modified,
            _ => now,
        };
        let v2 = Doc::of(v2_body, |etag| kept(etag, previous.map(|p| &p.v2)));

        let (mut v3, mut v3_from, mut parts, mut written) = (BTreeMap::new(), BTreeMap::new(), HashMap::new(), 0);
        for ((gv, _), built) in groups.into_iter().zip(built) {
            let doc = match built.doc {
                V3::Kept(doc) => doc,
                V3::Written(body) => Doc::of(body, |etag| kept(etag, previous.and_then(|p| p.v3.get(&gv)))),
            };
            written += built.written;
            v3_from.insert(gv.clone(), built.parts.iter().map(|(f, _)| f.clone()).collect());
            parts.extend(built.parts);
            v3.insert(gv, doc);
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
    use crate::openapi::routes::KindSpec;
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

    pub(in crate::openapi) fn namespaces() -> Unit {
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

    /// The kinds of the group-versions whose documents the previous build keeps come
    /// without a source, as `current` passes them ([`super::sources::units`]).
    fn known_to(previous: &Documents, units: Vec<Unit>) -> Vec<Unit> {
        let mut by_group_version: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for u in &units {
            by_group_version.entry(u.group_version_path()).or_default().push(u.fingerprint.clone());
        }
        let kept = |gv: &str| {
            let kinds: Vec<&str> = by_group_version[gv].iter().map(String::as_str).collect();
            previous.keeps(gv, &kinds)
        };
        units
            .into_iter()
            .map(|u| {
                let keeps = kept(&u.group_version_path());
                Unit { source: u.source.filter(|_| !keeps), ..u }
            })
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

        // Kind 2's schema changes: one part written; a's document written again from all
        // its kinds' sources, b's kept as it was.
        let units = known_to(&first, state(4, None));
        let read: Vec<&str> = units.iter().filter(|u| u.source.is_some()).map(|u| u.fingerprint.as_str()).collect();
        assert_eq!(read, ["a.example.com/Kind0/10", "a.example.com/Kind1/10", "a.example.com/Kind2/4"]);
        let changed = build(units, Some(&first));
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

        // Kind 4 goes: its group's document is written again without it, no part is.
        let fewer = build(known_to(&again, state(4, Some(4))), Some(&again));
        assert_eq!(fewer.written, 0);
        assert_same(&fewer, &build(state(4, Some(4)), None));
        assert!(!String::from_utf8_lossy(&text(&fewer.v2.body)).contains("Kind4"));
        assert!(!fewer.v3[b].body.same(&again.v3[b].body), "the group that lost a kind is written again");
        let a = "apis/a.example.com/v1";
        assert!(fewer.v3[a].body.same(&again.v3[a].body), "the other group's document is kept");
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
