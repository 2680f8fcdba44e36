//! The repeated members a JSON patch leaves in the patched object, for kube's strict
//! decoding of it (`duplicate field "spec.x.b"`).
//!
//! evanphx/json-patch splices an `add` or `replace` value into the document as the bytes
//! sent (a lazy node), so members repeated there are still repeated when kube decodes the
//! patched object; the engine's patched [`Value`](serde_json::Value) has kept only the last
//! of each. Go parses a lazy node when an operation goes through it (every container on the
//! way to an operation's path) or reads it whole (`test`), and the repeats in it are gone
//! then; `copy` and `move` carry the bytes, and inserting into or removing from an array
//! moves the items after. kube's decoder meets the repeats in document order: lazy nodes in
//! the order Go writes the parsed containers around them (object keys sorted), and within
//! one node in the order sent. kube shows the patched JSON in a strict error as Go wrote it:
//! lazy nodes as sent (compacted), repeats and all ([`Splices::raw_values`]).

use super::go_decode::{duplicate_field, duplicate_paths, join};
use serde_json::value::RawValue;

/// One step of a resolved location in the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Step {
    Key(String),
    Index(usize),
}

/// A member repeated in the object at `container`, inside the lazy node at `root`.
#[derive(Debug, Clone)]
struct Repeat {
    root: Vec<Step>,
    container: Vec<Step>,
    key: String,
}

/// Document order of two locations: keys as Go's encoder sorts them, items by index.
fn document_order(a: &[Step], b: &[Step]) -> std::cmp::Ordering {
    for (x, y) in a.iter().zip(b) {
        let order = match (x, y) {
            (Step::Key(x), Step::Key(y)) => x.cmp(y),
            (Step::Index(x), Step::Index(y)) => x.cmp(y),
            (Step::Key(_), Step::Index(_)) => std::cmp::Ordering::Less,
            (Step::Index(_), Step::Key(_)) => std::cmp::Ordering::Greater,
        };
        if order.is_ne() {
            return order;
        }
    }
    a.len().cmp(&b.len())
}

/// A value still held as the bytes sent (compacted as Go's encoder writes them).
#[derive(Debug, Clone)]
struct Lazy {
    at: Vec<Step>,
    raw: String,
}

/// The repeats and raw values spliced into the document so far.
#[derive(Default)]
pub(super) struct Splices {
    repeats: Vec<Repeat>,
    lazy: Vec<Lazy>,
}

/// The members of a JSON object (the last of repeated ones, as a Go map keeps) or the items
/// of an array, each as its text; nothing for a scalar.
fn children(raw: &str) -> Vec<(Step, String)> {
    if raw.starts_with('{') {
        let Ok(super::go_decode::Members(members)) = serde_json::from_str(raw) else { return Vec::new() };
        let mut out: Vec<(Step, String)> = Vec::new();
        for (key, value) in members {
            out.retain(|(step, _)| *step != Step::Key(key.clone()));
            out.push((Step::Key(key), value.get().to_string()));
        }
        out
    } else if raw.starts_with('[') {
        let items: Vec<Box<RawValue>> = serde_json::from_str(raw).unwrap_or_default();
        items.into_iter().enumerate().map(|(i, item)| (Step::Index(i), item.get().to_string())).collect()
    } else {
        Vec::new()
    }
}

/// Go's `json.Compact` with HTML escaping, as `json.Marshal` writes a `RawMessage`.
pub(super) fn compact(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in raw.chars() {
        match c {
            _ if !in_string && c.is_ascii_whitespace() => {}
            '<' | '>' | '&' if in_string => out.push_str(&format!("\\u{:04x}", c as u32)),
            '\u{2028}' | '\u{2029}' => out.push_str(&format!("\\u{:04x}", c as u32)),
            _ => {
                out.push(c);
                if in_string && !escaped && c == '"' {
                    in_string = false;
                } else if !in_string && c == '"' {
                    in_string = true;
                }
                escaped = in_string && !escaped && c == '\\';
                continue;
            }
        }
        escaped = false;
    }
    out
}

/// Whether `a` is `b` or leads to it.
fn leads_to(a: &[Step], b: &[Step]) -> bool {
    b.starts_with(a)
}

/// A Go strict-error path (`spec.tags[0].a`) as steps to its container and its last key.
fn steps_of(path: &str) -> Option<(Vec<Step>, String)> {
    let mut steps = Vec::new();
    for part in path.split('.') {
        let (key, indices) = part.split_once('[').map_or((part, ""), |(k, rest)| (k, rest));
        if !key.is_empty() {
            steps.push(Step::Key(key.to_string()));
        }
        for index in indices.split('[').filter(|s| !s.is_empty()) {
            steps.push(Step::Index(index.trim_end_matches(']').parse().ok()?));
        }
    }
    match steps.pop()? {
        Step::Key(key) => Some((steps, key)),
        Step::Index(_) => None,
    }
}

impl Splices {
    /// Go parses every container on the way to `at`: repeats in those are gone, and those
    /// below are in lazy nodes of their own now.
    fn went_to(&mut self, at: &[Step]) {
        let parent = &at[..at.len().saturating_sub(1)];
        while let Some(i) = self.lazy.iter().position(|l| leads_to(&l.at, parent)) {
            let parsed = self.lazy.remove(i);
            for (step, raw) in children(&parsed.raw) {
                self.lazy.push(Lazy { at: [parsed.at.as_slice(), &[step]].concat(), raw });
            }
        }
        self.repeats.retain(|r| !leads_to(&r.container, parent));
        for repeat in self.repeats.iter_mut().filter(|r| leads_to(&r.root, parent)) {
            let common = repeat.container.iter().zip(parent).take_while(|(a, b)| a == b).count();
            repeat.root = repeat.container[..common + 1].to_vec();
        }
    }

    /// What was at `at` is gone, or parsed whole.
    fn replaced(&mut self, at: &[Step]) {
        self.repeats.retain(|r| !leads_to(at, &r.container));
        self.lazy.retain(|l| !leads_to(at, &l.at));
    }

    /// An item inserted at `at` in an array (`inserted`), or removed from there, moves the
    /// repeats in the items after it.
    fn shift(&mut self, at: &[Step], inserted: bool) {
        let Some((Step::Index(i), array)) = at.split_last() else { return };
        let moved = |steps: &mut Vec<Step>| {
            if !steps.starts_with(array) {
                return;
            }
            if let Some(Step::Index(j)) = steps.get_mut(array.len()) {
                match inserted {
                    true if *j >= *i => *j += 1,
                    false if *j > *i => *j -= 1,
                    _ => {}
                }
            }
        };
        for repeat in &mut self.repeats {
            moved(&mut repeat.container);
            moved(&mut repeat.root);
        }
        for lazy in &mut self.lazy {
            moved(&mut lazy.at);
        }
    }

    /// Puts `value`'s repeats and raw values, or `carried` ones, at `at` (`inserted` into an
    /// array, else in place of what was there).
    fn put(&mut self, at: &[Step], inserted: bool, carried: (Vec<Repeat>, Vec<Lazy>)) {
        self.went_to(at);
        if inserted {
            self.shift(at, true);
        } else {
            self.replaced(at);
        }
        self.repeats.extend(carried.0);
        self.lazy.extend(carried.1);
    }

    /// `add` (`inserted` into an array) or `replace` of `value` at `at`.
    pub(super) fn written(&mut self, at: &[Step], value: Option<&RawValue>, inserted: bool) {
        let paths = value.map(|v| duplicate_paths(v.get().as_bytes())).unwrap_or_default();
        let repeats = paths
            .iter()
            .filter_map(|path| steps_of(path))
            .map(|(inner, key)| Repeat { root: at.to_vec(), container: [at, &inner].concat(), key })
            .collect();
        let lazy = value.map(|v| Lazy { at: at.to_vec(), raw: compact(v.get()) }).into_iter().collect();
        self.put(at, inserted, (repeats, lazy));
    }

    /// `remove` (`removed`) or `test` at `at` (a test parses what it compares).
    pub(super) fn read_or_removed(&mut self, at: &[Step], removed: bool) {
        self.went_to(at);
        self.replaced(at);
        if removed {
            self.shift(at, false);
        }
    }

    /// `copy` (`moved` false) or `move` of what is at `from` to `to` (`inserted` into an array).
    pub(super) fn carried(&mut self, from: &[Step], to: &[Step], moved: bool, inserted: bool) {
        self.went_to(from);
        let carried: Vec<Repeat> = self
            .repeats
            .iter()
            .filter(|r| leads_to(from, &r.container))
            .map(|r| Repeat {
                root: [to, &r.root[from.len().min(r.root.len())..]].concat(),
                container: [to, &r.container[from.len()..]].concat(),
                key: r.key.clone(),
            })
            .collect();
        let lazy: Vec<Lazy> = self
            .lazy
            .iter()
            .filter(|l| leads_to(from, &l.at))
            .map(|l| Lazy { at: [to, &l.at[from.len()..]].concat(), raw: l.raw.clone() })
            .collect();
        if moved {
            self.replaced(from);
            self.shift(from, false);
        }
        self.put(to, inserted, (carried, lazy));
    }

    /// The values still held as sent, by where they are (keys, and item indices as
    /// text), for [`super::patched_json`] to write as they are.
    pub(super) fn raw_values(&self) -> Vec<(Vec<String>, String)> {
        let path = |at: &[Step]| {
            at.iter()
                .map(|step| match step {
                    Step::Key(k) => k.clone(),
                    Step::Index(i) => i.to_string(),
                })
                .collect()
        };
        self.lazy.iter().map(|l| (path(&l.at), l.raw.to_string())).collect()
    }

    /// The strict errors kube's decoding of the patched object reports for them.
    pub(super) fn errors(&self) -> Vec<String> {
        let render = |repeat: &Repeat| {
            let mut path = String::new();
            for step in &repeat.container {
                path = match step {
                    Step::Key(k) => join(&path, k),
                    Step::Index(i) => format!("{path}[{i}]"),
                };
            }
            duplicate_field(&join(&path, &repeat.key))
        };
        let mut repeats: Vec<&Repeat> = self.repeats.iter().collect();
        repeats.sort_by(|a, b| document_order(&a.root, &b.root));
        repeats.into_iter().map(render).collect()
    }
}
