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
        if let Some(l) = last.as_ref().filter(|l| !l.set.is_empty()) {
            self.prunable(&merged, version, &l.api_version, &managers)?;
        }
        let new = self.prune(merged, &managers, last.as_ref());
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
