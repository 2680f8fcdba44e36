//! The OpenAPI endpoints: `/openapi/v2` (JSON or gnostic protobuf), the `/openapi/v3` index
//! and its group-version documents, served with kube-openapi's headers and negotiation
//! (ETag, `?hash=` redirects, immutable caching, 304, 406). The documents themselves come
//! from [`crate::openapi`], which builds and caches them and knows nothing of HTTP.
//!
//! The documents are held gzip-compressed. kube-openapi puts a gzip handler in front of
//! `/openapi/v2` only: a client accepting gzip gets the held bytes there (as kube-apiserver
//! 1.32 answers: `Content-Encoding: gzip`, no `Content-Length`, the same ETag); every other
//! answer, and every v3 document whatever the client accepts, is inflated as it is sent.

use crate::Engine;
use crate::openapi::compressed::Gzipped;
use crate::openapi::current;
use crate::openapi::documents::{Doc, Documents};
use crate::status::ApiError;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use k8s_openapi::jiff::{Timestamp, ToSpan, tz::TimeZone};
use std::convert::Infallible;
use std::sync::Arc;

/// kube-openapi's media types.
const JSON: &str = "application/json";
const PROTOBUF_V2: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
const PROTOBUF_V2_DEPRECATED: &str = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";

/// `GET /openapi/v2`: JSON, or protobuf when asked for.
pub async fn serve_v2(State(engine): State<Arc<Engine>>, headers: HeaderMap) -> Response {
    let docs = match current(&engine).await {
        Ok(d) => d,
        Err(e) => return super::error_response(&e),
    };
    let offers = [(JSON, Repr::Json), (PROTOBUF_V2_DEPRECATED, Repr::Protobuf), (PROTOBUF_V2, Repr::Protobuf)];
    let mut res = match negotiate(&headers, &offers) {
        None => empty(StatusCode::NOT_ACCEPTABLE),
        Some(repr) => {
            let v2 = written(docs, move |d| {
                let doc = d.v2().doc.clone();
                // Protobuf is derived from the JSON the first time: seconds of work for a large set.
                let body = if repr == Repr::Json { doc.body.clone() } else { d.v2_protobuf() };
                (doc, body)
            });
            let media_type = if repr == Repr::Json { JSON } else { PROTOBUF_V2 };
            match v2.await {
                Ok((doc, body)) => content(&headers, &doc, body, media_type, Gzip::Accepted),
                Err(e) => super::error_response(&e),
            }
        }
    };
    // The gzip handler in front of kube's v2 handler varies on the encoding too.
    let h = res.headers_mut();
    h.append(header::VARY, HeaderValue::from_static("Accept-Encoding"));
    h.append(header::VARY, HeaderValue::from_static("Accept"));
    res
}

/// `GET /openapi/v3`: the index of group-version documents (served as plain text, as
/// kube's content sniffing labels it).
pub async fn serve_v3_index(State(engine): State<Arc<Engine>>) -> Response {
    let docs = match current(&engine).await {
        Ok(d) => d,
        Err(e) => return super::error_response(&e),
    };
    let index = match written(docs, |d| d.v3_index().clone()).await {
        Ok(i) => i,
        Err(e) => return super::error_response(&e),
    };
    let mut res = Response::new(Body::from(index));
    let h = res.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache, private"));
    insert(h, header::LAST_MODIFIED, &http_date(engine.now()));
    res
}

/// `GET /openapi/v3/<group-version>[?hash=...]`.
pub async fn serve_v3_document(State(engine): State<Arc<Engine>>, uri: Uri, headers: HeaderMap) -> Response {
    let docs = match current(&engine).await {
        Ok(d) => d,
        Err(e) => return super::error_response(&e),
    };
    let gv = uri.path().trim_start_matches("/openapi/v3/");
    // The aggregator looks the group-version up before anything else: one nobody publishes
    // is its bare `WriteHeader(404)` whatever the method or Accept header; only a published
    // one reaches kube-openapi's handler, which negotiates and varies on Accept.
    let wanted = gv.to_string();
    let doc = match written(docs, move |d| d.v3(&wanted).cloned()).await {
        Err(e) => return super::error_response(&e),
        Ok(None) => return empty(StatusCode::NOT_FOUND),
        Ok(Some(doc)) => doc,
    };
    let mut res = if negotiate(&headers, &[(JSON, Repr::Json)]).is_none() {
        empty(StatusCode::NOT_ACCEPTABLE)
    } else {
        v3_answer(&headers, &uri, gv, &doc, engine.now())
    };
    res.headers_mut().append(header::VARY, HeaderValue::from_static("Accept"));
    res
}

/// A group-version's document: redirected to its current hash when asked for another,
/// immutable when asked for by its hash.
fn v3_answer(headers: &HeaderMap, uri: &Uri, gv: &str, doc: &Doc, now: Timestamp) -> Response {
    match hash_query(uri) {
        // kube-openapi has set the document's type and ETag before it redirects, so Go's
        // `http.Redirect` writes no body.
        Some(hash) if hash != doc.etag => {
            let mut res = empty(StatusCode::MOVED_PERMANENTLY);
            let h = res.headers_mut();
            insert(h, header::LOCATION, &format!("/openapi/v3/{gv}?hash={}", doc.etag));
            h.insert(header::CONTENT_TYPE, HeaderValue::from_static(JSON));
            insert(h, header::ETAG, &format!("\"{}\"", doc.etag));
            res
        }
        Some(_) => {
            let mut res = content(headers, doc, doc.body.clone(), JSON, Gzip::Never);
            let h = res.headers_mut();
            h.insert(header::CACHE_CONTROL, HeaderValue::from_static("public, immutable"));
            insert(h, header::EXPIRES, &expires(now));
            res
        }
        None => content(headers, doc, doc.body.clone(), JSON, Gzip::Never),
    }
}

/// `f` of the documents, off the async workers: the first answer of a document writes it
/// (seconds of work for thousands of CRDs).
async fn written<T: Send + 'static>(
    docs: Arc<Documents>,
    f: impl FnOnce(&Documents) -> T + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(move || f(&docs)).await.map_err(|e| ApiError::internal(e.to_string()))
}

/// The representations the v2 endpoint offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Repr {
    Json,
    Protobuf,
}

/// kube-openapi's negotiation: Accept clauses by quality (wildcards last), the first
/// offer a clause matches wins; no Accept means `*/*`.
fn negotiate(headers: &HeaderMap, offers: &[(&str, Repr)]) -> Option<Repr> {
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).filter(|a| !a.trim().is_empty());
    let mut clauses: Vec<(f32, String, String)> = accept
        .unwrap_or("*/*")
        .split(',')
        .filter_map(|clause| {
            let mut parts = clause.split(';');
            let range = parts.next()?.trim();
            let (t, s) = match range.split_once('/') {
                Some((t, s)) => (t.trim().to_string(), s.trim().to_string()),
                None if range == "*" => ("*".to_string(), "*".to_string()),
                None => return None,
            };
            let q = parts
                .filter_map(|p| p.split_once('='))
                .find(|(k, _)| k.trim() == "q")
                .and_then(|(_, v)| v.trim().parse::<f32>().ok())
                .unwrap_or(1.0);
            Some((q, t, s))
        })
        .collect();
    clauses.sort_by(|a, b| {
        // A total order (a `q` of NaN would make a partial one panic Rust's sort).
        b.0.total_cmp(&a.0).then_with(|| (a.1 == "*").cmp(&(b.1 == "*"))).then_with(|| (a.2 == "*").cmp(&(b.2 == "*")))
    });
    clauses.iter().filter(|c| c.0 > 0.0).find_map(|(_, t, s)| {
        offers.iter().find_map(|(media, repr)| {
            let (ot, os) = media.split_once('/')?;
            ((t == "*" || t == ot) && (s == "*" || s == os)).then_some(*repr)
        })
    })
}

/// Whether an endpoint answers gzip to a client that accepts it (kube-openapi's gzip handler).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Gzip {
    Accepted,
    Never,
}

/// The gzip handler's threshold (NYTimes/gziphandler's `DefaultMinSize`): smaller answers
/// go as they are.
const GZIP_MIN_SIZE: usize = 1400;

/// Whether `Accept-Encoding` accepts gzip as the gzip handler reads it: the first header,
/// codings by comma, case-insensitive, `q=` above zero (`*` does not count).
fn accepts_gzip(headers: &HeaderMap) -> bool {
    let Some(value) = headers.get(header::ACCEPT_ENCODING).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let mut gzip = None;
    for coding in value.split(',') {
        let mut params = coding.split(';').map(str::trim);
        let name = params.next().unwrap_or_default().to_ascii_lowercase();
        // Each parameter resets the quality, and a malformed one drops the coding, as there.
        let mut q = Some(1.0);
        for p in params {
            q = match p.strip_prefix("q=") {
                Some(v) => v.parse::<f64>().ok().map(|q| q.clamp(0.0, 1.0)),
                None => Some(1.0),
            };
        }
        if let (Some(q), true) = (q, name == "gzip") {
            gzip = Some(q);
        }
    }
    gzip.is_some_and(|q| q > 0.0)
}

/// A document's body: its gzip bytes with `Content-Encoding: gzip`, or its text inflated as
/// it is sent, with the text's `Content-Length`.
fn body(headers: &HeaderMap, text: Gzipped, gzip: Gzip) -> Response {
    let streamed = |chunks: Box<dyn Iterator<Item = bytes::Bytes> + Send>| {
        Response::new(Body::from_stream(futures::stream::iter(chunks.map(Ok::<_, Infallible>))))
    };
    if gzip == Gzip::Accepted && text.len >= GZIP_MIN_SIZE && accepts_gzip(headers) {
        // A stream, so that no Content-Length is set: the gzip handler removes it.
        let mut res = streamed(Box::new(text.gzip()));
        res.headers_mut().insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        return res;
    }
    let len = text.len;
    let mut res = if len > INFLATE_APART {
        Response::new(Body::from_stream(inflated_apart(text)))
    } else {
        streamed(Box::new(text.chunks()))
    };
    res.headers_mut().insert(header::CONTENT_LENGTH, HeaderValue::from(len));
    res
}

/// Above this, a plain answer is inflated by a task of its own, a few chunks ahead of the
/// sending: inflating in the connection's task would leave one core inflating while the
/// other waits to encrypt and send (2,000 CRDs make a 150 MiB `/openapi/v2`). Below it,
/// there is nothing to overlap.
const INFLATE_APART: usize = 1 << 20;
/// Inflated chunks waiting to be sent: how far the task runs ahead of a slow client. A
/// task, not a thread: a client that stops reading parks it at no cost, and one that goes
/// away drops the receiver, which ends it.
const INFLATED_AHEAD: usize = 4;

/// The text of `text`, inflated by a task of its own a few chunks ahead of the sending.
fn inflated_apart(text: Gzipped) -> impl futures::Stream<Item = Result<bytes::Bytes, Infallible>> + Send {
    let (tx, rx) = tokio::sync::mpsc::channel(INFLATED_AHEAD);
    tokio::spawn(async move {
        for chunk in text.chunks() {
            if tx.send(chunk).await.is_err() {
                break;
            }
        }
    });
    futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|c| (Ok(c), rx)) })
}

/// A document with its validators, or 304 when the client's copy is current (Go's
/// `http.ServeContent`).
fn content(headers: &HeaderMap, doc: &Doc, text: Gzipped, content_type: &'static str, gzip: Gzip) -> Response {
    let etag = format!("\"{}\"", doc.etag);
    let not_modified = match headers.get(header::IF_NONE_MATCH).and_then(|v| v.to_str().ok()) {
        Some(inm) => inm.split(',').map(str::trim).any(|t| t == "*" || t.trim_start_matches("W/") == etag),
        None => headers
            .get(header::IF_MODIFIED_SINCE)
            .and_then(|v| v.to_str().ok())
            .and_then(parse_http_date)
            .is_some_and(|since| doc.last_modified.as_second() <= since.as_second()),
    };
    let mut res = if not_modified { empty(StatusCode::NOT_MODIFIED) } else { body(headers, text, gzip) };
    let h = res.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache, private"));
    insert(h, header::ETAG, &etag);
    // A 304 carries the ETag only, as Go's `writeNotModified` leaves it.
    if !not_modified {
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
        insert(h, header::LAST_MODIFIED, &http_date(doc.last_modified));
    }
    res
}

fn empty(status: StatusCode) -> Response {
    let mut res = status.into_response();
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache, private"));
    res
}

fn hash_query(uri: &Uri) -> Option<String> {
    uri.query()?
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(k, _)| *k == "hash")
        .map(|(_, v)| v.to_string())
        .filter(|v| !v.is_empty())
}

fn insert(h: &mut HeaderMap, name: header::HeaderName, value: &str) {
    if let Ok(v) = HeaderValue::from_str(value) {
        h.insert(name, v);
    }
}

/// An HTTP date (`Sun, 22 Nov 2026 02:37:13 GMT`).
fn http_date(t: Timestamp) -> String {
    t.strftime("%a, %d %b %Y %H:%M:%S GMT").to_string()
}

fn parse_http_date(s: &str) -> Option<Timestamp> {
    let dt = k8s_openapi::jiff::civil::DateTime::strptime("%a, %d %b %Y %H:%M:%S GMT", s).ok()?;
    dt.to_zoned(TimeZone::UTC).ok().map(|z| z.timestamp())
}

/// A year from now in Go's RFC 1123 layout (`Mon, 22 Nov 2027 02:37:14 UTC`).
fn expires(now: Timestamp) -> String {
    let zoned = now.to_zoned(TimeZone::UTC);
    let later = zoned.checked_add(1.year()).unwrap_or(zoned);
    later.strftime("%a, %d %b %Y %H:%M:%S UTC").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accept(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::ACCEPT, HeaderValue::from_str(value).expect("header"));
        h
    }

    #[test]
    fn negotiation_follows_kube_openapi() {
        let offers = [(JSON, Repr::Json), (PROTOBUF_V2_DEPRECATED, Repr::Protobuf), (PROTOBUF_V2, Repr::Protobuf)];
        assert_eq!(negotiate(&HeaderMap::new(), &offers), Some(Repr::Json));
        assert_eq!(negotiate(&accept(PROTOBUF_V2_DEPRECATED), &offers), Some(Repr::Protobuf));
        assert_eq!(
            negotiate(&accept("*/*;q=0.5, application/com.github.proto-openapi.spec.v2.v1.0+protobuf"), &offers),
            Some(Repr::Protobuf)
        );
        assert_eq!(negotiate(&accept("application/json;q=0.9,*/*;q=0.8"), &offers), Some(Repr::Json));
        assert_eq!(negotiate(&accept("text/html"), &offers), None);
        assert_eq!(negotiate(&accept(PROTOBUF_V2), &[(JSON, Repr::Json)]), None);
    }

    #[test]
    fn dates_are_written_as_http_and_go_write_them() {
        let t: Timestamp = "2026-11-22T02:37:13.5Z".parse().expect("time");
        assert_eq!(http_date(t), "Sun, 22 Nov 2026 02:37:13 GMT");
        assert_eq!(parse_http_date("Sun, 22 Nov 2026 02:37:13 GMT").map(|p| p.as_second()), Some(t.as_second()));
        assert_eq!(expires(t), "Mon, 22 Nov 2027 02:37:13 UTC");
    }

    #[test]
    fn the_hash_comes_from_the_query() {
        let uri: Uri = "/openapi/v3/apis/g/v1?x=1&hash=ABC".parse().expect("uri");
        assert_eq!(hash_query(&uri).as_deref(), Some("ABC"));
        assert_eq!(hash_query(&"/openapi/v3/api/v1".parse().expect("uri")), None);
    }
}
