//! What a driver tells the user, as lines of text: the plan, the question before a
//! destructive step, where the journal keeps the place, the summary and the verification.
//! Pure functions of the library's values, so the CLI prints them and the TUI wizard draws
//! them, and both say the same thing.

use super::journal::{JournalState, Order, Phase, SourceKind};
use super::plan::{Plan, Validation};
use super::step::Step;
use super::verify::Verification;
use crate::cluster::shell;
use crate::text::tabwrite::tabwrite;
use std::collections::BTreeMap;
use std::path::Path;

/// How many rejected objects and server additions are listed before "... and N more".
const LISTED: usize = 20;

/// Who shows the plan, for the advice that names where to give what is missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Driver {
    /// `kubectl crd migrate`: flags.
    Cli,
    /// The TUI's wizard: its fields.
    Tui,
}

/// The plan as `kubectl crd migrate plan` prints it (or the wizard shows it), line by line.
pub fn plan_lines(plan: &Plan, driver: Driver) -> Vec<String> {
    let scope = |namespaced: bool| if namespaced { "Namespaced" } else { "Cluster" };
    let mut out = vec![format!("Migration {}", plan.id)];
    let source = match plan.source {
        SourceKind::Cluster => format!("CRD {} on the cluster", plan.old_crd_name),
        SourceKind::Files => format!("{} with exported data", plan.source_label),
    };
    out.push(format!(
        "  from  {} ({}, {}) — {source}",
        plan.from.kind,
        plan.from.api_version(),
        scope(plan.from.namespaced)
    ));
    let exists = if plan.new_crd_exists { "exists already" } else { "to be created" };
    out.push(format!(
        "  to    {} ({}, {}) — CRD {} {exists}",
        plan.to.kind,
        plan.to.api_version(),
        scope(plan.to.namespaced),
        plan.new_crd_name
    ));
    out.extend(plan.notes.iter().map(|note| format!("  note: {note}")));
    if plan.tpr_names.is_some() {
        out.push("  note: names derived from the TPR's name; 'run' asks you to confirm or correct them (or write the CRD with 'kubectl crd migrate convert' and pass it with --to)".into());
    }
    out.push(String::new());
    out.push(format!("Objects: {}", plan.objects));
    let mut rows = vec![vec!["NAMESPACE".to_string(), "OBJECTS".into(), "WITH STATUS".into(), "GOES TO".into()]];
    for n in &plan.namespaces {
        let target = match (n.target.as_str(), n.target_exists) {
            ("", _) => "(cluster)".to_string(),
            (t, true) => t.to_string(),
            (t, false) => format!("{t} (created)"),
        };
        let ns = if n.namespace.is_empty() { "(cluster)".to_string() } else { n.namespace.clone() };
        rows.push(vec![ns, n.objects.to_string(), n.with_status.to_string(), target]);
    }
    out.extend(tabwrite(&rows).lines().map(|line| format!("  {line}")));
    let mut by_kind: BTreeMap<String, usize> = BTreeMap::new();
    for d in &plan.dependents {
        *by_kind.entry(format!("{} ({})", d.kind, d.api_version())).or_default() += 1;
    }
    out.push(String::new());
    out.push(format!(
        "Dependents (objects whose ownerReferences point at them; kept and re-adopted): {}",
        plan.dependents.len()
    ));
    out.extend(by_kind.iter().map(|(kind, n)| format!("  {kind}: {n}")));
    if !plan.unchecked.is_empty() {
        out.push(format!("  not scanned: {}", plan.unchecked.join("; ")));
    }
    out.push(String::new());
    out.push("Controllers to stop:".into());
    if plan.controllers.is_empty() {
        out.push(match driver {
            Driver::Cli => {
                "  none named. Name them with --controller NS/DEPLOYMENT, or --controller NS/RESOURCE/NAME for any"
            }
            Driver::Tui => "  none named. Give them in the wizard's Controllers field as NS/DEPLOYMENT, or NS/RESOURCE/NAME for any",
        }
        .into());
        out.push("  resource with a /scale subresource (the local engine has no Deployments)".into());
    }
    out.extend(
        plan.controllers
            .iter()
            .map(|c| format!("  {} ({}): {} replica(s) → 0, then back", c.spec, c.resource, c.replicas)),
    );
    out.push(String::new());
    out.push(format!(
        "Name conflicts of the new CRD: {}",
        if plan.conflicts.is_empty() { "none".into() } else { plan.conflicts.join("; ") }
    ));
    match &plan.validation {
        Validation::Checked { objects, rejected, note } => {
            out.push(format!("Dry run against the new CRD: {} of {objects} object(s) pass", objects - rejected.len()));
            out.extend(rejected.iter().take(LISTED).map(|r| format!("  {}: {}", r.object, r.message)));
            if let Some(n) = note {
                out.push(format!("  note: {n}"));
            }
        }
        Validation::Deferred { reason } => out.push(format!("Dry run against the new schema: in 'run' — {reason}")),
    }
    let order = match plan.order {
        Order::NewFirst => "the new CRD is created before anything is deleted",
        Order::OldFirst => "the new CRD shares names with the old one, so it is created once the old one is gone",
    };
    out.push(format!("Order: {order}"));
    out.push(String::new());
    out.push("Steps:".into());
    for (i, s) in plan.steps.iter().enumerate() {
        let asks = if s.destructive { " [asks first]" } else { "" };
        out.push(format!("  {:>2}. {:<20} {}{asks}", i + 1, s.step.name(), s.description));
    }
    out.push(String::new());
    if plan.problems.is_empty() {
        out.push("Problems: none".into());
    } else {
        out.push("Problems (the migration does not start):".into());
        out.extend(plan.problems.iter().map(|p| format!("  - {p}")));
    }
    out
}

/// The question before the run starts.
pub fn start_question(plan: &Plan) -> String {
    format!("Start the migration of {} objects to {}?", plan.objects, plan.new_crd_name)
}

/// The question before a destructive step, or `None` when there is nothing to ask about
/// (no controllers to stop, or a step that changes nothing).
pub fn confirmation(step: Step, state: &JournalState) -> Option<String> {
    let objects = state.backup.as_ref().map_or(0, |b| b.objects);
    let dependents = state.backup.as_ref().map_or(0, |b| b.dependents);
    match step {
        Step::StopControllers if state.controllers.is_empty() => None,
        Step::StopControllers => {
            let names: Vec<&str> = state.controllers.iter().map(|c| c.spec.as_str()).collect();
            Some(format!("Scale {} to 0 replicas until the migration is done?", names.join(", ")))
        }
        Step::DeleteOldData => Some(format!(
            "Delete the {objects} {} objects (backed up; their {dependents} dependent(s) are orphaned, not deleted)?",
            state.mapping.from.crd_name()
        )),
        Step::DeleteOldCrd => Some(format!("Delete the old CustomResourceDefinition {}?", state.old_crd_name)),
        Step::RemoveNewData => Some(format!("Delete the objects created under {}?", state.mapping.to.crd_name())),
        Step::RemoveNewCrd => Some(format!("Delete the new CustomResourceDefinition {}?", state.new_crd_name)),
        _ => None,
    }
}

/// The commands that go on with the journal in `dir` or undo it. `kubectl_crd` is
/// `kubectl crd` with the connection flags given ([`crate::cluster::shell::command`]): a
/// command pasted as printed acts on the same cluster.
pub fn journal_commands(dir: &Path, kubectl_crd: &str) -> String {
    let journal = shell::quote_path(dir);
    format!(
        "continue with '{kubectl_crd} migrate resume --journal {journal}', or undo with '{kubectl_crd} migrate rollback --journal {journal}'"
    )
}

/// Where the journal keeps the place after a run stopped, and the commands that go on.
pub fn resume_hint(dir: &Path, kubectl_crd: &str) -> String {
    format!("The journal is in {}: fix the cause and {}.", dir.display(), journal_commands(dir, kubectl_crd))
}

/// Why the run stopped when the user said no before `step`, and how to go on.
pub fn stopped_hint(step: Step, dir: &Path, kubectl_crd: &str) -> String {
    format!("stopped before {step} at your request; {}", journal_commands(dir, kubectl_crd))
}

/// What a finished phase did: the objects moved (or the rollback), the controllers, the
/// last verification and where the journal is.
pub fn summary_lines(state: &JournalState, dir: &Path) -> Vec<String> {
    let mut out = vec![];
    match state.phase {
        Phase::Completed => {
            out.push(format!("  {} → {}", state.old_crd_name, state.new_crd_name));
            if let Some(b) = &state.backup {
                for (ns, n) in &b.per_namespace {
                    out.push(format!("  {:<20} {n} object(s)", if ns.is_empty() { "(cluster)" } else { ns }));
                }
                out.push(format!("  dependents re-adopted: {}", b.dependents));
            }
            for c in &state.controllers {
                out.push(format!("  controller {} back at {} replica(s)", c.spec, c.replicas.unwrap_or(0)));
            }
        }
        Phase::RolledBack => out.push(format!("  rolled back: {} is as it was", state.old_crd_name)),
        Phase::Forward | Phase::Rollback => {}
    }
    if let Some(r) = state.steps().iter().rev().find(|r| matches!(r.step, Step::Verify | Step::VerifyRollback)) {
        out.push(format!("  verification: {}", r.summary.clone().unwrap_or_default()));
    }
    out.push(format!("  journal and backup: {}", dir.display()));
    out
}

/// A verification: its sentence, every difference, and the first additions.
pub fn verification_lines(v: &Verification) -> Vec<String> {
    let mut out = vec![v.summary()];
    if !v.differences.is_empty() {
        out.push("Differences:".into());
        out.extend(v.differences.iter().map(|f| format!("  {}: {}", f.object, f.detail)));
    }
    if !v.additions.is_empty() {
        out.push("Added by the server (not differences):".into());
        out.extend(v.additions.iter().take(LISTED).map(|f| format!("  {}: {}", f.object, f.detail)));
        if v.additions.len() > LISTED {
            out.push(format!("  ... and {} more", v.additions.len() - LISTED));
        }
    }
    out
}
