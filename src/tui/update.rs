//! The step function: an [`Action`] or a [`Msg`] changes the [`State`] and may ask for IO
//! ([`Effect`]s). Nothing here blocks or touches the terminal or the network.

use crate::cluster::discovery::ResourceType;
use crate::tui::action::{Action, Effect};
use crate::tui::describe::describe;
use crate::tui::model::Registration;
use crate::tui::schema::SchemaTree;
use crate::tui::state::{
    ConflictDialog, Deletion, DetailScreen, EditPart, Input, Mode, Namespaces, Pane, Refused, ResourceScreen,
    ResourcesScreen, ScaleDialog, Screen, State, TextScreen,
};
use crate::tui::table::{ObjKey, ResourceTable};
use crate::tui::{wizard, yaml};
use regex::Regex;
use serde_json::Value;

pub use super::results::apply;

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
    match action {
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
        Action::Sort(column) => {
            if let Screen::Resources(r) = state.screen_mut() {
                r.table.sort_by(column);
            }
            vec![]
        }
        Action::ToggleAllNamespaces => {
            let next = match &state.namespaces {
                Namespaces::All => Namespaces::One(state.last_namespace.clone()),
                Namespaces::One(ns) => {
                    state.last_namespace = ns.clone();
                    Namespaces::All
                }
            };
            set_namespaces(state, next)
        }
        _ => vec![],
    }
}

/// The log of every message, on top of the screen (once: `L` on the log does nothing).
pub(super) fn open_log(state: &mut State) -> Vec<Effect> {
    if !matches!(state.screen(), Screen::Log { .. }) {
        state.stack.push(Screen::Log { scroll: 0 });
    }
    vec![]
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
        Screen::Resource(r) => {
            let i = usize::from(r.focus == Pane::Right);
            let part = r.object.as_ref().and_then(|o| o.get(if i == 0 { "spec" } else { "status" }));
            let last = part.map(|v| yaml::to_lines(v).len()).unwrap_or(1).saturating_sub(1);
            r.scroll[i] = r.scroll[i].saturating_add_signed(n).min(last);
        }
        Screen::Text(t) => t.scroll = t.scroll.saturating_add_signed(n).min(t.lines.len().saturating_sub(1)),
        Screen::Log { scroll } => *scroll = scroll.saturating_add_signed(n).min(log_len.saturating_sub(1)),
        Screen::Wizard(_) => {}
    }
}

fn back(state: &mut State) -> Vec<Effect> {
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
            state.stack.push(Screen::Resource(ResourceScreen {
                kind: kind.clone(),
                key: key.clone(),
                object: None,
                focus: Pane::Left,
                scroll: [0, 0],
                gone: false,
            }));
            vec![Effect::LoadObject { kind, key }]
        }
        Screen::Resource(_) | Screen::Text(_) | Screen::Wizard(_) | Screen::Log { .. } => vec![],
    }
}

/// The detail (names, conditions, versions, schema) of the selected registration.
fn open_detail(state: &mut State) -> Vec<Effect> {
    if let Some(reg) = state.registrations.current() {
        let detail =
            DetailScreen { crd: reg.name().to_string(), schema: SchemaTree::new(reg), focus: Pane::Left, scroll: 0 };
        state.stack.push(Screen::Detail(detail));
    }
    vec![]
}

/// Pushes the resources screen of a registration and starts its list and watch.
pub(super) fn open_resources(state: &mut State, reg: &Registration) -> Vec<Effect> {
    let Some(kind) = reg.resource.clone() else {
        let why = reg.troubles().iter().map(|t| t.word()).collect::<Vec<_>>().join(", ");
        state.error(format!("{} serves no resources yet ({why})", reg.name()));
        return vec![];
    };
    let mut effects = vec![];
    if state.stack.iter().any(|s| matches!(s, Screen::Resources(_))) {
        effects.push(Effect::StopWatch);
        state.stack.retain(|s| matches!(s, Screen::Registrations | Screen::Detail(_)));
    }
    state.next_watch += 1;
    state.stack.push(Screen::Resources(Box::new(ResourcesScreen {
        kind: kind.clone(),
        table: ResourceTable::default(),
        selector: None,
        watch: state.next_watch,
        loading: true,
        fallback_all: false,
        stale: false,
    })));
    effects.push(load_table(state));
    effects
}

/// A fresh list and watch for the resources screen on the stack.
fn load_table(state: &mut State) -> Effect {
    state.next_watch += 1;
    let id = state.next_watch;
    let namespaces = state.namespaces.clone();
    let Some(r) = state.resources_mut() else { return Effect::StopWatch };
    r.watch = id;
    r.loading = true;
    let namespaces = if r.kind.namespaced { namespaces } else { Namespaces::All };
    Effect::LoadTable { watch: id, kind: r.kind.clone(), namespaces, selector: r.selector.clone() }
}

pub(super) fn set_namespaces(state: &mut State, namespaces: Namespaces) -> Vec<Effect> {
    state.namespaces = namespaces;
    state.info(format!("namespace: {}", state.namespaces.label()));
    if state.resources_mut().is_some() { vec![load_table(state)] } else { vec![] }
}

fn refresh(state: &mut State) -> Vec<Effect> {
    match state.screen() {
        Screen::Registrations | Screen::Detail(_) => vec![Effect::LoadRegistrations],
        Screen::Resources(_) => vec![load_table(state)],
        Screen::Resource(r) => vec![Effect::LoadObject { kind: r.kind.clone(), key: r.key.clone() }],
        Screen::Text(_) | Screen::Wizard(_) | Screen::Log { .. } => vec![],
    }
}

/// The object the cursor is on, on screens that show custom resources.
fn selected_object(state: &State) -> Option<(ResourceType, ObjKey)> {
    match state.screen() {
        Screen::Resources(r) => r.table.current().map(|row| (r.kind.clone(), row.key.clone())),
        Screen::Resource(r) => Some((r.kind.clone(), r.key.clone())),
        _ => None,
    }
}

fn show_text(state: &mut State, as_yaml: bool) -> Vec<Effect> {
    let word = if as_yaml { "yaml" } else { "describe" };
    let text = |title: String, obj: &Value| TextScreen {
        title,
        lines: if as_yaml { yaml::to_lines(obj) } else { describe(obj) },
        yaml: as_yaml,
        scroll: 0,
        pending: None,
    };
    let screen = match state.screen() {
        Screen::Registrations | Screen::Detail(_) => {
            let reg = match state.screen() {
                Screen::Detail(d) => state.registrations.find(&d.crd),
                _ => state.registrations.current(),
            };
            let Some(reg) = reg else { return vec![] };
            let mut obj = serde_json::to_value(&reg.crd).unwrap_or_default();
            if let Some(m) = obj.as_object_mut() {
                m.insert("apiVersion".into(), "apiextensions.k8s.io/v1".into());
                m.insert("kind".into(), "CustomResourceDefinition".into());
            }
            text(format!("{word} customresourcedefinition/{}", reg.name()), &obj)
        }
        Screen::Resource(r) if r.object.is_some() => {
            text(format!("{word} {}/{}", r.kind.plural, r.key.display()), r.object.as_ref().unwrap_or(&Value::Null))
        }
        Screen::Resources(_) | Screen::Resource(_) => {
            let Some((kind, key)) = selected_object(state) else { return vec![] };
            let title = format!("{word} {}/{}", kind.plural, key.display());
            let mut t = text(title, &Value::Null);
            t.lines = vec!["loading…".into()];
            t.pending = Some(key.clone());
            state.stack.push(Screen::Text(t));
            return vec![Effect::LoadObject { kind, key }];
        }
        Screen::Text(_) | Screen::Wizard(_) | Screen::Log { .. } => return vec![],
    };
    state.stack.push(Screen::Text(screen));
    vec![]
}

fn writes_allowed(state: &mut State) -> bool {
    if state.readonly {
        state.error("read-only: writes are off (started with --readonly)");
    }
    !state.readonly
}

fn edit(state: &mut State, part: EditPart) -> Vec<Effect> {
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
fn delete(state: &mut State) -> Vec<Effect> {
    let deletion = match state.screen() {
        Screen::Registrations | Screen::Detail(_) => {
            let reg = match state.screen() {
                Screen::Detail(d) => state.registrations.find(&d.crd),
                _ => state.registrations.current(),
            };
            let Some(reg) = reg else { return vec![] };
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

fn scale(state: &mut State) -> Vec<Effect> {
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

fn scale_dialog(state: &mut State, action: Action, mut dialog: ScaleDialog) -> Vec<Effect> {
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

fn typing(state: &mut State, action: Action, mut input: Input, command: bool) -> Vec<Effect> {
    match action {
        Action::Type(c) => input.text.push(c),
        // Backspace on an empty line leaves it, as in k9s and vim.
        Action::Backspace if input.text.is_empty() => return vec![],
        Action::Backspace => {
            input.text.pop();
        }
        Action::ClearInput => input.text.clear(),
        Action::Cancel => return vec![],
        Action::Submit if command => return run_command(state, input.text.trim()),
        Action::Submit => return apply_filter(state, input.text.trim()),
        _ => {}
    }
    state.mode = if command { Mode::Command(input) } else { Mode::Filter(input) };
    vec![]
}

/// `:` commands, as k9s reads them.
pub fn run_command(state: &mut State, line: &str) -> Vec<Effect> {
    let mut words = line.split_whitespace();
    let Some(first) = words.next() else { return vec![] };
    let arg = words.next();
    match (first, arg) {
        ("q" | "q!" | "quit" | "exit", _) => {
            state.quit = true;
            vec![]
        }
        ("log" | "messages", _) => open_log(state),
        ("help" | "h", _) => {
            state.mode = Mode::Help { scroll: 0 };
            vec![]
        }
        ("crd" | "crds" | "customresourcedefinition" | "customresourcedefinitions", _) => {
            let stop = state.stack.iter().any(|s| matches!(s, Screen::Resources(_)));
            state.stack.truncate(1);
            let mut effects = vec![Effect::LoadRegistrations];
            if stop {
                effects.insert(0, Effect::StopWatch);
            }
            effects
        }
        ("ns" | "namespace", Some("all" | "-A" | "*")) => set_namespaces(state, Namespaces::All),
        ("ns" | "namespace", Some(ns)) if crate::engine::meta::is_dns1123_label(ns) => {
            state.last_namespace = ns.to_string();
            set_namespaces(state, Namespaces::One(ns.to_string()))
        }
        ("ns" | "namespace", Some(ns)) => {
            state.error(format!("{ns:?} is not a namespace name (a DNS label)"));
            vec![]
        }
        ("ns" | "namespace", None) => {
            state.info(format!("namespace: {} (:ns NAME, :ns all)", state.namespaces.label()));
            vec![]
        }
        ("ctx" | "context", Some(ctx)) => vec![Effect::SwitchContext(ctx.to_string())],
        ("ctx" | "context", None) => {
            state.info(format!("context: {} (:ctx NAME to switch)", state.target.context));
            vec![]
        }
        (word, _) => vec![Effect::Resolve(word.to_string())],
    }
}

/// `/` filters: a regex over the rows, or `-l SELECTOR` for the server's label selector.
fn apply_filter(state: &mut State, text: &str) -> Vec<Effect> {
    if let Some(selector) = text.strip_prefix("-l").map(str::trim) {
        let Some(r) = state.resources_mut() else {
            state.error("label selectors work on the resources screen");
            return vec![];
        };
        r.selector = (!selector.is_empty()).then(|| selector.to_string());
        return vec![load_table(state)];
    }
    let regex = if text.is_empty() {
        None
    } else {
        match Regex::new(&format!("(?i){text}")) {
            Ok(re) => Some(re),
            Err(e) => {
                state.error(format!("not a regex: {e}"));
                return vec![];
            }
        }
    };
    match state.screen_mut() {
        Screen::Registrations => {
            state.registrations.filter = regex;
            state.registrations.cursor = 0;
            state.registrations.offset = 0;
        }
        Screen::Resources(r) => {
            if text.is_empty() && r.selector.take().is_some() {
                r.table.set_filter(None);
                return vec![load_table(state)];
            }
            r.table.set_filter(regex);
        }
        _ => state.error("the filter works on the lists"),
    }
    vec![]
}

#[cfg(test)]
#[path = "update_tests.rs"]
mod tests;
