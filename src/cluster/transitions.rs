//! Condition transitions of one object, as a live view sees it change: [`transitions`]
//! compares the conditions before and after a change (pure), and a [`Timeline`] keeps the
//! last [`TIMELINE_LIMIT`] of them, the object's first conditions included.
//!
//! A condition's `lastTransitionTime` moves only when its status flips, so a new time with
//! the same status means flips in between went unseen: that is a transition too. A new
//! reason alone is kept (a controller moving from one step to the next); a new message
//! alone is not (controllers rewrite messages with counts and times).

use serde_json::Value;
use std::collections::VecDeque;

/// Transitions a timeline keeps; older ones go first.
pub const TIMELINE_LIMIT: usize = 100;

/// One change of one condition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transition {
    pub type_: String,
    /// The status before; `None`: the condition is new (or the object first seen).
    pub from: Option<String>,
    /// The status after; `None`: the condition was removed.
    pub to: Option<String>,
    pub reason: String,
    pub message: String,
    pub last_transition_time: String,
}

impl Transition {
    /// `False→True`, `→True` (new), `True→` (removed); `True` when only the time or reason moved.
    pub fn change(&self) -> String {
        match (&self.from, &self.to) {
            (Some(a), Some(b)) if a == b => b.clone(),
            (a, b) => format!("{}→{}", a.as_deref().unwrap_or(""), b.as_deref().unwrap_or("")),
        }
    }
}

fn text(c: &Value, key: &str) -> String {
    c.get(key).and_then(Value::as_str).unwrap_or_default().to_string()
}

/// The `status.conditions` of an object (none when it has none, or they are not a list).
pub fn conditions_of(obj: &Value) -> &[Value] {
    obj.pointer("/status/conditions").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
}

/// What changed from `old` to `new` conditions, oldest `lastTransitionTime` first.
pub fn transitions(old: &[Value], new: &[Value]) -> Vec<Transition> {
    let find = |list: &[Value], t: &str| list.iter().find(|c| text(c, "type") == t).cloned();
    let mut out = vec![];
    for c in new {
        let type_ = text(c, "type");
        let before = find(old, &type_);
        let moved = before
            .as_ref()
            .is_none_or(|b| ["status", "lastTransitionTime", "reason"].iter().any(|k| text(b, k) != text(c, k)));
        if moved {
            out.push(Transition {
                from: before.map(|b| text(&b, "status")),
                to: Some(text(c, "status")),
                reason: text(c, "reason"),
                message: text(c, "message"),
                last_transition_time: text(c, "lastTransitionTime"),
                type_,
            });
        }
    }
    for b in old.iter().filter(|b| find(new, &text(b, "type")).is_none()) {
        out.push(Transition {
            type_: text(b, "type"),
            from: Some(text(b, "status")),
            to: None,
            reason: String::new(),
            message: "removed".into(),
            last_transition_time: String::new(),
        });
    }
    // RFC 3339 times in UTC sort as text; removals (no time) stay last.
    out.sort_by(|a, b| {
        (a.last_transition_time.is_empty(), &a.last_transition_time)
            .cmp(&(b.last_transition_time.is_empty(), &b.last_transition_time))
    });
    out
}

/// The transitions seen of one object, bounded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Timeline {
    entries: VecDeque<Transition>,
    /// Transitions that fell off the front.
    pub dropped: u64,
}

impl Timeline {
    /// The object changed from `old` (`None`: first seen) to `new`.
    pub fn observe(&mut self, old: Option<&Value>, new: &Value) {
        let old = old.map(conditions_of).unwrap_or_default();
        for t in transitions(old, conditions_of(new)) {
            if self.entries.len() >= TIMELINE_LIMIT {
                self.entries.pop_front();
                self.dropped += 1;
            }
            self.entries.push_back(t);
        }
    }

    /// Newest first.
    pub fn newest_first(&self) -> impl Iterator<Item = &Transition> {
        self.entries.iter().rev()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn c(type_: &str, status: &str, reason: &str, at: &str) -> Value {
        json!({"type": type_, "status": status, "reason": reason, "message": format!("{type_} is {status}"), "lastTransitionTime": at})
    }

    const T1: &str = "2026-11-26T08:00:00Z";
    const T2: &str = "2026-11-26T08:05:00Z";

    fn changes(old: &[Value], new: &[Value]) -> Vec<String> {
        transitions(old, new).iter().map(|t| format!("{} {} {}", t.type_, t.change(), t.reason)).collect()
    }

    /// What, the conditions before and after, and the transitions wanted.
    type Case = (&'static str, Vec<Value>, Vec<Value>, Vec<&'static str>);

    #[test]
    fn what_counts_as_a_transition() {
        let ready = c("Ready", "False", "Starting", T1);
        let cases: [Case; 7] = [
            ("first seen", vec![], vec![ready.clone()], vec!["Ready →False Starting"]),
            ("flipped", vec![ready.clone()], vec![c("Ready", "True", "Up", T2)], vec!["Ready False→True Up"]),
            ("unchanged", vec![ready.clone()], vec![ready.clone()], vec![]),
            ("new reason", vec![ready.clone()], vec![c("Ready", "False", "Waiting", T1)], vec!["Ready False Waiting"]),
            (
                "flips unseen",
                vec![ready.clone()],
                vec![c("Ready", "False", "Starting", T2)],
                vec!["Ready False Starting"],
            ),
            ("removed", vec![ready.clone()], vec![], vec!["Ready False→ "]),
            (
                "message alone is not",
                vec![ready.clone()],
                vec![
                    json!({"type": "Ready", "status": "False", "reason": "Starting", "message": "other", "lastTransitionTime": T1}),
                ],
                vec![],
            ),
        ];
        for (what, old, new, want) in cases {
            assert_eq!(changes(&old, &new), want, "{what}");
        }
    }

    #[test]
    fn several_come_oldest_first() {
        let new = [c("Ready", "True", "Up", T2), c("Synced", "True", "Done", T1)];
        assert_eq!(changes(&[], &new), ["Synced →True Done", "Ready →True Up"]);
    }

    #[test]
    fn the_timeline_is_newest_first_and_bounded() {
        let obj = |status: &str, at: &str| json!({"status": {"conditions": [c("Ready", status, "R", at)]}});
        let mut t = Timeline::default();
        t.observe(None, &obj("False", T1));
        t.observe(Some(&obj("False", T1)), &obj("True", T2));
        let shown: Vec<String> = t.newest_first().map(Transition::change).collect();
        assert_eq!(shown, ["False→True", "→False"]);
        let mut prev = obj("True", T2);
        for i in 0..TIMELINE_LIMIT {
            let next =
                obj(if i % 2 == 0 { "False" } else { "True" }, &format!("2026-11-26T09:{:02}:{:02}Z", i / 60, i % 60));
            t.observe(Some(&prev), &next);
            prev = next;
        }
        assert_eq!((t.len(), t.dropped), (TIMELINE_LIMIT, 2));
        assert!(t.newest_first().next().is_some_and(|x| x.last_transition_time == "2026-11-26T09:01:39Z"));
    }

    #[test]
    fn no_conditions_no_transitions() {
        let mut t = Timeline::default();
        t.observe(None, &json!({"status": {"conditions": "not a list"}}));
        t.observe(None, &json!({}));
        assert!(t.is_empty());
    }
}
