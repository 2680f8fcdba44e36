//! etcd v3's gRPC messages: what the engine sends and reads, and nothing else.
//!
//! Pure data, no IO. Field numbers are those of etcd's `rpc.proto` and `kv.proto` (the API
//! is frozen since 3.0, new fields only ever added); fields the engine does not use are
//! neither written nor read. Keys and values are slices of the message read, not copies.

use super::super::{KeyValue, Revision};
use super::proto::{Decode, DecodeError, Encode, Value, Writer};
use bytes::Bytes;

/// The gRPC methods called, as paths.
pub mod method {
    pub const RANGE: &str = "/etcdserverpb.KV/Range";
    pub const TXN: &str = "/etcdserverpb.KV/Txn";
    #[cfg(test)]
    pub const COMPACT: &str = "/etcdserverpb.KV/Compact";
    pub const WATCH: &str = "/etcdserverpb.Watch/Watch";
    pub const LEASE_GRANT: &str = "/etcdserverpb.Lease/LeaseGrant";
    pub const LEASE_REVOKE: &str = "/etcdserverpb.Lease/LeaseRevoke";
    pub const LEASE_KEEP_ALIVE: &str = "/etcdserverpb.Lease/LeaseKeepAlive";
    pub const LEASE_TIME_TO_LIVE: &str = "/etcdserverpb.Lease/LeaseTimeToLive";
}

/// gRPC's code for "try again later" (no leader, leader changed, request timed out).
pub const GRPC_UNAVAILABLE: u32 = 14;
/// gRPC's code for a deadline that passed.
pub const GRPC_DEADLINE_EXCEEDED: u32 = 4;

/// etcd's words for a read below the compacted revision.
pub const COMPACTED: &str = "required revision has been compacted";
/// etcd's words for a read above the current revision.
pub const FUTURE: &str = "required revision is a future revision";
/// etcd's words for a write over `--max-request-bytes`.
pub const TOO_LARGE: &str = "request is too large";

/// A nested message's value.
fn nested<T: Decode>(value: Value) -> Result<T, DecodeError> {
    T::decode(value.bytes()?)
}

/// The header every response carries.
#[derive(Debug, Default)]
pub struct Header {
    /// The store's revision when the request was served.
    pub revision: Revision,
}

impl Decode for Header {
    fn merge(&mut self, field: u32, value: Value) -> Result<(), DecodeError> {
        if field == 3 {
            self.revision = value.uint()?;
        }
        Ok(())
    }
}

/// One key as etcd returns it (`mvccpb.KeyValue`).
#[derive(Debug, Default)]
pub struct Kv {
    pub key: Bytes,
    pub value: Bytes,
    pub create_revision: Revision,
    pub mod_revision: Revision,
    /// The etcd lease the key is attached to (0: none).
    pub lease: u64,
}

impl Decode for Kv {
    fn merge(&mut self, field: u32, value: Value) -> Result<(), DecodeError> {
        match field {
            1 => self.key = value.bytes()?,
            2 => self.create_revision = value.uint()?,
            3 => self.mod_revision = value.uint()?,
            5 => self.value = value.bytes()?,
            6 => self.lease = value.uint()?,
            _ => {}
        }
        Ok(())
    }
}

impl Kv {
    /// The store's view of it, with `key` already mapped back from etcd's.
    pub fn into_key_value(self, key: String) -> KeyValue {
        KeyValue { key, value: self.value, create_revision: self.create_revision, mod_revision: self.mod_revision }
    }
}

/// A range: the keys `[key, range_end)` (only `key` without an end).
#[derive(Debug, Default, Clone)]
pub struct Range {
    pub key: Vec<u8>,
    pub range_end: Vec<u8>,
    /// At most this many (0: all).
    pub limit: u64,
    /// At this revision (0: the current one).
    pub revision: Revision,
    pub keys_only: bool,
    pub count_only: bool,
}

impl Range {
    /// One key.
    pub fn key(key: Vec<u8>) -> Self {
        Range { key, ..Range::default() }
    }

    /// Every key starting with `prefix`.
    pub fn prefix(prefix: Vec<u8>) -> Self {
        Range { range_end: prefix_end(&prefix), key: prefix, ..Range::default() }
    }
}

impl Encode for Range {
    fn encode(&self, w: &mut Writer) {
        w.bytes(1, &self.key);
        w.bytes(2, &self.range_end);
        w.uint(3, self.limit);
        w.uint(4, self.revision);
        w.bool(8, self.keys_only);
        w.bool(9, self.count_only);
    }
}

/// A range's answer.
#[derive(Debug, Default)]
pub struct RangeResponse {
    pub header: Header,
    pub kvs: Vec<Kv>,
    /// How many keys the range holds, whatever the limit.
    pub count: u64,
}

impl Decode for RangeResponse {
    fn merge(&mut self, field: u32, value: Value) -> Result<(), DecodeError> {
        match field {
            1 => self.header = nested(value)?,
            2 => self.kvs.push(nested(value)?),
            4 => self.count = value.uint()?,
            _ => {}
        }
        Ok(())
    }
}

/// A delete's answer (inside a transaction).
#[derive(Debug, Default)]
pub struct DeleteResponse {
    pub prev_kvs: Vec<Kv>,
}

impl Decode for DeleteResponse {
    fn merge(&mut self, field: u32, value: Value) -> Result<(), DecodeError> {
        if field == 3 {
            self.prev_kvs.push(nested(value)?);
        }
        Ok(())
    }
}

/// One operation's answer inside a transaction.
#[derive(Debug, Default)]
pub struct OpResponse {
    pub response_range: Option<RangeResponse>,
    pub response_delete_range: Option<DeleteResponse>,
}

impl Decode for OpResponse {
    fn merge(&mut self, field: u32, value: Value) -> Result<(), DecodeError> {
        match field {
            1 => self.response_range = Some(nested(value)?),
            3 => self.response_delete_range = Some(nested(value)?),
            _ => {}
        }
        Ok(())
    }
}

/// A transaction's answer.
#[derive(Debug, Default)]
pub struct TxnResponse {
    pub header: Header,
    pub succeeded: bool,
    pub responses: Vec<OpResponse>,
}

impl Decode for TxnResponse {
    fn merge(&mut self, field: u32, value: Value) -> Result<(), DecodeError> {
        match field {
            1 => self.header = nested(value)?,
            2 => self.succeeded = value.bool()?,
            3 => self.responses.push(nested(value)?),
            _ => {}
        }
        Ok(())
    }
}

impl TxnResponse {
    /// The first key a range of the transaction read.
    pub fn first_kv(&self) -> Option<&Kv> {
        self.responses.iter().find_map(|r| r.response_range.as_ref()).and_then(|r| r.kvs.first())
    }
}

/// Which revision of a key a comparison reads.
#[derive(Debug, Clone, Copy)]
pub enum Target {
    /// The key's `create_revision` (0: absent).
    Create,
    /// The key's `mod_revision`.
    Mod,
}

/// A comparison of a transaction.
#[derive(Debug, Clone, Copy)]
pub enum Cmp {
    Equal,
    NotEqual,
}

/// `target(key) cmp revision`.
#[derive(Debug, Clone)]
pub struct Compare {
    pub key: Vec<u8>,
    pub target: Target,
    pub cmp: Cmp,
    pub revision: Revision,
}

/// `target(key) cmp revision`.
pub fn compare(key: &[u8], target: Target, cmp: Cmp, revision: Revision) -> Compare {
    Compare { key: key.to_vec(), target, cmp, revision }
}

impl Encode for Compare {
    fn encode(&self, w: &mut Writer) {
        // CompareResult: EQUAL 0, NOT_EQUAL 3. CompareTarget: CREATE 1, MOD 2; the revision
        // goes in the union's field of that target (create_revision 5, mod_revision 6).
        w.uint(
            1,
            match self.cmp {
                Cmp::Equal => 0,
                Cmp::NotEqual => 3,
            },
        );
        let (target, field) = match self.target {
            Target::Create => (1, 5),
            Target::Mod => (2, 6),
        };
        w.uint(2, target);
        w.bytes(3, &self.key);
        // A oneof member is written even at 0: its presence says which target is compared.
        w.present_uint(field, self.revision);
    }
}

/// One operation of a transaction.
#[derive(Debug, Clone)]
pub enum Op {
    Range(Range),
    /// A put, with the etcd lease the key goes with (0: none).
    Put {
        key: Vec<u8>,
        value: Bytes,
        lease: u64,
    },
    /// A delete of one key, answering its last value.
    Delete {
        key: Vec<u8>,
    },
}

/// A transaction's `put` operation.
pub fn put(key: &[u8], value: &Bytes) -> Op {
    Op::Put { key: key.to_vec(), value: value.clone(), lease: 0 }
}

/// A transaction's `put` of a key that goes with etcd lease `lease` (deleted when it expires).
pub fn put_leased(key: &[u8], value: &[u8], lease: u64) -> Op {
    Op::Put { key: key.to_vec(), value: Bytes::copy_from_slice(value), lease }
}

/// A transaction's read of one key, without its value when `keys_only`.
pub fn get(key: &[u8], keys_only: bool) -> Op {
    Op::Range(Range { keys_only, ..Range::key(key.to_vec()) })
}

/// A transaction's delete of one key, answering its last value.
pub fn delete(key: &[u8]) -> Op {
    Op::Delete { key: key.to_vec() }
}

impl Encode for Op {
    fn encode(&self, w: &mut Writer) {
        match self {
            Op::Range(range) => w.message(1, |w| range.encode(w)),
            Op::Put { key, value, lease } => w.message(2, |w| {
                w.bytes(1, key);
                w.bytes(2, value);
                w.uint(3, *lease);
            }),
            Op::Delete { key } => w.message(3, |w| {
                w.bytes(1, key);
                w.bool(3, true);
            }),
        }
    }
}

/// A transaction.
#[derive(Debug, Clone, Default)]
pub struct Txn {
    pub compare: Vec<Compare>,
    pub success: Vec<Op>,
    pub failure: Vec<Op>,
}

impl Encode for Txn {
    fn encode(&self, w: &mut Writer) {
        for c in &self.compare {
            w.message(1, |w| c.encode(w));
        }
        for op in &self.success {
            w.message(2, |w| op.encode(w));
        }
        for op in &self.failure {
            w.message(3, |w| op.encode(w));
        }
    }
}

/// A compaction of etcd's history up to `revision` (tests compact to provoke 410s);
/// `physical`: answered once the space is freed.
#[cfg(test)]
#[derive(Debug, Clone)]
pub struct Compaction {
    pub revision: Revision,
    pub physical: bool,
}

#[cfg(test)]
impl Encode for Compaction {
    fn encode(&self, w: &mut Writer) {
        w.uint(1, self.revision);
        w.bool(2, self.physical);
    }
}

/// An answer whose content the engine does not read (only that it came).
#[derive(Debug, Default)]
pub struct Ignored;

impl Decode for Ignored {
    fn merge(&mut self, _: u32, _: Value) -> Result<(), DecodeError> {
        Ok(())
    }
}

/// One event of a watch (`mvccpb.Event`).
#[derive(Debug, Default)]
pub struct Event {
    /// `DELETE` (1) rather than `PUT` (0).
    pub delete: bool,
    pub kv: Kv,
    pub prev_kv: Option<Kv>,
}

impl Decode for Event {
    fn merge(&mut self, field: u32, value: Value) -> Result<(), DecodeError> {
        match field {
            1 => self.delete = value.uint()? == 1,
            2 => self.kv = nested(value)?,
            3 => self.prev_kv = Some(nested(value)?),
            _ => {}
        }
        Ok(())
    }
}

/// One message of a watch stream.
#[derive(Debug, Default)]
pub struct WatchResponse {
    pub created: bool,
    pub canceled: bool,
    /// Set when the watch started below the compacted revision (and was canceled).
    pub compact_revision: Revision,
    pub cancel_reason: String,
    pub events: Vec<Event>,
}

impl Decode for WatchResponse {
    fn merge(&mut self, field: u32, value: Value) -> Result<(), DecodeError> {
        match field {
            3 => self.created = value.bool()?,
            4 => self.canceled = value.bool()?,
            5 => self.compact_revision = value.uint()?,
            6 => self.cancel_reason = value.string()?,
            11 => self.events.push(nested(value)?),
            _ => {}
        }
        Ok(())
    }
}

impl WatchResponse {
    /// Whether it confirms a new watch (and does not cancel it at once).
    pub fn is_created(&self) -> bool {
        self.created && !self.canceled
    }

    /// The revision of its last event, if it has events.
    pub fn last_revision(&self) -> Option<Revision> {
        self.events.iter().map(|e| e.kv.mod_revision).max()
    }
}

/// A watch to open: the keys `[key, range_end)` from `start_revision` on.
#[derive(Debug, Clone)]
pub struct WatchCreate {
    pub key: Vec<u8>,
    pub range_end: Vec<u8>,
    pub start_revision: Revision,
    /// Whether events carry the key's previous value.
    pub prev_kv: bool,
}

impl Encode for WatchCreate {
    /// The `WatchRequest` whose `create_request` it is.
    fn encode(&self, w: &mut Writer) {
        w.message(1, |w| {
            w.bytes(1, &self.key);
            w.bytes(2, &self.range_end);
            w.uint(3, self.start_revision);
            w.bool(6, self.prev_kv);
        });
    }
}

/// A lease grant of `ttl` seconds.
#[derive(Debug, Clone)]
pub struct LeaseGrant {
    pub ttl: i64,
}

impl Encode for LeaseGrant {
    fn encode(&self, w: &mut Writer) {
        w.int(1, self.ttl);
    }
}

/// A request about one lease (revoke, keep-alive, time to live).
#[derive(Debug, Clone)]
pub struct LeaseId {
    pub id: u64,
}

impl Encode for LeaseId {
    fn encode(&self, w: &mut Writer) {
        w.uint(1, self.id);
    }
}

/// An etcd lease's answer (grant, keep-alive): its ID and the seconds it has left (0: gone).
#[derive(Debug, Default)]
pub struct LeaseResponse {
    pub id: u64,
    pub ttl: i64,
}

impl Decode for LeaseResponse {
    fn merge(&mut self, field: u32, value: Value) -> Result<(), DecodeError> {
        match field {
            2 => self.id = value.uint()?,
            3 => self.ttl = value.int()?,
            _ => {}
        }
        Ok(())
    }
}

/// A lease's time to live: the seconds left (-1 once it is gone) of those it was granted.
#[derive(Debug, Default)]
pub struct TimeToLive {
    pub ttl: i64,
    pub granted_ttl: i64,
}

impl Decode for TimeToLive {
    fn merge(&mut self, field: u32, value: Value) -> Result<(), DecodeError> {
        match field {
            3 => self.ttl = value.int()?,
            4 => self.granted_ttl = value.int()?,
            _ => {}
        }
        Ok(())
    }
}

/// The key just past every key starting with `prefix` (etcd's `range_end` for a prefix).
pub fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    // Every key: etcd reads a range end of "\0" as "to the end".
    vec![0]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_create_transaction_is_written_as_etcd_reads_it() {
        // compare { result EQUAL(0, left out), target CREATE(1), key "k", create_revision 0 }
        // success { request_put { key "k", value "v" } }
        let txn = Txn {
            compare: vec![compare(b"k", Target::Create, Cmp::Equal, 0)],
            success: vec![put(b"k", &Bytes::from_static(b"v"))],
            failure: vec![],
        };
        let expected = [
            0x0a, 0x07, 0x10, 0x01, 0x1a, 0x01, b'k', 0x28, 0x00, // compare
            0x12, 0x08, 0x12, 0x06, 0x0a, 0x01, b'k', 0x12, 0x01, b'v', // success
        ];
        assert_eq!(&txn.to_bytes()[..], expected);
        let guard = compare(b"k", Target::Mod, Cmp::NotEqual, 300).to_bytes();
        assert_eq!(&guard[..], [0x08, 0x03, 0x10, 0x02, 0x1a, 0x01, b'k', 0x30, 0xac, 0x02]);
    }

    #[test]
    fn a_range_answer_is_read_with_its_keys_values_and_revisions() {
        let mut kv = Writer::default();
        kv.bytes(1, b"/a/x");
        kv.uint(2, 4);
        kv.uint(3, 9);
        kv.int(4, 2); // version: not read
        kv.bytes(5, b"{}");
        kv.uint(6, 77);
        let kv = kv.finish();
        let mut w = Writer::default();
        w.message(1, |w| {
            w.uint(1, 123); // cluster_id
            w.uint(3, 12);
        });
        w.bytes(2, &kv);
        w.bool(3, true);
        w.int(4, 5);
        let r = RangeResponse::decode(w.finish()).expect("decode");
        assert_eq!((r.header.revision, r.count, r.kvs.len()), (12, 5, 1));
        let kv = &r.kvs[0];
        assert_eq!((&kv.key[..], &kv.value[..]), (&b"/a/x"[..], &b"{}"[..]));
        assert_eq!((kv.create_revision, kv.mod_revision, kv.lease), (4, 9, 77));
    }

    #[test]
    fn watch_answers_tell_creation_cancellation_and_their_events() {
        let mut w = Writer::default();
        w.bool(3, true);
        w.bool(4, true);
        w.uint(5, 4);
        w.bytes(6, b"compacted");
        let r = WatchResponse::decode(w.finish()).expect("decode");
        assert!(!r.is_created() && r.canceled && r.compact_revision == 4 && r.cancel_reason == "compacted");
        let mut w = Writer::default();
        for (kind, rev) in [(0, 7), (1, 8)] {
            w.message(11, |w| {
                w.uint(1, kind);
                w.message(2, |w| w.uint(3, rev));
                w.message(3, |w| w.bytes(5, b"old"));
            });
        }
        let r = WatchResponse::decode(w.finish()).expect("decode");
        assert_eq!(r.last_revision(), Some(8));
        assert_eq!(r.events.iter().map(|e| e.delete).collect::<Vec<_>>(), [false, true]);
        assert_eq!(r.events[1].prev_kv.as_ref().map(|kv| &kv.value[..]), Some(&b"old"[..]));
    }

    #[test]
    fn a_gone_lease_reads_as_a_negative_time_to_live() {
        let mut w = Writer::default();
        w.int(3, -1);
        w.int(4, 10);
        let left = TimeToLive::decode(w.finish()).expect("decode");
        assert_eq!((left.ttl, left.granted_ttl), (-1, 10));
    }

    #[test]
    fn prefix_ends_increment_the_last_byte() {
        assert_eq!(prefix_end(b"/a/"), b"/a0");
        assert_eq!(prefix_end(b"a\xff"), b"b");
        assert_eq!(prefix_end(b""), b"\0");
    }
}
