//! What every cluster subcommand runs with: the validated configuration, the connection,
//! and helpers for what they share — resolving a resource name, reading `-f` input, and
//! turning cluster errors into messages that say where we were connected.

use super::config::{Config, NamespaceScope};
use crate::cluster::{ClusterError, ConnectOptions, Connection, Discovery, ResourceType, Target};
use kubectl_crd_engine::manifests;
use serde_json::Value;
use std::io::Read;
use std::path::Path;

/// One subcommand's run against a cluster.
pub struct Session {
    pub config: Config,
    pub conn: Connection,
}

impl Session {
    /// Connects to `target` (the configuration's, unless a command overrides it).
    pub async fn open(config: &Config, target: Target) -> anyhow::Result<Session> {
        let options = ConnectOptions {
            target,
            namespace: match &config.namespaces {
                NamespaceScope::One(ns) => ns.clone(),
                NamespaceScope::All => None,
            },
            request_timeout: config.request_timeout,
        };
        let conn = Connection::open(&options).await?;
        Ok(Session { config: config.clone(), conn })
    }

    pub fn client(&self) -> &kube::Client {
        self.conn.client()
    }

    /// The namespace of `-n`, the context's, or `default`.
    pub fn namespace(&self) -> &str {
        self.conn.namespace()
    }

    /// The namespace to list in: `None` with `-A`.
    pub fn list_namespace(&self) -> Option<&str> {
        match self.config.namespaces {
            NamespaceScope::All => None,
            NamespaceScope::One(_) => Some(self.conn.namespace()),
        }
    }

    /// A cluster error with where we were connected added.
    pub fn err(&self, e: ClusterError) -> anyhow::Error {
        self.conn.explain(e).into()
    }

    /// The resource type a user's word names, through discovery.
    pub async fn resolve(&self, word: &str) -> anyhow::Result<ResourceType> {
        let discovery = Discovery::fetch(self.client()).await.map_err(|e| self.err(e))?;
        discovery.resolve(word).cloned().map_err(|e| self.err(e))
    }

    /// Ends the connection (closing the local engine cleanly).
    pub async fn close(self) {
        self.conn.close().await;
    }
}

/// One input file as read: its name for messages and its text.
pub struct Input {
    pub source: String,
    pub text: String,
}

/// Reads `-f` arguments: files, directories (their `.yaml`, `.yml` and `.json` files in
/// name order, as kubectl reads a directory without `-R`), or `-` for standard input.
pub fn read_inputs(names: &[String]) -> Result<Vec<Input>, ClusterError> {
    let mut out = Vec::new();
    for name in names {
        if name == "-" {
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text).map_err(|e| unreadable("standard input", &e))?;
            out.push(Input { source: "standard input".into(), text });
            continue;
        }
        let path = Path::new(name);
        if path.is_dir() {
            let mut files: Vec<_> = std::fs::read_dir(path)
                .map_err(|e| unreadable(name, &e))?
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| {
                    p.is_file() && matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml" | "json"))
                })
                .collect();
            files.sort();
            if files.is_empty() {
                return Err(ClusterError::InvalidInput {
                    what: "directory",
                    source_name: name.clone(),
                    reason: "it holds no .yaml, .yml or .json files".into(),
                });
            }
            for file in files {
                let source = file.display().to_string();
                let text = std::fs::read_to_string(&file).map_err(|e| unreadable(&source, &e))?;
                out.push(Input { source, text });
            }
        } else {
            let text = std::fs::read_to_string(path).map_err(|e| unreadable(name, &e))?;
            out.push(Input { source: name.clone(), text });
        }
    }
    Ok(out)
}

fn unreadable(source: &str, e: &std::io::Error) -> ClusterError {
    ClusterError::InvalidInput { what: "file", source_name: source.to_string(), reason: format!("cannot read it: {e}") }
}

/// Parses one YAML or JSON document (comments allowed); `what` names it in errors.
pub fn parse_one(text: &str, source: &str, what: &'static str) -> Result<Value, ClusterError> {
    let invalid = |reason: String| ClusterError::InvalidInput { what, source_name: source.to_string(), reason };
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        let mut doc: Value = serde_json::from_str(text).map_err(|e| invalid(format!("not valid JSON: {e}")))?;
        manifests::numbers_as_sent(&mut doc);
        return Ok(doc);
    }
    let mut docs = manifests::from_yaml_documents(text).map_err(|e| invalid(format!("not valid YAML: {e}")))?;
    docs.retain(|d| !d.is_null());
    match docs.len() {
        0 => Err(invalid("it is empty".into())),
        1 => Ok(docs.remove(0)),
        n => Err(invalid(format!("expected one document, found {n}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_document_in_yaml_or_json() {
        assert_eq!(parse_one("# c\nstatus: {a: 1}\n", "f", "status document").expect("yaml")["status"]["a"], 1);
        assert_eq!(
            parse_one("{\"status\": {}}", "f", "status document").expect("json")["status"],
            serde_json::json!({})
        );
        for (text, says) in
            [("", "it is empty"), ("a: 1\n---\nb: 2\n", "expected one document, found 2"), ("{", "not valid JSON")]
        {
            let e = parse_one(text, "f.yaml", "status document").expect_err(says);
            assert!(e.to_string().contains(says), "{e}");
        }
    }

    #[test]
    fn directories_give_their_manifests_in_order() {
        let dir = tempfile::tempdir().expect("tempdir");
        for name in ["b.yaml", "a.json", "notes.txt"] {
            std::fs::write(dir.path().join(name), "x").expect("write");
        }
        let inputs = read_inputs(&[dir.path().display().to_string()]).expect("reads");
        let names: Vec<String> = inputs
            .iter()
            .map(|i| Path::new(&i.source).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default())
            .collect();
        assert_eq!(names, ["a.json", "b.yaml"]);
        let e = read_inputs(&["/nonexistent/file.yaml".into()]).err().expect("missing");
        assert!(e.to_string().starts_with("invalid file in /nonexistent/file.yaml: cannot read it"), "{e}");
    }
}
