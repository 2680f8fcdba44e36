//! The typed walks over objects that field management needs, after structured-merge-diff's
//! `typed` package: compare two objects (which fields were added, modified, removed),
//! merge an applied configuration into an object, list the fields a value sets, remove a
//! set of fields, and validate an applied configuration against its schema.
//!
//! Granular maps and `set`/`map` lists are walked item by item; atomic maps and lists,
//! and scalars, are leaves compared as a whole. A value whose shape does not match its
//! schema is walked by its own shape (kube would have refused it earlier).

use super::path::{Path, PathElement, path_string, values_equal};
use super::schema::{DEDUCED_LIST, DEDUCED_MAP, ListKind, ListSchema, MapSchema, ScalarType, Schema};
use super::set::Set;
use crate::field::go_type;
use crate::schema::gofmt;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// What changed between two objects: `added` and `removed` hold new and gone fields
/// (granular maps and lists included, as their own paths), `modified` leaves whose value
/// changed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Comparison {
    pub added: Set,
    pub modified: Set,
    pub removed: Set,
}

impl Comparison {
    #[cfg(test)]
    /// Whether nothing changed.
    pub fn is_same(&self) -> bool {
        self.added.is_empty() && self.modified.is_empty() && self.removed.is_empty()
    }

    /// The comparison with `f` applied to each of its sets.
    pub fn map_sets(&self, f: impl Fn(&Set) -> Set) -> Comparison {
        Comparison { added: f(&self.added), modified: f(&self.modified), removed: f(&self.removed) }
    }
}

/// How a value is walked.
#[derive(Clone, Copy)]
enum Atom<'s> {
    Scalar,
    List(&'s ListSchema),
    Map(&'s MapSchema),
}

impl Atom<'_> {
    fn same(&self, other: &Atom<'_>) -> bool {
        match (self, other) {
            (Atom::Scalar, Atom::Scalar) => true,
            (Atom::List(a), Atom::List(b)) => std::ptr::eq(*a, *b),
            (Atom::Map(a), Atom::Map(b)) => std::ptr::eq(*a, *b),
            _ => false,
        }
    }
}

/// The atom of a (non-null) value: the schema's when the value fits it, else its shape's.
fn atom_of<'s>(schema: &'s Schema, v: &Value) -> Option<Atom<'s>> {
    Some(match (schema, v) {
        (_, Value::Null) => return None,
        (Schema::Map(m), Value::Object(_)) => Atom::Map(m),
        (Schema::List(l), Value::Array(_)) => Atom::List(l),
        (_, Value::Object(_)) => Atom::Map(&DEDUCED_MAP),
        (_, Value::Array(_)) => Atom::List(&DEDUCED_LIST),
        _ => Atom::Scalar,
    })
}

/// The atom a schema gives a value of unknown shape (null, or absent).
fn schema_atom(schema: &Schema) -> Atom<'_> {
    match schema {
        Schema::Map(m) => Atom::Map(m),
        Schema::List(l) => Atom::List(l),
        Schema::Scalar(_) => Atom::Scalar,
        Schema::Deduced => Atom::Map(&DEDUCED_MAP),
    }
}

/// The path element of a list item, or why it has none.
pub fn item_element(list: &ListSchema, index: usize, item: &Value) -> Result<PathElement, String> {
    match &list.kind {
        ListKind::Atomic => Ok(PathElement::Index(index)),
        ListKind::Set => match item {
            Value::Object(_) => Err("associative list without keys has an element that's a map type".into()),
            Value::Array(_) => Err("not supported: associative list with lists as elements".into()),
            Value::Null => Err("associative list without keys has an element that's an explicit null".into()),
            v => Ok(PathElement::Value(v.clone())),
        },
        ListKind::Map { keys, defaults } => {
            let Value::Object(m) = item else {
                return Err(if item.is_null() {
                    "associative list with keys may not have a null element".into()
                } else {
                    "associative list with keys may not have non-map elements".into()
                });
            };
            let mut fields = Vec::with_capacity(keys.len());
            for k in keys {
                match m.get(k).or_else(|| defaults.get(k)) {
                    Some(v) => fields.push((k.clone(), v.clone())),
                    None => {
                        return Err(format!(
                            "associative list with keys has an element that omits key field {k:?} (and doesn't have default value)"
                        ));
                    }
                }
            }
            fields.sort_by(|a, b| a.0.cmp(&b.0));
            Ok(PathElement::Key(fields))
        }
    }
}

/// The items of a list by path element, in order; `Err` for an item that has no element,
/// and for a repeated one unless `allow_duplicates` (a live object's list, which kube's
/// merge takes with repeated keys and merges without their items: `None`).
type Indexed<'v> = (Vec<PathElement>, BTreeMap<PathElement, Option<&'v Value>>);

fn index_items<'v>(list: &ListSchema, items: &'v [Value], allow_duplicates: bool) -> Result<Indexed<'v>, String> {
    let mut order = Vec::with_capacity(items.len());
    let mut seen = BTreeMap::new();
    for (i, item) in items.iter().enumerate() {
        let pe = item_element(list, i, item).map_err(|e| format!("element {i}: {e}"))?;
        if seen.contains_key(&pe) {
            if !allow_duplicates {
                return Err(format!("duplicate entries for key {pe}"));
            }
            seen.insert(pe.clone(), None);
        } else {
            seen.insert(pe.clone(), Some(item));
        }
        order.push(pe);
    }
    Ok((order, seen))
}

/// The items of a list grouped by path element (several under a repeated key); `Err` for
/// an item that has no element.
fn group_items<'v>(list: &ListSchema, items: &'v [Value]) -> Result<BTreeMap<PathElement, Vec<&'v Value>>, String> {
    let mut groups: BTreeMap<PathElement, Vec<&Value>> = BTreeMap::new();
    for (i, item) in items.iter().enumerate() {
        let pe = item_element(list, i, item).map_err(|e| format!("element {i}: {e}"))?;
        groups.entry(pe).or_default().push(item);
    }
    Ok(groups)
}

/// The merging walk; with `comparison` set it records what changed instead (that is how
/// structured-merge-diff compares: a merge whose leaves note differences) and builds no
/// merged value, which a comparison would only drop.
struct Merger<'c> {
    path: Path,
    comparison: Option<&'c mut Comparison>,
}

impl Merger<'_> {
    fn record(&mut self, f: impl FnOnce(&mut Comparison) -> &mut Set) {
        if let Some(c) = self.comparison.as_deref_mut() {
            f(c).insert(&self.path);
        }
    }

    /// Whether `key`, under the map being walked, is `metadata.managedFields`: kube takes
    /// the bookkeeping out of both objects before it compares or merges them; skipped here,
    /// it needs no copy of a stored object without it (a CRD's mirrors its whole spec).
    fn is_bookkeeping(&self, key: &str) -> bool {
        key == "managedFields" && matches!(self.path.as_slice(), [PathElement::Field(f)] if f == "metadata")
    }

    fn merge(&mut self, schema: &Schema, lhs: Option<&Value>, rhs: Option<&Value>) -> Option<Value> {
        let al = lhs.and_then(|v| atom_of(schema, v));
        let ar = rhs.and_then(|v| atom_of(schema, v));
        let fallback = al.or(ar).unwrap_or_else(|| schema_atom(schema));
        let (al, ar) = (al.unwrap_or(fallback), ar.unwrap_or(fallback));
        let mut in_leaf = false;
        let out = if rhs.is_none() {
            self.handle(al, lhs, rhs, &mut in_leaf)
        } else if lhs.is_none() || al.same(&ar) {
            self.handle(ar, lhs, rhs, &mut in_leaf)
        } else {
            // A value changing shape: walked once as each shape, keeping the new one.
            let mut other_leaf = false;
            self.handle(al, lhs, rhs, &mut other_leaf);
            self.handle(ar, lhs, rhs, &mut in_leaf)
        };
        if !in_leaf {
            if lhs.is_none() {
                self.record(|c| &mut c.added);
            } else if rhs.is_none() {
                self.record(|c| &mut c.removed);
            }
        }
        out
    }

    fn leaf(&mut self, lhs: Option<&Value>, rhs: Option<&Value>, in_leaf: &mut bool) -> Option<Value> {
        *in_leaf = true;
        match (lhs, rhs) {
            (None, _) => self.record(|c| &mut c.added),
            (_, None) => self.record(|c| &mut c.removed),
            (Some(l), Some(r)) if !values_equal(l, r) => self.record(|c| &mut c.modified),
            _ => {}
        }
        if self.comparison.is_some() {
            // Comparing: no merged value to build.
            return None;
        }
        rhs.or(lhs).cloned()
    }

    fn handle(
        &mut self,
        atom: Atom<'_>,
        lhs: Option<&Value>,
        rhs: Option<&Value>,
        in_leaf: &mut bool,
    ) -> Option<Value> {
        match atom {
            Atom::Scalar => self.leaf(lhs, rhs, in_leaf),
            Atom::List(list) => {
                let (l, r) = (lhs.and_then(Value::as_array), rhs.and_then(Value::as_array));
                let empty = |v: Option<&Vec<Value>>| v.is_none_or(|a| a.is_empty());
                if list.kind == ListKind::Atomic || (empty(l) && empty(r)) {
                    return self.leaf(lhs, rhs, in_leaf);
                }
                if self.comparison.is_some() {
                    return match self.compare_items(list, l.map(Vec::as_slice), r.map(Vec::as_slice)) {
                        Ok(()) => None,
                        Err(_) => self.leaf(lhs, rhs, in_leaf),
                    };
                }
                match self.list_items(list, l.map(Vec::as_slice), r.map(Vec::as_slice)) {
                    Ok(out) => out,
                    // Items kube could not key (duplicates, missing keys): the list is
                    // handled as one value.
                    Err(_) => self.leaf(lhs, rhs, in_leaf),
                }
            }
            Atom::Map(map) => {
                let (l, r) = (lhs.and_then(Value::as_object), rhs.and_then(Value::as_object));
                let empty = |v: Option<&Map<String, Value>>| v.is_none_or(|m| m.is_empty());
                if map.atomic || (empty(l) && empty(r)) {
                    return self.leaf(lhs, rhs, in_leaf);
                }
                let mut out = Map::new();
                let keys = l.into_iter().flat_map(|m| m.keys()).chain(r.into_iter().flat_map(|m| m.keys()));
                let keys: std::collections::BTreeSet<&String> = keys.collect();
                for key in keys {
                    if self.is_bookkeeping(key) {
                        continue;
                    }
                    self.path.push(PathElement::Field(key.clone()));
                    let merged = self.merge(map.field(key), l.and_then(|m| m.get(key)), r.and_then(|m| m.get(key)));
                    self.path.pop();
                    if let Some(v) = merged {
                        out.insert(key.clone(), v);
                    }
                }
                (!out.is_empty()).then_some(Value::Object(out))
            }
        }
    }

    /// structured-merge-diff's list merge: items are matched by element; the result keeps
    /// the applied order for shared items and slots the others around them.
    fn list_items<'v>(
        &mut self,
        list: &ListSchema,
        lhs: Option<&'v [Value]>,
        rhs: Option<&'v [Value]>,
    ) -> Result<Option<Value>, String> {
        let (lhs, rhs) = (lhs.unwrap_or_default(), rhs.unwrap_or_default());
        let (rhs_order, observed_rhs) = index_items(list, rhs, false)?;
        let (lhs_order, observed_lhs) = index_items(list, lhs, true)?;
        let get =
            |observed: &BTreeMap<PathElement, Option<&'v Value>>, pe: &PathElement| observed.get(pe).copied().flatten();
        let mut shared = rhs_order.iter().filter(|pe| observed_lhs.contains_key(pe));
        let mut next_shared = shared.next();
        let mut merged = std::collections::BTreeSet::new();
        let mut out = Vec::new();
        let (mut li, mut ri) = (0, 0);
        while li < lhs_order.len() || ri < rhs_order.len() {
            if li < lhs_order.len() && ri < rhs_order.len() {
                let pe = &lhs_order[li];
                if *pe == rhs_order[ri] {
                    merged.insert(pe);
                    out.extend(self.item(list, pe, get(&observed_lhs, pe), get(&observed_rhs, pe)));
                    li += 1;
                    ri += 1;
                    next_shared = shared.next();
                    continue;
                }
                if observed_rhs.contains_key(pe) && next_shared.is_some_and(|n| n != pe) {
                    // A shared item, but not the one due in this round.
                    li += 1;
                    continue;
                }
            }
            if li < lhs_order.len() {
                let pe = &lhs_order[li];
                if !observed_rhs.contains_key(pe) {
                    // The item at this index: a repeated key's items are kept each.
                    out.extend(self.item(list, pe, Some(&lhs[li]), None));
                    li += 1;
                    continue;
                } else if merged.contains(pe) {
                    // Merged with the applied item already (a repeated key's others go).
                    li += 1;
                }
            }
            if ri < rhs_order.len() {
                let pe = &rhs_order[ri];
                merged.insert(pe);
                out.extend(self.item(list, pe, get(&observed_lhs, pe), get(&observed_rhs, pe)));
                ri += 1;
                if next_shared == Some(pe) {
                    next_shared = shared.next();
                }
            }
        }
        Ok((!out.is_empty()).then_some(Value::Array(out)))
    }

    /// structured-merge-diff's comparison of a keyed list, item by item. Items sharing a key
    /// (kube types an update's objects allowing them) are one value under that key: the
    /// key is added when it becomes repeated, removed when it stops being (its single item
    /// then compared as new), and modified when its repeated items change.
    fn compare_items(&mut self, list: &ListSchema, lhs: Option<&[Value]>, rhs: Option<&[Value]>) -> Result<(), String> {
        let l = group_items(list, lhs.unwrap_or_default())?;
        let r = group_items(list, rhs.unwrap_or_default())?;
        let elements: std::collections::BTreeSet<&PathElement> = l.keys().chain(r.keys()).collect();
        let none = Vec::new();
        for pe in elements {
            let (ls, rs) = (l.get(pe).unwrap_or(&none), r.get(pe).unwrap_or(&none));
            self.path.push(pe.clone());
            match (ls.len(), rs.len()) {
                (0..=1, 0..=1) => {
                    self.merge(&list.items, ls.first().copied(), rs.first().copied());
                }
                (2.., 2..) => {
                    let same = ls.len() == rs.len() && ls.iter().zip(rs).all(|(a, b)| values_equal(a, b));
                    if !same {
                        self.record(|c| &mut c.modified);
                    }
                }
                (2.., _) => {
                    if let Some(r) = rs.first() {
                        self.merge(&list.items, None, Some(r));
                    }
                    self.record(|c| &mut c.removed);
                }
                (_, _) => {
                    if let Some(l) = ls.first() {
                        self.merge(&list.items, Some(l), None);
                    }
                    self.record(|c| &mut c.added);
                }
            }
            self.path.pop();
        }
        Ok(())
    }

    fn item(&mut self, list: &ListSchema, pe: &PathElement, lhs: Option<&Value>, rhs: Option<&Value>) -> Option<Value> {
        self.path.push(pe.clone());
        let out = self.merge(&list.items, lhs, rhs);
        self.path.pop();
        out
    }
}

/// What changed from `lhs` to `rhs`.
pub fn compare(schema: &Schema, lhs: &Value, rhs: &Value) -> Comparison {
    let mut c = Comparison::default();
    Merger { path: Vec::new(), comparison: Some(&mut c) }.merge(schema, Some(lhs), Some(rhs));
    c
}

/// `applied` merged into `live`: applied values win, nothing is removed.
pub fn merge(schema: &Schema, live: &Value, applied: &Value) -> Value {
    Merger { path: Vec::new(), comparison: None }.merge(schema, Some(live), Some(applied)).unwrap_or(Value::Null)
}

/// Every field a value sets: leaves, plus map entries and list items as themselves
/// (struct fields are not members unless they are leaves, null or empty maps).
pub fn field_set(schema: &Schema, value: &Value) -> Set {
    let mut set = Set::new();
    collect_fields(schema, value, &mut Vec::new(), &mut set);
    set
}

fn collect_fields(schema: &Schema, value: &Value, path: &mut Path, set: &mut Set) {
    let atom = atom_of(schema, value).unwrap_or_else(|| schema_atom(schema));
    match atom {
        Atom::Scalar => set.insert(path),
        Atom::List(list) if list.kind == ListKind::Atomic => set.insert(path),
        Atom::List(list) => {
            let items: Vec<(PathElement, &Value)> = (value.as_array().into_iter().flatten().enumerate())
                .filter_map(|(i, item)| Some((item_element(list, i, item).ok()?, item)))
                .collect();
            let mut seen = std::collections::BTreeSet::new();
            let repeated: std::collections::BTreeSet<&PathElement> =
                items.iter().filter(|(pe, _)| !seen.insert(pe)).map(|(pe, _)| pe).collect();
            for (pe, item) in &items {
                path.push(pe.clone());
                // A repeated key is set as itself, without its items' fields.
                if !repeated.contains(pe) {
                    collect_fields(&list.items, item, path, set);
                }
                set.insert(path);
                path.pop();
            }
        }
        Atom::Map(map) if map.atomic => set.insert(path),
        Atom::Map(map) => {
            for (key, v) in value.as_object().into_iter().flatten() {
                path.push(PathElement::Field(key.clone()));
                collect_fields(map.field(key), v, path, set);
                // A null or an empty map sets its field, though it has no leaves.
                let empty = v.is_null() || v.as_object().is_some_and(Map::is_empty);
                if empty || !map.is_named(key) {
                    set.insert(path);
                }
                path.pop();
            }
        }
    }
}

/// `value` without the members of `remove` (each taking its subtree). A granular map or
/// list left with nothing becomes `null`, as structured-merge-diff leaves it.
pub fn remove_items(schema: &Schema, value: &Value, remove: &Set) -> Value {
    let atom = atom_of(schema, value).unwrap_or_else(|| schema_atom(schema));
    match atom {
        Atom::Scalar => value.clone(),
        Atom::List(list) => {
            let items = value.as_array().map(Vec::as_slice).unwrap_or_default();
            if items.is_empty() || list.kind == ListKind::Atomic {
                return value.clone();
            }
            let mut out = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let Ok(pe) = item_element(list, i, item) else {
                    out.push(item.clone());
                    continue;
                };
                if remove.has_member(&pe) {
                    continue;
                }
                out.push(match remove.child(&pe) {
                    Some(sub) => remove_items(&list.items, item, sub),
                    None => item.clone(),
                });
            }
            if out.is_empty() { Value::Null } else { Value::Array(out) }
        }
        Atom::Map(map) => {
            let Some(m) = value.as_object().filter(|m| !m.is_empty() && !map.atomic) else { return value.clone() };
            let mut out = Map::new();
            for (key, v) in m {
                let pe = PathElement::Field(key.clone());
                if remove.has_member(&pe) {
                    continue;
                }
                let kept = match remove.child(&pe) {
                    Some(sub) => remove_items(map.field(key), v, sub),
                    None => v.clone(),
                };
                out.insert(key.clone(), kept);
            }
            if out.is_empty() { Value::Null } else { Value::Object(out) }
        }
    }
}

/// `%v` of structured-merge-diff's `value.Value` wrapper of `v`: `&{x}`, `&{map[a:1]}`.
fn wrapped_v(v: &Value) -> String {
    format!("&{{{}}}", gofmt::plain_v(v))
}

/// The problems structured-merge-diff finds typing an applied configuration, as
/// `path: message` lines: fields the schema does not declare, values of the wrong type,
/// list items without keys or with duplicate keys.
pub fn validate(schema: &Schema, value: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    validate_at(schema, value, false, &mut Vec::new(), &mut errors);
    errors
}

/// [`validate`]'s errors as structured-merge-diff's `ValidationErrors` print: the one
/// error alone, several under `errors:`; `None` when `value` types.
pub fn type_error(schema: &Schema, value: &Value) -> Option<String> {
    match validate(schema, value).as_slice() {
        [] => None,
        [one] => Some(one.clone()),
        many => Some(format!("errors:\n  {}", many.join("\n  "))),
    }
}

/// Whether structured-merge-diff types `value` for an update, as kube's `Update` does with
/// `typed.AllowDuplicates`: list items with the same key are allowed, wrong types and
/// undeclared fields are not.
pub fn types_for_update(schema: &Schema, value: &Value) -> bool {
    let mut errors = Vec::new();
    validate_at(schema, value, true, &mut Vec::new(), &mut errors);
    errors.is_empty()
}

fn validate_at(schema: &Schema, value: &Value, allow_duplicates: bool, path: &mut Path, errors: &mut Vec<String>) {
    if value.is_null() {
        return;
    }
    fn fail(errors: &mut Vec<String>, path: &Path, msg: String) {
        errors.push(format!("{}: {msg}", path_string(path)));
    }
    match schema {
        Schema::Scalar(t) => {
            let ok = match t {
                ScalarType::String => value.is_string(),
                ScalarType::Numeric => value.is_number(),
                ScalarType::Boolean => value.is_boolean(),
                ScalarType::Untyped => !value.is_object() && !value.is_array(),
            };
            if !ok {
                // structured-merge-diff prints each with its own verb: `%T` of the
                // value, `%#v` and `%v` of its `value.Value` wrapper.
                let message = match t {
                    ScalarType::String => {
                        format!("expected string, got &value.valueUnstructured{{Value:{}}}", gofmt::sharp_v(value))
                    }
                    ScalarType::Numeric => format!("expected numeric (int or float), got {}", go_type(value)),
                    ScalarType::Boolean => format!("expected boolean, got {}", wrapped_v(value)),
                    ScalarType::Untyped => format!("expected any scalar, got {}", wrapped_v(value)),
                };
                fail(errors, path, message);
            }
        }
        Schema::List(list) => {
            let Some(items) = value.as_array() else {
                return fail(errors, path, format!("expected list, got {}", wrapped_v(value)));
            };
            let mut seen = std::collections::BTreeSet::new();
            for (i, item) in items.iter().enumerate() {
                let pe = match item_element(list, i, item) {
                    Ok(pe) => pe,
                    Err(e) => {
                        // structured-merge-diff gives up on the rest of the list.
                        return fail(errors, path, format!("element {i}: {e}"));
                    }
                };
                // A repeated item is still walked: its errors are reported once more.
                if !seen.insert(pe.clone()) && !allow_duplicates {
                    fail(errors, path, format!("duplicate entries for key {pe}"));
                }
                path.push(pe);
                validate_at(&list.items, item, allow_duplicates, path, errors);
                path.pop();
            }
        }
        Schema::Map(map) => {
            let Some(m) = value.as_object() else {
                return fail(errors, path, format!("expected map, got {}", wrapped_v(value)));
            };
            for (key, v) in m {
                path.push(PathElement::Field(key.clone()));
                match map.declared(key) {
                    Some(child) => validate_at(child, v, allow_duplicates, path, errors),
                    None => {
                        fail(errors, path, "field not declared in schema".into());
                        path.pop();
                        // Like kube, the first unknown field of a map ends its walk.
                        return;
                    }
                }
                path.pop();
            }
        }
        Schema::Deduced => {
            for (key, v) in value.as_object().into_iter().flatten() {
                path.push(PathElement::Field(key.clone()));
                validate_at(&Schema::Deduced, v, allow_duplicates, path, errors);
                path.pop();
            }
        }
    }
}

#[cfg(test)]
#[path = "walk_tests.rs"]
mod tests;
