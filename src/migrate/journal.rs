//! The journal on disk: where a migration stands, and the backup nothing is deleted
//! without.
//!
//! ```text
//! <journal>/journal.json         the state: identities, order, controllers, steps and their state
//! <journal>/new-crd.yaml         the new registration to create
//! <journal>/old-crd.yaml         the old registration (derived, for exported data)
//! <journal>/input.yaml           exported data given with --data (file sources)
//! <journal>/backup/objects/<namespace>.yaml   every object, status included (_cluster.yaml: cluster-scoped)
//! <journal>/backup/dependents.yaml            objects of any kind that point at them, with their ownerReferences
//! <journal>/backup/old-crd.yaml               the old registration as the cluster had it
//! <journal>/backup/SHA256SUMS                 `sha256sum -c` manifest of the above
//! ```
//!
//! Every file is written durably: to a temporary name, fsynced, renamed, and the directory
//! fsynced; the state changes only by such a replace. The backup is read back and checked
//! against its manifest and the objects in memory before the backup step is done.

use super::MigrateError;
use super::model::{Identity, Mapping, resource_type};
use super::step::Step;
use crate::cluster::{ClusterIdentity, ResourceType};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

pub const JOURNAL_FILE: &str = "journal.json";
pub const NEW_CRD_FILE: &str = "new-crd.yaml";
pub const OLD_CRD_FILE: &str = "old-crd.yaml";
pub const INPUT_FILE: &str = "input.yaml";
pub const BACKUP_DIR: &str = "backup";
pub const MANIFEST_FILE: &str = "SHA256SUMS";
const OBJECTS_DIR: &str = "objects";
const DEPENDENTS_FILE: &str = "dependents.yaml";
/// The file of cluster-scoped objects (`_` is never in a namespace name).
const CLUSTER_FILE: &str = "_cluster.yaml";
const FORMAT: u32 = 1;

/// Where the objects come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SourceKind {
    /// A CRD on the cluster, with its objects.
    Cluster,
    /// A registration file (TPR or CRD) with exported data.
    Files,
}

/// In which order the registrations change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Order {
    /// The new names are free: the new CRD is created before anything is deleted.
    NewFirst,
    /// The new names are the old registration's: it must be gone first.
    OldFirst,
}

/// Where the journal's migration stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Phase {
    Forward,
    Completed,
    Rollback,
    RolledBack,
}

impl Phase {
    /// Whether nothing is left to do.
    pub fn finished(self) -> bool {
        matches!(self, Phase::Completed | Phase::RolledBack)
    }
}

/// A step's state in the journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StepState {
    Pending,
    /// Begun and not recorded as done: it runs again (every step is idempotent).
    Started,
    Done,
}

/// One step of a phase.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepRecord {
    pub step: Step,
    pub state: StepState,
    /// What it did, once done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
}

impl StepRecord {
    pub fn pending(step: Step) -> Self {
        StepRecord { step, state: StepState::Pending, summary: None }
    }
}

/// A resource type as the journal keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRecord {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub plural: String,
    pub namespaced: bool,
}

impl ResourceRecord {
    pub fn of(r: &ResourceType) -> Self {
        ResourceRecord {
            group: r.group.clone(),
            version: r.version.clone(),
            kind: r.kind.clone(),
            plural: r.plural.clone(),
            namespaced: r.namespaced,
        }
    }

    /// The resource as the cluster layer addresses it (with `/scale`: controllers are
    /// only recorded when they have it).
    pub fn resource(&self) -> ResourceType {
        let mut r = resource_type(&self.group, &self.version, &self.kind, &self.plural, self.namespaced);
        r.scale = true;
        r
    }

    pub fn qualified_name(&self) -> String {
        if self.group.is_empty() { self.plural.clone() } else { format!("{}.{}", self.plural, self.group) }
    }
}

/// A controller scaled to 0 for the migration's length.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Controller {
    /// As the user wrote it (`ns/deployment` or `ns/resource/name`).
    pub spec: String,
    pub resource: ResourceRecord,
    pub namespace: String,
    pub name: String,
    /// Its replicas before the migration, recorded before it is scaled down.
    #[serde(default)]
    pub replicas: Option<i32>,
}

/// What the backup holds, once written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BackupSummary {
    pub objects: usize,
    pub dependents: usize,
    /// Objects per namespace (`""`: cluster-scoped).
    pub per_namespace: BTreeMap<String, usize>,
}

/// The journal's state file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JournalState {
    pub format: u32,
    pub id: String,
    pub created: String,
    pub source: SourceKind,
    /// The old registration's name (`plural.group`; for a TPR, the CRD name derived).
    pub old_crd_name: String,
    /// What the user named as the source (CRD name or file).
    pub source_label: String,
    pub new_crd_name: String,
    /// The new CRD was there before the migration (it is then never deleted).
    pub new_crd_preexisted: bool,
    pub order: Order,
    pub mapping: Mapping,
    /// The temporary CRD the objects are dry-run against (see `steps`).
    pub validation_crd: Identity,
    pub controllers: Vec<Controller>,
    pub phase: Phase,
    pub forward: Vec<StepRecord>,
    #[serde(default)]
    pub rollback: Vec<StepRecord>,
    #[serde(default)]
    pub backup: Option<BackupSummary>,
    /// Why the migration was undone, when a refusal undid it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
    /// The cluster the migration runs on: no other cluster lists or resumes the journal.
    /// Journals of older versions have none (see [`Belonging::Unknown`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<ClusterIdentity>,
}

impl JournalState {
    pub(crate) fn new_format() -> u32 {
        FORMAT
    }

    /// The steps of the current (or last) phase.
    pub fn steps(&self) -> &[StepRecord] {
        match self.phase {
            Phase::Forward | Phase::Completed => &self.forward,
            Phase::Rollback | Phase::RolledBack => &self.rollback,
        }
    }

    pub(crate) fn steps_mut(&mut self) -> &mut Vec<StepRecord> {
        match self.phase {
            Phase::Forward | Phase::Completed => &mut self.forward,
            Phase::Rollback | Phase::RolledBack => &mut self.rollback,
        }
    }

    /// Whether a forward step has begun.
    pub fn began(&self, step: Step) -> bool {
        self.forward.iter().any(|r| r.step == step && r.state != StepState::Pending)
    }
}

/// Whether a journal was made on a given cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Belonging {
    Here,
    /// Made on this other cluster: running it here would act on the wrong objects.
    Elsewhere(ClusterIdentity),
    /// Written by a version that did not record the cluster: it is neither listed nor
    /// resumed unless the user names it and says it is this cluster's.
    Unknown,
}

impl JournalState {
    /// Whether the journal was made on `here`.
    pub fn belonging(&self, here: &ClusterIdentity) -> Belonging {
        match &self.cluster {
            Some(c) if c.same_cluster(here) => Belonging::Here,
            Some(c) => Belonging::Elsewhere(c.clone()),
            None => Belonging::Unknown,
        }
    }
}

/// An object of another kind that points at migrated objects through ownerReferences.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Dependent {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub plural: String,
    pub namespaced: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    pub name: String,
    pub uid: String,
    /// Its ownerReferences when the backup was taken.
    pub owner_references: Vec<Value>,
}

impl Dependent {
    pub fn resource(&self) -> ResourceType {
        resource_type(&self.group, &self.version, &self.kind, &self.plural, self.namespaced)
    }

    pub fn api_version(&self) -> String {
        if self.group.is_empty() { self.version.clone() } else { format!("{}/{}", self.group, self.version) }
    }

    /// `Kind ns/name`, for messages.
    pub fn label(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{} {ns}/{}", self.kind, self.name),
            None => format!("{} {}", self.kind, self.name),
        }
    }
}

/// Everything the backup holds.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Backup {
    pub objects: Vec<Value>,
    pub dependents: Vec<Dependent>,
    /// The old registration (cluster sources).
    pub old_crd: Option<Value>,
}

/// The default place for journals: `<data dir>/kubectl-crd/migrations`.
pub fn default_root() -> Option<PathBuf> {
    dirs::data_dir().map(|d| d.join("kubectl-crd").join("migrations"))
}

/// A journal id from the old and new registration names, safe as a directory name.
pub fn journal_id(old: &str, new: &str) -> String {
    let clean = |s: &str| {
        s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '-' { c } else { '_' }).collect::<String>()
    };
    format!("{}--to--{}", clean(old), clean(new))
}

/// The directory a new run of the migration `id` on `here` takes under `root`:
/// `<root>/<id>`, or `<root>/<id>-2`, ... when finished runs, or runs on other clusters,
/// hold the earlier ones. A run of the same migration still in progress on this cluster
/// (or on a cluster the journal does not record) is refused: it is resumed, not started
/// again.
pub fn fresh_dir(root: &Path, id: &str, here: &ClusterIdentity) -> Result<PathBuf, MigrateError> {
    let mut n = 1u64;
    loop {
        let dir = if n == 1 { root.join(id) } else { root.join(format!("{id}-{n}")) };
        n += 1;
        match load_state(&dir) {
            Err(_) if !dir.join(JOURNAL_FILE).exists() => return Ok(dir),
            Ok(state) if !state.phase.finished() && !matches!(state.belonging(here), Belonging::Elsewhere(_)) => {
                return Err(MigrateError::unfinished(&dir, &state));
            }
            _ => continue,
        }
    }
}

/// Journals under `root`, with their state (unreadable ones are skipped), oldest first.
pub fn list_journals(root: &Path) -> Vec<(PathBuf, JournalState)> {
    let Ok(entries) = fs::read_dir(root) else { return vec![] };
    let mut out: Vec<(PathBuf, JournalState)> =
        entries.filter_map(Result::ok).filter_map(|e| load_state(&e.path()).ok().map(|s| (e.path(), s))).collect();
    out.sort_by(|a, b| a.1.created.cmp(&b.1.created));
    out
}

/// The journals under `root` made on `here`, oldest first, and how many others record no
/// cluster (they are offered to nobody; see [`Belonging::Unknown`]).
pub fn journals_here(root: &Path, here: &ClusterIdentity) -> (Vec<(PathBuf, JournalState)>, usize) {
    let (mut mine, mut unknown) = (vec![], 0);
    for (dir, state) in list_journals(root) {
        match state.belonging(here) {
            Belonging::Here => mine.push((dir, state)),
            Belonging::Unknown => unknown += 1,
            Belonging::Elsewhere(_) => {}
        }
    }
    (mine, unknown)
}

/// Reads the journal in `dir` for a run on `here`: refused when it was made on another
/// cluster; one that records no cluster is taken only with `claim` (the user says it is
/// this cluster's), and then records it.
pub fn load_here(dir: &Path, here: &ClusterIdentity, claim: bool) -> Result<JournalState, MigrateError> {
    let mut state = load_state(dir)?;
    match state.belonging(here) {
        Belonging::Here => Ok(state),
        Belonging::Elsewhere(theirs) => Err(MigrateError::OtherCluster {
            dir: dir.to_path_buf(),
            theirs: Box::new(theirs),
            here: Box::new(here.clone()),
        }),
        Belonging::Unknown if claim => {
            state.cluster = Some(here.clone());
            save_state(dir, &state)?;
            Ok(state)
        }
        Belonging::Unknown => {
            Err(MigrateError::UnknownCluster { dir: dir.to_path_buf(), here: Box::new(here.clone()) })
        }
    }
}

fn journal_error(path: &Path, reason: impl std::fmt::Display) -> MigrateError {
    MigrateError::Journal { path: path.to_path_buf(), reason: reason.to_string() }
}

/// Reads a journal's state.
pub fn load_state(dir: &Path) -> Result<JournalState, MigrateError> {
    let path = dir.join(JOURNAL_FILE);
    let text = fs::read_to_string(&path).map_err(|e| journal_error(&path, format!("cannot read it: {e}")))?;
    let state: JournalState =
        serde_json::from_str(&text).map_err(|e| journal_error(&path, format!("cannot parse it: {e}")))?;
    if state.format != FORMAT {
        return Err(journal_error(&path, format!("format {} is not the {FORMAT} this build reads", state.format)));
    }
    Ok(state)
}

/// Writes a journal's state durably.
pub fn save_state(dir: &Path, state: &JournalState) -> Result<(), MigrateError> {
    let path = dir.join(JOURNAL_FILE);
    let bytes = serde_json::to_vec_pretty(state).map_err(|e| journal_error(&path, e))?;
    write_durable(&path, &bytes).map_err(|e| journal_error(&path, format!("cannot write it: {e}")))
}

/// Creates the journal directory (and its parents, fsynced).
pub fn create_dir(dir: &Path) -> Result<(), MigrateError> {
    fs::create_dir_all(dir).map_err(|e| journal_error(dir, format!("cannot create the directory: {e}")))?;
    if let Some(parent) = dir.parent() {
        let _ = sync_dir(parent);
    }
    Ok(())
}

/// Writes `bytes` to `path` so that after a crash the file is either the old or the new one.
pub fn write_durable(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let mut file = File::create(&tmp)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    drop(file);
    fs::rename(&tmp, path)?;
    match path.parent() {
        Some(dir) => sync_dir(dir),
        None => Ok(()),
    }
}

fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Documents as multi-document YAML.
pub fn to_yaml_docs(docs: &[&Value]) -> Result<String, String> {
    let mut out = String::new();
    for doc in docs {
        out.push_str("---\n");
        out.push_str(&serde_saphyr::to_string(doc).map_err(|e| e.to_string())?);
    }
    Ok(out)
}

/// Multi-document YAML back to documents. The parser's budgets (1,024 documents, 250,000
/// nodes by default) guard against hostile input; the journal's files are our own and
/// checked against their SHA-256 sums first, and a namespace may hold many thousands of
/// objects, so they are read without them.
pub fn from_yaml_docs(text: &str) -> Result<Vec<Value>, String> {
    let options = serde_saphyr::options! { budget: None };
    let docs: Vec<Value> = serde_saphyr::from_multiple_with_options(text, options).map_err(|e| e.to_string())?;
    Ok(docs.into_iter().filter(|d| !d.is_null()).collect())
}

/// Writes one YAML document file in the journal.
pub fn write_doc(dir: &Path, file: &str, doc: &Value) -> Result<(), MigrateError> {
    let path = dir.join(file);
    let text = to_yaml_docs(&[doc]).map_err(|e| journal_error(&path, e))?;
    write_durable(&path, text.as_bytes()).map_err(|e| journal_error(&path, format!("cannot write it: {e}")))
}

/// Reads documents from a YAML file in the journal.
pub fn read_docs(dir: &Path, file: &str) -> Result<Vec<Value>, MigrateError> {
    let path = dir.join(file);
    let text = fs::read_to_string(&path).map_err(|e| journal_error(&path, format!("cannot read it: {e}")))?;
    from_yaml_docs(&text).map_err(|e| journal_error(&path, e))
}

/// Writes the backup under `<journal>/backup`, then reads it back and checks it against
/// its manifest and `backup` itself. Any failure is a [`MigrateError::Backup`].
pub fn write_backup(journal: &Path, backup: &Backup) -> Result<BackupSummary, MigrateError> {
    let dir = journal.join(BACKUP_DIR);
    let fail = |reason: String| MigrateError::Backup { path: dir.clone(), reason };
    let objects_dir = dir.join(OBJECTS_DIR);
    fs::create_dir_all(&objects_dir).map_err(|e| fail(format!("cannot create {}: {e}", objects_dir.display())))?;
    sync_dir(&dir).and_then(|()| sync_dir(journal)).map_err(|e| fail(format!("cannot sync the directory: {e}")))?;

    let mut files: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    let mut per_namespace = BTreeMap::new();
    for obj in &backup.objects {
        let ns = obj.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or_default();
        let file = if ns.is_empty() { CLUSTER_FILE.to_string() } else { format!("{ns}.yaml") };
        files.entry(format!("{OBJECTS_DIR}/{file}")).or_default().push(obj);
        *per_namespace.entry(ns.to_string()).or_insert(0) += 1;
    }
    let dependents: Vec<Value> = backup
        .dependents
        .iter()
        .map(serde_json::to_value)
        .collect::<Result<_, _>>()
        .map_err(|e| fail(e.to_string()))?;
    files.insert(DEPENDENTS_FILE.into(), dependents.iter().collect());
    if let Some(crd) = &backup.old_crd {
        files.insert(OLD_CRD_FILE.into(), vec![crd]);
    }

    let mut manifest = String::new();
    for (name, docs) in &files {
        let text = to_yaml_docs(docs).map_err(|e| fail(format!("cannot write {name} as YAML: {e}")))?;
        let path = dir.join(name);
        write_durable(&path, text.as_bytes()).map_err(|e| fail(format!("cannot write {}: {e}", path.display())))?;
        manifest.push_str(&format!("{}  {name}\n", hex(&Sha256::digest(text.as_bytes()))));
    }
    let manifest_path = dir.join(MANIFEST_FILE);
    write_durable(&manifest_path, manifest.as_bytes())
        .map_err(|e| fail(format!("cannot write {}: {e}", manifest_path.display())))?;

    let read = read_backup(journal).map_err(|e| match e {
        MigrateError::BackupDamaged { reason, .. } => fail(format!("reading it back: {reason}")),
        other => other,
    })?;
    if read != *backup && !same_backup(&read, backup) {
        return Err(fail("what was read back differs from what was written".into()));
    }
    Ok(BackupSummary { objects: backup.objects.len(), dependents: backup.dependents.len(), per_namespace })
}

/// Order aside, the same objects and dependents.
fn same_backup(a: &Backup, b: &Backup) -> bool {
    let key = |v: &Value| serde_json::to_string(v).unwrap_or_default();
    let mut x: Vec<String> = a.objects.iter().map(key).collect();
    let mut y: Vec<String> = b.objects.iter().map(key).collect();
    x.sort();
    y.sort();
    x == y && a.dependents == b.dependents && a.old_crd == b.old_crd
}

/// Reads the backup, checking every file against the manifest.
pub fn read_backup(journal: &Path) -> Result<Backup, MigrateError> {
    let dir = journal.join(BACKUP_DIR);
    let fail = |reason: String| MigrateError::BackupDamaged { path: dir.clone(), reason };
    let manifest =
        fs::read_to_string(dir.join(MANIFEST_FILE)).map_err(|e| fail(format!("cannot read {MANIFEST_FILE}: {e}")))?;
    let mut backup = Backup::default();
    for line in manifest.lines().filter(|l| !l.trim().is_empty()) {
        let Some((sum, name)) = line.split_once("  ") else {
            return Err(fail(format!("{MANIFEST_FILE} has a malformed line: {line:?}")));
        };
        let bytes = fs::read(dir.join(name)).map_err(|e| fail(format!("cannot read {name}: {e}")))?;
        if hex(&Sha256::digest(&bytes)) != sum {
            return Err(fail(format!("{name} does not match its SHA-256 in {MANIFEST_FILE}: the backup is damaged")));
        }
        let text = String::from_utf8(bytes).map_err(|_| fail(format!("{name} is not UTF-8")))?;
        let docs = from_yaml_docs(&text).map_err(|e| fail(format!("cannot parse {name}: {e}")))?;
        if name == DEPENDENTS_FILE {
            for d in docs {
                backup.dependents.push(serde_json::from_value(d).map_err(|e| fail(format!("{name}: {e}")))?);
            }
        } else if name == OLD_CRD_FILE {
            backup.old_crd = docs.into_iter().next();
        } else {
            backup.objects.extend(docs);
        }
    }
    Ok(backup)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
#[path = "journal_tests.rs"]
mod tests;
