//! `apply`: CRDs and custom resources from files, in the order that works.
//!
//! [`parse_documents`] reads multi-document YAML, JSON (one value or several), and `List`s,
//! and checks every object before anything is sent, so a bad file changes nothing.
//! [`apply_documents`] then writes namespaces, then CRDs, waits for each CRD to be
//! Established (or reports why its names were refused), re-reads discovery, and writes
//! the custom resources. Each object is created, or updated with kubectl's client-side
//! apply: a three-way JSON merge patch ([`super::merge_patch`]) between the last applied
//! configuration (kept in the `kubectl.kubernetes.io/last-applied-configuration`
//! annotation, so kubectl and this tool can take turns), the document, and the live object.
//! A status in a document is written through `/status` when the resource has it (the main
//! endpoint would drop it), which is what makes one `apply` enough to load a local cluster
//! with realistic objects.

use super::discovery::{Discovery, ResourceType};
use super::error::ClusterError;
use super::merge_patch::three_way_merge_patch;
use super::objects::{ObjectRef, Retry, StatusDocument, replace_status};
use super::registrations::{Establishment, wait_for_established};
use futures::StreamExt;
use kube::api::{DynamicObject, Patch, PatchParams, PostParams};
use kubectl_crd_engine::manifests;
use serde_json::{Value, json};
use std::time::Duration;

/// The annotation kubectl keeps the last applied configuration in.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";
/// How long discovery may lag behind a CRD becoming Established.
const DISCOVERY_WAIT: Duration = Duration::from_secs(10);
/// How many custom resources are written at once.
const CONCURRENCY: usize = 16;
/// Metadata the server owns; exported objects carry it, apply must not send it.
const SERVER_METADATA: [&str; 7] =
    ["resourceVersion", "uid", "creationTimestamp", "generation", "managedFields", "selfLink", "deletionTimestamp"];

/// One object to apply, with where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// `FILE (document N)`, for messages.
    pub origin: String,
    pub value: Value,
}

impl Document {
    fn kind(&self) -> &str {
        self.value.get("kind").and_then(Value::as_str).unwrap_or_default()
    }

    fn api_version(&self) -> &str {
        self.value.get("apiVersion").and_then(Value::as_str).unwrap_or_default()
    }

    fn name(&self) -> &str {
        self.value.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str).unwrap_or_default()
    }

    fn namespace(&self) -> Option<&str> {
        self.value.get("metadata").and_then(|m| m.get("namespace")).and_then(Value::as_str).filter(|n| !n.is_empty())
    }

    fn is_crd(&self) -> bool {
        self.kind() == "CustomResourceDefinition" && self.api_version().starts_with("apiextensions.k8s.io/")
    }

    fn is_namespace(&self) -> bool {
        self.kind() == "Namespace" && self.api_version() == "v1"
    }
}

/// Reads every object in `text` (YAML documents, JSON values, Lists flattened); `source`
/// names the file in messages. Fails on the first document that is not an object with
/// `apiVersion`, `kind` and `metadata.name`.
pub fn parse_documents(text: &str, source: &str) -> Result<Vec<Document>, ClusterError> {
    let invalid =
        |reason: String| ClusterError::InvalidInput { what: "document", source_name: source.to_string(), reason };
    let trimmed = text.trim_start();
    // As kubectl reads and sends them (`2.0` is sent as `2`).
    let values: Vec<Value> = if trimmed.starts_with('{') || trimmed.starts_with('[') {
        let mut values: Vec<Value> = serde_json::Deserializer::from_str(text)
            .into_iter::<Value>()
            .collect::<Result<_, _>>()
            .map_err(|e| invalid(format!("not valid JSON: {e}")))?;
        values.iter_mut().for_each(manifests::numbers_as_sent);
        values
    } else {
        manifests::from_yaml_documents(text).map_err(|e| invalid(format!("not valid YAML: {e}")))?
    };
    let mut out = Vec::new();
    for (i, value) in values.into_iter().enumerate() {
        let origin = format!("{source} (document {})", i + 1);
        flatten(value, &origin, &mut out)?;
    }
    Ok(out)
}

fn flatten(value: Value, origin: &str, out: &mut Vec<Document>) -> Result<(), ClusterError> {
    let invalid = |reason: &str| ClusterError::InvalidInput {
        what: "document",
        source_name: origin.to_string(),
        reason: reason.to_string(),
    };
    match value {
        Value::Null => Ok(()),
        Value::Array(items) => items.into_iter().try_for_each(|v| flatten(v, origin, out)),
        Value::Object(map) => {
            let is_list = map.get("kind").and_then(Value::as_str).is_some_and(|k| k.ends_with("List"))
                && map.get("items").is_some_and(Value::is_array);
            if is_list {
                let Some(Value::Array(items)) = map.get("items").cloned() else { return Ok(()) };
                return items.into_iter().try_for_each(|v| flatten(v, origin, out));
            }
            let text = |k: &str| map.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
            if text("apiVersion").is_none() {
                return Err(invalid("the object has no apiVersion"));
            }
            if text("kind").is_none() {
                return Err(invalid("the object has no kind"));
            }
            let name = map.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str);
            if name.is_none_or(str::is_empty) {
                return Err(invalid("the object has no metadata.name (apply needs a name to find the object again)"));
            }
            out.push(Document { origin: origin.to_string(), value: Value::Object(map) });
            Ok(())
        }
        _ => Err(invalid("expected an object (a mapping with apiVersion, kind and metadata)")),
    }
}

/// How `apply` behaves.
#[derive(Debug, Clone)]
pub struct ApplyOptions {
    /// Namespace for namespaced objects that name none.
    pub namespace: String,
    /// The namespace was given with `-n`: an object in another namespace is refused, as
    /// kubectl does, rather than silently written elsewhere.
    pub namespace_explicit: bool,
    pub retry_conflicts: bool,
    /// How long to wait for each CRD to become Established.
    pub establish_timeout: Duration,
}

/// What happened to one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Action {
    Created,
    Configured,
    Unchanged,
}

impl Action {
    /// kubectl's word: `created`, `configured`, `unchanged`.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Created => "created",
            Action::Configured => "configured",
            Action::Unchanged => "unchanged",
        }
    }
}

/// One object applied.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    /// kubectl's `kind.group` prefix (`widget.stable.example.com`, `namespace`).
    pub resource: String,
    pub name: String,
    pub namespace: Option<String>,
    pub action: Action,
    /// Something the user should know (a CRD whose names were refused).
    pub note: Option<String>,
    /// The object as the server has it now.
    pub object: Value,
}

/// One object that could not be applied.
#[derive(Debug)]
pub struct Failed {
    /// What it was: `Widget w1` from `FILE (document N)`.
    pub what: String,
    pub error: ClusterError,
}

/// The outcome of one document, in document order.
pub type Outcome = Result<Applied, Failed>;

/// Applies `docs` (see the module documentation), calling `progress` as each finishes.
/// Never stops early: every document gets its outcome.
pub async fn apply_documents(
    client: &kube::Client,
    docs: Vec<Document>,
    options: &ApplyOptions,
    mut progress: impl FnMut(&Outcome),
) -> Result<Vec<Outcome>, ClusterError> {
    let mut discovery = Discovery::fetch(client).await?;
    type Numbered = Vec<(usize, Document)>;
    let (first, rest): (Numbered, Numbered) =
        docs.into_iter().enumerate().partition(|(_, d)| d.is_namespace() || d.is_crd());
    let mut outcomes: Vec<Option<Outcome>> = (0..first.len() + rest.len()).map(|_| None).collect();
    // Namespaces before CRDs, each in document order.
    let (namespaces, crds): (Vec<_>, Vec<_>) = first.into_iter().partition(|(_, d)| d.is_namespace());
    let mut established: Vec<(String, String)> = Vec::new();
    for (i, doc) in namespaces.into_iter().chain(crds) {
        let mut outcome = apply_one(client, &discovery, &doc, options).await;
        if doc.is_crd()
            && let Ok(applied) = &mut outcome
        {
            applied.note = match wait_for_established(client, &applied.name, options.establish_timeout).await {
                Ok(Establishment::Established) => {
                    // Established means every spec name was accepted.
                    let spec = &applied.object["spec"];
                    if let (Some(group), Some(plural)) = (spec["group"].as_str(), spec["names"]["plural"].as_str()) {
                        established.push((group.to_string(), plural.to_string()));
                    }
                    None
                }
                Ok(Establishment::NamesNotAccepted { reason, message }) => {
                    Some(format!("not established: names not accepted ({reason}: {message})"))
                }
                Err(e) => Some(e.to_string()),
            };
        }
        progress(&outcome);
        outcomes[i] = Some(outcome);
    }
    if outcomes.iter().any(|o| o.is_some()) {
        discovery = Discovery::fetch_including(client, &established, DISCOVERY_WAIT).await?;
    }
    let discovery = &discovery;
    let mut results = futures::stream::iter(rest.into_iter().map(|(i, doc)| async move {
        let outcome = apply_one(client, discovery, &doc, options).await;
        (i, outcome)
    }))
    .buffered(CONCURRENCY);
    while let Some((i, outcome)) = results.next().await {
        progress(&outcome);
        outcomes[i] = Some(outcome);
    }
    Ok(outcomes.into_iter().flatten().collect())
}

async fn apply_one(client: &kube::Client, discovery: &Discovery, doc: &Document, options: &ApplyOptions) -> Outcome {
    let what = format!("{} {} from {}", doc.kind(), doc.name(), doc.origin);
    let fail = |error: ClusterError| Failed { what: what.clone(), error };
    let Some(resource) = discovery.for_kind(doc.api_version(), doc.kind()) else {
        return Err(fail(ClusterError::UnknownKind {
            kind: doc.kind().to_string(),
            api_version: doc.api_version().to_string(),
        }));
    };
    let namespace = match (resource.namespaced, doc.namespace()) {
        (false, _) => None,
        (true, Some(ns)) if options.namespace_explicit && ns != options.namespace => {
            return Err(fail(ClusterError::InvalidInput {
                what: "document",
                source_name: doc.origin.clone(),
                reason: format!(
                    "the namespace from the provided object {ns:?} does not match the namespace {:?}. You must pass '--namespace={ns}' to perform this operation",
                    options.namespace
                ),
            }));
        }
        (true, Some(ns)) => Some(ns.to_string()),
        (true, None) => Some(options.namespace.clone()),
    };
    write(client, resource, namespace.as_deref(), doc, options).await.map_err(fail)
}

async fn write(
    client: &kube::Client,
    resource: &ResourceType,
    namespace: Option<&str>,
    doc: &Document,
    options: &ApplyOptions,
) -> Result<Applied, ClusterError> {
    let name = doc.name();
    let at = ObjectRef::new(resource, namespace.unwrap_or_default(), name);
    let api = resource.api(client, namespace);
    // Status goes through /status where there is one; a CRD's or a core object's status
    // belongs to the server, so it is not written at all.
    let status_apart = resource.status;
    let custom = !(resource.group.is_empty() || resource.group == "apiextensions.k8s.io");
    let mut desired = without_server_metadata(&doc.value);
    if let Some(ns) = namespace {
        desired["metadata"]["namespace"] = json!(ns);
    }
    let wanted_status = if status_apart { desired.as_object_mut().and_then(|m| m.remove("status")) } else { None };
    let last_applied = serde_json::to_string(&desired).map_err(|e| ClusterError::Other(e.to_string()))?;
    desired["metadata"]["annotations"][LAST_APPLIED] = json!(last_applied);

    let current = api.get_opt(name).await.map_err(|e| at.error(e))?;
    let (mut object, mut action) = match current {
        None => {
            let obj: DynamicObject = serde_json::from_value(desired.clone()).map_err(|e| {
                ClusterError::InvalidInput { what: "document", source_name: doc.origin.clone(), reason: e.to_string() }
            })?;
            let created = api
                .create(&PostParams { field_manager: Some(super::managers::APPLY.into()), ..Default::default() }, &obj)
                .await
                .map_err(|e| at.error(e))?;
            (created, Action::Created)
        }
        Some(current) => {
            let current_value = serde_json::to_value(&current).map_err(|e| ClusterError::Other(e.to_string()))?;
            let original = current
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(LAST_APPLIED))
                .and_then(|s| serde_json::from_str::<Value>(s).ok());
            let mut live = current_value.clone();
            if status_apart && let Some(m) = live.as_object_mut() {
                m.remove("status");
            }
            match three_way_merge_patch(original.as_ref(), &desired, &live) {
                None => (current, Action::Unchanged),
                Some(patch) => {
                    let patched = api
                        .patch(
                            name,
                            &PatchParams { field_manager: Some(super::managers::APPLY.into()), ..Default::default() },
                            &Patch::Merge(&patch),
                        )
                        .await
                        .map_err(|e| at.error(e))?;
                    (patched, Action::Configured)
                }
            }
        }
    };
    if let Some(status) = wanted_status.filter(|_| custom && resource.status)
        && object.data.get("status") != Some(&status)
    {
        let status_doc = StatusDocument { status, resource_version: None };
        // The file's status is what is wanted, on whichever version.
        let retry = if options.retry_conflicts { Retry::Overwrite } else { Retry::No };
        object = replace_status(client, at, &status_doc, retry, super::managers::APPLY).await?;
        if action == Action::Unchanged {
            action = Action::Configured;
        }
    }
    Ok(Applied {
        resource: resource.name_prefix(),
        name: name.to_string(),
        namespace: namespace.map(String::from),
        action,
        note: None,
        object: serde_json::to_value(&object).map_err(|e| ClusterError::Other(e.to_string()))?,
    })
}

/// The document without what the server owns.
pub fn without_server_metadata(value: &Value) -> Value {
    let mut out = value.clone();
    if let Some(meta) = out.get_mut("metadata").and_then(Value::as_object_mut) {
        for key in SERVER_METADATA {
            meta.remove(key);
        }
        if let Some(annotations) = meta.get_mut("annotations").and_then(Value::as_object_mut) {
            annotations.remove(LAST_APPLIED);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_json_and_lists_are_read_and_checked() {
        let yaml = "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Namespace, metadata: {name: b}}\n";
        let docs = parse_documents(yaml, "f.yaml").expect("yaml");
        let names: Vec<&str> = docs.iter().map(Document::name).collect();
        assert_eq!(names, ["a", "b"]);
        // Empty documents are not counted.
        assert_eq!(docs[1].origin, "f.yaml (document 2)");
        let json = r#"{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "c"}} [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "d"}}]"#;
        assert_eq!(parse_documents(json, "f.json").expect("json").len(), 2);
        for (text, says) in [
            ("kind: Namespace\nmetadata: {name: a}\n", "no apiVersion"),
            ("apiVersion: v1\nmetadata: {name: a}\n", "no kind"),
            ("apiVersion: v1\nkind: Namespace\n", "no metadata.name"),
            ("- 1\n", "expected an object"),
            ("a: [\n", "not valid YAML"),
            ("{\"a\": ", "not valid JSON"),
        ] {
            let err = parse_documents(text, "bad.yaml").expect_err(says);
            assert!(err.to_string().contains(says), "{err}");
            assert!(err.is_usage());
        }
    }

    /// kubectl reads YAML with go-yaml (YAML 1.1) and sends every number through Go's
    /// encoder: the server then sees `2`, not `2.0` (which a `/scale` replicas path refuses).
    #[test]
    fn numbers_are_read_and_sent_as_kubectl_sends_them() {
        let spec = |text: &str, source: &str| parse_documents(text, source).expect("parses")[0].value["spec"].clone();
        let yaml =
            "apiVersion: v1\nkind: W\nmetadata: {name: a}\nspec: {replicas: 2.0, mode: 0755, half: 1.5, zero: -0.0}\n";
        assert_eq!(spec(yaml, "f.yaml"), json!({"replicas": 2, "mode": 493, "half": 1.5, "zero": 0}));
        let json = r#"{"apiVersion": "v1", "kind": "W", "metadata": {"name": "a"}, "spec": {"replicas": 2.0, "huge": 18446744073709551615}}"#;
        let sent = spec(json, "f.json");
        assert_eq!(sent["replicas"], json!(2));
        assert!(sent["huge"].is_f64(), "{sent}");
    }

    #[test]
    fn three_way_patches_add_change_and_remove_like_kubectl() {
        let original = json!({"spec": {"color": "red", "size": 1, "old": true}});
        let modified = json!({"spec": {"color": "blue", "size": 1}});
        // Someone else set spec.extra: apply leaves it alone.
        let current = json!({"spec": {"color": "red", "size": 1, "old": true, "extra": 7}, "status": {"x": 1}});
        assert_eq!(
            three_way_merge_patch(Some(&original), &modified, &current),
            Some(json!({"spec": {"color": "blue", "old": null}}))
        );
        assert_eq!(
            three_way_merge_patch(Some(&modified), &modified, &json!({"spec": {"color": "blue", "size": 1}})),
            None
        );
        // Without a last applied configuration nothing is removed.
        assert_eq!(
            three_way_merge_patch(None, &json!({"a": [1, 2]}), &json!({"a": [1], "b": 2})),
            Some(json!({"a": [1, 2]}))
        );
    }

    #[test]
    fn server_metadata_is_not_sent() {
        let doc = json!({"metadata": {"name": "a", "resourceVersion": "9", "uid": "u", "annotations": {LAST_APPLIED: "{}", "keep": "1"}}});
        assert_eq!(without_server_metadata(&doc), json!({"metadata": {"name": "a", "annotations": {"keep": "1"}}}));
    }
}
