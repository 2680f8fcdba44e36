//! The widget the engine benchmarks write and watch: a CRD with a spec schema and the
//! status subresource, and its objects (labels, and a spec of about 230 bytes).

use serde_json::{Value, json};

/// The CRD's name.
pub const CRD: &str = "widgets.stable.example.com";

/// The widget CRD, namespaced, served and stored at `v1`.
pub fn crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD},
        "spec": {"group": "stable.example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "color": {"type": "string"}, "size": {"type": "integer"}, "note": {"type": "string"}}},
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}]}
    })
}

/// Widget `w-{i:05}`.
pub fn widget(i: usize) -> Value {
    json!({
        "apiVersion": "stable.example.com/v1", "kind": "Widget",
        "metadata": {"name": format!("w-{i:05}"), "labels": {"app": "bench", "shard": format!("s{}", i % 16)}},
        "spec": {"color": "red", "size": i % 10, "note": "x".repeat(200)}
    })
}
