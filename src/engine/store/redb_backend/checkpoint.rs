//! The checkpointer: a thread that carries logged batches into the redb database.
//!
//! The committer hands over each record once it is durable in the log; this thread
//! applies whatever has queued up in one non-durable redb transaction (no fsync), and
//! every so often commits durably — a checkpoint — after which the log segments at or
//! below that revision are deleted. Keeping this off the committer keeps the B-tree
//! rewrites and the checkpoints' fsyncs out of every write's latency. The hand-off is
//! bounded in bytes: if the thread falls behind, the committer waits (backpressure).
//! If applying fails, the thread stops and the next hand-off reports the error; the log
//! still holds every acknowledged write, and the next open replays it.

use super::super::wal::Segments;
use super::super::wal::record::Record;
use super::super::{Revision, StoreError};
use super::tables;
use redb::{Database, Durability};
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// When to checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Durably, once this many changes or bytes were applied since the last checkpoint,
    /// and on close.
    Every { changes: usize, bytes: usize },
    /// Never touch the database: as if the process always died before its first
    /// checkpoint, so only the log holds the writes (tests of recovery).
    #[cfg(test)]
    Never,
}

/// How many bytes of records may wait for the checkpointer before the committer blocks.
const MAX_BACKLOG: usize = 64 << 20;

/// Records on their way from the committer to the checkpointer.
#[derive(Default)]
struct Queue {
    records: VecDeque<Record>,
    bytes: usize,
    closed: bool,
    failed: Option<StoreError>,
}

#[derive(Default)]
struct Handoff {
    queue: Mutex<Queue>,
    /// Signalled on every change of `queue`; the two sides wait for different conditions.
    changed: Condvar,
}

impl Handoff {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        // A panic while holding this lock leaves a queue that is still consistent.
        self.queue.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn wait<'a>(&self, guard: MutexGuard<'a, Queue>) -> MutexGuard<'a, Queue> {
        self.changed.wait(guard).unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn push(&self, record: Record) -> Result<(), StoreError> {
        let weight = record.weight();
        let mut queue = self.lock();
        loop {
            if let Some(e) = &queue.failed {
                return Err(e.clone());
            }
            // An empty queue takes any record, so that one bigger than the bound still goes.
            if queue.records.is_empty() || queue.bytes + weight <= MAX_BACKLOG {
                break;
            }
            queue = self.wait(queue);
        }
        queue.bytes += weight;
        queue.records.push_back(record);
        self.changed.notify_all();
        Ok(())
    }

    /// Everything queued, waiting for something; `None` once closed and drained.
    fn take(&self) -> Option<Vec<Record>> {
        let mut queue = self.lock();
        loop {
            if !queue.records.is_empty() {
                queue.bytes = 0;
                let records = queue.records.drain(..).collect();
                self.changed.notify_all();
                return Some(records);
            }
            if queue.closed {
                return None;
            }
            queue = self.wait(queue);
        }
    }

    fn finish(&self, failed: Option<StoreError>) {
        let mut queue = self.lock();
        queue.failed = Some(failed.unwrap_or(StoreError::Closed));
        queue.records.clear();
        self.changed.notify_all();
    }

    fn close(&self) {
        self.lock().closed = true;
        self.changed.notify_all();
    }
}

/// The committer's handle on the checkpointer thread.
pub struct Checkpointer {
    handoff: Arc<Handoff>,
    thread: Option<std::thread::JoinHandle<Result<Revision, StoreError>>>,
}

impl Checkpointer {
    /// Starts the thread on `db`, which is durably at `revision`.
    pub fn spawn(
        db: Database,
        revision: Revision,
        segments: Arc<Segments>,
        policy: Policy,
    ) -> Result<Self, StoreError> {
        let handoff = Arc::new(Handoff::default());
        let theirs = Arc::clone(&handoff);
        let thread = std::thread::Builder::new()
            .name("store-checkpointer".into())
            .spawn(move || {
                let result = run(db, revision, &segments, policy, &theirs);
                theirs.finish(result.as_ref().err().cloned());
                result
            })
            .map_err(|e| StoreError::Backend(format!("cannot start the store checkpointer: {e}")))?;
        Ok(Checkpointer { handoff, thread: Some(thread) })
    }

    /// Whether the thread is still able to take records.
    pub fn check(&self) -> Result<(), StoreError> {
        match &self.handoff.lock().failed {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// Hands over a record that is durable in the log. Waits while the backlog is full.
    pub fn send(&self, record: Record) -> Result<(), StoreError> {
        self.handoff.push(record)
    }

    /// Lets the thread apply what is queued, checkpoint durably and close the database;
    /// returns the revision the database is then durably at.
    pub fn close(mut self) -> Result<Revision, StoreError> {
        self.handoff.close();
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(StoreError::Backend("the store checkpointer panicked".into())),
            None => Err(StoreError::Closed),
        }
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.handoff.close();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn run(
    db: Database,
    mut durable: Revision,
    segments: &Segments,
    policy: Policy,
    handoff: &Handoff,
) -> Result<Revision, StoreError> {
    let (every_changes, every_bytes) = match policy {
        Policy::Every { changes, bytes } => (changes, bytes),
        #[cfg(test)]
        Policy::Never => {
            while handoff.take().is_some() {}
            return Ok(durable);
        }
    };
    let (mut applied, mut changes, mut bytes) = (durable, 0, 0);
    while let Some(records) = handoff.take() {
        changes += records.iter().map(|r| r.entries.len()).sum::<usize>();
        bytes += records.iter().map(Record::weight).sum::<usize>();
        let checkpoint = changes >= every_changes || bytes >= every_bytes;
        let durability = if checkpoint { Durability::Immediate } else { Durability::None };
        tables::apply(&db, &records, durability)?;
        applied = records.last().map_or(applied, |r| r.revision);
        if checkpoint {
            (durable, changes, bytes) = (applied, 0, 0);
            release(segments, durable);
        }
    }
    if applied > durable {
        tables::make_durable(&db)?;
        durable = applied;
    }
    db.close().map_err(|e| StoreError::Backend(format!("cannot close the database: {e}")))?;
    Ok(durable)
}

/// Deletes the log segments a checkpoint made redundant. A failure only leaves a file
/// behind: the next open skips its records (they are in the database) and removes it.
fn release(segments: &Segments, checkpoint: Revision) {
    if let Err(e) = segments.release_through(checkpoint) {
        tracing::warn!("cannot delete checkpointed log segments: {e}");
    }
}
