//! Which cluster a connection reaches, told durably enough to keep what was written for
//! one cluster (a migration's journal) away from another: where it is — the server's URL,
//! or the local engine's data directory — and the uid of its `kube-system` namespace,
//! which a cluster keeps for its whole life and no other cluster has (a cluster rebuilt at
//! the same URL gets a new one; the local engine keeps it in its data).

use super::connect::Origin;
use super::error::ClusterError;
use k8s_openapi::api::core::v1::Namespace;
use kube::Api;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The namespace whose uid names a cluster.
const DURABLE_NAMESPACE: &str = "kube-system";

/// A cluster, as [`identify`] tells it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterIdentity {
    /// The server's URL (for the local engine: none; for an engine in memory: `memory`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// The local engine's data directory, absolute, whether this process opened it or a
    /// `kubectl crd serve` holds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_dir: Option<PathBuf>,
    /// The uid of `kube-system`; `None` when it could not be read (no RBAC permission).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
}

impl ClusterIdentity {
    /// Whether `other` is the same cluster: the same place (data directory, else URL) and,
    /// where both know it, the same `kube-system` uid — so a copy of a data directory, or
    /// another cluster behind the same URL, is another cluster.
    pub fn same_cluster(&self, other: &ClusterIdentity) -> bool {
        let place = match (&self.data_dir, &other.data_dir) {
            (Some(a), Some(b)) => a == b,
            (None, None) => self.server == other.server,
            _ => false,
        };
        let uid = match (&self.uid, &other.uid) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        };
        place && uid
    }
}

impl std::fmt::Display for ClusterIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.data_dir, &self.server) {
            (Some(dir), _) => write!(f, "the local engine in {}", dir.display())?,
            (None, Some(server)) => f.write_str(server)?,
            (None, None) => f.write_str("an unnamed cluster")?,
        }
        match &self.uid {
            Some(uid) => write!(f, " ({DURABLE_NAMESPACE} uid {uid})"),
            None => Ok(()),
        }
    }
}

/// The identity of the cluster `client` reaches through `origin`.
pub async fn identify(client: &kube::Client, origin: &Origin) -> Result<ClusterIdentity, ClusterError> {
    let (server, data_dir) = match origin {
        Origin::Live { server, .. } => (Some(server.clone()), None),
        Origin::Local { data_dir } | Origin::Served { data_dir, .. } => (None, Some(absolute(data_dir))),
        Origin::Memory => (Some("memory".to_string()), None),
    };
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let uid = match namespaces.get_opt(DURABLE_NAMESPACE).await.map_err(|e| ClusterError::from_kube(e, None)) {
        Ok(ns) => ns.and_then(|ns| ns.metadata.uid),
        // Without the permission the place alone tells the cluster.
        Err(ClusterError::Forbidden { .. }) => None,
        Err(e) => return Err(e),
    };
    Ok(ClusterIdentity { server, data_dir, uid })
}

/// `dir` as one path however it was written (relative, through a symlink).
fn absolute(dir: &Path) -> PathBuf {
    std::fs::canonicalize(dir).or_else(|_| std::path::absolute(dir)).unwrap_or_else(|_| dir.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(server: Option<&str>, dir: Option<&str>, uid: Option<&str>) -> ClusterIdentity {
        ClusterIdentity {
            server: server.map(String::from),
            data_dir: dir.map(PathBuf::from),
            uid: uid.map(String::from),
        }
    }

    #[test]
    fn the_same_place_and_uid_is_the_same_cluster() {
        let prod = id(Some("https://prod:6443"), None, Some("u1"));
        assert!(prod.same_cluster(&prod.clone()));
        assert!(prod.same_cluster(&id(Some("https://prod:6443"), None, None)), "a uid nobody could read");
        assert!(!prod.same_cluster(&id(Some("https://prod:6443"), None, Some("u2"))), "rebuilt at the same URL");
        assert!(!prod.same_cluster(&id(Some("https://dev:6443"), None, Some("u1"))), "another URL");
        let local = id(None, Some("/data/a"), Some("u3"));
        assert!(!local.same_cluster(&id(None, Some("/data/copy-of-a"), Some("u3"))), "a copied data directory");
        assert!(!local.same_cluster(&prod));
        assert_eq!(local.to_string(), "the local engine in /data/a (kube-system uid u3)");
        assert_eq!(id(Some("https://prod:6443"), None, None).to_string(), "https://prod:6443");
    }
}
