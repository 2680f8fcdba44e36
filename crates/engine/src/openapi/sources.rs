//! What each served kind's share of the documents is built from: a built-in kind's own
//! description, or the version of the established CRD that serves a custom one — and a
//! fingerprint that changes whenever that does, so that only changed kinds are decoded and
//! written again.

use super::crd_schema::{self, CrdVersion, Schema};
use super::definitions;
use super::documents::{Unit, on_cores};
use super::parts::Source;
use super::routes::{Flavor, KindSpec};
use super::summary;
use crate::kinds::ServedKind;
use crate::store::{KeyValue, Revision};
use bytes::Bytes;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};

/// What deciding which CRD serves a kind reads of a CRD.
#[derive(Debug, Clone, Default, Deserialize)]
struct Names {
    #[serde(default)]
    spec: NamesSpec,
    #[serde(default)]
    status: Option<NamesStatus>,
}

#[derive(Debug, Clone, Default, Deserialize)]
struct NamesSpec {
    #[serde(default)]
    group: String,
    #[serde(default)]
    versions: Vec<NamesVersion>,
}

#[derive(Debug, Clone, Default, Deserialize)]
struct NamesVersion {
    #[serde(default)]
    name: String,
    #[serde(default)]
    served: bool,
}

#[derive(Debug, Clone, Default, Deserialize)]
struct NamesStatus {
    #[serde(default, rename = "acceptedNames")]
    accepted_names: Option<AcceptedNames>,
}

#[derive(Debug, Clone, Default, Deserialize)]
struct AcceptedNames {
    #[serde(default)]
    plural: String,
}

/// The stored CRDs by key, each at its revision with what has been read of it: its names
/// when the index is made, its head and whether its schemas are structural when a document
/// first needs them. A build reads again only the CRDs written since the last one (reading
/// all 2,000 of a large set is most of a build).
#[derive(Debug, Default)]
pub struct CrdIndex {
    by_key: HashMap<String, Indexed>,
}

#[derive(Debug, Clone)]
struct Indexed {
    revision: Revision,
    names: Arc<Names>,
    crd: Arc<CrdAtRevision>,
}

impl CrdIndex {
    /// The index of `crds`, from `previous` where a CRD is unchanged since.
    /// The CRDs not read before are read on every core.
    pub fn new(crds: &[KeyValue], previous: Option<&CrdIndex>) -> CrdIndex {
        let indexed = on_cores(crds, 64, |kv| {
            let known = previous.and_then(|p| p.by_key.get(&kv.key)).filter(|i| i.revision == kv.mod_revision);
            match known {
                Some(i) => Some(i.clone()),
                None => Some(Indexed {
                    revision: kv.mod_revision,
                    names: Arc::new(serde_json::from_slice::<Names>(&kv.value).ok()?),
                    crd: Arc::new(CrdAtRevision::new(kv.value.clone())),
                }),
            }
        });
        let by_key = crds.iter().zip(indexed).filter_map(|(kv, i)| Some((kv.key.clone(), i?))).collect();
        CrdIndex { by_key }
    }
}

/// The CRD serving each (group, accepted plural, served version): the first in the list,
/// as a search of the list would find it.
fn owners<'a>(crds: &'a [KeyValue], index: &'a CrdIndex) -> HashMap<(&'a str, &'a str, &'a str), &'a KeyValue> {
    let mut owners = HashMap::new();
    for kv in crds {
        let Some(Indexed { names, .. }) = index.by_key.get(&kv.key) else { continue };
        let Some(plural) = names.status.as_ref().and_then(|s| s.accepted_names.as_ref()).map(|n| n.plural.as_str())
        else {
            continue;
        };
        for v in names.spec.versions.iter().filter(|v| v.served) {
            owners.entry((names.spec.group.as_str(), plural, v.name.as_str())).or_insert(kv);
        }
    }
    owners
}

/// Every served kind as a unit of the documents: custom when an established CRD serves it.
/// A kind the routing table still has for a CRD that has just left the store is left out
/// until the table catches up.
pub fn units(kinds: &[ServedKind], crds: &[KeyValue], index: &CrdIndex, served_by_crds: &[String]) -> Vec<Unit> {
    let owners = owners(crds, index);
    let served_by_crds: HashSet<&str> = served_by_crds.iter().map(String::as_str).collect();
    kinds
        .iter()
        .filter_map(|k| {
            let info = k.info();
            let (fingerprint, flavor, source) =
                match owners.get(&(info.group.as_str(), info.plural.as_str(), info.version.as_str())) {
                    Some(kv) => {
                        // An owner is always indexed.
                        let crd = &index.by_key.get(&kv.key)?.crd;
                        let source = SourceOf::Stored {
                            crd: Arc::clone(crd),
                            version: info.version.clone(),
                            verbs: k.verbs.clone(),
                        };
                        (format!("{}@{}#{}", kv.key, kv.mod_revision, summary(k)), Flavor::Custom, source)
                    }
                    None if served_by_crds.contains(format!("{}.{}", info.plural, info.group).as_str()) => {
                        return None;
                    }
                    None => (
                        format!("built-in#{}", summary(k)),
                        Flavor::BuiltIn,
                        SourceOf::Given(Box::new(builtin_source(k))),
                    ),
                };
            Some(Unit { fingerprint, group: info.group.clone(), version: info.version.clone(), flavor, source })
        })
        .collect()
}

/// What a served kind's part and v3 share are written from: given (a built-in kind's), or
/// read from its stored CRD when a document first needs it, so that a state reads only
/// the CRDs of the kinds whose documents it writes (reading all 2,000 CRDs of a large set
/// for one more was a third of `/openapi/v2`'s rebuild).
#[derive(Debug, Clone)]
pub enum SourceOf {
    Given(Box<Source>),
    Stored { crd: Arc<CrdAtRevision>, version: String, verbs: Vec<&'static str> },
}

impl SourceOf {
    /// The source; `None` for a stored CRD that does not read as one.
    pub fn get(&self) -> Option<Cow<'_, Source>> {
        match self {
            SourceOf::Given(source) => Some(Cow::Borrowed(source.as_ref())),
            SourceOf::Stored { crd, version, verbs } => {
                let head = crd.head.get_or_init(|| Head::read(&crd.value)).as_ref()?;
                Some(Cow::Owned(custom_source(version, verbs, crd, head)))
            }
        }
    }
}

/// A stored CRD at one revision: its bytes (shared with the store's) and what documents
/// have read of them, kept while the CRD does not change: its head, read once however many
/// of its served versions need it, and whether each version's schema is structural (which
/// types the whole schema: a sixth of writing a definition), found once for every document.
#[derive(Debug)]
pub struct CrdAtRevision {
    value: Bytes,
    head: OnceLock<Option<Head>>,
    structural: Mutex<HashMap<String, Arc<OnceLock<bool>>>>,
}

impl CrdAtRevision {
    pub fn new(value: Bytes) -> CrdAtRevision {
        CrdAtRevision { value, head: OnceLock::new(), structural: Mutex::default() }
    }

    /// Where whether `version`'s schema is structural is kept.
    pub(super) fn structural(&self, version: &str) -> Arc<OnceLock<bool>> {
        let mut by_version = self.structural.lock().unwrap_or_else(|e| e.into_inner());
        Arc::clone(by_version.entry(version.to_string()).or_default())
    }

    /// Whether a document has read it.
    #[cfg(test)]
    pub fn read(&self) -> bool {
        self.head.get().is_some()
    }
}

/// What a kind's source reads of its CRD: all but the schemas, of which it keeps where
/// each version's `openAPIV3Schema` is in the CRD's bytes, for the writer of each version's
/// part to read ([`Schema::Stored`]) without going over the rest of the CRD again.
#[derive(Debug, Default)]
struct Head {
    group: String,
    names: HeadNames,
    scope: String,
    versions: Vec<HeadVersion>,
}

#[derive(Debug)]
struct HeadVersion {
    name: String,
    /// The version's `openAPIV3Schema`, as a range of the CRD's bytes.
    schema: Option<std::ops::Range<usize>>,
    selectable_fields: Option<Vec<HeadField>>,
    subresources: Option<HeadSubresources>,
}

impl Head {
    /// The head of the CRD stored as `value`, in one pass over it; `None` when it does not
    /// read as one.
    fn read(value: &[u8]) -> Option<Head> {
        let wire: HeadWire<'_> = serde_json::from_slice(value).ok()?;
        let spec = wire.spec;
        // A borrowed schema is a slice of `value`: its offset is where it starts.
        let at = |raw: &RawValue| {
            let start = (raw.get().as_ptr() as usize).checked_sub(value.as_ptr() as usize)?;
            let end = start + raw.get().len();
            (end <= value.len()).then_some(start..end)
        };
        let versions = spec.versions.into_iter().map(|v| HeadVersion {
            name: v.name,
            schema: v.schema.and_then(|s| s.open_api_v3_schema).and_then(at),
            selectable_fields: v.selectable_fields,
            subresources: v.subresources,
        });
        Some(Head { group: spec.group, names: spec.names, scope: spec.scope, versions: versions.collect() })
    }
}

/// [`Head`] as read, the schemas borrowed.
#[derive(Deserialize)]
struct HeadWire<'a> {
    #[serde(default, borrow)]
    spec: HeadSpecWire<'a>,
}

#[derive(Default, Deserialize)]
struct HeadSpecWire<'a> {
    #[serde(default)]
    group: String,
    #[serde(default)]
    names: HeadNames,
    #[serde(default)]
    scope: String,
    #[serde(default, borrow)]
    versions: Vec<HeadVersionWire<'a>>,
}

#[derive(Deserialize)]
struct HeadVersionWire<'a> {
    #[serde(default)]
    name: String,
    #[serde(default, borrow)]
    schema: Option<HeadSchemaWire<'a>>,
    #[serde(default, rename = "selectableFields")]
    selectable_fields: Option<Vec<HeadField>>,
    #[serde(default)]
    subresources: Option<HeadSubresources>,
}

#[derive(Deserialize)]
struct HeadSchemaWire<'a> {
    #[serde(default, borrow, rename = "openAPIV3Schema")]
    open_api_v3_schema: Option<&'a RawValue>,
}

#[derive(Debug, Default, Deserialize)]
struct HeadNames {
    #[serde(default)]
    kind: String,
    #[serde(default, rename = "listKind")]
    list_kind: Option<String>,
    #[serde(default)]
    plural: String,
}

#[derive(Debug, Deserialize)]
struct HeadField {
    #[serde(default, rename = "jsonPath")]
    json_path: String,
}

#[derive(Debug, Deserialize)]
struct HeadSubresources {
    #[serde(default)]
    status: Option<IgnoredAny>,
    #[serde(default)]
    scale: Option<IgnoredAny>,
}

fn custom_source(served: &str, verbs: &[&'static str], stored: &CrdAtRevision, crd: &Head) -> Source {
    let names = &crd.names;
    let list_kind = names.list_kind.clone().unwrap_or_else(|| format!("{}List", names.kind));
    let version = crd.versions.iter().find(|v| v.name == served);
    let schema = version
        .and_then(|v| v.schema.clone())
        .map(|at| Schema::Stored { text: stored.value.slice(at), structural: stored.structural(served) });
    let crd_version = CrdVersion {
        group: crd.group.clone(),
        version: served.to_string(),
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
        group: crd.group.clone(),
        version: served.to_string(),
        kind: names.kind.clone(),
        plural: names.plural.clone(),
        namespaced: crd.scope == "Namespaced",
        status: subresources.is_some_and(|s| s.status.is_some()),
        scale: subresources.is_some_and(|s| s.scale.is_some()),
        verbs: verbs.to_vec(),
        flavor: Flavor::Custom,
        definition: crd_schema::definition_name(&crd.group, served, &names.kind),
        list_definition: crd_schema::definition_name(&crd.group, served, &list_kind),
    };
    Source { spec, crd: Some(crd_version) }
}

fn builtin_source(k: &ServedKind) -> Source {
    let info = k.info();
    let fallback = {
        let group = info.group.split('.').next().filter(|g| !g.is_empty()).unwrap_or("core");
        format!("io.k8s.api.{group}.{}.{}", info.version, info.kind)
    };
    let definition = definitions::find_kind(&info.group, &info.version, &info.kind).unwrap_or(fallback.clone());
    let list_definition = definitions::find_kind(&info.group, &info.version, &info.list_kind)
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_unchanged_crd_keeps_what_was_read_of_it() {
        let key = "/registry/apiextensions.k8s.io/customresourcedefinitions/widgets.example.com";
        let crd = json!({"spec": {"group": "example.com", "versions": [{"name": "v1", "served": true}]}});
        let at = |revision| KeyValue {
            key: key.into(),
            value: Bytes::from(crd.to_string()),
            create_revision: 1,
            mod_revision: revision,
        };
        let first = CrdIndex::new(&[at(1)], None);
        first.by_key[key].crd.structural("v1").set(true).expect("not found yet");
        let again = CrdIndex::new(&[at(1)], Some(&first));
        assert!(Arc::ptr_eq(&first.by_key[key].crd, &again.by_key[key].crd));
        assert_eq!(again.by_key[key].crd.structural("v1").get(), Some(&true), "found once for the revision");
        let changed = CrdIndex::new(&[at(2)], Some(&again));
        assert_eq!(changed.by_key[key].crd.structural("v1").get(), None, "a new revision is read again");
    }

    #[test]
    fn each_version_s_schema_is_read_from_where_it_is_in_the_crd() {
        let v1 =
            json!({"type": "object", "description": "caf\u{e9} \"quoted\"", "properties": {"a": {"type": "string"}}});
        let v2 = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true});
        // As a client may write it: spaces, escapes, and a version with no schema between.
        let text = format!(
            r#"{{"metadata": {{"name": "w"}}, "spec": {{"group": "example.com", "versions": [
                {{"name": "v1", "schema": {{ "openAPIV3Schema" : {v1} }}}},
                {{"name": "v1beta1", "schema": {{"openAPIV3Schema": null}}}},
                {{"name": "v2", "schema": {{"openAPIV3Schema": {v2}}}, "served": true}}]}}}}"#
        );
        let stored = CrdAtRevision::new(Bytes::from(text));
        let head = Head::read(&stored.value).expect("a head");
        let schema_of = |version: &str| {
            let source = custom_source(version, &[], &stored, &head);
            source.crd.and_then(|c| c.schema).map(|Schema::Stored { text, .. }| {
                serde_json::from_slice::<serde_json::Value>(&text).expect("the schema's own text")
            })
        };
        assert_eq!(schema_of("v1"), Some(v1));
        assert_eq!(schema_of("v1beta1"), None);
        assert_eq!(schema_of("v2"), Some(v2));
        assert!(Head::read(br#"{"spec": {"versions": 1}}"#).is_none(), "not a CRD");
    }
}
