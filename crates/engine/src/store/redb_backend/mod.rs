//! Durability on disk: a write-ahead log in front of a redb database (etcd's pattern of a
//! WAL plus a B-tree backend).
//!
//! A batch from the committer is appended to the log ([`wal`](super::wal)) as one record
//! and synced with one `fdatasync`; that is when [`Persist::persist`] returns and the
//! batch's writers are answered. Committing each batch to redb durably instead would
//! rewrite a dozen B-tree pages and fsync more than once per batch. The record then goes
//! to the [`checkpoint`] thread, which applies batches to redb without syncing and, every
//! [`Tuning`]-many changes or bytes and on close, commits durably: the checkpoint, whose
//! revision the `meta` table records. Log segments wholly at or below it are then deleted,
//! so a clean shutdown leaves an empty log.
//!
//! Opening takes redb's lock first (a second opener gets [`StoreError::Locked`] before the
//! log is touched), replays every logged record above the database's revision in one
//! durable commit, starts an empty log, and loads the keys. The log lives next to the
//! database file, in a directory named after it with `.wal` appended. History is not
//! persisted: after a restart, watches start from the loaded revision (older ones get
//! `Expired`, as after a kube-apiserver restart).

mod checkpoint;
mod tables;

use super::wal::record::Record;
use super::wal::{self, Wal};
use super::writer::Persist;
use super::{Revision, StoreError, WatchEvent};
use checkpoint::Checkpointer;
use redb::{Database, Durability};
use std::path::{Path, PathBuf};

pub use checkpoint::{Compaction, Policy};
pub use tables::Loaded;

/// How big log segments grow and how often the database is checkpointed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tuning {
    pub segment_bytes: u64,
    pub checkpoint: Policy,
    pub compaction: Compaction,
}

impl Default for Tuning {
    /// A checkpoint every 10,000 changes or 16 MiB bounds what a crash leaves to replay,
    /// and costs one durable redb commit every half second or so at full speed.
    fn default() -> Self {
        Tuning {
            segment_bytes: 64 << 20,
            checkpoint: Policy::Every { changes: 10_000, bytes: 16 << 20 },
            compaction: Compaction::default(),
        }
    }
}

/// The redb [`Persist`] backend.
pub struct RedbPersist {
    wal: Option<Wal>,
    checkpointer: Option<Checkpointer>,
    /// Set by the first failed persist: the log's tail is then unknown, so nothing more is
    /// appended until the store is reopened (which replays whatever did reach the log).
    failed: Option<StoreError>,
}

/// The log directory of the database at `path`.
pub fn wal_dir(path: &Path) -> PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_else(|| "store".into());
    name.push(".wal");
    path.with_file_name(name)
}

impl RedbPersist {
    /// Opens (or creates) the database at `path`, recovers it from its log, and reads
    /// everything it holds (with the default tuning; the store itself goes through
    /// [`RedbPersist::open_tuned`]).
    #[cfg(test)]
    pub fn open(path: &Path) -> Result<(Self, Loaded), StoreError> {
        Self::open_tuned(path, Tuning::default())
    }

    /// [`RedbPersist::open`] with the log's segment size and checkpoint cadence given (tests
    /// and benchmarks make them small to exercise rotation and checkpoints).
    pub fn open_tuned(path: &Path, tuning: Tuning) -> Result<(Self, Loaded), StoreError> {
        let db = tables::open(path)?;
        let dir = wal_dir(path);
        let revision = recover(&db, &dir)?;
        let wal = Wal::start(&dir, revision + 1, tuning.segment_bytes)?;
        let loaded = tables::load(&db)?;
        let checkpointer =
            Checkpointer::spawn(db, path, revision, wal.segments(), tuning.checkpoint, tuning.compaction)?;
        Ok((RedbPersist { wal: Some(wal), checkpointer: Some(checkpointer), failed: None }, loaded))
    }

    fn append(&mut self, record: Record) -> Result<(), StoreError> {
        let (Some(wal), Some(checkpointer)) = (self.wal.as_mut(), self.checkpointer.as_ref()) else {
            return Err(StoreError::Closed);
        };
        checkpointer.check()?;
        wal.append(&record)?;
        checkpointer.send(record)
    }
}

/// Replays the log records above the database's revision into it, durably; returns the
/// revision the database is then at.
fn recover(db: &Database, dir: &Path) -> Result<Revision, StoreError> {
    let checkpoint = tables::revision(db)?;
    let mut pending: Vec<Record> = Vec::new();
    let mut revision = checkpoint;
    wal::replay(dir, |record| {
        if record.revision <= checkpoint {
            return Ok(()); // already in the database
        }
        if record.first_revision() != revision + 1 {
            return Err(StoreError::Backend(format!(
                "write-ahead log {}: the database is at revision {revision} but the log goes on at revision {}; \
                 the writes in between are missing",
                dir.display(),
                record.first_revision()
            )));
        }
        revision = record.revision;
        pending.push(record);
        Ok(())
    })?;
    if !pending.is_empty() {
        tracing::info!("replaying {} logged writes into {}", revision - checkpoint, dir.display());
        tables::apply(db, &pending, Durability::Immediate)?;
    }
    Ok(revision)
}

impl Persist for RedbPersist {
    fn persist(&mut self, batch: &[WatchEvent]) -> Result<(), StoreError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let Some(record) = Record::from_batch(batch) else { return Ok(()) };
        let result = self.append(record);
        if let Err(e) = &result {
            self.failed = Some(e.clone());
        }
        result
    }
}

impl Drop for RedbPersist {
    /// Checkpoints, closes the database, and deletes the log it made redundant.
    fn drop(&mut self) {
        let checkpointed = self.checkpointer.take().map(Checkpointer::close);
        let Some(wal) = self.wal.take() else { return };
        match checkpointed {
            Some(Ok(revision)) if revision >= wal.last_revision() && self.failed.is_none() => {
                if let Err(e) = wal.remove() {
                    tracing::warn!("cannot delete the checkpointed log: {e}");
                }
            }
            Some(Err(e)) => tracing::error!("final checkpoint failed; the log keeps the writes for the next open: {e}"),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests;
