//! What a migration will do, from a read-only look at the cluster: [`plan`] reads the old
//! registration and its objects (or the files), the new CRD, every CRD for name conflicts,
//! discovery for dependents and controllers, and gives a [`Plan`]. Nothing is changed: the
//! only writes are dry runs (`dryRun=All`) of the new CRD document and, when the new CRD
//! is already served, of every object against it.
//!
//! Validation of the objects against a new CRD that does not exist yet cannot be a dry run
//! here — a dry-run create of a CRD serves nothing. `run` does it right after the backup
//! and before any delete, against a temporary copy of the new CRD (see [`super::steps`]);
//! the plan says so.
//!
//! The decisions are pure functions of what was read ([`names::name_conflicts`],
//! [`names::collides`], [`forward_steps`]), tested without a cluster.

use super::MigrateError;
use super::convert::{self, RegistrationDoc, TprNames};
use super::diff;
use super::journal::{Controller, Dependent, Order, SourceKind, journal_id};
use super::model::{Identity, Mapping, ObjectKey, uid};
use super::names;
use super::ops;
use super::step::Step;
use crate::cluster::registrations::{ESTABLISHED, NAMES_ACCEPTED, condition, find_crd, list_crds};
use crate::cluster::tui_ops::resource_of;
use crate::cluster::{ClusterError, Discovery};
use futures::StreamExt;
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::Path;

/// A file's name and text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    pub source: String,
    pub text: String,
}

impl Input {
    /// Reads a file.
    pub fn read(path: &Path) -> Result<Input, MigrateError> {
        let source = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| MigrateError::input("file", &source, format!("cannot read it: {e}")))?;
        Ok(Input { source, text })
    }

    fn document(&self, what: &'static str) -> Result<Value, MigrateError> {
        convert::parse_document(&self.text, &self.source, what)
    }
}

/// Where the objects come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A CRD on the cluster (name, plural, kind or short name).
    Crd { name: String },
    /// A registration file (ThirdPartyResource or CRD, v1beta1 or v1) with exported data.
    Files { registration: Input, data: Vec<Input> },
}

/// What the user asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub from: Source,
    /// The new CRD document (`--to`). May be left out for a ThirdPartyResource: the CRD
    /// derived from it is the new one.
    pub to: Option<Input>,
    /// A TPR's names as the user corrected them (derived from its name otherwise).
    pub tpr_names: Option<TprNames>,
    /// `--controller` specs.
    pub controllers: Vec<String>,
    /// `--map-version OLD=NEW`.
    pub versions: BTreeMap<String, String>,
    /// `--into-namespace`: for a cluster-scoped kind moved to a namespaced one.
    pub into_namespace: Option<String>,
    /// Dry-run the objects against the new CRD when it is served already.
    pub validate: bool,
}

/// One namespace's share of the objects.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NamespacePlan {
    /// `""` for cluster-scoped objects.
    pub namespace: String,
    pub objects: usize,
    pub with_status: usize,
    /// Where they go (differs on a scope change).
    pub target: String,
    /// The target namespace exists (it is created otherwise).
    pub target_exists: bool,
}

/// A controller the run scales to 0 and back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ControllerPlan {
    pub spec: String,
    pub resource: String,
    pub replicas: i32,
}

/// Whether and how the objects were checked against the new schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "state")]
pub enum Validation {
    /// Every object was dry-run created against the new CRD.
    Checked { objects: usize, rejected: Vec<Rejection>, note: Option<String> },
    /// The check happens in `run`, before anything is deleted.
    Deferred { reason: String },
}

/// An object the new schema refuses, or whose fields it would drop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rejection {
    pub object: String,
    pub message: String,
}

/// One step as the plan shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlannedStep {
    pub step: Step,
    pub destructive: bool,
    pub description: String,
}

/// What a migration will do. Serializable for `-o json|yaml`; [`super::Migration::create`]
/// turns it into a journal.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    pub id: String,
    pub source: SourceKind,
    pub source_label: String,
    pub old_crd_name: String,
    pub new_crd_name: String,
    pub from: Identity,
    pub to: Identity,
    /// What conversions and derivations did (v1beta1 → v1, TPR names).
    pub notes: Vec<String>,
    /// A TPR's names as derived: the user confirms or corrects them.
    pub tpr_names: Option<TprNames>,
    pub order: Order,
    pub new_crd_exists: bool,
    pub namespaces: Vec<NamespacePlan>,
    pub objects: usize,
    pub dependents: Vec<Dependent>,
    /// Resource types that could not be scanned for dependents, with why.
    pub unchecked: Vec<String>,
    pub controllers: Vec<ControllerPlan>,
    /// Names of the new CRD that other registrations hold.
    pub conflicts: Vec<String>,
    pub validation: Validation,
    /// What stops the migration; it does not start while there is any.
    pub problems: Vec<String>,
    pub steps: Vec<PlannedStep>,
    #[serde(skip)]
    pub(crate) prepared: Prepared,
}

/// What the journal needs beyond what the plan shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Prepared {
    pub new_crd: Value,
    pub old_crd: Value,
    pub mapping: Option<Mapping>,
    pub controllers: Vec<Controller>,
    /// Objects of a file source.
    pub inputs: Vec<Value>,
    pub validation_crd: Option<Identity>,
}

impl Plan {
    /// Whether the migration may start.
    pub fn is_blocked(&self) -> bool {
        !self.problems.is_empty()
    }

    /// The new CRD document that will be created.
    pub fn new_crd(&self) -> &Value {
        &self.prepared.new_crd
    }
}

/// Reads everything and plans; changes nothing.
pub async fn plan(client: &kube::Client, request: &Request) -> Result<Plan, MigrateError> {
    let mut notes = Vec::new();
    let mut problems = Vec::new();
    let mut to_doc = match &request.to {
        Some(input) => {
            let (crd, n) = convert::parse_new_crd(&input.document("new CRD")?, &input.source)?;
            notes.extend(n);
            Some(crd)
        }
        None => None,
    };

    // The old registration and its objects.
    let (source, source_label, old_doc, old_crd, objects, tpr_names) = match &request.from {
        Source::Crd { name } => {
            let crd = find_crd(client, name).await?;
            let served = resource_of(&crd).ok_or_else(|| {
                MigrateError::refused(format!(
                    "the CustomResourceDefinition {} is not served (not Established, or its names were not accepted), so its objects cannot be read",
                    crd.metadata.name.clone().unwrap_or_default()
                ))
            })?;
            let objects = ops::list_all(client, &served).await?;
            let doc = serde_json::to_value(&crd).map_err(|e| ClusterError::Other(e.to_string()))?;
            (SourceKind::Cluster, name.clone(), doc, crd, objects, None)
        }
        Source::Files { registration, data } => {
            let (doc, names) =
                match convert::parse_registration(&registration.document("registration")?, &registration.source)? {
                    RegistrationDoc::Tpr(tpr) => {
                        let names = match &request.tpr_names {
                            Some(n) => n.clone(),
                            None => convert::derive_tpr_names(&tpr.name)
                                .map_err(|e| MigrateError::input("ThirdPartyResource", &registration.source, e))?,
                        };
                        notes.push(format!(
                            "ThirdPartyResource {} is served as kind {} (plural {}, group {})",
                            tpr.name, names.kind, names.plural, names.group
                        ));
                        (convert::tpr_to_crd(&tpr, &names), Some(names))
                    }
                    RegistrationDoc::Crd { crd, notes: n } => {
                        notes.extend(n.into_iter().map(|n| format!("{}: {n}", registration.source)));
                        (crd, None)
                    }
                };
            let crd = convert::check_crd(&doc, &registration.source)?;
            if to_doc.is_none() && names.is_some() {
                to_doc = Some(doc.clone());
            }
            let mut objects = Vec::new();
            for input in data {
                objects.extend(convert::parse_objects(&input.text, &input.source)?);
            }
            if data.is_empty() {
                return Err(MigrateError::input(
                    "--data",
                    &registration.source,
                    "a registration file needs its exported data (--data FILE)",
                ));
            }
            (SourceKind::Files, registration.source.clone(), doc, crd, objects, names)
        }
    };
    let Some(new_doc) = to_doc else {
        return Err(MigrateError::input("--to", &source_label, "give the new CRD document with --to FILE"));
    };
    let new_crd = convert::check_crd(&new_doc, "the new CRD")?;
    let old_name = old_crd.metadata.name.clone().unwrap_or_default();
    let new_name = new_crd.metadata.name.clone().unwrap_or_default();

    let from = match source {
        SourceKind::Cluster => resource_of(&old_crd).and_then(|r| {
            let mut id = Identity::of_crd(&old_crd, Some(&r.version))?;
            id.kind = r.kind;
            id.plural = r.plural;
            Some(id)
        }),
        SourceKind::Files => Identity::of_crd(&old_crd, None),
    }
    .ok_or_else(|| MigrateError::refused(format!("{old_name} serves no version")))?;
    let to = Identity::of_crd(&new_crd, None)
        .ok_or_else(|| MigrateError::refused(format!("{new_name} serves no version")))?;
    for (old, new) in &request.versions {
        if !new_crd.spec.versions.iter().any(|v| &v.name == new && v.served) {
            return Err(MigrateError::input(
                "--map-version",
                &format!("{old}={new}"),
                format!("{new_name} serves no version {new:?}"),
            ));
        }
    }
    let mapping = Mapping {
        from: from.clone(),
        to: to.clone(),
        versions: request.versions.clone(),
        into_namespace: request.into_namespace.clone(),
    };
    if source == SourceKind::Files {
        check_file_objects(&objects, &from, &source_label)?;
    }
    if source == SourceKind::Cluster && old_name == new_name && from.namespaced == to.namespaced && from.kind == to.kind
    {
        problems.push(format!("the new CRD {new_name} serves the same kind as the old one: change it in place (kubectl apply) instead of migrating"));
    }

    // Names, order and the new CRD's document.
    let crds = list_crds(client).await?;
    let old_on_cluster = (source == SourceKind::Cluster).then_some(&old_crd);
    let existing_new =
        crds.iter().find(|c| c.metadata.name.as_deref() == Some(&new_name) && Some(*c) != old_on_cluster).cloned();
    let order = match old_on_cluster {
        Some(old) if names::collides(old, &new_crd) => Order::OldFirst,
        _ => Order::NewFirst,
    };
    let conflicts = names::name_conflicts(&new_crd, &crds, old_on_cluster.and_then(|c| c.metadata.name.as_deref()));
    if let Some(existing) = &existing_new {
        if let Some(c) = condition(existing, NAMES_ACCEPTED).filter(|c| c.status == "False") {
            problems.push(format!(
                "the new CRD {new_name} exists and its names are not accepted: {}",
                c.message.clone().unwrap_or_default()
            ));
        }
        if existing.spec.names.kind != new_crd.spec.names.kind || existing.spec.scope != new_crd.spec.scope {
            problems.push(format!(
                "the new CRD {new_name} exists with kind {} and scope {}, not the document's {} and {}",
                existing.spec.names.kind, existing.spec.scope, new_crd.spec.names.kind, new_crd.spec.scope
            ));
        }
    }
    problems.extend(conflicts.iter().map(|c| format!("name conflict: {c}")));
    let id = journal_id(&old_name, &new_name);
    let validation_crd = names::validation_crd(&new_doc, &id);
    if existing_new.is_none() {
        let probe = if crds.iter().any(|c| c.metadata.name.as_deref() == Some(&new_name)) {
            &validation_crd.1
        } else {
            &new_doc
        };
        if let Err(e) = ops::create_crd(client, probe, true).await {
            problems.push(format!("the new CRD is not valid: {e}"));
        }
    }

    // Objects: being deleted, scope changes, where they go.
    let keys: Vec<ObjectKey> = objects.iter().map(ObjectKey::of).collect();
    let deleting: Vec<String> = objects
        .iter()
        .filter(|o| o.pointer("/metadata/deletionTimestamp").is_some())
        .map(|o| ObjectKey::of(o).to_string())
        .collect();
    if !deleting.is_empty() {
        problems.push(format!(
            "{} object(s) are being deleted and wait for finalizers ({}); let them go (or remove their finalizers) first",
            deleting.len(),
            sample(&deleting)
        ));
    }
    if !from.namespaced && to.namespaced && request.into_namespace.is_none() {
        problems.push("the old kind is cluster-scoped and the new one namespaced: say where the objects go with --into-namespace NS".into());
    }
    let mut targets: BTreeMap<ObjectKey, Vec<&ObjectKey>> = BTreeMap::new();
    for k in &keys {
        targets.entry(mapping.key(k)).or_default().push(k);
    }
    let clashes: Vec<String> =
        targets.iter().filter(|(_, v)| v.len() > 1).map(|(k, v)| format!("{k} ({})", v.len())).collect();
    if !clashes.is_empty() {
        problems.push(format!("after the scope change several objects would share a name: {}", sample(&clashes)));
    }
    let target_namespaces: BTreeSet<String> = targets.keys().filter_map(|k| k.namespace.clone()).collect();
    let missing = ops::missing_namespaces(client, &target_namespaces).await?;
    let namespaces = namespace_plans(&objects, &mapping, &missing);

    // Dependents and controllers.
    let discovery = Discovery::fetch(client).await?;
    let owners: HashSet<String> = objects.iter().map(|o| uid(o).to_string()).filter(|u| !u.is_empty()).collect();
    let scan = ops::find_dependents(client, &discovery, &owners, &[(from.group.clone(), from.plural.clone())]).await;
    let mut controllers = Vec::new();
    let mut controller_plans = Vec::new();
    for spec in &request.controllers {
        let c = ops::resolve_controller(spec, &discovery)?;
        let replicas = ops::controller_replicas(client, &c).await?;
        controller_plans.push(ControllerPlan { spec: spec.clone(), resource: c.resource.qualified_name(), replicas });
        controllers.push(c);
    }

    // Objects already under the new kind, and the dry run against it.
    let migrated: HashSet<String> = owners.clone();
    let validation = match &existing_new {
        Some(existing) if condition(existing, ESTABLISHED).is_some_and(|c| c.status == "True") => {
            let present = ops::list_all(client, &to.resource()).await?;
            let taken: HashSet<ObjectKey> = present.iter().map(ObjectKey::of).collect();
            let already: Vec<String> = targets.keys().filter(|k| taken.contains(k)).map(ToString::to_string).collect();
            if !already.is_empty() {
                problems.push(format!("{} object(s) already exist under the new kind: {}", already.len(), sample(&already)));
            }
            if request.validate {
                dry_run_against(client, &mapping, &objects, &migrated).await
            } else {
                Validation::Deferred { reason: "checked by 'run' before anything is deleted".into() }
            }
        }
        _ => Validation::Deferred {
            reason: "the new CRD does not exist yet (a dry-run create of a CRD serves nothing): 'run' dry-runs every object against a temporary copy of the new CRD right after the backup, before anything is deleted".into(),
        },
    };
    if let Validation::Checked { rejected, .. } = &validation
        && !rejected.is_empty()
    {
        problems.push(format!("the new schema refuses {} object(s)", rejected.len()));
    }

    let steps = forward_steps(source, order);
    let planned = steps
        .iter()
        .map(|s| PlannedStep { step: *s, destructive: s.is_destructive(), description: describe(*s, order) })
        .collect();
    Ok(Plan {
        id,
        source,
        source_label,
        old_crd_name: old_name,
        new_crd_name: new_name,
        from,
        to,
        notes,
        tpr_names,
        order,
        new_crd_exists: existing_new.is_some(),
        namespaces,
        objects: objects.len(),
        dependents: scan.dependents,
        unchecked: scan.unchecked,
        controllers: controller_plans,
        conflicts,
        validation,
        problems,
        steps: planned,
        prepared: Prepared {
            new_crd: new_doc,
            old_crd: old_doc,
            mapping: Some(mapping),
            controllers,
            inputs: if source == SourceKind::Files { objects } else { vec![] },
            validation_crd: Some(validation_crd.0),
        },
    })
}

fn sample(items: &[String]) -> String {
    let shown: Vec<&str> = items.iter().take(5).map(String::as_str).collect();
    if items.len() > 5 { format!("{}, and {} more", shown.join(", "), items.len() - 5) } else { shown.join(", ") }
}

/// Exported objects must be of the registration's group.
fn check_file_objects(objects: &[Value], from: &Identity, source: &str) -> Result<(), MigrateError> {
    let wrong: Vec<String> = objects
        .iter()
        .filter(|o| {
            let group = o.get("apiVersion").and_then(Value::as_str).and_then(|a| a.rsplit_once('/')).map(|(g, _)| g);
            group != Some(from.group.as_str())
        })
        .map(|o| {
            format!("{} ({})", ObjectKey::of(o), o.get("apiVersion").and_then(Value::as_str).unwrap_or("no apiVersion"))
        })
        .collect();
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(MigrateError::input(
            "exported data",
            source,
            format!("objects not of group {}: {}", from.group, sample(&wrong)),
        ))
    }
}

fn namespace_plans(objects: &[Value], mapping: &Mapping, missing: &[String]) -> Vec<NamespacePlan> {
    let mut by: BTreeMap<String, NamespacePlan> = BTreeMap::new();
    for o in objects {
        let key = ObjectKey::of(o);
        let target = mapping.key(&key).namespace.unwrap_or_default();
        let entry = by.entry(key.namespace.clone().unwrap_or_default()).or_insert_with(|| NamespacePlan {
            namespace: key.namespace.clone().unwrap_or_default(),
            objects: 0,
            with_status: 0,
            target_exists: target.is_empty() || !missing.contains(&target),
            target,
        });
        entry.objects += 1;
        if o.get("status").is_some_and(|s| !s.is_null()) {
            entry.with_status += 1;
        }
    }
    by.into_values().collect()
}

async fn dry_run_against(
    client: &kube::Client,
    mapping: &Mapping,
    objects: &[Value],
    migrated: &HashSet<String>,
) -> Validation {
    let res = mapping.to.resource();
    let rejected: Vec<Rejection> = futures::stream::iter(objects.iter().map(|o| {
        let res = &res;
        async move { check_object(client, res, mapping, o, migrated, !mapping.to.status).await }
    }))
    .buffer_unordered(ops::CONCURRENCY)
    .filter_map(|r| async move { r })
    .collect()
    .await;
    let note = mapping.to.status.then(|| {
        "the new CRD serves /status, so a create ignores the status: 'run' checks the status against the new schema too".to_string()
    });
    Validation::Checked { objects: objects.len(), rejected, note }
}

/// Dry-run creates one mapped object; a refusal, or a field the server would drop, is a
/// rejection. `with_status`: the status counts (the target keeps it on create).
pub(crate) async fn check_object(
    client: &kube::Client,
    res: &crate::cluster::ResourceType,
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

/// The forward steps for a source and an order.
pub fn forward_steps(source: SourceKind, order: Order) -> Vec<Step> {
    use Step::*;
    match (source, order) {
        (SourceKind::Files, _) => {
            vec![StopControllers, Backup, CreateNewCrd, Validate, Recreate, Readopt, RestartControllers, Verify]
        }
        (SourceKind::Cluster, Order::NewFirst) => vec![
            StopControllers,
            Backup,
            CreateNewCrd,
            Validate,
            DeleteOldData,
            DeleteOldCrd,
            Recreate,
            Readopt,
            RestartControllers,
            Verify,
        ],
        (SourceKind::Cluster, Order::OldFirst) => vec![
            StopControllers,
            Backup,
            Validate,
            DeleteOldData,
            DeleteOldCrd,
            CreateNewCrd,
            Recreate,
            Readopt,
            RestartControllers,
            Verify,
        ],
    }
}

/// One sentence on what a step does.
pub fn describe(step: Step, order: Order) -> String {
    match step {
        Step::StopControllers => "scale the named controllers to 0 through /scale, recording their replicas".into(),
        Step::Backup => "back up every object (status included) and its dependents as YAML with SHA-256 sums, fsynced and read back".into(),
        Step::CreateNewCrd if order == Order::OldFirst => {
            "create the new CRD (its names are the old one's, so only now) and wait for Established".into()
        }
        Step::CreateNewCrd => "create the new CRD and wait for Established (a name conflict stops here, before any delete)".into(),
        Step::Validate => "dry-run every object against a temporary copy of the new CRD's schema (spec and status); any refusal stops here".into(),
        Step::DeleteOldData => "delete the old objects with propagationPolicy=Orphan (dependents are kept) and wait until they are gone".into(),
        Step::DeleteOldCrd => "delete the old CRD and wait until it is gone".into(),
        Step::Recreate => "recreate every object under the new kind and restore its status through /status".into(),
        Step::Readopt => "rewrite the dependents' ownerReferences to the new objects' uids, apiVersion and kind".into(),
        Step::RestartControllers => "scale the controllers back to their recorded replicas".into(),
        Step::Verify => "compare the backup with the cluster: spec, status, labels, annotations, owner links".into(),
        other => other.name().replace('-', " "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_put_the_new_crd_first_when_it_can() {
        let new_first = forward_steps(SourceKind::Cluster, Order::NewFirst);
        let pos = |steps: &[Step], s: Step| steps.iter().position(|x| *x == s).expect("present");
        assert!(pos(&new_first, Step::CreateNewCrd) < pos(&new_first, Step::DeleteOldData));
        let old_first = forward_steps(SourceKind::Cluster, Order::OldFirst);
        assert!(pos(&old_first, Step::DeleteOldCrd) < pos(&old_first, Step::CreateNewCrd));
        for steps in [&new_first, &old_first] {
            assert!(pos(steps, Step::Backup) < pos(steps, Step::Validate));
            assert!(pos(steps, Step::Validate) < pos(steps, Step::DeleteOldData));
        }
        assert!(!forward_steps(SourceKind::Files, Order::NewFirst).contains(&Step::DeleteOldData));
    }
}
