//! Answers in the representation the client negotiated.
//!
//! Every response of a resource endpoint goes through here: lists are encoded from the
//! store's bytes, single objects (gets and the answers of writes) are re-encoded from the
//! verb's JSON, errors are negotiated without conversions (JSON or YAML) and fall back to
//! indented JSON when nothing is acceptable, as kube-apiserver's `WriteRawJSON` does.

use super::protobuf::PROTOBUF;
use super::query::Query;
use super::request::ResourceRequest;
use crate::Engine;
use crate::kinds::ServedKind;
use crate::representation::negotiation::{self, Endpoint, Format, Negotiated, Target};
use crate::representation::table::{IncludeObject, TableConvertor, TableOptions};
use crate::representation::{self, Encoded, KindNames, ListMeta, RawObject, Shape, list_stream};
use crate::resources::rest::{Rest, Subresource};
use crate::status::ApiError;
use crate::store::Revision;
use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use std::sync::Arc;

/// The names representations need for `kind`.
pub fn kind_names(kind: &ServedKind) -> KindNames {
    let info = kind.info();
    KindNames {
        typed: !kind.strategy.unstructured(),
        ..KindNames::new(&info.group, &info.version, &info.kind, &info.list_kind)
    }
}

/// Negotiates the representation of a request's answer: the `Accept` header, then the
/// `pretty` and `export` query parameters, then the Table options when a Table is asked for.
pub fn shape(engine: &Engine, headers: &HeaderMap, q: &Query, endpoint: Endpoint) -> Result<Shape, ApiError> {
    with_table_options(negotiated_shape(engine, headers, q, endpoint)?, q)
}

/// [`shape`] without the Table options, which kube reads only once the verb is done
/// (`transformResponseObject`): a get of a missing object is a 404 whatever its
/// `includeObject`, and a write with a bad one is done before its 400.
pub fn negotiated_shape(
    engine: &Engine,
    headers: &HeaderMap,
    q: &Query,
    endpoint: Endpoint,
) -> Result<Shape, ApiError> {
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok());
    let mut negotiated = negotiation::negotiate(accept, endpoint)?;
    let user_agent = headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok());
    negotiated.pretty |= negotiation::wants_pretty(q.get("pretty"), user_agent);
    negotiated.export |= q.get("export").is_some_and(negotiation::parse_bool);
    Ok(Shape { negotiated, table: TableOptions::default(), now: engine.now() })
}

/// `shape` with the Table options of `q` when a Table is asked for.
fn with_table_options(mut shape: Shape, q: &Query) -> Result<Shape, ApiError> {
    if matches!(shape.negotiated.target, Target::Table(_)) {
        shape.table.include_object = IncludeObject::parse(q.get("includeObject")).map_err(ApiError::bad_request)?;
    }
    Ok(shape)
}

/// A response carrying `encoded` with kube's headers.
pub fn encoded_response(status: StatusCode, encoded: Encoded) -> Response {
    body_response(status, Body::from(encoded.body), encoded.content_type)
}

/// `body` as an answer of `content_type`, with the headers kube sends with every one.
fn body_response(status: StatusCode, body: Body, content_type: &'static str) -> Response {
    let mut res = Response::new(body);
    *res.status_mut() = status;
    let h = res.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache, private"));
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    if content_type.starts_with("text/csv") {
        // CSV is ours, not kube's: say that the answer depends on Accept.
        h.insert(header::VARY, HeaderValue::from_static("Accept"));
    }
    res
}

/// An error as a `Status` in the format the request accepts (JSON when none is; then
/// indented, as kube's raw fallback writes it).
pub fn error_for(e: &ApiError, headers: &HeaderMap, q: &Query) -> Response {
    let status = StatusCode::from_u16(e.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok());
    let negotiated = match negotiation::negotiate(accept, Endpoint::Plain) {
        Ok(mut n) => {
            let user_agent = headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok());
            n.pretty |= negotiation::wants_pretty(q.get("pretty"), user_agent);
            n
        }
        Err(_) => Negotiated { pretty: true, ..Negotiated::JSON },
    };
    let mut encoded = match negotiated.format {
        Format::Yaml => representation::encode_value(&negotiated, &e.to_json()),
        Format::Protobuf => Encoded { body: super::protobuf_status::encode(e), content_type: PROTOBUF },
        // Status bodies keep kube's field order.
        _ => {
            let body = e.to_body().into_bytes();
            if negotiated.pretty {
                let mut out = Vec::new();
                representation::raw::pretty(&body, &mut out);
                Encoded { body: out, content_type: Format::Json.content_type() }
            } else {
                let mut body = body;
                body.push(b'\n');
                Encoded { body, content_type: Format::Json.content_type() }
            }
        }
    };
    encoded.content_type = negotiated.format.content_type();
    let mut res = encoded_response(status, encoded);
    if let Some(retry) = e.details.as_ref().and_then(|d| d.retry_after_seconds) {
        res.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(retry));
    }
    res
}

/// GET of a collection, in the negotiated representation.
pub async fn list(
    engine: &Engine,
    kind: &ServedKind,
    rest: &Rest<'_>,
    req: &ResourceRequest<'_>,
) -> Result<Response, ApiError> {
    let (ns, q) = (req.namespace(), req.query);
    let shape = negotiated_shape(engine, req.headers, q, Endpoint::Resource)?;
    let list = rest.list_raw(ns, &q.list_query()?).await?;
    let shape = with_table_options(shape, q)?;
    let meta = ListMeta {
        resource_version: list.revision.to_string(),
        continue_token: list.continue_token.clone(),
        remaining_item_count: list.remaining_item_count,
    };
    let estimated = list_stream::estimated_bytes(list.items.iter().map(|kv| &kv.value[..]));
    if list_stream::streams(&shape.negotiated, estimated) {
        let items = list.items.into_iter().map(|kv| (kv.value, kv.mod_revision));
        let chunks = list_stream::ListChunks::new(kind_names(kind), meta, list.api_version, items);
        let body = Body::from_stream(futures::stream::iter(chunks.map(Ok::<_, std::convert::Infallible>)));
        return Ok(body_response(StatusCode::OK, body, Format::Json.content_type()));
    }
    let api_version = list.api_version.as_deref();
    let items: Vec<RawObject<'_>> =
        list.items.iter().map(|kv| RawObject::stored(&kv.value, kv.mod_revision).served_at(api_version)).collect();
    let table = engine.kinds().table(kind);
    let encoded = representation::encode_list(&shape, &kind_names(kind), &table, &meta, &items)?;
    Ok(encoded_response(StatusCode::OK, encoded))
}

/// The names and Table layout of what an endpoint of `kind` answers with: the kind's
/// own, or `autoscaling/v1` `Scale`'s for `/scale`.
fn presentation(engine: &Engine, kind: &ServedKind, sub: Subresource) -> (KindNames, Arc<TableConvertor>) {
    match sub {
        Subresource::Scale => (KindNames::scale(), Arc::new(TableConvertor::scale())),
        Subresource::Main | Subresource::Status | Subresource::Finalize => {
            (kind_names(kind), engine.kinds().table(kind))
        }
    }
}

/// The resourceVersion of the CRD a single-object verb answered with, kept beside its
/// answer (whatever its representation) for the CRD write that waits on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnsweredRevision(pub Revision);

/// Whether `kind` is CustomResourceDefinitions, whose writes are waited on.
fn is_crds(kind: &ServedKind) -> bool {
    let info = kind.info();
    info.group == "apiextensions.k8s.io" && info.plural == "customresourcedefinitions"
}

/// The resourceVersion of an answer's JSON, read without decoding the object.
fn answered_revision(json: &[u8]) -> Option<Revision> {
    let rv = representation::raw::get_path(json, &["metadata", "resourceVersion"])?;
    crate::meta::parse_resource_version(&representation::raw::string(rv)?)
}

/// What a verb answers with: one object, or the list of what a deletecollection removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Object,
    List,
}

/// A deletecollection's list (`items` and `metadata`) encoded as a list is, so that a
/// Table has a row per item and PartialObjectMetadata(List) gets kube's list answers.
fn encode_answered_list(
    shape: &Shape,
    names: &KindNames,
    table: &TableConvertor,
    bytes: &[u8],
) -> Result<Encoded, ApiError> {
    let list: serde_json::Value = serde_json::from_slice(bytes).unwrap_or_default();
    let text = |key: &str| list["metadata"][key].as_str().filter(|s| !s.is_empty()).map(String::from);
    let meta = ListMeta {
        resource_version: text("resourceVersion").unwrap_or_default(),
        continue_token: text("continue"),
        remaining_item_count: list["metadata"]["remainingItemCount"].as_u64(),
    };
    let items: Vec<Vec<u8>> =
        list["items"].as_array().into_iter().flatten().map(crate::resources::builtin::struct_json::to_vec).collect();
    let items: Vec<RawObject<'_>> = items.iter().map(|i| RawObject::complete(i)).collect();
    representation::encode_list(shape, names, table, &meta, &items)
}

/// Re-encodes the JSON answer of a verb at `sub` in the negotiated representation.
/// Anything else (errors, plain text, a `Status`) passes through. A conversion that does
/// not fit the answer (PartialObjectMetadata of a list) is an error answered as any
/// other for `req`: in the format its `Accept` allows, else indented JSON.
pub async fn object(
    engine: &Engine,
    kind: &ServedKind,
    (sub, answer): (Subresource, Answer),
    shape: &Shape,
    req: &ResourceRequest<'_>,
    res: Response,
) -> Response {
    let json = res.headers().get(header::CONTENT_TYPE).is_some_and(|v| v.as_bytes() == b"application/json");
    if !res.status().is_success() || !json {
        return res;
    }
    let shape = match with_table_options(*shape, req.query) {
        Ok(shape) => shape,
        Err(e) => return error_for(&e, req.headers, req.query),
    };
    let shape = &shape;
    let (mut parts, body) = res.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return Response::from_parts(parts, Body::empty());
    };
    let is_status = representation::raw::get(&bytes, "kind").is_some_and(|k| k == b"\"Status\"");
    if is_crds(kind)
        && let Some(rv) = answered_revision(&bytes)
    {
        parts.extensions.insert(AnsweredRevision(rv));
    }
    let encoded = if is_status {
        let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_default();
        let plain = Negotiated { target: Target::Object, export: false, ..shape.negotiated };
        let plain = if plain.format == Format::Csv { Negotiated::JSON } else { plain };
        Ok(representation::encode_value(&plain, &value))
    } else {
        let (names, table) = presentation(engine, kind, sub);
        match (answer, shape.negotiated.target) {
            // The list as it is, in the negotiated format.
            (Answer::List, Target::Object) => {
                representation::encode_object(shape, &names, &table, RawObject::complete(&bytes))
            }
            (Answer::List, _) => encode_answered_list(shape, &names, &table, &bytes),
            (Answer::Object, _) => representation::encode_object(shape, &names, &table, RawObject::complete(&bytes)),
        }
    };
    match encoded {
        Ok(encoded) => {
            parts.headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(encoded.content_type));
            parts.headers.remove(header::CONTENT_LENGTH);
            if encoded.content_type.starts_with("text/csv") {
                parts.headers.insert(header::VARY, HeaderValue::from_static("Accept"));
            }
            Response::from_parts(parts, Body::from(encoded.body))
        }
        Err(e) => error_for(&e, req.headers, req.query),
    }
}
