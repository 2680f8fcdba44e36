//! Bearer-token authentication in front of the engine's router. The engine checks no
//! request (local mode has no one to authenticate), so `serve` wraps the whole
//! router — unknown paths included — in [`layer`]: a request without
//! `Authorization: Bearer <token>` gets kube-apiserver's 401 `Status`, byte for byte the
//! recorded one, before any routing happens. The decision is the pure [`is_authorized`].

use super::token::Token;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, header};
use axum::middleware::{self, Next};
use axum::response::Response;
use kubectl_crd_engine::authn;
use kubectl_crd_engine::status::ApiError;
use std::sync::Arc;

/// Wraps `router` so that every request must carry the bearer `token`.
pub fn layer(router: axum::Router, token: Token) -> axum::Router {
    // An outer router whose only content is the engine's, so the check runs for every path:
    // `Router::layer` on the engine router itself would not cover its fallback.
    axum::Router::new().fallback_service(router).layer(middleware::from_fn_with_state(Arc::new(token), require_bearer))
}

async fn require_bearer(State(token): State<Arc<Token>>, request: Request, next: Next) -> Response {
    if is_authorized(request.headers(), &token) { next.run(request).await } else { unauthorized() }
}

/// The 401 kube-apiserver answers when no credentials are accepted.
pub fn unauthorized() -> Response {
    kubectl_crd_engine::error_response(&ApiError::unauthorized())
}

/// Whether the headers carry `Authorization: Bearer <token>`, the token cut from the
/// header as kube-apiserver cuts it.
pub fn is_authorized(headers: &HeaderMap, token: &Token) -> bool {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return false;
    };
    let value = String::from_utf8_lossy(value.as_bytes());
    authn::bearer_token(&value)
        .is_some_and(|given| authn::constant_time_eq(token.as_str().as_bytes(), given.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use axum::http::{HeaderValue, StatusCode};
    use tower::ServiceExt;

    fn token() -> Token {
        Token::parse("0123456789abcdef0123").expect("token")
    }

    fn headers(authorization: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::AUTHORIZATION, HeaderValue::from_str(authorization).expect("header"));
        h
    }

    #[test]
    fn only_the_right_bearer_token_passes() {
        let t = token();
        assert!(is_authorized(&headers("Bearer 0123456789abcdef0123"), &t));
        assert!(is_authorized(&headers("bearer 0123456789abcdef0123"), &t));
        assert!(!is_authorized(&HeaderMap::new(), &t));
        assert!(!is_authorized(&headers("Bearer 0123456789abcdef012"), &t));
        assert!(!is_authorized(&headers("Bearer 0123456789abcdef0124"), &t));
        assert!(!is_authorized(&headers("Basic 0123456789abcdef0123"), &t));
        assert!(!is_authorized(&headers("Bearer"), &t));
        assert!(!is_authorized(&headers(""), &t));
        // kube cuts the token at the first space after the scheme's.
        assert!(is_authorized(&headers("Bearer 0123456789abcdef0123 and more"), &t));
        assert!(!is_authorized(&headers("Bearer  0123456789abcdef0123"), &t));
    }

    async fn call(
        router: axum::Router,
        path: &str,
        authorization: Option<&str>,
    ) -> (StatusCode, HeaderMap, serde_json::Value) {
        let mut req = axum::http::Request::get(path);
        if let Some(a) = authorization {
            req = req.header(header::AUTHORIZATION, a);
        }
        let res = router.oneshot(req.body(Body::empty()).expect("request")).await.expect("infallible");
        let (parts, body) = res.into_parts();
        let bytes = axum::body::to_bytes(body, 1 << 20).await.expect("body");
        (parts.status, parts.headers, serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null))
    }

    fn engine_like() -> axum::Router {
        axum::Router::new()
            .route("/version", axum::routing::get(|| async { axum::Json(serde_json::json!({"major": "1"})) }))
    }

    #[tokio::test]
    async fn requests_without_the_token_get_kube_apiservers_401() {
        let app = layer(engine_like(), token());
        for path in ["/version", "/apis/stable.example.com/v1/namespaces/default/widgets"] {
            let (status, headers, body) = call(app.clone(), path, None).await;
            assert_eq!(status, StatusCode::UNAUTHORIZED, "{path}");
            assert_eq!(headers[header::CONTENT_TYPE], "application/json");
            assert_eq!(headers[header::CACHE_CONTROL], "no-cache, private");
            assert_eq!(
                body,
                serde_json::json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": "Unauthorized", "reason": "Unauthorized", "code": 401})
            );
        }
        let (status, _, _) = call(app.clone(), "/version", Some("Bearer wrong-token-wrong-token")).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        let (status, _, body) = call(app, "/version", Some("Bearer 0123456789abcdef0123")).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body["major"], "1");
    }
}
