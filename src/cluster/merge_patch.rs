//! JSON merge patches (RFC 7386) built from documents, the one place the tools build them:
//! the two-way patch from one document to another (the re-apply of an edit after a 409)
//! and kubectl's three-way patch (`kubectl crd apply`). Pure functions of the documents.

use serde_json::{Map, Value};

/// The JSON merge patch (RFC 7386) that turns `from` into `to`.
pub fn merge_diff(from: &Value, to: &Value) -> Value {
    diff(from, to, true).unwrap_or_else(|| if to.is_object() { Value::Object(Map::new()) } else { to.clone() })
}

/// The changes from `from` to `to` (maps compared key by key, anything else replaced
/// whole, as JSON merge patch does); `None` when there are none. With `removals`, a field
/// `from` has and `to` lacks becomes `null`; without, it is left alone.
fn diff(from: &Value, to: &Value, removals: bool) -> Option<Value> {
    match (from, to) {
        (Value::Object(a), Value::Object(b)) => {
            let mut patch = Map::new();
            if removals {
                for k in a.keys().filter(|k| !b.contains_key(*k)) {
                    patch.insert(k.clone(), Value::Null);
                }
            }
            for (k, vb) in b {
                match a.get(k) {
                    Some(va) => {
                        if let Some(p) = diff(va, vb, removals) {
                            patch.insert(k.clone(), p);
                        }
                    }
                    None => {
                        patch.insert(k.clone(), vb.clone());
                    }
                }
            }
            (!patch.is_empty()).then_some(Value::Object(patch))
        }
        (a, b) if a == b => None,
        (_, b) => Some(b.clone()),
    }
}

/// kubectl's three-way JSON merge patch: the changes from `current` to `modified`, plus
/// `null` for every field the last applied configuration (`original`) had and `modified`
/// no longer has. `None` when there is nothing to change.
pub fn three_way_merge_patch(original: Option<&Value>, modified: &Value, current: &Value) -> Option<Value> {
    let deletions = original.and_then(|o| deletions(o, modified));
    let changes = changes(current, modified);
    match (deletions, changes) {
        (None, None) => None,
        (Some(d), None) => Some(d),
        (None, Some(c)) => Some(c),
        (Some(mut d), Some(c)) => {
            union(&mut d, c);
            Some(d)
        }
    }
}

/// Fields of `modified` that differ from `current`; what `current` has and `modified`
/// lacks is left alone.
fn changes(current: &Value, modified: &Value) -> Option<Value> {
    diff(current, modified, false)
}

/// `null` for each field of `original` missing from `modified`.
fn deletions(original: &Value, modified: &Value) -> Option<Value> {
    let (Value::Object(o), Value::Object(m)) = (original, modified) else { return None };
    let mut out = Map::new();
    for (k, ov) in o {
        match m.get(k) {
            None => {
                out.insert(k.clone(), Value::Null);
            }
            Some(mv) => {
                if let Some(d) = deletions(ov, mv) {
                    out.insert(k.clone(), d);
                }
            }
        }
    }
    (!out.is_empty()).then_some(Value::Object(out))
}

/// Deep union of two patches; `b` wins where both set a value.
fn union(a: &mut Value, b: Value) {
    match (a, b) {
        (Value::Object(am), Value::Object(bm)) => {
            for (k, bv) in bm {
                match am.get_mut(k.as_str()) {
                    Some(av) if av.is_object() && bv.is_object() => union(av, bv),
                    _ => {
                        am.insert(k, bv);
                    }
                }
            }
        }
        (a, b) => *a = b,
    }
}
