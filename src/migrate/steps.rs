//! The migration as a state machine: a [`Step`] enum and one step function,
//! [`Migration::run_step`], that runs the journal's next step and records it.
//!
//! Each step is idempotent — it looks at the cluster, not at what it believes it did —
//! so a step that was `Started` and not `Done` when the process died simply runs again.
//! The journal records a step as started before its first change and done after its last
//! one; values a later step needs and the cluster cannot give back (a controller's
//! replicas before it was scaled to 0) are recorded before the change that loses them.
//!
//! Validation against the new schema, before anything is deleted: every object is
//! dry-run created against a temporary copy of the new CRD — same versions and schemas,
//! under a group of its own (`v<hash>.migrate.kubectl-crd.io`), without subresources. A
//! group of its own means its names collide with nothing, the old registration included,
//! so it works whatever the order; without subresources a create keeps the status, so the
//! status is validated with the spec (with `/status` served, a create would drop it and
//! only the later `/status` write would find a bad one — after the old data is gone).
//! Schema validation does not depend on the group, so what passes there passes under the
//! new CRD; the dry-run's answer also shows fields the new schema would prune, which are
//! refused as data loss. The copy is removed when the check is done.
//!
//! Rollback is a second phase with its own steps, derived from how far the forward phase
//! got, so it undoes only what was done (and works from any point, a completed run
//! included).

use super::MigrateError;
use super::actions;
use super::context::Context;
pub use super::context::Options;
use super::failpoint::{self, Point};
use super::journal::{self, JournalState, Order, Phase, SourceKind, StepRecord, StepState};
use super::plan::{self, Plan, Request};
use super::preflight;
use super::progress::{Event, Report};
pub use super::step::Step;
use super::verify::{self, Verification};
use crate::cluster::ClusterIdentity;
use std::path::Path;

/// What a step did.
#[derive(Debug, Clone, PartialEq)]
pub struct StepOutcome {
    pub step: Step,
    pub summary: String,
    /// The phase has no step left.
    pub phase_finished: bool,
    /// The verification a `Verify` step made.
    pub verification: Option<Verification>,
}

/// A migration with its journal on disk.
#[derive(Debug)]
pub struct Migration {
    /// The journal as the step bodies see it; only the methods here move it between steps
    /// and phases.
    ctx: Context,
}

impl Migration {
    /// Reads the cluster and plans (see [`plan::plan`]); changes nothing.
    pub async fn plan(client: &kube::Client, request: &Request) -> Result<Plan, MigrateError> {
        plan::plan(client, request).await
    }

    /// Starts a journal in `dir` for `plan` on the cluster `here`. Refuses a plan with
    /// problems, and a directory that holds a journal already.
    pub fn create(plan: &Plan, dir: &Path, here: &ClusterIdentity) -> Result<Migration, MigrateError> {
        if plan.is_blocked() {
            return Err(MigrateError::refused(plan.problems.join("; ")));
        }
        if dir.join(journal::JOURNAL_FILE).exists() {
            // Named as another cluster's, it is that: its commands would be refused here.
            let state = journal::load_here(dir, here, false).or_else(|e| match e {
                MigrateError::UnknownCluster { .. } => journal::load_state(dir),
                other => Err(other),
            })?;
            if !state.phase.finished() {
                return Err(MigrateError::unfinished(dir, &state));
            }
            return Err(MigrateError::State(format!(
                "{} holds a finished migration; choose another --journal",
                dir.display()
            )));
        }
        let p = &plan.prepared;
        let (Some(mapping), Some(validation_crd)) = (p.mapping.clone(), p.validation_crd.clone()) else {
            return Err(MigrateError::State("the plan is incomplete".into()));
        };
        journal::create_dir(dir)?;
        journal::write_doc(dir, journal::NEW_CRD_FILE, &p.new_crd)?;
        journal::write_doc(dir, journal::OLD_CRD_FILE, &p.old_crd)?;
        if plan.source == SourceKind::Files {
            let docs: Vec<&serde_json::Value> = p.inputs.iter().collect();
            let text = journal::to_yaml_docs(&docs)
                .map_err(|e| MigrateError::Journal { path: dir.join(journal::INPUT_FILE), reason: e })?;
            journal::write_durable(&dir.join(journal::INPUT_FILE), text.as_bytes())
                .map_err(|e| MigrateError::Journal { path: dir.join(journal::INPUT_FILE), reason: e.to_string() })?;
        }
        let state = JournalState {
            format: JournalState::new_format(),
            id: plan.id.clone(),
            created: k8s_openapi::jiff::Timestamp::now().to_string(),
            source: plan.source,
            old_crd_name: plan.old_crd_name.clone(),
            source_label: plan.source_label.clone(),
            new_crd_name: plan.new_crd_name.clone(),
            new_crd_preexisted: plan.new_crd_exists,
            order: plan.order,
            mapping,
            validation_crd,
            controllers: p.controllers.clone(),
            phase: Phase::Forward,
            forward: plan.steps.iter().map(|s| StepRecord::pending(s.step)).collect(),
            rollback: vec![],
            backup: None,
            refused: None,
            cluster: Some(here.clone()),
        };
        journal::save_state(dir, &state)?;
        Ok(Migration::of(dir, state))
    }

    /// Opens the journal in `dir` to look at it (see [`Migration::open_here`] to run it).
    pub fn open(dir: &Path) -> Result<Migration, MigrateError> {
        Ok(Migration::of(dir, journal::load_state(dir)?))
    }

    /// Opens the journal in `dir` to run it on the cluster `here`: refused when it was made
    /// on another cluster, and (unless `claim`) when it does not record one — see
    /// [`journal::load_here`].
    pub fn open_here(dir: &Path, here: &ClusterIdentity, claim: bool) -> Result<Migration, MigrateError> {
        Ok(Migration::of(dir, journal::load_here(dir, here, claim)?))
    }

    fn of(dir: &Path, state: JournalState) -> Migration {
        Migration { ctx: Context::new(dir, state) }
    }

    /// The same migration with other limits.
    pub fn with_options(mut self, options: Options) -> Self {
        self.ctx.set_options(options);
        self
    }

    pub fn dir(&self) -> &Path {
        self.ctx.dir()
    }

    pub fn state(&self) -> &JournalState {
        self.ctx.state()
    }

    /// The step [`Migration::run_step`] runs next, if any.
    pub fn next_step(&self) -> Option<Step> {
        let state = self.ctx.state();
        if state.phase.finished() {
            return None;
        }
        state.steps().iter().find(|r| r.state != StepState::Done).map(|r| r.step)
    }

    /// Runs the next step and records it in the journal.
    pub async fn run_step(&mut self, client: &kube::Client, report: Report<'_>) -> Result<StepOutcome, MigrateError> {
        let Some(step) = self.next_step() else {
            return Err(MigrateError::State(format!("the migration in {} has no step left", self.dir().display())));
        };
        failpoint::check(step, Point::Start);
        self.set_state(step, StepState::Started, None)?;
        let (summary, verification) = actions::run(&mut self.ctx, step, client, report).await?;
        failpoint::check(step, Point::End);
        self.set_state(step, StepState::Done, Some(summary.clone()))?;
        report(Event::Finished { step, summary: summary.clone() });
        let phase_finished = self.next_step().is_none();
        Ok(StepOutcome { step, summary, phase_finished, verification })
    }

    fn set_state(&mut self, step: Step, state: StepState, summary: Option<String>) -> Result<(), MigrateError> {
        let journal = self.ctx.state_mut();
        if let Some(r) = journal.steps_mut().iter_mut().find(|r| r.step == step) {
            r.state = state;
            if summary.is_some() {
                r.summary = summary;
            }
        }
        if journal.steps().iter().all(|r| r.state == StepState::Done) {
            journal.phase = match journal.phase {
                Phase::Forward => Phase::Completed,
                Phase::Rollback => Phase::RolledBack,
                done => done,
            };
        }
        self.ctx.save()
    }

    /// Switches to the rollback phase: the steps that undo what the forward phase did,
    /// in reverse order. `refused` records why, when a refusal asks for the undo. What the
    /// rollback needs once it has removed the new objects and CRD is checked first (see
    /// `preflight`): refused then, nothing changes, the journal included.
    pub async fn start_rollback(&mut self, client: &kube::Client, refused: Option<String>) -> Result<(), MigrateError> {
        let state = self.ctx.state();
        if state.phase != Phase::Forward && state.phase != Phase::Completed {
            return self.switch_to_rollback(refused);
        }
        let steps = rollback_steps(state);
        if preflight::needs_old(&steps) {
            preflight::check_rollback(client, state, &*self.ctx.backup()?, &steps).await?;
        }
        self.switch_to_rollback(refused)
    }

    /// [`Migration::start_rollback`] without the cluster's checks.
    pub(crate) fn switch_to_rollback(&mut self, refused: Option<String>) -> Result<(), MigrateError> {
        match self.ctx.state().phase {
            Phase::Rollback => return Ok(()),
            Phase::RolledBack => {
                return Err(MigrateError::State(format!(
                    "the migration in {} was rolled back already",
                    self.dir().display()
                )));
            }
            Phase::Forward | Phase::Completed => {}
        }
        let state = self.ctx.state_mut();
        state.rollback = rollback_steps(state).into_iter().map(StepRecord::pending).collect();
        state.refused = refused;
        state.phase = if state.rollback.is_empty() { Phase::RolledBack } else { Phase::Rollback };
        self.ctx.save()
    }

    /// Whether `e`, met going forward, is a refusal whose remedy is to undo what the run
    /// changed so far (controllers scaled down, the new CRD created): nothing was deleted
    /// yet. Drivers then call [`Migration::start_rollback`] with the reason.
    pub fn refusal_undoes(&self, e: &MigrateError) -> bool {
        let state = self.ctx.state();
        e.is_refusal() && state.phase == Phase::Forward && !state.began(Step::DeleteOldData)
    }

    /// Compares the backup with the cluster: with the new kind after (or during) a run,
    /// with the old kind once rolling back.
    pub async fn verify(&self, client: &kube::Client) -> Result<Verification, MigrateError> {
        verify::verify(client, &*self.ctx.backup()?, self.ctx.state()).await
    }

    /// Whether the registrations change new-first.
    pub fn order(&self) -> Order {
        self.ctx.state().order
    }
}

/// The steps that undo what the forward phase of `s` began, in reverse order.
pub(crate) fn rollback_steps(s: &JournalState) -> Vec<Step> {
    let began = |step| s.began(step);
    let cluster = s.source == SourceKind::Cluster;
    let mut steps = Vec::new();
    if began(Step::RestartControllers) && !s.controllers.is_empty() {
        steps.push(Step::StopControllers);
    }
    if began(Step::Validate) {
        steps.push(Step::RemoveValidationCrd);
    }
    if began(Step::Recreate) {
        steps.push(Step::RemoveNewData);
    }
    if began(Step::CreateNewCrd) && !s.new_crd_preexisted {
        steps.push(Step::RemoveNewCrd);
    }
    let restore = cluster && began(Step::DeleteOldData);
    if cluster && began(Step::DeleteOldCrd) {
        steps.push(Step::RestoreOldCrd);
    }
    if restore {
        steps.push(Step::RestoreOldData);
        steps.push(Step::ReadoptOld);
    }
    if began(Step::StopControllers) && !s.controllers.is_empty() {
        steps.push(Step::RestartControllers);
    }
    if restore || began(Step::Recreate) {
        steps.push(Step::VerifyRollback);
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_names_are_the_journal_s_and_round_trip() {
        for step in [Step::StopControllers, Step::DeleteOldData, Step::ReadoptOld, Step::VerifyRollback] {
            let json = serde_json::to_string(&step).expect("serializes");
            assert_eq!(json, format!("\"{}\"", step.name()));
            assert_eq!(serde_json::from_str::<Step>(&json).expect("parses"), step);
        }
        assert!(Step::DeleteOldCrd.is_destructive() && !Step::Recreate.is_destructive());
    }
}
