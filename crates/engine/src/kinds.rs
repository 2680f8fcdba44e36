//! The kinds the engine serves right now: the built-in ones, and one per served version
//! of every established CRD (added by the CRD controller). Beside them, the group-versions
//! every stored CRD registers, established or not, which `/apis` lists.
//!
//! Routing and discovery both read this table, so a kind is in discovery exactly when
//! its endpoints answer. Lookups by resource (routing, Table layouts, watch windows) go
//! through an index rather than a walk of every CRD's kinds: with thousands of CRDs, a walk
//! on every request is what grew with the CRDs present.

use crate::representation::table::TableConvertor;
use crate::resources::scale::ScalePaths;
use crate::resources::{ResourceInfo, Strategy};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

/// One served kind at one version.
#[derive(Clone)]
pub struct ServedKind {
    pub strategy: Arc<dyn Strategy>,
    /// Verbs in the order discovery lists them.
    pub verbs: Vec<&'static str>,
    /// `/scale` is served with these paths (status is in `ResourceInfo::status_subresource`).
    pub scale: Option<ScalePaths>,
    /// Discovery's `storageVersionHash`.
    pub storage_version_hash: Option<String>,
    /// The defining CRD is being deleted: creates are refused with 405.
    pub terminating: bool,
    /// The defining CRD is not established yet: served, but left out of discovery and
    /// OpenAPI until every replica serves it (as kube lists only established CRDs).
    pub installing: bool,
    /// A deprecated version's warning, sent with every answer at that version.
    pub deprecation_warning: Option<String>,
}

impl ServedKind {
    pub fn info(&self) -> &ResourceInfo {
        self.strategy.info()
    }

    /// The verbs discovery lists: a terminating CRD's kind takes no more writes but deletes
    /// (OpenAPI still lists every route, as kube's does).
    pub fn discovery_verbs(&self) -> &[&'static str] {
        match self.terminating {
            true => &TERMINATING_CUSTOM_VERBS,
            false => &self.verbs,
        }
    }
}

/// Verbs of built-in kinds (sorted, as kube's discovery lists them).
pub const BUILTIN_VERBS: [&str; 8] =
    ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];
/// Verbs of namespaces: kube's namespace storage deletes no collection.
pub const NAMESPACE_VERBS: [&str; 7] = ["create", "delete", "get", "list", "patch", "update", "watch"];
/// Verbs of custom resources, in the order kube's discovery lists them.
pub const CUSTOM_VERBS: [&str; 8] = ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"];
/// What discovery lists for a custom resource while its CRD is terminating: no writes but
/// deletes (kube's discovery controller).
pub const TERMINATING_CUSTOM_VERBS: [&str; 5] = ["delete", "deletecollection", "get", "list", "watch"];

/// Every kind the engine serves.
#[derive(Default)]
pub struct Kinds {
    builtin: Vec<ServedKind>,
    /// Custom kinds by the CRD that defines them.
    custom: RwLock<ByCrd<ServedKind>>,
    /// Table layouts of custom kinds (their printer columns) by defining CRD.
    tables: RwLock<ByCrd<CustomTable>>,
    /// The resourceVersion of the CRD each entry of `custom` was built from, so that a pass
    /// of the CRD controller rebuilds (recompiles schemas and CEL rules) only what changed.
    built: RwLock<BTreeMap<String, String>>,
    /// What every stored CRD registers, by CRD name.
    registered: RwLock<BTreeMap<String, Registered>>,
    generation: Generation,
    /// What each CRD's kinds serve from, and the epoch of that storage: kube's handler
    /// tears a CRD's storage down (ending its watches) when its spec or accepted names
    /// change.
    storages: RwLock<BTreeMap<String, (StorageIdentity, u64)>>,
    /// Moves whenever a CRD stops serving kinds, or its storage is torn down: open
    /// watches of its kinds end then.
    withdrawn: Withdrawn,
}

/// What a CRD's storage is built from, as kube's handler tells a changed CRD: its uid,
/// its generation (which moves with every change of its spec) and its accepted names.
#[derive(Debug, Clone, PartialEq)]
pub struct StorageIdentity {
    pub uid: String,
    pub generation: i64,
    pub accepted_names:
        Option<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinitionNames>,
}

/// The group and served versions of a stored CRD, established or not. kube's CRD
/// registration controller makes an APIService of each served version of every CRD it
/// lists, whatever its conditions, and the aggregator answers `/apis` and `/apis/<group>`
/// from the APIServices: a CRD whose names were refused lists its versions there, though
/// nothing serves them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Registered {
    pub group: String,
    pub versions: Vec<String>,
}

/// Counts the CRDs that stopped serving, for whoever waits on it ([`Kinds::withdrawn`]).
struct Withdrawn(tokio::sync::watch::Sender<u64>);

impl Default for Withdrawn {
    fn default() -> Self {
        Withdrawn(tokio::sync::watch::channel(0).0)
    }
}

/// Numbers every state of every [`Kinds`] apart (unique in the process, not per table),
/// so a document cached by generation is never served for another engine's kinds.
static GENERATIONS: AtomicU64 = AtomicU64::new(1);

/// The state of the served kinds: it moves after every change to them.
struct Generation(AtomicU64);

impl Default for Generation {
    fn default() -> Self {
        Generation(AtomicU64::new(GENERATIONS.fetch_add(1, Ordering::Relaxed)))
    }
}

impl Generation {
    /// Called after a change is in place: a reader that saw the old generation may have
    /// read the new kinds (and cached newer content under an old number, never read
    /// again), but one that sees the new generation reads the new kinds.
    fn advance(&self) {
        self.0.store(GENERATIONS.fetch_add(1, Ordering::Relaxed), Ordering::Release);
    }
}

/// The custom kinds of a [`Kinds`], carried into an engine forked from a snapshot so it
/// serves them from its first request without compiling them again.
#[derive(Clone, Default)]
pub struct CustomKinds {
    custom: ByCrd<ServedKind>,
    tables: ByCrd<CustomTable>,
    built: BTreeMap<String, String>,
    storages: BTreeMap<String, (StorageIdentity, u64)>,
    registered: BTreeMap<String, Registered>,
}

impl CustomKinds {
    /// How many CRDs serve kinds.
    pub fn len(&self) -> usize {
        self.custom.entries.len()
    }
}

/// What a CRD publishes per resource: its served kinds, or their Table layouts.
trait OfResource {
    /// The resource's group and plural.
    fn resource(&self) -> (&str, &str);
}

impl OfResource for ServedKind {
    fn resource(&self) -> (&str, &str) {
        (&self.info().group, &self.info().plural)
    }
}

impl OfResource for CustomTable {
    fn resource(&self) -> (&str, &str) {
        (&self.group, &self.plural)
    }
}

/// Entries by defining CRD (in name order, the order every walk keeps), indexed by the
/// resources they are for: a lookup of one resource reads only the CRDs serving it.
#[derive(Clone)]
struct ByCrd<T> {
    entries: BTreeMap<String, Vec<T>>,
    /// The CRDs with an entry for each group and plural (nested, so a lookup by `&str`
    /// builds no key).
    index: BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
}

impl<T> Default for ByCrd<T> {
    fn default() -> Self {
        ByCrd { entries: BTreeMap::new(), index: BTreeMap::new() }
    }
}

impl<T: OfResource> ByCrd<T> {
    fn get(&self, crd_name: &str) -> Option<&Vec<T>> {
        self.entries.get(crd_name)
    }

    /// Replaces the entries of `crd_name` (empty: it has none).
    fn set(&mut self, crd_name: &str, items: Vec<T>) {
        for item in self.entries.remove(crd_name).into_iter().flatten() {
            let (group, plural) = item.resource();
            let Some(plurals) = self.index.get_mut(group) else { continue };
            if let Some(crds) = plurals.get_mut(plural) {
                crds.remove(crd_name);
                if crds.is_empty() {
                    plurals.remove(plural);
                }
            }
            if plurals.is_empty() {
                self.index.remove(group);
            }
        }
        if items.is_empty() {
            return;
        }
        for item in &items {
            let (group, plural) = item.resource();
            let plurals = self.index.entry(group.to_string()).or_default();
            plurals.entry(plural.to_string()).or_default().insert(crd_name.to_string());
        }
        self.entries.insert(crd_name.to_string(), items);
    }

    /// Every entry, by CRD name.
    fn all(&self) -> impl Iterator<Item = &T> {
        self.entries.values().flatten()
    }

    /// The entries for `group`/`plural`, in the order [`ByCrd::all`] walks them.
    fn of(&self, group: &str, plural: &str) -> impl Iterator<Item = &T> {
        let crds = self.index.get(group).and_then(|plurals| plurals.get(plural));
        crds.into_iter().flatten().filter_map(|crd| self.entries.get(crd)).flatten().filter(move |t| {
            let (g, p) = t.resource();
            g == group && p == plural
        })
    }
}

/// The Table layout of one custom kind at one version.
#[derive(Clone)]
pub struct CustomTable {
    pub group: String,
    pub version: String,
    pub plural: String,
    pub convertor: Arc<TableConvertor>,
    /// The revision from which the kind has been served: like kube-apiserver's watch
    /// cache for it, a watch from an older resourceVersion gets 410 Gone.
    pub since: crate::store::Revision,
}

impl Kinds {
    pub fn new(builtin: Vec<ServedKind>) -> Self {
        Kinds { builtin, ..Kinds::default() }
    }

    /// The custom kinds now (the strategies are shared, not copied).
    pub fn custom_kinds(&self) -> CustomKinds {
        CustomKinds {
            custom: read(&self.custom),
            tables: read(&self.tables),
            built: read(&self.built),
            storages: read(&self.storages),
            registered: read(&self.registered),
        }
    }

    /// Serves `custom` in place of the custom kinds served now.
    pub fn restore(&self, custom: CustomKinds) {
        write(&self.custom, custom.custom);
        write(&self.tables, custom.tables);
        write(&self.built, custom.built);
        write(&self.storages, custom.storages);
        write(&self.registered, custom.registered);
        self.generation.advance();
    }

    /// Which state of the served kinds this is: documents built from them (discovery) are
    /// cached by it. Read it before reading the kinds.
    pub fn generation(&self) -> u64 {
        self.generation.0.load(Ordering::Acquire)
    }

    /// Whether the kinds of `crd_name` were built from the CRD at `resource_version`.
    pub fn built_from(&self, crd_name: &str, resource_version: &str) -> bool {
        self.built.read().is_ok_and(|b| b.get(crd_name).is_some_and(|rv| rv == resource_version))
    }

    /// Notes what the kinds of `crd_name` were built from (`None`: unknown, rebuild them).
    pub fn set_built_from(&self, crd_name: &str, resource_version: Option<&str>) {
        if let Ok(mut built) = self.built.write() {
            match resource_version {
                Some(rv) => built.insert(crd_name.to_string(), rv.to_string()),
                None => built.remove(crd_name),
            };
        }
    }

    /// Replaces the Table layouts of the kinds a CRD serves; `renewed`: from a new storage
    /// (see [`Kinds::set_storage`]), whose watch window starts at their `since`.
    pub fn set_tables(&self, crd_name: &str, mut tables: Vec<CustomTable>, renewed: bool) {
        if let Ok(mut all) = self.tables.write() {
            // A kind keeps the revision it was first served at, while its storage stays.
            for t in tables.iter_mut().filter(|_| !renewed) {
                let known = all.get(crd_name).into_iter().flatten().find(|o| o.version == t.version);
                if let Some(old) = known {
                    t.since = old.since;
                }
            }
            all.set(crd_name, tables);
        }
    }

    /// The oldest revision a watch of `kind` may start from (0: any the store holds).
    pub fn watch_window(&self, kind: &ServedKind) -> crate::store::Revision {
        self.custom_table(kind, |t| t.since).unwrap_or(0)
    }

    /// `read` of the Table layout of custom kind `kind`, if it is one.
    fn custom_table<R>(&self, kind: &ServedKind, read: impl FnOnce(&CustomTable) -> R) -> Option<R> {
        let info = kind.info();
        let all = self.tables.read().ok()?;
        all.of(&info.group, &info.plural).find(|t| t.version == info.version).map(read)
    }

    /// How Tables show `kind`: its printer columns for a custom kind, else its
    /// strategy's layout.
    pub fn table(&self, kind: &ServedKind) -> Arc<TableConvertor> {
        let custom = self.custom_table(kind, |t| Arc::clone(&t.convertor));
        custom.unwrap_or_else(|| Arc::new(kind.strategy.table_convertor()))
    }

    /// Replaces the kinds a CRD serves (empty: it serves none).
    pub fn set_custom(&self, crd_name: &str, kinds: Vec<ServedKind>) {
        if let Ok(mut custom) = self.custom.write() {
            let withdrawn = kinds.is_empty() && custom.entries.contains_key(crd_name);
            if kinds.is_empty() {
                self.set_tables(crd_name, Vec::new(), true);
                self.set_built_from(crd_name, None);
            }
            custom.set(crd_name, kinds);
            self.generation.advance();
            if withdrawn {
                if let Ok(mut storages) = self.storages.write() {
                    storages.remove(crd_name);
                }
                self.withdrawn.0.send_modify(|n| *n += 1);
            }
        }
    }

    /// Notes what the kinds of `crd_name` serve from now: another identity than before
    /// starts a new storage epoch (`true`), and the watches of the old one end.
    pub fn set_storage(&self, crd_name: &str, identity: StorageIdentity) -> bool {
        let Ok(mut storages) = self.storages.write() else { return false };
        let changed = match storages.get(crd_name) {
            Some((old, _)) if *old == identity => return false,
            Some(_) => true,
            None => false,
        };
        storages.insert(crd_name.to_string(), (identity, GENERATIONS.fetch_add(1, Ordering::Relaxed)));
        drop(storages);
        if changed {
            self.withdrawn.0.send_modify(|n| *n += 1);
        }
        changed
    }

    /// The storage epoch `kind` is served from now (`None` for a built-in kind).
    pub fn storage_epoch(&self, kind: &ServedKind) -> Option<u64> {
        let info = kind.info();
        let custom = self.custom.read().ok()?;
        let crds = custom.index.get(&info.group)?.get(&info.plural)?;
        let storages = self.storages.read().ok()?;
        crds.iter().find_map(|crd| storages.get(crd).map(|(_, epoch)| *epoch))
    }

    /// Returns once `kind` is no longer served from the storage epoch `epoch` (its CRD
    /// deleted, or its spec or accepted names changed), as kube-apiserver ends the watches
    /// of a CRD's kinds when it tears their storage down.
    pub async fn withdrawn(&self, kind: &ServedKind, epoch: Option<u64>) {
        let info = kind.info();
        // Subscribed before the first look: a withdrawal between the two is not missed.
        let mut changes = self.withdrawn.0.subscribe();
        loop {
            if self.find(&info.group, &info.version, &info.plural).is_none() || self.storage_epoch(kind) != epoch {
                return;
            }
            if changes.changed().await.is_err() {
                return std::future::pending().await;
            }
        }
    }

    /// The CRDs that currently serve kinds.
    pub fn custom_names(&self) -> Vec<String> {
        self.custom.read().map(|c| c.entries.keys().cloned().collect()).unwrap_or_default()
    }

    /// Records what the stored CRD `crd_name` registers (`None`: it is gone).
    pub fn set_registered(&self, crd_name: &str, registered: Option<Registered>) {
        let Ok(mut all) = self.registered.write() else { return };
        if all.get(crd_name) == registered.as_ref() {
            return;
        }
        match registered {
            Some(r) => all.insert(crd_name.to_string(), r),
            None => all.remove(crd_name),
        };
        drop(all);
        self.generation.advance();
    }

    /// The CRDs that register group-versions.
    pub fn registered_names(&self) -> Vec<String> {
        self.registered.read().map(|r| r.keys().cloned().collect()).unwrap_or_default()
    }

    /// Every group-version a stored CRD registers (repeated when several do).
    pub fn registered(&self) -> Vec<(String, String)> {
        let Ok(all) = self.registered.read() else { return Vec::new() };
        all.values().flat_map(|r| r.versions.iter().map(|v| (r.group.clone(), v.clone()))).collect()
    }

    /// The engine's own kinds.
    pub fn builtin(&self) -> &[ServedKind] {
        &self.builtin
    }

    /// Whether a kind is one of the engine's own (not served for a CRD).
    pub fn is_builtin(&self, kind: &ServedKind) -> bool {
        self.builtin.iter().any(|b| b.info() == kind.info())
    }

    /// The served kinds `pred` selects but those installing, built-ins first, cloning only
    /// those.
    pub fn matching(&self, pred: impl Fn(&ResourceInfo) -> bool) -> Vec<ServedKind> {
        let mut out: Vec<ServedKind> = self.builtin.iter().filter(|k| pred(k.info())).cloned().collect();
        if let Ok(custom) = self.custom.read() {
            out.extend(custom.all().filter(|k| !k.installing && pred(k.info())).cloned());
        }
        out
    }

    /// Every served kind but those installing: built-ins first, then custom kinds by CRD name.
    pub fn all(&self) -> Vec<ServedKind> {
        let mut out = self.builtin.clone();
        if let Ok(custom) = self.custom.read() {
            out.extend(custom.all().filter(|k| !k.installing).cloned());
        }
        out
    }

    /// The first kind served under `plural` in `group` at `version` (any: `None`),
    /// built-ins first, cloning only that one (routing calls this on every request).
    fn first(&self, group: &str, plural: &str, version: Option<&str>) -> Option<ServedKind> {
        let at = |i: &ResourceInfo| version.is_none_or(|v| i.version == v);
        if let Some(k) =
            self.builtin.iter().find(|k| k.info().group == group && k.info().plural == plural && at(k.info()))
        {
            return Some(k.clone());
        }
        let custom = self.custom.read().ok()?;
        custom.of(group, plural).find(|k| at(k.info())).cloned()
    }

    /// A kind served under `plural` in `group`, at any version (they share storage).
    pub fn find_resource(&self, group: &str, plural: &str) -> Option<ServedKind> {
        self.first(group, plural, None)
    }

    /// The kind served at `group/version` under `plural`.
    pub fn find(&self, group: &str, version: &str, plural: &str) -> Option<ServedKind> {
        self.first(group, plural, Some(version))
    }
}

/// A copy of what `lock` holds (empty if a writer panicked holding it).
fn read<T: Clone + Default>(lock: &RwLock<T>) -> T {
    lock.read().map(|v| v.clone()).unwrap_or_default()
}

/// Replaces what `lock` holds (left as it is if a writer panicked holding it).
fn write<T>(lock: &RwLock<T>, value: T) {
    if let Ok(mut held) = lock.write() {
        *held = value;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::fixtures::{CrdBuilder, VersionBuilder};
    use crate::representation::table::TableConvertor;
    use crate::resources::custom::CustomResourceStrategy;

    /// The kinds and Table layouts CRD `<plural>.<group>` serves at `versions`, under
    /// `plural` (a CRD's kinds are served under its accepted names, which may differ).
    fn publish(kinds: &Kinds, crd_name: &str, group: &str, plural: &str, versions: &[&str], since: u64) {
        let versions = versions.iter().map(|v| VersionBuilder::new(v).served(true).storage(true).build()).collect();
        let crd = CrdBuilder::new(plural, group)
            .name(crd_name)
            .kind("Thing")
            .versions(versions)
            .accepted_names_from_spec()
            .build();
        let served = crd.spec.versions.iter().map(|v| ServedKind {
            strategy: Arc::new(CustomResourceStrategy::new(&crd, v, crate::resources::custom::SchemaSource::Typed)),
            verbs: CUSTOM_VERBS.to_vec(),
            scale: None,
            storage_version_hash: None,
            terminating: false,
            installing: false,
            deprecation_warning: None,
        });
        let tables = crd.spec.versions.iter().map(|v| CustomTable {
            group: group.into(),
            version: v.name.clone(),
            plural: plural.into(),
            convertor: Arc::new(TableConvertor::custom_resource(&[])),
            since,
        });
        kinds.set_custom(crd_name, served.collect());
        kinds.set_tables(crd_name, tables.collect(), false);
    }

    /// What a walk of every custom kind finds, as the lookups did before the index: the
    /// kind's CRD name order, then its versions' order.
    fn walked(kinds: &Kinds, group: &str, version: Option<&str>, plural: &str) -> Option<(String, String)> {
        let all = kinds.custom.read().expect("lock");
        let found = all.entries.iter().flat_map(|(crd, ks)| ks.iter().map(move |k| (crd, k))).find(|(_, k)| {
            let i = k.info();
            i.group == group && i.plural == plural && version.is_none_or(|v| i.version == v)
        });
        found.map(|(crd, k)| (crd.clone(), k.info().version.clone()))
    }

    /// The CRD a found kind belongs to, told apart by its Table layout's `since`.
    fn looked_up(kinds: &Kinds, group: &str, version: Option<&str>, plural: &str) -> Option<(String, String)> {
        let kind = match version {
            Some(v) => kinds.find(group, v, plural),
            None => kinds.find_resource(group, plural),
        }?;
        let crd = kinds
            .custom
            .read()
            .expect("lock")
            .entries
            .iter()
            .find_map(|(crd, ks)| ks.iter().any(|k| Arc::ptr_eq(&k.strategy, &kind.strategy)).then(|| crd.clone()));
        Some((crd?, kind.info().version.clone()))
    }

    #[test]
    fn lookups_by_resource_find_what_a_walk_of_every_kind_finds() {
        let kinds = Kinds::default();
        publish(&kinds, "widgets.a.io", "a.io", "widgets", &["v1", "v2"], 1);
        publish(&kinds, "gadgets.a.io", "a.io", "gadgets", &["v1"], 2);
        publish(&kinds, "widgets.b.io", "b.io", "widgets", &["v1"], 3);
        // Two CRDs serving one resource (data from elsewhere): the first by name wins.
        publish(&kinds, "zz.b.io", "b.io", "widgets", &["v1", "v3"], 4);
        publish(&kinds, "aa.b.io", "b.io", "widgets", &["v3"], 5);
        // Replaced under another plural, then gone: the index forgets the old resources.
        publish(&kinds, "gadgets.a.io", "a.io", "doohickeys", &["v1beta1"], 6);
        publish(&kinds, "widgets.a.io", "a.io", "widgets", &["v2"], 7);
        kinds.set_custom("widgets.b.io", Vec::new());

        let queries = [
            ("a.io", "widgets"),
            ("a.io", "gadgets"),
            ("a.io", "doohickeys"),
            ("b.io", "widgets"),
            ("c.io", "widgets"),
        ];
        for (group, plural) in queries {
            for version in [None, Some("v1"), Some("v2"), Some("v3"), Some("v1beta1")] {
                let want = walked(&kinds, group, version, plural);
                assert_eq!(looked_up(&kinds, group, version, plural), want, "{group} {plural} {version:?}");
            }
        }
        assert_eq!(looked_up(&kinds, "b.io", Some("v1"), "widgets"), Some(("zz.b.io".into(), "v1".into())));
        assert_eq!(looked_up(&kinds, "b.io", Some("v3"), "widgets"), Some(("aa.b.io".into(), "v3".into())));
        assert_eq!(looked_up(&kinds, "a.io", None, "gadgets"), None);

        // Table layouts and watch windows are looked up the same way.
        let window = |group: &str, version: &str, plural: &str| {
            kinds.find(group, version, plural).map(|k| kinds.watch_window(&k))
        };
        assert_eq!(window("a.io", "v2", "widgets"), Some(1), "a kind keeps the revision it was first served at");
        assert_eq!(window("a.io", "v1beta1", "doohickeys"), Some(6));
        assert_eq!(window("b.io", "v1", "widgets"), Some(4));
        assert_eq!(window("b.io", "v3", "widgets"), Some(5));
        let tables = kinds.tables.read().expect("lock");
        assert!(tables.index.get("a.io").is_none_or(|plurals| !plurals.contains_key("gadgets")));
        assert!(!tables.entries.contains_key("widgets.b.io"));
        let custom = kinds.custom.read().expect("lock");
        assert_eq!(custom.index.get("b.io").and_then(|p| p.get("widgets")).map(BTreeSet::len), Some(2));
    }
}
