//! Request serving: a resource path's request, described once as a [`ResourceRequest`],
//! to the served kind's verb and its answer.
//!
//! Paths are parsed by hand (in [`super::request`]) rather than with axum patterns because
//! one kind may be reached several ways (`/api/v1/namespaces/x` is both a namespace and the
//! prefix of namespaced resources) and the served kinds change at run time with the CRDs.

use super::options::{self, OptionsKind};
use super::request::{ResourceRequest, namespace_object, parse_target};
use super::respond::Answer;
use super::route::{self, KindRoutes, Route, Verb};
use super::{json_response, query::Query};
use crate::Engine;
use crate::kinds::ServedKind;
use crate::representation::negotiation::{self, Endpoint};
use crate::resources::patch::PatchType;
use crate::resources::rest::{FieldValidation, Rest, Subresource, WriteOptions};
use crate::status::ApiError;
use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use std::sync::Arc;

/// Largest request body accepted, as kube-apiserver's 3 MiB limit.
pub const MAX_BODY: usize = 3 * 1024 * 1024;

/// kube-apiserver answers paths it does not serve with a plain-text 404 (reference 72).
pub fn plain_not_found() -> Response {
    let mut res = (StatusCode::NOT_FOUND, "404 page not found\n").into_response();
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache, private"));
    res.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    res.headers_mut().insert("X-Content-Type-Options", HeaderValue::from_static("nosniff"));
    res
}

/// The API groups kube-apiserver 1.32 serves itself (its default, with the aggregator's
/// and apiextensions-apiserver's): go-restful web services, rooted at `/apis/<group>`.
const BUILTIN_GROUPS: [&str; 19] = [
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "apiregistration.k8s.io",
    "apps",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "events.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "networking.k8s.io",
    "node.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "scheduling.k8s.io",
    "storage.k8s.io",
];

/// Whether kube's director hands `path` to go-restful: it is under a web service's root
/// (`/api`, `/apis/<built-in group>`), whose unrouted paths are go-restful's JSON 404
/// rather than the plain one of the paths nothing claims (CRD groups, unknown groups).
fn under_go_restful(path: &str) -> bool {
    let under = |root: &str| path.strip_prefix(root).is_some_and(|rest| rest.is_empty() || rest.starts_with('/'));
    under("/api")
        || path
            .strip_prefix("/apis/")
            .is_some_and(|rest| BUILTIN_GROUPS.contains(&rest.split('/').next().unwrap_or(rest)))
}

/// The 404 of a path no served kind claims, as kube words it there.
fn unrouted(path: &str, headers: &HeaderMap, query: &Query) -> Response {
    if under_go_restful(path) {
        return super::respond::error_for(&ApiError::no_route(), headers, query);
    }
    plain_not_found()
}

/// Serves one resource request.
pub async fn serve_resource(
    engine: Arc<Engine>,
    method: Method,
    path: &str,
    query: Query,
    headers: &HeaderMap,
    body: Bytes,
) -> Response {
    let Some(mut target) = parse_target(path) else { return unrouted(path, headers, &query) };
    if let Some(ns_target) = namespace_object(&target) {
        target = ns_target;
    } else if target.group.is_empty() && target.plural == "namespaces" && target.namespace.is_none() {
        // `/api/v1/namespaces/<name>`: parse_target read it as a cluster-scoped path already.
    }
    let Some(kind) = engine.kinds().find(&target.group, &target.version, &target.plural) else {
        return unrouted(path, headers, &query);
    };
    if target.trailing && !kind.strategy.unstructured() {
        return unrouted(path, headers, &query);
    }
    // Typed clients send built-in objects as protobuf: from here on, they are JSON. A
    // PATCH's Content-Type names its patch type, and protobuf is none (a 415 later).
    let protobuf = method != Method::PATCH
        && headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(super::protobuf::is_protobuf);
    let (headers, body, undecodable) = if protobuf && !body.is_empty() {
        match super::protobuf::decode(&body) {
            Ok(json) => {
                let mut headers = headers.clone();
                headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
                (std::borrow::Cow::Owned(headers), Bytes::from(json.to_string()), None)
            }
            Err(e) => (std::borrow::Cow::Borrowed(headers), body, Some(e)),
        }
    } else {
        (std::borrow::Cow::Borrowed(headers), body, None)
    };
    let head = method == Method::HEAD;
    let req = ResourceRequest { target, method, query: &query, headers: headers.as_ref(), body, undecodable };
    let res = match handle(&engine, &kind, &req).await {
        Ok(res) => res,
        Err(e) => super::respond::error_for(&e, req.headers, &query),
    };
    let res = match &kind.deprecation_warning {
        Some(warning) => with_first_warning(res, warning),
        None => res,
    };
    // kube answers HEAD as GET; Go's server then sends the headers alone.
    if head { without_body(res) } else { res }
}

/// `res` with its headers and no body (a HEAD's answer).
pub(crate) fn without_body(res: Response) -> Response {
    let (mut parts, _) = res.into_parts();
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, axum::body::Body::empty())
}

/// The patch a PATCH's Content-Type names, or kube's 415: go-restful's own for a built-in
/// kind or CRD whose route does not consume it, else the handler's, listing what `kind`
/// takes at `sub`.
fn patch_type(kind: &ServedKind, sub: Subresource, req: &ResourceRequest<'_>) -> Result<PatchType, ApiError> {
    let ct = req.content_type();
    let typed = !kind.strategy.unstructured();
    if typed && !PatchType::restful_consumes(ct) {
        return Err(ApiError::no_route_consumes());
    }
    PatchType::from_content_type(ct)
        .filter(|p| takes_patch(kind, sub, *p))
        .ok_or_else(|| ApiError::unsupported_patch_of(typed))
}

/// Whether `kind` takes patches of type `patch` at `sub`: custom resources and `/scale` have
/// no strategic merge.
fn takes_patch(kind: &ServedKind, sub: Subresource, patch: PatchType) -> bool {
    patch != PatchType::StrategicMerge || (sub != Subresource::Scale && kind.strategy.supports_strategic_merge())
}

/// The object a POST or PUT sends, decoded as the kind's decoder does.
fn body_object(rest: &Rest<'_>, req: &ResourceRequest<'_>, opts: &WriteOptions) -> Result<Value, ApiError> {
    let (headers, body) = (req.headers, &req.body[..]);
    let kind = &rest.strategy.info().kind;
    if let Some(e) = &req.undecodable {
        return Err(e.refusal(kind, body));
    }
    let mut decoded = if rest.strategy.unstructured() {
        let strict = opts.field_validation != FieldValidation::Ignore;
        super::body::unstructured(headers, body, kind, strict).map_err(|e| {
            use super::body::Unrecognized;
            let undecodable = |why: String| rest.strategy.undecodable_body(&crate::resources::Undecodable(why));
            // Go reads such a number into an interface{} and fails on it alone.
            match (super::body::number_beyond_float64(headers, body), e) {
                (Some(number), _) => {
                    undecodable(format!("json: cannot unmarshal number {number} into Go value of type float64"))
                }
                (None, Unrecognized::Refused(e)) => e,
                (None, Unrecognized::Undecodable(why)) => undecodable(why),
            }
        })?
    } else {
        let decoded = super::body::typed(headers, body, kind)?;
        note_document_error(rest, headers, body, &decoded.object, opts);
        decoded
    };
    // A JSON body's repeated fields join the unknown ones in one strict error later; a
    // YAML body's repeated keys are go-yaml's own error.
    if opts.field_validation != FieldValidation::Ignore {
        opts.note_decode_errors(std::mem::take(&mut decoded.duplicate_fields));
    }
    strict_decoding(decoded, opts, None)
}

/// Go's decoder reports the first decoding error a JSON body holds in the body's own
/// order, which the object (its keys sorted) has lost: read from the bytes when there is one.
fn note_document_error(rest: &Rest<'_>, headers: &HeaderMap, body: &[u8], obj: &Value, opts: &WriteOptions) {
    let Some(go) = rest.strategy.go_struct() else { return };
    if super::body::is_json(headers)
        && go.decode_error(obj).is_some()
        && let Some(first) = crate::resources::builtin::doc_order::first_decode_error(body, go)
    {
        opts.note_document_error(first);
    }
}

/// The object of a decoded body, its strict decoding complaints (a YAML body's repeated
/// keys) handled as `fieldValidation` asks: warnings by default, nothing when Ignore, and
/// when Strict go-yaml's one error, which the write reports with the unknown fields in one
/// strict error (a 400 in kube's words for an undecodable body), as kube's decoder does;
/// a `Scale` (`alone`: its write joins no unknown fields) is refused with it at once.
fn strict_decoding(decoded: super::body::Decoded, opts: &WriteOptions, alone: Option<&str>) -> Result<Value, ApiError> {
    if decoded.duplicates.is_empty() {
        return Ok(decoded.object);
    }
    match opts.field_validation {
        FieldValidation::Ignore => {}
        FieldValidation::Warn => decoded.duplicates.into_iter().for_each(|w| opts.warn(w)),
        FieldValidation::Strict => {
            let yaml = format!("yaml: unmarshal errors:\n  {}", decoded.duplicates.join("\n  "));
            if let Some(kind) = alone {
                let why = format!("strict decoding error: {yaml}");
                return Err(crate::resources::rest::undecodable(&decoded.object, kind, &why));
            }
            opts.note_decode_errors(vec![yaml]);
        }
    }
    Ok(decoded.object)
}

/// What routing needs of `kind`.
fn kind_routes(kind: &ServedKind) -> KindRoutes {
    let info = kind.info();
    KindRoutes {
        resource: info.group_resource(),
        namespaced: info.namespaced,
        status: info.status_subresource,
        scale: kind.scale.is_some(),
        custom: kind.strategy.unstructured(),
        create_only: kind.verbs == ["create"],
        delete_collection: kind.verbs.contains(&"deletecollection"),
    }
}

/// Routes `req` on `kind`, checks what kube checks before doing anything, then serves it.
async fn handle(engine: &Arc<Engine>, kind: &ServedKind, req: &ResourceRequest<'_>) -> Result<Response, ApiError> {
    let (sub, verb) = match route::route(&kind_routes(kind), &req.target, &req.method) {
        Route::Unserved => return Ok(plain_not_found()),
        Route::Refused(e) => return Err(e),
        Route::Serve { sub, verb } => (sub, verb),
    };
    // kube's patch handler checks the patch type before anything, even the name; the
    // update and patch handlers then need a name.
    let patch = match verb {
        Verb::Patch => Some(patch_type(kind, sub, req)?),
        _ => None,
    };
    if !kind.strategy.unstructured() {
        let accept = req.headers.get(header::ACCEPT).and_then(|v| v.to_str().ok());
        negotiation::restful_accepts(accept, matches!(verb, Verb::List | Verb::Watch))?;
    }
    if matches!(verb, Verb::Update | Verb::Patch) && req.target.name.is_none() {
        return Err(ApiError::bad_request("name must be provided"));
    }
    // Lists and watches negotiate for themselves; every other answer is one object, and
    // its representation is chosen before anything is done (a 406 writes nothing).
    let shape = match verb {
        Verb::List | Verb::Watch => None,
        _ => Some(super::respond::negotiated_shape(engine, req.headers, req.query, Endpoint::Resource)?),
    };
    let (q, user_agent) = (req.query, req.user_agent());
    let opts = match verb {
        Verb::Create => options::write_options(q, OptionsKind::Create, user_agent)?,
        Verb::Update => options::write_options(q, OptionsKind::Update, user_agent)?,
        Verb::Patch => {
            options::write_options(q, OptionsKind::Patch { apply: patch == Some(PatchType::Apply) }, user_agent)?
        }
        // Reads take no write options; deletes have their own (see `dispatch`).
        _ => WriteOptions::default(),
    };
    let store = engine.store();
    let rest = Rest {
        store: store.as_ref(),
        strategy: kind.strategy.as_ref(),
        now: engine.now(),
        scale: kind.scale.as_ref(),
        names: engine.names(),
        admission: engine.admission(),
    };
    let call = Call { req, sub, verb, patch, opts };
    // Warnings found on the way (unknown fields under Warn) go out with a refusal too.
    let res = match dispatch(engine, kind, &rest, &call).await {
        Ok(res) => match &shape {
            Some(shape) => {
                let answer = if verb == Verb::DeleteCollection { Answer::List } else { Answer::Object };
                super::respond::object(engine, kind, (sub, answer), shape, req, res).await
            }
            None => res,
        },
        Err(e) => super::respond::error_for(&e, req.headers, req.query),
    };
    Ok(with_warnings(res, call.opts.take_warnings()))
}

/// Adds one `Warning: 299 - "..."` header per warning, as kube-apiserver does.
fn with_warnings(mut res: Response, warnings: Vec<String>) -> Response {
    for w in warnings {
        let text = format!("299 - {}", crate::field::go_quote(&w));
        if let Ok(v) = HeaderValue::from_str(&text) {
            res.headers_mut().append("Warning", v);
        }
    }
    res
}

/// `res` with `warning` before its other warnings: kube records a deprecated version's warning
/// before the handler runs, so it comes first, on successes and refusals alike.
fn with_first_warning(mut res: Response, warning: &str) -> Response {
    let others: Vec<HeaderValue> = res.headers().get_all("Warning").iter().cloned().collect();
    res.headers_mut().remove("Warning");
    let res = with_warnings(res, vec![warning.to_string()]);
    let (mut parts, body) = res.into_parts();
    for value in others {
        parts.headers.append("Warning", value);
    }
    Response::from_parts(parts, body)
}

/// One routed request: the request, the endpoint and verb it comes to, and its write options.
struct Call<'a> {
    req: &'a ResourceRequest<'a>,
    sub: Subresource,
    verb: Verb,
    /// The patch type of a PATCH (already known to be one kube takes).
    patch: Option<PatchType>,
    opts: WriteOptions,
}

async fn dispatch(
    engine: &Arc<Engine>,
    kind: &ServedKind,
    rest: &Rest<'_>,
    call: &Call<'_>,
) -> Result<Response, ApiError> {
    let (req, opts, sub) = (call.req, &call.opts, call.sub);
    let (ns, name, q, body) = (req.namespace(), req.name(), req.query, &req.body);
    if sub != Subresource::Main {
        return dispatch_subresource(rest, call).await;
    }
    match call.verb {
        Verb::List if q.watch() => super::watch::respond(engine, kind, rest, req, None).await,
        Verb::Watch => {
            let name = Some(name).filter(|n| !n.is_empty());
            super::watch::respond(engine, kind, rest, req, name).await
        }
        Verb::List => super::respond::list(engine, kind, rest, req).await,
        Verb::Get => Ok(json_response(StatusCode::OK, &rest.get_at(ns, name, q.get("resourceVersion")).await?)),
        // kube creates what the body names, whatever name the path has.
        // A terminating CRD refuses creates before the body is read (kube's CRD handler);
        // the namespace is admitted once the body is decoded.
        Verb::Create => {
            engine.check_create_allowed(kind).await?;
            let obj = body_object(rest, req, opts)?;
            let admit = |obj: &serde_json::Value| {
                let name = crate::meta::name(obj).unwrap_or_default().to_string();
                async move {
                    match ns {
                        Some(ns) => engine.require_namespace(ns, &kind.info().group_resource(), &name).await,
                        None => Ok(()),
                    }
                }
            };
            let obj = rest.create_after(ns, obj, opts, admit).await?;
            Ok(json_response(StatusCode::CREATED, &obj))
        }
        Verb::Update => {
            let obj = body_object(rest, req, opts)?;
            // A kind that creates on update: the same admission as a POST first, once the
            // body's namespace is the path's (kube checks that as it decodes the body, so
            // a mismatch is its 400 even where the namespace does not exist).
            let other_namespace = crate::meta::namespace(&obj).is_some_and(|n| ns.is_some_and(|ns| ns != n));
            if rest.strategy.allows_create_on_update() && !other_namespace {
                admit_if_missing(engine, kind, rest, ns, name).await?;
            }
            let outcome = rest.update_outcome(ns, name, obj, sub, opts).await?;
            let code = if outcome.created { StatusCode::CREATED } else { StatusCode::OK };
            Ok(json_response(code, &outcome.object))
        }
        Verb::Patch => {
            let patch_type = call.patch.ok_or_else(ApiError::unsupported_patch)?;
            // An apply patch may create: the same admission as a POST first.
            if patch_type == PatchType::Apply {
                admit_if_missing(engine, kind, rest, ns, name).await?;
            }
            let outcome = rest.patch_outcome(ns, name, patch_type, body, sub, opts).await?;
            let code = if outcome.created { StatusCode::CREATED } else { StatusCode::OK };
            Ok(json_response(code, &outcome.object))
        }
        Verb::Delete => {
            let delete = options::delete_options(q, req.headers, delete_body(req, body)?)?;
            let outcome = rest.delete_outcome(ns, name, &delete, opts).await?;
            engine.note_delete(kind, name);
            // kube's handler: 202 for an object only marked when the client asked for
            // cascading by `orphanDependents=false` (kept so for old clients).
            let code = if !outcome.deleted && delete.orphan_dependents == Some(false) {
                StatusCode::ACCEPTED
            } else {
                StatusCode::OK
            };
            Ok(json_response(code, &outcome.object))
        }
        Verb::DeleteCollection => {
            // kube decodes and validates the list options before it reads the DeleteOptions.
            let list = q.list_query()?;
            rest.check_list_options(&list)?;
            let delete = options::delete_options(q, req.headers, delete_body(req, body)?)?;
            Ok(json_response(StatusCode::OK, &rest.delete_collection(ns, &list, &delete, opts).await?))
        }
    }
}

/// A DELETE's body, unless its Content-Type is one kube refuses to decode it from (a
/// protobuf body without the envelope); `options::delete_options` reads it by that type.
fn delete_body<'b>(req: &ResourceRequest<'_>, body: &'b Bytes) -> Result<&'b [u8], ApiError> {
    match &req.undecodable {
        Some(e) if !body.is_empty() => Err(e.delete_refusal()),
        _ => Ok(body),
    }
}

/// A write that creates `name` when it is missing passes a POST's admission first: its
/// namespace must exist, and the kind must take creates.
async fn admit_if_missing(
    engine: &Engine,
    kind: &ServedKind,
    rest: &Rest<'_>,
    ns: Option<&str>,
    name: &str,
) -> Result<(), ApiError> {
    if !rest.get(ns, name).await.is_err_and(|e| e.is_not_found()) {
        return Ok(());
    }
    if let Some(ns) = ns {
        engine.require_namespace(ns, &kind.info().group_resource(), name).await?;
    }
    engine.check_create_allowed(kind).await
}

/// `/status` and `/scale` of one object: get, update and patch (routing refused the rest).
async fn dispatch_subresource(rest: &Rest<'_>, call: &Call<'_>) -> Result<Response, ApiError> {
    let (req, opts, sub) = (call.req, &call.opts, call.sub);
    let (ns, name, body) = (req.namespace(), req.name(), &req.body);
    let scale = sub == Subresource::Scale;
    let obj = match (call.verb, call.patch) {
        (Verb::Get, _) if scale => rest.get_scale(ns, name, req.query.get("resourceVersion")).await?,
        (Verb::Get, _) => rest.get_at(ns, name, req.query.get("resourceVersion")).await?,
        (Verb::Update, _) if scale => {
            if let Some(e) = &req.undecodable {
                return Err(e.refusal("Scale", body));
            }
            let scale = strict_decoding(super::body::json(req.headers, body, "Scale")?, opts, Some("Scale"))?;
            rest.update_scale(ns, name, scale, opts).await?
        }
        (Verb::Update, _) => rest.update(ns, name, body_object(rest, req, opts)?, sub, opts).await?,
        (Verb::Patch, Some(patch_type @ (PatchType::Merge | PatchType::Json))) if scale => {
            rest.patch_scale(ns, name, patch_type, body, opts).await?
        }
        (Verb::Patch, Some(PatchType::Apply)) if scale => rest.apply_scale(ns, name, body, opts).await?,
        (Verb::Patch, _) if scale => return Err(ApiError::unsupported_patch()),
        (Verb::Patch, Some(patch_type)) => rest.patch(ns, name, patch_type, body, sub, opts).await?,
        (verb, _) => return Err(ApiError::method_not_supported(&rest.strategy.info().group_resource(), verb.name())),
    };
    Ok(json_response(StatusCode::OK, &obj))
}

#[cfg(test)]
mod tests {
    use super::under_go_restful;

    /// The oracle answered JSON 404s under `/api` and built-in groups, plain ones elsewhere.
    #[test]
    fn go_restful_claims_the_core_and_built_in_groups_alone() {
        for path in
            ["/api/v1/nothings", "/api/v2/x", "/api/foo", "/apis/apps/v1/nothings", "/apis/apiextensions.k8s.io/v1/x"]
        {
            assert!(under_go_restful(path), "{path}");
        }
        for path in ["/apix", "/apis/appsx/v1/x", "/apis/stable.example.com/v1/widgets", "/apisx/apps"] {
            assert!(!under_go_restful(path), "{path}");
        }
    }
}
