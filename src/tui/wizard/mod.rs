//! The migration wizard (`m` on a registration): the TUI's driver of [`crate::migrate`],
//! as `kubectl crd migrate run` is the CLI's. It asks for the new CRD (a file, or written
//! in the editor from the current one), shows the same plan, creates the same journal,
//! runs the steps one at a time — asking before each destructive one, with the step's
//! progress as a gauge — offers the undo after a refusal, verifies, and sums up. A
//! registration with an unfinished journal is offered for resuming instead.
//!
//! Split as the rest of the TUI is: this module holds the wizard's state and its
//! vocabulary with the runtime ([`WizardEffect`], [`WizardMsg`]); [`update`] is the pure
//! step function; [`driver`] does the IO — the plan, the journal, and the task that owns
//! the [`Migration`] and runs one step per command, so the screen never waits for a step.

pub mod driver;
pub mod update;

use crate::cluster::registrations::Crd;
use crate::migrate::convert::clean_crd;
use crate::migrate::ops;
use crate::migrate::progress::Event;
use crate::migrate::{Migration, Phase, Plan, Step, StepRecord, journal::JournalState, report};
use crate::tui::input::Input;
use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;

/// The wizard, on top of the screen stack while it is open.
#[derive(Debug, Clone, PartialEq)]
pub struct Wizard {
    /// The registration whose objects move (`--from`).
    pub crd: String,
    pub stage: Stage,
    /// The path of the new CRD's file, as typed (kept when the plan goes back to it).
    pub path: Input,
    /// The controllers to stop (`--controller`), as typed: comma- or space-separated.
    pub controllers: Input,
    /// The line keys type into on the first screen.
    pub field: Field,
    /// How far the plan or the log is scrolled.
    pub scroll: usize,
}

/// The lines of the wizard's first screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Field {
    #[default]
    Path,
    Controllers,
}

impl Wizard {
    pub fn new(crd: &str, stage: Stage) -> Self {
        Wizard {
            crd: crd.to_string(),
            stage,
            path: Input::default(),
            controllers: Input::default(),
            field: Field::Path,
            scroll: 0,
        }
    }

    /// The line keys type into.
    pub fn input(&mut self) -> &mut Input {
        match self.field {
            Field::Path => &mut self.path,
            Field::Controllers => &mut self.controllers,
        }
    }

    /// Whether keys type into the path line.
    pub fn typing(&self) -> bool {
        self.stage == Stage::Target
    }

    /// Whether a step (or the verification) is running: quitting then asks first.
    pub fn busy(&self) -> bool {
        matches!(&self.stage, Stage::Run(r) if matches!(r.status, RunStatus::Running(_) | RunStatus::Verifying | RunStatus::Waiting))
    }
}

/// Where the wizard is.
#[derive(Debug, Clone, PartialEq)]
pub enum Stage {
    /// Looking for an unfinished journal of this registration.
    Looking,
    /// An unfinished journal of this registration: resume it, roll it back, or start anew.
    Resume(Box<Found>),
    /// Typing the path of the new CRD's file.
    Target,
    /// Waiting for the editor, the plan, or the journal; the text says for what.
    Busy(String),
    /// The plan; `asking` while the start question is up, `starting` while the journal is
    /// being created.
    Plan { plan: Box<Plan>, lines: Vec<String>, asking: bool, starting: bool },
    /// The steps, run from the journal.
    Run(Box<Run>),
}

/// An unfinished journal found for the registration.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub dir: PathBuf,
    pub journal: JournalState,
    /// Other unfinished journals found at the same time (offered one at a time).
    pub others: usize,
    /// `r` was pressed: the roll-back question is up.
    pub asking_rollback: bool,
}

/// A running (or stopped, or finished) migration.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub journal: Journal,
    pub status: RunStatus,
    /// The running step's items, done of total, when it counts them.
    pub progress: Option<(u64, u64)>,
    /// What happened: steps done (with their summaries and times), notes, failures.
    pub log: Vec<String>,
}

/// The most lines the log keeps (notes can come one per object).
pub const LOG_LINES: usize = 500;

impl Run {
    pub fn log(&mut self, line: String) {
        if self.log.len() >= LOG_LINES {
            self.log.remove(0);
        }
        self.log.push(line);
    }
}

/// What the run is doing.
#[derive(Debug, Clone, PartialEq)]
pub enum RunStatus {
    /// Waiting for the journal after a roll-back was asked for.
    Waiting,
    Running(Step),
    /// The next step is destructive: the question, `y` runs it, `n` stops.
    Asking(String),
    /// Stopped by a refusal, a failure or the user's no; the journal keeps the place.
    Halted {
        error: String,
        undo: Undo,
    },
    Verifying,
    Done(Summary),
}

/// What a stopped run offers to undo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Undo {
    /// Nothing (a roll-back stopped: it is resumed, not undone).
    Nothing,
    /// A refusal before anything was deleted: `y` undoes what the run changed.
    Refusal,
    /// `r` rolls the migration back from its backup (after a question).
    Available,
    /// `r` was pressed: `y` rolls back.
    Asking,
}

/// The journal as the wizard shows it, read from the [`Migration`] after each change.
#[derive(Debug, Clone, PartialEq)]
pub struct Journal {
    pub dir: PathBuf,
    pub old_crd: String,
    pub new_crd: String,
    pub phase: Phase,
    /// The steps of the current phase, with their state and summaries.
    pub steps: Vec<StepRecord>,
    pub next: Option<Step>,
    /// The question before `next`, when it is destructive (as the CLI asks it). A
    /// refusal's undo runs without asking, as in the CLI.
    pub ask: Option<String>,
}

impl Journal {
    pub fn of(m: &Migration) -> Journal {
        let state = m.state();
        let next = m.next_step();
        let ask =
            next.filter(|s| s.is_destructive() && state.refused.is_none()).and_then(|s| report::confirmation(s, state));
        Journal {
            dir: m.dir().to_path_buf(),
            old_crd: state.old_crd_name.clone(),
            new_crd: state.new_crd_name.clone(),
            phase: state.phase,
            steps: state.steps().to_vec(),
            next,
            ask,
        }
    }
}

/// The end of a phase: the summary lines and the verification's differences.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub lines: Vec<String>,
    pub differences: usize,
}

/// A step that failed.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub message: String,
    /// A refusal before anything was deleted ([`Migration::refusal_undoes`]).
    pub undo: bool,
}

/// IO the wizard asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum WizardEffect {
    /// List the journals under `root`: for the registration `crd`, or (`None`, at start)
    /// any unfinished one.
    FindJournals { root: PathBuf, crd: Option<String> },
    /// Write `text` to a file of its own and open the editor on it.
    Compose { crd: String, text: String },
    /// Plan the migration of `from` to the CRD in the file `to`, stopping `controllers`.
    Plan { from: String, to: PathBuf, controllers: Vec<String> },
    /// Create the journal for `plan` under `root` and take the migration.
    Start { plan: Box<Plan>, root: PathBuf },
    /// Open the journal in `dir` (and switch it to its roll-back) and take the migration.
    Open { dir: PathBuf, rollback: bool },
    /// Run the migration's next step.
    Step,
    /// Switch the migration to its roll-back; `reason` when a refusal asks for it.
    Rollback { reason: Option<String> },
    /// Verify and sum up.
    Verify,
    /// Let go of the migration.
    Close,
}

/// What comes back from the wizard's IO.
#[derive(Debug, Clone, PartialEq)]
pub enum WizardMsg {
    Journals {
        crd: Option<String>,
        found: Vec<(PathBuf, JournalState)>,
    },
    /// The file the editor saved; `None` when it was left empty.
    Composed(Result<Option<PathBuf>, String>),
    Planned(Result<Box<Plan>, String>),
    /// The migration is taken (created, opened, or switched to its roll-back).
    Ready(Result<Journal, String>),
    /// Progress of the running step.
    Event(Event),
    Stepped {
        step: Step,
        result: Result<String, Failure>,
        took: Duration,
        journal: Journal,
    },
    Verified(Result<Summary, String>),
}

/// Unfinished journals that move the registration `crd` or into it (once the old CRD is
/// deleted, the new one is where the user finds the migration), or any with `None`;
/// oldest first.
pub fn unfinished(found: Vec<(PathBuf, JournalState)>, crd: Option<&str>) -> Vec<(PathBuf, JournalState)> {
    let involves = |j: &JournalState| crd.is_none_or(|c| j.old_crd_name == c || j.new_crd_name == c);
    found.into_iter().filter(|(_, j)| !j.phase.finished() && involves(j)).collect()
}

/// The Controllers field as the `Request` takes it: one spec per comma- or space-separated
/// word, each checked as `--controller` is ([`ops::parse_controller`]); every bad one is
/// named in the error.
pub fn controllers(text: &str) -> Result<Vec<String>, String> {
    let specs: Vec<String> =
        text.split(|c: char| c == ',' || c.is_whitespace()).filter(|s| !s.is_empty()).map(String::from).collect();
    let bad: Vec<String> = specs
        .iter()
        .filter_map(|spec| ops::parse_controller(spec).err().map(|reason| format!("{spec:?} ({reason})")))
        .collect();
    if bad.is_empty() { Ok(specs) } else { Err(format!("invalid controller(s) to stop: {}", bad.join(", "))) }
}

/// The text the editor opens to write the new CRD: the current one without what the
/// server fills in, under a header saying what to change.
pub fn compose_text(crd: &Crd) -> String {
    let mut doc = serde_json::to_value(crd).unwrap_or_default();
    if let Some(m) = doc.as_object_mut() {
        m.insert("apiVersion".into(), "apiextensions.k8s.io/v1".into());
        m.insert("kind".into(), "CustomResourceDefinition".into());
    }
    let mut doc = clean_crd(&doc);
    if let Some(annotations) = doc.pointer_mut("/metadata/annotations").and_then(Value::as_object_mut) {
        annotations.remove("kubectl.kubernetes.io/last-applied-configuration");
    }
    let name = crd.metadata.name.as_deref().unwrap_or_default();
    let body = serde_saphyr::to_string(&doc).unwrap_or_default();
    format!(
        "# The new CustomResourceDefinition for the objects of {name}, starting as a copy of it.\n\
         # Change what the migration is for: spec.group, spec.names (kind, plural, singular,\n\
         # listKind, shortNames), spec.scope — and metadata.name to <plural>.<group>.\n\
         # Save and quit to see the plan; nothing changes before you start it.\n\
         # Lines starting with '#' are ignored. Save an empty file to cancel.\n{body}"
    )
}

#[cfg(test)]
mod tests;
