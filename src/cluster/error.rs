//! The one error type of the cluster layer: what failed, in words a user can act on.
//!
//! Every `kube::Error` goes through [`ClusterError::from_kube`], which sorts it by what the
//! user should do about it (start the cluster, log in again, ask for RBAC, re-read and
//! retry, fix the object), so the CLI and the TUI print one message and need no knowledge of
//! HTTP. [`ClusterError::is_usage`] tells a wrong command line or input file apart from a
//! refusal by the server; the CLI maps the two to exit codes 2 and 1.

use std::path::PathBuf;
use std::time::Duration;

/// Why a cluster operation failed.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// No kubeconfig anywhere kubectl would look.
    #[error(
        "no kubeconfig found: {looked} does not exist and KUBECONFIG is not set. Give one with --kubeconfig FILE, or use --local for the local engine"
    )]
    NoKubeconfig { looked: String },
    /// The kubeconfig file could not be read or parsed.
    #[error("cannot use the kubeconfig {path}: {reason}")]
    Kubeconfig { path: String, reason: String },
    /// `--context` (or current-context) names a context the kubeconfig does not have.
    #[error(
        "context {name:?} was not found in the kubeconfig; its contexts are: {}. Choose one with --context (see kubectl config get-contexts)",
        list_or_none(available)
    )]
    UnknownContext { name: String, available: Vec<String> },
    /// The kubeconfig has no current context and none was given.
    #[error("the kubeconfig has no current context; choose one with --context (contexts: {})", list_or_none(available))]
    NoContext { available: Vec<String> },
    /// The server could not be reached at all.
    #[error(
        "cannot reach the cluster{}: {detail}. Is it running? Check the server address in the kubeconfig (kubectl config view --minify), or use --local for the local engine",
        at(server)
    )]
    Unreachable { server: Option<String>, detail: String },
    /// A request took longer than the timeout that applied: connecting (kube's 30 s, or
    /// `--request-timeout` when shorter) or waiting for the answer (`--request-timeout`).
    #[error("{}", timeout_message(server, *after, *connecting))]
    Timeout { server: Option<String>, after: Duration, connecting: bool },
    /// 401: the credentials were refused.
    #[error(
        "the cluster refused our credentials (401 Unauthorized): {message}. Log in again or check the user of the kubeconfig context"
    )]
    Unauthorized { message: String },
    /// 403: RBAC said no.
    #[error(
        "forbidden (403): {message}. Ask a cluster administrator for the RBAC permission, or check with kubectl auth can-i"
    )]
    Forbidden { message: String },
    /// 404 on an object.
    #[error("{what} {name:?} not found{}", in_namespace(namespace))]
    NotFound { what: String, name: String, namespace: Option<String> },
    /// A resource name discovery does not know.
    #[error(
        "the server doesn't have a resource type {name:?}. Run 'kubectl crd list' to see the registrations and their names"
    )]
    UnknownResource { name: String },
    /// A document's kind that no served resource has.
    #[error(
        "the server does not serve kind {kind:?} in {api_version:?}; apply its CustomResourceDefinition first ('kubectl crd list' shows what is registered)"
    )]
    UnknownKind { kind: String, api_version: String },
    /// A registration name (CRD) nobody has.
    #[error("no CustomResourceDefinition matches {name:?}. Run 'kubectl crd list' to see the registrations")]
    UnknownRegistration { name: String },
    /// The resource exists but lacks the subresource asked for.
    #[error(
        "{resource} has no /{subresource} subresource: its CRD does not declare spec.versions[].subresources.{subresource}"
    )]
    NoSubresource { resource: String, subresource: &'static str },
    /// 409 on a write: someone changed the object since it was read.
    #[error(
        "conflict (409): {message}. The object changed since it was read; run the command again, or add --retry-conflicts to re-read and retry automatically"
    )]
    Conflict { message: String },
    /// A conflict whose retry would re-apply an edit over another writer's change of the
    /// same field.
    #[error(
        "conflict (409): the object changed while you edited it, and {0}: your edit was not re-applied, so that neither change is lost. Edit the new version"
    )]
    EditOverlap(#[from] super::reapply::Overlap),
    /// 409 on a create: the name is taken.
    #[error("already exists (409): {message}")]
    AlreadyExists { message: String },
    /// 422: the server validated the object and refused it.
    #[error("the server refused the object (422 Invalid): {message}")]
    Invalid { message: String },
    /// `--current-replicas` did not hold.
    #[error("expected replicas to be {expected}, was {actual}; nothing was changed")]
    ReplicasPrecondition { expected: i32, actual: i32 },
    /// Any other refusal by the server.
    #[error("the server refused the request ({code} {reason}): {message}")]
    Api { code: u16, reason: String, message: String },
    /// A document given by the user is not what the operation needs.
    #[error("invalid {what} in {source_name}: {reason}")]
    InvalidInput { what: &'static str, source_name: String, reason: String },
    /// The local engine's data could not be opened.
    #[error("cannot open the local engine's data in {}: {reason}", dir.display())]
    LocalStore { dir: PathBuf, reason: String },
    /// The data directory is held by another process that does not serve it where we can find.
    #[error(
        "{} is in use by another kubectl crd process (a 'kubectl crd serve --data-dir' or '--local' session), and no kubectl crd serve answers at its kubeconfig{}. Stop the other process, or use another --local=DIR",
        dir.display(), found(kubeconfig)
    )]
    DataDirBusy { dir: PathBuf, kubeconfig: Option<PathBuf> },
    /// The data directory is held by another `--local` session, which serves nobody.
    #[error(
        "{} is in use by another 'kubectl crd --local' session (process {pid}): the local engine's data is open in one process at a time. Wait for it to end, or run 'kubectl crd serve --data-dir {0}' so that several commands share it",
        dir.display()
    )]
    DataDirHeld { dir: PathBuf, pid: u32 },
    /// The data directory is held by a `serve` that writes its kubeconfig elsewhere.
    #[error(
        "{} is held by 'kubectl crd serve' (process {pid}), which writes its kubeconfig to {}: reach that server with --kubeconfig {1}, or stop it to use --local={0}",
        dir.display(), kubeconfig.display()
    )]
    DataDirServedElsewhere { dir: PathBuf, pid: u32, kubeconfig: PathBuf },
    /// Waiting for a condition gave up.
    #[error("{what} did not happen within {}", humantime(*after))]
    WaitTimeout { what: String, after: Duration },
    /// Anything else (a response we could not read, a TLS setup failure, ...).
    #[error("{0}")]
    Other(String),
}

fn list_or_none(items: &[String]) -> String {
    if items.is_empty() { "none".to_string() } else { items.join(", ") }
}

fn at(server: &Option<String>) -> String {
    server.as_ref().map(|s| format!(" at {s}")).unwrap_or_default()
}

fn in_namespace(ns: &Option<String>) -> String {
    ns.as_ref().map(|n| format!(" in namespace {n:?}")).unwrap_or_default()
}

fn timeout_message(server: &Option<String>, after: Duration, connecting: bool) -> String {
    let after = if after.is_zero() { "its time limit".to_string() } else { humantime(after) };
    if connecting {
        format!(
            "could not connect to the cluster{} within {after} (connection and TLS handshake). Is it running and reachable? Check the server address in the kubeconfig (kubectl config view --minify)",
            at(server)
        )
    } else {
        format!(
            "the cluster{} did not answer within {after}; try again, or allow longer with --request-timeout",
            at(server)
        )
    }
}

fn found(kubeconfig: &Option<PathBuf>) -> String {
    kubeconfig.as_ref().map(|k| format!(" ({})", k.display())).unwrap_or_default()
}

/// `30s`, `2m`, `1m30s`, `500ms`: the way the user wrote `--request-timeout`.
pub(crate) fn humantime(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        return format!("{ms}ms");
    }
    let secs = d.as_secs();
    match (secs / 60, secs % 60) {
        (0, s) => format!("{s}s"),
        (m, 0) => format!("{m}m"),
        (m, s) => format!("{m}m{s}s"),
    }
}

impl ClusterError {
    /// Sorts a kube-rs error. `what` names the object for a 404 (`widgets.stable.example.com`),
    /// with its `name` and `namespace`.
    pub fn from_kube(err: kube::Error, target: Option<(&str, &str, Option<&str>)>) -> Self {
        match err {
            kube::Error::Api(status) => Self::from_status(&status, target),
            kube::Error::Service(e) => Self::from_transport(e.as_ref()),
            kube::Error::HyperError(e) => Self::from_transport(&e),
            kube::Error::Auth(e) => ClusterError::Unauthorized { message: e.to_string() },
            other => ClusterError::Other(other.to_string()),
        }
    }

    /// Sorts a `Status` the server answered with.
    pub fn from_status(status: &kube::core::Status, target: Option<(&str, &str, Option<&str>)>) -> Self {
        let message = status.message.clone();
        match status.code {
            401 => ClusterError::Unauthorized { message },
            403 => ClusterError::Forbidden { message },
            404 => match target {
                Some((what, name, namespace)) => ClusterError::NotFound {
                    what: what.to_string(),
                    name: name.to_string(),
                    namespace: namespace.map(String::from),
                },
                None => ClusterError::Api { code: 404, reason: "NotFound".into(), message },
            },
            409 if status.reason == "AlreadyExists" => ClusterError::AlreadyExists { message },
            409 => ClusterError::Conflict { message },
            422 => ClusterError::Invalid { message },
            code => ClusterError::Api { code, reason: status.reason.clone(), message },
        }
    }

    fn from_transport(err: &(dyn std::error::Error + 'static)) -> Self {
        let mut detail = err.to_string();
        let mut current: Option<&(dyn std::error::Error + 'static)> = Some(err);
        // hyper's client says "client error (Connect)" around what failed while connecting.
        let mut connecting = false;
        // The innermost cause is the useful one ("Connection refused", "certificate ...").
        for _ in 0..16 {
            let Some(e) = current else { break };
            let text = e.to_string();
            connecting |= text.contains("(Connect)");
            let timed_out =
                e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut);
            if timed_out || text.to_ascii_lowercase().contains("elapsed") {
                return ClusterError::Timeout { server: None, after: Duration::ZERO, connecting };
            }
            detail = e.to_string();
            current = e.source();
        }
        ClusterError::Unreachable { server: None, detail }
    }

    /// Fills in which server a transport error was about, and the timeout that applied:
    /// `timeouts` are (connecting, answering) as the client was configured.
    pub fn at_server(self, server: &str, timeouts: (Option<Duration>, Option<Duration>)) -> Self {
        match self {
            ClusterError::Unreachable { server: None, detail } => {
                ClusterError::Unreachable { server: Some(server.to_string()), detail }
            }
            ClusterError::Timeout { server: None, after, connecting } => {
                let applied = if connecting { timeouts.0 } else { timeouts.1 };
                ClusterError::Timeout {
                    server: Some(server.to_string()),
                    after: if after.is_zero() { applied.unwrap_or(after) } else { after },
                    connecting,
                }
            }
            other => other,
        }
    }

    /// Whether the fault is in what the user typed or gave (exit code 2), rather than a
    /// refusal or failure on the server's side (exit code 1).
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            ClusterError::NoKubeconfig { .. }
                | ClusterError::Kubeconfig { .. }
                | ClusterError::UnknownContext { .. }
                | ClusterError::NoContext { .. }
                | ClusterError::InvalidInput { .. }
        )
    }

    /// Whether this is an optimistic-concurrency conflict a re-read could resolve.
    pub fn is_conflict(&self) -> bool {
        matches!(self, ClusterError::Conflict { .. })
    }

    /// Whether the object (or resource) was not there.
    pub fn is_not_found(&self) -> bool {
        matches!(self, ClusterError::NotFound { .. } | ClusterError::Api { code: 404, .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: u16, reason: &str, message: &str) -> kube::core::Status {
        kube::core::Status::failure(message, reason).with_code(code)
    }

    #[test]
    fn statuses_become_actionable_errors() {
        let conflict = ClusterError::from_status(
            &status(
                409,
                "Conflict",
                "the object has been modified; please apply your changes to the latest version and try again",
            ),
            None,
        );
        assert!(conflict.is_conflict());
        assert!(conflict.to_string().contains("--retry-conflicts"), "{conflict}");
        let forbidden = ClusterError::from_status(
            &status(403, "Forbidden", "widgets is forbidden: User \"bob\" cannot list resource \"widgets\""),
            None,
        );
        assert!(forbidden.to_string().contains("RBAC"), "{forbidden}");
        let missing = ClusterError::from_status(
            &status(404, "NotFound", "widgets.stable.example.com \"w9\" not found"),
            Some(("widgets.stable.example.com", "w9", Some("default"))),
        );
        assert_eq!(missing.to_string(), "widgets.stable.example.com \"w9\" not found in namespace \"default\"");
        assert!(missing.is_not_found() && !missing.is_usage());
        let exists = ClusterError::from_status(&status(409, "AlreadyExists", "x already exists"), None);
        assert!(!exists.is_conflict());
    }

    #[test]
    fn transport_errors_name_the_server_and_the_timeout() {
        let refused = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "Connection refused");
        let e = ClusterError::from_transport(&refused).at_server("https://127.0.0.1:1", (None, None));
        assert_eq!(
            e.to_string(),
            "cannot reach the cluster at https://127.0.0.1:1: Connection refused. Is it running? Check the server address in the kubeconfig (kubectl config view --minify), or use --local for the local engine"
        );
        let slow = std::io::Error::new(std::io::ErrorKind::TimedOut, "timed out");
        let limits = (Some(Duration::from_secs(30)), Some(Duration::from_secs(90)));
        let e = ClusterError::from_transport(&slow).at_server("https://x", limits);
        assert!(e.to_string().starts_with("the cluster at https://x did not answer within 1m30s;"), "{e}");
        // While connecting, the connect timeout applied (kube's 30 s with no --request-timeout).
        #[derive(Debug)]
        struct Connect(std::io::Error);
        impl std::fmt::Display for Connect {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("client error (Connect)")
            }
        }
        impl std::error::Error for Connect {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let connect = Connect(std::io::Error::new(std::io::ErrorKind::TimedOut, "timed out"));
        let e = ClusterError::from_transport(&connect).at_server("https://x", (Some(Duration::from_secs(30)), None));
        assert!(e.to_string().starts_with("could not connect to the cluster at https://x within 30s"), "{e}");
    }

    #[test]
    fn usage_errors_are_the_user_s_to_fix() {
        assert!(ClusterError::UnknownContext { name: "x".into(), available: vec!["a".into()] }.is_usage());
        assert!(!ClusterError::Conflict { message: String::new() }.is_usage());
        assert_eq!(humantime(Duration::from_millis(250)), "250ms");
        assert_eq!(humantime(Duration::from_secs(120)), "2m");
    }
}
