//! Completion through kubectl's plugin convention: for `kubectl crd <TAB>`, kubectl runs
//! `kubectl_complete-crd WORDS... CURRENT` (krew installs it beside the plugin; it runs
//! `kubectl-crd __complete -- WORDS...`) and reads Cobra's `__complete` answer: one
//! candidate a line (`value<TAB>description`), then `:DIRECTIVE`.
//!
//! Subcommands and flags come from the clap definition; resource types, object names,
//! CRD names and namespaces from the cluster the words name (`--local`, `--kubeconfig`,
//! `--context`, `-n`, `-A`). A cluster that cannot be reached completes nothing: a
//! completion never prints an error.

use super::args::{Cli, GlobalArgs};
use super::config::{Config, NamespaceScope};
use super::session::Session;
use crate::cluster::listing::{self, Query, Shape};
use crate::cluster::{Discovery, registrations};
use clap::CommandFactory;
use serde_json::Value;
use std::io::Write;

/// Cobra's `ShellCompDirectiveDefault`: the shell may complete file names.
const FILES: u8 = 0;
/// Cobra's `ShellCompDirectiveNoFileComp`: only the candidates given.
const NO_FILES: u8 = 4;

/// Subcommands whose words after the command are `TYPE NAME...` (or `TYPE/NAME`): `get`,
/// `delete`, `scale`, and the actions of `status` and `spec`.
const TYPED: [&str; 6] = ["get", "delete", "scale", "set", "patch", "edit"];

/// What the words ask to complete.
#[derive(Debug, PartialEq, Eq)]
enum Want {
    Subcommands(Vec<(String, String)>),
    Flags(Vec<(String, String)>),
    /// Values of a flag the shell completes itself (files).
    Files,
    Formats,
    Namespaces,
    Shells,
    CrdNames,
    Types,
    /// Names of objects of this type (`prefix` is `TYPE/` when the word has it).
    Objects {
        resource: String,
        prefix: String,
    },
    Nothing,
}

/// `kubectl-crd __complete WORDS...`: the last word is the one being completed.
pub fn run(words: &[String], out: &mut dyn Write) -> anyhow::Result<()> {
    let (current, prior) = match words.split_last() {
        Some((current, prior)) => (current.as_str(), prior),
        None => ("", &[][..]),
    };
    let (globals, want) = decide(prior, current);
    let candidates: Vec<(String, String)> = match want {
        Want::Subcommands(c) | Want::Flags(c) => c,
        Want::Formats => ["table", "wide", "json", "yaml", "csv", "name", "jsonpath=", "custom-columns="]
            .map(|f| (f.to_string(), String::new()))
            .to_vec(),
        Want::Shells => {
            ["bash", "elvish", "fish", "powershell", "zsh"].map(|s| (s.to_string(), String::new())).to_vec()
        }
        Want::Files => {
            writeln!(out, ":{FILES}")?;
            return Ok(());
        }
        Want::Nothing => Vec::new(),
        cluster => from_cluster(&globals, cluster).into_iter().map(|c| (c, String::new())).collect(),
    };
    for (value, about) in candidates.iter().filter(|(v, _)| v.starts_with(current)) {
        if about.is_empty() { writeln!(out, "{value}")? } else { writeln!(out, "{value}\t{about}")? }
    }
    writeln!(out, ":{NO_FILES}")?;
    Ok(())
}

/// Reads the words before the current one: the connection flags among them, and what
/// the current word is.
fn decide(prior: &[String], current: &str) -> (GlobalArgs, Want) {
    let root = Cli::command();
    let mut globals = GlobalArgs::default();
    let mut positionals: Vec<&str> = Vec::new();
    let mut pending: Option<String> = None;
    for word in prior {
        if let Some(flag) = pending.take() {
            set_global(&mut globals, &flag, word);
            continue;
        }
        let Some(flag) = word.strip_prefix('-').filter(|f| !f.is_empty()) else {
            positionals.push(word);
            continue;
        };
        let (name, value) = match flag.strip_prefix('-') {
            Some(long) => match long.split_once('=') {
                Some((n, v)) => (n.to_string(), Some(v.to_string())),
                None => (long.to_string(), None),
            },
            // `-nteam` is `-n team`.
            None => {
                let mut chars = flag.chars();
                let short = chars.next().map(String::from).unwrap_or_default();
                let rest: String = chars.collect();
                (short, (!rest.is_empty()).then_some(rest))
            }
        };
        match value {
            Some(v) => set_global(&mut globals, &name, &v),
            None if takes_value(&root, &name) => pending = Some(name),
            None => set_global(&mut globals, &name, ""),
        }
    }
    if let Some(flag) = pending {
        let want = match flag.as_str() {
            "n" | "namespace" => Want::Namespaces,
            "o" | "output" => Want::Formats,
            _ => Want::Files,
        };
        return (globals, want);
    }
    // The subcommand path (`status set`), then the words after it.
    let mut command = &root;
    let mut path: Vec<&str> = Vec::new();
    let mut rest = positionals.as_slice();
    while let Some((first, tail)) = rest.split_first() {
        match command.find_subcommand(first) {
            Some(sub) if !sub.is_hide_set() => {
                command = sub;
                path.push(first);
                rest = tail;
            }
            _ => break,
        }
    }
    if current.starts_with('-') {
        return (globals, Want::Flags(flags(&root, command)));
    }
    if command.has_subcommands() && rest.is_empty() {
        let subs = command
            .get_subcommands()
            .filter(|s| !s.is_hide_set())
            .map(|s| (s.get_name().to_string(), s.get_about().map(|a| a.to_string()).unwrap_or_default()))
            .collect();
        return (globals, Want::Subcommands(subs));
    }
    let name = path.last().copied().unwrap_or_default();
    let want = match (name, rest) {
        ("describe", []) => Want::CrdNames,
        ("completion", []) => Want::Shells,
        (name, []) if TYPED.contains(&name) => match current.split_once('/') {
            Some((resource, _)) => Want::Objects { resource: resource.to_string(), prefix: format!("{resource}/") },
            None => Want::Types,
        },
        // `get` and `delete` take several names; the others one.
        (name, [resource, names @ ..])
            if TYPED.contains(&name) && (names.is_empty() || matches!(name, "get" | "delete")) =>
        {
            Want::Objects { resource: resource.to_string(), prefix: String::new() }
        }
        _ => Want::Nothing,
    };
    (globals, want)
}

/// Whether `--name` (or `-n`) takes the next word as its value (`--local` takes none:
/// its directory is given with `=`).
fn takes_value(root: &clap::Command, name: &str) -> bool {
    fn find<'a>(cmd: &'a clap::Command, name: &str) -> Option<&'a clap::Arg> {
        cmd.get_arguments()
            .find(|a| a.get_long() == Some(name) || (name.chars().count() == 1 && a.get_short() == name.chars().next()))
            .or_else(|| cmd.get_subcommands().find_map(|s| find(s, name)))
    }
    find(root, name).is_some_and(|a| a.get_action().takes_values() && !a.is_require_equals_set())
}

/// Records the connection flags the cluster lookups need.
fn set_global(globals: &mut GlobalArgs, name: &str, value: &str) {
    let value = Some(value.to_string());
    match name {
        "kubeconfig" => globals.kubeconfig = value,
        "context" => globals.context = value,
        "n" | "namespace" => globals.namespace = value,
        "A" | "all-namespaces" => globals.all_namespaces = true,
        "local" => globals.local = value,
        _ => {}
    }
}

/// `--long` flags of `command`, then the global ones, with their help.
fn flags(root: &clap::Command, command: &clap::Command) -> Vec<(String, String)> {
    let mut all: Vec<(String, String)> = Vec::new();
    for arg in command.get_arguments().chain(root.get_arguments()).filter(|a| !a.is_hide_set()) {
        let Some(long) = arg.get_long() else { continue };
        let flag = format!("--{long}");
        if !all.iter().any(|(f, _)| f == &flag) {
            all.push((flag, arg.get_help().map(|h| h.to_string()).unwrap_or_default()));
        }
    }
    all.push(("--help".into(), "Print help".into()));
    all
}

/// Candidates read from the cluster; none when it cannot be reached.
fn from_cluster(globals: &GlobalArgs, want: Want) -> Vec<String> {
    let Ok(config) = Config::from_args(globals, true) else { return Vec::new() };
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return Vec::new() };
    runtime.block_on(async {
        let Ok(session) = Session::open(&config, config.target.clone()).await else { return Vec::new() };
        let found = lookup(&session, &config, want).await.unwrap_or_default();
        session.close().await;
        found
    })
}

async fn lookup(s: &Session, config: &Config, want: Want) -> Option<Vec<String>> {
    let names = |objects: &[Value], prefix: &str| {
        objects
            .iter()
            .filter_map(|o| o.pointer("/metadata/name").and_then(Value::as_str))
            .map(|n| format!("{prefix}{n}"))
            .collect::<Vec<_>>()
    };
    let (resource, prefix) = match want {
        Want::CrdNames => {
            let crds = registrations::list_crd_summaries(s.client()).await.ok()?;
            return Some(crds.into_iter().filter_map(|c| c.metadata.name).collect());
        }
        Want::Types => {
            let discovery = Discovery::fetch(s.client()).await.ok()?;
            let mut plurals: Vec<String> = discovery.resources().iter().map(|r| r.plural.clone()).collect();
            plurals.sort();
            plurals.dedup();
            return Some(plurals);
        }
        Want::Namespaces => ("namespaces".to_string(), String::new()),
        Want::Objects { resource, prefix } => (resource, prefix),
        _ => return None,
    };
    let rt = s.resolve(&resource).await.ok()?;
    let namespace = match config.namespaces {
        NamespaceScope::All => None,
        NamespaceScope::One(_) => Some(s.namespace()),
    };
    let query = Query { namespace, ..Query::default() };
    let found = listing::fetch(s.client(), &rt, &query, Shape::Objects).await.ok()?;
    Some(names(&found.objects, &prefix))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn want(words: &[&str]) -> Want {
        let words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
        let (current, prior) = words.split_last().expect("a word");
        decide(prior, current).1
    }

    #[test]
    fn the_words_say_what_to_complete() {
        assert!(matches!(want(&[""]), Want::Subcommands(s) if s.iter().any(|(n, _)| n == "get")));
        assert!(matches!(want(&["status", ""]), Want::Subcommands(s) if s.iter().any(|(n, _)| n == "set")));
        assert_eq!(want(&["get", ""]), Want::Types);
        assert_eq!(
            want(&["--local=/x", "get", "-n", "team", "wd", ""]),
            Want::Objects { resource: "wd".into(), prefix: String::new() }
        );
        assert_eq!(want(&["scale", "wd/w"]), Want::Objects { resource: "wd".into(), prefix: "wd/".into() });
        assert_eq!(want(&["scale", "wd", "w1", ""]), Want::Nothing);
        assert_eq!(want(&["status", "get", "wd", ""]), Want::Objects { resource: "wd".into(), prefix: String::new() });
        assert_eq!(want(&["describe", ""]), Want::CrdNames);
        assert_eq!(want(&["get", "wd", "-n", ""]), Want::Namespaces);
        assert_eq!(want(&["get", "-o", ""]), Want::Formats);
        assert_eq!(want(&["apply", "-f", ""]), Want::Files);
        assert!(matches!(want(&["get", "--sho"]), Want::Flags(f) if f.iter().any(|(n, _)| n == "--show-labels")));
    }
}
