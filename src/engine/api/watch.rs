//! Streaming watch: one JSON event per line, in the negotiated representation.
//!
//! A session is a state machine fed by two inputs: the verb's event stream and, when the
//! client allows bookmarks, a bookmark timer. Each tick sends a BOOKMARK carrying the
//! newest revision this watcher provably has every event up to — the store's current
//! revision unless a change for this watch's prefix after the last event sent is still on
//! its way, in which case just before that change. Every watcher reads the shared history
//! through its own cursor and is pulled by its own connection, so a slow watcher holds
//! only its own bounded buffer and never stalls the others (it falls out of the history
//! with 410 Gone instead).

use super::query::Query;
use super::respond::{kind_names, shape};
use crate::engine::Engine;
use crate::engine::kinds::ServedKind;
use crate::engine::representation::negotiation::Endpoint;
use crate::engine::representation::{RawObject, WatchEncoder};
use crate::engine::resources::rest::{Rest, WatchItem};
use crate::engine::status::ApiError;
use crate::engine::store::{Revision, Store};
use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::Response;
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// How often a watch that allows bookmarks receives one (kube: about once a minute).
pub const BOOKMARK_INTERVAL: Duration = Duration::from_secs(60);

/// The annotation of the bookmark that ends a `sendInitialEvents` watch's initial state.
pub const INITIAL_EVENTS_END: &str = "k8s.io/initial-events-end";

/// One watch in progress.
pub struct Session {
    pub items: BoxStream<'static, WatchItem>,
    pub encoder: WatchEncoder,
    pub engine: Arc<Engine>,
    /// Every event up to this revision has been sent (or filtered out).
    pub sent: Revision,
    /// `None`: the client does not take bookmarks.
    pub bookmarks: Option<Duration>,
    /// The store prefix this watch covers.
    pub prefix: String,
    /// `apiVersion` and `kind` of the bookmark objects.
    pub api_version: String,
    pub kind: String,
}

/// The newest revision up to which a watcher of `prefix` that has seen everything up to
/// `sent` has provably seen every change.
pub async fn progress(store: &dyn Store, prefix: &str, sent: Revision) -> Revision {
    let Ok(current) = store.current_revision().await else { return sent };
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
    fn bookmark(&mut self, rv: Revision, initial_events_end: bool) -> Vec<u8> {
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
        let ticker = self.bookmarks.map(|every| tokio::time::interval_at(tokio::time::Instant::now() + every, every));
        futures::stream::unfold((self, ticker), |(mut s, mut ticker)| async move {
            let tick = async {
                match ticker.as_mut() {
                    Some(t) => {
                        t.tick().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            let line = tokio::select! {
                biased;
                item = s.items.next() => match item? {
                    WatchItem::Event { event_type, object } => {
                        let rv = crate::engine::meta::resource_version(&object)
                            .and_then(crate::engine::meta::parse_resource_version);
                        s.sent = s.sent.max(rv.unwrap_or(0));
                        let bytes = serde_json::to_vec(&object).unwrap_or_default();
                        s.encoder.event(event_type, RawObject::complete(&bytes), s.engine.now())
                    }
                    WatchItem::Stored { event_type, json, resource_version } => {
                        s.sent = s.sent.max(resource_version);
                        let object = RawObject { json: &json, resource_version: Some(resource_version) };
                        s.encoder.event(event_type, object, s.engine.now())
                    }
                    WatchItem::Bookmark { resource_version, initial_events_end } => {
                        s.sent = s.sent.max(resource_version);
                        s.bookmark(resource_version, initial_events_end)
                    }
                    WatchItem::Error(e) => s.encoder.error(&e),
                },
                () = tick => {
                    let store = s.engine.store();
                    s.sent = progress(store.as_ref(), &s.prefix, s.sent).await;
                    s.bookmark(s.sent, false)
                }
            };
            Some((Bytes::from(line), (s, ticker)))
        })
        .boxed()
    }
}

/// A WATCH request: the event stream in the negotiated representation, ended by
/// `timeoutSeconds`.
pub async fn respond(
    engine: &Arc<Engine>,
    kind: &ServedKind,
    rest: &Rest<'_>,
    ns: Option<&str>,
    q: &Query,
    headers: &HeaderMap,
) -> Result<Response, ApiError> {
    let shape = shape(engine, headers, q, Endpoint::Watch)?;
    let lq = q.list_query()?;
    let start = engine.store().current_revision().await.unwrap_or(0);
    let given = lq.resource_version.as_deref().and_then(crate::engine::meta::parse_resource_version);
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
        bookmarks: lq.allow_watch_bookmarks.then_some(BOOKMARK_INTERVAL),
        prefix: info.namespace_prefix(ns),
        api_version: info.api_version(),
        kind: info.kind.clone(),
    };
    let timeout = q.timeout_seconds().unwrap_or(30 * 60);
    let lines =
        session.into_stream().map(Ok::<_, std::io::Error>).take_until(tokio::time::sleep(Duration::from_secs(timeout)));
    let mut res = Response::new(Body::from_stream(lines));
    res.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache, private"));
    Ok(res)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::StorageConfig;
    use crate::engine::representation::negotiation::Negotiated;
    use crate::engine::representation::table::TableConvertor;
    use crate::engine::representation::{KindNames, Shape};

    #[tokio::test]
    async fn an_idle_watch_receives_periodic_bookmarks_at_the_current_revision() {
        let engine = Engine::open(&StorageConfig::Memory).await.expect("engine");
        let current = engine.store().current_revision().await.expect("rv");
        let shape = Shape { negotiated: Negotiated::JSON, table: Default::default(), now: engine.now() };
        let session = Session {
            items: futures::stream::pending().boxed(),
            encoder: WatchEncoder::new(
                shape,
                KindNames::new("", "v1", "Namespace", "NamespaceList"),
                Arc::new(TableConvertor::namespaces()),
            ),
            engine: Arc::clone(&engine),
            sent: 0,
            bookmarks: Some(Duration::from_millis(50)),
            prefix: "/registry/none/".into(),
            api_version: "v1".into(),
            kind: "Namespace".into(),
        };
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
