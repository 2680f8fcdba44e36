use super::*;
use crate::resources::managed_fields::managers::ManagerId;
use crate::resources::managed_fields::path::PathElement;
use serde_json::json;

const V1: &str = "stable.example.com/v1";

fn schema() -> Schema {
    Schema::for_kind(None, false)
}

fn fields(v: Value) -> Set {
    Set::from_fields_v1(&v).expect("fieldsV1")
}

fn spec(name: &str) -> Path {
    vec![PathElement::Field("spec".into()), PathElement::Field(name.into())]
}

#[test]
fn an_apply_of_another_managers_field_conflicts_unless_forced() {
    let schema = schema();
    let up = Updater { schema: &schema, filter: &Filter::Everything, other_versions: &[], webhook: None };
    let (a, b) = (ManagerId::apply("a", None), ManagerId::apply("b", None));
    let (live, managers) =
        up.apply(&json!({}), &json!({"spec": {"x": 1, "y": 1}}), V1, Managers::new(), &a, false).expect("a");
    let live = live.expect("changed");

    let err = up.apply(&live, &json!({"spec": {"x": 2}}), V1, managers.clone(), &b, false).expect_err("conflict");
    assert_eq!(err, Refusal::Conflicts(Conflicts(vec![(a.clone(), spec("x"))])));

    // The same value is no conflict: both own it.
    let (same, shared) = up.apply(&live, &json!({"spec": {"x": 1}}), V1, managers.clone(), &b, false).expect("b");
    assert!(same.is_none(), "nothing changed");
    assert!(shared[&a].set.has(&spec("x")) && shared[&b].set.has(&spec("x")));

    let (forced, taken) = up.apply(&live, &json!({"spec": {"x": 2}}), V1, managers, &b, true).expect("forced");
    assert_eq!(forced.expect("changed")["spec"], json!({"x": 2, "y": 1}));
    assert!(!taken[&a].set.has(&spec("x")) && taken[&a].set.has(&spec("y")));
    assert!(taken[&b].set.has(&spec("x")));
}

#[test]
fn fields_an_applier_stops_applying_go_unless_someone_else_owns_them() {
    let schema = schema();
    let up = Updater { schema: &schema, filter: &Filter::Everything, other_versions: &[], webhook: None };
    let a = ManagerId::apply("a", None);
    let u = ManagerId::update("u", V1, None);
    let (live, managers) =
        up.apply(&json!({}), &json!({"spec": {"x": 1, "y": 1, "z": 1}}), V1, Managers::new(), &a, false).expect("a");
    let live = live.expect("changed");
    // An updater changes z: it owns z now.
    let updated = json!({"spec": {"x": 1, "y": 1, "z": 2}});
    let managers = up.update(&live, &updated, V1, managers, &u).expect("updated");
    assert_eq!(managers[&u].set, fields(json!({"f:spec": {"f:z": {}}})));

    let (pruned, after) = up.apply(&updated, &json!({"spec": {"x": 1}}), V1, managers, &a, false).expect("a again");
    assert_eq!(pruned.expect("changed"), json!({"spec": {"x": 1, "z": 2}}), "y went, z stayed with its owner");
    assert!(after[&a].set.has(&spec("x")) && !after[&a].set.has(&spec("y")));
}

#[test]
fn an_update_takes_what_it_changes_and_drops_what_it_removes() {
    let schema = schema();
    let up = Updater { schema: &schema, filter: &Filter::Everything, other_versions: &[], webhook: None };
    let (a, b) = (ManagerId::update("a", V1, None), ManagerId::update("b", V1, None));
    let one = json!({"spec": {"x": 1, "y": 1}});
    let managers = up.update(&json!({}), &one, V1, Managers::new(), &a).expect("updated");
    assert!(managers[&a].set.has(&[PathElement::Field("spec".into())]));
    let two = json!({"spec": {"x": 2}});
    let managers = up.update(&one, &two, V1, managers, &b).expect("updated");
    assert_eq!(managers[&a].set, fields(json!({"f:spec": {".": {}}})));
    assert_eq!(managers[&b].set, fields(json!({"f:spec": {"f:x": {}}})));
}

#[test]
fn filtered_fields_are_neither_owned_nor_taken() {
    let schema = schema();
    let hidden = Filter::Except(fields(json!({"f:status": {}})));
    let up = Updater { schema: &schema, filter: &hidden, other_versions: &[], webhook: None };
    let a = ManagerId::update("a", V1, None);
    let managers = up
        .update(&json!({}), &json!({"spec": {"x": 1}, "status": {"s": 1}}), V1, Managers::new(), &a)
        .expect("updated");
    assert_eq!(managers[&a].set, fields(json!({"f:spec": {".": {}, "f:x": {}}})));
}

/// The oracle: reset fields are keyed by the request's version, so a manager at another
/// version sees the whole change (a v1 write of the main endpoint that changes `.status`
/// conflicts with, or takes it from, a status writer at v2).
#[test]
fn filtered_fields_are_hidden_from_managers_at_the_request_version_only() {
    const V2: &str = "stable.example.com/v2";
    let schema = schema();
    let hidden = Filter::Except(fields(json!({"f:status": {}})));
    let up = Updater { schema: &schema, filter: &hidden, other_versions: &[], webhook: None };
    let live = json!({"spec": {"x": 1}, "status": {"phase": "a"}});
    let status_owner = |version: &str| {
        let id = ManagerId::update("st", version, Some("status"));
        let set = fields(json!({"f:status": {"f:phase": {}}}));
        (id, VersionedSet { set, api_version: version.into(), applied: false })
    };
    let config = json!({"status": {"phase": "b"}});
    let applier = ManagerId::apply("m", None);
    for (version, conflicts) in [(V1, false), (V2, true)] {
        let (id, vs) = status_owner(version);
        let managers = Managers::from([(id.clone(), vs)]);
        let applied = up.apply(&live, &config, V1, managers.clone(), &applier, false);
        assert_eq!(applied.is_err(), conflicts, "a status writer at {version}");
        let changed = json!({"spec": {"x": 1}, "status": {"phase": "c"}});
        let after = up.update(&live, &changed, V1, managers, &ManagerId::update("u", V1, None)).expect("updated");
        assert_eq!(after.contains_key(&id), !conflicts, "an update takes it from a status writer at {version}");
    }
}

/// kube lists a manager's conflicts as `Set.Iterate` walks the set: a node's members
/// before its children's (`.spec.mode` before `.spec.box.x`).
#[test]
fn conflicts_are_listed_members_first() {
    let schema = schema();
    let up = Updater { schema: &schema, filter: &Filter::Everything, other_versions: &[], webhook: None };
    let (a, b) = (ManagerId::apply("a", None), ManagerId::apply("b", None));
    let config = |v: &str| json!({"spec": {"mode": v, "box": {"x": v}}});
    let (live, managers) = up.apply(&json!({}), &config("1"), V1, Managers::new(), &a, false).expect("a");
    let live = live.expect("changed");
    let err = up.apply(&live, &config("2"), V1, managers, &b, false).expect_err("conflicts");
    let boxed =
        vec![PathElement::Field("spec".into()), PathElement::Field("box".into()), PathElement::Field("x".into())];
    assert_eq!(err, Refusal::Conflicts(Conflicts(vec![(a.clone(), spec("mode")), (a, boxed)])));
}

/// The oracle: an Event written through `events.k8s.io/v1` loses the managers recorded
/// through `v1`, whose objects structured-merge-diff cannot convert to.
#[test]
fn managers_at_another_group_are_dropped() {
    let schema = schema();
    let up = Updater { schema: &schema, filter: &Filter::Everything, other_versions: &[], webhook: None };
    let core = ManagerId::update("core", "v1", None);
    let managers = up.update(&json!({}), &json!({"reason": "r"}), "v1", Managers::new(), &core).expect("updated");
    let labelled = json!({"reason": "r", "metadata": {"labels": {"a": "b"}}});
    let new_api = ManagerId::update("new", "events.k8s.io/v1", None);
    let after = up.update(&json!({"reason": "r"}), &labelled, "events.k8s.io/v1", managers, &new_api).expect("updated");
    assert_eq!(after.keys().collect::<Vec<_>>(), [&new_api]);
}

/// The oracle: an Event applied through `events.k8s.io/v1`, then by the same manager
/// through `v1` without some of those fields, keeps them (nothing is pruned).
#[test]
fn an_apply_prunes_nothing_last_applied_through_another_group() {
    let schema = schema();
    let up = Updater { schema: &schema, filter: &Filter::Everything, other_versions: &[], webhook: None };
    let m = ManagerId::apply("m", None);
    let first = json!({"reason": "r", "action": "a"});
    let (live, managers) = up.apply(&json!({}), &first, "events.k8s.io/v1", Managers::new(), &m, false).expect("a");
    let live = live.expect("changed");
    let (same, _) = up.apply(&live, &json!({"reason": "r"}), "v1", managers.clone(), &m, false).expect("again");
    assert!(same.is_none(), "action stays");
    let (pruned, _) =
        up.apply(&live, &json!({"reason": "r"}), "events.k8s.io/v1", managers, &m, false).expect("same group");
    assert_eq!(pruned, Some(json!({"reason": "r"})));
}

/// The oracle, through a webhook renaming v1's `spec.x` to v2's `spec.y`: a manager that
/// applied `x` at v1 and applies at v2 without `y` loses the field, pruned at v1 where it
/// set it (relabelling the v2 object would look for `x` and find nothing to prune). The
/// same field kept in the configuration (`y`) stays, as does one another manager owns.
#[test]
fn an_apply_prunes_at_the_version_the_applier_last_applied() {
    const V2: &str = "stable.example.com/v2";
    let schema = schema();
    let up = Updater { schema: &schema, filter: &Filter::Everything, other_versions: &[], webhook: None };
    let calls = std::cell::Cell::new(0);
    let rename = |obj: &Value, at: &str| -> Result<Value, String> {
        calls.set(calls.get() + 1);
        let (from, to) = if at == V2 { ("x", "y") } else { ("y", "x") };
        let mut obj = obj.clone();
        obj["apiVersion"] = json!(at);
        if let Some(value) = obj["spec"].as_object_mut().and_then(|spec| spec.remove(from)) {
            obj["spec"][to] = value;
        }
        Ok(obj)
    };
    let a = ManagerId::apply("a", None);
    let last =
        VersionedSet { set: fields(json!({"f:spec": {"f:x": {}, "f:z": {}}})), api_version: V1.into(), applied: true };
    let owned_by = |config: Value, others: &[(&str, Value)]| {
        let mut managers = Managers::from([(
            a.clone(),
            VersionedSet { set: walk::field_set(&schema, &config), api_version: V2.into(), applied: true },
        )]);
        for (name, set) in others {
            let vs = VersionedSet { set: fields(set.clone()), api_version: V2.into(), applied: true };
            managers.insert(ManagerId::apply(name, None), vs);
        }
        let merged = json!({"apiVersion": V2, "spec": {"y": 1, "z": 1}});
        prune_across_versions(&up, merged, V2, &managers, &last, &rename).expect("pruned")["spec"].clone()
    };
    let config = json!({"apiVersion": V2, "spec": {"z": 1}});
    assert_eq!(owned_by(config.clone(), &[]), json!({"z": 1}), "x, y at v2, is pruned");
    assert!(calls.get() > 0, "converted through the webhook");
    assert_eq!(owned_by(json!({"apiVersion": V2, "spec": {"y": 1}}), &[]), json!({"y": 1}), "y kept, z pruned");
    assert_eq!(owned_by(config, &[("b", json!({"f:spec": {"f:y": {}}}))]), json!({"y": 1, "z": 1}), "b owns y");
}
