//! The wizard's step function driven by keys and messages, as the runtime would: which
//! effects each key asks for, the question before destructive steps, the undo after a
//! refusal, resuming, and quitting while a step runs. Journals are real ones on disk,
//! opened through the library, so the questions are the library's.

use super::*;
use crate::migrate::progress::Event;
use crate::tui::action::{Action, Effect, Msg};
use crate::tui::fixtures::{self, JOURNALS, press, state, type_keys};
use crate::tui::state::{Level, Mode, Screen, State};
use crate::tui::update::apply;
use crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyModifiers};
use std::path::Path;

const WIDGETS: &str = "widgets.demo.example.com";

fn wizard(s: &State) -> &Wizard {
    match s.screen() {
        Screen::Wizard(w) => w,
        other => panic!("expected the wizard, got {}", other.name()),
    }
}

fn run(s: &State) -> &Run {
    match &wizard(s).stage {
        Stage::Run(r) => r,
        other => panic!("expected a run, got {other:?}"),
    }
}

fn msg(s: &mut State, m: WizardMsg) -> Vec<Effect> {
    apply(s, Msg::Wizard(m))
}

fn wfx(e: WizardEffect) -> Effect {
    Effect::Wizard(e)
}

fn ctrl(s: &mut State, c: char) -> Vec<Effect> {
    crate::tui::on_event(s, TermEvent::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)))
}

/// `m` on the widgets, no journal found: the path line.
fn on_target(s: &mut State) {
    type_keys(s, "G");
    let effects = type_keys(s, "m");
    assert_eq!(effects, vec![wfx(WizardEffect::FindJournals { root: JOURNALS.into(), crd: Some(WIDGETS.into()) })]);
    assert_eq!(wizard(s).stage, Stage::Looking);
    msg(s, WizardMsg::Journals { crd: Some(WIDGETS.into()), found: vec![] });
    assert_eq!(wizard(s).stage, Stage::Target);
}

/// A journal of the fixture plan, `done` steps in, taken by the wizard.
fn running(s: &mut State, dir: &Path, done: usize) -> Vec<Effect> {
    on_target(s);
    msg(s, WizardMsg::Ready(Ok(Journal::of(&fixtures::migration(dir, done, false)))))
}

/// The step after `done` failed with `message` (recorded as started in the journal).
fn fail(s: &mut State, dir: &Path, done: usize, message: &str, undo: bool) -> Failure {
    let failure = Failure { message: message.into(), undo };
    let journal = Journal::of(&fixtures::migration(dir, done, true));
    let step = journal.next.expect("a step failed");
    msg(s, WizardMsg::Stepped { step, result: Err(failure.clone()), took: Duration::ZERO, journal });
    failure
}

#[test]
fn m_opens_the_wizard_on_the_selected_crd_and_plans_the_typed_file() {
    let mut s = state();
    on_target(&mut s);
    assert_eq!(wizard(&s).crd, WIDGETS);
    // Keys type into the path: q, y, n and r are letters here.
    type_keys(&mut s, "/tmp/new-qynr.yaml");
    assert!(!s.quit);
    let effects = press(&mut s, KeyCode::Enter);
    assert_eq!(
        effects,
        vec![wfx(WizardEffect::Plan { from: WIDGETS.into(), to: "/tmp/new-qynr.yaml".into(), controllers: vec![] })]
    );
    assert!(matches!(&wizard(&s).stage, Stage::Busy(what) if what.contains("nothing changes")));
    msg(&mut s, WizardMsg::Planned(Err("cannot read it".into())));
    assert_eq!(wizard(&s).stage, Stage::Target, "back to the path, kept");
    assert_eq!(wizard(&s).path.text, "/tmp/new-qynr.yaml");
    assert!(matches!(&s.message, Some((Level::Error, m)) if m.contains("cannot read it")));
    // Esc leaves the wizard and lets go of any migration.
    assert_eq!(press(&mut s, KeyCode::Esc), vec![wfx(WizardEffect::Close)]);
    assert_eq!(s.screen().name(), "registrations");
}

#[test]
fn m_works_from_the_detail_screen_and_not_when_read_only() {
    let mut s = state();
    type_keys(&mut s, "Gi");
    assert_eq!(s.screen().name(), "detail");
    assert!(!type_keys(&mut s, "m").is_empty());
    assert_eq!(wizard(&s).crd, WIDGETS);

    let mut s = state();
    s.readonly = true;
    assert!(type_keys(&mut s, "m").is_empty());
    assert_eq!(s.screen().name(), "registrations");
    assert!(matches!(&s.message, Some((Level::Error, m)) if m.contains("read-only")));
}

#[test]
fn ctrl_e_composes_the_new_crd_from_the_current_one_and_plans_it() {
    let mut s = state();
    on_target(&mut s);
    let effects = ctrl(&mut s, 'e');
    let [Effect::Wizard(WizardEffect::Compose { crd, text })] = effects.as_slice() else { panic!("{effects:?}") };
    assert_eq!(crd, WIDGETS);
    assert!(text.starts_with("# The new CustomResourceDefinition"), "{text}");
    assert!(text.contains("kind: Widget") && text.contains("group: demo.example.com"), "{text}");
    let top_level_status = text.lines().any(|l| l.starts_with("status:"));
    assert!(!top_level_status && !text.contains("creationTimestamp"), "server fields stripped:\n{text}");
    let effects = msg(&mut s, WizardMsg::Composed(Ok(Some("/tmp/edits/new.yaml".into()))));
    assert_eq!(
        effects,
        vec![wfx(WizardEffect::Plan { from: WIDGETS.into(), to: "/tmp/edits/new.yaml".into(), controllers: vec![] })]
    );
    msg(&mut s, WizardMsg::Planned(Err("x".into())));
    ctrl(&mut s, 'e');
    msg(&mut s, WizardMsg::Composed(Ok(None)));
    assert_eq!(wizard(&s).stage, Stage::Target, "an empty file cancels");
}

#[test]
fn a_blocked_plan_never_starts_and_a_clean_one_asks_first() {
    let mut s = state();
    on_target(&mut s);
    type_keys(&mut s, "new.yaml");
    press(&mut s, KeyCode::Enter);
    msg(&mut s, WizardMsg::Planned(Ok(Box::new(fixtures::plan(&["the new schema refuses 3 object(s)"])))));
    let Stage::Plan { lines, .. } = &wizard(&s).stage else { panic!() };
    assert!(lines.iter().any(|l| l == "  - the new schema refuses 3 object(s)"), "the CLI's plan lines: {lines:?}");
    for keys in ["\n", "y"] {
        let effects = if keys == "\n" { press(&mut s, KeyCode::Enter) } else { type_keys(&mut s, keys) };
        assert!(effects.is_empty());
        assert!(matches!(&wizard(&s).stage, Stage::Plan { asking: false, .. }));
        assert!(matches!(&s.message, Some((Level::Error, m)) if m.contains("cannot start")));
    }

    press(&mut s, KeyCode::Esc);
    msg(&mut s, WizardMsg::Planned(Ok(Box::new(fixtures::plan(&[])))));
    assert!(matches!(&wizard(&s).stage, Stage::Target), "a plan arrives only while one is awaited");
    press(&mut s, KeyCode::Enter);
    msg(&mut s, WizardMsg::Planned(Ok(Box::new(fixtures::plan(&[])))));
    assert!(press(&mut s, KeyCode::Enter).is_empty());
    assert!(matches!(&wizard(&s).stage, Stage::Plan { asking: true, .. }));
    assert!(type_keys(&mut s, "n").is_empty(), "no: nothing changes");
    assert!(matches!(&wizard(&s).stage, Stage::Plan { asking: false, .. }));
    press(&mut s, KeyCode::Enter);
    let effects = type_keys(&mut s, "y");
    assert_eq!(effects, vec![wfx(WizardEffect::Start { plan: Box::new(fixtures::plan(&[])), root: JOURNALS.into() })]);
    assert!(matches!(&wizard(&s).stage, Stage::Plan { starting: true, .. }));
    msg(&mut s, WizardMsg::Ready(Err("a migration is in progress".into())));
    assert!(matches!(&wizard(&s).stage, Stage::Plan { starting: false, .. }), "the plan stays to read");
    press(&mut s, KeyCode::Esc);
    assert_eq!(wizard(&s).stage, Stage::Target, "Esc goes back a stage");
}

#[test]
fn safe_steps_run_at_once_and_destructive_ones_wait_for_yes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut s = state();
    // Fresh journal: stop-controllers has no controller to stop, so nothing to ask.
    let effects = running(&mut s, dir.path(), 0);
    assert_eq!(effects, vec![wfx(WizardEffect::Step)]);
    assert_eq!(run(&s).status, RunStatus::Running(Step::StopControllers));

    // Validated: the next step deletes the old objects, so the library's question is up.
    let dir = tempfile::tempdir().expect("tempdir");
    let mut s = state();
    let effects = running(&mut s, dir.path(), 4);
    assert!(effects.is_empty(), "nothing runs before the answer: {effects:?}");
    let RunStatus::Asking(q) = &run(&s).status else { panic!("{:?}", run(&s).status) };
    assert!(q.starts_with("Delete the 180 widgets.demo.example.com objects"), "{q}");
    assert!(!type_keys(&mut s, "x").iter().any(|e| *e == wfx(WizardEffect::Step)));
    assert_eq!(type_keys(&mut s, "y"), vec![wfx(WizardEffect::Step)]);
    assert_eq!(run(&s).status, RunStatus::Running(Step::DeleteOldData));

    // No: the run stops, the journal keeps the place, a roll-back is on offer.
    let dir = tempfile::tempdir().expect("tempdir");
    let mut s = state();
    running(&mut s, dir.path(), 4);
    assert!(type_keys(&mut s, "n").is_empty());
    let RunStatus::Halted { error, undo: Undo::Available } = &run(&s).status else { panic!("{:?}", run(&s).status) };
    assert!(error.contains("stopped before delete-old-data") && error.contains(&dir.path().display().to_string()));
}

#[test]
fn each_step_s_result_moves_the_run_on_from_the_journal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut s = state();
    running(&mut s, dir.path(), 2);
    assert_eq!(run(&s).status, RunStatus::Running(Step::CreateNewCrd));
    msg(&mut s, WizardMsg::Event(Event::Started { step: Step::CreateNewCrd, total: Some(180) }));
    assert_eq!(run(&s).progress, Some((0, 180)));
    msg(&mut s, WizardMsg::Event(Event::Progress { step: Step::CreateNewCrd, done: 90, total: 180 }));
    msg(&mut s, WizardMsg::Event(Event::Progress { step: Step::Backup, done: 1, total: 2 }));
    assert_eq!(run(&s).progress, Some((90, 180)), "events of another step are not this one's");
    msg(&mut s, WizardMsg::Event(Event::Note { step: Step::CreateNewCrd, message: "waited".into() }));

    let journal = Journal::of(&fixtures::migration(dir.path(), 3, false));
    let effects = msg(
        &mut s,
        WizardMsg::Stepped {
            step: Step::CreateNewCrd,
            result: Ok("created".into()),
            took: Duration::from_millis(1500),
            journal,
        },
    );
    assert_eq!(effects, vec![wfx(WizardEffect::Step)], "validate is safe: it runs at once");
    assert_eq!(run(&s).status, RunStatus::Running(Step::Validate));
    assert_eq!(run(&s).progress, None);
    assert!(run(&s).log.ends_with(&["  waited".to_string(), "✓ create-new-crd: created (1.5s)".to_string()]));

    // The phase is over: verify, then the summary.
    let journal = Journal::of(&fixtures::migration(dir.path(), 10, false));
    assert_eq!((journal.phase, journal.next), (Phase::Completed, None));
    let effects = msg(
        &mut s,
        WizardMsg::Stepped { step: Step::Validate, result: Ok("ok".into()), took: Duration::ZERO, journal },
    );
    assert_eq!(effects, vec![wfx(WizardEffect::Verify)]);
    assert!(crate::tui::update::update(&mut s, Action::Cancel).is_empty(), "Esc does not leave a running step");
    msg(&mut s, WizardMsg::Verified(Ok(Summary { lines: vec!["  journal and backup: x".into()], differences: 0 })));
    assert!(matches!(run(&s).status, RunStatus::Done(Summary { differences: 0, .. })));
    assert_eq!(press(&mut s, KeyCode::Esc), vec![Effect::LoadRegistrations, wfx(WizardEffect::Close)]);
    assert_eq!(s.screen().name(), "registrations");
}

#[test]
fn a_refusal_offers_the_undo_which_runs_without_asking() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut s = state();
    running(&mut s, dir.path(), 3);
    let failure = fail(&mut s, dir.path(), 3, "refused: 3 objects would lose fields. Nothing was deleted", true);
    assert!(matches!(&run(&s).status, RunStatus::Halted { undo: Undo::Refusal, .. }));
    assert!(run(&s).log.last().is_some_and(|l| l.starts_with("✗ validate: refused")));
    let effects = type_keys(&mut s, "y");
    assert_eq!(effects, vec![wfx(WizardEffect::Rollback { reason: Some(failure.message.clone()) })]);
    assert_eq!(run(&s).status, RunStatus::Waiting);
    assert!(wizard(&s).busy());

    // The library's undo steps for a refusal: remove the validation and new CRDs, no questions.
    let mut m = fixtures::migration(dir.path(), 3, true);
    m.switch_to_rollback(Some(failure.message)).expect("rollback");
    let journal = Journal::of(&m);
    assert_eq!(journal.phase, Phase::Rollback);
    assert!(journal.steps.iter().any(|r| r.step == Step::RemoveNewCrd), "{:?}", journal.steps);
    let effects = msg(&mut s, WizardMsg::Ready(Ok(journal)));
    assert_eq!(effects, vec![wfx(WizardEffect::Step)], "the undo asks nothing, as the CLI's");
    assert!(run(&s).log.iter().any(|l| l.starts_with("Rolling back: ")));
}

#[test]
fn other_failures_keep_the_journal_and_roll_back_only_when_asked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut s = state();
    running(&mut s, dir.path(), 6);
    fail(&mut s, dir.path(), 6, "the server is gone", false);
    assert!(matches!(&run(&s).status, RunStatus::Halted { undo: Undo::Available, .. }));
    assert!(type_keys(&mut s, "y").is_empty(), "y alone does not roll back");
    type_keys(&mut s, "r");
    assert!(matches!(&run(&s).status, RunStatus::Halted { undo: Undo::Asking, .. }));
    type_keys(&mut s, "n");
    assert!(matches!(&run(&s).status, RunStatus::Halted { undo: Undo::Available, .. }));
    type_keys(&mut s, "r");
    assert_eq!(type_keys(&mut s, "y"), vec![wfx(WizardEffect::Rollback { reason: None })]);

    let mut s = state();
    running(&mut s, dir.path(), 6);
    fail(&mut s, dir.path(), 6, "the server is gone", false);
    assert_eq!(press(&mut s, KeyCode::Esc), vec![Effect::LoadRegistrations, wfx(WizardEffect::Close)]);
    assert!(matches!(&s.message, Some((Level::Info, m)) if m.contains("keeps the place") && m.contains("m on")));
}

#[test]
fn an_unfinished_journal_of_the_crd_is_offered_for_resuming() {
    let dir = tempfile::tempdir().expect("tempdir");
    let unfinished = fixtures::migration(&dir.path().join("a"), 5, true).state().clone();
    let mut finished = fixtures::migration(&dir.path().join("b"), 10, false).state().clone();
    assert!(finished.phase.finished());
    let mut other = unfinished.clone();
    other.old_crd_name = "databases.demo.example.com".into();
    let found = vec![
        (dir.path().join("b"), finished.clone()),
        (dir.path().join("c"), other),
        (dir.path().join("a"), unfinished.clone()),
    ];

    let mut s = state();
    type_keys(&mut s, "Gm");
    msg(&mut s, WizardMsg::Journals { crd: Some(WIDGETS.into()), found: found.clone() });
    let Stage::Resume(offer) = &wizard(&s).stage else { panic!("{:?}", wizard(&s).stage) };
    assert_eq!((offer.dir.clone(), offer.others), (dir.path().join("a"), 0));
    assert_eq!(type_keys(&mut s, "y"), vec![wfx(WizardEffect::Open { dir: dir.path().join("a"), rollback: false })]);

    let mut s = state();
    type_keys(&mut s, "Gm");
    msg(&mut s, WizardMsg::Journals { crd: Some(WIDGETS.into()), found: found.clone() });
    assert!(type_keys(&mut s, "r").is_empty(), "r asks first");
    assert_eq!(type_keys(&mut s, "y"), vec![wfx(WizardEffect::Open { dir: dir.path().join("a"), rollback: true })]);

    let mut s = state();
    type_keys(&mut s, "Gm");
    msg(&mut s, WizardMsg::Journals { crd: Some(WIDGETS.into()), found: found.clone() });
    type_keys(&mut s, "n");
    assert_eq!(wizard(&s).stage, Stage::Target, "n starts a new migration");

    // Finished journals, and other CRDs' ones, are not offered.
    finished.old_crd_name = WIDGETS.into();
    let mut s = state();
    type_keys(&mut s, "Gm");
    msg(&mut s, WizardMsg::Journals { crd: Some(WIDGETS.into()), found: vec![(dir.path().join("b"), finished)] });
    assert_eq!(wizard(&s).stage, Stage::Target);
}

#[test]
fn at_start_an_unfinished_journal_is_offered_unless_read_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let unfinished = fixtures::migration(dir.path(), 5, true).state().clone();
    let mut s = state();
    assert_eq!(update::startup(&s), vec![wfx(WizardEffect::FindJournals { root: JOURNALS.into(), crd: None })]);
    msg(&mut s, WizardMsg::Journals { crd: None, found: vec![(dir.path().to_path_buf(), unfinished.clone())] });
    assert_eq!(wizard(&s).crd, WIDGETS, "the journal's CRD");
    assert!(matches!(&wizard(&s).stage, Stage::Resume(f) if f.dir == dir.path()));
    press(&mut s, KeyCode::Esc);
    assert_eq!(s.screen().name(), "registrations", "Esc declines");

    let mut s = state();
    s.readonly = true;
    assert!(update::startup(&s).is_empty());
    msg(&mut s, WizardMsg::Journals { crd: None, found: vec![(dir.path().to_path_buf(), unfinished)] });
    assert_eq!(s.screen().name(), "registrations");
}

#[test]
fn quitting_while_a_step_runs_asks_first() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut s = state();
    running(&mut s, dir.path(), 0);
    assert!(wizard(&s).busy());
    type_keys(&mut s, "q");
    assert!(!s.quit);
    assert_eq!(s.mode, Mode::ConfirmQuit);
    type_keys(&mut s, "n");
    assert!(!s.quit && s.mode == Mode::Normal);
    ctrl(&mut s, 'c');
    assert_eq!(s.mode, Mode::ConfirmQuit);
    ctrl(&mut s, 'c');
    assert!(s.quit, "a second Ctrl-C quits");

    let mut s = state();
    running(&mut s, dir.path(), 4);
    assert!(!wizard(&s).busy(), "waiting for an answer, nothing runs");
    type_keys(&mut s, "q");
    assert!(s.quit);
}

#[test]
fn stale_results_and_events_change_nothing() {
    let mut s = state();
    let before = format!("{:?}", s.stack);
    msg(&mut s, WizardMsg::Planned(Ok(Box::new(fixtures::plan(&[])))));
    msg(&mut s, WizardMsg::Event(Event::Started { step: Step::Backup, total: Some(3) }));
    msg(&mut s, WizardMsg::Verified(Ok(Summary { lines: vec![], differences: 0 })));
    assert_eq!(format!("{:?}", s.stack), before);
}

#[test]
fn the_plan_scrolls_from_its_top_and_the_log_back_from_its_end_within_their_lines() {
    let mut s = state();
    on_target(&mut s);
    type_keys(&mut s, "new.yaml");
    press(&mut s, KeyCode::Enter);
    msg(&mut s, WizardMsg::Planned(Ok(Box::new(fixtures::plan(&[])))));
    let Stage::Plan { lines, .. } = &wizard(&s).stage else { panic!() };
    let last = lines.len() - 1;
    type_keys(&mut s, "jj");
    assert_eq!(wizard(&s).scroll, 2);
    type_keys(&mut s, "G");
    assert_eq!(wizard(&s).scroll, last);
    type_keys(&mut s, "jk");
    assert_eq!(wizard(&s).scroll, last - 1, "k comes back at once from the bottom");

    let dir = tempfile::tempdir().expect("tempdir");
    let mut s = state();
    running(&mut s, dir.path(), 0);
    for i in 0..5 {
        msg(&mut s, WizardMsg::Event(Event::Note { step: Step::StopControllers, message: format!("note {i}") }));
    }
    type_keys(&mut s, "kk");
    assert_eq!(wizard(&s).scroll, 2, "k goes back into older lines");
    type_keys(&mut s, "G");
    assert_eq!(wizard(&s).scroll, 0, "G is the newest line");
    type_keys(&mut s, "g");
    assert_eq!(wizard(&s).scroll, 4);
}

/// On the first screen with `path` typed, the cursor moved on to the Controllers field.
fn at_controllers(s: &mut State, path: &str) {
    on_target(s);
    type_keys(s, path);
    press(s, KeyCode::Tab);
    assert_eq!(wizard(s).field, Field::Controllers);
}

#[test]
fn tab_and_arrows_switch_between_the_path_and_the_controllers() {
    let mut s = state();
    at_controllers(&mut s, "new.yaml");
    type_keys(&mut s, "ops/op");
    press(&mut s, KeyCode::Up);
    assert_eq!(wizard(&s).field, Field::Path);
    press(&mut s, KeyCode::Backspace);
    press(&mut s, KeyCode::Down);
    type_keys(&mut s, "s");
    press(&mut s, KeyCode::BackTab);
    assert_eq!(wizard(&s).field, Field::Path);
    assert_eq!((wizard(&s).path.text.as_str(), wizard(&s).controllers.text.as_str()), ("new.yam", "ops/ops"));
}

#[test]
fn typed_controllers_reach_the_plan_as_the_cli_passes_them() {
    let mut s = state();
    at_controllers(&mut s, "new.yaml");
    type_keys(&mut s, "ops/crontab-operator, demo/widgets/ctl  ops/x,");
    let effects = press(&mut s, KeyCode::Enter);
    let controllers = vec!["ops/crontab-operator".to_string(), "demo/widgets/ctl".into(), "ops/x".into()];
    assert_eq!(effects, vec![wfx(WizardEffect::Plan { from: WIDGETS.into(), to: "new.yaml".into(), controllers })]);

    // Back from the plan, the plan's advice is the wizard's, not the CLI's flags.
    msg(&mut s, WizardMsg::Planned(Ok(Box::new(fixtures::plan(&[])))));
    let Stage::Plan { lines, .. } = &wizard(&s).stage else { panic!() };
    assert!(lines.iter().any(|l| l.contains("the wizard's Controllers field")), "{lines:?}");
    assert!(!lines.iter().any(|l| l.contains("--controller")), "{lines:?}");
}

#[test]
fn an_invalid_controller_is_refused_with_a_message_and_nothing_is_planned() {
    let mut s = state();
    at_controllers(&mut s, "new.yaml");
    type_keys(&mut s, "ops/ok,a/b/c/d ops/");
    press(&mut s, KeyCode::Up);
    let effects = press(&mut s, KeyCode::Enter);
    assert_eq!(effects, vec![]);
    assert_eq!(wizard(&s).stage, Stage::Target);
    assert_eq!(wizard(&s).field, Field::Controllers, "the cursor goes to what is wrong");
    let Some((Level::Error, m)) = &s.message else { panic!("{:?}", s.message) };
    assert!(m.contains("\"a/b/c/d\"") && m.contains("\"ops/\"") && !m.contains("ops/ok"), "{m}");
    assert!(m.contains("NAMESPACE/RESOURCE/NAME"), "{m}");

    // The same after the editor: the composed file waits for the controllers.
    ctrl(&mut s, 'e');
    let effects = msg(&mut s, WizardMsg::Composed(Ok(Some("/tmp/edits/new.yaml".into()))));
    assert_eq!(effects, vec![]);
    assert_eq!(wizard(&s).stage, Stage::Target);
    assert_eq!(wizard(&s).path.text, "/tmp/edits/new.yaml");
}

#[test]
fn the_controllers_field_splits_on_commas_and_spaces_and_checks_the_cli_syntax() {
    assert_eq!(controllers(""), Ok(vec![]));
    assert_eq!(controllers(" a/b ,c/d/e\td/f "), Ok(vec!["a/b".into(), "c/d/e".into(), "d/f".into()]));
    for bad in ["a", "/b", "a/", "a//c", "a/b/c/d"] {
        assert!(controllers(bad).is_err(), "{bad}");
    }
}
