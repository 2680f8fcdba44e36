//! The handlers of the keys that write: edit, scale and delete ask for the IO as
//! [`Effect`]s after the read-only check and the questions; the runtime performs them.

use crate::tui::action::{Action, Effect};
use crate::tui::state::{Deletion, EditPart, Mode, ScaleDialog, Screen, State};

use super::navigation::selected_object;

pub(super) fn writes_allowed(state: &mut State) -> bool {
    if state.readonly {
        state.error("read-only: writes are off (started with --readonly)");
    }
    !state.readonly
}

pub(super) fn edit(state: &mut State, part: EditPart) -> Vec<Effect> {
    let Some((kind, key)) = selected_object(state) else { return vec![] };
    if !writes_allowed(state) {
        return vec![];
    }
    // Without /status the status is an ordinary field: both keys edit the whole object.
    let part = if kind.status { part } else { EditPart::Object };
    if part == EditPart::Object {
        state.info(format!(
            "{} have no status subresource: .status is an ordinary field, edited and saved with the object",
            kind.plural
        ));
    }
    vec![Effect::Edit { kind, key, part }]
}

/// Asks before deleting the marked or selected objects, or the selected CRD with the
/// custom resources that go with it.
pub(super) fn delete(state: &mut State) -> Vec<Effect> {
    let deletion = match state.screen() {
        Screen::Registrations | Screen::Detail(_) => {
            let Some(reg) = state.selected_registration() else { return vec![] };
            let plural = reg.crd.spec.names.plural.clone();
            Deletion::Crd { name: reg.name().to_string(), plural, count: reg.count() }
        }
        Screen::Resources(r) => Deletion::Objects { kind: r.kind.clone(), keys: r.table.targets() },
        Screen::Resource(r) => Deletion::Objects { kind: r.kind.clone(), keys: vec![r.key.clone()] },
        _ => return vec![],
    };
    if matches!(&deletion, Deletion::Objects { keys, .. } if keys.is_empty()) || !writes_allowed(state) {
        return vec![];
    }
    state.mode = Mode::ConfirmDelete(deletion);
    vec![]
}

pub(super) fn scale(state: &mut State) -> Vec<Effect> {
    let (kind, targets) = match state.screen() {
        Screen::Resources(r) => (r.kind.clone(), r.table.targets()),
        Screen::Resource(r) => (r.kind.clone(), vec![r.key.clone()]),
        _ => return vec![],
    };
    if targets.is_empty() || !writes_allowed(state) {
        return vec![];
    }
    if !kind.scale {
        state.error(format!("{} have no scale subresource", kind.plural));
        return vec![];
    }
    let effects = match targets.as_slice() {
        [one] => vec![Effect::LoadScale { kind: kind.clone(), key: one.clone() }],
        _ => vec![],
    };
    state.mode = Mode::Scale(ScaleDialog { kind, targets, info: None, typed: String::new(), step: 0 });
    effects
}

pub(super) fn scale_dialog(state: &mut State, action: Action, mut dialog: ScaleDialog) -> Vec<Effect> {
    match action {
        Action::Cancel | Action::Back => return vec![],
        Action::Type(c) if dialog.typed.len() < 9 => {
            dialog.typed.push(c);
            dialog.step = 0;
        }
        Action::Backspace => {
            dialog.typed.pop();
        }
        Action::Step(n) => dialog.step = dialog.step.saturating_add(n),
        Action::Submit => {
            let Some(change) = dialog.change() else {
                state.error("type a number of replicas, or step with + and -");
                state.mode = Mode::Scale(dialog);
                return vec![];
            };
            return vec![Effect::SetScale { kind: dialog.kind, targets: dialog.targets, change }];
        }
        _ => {}
    }
    state.mode = Mode::Scale(dialog);
    vec![]
}
