//! Publishing a CRD to the routing table ([`Kinds`]): the kinds it serves and their Table
//! layouts, built (schemas and CEL rules compiled) only when the CRD changed.

use super::cache::{decode, installing};
use crate::kinds::{CUSTOM_VERBS, Kinds, ServedKind};
use crate::registry::conditions::{self, ESTABLISHED};
use crate::resources::builtin::storage_version_hash;
use crate::resources::custom::CustomResourceStrategy;
use crate::resources::scale::ScalePaths;
use crate::store::KeyValue;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceDefinitionVersion,
};
use std::sync::Arc;

/// Publishes the CRD stored as `kv` unless its kinds were built from that very revision
/// (decoding it whole only then).
pub(super) fn publish_stored(kinds: &Kinds, name: &str, kv: &KeyValue, since: u64) {
    if kinds.built_from(name, &kv.mod_revision.to_string()) {
        return;
    }
    if let Some(crd) = decode(kv) {
        publish(kinds, name, &crd, since, Built::Stored);
    }
}

/// Whether a CRD about to be published is the one stored at its resourceVersion.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Built {
    Stored,
    /// With a status not written yet: its resourceVersion does not say what it holds.
    NotStored,
}

/// Routes what `crd` serves (as terminating once it is being deleted), with its Table
/// layouts, first served at `since` — unless they were built from this very CRD already
/// (an unchanged CRD looked at again, or in an engine forked with its kinds), since
/// building them compiles the schemas and CEL rules of every version.
pub(super) fn publish(kinds: &Kinds, name: &str, crd: &CustomResourceDefinition, since: u64, built: Built) {
    let rv = crd.metadata.resource_version.as_deref().filter(|_| built == Built::Stored);
    if rv.is_some_and(|rv| kinds.built_from(name, rv)) {
        return;
    }
    kinds.set_custom(name, served_kinds(crd, crd.metadata.deletion_timestamp.is_some()));
    kinds.set_tables(name, printer_tables(crd, since));
    kinds.set_built_from(name, rv);
}

/// The Table layout of each served version: its `additionalPrinterColumns`.
fn printer_tables(crd: &CustomResourceDefinition, since: u64) -> Vec<crate::kinds::CustomTable> {
    let plural =
        crd.status.as_ref().and_then(|s| s.accepted_names.as_ref()).map(|n| n.plural.clone()).unwrap_or_default();
    crd.spec
        .versions
        .iter()
        .filter(|v| v.served)
        .map(|v| crate::kinds::CustomTable {
            group: crd.spec.group.clone(),
            version: v.name.clone(),
            plural: plural.clone(),
            convertor: Arc::new(crate::representation::table::TableConvertor::custom_resource(
                v.additional_printer_columns.as_deref().unwrap_or_default(),
            )),
            since,
        })
        .collect()
}

/// The kinds an established CRD serves: one per served version. An installing one is served
/// too (as kube serves a CRD from `NamesAccepted`): `Established` announces it once every
/// replica does.
fn served_kinds(crd: &CustomResourceDefinition, terminating: bool) -> Vec<ServedKind> {
    if !conditions::is_crd_condition_true(crd, ESTABLISHED) && !installing(crd) {
        return Vec::new();
    }
    // Every served version lists the hash of the storage version (references 05 and 13).
    let kind = crd.status.as_ref().and_then(|s| s.accepted_names.as_ref()).map(|n| n.kind.clone()).unwrap_or_default();
    let hash =
        crd.spec.versions.iter().find(|v| v.storage).map(|v| storage_version_hash(&crd.spec.group, &v.name, &kind));
    crd.spec
        .versions
        .iter()
        .filter(|v| v.served)
        .map(|v| ServedKind {
            strategy: Arc::new(CustomResourceStrategy::new(crd, v)),
            verbs: CUSTOM_VERBS.to_vec(),
            scale: v.subresources.as_ref().and_then(|s| s.scale.as_ref()).map(ScalePaths::from_crd),
            storage_version_hash: hash.clone(),
            terminating,
            installing: installing(crd),
            deprecation_warning: deprecation_warning(crd, v),
        })
        .collect()
}

/// The warning kube-apiserver sends with every answer at a deprecated version: the CRD's
/// own, or `<group>/<version> <Kind> is deprecated`.
fn deprecation_warning(crd: &CustomResourceDefinition, version: &CustomResourceDefinitionVersion) -> Option<String> {
    if !version.deprecated.unwrap_or(false) {
        return None;
    }
    Some(
        version
            .deprecation_warning
            .clone()
            .unwrap_or_else(|| format!("{}/{} {} is deprecated", crd.spec.group, version.name, crd.spec.names.kind)),
    )
}
