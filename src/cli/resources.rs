//! Custom resources: `status get|set|patch|edit`, `spec edit` and `scale` (`get` is in
//! [`super::get`]). Each resolves the resource name through discovery first, so
//! a kind, plural, singular or short name works as it does with kubectl.

use super::args::{OutputFormat, SpecAction, StatusAction};
use super::output::{self, Rows};
use super::session::{Session, parse_one, read_inputs};
use crate::cluster::edit::is_blank;
use crate::cluster::editor;
use crate::cluster::objects::{self, ObjectRef, Retry, ScaleView, parse_status_document, spec_view};
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
        OutputFormat::Json | OutputFormat::JsonPath | OutputFormat::CustomColumns => output::json(&doc)?,
        OutputFormat::Name => format!("{}/{}\n", rt.name_prefix(), obj.metadata.name.as_deref().unwrap_or_default()),
        OutputFormat::Csv => {
            let mut rows = Rows::new(&["FIELD", "VALUE"]);
            super::registrations::flatten("status", &doc["status"], &mut rows);
            rows.render_csv()
        }
        OutputFormat::Yaml | OutputFormat::Table | OutputFormat::Wide | OutputFormat::Junit => output::yaml(&doc)?,
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
            let obj = objects::replace_status(s.client(), at, &doc, retry, crate::cluster::managers::EDIT)
                .await
                .map_err(|e| s.err(e))?;
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
            match objects::replace_status(s.client(), at, &doc, retry, crate::cluster::managers::EDIT).await {
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
            OutputFormat::Json | OutputFormat::JsonPath | OutputFormat::CustomColumns => output::json(&scale)?,
            OutputFormat::Yaml => output::yaml(&scale)?,
            OutputFormat::Name => format!("{}/{name}\n", rt.name_prefix()),
            OutputFormat::Csv => scale_rows(name, &view).render_csv(),
            OutputFormat::Table | OutputFormat::Wide | OutputFormat::Junit => scale_rows(name, &view).render(true),
        };
        write!(out, "{text}")?;
        return Ok(());
    };
    let view = objects::set_scale(s.client(), at, replicas, current, retry).await.map_err(|e| s.err(e))?;
    let text = match format {
        OutputFormat::Json | OutputFormat::Yaml | OutputFormat::JsonPath | OutputFormat::CustomColumns => {
            let (scale, _) = objects::get_scale(s.client(), at).await.map_err(|e| s.err(e))?;
            if format == OutputFormat::Json { output::json(&scale)? } else { output::yaml(&scale)? }
        }
        OutputFormat::Name => format!("{}/{name}\n", rt.name_prefix()),
        OutputFormat::Csv => scale_rows(name, &view).render_csv(),
        OutputFormat::Table | OutputFormat::Wide | OutputFormat::Junit => {
            format!("{}/{name} scaled\n", rt.name_prefix())
        }
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
