//! The steps of a migration and of its rollback, by name: a leaf every part of the
//! migration (journal, plan, actions, progress, failpoints) can name without the others.

use serde::{Deserialize, Serialize};

/// One step of a migration or of its rollback.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Step {
    /// Scale the named controllers to 0, recording their replicas.
    StopControllers,
    /// Back up every object and dependent, durably, and read the backup back.
    Backup,
    /// Create the new CRD and wait until it is Established.
    CreateNewCrd,
    /// Dry-run every object against a temporary copy of the new schema.
    Validate,
    /// Delete the old objects, orphaning their dependents.
    DeleteOldData,
    /// Delete the old CRD and wait until it is gone.
    DeleteOldCrd,
    /// Create every object under the new kind, status restored through `/status`.
    Recreate,
    /// Point the dependents at the new objects.
    Readopt,
    /// Scale the controllers back to their recorded replicas.
    RestartControllers,
    /// Compare the backup with the cluster.
    Verify,
    /// Rollback: remove the temporary validation CRD, if left.
    RemoveValidationCrd,
    /// Rollback: delete the objects created under the new kind (orphaning).
    RemoveNewData,
    /// Rollback: delete the new CRD, unless it was there before.
    RemoveNewCrd,
    /// Rollback: create the old CRD again from the backup.
    RestoreOldCrd,
    /// Rollback: create the old objects again from the backup.
    RestoreOldData,
    /// Rollback: point the dependents at the restored objects.
    ReadoptOld,
    /// Rollback: compare the backup with the restored objects.
    VerifyRollback,
}

impl Step {
    /// The step's name in the journal and in `KUBECTL_CRD_MIGRATE_CRASH_AT`.
    pub fn name(self) -> &'static str {
        match self {
            Step::StopControllers => "stop-controllers",
            Step::Backup => "backup",
            Step::CreateNewCrd => "create-new-crd",
            Step::Validate => "validate",
            Step::DeleteOldData => "delete-old-data",
            Step::DeleteOldCrd => "delete-old-crd",
            Step::Recreate => "recreate",
            Step::Readopt => "readopt",
            Step::RestartControllers => "restart-controllers",
            Step::Verify => "verify",
            Step::RemoveValidationCrd => "remove-validation-crd",
            Step::RemoveNewData => "remove-new-data",
            Step::RemoveNewCrd => "remove-new-crd",
            Step::RestoreOldCrd => "restore-old-crd",
            Step::RestoreOldData => "restore-old-data",
            Step::ReadoptOld => "readopt-old",
            Step::VerifyRollback => "verify-rollback",
        }
    }

    /// Whether the step deletes or stops something, so a driver asks before it.
    pub fn is_destructive(self) -> bool {
        matches!(
            self,
            Step::StopControllers | Step::DeleteOldData | Step::DeleteOldCrd | Step::RemoveNewData | Step::RemoveNewCrd
        )
    }
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
