//! Where `serve` keeps built-in kinds in etcd: where kube-apiserver 1.32 keeps them, by their
//! bare resource name (`/registry/namespaces/team`, `/registry/leases/team/l1`), as recorded
//! from the oracle in `etcd_goldens/builtin_keys.json`; the replicas' own Leases too.

use super::etcd::{etcd_in, etcd_keys, ok, serve};
use crate::support::cli::write_file;
use serde_json::Value;

const GOLDEN: &str = include_str!("etcd_goldens/builtin_keys.json");

#[test]
fn built_in_kinds_sit_in_etcd_where_kube_apiserver_keeps_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let etcd = etcd_in(dir.path());
    let served = serve(dir.path(), &etcd);
    let golden: Value = serde_json::from_str(GOLDEN).expect("golden");
    for (i, object) in golden["objects"].as_array().expect("objects").iter().enumerate() {
        ok(&served, &["create", "-f", &write_file(dir.path(), &format!("{i}.json"), &object.to_string())]);
    }
    let team: Vec<String> = etcd_keys(&etcd, "/registry/").into_iter().filter(|k| k.contains("/team")).collect();
    let kube: Vec<String> = serde_json::from_value(golden["keys"].clone()).expect("keys");
    assert_eq!(team, kube);

    // Read back through the engine from those keys.
    let names = ok(&served, &["get", "cm,secret,sa,lease,ev", "-n", "team", "-o", "name"]);
    for name in ["configmap/c1", "secret/s1", "serviceaccount/sa1", "lease.coordination.k8s.io/l1", "event/e1"] {
        assert!(names.lines().any(|l| l == name), "{name} in {names}");
    }
    let heartbeats = etcd_keys(&etcd, "/registry/leases/kube-system/kubectl-crd-serve-");
    assert_eq!(heartbeats.len(), 1, "this replica's heartbeat Lease: {heartbeats:?}");
    assert!(
        etcd_keys(&etcd, "/registry/core/").is_empty() && etcd_keys(&etcd, "/registry/coordination.k8s.io/").is_empty()
    );
}
