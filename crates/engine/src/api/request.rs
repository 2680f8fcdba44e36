//! One resource request described once: what it targets (group, version, resource,
//! namespace, name, subresource), its method, its query, the headers that shape it and its
//! body. Built once by [`super::routes::serve_resource`] and passed by reference to every
//! handler, so none of them takes the request apart into a long argument list.

use super::protobuf::ProtobufError;
use super::query::Query;
use axum::body::Bytes;
use axum::http::{HeaderMap, Method, header};

/// The path a request names, as Go's server hands it to kube's handlers (`URL.Path`): its
/// escapes decoded, so `cm%31` is `cm1` and `%2F` a separator like any `/`. `None` for a
/// request line Go's `url.ParseRequestURI` refuses (a `%` without two hex digits), which
/// Go's server answers itself ([`super::bad_request_line`]) before kube sees it.
pub fn request_path(uri: &axum::http::Uri) -> Option<String> {
    let raw = uri.path_and_query().map_or("/", |pq| pq.as_str());
    let url = crate::schema::go_url::parse_request_uri(raw).ok()?;
    Some(String::from_utf8_lossy(&url.path).into_owned())
}

/// Why kube's `RequestInfo` cannot read a resource path: a verb segment (`watch`,
/// `proxy`) with nothing after it. kube's filter answers it before any route, as a 500.
pub fn request_info_error(path: &str) -> Option<&'static str> {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let after_version = match segs.as_slice() {
        ["api", _, rest @ ..] | ["apis", _, _, rest @ ..] => rest,
        _ => return None,
    };
    match after_version {
        [verb] if matches!(*verb, "watch" | "proxy") => Some("unable to determine kind and namespace from url"),
        _ => None,
    }
}

/// A parsed resource path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub group: String,
    pub version: String,
    pub namespace: Option<String>,
    pub plural: String,
    pub name: Option<String>,
    pub subresource: Option<String>,
    /// Under `/watch/` (kube's legacy watch paths): a watch whatever the query says.
    pub watch: bool,
    /// Segments after the subresource, which kube's `RequestInfo` ignores: the CRD handler
    /// serves `.../o1/status/x` as `.../o1/status`; go-restful routes no such path.
    pub trailing: bool,
}

/// Parses `/api/v1/...` and `/apis/<g>/<v>/...` resource paths, `/watch/` after the
/// version included.
pub fn parse_target(path: &str) -> Option<Target> {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version, rest) = match segs.as_slice() {
        ["api", v, rest @ ..] => (String::new(), v.to_string(), rest),
        ["apis", g, v, rest @ ..] => (g.to_string(), v.to_string(), rest),
        _ => return None,
    };
    // kube's RequestInfo takes `watch` after the version as the verb, never as a resource.
    let (watch, rest) = match rest {
        ["watch", tail @ ..] => (true, tail),
        other => (false, other),
    };
    let (namespace, rest) = match rest {
        ["namespaces", ns, plural, tail @ ..] => (Some(ns.to_string()), [&[*plural][..], tail].concat()),
        other => (None, other.to_vec()),
    };
    let t = |plural: &str, name: Option<&str>, sub: Option<&str>, trailing: bool| Target {
        group: group.clone(),
        version: version.clone(),
        namespace: namespace.clone(),
        plural: plural.to_string(),
        name: name.map(String::from),
        subresource: sub.map(String::from),
        watch,
        trailing,
    };
    match rest.as_slice() {
        [plural] => Some(t(plural, None, None, false)),
        [plural, name] => Some(t(plural, Some(name), None, false)),
        // kube reads an empty subresource (`.../o1//status`) as none: the CRD handler serves
        // the object itself, and go-restful routes no such path (as with trailing segments).
        [plural, name, "", ..] => Some(t(plural, Some(name), None, true)),
        [plural, name, sub, tail @ ..] => Some(t(plural, Some(name), Some(sub), !tail.is_empty())),
        _ => None,
    }
}

/// `/api/v1/namespaces/x`, `/api/v1/namespaces/x/status` and `.../x/finalize` name a
/// namespace, not a namespace prefix (kube's `namespaceSubresources`).
pub(crate) fn namespace_object(t: &Target) -> Option<Target> {
    let sub = matches!(t.plural.as_str(), "status" | "finalize");
    if t.group.is_empty() && t.namespace.is_some() && t.name.is_none() && sub && !t.watch {
        return Some(Target {
            namespace: None,
            plural: "namespaces".into(),
            name: t.namespace.clone(),
            subresource: Some(t.plural.clone()),
            ..t.clone()
        });
    }
    None
}

/// One request on a resource path, as the handlers read it.
#[derive(Debug)]
pub struct ResourceRequest<'a> {
    /// What the path names.
    pub target: Target,
    pub method: Method,
    pub query: &'a Query,
    /// The request's headers, a protobuf body's Content-Type already rewritten to JSON.
    pub headers: &'a HeaderMap,
    /// The body, a protobuf one already decoded to JSON.
    pub body: Bytes,
    /// Why a protobuf body could not be decoded (then `body` is as sent): refused only
    /// where the verb reads its body, after what kube checks first (routing, `Accept`).
    pub undecodable: Option<ProtobufError>,
}

impl ResourceRequest<'_> {
    /// The namespace the path names, if any.
    pub fn namespace(&self) -> Option<&str> {
        self.target.namespace.as_deref()
    }

    /// The object the path names; empty where it names none (lists, creates,
    /// deletecollection).
    pub fn name(&self) -> &str {
        self.target.name.as_deref().unwrap_or_default()
    }

    /// The Content-Type header, empty when absent or not text.
    pub fn content_type(&self) -> &str {
        self.header(header::CONTENT_TYPE).unwrap_or("")
    }

    /// The User-Agent header (the default field manager's source).
    pub fn user_agent(&self) -> Option<&str> {
        self.header(header::USER_AGENT)
    }

    fn header(&self, name: header::HeaderName) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_parse_into_targets() {
        let t = parse_target("/apis/stable.example.com/v1/namespaces/default/widgets/w1/status/x/y").expect("parse");
        assert!(t.trailing);
        assert_eq!(t.subresource.as_deref(), Some("status"));
        let t = parse_target("/apis/stable.example.com/v1/namespaces/default/widgets/w1/status").expect("parse");
        assert!(!t.trailing);
        assert_eq!(
            (t.group.as_str(), t.namespace.as_deref(), t.plural.as_str(), t.name.as_deref(), t.subresource.as_deref()),
            ("stable.example.com", Some("default"), "widgets", Some("w1"), Some("status"))
        );
        let t = parse_target("/api/v1/namespaces/kube-system").expect("parse");
        assert_eq!(
            (t.plural.as_str(), t.name.as_deref(), t.namespace.as_deref()),
            ("namespaces", Some("kube-system"), None)
        );
        let t = parse_target("/api/v1/namespaces/team/status").expect("parse");
        let ns = namespace_object(&t).expect("the namespace's status");
        assert_eq!(
            (ns.plural.as_str(), ns.name.as_deref(), ns.subresource.as_deref()),
            ("namespaces", Some("team"), Some("status"))
        );
        assert_eq!(parse_target("/apis/g"), None);
        let t = parse_target("/apis/g.example.com/v1/watch/namespaces/team/widgets/w1").expect("parse");
        assert!(t.watch);
        assert_eq!(
            (t.namespace.as_deref(), t.plural.as_str(), t.name.as_deref()),
            (Some("team"), "widgets", Some("w1"))
        );
        let t = parse_target("/api/v1/watch/namespaces/team").expect("parse");
        assert!(t.watch && namespace_object(&t).is_none());
        assert_eq!((t.plural.as_str(), t.name.as_deref()), ("namespaces", Some("team")));
        assert!(!parse_target("/apis/g.example.com/v1/widgets").expect("parse").watch);
    }

    #[test]
    fn paths_are_read_decoded_as_go_serves_them() {
        let path = |raw: &str| request_path(&raw.parse().expect("a uri"));
        assert_eq!(
            path("/api/v1/namespaces/rf/configmaps/cm%31?x=%zz").as_deref(),
            Some("/api/v1/namespaces/rf/configmaps/cm1")
        );
        assert_eq!(
            path("/apis/g/v1/namespaces/rf/widgets/w%2f1").as_deref(),
            Some("/apis/g/v1/namespaces/rf/widgets/w/1")
        );
        assert_eq!(path("/api/v1/namespaces/r%20f").as_deref(), Some("/api/v1/namespaces/r f"));
        assert_eq!(path("/api/v1/namespaces/a+b").as_deref(), Some("/api/v1/namespaces/a+b"), "no + in a path");
        assert_eq!(path("/api/v1/namespaces/r%zzf"), None);
        assert_eq!(path("/api/v1/namespaces/r%f"), None);
        assert_eq!(path("/api/v1/namespaces/rf%"), None);
    }

    #[test]
    fn a_verb_segment_alone_is_no_request_info() {
        for path in ["/api/v1/watch", "/api/v1/watch/", "/apis/g/v1/watch", "/apis/nope/v9/proxy"] {
            assert!(request_info_error(path).is_some(), "{path}");
        }
        for path in ["/api/v1/watch/namespaces", "/apis/g/watch", "/api/watch", "/apis/g/v1/watches", "/version"] {
            assert_eq!(request_info_error(path), None, "{path}");
        }
    }
}
