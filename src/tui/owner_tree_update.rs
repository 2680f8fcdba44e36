//! The owner tree's steps (`o`): opening it on what is selected, its keys, and the lists
//! coming back. Its screen and the tree are [`super::owner_tree`]'s.

use crate::cluster::owners::Target;
use crate::cluster::owners_fetch::{Listed, Scope};
use crate::tui::action::{Action, Effect};
use crate::tui::owner_tree::{About, Loading, OwnerTreeScreen, built};
use crate::tui::state::{ResourceScreen, Screen, State};
use crate::tui::table::ObjKey;

/// `o`: the owner tree of the object under the cursor, the resource shown, or the CRD.
pub(super) fn open(state: &mut State) -> Vec<Effect> {
    let about = match state.screen() {
        Screen::Resources(r) => match r.table.current() {
            Some(row) => About::Object { kind: r.kind.clone(), key: row.key.clone() },
            None => return vec![],
        },
        Screen::Resource(r) => About::Object { kind: r.kind.clone(), key: r.key.clone() },
        Screen::Owners(o) => match o.selected() {
            Some(about) => about,
            None => return vec![],
        },
        Screen::Registrations | Screen::Detail(_) => match state.selected_registration() {
            Some(reg) => match &reg.resource {
                Some(kind) => About::Kind(kind.clone()),
                None => {
                    state.error(format!("{} serves no objects yet: no owner tree", reg.name()));
                    return vec![];
                }
            },
            None => return vec![],
        },
        _ => return vec![],
    };
    // Owner references stay in a namespace or point at cluster scope, so a namespaced
    // object's tree needs its namespace only; a cluster-scoped one may own anywhere.
    let scope = match &about {
        About::Object { key, .. } => key.namespace.clone().map_or(Scope::All, Scope::Namespace),
        About::Kind(kind) => match state.namespaces.one() {
            Some(ns) if kind.namespaced => Scope::Namespace(ns.to_string()),
            _ => Scope::All,
        },
    };
    state.next_watch += 1;
    let request = state.next_watch;
    let screen =
        OwnerTreeScreen { about, scope: scope.clone(), request, loading: Loading::Pending, cursor: 0, offset: 0 };
    state.stack.push(Screen::Owners(Box::new(screen)));
    vec![Effect::LoadOwners { request, scope }]
}

/// The keys of the owner tree; `None`: not its own (Esc, help, …).
pub(super) fn on_action(state: &mut State, action: Action, height: usize) -> Option<Vec<Effect>> {
    let Screen::Owners(o) = state.screen_mut() else { return None };
    match action {
        Action::Move(n) => o.move_by(n, height),
        Action::Page(n) => o.move_by(n * height.max(1) as isize, height),
        Action::Jump(end) => o.move_by(if end { isize::MAX / 2 } else { isize::MIN / 2 }, height),
        Action::Refresh => {
            state.next_watch += 1;
            let request = state.next_watch;
            let Screen::Owners(o) = state.screen_mut() else { return None };
            o.request = request;
            o.loading = Loading::Pending;
            return Some(vec![Effect::LoadOwners { request, scope: o.scope.clone() }]);
        }
        Action::Enter => return Some(enter(state)),
        _ => return None,
    }
    Some(vec![])
}

/// Enter on a row: the object's resource screen, for custom resources.
fn enter(state: &mut State) -> Vec<Effect> {
    let Screen::Owners(o) = state.screen() else { return vec![] };
    let Loading::Ready { listed, rows, .. } = &o.loading else { return vec![] };
    let node = match rows.get(o.cursor).map(|r| &r.target) {
        Some(Target::Object(uid) | Target::Cycle(uid)) => listed.graph.node(uid),
        Some(Target::Missing(r)) => {
            let text = format!("{} {} (uid {}) is not there: the owner is missing", r.kind, r.name, r.uid);
            state.error(text);
            return vec![];
        }
        None => None,
    };
    let Some(node) = node else { return vec![] };
    let custom = state
        .registrations
        .items
        .iter()
        .filter_map(|r| r.resource.as_ref())
        .find(|k| k.group == node.group() && k.kind == node.kind);
    let Some(kind) = custom.cloned() else {
        state.error(format!(
            "{} {} is not a custom resource: the TUI opens custom resources only",
            node.kind,
            node.display()
        ));
        return vec![];
    };
    let key = ObjKey::new(node.namespace.as_deref(), &node.name);
    state.stack.push(Screen::Resource(ResourceScreen::new(kind.clone(), key.clone())));
    vec![Effect::LoadObject { kind, key }]
}

/// The lists of request `request` came back: the tree is built.
pub(super) fn on_listed(state: &mut State, request: u64, result: Result<Box<Listed>, String>) {
    let screen = state.stack.iter_mut().find_map(|s| match s {
        Screen::Owners(o) if o.request == request => Some(o),
        _ => None,
    });
    let Some(o) = screen else { return };
    o.loading = match result {
        Err(e) => Loading::Failed(format!("cannot list: {e}")),
        Ok(listed) => built(&o.about, listed),
    };
    let last = o.rows().len().saturating_sub(1);
    o.cursor = o.cursor.min(last);
}
