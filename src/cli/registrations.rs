//! `kubectl crd list` and `kubectl crd describe`: registrations in every output format.
//!
//! The text is built by pure functions of the cluster layer's views and a clock, so tests
//! compare whole outputs.

use super::args::OutputFormat;
use super::output::{self, Rows};
use super::session::Session;
use crate::cluster::registrations::{self, ConditionStatus, Description, Registration};
use crate::cluster::table::age;
use crate::cluster::{column_preview, counts, listing, schema_fields, webhooks};
use crate::text::tabwrite::tabwrite;
use k8s_openapi::jiff::Timestamp;
use std::io::Write;

/// kubectl's `-o name` prefix for CRDs.
const CRD_PREFIX: &str = "customresourcedefinition.apiextensions.k8s.io";

/// `kubectl crd list`: the summary in table, wide, csv and name formats; the
/// CustomResourceDefinitions themselves in JSON and YAML, as `kubectl get crd -o json|yaml`
/// prints them (a `List`).
pub async fn list(s: &Session, out: &mut dyn Write) -> anyhow::Result<()> {
    let text = match s.config.output {
        OutputFormat::Json | OutputFormat::Yaml | OutputFormat::JsonPath | OutputFormat::CustomColumns => {
            // Read as JSON, not through the typed CRD, so numbers stay as the server wrote
            // them (a schema's `minimum: 0`, not `0.0`).
            let crds = s.resolve("customresourcedefinitions.apiextensions.k8s.io").await?;
            let query = listing::Query::default();
            let found =
                listing::fetch(s.client(), &crds, &query, listing::Shape::Objects).await.map_err(|e| s.err(e))?;
            render_crds(found.objects, s.config.output)?
        }
        // Names need no counts: one request.
        OutputFormat::Name => {
            let crds = registrations::list_crd_summaries(s.client()).await.map_err(|e| s.err(e))?;
            let regs: Vec<Registration> = crds.iter().map(|crd| Registration::from_crd(crd, None)).collect();
            render_list(&regs, OutputFormat::Name, Timestamp::now())
        }
        // kubectl prints a table once it is whole (its columns are as wide as their widest
        // cell), so the counts are taken first: one small request per CRD, a few at a time.
        format => {
            let regs = counts::list_registrations(s.client()).await.map_err(|e| s.err(e))?;
            if regs.is_empty() && matches!(format, OutputFormat::Table | OutputFormat::Wide) {
                eprintln!("No CustomResourceDefinitions found");
                return Ok(());
            }
            render_list(&regs, format, Timestamp::now())
        }
    };
    write!(out, "{text}")?;
    Ok(())
}

/// CRDs as kubectl prints a list of them in JSON or YAML.
pub fn render_crds(crds: Vec<serde_json::Value>, format: OutputFormat) -> anyhow::Result<String> {
    let list = output::list_of(crds);
    Ok(if format == OutputFormat::Yaml { output::yaml(&list)? } else { output::json(&list)? })
}

/// The summary of `list` in `format` (table, wide, csv or name).
pub fn render_list(regs: &[Registration], format: OutputFormat, now: Timestamp) -> String {
    match format {
        OutputFormat::Name => regs.iter().map(|r| format!("{CRD_PREFIX}/{}\n", r.name)).collect(),
        OutputFormat::Csv => list_rows(regs, now).render_csv(),
        other => list_rows(regs, now).render(other == OutputFormat::Wide),
    }
}

fn list_rows(regs: &[Registration], now: Timestamp) -> Rows {
    let mut rows = Rows::new(&[
        "NAME",
        "GROUP",
        "KIND",
        "SCOPE",
        "VERSIONS",
        "ESTABLISHED",
        "NAMESACCEPTED",
        "TERMINATING",
        "RESOURCES",
        "AGE",
    ])
    .wide_column("SHORTNAMES")
    .wide_column("STORAGE")
    .wide_column("SUBRESOURCES")
    .wide_column("REASON");
    for r in regs {
        let subresources = {
            let mut subs = Vec::new();
            if r.versions.iter().any(|v| v.status_subresource) {
                subs.push("status");
            }
            if r.versions.iter().any(|v| v.scale_subresource) {
                subs.push("scale");
            }
            subs.join(",")
        };
        rows.push(vec![
            r.name.clone(),
            r.group.clone(),
            r.kind.clone(),
            r.scope.clone(),
            r.versions.iter().map(|v| v.name.as_str()).collect::<Vec<_>>().join(","),
            condition_cell(r.established),
            condition_cell(r.names_accepted),
            // Spelled as the condition columns beside it (the Terminating condition's status).
            if r.terminating { "True" } else { "False" }.to_string(),
            r.resources.map_or_else(|| "-".to_string(), |n| n.to_string()),
            r.created.map_or_else(|| "<unknown>".to_string(), |t| age(t, now)),
            none_if_empty(r.short_names.join(",")),
            r.storage_version().unwrap_or("-").to_string(),
            none_if_empty(subresources),
            none_if_empty(r.reason.clone().unwrap_or_default()),
        ]);
    }
    rows
}

fn condition_cell(c: ConditionStatus) -> String {
    match c {
        ConditionStatus::Missing => "-".into(),
        other => other.as_str().into(),
    }
}

fn none_if_empty(s: String) -> String {
    if s.is_empty() { "<none>".into() } else { s }
}

/// `kubectl crd describe NAME`.
pub async fn describe(s: &Session, word: &str, out: &mut dyn Write) -> anyhow::Result<()> {
    let crd = registrations::find_crd(s.client(), word).await.map_err(|e| s.err(e))?;
    let count = counts::count_resources(s.client(), &crd).await.ok().flatten();
    let d = Description::from_crd(&crd, count);
    let text = match s.config.output {
        OutputFormat::Json | OutputFormat::JsonPath | OutputFormat::CustomColumns => output::json(&d)?,
        OutputFormat::Yaml => output::yaml(&d)?,
        OutputFormat::Name => format!("{CRD_PREFIX}/{}\n", d.name),
        OutputFormat::Csv => describe_csv(&d),
        OutputFormat::Table | OutputFormat::Wide | OutputFormat::Junit => {
            let now = Timestamp::now();
            let mut text = render_description(&d, now);
            let preview = match column_preview::sample(s.client(), &crd, now).await {
                Ok(p) => column_preview::describe_lines(&p),
                Err(e) => vec![format!("Printer columns: no preview: {e}")],
            };
            for line in schema_fields::describe_lines(&crd).into_iter().chain(preview) {
                text.push_str(&line);
                text.push('\n');
            }
            text.push_str(&webhooks_text(webhooks::for_crd(s.client(), &crd).await));
            text
        }
    };
    write!(out, "{text}")?;
    Ok(())
}

/// The webhooks section of `describe`: the conversion webhook and the admission webhooks
/// the CRD's objects go through, or why they could not be read.
fn webhooks_text(found: Result<Vec<webhooks::WebhookLine>, crate::cluster::ClusterError>) -> String {
    let lines = match found {
        Ok(lines) if lines.is_empty() => return "Webhooks: <none>\n".into(),
        Ok(lines) => lines,
        Err(e) => return format!("Webhooks: unknown: {e}\n"),
    };
    let mut rows = vec![
        ["KIND", "CONFIGURATION", "WEBHOOK", "OPERATIONS", "RESOURCES", "FAILURE", "TARGET"].map(String::from).to_vec(),
    ];
    for l in lines {
        rows.push(vec![
            l.kind.to_string(),
            dash(&l.configuration),
            dash(&l.name),
            dash(&l.operations.join(",")),
            l.resources.join(","),
            dash(&l.failure_policy),
            l.target,
        ]);
    }
    format!("Webhooks:\n{}", indent(&tabwrite(&rows), 2))
}

/// `describe` as text, kubectl-describe style.
pub fn render_description(d: &Description, now: Timestamp) -> String {
    let mut top = vec![
        vec!["Name:".to_string(), d.name.clone()],
        vec!["Group:".to_string(), d.group.clone()],
        vec!["Scope:".to_string(), d.scope.clone()],
        vec!["Age:".to_string(), d.created.map_or_else(|| "<unknown>".into(), |t| age(t, now))],
        vec!["Resources:".to_string(), d.resources.map_or_else(|| "- (not served)".into(), |n| n.to_string())],
    ];
    if d.deleting {
        top.push(vec!["Deleting:".into(), "yes (waiting for its custom resources to go)".into()]);
    }
    let mut text = tabwrite(&top);

    text.push_str("Names:\n");
    let mut names = vec![vec!["FIELD".to_string(), "SPEC".into(), "ACCEPTED".into(), String::new()]];
    for n in &d.names {
        let mark = if n.differs { "<- differs" } else { "" };
        names.push(vec![n.field.to_string(), dash(&n.spec), dash(&n.accepted), mark.to_string()]);
    }
    text.push_str(&indent(&trim_lines(&tabwrite(&names)), 2));

    text.push_str("Conditions:\n");
    if d.conditions.is_empty() {
        text.push_str("  <none>\n");
    } else {
        let mut rows = vec![["TYPE", "STATUS", "REASON", "AGE", "MESSAGE"].map(String::from).to_vec()];
        for c in &d.conditions {
            rows.push(vec![
                c.type_.clone(),
                c.status.clone(),
                dash(&c.reason),
                c.last_transition_time.map_or_else(|| "-".into(), |t| age(t, now)),
                c.message.clone(),
            ]);
        }
        text.push_str(&indent(&tabwrite(&rows), 2));
    }

    text.push_str("Versions:\n");
    let mut versions = vec![["NAME", "SERVED", "STORAGE", "DEPRECATED", "SUBRESOURCES"].map(String::from).to_vec()];
    for v in &d.versions {
        let mut subs = Vec::new();
        if v.status_subresource {
            subs.push("status");
        }
        if v.scale.is_some() {
            subs.push("scale");
        }
        versions.push(vec![
            v.name.clone(),
            v.served.to_string(),
            v.storage.to_string(),
            v.deprecated.to_string(),
            if subs.is_empty() { "<none>".into() } else { subs.join(",") },
        ]);
    }
    text.push_str(&indent(&tabwrite(&versions), 2));

    for v in &d.versions {
        text.push_str(&format!("Version {}:\n", v.name));
        if let Some(w) = &v.deprecation_warning {
            text.push_str(&format!("  Deprecation warning: {w}\n"));
        }
        if let Some(scale) = &v.scale {
            text.push_str(&format!(
                "  Scale: replicas {} (spec), {} (status), selector {}\n",
                scale.spec_replicas_path,
                scale.status_replicas_path,
                scale.label_selector_path.as_deref().unwrap_or("<none>")
            ));
        }
        text.push_str("  Printer columns:\n");
        if v.printer_columns.is_empty() {
            text.push_str("    <none> (the server shows Name and Age)\n");
        } else {
            let mut cols = vec![["NAME", "TYPE", "JSONPATH", "PRIORITY"].map(String::from).to_vec()];
            for c in &v.printer_columns {
                cols.push(vec![c.name.clone(), c.type_.clone(), c.json_path.clone(), c.priority.to_string()]);
            }
            text.push_str(&indent(&tabwrite(&cols), 4));
        }
        text.push_str("  Schema fields:\n");
        if v.schema_fields.is_empty() {
            text.push_str("    <none>\n");
        } else {
            let mut fields = vec![["FIELD", "TYPE", "REQUIRED", "DESCRIPTION"].map(String::from).to_vec()];
            for f in &v.schema_fields {
                let description = f.description.lines().next().unwrap_or_default().to_string();
                fields.push(vec![f.name.clone(), dash(&f.type_), f.required.to_string(), description]);
            }
            text.push_str(&indent(&trim_lines(&tabwrite(&fields)), 4));
        }
    }
    text
}

/// `describe -o csv`: one `FIELD,VALUE` row per fact, dotted paths as in the JSON output.
fn describe_csv(d: &Description) -> String {
    let mut rows = Rows::new(&["FIELD", "VALUE"]);
    if let Ok(value) = serde_json::to_value(d) {
        flatten("", &value, &mut rows);
    }
    rows.render_csv()
}

/// Flattens a JSON value into `path,value` rows (`names.0.field`, `conditions.1.reason`).
pub fn flatten(prefix: &str, value: &serde_json::Value, rows: &mut Rows) {
    use serde_json::Value;
    let join = |k: &str| if prefix.is_empty() { k.to_string() } else { format!("{prefix}.{k}") };
    match value {
        Value::Object(map) => map.iter().for_each(|(k, v)| flatten(&join(k), v, rows)),
        Value::Array(items) => items.iter().enumerate().for_each(|(i, v)| flatten(&join(&i.to_string()), v, rows)),
        Value::Null => rows.push(vec![prefix.to_string(), String::new()]),
        Value::String(s) => rows.push(vec![prefix.to_string(), s.clone()]),
        other => rows.push(vec![prefix.to_string(), other.to_string()]),
    }
}

fn dash(s: &str) -> String {
    if s.is_empty() { "-".into() } else { s.to_string() }
}

/// Drops the spaces a trailing empty column leaves.
fn trim_lines(text: &str) -> String {
    text.lines().map(|l| format!("{}\n", l.trim_end())).collect()
}

fn indent(text: &str, by: usize) -> String {
    let pad = " ".repeat(by);
    text.lines().map(|l| format!("{pad}{l}\n")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::registrations::tests::crd;
    use serde_json::json;

    fn now() -> Timestamp {
        "2026-11-22T02:41:54Z".parse().expect("ts")
    }

    fn regs() -> Vec<Registration> {
        let widget = crd(
            "widgets",
            "Widget",
            &["wd"],
            json!({
                "acceptedNames": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList", "shortNames": ["wd"]},
                "conditions": [
                    {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": "no conflicts found", "lastTransitionTime": "2026-11-22T02:36:54Z"},
                    {"type": "Established", "status": "True", "reason": "InitialNamesAccepted", "message": "the initial names have been accepted", "lastTransitionTime": "2026-11-22T02:36:54Z"}
                ]
            }),
        );
        let gadget = crd(
            "gadgets",
            "Gadget",
            &["wd"],
            json!({
                "acceptedNames": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
                "conditions": [
                    {"type": "NamesAccepted", "status": "False", "reason": "ShortNamesConflict", "message": "\"wd\" is already in use", "lastTransitionTime": "2026-11-22T02:36:55Z"},
                    {"type": "Established", "status": "False", "reason": "NotAccepted", "message": "not all names are accepted", "lastTransitionTime": "2026-11-22T02:36:55Z"}
                ]
            }),
        );
        vec![Registration::from_crd(&gadget, None), Registration::from_crd(&widget, Some(3))]
    }

    #[test]
    fn list_as_a_table_and_wide() {
        assert_eq!(
            render_list(&regs(), OutputFormat::Table, now()),
            "\
NAME                         GROUP                KIND     SCOPE        VERSIONS   ESTABLISHED   NAMESACCEPTED   TERMINATING   RESOURCES   AGE
gadgets.stable.example.com   stable.example.com   Gadget   Namespaced   v1         False         False           False         -           5m
widgets.stable.example.com   stable.example.com   Widget   Namespaced   v1         True          True            False         3           5m
"
        );
        let wide = render_list(&regs(), OutputFormat::Wide, now());
        let lines: Vec<&str> = wide.lines().collect();
        assert!(lines[0].ends_with("AGE   SHORTNAMES   STORAGE   SUBRESOURCES   REASON"), "{wide}");
        assert!(lines[1].ends_with("5m    wd           v1        status,scale   ShortNamesConflict"), "{wide}");
        assert!(lines[2].ends_with("5m    wd           v1        status,scale   <none>"), "{wide}");
    }

    #[test]
    fn list_as_csv_json_yaml_and_names() {
        assert_eq!(
            render_list(&regs(), OutputFormat::Csv, now()),
            "\
NAME,GROUP,KIND,SCOPE,VERSIONS,ESTABLISHED,NAMESACCEPTED,TERMINATING,RESOURCES,AGE,SHORTNAMES,STORAGE,SUBRESOURCES,REASON
gadgets.stable.example.com,stable.example.com,Gadget,Namespaced,v1,False,False,False,-,5m,wd,v1,\"status,scale\",ShortNamesConflict
widgets.stable.example.com,stable.example.com,Widget,Namespaced,v1,True,True,False,3,5m,wd,v1,\"status,scale\",<none>
"
        );
        assert_eq!(
            render_list(&regs(), OutputFormat::Name, now()),
            "customresourcedefinition.apiextensions.k8s.io/gadgets.stable.example.com\ncustomresourcedefinition.apiextensions.k8s.io/widgets.stable.example.com\n"
        );
        let gadget = serde_json::to_value(crd("gadgets", "Gadget", &["wd"], json!({}))).expect("json");
        let json: serde_json::Value =
            serde_json::from_str(&render_crds(vec![gadget.clone()], OutputFormat::Json).expect("json"))
                .expect("parses");
        assert_eq!((&json["kind"], &json["apiVersion"]), (&json!("List"), &json!("v1")));
        assert_eq!(json["items"][0]["kind"], "CustomResourceDefinition");
        assert_eq!(json["items"][0]["metadata"]["name"], "gadgets.stable.example.com");
        let yaml = render_crds(vec![gadget], OutputFormat::Yaml).expect("yaml");
        assert!(yaml.starts_with("apiVersion: v1\nitems:\n- apiVersion: apiextensions.k8s.io/v1\n"), "{yaml}");
    }

    #[test]
    fn describe_shows_names_conditions_versions_and_schema() {
        let gadget = crd(
            "gadgets",
            "Gadget",
            &["wd"],
            json!({
                "acceptedNames": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
                "conditions": [
                    {"type": "NamesAccepted", "status": "False", "reason": "ShortNamesConflict", "message": "\"wd\" is already in use", "lastTransitionTime": "2026-11-22T02:36:55Z"}
                ]
            }),
        );
        let text = render_description(&Description::from_crd(&gadget, None), now());
        assert_eq!(
            text,
            "\
Name:        gadgets.stable.example.com
Group:       stable.example.com
Scope:       Namespaced
Age:         5m
Resources:   - (not served)
Names:
  FIELD        SPEC         ACCEPTED
  plural       gadgets      gadgets
  singular     gadget       gadget
  kind         Gadget       Gadget
  listKind     GadgetList   GadgetList
  shortNames   wd           -            <- differs
  categories   -            -
Conditions:
  TYPE            STATUS   REASON               AGE     MESSAGE
  NamesAccepted   False    ShortNamesConflict   4m59s   \"wd\" is already in use
Versions:
  NAME   SERVED   STORAGE   DEPRECATED   SUBRESOURCES
  v1     true     true      false        status,scale
Version v1:
  Scale: replicas .spec.replicas (spec), .status.replicas (status), selector <none>
  Printer columns:
    NAME    TYPE     JSONPATH      PRIORITY
    Color   string   .spec.color   0
  Schema fields:
    FIELD    TYPE       REQUIRED   DESCRIPTION
    spec     object     true       What the user wants.
    status   object     false
    tags     []string   false
"
        );
        let csv = describe_csv(&Description::from_crd(&gadget, None));
        assert!(
            csv.contains("\nnames.4.accepted,\nnames.4.differs,true\nnames.4.field,shortNames\nnames.4.spec,wd\n"),
            "{csv}"
        );
    }
}
