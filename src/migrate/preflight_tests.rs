//! Table tests of [`rollback_problems`]: what the rollback read, and what stops it.

use super::*;
use crate::cluster::registrations::tests::crd;
use serde_json::json;

const OLD: &str = "crontabs.stable.example.com";
const NEW: &str = "schedules.stable.example.com";

/// A CRD of the test group with a uid.
fn with_uid(plural: &str, kind: &str, short: &[&str], uid: &str) -> Crd {
    let mut c = crd(plural, kind, short, json!({}));
    c.metadata.uid = Some(uid.into());
    c
}

fn old_crd() -> Crd {
    with_uid("crontabs", "CronTab", &["ct"], "old-uid")
}

/// The old CRD's document as the backup holds it.
fn old_doc() -> Value {
    serde_json::to_value(old_crd()).expect("serializes")
}

struct Case {
    name: &'static str,
    steps: &'static [Step],
    crds: Vec<Crd>,
    refused: Option<&'static str>,
    /// A fragment of each problem, in order.
    want: &'static [&'static str],
}

#[test]
fn rollback_problems_from_what_was_read() {
    use Step::*;
    let restore: &[Step] = &[RemoveNewData, RemoveNewCrd, RestoreOldCrd, RestoreOldData, VerifyRollback];
    let cases = [
        Case { name: "nothing old to bring back", steps: &[RemoveNewData], crds: vec![], refused: None, want: &[] },
        Case {
            name: "the old CRD kept and there",
            steps: &[RemoveNewData, RestoreOldData],
            crds: vec![old_crd()],
            refused: None,
            want: &[],
        },
        Case {
            name: "the old CRD kept but gone",
            steps: &[RemoveNewData, RestoreOldData],
            crds: vec![],
            refused: None,
            want: &["the old CustomResourceDefinition crontabs.stable.example.com is no longer there"],
        },
        Case {
            name: "the old CRD kept but replaced by another of its name",
            steps: &[RestoreOldData],
            crds: vec![with_uid("crontabs", "CronTab", &["ct"], "another-uid")],
            refused: None,
            want: &["is no longer there"],
        },
        Case { name: "restored with its names free", steps: restore, crds: vec![], refused: None, want: &[] },
        Case {
            name: "its name taken by another CRD",
            steps: restore,
            crds: vec![with_uid("crontabs", "CronTab", &[], "another-uid")],
            refused: None,
            want: &["another CustomResourceDefinition named crontabs.stable.example.com exists"],
        },
        Case {
            name: "a short name it freed taken since",
            steps: restore,
            crds: vec![with_uid("jobs", "Job", &["ct"], "job-uid")],
            refused: None,
            want: &["name conflict: resource name \"ct\" is held by jobs.stable.example.com"],
        },
        Case {
            name: "the new CRD holding its names goes away first",
            steps: restore,
            crds: vec![with_uid("schedules", "Schedule", &["ct"], "new-uid")],
            refused: None,
            want: &[],
        },
        Case {
            name: "the new CRD stays (it was there before) and holds its names",
            steps: &[RemoveNewData, RestoreOldCrd, RestoreOldData],
            crds: vec![with_uid("schedules", "Schedule", &["ct"], "new-uid")],
            refused: None,
            want: &["name conflict: resource name \"ct\" is held by schedules.stable.example.com"],
        },
        Case {
            name: "the cluster refuses its document",
            steps: restore,
            crds: vec![],
            refused: Some("spec.versions: Invalid value"),
            want: &["the cluster does not accept crontabs.stable.example.com again: spec.versions: Invalid value"],
        },
    ];
    for case in cases {
        let view = RollbackView { crds: case.crds, refused: case.refused.map(String::from) };
        let problems = rollback_problems(OLD, NEW, &old_doc(), case.steps, &view).expect(case.name);
        assert_eq!(problems.len(), case.want.len(), "{}: {problems:?}", case.name);
        for (got, want) in problems.iter().zip(case.want) {
            assert!(got.contains(want), "{}: {got:?} does not say {want:?}", case.name);
        }
    }
}

#[test]
fn a_backed_up_document_that_is_no_crd_is_an_error() {
    let view = RollbackView::default();
    let err =
        rollback_problems(OLD, NEW, &json!({"kind": "ConfigMap"}), &[Step::RestoreOldCrd], &view).expect_err("no CRD");
    assert!(matches!(err, MigrateError::State(_)), "{err}");
}
