//! The test clusters as their users see them: start, isolation, CRDs from types and YAML,
//! snapshots and forks, the served variant and durable clusters. One binary, as the plugin's.

use futures::StreamExt as _;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, ListParams, PostParams};
use kube::{CustomResource, CustomResourceExt};
use kubectl_crd_testing::{Error, TestCluster};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// The fixture kind: a widget with a bounded size and a status.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Widget", namespaced, status = "WidgetStatus")]
struct WidgetSpec {
    #[schemars(range(min = 1, max = 10))]
    size: i64,
}

#[derive(Deserialize, Serialize, Clone, Debug, JsonSchema)]
struct WidgetStatus {
    ready: bool,
}

fn widget(name: &str, size: i64) -> Widget {
    Widget::new(name, WidgetSpec { size })
}

fn config_map(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: kube::api::ObjectMeta { name: Some(name.into()), ..Default::default() },
        ..Default::default()
    }
}

async fn names<K>(api: &Api<K>) -> Vec<String>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let list = api.list(&ListParams::default()).await.expect("list");
    list.items.iter().filter_map(|o| o.meta().name.clone()).collect()
}

fn resource_version<K: kube::Resource>(object: &K) -> u64 {
    object.meta().resource_version.as_deref().and_then(|rv| rv.parse().ok()).expect("numeric resourceVersion")
}

#[tokio::test]
async fn a_cluster_starts_in_milliseconds_and_answers() {
    // Warm up (first-use costs of the process: allocator, lazy statics), then measure.
    TestCluster::start().await.expect("starts");
    let mut times = Vec::new();
    for _ in 0..20 {
        let started = Instant::now();
        let cluster = TestCluster::start().await.expect("starts");
        times.push(started.elapsed());
        drop(cluster);
    }
    times.sort();
    println!("TestCluster::start: median {:?}, fastest {:?} (target < 5 ms)", times[10], times[0]);
    let cluster = TestCluster::start().await.expect("starts");
    let namespaces: Api<Namespace> = Api::all(cluster.client());
    assert!(names(&namespaces).await.contains(&"default".to_string()));
    assert_eq!(cluster.client().apiserver_version().await.expect("version").major, "1");
}

#[tokio::test]
async fn clusters_are_isolated() {
    let (a, b) = (TestCluster::start().await.expect("a"), TestCluster::start().await.expect("b"));
    a.install(&config_map("only-in-a")).await.expect("installs");
    a.install_crd::<Widget>().await.expect("crd");
    let in_b: Api<ConfigMap> = Api::default_namespaced(b.client());
    assert_eq!(in_b.get_opt("only-in-a").await.expect("get"), None);
    let widgets_in_b: Api<Widget> = Api::default_namespaced(b.client());
    let err = widgets_in_b.list(&ListParams::default()).await.expect_err("no Widget kind in b");
    assert!(matches!(err, kube::Error::Api(ref s) if s.code == 404), "{err:?}");
}

#[tokio::test]
async fn a_crd_from_a_type_is_established_and_its_schema_enforced() {
    let cluster = TestCluster::start().await.expect("starts");
    let crd = cluster.install_crd::<Widget>().await.expect("installs");
    assert_eq!(crd.metadata.name.as_deref(), Some(Widget::crd_name()));
    let widgets: Api<Widget> = Api::default_namespaced(cluster.client());
    widgets.create(&PostParams::default(), &widget("ok", 3)).await.expect("valid");
    let err = widgets.create(&PostParams::default(), &widget("big", 11)).await.expect_err("size > 10");
    let kube::Error::Api(status) = err else { panic!("an API error: {err:?}") };
    assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
    assert!(
        status.message.contains("spec.size: Invalid value: 11: spec.size in body should be less than or equal to 10")
    );
    // The same refusal through install, with the Status kept.
    let err = cluster.install(&widget("big", 11)).await.expect_err("size > 10");
    assert_eq!(err.status().map(|s| s.code), Some(422), "{err}");
    assert!(err.to_string().starts_with("installing Widget big"), "{err}");
}

/// The seed file (a CRD, one of its objects with a status, and a namespace).
const SEED_FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/seed.yaml");
const SEED: &str = include_str!("seed.yaml");

#[tokio::test]
async fn yaml_installs_namespaces_then_crds_then_objects_with_their_status() {
    let cluster = TestCluster::start().await.expect("starts");
    let stored = cluster.install_yaml(SEED).await.expect("installs");
    let kinds: Vec<&str> = stored.iter().filter_map(|o| o.types.as_ref()).map(|t| t.kind.as_str()).collect();
    assert_eq!(kinds, vec!["Namespace", "CustomResourceDefinition", "Gadget"]);
    let gadget = stored.last().expect("gadget");
    assert_eq!(gadget.data["spec"]["color"], "blue", "defaulted by the schema");
    assert_eq!(gadget.data["status"]["phase"], "Ready", "written through /status");
    // Installing again converges (server-side apply) instead of failing.
    cluster.install_yaml(SEED).await.expect("installs again");
}

#[tokio::test]
async fn a_file_installs_its_cel_rule_holds_and_a_bad_file_is_named() {
    let cluster = TestCluster::start().await.expect("starts");
    assert_eq!(cluster.install_file(SEED_FILE).await.expect("installs").len(), 3);
    let red = "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: red, namespace: team}\nspec: {color: red}\n";
    let err = cluster.install_yaml(red).await.expect_err("the CEL rule refuses it");
    assert_eq!(err.status().map(|s| s.code), Some(422), "{err}");
    assert!(err.to_string().contains("red gadgets are not made"), "{err}");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("seed.yaml");
    std::fs::write(&path, "apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n").expect("write");
    let err = cluster.install_file(&path).await.expect_err("no name");
    assert!(matches!(err, Error::Document { .. }), "{err:?}");
    assert!(err.to_string().contains("seed.yaml (document 1): the object has no metadata.name"), "{err}");
}

#[tokio::test]
async fn forks_are_isolated_and_their_resource_versions_go_on() {
    let parent = TestCluster::start().await.expect("starts");
    parent.install_crd::<Widget>().await.expect("crd");
    let seeded = parent.install(&widget("seeded", 1)).await.expect("seed");
    let snapshot = parent.snapshot().await.expect("snapshot");
    assert_eq!(snapshot.revision(), resource_version(&seeded));
    let (fork, sibling) = (snapshot.fork().await.expect("fork"), snapshot.fork().await.expect("sibling"));

    let in_fork: Api<Widget> = Api::default_namespaced(fork.client());
    assert_eq!(names(&in_fork).await, vec!["seeded"], "the fork serves the snapshot's CRD and objects");
    let created = in_fork.create(&PostParams::default(), &widget("fork-only", 2)).await.expect("create");
    assert_eq!(resource_version(&created), snapshot.revision() + 1, "revisions go on from the snapshot");
    in_fork.delete("seeded", &Default::default()).await.expect("delete");

    parent.install(&widget("parent-only", 3)).await.expect("parent write");
    let in_parent: Api<Widget> = Api::default_namespaced(parent.client());
    let in_sibling: Api<Widget> = Api::default_namespaced(sibling.client());
    assert_eq!(names(&in_fork).await, vec!["fork-only"]);
    assert_eq!(names(&in_parent).await, vec!["parent-only", "seeded"]);
    assert_eq!(names(&in_sibling).await, vec!["seeded"]);
    // A fork of a fork, and a fork outliving its parent.
    let grandchild = fork.snapshot().await.expect("snapshot").fork().await.expect("fork");
    drop((parent, fork));
    let in_grandchild: Api<Widget> = Api::default_namespaced(grandchild.client());
    assert_eq!(names(&in_grandchild).await, vec!["fork-only"]);
}

#[tokio::test]
async fn a_forks_garbage_collector_knows_the_snapshots_owners() {
    let parent = TestCluster::start().await.expect("starts");
    let owner = parent.install(&config_map("owner")).await.expect("owner");
    let mut dependent = config_map("dependent");
    dependent.metadata.owner_references = Some(vec![k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        name: "owner".into(),
        uid: owner.metadata.uid.clone().expect("uid"),
        ..Default::default()
    }]);
    parent.install(&dependent).await.expect("dependent");
    let snapshot = parent.snapshot().await.expect("snapshot");
    assert!(format!("{snapshot:?}").contains("with_gc_graph: true"), "the graph is carried: {snapshot:?}");
    let fork = snapshot.fork().await.expect("fork");
    let in_fork: Api<ConfigMap> = Api::default_namespaced(fork.client());
    in_fork.delete("owner", &Default::default()).await.expect("delete the owner");
    let collected = async {
        while in_fork.get_opt("dependent").await.expect("get").is_some() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(5), collected).await.expect("the fork's collector deletes the dependent");
    let in_parent: Api<ConfigMap> = Api::default_namespaced(parent.client());
    assert!(in_parent.get_opt("dependent").await.expect("get").is_some(), "the parent keeps it");
}

#[tokio::test]
async fn a_fork_is_watched_from_its_revision() {
    let parent = TestCluster::start().await.expect("starts");
    parent.install_crd::<Widget>().await.expect("crd");
    let fork = parent.snapshot().await.expect("snapshot").fork().await.expect("fork");
    let widgets: Api<Widget> = Api::default_namespaced(fork.client());
    let list = widgets.list(&ListParams::default()).await.expect("list");
    let from = list.metadata.resource_version.expect("list revision");
    let mut events = widgets.watch(&Default::default(), &from).await.expect("watch").boxed();
    widgets.create(&PostParams::default(), &widget("w", 1)).await.expect("create");
    let event = tokio::time::timeout(Duration::from_secs(5), events.next()).await.expect("in time");
    assert!(matches!(event, Some(Ok(kube::core::WatchEvent::Added(ref w))) if w.metadata.name.as_deref() == Some("w")));
}

#[tokio::test]
async fn the_served_cluster_answers_a_client_built_from_its_kubeconfig() {
    let cluster = TestCluster::start().await.expect("starts");
    cluster.install_crd::<Widget>().await.expect("crd");
    let served = cluster.serve().await.expect("serves");
    assert!(served.url().starts_with("http://127.0.0.1:"), "{}", served.url());
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("kubeconfig");
    served.write_kubeconfig(&path).expect("writes");
    let kubeconfig = kube::config::Kubeconfig::read_from(&path).expect("reads");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await.expect("config");
    let client = kube::Client::try_from(config).expect("client");
    let over_http: Api<Widget> = Api::default_namespaced(client);
    over_http.create(&PostParams::default(), &widget("over-http", 1)).await.expect("create over HTTP");
    let in_process: Api<Widget> = Api::default_namespaced(cluster.client());
    assert_eq!(names(&in_process).await, vec!["over-http"], "one cluster behind both clients");
    let direct = kube::Client::try_from(served.config()).expect("client");
    assert_eq!(names(&Api::<Widget>::default_namespaced(direct)).await, vec!["over-http"]);
    served.stop().await;
}

#[tokio::test]
async fn a_durable_cluster_keeps_its_objects_in_its_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let first = TestCluster::builder().durable(dir.path()).start().await.expect("starts");
    first.install(&config_map("kept")).await.expect("installs");
    let fork = first.snapshot().await.expect("snapshot").fork().await.expect("a fork in memory");
    first.shutdown().await;
    let in_fork: Api<ConfigMap> = Api::default_namespaced(fork.client());
    assert!(in_fork.get_opt("kept").await.expect("get").is_some(), "the fork outlives its durable parent");
    assert!(dir.path().join(kubectl_crd_testing::STORE_FILE).exists());
    let second = TestCluster::builder().durable(dir.path()).namespace("kube-system").start().await.expect("reopens");
    let kept: Api<ConfigMap> = Api::namespaced(second.client(), "default");
    assert!(kept.get_opt("kept").await.expect("get").is_some());
    assert_eq!(second.namespace(), "kube-system");
}
