//! The log's record format: pure encoding and decoding, no IO.
//!
//! One record holds one committed batch. On disk it is framed as
//! `[len u32 LE][crc u32 LE][payload; len bytes]`, where `crc` is the CRC-32C of the four
//! length bytes followed by the payload: covering the length makes a zeroed region (what
//! some filesystems show after a crash) fail the check instead of reading as an empty
//! record. The payload is `[revision u64][count u32]` and `count` entries, each
//! `[kind u8][key_len u32][key]`, and for a put also `[create u64][mod u64][value_len u32]
//! [value]`. Integers are little-endian. A batch takes consecutive revisions ending at
//! `revision`, one per entry, so a record covers `revision - count + 1 ..= revision`.

use crate::store::{KeyValue, Revision, StoreError, WatchEvent};
use bytes::Bytes;

/// Length and checksum in front of every payload.
pub const FRAME_HEADER: usize = 8;
const PUT: u8 = 1;
const DELETE: u8 = 2;

/// One change of a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    Put(KeyValue),
    Delete(String),
}

/// One committed batch: the changes in revision order, the last at `revision`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub revision: Revision,
    pub entries: Vec<Entry>,
}

impl Record {
    /// The record of a committed batch; `None` for an empty one.
    pub fn from_batch(batch: &[WatchEvent]) -> Option<Record> {
        let revision = batch.last()?.revision;
        let entries = batch
            .iter()
            .map(|e| match &e.current {
                Some(kv) => Entry::Put(kv.clone()),
                None => Entry::Delete(e.key.clone()),
            })
            .collect();
        Some(Record { revision, entries })
    }

    /// The revision of the first change.
    pub fn first_revision(&self) -> Revision {
        (self.revision + 1).saturating_sub(self.entries.len() as u64)
    }

    /// Roughly the bytes the record occupies: what checkpoint thresholds and the hand-off
    /// bound count.
    pub fn weight(&self) -> usize {
        self.entries
            .iter()
            .map(|e| match e {
                Entry::Put(kv) => 32 + kv.key.len() + kv.value.len(),
                Entry::Delete(key) => 8 + key.len(),
            })
            .sum()
    }
}

/// The record framed for the log: length, checksum, payload. Fails when the payload does
/// not fit the 32-bit length (which then also bounds every key and value in it).
pub fn frame(record: &Record) -> Result<Vec<u8>, StoreError> {
    let mut out = Vec::with_capacity(FRAME_HEADER + 12 + record.weight());
    out.extend_from_slice(&[0; FRAME_HEADER]);
    out.extend_from_slice(&record.revision.to_le_bytes());
    out.extend_from_slice(&(record.entries.len() as u32).to_le_bytes());
    for entry in &record.entries {
        match entry {
            Entry::Put(kv) => {
                out.push(PUT);
                put_bytes(&mut out, kv.key.as_bytes());
                out.extend_from_slice(&kv.create_revision.to_le_bytes());
                out.extend_from_slice(&kv.mod_revision.to_le_bytes());
                put_bytes(&mut out, &kv.value);
            }
            Entry::Delete(key) => {
                out.push(DELETE);
                put_bytes(&mut out, key.as_bytes());
            }
        }
    }
    let len = u32::try_from(out.len() - FRAME_HEADER)
        .map_err(|_| StoreError::Backend(format!("a batch of {} bytes is too large for one log record", out.len())))?;
    out[..4].copy_from_slice(&len.to_le_bytes());
    let crc = crc32c(&[&len.to_le_bytes(), &out[FRAME_HEADER..]]);
    out[4..FRAME_HEADER].copy_from_slice(&crc.to_le_bytes());
    Ok(out)
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// Why the bytes at some offset are not a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// Everything from here to the end is not one whole, intact record: a write the crash
    /// cut short. It was never acknowledged (acknowledgement follows the sync).
    Torn,
    /// A damaged or malformed record with more log after it: acknowledged data is at stake.
    Corrupt(String),
}

/// Reads the record at the start of `buf` (the rest of a segment). `Ok(None)` at the end;
/// otherwise the record and how many bytes it took.
pub fn read(buf: &[u8]) -> Result<Option<(Record, usize)>, ReadError> {
    if buf.is_empty() {
        return Ok(None);
    }
    let Some((header, rest)) = buf.split_at_checked(FRAME_HEADER) else { return Err(ReadError::Torn) };
    let len_bytes: [u8; 4] = [header[0], header[1], header[2], header[3]];
    let stored_crc = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
    let len = u32::from_le_bytes(len_bytes) as usize;
    let Some(payload) = rest.get(..len) else { return Err(ReadError::Torn) };
    if crc32c(&[&len_bytes, payload]) != stored_crc {
        // A sync that did not finish can leave a record of the right length with pages
        // missing, or a zero-filled extension of the file, but only as the very last thing
        // written: only zeros (a preallocated tail, or nothing) may follow it.
        let nothing_after = rest[len..].iter().all(|b| *b == 0);
        return Err(if nothing_after || buf.iter().all(|b| *b == 0) {
            ReadError::Torn
        } else {
            ReadError::Corrupt("checksum mismatch".into())
        });
    }
    let record = decode(payload).map_err(ReadError::Corrupt)?;
    Ok(Some((record, FRAME_HEADER + len)))
}

/// Decodes a payload whose checksum matched; an error here is a bug or an unknown format.
fn decode(payload: &[u8]) -> Result<Record, String> {
    let mut r = Reader(payload);
    let revision = r.u64()?;
    let count = r.u32()? as usize;
    if count == 0 || count as u64 > revision {
        return Err(format!("{count} entries cannot end at revision {revision}"));
    }
    let mut entries = Vec::with_capacity(count.min(payload.len()));
    for _ in 0..count {
        let kind = r.take(1)?[0];
        let key = String::from_utf8(r.bytes()?.to_vec()).map_err(|_| "a key is not UTF-8".to_string())?;
        entries.push(match kind {
            PUT => {
                let create_revision = r.u64()?;
                let mod_revision = r.u64()?;
                let value = Bytes::copy_from_slice(r.bytes()?);
                Entry::Put(KeyValue { key, value, create_revision, mod_revision })
            }
            DELETE => Entry::Delete(key),
            other => return Err(format!("unknown entry kind {other}")),
        });
    }
    if !r.0.is_empty() {
        return Err(format!("{} bytes after the last entry", r.0.len()));
    }
    Ok(Record { revision, entries })
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let (head, tail) = self.0.split_at_checked(n).ok_or_else(|| "the payload ends inside an entry".to_string())?;
        self.0 = tail;
        Ok(head)
    }

    fn u32(&mut self) -> Result<u32, String> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Result<u64, String> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
    }

    fn bytes(&mut self) -> Result<&'a [u8], String> {
        let len = self.u32()? as usize;
        self.take(len)
    }
}

/// CRC-32C (Castagnoli) of the parts as one stream. A byte at a time through a table it
/// was 2.4% of the CPU of creating 2,000 CRDs (every 40 KiB write is checksummed once
/// when logged, and again when a restart reads the log).
fn crc32c(parts: &[&[u8]]) -> u32 {
    parts.iter().fold(0, |crc, part| crc32c::crc32c_append(crc, part))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(key: &str, value: &str, create: Revision, modified: Revision) -> Entry {
        Entry::Put(KeyValue {
            key: key.into(),
            value: Bytes::from(value.to_string()),
            create_revision: create,
            mod_revision: modified,
        })
    }

    fn sample() -> Record {
        Record { revision: 9, entries: vec![put("/a", "{}", 3, 7), Entry::Delete("/b".into()), put("/c", "", 9, 9)] }
    }

    #[test]
    fn crc32c_matches_the_standard_check_value() {
        assert_eq!(crc32c(&[b"123456789"]), 0xE306_9283);
        assert_eq!(crc32c(&[b"1234", b"56789"]), 0xE306_9283, "parts are one stream");
    }

    #[test]
    fn records_round_trip() {
        let framed = frame(&sample()).expect("frame");
        assert_eq!(read(&framed), Ok(Some((sample(), framed.len()))));
        assert_eq!(sample().first_revision(), 7);
        assert_eq!(read(&[]), Ok(None));
    }

    #[test]
    fn records_are_read_one_after_another() {
        let second = Record { revision: 10, entries: vec![put("/d", "x", 10, 10)] };
        let mut log = frame(&sample()).expect("frame");
        let first_len = log.len();
        log.extend(frame(&second).expect("frame"));
        assert_eq!(read(&log).map(|r| r.map(|(_, used)| used)), Ok(Some(first_len)));
        assert_eq!(read(&log[first_len..]), Ok(Some((second, log.len() - first_len))));
    }

    #[test]
    fn a_cut_short_record_is_torn() {
        let framed = frame(&sample()).expect("frame");
        for cut in [1, FRAME_HEADER - 1, FRAME_HEADER, framed.len() - 1] {
            assert_eq!(read(&framed[..cut]), Err(ReadError::Torn), "cut at {cut}");
        }
        let mut zeroed = framed.clone();
        zeroed[FRAME_HEADER..].fill(0);
        assert_eq!(read(&zeroed), Err(ReadError::Torn), "a whole-length record with lost pages, at the end");
        assert_eq!(read(&[0; 64]), Err(ReadError::Torn), "zeros to the end");
        let mut preallocated = zeroed.clone();
        preallocated.extend_from_slice(&[0; 128]);
        assert_eq!(read(&preallocated), Err(ReadError::Torn), "lost pages, then the preallocated zeros");
    }

    #[test]
    fn a_damaged_record_with_more_after_it_is_corrupt() {
        let mut log = frame(&sample()).expect("frame");
        log[FRAME_HEADER + 3] ^= 0x10;
        log.extend(frame(&sample()).expect("frame"));
        assert!(matches!(read(&log), Err(ReadError::Corrupt(_))));
    }

    #[test]
    fn a_malformed_payload_with_a_good_checksum_is_corrupt() {
        let mut framed = frame(&Record { revision: 1, entries: vec![Entry::Delete("/a".into())] }).expect("frame");
        framed[FRAME_HEADER + 12] = 7; // the entry kind
        let len = (framed.len() - FRAME_HEADER) as u32;
        let crc = crc32c(&[&len.to_le_bytes(), &framed[FRAME_HEADER..]]);
        framed[4..FRAME_HEADER].copy_from_slice(&crc.to_le_bytes());
        assert_eq!(read(&framed), Err(ReadError::Corrupt("unknown entry kind 7".into())));
    }
}
