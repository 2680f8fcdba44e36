//! The owner tree's lists against a real engine (in memory, through `kube::Client`) loaded
//! with the demo: every listable kind read with one request (counted), the demo's owner chain found by uid in a
//! namespace (with its cluster-scoped owner) and across all, and the engine's garbage
//! collector leaving no dangling reference to show.

use kube::api::{Api, DeleteParams, DynamicObject};
use kubectl_crd::cluster::owners::{Link, Target, tree};
use kubectl_crd::cluster::owners_fetch::{Scope, list_everything};
use kubectl_crd::cluster::{Connection, Discovery, demo};
use std::sync::{Arc, Mutex};

/// `Kind ns/name` of each row below the root, with its link.
fn rows(listed: &kubectl_crd::cluster::owners_fetch::Listed, uid: &str) -> Vec<String> {
    tree(&listed.graph, uid)
        .iter()
        .map(|r| {
            let what = match &r.target {
                Target::Object(u) => {
                    listed.graph.node(u).map(|n| format!("{} {}", n.kind, n.display())).unwrap_or_default()
                }
                other => format!("{other:?}"),
            };
            let link = match r.link {
                Link::Root => "=",
                Link::Owner => "↑",
                Link::Dependent => "↓",
            };
            format!("{link} {what}")
        })
        .collect()
}

/// A client that writes down each request (`METHOD path?query`) before sending it on.
fn counting(inner: kube::Client) -> (kube::Client, Arc<Mutex<Vec<String>>>) {
    let seen = Arc::new(Mutex::new(vec![]));
    let log = seen.clone();
    let service = tower::service_fn(move |req: http::Request<kube::client::Body>| {
        let inner = inner.clone();
        log.lock().expect("log").push(format!("{} {}", req.method(), req.uri()));
        async move { inner.send(req).await }
    });
    (kube::Client::new(service, "default"), seen)
}

#[tokio::test]
async fn the_demo_s_owner_chain_is_read_from_one_list_per_kind() {
    let conn = Connection::in_memory(None).await.expect("engine");
    demo::load(conn.client(), |_| {}).await.expect("demo");
    let (client, seen) = counting(conn.client().clone());
    let listed = list_everything(&client, &Scope::Namespace("team-a".into())).await.expect("lists");
    assert!(listed.skipped.is_empty(), "{:?}", listed.skipped);
    let requests = seen.lock().expect("log").clone();
    let lists: Vec<&String> = requests.iter().filter(|r| *r != "GET /api" && *r != "GET /apis").collect();
    assert_eq!(lists.len(), listed.kinds.len(), "one request per kind, none per object: {requests:#?}");
    assert!(lists.iter().any(|r| r.starts_with("GET /api/v1/namespaces/team-a/configmaps")), "{lists:#?}");
    assert!(lists.iter().any(|r| r.starts_with("GET /apis/demo.example.com/v1/clusterpolicies")), "{lists:#?}");
    let kinds: Vec<&str> = listed.kinds.iter().map(|k| k.plural.as_str()).collect();
    for kind in ["configmaps", "namespaces", "widgets", "databases", "clusterpolicies"] {
        assert!(kinds.contains(&kind), "{kind} is listed: {kinds:?}");
    }
    assert_eq!(kinds.iter().filter(|k| **k == "databases").count(), 1, "one version per kind");
    let db = listed.graph.find("demo.example.com", "Database", Some("team-a"), "postgres-01").expect("postgres-01");
    assert_eq!(
        rows(&listed, &db.uid),
        [
            "= Database team-a/postgres-01",
            "↑ ClusterPolicy policy-01",
            "↓ ConfigMap team-a/postgres-01-config",
            "↓ Widget team-a/widget-001",
            "↓ Widget team-a/widget-002",
        ]
    );
    assert_eq!(db.summary, "Ready=True");
    assert!(listed.graph.find("demo.example.com", "Widget", Some("team-b"), "widget-001").is_none(), "team-a only");

    // Across every namespace, from the cluster-scoped owner down.
    let all = list_everything(conn.client(), &Scope::All).await.expect("lists");
    let policy = all.graph.find("demo.example.com", "ClusterPolicy", None, "policy-01").expect("policy-01");
    assert_eq!(rows(&all, &policy.uid).len(), 5, "{:?}", rows(&all, &policy.uid));

    // The owner gone, the collector deletes what it alone owned: nothing dangles.
    let discovery = Discovery::fetch(conn.client()).await.expect("discovery");
    let policies: Api<DynamicObject> = discovery.resolve("clusterpolicies").expect("served").api(conn.client(), None);
    policies.delete("policy-01", &DeleteParams::default()).await.expect("delete");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let after = list_everything(conn.client(), &Scope::Namespace("team-a".into())).await.expect("lists");
        let left: Vec<&str> =
            [("Database", "postgres-01"), ("Widget", "widget-001"), ("ConfigMap", "postgres-01-config")]
                .into_iter()
                .filter(|(kind, name)| {
                    let group = if *kind == "ConfigMap" { "" } else { "demo.example.com" };
                    after.graph.find(group, kind, Some("team-a"), name).is_some()
                })
                .map(|(_, name)| name)
                .collect();
        if left.is_empty() {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the collector deletes the chain; left: {left:?}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}
