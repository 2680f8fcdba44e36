use super::record::{Entry, FRAME_HEADER};
use super::*;
use crate::store::KeyValue;
use bytes::Bytes;

/// A record of `n` creates at `first..first + n`.
fn creates(first: Revision, n: u64) -> Record {
    let entries = (first..first + n)
        .map(|rev| {
            Entry::Put(KeyValue {
                key: format!("/k/{rev}"),
                value: Bytes::from(format!("v{rev}")),
                create_revision: rev,
                mod_revision: rev,
            })
        })
        .collect();
    Record { revision: first + n - 1, entries }
}

fn replayed(dir: &Path) -> Result<Vec<Record>, StoreError> {
    let mut out = Vec::new();
    replay(dir, |r| {
        out.push(r);
        Ok(())
    })?;
    Ok(out)
}

/// A log in `dir` holding records of 2, 1 and 3 writes from revision 1 on.
fn write_log(dir: &Path, segment_bytes: u64) -> Vec<Record> {
    let records = vec![creates(1, 2), creates(3, 1), creates(4, 3)];
    let mut wal = Wal::start(dir, 1, segment_bytes).expect("start");
    for r in &records {
        wal.append(r).expect("append");
    }
    assert_eq!(wal.last_revision(), 6);
    records
}

fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        // The segments; on ext4 the log also keeps a file whose sync flushes the disk cache.
        .filter(|name| name.ends_with(".log"))
        .collect();
    names.sort();
    names
}

fn assert_corrupt(result: Result<Vec<Record>, StoreError>, file: &str, offset: usize) {
    match result {
        Err(StoreError::Backend(message)) => {
            assert!(message.contains(file), "{message:?} names {file}");
            assert!(message.contains(&format!("corrupt at offset {offset}")), "{message:?} names offset {offset}");
        }
        other => panic!("expected a corruption error, got {other:?}"),
    }
}

#[test]
fn appended_records_replay_in_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    let records = write_log(dir.path(), 1 << 20);
    assert_eq!(files(dir.path()), ["0000000000000001.log"]);
    assert_eq!(replayed(dir.path()).expect("replay"), records);
}

#[test]
fn a_full_segment_rolls_to_one_named_after_its_first_revision() {
    let dir = tempfile::tempdir().expect("tempdir");
    let records = write_log(dir.path(), 1);
    assert_eq!(files(dir.path()), ["0000000000000001.log", "0000000000000003.log", "0000000000000004.log"]);
    assert_eq!(replayed(dir.path()).expect("replay across segments"), records);
}

#[test]
fn a_torn_tail_is_truncated_and_the_records_before_it_kept() {
    let dir = tempfile::tempdir().expect("tempdir");
    let records = write_log(dir.path(), 1 << 20);
    let path = dir.path().join("0000000000000001.log");
    // The records, then the zeros the segment is preallocated with.
    let good_len: u64 = records.iter().map(|r| record::frame(r).expect("frame").len() as u64).sum();
    assert!(std::fs::metadata(&path).expect("stat").len() > good_len, "the segment is preallocated");
    let torn = record::frame(&creates(7, 2)).expect("frame");
    let mut file = OpenOptions::new().write(true).open(&path).expect("open");
    file.seek(SeekFrom::Start(good_len)).expect("seek");
    file.write_all(&torn[..torn.len() - 5]).expect("write a partial record over the zeros");
    drop(file);

    assert_eq!(replayed(dir.path()).expect("a torn tail is the end of the log"), records);
    assert_eq!(std::fs::metadata(&path).expect("stat").len(), good_len, "the torn bytes are gone");
    assert_eq!(replayed(dir.path()).expect("replay again"), records);
}

#[test]
fn a_damaged_record_before_the_tail_is_an_error_naming_file_and_offset() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_log(dir.path(), 1 << 20);
    let path = dir.path().join("0000000000000001.log");
    let mut bytes = std::fs::read(&path).expect("read");
    let second = record::frame(&creates(1, 2)).expect("frame").len();
    bytes[second + FRAME_HEADER + 2] ^= 0x01;
    std::fs::write(&path, &bytes).expect("write");

    assert_corrupt(replayed(dir.path()), "0000000000000001.log", second);
    assert_eq!(std::fs::read(&path).expect("read"), bytes, "nothing is truncated");
}

#[test]
fn a_cut_short_segment_that_is_not_the_last_is_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_log(dir.path(), 1);
    let path = dir.path().join("0000000000000003.log");
    let len = std::fs::metadata(&path).expect("stat").len();
    OpenOptions::new().write(true).open(&path).expect("open").set_len(len - 1).expect("cut");
    assert_corrupt(replayed(dir.path()), "0000000000000003.log", 0);
}

#[test]
fn a_missing_segment_is_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_log(dir.path(), 1);
    std::fs::remove_file(dir.path().join("0000000000000003.log")).expect("remove");
    let Err(StoreError::Backend(message)) = replayed(dir.path()) else { panic!("a gap must not replay") };
    assert!(message.contains("starts at revision 4, not at 3"), "{message}");
}

#[test]
fn release_deletes_the_segments_a_checkpoint_covers_but_never_the_active_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut wal = Wal::start(dir.path(), 1, 1).expect("start");
    for r in [creates(1, 2), creates(3, 1), creates(4, 3)] {
        wal.append(&r).expect("append");
    }
    let segments = wal.segments();
    segments.release_through(2).expect("release");
    assert_eq!(files(dir.path()), ["0000000000000003.log", "0000000000000004.log"], "1..=2 is checkpointed");
    segments.release_through(6).expect("release");
    assert_eq!(files(dir.path()), ["0000000000000004.log"], "the active segment stays");
    assert_eq!(segments.count(), 1);
    assert_eq!(replayed(dir.path()).expect("replay"), [creates(4, 3)]);

    wal.remove().expect("remove");
    assert!(files(dir.path()).is_empty());
}

#[test]
fn start_clears_an_old_log() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_log(dir.path(), 1);
    let mut wal = Wal::start(dir.path(), 7, 1 << 20).expect("restart");
    assert_eq!(files(dir.path()), ["0000000000000007.log"]);
    wal.append(&creates(7, 1)).expect("append");
    assert_eq!(replayed(dir.path()).expect("replay"), [creates(7, 1)]);
}

#[cfg(unix)]
#[test]
fn the_log_is_private_to_its_owner() {
    use std::os::unix::fs::PermissionsExt;
    let parent = tempfile::tempdir().expect("tempdir");
    let dir = parent.path().join("wal");
    write_log(&dir, 1 << 20);
    let mode = |p: &Path| std::fs::metadata(p).expect("stat").permissions().mode() & 0o777;
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&dir.join("0000000000000001.log")), 0o600);
}

/// Records of every size, across block and preallocation-chunk boundaries, written
/// through whichever sync path the file system allows: they replay byte for byte. On
/// ext4 (this project's CI) that is the direct path, and a clean removal takes its
/// flush file too.
#[test]
fn records_synced_through_direct_io_replay_exactly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("wal");
    let mut wal = Wal::start(&log, 1, 4 << 20).expect("start");
    let on_ext4 = rustix::fs::statfs(dir.path()).expect("statfs").f_type as i64 == super::direct::EXT4_SUPER_MAGIC;
    assert_eq!(wal.is_direct(), on_ext4, "direct I/O is used exactly where it is known to be durable");
    let mut written = Vec::new();
    // About 1.3 MB: past the first 1 MiB chunk, so both paths take turns.
    for i in 0..900u64 {
        let revision = i + 1;
        let value = "x".repeat(((i * 397) % 3000) as usize);
        let record = Record {
            revision,
            entries: vec![Entry::Put(KeyValue {
                key: format!("/k/{i}"),
                value: Bytes::from(value),
                create_revision: revision,
                mod_revision: revision,
            })],
        };
        wal.append(&record).expect("append");
        written.push(record);
    }
    assert_eq!(replayed(&log).expect("replay"), written);
    assert_eq!(files(&log), ["0000000000000001.log"]);
    wal.remove().expect("remove");
    assert_eq!(std::fs::read_dir(&log).expect("log dir").count(), 0, "a removed log leaves nothing behind");
}
