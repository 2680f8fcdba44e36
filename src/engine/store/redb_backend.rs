//! Durability on disk with redb: the current value of every key, and the store revision.
//!
//! One table maps each key to its create and mod revisions followed by its value bytes;
//! a second holds the store's revision. A batch is written in one redb write transaction
//! committed with `Durability::Immediate`, so it is on disk, all or none, before the
//! committer answers anyone. History is not persisted: after a restart, watches start
//! from the loaded revision (older ones get `Expired`, as after a kube-apiserver restart).

use super::writer::Persist;
use super::{KeyValue, Revision, StoreError, WatchEvent};
use bytes::Bytes;
use redb::{Database, DatabaseError, Durability, ReadableDatabase, ReadableTable, TableDefinition};
use std::path::{Path, PathBuf};

const OBJECTS: TableDefinition<&str, &[u8]> = TableDefinition::new("objects");
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
const REVISION_KEY: &str = "revision";
/// Two little-endian u64s (create and mod revision) precede each stored value.
const HEADER: usize = 16;

/// The redb [`Persist`] backend.
pub struct RedbPersist {
    db: Database,
}

/// What a freshly opened database holds.
pub struct Loaded {
    pub revision: Revision,
    pub items: Vec<KeyValue>,
}

fn backend(e: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(e.to_string())
}

impl RedbPersist {
    /// Opens (or creates) the database at `path` and reads everything it holds.
    pub fn open(path: &Path) -> Result<(Self, Loaded), StoreError> {
        let db = Database::create(path).map_err(|e| match e {
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
        let loaded = load(&db)?;
        Ok((RedbPersist { db }, loaded))
    }
}

fn load(db: &Database) -> Result<Loaded, StoreError> {
    let txn = db.begin_read().map_err(backend)?;
    let meta = txn.open_table(META).map_err(backend)?;
    let revision = meta.get(REVISION_KEY).map_err(backend)?.map(|v| v.value()).unwrap_or(0);
    let objects = txn.open_table(OBJECTS).map_err(backend)?;
    let mut items = Vec::new();
    for entry in objects.iter().map_err(backend)? {
        let (k, v) = entry.map_err(backend)?;
        items.push(decode(k.value(), v.value())?);
    }
    Ok(Loaded { revision, items })
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

impl Persist for RedbPersist {
    fn persist(&mut self, batch: &[WatchEvent]) -> Result<(), StoreError> {
        let Some(last) = batch.last() else { return Ok(()) };
        let mut txn = self.db.begin_write().map_err(backend)?;
        txn.set_durability(Durability::Immediate).map_err(backend)?;
        {
            let mut objects = txn.open_table(OBJECTS).map_err(backend)?;
            for event in batch {
                match &event.current {
                    Some(kv) => {
                        objects.insert(event.key.as_str(), encode(kv).as_slice()).map_err(backend)?;
                    }
                    None => {
                        objects.remove(event.key.as_str()).map_err(backend)?;
                    }
                }
            }
            let mut meta = txn.open_table(META).map_err(backend)?;
            meta.insert(REVISION_KEY, last.revision).map_err(backend)?;
        }
        txn.commit().map_err(backend)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let kv = KeyValue { key: "/a".into(), value: Bytes::from_static(b"{}"), create_revision: 3, mod_revision: 9 };
        assert_eq!(decode("/a", &encode(&kv)), Ok(kv));
        assert!(matches!(decode("/a", b"short"), Err(StoreError::Backend(_))));
    }

    #[cfg(unix)]
    #[test]
    fn the_database_file_is_private_to_its_owner() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("store.redb");
        let _opened = RedbPersist::open(&path).expect("open");
        let mode = std::fs::metadata(&path).expect("stat").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
