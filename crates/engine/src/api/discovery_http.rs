//! Discovery over HTTP: which document a request gets (aggregated or legacy, in which
//! representation), with kube's validators and method rules. The documents themselves are
//! [`super::discovery`]'s.

use super::{discovery, error_response, query, respond};
use crate::representation::negotiation;
use crate::status::ApiError;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// The address `/api` reports for every client CIDR: kube reports its external address
/// (host and port); the engine knows only the one the client dialled, from the Host header
/// or, over HTTP/2 (kubectl's), the request's authority, which has no Host header.
fn server_address(parts: &axum::http::request::Parts) -> String {
    let host = parts.headers.get(header::HOST).and_then(|h| h.to_str().ok());
    let authority = parts.uri.authority().map(|a| a.as_str());
    host.or(authority).unwrap_or("127.0.0.1").to_string()
}

/// Aggregated discovery with kube's validators: its ETag, and a 304 without a body when
/// `If-None-Match` is that ETag exactly (kube compares the header whole), which is how
/// kubectl's disk cache revalidates it. The ETag is the list's, whatever its encoding.
fn aggregated_response(
    headers: &HeaderMap,
    (version, negotiated): (negotiation::AggregatedVersion, negotiation::Negotiated),
    doc: discovery::Document,
) -> Response {
    let etag = doc.etag.map(|e| format!("\"{e}\""));
    let current = etag
        .as_deref()
        .is_some_and(|e| headers.get(header::IF_NONE_MATCH).is_some_and(|inm| inm.as_bytes() == e.as_bytes()));
    let mut res = if current {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let json = match version {
            negotiation::AggregatedVersion::V2 => doc.json.to_vec(),
            negotiation::AggregatedVersion::V2beta1 => discovery::as_v2beta1(&doc.json),
        };
        let encoded = crate::representation::encode_json(&negotiated, json);
        let mut res = (StatusCode::OK, encoded.body).into_response();
        res.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(aggregated_content_type(version, negotiated.format)),
        );
        res
    };
    let h = res.headers_mut();
    if let Some(etag) = etag.and_then(|e| HeaderValue::from_str(&e).ok()) {
        h.insert(header::ETAG, etag);
    }
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("public"));
    h.insert(header::VARY, HeaderValue::from_static("Accept"));
    res
}

/// An aggregated list's Content-Type: the format's, with the type it converts to.
fn aggregated_content_type(version: negotiation::AggregatedVersion, format: negotiation::Format) -> &'static str {
    use negotiation::{AggregatedVersion as V, Format as F};
    match (version, format) {
        (V::V2, F::Yaml) => "application/yaml;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
        (V::V2beta1, F::Yaml) => "application/yaml;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList",
        (V::V2, _) => "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
        (V::V2beta1, _) => "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList",
    }
}

/// Whether `/api` or `/apis` is asked for as an aggregated list, and how. `/api` is a
/// go-restful route, whose own check of `Accept` comes first.
fn aggregated_negotiated(
    path: &str,
    headers: &HeaderMap,
    q: &query::Query,
) -> Option<Result<(negotiation::AggregatedVersion, negotiation::Negotiated), ApiError>> {
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok());
    let (version, mut negotiated) = negotiation::negotiate_aggregated(accept)?;
    if path == "/api"
        && let Err(e) = negotiation::restful_accepts(accept, false)
    {
        return Some(Err(e));
    }
    let user_agent = headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok());
    negotiated.pretty |= negotiation::wants_pretty(q.get("pretty"), user_agent);
    Some(Ok((version, negotiated)))
}

/// The representation of the discovery document at `path` (one that exists). The
/// built-in group-versions and `/api` are go-restful routes, which check `Accept` first;
/// `/apis` and `/apis/<group>`, and a CRD's group-version, are plain handlers. Then kube
/// negotiates as for any object, without conversions.
fn discovery_negotiated(
    kinds: &crate::kinds::Kinds,
    path: &str,
    headers: &HeaderMap,
    q: &query::Query,
) -> Result<negotiation::Negotiated, ApiError> {
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok());
    if restful_discovery(kinds, path) {
        negotiation::restful_accepts(accept, false)?;
    }
    let mut negotiated = negotiation::negotiate(accept, negotiation::Endpoint::Discovery)?;
    let user_agent = headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok());
    negotiated.pretty |= negotiation::wants_pretty(q.get("pretty"), user_agent);
    Ok(negotiated)
}

/// A discovery document (`json`) in the representation negotiated, or the refusal.
fn discovery_response(
    negotiated: Result<negotiation::Negotiated, ApiError>,
    json: Vec<u8>,
    headers: &HeaderMap,
    q: &query::Query,
) -> Response {
    match negotiated {
        Ok(n) => respond::encoded_response(StatusCode::OK, crate::representation::encode_json(&n, json)),
        Err(e) => respond::error_for(&e, headers, q),
    }
}

/// The discovery document at `path`, if one is there. kube serves `/apis`, `/apis/<group>`
/// and a CRD's group-version from plain handlers that answer any method alike; `/api`,
/// `/api/v1` and a built-in group-version are go-restful routes that take GET alone (HEAD
/// too is their 405).
pub(super) fn serve_discovery(
    kinds: &crate::kinds::Kinds,
    path: &str,
    parts: &axum::http::request::Parts,
    query: &query::Query,
) -> Option<Response> {
    let headers = &parts.headers;
    let negotiated = || discovery_negotiated(kinds, path, headers, query);
    let refused = || {
        let refused = parts.method != Method::GET && restful_discovery(kinds, path);
        refused.then(|| error_response(&ApiError::method_not_allowed()))
    };
    let found = match path {
        "/api" | "/apis" if let Some(aggregated) = aggregated_negotiated(path, headers, query) => {
            if let Some(refusal) = refused() {
                return Some(refusal);
            }
            let which = if path == "/api" { discovery::Cached::AggregatedCore } else { discovery::Cached::Aggregated };
            return Some(match aggregated {
                Ok(chosen) => aggregated_response(headers, chosen, discovery::cached(kinds, which)),
                Err(e) => respond::error_for(&e, headers, query),
            });
        }
        "/api" => Some(discovery::core_versions(&server_address(parts))),
        "/apis" => {
            let list = discovery::cached(kinds, discovery::Cached::GroupList);
            return Some(discovery_response(negotiated(), list.json.to_vec(), headers, query));
        }
        "/api/v1" => discovery::resource_list(kinds, "", "v1"),
        p => match p.strip_prefix("/apis/").map(|r| r.split('/').collect::<Vec<_>>()).as_deref() {
            Some([g]) => discovery::group(kinds, g),
            Some([g, v]) => discovery::resource_list(kinds, g, v),
            _ => None,
        },
    }?;
    if let Some(refusal) = refused() {
        return Some(refusal);
    }
    let json = crate::resources::builtin::struct_json::to_vec(&found);
    Some(discovery_response(negotiated(), json, headers, query))
}

/// Whether the discovery document at `path` is a go-restful route (`/api`, `/api/v1`, a
/// built-in group-version) rather than a plain handler (`/apis`, a group, a CRD's version).
fn restful_discovery(kinds: &crate::kinds::Kinds, path: &str) -> bool {
    match path.strip_prefix("/apis/").map(|r| r.split_once('/')) {
        Some(Some((g, v))) => kinds.builtin().iter().any(|k| k.info().group == g && k.info().version == v),
        Some(None) => false,
        None => path != "/apis",
    }
}
