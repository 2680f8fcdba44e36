//! `kubectl crd delete`: custom resources by name, by `-l` or with `--all`, and
//! CustomResourceDefinitions (`crd NAME`), with kubectl's output and exit codes — one
//! `kind.group "name" deleted` line per object (`(dry run)`, `(server dry run)`, or the
//! `-o name` form), `No resources found` on stdout when a selector matches nothing, an
//! `Error from server` line per object that could not be deleted (the others still go;
//! exit code 1 at the end), then, with `--wait` (the default), waiting until every deleted
//! object is gone.

use super::args::{DeleteArgs, OutputFormat};
use super::session::Session;
use super::{CliError, Reported};
use crate::cluster::delete::{self, Cascade};
use crate::cluster::listing::{self, Query, Shape};
use crate::cluster::{ClusterError, ObjectRef, ResourceType};
use serde_json::Value;
use std::io::Write;
use std::time::Duration;

/// kubectl's wait when `--timeout` is 0 or not given: a week.
const WAIT_FOREVER: Duration = Duration::from_secs(168 * 3600);

/// `--dry-run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DryRun {
    None,
    Client,
    Server,
}

/// Which objects go: named ones, or those a selector (or `--all`) finds.
#[derive(Debug, PartialEq, Eq)]
pub enum Which<'a> {
    Names(Vec<&'a str>),
    /// `None`: `--all`.
    Selector(Option<&'a str>),
}

/// `delete`'s flags, checked (stage two of argument parsing).
#[derive(Debug)]
pub struct DeleteOptions<'a> {
    pub resource: &'a str,
    pub which: Which<'a>,
    pub cascade: Cascade,
    pub dry_run: DryRun,
    pub wait: bool,
    pub timeout: Duration,
    /// kubectl's warnings about deprecated spellings, printed before anything is done.
    pub warnings: Vec<String>,
}

impl<'a> DeleteOptions<'a> {
    pub fn from_args(args: &'a DeleteArgs) -> Result<Self, CliError> {
        let usage = |m: &str| CliError::Usage(m.to_string());
        let (resource, names) = targets(&args.targets)?;
        let which = match (names.is_empty(), args.selector.as_deref(), args.all) {
            (false, Some(_), _) | (false, None, true) => {
                return Err(usage("name cannot be provided when a selector is specified"));
            }
            (false, None, false) => Which::Names(names),
            (true, Some(_), true) => return Err(usage("setting 'all' parameter but found a non empty selector")),
            (true, selector @ Some(_), false) => Which::Selector(selector),
            (true, None, true) => Which::Selector(None),
            (true, None, false) => {
                return Err(usage(
                    "resource(s) were provided, but no name was specified: give names, -l SELECTOR or --all",
                ));
            }
        };
        let mut warnings = Vec::new();
        let cascade = match args.cascade.as_deref().unwrap_or("background") {
            "background" => Cascade::Background,
            "foreground" => Cascade::Foreground,
            "orphan" => Cascade::Orphan,
            "true" => {
                warnings.push(
                    "--cascade=true is deprecated (boolean value) and can be replaced with --cascade=background.",
                );
                Cascade::Background
            }
            "false" => {
                warnings
                    .push("--cascade=false is deprecated (boolean value) and can be replaced with --cascade=orphan.");
                Cascade::Orphan
            }
            other => {
                return Err(CliError::Usage(format!(
                    "invalid cascade value ({other}). Must be \"background\", \"foreground\", or \"orphan\""
                )));
            }
        };
        let dry_run = match args.dry_run.as_deref() {
            None | Some("none") => DryRun::None,
            Some("client") => DryRun::Client,
            Some("server") => DryRun::Server,
            Some(other) => {
                return Err(CliError::Usage(format!(
                    "Invalid dry-run value ({other}). Must be \"none\", \"server\", or \"client\"."
                )));
            }
        };
        let timeout = match args.timeout.as_deref() {
            Some(raw) => super::config::parse_timeout(raw)
                .ok_or_else(|| CliError::Usage(format!("invalid --timeout {raw:?}: use a duration such as 30s or 2m")))?
                .unwrap_or(WAIT_FOREVER),
            None => WAIT_FOREVER,
        };
        let warnings = warnings.into_iter().map(String::from).collect();
        Ok(DeleteOptions { resource, which, cascade, dry_run, wait: args.wait, timeout, warnings })
    }
}

/// kubectl's `TYPE NAME...` or `TYPE/NAME...` (one type for all).
fn targets(words: &[String]) -> Result<(&str, Vec<&str>), CliError> {
    let Some((first, rest)) = words.split_first() else {
        return Err(CliError::Usage("give a TYPE (and names, -l SELECTOR or --all)".into()));
    };
    if !first.contains('/') {
        let names: Vec<&str> = rest.iter().map(String::as_str).collect();
        if let Some(name) = names.iter().find(|n| n.contains('/')) {
            super::args::type_and_name(first, Some(name), "delete")?;
        }
        return Ok((first, names));
    }
    let mut resource = None;
    let mut names = Vec::new();
    for word in words {
        let (kind, name) = super::args::type_and_name(word, None, "delete")?;
        if resource.is_some_and(|r| r != kind) {
            return Err(CliError::Usage(format!(
                "delete takes one TYPE at a time: {kind:?} is not {:?}",
                resource.unwrap_or_default()
            )));
        }
        resource = Some(kind);
        names.extend(name);
    }
    Ok((resource.unwrap_or_default(), names))
}

/// `kubectl crd delete ...`.
pub async fn delete(s: &Session, o: &DeleteOptions<'_>, out: &mut dyn Write) -> anyhow::Result<()> {
    for warning in &o.warnings {
        eprintln!("warning: {warning}");
    }
    if matches!(o.which, Which::Names(_)) && s.list_namespace().is_none() {
        return Err(CliError::Usage("a resource cannot be deleted by name across all namespaces".into()).into());
    }
    let rt = s.resolve(o.resource).await?;
    let targets: Vec<(String, String)> = match &o.which {
        Which::Names(names) => names.iter().map(|n| (s.namespace().to_string(), n.to_string())).collect(),
        Which::Selector(selector) => {
            let query = Query { namespace: s.list_namespace(), label_selector: *selector, ..Query::default() };
            let found = listing::fetch(s.client(), &rt, &query, Shape::Objects).await.map_err(|e| s.err(e))?;
            if found.objects.is_empty() {
                writeln!(out, "No resources found")?;
                return Ok(());
            }
            found.objects.iter().map(identity).collect()
        }
    };
    let mut failed = false;
    let mut deleted = Vec::new();
    for (namespace, name) in &targets {
        let at = ObjectRef::new(&rt, namespace, name);
        let result = match o.dry_run {
            DryRun::Client => crate::cluster::objects::get_object(s.client(), at).await.map(|_| None),
            DryRun::Server => delete::delete(s.client(), at, o.cascade, true).await,
            DryRun::None => delete::delete(s.client(), at, o.cascade, false).await,
        };
        match result {
            Ok(uid) => {
                writeln!(out, "{}", deleted_line(&rt, name, o.dry_run, s.config.output))?;
                deleted.push((namespace, name, uid));
            }
            Err(e) => {
                failed = true;
                eprintln!("{}", refusal(&rt, name, s.err(e)));
            }
        }
    }
    out.flush()?;
    if o.wait && o.dry_run == DryRun::None {
        for (namespace, name, uid) in deleted {
            let at = ObjectRef::new(&rt, namespace, name);
            match delete::wait_gone(s.client(), at, uid.as_deref(), o.timeout).await {
                Ok(()) => {}
                Err(ClusterError::WaitTimeout { .. }) => {
                    eprintln!("error: timed out waiting for the condition on {}/{name}", rt.plural);
                    return Err(Reported.into());
                }
                Err(e) => return Err(s.err(e)),
            }
        }
    }
    if failed { Err(Reported.into()) } else { Ok(()) }
}

/// An object's (namespace, name) from its metadata.
fn identity(object: &Value) -> (String, String) {
    let text = |k: &str| object.pointer(&format!("/metadata/{k}")).and_then(Value::as_str).unwrap_or_default();
    (text("namespace").to_string(), text("name").to_string())
}

/// kubectl's line for one deleted object.
fn deleted_line(rt: &ResourceType, name: &str, dry_run: DryRun, format: OutputFormat) -> String {
    if format == OutputFormat::Name {
        return format!("{}/{name}", rt.name_prefix());
    }
    let suffix = match dry_run {
        DryRun::None => "",
        DryRun::Client => " (dry run)",
        DryRun::Server => " (server dry run)",
    };
    format!("{} \"{name}\" deleted{suffix}", rt.name_prefix())
}

/// kubectl's line for an object the server would not delete: `Error from server
/// (NotFound): widgets.demo.example.com "w9" not found`, else our message.
fn refusal(rt: &ResourceType, name: &str, e: anyhow::Error) -> String {
    match e.downcast_ref::<ClusterError>() {
        Some(c) if c.is_not_found() => {
            format!("Error from server (NotFound): {} \"{name}\" not found", rt.qualified_name())
        }
        _ => format!("error: {e:#}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> DeleteArgs {
        use clap::Parser;
        let cli =
            super::super::args::Cli::try_parse_from(["kubectl-crd", "delete"].into_iter().chain(words.iter().copied()))
                .expect("parses");
        match cli.command {
            Some(super::super::args::Command::Delete(a)) => a,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn targets_and_flags_follow_kubectl() {
        let a = args(&["wd", "w1", "w2", "--cascade=foreground", "--dry-run"]);
        let o = DeleteOptions::from_args(&a).expect("valid");
        assert_eq!((o.resource, &o.which), ("wd", &Which::Names(vec!["w1", "w2"])));
        assert_eq!((o.cascade, o.dry_run, o.wait), (Cascade::Foreground, DryRun::Client, true));
        let a = args(&["wd/w1", "wd/w2", "--wait=false", "--cascade=false"]);
        let o = DeleteOptions::from_args(&a).expect("valid");
        assert_eq!((o.resource, &o.which, o.wait), ("wd", &Which::Names(vec!["w1", "w2"]), false));
        assert_eq!(o.warnings.len(), 1);
        let a = args(&["wd", "--all"]);
        assert_eq!(DeleteOptions::from_args(&a).expect("all").which, Which::Selector(None));
        for (words, says) in [
            (&["wd"][..], "resource(s) were provided, but no name was specified"),
            (&["wd", "w1", "-l", "a=b"][..], "name cannot be provided when a selector is specified"),
            (&["wd", "--all", "-l", "a=b"][..], "setting 'all' parameter but found a non empty selector"),
            (&["wd", "w1", "--cascade=bogus"][..], "invalid cascade value (bogus)"),
            (&["wd", "w1", "--dry-run=bogus"][..], "Invalid dry-run value (bogus)"),
            (&["wd/w1", "db/d1"][..], "delete takes one TYPE at a time"),
        ] {
            let a = args(words);
            let e = DeleteOptions::from_args(&a).expect_err(says);
            assert!(e.to_string().starts_with(says), "{words:?}: {e}");
        }
    }
}
