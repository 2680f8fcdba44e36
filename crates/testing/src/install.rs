//! Seeding a cluster: objects from YAML text, files or Rust values, written in the order that
//! works — namespaces, then CRDs (each waited for until Established, so its kinds are
//! served), then everything else — with server-side apply, so installing twice converges
//! instead of failing. A `status` in a document is written through `/status` where the kind
//! has it (the main endpoint drops it), so a seed can hold objects as a controller left them.

use crate::Error;
use futures::{StreamExt as _, TryStreamExt as _};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::core::GroupVersionKind;
use kube::discovery::{ApiCapabilities, ApiResource, Scope};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::Duration;

/// The field manager of everything the test cluster writes for you.
pub const FIELD_MANAGER: &str = "kubectl-crd-testing";
/// How long a CRD gets to become Established (the engine takes microseconds; a CRD whose
/// names are taken never does).
const ESTABLISH_TIMEOUT: Duration = Duration::from_secs(5);
/// How many objects are written at once.
const CONCURRENCY: usize = 16;

/// One object to install, with where it came from (for messages).
#[derive(Debug, Clone)]
pub(crate) struct Document {
    pub origin: String,
    pub value: Value,
}

impl Document {
    fn field(&self, name: &str) -> &str {
        self.value.get(name).and_then(Value::as_str).unwrap_or_default()
    }

    fn metadata(&self, name: &str) -> Option<&str> {
        self.value.get("metadata").and_then(|m| m.get(name)).and_then(Value::as_str).filter(|s| !s.is_empty())
    }

    /// 0 for namespaces, 1 for CRDs, 2 for the rest: the order they are written in.
    fn stage(&self) -> u8 {
        match (self.field("apiVersion"), self.field("kind")) {
            ("v1", "Namespace") => 0,
            (v, "CustomResourceDefinition") if v.starts_with("apiextensions.k8s.io/") => 1,
            _ => 2,
        }
    }

    fn gvk(&self) -> GroupVersionKind {
        let (group, version) = match self.field("apiVersion").split_once('/') {
            Some((group, version)) => (group, version),
            None => ("", self.field("apiVersion")),
        };
        GroupVersionKind::gvk(group, version, self.field("kind"))
    }

    fn describe(&self) -> String {
        let name = self.metadata("name").unwrap_or_default();
        match self.metadata("namespace") {
            Some(ns) => format!("{} {ns}/{name} ({})", self.field("kind"), self.origin),
            None => format!("{} {name} ({})", self.field("kind"), self.origin),
        }
    }
}

/// Every object in `text` (YAML documents, or JSON, which is YAML; `List`s flattened; empty
/// documents skipped). `source` names the text in messages. Nothing is written when any
/// document is not an object with `apiVersion`, `kind` and `metadata.name`.
pub(crate) fn parse(text: &str, source: &str) -> Result<Vec<Document>, Error> {
    // No budget: a seed is the test's own input, and a 10,000-object one passes the default.
    let options = serde_saphyr::options! { budget: None };
    let values: Vec<Value> = serde_saphyr::from_multiple_with_options(text, options)
        .map_err(|e| Error::Document { origin: source.to_string(), reason: format!("not valid YAML: {e}") })?;
    let mut out = Vec::new();
    for (i, value) in values.into_iter().enumerate() {
        flatten(value, &format!("{source} (document {})", i + 1), &mut out)?;
    }
    Ok(out)
}

/// A Rust value (a `k8s-openapi` or `#[derive(CustomResource)]` type, or JSON) as a document.
pub(crate) fn from_value(value: Value, origin: &str) -> Result<Vec<Document>, Error> {
    let mut out = Vec::new();
    flatten(value, origin, &mut out)?;
    Ok(out)
}

fn flatten(value: Value, origin: &str, out: &mut Vec<Document>) -> Result<(), Error> {
    let invalid = |reason: &str| Error::Document { origin: origin.to_string(), reason: reason.to_string() };
    match value {
        Value::Null => Ok(()),
        Value::Object(map) if map.get("kind").and_then(Value::as_str).is_some_and(|k| k.ends_with("List")) => {
            match map.get("items") {
                Some(Value::Array(items)) => items.iter().try_for_each(|v| flatten(v.clone(), origin, out)),
                _ => Err(invalid("a List without items")),
            }
        }
        Value::Object(map) => {
            let doc = Document { origin: origin.to_string(), value: Value::Object(map) };
            if doc.field("apiVersion").is_empty() || doc.field("kind").is_empty() {
                return Err(invalid("the object has no apiVersion or no kind"));
            }
            if doc.metadata("name").is_none() {
                return Err(invalid("the object has no metadata.name"));
            }
            out.push(doc);
            Ok(())
        }
        _ => Err(invalid("expected an object (a mapping with apiVersion, kind and metadata)")),
    }
}

/// Writes `docs` in order (see the module docs); returns the objects as stored, in the order
/// of `docs` within each stage. Namespaced objects that name no namespace go to `namespace`.
pub(crate) async fn install(
    client: &kube::Client,
    namespace: &str,
    mut docs: Vec<Document>,
) -> Result<Vec<DynamicObject>, Error> {
    docs.sort_by_key(Document::stage);
    let mut kinds: HashMap<GroupVersionKind, (ApiResource, ApiCapabilities)> = HashMap::new();
    let mut stored = Vec::with_capacity(docs.len());
    let mut rest = docs.as_slice();
    for stage in 0..=2 {
        let split = rest.iter().position(|d| d.stage() > stage).unwrap_or(rest.len());
        let (now, later) = rest.split_at(split);
        rest = later;
        // Discovery once per kind, before the writes (a CRD's kinds only after stage 1).
        let mut targets = Vec::with_capacity(now.len());
        for doc in now {
            let gvk = doc.gvk();
            if !kinds.contains_key(&gvk) {
                let found = kube::discovery::pinned_kind(client, &gvk).await.map_err(|source| Error::Kube {
                    what: format!("finding the kind of {}", doc.describe()),
                    source,
                })?;
                kinds.insert(gvk.clone(), found);
            }
            let (resource, caps) = &kinds[&gvk];
            targets.push((doc, resource.clone(), caps.clone()));
        }
        let written: Vec<DynamicObject> = futures::stream::iter(targets)
            .map(|(doc, resource, caps)| apply(client, namespace, doc, resource, caps))
            .buffered(CONCURRENCY)
            .try_collect()
            .await?;
        if stage == 1 {
            for crd in &written {
                wait_established(client, crd.metadata.name.as_deref().unwrap_or_default()).await?;
            }
        }
        stored.extend(written);
    }
    Ok(stored)
}

/// Server-side applies one document (and its status through `/status`, when it has one).
async fn apply(
    client: &kube::Client,
    namespace: &str,
    doc: &Document,
    resource: ApiResource,
    caps: ApiCapabilities,
) -> Result<DynamicObject, Error> {
    let api: Api<DynamicObject> = match caps.scope {
        Scope::Namespaced => {
            Api::namespaced_with(client.clone(), doc.metadata("namespace").unwrap_or(namespace), &resource)
        }
        Scope::Cluster => Api::all_with(client.clone(), &resource),
    };
    let name = doc.metadata("name").unwrap_or_default();
    let failed = |source| Error::Kube { what: format!("installing {}", doc.describe()), source };
    let params = PatchParams::apply(FIELD_MANAGER).force();
    let stored = api.patch(name, &params, &Patch::Apply(&doc.value)).await.map_err(failed)?;
    match doc.value.get("status") {
        Some(status) if caps.subresources.iter().any(|(s, _)| s.plural == "status") => {
            let patch = Patch::Merge(json!({ "status": status }));
            api.patch_status(name, &PatchParams::default(), &patch).await.map_err(failed)
        }
        _ => Ok(stored),
    }
}

/// Waits until the CRD `name` is Established, so its kinds are served.
pub(crate) async fn wait_established(client: &kube::Client, name: &str) -> Result<(), Error> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let established = kube::runtime::wait::conditions::is_crd_established();
    let waited = tokio::time::timeout(ESTABLISH_TIMEOUT, kube::runtime::wait::await_condition(api, name, established));
    match waited.await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(Error::NotEstablished { name: name.to_string(), reason: e.to_string() }),
        Err(_) => Err(Error::NotEstablished {
            name: name.to_string(),
            reason: format!("not within {}s (are its names taken?)", ESTABLISH_TIMEOUT.as_secs()),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_are_flattened_checked_and_ordered_by_stage() {
        let text = "apiVersion: v1\nkind: ConfigMapList\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n---\n---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: x.example.com}\n---\n{apiVersion: v1, kind: Namespace, metadata: {name: team}}\n";
        let docs = parse(text, "seed.yaml").expect("parses");
        let stages: Vec<u8> = docs.iter().map(Document::stage).collect();
        assert_eq!(stages, vec![2, 1, 0]);
        assert_eq!(docs[0].origin, "seed.yaml (document 1)");
        assert_eq!(docs[1].gvk(), GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition"));
        assert_eq!(docs[2].gvk(), GroupVersionKind::gvk("", "v1", "Namespace"));
    }

    #[test]
    fn a_document_without_a_name_is_refused_with_where_it_is() {
        let err = parse("apiVersion: v1\nkind: ConfigMap\n---\n- 1\n", "s.yaml").expect_err("no name");
        assert_eq!(err.to_string(), "s.yaml (document 1): the object has no metadata.name");
        let err = parse("a: [", "s.yaml").expect_err("not yaml");
        assert!(err.to_string().starts_with("s.yaml: not valid YAML"), "{err}");
    }
}
