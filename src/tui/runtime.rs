//! The IO half of the TUI: effects performed through the cluster layer (the same
//! operations the subcommands use), results sent back as [`Msg`]s. Requests run as tasks
//! so the screen never waits; edits run in place because the editor needs the terminal.

use crate::cluster::counts::count_each;
use crate::cluster::edit::{self, Outcome};
use crate::cluster::editor::{editor_command, shell, write_private};
use crate::cluster::objects::{
    ObjectRef, Retry, get_object, get_scale, parse_status_document, replace_spec, replace_status, set_scale, spec_view,
};
use crate::cluster::owners_fetch::list_everything;
use crate::cluster::reapply::{changes, reapply};
use crate::cluster::registrations::{find_crd, first_crds};
use crate::cluster::tui_ops::{delete_crd, delete_object, first_object, list_namespaces, replace_object};
use crate::cluster::{ClusterError, ResourceType, column_preview};
use crate::tui::action::{Effect, Msg};
use crate::tui::model::Registration;
use crate::tui::state::{ConflictDialog, Deletion, EditPart, Refused, ScaleChange};
use crate::tui::table::ObjKey;
use futures::StreamExt;
use k8s_openapi::jiff::Timestamp;
use kube::api::DynamicObject;
use serde_json::Value;
use std::path::{Path, PathBuf};
use tokio::sync::mpsc::UnboundedSender;

/// CRDs read before the registrations screen is first drawn (a tall screen's worth).
const FIRST_CRDS: u32 = 100;

/// Where edits are kept until they are saved (and after, when they are not).
pub fn edits_dir() -> PathBuf {
    std::env::temp_dir().join("kubectl-crd-edits")
}

/// Runs the editor on `path` and waits for it (the terminal must be handed over first).
/// The editor line goes through `sh` so `code --wait` or `vim -u NONE` work as in kubectl.
pub async fn run_editor(path: &Path) -> Result<(), String> {
    let editor = editor_command();
    let path = path.to_path_buf();
    let status = tokio::task::spawn_blocking(move || shell(&editor, &path).status())
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("cannot start the editor: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("the editor exited with {status}")) }
}

/// An edit on its way to the server: what the user started from and what they saved.
#[derive(Debug, Clone)]
pub struct EditJob {
    pub kind: ResourceType,
    pub key: ObjKey,
    pub part: EditPart,
    pub kept: PathBuf,
    pub base: Value,
    pub edited: Value,
}

fn object_ref<'a>(kind: &'a ResourceType, key: &'a ObjKey) -> ObjectRef<'a> {
    ObjectRef::new(kind, key.namespace.as_deref().unwrap_or_default(), &key.name)
}

fn what(kind: &ResourceType, key: &ObjKey) -> String {
    format!("{}/{}", kind.plural, key.display())
}

/// The document the editor shows for `part` of `obj`.
pub fn document(obj: &DynamicObject, part: EditPart) -> Result<Value, ClusterError> {
    match part {
        EditPart::Spec => Ok(spec_view(obj)?.object),
        EditPart::Status => Ok(edit::status_document(obj.data.get("status"))),
        EditPart::Object => {
            let mut view = spec_view(obj)?;
            if let (Some(status), Some(m)) = (view.status, view.object.as_object_mut()) {
                m.insert("status".into(), status);
            }
            Ok(view.object)
        }
    }
}

/// The file an edit is kept in.
pub fn kept_path(kind: &ResourceType, key: &ObjKey, part: EditPart) -> PathBuf {
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
    let ns = key.namespace.as_deref().map(|n| format!("{n}-")).unwrap_or_default();
    edits_dir().join(format!("{}-{ns}{}-{}-{stamp}.yaml", kind.plural, key.name, part.word()))
}

/// Reads the object, writes the document for the editor; returns it with the file.
pub async fn prepare_edit(
    client: &kube::Client,
    kind: &ResourceType,
    key: &ObjKey,
    part: EditPart,
) -> Result<(DynamicObject, Value, PathBuf), String> {
    let against = get_object(client, object_ref(kind, key)).await.map_err(|e| e.to_string())?;
    let base = document(&against, part).map_err(|e| e.to_string())?;
    let kept = kept_path(kind, key, part);
    std::fs::create_dir_all(edits_dir()).map_err(|e| format!("cannot create {}: {e}", edits_dir().display()))?;
    write_private(&kept, &crate::tui::edit::render(&base, part, &what(kind, key)))
        .map_err(|e| format!("cannot write {}: {e}", kept.display()))?;
    Ok((against, base, kept))
}

/// Whether the server (or the check before sending) refused what the user typed, so the
/// editor opens again on it with the reason on top, as `kubectl edit` does; other failures
/// (the cluster unreachable, a timeout) keep the file and say where.
fn reopens(e: &ClusterError) -> bool {
    matches!(
        e,
        ClusterError::Invalid { .. }
            | ClusterError::InvalidInput { .. }
            | ClusterError::EditOverlap(_)
            | ClusterError::Forbidden { .. }
            | ClusterError::Api { code: 400..=499, .. }
    ) && !e.is_not_found()
}

/// The edit of `job` refused with `error`: the editor opens on it again.
fn refused(job: EditJob, error: String) -> Msg {
    Msg::EditRefused(Box::new(Refused {
        kind: job.kind,
        key: job.key,
        part: job.part,
        kept: job.kept,
        base: job.base,
        error,
    }))
}

/// Reads back what the editor saved and sends it.
pub async fn finish_edit(client: &kube::Client, against: DynamicObject, mut job: EditJob) -> Msg {
    let text = match std::fs::read_to_string(&job.kept) {
        Ok(t) => t,
        Err(e) => return Msg::Error(format!("cannot read {}: {e}", job.kept.display())),
    };
    match edit::parse(&text) {
        Err(e) => refused(job, format!("the edited file is not valid YAML: {e}")),
        Ok(None) => {
            let _ = std::fs::remove_file(&job.kept);
            Msg::Info("edit cancelled: the file was empty".into())
        }
        Ok(Some(edited)) => {
            job.edited = edited;
            save(client, job, against).await
        }
    }
}

/// Sends an edit against `against` (the version it applies to); on 409 reads the server's
/// version and asks the user what to do.
pub async fn save(client: &kube::Client, job: EditJob, against: DynamicObject) -> Msg {
    let at = object_ref(&job.kind, &job.key);
    let name = what(&job.kind, &job.key);
    let kept = job.kept.display().to_string();
    let doc = match document(&against, job.part) {
        Ok(d) => d,
        Err(e) => return Msg::Error(e.to_string()),
    };
    let target = if doc == job.base { Ok(job.edited.clone()) } else { reapply(&doc, &job.base, &job.edited) };
    let target = match target {
        Ok(target) => target,
        Err(overlap) => return refused(job, ClusterError::EditOverlap(overlap).to_string()),
    };
    let rv = against.metadata.resource_version.clone();
    let result = match edit::outcome(&doc, against.data.get("status"), target, job.part) {
        Outcome::Unchanged { ignored_status } => {
            let _ = std::fs::remove_file(&job.kept);
            let note = if ignored_status { ignored_status_note() } else { "" };
            return Msg::Info(format!("no changes to the {} of {name}{note}", job.part.word()));
        }
        Outcome::Spec { mut object, ignored_status } => {
            object["metadata"]["resourceVersion"] = Value::from(rv.clone());
            replace_spec(client, at, &object, &kept, Retry::No).await.map(|o| (o, ignored_status))
        }
        Outcome::Object { mut object } => {
            object["metadata"]["resourceVersion"] = Value::from(rv.clone());
            replace_object(client, at, &object, &kept).await.map(|o| (o, false))
        }
        Outcome::Status { document } => match parse_status_document(&document, &kept, at) {
            Ok(mut d) => {
                d.resource_version = rv;
                replace_status(client, at, &d, Retry::No, crate::cluster::managers::EDIT).await.map(|o| (o, false))
            }
            Err(e) => Err(e),
        },
    };
    match result {
        Ok((saved, ignored_status)) => {
            let _ = std::fs::remove_file(&job.kept);
            let rv = saved.metadata.resource_version.unwrap_or_default();
            let note = if ignored_status { ignored_status_note() } else { "" };
            Msg::Saved(format!("saved the {} of {name} (resourceVersion {rv}){note}", job.part.word()))
        }
        Err(e) if e.is_conflict() => match get_object(client, at).await {
            Ok(current) => {
                let before = serde_json::to_value(&against).unwrap_or_default();
                let after = serde_json::to_value(&current).unwrap_or_default();
                Msg::Conflict(Box::new(ConflictDialog {
                    kind: job.kind,
                    key: job.key,
                    part: job.part,
                    server_changes: changes(&before, &after),
                    kept: job.kept,
                    base: job.base,
                    edited: job.edited,
                }))
            }
            Err(e) => Msg::Error(format!("conflict, and then {e}; your edit is kept in {kept}")),
        },
        Err(e) if reopens(&e) => refused(job, e.to_string()),
        Err(e) => Msg::Error(format!("{e}; your edit is kept in {kept}")),
    }
}

/// Writes the refused edit back with the reason on top and returns what was written, so
/// the caller can tell an editor quit without a change (the edit abandoned).
pub fn write_refused(refused: &Refused) -> Result<String, String> {
    let typed =
        std::fs::read_to_string(&refused.kept).map_err(|e| format!("cannot read {}: {e}", refused.kept.display()))?;
    let text = crate::tui::edit::reopen(&typed, &refused.error);
    std::fs::write(&refused.kept, &text).map_err(|e| format!("cannot write {}: {e}", refused.kept.display()))?;
    Ok(text)
}

/// Reads the object a refused edit goes to again (it may have changed meanwhile: the
/// edit is re-applied on it as after a 409).
pub async fn reread(client: &kube::Client, refused: &Refused) -> Result<DynamicObject, String> {
    get_object(client, object_ref(&refused.kind, &refused.key)).await.map_err(|e| e.to_string())
}

fn ignored_status_note() -> &'static str {
    "; the status typed there was ignored: the status is saved through /status (press E)"
}

/// Runs the effects that need neither the terminal nor the watch as tasks.
pub fn spawn(client: &kube::Client, tx: &UnboundedSender<Msg>, effect: Effect) {
    let client = client.clone();
    let tx = tx.clone();
    if let Effect::CountResources(crds) = effect {
        let counts = count_each(&client, crds);
        tokio::spawn(counts.for_each(move |(crd, count)| {
            let _ = tx.send(Msg::Counted { crd, count });
            futures::future::ready(())
        }));
        return;
    }
    tokio::spawn(async move {
        let msg = perform(&client, effect).await;
        if let Some(msg) = msg {
            let _ = tx.send(msg);
        }
    });
}

/// One effect's request(s) and the message they end in.
pub async fn perform(client: &kube::Client, effect: Effect) -> Option<Msg> {
    Some(match effect {
        // A screenful of CRDs and more, alone: thousands (some of a megabyte) would hold the
        // first frame, and counts follow, one message each (`Effect::CountResources`).
        Effect::LoadRegistrations => match first_crds(client, FIRST_CRDS).await {
            Ok((crds, more)) => {
                let regs = crds.into_iter().map(Registration::uncounted).collect();
                if more { Msg::FirstRegistrations(regs) } else { Msg::Registrations(Ok(regs)) }
            }
            Err(e) => Msg::Registrations(Err(e.to_string())),
        },
        Effect::LoadColumnPreview(crd) => Msg::ColumnPreview {
            crd: crd.metadata.name.clone().unwrap_or_default(),
            result: column_preview::sample(client, &crd, Timestamp::now()).await.map_err(|e| e.to_string()),
        },
        Effect::Resolve(word) => Msg::Resolved(find_crd(client, &word).await.map(Box::new).map_err(|e| e.to_string())),
        Effect::LoadObject { kind, key } => match get_object(client, object_ref(&kind, &key)).await {
            Err(e) if e.is_not_found() => Msg::ObjectGone(key),
            result => Msg::Object {
                key,
                result: result.map(|o| serde_json::to_value(o).unwrap_or_default()).map_err(|e| e.to_string()),
            },
        },
        Effect::LoadScale { kind, key } => {
            let result = get_scale(client, object_ref(&kind, &key)).await.map(|(_, view)| view);
            Msg::Scale { key, result: result.map_err(|e| e.to_string()) }
        }
        Effect::LoadSample { crd, kind } => {
            Msg::CelSample { crd, result: first_object(client, &kind).await.map_err(|e| e.to_string()) }
        }
        Effect::WriteFiles { files, done } => match write_files(&files) {
            Ok(()) => Msg::Info(done),
            Err(e) => Msg::Error(e),
        },
        Effect::SetScale { kind, targets, change } => scale_all(client, &kind, &targets, change).await,
        Effect::Delete(deletion) => delete(client, deletion).await,
        Effect::LoadNamespaces => Msg::Namespaces(list_namespaces(client).await.map_err(|e| e.to_string())),
        Effect::Reapply { kind, key, part, base, edited, kept } => {
            let against = match get_object(client, object_ref(&kind, &key)).await {
                Ok(o) => o,
                Err(e) => return Some(Msg::Error(format!("{e}; your edit is kept in {}", kept.display()))),
            };
            save(client, EditJob { kind, key, part, kept, base, edited }, against).await
        }
        Effect::LoadOwners { request, scope } => Msg::Owners {
            request,
            result: list_everything(client, &scope).await.map(Box::new).map_err(|e| e.to_string()),
        },
        // `spawn` streams counts, one message each.
        Effect::CountResources(_) => return None,
        // The loop runs these itself.
        Effect::LoadTable { .. }
        | Effect::StopWatch
        | Effect::WatchRegistrations
        | Effect::Edit { .. }
        | Effect::ApplyAs { .. }
        | Effect::EditCel { .. }
        | Effect::EditAgain(_)
        | Effect::SwitchContext(_)
        | Effect::Wizard(_)
        | Effect::WatchEvents { .. }
        | Effect::StopEvents => return None,
    })
}

/// Writes each file, making its directory first.
fn write_files(files: &[(PathBuf, String)]) -> Result<(), String> {
    for (path, text) in files {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

/// Deletes what the user confirmed; says what went and what did not.
async fn delete(client: &kube::Client, deletion: Deletion) -> Msg {
    match deletion {
        Deletion::Crd { name, .. } => match delete_crd(client, &name).await {
            Ok(()) => Msg::Saved(format!("deleted customresourcedefinition {name}")),
            Err(e) => Msg::Error(format!("cannot delete {name}: {e}")),
        },
        Deletion::Objects { kind, keys } => {
            let (mut done, mut failed) = (vec![], vec![]);
            for key in &keys {
                match delete_object(client, object_ref(&kind, key)).await {
                    Ok(()) => done.push(key.display()),
                    Err(e) => failed.push(format!("{}: {e}", key.display())),
                }
            }
            outcome_of_each(("delete", "deleted"), &kind.plural, &done, &failed)
        }
    }
}

/// Scales every target; `By` reads each one's desired replicas and writes on that
/// condition, so a concurrent change is not overwritten.
async fn scale_all(client: &kube::Client, kind: &ResourceType, targets: &[ObjKey], change: ScaleChange) -> Msg {
    let mut done = vec![];
    let mut failed = vec![];
    for key in targets {
        let at = object_ref(kind, key);
        let result = match change {
            ScaleChange::To(n) => set_scale(client, at, n, None, false).await,
            ScaleChange::By(d) => match get_scale(client, at).await {
                Ok((_, view)) => {
                    set_scale(client, at, view.desired.saturating_add(d).max(0), Some(view.desired), false).await
                }
                Err(e) => Err(e),
            },
        };
        match result {
            Ok(view) => done.push(format!("{} → {}", key.name, view.desired)),
            Err(e) => failed.push(format!("{}: {e}", key.display())),
        }
    }
    outcome_of_each(("scale", "scaled"), &kind.plural, &done, &failed)
}

/// What a write to several objects says: what was done, or what failed and what was done
/// anyway. `verb` is the verb and its past (`("scale", "scaled")`).
fn outcome_of_each(verb: (&str, &str), plural: &str, done: &[String], failed: &[String]) -> Msg {
    let (verb, past) = verb;
    if failed.is_empty() {
        return Msg::Saved(format!("{past} {plural} {}", done.join(", ")));
    }
    let anyway = if done.is_empty() { String::new() } else { format!(" ({past} {})", done.join(", ")) };
    Msg::Error(format!("{verb} failed for {}{anyway}", failed.join("; ")))
}
