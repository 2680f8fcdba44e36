//! Sets of field paths — what one manager owns — and their `fieldsV1` encoding.
//!
//! A set is a tree: at each level, the elements that are members and the children that
//! lead to deeper members. `fieldsV1` writes it as nested objects keyed by encoded
//! elements, with `".": {}` marking a node that is itself a member and has members below.
//! The operations are structured-merge-diff's: union, intersection, difference (a path
//! minus its children keeps the path), recursive difference (a path takes its subtree
//! with it).

use super::path::{Path, PathElement};
use super::schema::Schema;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// A set of field paths. Children are never empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Set {
    members: BTreeSet<PathElement>,
    children: BTreeMap<PathElement, Set>,
}

impl Set {
    /// The empty set.
    pub fn new() -> Set {
        Set::default()
    }

    /// A set holding the given paths.
    pub fn of(paths: &[Path]) -> Set {
        let mut s = Set::new();
        for p in paths {
            s.insert(p);
        }
        s
    }

    /// Adds one path (its parents do not become members).
    pub fn insert(&mut self, path: &[PathElement]) {
        match path {
            [] => {}
            [last] => {
                self.members.insert(last.clone());
            }
            [first, rest @ ..] => self.children.entry(first.clone()).or_default().insert(rest),
        }
    }

    /// Whether `path` is a member.
    pub fn has(&self, path: &[PathElement]) -> bool {
        match path {
            [] => false,
            [last] => self.members.contains(last),
            [first, rest @ ..] => self.children.get(first).is_some_and(|c| c.has(rest)),
        }
    }

    /// Whether `pe` is a member at this level.
    pub fn has_member(&self, pe: &PathElement) -> bool {
        self.members.contains(pe)
    }

    /// Whether the set has no member at any depth.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.values().all(Set::is_empty)
    }

    /// The paths under `pe`, without the prefix (`None` when there are none).
    pub fn child(&self, pe: &PathElement) -> Option<&Set> {
        self.children.get(pe).filter(|c| !c.is_empty())
    }

    fn with_child(mut self, pe: &PathElement, child: Set) -> Set {
        if !child.is_empty() {
            self.children.insert(pe.clone(), child);
        }
        self
    }

    /// The paths in either set.
    pub fn union(&self, other: &Set) -> Set {
        let mut out = Set { members: self.members.union(&other.members).cloned().collect(), children: BTreeMap::new() };
        for (pe, c) in &self.children {
            let merged = match other.children.get(pe) {
                Some(o) => c.union(o),
                None => c.clone(),
            };
            out = out.with_child(pe, merged);
        }
        for (pe, o) in &other.children {
            if !self.children.contains_key(pe) {
                out = out.with_child(pe, o.clone());
            }
        }
        out
    }

    /// Adds the paths of `other`, in place: the work is `other`'s size, not this set's.
    pub fn union_with(&mut self, other: &Set) {
        self.members.extend(other.members.iter().cloned());
        for (pe, o) in &other.children {
            match self.children.get_mut(pe) {
                Some(c) => c.union_with(o),
                None if !o.is_empty() => {
                    self.children.insert(pe.clone(), o.clone());
                }
                None => {}
            }
        }
    }

    /// Removes the paths of `other`, in place ([`Set::difference`] without the copy).
    pub fn subtract(&mut self, other: &Set) {
        for pe in &other.members {
            self.members.remove(pe);
        }
        for (pe, o) in &other.children {
            if let Some(c) = self.children.get_mut(pe) {
                c.subtract(o);
                if c.is_empty() {
                    self.children.remove(pe);
                }
            }
        }
    }

    /// The paths in both sets.
    pub fn intersection(&self, other: &Set) -> Set {
        let mut out =
            Set { members: self.members.intersection(&other.members).cloned().collect(), children: BTreeMap::new() };
        for (pe, c) in &self.children {
            if let Some(o) = other.children.get(pe) {
                out = out.with_child(pe, c.intersection(o));
            }
        }
        out
    }

    /// The paths of `self` not in `other`; children of `other`'s members stay.
    pub fn difference(&self, other: &Set) -> Set {
        let mut out =
            Set { members: self.members.difference(&other.members).cloned().collect(), children: BTreeMap::new() };
        for (pe, c) in &self.children {
            let rest = match other.children.get(pe) {
                Some(o) => c.difference(o),
                None => c.clone(),
            };
            out = out.with_child(pe, rest);
        }
        out
    }

    /// The paths of `self` neither in `other` nor under one of `other`'s members.
    pub fn recursive_difference(&self, other: &Set) -> Set {
        let mut out =
            Set { members: self.members.difference(&other.members).cloned().collect(), children: BTreeMap::new() };
        for (pe, c) in &self.children {
            if other.members.contains(pe) {
                continue;
            }
            let rest = match other.children.get(pe) {
                Some(o) => c.recursive_difference(o),
                None => c.clone(),
            };
            out = out.with_child(pe, rest);
        }
        out
    }

    /// [`Set::recursive_difference`] in place: the work is `other`'s size, not this set's.
    pub fn remove_recursively(&mut self, other: &Set) {
        for pe in &other.members {
            self.members.remove(pe);
            self.children.remove(pe);
        }
        for (pe, o) in &other.children {
            if let Some(c) = self.children.get_mut(pe) {
                c.remove_recursively(o);
                if c.is_empty() {
                    self.children.remove(pe);
                }
            }
        }
    }

    /// The paths of `self` at or under a member of `roots` (the inverse of
    /// [`Set::recursive_difference`]).
    pub fn keep_under(&self, roots: &Set) -> Set {
        let mut out = Set {
            members: self.members.iter().filter(|pe| roots.members.contains(pe)).cloned().collect(),
            children: BTreeMap::new(),
        };
        for (pe, c) in &self.children {
            if roots.members.contains(pe) {
                out = out.with_child(pe, c.clone());
            } else if let Some(r) = roots.children.get(pe) {
                out = out.with_child(pe, c.keep_under(r));
            }
        }
        out
    }

    /// Every member path, members of a level before its children (preorder).
    pub fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        self.collect(&mut Vec::new(), &mut out);
        out
    }

    fn collect(&self, prefix: &mut Path, out: &mut Vec<Path>) {
        for pe in &self.members {
            let mut p = prefix.clone();
            p.push(pe.clone());
            out.push(p);
        }
        for (pe, c) in &self.children {
            prefix.push(pe.clone());
            c.collect(prefix, out);
            prefix.pop();
        }
    }

    /// The set plus every named struct field that leads to a member: structured-merge-diff's
    /// `EnsureNamedFieldsAreMembers`, which makes pruning treat a struct field as owned
    /// when something inside it is.
    pub fn ensure_named_fields_are_members(&self, schema: &Schema) -> Set {
        let mut out = Set { members: self.members.clone(), children: BTreeMap::new() };
        for (pe, c) in &self.children {
            if let (Schema::Map(m), PathElement::Field(name)) = (schema, pe)
                && m.is_named(name)
            {
                out.members.insert(pe.clone());
            }
            out = out.with_child(pe, c.ensure_named_fields_are_members(schema.child(pe)));
        }
        out
    }

    /// The `fieldsV1` form.
    pub fn to_fields_v1(&self) -> Value {
        Value::Object(self.fields_v1_map(false))
    }

    fn fields_v1_map(&self, include_self: bool) -> Map<String, Value> {
        let mut out = Map::new();
        if include_self && !self.is_empty() {
            out.insert(".".into(), Value::Object(Map::new()));
        }
        let keys: BTreeSet<&PathElement> = self.members.iter().chain(self.children.keys()).collect();
        for pe in keys {
            let inner = match self.child(pe) {
                Some(c) => c.fields_v1_map(self.members.contains(pe)),
                None => Map::new(),
            };
            out.insert(pe.encode(), Value::Object(inner));
        }
        out
    }

    /// Reads `fieldsV1`. Keys with a prefix this version does not know are skipped, as
    /// kube does; anything that is not an object of objects is an error.
    pub fn from_fields_v1(v: &Value) -> Result<Set, String> {
        let Value::Object(map) = v else { return Err(format!("expected an object, got {v}")) };
        let (set, _) = read_node(map)?;
        Ok(set.unwrap_or_default())
    }
}

/// One node: its children (if any) and whether it is a member itself.
fn read_node(map: &Map<String, Value>) -> Result<(Option<Set>, bool), String> {
    let mut children: Option<Set> = None;
    let mut is_member = false;
    for (key, value) in map {
        if key == "." {
            is_member = true;
            continue;
        }
        let Some(pe) = PathElement::decode(key)? else { continue };
        let Value::Object(inner) = value else { return Err(format!("expected an object at {key:?}, got {value}")) };
        let (grandchildren, child_is_member) = read_node(inner)?;
        let set = children.get_or_insert_with(Set::new);
        if child_is_member {
            set.members.insert(pe.clone());
        }
        if let Some(g) = grandchildren.filter(|g| !g.is_empty()) {
            set.children.insert(pe, g);
        }
    }
    if children.is_none() {
        is_member = true;
    }
    Ok((children, is_member))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn f(name: &str) -> PathElement {
        PathElement::Field(name.into())
    }

    fn set(paths: &[&[&str]]) -> Set {
        let paths: Vec<Path> = paths.iter().map(|p| p.iter().map(|n| f(n)).collect()).collect();
        Set::of(&paths)
    }

    #[test]
    fn fields_v1_round_trips_with_dot_markers() {
        let doc = json!({
            "f:metadata": {"f:labels": {".": {}, "f:app": {}}, "f:finalizers": {".": {}, "v:\"x\"": {}}},
            "f:spec": {".": {}, "f:size": {}, "f:ports": {"k:{\"port\":80}": {".": {}, "f:port": {}}}}
        });
        let s = Set::from_fields_v1(&doc).expect("decodes");
        assert!(s.has(&[f("metadata"), f("labels")]));
        assert!(!s.has(&[f("metadata")]));
        assert!(s.has(&[f("spec"), f("ports"), PathElement::Key(vec![("port".into(), json!(80))])]));
        assert!(!s.has(&[f("spec"), f("ports")]));
        assert_eq!(s.to_fields_v1(), doc);
        assert_eq!(Set::from_fields_v1(&json!({})).expect("empty"), Set::new());
        assert!(Set::from_fields_v1(&json!({"f:a": 1})).is_err());
        assert!(Set::from_fields_v1(&json!("x")).is_err());
        assert_eq!(Set::from_fields_v1(&json!({"z:future": {}, "f:a": {}})).expect("skips"), set(&[&["a"]]));
    }

    #[test]
    fn set_algebra_follows_structured_merge_diff() {
        let a = set(&[&["spec", "a"], &["spec", "b"], &["spec"]]);
        let b = set(&[&["spec", "b"], &["status"]]);
        assert_eq!(a.union(&b), set(&[&["spec", "a"], &["spec", "b"], &["spec"], &["status"]]));
        assert_eq!(a.intersection(&b), set(&[&["spec", "b"]]));
        assert_eq!(a.difference(&b), set(&[&["spec", "a"], &["spec"]]));
        // A parent minus its child keeps the parent; a child minus its parent stays too.
        assert_eq!(set(&[&["spec", "a"]]).difference(&set(&[&["spec"]])), set(&[&["spec", "a"]]));
        // The recursive difference takes the whole subtree of a member away.
        assert_eq!(a.recursive_difference(&set(&[&["spec"]])), Set::new());
        assert_eq!(a.keep_under(&set(&[&["spec", "b"]])), set(&[&["spec", "b"]]));
        assert!(a.difference(&a).is_empty());
        assert_eq!(a.paths().len(), 3);
    }

    #[test]
    fn in_place_union_and_differences_match_their_copying_forms() {
        let sets = [
            Set::new(),
            set(&[&["spec", "a"], &["spec", "b"], &["spec"]]),
            set(&[&["spec", "b"], &["status"]]),
            set(&[&["spec"]]),
            set(&[&["spec", "a", "x"], &["metadata", "labels", "app"], &["status", "phase"]]),
            set(&[&["metadata", "labels", "app"], &["metadata", "labels"]]),
        ];
        for a in &sets {
            for b in &sets {
                let mut united = a.clone();
                united.union_with(b);
                assert_eq!(united, a.union(b), "{a:?} with {b:?}");
                let mut rest = a.clone();
                rest.subtract(b);
                assert_eq!(rest, a.difference(b), "{a:?} without {b:?}");
                // Children are never empty: the emptied ones are gone, not left behind.
                assert_eq!(rest.is_empty(), rest == Set::new(), "{a:?} without {b:?}");
                let mut pruned = a.clone();
                pruned.remove_recursively(b);
                assert_eq!(pruned, a.recursive_difference(b), "{a:?} without {b:?}'s subtrees");
                assert_eq!(pruned.is_empty(), pruned == Set::new(), "{a:?} without {b:?}'s subtrees");
            }
        }
    }
}
