//! The event stream's memory: each watch event as a record (type, time, object,
//! resourceVersion, the field manager and operation of the change, and for MODIFIED what
//! changed, from [`crate::cluster::diff`]), at most [`EVENT_LIMIT`] of them, the oldest
//! dropped and counted. Diffs need the previous version of each object, so the last one
//! seen of every live object is kept too (without its managedFields), and goes with its
//! DELETED. Pure: the screen's state and the step function feed it.

use crate::cluster::diff::{Change, diff};
use crate::cluster::discovery::ResourceType;
use crate::cluster::watch::{ObjectEvent, ObjectEventType, Watching};
use crate::tui::table::{ObjKey, RowFilter, scroll_offset};
use k8s_openapi::jiff::Timestamp;
use serde_json::Value;
use std::collections::{HashMap, VecDeque};

/// Events kept; older ones are dropped (and counted).
pub const EVENT_LIMIT: usize = 5_000;

/// Paths the diffs leave out: they change on every write and have their own columns.
const NOT_DIFFED: [&str; 2] = ["metadata.resourceVersion", "metadata.managedFields"];

/// One event as the stream shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct EventRecord {
    /// Numbered from 1 in arrival order, across drops.
    pub seq: u64,
    pub type_: ObjectEventType,
    /// When the TUI received it.
    pub at: Timestamp,
    /// `None` for bookmarks.
    pub key: Option<ObjKey>,
    pub resource_version: String,
    /// The managedFields entry that made the change: manager, and operation (with its subresource).
    pub manager: Option<(String, String)>,
    /// MODIFIED: what changed since the version seen before (all paths; the list shows
    /// the first few).
    pub changes: Vec<Change>,
}

impl EventRecord {
    /// The texts a `/` filter matches against.
    pub fn texts(&self) -> impl Iterator<Item = String> + '_ {
        let key = self.key.as_ref().map(ObjKey::display).unwrap_or_default();
        let manager = self.manager.as_ref().map(|(m, op)| format!("{m} {op}")).unwrap_or_default();
        [self.type_.as_str().to_string(), key, manager].into_iter().chain(self.changes.iter().map(|c| c.path.clone()))
    }
}

/// An object's managedFields as last seen, and the manager named for that change.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ManagersSeen {
    pub entries: Vec<Value>,
    pub writer: Option<String>,
}

/// The managedFields entry that made a change: among the entries that are new, or whose
/// time moved or that gained fields since `before` (the previous version's entries; an
/// entry that only lost fields lost them to the writer), the newest by `time`, the last
/// listed among equals (times are kept to the second); without `before` or such an entry,
/// the newest of all. Its manager and operation, `Update/status` for a subresource's.
pub fn changing_manager(before: Option<&ManagersSeen>, obj: &Value) -> Option<(String, String)> {
    let entries = obj.pointer("/metadata/managedFields")?.as_array()?;
    let text = |e: &Value, k: &str| e.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
    let identity = |e: &Value| (text(e, "manager"), text(e, "operation"), text(e, "subresource"));
    let time = |e: &&Value| text(e, "time").parse::<Timestamp>().ok();
    let writers = before.map(|before| {
        entries.iter().filter(|e| match before.entries.iter().find(|p| identity(p) == identity(e)) {
            None => true,
            Some(p) => text(p, "time") != text(e, "time") || gained(&p["fieldsV1"], &e["fieldsV1"]),
        })
    });
    // With no writer seen (the same manager writing the same fields within a second), the
    // previous change's writer when it is still listed, then the newest.
    let again = before.and_then(|b| b.writer.as_deref());
    let again = again.and_then(|w| entries.iter().find(|e| text(e, "manager") == w));
    let chosen = match writers.and_then(|w| w.max_by_key(time)).or(again) {
        Some(entry) => entry,
        None => entries.iter().max_by_key(time)?,
    };
    let sub = text(chosen, "subresource");
    let op = if sub.is_empty() { text(chosen, "operation") } else { format!("{}/{sub}", text(chosen, "operation")) };
    Some((text(chosen, "manager"), op))
}

/// Whether `now` (a fieldsV1 set) holds a field `before` does not.
fn gained(before: &Value, now: &Value) -> bool {
    match (before, now) {
        (Value::Object(before), Value::Object(now)) => {
            now.iter().any(|(k, v)| before.get(k).is_none_or(|b| gained(b, v)))
        }
        _ => false,
    }
}

/// The events kept, and the last version of each object for the next diff.
#[derive(Debug, Default)]
pub struct EventLog {
    events: VecDeque<EventRecord>,
    last: HashMap<ObjKey, Value>,
    /// Each object's last managedFields, to tell which entry a change moved.
    last_managers: HashMap<ObjKey, ManagersSeen>,
    dropped: u64,
    next: u64,
}

impl EventLog {
    /// Records one event received at `at`.
    pub fn push(&mut self, event: ObjectEvent, at: Timestamp) {
        let ObjectEvent { type_, mut object } = event;
        let meta = object.get("metadata");
        let resource_version =
            meta.and_then(|m| m.get("resourceVersion")).and_then(Value::as_str).unwrap_or_default().to_string();
        let key = (type_ != ObjectEventType::Bookmark).then(|| ObjKey::of(&object)).flatten();
        let entries = object.pointer("/metadata/managedFields").and_then(Value::as_array).cloned();
        let before = key.as_ref().and_then(|k| self.last_managers.get(k));
        let manager = changing_manager(before, &object);
        if let Some(k) = &key {
            match (type_, entries) {
                (ObjectEventType::Deleted, _) | (_, None) => self.last_managers.remove(k),
                (_, Some(entries)) => {
                    let writer = manager.as_ref().map(|(m, _)| m.clone());
                    self.last_managers.insert(k.clone(), ManagersSeen { entries, writer })
                }
            };
        }
        if let Some(m) = object.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("managedFields");
        }
        let mut changes = vec![];
        if let Some(key) = &key {
            let before = match type_ {
                ObjectEventType::Deleted => self.last.remove(key),
                _ => self.last.insert(key.clone(), object.clone()),
            };
            if type_ == ObjectEventType::Modified
                && let Some(before) = before
            {
                changes = diff(&before, &object, &NOT_DIFFED);
            }
        }
        self.next += 1;
        if self.events.len() >= EVENT_LIMIT {
            self.events.pop_front();
            self.dropped += 1;
        }
        self.events.push_back(EventRecord { seq: self.next, type_, at, key, resource_version, manager, changes });
    }

    /// Events dropped to keep within [`EVENT_LIMIT`].
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
    pub fn len(&self) -> usize {
        self.events.len()
    }
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }
    /// The number of the newest event (0: none yet).
    pub fn newest(&self) -> u64 {
        self.next
    }

    /// The events shown, newest first: those up to `until` (a pause) that `filter` lets through.
    pub fn shown<'a>(
        &'a self,
        until: Option<u64>,
        filter: Option<&'a RowFilter>,
    ) -> impl Iterator<Item = &'a EventRecord> + 'a {
        self.events.iter().rev().filter(move |e| {
            until.is_none_or(|u| e.seq <= u)
                && filter.is_none_or(|f| f.lets(e.texts().collect::<Vec<_>>().iter().map(String::as_str)))
        })
    }

    pub fn get(&self, seq: u64) -> Option<&EventRecord> {
        let first = self.events.front()?.seq;
        self.events.get(usize::try_from(seq.checked_sub(first)?).ok()?)
    }
}

/// The event stream screen (`w`): what it watches, the events, and how they are shown.
#[derive(Debug)]
pub struct EventsScreen {
    pub kind: ResourceType,
    pub what: Watching,
    /// The stream this screen listens to; events of older ones stop them.
    pub stream: u64,
    pub log: EventLog,
    /// Space: the newest event shown when paused (later ones are kept, not shown).
    pub paused: Option<u64>,
    pub filter: Option<RowFilter>,
    /// The event under the cursor; `None` follows the newest.
    pub selected: Option<u64>,
    pub offset: usize,
    /// The watch failed and is retrying: why.
    pub error: Option<String>,
}

impl EventsScreen {
    pub fn new(kind: ResourceType, what: Watching, stream: u64) -> EventsScreen {
        EventsScreen {
            kind,
            what,
            stream,
            log: EventLog::default(),
            paused: None,
            filter: None,
            selected: None,
            offset: 0,
            error: None,
        }
    }

    /// `widgets(default)`, `widgets/default/w1`: what is watched.
    pub fn title(&self) -> String {
        let ns = self.what.namespace.as_deref();
        match &self.what.name {
            Some(name) => format!("{}/{}", self.kind.plural, ObjKey::new(ns, name).display()),
            None => format!("{}({})", self.kind.plural, ns.unwrap_or("all")),
        }
    }

    /// The events shown, newest first.
    pub fn shown(&self) -> Vec<&EventRecord> {
        self.log.shown(self.paused, self.filter.as_ref()).collect()
    }

    /// The cursor's position among [`EventsScreen::shown`].
    pub fn cursor(&self) -> usize {
        let Some(seq) = self.selected else { return 0 };
        self.shown().iter().position(|e| e.seq <= seq).unwrap_or(0)
    }

    /// Moves the cursor; back at the top it follows the newest event again.
    pub fn move_by(&mut self, delta: isize, height: usize) {
        let shown = self.shown();
        let cursor = self.cursor().saturating_add_signed(delta).min(shown.len().saturating_sub(1));
        self.selected = shown.get(cursor).map(|e| e.seq).filter(|_| cursor > 0);
        self.offset = scroll_offset(self.offset, cursor, height);
    }

    /// The event under the cursor.
    pub fn current(&self) -> Option<&EventRecord> {
        self.shown().get(self.cursor()).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(type_: ObjectEventType, name: &str, rv: &str, size: i64, manager: &str) -> ObjectEvent {
        let object = json!({"metadata": {"name": name, "namespace": "default", "resourceVersion": rv,
            "managedFields": [
                {"manager": "kubectl", "operation": "Apply", "time": "2026-11-26T08:00:00Z"},
                {"manager": manager, "operation": "Update", "subresource": "status", "time": "2026-11-26T08:01:00Z"}
            ]},
            "spec": {"size": size}, "status": {"ready": size}});
        ObjectEvent { type_, object }
    }

    #[test]
    fn modified_events_carry_the_diff_from_the_version_seen_before() {
        use ObjectEventType::*;
        let mut log = EventLog::default();
        let at = Timestamp::UNIX_EPOCH;
        log.push(event(Added, "w1", "1", 1, "ctl"), at);
        log.push(event(Modified, "w1", "2", 2, "ctl"), at);
        log.push(event(Deleted, "w1", "3", 2, "ctl"), at);
        log.push(event(Modified, "w1", "4", 3, "ctl"), at);
        log.push(ObjectEvent { type_: Bookmark, object: json!({"metadata": {"resourceVersion": "9"}}) }, at);
        let shown: Vec<_> = log.shown(None, None).collect();
        let cols: Vec<(&str, &str, usize)> =
            shown.iter().map(|e| (e.type_.as_str(), e.resource_version.as_str(), e.changes.len())).collect();
        assert_eq!(
            cols,
            [("BOOKMARK", "9", 0), ("MODIFIED", "4", 0), ("DELETED", "3", 0), ("MODIFIED", "2", 2), ("ADDED", "1", 0)],
            "newest first; no diff without the version before"
        );
        let lines: Vec<String> = shown[3].changes.iter().map(|c| c.line(20)).collect();
        assert_eq!(lines, ["~ spec.size: 1 → 2", "~ status.ready: 1 → 2"], "managedFields and rv left out");
        assert_eq!(shown[3].manager, Some(("ctl".into(), "Update/status".into())));
        assert_eq!(shown[0].key, None);
    }

    #[test]
    fn memory_is_bounded_and_drops_are_counted() {
        let mut log = EventLog::default();
        for i in 0..EVENT_LIMIT + 7 {
            log.push(event(ObjectEventType::Modified, "w", &i.to_string(), i as i64, "m"), Timestamp::UNIX_EPOCH);
        }
        assert_eq!((log.len(), log.dropped(), log.newest()), (EVENT_LIMIT, 7, EVENT_LIMIT as u64 + 7));
        assert_eq!(log.get(8).map(|e| e.seq), Some(8));
        assert_eq!(log.get(7), None, "dropped");
        assert_eq!(log.shown(Some(10), None).count(), 3, "a pause shows only what had come");
        let f = RowFilter::parse("rv-none").ok();
        assert_eq!(log.shown(None, f.as_ref()).count(), 0);
        let f = RowFilter::parse("spec.size").ok();
        assert_eq!(log.shown(None, f.as_ref()).count(), EVENT_LIMIT);
    }

    #[test]
    fn the_entry_a_change_moved_names_its_manager_else_the_newest() {
        let entry = |m: &str, op: &str, sub: &str, time: &str, field: &str| json!({"manager": m, "operation": op, "subresource": sub, "time": time, "fieldsV1": {field: {}}});
        let fields = |entries: Vec<Value>| json!({"metadata": {"managedFields": entries}});
        let seen = |entries: Vec<Value>| ManagersSeen { entries, writer: None };
        let status = entry("writer", "Update", "status", "2026-11-26T08:02:00Z", "f:status");
        let author = entry("author", "Update", "", "2026-11-26T08:02:00Z", "f:spec");
        let author_again = entry("author", "Update", "", "2026-11-26T08:02:00Z", "f:spec2");
        let want = |m: &str, op: &str| Some((m.to_string(), op.to_string()));
        let cases = [
            (None, json!({"metadata": {}}), None),
            // No previous version: the newest, the last listed among equal times.
            (None, fields(vec![author.clone(), status.clone()]), want("writer", "Update/status")),
            (
                None,
                fields(vec![
                    entry("a", "Apply", "", "2026-11-26T08:02:00Z", "f:a"),
                    entry("b", "Update", "", "2026-11-26T08:01:00Z", "f:b"),
                ]),
                want("a", "Apply"),
            ),
            // Equal times: the entry whose fields moved made the change.
            (
                Some(seen(vec![author.clone(), status.clone()])),
                fields(vec![author_again, status.clone()]),
                want("author", "Update"),
            ),
            // A new entry made it.
            (Some(seen(vec![status.clone()])), fields(vec![author.clone(), status.clone()]), want("author", "Update")),
            // An entry that only lost fields lost them to the writer, listed before it or not.
            (
                Some(seen(vec![entry("first", "Update", "", "2026-11-26T08:00:00Z", "f:spec"), status.clone()])),
                fields(vec![
                    json!({"manager": "first", "operation": "Update", "subresource": "", "time": "2026-11-26T08:00:00Z", "fieldsV1": {}}),
                    author.clone(),
                    status.clone(),
                ]),
                want("author", "Update"),
            ),
            // Nothing moved, the same manager writing again within the second: the
            // previous change's writer.
            (
                Some(ManagersSeen { entries: vec![author.clone(), status.clone()], writer: Some("author".into()) }),
                fields(vec![author.clone(), status.clone()]),
                want("author", "Update"),
            ),
            // Nothing moved (a change managedFields do not record): the newest.
            (Some(seen(vec![status.clone()])), fields(vec![status]), want("writer", "Update/status")),
        ];
        for (before, obj, want) in cases {
            assert_eq!(changing_manager(before.as_ref(), &obj), want, "{obj}");
        }
    }
}
