//! The controller's copy of the stored CRDs (an informer's cache), kept by the watch, and
//! its queue: the names to look at again, as kube's controllers work per key.
//!
//! A change to a CRD queues every CRD of its group, since the names one holds or lets go
//! decide the others' (kube's naming controller requeues the group the same way). The
//! copies are [`light`]: names decisions and clean-ups never read the schemas, which are
//! nearly all of a large CRD's bytes; publishing decodes the stored bytes whole, and only
//! when they changed.

use crate::registry::conditions::{self, ESTABLISHED, NAMES_ACCEPTED};
use crate::store::{KeyValue, Revision, WatchEvent};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceDefinitionStatus,
};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

/// One CRD as the controller knows it.
pub(super) struct Held {
    /// As stored, at `kv.mod_revision`.
    pub kv: KeyValue,
    /// The light copy decisions read: as stored at `copy_at`, which is newer than `kv`
    /// when this controller wrote a status whose change the watch has not brought yet.
    pub crd: Arc<CustomResourceDefinition>,
    copy_at: Revision,
    /// This controller wrote the CRD and waits for the watch to bring the write: until
    /// then `kv` is stale, so the CRD is not looked at (its event queues it again).
    pending: bool,
}

/// What a change did to the cache.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Applied {
    /// Not a CRD.
    Other,
    /// A CRD was stored: it and its group are queued.
    Stored,
    /// A CRD is gone (or no longer decodes): it must serve nothing.
    Gone(String),
}

/// The CRDs by name, their groups, and the queue.
pub(super) struct Cache {
    prefix: String,
    by_name: HashMap<String, Held>,
    /// CRD names by API group: whom a change may concern.
    groups: HashMap<String, BTreeSet<String>>,
    /// Queued names.
    dirty: BTreeSet<String>,
    /// CRDs being deleted: a change to any custom resource may let a clean-up go on.
    cleaning: BTreeSet<String>,
    /// CRDs whose names are accepted but not every replica serves them yet.
    installing: BTreeSet<String>,
}

impl Cache {
    /// An empty cache of the CRDs stored under `prefix`.
    pub fn new(prefix: String) -> Self {
        Cache {
            prefix,
            by_name: HashMap::new(),
            groups: HashMap::new(),
            dirty: BTreeSet::new(),
            cleaning: BTreeSet::new(),
            installing: BTreeSet::new(),
        }
    }

    /// Takes in a whole list (at start, or after the watch fell behind), keeping the copies
    /// of unchanged CRDs, and queues every CRD. The names that are gone are returned.
    pub fn relist(&mut self, items: Vec<KeyValue>) -> Vec<String> {
        let mut old = std::mem::take(&mut self.by_name);
        self.groups.clear();
        self.cleaning.clear();
        self.installing.clear();
        for kv in items {
            let Some(name) = kv.key.strip_prefix(&self.prefix).map(str::to_string) else { continue };
            let held = match old.remove(&name) {
                Some(h) if h.copy_at == kv.mod_revision => Held { kv, pending: false, ..h },
                _ => match decode_light(&kv) {
                    Some(crd) => Held { copy_at: kv.mod_revision, kv, crd: Arc::new(crd), pending: false },
                    None => continue,
                },
            };
            self.insert(name, held);
        }
        self.dirty = self.by_name.keys().cloned().collect();
        old.into_keys().collect()
    }

    /// Takes in one change.
    pub fn apply(&mut self, event: &WatchEvent) -> Applied {
        let Some(name) = event.key.strip_prefix(&self.prefix) else { return Applied::Other };
        let name = name.to_string();
        let held = event.current.as_ref().and_then(|kv| match self.by_name.get(&name) {
            // This controller's own write: the copy it made is what was stored.
            Some(h) if h.copy_at == kv.mod_revision => {
                Some(Held { kv: kv.clone(), crd: Arc::clone(&h.crd), copy_at: h.copy_at, pending: false })
            }
            _ => decode_light(kv).map(|crd| Held {
                copy_at: kv.mod_revision,
                kv: kv.clone(),
                crd: Arc::new(crd),
                pending: false,
            }),
        });
        match held {
            Some(held) => {
                self.insert(name.clone(), held);
                self.queue_group_of(&name);
                Applied::Stored
            }
            None => {
                // Those that lost a name to it may have it now.
                let group = self.unlink(&name);
                if let Some(names) = group.and_then(|g| self.groups.get(&g)) {
                    self.dirty.extend(names.iter().cloned());
                }
                Applied::Gone(name)
            }
        }
    }

    /// Queues `name` and every CRD of its group.
    fn queue_group_of(&mut self, name: &str) {
        let Some(group) = self.by_name.get(name).map(|h| h.crd.spec.group.clone()) else { return };
        if let Some(names) = self.groups.get(&group) {
            self.dirty.extend(names.iter().cloned());
        }
    }

    fn insert(&mut self, name: String, held: Held) {
        self.unlink(&name);
        self.groups.entry(held.crd.spec.group.clone()).or_default().insert(name.clone());
        self.index(&name, &held.crd);
        self.by_name.insert(name, held);
    }

    /// Takes `name` out of every index; its group, if it was held.
    fn unlink(&mut self, name: &str) -> Option<String> {
        self.dirty.remove(name);
        self.cleaning.remove(name);
        self.installing.remove(name);
        let held = self.by_name.remove(name)?;
        let group = held.crd.spec.group.clone();
        if let Some(names) = self.groups.get_mut(&group) {
            names.remove(name);
            if names.is_empty() {
                self.groups.remove(&group);
            }
        }
        Some(group)
    }

    /// Keeps the `cleaning` and `installing` sets in step with a copy.
    fn index(&mut self, name: &str, crd: &CustomResourceDefinition) {
        // Only a clean-up under way waits for custom resources.
        let cleaning = crd.metadata.deletion_timestamp.is_some()
            && crd.metadata.finalizers.iter().flatten().any(|f| f == crate::resources::crds::CLEANUP_FINALIZER);
        match cleaning {
            true => self.cleaning.insert(name.to_string()),
            false => self.cleaning.remove(name),
        };
        match installing(crd) {
            true => self.installing.insert(name.to_string()),
            false => self.installing.remove(name),
        };
    }

    /// Queues every CRD (this engine came to lead, or ceased to).
    pub fn queue_all(&mut self) {
        self.dirty = self.by_name.keys().cloned().collect();
    }

    /// Queues the CRDs being deleted.
    pub fn queue_cleaning(&mut self) {
        self.dirty.extend(self.cleaning.iter().cloned());
    }

    /// Queues the installing CRDs.
    pub fn queue_installing(&mut self) {
        self.dirty.extend(self.installing.iter().cloned());
    }

    /// Queues `name` again (its write failed).
    pub fn queue(&mut self, name: &str) {
        if self.by_name.contains_key(name) {
            self.dirty.insert(name.to_string());
        }
    }

    pub fn cleaning(&self) -> bool {
        !self.cleaning.is_empty()
    }

    pub fn installing(&self) -> bool {
        !self.installing.is_empty()
    }

    /// Whether a CRD of this name is held.
    pub fn contains(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// Empties the queue: its names oldest first (creation time, then name), so the first
    /// registration keeps a contested name. CRDs waiting for their own write are left out.
    pub fn take_queue(&mut self) -> Vec<String> {
        let dirty = std::mem::take(&mut self.dirty);
        let mut names: Vec<&Held> = dirty.iter().filter_map(|n| self.by_name.get(n)).filter(|h| !h.pending).collect();
        names.sort_by(|a, b| {
            let ka = (&a.crd.metadata.creation_timestamp, &a.crd.metadata.name);
            let kb = (&b.crd.metadata.creation_timestamp, &b.crd.metadata.name);
            ka.cmp(&kb)
        });
        names.iter().filter_map(|h| h.crd.metadata.name.clone()).collect()
    }

    pub fn get(&self, name: &str) -> Option<&Held> {
        self.by_name.get(name)
    }

    /// The copies of every CRD of `group` (the CRD's own among them).
    pub fn group(&self, group: &str) -> Vec<Arc<CustomResourceDefinition>> {
        let names = self.groups.get(group).into_iter().flatten();
        names.filter_map(|n| self.by_name.get(n)).map(|h| Arc::clone(&h.crd)).collect()
    }

    /// Gives `name` the status this controller decided, ahead of writing it: the CRDs
    /// decided after it see the names it now holds.
    pub fn decide(&mut self, name: &str, status: CustomResourceDefinitionStatus) {
        let Some(held) = self.by_name.get_mut(name) else { return };
        Arc::make_mut(&mut held.crd).status = Some(status);
        let crd = Arc::clone(&held.crd);
        self.index(name, &crd);
    }

    /// Notes that this controller wrote `name` at `revision`: with `kept`, the copy is what
    /// was written (its status decided), so the watch's event needs no decoding.
    pub fn wrote(&mut self, name: &str, revision: Option<Revision>, kept: bool) {
        let Some(held) = self.by_name.get_mut(name) else { return };
        held.pending = true;
        if let (true, Some(revision)) = (kept, revision) {
            held.copy_at = revision;
            Arc::make_mut(&mut held.crd).metadata.resource_version = Some(revision.to_string());
        }
    }

    /// Goes back to the stored copy of `name` (a decided status was not written), queueing
    /// it again when `again`.
    pub fn reload(&mut self, name: &str, again: bool) {
        let Some(held) = self.by_name.get(name) else { return };
        let kv = held.kv.clone();
        match decode_light(&kv) {
            Some(crd) => {
                self.insert(name.to_string(), Held { copy_at: kv.mod_revision, kv, crd: Arc::new(crd), pending: false })
            }
            None => {
                self.unlink(name);
            }
        }
        if again {
            self.queue(name);
        }
    }
}

/// Whether a CRD's names are accepted and it waits for every replica to serve them.
pub(super) fn installing(crd: &CustomResourceDefinition) -> bool {
    crd.status.as_ref().is_some_and(installs)
}

pub(super) fn installs(status: &CustomResourceDefinitionStatus) -> bool {
    let conditions = status.conditions.as_deref().unwrap_or_default();
    conditions::find_condition(conditions, ESTABLISHED)
        .is_some_and(|c| c.reason.as_deref() == Some(conditions::reason::INSTALLING))
        && conditions::find_condition(conditions, NAMES_ACCEPTED).is_some_and(|c| c.status == conditions::STATUS_TRUE)
}

/// The CRD stored as `kv`, whole, at its revision.
pub(super) fn decode(kv: &KeyValue) -> Option<CustomResourceDefinition> {
    let mut crd: CustomResourceDefinition = serde_json::from_slice(&kv.value).ok()?;
    crd.metadata.resource_version = Some(kv.mod_revision.to_string());
    Some(crd)
}

fn decode_light(kv: &KeyValue) -> Option<CustomResourceDefinition> {
    decode(kv).map(light)
}

/// What names decisions and clean-ups read of a CRD: it leaves out the versions' schemas,
/// the managed fields (which mirror the spec's shape) and the annotations (`kubectl apply`
/// keeps a copy of the whole CRD in one), which together are nearly all of its bytes.
fn light(mut crd: CustomResourceDefinition) -> CustomResourceDefinition {
    for v in &mut crd.spec.versions {
        v.schema = None;
    }
    crd.metadata.managed_fields = None;
    crd.metadata.annotations = None;
    crd
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::fixtures::{CrdBuilder, at};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    const PREFIX: &str = "/registry/apiextensions.k8s.io/customresourcedefinitions/";

    /// `<plural>.<group>` created at `seconds`, stored at `revision`.
    fn stored(plural: &str, group: &str, seconds: i64, revision: Revision) -> KeyValue {
        let mut crd = CrdBuilder::new(plural, group).build();
        crd.metadata.creation_timestamp = Some(Time(at(seconds)));
        let name = crd.metadata.name.clone().unwrap_or_default();
        KeyValue {
            key: format!("{PREFIX}{name}"),
            value: serde_json::to_vec(&crd).expect("json").into(),
            create_revision: revision,
            mod_revision: revision,
        }
    }

    fn put(kv: KeyValue) -> WatchEvent {
        WatchEvent { revision: kv.mod_revision, key: kv.key.clone(), current: Some(kv), prev: None }
    }

    fn delete(kv: &KeyValue, revision: Revision) -> WatchEvent {
        WatchEvent { revision, key: kv.key.clone(), current: None, prev: Some(kv.clone()) }
    }

    fn cache(items: Vec<KeyValue>) -> Cache {
        let mut cache = Cache::new(PREFIX.into());
        cache.relist(items);
        cache
    }

    #[test]
    fn a_list_queues_every_crd_oldest_first_then_by_name() {
        let mut cache = cache(vec![stored("b", "x.io", 2, 3), stored("a", "y.io", 2, 4), stored("c", "x.io", 1, 5)]);
        assert_eq!(cache.take_queue(), ["c.x.io", "a.y.io", "b.x.io"]);
        assert!(cache.take_queue().is_empty());
    }

    #[test]
    fn a_change_queues_its_group_only() {
        let mut cache = cache(vec![stored("a", "x.io", 1, 2), stored("b", "x.io", 2, 3), stored("c", "y.io", 3, 4)]);
        cache.take_queue();
        assert_eq!(cache.apply(&put(stored("d", "x.io", 4, 5))), Applied::Stored);
        assert_eq!(cache.take_queue(), ["a.x.io", "b.x.io", "d.x.io"]);
        assert_eq!(cache.apply(&put(stored("c", "y.io", 3, 6))), Applied::Stored);
        assert_eq!(cache.take_queue(), ["c.y.io"]);
    }

    #[test]
    fn a_crd_gone_queues_those_left_in_its_group() {
        let a = stored("a", "x.io", 1, 2);
        let mut cache = cache(vec![a.clone(), stored("b", "x.io", 2, 3), stored("c", "y.io", 3, 4)]);
        cache.take_queue();
        assert_eq!(cache.apply(&delete(&a, 5)), Applied::Gone("a.x.io".into()));
        assert_eq!(cache.take_queue(), ["b.x.io"]);
        assert!(!cache.contains("a.x.io"));
        assert_eq!(cache.group("x.io").len(), 1);
    }

    #[test]
    fn a_relist_returns_what_is_gone() {
        let mut cache = cache(vec![stored("a", "x.io", 1, 2), stored("b", "x.io", 2, 3)]);
        assert_eq!(cache.relist(vec![stored("b", "x.io", 2, 3)]), ["a.x.io"]);
        assert_eq!(cache.take_queue(), ["b.x.io"]);
    }

    #[test]
    fn a_crd_written_here_waits_for_its_event_and_keeps_its_decided_copy() {
        let mut cache = cache(vec![stored("a", "x.io", 1, 2), stored("b", "x.io", 2, 3)]);
        cache.take_queue();
        let status =
            CustomResourceDefinitionStatus { stored_versions: Some(vec!["decided".into()]), ..Default::default() };
        cache.decide("a.x.io", status.clone());
        cache.wrote("a.x.io", Some(9), true);
        // Queued by b's change, but its stored bytes are older than its copy: left out.
        cache.apply(&put(stored("b", "x.io", 2, 8)));
        assert_eq!(cache.take_queue(), ["b.x.io"]);
        // Its own write comes back: the copy stands (the event's bytes are not decoded).
        cache.apply(&put(stored("a", "x.io", 1, 9)));
        assert_eq!(cache.take_queue(), ["a.x.io", "b.x.io"]);
        let held = cache.get("a.x.io").expect("held");
        assert_eq!(held.crd.status.as_ref(), Some(&status));
        assert_eq!(held.kv.mod_revision, 9);
    }

    /// The round reads the CRD it publishes from the JSON its status write sends, not from
    /// the stored bytes again: the same CRD, whatever the bytes of a held CRD (those that
    /// decode) hold.
    #[test]
    fn a_crd_read_from_its_stored_json_is_the_one_decoded_from_its_bytes() {
        use crate::registry::fixtures::{VersionBuilder, widget};
        let schema = serde_json::json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true,
            "properties": {"size": {"type": "number", "maximum": 10.0, "minimum": -2.5, "multipleOf": 1e-3,
                "default": 18446744073709551615u64}, "name": {"type": "string", "pattern": "^\\w+\"\u{e9}$",
                "enum": ["a", null, 1, {"b": [1.5]}], "x-kubernetes-validations": [{"rule": "self.size() < 3"}]}}});
        let two = widget().versions(vec![
            VersionBuilder::new("v1")
                .served(true)
                .storage(true)
                .schema(schema)
                .column("Size", "number", ".spec.size")
                .build(),
            VersionBuilder::new("v2").served(false).schema(serde_json::json!({"type": "object"})).build(),
        ]);
        let mut with_unknown = serde_json::to_value(widget().established_at(7).label("l", "v").build()).expect("JSON");
        with_unknown["spec"]["bogus"] = serde_json::json!({"deep": [1, 2.0]});
        with_unknown["metadata"]["bogus"] = serde_json::json!(3);
        let bodies = [
            serde_json::to_vec(&two.established_at(3).build()).expect("JSON"),
            serde_json::to_vec(&with_unknown).expect("JSON"),
            serde_json::to_vec(&CrdBuilder::new("bare", "x.io").build()).expect("JSON"),
            br#"{"spec": "not a spec"}"#.to_vec(),
        ];
        for value in bodies {
            let kv = KeyValue { key: format!("{PREFIX}w"), value: value.into(), create_revision: 2, mod_revision: 5 };
            assert_eq!(crate::resources::crds::typed(&crate::meta::from_stored(&kv)), decode(&kv));
        }
    }

    #[test]
    fn a_write_that_failed_goes_back_to_what_is_stored() {
        let mut cache = cache(vec![stored("a", "x.io", 1, 2)]);
        cache.take_queue();
        cache.decide("a.x.io", CustomResourceDefinitionStatus::default());
        cache.reload("a.x.io", true);
        assert_eq!(cache.take_queue(), ["a.x.io"]);
        assert_eq!(cache.get("a.x.io").expect("held").crd.status, None);
    }
}
