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
use std::collections::{BTreeMap, HashMap};

/// One step of a resolved location in the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    Key(String),
    Index(usize),
}

impl Step {
    /// As a path segment: the key, or the index as text.
    fn text(&self) -> String {
        match self {
            Step::Key(key) => key.clone(),
            Step::Index(i) => i.to_string(),
        }
    }
}

/// What the patch left at one location of the document. The locations form a trie over
/// the document's paths, so that an operation visits only those on its own path (and an
/// insertion moves one array's slots), however many values earlier operations spliced in
/// elsewhere. Nothing is below a lazy node but what it holds.
#[derive(Debug, Clone, Default)]
struct Node {
    /// The bytes sent, while Go still holds this value as a lazy node.
    lazy: Option<String>,
    /// The repeats whose lazy node is rooted here, in the order met: each by its container
    /// below this node and its key.
    repeats: Vec<(Vec<Step>, String)>,
    /// Children, as indices into [`Splices::nodes`].
    keys: BTreeMap<String, usize>,
    items: Vec<Option<usize>>,
}

impl Node {
    fn is_empty(&self) -> bool {
        self.lazy.is_none() && self.repeats.is_empty() && self.keys.is_empty() && self.items.is_empty()
    }

    fn child(&self, step: &Step) -> Option<usize> {
        match step {
            Step::Key(key) => self.keys.get(key).copied(),
            Step::Index(i) => self.items.get(*i).copied().flatten(),
        }
    }

    fn set_child(&mut self, step: &Step, id: Option<usize>) {
        match (step, id) {
            (Step::Key(key), Some(id)) => {
                self.keys.insert(key.clone(), id);
            }
            (Step::Key(key), None) => {
                self.keys.remove(key);
            }
            (Step::Index(i), id) => {
                if self.items.len() <= *i {
                    self.items.resize(i + 1, None);
                }
                self.items[*i] = id;
            }
        }
    }
}

/// The repeats and raw values spliced into the document so far.
///
/// The trie's nodes live in one arena (the root first), so that no walk over it recurses:
/// moves can nest a value thousands deep. A node cut off from the trie stays in the arena
/// until the patch is done.
pub(super) struct Splices {
    nodes: Vec<Node>,
}

impl Default for Splices {
    fn default() -> Self {
        Splices { nodes: vec![Node::default()] }
    }
}

/// The members of a JSON object (the last of repeated ones, as a Go map keeps) or the items
/// of an array, each as its text; nothing for a scalar.
fn children(raw: &str) -> Vec<(Step, String)> {
    if raw.starts_with('{') {
        let Ok(super::go_decode::Members(members)) = serde_json::from_str(raw) else { return Vec::new() };
        // Each at its last place: where a Go map's assignment leaves it.
        let last: HashMap<&str, usize> = members.iter().enumerate().map(|(i, (key, _))| (key.as_str(), i)).collect();
        members
            .iter()
            .enumerate()
            .filter(|(i, (key, _))| last.get(key.as_str()) == Some(i))
            .map(|(_, (key, value))| (Step::Key(key.clone()), value.get().to_string()))
            .collect()
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
    const ROOT: usize = 0;

    fn child_or_new(&mut self, id: usize, step: &Step) -> usize {
        if let Some(child) = self.nodes[id].child(step) {
            return child;
        }
        self.nodes.push(Node::default());
        let child = self.nodes.len() - 1;
        self.nodes[id].set_child(step, Some(child));
        child
    }

    fn at(&self, at: &[Step]) -> Option<usize> {
        at.iter().try_fold(Self::ROOT, |id, step| self.nodes[id].child(step))
    }

    /// Go parses the lazy node `id`, on the way to `rest` below it: its members become lazy
    /// nodes of their own, repeats in the containers on the way are gone, and the others
    /// are rooted one step down (where the walk may parse them again).
    fn parse_towards(&mut self, id: usize, rest: &[Step]) {
        if let Some(raw) = self.nodes[id].lazy.take() {
            for (step, raw) in children(&raw) {
                let child = self.child_or_new(id, &step);
                self.nodes[child].lazy = Some(raw);
            }
        }
        for (container, key) in std::mem::take(&mut self.nodes[id].repeats) {
            let Some((first, below)) = container.split_first().filter(|_| !rest.starts_with(&container)) else {
                continue;
            };
            let child = self.child_or_new(id, first);
            self.nodes[child].repeats.push((below.to_vec(), key));
        }
    }

    /// Go parses every container on the way to `at`: repeats in those are gone, and those
    /// below are in lazy nodes of their own now.
    fn went_to(&mut self, at: &[Step]) {
        let parent = &at[..at.len().saturating_sub(1)];
        let mut id = Self::ROOT;
        for (depth, step) in parent.iter().enumerate() {
            self.parse_towards(id, &parent[depth..]);
            let Some(next) = self.nodes[id].child(step) else { return };
            id = next;
        }
        self.parse_towards(id, &[]);
    }

    /// What was at `at` is gone, or parsed whole.
    fn replaced(&mut self, at: &[Step]) {
        let Some((last, parent)) = at.split_last() else {
            self.nodes[Self::ROOT] = Node::default();
            return;
        };
        if let Some(id) = self.at(parent) {
            self.nodes[id].set_child(last, None);
        }
    }

    /// An item inserted at `at` in an array (`inserted`), or removed from there, moves the
    /// repeats in the items after it.
    fn shift(&mut self, at: &[Step], inserted: bool) {
        let Some((Step::Index(i), array)) = at.split_last() else { return };
        let Some(id) = self.at(array) else { return };
        let items = &mut self.nodes[id].items;
        if *i < items.len() {
            match inserted {
                true => items.insert(*i, None),
                false => {
                    items.remove(*i);
                }
            }
        }
    }

    /// A copy of the nodes from `id` down, in the arena; its root's index.
    fn copied(&mut self, id: usize) -> usize {
        let mut pending = vec![(id, None::<(usize, Step)>)];
        let mut top = id;
        while let Some((from, parent)) = pending.pop() {
            let node = &self.nodes[from];
            let copy = Node { lazy: node.lazy.clone(), repeats: node.repeats.clone(), ..Node::default() };
            let children: Vec<(Step, usize)> = node
                .keys
                .iter()
                .map(|(key, child)| (Step::Key(key.clone()), *child))
                .chain(node.items.iter().enumerate().filter_map(|(i, child)| Some((Step::Index(i), (*child)?))))
                .collect();
            self.nodes.push(copy);
            let new = self.nodes.len() - 1;
            match parent {
                Some((parent, step)) => self.nodes[parent].set_child(&step, Some(new)),
                None => top = new,
            }
            pending.extend(children.into_iter().map(|(step, child)| (child, Some((new, step)))));
        }
        top
    }

    /// Puts the node `spliced` (what a value written or carried holds) at `at` (`inserted`
    /// into an array, else in place of what was there).
    fn put(&mut self, at: &[Step], inserted: bool, spliced: Option<usize>) {
        self.went_to(at);
        if inserted {
            self.shift(at, true);
        } else {
            self.replaced(at);
        }
        let Some(spliced) = spliced.filter(|id| !self.nodes[*id].is_empty()) else { return };
        let Some((last, parent)) = at.split_last() else {
            self.nodes.swap(Self::ROOT, spliced);
            return;
        };
        let id = parent.iter().fold(Self::ROOT, |id, step| self.child_or_new(id, step));
        self.nodes[id].set_child(last, Some(spliced));
    }

    /// `add` (`inserted` into an array) or `replace` of `value` at `at`.
    pub(super) fn written(&mut self, at: &[Step], value: Option<&RawValue>, inserted: bool) {
        let spliced = value.map(|value| {
            let repeats = duplicate_paths(value.get().as_bytes()).iter().filter_map(|p| steps_of(p)).collect();
            self.nodes.push(Node { lazy: Some(compact(value.get())), repeats, ..Node::default() });
            self.nodes.len() - 1
        });
        self.put(at, inserted, spliced);
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
        let mut spliced = self.at(from);
        if moved {
            self.replaced(from);
            self.shift(from, false);
        } else {
            spliced = spliced.map(|id| self.copied(id));
        }
        self.put(to, inserted, spliced);
    }

    /// Calls `each` with every node in the trie and its location, in document order (its
    /// own repeats, then its keys sorted, then its items by index): preorder, with a stack
    /// of its own.
    fn each_in_document_order<'a>(&'a self, mut each: impl FnMut(&[Step], &'a Node)) {
        let mut at: Vec<Step> = Vec::new();
        let mut pending = vec![(0, None, Self::ROOT)];
        while let Some((depth, step, id)) = pending.pop() {
            at.truncate(depth);
            at.extend(step);
            let node = &self.nodes[id];
            each(&at, node);
            let items = node.items.iter().enumerate().rev().filter_map(|(i, child)| Some((Step::Index(i), (*child)?)));
            let keys = node.keys.iter().rev().map(|(key, child)| (Step::Key(key.clone()), *child));
            pending.extend(items.chain(keys).map(|(step, child)| (at.len(), Some(step), child)));
        }
    }

    /// The values still held as sent, by where they are (keys, and item indices as
    /// text), for [`super::patched_json`] to write as they are.
    pub(super) fn raw_values(&self) -> Vec<(Vec<String>, String)> {
        let mut out = Vec::new();
        self.each_in_document_order(|at, node| {
            if let Some(raw) = &node.lazy {
                out.push((at.iter().map(Step::text).collect(), raw.clone()));
            }
        });
        out
    }

    /// The strict errors kube's decoding of the patched object reports for them.
    pub(super) fn errors(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.each_in_document_order(|at, node| {
            for (container, key) in &node.repeats {
                let mut path = String::new();
                for step in at.iter().chain(container) {
                    path = match step {
                        Step::Key(k) => join(&path, k),
                        Step::Index(i) => format!("{path}[{i}]"),
                    };
                }
                out.push(duplicate_field(&join(&path, key)));
            }
        });
        out
    }
}
