//! What a migration will do, from a read-only look at the cluster, in two halves:
//! [`observe`] reads the old registration and its objects (or the files), the new CRD,
//! every CRD for name conflicts, the target namespaces, discovery for dependents and
//! controllers, into an [`Observed`] snapshot; [`decide`] turns the snapshot into a
//! [`Plan`] — a pure function, tested with tables of snapshots. Nothing is changed: the
//! only writes are dry runs (`dryRun=All`) of the new CRD document and, when the new CRD
//! is already served, of every object against it.
//!
//! Validation of the objects against a new CRD that does not exist yet cannot be a dry run
//! here — a dry-run create of a CRD serves nothing. `run` does it right after the backup
//! and before any delete, against a temporary copy of the new CRD (see [`super::steps`]);
//! the plan says so.
//!
//! - `types`: the request, the snapshot and the plan.
//! - `observe`: the reading half (IO through `kube::Client`).
//! - `decide`: the deciding half (pure).

mod decide;
mod observe;
mod types;

pub use decide::{decide, describe, forward_steps};
pub(crate) use observe::check_object;
pub use observe::observe;
#[cfg(test)]
pub(crate) use types::Prepared;
pub use types::{
    ControllerPlan, Input, NamespacePlan, Observed, Plan, PlannedStep, Rejection, Request, Source, SourceRead,
    Validation,
};

use super::MigrateError;

/// Reads everything and plans; changes nothing.
pub async fn plan(client: &kube::Client, request: &Request) -> Result<Plan, MigrateError> {
    decide(&observe(client, request).await?)
}
