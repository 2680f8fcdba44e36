//! One served kind's share of the documents — its path items, the shared parameters they
//! use and the definitions they reach — written once as the members of the documents'
//! objects (JSON, and protobuf for swagger 2.0), so that a change to one CRD writes only
//! its own kinds' parts and [`super::documents`] assembles the documents from the others as
//! they were (kube's aggregator likewise keeps one spec per CRD and merges them).
//!
//! The built-in definitions every part reaches (`ObjectMeta`, `Status`, ...) are written
//! once for all ([`builtin`]); a part holds only their names.
//!
//! Parts hold JSON only, each member compressed on its own ([`super::compressed`]) so
//! that documents are assembled from the compressed bytes: the protobuf form of
//! `/openapi/v2` is derived from the assembled JSON when a client first asks for it
//! ([`super::documents::Documents::v2_protobuf`]).

use super::compressed::Deflated;
use super::crd_schema::{self, CrdVersion, Form};
use super::definitions;
use super::json::{Escape, J, write_str};
use super::routes::{self, KindSpec, Route, route_definitions};
use super::schema::{ordered, refs, to_v3};
use super::{v2, v3};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::OnceLock;

/// One served kind and, for a custom one, what its CRD says about the version.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    pub spec: KindSpec,
    pub crd: Option<CrdVersion>,
}

/// One member of a document's `paths`, `definitions`, `parameters` or `schemas` object.
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
    fn new(key: &str, value: &J, escape: Escape) -> Member {
        Member::with(key, escape, |out| value.write_to(escape, out))
    }

    /// A member whose value is already JSON text.
    fn from_text(key: &str, value: &str, escape: Escape) -> Member {
        Member::with(key, escape, |out| out.push_str(value))
    }

    fn with(key: &str, escape: Escape, value: impl FnOnce(&mut String)) -> Member {
        let mut json = String::new();
        write_str(key, escape, &mut json);
        json.push(':');
        let value_at = json.len();
        value(&mut json);
        Member { key: key.to_string(), json: Deflated::new(json.as_bytes()), value_at }
    }
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

/// What one served kind, or one document's discovery endpoints, adds to the documents.
#[derive(Debug, Clone, Default)]
pub struct Part {
    pub v2_paths: Vec<Member>,
    /// The shared parameters its operations refer to (`#/parameters/<name>`).
    pub v2_parameters: Vec<Member>,
    /// The definitions of its own it reaches (a CRD version's kind and list).
    pub v2_definitions: Vec<Member>,
    /// The built-in definitions it reaches ([`builtin`]).
    pub v2_builtin: Vec<&'static str>,
    pub v3_paths: Vec<Member>,
    pub v3_schemas: Vec<Member>,
    pub v3_builtin: Vec<&'static str>,
}

impl Part {
    /// The part of one served kind.
    pub fn of_source(source: &Source) -> Part {
        let (own_v2, own_v3) = own_definitions(source);
        Part::of_routes(&routes::routes(&source.spec), &own_v2, &own_v3)
    }

    /// The part of `routes`, whose definitions are `own_*` (for `/openapi/v2` and v3) or
    /// built in.
    pub fn of_routes(routes: &[Route], own_v2: &OwnDefinitions, own_v3: &OwnDefinitions) -> Part {
        let (paths, shared) = v2::paths(routes);
        let roots = route_definitions(routes);
        let (v2_definitions, v2_builtin) = reached(own_v2, &roots, Escape::Plain);
        let (v3_schemas, v3_builtin) = reached(own_v3, &roots, Escape::Html);
        Part {
            v2_paths: paths.iter().map(|(p, item)| Member::new(p, item, Escape::Plain)).collect(),
            v2_parameters: shared.iter().map(|(n, p)| Member::new(n, p, Escape::Plain)).collect(),
            v2_definitions,
            v2_builtin,
            v3_paths: v3::paths(routes).iter().map(|(p, item)| Member::new(p, item, Escape::Html)).collect(),
            v3_schemas,
            v3_builtin,
        }
    }
}

/// The definitions `roots` reach: those of `own`, and the names of the built-in ones (own
/// ones first: a CRD's definitions are its own).
fn reached(own: &OwnDefinitions, roots: &[String], escape: Escape) -> (Vec<Member>, Vec<&'static str>) {
    let builtin = definitions::builtin();
    let refs_of = |n: &str| own.get(n).map(|d| &d.refs).or_else(|| definitions::builtin_refs(n));
    let names = definitions::closure(refs_of, roots.iter().cloned());
    let (mut mine, mut shared) = (Vec::new(), Vec::new());
    for name in names {
        if let Some(def) = own.get(&name) {
            mine.push(Member::from_text(&name, &def.json, escape));
        } else if let Some((key, _)) = builtin.get_key_value(&name) {
            shared.push(key.as_str());
        }
    }
    (mine, shared)
}

/// A source's own definitions, for `/openapi/v2` and for v3: a CRD version's kind and
/// list, or the open objects standing in for a built-in kind with no recorded schema (so
/// that its operations resolve and kubectl sees its kind).
fn own_definitions(source: &Source) -> (OwnDefinitions, OwnDefinitions) {
    let (mut v2, mut v3) = (OwnDefinitions::new(), OwnDefinitions::new());
    match &source.crd {
        Some(crd) => {
            let kind = crd_schema::definition_name(&crd.group, &crd.version, &crd.kind);
            let list = crd_schema::definition_name(&crd.group, &crd.version, &crd.list_kind);
            let schema = crd.schema();
            for (defs, form) in [(&mut v2, Form::V2), (&mut v3, Form::V3)] {
                let (json, refs) = crd_schema::kind_definition(crd, schema.as_ref(), form);
                defs.insert(kind.clone(), Own { json, refs: refs.into_iter().map(String::from).collect() });
                defs.insert(list.clone(), Own::of_value(&crd_schema::list_definition(crd), form));
            }
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
                v2.insert(name.clone(), Own::of_value(&def, Form::V2));
                v3.insert(name.clone(), Own::of_value(&def, Form::V3));
            }
        }
    }
    (v2, v3)
}

/// A built-in definition as a member of each document.
pub struct Builtin {
    pub v2: Member,
    pub v3: Member,
}

/// The built-in definition `name`, written once.
pub fn builtin(name: &str) -> Option<&'static Builtin> {
    static WRITTEN: OnceLock<HashMap<&'static str, Builtin>> = OnceLock::new();
    WRITTEN
        .get_or_init(|| {
            definitions::builtin()
                .iter()
                .map(|(name, def)| {
                    let v2 = Member::new(name, &ordered(def), Escape::Plain);
                    let v3 = Member::new(name, &ordered(&to_v3(def)), Escape::Html);
                    (name.as_str(), Builtin { v2, v3 })
                })
                .collect()
        })
        .get(name)
}
