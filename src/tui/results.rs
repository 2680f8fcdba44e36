//! The other half of the step function: a [`Msg`] (a result from the cluster) changes
//! the [`State`] and may ask for more IO. Nothing here blocks or touches the terminal or
//! the network.

use crate::cluster::counts::CountTarget;
use crate::cluster::registrations::Crd;
use crate::tui::action::{Effect, Msg, WatchEvent};
use crate::tui::model::Registration;
use crate::tui::schema::{PREVIEW_PENDING, Preview, SchemaTree};
use crate::tui::state::{Cause, Mode, Namespaces, Screen, State};
use crate::tui::wizard;

use super::navigation::{open_resources, set_namespaces};
use crate::tui::table::scroll_offset;

/// Applies one result from the cluster.
pub fn apply(state: &mut State, msg: Msg) -> Vec<Effect> {
    match msg {
        Msg::Registrations(Ok(list)) => {
            state.resolved(&Cause::Registrations);
            // The list is shown at once; its counts fill in as they come.
            let uncounted: Vec<_> =
                list.iter().filter(|r| r.counting).filter_map(|r| CountTarget::of(&r.crd)).collect();
            set_registrations(state, list);
            let count = (!uncounted.is_empty()).then_some(Effect::CountResources(uncounted));
            return std::iter::once(Effect::WatchRegistrations).chain(count).collect();
        }
        // At start nothing is shown yet: the page is the list so far.
        Msg::FirstRegistrations(page) if state.registrations.items.is_empty() => {
            return apply(state, Msg::Registrations(Ok(page)));
        }
        Msg::FirstRegistrations(page) => {
            state.resolved(&Cause::Registrations);
            // One count effect for the page, not one per CRD.
            let mut targets = vec![];
            for reg in page {
                for effect in crd_changed(state, reg.crd) {
                    if let Effect::CountResources(t) = effect {
                        targets.extend(t);
                    }
                }
            }
            let count = (!targets.is_empty()).then_some(Effect::CountResources(targets));
            return std::iter::once(Effect::WatchRegistrations).chain(count).collect();
        }
        Msg::CrdChanged(crd) => return crd_changed(state, *crd),
        Msg::CrdDeleted(name) => {
            retain_registrations(state, |r| r.name() != name);
            // Its resources went first: a screen of them would only retry a watch of nothing.
            let open = state.resources_mut().is_some_and(|r| r.kind.qualified_name() == name);
            if open {
                state.error(format!("the CRD {name} was deleted, and its resources with it"));
                return vec![Effect::StopWatch];
            }
        }
        Msg::CrdsListed(names) => {
            let names: std::collections::HashSet<String> = names.into_iter().collect();
            retain_registrations(state, |r| names.contains(r.name()));
        }
        Msg::Counted { crd, count } => {
            let items = &mut state.registrations.items;
            if let Ok(at) = items.binary_search_by(|r| r.name().cmp(&crd)) {
                items[at].summary.resources = count;
                items[at].counting = false;
            }
        }
        Msg::ColumnPreview { crd, result } => {
            let preview = match result {
                Ok(p) => Preview::Ready(p),
                Err(e) => Preview::Failed(e),
            };
            for s in &mut state.stack {
                match s {
                    Screen::Detail(d) if d.crd == crd => d.preview = preview.clone(),
                    // A describe of the CRD waiting for it.
                    Screen::Text(t)
                        if t.lines.last().is_some_and(|l| l == PREVIEW_PENDING)
                            && t.object.as_ref().and_then(|o| o["metadata"]["name"].as_str()) == Some(crd.as_str()) =>
                    {
                        t.lines.pop();
                        t.lines.extend(preview.describe_lines().unwrap_or_default());
                    }
                    _ => {}
                }
            }
        }
        Msg::Registrations(Err(e)) => state.error_because(Cause::Registrations, format!("cannot list CRDs: {e}")),
        Msg::Table { watch, result } => {
            let Some(r) = state.resources_mut().filter(|r| r.watch == watch) else { return vec![] };
            r.loading = false;
            match result {
                Ok(data) => {
                    let empty = data.rows.is_empty();
                    r.table.replace(data);
                    r.stale = false;
                    let fallback = std::mem::take(&mut r.fallback_all) && empty && r.kind.namespaced;
                    let plural = r.kind.plural.clone();
                    state.resolved(&Cause::Table);
                    if let (true, Some(ns)) = (fallback, state.namespaces.one()) {
                        state.last_namespace = ns.to_string();
                        let ns = ns.to_string();
                        let effects = set_namespaces(state, Namespaces::All);
                        state.info(format!("no {plural} in {ns}: showing all namespaces (1 goes back)"));
                        return effects;
                    }
                }
                Err(e) => {
                    // What is shown is what the last good list brought: say so.
                    r.stale = true;
                    state.error_because(Cause::Table, format!("cannot list: {e}"));
                }
            }
        }
        Msg::Rows { watch, rows, done } => {
            let Some(r) = state.resources_mut().filter(|r| r.watch == watch) else { return vec![] };
            r.table.extend(rows);
            r.loading = !done;
            state.resolved(&Cause::Table);
        }
        Msg::Watch { watch, event } => {
            let Some(r) = state.resources_mut().filter(|r| r.watch == watch) else { return vec![] };
            let kind = r.kind.clone();
            let changed = match event {
                WatchEvent::Upsert(row) => {
                    let key = row.key.clone();
                    r.table.upsert(row);
                    key
                }
                WatchEvent::Delete(key) => {
                    r.table.remove(&key);
                    key
                }
                WatchEvent::Error(e) => {
                    state.error_because(Cause::Table, format!("watch: {e} (Ctrl-R to list again)"));
                    return vec![];
                }
            };
            // Events flow again: whatever stopped the watch is over.
            state.resolved(&Cause::Table);
            // The resource screen of a changed object is live: read it again (a delete
            // may be a label leaving the selector, so the read says whether it is gone).
            let open =
                state.stack.iter().any(|s| matches!(s, Screen::Resource(o) if o.key == changed && o.kind == kind));
            if open {
                return vec![Effect::LoadObject { kind, key: changed }];
            }
        }
        Msg::Object { key, result } => {
            let theme_error = match &result {
                Err(e) => Some(format!("cannot read {}: {e}", key.display())),
                Ok(_) => None,
            };
            for s in &mut state.stack {
                match s {
                    Screen::Resource(r) if r.key == key => {
                        if let Ok(obj) = &result {
                            r.show(obj.clone());
                        }
                    }
                    Screen::Text(t) if t.pending.as_ref() == Some(&key) => {
                        if let Ok(obj) = &result {
                            t.show(obj.clone());
                        }
                    }
                    _ => {}
                }
            }
            match theme_error {
                Some(e) => state.error_because(Cause::Object(key), e),
                None => state.resolved(&Cause::Object(key)),
            }
        }
        Msg::ObjectGone(key) => {
            let mut shown = false;
            for s in &mut state.stack {
                match s {
                    Screen::Resource(r) if r.key == key => {
                        r.gone = true;
                        shown = true;
                    }
                    Screen::Text(t) if t.pending.as_ref() == Some(&key) => {
                        t.lines = vec![format!("{} is not there (deleted)", key.display())];
                        t.pending = None;
                    }
                    _ => {}
                }
            }
            let text = format!("{} was deleted", key.display());
            if shown {
                state.info(text)
            } else {
                state.error_because(Cause::Object(key), format!("cannot read it: {text}"))
            }
        }
        Msg::Scale { key, result } => match (&mut state.mode, result) {
            (Mode::Scale(d), Ok(info)) if d.targets == [key.clone()] => d.info = Some(info),
            (_, Err(e)) => state.error(format!("cannot read the scale of {}: {e}", key.display())),
            _ => {}
        },
        Msg::Saved(text) => {
            state.info(text);
            if let Screen::Resource(r) = state.screen() {
                return vec![Effect::LoadObject { kind: r.kind.clone(), key: r.key.clone() }];
            }
        }
        Msg::ApplyVerdict { title, lines } => {
            let mut text = crate::tui::state::TextScreen::new(title, false, None);
            text.lines = lines;
            state.stack.push(Screen::Text(text));
        }
        Msg::Conflict(dialog) => state.mode = Mode::Conflict(*dialog),
        Msg::EditRefused(refused) => return vec![Effect::EditAgain(refused)],
        Msg::Resolved(Ok(crd)) => {
            let name = crd.metadata.name.clone().unwrap_or_default();
            let reg = state.registrations.find(&name).cloned().unwrap_or_else(|| Registration::new(*crd, None));
            state.stack.truncate(1);
            let mut effects = vec![Effect::StopWatch];
            effects.extend(open_resources(state, &reg));
            return effects;
        }
        Msg::Resolved(Err(e)) => state.error(e),
        Msg::Namespaces(Ok(mut names)) => {
            names.sort();
            state.known_namespaces = Some(names);
        }
        // Not allowed to list them (RBAC): `:ns NAME` is taken on trust.
        Msg::Namespaces(Err(_)) => state.known_namespaces = None,
        Msg::Info(text) => state.info(text),
        Msg::Error(text) => state.error(text),
        Msg::Wizard(msg) => return wizard::update::apply(state, msg),
        Msg::ObjectEvent { stream, event } => return super::events_update::on_event(state, stream, event),
        Msg::Tick(now) => return tick(state, now),
        Msg::CelSample { crd, result } => super::cel_update::on_sample(state, &crd, result),
        Msg::CelEdited { crd, rule, result } => super::cel_update::on_edited(state, &crd, rule, result),
        Msg::Owners { request, result } => super::owner_tree_update::on_listed(state, request, result),
        Msg::Connected(target, namespaces) => {
            state.info(format!("context: {}", target.context));
            state.target = target;
            state.namespaces = namespaces;
            state.stack.truncate(1);
            state.registrations = Default::default();
            return vec![Effect::StopWatch, Effect::LoadRegistrations, Effect::LoadNamespaces];
        }
    }
    vec![]
}

/// Seconds between counts of the resources while the registrations are on screen: the
/// RESOURCES column follows the cluster (CRD changes come by watch; objects are counted).
pub const RECOUNT_SECONDS: i64 = 5;

/// The clock: ages move on, and the registrations on screen are counted again now and then
/// (those on screen only: with thousands of CRDs, counting all every few seconds would be a
/// request storm for rows nobody sees; a row scrolled into view is counted at the next tick).
fn tick(state: &mut State, now: k8s_openapi::jiff::Timestamp) -> Vec<Effect> {
    let due = now.as_second() / RECOUNT_SECONDS != state.now.as_second() / RECOUNT_SECONDS;
    state.now = now;
    if !due || !matches!(state.screen(), Screen::Registrations) || state.mode != Mode::Normal {
        return vec![];
    }
    let regs = &state.registrations;
    let height = state.list_height();
    let shown = regs.shown();
    let offset = scroll_offset(regs.offset, regs.cursor, height);
    let on_screen = shown.iter().skip(offset).take(height).map(|&i| &regs.items[i]);
    let served: Vec<_> = on_screen.filter_map(|r| CountTarget::of(&r.crd)).collect();
    if served.is_empty() { vec![] } else { vec![Effect::CountResources(served)] }
}

/// Shows `list` on the registrations screen (see [`change_registrations`]).
fn set_registrations(state: &mut State, list: Vec<Registration>) {
    change_registrations(state, |items| *items = list);
}

/// Drops the registrations `keep` refuses, in place (see [`change_registrations`]).
fn retain_registrations(state: &mut State, keep: impl Fn(&Registration) -> bool) {
    change_registrations(state, |items| items.retain(keep));
}

/// Changes the registrations with `change`, then sorts them by name, puts the cursor back
/// on the registration it was on if that is still shown, and gives open detail screens
/// their CRD's new schema.
fn change_registrations(state: &mut State, change: impl FnOnce(&mut Vec<Registration>)) {
    let selected = state.registrations.current().map(|r| r.name().to_string());
    let list_height = state.list_height();
    let regs = &mut state.registrations;
    change(&mut regs.items);
    regs.items.sort_by(|a, b| a.name().cmp(b.name()));
    regs.loaded = true;
    if let Some(at) = selected.and_then(|name| regs.shown().iter().position(|&i| regs.items[i].name() == name)) {
        regs.cursor = at;
    }
    regs.move_by(0, list_height);
    let items = &state.registrations.items;
    for s in &mut state.stack {
        if let Screen::Detail(d) = s
            && let Some(reg) = items.iter().find(|r| r.name() == d.crd)
        {
            let cursor = d.schema.cursor;
            let fresh = SchemaTree::new(reg);
            if fresh.roots != d.schema.roots {
                d.schema = fresh;
                d.schema.cursor = cursor;
            }
        }
    }
}

/// A CRD the watch saw created or changed: shown at once, with its resources counted when
/// it is new or serves another endpoint than before (until then it keeps its old count).
/// A relist brings every CRD again; those unchanged cost a search and a comparison.
fn crd_changed(state: &mut State, crd: Crd) -> Vec<Effect> {
    let name = crd.metadata.name.clone().unwrap_or_default();
    let items = &state.registrations.items;
    // Sorted by name (change_registrations keeps them so).
    let found = items.binary_search_by(|r| r.name().cmp(&name));
    let old = found.ok();
    if old.is_some_and(|at| items[at].crd == crd) {
        return vec![];
    }
    let resource = crate::cluster::tui_ops::resource_of(&crd);
    let recount = old.is_none_or(|at| items[at].resource != resource);
    let fresh = match old {
        Some(at) if !recount => {
            // A count on its way still comes.
            let mut kept = Registration::new(crd, items[at].count());
            kept.counting = items[at].counting;
            kept
        }
        _ => Registration::uncounted(crd),
    };
    let target = CountTarget::of(&fresh.crd).filter(|_| recount && fresh.counting);
    let effects = target.map(|t| vec![Effect::CountResources(vec![t])]).unwrap_or_default();
    change_registrations(state, |items| match found {
        Ok(at) => items[at] = fresh,
        Err(at) => items.insert(at, fresh),
    });
    effects
}
