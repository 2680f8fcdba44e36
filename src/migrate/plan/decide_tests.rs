//! Table tests of [`decide`]: a snapshot of what was read, and the plan (or the error) it
//! gives. Snapshots are built with small builders: [`reg`] for registrations, [`obj`] for
//! objects, [`cluster`] and [`files`] for the snapshot around them.

use super::*;
use crate::migrate::convert::TprNames;
use crate::migrate::plan::{Rejection, Request, Source, SourceRead};
use serde_json::json;

/// A registration: `plural.group`, namespaced, version `v1`, not yet served.
#[derive(Clone)]
struct Reg {
    group: &'static str,
    plural: &'static str,
    kind: &'static str,
    short: &'static [&'static str],
    scope: &'static str,
    versions: &'static [&'static str],
    /// Its versions are served.
    served: bool,
    /// Its conditions: `None` when it was never registered (a file), else whether its
    /// names are accepted (and so it is Established).
    accepted: Option<bool>,
}

fn reg(group: &'static str, plural: &'static str, kind: &'static str) -> Reg {
    Reg { group, plural, kind, short: &[], scope: "Namespaced", versions: &["v1"], served: true, accepted: None }
}

impl Reg {
    fn short(self, short: &'static [&'static str]) -> Reg {
        Reg { short, ..self }
    }
    fn cluster_scoped(self) -> Reg {
        Reg { scope: "Cluster", ..self }
    }
    fn versions(self, versions: &'static [&'static str]) -> Reg {
        Reg { versions, ..self }
    }
    /// Its versions stored, not served.
    fn unserved(self) -> Reg {
        Reg { served: false, ..self }
    }
    /// Registered, names accepted and Established.
    fn served(self) -> Reg {
        Reg { accepted: Some(true), ..self }
    }
    /// Registered, names refused.
    fn refused(self) -> Reg {
        Reg { accepted: Some(false), ..self }
    }
    fn name(&self) -> String {
        format!("{}.{}", self.plural, self.group)
    }
    fn api_version(&self) -> String {
        format!("{}/{}", self.group, self.versions[0])
    }
    fn doc(&self) -> Value {
        let versions: Vec<Value> = self
            .versions
            .iter()
            .enumerate()
            .map(|(i, v)| {
                json!({"name": v, "served": self.served, "storage": i == 0,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}})
            })
            .collect();
        let names = json!({"plural": self.plural, "singular": self.kind.to_ascii_lowercase(), "kind": self.kind,
            "listKind": format!("{}List", self.kind), "shortNames": self.short});
        let mut doc = json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": self.name()},
            "spec": {"group": self.group, "scope": self.scope, "names": names, "versions": versions}
        });
        if let Some(accepted) = self.accepted {
            let status = if accepted { "True" } else { "False" };
            let condition = |type_: &str| {
                json!({"type": type_, "status": status, "reason": "Test", "message": format!("{type_} is {status}"),
                    "lastTransitionTime": "2026-11-22T02:36:55Z"})
            };
            doc["metadata"]["uid"] = json!(format!("uid-{}", self.name()));
            doc["status"] = json!({"acceptedNames": names, "storedVersions": [self.versions[0]],
                "conditions": [condition("NamesAccepted"), condition("Established")]});
        }
        doc
    }
    fn crd(&self) -> Crd {
        serde_json::from_value(self.doc()).expect("a CRD")
    }
}

/// An object of `r`'s kind.
fn obj(r: &Reg, namespace: Option<&str>, name: &str) -> Value {
    let mut meta = json!({"name": name, "uid": format!("uid-{name}")});
    if let Some(ns) = namespace {
        meta["namespace"] = json!(ns);
    }
    json!({"apiVersion": r.api_version(), "kind": r.kind, "metadata": meta, "spec": {}})
}

fn deleting(mut o: Value) -> Value {
    o["metadata"]["deletionTimestamp"] = json!("2026-11-22T02:36:55Z");
    o
}

fn request() -> Request {
    Request {
        from: Source::Crd { name: String::new() },
        to: None,
        tpr_names: None,
        controllers: vec![],
        versions: BTreeMap::new(),
        into_namespace: None,
        validate: true,
    }
}

/// A snapshot of moving the served `old` (its objects `objects`) to `new`: the cluster
/// holds the old CRD alone.
fn cluster(old: &Reg, new: &Reg, objects: Vec<Value>) -> Observed {
    let old = old.clone().served();
    let source = SourceRead {
        kind: SourceKind::Cluster,
        label: old.name(),
        doc: old.doc(),
        crd: old.crd(),
        objects,
        tpr_names: None,
    };
    let mut o = Observed::new(source, Some(new.doc()), vec![], &request());
    o.crds = vec![old.crd()];
    o
}

/// A snapshot of moving a registration file `old` and its exported `objects` (the new
/// CRD given with `--to` when `new` is some).
fn files(old: &Reg, new: Option<&Reg>, objects: Vec<Value>, tpr_names: Option<TprNames>) -> Observed {
    let source = SourceRead {
        kind: SourceKind::Files,
        label: "crontab.yaml".into(),
        doc: old.doc(),
        crd: old.crd(),
        objects,
        tpr_names,
    };
    Observed::new(source, new.map(Reg::doc), vec![], &request())
}

fn crontabs() -> Reg {
    reg("stable.example.com", "crontabs", "CronTab").short(&["ct"])
}

fn schedules() -> Reg {
    reg("new.example.com", "schedules", "Schedule").short(&["sc"])
}

/// What a case expects: an error saying something, or a plan in some order with
/// problems that say something (in order).
enum Want {
    Error(&'static str),
    Plan { order: Order, problems: &'static [&'static str] },
}

#[test]
fn plans_from_snapshots() {
    let ct = crontabs();
    let two = || vec![obj(&ct, Some("a"), "one"), obj(&ct, Some("b"), "two")];
    let with = |mut o: Observed, f: &dyn Fn(&mut Observed)| {
        f(&mut o);
        o
    };
    let cases: Vec<(&str, Observed, Want)> = vec![
        (
            "a new group and kind: the new CRD first",
            cluster(&ct, &schedules(), two()),
            Want::Plan { order: Order::NewFirst, problems: &[] },
        ),
        (
            "the old CRD's own name, scope changed: the old CRD goes first",
            cluster(&ct, &ct.clone().cluster_scoped(), two()),
            Want::Plan { order: Order::OldFirst, problems: &[] },
        ),
        (
            "the same kind under the same name is no migration",
            cluster(&ct, &ct, two()),
            Want::Plan { order: Order::OldFirst, problems: &["serves the same kind as the old one"] },
        ),
        (
            "a CRD source needs --to",
            with(cluster(&ct, &schedules(), two()), &|o| o.target = None),
            Want::Error("give the new CRD document with --to FILE"),
        ),
        (
            "a ThirdPartyResource's own CRD is the new one",
            files(&ct, None, two(), Some(convert::names_for_kind("stable.example.com", "CronTab"))),
            Want::Plan { order: Order::NewFirst, problems: &[] },
        ),
        (
            "a new CRD that serves no version",
            cluster(&ct, &schedules().unserved(), two()),
            Want::Error("schedules.new.example.com serves no version"),
        ),
        (
            "--map-version to a version the new CRD serves",
            with(cluster(&ct, &schedules().versions(&["v2", "v1"]), two()), &|o| {
                o.versions = [("v1".into(), "v1".into())].into()
            }),
            Want::Plan { order: Order::NewFirst, problems: &[] },
        ),
        (
            "--map-version to a version the new CRD does not serve",
            with(cluster(&ct, &schedules(), two()), &|o| o.versions = [("v1".into(), "v9".into())].into()),
            Want::Error("schedules.new.example.com serves no version \"v9\""),
        ),
        (
            "exported objects of another group",
            files(&ct, Some(&schedules()), vec![obj(&schedules(), Some("a"), "stray")], None),
            Want::Error("objects not of group stable.example.com: a/stray (new.example.com/v1)"),
        ),
        (
            "a name another registration holds",
            with(cluster(&ct, &schedules(), two()), &|o| {
                o.crds.push(reg("new.example.com", "jobs", "Job").short(&["sc"]).served().crd())
            }),
            Want::Plan {
                order: Order::NewFirst,
                problems: &["name conflict: resource name \"sc\" is held by jobs.new.example.com"],
            },
        ),
        (
            "the new CRD there with its names refused",
            with(cluster(&ct, &schedules(), two()), &|o| o.crds.push(schedules().refused().crd())),
            Want::Plan { order: Order::NewFirst, problems: &["exists and its names are not accepted: NamesAccepted"] },
        ),
        (
            "the new CRD there with another kind",
            with(cluster(&ct, &schedules(), two()), &|o| {
                o.crds.push(reg("new.example.com", "schedules", "Plan").served().crd())
            }),
            Want::Plan { order: Order::NewFirst, problems: &["exists with kind Plan and scope Namespaced"] },
        ),
        (
            "the server refuses the new CRD's document",
            with(cluster(&ct, &schedules(), two()), &|o| o.new_crd_refused = Some("spec.names.plural: Invalid".into())),
            Want::Plan { order: Order::NewFirst, problems: &["the new CRD is not valid: spec.names.plural: Invalid"] },
        ),
        (
            "objects being deleted",
            cluster(&ct, &schedules(), vec![deleting(obj(&ct, Some("a"), "one")), obj(&ct, Some("a"), "two")]),
            Want::Plan {
                order: Order::NewFirst,
                problems: &["1 object(s) are being deleted and wait for finalizers (a/one)"],
            },
        ),
        (
            "cluster-scoped to namespaced says where to",
            cluster(&ct.clone().cluster_scoped(), &schedules(), vec![obj(&ct, None, "one")]),
            Want::Plan { order: Order::NewFirst, problems: &["--into-namespace NS"] },
        ),
        (
            "namespaced to cluster-scoped with one name in two namespaces",
            cluster(&ct, &schedules().cluster_scoped(), vec![obj(&ct, Some("a"), "x"), obj(&ct, Some("b"), "x")]),
            Want::Plan { order: Order::NewFirst, problems: &["several objects would share a name: x (2)"] },
        ),
        (
            "objects already under the served new kind, and what its dry run refused",
            with(cluster(&ct, &schedules(), two()), &|o| {
                o.crds.push(schedules().served().crd());
                o.under_new_kind = vec![ObjectKey { namespace: Some("b".into()), name: "two".into() }];
                o.dry_run = Some(vec![Rejection { object: "a/one".into(), message: "spec: Required".into() }]);
            }),
            Want::Plan {
                order: Order::NewFirst,
                problems: &[
                    "1 object(s) already exist under the new kind: b/two",
                    "the new schema refuses 1 object(s)",
                ],
            },
        ),
    ];
    for (name, observed, want) in cases {
        match (decide(&observed), want) {
            (Err(e), Want::Error(says)) => assert!(e.to_string().contains(says), "{name}: {e}"),
            (Ok(plan), Want::Plan { order, problems }) => {
                assert_eq!(plan.order, order, "{name}");
                assert_eq!(plan.problems.len(), problems.len(), "{name}: {:?}", plan.problems);
                for (got, says) in plan.problems.iter().zip(problems) {
                    assert!(got.contains(says), "{name}: {got:?} does not say {says:?}");
                }
                assert_eq!(plan.steps.iter().map(|s| s.step).collect::<Vec<_>>(), forward_steps(plan.source, order));
            }
            (Err(e), _) => panic!("{name}: {e}"),
            (Ok(plan), _) => panic!("{name}: planned, with problems {:?}", plan.problems),
        }
    }
}

#[test]
fn the_plan_counts_namespaces_and_says_how_objects_are_checked() {
    let ct = crontabs();
    let mut with_status = obj(&ct, Some("a"), "one");
    with_status["status"] = json!({"ok": true});
    let objects = vec![with_status, obj(&ct, Some("a"), "two"), obj(&ct, Some("b"), "three")];
    let mut o = cluster(&ct, &schedules(), objects);
    o.missing_namespaces = vec!["b".into()];
    let plan = decide(&o).expect("plans");
    let counts: Vec<(&str, usize, usize, bool)> =
        plan.namespaces.iter().map(|n| (n.namespace.as_str(), n.objects, n.with_status, n.target_exists)).collect();
    assert_eq!(counts, [("a", 2, 1, true), ("b", 1, 0, false)]);
    assert_eq!(plan.objects, 3);
    assert!(!plan.new_crd_exists);
    assert!(matches!(&plan.validation, Validation::Deferred { reason } if reason.contains("does not exist yet")));
    assert_eq!(plan.id, journal_id(&ct.name(), &schedules().name()));

    // Served already: checked when the snapshot holds a dry run, deferred to `run` if not.
    o.crds.push(schedules().served().crd());
    o.dry_run = Some(vec![]);
    let plan = decide(&o).expect("plans");
    assert!(plan.new_crd_exists);
    assert!(matches!(&plan.validation, Validation::Checked { objects: 3, rejected, .. } if rejected.is_empty()));
    o.dry_run = None;
    let plan = decide(&o).expect("plans");
    assert!(matches!(&plan.validation, Validation::Deferred { reason } if reason.contains("checked by 'run'")));
}

#[test]
fn the_new_crd_is_dry_run_as_itself_or_as_the_temporary_copy() {
    let ct = crontabs();
    let probe_group = |o: &Observed| {
        let sides = sides(o).expect("sides");
        new_crd_probe(o, &sides).map(|doc| doc["spec"]["group"].as_str().unwrap_or_default().to_string())
    };
    // Its name free: the document itself.
    assert_eq!(probe_group(&cluster(&ct, &schedules(), vec![])).as_deref(), Some("new.example.com"));
    // Its name the old CRD's: the copy under a group of its own.
    let copy = probe_group(&cluster(&ct, &ct.clone().cluster_scoped(), vec![])).expect("probed");
    assert!(copy.ends_with(names::VALIDATION_GROUP_SUFFIX), "{copy}");
    // There already: nothing to ask.
    let mut there = cluster(&ct, &schedules(), vec![]);
    there.crds.push(schedules().served().crd());
    assert_eq!(probe_group(&there), None);
}

#[test]
fn files_keep_their_objects_for_the_journal_and_clusters_do_not() {
    let ct = crontabs();
    let from_files = decide(&files(&ct, Some(&schedules()), vec![obj(&ct, Some("a"), "one")], None)).expect("plans");
    assert_eq!(from_files.prepared.inputs.len(), 1);
    assert!(!from_files.steps.iter().any(|s| s.step == Step::DeleteOldData));
    let from_cluster = decide(&cluster(&ct, &schedules(), vec![obj(&ct, Some("a"), "one")])).expect("plans");
    assert!(from_cluster.prepared.inputs.is_empty());
    assert_eq!(from_cluster.prepared.old_crd, ct.clone().served().doc());
}

#[test]
fn steps_put_the_new_crd_first_when_it_can() {
    let new_first = forward_steps(SourceKind::Cluster, Order::NewFirst);
    let pos = |steps: &[Step], s: Step| steps.iter().position(|x| *x == s).expect("present");
    assert!(pos(&new_first, Step::CreateNewCrd) < pos(&new_first, Step::DeleteOldData));
    let old_first = forward_steps(SourceKind::Cluster, Order::OldFirst);
    assert!(pos(&old_first, Step::DeleteOldCrd) < pos(&old_first, Step::CreateNewCrd));
    for steps in [&new_first, &old_first] {
        assert!(pos(steps, Step::Backup) < pos(steps, Step::Validate));
        assert!(pos(steps, Step::Validate) < pos(steps, Step::DeleteOldData));
    }
    assert!(!forward_steps(SourceKind::Files, Order::NewFirst).contains(&Step::DeleteOldData));
}
