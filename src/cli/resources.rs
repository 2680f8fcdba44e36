//! Custom resources: `get` (the server's Table columns), `status get|set|patch|edit`,
//! `spec edit` and `scale`. Each resolves the resource name through discovery first, so
//! a kind, plural, singular or short name works as it does with kubectl.

use super::args::{OutputFormat, SpecAction, StatusAction};
use super::output::{self, Rows, cell_text};
use super::session::{Session, parse_one, read_inputs};
use crate::cluster::edit::is_blank;
use crate::cluster::editor;
use crate::cluster::objects::{self, ObjectRef, Retry, ScaleView, parse_status_document, spec_view};
use crate::cluster::table::{Table, fetch_table};
use crate::cluster::{ClusterError, ResourceType};
use serde_json::Value;
use std::io::Write;

/// The header kubectl puts on a file to edit, adapted to what we write back.
fn edit_header(what: &str, endpoint: &str) -> String {
    format!(
        "# Please edit the {what} below. Lines beginning with a '#' will be ignored,\n\
         # and an empty file will abort the edit. The result is written to {endpoint}.\n#\n"
    )
}

/// `kubectl crd get RESOURCE [NAME] [-l SELECTOR]`.
pub async fn get(
    s: &Session,
    word: &str,
    name: Option<&str>,
    selector: Option<&str>,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    if name.is_some() && s.list_namespace().is_none() {
        return Err(
            super::CliError::Usage("a resource cannot be retrieved by name across all namespaces".into()).into()
        );
    }
    let rt = s.resolve(word).await?;
    let namespace = if name.is_some() { Some(s.namespace()) } else { s.list_namespace() };
    let with_namespace = rt.namespaced && namespace.is_none();
    match s.config.output {
        OutputFormat::Table | OutputFormat::Wide | OutputFormat::Csv => {
            let table = fetch_table(s.client(), &rt, namespace, name, selector).await.map_err(|e| s.err(e))?;
            if table.rows.is_empty() {
                eprintln!("{}", no_resources(&rt, namespace));
                return Ok(());
            }
            let rows = table_rows(&table, with_namespace);
            let text = match s.config.output {
                OutputFormat::Csv => rows.render_csv(),
                format => rows.render(format == OutputFormat::Wide),
            };
            write!(out, "{text}")?;
        }
        format => {
            let objects: Vec<Value> = match name {
                Some(n) => {
                    let obj = objects::get_object(s.client(), ObjectRef::new(&rt, s.namespace(), n))
                        .await
                        .map_err(|e| s.err(e))?;
                    vec![serde_json::to_value(obj)?]
                }
                None => objects::list_objects(s.client(), &rt, namespace, selector)
                    .await
                    .map_err(|e| s.err(e))?
                    .into_iter()
                    .map(serde_json::to_value)
                    .collect::<Result<_, _>>()?,
            };
            if objects.is_empty() && format == OutputFormat::Name {
                eprintln!("{}", no_resources(&rt, namespace));
                return Ok(());
            }
            write!(out, "{}", render_objects(&rt, objects, name.is_some(), format)?)?;
        }
    }
    Ok(())
}

/// kubectl's message for an empty list (printed to stderr).
fn no_resources(rt: &ResourceType, namespace: Option<&str>) -> String {
    match namespace {
        Some(ns) if rt.namespaced => format!("No resources found in {ns} namespace."),
        _ => "No resources found".to_string(),
    }
}

/// The server's Table as printable rows: NAMESPACE first with `-A`, priority columns wide.
pub fn table_rows(table: &Table, with_namespace: bool) -> Rows {
    let mut rows = Rows::default();
    if with_namespace {
        rows.headers.push("NAMESPACE".into());
        rows.wide_only.push(false);
    }
    for c in &table.columns {
        rows.headers.push(c.name.to_uppercase());
        rows.wide_only.push(c.priority > 0);
    }
    for r in &table.rows {
        let mut cells = Vec::with_capacity(rows.headers.len());
        if with_namespace {
            cells.push(r.namespace.clone().unwrap_or_default());
        }
        // Like kubectl, cells beyond the column definitions are dropped.
        cells.extend(r.cells.iter().take(table.columns.len()).map(cell_text));
        rows.push(cells);
    }
    rows
}

/// Objects as JSON, YAML or names: one object alone, several in a `List`.
pub fn render_objects(
    rt: &ResourceType,
    objects: Vec<Value>,
    single: bool,
    format: OutputFormat,
) -> anyhow::Result<String> {
    Ok(match format {
        OutputFormat::Name => objects
            .iter()
            .map(|o| format!("{}/{}\n", rt.name_prefix(), o["metadata"]["name"].as_str().unwrap_or_default()))
            .collect(),
        OutputFormat::Yaml if single => objects.first().map(output::yaml).transpose()?.unwrap_or_default(),
        OutputFormat::Json if single => objects.first().map(output::json).transpose()?.unwrap_or_default(),
        OutputFormat::Yaml => output::yaml(&output::list_of(objects))?,
        _ => output::json(&output::list_of(objects))?,
    })
}

/// `{"status": ...}` of an object as the status commands print and edit it.
fn status_document(obj: &kube::api::DynamicObject) -> Value {
    crate::cluster::edit::status_document(objects::status_of(obj))
}

/// Prints a status (for `status get`) in the configured format.
fn print_status(
    s: &Session,
    rt: &ResourceType,
    obj: &kube::api::DynamicObject,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let doc = status_document(obj);
    let text = match s.config.output {
        OutputFormat::Json => output::json(&doc)?,
        OutputFormat::Name => format!("{}/{}\n", rt.name_prefix(), obj.metadata.name.as_deref().unwrap_or_default()),
        OutputFormat::Csv => {
            let mut rows = Rows::new(&["FIELD", "VALUE"]);
            super::registrations::flatten("status", &doc["status"], &mut rows);
            rows.render_csv()
        }
        OutputFormat::Yaml | OutputFormat::Table | OutputFormat::Wide => output::yaml(&doc)?,
    };
    write!(out, "{text}")?;
    Ok(())
}

/// After a write: the object in JSON/YAML, else kubectl's `kind.group/name verb` line.
fn print_written(
    s: &Session,
    rt: &ResourceType,
    obj: &kube::api::DynamicObject,
    verb: &str,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let name = obj.metadata.name.as_deref().unwrap_or_default();
    let text = match s.config.output {
        OutputFormat::Json => output::json(obj)?,
        OutputFormat::Yaml => output::yaml(obj)?,
        OutputFormat::Name => format!("{}/{name}\n", rt.name_prefix()),
        _ => format!("{}/{name} {verb}\n", rt.name_prefix()),
    };
    write!(out, "{text}")?;
    Ok(())
}

/// `kubectl crd status ...`.
pub async fn status(s: &Session, action: &StatusAction, out: &mut dyn Write) -> anyhow::Result<()> {
    match action {
        StatusAction::Get { target } => {
            let (resource, name) = target.parts("status get")?;
            let rt = s.resolve(resource).await?;
            let at = ObjectRef::new(&rt, s.namespace(), name);
            let obj = objects::get_status(s.client(), at).await.map_err(|e| s.err(e))?;
            print_status(s, &rt, &obj, out)
        }
        StatusAction::Set { target, filename, retry_conflicts } => {
            let (resource, name) = target.parts("status set")?;
            let (source, doc) = read_document(filename, "status document")?;
            let rt = s.resolve(resource).await?;
            let at = ObjectRef::new(&rt, s.namespace(), name);
            let doc = parse_status_document(&doc, &source, at)?;
            // The file is the whole status the user wants, on whichever version.
            let retry = if *retry_conflicts { Retry::Overwrite } else { Retry::No };
            let obj = objects::replace_status(s.client(), at, &doc, retry).await.map_err(|e| s.err(e))?;
            print_written(s, &rt, &obj, "status replaced", out)
        }
        StatusAction::Patch { target, filename } => {
            let (resource, name) = target.parts("status patch")?;
            let (source, doc) = read_document(filename, "status document")?;
            let rt = s.resolve(resource).await?;
            let at = ObjectRef::new(&rt, s.namespace(), name);
            let doc = parse_status_document(&doc, &source, at)?;
            let before = objects::get_status(s.client(), at).await.map_err(|e| s.err(e))?;
            let obj = objects::patch_status(s.client(), at, &doc.status).await.map_err(|e| s.err(e))?;
            let verb = if obj.metadata.resource_version == before.metadata.resource_version {
                "status patched (no change)"
            } else {
                "status patched"
            };
            print_written(s, &rt, &obj, verb, out)
        }
        StatusAction::Edit { target, retry_conflicts } => {
            let (resource, name) = target.parts("status edit")?;
            let rt = s.resolve(resource).await?;
            let at = ObjectRef::new(&rt, s.namespace(), name);
            let obj = objects::get_status(s.client(), at).await.map_err(|e| s.err(e))?;
            let original = status_document(&obj);
            let text = format!("{}{}", edit_header("status", "the /status subresource"), output::yaml(&original)?);
            let Some((edited, file)) = edit_document(&text, name, &original)? else {
                eprintln!("Edit cancelled, no changes made.");
                return Ok(());
            };
            let source = file.path().display().to_string();
            let doc = match parse_status_document(&edited, &source, at) {
                Ok(doc) => doc,
                Err(e) => return Err(keep_on_error(file, e.into())),
            };
            // The edit was made on this version; a change by someone else meanwhile is a
            // conflict, or with --retry-conflicts the user's changes alone are re-applied.
            let doc = objects::StatusDocument { resource_version: obj.metadata.resource_version.clone(), ..doc };
            let retry = if *retry_conflicts { Retry::Reapply(&original) } else { Retry::No };
            match objects::replace_status(s.client(), at, &doc, retry).await {
                Ok(obj) => print_written(s, &rt, &obj, "status edited", out),
                Err(e) => Err(keep_on_error(file, s.err(e))),
            }
        }
    }
}

/// `kubectl crd spec edit`.
pub async fn spec(s: &Session, action: &SpecAction, out: &mut dyn Write) -> anyhow::Result<()> {
    let SpecAction::Edit { target, retry_conflicts } = action;
    let (resource, name) = target.parts("spec edit")?;
    let rt = s.resolve(resource).await?;
    let at = ObjectRef::new(&rt, s.namespace(), name);
    let obj = objects::get_object(s.client(), at).await.map_err(|e| s.err(e))?;
    let view = spec_view(&obj).map_err(|e| s.err(e))?;
    let header = edit_header("object (its status is left out and kept as it is)", "the main endpoint");
    let text = format!("{header}{}", output::yaml(&view.object)?);
    let Some((edited, file)) = edit_document(&text, name, &view.object)? else {
        eprintln!("Edit cancelled, no changes made.");
        return Ok(());
    };
    let source = file.path().display().to_string();
    let retry = if *retry_conflicts { Retry::Reapply(&view.object) } else { Retry::No };
    match objects::replace_spec(s.client(), at, &edited, &source, retry).await {
        Ok(obj) => print_written(s, &rt, &obj, "edited", out),
        Err(e) => Err(keep_on_error(file, s.err(e))),
    }
}

/// Runs the editor; `None` when the user saved nothing or nothing new.
fn edit_document(text: &str, name: &str, original: &Value) -> anyhow::Result<Option<(Value, editor::EditFile)>> {
    let (edited, file) = editor::edit(text, name)?;
    if is_blank(&edited) {
        return Ok(None);
    }
    let source = file.path().display().to_string();
    let value = match parse_one(&edited, &source, "edited document") {
        Ok(v) => v,
        Err(e) => return Err(keep_on_error(file, e.into())),
    };
    if &value == original {
        return Ok(None);
    }
    Ok(Some((value, file)))
}

/// Keeps the edited file and says where, as kubectl does when a write fails.
fn keep_on_error(file: editor::EditFile, err: anyhow::Error) -> anyhow::Error {
    let path = file.keep();
    err.context(format!("A copy of your changes has been stored to {:?}", path.display().to_string()))
}

fn read_document(filename: &str, what: &'static str) -> Result<(String, Value), ClusterError> {
    let mut inputs = read_inputs(std::slice::from_ref(&filename.to_string()))?;
    if inputs.len() != 1 {
        return Err(ClusterError::InvalidInput { what, source_name: filename.into(), reason: "give one file".into() });
    }
    let input = inputs.remove(0);
    let value = parse_one(&input.text, &input.source, what)?;
    Ok((input.source, value))
}

/// Parses `--replicas`/`--current-replicas`: a whole number from 0 to 2^31-1.
pub fn parse_replicas(flag: &str, raw: &str) -> Result<i32, super::CliError> {
    let invalid = |why: &str| super::CliError::Usage(format!("invalid --{flag} {raw:?}: {why}"));
    let count = raw.trim().parse::<i64>().ok().filter(|n| *n >= 0);
    let count = count.ok_or_else(|| invalid("the number of replicas must be a whole number, 0 or more"))?;
    // A Scale's replicas are an int32.
    i32::try_from(count).map_err(|_| invalid(&format!("the number of replicas can be at most {}", i32::MAX)))
}

/// `kubectl crd scale RESOURCE NAME [--replicas N [--current-replicas M]]`.
pub async fn scale(
    s: &Session,
    resource: &str,
    name: &str,
    replicas: Option<i32>,
    current: Option<i32>,
    retry: bool,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let rt = s.resolve(resource).await?;
    let at = ObjectRef::new(&rt, s.namespace(), name);
    let format = s.config.output;
    let Some(replicas) = replicas else {
        let (scale, view) = objects::get_scale(s.client(), at).await.map_err(|e| s.err(e))?;
        let text = match format {
            OutputFormat::Json => output::json(&scale)?,
            OutputFormat::Yaml => output::yaml(&scale)?,
            OutputFormat::Name => format!("{}/{name}\n", rt.name_prefix()),
            OutputFormat::Csv => scale_rows(name, &view).render_csv(),
            OutputFormat::Table | OutputFormat::Wide => scale_rows(name, &view).render(true),
        };
        write!(out, "{text}")?;
        return Ok(());
    };
    let view = objects::set_scale(s.client(), at, replicas, current, retry).await.map_err(|e| s.err(e))?;
    let text = match format {
        OutputFormat::Json | OutputFormat::Yaml => {
            let (scale, _) = objects::get_scale(s.client(), at).await.map_err(|e| s.err(e))?;
            if format == OutputFormat::Json { output::json(&scale)? } else { output::yaml(&scale)? }
        }
        OutputFormat::Name => format!("{}/{name}\n", rt.name_prefix()),
        OutputFormat::Csv => scale_rows(name, &view).render_csv(),
        OutputFormat::Table | OutputFormat::Wide => format!("{}/{name} scaled\n", rt.name_prefix()),
    };
    write!(out, "{text}")?;
    Ok(())
}

/// `scale` without `--replicas`: desired, current and selector.
pub fn scale_rows(name: &str, view: &ScaleView) -> Rows {
    let mut rows = Rows::new(&["NAME", "DESIRED", "CURRENT", "SELECTOR"]);
    rows.push(vec![
        name.to_string(),
        view.desired.to_string(),
        view.current.to_string(),
        view.selector.clone().unwrap_or_else(|| "<none>".into()),
    ]);
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::table::{TableColumn, TableRow};
    use serde_json::json;

    fn column(name: &str, priority: i32) -> TableColumn {
        TableColumn {
            name: name.into(),
            type_: "string".into(),
            format: String::new(),
            description: String::new(),
            priority,
        }
    }

    fn table() -> Table {
        let row = |ns: &str, cells: Value| TableRow {
            cells: cells.as_array().cloned().unwrap_or_default(),
            name: String::new(),
            namespace: Some(ns.into()),
            created: None,
        };
        Table {
            columns: vec![
                column("Name", 0),
                column("Color", 0),
                column("Replicas", 0),
                column("Phase", 1),
                column("Age", 0),
            ],
            rows: vec![
                row("default", json!(["w1", "blue", 5, "Ready", "5s"])),
                row("team-a", json!(["w2", "green", 2, null, "1s", "extra"])),
            ],
            from_server: true,
        }
    }

    #[test]
    fn server_tables_print_like_kubectl_get() {
        assert_eq!(
            table_rows(&table(), false).render(false),
            "NAME   COLOR   REPLICAS   AGE\nw1     blue    5          5s\nw2     green   2          1s\n"
        );
        assert_eq!(
            table_rows(&table(), true).render(true),
            "NAMESPACE   NAME   COLOR   REPLICAS   PHASE   AGE\ndefault     w1     blue    5          Ready   5s\nteam-a      w2     green   2                  1s\n"
        );
        assert_eq!(
            table_rows(&table(), false).render_csv(),
            "NAME,COLOR,REPLICAS,PHASE,AGE\nw1,blue,5,Ready,5s\nw2,green,2,,1s\n"
        );
    }

    #[test]
    fn objects_print_alone_or_in_a_list() {
        let mut rt = crate::cluster::discovery::tests::resource("stable.example.com", "v1", "Widget", "widgets", &[]);
        rt.namespaced = true;
        let objs = vec![
            json!({"kind": "Widget", "metadata": {"name": "w1"}}),
            json!({"kind": "Widget", "metadata": {"name": "w2"}}),
        ];
        assert_eq!(
            render_objects(&rt, objs.clone(), false, OutputFormat::Name).expect("names"),
            "widget.stable.example.com/w1\nwidget.stable.example.com/w2\n"
        );
        let list: Value =
            serde_json::from_str(&render_objects(&rt, objs.clone(), false, OutputFormat::Json).expect("json"))
                .expect("parses");
        assert_eq!(list["kind"], "List");
        assert_eq!(list["items"][1]["metadata"]["name"], "w2");
        assert_eq!(
            render_objects(&rt, objs[..1].to_vec(), true, OutputFormat::Yaml).expect("yaml"),
            "kind: Widget\nmetadata:\n  name: w1\n"
        );
    }

    #[test]
    fn replicas_must_be_whole_and_not_negative() {
        assert_eq!(parse_replicas("replicas", "0").expect("zero"), 0);
        assert_eq!(parse_replicas("replicas", "12").expect("twelve"), 12);
        for bad in ["-1", "1.5", "many", ""] {
            let e = parse_replicas("replicas", bad).expect_err(bad);
            assert!(e.to_string().contains("must be a whole number, 0 or more"), "{e}");
        }
        let e = parse_replicas("replicas", "99999999999").expect_err("too many");
        assert!(e.to_string().ends_with("can be at most 2147483647"), "{e}");
        let view = ScaleView { desired: 3, current: 2, selector: Some("app=w1".into()), resource_version: None };
        assert_eq!(
            scale_rows("w1", &view).render(false),
            "NAME   DESIRED   CURRENT   SELECTOR\nw1     3         2         app=w1\n"
        );
    }
}
