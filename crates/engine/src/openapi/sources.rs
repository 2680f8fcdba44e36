//! What each served kind's share of the documents is built from: a built-in kind's own
//! description, or the version of the established CRD that serves a custom one — and a
//! fingerprint that changes whenever that does, so that only changed kinds are decoded and
//! written again.

use super::crd_schema::{self, CrdVersion, Schema};
use super::definitions;
use super::documents::Unit;
use super::parts::Source;
use super::routes::{Flavor, KindSpec};
use super::summary;
use crate::kinds::ServedKind;
use crate::store::{KeyValue, Revision};
use serde::Deserialize;
use serde::de::IgnoredAny;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

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

/// The stored CRDs' names by key, each read at its revision: a build reads again only the
/// CRDs written since the last one (reading all 2,000 of a large set is most of a build).
#[derive(Debug, Default)]
pub struct CrdIndex {
    by_key: HashMap<String, (Revision, Arc<Names>)>,
}

impl CrdIndex {
    /// The names of `crds`, from `previous` where a CRD is unchanged since.
    pub fn new(crds: &[KeyValue], previous: Option<&CrdIndex>) -> CrdIndex {
        let by_key = crds
            .iter()
            .filter_map(|kv| {
                let known = previous.and_then(|p| p.by_key.get(&kv.key)).filter(|(rev, _)| *rev == kv.mod_revision);
                let names = match known {
                    Some((_, names)) => Arc::clone(names),
                    None => Arc::new(serde_json::from_slice::<Names>(&kv.value).ok()?),
                };
                Some((kv.key.clone(), (kv.mod_revision, names)))
            })
            .collect();
        CrdIndex { by_key }
    }
}

/// The CRD serving each (group, accepted plural, served version): the first in the list,
/// as a search of the list would find it.
fn owners<'a>(crds: &'a [KeyValue], index: &'a CrdIndex) -> HashMap<(&'a str, &'a str, &'a str), &'a KeyValue> {
    let mut owners = HashMap::new();
    for kv in crds {
        let Some((_, names)) = index.by_key.get(&kv.key) else { continue };
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
/// Sources are built only for the kinds of the group-versions whose v3 document `kept`
/// does not keep (given the group-version path and its kinds' fingerprints in order): such
/// a document is written again from all its kinds. A kind the routing table still has for a
/// CRD that has just left the store is left out until the table catches up.
pub fn units(
    kinds: &[ServedKind],
    crds: &[KeyValue],
    index: &CrdIndex,
    served_by_crds: &[String],
    kept: impl Fn(&str, &[&str]) -> bool,
) -> Vec<Unit> {
    let owners = owners(crds, index);
    let served_by_crds: HashSet<&str> = served_by_crds.iter().map(String::as_str).collect();
    // First what each kind is and where its source would come from, then which
    // group-versions need sources at all.
    let found: Vec<(&ServedKind, Option<&KeyValue>, Unit)> = kinds
        .iter()
        .filter_map(|k| {
            let info = k.info();
            let (crd, fingerprint, flavor) =
                match owners.get(&(info.group.as_str(), info.plural.as_str(), info.version.as_str())) {
                    Some(kv) => (Some(*kv), format!("{}@{}#{}", kv.key, kv.mod_revision, summary(k)), Flavor::Custom),
                    None if served_by_crds.contains(format!("{}.{}", info.plural, info.group).as_str()) => {
                        return None;
                    }
                    None => (None, format!("built-in#{}", summary(k)), Flavor::BuiltIn),
                };
            let unit =
                Unit { fingerprint, group: info.group.clone(), version: info.version.clone(), flavor, source: None };
            Some((k, crd, unit))
        })
        .collect();
    let mut by_group_version: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for (_, _, unit) in &found {
        by_group_version.entry(unit.group_version_path()).or_default().push(&unit.fingerprint);
    }
    let needed: HashSet<String> =
        by_group_version.into_iter().filter(|(gv, kinds)| !kept(gv, kinds)).map(|(gv, _)| gv).collect();

    // Read once per CRD, however many of its versions need it.
    let mut decoded: HashMap<&str, Option<Head>> = HashMap::new();
    let mut out = Vec::with_capacity(found.len());
    for (k, crd, mut unit) in found {
        if needed.contains(&unit.group_version_path()) {
            unit.source = match crd {
                Some(kv) => {
                    let head = decoded.entry(kv.key.as_str()).or_insert_with(|| serde_json::from_slice(&kv.value).ok());
                    let Some(head) = head else { continue };
                    Some(custom_source(k, kv, head))
                }
                None => Some(builtin_source(k)),
            };
        }
        out.push(unit);
    }
    out
}

/// What a kind's source reads of its CRD: all but the schemas, which are skipped here and
/// read by the writer of each version's part ([`Schema::Stored`]).
#[derive(Debug, Default, Deserialize)]
struct Head {
    #[serde(default)]
    spec: HeadSpec,
}

#[derive(Debug, Default, Deserialize)]
struct HeadSpec {
    #[serde(default)]
    group: String,
    #[serde(default)]
    names: HeadNames,
    #[serde(default)]
    scope: String,
    #[serde(default)]
    versions: Vec<HeadVersion>,
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

#[derive(Debug, Default, Deserialize)]
struct HeadVersion {
    #[serde(default)]
    name: String,
    #[serde(default)]
    schema: Option<HeadSchema>,
    #[serde(default, rename = "selectableFields")]
    selectable_fields: Option<Vec<HeadField>>,
    #[serde(default)]
    subresources: Option<HeadSubresources>,
}

#[derive(Debug, Deserialize)]
struct HeadSchema {
    #[serde(default, rename = "openAPIV3Schema")]
    open_api_v3_schema: Option<IgnoredAny>,
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

fn custom_source(k: &ServedKind, kv: &KeyValue, crd: &Head) -> Source {
    let info = k.info();
    let names = &crd.spec.names;
    let list_kind = names.list_kind.clone().unwrap_or_else(|| format!("{}List", names.kind));
    let version = crd.spec.versions.iter().find(|v| v.name == info.version);
    let has_schema = version.and_then(|v| v.schema.as_ref()).is_some_and(|s| s.open_api_v3_schema.is_some());
    let crd_version = CrdVersion {
        group: crd.spec.group.clone(),
        version: info.version.clone(),
        kind: names.kind.clone(),
        list_kind: list_kind.clone(),
        plural: names.plural.clone(),
        schema: has_schema.then(|| Schema::Stored(kv.value.clone())),
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
