//! The kubeconfig `serve` hands to kubectl and kube-rs: one cluster, one user with the bearer
//! token (none over plain HTTP, where kubectl would not send it), one context, all named
//! [`NAME`], and that context current. Building the document
//! is the pure [`document`]; [`write`] puts it on disk (mode 0600, atomically) and refuses to
//! replace a kubeconfig that holds anything but ours, so a mistyped `--write-kubeconfig
//! ~/.kube/config` cannot wipe a user's clusters.

use super::files::{self, FileError};
use super::token::Token;
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The name of the cluster, the user and the context.
pub const NAME: &str = "kubectl-crd";

/// Why the kubeconfig could not be written.
#[derive(Debug, thiserror::Error)]
pub enum KubeconfigError {
    #[error(transparent)]
    File(#[from] FileError),
    #[error(
        "{} already holds a kubeconfig with other clusters, users or contexts; kubectl crd serve will not overwrite it. Give another file with --write-kubeconfig",
        path.display()
    )]
    Foreign { path: PathBuf },
    #[error("cannot render the kubeconfig: {0}")]
    Render(String),
}

// Kubeconfig keys mix styles: `apiVersion`, but `current-context`.
#[derive(Serialize)]
struct Document<'a> {
    #[serde(rename = "apiVersion")]
    api_version: &'static str,
    kind: &'static str,
    clusters: [Named<Cluster<'a>>; 1],
    users: [Named<User<'a>>; 1],
    contexts: [Named<Context>; 1],
    #[serde(rename = "current-context")]
    current_context: &'static str,
}

#[derive(Serialize)]
struct Named<T> {
    name: &'static str,
    #[serde(flatten)]
    item: T,
}

#[derive(Serialize)]
struct Cluster<'a> {
    cluster: ClusterInfo<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct ClusterInfo<'a> {
    server: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    certificate_authority_data: Option<String>,
}

#[derive(Serialize)]
struct User<'a> {
    user: UserInfo<'a>,
}

#[derive(Serialize)]
struct UserInfo<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    token: Option<&'a str>,
}

#[derive(Serialize)]
struct Context {
    context: ContextInfo,
}

#[derive(Serialize)]
struct ContextInfo {
    cluster: &'static str,
    user: &'static str,
}

/// The kubeconfig YAML for a server at `server` (`https://…` or `http://…`), trusting the CA
/// in `ca_pem` (none for plain HTTP) and authenticating with `token` (if any).
pub fn document(server: &str, ca_pem: Option<&[u8]>, token: Option<&Token>) -> Result<String, KubeconfigError> {
    let doc = Document {
        api_version: "v1",
        kind: "Config",
        clusters: [Named {
            name: NAME,
            item: Cluster {
                cluster: ClusterInfo {
                    server,
                    certificate_authority_data: ca_pem.map(|pem| base64::engine::general_purpose::STANDARD.encode(pem)),
                },
            },
        }],
        users: [Named { name: NAME, item: User { user: UserInfo { token: token.map(Token::as_str) } } }],
        contexts: [Named { name: NAME, item: Context { context: ContextInfo { cluster: NAME, user: NAME } } }],
        current_context: NAME,
    };
    // Plain scalars: the certificate data is one long word, and a folded block (`>`) for it
    // would be correct YAML but odd to find in a kubeconfig.
    let options = serde_saphyr::ser_options! { prefer_block_scalars: false };
    serde_saphyr::to_string_with_options(&doc, options).map_err(|e| KubeconfigError::Render(e.to_string()))
}

/// What we look at in an existing file before replacing it.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Existing {
    clusters: Vec<NameOnly>,
    users: Vec<NameOnly>,
    contexts: Vec<NameOnly>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct NameOnly {
    name: String,
}

/// Whether a file's current content may be replaced: it is empty, or a kubeconfig whose
/// clusters, users and contexts are all ours.
pub fn may_replace(existing: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(existing) else {
        return false;
    };
    if text.trim().is_empty() {
        return true;
    }
    match serde_saphyr::from_str::<Existing>(text) {
        Ok(doc) => doc.clusters.iter().chain(&doc.users).chain(&doc.contexts).all(|n| n.name == NAME),
        Err(_) => false,
    }
}

/// Writes `yaml` to `path` with mode 0600, unless the file there belongs to someone else.
pub fn write(path: &Path, yaml: &str) -> Result<(), KubeconfigError> {
    if let Some(existing) = files::read_if_exists(path)?
        && !may_replace(&existing)
    {
        return Err(KubeconfigError::Foreign { path: path.to_path_buf() });
    }
    files::write_atomic(path, yaml.as_bytes(), files::PRIVATE)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::config::Kubeconfig;

    const CA: &[u8] = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

    fn token() -> Token {
        Token::parse("-starts-with-a-dash-0123456789").expect("token")
    }

    #[test]
    fn https_document_is_a_kubeconfig_kube_rs_reads() {
        let yaml = document("https://127.0.0.1:6443", Some(CA), Some(&token())).expect("renders");
        let config = Kubeconfig::from_yaml(&yaml).expect("kube-rs parses it");
        assert_eq!(config.current_context.as_deref(), Some(NAME));
        let cluster = config.clusters[0].cluster.as_ref().expect("cluster");
        assert_eq!(cluster.server.as_deref(), Some("https://127.0.0.1:6443"));
        let ca = base64::engine::general_purpose::STANDARD
            .decode(cluster.certificate_authority_data.as_deref().expect("ca"))
            .expect("b64");
        assert_eq!(ca, CA);
        let ctx = config.contexts[0].context.as_ref().expect("context");
        assert_eq!((ctx.cluster.as_str(), ctx.user.as_deref()), (NAME, Some(NAME)));
        let value: serde_json::Value = serde_saphyr::from_str(&yaml).expect("yaml");
        assert_eq!(value["users"][0]["user"]["token"], token().as_str());
        assert_eq!(value["apiVersion"], "v1");
        assert_eq!(value["kind"], "Config");
    }

    #[test]
    fn http_document_has_no_certificate_authority_and_no_token() {
        let yaml = document("http://127.0.0.1:8080", None, None).expect("renders");
        assert!(!yaml.contains("certificate-authority"), "{yaml}");
        assert!(!yaml.contains("token"), "{yaml}");
        assert!(yaml.contains("server: http://127.0.0.1:8080"), "{yaml}");
        let config = Kubeconfig::from_yaml(&yaml).expect("kube-rs parses it");
        assert_eq!(config.auth_infos[0].name, NAME);
    }

    #[test]
    fn only_our_own_kubeconfig_is_replaced() {
        let ours = document("https://127.0.0.1:1", Some(CA), Some(&token())).expect("renders");
        assert!(may_replace(ours.as_bytes()));
        assert!(may_replace(b""));
        let theirs = "apiVersion: v1\nkind: Config\nclusters:\n- name: prod\n  cluster: {server: https://prod}\n";
        assert!(!may_replace(theirs.as_bytes()));
        assert!(!may_replace(b"not: [a kubeconfig"));
        assert!(!may_replace(&[0xff, 0xfe]));
    }

    #[test]
    fn write_refuses_a_foreign_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("config");
        std::fs::write(&path, "clusters:\n- name: prod\n").expect("write");
        let err = write(&path, "x").expect_err("foreign");
        assert!(err.to_string().contains("--write-kubeconfig"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "clusters:\n- name: prod\n");
    }
}
