//! The one error of the crate: what went wrong starting, seeding, forking or serving a test
//! cluster, with the source kept.

use std::path::PathBuf;

/// Why a test cluster could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The engine did not start (for a durable cluster: an unreadable or locked directory).
    #[error("cannot start the engine: {0}")]
    Engine(#[from] kubectl_crd_engine::EngineError),
    /// The engine's store refused (a snapshot of a closed cluster).
    #[error("the engine's store: {0}")]
    Store(#[from] kubectl_crd_engine::store::StoreError),
    /// A file could not be read, or the data directory created.
    #[error("cannot read or create {}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// A document is not YAML, or not an object with `apiVersion`, `kind` and `metadata.name`.
    #[error("{origin}: {reason}")]
    Document {
        /// Which document (`<source> (document N)`).
        origin: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The cluster answered a request with an error (an invalid object: the apiserver's
    /// own message, e.g. `... is invalid: spec.x: Invalid value: ...`).
    #[error("{what}: {source}")]
    Kube {
        /// What was being done (`installing Greeting default/hello`).
        what: String,
        /// kube's error, with the `Status` the engine answered.
        #[source]
        source: kube::Error,
    },
    /// A CRD did not become Established (its names were refused, most likely).
    #[error("the CRD {name} was not Established: {reason}")]
    NotEstablished {
        /// The CRD's name.
        name: String,
        /// Why we stopped waiting.
        reason: String,
    },
    /// The served variant could not bind its loopback port.
    #[error("cannot serve on 127.0.0.1: {0}")]
    Serve(#[source] std::io::Error),
}

impl Error {
    /// The `Status` the cluster answered, when the error is one (for asserting on its code,
    /// reason or message in a test).
    pub fn status(&self) -> Option<&kube::core::Status> {
        match self {
            Error::Kube { source: kube::Error::Api(status), .. } => Some(status),
            _ => None,
        }
    }
}
