//! The one CRD fixture builder: a CustomResourceDefinition document built in code, starting
//! from the smallest CRD kube accepts and adding only what a test is about (a schema,
//! subresources, a scope, more versions), so a fixture says what it needs in a line.
//!
//! The migration benchmark includes this file by path (beside `migrate.rs`), so it uses
//! nothing else from the support folder.

use serde_json::{Value, json};

/// A CRD document under construction; [`CrdBuilder::build`] hands it out.
pub struct CrdBuilder {
    doc: Value,
}

impl CrdBuilder {
    /// `kind` in `group`: namespaced, its plural and singular the kind in lower case (plus
    /// `s` for the plural), one version `v1`, served and stored, whose schema keeps any field.
    pub fn new(group: &str, kind: &str) -> Self {
        let singular = kind.to_ascii_lowercase();
        let plural = format!("{singular}s");
        CrdBuilder {
            doc: json!({
                "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                "metadata": {"name": format!("{plural}.{group}")},
                "spec": {"group": group, "scope": "Namespaced",
                    "names": {"plural": plural, "singular": singular, "kind": kind},
                    "versions": [{"name": "v1", "served": true, "storage": true,
                        "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}
            }),
        }
    }

    /// Adds `names.listKind` (`<Kind>List`), which the API server would default.
    pub fn list_kind(mut self) -> Self {
        let kind = self.doc["spec"]["names"]["kind"].as_str().unwrap_or_default().to_string();
        self.doc["spec"]["names"]["listKind"] = json!(format!("{kind}List"));
        self
    }

    pub fn short_names(mut self, names: &[&str]) -> Self {
        self.doc["spec"]["names"]["shortNames"] = json!(names);
        self
    }

    pub fn cluster_scoped(mut self) -> Self {
        self.doc["spec"]["scope"] = json!("Cluster");
        self
    }

    /// Sets `v1`'s `openAPIV3Schema`.
    pub fn schema(mut self, schema: Value) -> Self {
        self.doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = schema;
        self
    }

    /// Gives `v1` the `/status` subresource.
    pub fn status(mut self) -> Self {
        self.doc["spec"]["versions"][0]["subresources"]["status"] = json!({});
        self
    }

    /// Gives `v1` the `/scale` subresource over `.spec.replicas` and `.status.replicas`.
    pub fn scale(mut self) -> Self {
        self.doc["spec"]["versions"][0]["subresources"]["scale"] =
            json!({"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"});
        self
    }

    /// Sets `spec.properties.<field>` of `v1`'s schema.
    pub fn spec_field(mut self, field: &str, schema: Value) -> Self {
        self.doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"][field] =
            schema;
        self
    }

    /// Removes `spec.properties.<field>` of `v1`'s schema (the schema then prunes it).
    pub fn without_spec_field(mut self, field: &str) -> Self {
        if let Some(p) = self
            .doc
            .pointer_mut("/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties")
            .and_then(Value::as_object_mut)
        {
            p.remove(field);
        }
        self
    }

    /// Replaces the versions with `versions` (whole version documents).
    pub fn versions(mut self, versions: Vec<Value>) -> Self {
        self.doc["spec"]["versions"] = Value::Array(versions);
        self
    }

    pub fn build(self) -> Value {
        self.doc
    }
}
