//! Publishing a CRD to the routing table ([`Kinds`]): the kinds it serves and their Table
//! layouts, built (schemas and CEL rules compiled) only when the CRD changed.

use super::cache::{decode, installing};
use crate::kinds::{CUSTOM_VERBS, Kinds, Registered, ServedKind, StorageIdentity};
use crate::registry::conditions::{self, ESTABLISHED, TERMINATING};
use crate::representation::table::TableConvertor;
use crate::resources::builtin::storage_version_hash;
use crate::resources::custom::{CustomResourceStrategy, SchemaSource};
use crate::store::KeyValue;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceColumnDefinition, CustomResourceDefinition,
};
use std::sync::Arc;

/// Publishes the CRD stored as `kv` unless its kinds were built from that very revision
/// (decoding it whole only then).
pub(super) fn publish_stored(kinds: &Kinds, name: &str, kv: &KeyValue, since: u64) {
    if kinds.built_from(name, &kv.mod_revision.to_string()) {
        return;
    }
    if let Some(crd) = decode(kv) {
        publish(kinds, name, &crd, since, Built::Stored, SchemaSource::Typed);
    }
}

/// Whether a CRD about to be published is the one stored at its resourceVersion.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Built {
    Stored,
    /// With a status not written yet: its resourceVersion does not say what it holds.
    NotStored,
}

/// Routes what `crd` serves (as terminating while `Terminating` is true), with its Table
/// layouts, first served at `since` — unless they were built from this very CRD already
/// (an unchanged CRD looked at again, or in an engine forked with its kinds), since
/// building them compiles the schemas and CEL rules of every version. The versions'
/// schemas are read from `schemas`.
pub(super) fn publish(
    kinds: &Kinds,
    name: &str,
    crd: &CustomResourceDefinition,
    since: u64,
    built: Built,
    schemas: SchemaSource<'_>,
) {
    let rv = crd.metadata.resource_version.as_deref().filter(|_| built == Built::Stored);
    if rv.is_some_and(|rv| kinds.built_from(name, rv)) {
        return;
    }
    // kube's handler and discovery read the condition, not the deletionTimestamp: a CRD
    // whose clean-up is done but that finalizers of others hold takes every verb again.
    let terminating = conditions::is_crd_condition_true(crd, TERMINATING);
    kinds.set_registered(name, Some(registered(crd)));
    kinds.set_custom(name, served_kinds(crd, terminating, schemas));
    // A changed spec or accepted names: kube's new storage serves watches from now on.
    let renewed = kinds.set_storage(name, storage_identity(crd));
    kinds.set_tables(name, printer_tables(crd, since), renewed);
    kinds.set_built_from(name, rv);
}

/// What kube's handler compares to tell that a CRD's storage must be built again: its spec
/// (by the generation it moves) and its accepted names.
fn storage_identity(crd: &CustomResourceDefinition) -> StorageIdentity {
    StorageIdentity {
        uid: crd.metadata.uid.clone().unwrap_or_default(),
        generation: crd.metadata.generation.unwrap_or_default(),
        accepted_names: crd.status.as_ref().and_then(|s| s.accepted_names.clone()),
    }
}

/// The Table layout of each served version: its `additionalPrinterColumns`. Versions with
/// the same columns (most CRDs' are) share one layout: with thousands of CRDs installed,
/// their parsed JSONPaths were tens of MiB.
fn printer_tables(crd: &CustomResourceDefinition, since: u64) -> Vec<crate::kinds::CustomTable> {
    let plural =
        crd.status.as_ref().and_then(|s| s.accepted_names.as_ref()).map(|n| n.plural.clone()).unwrap_or_default();
    let mut built: Vec<(&[CustomResourceColumnDefinition], Arc<TableConvertor>)> = Vec::new();
    let mut tables = Vec::new();
    for v in crd.spec.versions.iter().filter(|v| v.served) {
        let columns = v.additional_printer_columns.as_deref().unwrap_or_default();
        let convertor = match built.iter().find(|(c, _)| *c == columns) {
            Some((_, convertor)) => Arc::clone(convertor),
            None => {
                let convertor = Arc::new(TableConvertor::custom_resource(columns));
                built.push((columns, Arc::clone(&convertor)));
                convertor
            }
        };
        tables.push(crate::kinds::CustomTable {
            group: crd.spec.group.clone(),
            version: v.name.clone(),
            plural: plural.clone(),
            convertor,
            since,
        });
    }
    tables
}

/// What a stored CRD registers whatever its conditions: its served versions.
fn registered(crd: &CustomResourceDefinition) -> Registered {
    let versions = crd.spec.versions.iter().filter(|v| v.served).map(|v| v.name.clone()).collect();
    Registered { group: crd.spec.group.clone(), versions }
}

/// The kinds an established CRD serves: one per served version. An installing one is served
/// too (as kube serves a CRD from `NamesAccepted`): `Established` announces it once every
/// replica does.
fn served_kinds(crd: &CustomResourceDefinition, terminating: bool, schemas: SchemaSource<'_>) -> Vec<ServedKind> {
    if !conditions::is_crd_condition_true(crd, ESTABLISHED) && !installing(crd) {
        return Vec::new();
    }
    // Every served version lists the hash of the storage version (references 05 and 13),
    // when that is served: kube's discovery controller only meets served versions.
    let kind = crd.status.as_ref().and_then(|s| s.accepted_names.as_ref()).map(|n| n.kind.clone()).unwrap_or_default();
    let hash = crd
        .spec
        .versions
        .iter()
        .find(|v| v.storage && v.served)
        .map(|v| storage_version_hash(&crd.spec.group, &v.name, &kind));
    crd.spec
        .versions
        .iter()
        .filter(|v| v.served)
        .map(|v| {
            let strategy = CustomResourceStrategy::new(crd, v, schemas);
            ServedKind {
                scale: strategy.scale_paths().cloned(),
                strategy: Arc::new(strategy),
                verbs: CUSTOM_VERBS.to_vec(),
                storage_version_hash: hash.clone(),
                terminating,
                installing: installing(crd),
                deprecation_warning: crate::registry::versions::deprecation_warning(crd, v),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::fixtures::{CrdBuilder, VersionBuilder};
    use serde_json::json;

    fn things(
        versions: Vec<
            k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinitionVersion,
        >,
    ) -> CrdBuilder {
        CrdBuilder::new("things", "x.io").kind("Thing").versions(versions).accepted_names_from_spec()
    }

    /// A CRD registers its served versions whatever its conditions (kube's registration
    /// controller makes APIServices of them), but serves kinds only once established.
    #[test]
    fn every_stored_crd_registers_its_served_versions() {
        let kinds = Kinds::default();
        let versions = vec![
            VersionBuilder::new("v1").served(true).storage(true).build(),
            VersionBuilder::new("v2").served(false).storage(false).build(),
            VersionBuilder::new("v3").served(true).storage(false).build(),
        ];
        let refused = things(versions.clone()).build();
        publish(&kinds, "things.x.io", &refused, 1, Built::NotStored, SchemaSource::Typed);
        let registered = [("x.io".to_string(), "v1".to_string()), ("x.io".to_string(), "v3".to_string())];
        assert_eq!(kinds.registered(), registered);
        assert!(kinds.custom_names().is_empty(), "not established: nothing served");
        let established = things(versions).established_at(2).build();
        publish(&kinds, "things.x.io", &established, 2, Built::NotStored, SchemaSource::Typed);
        assert_eq!(kinds.registered(), registered);
        assert_eq!(kinds.custom_names(), ["things.x.io"]);
    }

    /// kube's discovery controller meets only served versions: an unserved storage
    /// version gives no `storageVersionHash`.
    #[test]
    fn the_storage_version_hash_needs_a_served_storage_version() {
        let hashes = |storage_served: bool| {
            let versions = vec![
                VersionBuilder::new("v1").served(storage_served).storage(true).build(),
                VersionBuilder::new("v2").served(true).storage(false).build(),
            ];
            let crd = things(versions).established_at(1).build();
            let served = served_kinds(&crd, false, SchemaSource::Typed);
            served.iter().map(|k| k.storage_version_hash.clone()).collect::<Vec<_>>()
        };
        let served = hashes(true);
        assert_eq!(served.len(), 2);
        assert!(served.iter().all(|h| h.is_some() && *h == served[0]), "every version lists the storage one's");
        assert_eq!(hashes(false), [None]);
    }

    /// Versions with the same printer columns share one Table layout; a version with other
    /// columns has its own, and each version's layout shows its own columns.
    #[test]
    fn versions_with_the_same_columns_share_one_table_layout() {
        let ready =
            json!([{"name": "READY", "type": "string", "jsonPath": ".status.conditions[?(@.type=='Ready')].status"}]);
        let size = json!([{"name": "SIZE", "type": "integer", "jsonPath": ".spec.size"}]);
        let version = |name: &str, columns: &serde_json::Value| json!({"name": name, "served": true, "storage": name == "v1", "additionalPrinterColumns": columns});
        let crd: CustomResourceDefinition = serde_json::from_value(json!({
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"plural": "widgets", "kind": "Widget"},
                "versions": [version("v1", &ready), version("v1beta2", &ready), version("v1beta1", &size)]},
            "status": {"acceptedNames": {"plural": "widgets", "kind": "Widget"}},
        }))
        .expect("CRD");
        let tables = printer_tables(&crd, 7);
        let names: Vec<Vec<String>> =
            tables.iter().map(|t| t.convertor.definitions().iter().map(|d| d.name.clone()).collect()).collect();
        assert_eq!(names, [vec!["Name", "READY"], vec!["Name", "READY"], vec!["Name", "SIZE"]]);
        assert!(Arc::ptr_eq(&tables[0].convertor, &tables[1].convertor), "v1 and v1beta2 share their layout");
        assert!(!Arc::ptr_eq(&tables[0].convertor, &tables[2].convertor));
        let versions: Vec<&str> = tables.iter().map(|t| t.version.as_str()).collect();
        assert_eq!(versions, ["v1", "v1beta2", "v1beta1"]);
        assert!(tables.iter().all(|t| t.plural == "widgets" && t.since == 7));
    }
}
