use super::*;
use crate::store::KeyValue;
use bytes::Bytes;
use std::time::{Duration, Instant};

/// A batch creating `/k/<rev>` at each of `first..first + n`.
fn creates(first: Revision, n: u64) -> Vec<WatchEvent> {
    (first..first + n)
        .map(|rev| {
            let kv = KeyValue {
                key: format!("/k/{rev}"),
                value: Bytes::from(format!("v{rev}")),
                create_revision: rev,
                mod_revision: rev,
            };
            WatchEvent { revision: rev, key: kv.key.clone(), current: Some(kv), prev: None }
        })
        .collect()
}

/// Where the records of a segment end (its preallocated zeros begin).
fn records_end(segment: &[u8]) -> usize {
    let mut end = 0;
    while let Ok(Some((_, used))) = crate::store::wal::record::read(&segment[end..]) {
        end += used;
    }
    end
}

/// Keys of the loaded items, sorted.
fn keys(loaded: &Loaded) -> Vec<String> {
    let mut keys: Vec<String> = loaded.items.iter().map(|kv| kv.key.clone()).collect();
    keys.sort();
    keys
}

fn expected_keys(revisions: std::ops::RangeInclusive<Revision>) -> Vec<String> {
    let mut keys: Vec<String> = revisions.map(|r| format!("/k/{r}")).collect();
    keys.sort();
    keys
}

fn log_files(db: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(wal_dir(db))
        .expect("read the log dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        // The segments; on ext4 the log also keeps a file whose sync flushes the disk cache.
        .filter(|name| name.ends_with(".log"))
        .collect();
    names.sort();
    names
}

/// Never checkpoints: the database stays where it was and only the log holds new writes,
/// as when a process is killed before its first checkpoint.
fn crashing() -> Tuning {
    Tuning { checkpoint: Policy::Never, ..Tuning::default() }
}

/// Writes `batches` and closes cleanly.
fn write_checkpointed(db: &Path, batches: &[Vec<WatchEvent>]) {
    let (mut persist, _) = RedbPersist::open(db).expect("open");
    for batch in batches {
        persist.persist(batch).expect("persist");
    }
}

/// Writes `batches` through a backend that never checkpoints, then drops it.
fn write_uncheckpointed(db: &Path, batches: &[Vec<WatchEvent>]) {
    let (mut persist, _) = RedbPersist::open_tuned(db, crashing()).expect("open");
    for batch in batches {
        persist.persist(batch).expect("persist");
    }
}

#[test]
fn a_clean_close_checkpoints_and_empties_the_log() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("store.redb");
    let (mut persist, loaded) = RedbPersist::open(&db).expect("open");
    assert_eq!((loaded.revision, loaded.items.len()), (0, 0));
    persist.persist(&creates(1, 3)).expect("persist");
    persist.persist(&creates(4, 2)).expect("persist");
    assert_eq!(log_files(&db), ["0000000000000001.log"]);
    drop(persist);
    assert!(log_files(&db).is_empty(), "everything was checkpointed: {:?}", log_files(&db));

    let (_persist, loaded) = RedbPersist::open(&db).expect("reopen");
    assert_eq!(loaded.revision, 5);
    assert_eq!(keys(&loaded), expected_keys(1..=5));
    assert_eq!(log_files(&db), ["0000000000000006.log"], "a fresh log starts at the next revision");
}

#[test]
fn reopening_replays_logged_writes_the_database_never_saw() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("store.redb");
    write_checkpointed(&db, &[creates(1, 2)]);
    // The database is checkpointed at 2; 3..=7 exist only in the log.
    write_uncheckpointed(&db, &[creates(3, 4), creates(7, 1)]);
    assert_eq!(log_files(&db), ["0000000000000003.log"], "without a checkpoint the log stays");

    let (persist, loaded) = RedbPersist::open(&db).expect("reopen");
    assert_eq!(loaded.revision, 7);
    assert_eq!(keys(&loaded), expected_keys(1..=7));
    drop(persist);
    let (_persist, again) = RedbPersist::open(&db).expect("reopen after replay");
    assert_eq!((again.revision, keys(&again)), (7, expected_keys(1..=7)), "the replay was made durable");
}

#[test]
fn a_torn_record_at_the_end_of_the_log_is_dropped_and_the_rest_replayed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("store.redb");
    write_uncheckpointed(&db, &[creates(1, 2), creates(3, 1)]);
    let segment = wal_dir(&db).join("0000000000000001.log");
    let mut torn = std::fs::read(&segment).expect("read");
    let preallocated = torn.len();
    torn.truncate(records_end(&torn));
    torn.extend_from_slice(&[0x40, 0, 0, 0, 1, 2, 3]); // a record cut off after 7 bytes
    torn.resize(preallocated, 0); // then the zeros the segment was filled with
    std::fs::write(&segment, torn).expect("write");

    let (_persist, loaded) = RedbPersist::open(&db).expect("a torn tail does not stop the open");
    assert_eq!((loaded.revision, keys(&loaded)), (3, expected_keys(1..=3)));
}

#[test]
fn a_damaged_acknowledged_record_fails_the_open_and_keeps_the_log() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("store.redb");
    write_uncheckpointed(&db, &[creates(1, 2), creates(3, 1)]);
    let segment = wal_dir(&db).join("0000000000000001.log");
    let mut bytes = std::fs::read(&segment).expect("read");
    bytes[20] ^= 0x01; // inside the first record's payload
    std::fs::write(&segment, &bytes).expect("write");

    for _ in 0..2 {
        match RedbPersist::open(&db) {
            Err(StoreError::Backend(message)) => {
                assert!(message.contains("0000000000000001.log") && message.contains("offset 0"), "{message}")
            }
            Err(other) => panic!("expected a corruption error, not {other:?}"),
            Ok(_) => panic!("a damaged acknowledged record must not open"),
        }
    }
    assert_eq!(std::fs::read(&segment).expect("read"), bytes, "the log is left for a human to inspect");
}

#[test]
fn a_log_that_does_not_continue_the_database_fails_the_open() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("store.redb");
    write_checkpointed(&db, &[creates(1, 2)]);
    let mut wal = Wal::start(&wal_dir(&db), 5, 1 << 20).expect("start a log");
    wal.append(&Record::from_batch(&creates(5, 1)).expect("record")).expect("append");
    drop(wal);

    let Err(StoreError::Backend(message)) = RedbPersist::open(&db).map(|_| ()) else {
        panic!("revisions 3 and 4 are missing: the open must fail")
    };
    assert!(message.contains("at revision 2") && message.contains("revision 5"), "{message}");
}

#[test]
fn checkpoints_delete_the_segments_they_cover() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("store.redb");
    // Every record starts a segment; every batch is a checkpoint.
    let tuning =
        Tuning { segment_bytes: 1, checkpoint: Policy::Every { changes: 1, bytes: usize::MAX }, ..Tuning::default() };
    let (mut persist, _) = RedbPersist::open_tuned(&db, tuning).expect("open");
    for first in (1..=10).step_by(2) {
        persist.persist(&creates(first, 2)).expect("persist");
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while log_files(&db) != ["0000000000000009.log"] {
        assert!(Instant::now() < deadline, "checkpoints left {:?}", log_files(&db));
        std::thread::sleep(Duration::from_millis(5));
    }
    drop(persist);
    let (_persist, loaded) = RedbPersist::open(&db).expect("reopen");
    assert_eq!((loaded.revision, keys(&loaded)), (10, expected_keys(1..=10)));
}

#[test]
fn a_second_opener_is_refused_before_the_log_is_touched() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("store.redb");
    let (mut first, _) = RedbPersist::open(&db).expect("open");
    first.persist(&creates(1, 1)).expect("persist");
    assert!(matches!(RedbPersist::open(&db).map(|_| ()), Err(StoreError::Locked { .. })));
    assert_eq!(log_files(&db), ["0000000000000001.log"]);
    first.persist(&creates(2, 1)).expect("the first opener's log is intact");
}

/// `rounds` rewrites of the same `keys` keys with 1,000-byte values (objects' size), one
/// batch per round.
fn churn(persist: &mut RedbPersist, keys: u64, rounds: u64) {
    let mut rev = 0;
    for round in 0..rounds {
        let batch: Vec<WatchEvent> = (0..keys)
            .map(|k| {
                rev += 1;
                let kv = KeyValue {
                    key: format!("/k/{k:04}"),
                    value: Bytes::from(vec![b'a' + (round % 26) as u8; 1000]),
                    create_revision: k + 1,
                    mod_revision: rev,
                };
                WatchEvent { revision: rev, key: kv.key.clone(), current: Some(kv), prev: None }
            })
            .collect();
        persist.persist(&batch).expect("persist");
    }
}

/// The database file's size once the checkpointer has taken in everything (closed).
fn churned_file_size(compaction: Compaction) -> u64 {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("store.redb");
    let checkpoint = Policy::Every { changes: 2000, bytes: usize::MAX };
    let (mut persist, _) =
        RedbPersist::open_tuned(&db, Tuning { checkpoint, compaction, ..Tuning::default() }).expect("open");
    churn(&mut persist, 2000, 60);
    drop(persist);
    let size = std::fs::metadata(&db).expect("the file").len();
    let (_persist, loaded) = RedbPersist::open(&db).expect("reopen");
    assert_eq!(loaded.items.len(), 2000, "every key kept");
    assert!(loaded.items.iter().all(|kv| kv.value[0] == b'a' + 59 % 26), "the last round's values");
    size
}

#[test]
fn churn_is_compacted_to_within_twice_the_live_data() {
    // 2,000 keys of 1,000 bytes: about 2 MB live, rewritten 60 times.
    let live = 2000 * 1000;
    let compacted = churned_file_size(Compaction { check_every: Duration::ZERO, from_bytes: 0 });
    let left = churned_file_size(Compaction { check_every: Duration::ZERO, from_bytes: u64::MAX });
    assert!(compacted <= 2 * live, "compacted to {compacted} bytes for {live} live");
    assert!(left > 2 * live, "without compaction the file holds {left} bytes (the test would prove nothing)");
}

#[test]
fn a_churn_that_ends_between_checks_is_compacted_on_close() {
    let live = 2000 * 1000;
    // The first check comes only after an hour: the close's is the only one.
    let compacted = churned_file_size(Compaction { check_every: Duration::from_secs(3600), from_bytes: 0 });
    assert!(compacted <= 2 * live, "compacted to {compacted} bytes for {live} live");
}
