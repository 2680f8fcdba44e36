//! The step function: an [`Action`] or a [`Msg`] changes the [`State`] and may ask for IO
//! ([`Effect`]s). Nothing here blocks or touches the terminal or the network.

use crate::tui::action::{Action, Effect};
use crate::tui::schema::{PREVIEW_PENDING, Preview, SchemaTree};
use crate::tui::state::{
    ConflictDialog, DetailScreen, EditPart, Input, Mode, Namespaces, Pane, Refused, ResourceScreen, Screen, State,
    TextScreen,
};
use crate::tui::table::{SortKey, scroll_offset};
use crate::tui::{wizard, yaml};
use serde_json::Value;

pub use super::commands::run_command;
use super::commands::{pick_namespace, typing};
use super::navigation::{load_table, open_log, open_resources, selected_object, set_namespaces};
pub use super::results::apply;
use super::writes::{delete, edit, scale, scale_dialog};

/// Applies one user action.
pub fn update(state: &mut State, action: Action) -> Vec<Effect> {
    if action == Action::Quit {
        // A step cut off half-way is safe (the journal runs it again), but say so first.
        if wizard::update::busy(state) && state.mode != Mode::ConfirmQuit {
            state.mode = Mode::ConfirmQuit;
        } else {
            state.quit = true;
        }
        return vec![];
    }
    // Actions read the view (the row under the cursor): bring it up to date first.
    state.prepare();
    match std::mem::take(&mut state.mode) {
        Mode::Normal => normal(state, action),
        Mode::Command(input) => typing(state, action, input, true),
        Mode::Filter(input) => typing(state, action, input, false),
        Mode::Help { scroll } => {
            state.mode = match action {
                Action::Move(n) => Mode::Help { scroll: scroll.saturating_add_signed(n) },
                Action::Page(n) => Mode::Help { scroll: scroll.saturating_add_signed(n * 10) },
                _ => Mode::Normal,
            };
            vec![]
        }
        Mode::Scale(dialog) => scale_dialog(state, action, dialog),
        Mode::PickNamespace { cursor } => pick_namespace(state, action, cursor),
        Mode::ConfirmQuit => {
            state.quit = action == Action::Answer(true);
            vec![]
        }
        Mode::ConfirmDelete(deletion) => match action {
            Action::Answer(true) => vec![Effect::Delete(deletion)],
            _ => {
                state.info("nothing deleted");
                vec![]
            }
        },
        Mode::Conflict(dialog) => match action {
            Action::Reapply => vec![Effect::Reapply {
                kind: dialog.kind,
                key: dialog.key,
                part: dialog.part,
                base: dialog.base,
                edited: dialog.edited,
                kept: dialog.kept,
            }],
            Action::EditAgain => {
                let error = format!(
                    "409 Conflict: {} changed on the server while you edited it: {}",
                    dialog.key.display(),
                    if dialog.server_changes.is_empty() {
                        "bookkeeping only".into()
                    } else {
                        dialog.server_changes.join("; ")
                    }
                );
                let ConflictDialog { kind, key, part, kept, base, .. } = dialog;
                vec![Effect::EditAgain(Box::new(Refused { kind, key, part, kept, base, error }))]
            }
            Action::Discard => {
                state.info(format!("Edit discarded; your text stays in {}", dialog.kept.display()));
                vec![Effect::LoadObject { kind: dialog.kind, key: dialog.key }]
            }
            _ => {
                state.mode = Mode::Conflict(dialog);
                vec![]
            }
        },
    }
}

fn normal(state: &mut State, action: Action) -> Vec<Effect> {
    if matches!(state.screen(), Screen::Wizard(_)) {
        if action == Action::OpenHelp {
            state.mode = Mode::Help { scroll: 0 };
            return vec![];
        }
        return wizard::update::on_action(state, action);
    }
    let height = state.list_height();
    if let Some(effects) = super::events_update::on_action(state, action, height) {
        return effects;
    }
    if let Some(effects) = super::cel_update::on_action(state, action, height) {
        return effects;
    }
    if let Some(effects) = super::owner_tree_update::on_action(state, action, height) {
        return effects;
    }
    match action {
        Action::Events => super::events_update::open(state),
        Action::FieldOwners => field_owners(state),
        Action::ApplyAs => apply_as(state),
        Action::CelWorkbench => super::cel_update::open(state),
        Action::OwnerTree => super::owner_tree_update::open(state),
        Action::Timeline => super::timeline::toggle(state),
        Action::Back => back(state),
        Action::Enter => enter(state),
        Action::Move(n) => {
            move_by(state, n, height);
            vec![]
        }
        Action::Page(n) => {
            move_by(state, n * height.max(1) as isize, height);
            vec![]
        }
        Action::Jump(end) => {
            move_by(state, if end { isize::MAX / 2 } else { isize::MIN / 2 }, height);
            vec![]
        }
        Action::FocusNext => {
            match state.screen_mut() {
                Screen::Detail(d) => d.focus = d.focus.other(),
                Screen::Resource(r) => r.focus = r.focus.other(),
                _ => {}
            }
            vec![]
        }
        Action::PrinterColumns => {
            if let Screen::Detail(d) = state.screen_mut() {
                d.columns_only = !d.columns_only;
                d.focus = Pane::Left;
                d.scroll = 0;
            }
            vec![]
        }
        Action::Fold(open) => {
            if let Screen::Detail(d) = state.screen_mut() {
                d.focus = Pane::Right;
                d.schema.set_open(Some(open));
            }
            vec![]
        }
        Action::OpenCommand => {
            state.mode = Mode::Command(Input::default());
            vec![]
        }
        Action::OpenFilter => {
            state.mode = Mode::Filter(Input::default());
            vec![]
        }
        Action::OpenHelp => {
            state.mode = Mode::Help { scroll: 0 };
            vec![]
        }
        Action::OpenLog => open_log(state),
        Action::Detail => open_detail(state),
        Action::Delete => delete(state),
        Action::Yaml | Action::Describe => show_text(state, action == Action::Yaml),
        Action::EditSpec => edit(state, EditPart::Spec),
        Action::EditStatus => edit(state, EditPart::Status),
        Action::Scale => scale(state),
        Action::Migrate => wizard::update::open(state),
        Action::Refresh => refresh(state),
        Action::Mark => {
            if let Screen::Resources(r) = state.screen_mut() {
                r.table.toggle_mark();
                r.table.move_by(1, height);
            }
            vec![]
        }
        Action::ClearMarks => {
            if let Screen::Resources(r) = state.screen_mut() {
                r.table.clear_marks();
            }
            vec![]
        }
        Action::SortBy(letter) => sort_by(state, letter),
        Action::Click(y) => {
            click(state, y, height);
            vec![]
        }
        Action::ToggleManaged => {
            // Only texts of an object have managedFields to show (not the field owners).
            if let Screen::Text(t) = state.screen_mut()
                && t.object.is_some()
            {
                t.managed = !t.managed;
                if let Some(obj) = t.object.clone() {
                    t.show(obj);
                }
                let word = if t.managed { "shown" } else { "hidden" };
                state.info(format!("managedFields {word} (M)"));
            }
            vec![]
        }
        Action::NextMatch(forward) => {
            if let Screen::Text(t) = state.screen_mut()
                && t.search.is_some()
                && !t.next_match(forward, false)
            {
                state.error("no line matches the search");
            }
            vec![]
        }
        Action::ToggleWide => {
            if let Screen::Resources(r) = state.screen_mut() {
                r.wide = !r.wide;
            }
            vec![]
        }
        Action::AllNamespaces => {
            if let Some(ns) = state.namespaces.one() {
                state.last_namespace = ns.to_string();
            }
            set_namespaces(state, Namespaces::All)
        }
        Action::Favourite(n) => match state.favourites.get(n).cloned() {
            Some(ns) => set_namespaces(state, Namespaces::One(ns)),
            None => vec![],
        },
        _ => vec![],
    }
}

/// Sorts the resources by the column on screen whose heading starts with `letter`
/// (`P`: NAMESPACE, as k9s has it); the same column again flips the direction.
fn sort_by(state: &mut State, letter: char) -> Vec<Effect> {
    let namespaces = state.namespaces.clone();
    let Screen::Resources(r) = state.screen_mut() else { return vec![] };
    let columns = r.on_screen(&namespaces);
    let found = match letter {
        'P' => columns.iter().find(|(_, k)| *k == SortKey::Namespace),
        _ => columns.iter().find(|(h, k)| *k != SortKey::Namespace && h.starts_with(letter)),
    };
    match found {
        Some((_, key)) => {
            r.table.sort_by(*key);
            vec![]
        }
        None => {
            state.error(format!("no column on screen starts with {letter} (Ctrl-W shows the wide ones)"));
            vec![]
        }
    }
}

/// The first terminal row of a list's rows: below the header, the breadcrumbs, the
/// block's top border and the column headings.
const FIRST_ROW: u16 = 4;

/// A click on terminal row `y` selects the list row drawn there.
fn click(state: &mut State, y: u16, height: usize) {
    let Some(at) = y.checked_sub(FIRST_ROW).map(usize::from).filter(|&at| at < height) else { return };
    let (offset, cursor) = match state.screen() {
        Screen::Registrations => {
            let regs = &state.registrations;
            (scroll_offset(regs.offset, regs.cursor, height), regs.cursor)
        }
        Screen::Resources(r) => (r.table.offset(height), r.table.cursor()),
        _ => return,
    };
    move_by(state, (offset + at) as isize - cursor as isize, height);
}

fn move_by(state: &mut State, n: isize, height: usize) {
    let log_len = state.log.len();
    match state.screen_mut() {
        Screen::Registrations => state.registrations.move_by(n, height),
        Screen::Detail(d) => match d.focus {
            Pane::Left => d.scroll = d.scroll.saturating_add_signed(n),
            Pane::Right => d.schema.move_by(n),
        },
        Screen::Resources(r) => r.table.move_by(n, height),
        Screen::Resource(r) if r.timeline_shown.is_some() => super::timeline::scroll(r, n),
        Screen::Resource(r) => {
            let i = usize::from(r.focus == Pane::Right);
            let part = r.object.as_ref().and_then(|o| o.get(if i == 0 { "spec" } else { "status" }));
            let last = part.map(|v| yaml::to_lines(v).len()).unwrap_or(1).saturating_sub(1);
            r.scroll[i] = r.scroll[i].saturating_add_signed(n).min(last);
        }
        Screen::Text(t) => t.scroll = t.scroll.saturating_add_signed(n).min(t.lines.len().saturating_sub(1)),
        Screen::Log { scroll } => *scroll = scroll.saturating_add_signed(n).min(log_len.saturating_sub(1)),
        Screen::Wizard(_) | Screen::Events(_) | Screen::Cel(_) | Screen::Owners(_) => {}
    }
}

fn back(state: &mut State) -> Vec<Effect> {
    if let Screen::Text(t) = state.screen_mut()
        && t.search.take().is_some()
    {
        return vec![];
    }
    // As in k9s, Esc clears a filter before it leaves the view.
    if let Screen::Resources(r) = state.screen_mut()
        && (r.table.filter().is_some() || r.selector.is_some())
    {
        r.table.set_filter(None);
        if r.selector.take().is_some() {
            return vec![load_table(state)];
        }
        return vec![];
    }
    if state.stack.len() <= 1 {
        if state.registrations.filter.take().is_some() {
            state.registrations.cursor = 0;
        }
        return vec![];
    }
    let popped = state.stack.pop();
    state.message = None;
    match popped {
        Some(Screen::Resources(_)) => vec![Effect::StopWatch],
        _ => vec![],
    }
}

fn enter(state: &mut State) -> Vec<Effect> {
    match state.screen() {
        // As in k9s, Enter on a CRD lists its objects; `i` opens the detail.
        Screen::Registrations => {
            let Some(reg) = state.registrations.current().cloned() else { return vec![] };
            let effects = open_resources(state, &reg);
            if let Some(r) = state.resources_mut() {
                r.fallback_all = true;
            }
            effects
        }
        Screen::Detail(d) => {
            let Some(reg) = state.registrations.find(&d.crd).cloned() else { return vec![] };
            open_resources(state, &reg)
        }
        Screen::Resources(r) => {
            let Some(key) = r.table.current().map(|row| row.key.clone()) else { return vec![] };
            let kind = r.kind.clone();
            state.stack.push(Screen::Resource(ResourceScreen::new(kind.clone(), key.clone())));
            vec![Effect::LoadObject { kind, key }]
        }
        Screen::Resource(_)
        | Screen::Text(_)
        | Screen::Wizard(_)
        | Screen::Log { .. }
        | Screen::Events(_)
        | Screen::Cel(_)
        | Screen::Owners(_) => vec![],
    }
}

/// The detail (names, conditions, versions, schema) of the selected registration.
fn open_detail(state: &mut State) -> Vec<Effect> {
    if let Some(reg) = state.registrations.current() {
        let detail = DetailScreen {
            crd: reg.name().to_string(),
            schema: SchemaTree::new(reg),
            preview: Preview::Loading,
            columns_only: false,
            focus: Pane::Left,
            scroll: 0,
        };
        let effect = Effect::LoadColumnPreview(Box::new(reg.crd.clone()));
        state.stack.push(Screen::Detail(detail));
        return vec![effect];
    }
    vec![]
}

fn refresh(state: &mut State) -> Vec<Effect> {
    match state.screen() {
        Screen::Registrations => vec![Effect::LoadRegistrations],
        Screen::Detail(d) => {
            let preview = state.registrations.find(&d.crd).map(|r| Effect::LoadColumnPreview(Box::new(r.crd.clone())));
            std::iter::once(Effect::LoadRegistrations).chain(preview).collect()
        }
        Screen::Resources(_) => vec![load_table(state)],
        Screen::Resource(r) => vec![Effect::LoadObject { kind: r.kind.clone(), key: r.key.clone() }],
        Screen::Text(_)
        | Screen::Wizard(_)
        | Screen::Log { .. }
        | Screen::Events(_)
        | Screen::Cel(_)
        | Screen::Owners(_) => vec![],
    }
}

fn show_text(state: &mut State, as_yaml: bool) -> Vec<Effect> {
    let word = if as_yaml { "yaml" } else { "describe" };
    let text = |title: String, obj: &Value| TextScreen::new(title, as_yaml, Some(obj.clone()));
    let mut effects = vec![];
    let screen = match state.screen() {
        Screen::Registrations | Screen::Detail(_) => {
            let Some(reg) = state.selected_registration() else { return vec![] };
            let mut obj = serde_json::to_value(&reg.crd).unwrap_or_default();
            if let Some(m) = obj.as_object_mut() {
                m.insert("apiVersion".into(), "apiextensions.k8s.io/v1".into());
                m.insert("kind".into(), "CustomResourceDefinition".into());
            }
            let mut screen = text(format!("{word} customresourcedefinition/{}", reg.name()), &obj);
            let shown = match state.screen() {
                Screen::Detail(d) => d.preview.describe_lines(),
                _ => None,
            };
            match shown {
                _ if as_yaml => {}
                Some(lines) => screen.lines.extend(lines),
                // Read now: the describe text gets it when it comes (see `results`).
                None => {
                    screen.lines.push(PREVIEW_PENDING.into());
                    effects.push(Effect::LoadColumnPreview(Box::new(reg.crd.clone())));
                }
            }
            screen
        }
        Screen::Resource(r) if r.object.is_some() => {
            text(format!("{word} {}/{}", r.kind.plural, r.key.display()), r.object.as_ref().unwrap_or(&Value::Null))
        }
        Screen::Resources(_) | Screen::Resource(_) => {
            let Some((kind, key)) = selected_object(state) else { return vec![] };
            let title = format!("{word} {}/{}", kind.plural, key.display());
            let mut t = TextScreen::new(title, as_yaml, None);
            t.pending = Some(key.clone());
            state.stack.push(Screen::Text(t));
            return vec![Effect::LoadObject { kind, key }];
        }
        Screen::Text(_)
        | Screen::Wizard(_)
        | Screen::Log { .. }
        | Screen::Events(_)
        | Screen::Cel(_)
        | Screen::Owners(_) => {
            return vec![];
        }
    };
    state.stack.push(Screen::Text(screen));
    effects
}

/// `M` on a resource: its field owners, one line per field and owner, as a text view
/// (scrolled and searched as the others are).
/// `A`: the editor on an apply document for the object, then the dry run's verdict.
fn apply_as(state: &mut State) -> Vec<Effect> {
    let Screen::Resource(r) = state.screen() else { return vec![] };
    vec![Effect::ApplyAs { kind: r.kind.clone(), key: r.key.clone() }]
}

fn field_owners(state: &mut State) -> Vec<Effect> {
    let Screen::Resource(r) = state.screen() else { return vec![] };
    let Some(obj) = &r.object else {
        state.error("the object is not read yet");
        return vec![];
    };
    let owners = crate::cluster::field_owners::field_owners(obj);
    let title = format!("field-owners {}/{}", r.kind.plural, r.key.display());
    let rows: Vec<[&str; 5]> =
        owners.iter().map(|o| [o.path.as_str(), &o.manager, &o.operation, o.subresource.as_str(), &o.time]).collect();
    let heading = ["PATH", "MANAGER", "OPERATION", "SUBRESOURCE", "TIME"];
    let mut widths = heading.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: [&str; 5]| {
        let padded: Vec<String> = cells.iter().zip(widths).map(|(c, w)| format!("{c:<w$}")).collect();
        padded.join("  ").trim_end().to_string()
    };
    let mut text = TextScreen::new(title, false, None);
    text.lines = std::iter::once(line(heading)).chain(rows.into_iter().map(line)).collect();
    if owners.is_empty() {
        text.lines.push("no managedFields: the server records no owners for this object".into());
    }
    state.stack.push(Screen::Text(text));
    vec![]
}

#[cfg(test)]
#[path = "update_tests.rs"]
mod tests;
