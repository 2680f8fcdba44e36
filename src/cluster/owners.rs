//! Owners and dependents through `metadata.ownerReferences`, as a tree around one object
//! (or around every object of a kind). Pure: [`Graph::build`] takes objects already listed
//! (one list per kind, by [`crate::cluster::owners_fetch`]) and matches references by uid,
//! as the garbage collector does; names in a reference are only shown, never trusted.
//!
//! A reference to a uid no listed object has is an owner missing (deleted, or of a kind not
//! listable); a reference back to an object already on the path is a cycle. Both are rows
//! of their own so the view can say so, and neither stops the walk elsewhere.

use crate::cluster::health::{Synced, conditions_summary, synced};
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};

/// Rows a tree holds at most: a kind's forest of thousands of objects stays drawable.
pub const MAX_ROWS: usize = 2000;

/// One `metadata.ownerReferences` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnerRef {
    pub uid: String,
    pub api_version: String,
    pub kind: String,
    pub name: String,
    /// `controller: true`: the owner that manages this object.
    pub controller: bool,
}

/// An object as the graph keeps it: who it is, whom it names as owners, how it is doing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub uid: String,
    pub api_version: String,
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
    pub owners: Vec<OwnerRef>,
    /// [`status_summary`] of the object.
    pub summary: String,
}

impl Node {
    /// Reads a listed object (`apiVersion` and `kind` given: list items may lack them).
    /// `None` without a uid or a name: nothing could refer to it.
    pub fn of(api_version: &str, kind: &str, obj: &Value) -> Option<Node> {
        let meta = obj.get("metadata")?;
        let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(String::from);
        let owners = meta.get("ownerReferences").and_then(Value::as_array).into_iter().flatten();
        Some(Node {
            uid: s(meta, "uid").filter(|u| !u.is_empty())?,
            api_version: api_version.to_string(),
            kind: kind.to_string(),
            namespace: s(meta, "namespace").filter(|n| !n.is_empty()),
            name: s(meta, "name")?,
            owners: owners
                .filter_map(|r| {
                    Some(OwnerRef {
                        uid: s(r, "uid")?,
                        api_version: s(r, "apiVersion").unwrap_or_default(),
                        kind: s(r, "kind").unwrap_or_default(),
                        name: s(r, "name").unwrap_or_default(),
                        controller: r.get("controller").and_then(Value::as_bool).unwrap_or(false),
                    })
                })
                .collect(),
            summary: status_summary(obj),
        })
    }

    /// `ns/name`, or `name` when cluster-scoped.
    pub fn display(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{ns}/{}", self.name),
            None => self.name.clone(),
        }
    }

    /// The API group of its `apiVersion` (empty for core).
    pub fn group(&self) -> &str {
        self.api_version.split_once('/').map(|(g, _)| g).unwrap_or_default()
    }
}

/// One cell on an object's state: the conditions summary of the resources list, a
/// `status.phase` when there are no conditions, and how far the controller is behind.
pub fn status_summary(obj: &Value) -> String {
    let mut words = vec![];
    match conditions_summary(obj).as_str() {
        "-" => words.extend(obj.pointer("/status/phase").and_then(Value::as_str).map(String::from)),
        some => words.push(some.to_string()),
    }
    if let b @ Synced::Behind { .. } = synced(obj) {
        words.push(format!("synced {b}"));
    }
    if words.is_empty() { "-".into() } else { words.join("  ") }
}

/// Every object listed, and who depends on whom.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Graph {
    nodes: BTreeMap<String, Node>,
    /// Owner uid → dependents' uids, in (namespace, name) order.
    dependents: BTreeMap<String, Vec<String>>,
}

impl Graph {
    /// The graph of `nodes`; a uid seen twice (one storage served by two groups, as Events
    /// are) keeps its first node.
    pub fn build(nodes: impl IntoIterator<Item = Node>) -> Graph {
        let mut g = Graph::default();
        for n in nodes {
            g.nodes.entry(n.uid.clone()).or_insert(n);
        }
        for n in g.nodes.values() {
            let mut seen = HashSet::new();
            for o in n.owners.iter().filter(|o| seen.insert(&o.uid)) {
                g.dependents.entry(o.uid.clone()).or_default().push(n.uid.clone());
            }
        }
        let order = |uid: &String, nodes: &BTreeMap<String, Node>| {
            nodes.get(uid).map(|n| (n.namespace.clone(), n.name.clone(), n.kind.clone()))
        };
        for deps in g.dependents.values_mut() {
            deps.sort_by_key(|u| order(u, &g.nodes));
        }
        g
    }

    pub fn node(&self, uid: &str) -> Option<&Node> {
        self.nodes.get(uid)
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The object of this group, kind, namespace and name (any version).
    pub fn find(&self, group: &str, kind: &str, namespace: Option<&str>, name: &str) -> Option<&Node> {
        self.nodes
            .values()
            .find(|n| n.group() == group && n.kind == kind && n.namespace.as_deref() == namespace && n.name == name)
    }

    /// Every object of this group and kind, in (namespace, name) order.
    pub fn of_kind(&self, group: &str, kind: &str) -> Vec<&Node> {
        let mut out: Vec<&Node> = self.nodes.values().filter(|n| n.group() == group && n.kind == kind).collect();
        out.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
        out
    }

    fn dependents_of(&self, uid: &str) -> &[String] {
        self.dependents.get(uid).map(Vec::as_slice).unwrap_or_default()
    }

    /// Whether the object has owners or dependents.
    pub fn linked(&self, uid: &str) -> bool {
        self.nodes.get(uid).is_some_and(|n| !n.owners.is_empty()) || !self.dependents_of(uid).is_empty()
    }
}

/// How a row is related to the row it hangs from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Link {
    /// The object the tree is about.
    Root,
    /// An owner of the row above it at one depth less.
    Owner,
    /// A dependent of it.
    Dependent,
}

/// What a row shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A listed object, by uid.
    Object(String),
    /// A reference to a uid nothing listed has.
    Missing(OwnerRef),
    /// An object already on the path from the root: the walk stops here.
    Cycle(String),
}

/// One row of a tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub depth: usize,
    pub link: Link,
    pub target: Target,
    /// The reference that led here says `controller: true`.
    pub controller: bool,
}

/// The tree around `uid`: the object, its owners and theirs (upwards), then its dependents
/// and theirs (downwards). Empty when `uid` is not in the graph.
pub fn tree(graph: &Graph, uid: &str) -> Vec<Row> {
    let mut rows = vec![];
    if graph.node(uid).is_none() {
        return rows;
    }
    rows.push(Row { depth: 0, link: Link::Root, target: Target::Object(uid.to_string()), controller: false });
    let mut path = vec![uid.to_string()];
    owners(graph, uid, 1, &mut path, &mut rows);
    dependents(graph, uid, 1, &mut path, &mut rows);
    rows.truncate(MAX_ROWS);
    rows
}

/// The trees of several roots, one after the other, [`MAX_ROWS`] in all.
pub fn forest<'a>(graph: &Graph, roots: impl IntoIterator<Item = &'a str>) -> Vec<Row> {
    let mut rows = vec![];
    for uid in roots {
        if rows.len() >= MAX_ROWS {
            break;
        }
        rows.extend(tree(graph, uid));
    }
    rows.truncate(MAX_ROWS);
    rows
}

fn owners(graph: &Graph, uid: &str, depth: usize, path: &mut Vec<String>, rows: &mut Vec<Row>) {
    let Some(node) = graph.node(uid) else { return };
    for o in &node.owners {
        if rows.len() >= MAX_ROWS {
            return;
        }
        let (target, go_on) = match graph.node(&o.uid) {
            None => (Target::Missing(o.clone()), false),
            Some(_) if path.contains(&o.uid) => (Target::Cycle(o.uid.clone()), false),
            Some(_) => (Target::Object(o.uid.clone()), true),
        };
        rows.push(Row { depth, link: Link::Owner, target, controller: o.controller });
        if go_on {
            path.push(o.uid.clone());
            owners(graph, &o.uid, depth + 1, path, rows);
            path.pop();
        }
    }
}

fn dependents(graph: &Graph, uid: &str, depth: usize, path: &mut Vec<String>, rows: &mut Vec<Row>) {
    for d in graph.dependents_of(uid) {
        if rows.len() >= MAX_ROWS {
            return;
        }
        let controller = graph.node(d).is_some_and(|n| n.owners.iter().any(|o| o.uid == uid && o.controller));
        if path.contains(d) {
            rows.push(Row { depth, link: Link::Dependent, target: Target::Cycle(d.clone()), controller });
            continue;
        }
        rows.push(Row { depth, link: Link::Dependent, target: Target::Object(d.clone()), controller });
        path.push(d.clone());
        dependents(graph, d, depth + 1, path, rows);
        path.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A listed object: `kind`, `ns/name` or `name`, uid, and its owners' uids (the first
    /// one the controller).
    fn obj(kind: &str, at: &str, uid: &str, owners: &[&str]) -> Node {
        let (ns, name) = match at.split_once('/') {
            Some((ns, name)) => (Some(ns), name),
            None => (None, at),
        };
        let refs: Vec<Value> = owners
            .iter()
            .enumerate()
            .map(|(i, o)| json!({"apiVersion": "demo.example.com/v1", "kind": "Owner", "name": format!("of-{o}"), "uid": o, "controller": i == 0}))
            .collect();
        let mut meta = json!({"name": name, "uid": uid, "ownerReferences": refs});
        if let Some(ns) = ns {
            meta["namespace"] = json!(ns);
        }
        let status = json!({"conditions": [{"type": "Ready", "status": "True"}]});
        Node::of("demo.example.com/v1", kind, &json!({"metadata": meta, "status": status})).expect("a node")
    }

    /// Rows as `depth link what`, what being `Kind ns/name`, `missing uid` or `cycle uid`.
    fn lines(g: &Graph, rows: &[Row]) -> Vec<String> {
        rows.iter()
            .map(|r| {
                let link = match r.link {
                    Link::Root => "=",
                    Link::Owner => "↑",
                    Link::Dependent => "↓",
                };
                let what = match &r.target {
                    Target::Object(u) => g.node(u).map(|n| format!("{} {}", n.kind, n.display())).unwrap_or_default(),
                    Target::Missing(o) => format!("missing {}", o.uid),
                    Target::Cycle(u) => format!("cycle {u}"),
                };
                format!("{} {link} {what}", r.depth)
            })
            .collect()
    }

    fn chain() -> Graph {
        Graph::build([
            obj("ClusterPolicy", "policy-01", "p1", &[]),
            obj("Database", "team-a/pg", "d1", &["p1"]),
            obj("Widget", "team-a/w2", "w2", &["d1"]),
            obj("Widget", "team-a/w1", "w1", &["d1", "gone"]),
            obj("ConfigMap", "team-a/pg-config", "c1", &["d1"]),
            obj("Secret", "team-a/w1-token", "s1", &["w1"]),
            obj("Widget", "team-a/alone", "w9", &[]),
        ])
    }

    #[test]
    fn a_tree_has_owners_up_to_cluster_scope_and_dependents_down() {
        let g = chain();
        assert_eq!(
            lines(&g, &tree(&g, "w1")),
            [
                "0 = Widget team-a/w1",
                "1 ↑ Database team-a/pg",
                "2 ↑ ClusterPolicy policy-01",
                "1 ↑ missing gone",
                "1 ↓ Secret team-a/w1-token",
            ]
        );
        assert_eq!(
            lines(&g, &tree(&g, "p1")),
            [
                "0 = ClusterPolicy policy-01",
                "1 ↓ Database team-a/pg",
                "2 ↓ ConfigMap team-a/pg-config",
                "2 ↓ Widget team-a/w1",
                "3 ↓ Secret team-a/w1-token",
                "2 ↓ Widget team-a/w2",
            ]
        );
        assert_eq!(lines(&g, &tree(&g, "w9")), ["0 = Widget team-a/alone"]);
        assert!(tree(&g, "nobody").is_empty());
    }

    #[test]
    fn the_controller_flag_follows_the_reference() {
        let g = chain();
        let rows = tree(&g, "w1");
        assert!(rows[1].controller, "d1 is w1's first owner, its controller");
        assert!(!rows[3].controller);
        let rows = tree(&g, "d1");
        assert!(rows.iter().filter(|r| r.link == Link::Dependent).all(|r| r.controller));
    }

    #[test]
    fn cycles_stop_the_walk_and_say_so() {
        let g =
            Graph::build([obj("A", "ns/a", "a", &["b"]), obj("B", "ns/b", "b", &["a"]), obj("C", "ns/c", "c", &["c"])]);
        assert_eq!(lines(&g, &tree(&g, "a")), ["0 = A ns/a", "1 ↑ B ns/b", "2 ↑ cycle a", "1 ↓ B ns/b", "2 ↓ cycle a"]);
        assert_eq!(lines(&g, &tree(&g, "c")), ["0 = C ns/c", "1 ↑ cycle c", "1 ↓ cycle c"]);
    }

    #[test]
    fn a_uid_twice_is_one_node_and_a_reference_twice_one_dependent() {
        let g =
            Graph::build([obj("A", "ns/a", "a", &[]), obj("A", "ns/a2", "a", &[]), obj("B", "ns/b", "b", &["a", "a"])]);
        assert_eq!(g.len(), 2);
        assert_eq!(lines(&g, &tree(&g, "a")), ["0 = A ns/a", "1 ↓ B ns/b"]);
    }

    #[test]
    fn a_forest_is_the_trees_of_its_roots_and_lookups_match_group_and_kind() {
        let g = chain();
        let roots: Vec<&str> = g
            .of_kind("demo.example.com", "Widget")
            .into_iter()
            .filter(|n| g.linked(&n.uid))
            .map(|n| n.uid.as_str())
            .collect();
        assert_eq!(roots, ["w1", "w2"], "alone has neither owners nor dependents");
        let rows = forest(&g, roots);
        assert_eq!(rows.iter().filter(|r| r.link == Link::Root).count(), 2);
        assert_eq!(g.find("demo.example.com", "Database", Some("team-a"), "pg").map(|n| n.uid.as_str()), Some("d1"));
        assert!(g.find("", "Database", Some("team-a"), "pg").is_none());
    }

    #[test]
    fn a_node_needs_a_uid_and_a_name_and_sums_up_its_status() {
        assert!(Node::of("v1", "ConfigMap", &json!({"metadata": {"name": "x"}})).is_none());
        assert!(Node::of("v1", "ConfigMap", &json!({"metadata": {"uid": "u"}})).is_none());
        let cm = Node::of("v1", "ConfigMap", &json!({"metadata": {"name": "x", "uid": "u"}})).expect("node");
        assert_eq!((cm.summary.as_str(), cm.group(), cm.display()), ("-", "", "x".into()));
        let cases = [
            (json!({"status": {"phase": "Running"}}), "Running"),
            (json!({"status": {"conditions": [{"type": "Ready", "status": "False"}], "phase": "x"}}), "Ready=False"),
            (
                json!({"metadata": {"generation": 3}, "status": {"observedGeneration": 1, "phase": "Running"}}),
                "Running  synced no (1/3)",
            ),
        ];
        for (obj, want) in cases {
            assert_eq!(status_summary(&obj), want);
        }
    }
}
