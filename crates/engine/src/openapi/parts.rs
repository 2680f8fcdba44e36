//! One served kind's share of the documents — its path items, the shared parameters they
//! use and the definitions they reach — written as the members of the documents' objects,
//! so that a change to one CRD writes only its own kinds' shares and [`super::documents`]
//! assembles the documents from the others (kube's aggregator likewise keeps one spec per
//! CRD and merges them).
//!
//! The built-in definitions every share reaches (`ObjectMeta`, `Status`, ...) are written
//! once for all ([`builtin`]); a share holds only their names.
//!
//! A kind's `/openapi/v2` share ([`Part`]) is kept between builds, each member compressed
//! on its own ([`super::compressed`]): v2 is one document over all kinds, assembled from
//! the compressed bytes after any change, and its protobuf form is derived from the
//! assembled JSON when a client first asks for it
//! ([`super::documents::Documents::v2_protobuf`]). Its v3 share ([`V3Share`]) is text,
//! written while its group-version's document is and dropped after: that document is
//! compressed as one stream (about three times smaller than its members compressed one by
//! one), and written again from all its kinds' sources when one of them changes.

use super::compressed::Deflated;
use super::crd_schema::{self, CrdVersion, Form};
use super::definitions;
use super::json::{Escape, J, write_str};
use super::routes::{self, KindSpec, Route, route_definitions};
use super::schema::{ordered, refs, to_v3};
use super::{v2, v3};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Mutex, OnceLock};

/// One served kind and, for a custom one, what its CRD says about the version.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    pub spec: KindSpec,
    pub crd: Option<CrdVersion>,
}

/// One member of a document's `paths`, `definitions` or `parameters` object.
#[derive(Debug, Clone)]
pub struct Member {
    /// Its name: a path, a definition's or a parameter's name.
    pub key: String,
    /// `"key":value`, as kube writes it, compressed on its own.
    pub json: Deflated,
    /// Where the value starts in the text, after `"key":`.
    pub value_at: usize,
}

impl Member {
    fn new(key: &str, value: &J) -> Member {
        Member::of_text(MemberText::new(key, value, Escape::Plain))
    }

    fn of_text(text: MemberText) -> Member {
        Member { json: Deflated::new(text.json.as_bytes()), value_at: text.value_at, key: text.key }
    }
}

/// One member's text, not compressed: what a v3 document, written as one stream, is
/// written from.
#[derive(Debug, Clone)]
pub struct MemberText {
    pub key: String,
    /// `"key":value`, as kube writes it.
    pub json: String,
    /// Where the value starts in `json`, after `"key":`.
    value_at: usize,
}

impl MemberText {
    fn new(key: &str, value: &J, escape: Escape) -> MemberText {
        MemberText::with(key, escape, |out| value.write_to(escape, out))
    }

    /// A member whose value is already JSON text.
    fn from_text(key: &str, value: &str, escape: Escape) -> MemberText {
        MemberText::with(key, escape, |out| out.push_str(value))
    }

    fn with(key: &str, escape: Escape, value: impl FnOnce(&mut String)) -> MemberText {
        let mut json = String::new();
        write_str(key, escape, &mut json);
        json.push(':');
        let value_at = json.len();
        value(&mut json);
        MemberText { key: key.to_string(), json, value_at }
    }
}

/// A member by its name, compressed or not.
pub trait Keyed {
    fn key(&self) -> &str;
}

impl Keyed for Member {
    fn key(&self) -> &str {
        &self.key
    }
}

impl Keyed for MemberText {
    fn key(&self) -> &str {
        &self.key
    }
}

/// The members of a document's `definitions` (or `schemas`): each share's own and the
/// built-in ones they reach, once each, by name.
pub fn definitions<'a, S, M: Keyed + 'static>(
    shares: &[&'a S],
    own: impl Fn(&'a S) -> &'a [M],
    builtin: impl Fn(&'a S) -> &'a [&'static str],
    version: impl Fn(&'static Builtin) -> &'static M,
) -> Vec<&'a M> {
    let mut by_name: BTreeMap<&str, &M> = BTreeMap::new();
    for share in shares {
        for m in own(share) {
            by_name.entry(m.key()).or_insert(m);
        }
        for name in builtin(share) {
            if let Some(b) = self::builtin(name) {
                by_name.entry(name).or_insert(version(b));
            }
        }
    }
    by_name.into_values().collect()
}

/// A definition of a part's own, written: its JSON text and the definitions it refers to.
#[derive(Debug, Default)]
pub struct Own {
    json: String,
    refs: BTreeSet<String>,
}

impl Own {
    /// A definition held as a swagger 2.0 value, in `form`.
    fn of_value(def: &Value, form: Form) -> Own {
        let json = match form {
            Form::V2 => ordered(def).to_text_as(Escape::Plain),
            Form::V3 => ordered(&to_v3(def)).to_text(),
        };
        let mut found = BTreeSet::new();
        refs(def, &mut found);
        Own { json, refs: found }
    }
}

/// A part's own definitions by name.
pub type OwnDefinitions = BTreeMap<String, Own>;

/// What one served kind, or one document's discovery endpoints, adds to `/openapi/v2`,
/// kept between builds: v2 is one document over all kinds, assembled again from every
/// part after any change.
#[derive(Debug, Clone, Default)]
pub struct Part {
    pub v2_paths: Vec<Member>,
    /// The shared parameters its operations refer to (`#/parameters/<name>`).
    pub v2_parameters: Vec<Member>,
    /// The definitions of its own it reaches (a CRD version's kind and list).
    pub v2_definitions: Vec<Member>,
    /// The built-in definitions it reaches ([`builtin`]).
    pub v2_builtin: Vec<&'static str>,
}

/// What one served kind, or one document's discovery endpoints, adds to its v3 document:
/// written while that document is, and dropped with the text (a v3 document is held as one
/// compressed stream, which its members cannot be taken back out of).
#[derive(Debug, Default)]
pub struct V3Share {
    pub paths: Vec<MemberText>,
    pub schemas: Vec<MemberText>,
    /// The built-in schemas it reaches ([`builtin`]).
    pub builtin: Vec<&'static str>,
}

/// One served kind's `/openapi/v2` part.
pub fn of_source(source: &Source) -> Part {
    Part::of_routes(&routes::routes(&source.spec), &own_definitions(source, Form::V2))
}

/// The member of a shared parameter, written once for every part that refers to it: a
/// shared parameter's name ends in a hash of its text, and the few dozen there are
/// (`pretty`, `limit`, the apimachinery bodies; never a kind's own schema) were otherwise
/// compressed and held once per kind — a quarter of the held `/openapi/v2` at 2,000 CRDs.
fn shared_parameter(name: &str, value: &J) -> Member {
    static WRITTEN: Mutex<BTreeMap<String, Member>> = Mutex::new(BTreeMap::new());
    let mut written = WRITTEN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(m) = written.get(name) {
        return m.clone();
    }
    let m = Member::new(name, value);
    written.insert(name.to_string(), m.clone());
    m
}

/// One served kind's share of its group-version's v3 document.
pub fn v3_share(source: &Source) -> V3Share {
    V3Share::of_routes(&routes::routes(&source.spec), &own_definitions(source, Form::V3))
}

impl Part {
    /// The part of `routes`, whose definitions are `own` or built in.
    pub fn of_routes(routes: &[Route], own: &OwnDefinitions) -> Part {
        let (paths, shared) = v2::paths(routes);
        let (definitions, builtin) = reached(own, &route_definitions(routes), Escape::Plain);
        Part {
            v2_paths: paths.iter().map(|(p, item)| Member::new(p, item)).collect(),
            v2_parameters: shared.iter().map(|(n, p)| shared_parameter(n, p)).collect(),
            v2_definitions: definitions.into_iter().map(Member::of_text).collect(),
            v2_builtin: builtin,
        }
    }
}

impl V3Share {
    /// The share of `routes`, whose schemas are `own` or built in.
    pub fn of_routes(routes: &[Route], own: &OwnDefinitions) -> V3Share {
        let (schemas, builtin) = reached(own, &route_definitions(routes), Escape::Html);
        let paths = v3::paths(routes).iter().map(|(p, item)| MemberText::new(p, item, Escape::Html)).collect();
        V3Share { paths, schemas, builtin }
    }
}

/// The definitions `roots` reach: those of `own`, and the names of the built-in ones (own
/// ones first: a CRD's definitions are its own).
fn reached(own: &OwnDefinitions, roots: &[String], escape: Escape) -> (Vec<MemberText>, Vec<&'static str>) {
    let builtin = definitions::builtin();
    let refs_of = |n: &str| own.get(n).map(|d| &d.refs).or_else(|| definitions::builtin_refs(n));
    let names = definitions::closure(refs_of, roots.iter().cloned());
    let (mut mine, mut shared) = (Vec::new(), Vec::new());
    for name in names {
        if let Some(def) = own.get(&name) {
            mine.push(MemberText::from_text(&name, &def.json, escape));
        } else if let Some((key, _)) = builtin.get_key_value(&name) {
            shared.push(key.as_str());
        }
    }
    (mine, shared)
}

/// A source's own definitions in `form`: a CRD version's kind and list, or the open
/// objects standing in for a built-in kind with no recorded schema (so that its operations
/// resolve and kubectl sees its kind). Each form reads the CRD's schema itself: the v2 and
/// v3 documents are written when each is first asked for, rarely together.
fn own_definitions(source: &Source, form: Form) -> OwnDefinitions {
    let mut defs = OwnDefinitions::new();
    match &source.crd {
        Some(crd) => {
            let kind = crd_schema::definition_name(&crd.group, &crd.version, &crd.kind);
            let list = crd_schema::definition_name(&crd.group, &crd.version, &crd.list_kind);
            let (json, refs) = crd_schema::kind_definition(crd, crd.schema().as_ref(), form);
            defs.insert(kind, Own { json, refs: refs.into_iter().map(String::from).collect() });
            defs.insert(list, Own::of_value(&crd_schema::list_definition(crd), form));
        }
        None => {
            let spec = &source.spec;
            let list_kind = format!("{}List", spec.kind);
            for (name, kind) in [(&spec.definition, &spec.kind), (&spec.list_definition, &list_kind)] {
                if definitions::builtin().contains_key(name) {
                    continue;
                }
                let def = json!({
                    "type": "object",
                    "x-kubernetes-group-version-kind": [{"group": spec.group, "kind": kind, "version": spec.version}],
                });
                defs.insert(name.clone(), Own::of_value(&def, form));
            }
        }
    }
    defs
}

/// A built-in definition as a member of each document (the v3 one as text, to be
/// written into each v3 document's stream: about 150 KiB for all).
pub struct Builtin {
    pub v2: Member,
    pub v3: MemberText,
}

/// The built-in definition `name`, written once.
pub fn builtin(name: &str) -> Option<&'static Builtin> {
    static WRITTEN: OnceLock<HashMap<&'static str, Builtin>> = OnceLock::new();
    WRITTEN
        .get_or_init(|| {
            definitions::builtin()
                .iter()
                .map(|(name, def)| {
                    let v2 = Member::new(name, &ordered(def));
                    let v3 = MemberText::new(name, &ordered(&to_v3(def)), Escape::Html);
                    (name.as_str(), Builtin { v2, v3 })
                })
                .collect()
        })
        .get(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openapi::documents::tests::unit;

    #[test]
    fn kinds_share_one_compressed_copy_of_each_shared_parameter() {
        let of = |group: &str, n: usize| of_source(&unit(group, n, 10).source.get().expect("a source"));
        let (a, b) = (of("a.example.com", 0), of("b.example.com", 1));
        let by_key: HashMap<&str, &Member> = a.v2_parameters.iter().map(|m| (m.key.as_str(), m)).collect();
        let mut shared = 0;
        for m in &b.v2_parameters {
            let Some(other) = by_key.get(m.key.as_str()) else { continue };
            assert_eq!(m.json, other.json, "{}: one name, one text", m.key);
            assert_eq!(m.json.bytes.as_ptr(), other.json.bytes.as_ptr(), "{}: held once", m.key);
            shared += 1;
        }
        assert!(shared >= 10, "the kinds refer to the same common parameters: {shared}");
        assert!(by_key.keys().any(|k| k.starts_with("pretty-")), "{:?}", by_key.keys());
    }
}
