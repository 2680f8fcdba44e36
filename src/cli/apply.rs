//! `kubectl crd apply -f` and `kubectl crd demo`: every file is read and checked before
//! anything is sent; then each object's outcome is printed in document order, kubectl's
//! way (`widget.demo.example.com/w1 created`), and failures are listed on stderr.

use super::CliError;
use super::args::OutputFormat;
use super::output::{self, Rows};
use super::session::{Session, read_inputs};
use crate::cluster::apply::{Action, ApplyOptions, Outcome, apply_documents, parse_documents};
use crate::cluster::demo;
use std::collections::BTreeSet;
use std::io::Write;
use std::time::Duration;

/// How long `apply` waits for each CRD to be Established.
const ESTABLISH_TIMEOUT: Duration = Duration::from_secs(60);

/// `kubectl crd apply -f FILE|DIR|- ...`.
pub async fn apply(s: &Session, filenames: &[String], retry: bool, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut docs = Vec::new();
    for input in read_inputs(filenames)? {
        docs.extend(parse_documents(&input.text, &input.source)?);
    }
    if docs.is_empty() {
        return Err(CliError::Usage(format!("no objects to apply in {}", filenames.join(", "))).into());
    }
    let options = ApplyOptions {
        namespace: s.namespace().to_string(),
        namespace_explicit: s.config.namespace_explicit,
        retry_conflicts: retry,
        establish_timeout: ESTABLISH_TIMEOUT,
    };
    let outcomes = apply_documents(s.client(), docs, &options, |_| {}).await.map_err(|e| s.err(e))?;
    write!(out, "{}", render_outcomes(&outcomes, s.config.output)?)?;
    report_failures(s, &outcomes)
}

/// The outcomes in the configured format (failures are left to [`report_failures`]).
pub fn render_outcomes(outcomes: &[Outcome], format: OutputFormat) -> anyhow::Result<String> {
    let applied = outcomes.iter().filter_map(|o| o.as_ref().ok());
    Ok(match format {
        OutputFormat::Json | OutputFormat::JsonPath | OutputFormat::CustomColumns => {
            output::json(&output::list_of(applied.map(|a| a.object.clone()).collect()))?
        }
        OutputFormat::Yaml => output::yaml(&output::list_of(applied.map(|a| a.object.clone()).collect()))?,
        OutputFormat::Name => applied.map(|a| format!("{}/{}\n", a.resource, a.name)).collect(),
        OutputFormat::Csv => {
            let mut rows = Rows::new(&["RESOURCE", "NAMESPACE", "NAME", "ACTION", "NOTE"]);
            for a in applied {
                rows.push(vec![
                    a.resource.clone(),
                    a.namespace.clone().unwrap_or_default(),
                    a.name.clone(),
                    a.action.as_str().into(),
                    a.note.clone().unwrap_or_default(),
                ]);
            }
            rows.render_csv()
        }
        // -o junit is refused before any of these run.
        OutputFormat::Table | OutputFormat::Wide | OutputFormat::Junit => applied
            .map(|a| match &a.note {
                Some(note) => format!("{}/{} {} ({note})\n", a.resource, a.name, a.action.as_str()),
                None => format!("{}/{} {}\n", a.resource, a.name, a.action.as_str()),
            })
            .collect(),
    })
}

/// Prints each failure to stderr and fails the command if there was any: exit code 2 when
/// every failure was the input's fault, 1 otherwise.
fn report_failures(s: &Session, outcomes: &[Outcome]) -> anyhow::Result<()> {
    let failed: Vec<_> = outcomes.iter().filter_map(|o| o.as_ref().err()).collect();
    if failed.is_empty() {
        return Ok(());
    }
    for f in &failed {
        eprintln!("error: {}: {}", f.what, s.conn.explain(clone_error(&f.error)));
    }
    let message = format!("{} of {} objects could not be applied (see above)", failed.len(), outcomes.len());
    if failed.iter().all(|f| f.error.is_usage()) {
        Err(CliError::Usage(message).into())
    } else {
        Err(anyhow::anyhow!(message))
    }
}

/// `ClusterError` is not `Clone` (it may hold sources); its message is all we print.
fn clone_error(e: &crate::cluster::ClusterError) -> crate::cluster::ClusterError {
    crate::cluster::ClusterError::Other(e.to_string())
}

/// `kubectl crd demo`.
pub async fn demo(s: &Session, out: &mut dyn Write) -> anyhow::Result<()> {
    let report = demo::load(s.client(), |_| {}).await.map_err(|e| s.err(e))?;
    match s.config.output {
        OutputFormat::Table | OutputFormat::Wide => {
            write!(out, "{}", demo_summary(s, &report.outcomes, report.deleted_terminating_crd))?
        }
        format => write!(out, "{}", render_outcomes(&report.outcomes, format)?)?,
    }
    report_failures(s, &report.outcomes)
}

fn demo_summary(s: &Session, outcomes: &[Outcome], deleted: bool) -> String {
    let applied: Vec<_> = outcomes.iter().filter_map(|o| o.as_ref().ok()).collect();
    let crds: Vec<_> = applied.iter().filter(|a| a.resource.starts_with("customresourcedefinition.")).collect();
    // Custom resources are group-qualified (`widget.demo.example.com`); built-in kinds
    // of the core group (the owned ConfigMap) are not.
    let resources: Vec<_> = applied
        .iter()
        .filter(|a| a.resource.contains('.') && !a.resource.starts_with("customresourcedefinition."))
        .collect();
    let builtin = applied.iter().filter(|a| a.resource != "namespace" && !a.resource.contains('.')).count();
    let namespaces: BTreeSet<&str> = resources.iter().filter_map(|a| a.namespace.as_deref()).collect();
    let count = |action: Action| resources.iter().filter(|a| a.action == action).count();
    let mut text = format!("Demo loaded into {}:\n", s.conn.origin());
    text.push_str(&format!("  {} CustomResourceDefinitions\n", crds.len()));
    for c in crds.iter().filter(|c| c.note.is_some()) {
        text.push_str(&format!("    {}: {}\n", c.name, c.note.as_deref().unwrap_or_default()));
    }
    text.push_str(&format!(
        "  {} custom resources in {} namespaces and cluster scope ({} created, {} configured, {} unchanged)\n",
        resources.len(),
        namespaces.len(),
        count(Action::Created),
        count(Action::Configured),
        count(Action::Unchanged),
    ));
    text.push_str(&format!("  {builtin} ConfigMap, and owner references among them (o in the TUI shows the tree)\n"));
    if deleted {
        text.push_str(&format!(
            "  {} was deleted while legacyjob stuck-job holds a finalizer, so it stays Terminating\n",
            demo::TERMINATING_CRD
        ));
    }
    let local = match s.conn.origin() {
        crate::cluster::Origin::Local { data_dir } | crate::cluster::Origin::Served { data_dir, .. } => {
            format!("--local={}", data_dir.display())
        }
        _ => "--local".to_string(),
    };
    text.push_str(&format!("Try: kubectl crd {local} list\n"));
    text
}
