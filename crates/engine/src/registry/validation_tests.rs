//! Tests of `validation`: every rule with its exact path and message, through the public
//! entry points, on objects prepared as kube prepares them.

use super::*;
use crate::registry::conditions::{self, STATUS_TRUE, TERMINATING};
use crate::registry::defaults::{apply_defaults, prepare_for_create, prepare_for_update};
use crate::registry::fixtures::{CrdBuilder, VersionBuilder, at, gadget, widget};
use crate::registry::metadata::{API_APPROVED_ANNOTATION, is_protected_community_group};
use crate::schema::names::{DNS1035_LABEL_MSG, DNS1123_SUBDOMAIN_MSG};
use serde_json::json;

fn prepared(builder: CrdBuilder) -> CustomResourceDefinition {
    let mut crd = builder.build();
    apply_defaults(&mut crd);
    prepare_for_create(&mut crd);
    crd
}

fn strings(errs: &[FieldError]) -> Vec<String> {
    errs.iter().map(ToString::to_string).collect()
}

fn create_errors(builder: CrdBuilder) -> Vec<String> {
    strings(&validate_crd_create(&prepared(builder), Sent::default()))
}

fn basic(plural: &str) -> CrdBuilder {
    CrdBuilder::new(plural, "stable.example.com").kind("Widget")
}

/// Runs each case and checks that every expected line is among the errors.
fn assert_contains_all(cases: Vec<(&str, CrdBuilder, Vec<String>)>) {
    for (name, builder, want) in cases {
        let got = create_errors(builder);
        for w in &want {
            assert!(got.contains(w), "{name}: missing\n  {w}\nin\n  {}", got.join("\n  "));
        }
    }
}

#[test]
fn reference_crds_are_valid() {
    assert_eq!(create_errors(widget()), Vec::<String>::new());
    assert_eq!(create_errors(gadget()), Vec::<String>::new());
}

#[test]
fn reference_11_name_must_be_plural_dot_group() {
    let got =
        create_errors(CrdBuilder::new("gizmos", "stable.example.com").name("gizmo.stable.example.com").kind("Gizmo"));
    assert_eq!(
        got,
        ["metadata.name: Invalid value: \"gizmo.stable.example.com\": must be spec.names.plural+\".\"+spec.group"]
    );
}

#[test]
fn metadata_rules() {
    let mut with_namespace = basic("widgets").label("a", "b").build();
    with_namespace.metadata.namespace = Some("default".into());
    apply_defaults(&mut with_namespace);
    prepare_for_create(&mut with_namespace);
    assert_eq!(
        strings(&validate_crd_create(&with_namespace, Sent::default())),
        ["metadata.namespace: Forbidden: not allowed on this type"]
    );

    let mut unnamed = prepared(basic("widgets"));
    unnamed.metadata.name = None;
    assert_eq!(
        strings(&validate_crd_create(&unnamed, Sent::default())),
        ["metadata.name: Required value: name or generateName is required"]
    );

    let mut generated = prepared(basic("widgets"));
    generated.metadata.generate_name = Some("widgets-".into());
    assert_eq!(
        strings(&validate_crd_create(&generated, Sent::default())),
        ["metadata.generateName: Invalid value: \"widgets-\": must be spec.names.plural+\".\"+spec.group"]
    );

    assert_eq!(
        create_errors(basic("widgets").name("Widgets.stable.example.com")),
        [
            format!("metadata.name: Invalid value: \"Widgets.stable.example.com\": {DNS1123_SUBDOMAIN_MSG}"),
            "metadata.name: Invalid value: \"Widgets.stable.example.com\": must be spec.names.plural+\".\"+spec.group"
                .to_string(),
        ]
    );
}

#[test]
fn group_and_scope() {
    assert_contains_all(vec![
        ("group required", CrdBuilder::new("widgets", "").kind("Widget"), vec!["spec.group: Required value".into()]),
        (
            "group one label",
            CrdBuilder::new("widgets", "example").kind("Widget"),
            vec!["spec.group: Invalid value: \"example\": should be a domain with at least one dot".into()],
        ),
        (
            "group not a subdomain",
            CrdBuilder::new("widgets", "Example.com").kind("Widget"),
            vec![format!("spec.group: Invalid value: \"Example.com\": {DNS1123_SUBDOMAIN_MSG}")],
        ),
        ("scope required", basic("widgets").scope(""), vec!["spec.scope: Required value".into()]),
        (
            "scope unsupported",
            basic("widgets").scope("Global"),
            vec!["spec.scope: Unsupported value: \"Global\": supported values: \"Cluster\", \"Namespaced\"".into()],
        ),
    ]);
    assert_eq!(create_errors(basic("widgets").scope("Cluster")), Vec::<String>::new());
}

#[test]
fn version_set() {
    let v = |name: &str, storage: bool| {
        VersionBuilder::new(name).served(true).storage(storage).schema(json!({"type": "object"})).build()
    };
    assert_eq!(
        create_errors(basic("widgets").versions(vec![])),
        [
            "spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{}: must have exactly one version marked as storage version",
            "status.storedVersions: Invalid value: []string(nil): must have at least one stored version",
        ]
    );
    // The strategy records only the first storage version, so the second is also missing
    // from status.storedVersions.
    let two_storage = create_errors(basic("widgets").versions(vec![v("v1", true), v("v2", true)]));
    assert_eq!(two_storage.len(), 2, "{two_storage:?}");
    assert!(
        two_storage[0].starts_with(
            "spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{apiextensions.CustomResourceDefinitionVersion{Name:\"v1\", Served:true, Storage:true,"
        ),
        "{}",
        two_storage[0]
    );
    assert!(
        two_storage[0].ends_with(": must have exactly one version marked as storage version"),
        "{}",
        two_storage[0]
    );
    assert_eq!(
        two_storage[1],
        "status.storedVersions: Invalid value: []string{\"v1\"}: must have the storage version v2"
    );
    let duplicate = create_errors(basic("widgets").versions(vec![v("v1", true), v("v1", false)]));
    assert_eq!(duplicate.len(), 1, "{duplicate:?}");
    assert!(duplicate[0].ends_with(": must contain unique version names"), "{}", duplicate[0]);
    assert_eq!(
        create_errors(basic("widgets").versions(vec![v("V1", true)])),
        [
            format!("spec.versions[0].name: Invalid value: \"V1\": {DNS1035_LABEL_MSG}"),
            format!("spec.version: Invalid value: \"V1\": {DNS1035_LABEL_MSG}"),
        ]
    );
    let unserved_storage =
        VersionBuilder::new("v1").served(false).storage(true).schema(json!({"type": "object"})).build();
    assert_eq!(create_errors(basic("widgets").versions(vec![unserved_storage])), Vec::<String>::new());
}

#[test]
fn schemas_are_required() {
    let no_schema = VersionBuilder::new("v1").served(true).storage(true).build();
    assert_eq!(
        create_errors(basic("widgets").versions(vec![no_schema])),
        ["spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required"]
    );
}

#[test]
fn names_rules() {
    assert_eq!(
        create_errors(CrdBuilder::new("widgets", "stable.example.com")),
        [
            "spec.names.singular: Required value",
            "spec.names.kind: Required value",
            "spec.names.listKind: Required value",
        ]
    );
    assert_contains_all(vec![
        ("plural required", basic("").name("x.stable.example.com"), vec!["spec.names.plural: Required value".into()]),
        (
            "plural label",
            basic("Widgets"),
            vec![format!("spec.names.plural: Invalid value: \"Widgets\": {DNS1035_LABEL_MSG}")],
        ),
        (
            "singular label",
            basic("widgets").singular("a.b"),
            vec![format!("spec.names.singular: Invalid value: \"a.b\": {DNS1035_LABEL_MSG}")],
        ),
        (
            "kind",
            CrdBuilder::new("widgets", "stable.example.com").kind("Wid_get"),
            vec![
                format!(
                    "spec.names.kind: Invalid value: \"Wid_get\": may have mixed case, but should otherwise match: {DNS1035_LABEL_MSG}"
                ),
                format!(
                    "spec.names.listKind: Invalid value: \"Wid_getList\": may have mixed case, but should otherwise match: {DNS1035_LABEL_MSG}"
                ),
            ],
        ),
        (
            "kind equals listKind",
            basic("widgets").list_kind("Widget"),
            vec!["spec.names.listKind: Invalid value: \"Widget\": kind and listKind may not be the same".into()],
        ),
        (
            "short names",
            basic("widgets").short_names(["wd", "w d"]),
            vec![format!("spec.names.shortNames[1]: Invalid value: \"w d\": {DNS1035_LABEL_MSG}")],
        ),
        (
            "categories",
            basic("widgets").categories(["All"]),
            vec![format!("spec.names.categories[0]: Invalid value: \"All\": {DNS1035_LABEL_MSG}")],
        ),
    ]);
}

#[test]
fn shared_schema_errors_are_reported_under_spec_validation() {
    let broken = json!({"type": "object", "properties": {"spec": {"properties": {"size": {"type": "integer"}}}}});
    assert_eq!(
        create_errors(widget().schema(broken.clone())),
        [
            "spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields"
        ]
    );
    // Two versions sharing the schema: still hoisted.
    let shared = |name: &str, storage: bool| {
        VersionBuilder::new(name).served(true).storage(storage).schema(broken.clone()).build()
    };
    assert_eq!(
        create_errors(basic("widgets").versions(vec![shared("v1", true), shared("v2", false)])),
        [
            "spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields"
        ]
    );
    // Different schemas: reported per version.
    let fine = VersionBuilder::new("v1").served(true).storage(true).schema(json!({"type": "object"})).build();
    assert_eq!(
        create_errors(basic("widgets").versions(vec![fine, shared("v2", false)])),
        [
            "spec.versions[1].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields"
        ]
    );
}

#[test]
fn status_root_restriction_uses_any_version_status() {
    let root = json!({"type": "object", "properties": {"a": {"type": "string"}}, "anyOf": [{"required": ["a"]}]});
    let v1 = VersionBuilder::new("v1").served(true).storage(true).schema(root.clone()).build();
    let v2 = VersionBuilder::new("v2").served(true).schema(root).status_subresource().build();
    let got = create_errors(basic("widgets").versions(vec![v1, v2]));
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(
        got[0].starts_with("spec.validation.openAPIV3Schema: Invalid value: apiextensions.JSONSchemaProps{"),
        "{}",
        got[0]
    );
    assert!(
        got[0].ends_with("fields are allowed at the root of the schema if the status subresource is enabled"),
        "{}",
        got[0]
    );
}

/// The oracle's answers: one version, then two with one schema, then two schemas.
#[test]
fn selectable_fields_follow_hoisting() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "name": {"type": "string"}, "n": {"type": "integer"}}}}});
    let other = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "name": {"type": "string"}}}}});
    let version = |name: &str, schema: &Value| {
        VersionBuilder::new(name).served(true).storage(name == "v1").schema(schema.clone())
    };
    assert_eq!(
        create_errors(basic("widgets").versions(vec![version("v1", &schema).selectable("spec.name").build()])),
        [
            r#"spec.selectableFields[0].jsonPath: Invalid value: "spec.name": is an invalid path: expected [ or . but got: spec"#
        ]
    );
    assert_eq!(
        create_errors(basic("widgets").versions(vec![
            version("v1", &schema).selectable(".spec.name").build(),
            version("v2", &schema).selectable(".spec.n").build(),
        ])),
        [
            r#"spec.versions[0].selectableFields: Invalid value: "": selectableFields may only be set when version.schema.openAPIV3Schema is not included"#,
            r#"spec.versions[1].selectableFields: Invalid value: "": selectableFields may only be set when version.schema.openAPIV3Schema is not included"#,
        ]
    );
    assert_eq!(
        create_errors(basic("widgets").versions(vec![
            version("v1", &schema).selectable(".spec.name").build(),
            version("v2", &other).selectable(".spec.name").build(),
        ])),
        [
            r#"spec.selectableFields: Invalid value: "": selectableFields may only be set when validations.schema is included"#
        ]
    );
    assert_eq!(
        create_errors(basic("widgets").versions(vec![
            version("v1", &schema).selectable(".spec.nope").build(),
            version("v2", &other).selectable("spec.name").build(),
        ])),
        [
            r#"spec.versions[0].selectableFields[0].jsonPath: Invalid value: ".spec.nope": is an invalid path: does not refer to a valid field"#,
            r#"spec.versions[1].selectableFields[0].jsonPath: Invalid value: "spec.name": is an invalid path: expected [ or . but got: spec"#,
        ]
    );
}

#[test]
fn subresources_and_columns_follow_hoisting() {
    let bad_scale = |name: &str, storage: bool| {
        VersionBuilder::new(name).served(true).storage(storage).schema(json!({"type": "object"})).scale(
            "spec.replicas",
            ".status.replicas",
            None,
        )
    };
    assert_eq!(
        create_errors(basic("widgets").versions(vec![bad_scale("v1", true).build()])),
        [
            "spec.subresources.scale.specReplicasPath: Invalid value: \"spec.replicas\": must be a simple json path starting with ."
        ]
    );
    let plain = VersionBuilder::new("v1").served(true).storage(true).schema(json!({"type": "object"})).build();
    assert_eq!(
        create_errors(basic("widgets").versions(vec![plain.clone(), bad_scale("v2", false).build()])),
        [
            "spec.versions[1].subresources.scale.specReplicasPath: Invalid value: \"spec.replicas\": must be a simple json path starting with ."
        ]
    );
    let with_column = VersionBuilder::new("v1")
        .served(true)
        .storage(true)
        .schema(json!({"type": "object"}))
        .column("Size", "int", ".spec.size")
        .build();
    assert_eq!(
        create_errors(basic("widgets").versions(vec![with_column.clone()])),
        [
            "spec.additionalPrinterColumns[0].type: Invalid value: \"int\": must be one of boolean,date,integer,number,string"
        ]
    );
    let mut v2 = with_column;
    v2.name = "v2".into();
    v2.storage = false;
    assert_eq!(
        create_errors(basic("widgets").versions(vec![plain, v2])),
        [
            "spec.versions[1].additionalPrinterColumns[0].type: Invalid value: \"int\": must be one of boolean,date,integer,number,string"
        ]
    );
}

#[test]
fn deprecation_warning_needs_deprecated() {
    let v = VersionBuilder::new("v1")
        .served(true)
        .storage(true)
        .schema(json!({"type": "object"}))
        .deprecation_warning("old")
        .build();
    assert_eq!(
        create_errors(basic("widgets").versions(vec![v])),
        ["spec.versions[0].deprecationWarning: Invalid value: \"old\": can only be set for deprecated versions"]
    );
}

#[test]
fn preserve_unknown_fields_and_conversion() {
    assert_eq!(
        create_errors(basic("widgets").preserve_unknown_fields(true)),
        [
            "spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead"
        ]
    );
    assert_eq!(create_errors(basic("widgets").preserve_unknown_fields(false)), Vec::<String>::new());
    let with_default =
        basic("widgets").schema(json!({"type": "object", "properties": {"a": {"type": "string", "default": "x"}}}));
    assert_contains_all(vec![
        ("defaults need pruning", with_default.preserve_unknown_fields(true), vec![
            "spec.preserveUnknownFields: Invalid value: true: must be false in order to use defaults in the schema".into(),
        ]),
        ("webhook needs pruning", basic("widgets").webhook_service("conv", "ns").preserve_unknown_fields(true), vec![
            "spec.conversion.strategy: Invalid value: \"Webhook\": must be None if spec.preserveUnknownFields is true".into(),
        ]),
        ("strategy", basic("widgets").conversion("Magic"), vec![
            "spec.conversion.strategy: Unsupported value: \"Magic\": supported values: \"None\", \"Webhook\"".into(),
        ]),
    ]);
    assert_eq!(create_errors(basic("widgets").webhook_service("conv", "ns")), Vec::<String>::new());
}

#[test]
fn api_approval_in_protected_groups() {
    let protected = || CrdBuilder::new("widgets", "widgets.k8s.io").kind("Widget");
    assert_eq!(
        create_errors(protected()),
        [
            "metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation \"api-approved.kubernetes.io\", see https://github.com/kubernetes/enhancements/pull/1111"
        ]
    );
    assert_eq!(
        create_errors(protected().annotation(API_APPROVED_ANNOTATION, "yes")),
        [
            "metadata.annotations[api-approved.kubernetes.io]: Invalid value: \"yes\": protected groups must have approval annotation \"api-approved.kubernetes.io\" with either a URL or a reason starting with \"unapproved\", see https://github.com/kubernetes/enhancements/pull/1111"
        ]
    );
    for ok in ["unapproved, experimental", "https://github.com/kubernetes/kubernetes/pull/78458"] {
        assert_eq!(create_errors(protected().annotation(API_APPROVED_ANNOTATION, ok)), Vec::<String>::new(), "{ok}");
    }
    assert!(!is_protected_community_group("stable.example.com"));
    assert!(is_protected_community_group("kubernetes.io"));
    // An unchanged (even missing) approval never fails an update.
    let old = prepared(protected());
    assert_eq!(strings(&validate_crd_update(&old.clone(), &old, Sent::default())), Vec::<String>::new());
}

#[test]
fn stored_versions() {
    let mut crd = widget().build();
    apply_defaults(&mut crd);
    crd.status.get_or_insert_with(Default::default).stored_versions = Some(vec!["v0".into()]);
    assert_eq!(
        strings(&validate_crd_create(&crd, Sent::default())),
        [
            "status.storedVersions: Invalid value: []string{\"v0\"}: must have the storage version v1",
            "status.storedVersions[0]: Invalid value: \"v0\": must appear in spec.versions",
        ]
    );
}

/// A prepared CRD whose names the names controller accepted (so `Established=True`).
fn established(builder: CrdBuilder) -> CustomResourceDefinition {
    let mut crd = prepared(builder);
    let names = crd.spec.names.clone();
    let status = crd.status.get_or_insert_with(Default::default);
    status.accepted_names = Some(names);
    let condition =
        conditions::condition(ESTABLISHED, STATUS_TRUE, "InitialNamesAccepted", "the initial names have been accepted");
    conditions::set_status_condition(status, condition, at(1));
    crd
}

fn update_errors(old: &CustomResourceDefinition, edit: impl FnOnce(&mut CustomResourceDefinition)) -> Vec<String> {
    let mut new = old.clone();
    edit(&mut new);
    prepare_for_update(&mut new, old);
    strings(&validate_crd_update(&new, old, Sent::default()))
}

#[test]
fn update_immutables() {
    let old = established(widget());
    assert_eq!(update_errors(&old, |_| {}), Vec::<String>::new());
    assert_eq!(
        update_errors(&old, |n| n.spec.scope = "Cluster".into()),
        ["spec.scope: Invalid value: \"Cluster\": field is immutable"]
    );
    assert_eq!(
        update_errors(&old, |n| n.spec.names.kind = "Gadget".into()),
        ["spec.names.kind: Invalid value: \"Gadget\": field is immutable"]
    );
    assert!(
        update_errors(&old, |n| n.spec.group = "other.example.com".into())
            .contains(&"spec.group: Invalid value: \"other.example.com\": field is immutable".to_string())
    );
    assert!(
        update_errors(&old, |n| n.spec.names.plural = "things".into())
            .contains(&"spec.names.plural: Invalid value: \"things\": field is immutable".to_string())
    );

    // Before it is established, scope and kind may still change.
    let fresh = prepared(widget());
    assert_eq!(update_errors(&fresh, |n| n.spec.scope = "Cluster".into()), Vec::<String>::new());
    assert_eq!(update_errors(&fresh, |n| n.spec.names.kind = "Gadget".into()), Vec::<String>::new());
}

#[test]
fn update_cannot_drop_a_stored_version() {
    let old = established(widget());
    let got = update_errors(&old, |n| {
        n.spec.versions[0].name = "v2".into();
    });
    // The oracle's (1.32) words.
    assert!(
        got.contains(&"status.storedVersions[0]: Invalid value: \"v1\": must appear in spec.versions".to_string()),
        "{got:?}"
    );
}

#[test]
fn update_ratchets_legacy_objects() {
    // A legacy object (pre-v1): pruning off, no schema, non-structural is tolerated.
    let mut legacy = basic("widgets")
        .preserve_unknown_fields(true)
        .versions(vec![VersionBuilder::new("v1").served(true).storage(true).build()])
        .build();
    apply_defaults(&mut legacy);
    prepare_for_create(&mut legacy);
    assert_eq!(
        update_errors(&legacy, |n| n.metadata.labels = Some([("a".into(), "b".into())].into())),
        Vec::<String>::new()
    );
    // Turning pruning on requires schemas for served versions.
    assert_eq!(
        update_errors(&legacy, |n| n.spec.preserve_unknown_fields = Some(false)),
        ["spec.versions[0].schema.openAPIV3Schema: Required value: because otherwise all fields are pruned"]
    );
    let non_structural = json!({"properties": {"a": {}}});
    let mut old = legacy.clone();
    old.spec.versions[0].schema = basic("x").schema(non_structural.clone()).build().spec.versions[0].schema.clone();
    assert_eq!(update_errors(&old, |n| n.metadata.generation = Some(7)), Vec::<String>::new());
    // The same schema on a new object is refused.
    assert!(!create_errors(basic("widgets").schema(non_structural)).is_empty());
}

#[test]
fn status_write_checks_accepted_names() {
    let mut crd = prepared(widget());
    let names = CustomResourceDefinitionNames {
        plural: "Widgets".into(),
        kind: "Widget".into(),
        list_kind: Some("Widget".into()),
        ..Default::default()
    };
    crd.status.get_or_insert_with(Default::default).accepted_names = Some(names);
    assert_eq!(
        strings(&validate_crd_status(&crd)),
        [
            format!("status.acceptedNames.plural: Invalid value: \"Widgets\": {DNS1035_LABEL_MSG}"),
            "status.acceptedNames.listKind: Invalid value: \"Widget\": kind and listKind may not be the same"
                .to_string(),
        ]
    );
    // Conditions are free-form for validation (the finalizer writes Terminating through /status).
    let mut terminating = prepared(widget());
    conditions::set_crd_condition(
        &mut terminating,
        conditions::condition(TERMINATING, STATUS_TRUE, "InstanceDeletionInProgress", "x"),
        at(9),
    );
    assert_eq!(strings(&validate_crd_status(&terminating)), Vec::<String>::new());
}

/// kube's `versionsWithUnchangedSchemas`: a stored rule over the per-rule cost budget (as a
/// CRD written by an older version can have) does not block updates that leave its schema
/// alone, only those that change it.
#[test]
fn rules_over_the_cost_budget_ratchet_with_an_unchanged_schema() {
    let spec = |max_items: u64| {
        json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"tags": {"type": "array", "maxItems": max_items, "items": {"type": "string"}}},
            "x-kubernetes-validations": [{"rule": "self.tags.all(a, self.tags.all(b, a == b))"}]}}})
    };
    let old = established(widget().schema(spec(10)));
    assert_eq!(
        update_errors(&old, |crd| crd.metadata.labels = Some([("a".into(), "b".into())].into())),
        Vec::<String>::new()
    );
    assert_eq!(
        update_errors(&old, |crd| crd.spec.versions[0].schema =
            widget().schema(spec(11)).build().spec.versions[0].schema.clone()),
        [
            "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of 3.8x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
        ]
    );
}
