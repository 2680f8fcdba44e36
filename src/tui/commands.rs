//! The two lines typed at the bottom: `:` commands (as k9s reads them) and `/` filters
//! (a regex, `!regex` for the rows that do not match, `-l SELECTOR` for the server; on
//! the YAML and describe views a search).

use crate::tui::action::{Action, Effect};
use crate::tui::state::{Input, Mode, Namespaces, Screen, State};
use crate::tui::table::RowFilter;

use super::update::{load_table, open_log, set_namespaces};

pub(super) fn typing(state: &mut State, action: Action, mut input: Input, command: bool) -> Vec<Effect> {
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
pub(super) fn apply_filter(state: &mut State, text: &str) -> Vec<Effect> {
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
        match RowFilter::parse(text) {
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
