//! Continue tokens, as kube's `storage.EncodeContinue`/`DecodeContinue` write and read
//! them: `{"v":"meta.k8s.io/v1","rv":N,"start":"key"}` in unpadded URL-safe base64.
//!
//! Decoding goes through Go's base64 and JSON rules ([`go_base64`], [`super::go_json`]) because
//! kube quotes their errors to the client (`continue key is not valid: invalid character
//! 'i' looking for beginning of value`), and refuses start keys that `path.Clean` would
//! change, so a token can never range outside the list's prefix.

mod go_base64;

use super::go_json;
use crate::store::Revision;
use base64::Engine as _;
use serde_json::Value;

/// Why kube refuses a continue token (Go's `storage.Err*` sentences).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContinueError {
    /// Not base64, not JSON of the token's shape, or a start key that is not clean.
    #[error("continue key is not valid: {0}")]
    Invalid(String),
    #[error("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")]
    InvalidStartRv,
    #[error("continue key is not valid: encoded start key empty (version meta.k8s.io/v1)")]
    EmptyStartKey,
    #[error("continue key is not valid: server does not recognize this encoded version {0}")]
    UnrecognizedVersion(String),
}

/// Where a continued list resumes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Continue {
    /// The snapshot to read; `None` for a token with a negative `rv`, which kube reads at
    /// the latest revision.
    pub revision: Option<Revision>,
    /// The first key to read, relative to the list's prefix.
    pub start: String,
}

/// A continue token in kube's shape.
pub fn encode(revision: Revision, start: &str) -> String {
    // Written by hand for Go's field order (a JSON map would sort the keys).
    let start = Value::from(start);
    let doc = format!(r#"{{"v":"meta.k8s.io/v1","rv":{revision},"start":{start}}}"#);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(doc)
}

/// Whether `path.Clean` leaves an absolute path as it is: no empty, `.` or `..`
/// segment and no trailing slash, unless it is the root.
fn is_clean(key: &str) -> bool {
    key == "/" || key.split('/').skip(1).all(|segment| !matches!(segment, "" | "." | ".."))
}

/// Go's `DecodeContinue`.
pub fn decode(token: &str) -> Result<Continue, ContinueError> {
    let raw = go_base64::decode(token).map_err(|e| ContinueError::Invalid(e.to_string()))?;
    let token = go_json::unmarshal_token(&raw).map_err(ContinueError::Invalid)?;
    if token.v != "meta.k8s.io/v1" {
        return Err(ContinueError::UnrecognizedVersion(token.v));
    }
    if token.rv == 0 {
        return Err(ContinueError::InvalidStartRv);
    }
    if token.start.is_empty() {
        return Err(ContinueError::EmptyStartKey);
    }
    let key = if token.start.starts_with('/') { token.start.clone() } else { format!("/{}", token.start) };
    if !is_clean(&key) {
        return Err(ContinueError::Invalid(token.start));
    }
    let start = key.strip_prefix('/').unwrap_or(&key).to_string();
    Ok(Continue { revision: u64::try_from(token.rv).ok(), start })
}

#[cfg(test)]
mod tests;
