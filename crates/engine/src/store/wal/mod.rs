//! The write-ahead log: where a batch is durable before any B-tree sees it.
//!
//! The log is a directory of segment files named after the first revision they hold
//! (`<16 hex digits>.log`). The committer appends each batch as one [`record`] and syncs
//! it with one `fdatasync`; that sync is the batch's durability. Past a size, the next
//! record starts a new segment. Once the database has durably checkpointed a revision,
//! [`Segments::release_through`] deletes the segments wholly at or below it. The
//! directory is synced whenever a segment is created or deleted, so a file holding
//! acknowledged records cannot vanish in a crash.
//!
//! A segment is preallocated ahead of the records in chunks of zeros, written and synced
//! with the record that needs them: a record then overwrites allocated, initialised
//! blocks, and its `fdatasync` has no file size or extent to commit (on ext4 about 0.13 ms
//! instead of 0.2, with a shorter tail). A segment's records end where its zeros begin.
//!
//! [`replay`] reads the log back at start-up. The only damage it repairs is a torn record
//! at the end of the last segment — a write the crash cut short, never acknowledged — by
//! truncating it; anything else (a bad record with more log after it, a gap between
//! revisions) is an error naming the file and offset, because acknowledged data is at stake.

#[cfg(target_os = "linux")]
mod direct;
pub mod record;

use super::{Revision, StoreError};
use record::{ReadError, Record};
use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// How far ahead of its records a segment is filled with zeros.
const PREALLOCATE: u64 = 1 << 20;

/// One segment file and the first revision it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Segment {
    first: Revision,
    path: PathBuf,
}

fn io_error(what: &str, path: &Path, e: std::io::Error) -> StoreError {
    StoreError::Backend(format!("write-ahead log: cannot {what} {}: {e}", path.display()))
}

fn corrupt(path: &Path, offset: usize, why: &str) -> StoreError {
    StoreError::Backend(format!("write-ahead log {} is corrupt at offset {offset}: {why}", path.display()))
}

fn segment_path(dir: &Path, first: Revision) -> PathBuf {
    dir.join(format!("{first:016x}.log"))
}

fn parse_segment_name(name: &str) -> Option<Revision> {
    let hex = name.strip_suffix(".log")?;
    if hex.len() != 16 {
        return None;
    }
    Revision::from_str_radix(hex, 16).ok()
}

/// The segments in `dir`, oldest first; none when the directory does not exist.
fn list_segments(dir: &Path) -> Result<Vec<Segment>, StoreError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_error("read", dir, e)),
    };
    let mut segments = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| io_error("read", dir, e))?;
        if let Some(first) = entry.file_name().to_str().and_then(parse_segment_name) {
            segments.push(Segment { first, path: entry.path() });
        }
    }
    segments.sort_by_key(|s| s.first);
    Ok(segments)
}

/// Makes creations and deletions of files in `dir` durable.
fn sync_dir(dir: &Path) -> Result<(), StoreError> {
    File::open(dir).and_then(|d| d.sync_all()).map_err(|e| io_error("sync", dir, e))
}

/// Hands every record of the log to `visit`, oldest first, after checking that each
/// segment starts where its name says and that revisions run on without a gap. A torn
/// record ending the last segment is truncated away.
pub fn replay(dir: &Path, mut visit: impl FnMut(Record) -> Result<(), StoreError>) -> Result<(), StoreError> {
    let segments = list_segments(dir)?;
    let mut next: Option<Revision> = None;
    for (i, segment) in segments.iter().enumerate() {
        let path = &segment.path;
        let buf = std::fs::read(path).map_err(|e| io_error("read", path, e))?;
        let mut offset = 0;
        loop {
            match record::read(&buf[offset..]) {
                Ok(None) => break,
                Ok(Some((record, used))) => {
                    let first = record.first_revision();
                    if offset == 0 && first != segment.first {
                        return Err(corrupt(path, offset, &format!("the first record starts at revision {first}")));
                    }
                    if let Some(expected) = next.filter(|e| *e != first) {
                        let why = format!("the record starts at revision {first}, not at {expected}");
                        return Err(corrupt(path, offset, &why));
                    }
                    next = Some(record.revision + 1);
                    visit(record)?;
                    offset += used;
                }
                // The preallocated rest of a segment: its records end here.
                Err(ReadError::Torn) if buf[offset..].iter().all(|b| *b == 0) => break,
                Err(ReadError::Torn) if i + 1 == segments.len() => {
                    truncate(path, offset)?;
                    break;
                }
                Err(ReadError::Torn) => return Err(corrupt(path, offset, "the record is cut short")),
                Err(ReadError::Corrupt(why)) => return Err(corrupt(path, offset, &why)),
            }
        }
    }
    Ok(())
}

fn truncate(path: &Path, len: usize) -> Result<(), StoreError> {
    tracing::warn!("write-ahead log {}: dropping a torn, unacknowledged record at offset {len}", path.display());
    let file = OpenOptions::new().write(true).open(path).map_err(|e| io_error("open", path, e))?;
    file.set_len(len as u64).and_then(|()| file.sync_all()).map_err(|e| io_error("truncate", path, e))
}

/// The segments that exist, shared by the appender (which adds) and whoever checkpoints
/// (which deletes).
#[derive(Debug)]
pub struct Segments {
    dir: PathBuf,
    list: Mutex<VecDeque<Segment>>,
}

impl Segments {
    fn lock(&self) -> Result<std::sync::MutexGuard<'_, VecDeque<Segment>>, StoreError> {
        self.list.lock().map_err(|_| StoreError::Backend("log segment list poisoned".into()))
    }

    /// Deletes every segment whose records are all at or below `checkpoint`: those
    /// followed by a segment that starts at or before `checkpoint + 1`. The segment being
    /// appended to is never deleted here.
    pub fn release_through(&self, checkpoint: Revision) -> Result<(), StoreError> {
        let mut list = self.lock()?;
        let mut removed = false;
        while list.get(1).is_some_and(|next| next.first <= checkpoint + 1) {
            if let Some(old) = list.pop_front() {
                std::fs::remove_file(&old.path).map_err(|e| io_error("remove", &old.path, e))?;
                removed = true;
            }
        }
        drop(list);
        if removed { sync_dir(&self.dir) } else { Ok(()) }
    }

    /// How many segment files there are.
    #[cfg(test)]
    pub fn count(&self) -> usize {
        self.list.lock().map(|l| l.len()).unwrap_or(0)
    }
}

/// The appending end of the log. One owner: the committer.
#[derive(Debug)]
pub struct Wal {
    segments: Arc<Segments>,
    file: File,
    /// The segment being appended to.
    active: PathBuf,
    /// Bytes of records in it: where the next record goes.
    len: u64,
    /// Bytes of it written (records, then zeros) and synced.
    allocated: u64,
    segment_bytes: u64,
    /// The revision of the last record appended (or the start revision minus one).
    last: Revision,
    /// The active segment's direct-I/O handle, where the file system allows it.
    #[cfg(target_os = "linux")]
    direct: Option<direct::Direct>,
}

impl Wal {
    /// Starts an empty log in `dir` whose first record will be at `next`. Whatever segments
    /// are there go: the caller has replayed them and made their records durable elsewhere.
    pub fn start(dir: &Path, next: Revision, segment_bytes: u64) -> Result<Wal, StoreError> {
        create_private_dir(dir)?;
        for old in list_segments(dir)? {
            std::fs::remove_file(&old.path).map_err(|e| io_error("remove", &old.path, e))?;
        }
        let first = Segment { first: next, path: segment_path(dir, next) };
        let file = create_segment(&first.path)?;
        sync_dir(dir)?;
        let active = first.path.clone();
        #[cfg(target_os = "linux")]
        let direct = direct::Direct::open(dir, &active).map_err(|e| io_error("open", &active, e))?;
        let segments = Arc::new(Segments { dir: dir.to_path_buf(), list: Mutex::new(VecDeque::from([first])) });
        Ok(Wal {
            segments,
            file,
            active,
            len: 0,
            allocated: 0,
            segment_bytes,
            last: next.saturating_sub(1),
            #[cfg(target_os = "linux")]
            direct,
        })
    }

    /// Whether records are synced through direct I/O (see [`direct`]).
    #[cfg(test)]
    pub fn is_direct(&self) -> bool {
        #[cfg(target_os = "linux")]
        return self.direct.is_some();
        #[cfg(not(target_os = "linux"))]
        return false;
    }

    /// The segment list, for deleting what a checkpoint made redundant.
    pub fn segments(&self) -> Arc<Segments> {
        Arc::clone(&self.segments)
    }

    /// The revision of the last record appended.
    pub fn last_revision(&self) -> Revision {
        self.last
    }

    /// Appends one record and syncs it: when this returns `Ok`, the record survives a crash.
    /// After an error the log's tail is unknown; the caller must stop appending.
    pub fn append(&mut self, record: &Record) -> Result<(), StoreError> {
        let framed = record::frame(record)?;
        if self.len > 0 && self.len + framed.len() as u64 > self.segment_bytes {
            self.roll(record.first_revision())?;
        }
        let end = self.len + framed.len() as u64;
        if !self.append_direct(end, &framed)? {
            self.append_synced(end, &framed)?;
        }
        self.len = end;
        self.last = record.revision;
        Ok(())
    }

    /// Writes `framed` through the direct-I/O path when it has one and the record lies in
    /// the synced, preallocated part of the segment; `false` when it did not.
    #[cfg(target_os = "linux")]
    fn append_direct(&mut self, end: u64, framed: &[u8]) -> Result<bool, StoreError> {
        match self.direct.as_mut() {
            Some(direct) if end.div_ceil(direct::BLOCK) * direct::BLOCK <= self.allocated => {
                direct.append(self.len, framed).map_err(|e| io_error("append to", &self.active, e))?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn append_direct(&mut self, _end: u64, _framed: &[u8]) -> Result<bool, StoreError> {
        Ok(false)
    }

    /// Writes `framed` at the end of records, preallocating past it when needed, and
    /// `fdatasync`s the segment.
    fn append_synced(&mut self, end: u64, framed: &[u8]) -> Result<(), StoreError> {
        let write = self.file.seek(SeekFrom::Start(self.len)).and_then(|_| self.file.write_all(framed));
        write.map_err(|e| io_error("append to", &self.active, e))?;
        if end > self.allocated {
            self.preallocate(end)?;
        }
        self.file.sync_data().map_err(|e| io_error("sync", &self.active, e))?;
        #[cfg(target_os = "linux")]
        if let Some(direct) = self.direct.as_mut() {
            direct.appended(self.len, framed);
        }
        Ok(())
    }

    /// Writes zeros after the record just written (the file's cursor stands at its `end`)
    /// up to the next chunk boundary; the sync of that record makes them durable with it.
    fn preallocate(&mut self, end: u64) -> Result<(), StoreError> {
        let chunk = PREALLOCATE.min(self.segment_bytes).max(1);
        let target = end.div_ceil(chunk) * chunk;
        let zeros = vec![0u8; (target - end) as usize];
        self.file.write_all(&zeros).map_err(|e| io_error("preallocate", &self.active, e))?;
        self.allocated = target;
        Ok(())
    }

    /// Starts a new segment at `first`. The old one needs no sync: every append was synced.
    fn roll(&mut self, first: Revision) -> Result<(), StoreError> {
        let dir = &self.segments.dir;
        let segment = Segment { first, path: segment_path(dir, first) };
        self.file = create_segment(&segment.path)?;
        sync_dir(dir)?;
        #[cfg(target_os = "linux")]
        if let Some(direct) = self.direct.as_mut() {
            direct.roll(&segment.path).map_err(|e| io_error("open", &segment.path, e))?;
        }
        self.active = segment.path.clone();
        self.len = 0;
        self.allocated = 0;
        self.segments.lock()?.push_back(segment);
        Ok(())
    }

    /// Deletes the whole log, after a checkpoint made every record in it durable in the
    /// database (a clean shutdown).
    pub fn remove(self) -> Result<(), StoreError> {
        let Wal { segments, file, .. } = self;
        drop(file);
        let mut list = segments.lock()?;
        while let Some(old) = list.pop_front() {
            std::fs::remove_file(&old.path).map_err(|e| io_error("remove", &old.path, e))?;
        }
        #[cfg(target_os = "linux")]
        direct::remove_flush_file(&segments.dir).map_err(|e| io_error("remove the flush file in", &segments.dir, e))?;
        sync_dir(&segments.dir)
    }
}

/// A new segment file, readable by its owner only: records may hold Secrets.
fn create_segment(path: &Path) -> Result<File, StoreError> {
    let mut options = OpenOptions::new();
    options.read(true).write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path).map_err(|e| io_error("create", path, e))
}

fn create_private_dir(dir: &Path) -> Result<(), StoreError> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir).map_err(|e| io_error("create", dir, e))?;
    match dir.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => sync_dir(parent),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests;
