//! The wizard's step function: an [`Action`] or a [`WizardMsg`] moves the [`Wizard`] on
//! and asks for IO as [`WizardEffect`]s. Which step runs next, and what to ask before it,
//! come from the migration's journal ([`Journal`]); nothing here decides them again.

use super::{
    Field, Found, Journal, Run, RunStatus, Stage, Undo, Wizard, WizardEffect, WizardMsg, compose_text, controllers,
    unfinished,
};
use crate::migrate::journal::JournalState;
use crate::migrate::progress::Event;
use crate::migrate::{Phase, report};
use crate::tui::action::{Action, Effect};
use crate::tui::state::{Mode, Screen, State};
use std::path::PathBuf;

/// What a handler leaves: the wizard stays open, or closes.
enum Flow {
    Stay(Vec<Effect>),
    Close(Vec<Effect>),
}

fn fx(effect: WizardEffect) -> Effect {
    Effect::Wizard(effect)
}

/// Runs `f` on the wizard on top of the stack, taken off it meanwhile so `f` may change
/// the rest of the state (messages) too.
fn with_wizard(state: &mut State, f: impl FnOnce(&mut State, &mut Wizard) -> Flow) -> Vec<Effect> {
    let Some(Screen::Wizard(mut w)) = state.stack.pop_if(|s| matches!(s, Screen::Wizard(_))) else { return vec![] };
    match f(state, &mut w) {
        Flow::Stay(effects) => {
            state.stack.push(Screen::Wizard(w));
            effects
        }
        Flow::Close(mut effects) => {
            effects.push(fx(WizardEffect::Close));
            effects
        }
    }
}

/// Whether a step is running, so quitting asks first.
pub fn busy(state: &State) -> bool {
    matches!(state.screen(), Screen::Wizard(w) if w.busy())
}

/// At start: look for unfinished migrations to offer (not when writes are off).
pub fn startup(state: &State) -> Vec<Effect> {
    match (&state.journal_root, state.readonly) {
        (Some(root), false) => vec![fx(WizardEffect::FindJournals { root: root.clone(), crd: None })],
        _ => vec![],
    }
}

/// `m`: opens the wizard on the selected registration.
pub fn open(state: &mut State) -> Vec<Effect> {
    let crd = match state.screen() {
        Screen::Registrations => state.registrations.current().map(|r| r.name().to_string()),
        Screen::Detail(d) => Some(d.crd.clone()),
        _ => None,
    };
    let Some(crd) = crd else { return vec![] };
    if state.readonly {
        state.error("read-only: writes are off (started with --readonly), and a migration writes");
        return vec![];
    }
    let Some(root) = state.journal_root.clone() else {
        state.error("cannot find a data directory for the migration's journal ($XDG_DATA_HOME or $HOME)");
        return vec![];
    };
    state.message = None;
    state.stack.push(Screen::Wizard(Box::new(Wizard::new(&crd, Stage::Looking))));
    vec![fx(WizardEffect::FindJournals { root, crd: Some(crd) })]
}

/// A key on the wizard's screen.
pub fn on_action(state: &mut State, action: Action) -> Vec<Effect> {
    with_wizard(state, |state, w| match std::mem::replace(&mut w.stage, Stage::Looking) {
        Stage::Target => target(state, w, action),
        Stage::Resume(found) => resume(w, action, found),
        Stage::Plan { plan, lines, asking, starting } => {
            w.stage = Stage::Plan { plan, lines, asking, starting };
            plan_keys(state, w, action)
        }
        Stage::Run(run) => {
            w.stage = Stage::Run(run);
            run_keys(state, w, action)
        }
        stage @ (Stage::Looking | Stage::Busy(_)) => {
            w.stage = stage;
            match action {
                Action::Cancel | Action::Back => Flow::Close(vec![]),
                _ => Flow::Stay(vec![]),
            }
        }
    })
}

fn target(state: &mut State, w: &mut Wizard, action: Action) -> Flow {
    w.stage = Stage::Target;
    match action {
        Action::Type(c) => w.input().text.push(c),
        Action::Backspace => {
            w.input().text.pop();
        }
        Action::ClearInput => w.input().text.clear(),
        Action::FocusNext => {
            w.field = match w.field {
                Field::Path => Field::Controllers,
                Field::Controllers => Field::Path,
            }
        }
        Action::Cancel | Action::Back => return Flow::Close(vec![]),
        Action::Compose => {
            let Some(reg) = state.registrations.find(&w.crd) else {
                state.error(format!("{} is not in the list any more", w.crd));
                return Flow::Stay(vec![]);
            };
            let text = compose_text(&reg.crd);
            w.stage = Stage::Busy(format!("writing the new CRD in {}…", crate::cluster::editor::editor_command()));
            return Flow::Stay(vec![fx(WizardEffect::Compose { crd: w.crd.clone(), text })]);
        }
        Action::Submit => {
            let path = w.path.text.trim().to_string();
            if path.is_empty() {
                state.error("type the path of the new CRD's YAML file, or press Ctrl-E to write it in the editor");
                return Flow::Stay(vec![]);
            }
            state.message = None;
            return Flow::Stay(plan(state, w, PathBuf::from(path)));
        }
        _ => {}
    }
    Flow::Stay(vec![])
}

/// Plans with the typed controllers, or stays on the first screen, at the Controllers
/// field, saying which are wrong.
fn plan(state: &mut State, w: &mut Wizard, to: PathBuf) -> Vec<Effect> {
    let controllers = match controllers(&w.controllers.text) {
        Ok(controllers) => controllers,
        Err(e) => {
            state.error(e);
            w.stage = Stage::Target;
            w.field = Field::Controllers;
            return vec![];
        }
    };
    w.stage = Stage::Busy(format!("planning: reading the cluster for {} → {} (nothing changes)…", w.crd, to.display()));
    vec![fx(WizardEffect::Plan { from: w.crd.clone(), to, controllers })]
}

fn resume(w: &mut Wizard, action: Action, mut found: Box<Found>) -> Flow {
    let open = |w: &mut Wizard, dir: PathBuf, rollback: bool| {
        let what = if rollback { "rolling back" } else { "resuming" };
        w.stage = Stage::Busy(format!("{what}: opening the journal in {}…", dir.display()));
        Flow::Stay(vec![fx(WizardEffect::Open { dir, rollback })])
    };
    match (action, found.asking_rollback) {
        (Action::Answer(true), false) => open(w, found.dir, false),
        (Action::Answer(true), true) => open(w, found.dir, true),
        (Action::Answer(false), true) | (Action::Cancel, true) => {
            found.asking_rollback = false;
            w.stage = Stage::Resume(found);
            Flow::Stay(vec![])
        }
        (Action::Answer(false), false) => {
            w.stage = Stage::Target;
            Flow::Stay(vec![])
        }
        (Action::Rollback, _) => {
            found.asking_rollback = true;
            w.stage = Stage::Resume(found);
            Flow::Stay(vec![])
        }
        (Action::Cancel | Action::Back, false) => Flow::Close(vec![]),
        _ => {
            w.stage = Stage::Resume(found);
            Flow::Stay(vec![])
        }
    }
}

/// Scrolls the plan, counted from its top, or the log, counted back from its end (so
/// new lines show while it is not scrolled): `j` goes down, `g` to the top, in both.
fn scroll(w: &mut Wizard, action: Action) -> bool {
    let (len, from_end) = match &w.stage {
        Stage::Plan { lines, .. } => (lines.len(), false),
        Stage::Run(run) => (run.log.len(), true),
        _ => (0, false),
    };
    let last = len.saturating_sub(1);
    let down = |n: isize| if from_end { -n } else { n };
    w.scroll = match action {
        Action::Move(n) => w.scroll.saturating_add_signed(down(n)),
        Action::Page(n) => w.scroll.saturating_add_signed(down(n * 10)),
        Action::Jump(end) if end != from_end => last,
        Action::Jump(_) => 0,
        _ => return false,
    }
    .min(last);
    true
}

fn plan_keys(state: &mut State, w: &mut Wizard, action: Action) -> Flow {
    if scroll(w, action) {
        return Flow::Stay(vec![]);
    }
    let Stage::Plan { plan, asking, starting, .. } = &mut w.stage else { return Flow::Stay(vec![]) };
    if *starting {
        return Flow::Stay(vec![]);
    }
    match (action, *asking) {
        (Action::Submit | Action::Answer(true), false) => {
            if plan.is_blocked() {
                state.error(format!("the migration cannot start: {}", plan.problems.join("; ")));
            } else {
                *asking = true;
            }
        }
        (Action::Answer(true), true) => {
            let Some(root) = state.journal_root.clone() else { return Flow::Stay(vec![]) };
            *asking = false;
            *starting = true;
            return Flow::Stay(vec![fx(WizardEffect::Start { plan: plan.clone(), root })]);
        }
        (Action::Answer(false) | Action::Cancel | Action::Back, true) => {
            *asking = false;
            state.info("not started: nothing was changed");
        }
        (Action::Cancel | Action::Back, false) => {
            w.stage = Stage::Target;
            w.scroll = 0;
        }
        _ => {}
    }
    Flow::Stay(vec![])
}

fn run_keys(state: &mut State, w: &mut Wizard, action: Action) -> Flow {
    if scroll(w, action) {
        return Flow::Stay(vec![]);
    }
    let Stage::Run(run) = &mut w.stage else { return Flow::Stay(vec![]) };
    let dir = run.journal.dir.display().to_string();
    match (&mut run.status, action) {
        (RunStatus::Asking(_), Action::Answer(true)) => return Flow::Stay(run_next(run)),
        (RunStatus::Asking(_), Action::Answer(false) | Action::Cancel | Action::Back) => {
            let error = match run.journal.next {
                Some(step) => report::stopped_hint(step, &run.journal.dir, &state.target.shell),
                None => "stopped at your request".into(),
            };
            run.status = RunStatus::Halted { error, undo: undo_offer(&run.journal, false) };
        }
        (RunStatus::Halted { error, undo }, action) => match (*undo, action) {
            (Undo::Refusal, Action::Answer(true)) => {
                let reason = Some(error.clone());
                run.status = RunStatus::Waiting;
                return Flow::Stay(vec![fx(WizardEffect::Rollback { reason })]);
            }
            (Undo::Asking, Action::Answer(true)) => {
                run.status = RunStatus::Waiting;
                return Flow::Stay(vec![fx(WizardEffect::Rollback { reason: None })]);
            }
            (Undo::Refusal | Undo::Asking, Action::Answer(false)) => *undo = Undo::Available,
            (Undo::Available, Action::Rollback) => *undo = Undo::Asking,
            (_, Action::Cancel | Action::Back | Action::Submit) => {
                state.info(format!(
                    "the journal in {dir} keeps the place: m on {} or {} resumes it (or {} migrate resume --journal {})",
                    run.journal.old_crd,
                    run.journal.new_crd,
                    state.target.shell,
                    crate::cluster::shell::quote_path(&run.journal.dir)
                ));
                return Flow::Close(vec![Effect::LoadRegistrations]);
            }
            _ => {}
        },
        (RunStatus::Done(_), Action::Cancel | Action::Back | Action::Submit) => {
            return Flow::Close(vec![Effect::LoadRegistrations]);
        }
        (RunStatus::Running(_) | RunStatus::Verifying | RunStatus::Waiting, Action::Cancel | Action::Back) => {
            state.info("a step is running; q quits (the journal lets you resume it later)");
        }
        _ => {}
    }
    Flow::Stay(vec![])
}

/// What a stopped run offers: the undo of a refusal, or a roll-back of a forward phase.
fn undo_offer(journal: &Journal, refusal: bool) -> Undo {
    match journal.phase {
        _ if refusal => Undo::Refusal,
        Phase::Forward | Phase::Completed => Undo::Available,
        Phase::Rollback | Phase::RolledBack => Undo::Nothing,
    }
}

/// Runs the next step, or asks first when it is destructive, or verifies at the end.
fn advance(run: &mut Run) -> Vec<Effect> {
    run.progress = None;
    match (&run.journal.next, &run.journal.ask) {
        (None, _) => {
            run.status = RunStatus::Verifying;
            vec![fx(WizardEffect::Verify)]
        }
        (Some(_), Some(question)) => {
            run.status = RunStatus::Asking(question.clone());
            vec![]
        }
        (Some(_), None) => run_next(run),
    }
}

fn run_next(run: &mut Run) -> Vec<Effect> {
    let Some(step) = run.journal.next else { return advance(run) };
    run.status = RunStatus::Running(step);
    run.progress = None;
    vec![fx(WizardEffect::Step)]
}

/// Applies what the wizard's IO sent back.
pub fn apply(state: &mut State, msg: WizardMsg) -> Vec<Effect> {
    if let WizardMsg::Journals { crd: None, found } = msg {
        return offer_at_start(state, found);
    }
    with_wizard(state, |state, w| {
        let effects = match msg {
            WizardMsg::Journals { crd: Some(crd), found } => {
                if w.stage != Stage::Looking || crd != w.crd {
                    return Flow::Stay(vec![]);
                }
                let mut mine = unfinished(found, Some(&crd)).into_iter();
                w.stage = match mine.next() {
                    Some((dir, journal)) => {
                        let others = mine.count();
                        Stage::Resume(Box::new(Found { dir, journal, others, asking_rollback: false }))
                    }
                    None => Stage::Target,
                };
                vec![]
            }
            WizardMsg::Journals { crd: None, .. } => vec![],
            WizardMsg::Composed(result) => {
                if !matches!(w.stage, Stage::Busy(_)) {
                    return Flow::Stay(vec![]);
                }
                match result {
                    Ok(Some(path)) => {
                        w.path.text = path.display().to_string();
                        plan(state, w, path)
                    }
                    Ok(None) => {
                        state.info("cancelled: the file was empty");
                        w.stage = Stage::Target;
                        vec![]
                    }
                    Err(e) => {
                        state.error(e);
                        w.stage = Stage::Target;
                        vec![]
                    }
                }
            }
            WizardMsg::Planned(result) => {
                if !matches!(w.stage, Stage::Busy(_)) {
                    return Flow::Stay(vec![]);
                }
                match result {
                    Ok(plan) => {
                        let lines = report::plan_lines(&plan, report::Driver::Tui);
                        w.scroll = 0;
                        w.stage = Stage::Plan { plan, lines, asking: false, starting: false };
                    }
                    Err(e) => {
                        state.error(format!("cannot plan: {e}"));
                        w.stage = Stage::Target;
                    }
                }
                vec![]
            }
            WizardMsg::Ready(result) => ready(state, w, result),
            WizardMsg::Event(event) => {
                if let Stage::Run(run) = &mut w.stage {
                    on_event(run, event);
                }
                vec![]
            }
            WizardMsg::Stepped { step, result, took, journal } => {
                let Stage::Run(run) = &mut w.stage else { return Flow::Stay(vec![]) };
                run.journal = journal;
                run.progress = None;
                match result {
                    Ok(summary) => {
                        run.log(format!("✓ {step}: {summary} ({:.1}s)", took.as_secs_f64()));
                        advance(run)
                    }
                    Err(failure) => {
                        run.log(format!("✗ {step}: {}", failure.message));
                        let undo = undo_offer(&run.journal, failure.undo);
                        run.status = RunStatus::Halted { error: failure.message, undo };
                        vec![]
                    }
                }
            }
            WizardMsg::Verified(result) => {
                let Stage::Run(run) = &mut w.stage else { return Flow::Stay(vec![]) };
                run.status = match result {
                    Ok(summary) => RunStatus::Done(summary),
                    Err(e) => RunStatus::Halted { error: format!("cannot verify: {e}"), undo: Undo::Nothing },
                };
                vec![]
            }
        };
        Flow::Stay(effects)
    })
}

/// The migration is taken: a new run, or the same run on (its roll-back).
fn ready(state: &mut State, w: &mut Wizard, result: Result<Journal, String>) -> Vec<Effect> {
    match (result, &mut w.stage) {
        (Ok(journal), Stage::Run(run)) => {
            run.log(format!("Rolling back: {}", step_names(&journal)));
            run.journal = journal;
            advance(run)
        }
        (Ok(journal), _) => {
            w.crd = journal.old_crd.clone();
            w.scroll = 0;
            let mut run = Run { journal, status: RunStatus::Waiting, progress: None, log: vec![] };
            let effects = advance(&mut run);
            w.stage = Stage::Run(Box::new(run));
            effects
        }
        (Err(e), Stage::Plan { starting, .. }) => {
            *starting = false;
            state.error(e);
            vec![]
        }
        (Err(e), Stage::Run(run)) => {
            run.status = RunStatus::Halted { error: e, undo: Undo::Nothing };
            vec![]
        }
        (Err(e), _) => {
            state.error(e);
            w.stage = Stage::Target;
            vec![]
        }
    }
}

fn step_names(journal: &Journal) -> String {
    if journal.steps.is_empty() {
        return "nothing to undo".into();
    }
    journal.steps.iter().map(|r| r.step.name()).collect::<Vec<_>>().join(", ")
}

fn on_event(run: &mut Run, event: Event) {
    let running = match run.status {
        RunStatus::Running(step) => step,
        _ => return,
    };
    match event {
        Event::Started { step, total } if step == running => run.progress = total.map(|t| (0, t)),
        Event::Progress { step, done, total } if step == running => run.progress = Some((done, total)),
        Event::Note { message, .. } => run.log(format!("  {message}")),
        _ => {}
    }
}

/// At start: the first unfinished journal, offered over the registrations.
fn offer_at_start(state: &mut State, found: Vec<(PathBuf, JournalState)>) -> Vec<Effect> {
    if state.readonly || state.stack.len() > 1 || state.mode != Mode::Normal {
        return vec![];
    }
    let mut all = unfinished(found, None).into_iter();
    let Some((dir, journal)) = all.next() else { return vec![] };
    let others = all.count();
    let crd = journal.old_crd_name.clone();
    let found = Found { dir, journal, others, asking_rollback: false };
    state.stack.push(Screen::Wizard(Box::new(Wizard::new(&crd, Stage::Resume(Box::new(found))))));
    vec![]
}
