//! kube's request deadline (`WithRequestDeadline`, then the timeout filter): a request that
//! is not long-running has until `?timeout=` (a Go duration; zero, negative or past the
//! server's 60 s, the 60 s) and is answered 504 in the timeout handler's words when it runs
//! past it, its work going on unseen, as kube's handler goroutine does. A slow conversion
//! webhook is what a client meets this with. A timeout that does not parse is a 400.
//! Long-running requests (watches; exec, attach, log, proxy, port-forward) have none.

use super::query::Query;
use super::request::Target;
use crate::status::ApiError;
use axum::response::Response;
use std::time::Duration;

/// kube-apiserver's `--request-timeout`, the longest any request may take.
pub const MAXIMUM: Duration = Duration::from_secs(60);

/// A deadline under this has passed before kube's handler can do anything (`1ns`): the
/// request is answered without being served, where a race would be the engine's to win.
const PASSED: Duration = Duration::from_millis(1);

/// kube's subresources that stream, whose requests are long-running.
const STREAMING: [&str; 5] = ["attach", "exec", "proxy", "log", "portforward"];

/// How long a request may run before it is answered 504.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deadline {
    /// Long-running: none.
    Unbounded,
    After(Duration),
}

/// The deadline of a request to `target` (`None`: no resource path) with `query`.
pub fn of(method: &axum::http::Method, target: Option<&Target>, query: &Query) -> Result<Deadline, ApiError> {
    if is_long_running(method, target, query) {
        return Ok(Deadline::Unbounded);
    }
    let Some(raw) = query.get("timeout").filter(|t| !t.is_empty()) else { return Ok(Deadline::After(MAXIMUM)) };
    let nanos = crate::schema::formats::go_duration(raw)
        .map_err(|why| ApiError::bad_request(format!("invalid timeout specified in the request URL - {why}")))?;
    let asked = u64::try_from(nanos).ok().filter(|n| *n > 0).map(Duration::from_nanos);
    Ok(Deadline::After(asked.filter(|d| *d < MAXIMUM).unwrap_or(MAXIMUM)))
}

/// kube's `BasicLongRunningRequestCheck`: the `watch` verb (a list with `?watch`, or any
/// request under `/watch/`) and the streaming subresources.
fn is_long_running(method: &axum::http::Method, target: Option<&Target>, query: &Query) -> bool {
    let Some(t) = target else { return false };
    let listed = *method == axum::http::Method::GET && t.name.is_none() && query.watch();
    t.watch || listed || t.subresource.as_deref().is_some_and(|s| STREAMING.contains(&s))
}

/// `serve` within `deadline`: its answer, or the timeout handler's 504 once the deadline
/// passes (the work, spawned, carries on).
pub async fn within<F>(deadline: Deadline, serve: F) -> Response
where
    F: Future<Output = Response> + Send + 'static,
{
    let limit = match deadline {
        Deadline::Unbounded => return serve.await,
        Deadline::After(limit) if limit < PASSED => return timed_out(),
        Deadline::After(limit) => limit,
    };
    // Spawned, so a worker blocked in the work (a conversion webhook's call) does not
    // hold the timer up.
    match tokio::time::timeout(limit, tokio::spawn(serve)).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(panicked)) => super::error_response(&ApiError::internal(panicked.to_string())),
        Err(_) => timed_out(),
    }
}

/// The timeout handler's answer: a Status its JSON encoder writes without `kind` and
/// `apiVersion`, and no content type, so Go's server sniffs it as plain text.
fn timed_out() -> Response {
    const BODY: &str = "{\"metadata\":{},\"status\":\"Failure\",\"message\":\"Timeout: request did not complete \
        within the allotted timeout\",\"reason\":\"Timeout\",\"details\":{},\"code\":504}\n";
    let mut answer = super::json_text_response(axum::http::StatusCode::GATEWAY_TIMEOUT, BODY);
    let plain = axum::http::HeaderValue::from_static("text/plain; charset=utf-8");
    answer.headers_mut().insert(axum::http::header::CONTENT_TYPE, plain);
    answer
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::Method;

    fn deadline(path: &str, query: &str) -> Result<Deadline, String> {
        let target = super::super::request::parse_target(path);
        of(&Method::GET, target.as_ref(), &Query::parse(Some(query))).map_err(|e| e.message)
    }

    #[test]
    fn a_timeout_shortens_the_servers_and_only_that() {
        let list = "/apis/g.example.com/v1/namespaces/n/things";
        assert_eq!(deadline(list, ""), Ok(Deadline::After(MAXIMUM)));
        assert_eq!(deadline(list, "timeout=3s"), Ok(Deadline::After(Duration::from_secs(3))));
        assert_eq!(deadline(list, "timeout=1ns"), Ok(Deadline::After(Duration::from_nanos(1))));
        for longer_or_none in ["timeout=0s", "timeout=-1s", "timeout=2m", "timeout="] {
            assert_eq!(deadline(list, longer_or_none), Ok(Deadline::After(MAXIMUM)), "{longer_or_none}");
        }
    }

    #[test]
    fn watches_and_streams_run_unbounded_but_a_named_get_with_watch_does_not() {
        let list = "/apis/g.example.com/v1/namespaces/n/things";
        assert_eq!(deadline(list, "watch=1&timeout=abc"), Ok(Deadline::Unbounded));
        assert_eq!(deadline("/api/v1/watch/namespaces/n/pods/p", "timeout=1ns"), Ok(Deadline::Unbounded));
        assert_eq!(deadline("/api/v1/namespaces/n/pods/p/log", "timeout=1ns"), Ok(Deadline::Unbounded));
        assert_eq!(deadline(&format!("{list}/t"), "watch=1&timeout=1ns"), Ok(Deadline::After(Duration::from_nanos(1))));
    }

    #[test]
    fn a_timeout_that_does_not_parse_is_refused_in_gos_words() {
        let prefix = "invalid timeout specified in the request URL - time:";
        for (raw, why) in [
            ("abc", r#"invalid duration "abc""#),
            ("5", r#"missing unit in duration "5""#),
            ("5x", r#"unknown unit "x" in duration "5x""#),
        ] {
            assert_eq!(deadline("/api/v1/namespaces", &format!("timeout={raw}")), Err(format!("{prefix} {why}")));
        }
    }
}
