//! Guided migration of a registration's data to a new CustomResourceDefinition: the
//! TPR proposal's seven manual steps made a plan that is printed, then executed step by
//! step with a journal on disk, resumable after a crash, verified, and reversible.
//!
//! Storage-version migration cannot move objects to a new group, kind, plural or scope;
//! this does, the way the proposal's manual procedure does, without losing anything:
//!
//! 1. stop the controllers (through `/scale`, replicas recorded in the journal);
//! 2. back up every object, status included, and the dependents that point at them
//!    through ownerReferences — YAML with a SHA-256 manifest, fsynced and read back;
//! 3. delete the old objects with `propagationPolicy=Orphan` (dependents are kept);
//! 4. delete the old registration and wait until it is gone;
//! 5. create the new registration and wait for `Established`;
//! 6. recreate every object, restoring status through `/status`;
//! 7. re-adopt the dependents (ownerReferences rewritten to the new uids), restart the
//!    controllers, and verify.
//!
//! Before anything is deleted every object is dry-run created (`dryRun=All`) against a
//! temporary copy of the new CRD's schema (see [`steps`]), and when the new names do not
//! collide with the old ones the new CRD is created first, so a name conflict stops the
//! run while the old data is untouched.
//!
//! The module is a library: [`Migration::plan`] reads the cluster and returns a [`Plan`]
//! (changing nothing); [`Migration::create`] writes the journal; [`Migration::run_step`]
//! executes the next [`Step`] over a `kube::Client`, reporting [`Event`]s through a
//! callback and never printing. The CLI (`kubectl crd migrate`, in `crate::cli`) and the TUI wizard drive the same API.
//!
//! A driver (the CLI, the TUI's wizard) does, in outline:
//!
//! ```no_run
//! # async fn drive(client: kube::Client, request: kubectl_crd::migrate::Request, dir: std::path::PathBuf,
//! #     here: kubectl_crd::cluster::ClusterIdentity) -> Result<(), kubectl_crd::migrate::MigrateError> {
//! use kubectl_crd::migrate::{Event, Migration};
//! let plan = Migration::plan(&client, &request).await?;      // read-only; show it
//! if plan.is_blocked() { /* show plan.problems; stop */ }
//! let mut m = Migration::create(&plan, &dir, &here)?;        // or Migration::open to resume
//! let (tx, _rx) = tokio::sync::mpsc::unbounded_channel::<Event>();
//! let report = move |e: Event| { let _ = tx.send(e); };       // progress for bars or a gauge
//! while let Some(step) = m.next_step() {
//!     if step.is_destructive() { /* ask the user first */ }
//!     match m.run_step(&client, &report).await {
//!         Ok(outcome) => { /* outcome.summary */ }
//!         Err(e) if e.is_refusal() => { m.start_rollback(&client, Some(e.to_string())).await?; /* run the undo steps the same way */ }
//!         Err(e) => return Err(e),                            // the journal keeps the place: resume later
//!     }
//! }
//! let verification = m.verify(&client).await?;               // any time; differences must be empty
//! # let _ = verification; Ok(()) }
//! ```
//!
//! - [`convert`]: ThirdPartyResource and `apiextensions.k8s.io/v1beta1` documents to v1
//!   CRDs, and exported data lists (pure).
//! - [`model`]: identities of the old and new kinds and the object mapping (pure).
//! - [`diff`]: the loss-oriented comparison used by validation and verification (pure).
//! - [`plan`]: what will happen: a read-only look at the cluster fills a snapshot, and a
//!   pure function of the snapshot decides the plan.
//! - [`names`]: name collisions and the temporary validation CRD (pure).
//! - [`journal`]: the journal and the durable, checksummed backup.
//! - `adopt`: dependents pointed at the objects as they are now.
//! - [`ops`]: the cluster operations the steps need beyond [`crate::cluster`].
//! - [`steps`]: the [`Migration`] state machine: which step runs next, the phases.
//! - `context`: the journal as a step body sees it (state, limits, the backup read once).
//! - `actions`: the step bodies, over a `context`.
//! - `guard`: what must hold before the old objects are deleted (pure).
//! - `preflight`: what a rollback needs, checked before its first delete (read, then a
//!   pure decision).
//! - [`verify`]: backup against cluster.
//! - [`report`]: the plan, questions and summaries as lines, for every driver.
//! - `crate::cli::migrate`: `kubectl crd migrate ...`, a thin layer of prompts, bars and printing.

mod actions;
mod adopt;
mod batch;
mod context;
pub mod convert;
pub mod diff;
mod failpoint;
mod guard;
pub mod journal;
pub mod model;
pub mod names;
pub mod ops;
pub mod plan;
mod preflight;
pub mod progress;
pub mod report;
pub mod step;
pub mod steps;
pub mod verify;

pub use journal::{Phase, StepRecord, StepState};
pub use model::{Identity, ObjectKey};
pub use plan::{Input, Plan, Request, Source};
pub use progress::{Event, Report};
pub use steps::{Migration, Step, StepOutcome};
pub use verify::Verification;

use crate::cluster::{ClusterError, ClusterIdentity};
use std::path::PathBuf;

/// Why a migration (or its plan) could not go on.
#[derive(Debug, thiserror::Error)]
pub enum MigrateError {
    /// A cluster request failed.
    #[error(transparent)]
    Cluster(#[from] ClusterError),
    /// A file or flag the user gave is not what the migration needs.
    #[error("invalid {what} in {source_name}: {reason}")]
    Input { what: &'static str, source_name: String, reason: String },
    /// The migration would lose or break something, so it stops before deleting anything.
    #[error("refused: {reason}. Nothing was deleted")]
    Refused { reason: String },
    /// The backup could not be written or read back; nothing is deleted without one.
    #[error("cannot write the backup in {}: {reason}. Nothing was deleted", path.display())]
    Backup { path: PathBuf, reason: String },
    /// The backup could not be read back, or does not match its checksums.
    #[error("the backup in {} cannot be used: {reason}", path.display())]
    BackupDamaged { path: PathBuf, reason: String },
    /// The journal could not be read or written.
    #[error("journal {}: {reason}", path.display())]
    Journal { path: PathBuf, reason: String },
    /// Objects changed on the cluster behind the migration's back (writers still running).
    #[error("{0}")]
    Changed(String),
    /// Waiting for the cluster gave up; running the step again continues the wait.
    #[error("{what} did not happen within {secs}s; resuming the migration keeps waiting")]
    Timeout { what: String, secs: u64 },
    /// Verification found differences between the backup and the cluster.
    #[error("verification found {0} difference(s) between the backup and the cluster")]
    Differences(usize),
    /// A new run would take the place of an unfinished one: it is resumed or rolled back,
    /// not started again.
    #[error("{} holds a migration of {old} to {new} that is not finished", dir.display())]
    Unfinished { dir: PathBuf, old: String, new: String },
    /// The journal was made on another cluster: resuming it here would act on the wrong
    /// objects.
    #[error(
        "the journal in {} belongs to another cluster, {theirs}; this is {here}. Run the command against that cluster, or give this cluster's journal",
        dir.display()
    )]
    OtherCluster { dir: PathBuf, theirs: Box<ClusterIdentity>, here: Box<ClusterIdentity> },
    /// The journal records no cluster (an older version wrote it).
    #[error(
        "the journal in {} does not record which cluster it was made on (an older kubectl-crd wrote it); if it was made on this one, {here}, add --this-cluster",
        dir.display()
    )]
    UnknownCluster { dir: PathBuf, here: Box<ClusterIdentity> },
    /// The journal is not in a state for what was asked.
    #[error("{0}")]
    State(String),
}

impl MigrateError {
    /// A fault in what the user gave (exit code 2) rather than in the cluster's state.
    pub fn is_usage(&self) -> bool {
        match self {
            MigrateError::Input { .. } | MigrateError::OtherCluster { .. } | MigrateError::UnknownCluster { .. } => {
                true
            }
            MigrateError::Cluster(e) => e.is_usage(),
            _ => false,
        }
    }

    /// The run stopped before deleting anything, for a reason the user must fix: what the
    /// run changed so far (controllers scaled down, the new CRD created) should be undone.
    pub fn is_refusal(&self) -> bool {
        matches!(self, MigrateError::Refused { .. } | MigrateError::Backup { .. })
    }

    pub(crate) fn refused(reason: impl Into<String>) -> Self {
        MigrateError::Refused { reason: reason.into() }
    }

    pub(crate) fn unfinished(dir: &std::path::Path, state: &journal::JournalState) -> Self {
        MigrateError::Unfinished {
            dir: dir.to_path_buf(),
            old: state.old_crd_name.clone(),
            new: state.new_crd_name.clone(),
        }
    }

    pub(crate) fn input(what: &'static str, source: &str, reason: impl Into<String>) -> Self {
        MigrateError::Input { what, source_name: source.to_string(), reason: reason.into() }
    }
}
