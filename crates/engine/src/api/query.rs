//! Query parameters of API requests, read leniently and validated where kube validates.

use crate::resources::rest::ListQuery;
use crate::status::ApiError;
use std::collections::HashMap;

/// The raw query of one request.
#[derive(Debug, Clone, Default)]
pub struct Query {
    /// The first value of each parameter: kube's query decoding
    /// (`Convert_Slice_string_To_string`) reads a repeated one by its first.
    first: HashMap<String, String>,
    /// Every parameter in order, for those kube reads as lists (`dryRun`).
    pairs: Vec<(String, String)>,
}

impl Query {
    pub fn parse(raw: Option<&str>) -> Self {
        let mut query = Query::default();
        for pair in raw.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let (k, v) = (decode(k), decode(v));
            query.first.entry(k.clone()).or_insert_with(|| v.clone());
            query.pairs.push((k, v));
        }
        query
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.first.get(key).map(String::as_str)
    }

    /// Every value of `key`, in the order given.
    pub fn all(&self, key: &str) -> Vec<&str> {
        self.pairs.iter().filter(|(k, _)| k == key).map(|(_, v)| v.as_str()).collect()
    }

    /// A boolean of kube's query parameter decoding (`Convert_Slice_string_To_bool`): the
    /// first value, false only when it is `0` or `false` in any case, so `watch=True`,
    /// `watch=t` and even `allowWatchBookmarks=abc` are true; `None` when absent.
    fn flag(&self, key: &str) -> Option<bool> {
        let first = self.pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())?;
        Some(first != "0" && !first.eq_ignore_ascii_case("false"))
    }

    /// Whether a list is a watch (`?watch=`, as kube's handler reads it).
    pub fn watch(&self) -> bool {
        self.flag("watch").unwrap_or(false)
    }

    pub fn timeout_seconds(&self) -> Result<Option<i64>, ApiError> {
        self.go_int("timeoutSeconds")
    }

    /// The list options, their integers parsed in the order of kube's conversion
    /// (`timeoutSeconds` before `limit`), for lists and collection deletes alike.
    pub fn list_query(&self) -> Result<ListQuery, ApiError> {
        self.timeout_seconds()?;
        let limit = self.go_int("limit")?.map(|l| usize::try_from(l).unwrap_or(0));
        Ok(ListQuery {
            labels: self.get("labelSelector").map(String::from),
            fields: self.get("fieldSelector").map(String::from),
            limit,
            continue_token: self.get("continue").map(String::from),
            resource_version: self.get("resourceVersion").map(String::from),
            resource_version_match: self.get("resourceVersionMatch").map(String::from),
            send_initial_events: self.flag("sendInitialEvents"),
            allow_watch_bookmarks: self.flag("allowWatchBookmarks").unwrap_or(false),
            watch_by_path: false,
        })
    }

    /// An integer parameter read as Go's `strconv.ParseInt` (400 with its error when it is
    /// not one, even empty, as kube-apiserver decodes its query parameters).
    fn go_int(&self, key: &str) -> Result<Option<i64>, ApiError> {
        let Some(raw) = self.get(key) else { return Ok(None) };
        go_parse_int(raw).map(Some)
    }
}

/// Go's `strconv.ParseInt(raw, 10, 64)`, failing with its error as a 400, as kube-apiserver
/// decodes an integer query parameter.
pub fn go_parse_int(raw: &str) -> Result<i64, ApiError> {
    raw.parse::<i64>().map_err(|e| {
        let why = match e.kind() {
            std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow => "value out of range",
            _ => "invalid syntax",
        };
        ApiError::bad_request(format!("strconv.ParseInt: parsing {}: {why}", crate::field::go_quote(raw)))
    })
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
        assert_eq!(Query::parse(Some("dryRun=All&dryRun=Some")).all("dryRun"), ["All", "Some"]);
        assert_eq!(Query::parse(Some("x=%")).get("x"), Some("%"));
        assert_eq!(Query::parse(Some("labelSelector=a&labelSelector=b")).get("labelSelector"), Some("a"));
    }

    #[test]
    fn booleans_are_read_as_kube_converts_them() {
        for (raw, watch) in [
            ("watch=True", true),
            ("watch=t", true),
            ("watch=abc", true),
            ("watch=", true),
            ("watch=0", false),
            ("watch=FALSE", false),
            ("watch=false&watch=true", false),
            ("", false),
        ] {
            assert_eq!(Query::parse(Some(raw)).watch(), watch, "{raw}");
        }
        let q = Query::parse(Some("allowWatchBookmarks=abc&sendInitialEvents=abc")).list_query().expect("no error");
        assert!(q.allow_watch_bookmarks);
        assert_eq!(q.send_initial_events, Some(true));
        assert_eq!(Query::parse(None).list_query().expect("ok").send_initial_events, None);
    }

    #[test]
    fn list_options_fail_on_a_bad_timeout_first() {
        let err = Query::parse(Some("limit=y&timeoutSeconds=x")).list_query().expect_err("not an integer");
        assert_eq!(err.message, "strconv.ParseInt: parsing \"x\": invalid syntax");
    }
}
