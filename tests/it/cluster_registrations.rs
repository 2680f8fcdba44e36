//! The registrations' reads against a real engine (in memory, through `kube::Client`)
//! loaded with the demo: the summaries a listing reads are the CRDs without their
//! versions' schemas, and a CRD found by one of its names is read whole.

use kubectl_crd::cluster::registrations::{find_crd, list_crd_summaries, list_crds};
use kubectl_crd::cluster::{Connection, demo};

#[tokio::test]
async fn summaries_are_the_crds_without_their_schemas_and_a_found_crd_is_whole() {
    let conn = Connection::in_memory(None).await.expect("engine");
    demo::load(conn.client(), |_| {}).await.expect("demo");
    let whole = list_crds(conn.client()).await.expect("CRDs");
    let summaries = list_crd_summaries(conn.client()).await.expect("summaries");
    assert!(whole.len() >= 3, "the demo's CRDs: {}", whole.len());
    assert!(whole.iter().all(|c| c.spec.versions.iter().all(|v| v.schema.is_some())), "the demo's have schemas");
    let without_schemas: Vec<_> = whole
        .into_iter()
        .map(|mut crd| {
            crd.spec.versions.iter_mut().for_each(|v| v.schema = None);
            serde_json::to_value(crd).expect("JSON")
        })
        .collect();
    let summaries: Vec<_> = summaries.into_iter().map(|crd| serde_json::to_value(crd).expect("JSON")).collect();
    assert_eq!(summaries, without_schemas, "everything else, in the same order");

    let by_kind = find_crd(conn.client(), "Widget").await.expect("found by kind");
    assert_eq!(by_kind.metadata.name.as_deref(), Some("widgets.demo.example.com"));
    assert!(by_kind.spec.versions.iter().all(|v| v.schema.is_some()), "read whole");
    assert!(find_crd(conn.client(), "nothing-by-that-name").await.is_err());
}
