//! The words of planning: what the user asks ([`Request`]), what was read
//! ([`Observed`], the snapshot a plan is decided from), and what the plan says ([`Plan`]).
//! Types only, below both halves of planning ([`super::observe`] and [`super::decide`]).

use crate::cluster::registrations::Crd;
use crate::migrate::MigrateError;
use crate::migrate::convert::{self, TprNames};
use crate::migrate::journal::{Controller, Dependent, Order, SourceKind};
use crate::migrate::model::{Identity, Mapping, ObjectKey};
use crate::migrate::ops::Scan;
use crate::migrate::step::Step;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
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

    pub(super) fn document(&self, what: &'static str) -> Result<Value, MigrateError> {
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

/// What a migration will do. Serializable for `-o json|yaml`; [`crate::migrate::Migration::create`]
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

/// The old registration and its objects, as read from the cluster or from the files.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceRead {
    pub kind: SourceKind,
    /// What the user named: the CRD as given, or the registration file.
    pub label: String,
    /// The registration as a v1 CRD document (for a ThirdPartyResource, the CRD derived
    /// from it).
    pub doc: Value,
    pub crd: Crd,
    pub objects: Vec<Value>,
    /// A ThirdPartyResource's names, derived or as the user corrected them: its CRD is
    /// then the new one too, unless `--to` gives another.
    pub tpr_names: Option<TprNames>,
}

/// Everything a plan is decided from: what the user gave, parsed, and what the cluster
/// answered. [`super::observe`] fills it; [`super::decide`] decides from it alone.
#[derive(Debug, Clone)]
pub struct Observed {
    pub source: SourceRead,
    /// The new CRD document given with `--to`, as v1.
    pub target: Option<Value>,
    /// What conversions and derivations did (v1beta1 → v1, TPR names).
    pub notes: Vec<String>,
    /// `--map-version OLD=NEW`.
    pub versions: BTreeMap<String, String>,
    /// `--into-namespace`.
    pub into_namespace: Option<String>,
    /// Every CRD on the cluster.
    pub crds: Vec<Crd>,
    /// Why the cluster refused a dry-run create of the new CRD's document (asked unless the
    /// new CRD exists already).
    pub new_crd_refused: Option<String>,
    /// The namespaces the objects go to that do not exist.
    pub missing_namespaces: Vec<String>,
    /// What points at the objects through ownerReferences, and what could not be scanned.
    pub dependents: Scan,
    /// The `--controller`s, resolved, with their replicas now.
    pub controllers: Vec<(Controller, i32)>,
    /// The objects already under the new kind (read when the new CRD is served).
    pub under_new_kind: Vec<ObjectKey>,
    /// What a dry run of every object against the served new CRD refused (asked when the
    /// new CRD is served and the request asks to validate).
    pub dry_run: Option<Vec<Rejection>>,
}

impl Observed {
    /// A snapshot of what the files and the flags say, before the cluster is asked more.
    pub fn new(source: SourceRead, target: Option<Value>, notes: Vec<String>, request: &Request) -> Observed {
        Observed {
            source,
            target,
            notes,
            versions: request.versions.clone(),
            into_namespace: request.into_namespace.clone(),
            crds: vec![],
            new_crd_refused: None,
            missing_namespaces: vec![],
            dependents: Scan::default(),
            controllers: vec![],
            under_new_kind: vec![],
            dry_run: None,
        }
    }
}
