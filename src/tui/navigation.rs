//! Moves between screens and lists that every handler makes (the key handlers in
//! `update`, the command line in `commands`, the writes in `writes`): opening the log,
//! (re)loading the resources list, switching namespaces, the object under the cursor.

use crate::cluster::discovery::ResourceType;
use crate::tui::action::Effect;
use crate::tui::model::Registration;
use crate::tui::state::{Namespaces, ResourcesScreen, Screen, State};
use crate::tui::table::{ObjKey, ResourceTable};

/// The log of every message, on top of the screen (once: `L` on the log does nothing).
pub(super) fn open_log(state: &mut State) -> Vec<Effect> {
    if !matches!(state.screen(), Screen::Log { .. }) {
        state.stack.push(Screen::Log { scroll: 0 });
    }
    vec![]
}

/// A fresh list and watch for the resources screen on the stack.
pub(super) fn load_table(state: &mut State) -> Effect {
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
    if let Namespaces::One(ns) = &namespaces {
        state.favour(&ns.clone());
    }
    state.namespaces = namespaces;
    state.info(format!("namespace: {}", state.namespaces.label()));
    if state.resources_mut().is_some() { vec![load_table(state)] } else { vec![] }
}

/// The object the cursor is on, on screens that show custom resources.
pub(super) fn selected_object(state: &State) -> Option<(ResourceType, ObjKey)> {
    match state.screen() {
        Screen::Resources(r) => r.table.current().map(|row| (r.kind.clone(), row.key.clone())),
        Screen::Resource(r) => Some((r.kind.clone(), r.key.clone())),
        _ => None,
    }
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
        wide: false,
    })));
    effects.push(load_table(state));
    effects
}
