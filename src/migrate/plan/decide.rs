//! The deciding half of planning: [`decide`] turns an [`Observed`] snapshot into the
//! [`Plan`] (or the typed error a wrong file or flag deserves), with no IO — the same
//! snapshot always gives the same plan. Its helpers ([`sides`], [`existing_new`]) also
//! tell [`super::observe`] what to read next. Tested with tables of snapshots
//! (`decide_tests`).

use super::types::{ControllerPlan, NamespacePlan, Observed, Plan, PlannedStep, Prepared, Validation};
use crate::cluster::registrations::{Crd, ESTABLISHED, NAMES_ACCEPTED, condition};
use crate::cluster::tui_ops::resource_of;
use crate::migrate::MigrateError;
use crate::migrate::convert;
use crate::migrate::journal::{Order, SourceKind, journal_id};
use crate::migrate::model::{Identity, Mapping, ObjectKey, being_deleted};
use crate::migrate::names;
use crate::migrate::step::Step;
use serde_json::Value;
use std::collections::BTreeMap;

/// The two kinds and how objects go from one to the other, derived from the snapshot.
#[derive(Debug, Clone)]
pub(super) struct Sides {
    pub new_doc: Value,
    pub new_crd: Crd,
    pub old_name: String,
    pub new_name: String,
    pub from: Identity,
    pub to: Identity,
    pub mapping: Mapping,
}

impl Sides {
    /// The migration's id (and the journal directory's name).
    pub fn id(&self) -> String {
        journal_id(&self.old_name, &self.new_name)
    }
}

/// The old and the new kind, and the mapping between them; refuses a new CRD, a version
/// map or exported objects that do not fit.
pub(super) fn sides(o: &Observed) -> Result<Sides, MigrateError> {
    let source = &o.source;
    // A ThirdPartyResource's own CRD is the new one unless `--to` gives another.
    let new_doc = match (&o.target, &source.tpr_names) {
        (Some(doc), _) => doc.clone(),
        (None, Some(_)) => source.doc.clone(),
        (None, None) => {
            return Err(MigrateError::input("--to", &source.label, "give the new CRD document with --to FILE"));
        }
    };
    let new_crd = convert::check_crd(&new_doc, "the new CRD")?;
    let old_crd = &source.crd;
    let old_name = old_crd.metadata.name.clone().unwrap_or_default();
    let new_name = new_crd.metadata.name.clone().unwrap_or_default();
    let from = match source.kind {
        // The kind and version its objects were read at.
        SourceKind::Cluster => resource_of(old_crd).and_then(|r| {
            let mut id = Identity::of_crd(old_crd, Some(&r.version))?;
            id.kind = r.kind;
            id.plural = r.plural;
            Some(id)
        }),
        SourceKind::Files => Identity::of_crd(old_crd, None),
    }
    .ok_or_else(|| MigrateError::refused(format!("{old_name} serves no version")))?;
    let to = Identity::of_crd(&new_crd, None)
        .ok_or_else(|| MigrateError::refused(format!("{new_name} serves no version")))?;
    for (old, new) in &o.versions {
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
        versions: o.versions.clone(),
        into_namespace: o.into_namespace.clone(),
    };
    if source.kind == SourceKind::Files {
        check_file_objects(&source.objects, &from, &source.label)?;
    }
    Ok(Sides { new_doc, new_crd, old_name, new_name, from, to, mapping })
}

/// The new CRD when it is on the cluster already (and is not the old one).
pub(super) fn existing_new<'a>(o: &'a Observed, new_name: &str) -> Option<&'a Crd> {
    let old_on_cluster = (o.source.kind == SourceKind::Cluster).then_some(&o.source.crd);
    o.crds.iter().find(|c| c.metadata.name.as_deref() == Some(new_name) && Some(*c) != old_on_cluster)
}

/// The document to dry-run create to learn whether the cluster accepts the new CRD: none
/// when the new CRD exists already; the document itself when its name is free; else (the
/// old CRD holds the name) the temporary copy, which checks the same schema.
pub(super) fn new_crd_probe(o: &Observed, sides: &Sides) -> Option<Value> {
    if existing_new(o, &sides.new_name).is_some() {
        return None;
    }
    let taken = o.crds.iter().any(|c| c.metadata.name.as_deref() == Some(&sides.new_name));
    Some(if taken { names::validation_crd(&sides.new_doc, &sides.id()).1 } else { sides.new_doc.clone() })
}

/// Whether a CRD serves its objects.
pub(super) fn is_established(crd: &Crd) -> bool {
    condition(crd, ESTABLISHED).is_some_and(|c| c.status == "True")
}

/// What the migration the snapshot describes will do, and what stops it.
pub fn decide(o: &Observed) -> Result<Plan, MigrateError> {
    let sides = sides(o)?;
    let id = sides.id();
    let Sides { new_doc, new_crd, old_name, new_name, from, to, mapping } = sides;
    let source = o.source.kind;
    let objects = &o.source.objects;
    let mut problems = Vec::new();
    if source == SourceKind::Cluster && old_name == new_name && from.namespaced == to.namespaced && from.kind == to.kind
    {
        problems.push(format!("the new CRD {new_name} serves the same kind as the old one: change it in place (kubectl apply) instead of migrating"));
    }

    // Names, order and the new CRD's document.
    let old_on_cluster = (source == SourceKind::Cluster).then_some(&o.source.crd);
    let existing_new = existing_new(o, &new_name);
    let order = match old_on_cluster {
        Some(old) if names::collides(old, &new_crd) => Order::OldFirst,
        _ => Order::NewFirst,
    };
    let conflicts = names::name_conflicts(&new_crd, &o.crds, old_on_cluster.and_then(|c| c.metadata.name.as_deref()));
    if let Some(existing) = existing_new {
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
    let validation_crd = names::validation_crd(&new_doc, &id);
    if existing_new.is_none()
        && let Some(e) = &o.new_crd_refused
    {
        problems.push(format!("the new CRD is not valid: {e}"));
    }

    // Objects: being deleted, scope changes, where they go.
    let deleting = being_deleted(objects);
    if !deleting.is_empty() {
        problems.push(format!(
            "{} object(s) are being deleted and wait for finalizers ({}); let them go (or remove their finalizers) first",
            deleting.len(),
            sample(&deleting)
        ));
    }
    if !from.namespaced && to.namespaced && o.into_namespace.is_none() {
        problems.push("the old kind is cluster-scoped and the new one namespaced: say where the objects go with --into-namespace NS".into());
    }
    let mut targets: BTreeMap<ObjectKey, usize> = BTreeMap::new();
    for object in objects {
        *targets.entry(mapping.key(&ObjectKey::of(object))).or_default() += 1;
    }
    let clashes: Vec<String> = targets.iter().filter(|(_, n)| **n > 1).map(|(k, n)| format!("{k} ({n})")).collect();
    if !clashes.is_empty() {
        problems.push(format!("after the scope change several objects would share a name: {}", sample(&clashes)));
    }
    let namespaces = namespace_plans(objects, &mapping, &o.missing_namespaces);

    let controller_plans = o
        .controllers
        .iter()
        .map(|(c, replicas)| ControllerPlan {
            spec: c.spec.clone(),
            resource: c.resource.qualified_name(),
            replicas: *replicas,
        })
        .collect();

    // Objects already under the new kind, and the dry run against it.
    let validation = if existing_new.is_some_and(is_established) {
        let already: Vec<String> =
            targets.keys().filter(|k| o.under_new_kind.contains(k)).map(ToString::to_string).collect();
        if !already.is_empty() {
            problems.push(format!(
                "{} object(s) already exist under the new kind: {}",
                already.len(),
                sample(&already)
            ));
        }
        match &o.dry_run {
            Some(rejected) => Validation::Checked {
                objects: objects.len(),
                rejected: rejected.clone(),
                note: mapping.to.status.then(|| {
                    "the new CRD serves /status, so a create ignores the status: 'run' checks the status against the new schema too".to_string()
                }),
            },
            None => Validation::Deferred { reason: "checked by 'run' before anything is deleted".into() },
        }
    } else {
        Validation::Deferred {
            reason: "the new CRD does not exist yet (a dry-run create of a CRD serves nothing): 'run' dry-runs every object against a temporary copy of the new CRD right after the backup, before anything is deleted".into(),
        }
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
        source_label: o.source.label.clone(),
        old_crd_name: old_name,
        new_crd_name: new_name,
        from,
        to,
        notes: o.notes.clone(),
        tpr_names: o.source.tpr_names.clone(),
        order,
        new_crd_exists: existing_new.is_some(),
        namespaces,
        objects: objects.len(),
        dependents: o.dependents.dependents.clone(),
        unchecked: o.dependents.unchecked.clone(),
        controllers: controller_plans,
        conflicts,
        validation,
        problems,
        steps: planned,
        prepared: Prepared {
            new_crd: new_doc,
            old_crd: o.source.doc.clone(),
            mapping: Some(mapping),
            controllers: o.controllers.iter().map(|(c, _)| c.clone()).collect(),
            inputs: if source == SourceKind::Files { objects.clone() } else { vec![] },
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
#[path = "decide_tests.rs"]
mod tests;
