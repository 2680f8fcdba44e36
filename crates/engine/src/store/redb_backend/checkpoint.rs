//! The checkpointer: a thread that carries logged batches into the redb database.
//!
//! The committer hands over each record once it is durable in the log; this thread
//! applies what has queued up in one non-durable redb transaction (no fsync), and
//! every so often commits durably — a checkpoint — after which the log segments at or
//! below that revision are deleted. Keeping this off the committer keeps the B-tree
//! rewrites and the checkpoints' fsyncs out of every write's latency. Records wait up to
//! [`APPLY_DELAY`] (or until [`APPLY_RECORDS`] or [`APPLY_BYTES`] have queued) and go in
//! one transaction: a lone write then wakes this thread at most once per delay, not at
//! the moment it is fanned out to watchers, and under load the transactions grow. Reads
//! never wait for this: the store serves them from memory. The hand-off is
//! bounded in bytes: if the thread falls behind, the committer waits (backpressure).
//! If applying fails, the thread stops and the next hand-off reports the error; the log
//! still holds every acknowledged write, and the next open replays it.
//!
//! redb reuses the pages that updates free but never gives them back, so churn leaves the
//! file several times the live data. After a checkpoint, at most every
//! [`Compaction::check_every`], the thread compares the file with what it holds and
//! compacts it when more than half is free space, reporting each compaction (a `tracing`
//! notice; `serve` prints the engine's on stderr). Only a churn is looked at: writes that
//! since the last look mostly added data leave the file's slack where redb put it as it
//! grew (it doubles small files), which a compaction would cut only for the next writes
//! to add again; weighing and compacting the file is O(stored) each time (loading 200,000
//! objects spent 8% of the server's CPU on it).

use super::super::wal::Segments;
use super::super::wal::record::Record;
use super::super::{Revision, StoreError};
use super::tables::{self, Applied};
use redb::{Database, Durability};
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

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

/// When the database file is compacted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Compaction {
    /// How often, at most, the file is looked at (after a checkpoint).
    pub check_every: Duration,
    /// Files smaller than this are left alone (their slack is not worth a pass).
    pub from_bytes: u64,
}

impl Default for Compaction {
    fn default() -> Self {
        Compaction { check_every: Duration::from_secs(10), from_bytes: 32 << 20 }
    }
}

/// One compaction, as reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Compacted {
    file_before: u64,
    file_after: u64,
    /// The keys and values the database holds, with its own metadata.
    live: u64,
    took: Duration,
}

/// How many bytes of records may wait for the checkpointer before the committer blocks.
const MAX_BACKLOG: usize = 64 << 20;

/// How long the oldest record may wait before it is applied.
const APPLY_DELAY: Duration = Duration::from_millis(50);
/// How many records, or bytes of them, are applied at once without waiting for the delay.
const APPLY_RECORDS: usize = 256;
const APPLY_BYTES: usize = 4 << 20;

/// Records on their way from the committer to the checkpointer.
#[derive(Default)]
struct Queue {
    records: VecDeque<Record>,
    bytes: usize,
    /// When the oldest queued record came.
    since: Option<Instant>,
    closed: bool,
    failed: Option<StoreError>,
}

impl Queue {
    fn full(&self) -> bool {
        self.records.len() >= APPLY_RECORDS || self.bytes >= APPLY_BYTES
    }
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

    fn wait_at_most<'a>(&self, guard: MutexGuard<'a, Queue>, timeout: Duration) -> MutexGuard<'a, Queue> {
        match self.changed.wait_timeout(guard, timeout) {
            Ok((guard, _)) => guard,
            Err(poisoned) => poisoned.into_inner().0,
        }
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
        // The checkpointer sleeps without a deadline while the queue is empty: the first
        // record gives it one. Later records wake it only once a batch is full.
        let first = queue.records.is_empty();
        queue.bytes += weight;
        queue.records.push_back(record);
        if first {
            queue.since = Some(Instant::now());
        }
        if first || queue.full() {
            self.changed.notify_all();
        }
        Ok(())
    }

    /// Everything queued, once a batch is full, the oldest record has waited
    /// [`APPLY_DELAY`] or the queue is closed; `None` once closed and drained.
    fn take(&self) -> Option<Vec<Record>> {
        let mut queue = self.lock();
        loop {
            if !queue.records.is_empty() {
                let waited = queue.since.map_or(APPLY_DELAY, |since| since.elapsed());
                if queue.closed || queue.full() || waited >= APPLY_DELAY {
                    queue.bytes = 0;
                    queue.since = None;
                    let records = queue.records.drain(..).collect();
                    self.changed.notify_all();
                    return Some(records);
                }
                queue = self.wait_at_most(queue, APPLY_DELAY - waited);
                continue;
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
    /// Starts the thread on `db` (the file at `path`), which is durably at `revision`.
    pub fn spawn(
        db: Database,
        path: &std::path::Path,
        revision: Revision,
        segments: Arc<Segments>,
        policy: Policy,
        compaction: Compaction,
    ) -> Result<Self, StoreError> {
        let handoff = Arc::new(Handoff::default());
        let theirs = Arc::clone(&handoff);
        let file = Compactor::new(path, compaction);
        let thread = std::thread::Builder::new()
            .name("store-checkpointer".into())
            .spawn(move || {
                let result = run(db, revision, &segments, policy, file, &theirs);
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
    mut db: Database,
    mut durable: Revision,
    segments: &Segments,
    policy: Policy,
    mut file: Compactor,
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
        file.note(tables::apply(&db, &records, durability)?);
        applied = records.last().map_or(applied, |r| r.revision);
        if checkpoint {
            (durable, changes, bytes) = (applied, 0, 0);
            release(segments, durable);
            file.maybe_compact(&mut db);
        }
    }
    if applied > durable {
        tables::make_durable(&db)?;
        durable = applied;
    }
    // On close whenever it was last looked at: a churn that ended within `check_every` of
    // the last check would otherwise leave the file loose until the next run's first check.
    file.compact_now(&mut db);
    db.close().map_err(|e| StoreError::Backend(format!("cannot close the database: {e}")))?;
    Ok(durable)
}

/// The database file's compaction: when it was last looked at, what was written since,
/// and how small the last compaction left it (a B-tree's own slack is not compacted again
/// and again).
struct Compactor {
    path: std::path::PathBuf,
    policy: Compaction,
    checked: Instant,
    since: Applied,
    floor: u64,
}

impl Compactor {
    fn new(path: &std::path::Path, policy: Compaction) -> Self {
        Compactor { path: path.to_path_buf(), policy, checked: Instant::now(), since: Applied::default(), floor: 0 }
    }

    /// Counts what a transaction wrote.
    fn note(&mut self, applied: Applied) {
        self.since.added += applied.added;
        self.since.replaced += applied.replaced;
    }

    /// Compacts the file if it is due, was churned since the last look (at least half as
    /// many bytes replaced or deleted as written) and is loose; a failure is reported and
    /// left for the next check (the data is intact either way).
    fn maybe_compact(&mut self, db: &mut Database) {
        if self.checked.elapsed() < self.policy.check_every {
            return;
        }
        let since = std::mem::take(&mut self.since);
        if since.replaced.saturating_mul(2) < since.added {
            self.checked = Instant::now();
            return;
        }
        self.compact_now(db);
    }

    /// Compacts the file if it is loose, due or not.
    fn compact_now(&mut self, db: &mut Database) {
        self.checked = Instant::now();
        match self.compact_if_loose(db) {
            Ok(Some(c)) => tracing::info!(
                "compacted {}: {:.1} MiB → {:.1} MiB for {:.1} MiB of objects, in {} ms",
                self.path.display(),
                mib(c.file_before),
                mib(c.file_after),
                mib(c.live),
                c.took.as_millis()
            ),
            Ok(None) => {}
            Err(e) => tracing::warn!("cannot compact {}: {e}", self.path.display()),
        }
    }

    fn compact_if_loose(&mut self, db: &mut Database) -> Result<Option<Compacted>, String> {
        let file_before = self.file_len()?;
        if file_before < self.policy.from_bytes || file_before <= self.floor + self.floor / 2 {
            return Ok(None);
        }
        let live = live_bytes(db)?;
        if file_before <= 2 * live {
            return Ok(None);
        }
        let started = Instant::now();
        db.compact().map_err(|e| e.to_string())?;
        let file_after = self.file_len()?;
        self.floor = file_after;
        Ok(Some(Compacted { file_before, file_after, live, took: started.elapsed() }))
    }

    fn file_len(&self) -> Result<u64, String> {
        std::fs::metadata(&self.path).map(|m| m.len()).map_err(|e| e.to_string())
    }
}

/// The keys and values `db` holds, with its own metadata: a walk of every page.
fn live_bytes(db: &Database) -> Result<u64, String> {
    let txn = db.begin_write().map_err(|e| e.to_string())?;
    let stats = txn.stats().map_err(|e| e.to_string())?;
    txn.abort().map_err(|e| e.to_string())?;
    Ok(stats.stored_bytes() + stats.metadata_bytes())
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / 1048576.0
}

/// Deletes the log segments a checkpoint made redundant. A failure only leaves a file
/// behind: the next open skips its records (they are in the database) and removes it.
fn release(segments: &Segments, checkpoint: Revision) {
    if let Err(e) = segments.release_through(checkpoint) {
        tracing::warn!("cannot delete checkpointed log segments: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::KeyValue;
    use crate::store::wal::record::Entry;
    use bytes::Bytes;

    /// A durable commit of `entries`, the last at `revision`.
    fn commit(db: &Database, revision: Revision, entries: Vec<Entry>) -> Applied {
        tables::apply(db, &[Record { revision, entries }], Durability::Immediate).expect("apply")
    }

    fn put(k: u64, rev: Revision) -> Entry {
        Entry::Put(KeyValue {
            key: format!("/k/{k:06}"),
            value: Bytes::from(vec![b'x'; 1000]),
            create_revision: rev,
            mod_revision: rev,
        })
    }

    /// A load is left alone even when redb's growth leaves its file more than twice what it
    /// holds; a churn is compacted.
    #[test]
    fn a_loose_file_is_compacted_after_a_churn_not_after_a_load() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("store.redb");
        let len = || std::fs::metadata(&path).expect("the file").len();
        let mut db = tables::open(&path).expect("open");
        let mut file = Compactor::new(&path, Compaction { check_every: Duration::ZERO, from_bytes: 0 });
        // A load, looked at after every checkpoint: redb doubles the file as it grows, so
        // some looks find it more than twice what it holds, and still must leave it.
        let (mut rev, mut loose) = (0, 0);
        for round in 0..12 {
            let entries = (round * 1000..(round + 1) * 1000).map(|k| put(k, rev + k - round * 1000 + 1)).collect();
            rev += 1000;
            file.note(commit(&db, rev, entries));
            let before = len();
            loose += usize::from(before > 2 * live_bytes(&db).expect("live"));
            file.maybe_compact(&mut db);
            assert_eq!(len(), before, "round {round}: a load is left alone");
        }
        assert!(loose > 0, "no look found the file loose: the test would prove nothing");
        // Most keys deleted: a churn, and the file's free pages are compacted away.
        let entries: Vec<Entry> = (0..11_000).map(|k| Entry::Delete(format!("/k/{k:06}"))).collect();
        rev += entries.len() as u64;
        let deleted = commit(&db, rev, entries);
        assert_eq!(deleted, Applied { added: 0, replaced: 11_000 * (16 + 1000) });
        file.note(deleted);
        let before = len();
        assert!(before > 2 * live_bytes(&db).expect("live"), "deletes left the file loose");
        file.maybe_compact(&mut db);
        assert!(len() < before / 2, "compacted from {before} to {} bytes", len());
    }
}
