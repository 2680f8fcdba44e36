//! The reading half of planning: [`observe`] fills an [`Observed`] snapshot with what the
//! files say and what the cluster answers — the old registration and its objects, every
//! CRD, a dry run of the new CRD's document, the target namespaces, the dependents, the
//! controllers, and (when the new CRD is served) the objects under it and dry runs against
//! it. What to read next depends on what was read; those choices are the pure helpers of
//! [`super::decide`], so the snapshot holds what the decision needs and nothing is decided
//! twice differently.

use super::decide::{existing_new, is_established, new_crd_probe, sides};
use super::types::{Input, Observed, Rejection, Request, Source, SourceRead};
use crate::cluster::registrations::{find_crd, list_crds};
use crate::cluster::tui_ops::resource_of;
use crate::cluster::{ClusterError, Discovery, ResourceType};
use crate::migrate::MigrateError;
use crate::migrate::convert::{self, RegistrationDoc, TprNames};
use crate::migrate::diff;
use crate::migrate::journal::SourceKind;
use crate::migrate::model::{Mapping, ObjectKey, uids};
use crate::migrate::ops;
use futures::StreamExt;
use serde_json::Value;
use std::collections::HashSet;

/// Reads what planning `request` needs; changes nothing (the writes are dry runs). Fails
/// on what the user gave (files, flags) as soon as it is read, before asking more.
pub async fn observe(client: &kube::Client, request: &Request) -> Result<Observed, MigrateError> {
    let mut notes = Vec::new();
    let target = match &request.to {
        Some(input) => {
            let (crd, n) = convert::parse_new_crd(&input.document("new CRD")?, &input.source)?;
            notes.extend(n);
            Some(crd)
        }
        None => None,
    };
    let source = match &request.from {
        Source::Crd { name } => read_crd(client, name).await?,
        Source::Files { registration, data } => read_files(registration, data, request.tpr_names.as_ref(), &mut notes)?,
    };
    let mut seen = Observed::new(source, target, notes, request);
    let sides = sides(&seen)?;

    seen.crds = list_crds(client).await?;
    if let Some(probe) = new_crd_probe(&seen, &sides) {
        seen.new_crd_refused = ops::create_crd(client, &probe, true).await.err().map(|e| e.to_string());
    }
    let objects = &seen.source.objects;
    seen.missing_namespaces = ops::missing_namespaces(client, &sides.mapping.target_namespaces(objects)).await?;

    let discovery = Discovery::fetch(client).await?;
    let owners = uids(objects);
    let from = &sides.from;
    seen.dependents =
        ops::find_dependents(client, &discovery, &owners, &[(from.group.clone(), from.plural.clone())]).await;
    for spec in &request.controllers {
        let c = ops::resolve_controller(spec, &discovery)?;
        let replicas = ops::controller_replicas(client, &c).await?;
        seen.controllers.push((c, replicas));
    }

    if existing_new(&seen, &sides.new_name).is_some_and(is_established) {
        let present = ops::list_all(client, &sides.to.resource()).await?;
        seen.under_new_kind = present.iter().map(ObjectKey::of).collect();
        if request.validate {
            seen.dry_run = Some(dry_run_against(client, &sides.mapping, &seen.source.objects, &owners).await);
        }
    }
    Ok(seen)
}

/// A CRD on the cluster and its objects, read at the version it serves.
async fn read_crd(client: &kube::Client, name: &str) -> Result<SourceRead, MigrateError> {
    let crd = find_crd(client, name).await?;
    let served = resource_of(&crd).ok_or_else(|| {
        MigrateError::refused(format!(
            "the CustomResourceDefinition {} is not served (not Established, or its names were not accepted), so its objects cannot be read",
            crd.metadata.name.clone().unwrap_or_default()
        ))
    })?;
    let objects = ops::list_all(client, &served).await?;
    let doc = serde_json::to_value(&crd).map_err(|e| ClusterError::Other(e.to_string()))?;
    Ok(SourceRead { kind: SourceKind::Cluster, label: name.to_string(), doc, crd, objects, tpr_names: None })
}

/// A registration file (ThirdPartyResource, or CRD of any version) and its exported data.
fn read_files(
    registration: &Input,
    data: &[Input],
    tpr_names: Option<&TprNames>,
    notes: &mut Vec<String>,
) -> Result<SourceRead, MigrateError> {
    let source = &registration.source;
    let (doc, names) = match convert::parse_registration(&registration.document("registration")?, source)? {
        RegistrationDoc::Tpr(tpr) => {
            let names = match tpr_names {
                Some(n) => n.clone(),
                None => convert::derive_tpr_names(&tpr.name)
                    .map_err(|e| MigrateError::input("ThirdPartyResource", source, e))?,
            };
            notes.push(format!(
                "ThirdPartyResource {} is served as kind {} (plural {}, group {})",
                tpr.name, names.kind, names.plural, names.group
            ));
            (convert::tpr_to_crd(&tpr, &names), Some(names))
        }
        RegistrationDoc::Crd { crd, notes: n } => {
            notes.extend(n.into_iter().map(|n| format!("{source}: {n}")));
            (crd, None)
        }
    };
    let crd = convert::check_crd(&doc, source)?;
    let mut objects = Vec::new();
    for input in data {
        objects.extend(convert::parse_objects(&input.text, &input.source)?);
    }
    if data.is_empty() {
        return Err(MigrateError::input("--data", source, "a registration file needs its exported data (--data FILE)"));
    }
    Ok(SourceRead { kind: SourceKind::Files, label: source.clone(), doc, crd, objects, tpr_names: names })
}

/// Dry-run creates every mapped object against the served new CRD; answers the rejections.
async fn dry_run_against(
    client: &kube::Client,
    mapping: &Mapping,
    objects: &[Value],
    migrated: &HashSet<String>,
) -> Vec<Rejection> {
    let res = mapping.to.resource();
    futures::stream::iter(objects.iter().map(|o| {
        let res = &res;
        async move { check_object(client, res, mapping, o, migrated, !mapping.to.status).await }
    }))
    .buffer_unordered(ops::CONCURRENCY)
    .filter_map(|r| async move { r })
    .collect()
    .await
}

/// Dry-run creates one mapped object; a refusal, or a field the server would drop, is a
/// rejection. `with_status`: the status counts (the target keeps it on create).
pub(crate) async fn check_object(
    client: &kube::Client,
    res: &ResourceType,
    mapping: &Mapping,
    old: &Value,
    migrated: &HashSet<String>,
    with_status: bool,
) -> Option<Rejection> {
    let desired = mapping.object(old, migrated);
    let object = mapping.key(&ObjectKey::of(old)).to_string();
    match ops::create(client, res, &desired, true).await {
        Ok(stored) => {
            let lost = diff::losses(&desired, &stored, with_status);
            (!lost.is_empty()).then(|| Rejection {
                object,
                message: format!("the new schema would drop or change: {}", lost.join("; ")),
            })
        }
        Err(e) => Some(Rejection { object, message: e.to_string() }),
    }
}
