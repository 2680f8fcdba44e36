//! The IO of "apply as manager X" (`A` on a resource): the apply document written for the
//! editor, and, once saved, its dry run; the verdict comes back as a [`Msg`]. The
//! document and the verdict's words are [`crate::cluster::apply_as`]'s.

use crate::cluster::ResourceType;
use crate::cluster::apply_as::{DEFAULT_MANAGER, apply_document, dry_run, parse_apply_document, verdict_lines};
use crate::cluster::edit::is_blank;
use crate::cluster::editor::{temp_path, write_private};
use crate::cluster::objects::{ObjectRef, get_object};
use crate::tui::action::Msg;
use crate::tui::table::ObjKey;
use serde_json::Value;
use std::path::PathBuf;

/// The object as read, and the file the editor opens.
pub struct Prepared {
    pub current: Value,
    pub path: PathBuf,
}

/// Reads the object and writes its apply document.
pub async fn prepare(client: &kube::Client, kind: &ResourceType, key: &ObjKey) -> Result<Prepared, String> {
    let at = ObjectRef::new(kind, key.namespace.as_deref().unwrap_or_default(), &key.name);
    let object = get_object(client, at).await.map_err(|e| e.to_string())?;
    let current = serde_json::to_value(&object).map_err(|e| e.to_string())?;
    let text = apply_document(&current, DEFAULT_MANAGER)?;
    let path = temp_path(&format!("{}-{}-apply-as", kind.plural, key.name));
    write_private(&path, &text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(Prepared { current, path })
}

/// Reads the saved document and dry-runs it; an emptied document cancels.
pub async fn finish(client: &kube::Client, kind: &ResourceType, key: &ObjKey, prepared: Prepared) -> Msg {
    let kept = |e: String| Msg::Error(format!("apply as: {e}; the document is kept in {}", prepared.path.display()));
    let text = match std::fs::read_to_string(&prepared.path) {
        Ok(text) => text,
        Err(e) => return kept(format!("cannot read it back: {e}")),
    };
    if is_blank(&text) {
        let _ = std::fs::remove_file(&prepared.path);
        return Msg::Info("apply as: cancelled (the document is empty)".into());
    }
    let (manager, doc) = match parse_apply_document(&text) {
        Ok(parsed) => parsed,
        Err(e) => return kept(e),
    };
    match dry_run(client, kind, &prepared.current, &manager, &doc).await {
        Ok(verdict) => {
            let _ = std::fs::remove_file(&prepared.path);
            let title = format!("apply as {manager} {}/{}", kind.plural, key.display());
            Msg::ApplyVerdict { title, lines: verdict_lines(&manager, &verdict) }
        }
        Err(e) => kept(e.to_string()),
    }
}
