//! etcd v3's JSON gateway messages: what the engine sends and reads, and nothing else.
//!
//! Pure data, no IO. The gateway is grpc-gateway over etcd's protobuf API: field names in
//! snake_case, 64-bit integers as strings, bytes (keys and values) in base64, and fields at
//! their zero value left out (a `false`, an empty list, a `PUT` event type).

use super::super::{KeyValue, Revision};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use bytes::Bytes;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Value, json};

/// Bytes as the gateway takes them.
pub fn enc(bytes: &[u8]) -> String {
    B64.encode(bytes)
}

/// A 64-bit integer as the gateway sends it: a string (or, leniently, a number).
fn int<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    integer(d, serde_json::Number::as_u64)
}

/// A signed int64 as the gateway sends it (a lease's TTL is -1 once it is gone).
fn signed<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    integer(d, serde_json::Number::as_i64)
}

/// An integer sent as a string or a number (`of` reads the number's kind); null is 0.
fn integer<'de, D, T>(d: D, of: fn(&serde_json::Number) -> Option<T>) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: std::str::FromStr + Default,
    T::Err: std::fmt::Display,
{
    match Value::deserialize(d)? {
        Value::String(s) => s.parse().map_err(serde::de::Error::custom),
        Value::Number(n) => of(&n).ok_or_else(|| serde::de::Error::custom(format!("out of range: {n}"))),
        Value::Null => Ok(T::default()),
        other => Err(serde::de::Error::custom(format!("not an integer: {other}"))),
    }
}

/// Base64 bytes as the gateway sends them.
fn b64<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
    let s = Option::<String>::deserialize(d)?.unwrap_or_default();
    B64.decode(s).map_err(serde::de::Error::custom)
}

/// The header every response carries.
#[derive(Debug, Default, Deserialize)]
pub struct Header {
    /// The store's revision when the request was served.
    #[serde(default, deserialize_with = "int")]
    pub revision: Revision,
}

/// One key as etcd returns it.
#[derive(Debug, Default, Deserialize)]
pub struct Kv {
    #[serde(default, deserialize_with = "b64")]
    pub key: Vec<u8>,
    #[serde(default, deserialize_with = "b64")]
    pub value: Vec<u8>,
    #[serde(default, deserialize_with = "int")]
    pub create_revision: Revision,
    #[serde(default, deserialize_with = "int")]
    pub mod_revision: Revision,
    /// The etcd lease the key is attached to (0: none).
    #[serde(default, deserialize_with = "int")]
    pub lease: u64,
}

impl Kv {
    /// The store's view of it, with `key` already mapped back from etcd's.
    pub fn into_key_value(self, key: String) -> KeyValue {
        KeyValue {
            key,
            value: Bytes::from(self.value),
            create_revision: self.create_revision,
            mod_revision: self.mod_revision,
        }
    }
}

/// A range's answer.
#[derive(Debug, Default, Deserialize)]
pub struct RangeResponse {
    #[serde(default)]
    pub header: Header,
    #[serde(default)]
    pub kvs: Vec<Kv>,
    /// How many keys the range holds, whatever the limit.
    #[serde(default, deserialize_with = "int")]
    pub count: u64,
}

/// A delete's answer (inside a transaction).
#[derive(Debug, Default, Deserialize)]
pub struct DeleteResponse {
    #[serde(default)]
    pub prev_kvs: Vec<Kv>,
}

/// One operation's answer inside a transaction.
#[derive(Debug, Default, Deserialize)]
pub struct OpResponse {
    pub response_range: Option<RangeResponse>,
    pub response_delete_range: Option<DeleteResponse>,
}

/// A transaction's answer.
#[derive(Debug, Default, Deserialize)]
pub struct TxnResponse {
    #[serde(default)]
    pub header: Header,
    #[serde(default)]
    pub succeeded: bool,
    #[serde(default)]
    pub responses: Vec<OpResponse>,
}

impl TxnResponse {
    /// The first key a range of the transaction read.
    pub fn first_kv(&self) -> Option<&Kv> {
        self.responses.iter().find_map(|r| r.response_range.as_ref()).and_then(|r| r.kvs.first())
    }
}

/// An error as the gateway reports it (gRPC code and etcd's words).
#[derive(Debug, Default, Deserialize)]
pub struct ErrorBody {
    #[serde(default)]
    pub error: String,
    #[serde(default)]
    pub message: String,
    /// The gRPC status code.
    #[serde(default)]
    pub code: i32,
}

/// gRPC's code for "try again later" (no leader, no connection to etcd).
pub const GRPC_UNAVAILABLE: i32 = 14;

/// etcd's words for a read below the compacted revision.
pub const COMPACTED: &str = "required revision has been compacted";
/// etcd's words for a read above the current revision.
pub const FUTURE: &str = "required revision is a future revision";
/// etcd's words for a write over `--max-request-bytes`.
pub const TOO_LARGE: &str = "request is too large";

/// One event of a watch.
#[derive(Debug, Default, Deserialize)]
pub struct Event {
    /// `PUT` (left out, being zero) or `DELETE`.
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    #[serde(default)]
    pub kv: Kv,
    pub prev_kv: Option<Kv>,
}

impl Event {
    /// Whether it deleted its key.
    pub fn is_delete(&self) -> bool {
        self.kind.as_deref() == Some("DELETE")
    }
}

/// One message of a watch stream.
#[derive(Debug, Default, Deserialize)]
pub struct WatchResult {
    #[serde(default)]
    pub created: bool,
    #[serde(default)]
    pub canceled: bool,
    /// Set when the watch started below the compacted revision (and was canceled).
    #[serde(default, deserialize_with = "int")]
    pub compact_revision: Revision,
    #[serde(default)]
    pub cancel_reason: String,
    #[serde(default)]
    pub events: Vec<Event>,
}

/// A line of the watch stream: a message, or the gateway's error.
#[derive(Debug, Deserialize)]
pub struct WatchLine {
    pub result: Option<WatchResult>,
    pub error: Option<Value>,
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

impl WatchCreate {
    /// The `/v3/watch` request body.
    pub fn body(&self) -> Value {
        json!({ "create_request": {
            "key": enc(&self.key),
            "range_end": enc(&self.range_end),
            "start_revision": self.start_revision.to_string(),
            "prev_kv": self.prev_kv,
        }})
    }
}

/// What a watch line says about the watch itself (read without decoding its values):
/// whether it was created or ended, and the last event's revision.
#[derive(Debug, Default, Deserialize)]
pub struct WatchProgress {
    #[serde(default)]
    result: Option<ProgressResult>,
    #[serde(default)]
    error: Option<serde::de::IgnoredAny>,
}

#[derive(Debug, Default, Deserialize)]
struct ProgressResult {
    #[serde(default)]
    created: bool,
    #[serde(default)]
    canceled: bool,
    #[serde(default)]
    events: Vec<ProgressEvent>,
}

#[derive(Debug, Default, Deserialize)]
struct ProgressEvent {
    #[serde(default)]
    kv: ProgressKv,
}

#[derive(Debug, Default, Deserialize)]
struct ProgressKv {
    #[serde(default, deserialize_with = "int")]
    mod_revision: Revision,
}

impl WatchProgress {
    /// The line read leniently (an unreadable one says nothing).
    pub fn of(line: &[u8]) -> Self {
        serde_json::from_slice(line).unwrap_or_default()
    }

    /// Whether it confirms a new watch (and does not cancel it at once).
    pub fn is_created(&self) -> bool {
        self.result.as_ref().is_some_and(|r| r.created && !r.canceled)
    }

    /// Whether etcd ends the watch with it (canceled, compacted, an error).
    pub fn ends(&self) -> bool {
        self.error.is_some() || self.result.as_ref().is_some_and(|r| r.canceled)
    }

    /// The revision of its last event, if it has events.
    pub fn last_revision(&self) -> Option<Revision> {
        self.result.as_ref()?.events.iter().map(|e| e.kv.mod_revision).max()
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
pub fn compare(key: &[u8], target: Target, cmp: Cmp, revision: Revision) -> Value {
    let (target, field) = match target {
        Target::Create => ("CREATE", "create_revision"),
        Target::Mod => ("MOD", "mod_revision"),
    };
    let result = match cmp {
        Cmp::Equal => "EQUAL",
        Cmp::NotEqual => "NOT_EQUAL",
    };
    json!({ "key": enc(key), "target": target, "result": result, field: revision.to_string() })
}

/// A transaction's `put` operation.
pub fn put(key: &[u8], value: &[u8]) -> Value {
    json!({ "request_put": { "key": enc(key), "value": enc(value) } })
}

/// A transaction's `put` of a key that goes with etcd lease `lease` (deleted when it expires).
pub fn put_leased(key: &[u8], value: &[u8], lease: u64) -> Value {
    json!({ "request_put": { "key": enc(key), "value": enc(value), "lease": lease.to_string() } })
}

/// An etcd lease's answer (grant, keep-alive): its ID and the seconds it has left (0: gone).
#[derive(Debug, Default, Deserialize)]
pub struct LeaseResponse {
    #[serde(default, rename = "ID", deserialize_with = "int")]
    pub id: u64,
    #[serde(default, rename = "TTL", deserialize_with = "int")]
    pub ttl: u64,
}

/// A lease's time to live: the seconds left (-1 once it is gone) of those it was granted.
#[derive(Debug, Default, Deserialize)]
pub struct TimeToLive {
    #[serde(default, rename = "TTL", deserialize_with = "signed")]
    pub ttl: i64,
    #[serde(default, rename = "grantedTTL", deserialize_with = "signed")]
    pub granted_ttl: i64,
}

/// A keep-alive's answer: the gateway streams it as one `result` line.
#[derive(Debug, Default, Deserialize)]
pub struct KeepAliveLine {
    #[serde(default)]
    pub result: LeaseResponse,
}

/// A transaction's read of one key, without its value when `keys_only`.
pub fn get(key: &[u8], keys_only: bool) -> Value {
    json!({ "request_range": { "key": enc(key), "keys_only": keys_only } })
}

/// A transaction's delete of one key, answering its last value.
pub fn delete(key: &[u8]) -> Value {
    json!({ "request_delete_range": { "key": enc(key), "prev_kv": true } })
}

/// A transaction.
#[derive(Debug, Serialize)]
pub struct Txn {
    pub compare: Vec<Value>,
    pub success: Vec<Value>,
    pub failure: Vec<Value>,
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
    fn integers_come_as_strings_and_zero_fields_are_left_out() {
        let r: RangeResponse = serde_json::from_str(
            r#"{"header":{"revision":"7"},"kvs":[{"key":"L2Ev","create_revision":"2","mod_revision":"5","value":"eA=="}],"count":"3"}"#,
        )
        .expect("parse");
        assert_eq!((r.header.revision, r.count, r.kvs.len()), (7, 3, 1));
        assert_eq!((r.kvs[0].key.as_slice(), r.kvs[0].value.as_slice()), (&b"/a/"[..], &b"x"[..]));
        let empty: TxnResponse = serde_json::from_str(r#"{"header":{"revision":"2"}}"#).expect("parse");
        assert!(!empty.succeeded && empty.responses.is_empty());
    }

    #[test]
    fn a_compacted_watch_reports_the_compacted_revision() {
        let line: WatchLine =
            serde_json::from_str(r#"{"result":{"header":{},"canceled":true,"compact_revision":"4"}}"#).expect("parse");
        let result = line.result.expect("result");
        assert!(result.canceled);
        assert_eq!(result.compact_revision, 4);
    }

    #[test]
    fn a_watch_line_tells_its_last_revision_and_whether_it_ends_the_watch() {
        let events = br#"{"result":{"header":{"revision":"9"},"events":[{"kv":{"key":"YQ==","mod_revision":"7"}},{"type":"DELETE","kv":{"key":"Yg==","mod_revision":"8"}}]}}"#;
        let p = WatchProgress::of(events);
        assert_eq!((p.last_revision(), p.is_created(), p.ends()), (Some(8), false, false));
        let created = WatchProgress::of(br#"{"result":{"header":{"revision":"9"},"created":true}}"#);
        assert_eq!((created.last_revision(), created.is_created(), created.ends()), (None, true, false));
        let compacted = WatchProgress::of(br#"{"result":{"created":true,"canceled":true,"compact_revision":"4"}}"#);
        assert!(!compacted.is_created() && compacted.ends());
        assert!(WatchProgress::of(br#"{"error":{"grpc_code":14}}"#).ends());
    }

    #[test]
    fn prefix_ends_increment_the_last_byte() {
        assert_eq!(prefix_end(b"/a/"), b"/a0");
        assert_eq!(prefix_end(b"a\xff"), b"b");
        assert_eq!(prefix_end(b""), b"\0");
    }
}
