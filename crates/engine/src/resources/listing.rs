//! List and watch, as kube-apiserver serves them from its watch cache.
//!
//! A list returns the stored objects' bytes ([`RawList`]) so that the representations
//! layer can answer ten thousand objects without decoding them; `resourceVersion` and
//! `resourceVersionMatch` choose the snapshot ([`super::list_plan`]: `NotOlderThan` waits a little for a
//! revision the store has not reached, `Exact` reads the past) with kube's errors for
//! combinations it refuses. A watch starts with the current objects (legacy mode, or
//! `sendInitialEvents=true` ending in an annotated BOOKMARK) and follows the store's
//! changes through a selector-filtered view.

use super::Codec;
use super::continue_token;
use super::list_plan::{self, Snapshot};
use super::list_scope::ListScope;
use super::rest::{ListQuery, Rest, WatchItem};
use super::selector::{FieldSelector, LabelSelector, SelectorError};
use crate::field::FieldError;
use crate::meta;
use crate::status::ApiError;
use crate::store::{EventType, KeyValue, ListOptions, Revision, StoreError, WatchEvent};
use futures::StreamExt;
use futures::stream::BoxStream;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// The most keys one read of a filtered list asks the store for (kube's etcd3 `maxLimit`).
const MAX_PAGE: usize = 10_000;

/// How long a `NotOlderThan` read waits for the store to reach a future revision (kube's
/// watch cache waits 3 s).
const FRESHNESS_WAIT: Duration = Duration::from_secs(3);

/// A list as stored: the matching objects and the list's metadata.
#[derive(Debug, Clone, Default)]
pub struct RawList {
    pub revision: Revision,
    pub continue_token: Option<String>,
    pub remaining_item_count: Option<u64>,
    /// Values as stored (no resourceVersion; it is each item's `mod_revision`).
    pub items: Vec<KeyValue>,
    /// The `apiVersion` to serve the items at, when the store may hold them at another
    /// (see [`super::Codec::serve_at`]); `None`: as stored.
    pub api_version: Option<Arc<str>>,
}

impl RawList {
    /// The list as a JSON object (`items` decoded, resourceVersions injected).
    pub fn to_value(&self, api_version: &str, list_kind: &str) -> Value {
        let mut list_meta = serde_json::Map::new();
        list_meta.insert("resourceVersion".into(), Value::from(self.revision.to_string()));
        if let Some(c) = &self.continue_token {
            list_meta.insert("continue".into(), Value::from(c.clone()));
        }
        if let Some(n) = self.remaining_item_count {
            list_meta.insert("remainingItemCount".into(), Value::from(n));
        }
        json!({
            "apiVersion": api_version,
            "items": self.items.iter().map(|kv| self.item(kv)).collect::<Vec<_>>(),
            "kind": list_kind,
            "metadata": list_meta,
        })
    }
}

impl RawList {
    /// One item decoded as served.
    fn item(&self, kv: &KeyValue) -> Value {
        let mut obj = meta::from_stored(kv);
        if let Some(api_version) = &self.api_version {
            super::set_api_version(&mut obj, api_version);
        }
        obj
    }
}

/// kube's 422 for refused list options: `ListOptions.meta.k8s.io "" is invalid: ...`.
fn invalid_options(errors: Vec<FieldError>) -> Result<(), ApiError> {
    if errors.is_empty() {
        return Ok(());
    }
    Err(ApiError::invalid("ListOptions", "meta.k8s.io", "", &errors))
}

/// A watch's options as kube 1.32 reads them (apimachinery's `SetListOptionsDefaults`, with
/// watch-list on): a watch from `resourceVersion` "" or "0" that names neither
/// `sendInitialEvents` nor `resourceVersionMatch` is a watch-list from now. Its initial
/// events end with the annotated bookmark, and a `continue` is refused as with an explicit
/// `resourceVersionMatch`.
pub fn watch_defaults(mut q: ListQuery) -> ListQuery {
    let legacy = matches!(q.resource_version.as_deref(), None | Some("" | "0"));
    let unset = q.send_initial_events.is_none() && q.resource_version_match.as_deref().is_none_or(str::is_empty);
    if legacy && unset {
        q.send_initial_events = Some(true);
        q.resource_version_match = Some("NotOlderThan".into());
    }
    q
}

/// apimachinery's `ValidateListOptions` (watch-list enabled, as in 1.32).
pub fn validate(q: &ListQuery, watch: bool) -> Result<(), ApiError> {
    let mut errs = Vec::new();
    let m = q.resource_version_match.as_deref().unwrap_or("");
    let rv = q.resource_version.as_deref().unwrap_or("");
    let has_continue = q.continue_token.as_deref().is_some_and(|c| !c.is_empty());
    if watch {
        if let Some(_send) = q.send_initial_events
            && m != "NotOlderThan"
        {
            errs.push(FieldError::forbidden(
                "resourceVersionMatch",
                "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            ));
        }
        if !m.is_empty() {
            if q.send_initial_events.is_none() {
                errs.push(FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                ));
            }
            if m != "NotOlderThan" {
                errs.push(FieldError::not_supported("resourceVersionMatch", m, &["NotOlderThan"]));
            }
            if has_continue {
                errs.push(FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            }
        }
        return invalid_options(errs);
    }
    if !m.is_empty() {
        if rv.is_empty() {
            errs.push(FieldError::forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden unless resourceVersion is provided",
            ));
        }
        if has_continue {
            errs.push(FieldError::forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden when continue is provided",
            ));
        }
        if m != "Exact" && m != "NotOlderThan" {
            errs.push(FieldError::not_supported("resourceVersionMatch", m, &["Exact", "NotOlderThan", ""]));
        }
        if m == "Exact" && rv == "0" {
            errs.push(FieldError::forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
            ));
        }
    }
    if q.send_initial_events.is_some() {
        errs.push(FieldError::forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"));
    }
    invalid_options(errs)
}

impl Rest<'_> {
    /// The selectors of a list or watch, read and checked in kube's order: both texts are
    /// parsed while the query is decoded, the options validated (422), and only then are
    /// the fields checked against what the kind supports.
    fn list_selectors(&self, q: &ListQuery, watch: bool) -> Result<(LabelSelector, FieldSelector), ApiError> {
        let bad = |e: SelectorError| ApiError::bad_request(e.0);
        let labels = LabelSelector::parse(q.labels.as_deref().unwrap_or("")).map_err(bad)?;
        let fields = FieldSelector::parse_terms(q.fields.as_deref().unwrap_or("")).map_err(bad)?;
        validate(q, watch)?;
        if let Some(field) = fields.unsupported(&self.strategy.selectable_fields()) {
            return Err(ApiError::bad_request(self.strategy.unsupported_field_label(field)));
        }
        Ok((labels, fields.with_lookup(self.strategy.field_lookup())))
    }

    /// Checks a collection delete's list options as [`Self::list`] would, before its
    /// `DeleteOptions` are read: kube's handler decodes and validates them first.
    pub fn check_list_options(&self, q: &ListQuery) -> Result<(), ApiError> {
        self.list_selectors(q, false).map(|_| ())
    }

    fn list_store_error(&self, e: StoreError) -> ApiError {
        match e {
            // Only reads of etcd name a revision: the cache's reads wait in `wait_fresh`.
            StoreError::TooLarge { .. } => ApiError::future_revision(),
            other => ApiError::storage_read(&other),
        }
    }

    /// Waits (briefly) until the watch cache has reached `rv`, as a `NotOlderThan` read does.
    pub(super) async fn wait_fresh(&self, rv: Revision) -> Result<(), ApiError> {
        let deadline = tokio::time::Instant::now() + FRESHNESS_WAIT;
        loop {
            let current = self.store.cached_revision().await.map_err(|e| self.list_store_error(e))?;
            if current >= rv {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(ApiError::too_large_resource_version(rv, current));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// GET a list as stored: selectors, `limit` and `continue` over one consistent
    /// snapshot chosen by `resourceVersion` and `resourceVersionMatch`.
    ///
    /// Pages are filled as kube's etcd3 `GetList` fills them: read `limit` keys, keep those
    /// the selectors match, and read on (twice as many keys each time) until `limit` items
    /// are kept or the range ends. The continue token resumes right after the last key
    /// read, so no object a selector skipped is ever read twice and none it kept is lost.
    pub async fn list_raw(&self, namespace: Option<&str>, q: &ListQuery) -> Result<RawList, ApiError> {
        let (labels, fields) = self.list_selectors(q, false)?;
        let filtering = !labels.0.is_empty() || !fields.0.is_empty();
        let mut plan = list_plan::plan(q)?;
        if plan.cached && !self.cache_ready().await? {
            plan = plan.unready(q, filtering)?;
        }
        let scope = ListScope::of(self.strategy.info(), namespace, &fields, plan.continued);
        let prefix = scope.prefix.as_str();
        let mut opts = ListOptions { limit: plan.limit, cached: plan.cached, ..Default::default() };
        opts.start_key = plan.start.map(|start| format!("{prefix}{start}"));
        let mut exact = false;
        // The revision a single key's legacy read must have reached (checked once read).
        let mut at_least = None;
        match plan.snapshot {
            Snapshot::Latest => {}
            Snapshot::NotOlderThan(rv) => self.wait_fresh(rv).await?,
            Snapshot::Exact(rv) if plan.legacy_exact && scope.single.is_some() => at_least = Some(rv),
            Snapshot::Exact(rv) => {
                opts.revision = Some(rv);
                exact = !plan.continued;
            }
        }
        // A kind served in another form than stored decodes every item; the others pass
        // the stored bytes through, at most with another apiVersion written in.
        let codec = self.strategy.codec();
        let paging = opts.limit.is_some() && scope.single.is_none();
        let want = if paging { opts.limit.unwrap_or(usize::MAX) } else { usize::MAX };
        if scope.single.is_some() {
            opts.limit = None;
        }
        let mut items = Vec::new();
        // The last key read when a selector dropped it; `None`: the last kept item's.
        let mut dropped_last: Option<String> = None;
        // The first item refused (kube's list stops at it).
        let mut refused: Option<ApiError> = None;
        let (revision, has_more, remaining) = loop {
            let page = match self.store.list(prefix, &opts).await {
                Ok(page) => page,
                Err(StoreError::Expired { .. }) if exact => {
                    return Err(ApiError::expired("The resourceVersion for the provided list is too old."));
                }
                Err(StoreError::Expired { .. }) => {
                    return Err(ApiError::expired(
                        "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.",
                    ));
                }
                Err(e) => return Err(self.list_store_error(e)),
            };
            // etcd's answer at once, where the cache would have waited for the revision.
            if let Some(rv) = at_least.filter(|rv| *rv > page.revision) {
                return Err(ApiError::too_large_resource_version(rv, page.revision));
            }
            opts.revision = Some(page.revision);
            let mut has_more = page.next_key.is_some() && scope.single.is_none();
            let read_any = !page.items.is_empty();
            // Filtered in place: a whole list of a million objects is one vector of keys,
            // not the store's and a second copy of it.
            let mut kept = page.items;
            let mut kept_count = 0;
            kept.retain_mut(|kv| {
                if refused.is_some() {
                    return false;
                }
                if paging && items.len() + kept_count >= want {
                    has_more = true;
                    return false;
                }
                if scope.single.as_deref().is_some_and(|key| kv.key != key) {
                    return false;
                }
                let (keep, served) = if codec.decodes_item(kv) {
                    match codec.read(kv) {
                        Ok(obj) => {
                            let keep = labels.matches(&obj) && fields.matches(&obj);
                            (keep, keep.then(|| super::to_stored(&obj)))
                        }
                        Err(e) => {
                            refused = Some(e);
                            return false;
                        }
                    }
                } else if filtering {
                    let obj = meta::from_stored(kv);
                    (labels.matches(&obj) && fields.matches(&obj), None)
                } else {
                    (true, None)
                };
                if keep {
                    if let Some(value) = served {
                        kv.value = value;
                    }
                    kept_count += 1;
                    dropped_last = None;
                } else {
                    dropped_last = Some(std::mem::take(&mut kv.key));
                }
                keep
            });
            if let Some(e) = refused {
                return Err(e);
            }
            if items.is_empty() {
                items = kept;
            } else {
                items.append(&mut kept);
            }
            if !has_more || !paging || items.len() >= want || !read_any {
                break (page.revision, has_more, page.remaining);
            }
            opts.limit = opts.limit.map(|l| l.saturating_mul(2).min(MAX_PAGE).max(l));
            let last = dropped_last.clone().or_else(|| items.last().map(|kv| kv.key.clone()));
            opts.start_key = last.map(|k| format!("{k}\0"));
        };
        let last_key = dropped_last.or_else(|| items.last().map(|kv| kv.key.clone()));
        let mut list = RawList { revision, items, api_version: codec.serve_at().cloned(), ..Default::default() };
        match last_key.filter(|_| has_more) {
            Some(last) => {
                let start = last.strip_prefix(prefix).unwrap_or(&last);
                list.continue_token = Some(continue_token::encode(revision, &format!("{start}\0")));
                if !filtering {
                    list.remaining_item_count = Some(remaining);
                }
            }
            None if self.strategy.unstructured() => list.continue_token = Some(String::new()),
            None => {}
        }
        Ok(list)
    }

    /// WATCH: the initial events the query asks for, then every change of the filtered
    /// view (an ERROR event with 410 when the revision is older than the history).
    pub async fn watch_items(
        &self,
        namespace: Option<&str>,
        q: &ListQuery,
    ) -> Result<BoxStream<'static, WatchItem>, ApiError> {
        let q = &if q.watch_by_path { q.clone() } else { watch_defaults(q.clone()) };
        let (labels, fields) = self.list_selectors(q, !q.watch_by_path)?;
        let prefix = self.strategy.info().namespace_prefix(namespace);
        let codec = self.strategy.codec();
        let rv = list_plan::cache_rv(q.resource_version.as_deref())?;
        if !self.cache_ready().await? {
            return Err(super::unlisted::cache_not_ready());
        }
        // A legacy watch (`resourceVersion` unset or 0, no `sendInitialEvents`: left so only
        // by a `/watch/` path, the others are defaulted) starts with the state too, unmarked.
        let legacy = q.send_initial_events.is_none() && rv.is_none();
        let initial_events = q.send_initial_events == Some(true) || legacy;
        let (mut initial, after) = if initial_events {
            // kube's cacher waits for the revision inside the watch: a 200 whose one event
            // is the 504.
            if let Some(rv) = rv
                && let Err(e) = self.wait_fresh(rv).await
            {
                return Ok(futures::stream::iter([WatchItem::Error(e)]).boxed());
            }
            // At least as new as `rv` (the cache), or a consistent read.
            let opts = ListOptions { cached: rv.is_some(), ..Default::default() };
            let page = match self.store.list(&prefix, &opts).await {
                Ok(page) => page,
                Err(StoreError::Unavailable(_)) => return Ok(unavailable_watch()),
                Err(e) => return Err(self.list_store_error(e)),
            };
            let objs: Vec<WatchItem> = if reads_nothing(&labels, &fields, &codec) {
                page.items.iter().map(|kv| stored_item("ADDED", kv, kv.mod_revision, &codec)).collect()
            } else {
                page.items
                    .iter()
                    .filter_map(|kv| match codec.read(kv) {
                        Ok(object) => (labels.matches(&object) && fields.matches(&object))
                            .then_some(WatchItem::Event { event_type: "ADDED", object }),
                        Err(e) => Some(WatchItem::Error(e)),
                    })
                    .collect()
            };
            (objs, page.revision)
        } else {
            match rv {
                Some(rv) => (Vec::new(), rv),
                None => match self.store.current_revision().await {
                    Ok(current) => (Vec::new(), current),
                    Err(StoreError::Unavailable(_)) => return Ok(unavailable_watch()),
                    Err(e) => return Err(self.list_store_error(e)),
                },
            }
        };
        if q.send_initial_events == Some(true) && q.allow_watch_bookmarks {
            initial.push(WatchItem::Bookmark { resource_version: after, initial_events_end: true });
        }
        let changes = match self.store.watch(&prefix, after).await {
            Ok(s) => s,
            Err(StoreError::Expired { requested, oldest }) => {
                let err = ApiError::expired(format!("too old resource version: {requested} ({oldest})"));
                return Ok(futures::stream::iter([WatchItem::Error(err)]).boxed());
            }
            Err(StoreError::Unavailable(_)) => return Ok(unavailable_watch()),
            Err(e) => return Err(self.list_store_error(e)),
        };
        let events = changes.filter_map(move |item| {
            let out = match item {
                Ok(event) => translate(&event, &labels, &fields, &codec),
                Err(StoreError::Expired { requested, oldest }) => Some(WatchItem::Error(ApiError::expired(format!(
                    "too old resource version: {requested} ({oldest})"
                )))),
                Err(e) => Some(WatchItem::Error(ApiError::storage(&e))),
            };
            futures::future::ready(out)
        });
        Ok(futures::stream::iter(initial).chain(events).boxed())
    }
}

/// Whether a watch passes objects on as stored (with at most another apiVersion written
/// in): no selector reads them and no conversion decodes them.
fn reads_nothing(labels: &LabelSelector, fields: &FieldSelector, codec: &Codec) -> bool {
    labels.is_everything() && fields.is_everything() && !codec.decodes()
}

fn stored_item(event_type: &'static str, kv: &KeyValue, resource_version: Revision, codec: &Codec) -> WatchItem {
    if codec.decodes_item(kv) {
        // Stored at another version than watched: converted, so pruned.
        let mut object = match codec.read(kv) {
            Ok(object) => object,
            Err(e) => return WatchItem::Error(e),
        };
        meta::metadata_mut(&mut object).insert("resourceVersion".into(), Value::from(resource_version.to_string()));
        return WatchItem::Event { event_type, object };
    }
    let api_version = codec.serve_at().cloned();
    WatchItem::Stored { event_type, json: kv.value.clone(), resource_version, api_version }
}

/// A store change as the watcher of a filtered view sees it: an object moving into the
/// view is ADDED, one moving out is DELETED.
fn translate(event: &WatchEvent, labels: &LabelSelector, fields: &FieldSelector, codec: &Codec) -> Option<WatchItem> {
    if reads_nothing(labels, fields, codec) {
        return match event.event_type() {
            EventType::Added => Some(stored_item("ADDED", event.current.as_ref()?, event.revision, codec)),
            EventType::Modified => Some(stored_item("MODIFIED", event.current.as_ref()?, event.revision, codec)),
            // A deleted object is reported at the deletion's revision.
            EventType::Deleted => Some(stored_item("DELETED", event.prev.as_ref()?, event.revision, codec)),
        };
    }
    let matches = |o: &Value| labels.matches(o) && fields.matches(o);
    // A watch starts only while no object is refused (`Rest::cache_ready`); one refused all
    // the same (its version dropped as the watch ran) is an ERROR event.
    let (current, prev) =
        match (event.current.as_ref().map(|kv| codec.read(kv)), event.prev.as_ref().map(|kv| codec.read(kv))) {
            (Some(Err(e)), _) | (_, Some(Err(e))) => return Some(WatchItem::Error(e)),
            (current, prev) => (current.and_then(Result::ok), prev.and_then(Result::ok)),
        };
    // An object that goes is reported as it was, at the revision it went at (kube's
    // cacher sends the previous object with the event's resourceVersion).
    let gone = |mut obj: Value| {
        meta::metadata_mut(&mut obj).insert("resourceVersion".into(), Value::from(event.revision.to_string()));
        ("DELETED", obj)
    };
    let filtered = Some(WatchItem::Filtered { resource_version: event.revision });
    let (event_type, object) = match event.event_type() {
        EventType::Added => ("ADDED", current?),
        EventType::Deleted => gone(prev?),
        EventType::Modified => {
            let (cur, old) = (current?, prev?);
            match (matches(&old), matches(&cur)) {
                (true, true) => ("MODIFIED", cur),
                (false, true) => ("ADDED", cur),
                (true, false) => gone(old),
                (false, false) => return filtered,
            }
        }
    };
    if event_type != "DELETED" && !matches(&object) {
        return filtered;
    }
    if event_type == "DELETED" && event.event_type() == EventType::Deleted && !matches(&object) {
        return filtered;
    }
    Some(WatchItem::Event { event_type, object })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(rv: Option<&str>, m: Option<&str>) -> ListQuery {
        ListQuery {
            resource_version: rv.map(String::from),
            resource_version_match: m.map(String::from),
            ..Default::default()
        }
    }

    #[test]
    fn list_option_combinations_kube_refuses() {
        let e = validate(&q(None, Some("Exact")), false).expect_err("rv required");
        assert_eq!(e.code, 422);
        assert_eq!(
            e.message,
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"
        );
        let e = validate(&q(Some("0"), Some("Exact")), false).expect_err("exact 0");
        assert!(
            e.message.contains("resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""),
            "{}",
            e.message
        );
        let e = validate(&q(Some("5"), Some("Newest")), false).expect_err("unknown match");
        assert!(
            e.message.contains("Unsupported value: \"Newest\": supported values: \"Exact\", \"NotOlderThan\", \"\""),
            "{}",
            e.message
        );
        assert!(validate(&q(Some("5"), Some("NotOlderThan")), false).is_ok());
        let mut send = q(None, None);
        send.send_initial_events = Some(true);
        assert!(validate(&send, false).is_err());
        let e = validate(&send, true).expect_err("needs NotOlderThan");
        assert!(e.message.contains("sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"));
        send.resource_version_match = Some("NotOlderThan".into());
        assert!(validate(&send, true).is_ok());
        let e = validate(&q(None, Some("NotOlderThan")), true).expect_err("match without sendInitialEvents");
        assert!(e.message.contains("resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"));
    }

    /// The oracle's answers to `watch=1&continue=abc` with each resourceVersion.
    #[test]
    fn a_watch_from_now_is_a_watch_list_and_refuses_a_continue() {
        let with_continue = |rv: Option<&str>, send: Option<bool>| {
            let mut query = q(rv, None);
            query.continue_token = Some("abc".into());
            query.send_initial_events = send;
            validate(&watch_defaults(query), true)
        };
        for rv in [None, Some(""), Some("0")] {
            let e = with_continue(rv, None).expect_err("a watch-list from now");
            assert_eq!(
                e.message,
                "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided"
            );
        }
        assert!(with_continue(Some("5"), None).is_ok(), "a watch from a revision keeps its old reading");
        let e = with_continue(None, Some(false)).expect_err("sendInitialEvents given, not defaulted");
        assert!(e.message.ends_with("sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"));
        let defaulted = watch_defaults(q(Some("0"), None));
        assert_eq!(defaulted.send_initial_events, Some(true));
        assert_eq!(defaulted.resource_version_match.as_deref(), Some("NotOlderThan"));
        assert_eq!(watch_defaults(q(Some("7"), None)).send_initial_events, None);
    }
}

#[cfg(test)]
mod stored_events {
    use super::*;
    use crate::representation::RawObject;
    use crate::resources::selector::LabelRequirement;

    fn kv(rev: Revision) -> KeyValue {
        let obj = json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
            "metadata": {"name": "a", "labels": {"app": "x"}}, "spec": {"n": rev}});
        KeyValue { key: "/a".into(), value: meta::to_stored(&obj), create_revision: 2, mod_revision: rev }
    }

    /// What the watcher receives, as JSON, whichever way the item was made.
    fn sent(item: WatchItem) -> (&'static str, Value) {
        match item {
            WatchItem::Event { event_type, object } => (event_type, object),
            WatchItem::Stored { event_type, json, resource_version, api_version } => {
                let mut out = Vec::new();
                RawObject::stored(&json, resource_version).served_at(api_version.as_deref()).write_json(&mut out);
                (event_type, serde_json::from_slice(&out).expect("valid JSON"))
            }
            other => panic!("not an event: {other:?}"),
        }
    }

    #[test]
    fn an_unfiltered_watch_sends_the_stored_bytes_and_a_filtered_one_the_same_object() {
        let selecting = LabelSelector(vec![LabelRequirement::Equals("app".into(), "x".into())]);
        let events = [
            WatchEvent { revision: 2, key: "/a".into(), current: Some(kv(2)), prev: None },
            WatchEvent { revision: 5, key: "/a".into(), current: Some(kv(5)), prev: Some(kv(2)) },
            WatchEvent { revision: 9, key: "/a".into(), current: None, prev: Some(kv(5)) },
        ];
        let want = [("ADDED", "2"), ("MODIFIED", "5"), ("DELETED", "9")];
        for (event, (event_type, rv)) in events.iter().zip(want) {
            let all = LabelSelector::default();
            let stored = translate(event, &all, &FieldSelector::default(), &Codec::default()).expect("sent");
            assert!(matches!(stored, WatchItem::Stored { .. }), "the unfiltered watch parses nothing");
            let filtered = translate(event, &selecting, &FieldSelector::default(), &Codec::default()).expect("sent");
            assert!(matches!(filtered, WatchItem::Event { .. }));
            let (stored, filtered) = (sent(stored), sent(filtered));
            assert_eq!(stored, filtered);
            assert_eq!(stored.0, event_type);
            assert_eq!(stored.1["metadata"]["resourceVersion"], rv, "{event_type} at the event's revision");
        }
    }

    #[test]
    fn an_object_leaving_the_selection_is_deleted_as_it_was_at_the_new_revision() {
        let selecting = LabelSelector(vec![LabelRequirement::Equals("app".into(), "x".into())]);
        let mut moved = kv(7);
        let mut obj: Value = serde_json::from_slice(&moved.value).expect("json");
        obj["metadata"]["labels"]["app"] = json!("y");
        moved.value = meta::to_stored(&obj);
        let event = WatchEvent { revision: 7, key: "/a".into(), current: Some(moved), prev: Some(kv(2)) };
        let (event_type, object) =
            sent(translate(&event, &selecting, &FieldSelector::default(), &Codec::default()).expect("sent"));
        assert_eq!(event_type, "DELETED");
        assert_eq!(object["metadata"]["labels"]["app"], "x", "the object as the watcher last saw it");
        assert_eq!(object["spec"]["n"], 2);
        assert_eq!(object["metadata"]["resourceVersion"], "7");
    }

    #[test]
    fn a_written_object_reads_back_as_the_store_would_give_it() {
        let versions = super::super::VersionConversion {
            served: "stable.example.com/v1beta1".into(),
            storage: "stable.example.com/v1".into(),
            served_schema: None,
            storage_schema: None,
            stored_schemas: Vec::new().into(),
            listed: crate::resources::unlisted::Listed::new([
                "stable.example.com/v1".into(),
                "stable.example.com/v1beta1".into(),
            ]),
            webhook: None,
        };
        let obj = json!({"apiVersion": "stable.example.com/v1beta1", "kind": "Widget",
            "metadata": {"name": "w", "uid": "u"}, "spec": {"n": 1.5, "big": u64::MAX}});
        for codec in [Codec::default(), Codec { versions: Some(versions), ..Default::default() }] {
            let stored = codec.write(&obj).expect("stored");
            let kv = KeyValue { key: "/w".into(), value: stored, create_revision: 3, mod_revision: 9 };
            let written = codec.written(obj.clone(), &kv).expect("written");
            assert_eq!(written, codec.read(&kv).expect("listed"));
            assert_eq!(written["metadata"]["resourceVersion"], "9");
        }
    }

    /// The oracle's `None` conversion: an object is stored pruned to the storage version's
    /// schema and read with that version's defaults; one stored before a schema change is
    /// defaulted by the schema of the version it is stored at, then pruned to the served one.
    #[test]
    fn objects_take_the_defaults_of_the_version_they_are_stored_at() {
        use crate::schema::Schema;
        use std::sync::Arc;
        let schema = |props: Value| {
            let props = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": props}}});
            Arc::new(Schema::new(&serde_json::from_value(props).expect("schema")))
        };
        let v1 = schema(json!({"a": {"type": "string", "default": "one"}, "k": {"type": "string"}}));
        let v2 = schema(json!({"c": {"type": "integer", "default": 2}, "k": {"type": "string"}}));
        let at = |served: &str, served_schema: &Arc<Schema>| super::super::VersionConversion {
            served: served.into(),
            storage: "g/v1".into(),
            served_schema: Some(Arc::clone(served_schema)),
            storage_schema: Some(Arc::clone(&v1)),
            stored_schemas: vec![(Arc::from("g/v1"), Arc::clone(&v1)), (Arc::from("g/v2"), Arc::clone(&v2))].into(),
            listed: crate::resources::unlisted::Listed::new(["g/v1".into(), "g/v2".into()]),
            webhook: None,
        };
        let refresh = |schema: &Arc<Schema>| Some(super::super::Refresh { since: 5, schema: Arc::clone(schema) });
        let obj = json!({"apiVersion": "g/v2", "kind": "P", "metadata": {"name": "p"}, "spec": {"k": "z", "c": 2}});
        let codec = Codec { versions: Some(at("g/v2", &v2)), ..Default::default() };
        let stored = codec.write(&obj).expect("stored");
        let kv = KeyValue { key: "/p".into(), value: stored, create_revision: 3, mod_revision: 9 };
        assert_eq!(meta::from_stored(&kv)["spec"], json!({"a": "one", "k": "z"}));

        let old = json!({"apiVersion": "g/v1", "kind": "P", "metadata": {"name": "p"}, "spec": {"k": "z"}});
        let kv = KeyValue { key: "/p".into(), value: meta::to_stored(&old), create_revision: 3, mod_revision: 3 };
        let at_v2 = Codec { versions: Some(at("g/v2", &v2)), refresh: refresh(&v2), ..Default::default() };
        assert_eq!(at_v2.read(&kv).expect("listed")["spec"], json!({"k": "z"}));
        let at_v1 = Codec { versions: Some(at("g/v1", &v1)), refresh: refresh(&v1), ..Default::default() };
        assert_eq!(at_v1.read(&kv).expect("listed")["spec"], json!({"a": "one", "k": "z"}));
    }

    /// A change the selector leaves out sends nothing but still counts as seen, so the
    /// watch's bookmarks move past it (kube's cacher's do).
    #[test]
    fn a_change_the_selector_leaves_out_is_seen_but_not_sent() {
        let selecting = LabelSelector(vec![LabelRequirement::Equals("app".into(), "nothing".into())]);
        let event = WatchEvent { revision: 5, key: "/a".into(), current: Some(kv(5)), prev: Some(kv(2)) };
        let item = translate(&event, &selecting, &FieldSelector::default(), &Codec::default());
        assert!(matches!(item, Some(WatchItem::Filtered { resource_version: 5 })));
    }

    #[test]
    fn a_watch_of_another_version_than_stored_sends_every_object_at_its_own() {
        let versions = super::super::VersionConversion {
            served: "stable.example.com/v1beta1".into(),
            storage: "stable.example.com/v1".into(),
            served_schema: None,
            storage_schema: None,
            stored_schemas: Vec::new().into(),
            listed: crate::resources::unlisted::Listed::new([
                "stable.example.com/v1".into(),
                "stable.example.com/v1beta1".into(),
            ]),
            webhook: None,
        };
        let codec = Codec { versions: Some(versions), ..Default::default() };
        let selecting = LabelSelector(vec![LabelRequirement::Equals("app".into(), "x".into())]);
        let event = WatchEvent { revision: 5, key: "/a".into(), current: Some(kv(5)), prev: Some(kv(2)) };
        let stored = translate(&event, &LabelSelector::default(), &FieldSelector::default(), &codec).expect("sent");
        assert!(matches!(stored, WatchItem::Stored { .. }), "a new apiVersion needs no parse");
        let filtered = translate(&event, &selecting, &FieldSelector::default(), &codec).expect("sent");
        for (event_type, object) in [sent(stored), sent(filtered)] {
            assert_eq!(event_type, "MODIFIED");
            assert_eq!(object["apiVersion"], "stable.example.com/v1beta1");
            assert_eq!(object["metadata"]["resourceVersion"], "5");
        }
    }
}

/// A watch whose store does not answer as it starts: kube's 200 with one ERROR event.
fn unavailable_watch() -> BoxStream<'static, WatchItem> {
    futures::stream::iter([WatchItem::Error(ApiError::watch_storage_unavailable())]).boxed()
}
