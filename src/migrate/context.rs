//! What a step body works with: the journal's directory and state, the limits of the
//! waits, and the backup read once. A leaf under the state machine ([`super::steps`]) and
//! the step bodies (`actions`): they share it without knowing each other, and a step body
//! cannot move the migration between steps or phases — only [`super::Migration`] does.

use super::MigrateError;
use super::journal::{self, Backup, JournalState};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// Limits of the waits a step makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// For objects and registrations to be gone, a CRD to be Established, pods to stop.
    pub wait_timeout: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options { wait_timeout: Duration::from_secs(300) }
    }
}

/// A journal open on disk, as the steps read and record it.
#[derive(Debug)]
pub(crate) struct Context {
    dir: PathBuf,
    state: JournalState,
    options: Options,
    /// The backup as read (checksums checked) once: it does not change after the backup
    /// step, and every later step and the verification need it.
    backup: OnceLock<Arc<Backup>>,
}

impl Context {
    pub(crate) fn new(dir: &Path, state: JournalState) -> Context {
        Context { dir: dir.to_path_buf(), state, options: Options::default(), backup: OnceLock::new() }
    }

    pub(crate) fn set_options(&mut self, options: Options) {
        self.options = options;
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    pub(crate) fn state(&self) -> &JournalState {
        &self.state
    }

    pub(crate) fn state_mut(&mut self) -> &mut JournalState {
        &mut self.state
    }

    pub(crate) fn options(&self) -> Options {
        self.options
    }

    /// Writes the state to the journal.
    pub(crate) fn save(&self) -> Result<(), MigrateError> {
        journal::save_state(&self.dir, &self.state)
    }

    /// The backup, read from the journal the first time.
    pub(crate) fn backup(&self) -> Result<Arc<Backup>, MigrateError> {
        if let Some(b) = self.backup.get() {
            return Ok(Arc::clone(b));
        }
        let read = Arc::new(journal::read_backup(&self.dir)?);
        Ok(Arc::clone(self.backup.get_or_init(|| read)))
    }

    /// Remembers the backup just written (and read back equal).
    pub(crate) fn keep_backup(&mut self, backup: Backup) {
        self.backup = OnceLock::from(Arc::new(backup));
    }
}
