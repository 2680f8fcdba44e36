//! `kubectl crd validate` as a library: objects checked offline exactly as the apiserver
//! checks them on create (or on update, for transition rules, when the old object is
//! given), and the CRDs themselves as registration checks them.
//!
//! The checks are the engine's own, asked over its HTTP surface ([`offline`]): the CRDs are
//! registered in an in-memory engine, then every object is a server-side dry run — so the
//! verdicts are the apiserver's Statuses word for word (schema, pruning, defaulting, CEL,
//! metadata, the scale paths), with its warnings, and a valid object comes back as it
//! would be stored. Objects are checked concurrently; the report keeps input order.

mod offline;

use crate::cluster::apply::{Document, without_server_metadata};
use futures::StreamExt;
use http::Method;
use offline::{Answer, CrdRefusal, Offline};
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};

/// Checks in flight at once.
const CONCURRENCY: usize = 64;

/// How unknown fields are treated.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ValidateOptions {
    /// Unknown fields refuse the object (`fieldValidation=Strict`) instead of warning.
    pub strict: bool,
}

/// Why nothing could be checked.
#[derive(Debug, thiserror::Error)]
pub enum ValidateError {
    #[error("cannot start the in-process engine: {0}")]
    Engine(String),
}

/// What was checked, in input order.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    pub crds: Vec<Checked>,
    pub objects: Vec<Checked>,
}

impl Report {
    /// Whether every CRD and object is valid.
    pub fn all_valid(&self) -> bool {
        self.crds.iter().chain(&self.objects).all(|c| c.valid)
    }
}

/// One document and its verdict.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Checked {
    /// `FILE (document N)`.
    pub origin: String,
    pub api_version: String,
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    pub name: String,
    pub valid: bool,
    /// The apiserver's warnings (unknown fields under Warn, deprecated versions).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The apiserver's refusal, as it sent it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Value>,
    /// Why it could not be checked or served, when no Status says it (no CRD serves the
    /// kind; a CRD whose names are not accepted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// A valid object as it would be stored (defaults applied, unknown fields pruned).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object: Option<Value>,
}

impl Checked {
    fn of(doc: &Document) -> Checked {
        let text = |pointer: &str| doc.value.pointer(pointer).and_then(Value::as_str).unwrap_or_default().to_string();
        Checked {
            origin: doc.origin.clone(),
            api_version: text("/apiVersion"),
            kind: text("/kind"),
            namespace: doc.value.pointer("/metadata/namespace").and_then(Value::as_str).map(str::to_string),
            name: text("/metadata/name"),
            valid: false,
            warnings: Vec::new(),
            status: None,
            message: None,
            object: None,
        }
    }

    fn answered(mut self, answer: Answer) -> Checked {
        let ok = answer.ok();
        self.warnings = answer.warnings;
        if ok {
            self.valid = true;
            let mut stored = answer.body;
            if let Some(meta) = stored.get_mut("metadata").and_then(Value::as_object_mut) {
                // kubectl hides them too; they say nothing about the object.
                meta.remove("managedFields");
            }
            self.object = Some(stored);
        } else {
            self.status = Some(answer.body);
        }
        self
    }

    fn refused(mut self, message: String) -> Checked {
        self.message = Some(message);
        self
    }

    /// The verdict in one line: `valid`, or the Status message.
    pub fn verdict(&self) -> String {
        match (&self.status, &self.message) {
            _ if self.valid => "valid".into(),
            (Some(status), _) => offline::status_message(status),
            (None, Some(message)) => message.clone(),
            (None, None) => "invalid".into(),
        }
    }
}

/// Checks `crds`, then `objects` against them; `olds` are previous versions of objects
/// (same apiVersion, kind, namespace and name), which turn their checks into updates.
pub async fn validate(
    crds: &[Document],
    objects: &[Document],
    olds: &[Document],
    options: ValidateOptions,
) -> Result<Report, ValidateError> {
    let engine = Offline::start().await?;
    let report = run(&engine, crds, objects, olds, options).await;
    engine.stop().await;
    Ok(report)
}

async fn run(
    engine: &Offline,
    crds: &[Document],
    objects: &[Document],
    olds: &[Document],
    options: ValidateOptions,
) -> Report {
    let mut report = Report::default();
    for crd in crds {
        let checked = Checked::of(crd);
        let mut checked = match engine.install_crd(&without_server_metadata(&crd.value)).await {
            Ok(answer) | Err(CrdRefusal::Refused(answer)) => checked.answered(answer),
            Err(CrdRefusal::NotServed(why)) => checked.refused(format!("the CRD does not serve: {why}")),
        };
        // A registered CRD is what was given, with the server's fields: nothing to show.
        checked.object = None;
        report.crds.push(checked);
    }
    let namespaces: BTreeSet<&str> = objects.iter().chain(olds).filter_map(|d| namespace_of(d)).collect();
    for namespace in namespaces {
        if let Err(why) = engine.ensure_namespace(namespace).await {
            tracing::debug!("namespace {namespace}: {why}");
        }
    }
    let olds = install_olds(engine, olds).await;
    let field_validation = if options.strict { "Strict" } else { "Warn" };
    report.objects = futures::stream::iter(objects)
        .map(|doc| check(engine, doc, &olds, field_validation))
        .buffered(CONCURRENCY)
        .collect()
        .await;
    report
}

/// An object's identity among the olds.
type Key = (String, String, String, String);

fn key(doc: &Document, namespaced: bool) -> Key {
    let text = |pointer: &str| doc.value.pointer(pointer).and_then(Value::as_str).unwrap_or_default().to_string();
    let namespace = if namespaced { namespace_of(doc).unwrap_or("default").to_string() } else { String::new() };
    (text("/apiVersion"), text("/kind"), namespace, text("/metadata/name"))
}

fn namespace_of(doc: &Document) -> Option<&str> {
    doc.value.pointer("/metadata/namespace").and_then(Value::as_str).filter(|n| !n.is_empty())
}

/// The old objects, created for real: their resourceVersion, or why they were refused.
async fn install_olds(engine: &Offline, olds: &[Document]) -> HashMap<Key, Result<String, String>> {
    let mut out = HashMap::new();
    for old in olds {
        let checked = Checked::of(old);
        let Some(served) = engine.served(&checked.api_version, &checked.kind).await else { continue };
        let namespace = namespace_of(old).unwrap_or("default");
        let answer = engine.send(Method::POST, &served.collection(namespace), Some(&old.value)).await;
        let outcome = if answer.ok() {
            Ok(answer.body.pointer("/metadata/resourceVersion").and_then(Value::as_str).unwrap_or_default().to_string())
        } else {
            Err(format!("the old object ({}) is invalid: {}", old.origin, offline::status_message(&answer.body)))
        };
        out.insert(key(old, served.namespaced), outcome);
    }
    out
}

/// One object: a dry-run create, or a dry-run update of its old object.
async fn check(
    engine: &Offline,
    doc: &Document,
    olds: &HashMap<Key, Result<String, String>>,
    field_validation: &str,
) -> Checked {
    let checked = Checked::of(doc);
    let Some(served) = engine.served(&checked.api_version, &checked.kind).await else {
        let why = format!(
            "no matches for kind {:?} in version {:?} (is its CRD among the ones given?)",
            checked.kind, checked.api_version
        );
        return checked.refused(why);
    };
    let collection = served.collection(namespace_of(doc).unwrap_or("default"));
    let query = format!("dryRun=All&fieldValidation={field_validation}");
    let answer = match olds.get(&key(doc, served.namespaced)) {
        None => engine.send(Method::POST, &format!("{collection}?{query}"), Some(&doc.value)).await,
        Some(Err(why)) => return checked.refused(why.clone()),
        Some(Ok(resource_version)) => {
            let mut body = doc.value.clone();
            if let Some(meta) = body.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.insert("resourceVersion".into(), Value::String(resource_version.clone()));
            }
            let uri = format!("{collection}/{}?{query}", checked.name);
            engine.send(Method::PUT, &uri, Some(&body)).await
        }
    };
    checked.answered(answer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(origin: &str, value: Value) -> Document {
        Document { origin: origin.into(), value }
    }

    fn crd() -> Document {
        doc(
            "crds.yaml (document 1)",
            json!({
                "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                "metadata": {"name": "gizmos.example.com", "resourceVersion": "7"},
                "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo"},
                    "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                        "type": "object", "properties": {"spec": {"type": "object", "properties": {
                            "size": {"type": "integer", "maximum": 3, "default": 1},
                            "version": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "immutable"}]}
                        }}}}}}]}
            }),
        )
    }

    fn gizmo(name: &str, spec: Value) -> Document {
        doc(
            name,
            json!({"apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": {"name": name, "namespace": "team"}, "spec": spec}),
        )
    }

    #[tokio::test]
    async fn objects_are_checked_as_the_apiserver_checks_them() {
        let objects = [
            gizmo("good", json!({})),
            gizmo("big", json!({"size": 9})),
            gizmo("extra", json!({"colour": "red"})),
            doc("other", json!({"apiVersion": "other.example.com/v1", "kind": "Thing", "metadata": {"name": "t"}})),
        ];
        let report = validate(&[crd()], &objects, &[], ValidateOptions::default()).await.expect("runs");
        assert!(report.crds[0].valid, "{:?}", report.crds[0]);
        let verdicts: Vec<(bool, String)> = report.objects.iter().map(|c| (c.valid, c.verdict())).collect();
        assert_eq!(verdicts[0], (true, "valid".to_string()));
        assert_eq!(report.objects[0].object.as_ref().expect("stored")["spec"]["size"], 1, "defaulted");
        assert_eq!(
            verdicts[1].1,
            "Gizmo.example.com \"big\" is invalid: spec.size: Invalid value: 9: spec.size in body should be less than or equal to 3"
        );
        assert!(verdicts[2].0);
        assert_eq!(report.objects[2].warnings, [r#"unknown field "spec.colour""#]);
        assert!(!verdicts[3].0 && verdicts[3].1.starts_with("no matches for kind \"Thing\""), "{:?}", verdicts[3]);
        assert!(!report.all_valid());
        let strict = ValidateOptions { strict: true };
        let report = validate(&[crd()], &objects[2..3], &[], strict).await.expect("runs");
        assert!(report.objects[0].verdict().contains(r#"strict decoding error: unknown field "spec.colour""#));
    }

    #[tokio::test]
    async fn an_old_object_makes_the_check_an_update_with_transition_rules() {
        let old = gizmo("g", json!({"version": "v1"}));
        let changed = gizmo("g", json!({"version": "v2"}));
        let report = validate(&[crd()], &[changed], &[old], ValidateOptions::default()).await.expect("runs");
        assert_eq!(
            report.objects[0].verdict(),
            "Gizmo.example.com \"g\" is invalid: spec.version: Invalid value: \"string\": immutable"
        );
    }

    #[tokio::test]
    async fn crds_are_checked_as_registration_checks_them() {
        let mut bad = crd();
        bad.value["spec"]["names"]["kind"] = json!("not a kind");
        let report = validate(&[bad], &[], &[], ValidateOptions::default()).await.expect("runs");
        assert!(!report.crds[0].valid);
        assert!(
            report.crds[0].verdict().contains("spec.names.kind: Invalid value: \"not a kind\""),
            "{}",
            report.crds[0].verdict()
        );
    }
}
