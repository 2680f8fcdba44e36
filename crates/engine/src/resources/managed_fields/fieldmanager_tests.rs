//! The recorded kube-apiserver scenario (reference 15 → 29, 30, 65 → 70), replayed through
//! the field manager alone: each step must leave exactly the recorded managedFields.

use super::*;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;

const V1: &str = "stable.example.com/v1";

/// The widget schema of reference 06.
fn widget() -> Schema {
    let props: JSONSchemaProps = serde_json::from_value(json!({
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {
                "size": {"type": "integer", "minimum": 0, "maximum": 10},
                "color": {"type": "string", "enum": ["red", "green", "blue"]},
                "replicas": {"type": "integer", "minimum": 0}}},
            "status": {"type": "object", "properties": {
                "phase": {"type": "string"}, "replicas": {"type": "integer"}, "selector": {"type": "string"}}}
        }
    }))
    .expect("schema");
    Schema::for_kind(Some(&props), false)
}

fn top(field: &str) -> Set {
    Set::of(&[vec![PathElement::Field(field.into())]])
}

/// The field manager of one endpoint of the widget kind (status and scale subresources).
fn fm<'a>(schema: &'a Schema, sub: Option<&'a str>, now: &str) -> FieldManager<'a> {
    let filter = match sub {
        None => Filter::Except(top("status")),
        Some("status") => Filter::Except(top("spec")),
        _ => Filter::Only(Set::of(&[vec![PathElement::Field("spec".into()), PathElement::Field("replicas".into())]])),
    };
    FieldManager {
        schema,
        api_version: V1.to_string(),
        kind: "Widget".to_string(),
        subresource: sub,
        filter,
        stamps_time: sub != Some("scale"),
        now: format!("2026-11-22T{now}Z"),
        zero: json!({"apiVersion": V1, "kind": "Widget"}),
        other_versions: Vec::new(),
        convertible_versions: None,
        webhook: None,
    }
}

fn entry(sub: Option<&str>, time: Option<&str>, fields: Value) -> Value {
    let mut e = json!({"apiVersion": V1, "fieldsType": "FieldsV1", "fieldsV1": fields, "manager": "curl", "operation": "Update"});
    if let Some(s) = sub {
        e["subresource"] = json!(s);
    }
    if let Some(t) = time {
        e["time"] = json!(format!("2026-11-22T{t}Z"));
    }
    e
}

fn managed_fields(obj: &Value) -> &Value {
    &obj["metadata"]["managedFields"]
}

/// What the server stores after a write: the request with the live object's server-set
/// metadata, as the strategies leave it.
fn stored(mut obj: Value, live: &Value) -> Value {
    for k in ["uid", "creationTimestamp", "resourceVersion", "generation"] {
        if let Some(v) = live["metadata"].get(k) {
            obj["metadata"][k] = v.clone();
        }
    }
    obj
}

#[test]
fn the_recorded_update_sequence_leaves_the_recorded_managed_fields() {
    let schema = widget();
    let empty = json!({"apiVersion": V1, "kind": "Widget"});
    let spec_fields = json!({"f:spec": {".": {}, "f:color": {}, "f:replicas": {}, "f:size": {}}});

    // 15: POST by curl.
    let mut w1 = json!({"apiVersion": V1, "kind": "Widget",
        "metadata": {"name": "w1", "namespace": "default", "labels": {"app": "demo"}},
        "spec": {"size": 3, "color": "red", "replicas": 1}});
    fm(&schema, None, "02:36:58").update(&empty, &mut w1, Some("curl"));
    w1["metadata"]["uid"] = json!("u1");
    w1["metadata"]["resourceVersion"] = json!("76");
    let created = json!([entry(
        None,
        Some("02:36:58"),
        json!({
        "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
        "f:spec": {".": {}, "f:color": {}, "f:replicas": {}, "f:size": {}}})
    )]);
    assert_eq!(managed_fields(&w1), &created, "reference 15");

    // 19: PUT spec.size 4 and a status the main endpoint ignores.
    let mut put = w1.clone();
    put["spec"]["size"] = json!(4);
    put["status"] = json!({"replicas": 9, "phase": "Hacked"});
    fm(&schema, None, "02:36:59").update(&w1, &mut put, Some("curl"));
    let mut expected = created.clone();
    expected[0]["time"] = json!("2026-11-22T02:36:59Z");
    assert_eq!(managed_fields(&put), &expected, "reference 19: the entry's time moved");
    let mut w1 = stored(put, &w1);
    w1.as_object_mut().expect("object").remove("status");

    // 22: PUT /status, also changing a label and the spec (both dropped by the strategy).
    let mut status_put = w1.clone();
    status_put["metadata"]["labels"]["app"] = json!("changed-via-status");
    status_put["spec"]["size"] = json!(9);
    status_put["status"] = json!({"replicas": 1, "selector": "app=demo", "phase": "Running"});
    fm(&schema, Some("status"), "02:37:00").update(&w1, &mut status_put, Some("curl"));
    let after_status = json!([
        entry(None, Some("02:36:59"), json!({"f:metadata": {"f:labels": {}}, "f:spec": spec_fields["f:spec"]})),
        entry(
            Some("status"),
            Some("02:37:00"),
            json!({
            "f:metadata": {"f:labels": {"f:app": {}}},
            "f:status": {".": {}, "f:phase": {}, "f:replicas": {}, "f:selector": {}}})
        ),
    ]);
    assert_eq!(managed_fields(&status_put), &after_status, "reference 22: status took the label it changed");
    let mut w1 = w1.clone();
    w1["status"] = status_put["status"].clone();
    w1["metadata"]["managedFields"] = after_status;

    // 23: merge patch of /status with a label that is ignored.
    let mut patched = w1.clone();
    json_patch::merge(&mut patched, &json!({"status": {"phase": "Ready"}, "metadata": {"labels": {"ignored": "yes"}}}));
    fm(&schema, Some("status"), "02:37:00").update(&w1, &mut patched, Some("curl"));
    assert_eq!(
        managed_fields(&patched)[1]["fieldsV1"]["f:metadata"],
        json!({"f:labels": {"f:app": {}, "f:ignored": {}}}),
        "reference 23"
    );
    let mut w1 = w1.clone();
    w1["status"]["phase"] = json!("Ready");
    w1["metadata"]["managedFields"] = managed_fields(&patched).clone();

    // 25, 26: /scale writes replicas 4 then 5; the scale entry has no time.
    for replicas in [4, 5] {
        let mut scaled = w1.clone();
        scaled["spec"]["replicas"] = json!(replicas);
        fm(&schema, Some("scale"), "02:37:01").update(&w1, &mut scaled, Some("curl"));
        w1 = scaled;
    }

    // 28: JSON patch of the color and a new annotation.
    let mut patched = w1.clone();
    patched["spec"]["color"] = json!("blue");
    patched["metadata"]["annotations"] = json!({"note": "json-patched"});
    fm(&schema, None, "02:37:02").update(&w1, &mut patched, Some("curl"));
    let status_entry = entry(
        Some("status"),
        Some("02:37:00"),
        json!({
        "f:metadata": {"f:labels": {"f:app": {}, "f:ignored": {}}},
        "f:status": {".": {}, "f:phase": {}, "f:replicas": {}, "f:selector": {}}}),
    );
    let scale_entry = entry(Some("scale"), None, json!({"f:spec": {"f:replicas": {}}}));
    assert_eq!(
        managed_fields(&patched),
        &json!([
            scale_entry,
            status_entry,
            entry(
                None,
                Some("02:37:02"),
                json!({
            "f:metadata": {"f:annotations": {".": {}, "f:note": {}}, "f:labels": {}},
            "f:spec": {".": {}, "f:color": {}, "f:size": {}}})
            )
        ]),
        "reference 28"
    );
    let w1 = patched;

    // 29: merge patch adding a label and changing the size.
    let mut patched = w1.clone();
    json_patch::merge(&mut patched, &json!({"metadata": {"labels": {"tier": "gold"}}, "spec": {"size": 5}}));
    fm(&schema, None, "02:37:02").update(&w1, &mut patched, Some("curl"));
    assert_eq!(
        managed_fields(&patched)[2]["fieldsV1"],
        json!({"f:metadata": {"f:annotations": {".": {}, "f:note": {}}, "f:labels": {".": {}, "f:tier": {}}},
               "f:spec": {".": {}, "f:color": {}, "f:size": {}}}),
        "reference 29"
    );
}

#[test]
fn finalizers_are_a_set_and_removing_them_drops_their_ownership() {
    let schema = widget();
    let empty = json!({"apiVersion": V1, "kind": "Widget"});
    // 65: created with a finalizer.
    let mut held = json!({"apiVersion": V1, "kind": "Widget",
        "metadata": {"name": "w-hold", "namespace": "default", "finalizers": ["stable.example.com/hold"]},
        "spec": {"size": 1}});
    fm(&schema, None, "02:37:15").update(&empty, &mut held, Some("curl"));
    assert_eq!(
        managed_fields(&held)[0]["fieldsV1"],
        json!({"f:metadata": {"f:finalizers": {".": {}, "v:\"stable.example.com/hold\"": {}}}, "f:spec": {".": {}, "f:size": {}}}),
        "reference 65"
    );
    held["metadata"]["uid"] = json!("u");
    // 70: a merge patch removes the finalizer; removing takes, but does not stamp.
    let mut patched = held.clone();
    json_patch::merge(&mut patched, &json!({"metadata": {"finalizers": null}}));
    fm(&schema, None, "02:37:20").update(&held, &mut patched, Some("curl"));
    assert_eq!(
        managed_fields(&patched),
        &json!([entry(None, Some("02:37:15"), json!({"f:spec": {".": {}, "f:size": {}}}))]),
        "reference 70"
    );
}

#[test]
fn an_apply_create_leaves_the_recorded_apply_entry() {
    let schema = widget();
    let empty = json!({"apiVersion": V1, "kind": "Widget"});
    let config = json!({"apiVersion": V1, "kind": "Widget",
        "metadata": {"name": "w2", "labels": {"app": "other"}},
        "spec": {"size": 1, "color": "green", "replicas": 2}});
    let obj = fm(&schema, None, "02:37:02").apply(&empty, &config, "demo-manager", false).expect("applied");
    assert_eq!(
        managed_fields(&obj),
        &json!([{"apiVersion": V1, "fieldsType": "FieldsV1",
            "fieldsV1": {"f:metadata": {"f:labels": {"f:app": {}}}, "f:spec": {"f:color": {}, "f:replicas": {}, "f:size": {}}},
            "manager": "demo-manager", "operation": "Apply", "time": "2026-11-22T02:37:02Z"}]),
        "reference 30"
    );
    assert_eq!(obj["spec"], config["spec"]);
}

#[test]
fn apply_conflicts_read_as_kube_words_them() {
    let schema = widget();
    let live = json!({"apiVersion": V1, "kind": "Widget",
        "metadata": {"name": "w", "namespace": "default", "uid": "u", "managedFields": [
            {"apiVersion": V1, "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}, "f:size": {}}},
             "manager": "kubectl-client-side-apply", "operation": "Update", "time": "2026-11-22T02:00:00Z"}]},
        "spec": {"replicas": 1, "size": 1}});
    let config = json!({"apiVersion": V1, "kind": "Widget", "metadata": {"name": "w"}, "spec": {"replicas": 3}});
    let err: ApiError =
        fm(&schema, None, "02:37:02").apply(&live, &config, "other", false).expect_err("conflict").into();
    assert_eq!(err.code, 409);
    assert_eq!(
        err.message,
        "Apply failed with 1 conflict: conflict with \"kubectl-client-side-apply\" using stable.example.com/v1: .spec.replicas"
    );
    let cause = &err.details.as_ref().expect("details").causes[0];
    assert_eq!(cause.reason.as_deref(), Some("FieldManagerConflict"));
    assert_eq!(cause.field.as_deref(), Some(".spec.replicas"));
    assert_eq!(
        cause.message.as_deref(),
        Some("conflict with \"kubectl-client-side-apply\" using stable.example.com/v1")
    );

    let two =
        json!({"apiVersion": V1, "kind": "Widget", "metadata": {"name": "w"}, "spec": {"replicas": 3, "size": 2}});
    let err: ApiError = fm(&schema, None, "02:37:02").apply(&live, &two, "other", false).expect_err("conflicts").into();
    assert_eq!(
        err.message,
        "Apply failed with 2 conflicts: conflicts with \"kubectl-client-side-apply\" using stable.example.com/v1:\n- .spec.replicas\n- .spec.size"
    );

    let forced = fm(&schema, None, "02:37:02").apply(&live, &config, "other", true).expect("forced");
    let entries = managed_fields(&forced).as_array().expect("entries");
    assert_eq!(entries[0]["manager"], "other");
    assert_eq!(entries[0]["fieldsV1"], json!({"f:spec": {"f:replicas": {}}}));
    assert_eq!(entries[1]["fieldsV1"], json!({"f:spec": {"f:size": {}}}));
}

#[test]
fn kubectl_may_take_over_what_client_side_apply_set() {
    let schema = widget();
    let last = json!({"apiVersion": V1, "kind": "Widget", "metadata": {"name": "w", "namespace": "default"}, "spec": {"replicas": 1}});
    let live = json!({"apiVersion": V1, "kind": "Widget",
        "metadata": {"name": "w", "namespace": "default", "uid": "u",
            "annotations": {LAST_APPLIED: format!("{last}\n")},
            "managedFields": [{"apiVersion": V1, "fieldsType": "FieldsV1",
                "fieldsV1": {"f:metadata": {"f:annotations": {".": {}, "f:kubectl.kubernetes.io/last-applied-configuration": {}}},
                             "f:spec": {".": {}, "f:replicas": {}}},
                "manager": "kubectl-client-side-apply", "operation": "Update", "time": "2026-11-22T02:00:00Z"}]},
        "spec": {"replicas": 1}});
    let config = json!({"apiVersion": V1, "kind": "Widget", "metadata": {"name": "w", "namespace": "default"}, "spec": {"replicas": 2}});
    assert!(fm(&schema, None, "02:37:02").apply(&live, &config, "someone-else", false).is_err());
    let obj = fm(&schema, None, "02:37:02").apply(&live, &config, "kubectl", false).expect("kubectl upgrades");
    assert_eq!(obj["spec"]["replicas"], 2);
    let annotation: Value =
        serde_json::from_str(obj["metadata"]["annotations"][LAST_APPLIED].as_str().expect("annotation")).expect("json");
    assert_eq!(annotation, config, "the annotation follows the applied configuration");
}

#[test]
fn client_sent_managed_fields_are_kept_reset_or_ignored_as_kube_does() {
    let schema = widget();
    let live = json!({"apiVersion": V1, "kind": "Widget",
        "metadata": {"name": "w", "uid": "u", "managedFields": [
            {"apiVersion": V1, "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:size": {}}},
             "manager": "a", "operation": "Update", "time": "2026-11-22T02:00:00Z"}]},
        "spec": {"size": 1}});
    // Sent back unchanged (kubectl edit, a PUT of what was read): kept.
    let mut same = live.clone();
    same["spec"]["color"] = json!("red");
    fm(&schema, None, "02:37:02").update(&live, &mut same, Some("b"));
    assert_eq!(managed_fields(&same)[1]["manager"], "b");
    // Reset with []: the object stops being tracked, even by this update.
    let mut reset = live.clone();
    reset["metadata"]["managedFields"] = json!([]);
    reset["spec"]["size"] = json!(3);
    fm(&schema, None, "02:37:02").update(&live, &mut reset, Some("b"));
    assert!(reset["metadata"].get("managedFields").is_none());
    // Unreadable ones are replaced by the live entries.
    let mut garbage = live.clone();
    garbage["metadata"]["managedFields"] = json!([{"manager": "x", "operation": "Bogus"}]);
    fm(&schema, None, "02:37:02").update(&live, &mut garbage, Some("a"));
    assert_eq!(managed_fields(&garbage), managed_fields(&live));
    // Through a subresource, whatever is sent is ignored.
    let mut through_status = live.clone();
    through_status["metadata"]["managedFields"] = json!([]);
    through_status["status"] = json!({"phase": "x"});
    fm(&schema, Some("status"), "02:37:02").update(&live, &mut through_status, Some("a"));
    assert_eq!(managed_fields(&through_status).as_array().map(Vec::len), Some(2));
}

#[test]
fn update_entries_are_capped_at_ten() {
    let schema = widget();
    let mut obj = json!({"apiVersion": V1, "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 0}});
    let empty = json!({"apiVersion": V1, "kind": "Widget"});
    fm(&schema, None, "00:00:00").update(&empty, &mut obj, Some("m0"));
    obj["metadata"]["uid"] = json!("u");
    for i in 1..=11 {
        let mut next = obj.clone();
        meta::metadata_mut(&mut next).entry("labels").or_insert_with(|| json!({}))[format!("l{i}")] = json!("x");
        fm(&schema, None, &format!("00:00:{i:02}")).update(&obj, &mut next, Some(&format!("m{i}")));
        obj = next;
    }
    let entries = managed_fields(&obj).as_array().expect("entries");
    assert_eq!(entries.len(), MAX_UPDATE_MANAGERS);
    assert!(entries.iter().any(|e| e["manager"] == ANCIENT_CHANGES));
}

#[test]
fn an_untracked_object_stays_untracked_until_an_apply_hands_its_fields_to_before_first_apply() {
    let schema = widget();
    let live = json!({"apiVersion": V1, "kind": "Widget", "metadata": {"name": "w", "uid": "u"}, "spec": {"size": 1, "color": "red"}});
    let mut updated = live.clone();
    updated["spec"]["size"] = json!(2);
    fm(&schema, None, "02:37:02").update(&live, &mut updated, Some("curl"));
    assert!(updated["metadata"].get("managedFields").is_none());

    let config = json!({"apiVersion": V1, "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 3}});
    let err = fm(&schema, None, "02:37:02").apply(&live, &config, "mgr", false).expect_err("conflict");
    let ApplyError::Conflicts(c) = err else { panic!("conflicts") };
    assert_eq!(c.0[0].0.manager, BEFORE_FIRST_APPLY);
}

/// kube's `UpdateNoErrors` drops managedFields when it cannot type the new or the live
/// object (the oracle: a create with `status: 5`, a status patch with `spec: "x"`), and
/// types an update with duplicate list keys allowed.
#[test]
fn an_update_of_an_object_of_the_wrong_shape_drops_managed_fields() {
    let schema = widget();
    let zero = json!({"apiVersion": V1, "kind": "Widget"});
    let mut created =
        json!({"apiVersion": V1, "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 1}, "status": 5});
    fm(&schema, None, "02:37:02").update(&zero, &mut created, Some("curl"));
    assert!(created["metadata"].get("managedFields").is_none());

    let mut live = json!({"apiVersion": V1, "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 1}});
    fm(&schema, None, "02:37:02").update(&zero, &mut live, Some("curl"));
    assert!(live["metadata"].get("managedFields").is_some());
    let mut status = live.clone();
    status["spec"] = json!("x");
    status["status"] = json!({"phase": "up"});
    fm(&schema, Some("status"), "02:37:03").update(&live, &mut status, Some("curl"));
    assert!(status["metadata"].get("managedFields").is_none());
}

/// The widget's v2: v1's `spec.size` and a `spec.extra` only v2 declares.
fn widget_v2() -> Schema {
    let props: JSONSchemaProps = serde_json::from_value(json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"size": {"type": "integer"}, "extra": {"type": "string"}}}}}))
    .expect("schema");
    Schema::for_kind(Some(&props), false)
}

/// kube types an update at the version of every other manager's entry too: a field only
/// the written version declares drops managedFields (the oracle, a CRD served at v1 and v2).
#[test]
fn an_update_that_does_not_fit_another_manager_s_version_drops_managed_fields() {
    let v2 = widget_v2();
    let v1 = Arc::new(widget());
    let at_v2 = |other: Vec<(String, Arc<Schema>)>| FieldManager {
        api_version: "stable.example.com/v2".into(),
        other_versions: other,
        ..fm(&v2, None, "02:37:02")
    };
    let live = json!({"apiVersion": "stable.example.com/v2", "kind": "Widget", "metadata": {"name": "w", "uid": "u",
        "managedFields": [entry(None, Some("02:00:00"), json!({"f:spec": {"f:size": {}}}))]}, "spec": {"size": 1}});
    let mut fits = live.clone();
    fits["spec"]["size"] = json!(2);
    at_v2(vec![(V1.into(), Arc::clone(&v1))]).update(&live, &mut fits, Some("curl"));
    assert!(fits["metadata"].get("managedFields").is_some());
    let mut extra = live.clone();
    extra["spec"]["extra"] = json!("x");
    at_v2(vec![(V1.into(), Arc::clone(&v1))]).update(&live, &mut extra, Some("curl"));
    assert!(extra["metadata"].get("managedFields").is_none());
}

/// An apply types the live and the new object at every other manager's version before it
/// counts conflicts: the oracle (a CRD served at v1 and v2, `m1` applied `spec.size`
/// through v1) answered `m2`'s apply of `spec.extra`, which only v2 declares, through v2
/// with this plain 500 instead of a conflict over `spec.size`, forced or not.
#[test]
fn an_apply_that_does_not_fit_another_manager_s_version_fails() {
    let v2 = widget_v2();
    let at_v2 = FieldManager {
        api_version: "stable.example.com/v2".into(),
        other_versions: vec![(V1.into(), Arc::new(widget()))],
        ..fm(&v2, None, "02:37:02")
    };
    let mut m1 = entry(None, Some("02:00:00"), json!({"f:spec": {"f:size": {}}}));
    m1["manager"] = json!("m1");
    m1["operation"] = json!("Apply");
    let live = json!({"apiVersion": "stable.example.com/v2", "kind": "Widget",
        "metadata": {"name": "w", "uid": "u", "managedFields": [m1]}, "spec": {"size": 1}});
    let config = |spec: Value| json!({"apiVersion": "stable.example.com/v2", "kind": "Widget", "metadata": {"name": "w"}, "spec": spec});
    for force in [false, true] {
        let err: ApiError =
            at_v2.apply(&live, &config(json!({"size": 2, "extra": "x"})), "m2", force).expect_err("typed").into();
        assert_eq!((err.code, err.reason.as_str()), (500, ""));
        assert_eq!(err.message, "failed to convert new object: .spec.extra: field not declared in schema");
    }
    let err: ApiError = at_v2.apply(&live, &config(json!({"size": 2})), "m2", false).expect_err("conflict").into();
    assert_eq!(err.code, 409);
    // A live object that does not fit m1's version fails first, with the bare error of
    // structured-merge-diff's reconciling of m1's set.
    let mut odd = live.clone();
    odd["spec"]["extra"] = json!("y");
    let err: ApiError = at_v2.apply(&odd, &config(json!({"size": 2})), "m2", false).expect_err("typed").into();
    assert_eq!((err.code, err.message.as_str()), (500, ".spec.extra: field not declared in schema"));
    // m1 applying again through v2 prunes at v1, where it applied last.
    let err: ApiError = at_v2.apply(&live, &config(json!({"extra": "x"})), "m1", false).expect_err("typed").into();
    assert_eq!(
        err.message,
        "failed to prune fields: failed to convert merged object to last applied version: .spec.extra: field not declared in schema"
    );
}

#[test]
fn an_applied_configuration_is_checked_against_the_schema() {
    let schema = widget();
    let empty = json!({"apiVersion": V1, "kind": "Widget"});
    let unknown = json!({"apiVersion": V1, "kind": "Widget", "metadata": {"name": "w", "namespace": "default"}, "spec": {"bogus": 1}});
    let err: ApiError = fm(&schema, None, "02:37:02").apply(&empty, &unknown, "m", false).expect_err("typed").into();
    // kube passes it on as a plain error: a 500 without a reason.
    assert_eq!((err.code, err.reason.as_str()), (500, ""));
    assert_eq!(
        err.message,
        "failed to create typed patch object (default/w; stable.example.com/v1, Kind=Widget): .spec.bogus: field not declared in schema"
    );
    let wrong = json!({"apiVersion": "stable.example.com/v2", "kind": "Widget", "metadata": {"name": "w"}});
    let err: ApiError = fm(&schema, None, "02:37:02").apply(&empty, &wrong, "m", false).expect_err("version").into();
    assert_eq!((err.code, err.message.as_str()), (400, "invalid object type: stable.example.com/v2, Kind=Widget"));
    let with_mf = json!({"apiVersion": V1, "kind": "Widget", "metadata": {"name": "w", "managedFields": []}});
    let err: ApiError = fm(&schema, None, "02:37:02").apply(&empty, &with_mf, "m", false).expect_err("mf").into();
    assert_eq!((err.code, err.message.as_str()), (400, "metadata.managedFields must be nil"));
}

#[test]
fn reapplying_the_same_configuration_changes_nothing() {
    let schema = widget();
    let empty = json!({"apiVersion": V1, "kind": "Widget"});
    let config = json!({"apiVersion": V1, "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 3}});
    let mut first = fm(&schema, None, "02:37:02").apply(&empty, &config, "m", false).expect("first");
    first["metadata"]["uid"] = json!("u");
    let second = fm(&schema, None, "02:38:00").apply(&first, &config, "m", false).expect("second");
    assert_eq!(second, first, "same object, same entry time: no write at all");
}

#[test]
fn a_copy_without_managed_fields_is_a_whole_copy_with_them_removed() {
    let entries = json!([entry(None, Some("02:00:00"), json!({"f:spec": {"f:size": {}}}))]);
    let objects = [
        json!({"apiVersion": V1, "metadata": {"name": "w", "managedFields": entries, "labels": {"a": "b"}}, "spec": {"size": 1}}),
        json!({"metadata": {"managedFields": entries}}),
        json!({"metadata": {"name": "w"}, "status": {"phase": "x"}}),
        json!({"metadata": "not an object", "spec": {"managedFields": entries}}),
        json!({"spec": {"size": 1}}),
        json!([1, {"metadata": {"managedFields": 1}}]),
        Value::Null,
    ];
    for obj in objects {
        let mut whole = obj.clone();
        if let Some(m) = whole.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("managedFields");
        }
        assert_eq!(without_managed_fields(&obj), whole);
    }
}

#[test]
fn the_stored_entries_are_neither_compared_nor_merged() {
    let schema = widget();
    let entries = json!([entry(None, Some("02:00:00"), json!({"f:spec": {"f:size": {}}}))]);
    let live = json!({"apiVersion": V1, "kind": "Widget", "metadata": {"name": "w", "managedFields": entries}, "spec": {"size": 1}});
    let bare = without_managed_fields(&live);
    let changed = walk::compare(&schema, &live, &bare);
    assert!(changed.added.is_empty() && changed.modified.is_empty() && changed.removed.is_empty());
    assert_eq!(walk::merge(&schema, &live, &bare), bare, "a merge leaves them out");
    // Only there: a key of that name elsewhere is the object's own.
    let label = json!({"apiVersion": V1, "kind": "Widget", "metadata": {"name": "w", "labels": {"managedFields": "x"}}, "spec": {"size": 1}});
    assert!(!walk::compare(&schema, &bare, &label).added.is_empty());
}

/// `track_update` takes a subresource write's sent entries out before the field manager
/// runs, rather than copying them: it must make the same object without them.
#[test]
fn a_subresource_s_field_manager_makes_the_same_object_whatever_entries_were_sent() {
    let schema = widget();
    let live = json!({"apiVersion": V1, "kind": "Widget",
        "metadata": {"name": "w", "uid": "u", "managedFields": [
            entry(None, Some("02:00:00"), json!({"f:spec": {"f:size": {}}})),
            entry(Some("status"), Some("02:00:00"), json!({"f:status": {"f:phase": {}}}))]},
        "spec": {"size": 1}, "status": {"phase": "a"}});
    let statuses = [json!({"phase": "b"}), json!({"phase": "a"}), json!({"replicas": 2}), Value::Null];
    let sent_entries = [None, Some(json!([])), Some(json!("garbage")), live["metadata"].get("managedFields").cloned()];
    for status in &statuses {
        let mut without = live.clone();
        without["status"] = status.clone();
        without["metadata"].as_object_mut().expect("metadata").remove("managedFields");
        fm(&schema, Some("status"), "02:37:02").update(&live, &mut without, Some("c"));
        for sent in &sent_entries {
            let mut with = live.clone();
            with["status"] = status.clone();
            match sent {
                Some(entries) => with["metadata"]["managedFields"] = entries.clone(),
                None => drop(with["metadata"].as_object_mut().expect("metadata").remove("managedFields")),
            }
            fm(&schema, Some("status"), "02:37:02").update(&live, &mut with, Some("c"));
            assert_eq!(with, without);
        }
    }
}
