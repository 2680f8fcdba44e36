use super::*;
use crate::cluster::discovery::tests::resource;
use crate::cluster::owners::{Graph, Node};
use crate::tui::action::Effect;
use crate::tui::fixtures::{open_widgets, press, state, type_keys};
use crate::tui::owner_tree_update::on_listed;
use crate::tui::state::Screen;
use crossterm::event::KeyCode;
use serde_json::json;

/// A Widget in default (uid `u-NAME`) owned by the given uids.
pub(crate) fn widget_node(name: &str, owners: &[(&str, &str, &str)]) -> Node {
    let refs: Vec<_> = owners
        .iter()
        .map(|(kind, name, uid)| json!({"apiVersion": "demo.example.com/v1", "kind": kind, "name": name, "uid": uid, "controller": true}))
        .collect();
    let obj = json!({"metadata": {"name": name, "namespace": "default", "uid": format!("u-{name}"), "ownerReferences": refs},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]}});
    Node::of("demo.example.com/v1", "Widget", &obj).expect("node")
}

/// The lists of the demo-like chain: a cluster-scoped owner, widget-000 owned by it and
/// by a missing owner, widget-001 owned by widget-000, a ConfigMap owned by widget-000.
pub(crate) fn listed() -> Box<Listed> {
    let policy = Node::of(
        "demo.example.com/v1",
        "ClusterPolicy",
        &json!({"metadata": {"name": "policy-01", "uid": "u-policy"}, "status": {"phase": "Active"}}),
    )
    .expect("node");
    let cm = Node::of(
        "v1",
        "ConfigMap",
        &json!({"metadata": {"name": "widget-000-config", "namespace": "default", "uid": "u-cm",
            "ownerReferences": [{"apiVersion": "demo.example.com/v1", "kind": "Widget", "name": "widget-000", "uid": "u-widget-000"}]}}),
    )
    .expect("node");
    let nodes = [
        policy,
        widget_node("widget-000", &[("ClusterPolicy", "policy-01", "u-policy"), ("Database", "gone-db", "u-gone")]),
        widget_node("widget-001", &[("Widget", "widget-000", "u-widget-000")]),
        widget_node("widget-002", &[]),
        cm,
    ];
    let kinds = [
        ("demo.example.com", "Widget", "widgets"),
        ("demo.example.com", "ClusterPolicy", "clusterpolicies"),
        ("demo.example.com", "Database", "databases"),
        ("", "ConfigMap", "configmaps"),
    ]
    .map(|(group, kind, plural)| resource(group, "v1", kind, plural, &[]))
    .to_vec();
    Box::new(Listed { graph: Graph::build(nodes), kinds, skipped: vec![] })
}

#[test]
fn o_on_a_row_lists_its_namespace_and_enter_opens_a_custom_resource_only() {
    let mut s = state();
    open_widgets(&mut s, 3);
    let effects = type_keys(&mut s, "o");
    let request = s.next_watch;
    assert_eq!(effects, [Effect::LoadOwners { request, scope: Scope::Namespace("default".into()) }]);
    on_listed(&mut s, request + 1, Ok(listed()));
    let Screen::Owners(o) = s.screen() else { panic!("the owner tree") };
    assert!(matches!(o.loading, Loading::Pending), "an answer to another request is dropped");
    on_listed(&mut s, request, Ok(listed()));
    let Screen::Owners(o) = s.screen() else { panic!("the owner tree") };
    assert_eq!(o.rows().len(), 5, "root, owner, missing owner, two dependents");
    // The ConfigMap (row 3 or 4, after widget-000's config by name) is not a custom resource.
    type_keys(&mut s, "G");
    let effects = press(&mut s, KeyCode::Enter);
    assert_eq!(effects.len(), 1, "widget-001 (last by name) opens");
    assert!(matches!(s.screen(), Screen::Resource(r) if r.key.name == "widget-001"));
    press(&mut s, KeyCode::Esc);
    type_keys(&mut s, "k");
    assert!(press(&mut s, KeyCode::Enter).is_empty());
    assert!(s.message.as_ref().is_some_and(|(_, m)| m.contains("not a custom resource")), "{:?}", s.message);
    type_keys(&mut s, "k");
    assert!(press(&mut s, KeyCode::Enter).is_empty());
    assert!(s.message.as_ref().is_some_and(|(_, m)| m.contains("owner missing") || m.contains("missing")));
    let effects = crate::tui::fixtures::ctrl(&mut s, 'r');
    assert!(matches!(effects.as_slice(), [Effect::LoadOwners { .. }]));
    let request = s.next_watch;
    on_listed(&mut s, request, Ok(listed()));
    // `o` on a row: that object's own tree (the ConfigMap, in its namespace).
    type_keys(&mut s, "j");
    let effects = type_keys(&mut s, "o");
    assert_eq!(effects, [Effect::LoadOwners { request: s.next_watch, scope: Scope::Namespace("default".into()) }]);
    let Screen::Owners(o) = s.screen() else { panic!("the owner tree") };
    assert_eq!(o.title(), "configmaps/default/widget-000-config");
    assert_eq!(s.stack.iter().filter(|x| matches!(x, Screen::Owners(_))).count(), 2, "Esc goes back to the first");
}

#[test]
fn o_on_a_crd_shows_the_trees_of_its_linked_objects_and_counts_the_rest() {
    let mut s = state();
    let at = s.registrations.items.iter().position(|r| r.name() == "widgets.demo.example.com").expect("widgets");
    s.registrations.cursor = at;
    let effects = type_keys(&mut s, "o");
    let request = s.next_watch;
    assert_eq!(effects, [Effect::LoadOwners { request, scope: Scope::Namespace("default".into()) }]);
    on_listed(&mut s, request, Ok(listed()));
    let Screen::Owners(o) = s.screen() else { panic!("the owner tree") };
    let Loading::Ready { unlinked, rows, .. } = &o.loading else { panic!("ready") };
    assert_eq!(*unlinked, 1, "widget-002 has neither");
    assert_eq!(rows.iter().filter(|r| r.depth == 0).count(), 2);
}
