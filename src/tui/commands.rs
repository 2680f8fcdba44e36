//! The two lines typed at the bottom: `:` commands (as k9s reads them) and `/` filters
//! (a regex, `!regex` for the rows that do not match, `-l SELECTOR` for the server; on
//! the YAML and describe views a search).

use crate::tui::action::{Action, Effect};
use crate::tui::state::{Input, Mode, Namespaces, Screen, State};
use crate::tui::table::RowFilter;

use super::navigation::{load_table, open_log, set_namespaces};

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
        Action::Complete if command => {
            let found = completions(state, &input.text);
            if let Some(line) = complete(&input.text, &found) {
                input.text = line;
            }
        }
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
        ("ns" | "namespace", Some(ns))
            if state.known_namespaces.as_ref().is_some_and(|known| !known.iter().any(|k| k == ns)) =>
        {
            state.error(format!("namespace {ns:?} not found (:ns alone lists them)"));
            // The list may be older than the namespace: read it again for the next try.
            vec![Effect::LoadNamespaces]
        }
        ("ns" | "namespace", Some(ns)) if kubectl_crd_engine::is_dns1123_label(ns) => {
            state.last_namespace = ns.to_string();
            set_namespaces(state, Namespaces::One(ns.to_string()))
        }
        ("ns" | "namespace", Some(ns)) => {
            state.error(format!("{ns:?} is not a namespace name (a DNS label)"));
            vec![]
        }
        // As k9s's namespace view: pick one from the list (read again as it opens).
        ("ns" | "namespace", None) => {
            let at = state.namespaces.one().and_then(|ns| namespace_choices(state).iter().position(|c| c == ns));
            state.mode = Mode::PickNamespace { cursor: at.unwrap_or(0) };
            vec![Effect::LoadNamespaces]
        }
        ("ctx" | "context", Some(ctx)) => vec![Effect::SwitchContext(ctx.to_string())],
        ("ctx" | "context", None) => {
            state.info(format!("context: {} (:ctx NAME to switch)", state.target.context));
            vec![]
        }
        (word, _) => vec![Effect::Resolve(word.to_string())],
    }
}

/// The commands `:` knows, for completion (the kinds come from the registrations).
const COMMANDS: &[&str] = &["crd", "ctx", "help", "log", "ns", "quit"];

/// The namespace picker's rows: every namespace, then all of them.
pub fn namespace_choices(state: &State) -> Vec<String> {
    let mut out = state.known_namespaces.clone().unwrap_or_else(|| state.favourites.clone());
    out.push("all".to_string());
    out
}

/// The whole lines `text` may complete to: a command or kind for the first word, a
/// namespace after `ns `.
pub fn completions(state: &State, text: &str) -> Vec<String> {
    let (head, word) = match text.rsplit_once(' ') {
        Some((head, word)) => (Some(head.trim()), word),
        None => (None, text),
    };
    let candidates: Vec<String> = match head {
        None => {
            let kinds = state.registrations.items.iter().filter_map(|r| r.resource.as_ref()).flat_map(|k| {
                [k.plural.clone(), k.singular.clone(), k.kind.to_lowercase()].into_iter().chain(k.short_names.clone())
            });
            COMMANDS.iter().map(|c| c.to_string()).chain(kinds).collect()
        }
        Some("ns" | "namespace") => namespace_choices(state),
        Some(_) => vec![],
    };
    let mut found: Vec<String> = candidates
        .into_iter()
        .filter(|c| c.starts_with(word) && !c.is_empty())
        .map(|c| match head {
            Some(head) => format!("{head} {c}"),
            None => c,
        })
        .collect();
    found.sort();
    found.dedup();
    found
}

/// `Tab`: the one completion (a command that takes an argument gets its space), or the
/// longest prefix the completions share.
fn complete(text: &str, found: &[String]) -> Option<String> {
    match found {
        [] => None,
        [one] if matches!(one.as_str(), "ns" | "ctx") => Some(format!("{one} ")),
        [one] => Some(one.clone()),
        [first, rest @ ..] => {
            let mut prefix = first.clone();
            for f in rest {
                while !f.starts_with(&prefix) {
                    prefix.pop();
                }
            }
            (prefix.len() > text.len()).then_some(prefix)
        }
    }
}

/// The namespace picker (`:ns` alone): move, Enter picks, Esc leaves it.
pub(super) fn pick_namespace(state: &mut State, action: Action, cursor: usize) -> Vec<Effect> {
    let choices = namespace_choices(state);
    match action {
        Action::Move(n) => {
            let cursor = cursor.saturating_add_signed(n).min(choices.len().saturating_sub(1));
            state.mode = Mode::PickNamespace { cursor };
            vec![]
        }
        Action::Submit => match choices.get(cursor).map(String::as_str) {
            Some("all") => set_namespaces(state, Namespaces::All),
            Some(ns) => {
                let ns = ns.to_string();
                set_namespaces(state, Namespaces::One(ns))
            }
            None => vec![],
        },
        Action::Cancel | Action::Back => vec![],
        _ => {
            state.mode = Mode::PickNamespace { cursor };
            vec![]
        }
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
        Screen::Text(t) => {
            t.search = regex;
            if t.search.is_some() && !t.next_match(true, true) {
                state.error(format!("no line matches {text:?}"));
            }
        }
        Screen::Events(e) => {
            e.filter = regex;
            e.selected = None;
            e.offset = 0;
        }
        _ => state.error("the filter works on the lists"),
    }
    vec![]
}

#[cfg(test)]
#[path = "commands_tests.rs"]
mod tests;
