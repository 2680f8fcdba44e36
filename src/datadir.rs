//! The layout of a data directory, the one place that knows its file names: `serve` writes
//! these files and the local engine (`--local=DIR`) reads the same ones, so a directory
//! served once opens locally and the other way round. Pure names and paths, no IO; it
//! imports nothing from the crate, so every layer can use it.

use std::path::PathBuf;

/// The redb store.
pub const STORE_FILE: &str = "store.redb";
/// The kubeconfig `serve` writes for its clients (unless `--write-kubeconfig` says otherwise).
pub const KUBECONFIG_FILE: &str = "kubeconfig";
/// The bearer token `serve` requires over TLS.
pub const TOKEN_FILE: &str = "token";
/// With memory storage nothing else locks the directory: this file does, while `serve` runs.
pub const LOCK_FILE: &str = "serve.lock";
/// Who holds the store in a `--local` session (`local <pid>`), so that another `--local`
/// on the same directory can say so at once instead of looking for a `serve`.
pub const HOLDER_FILE: &str = "holder";
/// The certificate authority that signs the serving certificate, and its key.
pub const CA_CERT: &str = "ca.crt";
pub const CA_KEY: &str = "ca.key";
/// The serving certificate and its key.
pub const SERVING_CERT: &str = "tls.crt";
pub const SERVING_KEY: &str = "tls.key";

/// The local engine's data directory when `--local` or `--data-dir` names none.
pub fn default_local_dir() -> Option<PathBuf> {
    dirs::data_dir().map(|d| d.join("kubectl-crd").join("local"))
}
