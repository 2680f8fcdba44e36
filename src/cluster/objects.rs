//! Custom resources one at a time: the object, its status through `/status`, its spec
//! through the main endpoint, its replicas through `/scale`.
//!
//! The spec/status split is the subresources proposal's: the main endpoint ignores status
//! changes when `/status` is served, and `/status` ignores everything but status. So a
//! status write reads the object, replaces `.status`, and PUTs it to `/status` with the
//! resourceVersion it read; a spec edit takes the status out for the user and puts the
//! current one back before the PUT, so a resource without `/status` keeps it too.
//! A 409 is returned as [`ClusterError::Conflict`] unless the caller asked for a [`Retry`]:
//! the write is then made again on the version read again, with the whole document or with
//! only the user's changes re-applied ([`super::reapply`]).

use super::discovery::ResourceType;
use super::error::ClusterError;
use super::managers;
use super::reapply::reapply;
use k8s_openapi::api::autoscaling::v1::Scale;
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use std::future::Future;

/// A write's options under the edit manager.
fn edit_params() -> PostParams {
    PostParams { field_manager: Some(managers::EDIT.into()), ..Default::default() }
}

/// How many times a conflicting write is retried when the user asked for it.
pub const CONFLICT_RETRIES: usize = 5;

/// Runs `op` again after a 409 Conflict, at most [`CONFLICT_RETRIES`] times, when `retry`.
/// `op` must re-read what it writes on every call, or the retry would conflict again.
pub async fn retry_conflicts<T, F, Fut>(retry: bool, mut op: F) -> Result<T, ClusterError>
where
    F: FnMut(usize) -> Fut,
    Fut: Future<Output = Result<T, ClusterError>>,
{
    let mut attempt = 0;
    loop {
        match op(attempt).await {
            Err(e) if retry && e.is_conflict() && attempt < CONFLICT_RETRIES => attempt += 1,
            other => return other,
        }
    }
}

/// What a write does after a 409 Conflict (someone changed the object since it was read).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Retry<'a> {
    /// Nothing: the conflict is the answer.
    No,
    /// Re-read, and write the whole document again: it is all the user asked for (`status
    /// set --retry-conflicts` with a file).
    Overwrite,
    /// Re-read, and re-apply only the changes from `base` (the document as the user was
    /// shown it) to what they saved ([`super::reapply`]); a field the other writer changed
    /// too refuses.
    Reapply(&'a Value),
}

impl Retry<'_> {
    fn retries(self) -> bool {
        self != Retry::No
    }
}

/// One object's address.
#[derive(Debug, Clone, Copy)]
pub struct ObjectRef<'a> {
    pub resource: &'a ResourceType,
    /// Ignored for cluster-scoped resources.
    pub namespace: &'a str,
    pub name: &'a str,
}

impl<'a> ObjectRef<'a> {
    pub fn new(resource: &'a ResourceType, namespace: &'a str, name: &'a str) -> Self {
        ObjectRef { resource, namespace, name }
    }

    fn api(&self, client: &kube::Client) -> Api<DynamicObject> {
        self.resource.api(client, Some(self.namespace))
    }

    fn namespace(&self) -> Option<&str> {
        self.resource.namespaced.then_some(self.namespace)
    }

    /// Turns a kube error about this object into a [`ClusterError`].
    pub fn error(&self, e: kube::Error) -> ClusterError {
        ClusterError::from_kube(e, Some((&self.resource.qualified_name(), self.name, self.namespace())))
    }

    fn require(&self, has: bool, subresource: &'static str) -> Result<(), ClusterError> {
        if has {
            Ok(())
        } else {
            Err(ClusterError::NoSubresource { resource: self.resource.qualified_name(), subresource })
        }
    }
}

/// Reads one object.
pub async fn get_object(client: &kube::Client, at: ObjectRef<'_>) -> Result<DynamicObject, ClusterError> {
    at.api(client).get(at.name).await.map_err(|e| at.error(e))
}

/// Lists objects in `namespace` (`None`: every namespace), optionally by label selector,
/// following `continue` tokens.
pub async fn list_objects(
    client: &kube::Client,
    resource: &ResourceType,
    namespace: Option<&str>,
    label_selector: Option<&str>,
) -> Result<Vec<DynamicObject>, ClusterError> {
    let api = resource.api(client, namespace);
    let mut params = ListParams::default().limit(500);
    if let Some(selector) = label_selector {
        params = params.labels(selector);
    }
    let mut items = Vec::new();
    loop {
        let page = api.list(&params).await.map_err(|e| ClusterError::from_kube(e, None))?;
        items.extend(page.items);
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => return Ok(items),
        }
    }
}

/// `.status` of an object, if it has one.
pub fn status_of(obj: &DynamicObject) -> Option<&Value> {
    obj.data.get("status")
}

/// Reads the object through `/status` (the status and the metadata that goes with it).
pub async fn get_status(client: &kube::Client, at: ObjectRef<'_>) -> Result<DynamicObject, ClusterError> {
    at.require(at.resource.status, "status")?;
    at.api(client).get_status(at.name).await.map_err(|e| at.error(e))
}

/// A status the user wants written, from `{"status": ...}` or a whole object.
#[derive(Debug, Clone, PartialEq)]
pub struct StatusDocument {
    pub status: Value,
    /// The object's resourceVersion when the document is a whole object that has one:
    /// the write then only succeeds if the object has not changed since.
    pub resource_version: Option<String>,
}

/// Reads a status document; `source` names it in errors. The document is a mapping with
/// a `status` key: either `{"status": ...}` alone or a whole object of `at`'s kind and name.
pub fn parse_status_document(doc: &Value, source: &str, at: ObjectRef<'_>) -> Result<StatusDocument, ClusterError> {
    let invalid = |reason: String| ClusterError::InvalidInput {
        what: "status document",
        source_name: source.to_string(),
        reason,
    };
    let Some(map) = doc.as_object() else {
        return Err(invalid("expected a mapping such as {\"status\": {...}} or a whole object".into()));
    };
    let Some(status) = map.get("status") else {
        return Err(invalid("it has no status; write {\"status\": {...}} or a whole object with .status".into()));
    };
    if !status.is_object() {
        return Err(invalid(format!("status must be a mapping, not {}", json_type(status))));
    }
    let whole = map.keys().any(|k| k != "status");
    if whole {
        if let Some(kind) = map.get("kind").and_then(Value::as_str)
            && kind != at.resource.kind
        {
            return Err(invalid(format!("it holds a {kind}, not a {}", at.resource.kind)));
        }
        if let Some(name) = map.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str)
            && name != at.name
        {
            return Err(invalid(format!("it is the object {name:?}, not {:?}", at.name)));
        }
        if let Some(spec) = map.get("spec")
            && !spec.is_object()
        {
            return Err(invalid("spec must be a mapping".into()));
        }
    }
    let resource_version = map
        .get("metadata")
        .and_then(|m| m.get("resourceVersion"))
        .and_then(Value::as_str)
        .filter(|rv| !rv.is_empty())
        .map(String::from);
    Ok(StatusDocument { status: status.clone(), resource_version })
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// Replaces the status through `/status`: reads the object, sets `.status`, and PUTs it
/// back with the resourceVersion read (or the document's own), as field manager `manager`
/// (one of [`super::managers`]). After a conflict, `retry` says what is written on the
/// version read again (with its resourceVersion).
pub async fn replace_status(
    client: &kube::Client,
    at: ObjectRef<'_>,
    doc: &StatusDocument,
    retry: Retry<'_>,
    manager: &str,
) -> Result<DynamicObject, ClusterError> {
    at.require(at.resource.status, "status")?;
    let api = at.api(client);
    retry_conflicts(retry.retries(), |attempt| {
        let api = api.clone();
        async move {
            let mut obj = api.get_status(at.name).await.map_err(|e| at.error(e))?;
            if attempt == 0
                && let Some(rv) = &doc.resource_version
            {
                obj.metadata.resource_version = Some(rv.clone());
            }
            let status = match retry {
                Retry::Reapply(base) if attempt > 0 => {
                    let current = json!({ "status": obj.data.get("status") });
                    reapply(&current, base, &json!({ "status": doc.status }))?["status"].take()
                }
                _ => doc.status.clone(),
            };
            obj.data["status"] = status;
            let params = PostParams { field_manager: Some(manager.into()), ..Default::default() };
            api.replace_status(at.name, &params, &obj).await.map_err(|e| at.error(e))
        }
    })
    .await
}

/// Merge-patches the status through `/status` with `{"status": patch}`.
pub async fn patch_status(
    client: &kube::Client,
    at: ObjectRef<'_>,
    patch: &Value,
) -> Result<DynamicObject, ClusterError> {
    at.require(at.resource.status, "status")?;
    let body = json!({ "status": patch });
    at.api(client)
        .patch_status(
            at.name,
            &PatchParams { field_manager: Some(managers::EDIT.into()), ..Default::default() },
            &Patch::Merge(&body),
        )
        .await
        .map_err(|e| at.error(e))
}

/// An object split for a spec edit: everything but the status, and the status apart.
#[derive(Debug, Clone, PartialEq)]
pub struct SpecView {
    pub object: Value,
    pub status: Option<Value>,
}

/// Takes the status (and `managedFields`, which nobody edits by hand) out of `obj`.
pub fn spec_view(obj: &DynamicObject) -> Result<SpecView, ClusterError> {
    let mut object = serde_json::to_value(obj).map_err(|e| ClusterError::Other(e.to_string()))?;
    let status = object.as_object_mut().and_then(|m| m.remove("status"));
    if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    Ok(SpecView { object, status })
}

/// Writes an edited object (without status) through the main endpoint. The edit must keep
/// the kind, name and namespace and must not bring a status; the current status is put
/// back so that a resource without `/status` does not lose it. After a conflict, `retry`
/// says what is written on the version read again.
pub async fn replace_spec(
    client: &kube::Client,
    at: ObjectRef<'_>,
    edited: &Value,
    source: &str,
    retry: Retry<'_>,
) -> Result<DynamicObject, ClusterError> {
    let invalid =
        |reason: String| ClusterError::InvalidInput { what: "object", source_name: source.to_string(), reason };
    let Some(map) = edited.as_object() else {
        return Err(invalid("expected a mapping (the object without its status)".into()));
    };
    if map.contains_key("status") {
        return Err(invalid("it has a status; edit the status with 'kubectl crd status edit'".into()));
    }
    if map.get("kind").and_then(Value::as_str) != Some(at.resource.kind.as_str()) {
        return Err(invalid(format!("the kind must stay {}", at.resource.kind)));
    }
    let meta = map.get("metadata").and_then(Value::as_object);
    if meta.and_then(|m| m.get("name")).and_then(Value::as_str) != Some(at.name) {
        return Err(invalid(format!("metadata.name must stay {:?}", at.name)));
    }
    let api = at.api(client);
    retry_conflicts(retry.retries(), |attempt| {
        let api = api.clone();
        async move {
            let current = api.get(at.name).await.map_err(|e| at.error(e))?;
            let mut desired = match retry {
                Retry::Reapply(base) if attempt > 0 => reapply(&spec_view(&current)?.object, base, edited)?,
                _ => edited.clone(),
            };
            if let Some(status) = current.data.get("status") {
                desired["status"] = status.clone();
            }
            if attempt > 0 {
                desired["metadata"]["resourceVersion"] = json!(current.metadata.resource_version);
            }
            let obj: DynamicObject = serde_json::from_value(desired).map_err(|e| invalid(e.to_string()))?;
            api.replace(at.name, &edit_params(), &obj).await.map_err(|e| at.error(e))
        }
    })
    .await
}

/// What `/scale` says about an object.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScaleView {
    pub desired: i32,
    pub current: i32,
    pub selector: Option<String>,
    pub resource_version: Option<String>,
}

impl ScaleView {
    fn from_scale(scale: &Scale) -> Self {
        ScaleView {
            desired: scale.spec.as_ref().and_then(|s| s.replicas).unwrap_or(0),
            current: scale.status.as_ref().map_or(0, |s| s.replicas),
            selector: scale.status.as_ref().and_then(|s| s.selector.clone()).filter(|s| !s.is_empty()),
            resource_version: scale.metadata.resource_version.clone(),
        }
    }
}

/// Reads `/scale`: the raw `autoscaling/v1` Scale and its summary.
pub async fn get_scale(client: &kube::Client, at: ObjectRef<'_>) -> Result<(Scale, ScaleView), ClusterError> {
    at.require(at.resource.scale, "scale")?;
    let scale = at.api(client).get_scale(at.name).await.map_err(|e| at.error(e))?;
    let view = ScaleView::from_scale(&scale);
    Ok((scale, view))
}

/// Sets the desired replicas through `/scale`. With `expect_current` (kubectl's
/// `--current-replicas`) the scale is read first, the precondition checked, and the write
/// made with the resourceVersion read, so nothing changes if someone else scaled meanwhile;
/// without it the write is a merge patch of `spec.replicas`.
pub async fn set_scale(
    client: &kube::Client,
    at: ObjectRef<'_>,
    replicas: i32,
    expect_current: Option<i32>,
    retry: bool,
) -> Result<ScaleView, ClusterError> {
    at.require(at.resource.scale, "scale")?;
    let api = at.api(client);
    let Some(expected) = expect_current else {
        let body = json!({ "spec": { "replicas": replicas } });
        let scale = api
            .patch_scale(
                at.name,
                &PatchParams { field_manager: Some(managers::SCALE.into()), ..Default::default() },
                &Patch::Merge(&body),
            )
            .await
            .map_err(|e| at.error(e))?;
        return Ok(ScaleView::from_scale(&scale));
    };
    retry_conflicts(retry, |_| {
        let api = api.clone();
        async move {
            let mut scale = api.get_scale(at.name).await.map_err(|e| at.error(e))?;
            let actual = ScaleView::from_scale(&scale).desired;
            if actual != expected {
                return Err(ClusterError::ReplicasPrecondition { expected, actual });
            }
            scale.spec.get_or_insert_with(Default::default).replicas = Some(replicas);
            let scale = api
                .replace_scale(
                    at.name,
                    &PostParams { field_manager: Some(managers::SCALE.into()), ..Default::default() },
                    &scale,
                )
                .await
                .map_err(|e| at.error(e))?;
            Ok(ScaleView::from_scale(&scale))
        }
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::discovery::tests::resource;

    fn widget() -> ResourceType {
        let mut r = resource("stable.example.com", "v1", "Widget", "widgets", &["wd"]);
        r.status = true;
        r.scale = true;
        r
    }

    #[test]
    fn status_documents_are_checked_before_anything_is_sent() {
        let w = widget();
        let at = ObjectRef::new(&w, "default", "w1");
        let ok = parse_status_document(&json!({"status": {"phase": "Ready"}}), "f.yaml", at).expect("status alone");
        assert_eq!(ok, StatusDocument { status: json!({"phase": "Ready"}), resource_version: None });
        let whole = json!({"apiVersion": "stable.example.com/v1", "kind": "Widget", "metadata": {"name": "w1", "resourceVersion": "42"}, "spec": {}, "status": {"phase": "Ready"}});
        assert_eq!(parse_status_document(&whole, "f", at).expect("whole").resource_version.as_deref(), Some("42"));
        for (doc, says) in [
            (json!(["a"]), "expected a mapping"),
            (json!({"spec": {}}), "it has no status"),
            (json!({"status": "Ready"}), "status must be a mapping, not a string"),
            (json!({"kind": "Gadget", "status": {}}), "it holds a Gadget, not a Widget"),
            (
                json!({"kind": "Widget", "metadata": {"name": "w2"}, "status": {}}),
                "it is the object \"w2\", not \"w1\"",
            ),
        ] {
            let err = parse_status_document(&doc, "f.yaml", at).expect_err(says);
            assert!(err.to_string().contains(says), "{err}");
            assert!(err.to_string().starts_with("invalid status document in f.yaml: "), "{err}");
            assert!(err.is_usage());
        }
    }

    #[test]
    fn a_spec_view_has_no_status_and_no_managed_fields() {
        let obj: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "stable.example.com/v1", "kind": "Widget",
            "metadata": {"name": "w1", "managedFields": [{"manager": "x"}]},
            "spec": {"color": "red"}, "status": {"phase": "Ready"}
        }))
        .expect("object");
        let view = spec_view(&obj).expect("view");
        assert_eq!(view.status, Some(json!({"phase": "Ready"})));
        assert_eq!(view.object["spec"], json!({"color": "red"}));
        assert!(view.object.get("status").is_none());
        assert!(view.object["metadata"].get("managedFields").is_none());
    }

    #[tokio::test]
    async fn conflicts_are_retried_only_when_asked() {
        let conflict = || ClusterError::Conflict { message: "modified".into() };
        let mut calls = 0;
        let r: Result<(), _> = retry_conflicts(false, |_| {
            calls += 1;
            async { Err(conflict()) }
        })
        .await;
        assert!(r.expect_err("conflict").is_conflict());
        assert_eq!(calls, 1);
        let r = retry_conflicts(true, |attempt| async move { if attempt < 2 { Err(conflict()) } else { Ok(attempt) } })
            .await;
        assert_eq!(r.expect("third try"), 2);
    }
}
