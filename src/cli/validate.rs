//! `kubectl crd validate`: reads the objects, the CRDs (from files, or from the cluster) and
//! the old objects, runs the checks ([`crate::validate`]) and prints a verdict per document
//! — `valid`, or the apiserver's own Status message — with its warnings, then a summary.
//! Exit codes: 0 when everything is valid, 1 when anything is invalid, 2 for unreadable
//! input.

use super::args::{OutputFormat, ValidateArgs};
use super::config::Config;
use super::session::{Session, read_inputs};
use super::{CliError, Reported};
use crate::cluster::apply::{Document, parse_documents};
use crate::cluster::registrations::list_crds;
use crate::validate::{Checked, Report, ValidateOptions, validate};
use serde_json::Value;
use std::io::Write;

/// Runs `kubectl crd validate`.
pub fn run(config: &Config, args: &ValidateArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let format = match config.output {
        OutputFormat::Table | OutputFormat::Wide => Format::Text,
        OutputFormat::Json => Format::Json,
        OutputFormat::Yaml => Format::Yaml,
        _ => return Err(CliError::Usage("kubectl crd validate prints text, -o json or -o yaml".into()).into()),
    };
    let (crds_in_objects, objects): (Vec<Document>, Vec<Document>) =
        read(&args.filename)?.into_iter().partition(|d| is_crd(&d.value));
    let mut crds = crds_in_objects;
    crds.extend(read(&args.crd)?);
    let olds = read(&args.old)?;
    if objects.is_empty() && crds.is_empty() {
        return Err(CliError::Usage(format!("nothing to validate in {}", args.filename.join(", "))).into());
    }
    let runtime = super::runtime()?;
    let report = runtime.block_on(async {
        // CRDs come from the cluster only when none were given (by --crd or among the objects).
        let from_cluster = if crds.is_empty() { cluster_crds(config).await? } else { Vec::new() };
        let options = ValidateOptions { strict: args.strict };
        let mut report =
            validate(&[from_cluster.as_slice(), crds.as_slice()].concat(), &objects, &olds, options).await?;
        // The cluster's CRDs were accepted there: only a refusal here is news.
        let cluster_count = from_cluster.len();
        let (theirs, ours) = report.crds.split_at(cluster_count);
        report.crds = theirs.iter().filter(|c| !c.valid).chain(ours).cloned().collect();
        anyhow::Ok(report)
    })?;
    match format {
        Format::Text => write!(out, "{}", render(&report, args.show_defaulted))?,
        Format::Json => writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?,
        Format::Yaml => write!(out, "{}", serde_saphyr::to_string(&report)?)?,
    }
    if report.all_valid() { Ok(()) } else { Err(Reported.into()) }
}

enum Format {
    Text,
    Json,
    Yaml,
}

/// Every document of `names` (files, directories, `-`); unreadable input is a usage error.
fn read(names: &[String]) -> anyhow::Result<Vec<Document>> {
    let mut docs = Vec::new();
    for input in read_inputs(names)? {
        docs.extend(parse_documents(&input.text, &input.source)?);
    }
    Ok(docs)
}

/// Whether `value` is a CustomResourceDefinition.
pub(super) fn is_crd(value: &Value) -> bool {
    value.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition")
        && value.get("apiVersion").and_then(Value::as_str).is_some_and(|v| v.starts_with("apiextensions.k8s.io/"))
}

/// The cluster's CRDs, as documents to register again.
async fn cluster_crds(config: &Config) -> anyhow::Result<Vec<Document>> {
    let session = Session::open(config, config.target.clone()).await?;
    let listed = list_crds(session.client()).await.map_err(|e| session.err(e));
    session.close().await;
    let mut docs = Vec::new();
    for crd in listed? {
        let mut value = serde_json::to_value(&crd)?;
        if let Some(map) = value.as_object_mut() {
            map.remove("status");
            map.insert("apiVersion".into(), "apiextensions.k8s.io/v1".into());
            map.insert("kind".into(), "CustomResourceDefinition".into());
        }
        let name = crd.metadata.name.unwrap_or_default();
        docs.push(Document { origin: format!("the cluster's crd {name}"), value });
    }
    Ok(docs)
}

/// The text report: a line per document, its warnings under it, then the counts.
fn render(report: &Report, show_defaulted: bool) -> String {
    let mut text = String::new();
    for checked in report.crds.iter().chain(&report.objects) {
        text.push_str(&line(checked));
        for warning in &checked.warnings {
            text.push_str(&format!("  Warning: {warning}\n"));
        }
        if let (true, Some(object)) = (show_defaulted, &checked.object) {
            let yaml = serde_saphyr::to_string(object).unwrap_or_default();
            text.extend(yaml.lines().map(|l| format!("    {l}\n")));
        }
    }
    let count = |list: &[Checked]| (list.iter().filter(|c| c.valid).count(), list.iter().filter(|c| !c.valid).count());
    let (objects_valid, objects_invalid) = count(&report.objects);
    let mut summary = format!("{objects_valid} valid, {objects_invalid} invalid");
    if !report.crds.is_empty() {
        let (crds_valid, crds_invalid) = count(&report.crds);
        summary.push_str(&format!(" ({crds_valid} CRDs valid, {crds_invalid} invalid)"));
    }
    text.push_str(&summary);
    text.push('\n');
    text
}

fn line(checked: &Checked) -> String {
    let name = match &checked.namespace {
        Some(namespace) => format!("{namespace}/{}", checked.name),
        None => checked.name.clone(),
    };
    format!("{}: {} {name}: {}\n", checked.origin, checked.kind, checked.verdict())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn checked(valid: bool, status: Option<Value>) -> Checked {
        Checked {
            origin: "o.yaml (document 1)".into(),
            api_version: "example.com/v1".into(),
            kind: "Gizmo".into(),
            namespace: Some("team".into()),
            name: "g".into(),
            valid,
            warnings: vec!["unknown field \"spec.x\"".into()],
            status,
            message: None,
            object: valid.then(|| json!({"spec": {"size": 1}})),
        }
    }

    #[test]
    fn the_text_report_has_a_line_per_document_and_the_counts() {
        let refused =
            json!({"kind": "Status", "message": "Gizmo.example.com \"g\" is invalid: spec.size: Required value"});
        let report = Report { crds: vec![], objects: vec![checked(true, None), checked(false, Some(refused))] };
        assert_eq!(
            render(&report, true),
            "o.yaml (document 1): Gizmo team/g: valid\n  Warning: unknown field \"spec.x\"\n    spec:\n      size: 1\n\
             o.yaml (document 1): Gizmo team/g: Gizmo.example.com \"g\" is invalid: spec.size: Required value\n  Warning: unknown field \"spec.x\"\n\
             1 valid, 1 invalid\n"
        );
    }
}
