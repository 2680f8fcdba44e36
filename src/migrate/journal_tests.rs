use super::*;
use serde_json::json;

fn backup() -> Backup {
    Backup {
        objects: vec![
            json!({"apiVersion": "a.example.com/v1", "kind": "A", "metadata": {"name": "x", "namespace": "team", "uid": "1"},
                   "spec": {"s": "yes", "n": "007", "e": "1e3", "null": "null", "f": 1.5, "i": 12, "empty": {}, "list": []},
                   "status": {"phase": "Ready: now", "multi": "a\nb\n"}}),
            json!({"metadata": {"name": "y"}, "spec": {"t": true}}),
        ],
        dependents: vec![Dependent {
            group: String::new(),
            version: "v1".into(),
            kind: "ConfigMap".into(),
            plural: "configmaps".into(),
            namespaced: true,
            namespace: Some("team".into()),
            name: "cm".into(),
            uid: "2".into(),
            owner_references: vec![json!({"apiVersion": "a.example.com/v1", "kind": "A", "name": "x", "uid": "1"})],
        }],
        old_crd: Some(json!({"metadata": {"name": "as.a.example.com"}})),
    }
}

#[test]
fn the_backup_round_trips_with_a_manifest_sha256sum_reads() {
    let dir = tempfile::tempdir().expect("tempdir");
    let summary = write_backup(dir.path(), &backup()).expect("written");
    assert_eq!(summary.objects, 2);
    assert_eq!(summary.per_namespace.get("team"), Some(&1));
    assert_eq!(summary.per_namespace.get(""), Some(&1));
    let manifest = fs::read_to_string(dir.path().join("backup/SHA256SUMS")).expect("manifest");
    assert!(manifest.lines().any(|l| l.ends_with("  objects/team.yaml") && l.len() == 64 + 2 + 17), "{manifest}");
    assert!(same_backup(&read_backup(dir.path()).expect("reads"), &backup()));
}

#[test]
fn namespaces_with_thousands_of_objects_read_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let objects: Vec<Value> = (0..3000)
        .map(|i| json!({"apiVersion": "a/v1", "kind": "A", "metadata": {"name": format!("o{i}"), "namespace": "big"}, "spec": {"i": i}}))
        .collect();
    let backup = Backup { objects, dependents: vec![], old_crd: None };
    assert_eq!(write_backup(dir.path(), &backup).expect("written").objects, 3000);
}

#[test]
fn a_damaged_backup_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_backup(dir.path(), &backup()).expect("written");
    let file = dir.path().join("backup/objects/team.yaml");
    let text = fs::read_to_string(&file).expect("read").replace("Ready", "Broke");
    fs::write(&file, text).expect("write");
    let e = read_backup(dir.path()).expect_err("damaged");
    assert!(e.to_string().contains("does not match its SHA-256"), "{e}");
}

#[test]
fn an_unwritable_backup_is_a_backup_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    fs::write(dir.path().join("backup"), "a file in the way").expect("write");
    let e = write_backup(dir.path(), &backup()).expect_err("cannot create");
    assert!(matches!(e, MigrateError::Backup { .. }) && e.is_refusal(), "{e}");
}

#[test]
fn journal_ids_are_directory_names() {
    assert_eq!(
        journal_id("crontabs.stable.example.com", "schedules.new.example.com"),
        "crontabs.stable.example.com--to--schedules.new.example.com"
    );
    assert_eq!(journal_id("a/b", "c d"), "a_b--to--c_d");
}
