//! The one editor launcher of the CLI and the TUI: the user's editor, as `kubectl edit`
//! picks it (`$KUBE_EDITOR`, else `$EDITOR`, else `vi`), run through the shell so an editor
//! with arguments works (`KUBE_EDITOR="code --wait"`), on a YAML file only its owner can
//! read. What the file holds and what an edit means are in [`super::edit`] (pure).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Why an edit did not produce text.
#[derive(Debug, thiserror::Error)]
pub enum EditorError {
    #[error("cannot write the temporary file for the editor: {0}")]
    TempFile(#[source] std::io::Error),
    #[error("cannot start the editor {editor:?}: {source}. Set KUBE_EDITOR or EDITOR to an editor that exists")]
    Start {
        editor: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the editor {editor:?} failed ({status}); nothing was changed")]
    Failed { editor: String, status: std::process::ExitStatus },
}

/// The editor command kubectl would run.
pub fn editor_command() -> String {
    ["KUBE_EDITOR", "EDITOR"]
        .iter()
        .filter_map(|k| std::env::var(k).ok())
        .find(|v| !v.trim().is_empty())
        .unwrap_or_else(|| "vi".to_string())
}

/// A temporary file that is removed on drop unless kept.
pub struct EditFile {
    path: PathBuf,
    keep: bool,
}

impl EditFile {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Keeps the file (so the user's changes survive a refused write) and gives its path.
    pub fn keep(mut self) -> PathBuf {
        self.keep = true;
        self.path.clone()
    }
}

impl Drop for EditFile {
    fn drop(&mut self) {
        if !self.keep {
            // Best effort: a leftover file in the temporary directory is harmless.
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// A new temporary file's path for an edit, named after `name_hint` (made safe).
pub fn temp_path(name_hint: &str) -> PathBuf {
    let safe: String = name_hint.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '-' }).collect();
    std::env::temp_dir().join(format!("kubectl-crd-edit-{safe}-{:08x}.yaml", rand::random::<u32>()))
}

/// Opens `text` in the editor and returns what was saved, with the file (kept on request).
pub fn edit(text: &str, name_hint: &str) -> Result<(String, EditFile), EditorError> {
    let path = temp_path(name_hint);
    let file = EditFile { path, keep: false };
    write_private(file.path(), text).map_err(EditorError::TempFile)?;
    let editor = editor_command();
    let status =
        shell(&editor, file.path()).status().map_err(|source| EditorError::Start { editor: editor.clone(), source })?;
    if !status.success() {
        return Err(EditorError::Failed { editor, status });
    }
    let edited = std::fs::read_to_string(file.path()).map_err(EditorError::TempFile)?;
    Ok((edited, file))
}

/// Writes a new file only its owner can read: objects may hold secrets.
pub fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)?.write_all(text.as_bytes())
}

/// The command that runs `editor` on `path`.
#[cfg(unix)]
pub fn shell(editor: &str, path: &Path) -> Command {
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(format!("{editor} \"$1\"")).arg("kubectl-crd-editor").arg(path);
    cmd
}

/// The command that runs `editor` on `path`.
#[cfg(not(unix))]
pub fn shell(editor: &str, path: &Path) -> Command {
    let mut cmd = Command::new("cmd");
    cmd.arg("/C").arg(format!("{editor} \"{}\"", path.display()));
    cmd
}
