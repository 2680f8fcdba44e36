//! The keymap, as data: every binding with the screens it works on and the words the help
//! screen shows. Handlers only translate a key event into an [`Action`].

use crate::tui::action::Action;
use crate::tui::state::{Mode, Screen, State};
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind};

/// Where a binding works.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum On {
    All,
    Registrations,
    Detail,
    Resources,
    Resource,
    /// Registrations and resources (the lists).
    Lists,
    /// Resources and one resource (writes).
    Objects,
    /// Detail and one resource (two panes).
    Panes,
    /// Registrations and detail (a CRD is selected).
    Crds,
    /// Where something is selected that Ctrl-D deletes.
    Deletes,
    /// The YAML and describe views.
    Text,
    /// The event stream.
    Events,
    /// The CEL workbench.
    Cel,
    /// Where an object or a CRD is selected (the owner tree, whose rows are objects too).
    Selected,
}

impl Binding {
    /// Whether the binding works on this screen.
    pub fn on_screen(&self, screen: &Screen) -> bool {
        self.on.covers(screen)
    }

    /// Whether help lists it: a named key, and not a write with `--readonly`.
    pub fn offered(&self, readonly: bool) -> bool {
        let hidden = self.write && readonly;
        !self.label.is_empty() && !hidden
    }
}

impl On {
    fn covers(self, screen: &Screen) -> bool {
        matches!(
            (self, screen),
            (On::All, _)
                | (On::Registrations, Screen::Registrations)
                | (On::Detail, Screen::Detail(_))
                | (On::Resources, Screen::Resources(_))
                | (On::Resource, Screen::Resource(_))
                | (On::Lists, Screen::Registrations | Screen::Resources(_))
                | (On::Objects, Screen::Resources(_) | Screen::Resource(_))
                | (On::Panes, Screen::Detail(_) | Screen::Resource(_))
                | (On::Crds, Screen::Registrations | Screen::Detail(_))
                | (On::Text, Screen::Text(_))
                | (On::Events, Screen::Events(_))
                | (On::Cel, Screen::Cel(_))
                | (
                    On::Selected,
                    Screen::Registrations
                        | Screen::Detail(_)
                        | Screen::Resources(_)
                        | Screen::Resource(_)
                        | Screen::Owners(_)
                )
                | (On::Deletes, Screen::Registrations | Screen::Detail(_) | Screen::Resources(_) | Screen::Resource(_))
        )
    }
}

/// One key of a binding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Char(char),
    Ctrl(char),
    Code(KeyCode),
}

impl Key {
    fn matches(self, ev: &KeyEvent) -> bool {
        let ctrl = ev.modifiers.contains(KeyModifiers::CONTROL);
        match self {
            Key::Char(c) => !ctrl && ev.code == KeyCode::Char(c),
            Key::Ctrl(c) => ctrl && ev.code == KeyCode::Char(c),
            Key::Code(code) => !ctrl && ev.code == code,
        }
    }
}

/// A binding: keys, what they do, where, and the help text.
#[derive(Debug, Clone, Copy)]
pub struct Binding {
    pub keys: &'static [Key],
    pub label: &'static str,
    pub action: Action,
    pub on: On,
    pub help: &'static str,
    /// A write: off, and not offered, with `--readonly`.
    pub write: bool,
}

const fn b(keys: &'static [Key], label: &'static str, action: Action, on: On, help: &'static str) -> Binding {
    Binding { keys, label, action, on, help, write: false }
}

/// A binding that writes.
const fn bw(keys: &'static [Key], label: &'static str, action: Action, on: On, help: &'static str) -> Binding {
    Binding { keys, label, action, on, help, write: true }
}

use Key::{Char as C, Code, Ctrl};

/// The normal-mode keymap, in the order the help screen lists it.
pub const BINDINGS: &[Binding] = &[
    b(&[C('?')], "?", Action::OpenHelp, On::All, "help: every key"),
    b(&[C('q'), Ctrl('c')], "q Ctrl-C", Action::Quit, On::All, "quit"),
    b(&[Code(KeyCode::Esc)], "Esc", Action::Back, On::All, "back to the previous screen"),
    b(
        &[Code(KeyCode::Enter)],
        "Enter",
        Action::Enter,
        On::All,
        "drill in: a CRD's objects → one object (from the detail too)",
    ),
    b(
        &[C(':')],
        ":",
        Action::OpenCommand,
        On::All,
        "command: :crd :<plural|singular|short|kind> :ns NAME :ctx NAME :q",
    ),
    b(
        &[C('/')],
        "/",
        Action::OpenFilter,
        On::All,
        "filter rows by regex (/!regex: the others); /-l app=x sets a label selector; in YAML: search",
    ),
    b(&[C('j'), Code(KeyCode::Down)], "j ↓", Action::Move(1), On::All, "down"),
    b(&[C('k'), Code(KeyCode::Up)], "k ↑", Action::Move(-1), On::All, "up"),
    b(&[Code(KeyCode::PageDown), Ctrl('f')], "PgDn Ctrl-F", Action::Page(1), On::All, "page down"),
    b(&[Code(KeyCode::PageUp), Ctrl('b')], "PgUp Ctrl-B", Action::Page(-1), On::All, "page up"),
    b(&[C('g'), Code(KeyCode::Home)], "g Home", Action::Jump(false), On::All, "first row"),
    b(&[C('G'), Code(KeyCode::End)], "G End", Action::Jump(true), On::All, "last row"),
    b(&[C('y')], "y", Action::Yaml, On::All, "YAML of the selection"),
    b(&[C('d')], "d", Action::Describe, On::All, "describe the selection"),
    b(&[Ctrl('r')], "Ctrl-R", Action::Refresh, On::All, "refresh from the server"),
    b(&[C('L')], "L", Action::OpenLog, On::All, "log: every message of the session, in full"),
    b(
        &[Code(KeyCode::Tab), Code(KeyCode::BackTab)],
        "Tab",
        Action::FocusNext,
        On::Panes,
        "switch pane (the schema's selected field shows its attributes and CEL rules)",
    ),
    b(&[C('l'), Code(KeyCode::Right)], "l →", Action::Fold(true), On::Detail, "schema: unfold"),
    b(&[C('h'), Code(KeyCode::Left)], "h ←", Action::Fold(false), On::Detail, "schema: fold"),
    b(
        &[C('p')],
        "p",
        Action::PrinterColumns,
        On::Detail,
        "printer columns previewed on objects, empty ones flagged (again: all)",
    ),
    b(&[C('n')], "n N", Action::NextMatch(true), On::Text, "next, previous line the / search matches"),
    b(&[C('N')], "", Action::NextMatch(false), On::Text, ""),
    b(&[C('M')], "M", Action::ToggleManaged, On::Text, "managedFields shown or hidden (hidden at first, as kubectl)"),
    b(
        &[C('M')],
        "M",
        Action::FieldOwners,
        On::Resource,
        "field owners: every field with its manager, operation, subresource and time",
    ),
    b(
        &[C('A')],
        "A",
        Action::ApplyAs,
        On::Resource,
        "apply as manager X: a server-side apply dry run of the edited object, its conflicts and owners",
    ),
    b(
        &[C('o')],
        "o",
        Action::OwnerTree,
        On::Selected,
        "owner tree: owners and dependents (ownerReferences); on a CRD: its linked objects",
    ),
    b(
        &[C('t')],
        "t",
        Action::Timeline,
        On::Resource,
        "conditions timeline: transitions seen, newest first (the last 100); t again: back",
    ),
    bw(&[C('e')], "e", Action::EditSpec, On::Objects, "edit spec in $KUBE_EDITOR/$EDITOR (main endpoint)"),
    bw(&[C('E')], "E", Action::EditStatus, On::Objects, "edit status in $KUBE_EDITOR/$EDITOR (/status)"),
    bw(&[C('s')], "s", Action::Scale, On::Objects, "scale through /scale (marked rows too)"),
    b(
        &[C('i')],
        "i",
        Action::Detail,
        On::Registrations,
        "detail: names, conditions, versions, printer columns on objects, schema explorer",
    ),
    bw(&[C('m')], "m", Action::Migrate, On::Crds, "migrate its objects to a new CRD: guided, journaled, resumable"),
    bw(
        &[Ctrl('d')],
        "Ctrl-D",
        Action::Delete,
        On::Deletes,
        "delete the marked or selected objects, or the CRD (asks first)",
    ),
    b(
        &[C('w')],
        "w",
        Action::Events,
        On::Objects,
        "event stream: the live watch of the list or the object, each change's manager and diff",
    ),
    b(&[C(' ')], "Space", Action::Pause, On::Events, "event stream: pause or resume (events are kept meanwhile)"),
    b(&[C(' ')], "Space", Action::Mark, On::Resources, "mark or unmark the row"),
    b(&[C('u')], "u", Action::ClearMarks, On::Resources, "unmark every row"),
    b(&[C('0')], "0", Action::AllNamespaces, On::Resources, "all namespaces (-A)"),
    b(&[C('1')], "1…9", Action::Favourite(0), On::Resources, "a favourite namespace (the header lists them)"),
    b(&[C('2')], "", Action::Favourite(1), On::Resources, ""),
    b(&[C('3')], "", Action::Favourite(2), On::Resources, ""),
    b(&[C('4')], "", Action::Favourite(3), On::Resources, ""),
    b(&[C('5')], "", Action::Favourite(4), On::Resources, ""),
    b(&[C('6')], "", Action::Favourite(5), On::Resources, ""),
    b(&[C('7')], "", Action::Favourite(6), On::Resources, ""),
    b(&[C('8')], "", Action::Favourite(7), On::Resources, ""),
    b(&[C('9')], "", Action::Favourite(8), On::Resources, ""),
    b(&[Ctrl('w')], "Ctrl-W", Action::ToggleWide, On::Resources, "wide: the printer columns of priority > 0 too"),
    b(
        &[C('N')],
        "N P A …",
        Action::SortBy('N'),
        On::Resources,
        "sort: NAME, NAMESPACE, AGE, or Shift+the first letter of a column on screen; again to reverse",
    ),
    b(&[C('P')], "", Action::SortBy('P'), On::Resources, ""),
    b(&[C('A')], "", Action::SortBy('A'), On::Resources, ""),
    b(
        &[C('c')],
        "c",
        Action::CelWorkbench,
        On::Crds,
        "CEL workbench: try the CRD's x-kubernetes-validations rules on values you edit",
    ),
    b(
        &[Code(KeyCode::Enter)],
        "Enter",
        Action::Enter,
        On::Cel,
        "CEL workbench: edit self (and oldSelf) in $KUBE_EDITOR/$EDITOR, then evaluate the rule",
    ),
    b(&[C('s')], "s", Action::SaveCases, On::Cel, "CEL workbench: save the cases tried for kubectl crd test"),
];

/// A key named in the hints beside the breadcrumbs.
#[derive(Debug, Clone, Copy)]
pub struct Hint {
    pub key: &'static str,
    pub what: &'static str,
    /// A write: not offered with `--readonly`.
    pub write: bool,
}

const fn h(key: &'static str, what: &'static str) -> Hint {
    Hint { key, what, write: false }
}

const fn w(key: &'static str, what: &'static str) -> Hint {
    Hint { key, what, write: true }
}

const REGISTRATION_HINTS: &[Hint] = &[
    h("enter", "objects"),
    h("i", "detail"),
    w("m", "migrate"),
    w("ctrl-d", "delete"),
    h("/", "filter"),
    h(":", "command"),
    h("y", "yaml"),
    h("d", "describe"),
];
const DETAIL_HINTS: &[Hint] = &[
    h("enter", "objects"),
    h("c", "cel"),
    w("m", "migrate"),
    h("tab", "pane"),
    h("p", "columns"),
    h("←/→", "fold"),
    h("esc", "back"),
];
const RESOURCES_HINTS: &[Hint] = &[
    h("enter", "open"),
    w("e/E", "edit spec/status"),
    w("s", "scale"),
    w("ctrl-d", "delete"),
    h("space", "mark"),
    h("0", "all ns"),
    h("ctrl-w", "wide"),
    h("w", "events"),
];
const RESOURCE_HINTS: &[Hint] = &[
    w("e", "edit spec"),
    w("E", "edit status"),
    w("s", "scale"),
    w("ctrl-d", "delete"),
    h("w", "events"),
    h("M", "owners"),
    h("A", "apply as"),
    h("o", "owner tree"),
    h("t", "timeline"),
    h("tab", "pane"),
    h("esc", "back"),
];
const CEL_HINTS: &[Hint] = &[h("enter", "edit & evaluate"), h("s", "save cases"), h("j/k", "rule"), h("esc", "back")];
const OWNERS_HINTS: &[Hint] =
    &[h("enter", "open"), h("o", "its own tree"), h("j/k", "move"), h("ctrl-r", "list again"), h("esc", "back")];
const TEXT_HINTS: &[Hint] = &[h("j/k", "scroll"), h("/", "search"), h("n/N", "next/previous"), h("esc", "back")];
const LOG_HINTS: &[Hint] = &[h("j/k", "scroll"), h("esc", "back")];
const EVENTS_HINTS: &[Hint] =
    &[h("space", "pause"), h("/", "filter"), h("enter", "full diff"), h("j/k", "move"), h("esc", "back")];

/// The hints of each screen (the wizard's are its own).
pub fn hints(screen: &Screen) -> &'static [Hint] {
    match screen {
        Screen::Registrations => REGISTRATION_HINTS,
        Screen::Detail(_) => DETAIL_HINTS,
        Screen::Resources(_) => RESOURCES_HINTS,
        Screen::Resource(_) => RESOURCE_HINTS,
        Screen::Text(_) => TEXT_HINTS,
        Screen::Log { .. } => LOG_HINTS,
        Screen::Events(_) => EVENTS_HINTS,
        Screen::Cel(_) => CEL_HINTS,
        Screen::Owners(_) => OWNERS_HINTS,
        Screen::Wizard(_) => &[],
    }
}

/// Keys of the dialogs and input lines, for the help screen; the dialogs that write are
/// not offered with `--readonly` (`true`).
pub const DIALOG_KEYS: &[(&str, &str, bool)] = &[
    (": /", "type, Tab completes (commands, kinds, namespaces), Enter runs, Esc cancels, Ctrl-U clears", false),
    (":ns", "alone: pick a namespace from the cluster's (j/k, Enter)", false),
    ("scale", "digits set a number, + - step (from 0 too), Enter applies, Esc cancels", true),
    (
        "conflict",
        "r re-applies your edit on the server's version, e edits it again, d or Esc discards (file kept)",
        true,
    ),
    ("migrate", "new CRD's file, Enter plans; Ctrl-E writes it in the editor; Esc goes back", true),
    ("", "Enter starts; y/n answer; r rolls back; q asks first while a step runs", true),
];

/// The migration wizard's keys outside its path line, as data.
pub const WIZARD_KEYS: &[(Key, Action)] = &[
    (C('y'), Action::Answer(true)),
    (C('Y'), Action::Answer(true)),
    (C('n'), Action::Answer(false)),
    (C('N'), Action::Answer(false)),
    (C('r'), Action::Rollback),
    (Code(KeyCode::Enter), Action::Submit),
    (Code(KeyCode::Esc), Action::Cancel),
    (C('q'), Action::Quit),
    (C('?'), Action::OpenHelp),
    (C('j'), Action::Move(1)),
    (Code(KeyCode::Down), Action::Move(1)),
    (C('k'), Action::Move(-1)),
    (Code(KeyCode::Up), Action::Move(-1)),
    (Code(KeyCode::PageDown), Action::Page(1)),
    (Ctrl('f'), Action::Page(1)),
    (Code(KeyCode::PageUp), Action::Page(-1)),
    (Ctrl('b'), Action::Page(-1)),
    (C('g'), Action::Jump(false)),
    (Code(KeyCode::Home), Action::Jump(false)),
    (C('G'), Action::Jump(true)),
    (Code(KeyCode::End), Action::Jump(true)),
];

/// Keys of a line being typed (`:`, `/`, the wizard's path).
fn typing(ev: &KeyEvent) -> Option<Action> {
    let ctrl = ev.modifiers.contains(KeyModifiers::CONTROL);
    match ev.code {
        KeyCode::Esc => Some(Action::Cancel),
        KeyCode::Enter => Some(Action::Submit),
        KeyCode::Backspace => Some(Action::Backspace),
        KeyCode::Char('u') if ctrl => Some(Action::ClearInput),
        KeyCode::Char(c) if !ctrl => Some(Action::Type(c)),
        _ => None,
    }
}

/// The action for a key in the current mode and screen, if any.
pub fn action_for(state: &State, ev: &KeyEvent) -> Option<Action> {
    if ev.kind == KeyEventKind::Release {
        return None;
    }
    let ctrl = ev.modifiers.contains(KeyModifiers::CONTROL);
    if ctrl && ev.code == KeyCode::Char('c') {
        return Some(Action::Quit);
    }
    match &state.mode {
        Mode::Command(_) if ev.code == KeyCode::Tab => Some(Action::Complete),
        Mode::Command(_) | Mode::Filter(_) => typing(ev),
        Mode::PickNamespace { .. } => match ev.code {
            KeyCode::Esc | KeyCode::Char('q') => Some(Action::Cancel),
            KeyCode::Enter => Some(Action::Submit),
            KeyCode::Down | KeyCode::Char('j') => Some(Action::Move(1)),
            KeyCode::Up | KeyCode::Char('k') => Some(Action::Move(-1)),
            _ => None,
        },
        Mode::Help { .. } => match ev.code {
            KeyCode::Esc | KeyCode::Char('q' | '?') => Some(Action::Cancel),
            KeyCode::Down | KeyCode::Char('j') => Some(Action::Move(1)),
            KeyCode::Up | KeyCode::Char('k') => Some(Action::Move(-1)),
            KeyCode::PageDown => Some(Action::Page(1)),
            KeyCode::PageUp => Some(Action::Page(-1)),
            _ => None,
        },
        Mode::Scale(_) => match ev.code {
            KeyCode::Esc => Some(Action::Cancel),
            KeyCode::Enter => Some(Action::Submit),
            KeyCode::Backspace => Some(Action::Backspace),
            KeyCode::Char('+' | '=') | KeyCode::Up | KeyCode::Right => Some(Action::Step(1)),
            KeyCode::Char('-' | '_') | KeyCode::Down | KeyCode::Left => Some(Action::Step(-1)),
            KeyCode::Char(c) if c.is_ascii_digit() => Some(Action::Type(c)),
            _ => None,
        },
        Mode::Conflict(_) => match ev.code {
            KeyCode::Char('r') => Some(Action::Reapply),
            KeyCode::Char('e') => Some(Action::EditAgain),
            KeyCode::Char('d') | KeyCode::Esc => Some(Action::Discard),
            _ => None,
        },
        Mode::ConfirmQuit | Mode::ConfirmDelete(_) => match ev.code {
            KeyCode::Char('y' | 'Y' | 'q') => Some(Action::Answer(true)),
            KeyCode::Char('n' | 'N') | KeyCode::Esc => Some(Action::Answer(false)),
            _ => None,
        },
        Mode::Normal => match state.screen() {
            Screen::Wizard(w) if w.typing() => match ev.code {
                KeyCode::Char('e') if ctrl => Some(Action::Compose),
                KeyCode::Tab | KeyCode::BackTab | KeyCode::Up | KeyCode::Down => Some(Action::FocusNext),
                _ => typing(ev),
            },
            Screen::Wizard(_) => WIZARD_KEYS.iter().find(|(k, _)| k.matches(ev)).map(|(_, a)| *a),
            screen => {
                let bound = BINDINGS.iter().find(|b| b.on.covers(screen) && b.keys.iter().any(|k| k.matches(ev)));
                match (bound, screen, ev.code) {
                    (Some(b), _, _) => Some(b.action),
                    // Shift+letter sorts by the column it starts, as in k9s.
                    (None, Screen::Resources(_), KeyCode::Char(c)) if c.is_ascii_uppercase() && !ctrl => {
                        Some(Action::SortBy(c))
                    }
                    _ => None,
                }
            }
        },
    }
}

/// Mouse wheel: three rows a notch, like most terminals scroll; a click selects a row.
pub fn mouse_action(ev: &MouseEvent) -> Option<Action> {
    match ev.kind {
        MouseEventKind::Down(crossterm::event::MouseButton::Left) => Some(Action::Click(ev.row)),
        MouseEventKind::ScrollDown => Some(Action::Move(3)),
        MouseEventKind::ScrollUp => Some(Action::Move(-3)),
        _ => None,
    }
}
