//! structured-merge-diff's `Updater`: how one write changes every manager's fields.
//!
//! An update gives the writer what it added or changed and takes from everyone else what
//! it changed (forcibly) or removed. An apply merges the configuration into the live
//! object, prunes what the applier set last time and no longer sets (unless someone
//! else owns it), then does the same bookkeeping, refusing changes to other managers'
//! fields unless forced. Fields a [`Filter`] hides (the status on the main endpoint, the
//! spec on `/status`) are neither owned nor taken.

use super::managers::{ManagerId, VersionedSet};
use super::path::{Path, values_equal};
use super::scale::group;
use super::schema::Schema;
use super::set::Set;
use super::walk::{self, Comparison};
use crate::resources::conversion_webhook::ConversionWebhook;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Every manager's fields.
pub type Managers = BTreeMap<ManagerId, VersionedSet>;

/// The fields a write through one endpoint may own (kube's reset fields).
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Filter {
    #[default]
    Everything,
    /// Everything but these subtrees.
    Except(Set),
    /// Only these subtrees.
    Only(Set),
}

impl Filter {
    /// The part of `set` a write through this endpoint may own.
    pub fn apply(&self, set: &Set) -> Set {
        match self {
            Filter::Everything => set.clone(),
            Filter::Except(hidden) => set.recursive_difference(hidden),
            Filter::Only(kept) => set.keep_under(kept),
        }
    }

    /// [`Filter::apply`] to a set given away: no copy but where `Only` keeps a part.
    pub fn restrict(&self, mut set: Set) -> Set {
        match self {
            Filter::Everything => set,
            Filter::Except(hidden) => {
                set.remove_recursively(hidden);
                set
            }
            Filter::Only(kept) => set.keep_under(kept),
        }
    }
}

/// Fields an apply would take from other managers, by manager, each manager's paths in
/// structured-merge-diff's `Set.Iterate` order (a node's members before its children's).
#[derive(Debug, Clone, PartialEq)]
pub struct Conflicts(pub Vec<(ManagerId, Path)>);

impl Conflicts {
    fn from_sets(sets: &BTreeMap<ManagerId, Set>) -> Conflicts {
        // The map is ordered by manager already; each set lists its paths as kube prints them.
        Conflicts(sets.iter().flat_map(|(id, s)| s.paths().into_iter().map(move |p| (id.clone(), p))).collect())
    }
}

/// Why an apply was not settled.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    Conflicts(Conflicts),
    /// An object did not type at a version some manager's entry is at, or the CRD's
    /// conversion webhook did not convert it there (kube's plain error).
    Unconvertible(String),
}

/// The updater for one kind's schema and one endpoint's filter.
pub struct Updater<'a> {
    pub schema: &'a Schema,
    pub filter: &'a Filter,
    /// The field types of the kind's other versions by `group/version`
    /// ([`FieldManager::other_versions`](super::fieldmanager::FieldManager::other_versions)).
    pub other_versions: &'a [(String, Arc<Schema>)],
    /// The CRD's conversion webhook: what brings an object to another manager's version,
    /// in place of relabelling it.
    pub webhook: Option<&'a ConversionWebhook>,
}

impl Updater<'_> {
    /// Takes from every manager but `writer` the fields the change `old` → `new` removed,
    /// and those it added or modified (refused unless `force`).
    ///
    /// The filter is kube's reset fields, which its strategies key by the request's
    /// version: managers at another version are compared unfiltered (structured-merge-diff
    /// filters only the comparison at the request's version), so a write through v1's main
    /// endpoint that changes `.status` takes it from a v2 status writer.
    fn settle(
        &self,
        old: &Value,
        new: &Value,
        version: &str,
        managers: &mut Managers,
        writer: &ManagerId,
        force: bool,
    ) -> Result<Comparison, Refusal> {
        // kube compares the objects at each manager's version; one of another group (an
        // Event written through both `v1` and `events.k8s.io/v1`) does not convert, and
        // structured-merge-diff drops its manager.
        managers.retain(|id, vs| id == writer || group(&vs.api_version) == group(version));
        let compare = walk::compare(self.schema, old, new);
        if managers.keys().all(|id| id == writer) {
            // Nobody else to take fields from (every create): spare filtering the sets.
            managers.retain(|_, vs| !vs.set.is_empty());
            return Ok(compare);
        }
        let visible = compare.map_sets(|s| self.filter.apply(s));
        // Through a conversion webhook, each other version's fields are those of the
        // objects the webhook makes there.
        let mut converted = BTreeMap::new();
        if self.webhook.is_some() {
            for at in versions_in_group(managers.iter().filter(|(id, _)| *id != writer), version) {
                if at != version {
                    let types = self.types_at(at);
                    let (o, n) = (self.at_version(old, at)?, self.at_version(new, at)?);
                    converted.insert(at.to_string(), walk::compare(types, &o, &n));
                }
            }
        }
        let at_version = |vs: &VersionedSet| match converted.get(&vs.api_version) {
            Some(c) => c,
            None if vs.api_version == version => &visible,
            None => &compare,
        };
        let mut conflicts = BTreeMap::new();
        for (id, vs) in managers.iter() {
            if id == writer {
                continue;
            }
            let seen = at_version(vs);
            let taken = vs.set.intersection(&seen.modified.union(&seen.added));
            if !taken.is_empty() {
                conflicts.insert(id.clone(), taken);
            }
        }
        if !force && !conflicts.is_empty() {
            return Err(Refusal::Conflicts(Conflicts::from_sets(&conflicts)));
        }
        for (id, vs) in managers.iter_mut() {
            if id == writer {
                continue;
            }
            let removed = &at_version(vs).removed;
            if let Some(taken) = conflicts.get(id) {
                vs.set.subtract(taken);
            }
            vs.set.subtract(removed);
        }
        managers.retain(|_, vs| !vs.set.is_empty());
        Ok(compare)
    }

    /// An update (create, update, patch) by `writer` through `version`; `None` when an
    /// object could not be converted to another manager's version (kube's `UpdateNoErrors`
    /// then drops every entry).
    pub fn update(
        &self,
        live: &Value,
        new: &Value,
        version: &str,
        mut managers: Managers,
        writer: &ManagerId,
    ) -> Option<Managers> {
        let compare = match self.settle(live, new, version, &mut managers, writer, true) {
            Ok(c) => c,
            // Forced settling never conflicts.
            Err(Refusal::Conflicts(_)) => return Some(managers),
            Err(Refusal::Unconvertible(_)) => return None,
        };
        let Comparison { added, modified, removed } = compare;
        let set = match managers.remove(writer) {
            Some(previous) => {
                let mut set = previous.set;
                set.subtract(&removed);
                set.union_with(&modified);
                set.union_with(&added);
                set
            }
            // A new writer (every create) owns what it added, taken rather than copied.
            None => {
                let mut set = added;
                set.union_with(&modified);
                set
            }
        };
        let set = self.filter.restrict(set);
        if !set.is_empty() {
            managers.insert(writer.clone(), VersionedSet { set, api_version: version.to_string(), applied: false });
        }
        Some(managers)
    }

    /// An apply of `config` by `applier`: the new object (`None` when nothing changed) and
    /// the managers after it.
    pub fn apply(
        &self,
        live: &Value,
        config: &Value,
        version: &str,
        mut managers: Managers,
        applier: &ManagerId,
        force: bool,
    ) -> Result<(Option<Value>, Managers), Refusal> {
        // structured-merge-diff converts objects to other managers' versions, and a CRD's
        // versions convert by relabelling only, so an object with a field such a version
        // does not declare fails to type there, before any conflict is counted: the live
        // object to every manager's version first (reconciling their sets with the schema;
        // its error bare), the merged object to the applier's last version and every
        // manager's when it prunes, and the new object to every other manager's version.
        for at in versions_in_group(managers.iter(), version) {
            if let Some(e) = self.misfit(at, version, live) {
                return Err(Refusal::Unconvertible(e));
            }
        }
        let merged = walk::merge(self.schema, live, config);
        let last = managers.get(applier).cloned();
        let set = self.filter.restrict(walk::field_set(self.schema, config));
        managers.insert(applier.clone(), VersionedSet { set, api_version: version.to_string(), applied: true });
        // What the applier set through another group's version cannot be converted to
        // this one: structured-merge-diff then prunes nothing.
        let last = last.filter(|l| group(&l.api_version) == group(version));
        let new = match (self.webhook, last.as_ref().filter(|l| !l.set.is_empty())) {
            // Through a webhook the versions differ in more than their label: prune where
            // the applier's last fields are, converting as structured-merge-diff does.
            (Some(_), Some(l)) => {
                let convert = |obj: &Value, at: &str| self.converted(obj, at, version);
                prune_across_versions(self, merged, version, &managers, l, &convert)
                    .map_err(|why| Refusal::Unconvertible(format!("failed to prune fields: {why}")))?
            }
            (_, l) => {
                if let Some(l) = l {
                    self.prunable(&merged, version, &l.api_version, &managers)?;
                }
                self.prune(merged, &managers, last.as_ref())
            }
        };
        for at in versions_in_group(managers.iter().filter(|(id, _)| *id != applier), version) {
            if let Some(e) = self.misfit(at, version, &new) {
                return Err(Refusal::Unconvertible(format!("failed to convert new object: {e}")));
            }
        }
        self.settle(live, &new, version, &mut managers, applier, force)?;
        let changed = !values_equal(live, &new);
        Ok((changed.then_some(new), managers))
    }

    /// Whether the merged object types where structured-merge-diff prunes it: at the
    /// applier's `last` version, then at every other manager's (to add back what they own).
    fn prunable(&self, merged: &Value, version: &str, last: &str, managers: &Managers) -> Result<(), Refusal> {
        let refuse = |why: String| Err(Refusal::Unconvertible(format!("failed to prune fields: {why}")));
        if let Some(e) = self.misfit(last, version, merged) {
            return refuse(format!("failed to convert merged object to last applied version: {e}"));
        }
        for at in versions_in_group(managers.iter(), version).into_iter().filter(|v| *v != last) {
            if let Some(e) = self.misfit(at, version, merged) {
                return refuse(format!(
                    "failed add back owned items: failed to convert merged object at version {at}: {e}"
                ));
            }
        }
        Ok(())
    }

    /// Why `obj` does not type at `at`, another version than the request's `version`
    /// (`None` at the request's version or one the kind does not list).
    fn misfit(&self, at: &str, version: &str, obj: &Value) -> Option<String> {
        if at == version {
            return None;
        }
        let types = self.other_types(at)?;
        match self.at_version(obj, at) {
            Ok(obj) => walk::type_error(types, &obj),
            Err(Refusal::Unconvertible(e)) => Some(e),
            Err(Refusal::Conflicts(_)) => None,
        }
    }

    /// `obj` at the version `at`: as the CRD's conversion webhook makes it, or as it is
    /// (a CRD's versions otherwise convert by relabelling, which typing ignores). An
    /// object of nothing but its type is not sent, as kube's converter sends none.
    fn at_version<'v>(&self, obj: &'v Value, at: &str) -> Result<Cow<'v, Value>, Refusal> {
        let typed_only = obj.as_object().is_some_and(|o| o.keys().all(|k| k == "apiVersion" || k == "kind"));
        match self.webhook {
            Some(webhook) if !typed_only && obj.get("apiVersion").and_then(Value::as_str) != Some(at) => {
                webhook.convert(obj, at).map(Cow::Owned).map_err(|e| Refusal::Unconvertible(e.message))
            }
            _ => Ok(Cow::Borrowed(obj)),
        }
    }

    /// `obj` at version `at` and typed there, for a request through `version`: the
    /// webhook's object, or why there is none.
    fn converted(&self, obj: &Value, at: &str, version: &str) -> Result<Value, String> {
        let converted = self.at_version(obj, at).map_err(|refusal| match refusal {
            Refusal::Unconvertible(why) => why,
            Refusal::Conflicts(_) => String::new(),
        })?;
        match self.other_types(at).filter(|_| at != version).and_then(|types| walk::type_error(types, &converted)) {
            Some(why) => Err(why),
            None => Ok(converted.into_owned()),
        }
    }

    /// The field types of version `at`, another than the request's.
    fn other_types(&self, at: &str) -> Option<&Schema> {
        self.other_versions.iter().find(|(v, _)| v == at).map(|(_, t)| &**t)
    }

    /// The field types of version `at` (the request's when the kind has no other).
    fn types_at(&self, at: &str) -> &Schema {
        self.other_types(at).unwrap_or(self.schema)
    }

    /// Removes what the applier set last time and no longer sets, unless a manager (the
    /// applier's new configuration included) owns it.
    fn prune(&self, merged: Value, managers: &Managers, last: Option<&VersionedSet>) -> Value {
        let Some(last) = last.filter(|l| !l.set.is_empty()) else { return merged };
        let ensure = |s: &Set| s.ensure_named_fields_are_members(self.schema);
        let fields_of = |v: &Value| ensure(&walk::field_set(self.schema, v));
        let last = ensure(&last.set);
        let pruned = walk::remove_items(self.schema, &merged, &last);
        // Add back everything someone owns.
        let owned = managers.values().fold(Set::new(), |acc, vs| acc.union(&vs.set));
        let merged_fields = fields_of(&merged);
        let pruned = walk::remove_items(
            self.schema,
            &merged,
            &merged_fields.difference(&fields_of(&pruned).union(&ensure(&owned))),
        );
        // Add back what nobody owns but the applier never owned either.
        let dangling = merged_fields.difference(&fields_of(&pruned)).intersection(&last);
        walk::remove_items(self.schema, &merged, &dangling)
    }
}

/// How an object gets to another version (`Err`: Go's words for why it does not).
type Convert<'c> = dyn Fn(&Value, &str) -> Result<Value, String> + 'c;

/// structured-merge-diff's `prune` when the applier's `last` fields are at another version
/// than the request's `version` and versions differ in their fields: the merged object is
/// converted to the last version, where the fields the applier stopped setting are removed;
/// what any manager owns is added back at that manager's version (the last version first),
/// then what nobody owned at the last version; the result is converted back to `version`.
/// Each conversion of an object not already at its target is one call of `convert`, as
/// each of kube's is one conversion review. The error is the one kube wraps.
fn prune_across_versions(
    up: &Updater<'_>,
    merged: Value,
    version: &str,
    managers: &Managers,
    last: &VersionedSet,
    convert: &Convert<'_>,
) -> Result<Value, String> {
    let at = last.api_version.as_str();
    let to = |obj: Value, v: &str| -> Result<Value, String> {
        if obj.get("apiVersion").and_then(Value::as_str) == Some(v) { Ok(obj) } else { convert(&obj, v) }
    };
    let fields = |types: &Schema, obj: &Value| walk::field_set(types, obj).ensure_named_fields_are_members(types);
    let merged_last =
        to(merged, at).map_err(|e| format!("failed to convert merged object to last applied version: {e}"))?;
    let types = up.types_at(at);
    let last_set = last.set.ensure_named_fields_are_members(types);
    let mut pruned = walk::remove_items(types, &merged_last, &last_set);
    // Each version's owners together, the last version's first.
    let mut owned: Vec<(&str, Set)> = Vec::new();
    for vs in managers.values().filter(|vs| group(&vs.api_version) == group(version)) {
        match owned.iter_mut().find(|(v, _)| *v == vs.api_version) {
            Some((_, set)) => set.union_with(&vs.set),
            None => owned.push((&vs.api_version, vs.set.clone())),
        }
    }
    owned.sort_by_key(|(v, _)| *v != at);
    let mut merged_at = merged_last.clone();
    for (v, set) in owned {
        let add_back = |e: String| format!("failed add back owned items: {e}");
        merged_at =
            to(merged_at, v).map_err(|e| add_back(format!("failed to convert merged object at version {v}: {e}")))?;
        pruned = to(pruned, v).map_err(|e| add_back(format!("failed to convert pruned object at version {v}: {e}")))?;
        let types = up.types_at(v);
        let kept = fields(types, &pruned).union(&set.ensure_named_fields_are_members(types));
        pruned = walk::remove_items(types, &merged_at, &fields(types, &merged_at).difference(&kept));
    }
    let pruned = to(pruned, at).map_err(|e| {
        format!("failed add back dangling items: failed to convert pruned object to last applied version: {e}")
    })?;
    let dangling = fields(types, &merged_last).difference(&fields(types, &pruned)).intersection(&last_set);
    to(walk::remove_items(types, &merged_last, &dangling), version)
}

/// The versions `managers` set fields through in `version`'s group, each once (a typing
/// per version, however many managers share it), in the managers' order.
fn versions_in_group<'a>(
    managers: impl Iterator<Item = (&'a ManagerId, &'a VersionedSet)>,
    version: &str,
) -> Vec<&'a str> {
    let mut versions: Vec<&str> = Vec::new();
    for (_, vs) in managers {
        let at = vs.api_version.as_str();
        if group(at) == group(version) && !versions.contains(&at) {
            versions.push(at);
        }
    }
    versions
}

#[cfg(test)]
#[path = "updater_tests.rs"]
mod tests;
