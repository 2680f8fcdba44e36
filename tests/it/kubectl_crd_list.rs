//! `kubectl crd list`, run by the real `kubectl` against the local engine with the demo
//! set: in JSON and YAML it prints the CustomResourceDefinitions exactly as `kubectl get
//! crd -o json|yaml` prints them from the same server (a `List`, managedFields hidden);
//! the summary stays in table, wide and csv, its condition columns spelled one way.

use crate::support::cli::{Served, normalize_table};
use crate::support::kubectl::kubectl_for;
use crate::support::plugin::Plugin;

fn parse(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

#[test]
fn list_prints_api_objects_in_json_and_yaml_and_the_summary_otherwise() {
    let p = Plugin::with_demo();
    let served = Served::start(p.data.path(), &[]);
    let kubectl = |format: &str| {
        let out = kubectl_for(&served.kubeconfig).args(["get", "crd", "-o", format]).output().expect("kubectl get crd");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let ours = p.ok(&["list", "-o", "json"]);
    // Compared whole, but reported briefly: the documents are long.
    assert!(parse(&ours) == parse(&kubectl("json")), "list -o json is not kubectl get crd -o json:\n{ours:.2000}");
    let yaml: serde_json::Value = serde_saphyr::from_str(&p.ok(&["list", "-o", "yaml"])).expect("yaml");
    let theirs: serde_json::Value = serde_saphyr::from_str(&kubectl("yaml")).expect("kubectl's yaml");
    assert!(yaml == theirs, "list -o yaml is not kubectl get crd -o yaml");

    let table = normalize_table(&p.ok(&["list"]));
    let header = table.lines().next().unwrap_or_default();
    assert!(header.contains("ESTABLISHED   NAMESACCEPTED   TERMINATING   RESOURCES"), "{table}");
    let legacy = table.lines().find(|l| l.starts_with("legacyjobs.")).expect("legacyjobs");
    assert!(legacy.contains("   True          True            True          1 "), "{table}");
    let csv = p.ok(&["list", "-o", "csv"]);
    assert!(
        csv.contains("\nwidgets.demo.example.com,demo.example.com,Widget,Namespaced,v1,True,True,False,180,"),
        "{csv}"
    );
}
