//! The owner tree screen (`o`): its state and its share of the step function. Opened on
//! an object (a resources row, a resource) it shows that object's owners upwards and its
//! dependents downwards; opened on a CRD (registrations, detail), the trees of its objects
//! that have owners or dependents, one after another (those with neither are counted).
//!
//! The lists are one [`Effect::LoadOwners`] (one request per kind); the tree is built by
//! the pure [`crate::cluster::owners`] when they come back. Enter opens a custom resource.

use crate::cluster::discovery::ResourceType;
use crate::cluster::owners::{Row, Target, forest, tree};
use crate::cluster::owners_fetch::{Listed, Scope};
use crate::tui::action::{Action, Effect};
use crate::tui::state::{ResourceScreen, Screen, State};
use crate::tui::table::{ObjKey, scroll_offset};

/// What the tree is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum About {
    Object {
        kind: ResourceType,
        key: ObjKey,
    },
    /// A CRD's objects (its served kind).
    Kind(ResourceType),
}

/// Where the lists are.
#[derive(Debug, Clone)]
pub enum Loading {
    Pending,
    Failed(String),
    Ready {
        listed: Box<Listed>,
        rows: Vec<Row>,
        /// Of a kind: its objects with neither owners nor dependents.
        unlinked: usize,
    },
}

/// The owner tree screen.
#[derive(Debug, Clone)]
pub struct OwnerTreeScreen {
    pub about: About,
    pub scope: Scope,
    /// The lists this screen waits for; older answers are dropped.
    pub request: u64,
    pub loading: Loading,
    pub cursor: usize,
    pub offset: usize,
}

impl OwnerTreeScreen {
    /// What the title says: `widgets/team-a/widget-001`, or `widgets (every object)`.
    pub fn title(&self) -> String {
        match &self.about {
            About::Object { kind, key } => format!("{}/{}", kind.plural, key.display()),
            About::Kind(kind) => format!("{} (its objects)", kind.qualified_name()),
        }
    }

    pub fn rows(&self) -> &[Row] {
        match &self.loading {
            Loading::Ready { rows, .. } => rows,
            _ => &[],
        }
    }

    /// The object on the cursor's row, as a tree to open (`o` again: its own tree); the
    /// kind must be one the lists read.
    fn selected(&self) -> Option<About> {
        let Loading::Ready { listed, rows, .. } = &self.loading else { return None };
        let (Target::Object(uid) | Target::Cycle(uid)) = &rows.get(self.cursor)?.target else { return None };
        let node = listed.graph.node(uid)?;
        let kind = listed.kinds.iter().find(|k| k.group == node.group() && k.kind == node.kind)?;
        Some(About::Object { kind: kind.clone(), key: ObjKey::new(node.namespace.as_deref(), &node.name) })
    }

    fn move_by(&mut self, n: isize, height: usize) {
        let last = self.rows().len().saturating_sub(1);
        self.cursor = self.cursor.saturating_add_signed(n).min(last);
        self.offset = scroll_offset(self.offset, self.cursor, height);
    }
}

/// `o`: the owner tree of the object under the cursor, the resource shown, or the CRD.
pub(super) fn open(state: &mut State) -> Vec<Effect> {
    let about = match state.screen() {
        Screen::Resources(r) => match r.table.current() {
            Some(row) => About::Object { kind: r.kind.clone(), key: row.key.clone() },
            None => return vec![],
        },
        Screen::Resource(r) => About::Object { kind: r.kind.clone(), key: r.key.clone() },
        Screen::Owners(o) => match o.selected() {
            Some(about) => about,
            None => return vec![],
        },
        Screen::Registrations | Screen::Detail(_) => match state.selected_registration() {
            Some(reg) => match &reg.resource {
                Some(kind) => About::Kind(kind.clone()),
                None => {
                    state.error(format!("{} serves no objects yet: no owner tree", reg.name()));
                    return vec![];
                }
            },
            None => return vec![],
        },
        _ => return vec![],
    };
    // Owner references stay in a namespace or point at cluster scope, so a namespaced
    // object's tree needs its namespace only; a cluster-scoped one may own anywhere.
    let scope = match &about {
        About::Object { key, .. } => key.namespace.clone().map_or(Scope::All, Scope::Namespace),
        About::Kind(kind) => match state.namespaces.one() {
            Some(ns) if kind.namespaced => Scope::Namespace(ns.to_string()),
            _ => Scope::All,
        },
    };
    state.next_watch += 1;
    let request = state.next_watch;
    let screen =
        OwnerTreeScreen { about, scope: scope.clone(), request, loading: Loading::Pending, cursor: 0, offset: 0 };
    state.stack.push(Screen::Owners(Box::new(screen)));
    vec![Effect::LoadOwners { request, scope }]
}

/// The keys of the owner tree; `None`: not its own (Esc, help, …).
pub(super) fn on_action(state: &mut State, action: Action, height: usize) -> Option<Vec<Effect>> {
    let Screen::Owners(o) = state.screen_mut() else { return None };
    match action {
        Action::Move(n) => o.move_by(n, height),
        Action::Page(n) => o.move_by(n * height.max(1) as isize, height),
        Action::Jump(end) => o.move_by(if end { isize::MAX / 2 } else { isize::MIN / 2 }, height),
        Action::Refresh => {
            state.next_watch += 1;
            let request = state.next_watch;
            let Screen::Owners(o) = state.screen_mut() else { return None };
            o.request = request;
            o.loading = Loading::Pending;
            return Some(vec![Effect::LoadOwners { request, scope: o.scope.clone() }]);
        }
        Action::Enter => return Some(enter(state)),
        _ => return None,
    }
    Some(vec![])
}

/// Enter on a row: the object's resource screen, for custom resources.
fn enter(state: &mut State) -> Vec<Effect> {
    let Screen::Owners(o) = state.screen() else { return vec![] };
    let Loading::Ready { listed, rows, .. } = &o.loading else { return vec![] };
    let node = match rows.get(o.cursor).map(|r| &r.target) {
        Some(Target::Object(uid) | Target::Cycle(uid)) => listed.graph.node(uid),
        Some(Target::Missing(r)) => {
            let text = format!("{} {} (uid {}) is not there: the owner is missing", r.kind, r.name, r.uid);
            state.error(text);
            return vec![];
        }
        None => None,
    };
    let Some(node) = node else { return vec![] };
    let custom = state
        .registrations
        .items
        .iter()
        .filter_map(|r| r.resource.as_ref())
        .find(|k| k.group == node.group() && k.kind == node.kind);
    let Some(kind) = custom.cloned() else {
        state.error(format!(
            "{} {} is not a custom resource: the TUI opens custom resources only",
            node.kind,
            node.display()
        ));
        return vec![];
    };
    let key = ObjKey::new(node.namespace.as_deref(), &node.name);
    state.stack.push(Screen::Resource(ResourceScreen::new(kind.clone(), key.clone())));
    vec![Effect::LoadObject { kind, key }]
}

/// The lists of request `request` came back: the tree is built.
pub(super) fn on_listed(state: &mut State, request: u64, result: Result<Box<Listed>, String>) {
    let screen = state.stack.iter_mut().find_map(|s| match s {
        Screen::Owners(o) if o.request == request => Some(o),
        _ => None,
    });
    let Some(o) = screen else { return };
    o.loading = match result {
        Err(e) => Loading::Failed(format!("cannot list: {e}")),
        Ok(listed) => built(&o.about, listed),
    };
    let last = o.rows().len().saturating_sub(1);
    o.cursor = o.cursor.min(last);
}

fn built(about: &About, listed: Box<Listed>) -> Loading {
    let g = &listed.graph;
    match about {
        About::Object { kind, key } => {
            let found = g.find(&kind.group, &kind.kind, key.namespace.as_deref(), &key.name);
            match found.map(|n| tree(g, &n.uid)) {
                Some(rows) => Loading::Ready { rows, listed, unlinked: 0 },
                None => Loading::Failed(format!("{} is not among the objects listed (deleted?)", key.display())),
            }
        }
        About::Kind(kind) => {
            let all = g.of_kind(&kind.group, &kind.kind);
            let roots: Vec<&str> = all.iter().filter(|n| g.linked(&n.uid)).map(|n| n.uid.as_str()).collect();
            let unlinked = all.len() - roots.len();
            let rows = forest(g, roots);
            Loading::Ready { rows, listed, unlinked }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::cluster::discovery::tests::resource;
    use crate::cluster::owners::{Graph, Node};
    use crate::tui::fixtures::{open_widgets, press, state, type_keys};
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
}
