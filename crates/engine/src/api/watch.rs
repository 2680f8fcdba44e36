//! Streaming watch: one JSON event per line, in the negotiated representation.
//!
//! A session is a state machine fed by two inputs: the verb's event stream and, when the
//! client allows bookmarks, a bookmark timer: a minute on, and two seconds before the
//! watch's timeout, as kube's cacher plans them. Each tick sends a BOOKMARK carrying the
//! newest revision this watcher provably has every event up to — the store's current
//! revision unless a change for this watch's prefix after the last event sent is still on
//! its way, in which case just before that change — when that is newer than the state the
//! watch started from. Every watcher reads the shared history
//! through its own cursor and is pulled by its own connection, so a slow watcher holds
//! only its own bounded buffer and never stalls the others (it falls out of the history
//! with 410 Gone instead).

use super::request::ResourceRequest;
use super::respond::{kind_names, shape};
use crate::Engine;
use crate::kinds::ServedKind;
use crate::representation::negotiation::Endpoint;
use crate::representation::{RawObject, WatchEncoder};
use crate::resources::rest::{Rest, WatchItem};
use crate::status::ApiError;
use crate::store::{Revision, Store};
use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, header};
use axum::response::Response;
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// How often a watch that allows bookmarks receives one (kube: about once a minute).
pub const BOOKMARK_INTERVAL: Duration = Duration::from_secs(60);

/// How long before its end a watch that allows bookmarks receives its last one (kube's
/// cacher: a client resuming after the timeout starts from a revision that fresh).
const PRETIMEOUT: Duration = Duration::from_secs(2);

/// How long a watch of a kind whose CRD is gone or changed goes on (kube-apiserver tears
/// the old storage down a second after, ending its watches).
const WITHDRAWN_GRACE: Duration = Duration::from_secs(1);

/// The annotation of the bookmark that ends a `sendInitialEvents` watch's initial state.
pub const INITIAL_EVENTS_END: &str = "k8s.io/initial-events-end";

/// The plain-JSON lines of the latest stored changes. A change goes to every watcher of
/// its kind; those that take plain JSON all send the same bytes, so the first encodes the
/// line and the others share it instead of splicing and copying the object again.
#[derive(Debug, Default)]
pub struct SharedLines {
    recent: std::sync::Mutex<std::collections::VecDeque<Line>>,
}

/// One encoded line and what names it: the change's revision, the event type and the
/// `apiVersion` it was served at (one stored object can be served at several versions).
#[derive(Debug)]
struct Line {
    revision: Revision,
    event_type: &'static str,
    api_version: String,
    bytes: Bytes,
}

impl SharedLines {
    /// How many changes are kept: watchers take a change within moments of each other.
    const KEEP: usize = 64;
    /// And how many bytes of lines at most: 64 lines of large objects would otherwise hold
    /// as much as the store's whole history bound (a line over it is shared by no one).
    const KEEP_BYTES: usize = 8 * 1024 * 1024;

    /// The line of the change at `revision` as `event_type` at `api_version`, encoded by
    /// `encode` unless another watcher has done it.
    pub fn get_or_encode(
        &self,
        revision: Revision,
        event_type: &'static str,
        api_version: &str,
        encode: impl FnOnce() -> Vec<u8>,
    ) -> Bytes {
        let find = |recent: &std::collections::VecDeque<Line>| {
            recent
                .iter()
                .rev()
                .find(|l| l.revision == revision && l.event_type == event_type && l.api_version == api_version)
                .map(|l| l.bytes.clone())
        };
        if let Some(line) = self.recent.lock().ok().and_then(|recent| find(&recent)) {
            return line;
        }
        let bytes = Bytes::from(encode());
        if let Ok(mut recent) = self.recent.lock() {
            if let Some(other) = find(&recent) {
                return other;
            }
            let api_version = api_version.to_string();
            recent.push_back(Line { revision, event_type, api_version, bytes: bytes.clone() });
            let mut held: usize = recent.iter().map(|l| l.bytes.len()).sum();
            while recent.len() > Self::KEEP || held > Self::KEEP_BYTES {
                let Some(dropped) = recent.pop_front() else { break };
                held -= dropped.bytes.len();
            }
        }
        bytes
    }
}

/// One watch in progress.
pub struct Session {
    pub items: BoxStream<'static, WatchItem>,
    pub encoder: WatchEncoder,
    pub engine: Arc<Engine>,
    /// Every event up to this revision has been sent (or filtered out).
    pub sent: Revision,
    /// The revision of the state the watch started from: a timed bookmark no newer than it
    /// is not sent, as kube's cacher sends none (it tells the client nothing).
    pub from: Revision,
    /// `None`: the client does not take bookmarks.
    pub bookmarks: Option<Duration>,
    /// When the watch ends (its timeout), for the bookmark just before (`None`: beyond
    /// what a clock can hold).
    pub ends: Option<tokio::time::Instant>,
    /// The store prefix this watch covers.
    pub prefix: String,
    /// `apiVersion` and `kind` of the bookmark objects.
    pub api_version: String,
    pub kind: String,
}

/// The newest revision up to which a watcher of `prefix` that has seen everything up to
/// `sent` has provably seen every change.
pub async fn progress(store: &dyn Store, prefix: &str, sent: Revision) -> Revision {
    // A watch polled once proves nothing pending only when its replay is in memory; from
    // before etcd's watch cache a bookmark claims only what was sent (safe, if less advanced).
    if !store.replays_at_once(sent) {
        return sent;
    }
    // Watches are served at the cache's revision, which may trail etcd's.
    let Ok(current) = store.cached_revision().await else { return sent };
    if current <= sent {
        return sent;
    }
    let Ok(mut pending) = store.watch(prefix, sent).await else { return sent };
    match pending.next().now_or_never() {
        Some(Some(Ok(change))) if change.revision <= current => (change.revision - 1).max(sent),
        Some(Some(Err(_))) => sent,
        _ => current,
    }
}

impl Session {
    fn bookmark(&mut self, rv: Revision, initial_events_end: bool) -> Option<Vec<u8>> {
        let mut metadata = json!({"resourceVersion": rv.to_string()});
        if initial_events_end {
            metadata["annotations"] = json!({ INITIAL_EVENTS_END: "true" });
        }
        let obj = json!({"apiVersion": self.api_version, "kind": self.kind, "metadata": metadata});
        let bytes = serde_json::to_vec(&obj).unwrap_or_default();
        self.encoder.event("BOOKMARK", RawObject::complete(&bytes), self.engine.now())
    }

    /// The session as a stream of encoded lines.
    pub fn into_stream(self) -> BoxStream<'static, Bytes> {
        let now = tokio::time::Instant::now();
        let due = self.bookmarks.and_then(|every| next_bookmark(now, every, self.ends));
        futures::stream::unfold((self, due), |(mut s, mut due)| async move {
            // Filtered changes send nothing: wait on for a line to send.
            loop {
                let tick = async {
                    match due {
                        Some(at) => tokio::time::sleep_until(at).await,
                        None => std::future::pending::<()>().await,
                    }
                };
                let line = tokio::select! {
                    biased;
                    item = s.items.next() => match item? {
                        WatchItem::Event { event_type, object } => {
                            let rv = crate::meta::resource_version(&object)
                                .and_then(crate::meta::parse_resource_version);
                            s.sent = s.sent.max(rv.unwrap_or(0));
                            let bytes = crate::resources::builtin::struct_json::to_vec(&object);
                            s.encoder.event(event_type, RawObject::complete(&bytes), s.engine.now())
                        }
                        WatchItem::Stored { event_type, json, resource_version, api_version } => {
                            s.sent = s.sent.max(resource_version);
                            let object = RawObject::stored(&json, resource_version).served_at(api_version.as_deref());
                            if s.encoder.is_plain() {
                                let (engine, encoder) = (&s.engine, &mut s.encoder);
                                let lines = engine.watch_lines();
                                // A plain encoding always has its line.
                                let line = lines.get_or_encode(resource_version, event_type, &s.api_version, || {
                                    encoder.event(event_type, object, engine.now()).unwrap_or_default()
                                });
                                return Some((line, (s, due)));
                            }
                            s.encoder.event(event_type, object, s.engine.now())
                        }
                        WatchItem::Bookmark { resource_version, initial_events_end } => {
                            s.sent = s.sent.max(resource_version);
                            if initial_events_end {
                                s.from = s.from.max(resource_version);
                            }
                            s.bookmark(resource_version, initial_events_end)
                        }
                        WatchItem::Filtered { resource_version } => {
                            s.sent = s.sent.max(resource_version);
                            continue;
                        }
                        WatchItem::Error(e) => Some(s.encoder.error(&e)),
                    },
                    () = tick => {
                        let now = tokio::time::Instant::now();
                        due = s.bookmarks.and_then(|every| next_bookmark(now, every, s.ends));
                        let store = s.engine.store();
                        s.sent = progress(store.as_ref(), &s.prefix, s.sent).await;
                        if s.sent <= s.from {
                            continue;
                        }
                        s.bookmark(s.sent, false)
                    }
                };
                // An event kube cannot encode ends its watch.
                return Some((Bytes::from(line?), (s, due)));
            }
        })
        .boxed()
    }
}

/// A WATCH request: the event stream in the negotiated representation, ended by
/// `timeoutSeconds`. `name`: the object a `/watch/` path names, watched alone.
pub async fn respond(
    engine: &Arc<Engine>,
    kind: &ServedKind,
    rest: &Rest<'_>,
    req: &ResourceRequest<'_>,
    name: Option<&str>,
) -> Result<Response, ApiError> {
    let (ns, q, headers) = (req.namespace(), req.query, req.headers);
    // kube negotiates the object's representation first (a protobuf-only Accept is the
    // resource's 406), then the stream's (a YAML one is the stream 406).
    shape(engine, headers, q, Endpoint::Resource)?;
    let shape = shape(engine, headers, q, Endpoint::Watch)?;
    let mut lq = q.list_query()?;
    lq.watch_by_path = !q.watch();
    if let Some(name) = name {
        lq.fields = Some(name_selector(lq.fields.as_deref(), name)?);
    }
    let requested_timeout = q.timeout_seconds()?;
    let timeout = watch_timeout(requested_timeout, rand::random::<f64>());
    let start = engine.store().current_revision().await.unwrap_or(0);
    let given = lq.resource_version.as_deref().and_then(crate::meta::parse_resource_version);
    let window = engine.kinds().watch_window(kind);
    let items = match given {
        // Older than the kind's watch window: 200, then one ERROR event (reference 55).
        Some(rv) if rv > 0 && rv < window && lq.send_initial_events.is_none() => {
            let err = ApiError::expired(format!("too old resource version: {rv} ({window})"));
            futures::stream::iter([WatchItem::Error(err)]).boxed()
        }
        _ => rest.watch(ns, &lq).await?,
    };
    let info = kind.info();
    let session = Session {
        items,
        encoder: WatchEncoder::new(shape, kind_names(kind), engine.kinds().table(kind)),
        engine: Arc::clone(engine),
        sent: given.filter(|rv| *rv > 0).unwrap_or(start),
        from: given.filter(|rv| *rv > 0).unwrap_or(start),
        bookmarks: lq.allow_watch_bookmarks.then_some(BOOKMARK_INTERVAL),
        ends: tokio::time::Instant::now().checked_add(timeout),
        prefix: info.namespace_prefix(ns),
        api_version: info.api_version(),
        kind: info.kind.clone(),
    };
    let epoch = engine.kinds().storage_epoch(kind);
    let (engine, kind) = (Arc::clone(engine), kind.clone());
    let ended = async move {
        tokio::select! {
            () = tokio::time::sleep(timeout) => {}
            // kube closes them a moment later: the events on their way still arrive.
            () = async {
                engine.kinds().withdrawn(&kind, epoch).await;
                tokio::time::sleep(WITHDRAWN_GRACE).await;
            } => {}
        }
    };
    let lines = session.into_stream().map(Ok::<_, std::io::Error>).take_until(ended);
    let mut res = Response::new(Body::from_stream(lines));
    res.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache, private"));
    Ok(res)
}

/// The field selector of a watch of the object `name`: kube's `metadata.name=<name>`,
/// or the one given when it asks for exactly that name (anything else is a 400).
fn name_selector(given: Option<&str>, name: &str) -> Result<String, ApiError> {
    let given = given.map(str::trim).filter(|g| !g.is_empty());
    let Some(given) = given else { return Ok(format!("metadata.name={name}")) };
    let exact = given.split(',').any(|term| {
        let term = term.trim();
        let value = term.strip_prefix("metadata.name==").or_else(|| term.strip_prefix("metadata.name="));
        value == Some(name)
    });
    if exact {
        Ok(given.to_string())
    } else {
        Err(ApiError::bad_request("fieldSelector metadata.name doesn't match requested name"))
    }
}

/// When the bookmark after `now` is due, as kube's cacher plans it: `every` from now, or
/// [`PRETIMEOUT`] before the watch `ends` when that comes first; none once that moment has
/// come (so a watch shorter than it gets none).
fn next_bookmark(
    now: tokio::time::Instant,
    every: Duration,
    ends: Option<tokio::time::Instant>,
) -> Option<tokio::time::Instant> {
    let heartbeat = now.checked_add(every)?;
    let at = match ends {
        Some(ends) => heartbeat.min(ends.checked_sub(PRETIMEOUT)?),
        None => heartbeat,
    };
    (at > now).then_some(at)
}

/// kube-apiserver's `--min-request-timeout` (its default).
const MIN_REQUEST_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// How long a watch runs, as kube-apiserver decides it: `timeoutSeconds` when positive;
/// without it, or at 0 (kube reads both the same), between one and two minimum request
/// timeouts (`jitter` in [0, 1) picks where, so that watches started together do not all
/// end together); a negative one ends the watch at once, as kube allows.
fn watch_timeout(requested: Option<i64>, jitter: f64) -> Duration {
    match requested {
        Some(seconds) if seconds > 0 => Duration::from_secs(seconds.unsigned_abs()),
        Some(seconds) if seconds < 0 => Duration::ZERO,
        _ => MIN_REQUEST_TIMEOUT.mul_f64(1.0 + jitter.clamp(0.0, 1.0)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::StorageConfig;
    use crate::representation::negotiation::Negotiated;
    use crate::representation::table::TableConvertor;
    use crate::representation::{KindNames, Shape};

    #[test]
    fn a_zero_timeout_is_the_default_and_a_negative_one_ends_at_once() {
        assert_eq!(watch_timeout(Some(290), 0.5), Duration::from_secs(290));
        assert_eq!(watch_timeout(Some(0), 0.0), MIN_REQUEST_TIMEOUT);
        assert_eq!(watch_timeout(None, 0.5), Duration::from_secs(45 * 60));
        assert_eq!(watch_timeout(Some(-5), 0.5), Duration::ZERO);
        assert_eq!(watch_timeout(Some(i64::MAX), 0.5), Duration::from_secs(i64::MAX.unsigned_abs()));
    }

    /// kube's cacher: a bookmark a minute on, the last one two seconds before the end.
    #[test]
    fn the_last_bookmark_comes_just_before_the_watch_ends() {
        let now = tokio::time::Instant::now();
        let minute = Duration::from_secs(60);
        let far = now + Duration::from_secs(3600);
        assert_eq!(next_bookmark(now, minute, Some(far)), Some(now + minute));
        assert_eq!(next_bookmark(now, minute, None), Some(now + minute));
        let soon = Some(now + Duration::from_secs(12));
        assert_eq!(next_bookmark(now, minute, soon), Some(now + Duration::from_secs(10)));
        let at_pretimeout = now + Duration::from_secs(10);
        assert_eq!(next_bookmark(at_pretimeout, minute, soon), None, "one before the end, then none");
        let short = Some(now + Duration::from_secs(1));
        assert_eq!(next_bookmark(now, minute, short), None, "too short for one");
    }

    #[test]
    fn a_named_watch_selects_its_name() {
        assert_eq!(name_selector(None, "w1").expect("ok"), "metadata.name=w1");
        assert_eq!(name_selector(Some(""), "w1").expect("ok"), "metadata.name=w1");
        let both = "metadata.name==w1,metadata.namespace=team";
        assert_eq!(name_selector(Some(both), "w1").expect("ok"), both);
        let e = name_selector(Some("metadata.name=w2"), "w1").expect_err("another name");
        assert_eq!((e.code, e.message.as_str()), (400, "fieldSelector metadata.name doesn't match requested name"));
        assert!(name_selector(Some("metadata.namespace=team"), "w1").is_err());
    }

    #[test]
    fn a_change_is_encoded_once_per_type_and_version_and_old_ones_are_forgotten() {
        let lines = SharedLines::default();
        let encodings = std::cell::Cell::new(0);
        let encode = |text: &str| {
            encodings.set(encodings.get() + 1);
            text.as_bytes().to_vec()
        };
        let first = lines.get_or_encode(7, "MODIFIED", "a.example.com/v1", || encode("one"));
        let again = lines.get_or_encode(7, "MODIFIED", "a.example.com/v1", || encode("two"));
        assert_eq!((first.as_ref(), again.as_ref(), encodings.get()), (&b"one"[..], &b"one"[..], 1));
        let other_version = lines.get_or_encode(7, "MODIFIED", "a.example.com/v2", || encode("v2"));
        let other_type = lines.get_or_encode(7, "DELETED", "a.example.com/v1", || encode("gone"));
        assert_eq!((other_version.as_ref(), other_type.as_ref(), encodings.get()), (&b"v2"[..], &b"gone"[..], 3));
        for rev in 100..100 + SharedLines::KEEP as u64 {
            lines.get_or_encode(rev, "ADDED", "a.example.com/v1", || encode("new"));
        }
        let forgotten = lines.get_or_encode(7, "MODIFIED", "a.example.com/v1", || encode("anew"));
        assert_eq!(forgotten.as_ref(), b"anew", "only the latest changes are kept");
        let big = "x".repeat(SharedLines::KEEP_BYTES / 2 + 1);
        lines.get_or_encode(200, "ADDED", "a.example.com/v1", || encode(&big));
        lines.get_or_encode(201, "ADDED", "a.example.com/v1", || encode(&big));
        let held: usize = lines.recent.lock().expect("lines").iter().map(|l| l.bytes.len()).sum();
        assert_eq!(held, big.len(), "and no more bytes than KEEP_BYTES");
    }

    #[tokio::test]
    async fn progress_stops_before_the_first_pending_change_of_the_prefix() {
        let store = crate::store::LocalStore::memory();
        let prefix = "/registry/stable.example.com/widgets/default/";
        let write = |key: String| {
            let store = &store;
            async move { store.create(&key, Bytes::from_static(b"{}")).await.expect("create").mod_revision }
        };
        write(format!("{prefix}a")).await;
        let before = store.current_revision().await.expect("rv");
        write("/registry/other/x".into()).await;
        let pending = write(format!("{prefix}b")).await;
        write("/registry/other/y".into()).await;
        let after = store.current_revision().await.expect("rv");
        assert_eq!(progress(&store, prefix, before).await, pending - 1, "up to the pending change");
        assert_eq!(progress(&store, prefix, after).await, after, "nothing pending: the current revision");
        assert_eq!(progress(&store, "/registry/none/", before).await, after, "no change of the prefix");
    }

    /// A session of a Namespace watch that has sent everything up to `sent`, started from
    /// `from`, with a bookmark every `every`.
    fn namespace_session(
        engine: &Arc<Engine>,
        items: BoxStream<'static, WatchItem>,
        sent: Revision,
        from: Revision,
        every: Duration,
    ) -> Session {
        let shape = Shape { negotiated: Negotiated::JSON, table: Default::default(), now: engine.now() };
        Session {
            items,
            encoder: WatchEncoder::new(
                shape,
                KindNames::new("", "v1", "Namespace", "NamespaceList"),
                Arc::new(TableConvertor::namespaces()),
            ),
            engine: Arc::clone(engine),
            sent,
            from,
            bookmarks: Some(every),
            ends: None,
            prefix: "/registry/none/".into(),
            api_version: "v1".into(),
            kind: "Namespace".into(),
        }
    }

    /// Changes a selector left out move the next bookmark past them (the oracle's bookmark
    /// carried the latest revision of a watch whose selector matched nothing).
    #[tokio::test]
    async fn a_bookmark_claims_the_changes_a_selector_left_out() {
        let engine = Engine::open(&StorageConfig::Memory).await.expect("engine");
        let current = engine.store().current_revision().await.expect("rv");
        let left_out = (1..=3).map(move |i| WatchItem::Filtered { resource_version: current + i });
        let items = futures::stream::iter(left_out).chain(futures::stream::pending()).boxed();
        let session = namespace_session(&engine, items, current, current, Duration::from_millis(50));
        let mut lines = session.into_stream();
        let line = tokio::time::timeout(Duration::from_secs(5), lines.next()).await.expect("in time").expect("line");
        let event: serde_json::Value = serde_json::from_slice(&line).expect("json");
        assert_eq!(event["type"], "BOOKMARK", "nothing is sent for the changes left out");
        assert_eq!(event["object"]["metadata"]["resourceVersion"], (current + 3).to_string());
    }

    /// kube's cacher sends no timed bookmark at or before the revision a watch started
    /// from: it would tell the client nothing.
    #[tokio::test]
    async fn a_watch_with_nothing_new_receives_no_timed_bookmark() {
        let engine = Engine::open(&StorageConfig::Memory).await.expect("engine");
        let current = engine.store().current_revision().await.expect("rv");
        let items = futures::stream::pending().boxed();
        let session = namespace_session(&engine, items, current, current, Duration::from_millis(20));
        let mut lines = session.into_stream();
        let waited = tokio::time::timeout(Duration::from_millis(300), lines.next()).await;
        assert!(waited.is_err(), "nothing to tell: {waited:?}");
    }

    #[tokio::test]
    async fn an_idle_watch_receives_periodic_bookmarks_at_the_current_revision() {
        let engine = Engine::open(&StorageConfig::Memory).await.expect("engine");
        let current = engine.store().current_revision().await.expect("rv");
        let session = namespace_session(&engine, futures::stream::pending().boxed(), 0, 0, Duration::from_millis(50));
        let mut lines = session.into_stream();
        for _ in 0..2 {
            let line =
                tokio::time::timeout(Duration::from_secs(5), lines.next()).await.expect("in time").expect("line");
            let event: serde_json::Value = serde_json::from_slice(&line).expect("json");
            assert_eq!(event["type"], "BOOKMARK");
            assert_eq!(event["object"]["kind"], "Namespace");
            assert_eq!(event["object"]["metadata"]["resourceVersion"], current.to_string());
        }
    }
}
