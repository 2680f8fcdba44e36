//! kube's CEL URL library (`url()`, `isURL()` and the URL accessors) over Go's `net/url`
//! ([`go_url`]): a string is a URL when `url.ParseRequestURI` takes it, and its parts are
//! those `url.Parse` reads, as kube's `stringToUrl` checks with the one and keeps the other.

use super::go_url::{self, GoUrl};
use kube_cel::cel::extractors::This;
use kube_cel::cel::objects::{Key, Map, Opaque, Value};
use kube_cel::cel::{Context, ExecutionError, ResolveResult};
use std::collections::HashMap;
use std::sync::Arc;

/// A `kubernetes.URL` value.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Url(GoUrl);

impl Opaque for Url {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.URL"
    }
}

/// Adds the functions to `ctx` (after kube-cel's, which they replace).
pub fn register(ctx: &mut Context) {
    ctx.add_function("url", url);
    ctx.add_function("isURL", |s: Arc<String>| go_url::parse_request_uri(&s).is_ok());
    ctx.add_function("getScheme", |This(u): This<Value>| part(&u, |u| u.scheme.clone()));
    ctx.add_function("getHost", |This(u): This<Value>| part(&u, GoUrl::host));
    ctx.add_function("getHostname", |This(u): This<Value>| part(&u, GoUrl::hostname));
    ctx.add_function("getPort", |This(u): This<Value>| part(&u, GoUrl::port));
    ctx.add_function("getEscapedPath", |This(u): This<Value>| part(&u, GoUrl::escaped_path));
    ctx.add_function("getQuery", query);
}

fn url(s: Arc<String>) -> ResolveResult {
    let parsed = go_url::parse_request_uri(&s).and_then(|_| go_url::parse_reference(&s)).map_err(|e| {
        ExecutionError::function_error("url", format!("URL parse error during conversion from string: {e}"))
    })?;
    Ok(Value::Opaque(Arc::new(Url(parsed))))
}

fn of(v: &Value) -> Result<&GoUrl, ExecutionError> {
    match v {
        Value::Opaque(o) => o.downcast_ref::<Url>().map(|u| &u.0).ok_or(ExecutionError::NoSuchOverload),
        _ => Err(ExecutionError::NoSuchOverload),
    }
}

fn part(v: &Value, read: impl Fn(&GoUrl) -> String) -> ResolveResult {
    Ok(Value::String(Arc::new(read(of(v)?))))
}

fn query(This(this): This<Value>) -> ResolveResult {
    let entries: HashMap<Key, Value> = of(&this)?
        .query()
        .into_iter()
        .map(|(k, values)| {
            let values = values.into_iter().map(|v| Value::String(Arc::new(v))).collect();
            (Key::String(Arc::new(k)), Value::List(Arc::new(values)))
        })
        .collect();
    Ok(Value::Map(Map { map: Arc::new(entries) }))
}
