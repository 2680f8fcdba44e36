//! Which snapshot a list reads and how much of it, decided as kube-apiserver 1.32 decides
//! between its watch cache and etcd — a choice clients can see.
//!
//! The cacher hands a list to etcd when it continues one, asks for an `Exact` revision,
//! or gives a `limit` with a plain non-zero `resourceVersion` (the legacy exact read).
//! Everything else is served from the cache: the latest state, or one at least as new as
//! `resourceVersion` (`NotOlderThan`), where `resourceVersion=0` ignores `limit` and
//! answers everything in one page. The two paths also word a bad `resourceVersion`
//! differently (etcd: 400 `invalid resource version: ...`; the cache: a bare 500).

use super::continue_token;
use super::rest::ListQuery;
use crate::field::{FieldError, go_quote};
use crate::status::ApiError;
use crate::store::Revision;

/// The snapshot a list reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Snapshot {
    /// The store's current state.
    Latest,
    /// The state at least as new as this revision (waiting briefly for it).
    NotOlderThan(Revision),
    /// The state at exactly this revision (410 when compacted away).
    Exact(Revision),
}

/// How one list reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListPlan {
    pub snapshot: Snapshot,
    /// The first key to read, relative to the list's prefix (a continued list).
    pub start: Option<String>,
    /// The most items to answer; `None`: all of them.
    pub limit: Option<usize>,
    /// Whether the list continues an earlier one (its 410 is worded for continuing).
    pub continued: bool,
    /// Whether the watch cache answers (`resourceVersion=0`, `NotOlderThan`); otherwise the
    /// read is consistent. kube 1.32 reads etcd for those: its consistent reads from the
    /// cache need etcd's watch progress requests, which etcd 3.4 does not have.
    pub cached: bool,
    /// The revision is the legacy exact read's (a `limit` with a plain `resourceVersion`),
    /// which kube's etcd store applies to ranges alone: a list of one key (see
    /// [`super::list_scope`]) reads the latest state, refusing one older than the revision.
    pub legacy_exact: bool,
}

impl ListPlan {
    /// This plan of a list the watch cache would serve, when the cache is not ready (see
    /// [`super::unlisted`]): kube 1.32 hands a list with a limit and no selector to etcd,
    /// which pages it (`resourceVersion=0` reads the latest state there), and refuses any
    /// other with a 429.
    pub fn unready(self, q: &ListQuery, selecting: bool) -> Result<ListPlan, ApiError> {
        match q.limit.filter(|l| *l > 0) {
            Some(limit) if !selecting => Ok(ListPlan { limit: Some(limit), cached: false, ..self }),
            _ => Err(super::unlisted::cache_not_ready()),
        }
    }
}

/// The field error of an unparsable `resourceVersion` (`APIObjectVersioner`'s).
fn invalid_rv(rv: &str) -> String {
    let detail = format!("strconv.ParseUint: parsing {}: invalid syntax", go_quote(rv));
    FieldError::invalid("resourceVersion", rv, detail).to_string()
}

/// A client's resourceVersion as the watch cache reads it: `None` for unset or `"0"`
/// (any), else the revision; an unparsable one is a 500 without a reason.
pub fn cache_rv(rv: Option<&str>) -> Result<Option<Revision>, ApiError> {
    match rv.filter(|s| !s.is_empty() && *s != "0") {
        None => Ok(None),
        Some(s) => s.parse().map(Some).map_err(|_| ApiError::new(500, "", invalid_rv(s))),
    }
}

/// The plan of a list whose options passed validation.
pub fn plan(q: &ListQuery) -> Result<ListPlan, ApiError> {
    let rv = q.resource_version.as_deref().unwrap_or("");
    let rv_match = q.resource_version_match.as_deref().unwrap_or("");
    let token = q.continue_token.as_deref().filter(|t| !t.is_empty());
    let limit = q.limit.filter(|l| *l > 0);
    let legacy_exact = limit.is_some() && rv_match.is_empty() && !rv.is_empty() && rv != "0";
    let from_etcd = token.is_some() || legacy_exact || (!rv_match.is_empty() && rv_match != "NotOlderThan");
    if !from_etcd {
        let snapshot = cache_rv(Some(rv))?.map_or(Snapshot::Latest, Snapshot::NotOlderThan);
        // The cache pages, except at `resourceVersion=0`, which it answers whole.
        let limit = limit.filter(|_| rv != "0");
        return Ok(ListPlan {
            snapshot,
            start: None,
            limit,
            continued: false,
            cached: !rv.is_empty(),
            legacy_exact: false,
        });
    }
    if let Some(token) = token {
        let resume =
            continue_token::decode(token).map_err(|e| ApiError::bad_request(format!("invalid continue token: {e}")))?;
        if !rv.is_empty() && rv != "0" {
            return Err(ApiError::bad_request("specifying resource version is not allowed when using continue"));
        }
        let snapshot = resume.revision.map_or(Snapshot::Latest, Snapshot::Exact);
        return Ok(ListPlan {
            snapshot,
            start: Some(resume.start),
            limit,
            continued: true,
            cached: false,
            legacy_exact: false,
        });
    }
    let revision: Revision =
        rv.parse().map_err(|_| ApiError::bad_request(format!("invalid resource version: {}", invalid_rv(rv))))?;
    // Validation left `Exact` (with a non-zero revision) and the legacy exact read here.
    let snapshot = if revision > 0 { Snapshot::Exact(revision) } else { Snapshot::Latest };
    Ok(ListPlan { snapshot, start: None, limit, continued: false, cached: false, legacy_exact })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(pairs: &[(&str, &str)]) -> ListQuery {
        let mut q = ListQuery::default();
        for (k, v) in pairs {
            let v = Some(v.to_string());
            match *k {
                "resourceVersion" => q.resource_version = v,
                "resourceVersionMatch" => q.resource_version_match = v,
                "continue" => q.continue_token = v,
                "limit" => q.limit = v.and_then(|l| l.parse().ok()),
                _ => {}
            }
        }
        q
    }

    #[test]
    fn only_resource_version_0_and_not_older_than_read_the_cache() {
        let cached = |pairs: &[(&str, &str)]| plan(&query(pairs)).expect("plan").cached;
        assert!(cached(&[("resourceVersion", "0")]));
        assert!(cached(&[("resourceVersion", "0"), ("resourceVersionMatch", "NotOlderThan")]));
        assert!(cached(&[("resourceVersion", "7"), ("limit", "2"), ("resourceVersionMatch", "NotOlderThan")]));
        assert!(cached(&[("resourceVersion", "7")]));
        assert!(!cached(&[]), "a consistent list reads etcd");
        assert!(!cached(&[("limit", "2")]));
        assert!(!cached(&[("resourceVersion", "7"), ("limit", "2")]), "the legacy exact read");
        assert!(!cached(&[("resourceVersion", "7"), ("resourceVersionMatch", "Exact")]));
    }

    fn outcome(pairs: &[(&str, &str)]) -> Result<(Snapshot, Option<usize>), (u16, String, String)> {
        plan(&query(pairs)).map(|p| (p.snapshot, p.limit)).map_err(|e| (e.code, e.reason, e.message))
    }

    #[test]
    fn the_cache_and_etcd_read_as_kube_chooses() {
        use Snapshot::*;
        assert_eq!(outcome(&[]), Ok((Latest, None)));
        assert_eq!(outcome(&[("limit", "3")]), Ok((Latest, Some(3))));
        // resourceVersion=0 is the cache's whole state, whatever the limit.
        assert_eq!(outcome(&[("limit", "3"), ("resourceVersion", "0")]), Ok((Latest, None)));
        let not_older = [("limit", "3"), ("resourceVersion", "0"), ("resourceVersionMatch", "NotOlderThan")];
        assert_eq!(outcome(&not_older), Ok((Latest, None)));
        assert_eq!(outcome(&[("resourceVersion", "7")]), Ok((NotOlderThan(7), None)));
        let paged_not_older = [("limit", "2"), ("resourceVersion", "7"), ("resourceVersionMatch", "NotOlderThan")];
        assert_eq!(outcome(&paged_not_older), Ok((NotOlderThan(7), Some(2))));
        // A limit with a plain resourceVersion is the legacy exact read.
        assert_eq!(outcome(&[("limit", "2"), ("resourceVersion", "7")]), Ok((Exact(7), Some(2))));
        assert_eq!(outcome(&[("resourceVersion", "7"), ("resourceVersionMatch", "Exact")]), Ok((Exact(7), None)));
    }

    #[test]
    fn an_unready_cache_hands_etcd_only_a_limited_list_without_selectors() {
        let unready = |pairs: &[(&str, &str)], selecting: bool| {
            let q = query(pairs);
            plan(&q).expect("plan").unready(&q, selecting).map(|p| (p.snapshot, p.limit, p.cached)).map_err(|e| e.code)
        };
        let at_0 = [("resourceVersion", "0"), ("limit", "2")];
        assert_eq!(unready(&at_0, false), Ok((Snapshot::Latest, Some(2), false)), "paged by etcd");
        assert_eq!(unready(&at_0, true), Err(429));
        assert_eq!(unready(&[("resourceVersion", "0")], false), Err(429));
        assert_eq!(unready(&[("resourceVersion", "7")], false), Err(429));
    }

    #[test]
    fn a_bad_resource_version_is_worded_by_whoever_reads() {
        let why = "resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax";
        assert_eq!(outcome(&[("resourceVersion", "abc")]), Err((500, String::new(), why.to_string())));
        let not_older = [("limit", "2"), ("resourceVersion", "abc"), ("resourceVersionMatch", "NotOlderThan")];
        assert_eq!(outcome(&not_older), Err((500, String::new(), why.to_string())));
        let etcd = Err((400, "BadRequest".to_string(), format!("invalid resource version: {why}")));
        assert_eq!(outcome(&[("limit", "2"), ("resourceVersion", "abc")]), etcd);
        assert_eq!(outcome(&[("resourceVersion", "abc"), ("resourceVersionMatch", "Exact")]), etcd);
    }

    #[test]
    fn a_continue_token_is_read_before_the_resource_version_is_refused() {
        let bad =
            "invalid continue token: continue key is not valid: invalid character 'i' looking for beginning of value";
        for rv in ["", "0", "5", "abc"] {
            let e = outcome(&[("continue", "abc"), ("resourceVersion", rv)]).expect_err("refused");
            assert_eq!((e.0, e.2.as_str()), (400, bad), "resourceVersion {rv:?}");
        }
        let token = continue_token::encode(9, "w1\0");
        let refused = outcome(&[("continue", &token), ("resourceVersion", "5")]).expect_err("refused");
        assert_eq!(refused.2, "specifying resource version is not allowed when using continue");
        let p = plan(&query(&[("continue", &token), ("resourceVersion", "0"), ("limit", "2")])).expect("continues");
        assert_eq!(
            p,
            ListPlan {
                snapshot: Snapshot::Exact(9),
                start: Some("w1\0".into()),
                limit: Some(2),
                continued: true,
                cached: false,
                legacy_exact: false
            }
        );
    }
}
