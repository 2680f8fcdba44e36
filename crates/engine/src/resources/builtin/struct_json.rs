//! The JSON of a built-in kind's object as kube-apiserver writes it: Go's `json.Marshal` of
//! the kind's struct, so members come in the struct's field order (`kind`, `apiVersion`,
//! `metadata` in `ObjectMeta`'s order, then the kind's own fields), while Go maps
//! (`labels`, `data`, a schema's `properties`) and raw JSON keep sorted keys. Custom
//! resources are unstructured in kube and written with sorted keys throughout, as
//! [`crate::go_json::to_vec`] writes every `Value`.
//!
//! The struct is found from the object's own `apiVersion` and `kind`: every stored or
//! answered object of a built-in kind carries them, and no custom resource can be served
//! at a built-in kind's group and version. Discovery's documents and the reviews' answers
//! are typed in kube too ([`super::discovery_structs`], [`super::review_structs`]).

use super::discovery_structs::{API_GROUP, API_GROUP_LIST, API_RESOURCE_LIST, API_VERSIONS, GROUP_DISCOVERY_LIST};
use super::review_structs::{SELF_SUBJECT_ACCESS_REVIEW, SELF_SUBJECT_REVIEW, SELF_SUBJECT_RULES_REVIEW, TOKEN_REVIEW};
use super::types::{
    CONFIG_MAP, CORE_EVENT, EVENTS_V1_EVENT, GoStruct, GoType, LEASE, NAMESPACE, OBJECT_META, SCALE, SECRET,
    SERVICE_ACCOUNT, SchemaOr,
};
use super::webhook_structs::{MUTATING_WEBHOOK_CONFIGURATION, VALIDATING_WEBHOOK_CONFIGURATION};
use crate::resources::crd_struct::CUSTOM_RESOURCE_DEFINITION;
use serde::Serialize;
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::OnceLock;

/// The Go struct of the built-in kind `kind` at `api_version` (empty: none), when it is
/// one: the kinds served, and the documents of discovery.
pub fn kind_struct(api_version: &str, kind: &str) -> Option<&'static GoStruct> {
    Some(match (api_version, kind) {
        ("v1", "ConfigMap") => &CONFIG_MAP,
        ("v1", "Secret") => &SECRET,
        ("v1", "Namespace") => &NAMESPACE,
        ("v1", "ServiceAccount") => &SERVICE_ACCOUNT,
        ("v1", "Event") => &CORE_EVENT,
        ("events.k8s.io/v1", "Event") => &EVENTS_V1_EVENT,
        ("coordination.k8s.io/v1", "Lease") => &LEASE,
        ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration") => &VALIDATING_WEBHOOK_CONFIGURATION,
        ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration") => &MUTATING_WEBHOOK_CONFIGURATION,
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition") => &CUSTOM_RESOURCE_DEFINITION,
        ("autoscaling/v1", "Scale") => &SCALE,
        ("", "APIVersions") => &API_VERSIONS,
        ("v1", "APIGroupList") => &API_GROUP_LIST,
        ("v1", "APIGroup") => &API_GROUP,
        // `/api/v1`'s has no apiVersion, every group's has.
        ("" | "v1", "APIResourceList") => &API_RESOURCE_LIST,
        ("apidiscovery.k8s.io/v2", "APIGroupDiscoveryList") => &GROUP_DISCOVERY_LIST,
        ("authorization.k8s.io/v1", "SelfSubjectAccessReview") => &SELF_SUBJECT_ACCESS_REVIEW,
        ("authorization.k8s.io/v1", "SelfSubjectRulesReview") => &SELF_SUBJECT_RULES_REVIEW,
        ("authentication.k8s.io/v1", "SelfSubjectReview") => &SELF_SUBJECT_REVIEW,
        ("authentication.k8s.io/v1", "TokenReview") => &TOKEN_REVIEW,
        _ => return None,
    })
}

/// `obj` as kube writes it: in its Go struct's order when it is an object or a list of a
/// built-in kind, else with sorted keys.
pub fn to_vec(obj: &Value) -> Vec<u8> {
    let text = |key: &str| obj.get(key).and_then(Value::as_str);
    let Some(kind) = text("kind") else { return crate::go_json::to_vec(obj) };
    let api_version = text("apiVersion").unwrap_or_default();
    let ty = match kind_struct(api_version, kind) {
        Some(st) => Ty::Root(st),
        None => match kind.strip_suffix("List").and_then(|item| kind_struct(api_version, item)) {
            Some(st) => Ty::List(st),
            None => return crate::go_json::to_vec(obj),
        },
    };
    crate::go_json::to_vec_of(&Ordered { value: obj, ty })
}

/// What a value is written as.
#[derive(Clone, Copy)]
enum Ty {
    /// A kind's object: its type's and object's metadata first.
    Root(&'static GoStruct),
    /// A list of a kind's objects.
    List(&'static GoStruct),
    /// A list's `items`: objects of a kind.
    Items(&'static GoStruct),
    Struct(&'static GoStruct),
    Go(&'static GoType),
    /// Nothing known: as it is, keys sorted.
    Plain,
}

/// The members a kind's object has before its own fields, in `TypeMeta`'s and
/// `ObjectMeta`'s order.
const ENVELOPE: [&str; 3] = ["kind", "apiVersion", "metadata"];

struct Ordered<'a> {
    value: &'a Value,
    ty: Ty,
}

impl Serialize for Ordered<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match (self.value, self.ty) {
            (Value::Object(map), Ty::Root(kind)) => write_struct(map, kind, true, s),
            (Value::Object(map), Ty::List(kind)) => write_list(map, kind, s),
            (Value::Object(map), Ty::Struct(st)) => write_struct(map, st, false, s),
            (Value::Object(map), Ty::Go(GoType::Struct(st) | GoType::Union(_, st))) => write_struct(map, st, false, s),
            (Value::Object(map), Ty::Go(GoType::Map(items))) => {
                let mut out = s.serialize_map(Some(map.len()))?;
                for (key, value) in map {
                    out.serialize_entry(key, &Ordered { value, ty: Ty::Go(items) })?;
                }
                out.end()
            }
            (Value::Array(list), Ty::Go(GoType::Slice { items, .. })) => write_items(list, Ty::Go(items), s),
            (Value::Array(list), Ty::Items(kind)) => write_items(list, Ty::Root(kind), s),
            // `JSONSchemaPropsOrArray` as a list: schemas each.
            (Value::Array(list), Ty::Go(GoType::Union(SchemaOr::Array, st))) => write_items(list, Ty::Struct(st), s),
            (value, _) => value.serialize(s),
        }
    }
}

fn write_items<S: Serializer>(list: &[Value], ty: Ty, s: S) -> Result<S::Ok, S::Error> {
    let mut out = s.serialize_seq(Some(list.len()))?;
    for value in list {
        out.serialize_element(&Ordered { value, ty })?;
    }
    out.end()
}

/// A struct's members in its field order; members it does not know (none after a typed
/// decode) follow, sorted.
fn write_struct<S: Serializer>(
    map: &Map<String, Value>,
    st: &'static GoStruct,
    root: bool,
    s: S,
) -> Result<S::Ok, S::Error> {
    let ranks = ranks(st);
    write_members(map, s, |key| {
        let (place, ty) = member_in(ranks, st, root, key);
        (place, ty.map_or(Ty::Plain, Ty::Go))
    })
}

/// Where `key` comes among the members of a `st` object (a kind's object, `root`, starts
/// with its type's and object's metadata), and its Go type when it has one. Unknown keys
/// come last (`usize::MAX`).
pub fn member(st: &'static GoStruct, root: bool, key: &str) -> (usize, Option<&'static GoType>) {
    member_in(ranks(st), st, root, key)
}

/// [`member`], with `st`'s [`ranks`] at hand: a struct's members share one lookup.
fn member_in(
    ranks: &[(u32, &'static str, usize)],
    st: &'static GoStruct,
    root: bool,
    key: &str,
) -> (usize, Option<&'static GoType>) {
    static META: GoType = GoType::Struct(&OBJECT_META);
    if root && let Some(i) = ENVELOPE.iter().position(|k| *k == key) {
        return (i, (key == "metadata").then_some(&META));
    }
    let packed = pack(key);
    match ranks.binary_search_by(|(p, name, _)| p.cmp(&packed).then_with(|| (*name).cmp(key))) {
        Ok(i) => {
            let field = ranks[i].2;
            (ENVELOPE.len() + field, Some(&st.fields[field].ty))
        }
        Err(_) => (usize::MAX, None),
    }
}

/// A typed list (`ConfigMapList`): `TypeMeta`, `ListMeta`, then its items, each an object
/// of `kind`.
fn write_list<S: Serializer>(map: &Map<String, Value>, kind: &'static GoStruct, s: S) -> Result<S::Ok, S::Error> {
    static ITEM: GoType = GoType::Struct(&LIST_META);
    write_members(map, s, |key| match key {
        "kind" => (0, Ty::Plain),
        "apiVersion" => (1, Ty::Plain),
        "metadata" => (2, Ty::Go(&ITEM)),
        "items" => (3, Ty::Items(kind)),
        _ => (usize::MAX, Ty::Plain),
    })
}

/// `ListMeta`, for the order of its fields.
static LIST_META: GoStruct = super::types::plain_struct(
    "v1.ListMeta",
    &[
        super::types::field("selfLink", GoType::String),
        super::types::field("resourceVersion", GoType::String),
        super::types::field("continue", GoType::String),
        super::types::field("remainingItemCount", GoType::Int64),
    ],
);

/// `map`'s members ordered by `rank` (stable: equal ranks keep the map's sorted order).
/// A struct has a few members: they are ordered on the stack.
fn write_members<S: Serializer>(
    map: &Map<String, Value>,
    s: S,
    rank: impl Fn(&str) -> (usize, Ty),
) -> Result<S::Ok, S::Error> {
    const ON_STACK: usize = 24;
    static NO_KEY: String = String::new();
    let mut stack = [(usize::MAX, Ty::Plain, &NO_KEY, &Value::Null); ON_STACK];
    let mut heap = Vec::new();
    let members = if map.len() <= ON_STACK {
        for (slot, (key, value)) in stack.iter_mut().zip(map) {
            let (rank, ty) = rank(key);
            *slot = (rank, ty, key, value);
        }
        &mut stack[..map.len()]
    } else {
        heap.extend(map.iter().map(|(key, value)| {
            let (rank, ty) = rank(key);
            (rank, ty, key, value)
        }));
        &mut heap[..]
    };
    members.sort_by_key(|m| m.0);
    let mut out = s.serialize_map(Some(members.len()))?;
    for (_, ty, key, value) in members.iter() {
        out.serialize_entry(*key, &Ordered { value, ty: *ty })?;
    }
    out.end()
}

/// `st`'s field names ([`pack`]ed and sorted), each with its place in the struct, made once per struct: a
/// CRD's schema is thousands of `JSONSchemaProps` of forty-odd fields.
fn ranks(st: &'static GoStruct) -> &'static [(u32, &'static str, usize)] {
    static RANKS: OnceLock<Ranks> = OnceLock::new();
    let all = RANKS.get_or_init(|| {
        let mut all = Ranks::default();
        for root in ROOTS {
            index(root, &mut all);
        }
        all
    });
    all.get(&(std::ptr::from_ref(st) as usize)).map_or(&[], Vec::as_slice)
}

/// A name's length, first and last bytes in one number: most comparisons of a lookup are
/// settled by it, without comparing the names (the lookup was most of writing a CRD in
/// this order).
fn pack(name: &str) -> u32 {
    let b = name.as_bytes();
    let (first, last) = (b.first().copied().unwrap_or(0), b.last().copied().unwrap_or(0));
    (b.len().min(0xFFFF) as u32) << 16 | u32::from(first) << 8 | u32::from(last)
}

/// Field names by struct address. The addresses are few and fixed, so a multiplicative
/// hash spreads them (SipHash was a tenth of writing a CRD).
type Ranks = HashMap<usize, Vec<(u32, &'static str, usize)>, BuildHasherDefault<AddressHasher>>;

#[derive(Default)]
struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 << 8 | u64::from(*b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// Every struct reachable from the kinds [`kind_struct`] knows.
static ROOTS: [&GoStruct; 22] = [
    &VALIDATING_WEBHOOK_CONFIGURATION,
    &MUTATING_WEBHOOK_CONFIGURATION,
    &LIST_META,
    &SELF_SUBJECT_ACCESS_REVIEW,
    &SELF_SUBJECT_RULES_REVIEW,
    &SELF_SUBJECT_REVIEW,
    &TOKEN_REVIEW,
    &API_VERSIONS,
    &API_GROUP_LIST,
    &API_GROUP,
    &API_RESOURCE_LIST,
    &GROUP_DISCOVERY_LIST,
    &CONFIG_MAP,
    &SECRET,
    &NAMESPACE,
    &SERVICE_ACCOUNT,
    &CORE_EVENT,
    &EVENTS_V1_EVENT,
    &LEASE,
    &CUSTOM_RESOURCE_DEFINITION,
    &SCALE,
    &OBJECT_META,
];

fn index(st: &'static GoStruct, all: &mut Ranks) {
    let key = std::ptr::from_ref(st) as usize;
    if all.contains_key(&key) {
        return;
    }
    let mut names: Vec<(u32, &'static str, usize)> =
        st.fields.iter().enumerate().map(|(i, f)| (pack(f.json), f.json, i)).collect();
    names.sort_unstable();
    all.insert(key, names);
    for field in st.fields {
        index_type(&field.ty, all);
    }
}

fn index_type(ty: &'static GoType, all: &mut Ranks) {
    match ty {
        GoType::Struct(st) | GoType::Union(_, st) => index(st, all),
        GoType::Map(items) | GoType::Slice { items, .. } => index_type(items, all),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lists assembled from stored bytes write their `metadata` by
    /// [`crate::representation::LIST_META_ORDER`]; lists built as values, by this struct.
    #[test]
    fn list_meta_has_the_order_lists_of_stored_objects_are_written_in() {
        let names: Vec<&str> = LIST_META.fields.iter().map(|f| f.json).filter(|n| *n != "selfLink").collect();
        assert_eq!(names, crate::representation::LIST_META_ORDER);
    }
}
