//! Query parameters of API requests, read leniently and validated where kube validates.

use crate::engine::resources::rest::ListQuery;
use crate::engine::resources::rest::{DeleteOptions, FieldValidation, Propagation, WriteOptions};
use crate::engine::status::ApiError;
use std::collections::HashMap;

/// The raw query of one request.
#[derive(Debug, Clone, Default)]
pub struct Query(pub HashMap<String, String>);

impl Query {
    pub fn parse(raw: Option<&str>) -> Self {
        let mut map = HashMap::new();
        for pair in raw.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            map.insert(decode(k), decode(v));
        }
        Query(map)
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Some("true" | "1"))
    }

    pub fn watch(&self) -> bool {
        self.flag("watch")
    }

    /// `dryRun=All` (the only value kube accepts); anything else is 400.
    pub fn dry_run(&self) -> Result<bool, ApiError> {
        match self.get("dryRun") {
            None | Some("") => Ok(false),
            Some("All") => Ok(true),
            Some(other) => {
                Err(ApiError::bad_request(format!("Invalid dryRun value: {other:?}: supported values: \"All\"")))
            }
        }
    }

    /// The write options of a mutating request: dryRun, fieldManager, fieldValidation,
    /// force. Without `fieldManager`, kube names the manager after the User-Agent's
    /// program (`kubectl-patch/v1.32.4 (linux/amd64) ...` → `kubectl-patch`).
    pub fn write_options(&self, user_agent: Option<&str>) -> Result<WriteOptions, ApiError> {
        let field_validation = match self.get("fieldValidation") {
            None | Some("") => FieldValidation::Warn,
            Some("Ignore") => FieldValidation::Ignore,
            Some("Warn") => FieldValidation::Warn,
            Some("Strict") => FieldValidation::Strict,
            Some(other) => {
                return Err(ApiError::bad_request(format!(
                    "fieldValidation: Unsupported value: {other:?}: supported values: \"Ignore\", \"Strict\", \"Warn\""
                )));
            }
        };
        let field_manager = match self.get("fieldManager").filter(|m| !m.is_empty()) {
            Some(m) if m.len() > 128 => {
                return Err(ApiError::bad_request("fieldManager: Too long: may not be more than 128 bytes"));
            }
            Some(m) => Some(m.to_string()),
            None => {
                user_agent.and_then(|ua| ua.split('/').next()).map(|p| p.trim().to_string()).filter(|p| !p.is_empty())
            }
        };
        Ok(WriteOptions {
            dry_run: self.dry_run()?,
            field_manager,
            field_validation,
            force: self.flag("force"),
            ..Default::default()
        })
    }

    /// `metav1.DeleteOptions` from a DELETE body and the query (`propagationPolicy`,
    /// legacy `orphanDependents`, `preconditions`; `dryRun` is in [`Self::write_options`]).
    pub fn delete_options(&self, body: &[u8]) -> Result<DeleteOptions, ApiError> {
        let doc: serde_json::Value = if body.iter().all(u8::is_ascii_whitespace) {
            serde_json::Value::Null
        } else {
            serde_json::from_slice(body).map_err(|e| ApiError::bad_request(format!("invalid DeleteOptions: {e}")))?
        };
        let text = |key: &str| doc.get(key).and_then(serde_json::Value::as_str).or_else(|| self.get(key));
        let propagation = match text("propagationPolicy") {
            None | Some("") => match doc.get("orphanDependents").and_then(serde_json::Value::as_bool) {
                Some(true) => Some(Propagation::Orphan),
                Some(false) => Some(Propagation::Background),
                None => None,
            },
            Some("Orphan") => Some(Propagation::Orphan),
            Some("Background") => Some(Propagation::Background),
            Some("Foreground") => Some(Propagation::Foreground),
            Some(other) => {
                return Err(ApiError::bad_request(format!(
                    "propagationPolicy: Unsupported value: {other:?}: supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\""
                )));
            }
        };
        let pre = doc.get("preconditions");
        let precondition_rv = match pre.and_then(|p| p.get("resourceVersion")).and_then(serde_json::Value::as_str) {
            Some(rv) => Some(
                rv.parse()
                    .map_err(|_| ApiError::bad_request(format!("invalid precondition resourceVersion {rv:?}")))?,
            ),
            None => None,
        };
        let precondition_uid = pre.and_then(|p| p.get("uid")).and_then(serde_json::Value::as_str).map(String::from);
        let dry_run = match doc.get("dryRun") {
            None | Some(serde_json::Value::Null) => false,
            Some(v) => match v.as_array().map(|a| a.iter().map(|x| x.as_str()).collect::<Vec<_>>()) {
                Some(values) if values.is_empty() => false,
                Some(values) if values == [Some("All")] => true,
                _ => {
                    return Err(ApiError::bad_request(format!("Invalid dryRun value: {v}: supported values: \"All\"")));
                }
            },
        };
        Ok(DeleteOptions { precondition_uid, precondition_rv, propagation, dry_run })
    }

    pub fn timeout_seconds(&self) -> Result<Option<i64>, ApiError> {
        self.go_int("timeoutSeconds")
    }

    pub fn list_query(&self) -> Result<ListQuery, ApiError> {
        let limit = self.go_int("limit")?.map(|l| usize::try_from(l).unwrap_or(0));
        Ok(ListQuery {
            labels: self.get("labelSelector").map(String::from),
            fields: self.get("fieldSelector").map(String::from),
            limit,
            continue_token: self.get("continue").map(String::from),
            resource_version: self.get("resourceVersion").map(String::from),
            resource_version_match: self.get("resourceVersionMatch").map(String::from),
            send_initial_events: self.go_bool("sendInitialEvents")?,
            allow_watch_bookmarks: self.go_bool("allowWatchBookmarks")?.unwrap_or(false),
        })
    }

    /// An integer parameter read as Go's `strconv.ParseInt` (400 with its error when it is
    /// not one, as kube-apiserver decodes its query parameters).
    fn go_int(&self, key: &str) -> Result<Option<i64>, ApiError> {
        let Some(raw) = self.get(key).filter(|s| !s.is_empty()) else { return Ok(None) };
        raw.parse::<i64>().map(Some).map_err(|e| {
            let why = match e.kind() {
                std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow => "value out of range",
                _ => "invalid syntax",
            };
            ApiError::bad_request(format!("strconv.ParseInt: parsing {}: {why}", crate::engine::field::go_quote(raw)))
        })
    }

    /// A boolean parameter read as Go's `strconv.ParseBool` (400 when it is not one).
    fn go_bool(&self, key: &str) -> Result<Option<bool>, ApiError> {
        match self.get(key).filter(|s| !s.is_empty()) {
            None => Ok(None),
            Some("1" | "t" | "T" | "TRUE" | "true" | "True") => Ok(Some(true)),
            Some("0" | "f" | "F" | "FALSE" | "false" | "False") => Ok(Some(false)),
            Some(other) => Err(ApiError::bad_request(format!(
                "strconv.ParseBool: parsing {}: invalid syntax",
                crate::engine::field::go_quote(other)
            ))),
        }
    }
}

/// Percent-decoding with `+` as space, as Go's url.ParseQuery.
fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                match u8::from_str_radix(std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("zz"), 16) {
                    Ok(b) => {
                        out.push(b);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_selectors() {
        let q = Query::parse(Some("labelSelector=app%3Ddemo%2Ctier+in+(a)&watch=1&limit=2"));
        assert_eq!(q.get("labelSelector"), Some("app=demo,tier in (a)"));
        assert!(q.watch());
        assert_eq!(q.list_query().expect("valid").limit, Some(2));
        assert!(Query::parse(Some("dryRun=Some")).dry_run().is_err());
        assert_eq!(Query::parse(Some("x=%")).get("x"), Some("%"));
    }
}
