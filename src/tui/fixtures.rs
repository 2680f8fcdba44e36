//! Test fixtures: CRDs in each state a registration can be in, tables of any size, a
//! state at a fixed clock, and a migration's plan and journal, built with small builders.

use crate::cluster::registrations::Crd;
use crate::migrate::journal::{self, BackupSummary, Order, SourceKind, journal_id};
use crate::migrate::model::Mapping;
use crate::migrate::plan::{NamespacePlan, PlannedStep, Prepared, Validation, describe, forward_steps};
use crate::migrate::{Identity, Migration, Phase, Plan, StepState};
use crate::tui::action::Msg;
use crate::tui::model::Registration;
use crate::tui::state::{Connection, Namespaces, State, Target};
use crate::tui::table::{Column, ObjKey, Row, TableData};
use crate::tui::theme::Theme;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};
use std::cmp::Ordering;
use std::path::Path;

/// The fixed clock of every test: ages read the same on every run.
pub fn now() -> Timestamp {
    "2026-11-22T12:00:00Z".parse().expect("timestamp")
}

/// A CRD builder: `demo.example.com`, namespaced, one version `v1` with a schema.
pub struct CrdBuilder {
    doc: Value,
}

pub fn crd(plural: &str, kind: &str) -> CrdBuilder {
    let singular = kind.to_ascii_lowercase();
    let names = json!({"plural": plural, "singular": singular, "kind": kind, "listKind": format!("{kind}List")});
    CrdBuilder {
        doc: json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.demo.example.com"), "creationTimestamp": "2026-11-22T11:00:00Z"},
            "spec": {"group": "demo.example.com", "scope": "Namespaced", "names": names.clone(),
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "spec": {"type": "object", "description": "What the user wants.", "required": ["size"], "properties": {
                            "size": {"type": "integer", "description": "How big."},
                            "replicas": {"type": "integer"},
                            "ports": {"type": "array", "items": {"type": "object", "properties": {"port": {"type": "integer"}}}}}},
                        "status": {"type": "object", "properties": {"phase": {"type": "string"}, "replicas": {"type": "integer"}}}}}}}]},
            "status": {"acceptedNames": names, "conditions": [
                condition("NamesAccepted", "True", "NoConflicts", "no conflicts found"),
                condition("Established", "True", "InitialNamesAccepted", "the initial names have been accepted")]}
        }),
    }
}

fn condition(type_: &str, status: &str, reason: &str, message: &str) -> Value {
    json!({"type": type_, "status": status, "reason": reason, "message": message, "lastTransitionTime": "2026-11-22T11:55:00Z"})
}

impl CrdBuilder {
    pub fn short_names(mut self, names: &[&str]) -> Self {
        self.doc["spec"]["names"]["shortNames"] = json!(names);
        self.doc["status"]["acceptedNames"]["shortNames"] = json!(names);
        self
    }
    pub fn cluster_scoped(mut self) -> Self {
        self.doc["spec"]["scope"] = json!("Cluster");
        self
    }
    /// `/status` and `/scale` on `.spec.replicas`, `.status.replicas`, with a selector.
    pub fn subresources(mut self) -> Self {
        self.doc["spec"]["versions"][0]["subresources"] = json!({"status": {}, "scale": {
            "specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas",
            "labelSelectorPath": ".status.selector"}});
        self
    }
    pub fn printer_column(mut self, name: &str, type_: &str, path: &str) -> Self {
        let cols = &mut self.doc["spec"]["versions"][0]["additionalPrinterColumns"];
        if cols.is_null() {
            *cols = json!([]);
        }
        if let Some(list) = cols.as_array_mut() {
            list.push(json!({"name": name, "type": type_, "jsonPath": path}));
        }
        self
    }
    /// A short name another CRD holds: refused, so not established.
    pub fn short_name_conflict(mut self, short: &str) -> Self {
        self.doc["spec"]["names"]["shortNames"] = json!([short]);
        self.doc["status"]["conditions"] = json!([
            condition("NamesAccepted", "False", "ShortNamesConflict", &format!("\"{short}\" is already in use")),
            condition("Established", "False", "NotAccepted", "not all names are accepted")
        ]);
        self
    }
    pub fn terminating(mut self) -> Self {
        self.doc["metadata"]["deletionTimestamp"] = json!("2026-11-22T11:58:00Z");
        if let Some(list) = self.doc["status"]["conditions"].as_array_mut() {
            list.push(condition(
                "Terminating",
                "True",
                "InstanceDeletionInProgress",
                "CustomResource deletion is in progress",
            ));
        }
        self
    }
    /// Replaces `v1`'s `.spec` schema.
    pub fn spec_schema(mut self, spec: Value) -> Self {
        self.doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"] = spec;
        self
    }
    pub fn build(self) -> Crd {
        serde_json::from_value(self.doc).expect("crd fixture")
    }
    pub fn registration(self, count: Option<u64>) -> Registration {
        Registration::new(self.build(), count)
    }
}

/// The demo's shape: healthy, with subresources, in conflict, terminating, cluster-scoped.
pub fn registrations() -> Vec<Registration> {
    vec![
        crd("widgets", "Widget")
            .short_names(&["wd"])
            .subresources()
            .printer_column("Replicas", "integer", ".spec.replicas")
            .printer_column("Phase", "string", ".status.phase")
            .registration(Some(180)),
        crd("gadgets", "Gadget").short_name_conflict("wd").registration(None),
        crd("legacyjobs", "LegacyJob").terminating().registration(Some(1)),
        crd("clusterpolicies", "ClusterPolicy").cluster_scoped().registration(Some(25)),
    ]
}

/// A local, colourful state at the fixed clock, 100×30, with `registrations()` loaded.
pub fn state() -> State {
    let target = Target {
        connection: Connection::Local,
        context: "local".into(),
        server: "/tmp/demo".into(),
        shell: "kubectl crd --local=/tmp/demo".into(),
    };
    let mut s = State::new(target, Namespaces::One("default".into()), false, Theme { color: true }, now());
    s.size = (100, 30);
    s.journal_root = Some(JOURNALS.into());
    crate::tui::update::apply(&mut s, Msg::Registrations(Ok(registrations())));
    s
}

/// Where the fixture state keeps migration journals (nothing is written there).
pub const JOURNALS: &str = "/tmp/kubectl-crd-test-journals";

fn identity(group: &str, kind: &str, plural: &str) -> Identity {
    Identity {
        group: group.into(),
        version: "v1".into(),
        kind: kind.into(),
        plural: plural.into(),
        namespaced: true,
        status: true,
    }
}

/// The plan of moving the widgets to `gizmos.migrated.example.org`, with `problems`.
pub fn plan(problems: &[&str]) -> Plan {
    let (from, to) =
        (identity("demo.example.com", "Widget", "widgets"), identity("migrated.example.org", "Gizmo", "gizmos"));
    let order = Order::NewFirst;
    Plan {
        id: journal_id(&from.crd_name(), &to.crd_name()),
        source: SourceKind::Cluster,
        source_label: from.crd_name(),
        old_crd_name: from.crd_name(),
        new_crd_name: to.crd_name(),
        notes: vec![],
        tpr_names: None,
        order,
        new_crd_exists: false,
        namespaces: vec![NamespacePlan {
            namespace: "default".into(),
            objects: 180,
            with_status: 170,
            target: "default".into(),
            target_exists: true,
        }],
        objects: 180,
        dependents: vec![],
        unchecked: vec![],
        controllers: vec![],
        conflicts: vec![],
        validation: Validation::Deferred { reason: "the new CRD is not served yet".into() },
        problems: problems.iter().map(|p| p.to_string()).collect(),
        steps: forward_steps(SourceKind::Cluster, order)
            .into_iter()
            .map(|step| PlannedStep { step, destructive: step.is_destructive(), description: describe(step, order) })
            .collect(),
        prepared: Prepared {
            mapping: Some(Mapping {
                from: from.clone(),
                to: to.clone(),
                versions: Default::default(),
                into_namespace: None,
            }),
            validation_crd: Some(identity("v0.migrate.kubectl-crd.io", "Gizmo", "gizmos")),
            ..Prepared::default()
        },
        from,
        to,
    }
}

/// The cluster the fixture journals are made on: the local engine of [`state`].
pub fn here() -> crate::cluster::ClusterIdentity {
    crate::cluster::ClusterIdentity {
        server: None,
        data_dir: Some("/tmp/demo".into()),
        uid: Some("kube-system-uid".into()),
    }
}

/// A real journal of [`plan`] in `dir` (created, or the one there) whose first `done`
/// forward steps are recorded as done (and the next one as started when `started`),
/// opened as a driver opens it.
pub fn migration(dir: &Path, done: usize, started: bool) -> Migration {
    let m = match Migration::open(dir) {
        Ok(m) => m,
        Err(_) => Migration::create(&plan(&[]), dir, &here()).expect("journal"),
    };
    let mut state = m.state().clone();
    for (i, r) in state.forward.iter_mut().enumerate() {
        (r.state, r.summary) = match i.cmp(&done) {
            Ordering::Less => (StepState::Done, Some(format!("{} done", r.step))),
            Ordering::Equal if started => (StepState::Started, None),
            _ => (StepState::Pending, None),
        };
    }
    state.phase = if done >= state.forward.len() { Phase::Completed } else { Phase::Forward };
    state.rollback.clear();
    state.backup = (done > 1).then(|| BackupSummary { objects: 180, dependents: 0, per_namespace: Default::default() });
    journal::save_state(dir, &state).expect("save");
    Migration::open(dir).expect("open")
}

fn column(name: &str, type_: &str) -> Column {
    Column { name: name.into(), type_: type_.into(), format: String::new(), description: String::new(), priority: 0 }
}

/// `n` widgets in `default` as the server tabulates them.
pub fn widget_table(n: usize) -> TableData {
    let created: Timestamp = "2026-11-22T11:30:00Z".parse().expect("timestamp");
    TableData {
        columns: vec![
            column("Name", "string"),
            column("Replicas", "integer"),
            column("Phase", "string"),
            column("Age", "date"),
        ],
        rows: (0..n)
            .map(|i| Row {
                key: ObjKey::new(Some("default"), &format!("widget-{i:03}")),
                cells: vec![
                    format!("widget-{i:03}"),
                    (i % 4).to_string(),
                    if i % 3 == 0 { "Running" } else { "Stopped" }.into(),
                    "30m".into(),
                ],
                created: Some(created),
            })
            .collect(),
        remaining: 0,
    }
}

/// One widget object as the server returns it.
pub fn widget(name: &str, replicas: i64) -> Value {
    json!({"apiVersion": "demo.example.com/v1", "kind": "Widget",
        "metadata": {"name": name, "namespace": "default", "generation": 3, "resourceVersion": "4242",
            "creationTimestamp": "2026-11-22T11:30:00Z", "labels": {"app": name}},
        "spec": {"size": 2, "replicas": replicas, "ports": [{"port": 80}]},
        "status": {"observedGeneration": 2, "phase": "Running", "replicas": replicas, "selector": format!("app={name}"),
            "conditions": [{"type": "Ready", "status": "True", "reason": "AllGood", "message": "every replica answers",
                "lastTransitionTime": "2026-11-22T11:50:00Z"}]}})
}

/// A key press.
pub fn key(code: KeyCode) -> Event {
    Event::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

/// Presses keys (characters of `text`) one by one, collecting the effects.
pub fn type_keys(state: &mut State, text: &str) -> Vec<crate::tui::action::Effect> {
    text.chars().flat_map(|c| crate::tui::on_event(state, key(KeyCode::Char(c)))).collect()
}

/// Presses one key.
pub fn press(state: &mut State, code: KeyCode) -> Vec<crate::tui::action::Effect> {
    crate::tui::on_event(state, key(code))
}

/// Presses Ctrl and a key.
pub fn ctrl(state: &mut State, c: char) -> Vec<crate::tui::action::Effect> {
    crate::tui::on_event(state, Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)))
}

/// The name of the screen on top.
pub fn top(state: &State) -> &'static str {
    state.screen().name()
}

/// Opens the widgets' resources with their table loaded; returns the watch id.
pub fn open_widgets(s: &mut State, rows: usize) -> u64 {
    type_keys(s, "G");
    let effects = press(s, KeyCode::Enter);
    let Some(crate::tui::action::Effect::LoadTable { watch, kind, namespaces, selector }) = effects.last().cloned()
    else {
        panic!("expected a list+watch, got {effects:?}")
    };
    assert_eq!((kind.plural.as_str(), namespaces, selector), ("widgets", Namespaces::One("default".into()), None));
    crate::tui::update::apply(s, Msg::Table { watch, result: Ok(widget_table(rows)) });
    s.prepare();
    watch
}
