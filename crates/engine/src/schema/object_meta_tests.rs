use super::*;
use crate::schema::names::{name_is_dns_subdomain, validate_path_segment_name};
use serde_json::json;

fn create(meta: Value, namespaced: bool) -> Vec<String> {
    validate_object_meta(&meta, namespaced, name_is_dns_subdomain, &Path::root("metadata"))
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn a_valid_object_has_no_problems() {
    let meta = json!({"name": "w1", "namespace": "default", "labels": {"app": "demo", "example.com/tier": ""},
                      "annotations": {"Example.com/Note": "anything goes"}, "finalizers": ["example.com/hold"],
                      "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": "u", "controller": true}]});
    assert!(create(meta, true).is_empty());
}

#[test]
fn names_are_dns_subdomains() {
    assert_eq!(
        create(json!({"name": "Bad_Name", "namespace": "default"}), true),
        [format!("metadata.name: Invalid value: \"Bad_Name\": {}", crate::schema::names::DNS1123_SUBDOMAIN_MSG)]
    );
    assert_eq!(
        create(json!({"namespace": "default"}), true),
        ["metadata.name: Required value: name or generateName is required"]
    );
    let errs = create(json!({"generateName": "Bad_", "name": "Bad_x1234", "namespace": "default"}), true);
    assert_eq!(errs.len(), 2);
    assert!(errs[0].starts_with("metadata.generateName: Invalid value: \"Bad_\": a lowercase RFC 1123 subdomain"));
}

#[test]
fn namespaces_follow_the_scope() {
    assert_eq!(create(json!({"name": "a"}), true), ["metadata.namespace: Required value"]);
    assert_eq!(
        create(json!({"name": "a", "namespace": "x"}), false),
        ["metadata.namespace: Forbidden: not allowed on this type"]
    );
}

#[test]
fn labels_and_annotations_are_reported_on_the_map() {
    let errs = create(json!({"name": "a", "namespace": "d", "labels": {"bad key!": "bad value!"}}), true);
    assert_eq!(
        errs,
        [
            "metadata.labels: Invalid value: \"bad key!\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            "metadata.labels: Invalid value: \"bad value!\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
        ]
    );
    let big = "x".repeat(TOTAL_ANNOTATION_SIZE_LIMIT);
    assert_eq!(
        create(json!({"name": "a", "namespace": "d", "annotations": {"k": big}}), true),
        ["metadata.annotations: Too long: may not be more than 262144 bytes"]
    );
}

#[test]
fn owner_references_and_finalizers() {
    let errs = create(json!({"name": "a", "namespace": "d", "ownerReferences": [{"apiVersion": "a/b/c"}]}), true);
    assert_eq!(
        errs,
        [
            "metadata.ownerReferences.apiVersion: Invalid value: \"a/b/c\": version must not be empty",
            "metadata.ownerReferences.kind: Invalid value: \"\": kind must not be empty",
            "metadata.ownerReferences.name: Invalid value: \"\": name must not be empty",
            "metadata.ownerReferences.uid: Invalid value: \"\": uid must not be empty"
        ]
    );
    let two_controllers = json!({"name": "a", "namespace": "d", "ownerReferences": [
        {"apiVersion": "v1", "kind": "A", "name": "x", "uid": "1", "controller": true},
        {"apiVersion": "v1", "kind": "B", "name": "y", "uid": "2", "controller": true}]});
    let errs = create(two_controllers, true);
    assert_eq!(errs.len(), 1);
    assert!(
        errs[0].ends_with(
            "Only one reference can have Controller set to true. Found \"true\" in references for A/x and B/y"
        )
    );
    let errs = create(json!({"name": "a", "namespace": "d", "finalizers": ["orphan", "foregroundDeletion"]}), true);
    assert_eq!(
        errs,
        [
            "metadata.finalizers: Invalid value: []string{\"orphan\", \"foregroundDeletion\"}: finalizer orphan and foregroundDeletion cannot be both set"
        ]
    );
}

#[test]
fn managed_fields() {
    let errs = create(
        json!({"name": "a", "namespace": "d", "managedFields": [{"operation": "Patch", "fieldsType": "FieldsV2"}]}),
        true,
    );
    assert_eq!(
        errs,
        [
            "metadata.managedFields[0].operation: Invalid value: \"Patch\": must be `Apply` or `Update`",
            "metadata.managedFields[0].fieldsType: Invalid value: \"FieldsV2\": must be `FieldsV1`"
        ]
    );
}

#[test]
fn updates_keep_identity_and_refuse_new_finalizers_while_deleting() {
    let old = json!({"name": "a", "namespace": "d", "uid": "u1", "generation": 3,
                     "deletionTimestamp": "2024-01-01T00:00:00Z", "finalizers": ["a.io/x"]});
    let new = json!({"name": "a", "namespace": "d", "uid": "u2", "generation": 2,
                     "deletionTimestamp": "2024-01-01T00:00:00Z", "finalizers": ["a.io/x", "b.io/y"]});
    let errs: Vec<String> =
        validate_object_meta_update(&new, &old, &Path::root("metadata")).iter().map(ToString::to_string).collect();
    assert_eq!(
        errs,
        [
            "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{\"b.io/y\"}",
            "metadata.generation: Invalid value: 2: must not be decremented",
            "metadata.uid: Invalid value: \"u2\": field is immutable"
        ]
    );
}

#[test]
fn coercion_drops_unknown_and_empty_fields() {
    let mut meta = json!({"name": "a", "bogus": 1, "labels": {}, "annotations": {"a": null}, "generation": 0,
                          "ownerReferences": [{"apiVersion": "v1", "kind": "K", "name": "n", "uid": "u", "extra": true}]});
    let mut unknown = Vec::new();
    coerce(&mut meta, "metadata", &mut unknown);
    assert_eq!(unknown, ["metadata.bogus", "metadata.ownerReferences[0].extra"]);
    assert_eq!(
        meta,
        json!({"name": "a", "annotations": {"a": ""},
                            "ownerReferences": [{"apiVersion": "v1", "kind": "K", "name": "n", "uid": "u"}]})
    );
}

#[test]
fn path_segment_names_for_other_kinds() {
    let errs = validate_object_meta(&json!({"name": ".."}), false, validate_path_segment_name, &Path::root("metadata"));
    assert_eq!(errs[0].to_string(), "metadata.name: Invalid value: \"..\": may not be '..'");
}

#[test]
fn owner_references_quoted_by_several_checks_stay_apart() {
    let controller = |uid: &str| json!({"apiVersion": "v1", "kind": "K", "name": "a", "uid": uid, "controller": true});
    let meta = json!({"name": "x", "labels": {"-bad": "x"}, "ownerReferences": [controller("1"), controller("2"), controller("3")]});
    let check = || validate_object_meta(&meta, false, validate_path_segment_name, &Path::root("metadata"));
    let typed: Vec<_> = (0..3).flat_map(|_| check()).collect();
    // Each check reports two equal errors (a/K twice), which fold.
    assert_eq!(crate::field::aggregate_message(&typed).matches("Only one reference").count(), 1, "typed: one address");
    let unstructured: Vec<_> = (0..3)
        .flat_map(|n| {
            let mut errs = check();
            at_check_addresses(&mut errs, n);
            errs
        })
        .collect();
    let message = crate::field::aggregate_message(&unstructured);
    assert_eq!(message.matches("Only one reference").count(), 3, "{message}");
    assert_eq!(message.matches("-bad").count(), 1, "errors quoting no owner reference still fold: {message}");
}
