//! The redb database: its tables, how a key's value is stored, and the transactions the
//! backend runs (open, load, apply logged records).
//!
//! One table maps each key to its create and mod revisions followed by its value bytes;
//! a second holds the revision the tables are at. A database that was durably committed
//! at revision R holds exactly the effect of every write up to R: the checkpoint the log
//! replays from.
//!
//! Durable commits record redb's allocator state (its "quick repair"): a database left
//! open by a killed process then reopens by loading that state, not by walking and
//! checksumming every page (at 300,000 objects that walk was a fifth of the restart's
//! CPU). It costs each checkpoint a second fsync and the state's few pages.

use super::super::wal::record::{Entry, Record};
use super::super::{KeyValue, Revision, StoreError};
use bytes::Bytes;
use redb::{Database, DatabaseError, Durability, ReadableDatabase, ReadableTable, Table, TableDefinition};
use std::path::{Path, PathBuf};

const OBJECTS: TableDefinition<&str, &[u8]> = TableDefinition::new("objects");
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
const REVISION_KEY: &str = "revision";
/// Two little-endian u64s (create and mod revision) precede each stored value.
const HEADER: usize = 16;

/// What a freshly opened database holds.
pub struct Loaded {
    pub revision: Revision,
    pub items: Vec<KeyValue>,
}

pub fn backend(e: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(e.to_string())
}

/// redb's page cache. The store serves every read from memory and only writes here (the
/// checkpointer) or reads it whole once at start-up, so redb's default 1 GiB cache would
/// only keep a second copy of the data that was loaded or checkpointed: pages stay in the
/// cache until it is full.
const CACHE_BYTES: usize = 16 * 1024 * 1024;

/// Opens (or creates) the database at `path`, taking its lock, with both tables present.
pub fn open(path: &Path) -> Result<Database, StoreError> {
    let db = Database::builder().set_cache_size(CACHE_BYTES).create(path).map_err(|e| match e {
        DatabaseError::DatabaseAlreadyOpen => StoreError::Locked { path: PathBuf::from(path) },
        other => StoreError::Backend(format!("cannot open {}: {other}", path.display())),
    })?;
    // The store may hold Secrets: readable by its owner only.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(backend)?;
    }
    // Create the tables up front so that reads of a new database find them.
    let txn = db.begin_write().map_err(backend)?;
    {
        txn.open_table(OBJECTS).map_err(backend)?;
        txn.open_table(META).map_err(backend)?;
    }
    txn.commit().map_err(backend)?;
    Ok(db)
}

/// The revision the tables are at.
pub fn revision(db: &Database) -> Result<Revision, StoreError> {
    let txn = db.begin_read().map_err(backend)?;
    let meta = txn.open_table(META).map_err(backend)?;
    Ok(meta.get(REVISION_KEY).map_err(backend)?.map(|v| v.value()).unwrap_or(0))
}

pub fn load(db: &Database) -> Result<Loaded, StoreError> {
    let revision = revision(db)?;
    let txn = db.begin_read().map_err(backend)?;
    let objects = txn.open_table(OBJECTS).map_err(backend)?;
    let mut items = Vec::new();
    for entry in objects.iter().map_err(backend)? {
        let (k, v) = entry.map_err(backend)?;
        items.push(decode(k.value(), v.value())?);
    }
    Ok(Loaded { revision, items })
}

/// The stored bytes an [`apply`] wrote, and those it replaced or deleted: whether the
/// writes grew the data or churned it.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Applied {
    pub added: u64,
    pub replaced: u64,
}

/// Applies `records` (consecutive, in revision order) in one transaction, which also
/// records the revision the tables are then at.
pub fn apply(db: &Database, records: &[Record], durability: Durability) -> Result<Applied, StoreError> {
    let mut applied = Applied::default();
    let Some(last) = records.last() else { return Ok(applied) };
    let mut txn = db.begin_write().map_err(backend)?;
    txn.set_durability(durability).map_err(backend)?;
    txn.set_quick_repair(matches!(durability, Durability::Immediate));
    {
        let mut objects = txn.open_table(OBJECTS).map_err(backend)?;
        for record in records {
            apply_record(&mut objects, record, &mut applied)?;
        }
        txn.open_table(META).map_err(backend)?.insert(REVISION_KEY, last.revision).map_err(backend)?;
    }
    txn.commit().map_err(backend)?;
    Ok(applied)
}

/// Makes every earlier non-durable commit durable.
pub fn make_durable(db: &Database) -> Result<(), StoreError> {
    let mut txn = db.begin_write().map_err(backend)?;
    txn.set_durability(Durability::Immediate).map_err(backend)?;
    txn.set_quick_repair(true);
    txn.commit().map_err(backend)
}

fn apply_record(objects: &mut Table<&str, &[u8]>, record: &Record, applied: &mut Applied) -> Result<(), StoreError> {
    for entry in &record.entries {
        let old = match entry {
            Entry::Put(kv) => {
                let value = encode(kv);
                applied.added += value.len() as u64;
                objects.insert(kv.key.as_str(), value.as_slice()).map_err(backend)?
            }
            Entry::Delete(key) => objects.remove(key.as_str()).map_err(backend)?,
        };
        applied.replaced += old.map_or(0, |old| old.value().len() as u64);
    }
    Ok(())
}

fn encode(kv: &KeyValue) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + kv.value.len());
    out.extend_from_slice(&kv.create_revision.to_le_bytes());
    out.extend_from_slice(&kv.mod_revision.to_le_bytes());
    out.extend_from_slice(&kv.value);
    out
}

fn decode(key: &str, raw: &[u8]) -> Result<KeyValue, StoreError> {
    let (header, value) = raw
        .split_at_checked(HEADER)
        .ok_or_else(|| StoreError::Backend(format!("stored record for {key:?} is truncated")))?;
    let (created, modified) = header.split_at(8);
    let word = |b: &[u8]| b.try_into().map(u64::from_le_bytes).map_err(backend);
    Ok(KeyValue {
        key: key.to_string(),
        value: Bytes::copy_from_slice(value),
        create_revision: word(created)?,
        mod_revision: word(modified)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip() {
        let kv = KeyValue { key: "/a".into(), value: Bytes::from_static(b"{}"), create_revision: 3, mod_revision: 9 };
        assert_eq!(decode("/a", &encode(&kv)), Ok(kv));
        assert!(matches!(decode("/a", b"short"), Err(StoreError::Backend(_))));
    }

    /// Reopens a copy of the file at `path` as a killed process would leave it (the
    /// original still open): whether redb had to repair it.
    fn repaired_after_a_kill(path: &Path) -> bool {
        let copy = path.with_extension("killed");
        std::fs::copy(path, &copy).expect("copy");
        let repaired = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let seen = repaired.clone();
        let reopened = Database::builder()
            .set_repair_callback(move |_| seen.store(true, std::sync::atomic::Ordering::SeqCst))
            .create(&copy)
            .expect("reopen");
        assert_eq!(load(&reopened).expect("load").items.len(), 200, "every key is back");
        repaired.load(std::sync::atomic::Ordering::SeqCst)
    }

    #[test]
    fn a_database_left_open_by_a_killed_process_reopens_without_a_repair() {
        let dir = tempfile::tempdir().expect("tempdir");
        let put = |i: u64| {
            let kv = KeyValue {
                key: format!("/registry/things/t{i:03}"),
                value: Bytes::from(vec![b'x'; 100]),
                create_revision: i,
                mod_revision: i,
            };
            Record { revision: i, entries: vec![Entry::Put(kv)] }
        };
        let records: Vec<Record> = (1..=200).map(put).collect();

        let path = dir.path().join("store.redb");
        let db = open(&path).expect("open");
        apply(&db, &records[..100], Durability::None).expect("apply");
        apply(&db, &records[100..], Durability::Immediate).expect("checkpoint");
        assert!(!repaired_after_a_kill(&path), "a checkpoint records the allocator state");

        // Without the recorded state (as before), the same file needs the full repair.
        let bare = dir.path().join("bare.redb");
        let db = open(&bare).expect("open");
        let mut txn = db.begin_write().expect("write");
        {
            let mut objects = txn.open_table(OBJECTS).expect("table");
            let mut applied = Applied::default();
            for record in &records {
                apply_record(&mut objects, record, &mut applied).expect("apply");
            }
        }
        txn.set_durability(Durability::Immediate).expect("durability");
        txn.commit().expect("commit");
        assert!(repaired_after_a_kill(&bare), "the test tells a repair from none");
    }

    #[cfg(unix)]
    #[test]
    fn the_database_file_is_private_to_its_owner() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("store.redb");
        let _db = open(&path).expect("open");
        let mode = std::fs::metadata(&path).expect("stat").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
