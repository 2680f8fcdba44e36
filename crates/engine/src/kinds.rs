//! The kinds the engine serves right now: the built-in ones, and one per served version
//! of every established CRD (added by the CRD controller).
//!
//! Routing and discovery both read this table, so a kind is in discovery exactly when
//! its endpoints answer.

use crate::representation::table::TableConvertor;
use crate::resources::scale::ScalePaths;
use crate::resources::{ResourceInfo, Strategy};
use std::collections::BTreeMap;
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
}

/// Verbs of built-in kinds (sorted, as kube's discovery lists them).
pub const BUILTIN_VERBS: [&str; 8] =
    ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];
/// Verbs of custom resources, in the order kube's discovery lists them.
pub const CUSTOM_VERBS: [&str; 8] = ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"];

/// Every kind the engine serves.
#[derive(Default)]
pub struct Kinds {
    builtin: Vec<ServedKind>,
    /// Custom kinds by the CRD that defines them.
    custom: RwLock<BTreeMap<String, Vec<ServedKind>>>,
    /// Table layouts of custom kinds (their printer columns) by defining CRD.
    tables: RwLock<BTreeMap<String, Vec<CustomTable>>>,
    /// The resourceVersion of the CRD each entry of `custom` was built from, so that a pass
    /// of the CRD controller rebuilds (recompiles schemas and CEL rules) only what changed.
    built: RwLock<BTreeMap<String, String>>,
    generation: Generation,
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
    custom: BTreeMap<String, Vec<ServedKind>>,
    tables: BTreeMap<String, Vec<CustomTable>>,
    built: BTreeMap<String, String>,
}

impl CustomKinds {
    /// How many CRDs serve kinds.
    pub fn len(&self) -> usize {
        self.custom.len()
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
        CustomKinds { custom: read(&self.custom), tables: read(&self.tables), built: read(&self.built) }
    }

    /// Serves `custom` in place of the custom kinds served now.
    pub fn restore(&self, custom: CustomKinds) {
        write(&self.custom, custom.custom);
        write(&self.tables, custom.tables);
        write(&self.built, custom.built);
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

    /// Replaces the Table layouts of the kinds a CRD serves.
    pub fn set_tables(&self, crd_name: &str, mut tables: Vec<CustomTable>) {
        if let Ok(mut all) = self.tables.write() {
            // A kind keeps the revision it was first served at.
            for t in &mut tables {
                let known = all.get(crd_name).into_iter().flatten().find(|o| o.version == t.version);
                if let Some(old) = known {
                    t.since = old.since;
                }
            }
            if tables.is_empty() {
                all.remove(crd_name);
            } else {
                all.insert(crd_name.to_string(), tables);
            }
        }
    }

    /// The oldest revision a watch of `kind` may start from (0: any the store holds).
    pub fn watch_window(&self, kind: &ServedKind) -> crate::store::Revision {
        let info = kind.info();
        self.tables
            .read()
            .ok()
            .and_then(|all| {
                all.values()
                    .flatten()
                    .find(|t| t.group == info.group && t.version == info.version && t.plural == info.plural)
                    .map(|t| t.since)
            })
            .unwrap_or(0)
    }

    /// How Tables show `kind`: its printer columns for a custom kind, else its
    /// strategy's layout.
    pub fn table(&self, kind: &ServedKind) -> Arc<TableConvertor> {
        let info = kind.info();
        let custom = self.tables.read().ok().and_then(|all| {
            all.values()
                .flatten()
                .find(|t| t.group == info.group && t.version == info.version && t.plural == info.plural)
                .map(|t| Arc::clone(&t.convertor))
        });
        custom.unwrap_or_else(|| Arc::new(kind.strategy.table_convertor()))
    }

    /// Replaces the kinds a CRD serves (empty: it serves none).
    pub fn set_custom(&self, crd_name: &str, kinds: Vec<ServedKind>) {
        if let Ok(mut custom) = self.custom.write() {
            if kinds.is_empty() {
                custom.remove(crd_name);
                self.set_tables(crd_name, Vec::new());
                self.set_built_from(crd_name, None);
            } else {
                custom.insert(crd_name.to_string(), kinds);
            }
            self.generation.advance();
        }
    }

    /// The CRDs that currently serve kinds.
    pub fn custom_names(&self) -> Vec<String> {
        self.custom.read().map(|c| c.keys().cloned().collect()).unwrap_or_default()
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
            out.extend(custom.values().flatten().filter(|k| !k.installing && pred(k.info())).cloned());
        }
        out
    }

    /// Every served kind but those installing: built-ins first, then custom kinds by CRD name.
    pub fn all(&self) -> Vec<ServedKind> {
        let mut out = self.builtin.clone();
        if let Ok(custom) = self.custom.read() {
            out.extend(custom.values().flatten().filter(|k| !k.installing).cloned());
        }
        out
    }

    /// The first served kind matching `pred`, cloning only that one (routing calls this on
    /// every request).
    fn first(&self, pred: impl Fn(&ResourceInfo) -> bool) -> Option<ServedKind> {
        if let Some(k) = self.builtin.iter().find(|k| pred(k.info())) {
            return Some(k.clone());
        }
        let custom = self.custom.read().ok()?;
        custom.values().flatten().find(|k| pred(k.info())).cloned()
    }

    /// A kind served under `plural` in `group`, at any version (they share storage).
    pub fn find_resource(&self, group: &str, plural: &str) -> Option<ServedKind> {
        self.first(|i| i.group == group && i.plural == plural)
    }

    /// The kind served at `group/version` under `plural`.
    pub fn find(&self, group: &str, version: &str, plural: &str) -> Option<ServedKind> {
        self.first(|i| i.group == group && i.version == version && i.plural == plural)
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
