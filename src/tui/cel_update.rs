//! The CEL workbench's steps (`c` on a CRD): opening it, its keys, and what comes back
//! (a sample object, the editor's values). Its screen and evaluation are
//! [`super::cel_workbench`]'s.

use crate::tui::action::{Action, Effect};
use crate::tui::cel_workbench::{CelWorkbench, Sample};
use crate::tui::state::{Screen, State};
use crate::tui::table::scroll_offset;
use kubectl_crd_engine::cel::Verdict;
use serde_json::Value;

/// `c` on a CRD: the workbench on it, and a real object of its kind asked for.
pub(super) fn open(state: &mut State) -> Vec<Effect> {
    let Some(reg) = state.selected_registration() else { return vec![] };
    let bench = CelWorkbench::new(reg.crd.clone());
    let kind = reg.resource.clone();
    let name = bench.name.clone();
    if bench.rules.is_empty() {
        state.error(format!("{name} has no x-kubernetes-validations rules to try"));
        return vec![];
    }
    state.stack.push(Screen::Cel(Box::new(bench)));
    match kind {
        Some(kind) => vec![Effect::LoadSample { crd: name, kind }],
        None => {
            on_sample(state, &name, Ok(None));
            vec![]
        }
    }
}

/// The keys of the workbench; `None`: not its own.
pub(super) fn on_action(state: &mut State, action: Action, height: usize) -> Option<Vec<Effect>> {
    let Screen::Cel(bench) = state.screen_mut() else { return None };
    let move_by = |b: &mut CelWorkbench, delta: isize| {
        b.cursor = b.cursor.saturating_add_signed(delta).min(b.rules.len().saturating_sub(1));
        b.offset = scroll_offset(b.offset, b.cursor, height);
    };
    match action {
        Action::Move(n) => move_by(bench, n),
        Action::Page(n) => move_by(bench, n * height.max(1) as isize),
        Action::Jump(end) => move_by(bench, if end { isize::MAX / 2 } else { isize::MIN / 2 }),
        Action::Enter => {
            let Some(text) = bench.editor_text() else { return Some(vec![]) };
            return Some(vec![Effect::EditCel { crd: bench.name.clone(), rule: bench.cursor, text }]);
        }
        Action::SaveCases => {
            if bench.tried.is_empty() {
                state.error("nothing to save yet: Enter tries a value on the rule");
                return Some(vec![]);
            }
            let (count, dir) = (bench.tried.len(), bench.save_dir());
            let done = format!(
                "saved {count} case{} to {}; run them: kubectl crd test {}",
                if count == 1 { "" } else { "s" },
                dir.display(),
                dir.display()
            );
            return Some(vec![Effect::WriteFiles { files: bench.files(), done }]);
        }
        _ => return None,
    }
    Some(vec![])
}

fn bench_of<'a>(state: &'a mut State, crd: &str) -> Option<&'a mut CelWorkbench> {
    state.stack.iter_mut().find_map(|s| match s {
        Screen::Cel(b) if b.name == crd => Some(b.as_mut()),
        _ => None,
    })
}

/// A real object of the kind (or why there is none).
pub(super) fn on_sample(state: &mut State, crd: &str, result: Result<Option<Value>, String>) {
    let Some(bench) = bench_of(state, crd) else { return };
    bench.sample = match result {
        Ok(Some(v)) => Sample::Found(v),
        Ok(None) => Sample::Absent(format!("no {} yet: values start from the schema", bench.crd.spec.names.plural)),
        Err(e) => Sample::Absent(format!("cannot read an object ({e}): values start from the schema")),
    };
}

/// What the editor saved for `rule`: evaluated, and kept as a case.
pub(super) fn on_edited(state: &mut State, crd: &str, rule: usize, result: Result<String, String>) {
    let Some(bench) = bench_of(state, crd) else { return };
    let said = result.and_then(|text| {
        let tried = bench.try_text(rule, &text)?;
        Ok(match tried.outcome.verdict {
            Verdict::Passed => "the rule passes".to_string(),
            Verdict::Skipped => "the rule is skipped: a transition rule runs on updates only (give oldSelf)".into(),
            Verdict::Failed => {
                format!("the rule fails: {}", tried.outcome.causes.first().map(|c| c.text()).unwrap_or_default())
            }
        })
    });
    match said {
        Ok(text) => state.info(text),
        Err(e) => state.error(e),
    }
}
