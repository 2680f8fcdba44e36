use super::*;
use crate::cluster::apply::parse_documents;
use crate::crdtest::{Ready, parse, resolve, run};
use crate::tui::action::{Effect, Msg};
use crate::tui::fixtures::{press, state, type_keys};
use crate::tui::state::Screen;
use crate::tui::update::apply;
use crossterm::event::KeyCode;
use serde_json::json;

/// The demo's databases CRD: two served versions sharing a schema with two rules.
pub(crate) fn databases() -> Crd {
    let docs = crate::cluster::demo::documents().expect("demo");
    let doc =
        docs.into_iter().find(|d| d.value["metadata"]["name"] == "databases.demo.example.com").expect("databases");
    serde_json::from_value(doc.value).expect("crd")
}

pub(crate) fn postgres() -> Value {
    json!({"apiVersion": "demo.example.com/v1", "kind": "Database",
        "metadata": {"name": "postgres-01", "namespace": "team-a", "uid": "u-1", "resourceVersion": "12"},
        "spec": {"engine": "postgres", "version": "16.4", "storageGB": 10, "replicas": 1}})
}

/// A workbench on the demo databases with `postgres()` as the sample.
pub(crate) fn bench() -> CelWorkbench {
    let mut b = CelWorkbench::new(databases());
    b.sample = Sample::Found(postgres());
    b
}

/// The demo's transition rule (`spec.storageGB`), after the two rules on `spec`.
pub(crate) const STORAGE_RULE: usize = 2;

fn try_on(b: &mut CelWorkbench, rule: usize, text: &str) -> Tried {
    b.try_text(rule, text).expect("evaluates").clone()
}

#[test]
fn every_rule_of_every_served_version_is_listed() {
    let b = bench();
    let listed: Vec<(String, String, bool)> =
        b.rules.iter().map(|r| (r.version.clone(), r.schema_path(), r.transition())).collect();
    let expected =
        [("v1", "spec", false), ("v1", "spec", false), ("v1", "spec.storageGB", true), ("v1beta1", "spec", false)];
    for (i, (version, path, transition)) in expected.iter().enumerate() {
        assert_eq!(listed[i], (version.to_string(), path.to_string(), *transition));
    }
    assert_eq!(listed.len(), 6);
    assert!(b.rules[0].message().starts_with("messageExpression: self.engine + ' keeps"), "{}", b.rules[0].message());
}

#[test]
fn the_editor_starts_from_the_sample_and_a_try_becomes_a_case() {
    let mut b = bench();
    b.cursor = STORAGE_RULE;
    let text = b.editor_text().expect("text");
    assert!(text.contains("# rule: self >= oldSelf"), "{text}");
    assert_eq!(parse_edited(&text).expect("parses"), (json!(10), Some(json!(10))));

    let shrunk = try_on(&mut b, STORAGE_RULE, "self: 5\noldSelf: 10\n");
    assert_eq!(shrunk.outcome.verdict, Verdict::Failed);
    assert_eq!(
        shrunk.outcome.causes[0].text(),
        "spec.storageGB: Invalid value: \"integer\": storageGB can grow but never shrink"
    );
    assert_eq!(shrunk.case.object["spec"]["storageGB"], 5);
    assert_eq!(shrunk.case.old_object.as_ref().expect("old")["spec"]["storageGB"], 10);
    assert_eq!(shrunk.case.object["metadata"], json!({"name": "postgres-01", "namespace": "team-a"}));
    assert_eq!(
        b.editor_text().expect("again"),
        editor_text(&b.rules[STORAGE_RULE], &b.name, &json!(5), Some(&json!(10)))
    );

    let big = try_on(&mut b, 0, "self: {engine: redis, storageGB: 100}\n");
    assert_eq!(big.outcome.causes[0].detail, "redis keeps its data in memory: storageGB must be at most 64");
    assert!(big.outcome.estimated_cost > 0 && big.outcome.runtime_cost.is_some());
    assert!(big.case.old_object.is_none(), "not a transition rule");

    assert!(b.try_text(0, "nope: 1\n").expect_err("no self").contains("no self:"));
    assert!(b.try_text(0, "self: [\n").expect_err("bad yaml").contains("not valid YAML"));
}

/// The saved cases of `b`, run as `kubectl crd test` runs them: each case's failures.
async fn run_saved(files: &[(PathBuf, String)]) -> Vec<(String, Vec<String>)> {
    let dir = tempfile::tempdir().expect("dir");
    for (path, text) in files {
        let path = dir.path().join(path.file_name().expect("name"));
        std::fs::write(&path, text).expect("write");
    }
    let (crd_file, case_file) = (&files[0], &files[1]);
    let crds = parse_documents(&crd_file.1, "crd").expect("crd parses");
    let cases = parse(&case_file.1, "cases.test.yaml").expect("cases parse");
    let read = |p: &std::path::Path| std::fs::read_to_string(p).map_err(|e| e.to_string());
    let ready: Vec<Ready> = cases
        .iter()
        .map(|case| {
            let (object, old) = resolve(case, &read).expect("resolves");
            Ready { case, object, old }
        })
        .collect();
    let report = run(&crds, &ready).await.expect("runs");
    assert!(report.crds.iter().all(|c| c.valid), "the saved CRD registers: {:?}", report.crds);
    report.outcomes.into_iter().map(|o| (o.name, o.failures)).collect()
}

#[tokio::test]
async fn saved_cases_pass_kubectl_crd_test_and_a_wrong_expectation_fails() {
    let mut b = bench();
    try_on(&mut b, 0, "self: {engine: redis, storageGB: 100}\n");
    try_on(&mut b, 0, "self: {engine: redis, storageGB: 20}\n");
    try_on(&mut b, STORAGE_RULE, "self: 5\noldSelf: 10\n");
    try_on(&mut b, STORAGE_RULE, "self: 50\noldSelf: 10\n");
    try_on(&mut b, STORAGE_RULE, "self: 5\n");
    let files = b.files();
    assert_eq!(files[1].0, PathBuf::from("cel-databases.demo.example.com/databases.demo.example.com.cel.test.yaml"));
    let outcomes = run_saved(&files).await;
    assert_eq!(outcomes.len(), 5);
    for (name, failures) in &outcomes {
        assert!(failures.is_empty(), "{name}: {failures:?}\n{}", files[1].1);
    }

    // The try that failed, expected valid: the runner says so.
    b.tried[0].case.expect = Expected::Valid;
    b.tried[3].case.expect = Expected::Refused(vec!["spec.storageGB: Invalid value".into()]);
    let outcomes = run_saved(&b.files()).await;
    let failed: Vec<&str> = outcomes.iter().filter(|(_, f)| !f.is_empty()).map(|(n, _)| n.as_str()).collect();
    assert_eq!(failed.len(), 2, "{outcomes:?}");
    assert!(failed[0].starts_with("#1 spec fails") && failed[1].starts_with("#4 spec.storageGB passes"), "{failed:?}");
}

#[test]
fn c_opens_the_workbench_on_a_crd_with_rules_and_asks_for_an_object() {
    let mut s = state();
    assert!(type_keys(&mut s, "c").is_empty());
    assert!(s.message.as_ref().is_some_and(|(_, m)| m.contains("has no x-kubernetes-validations")), "{:?}", s.message);
    apply(&mut s, Msg::CrdChanged(Box::new(databases())));
    let at =
        s.registrations.shown().iter().position(|&i| s.registrations.items[i].name() == "databases.demo.example.com");
    s.registrations.cursor = at.expect("listed");
    let effects = type_keys(&mut s, "c");
    assert!(matches!(s.screen(), Screen::Cel(_)), "{}", s.screen().name());
    // The fixture CRD has no accepted names: no endpoint, so no object to read.
    assert!(effects.is_empty() || matches!(&effects[..], [Effect::LoadSample { .. }]), "{effects:?}");
    apply(&mut s, Msg::CelSample { crd: "databases.demo.example.com".into(), result: Ok(Some(postgres())) });
    type_keys(&mut s, "jj");
    let effects = press(&mut s, KeyCode::Enter);
    let [Effect::EditCel { crd, rule: STORAGE_RULE, text }] = &effects[..] else { panic!("{effects:?}") };
    let edited = text.replace("self: 10", "self: 3");
    apply(&mut s, Msg::CelEdited { crd: crd.clone(), rule: STORAGE_RULE, result: Ok(edited) });
    assert!(
        s.message.as_ref().is_some_and(|(_, m)| m.starts_with("the rule fails: spec.storageGB")),
        "{:?}",
        s.message
    );
    let effects = type_keys(&mut s, "s");
    let [Effect::WriteFiles { files, done }] = &effects[..] else { panic!("{effects:?}") };
    assert_eq!(files.len(), 2);
    assert!(done.starts_with("saved 1 case to cel-databases.demo.example.com"), "{done}");
    press(&mut s, KeyCode::Esc);
    assert!(!matches!(s.screen(), Screen::Cel(_)));
}
