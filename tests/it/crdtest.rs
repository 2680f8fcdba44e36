//! `kubectl crd test` run as a user runs it: the real binary on a directory holding a CRD
//! (the example's, `examples/crdtest`) and case files, checking the printed verdicts, the
//! exit codes (0 all pass, 1 a case fails, 2 a malformed case file) and the JUnit XML read
//! back with an XML parser.

use crate::support::cli::{Crd, write_file};
use quick_xml::events::Event;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn example_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/crdtest")
}

/// A temporary directory with the example's CRD and the object file its cases use.
fn dir_with_crd() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for file in ["gizmos.crd.yaml", "gizmo.yaml"] {
        std::fs::copy(example_dir().join(file), dir.path().join(file)).expect("copy");
    }
    dir
}

fn gizmo(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": {"name": name}, "spec": spec})
}

fn case(name: &str, object: Value, expect: Value) -> Value {
    json!({"name": name, "object": object, "expect": expect})
}

/// Writes the cases as a case file (JSON is YAML too).
fn write_cases(dir: &Path, file: &str, cases: &[Value]) -> String {
    write_file(dir, file, &serde_json::to_string_pretty(cases).expect("json"))
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn crdtest_the_example_directory_passes() {
    let dir = example_dir();
    let text = Crd::new(&[]).ok(&["test", dir.to_str().expect("utf8")]);
    assert!(text.contains("PASS the version cannot change\n"), "{text}");
    assert!(text.ends_with("7 passed, 0 failed\n"), "{text}");
}

/// A pass and a failure of each kind: a wrong cause, a message part missing, a transition
/// rule that holds and one that does not, strict unknown fields (a 400 with no causes,
/// as kube-apiserver sends it), an expected refusal of a valid object.
fn mixed_cases() -> Vec<Value> {
    let mut transition = case(
        "keeping the version is an allowed update",
        gizmo("from-a-file", json!({"size": 5, "version": "v1"})),
        json!({"valid": true}),
    );
    transition["oldObject"] = json!({"file": "gizmo.yaml"});
    let mut changed = case(
        "changing the version is refused",
        gizmo("from-a-file", json!({"version": "v9"})),
        json!({"messageContains": ["version is immutable"]}),
    );
    changed["oldObject"] = json!({"file": "gizmo.yaml"});
    let mut strict = case(
        "strict refuses unknown fields",
        gizmo("s", json!({"colour": "red"})),
        json!({"messageContains": [r#"strict decoding error: unknown field "spec.colour""#]}),
    );
    strict["strict"] = json!(true);
    vec![
        case("defaults are valid", gizmo("a", json!({})), json!({"valid": true})),
        case(
            "wrong cause <&>",
            gizmo("b", json!({"size": 0})),
            json!({"causes": [{"field": "spec.size", "reason": "FieldValueRequired"}]}),
        ),
        case(
            "message part missing",
            gizmo("c", json!({"minReplicas": 4, "maxReplicas": 1})),
            json!({"messageContains": ["minReplicas must not exceed maxReplicas", "not in the message"]}),
        ),
        transition,
        changed,
        strict,
        case("valid but expected refused", gizmo("d", json!({})), json!({"valid": false})),
    ]
}

#[test]
fn crdtest_failures_say_expected_and_actual_and_exit_1() {
    let dir = dir_with_crd();
    let cases = write_cases(dir.path(), "gizmos.test.yaml", &mixed_cases());
    let out = Crd::new(&[]).run(&["test", dir.path().to_str().expect("utf8")]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<&str> = text.lines().collect();
    for passed in [
        "defaults are valid",
        "keeping the version is an allowed update",
        "changing the version is refused",
        "strict refuses unknown fields",
    ] {
        assert!(lines.contains(&format!("PASS {passed}").as_str()), "{passed}: {text}");
    }
    assert!(
        text.contains(
            "FAIL wrong cause <&>: expected causes [spec.size FieldValueRequired], got [spec.size FieldValueInvalid \"Invalid value: 0: spec.size in body should be greater than or equal to 1\"]\n"
        ),
        "{text}"
    );
    assert!(text.contains(&format!("  in {cases}\n")), "{text}");
    assert!(
        text.contains("FAIL message part missing: expected the message to contain \"not in the message\", got: Gizmo.example.com \"c\" is invalid"),
        "{text}"
    );
    assert!(text.contains("FAIL valid but expected refused: expected a refusal, got valid\n"), "{text}");
    assert!(text.ends_with("4 passed, 3 failed\n"), "{text}");
}

/// The JUnit document's testcases: name → failure message (None when it passed), and the
/// counts of its `testsuites` element.
fn junit(xml: &str) -> (BTreeMap<String, Option<String>>, (String, String)) {
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut cases = BTreeMap::new();
    let mut counts = (String::new(), String::new());
    let mut current: Option<String> = None;
    let attr = |e: &quick_xml::events::BytesStart, name: &[u8]| {
        let a = e.try_get_attribute(name).expect("attribute").unwrap_or_else(|| panic!("no {name:?}"));
        a.unescape_value().expect("unescapes").into_owned()
    };
    loop {
        match reader.read_event().expect("well-formed XML") {
            Event::Eof => break,
            Event::Start(e) | Event::Empty(e) if e.name().as_ref() == b"testsuites" => {
                counts = (attr(&e, b"tests"), attr(&e, b"failures"));
            }
            Event::Start(e) if e.name().as_ref() == b"testcase" => {
                let name = attr(&e, b"name");
                cases.insert(name.clone(), None);
                current = Some(name);
            }
            Event::Empty(e) if e.name().as_ref() == b"testcase" => {
                cases.insert(attr(&e, b"name"), None);
            }
            Event::Start(e) if e.name().as_ref() == b"failure" => {
                let name = current.clone().expect("a failure inside a testcase");
                cases.insert(name, Some(attr(&e, b"message")));
            }
            _ => {}
        }
    }
    (cases, counts)
}

#[test]
fn crdtest_junit_output_reads_back() {
    let dir = dir_with_crd();
    write_cases(dir.path(), "gizmos.test.yaml", &mixed_cases());
    let out = Crd::new(&[]).run(&["test", dir.path().to_str().expect("utf8"), "-o", "junit"]);
    assert_eq!(out.status.code(), Some(1));
    let (cases, counts) = junit(&stdout(&out));
    assert_eq!(counts, ("7".to_string(), "3".to_string()));
    assert_eq!(cases.len(), 7);
    assert_eq!(cases["defaults are valid"], None);
    let wrong = cases["wrong cause <&>"].as_deref().expect("a failure");
    assert!(wrong.starts_with("expected causes [spec.size FieldValueRequired], got [spec.size"), "{wrong}");
    assert!(wrong.contains("\"Invalid value: 0"), "quotes survive: {wrong}");
    assert_eq!(cases["valid but expected refused"].as_deref(), Some("expected a refusal, got valid"));
}

#[test]
fn crdtest_a_malformed_case_file_exits_2_and_names_it() {
    let dir = dir_with_crd();
    let file = write_file(
        dir.path(),
        "bad.test.yaml",
        "- name: no expectation\n  object: {file: gizmo.yaml}\n  expct: {valid: true}\n",
    );
    let stderr = Crd::new(&[]).fails(&["test", dir.path().to_str().expect("utf8")], 2);
    assert!(stderr.contains(&format!("{file} (document 1): unknown field `expct`")), "{stderr}");
    let file = write_file(
        dir.path(),
        "bad.test.yaml",
        "- name: missing object file\n  object: {file: nowhere.yaml}\n  expect: {valid: true}\n",
    );
    let stderr = Crd::new(&[]).fails(&["test", dir.path().to_str().expect("utf8")], 2);
    assert!(stderr.contains(&format!("{file}: case \"missing object file\": object: cannot read")), "{stderr}");
    let empty = tempfile::tempdir().expect("temp dir");
    let stderr = Crd::new(&[]).fails(&["test", empty.path().to_str().expect("utf8")], 2);
    assert!(stderr.contains("no test cases (*.test.yaml)"), "{stderr}");
}

#[test]
fn crdtest_junit_is_refused_elsewhere() {
    let stderr = Crd::new(&[]).fails(&["version", "-o", "junit"], 2);
    assert!(stderr.contains("-o junit is for 'kubectl crd test'"), "{stderr}");
}
