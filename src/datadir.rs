//! The layout of a data directory, the one place that knows its file names: `serve` writes
//! these files and the local engine (`--local=DIR`) reads the same ones, so a directory
//! served once opens locally and the other way round. Pure names and paths, no IO; it
//! imports nothing from the crate, so every layer can use it.

use std::path::{Path, PathBuf};

/// The redb store.
pub const STORE_FILE: &str = "store.redb";
/// The kubeconfig `serve` writes for its clients (unless `--write-kubeconfig` says otherwise).
pub const KUBECONFIG_FILE: &str = "kubeconfig";
/// The bearer token `serve` requires over TLS.
pub const TOKEN_FILE: &str = "token";
/// With memory storage nothing else locks the directory: this file does, while `serve` runs.
pub const LOCK_FILE: &str = "serve.lock";
/// Who holds the store ([`Holder`]), so that a `--local` on a held directory can say so at
/// once instead of waiting for a `serve` to answer.
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

/// Who holds a data directory, as [`HOLDER_FILE`] says: a `--local` session, or a `serve`
/// and where it writes its kubeconfig.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Holder {
    Local { pid: u32 },
    Serve { pid: u32, kubeconfig: PathBuf },
}

impl Holder {
    /// The holder file's text: `local PID`, or `serve PID` and the kubeconfig's path on
    /// the next line.
    pub fn to_text(&self) -> String {
        match self {
            Holder::Local { pid } => format!("local {pid}\n"),
            Holder::Serve { pid, kubeconfig } => format!("serve {pid}\n{}\n", kubeconfig.display()),
        }
    }

    /// Reads a holder file's text; `None` for anything else.
    pub fn parse(text: &str) -> Option<Holder> {
        let mut lines = text.lines();
        let (kind, pid) = lines.next()?.split_once(' ')?;
        let pid = pid.trim().parse().ok()?;
        match kind {
            "local" => Some(Holder::Local { pid }),
            "serve" => Some(Holder::Serve { pid, kubeconfig: Path::new(lines.next()?).to_path_buf() }),
            _ => None,
        }
    }

    pub fn pid(&self) -> u32 {
        match self {
            Holder::Local { pid } | Holder::Serve { pid, .. } => *pid,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holders_read_back_what_they_wrote() {
        for holder in [Holder::Local { pid: 7 }, Holder::Serve { pid: 8, kubeconfig: PathBuf::from("/tmp/k c") }] {
            assert_eq!(Holder::parse(&holder.to_text()), Some(holder));
        }
        assert_eq!(Holder::parse("serve 8\n"), None);
        assert_eq!(Holder::parse("other 1\n"), None);
    }
}
